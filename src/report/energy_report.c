/* Energy in the reports (docs/energy.md): one text line and one JSON
 * object per figure, the throughput curve's inputs per joule by batch;
 * every format reads these. */
#include "report/report.h"
#include "core/energy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ib__energy_source_name(ib_energy_source s)
{
    switch (s) {
    case IB_ENERGY_COUNTER: return "counter";
    case IB_ENERGY_SAMPLED: return "sampled_power";
    default: return "none";
    }
}

static const char *how(const ib_energy *e)
{
    if (e->source == IB_ENERGY_SAMPLED) return "no counter: the sampled power integrated";
    return e->aligned ? "the window's ends on the counter's changes"
                      : "the window's ends not aligned: +-a step";
}

void ib__text_energy(ib__sbuf *b, const char *label, const ib_energy *e)
{
    ib__text_energy_of(b, label, e, "input");
}

/* "an input", "a token". */
static const char *article(const char *item) { return strchr("aeiou", item[0]) ? "an" : "a"; }

void ib__text_energy_of(ib__sbuf *b, const char *label, const ib_energy *e, const char *item)
{
    char line[512];
    ib__sbuf_printf(b, "%s: %s\n", label, ib__energy_summary_of(line, sizeof line, e, item));
    if (e->source == IB_ENERGY_NONE) return;
    if (isfinite(e->idle_power_w))
        ib__sbuf_printf(b, "  idle %.4g W before the runs: %.4g J %s %s above idle (%.3g%% of the total)\n",
                        e->idle_power_w, e->joules_per_item_above_idle, article(item), item,
                        100 * e->joules_above_idle / e->joules);
    double ran_ms = e->window_ms / e->items;
    if (e->timed_ms_per_item > 0 && ran_ms > IB__ENERGY_SLOW_WINDOW * e->timed_ms_per_item) {
        char w[32], t[32];
        ib__sbuf_printf(b,
                        "  the window ran %s %s %s against %s timed: its energy counts the time between "
                        "the timed runs too\n",
                        ib__fmt_ms(w, ran_ms), article(item), item, ib__fmt_ms(t, e->timed_ms_per_item));
    }
    if (isfinite(e->step_ms))
        ib__sbuf_printf(b, "  %s: changes every %.4g ms at most\n", e->counter, e->step_ms);
    if (e->power_limit_fraction >= 0.95)
        ib__sbuf_printf(
            b,
            "  at %.0f%% of the GPU's power limit: the card was power-capped (its clocks throttled "
            "to stay under it)\n",
            100 * e->power_limit_fraction);
}

unsigned ib__energy_shown(const ib_energy *device, const ib_energy *cpu)
{
    bool cpu_workload =
        device->source == IB_ENERGY_NONE && !strcmp(device->note, IB__ENERGY_CPU_WORKLOAD_NOTE);
    if (cpu && cpu_workload) return IB__ENERGY_SHOW_CPU;
    return IB__ENERGY_SHOW_DEVICE | (cpu && cpu->source != IB_ENERGY_NONE ? IB__ENERGY_SHOW_CPU : 0u);
}

const char *ib__energy_summary(char *buf, size_t cap, const ib_energy *e)
{
    return ib__energy_summary_of(buf, cap, e, "input");
}

const char *ib__energy_summary_of(char *buf, size_t cap, const ib_energy *e, const char *item)
{
    if (e->source == IB_ENERGY_NONE)
        snprintf(buf, cap, "no figure: %s", e->note);
    else
        snprintf(buf, cap, "%.4g J %s %s (+-%.2g%%), %.4g %ss/J, %.4g W average over %.4g ms (%s)",
                 e->joules_per_item, article(item), item, 100 * e->bound, e->items_per_joule, item,
                 e->power_w, e->window_ms, how(e));
    return buf;
}

const char *ib__fmt_inputs_per_joule(char buf[32], const ib_energy *e)
{
    if (e->source == IB_ENERGY_NONE)
        snprintf(buf, 32, "-");
    else
        snprintf(buf, 32, "%.4g +-%.2g%%", e->items_per_joule, 100 * e->bound);
    return buf;
}

