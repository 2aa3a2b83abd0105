/* inferbench best: the fastest configuration that stays accurate. The
 * program lists the candidates and opens each through a callback; this
 * file races them (docs/best.md) with the measurements that exist: short
 * screening latencies whose medians are compared by the bootstrap of
 * compare.c (a candidate leaves when it is confidently slower than the
 * leader), the finalists measured by the full latency rule, the batch
 * searched once by the throughput search, and the other candidates timed
 * at that batch. A candidate that fails the accuracy gate is timed once
 * and never wins. A generative model's candidates run the same latency
 * race, each measurement the generation method's (best_gen.c), one TPOT
 * or TTFT value a run. */
#include "workload/workload.h"
#include "core/best.h"
#include "core/compare.h"
#include "core/energy.h"
#include "core/latency.h"
#include "core/progress.h"
#include "core/sessions.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ib_best_config_init(ib_best_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    ib_config_init(&cfg->latency);
    ib_throughput_config_init(&cfg->throughput);
    cfg->throughput.max_time_ms = 0; /* each step has its own bound: step_max_ms */
    cfg->screen_runs = 30;
    cfg->rounds = 3;
    cfg->finalists = 3;
    cfg->margin = 0.02;
    cfg->min_cosine = IB_BEST_DEFAULT_MIN_COSINE;
    cfg->far_factor = 4;
    cfg->step_max_ms = 300000;
}

const char *ib_best_stage_name(ib_best_stage stage)
{
    switch (stage) {
    case IB_BEST_NOT_TRIED: return "not tried";
    case IB_BEST_SKIPPED: return "skipped";
    case IB_BEST_INACCURATE: return "inaccurate";
    case IB_BEST_FAILED: return "failed";
    case IB_BEST_DROPPED: return "dropped";
    case IB_BEST_FINALIST: return "finalist";
    case IB_BEST_WINNER: return "winner";
    case IB_BEST_MERGED: return "merged";
    case IB_BEST_NOT_MEASURED: return "not measured";
    }
    return "?";
}

const char *ib_best_step_name(ib_best_step step)
{
    switch (step) {
    case IB_BEST_STEP_OPEN: return "open";
    case IB_BEST_STEP_ACCURACY: return "accuracy";
    case IB_BEST_STEP_SCREEN: return "screen";
    case IB_BEST_STEP_LATENCY_FINAL: return "latency_final";
    case IB_BEST_STEP_BATCH_SEARCH: return "batch_search";
    case IB_BEST_STEP_PEAK_SCREEN: return "peak_screen";
    case IB_BEST_STEP_THROUGHPUT_FINAL: return "throughput_final";
    case IB_BEST_STEPS: break;
    }
    return "?";
}

/* What the race carries from step to step. */
typedef struct race {
    const ib_best_config *cfg;
    ib_best_result *r;
    ib_workload *w[IB_BEST_MAX_CANDIDATES]; /* open during the latency race */
    /* A generative model's race (gen set): each row's model, open only
     * while it is measured (its weights are large), and what the
     * generation side keeps (best_gen.c). */
    const ib_best_gen *gen;
    ib_gen *g[IB_BEST_MAX_CANDIDATES];
    ib__best_gen_rows *gr;
    double *ms[IB_BEST_MAX_CANDIDATES]; /* a row's latency samples: its
                                           screening runs pooled, then
                                           its final ones */
    size_t n_ms[IB_BEST_MAX_CANDIDATES];
    ib_throughput_result *tr; /* scratch, one at a time */
    ib__progress pr;
    /* finals in sessions: each finalist's sessions that measured */
    ib_session_sample *sessions[IB_BEST_MAX_CANDIDATES];
    /* The measurement in flight, watched for its step's time bound: its
     * workload's clock, when it started and the time its step has left;
     * stop is the cancel flag it is given (raised by the bound or by the
     * caller's own flag). */
    volatile int stop;
    const ib__clock *watch_clock;
    double watch_t0_ms, watch_left_ms;
    ib_progress_fn forward;
    void *forward_user;
    bool energy_checked; /* the energy objective's counter was found */
} race;

static bool by_energy(const race *s) { return s->cfg->objective == IB_BEST_OBJECTIVE_ENERGY; }

/* The energy objective needs an energy counter: asked of the first
 * candidate that opens (every candidate runs on the same device). */
static ib_status check_energy(race *s, ib_workload *w, ib_error *err)
{
    if (!by_energy(s) || s->energy_checked || !w) return IB_OK;
    ib__energy_meter m;
    bool ok = ib__energy_meter_open(&m, w);
    ib__energy_meter_close(&m);
    IB_FAIL_IF(!ok, err, IB_ERR_UNSUPPORTED, "the energy objective ranks by inputs per joule, and %s",
               m.note);
    s->energy_checked = true;
    return IB_OK;
}

/* A generative model's race: one process (its finals are not sessions),
 * ranked by time (energy is not read by the generation method here). */
static ib_status validate_gen(const ib_best_config *cfg, const ib_best_gen *gen, ib_error *err)
{
    IB_FAIL_IF(!gen->open, err, IB_ERR_INVALID_ARG, "best: no open callback for the generative model");
    IB_FAIL_IF(gen->figure != IB_BEST_GEN_TPOT && gen->figure != IB_BEST_GEN_TTFT, err, IB_ERR_INVALID_ARG,
               "best: a generative model is ranked by its TPOT or its TTFT");
    IB_FAIL_IF(cfg->sessions >= 2, err, IB_ERR_INVALID_ARG,
               "best: a generative model's race measures in one process (measure its winner with generate "
               "--sessions N)");
    IB_FAIL_IF(cfg->objective != IB_BEST_OBJECTIVE_TIME, err, IB_ERR_INVALID_ARG,
               "best: a generative model is ranked by time (its TPOT or TTFT), not by energy");
    return IB_OK;
}

