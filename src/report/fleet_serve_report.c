/* The reports of serve --devices (docs/fleet.md): the host at every rate
 * (its offered rate, the requests/s summed over the common window, the
 * pooled latency, the straggler by p99, whether every device met the
 * target), the answer, then each device at the rate shown (the highest
 * met, else the last measured): who it is, its share, the parts of its
 * requests and its GPU's state. Every format, as inferbench.fleet/1 with
 * "measured": "serve". */
#include "report/fleet_report.h"
#include "report/cells.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A table cell: room for a worker's error. */
#define CELL 256

static bool measured(const ib_fleet_worker *w) { return w->status == IB_OK && w->n > 0; }

/* The index of the rate whose host f is, or -1 (no rate was served). */
static int rate_of(const ib_fleet_result *f)
{
    const ib_fleet_serve_result *fs = f->serve;
    for (size_t r = 0; r < fs->n_rates; r++)
        if (&fs->rates[r].host == f) return (int)r;
    return -1;
}

static bool copies_apart(const ib_fleet_serve_result *fs)
{
    return fs->n_devices > 0 && fs->serve[0].copies == IB_SERVE_COPIES_APART;
}

static const char *verdict(const ib_serve_config *cfg, bool met)
{
    return cfg->slo_ms > 0 ? (met ? "met" : "not met") : "-";
}

/* "device 1, 1.23x": the straggler of a rate by p99, "-" without one. */
static void straggler_cell(char *buf, size_t cap, const ib_fleet_result *h)
{
    char who[96];
    if (h->straggler < 0) {
        snprintf(buf, cap, "-");
        return;
    }
    ib__fleet_worker_label(who, sizeof who, &h->workers[h->straggler]);
    snprintf(buf, cap, "%s, %.3fx", who, h->straggler_ratio);
}

/* ------------------------------------------------------------------------ */
/* Tables: the rates, and the devices at one rate (text, Markdown, HTML)     */
/* ------------------------------------------------------------------------ */

static const char *const rate_heads[] = { "host rate/s", "achieved/s",      "n",     "p50 ms", "p90 ms",
                                          "p99 ms",      "straggler (p99)", "target" };
#define N_RATE_HEADS (sizeof rate_heads / sizeof rate_heads[0])

static void rate_cells(const ib_fleet_serve_result *fs, size_t r, char cells[N_RATE_HEADS][CELL])
{
    const ib_fleet_serve_rate *at = &fs->rates[r];
    const ib_fleet_result *h = &at->host;
    bool any = h->straggler >= 0;
    snprintf(cells[0], CELL, "%.2f", at->offered_rate);
    snprintf(cells[1], CELL, any ? "%.2f" : "-", h->items_per_s);
    snprintf(cells[2], CELL, "%zu", h->pooled.n);
    snprintf(cells[3], CELL, any ? "%.4f" : "-", h->pooled.p50);
    snprintf(cells[4], CELL, any ? "%.4f" : "-", h->pooled.p90);
    snprintf(cells[5], CELL, any ? "%.4f" : "-", h->pooled.p99);
    straggler_cell(cells[6], CELL, h);
    snprintf(cells[7], CELL, "%s", verdict(fs->cfg, at->met));
}

static const char *const device_heads[] = { "worker",         "name",       "UUID",         "PCI",
                                            "NUMA",           "offered/s",  "achieved/s",   "n",
                                            "p50 ms",         "p99 ms",     "queue p99 ms", "compute p50 ms",
                                            "compute p99 ms", "h2d p50 ms", "d2h p50 ms",   "SM clock",
                                            "max temp",       "power",      "throttle",     "target" };
#define N_DEVICE_HEADS (sizeof device_heads / sizeof device_heads[0])

static void ms_cell(char *cell, double v, bool has) { snprintf(cell, CELL, has ? "%.4f" : "-", v); }

