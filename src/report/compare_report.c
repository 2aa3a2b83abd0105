/* The comparison report: a verdict a person can act on, and the same as
 * JSON ("inferbench.compare/3") for a CI job. */
#include "report/report.h"
#include "core/sessions.h"

#include <math.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>

/* What makes two results not like for like: each a JSON key and a line.
 * Room for a dozen fields and every option of both sides differing. */
#define MAX_WARNINGS (16 + 2 * IB_MAX_OPTIONS)

typedef struct compare_warning {
    char key[IB_OPTION_KEY_LEN + 16]; /* "model", "backend_options.threads" */
    char text[600];
} compare_warning;

typedef struct compare_warnings {
    size_t n;
    compare_warning w[MAX_WARNINGS];
} compare_warnings;

static const char *or_unknown(const char *s, const char *unknown) { return s[0] ? s : unknown; }

static void add_difference(compare_warnings *ws, const char *key, const char *what, const char *va,
                           const char *vb, const char *unknown)
{
    if (!strcmp(va, vb) || ws->n == MAX_WARNINGS) return;
    compare_warning *w = &ws->w[ws->n++];
    ib__strlcpy(w->key, key, sizeof w->key);
    /* %.200s: the values come from the files; the line stays a line. */
    snprintf(w->text, sizeof w->text, "different %s: %.200s (A) vs %.200s (B); compared anyway", what,
             or_unknown(va, unknown), or_unknown(vb, unknown));
}

static void add_partial(compare_warnings *ws, const ib_latency_file *a, const ib_latency_file *b)
{
    if (!a->partial && !b->partial) return;
    compare_warning *w = &ws->w[ws->n++];
    ib__strlcpy(w->key, "partial", sizeof w->key);
    const char *which = a->partial && b->partial ? "each measurement"
                        : a->partial             ? "A's measurement"
                                                 : "B's measurement";
    snprintf(w->text, sizeof w->text, "%s stopped early (partial): its samples may not be representative",
             which);
}

/* One warning for each backend option whose values differ, named by its
 * key ("backend_options.threads"): A's keys in A's order, then those
 * only B has. A key one side lacks reads "not set". */
static void option_difference(compare_warnings *ws, const char *key, const ib_latency_file *a,
                              const ib_latency_file *b)
{
    const char *va = ib_option_list_get(&a->options, key), *vb = ib_option_list_get(&b->options, key);
    char name[IB_OPTION_KEY_LEN + 16], what[IB_OPTION_KEY_LEN + 32];
    snprintf(name, sizeof name, "backend_options.%s", key);
    snprintf(what, sizeof what, "backend option %s", key);
    add_difference(ws, name, what, va ? va : "", vb ? vb : "", "not set");
}

static void add_option_differences(compare_warnings *ws, const ib_latency_file *a, const ib_latency_file *b)
{
    for (size_t i = 0; i < a->options.n; i++) option_difference(ws, a->options.items[i].key, a, b);
    for (size_t i = 0; i < b->options.n; i++)
        if (!ib_option_list_get(&a->options, b->options.items[i].key))
            option_difference(ws, b->options.items[i].key, a, b);
}

static compare_warnings collect_warnings(const ib_latency_file *a, const ib_latency_file *b)
{
    compare_warnings ws = { 0 };
    char batch_a[24], batch_b[24];
    snprintf(batch_a, sizeof batch_a, "%lld", (long long)a->batch);
    snprintf(batch_b, sizeof batch_b, "%lld", (long long)b->batch);
    add_difference(&ws, "model", "models", a->model, b->model, "unknown");
    add_difference(&ws, "batch", "batch sizes", a->batch ? batch_a : "", b->batch ? batch_b : "", "unknown");
    add_difference(&ws, "device", "devices", a->device, b->device, "unknown");
    add_difference(&ws, "gpu", "GPUs", a->gpu, b->gpu, "none");
    add_difference(&ws, "provider", "providers", a->provider, b->provider, "unknown");
    add_difference(&ws, "timing", "timings (clocks)", ib_timing_name(a->timing), ib_timing_name(b->timing),
                   "");
    add_difference(&ws, "runtime_version", "runtime versions", a->runtime_version, b->runtime_version,
                   "unknown");
    add_option_differences(&ws, a, b);
    add_difference(&ws, "math", "arithmetic (--math)", a->math, b->math, "unknown");
    add_difference(&ws, "flush_l2", "L2 cache states (--flush-l2)", a->flush_l2, b->flush_l2, "unknown");
    add_difference(&ws, "exclude_launch", "launch overhead handling (--exclude-launch)", a->exclude_launch,
                   b->exclude_launch, "unknown");
    add_partial(&ws, a, b);
    return ws;
}

