/* The Markdown printer: the summary tables as GitHub pipe tables, ready to
 * paste into an issue or a pull request (docs/report.md). Every row of a
 * table has the header's cell count; a '|' inside a cell is escaped. */
#include "report/fleet_report.h"
#include "report/printer.h"
#include "report/md_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The title line: "**inferbench latency**: model, cpu (provider), batch 1"
 * (batch < 1: no batch, as for throughput's curve of many). */
static void title(ib__sbuf *b, const char *what, const ib_workload_info *info, int64_t batch)
{
    ib__sbuf_printf(b, "**inferbench %s**: ", what);
    ib__md_cell(b, info->model);
    ib__sbuf_printf(b, ", %s", ib__device_name(info->device));
    if (info->provider[0]) {
        ib__sbuf_printf(b, " (");
        ib__md_cell(b, info->provider);
        ib__sbuf_printf(b, ")");
    }
    if (batch > 0) ib__sbuf_printf(b, ", batch %lld", (long long)batch);
    char options[IB__OPTIONS_TEXT_LEN];
    ib__info_runtime_options(options, sizeof options, info);
    ib__sbuf_printf(b, "\n\noptions: ");
    ib__md_cell(b, options);
    ib__sbuf_printf(b, "\n\n");
}

/* The energy figures under the tables, a paragraph each. */
static void energy_lines(ib__sbuf *b, const ib_energy *device, const ib_energy *cpu)
{
    char line[512];
    unsigned shown = ib__energy_shown(device, cpu);
    if (shown & IB__ENERGY_SHOW_DEVICE) {
        ib__sbuf_printf(b, "\nenergy: ");
        ib__md_cell(b, ib__energy_summary(line, sizeof line, device));
    }
    if (shown & IB__ENERGY_SHOW_CPU) {
        ib__sbuf_printf(b, shown & IB__ENERGY_SHOW_DEVICE ? "\n\nCPU package energy: "
                                                          : "\nCPU package energy: ");
        ib__md_cell(b, ib__energy_summary(line, sizeof line, cpu));
    }
    ib__sbuf_printf(b, "\n");
}

static char *latency_md(const ib_result *res)
{
    const ib_latency_result *r = res->latency;
    ib__sbuf b = { 0 };
    title(&b, "latency", res->info, res->info->batch);
    ib__md_stats_header(&b, "timing");
    if (r->has_device_timer) ib__md_stats_row(&b, "device", &r->device);
    ib__md_stats_row(&b, "host", &r->host);
    energy_lines(&b, &r->energy, &r->cpu_energy);
    ib__md_footer(&b, r->partial, r->stop_status, r->warnings);
    return ib__sbuf_finish(&b);
}

static char *throughput_md(const ib_result *res)
{
    const ib_throughput_result *r = res->throughput;
    ib__sbuf b = { 0 };
    title(&b, "throughput", res->info, 0);
    IB__MD_HEADER(&b, "rrrrrrl", "batch", "inputs/s", "inputs/s (synchronized)", "median latency",
                  "p99 latency", "inputs/J", "");
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_throughput_point *p = &r->points[i];
        char batch[24], t[5][32];
        snprintf(batch, sizeof batch, "%lld", (long long)p->batch);
        /* The marks of this batch, "peak, knee" when one batch is both. */
        char role[96];
        snprintf(role, sizeof role, "%s%s%s%s", r->peak == (int)i ? ", peak" : "",
                 r->knee == (int)i ? ", knee" : "",
                 r->best_within_budget == (int)i ? ", best within budget" : "",
                 r->most_efficient == (int)i ? ", most inputs per joule" : "");
        if (p->status != IB_OK)
            IB__MD_ROW(&b, batch, "-", "-", "-", "-", "-", ib_status_str(p->status));
        else
            IB__MD_ROW(&b, batch, ib__fmt_rate(t[0], p->items_per_s), ib__fmt_rate(t[1], p->items_per_s_sync),
                       ib__fmt_ms(t[2], p->latency_ms.p50), ib__fmt_ms(t[3], p->latency_ms.p99),
                       ib__fmt_inputs_per_joule(t[4], &p->energy), role[0] ? role + 2 : "");
    }
    if (r->most_efficient < 0 && r->n_points > 0) energy_lines(&b, &r->points[0].energy, NULL);
    bool bound = r->stop == IB_THROUGHPUT_STOP_TIME_BOUND; /* its line says it is partial */
    if (r->stop != IB_THROUGHPUT_STOP_DONE) ib__sbuf_printf(&b, "\n");
    ib__throughput_stop_line(&b, r);
    ib__md_footer(&b, r->partial && !bound, r->stop_status, r->warnings);
    return ib__sbuf_finish(&b);
}

