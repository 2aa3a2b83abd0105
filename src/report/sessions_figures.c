/* Figures across sessions, for every command that takes --sessions: a
 * figure is one number per session (a median, a peak inputs/s), and
 * across the sessions its median, a 95% interval and how much it varies
 * between them (docs/method.md, "Sessions"). The merged documents keep
 * them in sessions.figures, which the CSV, Markdown, text and HTML reports
 * of sessions read, whatever the command. */
#include "report/report.h"
#include "core/sessions.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The statistics of a figure of one value a session: those of sessions
 * with one value each (the t-interval over the sessions' values). */
static ib_status values_stats(const double *v, size_t k, ib_sessions_stats *st, size_t *m)
{
    double *x = malloc((k ? k : 1) * sizeof *x);
    ib_session_sample *s = malloc((k ? k : 1) * sizeof *s);
    *m = 0;
    for (size_t i = 0; x && s && i < k; i++)
        if (isfinite(v[i]) && v[i] > 0) x[(*m)++] = v[i];
    for (size_t i = 0; x && s && i < *m; i++) s[i] = (ib_session_sample){ &x[i], 1 };
    ib_status status = !x || !s  ? IB_ERR_NO_MEMORY
                       : *m == 0 ? IB_ERR_INVALID_ARG
                                 : ib_sessions_compute(s, *m, st, NULL);
    free(x);
    free(s);
    return status;
}

/* The statistics of a figure with each session's runs: two levels. */
static ib_status samples_stats(const ib_session_sample *samples, size_t k, ib_sessions_stats *st, size_t *m)
{
    ib_session_sample *s = malloc((k ? k : 1) * sizeof *s);
    *m = 0;
    for (size_t i = 0; s && i < k; i++)
        if (samples[i].ms && samples[i].n > 0) s[(*m)++] = samples[i];
    ib_status status = !s        ? IB_ERR_NO_MEMORY
                       : *m == 0 ? IB_ERR_INVALID_ARG
                                 : ib_sessions_compute(s, *m, st, NULL);
    free(s);
    return status;
}

cJSON *ib__session_figure_json(const ib__session_figure *f, size_t k)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", f->key);
    cJSON_AddStringToObject(o, "label", f->label);
    cJSON_AddStringToObject(o, "unit", f->unit);
    cJSON_AddItemToObject(o, "values", ib__json_array(f->values, k));
    ib_sessions_stats st;
    size_t m = 0;
    bool ok =
        (f->samples ? samples_stats(f->samples, k, &st, &m) : values_stats(f->values, k, &st, &m)) == IB_OK;
    bool interval = ok && !f->plain && m >= 2;
    cJSON_AddNumberToObject(o, "sessions", (double)m);
    ib__json_add_number(o, "geomean", ok ? st.geomean_ms : NAN);
    cJSON_AddStringToObject(o, "interval",
                            !interval    ? "none"
                            : f->samples ? IB__SESSIONS_INTERVAL
                                         : "t over the sessions' log values: one value each");
    cJSON *ci = interval ? cJSON_CreateArray() : cJSON_CreateNull();
    if (interval) {
        cJSON_AddItemToArray(ci, ib__json_number(st.ci95_ms[0]));
        cJSON_AddItemToArray(ci, ib__json_number(st.ci95_ms[1]));
    }
    cJSON_AddItemToObject(o, "ci95", ci);
    ib__json_add_number(o, "precision", interval ? st.precision : NAN);
    ib__json_add_number(o, "between_sd_log", ok && !f->plain && m >= 2 ? st.between_sd : NAN);
    ib__json_add_number(o, "within_sd_log", ok && f->samples ? st.within_sd : NAN);
    ib__json_add_number(o, "spread", ok && !f->plain ? st.spread : NAN);
    return o;
}

bool ib__any_finite(const double *v, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (isfinite(v[i])) return true;
    return false;
}

void ib__add_energy_figure(cJSON *figures, const char *key, const char *label, const double *joules_per_item,
                           size_t k)
{
    ib__session_figure f = { key, label, "J", joules_per_item, NULL, false };
    if (ib__any_finite(joules_per_item, k)) cJSON_AddItemToArray(figures, ib__session_figure_json(&f, k));
}

cJSON *ib__session_entry(const ib_session_outcome *o, cJSON *root, size_t i, const char *const *keys,
                         size_t n_keys)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "index", (double)(i + 1));
    cJSON_AddNumberToObject(e, "exit_status", o->exit_status);
    cJSON_AddStringToObject(e, "message", o->message ? o->message : "");
    cJSON_AddBoolToObject(e, "failed", !root);
    for (size_t j = 0; root && j < n_keys; j++) {
        cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(root, keys[j]);
        if (v) cJSON_AddItemToObject(e, keys[j], v);
    }
    return e;
}

/* The union of the sessions' warnings, with the one sessions answer
 * dropped once there are two, and incompleteness added. */
static unsigned merged_warnings(const cJSON *runs, size_t measured, bool incomplete)
{
    unsigned bits = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, runs) bits |= ib__json_result_warning_bits(e);
    if (measured >= 2) bits &= ~(unsigned)IB_WARN_SESSION_DEPENDENT;
    if (incomplete) bits |= IB_WARN_SESSIONS_INCOMPLETE;
    return bits;
}

