/* Launch-overhead exclusion, after nvbench's blocking kernel: a one-thread
 * kernel holds the stream while the host queues the timed work behind it
 * (start event, the run's kernels, stop event), then the host releases it by
 * writing a flag in host-mapped pinned memory, and the queued work runs
 * back to back, with no host launch gap inside the event pair.
 *
 * A workload that synchronizes inside its run (a blocking copy, a cudaFree)
 * would wait for the held stream while the host waits for it: a deadlock.
 * The kernel therefore gives up after a timeout measured on the GPU's global
 * timer and leaves a mark that release reads. */
#include "gpu/gpu.h"
#include "gpu/gpu_cuda.h"

#include <stdatomic.h>
#include <stdlib.h>

enum { RELEASE = 0, TIMED_OUT = 1 };

struct ib__gpu_hold {
    volatile int *flags; /* host view of the pinned pair [RELEASE, TIMED_OUT] */
    int *flags_dev;      /* the same memory as the device addresses it */
    cudaEvent_t ended;   /* recorded right after the hold kernel */
    bool held;
};

ib_status ib__gpu_hold_create(int device_id, ib__gpu_hold **out, ib_error *err)
{
    *out = NULL;
    ib__gpu_hold *h = calloc(1, sizeof *h);
    IB_FAIL_IF(h == NULL, err, IB_ERR_NO_MEMORY, "stream hold: out of host memory");
    void *pinned = NULL;
    const char *what = "cudaSetDevice";
    cudaError_t e = cudaSetDevice(device_id);
    if (e == cudaSuccess) {
        what = "cudaHostAlloc(mapped)";
        e = cudaHostAlloc(&pinned, 2 * sizeof(int), cudaHostAllocMapped);
    }
    if (e == cudaSuccess) {
        h->flags = pinned;
        void *dev = NULL;
        what = "cudaHostGetDevicePointer";
        e = cudaHostGetDevicePointer(&dev, pinned, 0);
        h->flags_dev = dev;
    }
    if (e == cudaSuccess) {
        what = "cudaEventCreateWithFlags";
        e = cudaEventCreateWithFlags(&h->ended, cudaEventDisableTiming);
    }
    if (e == cudaSuccess) {
        what = "loading the hold and spin kernels";
        e = ib__kernels_preload();
    }
    if (e != cudaSuccess) {
        ib__gpu_hold_destroy(h);
        return ib__cuda_status(e, err, "stream hold on device %d: %s", device_id, what);
    }
    *out = h;
    return IB_OK;
}

ib_status ib__gpu_hold_stream(ib__gpu_hold *h, void *stream, double timeout_ms, ib_error *err)
{
    IB_FAIL_IF(h->held, err, IB_ERR_INTERNAL, "stream hold: already holding a stream");
    IB_FAIL_IF(!(timeout_ms > 0.0 && timeout_ms <= 3.6e6), err, IB_ERR_INVALID_ARG,
               "stream hold: timeout %g ms is not in (0, 1 hour]", timeout_ms);
    h->flags[RELEASE] = 0;
    h->flags[TIMED_OUT] = 0;
    /* Order these stores before the launch that lets the kernel read them. */
    atomic_thread_fence(memory_order_seq_cst);
    const uint64_t timeout_ns = (uint64_t)(timeout_ms * 1e6);
    cudaError_t e = ib__launch_hold((cudaStream_t)stream, h->flags_dev, h->flags_dev + TIMED_OUT, timeout_ns);
    if (e != cudaSuccess) return ib__cuda_status(e, err, "launching the hold kernel");
    h->held = true;
    e = cudaEventRecord(h->ended, (cudaStream_t)stream);
    if (e != cudaSuccess) {
        /* The kernel is queued: let it go so it ends, then report. */
        bool timed_out;
        ib_status s = ib__cuda_status(e, err, "cudaEventRecord after the hold kernel");
        (void)ib__gpu_release_stream(h, &timed_out, NULL);
        return s;
    }
    return IB_OK;
}

ib_status ib__gpu_release_stream(ib__gpu_hold *h, bool *timed_out, ib_error *err)
{
    *timed_out = false;
    IB_FAIL_IF(!h->held, err, IB_ERR_INTERNAL, "stream hold: release without a hold");
    h->flags[RELEASE] = 1;
    /* Push the store out now, rather than whenever the CPU drains it, so the
     * spinning kernel sees it within the bus's latency. */
    atomic_thread_fence(memory_order_seq_cst);
    h->held = false;
    /* Once the kernel ended, the mark it may have written is final (a
     * kernel's writes are visible to the host when it completes). */
    cudaError_t e = cudaEventSynchronize(h->ended);
    if (e != cudaSuccess) return ib__cuda_status(e, err, "waiting for the hold kernel to end");
    *timed_out = h->flags[TIMED_OUT] != 0;
    return IB_OK;
}

void ib__gpu_hold_destroy(ib__gpu_hold *h)
{
    if (!h) return;
    if (h->held) {
        /* Never free the flags under a kernel that still reads them. */
        bool timed_out;
        (void)ib__gpu_release_stream(h, &timed_out, NULL);
    }
    if (h->ended && cudaEventDestroy(h->ended) != cudaSuccess) (void)cudaGetLastError();
    if (h->flags && cudaFreeHost((void *)h->flags) != cudaSuccess) (void)cudaGetLastError();
    free(h);
}