static ib_status validate(const ib_best_config *cfg, const ib_best_gen *gen, ib_error *err)
{
    IB_FAIL_IF(cfg->n_candidates < 1 || cfg->n_candidates > IB_BEST_MAX_CANDIDATES, err, IB_ERR_INVALID_ARG,
               "best: 1 to %d candidates", IB_BEST_MAX_CANDIDATES);
    IB_FAIL_IF(!cfg->labels || (!gen && !cfg->open), err, IB_ERR_INVALID_ARG,
               "best: no labels or no open callback");
    if (gen) IB_TRY(validate_gen(cfg, gen, err));
    IB_FAIL_IF(cfg->screen_runs < IB_COMPARE_MIN_SAMPLES || cfg->screen_runs > 100000, err,
               IB_ERR_INVALID_ARG, "best: screening runs must be between %d and 100000",
               IB_COMPARE_MIN_SAMPLES);
    IB_FAIL_IF(cfg->rounds < 1 || cfg->rounds > 8, err, IB_ERR_INVALID_ARG, "best: 1 to 8 screening rounds");
    IB_FAIL_IF(cfg->finalists < 1, err, IB_ERR_INVALID_ARG, "best: at least one finalist");
    IB_FAIL_IF(!(cfg->margin >= 0 && cfg->margin < 1), err, IB_ERR_INVALID_ARG, "best: margin in [0, 1)");
    IB_FAIL_IF(!(cfg->min_cosine >= -1 && cfg->min_cosine <= 1), err, IB_ERR_INVALID_ARG,
               "best: the cosine gate is in [-1, 1]");
    IB_FAIL_IF(cfg->sessions > IB_SESSIONS_MAX, err, IB_ERR_INVALID_ARG, "best: at most %d sessions",
               IB_SESSIONS_MAX);
    IB_FAIL_IF(cfg->sessions >= 2 && !cfg->measure_session, err, IB_ERR_INVALID_ARG,
               "best: sessions need a measure_session callback");
    IB_FAIL_IF(cfg->sessions >= 2 && cfg->exhaustive, err, IB_ERR_INVALID_ARG,
               "best: the exhaustive sweep measures in one session");
    IB_FAIL_IF(!(cfg->far_factor == 0 || (cfg->far_factor >= 1 && cfg->far_factor <= 1e6)), err,
               IB_ERR_INVALID_ARG, "best: the far-behind factor is 0 (off) or in [1, 1e6]");
    IB_FAIL_IF(!(cfg->step_max_ms >= 0 && cfg->step_max_ms <= IB__MAX_TIME_MS * 100), err, IB_ERR_INVALID_ARG,
               "best: a step's time bound is 0 (none) or up to %.0f ms", IB__MAX_TIME_MS * 100);
    IB_FAIL_IF(cfg->sessions >= 2 && cfg->objective == IB_BEST_OBJECTIVE_ENERGY, err, IB_ERR_INVALID_ARG,
               "best: the energy objective reads the finals' energy in this process, not in sessions");
    IB_FAIL_IF(cfg->objective != IB_BEST_OBJECTIVE_TIME && cfg->objective != IB_BEST_OBJECTIVE_ENERGY, err,
               IB_ERR_INVALID_ARG, "best: an unknown objective");
    IB_TRY(ib__config_validate(&cfg->latency, err));
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* Opening and the accuracy gate                                             */
/* ------------------------------------------------------------------------ */

/* Whether acc passes: the tolerance on the max absolute error when there
 * is one, else the cosine similarity of every compared output (NaN fails:
 * a non-finite output is never accurate). why says what failed. */
static bool accuracy_check(const ib_accuracy *acc, double min_cosine, char *why, size_t cap)
{
    if (!acc->measured) return true; /* fp32: the reference itself */
    for (int i = 0; i < acc->n_outputs; i++) {
        const ib_output_accuracy *o = &acc->outputs[i];
        if (acc->tolerance > 0 && o->over_tolerance) {
            snprintf(why, cap, "accuracy: output '%s' max abs error %.3g is over the tolerance %g", o->name,
                     o->max_abs_error, acc->tolerance);
            return false;
        }
        if (acc->tolerance <= 0 && o->compared && !(o->cosine >= min_cosine)) {
            snprintf(why, cap, "accuracy: output '%s' cosine similarity %.6g is below %g", o->name, o->cosine,
                     min_cosine);
            return false;
        }
    }
    return true;
}

/* accuracy_check into out, which may lie in the same row as acc. */
static bool accuracy_ok(const ib_accuracy *acc, double min_cosine, char *out, size_t cap)
{
    char why[256];
    bool ok = accuracy_check(acc, min_cosine, why, sizeof why);
    if (!ok) ib__strlcpy(out, why, cap);
    return ok;
}

/* Measuring time of row i in `step` (its workload's clock): the row's ms
 * is the sum of these. */
static void count_measuring(ib_best_row *row, ib_best_step step, double ms)
{
    row->ms += ms;
    row->step_ms[step] += ms;
}

/* ------------------------------------------------------------------------ */
/* Each step's time bound                                                    */
/* ------------------------------------------------------------------------ */

static const char *step_words(ib_best_step step)
{
    switch (step) {
    case IB_BEST_STEP_SCREEN: return "the screening";
    case IB_BEST_STEP_LATENCY_FINAL: return "the latency finals";
    case IB_BEST_STEP_BATCH_SEARCH: return "the batch search";
    case IB_BEST_STEP_PEAK_SCREEN: return "the screening at the peak";
    case IB_BEST_STEP_THROUGHPUT_FINAL: return "the throughput finals";
    default: return "the step";
    }
}

/* The time step has left under the bound (INFINITY: none, or the sweep,
 * which measures everything by design). */
static double step_left_ms(const race *s, ib_best_step step)
{
    if (s->cfg->step_max_ms <= 0 || s->cfg->exhaustive) return INFINITY;
    double spent = 0;
    for (size_t i = 0; i < s->r->n_rows; i++) spent += s->r->rows[i].step_ms[step];
    return s->cfg->step_max_ms - spent;
}

/* "the throughput finals reached their time bound (300 s)": why a row's
 * measurement in step was cut or not made. */
static void bound_why(const race *s, ib_best_step step, const char *lead, char *why, size_t cap)
{
    char text[256];
    snprintf(text, sizeof text, "%s%s%s reached the step's time bound (%.4g s, --step-max-ms)", lead,
             lead[0] ? " " : "", step_words(step), s->cfg->step_max_ms / 1e3);
    ib__strlcpy(why, text, cap);
}

static double now_ms(const ib__clock *c) { return c->now_ms(c->ctx); }

/* Whether the caller asked to stop (not the bound). */
static bool user_stop(const race *s) { return ib__cancelled(s->cfg->latency.cancel); }

/* A nested measurement's progress reports (between runs, at least at each
 * phase's start and every IB_PROGRESS_PERIOD_MS of its clock) are where the
 * bound is checked: past it, or once the caller's flag is raised, the
 * measurement's cancel flag goes up and it stops after the run in flight. */
static void watch(const ib_progress *p, void *user)
{
    race *s = user;
    if (user_stop(s) || now_ms(s->watch_clock) - s->watch_t0_ms >= s->watch_left_ms) s->stop = 1;
    if (s->forward) s->forward(p, s->forward_user);
}

/* c for a measurement on clock in step, watched for the bound; false
 * (nothing to measure) when the step has no time left. */
static bool watched(race *s, const ib__clock *clock, ib_best_step step, const ib_config *c, ib_config *out)
{
    double left = step_left_ms(s, step);
    if (left <= 0) {
        s->r->steps_bounded |= 1u << step;
        return false;
    }
    *out = ib__progress_nested(&s->pr, c);
    s->forward = out->progress;
    s->forward_user = out->progress_user;
    out->progress = watch;
    out->progress_user = s;
    s->stop = user_stop(s);
    out->cancel = &s->stop;
    s->watch_clock = clock;
    s->watch_left_ms = left;
    s->watch_t0_ms = now_ms(clock);
    return true;
}

/* A measurement that stopped as interrupted: the caller's doing (true:
 * stop the search), or the bound's (the step is over: false). */
static bool interrupted_by_user(race *s, ib_best_step step)
{
    if (user_stop(s)) return true;
    s->r->steps_bounded |= 1u << step;
    return false;
}

/* Closing a session is part of its opening's cost (a device session
 * gives its memory back), read on the host clock. */
static void close_row(race *s, size_t i)
{
    if (!s->w[i] && !s->g[i]) return;
    double t0 = ib__now_ms();
    ib_workload_destroy(s->w[i]);
    ib__gen_destroy(s->g[i]);
    s->w[i] = NULL;
    s->g[i] = NULL;
    s->r->rows[i].step_ms[IB_BEST_STEP_OPEN] += ib__now_ms() - t0;
}

/* The caller's opening of row i: its workload into *w (judged when
 * asked), or in a generative model's race its model into s->g[i]. */
static ib_status open_subject(race *s, size_t i, bool judge, ib_workload **w, ib_error *why)
{
    if (!s->gen) return s->cfg->open(i, s->cfg->open_user, w, judge ? &s->r->rows[i].accuracy : NULL, why);
    *w = NULL;
    s->g[i] = NULL;
    ib_status st = s->gen->open(i, s->gen->open_user, &s->g[i], why);
    if (st != IB_OK) {
        ib__gen_destroy(s->g[i]);
        s->g[i] = NULL;
    }
    return st;
}

/* What the result says of the first candidate that opened. */
static void first_opened(race *s, size_t i, const ib_workload *w)
{
    if (s->r->info.model[0]) return;
    if (s->gen)
        ib__best_gen_opened(s->r, s->g[i]);
    else
        s->r->info = *ib_workload_get_info(w);
}

/* Opens row i, judging its accuracy when asked (the first time). A
 * failure skips the row, or, on a later opening, fails its throughput (a
 * generative model's row: its latency race). */
static ib_status open_row(race *s, size_t i, bool judge, ib_workload **w)
{
    ib_best_row *row = &s->r->rows[i];
    ib_error why = { { 0 } };
    double t0 = ib__now_ms();
    ib_status st = open_subject(s, i, judge, w, &why);
    /* The callback judges the accuracy inside its opening: the check's
     * own time goes to its step. */
    double check_ms = judge ? row->accuracy.ms : 0;
    row->step_ms[IB_BEST_STEP_OPEN] += ib__now_ms() - t0 - check_ms;
    row->step_ms[IB_BEST_STEP_ACCURACY] += check_ms;
    const char *reason = why.message[0] ? why.message : ib_status_str(st);
    if (st != IB_OK && !judge) {
        /* Reopened: for the throughput race, or a generative model's
         * next measurement. */
        ib_best_stage *stage = s->gen ? &row->latency_stage : &row->throughput_stage;
        char *text = s->gen ? row->latency_why : row->throughput_why;
        *stage = IB_BEST_FAILED;
        ib__strlcpy(text, reason, sizeof row->throughput_why);
    } else if (st != IB_OK) {
        row->open_status = st;
        row->latency_stage = row->throughput_stage = IB_BEST_SKIPPED;
        ib__strlcpy(row->latency_why, reason, sizeof row->latency_why);
        ib__strlcpy(row->throughput_why, reason, sizeof row->throughput_why);
    }
    if (st != IB_OK) {
        *w = NULL;
        return st;
    }
    first_opened(s, i, *w);
    /* A generative model's race has no accuracy gate (docs/best.md). */
    if (judge)
        row->accurate = s->gen || accuracy_ok(&row->accuracy, s->cfg->min_cosine, row->latency_why,
                                              sizeof row->latency_why);
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* Latency of a row                                                          */
/* ------------------------------------------------------------------------ */

/* The screening configuration: cfg's runs a round, a short warm-up (the
 * finalists get the full one). */
static ib_config screen_config(const ib_config *full, int64_t runs)
{
    ib_config c = *full;
    c.runs = runs;
    c.precision = 0;
    c.warmup_runs = c.warmup_runs < 3 ? c.warmup_runs : 3;
    c.warmup_ms = fmin(c.warmup_ms, 100);
    c.measure_energy = false; /* a screening window is too short to read */
    c.warmup_max_ms = fmax(c.warmup_ms, fmin(c.warmup_max_ms, 2000));
    return c;
}

/* The warnings about a measurement's samples, as against the machine's:
 * the result carries them from its winners' figures alone. */
#define SAMPLE_WARNINGS                                                                                      \
    (IB_WARN_HIGH_CV | IB_WARN_FEW_SAMPLES | IB_WARN_BIMODAL | IB_WARN_NOT_STEADY |                          \
     IB_WARN_PRECISION_NOT_MET | IB_WARN_HOST_BOUND)

/* One measurement of a row as the race reads it: the figure ranked, one
 * value a run, and what the machine said. */
typedef struct timed {
    const double *ms; /* [n] */
    size_t n;
    unsigned warnings;
    ib_env env;
    ib_energy energy;
    ib_latency_result lr; /* a workload's measurement (ms points into it) */
    double *gen_ms;       /* a generative model's values (ms is this) */
} timed;

static ib_status keep_samples(race *s, size_t i, const timed *t, bool pool, ib_error *err)
{
    size_t keep = pool ? s->n_ms[i] : 0;
    double *all = realloc(s->ms[i], (keep + t->n) * sizeof *all);
    IB_FAIL_IF(!all, err, IB_ERR_NO_MEMORY, "out of host memory for samples");
    memcpy(all + keep, t->ms, t->n * sizeof *t->ms);
    s->ms[i] = all;
    s->n_ms[i] = keep + t->n;
    return ib_stats_compute(all, s->n_ms[i], &s->r->rows[i].latency);
}

/* The clock row i is measured on: its workload's or its model's. */
static const ib__clock *row_clock(const race *s, size_t i)
{
    return s->g[i] ? &s->g[i]->clock : &s->w[i]->clock;
}

/* Measures row i with c into t: the latency rule on its workload, or the
 * generation method on its model (pool: its other figures pooled, else
 * this measurement is its final one). */
static ib_status measure_row(race *s, size_t i, const ib_config *c, bool pool, timed *t, ib_error *why)
{
    memset(t, 0, sizeof *t);
    if (s->gen) {
        ib_status st = ib__best_gen_measure(s->gr, s->gen, i, s->g[i], c, !pool, &s->r->rows[i], &t->gen_ms,
                                            &t->n, &t->warnings, &t->env, why);
        t->ms = t->gen_ms;
        ib__energy_none(&t->energy, "not measured for a generative model");
        return st;
    }
    ib_status st = ib__measure_latency(s->w[i], c, false, &t->lr, why);
    t->ms = t->lr.has_device_timer ? t->lr.device_ms : t->lr.host_ms;
    t->n = t->lr.n;
    t->warnings = t->lr.warnings;
    t->env = t->lr.env;
    t->energy = t->lr.energy;
    return st;
}

static void timed_free(timed *t)
{
    ib_latency_result_free(&t->lr);
    free(t->gen_ms);
}

/* Times row i's open workload with c (pool: add to its samples, else
 * replace them). A run that fails marks the row and closes it; only an
 * interruption or a failure to keep samples stops the race. */
static ib_status time_latency(race *s, size_t i, const ib_config *c, bool pool, ib_best_step step,
                              const char *what, ib_error *err)
{
    ib_best_row *row = &s->r->rows[i];
    /* A generative model is open only while it is measured. */
    if (s->gen && !s->g[i] && open_row(s, i, false, &s->w[i]) != IB_OK) return IB_OK;
    char name[160]; /* the progress step keeps what fits */
    snprintf(name, sizeof name, "%s: %s", what, row->label);
    ib__progress_step(&s->pr, (int64_t)i + 1, (int64_t)s->r->n_rows, name, 1);
    ib_config nested;
    if (!watched(s, row_clock(s, i), step, c, &nested)) {
        bound_why(s, step, "not measured:", row->latency_why, sizeof row->latency_why);
        if (s->gen) close_row(s, i);
        return IB_OK;
    }
    timed t;
    ib_error why = { { 0 } };
    double t0 = now_ms(row_clock(s, i));
    ib_status st = measure_row(s, i, &nested, pool, &t, &why);
    count_measuring(row, step, now_ms(row_clock(s, i)) - t0);
    if (s->gen) close_row(s, i);
    if (st == IB_ERR_INTERRUPTED && !interrupted_by_user(s, step)) {
        char lead[64];
        snprintf(lead, sizeof lead, t.n ? "cut after %zu runs:" : "not measured:", t.n);
        bound_why(s, step, lead, row->latency_why, sizeof row->latency_why);
        st = t.n > 0 ? IB_OK : IB_ERR_INTERRUPTED; /* nothing measured: no samples to keep */
        if (t.n == 0) {
            timed_free(&t);
            return IB_OK;
        }
    }
    row->latency_runs += (int64_t)t.n;
    if (!pool) row->latency_energy = t.energy;
    row->latency_warnings = (pool ? row->latency_warnings : 0) | t.warnings;
    s->r->warnings |= t.warnings & ~SAMPLE_WARNINGS;
    s->r->env = t.env;
    if (st == IB_OK || (st == IB_ERR_INTERRUPTED && t.n > 0)) {
        ib_status kept = keep_samples(s, i, &t, pool, err);
        if (kept != IB_OK) st = kept;
    }
    if (st == IB_ERR_INTERRUPTED) {
        *err = why;
    } else if (st != IB_OK && st != IB_ERR_NO_MEMORY) {
        row->latency_stage = IB_BEST_FAILED;
        ib__strlcpy(row->latency_why, why.message, sizeof row->latency_why);
        close_row(s, i);
        st = IB_OK;
    }
    timed_free(&t);
    return st;
}

/* ------------------------------------------------------------------------ */
/* The latency race                                                          */
/* ------------------------------------------------------------------------ */

/* Opened, accurate and still in the race (a generative model's row is
 * closed between its measurements, so the stage says it, not the handle). */
static bool racing(const race *s, size_t i)
{
    const ib_best_row *row = &s->r->rows[i];
    return row->open_status == IB_OK && row->accurate && row->latency_stage == IB_BEST_NOT_TRIED;
}

static size_t count_racing(const race *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->r->n_rows; i++) n += racing(s, i);
    return n;
}

/* The racing row with the lowest median, -1 none. */
static int leader(const race *s)
{
    int best = -1;
    for (size_t i = 0; i < s->r->n_rows; i++)
        if (racing(s, i) && (best < 0 || s->r->rows[i].latency.p50 < s->r->rows[best].latency.p50))
            best = (int)i;
    return best;
}

/* Drops every racing row whose median is confidently more than margin
 * above the leader's: the 95% bootstrap CI of the change lies above it. */
static void drop_slower(race *s)
{
    int lead = leader(s);
    for (size_t i = 0; lead >= 0 && i < s->r->n_rows; i++) {
        if (!racing(s, i) || (int)i == lead) continue;
        ib_comparison c;
        ib_error cerr;
        if (ib_compare_samples(s->ms[lead], s->n_ms[lead], s->ms[i], s->n_ms[i], s->cfg->margin, &c, &cerr) !=
                IB_OK ||
            c.verdict != IB_CHANGE_SLOWER)
            continue;
        ib_best_row *row = &s->r->rows[i];
        char why[256];
        row->latency_stage = IB_BEST_DROPPED;
        snprintf(why, sizeof why,
                 "screening: %+.1f%% against %s (95%% CI %+.1f..%+.1f%%), over the %.0f%% margin",
                 100 * c.change, s->r->rows[lead].label, 100 * c.change_ci95[0], 100 * c.change_ci95[1],
                 100 * s->cfg->margin);
        ib__strlcpy(row->latency_why, why, sizeof row->latency_why);
    }
}

/* Whether row i, screened at batch 1, lies far behind the leader: the
 * lower end of its median's 95% CI above far_factor x the upper end of the
 * leader's. Its intervals being apart by that factor, no other batch is
 * worth its finals: on the CPU, zoo:mlp in fp16 was +7,900% behind fp32
 * at batch 1 and 99.7% below it at the peak, after 342 s of finals. */
static bool far_behind(const race *s, size_t i, int lead)
{
    const ib_best_row *row = &s->r->rows[i];
    return s->cfg->far_factor > 0 && lead >= 0 && (int)i != lead && row->latency.n > 0 &&
           row->latency.ci95_median[0] > s->cfg->far_factor * s->r->rows[lead].latency.ci95_median[1];
}

/* After screening: the rows far behind the leader leave both races (a
 * row the CI rule dropped already leaves the throughput race too). */
static void drop_far_behind(race *s)
{
    int lead = leader(s);
    for (size_t i = 0; i < s->r->n_rows; i++) {
        ib_best_row *row = &s->r->rows[i];
        bool candidate = row->accurate && (racing(s, i) || row->latency_stage == IB_BEST_DROPPED);
        if (!candidate || !far_behind(s, i, lead)) continue;
        const ib_best_row *l = &s->r->rows[lead];
        char why[256];
        snprintf(
            why, sizeof why,
            "far behind%s: median 95%% CI %.4g..%.4g ms, its lower end over %.4g x %.64s's upper end %.4g "
            "ms%s",
            s->gen ? "" : " at batch 1", row->latency.ci95_median[0], row->latency.ci95_median[1],
            s->cfg->far_factor, l->label, l->latency.ci95_median[1], s->gen ? "" : ": not raced at the peak");
        if (row->latency_stage != IB_BEST_DROPPED) {
            row->latency_stage = IB_BEST_DROPPED;
            ib__strlcpy(row->latency_why, why, sizeof row->latency_why);
        }
        row->throughput_stage = IB_BEST_DROPPED;
        ib__strlcpy(row->throughput_why, why, sizeof row->throughput_why);
        close_row(s, i);
    }
}

/* After the last round: only the `finalists` fastest go on. */
static void keep_fastest(race *s)
{
    while (count_racing(s) > s->cfg->finalists) {
        int slowest = -1;
        for (size_t i = 0; i < s->r->n_rows; i++)
            if (racing(s, i) && (slowest < 0 || s->r->rows[i].latency.p50 > s->r->rows[slowest].latency.p50))
                slowest = (int)i;
        ib_best_row *row = &s->r->rows[slowest];
        const ib_best_row *lead = &s->r->rows[leader(s)];
        char why[256];
        row->latency_stage = IB_BEST_DROPPED;
        snprintf(why, sizeof why, "screening: not among the %zu fastest (median %+.1f%% against %s)",
                 s->cfg->finalists, 100 * (row->latency.p50 / lead->latency.p50 - 1), lead->label);
        ib__strlcpy(row->latency_why, why, sizeof row->latency_why);
    }
}

/* Row i's label as it runs, the one given kept as asked when it differs. */
static void label_as_run(race *s, size_t i)
{
    ib_best_row *row = &s->r->rows[i];
    char ran[sizeof row->label];
    if (!s->gen->label_ran) return;
    s->gen->label_ran(i, s->gen->open_user, ib__best_gen_ran(s->gr, i), ran, sizeof ran);
    if (!ran[0] || !strcmp(ran, row->label)) return;
    ib__strlcpy(row->asked, row->label, sizeof row->asked);
    ib__strlcpy(row->label, ran, sizeof row->label);
}

/* Row i runs as row `same`: merged into it, never measured. */
static void merge_into(race *s, size_t i, int same)
{
    ib_best_row *row = &s->r->rows[i];
    char ran[sizeof row->label]; /* a row of its own (same < i), copied for the compiler's sake */
    ib__strlcpy(ran, s->r->rows[same].label, sizeof ran);
    row->latency_stage = row->throughput_stage = IB_BEST_MERGED;
    row->same_as = same;
    snprintf(row->latency_why, sizeof row->latency_why,
             "runs as #%d (%s): the same settings in effect, raced once", same + 1, ran);
    s->r->merged++;
    close_row(s, i);
}

/* Whether row i, just opened for the first time, races as a run of its
 * own. A generative model's row is set to the request first, and what it
 * then runs as decides: the same settings as an earlier row (a runtime
 * clamps a value, llama.cpp's n_ubatch to the request's tokens) are the
 * same run, merged into that row; a row that cannot be set fails. Its
 * label says what it runs as. A forward-pass row races. */
static bool distinct_run(race *s, size_t i)
{
    if (!s->gen) return true;
    ib_best_row *row = &s->r->rows[i];
    ib_error why = { { 0 } };
    int same;
    double t0 = ib__now_ms();
    ib_status st = ib__best_gen_settle(s->gr, s->gen, i, s->g[i], &same, &why);
    row->step_ms[IB_BEST_STEP_OPEN] += ib__now_ms() - t0;
    if (st != IB_OK) {
        row->latency_stage = row->throughput_stage = IB_BEST_FAILED;
        ib__strlcpy(row->latency_why, why.message[0] ? why.message : ib_status_str(st),
                    sizeof row->latency_why);
        close_row(s, i);
        return false;
    }
    if (same >= 0) {
        merge_into(s, i, same);
        return false;
    }
    label_as_run(s, i);
    return true;
}

/* Opens every candidate and times each once, briefly; the inaccurate ones
 * leave after that (their figure shown, never a winner). */
static ib_status first_round(race *s, ib_error *err)
{
    ib_config c = screen_config(&s->cfg->latency, s->cfg->screen_runs);
    for (size_t i = 0; i < s->r->n_rows; i++) {
        IB_FAIL_IF(ib__cancelled(s->cfg->latency.cancel), err, IB_ERR_INTERRUPTED, "interrupted");
        if (open_row(s, i, true, &s->w[i]) != IB_OK || !distinct_run(s, i)) continue;
        IB_TRY(check_energy(s, s->w[i], err));
        IB_TRY(time_latency(s, i, &c, true, IB_BEST_STEP_SCREEN, "screen", err));
        ib_best_row *row = &s->r->rows[i];
        if (s->n_ms[i] == 0 && row->latency_stage == IB_BEST_NOT_TRIED)
            row->latency_stage = IB_BEST_NOT_MEASURED; /* the bound came first: no figure to race on */
        if (row->latency_stage != IB_BEST_FAILED && !row->accurate) {
            row->latency_stage = row->throughput_stage = IB_BEST_INACCURATE;
            ib__strlcpy(row->throughput_why, row->latency_why, sizeof row->throughput_why);
            close_row(s, i);
        }
    }
    return IB_OK;
}

static ib_status screen(race *s, ib_error *err)
{
    IB_TRY(first_round(s, err));
    /* Screening ranks by time: under the energy objective it drops none
     * (the faster is not always the more efficient). */
    if (by_energy(s)) return IB_OK;
    drop_slower(s);
    for (int round = 1; round < s->cfg->rounds && count_racing(s) > s->cfg->finalists; round++) {
        ib_config c = screen_config(&s->cfg->latency, s->cfg->screen_runs << round);
        for (size_t i = 0; i < s->r->n_rows; i++)
            if (racing(s, i)) IB_TRY(time_latency(s, i, &c, true, IB_BEST_STEP_SCREEN, "screen", err));
        drop_slower(s);
    }
    drop_far_behind(s);
    keep_fastest(s);
    return IB_OK;
}

/* The change a finalist's verdict against the winner is judged at: finer
 * than the screening margin, since a finalist's figures are full
 * measurements. */
#define FINAL_THRESHOLD 0.005

/* A finalist's figure: the geometric mean of its session medians when its
 * finals ran in sessions, else the median of its final runs. */
static double final_figure(const ib_best_row *row)
{
    return row->sessions.k > 0 ? row->sessions.geomean_ms : row->latency.p50;
}

/* Row i against the winner: across both sides' sessions when each has 2
 * or more, else by their runs. */
static ib_status compare_final(const race *s, size_t win, size_t i, ib_comparison *c, ib_error *err)
{
    const ib_best_row *w = &s->r->rows[win], *row = &s->r->rows[i];
    if (w->sessions.k >= 2 && row->sessions.k >= 2)
        return ib_compare_sessions(s->sessions[win], w->sessions.k, s->sessions[i], row->sessions.k,
                                   FINAL_THRESHOLD, c, err);
    return ib_compare_samples(s->ms[win], s->n_ms[win], s->ms[i], s->n_ms[i], FINAL_THRESHOLD, c, err);
}

/* Whether row's energy figure a beats b's: more inputs per joule (a
 * figure beats none). */
static bool more_efficient(const ib_energy *a, const ib_energy *b)
{
    return a->source != IB_ENERGY_NONE &&
           (b->source == IB_ENERGY_NONE || a->items_per_joule > b->items_per_joule);
}

/* "+x% inputs per joule against the winner (its bound +-y%, the winner's
 * +-z%)", a tie where the two bounds overlap (the winner is the larger
 * figure, not shown better), or why the row has no figure. */
static void energy_why(const ib_energy *e, const ib_energy *win, char *why, size_t cap)
{
    if (e->source == IB_ENERGY_NONE) {
        snprintf(why, cap, "no energy figure: %s", e->note);
        return;
    }
    bool tie = e->items_per_joule * (1 + e->bound) >= win->items_per_joule * (1 - win->bound);
    snprintf(why, cap, "%+.1f%% inputs per joule against the winner (bounds +-%.2g%% and +-%.2g%%%s)",
             100 * (e->items_per_joule / win->items_per_joule - 1), 100 * e->bound, 100 * win->bound,
             tie ? ": they overlap, a tie" : "");
}

/* A row's side of a race: latency (batch 1) or throughput. */
static ib_best_stage *race_stage(ib_best_row *row, bool latency)
{
    return latency ? &row->latency_stage : &row->throughput_stage;
}
static const ib_energy *race_energy(const ib_best_row *row, bool latency)
{
    return latency ? &row->latency_energy : &row->throughput_energy;
}

/* Under the energy objective: the finalist with the most inputs per joule
 * (at batch 1, or at its throughput batch) wins; the others say by how
 * much they lost. Returns the winner, -1 none. */
static int energy_verdicts(ib_best_result *r, bool latency)
{
    int win = -1;
    for (size_t i = 0; i < r->n_rows; i++)
        if (*race_stage(&r->rows[i], latency) == IB_BEST_FINALIST &&
            race_energy(&r->rows[i], latency)->source != IB_ENERGY_NONE &&
            (win < 0 ||
             more_efficient(race_energy(&r->rows[i], latency), race_energy(&r->rows[win], latency))))
            win = (int)i;
    if (win < 0) return -1;
    *race_stage(&r->rows[win], latency) = IB_BEST_WINNER;
    for (size_t i = 0; i < r->n_rows; i++) {
        ib_best_row *row = &r->rows[i];
        if (*race_stage(row, latency) != IB_BEST_FINALIST) continue;
        char *why = latency ? row->latency_why : row->throughput_why;
        energy_why(race_energy(row, latency), race_energy(&r->rows[win], latency), why,
                   sizeof row->latency_why);
    }
    return win;
}

/* The finalists' own measurements decide; each loser says by how much. */
static void latency_verdicts(race *s)
{
    ib_best_result *r = s->r;
    if (by_energy(s)) {
        r->latency_winner = energy_verdicts(r, true);
        return;
    }
    r->latency_winner = -1;
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].latency_stage == IB_BEST_FINALIST &&
            (r->latency_winner < 0 || final_figure(&r->rows[i]) < final_figure(&r->rows[r->latency_winner])))
            r->latency_winner = (int)i;
    if (r->latency_winner < 0) return;
    int win = r->latency_winner;
    r->rows[win].latency_stage = IB_BEST_WINNER;
    for (size_t i = 0; i < r->n_rows; i++) {
        ib_best_row *row = &r->rows[i];
        ib_comparison c;
        ib_error why;
        if (row->latency_stage != IB_BEST_FINALIST) continue;
        if (compare_final(s, (size_t)win, i, &c, &why) != IB_OK) {
            snprintf(row->latency_why, sizeof row->latency_why, "median %+.1f%% against the winner",
                     100 * (final_figure(row) / final_figure(&r->rows[win]) - 1));
            continue;
        }
        char failed[sizeof row->latency_why];
        ib__strlcpy(failed, row->sessions_failed ? row->latency_why : "", sizeof failed);
        snprintf(row->latency_why, sizeof row->latency_why,
                 "%s %+.2f%% against the winner (95%% CI%s %+.2f..%+.2f%%: %s)%s%.120s",
                 c.two_level ? IB__SESSIONS_STATISTIC : "median", 100 * c.change,
                 c.two_level ? " across sessions" : "", 100 * c.change_ci95[0], 100 * c.change_ci95[1],
                 ib_change_name(c.verdict), failed[0] ? "; " : "", failed);
    }
}

