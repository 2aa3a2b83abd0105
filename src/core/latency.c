/* The latency measurement: cold run, warm-up, timed runs, statistics. */
#include "core/latency.h"
#include "core/energy.h"
#include "core/rules.h"
#include "core/stats.h"
#include "env/env.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Pairs of runs of the host-wait check: one as it is, one held. */
#define HOST_WAIT_PAIRS 100

void ib_config_init(ib_config *cfg)
{
    *cfg = (ib_config){
        .warmup_runs = 10,
        .warmup_ms = 500,
        .warmup_until_steady = true,
        .warmup_max_ms = 10000,
        .runs = 300,
        .precision = 0,
        .min_runs = 30,
        .max_runs = 100000,
        .max_time_ms = 30000,
        .sample_gpu_state = true,
        .measure_energy = true,
    };
}

unsigned ib__sample_warnings(const double *ms, const ib_stats *st)
{
    unsigned warn = 0;
    if (st->cv > IB__HIGH_CV) warn |= IB_WARN_HIGH_CV;
    if (st->n < IB__FEW_SAMPLES) warn |= IB_WARN_FEW_SAMPLES;
    if (ib__is_bimodal(ms, st->n)) warn |= IB_WARN_BIMODAL;
    return warn;
}

ib_status ib__config_validate(const ib_config *cfg, ib_error *err)
{
    IB_FAIL_IF(cfg->warmup_runs < 0 || cfg->warmup_runs > IB__MAX_RUNS, err, IB_ERR_INVALID_ARG,
               "warm-up runs must be between 0 and %d", IB__MAX_RUNS);
    IB_FAIL_IF(!(cfg->warmup_ms >= 0 && cfg->warmup_ms <= IB__MAX_TIME_MS), err, IB_ERR_INVALID_ARG,
               "warm-up time must be between 0 and %.0f ms", IB__MAX_TIME_MS);
    IB_FAIL_IF(!(cfg->warmup_max_ms >= cfg->warmup_ms && cfg->warmup_max_ms <= IB__MAX_TIME_MS), err,
               IB_ERR_INVALID_ARG, "warm-up cap must be between the warm-up time and %.0f ms",
               IB__MAX_TIME_MS);
    IB_FAIL_IF(!(cfg->precision >= 0 && cfg->precision <= 0.5), err, IB_ERR_INVALID_ARG,
               "precision must be between 0 (off) and 0.5 (50%%)");
    if (cfg->precision > 0) {
        IB_FAIL_IF(cfg->min_runs < 6 || cfg->min_runs > cfg->max_runs, err, IB_ERR_INVALID_ARG,
                   "adaptive stopping needs 6 <= min runs <= max runs");
        IB_FAIL_IF(cfg->max_runs > IB__MAX_RUNS, err, IB_ERR_INVALID_ARG, "max runs must be at most %d",
                   IB__MAX_RUNS);
        IB_FAIL_IF(!(cfg->max_time_ms > 0 && cfg->max_time_ms <= IB__MAX_TIME_MS), err, IB_ERR_INVALID_ARG,
                   "max time must be between 0 and %.0f ms", IB__MAX_TIME_MS);
    } else {
        IB_FAIL_IF(cfg->runs < 1 || cfg->runs > IB__MAX_RUNS, err, IB_ERR_INVALID_ARG,
                   "runs must be between 1 and %d", IB__MAX_RUNS);
    }
    return IB_OK;
}

/* Growable sample arrays; the cap on runs bounds their size. */
static ib_status append_sample(ib_latency_result *r, size_t *cap, double device_ms, double host_ms,
                               double end_ms)
{
    if (r->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 512;
        double *h = realloc(r->host_ms, ncap * sizeof *h);
        if (!h) return IB_ERR_NO_MEMORY;
        r->host_ms = h;
        double *e = realloc(r->end_ms, ncap * sizeof *e);
        if (!e) return IB_ERR_NO_MEMORY;
        r->end_ms = e;
        if (r->has_device_timer) {
            double *d = realloc(r->device_ms, ncap * sizeof *d);
            if (!d) return IB_ERR_NO_MEMORY;
            r->device_ms = d;
        }
        *cap = ncap;
    }
    r->host_ms[r->n] = host_ms;
    r->end_ms[r->n] = end_ms;
    if (r->has_device_timer) r->device_ms[r->n] = device_ms;
    r->n++;
    return IB_OK;
}

