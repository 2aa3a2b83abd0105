/* The HTML reports: one self-contained page per result (inline CSS and
 * SVG, no script, nothing fetched), for a person who wants to see the
 * distribution and the curve rather than read numbers (docs/report.md).
 * The figures come from the same helpers as the text report, and the text
 * report itself closes the page, so the two never disagree. */
#include "core/sessions.h"
#include "core/stats.h"
#include "report/printer.h"
#include "report/report.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many points of the run-order plot: more would only grow
 * the file; min and max per bucket keep the spikes. */
#define TIMELINE_MAX_POINTS 2000

static const char *const css =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;max-width:1000px;"
    "margin:24px auto;padding:0 16px}\n"
    "h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px}\n"
    "table{border-collapse:collapse;font-variant-numeric:tabular-nums}\n"
    "td,th{padding:3px 10px;border-bottom:1px solid #e3e3e3;text-align:right}\n"
    "th{background:#f5f5f5}td:first-child,th:first-child{text-align:left}\n"
    "table.meta td{text-align:left}table.meta td:first-child{color:#666}\n"
    ".partial{color:#b00;font-weight:bold}.warnings li{color:#8a5a00}\n"
    "pre{background:#f7f7f7;padding:10px;overflow-x:auto;font-size:12px}\n"
    "figure{margin:8px 0}figcaption{color:#555;font-size:13px}\n"
    "svg.plot{font:12px system-ui,sans-serif;max-width:100%;height:auto}\n"
    "svg .grid{stroke:#ececec}svg .tick{stroke:#888}svg .frame{fill:none;stroke:#999}\n"
    "svg .tick-label{fill:#444}svg .axis-title{fill:#222}\n"
    "svg .bar{fill:#7aa6d6;stroke:#fff;stroke-width:0.5}\n"
    "svg line.median{stroke:#c62828;stroke-width:2}svg text.median{fill:#c62828}\n"
    "svg line.p99{stroke:#ef6c00;stroke-width:2;stroke-dasharray:6 3}svg text.p99{fill:#ef6c00}\n"
    "svg .run-line{fill:none;stroke:#1f77b4;stroke-width:1}svg .run{fill:#1f77b4}\n"
    "svg .b2b-line{fill:none;stroke:#1f77b4;stroke-width:2}svg .pt-b2b{fill:#1f77b4}\n"
    "svg .sync-line{fill:none;stroke:#ef6c00;stroke-width:1.5;stroke-dasharray:5 3}\n"
    "svg .pt-sync{fill:#fff;stroke:#ef6c00;stroke-width:1.5}\n"
    "svg text.mark{fill:#222;font-weight:bold}\n"
    ".key-b2b{color:#1f77b4;font-weight:bold}.key-sync{color:#ef6c00;font-weight:bold}\n"
    "svg .bar-wrong{fill:#e57373}svg .bar-strict{fill:#90a4ae}"
    "svg .bar-noise{fill:#b0bec5}svg "
    "line.interval{stroke:#222;stroke-width:2}.key-interval{font-weight:bold}\n"
    "svg "
    ".mean{fill:#222}\n"
    "svg line.spread{stroke:#ef6c00;stroke-width:3}svg line.correct{stroke:#2e7d32;stroke-width:1.5}\n"
    "svg text.correct{fill:#2e7d32}svg text.row-label{fill:#222}svg text.row-error{fill:#444}\n"
    "td.text,th.text{text-align:left}\n"
    ".key-mean{font-weight:bold}.key-spread{color:#ef6c00;font-weight:bold}\n";

/* ------------------------------------------------------------------------ */
/* The page around every report                                              */
/* ------------------------------------------------------------------------ */

static void page_head(ib__sbuf *b, const char *what, const char *model)
{
    ib__sbuf_printf(b,
                    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
                    "inferbench %s: ",
                    what);
    ib__xml_escape(b, model);
    ib__sbuf_printf(b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>inferbench %s: ", css, what);
    ib__xml_escape(b, model);
    ib__sbuf_printf(b, "</h1>\n");
}

/* A row of the header's table; none for a value not known (""): a row
 * with nothing in it says nothing. */
static void meta_row(ib__sbuf *b, const char *key, const char *value)
{
    if (!value[0]) return;
    ib__sbuf_printf(b, "<tr><td>%s</td><td>", key);
    ib__xml_escape(b, value);
    ib__sbuf_printf(b, "</td></tr>\n");
}

/* What was measured, where, with what: the header of both reports. The
 * machine line is the text report's own (ib__text_env), escaped. */
void ib__html_page_meta(ib__sbuf *b, const ib_workload_info *info, const ib_env *env, const char *batch,
                        const char *timing)
{
    ib__sbuf machine = { 0 };
    ib__text_env(&machine, env);
    char *machine_text = ib__sbuf_finish(&machine);
    if (!machine_text) b->failed = true;
    ib__sbuf_printf(b, "<table class=\"meta\">\n");
    meta_row(b, "model", info->model);
    meta_row(b, "batch", batch);
    meta_row(b, "provider", info->provider);
    meta_row(b, env->gpu_name[0] ? "GPU" : "CPU", env->gpu_name[0] ? env->gpu_name : env->host_cpu);
    meta_row(b, "machine", machine_text ? machine_text : "");
    meta_row(b, "runtime", env->runtime.name);
    meta_row(b, "runtime version", env->runtime.version);
    char runtime[IB__OPTIONS_TEXT_LEN];
    ib__info_runtime_options(runtime, sizeof runtime, info);
    meta_row(b, "runtime options", runtime);
    ib__sbuf values = { 0 };
    ib__info_inputs(&values, info);
    char *values_text = ib__sbuf_finish(&values);
    if (!values_text) b->failed = true;
    meta_row(b, "input values", values_text ? values_text : "");
    free(values_text);
    meta_row(b, "inferbench", env->tool_version[0] ? env->tool_version : IB_VERSION_STRING);
    meta_row(b, "timing", timing);
    ib__sbuf_printf(b, "</table>\n");
    free(machine_text);
}

/* The footer's lines that are notes ("note: ...", want_notes) or the
 * others, as the items of a list headed title; otherwise (none) after the
 * heading, or nothing without one. */
static void footer_list(ib__sbuf *b, const char *footer, bool want_notes, const char *title,
                        const char *otherwise)
{
    ib__sbuf items = { 0 };
    for (const char *line = footer; line && *line;) {
        const char *end = strchr(line, '\n');
        int len = end ? (int)(end - line) : (int)strlen(line);
        if (!strncmp(line, "note: ", 6) == want_notes) {
            ib__sbuf item = { 0 };
            ib__sbuf_printf(&item, "%.*s", len, line);
            ib__sbuf_printf(&items, "<li%s>", strncmp(line, "PARTIAL", 7) ? "" : " class=\"partial\"");
            ib__xml_escape(&items, item.data ? item.data : "");
            ib__sbuf_printf(&items, "</li>\n");
            if (item.failed) items.failed = true;
            free(item.data);
        }
        line = end ? end + 1 : NULL;
    }
    if (items.failed) b->failed = true;
    if (items.len > 0)
        ib__sbuf_printf(b, "<h2>%s</h2>\n<ul class=\"%s\">\n%s</ul>\n", title,
                        want_notes ? "notes" : "warnings", items.data);
    else if (otherwise)
        ib__sbuf_printf(b, "<h2>%s</h2>\n%s", title, otherwise);
    free(items.data);
}

/* The text report's closing lines as lists, the same words in both
 * reports: the warnings (PARTIAL too), then the notes, standing advice
 * about the setup, under their own heading when there are any. */
void ib__html_page_notes(ib__sbuf *b, bool partial, ib_status stop_status, const ib_env *env,
                         unsigned warnings)
{
    ib__sbuf footer = { 0 };
    ib__text_footer(&footer, partial, stop_status, env, warnings);
    if (footer.failed) b->failed = true;
    footer_list(b, footer.data, false, "Warnings", "<p>none</p>\n");
    footer_list(b, footer.data, true, "Notes", NULL);
    free(footer.data);
}

/* The whole text report, escaped: every figure it prints is on the page. */
static void page_text_and_tail(ib__sbuf *b, char *text)
{
    if (!text) b->failed = true;
    ib__sbuf_printf(b, "<h2>Text report</h2>\n<pre>");
    if (text) ib__xml_escape(b, text);
    ib__sbuf_printf(b, "</pre>\n</body>\n</html>\n");
    ib_free(text);
}

/* ------------------------------------------------------------------------ */
/* Latency                                                                   */
/* ------------------------------------------------------------------------ */

static void stats_cells(ib__sbuf *b, const char *label, const ib_stats *st, double scale)
{
    const double v[] = { st->mean, st->std, st->min, st->p50, st->p90, st->p95, st->p99, st->p999, st->max };
    ib__sbuf_printf(b, "<tr><td>%s</td><td>%zu</td>", label, st->n);
    char t[32];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        ib__sbuf_printf(b, "<td>%s</td>", ib__fmt_plain4(t, v[i] * scale));
    ib__sbuf_printf(b, "<td>%.2f%%</td></tr>\n", 100 * st->cv);
}

static void latency_table(ib__sbuf *b, const ib_latency_result *r, double scale, const char *unit)
{
    static const char *const heads[] = { "n",   "mean", "std",   "min", "p50", "p90",
                                         "p95", "p99",  "p99.9", "max", "cv" };
    ib__sbuf_printf(b, "<h2>Statistics</h2>\n<table>\n<tr><th>%s</th>", unit);
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) ib__sbuf_printf(b, "<th>%s</th>", heads[i]);
    ib__sbuf_printf(b, "</tr>\n");
    if (r->has_device_timer) stats_cells(b, "device", &r->device, scale);
    stats_cells(b, "host", &r->host, scale);
    ib__sbuf_printf(b, "</table>\n");
}

