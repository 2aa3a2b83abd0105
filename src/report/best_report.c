/* The reports of `inferbench best` in every format (docs/best.md): one
 * row per candidate with exactly what was on, its latency at batch 1, its
 * inputs/s and batch, its accuracy against strict fp32, how far it went in
 * each race and why it lost. The printers call these. */
#include "report/printer.h"
#include "core/sessions.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The worst accuracy of a row over its compared outputs: the largest max
 * absolute error, the lowest cosine and top-1 agreement (NaN: none). */
typedef struct worst {
    double max_abs, cosine, top1;
} worst;

static worst worst_accuracy(const ib_accuracy *acc)
{
    worst w = { NAN, NAN, NAN };
    for (int i = 0; acc->measured && i < acc->n_outputs; i++) {
        const ib_output_accuracy *o = &acc->outputs[i];
        if (!o->compared) continue;
        if (!(o->max_abs_error <= w.max_abs)) w.max_abs = o->max_abs_error;
        if (!(o->cosine >= w.cosine)) w.cosine = o->cosine;
        if (o->class_scores && !(o->top1_agreement >= w.top1)) w.top1 = o->top1_agreement;
    }
    return w;
}

static const char *gate_text(char buf[96], const ib_best_result *r)
{
    if (r->tolerance > 0)
        snprintf(buf, 96, "max abs error <= %g against strict fp32", r->tolerance);
    else
        snprintf(buf, 96, "cosine similarity >= %g against strict fp32", r->min_cosine);
    return buf;
}

/* A row's latency figure: the geometric mean of its session medians with
 * the interval across sessions when its finals ran in sessions, else the
 * median of its runs with theirs; NaN when it has none. */
static double latency_figure(const ib_best_row *row, double ci[2])
{
    if (row->sessions.k > 0) {
        ci[0] = row->sessions.ci95_ms[0];
        ci[1] = row->sessions.ci95_ms[1];
        return row->sessions.geomean_ms;
    }
    bool has = row->latency.n > 0;
    ci[0] = has ? row->latency.ci95_median[0] : NAN;
    ci[1] = has ? row->latency.ci95_median[1] : NAN;
    return has ? row->latency.p50 : NAN;
}

#define num ib__best_num
#define stage_cell ib__best_stage_cell
#define steps_json ib__best_steps_json
#define rest_ms ib__best_rest_ms
#define steps_line ib__best_steps_line
#define rules_lines ib__best_rules_lines

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

static void text_row(ib__sbuf *b, size_t i, const ib_best_row *row)
{
    char c[6][32];
    worst w = worst_accuracy(&row->accuracy);
    double ci[2], p50 = latency_figure(row, ci);
    ib__sbuf_printf(
        b, "%2zu  %-38.38s %10s %10s %11s %6s %10s %9s  %-10s %-10s\n", i + 1, row->label,
        num(c[0], "%.4g", p50), num(c[1], "%.3g", ci[1] - p50), num(c[2], "%.5g", row->items_per_s),
        num(c[3], "%.0f", row->batch ? (double)row->batch : NAN), num(c[4], "%.3g", w.max_abs),
        num(c[5], "%.6f", w.cosine), stage_cell(row->latency_stage), stage_cell(row->throughput_stage));
}

static void text_whys(ib__sbuf *b, const ib_best_result *r)
{
    ib__sbuf_printf(b, "\nwhy each lost:\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        const ib_best_row *row = &r->rows[i];
        if (row->latency_stage == IB_BEST_SKIPPED || row->latency_stage == IB_BEST_INACCURATE) {
            ib__sbuf_printf(b, "%2zu  %s: %s\n", i + 1, ib_best_stage_name(row->latency_stage),
                            row->latency_why);
            continue;
        }
        if (row->latency_why[0]) ib__sbuf_printf(b, "%2zu  latency: %s\n", i + 1, row->latency_why);
        if (row->sessions.k > 0)
            ib__sbuf_printf(b,
                            "%2zu  sessions: %zu measured%s, between-session sd %.2f%%, within %.2f%% (log "
                            "times), session medians spread %.2f%%\n",
                            i + 1, row->sessions.k, row->sessions_failed ? " (others failed)" : "",
                            100 * row->sessions.between_sd, 100 * row->sessions.within_sd,
                            100 * row->sessions.spread);
        if (row->throughput_why[0]) ib__sbuf_printf(b, "%2zu  throughput: %s\n", i + 1, row->throughput_why);
    }
}

