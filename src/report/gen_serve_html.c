/* A generative model served under load as one self-contained page
 * (docs/serve-generative.md, "Reports"), in the look of every other page
 * (html_report.c's head, tables and histograms): what was measured, the
 * figures, the TTFT, TPOT and ITL distributions, why the tail is what it
 * is, the step timeline (the tokens of each step, decode against prompt,
 * the requests running against waiting, the KV cells held), and the text
 * report, escaped, so that the two never disagree. */
#include "core/serve_gen_trace.h"
#include "report/printer.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* At most this many points of a timeline's series: more would only grow
 * the file; min and max per stretch keep the spikes. */
#define TIMELINE_MAX_POINTS 2000

static void meta(ib__sbuf *b, const ib_gen_serve_result *r, const ib_gen_serve_config *c,
                 const ib_endpoint_result *ep)
{
    const ib_gen_info *in = &r->info;
    char v[IB__OPTIONS_TEXT_LEN];
    ib__sbuf_printf(b, "<table class=\"meta\">\n");
    ib__html_meta_row(b, "model", in->model);
    ib__sbuf model = { 0 };
    ib__gen_model_text(&model, in);
    b->failed |= model.failed;
    ib__html_meta_row(b, "architecture", model.len && !model.failed ? model.data : "");
    free(model.data);
    ib__html_meta_row(b, "device", ib__device_name(in->device));
    snprintf(v, sizeof v,
             "%d slots of %d tokens; each step one mixed batch (a token of every request generating, then "
             "prompt chunks up to %d tokens); %d warm-up requests before, not counted",
             (int)r->slots, (int)r->ctx_per_slot, (int)r->prefill_chunk, (int)r->warmup_requests);
    if (ep) { /* over HTTP: the server holds the engine */
        ib__html_meta_row(b, "endpoint", ep->url);
        ib__html_meta_row(b, "server's model", ep->model);
    } else {
        ib__html_meta_row(b, "engine", v);
    }
    if (c->arrivals == IB_ARRIVALS_TRACE)
        snprintf(v, sizeof v, "%zu, arrivals and lengths from a trace", r->n_requests);
    else
        snprintf(v, sizeof v, "%zu, %s arrivals at %.4g requests/s", r->n_requests,
                 c->arrivals == IB_ARRIVALS_CONSTANT ? "constant" : "random", c->rate);
    ib__html_meta_row(b, "requests", v);
    ib__html_meta_row(b, "runtime", in->runtime_version);
    ib__format_options(v, sizeof v, &in->options);
    ib__html_meta_row(b, "runtime options", v);
    ib__html_meta_row(b, "timing",
                      ep ? "every chunk stamped as it arrives; every figure from the request's scheduled "
                           "arrival"
                         : "the end of each step's synchronize is every token's time; every figure from the "
                           "request's scheduled arrival");
    ib__sbuf_printf(b, "</table>\n");
}

static void stats_row(ib__sbuf *b, const char *label, const ib_stats *st)
{
    if (st->n == 0) return;
    const double v[] = { st->mean, st->min, st->p50, st->p90, st->p99, st->max };
    ib__sbuf_printf(b, "<tr><td>%s</td><td>%zu</td>", label, st->n);
    char t[32];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        ib__sbuf_printf(b, "<td>%s</td>", ib__fmt_plain4(t, v[i]));
    ib__sbuf_printf(b, "</tr>\n");
}

static void figures(ib__sbuf *b, const ib_gen_serve_result *r)
{
    ib__sbuf_printf(b, "<h2>Figures</h2>\n<table>\n<tr><th>ms</th><th>n</th><th>mean</th><th>min</th>"
                       "<th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>\n");
    stats_row(b, "TTFT", &r->ttft);
    stats_row(b, "queue (wait for a slot)", &r->queue);
    stats_row(b, "prefill", &r->tail.prefill);
    stats_row(b, "TPOT", &r->tpot);
    stats_row(b, "ITL", &r->itl);
    stats_row(b, "end-to-end", &r->e2e);
    ib__sbuf_printf(b, "</table>\n");
}

