/* The pitfalls measurement: the correct latency and, in the same process and
 * on the same session, what each classic timing mistake would have reported
 * (docs/pitfalls.md). The correct row is ib_measure_latency itself; the wrong
 * ways are each the smallest change to it that makes the mistake, so that
 * the difference between two rows is that mistake and nothing else. */
#include "core/energy.h"
#include "core/latency.h"
#include "core/pitfall_reading.h"
#include "core/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A single run "off" by more than this (percent of the median) is counted
 * in single_off_5pct. */
#define SINGLE_OFF_PCT 5.0
/* The rows that take runs of their own, for progress reports: the correct
 * one and the three wrong ways measured after it. */
#define PROGRESS_STEPS 5

static const struct {
    const char *name;
    ib__pitfall_texts why;
} row_texts[IB_PITFALL_COUNT] = {
    [IB_PITFALL_CORRECT] = { "correct",
                             { 0, "the reference: the device's own clock (the host's on a CPU), warmed up, "
                                  "data resident where the model runs, many runs" } },
    [IB_PITFALL_HOST_NO_SYNC] = { "host clock, no sync",
                                  { -1,
                                    "the run returns once the GPU work is queued: the host clock times the "
                                    "launch, not the inference",
                                    NULL,
                                    "launch-bound: the GPU finishes the work as fast as the host queues it, "
                                    "so the host clock reads the same; the mistake is hidden here, not "
                                    "absent (it shows once the work outlasts the launches, at larger "
                                    "batches)",
                                    NULL,
                                    "the host clock counts the launches, which the device's clock leaves out "
                                    "(--exclude-launch): the host, not the GPU, sets this figure" } },
    [IB_PITFALL_COPIES] = { "copies included",
                            { 1,
                              "host-to-device input and device-to-host output copies are counted as "
                              "inference",
                              NULL,
                              "the inputs and outputs are small: their copies are lost in the noise here "
                              "(they grow with the batch)",
                              NULL, NULL } },
    [IB_PITFALL_NO_WARMUP] = { "no warm-up",
                               { 1,
                                 "the first runs pay start-up costs (context, kernel selection, memory "
                                 "pools, lazy loading, clocks): they inflate the mean and the spread",
                                 "the first runs pay start-up costs (session, memory allocation, caches): "
                                 "they inflate the mean and the spread",
                                 "the cold start is one run among many: the median hardly moves, the mean "
                                 "does (the line below the table)",
                                 NULL, NULL } },
    [IB_PITFALL_SINGLE_SAMPLE] = { "single sample",
                                   { 0, "one run is one draw from a distribution: it can land anywhere in "
                                        "the spread" } },
    [IB_PITFALL_ZERO_INPUT] = { "zero-filled input",
                                { -1,
                                  "input values change the time: zeros switch fewer transistors (less power, "
                                  "higher GPU clocks) and take data-dependent shortcuts (sparse or "
                                  "early-exit paths) that real inputs do not",
                                  "input values change the time: zeros take data-dependent shortcuts (sparse "
                                  "or early-exit paths, no denormals) that real inputs do not (on a busy "
                                  "machine, other load between the two measurements can look the same)",
                                  "the input values change this model's time by nothing that shows beyond "
                                  "the noise: zeros are no shortcut for it",
                                  NULL, NULL } },
    [IB_PITFALL_TF32] = { "TF32 taken for fp32",
                          { -1,
                            "the runtime's default on GPUs with TF32 (compute capability 8.0+): float32 "
                            "convolutions and matrix products run with 10-bit mantissas; faster, and not the "
                            "fp32 the model is labelled with",
                            NULL,
                            "TF32 gains no time measurably here (few float32 matrix products, or "
                            "memory-bound), yet its outputs differ (the line below)",
                            NULL, NULL } },
};

/* The TF32 row when the correct row itself ran in TF32 (the runtime's
 * default): its figure is strict fp32's, what the label "fp32" promises,
 * so that its bar and its difference from the correct row tell the same
 * story (docs/pitfalls.md). */
static const char *const strict_fp32_name = "strict fp32 (TF32 off)";
static const ib__pitfall_texts strict_fp32_why = {
    1,
    "the correct row ran in TF32, the runtime's default (10-bit mantissas), not the fp32 the model is "
    "labelled with: this is what strict fp32 takes",
    NULL,
    "strict fp32 costs no time that shows beyond the noise here: the runtime's TF32 default gains nothing "
    "measurable on this model",
    NULL,
    NULL,
};

