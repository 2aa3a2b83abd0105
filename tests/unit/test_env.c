/* Environment capture without a GPU, the warning rules on made-up samples,
 * and the sampler's thinning. Runs anywhere; on a machine with NVML it also
 * samples GPU 0 for real. */
#include "check.h"
#include "env/env.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A host workload that does nothing: what capture needs is its info. */
static ib_status nop_set_batch(ib_workload *w, int64_t batch, ib_error *err)
{
    (void)err;
    w->info.batch = batch;
    return IB_OK;
}
static ib_status nop_run(ib_workload *w, ib_error *err)
{
    (void)w;
    (void)err;
    return IB_OK;
}
static void nop_destroy(ib_workload *w) { (void)w; }

static const ib__workload_ops nop_ops = {
    .version = IB__WORKLOAD_OPS_VERSION,
    .set_batch = nop_set_batch,
    .run = nop_run,
    .destroy = nop_destroy,
};

static void test_capture_host(void)
{
    ib_workload w = { .ops = &nop_ops, .device_id = 0 };
    w.clock = ib__host_clock();
    strcpy(w.info.provider, "CPUExecutionProvider");
    w.info.device = IB_DEVICE_CPU;

    ib_env *env = calloc(1, sizeof *env);
    /* Garbage everywhere: capture must reset every static field. */
    memset(env, 0x5a, sizeof *env);
    env->n_gpu_samples = 0;
    ib__env_capture(env, &w);
    CHECK(strcmp(env->tool_version, IB_VERSION_STRING) == 0);
    /* A bare workload has no backend: its provider, no runtime facts. */
    CHECK(env->runtime.name[0] == '\0' && env->runtime.version[0] == '\0');
    CHECK(strcmp(env->runtime.provider, "CPUExecutionProvider") == 0);
#if defined(__x86_64__)
    CHECK(env->host_cpu[0] != '\0'); /* /proc/cpuinfo has "model name" on x86 */
#endif
    CHECK(strlen(env->host_cpu) < sizeof env->host_cpu);
    CHECK(env->gpu_name[0] == '\0');
    CHECK(env->driver_version[0] == '\0');
    CHECK_EQ_INT(env->cuda_driver_version, 0);
    CHECK_EQ_INT(env->cuda_runtime_version, 0);
    CHECK_EQ_INT(env->persistence_mode, -1);
    CHECK_EQ_INT(env->sm_clock_max_mhz, 0);
    CHECK_EQ_INT(env->mem_clock_max_mhz, 0);
    CHECK_EQ_INT(env->l2_cache_bytes, 0);
    CHECK(!env->nvml_available);
    CHECK(env->nvml_note[0] == '\0'); /* nothing is missing for a CPU run */
    CHECK_EQ_INT(env->n_gpu_samples, 0);

    /* No workload at all: the host facts only. */
    ib__env_capture(env, NULL);
    CHECK(env->runtime.name[0] == '\0' && env->runtime.provider[0] == '\0');
    free(env);
}

static ib_gpu_sample busy(double t_ms, unsigned sm_mhz, unsigned long long reasons)
{
    return (ib_gpu_sample){ .t_ms = t_ms,
                            .pstate = 0,
                            .sm_clock_mhz = sm_mhz,
                            .mem_clock_mhz = 2619,
                            .temperature_c = 40,
                            .power_w = 300.0,
                            .throttle_reasons = reasons };
}

/* env with the samples given, max SM clock 1980 MHz. */
static unsigned warnings_of(const ib_gpu_sample *s, size_t n)
{
    static ib_env env;
    memset(&env, 0, sizeof env);
    env.sm_clock_max_mhz = 1980;
    if (n) memcpy(env.gpu_samples, s, n * sizeof *s);
    env.n_gpu_samples = n;
    return ib__env_gpu_warnings(&env);
}

