/* A latency measurement repeated in sessions (fresh processes): the
 * program collects each session's latency JSON, and this file merges them
 * into one result (the runs pooled, each session kept, the statistics
 * across sessions), then reports it as text. The HTML page is in
 * html_report.c, beside the other pages. */
#include "report/report.h"
#include "core/sessions.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Keys of a session's document that describe that session only: they move
 * into its entry of sessions.runs. */
static const char *const per_session_keys[] = { "cold_ms",
                                                "cold_device_ms",
                                                "warmup",
                                                "latency_ms",
                                                "host_latency_ms",
                                                "precision",
                                                "launch_overhead_ms",
                                                "warnings",
                                                "notes",
                                                "partial",
                                                "stop_reason",
                                                "samples",
                                                "energy",
                                                "cpu_energy" };
#define N_PER_SESSION (sizeof per_session_keys / sizeof per_session_keys[0])

/* A session's parsed document and its primary samples. */
typedef struct parsed {
    cJSON *root;
    ib_latency_file file;
} parsed;

static ib_status parse_session(const ib_session_outcome *o, size_t i, parsed *p, ib_error *err)
{
    memset(p, 0, sizeof *p);
    if (!o->doc) return IB_OK;
    /* A session's document is this program's own, of today's schema: no
     * legacy keys to read (ib_latency_file_parse reads a user's files). */
    ib_status st = ib__latency_file_read(o->doc, o->len, NULL, &p->file, err);
    if (st == IB_OK && p->file.n_sessions > 0)
        st = ib__fail(err, IB_ERR_INVALID_ARG, "session %zu: a result of several sessions", i + 1);
    if (st != IB_OK) return st;
    p->root = cJSON_ParseWithLength(o->doc, o->len);
    IB_FAIL_IF(!p->root, err, IB_ERR_NO_MEMORY, "out of memory reading session %zu", i + 1);
    return IB_OK;
}

/* samples.<key> of every measured session's entry, one after the other
 * (null when one has none: every session has the same timers). */
static cJSON *pooled_array(const cJSON *runs, const char *key, double **values, size_t *n)
{
    *values = NULL;
    *n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, runs)
    {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "failed"))) continue;
        const cJSON *a =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "samples"), key);
        if (!cJSON_IsArray(a)) return cJSON_CreateNull();
        size_t m = (size_t)cJSON_GetArraySize(a);
        double *grown = realloc(*values, (*n + m + 1) * sizeof *grown);
        if (!grown) return NULL;
        *values = grown;
        const cJSON *v;
        cJSON_ArrayForEach(v, a)(*values)[(*n)++] = v->valuedouble;
    }
    return ib__json_array(*values, *n);
}

/* The pooled samples and their summaries, in place of session 1's. */
static bool add_pooled(cJSON *base, const cJSON *runs, bool device_timed)
{
    double *dev, *host;
    size_t nd, nh;
    cJSON *samples = cJSON_CreateObject();
    cJSON *d = pooled_array(runs, "device_ms", &dev, &nd), *h = pooled_array(runs, "host_ms", &host, &nh);
    bool ok = samples && d && h;
    ib_stats sd, sh;
    ok = ok && (!device_timed || ib_stats_compute(dev, nd, &sd) == IB_OK) &&
         ib_stats_compute(host, nh, &sh) == IB_OK;
    if (ok) {
        cJSON_AddItemToObject(samples, "device_ms", d);
        cJSON_AddItemToObject(samples, "host_ms", h);
        cJSON_AddItemToObject(base, "samples", samples);
        cJSON_AddItemToObject(base, "latency_ms", ib__json_stats(device_timed ? &sd : &sh));
        cJSON_AddItemToObject(base, "host_latency_ms", ib__json_stats(&sh));
    } else {
        cJSON_Delete(samples);
        cJSON_Delete(d);
        cJSON_Delete(h);
    }
    free(dev);
    free(host);
    return ok;
}