/* The plotted samples: device time when there is one, else host, in the
 * report's unit, finite ones only. Returns how many; *out is malloc'ed. */
static size_t plotted_samples(const ib_latency_result *r, double scale, double **out)
{
    const double *src = r->has_device_timer && r->device_ms ? r->device_ms : r->host_ms;
    *out = malloc((r->n ? r->n : 1) * sizeof **out);
    size_t m = 0;
    for (size_t i = 0; *out && src && i < r->n; i++)
        if (isfinite(src[i])) (*out)[m++] = src[i] * scale;
    return m;
}

static void marker_label(char buf[64], const char *name, double ms)
{
    char t[32];
    snprintf(buf, 64, "%s %s", name, ib__fmt_ms(t, ms));
}

/* How many of sorted[0..n) the histogram shows: a far tail (beyond p99 by
 * more than the whole min..p99 spread) would squeeze the body into a bin or
 * two, so it is left out and counted in the caption instead. */
static size_t histogram_extent(const double *sorted, size_t n)
{
    double p99 = ib_quantile_sorted(sorted, n, 0.99), limit = p99 + (p99 - sorted[0]);
    size_t m = n;
    while (m > 1 && sorted[m - 1] > limit) m--;
    return m;
}

/* Returns how many runs lie beyond the right edge. */
static size_t latency_histogram(ib__sbuf *b, const ib_stats *p, const double *x, size_t n_all, double scale,
                                const char *x_title, const char *y_title)
{
    double *sorted = malloc(n_all * sizeof *sorted);
    size_t counts[60];
    if (!sorted) {
        b->failed = true;
        return 0;
    }
    memcpy(sorted, x, n_all * sizeof *sorted);
    ib__sort(sorted, n_all);
    size_t n = histogram_extent(sorted, n_all);
    size_t bins = ib__histogram_bins(sorted, n), peak = 0;
    ib__plot plot = { 900,
                      340,
                      72,
                      110,
                      24,
                      52,
                      ib__nice_axis(sorted[0], sorted[n - 1], IB__MAX_TICKS),
                      ib__nice_axis(0, 1, 2) };
    /* Equal samples have no range to bin: the bins span the widened axis. */
    double lo = sorted[0] < sorted[n - 1] ? sorted[0] : plot.x.lo;
    double hi = sorted[0] < sorted[n - 1] ? sorted[n - 1] : plot.x.hi;
    /* Every sample is handed over: those beyond the axis are counted, not
     * drawn, and the caption says so (histogram_beyond). */
    size_t beyond = ib__histogram(sorted, n_all, lo, hi, bins, counts);
    free(sorted);
    for (size_t i = 0; i < bins; i++) peak = counts[i] > peak ? counts[i] : peak;
    /* Room above the tallest bar for the two marker labels. */
    plot.y = ib__nice_axis(0, fmax(5, (double)peak * 1.25), 7);
    char label[64];
    char what[96];
    snprintf(what, sizeof what, "histogram of the timed %s", y_title);
    ib__svg_begin(b, &plot, what);
    ib__svg_axes(b, &plot, x_title, y_title);
    ib__svg_bars(b, &plot, counts, bins, lo, hi, "bar");
    marker_label(label, "median", p->p50);
    ib__svg_vline(b, &plot, p->p50 * scale, "median", label, 0);
    marker_label(label, "p99", p->p99);
    ib__svg_vline(b, &plot, p->p99 * scale, "p99", label, 1);
    ib__svg_end(b);
    return beyond;
}

/* The caption's sentence on the samples beyond the histogram's right edge
 * (none: nothing): " 2 steps, up to 815 ms, lie beyond the right edge".
 * noun: one sample's name, "slow run", "step". */
static void histogram_beyond(ib__sbuf *b, size_t beyond, const char *noun, double max_ms)
{
    char t[32];
    if (beyond)
        ib__sbuf_printf(b, " %zu %s%s, up to %s, lie%s beyond the right edge", beyond, noun,
                        beyond > 1 ? "s" : "", ib__fmt_ms(t, max_ms), beyond > 1 ? "" : "s");
}

static void latency_timeline(ib__sbuf *b, const ib_stats *p, const double *y, size_t n, double scale,
                             const char *y_title)
{
    size_t *idx = malloc(TIMELINE_MAX_POINTS * sizeof *idx);
    double *xs = malloc(TIMELINE_MAX_POINTS * sizeof *xs), *ys = malloc(TIMELINE_MAX_POINTS * sizeof *ys);
    if (!idx || !xs || !ys) {
        b->failed = true;
    } else {
        size_t m = ib__downsample_minmax(y, n, TIMELINE_MAX_POINTS, idx);
        double lo = y[idx[0]], hi = lo;
        for (size_t i = 0; i < m; i++) {
            xs[i] = (double)idx[i] + 1; /* runs count from 1 */
            ys[i] = y[idx[i]];
            lo = fmin(lo, ys[i]);
            hi = fmax(hi, ys[i]);
        }
        /* The right margin holds the median's label. */
        ib__plot plot = {
            900, 300, 72, 110, 16, 52, ib__nice_axis(0, fmax(5, (double)n), 10), ib__nice_axis(lo, hi, 7)
        };
        char label[64];
        ib__svg_begin(b, &plot, "timed runs in run order");
        ib__svg_axes(b, &plot, "run (in the order timed)", y_title);
        ib__svg_polyline(b, &plot, xs, ys, m, "run-line");
        /* Dots show clusters (bimodality) while they are few enough to see. */
        if (m <= 500) ib__svg_points(b, &plot, xs, ys, m, "run", 1.8);
        marker_label(label, "median", p->p50);
        ib__svg_hline(b, &plot, p->p50 * scale, "median", label);
        ib__svg_end(b);
    }
    free(idx);
    free(xs);
    free(ys);
}