/* The energy rows as a table of their own (J an input, not ms). */
static void energy_pitfall_md(ib__sbuf *b, const ib_energy_pitfall *e)
{
    ib__energy_pitfall_row rows[3];
    size_t n = ib__energy_pitfall_rows(e, rows);
    if (n == 0) {
        ib__sbuf_printf(b, "\nenergy: n/a: ");
        ib__md_cell(b, e->not_applicable);
        ib__sbuf_printf(b, "\n");
        return;
    }
    ib__sbuf_printf(b, "\n");
    IB__MD_HEADER(b, "lrrl", "energy", "J an input", "vs correct", "why it is wrong");
    for (size_t i = 0; i < n; i++) {
        char j[32], pct[32];
        snprintf(j, sizeof j, isfinite(rows[i].joules_per_item) ? "%.4g" : "-", rows[i].joules_per_item);
        if (i == 0)
            snprintf(pct, sizeof pct, "+-%.2g%%", 100 * e->correct.bound);
        else
            snprintf(pct, sizeof pct, isfinite(rows[i].error_pct) ? "%+.1f%%" : "-",
                     ib__signed_shown(rows[i].error_pct, 1));
        IB__MD_ROW(b, rows[i].name, j, pct, i == 0 ? "" : rows[i].why);
    }
}

static char *pitfalls_md(const ib_result *res)
{
    const ib_pitfalls_result *r = res->pitfalls;
    ib__sbuf b = { 0 };
    title(&b, "pitfalls", res->info, res->info->batch);
    char reference[IB__REFERENCE_TEXT_LEN];
    ib__md_cell(&b, ib__pitfalls_reference(reference, r->reference_math, r->reference_math_default));
    ib__sbuf_printf(&b, "\n\n");
    IB__MD_HEADER(&b, "lrrrrrll", "method", "n", "median", "mean", "vs correct", "95% interval", "reading",
                  "why it is wrong");
    for (size_t i = 0; i < IB_PITFALL_COUNT; i++) {
        const ib_pitfall_row *p = &r->rows[i];
        char n[24], t[3][32], interval[48];
        snprintf(n, sizeof n, "%zu", p->stats.n);
        const char *reading =
            p->reading == IB_READING_NOT_COMPARED ? "" : ib_pitfall_reading_name(p->reading);
        if (!p->applies)
            IB__MD_ROW(&b, p->name, "-", "-", "-", "n/a", "-", "", p->not_applicable);
        else if (p->stats.n == 0)
            IB__MD_ROW(&b, p->name, "0", "-", "-", "-", "-", "", p->error);
        else
            IB__MD_ROW(&b, p->name, n, ib__fmt_ms(t[0], p->stats.p50), ib__fmt_ms(t[1], p->stats.mean),
                       ib__fmt_pitfall_error(t[2], p),
                       ib__fmt_pitfall_interval(interval, p->error_ci95_pct, p->reading), reading,
                       i == IB_PITFALL_CORRECT ? "" : p->why);
    }
    energy_pitfall_md(&b, &r->energy);
    ib__md_footer(&b, r->partial, r->stop_status, r->warnings);
    return ib__sbuf_finish(&b);
}

static void calibration_row(ib__sbuf *b, const char *kernel, const ib_calibration_point *p)
{
    char t[6][32];
    if (p->status != IB_OK) {
        snprintf(t[0], sizeof t[0], "%.6g", p->true_us);
        IB__MD_ROW(b, kernel, t[0], "-", "-", "-", "-", ib_status_str(p->status));
        return;
    }
    snprintf(t[0], sizeof t[0], "%.6g", p->true_us);
    snprintf(t[1], sizeof t[1], "%.4g", p->median_us);
    snprintf(t[2], sizeof t[2], "%+.3g", p->error_us);
    snprintf(t[3], sizeof t[3], "%+.3g", p->corrected_error_us);
    snprintf(t[4], sizeof t[4], "%.4g", p->held_median_us);
    snprintf(t[5], sizeof t[5], "%.4g", p->launch_overhead_us);
    IB__MD_ROW(b, kernel, t[0], t[1], t[2], t[3], t[4], t[5]);
}

