/* Throughput, pitfalls and generation repeated in sessions (fresh processes): their
 * documents merged into one (the first measured session's workload,
 * config and environment, each session's own figures in sessions.runs,
 * the figures across sessions in sessions.figures) and its text report.
 * Latency's merge is in sessions_report.c; ib_sessions_merge picks. */
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys of a session's document that describe that session only. */
static const char *const throughput_keys[] = { "search",
                                               "sweep_ms",
                                               "curve",
                                               "peak",
                                               "knee",
                                               "budget",
                                               "warnings",
                                               "notes",
                                               "partial",
                                               "stop_reason",
                                               "timer_resolution_ms",
                                               "most_efficient" };
static const char *const pitfalls_keys[] = {
    "rows", "warnings", "notes", "partial", "stop_reason", "energy"
};
static const char *const generation_keys[] = { "cold_prefill_ms",
                                               "cold_step_ms",
                                               "warmup",
                                               "runs",
                                               "ttft_ms",
                                               "token_ms",
                                               "request_ms",
                                               "sample_ms",
                                               "prompt_tokens_per_s",
                                               "tokens_per_s",
                                               "tpot_ms",
                                               "timer_resolution_ms",
                                               "precision",
                                               "samples",
                                               "position_p50_ms",
                                               "sequences",
                                               "pitfalls",
                                               "decode_energy",
                                               "decode_cpu_energy",
                                               "prefill_energy",
                                               "warnings",
                                               "notes",
                                               "partial",
                                               "stop_reason" };

/* What a command's sessions merge with: its schema and per-session keys,
 * and how its figures are made from the entries of sessions.runs. */
typedef struct command_merge {
    const char *schema;
    const char *const *keys;
    size_t n_keys;
    void (*figures)(cJSON *sessions, const cJSON *runs, size_t k);
} command_merge;

static bool entry_failed(const cJSON *e)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "failed"));
}

static void add_figure(cJSON *figures, const ib__session_figure *f, size_t k)
{
    cJSON_AddItemToArray(figures, ib__session_figure_json(f, k));
}

/* ------------------------------------------------------------------------ */
/* Throughput                                                                */
/* ------------------------------------------------------------------------ */

/* The batch most sessions found best (their peaks); on a tie the smaller
 * batch, which costs less latency for as much throughput. 0: none. */
static double best_batch(const double *peak_batch, size_t k)
{
    double best = 0;
    size_t best_votes = 0;
    for (size_t i = 0; i < k; i++) {
        if (!isfinite(peak_batch[i])) continue;
        size_t votes = 0;
        for (size_t j = 0; j < k; j++) votes += peak_batch[j] == peak_batch[i];
        if (votes > best_votes || (votes == best_votes && peak_batch[i] < best)) {
            best = peak_batch[i];
            best_votes = votes;
        }
    }
    return best;
}

/* A session's back-to-back inputs/s at batch, NaN when it has none. */
static double items_per_s_at(const cJSON *entry, double batch)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(entry, "curve"))
    {
        if (ib__json_num(p, "batch") == batch) return ib__json_num(p, "items_per_s");
    }
    return NAN;
}

/* A session's energy per input at batch (its curve's point), NaN when it
 * has none. */
static double joules_per_item_at(const cJSON *entry, double batch)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(entry, "curve"))
    {
        if (ib__json_num(p, "batch") == batch)
            return ib__json_num(cJSON_GetObjectItemCaseSensitive(p, "energy"), "joules_per_item");
    }
    return NAN;
}

/* A session's peak: its batch and inputs/s; NaN when it has none. */
static void session_peak(const cJSON *entry, double *batch, double *items_per_s)
{
    const cJSON *peak = cJSON_GetObjectItemCaseSensitive(entry, "peak");
    *batch = entry_failed(entry) ? NAN : ib__json_num(peak, "batch");
    *items_per_s = entry_failed(entry) ? NAN : ib__json_num(peak, "items_per_s");
}

/* The peak of each session (at its own best batch), and every session's
 * inputs/s at the batch most chose: how much each varies between
 * sessions. A back-to-back figure is one timing of many runs (one event
 * pair): its run-to-run part is in each session's value, not apart from
 * it, so its interval resamples the sessions. Then each session's energy
 * per input at that batch, where the sessions have a figure (the interval
 * of the energy across sessions, docs/energy.md). */
