/* best of a generative model served under load (serve --best; docs/best.md,
 * "Serving: the engine's settings raced"): the engine's slots and prefill
 * chunk and the model's own settings (flash attention, the KV cache's
 * type) raced by goodput at the user's targets, at the user's rate and
 * schedule. A serving run gives one goodput, not one value a run of many
 * runs, so the race is best_gen.c's in shape, not in statistics: every
 * distinct setting in effect serves the schedule's first requests
 * (screening), the `finalists` with the highest goodput serve the whole
 * schedule (the finals), and the finals alone decide and give the
 * winner's figures. Rows that run the same (the same settings in effect)
 * are merged and raced once; each step has a time bound on the model's
 * clock, past which the rows left are "not measured" and the race is
 * partial. */
#include "base/common.h"
#include "workload/generation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ib_best_serve_config_init(ib_best_serve_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    ib_gen_serve_config_init(&cfg->serve);
    cfg->finalists = 3;
    cfg->step_max_ms = 300000;
}

void ib_best_serve_result_free(ib_best_serve_result *r)
{
    if (r) ib_gen_serve_result_free(&r->winner_serve);
}

/* What the race carries. */
typedef struct race {
    const ib_best_serve_config *cfg;
    ib_best_serve_result *r;
    ib_option_list ran[IB_BEST_SERVE_MAX_CANDIDATES]; /* each row's settings in effect */
    /* The measurement in flight, watched for its step's bound. */
    volatile int stop;
    const ib__clock *clock;
    double t0_ms, left_ms;
    ib_progress_fn forward;
    void *forward_user;
} race;

static bool user_stop(const race *s) { return ib__cancelled(s->cfg->serve.run.cancel); }

static ib_status validate(const ib_best_serve_config *cfg, ib_error *err)
{
    IB_FAIL_IF(!cfg || cfg->n_candidates < 1 || cfg->n_candidates > IB_BEST_SERVE_MAX_CANDIDATES ||
                   !cfg->candidates || !cfg->open,
               err, IB_ERR_INVALID_ARG, "best: 1 to %d candidates and an open callback",
               IB_BEST_SERVE_MAX_CANDIDATES);
    IB_FAIL_IF(!(cfg->serve.slo_ttft_ms > 0) && !(cfg->serve.slo_tpot_ms > 0), err, IB_ERR_INVALID_ARG,
               "best of serving races goodput: give its targets (--slo-ttft-ms, --slo-tpot-ms)");
    IB_FAIL_IF(cfg->finalists < 1, err, IB_ERR_INVALID_ARG, "best: at least one finalist");
    IB_FAIL_IF(cfg->screen_requests < 0, err, IB_ERR_INVALID_ARG, "best: screening requests 0 or more");
    IB_FAIL_IF(!(cfg->step_max_ms >= 0), err, IB_ERR_INVALID_ARG,
               "best: a step's time bound is 0 (none) or more");
    for (size_t i = 0; i < cfg->n_candidates; i++)
        IB_FAIL_IF(cfg->candidates[i].slots < 1 || cfg->candidates[i].prefill_chunk < 1, err,
                   IB_ERR_INVALID_ARG, "best: candidate %zu has %d slots and a chunk of %d", i + 1,
                   (int)cfg->candidates[i].slots, (int)cfg->candidates[i].prefill_chunk);
    return IB_OK;
}

/* The schedule's request count, and the longest prompt and request any of
 * them can have (a trace's own; drawn lengths: their ranges' ends). */
static size_t schedule_size(const ib_gen_serve_config *c)
{
    return c->arrivals == IB_ARRIVALS_TRACE ? c->n_trace : (size_t)c->requests;
}

static void longest(const ib_gen_serve_config *c, int32_t *prompt, int32_t *request)
{
    *prompt = c->prompt_max;
    *request = c->prompt_max + c->output_max;
    if (c->arrivals != IB_ARRIVALS_TRACE) return;
    *prompt = *request = 0;
    for (size_t i = 0; i < c->n_trace; i++) {
        *prompt = c->trace[i].prompt_tokens > *prompt ? c->trace[i].prompt_tokens : *prompt;
        int32_t n = c->trace[i].prompt_tokens + c->trace[i].output_tokens;
        *request = n > *request ? n : *request;
    }
}

/* ------------------------------------------------------------------------ */
/* Each step's time bound                                                    */
/* ------------------------------------------------------------------------ */

