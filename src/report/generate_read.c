/* A generation result read back (ib_gen_file_parse) and two of them
 * compared (ib_compare_gen_files, its text and JSON): what compare needs of
 * the JSON generate_report.c writes. */
#include "report/printer.h"
#include "core/energy.h"
#include "core/sessions.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_SCHEMA "inferbench.generation/1"

static ib_status bad(ib_error *err, const char *why)
{
    return ib__fail(err, IB_ERR_INVALID_ARG, "not an inferbench generation result: %s", why);
}

static void copy_string(const cJSON *o, const char *key, char *dst, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ib__strlcpy(dst, cJSON_IsString(v) ? v->valuestring : "", cap);
}

/* A count at key: 0 when absent, not a number or out of int32's range (a
 * setting compare only tells apart, never computes with). */
static int32_t read_int(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    bool in_range = cJSON_IsNumber(v) && v->valuedouble >= INT32_MIN && v->valuedouble <= INT32_MAX;
    return in_range ? (int32_t)v->valuedouble : 0;
}

/* A growing array of samples. */
typedef struct samples {
    double *v;
    size_t n, cap;
} samples;

/* The numbers of a (nested when nested) array, flattened onto *out. */
static ib_status read_samples(const cJSON *a, bool nested, samples *out, ib_error *err)
{
    if (!cJSON_IsArray(a)) return bad(err, "its samples are missing");
    for (const cJSON *row = a->child; row; row = row->next) {
        const cJSON *first = nested ? row->child : row, *end = nested ? NULL : row->next;
        if (nested && !cJSON_IsArray(row)) return bad(err, "a run's tokens are not an array");
        for (const cJSON *v = first; v != end; v = v->next) {
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return bad(err, "a sample is not a number");
            if (out->n == out->cap) {
                out->cap = out->cap ? 2 * out->cap : 1024;
                double *p = realloc(out->v, out->cap * sizeof *p);
                if (!p) return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading a generation result");
                out->v = p;
            }
            out->v[out->n++] = v->valuedouble;
        }
    }
    return IB_OK;
}

/* o.samples' TTFT and every token onto ttft and token. */
static ib_status read_runs(const cJSON *o, samples *ttft, samples *token, ib_error *err)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "samples");
    IB_TRY(read_samples(cJSON_GetObjectItemCaseSensitive(s, "ttft_ms"), false, ttft, err));
    return read_samples(cJSON_GetObjectItemCaseSensitive(s, "token_ms"), true, token, err);
}

/* o[key]'s figure (NaN, NaN when it has none) and, when note is still
 * empty and there is no figure, why not (the object's note). */
static ib_status read_energy(const cJSON *o, const char *key, double *joules_per_token, double *bound,
                             char *note, size_t cap, ib_error *err)
{
    return ib__energy_read_figure(cJSON_GetObjectItemCaseSensitive(o, key),
                                  "not an inferbench generation result: ", key, joules_per_token, bound, note,
                                  cap, err);
}

static ib_status read_session_energy(const cJSON *e, ib_gen_file_session *s, ib_gen_file *out, ib_error *err)
{
    IB_TRY(read_energy(e, "decode_energy", &s->decode_joules_per_token, &s->decode_energy_bound,
                       out->decode_energy_note, sizeof out->decode_energy_note, err));
    return read_energy(e, "prefill_energy", &s->prefill_joules_per_token, &s->prefill_energy_bound,
                       out->prefill_energy_note, sizeof out->prefill_energy_note, err);
}

/* Session entry e (not failed) onto the pooled runs, and into
 * out->sessions when it has runs of both kinds (a session without is not
 * one that measured: its runs are dropped too). */
static ib_status read_session(const cJSON *e, samples *ttft, samples *token, ib_gen_file *out, ib_error *err)
{
    size_t t0 = ttft->n, k0 = token->n;
    IB_TRY(read_runs(e, ttft, token, err));
    if (ttft->n == t0 || token->n == k0) {
        ttft->n = t0;
        token->n = k0;
        return IB_OK;
    }
    ib_gen_file_session *s = &out->sessions[out->n_sessions++];
    s->n_ttft = ttft->n - t0;
    s->n_token = token->n - k0;
    return read_session_energy(e, s, out, err);
}

