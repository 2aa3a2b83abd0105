/* The device timer: a pair of CUDA events recorded on the stream the
 * workload runs on (its backend hands it over). Events on that stream
 * complete when the work queued before them has run, so the interval
 * between them is the device's time for the run, whatever the host did
 * meanwhile; events on another stream (or the legacy default stream) would
 * not be ordered with the workload's kernels. */
#include "gpu/gpu.h"
#include "gpu/gpu_cuda.h"

#include <stdlib.h>

typedef struct event_timer {
    cudaStream_t stream;
    cudaEvent_t start, stop;
    bool started, stopped;
} event_timer;

static void events_destroy(void *state)
{
    event_timer *t = state;
    if (!t) return;
    if (t->start && cudaEventDestroy(t->start) != cudaSuccess) (void)cudaGetLastError();
    if (t->stop && cudaEventDestroy(t->stop) != cudaSuccess) (void)cudaGetLastError();
    free(t);
}

static ib_status events_create(void *stream, int device_id, void **state, ib_error *err)
{
    *state = NULL;
    IB_FAIL_IF(stream == NULL, err, IB_ERR_INVALID_ARG, "CUDA event timer: the workload has no CUDA stream");
    event_timer *t = calloc(1, sizeof *t);
    IB_FAIL_IF(t == NULL, err, IB_ERR_NO_MEMORY, "CUDA event timer: out of host memory");
    t->stream = (cudaStream_t)stream;
    /* Events belong to the device current at creation: the stream's. */
    cudaError_t e = cudaSetDevice(device_id);
    /* Default flags: timing enabled (cudaEventDisableTiming would make
     * cudaEventElapsedTime fail) and no cudaEventBlockingSync, so waiting on
     * the stop event follows the device's schedule (a spin while CPU cores
     * are free) and returns within microseconds of its completion. */
    if (e == cudaSuccess) e = cudaEventCreate(&t->start);
    if (e == cudaSuccess) e = cudaEventCreate(&t->stop);
    if (e != cudaSuccess) {
        events_destroy(t);
        return ib__cuda_status(e, err, "CUDA event timer on device %d", device_id);
    }
    *state = t;
    return IB_OK;
}

static ib_status events_start(void *state, ib_error *err)
{
    event_timer *t = state;
    cudaError_t e = cudaEventRecord(t->start, t->stream);
    if (e != cudaSuccess) return ib__cuda_status(e, err, "cudaEventRecord(start)");
    t->started = true;
    t->stopped = false;
    return IB_OK;
}

static ib_status events_stop(void *state, ib_error *err)
{
    event_timer *t = state;
    IB_FAIL_IF(!t->started, err, IB_ERR_INTERNAL, "CUDA event timer stopped before it was started");
    cudaError_t e = cudaEventRecord(t->stop, t->stream);
    if (e != cudaSuccess) return ib__cuda_status(e, err, "cudaEventRecord(stop)");
    t->stopped = true;
    return IB_OK;
}

static ib_status events_elapsed_ms(void *state, double *ms, ib_error *err)
{
    event_timer *t = state;
    float f = 0.0f;
    IB_FAIL_IF(!t->stopped, err, IB_ERR_INTERNAL, "CUDA event timer read before it was stopped");
    cudaError_t e = cudaEventSynchronize(t->stop);
    if (e != cudaSuccess) return ib__cuda_status(e, err, "cudaEventSynchronize(stop)");
    e = cudaEventElapsedTime(&f, t->start, t->stop);
    if (e != cudaSuccess) return ib__cuda_status(e, err, "cudaEventElapsedTime");
    *ms = (double)f;
    return IB_OK;
}

const ib__timer_ops ib__cuda_event_timer = {
    .create = events_create,
    .start = events_start,
    .stop = events_stop,
    .elapsed_ms = events_elapsed_ms,
    .destroy = events_destroy,
};
