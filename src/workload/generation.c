/* What every generation workload shares (src/workload/generation.h): the
 * open arguments' defaults and the release. */
#include "workload/generation.h"

#include <stddef.h>

void ib__gen_open_args_init(ib__gen_open_args *a)
{
    *a = (ib__gen_open_args){ .device = IB_DEVICE_AUTO, .n_seqs = 1, .ctx_per_seq = 0, .seed = 42 };
}

void ib__gen_destroy(ib__gen *g)
{
    if (g) g->ops->destroy(g);
}