static void latency_plots(ib__sbuf *b, const ib_latency_result *r, double scale, const char *unit)
{
    const ib_stats *p = r->has_device_timer ? &r->device : &r->host;
    double *x;
    size_t n = plotted_samples(r, scale, &x);
    if (!x) {
        b->failed = true;
        return;
    }
    if (n > 0) {
        char title[64];
        snprintf(title, sizeof title, "%s time per run (%s)", r->has_device_timer ? "device" : "host", unit);
        ib__sbuf_printf(b, "<h2>Distribution</h2>\n<figure>\n");
        size_t beyond = latency_histogram(b, p, x, n, scale, title, "runs");
        ib__sbuf_printf(b, "<figcaption>%zu timed runs; the solid line is the median, the dashed one p99.",
                        n);
        histogram_beyond(b, beyond, "slow run", p->max);
        if (beyond) ib__sbuf_printf(b, " (see the runs in order).");
        ib__sbuf_printf(b, "</figcaption>\n</figure>\n<h2>Runs in order</h2>\n<figure>\n");
        latency_timeline(b, p, x, n, scale, title);
        ib__sbuf_printf(b,
                        "<figcaption>Each timed run in order (warm-up excluded): drift, steps and "
                        "two levels show here.%s</figcaption>\n</figure>\n",
                        n > TIMELINE_MAX_POINTS ? " Downsampled: the lowest and highest run of each "
                                                  "stretch are drawn."
                                                : "");
    }
    free(x);
}

/* The energy figures (docs/energy.md), a paragraph each: labels[i]: the
 * summary of e[i] over its items ("input", "token"). */
static void energy_paragraphs(ib__sbuf *b, const char *const *labels, const ib_energy *const *e, size_t n,
                              const char *item)
{
    char line[512];
    ib__sbuf_printf(b, "<h2>Energy</h2>\n");
    for (size_t i = 0; i < n; i++) {
        ib__sbuf_printf(b, "<p>%s: ", labels[i]);
        ib__xml_escape(b, ib__energy_summary_of(line, sizeof line, e[i], item));
        ib__sbuf_printf(b, "</p>\n");
    }
}

/* The device's and the CPU package's, as the text shows them
 * (ib__energy_shown: a CPU workload's device line is left out). */
static void energy_section(ib__sbuf *b, const ib_energy *device, const ib_energy *cpu)
{
    unsigned shown = ib__energy_shown(device, cpu);
    const char *labels[2];
    const ib_energy *e[2];
    size_t n = 0;
    if (shown & IB__ENERGY_SHOW_DEVICE) {
        labels[n] = "device";
        e[n++] = device;
    }
    if (shown & IB__ENERGY_SHOW_CPU) {
        labels[n] = "CPU package";
        e[n++] = cpu;
    }
    energy_paragraphs(b, labels, e, n, "input");
}

char *ib_latency_report_html(const ib_latency_result *r, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    char batch[32];
    snprintf(batch, sizeof batch, "%lld", (long long)info->batch);
    page_head(&b, "latency", info->model);
    ib__html_page_meta(&b, info, &r->env, batch,
                       r->has_device_timer ? "device time (CUDA events), host time alongside" : "host clock");
    const char *unit;
    double scale = ib__latency_unit((r->has_device_timer ? &r->device : &r->host)->p50, &unit);
    if (r->n == 0)
        ib__sbuf_printf(&b, "<p>No timed run completed.</p>\n");
    else
        latency_table(&b, r, scale, unit);
    energy_section(&b, &r->energy, &r->cpu_energy);
    ib__html_page_notes(&b, r->partial, r->stop_status, &r->env, r->warnings);
    if (r->n > 0) latency_plots(&b, r, scale, unit);
    page_text_and_tail(&b, ib_latency_report_text(r, info));
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* Throughput                                                                */
/* ------------------------------------------------------------------------ */

static bool point_ok(const ib_throughput_point *p) { return p->status == IB_OK; }

/* "peak", "knee", "peak, knee", ... as the text report marks them. */
static void point_marks(char buf[96], const ib_throughput_result *r, int i)
{
    buf[0] = '\0';
    const char *names[4] = { i == r->peak ? "peak" : NULL, i == r->knee ? "knee" : NULL,
                             i == r->best_within_budget ? "best within budget" : NULL,
                             i == r->most_efficient ? "most inputs per joule" : NULL };
    for (int k = 0; k < 4; k++)
        if (names[k]) snprintf(buf + strlen(buf), 96 - strlen(buf), "%s%s", buf[0] ? ", " : "", names[k]);
}

static void throughput_table(ib__sbuf *b, const ib_throughput_result *r)
{
    ib__sbuf_printf(b, "<h2>Points</h2>\n<table>\n<tr><th>batch</th><th>inputs/s<br>back-to-back</th>"
                       "<th>inputs/s<br>per-run sync</th><th>ms/run<br>back-to-back</th>"
                       "<th>p50 ms<br>batch</th><th>p99 ms<br>batch</th><th>inputs/J</th><th></th></tr>\n");
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_throughput_point *p = &r->points[i];
        char t1[32], t2[32], t3[32], ms[3][32], marks[96];
        point_marks(marks, r, (int)i);
        ib__sbuf_printf(b, "<tr><td>%lld</td>", (long long)p->batch);
        if (point_ok(p))
            ib__sbuf_printf(
                b, "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>",
                ib__fmt_rate(t1, p->items_per_s), ib__fmt_rate(t2, p->items_per_s_sync),
                ib__fmt_plain4(ms[0], p->back_to_back_ms_per_run), ib__fmt_plain4(ms[1], p->latency_ms.p50),
                ib__fmt_plain4(ms[2], p->latency_ms.p99), ib__fmt_inputs_per_joule(t3, &p->energy));
        else
            ib__sbuf_printf(b, "<td colspan=\"6\">not measured: %s</td>", ib_status_str(p->status));
        ib__sbuf_printf(b, "<td>%s</td></tr>\n", marks);
    }
    ib__sbuf_printf(b, "</table>\n");
}

/* text above the point (x, y) in plot units, toward the plot's middle;
 * row staggers labels that would overlap (0: nearest the point). */
static void mark_at(ib__sbuf *b, const ib__plot *plot, double x, double y, const char *text, int row)
{
    double px = ib__plot_px(plot, x), py = ib__plot_py(plot, y);
    double mid = (plot->left + plot->width - plot->right) / 2;
    ib__svg_text(b, px > mid ? px - 6 : px + 6, py - 10 - 15 * row, px > mid ? "end" : "start", "mark", text);
}

/* A chosen point's label above it; the peak's and the knee's are one when
 * they are the same point. */
static void annotate(ib__sbuf *b, const ib__plot *plot, const ib_throughput_result *r, int i,
                     const char *name, int row)
{
    if (i < 0 || (size_t)i >= r->n_points || !point_ok(&r->points[i])) return;
    const ib_throughput_point *p = &r->points[i];
    char rate[32], text[96];
    snprintf(text, sizeof text, "%s: %s/s at batch %lld", name, ib__fmt_rate(rate, p->items_per_s),
             (long long)p->batch);
    mark_at(b, plot, log2((double)p->batch), p->items_per_s, text, row);
}

static void throughput_plot(ib__sbuf *b, const ib_throughput_result *r)
{
    double xs[IB_MAX_POINTS], b2b[IB_MAX_POINTS], sync[IB_MAX_POINTS], top = 0;
    size_t n = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        if (!point_ok(&r->points[i])) continue;
        xs[n] = log2((double)r->points[i].batch);
        b2b[n] = r->points[i].items_per_s;
        sync[n] = r->points[i].items_per_s_sync;
        top = fmax(top, fmax(b2b[n], sync[n]));
        n++;
    }
    if (n == 0) return;
    /* Headroom for the labels above the peak. */
    ib__plot plot = {
        900, 380, 84, 24, 24, 52, ib__log2_axis(xs[0], xs[n - 1], 12), ib__nice_axis(0, top * 1.2, 8)
    };
    ib__sbuf_printf(b, "<h2>Throughput against batch</h2>\n<figure>\n");
    ib__svg_begin(b, &plot, "inputs per second against batch");
    ib__svg_axes(b, &plot, "batch (log2 scale)", "inputs/s");
    ib__svg_polyline(b, &plot, xs, sync, n, "sync-line");
    ib__svg_polyline(b, &plot, xs, b2b, n, "b2b-line");
    ib__svg_points(b, &plot, xs, sync, n, "pt-sync", 3.5);
    ib__svg_points(b, &plot, xs, b2b, n, "pt-b2b", 4.5);
    bool same = r->peak == r->knee;
    annotate(b, &plot, r, r->peak, same ? "peak and knee" : "peak", 0);
    if (!same) annotate(b, &plot, r, r->knee, "knee", 0);
    ib__svg_end(b);
    ib__sbuf_printf(b, "<figcaption><span class=\"key-b2b\">&#9679; back-to-back</span> (runs queued "
                       "without waiting: what a server sees) and <span class=\"key-sync\">&#9675; "
                       "per-run synchronized</span> (each run waited for: the classic method).</figcaption>"
                       "\n</figure>\n");
}

