/* The CSV printer (RFC 4180): a header row, then one row per timed run
 * (latency), per batch of the curve (throughput), per method (pitfalls),
 * per kernel (calibration), or one summary row (compare). Every row of a
 * measurement starts with what was measured (model, device, batch), so
 * that the files of many runs concatenate into one table. Columns:
 * docs/report.md. */
#include "report/fleet_report.h"
#include "report/printer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines end in CRLF, as RFC 4180 writes them. */
#define EOL "\r\n"

/* The first cells of every row of a measurement:
 * "model,device,batch,options" (options: "threads=1, math=fp32"). */
static void workload_cells(ib__sbuf *b, const ib_workload_info *info, int64_t batch)
{
    char options[IB__OPTIONS_TEXT_LEN];
    ib__info_runtime_options(options, sizeof options, info);
    ib__csv_field(b, info->model);
    ib__sbuf_printf(b, ",%s,%lld", ib__device_name(info->device), (long long)batch);
    ib__csv_text_cell(b, options);
}

char *ib_serve_requests_csv(const ib_serve_request *r, size_t n)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b,
                    "rate_index,request,instance,run_requests,arrival_ms,start_ms,end_ms,queue_ms,wakeup_ms,"
                    "h2d_ms,compute_ms,d2h_ms,total_ms" EOL);
    for (size_t i = 0; i < n; i++) {
        const ib_serve_request *q = &r[i];
        ib__sbuf_printf(&b, "%zu,%zu,%d,%lld", q->rate_index, q->index, q->instance,
                        (long long)q->run_requests);
        const double cells[] = { q->arrival_ms, q->start_ms,   q->end_ms, q->queue_ms, q->wakeup_ms,
                                 q->h2d_ms,     q->compute_ms, q->d2h_ms, q->total_ms };
        for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) ib__csv_number(&b, cells[c]);
        ib__sbuf_printf(&b, EOL);
    }
    return ib__sbuf_finish(&b);
}

static char *latency_csv(const ib_result *res)
{
    const ib_latency_result *r = res->latency;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "model,device,batch,options,run,device_ms,host_ms" EOL);
    for (size_t i = 0; i < r->n; i++) {
        workload_cells(&b, res->info, res->info->batch);
        ib__sbuf_printf(&b, ",%zu", i + 1);
        ib__csv_number(&b, r->device_ms ? r->device_ms[i] : NAN);
        ib__csv_number(&b, r->host_ms[i]);
        ib__sbuf_printf(&b, EOL);
    }
    return ib__sbuf_finish(&b);
}

static const char *yes_no(bool v) { return v ? "true" : "false"; }

/* The energy figure's cells (empty without one): joules_per_item,
 * items_per_joule, energy_bound, and with more power_w and
 * joules_per_item_above_idle. */
static void energy_cells(ib__sbuf *b, const ib_energy *e, bool more)
{
    bool has = e->source != IB_ENERGY_NONE;
    ib__csv_number(b, has ? e->joules_per_item : NAN);
    ib__csv_number(b, has ? e->items_per_joule : NAN);
    ib__csv_number(b, has ? e->bound : NAN);
    if (!more) return;
    ib__csv_number(b, has ? e->power_w : NAN);
    ib__csv_number(b, has ? e->joules_per_item_above_idle : NAN);
}

