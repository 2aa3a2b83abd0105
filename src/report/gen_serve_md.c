/* A generative model served under load as Markdown (docs/serve-generative.md,
 * "Reports"): the title, the engine and the requests, the figures' table,
 * the rates and goodput, why the tail is what it is. */
#include "report/printer.h"
#include "report/md_rows.h"

#include <math.h>
#include <stdio.h>

static void title(ib__sbuf *b, const ib_gen_serve_result *r, const ib_endpoint_result *ep)
{
    ib__sbuf_printf(b, "**inferbench serve** (a generative model under load): ");
    if (ep) { /* over HTTP: the server holds the engine */
        ib__md_cell(b, ep->model);
        ib__sbuf_printf(b, " at ");
        ib__md_cell(b, ep->url);
        ib__sbuf_printf(b, " (an OpenAI-compatible endpoint; every time from the request's scheduled "
                           "arrival)\n\n");
        return;
    }
    ib__md_cell(b, r->info.model);
    ib__sbuf_printf(b,
                    ", %s\n\nengine: %d slots of %d tokens, prompt chunks up to %d tokens a step, %d "
                    "warm-up requests; every time from the request's scheduled arrival\n\n",
                    ib__device_name(r->info.device), (int)r->slots, (int)r->ctx_per_slot,
                    (int)r->prefill_chunk, (int)r->warmup_requests);
}

static void stats_row(ib__sbuf *b, const char *label, const ib_stats *st)
{
    if (st->n > 0) ib__md_stats_row(b, label, st);
}

/* "1234", or "-" when v does not exist. */
static const char *num(char buf[32], double v) { return isfinite(v) ? ib__fmt_plain4(buf, v) : "-"; }

static void rates_table(ib__sbuf *b, const ib_gen_serve_result *r)
{
    char t[8][32];
    snprintf(t[0], sizeof t[0], "%zu of %zu", r->n_completed, r->n_requests);
    snprintf(t[7], sizeof t[7], isnan(r->good_share) ? "-" : "%.4g%%", 100 * r->good_share);
    ib__sbuf_printf(b, "\n");
    IB__MD_HEADER(b, "rrrrrrrr", "completed", "span", "offered/s", "achieved/s", "output tokens/s",
                  "tokens/s", "goodput/s", "good share");
    IB__MD_ROW(b, t[0], isfinite(r->span_ms) ? ib__fmt_ms(t[1], r->span_ms) : "-", num(t[2], r->offered_rate),
               num(t[3], r->achieved_rate), num(t[4], r->output_tokens_per_s),
               num(t[5], r->total_tokens_per_s), num(t[6], r->goodput_rate), t[7]);
}

/* A line of why the tail is what it is: a list item, the first headed. */
static void tail_item(ib__sbuf *b, const char *line, size_t index)
{
    if (index == 0) ib__sbuf_printf(b, "\nWhy the tail is what it is:\n\n");
    ib__sbuf_printf(b, "- ");
    ib__md_cell(b, line);
    ib__sbuf_printf(b, "\n");
}

/* The targets goodput was judged by, when any was given. */
static void targets(ib__sbuf *b, const ib_gen_serve_config *c)
{
    const char *sep = "goodput's targets: ";
    if (c->slo_ttft_ms > 0) ib__sbuf_printf(b, "%sTTFT <= %.4g ms", sep, c->slo_ttft_ms), sep = ", ";
    if (c->slo_tpot_ms > 0) ib__sbuf_printf(b, "%sTPOT <= %.4g ms", sep, c->slo_tpot_ms), sep = ", ";
    if (c->slo_e2e_ms > 0) ib__sbuf_printf(b, "%send-to-end <= %.4g ms", sep, c->slo_e2e_ms), sep = ", ";
    if (sep[0] == ',') ib__sbuf_printf(b, " (a good request meets every one)\n\n");
}

/* A line of the endpoint's block: a list item, the first headed. */
static void endpoint_item(ib__sbuf *b, const char *line, size_t index)
{
    if (index == 0) ib__sbuf_printf(b, "\nThe client (over HTTP):\n\n");
    ib__sbuf_printf(b, "- ");
    ib__md_cell(b, line);
    ib__sbuf_printf(b, "\n");
}

char *ib__gen_serve_report_md(const ib_gen_serve_result *r, const ib_gen_serve_config *cfg)
{
    return ib__gen_serve_report_md_endpoint(r, cfg, NULL);
}

char *ib__gen_serve_report_md_endpoint(const ib_gen_serve_result *r, const ib_gen_serve_config *cfg,
                                       const ib_endpoint_result *ep)
{
    ib__sbuf b = { 0 };
    title(&b, r, ep);
    targets(&b, cfg);
    ib__md_stats_header(&b, "figure");
    stats_row(&b, "TTFT", &r->ttft);
    stats_row(&b, "queue (wait for a slot)", &r->queue);
    stats_row(&b, "prefill", &r->tail.prefill);
    stats_row(&b, "TPOT", &r->tpot);
    stats_row(&b, "ITL", &r->itl);
    stats_row(&b, "end-to-end", &r->e2e);
    rates_table(&b, r);
    ib__gen_serve_tail_each(&b, r, tail_item);
    if (ep) ib__endpoint_each(&b, ep, r, endpoint_item);
    /* Further sections come here, one call each (the curve over rates,
     * the pitfalls). */
    ib__md_footer(&b, r->partial, r->stop_status, 0);
    return ib__sbuf_finish(&b);
}