/* The figure the rules look at: device time when there is one. */
static double primary(double device_ms, double host_ms) { return isnan(device_ms) ? host_ms : device_ms; }

ib_status ib__warm_up_loop(const ib__warmup_rule *rule, const ib__clock *clock, const volatile int *cancel,
                           ib__progress *pr, ib__warmup_run_fn run, void *user, int64_t *runs_done,
                           double *ms_spent, bool *steady, ib_error *err)
{
    double recent[2 * IB__STEADY_WINDOW];
    size_t n_recent = 0;
    double t0 = clock->now_ms(clock->ctx);
    *runs_done = 0;
    *steady = !rule->until_steady;
    /* Until steady, the end is not known: only the cap bounds it. */
    ib__progress_phase(pr, IB_PHASE_WARMUP, rule->until_steady ? 0 : rule->min_runs);
    for (;;) {
        double elapsed = clock->now_ms(clock->ctx) - t0;
        *ms_spent = elapsed;
        bool minimums_met = *runs_done >= rule->min_runs && elapsed >= rule->min_ms;
        if (minimums_met && *steady) return IB_OK;
        if (minimums_met && elapsed >= rule->max_ms) return IB_OK; /* cap: not steady */
        if (ib__cancelled(cancel)) return ib__fail(err, IB_ERR_INTERRUPTED, "interrupted during warm-up");
        double value, run_ms;
        IB_TRY(run(user, &value, &run_ms, err));
        (*runs_done)++;
        ib__progress_runs(pr, *runs_done, rule->until_steady ? rule->max_ms : NAN);
        if (n_recent == 2 * IB__STEADY_WINDOW) {
            memmove(recent, recent + 1, (n_recent - 1) * sizeof *recent);
            n_recent--;
        }
        recent[n_recent++] = value;
        if (rule->until_steady && !*steady)
            *steady = ib__is_steady(recent, n_recent, ib__steady_window(rule->max_ms, run_ms),
                                    IB__STEADY_TOLERANCE);
    }
}

/* A warm-up run of the runner: steadiness on the device time when there is
 * one, the window sized by the host time. */
static ib_status runner_warm_run(void *user, double *value, double *run_ms, ib_error *err)
{
    double d, h;
    IB_TRY(ib__runner_time_one(user, &d, &h, err));
    *value = primary(d, h);
    *run_ms = h;
    return IB_OK;
}

ib_status ib__warm_up(ib__runner *run, const ib_config *cfg, ib__progress *pr, int64_t *runs_done,
                      double *ms_spent, bool *steady, ib_error *err)
{
    ib__warmup_rule rule = { .min_runs = cfg->warmup_runs,
                             .min_ms = cfg->warmup_ms,
                             .max_ms = cfg->warmup_max_ms,
                             .until_steady = cfg->warmup_until_steady };
    return ib__warm_up_loop(&rule, &run->w->clock, run->cancel, pr, runner_warm_run, run, runs_done, ms_spent,
                            steady, err);
}

static void summarize(ib_latency_result *r)
{
    if (r->n == 0) return;
    ib_stats_compute(r->host_ms, r->n, &r->host);
    if (r->has_device_timer) ib_stats_compute(r->device_ms, r->n, &r->device);
    const ib_stats *p = r->has_device_timer ? &r->device : &r->host;
    const double *samples = r->has_device_timer ? r->device_ms : r->host_ms;
    ib__stats_widen_to_resolution(&r->host, r->host_timer_resolution_ms);
    if (r->has_device_timer) ib__stats_widen_to_resolution(&r->device, r->timer_resolution_ms);
    r->precision_achieved = ib__median_ci_relative_halfwidth(p);
    if (r->precision_target > 0) r->precision_met = r->precision_achieved <= r->precision_target;
    r->warnings |= ib__sample_warnings(samples, p);
    if (r->precision_target > 0 && !r->precision_met) r->warnings |= IB_WARN_PRECISION_NOT_MET;
}