/* The full latency rule on each remaining row. */
static ib_status finals(race *s, ib_error *err)
{
    for (size_t i = 0; i < s->r->n_rows; i++) {
        if (!racing(s, i)) continue;
        int64_t before = s->r->rows[i].latency_runs;
        ib_status st = time_latency(s, i, &s->cfg->latency, false, IB_BEST_STEP_LATENCY_FINAL, "final", err);
        /* Interrupted or cut by the bound, what it measured stands (the
         * result says partial, or which step was bounded); not measured
         * (the bound came first), it is no finalist. */
        ib_best_row *row = &s->r->rows[i];
        if (row->latency_stage == IB_BEST_NOT_TRIED && st == IB_OK)
            row->latency_stage = row->latency_runs > before ? IB_BEST_FINALIST : IB_BEST_NOT_MEASURED;
        IB_TRY(st);
    }
    return IB_OK;
}

/* Keeps session `session` of finalist i: its samples, or its failure. */
static ib_status keep_session(race *s, size_t i, ib_status st, double *ms, size_t n, const ib_error *why,
                              ib_error *err)
{
    ib_best_row *row = &s->r->rows[i];
    if (st != IB_OK || n == 0) {
        free(ms);
        row->sessions_failed++;
        ib__strlcpy(row->latency_why, why->message[0] ? why->message : ib_status_str(st),
                    sizeof row->latency_why);
        return IB_OK;
    }
    for (size_t j = 0; j < n; j++)
        if (!ib__is_duration_ms(ms[j])) {
            double bad = ms[j];
            free(ms);
            return ib__fail(err, IB_ERR_RUNTIME, "a session of %s returned a sample of %g ms", row->label,
                            bad);
        }
    s->sessions[i][row->sessions.k++] = (ib_session_sample){ ms, n };
    double *all = realloc(s->ms[i], (s->n_ms[i] + n) * sizeof *all);
    IB_FAIL_IF(!all, err, IB_ERR_NO_MEMORY, "out of host memory for samples");
    memcpy(all + s->n_ms[i], ms, n * sizeof *ms);
    s->ms[i] = all;
    s->n_ms[i] += n;
    row->latency_runs += (int64_t)n;
    return IB_OK;
}

