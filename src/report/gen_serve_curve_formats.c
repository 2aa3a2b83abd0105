/* A generative model's SLO search or curve over rates in CSV, Markdown
 * and HTML (docs/serve-generative.md, "The answer", "The curve"): the
 * table of rates (a row per rate, with its energy per output token), the
 * answer or the knee and saturation, and in Markdown and HTML the whole
 * run at the answer's rate (or the knee's) beside it, as its own formats
 * print it. The CSV holds the rates alone: one file of two tables would
 * not be a CSV any tool reads (the run's requests are in the JSON's at). */
#include "report/gen_serve_curve.h"
#include "report/svg.h"
#include "report/md_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines end in CRLF, as RFC 4180 writes them. */
#define EOL "\r\n"

/* What a rate is to the search or the curve: "answer", "last_failed",
 * "knee", "saturation", joined by ';', or "". */
static const char *roles(char buf[64], const ib_gen_serve_rates_result *r, size_t i)
{
    const struct {
        int32_t at;
        const char *name;
    } marks[] = { { r->found, "answer" },
                  { r->last_failed, "last_failed" },
                  { r->knee, "knee" },
                  { r->saturation, "saturation" } };
    buf[0] = '\0';
    for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++)
        if (marks[m].at == (int32_t)i)
            snprintf(buf + strlen(buf), 64 - strlen(buf), "%s%s", buf[0] ? ";" : "", marks[m].name);
    return buf;
}

/* The last cell of a Markdown or HTML row of rate i: its verdict and
 * roles, and over HTTP (over_http) its client's figures ("failed early
 * (3/8 served; 2 TTFT and 0 TPOT over), last_failed; client late p99 0.12
 * ms, 0 failed, 2 cut",
 * the lateness marked "past its bound" when it is). */
static const char *last_cell(char buf[320], const ib_gen_serve_rates_result *r, size_t i,
                             const ib_gen_serve_config *c, bool over_http)
{
    const ib_gen_serve_point *p = &r->points[i];
    char v[IB_GEN_SERVE_VERDICT_LEN], role[64], late[32];
    const char *verdict = ib_gen_serve_point_verdict(v, p, c);
    roles(role, r, i);
    int n = snprintf(buf, 320, "%s%s%s", verdict, verdict[0] && role[0] ? ", " : "", role);
    if (over_http)
        snprintf(buf + n, 320 - (size_t)n, "%sclient late p99 %s ms%s, %lld failed, %lld cut", n ? "; " : "",
                 isfinite(p->client_lateness_p99_ms) ? ib__fmt_plain4(late, p->client_lateness_p99_ms) : "-",
                 p->client_late ? " (past its bound)" : "", (long long)p->failed, (long long)p->cut);
    return buf;
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                       */
/* ------------------------------------------------------------------------ */

static char *rates_csv(const ib_gen_serve_rates_result *r, bool over_http)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b,
                    "kind,offered_rate,achieved_rate,pace,ttft_growth,scheduled,admitted,completed,ttft_p50_"
                    "ms,ttft_p99_ms,"
                    "tpot_p50_ms,tpot_p99_ms,queue_p99_ms,ttft_at_percentile_ms,tpot_at_percentile_ms,"
                    "ttft_over,tpot_over,met,ended_early,partial,goodput_rate,good_share,"
                    "output_tokens_per_s,total_tokens_per_s,kv_mean_share,kv_max_share,joules_per_token,"
                    "tokens_per_joule,energy_bound,role,at%s" EOL,
                    over_http ? ",client_lateness_p99_ms,client_late,failed,cut" : "");
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_gen_serve_point *p = &r->points[i];
        bool energy = p->energy.source != IB_ENERGY_NONE;
        ib__sbuf_printf(&b, "%s", r->searched ? "search" : "curve");
        ib__csv_number(&b, p->offered_rate);
        ib__csv_number(&b, p->achieved_rate);
        ib__csv_number(&b, p->pace);
        ib__csv_number(&b, p->ttft_growth);
        ib__sbuf_printf(&b, ",%lld,%lld,%lld", (long long)p->scheduled, (long long)p->admitted,
                        (long long)p->completed);
        const double times[] = { p->ttft_p50_ms,          p->ttft_p99_ms,  p->tpot_p50_ms,
                                 p->tpot_p99_ms,          p->queue_p99_ms, p->ttft_at_percentile_ms,
                                 p->tpot_at_percentile_ms };
        for (size_t c = 0; c < sizeof times / sizeof times[0]; c++) ib__csv_number(&b, times[c]);
        ib__sbuf_printf(&b, ",%lld,%lld,%s,%s,%s", (long long)p->ttft_over, (long long)p->tpot_over,
                        p->met ? "true" : "false", p->ended_early ? "true" : "false",
                        p->partial ? "true" : "false");
        const double figures[] = { p->goodput_rate,
                                   p->good_share,
                                   p->output_tokens_per_s,
                                   p->total_tokens_per_s,
                                   p->kv_mean_share,
                                   p->kv_max_share,
                                   energy ? p->energy.joules_per_item : NAN,
                                   energy ? p->energy.items_per_joule : NAN,
                                   energy ? p->energy.bound : NAN };
        for (size_t c = 0; c < sizeof figures / sizeof figures[0]; c++) ib__csv_number(&b, figures[c]);
        char role[64];
        ib__csv_text_cell(&b, roles(role, r, i));
        ib__sbuf_printf(&b, ",%s", (int32_t)i == r->at_point ? "true" : "false");
        if (over_http) { /* the client's own: its lateness, the requests that failed, those cut */
            ib__csv_number(&b, p->client_lateness_p99_ms);
            ib__sbuf_printf(&b, ",%s,%lld,%lld", p->client_late ? "true" : "false", (long long)p->failed,
                            (long long)p->cut);
        }
        ib__sbuf_printf(&b, EOL);
    }
    return ib__sbuf_finish(&b);
}