cJSON *ib__json_energy(const ib_energy *e)
{
    cJSON *o = cJSON_CreateObject();
    bool has = e->source != IB_ENERGY_NONE;
    if (has)
        cJSON_AddStringToObject(o, "source", ib__energy_source_name(e->source));
    else
        cJSON_AddNullToObject(o, "source");
    cJSON_AddBoolToObject(o, "aligned", has && e->aligned);
    ib__json_add_number(o, "joules_per_item", e->joules_per_item);
    ib__json_add_number(o, "items_per_joule", e->items_per_joule);
    ib__json_add_number(o, "bound", e->bound);
    ib__json_add_number(o, "joules", e->joules);
    ib__json_add_number(o, "power_w", e->power_w);
    ib__json_add_number(o, "window_ms", e->window_ms);
    ib__json_add_number(o, "items", e->items);
    ib__json_add_number(o, "idle_power_w", e->idle_power_w);
    ib__json_add_number(o, "joules_above_idle", e->joules_above_idle);
    ib__json_add_number(o, "joules_per_item_above_idle", e->joules_per_item_above_idle);
    ib__json_add_number(o, "step_ms", e->step_ms);
    ib__json_add_number(o, "power_limit_fraction", e->power_limit_fraction);
    ib__json_add_number(o, "timed_ms_per_item", e->timed_ms_per_item);
    ib__json_add_string_or_null(o, "counter", e->counter);
    ib__json_add_string_or_null(o, "note", e->note);
    return o;
}

/* Whether any point of the curve has a figure. */
static bool curve_has_energy(const ib__energy_curve *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->ok[i] && c->energy[i]->source != IB_ENERGY_NONE) return true;
    return false;
}

void ib__energy_curve_at(char buf[48], const ib__energy_curve *c, int i)
{
    long long n = i >= 0 ? (long long)c->count[i] : 0;
    if (c->count_first)
        snprintf(buf, 48, "%lld %s", n, c->what);
    else
        snprintf(buf, 48, "%s %lld", c->what, n);
}

void ib__text_energy_table(ib__sbuf *b, const ib__energy_curve *c)
{
    if (c->n == 0) return;
    if (!curve_has_energy(c)) {
        ib__sbuf_printf(b, "\nenergy: no figure: %s\n", c->energy[0]->note);
        return;
    }
    char per_j[32], per_item[32];
    snprintf(per_j, sizeof per_j, "%ss/J", c->item);
    snprintf(per_item, sizeof per_item, "J/%s", c->item);
    ib__sbuf_printf(b, "\n%9s %11s %9s %9s %9s %11s\n", c->what, per_j, "+-", per_item, "W", per_item);
    ib__sbuf_printf(b, "%9s %11s %9s %9s %9s %11s\n", "", "", "bound", "", "average", "above idle");
    for (size_t i = 0; i < c->n; i++) {
        const ib_energy *e = c->energy[i];
        ib__sbuf_printf(b, "%9lld ", (long long)c->count[i]);
        if (!c->ok[i] || e->source == IB_ENERGY_NONE)
            ib__sbuf_printf(b, "  no figure: %s", !c->ok[i] ? "not measured" : e->note);
        else
            ib__sbuf_printf(b, "%11.4g %8.2g%% %9.4g %9.4g %11.4g", e->items_per_joule, 100 * e->bound,
                            e->joules_per_item, e->power_w, e->joules_per_item_above_idle);
        if ((int)i == c->most_efficient) ib__sbuf_printf(b, "  most efficient");
        if ((int)i == c->peak)
            ib__sbuf_printf(b, "%s", (int)i == c->most_efficient ? ", fastest" : "  fastest");
        ib__sbuf_printf(b, "\n");
    }
    int eff = c->most_efficient, peak = c->peak;
    char at_eff[48], at_peak[48];
    ib__energy_curve_at(at_eff, c, eff);
    ib__energy_curve_at(at_peak, c, peak);
    if (peak >= 0 && eff != peak) {
        ib__sbuf_printf(
            b,
            "most %ss per joule at %s (%.4g, %+.1f%% against the fastest%s%s), at %.1f%% of the "
            "peak's %ss/s\n",
            c->item, at_eff, c->energy[eff]->items_per_joule,
            c->energy[peak]->source != IB_ENERGY_NONE
                ? ib__signed_shown(
                      100 * (c->energy[eff]->items_per_joule / c->energy[peak]->items_per_joule - 1), 1)
                : NAN,
            c->count_first ? ", " : " ", at_peak, 100 * c->rate[eff] / c->rate[peak], c->item);
    } else if (c->count_first) {
        ib__sbuf_printf(b, "most %ss per joule at the fastest count, %s\n", c->item, at_eff);
    } else {
        ib__sbuf_printf(b, "most %ss per joule at the fastest %s, %lld\n", c->item, c->what,
                        (long long)c->count[eff]);
    }
}

