/* The CUDA layer in a build without CUDA: no device, ever. */
#include "gpu/gpu.h"

#define NO_CUDA(err) ib__fail((err), IB_ERR_NO_DEVICE, "this inferbench was built without CUDA")

bool ib__gpu_available(int device_id)
{
    (void)device_id;
    return false;
}
ib_status ib__gpu_props_get(int device_id, ib__gpu_props *out, ib_error *err)
{
    (void)device_id;
    (void)out;
    return NO_CUDA(err);
}
ib_status ib__gpu_pci_bus_id(int device_id, char *buf, size_t cap, ib_error *err)
{
    (void)device_id;
    if (cap > 0) buf[0] = '\0';
    return NO_CUDA(err);
}
ib_status ib__gpu_stream_create(int device_id, void **stream, ib_error *err)
{
    (void)device_id;
    *stream = NULL;
    return NO_CUDA(err);
}
void ib__gpu_stream_destroy(void *stream) { (void)stream; }
ib_status ib__gpu_stream_sync(void *stream, ib_error *err)
{
    (void)stream;
    return NO_CUDA(err);
}
ib_status ib__gpu_malloc(size_t bytes, void **ptr, ib_error *err)
{
    (void)bytes;
    *ptr = NULL;
    return NO_CUDA(err);
}
void ib__gpu_free(void *ptr) { (void)ptr; }
ib_status ib__gpu_mem_info(size_t *free_bytes, size_t *total_bytes, ib_error *err)
{
    *free_bytes = *total_bytes = 0;
    return NO_CUDA(err);
}
ib_status ib__gpu_copy_h2d(void *dst, const void *src, size_t bytes, void *stream, ib_error *err)
{
    (void)dst;
    (void)src;
    (void)bytes;
    (void)stream;
    return NO_CUDA(err);
}
ib_status ib__gpu_copy_d2h(void *dst, const void *src, size_t bytes, void *stream, ib_error *err)
{
    (void)dst;
    (void)src;
    (void)bytes;
    (void)stream;
    return NO_CUDA(err);
}
ib_status ib__gpu_copy_h2d_async(void *dst, const void *src, size_t bytes, void *stream, ib_error *err)
{
    return ib__gpu_copy_h2d(dst, src, bytes, stream, err);
}
ib_status ib__gpu_copy_d2h_async(void *dst, const void *src, size_t bytes, void *stream, ib_error *err)
{
    return ib__gpu_copy_d2h(dst, src, bytes, stream, err);
}
ib_status ib__gpu_host_alloc(size_t bytes, void **ptr, ib_error *err)
{
    (void)bytes;
    *ptr = NULL;
    return NO_CUDA(err);
}
void ib__gpu_host_free(void *ptr) { (void)ptr; }
/* A backend may hand over a CUDA stream of its own making (a plugin): its
 * events cannot be recorded here. */
static ib_status no_event_timer(void *stream, int device_id, void **state, ib_error *err)
{
    (void)stream;
    (void)device_id;
    *state = NULL;
    return NO_CUDA(err);
}
const ib__timer_ops ib__cuda_event_timer = { .create = no_event_timer };
ib_status ib__gpu_hold_create(int device_id, ib__gpu_hold **out, ib_error *err)
{
    (void)device_id;
    *out = NULL;
    return NO_CUDA(err);
}
ib_status ib__gpu_hold_stream(ib__gpu_hold *h, void *stream, double timeout_ms, ib_error *err)
{
    (void)h;
    (void)stream;
    (void)timeout_ms;
    return NO_CUDA(err);
}
ib_status ib__gpu_release_stream(ib__gpu_hold *h, bool *timed_out, ib_error *err)
{
    (void)h;
    *timed_out = false;
    return NO_CUDA(err);
}
void ib__gpu_hold_destroy(ib__gpu_hold *h) { (void)h; }
ib_status ib__gpu_l2_flusher_create(int device_id, ib__gpu_l2_flusher **out, ib_error *err)
{
    (void)device_id;
    *out = NULL;
    return NO_CUDA(err);
}
ib_status ib__gpu_l2_flush(ib__gpu_l2_flusher *f, void *stream, ib_error *err)
{
    (void)f;
    (void)stream;
    return NO_CUDA(err);
}
void ib__gpu_l2_flusher_destroy(ib__gpu_l2_flusher *f) { (void)f; }
ib_status ib__gpu_spin(void *stream, uint64_t duration_ns, ib_error *err)
{
    (void)stream;
    (void)duration_ns;
    return NO_CUDA(err);
}

ib_status ib__gpu_capture_begin(void *stream, ib_error *err)
{
    (void)stream;
    return NO_CUDA(err);
}

ib_status ib__gpu_capture_end(void *stream, ib__gpu_graph **graph, ib_error *err)
{
    (void)stream;
    *graph = NULL;
    return NO_CUDA(err);
}

ib_status ib__gpu_graph_launch(ib__gpu_graph *graph, void *stream, ib_error *err)
{
    (void)graph;
    (void)stream;
    return NO_CUDA(err);
}

void ib__gpu_graph_destroy(ib__gpu_graph *graph) { (void)graph; }
