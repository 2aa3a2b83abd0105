/* The reports of a fleet (docs/fleet.md): one entry per device (or rank)
 * with who it is, its figures and its GPU's state, then the host's
 * aggregate over the common window. Every format lists the same devices
 * with the same fields; JSON keeps each worker's kept latencies. */
#include "report/fleet_report.h"
#include "report/cells.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool measured(const ib_fleet_worker *w) { return w->status == IB_OK && w->n > 0; }

static const char *measured_name(const ib_fleet_result *f)
{
    return f->measured == IB_RESULT_THROUGHPUT ? "throughput" : "latency";
}

void ib__fleet_worker_label(char *buf, size_t cap, const ib_fleet_worker *w)
{
    if (w->rank >= 0)
        snprintf(buf, cap, "rank %d (%s, local %d)", w->rank, w->host[0] ? w->host : "?", w->local_rank);
    else
        snprintf(buf, cap, "device %d", w->index);
}

void ib__fleet_throttle_text(char *buf, size_t cap, unsigned long long reasons)
{
    if (reasons & ~1ull) /* bit 0 (GPU idle) is rest, not throttling */
        snprintf(buf, cap, "0x%llx", reasons);
    else
        snprintf(buf, cap, "none");
}

void ib__fleet_gpu_cells(const ib_fleet_worker *w, char clock[16], char temp[16], char power[16])
{
    snprintf(clock, 16, isfinite(w->sm_clock_pct) ? "%.0f%%" : "-", w->sm_clock_pct);
    snprintf(temp, 16, w->max_temperature_c ? "%u C" : "-", w->max_temperature_c);
    snprintf(power, 16, isfinite(w->mean_power_w) ? "%.0f W" : "-", w->mean_power_w);
}

void ib__fleet_aggregate_lines(ib__sbuf *b, const ib_fleet_result *f, const char *bullet)
{
    if (f->straggler < 0) {
        ib__sbuf_printf(b, "%sno device measured\n", bullet);
        return;
    }
    /* serve: a worker's runs are requests, its straggler judged by p99 */
    bool serve = f->measured == IB_RESULT_SERVE;
    ib__sbuf_printf(b, "%shost: %.1f %s summed over the common window %.3f-%.3f ms\n", bullet, f->items_per_s,
                    serve ? "requests/s" : "inputs/s", f->window_start_ms, f->window_end_ms);
    ib__sbuf_printf(b, "%spooled latency: median %.4f ms, p99 %.4f ms over %zu %s%s\n", bullet, f->pooled.p50,
                    f->pooled.p99, f->pooled.n, serve ? "requests" : "runs",
                    f->pooled_sampled ? " (from the kept samples, weighted)" : "");
    char slow[96], fast[96];
    ib__fleet_worker_label(slow, sizeof slow, &f->workers[f->straggler]);
    ib__fleet_worker_label(fast, sizeof fast, &f->workers[f->fastest]);
    const ib_stats *s = &f->workers[f->straggler].latency, *q = &f->workers[f->fastest].latency;
    ib__sbuf_printf(b, "%sstraggler: %s, %s %.4f ms: %.3fx the fastest (%s, %.4f ms)\n", bullet, slow,
                    serve ? "p99" : "median", serve ? s->p99 : s->p50, f->straggler_ratio, fast,
                    serve ? q->p99 : q->p50);
    if (f->has_alone)
        ib__sbuf_printf(b, "%sscaling: %.1f inputs/s alone on the first device: efficiency %.1f%%\n", bullet,
                        f->alone.items_per_s, 100 * f->scaling_efficiency);
}

