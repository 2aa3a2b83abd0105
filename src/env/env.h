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

/* Appends a during-run sample (the sampler's thread; exposed for tests).
 * One slot always stays free for the "after" sample: when the array is full
 * but that one, every other sample between the "before" one and s is
 * dropped and *period_ms doubled, so the samples kept stay evenly spaced in
 * time at the new period. */
void ib__env_add_sample(ib_env *env, const ib_gpu_sample *s, double *period_ms);

/* IB_WARN_THROTTLED / IB_WARN_CLOCK_DROP / IB_WARN_LOW_POWER_START bits
 * derived from env->gpu_samples (rules in docs/gpu.md):
 * - THROTTLED: a sample whose clocks-event reasons include a real slowdown:
 *   SW power cap, HW slowdown, SW or HW thermal slowdown, HW power brake.
 *   Idle, applications clocks, sync boost and display clocks are settings
 *   or rest, not throttling.
 * - CLOCK_DROP: among the during-run samples on a busy GPU (idle bit clear,
 *   SM clock known), the lowest SM clock is below 90% of the highest.
 * - LOW_POWER_START: the "before" sample is in a P-state other than P0, or
 *   its SM clock is under half the maximum. */
unsigned ib__env_gpu_warnings(const ib_env *env);

#endif