/* Finalist i after its sessions: the statistics across them, its runs
 * pooled; a finalist no session of which measured has failed, or, when
 * the search was interrupted first, was not tried. */
static ib_status sum_up_sessions(race *s, size_t i, bool interrupted, ib_error *err)
{
    ib_best_row *row = &s->r->rows[i];
    size_t k = row->sessions.k;
    bool bounded = s->r->steps_bounded & (1u << IB_BEST_STEP_LATENCY_FINAL);
    if (k == 0 && (interrupted || bounded) && row->sessions_failed == 0) {
        row->latency_stage = interrupted ? IB_BEST_NOT_TRIED : IB_BEST_NOT_MEASURED;
        if (interrupted)
            ib__strlcpy(row->latency_why, "interrupted before its sessions", sizeof row->latency_why);
        return IB_OK;
    }
    if (k == 0) {
        row->latency_stage = IB_BEST_FAILED;
        return IB_OK;
    }
    if (row->sessions_failed > 0) {
        char why[sizeof row->latency_why];
        snprintf(why, sizeof why, "%zu of %zu sessions failed: %.200s", row->sessions_failed,
                 row->sessions_failed + k, row->latency_why);
        ib__strlcpy(row->latency_why, why, sizeof row->latency_why);
    }
    IB_TRY(ib_stats_compute(s->ms[i], s->n_ms[i], &row->latency));
    IB_TRY(ib_sessions_compute(s->sessions[i], k, &row->sessions, err));
    return IB_OK;
}