static const char *step_words(ib_best_serve_step step)
{
    return step == IB_BEST_SERVE_STEP_SCREEN ? "the screening" : "the finals";
}

static double step_left_ms(const race *s, ib_best_serve_step step)
{
    if (s->cfg->step_max_ms <= 0) return INFINITY;
    double spent = 0;
    for (size_t i = 0; i < s->r->n_rows; i++) spent += s->r->rows[i].step_ms[step];
    return s->cfg->step_max_ms - spent;
}

static void bound_why(const race *s, ib_best_serve_step step, const char *lead, char *why, size_t cap)
{
    char text[256];
    snprintf(text, sizeof text, "%s %s reached the step's time bound (%.4g s, --step-max-ms)", lead,
             step_words(step), s->cfg->step_max_ms / 1e3);
    ib__strlcpy(why, text, cap);
}

/* The engine's progress reports (every IB_PROGRESS_PERIOD_MS of its clock)
 * are where the bound is checked: past it, or once the caller's flag is
 * raised, the run stops after its step in flight. */
static void watch(const ib_progress *p, void *user)
{
    race *s = user;
    if (user_stop(s) || s->clock->now_ms(s->clock->ctx) - s->t0_ms >= s->left_ms) s->stop = 1;
    if (s->forward) s->forward(p, s->forward_user);
}

/* ------------------------------------------------------------------------ */
/* Opening, and the same run merged                                          */
/* ------------------------------------------------------------------------ */

static ib_status open_row(race *s, size_t i, ib_gen **g, ib_error *why)
{
    double t0 = ib__now_ms();
    *g = NULL;
    ib_status st = s->cfg->open(i, s->cfg->user, g, why);
    if (st != IB_OK) {
        ib__gen_destroy(*g);
        *g = NULL;
    }
    s->r->rows[i].step_ms[IB_BEST_SERVE_STEP_OPEN] += ib__now_ms() - t0;
    return st;
}

static void close_row(race *s, size_t i, ib_gen *g)
{
    double t0 = ib__now_ms();
    ib__gen_destroy(g);
    s->r->rows[i].step_ms[IB_BEST_SERVE_STEP_OPEN] += ib__now_ms() - t0;
}

static bool same_settings(const ib_option_list *a, const ib_option_list *b)
{
    if (a->n != b->n) return false;
    for (size_t k = 0; k < a->n; k++)
        if (strcmp(a->items[k].key, b->items[k].key) || strcmp(a->items[k].value, b->items[k].value))
            return false;
    return true;
}

/* Row i's model set to its slots at the schedule's longest request, and
 * what it then runs as: the settings its backend states (llama.cpp's
 * n_batch and n_ubatch clamped to the context), its slots, and its chunk
 * in effect: a step takes at most n_batch tokens and at most the prompt
 * tokens its slots can hold, so a chunk past either runs as that. */
static ib_status settle(race *s, size_t i, ib_gen *g, ib_error *why)
{
    const ib_best_serve_candidate *c = &s->cfg->candidates[i];
    ib_best_serve_row *row = &s->r->rows[i];
    int32_t prompt, request;
    longest(&s->cfg->serve, &prompt, &request);
    int32_t ctx = s->cfg->serve.ctx_per_slot > 0 ? s->cfg->serve.ctx_per_slot : request;
    double t0 = ib__now_ms();
    ib_status st = g->ops->set_sequences(g, c->slots, ctx, why);
    row->step_ms[IB_BEST_SERVE_STEP_OPEN] += ib__now_ms() - t0;
    IB_TRY(st);
    s->ran[i] = g->info.options;
    int64_t chunk = c->prefill_chunk;
    if (chunk > g->info.n_batch) chunk = g->info.n_batch;
    if (chunk > (int64_t)c->slots * prompt) chunk = (int64_t)c->slots * prompt;
    row->slots = c->slots;
    row->prefill_chunk = (int32_t)chunk;
    if (!s->r->info.model[0]) s->r->info = g->info;
    return IB_OK;
}

/* The first earlier row settled that runs as row i does, -1 none. */
static int same_run(const race *s, size_t i)
{
    const ib_best_serve_row *row = &s->r->rows[i];
    for (size_t j = 0; j < i; j++) {
        const ib_best_serve_row *o = &s->r->rows[j];
        if (o->slots > 0 && o->stage != IB_BEST_MERGED && o->slots == row->slots &&
            o->prefill_chunk == row->prefill_chunk && same_settings(&s->ran[j], &s->ran[i]))
            return (int)j;
    }
    return -1;
}