static void text_winners(ib__sbuf *b, const ib_best_result *r)
{
    if (r->latency_winner >= 0) {
        const ib_best_row *w = &r->rows[r->latency_winner];
        double ci[2], p50 = latency_figure(w, ci);
        ib__sbuf_printf(b, "\nfastest at batch 1: %s: %s %.4g ms (95%% CI%s %.4g..%.4g)\n", w->label,
                        w->sessions.k > 0 ? IB__SESSIONS_STATISTIC : "median", p50,
                        w->sessions.k > 1 ? " across sessions" : "", ci[0], ci[1]);
    } else {
        ib__sbuf_printf(b, "\nfastest at batch 1: none (no accurate candidate was measured)\n");
    }
    if (r->throughput_winner >= 0) {
        const ib_best_row *w = &r->rows[r->throughput_winner];
        ib__sbuf_printf(b, "highest throughput: %s: %.5g inputs/s at batch %lld\n", w->label, w->items_per_s,
                        (long long)w->batch);
    } else {
        ib__sbuf_printf(b, "highest throughput: none\n");
    }
}

static bool row_has_energy(const ib_best_row *row)
{
    return row->latency_energy.source != IB_ENERGY_NONE || row->throughput_energy.source != IB_ENERGY_NONE;
}

/* Each measured row's inputs per joule at batch 1 and at its batch; under
 * the energy objective they rank (docs/energy.md). Under the time
 * objective with no figure at all (a CPU workload), no heading over an
 * empty list: the JSON's rows say why each has none. */
static void text_energy(ib__sbuf *b, const ib_best_result *r)
{
    bool energy = r->objective == IB_BEST_OBJECTIVE_ENERGY, any = false;
    for (size_t i = 0; i < r->n_rows; i++) any = any || row_has_energy(&r->rows[i]);
    if (!energy && !any) return;
    ib__sbuf_printf(b, "\ninputs per joule (%s):\n",
                    energy ? "the objective: the finalists ranked by it"
                           : "beside the time; --objective energy ranks by it");
    size_t without = 0;
    for (size_t i = 0; i < r->n_rows; i++) {
        const ib_best_row *row = &r->rows[i];
        if (!row_has_energy(row)) {
            without++;
            continue;
        }
        char a[32], c[32];
        ib__sbuf_printf(b, "%2zu  batch 1: %s", i + 1, ib__fmt_inputs_per_joule(a, &row->latency_energy));
        if (row->batch > 0)
            ib__sbuf_printf(b, "; at batch %lld: %s", (long long)row->batch,
                            ib__fmt_inputs_per_joule(c, &row->throughput_energy));
        ib__sbuf_printf(b, "\n");
    }
    if (!energy) return;
    if (without)
        ib__sbuf_printf(
            b,
            "(%zu without a figure: left before the finals, or no counter; each row's energy in the "
            "JSON says why)\n",
            without);
    if (r->latency_winner >= 0)
        ib__sbuf_printf(b, "most inputs per joule at batch 1: %s (%.4g)\n", r->rows[r->latency_winner].label,
                        r->rows[r->latency_winner].latency_energy.items_per_joule);
    if (r->throughput_winner >= 0)
        ib__sbuf_printf(b, "most inputs per joule at its batch: %s (%.4g at batch %lld)\n",
                        r->rows[r->throughput_winner].label,
                        r->rows[r->throughput_winner].throughput_energy.items_per_joule,
                        (long long)r->rows[r->throughput_winner].batch);
}