/* One session of finalist i, timed as part of its measurements. */
static ib_status run_session(race *s, size_t i, size_t session, ib_error *err)
{
    ib_best_row *row = &s->r->rows[i];
    /* Sessions are other processes: the bound is checked between them. */
    if (step_left_ms(s, IB_BEST_STEP_LATENCY_FINAL) <= 0) {
        s->r->steps_bounded |= 1u << IB_BEST_STEP_LATENCY_FINAL;
        if (row->sessions.k == 0 && row->sessions_failed == 0)
            bound_why(s, IB_BEST_STEP_LATENCY_FINAL, "not measured:", row->latency_why,
                      sizeof row->latency_why);
        return IB_OK;
    }
    char name[160];
    snprintf(name, sizeof name, "final session %zu/%zu: %s", session, s->cfg->sessions, row->label);
    ib__progress_step(&s->pr, (int64_t)i + 1, (int64_t)s->r->n_rows, name, 1);
    double *ms = NULL;
    size_t n = 0;
    ib_error why = { { 0 } };
    double t0 = ib__now_ms();
    ib_status st = s->cfg->measure_session(i, session, s->cfg->session_user, &ms, &n, &why);
    count_measuring(row, IB_BEST_STEP_LATENCY_FINAL, ib__now_ms() - t0);
    if (st == IB_ERR_INTERRUPTED) {
        free(ms);
        *err = why;
        return st;
    }
    return keep_session(s, i, st, ms, n, &why, err);
}