cJSON *ib__sessions_object(cJSON *base, const ib__sessions_count *c)
{
    cJSON *sessions = cJSON_AddObjectToObject(base, "sessions");
    cJSON_AddNumberToObject(sessions, "requested", (double)c->requested);
    cJSON_AddNumberToObject(sessions, "count", (double)c->count);
    cJSON_AddNumberToObject(sessions, "measured", (double)c->measured);
    cJSON_AddBoolToObject(sessions, "incomplete", c->incomplete);
    cJSON_DeleteItemFromObjectCaseSensitive(base, "partial");
    cJSON_DeleteItemFromObjectCaseSensitive(base, "stop_reason");
    cJSON_AddBoolToObject(base, "partial", c->incomplete);
    if (c->incomplete)
        cJSON_AddStringToObject(base, "stop_reason", c->stop_reason ? c->stop_reason : "sessions incomplete");
    cJSON_DeleteItemFromObjectCaseSensitive(base, "warnings");
    cJSON_DeleteItemFromObjectCaseSensitive(base, "notes");
    ib__json_add_warnings(base, merged_warnings(c->runs, c->measured, c->incomplete));
    return sessions;
}

double ib__json_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

double ib__figure_value(const cJSON *figure, size_t i)
{
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(figure, "values"), (int)i);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

double ib__figure_aggregate(const cJSON *figure, ib__figure_row row)
{
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(figure, "ci95");
    switch (row) {
    case IB__FIGURE_GEOMEAN: return ib__json_num(figure, "geomean");
    case IB__FIGURE_CI_LOW:
    case IB__FIGURE_CI_HIGH: {
        const cJSON *v = cJSON_GetArrayItem(ci, row == IB__FIGURE_CI_LOW ? 0 : 1);
        return cJSON_IsNumber(v) ? v->valuedouble : NAN;
    }
    case IB__FIGURE_BETWEEN_SD: return ib__json_num(figure, "between_sd_log");
    case IB__FIGURE_SPREAD: return ib__json_num(figure, "spread");
    case IB__FIGURE_ROWS: break;
    }
    return NAN;
}

const char *const ib__figure_row_names[IB__FIGURE_ROWS] = { "geomean", "ci95_low", "ci95_high",
                                                            "between_sd_log", "spread" };

void ib__sessions_text_table(ib__sbuf *b, const cJSON *sessions)
{
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(sessions, "runs");
    const cJSON *figures = cJSON_GetObjectItemCaseSensitive(sessions, "figures"), *f;
    ib__sbuf_printf(b, "\nsession");
    cJSON_ArrayForEach(f, figures)
    {
        char head[96];
        const char *unit = cJSON_GetStringValue(cJSON_GetObjectItem(f, "unit"));
        snprintf(head, sizeof head, unit && *unit ? "%s (%s)" : "%s",
                 cJSON_GetStringValue(cJSON_GetObjectItem(f, "label")), unit);
        ib__sbuf_printf(b, "  %22.22s", head);
    }
    ib__sbuf_printf(b, "\n");
    const cJSON *run;
    size_t i = 0;
    cJSON_ArrayForEach(run, runs)
    {
        ib__sbuf_printf(b, "%7zu", i + 1);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "failed")))
            ib__sbuf_printf(b, "  failed: %s",
                            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(run, "message")));
        else
            cJSON_ArrayForEach(f, figures) ib__sbuf_printf(b, "  %22.6g", ib__figure_value(f, i));
        ib__sbuf_printf(b, "\n");
        i++;
    }
    cJSON_ArrayForEach(f, figures)
    {
        const char *label = cJSON_GetStringValue(cJSON_GetObjectItem(f, "label"));
        const char *unit = cJSON_GetStringValue(cJSON_GetObjectItem(f, "unit"));
        double lo = ib__figure_aggregate(f, IB__FIGURE_CI_LOW),
               hi = ib__figure_aggregate(f, IB__FIGURE_CI_HIGH);
        ib__sbuf_printf(b, "\n%s: geometric mean of sessions %.6g%s%s", label, ib__json_num(f, "geomean"),
                        *unit ? " " : "", unit);
        if (isfinite(lo))
            ib__sbuf_printf(b, ", 95%% CI [%.6g, %.6g] %s (%s)", lo, hi, unit,
                            cJSON_GetStringValue(cJSON_GetObjectItem(f, "interval")));
        double sd = ib__json_num(f, "between_sd_log"), spread = ib__json_num(f, "spread");
        if (isfinite(sd))
            ib__sbuf_printf(b, "\n  between sessions: sd %.2f%%, session values span %.2f%% of their mean",
                            100 * sd, 100 * spread);
    }
    ib__sbuf_printf(b, "\n");
}

void ib__sessions_footer(ib__sbuf *b, unsigned warnings)
{
    /* No machine figures: each session measured its own (sessions.runs);
     * the warnings then print their general line. */
    ib_env none;
    memset(&none, 0, sizeof none);
    none.other_cpu_cores = NAN;
    ib__text_footer(b, false, IB_OK, &none, warnings);
}

const cJSON *ib__figure_named(const cJSON *figures, const char *key)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, figures)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "key"));
        if (name && !strcmp(name, key)) return f;
    }
    return NULL;
}