/* Session i's entry of sessions.runs: how it ended, its own figures, its
 * primary samples. */
static cJSON *session_entry(const ib_session_outcome *o, parsed *p, size_t i)
{
    cJSON *e = ib__session_entry(o, p->root, i, per_session_keys, N_PER_SESSION);
    if (!p->root) cJSON_AddNullToObject(e, "samples");
    return e;
}

/* sessions.figures of a latency: each session's median (with its runs),
 * p99 and energy per input (one value a session: the interval of the
 * energy across sessions, docs/energy.md). */
static cJSON *latency_figures(const parsed *p, size_t k)
{
    double *med = malloc(k * sizeof *med), *p99 = malloc(k * sizeof *p99), *jpi = malloc(k * sizeof *jpi);
    ib_session_sample *runs = malloc(k * sizeof *runs);
    cJSON *figures = cJSON_CreateArray();
    for (size_t i = 0; med && p99 && jpi && runs && i < k; i++) {
        jpi[i] = p[i].root ? p[i].file.joules_per_item : NAN;
        ib_stats st;
        bool ok = p[i].root && ib_stats_compute(p[i].file.samples_ms, p[i].file.n, &st) == IB_OK;
        med[i] = ok ? st.p50 : NAN;
        p99[i] = ok ? st.p99 : NAN;
        runs[i] = ok ? (ib_session_sample){ p[i].file.samples_ms, p[i].file.n } : (ib_session_sample){ 0 };
    }
    if (med && p99 && jpi && runs) {
        ib__session_figure median = { "median_ms", "median", "ms", med, runs, false };
        ib__session_figure tail = { "p99_ms", "p99", "ms", p99, NULL, false };
        cJSON_AddItemToArray(figures, ib__session_figure_json(&median, k));
        cJSON_AddItemToArray(figures, ib__session_figure_json(&tail, k));
        ib__add_energy_figure(figures, "joules_per_item", "energy per input", jpi, k);
    }
    free(med);
    free(p99);
    free(jpi);
    free(runs);
    return figures;
}

static void add_stats(cJSON *o, const ib_sessions_stats *st)
{
    cJSON_AddStringToObject(o, "statistic", IB__SESSIONS_STATISTIC);
    cJSON_AddStringToObject(o, "interval", IB__SESSIONS_INTERVAL);
    ib__json_add_number(o, "geomean_ms", st->geomean_ms);
    cJSON *ci = isfinite(st->ci95_ms[0]) ? cJSON_CreateArray() : cJSON_CreateNull();
    if (cJSON_IsArray(ci)) {
        cJSON_AddItemToArray(ci, ib__json_number(st->ci95_ms[0]));
        cJSON_AddItemToArray(ci, ib__json_number(st->ci95_ms[1]));
    }
    cJSON_AddItemToObject(o, "ci95_ms", ci);
    ib__json_add_number(o, "precision", st->precision);
    ib__json_add_number(o, "between_sd_log", st->between_sd);
    ib__json_add_number(o, "within_sd_log", st->within_sd);
    ib__json_add_number(o, "between_share", st->between_share);
    ib__json_add_number(o, "spread", st->spread);
}

/* The merged document, once every session is parsed: base is the first
 * measured session's root, taken over. */