/* Device d's row at rate r (r < 0: no rate: who it is and how it ended). */
static void device_cells(const ib_fleet_result *f, int r, size_t d, char cells[N_DEVICE_HEADS][CELL])
{
    const ib_fleet_serve_result *fs = f->serve;
    const ib_fleet_worker *w = &f->workers[d];
    for (size_t k = 0; k < N_DEVICE_HEADS; k++) snprintf(cells[k], CELL, "-");
    ib__fleet_worker_label(cells[0], CELL, w);
    snprintf(cells[1], CELL, "%s", w->name[0] ? w->name : "-");
    snprintf(cells[2], CELL, "%s", w->uuid[0] ? w->uuid : "-");
    snprintf(cells[3], CELL, "%s", w->pci_bus_id[0] ? w->pci_bus_id : "-");
    snprintf(cells[4], CELL, "%d", w->numa_node);
    if (w->status != IB_OK || r < 0) {
        snprintf(cells[5], CELL, w->status != IB_OK ? "failed" : "idle");
        snprintf(cells[6], CELL, "%s", w->status != IB_OK ? w->error : "served no rate: a device failed");
        return;
    }
    const ib_serve_point *p = &fs->serve[d].points[r];
    bool apart = copies_apart(fs);
    snprintf(cells[5], CELL, "%.2f", p->offered_rate);
    snprintf(cells[6], CELL, "%.2f", p->achieved_rate);
    snprintf(cells[7], CELL, "%lld", (long long)p->n);
    ms_cell(cells[8], p->total.p50, true);
    ms_cell(cells[9], p->total.p99, true);
    ms_cell(cells[10], p->queue.p99, true);
    ms_cell(cells[11], p->compute.p50, true);
    ms_cell(cells[12], p->compute.p99, true);
    ms_cell(cells[13], p->h2d.p50, apart);
    ms_cell(cells[14], p->d2h.p50, apart);
    char clock[16], temp[16], power[16];
    ib__fleet_gpu_cells(w, clock, temp, power);
    snprintf(cells[15], CELL, "%s", clock);
    snprintf(cells[16], CELL, "%s", temp);
    snprintf(cells[17], CELL, "%s", power);
    ib__fleet_throttle_text(cells[18], CELL, w->throttle_reasons);
    snprintf(cells[19], CELL, "%s", verdict(fs->cfg, p->met));
}

/* A table in Markdown (html false) or HTML. */
static void table_start(ib__sbuf *b, bool html, const char *const *heads, size_t n)
{
    ib__sbuf_printf(b, html ? "<table>\n<tr>" : "|");
    for (size_t k = 0; k < n; k++) ib__sbuf_printf(b, html ? "<th>%s</th>" : " %s |", heads[k]);
    ib__sbuf_printf(b, html ? "</tr>\n" : "\n|");
    for (size_t k = 0; !html && k < n; k++) ib__sbuf_printf(b, "---|");
    if (!html) ib__sbuf_printf(b, "\n");
}

static void table_row(ib__sbuf *b, bool html, char (*cells)[CELL], size_t n)
{
    ib__sbuf_printf(b, html ? "<tr>" : "|");
    for (size_t k = 0; k < n; k++) {
        ib__sbuf_printf(b, html ? "<td>" : " ");
        if (html)
            ib__xml_escape(b, cells[k]);
        else
            ib__md_cell(b, cells[k]);
        ib__sbuf_printf(b, html ? "</td>" : " |");
    }
    ib__sbuf_printf(b, html ? "</tr>\n" : "\n");
}