/* Items per joule against the curve's count (log2): the most efficient is
 * not always the fastest (docs/energy.md). Drawn only where some point has
 * a figure. title: "Inputs per joule against batch". */
static void efficiency_plot_of(ib__sbuf *b, const ib__energy_curve *c, const char *title, const char *caption)
{
    double xs[IB_MAX_POINTS], ipj[IB_MAX_POINTS], top = 0;
    size_t n = 0;
    for (size_t i = 0; i < c->n && n < IB_MAX_POINTS; i++) {
        if (!c->ok[i] || c->energy[i]->source == IB_ENERGY_NONE) continue;
        xs[n] = log2((double)c->count[i]);
        ipj[n] = c->energy[i]->items_per_joule;
        top = fmax(top, ipj[n]);
        n++;
    }
    if (n == 0) return;
    ib__plot plot = {
        900, 300, 84, 24, 24, 52, ib__log2_axis(xs[0], xs[n - 1], 12), ib__nice_axis(0, top * 1.2, 8)
    };
    char lower[96], x_label[64], y_label[32], text[96];
    snprintf(lower, sizeof lower, "%ss per joule against %s", c->item, c->what);
    snprintf(x_label, sizeof x_label, "%s (log2 scale)", c->what);
    snprintf(y_label, sizeof y_label, "%ss/J", c->item);
    ib__sbuf_printf(b, "<h2>%s</h2>\n<figure>\n", title);
    ib__svg_begin(b, &plot, lower);
    ib__svg_axes(b, &plot, x_label, y_label);
    ib__svg_polyline(b, &plot, xs, ipj, n, "b2b-line");
    ib__svg_points(b, &plot, xs, ipj, n, "pt-b2b", 4.5);
    const ib_energy *eff = c->energy[c->most_efficient];
    int64_t at = c->count[c->most_efficient];
    char where[48];
    ib__energy_curve_at(where, c, c->most_efficient);
    snprintf(text, sizeof text, "most efficient: %.4g %ss/J at %s", eff->items_per_joule, c->item, where);
    double px = ib__plot_px(&plot, log2((double)at)), py = ib__plot_py(&plot, eff->items_per_joule);
    double mid = (plot.left + plot.width - plot.right) / 2;
    ib__svg_text(b, px > mid ? px - 6 : px + 6, py - 10, px > mid ? "end" : "start", "mark", text);
    ib__svg_end(b);
    ib__sbuf_printf(b, "<figcaption>%s</figcaption>\n</figure>\n", caption);
}

static void efficiency_plot(ib__sbuf *b, const ib_throughput_result *r)
{
    ib__energy_curve_columns cols;
    ib__energy_curve c = ib__energy_curve_of_batches(r, &cols);
    efficiency_plot_of(
        b, &c, "Inputs per joule against batch",
        "Each point's energy over a window of its own back-to-back runs, from one change of the "
        "energy counter to another; the table gives each bound.");
}