void ib__compare_warnings_each(const ib_latency_file *a, const ib_latency_file *b,
                               void (*fn)(void *ctx, const char *key, const char *line), void *ctx)
{
    compare_warnings ws = collect_warnings(a, b);
    for (size_t i = 0; i < ws.n; i++) fn(ctx, ws.w[i].key, ws.w[i].text);
}

/* What the interval covers: the sessions of both results, or the runs of
 * one session; and how much sessions differ on this device when that is
 * known (the comparison widened by it: ib_compare_widen). */
typedef struct sessions_note {
    size_t ka, kb;      /* sessions that measured */
    double between_pct; /* between-session sd / median, percent; NaN unknown */
    char text[700];
} sessions_note;

static size_t side_sessions(const ib_latency_file *f)
{
    size_t k = 0;
    free(ib__measured_sessions(f, &k));
    return k;
}

static sessions_note note_sessions(const ib_comparison *c, const ib_latency_file *a, const ib_latency_file *b)
{
    sessions_note n;
    n.ka = side_sessions(a);
    n.kb = side_sessions(b);
    n.between_pct = c->spread_source[0] ? 100 * c->between_sd : NAN;
    double sd;
    size_t k;
    if (c->two_level && ib_latency_file_spread(a, &sd, &k, NULL) == IB_OK) n.between_pct = 100 * sd;
    if (c->two_level) {
        snprintf(n.text, sizeof n.text,
                 "the interval is two-level (A: %zu sessions, B: %zu): it covers how results differ between "
                 "sessions",
                 n.ka, n.kb);
    } else if (c->spread_source[0]) {
        snprintf(n.text, sizeof n.text,
                 "the interval of the runs [%+.2f%%, %+.2f%%] covers one session only; sessions of this kind "
                 "of run differ by sd %.2f%% (between sessions, log times, from %.200s; %zu degrees of "
                 "freedom): the verdict rests on the interval widened by it, and a change within that spread "
                 "is not called real; measure both with --sessions",
                 ib__signed_shown(100 * c->runs_ci95[0], 2), ib__signed_shown(100 * c->runs_ci95[1], 2),
                 n.between_pct, c->spread_source, c->between_df);
    } else {
        snprintf(n.text, sizeof n.text,
                 "the interval covers one session only, and how much sessions differ on this device is not "
                 "known (no result with sessions, --spread-from or calibration record of this kind of run): "
                 "another session of the same build may differ by more; measure both with --sessions");
    }
    return n;
}

/* ------------------------------------------------------------------------ */

/* "input A (a.json) warned high_cv: ..." under the verdict: a verdict on
 * noisy runs or a busy machine says so beside it (issue 35). */
static void text_input_warning(void *ctx, const char *key, const char *line)
{
    (void)key;
    ib__sbuf_printf(ctx, "%s\n", line);
}

static void text_side(ib__sbuf *b, const char *label, const char *name, const ib_latency_file *f,
                      const ib_stats *st)
{
    char t1[32], t2[32], batch[24] = "?";
    if (f->batch > 0) snprintf(batch, sizeof batch, "%lld", (long long)f->batch);
    ib__sbuf_printf(b, "%s %s: %s, batch %s, %s%s%s, %s\n", label, name, or_unknown(f->model, "?"), batch,
                    or_unknown(f->device, "?"), f->gpu[0] ? " " : "", f->gpu, ib_timing_name(f->timing));
    ib__sbuf_printf(b, "%*s n %zu, median %s, p99 %s\n", (int)strlen(label), "", st->n,
                    ib__fmt_ms(t1, st->p50), ib__fmt_ms(t2, st->p99));
}