typedef ib_status (*run_fn)(ib_workload *w, ib_error *err);
/* Takes one sample of a method, in ms. */
typedef ib_status (*sample_fn)(ib_workload *w, void *ctx, double *ms, ib_error *err);

static void row_init(ib_pitfall_row *row, ib_pitfall kind)
{
    memset(row, 0, sizeof *row);
    row->kind = kind;
    row->name = row_texts[kind].name;
    row->why = row_texts[kind].why.effect_gpu;
    row->applies = true;
    row->error_ci95_pct[0] = row->error_ci95_pct[1] = NAN;
    row->error_pct = row->single_p5_pct = row->single_p95_pct = row->single_off_5pct = NAN;
    row->tf32_on_median_ms = row->tf32_off_median_ms = row->tf32_max_abs_error = row->tf32_max_rel_error =
        NAN;
}

static void row_fail(ib_pitfall_row *row, ib_status st, const char *message)
{
    row->status = st;
    ib__strlcpy(row->error, message && *message ? message : ib_status_str(st), sizeof row->error);
}

/* Which mistakes cannot be made here at all: on the CPU, or with a backend
 * whose inputs never live on the host or whose session cannot be opened
 * anew. A GPU run that cannot return early is a row that applies and failed
 * with IB_ERR_UNSUPPORTED instead: every GPU runtime can be used that way,
 * this backend just does not offer it. */
static void mark_applicability(ib_pitfalls_result *out, const ib_workload *w)
{
    bool device = ib__workload_can(w, IB_CAP_GPU);
    ib_pitfall_row *no_sync = &out->rows[IB_PITFALL_HOST_NO_SYNC];
    ib_pitfall_row *copies = &out->rows[IB_PITFALL_COPIES];
    ib_pitfall_row *cold = &out->rows[IB_PITFALL_NO_WARMUP];
    if (!device) {
        no_sync->applies = false;
        no_sync->not_applicable =
            "not a mistake on the CPU: a CPU run is synchronous, the host clock is the right clock";
        copies->applies = false;
        copies->not_applicable = "the data already lives in host memory: there is no copy to include";
    }
    if (no_sync->applies && !ib__workload_can(w, IB_CAP_ASYNC_RUN))
        row_fail(no_sync, IB_ERR_UNSUPPORTED,
                 "this workload's runs always wait for the device: it cannot return early");
    if (copies->applies && !ib__workload_can(w, IB_CAP_HOST_INPUT_RUN)) {
        copies->applies = false;
        copies->not_applicable = "this backend has no run from host memory (no IB_CAP_HOST_INPUT_RUN)";
    }
    if (!ib__workload_can(w, IB_CAP_REFILL_INPUTS))
        row_fail(&out->rows[IB_PITFALL_ZERO_INPUT], IB_ERR_UNSUPPORTED,
                 "this workload cannot refill its inputs");
    if (!ib__workload_can(w, IB_CAP_REOPEN)) {
        cold->applies = false;
        cold->not_applicable = "this backend cannot open a fresh session (no IB_CAP_REOPEN), so its cold "
                               "start cannot be repeated";
    }
    ib_pitfall_row *tf32 = &out->rows[IB_PITFALL_TF32];
    bool reduced = !strcmp(w->info.math, "fp16") || !strcmp(w->info.math, "bf16");
    if (!device) {
        tf32->applies = false;
        tf32->not_applicable = "the CPU has no TF32: float32 is float32 there";
    } else if (reduced) {
        tf32->applies = false;
        tf32->not_applicable =
            "the model runs in fp16/bf16 (converted by --math, or its own): TF32 is about float32 arithmetic";
    } else if (!w->ops->set_tf32) {
        tf32->applies = false;
        tf32->not_applicable = "this backend has no TF32 switch: its arithmetic is its own";
    }
}

/* The correct row's samples, against which every row is read. */
typedef struct correct_samples {
    const double *ms;
    size_t n;
    double median;
} correct_samples;

/* Statistics of what a method reported, its median against the correct
 * one, and the interval of that difference. */
static void row_summarize(ib_pitfall_row *row, const double *x, size_t n, const correct_samples *correct)
{
    if (n == 0) return;
    ib_stats_compute(x, n, &row->stats);
    row->error_pct = correct->median > 0 ? (row->stats.p50 / correct->median - 1.0) * 100.0 : NAN;
    row->reading =
        ib__pitfall_interval(correct->ms, correct->n, x, n, row->error_ci95_pct, &row->no_interval);
}

