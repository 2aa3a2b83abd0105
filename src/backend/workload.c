/* The public workload calls that are the same for every backend: they check
 * their arguments and forward to the backend's table. */
#include "backend/workload.h"
#include "gpu/gpu.h"

#include <stdlib.h>

void ib_workload_destroy(ib_workload *w)
{
    if (w) w->ops->destroy(w);
}

const ib_workload_info *ib_workload_get_info(const ib_workload *w)
{
    return w ? &w->info : NULL;
}

ib_status ib_workload_set_batch(ib_workload *w, int64_t batch, ib_error *err)
{
    IB_FAIL_IF(w == NULL, err, IB_ERR_INVALID_ARG, "no workload");
    IB_FAIL_IF(batch < 1, err, IB_ERR_INVALID_ARG, "batch %lld: a batch is at least 1",
               (long long)batch);
    return w->ops->set_batch(w, batch, err);
}

ib_status ib__workload_synchronize(ib_workload *w, ib_error *err)
{
    return w->stream ? ib__gpu_stream_sync(w->stream, err) : IB_OK;
}

void ib__output_values_free(ib__output_values *v)
{
    if (!v) return;
    free(v->values);
    *v = (ib__output_values){ 0 };
}