static void label_as_run(race *s, size_t i)
{
    ib_best_serve_row *row = &s->r->rows[i];
    char ran[sizeof row->label] = "";
    if (!s->cfg->label_ran) return;
    s->cfg->label_ran(i, s->cfg->user, &s->ran[i], row->prefill_chunk, ran, sizeof ran);
    if (!ran[0] || !strcmp(ran, row->label)) return;
    ib__strlcpy(row->asked, row->label, sizeof row->asked);
    ib__strlcpy(row->label, ran, sizeof row->label);
}

/* ------------------------------------------------------------------------ */
/* One serving run of a row                                                  */
/* ------------------------------------------------------------------------ */

/* Row i's figures from res (served n of the schedule's requests). */
static void keep_figures(ib_best_serve_row *row, const ib_gen_serve_result *res, bool final)
{
    row->final = final;
    row->requests = res->n_requests;
    row->completed = res->n_completed;
    row->n_good = res->n_good;
    row->goodput_rate = res->n_completed ? res->goodput_rate : NAN;
    row->good_share = res->good_share;
    row->output_tokens_per_s = res->output_tokens_per_s;
    row->ttft = res->ttft;
    row->tpot = res->tpot;
    row->e2e = res->e2e;
}

/* Serves `requests` of the schedule on row i (opened and closed here),
 * watched for its step's bound. *res holds the run (freed by the caller);
 * *measured: it served the whole schedule asked. */
static ib_status serve_row(race *s, size_t i, ib_best_serve_step step, int64_t requests,
                           ib_gen_serve_result *res, bool *measured, ib_error *err)
{
    ib_best_serve_row *row = &s->r->rows[i];
    const ib_best_serve_candidate *c = &s->cfg->candidates[i];
    memset(res, 0, sizeof *res);
    *measured = false;
    ib_gen *g;
    ib_error why = { { 0 } };
    ib_status opened = open_row(s, i, &g, &why);
    if (opened != IB_OK) {
        row->stage = IB_BEST_FAILED;
        row->status = opened;
        ib__strlcpy(row->why, why.message, sizeof row->why);
        return IB_OK;
    }
    ib_gen_serve_config sc = s->cfg->serve;
    sc.slots = c->slots;
    sc.prefill_chunk = c->prefill_chunk;
    if (sc.arrivals == IB_ARRIVALS_TRACE)
        sc.n_trace = (size_t)requests;
    else
        sc.requests = requests;
    s->forward = sc.run.progress;
    s->forward_user = sc.run.progress_user;
    sc.run.progress = watch;
    sc.run.progress_user = s;
    s->stop = user_stop(s);
    sc.run.cancel = &s->stop;
    s->clock = &g->clock;
    s->left_ms = step_left_ms(s, step);
    s->t0_ms = ib__gen_now_ms(g);
    ib_status st = ib_measure_gen_serve(g, &sc, res, &why);
    row->step_ms[step] += ib__gen_now_ms(g) - s->t0_ms;
    close_row(s, i, g);
    if (res->requests) keep_figures(row, res, step == IB_BEST_SERVE_STEP_FINAL);
    if (st == IB_ERR_INTERRUPTED && user_stop(s)) {
        *err = why;
        return st;
    }
    if (st == IB_ERR_INTERRUPTED) { /* the bound: what it served stands, unranked */
        char lead[96];
        snprintf(lead, sizeof lead, "cut after %zu of %lld requests:", res->n_completed, (long long)requests);
        s->r->steps_bounded |= 1u << step;
        row->stage = IB_BEST_NOT_MEASURED;
        bound_why(s, step, lead, row->why, sizeof row->why);
        return IB_OK;
    }
    if (st != IB_OK) {
        row->stage = st == IB_ERR_DEVICE_OOM || st == IB_ERR_UNSUPPORTED ? IB_BEST_SKIPPED : IB_BEST_FAILED;
        row->status = st;
        ib__strlcpy(row->why, why.message[0] ? why.message : ib_status_str(st), sizeof row->why);
        return IB_OK;
    }
    *measured = true;
    return IB_OK;
}

/* Serves row i in step, or marks it not measured when the step has no
 * time left. */