static void test_warnings(void)
{
    const unsigned GPU_BITS = IB_WARN_THROTTLED | IB_WARN_CLOCK_DROP | IB_WARN_LOW_POWER_START;

    /* No samples: nothing to say. */
    CHECK_EQ_INT(warnings_of(NULL, 0), 0);

    /* A steady run at full clock. */
    ib_gpu_sample steady[] = { busy(0, 1980, 0), busy(100, 1980, 0), busy(200, 1965, 0), busy(300, 1980, 0),
                               busy(400, 1980, 0x1) };
    CHECK_EQ_INT(warnings_of(steady, 5), 0);

    /* Idle (0x1), applications clocks (0x2), sync boost (0x10) and display
     * clocks (0x100) are not throttling. */
    ib_gpu_sample settings[] = { busy(0, 1980, 0x1), busy(100, 1980, 0x2 | 0x10 | 0x100),
                                 busy(200, 1980, 0x1) };
    CHECK_EQ_INT(warnings_of(settings, 3), 0);

    /* Each real slowdown reason alone raises THROTTLED, and only it. */
    const unsigned long long real[] = { 0x4, 0x8, 0x20, 0x40, 0x80 };
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        ib_gpu_sample s[] = { busy(0, 1980, 0), busy(100, 1980, real[i] | 0x1), busy(200, 1980, 0) };
        CHECK_EQ_INT(warnings_of(s, 3) & GPU_BITS, IB_WARN_THROTTLED);
    }
    /* Seen only in the "after" sample still counts (thermal after a long run). */
    ib_gpu_sample late[] = { busy(0, 1980, 0), busy(100, 1980, 0), busy(200, 1980, 0x40) };
    CHECK_EQ_INT(warnings_of(late, 3), IB_WARN_THROTTLED);

    /* CLOCK_DROP: the lowest busy during-sample under 90% of the highest. */
    ib_gpu_sample drop[] = { busy(0, 1980, 0), busy(100, 1980, 0), busy(200, 1700, 0), busy(300, 1980, 0) };
    CHECK_EQ_INT(warnings_of(drop, 4), IB_WARN_CLOCK_DROP);
    /* 1783 >= 0.9 * 1980 = 1782: no drop. */
    ib_gpu_sample small_drop[] = { busy(0, 1980, 0), busy(100, 1980, 0), busy(200, 1783, 0),
                                   busy(300, 1980, 0) };
    CHECK_EQ_INT(warnings_of(small_drop, 4), 0);
    /* A ramp after a rest counts from the peak, wherever it is. */
    ib_gpu_sample ramp_then_fall[] = { busy(0, 1980, 0), busy(100, 1400, 0), busy(200, 1980, 0),
                                       busy(300, 1500, 0), busy(400, 1980, 0) };
    CHECK_EQ_INT(warnings_of(ramp_then_fall, 5), IB_WARN_CLOCK_DROP);
    /* The before and after samples, idle during-samples and unknown clocks
     * (0) are not part of it. */
    ib_gpu_sample rests[] = { busy(0, 1980, 0), busy(100, 1980, 0), busy(200, 345, 0x1),
                              busy(300, 0, 0),  busy(400, 1980, 0), busy(500, 345, 0x1) };
    CHECK_EQ_INT(warnings_of(rests, 6), 0);
    ib_gpu_sample low_after[] = { busy(0, 1980, 0), busy(100, 1980, 0), busy(200, 1980, 0),
                                  busy(300, 1000, 0) };
    CHECK_EQ_INT(warnings_of(low_after, 4), 0);
    /* One busy during-sample: nothing to compare. */
    ib_gpu_sample one[] = { busy(0, 1980, 0), busy(100, 1000, 0), busy(200, 1980, 0) };
    CHECK_EQ_INT(warnings_of(one, 3), 0);

    /* LOW_POWER_START: P-state above 0, or an SM clock under half the max. */
    ib_gpu_sample p2[] = { busy(0, 1980, 0), busy(100, 1980, 0), busy(200, 1980, 0) };
    p2[0].pstate = 2;
    CHECK_EQ_INT(warnings_of(p2, 3), IB_WARN_LOW_POWER_START);
    ib_gpu_sample idle_clock[] = { busy(0, 345, 0x1), busy(100, 1980, 0), busy(200, 1980, 0) };
    CHECK_EQ_INT(warnings_of(idle_clock, 3), IB_WARN_LOW_POWER_START);
    ib_gpu_sample half[] = { busy(0, 990, 0), busy(100, 1980, 0), busy(200, 1980, 0) };
    CHECK_EQ_INT(warnings_of(half, 3), 0); /* exactly half is not under half */
    ib_gpu_sample unknown[] = { busy(0, 0, 0), busy(100, 1980, 0), busy(200, 1980, 0) };
    unknown[0].pstate = -1;
    CHECK_EQ_INT(warnings_of(unknown, 3), 0);

    /* All three at once. */
    ib_gpu_sample all[] = { busy(0, 300, 0), busy(100, 1980, 0x4), busy(200, 1500, 0), busy(300, 1980, 0) };
    all[0].pstate = 8;
    CHECK_EQ_INT(warnings_of(all, 4), GPU_BITS);
}