/* Where each session's runs lie in the pooled arrays, now that they no
 * longer move. */
static void point_sessions(ib_gen_file *out)
{
    size_t t = 0, k = 0;
    for (size_t i = 0; i < out->n_sessions; i++) {
        out->sessions[i].ttft_ms = out->ttft_ms + t;
        out->sessions[i].token_ms = out->token_ms + k;
        t += out->sessions[i].n_ttft;
        k += out->sessions[i].n_token;
    }
}

/* A figure across sessions (sessions.figures[key].geomean), NaN when none. */
static double across(const cJSON *sessions, const char *key)
{
    return ib__json_num(ib__figure_named(cJSON_GetObjectItemCaseSensitive(sessions, "figures"), key),
                        "geomean");
}

/* A merged result (--sessions N): each session that measured, the runs
 * pooled, the figures across the sessions. */
static ib_status read_merged(const cJSON *sessions, samples *ttft, samples *token, ib_gen_file *out,
                             ib_error *err)
{
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(sessions, "runs");
    int n = cJSON_GetArraySize(runs);
    if (!cJSON_IsArray(runs) || n < 1 || n > IB_SESSIONS_MAX)
        return ib__fail(err, IB_ERR_INVALID_ARG,
                        "not an inferbench generation result: sessions.runs is not an array of 1 to %d "
                        "sessions",
                        IB_SESSIONS_MAX);
    out->sessions = calloc((size_t)n, sizeof *out->sessions);
    if (!out->sessions) return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading %d sessions", n);
    const cJSON *e;
    cJSON_ArrayForEach(e, runs)
    {
        if (!cJSON_IsObject(e)) return bad(err, "a session of sessions.runs is not an object");
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "failed")))
            IB_TRY(read_session(e, ttft, token, out, err));
    }
    out->tokens_per_s = across(sessions, "tokens_per_s");
    out->decode_joules_per_token = across(sessions, "decode_joules_per_token");
    out->prefill_joules_per_token = across(sessions, "prefill_joules_per_token");
    out->decode_energy_bound = out->prefill_energy_bound = NAN;
    return IB_OK;
}

/* A result of one process: its runs, tokens/s and energy at the root. */
static ib_status read_single(const cJSON *root, samples *ttft, samples *token, ib_gen_file *out,
                             ib_error *err)
{
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(root, "tokens_per_s");
    out->tokens_per_s = cJSON_IsNumber(rate) ? rate->valuedouble : NAN;
    IB_TRY(read_energy(root, "decode_energy", &out->decode_joules_per_token, &out->decode_energy_bound,
                       out->decode_energy_note, sizeof out->decode_energy_note, err));
    IB_TRY(read_energy(root, "prefill_energy", &out->prefill_joules_per_token, &out->prefill_energy_bound,
                       out->prefill_energy_note, sizeof out->prefill_energy_note, err));
    return read_runs(root, ttft, token, err);
}

static void read_settings(const cJSON *root, ib_gen_file *out)
{
    copy_string(root, "model", out->model, sizeof out->model);
    copy_string(root, "device", out->device, sizeof out->device);
    out->partial = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "partial"));
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "workload");
    copy_string(w, "weights_type", out->weights_type, sizeof out->weights_type);
    copy_string(w, "runtime_version", out->runtime_version, sizeof out->runtime_version);
    out->n_threads = read_int(w, "n_threads");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "settings");
    out->prompt_tokens = read_int(s, "prompt_tokens");
    out->new_tokens = read_int(s, "new_tokens");
    out->depth = read_int(s, "depth");
}