/* The finals in fresh sessions (the program's processes), round-robin:
 * session 1 of every finalist, then session 2..., so that a drift of the
 * machine falls on every finalist alike. This process closes its own
 * sessions first: a session must find the device as a user's run would,
 * with no other session of this model on it. */
static ib_status finals_in_sessions(race *s, ib_error *err)
{
    bool final[IB_BEST_MAX_CANDIDATES] = { false };
    for (size_t i = 0; i < s->r->n_rows; i++) {
        final[i] = racing(s, i);
        close_row(s, i);
        if (!final[i]) continue;
        s->r->rows[i].latency_stage = IB_BEST_FINALIST;
        s->sessions[i] = calloc(s->cfg->sessions, sizeof *s->sessions[i]);
        IB_FAIL_IF(!s->sessions[i], err, IB_ERR_NO_MEMORY, "out of host memory for sessions");
        s->n_ms[i] = 0; /* the screening runs make way for the sessions' */
    }
    ib_status st = IB_OK;
    for (size_t k = 1; k <= s->cfg->sessions && st == IB_OK; k++)
        for (size_t i = 0; i < s->r->n_rows && st == IB_OK; i++)
            if (final[i]) st = run_session(s, i, k, err);
    for (size_t i = 0; i < s->r->n_rows; i++) {
        ib_status summed = final[i] ? sum_up_sessions(s, i, st == IB_ERR_INTERRUPTED, err) : IB_OK;
        if (st == IB_OK) st = summed;
    }
    return st;
}

/* The sessions of the rows that lost at batch 1 stay open (at batch 1
 * they hold little): the throughput race reuses them, changing only the
 * batch, as it reuses the finalists'. */
static ib_status latency_race(race *s, ib_error *err)
{
    ib_status st = screen(s, err);
    if (st == IB_OK) st = s->cfg->sessions >= 2 ? finals_in_sessions(s, err) : finals(s, err);
    latency_verdicts(s);
    return st;
}

/* ------------------------------------------------------------------------ */
/* The throughput race                                                       */
/* ------------------------------------------------------------------------ */

/* Whether row i takes part: it opened, is accurate and its runs worked. */
static bool throughput_candidate(const ib_best_row *row)
{
    return row->open_status == IB_OK && row->accurate && row->latency_stage != IB_BEST_FAILED &&
           row->throughput_stage == IB_BEST_NOT_TRIED;
}

/* The row's throughput figure from the curve just measured: the peak's
 * (kept when it beats what the row had), or under the energy objective the
 * point with the most inputs per joule (kept when it beats the row's). A
 * curve without energy (the screening at the peak times back-to-back runs
 * alone) gives its peak's inputs/s under either: the row goes on to the
 * finals, which measure its energy. */
static void keep_throughput(race *s, ib_best_row *row)
{
    const ib_throughput_result *tr = s->tr;
    int k = tr->most_efficient;
    if (by_energy(s) && k >= 0) {
        if (row->throughput_energy.source != IB_ENERGY_NONE &&
            !(tr->points[k].energy.items_per_joule > row->throughput_energy.items_per_joule))
            return;
        row->items_per_s = tr->points[k].items_per_s;
        row->batch = tr->points[k].batch;
        row->throughput_energy = tr->points[k].energy;
        return;
    }
    if (tr->peak >= 0 && !(tr->points[tr->peak].items_per_s <= row->items_per_s)) {
        row->items_per_s = tr->points[tr->peak].items_per_s;
        row->batch = tr->points[tr->peak].batch;
        row->throughput_energy = tr->points[tr->peak].energy;
    }
}

/* Measures row i with tc on its open session (opened anew, without the
 * accuracy check it passed, when it was closed) and keeps its best point.
 * A failure marks the row; an interruption stops. */
static ib_status time_throughput(race *s, size_t i, const ib_throughput_config *tc, ib_best_step step,
                                 const char *what, ib_error *err)
{
    ib_best_row *row = &s->r->rows[i];
    s->tr->peak = -1;
    if (!s->w[i] && open_row(s, i, false, &s->w[i]) != IB_OK) return IB_OK;
    ib_workload *w = s->w[i];
    char name[160]; /* the progress step keeps what fits */
    snprintf(name, sizeof name, "%s: %s", what, row->label);
    ib__progress_step(&s->pr, (int64_t)i + 1, (int64_t)s->r->n_rows, name, 0);
    ib_throughput_config nested = *tc;
    if (!watched(s, &w->clock, step, &tc->run, &nested.run)) { /* its cancel: the bound's, or the caller's */
        if (row->throughput_stage == IB_BEST_NOT_TRIED)
            row->throughput_stage = IB_BEST_NOT_MEASURED; /* never timed in its step: not raced */
        bound_why(s, step, "not measured:", row->throughput_why, sizeof row->throughput_why);
        return IB_OK;
    }
    ib_error why = { { 0 } };
    double t0 = ib__workload_now_ms(w);
    ib_status st = ib_measure_throughput(w, &nested, s->tr, &why);
    count_measuring(row, step, ib__workload_now_ms(w) - t0);
    if (st == IB_ERR_INTERRUPTED && !interrupted_by_user(s, step)) {
        /* The bound: the points timed by then stand. */
        bound_why(s, step, s->tr->peak >= 0 ? "cut:" : "nothing measured:", row->throughput_why,
                  sizeof row->throughput_why);
        st = IB_OK;
        if (s->tr->peak < 0 && row->throughput_stage == IB_BEST_NOT_TRIED)
            row->throughput_stage = IB_BEST_NOT_MEASURED;
    }
    bool replaces = step == IB_BEST_STEP_BATCH_SEARCH || step == IB_BEST_STEP_THROUGHPUT_FINAL;
    row->throughput_warnings = (replaces ? 0 : row->throughput_warnings) | s->tr->warnings;
    s->r->warnings |= s->tr->warnings & ~SAMPLE_WARNINGS;
    s->r->env = s->tr->env;
    keep_throughput(s, row);
    if (st == IB_ERR_INTERRUPTED) {
        *err = why;
        return st;
    }
    if (st != IB_OK && s->tr->peak < 0) {
        row->throughput_stage = IB_BEST_FAILED;
        ib__strlcpy(row->throughput_why, why.message, sizeof row->throughput_why);
        close_row(s, i); /* what it holds goes back before the next one */
    }
    return IB_OK;
}