static char *merge_parsed(const ib_session_outcome *s, parsed *p, size_t k, size_t requested,
                          const char *stop_reason, cJSON *base, bool device_timed, ib_error *err)
{
    ib_session_sample *samples = malloc(k * sizeof *samples);
    size_t measured = 0;
    bool incomplete = k < requested;
    for (size_t i = 0; samples && i < k; i++) {
        if (p[i].root) samples[measured++] = (ib_session_sample){ p[i].file.samples_ms, p[i].file.n };
        incomplete = incomplete || !p[i].root || p[i].file.partial;
    }
    ib_sessions_stats st;
    ib_status status = samples ? ib_sessions_compute(samples, measured, &st, err)
                               : ib__fail(err, IB_ERR_NO_MEMORY, "out of memory merging sessions");
    free(samples);
    /* Each session's own figures move from its document into its entry
     * (the base's too), before the pooled ones take their place. */
    cJSON *runs = cJSON_CreateArray();
    for (size_t i = 0; runs && i < k; i++) cJSON_AddItemToArray(runs, session_entry(&s[i], &p[i], i));
    if (status != IB_OK || !runs || !add_pooled(base, runs, device_timed)) {
        if (status == IB_OK) ib__fail(err, IB_ERR_NO_MEMORY, "out of memory merging sessions");
        cJSON_Delete(runs);
        cJSON_Delete(base);
        return NULL;
    }
    ib__sessions_count c = { requested, k, measured, incomplete, stop_reason, runs };
    cJSON *sessions = ib__sessions_object(base, &c);
    add_stats(sessions, &st);
    cJSON_AddItemToObject(sessions, "figures", latency_figures(p, k));
    cJSON_AddItemToObject(sessions, "runs", runs);
    return ib__json_finish(base);
}

char *ib__latency_sessions_merge(const ib_session_outcome *s, size_t k, size_t requested,
                                 const char *stop_reason, ib_error *err)
{
    if (!s || k == 0 || k > IB_SESSIONS_MAX || requested < k) {
        ib__fail(err, IB_ERR_INVALID_ARG, "no sessions to merge");
        return NULL;
    }
    parsed *p = calloc(k, sizeof *p);
    if (!p) {
        ib__fail(err, IB_ERR_NO_MEMORY, "out of memory merging sessions");
        return NULL;
    }
    ib_status st = IB_OK;
    for (size_t i = 0; i < k && st == IB_OK; i++) st = parse_session(&s[i], i, &p[i], err);
    cJSON *base = NULL;
    bool device_timed = false;
    for (size_t i = 0; i < k && st == IB_OK && !base; i++) {
        base = p[i].root;
        device_timed = p[i].file.timing == IB_TIMING_DEVICE_EVENTS;
    }
    if (st == IB_OK && !base) ib__fail(err, IB_ERR_RUNTIME, "no session measured anything");
    char *doc = NULL;
    if (st == IB_OK && base) doc = merge_parsed(s, p, k, requested, stop_reason, base, device_timed, err);
    for (size_t i = 0; i < k; i++) {
        if (p[i].root != base) cJSON_Delete(p[i].root);
        ib_latency_file_free(&p[i].file);
    }
    free(p);
    return doc;
}

static void text_session_row(ib__sbuf *b, const ib_latency_session *s, size_t i, double scale)
{
    ib_stats st;
    if (!s->samples_ms || ib_stats_compute(s->samples_ms, s->n, &st) != IB_OK) {
        ib__sbuf_printf(b, "%7zu  failed: %s\n", i + 1, s->message[0] ? s->message : "no result");
        return;
    }
    char t[3][32];
    ib__sbuf_printf(b, "%7zu %7zu %10s  [%s, %s]%s\n", i + 1, s->n, ib__fmt_plain4(t[0], st.p50 * scale),
                    ib__fmt_plain4(t[1], st.ci95_median[0] * scale),
                    ib__fmt_plain4(t[2], st.ci95_median[1] * scale), s->partial ? "  partial" : "");
}

static void text_across(ib__sbuf *b, const ib_sessions_stats *st, double scale, const char *unit)
{
    if (st->k >= 2)
        ib__sbuf_printf(b,
                        "\n" IB__SESSIONS_STATISTIC " %.4g %s, 95%% CI [%.4g, %.4g] %s (+-%.2f%%)\n"
                        "  (" IB__SESSIONS_INTERVAL ": covers what changes when it runs again)\n",
                        st->geomean_ms * scale, unit, st->ci95_ms[0] * scale, st->ci95_ms[1] * scale, unit,
                        100 * st->precision);
    else
        ib__sbuf_printf(b, "\nmedian %.4g %s: one session measured, no interval across sessions\n",
                        st->geomean_ms * scale, unit);
    ib__sbuf_printf(b,
                    "between sessions: sd %.2f%%, within a session: sd %.2f%% (of the log times: "
                    "random-effects ANOVA); the sessions hold %.1f%% of the variance\n",
                    100 * st->between_sd, 100 * st->within_sd, 100 * st->between_share);
    ib__sbuf_printf(b, "session medians span %.2f%% of their geometric mean\n", 100 * st->spread);
}