static char *throughput_csv(const ib_result *res)
{
    const ib_throughput_result *r = res->throughput;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b,
                    "model,device,batch,options,status,items_per_s,items_per_s_sync,back_to_back_ms_per_run,"
                    "n,median_ms,p99_ms,mean_ms,first_run_ms,warmup_runs,peak,knee,best_within_budget,"
                    "joules_per_item,items_per_joule,energy_bound,power_w,joules_per_item_above_idle,"
                    "most_efficient" EOL);
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_throughput_point *p = &r->points[i];
        bool ok = p->status == IB_OK;
        workload_cells(&b, res->info, p->batch);
        ib__csv_text_cell(&b, ib_status_str(p->status));
        ib__csv_number(&b, ok ? p->items_per_s : NAN);
        ib__csv_number(&b, ok ? p->items_per_s_sync : NAN);
        ib__csv_number(&b, ok ? p->back_to_back_ms_per_run : NAN);
        ib__csv_number(&b, ok ? (double)p->latency_ms.n : NAN);
        ib__csv_number(&b, ok ? p->latency_ms.p50 : NAN);
        ib__csv_number(&b, ok ? p->latency_ms.p99 : NAN);
        ib__csv_number(&b, ok ? p->latency_ms.mean : NAN);
        ib__csv_number(&b, ok ? p->first_run_ms : NAN);
        ib__csv_number(&b, ok ? (double)p->warmup_runs : NAN);
        ib__sbuf_printf(&b, ",%s,%s,%s", yes_no(r->peak == (int)i), yes_no(r->knee == (int)i),
                        yes_no(r->best_within_budget == (int)i));
        energy_cells(&b, &p->energy, true);
        ib__sbuf_printf(&b, ",%s" EOL, yes_no(r->most_efficient == (int)i));
    }
    return ib__sbuf_finish(&b);
}

static char *pitfalls_csv(const ib_result *res)
{
    const ib_pitfalls_result *r = res->pitfalls;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "model,device,batch,options,method,applies,status,n,median_ms,p99_ms,mean_ms,std_ms,"
                        "error_pct,error_ci95_low_pct,error_ci95_high_pct,verdict,math,joules_per_item" EOL);
    for (size_t i = 0; i < IB_PITFALL_COUNT; i++) {
        const ib_pitfall_row *row = &r->rows[i];
        bool measured = row->applies && row->stats.n > 0;
        workload_cells(&b, res->info, res->info->batch);
        ib__csv_text_cell(&b, row->name);
        ib__sbuf_printf(&b, ",%s", yes_no(row->applies));
        ib__csv_text_cell(&b, row->applies ? ib_status_str(row->status) : "");
        ib__csv_number(&b, row->applies ? (double)row->stats.n : NAN);
        ib__csv_number(&b, measured ? row->stats.p50 : NAN);
        ib__csv_number(&b, measured ? row->stats.p99 : NAN);
        ib__csv_number(&b, measured ? row->stats.mean : NAN);
        ib__csv_number(&b, measured ? row->stats.std : NAN);
        ib__csv_number(&b, measured && i != IB_PITFALL_CORRECT ? row->error_pct : NAN);
        ib__csv_number(&b, row->error_ci95_pct[0]);
        ib__csv_number(&b, row->error_ci95_pct[1]);
        ib__csv_text_cell(
            &b, row->reading == IB_READING_NOT_COMPARED ? "" : ib_pitfall_reading_name(row->reading));
        /* The arithmetic of the row's figures: the reference's, but the TF32 row's own. */
        ib__csv_text_cell(&b, measured ? ib__pitfall_math(r, row) : "");
        ib__sbuf_printf(&b, "," EOL);
    }
    /* The energy rows (docs/energy.md): their figure per input and its
     * error against the correct one; no time columns. */
    ib__energy_pitfall_row rows[3];
    size_t n = ib__energy_pitfall_rows(&r->energy, rows);
    for (size_t i = 0; i < n; i++) {
        workload_cells(&b, res->info, res->info->batch);
        ib__sbuf_printf(&b, ",");
        char name[sizeof rows[i].name + 8] = "energy: ";
        ib__strlcpy(name + 8, rows[i].name, sizeof rows[i].name);
        ib__csv_field(&b, name);
        ib__sbuf_printf(&b, ",true");
        ib__csv_text_cell(&b, isfinite(rows[i].joules_per_item) ? "ok" : "not measured");
        ib__sbuf_printf(&b, ",,,,,");
        ib__csv_number(&b, i > 0 ? rows[i].error_pct : NAN);
        ib__sbuf_printf(&b, ",,,,");
        ib__csv_number(&b, rows[i].joules_per_item);
        ib__sbuf_printf(&b, EOL);
    }
    return ib__sbuf_finish(&b);
}

