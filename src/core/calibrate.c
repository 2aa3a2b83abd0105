/* Calibration: the tool measures kernels whose duration it knows (they spin
 * on the GPU's own clock) and states its error. The same runner as every
 * other measurement does the timing, so this is the accuracy of the real
 * method, not of a special path. */
#include "core/calibrate.h"
#include "core/latency.h"
#include "core/stats.h"
#include "env/env.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const double default_durations_us[] = { 5, 10, 20, 50, 100, 1000, 10000, 100000 };

/* Each point gets about this much sampling time, within [30, cfg->runs]. */
#define POINT_BUDGET_MS 1000.0
#define RESOLUTION_PAIRS 1000

static int64_t runs_for(double duration_us, int64_t max_runs)
{
    double runs = POINT_BUDGET_MS * 1000.0 / (duration_us + 20.0);
    if (runs > (double)max_runs) runs = (double)max_runs;
    return runs < 30 ? 30 : (int64_t)runs;
}

static ib_status measure_spin(const ib__known_kernel *k, double duration_us, const ib_config *base, bool held,
                              ib_latency_result *r, ib_error *err)
{
    ib_workload *w = NULL;
    IB_TRY(k->open(duration_us, k->device_id, k->ctx, &w, err));
    ib_config cfg = *base;
    cfg.runs = runs_for(duration_us, base->runs);
    cfg.precision = 0;
    cfg.exclude_launch = held;
    cfg.sample_gpu_state = false; /* sampled once around the whole calibration */
    ib_status st = ib__measure_latency(w, &cfg, false, r, err);
    ib_workload_destroy(w);
    return st;
}

static ib_status calibrate_point(const ib__known_kernel *k, double true_us, const ib_config *cfg,
                                 ib_calibration_point *p, ib_error *err)
{
    ib_latency_result plain, held;
    *p = (ib_calibration_point){ .true_us = true_us };
    ib_status st = measure_spin(k, true_us, cfg, false, &plain, err);
    if (st == IB_OK) {
        p->n = plain.n;
        p->median_us = plain.device.p50 * 1e3;
        p->error_us = p->median_us - true_us;
        p->error_pct = true_us > 0 ? 100.0 * p->error_us / true_us : NAN;
        p->host_median_us = plain.host.p50 * 1e3;
        double *s = plain.device_ms;
        ib__sort(s, plain.n);
        p->p5_us = ib_quantile_sorted(s, plain.n, 0.05) * 1e3;
        p->p95_us = ib_quantile_sorted(s, plain.n, 0.95) * 1e3;
        /* The first run through a runner is never held (module loading);
         * the kernel's module is loaded by now either way. */
        st = measure_spin(k, true_us, cfg, true, &held, err);
        if (st == IB_OK) {
            p->held_median_us = held.device.p50 * 1e3;
            p->held_error_us = p->held_median_us - true_us;
            p->launch_overhead_us = p->median_us - p->held_median_us;
        }
        ib_latency_result_free(&held);
    }
    ib_latency_result_free(&plain);
    p->status = st;
    return st;
}

/* Two events with nothing between them: the smallest interval the timer
 * reports. */
static ib_status timer_resolution(const ib__known_kernel *k, double *us, ib_error *err)
{
    ib_workload *w = NULL;
    IB_TRY(k->open(0, k->device_id, k->ctx, &w, err));
    void *t = NULL, *target;
    double ms = NAN;
    const ib__timer_ops *timer = ib__workload_device_timer(w, &target);
    ib_status st = timer->create(target, w->device_id, &t, err);
    if (st == IB_OK) st = ib__timer_resolution_ms(timer, t, RESOLUTION_PAIRS, &ms, err);
    if (t) timer->destroy(t);
    ib_workload_destroy(w);
    *us = ms * 1e3;
    return st;
}

/* The point about to be measured, as progress reports name it: the harness
 * (an empty kernel) is step 1 of n + 1. */
static ib_config point_progress(ib__progress *pr, size_t step, size_t n, double true_us, const ib_config *cfg)
{
    char name[48];
    snprintf(name, sizeof name, step == 1 ? "harness" : "spin %g us", true_us);
    ib__progress_step(pr, (int64_t)step, (int64_t)n + 1, name, 1);
    return ib__progress_nested(pr, cfg);
}

/* What is left of an error once the harness's fixed cost of an empty run,
 * measured the same way, is taken off. */
static void correct_errors(ib_calibration_point *p, const ib_calibration_point *harness)
{
    p->corrected_error_us = p->median_us - harness->median_us - p->true_us;
    p->held_corrected_error_us = p->held_median_us - harness->held_median_us - p->true_us;
}

ib_status ib__calibrate_with(const ib__known_kernel *k, const ib_config *cfg, const double *durations_us,
                             size_t n, ib_calibration_result *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    out->timer_resolution_us = NAN;
    IB_TRY(ib__config_validate(cfg, err));
    if (!durations_us) {
        durations_us = default_durations_us;
        n = sizeof default_durations_us / sizeof default_durations_us[0];
    }
    IB_FAIL_IF(n == 0 || n > IB_MAX_CALIBRATION_POINTS, err, IB_ERR_INVALID_ARG,
               "calibrate takes 1 to %d durations", IB_MAX_CALIBRATION_POINTS);

    ib_workload *probe = NULL; /* only to describe the environment */
    IB_TRY(k->open(0, k->device_id, k->ctx, &probe, err));
    ib__env_capture(&out->env, probe);
    ib_workload_destroy(probe);

    ib__progress pr;
    ib__progress_init(&pr, cfg, NULL);
    ib_status st = timer_resolution(k, &out->timer_resolution_us, err);
    ib_config point_cfg = point_progress(&pr, 1, n, 0, cfg);
    if (st == IB_OK) st = calibrate_point(k, 0, &point_cfg, &out->harness, err);
    /* Sampled from here: the harness measurement warmed the GPU up. */
    ib__gpu_sampler *sampler = st == IB_OK && cfg->sample_gpu_state
                                   ? ib__gpu_sampler_start(&out->env, k->device_id, IB__GPU_SAMPLE_PERIOD_MS)
                                   : NULL;
    for (size_t i = 0; i < n && st == IB_OK; i++) {
        if (ib__cancelled(cfg->cancel)) st = ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
        point_cfg = point_progress(&pr, i + 2, n, durations_us[i], cfg);
        if (st == IB_OK) st = calibrate_point(k, durations_us[i], &point_cfg, &out->points[i], err);
        if (st != IB_OK) break;
        correct_errors(&out->points[i], &out->harness);
        out->n_points = i + 1;
    }
    ib__gpu_sampler_stop(sampler);
    out->warnings = ib__env_gpu_warnings(&out->env);
    if (st != IB_OK) {
        out->partial = true;
        out->stop_status = st;
    }
    return st;
}