/* Why a run of sessions is incomplete: fewer ran than asked for (the
 * reason its document gives: interrupted, the time cap), sessions that
 * failed (the first one's message), or sessions stopped early. */
static void text_incomplete(ib__sbuf *b, const ib_latency_file *f)
{
    size_t failed = 0, first = 0, cut = 0;
    for (size_t i = f->n_sessions; i-- > 0;) {
        bool fail = !f->sessions[i].samples_ms;
        failed += fail;
        if (fail) first = i;
        cut += !fail && f->sessions[i].partial;
    }
    bool fewer = f->sessions_requested > f->n_sessions;
    if (!fewer && !failed && !cut) return;
    ib__sbuf_printf(b, "INCOMPLETE: %zu of %zu sessions ran", f->n_sessions,
                    f->sessions_requested > f->n_sessions ? f->sessions_requested : f->n_sessions);
    /* "sessions incomplete" is the generic word: the failures say more. */
    if (fewer && f->stop_reason[0] && strcmp(f->stop_reason, "sessions incomplete"))
        ib__sbuf_printf(b, ": stopped: %s", f->stop_reason);
    else if (fewer && !failed)
        ib__sbuf_printf(b, ": the others were not started");
    if (failed)
        ib__sbuf_printf(b, "; %zu failed (session %zu: %s)", failed, first + 1,
                        f->sessions[first].message[0] ? f->sessions[first].message : "no result");
    if (cut) ib__sbuf_printf(b, "; %zu stopped early (partial)", cut);
    ib__sbuf_printf(b, "\n");
}

char *ib_sessions_report_text(const ib_latency_file *f)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "inferbench latency: %s, batch %lld, %s, %zu sessions (each a fresh process)\n",
                    f->model, (long long)f->batch, f->provider[0] ? f->provider : f->device, f->n_sessions);
    if (f->gpu[0]) ib__sbuf_printf(&b, "%s\n", f->gpu);
    char runtime[IB__OPTIONS_TEXT_LEN];
    ib__file_runtime_options(runtime, sizeof runtime, f);
    if (runtime[0]) ib__sbuf_printf(&b, "runtime options: %s\n", runtime); /* none stated: no line */
    ib__sbuf_printf(&b, "timing: %s\n", ib_timing_name(f->timing));
    size_t k;
    ib_session_sample *s = ib__measured_sessions(f, &k);
    ib_sessions_stats st;
    if (s && k > 0 && ib_sessions_compute(s, k, &st, NULL) == IB_OK) {
        const char *unit;
        double scale = ib__latency_unit(st.geomean_ms, &unit);
        ib__sbuf_printf(&b, "\nsession       n %10s  median's 95%% CI (%s)\n", unit, unit);
        for (size_t i = 0; i < f->n_sessions; i++) text_session_row(&b, &f->sessions[i], i, scale);
        text_across(&b, &st, scale, unit);
    } else {
        ib__sbuf_printf(&b, "no session measured anything\n");
    }
    free(s);
    if (isfinite(f->sessions_joules_per_item))
        ib__sbuf_printf(&b,
                        "energy per input across sessions: geometric mean %.4g J, 95%% CI [%.4g, %.4g] J\n",
                        f->sessions_joules_per_item, f->sessions_joules_ci95[0], f->sessions_joules_ci95[1]);
    text_incomplete(&b, f);
    ib__sessions_footer(&b, f->warnings);
    return ib__sbuf_finish(&b);
}