char *ib__gen_serve_rates_report_csv(const ib_result *res)
{
    if (!res->gen_serve_rates) return ib__gen_serve_report_csv(res->gen_serve, res->endpoint);
    return rates_csv(res->gen_serve_rates, ib__gen_serve_rates_endpoint(res) != NULL);
}

/* ------------------------------------------------------------------------ */
/* Markdown                                                                  */
/* ------------------------------------------------------------------------ */

static const char *num(char buf[32], double v) { return isfinite(v) ? ib__fmt_plain4(buf, v) : "-"; }

/* The summary's lines (ib__gen_serve_rates_summary) as a list, each line
 * passed through item. */
static void summary_lines(ib__sbuf *b, const ib_result *res, void (*item)(ib__sbuf *, const char *))
{
    ib__sbuf lines = { 0 };
    ib__gen_serve_rates_summary(&lines, res->gen_serve_rates, res->gen_serve_cfg, res->gen_serve_rates_cfg,
                                ib__gen_serve_rates_endpoint(res));
    ib__sbuf_each_line(b, &lines, item);
}

static void md_item(ib__sbuf *b, const char *line)
{
    ib__sbuf_printf(b, "- ");
    ib__md_cell(b, line);
    ib__sbuf_printf(b, "\n");
}

static void md_rates(ib__sbuf *b, const ib_result *res)
{
    const ib_gen_serve_rates_result *r = res->gen_serve_rates;
    const ib_gen_serve_config *c = res->gen_serve_cfg;
    bool over_http = ib__gen_serve_rates_endpoint(res) != NULL;
    ib__sbuf_printf(b,
                    "\n**%s over %zu rates** (requests/s; times in ms from each request's scheduled "
                    "arrival; J/token: the device's energy per output token over the rate's run, +- "
                    "its bound)\n\n",
                    r->searched ? "The SLO search" : "The curve", r->n_points);
    IB__MD_HEADER(b, "rrrrrrrrrrrl", "offered", "achieved", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99",
                  "queue p99", "goodput", "good", "out tok/s", "J/token", "");
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_gen_serve_point *p = &r->points[i];
        char t[10][32], good[32], last[320];
        snprintf(good, sizeof good, isnan(p->good_share) ? "-" : "%.4g%%", 100 * p->good_share);
        last_cell(last, r, i, c, over_http);
        IB__MD_ROW(b, num(t[0], p->offered_rate), num(t[1], p->achieved_rate), num(t[2], p->ttft_p50_ms),
                   num(t[3], p->ttft_p99_ms), num(t[4], p->tpot_p50_ms), num(t[5], p->tpot_p99_ms),
                   num(t[6], p->queue_p99_ms), num(t[7], p->goodput_rate), good,
                   num(t[8], p->output_tokens_per_s), ib__gen_serve_point_energy(t[9], p), last);
    }
    ib__sbuf_printf(b, "\n");
    const ib_gen_serve_point *none = ib__gen_serve_first_without_energy(r);
    if (none) {
        char rate[32], line[320];
        snprintf(line, sizeof line, "J/token -: no figure (at %s requests/s: %s)",
                 num(rate, none->offered_rate), none->energy.note);
        md_item(b, line);
    }
    summary_lines(b, res, md_item);
}