_Static_assert(IB_GEN_MAX_POINTS <= IB_MAX_POINTS, "a generation's curve fits ib__energy_curve_columns");

ib__energy_curve ib__energy_curve_of_batches(const ib_throughput_result *r, ib__energy_curve_columns *cols)
{
    for (size_t i = 0; i < r->n_points; i++) {
        cols->count[i] = r->points[i].batch;
        cols->energy[i] = &r->points[i].energy;
        cols->ok[i] = r->points[i].status == IB_OK;
        cols->rate[i] = r->points[i].items_per_s;
    }
    return (ib__energy_curve){ "batch",  "input",    r->n_points, cols->count,       cols->energy,
                               cols->ok, cols->rate, r->peak,     r->most_efficient, false };
}

ib__energy_curve ib__energy_curve_of_sequences(const ib_gen_result *r, ib__energy_curve_columns *cols)
{
    for (size_t i = 0; i < r->n_points; i++) {
        cols->count[i] = r->points[i].sequences;
        cols->energy[i] = &r->points[i].energy;
        cols->ok[i] = r->points[i].status == IB_OK;
        cols->rate[i] = r->points[i].tokens_per_s;
    }
    return (ib__energy_curve){ "sequences", "token",    r->n_points, cols->count,       cols->energy,
                               cols->ok,    cols->rate, r->peak,     r->most_efficient, true };
}

void ib__text_energy_curve(ib__sbuf *b, const ib_throughput_result *r)
{
    ib__energy_curve_columns cols;
    ib__energy_curve c = ib__energy_curve_of_batches(r, &cols);
    ib__text_energy_table(b, &c);
}

const char *ib__energy_change_verdict(double change, const double ci[2], double threshold)
{
    if (!isfinite(change)) return "not in both files";
    return ci[0] > threshold                           ? "more energy"
           : ci[1] < -threshold                        ? "less energy"
           : ci[0] >= -threshold && ci[1] <= threshold ? "no change"
                                                       : "inconclusive";
}

static double largest_bound(const ib__energy_side *s)
{
    double b = 0;
    for (size_t i = 0; i < s->k; i++) b = fmax(b, s->bound[i]);
    return b;
}

void ib__energy_compare_sides(const ib__energy_side *a, const ib__energy_side *b, ib__energy_compared *out)
{
    out->how[0] = '\0';
    if (!ib__energy_sessions_change(a, b, &out->change, out->ci)) {
        out->change = out->ci[0] = out->ci[1] = NAN;
        return;
    }
    double ba = 100 * largest_bound(a), bb = 100 * largest_bound(b);
    if (a->k == 1 && b->k == 1)
        snprintf(out->how, sizeof out->how, "the two figures' bounds, +-%.2g%% and +-%.2g%%", ba, bb);
    else if (a->k >= 2 && b->k >= 2)
        snprintf(
            out->how, sizeof out->how,
            "t over the sessions' log figures, A: %zu sessions, B: %zu, and their bounds, up to +-%.2g%% "
            "and +-%.2g%%",
            a->k, b->k, ba, bb);
    else
        snprintf(
            out->how, sizeof out->how,
            "the spread between the %zu sessions of %s and the figures' bounds, up to +-%.2g%% and +-%.2g%%",
            a->k >= 2 ? a->k : b->k, a->k >= 2 ? "A" : "B", ba, bb);
}

/* A latency result's figures: its measured sessions' (a sessions
 * document), else its own, into v and bound (room for n_sessions, at
 * least one). */