static void throughput_figures(cJSON *sessions, const cJSON *runs, size_t k)
{
    double *batch = malloc(k * sizeof *batch), *peak = malloc(k * sizeof *peak), *at = malloc(k * sizeof *at);
    double *jpi = malloc(k * sizeof *jpi);
    cJSON *figures = cJSON_AddArrayToObject(sessions, "figures");
    if (!batch || !peak || !at || !jpi) {
        free(batch), free(peak), free(at), free(jpi);
        return;
    }
    for (size_t i = 0; i < k; i++) session_peak(cJSON_GetArrayItem(runs, (int)i), &batch[i], &peak[i]);
    double best = best_batch(batch, k);
    for (size_t i = 0; i < k; i++) {
        const cJSON *e = cJSON_GetArrayItem(runs, (int)i);
        at[i] = best > 0 && !entry_failed(e) ? items_per_s_at(e, best) : NAN;
        jpi[i] = best > 0 && !entry_failed(e) ? joules_per_item_at(e, best) : NAN;
    }
    ib__json_add_number(sessions, "best_batch", best > 0 ? best : NAN);
    char at_label[64];
    snprintf(at_label, sizeof at_label, "at batch %.0f", best);
    ib__session_figure f[] = {
        { "peak_batch", "peak batch", "", batch, NULL, true },
        { "peak_items_per_s", "peak", "inputs/s", peak, NULL, false },
        { "items_per_s_at_best_batch", at_label, "inputs/s", at, NULL, false },
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) add_figure(figures, &f[i], k);
    char energy_label[64];
    snprintf(energy_label, sizeof energy_label, "J/input, batch %.0f", best);
    ib__add_energy_figure(figures, "joules_per_item_at_best_batch", energy_label, jpi, k);
    free(batch), free(peak), free(at), free(jpi);
}

/* ------------------------------------------------------------------------ */
/* Pitfalls                                                                  */
/* ------------------------------------------------------------------------ */

/* The median of row r (an index of "rows") of a session; NaN when none. */
static double row_median(const cJSON *entry, int r)
{
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(entry, "rows"), r);
    if (entry_failed(entry) || !row) return NAN;
    return ib__json_num(cJSON_GetObjectItemCaseSensitive(row, "stats"), "p50");
}

/* A session's correct runs (its rows[0].samples_ms), NULL when it failed. */
static const cJSON *correct_samples(const cJSON *entry)
{
    if (entry_failed(entry)) return NULL;
    const cJSON *correct =
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(entry, "rows"), IB_PITFALL_CORRECT);
    return cJSON_GetObjectItemCaseSensitive(correct, "samples_ms");
}

/* The correct runs of each session into s[0..k) (ms NULL where a session
 * has none), read into one block that the caller frees. */
static double *correct_runs(const cJSON *runs, size_t k, ib_session_sample *s)
{
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        n += (size_t)cJSON_GetArraySize(correct_samples(cJSON_GetArrayItem(runs, (int)i)));
    double *block = malloc((n ? n : 1) * sizeof *block), *at = block;
    for (size_t i = 0; block && i < k; i++) {
        const cJSON *v;
        s[i] = (ib_session_sample){ at, 0 };
        cJSON_ArrayForEach(v, correct_samples(cJSON_GetArrayItem(runs, (int)i))) at[s[i].n++] =
            v->valuedouble;
        at += s[i].n;
        if (s[i].n == 0) s[i].ms = NULL;
    }
    return block;
}

/* Whether every session with a median of the correct row has its runs
 * (and one has): then its interval has two levels. */
static bool all_runs_known(const ib_session_sample *s, const double *median, size_t k)
{
    bool any = false;
    for (size_t i = 0; i < k; i++) {
        if (isfinite(median[i]) && !s[i].ms) return false;
        any = any || s[i].ms;
    }
    return any;
}

/* A session's energy per input of the correct row, NaN when none. */
static double correct_joules_per_item(const cJSON *entry)
{
    if (entry_failed(entry)) return NAN;
    const cJSON *energy = cJSON_GetObjectItemCaseSensitive(entry, "energy");
    return ib__json_num(cJSON_GetObjectItemCaseSensitive(energy, "correct"), "joules_per_item");
}

/* Each method's median in every session (the correct one with its runs),
 * then the rows across sessions; the correct row's energy per input where
 * the sessions have a figure (its interval across sessions). */