static ib_status sample(ib__runner *run, const ib_config *cfg, ib__progress *pr, ib__energy_meters *em,
                        ib_latency_result *r, ib_error *err)
{
    ib__stop_rule rule = {
        .runs = cfg->runs,
        .precision = cfg->precision,
        .min_runs = cfg->min_runs,
        .max_runs = cfg->max_runs,
        .max_time_ms = cfg->max_time_ms,
        .resolution_ms = r->timer_resolution_ms,
    };
    size_t cap = 0;
    bool adaptive = cfg->precision > 0;
    ib__progress_phase(pr, IB_PHASE_SAMPLING, adaptive ? cfg->max_runs : cfg->runs);
    /* The workers of a fleet start their timed runs together: the phase
     * (and its run end times) starts when the barrier lets this one go. */
    if (cfg->sync) IB_TRY(cfg->sync(cfg->sync_user, IB_SYNC_BEFORE_TIMED));
    double t0 = ib__workload_now_ms(run->w);
    double achieved = INFINITY;
    for (;;) {
        double elapsed = ib__workload_now_ms(run->w) - t0;
        const double *primary_samples = r->has_device_timer ? r->device_ms : r->host_ms;
        if (ib__stop_check(&rule, primary_samples, r->n, elapsed, &achieved) != IB__CONTINUE) return IB_OK;
        if (ib__cancelled(run->cancel)) return ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
        double d, h;
        IB_TRY(ib__runner_time_one(run, &d, &h, err));
        if (append_sample(r, &cap, d, h, ib__workload_now_ms(run->w) - t0) != IB_OK)
            return ib__fail(err, IB_ERR_NO_MEMORY, "out of host memory for samples");
        ib__energy_meters_tick(em);
        ib__progress_runs(pr, (int64_t)r->n, adaptive ? cfg->max_time_ms : NAN);
    }
}

/* What the energy window's ends pad with: untimed runs of the same kind. */
static ib_status pad_run(void *ctx, double *items, ib_error *err)
{
    ib__runner *run = ctx;
    double d, h;
    IB_TRY(ib__runner_time_one(run, &d, &h, err));
    *items = (double)run->w->info.batch;
    return IB_OK;
}

/* The timed runs inside an energy window whose ends are aligned on the
 * counter's changes (docs/energy.md): the runs that wait for the first
 * change are outside it, those that wait for the last inside. */
static ib_status sample_with_energy(ib__runner *run, const ib_config *cfg, ib__progress *pr,
                                    ib__energy_meters *em, ib_latency_result *r, double *pad_items,
                                    ib_error *err)
{
    *pad_items = 0;
    IB_TRY(ib__energy_meters_begin(em, pad_run, run, err));
    IB_TRY(sample(run, cfg, pr, em, r, err));
    return ib__energy_meters_end(em, pad_run, run, pad_items, err);
}

/* The energy's figures per input; a measurement that stopped early has
 * none (its window is not the timed runs'). */
static void energy_figures(const ib__energy_meters *em, ib_status st, double pad_items, double sampler_t0_ms,
                           const ib_workload *w, ib_latency_result *out)
{
    if (st != IB_OK) {
        ib__energy_none(&out->energy, "the measurement stopped early: no energy figure");
        ib__energy_none(&out->cpu_energy, "the measurement stopped early: no energy figure");
        return;
    }
    /* pad_items counts inputs already (the pad's runs at the batch). */
    double items = (double)out->n * (double)w->info.batch + pad_items;
    ib__energy_meters_figures(em, items, &out->env, sampler_t0_ms, &out->energy, &out->cpu_energy);
    const ib_stats *timed = out->has_device_timer ? &out->device : &out->host;
    out->energy.timed_ms_per_item = out->cpu_energy.timed_ms_per_item = timed->p50 / (double)w->info.batch;
}

/* Whether the workload can time a run with its launch held: a device timer,
 * a stream hold (its own or the GPU's on its CUDA stream) and a run that
 * can skip its own synchronization. */
bool ib__can_hold(const ib_workload *w)
{
    return ib__workload_can(w, IB_CAP_DEVICE_TIMING) && ib__workload_can(w, IB_CAP_ASYNC_RUN) &&
           (w->stream_hold || ib__workload_can(w, IB_CAP_CUDA_STREAM));
}

/* The host-wait check (docs/method.md, "Host-bound"): the same run timed
 * as it is and with the stream held until it is queued, in alternation
 * (a drift of the machine falls on both alike). A held run's events see
 * the device's part alone; a run as it is also the time the GPU waited
 * for the host to queue it. They differ by more than both medians'
 * intervals only when the GPU did wait (hw->wait_ms); a host that queues
 * faster than the GPU runs (a large batch, however long each call takes
 * to return) leaves the two equal but for the first launch and a few
 * short kernels. The run is host-bound, the figure the host's, when that
 * wait is over IB__HOST_BOUND_SHARE of the device's part. */