char *ib__best_text(const ib_best_result *r)
{
    ib__sbuf b = { 0 };
    char gate[96];
    ib__sbuf_printf(&b, "inferbench best: %s on %s, %zu candidates, %s\n",
                    r->info.model[0] ? r->info.model : "-", ib__device_name(r->info.device), r->n_rows,
                    r->exhaustive      ? "exhaustive (each measured fully, each batch searched)"
                    : r->sessions >= 2 ? "raced (screened in this process, the finalists' latency measured "
                                         "in fresh sessions)"
                                       : "raced (screened, finalists measured fully)");
    if (r->sessions >= 2)
        ib__sbuf_printf(&b,
                        "sessions: each latency finalist measured in %zu fresh sessions, round-robin; p50 is "
                        "the " IB__SESSIONS_STATISTIC ", +-CI its interval across sessions\n",
                        r->sessions);
    ib__text_env(&b, &r->env);
    ib__sbuf_printf(&b, "\naccuracy gate: %s (the same inputs)\n", gate_text(gate, r));
    if (r->peak_batch > 0 && r->searched >= 0)
        ib__sbuf_printf(&b,
                        "throughput: the batch searched on %s (peak at batch %lld), the others timed there\n",
                        r->rows[r->searched].label, (long long)r->peak_batch);
    ib__sbuf_printf(&b, "\n%2s  %-38s %10s %10s %11s %6s %10s %9s  %-10s %-10s\n", "#", "configuration",
                    "p50 ms", "+-CI ms", "inputs/s", "batch", "max abs", "cosine", "latency", "throughput");
    for (size_t i = 0; i < r->n_rows; i++) text_row(&b, i, &r->rows[i]);
    text_whys(&b, r);
    if (r->objective != IB_BEST_OBJECTIVE_ENERGY) text_winners(&b, r);
    text_energy(&b, r);
    ib__sbuf_printf(&b, "time: %.1f s in all, %.1f s of it measuring\n", r->elapsed_ms / 1e3,
                    r->measured_ms / 1e3);
    steps_line(&b, "time by step:", r);
    rules_lines(&b, r);
    ib__best_text_footer(&b, r);
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

/* The finals' sessions of a row, null when they did not run in sessions. */
static cJSON *sessions_json(const ib_best_row *row)
{
    if (row->sessions.k == 0) return cJSON_CreateNull();
    const ib_sessions_stats *st = &row->sessions;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "count", (double)st->k);
    cJSON_AddNumberToObject(j, "failed", (double)row->sessions_failed);
    ib__json_add_number(j, "geomean_ms", st->geomean_ms);
    cJSON_AddItemToObject(j, "ci95_ms", ib__json_array(st->ci95_ms, 2));
    ib__json_add_number(j, "between_sd_log", st->between_sd);
    ib__json_add_number(j, "within_sd_log", st->within_sd);
    ib__json_add_number(j, "spread", st->spread);
    return j;
}

static cJSON *row_json(const ib_best_row *row)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "label", row->label);
    cJSON_AddBoolToObject(j, "opened", row->open_status == IB_OK);
    cJSON_AddBoolToObject(j, "accurate", row->accurate);
    ib__json_accuracy(j, &row->accuracy);
    cJSON *lat = cJSON_AddObjectToObject(j, "latency");
    cJSON_AddStringToObject(lat, "stage", ib_best_stage_name(row->latency_stage));
    cJSON_AddStringToObject(lat, "why", row->latency_why);
    cJSON_AddNumberToObject(lat, "runs", (double)row->latency_runs);
    if (row->latency.n)
        cJSON_AddItemToObject(lat, "ms", ib__json_stats(&row->latency));
    else
        cJSON_AddNullToObject(lat, "ms");
    cJSON_AddItemToObject(lat, "sessions", sessions_json(row));
    cJSON *tp = cJSON_AddObjectToObject(j, "throughput");
    cJSON_AddStringToObject(tp, "stage", ib_best_stage_name(row->throughput_stage));
    cJSON_AddStringToObject(tp, "why", row->throughput_why);
    ib__json_add_number(tp, "items_per_s", row->items_per_s);
    ib__json_add_number(tp, "batch", row->batch ? (double)row->batch : NAN);
    cJSON_AddItemToObject(lat, "energy", ib__json_energy(&row->latency_energy));
    cJSON_AddItemToObject(tp, "energy", ib__json_energy(&row->throughput_energy));
    ib__json_add_warnings(lat, row->latency_warnings);
    ib__json_add_warnings(tp, row->throughput_warnings);
    ib__json_add_number(j, "measured_ms", row->ms);
    cJSON_AddItemToObject(j, "steps_ms", steps_json(row->step_ms));
    return j;
}

