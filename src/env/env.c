/* Environment capture: the static facts a result is reported with, and the
 * trust warnings drawn from the GPU samples. Nothing here fails or prints: a
 * fact that cannot be read stays empty, and the report says so. */
#include "env/env.h"
#include "env/nvml.h"
#include "gpu/gpu.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef IB_VERSION
#define IB_VERSION IB_VERSION_STRING
#endif

/* NVML clocks-event reason bits (nvml.h, nvmlClocksEventReason*). */
enum {
    REASON_GPU_IDLE = 0x1ull,
    REASON_APPLICATIONS_CLOCKS = 0x2ull,
    REASON_SW_POWER_CAP = 0x4ull,
    REASON_HW_SLOWDOWN = 0x8ull,
    REASON_SYNC_BOOST = 0x10ull,
    REASON_SW_THERMAL = 0x20ull,
    REASON_HW_THERMAL = 0x40ull,
    REASON_HW_POWER_BRAKE = 0x80ull,
    REASON_DISPLAY_CLOCKS = 0x100ull,
};

/* The reasons that mean the clocks were pulled down while there was work:
 * power capping (the SW cap is common under full load on datacenter GPUs,
 * and it is exactly what makes a number depend on the machine's power and
 * cooling), thermal slowdowns and the power brake. Idle is rest; the
 * applications clocks, sync boost and display clocks reasons report
 * settings someone chose, which stay the same from run to run. */
static const unsigned long long THROTTLE_MASK =
    REASON_SW_POWER_CAP | REASON_HW_SLOWDOWN | REASON_SW_THERMAL | REASON_HW_THERMAL | REASON_HW_POWER_BRAKE;

/* "model name : Intel(R) Xeon(R) ..." of the first CPU in /proc/cpuinfo. */
static void read_host_cpu(char *out, size_t cap)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *v = strchr(line, ':');
        if (!v) continue;
        v++;
        while (*v == ' ' || *v == '\t') v++;
        ib__strlcpy(out, v, cap);
        out[strcspn(out, "\n")] = '\0';
        break;
    }
    fclose(f);
}

/* The NUMA node of PCI device bus_id ("0000:3B:00.0"): sysfs spells it
 * in lower case; -1 when unknown (a machine of one node says -1 too). */
static int read_numa_node(const char *bus_id)
{
    char path[96];
    int n = snprintf(path, sizeof path, "/sys/bus/pci/devices/");
    for (const char *c = bus_id; *c && n < (int)sizeof path - 16; c++)
        path[n++] = (char)tolower((unsigned char)*c);
    snprintf(path + n, sizeof path - (size_t)n, "/numa_node");
    FILE *f = fopen(path, "r");
    int node = -1;
    if (f && fscanf(f, "%d", &node) != 1) node = -1;
    if (f) fclose(f);
    return node;
}

static void capture_gpu(ib_env *env, int device_id)
{
    env->gpu_index = device_id;
    if (ib__gpu_pci_bus_id(device_id, env->gpu_pci_bus_id, sizeof env->gpu_pci_bus_id, NULL) == IB_OK)
        env->gpu_numa_node = read_numa_node(env->gpu_pci_bus_id);
    ib__gpu_props p;
    if (ib__gpu_props_get(device_id, &p, NULL) == IB_OK) {
        ib__strlcpy(env->gpu_name, p.name, sizeof env->gpu_name);
        env->cuda_driver_version = p.driver_version;
        env->cuda_runtime_version = p.runtime_version;
        env->l2_cache_bytes = p.l2_cache_bytes;
    }
    ib__nvml_gpu gpu;
    env->nvml_available = ib__nvml_open(&gpu, device_id, env->nvml_note, sizeof env->nvml_note);
    if (!env->nvml_available) return;
    ib__nvml_static(&gpu, env);
    ib__nvml_close(&gpu);
}