static void tables(ib__sbuf *b, const ib_fleet_result *f, bool html)
{
    const ib_fleet_serve_result *fs = f->serve;
    char rc[N_RATE_HEADS][CELL], dc[N_DEVICE_HEADS][CELL];
    table_start(b, html, rate_heads, N_RATE_HEADS);
    for (size_t r = 0; r < fs->n_rates; r++) {
        rate_cells(fs, r, rc);
        table_row(b, html, rc, N_RATE_HEADS);
    }
    ib__sbuf_printf(b, html ? "</table>\n<p>" : "\n");
    int r = rate_of(f);
    if (r >= 0)
        ib__sbuf_printf(b, "Each device at %.2f requests/s (the host's; %s):%s\n", fs->rates[r].offered_rate,
                        fs->found ? "the highest every device met" : "the last measured",
                        html ? "</p>" : "\n");
    table_start(b, html, device_heads, N_DEVICE_HEADS);
    for (size_t d = 0; d < f->n_workers; d++) {
        device_cells(f, r, d, dc);
        table_row(b, html, dc, N_DEVICE_HEADS);
    }
    ib__sbuf_printf(b, html ? "</table>\n" : "\n");
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

static const char *arrivals_words(const ib_serve_config *cfg)
{
    switch (cfg->arrivals) {
    case IB_ARRIVALS_POISSON: return "Poisson arrivals, each device its own schedule (seed + its place)";
    case IB_ARRIVALS_CONSTANT: return "constant arrivals";
    case IB_ARRIVALS_TRACE: return "arrivals from a file, dealt to the devices round-robin";
    }
    return "?";
}

static void text_header(ib__sbuf *b, const ib_fleet_serve_result *fs, const ib_workload_info *info)
{
    const ib_serve_config *cfg = fs->cfg;
    size_t instances = fs->n_devices ? fs->serve[0].instances : 0;
    ib__sbuf_printf(b, "fleet serve: %zu devices, %s, %zu instance%s each, requests of batch %lld\n",
                    fs->n_devices, info->model, instances, instances == 1 ? "" : "s",
                    (long long)cfg->request_batch);
    ib__sbuf_printf(b, "rates are the host's: each device serves 1/%zu of each; %s\n", fs->n_devices,
                    arrivals_words(cfg));
    if (cfg->max_batch > 1)
        ib__sbuf_printf(b, "dynamic batching: up to %lld requests a run, waiting at most %g us\n",
                        (long long)cfg->max_batch, cfg->max_delay_us);
    if (cfg->slo_ms > 0)
        ib__sbuf_printf(b, "target: p%g <= %g ms at %g%% confidence, met only when every device meets it\n",
                        cfg->slo_percentile * 100, cfg->slo_ms, cfg->confidence * 100);
}

static void text_rates(ib__sbuf *b, const ib_fleet_serve_result *fs)
{
    if (fs->n_rates == 0) return;
    ib__sbuf_printf(b, "  %12s %11s %8s %10s %10s %10s  %-28s %s\n", rate_heads[0], rate_heads[1],
                    rate_heads[2], rate_heads[3], rate_heads[4], rate_heads[5], rate_heads[6], rate_heads[7]);
    char c[N_RATE_HEADS][CELL];
    for (size_t r = 0; r < fs->n_rates; r++) {
        rate_cells(fs, r, c);
        ib__sbuf_printf(b, "  %12s %11s %8s %10s %10s %10s  %-28s %s\n", c[0], c[1], c[2], c[3], c[4], c[5],
                        c[6], c[7]);
    }
}

/* The answer to the target: the highest host rate every device met, or
 * the lowest rate measured and its straggler. */
static void text_answer(ib__sbuf *b, const ib_fleet_serve_result *fs)
{
    const ib_serve_config *cfg = fs->cfg;
    if (!(cfg->slo_ms > 0) || fs->n_rates == 0) return;
    if (fs->found) {
        double rate = fs->rates[fs->best].offered_rate;
        ib__sbuf_printf(b, "highest host rate every device met: %.2f requests/s (%.2f a device)\n", rate,
                        rate / (double)fs->n_devices);
        return;
    }
    size_t low = 0;
    for (size_t r = 1; r < fs->n_rates; r++)
        if (fs->rates[r].offered_rate < fs->rates[low].offered_rate) low = r;
    const ib_fleet_result *h = &fs->rates[low].host;
    char who[96] = "-";
    if (h->straggler >= 0) ib__fleet_worker_label(who, sizeof who, &h->workers[h->straggler]);
    ib__sbuf_printf(b,
                    "no host rate met p%g <= %g ms on every device; at the lowest, %.2f requests/s, the "
                    "highest p99 was %.4f ms (%s)\n",
                    cfg->slo_percentile * 100, cfg->slo_ms, fs->rates[low].offered_rate,
                    h->straggler >= 0 ? h->workers[h->straggler].latency.p99 : NAN, who);
}

static void text_devices(ib__sbuf *b, const ib_fleet_result *f)
{
    int r = rate_of(f);
    if (r >= 0)
        ib__sbuf_printf(b, "at %.2f requests/s (%s), each device:\n", f->serve->rates[r].offered_rate,
                        f->serve->found ? "the highest every device met" : "the last measured");
    ib__sbuf_printf(b, "  %-12s %-20s %10s %10s %6s %9s %9s %9s %9s %9s %9s %9s %6s %5s %6s %6s %s\n",
                    "worker", "name", "offered/s", "achieved/s", "n", "p50 ms", "p99 ms", "queue p99",
                    "comp p50", "comp p99", "h2d p50", "d2h p50", "SM clk", "max T", "power", "thrott",
                    "target");
    char c[N_DEVICE_HEADS][CELL];
    for (size_t d = 0; d < f->n_workers; d++) {
        device_cells(f, r, d, c);
        if (!strcmp(c[5], "failed") || !strcmp(c[5], "idle")) {
            ib__sbuf_printf(b, "  %-12s %s: %s\n", c[0], c[5], c[6]);
            continue;
        }
        ib__sbuf_printf(b, "  %-12s %-20.20s %10s %10s %6s %9s %9s %9s %9s %9s %9s %9s %6s %5s %6s %6s %s\n",
                        c[0], c[1], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15],
                        c[16], c[17], c[18], c[19]);
        ib__sbuf_printf(b, "  %-12s uuid %s, PCI %s, NUMA node %s\n", "", c[2], c[3], c[4]);
    }
}

