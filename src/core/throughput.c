/* The throughput measurement: the largest batch that fits (batch_search.c),
 * then the curve over candidate batches, each timed two ways, and the
 * answers read off the curve: peak, knee, best within a latency budget. */
#include "core/throughput.h"
#include "core/energy.h"
#include "core/latency.h"
#include "core/stats.h"
#include "env/env.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The longest time bound: a day (a CPU search may take hours). */
#define MAX_BOUND_MS 86400000.0

const char *ib_throughput_stop_name(ib_throughput_stop stop)
{
    switch (stop) {
    case IB_THROUGHPUT_STOP_DONE: return "done";
    case IB_THROUGHPUT_STOP_PAST_PEAK: return "past the peak";
    case IB_THROUGHPUT_STOP_TIME_BOUND: return "time bound";
    }
    return "?";
}

void ib_throughput_config_init(ib_throughput_config *cfg)
{
    /* The bound: a CPU curve past its peak, each batch doubling the time,
     * would otherwise run for hours (docs/throughput.md). */
    *cfg = (ib_throughput_config){ .max_batch = 4096, .knee_fraction = 0.95, .max_time_ms = 300000 };
    ib_config_init(&cfg->run);
    /* Each batch is warmed up on its own, and there are ten or more of
     * them: shorter than latency's, capped so a sweep stays minutes. */
    cfg->run.runs = 100;
    cfg->run.warmup_runs = 5;
    cfg->run.warmup_ms = 200;
    cfg->run.warmup_max_ms = 3000;
}

/* ------------------------------------------------------------------------ */
/* Validation and candidates                                                 */
/* ------------------------------------------------------------------------ */

static ib_status validate_batches(const ib_throughput_config *cfg, ib_error *err)
{
    IB_FAIL_IF(cfg->n_batches < 1 || cfg->n_batches > IB_MAX_POINTS, err, IB_ERR_INVALID_ARG,
               "a batch list holds 1 to %d batches", IB_MAX_POINTS);
    for (size_t i = 0; i < cfg->n_batches; i++) {
        int64_t b = cfg->batches[i];
        IB_FAIL_IF(b < 1 || b > IB__MAX_BATCH, err, IB_ERR_INVALID_ARG,
                   "batch %lld: a batch is between 1 and %lld", (long long)b, (long long)IB__MAX_BATCH);
        for (size_t j = 0; j < i; j++)
            IB_FAIL_IF(cfg->batches[j] == b, err, IB_ERR_INVALID_ARG, "batch %lld is listed twice",
                       (long long)b);
    }
    return IB_OK;
}

static ib_status validate(const ib_throughput_config *cfg, ib_error *err)
{
    IB_TRY(ib__config_validate(&cfg->run, err));
    IB_FAIL_IF(cfg->run.precision > 0, err, IB_ERR_INVALID_ARG,
               "throughput takes a fixed number of runs per batch: adaptive precision does not apply");
    IB_FAIL_IF(cfg->max_batch < 1 || cfg->max_batch > IB__MAX_BATCH, err, IB_ERR_INVALID_ARG,
               "max batch must be between 1 and %lld", (long long)IB__MAX_BATCH);
    IB_FAIL_IF(!(cfg->knee_fraction > 0 && cfg->knee_fraction <= 1), err, IB_ERR_INVALID_ARG,
               "the knee fraction must be in (0, 1]");
    IB_FAIL_IF(!(cfg->max_time_ms >= 0 && cfg->max_time_ms <= MAX_BOUND_MS), err, IB_ERR_INVALID_ARG,
               "the time bound must be between 0 (none) and %.0f ms", MAX_BOUND_MS);
    IB_FAIL_IF(!(cfg->latency_budget_ms >= 0 && cfg->latency_budget_ms <= IB__MAX_TIME_MS), err,
               IB_ERR_INVALID_ARG, "the latency budget must be between 0 (none) and %.0f ms",
               IB__MAX_TIME_MS);
    if (cfg->batches) IB_TRY(validate_batches(cfg, err));
    IB_FAIL_IF(cfg->from_top && cfg->batches, err, IB_ERR_INVALID_ARG,
               "from the top is a search: it takes no batch list");
    IB_FAIL_IF(cfg->from_top && cfg->latency_budget_ms > 0, err, IB_ERR_INVALID_ARG,
               "a latency budget needs the whole curve: it cannot be searched from the top");
    IB_FAIL_IF(
        cfg->items_only && cfg->latency_budget_ms > 0, err, IB_ERR_INVALID_ARG,
        "a latency budget needs each batch's runs timed one at a time, not the back-to-back figure alone");
    return IB_OK;
}

