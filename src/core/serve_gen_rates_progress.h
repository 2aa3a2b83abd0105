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

/* The rates a search may measure beyond bisection's between the ends of
 * its first bracket: one, that a guess from a rate failed on TTFT
 * (serve_gen_rates.c, "fit_queue") may cost when it is wrong. */
#define IB__GEN_SEARCH_SPARE_RATES 1

/* The rates a search may still measure once its bracket has both ends (-1
 * before, 0 once they are neighbours): bisection's count for the bracket
 * it first had, plus IB__GEN_SEARCH_SPARE_RATES, less the rates measured
 * since. Never fewer than bisection needs for the bracket it has now. */
int ib__gen_serve_search_rates_left(const ib_gen_serve_rates_result *out);

/* Whether a rate inside the bracket, leaving one of below or above grid
 * steps after it, keeps the search within the rates it may still take. */
bool ib__gen_serve_search_affords(const ib_gen_serve_rates_result *out, int below, int above);

#endif