char *ib__fleet_serve_report_text(const ib_fleet_result *f, const ib_workload_info *info)
{
    const ib_fleet_serve_result *fs = f->serve;
    ib__sbuf b = { 0 };
    text_header(&b, fs, info);
    text_rates(&b, fs);
    text_answer(&b, fs);
    text_devices(&b, f);
    ib__fleet_aggregate_lines(&b, f, "");
    ib__fleet_failures(&b, f, "");
    if (fs->partial)
        ib__sbuf_printf(&b, "PARTIAL: stopped early (%s) after the rate in progress\n",
                        ib_status_str(fs->stop_status));
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

/* Device d at rate r: its summary (who, figures, kept totals) and its
 * serve point (the parts; a failed device's too: the requests it
 * completed, marked partial). */
static cJSON *json_device(const ib_fleet_serve_result *fs, const ib_fleet_worker *w, int r, size_t d)
{
    cJSON *o = ib__fleet_json_worker(w);
    if (r >= 0 && (size_t)r < fs->serve[d].n_points)
        cJSON_AddItemToObject(o, "serve", ib__serve_json_point(&fs->serve[d].points[r], copies_apart(fs)));
    return o;
}

static cJSON *json_rate(const ib_fleet_serve_result *fs, size_t r)
{
    const ib_fleet_serve_rate *at = &fs->rates[r];
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "offered_rate", at->offered_rate);
    cJSON_AddBoolToObject(o, "met", at->met);
    cJSON_AddItemToObject(o, "fleet", ib__fleet_json_aggregate(&at->host));
    cJSON *devices = cJSON_AddArrayToObject(o, "devices");
    for (size_t d = 0; d < fs->n_devices; d++)
        cJSON_AddItemToArray(devices, json_device(fs, &at->devices[d], (int)r, d));
    return o;
}