/* One distribution's histogram with its caption (none without samples). */
static void distribution(ib__sbuf *b, const char *heading, const ib_stats *st, const double *x, size_t n,
                         const char *x_title, const char *noun, const char *caption)
{
    if (n == 0) return;
    ib__sbuf_printf(b, "<h2>%s</h2>\n<figure>\n", heading);
    char y_title[32];
    snprintf(y_title, sizeof y_title, "%ss", noun);
    size_t beyond = ib__html_histogram(b, st, x, n, x_title, y_title);
    ib__sbuf_printf(b, "<figcaption>%s; the solid line is the median, the dashed one p99.", caption);
    ib__html_histogram_beyond(b, beyond, noun, st->max);
    ib__sbuf_printf(b, "%s</figcaption>\n</figure>\n", beyond ? "." : "");
}

/* The completed requests' TTFT and TPOT, and every gap (over HTTP: from
 * the chunks the client received, the engine's steps being the server's). */
static void distributions(ib__sbuf *b, const ib_gen_serve_result *r, const ib_endpoint_result *ep)
{
    size_t n = 0, n_tpot = 0;
    double *ttft = malloc((r->n_requests ? r->n_requests : 1) * sizeof *ttft);
    double *tpot = malloc((r->n_requests ? r->n_requests : 1) * sizeof *tpot);
    double *gaps = NULL;
    size_t n_gaps = 0;
    ib_status gaps_st =
        ep ? ib__endpoint_gaps(ep, &gaps, &n_gaps)
           : ib__gen_serve_gaps(r->requests, r->n_requests, r->steps, r->n_steps, &gaps, &n_gaps);
    if (!ttft || !tpot || gaps_st != IB_OK) b->failed = true;
    for (size_t i = 0; ttft && tpot && i < r->n_requests; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        if (q->generated_tokens != q->spec.output_tokens) continue;
        ttft[n++] = q->ttft_ms;
        if (q->spec.output_tokens > 1) tpot[n_tpot++] = q->tpot_ms;
    }
    distribution(b, "Time to first token", &r->ttft, ttft, n, "TTFT (ms)", "request",
                 "Every completed request's TTFT from its scheduled arrival (its wait for a slot inside)");
    distribution(b, "Time per output token", &r->tpot, tpot, n_tpot, "TPOT (ms)", "request",
                 "Every completed request's (end - first token) / (tokens - 1)");
    distribution(b, "Inter-token gaps", &r->itl, gaps, n_gaps, "gap (ms)", "gap",
                 "Every gap between two tokens of a request");
    free(ttft);
    free(tpot);
    free(gaps);
}

/* A line of why the tail is what it is: a list item, the first headed. */
static void tail_item(ib__sbuf *b, const char *line, size_t index)
{
    if (index == 0) ib__sbuf_printf(b, "<h2>Why the tail is what it is</h2>\n<ul>\n");
    ib__sbuf_printf(b, "<li>");
    ib__xml_escape(b, line);
    ib__sbuf_printf(b, "</li>\n");
}

/* A step's figure by index: a timeline's series. */
typedef double (*step_value)(const ib_gen_serve_step *s);
static double decode_of(const ib_gen_serve_step *s) { return s->decode_tokens; }
static double prefill_of(const ib_gen_serve_step *s) { return s->prefill_tokens; }
static double running_of(const ib_gen_serve_step *s) { return s->running; }
static double waiting_of(const ib_gen_serve_step *s) { return s->waiting; }
static double kv_of(const ib_gen_serve_step *s) { return s->kv_cells; }

/* One series over the steps' ends, downsampled to what a plot shows. */
static void series(ib__sbuf *b, const ib__plot *plot, const ib_gen_serve_result *r, step_value value,
                   const char *cls, double *y, double *xs, double *ys, size_t *idx)
{
    for (size_t i = 0; i < r->n_steps; i++) y[i] = value(&r->steps[i]);
    size_t m = ib__downsample_minmax(y, r->n_steps, TIMELINE_MAX_POINTS, idx);
    for (size_t i = 0; i < m; i++) {
        xs[i] = r->steps[idx[i]].end_ms;
        ys[i] = y[idx[i]];
    }
    ib__svg_polyline(b, plot, xs, ys, m, cls);
}

/* A timeline of up to two series over the run (the first solid, the
 * second dashed), y from 0 to at least top. */