char *ib_throughput_report_html(const ib_throughput_result *r, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    char batch[64];
    if (r->searched && r->search_stopped)
        snprintf(batch, sizeof batch, "search stopped, largest that fit so far %lld",
                 (long long)r->largest_fitting);
    else if (r->searched)
        snprintf(batch, sizeof batch, "searched, largest that fits %lld", (long long)r->largest_fitting);
    else
        snprintf(batch, sizeof batch, "as given (%zu batches)", r->n_points);
    page_head(&b, "throughput", info->model);
    ib__html_page_meta(&b, info, &r->env, batch,
                       "back-to-back runs under one timing; each run synchronized alongside");
    ib__html_page_notes(&b, r->partial, r->stop_status, &r->env, r->warnings);
    throughput_plot(&b, r);
    efficiency_plot(&b, r);
    if (r->n_points > 0) throughput_table(&b, r);
    page_text_and_tail(&b, ib_throughput_report_text(r, info));
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* Pitfalls                                                                  */
/* ------------------------------------------------------------------------ */

static bool row_measured(const ib_pitfall_row *row) { return row->applies && row->stats.n > 0; }

/* Why a row has no interval, after its why. */
static void pitfall_no_interval(ib__sbuf *b, const char *no_interval)
{
    if (!no_interval) return;
    ib__sbuf_printf(b, " (no interval: ");
    ib__xml_escape(b, no_interval);
    ib__sbuf_printf(b, ")");
}

static void pitfalls_table(ib__sbuf *b, const ib_pitfalls_result *r, double scale, const char *unit)
{
    ib__sbuf_printf(b,
                    "<h2>What each method reports</h2>\n<table>\n<tr><th>method</th><th>n</th>"
                    "<th>mean %s</th><th>median %s</th><th>p99 %s</th><th>vs correct</th>"
                    "<th>95%% interval</th><th class=\"text\">reading</th><th class=\"text\">why</th></tr>\n",
                    unit, unit, unit);
    for (int k = 0; k < IB_PITFALL_COUNT; k++) {
        const ib_pitfall_row *row = &r->rows[k];
        ib__sbuf_printf(b, "<tr><td>");
        ib__xml_escape(b, row->name);
        ib__sbuf_printf(b, "</td>");
        if (row_measured(row)) {
            char error[32], interval[48];
            ib__sbuf_printf(b,
                            "<td>%zu</td><td>%.4g</td><td>%.4g</td><td>%.4g</td><td>%s</td><td>%s</td><td "
                            "class=\"text\">%s</td><td class=\"text\">",
                            row->stats.n, row->stats.mean * scale, row->stats.p50 * scale,
                            row->stats.p99 * scale, ib__fmt_pitfall_error(error, row),
                            ib__fmt_pitfall_interval(interval, row->error_ci95_pct, row->reading),
                            row->reading == IB_READING_NOT_COMPARED ? ""
                                                                    : ib_pitfall_reading_name(row->reading));
            ib__xml_escape(b, row->why);
            pitfall_no_interval(b, row->no_interval);
        } else {
            ib__sbuf_printf(b, "<td colspan=\"8\" class=\"text\">%s",
                            row->applies ? "not measured: " : "N/A: ");
            ib__xml_escape(b, row->applies ? row->error : row->not_applicable);
        }
        ib__sbuf_printf(b, "</td></tr>\n");
    }
    ib__sbuf_printf(b, "</table>\n");
}

/* One row of a pitfalls chart: its figure against the correct one, as a
 * ratio (the forward pass's rows and generation's, whose figures are in
 * ms or tokens/s, on one axis). */
typedef struct pitfall_bar {
    const char *name;
    double error_pct; /* the bar, from the correct figure to it */
    double ci_pct[2]; /* its 95% interval (NaN: none) */
    ib_pitfall_reading reading;
    double spread_pct[2];  /* the single sample's 5th..95th percentile instead of a bar (NaN: a bar) */
    double mean_pct;       /* a dot: the mean against the correct mean (NaN: none) */
    const char *bar_class; /* NULL: by the reading */
    char label[96];
} pitfall_bar;

/* A row's bar as its reading draws it: no spread, no mean, its label to
 * be made (pitfall_bar_label). */
static pitfall_bar reading_bar(const char *name, double error_pct, const double ci_pct[2],
                               ib_pitfall_reading reading)
{
    return (pitfall_bar){ name, error_pct, { ci_pct[0], ci_pct[1] }, reading, { NAN, NAN }, NAN, NULL, "" };
}

/* x: log2 of the figure over the correct one; NaN stays NaN. */
static double log_ratio(double pct) { return log2(1 + pct / 100); }

/* A difference within the noise, or with no interval to judge it, is
 * drawn neutral: only a difference beyond its interval is a mistake's
 * figure, red. */
static const char *bar_class(const pitfall_bar *bar)
{
    if (bar->bar_class) return bar->bar_class;
    return bar->reading == IB_READING_LOW || bar->reading == IB_READING_HIGH ? "bar-wrong" : "bar-noise";
}

static void pitfall_bar_label(pitfall_bar *bar)
{
    char interval[48];
    if (isfinite(bar->spread_pct[0])) {
        snprintf(bar->label, sizeof bar->label, "one run: %+.1f%% .. %+.1f%%",
                 ib__signed_shown(bar->spread_pct[0], 1), ib__signed_shown(bar->spread_pct[1], 1));
        return;
    }
    double error = ib__signed_shown(bar->error_pct, 1);
    if (bar->reading == IB_READING_NO_INTERVAL)
        snprintf(bar->label, sizeof bar->label, "%+.1f%%, no interval", error);
    else if (isfinite(bar->ci_pct[0]))
        snprintf(bar->label, sizeof bar->label, "%+.1f%% %s %s", error,
                 ib__fmt_pitfall_interval(interval, bar->ci_pct, bar->reading),
                 ib_pitfall_reading_name(bar->reading));
    else
        snprintf(bar->label, sizeof bar->label, "%+.1f%% %s (same runs, exact)", error,
                 ib_pitfall_reading_name(bar->reading));
}

static void pitfalls_chart_row(ib__sbuf *b, const ib__plot *plot, const pitfall_bar *bar, double y)
{
    ib__svg_text(b, plot->left - 8, ib__plot_py(plot, y) + 4, "end", "row-label", bar->name);
    if (isfinite(bar->spread_pct[0])) {
        ib__svg_segment(b, plot, log_ratio(bar->spread_pct[0]), y, log_ratio(bar->spread_pct[1]), y,
                        "spread");
    } else {
        double x = log_ratio(bar->error_pct);
        ib__svg_rect(b, plot, fmin(0, x), fmax(0, x), y - 0.3, y + 0.3, bar_class(bar), bar->label);
        if (isfinite(log_ratio(bar->ci_pct[0])) && isfinite(log_ratio(bar->ci_pct[1])))
            ib__svg_segment(b, plot, log_ratio(bar->ci_pct[0]), y, log_ratio(bar->ci_pct[1]), y, "interval");
        double mean = log_ratio(bar->mean_pct);
        if (isfinite(mean)) ib__svg_points(b, plot, &mean, &y, 1, "mean", 4);
    }
    ib__svg_text(b, plot->width - plot->right + 8, ib__plot_py(plot, y) + 4, "start", "row-error",
                 bar->label);
}

/* The chart of every row against its correct figure, on a log2 scale of
 * their ratio; reference: the line at 1's label. */
static void pitfalls_chart(ib__sbuf *b, const pitfall_bar *bars, size_t n, const char *reference,
                           const char *caption_more)
{
    if (n == 0) return;
    double lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        const double xs[] = { bars[i].error_pct, bars[i].ci_pct[0],     bars[i].ci_pct[1],
                              bars[i].mean_pct,  bars[i].spread_pct[0], bars[i].spread_pct[1] };
        for (size_t j = 0; j < sizeof xs / sizeof xs[0]; j++)
            if (isfinite(log_ratio(xs[j]))) lo = fmin(lo, log_ratio(xs[j])), hi = fmax(hi, log_ratio(xs[j]));
    }
    /* Rows from the top, one unit apart; no y ticks: the names label them.
     * The figures in the right margin. */
    ib__axis rows = { 0, (double)n, 1, 0, 0, false };
    ib__plot plot = { 960, 76 + 44 * (double)n, 175, 300, 40, 52, ib__log2_axis(lo, hi, 12), rows };
    ib__sbuf_printf(b, "<figure>\n");
    ib__svg_begin(b, &plot, "each method against the correct figure");
    ib__svg_axes(b, &plot, "what the method reports, times the correct figure (log2 scale)", "");
    ib__svg_segment(b, &plot, 0, 0, 0, (double)n, "correct");
    ib__svg_text(b, ib__plot_px(&plot, 0), plot.top - 8, "middle", "correct", reference);
    for (size_t i = 0; i < n; i++) pitfalls_chart_row(b, &plot, &bars[i], (double)(n - i) - 0.5);
    ib__svg_end(b);
    ib__sbuf_printf(b,
                    "<figcaption>Bars: each method's figure against the correct one, with "
                    "<span class=\"key-interval\">&#9472;</span> the 95%% interval of the difference (the "
                    "medians' change, as <code>compare</code> computes it). Red: the interval excludes the "
                    "correct figure, the method reads low or high; blue-grey: within noise (the interval "
                    "holds it) or no interval to tell%s.</figcaption>\n</figure>\n",
                    caption_more);
}

/* The forward pass's rows as bars: the correct one is the line. */
static size_t forward_bars(const ib_pitfalls_result *r, pitfall_bar *bars)
{
    const ib_pitfall_row *correct = &r->rows[IB_PITFALL_CORRECT];
    size_t n = 0;
    for (int k = 0; k < IB_PITFALL_COUNT; k++) {
        const ib_pitfall_row *row = &r->rows[k];
        /* A figure of 0 (-100%) has no place on a ratio's axis: the table has it. */
        if (k == IB_PITFALL_CORRECT || !row_measured(row) || !isfinite(log_ratio(row->error_pct))) continue;
        pitfall_bar *bar = &bars[n++];
        *bar = reading_bar(row->name, row->error_pct, row->error_ci95_pct, row->reading);
        if (k == IB_PITFALL_SINGLE_SAMPLE) {
            bar->spread_pct[0] = row->single_p5_pct;
            bar->spread_pct[1] = row->single_p95_pct;
        }
        /* Its mistake is in the mean, which a cold start moves. */
        if (k == IB_PITFALL_NO_WARMUP && correct->stats.mean > 0)
            bar->mean_pct = (row->stats.mean / correct->stats.mean - 1) * 100;
        /* Strict fp32 beside a TF32 reference is no mistake's figure: what
         * the label fp32 promises, in grey. */
        if (k == IB_PITFALL_TF32 && !strcmp(row->math, "fp32")) bar->bar_class = "bar-strict";
        pitfall_bar_label(bar);
    }
    return n;
}

/* The TF32 row shows strict fp32 (the reference ran in TF32). */
static bool strict_shown(const ib_pitfalls_result *r)
{
    const ib_pitfall_row *row = &r->rows[IB_PITFALL_TF32];
    return row_measured(row) && !strcmp(row->math, "fp32");
}

static void forward_chart(ib__sbuf *b, const ib_pitfalls_result *r, double scale, const char *unit)
{
    const ib_pitfall_row *correct = &r->rows[IB_PITFALL_CORRECT];
    pitfall_bar bars[IB_PITFALL_COUNT];
    size_t n = forward_bars(r, bars);
    if (n == 0 || !row_measured(correct)) return;
    char reference[64];
    snprintf(reference, sizeof reference, "correct median %.4g %s%s%s", correct->stats.p50 * scale, unit,
             r->reference_math[0] ? ", " : "", r->reference_math);
    char caption[512];
    snprintf(
        caption, sizeof caption,
        "; <span class=\"key-mean\">&#9679;</span> the no-warm-up row's mean against the correct mean "
        "(what code that averages its timings prints); <span class=\"key-spread\">&#9472;</span> where a "
        "single run lands around the correct median (5th to 95th percentile)%s",
        strict_shown(r) ? "; the grey bar: strict fp32, what the label fp32 promises, beside a reference "
                          "that ran in TF32"
                        : "");
    ib__sbuf_printf(b, "<h2>Each method against the correct figure</h2>\n");
    pitfalls_chart(b, bars, n, reference, caption);
}