static cJSON *json_target(const ib_fleet_serve_result *fs)
{
    const ib_serve_config *cfg = fs->cfg;
    if (!(cfg->slo_ms > 0)) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "percentile", cfg->slo_percentile);
    cJSON_AddNumberToObject(o, "ms", cfg->slo_ms);
    cJSON_AddNumberToObject(o, "confidence", cfg->confidence);
    cJSON_AddStringToObject(o, "met_when", "every_device");
    cJSON_AddBoolToObject(o, "searched", fs->searched);
    cJSON_AddBoolToObject(o, "found", fs->found);
    ib__json_add_number(o, "best_rate", fs->found ? fs->rates[fs->best].offered_rate : NAN);
    return o;
}

char *ib__fleet_serve_report_json(const ib_fleet_result *f, const ib_workload_info *info)
{
    const ib_fleet_serve_result *fs = f->serve;
    cJSON *root = ib__json_document("inferbench.fleet/1", fs->partial, fs->stop_status, info);
    cJSON_AddStringToObject(root, "measured", "serve");
    cJSON *config = ib__serve_json_config(fs->cfg, fs->n_devices ? fs->serve[0].instances : 0);
    cJSON_AddNumberToObject(config, "devices", (double)fs->n_devices);
    cJSON_AddStringToObject(config, "rates_are", "host");
    cJSON_AddItemToObject(root, "config", config);
    cJSON_AddStringToObject(root, "copies", ib__serve_copies_name(fs->n_devices ? fs->serve[0].copies : 0));
    int r = rate_of(f);
    ib__json_add_number(root, "shown_rate", r >= 0 ? fs->rates[r].offered_rate : NAN);
    cJSON *devices = cJSON_AddArrayToObject(root, "devices");
    for (size_t d = 0; d < f->n_workers; d++)
        cJSON_AddItemToArray(devices, json_device(fs, &f->workers[d], r, d));
    cJSON_AddItemToObject(root, "fleet", ib__fleet_json_aggregate(f));
    cJSON *rates = cJSON_AddArrayToObject(root, "rates");
    for (size_t i = 0; i < fs->n_rates; i++) cJSON_AddItemToArray(rates, json_rate(fs, i));
    cJSON_AddItemToObject(root, "target", json_target(fs));
    return ib__json_finish(root);
}

/* ------------------------------------------------------------------------ */
/* CSV: a row per device at each rate, then the host's row of that rate      */
/* ------------------------------------------------------------------------ */

#define EOL "\r\n"

static void csv_device(ib__sbuf *b, const char *model, const ib_fleet_serve_result *fs, size_t r, size_t d)
{
    const ib_fleet_worker *w = &fs->rates[r].devices[d];
    const ib_serve_point *p = &fs->serve[d].points[r];
    bool m = measured(w), apart = m && copies_apart(fs);
    char who[96];
    ib__fleet_worker_label(who, sizeof who, w);
    ib__csv_field(b, model);
    ib__csv_number(b, fs->rates[r].offered_rate);
    ib__csv_text_cell(b, who);
    ib__sbuf_printf(b, ",%d", w->index);
    ib__csv_text_cell(b, w->name);
    ib__csv_text_cell(b, w->uuid);
    ib__sbuf_printf(b, ",%s,%d,%s,", w->pci_bus_id, w->numa_node, m ? "ok" : ib_status_str(w->status));
    ib__csv_field(b, w->error);
    const double v[] = { p->offered_rate,
                         m ? p->achieved_rate : NAN,
                         m ? w->window_items_per_s : NAN,
                         (double)p->n,
                         m ? p->total.p50 : NAN,
                         m ? p->total.p99 : NAN,
                         m ? p->queue.p99 : NAN,
                         m ? p->compute.p50 : NAN,
                         m ? p->compute.p99 : NAN,
                         apart ? p->h2d.p50 : NAN,
                         apart ? p->d2h.p50 : NAN };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) ib__csv_number(b, v[k]);
    ib__sbuf_printf(b, ",%s", verdict(fs->cfg, p->met));
    ib__csv_number(b, m ? w->sm_clock_pct : NAN);
    ib__csv_number(b, m ? (double)w->max_temperature_c : NAN);
    ib__csv_number(b, m ? w->mean_power_w : NAN);
    ib__sbuf_printf(b, ",%llu" EOL, w->throttle_reasons);
}

