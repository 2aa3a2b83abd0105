/* Environment capture: the facts of the machine (static) and the GPU's state
 * sampled through NVML before, during and after a measurement. NVML is
 * loaded at run time (dlopen libnvidia-ml.so.1); without it the GPU state is
 * simply absent and env->nvml_note says why. */
#ifndef IB_ENV_ENV_H
#define IB_ENV_ENV_H

#include "workload/workload.h"

/* Fills the static facts: tool version, host CPU, the runtime w's backend
 * told it (ib__workload_runtime; the provider from w->info; "" without a
 * backend), and for a CUDA workload the GPU name, driver and
 * CUDA versions, persistence mode, max clocks, L2 size. Never fails: what
 * cannot be read stays empty/zero/-1. */
void ib__env_capture(ib_env *env, const ib_workload *w);
/* The GPU's facts alone (a workload with no ib_workload: a generation
 * workload on CUDA device device_id), after ib__env_capture(env, NULL). */
void ib__env_capture_gpu(ib_env *env, int device_id);

/* Samples GPU state into env->gpu_samples: one sample at start, then every
 * period_ms on a background thread, one at stop (bounded by
 * IB_MAX_GPU_SAMPLES: when full, the middle samples are thinned). Returns
 * NULL (and samples nothing) without NVML or for a host workload. */
typedef struct ib__gpu_sampler ib__gpu_sampler;
ib__gpu_sampler *ib__gpu_sampler_start(ib_env *env, int device_id, double period_ms);
void ib__gpu_sampler_stop(ib__gpu_sampler *s);
/* When the samples' time 0 is, on ib__now_ms's clock (NaN for NULL). */
double ib__gpu_sampler_t0_ms(const ib__gpu_sampler *s);

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

/* Other processes on the GPU (others.c). Of the pids[0..n) NVML lists:
 * those other than self, at most cap into out (the count returned may
 * exceed cap); with self_on_gpu and self not listed, one that is not
 * visible in /proc (another PID namespace) is this process and left out. */
size_t ib__other_processes(const unsigned *pids, const unsigned long long *memory, size_t n, unsigned self,
                           bool self_on_gpu, ib_process_info *out, size_t cap);
struct ib__nvml_gpu;
/* Adds the other compute processes on gpu now to env's list (sampler). */
void ib__env_note_gpu_processes(ib_env *env, const struct ib__nvml_gpu *gpu);

/* The CPU time of the other processes over the timed runs: start records
 * the load average and a /proc/stat mark; stop sets env->other_cpu_cores
 * and returns IB_WARN_CPU_BUSY for a CPU run beside IB__CPU_BUSY_CORES or
 * more of other work. */
#define IB__CPU_BUSY_CORES 0.5
typedef struct ib__cpu_watch {
    bool ok;
    double busy, total, self; /* jiffies */
} ib__cpu_watch;
void ib__cpu_watch_start(ib__cpu_watch *w, ib_env *env);
unsigned ib__cpu_watch_stop(const ib__cpu_watch *w, ib_env *env, bool cpu_device);
/* More CPU threads asked than cores allowed: records threads and the
 * cores this process may use (cores_allowed, the workload's own count when
 * it has one, else 0: sched_getaffinity's) in env, and returns
 * IB_WARN_THREADS_OVER_CORES for a CPU run whose threads (0: the
 * runtime's default, never more than the cores) exceed them. */
unsigned ib__env_threads_warning(ib_env *env, int32_t threads, int32_t cores_allowed, bool cpu_device);
/* (busy - self) / total of the machine's jiffies, in cores; NaN when total
 * is 0 or n_cpus unknown. */
double ib__cpu_other_cores(double busy, double total, double self, int n_cpus);

#endif