/* The spread of a single run taken as the answer, over the correct samples:
 * each run's error against their median. error_pct is the 95th percentile
 * of |error|: 95% of single runs land within +-error_pct of the median. */
static ib_status single_sample(ib_pitfall_row *row, const double *x, const ib_stats *st)
{
    row->stats = *st;
    double median = st->p50;
    if (!(median > 0)) return IB_OK; /* no relative error of a zero time */
    double *e = malloc(st->n * sizeof *e);
    if (!e) return IB_ERR_NO_MEMORY;
    size_t off = 0;
    for (size_t i = 0; i < st->n; i++) {
        e[i] = (x[i] / median - 1.0) * 100.0;
        if (fabs(e[i]) > SINGLE_OFF_PCT) off++;
    }
    ib__sort(e, st->n);
    row->single_p5_pct = ib_quantile_sorted(e, st->n, 0.05);
    row->single_p95_pct = ib_quantile_sorted(e, st->n, 0.95);
    row->single_off_5pct = (double)off / (double)st->n;
    for (size_t i = 0; i < st->n; i++) e[i] = fabs(e[i]);
    ib__sort(e, st->n);
    row->error_pct = ib_quantile_sorted(e, st->n, 0.95);
    free(e);
    return IB_OK;
}

/* The correct row: the latency measurement's own figures. */
static void fill_correct(ib_pitfall_row *row, const ib_latency_result *r)
{
    if (r->n == 0) return;
    row->stats = r->has_device_timer ? r->device : r->host;
    row->error_pct = 0;
}

/* ------------------------------------------------------------------------ */
/* The wrong ways                                                            */
/* ------------------------------------------------------------------------ */

/* What naive code does: the host clock read before and right after. */
static ib_status time_host(ib_workload *w, run_fn run, double *ms, ib_error *err)
{
    double t0 = ib__workload_now_ms(w);
    IB_TRY(run(w, err));
    *ms = ib__workload_now_ms(w) - t0;
    return IB_OK;
}

static ib_status sample_no_sync(ib_workload *w, void *ctx, double *ms, ib_error *err)
{
    (void)ctx;
    IB_TRY(time_host(w, w->ops->run, ms, err));
    /* Outside the timing: without it the runs would pile up on the stream
     * and the host would end up waiting inside a later run's timing. */
    return ib__workload_synchronize(w, err);
}

static ib_status sample_with_copies(ib_workload *w, void *ctx, double *ms, ib_error *err)
{
    (void)ctx;
    return time_host(w, w->ops->run_with_copies, ms, err);
}

/* The correct timer (device time when there is one), just no warm-up. */
static ib_status sample_correct_timer(ib_workload *w, void *ctx, double *ms, ib_error *err)
{
    (void)w;
    double device_ms, host_ms;
    IB_TRY(ib__runner_time_one(ctx, &device_ms, &host_ms, err));
    *ms = isnan(device_ms) ? host_ms : device_ms;
    return IB_OK;
}

/* Takes n samples into x; *done counts those taken, also on a failure. */
static ib_status sample_n(ib_workload *w, const ib_config *cfg, sample_fn one, void *ctx, double *x, size_t n,
                          size_t *done, ib_error *err)
{
    ib__progress pr;
    ib__progress_init(&pr, cfg, w);
    ib__progress_step(&pr, 0, 0, NULL, w->info.batch);
    ib__progress_phase(&pr, IB_PHASE_SAMPLING, (int64_t)n);
    for (*done = 0; *done < n; (*done)++) {
        if (ib__cancelled(cfg->cancel)) return ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
        IB_TRY(one(w, ctx, &x[*done], err));
        ib__progress_runs(&pr, (int64_t)*done + 1, NAN);
    }
    return IB_OK;
}

static ib_status measure_no_sync(ib_workload *w, const ib_config *cfg, double *x, size_t n, size_t *done,
                                 ib_error *err)
{
    IB_TRY(w->ops->set_run_sync(w, false, err));
    ib_status st = sample_n(w, cfg, sample_no_sync, NULL, x, n, done, err);
    /* Whatever happened, the workload is left as the other rows expect it. */
    ib_status back = w->ops->set_run_sync(w, true, st == IB_OK ? err : NULL);
    if (st != IB_OK) (void)ib__workload_synchronize(w, NULL);
    return st != IB_OK ? st : back;
}