static void csv_host(ib__sbuf *b, const char *model, const ib_fleet_serve_result *fs, size_t r)
{
    const ib_fleet_serve_rate *at = &fs->rates[r];
    bool any = at->host.straggler >= 0;
    ib__csv_field(b, model);
    ib__csv_number(b, at->offered_rate);
    ib__sbuf_printf(b, ",host,-1,,,,,%s,", any ? "ok" : "failed");
    ib__csv_number(b, at->offered_rate);
    ib__csv_number(b, any ? at->host.items_per_s : NAN);
    ib__csv_number(b, any ? at->host.items_per_s : NAN);
    ib__sbuf_printf(b, ",%zu", at->host.pooled.n);
    ib__csv_number(b, any ? at->host.pooled.p50 : NAN);
    ib__csv_number(b, any ? at->host.pooled.p99 : NAN);
    ib__sbuf_printf(b, ",,,,,,%s,,,,0" EOL, verdict(fs->cfg, at->met));
}

char *ib__fleet_serve_report_csv(const ib_fleet_result *f, const ib_workload_info *info)
{
    const ib_fleet_serve_result *fs = f->serve;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b,
                    "model,host_rate,worker,index,name,uuid,pci_bus_id,numa_node,status,error,offered_rate,"
                    "achieved_rate,window_rate,n,p50_ms,p99_ms,queue_p99_ms,compute_p50_ms,compute_p99_ms,"
                    "h2d_p50_ms,d2h_p50_ms,target,sm_clock_pct,max_temperature_c,mean_power_w,"
                    "throttle_reasons" EOL);
    for (size_t r = 0; r < fs->n_rates; r++) {
        for (size_t d = 0; d < fs->n_devices; d++) csv_device(&b, info->model, fs, r, d);
        csv_host(&b, info->model, fs, r);
    }
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* Markdown and HTML: the same tables                                        */
/* ------------------------------------------------------------------------ */

char *ib__fleet_serve_report_md(const ib_fleet_result *f, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "## Fleet serve: ");
    ib__md_cell(&b, info->model);
    ib__sbuf_printf(&b, ", %zu devices (rates are the host's)\n\n", f->serve->n_devices);
    tables(&b, f, false);
    ib__sbuf b2 = { 0 };
    text_answer(&b2, f->serve);
    char *answer = ib__sbuf_finish(&b2);
    if (answer && answer[0]) ib__sbuf_printf(&b, "- %s", answer);
    ib_free(answer);
    ib__fleet_aggregate_lines(&b, f, "- ");
    ib__fleet_failures(&b, f, "- ");
    return ib__sbuf_finish(&b);
}

char *ib__fleet_serve_report_html(const ib_fleet_result *f, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b,
                    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>inferbench fleet serve: ");
    ib__xml_escape(&b, info->model);
    ib__sbuf_printf(&b, "</title><style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right}"
                        "</style></head><body>\n<h1>Fleet serve: ");
    ib__xml_escape(&b, info->model);
    ib__sbuf_printf(&b, "</h1>\n");
    tables(&b, f, true);
    ib__fleet_html_text_and_end(&b, ib__fleet_serve_report_text(f, info));
    return ib__sbuf_finish(&b);
}