/* Powers of two up to the largest batch, and the largest itself: the curve
 * is read on a log scale, and the largest is where memory ends. From the
 * top, the same batches largest first. */
static size_t powers_of_two(int64_t largest, bool from_top, int64_t *cand)
{
    size_t n = 0;
    for (int64_t b = 1; b <= largest; b *= 2) cand[n++] = b;
    if (cand[n - 1] != largest) cand[n++] = largest;
    for (size_t i = 0; from_top && i < n / 2; i++) {
        int64_t b = cand[i];
        cand[i] = cand[n - 1 - i];
        cand[n - 1 - i] = b;
    }
    return n;
}

/* The explicit list, measured smallest first so that the curve reads in
 * order whatever order it was given in. */
static size_t sorted_copy(const int64_t *batches, size_t n, int64_t *cand)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && cand[j - 1] > batches[i]; j--) cand[j] = cand[j - 1];
        cand[j] = batches[i];
    }
    return n;
}

/* What the sweep carries from point to point. */
typedef struct sweep_state {
    ib_workload *w;
    const ib_throughput_config *cfg;
    double *ms; /* [cfg->run.runs] per-run timings of the point */
    ib__progress *pr;
    ib_throughput_result *r;
    ib__gpu_sampler *sampler; /* started after the first warm-up */
    ib__energy_meters energy; /* learned before the search */
    /* Each point's back-to-back runs on ib__now_ms's clock (points[i]). */
    double b2b_host_ms[IB_MAX_POINTS][2];
    double t0_ms;                   /* the start, on the workload's clock */
    double point_ms[IB_MAX_POINTS]; /* each point's time, in the order timed */
} sweep_state;

static ib_status time_probed(void *user, int64_t batch, double run_ms, ib_error *err);

/* Decides which batches to time; searches when nothing fixes them (the
 * growth's batches timed as the search finds they fit). */