static char *calibration_md(const ib_result *res)
{
    const ib_calibration_result *r = res->calibration;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "**inferbench calibrate**: ");
    ib__md_cell(&b, r->env.gpu_name[0] ? r->env.gpu_name : "no GPU");
    ib__sbuf_printf(&b, ", timer resolution %.3g us\n\n", r->timer_resolution_us);
    IB__MD_HEADER(&b, "lrrrrrr", "kernel", "true (us)", "median (us)", "error (us)",
                  "error less harness (us)", "launch excluded (us)", "launch overhead (us)");
    calibration_row(&b, "empty (harness)", &r->harness);
    for (size_t i = 0; i < r->n_points; i++) calibration_row(&b, "spin", &r->points[i]);
    ib__md_footer(&b, r->partial, r->stop_status, r->warnings);
    return ib__sbuf_finish(&b);
}

static void side_row(ib__sbuf *b, const char *label, const char *name, const ib_latency_file *f,
                     const ib_stats *st)
{
    char n[24], batch[24] = "?", t[2][32];
    snprintf(n, sizeof n, "%zu", st->n);
    if (f->batch > 0) snprintf(batch, sizeof batch, "%lld", (long long)f->batch);
    IB__MD_ROW(b, label, name ? name : "", f->model[0] ? f->model : "?", batch, n, ib__fmt_ms(t[0], st->p50),
               ib__fmt_ms(t[1], st->p99));
}

static void warning_item(void *ctx, const char *key, const char *line)
{
    (void)key;
    ib__sbuf_printf(ctx, "- warning: ");
    ib__md_cell(ctx, line);
    ib__sbuf_printf(ctx, "\n");
}

static char *comparison_md(const ib_result *res)
{
    const ib_comparison *c = res->comparison;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "**inferbench compare**: %s (%s)\n\n", ib_change_name(c->verdict),
                    ib_timing_name(res->a->timing));
    IB__MD_HEADER(&b, "lllrrrr", "", "file", "model", "batch", "n", "median", "p99");
    side_row(&b, "A (baseline)", res->a_name, res->a, &c->a);
    side_row(&b, "B (candidate)", res->b_name, res->b, &c->b);
    char t[5][40];
    snprintf(t[0], sizeof t[0], "%+.2f%%", ib__signed_shown(100 * c->change, 2));
    snprintf(t[1], sizeof t[1], "[%+.2f%%, %+.2f%%]", ib__signed_shown(100 * c->change_ci95[0], 2),
             ib__signed_shown(100 * c->change_ci95[1], 2));
    snprintf(t[2], sizeof t[2], "%.3g", c->mann_whitney_p);
    snprintf(t[3], sizeof t[3], "+-%.2f%%", 100 * c->threshold);
    ib__sbuf_printf(&b, "\n");
    IB__MD_HEADER(&b, "rlrrl", "median change", "95% CI", "Mann-Whitney p", "threshold", "verdict");
    IB__MD_ROW(&b, t[0], t[1], t[2], t[3], ib_change_name(c->verdict));
    ib__sbuf inputs = { 0 };
    ib__compare_inputs_warned_each(res->a->warnings, res->a_name, res->b->warnings, res->b_name, warning_item,
                                   &inputs);
    b.failed |= inputs.failed;
    if (inputs.len) ib__sbuf_printf(&b, "\n%s", inputs.data);
    free(inputs.data);
    if (c->spread_source[0]) {
        ib__sbuf_printf(
            &b,
            "\nThe 95%% CI is the runs' [%+.2f%%, %+.2f%%] widened by the spread between sessions, "
            "sd %.2f%% (",
            ib__signed_shown(100 * c->runs_ci95[0], 2), ib__signed_shown(100 * c->runs_ci95[1], 2),
            100 * c->between_sd);
        ib__md_cell(&b, c->spread_source);
        ib__sbuf_printf(&b, ").\n");
    }
    ib__energy_compared e;
    ib__energy_compare(res->a, res->b, &e);
    const char *everdict = ib__energy_change_verdict(e.change, e.ci, c->threshold);
    if (isfinite(e.change))
        ib__sbuf_printf(&b,
                        "\nEnergy per input: %.4g J -> %.4g J, %+.2f%% within [%+.2f%%, %+.2f%%] (%s): %s.\n",
                        e.a, e.b, ib__signed_shown(100 * e.change, 2), ib__signed_shown(100 * e.ci[0], 2),
                        ib__signed_shown(100 * e.ci[1], 2), e.how, everdict);
    else if (isfinite(e.a) || isfinite(e.b)) {
        const char *side, *why = ib__energy_why_not(&e, &side);
        ib__sbuf_printf(&b, "\nEnergy per input: %s: %s has no figure: %s.\n", everdict, side, why);
    }
    ib__sbuf warnings = { 0 };
    ib__compare_warnings_each(res->a, res->b, warning_item, &warnings);
    b.failed |= warnings.failed;
    if (warnings.len) ib__sbuf_printf(&b, "\n%s", warnings.data);
    free(warnings.data);
    return ib__sbuf_finish(&b);
}