static void calibration_row(ib__sbuf *b, const char *gpu, const char *kernel, const ib_calibration_point *p)
{
    ib__csv_field(b, gpu);
    ib__sbuf_printf(b, ",%s", kernel);
    ib__csv_number(b, p->true_us);
    ib__csv_text_cell(b, ib_status_str(p->status));
    ib__csv_number(b, (double)p->n);
    const double v[] = { p->median_us,          p->p5_us,         p->p95_us,
                         p->error_us,           p->error_pct,     p->corrected_error_us,
                         p->held_median_us,     p->held_error_us, p->held_corrected_error_us,
                         p->launch_overhead_us, p->host_median_us };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) ib__csv_number(b, p->status == IB_OK ? v[i] : NAN);
    ib__sbuf_printf(b, EOL);
}

static char *calibration_csv(const ib_result *res)
{
    const ib_calibration_result *r = res->calibration;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "gpu,kernel,true_us,status,n,median_us,p5_us,p95_us,error_us,error_pct,"
                        "corrected_error_us,held_median_us,held_error_us,held_corrected_error_us,"
                        "launch_overhead_us,host_median_us" EOL);
    calibration_row(&b, r->env.gpu_name, "empty", &r->harness);
    for (size_t i = 0; i < r->n_points; i++) calibration_row(&b, r->env.gpu_name, "spin", &r->points[i]);
    return ib__sbuf_finish(&b);
}

/* Appends each warning key, separated by ';', into the one cell. */
static void add_key(void *ctx, const char *key, const char *line)
{
    (void)line;
    ib__sbuf *keys = ctx;
    ib__sbuf_printf(keys, "%s%s", keys->len ? ";" : "", key);
}

static void side_cells(ib__sbuf *b, const char *name, const ib_latency_file *f, const ib_stats *st)
{
    ib__csv_text_cell(b, name ? name : "");
    ib__csv_text_cell(b, f->model);
    ib__csv_number(b, (double)st->n);
    ib__csv_number(b, st->p50);
    ib__csv_number(b, st->p99);
}

static char *comparison_csv(const ib_result *res)
{
    const ib_comparison *c = res->comparison;
    ib__sbuf b = { 0 }, keys = { 0 };
    ib__sbuf_printf(
        &b, "timing,a_file,a_model,a_n,a_median_ms,a_p99_ms,b_file,b_model,b_n,b_median_ms,"
            "b_p99_ms,change_pct,ci95_low_pct,ci95_high_pct,mann_whitney_u,mann_whitney_p,"
            "threshold_pct,verdict,warnings,runs_ci95_low_pct,runs_ci95_high_pct,between_sd_pct,"
            "spread_source,a_joules_per_item,b_joules_per_item,energy_change_pct,"
            "energy_interval_low_pct,energy_interval_high_pct,energy_verdict,a_warnings,b_warnings" EOL);
    ib__sbuf_printf(&b, "%s", ib_timing_name(res->a->timing));
    side_cells(&b, res->a_name, res->a, &c->a);
    side_cells(&b, res->b_name, res->b, &c->b);
    const double v[] = { 100 * c->change,   100 * c->change_ci95[0], 100 * c->change_ci95[1],
                         c->mann_whitney_u, c->mann_whitney_p,       100 * c->threshold };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) ib__csv_number(&b, v[i]);
    ib__csv_text_cell(&b, ib_change_name(c->verdict));
    ib__compare_warnings_each(res->a, res->b, add_key, &keys);
    b.failed |= keys.failed;
    char *list = ib__sbuf_finish(&keys);
    ib__csv_text_cell(&b, list ? list : "");
    free(list);
    /* Widened by a known spread between sessions (docs/compare.md): the
     * interval of the runs alone, the spread and where it comes from. */
    bool widened = c->spread_source[0] != '\0';
    ib__csv_number(&b, widened ? 100 * c->runs_ci95[0] : NAN);
    ib__csv_number(&b, widened ? 100 * c->runs_ci95[1] : NAN);
    ib__csv_number(&b, widened ? 100 * c->between_sd : NAN);
    ib__csv_text_cell(&b, c->spread_source);
    ib__energy_compared e;
    ib__energy_compare(res->a, res->b, &e);
    ib__csv_number(&b, e.a > 0 ? e.a : NAN);
    ib__csv_number(&b, e.b > 0 ? e.b : NAN);
    ib__csv_number(&b, 100 * e.change);
    ib__csv_number(&b, 100 * e.ci[0]);
    ib__csv_number(&b, 100 * e.ci[1]);
    ib__csv_text_cell(&b, ib__energy_change_verdict(e.change, e.ci, c->threshold));
    const ib_latency_file *sides[2] = { res->a, res->b };
    for (int i = 0; i < 2; i++) {
        ib__sbuf side = { 0 };
        ib__warning_keys_list(&side, sides[i]->warnings);
        b.failed |= side.failed;
        char *keys_of_side = ib__sbuf_finish(&side);
        ib__csv_text_cell(&b, keys_of_side ? keys_of_side : "");
        free(keys_of_side);
    }
    ib__sbuf_printf(&b, EOL);
    return ib__sbuf_finish(&b);
}

