/* A generative model served under load as CSV (RFC 4180,
 * docs/serve-generative.md, "Reports"): one row per request, in schedule
 * order, with its times and figures; the steps as a table of their own
 * (ib_gen_serve_steps_csv: --steps-csv), as forward-pass serve keeps its
 * requests apart from its rows of rates. Every row starts with the model
 * and the engine's settings, so that the files of many runs concatenate
 * into one table; a run over HTTP adds its endpoint's cells of each
 * request after the figures (endpoint_csv.c). */
#include "report/printer.h"

/* Lines end in CRLF, as RFC 4180 writes them. */
#define EOL "\r\n"

/* The first cells of every row: "model,slots,ctx_per_slot,prefill_chunk". */
static void engine_cells(ib__sbuf *b, const ib_gen_serve_result *r)
{
    ib__csv_field(b, r->info.model);
    ib__sbuf_printf(b, ",%d,%d,%d", (int)r->slots, (int)r->ctx_per_slot, (int)r->prefill_chunk);
}

char *ib__gen_serve_report_csv(const ib_gen_serve_result *r, const ib_endpoint_result *ep)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "model,slots,ctx_per_slot,prefill_chunk,request,scheduled_ms,prompt_tokens,"
                        "output_tokens,admitted_ms,first_token_ms,end_ms,slot,generated_tokens,queue_ms,"
                        "prefill_ms,ttft_ms,tpot_ms,e2e_ms,completed,met");
    if (ep) ib__endpoint_csv_header(&b);
    ib__sbuf_printf(&b, EOL);
    for (size_t i = 0; i < r->n_requests; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        engine_cells(&b, r);
        ib__sbuf_printf(&b, ",%zu", i);
        ib__csv_number(&b, q->spec.arrival_ms);
        ib__sbuf_printf(&b, ",%d,%d", (int)q->spec.prompt_tokens, (int)q->spec.output_tokens);
        const double times[] = { q->admitted_ms, q->first_token_ms, q->end_ms };
        for (size_t c = 0; c < 3; c++) ib__csv_number(&b, times[c]);
        ib__sbuf_printf(&b, ",%d,%d", (int)q->slot, (int)q->generated_tokens);
        const double figures[] = { q->queue_ms, q->first_token_ms - q->admitted_ms, q->ttft_ms, q->tpot_ms,
                                   q->e2e_ms };
        for (size_t c = 0; c < 5; c++) ib__csv_number(&b, figures[c]);
        bool done = q->generated_tokens == q->spec.output_tokens;
        ib__sbuf_printf(&b, ",%s,%s", done ? "true" : "false", q->met ? "true" : "false");
        if (ep && i < ep->n_requests) ib__endpoint_csv_cells(&b, &ep->requests[i]);
        ib__sbuf_printf(&b, EOL);
    }
    return ib__sbuf_finish(&b);
}

char *ib_gen_serve_steps_csv(const ib_gen_serve_result *r)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "model,slots,ctx_per_slot,prefill_chunk,step,start_ms,end_ms,decode_tokens,"
                        "prefill_tokens,running,waiting,kv_cells" EOL);
    for (size_t i = 0; i < r->n_steps; i++) {
        const ib_gen_serve_step *s = &r->steps[i];
        engine_cells(&b, r);
        ib__sbuf_printf(&b, ",%zu", i);
        ib__csv_number(&b, s->start_ms);
        ib__csv_number(&b, s->end_ms);
        ib__sbuf_printf(&b, ",%d,%d,%d,%d,%d" EOL, (int)s->decode_tokens, (int)s->prefill_tokens,
                        (int)s->running, (int)s->waiting, (int)s->kv_cells);
    }
    return ib__sbuf_finish(&b);
}