char *ib_pitfalls_report_html(const ib_pitfalls_result *r, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    char batch[32];
    snprintf(batch, sizeof batch, "%lld", (long long)info->batch);
    const ib_pitfall_row *correct = &r->rows[IB_PITFALL_CORRECT];
    page_head(&b, "pitfalls", info->model);
    ib__html_page_meta(&b, info, &r->env, batch,
                       "each method as it is usually written, next to the correct one");
    char reference[IB__REFERENCE_TEXT_LEN];
    ib__sbuf_printf(&b, "<p class=\"reference\">");
    ib__xml_escape(&b, ib__pitfalls_reference(reference, r->reference_math, r->reference_math_default));
    ib__sbuf_printf(&b, "</p>\n");
    ib__html_page_notes(&b, r->partial, r->stop_status, &r->env, r->warnings);
    const char *unit;
    double scale = ib__latency_unit(correct->stats.p50, &unit);
    forward_chart(&b, r, scale, unit);
    pitfalls_table(&b, r, scale, unit);
    page_text_and_tail(&b, ib_pitfalls_report_text(r, info));
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* Sessions                                                                  */
/* ------------------------------------------------------------------------ */

/* Session i's median and its 95% CI, in the report's unit; false when the
 * session failed. */
static bool session_point(const ib_latency_session *s, double scale, double *median, double ci[2])
{
    ib_stats st;
    if (!s->samples_ms || ib_stats_compute(s->samples_ms, s->n, &st) != IB_OK) return false;
    *median = st.p50 * scale;
    ci[0] = (isfinite(st.ci95_median[0]) ? st.ci95_median[0] : st.min) * scale;
    ci[1] = (isfinite(st.ci95_median[1]) ? st.ci95_median[1] : st.max) * scale;
    return true;
}

/* A strip of m sessions' values y at x (1-based, in the order run) of
 * n_sessions, each with its interval ci (NULL: none), the median across
 * them and its 95% interval (NaN: none). */
typedef struct strip {
    const double *x, *y;
    const double (*ci)[2];
    size_t m, n_sessions;
    double center, ci95[2]; /* the figure across sessions and its interval */
    const char *title, *ylabel, *ci_label;
} strip;

static void strip_plot(ib__sbuf *b, const strip *s)
{
    double lo = s->center, hi = s->center;
    for (size_t i = 0; i < s->m; i++) {
        lo = fmin(lo, s->ci ? s->ci[i][0] : s->y[i]);
        hi = fmax(hi, s->ci ? s->ci[i][1] : s->y[i]);
    }
    if (isfinite(s->ci95[0])) lo = fmin(lo, s->ci95[0]), hi = fmax(hi, s->ci95[1]);
    ib__plot plot = { 900,
                      300,
                      72,
                      150,
                      16,
                      52,
                      ib__nice_axis(0.5, (double)s->n_sessions + 0.5, 10),
                      ib__nice_axis(lo, hi, 7) };
    char label[64];
    ib__svg_begin(b, &plot, s->title);
    ib__svg_axes(b, &plot, "session (in the order run)", s->ylabel);
    for (size_t i = 0; s->ci && i < s->m; i++)
        ib__svg_segment(b, &plot, s->x[i], s->ci[i][0], s->x[i], s->ci[i][1], "spread");
    ib__svg_points(b, &plot, s->x, s->y, s->m, "run", 3.5);
    snprintf(label, sizeof label, "geometric mean across sessions %.4g", s->center);
    ib__svg_hline(b, &plot, s->center, "median", label);
    if (isfinite(s->ci95[0])) {
        ib__svg_hline(b, &plot, s->ci95[0], "p99", s->ci_label);
        ib__svg_hline(b, &plot, s->ci95[1], "p99", "");
    }
    ib__svg_end(b);
}

/* The strip: each session's median with its interval, in the order run,
 * and the geometric mean of session medians across them. */
static void sessions_strip(ib__sbuf *b, const ib_latency_file *f, const ib_sessions_stats *st, double scale,
                           const char *unit)
{
    double *x = malloc(f->n_sessions * sizeof *x), *y = malloc(f->n_sessions * sizeof *y);
    double(*ci)[2] = malloc(f->n_sessions * sizeof *ci);
    if (!x || !y || !ci) b->failed = true;
    size_t m = 0;
    for (size_t i = 0; x && y && ci && i < f->n_sessions; i++)
        if (session_point(&f->sessions[i], scale, &y[m], ci[m])) x[m++] = (double)(i + 1);
    char title[48];
    snprintf(title, sizeof title, "session median (%s)", unit);
    strip s = { x,
                y,
                (const double(*)[2])ci,
                m,
                f->n_sessions,
                st->geomean_ms * scale,
                { st->ci95_ms[0] * scale, st->ci95_ms[1] * scale },
                "session medians with their 95% intervals",
                title,
                "95% CI across sessions" };
    if (m > 0) strip_plot(b, &s);
    free(x);
    free(y);
    free(ci);
}

/* A figure of a sessions document (sessions.figures[]) as a strip. */
static void figure_strip(ib__sbuf *b, const cJSON *f)
{
    size_t n = (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(f, "values")), m = 0;
    double *x = malloc((n ? n : 1) * sizeof *x), *y = malloc((n ? n : 1) * sizeof *y);
    for (size_t i = 0; x && y && i < n; i++)
        if (isfinite(ib__figure_value(f, i))) x[m] = (double)(i + 1), y[m++] = ib__figure_value(f, i);
    char title[160];
    snprintf(title, sizeof title, "%s (%s)", cJSON_GetStringValue(cJSON_GetObjectItem(f, "label")),
             cJSON_GetStringValue(cJSON_GetObjectItem(f, "unit")));
    strip s = { x,
                y,
                NULL,
                m,
                n,
                ib__json_num(f, "geomean"),
                { ib__figure_aggregate(f, IB__FIGURE_CI_LOW), ib__figure_aggregate(f, IB__FIGURE_CI_HIGH) },
                title,
                title,
                "95% CI across sessions" };
    if (!x || !y)
        b->failed = true;
    else if (m > 0)
        strip_plot(b, &s);
    free(x);
    free(y);
}

char *ib__sessions_report_html_doc(const char *doc)
{
    cJSON *root = cJSON_Parse(doc);
    const cJSON *figures = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "sessions"), "figures"), *f;
    char *text = figures ? ib__sessions_report_text_doc(doc) : NULL;
    if (!text) {
        cJSON_Delete(root);
        return NULL;
    }
    const char *schema = cJSON_GetStringValue(cJSON_GetObjectItem(root, "schema"));
    const char *model = cJSON_GetStringValue(cJSON_GetObjectItem(root, "model"));
    ib__sbuf b = { 0 };
    page_head(&b,
              schema && strstr(schema, "pitfalls")           ? "pitfalls"
              : schema && strstr(schema, "serve_generative") ? "serve"
              : schema && strstr(schema, "generation")       ? "generate"
                                                             : "throughput",
              model ? model : "");
    ib__sbuf_printf(&b, "<h2>Sessions</h2>\n");
    cJSON_ArrayForEach(f, figures)
    {
        if (!isfinite(ib__json_num(f, "between_sd_log"))) continue; /* a plain figure (a batch) */
        ib__sbuf_printf(&b, "<figure>\n");
        figure_strip(&b, f);
        ib__sbuf_printf(&b,
                        "<figcaption>Each session (a fresh process, its own warm-up), in the order run; "
                        "the line across: the geometric mean of the sessions; dashed: its 95%% interval "
                        "(%s).</figcaption>\n</figure>\n",
                        cJSON_GetStringValue(cJSON_GetObjectItem(f, "interval")));
    }
    cJSON_Delete(root);
    page_text_and_tail(&b, text);
    return ib__sbuf_finish(&b);
}