static ib_status measure_copies(ib_workload *w, const ib_config *cfg, double *x, size_t n, size_t *done,
                                ib_error *err)
{
    return sample_n(w, cfg, sample_with_copies, NULL, x, n, done, err);
}

/* A fresh session, then the runs from the very first one. */
static ib_status measure_no_warmup(ib_workload *w, const ib_config *cfg, double *x, size_t n, size_t *done,
                                   ib_error *err)
{
    *done = 0;
    IB_TRY(w->ops->reopen(w, err));
    ib__runner run;
    IB_TRY(ib__runner_init(&run, w, cfg, err));
    ib_status st = sample_n(w, cfg, sample_correct_timer, &run, x, n, done, err);
    ib__runner_release(&run);
    return st;
}

/* The correct method, whole (warm-up included), on zero-filled inputs;
 * the inputs get their own values back whatever happens. */
static ib_status measure_zero_input(ib_workload *w, const ib_config *cfg, double *x, size_t n, size_t *done,
                                    ib_error *err)
{
    *done = 0;
    IB_TRY(w->ops->fill_inputs(w, true, err));
    ib_latency_result r;
    ib_status st = ib__measure_latency(w, cfg, false, &r, err);
    const double *ms = r.has_device_timer ? r.device_ms : r.host_ms;
    for (*done = 0; *done < n && *done < r.n; (*done)++) x[*done] = ms[*done];
    ib_latency_result_free(&r);
    ib_status back = w->ops->fill_inputs(w, false, st == IB_OK ? err : NULL);
    return st != IB_OK ? st : back;
}

typedef ib_status (*measure_fn)(ib_workload *w, const ib_config *cfg, double *x, size_t n, size_t *done,
                                ib_error *err);

/* Measures one wrong way into its row; a failure stays in the row. Returns
 * the row's status. */
static ib_status measure_row(ib_pitfall_row *row, measure_fn measure, ib_workload *w, const ib_config *cfg,
                             double *x, size_t n, const correct_samples *correct)
{
    if (!row->applies || row->status != IB_OK) return IB_OK;
    ib_error e = { { 0 } };
    size_t done = 0;
    ib_status st = measure(w, cfg, x, n, &done, &e);
    row_summarize(row, x, done, correct);
    if (st != IB_OK) row_fail(row, st, e.message);
    return st;
}

/* Stopped early: the rows not reached say so, and why. */
static void stop(ib_pitfalls_result *out, ib_status st, const char *why)
{
    out->partial = true;
    out->stop_status = st;
    for (int k = 0; k < IB_PITFALL_COUNT; k++) {
        ib_pitfall_row *row = &out->rows[k];
        bool reached = row->status != IB_OK || row->stats.n > 0;
        if (row->applies && !reached) row_fail(row, st, why);
    }
}

/* ------------------------------------------------------------------------ */
/* TF32 taken for fp32                                                       */
/* ------------------------------------------------------------------------ */

/* Every float output of the last run, read back (untimed). */
static ib_status read_outputs(ib_workload *w, ib__output_values *outs, ib_error *err)
{
    for (int i = 0; i < w->info.n_outputs; i++) {
        ib_error why;
        ib_status st = w->ops->read_output(w, (size_t)i, &outs[i], &why);
        if (st != IB_OK && st != IB_ERR_UNSUPPORTED) return ib__fail(err, st, "%s", why.message);
    }
    return IB_OK;
}

/* The correct method with TF32 on or off; its median and its outputs. */
static ib_status time_with_tf32(ib_workload *w, const ib_config *cfg, bool on, ib_latency_result *r,
                                ib__output_values *outs, ib_error *err)
{
    memset(r, 0, sizeof *r);
    IB_TRY(w->ops->set_tf32(w, on, err));
    IB_TRY(ib__measure_latency(w, cfg, false, r, err));
    if (!w->ops->read_output) return IB_OK;
    return read_outputs(w, outs, err);
}

/* The largest errors of TF32's outputs against TF32 off's, over all float
 * outputs (NaN when none could be read). */