static bool point_ok(const ib_throughput_result *tr, int k)
{
    return k >= 0 && (size_t)k < tr->n_points && tr->points[k].status == IB_OK;
}

/* The batches a finalist is measured at: the searched curve's peak and
 * the better of its two neighbours (the plateau's other end), in
 * increasing order. */
static size_t plateau(const ib_throughput_result *tr, int64_t *batches)
{
    int lo = tr->peak - 1, hi = tr->peak + 1;
    int other =
        !point_ok(tr, hi) || (point_ok(tr, lo) && tr->points[lo].items_per_s > tr->points[hi].items_per_s)
            ? lo
            : hi;
    size_t n = 0;
    if (other == lo && point_ok(tr, lo)) batches[n++] = tr->points[lo].batch;
    batches[n++] = tr->points[tr->peak].batch;
    if (other == hi && point_ok(tr, hi)) batches[n++] = tr->points[hi].batch;
    return n;
}

static void throughput_verdicts(ib_best_result *r)
{
    if (r->objective == IB_BEST_OBJECTIVE_ENERGY) {
        r->throughput_winner = energy_verdicts(r, false);
        return;
    }
    r->throughput_winner = -1;
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].throughput_stage == IB_BEST_FINALIST &&
            (r->throughput_winner < 0 || r->rows[i].items_per_s > r->rows[r->throughput_winner].items_per_s))
            r->throughput_winner = (int)i;
    if (r->throughput_winner < 0) return;
    const ib_best_row *win = &r->rows[r->throughput_winner];
    r->rows[r->throughput_winner].throughput_stage = IB_BEST_WINNER;
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].throughput_stage == IB_BEST_FINALIST)
            snprintf(r->rows[i].throughput_why, sizeof r->rows[i].throughput_why,
                     "%+.1f%% inputs/s against the winner (%.4g at batch %lld)",
                     100 * (r->rows[i].items_per_s / win->items_per_s - 1), win->items_per_s,
                     (long long)win->batch);
}

/* The reference sweep: every candidate opened, judged, and if accurate
 * measured by the full latency rule and the whole batch search, on one
 * session (as a careful script of latency and throughput runs would). */
static ib_status exhaustive_sweep(race *s, ib_error *err)
{
    for (size_t i = 0; i < s->r->n_rows; i++) {
        IB_FAIL_IF(ib__cancelled(s->cfg->latency.cancel), err, IB_ERR_INTERRUPTED, "interrupted");
        if (open_row(s, i, true, &s->w[i]) != IB_OK || !distinct_run(s, i)) continue;
        IB_TRY(check_energy(s, s->w[i], err));
        ib_best_row *row = &s->r->rows[i];
        ib_status st = IB_OK;
        if (!row->accurate) {
            row->latency_stage = row->throughput_stage = IB_BEST_INACCURATE;
            ib__strlcpy(row->throughput_why, row->latency_why, sizeof row->throughput_why);
        } else {
            st = time_latency(s, i, &s->cfg->latency, false, IB_BEST_STEP_LATENCY_FINAL, "sweep", err);
            if (row->latency_stage == IB_BEST_NOT_TRIED && row->latency.n > 0)
                row->latency_stage = IB_BEST_FINALIST;
            if (st == IB_OK && s->w[i])
                st = time_throughput(s, i, &s->cfg->throughput, IB_BEST_STEP_BATCH_SEARCH, "sweep", err);
            if (row->throughput_stage == IB_BEST_NOT_TRIED && isfinite(row->items_per_s))
                row->throughput_stage = IB_BEST_FINALIST;
        }
        close_row(s, i);
        IB_TRY(st);
    }
    return IB_OK;
}

/* How many rows screened at the peak batch (or searched) did better than
 * row i there. */
static size_t better_at_peak(const race *s, size_t i)
{
    const ib_best_result *r = s->r;
    size_t better = 0;
    for (size_t j = 0; j < r->n_rows; j++)
        better += (throughput_candidate(&r->rows[j]) || (int)j == r->searched) &&
                  r->rows[j].items_per_s > r->rows[i].items_per_s;
    return better;
}

/* Only the sessions of the `finalists` best so far stay open: a session
 * grown to the peak batch holds its memory. */
static void close_outranked(race *s)
{
    if (by_energy(s)) return; /* ranked by inputs/s: not the objective */
    for (size_t i = 0; i < s->r->n_rows; i++)
        if (s->w[i] && (int)i != s->r->searched && isfinite(s->r->rows[i].items_per_s) &&
            better_at_peak(s, i) >= s->cfg->finalists)
            close_row(s, i);
}

/* Screens every other candidate at the peak batch, briefly. */
static ib_status screen_at_peak(race *s, ib_error *err)
{
    ib_throughput_config tc = s->cfg->throughput;
    tc.batches = &s->r->peak_batch;
    tc.n_batches = 1;
    tc.latency_budget_ms = 0;
    tc.items_only = true; /* ranked by inputs/s: no runs timed one at a time */
    /* Back-to-back runs at the peak batch are long and steady: a third
     * of the latency screening's runs ranks them. */
    int64_t runs = s->cfg->screen_runs / 3;
    tc.run = screen_config(&tc.run, runs > IB_COMPARE_MIN_SAMPLES ? runs : IB_COMPARE_MIN_SAMPLES);
    for (size_t i = 0; i < s->r->n_rows; i++) {
        if (!throughput_candidate(&s->r->rows[i])) continue;
        IB_TRY(time_throughput(s, i, &tc, IB_BEST_STEP_PEAK_SCREEN, "screen", err));
        close_outranked(s);
    }
    return IB_OK;
}

/* The rows screened at the peak batch beyond the `finalists` best (the
 * searched row, a finalist already, counted among them) leave; those that
 * stay are measured afresh. */
static void keep_best_at_peak(race *s)
{
    ib_best_result *r = s->r;
    size_t better[IB_BEST_MAX_CANDIDATES];
    for (size_t i = 0; i < r->n_rows; i++) better[i] = better_at_peak(s, i);
    for (size_t i = 0; i < r->n_rows; i++) {
        ib_best_row *row = &r->rows[i];
        if (!throughput_candidate(row)) continue;
        if ((by_energy(s) || better[i] < s->cfg->finalists) && isfinite(row->items_per_s)) {
            row->items_per_s = NAN; /* the finals measure it afresh */
            ib__energy_none(&row->throughput_energy, "not measured");
            continue;
        }
        close_row(s, i);
        row->throughput_stage = IB_BEST_DROPPED;
        if (isfinite(row->items_per_s))
            snprintf(row->throughput_why, sizeof row->throughput_why,
                     "screening at batch %lld: not among the %zu best (%.4g inputs/s)",
                     (long long)r->peak_batch, s->cfg->finalists, row->items_per_s);
        else if (!row->throughput_why[0]) /* a cut or a failure says why already */
            snprintf(row->throughput_why, sizeof row->throughput_why,
                     "screening at batch %lld: no inputs/s measured", (long long)r->peak_batch);
    }
}

/* A back-to-back block is one timing, which the bound cannot stop once
 * it started: a finalist's runs at each batch are cut to what its
 * screened inputs/s says fits in the time its step has left (at least
 * one), so that no block runs far past the bound. */
static int64_t final_runs(race *s, double screened_items_per_s, const int64_t *batches, size_t n)
{
    int64_t runs = s->cfg->throughput.run.runs;
    double left = step_left_ms(s, IB_BEST_STEP_THROUGHPUT_FINAL);
    if (!isfinite(left) || !(screened_items_per_s > 0)) return runs;
    double run_ms = 0; /* one run at each batch, estimated */
    for (size_t k = 0; k < n; k++) run_ms += (double)batches[k] / screened_items_per_s * 1e3;
    double fit = floor(left / run_ms);
    if (fit >= (double)runs) return runs;
    s->r->steps_bounded |= 1u << IB_BEST_STEP_THROUGHPUT_FINAL;
    return fit >= 1 ? (int64_t)fit : 1;
}