ib_status ib__host_wait_pairs(ib_workload *w, const ib_config *cfg, size_t pairs, double resolution_ms,
                              ib__host_wait *hw, ib_error *err)
{
    *hw = (ib__host_wait){ .wait_ms = NAN };
    ib_config held_cfg = *cfg;
    held_cfg.exclude_launch = true;
    ib__runner run;
    IB_TRY(ib__runner_init(&run, w, &held_cfg, err));
    double *d = malloc(2 * pairs * sizeof *d);
    ib_status st = d ? IB_OK : ib__fail(err, IB_ERR_NO_MEMORY, "out of host memory for the host-wait check");
    /* The runner's first run is never held: the plain one of each pair
     * comes first. */
    for (size_t i = 0; i < 2 * pairs && st == IB_OK; i++) {
        if (ib__cancelled(cfg->cancel)) st = ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
        double h;
        run.hold_off = i % 2 == 0;
        double *slot = &d[i % 2 == 0 ? i / 2 : pairs + i / 2];
        if (st == IB_OK) st = ib__runner_time_one(&run, slot, &h, err);
    }
    if (st == IB_OK) st = ib_stats_compute(d, pairs, &hw->plain);
    if (st == IB_OK) st = ib_stats_compute(d + pairs, pairs, &hw->held);
    free(d);
    ib__runner_release(&run);
    if (st != IB_OK) {
        *hw = (ib__host_wait){ .wait_ms = NAN };
        return st;
    }
    ib__stats_widen_to_resolution(&hw->plain, resolution_ms);
    ib__stats_widen_to_resolution(&hw->held, resolution_ms);
    bool waited = hw->plain.ci95_median[0] > hw->held.ci95_median[1];
    hw->wait_ms = waited ? hw->plain.p50 - hw->held.p50 : 0;
    hw->bound = hw->wait_ms > IB__HOST_BOUND_SHARE * hw->held.p50;
    return IB_OK;
}

/* After the timed runs; with exclude_launch the same pairs price the
 * launch overhead excluded. */
static ib_status check_host_wait(ib_workload *w, const ib_config *cfg, ib_latency_result *r, ib_error *err)
{
    ib__host_wait hw;
    ib_status st = ib__host_wait_pairs(w, cfg, HOST_WAIT_PAIRS, r->timer_resolution_ms, &hw, err);
    r->host_wait_plain = hw.plain;
    r->host_wait_held = hw.held;
    r->host_wait_ms = hw.wait_ms;
    r->host_bound = hw.bound;
    IB_TRY(st);
    if (cfg->exclude_launch) r->launch_overhead_ms = hw.plain.p50 - hw.held.p50;
    return IB_OK;
}

/* The check after the timed runs: with exclude_launch the result needs it
 * (the launch overhead it excluded); otherwise it is the host-bound
 * warning's, and a failure of its own (a run that waits for the GPU while
 * held, an interruption) leaves it undone without failing what was
 * measured. */
static ib_status after_timed_runs(ib_workload *w, const ib_config *cfg, bool check, ib_latency_result *r,
                                  ib_error *err)
{
    if (r->n == 0 || !(cfg->exclude_launch || check) || !ib__can_hold(w)) return IB_OK;
    if (cfg->exclude_launch) return check_host_wait(w, cfg, r, err);
    ib_error ignored;
    (void)check_host_wait(w, cfg, r, &ignored);
    /* The figure counts the host's part: say so when the GPU waited. */
    if (r->host_bound) r->warnings |= IB_WARN_HOST_BOUND;
    return IB_OK;
}

/* The host takes longer to enqueue a run than the device takes to run it,
 * and the run is not already replayed from a captured graph. */
static bool launch_bound(const ib_workload *w, const ib_latency_result *r)
{
    const ib_stats *p = r->has_device_timer ? &r->device : &r->host;
    return isfinite(r->launch_overhead_ms) && r->host_bound && r->launch_overhead_ms > p->p50 &&
           !ib__workload_can(w, IB_CAP_GRAPH_CAPTURE);
}

/* A setup whose figures move from one session to the next by more than
 * one session's interval (docs/measurements.md): an autotuning backend
 * (a convolution algorithm search) picks its kernels anew in each process,
 * and a launch-bound run times the host's state. */