char *ib__gen_serve_rates_report_md(const ib_result *res)
{
    const ib_gen_serve_rates_result *r = res->gen_serve_rates;
    if (!r) return ib__gen_serve_report_md_endpoint(res->gen_serve, res->gen_serve_cfg, res->endpoint);
    ib__sbuf b = { 0 };
    if (r->at.n_requests > 0) {
        ib_gen_serve_config at_cfg = ib__gen_serve_rates_at_config(r, res->gen_serve_cfg);
        char *at = ib__gen_serve_report_md_endpoint(&r->at, &at_cfg, ib__gen_serve_rates_at_endpoint(res));
        char rate[32];
        if (!at) b.failed = true;
        ib__sbuf_printf(&b, "%s\nThe run above: %s, at %s requests/s.\n", at ? at : "",
                        ib__gen_serve_rates_at_whose(r), num(rate, r->points[r->at_point].offered_rate));
        free(at);
    } else {
        ib__sbuf_printf(&b, "**inferbench serve** (a generative model under load)\n");
    }
    md_rates(&b, res);
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* HTML                                                                      */
/* ------------------------------------------------------------------------ */

/* A rate's figure for a chart's series. */
typedef double (*point_value)(const ib_gen_serve_point *p);
static double ttft_p99_of(const ib_gen_serve_point *p) { return p->ttft_p99_ms; }
static double tpot_p99_of(const ib_gen_serve_point *p) { return p->tpot_p99_ms; }
static double goodput_of(const ib_gen_serve_point *p) { return p->goodput_rate; }
static double achieved_of(const ib_gen_serve_point *p) { return p->achieved_rate; }

/* The rates in increasing offered rate (a search measures them out of
 * order), as indexes into r->points. */
static size_t by_rate(const ib_gen_serve_rates_result *r, size_t *order)
{
    for (size_t i = 0; i < r->n_points; i++) order[i] = i;
    for (size_t i = 1; i < r->n_points; i++)
        for (size_t j = i; j > 0 && r->points[order[j]].offered_rate < r->points[order[j - 1]].offered_rate;
             j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    return r->n_points;
}

/* The knee and saturation (a curve), the answer and the lowest rate that
 * failed (a search), each a vertical line labelled with its rate. */
static void marks(ib__sbuf *b, const ib__plot *plot, const ib_gen_serve_rates_result *r)
{
    const struct {
        int32_t at;
        const char *name, *cls;
    } m[] = { { r->found, "answer", "median" },
              { r->last_failed, "failed", "p99" },
              { r->knee, "knee", "median" },
              { r->saturation, "saturation", "p99" } };
    int row = 0;
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        if (m[i].at < 0) continue;
        char label[64], rate[32];
        snprintf(label, sizeof label, "%s %s/s", m[i].name, num(rate, r->points[m[i].at].offered_rate));
        ib__svg_vline(b, plot, r->points[m[i].at].offered_rate, m[i].cls, label, row++);
    }
}

/* One chart against the offered rate: first solid, second (if any)
 * dashed, a target as a line (0: none), the marks. */
static void rate_chart(ib__sbuf *b, const ib_gen_serve_rates_result *r, const size_t *order, const char *what,
                       const char *y_title, point_value first, point_value second, double target,
                       bool diagonal)
{
    double x[IB_GEN_SERVE_MAX_RATES], y1[IB_GEN_SERVE_MAX_RATES], y2[IB_GEN_SERVE_MAX_RATES];
    double top = target, right = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_gen_serve_point *p = &r->points[order[i]];
        x[i] = p->offered_rate;
        y1[i] = first(p);
        y2[i] = second ? second(p) : NAN;
        right = fmax(right, x[i]);
        if (isfinite(y1[i])) top = fmax(top, y1[i]);
        if (isfinite(y2[i])) top = fmax(top, y2[i]);
    }
    if (diagonal) top = fmax(top, right);
    ib__plot plot = { 900,
                      320,
                      84,
                      110,
                      24,
                      52,
                      ib__nice_axis(0, right * 1.05, 10),
                      ib__nice_axis(0, fmax(top, 1e-3) * 1.1, 8) };
    ib__svg_begin(b, &plot, what);
    ib__svg_axes(b, &plot, "offered rate (requests/s)", y_title);
    if (diagonal) ib__svg_segment(b, &plot, 0, 0, right, right, "tick");
    if (target > 0) {
        char label[48];
        snprintf(label, sizeof label, "target %.4g ms", target);
        ib__svg_hline(b, &plot, target, "p99", label);
    }
    marks(b, &plot, r);
    ib__svg_polyline(b, &plot, x, y1, r->n_points, "b2b-line");
    ib__svg_points(b, &plot, x, y1, r->n_points, "pt-b2b", 3.5);
    if (second) {
        ib__svg_polyline(b, &plot, x, y2, r->n_points, "sync-line");
        ib__svg_points(b, &plot, x, y2, r->n_points, "pt-sync", 3.5);
    }
    ib__svg_end(b);
}