static ib_status measure(race *s, size_t i, ib_best_serve_step step, int64_t requests,
                         ib_gen_serve_result *res, bool *measured, ib_error *err)
{
    memset(res, 0, sizeof *res);
    *measured = false;
    if (step_left_ms(s, step) <= 0) {
        s->r->steps_bounded |= 1u << step;
        s->r->rows[i].stage = IB_BEST_NOT_MEASURED;
        bound_why(s, step, "not measured:", s->r->rows[i].why, sizeof s->r->rows[i].why);
        return IB_OK;
    }
    return serve_row(s, i, step, requests, res, measured, err);
}

/* ------------------------------------------------------------------------ */
/* The race                                                                  */
/* ------------------------------------------------------------------------ */

/* Whether a ranks above b: more goodput, then the lower end-to-end p99. */
static bool better(const ib_best_serve_row *a, const ib_best_serve_row *b)
{
    if (a->goodput_rate != b->goodput_rate) return a->goodput_rate > b->goodput_rate;
    return a->e2e.p99 < b->e2e.p99;
}

static bool racing(const ib_best_serve_row *row) { return row->stage == IB_BEST_NOT_TRIED && row->slots > 0; }

/* Opens and settles row i the first time: skipped when it does not open
 * or its slots do not fit, merged when it runs as an earlier row. */
static bool distinct_run(race *s, size_t i)
{
    ib_best_serve_row *row = &s->r->rows[i];
    ib_gen *g;
    ib_error why = { { 0 } };
    ib_status st = open_row(s, i, &g, &why);
    if (st == IB_OK) st = settle(s, i, g, &why);
    if (g) close_row(s, i, g);
    if (st != IB_OK) {
        row->slots = 0;
        row->stage = IB_BEST_SKIPPED;
        row->status = st;
        ib__strlcpy(row->why, why.message[0] ? why.message : ib_status_str(st), sizeof row->why);
        return false;
    }
    int same = same_run(s, i);
    if (same < 0) {
        label_as_run(s, i);
        return true;
    }
    row->stage = IB_BEST_MERGED;
    row->same_as = same;
    char ran[sizeof row->label]; /* another row's, copied: the compiler cannot tell */
    ib__strlcpy(ran, s->r->rows[same].label, sizeof ran);
    snprintf(row->why, sizeof row->why, "runs as #%d (%.160s): the same settings in effect, raced once",
             same + 1, ran);
    s->r->merged++;
    return false;
}

static ib_status screen(race *s, ib_error *err)
{
    for (size_t i = 0; i < s->r->n_rows; i++) {
        IB_FAIL_IF(user_stop(s), err, IB_ERR_INTERRUPTED, "interrupted");
        if (!distinct_run(s, i)) continue;
        ib_gen_serve_result res;
        bool measured;
        ib_status st =
            measure(s, i, IB_BEST_SERVE_STEP_SCREEN, (int64_t)s->r->screen_requests, &res, &measured, err);
        ib_gen_serve_result_free(&res);
        IB_TRY(st);
    }
    return IB_OK;
}

/* After screening: only the `finalists` best go on. */
static void keep_best(race *s)
{
    ib_best_serve_result *r = s->r;
    int lead = -1;
    for (size_t i = 0; i < r->n_rows; i++)
        if (racing(&r->rows[i]) && (lead < 0 || better(&r->rows[i], &r->rows[lead]))) lead = (int)i;
    for (size_t i = 0; i < r->n_rows; i++) {
        ib_best_serve_row *row = &r->rows[i];
        if (!racing(row)) continue;
        size_t above = 0;
        for (size_t j = 0; j < r->n_rows; j++)
            above += j != i && racing(&r->rows[j]) && better(&r->rows[j], row);
        if (above < s->cfg->finalists) continue;
        row->stage = IB_BEST_DROPPED;
        char leader[sizeof row->label]; /* another row's, copied: the compiler cannot tell */
        ib__strlcpy(leader, r->rows[lead].label, sizeof leader);
        snprintf(row->why, sizeof row->why,
                 "screening: goodput %.4g requests/s (%.1f%% within the targets), not among the %zu best "
                 "(%.120s: %.4g)",
                 row->goodput_rate, 100 * row->good_share, s->cfg->finalists, leader,
                 r->rows[lead].goodput_rate);
    }
}

/* The finals: each finalist serves the whole schedule; the winner's run is
 * kept whole. */