static ib_status read_doc(const cJSON *root, ib_gen_file *out, ib_error *err)
{
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, GEN_SCHEMA))
        return ib__fail(err, IB_ERR_UNSUPPORTED,
                        "not an inferbench generation result: no " GEN_SCHEMA " schema");
    read_settings(root, out);
    out->warnings = ib__json_result_warning_bits(root);
    const cJSON *sessions = cJSON_GetObjectItemCaseSensitive(root, "sessions");
    samples ttft = { 0 }, token = { 0 };
    ib_status st = sessions ? read_merged(sessions, &ttft, &token, out, err)
                            : read_single(root, &ttft, &token, out, err);
    out->ttft_ms = ttft.v;
    out->n_ttft = ttft.n;
    out->token_ms = token.v;
    out->n_token = token.n;
    point_sessions(out);
    /* A figure has no reason to be missing. */
    if (isfinite(out->decode_joules_per_token)) out->decode_energy_note[0] = '\0';
    if (isfinite(out->prefill_joules_per_token)) out->prefill_energy_note[0] = '\0';
    return st;
}

ib_status ib_gen_file_parse(const char *text, size_t len, ib_gen_file *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) return ib__fail(err, IB_ERR_UNSUPPORTED, "not an inferbench generation result: not JSON");
    ib_status st = read_doc(root, out, err);
    cJSON_Delete(root);
    if (st != IB_OK) ib_gen_file_free(out);
    return st;
}

void ib_gen_file_free(ib_gen_file *f)
{
    if (!f) return;
    free(f->ttft_ms);
    free(f->token_ms);
    free(f->sessions);
    f->ttft_ms = f->token_ms = NULL;
    f->sessions = NULL;
    f->n_ttft = f->n_token = f->n_sessions = 0;
}

bool ib_result_schema(const char *text, size_t len, char *schema, size_t cap)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "schema");
    bool found = cJSON_IsString(v) && v->valuestring;
    if (cap) ib__strlcpy(schema, found ? v->valuestring : "", cap);
    cJSON_Delete(root);
    return found;
}

/* A side's runs, and its sessions (into s[0..n_sessions)) for the
 * comparison of timed figure token (else TTFT). */
static ib__compare_side timed_side(const ib_gen_file *f, bool token, ib_session_sample *s)
{
    for (size_t i = 0; i < f->n_sessions; i++) {
        const ib_gen_file_session *e = &f->sessions[i];
        s[i] = token ? (ib_session_sample){ e->token_ms, e->n_token }
                     : (ib_session_sample){ e->ttft_ms, e->n_ttft };
    }
    return (ib__compare_side){ s, f->n_sessions, token ? f->token_ms : f->ttft_ms,
                               token ? f->n_token : f->n_ttft };
}

static ib_status compare_timed(const ib_gen_file *a, const ib_gen_file *b, bool token, double threshold,
                               ib_comparison *out, ib_error *err)
{
    ib_session_sample *s = malloc((a->n_sessions + b->n_sessions + 1) * sizeof *s);
    if (!s) return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory comparing sessions");
    ib__compare_side sa = timed_side(a, token, s), sb = timed_side(b, token, s + a->n_sessions);
    ib_error why;
    ib_status st = ib__compare_sides(&sa, &sb, threshold, out, &why);
    free(s);
    if (st == IB_OK) return IB_OK;
    return ib__fail(err, st, "%s: %s", token ? "per-token latency" : "TTFT", why.message);
}

/* Figure i of a side (i < its sessions, or 0 for a result of one
 * process): its joules per token and bound; false when it has none. */
static bool figure_at(const ib_gen_file *f, size_t i, bool prefill, double *joules, double *bound)
{
    const ib_gen_file_session *e = f->n_sessions ? &f->sessions[i] : NULL;
    *joules = e ? (prefill ? e->prefill_joules_per_token : e->decode_joules_per_token)
                : (prefill ? f->prefill_joules_per_token : f->decode_joules_per_token);
    *bound = e ? (prefill ? e->prefill_energy_bound : e->decode_energy_bound)
               : (prefill ? f->prefill_energy_bound : f->decode_energy_bound);
    return isfinite(*joules);
}

/* A side's energy figures into v and bound: its sessions' that have one
 * (a merged result), else its own. */
static ib__energy_side energy_side(const ib_gen_file *f, bool prefill, double *v, double *bound)
{
    ib__energy_side s = { v, bound, 0 };
    for (size_t i = 0; i < (f->n_sessions ? f->n_sessions : 1); i++)
        s.k += figure_at(f, i, prefill, &v[s.k], &bound[s.k]);
    return s;
}

