/* The search's and the curve's own progress (serve_gen_rates_progress.c). */
#ifndef IB_CORE_SERVE_GEN_RATES_PROGRESS_H
#define IB_CORE_SERVE_GEN_RATES_PROGRESS_H

#include "inferbench.h"

/* Reports out's last point to rc->rate_progress (nothing when NULL): its
 * number, the most rates the search or curve can take, a search's bracket
 * from the points measured. A search halves its first rate at most
 * max_halvings times looking for one that meets the targets. */
void ib__gen_serve_rate_progress(const ib_gen_serve_rates_config *rc, const ib_gen_serve_rates_result *out,
                                 int max_halvings);

#endif
