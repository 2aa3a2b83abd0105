/* The serve report as one self-contained page: the latency-against-load
 * curve (p50, p90, p99 of a request's total latency against the offered
 * rate, the target as a line), achieved against offered rate, the parts of
 * a request stacked at each rate, and the text report, escaped, so that the
 * two never disagree. */
#include "report/report.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const css =
    "body{font:14px/1.4 system-ui,sans-serif;color:#222;max-width:1000px;margin:24px auto;padding:0 16px}\n"
    "h1{font-size:22px}h2{font-size:17px;margin:28px 0 8px}\n"
    "pre{background:#f7f7f7;padding:10px;overflow-x:auto;font-size:12px}\n"
    "figcaption{color:#555;font-size:13px}.partial{color:#b00;font-weight:bold}\n"
    "svg.plot{font:12px system-ui,sans-serif;max-width:100%;height:auto}\n"
    "svg .grid{stroke:#ececec}svg .tick{stroke:#888}svg .frame{fill:none;stroke:#999}\n"
    "svg .tick-label{fill:#444}svg .axis-title{fill:#222}\n"
    "svg .p50{fill:none;stroke:#1f77b4;stroke-width:2}svg .pt-p50{fill:#1f77b4}\n"
    "svg .p90{fill:none;stroke:#9467bd;stroke-width:1.5}svg .pt-p90{fill:#9467bd}\n"
    "svg .p99{fill:none;stroke:#ef6c00;stroke-width:2}svg .pt-p99{fill:#ef6c00}\n"
    "svg line.target{stroke:#c62828;stroke-width:1.5;stroke-dasharray:6 3}svg text.target{fill:#c62828}\n"
    "svg line.ideal{stroke:#999;stroke-dasharray:4 4}\n"
    ".k50{color:#1f77b4;font-weight:bold}.k90{color:#9467bd;font-weight:bold}"
    ".k99{color:#ef6c00;font-weight:bold}\n"
    "svg .part-queue{fill:#ef6c00}svg .part-h2d{fill:#8c564b}svg .part-compute{fill:#1f77b4}"
    "svg .part-d2h{fill:#17becf}svg .part-host{fill:#bdbdbd}\n"
    ".kq{color:#ef6c00;font-weight:bold}.kh{color:#8c564b;font-weight:bold}"
    ".kc{color:#1f77b4;font-weight:bold}.kd{color:#17becf;font-weight:bold}"
    ".ko{color:#999;font-weight:bold}\n";

/* The open-loop points with an offered rate, in increasing rate. */
static size_t sorted_points(const ib_serve_result *r, const ib_serve_point **out)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_points; i++)
        if (isfinite(r->points[i].offered_rate) && r->points[i].n > 0) out[n++] = &r->points[i];
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && out[j]->offered_rate < out[j - 1]->offered_rate; j--) {
            const ib_serve_point *t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

static void latency_curve(ib__sbuf *b, const ib_serve_point *const *p, size_t n, const ib_serve_config *cfg)
{
    double x[IB_SERVE_MAX_RATES], y50[IB_SERVE_MAX_RATES], y90[IB_SERVE_MAX_RATES], y99[IB_SERVE_MAX_RATES];
    double top = cfg->slo_ms > 0 ? cfg->slo_ms : 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = p[i]->offered_rate;
        y50[i] = p[i]->total.p50;
        y90[i] = p[i]->total.p90;
        y99[i] = p[i]->total.p99;
        top = fmax(top, y99[i]);
    }
    ib__plot plot = {
        900, 380, 84, 110, 24, 52, ib__nice_axis(0, x[n - 1] * 1.05, 10), ib__nice_axis(0, top * 1.1, 8)
    };
    ib__sbuf_printf(b, "<h2>Latency against load</h2>\n<figure>\n");
    ib__svg_begin(b, &plot, "request latency percentiles against offered rate");
    ib__svg_axes(b, &plot, "offered rate (requests/s)", "latency from scheduled arrival (ms)");
    if (cfg->slo_ms > 0) {
        char label[64];
        snprintf(label, sizeof label, "target p%g %g ms", cfg->slo_percentile * 100, cfg->slo_ms);
        ib__svg_hline(b, &plot, cfg->slo_ms, "target", label);
    }
    const struct {
        const double *y;
        const char *line, *pt;
    } curves[] = { { y50, "p50", "pt-p50" }, { y90, "p90", "pt-p90" }, { y99, "p99", "pt-p99" } };
    for (size_t c = 0; c < 3; c++) {
        ib__svg_polyline(b, &plot, x, curves[c].y, n, curves[c].line);
        ib__svg_points(b, &plot, x, curves[c].y, n, curves[c].pt, 3.5);
    }
    ib__svg_end(b);
    ib__sbuf_printf(b, "<figcaption><span class=\"k50\">p50</span>, <span class=\"k90\">p90</span> and "
                       "<span class=\"k99\">p99</span> of each request's latency (completion minus its "
                       "scheduled arrival); where the curves turn up, queueing takes over.</figcaption>\n"
                       "</figure>\n");
}