static const char *verdict_reason(ib_change v)
{
    switch (v) {
    case IB_CHANGE_SLOWER: return "the whole 95% CI is above +";
    case IB_CHANGE_FASTER: return "the whole 95% CI is below -";
    case IB_CHANGE_NONE: return "the whole 95% CI is within +-";
    case IB_CHANGE_INCONCLUSIVE: break;
    }
    return "more samples are needed: the 95% CI crosses +-";
}

/* The figure whose change is compared, and how its interval was made. */
static const char *statistic(const ib_comparison *c)
{
    return c->two_level ? IB__SESSIONS_STATISTIC : "median";
}

static void interval_method(const ib_comparison *c, char *out, size_t size)
{
    if (c->two_level)
        snprintf(out, size, "Welch's t over the sessions' log medians, which hold both levels");
    else
        snprintf(out, size, "bootstrap of the runs, %d resamples%s", IB_COMPARE_RESAMPLES,
                 c->spread_source[0] ? ", widened by the spread between sessions" : "");
}

char *ib_comparison_report_text(const ib_comparison *c, const ib_latency_file *a, const char *a_name,
                                const ib_latency_file *b, const char *b_name)
{
    ib__sbuf buf = { 0 };
    ib__sbuf_printf(&buf, "inferbench compare: is B faster or slower than A?\n");
    text_side(&buf, "A (baseline) ", or_unknown(a_name ? a_name : "", "A"), a, &c->a);
    text_side(&buf, "B (candidate)", or_unknown(b_name ? b_name : "", "B"), b, &c->b);
    char method[160];
    interval_method(c, method, sizeof method);
    ib__sbuf_printf(&buf, "\n%s change: %+.2f%%, 95%% CI [%+.2f%%, %+.2f%%] (%s)\n", statistic(c),
                    ib__signed_shown(100 * c->change, 2), ib__signed_shown(100 * c->change_ci95[0], 2),
                    ib__signed_shown(100 * c->change_ci95[1], 2), method);
    ib__sbuf_printf(&buf, "Mann-Whitney U = %.6g, p = %.3g: %s\n", c->mann_whitney_u, c->mann_whitney_p,
                    c->mann_whitney_p < 0.05 ? "the two distributions differ (p < 0.05)"
                                             : "no difference between the distributions detected");
    ib__sbuf_printf(&buf, "verdict: %s (%s%.2f%%)\n", ib_change_name(c->verdict), verdict_reason(c->verdict),
                    100 * c->threshold);
    ib__compare_inputs_warned_each(a->warnings, a_name, b->warnings, b_name, text_input_warning, &buf);
    sessions_note note = note_sessions(c, a, b);
    ib__sbuf_printf(&buf, "sessions: %s\n", note.text);
    ib__energy_compared energy;
    ib__energy_compare(a, b, &energy);
    ib__text_energy_compared(&buf, "energy", "energy per input", &energy, c->threshold);
    compare_warnings ws = collect_warnings(a, b);
    for (size_t i = 0; i < ws.n; i++) ib__sbuf_printf(&buf, "warning: %s\n", ws.w[i].text);
    return ib__sbuf_finish(&buf);
}

/* ------------------------------------------------------------------------ */