void ib__fleet_failures(ib__sbuf *b, const ib_fleet_result *f, const char *bullet)
{
    char who[96];
    for (size_t i = 0; i < f->n_workers; i++) {
        const ib_fleet_worker *w = &f->workers[i];
        if (measured(w) || w->status == IB_OK) continue; /* OK without figures: serve's idle device */
        ib__fleet_worker_label(who, sizeof who, w);
        ib__sbuf_printf(b, "%sFAILED: %s: %s\n", bullet, who, w->error);
    }
    if (f->mixed_devices)
        ib__sbuf_printf(b,
                        "%swarning: the devices are of different models: the sum and the straggler compare "
                        "unlike devices\n",
                        bullet);
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

static void text_row(ib__sbuf *b, const ib_fleet_worker *w)
{
    char who[96], throttle[32];
    ib__fleet_worker_label(who, sizeof who, w);
    if (!measured(w)) {
        ib__sbuf_printf(b, "  %-28s failed: %s\n", who, w->error);
        return;
    }
    ib__fleet_throttle_text(throttle, sizeof throttle, w->throttle_reasons);
    char clock[16], temp[16], power[16];
    ib__fleet_gpu_cells(w, clock, temp, power);
    ib__sbuf_printf(b, "  %-28s %-24.24s %10.4f %10.4f %11.1f %11.1f %7s %7s %8s  %s\n", who, w->name,
                    w->latency.p50, w->latency.p99, w->items_per_s, w->window_items_per_s, clock, temp, power,
                    throttle);
    ib__sbuf_printf(b, "  %-28s uuid %s, PCI %s, NUMA node %d\n", "", w->uuid[0] ? w->uuid : "-",
                    w->pci_bus_id[0] ? w->pci_bus_id : "-", w->numa_node);
}

char *ib__fleet_report_text(const ib_fleet_result *f, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "fleet %s: %zu %s, %s at batch %lld\n", measured_name(f), f->n_workers,
                    f->mpi ? "MPI ranks" : "devices", info->model, (long long)info->batch);
    ib__sbuf_printf(&b, "  %-28s %-24s %10s %10s %11s %11s %7s %7s %8s  %s\n", "worker", "name", "median ms",
                    "p99 ms", "inputs/s", "in window", "SM clk", "max T", "power", "throttle");
    for (size_t i = 0; i < f->n_workers; i++) text_row(&b, &f->workers[i]);
    ib__fleet_aggregate_lines(&b, f, "");
    ib__fleet_failures(&b, f, "");
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

cJSON *ib__fleet_json_worker(const ib_fleet_worker *w)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", w->index);
    if (w->rank >= 0) {
        cJSON_AddNumberToObject(o, "rank", w->rank);
        cJSON_AddNumberToObject(o, "local_rank", w->local_rank);
        cJSON_AddStringToObject(o, "host", w->host);
    }
    cJSON_AddStringToObject(o, "status", measured(w) ? "ok" : ib_status_str(w->status));
    if (!measured(w)) {
        cJSON_AddStringToObject(o, "error", w->error);
        return o;
    }
    cJSON_AddStringToObject(o, "device", w->device);
    cJSON_AddStringToObject(o, "name", w->name);
    cJSON_AddStringToObject(o, "uuid", w->uuid);
    cJSON_AddStringToObject(o, "pci_bus_id", w->pci_bus_id);
    cJSON_AddNumberToObject(o, "numa_node", w->numa_node);
    cJSON_AddNumberToObject(o, "batch", (double)w->batch);
    cJSON_AddItemToObject(o, "latency_ms", ib__json_stats(&w->latency));
    ib__json_add_number(o, "items_per_s", w->items_per_s);
    ib__json_add_number(o, "window_runs", w->window_runs);
    ib__json_add_number(o, "window_items_per_s", w->window_items_per_s);
    cJSON *phase = cJSON_AddArrayToObject(o, "timed_ms");
    cJSON_AddItemToArray(phase, ib__json_number(w->start_ms));
    cJSON_AddItemToArray(phase, ib__json_number(w->end_ms));
    cJSON *gpu = cJSON_AddObjectToObject(o, "gpu_state");
    ib__json_add_number(gpu, "sm_clock_pct_of_max", w->sm_clock_pct);
    cJSON_AddNumberToObject(gpu, "max_temperature_c", w->max_temperature_c);
    ib__json_add_number(gpu, "mean_power_w", w->mean_power_w);
    cJSON_AddNumberToObject(gpu, "throttle_reasons", (double)w->throttle_reasons);
    ib__json_add_warnings(o, w->warnings);
    cJSON_AddStringToObject(o, "samples_kept", w->n_kept < w->n ? "reservoir" : "all");
    cJSON_AddItemToObject(o, "samples_ms", ib__json_array(w->kept_ms, w->n_kept));
    return o;
}