char *ib_sessions_report_html(const ib_latency_file *f)
{
    ib__sbuf b = { 0 };
    page_head(&b, "latency", f->model);
    ib__sbuf_printf(&b, "<table class=\"meta\">\n");
    meta_row(&b, "model", f->model);
    char batch[32];
    snprintf(batch, sizeof batch, "%lld", (long long)f->batch);
    meta_row(&b, "batch", batch);
    meta_row(&b, "provider", f->provider);
    if (f->gpu[0]) meta_row(&b, "GPU", f->gpu);
    char runtime[IB__OPTIONS_TEXT_LEN];
    ib__file_runtime_options(runtime, sizeof runtime, f);
    meta_row(&b, "runtime options", runtime);
    meta_row(&b, "timing", ib_timing_name(f->timing));
    ib__sbuf_printf(&b, "</table>\n");
    size_t k;
    ib_session_sample *s = ib__measured_sessions(f, &k);
    ib_sessions_stats st;
    if (s && k > 0 && ib_sessions_compute(s, k, &st, NULL) == IB_OK) {
        const char *unit;
        double scale = ib__latency_unit(st.geomean_ms, &unit);
        ib__sbuf_printf(&b, "<h2>Sessions</h2>\n<figure>\n");
        sessions_strip(&b, f, &st, scale, unit);
        ib__sbuf_printf(&b, "<figcaption>Each session (a fresh process, its own warm-up): its median and the "
                            "95%% interval of that median. The line across: the geometric mean of the "
                            "session medians; dashed: its 95%% interval across sessions (Student's t over "
                            "their log medians, which carry each session's runs too), which covers what "
                            "changes when the measurement runs again.</figcaption>\n</figure>\n");
    }
    free(s);
    page_text_and_tail(&b, ib_sessions_report_text(f));
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* Generation                                                                */
/* ------------------------------------------------------------------------ */

static void gen_meta(ib__sbuf *b, const ib_gen_result *r)
{
    const ib_gen_info *in = &r->info;
    char v[IB__OPTIONS_TEXT_LEN];
    ib__sbuf_printf(b, "<table class=\"meta\">\n");
    meta_row(b, "model", in->model);
    ib__sbuf model = { 0 }; /* empty: nothing is known of the model */
    ib__gen_model_text(&model, in);
    if (model.failed) b->failed = true;
    meta_row(b, "architecture", model.len && !model.failed ? model.data : "");
    free(model.data);
    meta_row(b, "device", ib__device_name(in->device));
    meta_row(b, "CPU", r->env.host_cpu);
    if (in->n_threads > 0) { /* a caller's own model states none (generate_report.c) */
        char detail[64];
        ib__gen_threads_detail(detail, sizeof detail, in);
        snprintf(v, sizeof v, "%d%s", (int)in->n_threads, detail);
        meta_row(b, "threads", v);
    }
    snprintf(v, sizeof v, "%d tokens, %d new tokens at depth %d, context %d per sequence",
             (int)r->prompt_tokens, (int)r->new_tokens, (int)r->depth, (int)r->ctx_per_seq);
    meta_row(b, "request", v);
    meta_row(b, "runtime", in->runtime_version);
    ib__format_options(v, sizeof v, &in->options);
    meta_row(b, "runtime options", v);
    meta_row(b, "timing",
             "host clock around each call and its synchronize; random token ids, a fixed length");
    ib__sbuf_printf(b, "</table>\n");
}

static void gen_table(ib__sbuf *b, const ib_gen_result *r)
{
    static const char *const heads[] = { "n",   "mean", "std",   "min", "p50", "p90",
                                         "p95", "p99",  "p99.9", "max", "cv" };
    const char *unit;
    double scale = ib__gen_table_unit(r, &unit);
    char t[32];
    ib__sbuf_printf(b, "<h2>Statistics</h2>\n<table>\n<tr><th>%s</th>", unit);
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) ib__sbuf_printf(b, "<th>%s</th>", heads[i]);
    ib__sbuf_printf(b, "</tr>\n");
    stats_cells(b, "TTFT", &r->ttft, scale);
    stats_cells(b, "per token", &r->token, scale);
    stats_cells(b, "request", &r->request, scale);
    if (r->sample.n) stats_cells(b, "sampling", &r->sample, scale);
    ib__sbuf_printf(b,
                    "</table>\n<p>prompt %.1f tokens/s, generation %.1f tokens/s (tokens / their time), "
                    "TPOT %s</p>\n",
                    r->prompt_tokens_per_s, r->tokens_per_s, ib__fmt_ms(t, r->tpot_ms));
}

/* What the medians by position show, from the data: ": it grows with the
 * position (least-squares slope per position 3.906 us, 95% CI [...] us)"
 * where the slope's interval lies above 0, "falls" below it, "no trend"
 * where it holds 0; nothing from fewer than 3 positions (no interval). A
 * step attends over the whole context, but over a short context (or a
 * noisy machine) its cost need not show it. */
static void position_trend(ib__sbuf *b, const double *pos, const double *ms, size_t n)
{
    double slope, ci[2];
    if (ib__slope_ci95(pos, ms, n, &slope, ci) != IB_OK) return;
    const char *how = ci[0] > 0   ? "it grows with the position"
                      : ci[1] < 0 ? "it falls with the position"
                                  : "no trend with the position";
    ib__sbuf_printf(b, ": %s (", how);
    ib__text_estimate(b, "least-squares slope per position", slope, ci);
    ib__sbuf_printf(b, ")");
}

/* Latency by token position: the median over runs of each step. */
static void gen_positions(ib__sbuf *b, const ib_gen_result *r)
{
    size_t n = (size_t)r->new_tokens;
    if (!r->position_p50_ms || n < 2) return;
    double *xs = malloc(n * sizeof *xs), lo = r->position_p50_ms[0], hi = lo;
    if (!xs) {
        b->failed = true;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        xs[i] = (double)r->depth + (double)i;
        lo = fmin(lo, r->position_p50_ms[i]);
        hi = fmax(hi, r->position_p50_ms[i]);
    }
    ib__plot plot = {
        900, 300, 72, 110, 16, 52, ib__nice_axis(xs[0], xs[n - 1], 10), ib__nice_axis(lo, hi, 7)
    };
    ib__sbuf_printf(b, "<h2>Latency by token position</h2>\n<figure>\n");
    ib__svg_begin(b, &plot, "median step latency by context position");
    ib__svg_axes(b, &plot, "context position of the step", "median over runs (ms)");
    ib__svg_polyline(b, &plot, xs, r->position_p50_ms, n, "run-line");
    if (n <= 500) ib__svg_points(b, &plot, xs, r->position_p50_ms, n, "run", 1.8);
    ib__svg_end(b);
    ib__sbuf_printf(b, "<figcaption>Each step's median over the %zu runs", r->runs);
    position_trend(b, xs, r->position_p50_ms, n);
    ib__sbuf_printf(b, ".</figcaption>\n</figure>\n");
    free(xs);
}

/* A point's mark: its label above it, "peak: 1674 tokens/s at 2
 * sequences", toward the plot's middle; row staggers marks that would
 * overlap. */
static void gen_mark(ib__sbuf *b, const ib__plot *plot, const ib_gen_result *r, int i, int row)
{
    if (i < 0 || (size_t)i >= r->n_points || r->points[i].status != IB_OK) return;
    const ib_gen_point *p = &r->points[i];
    char marks[64], text[128];
    snprintf(text, sizeof text, "%s: %.1f tokens/s at %d sequences", ib__gen_point_marks(marks, r, i, ", "),
             p->tokens_per_s, (int)p->sequences);
    mark_at(b, plot, log2((double)p->sequences), p->tokens_per_s, text, row);
}

/* Tokens/s over the sequences decoded together, on a log2 axis, with the
 * text's marks (peak, knee, best within budget). */