static void test_thinning(void)
{
    static ib_env env;
    memset(&env, 0, sizeof env);
    const double p0 = 10.0;
    double period = p0;
    /* The sampler's schedule: "before" at 0, then one sample per period. */
    double t = 0.0;
    ib_gpu_sample s = busy(t, 1980, 0);
    ib__env_add_sample(&env, &s, &period);
    for (int i = 0; i < 3000; i++) {
        t += period;
        s = busy(t, 1980, 0);
        ib__env_add_sample(&env, &s, &period);
        CHECK(env.n_gpu_samples <= IB_MAX_GPU_SAMPLES - 1);
    }
    CHECK(period > p0);
    CHECK_NEAR(env.gpu_samples[0].t_ms, 0.0, 0.0);
    CHECK_NEAR(env.gpu_samples[env.n_gpu_samples - 1].t_ms, t, 0.0);
    /* Still evenly spaced, at the current period. */
    int uneven = 0;
    for (size_t i = 2; i < env.n_gpu_samples; i++)
        if (env.gpu_samples[i].t_ms - env.gpu_samples[i - 1].t_ms != period) uneven++;
    CHECK_EQ_INT(uneven, 0);
    CHECK_NEAR(env.gpu_samples[1].t_ms, p0, 0.0); /* the first during sample stays */
    /* After thinning there is room for the "after" sample. */
    CHECK(env.n_gpu_samples < IB_MAX_GPU_SAMPLES);
    CHECK(env.n_gpu_samples > IB_MAX_GPU_SAMPLES / 2 - 1);
}