/* The peak batch searched on the latency winner, the others screened
 * there, the best few measured fully around it. */
static ib_status raced_throughput(race *s, ib_error *err)
{
    ib_best_result *r = s->r;
    if (r->latency_winner < 0) return IB_OK;
    r->searched = r->latency_winner;
    /* The race needs the peak and its plateau, not the whole curve: the
     * search from the top visits the fewest new batches. */
    ib_throughput_config search = s->cfg->throughput;
    search.from_top = true;
    search.latency_budget_ms = 0;
    IB_TRY(time_throughput(s, (size_t)r->searched, &search, IB_BEST_STEP_BATCH_SEARCH, "batch search", err));
    close_row(s, (size_t)r->searched); /* its search is done */
    if (s->tr->peak < 0) return IB_OK;
    r->peak_batch = s->tr->points[s->tr->peak].batch;
    int64_t batches[2];
    size_t n = plateau(s->tr, batches);
    r->rows[r->searched].throughput_stage = IB_BEST_FINALIST;
    IB_TRY(screen_at_peak(s, err));
    double screened[IB_BEST_MAX_CANDIDATES];
    for (size_t i = 0; i < r->n_rows; i++) screened[i] = r->rows[i].items_per_s;
    keep_best_at_peak(s);
    ib_throughput_config tc = s->cfg->throughput;
    tc.batches = batches;
    tc.n_batches = n;
    tc.latency_budget_ms = 0;
    tc.items_only = true;
    for (size_t i = 0; i < r->n_rows; i++) {
        if (!throughput_candidate(&r->rows[i])) continue;
        tc.run.runs = final_runs(s, screened[i], batches, n);
        IB_TRY(time_throughput(s, i, &tc, IB_BEST_STEP_THROUGHPUT_FINAL, "final", err));
        close_row(s, i);
        /* Not measured in the finals (the bound came first): no finalist. */
        if (r->rows[i].throughput_stage == IB_BEST_NOT_TRIED && isfinite(r->rows[i].items_per_s))
            r->rows[i].throughput_stage = IB_BEST_FINALIST;
    }
    return IB_OK;
}

static ib_status throughput_race(race *s, ib_error *err)
{
    ib_status st = raced_throughput(s, err);
    throughput_verdicts(s->r);
    return st;
}

/* ------------------------------------------------------------------------ */
/* The search                                                                */
/* ------------------------------------------------------------------------ */

static void init_result(const ib_best_config *cfg, const ib_best_gen *gen, ib_best_result *out)
{
    memset(out, 0, sizeof *out);
    if (gen) {
        out->generation = true;
        out->figure = gen->figure;
        out->prompt_tokens = gen->gen.prompt_tokens;
        out->new_tokens = gen->gen.new_tokens;
        out->depth = gen->gen.depth > 0 ? gen->gen.depth : gen->gen.prompt_tokens;
    }
    out->latency_winner = out->throughput_winner = out->searched = -1;
    out->exhaustive = cfg->exhaustive;
    out->sessions = cfg->sessions;
    out->min_cosine = cfg->min_cosine;
    out->far_factor = cfg->exhaustive ? 0 : cfg->far_factor;
    out->step_max_ms = cfg->exhaustive ? 0 : cfg->step_max_ms;
    out->objective = cfg->objective;
    out->n_rows = cfg->n_candidates <= IB_BEST_MAX_CANDIDATES ? cfg->n_candidates : 0;
    for (size_t i = 0; i < out->n_rows; i++) {
        ib_best_row *row = &out->rows[i];
        ib__strlcpy(row->label, cfg->labels && cfg->labels[i] ? cfg->labels[i] : "?", sizeof row->label);
        row->same_as = -1;
        row->items_per_s = row->tokens_per_s = NAN;
        row->latency.p50 = row->ttft.p50 = row->tpot.p50 = NAN;
        ib__energy_none(&row->latency_energy, "not measured");
        ib__energy_none(&row->throughput_energy, "not measured");
    }
}

/* The samples' warnings of the winners' figures; with no winner at all,
 * of every row measured (nothing stands above them). */
static void winners_warnings(ib_best_result *r)
{
    unsigned w = 0;
    if (r->latency_winner >= 0) w |= r->rows[r->latency_winner].latency_warnings;
    if (r->throughput_winner >= 0) w |= r->rows[r->throughput_winner].throughput_warnings;
    for (size_t i = 0; r->latency_winner < 0 && r->throughput_winner < 0 && i < r->n_rows; i++)
        w |= r->rows[i].latency_warnings | r->rows[i].throughput_warnings;
    r->warnings |= w & SAMPLE_WARNINGS;
}

/* The race, or the sweep; a generative model's has no throughput race. */
static ib_status search(race *s, ib_error *err)
{
    ib_status st;
    if (s->cfg->exhaustive) {
        st = exhaustive_sweep(s, err);
        latency_verdicts(s);
        throughput_verdicts(s->r);
    } else {
        st = latency_race(s, err);
        if (st == IB_OK && !s->gen) st = throughput_race(s, err);
    }
    winners_warnings(s->r);
    return st;
}

/* The rows' times summed, the race's scratch freed. */
static void sum_up(race *s)
{
    ib_best_result *out = s->r;
    for (size_t i = 0; i < out->n_rows; i++) {
        out->measured_ms += out->rows[i].ms;
        for (int k = 0; k < IB_BEST_STEPS; k++) out->step_ms[k] += out->rows[i].step_ms[k];
        if (out->rows[i].accuracy.tolerance > 0) out->tolerance = out->rows[i].accuracy.tolerance;
        free(s->ms[i]);
        for (size_t k = 0; s->sessions[i] && k < out->rows[i].sessions.k; k++)
            free((double *)s->sessions[i][k].ms);
        free(s->sessions[i]);
    }
}

static ib_status measure_best(const ib_best_config *cfg, const ib_best_gen *gen, ib_best_result *out,
                              ib_gen_result *winner, ib_error *err)
{
    IB_FAIL_IF(!cfg || !out || (gen && !winner), err, IB_ERR_INVALID_ARG,
               "best: no configuration or no result");
    init_result(cfg, gen, out);
    if (winner) ib__best_gen_rows_finish(NULL, -1, winner);
    IB_TRY(validate(cfg, gen, err));
    race s = { .cfg = cfg, .r = out, .gen = gen };
    ib__progress_init(&s.pr, &cfg->latency, NULL);
    s.tr = malloc(sizeof *s.tr);
    IB_FAIL_IF(!s.tr, err, IB_ERR_NO_MEMORY, "out of host memory");
    if (gen && ib__best_gen_rows_new(out->n_rows, &s.gr, err) != IB_OK) {
        free(s.tr);
        return IB_ERR_NO_MEMORY;
    }
    double t0 = ib__now_ms();
    ib_status st = search(&s, err);
    for (size_t i = 0; i < out->n_rows; i++) close_row(&s, i); /* closing is part of the search */
    out->elapsed_ms = ib__now_ms() - t0;
    free(s.tr);
    sum_up(&s);
    if (gen) ib__best_gen_rows_finish(s.gr, out->latency_winner, winner);
    for (size_t i = 0; i < out->n_rows; i++)
        out->not_measured += out->rows[i].latency_stage == IB_BEST_NOT_MEASURED ||
                             out->rows[i].throughput_stage == IB_BEST_NOT_MEASURED;
    /* Cut short by the bound: the winner is the best of those measured. */
    if (st != IB_OK || out->not_measured > 0) {
        out->partial = true;
        out->stop_status = st;
    }
    return st;
}

ib_status ib_measure_best(const ib_best_config *cfg, ib_best_result *out, ib_error *err)
{
    return measure_best(cfg, NULL, out, NULL, err);
}

ib_status ib_measure_best_generation(const ib_best_config *cfg, const ib_best_gen *gen, ib_best_result *out,
                                     ib_gen_result *winner, ib_error *err)
{
    IB_FAIL_IF(!gen, err, IB_ERR_INVALID_ARG, "best: no generative model");
    return measure_best(cfg, gen, out, winner, err);
}
