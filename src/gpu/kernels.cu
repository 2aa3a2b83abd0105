/* The kernels inferbench runs itself: a spin of known duration (calibration)
 * and the holding kernel of launch-overhead exclusion. Both run as one thread
 * and time themselves with %globaltimer, the GPU's nanosecond clock, which
 * unlike clock64() does not depend on the SM clock frequency. */
#include "gpu/gpu_cuda.h"

static __device__ __forceinline__ unsigned long long globaltimer_ns()
{
    unsigned long long t;
    /* volatile: every read is a fresh read of the timer, never hoisted. */
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __global__ void spin_kernel(unsigned long long duration_ns)
{
    const unsigned long long start = globaltimer_ns();
    while (globaltimer_ns() - start < duration_ns) {
    }
}

/* release and timed_out live in host-mapped pinned memory. volatile makes
 * each loop iteration read release across the bus again; the system fence
 * makes the timed-out mark visible to the host before the kernel ends. */
static __global__ void hold_kernel(const volatile int *release, volatile int *timed_out,
                                   unsigned long long timeout_ns)
{
    const unsigned long long start = globaltimer_ns();
    while (*release == 0) {
        if (globaltimer_ns() - start >= timeout_ns) {
            *timed_out = 1;
            __threadfence_system();
            return;
        }
    }
}

extern "C" cudaError_t ib__launch_spin(cudaStream_t stream, uint64_t duration_ns)
{
    unsigned long long ns = duration_ns;
    void *args[] = { &ns };
    return cudaLaunchKernel((const void *)spin_kernel, dim3(1), dim3(1), args, 0, stream);
}

extern "C" cudaError_t ib__launch_hold(cudaStream_t stream, const volatile int *release,
                                       volatile int *timed_out, uint64_t timeout_ns)
{
    unsigned long long ns = timeout_ns;
    void *args[] = { &release, &timed_out, &ns };
    return cudaLaunchKernel((const void *)hold_kernel, dim3(1), dim3(1), args, 0, stream);
}

extern "C" cudaError_t ib__kernels_preload(void)
{
    /* Querying a kernel's attributes resolves (and so loads) it. */
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, (const void *)spin_kernel);
    if (e != cudaSuccess) return e;
    return cudaFuncGetAttributes(&attr, (const void *)hold_kernel);
}