static void pitfalls_figures(cJSON *sessions, const cJSON *runs, size_t k)
{
    cJSON *figures = cJSON_AddArrayToObject(sessions, "figures");
    const cJSON *first = NULL, *e;
    cJSON_ArrayForEach(e, runs) if (!first && !entry_failed(e)) first = e;
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(first, "rows");
    double *med = malloc(k * sizeof *med);
    ib_session_sample *s = malloc(k * sizeof *s);
    double *block = s ? correct_runs(runs, k, s) : NULL;
    for (int r = 0; med && block && r < cJSON_GetArraySize(rows); r++) {
        const cJSON *row = cJSON_GetArrayItem(rows, r);
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "applies"))) continue;
        for (size_t i = 0; i < k; i++) med[i] = row_median(cJSON_GetArrayItem(runs, (int)i), r);
        char key[64];
        snprintf(key, sizeof key, "%s_median_ms", cJSON_GetStringValue(cJSON_GetObjectItem(row, "kind")));
        bool has_runs = r == IB_PITFALL_CORRECT && all_runs_known(s, med, k);
        ib__session_figure f = {
            key, cJSON_GetStringValue(cJSON_GetObjectItem(row, "name")), "ms", med, has_runs ? s : NULL, false
        };
        add_figure(figures, &f, k);
    }
    for (size_t i = 0; med && i < k; i++) med[i] = correct_joules_per_item(cJSON_GetArrayItem(runs, (int)i));
    if (med) ib__add_energy_figure(figures, "correct_joules_per_item", "energy per input", med, k);
    free(block);
    free(s);
    free(med);
}

/* ------------------------------------------------------------------------ */
/* Generation                                                                */
/* ------------------------------------------------------------------------ */

/* A session's stat of a figure (its "ttft_ms" or "token_ms" object), NaN
 * when it failed or has none. */
static double session_stat(const cJSON *entry, const char *key, const char *stat)
{
    return entry_failed(entry) ? NAN : ib__json_num(cJSON_GetObjectItemCaseSensitive(entry, key), stat);
}

/* The numbers of a session's samples.key, nested arrays (every token of
 * every run) flattened, appended at block[*n] (NULL: only counted). */
static void flatten(const cJSON *a, double *block, size_t *n)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, a)
    {
        if (cJSON_IsArray(v))
            flatten(v, block, n);
        else if (cJSON_IsNumber(v)) {
            if (block) block[*n] = v->valuedouble;
            (*n)++;
        }
    }
}

static const cJSON *session_samples(const cJSON *entry, const char *key)
{
    if (entry_failed(entry)) return NULL;
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(entry, "samples"), key);
}

/* The runs of samples.key of each session into s[0..k) (ms NULL where a
 * session has none), read into one block that the caller frees. */
static double *session_runs(const cJSON *runs, size_t k, const char *key, ib_session_sample *s)
{
    size_t n = 0;
    for (size_t i = 0; i < k; i++) flatten(session_samples(cJSON_GetArrayItem(runs, (int)i), key), NULL, &n);
    double *block = malloc((n ? n : 1) * sizeof *block), *at = block;
    for (size_t i = 0; block && i < k; i++) {
        s[i] = (ib_session_sample){ at, 0 };
        flatten(session_samples(cJSON_GetArrayItem(runs, (int)i), key), at, &s[i].n);
        at += s[i].n;
        if (s[i].n == 0) s[i].ms = NULL;
    }
    return block;
}

/* One figure of generation: the median of a timed figure in each session
 * with its runs (two levels: TTFT, every token, a request), or a rate of
 * one value a session (tokens / time). */
typedef struct gen_figure {
    const char *key, *label, *unit;
    const char *source; /* the session's member: a stats object, or a number */
    bool timed;         /* source is stats with samples.<source>: its p50 with its runs */
    const char *member; /* source is an energy object: this number of it (given only where a
                           session has one: docs/energy.md) */
} gen_figure;

static const gen_figure gen_figures[] = {
    { "ttft_median_ms", "TTFT median", "ms", "ttft_ms", true, NULL },
    { "token_median_ms", "per-token median", "ms", "token_ms", true, NULL },
    { "request_median_ms", "request median", "ms", "request_ms", true, NULL },
    { "tokens_per_s", "generation", "tokens/s", "tokens_per_s", false, NULL },
    { "prompt_tokens_per_s", "prompt", "tokens/s", "prompt_tokens_per_s", false, NULL },
    { "decode_joules_per_token", "decode energy", "J/token", "decode_energy", false, "joules_per_item" },
    { "prefill_joules_per_token", "prefill energy", "J/token", "prefill_energy", false, "joules_per_item" },
};