/* The energy change between a and b as compare gives and shows it: the
 * sessions' figures of a merged result, else its own (ib__energy_compared:
 * the change, its interval and how it was got, the figures shown, the
 * sides' reasons); no change where memory ran out. */
static ib__energy_compared energy_change(const ib_gen_file *a, const ib_gen_file *b, bool prefill)
{
    ib__energy_compared e = { .a = prefill ? a->prefill_joules_per_token : a->decode_joules_per_token,
                              .b = prefill ? b->prefill_joules_per_token : b->decode_joules_per_token,
                              .change = NAN,
                              .ci = { NAN, NAN },
                              .why_not_a = prefill ? a->prefill_energy_note : a->decode_energy_note,
                              .why_not_b = prefill ? b->prefill_energy_note : b->decode_energy_note };
    size_t na = a->n_sessions ? a->n_sessions : 1, nb = b->n_sessions ? b->n_sessions : 1;
    double *v = malloc(2 * (na + nb) * sizeof *v);
    if (v) {
        ib__energy_side sa = energy_side(a, prefill, v, v + na);
        ib__energy_side sb = energy_side(b, prefill, v + 2 * na, v + 2 * na + nb);
        ib__energy_compare_sides(&sa, &sb, &e);
    }
    free(v);
    return e;
}