static void tf32_errors(ib_pitfall_row *row, const ib__output_values *off, const ib__output_values *on, int n)
{
    row->tf32_max_abs_error = row->tf32_max_rel_error = NAN;
    for (int i = 0; i < n; i++) {
        if (!off[i].values || !on[i].values || off[i].n != on[i].n) continue;
        ib_output_accuracy a;
        memset(&a, 0, sizeof a);
        ib_accuracy_compare(off[i].values, on[i].values, off[i].n, off[i].rank, off[i].dims, &a);
        if (!(a.max_abs_error <= row->tf32_max_abs_error)) row->tf32_max_abs_error = a.max_abs_error;
        if (!(a.max_rel_error <= row->tf32_max_rel_error)) row->tf32_max_rel_error = a.max_rel_error;
    }
}

/* The row's figures: the arithmetic the correct row did not use, against
 * the correct median. */
static void tf32_figures(ib_pitfall_row *row, const ib_latency_result *off, const ib_latency_result *on,
                         bool reference_tf32, const correct_samples *correct)
{
    const ib_latency_result *shown = reference_tf32 ? off : on;
    row_summarize(row, shown->has_device_timer ? shown->device_ms : shown->host_ms, shown->n, correct);
    ib__strlcpy(row->math, reference_tf32 ? "fp32" : "tf32", sizeof row->math);
    if (reference_tf32) row->name = strict_fp32_name;
    row->tf32_on_median_ms = (on->has_device_timer ? on->device : on->host).p50;
    row->tf32_off_median_ms = (off->has_device_timer ? off->device : off->host).p50;
}

/* TF32 off, then on, then the workload's own setting back. A GPU without
 * TF32 makes the row not applicable. */
static ib_status measure_tf32(ib_pitfall_row *row, ib_workload *w, const ib_config *cfg,
                              const correct_samples *correct)
{
    if (!row->applies || row->status != IB_OK) return IB_OK;
    char math[sizeof w->info.math];
    bool math_default = w->info.math_default;
    ib__strlcpy(math, w->info.math, sizeof math);
    ib__output_values off_out[IB_MAX_TENSORS] = { 0 }, on_out[IB_MAX_TENSORS] = { 0 };
    ib_latency_result off, on;
    ib_error e = { { 0 } };
    ib_status st = time_with_tf32(w, cfg, false, &off, off_out, &e);
    if (st == IB_ERR_UNSUPPORTED && off.n == 0) {
        row->applies = false;
        row->not_applicable = "this GPU has no TF32 (compute capability below 8.0)";
        st = IB_OK;
        memset(&on, 0, sizeof on);
    } else if (st == IB_OK) {
        st = time_with_tf32(w, cfg, true, &on, on_out, &e);
    } else {
        memset(&on, 0, sizeof on);
    }
    if (st == IB_OK && row->applies) {
        tf32_figures(row, &off, &on, !strcmp(math, "tf32"), correct);
        tf32_errors(row, off_out, on_out, w->info.n_outputs);
    }
    if (st != IB_OK) row_fail(row, st, e.message);
    ib_latency_result_free(&off);
    ib_latency_result_free(&on);
    for (int i = 0; i < IB_MAX_TENSORS; i++)
        ib__output_values_free(&off_out[i]), ib__output_values_free(&on_out[i]);
    if (row->applies) {
        ib_error ignored;
        (void)w->ops->set_tf32(w, strcmp(math, "fp32") != 0, &ignored);
        ib__strlcpy(w->info.math, math, sizeof w->info.math);
        w->info.math_default = math_default;
    }
    return st;
}

