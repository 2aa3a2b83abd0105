#include "core/runner.h"

#include <math.h>

/* How long the stream may be held before the hold is declared a deadlock:
 * far above any launch sequence, short enough for an interactive tool. */
#define HOLD_TIMEOUT_MS 2000.0

/* The GPU's stream hold (src/gpu/hold.c) on the workload's stream. */
static ib_status gpu_hold_create(ib_workload *w, void **state, ib_error *err)
{
    ib__gpu_hold *h = NULL;
    ib_status st = ib__gpu_hold_create(w->device_id, &h, err);
    *state = h;
    return st;
}

static ib_status gpu_hold(ib_workload *w, void *state, double timeout_ms, ib_error *err)
{
    return ib__gpu_hold_stream(state, w->stream, timeout_ms, err);
}

static ib_status gpu_release(void *state, bool *timed_out, ib_error *err)
{
    return ib__gpu_release_stream(state, timed_out, err);
}

static void gpu_hold_destroy(void *state) { ib__gpu_hold_destroy(state); }

static const ib__hold_ops gpu_stream_hold = {
    .create = gpu_hold_create,
    .hold = gpu_hold,
    .release = gpu_release,
    .destroy = gpu_hold_destroy,
};

static ib_status runner_setup(ib__runner *r, const ib_config *cfg, ib_error *err)
{
    ib_workload *w = r->w;
    void *target;
    const ib__timer_ops *timer = ib__workload_device_timer(w, &target);
    if (timer) {
        IB_TRY(timer->create(target, w->device_id, &r->timer, err));
        r->timer_ops = timer;
    }
    /* With device marks, the run must not wait for the device itself: the
     * stop mark would then be queued only after the host noticed the end,
     * and that wake-up (5 us and more) would count as device time. The
     * wait happens on the stop mark instead. */
    if (r->timer && ib__workload_can(w, IB_CAP_ASYNC_RUN)) {
        IB_TRY(w->ops->set_run_sync(w, false, err));
        r->async = true;
    }
    if (cfg->flush_l2) {
        IB_FAIL_IF(!ib__workload_can(w, IB_CAP_L2_FLUSH), err, IB_ERR_UNSUPPORTED,
                   "--flush-l2 needs a GPU workload (the L2 cache flushed is the GPU's)");
        IB_TRY(ib__gpu_l2_flusher_create(w->device_id, &r->flusher, err));
    }
    if (cfg->exclude_launch) {
        IB_FAIL_IF(!(w->stream_hold || ib__workload_can(w, IB_CAP_CUDA_STREAM)) ||
                       !ib__workload_can(w, IB_CAP_ASYNC_RUN),
                   err, IB_ERR_UNSUPPORTED,
                   "--exclude-launch needs a GPU workload whose run can skip its own synchronization");
        r->hold_ops = w->stream_hold ? w->stream_hold : &gpu_stream_hold;
        IB_TRY(r->hold_ops->create(w, &r->hold, err));
    }
    return IB_OK;
}

ib_status ib__runner_init(ib__runner *r, ib_workload *w, const ib_config *cfg, ib_error *err)
{
    *r = (ib__runner){ .w = w, .cancel = cfg->cancel };
    ib_status st = runner_setup(r, cfg, err);
    if (st != IB_OK) ib__runner_release(r);
    return st;
}

void ib__runner_release(ib__runner *r)
{
    if (r->async) r->w->ops->set_run_sync(r->w, true, NULL);
    r->async = false;
    if (r->timer) r->timer_ops->destroy(r->timer);
    ib__gpu_l2_flusher_destroy(r->flusher);
    if (r->hold) r->hold_ops->destroy(r->hold);
    r->timer = NULL;
    r->timer_ops = NULL;
    r->flusher = NULL;
    r->hold = NULL;
}

ib_status ib__runner_resolution_ms(ib__runner *r, double *ms, ib_error *err)
{
    *ms = r->w->clock.resolution_ms;
    if (!r->timer) return IB_OK;
    return ib__timer_resolution_ms(r->timer_ops, r->timer, IB__RESOLUTION_PAIRS, ms, err);
}

static ib_status flush_cache(ib__runner *r, ib_error *err)
{
    IB_TRY(ib__gpu_l2_flush(r->flusher, r->w->stream, err));
    return ib__workload_synchronize(r->w, err);
}

/* The held variant: the stream waits behind the hold kernel while the run is
 * queued, then starts at once; the start mark is taken only after the whole
 * launch sequence, so launch latency is not counted. */
static ib_status run_held(ib__runner *r, ib_error *err)
{
    ib_workload *w = r->w;
    ib_status st = r->hold_ops->hold(w, r->hold, HOLD_TIMEOUT_MS, err);
    if (st == IB_OK) st = r->timer_ops->start(r->timer, err);
    if (st == IB_OK) st = w->ops->run(w, err);
    if (st == IB_OK) st = r->timer_ops->stop(r->timer, err);
    bool timed_out = false;
    ib_status rel = r->hold_ops->release(r->hold, &timed_out, err);
    if (st != IB_OK) return st;
    if (rel != IB_OK) return rel;
    IB_FAIL_IF(timed_out, err, IB_ERR_DEADLOCK,
               "the workload waited for the GPU inside its run while the stream was held "
               "(released after %.0f ms): launch-overhead exclusion cannot time it",
               HOLD_TIMEOUT_MS);
    return IB_OK;
}

ib_status ib__runner_time_one(ib__runner *r, double *device_ms, double *host_ms, ib_error *err)
{
    ib_workload *w = r->w;
    *device_ms = NAN;
    if (r->flusher) IB_TRY(flush_cache(r, err));
    bool held = r->hold && r->runs > 0 && !r->hold_off;
    r->runs++;
    double t0 = ib__workload_now_ms(r->w);
    if (held) {
        IB_TRY(run_held(r, err));
    } else {
        if (r->timer) IB_TRY(r->timer_ops->start(r->timer, err));
        IB_TRY(w->ops->run(w, err));
        if (r->timer) IB_TRY(r->timer_ops->stop(r->timer, err));
    }
    if (r->timer) IB_TRY(r->timer_ops->elapsed_ms(r->timer, device_ms, err));
    *host_ms = ib__workload_now_ms(r->w) - t0;
    return IB_OK;
}

ib_status ib__runner_time_back_to_back(ib__runner *r, int64_t count, double *device_ms, double *host_ms,
                                       ib_error *err)
{
    ib_workload *w = r->w;
    /* Without device marks the runs must still not wait one by one. */
    bool toggle = !r->async && ib__workload_can(w, IB_CAP_ASYNC_RUN);
    if (toggle) IB_TRY(w->ops->set_run_sync(w, false, err));
    double t0 = ib__workload_now_ms(r->w);
    ib_status st = r->timer ? r->timer_ops->start(r->timer, err) : IB_OK;
    for (int64_t i = 0; i < count && st == IB_OK; i++) {
        if (ib__cancelled(r->cancel))
            st = ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
        else
            st = w->ops->run(w, err);
    }
    if (st == IB_OK && r->timer) st = r->timer_ops->stop(r->timer, err);
    if (st == IB_OK && r->timer) st = r->timer_ops->elapsed_ms(r->timer, device_ms, err);
    if (st == IB_OK) st = ib__workload_synchronize(w, err);
    *host_ms = ib__workload_now_ms(r->w) - t0;
    if (!r->timer) *device_ms = *host_ms;
    if (toggle) {
        ib_status s2 = w->ops->set_run_sync(w, true, st == IB_OK ? err : NULL);
        if (st == IB_OK) st = s2;
    }
    return st;
}