static ib_status candidates(sweep_state *s, int64_t *cand, size_t *n, ib_error *err)
{
    ib_workload *w = s->w;
    const ib_throughput_config *cfg = s->cfg;
    ib_throughput_result *r = s->r;
    *n = 0;
    if (!ib__workload_can(w, IB_CAP_BATCH_DIM)) {
        for (size_t i = 0; cfg->batches && i < cfg->n_batches; i++)
            IB_FAIL_IF(cfg->batches[i] != w->info.batch, err, IB_ERR_UNSUPPORTED,
                       "the model has a fixed batch of %lld (no symbolic batch dimension): "
                       "batch %lld cannot be measured",
                       (long long)w->info.batch, (long long)cfg->batches[i]);
        cand[(*n)++] = w->info.batch;
        return IB_OK;
    }
    if (cfg->batches) {
        *n = sorted_copy(cfg->batches, cfg->n_batches, cand);
        return IB_OK;
    }
    r->searched = true;
    IB_TRY(
        ib__batch_search(w, cfg->max_batch, cfg->from_top, cfg->run.cancel, s->pr, time_probed, s, r, err));
    *n = powers_of_two(r->largest_fitting, cfg->from_top, cand);
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* One point of the curve                                                    */
/* ------------------------------------------------------------------------ */

/* The classic method: every run synchronized and timed alone. Its latency
 * distribution is what a latency budget is checked against. */
static ib_status time_per_run(ib__runner *run, ib__progress *pr, int64_t runs, ib_throughput_point *p,
                              double *ms, ib_error *err)
{
    double sum = 0;
    ib__progress_phase(pr, IB_PHASE_SAMPLING, runs);
    for (int64_t i = 0; i < runs; i++) {
        IB_FAIL_IF(ib__cancelled(run->cancel), err, IB_ERR_INTERRUPTED, "interrupted");
        double d, h;
        IB_TRY(ib__runner_time_one(run, &d, &h, err));
        ms[i] = isnan(d) ? h : d;
        sum += ms[i];
        ib__progress_runs(pr, i + 1, NAN);
    }
    IB_TRY(ib_stats_compute(ms, (size_t)runs, &p->latency_ms));
    p->items_per_s_sync = (double)runs * (double)p->batch / sum * 1000.0;
    return IB_OK;
}

/* The throughput figure: runs issued back-to-back under one timing, so the
 * host's gaps between runs (synchronization, launch) overlap device work
 * instead of being counted. */
static ib_status time_back_to_back(ib__runner *run, int64_t runs, ib_throughput_point *p, ib_error *err)
{
    double device_ms, host_ms;
    IB_TRY(ib__runner_time_back_to_back(run, runs, &device_ms, &host_ms, err));
    p->back_to_back_ms_per_run = device_ms / (double)runs;
    p->items_per_s = (double)runs * (double)p->batch / device_ms * 1000.0;
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* A point's energy                                                          */
/* ------------------------------------------------------------------------ */

/* A chunk of back-to-back runs lasts about this long: between chunks the
 * meter reads the counter, so that the window's ends are known to a chunk
 * (the host's wait at each chunk's end is a few microseconds of this). */
#define ENERGY_CHUNK_MS 2.0

typedef struct energy_chunk {
    ib__runner *run;
    int64_t runs; /* a chunk's */
    int64_t batch;
} energy_chunk;

static ib_status pad_chunk(void *ctx, double *items, ib_error *err)
{
    energy_chunk *c = ctx;
    double device_ms, host_ms;
    IB_TRY(ib__runner_time_back_to_back(c->run, c->runs, &device_ms, &host_ms, err));
    *items = (double)(c->runs * c->batch);
    return IB_OK;
}

/* The point's energy over a window of its own: chunks of back-to-back
 * runs from a counter change to a counter change, long enough for
 * IB__ENERGY_TARGET_BOUND (docs/energy.md). The runs' timed figure is not
 * touched: the host's polls between chunks are not in it. Without a
 * device counter, the back-to-back runs' window is kept for the sampled
 * power (sampled_energy, once the sampler has stopped). */
static ib_status time_energy(sweep_state *s, ib__runner *run, ib_throughput_point *p, ib_error *err)
{
    ib__energy_meters *em = &s->energy;
    const ib__energy_meter *m = &em->device;
    ib_energy cpu;
    if (!em->asked) {
        ib__energy_none(&p->energy, "%s", em->why_not);
        return IB_OK;
    }
    if (!m->open || m->failed) { /* the reason (the samples are the sampler's until it stops) */
        ib__energy_figure(m, 0, &p->energy);
        return IB_OK;
    }
    energy_chunk c = { .run = run, .batch = p->batch };
    c.runs = (int64_t)ceil(ENERGY_CHUNK_MS / p->back_to_back_ms_per_run);
    if (c.runs < 1) c.runs = 1;
    double chunk_ms = (double)c.runs * p->back_to_back_ms_per_run, items;
    ib__progress_phase(s->pr, IB_PHASE_BACK_TO_BACK, 0);
    IB_TRY(ib__energy_meters_window(em, pad_chunk, &c, chunk_ms, IB__ENERGY_TARGET_BOUND,
                                    IB__ENERGY_WINDOW_CAP_MS, s->cfg->run.cancel, &items, err));
    ib__energy_meters_figures(em, items, &s->r->env, NAN, &p->energy, &cpu);
    return IB_OK;
}

/* Without a device counter: each point's back-to-back window integrated
 * from the power samples (the sampler has stopped: they are complete). */
static void sampled_energy(sweep_state *s, double sampler_t0_ms)
{
    if (!s->energy.asked || s->energy.device.open || !isfinite(sampler_t0_ms)) return;
    for (size_t i = 0; i < s->r->n_points; i++) {
        ib_throughput_point *p = &s->r->points[i];
        const double *t = s->b2b_host_ms[i];
        if (p->status != IB_OK || !(t[1] > t[0])) continue;
        double items = (double)s->cfg->run.runs * (double)p->batch;
        ib__energy_sampled_figure(&s->r->env, sampler_t0_ms, t[0], t[1], items, s->energy.device.note,
                                  &p->energy);
    }
}

/* GPU state is sampled over the timed runs, as latency does: the "before"
 * sample is taken once the first batch is warm, not at rest. */
static void start_sampling(sweep_state *s)
{
    if (s->sampler || !s->cfg->run.sample_gpu_state || !ib__workload_can(s->w, IB_CAP_CUDA_STREAM)) return;
    s->sampler = ib__gpu_sampler_start(&s->r->env, s->w->device_id, IB__GPU_SAMPLE_PERIOD_MS);
}

/* first_done: the batch's first run was made already (a growth probe's,
 * p->first_run_ms its time). */
static ib_status time_point(sweep_state *s, ib__runner *run, ib_throughput_point *p, bool first_done,
                            ib_error *err)
{
    /* The first run at a new batch pays for the new shapes (a kernel
     * algorithm search, arena growth: seconds on a GPU). Kept apart, as
     * latency keeps its cold run, so that warm-up judges steadiness on warm
     * runs and its time cap is not spent on set-up. */
    if (!first_done) {
        double first_device_ms;
        ib__progress_phase(s->pr, IB_PHASE_COLD_RUN, 1);
        IB_TRY(ib__runner_time_one(run, &first_device_ms, &p->first_run_ms, err));
    }
    double warm_ms;
    IB_TRY(ib__warm_up(run, &s->cfg->run, s->pr, &p->warmup_runs, &warm_ms, &p->warmup_steady, err));
    if (!p->warmup_steady) s->r->warnings |= IB_WARN_NOT_STEADY;
    start_sampling(s);
    if (s->cfg->items_only) {
        p->items_per_s_sync = NAN;
    } else {
        IB_TRY(time_per_run(run, s->pr, s->cfg->run.runs, p, s->ms, err));
        s->r->warnings |= ib__sample_warnings(s->ms, &p->latency_ms);
        /* Measured per point: each has its own runner (and timer). */
        IB_TRY(ib__runner_resolution_ms(run, &s->r->timer_resolution_ms, err));
        ib__stats_widen_to_resolution(&p->latency_ms, s->r->timer_resolution_ms);
    }
    ib__progress_phase(s->pr, IB_PHASE_BACK_TO_BACK, s->cfg->run.runs);
    double *host = s->b2b_host_ms[p - s->r->points];
    host[0] = ib__now_ms();
    IB_TRY(time_back_to_back(run, s->cfg->run.runs, p, err));
    host[1] = ib__now_ms();
    return time_energy(s, run, p, err);
}

/* probed: bound at the point's batch by a probe, past its first run. */
static ib_status bind_and_time(sweep_state *s, ib_throughput_point *p, bool probed, ib_error *err)
{
    if (!probed) IB_TRY(ib_workload_set_batch(s->w, p->batch, err));
    /* A runner per point: its timer is made after a possible reopen. */
    ib__runner run;
    IB_TRY(ib__runner_init(&run, s->w, &s->cfg->run, err));
    ib_status st = time_point(s, &run, p, probed, err);
    ib__runner_release(&run);
    return st;
}

/* Measures one candidate, a new point of the curve; one that did not run
 * to the end has no figures (NaN), only its status. Out of memory is
 * recovered from (the point marked, the curve goes on); any other failure
 * is returned. */
static ib_status measure_point(sweep_state *s, ib_throughput_point *p, bool probed, ib_error *err)
{
    double t0 = ib__workload_now_ms(s->w);
    s->r->n_points++;
    p->status = bind_and_time(s, p, probed, err);
    if (p->status != IB_OK) {
        p->items_per_s = p->items_per_s_sync = p->back_to_back_ms_per_run = p->first_run_ms = NAN;
        ib__energy_none(&p->energy, "the batch did not run to the end: no energy figure");
    }
    ib_status st = p->status == IB_ERR_DEVICE_OOM ? ib__recover_from_oom(s->w, err) : p->status;
    double took_ms = ib__workload_now_ms(s->w) - t0;
    s->point_ms[s->r->n_points - 1] = took_ms;
    s->r->sweep_ms += took_ms;
    return st;
}

/* ------------------------------------------------------------------------ */
/* When to stop (docs/throughput.md, "When the search stops")                */
/* ------------------------------------------------------------------------ */

/* The time a point at batch would take, judged by the last two timed: a
 * point's time grows as a power of its batch, the power read off those two
 * and kept within [0, 1] (at most in proportion: the runs per batch are
 * fixed); in proportion when one point only was timed. */
static double estimate_ms(const sweep_state *s, int64_t batch)
{
    size_t n = s->r->n_points;
    const ib_throughput_point *last = &s->r->points[n - 1], *before = n >= 2 ? &s->r->points[n - 2] : NULL;
    double power = 1;
    if (before && before->batch != last->batch && s->point_ms[n - 2] > 0 && s->point_ms[n - 1] > 0) {
        power =
            log(s->point_ms[n - 1] / s->point_ms[n - 2]) / log((double)last->batch / (double)before->batch);
        power = fmin(fmax(power, 0), 1);
    }
    return s->point_ms[n - 1] * pow((double)batch / (double)last->batch, power);
}

/* Whether a point at batch may start within the time bound: the first
 * always does; a later one when it would end within the bound. Otherwise
 * the stop is recorded. */
static bool within_time_bound(sweep_state *s, int64_t batch)
{
    if (!(s->cfg->max_time_ms > 0) || s->r->n_points == 0) return true;
    double now = ib__workload_now_ms(s->w) - s->t0_ms, next = estimate_ms(s, batch);
    if (now + next <= s->cfg->max_time_ms) return true;
    s->r->stop = IB_THROUGHPUT_STOP_TIME_BOUND;
    s->r->stop_ms = now;
    s->r->stop_next_batch = batch;
    s->r->stop_next_ms = next;
    return false;
}

/* Whether the search timed batch already. */
static bool measured(const ib_throughput_result *r, int64_t batch)
{
    for (size_t i = 0; i < r->n_points; i++)
        if (r->points[i].batch == batch) return true;
    return false;
}

/* The progress line's whole estimate, after a point: the batches left[0..n)
 * still to time, each judged as within_time_bound judges the next, and no
 * more than the time bound leaves (then a cap). */
static void report_time_left(sweep_state *s, const int64_t *left, size_t n)
{
    double estimate = 0;
    for (size_t i = 0; i < n; i++)
        if (!measured(s->r, left[i])) estimate += estimate_ms(s, left[i]);
    double bound_left = s->cfg->max_time_ms > 0
                            ? fmax(s->cfg->max_time_ms - (ib__workload_now_ms(s->w) - s->t0_ms), 0)
                            : INFINITY;
    ib__progress_time_left(s->pr, fmin(estimate, bound_left), estimate > bound_left);
}

/* After a growth point at batch: the growth's batches left, doubling up to
 * max_batch (where memory ends is not known yet). */
static void report_growth_left(sweep_state *s, int64_t batch)
{
    int64_t left[64];
    size_t n = 0;
    for (int64_t b = batch; b < s->cfg->max_batch && n < 64;)
        left[n++] = b = b > s->cfg->max_batch / 2 ? s->cfg->max_batch : 2 * b;
    report_time_left(s, left, n);
}

/* A point's rate interval [lo, hi]: its batch over its per-run median's
 * 95% CI, as inputs/s. The back-to-back figure is one timing, with no
 * interval of its own; the per-run median's is robust to a stray slow
 * run. */
static void rate_interval(const ib_throughput_point *p, double *lo, double *hi)
{
    *lo = (double)p->batch * 1000.0 / p->latency_ms.ci95_median[1];
    *hi = (double)p->batch * 1000.0 / p->latency_ms.ci95_median[0];
}

/* Whether point i is clearly below point peak: its per-run rate's interval
 * wholly under the knee fraction of the lower end of the peak's, and its
 * back-to-back figure under the knee fraction of the peak's too. So past
 * the peak, not on its plateau within noise. */
static bool clearly_below(const sweep_state *s, size_t i, size_t peak)
{
    const ib_throughput_point *p = &s->r->points[i], *top = &s->r->points[peak];
    double lo, hi, top_lo, top_hi, f = s->cfg->knee_fraction;
    rate_interval(p, &lo, &hi);
    rate_interval(top, &top_lo, &top_hi);
    return hi < f * top_lo && p->items_per_s < f * top->items_per_s;
}

/* The growth's rule: the last two batches timed both come after the peak
 * so far (the most inputs/s back-to-back, as the result's peak) and are
 * both clearly below it. A curve that
 * rises, or stays on its plateau within the knee's band, never meets it.
 * Needs the per-run intervals (not items_only). */
static bool past_the_peak(const sweep_state *s)
{
    const ib_throughput_result *r = s->r;
    size_t n = r->n_points, peak = 0;
    if (s->cfg->items_only || n < 3) return false;
    for (size_t i = 0; i < n; i++) {
        if (r->points[i].status != IB_OK) return false; /* a gap: not a clear curve */
        if (r->points[i].items_per_s > r->points[peak].items_per_s) peak = i;
    }
    return peak < n - 2 && clearly_below(s, n - 2, peak) && clearly_below(s, n - 1, peak);
}

/* A growth probe that fit (the search's callback): its batch timed at once. */
static ib_status time_probed(void *user, int64_t batch, double run_ms, ib_error *err)
{
    sweep_state *s = user;
    ib_throughput_point *p = &s->r->points[s->r->n_points];
    *p = (ib_throughput_point){ .batch = batch, .first_run_ms = run_ms };
    ib__progress_step(s->pr, (int64_t)s->r->n_points + 1, 0, "candidate", batch);
    IB_TRY(measure_point(s, p, true, err));
    report_growth_left(s, batch);
    if (batch == s->cfg->max_batch) return IB_OK; /* the growth ends here anyway */
    /* The growth's next batch: twice this one, max_batch at most. */
    int64_t next = batch > s->cfg->max_batch / 2 ? s->cfg->max_batch : 2 * batch;
    if (past_the_peak(s)) {
        s->r->stop = IB_THROUGHPUT_STOP_PAST_PEAK;
        s->r->stop_ms = ib__workload_now_ms(s->w) - s->t0_ms;
        s->r->stop_next_batch = next;
        return IB__SEARCH_ENOUGH;
    }
    return within_time_bound(s, next) ? IB_OK : IB__SEARCH_ENOUGH;
}

/* From the top: whether the point just timed lies below the knee fraction
 * of the best one so far, past the plateau (the slope below it is not
 * timed). */
static bool below_the_plateau(const sweep_state *s)
{
    const ib_throughput_result *r = s->r;
    const ib_throughput_point *last = &r->points[r->n_points - 1];
    if (!s->cfg->from_top || last->status != IB_OK) return false;
    double best = 0;
    for (size_t i = 0; i < r->n_points; i++)
        if (r->points[i].status == IB_OK) best = fmax(best, r->points[i].items_per_s);
    return last->items_per_s < s->cfg->knee_fraction * best;
}

/* Times every candidate not timed by the search yet (from the top, down
 * to the first below the plateau). A batch that runs out of memory here
 * (the arena fragmented since the search, or a different run path) is
 * marked and the sweep goes on after recovery; anything else stops it. */
static ib_status sweep(sweep_state *s, const int64_t *cand, size_t n, ib_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (measured(s->r, cand[i])) continue;
        IB_FAIL_IF(ib__cancelled(s->cfg->run.cancel), err, IB_ERR_INTERRUPTED, "interrupted");
        if (!within_time_bound(s, cand[i])) break;
        ib_throughput_point *p = &s->r->points[s->r->n_points];
        *p = (ib_throughput_point){ .batch = cand[i] };
        ib__progress_step(s->pr, (int64_t)i + 1, (int64_t)n, "candidate", cand[i]);
        IB_TRY(measure_point(s, p, false, err));
        if (below_the_plateau(s)) break;
        report_time_left(s, cand + i + 1, n - i - 1);
    }
    return IB_OK;
}

/* The curve reads smallest batch first, however it was timed. */
static void in_batch_order(ib_throughput_result *r)
{
    for (size_t i = 0; i + 1 < r->n_points; i++)
        for (size_t j = i + 1; j < r->n_points; j++)
            if (r->points[j].batch < r->points[i].batch) {
                ib_throughput_point p = r->points[i];
                r->points[i] = r->points[j];
                r->points[j] = p;
            }
}

/* ------------------------------------------------------------------------ */
/* The answers                                                               */
/* ------------------------------------------------------------------------ */

static bool usable(const ib_throughput_point *p) { return p->status == IB_OK; }

static void choose_peak_and_knee(ib_throughput_result *r, double knee_fraction)
{
    r->peak = r->knee = -1;
    for (size_t i = 0; i < r->n_points; i++)
        if (usable(&r->points[i]) &&
            (r->peak < 0 || r->points[i].items_per_s > r->points[r->peak].items_per_s))
            r->peak = (int)i;
    if (r->peak < 0) return;
    double bar = knee_fraction * r->points[r->peak].items_per_s;
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_throughput_point *p = &r->points[i];
        if (usable(p) && p->items_per_s >= bar && (r->knee < 0 || p->batch < r->points[r->knee].batch))
            r->knee = (int)i;
    }
}