void ib__env_capture(ib_env *env, const ib_workload *w)
{
    /* Every static field is reset here; the samples are the sampler's. */
    ib__strlcpy(env->tool_version, IB_VERSION, sizeof env->tool_version);
    env->host_cpu[0] = '\0';
    env->gpu_name[0] = '\0';
    env->gpu_index = -1;
    env->gpu_uuid[0] = env->gpu_pci_bus_id[0] = '\0';
    env->driver_version[0] = '\0';
    env->cuda_driver_version = 0;
    env->cuda_runtime_version = 0;
    env->persistence_mode = -1;
    env->sm_clock_max_mhz = env->mem_clock_max_mhz = 0;
    env->power_limit_w = 0;
    env->l2_cache_bytes = 0;
    env->nvml_available = false;
    env->nvml_note[0] = '\0';
    env->n_other_gpu_processes = 0;
    env->load_average_1m = env->other_cpu_cores = NAN;
    env->n_cpus = 0;
    env->gpu_numa_node = -1;

    read_host_cpu(env->host_cpu, sizeof env->host_cpu);
    ib__workload_runtime(w, &env->runtime); /* what its backend told it */
    if (!w) return;
    ib__strlcpy(env->runtime.provider, w->info.provider, sizeof env->runtime.provider);
    if (w->caps & IB_CAP_GPU) capture_gpu(env, w->device_id);
}

void ib__env_capture_gpu(ib_env *env, int device_id) { capture_gpu(env, device_id); }

/* Thinning keeps index n-2 = IB_MAX_GPU_SAMPLES-3 only if that is odd. */
_Static_assert(IB_MAX_GPU_SAMPLES % 2 == 0, "IB_MAX_GPU_SAMPLES must be even");

void ib__env_add_sample(ib_env *env, const ib_gpu_sample *s, double *period_ms)
{
    size_t n = env->n_gpu_samples;
    if (n >= IB_MAX_GPU_SAMPLES - 1) {
        /* Keep [0] and the during samples at odd indices 1, 3, ..., n-2.
         * During samples are one period apart, so those kept are two apart,
         * and s, one period after [n-1], comes two after [n-2]. */
        size_t kept = 1;
        for (size_t i = 1; i < n; i += 2) env->gpu_samples[kept++] = env->gpu_samples[i];
        n = kept;
        *period_ms *= 2.0;
    }
    env->gpu_samples[n++] = *s;
    env->n_gpu_samples = n;
}

unsigned ib__env_gpu_warnings(const ib_env *env)
{
    const size_t n = env->n_gpu_samples;
    const ib_gpu_sample *s = env->gpu_samples;
    unsigned warnings = env->n_other_gpu_processes > 0 ? IB_WARN_GPU_SHARED : 0;
    if (n == 0) return warnings;

    for (size_t i = 0; i < n; i++)
        if (s[i].throttle_reasons & THROTTLE_MASK) warnings |= IB_WARN_THROTTLED;

    /* The "before" sample is left out (the GPU may have been resting), and
     * so is the "after" one (it may already be resting again); so are
     * during samples taken while the GPU had nothing to run: an idle GPU
     * lowers its clock by design, and no work ran at that clock. The drop
     * is taken from the highest clock seen, so a run that ramped up and
     * then fell back is caught wherever its peak was. */
    unsigned hi = 0, lo = UINT_MAX;
    size_t busy = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        if (s[i].sm_clock_mhz == 0 || (s[i].throttle_reasons & REASON_GPU_IDLE)) continue;
        busy++;
        if (s[i].sm_clock_mhz > hi) hi = s[i].sm_clock_mhz;
        if (s[i].sm_clock_mhz < lo) lo = s[i].sm_clock_mhz;
    }
    if (busy >= 2 && (double)lo < 0.9 * (double)hi) warnings |= IB_WARN_CLOCK_DROP;

    /* A GPU that starts in a low-power state ramps up during the first runs;
     * warm-up is there to absorb that, and CLOCK_DROP and the steady-state
     * rule tell whether it did. The user should still know: a measurement
     * that started cold may have spent its warm-up budget on the ramp. */
    const ib_gpu_sample *before = &s[0];
    if (before->pstate > 0) warnings |= IB_WARN_LOW_POWER_START;
    if (env->sm_clock_max_mhz > 0 && before->sm_clock_mhz > 0 &&
        (double)before->sm_clock_mhz < 0.5 * (double)env->sm_clock_max_mhz)
        warnings |= IB_WARN_LOW_POWER_START;
    return warnings;
}