/* serve: one row per rate, the answer to the target below. */
static char *serve_md(const ib_result *res)
{
    const ib_serve_result *r = res->serve;
    ib__sbuf b = { 0 };
    title(&b, "serve", res->info, res->serve_cfg->request_batch);
    IB__MD_HEADER(&b, "rrrrrrrrl", "offered/s", "achieved/s", "n", "p50", "p90", "p99", "queue p99",
                  "inputs/J", "target");
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_serve_point *p = &r->points[i];
        char t[8][32];
        const char *verdict = res->serve_cfg->slo_ms > 0 ? (p->met ? "met" : "not met") : "-";
        snprintf(t[2], sizeof t[2], "%lld", (long long)p->n);
        IB__MD_ROW(&b, ib__fmt_rate(t[0], p->offered_rate), ib__fmt_rate(t[1], p->achieved_rate), t[2],
                   ib__fmt_ms(t[3], p->total.p50), ib__fmt_ms(t[4], p->total.p90),
                   ib__fmt_ms(t[5], p->total.p99), ib__fmt_ms(t[6], p->queue.p99),
                   ib__fmt_inputs_per_joule(t[7], &p->energy), p->partial ? "partial" : verdict);
    }
    if (res->serve_cfg->slo_ms > 0 && r->found)
        ib__sbuf_printf(&b, "\nHighest rate meeting p%g <= %g ms: **%g requests/s**\n",
                        res->serve_cfg->slo_percentile * 100, res->serve_cfg->slo_ms,
                        r->points[r->best].offered_rate);
    ib__md_footer(&b, r->partial, r->stop_status, r->warnings);
    return ib__sbuf_finish(&b);
}

/* "1.234", or "" when v does not exist. */
static const char *md_number(char buf[32], double v)
{
    if (isfinite(v))
        snprintf(buf, 32, "%.6g", v);
    else
        buf[0] = '\0';
    return buf;
}

/* One row of the sessions table: name, exit status, message, a cell per
 * figure (value(figure, ctx) each). */
static void sessions_row(ib__sbuf *b, const char *name, const char *status, const char *message,
                         const cJSON *figures, double (*value)(const cJSON *, size_t), size_t at)
{
    ib__sbuf_printf(b, "| %s | %s | ", name, status);
    ib__md_cell(b, message);
    const cJSON *f;
    char num[32];
    cJSON_ArrayForEach(f, figures) ib__sbuf_printf(b, " | %s", md_number(num, value(f, at)));
    ib__sbuf_printf(b, " |\n");
}

static double aggregate_at(const cJSON *f, size_t row)
{
    return ib__figure_aggregate(f, (ib__figure_row)row);
}

/* The title, then one table: a row per session and the aggregate rows
 * (as the CSV), each figure a column headed "label (unit)". */