static void sleep_ms(long ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Without NVML (CI, this machine) the sampler gives NULL and samples
 * nothing; with NVML and a GPU (the H200) it records before, during and
 * after. */
static void test_sampler(void)
{
    static ib_env env;
    memset(&env, 0, sizeof env);
    env.n_gpu_samples = 7;
    ib__gpu_sampler *s = ib__gpu_sampler_start(&env, 0, 20.0);
    if (!s) {
        printf("test_env: sampler: NULL (%s)\n", env.nvml_note);
        CHECK_EQ_INT(env.n_gpu_samples, 0);
        CHECK(env.nvml_note[0] != '\0');
        ib__gpu_sampler_stop(NULL);
        return;
    }
    sleep_ms(200);
    ib__gpu_sampler_stop(s);
    printf("test_env: sampler: %zu samples, SM %u MHz, P%d, %.0f W, reasons 0x%llx\n", env.n_gpu_samples,
           env.gpu_samples[0].sm_clock_mhz, env.gpu_samples[0].pstate, env.gpu_samples[0].power_w,
           env.gpu_samples[0].throttle_reasons);
    CHECK(env.n_gpu_samples >= 4);  /* before, several during, after */
    CHECK(env.n_gpu_samples <= 13); /* 200 ms / 20 ms + 2, with slack */
    for (size_t i = 1; i < env.n_gpu_samples; i++)
        CHECK(env.gpu_samples[i].t_ms >= env.gpu_samples[i - 1].t_ms);
    CHECK(env.gpu_samples[0].sm_clock_mhz > 0);
    CHECK(env.gpu_samples[0].pstate >= 0);
    CHECK(env.gpu_samples[env.n_gpu_samples - 1].t_ms >= 200.0);
}

/* What the user reads: each GPU-state warning of scripted samples as its
 * line in the text report and its key in the JSON one (with the samples
 * themselves under environment.devices[0].gpu_samples), and no GPU line without. */
static void check_reported(const ib_gpu_sample *s, size_t n, const char *line, const char *key)
{
    double ms[3] = { 1.0, 1.01, 0.99 };
    ib_latency_result *r = calloc(1, sizeof *r);
    if (!r) return;
    r->n = 3;
    r->host_ms = r->device_ms = ms;
    r->has_device_timer = true;
    r->cold_host_ms = r->cold_device_ms = 2;
    r->launch_overhead_ms = NAN;
    CHECK(ib_stats_compute(ms, 3, &r->device) == IB_OK && ib_stats_compute(ms, 3, &r->host) == IB_OK);
    snprintf(r->env.gpu_name, sizeof r->env.gpu_name, "NVIDIA H200");
    r->env.sm_clock_max_mhz = 1980;
    memcpy(r->env.gpu_samples, s, n * sizeof *s);
    r->env.n_gpu_samples = n;
    r->warnings = ib__env_gpu_warnings(&r->env); /* as ib_measure_latency does */
    ib_workload_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.model, sizeof info.model, "m.onnx");
    info.batch = 1;
    ib_config cfg;
    ib_config_init(&cfg);
    char *text = ib_latency_report_text(r, &info), *json = ib_latency_report_json(r, &info, &cfg);
    CHECK(text && json);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    const cJSON *keys = cJSON_GetObjectItem(doc, "warnings");
    static const char *const gpu_keys[] = { "throttled", "clock_drop", "low_power_start" };
    for (size_t k = 0; k < 3; k++) {
        bool listed = false;
        const cJSON *item;
        cJSON_ArrayForEach(item, keys) listed |= strcmp(cJSON_GetStringValue(item), gpu_keys[k]) == 0;
        CHECK(listed == (key && strcmp(key, gpu_keys[k]) == 0));
    }
    if (line) CHECK(text && strstr(text, line) != NULL);
    CHECK_EQ_INT(count_occurrences(text ? text : "", "warning: the GPU") +
                     count_occurrences(text ? text : "", "warning: the SM clock"),
                 line ? 1 : 0);
    /* the samples are the device's: environment.devices[0].gpu_samples */
    const cJSON *devices = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "environment"), "devices");
    CHECK_EQ_INT(cJSON_GetArraySize(devices), 1);
    const cJSON *device = cJSON_GetArrayItem(devices, 0);
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(device, "name"));
    CHECK(name && !strcmp(name, "NVIDIA H200"));
    const cJSON *samples = cJSON_GetObjectItem(device, "gpu_samples");
    CHECK_EQ_INT(cJSON_GetArraySize(samples), n);
    for (size_t i = 0; i < n && i < (size_t)cJSON_GetArraySize(samples); i++) {
        const cJSON *o = cJSON_GetArrayItem(samples, (int)i);
        CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "sm_clock_mhz")), s[i].sm_clock_mhz, 0);
        CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "throttle_reasons")),
                   (double)s[i].throttle_reasons, 0);
        CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "pstate")), s[i].pstate, 0);
    }
    cJSON_Delete(doc);
    ib_free(text);
    ib_free(json);
    free(r);
}

static void test_warnings_reported(void)
{
    ib_gpu_sample calm[] = { busy(0, 1980, 0), busy(100, 1980, 0), busy(200, 1980, 0) };
    check_reported(calm, 3, NULL, NULL);
    ib_gpu_sample hot[] = { busy(0, 1980, 0), busy(100, 1980, 0x20), busy(200, 1980, 0) };
    check_reported(hot, 3, "warning: the GPU throttled during the run (power, thermal or slowdown)\n",
                   "throttled");
    ib_gpu_sample drop[] = { busy(0, 1980, 0), busy(100, 1980, 0), busy(200, 1500, 0), busy(300, 1980, 0) };
    check_reported(drop, 4, "warning: the SM clock dropped by more than 10% during the run\n", "clock_drop");
    ib_gpu_sample cold[] = { busy(0, 1980, 0), busy(100, 1980, 0), busy(200, 1980, 0) };
    cold[0].pstate = 8;
    check_reported(cold, 3,
                   "warning: the GPU was in a low-power state at the start (warm-up should have raised it)\n",
                   "low_power_start");
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_capture_host);
    RUN(test_warnings);
    RUN(test_warnings_reported);
    RUN(test_thinning);
    RUN(test_sampler);
    return check_summary("test_env");
}
