/* The CUDA layer: everything inferbench itself does on a GPU, behind plain C
 * functions so that no other subsystem includes a CUDA header. Built only
 * with IB_HAVE_CUDA; src/gpu/gpu_none.c answers IB_ERR_NO_DEVICE for every
 * call in a build without CUDA. cudaError_t values are converted here, at
 * the edge: out-of-memory becomes IB_ERR_DEVICE_OOM, sticky errors (the
 * context is unusable) IB_ERR_DEVICE_LOST. */
#ifndef IB_GPU_GPU_H
#define IB_GPU_GPU_H

#include "base/common.h"
#include "timer/timer.h"

typedef struct ib__gpu_props {
    char name[128];
    int cc_major, cc_minor;
    int sm_count;
    unsigned long long l2_cache_bytes;
    unsigned long long total_memory_bytes;
    int driver_version;  /* cudaDriverGetVersion */
    int runtime_version; /* cudaRuntimeGetVersion */
} ib__gpu_props;

/* True when a usable CUDA device `device_id` exists (never fails loudly:
 * no driver, no device and a build without CUDA all give false). */
bool ib__gpu_available(int device_id);
ib_status ib__gpu_props_get(int device_id, ib__gpu_props *out, ib_error *err);

/* The device's PCI address, "0000:3b:00.0": what NVML knows it by (NVML's
 * device indices need not follow CUDA's). */
ib_status ib__gpu_pci_bus_id(int device_id, char *buf, size_t cap, ib_error *err);

/* Calls that take a stream but no device id run on the calling thread's
 * current device, which must be the stream's: ib__gpu_stream_create and the
 * other *_create calls make their device current. They do not set it again
 * themselves, to keep launches in timed regions short. */

/* A non-blocking stream of our own (the workload runs on it). */
ib_status ib__gpu_stream_create(int device_id, void **stream, ib_error *err);
void ib__gpu_stream_destroy(void *stream);
ib_status ib__gpu_stream_sync(void *stream, ib_error *err);

/* Device memory; out of memory gives IB_ERR_DEVICE_OOM (recoverable). */
ib_status ib__gpu_malloc(size_t bytes, void **ptr, ib_error *err);
/* Free and total memory of the current device (cudaMemGetInfo). */
ib_status ib__gpu_mem_info(size_t *free_bytes, size_t *total_bytes, ib_error *err);
void ib__gpu_free(void *ptr);
/* Copy on stream and wait for it: on return the data is in place (what naive
 * code does, so run_with_copies times it as such). */
ib_status ib__gpu_copy_h2d(void *dst, const void *src, size_t bytes, void *stream, ib_error *err);
ib_status ib__gpu_copy_d2h(void *dst, const void *src, size_t bytes, void *stream, ib_error *err);
/* Copy enqueued on stream, not waited for (serve's copies, timed apart by
 * events on the stream): host memory should be pinned (ib__gpu_host_alloc),
 * or the copy of pageable memory is staged by the driver and not async. */
ib_status ib__gpu_copy_h2d_async(void *dst, const void *src, size_t bytes, void *stream, ib_error *err);
ib_status ib__gpu_copy_d2h_async(void *dst, const void *src, size_t bytes, void *stream, ib_error *err);
/* Pinned (page-locked) host memory, what a server's requests are copied
 * from and to, pinned for every device (portable); out of memory gives
 * IB_ERR_NO_MEMORY. ib__gpu_host_free may wait for the device (cudaFreeHost
 * does): free nothing a queued copy still uses. */
ib_status ib__gpu_host_alloc(size_t bytes, void **ptr, ib_error *err);
void ib__gpu_host_free(void *ptr);

/* CUDA events recorded on a stream; create(stream, device_id, ...). */
extern const ib__timer_ops ib__cuda_event_timer;

/* Launch-overhead exclusion (nvbench's blocking kernel): enqueues on stream
 * a kernel that spins until released by the host, so that work queued behind
 * it starts back-to-back once released. The kernel gives up by itself after
 * timeout_ms, so a workload that waits on the held stream (deadlock) is
 * detected: release then reports *timed_out = true. Release waits for the
 * holding kernel to end (microseconds once released), not for the work
 * queued behind it. Run the workload unheld at least once first: a kernel's
 * first launch may load its module, which waits for the device to idle, so
 * a first launch behind a hold stalls until the timeout. One hold at a time
 * per ib__gpu_hold. */
typedef struct ib__gpu_hold ib__gpu_hold;
ib_status ib__gpu_hold_create(int device_id, ib__gpu_hold **out, ib_error *err);
ib_status ib__gpu_hold_stream(ib__gpu_hold *h, void *stream, double timeout_ms, ib_error *err);
ib_status ib__gpu_release_stream(ib__gpu_hold *h, bool *timed_out, ib_error *err);
void ib__gpu_hold_destroy(ib__gpu_hold *h);

/* Overwrites a buffer twice the size of the L2 cache on stream, so that the
 * next run starts with a cold cache (nothing of its data left in L2). */
typedef struct ib__gpu_l2_flusher ib__gpu_l2_flusher;
ib_status ib__gpu_l2_flusher_create(int device_id, ib__gpu_l2_flusher **out, ib_error *err);
ib_status ib__gpu_l2_flush(ib__gpu_l2_flusher *f, void *stream, ib_error *err);
void ib__gpu_l2_flusher_destroy(ib__gpu_l2_flusher *f);

/* Enqueues a kernel that spins for duration_ns of the GPU's global timer
 * (0: an empty kernel, what launching alone costs). */
ib_status ib__gpu_spin(void *stream, uint64_t duration_ns, ib_error *err);

/* CUDA graphs: the work a call enqueues on a stream, captured once and then
 * replayed by one launch (one launch a run instead of one a kernel). A
 * graph replays the kernels, their arguments and the buffer addresses it
 * was captured with: memory it reads is read in place at each replay (a
 * buffer refilled between replays is seen), memory freed since is not
 * its to use. */
typedef struct ib__gpu_graph ib__gpu_graph;
/* Starts capturing stream: work enqueued on it from now on is recorded, not
 * run, until ib__gpu_capture_end. Relaxed mode
 * (cudaStreamCaptureModeRelaxed): calls that are unsafe during a capture
 * (cudaMalloc, which a caching allocator may make) are let through. */
ib_status ib__gpu_capture_begin(void *stream, ib_error *err);
/* Ends the capture begun on stream and instantiates what was captured:
 * *graph is the executable graph (the caller's, for ib__gpu_graph_destroy),
 * NULL on failure. The capture is ended whatever happens, so the stream
 * takes work again after a failure too. A capture that a call inside it
 * invalidated gives IB_ERR_RUNTIME with CUDA's words; out of memory
 * (instantiating) IB_ERR_DEVICE_OOM. */
ib_status ib__gpu_capture_end(void *stream, ib__gpu_graph **graph, ib_error *err);
/* Enqueues one replay of graph on stream (not waited for). */
ib_status ib__gpu_graph_launch(ib__gpu_graph *graph, void *stream, ib_error *err);
/* Destroys graph; NULL: nothing. Replays already enqueued still run. */
void ib__gpu_graph_destroy(ib__gpu_graph *graph);

#endif