static void gen_sequences_plot(ib__sbuf *b, const ib_gen_result *r)
{
    double xs[IB_GEN_MAX_POINTS], ys[IB_GEN_MAX_POINTS], hi = 0;
    size_t n = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        if (r->points[i].status != IB_OK) continue;
        xs[n] = log2((double)r->points[i].sequences);
        ys[n] = r->points[i].tokens_per_s;
        hi = fmax(hi, ys[n++]);
    }
    if (n == 0) return;
    /* Headroom for the marks above the peak. */
    ib__plot plot = {
        900, 340, 80, 40, 24, 52, ib__log2_axis(xs[0], xs[n - 1], 12), ib__nice_axis(0, hi * 1.2, 7)
    };
    ib__sbuf_printf(b, "<h2>Sequences decoded together</h2>\n<figure>\n");
    ib__svg_begin(b, &plot, "tokens per second against sequences");
    ib__svg_axes(b, &plot, "sequences (log2 scale)", "tokens/s");
    ib__svg_polyline(b, &plot, xs, ys, n, "b2b-line");
    ib__svg_points(b, &plot, xs, ys, n, "pt-b2b", 4.5);
    /* One label per marked point, naming all its marks. */
    gen_mark(b, &plot, r, r->peak, 0);
    if (r->knee != r->peak) gen_mark(b, &plot, r, r->knee, 0);
    if (r->best_within_budget != r->peak && r->best_within_budget != r->knee)
        gen_mark(b, &plot, r, r->best_within_budget, 1);
    ib__svg_end(b);
    ib__sbuf_printf(b,
                    "<figcaption>Aggregate tokens/s (sequences x steps / their time) at %d tokens of context "
                    "each",
                    (int)r->search_ctx_per_seq);
    if (r->searched) {
        ib__sbuf_printf(b, "; search: ");
        ib__sbuf sentence = { 0 };
        ib__gen_search_sentence(&sentence, r);
        if (sentence.failed) b->failed = true;
        ib__xml_escape(b, sentence.len && !sentence.failed ? sentence.data : "");
        free(sentence.data);
    }
    if (r->best_within_budget >= 0) ib__sbuf_printf(b, "; TPOT budget %g ms", r->tpot_budget_ms);
    ib__gen_budget_line(b, "; ", "", r);
    ib__sbuf_printf(b, ".</figcaption>\n</figure>\n");
}

/* The decode window's energy per output token, the prefill's per prompt
 * token, the CPU package's (docs/energy.md). */
static void gen_energy(ib__sbuf *b, const ib_gen_result *r)
{
    const char *const labels[] = { "decode, per output token", "prefill, per prompt token",
                                   "CPU package, per output token" };
    const ib_energy *const e[] = { &r->decode_energy, &r->prefill_energy, &r->decode_cpu_energy };
    energy_paragraphs(b, labels, e, 3, "token");
}

static void gen_efficiency_plot(ib__sbuf *b, const ib_gen_result *r)
{
    ib__energy_curve_columns cols;
    ib__energy_curve c = ib__energy_curve_of_sequences(r, &cols);
    efficiency_plot_of(b, &c, "Tokens per joule against sequences",
                       "Each count's energy over a decode window of its own, from one change of the energy "
                       "counter to another; the text gives each bound.");
}

/* The generation pitfalls (docs/generate.md, "Pitfalls"): the same chart
 * as the forward pass's, and the table. */
static void gen_pitfalls(ib__sbuf *b, const ib_gen_result *r)
{
    if (!r->has_pitfalls) return;
    pitfall_bar bars[IB_GEN_PITFALL_COUNT];
    size_t n = 0;
    for (int k = 0; k < IB_GEN_PITFALL_COUNT; k++) {
        const ib_gen_pitfall_row *row = &r->pitfalls[k];
        if (!row->applies || row->status != IB_OK || !isfinite(log_ratio(row->error_pct))) continue;
        bars[n] = reading_bar(row->name, row->error_pct, row->error_ci95_pct, row->reading);
        pitfall_bar_label(&bars[n++]);
    }
    ib__sbuf_printf(b, "<h2>Pitfalls: what each mistake reports</h2>\n");
    pitfalls_chart(b, bars, n, "the correct figure (each row's own: ms or tokens/s)", "");
    ib__sbuf_printf(
        b, "<table>\n<tr><th class=\"text\">method</th><th class=\"text\">figure</th><th>reports</th>"
           "<th>correct</th><th>vs correct</th><th>95%% interval</th><th class=\"text\">reading</th>"
           "<th class=\"text\">why</th></tr>\n");
    for (int k = 0; k < IB_GEN_PITFALL_COUNT; k++) {
        const ib_gen_pitfall_row *row = &r->pitfalls[k];
        ib__sbuf_printf(b, "<tr><td class=\"text\">");
        ib__xml_escape(b, row->name);
        ib__sbuf_printf(b, "</td>");
        if (!row->applies || row->status != IB_OK) {
            ib__sbuf_printf(b, "<td colspan=\"7\" class=\"text\">%s", row->applies ? "failed: " : "N/A: ");
            ib__xml_escape(b, row->applies ? row->error : row->not_applicable);
        } else {
            char interval[48];
            ib__sbuf_printf(b,
                            "<td class=\"text\">%s</td><td>%.5g</td><td>%.5g</td><td>%+.1f%%</td><td>%s</td>"
                            "<td class=\"text\">%s</td><td class=\"text\">",
                            row->figure, row->wrong, row->correct, ib__signed_shown(row->error_pct, 1),
                            ib__fmt_pitfall_interval(interval, row->error_ci95_pct, row->reading),
                            ib_pitfall_reading_name(row->reading));
            ib__xml_escape(b, row->why);
            pitfall_no_interval(b, row->no_interval);
        }
        ib__sbuf_printf(b, "</td></tr>\n");
    }
    ib__sbuf_printf(b, "</table>\n");
}

char *ib__gen_report_html(const ib_gen_result *r)
{
    ib__sbuf b = { 0 };
    page_head(&b, "generate", r->info.model);
    gen_meta(&b, r);
    if (r->runs == 0)
        ib__sbuf_printf(&b, "<p>No timed run completed.</p>\n");
    else
        gen_table(&b, r);
    ib__html_page_notes(&b, r->partial, r->stop_status, &r->env, r->warnings);
    if (r->runs > 0) {
        ib__sbuf_printf(&b, "<h2>Time to first token</h2>\n<figure>\n");
        size_t beyond = latency_histogram(&b, &r->ttft, r->ttft_ms, r->runs, 1, "TTFT (ms)", "runs");
        ib__sbuf_printf(&b,
                        "<figcaption>Every run's TTFT; the solid line is the median, the dashed one p99.");
        histogram_beyond(&b, beyond, "run", r->ttft.max);
        ib__sbuf_printf(&b, "%s</figcaption>\n</figure>\n<h2>Per-token latency</h2>\n<figure>\n",
                        beyond ? "." : "");
        beyond = latency_histogram(&b, &r->token, r->token_ms, r->runs * (size_t)r->new_tokens, 1,
                                   "step (ms)", "tokens");
        ib__sbuf_printf(&b, "<figcaption>Every decode step of every run; the solid line is the median, the "
                            "dashed one p99.");
        histogram_beyond(&b, beyond, "step", r->token.max);
        ib__sbuf_printf(&b, "%s</figcaption>\n</figure>\n", beyond ? "." : "");
        gen_positions(&b, r);
    }
    if (r->runs > 0) gen_energy(&b, r);
    gen_sequences_plot(&b, r);
    gen_efficiency_plot(&b, r);
    gen_pitfalls(&b, r);
    page_text_and_tail(&b, ib__gen_report_text(r));
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* The page's pieces for the reports in files of their own                   */
/* ------------------------------------------------------------------------ */

void ib__html_page_head(ib__sbuf *b, const char *what, const char *model) { page_head(b, what, model); }

void ib__html_meta_row(ib__sbuf *b, const char *key, const char *value) { meta_row(b, key, value); }

size_t ib__html_histogram(ib__sbuf *b, const ib_stats *p, const double *x, size_t n, const char *x_title,
                          const char *y_title)
{
    return latency_histogram(b, p, x, n, 1, x_title, y_title);
}

void ib__html_histogram_beyond(ib__sbuf *b, size_t beyond, const char *noun, double max_ms)
{
    histogram_beyond(b, beyond, noun, max_ms);
}

void ib__html_page_text_and_tail(ib__sbuf *b, char *text) { page_text_and_tail(b, text); }