static void add_label_or_null(cJSON *o, const char *key, const ib_best_result *r, int i)
{
    if (i >= 0)
        cJSON_AddStringToObject(o, key, r->rows[i].label);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *search_json(const ib_best_result *r, const ib_best_config *cfg)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "mode", r->exhaustive ? "exhaustive" : "raced");
    cJSON_AddStringToObject(s, "objective", r->objective == IB_BEST_OBJECTIVE_ENERGY ? "energy" : "time");
    cJSON_AddNumberToObject(s, "screen_runs", (double)cfg->screen_runs);
    cJSON_AddNumberToObject(s, "rounds", cfg->rounds);
    cJSON_AddNumberToObject(s, "finalists", (double)cfg->finalists);
    cJSON_AddNumberToObject(s, "margin", cfg->margin);
    cJSON_AddNumberToObject(s, "sessions", (double)(r->sessions >= 2 ? r->sessions : 1));
    cJSON *gate = cJSON_AddObjectToObject(s, "accuracy_gate");
    ib__json_add_number(gate, "max_abs_error", r->tolerance > 0 ? r->tolerance : NAN);
    ib__json_add_number(gate, "min_cosine", r->tolerance > 0 ? NAN : r->min_cosine);
    cJSON_AddItemToObject(s, "latency_config", ib__json_config(&cfg->latency));
    cJSON_AddNumberToObject(s, "throughput_runs", (double)cfg->throughput.run.runs);
    cJSON_AddNumberToObject(s, "max_batch", (double)cfg->throughput.max_batch);
    ib__best_json_rules(s, r);
    return s;
}

char *ib__best_json(const ib_best_result *r, const ib_best_config *cfg)
{
    cJSON *root = ib__best_json_document(r);
    cJSON_AddItemToObject(root, "search", search_json(r, cfg));
    add_label_or_null(root, "latency_winner", r, r->latency_winner);
    add_label_or_null(root, "throughput_winner", r, r->throughput_winner);
    add_label_or_null(root, "searched", r, r->searched);
    ib__json_add_number(root, "peak_batch", r->peak_batch ? (double)r->peak_batch : NAN);
    ib__best_json_times(root, r);
    cJSON *rows = cJSON_AddArrayToObject(root, "candidates");
    for (size_t i = 0; i < r->n_rows; i++) cJSON_AddItemToArray(rows, row_json(&r->rows[i]));
    ib__json_add_warnings(root, r->warnings);
    cJSON_AddItemToObject(root, "env", ib__json_env(&r->env));
    return ib__json_finish(root);
}

/* ------------------------------------------------------------------------ */
/* CSV, Markdown, HTML                                                       */
/* ------------------------------------------------------------------------ */

char *ib__best_csv(const ib_best_result *r)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(
        &b,
        "model,device,configuration,latency_stage,latency_p50_ms,latency_ci95_lo_ms,"
        "latency_ci95_hi_ms,latency_runs,latency_sessions,throughput_stage,items_per_s,batch,max_abs_error,"
        "cosine,top1_agreement,latency_why,throughput_why,latency_items_per_joule,latency_energy_bound,"
        "throughput_items_per_joule,throughput_energy_bound\r\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        const ib_best_row *row = &r->rows[i];
        worst w = worst_accuracy(&row->accuracy);
        double ci[2], p50 = latency_figure(row, ci);
        ib__csv_field(&b, r->info.model);
        ib__csv_text_cell(&b, ib__device_name(r->info.device));
        ib__csv_text_cell(&b, row->label);
        ib__csv_text_cell(&b, ib_best_stage_name(row->latency_stage));
        ib__csv_number(&b, p50);
        ib__csv_number(&b, ci[0]);
        ib__csv_number(&b, ci[1]);
        ib__sbuf_printf(&b, ",%lld,%zu", (long long)row->latency_runs, row->sessions.k);
        ib__csv_text_cell(&b, ib_best_stage_name(row->throughput_stage));
        ib__csv_number(&b, row->items_per_s);
        ib__csv_number(&b, row->batch ? (double)row->batch : NAN);
        ib__csv_number(&b, w.max_abs);
        ib__csv_number(&b, w.cosine);
        ib__csv_number(&b, w.top1);
        ib__csv_text_cell(&b, row->latency_why);
        ib__csv_text_cell(&b, row->throughput_why);
        const ib_energy *e[] = { &row->latency_energy, &row->throughput_energy };
        for (int k = 0; k < 2; k++) {
            bool has = e[k]->source != IB_ENERGY_NONE;
            ib__csv_number(&b, has ? e[k]->items_per_joule : NAN);
            ib__csv_number(&b, has ? e[k]->bound : NAN);
        }
        ib__sbuf_printf(&b, "\r\n");
    }
    return ib__sbuf_finish(&b);
}

#define md_cells ib__best_md_cells