cJSON *ib__fleet_json_aggregate(const ib_fleet_result *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "workers", (double)f->n_workers);
    cJSON_AddNumberToObject(o, "failed", (double)f->n_failed);
    cJSON_AddBoolToObject(o, "mpi", f->mpi);
    if (f->straggler < 0) return o;
    cJSON *window = cJSON_AddArrayToObject(o, "window_ms");
    cJSON_AddItemToArray(window, ib__json_number(f->window_start_ms));
    cJSON_AddItemToArray(window, ib__json_number(f->window_end_ms));
    ib__json_add_number(o, "items_per_s", f->items_per_s);
    cJSON_AddItemToObject(o, "latency_ms", ib__json_stats(&f->pooled));
    cJSON_AddBoolToObject(o, "latency_sampled", f->pooled_sampled);
    cJSON *s = cJSON_AddObjectToObject(o, "straggler");
    cJSON_AddNumberToObject(s, "index", f->workers[f->straggler].index);
    cJSON_AddNumberToObject(s, "fastest_index", f->workers[f->fastest].index);
    /* serve judges the straggler by p99, the others by the median */
    ib__json_add_number(s, f->measured == IB_RESULT_SERVE ? "p99_ratio" : "median_ratio", f->straggler_ratio);
    cJSON_AddBoolToObject(o, "mixed_devices", f->mixed_devices);
    if (f->has_alone) {
        cJSON_AddItemToObject(o, "alone", ib__fleet_json_worker(&f->alone));
        ib__json_add_number(o, "scaling_efficiency", f->scaling_efficiency);
    }
    return o;
}

char *ib__fleet_report_json(const ib_fleet_result *f, const ib_workload_info *info, const ib_config *cfg)
{
    const ib_fleet_worker *failed = NULL;
    for (size_t i = 0; i < f->n_workers && !failed; i++)
        if (!measured(&f->workers[i])) failed = &f->workers[i];
    cJSON *root =
        ib__json_document("inferbench.fleet/1", failed != NULL, failed ? failed->status : IB_OK, info);
    cJSON_AddStringToObject(root, "measured", measured_name(f));
    if (cfg) cJSON_AddItemToObject(root, "config", ib__json_config(cfg));
    cJSON *devices = cJSON_AddArrayToObject(root, "devices");
    for (size_t i = 0; i < f->n_workers; i++)
        cJSON_AddItemToArray(devices, ib__fleet_json_worker(&f->workers[i]));
    cJSON_AddItemToObject(root, "fleet", ib__fleet_json_aggregate(f));
    return ib__json_finish(root);
}

/* ------------------------------------------------------------------------ */
/* CSV: one row per device, then the host's row                              */
/* ------------------------------------------------------------------------ */

#define EOL "\r\n"

static void csv_row(ib__sbuf *b, const char *model, const ib_fleet_worker *w)
{
    char who[96];
    ib__fleet_worker_label(who, sizeof who, w);
    ib__csv_field(b, model);
    ib__csv_text_cell(b, who);
    ib__sbuf_printf(b, ",%d,%d,", w->index, w->rank);
    ib__csv_field(b, w->host);
    ib__csv_text_cell(b, w->name);
    ib__csv_text_cell(b, w->uuid);
    ib__sbuf_printf(b, ",%s,%d,%s,", w->pci_bus_id, w->numa_node,
                    measured(w) ? "ok" : ib_status_str(w->status));
    ib__csv_field(b, w->error);
    ib__sbuf_printf(b, ",%lld,%zu", (long long)w->batch, w->n);
    bool m = measured(w);
    ib__csv_number(b, m ? w->latency.p50 : NAN);
    ib__csv_number(b, m ? w->latency.p99 : NAN);
    ib__csv_number(b, m ? w->items_per_s : NAN);
    ib__csv_number(b, m ? w->window_items_per_s : NAN);
    ib__csv_number(b, m ? w->sm_clock_pct : NAN);
    ib__csv_number(b, m ? (double)w->max_temperature_c : NAN);
    ib__csv_number(b, m ? w->mean_power_w : NAN);
    ib__sbuf_printf(b, ",%llu" EOL, w->throttle_reasons);
}

char *ib__fleet_report_csv(const ib_fleet_result *f, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "model,worker,index,rank,host,name,uuid,pci_bus_id,numa_node,status,error,batch,runs,"
                        "median_ms,p99_ms,items_per_s,window_items_per_s,sm_clock_pct,max_temperature_c,"
                        "mean_power_w,throttle_reasons" EOL);
    for (size_t i = 0; i < f->n_workers; i++) csv_row(&b, info->model, &f->workers[i]);
    ib__csv_field(&b, info->model);
    ib__sbuf_printf(&b, ",host,-1,-1,,,,,,%s,,%lld,%zu", f->straggler >= 0 ? "ok" : "failed",
                    (long long)info->batch, f->pooled.n);
    ib__csv_number(&b, f->straggler >= 0 ? f->pooled.p50 : NAN);
    ib__csv_number(&b, f->straggler >= 0 ? f->pooled.p99 : NAN);
    ib__csv_number(&b, f->items_per_s);
    ib__csv_number(&b, f->items_per_s);
    ib__sbuf_printf(&b, ",,,,0" EOL);
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* Markdown and HTML: the same table                                         */
/* ------------------------------------------------------------------------ */