static ib_status finals(race *s, ib_error *err)
{
    ib_best_serve_result *r = s->r;
    bool finalist[IB_BEST_SERVE_MAX_CANDIDATES];
    for (size_t i = 0; i < r->n_rows; i++) finalist[i] = racing(&r->rows[i]);
    for (size_t i = 0; i < r->n_rows; i++) {
        if (!finalist[i]) continue;
        IB_FAIL_IF(user_stop(s), err, IB_ERR_INTERRUPTED, "interrupted");
        ib_gen_serve_result res;
        bool measured;
        ib_status st =
            measure(s, i, IB_BEST_SERVE_STEP_FINAL, (int64_t)r->final_requests, &res, &measured, err);
        if (measured) {
            r->rows[i].stage = IB_BEST_FINALIST;
            if (r->winner < 0 || better(&r->rows[i], &r->rows[r->winner])) {
                r->winner = (int)i;
                ib_gen_serve_result_free(&r->winner_serve);
                r->winner_serve = res; /* its arrays move with it */
                memset(&res, 0, sizeof res);
            }
        }
        ib_gen_serve_result_free(&res);
        IB_TRY(st);
    }
    return IB_OK;
}

/* The winner of the finals; each other finalist says by how much it lost. */
static void verdicts(ib_best_serve_result *r)
{
    if (r->winner < 0) return;
    const ib_best_serve_row *w = &r->rows[r->winner];
    r->rows[r->winner].stage = IB_BEST_WINNER;
    for (size_t i = 0; i < r->n_rows; i++) {
        ib_best_serve_row *row = &r->rows[i];
        if (row->stage != IB_BEST_FINALIST) continue;
        if (row->goodput_rate == w->goodput_rate)
            snprintf(row->why, sizeof row->why,
                     "finals: the same goodput (%.4g requests/s), end-to-end p99 %.4g ms against %.4g",
                     row->goodput_rate, row->e2e.p99, w->e2e.p99);
        else
            snprintf(
                row->why, sizeof row->why,
                "finals: goodput %+.1f%% against the winner (%.4g against %.4g requests/s; %zu against %zu "
                "requests within the targets)",
                100 * (row->goodput_rate / w->goodput_rate - 1), row->goodput_rate, w->goodput_rate,
                row->n_good, w->n_good);
    }
}

static void init_result(const ib_best_serve_config *cfg, ib_best_serve_result *out)
{
    memset(out, 0, sizeof *out);
    out->winner = -1;
    out->n_rows = cfg && cfg->n_candidates <= IB_BEST_SERVE_MAX_CANDIDATES ? cfg->n_candidates : 0;
    if (!cfg) return;
    out->finalists = cfg->finalists;
    out->step_max_ms = cfg->step_max_ms;
    out->final_requests = schedule_size(&cfg->serve);
    size_t screen = cfg->screen_requests > 0 ? (size_t)cfg->screen_requests : out->final_requests / 4;
    out->screen_requests = screen < 1 ? 1 : screen > out->final_requests ? out->final_requests : screen;
    for (size_t i = 0; i < out->n_rows; i++) {
        ib_best_serve_row *row = &out->rows[i];
        const char *label = cfg->candidates ? cfg->candidates[i].label : NULL;
        ib__strlcpy(row->label, label ? label : "?", sizeof row->label);
        row->same_as = -1;
        row->goodput_rate = NAN;
    }
}

ib_status ib_measure_best_serve(const ib_best_serve_config *cfg, ib_best_serve_result *out, ib_error *err)
{
    IB_FAIL_IF(!out, err, IB_ERR_INVALID_ARG, "best: no result");
    init_result(cfg, out);
    IB_TRY(validate(cfg, err));
    race *s = calloc(1, sizeof *s);
    IB_FAIL_IF(!s, err, IB_ERR_NO_MEMORY, "out of host memory");
    s->cfg = cfg;
    s->r = out;
    ib_status st = screen(s, err);
    if (st == IB_OK) keep_best(s);
    if (st == IB_OK) st = finals(s, err);
    verdicts(out);
    free(s);
    for (size_t i = 0; i < out->n_rows; i++) {
        for (int k = 0; k < IB_BEST_SERVE_STEPS; k++) out->step_ms[k] += out->rows[i].step_ms[k];
        out->not_measured += out->rows[i].stage == IB_BEST_NOT_MEASURED;
    }
    if (st != IB_OK || out->not_measured > 0) {
        out->partial = true;
        out->stop_status = st;
    }
    return st;
}