/* The figures of row i as the Markdown and HTML tables show them: p50,
 * its 95% interval, inputs/s, batch, max abs error, cosine, inputs per
 * joule at batch 1 and at its batch. */
static void table_cells(const ib_best_result *r, size_t i, char c[8][64])
{
    const ib_best_row *row = &r->rows[i];
    worst w = worst_accuracy(&row->accuracy);
    double ci[2], p50 = latency_figure(row, ci);
    num(c[0], "%.4g", p50);
    ib__best_ci_cell(c[1], ci);
    num(c[2], "%.5g", row->items_per_s);
    num(c[3], "%.0f", row->batch ? (double)row->batch : NAN);
    num(c[4], "%.3g", w.max_abs);
    num(c[5], "%.6f", w.cosine);
    ib__fmt_inputs_per_joule(c[6], &row->latency_energy);
    ib__fmt_inputs_per_joule(c[7], &row->throughput_energy);
}

/* Row i's cells in the Markdown and HTML tables' order: its label, the
 * figures, the two stages and why it lost (the strings live in *t). */
enum { ROW_CELLS = 12 };
typedef struct {
    char figures[8][64], why[700];
    const char *cells[ROW_CELLS];
} row_cells;

static void fill_row_cells(const ib_best_result *r, size_t i, row_cells *t)
{
    const ib_best_row *row = &r->rows[i];
    table_cells(r, i, t->figures);
    ib__best_why_cell(r, i, t->why, sizeof t->why);
    t->cells[0] = row->label;
    for (int k = 0; k < 8; k++) t->cells[1 + k] = t->figures[k];
    t->cells[9] = stage_cell(row->latency_stage);
    t->cells[10] = stage_cell(row->throughput_stage);
    t->cells[11] = t->why;
}

char *ib__best_md(const ib_best_result *r)
{
    ib__sbuf b = { 0 };
    char gate[96];
    ib__sbuf_printf(&b, "**inferbench best**: ");
    ib__md_cell(&b, r->info.model);
    ib__sbuf_printf(&b, ", %s, %s; accuracy gate: %s\n\n", ib__device_name(r->info.device),
                    r->exhaustive ? "exhaustive"
                    : r->sessions >= 2
                        ? "raced, the latency finals in fresh sessions (p50: " IB__SESSIONS_STATISTIC ")"
                        : "raced",
                    gate_text(gate, r));
    ib__sbuf_printf(&b, "| configuration | p50 ms | 95%% CI ms | inputs/s | batch | max abs err | cosine | "
                        "inputs/J batch 1 | inputs/J at batch | latency | throughput | why |\n"
                        "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|---|\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        row_cells t;
        fill_row_cells(r, i, &t);
        md_cells(&b, t.cells, ROW_CELLS);
    }
    char stop[192];
    ib__best_stop_reason(r, stop, sizeof stop);
    ib__sbuf_printf(&b, "\nTime: %.1f s (%.1f s measuring)%s%s\n", r->elapsed_ms / 1e3, r->measured_ms / 1e3,
                    r->partial ? "; **partial**: " : "", r->partial ? stop : "");
    steps_line(&b, "\nTime by step:", r);
    return ib__sbuf_finish(&b);
}

/* A page: the table as HTML, its intervals and why each lost in it, then
 * the text report (the two never disagree: both are read off the same
 * result). */
char *ib__best_html(const ib_best_result *r)
{
    static const char *const heads[] = { "configuration",
                                         "p50 ms",
                                         "95% CI ms",
                                         "inputs/s",
                                         "batch",
                                         "max abs err",
                                         "cosine",
                                         "inputs/J<br>batch 1",
                                         "inputs/J<br>at batch",
                                         "latency",
                                         "throughput",
                                         "why" };
    ib__sbuf b = { 0 };
    ib__best_html_head(&b, r->info.model);
    ib__sbuf_printf(&b, "<table>");
    ib__best_html_row(&b, false, heads, sizeof heads / sizeof *heads, 0, true);
    for (size_t i = 0; i < r->n_rows; i++) {
        row_cells t;
        fill_row_cells(r, i, &t);
        bool win = (int)i == r->latency_winner || (int)i == r->throughput_winner;
        ib__best_html_row(&b, win, t.cells, ROW_CELLS, 0x1feu, false);
    }
    ib__best_html_tail(&b, ib__best_text(r));
    return ib__sbuf_finish(&b);
}