/* A session's number: its member source (a number), or member of its
 * object source; NaN when it failed or has none. */
static double session_number(const cJSON *e, const gen_figure *g)
{
    if (entry_failed(e)) return NAN;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, g->source);
    return g->member ? ib__json_num(v, g->member) : ib__json_num(e, g->source);
}

static void add_gen_figure(cJSON *figures, const gen_figure *g, const cJSON *runs, size_t k, double *v,
                           ib_session_sample *s)
{
    for (size_t i = 0; i < k; i++) {
        const cJSON *e = cJSON_GetArrayItem(runs, (int)i);
        v[i] = g->timed ? session_stat(e, g->source, "p50") : session_number(e, g);
    }
    if (g->member && !ib__any_finite(v, k)) return;
    double *block = g->timed ? session_runs(runs, k, g->source, s) : NULL;
    bool has_runs = block && all_runs_known(s, v, k);
    ib__session_figure f = { g->key, g->label, g->unit, v, has_runs ? s : NULL, false };
    add_figure(figures, &f, k);
    free(block);
}

/* TTFT, the per-token and the request medians with their two-level
 * intervals (the first, TTFT, is what --precision across sessions meets),
 * then generation and prompt tokens/s across sessions. */
static void generation_figures(cJSON *sessions, const cJSON *runs, size_t k)
{
    cJSON *figures = cJSON_AddArrayToObject(sessions, "figures");
    double *v = malloc(k * sizeof *v);
    ib_session_sample *s = malloc(k * sizeof *s);
    for (size_t j = 0; v && s && j < sizeof gen_figures / sizeof gen_figures[0]; j++)
        add_gen_figure(figures, &gen_figures[j], runs, k, v, s);
    free(v);
    free(s);
}

/* ------------------------------------------------------------------------ */
/* The merge                                                                 */
/* ------------------------------------------------------------------------ */

static const command_merge throughput_merge = { "inferbench.throughput/2", throughput_keys,
                                                sizeof throughput_keys / sizeof throughput_keys[0],
                                                throughput_figures };
static const command_merge pitfalls_merge = { "inferbench.pitfalls/2", pitfalls_keys,
                                              sizeof pitfalls_keys / sizeof pitfalls_keys[0],
                                              pitfalls_figures };
static const char *const gen_serve_keys[] = { "figures", "partial", "stop_reason" };
static const command_merge gen_serve_merge = { "inferbench.serve_generative/1", gen_serve_keys,
                                               sizeof gen_serve_keys / sizeof gen_serve_keys[0],
                                               ib__gen_serve_session_figures };
static const command_merge generation_merge = { "inferbench.generation/1", generation_keys,
                                                sizeof generation_keys / sizeof generation_keys[0],
                                                generation_figures };

/* Session i's document, or NULL when it has none; err when it is not one
 * of this command. */
static ib_status parse_doc(const command_merge *m, const ib_session_outcome *o, size_t i, cJSON **root,
                           ib_error *err)
{
    *root = NULL;
    if (!o->doc) return IB_OK;
    *root = cJSON_ParseWithLength(o->doc, o->len);
    const char *schema = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(*root, "schema"));
    if (schema && !strcmp(schema, m->schema)) return IB_OK;
    cJSON_Delete(*root);
    *root = NULL;
    return ib__fail(err, IB_ERR_INVALID_ARG, "session %zu: not an %s result", i + 1, m->schema);
}

static bool session_partial(const cJSON *entry)
{
    return entry_failed(entry) || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(entry, "partial"));
}

/* base: the first measured session's root, taken over; roots[i] of the
 * others are consumed too. */
static char *merge_roots(const command_merge *m, const ib_session_outcome *s, cJSON **roots, size_t k,
                         size_t requested, const char *stop_reason, cJSON *base)
{
    cJSON *runs = cJSON_CreateArray();
    size_t measured = 0;
    bool incomplete = k < requested;
    for (size_t i = 0; i < k; i++) {
        cJSON *e = ib__session_entry(&s[i], roots[i], i, m->keys, m->n_keys);
        measured += roots[i] != NULL;
        incomplete = incomplete || session_partial(e);
        cJSON_AddItemToArray(runs, e);
        if (roots[i] != base) cJSON_Delete(roots[i]);
    }
    ib__sessions_count c = { requested, k, measured, incomplete, stop_reason, runs };
    cJSON *sessions = ib__sessions_object(base, &c);
    m->figures(sessions, runs, k);
    cJSON_AddItemToObject(sessions, "runs", runs);
    return ib__json_finish(base);
}