/* serve: one row per rate, in the order measured; the percentiles of each
 * part of a request (docs/serve.md). */
static char *serve_csv(const ib_result *res)
{
    const ib_serve_result *r = res->serve;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(
        &b, "model,device,request_batch,options,instances,offered_rate,achieved_rate,n,scheduled,over_target,"
            "met,partial,queue_p50_ms,queue_p99_ms,h2d_p50_ms,compute_p50_ms,compute_p99_ms,d2h_p50_ms,"
            "total_p50_ms,total_p90_ms,total_p99_ms,runs,joules_per_item,items_per_joule,energy_bound" EOL);
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_serve_point *p = &r->points[i];
        bool apart = r->copies == IB_SERVE_COPIES_APART && p->n > 0, any = p->n > 0;
        workload_cells(&b, res->info, res->serve_cfg->request_batch);
        ib__sbuf_printf(&b, ",%zu", r->instances);
        ib__csv_number(&b, p->offered_rate);
        ib__csv_number(&b, p->achieved_rate);
        ib__sbuf_printf(&b, ",%lld,%lld,%lld", (long long)p->n, (long long)p->scheduled,
                        (long long)p->over_slo);
        ib__csv_text_cell(&b, yes_no(p->met));
        ib__csv_text_cell(&b, yes_no(p->partial));
        const double cells[] = { any ? p->queue.p50 : NAN,   any ? p->queue.p99 : NAN,
                                 apart ? p->h2d.p50 : NAN,   any ? p->compute.p50 : NAN,
                                 any ? p->compute.p99 : NAN, apart ? p->d2h.p50 : NAN,
                                 any ? p->total.p50 : NAN,   any ? p->total.p90 : NAN,
                                 any ? p->total.p99 : NAN };
        for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) ib__csv_number(&b, cells[c]);
        ib__sbuf_printf(&b, ",%lld", (long long)p->runs);
        energy_cells(&b, &p->energy, false);
        ib__sbuf_printf(&b, EOL);
    }
    return ib__sbuf_finish(&b);
}

/* The first cells of a sessions row: model, device, and the batch of a
 * latency or pitfalls (a throughput's sessions measure many: empty). */
static void sessions_workload_cells(ib__sbuf *b, const cJSON *root)
{
    const char *schema = cJSON_GetStringValue(cJSON_GetObjectItem(root, "schema"));
    const char *model = cJSON_GetStringValue(cJSON_GetObjectItem(root, "model"));
    const char *device = cJSON_GetStringValue(cJSON_GetObjectItem(root, "device"));
    ib__csv_field(b, model ? model : "");
    ib__sbuf_printf(b, ",%s,", device ? device : "");
    /* Throughput's sessions each searched their batch; generation has none. */
    double batch = ib__json_num(cJSON_GetObjectItem(root, "workload"), "batch");
    if (schema && strcmp(schema, "inferbench.throughput/2") && isfinite(batch))
        ib__sbuf_printf(b, "%.0f", batch);
}