static void html_table(ib__sbuf *b, const ib_gen_serve_rates_result *r, const ib_gen_serve_config *c,
                       bool over_http)
{
    ib__sbuf_printf(b, "<table>\n<tr><th>offered/s</th><th>achieved/s</th><th>TTFT p50</th><th>TTFT p99</th>"
                       "<th>TPOT p50</th><th>TPOT p99</th><th>queue p99</th><th>goodput/s</th><th>good</th>"
                       "<th>output tokens/s</th><th>J/token</th><th class=\"text\"></th></tr>\n");
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_gen_serve_point *p = &r->points[i];
        char t[10][32], good[32], last[320];
        snprintf(good, sizeof good, isnan(p->good_share) ? "-" : "%.4g%%", 100 * p->good_share);
        const char *cells[] = {
            num(t[0], p->offered_rate),        num(t[1], p->achieved_rate),        num(t[2], p->ttft_p50_ms),
            num(t[3], p->ttft_p99_ms),         num(t[4], p->tpot_p50_ms),          num(t[5], p->tpot_p99_ms),
            num(t[6], p->queue_p99_ms),        num(t[7], p->goodput_rate),         good,
            num(t[8], p->output_tokens_per_s), ib__gen_serve_point_energy(t[9], p)
        };
        ib__sbuf_printf(b, "<tr>");
        for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++)
            ib__sbuf_printf(b, "<td>%s</td>", cells[k]);
        ib__sbuf_printf(b, "<td class=\"text\">%s</td></tr>\n", last_cell(last, r, i, c, over_http));
    }
    ib__sbuf_printf(b, "</table>\n");
}

static void html_item(ib__sbuf *b, const char *line)
{
    ib__sbuf_printf(b, "<li>");
    ib__xml_escape(b, line);
    ib__sbuf_printf(b, "</li>\n");
}