static bool session_dependent(const ib_workload *w, const ib_latency_result *r)
{
    return ib__workload_can(w, IB_CAP_AUTOTUNED) || r->launch_bound;
}

ib_status ib__measure_latency(ib_workload *w, const ib_config *cfg, bool check_host_wait,
                              ib_latency_result *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    out->cold_host_ms = out->cold_device_ms = NAN;
    out->launch_overhead_ms = NAN;
    out->host_wait_ms = NAN;
    out->timer_resolution_ms = out->host_timer_resolution_ms = NAN;
    out->precision_target = cfg->precision;
    IB_FAIL_IF(!w, err, IB_ERR_INVALID_ARG, "no workload");
    IB_TRY(ib__config_validate(cfg, err));
    out->has_device_timer = ib__workload_can(w, IB_CAP_DEVICE_TIMING);
    ib__env_capture(&out->env, w);

    ib__runner run;
    IB_TRY(ib__runner_init(&run, w, cfg, err));
    ib__progress pr;
    ib__progress_init(&pr, cfg, w);
    ib__progress_step(&pr, 0, 0, NULL, w->info.batch);
    /* The counter's step and the idle power, learned while the device is
     * at rest: before the cold run. */
    ib__energy_meters em;
    ib__energy_meters_open(&em, w, cfg);

    ib__progress_phase(&pr, IB_PHASE_COLD_RUN, 1);
    ib_status st = ib__runner_time_one(&run, &out->cold_device_ms, &out->cold_host_ms, err);
    if (st == IB_OK)
        st = ib__warm_up(&run, cfg, &pr, &out->warmup_runs_done, &out->warmup_ms_spent, &out->warmup_steady,
                         err);
    if (st == IB_OK && !out->warmup_steady) out->warnings |= IB_WARN_NOT_STEADY;
    out->host_timer_resolution_ms = w->clock.resolution_ms;
    if (st == IB_OK) st = ib__runner_resolution_ms(&run, &out->timer_resolution_ms, err);
    /* GPU state is sampled over the timed runs: the "before" sample is the
     * state they start in, after warm-up (an idle GPU before the cold run is
     * at rest by design and says nothing about the measurement). */
    ib__gpu_sampler *sampler = st == IB_OK && cfg->sample_gpu_state && ib__workload_can(w, IB_CAP_CUDA_STREAM)
                                   ? ib__gpu_sampler_start(&out->env, w->device_id, IB__GPU_SAMPLE_PERIOD_MS)
                                   : NULL;
    ib__cpu_watch cpu;
    ib__cpu_watch_start(&cpu, &out->env);
    double pad_items = 0;
    if (st == IB_OK) st = sample_with_energy(&run, cfg, &pr, &em, out, &pad_items, err);
    if (cfg->sync) {
        /* A worker that failed still meets the others, who wait for it. */
        ib_status after = cfg->sync(cfg->sync_user, IB_SYNC_AFTER_TIMED);
        if (st == IB_OK) st = after;
    }
    out->warnings |= ib__cpu_watch_stop(&cpu, &out->env, w->info.device == IB_DEVICE_CPU);
    out->warnings |=
        ib__env_threads_warning(&out->env, ib__workload_threads(w), 0, w->info.device == IB_DEVICE_CPU);
    ib__runner_release(&run);

    summarize(out);
    if (st == IB_OK) st = after_timed_runs(w, cfg, check_host_wait, out, err);
    double sampler_t0_ms = ib__gpu_sampler_t0_ms(sampler);
    ib__gpu_sampler_stop(sampler);
    energy_figures(&em, st, pad_items, sampler_t0_ms, w, out);
    ib__energy_meters_close(&em);
    out->warnings |= ib__env_gpu_warnings(&out->env);
    out->launch_bound = out->n > 0 && launch_bound(w, out);
    if (out->n > 0 && session_dependent(w, out)) out->warnings |= IB_WARN_SESSION_DEPENDENT;
    if (st != IB_OK) {
        out->partial = true;
        out->stop_status = st;
    }
    return st;
}

ib_status ib_measure_latency(ib_workload *w, const ib_config *cfg, ib_latency_result *out, ib_error *err)
{
    return ib__measure_latency(w, cfg, true, out, err);
}

void ib_latency_result_free(ib_latency_result *r)
{
    if (!r) return;
    free(r->device_ms);
    free(r->host_ms);
    free(r->end_ms);
    r->device_ms = r->host_ms = r->end_ms = NULL;
    r->n = 0;
}
