/* Private to src/gpu in a CUDA build: the cudaError_t conversion (the one
 * place where CUDA errors become ib_status) and the kernel launchers of
 * kernels.cu, which is C++ and so exports them with C linkage. */
#ifndef IB_GPU_GPU_CUDA_H
#define IB_GPU_GPU_CUDA_H

#include "inferbench.h"

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Converts e (not cudaSuccess) into an ib_status with the message
 * "<what>: <cudaGetErrorString> (<cudaGetErrorName>)". Clears the runtime's
 * per-thread last error, so that a recoverable failure (out of memory) is not
 * reported again by a later launch check. Out of memory gives
 * IB_ERR_DEVICE_OOM; no driver or no such device IB_ERR_NO_DEVICE; code not
 * built for this GPU IB_ERR_UNSUPPORTED; sticky errors (the context is
 * unusable) IB_ERR_DEVICE_LOST; anything else IB_ERR_RUNTIME. */
ib_status ib__cuda_status(cudaError_t e, ib_error *err, const char *what_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Launchers (kernels.cu): one block of one thread each, on stream. They
 * return the launch's error. */
cudaError_t ib__launch_spin(cudaStream_t stream, uint64_t duration_ns);
/* Spins until *release != 0, or until timeout_ns of the global timer passed;
 * then writes *timed_out = 1 (and makes it visible to the host) and ends. */
cudaError_t ib__launch_hold(cudaStream_t stream, const volatile int *release, volatile int *timed_out,
                            uint64_t timeout_ns);

/* Loads our kernels into the current context now. With lazy module loading
 * (the default since CUDA 12.2) a kernel is loaded on its first launch, and
 * loading may wait for the device to be idle: the first launch of the spin
 * kernel behind a holding kernel would then wait for the hold to time out. */
cudaError_t ib__kernels_preload(void);

#ifdef __cplusplus
}
#endif

#endif
