/* Cold-cache runs: before each run, write a buffer twice the L2 size on the
 * workload's stream, so that whatever the previous run left in L2 (weights,
 * activations) has been evicted. Twice, because the L2 of recent GPUs is
 * split in partitions that may each keep a copy of a line, and replacement
 * is not strict LRU: one L2's worth of writes can leave old lines behind. The
 * write is a cudaMemsetAsync, which runs near memory bandwidth (tens of
 * microseconds for 120 MB on an H200), queued before the start event so it
 * stays outside the timed region. */
#include "gpu/gpu.h"
#include "gpu/gpu_cuda.h"

#include <stdlib.h>

struct ib__gpu_l2_flusher {
    void *buffer;
    size_t bytes;
    int value; /* changes each flush, so no layer can skip a no-op write */
};

ib_status ib__gpu_l2_flusher_create(int device_id, ib__gpu_l2_flusher **out, ib_error *err)
{
    *out = NULL;
    int l2_bytes = 0;
    cudaError_t e = cudaSetDevice(device_id);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device_id);
    if (e != cudaSuccess) return ib__cuda_status(e, err, "L2 flusher on device %d", device_id);
    IB_FAIL_IF(l2_bytes <= 0, err, IB_ERR_UNSUPPORTED, "L2 flusher: device %d reports no L2 cache size",
               device_id);

    ib__gpu_l2_flusher *f = calloc(1, sizeof *f);
    IB_FAIL_IF(f == NULL, err, IB_ERR_NO_MEMORY, "L2 flusher: out of host memory");
    f->bytes = 2 * (size_t)l2_bytes;
    e = cudaMalloc(&f->buffer, f->bytes);
    /* One synchronous write now: the pages get backed and any one-time cost
     * of the memset path is paid here, not in the first measured flush. */
    if (e == cudaSuccess) e = cudaMemset(f->buffer, 0, f->bytes);
    if (e != cudaSuccess) {
        ib__gpu_l2_flusher_destroy(f);
        return ib__cuda_status(e, err, "L2 flusher: %zu bytes on device %d", 2 * (size_t)l2_bytes, device_id);
    }
    *out = f;
    return IB_OK;
}

ib_status ib__gpu_l2_flush(ib__gpu_l2_flusher *f, void *stream, ib_error *err)
{
    f->value = (f->value + 1) & 0xff;
    cudaError_t e = cudaMemsetAsync(f->buffer, f->value, f->bytes, (cudaStream_t)stream);
    if (e != cudaSuccess) return ib__cuda_status(e, err, "L2 flush: cudaMemsetAsync(%zu bytes)", f->bytes);
    return IB_OK;
}

void ib__gpu_l2_flusher_destroy(ib__gpu_l2_flusher *f)
{
    if (!f) return;
    ib__gpu_free(f->buffer);
    free(f);
}