static ib__energy_side latency_side(const ib_latency_file *f, double *v, double *bound)
{
    ib__energy_side s = { v, bound, 0 };
    for (size_t i = 0; i < f->n_sessions; i++) {
        const ib_latency_session *e = &f->sessions[i];
        if (!e->samples_ms || !isfinite(e->joules_per_item)) continue;
        v[s.k] = e->joules_per_item;
        bound[s.k++] = e->energy_bound;
    }
    if (!f->n_sessions && isfinite(f->joules_per_item)) {
        v[0] = f->joules_per_item;
        bound[s.k++] = f->energy_bound;
    }
    return s;
}

void ib__energy_compare(const ib_latency_file *a, const ib_latency_file *b, ib__energy_compared *out)
{
    out->a = a->n_sessions ? a->sessions_joules_per_item : a->joules_per_item;
    out->b = b->n_sessions ? b->sessions_joules_per_item : b->joules_per_item;
    out->why_not_a = a->energy_note;
    out->why_not_b = b->energy_note;
    out->change = out->ci[0] = out->ci[1] = NAN;
    out->how[0] = '\0';
    size_t na = a->n_sessions ? a->n_sessions : 1, nb = b->n_sessions ? b->n_sessions : 1;
    double *v = malloc(2 * (na + nb) * sizeof *v);
    if (!v) return; /* no change shown: the comparison of time is the report's */
    ib__energy_side sa = latency_side(a, v, v + na), sb = latency_side(b, v + 2 * na, v + 2 * na + nb);
    ib__energy_compare_sides(&sa, &sb, out);
    free(v);
}

void ib__text_energy_compared(ib__sbuf *buf, const char *label, const char *what,
                              const ib__energy_compared *e, double threshold)
{
    if (isfinite(e->change)) {
        ib__sbuf_printf(buf, "%s: %.4g J -> %.4g J: %+.2f%%, within [%+.2f%%, %+.2f%%] (%s): %s\n", what,
                        e->a, e->b, ib__signed_shown(100 * e->change, 2), ib__signed_shown(100 * e->ci[0], 2),
                        ib__signed_shown(100 * e->ci[1], 2), e->how,
                        ib__energy_change_verdict(e->change, e->ci, threshold));
        return;
    }
    /* Neither has one (two CPU results): no line on every comparison (a
     * reason true of both); the JSON says why. */
    if (!isfinite(e->a) && !isfinite(e->b)) return;
    const char *side;
    const char *why = ib__energy_why_not(e, &side);
    ib__sbuf_printf(buf, "%s: not in both files: %s has no figure: %s\n", label, side, why);
}

const char *ib__energy_why_not(const ib__energy_compared *e, const char **side)
{
    bool a_lacks = !isfinite(e->a);
    const char *why = a_lacks ? e->why_not_a : e->why_not_b;
    *side = a_lacks ? "A" : "B";
    return why && why[0] ? why : "its result has none";
}

cJSON *ib__json_energy_compared(const ib__energy_compared *e, double threshold)
{
    bool has = isfinite(e->change);
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "pct", has ? 100 * e->change : NAN);
    if (has) {
        const double pct[2] = { 100 * e->ci[0], 100 * e->ci[1] };
        cJSON_AddItemToObject(o, "interval_pct", ib__json_array(pct, 2));
    } else {
        cJSON_AddNullToObject(o, "interval_pct");
    }
    cJSON_AddStringToObject(o, "verdict", ib__energy_change_verdict(e->change, e->ci, threshold));
    return o;
}

void ib__json_energy_why_not(cJSON *o, const ib__energy_compared *e)
{
    ib__json_add_string_or_null(o, "why_not_a", e->why_not_a && e->why_not_a[0] ? e->why_not_a : NULL);
    ib__json_add_string_or_null(o, "why_not_b", e->why_not_b && e->why_not_b[0] ? e->why_not_b : NULL);
}