static cJSON *json_side(const char *name, const ib_latency_file *f, const ib_stats *st)
{
    cJSON *o = cJSON_CreateObject();
    ib__json_add_string_or_null(o, "file", name ? name : "");
    ib__json_add_string_or_null(o, "model", f->model);
    ib__json_add_string_or_null(o, "device", f->device);
    if (f->batch > 0)
        cJSON_AddNumberToObject(o, "batch", (double)f->batch);
    else
        cJSON_AddNullToObject(o, "batch");
    ib__json_add_string_or_null(o, "gpu", f->gpu);
    ib__json_add_string_or_null(o, "runtime", f->runtime);
    ib__json_add_string_or_null(o, "provider", f->provider);
    cJSON_AddItemToObject(o, "backend_options", ib__json_options(&f->options));
    cJSON_AddStringToObject(o, "timing", ib_timing_name(f->timing));
    cJSON_AddBoolToObject(o, "partial", f->partial);
    cJSON_AddNumberToObject(o, "n", (double)st->n);
    ib__json_add_number(o, "median_ms", st->p50);
    ib__json_add_number(o, "p99_ms", st->p99);
    ib__json_add_number(o, "joules_per_item", f->joules_per_item);
    ib__json_add_number(o, "energy_bound", f->energy_bound);
    ib__json_add_warnings(o, f->warnings); /* what its verdict rests on */
    return o;
}

char *ib_comparison_report_json(const ib_comparison *c, const ib_latency_file *a, const char *a_name,
                                const ib_latency_file *b, const char *b_name)
{
    /* The comparison itself is always whole; a partial input is a warning. */
    cJSON *root = ib__json_document("inferbench.compare/3", false, IB_OK, NULL);
    cJSON_AddItemToObject(root, "a", json_side(a_name, a, &c->a));
    cJSON_AddItemToObject(root, "b", json_side(b_name, b, &c->b));
    cJSON *change = cJSON_AddObjectToObject(root, "change");
    cJSON_AddStringToObject(change, "statistic", statistic(c));
    ib__json_add_number(change, "pct", 100 * c->change);
    const double pct[2] = { 100 * c->change_ci95[0], 100 * c->change_ci95[1] };
    cJSON_AddItemToObject(change, "ci95_pct", ib__json_array(pct, 2));
    char method[160];
    interval_method(c, method, sizeof method);
    cJSON_AddStringToObject(change, "interval", method);
    ib__json_add_number(root, "mann_whitney_u", c->mann_whitney_u);
    ib__json_add_number(root, "mann_whitney_p", c->mann_whitney_p);
    ib__json_add_number(root, "threshold_pct", 100 * c->threshold);
    cJSON_AddStringToObject(root, "verdict", ib_change_name(c->verdict));
    sessions_note note = note_sessions(c, a, b);
    cJSON *sessions = cJSON_AddObjectToObject(root, "sessions");
    cJSON_AddBoolToObject(sessions, "two_level", c->two_level);
    cJSON_AddNumberToObject(sessions, "a", (double)(note.ka ? note.ka : 1));
    cJSON_AddNumberToObject(sessions, "b", (double)(note.kb ? note.kb : 1));
    ib__json_add_number(sessions, "between_sd_pct", note.between_pct);
    ib__json_add_number(sessions, "between_df", c->spread_source[0] ? (double)c->between_df : NAN);
    ib__json_add_string_or_null(sessions, "spread_source", c->spread_source);
    cJSON_AddBoolToObject(sessions, "widened", c->spread_source[0] != '\0');
    if (c->spread_source[0]) {
        const double runs[2] = { 100 * c->runs_ci95[0], 100 * c->runs_ci95[1] };
        cJSON_AddItemToObject(sessions, "runs_ci95_pct", ib__json_array(runs, 2));
    } else {
        cJSON_AddNullToObject(sessions, "runs_ci95_pct");
    }
    cJSON_AddStringToObject(sessions, "note", note.text);
    ib__energy_compared energy;
    ib__energy_compare(a, b, &energy);
    cJSON *energy_change = ib__json_energy_compared(&energy, c->threshold);
    ib__json_energy_why_not(energy_change, &energy);
    cJSON_AddItemToObject(root, "energy_change", energy_change);
    compare_warnings ws = collect_warnings(a, b);
    cJSON *warnings = cJSON_AddArrayToObject(root, "warnings");
    for (size_t i = 0; i < ws.n; i++) cJSON_AddItemToArray(warnings, cJSON_CreateString(ws.w[i].key));
    return ib__json_finish(root);
}