/* One row per session (its exit status, its message, a column per
 * figure), then the aggregate rows: median, ci95_low, ci95_high,
 * between_sd_log, spread of each figure across sessions. */
static char *sessions_csv(const ib_result *r)
{
    cJSON *root = cJSON_Parse(r->sessions_json);
    const cJSON *sessions = cJSON_GetObjectItem(root, "sessions");
    const cJSON *figures = cJSON_GetObjectItem(sessions, "figures"), *f, *run;
    if (!figures) {
        cJSON_Delete(root);
        return NULL;
    }
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "model,device,batch,session,exit_status,message");
    cJSON_ArrayForEach(f, figures) ib__csv_text_cell(&b, cJSON_GetStringValue(cJSON_GetObjectItem(f, "key")));
    ib__sbuf_printf(&b, EOL);
    size_t i = 0;
    cJSON_ArrayForEach(run, cJSON_GetObjectItem(sessions, "runs"))
    {
        sessions_workload_cells(&b, root);
        ib__sbuf_printf(&b, ",%zu,%.0f", i + 1, ib__json_num(run, "exit_status"));
        ib__csv_text_cell(&b, cJSON_GetStringValue(cJSON_GetObjectItem(run, "message")));
        cJSON_ArrayForEach(f, figures) ib__csv_number(&b, ib__figure_value(f, i));
        ib__sbuf_printf(&b, EOL);
        i++;
    }
    for (int row = 0; row < IB__FIGURE_ROWS; row++) {
        sessions_workload_cells(&b, root);
        ib__sbuf_printf(&b, ",%s,,", ib__figure_row_names[row]);
        cJSON_ArrayForEach(f, figures) ib__csv_number(&b, ib__figure_aggregate(f, (ib__figure_row)row));
        ib__sbuf_printf(&b, EOL);
    }
    cJSON_Delete(root);
    return ib__sbuf_finish(&b);
}

static char *render_csv(const ib_result *r)
{
    switch (r->kind) {
    case IB_RESULT_LATENCY: return latency_csv(r);
    case IB_RESULT_THROUGHPUT: return throughput_csv(r);
    case IB_RESULT_PITFALLS: return pitfalls_csv(r);
    case IB_RESULT_CALIBRATION: return calibration_csv(r);
    case IB_RESULT_COMPARISON: return comparison_csv(r);
    case IB_RESULT_SESSIONS:
    case IB_RESULT_THROUGHPUT_SESSIONS:
    case IB_RESULT_PITFALLS_SESSIONS:
    case IB_RESULT_GENERATION_SESSIONS:
    case IB_RESULT_GEN_SERVE_SESSIONS: return sessions_csv(r);
    case IB_RESULT_SERVE: return serve_csv(r);
    case IB_RESULT_BEST: return r->best->generation ? ib__best_gen_csv(r->best) : ib__best_csv(r->best);
    case IB_RESULT_FLEET:
        return r->fleet->serve ? ib__fleet_serve_report_csv(r->fleet, r->info)
                               : ib__fleet_report_csv(r->fleet, r->info);
    case IB_RESULT_GENERATION: return ib__gen_report_csv(r->generation);
    case IB_RESULT_GEN_SERVE: return ib__gen_serve_rates_report_csv(r);
    case IB_RESULT_BEST_SERVE: return ib__best_serve_csv(r->best_serve);
    case IB_RESULT_GEN_COMPARISON: break; /* not in its kinds */
    case IB_RESULT_GEN_SERVE_COMPARISON: return ib__gen_serve_comparison_csv(r);
    }
    return NULL;
}

const ib__printer ib__csv_printer = { "csv", "csv",
                                      IB__ALL_KINDS | IB__SESSIONS_KINDS | IB__KIND_BIT(IB_RESULT_GEN_SERVE) |
                                          IB__KIND_BIT(IB_RESULT_GEN_SERVE_COMPARISON) |
                                          IB__KIND_BIT(IB_RESULT_BEST_SERVE),
                                      render_csv };