static ib_status measure_wrong_ways(ib_pitfalls_result *out, ib_workload *w, const ib_config *cfg,
                                    ib__progress *pr, const correct_samples *correct, ib_error *err)
{
    static const struct {
        ib_pitfall kind;
        measure_fn measure;
    } order[] = {
        /* After the correct row, so warm; the cold start last, since it
         * throws the warm session away. */
        { IB_PITFALL_HOST_NO_SYNC, measure_no_sync },
        { IB_PITFALL_COPIES, measure_copies },
        { IB_PITFALL_ZERO_INPUT, measure_zero_input },
        { IB_PITFALL_NO_WARMUP, measure_no_warmup },
    };
    size_t n = correct->n;
    double *x = malloc(n * sizeof *x);
    IB_FAIL_IF(!x, err, IB_ERR_NO_MEMORY, "out of host memory for samples");
    ib_status st = IB_OK;
    for (size_t i = 0; i < sizeof order / sizeof order[0] && st == IB_OK; i++) {
        if (ib__cancelled(cfg->cancel)) {
            st = ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
            break;
        }
        ib_pitfall_row *row = &out->rows[order[i].kind];
        /* The correct row was step 1; the single sample is read off it. */
        ib__progress_step(pr, (int64_t)i + 2, PROGRESS_STEPS, row->name, w->info.batch);
        ib_config row_cfg = ib__progress_nested(pr, cfg);
        row_cfg.measure_energy = false; /* the energy row is the correct one's */
        if (measure_row(row, order[i].measure, w, &row_cfg, x, n, correct) == IB_ERR_INTERRUPTED)
            st = ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
    }
    free(x);
    if (st != IB_OK) return st;
    ib_pitfall_row *tf32 = &out->rows[IB_PITFALL_TF32];
    ib__progress_step(pr, PROGRESS_STEPS, PROGRESS_STEPS, tf32->name, w->info.batch);
    ib_config row_cfg = ib__progress_nested(pr, cfg);
    row_cfg.measure_energy = false;
    if (measure_tf32(tf32, w, &row_cfg, correct) == IB_ERR_INTERRUPTED)
        st = ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
    return st;
}

/* ------------------------------------------------------------------------ */
/* Energy                                                                    */
/* ------------------------------------------------------------------------ */

/* What nvidia-smi polling gives: a few power readings. */
#define ENERGY_FEW_POINTS 3

/* The counter read around a window of half its step, the ends where they
 * fall: the figure it gives. */
static ib_status short_window(ib_energy_pitfall *e, ib_workload *w, const ib_config *cfg, ib_error *err)
{
    ib__energy_meter m;
    if (!ib__energy_meter_open(&m, w)) {
        ib__strlcpy(e->not_applicable, m.note, sizeof e->not_applicable);
        e->applies = false;
        return IB_OK;
    }
    m.step_ms = e->correct.step_ms;
    ib__runner run;
    ib_status st = ib__runner_init(&run, w, cfg, err);
    double items = 0, d, h;
    if (st == IB_OK) st = ib__energy_begin(&m, NULL, NULL, err);
    double t0 = ib__workload_now_ms(w);
    e->short_window_ms = e->correct.step_ms / 2;
    while (st == IB_OK && ib__workload_now_ms(w) - t0 < e->short_window_ms) {
        st = ib__runner_time_one(&run, &d, &h, err);
        items += (double)w->info.batch;
    }
    if (st == IB_OK) st = ib__energy_end(&m, NULL, NULL, &d, err);
    if (st == IB_OK && !m.failed) {
        e->short_joules_per_item = m.window.joules / items;
        e->short_error_pct = 100 * (e->short_joules_per_item / e->correct.joules_per_item - 1);
    }
    ib__runner_release(&run);
    ib__energy_meter_close(&m);
    return st;
}

/* The energy row (docs/energy.md): the correct figure is the correct
 * row's; the wrong ways read the power samples taken during it, and a
 * short window of their own. */
static ib_status measure_energy(ib_energy_pitfall *e, ib_workload *w, const ib_config *cfg,
                                const ib_latency_result *correct, ib_error *err)
{
    *e = (ib_energy_pitfall){ .correct = correct->energy, .applies = true };
    e->sampled_joules_per_item = e->sampled_error_pct = NAN;
    e->short_window_ms = e->short_joules_per_item = e->short_error_pct = NAN;
    if (e->correct.source != IB_ENERGY_COUNTER || !isfinite(e->correct.step_ms)) {
        e->applies = false;
        char why[512];
        snprintf(why, sizeof why, "no counter figure to compare with: %s",
                 e->correct.source == IB_ENERGY_SAMPLED ? "the figure is itself integrated from power samples"
                                                        : e->correct.note);
        ib__strlcpy(e->not_applicable, why, sizeof e->not_applicable);
        return IB_OK;
    }
    e->sampled_joules_per_item =
        ib__energy_few_samples(correct->env.gpu_samples, correct->env.n_gpu_samples, ENERGY_FEW_POINTS,
                               e->correct.window_ms, e->correct.items, &e->sampled_points);
    if (e->sampled_points > 0)
        e->sampled_error_pct = 100 * (e->sampled_joules_per_item / e->correct.joules_per_item - 1);
    else
        snprintf(e->sampled_note, sizeof e->sampled_note,
                 "no power readings: NVML samples a GPU only (none here, or --no-gpu-state)");
    return short_window(e, w, cfg, err);
}