static char *merge_command(const command_merge *m, const ib_session_outcome *s, size_t k, size_t requested,
                           const char *stop_reason, ib_error *err)
{
    cJSON **roots = calloc(k, sizeof *roots);
    if (!roots) {
        ib__fail(err, IB_ERR_NO_MEMORY, "out of memory merging sessions");
        return NULL;
    }
    ib_status st = IB_OK;
    cJSON *base = NULL;
    for (size_t i = 0; i < k && st == IB_OK; i++) {
        st = parse_doc(m, &s[i], i, &roots[i], err);
        if (!base) base = roots[i];
    }
    char *doc = NULL;
    if (st == IB_OK && base)
        doc = merge_roots(m, s, roots, k, requested, stop_reason, base);
    else {
        if (st == IB_OK) ib__fail(err, IB_ERR_RUNTIME, "no session measured anything");
        for (size_t i = 0; i < k; i++) cJSON_Delete(roots[i]);
    }
    free(roots);
    return doc;
}

char *ib_sessions_merge(ib_result_kind command, const ib_session_outcome *s, size_t k, size_t requested,
                        const char *stop_reason, ib_error *err)
{
    if (!s || k == 0 || k > IB_SESSIONS_MAX || requested < k) {
        ib__fail(err, IB_ERR_INVALID_ARG, "no sessions to merge");
        return NULL;
    }
    switch (command) {
    case IB_RESULT_LATENCY: return ib__latency_sessions_merge(s, k, requested, stop_reason, err);
    case IB_RESULT_THROUGHPUT: return merge_command(&throughput_merge, s, k, requested, stop_reason, err);
    case IB_RESULT_PITFALLS: return merge_command(&pitfalls_merge, s, k, requested, stop_reason, err);
    case IB_RESULT_GENERATION: return merge_command(&generation_merge, s, k, requested, stop_reason, err);
    case IB_RESULT_GEN_SERVE: return merge_command(&gen_serve_merge, s, k, requested, stop_reason, err);
    default: break;
    }
    ib__fail(err, IB_ERR_INVALID_ARG, "no sessions are merged for this kind of result");
    return NULL;
}