ib_status ib_compare_gen_files(const ib_gen_file *a, const ib_gen_file *b, double threshold,
                               ib_gen_comparison *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    IB_TRY(compare_timed(a, b, false, threshold, &out->ttft, err));
    IB_TRY(compare_timed(a, b, true, threshold, &out->token, err));
    out->tokens_per_s_change = b->tokens_per_s / a->tokens_per_s - 1;
    ib__energy_compared decode = energy_change(a, b, false), prefill = energy_change(a, b, true);
    out->energy_change = decode.change;
    memcpy(out->energy_change_interval, decode.ci, sizeof decode.ci);
    out->prefill_energy_change = prefill.change;
    memcpy(out->prefill_energy_change_interval, prefill.ci, sizeof prefill.ci);
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* Reports                                                                   */
/* ------------------------------------------------------------------------ */

/* What differs between the two settings: each a reason not to read the
 * change as the model's or the runtime's. */
static size_t differences(const ib_gen_file *a, const ib_gen_file *b, const char **keys, const char **texts)
{
    size_t n = 0;
#define DIFF(COND, KEY, TEXT)                                                                                \
    if (COND) {                                                                                              \
        keys[n] = KEY;                                                                                       \
        texts[n++] = TEXT;                                                                                   \
    }
    DIFF(strcmp(a->model, b->model), "different_model", "A and B measured different models")
    DIFF(strcmp(a->device, b->device), "different_device", "A and B ran on different devices")
    DIFF(strcmp(a->weights_type, b->weights_type), "different_weights", "A and B have different weight types")
    DIFF(a->prompt_tokens != b->prompt_tokens, "different_prompt", "A and B have different prompts")
    DIFF(a->new_tokens != b->new_tokens, "different_new_tokens", "A and B timed different numbers of tokens")
    DIFF(a->depth != b->depth, "different_depth", "A and B decoded at different depths")
    DIFF(a->n_threads != b->n_threads, "different_threads", "A and B used different threads")
    DIFF(strcmp(a->runtime_version, b->runtime_version), "different_runtime",
         "A and B ran different runtimes")
    DIFF(a->partial || b->partial, "partial_input", "A or B is a partial result")
#undef DIFF
    return n;
}

static void text_one(ib__sbuf *b, const char *what, const ib_comparison *c)
{
    ib__sbuf_printf(
        b,
        "%-9s median A %.4g ms, B %.4g ms: %+.2f%%, 95%% CI [%+.2f%%, %+.2f%%]; Mann-Whitney p = %.3g: %s\n",
        what, c->a.p50, c->b.p50, ib__signed_shown(100 * c->change, 2),
        ib__signed_shown(100 * c->change_ci95[0], 2), ib__signed_shown(100 * c->change_ci95[1], 2),
        c->mann_whitney_p, ib_change_name(c->verdict));
}

/* An energy change as the reports show it: how its interval was got, the
 * figures shown and the reasons, with the comparison's own change. */
static ib__energy_compared energy_compared(const ib_result *r, bool prefill)
{
    const ib_gen_comparison *c = r->gen_comparison;
    ib__energy_compared e = energy_change(r->gen_a, r->gen_b, prefill);
    e.change = prefill ? c->prefill_energy_change : c->energy_change;
    memcpy(e.ci, prefill ? c->prefill_energy_change_interval : c->energy_change_interval, sizeof e.ci);
    return e;
}

/* An energy change's line; where one side has no figure, its reason (the
 * result's own note); none where neither has (two CPU runs: a reason true
 * of both is not repeated on every comparison; the JSON says it). */
static void text_energy(ib__sbuf *b, const ib_result *r, bool prefill)
{
    const char *what = prefill ? "energy per prompt token (prefill)" : "energy per token (decode)";
    ib__energy_compared e = energy_compared(r, prefill);
    ib__text_energy_compared(b, what, what, &e, r->gen_comparison->ttft.threshold);
}

/* How a timed figure's interval was got, when not from the runs of one
 * session each. */
static void text_sessions(ib__sbuf *b, const ib_result *r)
{
    const ib_gen_comparison *c = r->gen_comparison;
    if (c->ttft.two_level)
        ib__sbuf_printf(b,
                        "sessions: the intervals are two-level (A: %zu sessions, B: %zu): t over the "
                        "sessions' log medians\n",
                        r->gen_a->n_sessions, r->gen_b->n_sessions);
    else if (c->ttft.spread_source[0])
        ib__sbuf_printf(
            b,
            "sessions: the intervals of the runs widened by the spread between %s (TTFT sd %.2f%%, "
            "per token sd %.2f%%, log times): the runs' [%+.2f%%, %+.2f%%] and [%+.2f%%, %+.2f%%]\n",
            c->ttft.spread_source, 100 * c->ttft.between_sd, 100 * c->token.between_sd,
            ib__signed_shown(100 * c->ttft.runs_ci95[0], 2), ib__signed_shown(100 * c->ttft.runs_ci95[1], 2),
            ib__signed_shown(100 * c->token.runs_ci95[0], 2),
            ib__signed_shown(100 * c->token.runs_ci95[1], 2));
}

/* An input's warning under the verdicts (issue 35). */
static void text_line(void *ctx, const char *key, const char *line)
{
    (void)key;
    ib__sbuf_printf(ctx, "%s\n", line);
}

char *ib__gen_comparison_text(const ib_result *r)
{
    const ib_gen_comparison *c = r->gen_comparison;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "inferbench compare: is generation B faster or slower than A?\n");
    ib__sbuf_printf(&b, "A (baseline)  %s: %s, %zu runs, %zu tokens\n", r->a_name ? r->a_name : "A",
                    r->gen_a->model, r->gen_a->n_ttft, r->gen_a->n_token);
    ib__sbuf_printf(&b, "B (candidate) %s: %s, %zu runs, %zu tokens\n\n", r->b_name ? r->b_name : "B",
                    r->gen_b->model, r->gen_b->n_ttft, r->gen_b->n_token);
    text_one(&b, "TTFT", &c->ttft);
    text_one(&b, "per token", &c->token);
    ib__sbuf_printf(&b, "TPOT (mean step) A %.4g ms, B %.4g ms; tokens/s A %.1f, B %.1f (%+.2f%%)\n",
                    c->token.a.mean, c->token.b.mean, r->gen_a->tokens_per_s, r->gen_b->tokens_per_s,
                    ib__signed_shown(100 * c->tokens_per_s_change, 2));
    ib__sbuf_printf(&b, "verdicts against a threshold of %.2f%% of the median\n", 100 * c->ttft.threshold);
    ib__compare_inputs_warned_each(r->gen_a->warnings, r->a_name, r->gen_b->warnings, r->b_name, text_line,
                                   &b);
    text_sessions(&b, r);
    text_energy(&b, r, false);
    text_energy(&b, r, true);
    const char *keys[16], *texts[16];
    size_t n = differences(r->gen_a, r->gen_b, keys, texts);
    for (size_t i = 0; i < n; i++) ib__sbuf_printf(&b, "warning: %s\n", texts[i]);
    return ib__sbuf_finish(&b);
}