static void timeline(ib__sbuf *b, const ib_gen_serve_result *r, const char *what, const char *y_title,
                     step_value first, step_value second, double top)
{
    double *y = malloc(r->n_steps * sizeof *y), *xs = malloc(TIMELINE_MAX_POINTS * sizeof *xs),
           *ys = malloc(TIMELINE_MAX_POINTS * sizeof *ys);
    size_t *idx = malloc(TIMELINE_MAX_POINTS * sizeof *idx);
    if (y && xs && ys && idx) {
        for (size_t i = 0; i < r->n_steps; i++)
            top = fmax(top, fmax(first(&r->steps[i]), second ? second(&r->steps[i]) : 0));
        ib__plot plot = { 900,
                          240,
                          72,
                          24,
                          16,
                          52,
                          ib__nice_axis(0, fmax(r->steps[r->n_steps - 1].end_ms, 1e-3), 10),
                          ib__nice_axis(0, fmax(top, 1), 6) };
        ib__svg_begin(b, &plot, what);
        ib__svg_axes(b, &plot, "time from the schedule's origin (ms)", y_title);
        series(b, &plot, r, first, "b2b-line", y, xs, ys, idx);
        if (second) series(b, &plot, r, second, "sync-line", y, xs, ys, idx);
        ib__svg_end(b);
    } else {
        b->failed = true;
    }
    free(y);
    free(xs);
    free(ys);
    free(idx);
}

static void step_timeline(ib__sbuf *b, const ib_gen_serve_result *r)
{
    if (r->n_steps == 0) return;
    ib__sbuf_printf(b, "<h2>The steps over time</h2>\n<figure>\n");
    timeline(b, r, "tokens of each step: decode against prompt", "tokens a step", decode_of, prefill_of, 0);
    ib__sbuf_printf(b, "<figcaption>Each step's <span class=\"key-b2b\">decode tokens</span> (one a "
                       "request generating) and <span class=\"key-sync\">prompt tokens</span> (chunks of "
                       "admitted prompts): a step that carries a chunk takes longer, and so does every "
                       "token it decodes.</figcaption>\n</figure>\n<figure>\n");
    timeline(b, r, "requests running and waiting at each step", "requests", running_of, waiting_of,
             (double)r->slots);
    ib__sbuf_printf(b,
                    "<figcaption>Requests <span class=\"key-b2b\">running</span> (holding one of the %d "
                    "slots) and <span class=\"key-sync\">waiting</span> (arrived, no slot yet: their wait "
                    "is in their TTFT).</figcaption>\n</figure>\n<figure>\n",
                    (int)r->slots);
    timeline(b, r, "KV cache cells held after each step", "KV cells", kv_of, NULL, 0);
    ib__sbuf_printf(b,
                    "<figcaption>The KV cache cells the running requests hold after each step, of %.0f "
                    "(%d slots x %d).%s</figcaption>\n</figure>\n",
                    r->tail.kv_capacity_cells, (int)r->slots, (int)r->ctx_per_slot,
                    r->n_steps > TIMELINE_MAX_POINTS ? " Downsampled: the lowest and highest step of each "
                                                       "stretch are drawn."
                                                     : "");
}

/* A line of the endpoint's block: a list item, the first headed. */
static void endpoint_item(ib__sbuf *b, const char *line, size_t index)
{
    if (index == 0) ib__sbuf_printf(b, "<h2>The client (over HTTP)</h2>\n<ul>\n");
    ib__sbuf_printf(b, "<li>");
    ib__xml_escape(b, line);
    ib__sbuf_printf(b, "</li>\n");
}

char *ib__gen_serve_report_html(const ib_gen_serve_result *r, const ib_gen_serve_config *cfg)
{
    return ib__gen_serve_report_html_endpoint(r, cfg, NULL);
}

char *ib__gen_serve_report_html_endpoint(const ib_gen_serve_result *r, const ib_gen_serve_config *cfg,
                                         const ib_endpoint_result *ep)
{
    ib__sbuf b = { 0 };
    ib__html_page_head(&b, "serve", ep ? ep->model : r->info.model);
    meta(&b, r, cfg, ep);
    if (r->partial)
        ib__sbuf_printf(&b,
                        "<p class=\"partial\">PARTIAL: stopped early (%s); the figures are what was "
                        "measured</p>\n",
                        ib_status_str(r->stop_status));
    figures(&b, r);
    distributions(&b, r, ep);
    if (ib__gen_serve_tail_each(&b, r, tail_item)) ib__sbuf_printf(&b, "</ul>\n");
    if (ep && ib__endpoint_each(&b, ep, r, endpoint_item)) ib__sbuf_printf(&b, "</ul>\n");
    step_timeline(&b, r);
    /* Further sections come here, one call each (the curve over rates,
     * the pitfalls). */
    ib__html_page_text_and_tail(&b, ib__gen_serve_report_text(r, cfg, ep));
    return ib__sbuf_finish(&b);
}