char *ib_sessions_merge_json(const ib_session_outcome *s, size_t k, size_t requested, ib_error *err)
{
    return ib_sessions_merge(IB_RESULT_LATENCY, s, k, requested, NULL, err);
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

/* Each method across sessions: its geometric mean of session medians, its
 * error against the correct one, that error's range over the sessions, and
 * whether it lies inside the correct row's interval across sessions (then
 * it is no larger than what changes between sessions). */
static void text_methods(ib__sbuf *b, const cJSON *figures, size_t k)
{
    const cJSON *correct = ib__figure_named(figures, "correct_median_ms"), *f;
    if (!correct) return;
    double ref = ib__json_num(correct, "geomean");
    double lo = ib__figure_aggregate(correct, IB__FIGURE_CI_LOW),
           hi = ib__figure_aggregate(correct, IB__FIGURE_CI_HIGH);
    ib__sbuf_printf(b, "\n%-28s %12s %9s  %s\n", "method (geomean of sessions)", "ms", "error",
                    "error in each session");
    cJSON_ArrayForEach(f, figures)
    {
        const char *key = cJSON_GetStringValue(cJSON_GetObjectItem(f, "key"));
        size_t len = strlen(key ? key : "");
        if (len < 10 || strcmp(key + len - 10, "_median_ms")) continue; /* not a method (the energy) */
        double m = ib__json_num(f, "geomean"), emin = INFINITY, emax = -INFINITY;
        for (size_t i = 0; i < k; i++) {
            double e = ib__figure_value(f, i) / ib__figure_value(correct, i) - 1;
            if (isfinite(e)) emin = fmin(emin, e), emax = fmax(emax, e);
        }
        ib__sbuf_printf(b, "%-28.28s %12.4g", cJSON_GetStringValue(cJSON_GetObjectItem(f, "label")), m);
        if (f == correct) {
            if (isfinite(lo))
                ib__sbuf_printf(b, "  95%% CI [%.4g, %.4g] ms (across sessions: both levels)\n", lo, hi);
            else
                ib__sbuf_printf(b, "  (one session: no interval across sessions)\n");
            continue;
        }
        ib__sbuf_printf(b, " %+8.1f%%", ib__signed_shown(100 * (m / ref - 1), 1));
        if (isfinite(emin))
            ib__sbuf_printf(b, "  %+.1f%% to %+.1f%%", ib__signed_shown(100 * emin, 1),
                            ib__signed_shown(100 * emax, 1));
        if (isfinite(lo) && m >= lo && m <= hi) ib__sbuf_printf(b, "  inside the correct row's interval");
        ib__sbuf_printf(b, "\n");
    }
}

char *ib__sessions_report_text_doc(const char *doc)
{
    cJSON *root = cJSON_Parse(doc);
    const cJSON *sessions = cJSON_GetObjectItemCaseSensitive(root, "sessions");
    if (!sessions) {
        cJSON_Delete(root);
        return NULL;
    }
    const char *schema = cJSON_GetStringValue(cJSON_GetObjectItem(root, "schema"));
    bool pitfalls = schema && !strcmp(schema, "inferbench.pitfalls/2");
    bool generation = schema && !strcmp(schema, "inferbench.generation/1");
    bool serve = schema && !strcmp(schema, "inferbench.serve_generative/1");
    const cJSON *figures = cJSON_GetObjectItemCaseSensitive(sessions, "figures");
    size_t k = (size_t)ib__json_num(sessions, "count"),
           requested = (size_t)ib__json_num(sessions, "requested");
    ib__sbuf b = { 0 };
    /* A generative model's serve states its device in its info. */
    const cJSON *device = cJSON_GetObjectItem(serve ? cJSON_GetObjectItem(root, "info") : root, "device");
    /* Over HTTP (serve --endpoint), the server's URL in place of a device. */
    const char *url = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "endpoint"), "url"));
    ib__sbuf_printf(
        &b, url ? "inferbench %s: %s at %s (an OpenAI-compatible endpoint)" : "inferbench %s: %s, %s",
        pitfalls     ? "pitfalls"
        : generation ? "generate"
        : serve      ? "serve"
                     : "throughput",
        cJSON_GetStringValue(cJSON_GetObjectItem(root, "model")), url ? url : cJSON_GetStringValue(device));
    if (pitfalls)
        ib__sbuf_printf(&b, ", batch %.0f", ib__json_num(cJSON_GetObjectItem(root, "workload"), "batch"));
    const cJSON *settings = cJSON_GetObjectItem(root, "settings");
    if (generation)
        ib__sbuf_printf(&b, ", prompt %.0f tokens, %.0f new tokens from depth %.0f",
                        ib__json_num(settings, "prompt_tokens"), ib__json_num(settings, "new_tokens"),
                        ib__json_num(settings, "depth"));
    ib__sbuf_printf(&b, ", %zu sessions (each a fresh process)\n", k);
    const char *math = cJSON_GetStringValue(cJSON_GetObjectItem(root, "reference_math"));
    char reference[IB__REFERENCE_TEXT_LEN];
    if (pitfalls && math) /* the first session's: each session's own arithmetic is the same */
        ib__sbuf_printf(
            &b, "%s\n",
            ib__pitfalls_reference(reference, math,
                                   cJSON_IsTrue(cJSON_GetObjectItem(root, "reference_math_default"))));
    if (pitfalls) text_methods(&b, figures, k);
    ib__sessions_text_table(&b, sessions);
    if (!pitfalls && isfinite(ib__json_num(sessions, "best_batch")))
        ib__sbuf_printf(&b, "best batch: %.0f (the peak of most sessions)\n",
                        ib__json_num(sessions, "best_batch"));
    if (requested > k) ib__sbuf_printf(&b, "INCOMPLETE: %zu of %zu sessions ran\n", k, requested);
    const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(root, "stop_reason"));
    if (reason && cJSON_IsTrue(cJSON_GetObjectItem(root, "partial")))
        ib__sbuf_printf(&b, "PARTIAL: %s\n", reason);
    ib__sessions_footer(&b, ib__json_result_warning_bits(root));
    cJSON_Delete(root);
    return ib__sbuf_finish(&b);
}

double ib_sessions_precision(const char *doc)
{
    cJSON *root = doc ? cJSON_Parse(doc) : NULL;
    const cJSON *figures = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "sessions"), "figures");
    double p = ib__json_num(cJSON_GetArrayItem(figures, 0), "precision");
    cJSON_Delete(root);
    return p;
}
