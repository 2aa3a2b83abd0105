/* Environment capture: the facts of the machine (static) and the GPU's state
 * sampled through NVML before, during and after a measurement. NVML is
 * loaded at run time (dlopen libnvidia-ml.so.1); without it the GPU state is
 * simply absent and env->nvml_note says why. */
#ifndef IB_ENV_ENV_H
#define IB_ENV_ENV_H

#include "backend/workload.h"

/* Fills the static facts: tool version, host CPU, ONNX Runtime version,
 * provider (from w->info), and for a CUDA workload the GPU name, driver and
 * CUDA versions, persistence mode, max clocks, L2 size. Never fails: what
 * cannot be read stays empty/zero/-1. */
void ib__env_capture(ib_env *env, const ib_workload *w);

/* Samples GPU state into env->gpu_samples: one sample at start, then every
 * period_ms on a background thread, one at stop (bounded by
 * IB_MAX_GPU_SAMPLES: when full, the middle samples are thinned). Returns
 * NULL (and samples nothing) without NVML or for a host workload. */
typedef struct ib__gpu_sampler ib__gpu_sampler;
ib__gpu_sampler *ib__gpu_sampler_start(ib_env *env, int device_id, double period_ms);
void ib__gpu_sampler_stop(ib__gpu_sampler *s);

/* IB_WARN_THROTTLED / IB_WARN_CLOCK_DROP / IB_WARN_LOW_POWER_START bits
 * derived from env->gpu_samples. */
unsigned ib__env_gpu_warnings(const ib_env *env);

#endif