static void html_rates(ib__sbuf *b, const ib_result *res)
{
    const ib_gen_serve_rates_result *r = res->gen_serve_rates;
    const ib_gen_serve_config *c = res->gen_serve_cfg;
    ib__sbuf_printf(b, "<h2>%s over %zu rates</h2>\n", r->searched ? "The SLO search" : "The curve",
                    r->n_points);
    if (r->at.n_requests > 0) {
        char rate[32];
        ib__sbuf_printf(b, "<p>The figures above are %s run, at %s requests/s.</p>\n",
                        ib__gen_serve_rates_at_whose(r), num(rate, r->points[r->at_point].offered_rate));
    }
    html_table(b, r, c, ib__gen_serve_rates_endpoint(res) != NULL);
    ib__sbuf_printf(b, "<ul>\n");
    const ib_gen_serve_point *none = ib__gen_serve_first_without_energy(r);
    if (none) {
        char rate[32], line[320];
        snprintf(line, sizeof line, "J/token -: no figure (at %s requests/s: %s)",
                 num(rate, none->offered_rate), none->energy.note);
        html_item(b, line);
    }
    summary_lines(b, res, html_item);
    ib__sbuf_printf(b, "</ul>\n");
    size_t order[IB_GEN_SERVE_MAX_RATES];
    by_rate(r, order);
    ib__sbuf_printf(b, "<figure>\n");
    rate_chart(b, r, order, "TTFT p99 against the offered rate", "TTFT p99 (ms)", ttft_p99_of, NULL,
               c->slo_ttft_ms, false);
    ib__sbuf_printf(b, "<figcaption>Each rate's <span class=\"key-b2b\">TTFT p99</span>, from the request's "
                       "scheduled arrival (its wait for a slot inside).</figcaption>\n</figure>\n<figure>\n");
    rate_chart(b, r, order, "TPOT p99 against the offered rate", "TPOT p99 (ms)", tpot_p99_of, NULL,
               c->slo_tpot_ms, false);
    ib__sbuf_printf(b, "<figcaption>Each rate's <span class=\"key-b2b\">TPOT p99</span>.</figcaption>\n"
                       "</figure>\n<figure>\n");
    rate_chart(b, r, order, "goodput and achieved rate against the offered rate", "requests/s", goodput_of,
               achieved_of, 0, true);
    ib__sbuf_printf(b, "<figcaption><span class=\"key-b2b\">Goodput</span> (the requests that met every "
                       "target, a second) and the <span class=\"key-sync\">achieved rate</span>; the thin "
                       "grey diagonal is achieved = offered: below it the engine falls behind its "
                       "arrivals.</figcaption>\n</figure>\n");
}

/* The text report's heading in every page's tail (html_report.c). */
#define TEXT_TAIL "<h2>Text report</h2>\n<pre>"

char *ib__gen_serve_rates_report_html(const ib_result *res)
{
    const ib_gen_serve_rates_result *r = res->gen_serve_rates;
    const ib_gen_serve_config *c = res->gen_serve_cfg;
    if (!r) return ib__gen_serve_report_html_endpoint(res->gen_serve, c, res->endpoint);
    ib__sbuf b = { 0 };
    /* The run at the answer's page up to its text report, then the rates,
     * then the text of both. */
    char *at = NULL;
    if (r->at.n_requests > 0) {
        ib_gen_serve_config at_cfg = ib__gen_serve_rates_at_config(r, c);
        at = ib__gen_serve_report_html_endpoint(&r->at, &at_cfg, ib__gen_serve_rates_at_endpoint(res));
        if (!at) b.failed = true;
    }
    char *tail = NULL;
    for (char *s = at; s && (s = strstr(s, TEXT_TAIL)); s++) tail = s;
    if (tail) {
        *tail = '\0';
        ib__sbuf_printf(&b, "%s", at);
    } else {
        ib__html_page_head(&b, "serve", r->at.info.model);
    }
    free(at);
    html_rates(&b, res);
    ib__html_page_text_and_tail(&b, ib__gen_serve_rates_report_text(res));
    return ib__sbuf_finish(&b);
}