/* The correct row's samples outlive the latency result: a session's
 * document carries them, for the two-level interval across sessions. Out
 * of memory leaves none (the row's statistics stay). */
static void keep_correct_samples(ib_pitfalls_result *out, const ib_latency_result *correct)
{
    const double *x = correct->has_device_timer ? correct->device_ms : correct->host_ms;
    out->correct_ms = correct->n > 0 ? malloc(correct->n * sizeof *out->correct_ms) : NULL;
    if (!out->correct_ms) return;
    memcpy(out->correct_ms, x, correct->n * sizeof *x);
    out->n_correct = correct->n;
}

/* Each row's why, by how it reads on this device: a difference within
 * the noise is not explained as the mistake's effect. */
static void explain_rows(ib_pitfalls_result *out, bool gpu)
{
    for (int k = 0; k < IB_PITFALL_COUNT; k++) {
        ib_pitfall_row *row = &out->rows[k];
        bool strict = k == IB_PITFALL_TF32 && !strcmp(row->math, "fp32");
        row->why = ib__pitfall_why(strict ? &strict_fp32_why : &row_texts[k].why, gpu, row->reading);
    }
}

void ib_pitfalls_result_free(ib_pitfalls_result *r)
{
    if (!r) return;
    free(r->correct_ms);
    r->correct_ms = NULL;
    r->n_correct = 0;
}

ib_status ib_measure_pitfalls(ib_workload *w, const ib_config *cfg, ib_pitfalls_result *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < IB_PITFALL_COUNT; k++) row_init(&out->rows[k], (ib_pitfall)k);
    ib__energy_none(&out->energy.correct, "not measured");
    snprintf(out->energy.not_applicable, sizeof out->energy.not_applicable, "not measured");
    out->energy.sampled_joules_per_item = out->energy.sampled_error_pct = NAN;
    out->energy.short_window_ms = out->energy.short_joules_per_item = out->energy.short_error_pct = NAN;
    IB_FAIL_IF(!w || !cfg, err, IB_ERR_INVALID_ARG, "no workload or configuration");
    mark_applicability(out, w);
    explain_rows(out, ib__workload_can(w, IB_CAP_GPU)); /* the rows not reached keep these */
    ib__strlcpy(out->reference_math, w->info.math, sizeof out->reference_math);
    out->reference_math_default = w->info.math_default;

    ib__progress pr;
    ib__progress_init(&pr, cfg, w);
    ib__progress_step(&pr, 1, PROGRESS_STEPS, out->rows[IB_PITFALL_CORRECT].name, w->info.batch);
    ib_config correct_cfg = ib__progress_nested(&pr, cfg);
    ib_error e = { { 0 } };
    ib_latency_result correct;
    ib_status st = ib_measure_latency(w, &correct_cfg, &correct, &e);
    out->env = correct.env;
    out->warnings = correct.warnings;
    ib_pitfall_row *ref = &out->rows[IB_PITFALL_CORRECT];
    fill_correct(ref, &correct);
    if (st != IB_OK) {
        row_fail(ref, st, e.message);
        stop(out, st, st == IB_ERR_INTERRUPTED ? "interrupted" : "the correct measurement failed");
        ib_latency_result_free(&correct);
        return ib__fail(err, st, "%s", e.message);
    }
    keep_correct_samples(out, &correct);
    st = measure_energy(&out->energy, w, cfg, &correct, err);
    if (st != IB_OK) {
        stop(out, st, st == IB_ERR_INTERRUPTED ? "interrupted" : ib_status_str(st));
        ib_latency_result_free(&correct);
        return st;
    }
    ib_pitfall_row *single = &out->rows[IB_PITFALL_SINGLE_SAMPLE];
    if (single_sample(single, correct.has_device_timer ? correct.device_ms : correct.host_ms, &ref->stats) !=
        IB_OK)
        row_fail(single, IB_ERR_NO_MEMORY, "out of host memory");
    correct_samples samples = { correct.has_device_timer ? correct.device_ms : correct.host_ms, correct.n,
                                ref->stats.p50 };
    st = measure_wrong_ways(out, w, cfg, &pr, &samples, err);
    ib_latency_result_free(&correct);
    explain_rows(out, ib__workload_can(w, IB_CAP_GPU));
    if (st != IB_OK) stop(out, st, st == IB_ERR_INTERRUPTED ? "interrupted" : ib_status_str(st));
    return st;
}