static const char *const table_heads[] = { "worker",    "name",   "UUID",     "PCI",       "NUMA",
                                           "median ms", "p99 ms", "inputs/s", "in window", "SM clock",
                                           "max temp",  "power",  "throttle" };
#define N_HEADS (sizeof table_heads / sizeof table_heads[0])

/* The cells of w's row as text, in table_heads' order. */
static void row_cells(const ib_fleet_worker *w, char cells[N_HEADS][256])
{
    ib__fleet_worker_label(cells[0], 256, w);
    snprintf(cells[1], 256, "%s", measured(w) ? w->name : "failed");
    snprintf(cells[2], 256, "%s", measured(w) ? w->uuid : w->error);
    snprintf(cells[3], 256, "%s", w->pci_bus_id);
    snprintf(cells[4], 256, "%d", w->numa_node);
    snprintf(cells[5], 256, "%.4f", w->latency.p50);
    snprintf(cells[6], 256, "%.4f", w->latency.p99);
    snprintf(cells[7], 256, "%.1f", w->items_per_s);
    snprintf(cells[8], 256, "%.1f", w->window_items_per_s);
    char clock[16], temp[16], power[16];
    ib__fleet_gpu_cells(w, clock, temp, power);
    snprintf(cells[9], 256, "%s", clock);
    snprintf(cells[10], 256, "%s", temp);
    snprintf(cells[11], 256, "%s", power);
    ib__fleet_throttle_text(cells[12], 256, w->throttle_reasons);
    if (!measured(w))
        for (size_t k = 3; k < N_HEADS; k++) snprintf(cells[k], 256, "-");
}

char *ib__fleet_report_md(const ib_fleet_result *f, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "## Fleet %s: ", measured_name(f));
    ib__md_cell(&b, info->model);
    ib__sbuf_printf(&b, ", batch %lld\n\n|", (long long)info->batch);
    for (size_t k = 0; k < N_HEADS; k++) ib__sbuf_printf(&b, " %s |", table_heads[k]);
    ib__sbuf_printf(&b, "\n|");
    for (size_t k = 0; k < N_HEADS; k++) ib__sbuf_printf(&b, "---|");
    char cells[N_HEADS][256];
    for (size_t i = 0; i < f->n_workers; i++) {
        row_cells(&f->workers[i], cells);
        ib__sbuf_printf(&b, "\n|");
        for (size_t k = 0; k < N_HEADS; k++) {
            ib__sbuf_printf(&b, " ");
            ib__md_cell(&b, cells[k]);
            ib__sbuf_printf(&b, " |");
        }
    }
    ib__sbuf_printf(&b, "\n\n");
    ib__fleet_aggregate_lines(&b, f, "- ");
    ib__fleet_failures(&b, f, "- ");
    return ib__sbuf_finish(&b);
}

void ib__fleet_html_text_and_end(ib__sbuf *b, char *text)
{
    ib__sbuf_printf(b, "<pre>");
    if (text) ib__xml_escape(b, text);
    ib_free(text);
    ib__sbuf_printf(b, "</pre>\n</body></html>\n");
}

char *ib__fleet_report_html(const ib_fleet_result *f, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>inferbench fleet: ");
    ib__xml_escape(&b, info->model);
    ib__sbuf_printf(&b,
                    "</title><style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right}"
                    "</style></head><body>\n<h1>Fleet %s: ",
                    measured_name(f));
    ib__xml_escape(&b, info->model);
    ib__sbuf_printf(&b, "</h1>\n<table>\n<tr>");
    for (size_t k = 0; k < N_HEADS; k++) ib__sbuf_printf(&b, "<th>%s</th>", table_heads[k]);
    ib__sbuf_printf(&b, "</tr>\n");
    char cells[N_HEADS][256];
    for (size_t i = 0; i < f->n_workers; i++) {
        row_cells(&f->workers[i], cells);
        ib__sbuf_printf(&b, "<tr>");
        for (size_t k = 0; k < N_HEADS; k++) {
            ib__sbuf_printf(&b, "<td>");
            ib__xml_escape(&b, cells[k]);
            ib__sbuf_printf(&b, "</td>");
        }
        ib__sbuf_printf(&b, "</tr>\n");
    }
    ib__sbuf_printf(&b, "</table>\n");
    ib__fleet_html_text_and_end(&b, ib__fleet_report_text(f, info));
    return ib__sbuf_finish(&b);
}