ib_status ib__energy_read_figure(const cJSON *e, const char *refusal, const char *path,
                                 double *joules_per_item, double *bound, char *note, size_t cap,
                                 ib_error *err)
{
    *joules_per_item = *bound = NAN;
    if (!e || cJSON_IsNull(e)) return IB_OK;
    IB_FAIL_IF(!cJSON_IsObject(e), err, IB_ERR_INVALID_ARG, "%s%s is not an object", refusal, path);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(e, "joules_per_item");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(e, "bound");
    if (j && !cJSON_IsNull(j)) {
        IB_FAIL_IF(!cJSON_IsNumber(j) || !(j->valuedouble > 0 && j->valuedouble < 1e30) ||
                       !cJSON_IsNumber(b) || !(b->valuedouble >= 0 && b->valuedouble < 1),
                   err, IB_ERR_INVALID_ARG,
                   "%s%s.joules_per_item is not a positive number with a bound in [0, 1)", refusal, path);
        *joules_per_item = j->valuedouble;
        *bound = b->valuedouble;
        return IB_OK;
    }
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "note"));
    if (!note[0] && why) ib__strlcpy(note, why, cap);
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* The energy pitfalls                                                       */
/* ------------------------------------------------------------------------ */

size_t ib__energy_pitfall_rows(const ib_energy_pitfall *e, ib__energy_pitfall_row rows[3])
{
    if (!e->applies) return 0;
    static const char *const sampled_why =
        "NVML's power reading is an average over its own window, read at a few instants: the changes "
        "between them and the window's edges are guessed";
    static const char *const short_why =
        "the counter moves in steps: a window shorter than a step reads 0 or "
        "a whole step's energy, whatever ran";
    rows[0] = (ib__energy_pitfall_row){ "correct: the counter, the window on its changes",
                                        e->correct.joules_per_item, 0, "" };
    snprintf(rows[1].name, sizeof rows[1].name, "power at %d points x time", e->sampled_points);
    if (e->sampled_points == 0) snprintf(rows[1].name, sizeof rows[1].name, "power at a few points x time");
    rows[1].joules_per_item = e->sampled_joules_per_item;
    rows[1].error_pct = e->sampled_error_pct;
    snprintf(rows[1].why, sizeof rows[1].why, "%s", e->sampled_points ? sampled_why : e->sampled_note);
    snprintf(rows[2].name, sizeof rows[2].name, "a %.4g ms window (half a step)", e->short_window_ms);
    rows[2].joules_per_item = e->short_joules_per_item;
    rows[2].error_pct = e->short_error_pct;
    snprintf(rows[2].why, sizeof rows[2].why, "%s", short_why);
    return 3;
}

void ib__text_energy_pitfall(ib__sbuf *b, const ib_energy_pitfall *e)
{
    if (!e->applies) {
        ib__sbuf_printf(b, "energy: n/a: %s\n", e->not_applicable);
        return;
    }
    ib__energy_pitfall_row rows[3];
    size_t n = ib__energy_pitfall_rows(e, rows);
    ib__sbuf_printf(b, "\nenergy per input, the correct figure beside what two classic ways read:\n");
    for (size_t i = 0; i < n; i++) {
        ib__sbuf_printf(b, "  %-50s ", rows[i].name);
        if (!isfinite(rows[i].joules_per_item))
            ib__sbuf_printf(b, "%12s  %s\n", "-", rows[i].why);
        else if (i == 0)
            ib__sbuf_printf(b, "%.4g J (+-%.2g%%)\n", rows[i].joules_per_item, 100 * e->correct.bound);
        else
            ib__sbuf_printf(b, "%.4g J (%+.1f%%)  %s\n", rows[i].joules_per_item,
                            ib__signed_shown(rows[i].error_pct, 1), rows[i].why);
    }
}

cJSON *ib__json_energy_pitfall(const ib_energy_pitfall *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "applies", e->applies);
    ib__json_add_string_or_null(o, "not_applicable", e->applies ? NULL : e->not_applicable);
    cJSON_AddItemToObject(o, "correct", ib__json_energy(&e->correct));
    cJSON *sampled = cJSON_AddObjectToObject(o, "power_at_few_points");
    cJSON_AddNumberToObject(sampled, "points", e->sampled_points);
    ib__json_add_number(sampled, "joules_per_item", e->sampled_joules_per_item);
    ib__json_add_number(sampled, "error_pct", e->sampled_error_pct);
    ib__json_add_string_or_null(sampled, "note", e->sampled_note);
    cJSON *shorter = cJSON_AddObjectToObject(o, "window_shorter_than_step");
    ib__json_add_number(shorter, "window_ms", e->short_window_ms);
    ib__json_add_number(shorter, "joules_per_item", e->short_joules_per_item);
    ib__json_add_number(shorter, "error_pct", e->short_error_pct);
    return o;
}
