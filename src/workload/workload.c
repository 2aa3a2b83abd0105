/* The public workload calls that are the same for every backend: they check
 * their arguments and forward to the backend's table. */
#include "workload/workload.h"
#include "gpu/gpu.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void ib_workload_destroy(ib_workload *w)
{
    if (w) w->ops->destroy(w);
}

const ib_workload_info *ib_workload_get_info(const ib_workload *w) { return w ? &w->info : NULL; }

ib_status ib_workload_set_batch(ib_workload *w, int64_t batch, ib_error *err)
{
    IB_FAIL_IF(w == NULL, err, IB_ERR_INVALID_ARG, "no workload");
    IB_FAIL_IF(batch < 1, err, IB_ERR_INVALID_ARG, "batch %lld: a batch is at least 1", (long long)batch);
    return w->ops->set_batch(w, batch, err);
}

void ib__workload_runtime(const ib_workload *w, ib_runtime_info *out)
{
    memset(out, 0, sizeof *out);
    if (!w || !w->backend) return;
    ib__strlcpy(out->name, w->backend->name, sizeof out->name);
    if (w->runtime_facts) w->runtime_facts(out);
}

int32_t ib__workload_threads(const ib_workload *w)
{
    const char *v = ib_option_list_get(&w->info.options, "threads");
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    return v && end != v && !*end && n > 0 && n <= INT32_MAX ? (int32_t)n : 0;
}

ib_status ib__workload_synchronize(ib_workload *w, ib_error *err)
{
    return ib__workload_can(w, IB_CAP_CUDA_STREAM) ? ib__gpu_stream_sync(w->stream, err) : IB_OK;
}

const ib__timer_ops *ib__workload_device_timer(const ib_workload *w, void **target)
{
    *target = NULL;
    if (!ib__workload_can(w, IB_CAP_DEVICE_TIMING)) return NULL;
    if (w->own_timer) {
        *target = w->timer_target;
        return w->own_timer;
    }
    *target = w->stream;
    return &ib__cuda_event_timer;
}

/* A capability and what it needs: a slot, a stream or another capability.
 * (A slot without its capability is merely never called.) */
typedef struct cap_need {
    uint64_t cap;
    const char *name;
    bool met;
    const char *need;
} cap_need;

ib_status ib__workload_check_caps(const ib_workload *w, const char *who, ib_error *err)
{
    bool stream = ib__workload_can(w, IB_CAP_CUDA_STREAM);
    const cap_need needs[] = {
        { IB_CAP_ASYNC_RUN, "IB_CAP_ASYNC_RUN", w->ops->set_run_sync != NULL, "a set_run_sync slot" },
        { IB_CAP_HOST_INPUT_RUN, "IB_CAP_HOST_INPUT_RUN", w->ops->run_with_copies != NULL,
          "a run_with_copies slot" },
        { IB_CAP_REOPEN, "IB_CAP_REOPEN", w->ops->reopen != NULL, "a reopen slot" },
        { IB_CAP_REFILL_INPUTS, "IB_CAP_REFILL_INPUTS", w->ops->fill_inputs != NULL, "a fill_inputs slot" },
        { IB_CAP_CUDA_STREAM, "IB_CAP_CUDA_STREAM", w->stream != NULL, "a stream" },
        { IB_CAP_DEVICE_TIMING, "IB_CAP_DEVICE_TIMING", stream || w->own_timer, "IB_CAP_CUDA_STREAM" },
        { IB_CAP_L2_FLUSH, "IB_CAP_L2_FLUSH", stream, "IB_CAP_CUDA_STREAM" },
    };
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++)
        IB_FAIL_IF(ib__workload_can(w, needs[i].cap) && !needs[i].met, err, IB_ERR_INVALID_ARG,
                   "%s declares %s without %s", who, needs[i].name, needs[i].need);
    return IB_OK;
}

void ib__output_values_free(ib__output_values *v)
{
    if (!v) return;
    free(v->values);
    *v = (ib__output_values){ 0 };
}