static void achieved_curve(ib__sbuf *b, const ib_serve_point *const *p, size_t n)
{
    double x[IB_SERVE_MAX_RATES], y[IB_SERVE_MAX_RATES], top = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = p[i]->offered_rate;
        y[i] = p[i]->achieved_rate;
        top = fmax(top, fmax(x[i], y[i]));
    }
    ib__plot plot = {
        900, 320, 84, 24, 24, 52, ib__nice_axis(0, top * 1.05, 10), ib__nice_axis(0, top * 1.05, 8)
    };
    ib__sbuf_printf(b, "<h2>Achieved against offered rate</h2>\n<figure>\n");
    ib__svg_begin(b, &plot, "achieved rate against offered rate");
    ib__svg_axes(b, &plot, "offered rate (requests/s)", "achieved (requests/s)");
    ib__svg_segment(b, &plot, 0, 0, top, top, "ideal");
    ib__svg_polyline(b, &plot, x, y, n, "p50");
    ib__svg_points(b, &plot, x, y, n, "pt-p50", 3.5);
    ib__svg_end(b);
    ib__sbuf_printf(b, "<figcaption>The dashed diagonal is achieved = offered; below it the model "
                       "falls behind its arrivals.</figcaption>\n</figure>\n");
}

/* One rate's bar: the mean of each part stacked from 0 (means add up,
 * percentiles do not); "host" is the rest of the total (the host's own
 * time around the run: launches, the wait for the device, a rebind...). */
static void parts_bar(ib__sbuf *b, const ib__plot *plot, double x, const ib_serve_point *p, bool apart)
{
    struct {
        const char *name, *cls;
        double ms;
    } parts[] = {
        { "queue", "part-queue", p->queue.mean },
        { "copy in", "part-h2d", apart ? p->h2d.mean : 0 },
        { "compute", "part-compute", p->compute.mean },
        { "copy out", "part-d2h", apart ? p->d2h.mean : 0 },
        { "host", "part-host", 0 },
    };
    parts[4].ms = fmax(0, p->total.mean - parts[0].ms - parts[1].ms - parts[2].ms - parts[3].ms);
    double y = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!(parts[i].ms > 1e-6)) continue; /* under a nanosecond: the rounding of the sums */
        char title[96], v[32];
        snprintf(title, sizeof title, "%s: mean %s", parts[i].name, ib__fmt_ms(v, parts[i].ms));
        ib__svg_rect(b, plot, x - 0.35, x + 0.35, y, y + parts[i].ms, parts[i].cls, title);
        y += parts[i].ms;
    }
}

/* The parts of a request at each rate, one stacked bar a rate (in rate
 * order, evenly spaced: the rates of a search are not). */
static void parts_chart(ib__sbuf *b, const ib_serve_point *const *p, size_t n, ib_serve_copies copies)
{
    double top = 0;
    for (size_t i = 0; i < n; i++) top = fmax(top, p[i]->total.mean);
    ib__plot plot = {
        900, 340, 84, 24, 24, 52, { .lo = 0, .hi = (double)n, .step = 1 }, ib__nice_axis(0, top * 1.05, 8)
    };
    ib__sbuf_printf(b, "<h2>The parts of a request</h2>\n<figure>\n");
    ib__svg_begin(b, &plot, "mean time in each part of a request, at each offered rate");
    ib__svg_axes(b, &plot, "offered rate (requests/s)", "mean per request (ms)");
    for (size_t i = 0; i < n; i++) {
        char rate[32];
        parts_bar(b, &plot, (double)i + 0.5, p[i], copies == IB_SERVE_COPIES_APART);
        ib__svg_text(b, ib__plot_px(&plot, (double)i + 0.5), plot.height - plot.bottom + 18, "middle",
                     "tick-label", ib__fmt_rate(rate, p[i]->offered_rate));
    }
    ib__svg_end(b);
    ib__sbuf_printf(b,
                    "<figcaption>Means, stacked (they add up to the mean latency): <span class=\"kq\">queue"
                    "</span>, <span class=\"kh\">copy in</span>, <span class=\"kc\">compute</span>, "
                    "<span class=\"kd\">copy out</span>, <span class=\"ko\">host</span> (the rest: "
                    "the host's time around the run).%s</figcaption>\n</figure>\n",
                    copies == IB_SERVE_COPIES_INSIDE ? " The copies are inside compute here (the backend "
                                                       "copies within its run)."
                                                     : "");
}

char *ib_serve_report_html(const ib_serve_result *r, const ib_serve_config *cfg, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<title>inferbench serve: ");
    ib__xml_escape(&b, info->model);
    ib__sbuf_printf(&b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>inferbench serve: ", css);
    ib__xml_escape(&b, info->model);
    ib__sbuf_printf(&b, "</h1>\n");
    if (r->partial)
        ib__sbuf_printf(&b, "<p class=\"partial\">PARTIAL: stopped early (%s)</p>\n",
                        ib_status_str(r->stop_status));
    char batch[32];
    snprintf(batch, sizeof batch, "%lld per request", (long long)cfg->request_batch);
    ib__html_page_meta(&b, info, &r->env, batch, "host clock, from each request's scheduled arrival");
    ib__html_page_notes(&b, false, IB_OK, &r->env, r->warnings); /* PARTIAL is said above */
    const ib_serve_point *pts[IB_SERVE_MAX_RATES];
    size_t n = sorted_points(r, pts);
    if (n > 0) {
        latency_curve(&b, pts, n, cfg);
        achieved_curve(&b, pts, n);
        parts_chart(&b, pts, n, r->copies);
    }
    char *text = ib_serve_report_text(r, cfg, info);
    if (!text) b.failed = true;
    ib__sbuf_printf(&b, "<h2>Text report</h2>\n<pre>");
    if (text) ib__xml_escape(&b, text);
    ib__sbuf_printf(&b, "</pre>\n</body>\n</html>\n");
    ib_free(text);
    return ib__sbuf_finish(&b);
}