/* The most inputs per joule: not always the fastest batch. */
static void choose_most_efficient(ib_throughput_result *r)
{
    r->most_efficient = -1;
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_throughput_point *p = &r->points[i];
        if (usable(p) && p->energy.source != IB_ENERGY_NONE &&
            (r->most_efficient < 0 ||
             p->energy.items_per_joule > r->points[r->most_efficient].energy.items_per_joule))
            r->most_efficient = (int)i;
    }
}

static void choose_within_budget(ib_throughput_result *r)
{
    r->best_within_budget = -1;
    if (!(r->latency_budget_ms > 0)) return;
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_throughput_point *p = &r->points[i];
        if (usable(p) && p->latency_ms.p99 <= r->latency_budget_ms &&
            (r->best_within_budget < 0 || p->items_per_s > r->points[r->best_within_budget].items_per_s))
            r->best_within_budget = (int)i;
    }
}

/* The verdict once the sweep completed: no point at all, or a budget that
 * no point meets, is the answer's failure. */
static ib_status verdict(const ib_throughput_result *r, ib_error *err)
{
    IB_FAIL_IF(r->peak < 0, err, IB_ERR_DEVICE_OOM,
               "no batch could be measured: every candidate ran out of device memory");
    if (r->latency_budget_ms > 0 && r->best_within_budget < 0) {
        const ib_throughput_point *fastest = NULL;
        for (size_t i = 0; i < r->n_points; i++)
            if (usable(&r->points[i]) && (!fastest || r->points[i].latency_ms.p99 < fastest->latency_ms.p99))
                fastest = &r->points[i];
        return ib__fail(err, IB_ERR_NOT_MET,
                        "no batch meets the latency budget of %g ms "
                        "(the lowest p99 is %.4g ms, at batch %lld)",
                        r->latency_budget_ms, fastest->latency_ms.p99, (long long)fastest->batch);
    }
    return IB_OK;
}