static char *sessions_md(const ib_result *r)
{
    cJSON *root = cJSON_Parse(r->sessions_json);
    const cJSON *sessions = cJSON_GetObjectItem(root, "sessions");
    const cJSON *figures = cJSON_GetObjectItem(sessions, "figures"), *f, *run;
    if (!figures) {
        cJSON_Delete(root);
        return NULL;
    }
    const char *schema = cJSON_GetStringValue(cJSON_GetObjectItem(root, "schema"));
    const char *model = cJSON_GetStringValue(cJSON_GetObjectItem(root, "model"));
    ib__sbuf b = { 0 };
    /* "inferbench.throughput/2": the command is between the dot and the slash. */
    const char *command = schema && strchr(schema, '.') ? strchr(schema, '.') + 1 : "";
    ib__sbuf_printf(&b, "**inferbench %.*s**: ", (int)strcspn(command, "/"), command);
    ib__md_cell(&b, model ? model : "");
    ib__sbuf_printf(&b, ", %.0f of %.0f sessions (each a fresh process)\n\n| session | exit status | message",
                    ib__json_num(sessions, "count"), ib__json_num(sessions, "requested"));
    cJSON_ArrayForEach(f, figures)
    {
        ib__sbuf_printf(&b, " | ");
        const char *unit = cJSON_GetStringValue(cJSON_GetObjectItem(f, "unit"));
        ib__md_cell(&b, cJSON_GetStringValue(cJSON_GetObjectItem(f, "label")));
        if (unit && *unit) ib__sbuf_printf(&b, " (%s)", unit);
    }
    ib__sbuf_printf(&b, " |\n|---:|---:|---");
    cJSON_ArrayForEach(f, figures) ib__sbuf_printf(&b, "|---:");
    ib__sbuf_printf(&b, "|\n");
    size_t i = 0;
    cJSON_ArrayForEach(run, cJSON_GetObjectItem(sessions, "runs"))
    {
        char name[24], status[24];
        snprintf(name, sizeof name, "%zu", ++i);
        snprintf(status, sizeof status, "%.0f", ib__json_num(run, "exit_status"));
        const char *message = cJSON_GetStringValue(cJSON_GetObjectItem(run, "message"));
        sessions_row(&b, name, status, message ? message : "", figures, ib__figure_value, i - 1);
    }
    for (size_t row = 0; row < IB__FIGURE_ROWS; row++)
        sessions_row(&b, ib__figure_row_names[row], "", "", figures, aggregate_at, row);
    const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(root, "stop_reason"));
    if (cJSON_IsTrue(cJSON_GetObjectItem(root, "partial")))
        ib__sbuf_printf(&b, "\n**Partial**: %s\n", reason ? reason : "stopped early");
    cJSON_Delete(root);
    return ib__sbuf_finish(&b);
}

static char *render_md(const ib_result *r)
{
    switch (r->kind) {
    case IB_RESULT_LATENCY: return latency_md(r);
    case IB_RESULT_THROUGHPUT: return throughput_md(r);
    case IB_RESULT_PITFALLS: return pitfalls_md(r);
    case IB_RESULT_CALIBRATION: return calibration_md(r);
    case IB_RESULT_COMPARISON: return comparison_md(r);
    case IB_RESULT_SESSIONS:
    case IB_RESULT_THROUGHPUT_SESSIONS:
    case IB_RESULT_PITFALLS_SESSIONS:
    case IB_RESULT_GENERATION_SESSIONS:
    case IB_RESULT_GEN_SERVE_SESSIONS: return sessions_md(r);
    case IB_RESULT_SERVE: return serve_md(r);
    case IB_RESULT_BEST:
        return r->best->generation ? ib__best_gen_md(r->best, r->generation) : ib__best_md(r->best);
    case IB_RESULT_FLEET:
        return r->fleet->serve ? ib__fleet_serve_report_md(r->fleet, r->info)
                               : ib__fleet_report_md(r->fleet, r->info);
    case IB_RESULT_GENERATION: return ib__gen_report_md(r->generation);
    case IB_RESULT_GEN_SERVE: return ib__gen_serve_rates_report_md(r);
    case IB_RESULT_BEST_SERVE: return ib__best_serve_md(r->best_serve, r->best_serve_cfg);
    case IB_RESULT_GEN_COMPARISON: break; /* not in its kinds */
    case IB_RESULT_GEN_SERVE_COMPARISON: return ib__gen_serve_comparison_md(r);
    }
    return NULL;
}

const ib__printer ib__md_printer = { "md", "md",
                                     IB__ALL_KINDS | IB__SESSIONS_KINDS | IB__KIND_BIT(IB_RESULT_GEN_SERVE) |
                                         IB__KIND_BIT(IB_RESULT_GEN_SERVE_COMPARISON) |
                                         IB__KIND_BIT(IB_RESULT_BEST_SERVE),
                                     render_md };