cJSON *ib__json_comparison(const ib_comparison *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "a", ib__json_stats(&c->a));
    cJSON_AddItemToObject(o, "b", ib__json_stats(&c->b));
    ib__json_add_number(o, "change", c->change);
    cJSON_AddItemToObject(o, "change_ci95", ib__json_array(c->change_ci95, 2));
    ib__json_add_number(o, "mann_whitney_u", c->mann_whitney_u);
    ib__json_add_number(o, "mann_whitney_p", c->mann_whitney_p);
    cJSON_AddStringToObject(o, "verdict", ib_change_name(c->verdict));
    cJSON_AddBoolToObject(o, "two_level", c->two_level);
    bool widened = c->spread_source[0] != '\0';
    if (widened)
        cJSON_AddItemToObject(o, "runs_ci95", ib__json_array(c->runs_ci95, 2));
    else
        cJSON_AddNullToObject(o, "runs_ci95");
    ib__json_add_number(o, "between_sd", widened ? c->between_sd : NAN);
    ib__json_add_string_or_null(o, "spread_source", widened ? c->spread_source : NULL);
    return o;
}

/* An energy change's object, with why it is missing where one side has no
 * figure (the result's own note; null where it has one). */
static cJSON *json_energy(const ib_result *r, bool prefill)
{
    ib__energy_compared e = energy_compared(r, prefill);
    cJSON *o = ib__json_energy_compared(&e, r->gen_comparison->ttft.threshold);
    ib__json_energy_why_not(o, &e);
    return o;
}

char *ib__gen_comparison_json(const ib_result *r)
{
    const ib_gen_comparison *c = r->gen_comparison;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "inferbench.generation-compare/1");
    ib__json_add_string_or_null(root, "a", r->a_name);
    ib__json_add_string_or_null(root, "b", r->b_name);
    ib__json_add_number(root, "threshold", c->ttft.threshold);
    cJSON_AddItemToObject(root, "ttft", ib__json_comparison(&c->ttft));
    cJSON_AddItemToObject(root, "token", ib__json_comparison(&c->token));
    ib__json_add_number(root, "tpot_a_ms", c->token.a.mean);
    ib__json_add_number(root, "tpot_b_ms", c->token.b.mean);
    ib__json_add_number(root, "tokens_per_s_change", c->tokens_per_s_change);
    ib__json_add_number(root, "decode_joules_per_token_a", r->gen_a->decode_joules_per_token);
    ib__json_add_number(root, "decode_joules_per_token_b", r->gen_b->decode_joules_per_token);
    cJSON_AddItemToObject(root, "energy_change", json_energy(r, false));
    ib__json_add_number(root, "prefill_joules_per_token_a", r->gen_a->prefill_joules_per_token);
    ib__json_add_number(root, "prefill_joules_per_token_b", r->gen_b->prefill_joules_per_token);
    cJSON_AddItemToObject(root, "prefill_energy_change", json_energy(r, true));
    ib__json_add_number(root, "sessions_a", (double)r->gen_a->n_sessions);
    ib__json_add_number(root, "sessions_b", (double)r->gen_b->n_sessions);
    /* What each input was measured with, which the verdicts rest on. */
    cJSON *inputs = cJSON_AddObjectToObject(root, "input_warnings");
    cJSON *side = cJSON_AddObjectToObject(inputs, "a");
    ib__json_add_warnings(side, r->gen_a->warnings);
    side = cJSON_AddObjectToObject(inputs, "b");
    ib__json_add_warnings(side, r->gen_b->warnings);
    const char *keys[16], *texts[16];
    size_t n = differences(r->gen_a, r->gen_b, keys, texts);
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(w, cJSON_CreateString(keys[i]));
    return ib__json_finish(root);
}