ib_status ib_measure_throughput(ib_workload *w, const ib_throughput_config *cfg, ib_throughput_result *out,
                                ib_error *err)
{
    memset(out, 0, sizeof *out);
    out->peak = out->knee = out->best_within_budget = out->most_efficient = -1;
    out->timer_resolution_ms = NAN;
    IB_FAIL_IF(!w || !cfg, err, IB_ERR_INVALID_ARG, "no workload or no configuration");
    IB_TRY(validate(cfg, err));
    out->latency_budget_ms = cfg->latency_budget_ms;
    out->max_time_ms = cfg->max_time_ms;
    out->knee_fraction = cfg->knee_fraction;
    ib__env_capture(&out->env, w);
    int64_t cand[IB_MAX_POINTS];
    size_t n_cand;
    ib__progress pr;
    ib__progress_init(&pr, &cfg->run, w);
    if (cfg->max_time_ms > 0) ib__progress_time_left(&pr, cfg->max_time_ms, true); /* nothing timed yet */
    sweep_state s = { .w = w,
                      .cfg = cfg,
                      .pr = &pr,
                      .r = out,
                      .ms = malloc((size_t)cfg->run.runs * sizeof(double)),
                      .t0_ms = ib__workload_now_ms(w) };
    IB_FAIL_IF(!s.ms, err, IB_ERR_NO_MEMORY, "out of host memory for samples");
    /* The counter's step and the idle power, before any batch runs. */
    ib__energy_meters_open(&s.energy, w, &cfg->run);
    ib__cpu_watch cpu;
    ib__cpu_watch_start(&cpu, &out->env);
    ib_status st = candidates(&s, cand, &n_cand, err);
    if (st == IB_OK && out->stop != IB_THROUGHPUT_STOP_TIME_BOUND) st = sweep(&s, cand, n_cand, err);
    double sampler_t0_ms = ib__gpu_sampler_t0_ms(s.sampler);
    ib__gpu_sampler_stop(s.sampler);
    sampled_energy(&s, sampler_t0_ms);
    ib__energy_meters_close(&s.energy);
    in_batch_order(out);
    free(s.ms);
    out->warnings |= ib__cpu_watch_stop(&cpu, &out->env, w->info.device == IB_DEVICE_CPU);
    out->warnings |=
        ib__env_threads_warning(&out->env, ib__workload_threads(w), 0, w->info.device == IB_DEVICE_CPU);
    out->warnings |= ib__env_gpu_warnings(&out->env);
    /* An autotuned backend (an exhaustive algorithm search) picks each batch's
     * kernels anew in every process: one session's curve may not be the
     * next one's. */
    if (out->n_points > 0 && ib__workload_can(w, IB_CAP_AUTOTUNED))
        out->warnings |= IB_WARN_SESSION_DEPENDENT;

    choose_peak_and_knee(out, cfg->knee_fraction);
    choose_within_budget(out);
    choose_most_efficient(out);
    if (st != IB_OK) {
        out->partial = true;
        out->stop_status = st;
        return st;
    }
    /* Stopped by the bound: what was measured stands, marked partial, and
     * the answers are those of the batches timed (docs/cli.md: a time
     * bound's result exits 0). */
    out->partial = out->stop == IB_THROUGHPUT_STOP_TIME_BOUND;
    return verdict(out, err);
}
