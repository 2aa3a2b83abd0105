/* A generative model served over HTTP (docs/serve-endpoint.md): the
 * endpoint's header, its block (the client's lateness, the failures by
 * cause, the chunks that carried several tokens) and its JSON; the
 * figures themselves are the in-process report's (gen_serve_report.c). */
#include "report/printer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ib__endpoint_text_header(ib__sbuf *b, const ib_endpoint_result *ep)
{
    ib__sbuf_printf(b, "inferbench serve: %s at %s (an OpenAI-compatible endpoint) under load\n", ep->model,
                    ep->url);
    ib__endpoint_api_header(b, ep);
}

static void text_failures(ib__sbuf *b, const ib_endpoint_result *ep)
{
    if (ep->n_failed == 0) {
        ib__sbuf_printf(b, "failures: none of %zu requests\n", ep->n_requests);
        return;
    }
    ib__sbuf_printf(b, "failures: %zu of %zu requests (counted against goodput):", ep->n_failed,
                    ep->n_requests);
    const char *sep = " ";
    for (int f = 1; f < IB_EP_N_FAILURES; f++)
        if (ep->failures[f]) {
            ib__sbuf_printf(b, "%s%s %zu", sep, ib_endpoint_failure_str((ib_endpoint_failure)f),
                            ep->failures[f]);
            sep = ", ";
        }
    ib__sbuf_printf(b, "\n");
}

void ib__endpoint_text(ib__sbuf *b, const ib_endpoint_result *ep, const ib_gen_serve_result *r)
{
    char p50[32], p99[32], max[32], bound[32];
    if (ep->lateness.n > 0)
        ib__sbuf_printf(
            b,
            "client lateness (sent - scheduled; the queue row above): p50 %s, p99 %s, max %s over "
            "%zu requests sent; bound %s (1%% of the TTFT p50, at least 1 ms)%s\n",
            ib__fmt_ms(p50, ep->lateness.p50), ib__fmt_ms(p99, ep->lateness.p99),
            ib__fmt_ms(max, ep->lateness.max), ep->lateness.n, ib__fmt_ms(bound, ep->lateness_bound_ms),
            ep->client_late ? ": CLIENT LATE, its delay is in every TTFT (the client's fault, not the "
                              "server's)"
                            : "");
    text_failures(b, ep);
    ib__sbuf_printf(
        b,
        "chunks: %zu, %zu carrying several tokens (each token of a chunk counted, its first at the "
        "gap from the chunk before, the others at gaps of 0)",
        ep->n_chunks, ep->multi_token_chunks);
    if (ep->assumed_chunks)
        ib__sbuf_printf(b, "; %zu of a request whose chunks stated no count, taken as one token each",
                        ep->assumed_chunks);
    ib__sbuf_printf(b, "\n");
    ib__endpoint_server_timings_text(b, ep, r);
    ib__endpoint_ceiling_text(b, ep, r);
}

size_t ib__endpoint_each(ib__sbuf *b, const ib_endpoint_result *ep, const ib_gen_serve_result *r,
                         void (*fn)(ib__sbuf *b, const char *line, size_t index))
{
    ib__sbuf lines = { 0 };
    ib__endpoint_text(&lines, ep, r);
    char *text = ib__sbuf_finish(&lines);
    if (!text) {
        b->failed = true;
        return 0;
    }
    size_t n = 0;
    for (char *line = text; *line;) {
        char *end = line + strcspn(line, "\n");
        bool last = *end == '\0';
        *end = '\0';
        fn(b, line, n++);
        line = last ? end : end + 1;
    }
    free(text);
    return n;
}

ib_status ib__endpoint_gaps(const ib_endpoint_result *ep, double **gaps_ms, size_t *n_gaps)
{
    size_t n = 0;
    for (size_t i = 0; i < ep->n_requests; i++)
        if (ep->requests[i].failure == IB_EP_OK) n += (size_t)ep->requests[i].chunk_tokens;
    *n_gaps = 0;
    *gaps_ms = malloc((n ? n : 1) * sizeof **gaps_ms);
    if (!*gaps_ms) return IB_ERR_NO_MEMORY;
    for (size_t i = 0; i < ep->n_requests; i++) {
        const ib_endpoint_request *q = &ep->requests[i];
        if (q->failure != IB_EP_OK) continue;
        for (size_t k = 0; k < q->n_chunks; k++)
            for (int32_t j = 0; j < q->chunk_token_counts[k]; j++)
                if (k > 0 || j > 0) (*gaps_ms)[(*n_gaps)++] = j > 0 ? 0 : q->chunk_ms[k] - q->chunk_ms[k - 1];
    }
    return IB_OK;
}

static cJSON *json_request(const ib_endpoint_request *q)
{
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "sent_ms", q->sent_ms);
    ib__json_add_number(o, "lateness_ms", q->lateness_ms);
    cJSON_AddNumberToObject(o, "http_status", (double)q->http_status);
    cJSON_AddStringToObject(o, "failure", ib_endpoint_failure_str(q->failure));
    if (q->usage_tokens >= 0)
        cJSON_AddNumberToObject(o, "usage_tokens", (double)q->usage_tokens);
    else
        cJSON_AddNullToObject(o, "usage_tokens");
    if (q->usage_prompt_tokens >= 0)
        cJSON_AddNumberToObject(o, "usage_prompt_tokens", (double)q->usage_prompt_tokens);
    else
        cJSON_AddNullToObject(o, "usage_prompt_tokens");
    cJSON_AddNumberToObject(o, "chunk_tokens", (double)q->chunk_tokens);
    cJSON_AddBoolToObject(o, "tokens_assumed", q->tokens_assumed);
    cJSON *ms = cJSON_AddArrayToObject(o, "chunk_ms"), *tk = cJSON_AddArrayToObject(o, "chunk_tokens_each");
    for (size_t k = 0; k < q->n_chunks; k++) {
        cJSON_AddItemToArray(ms, cJSON_CreateNumber(q->chunk_ms[k]));
        cJSON_AddItemToArray(tk, cJSON_CreateNumber(q->chunk_token_counts[k]));
    }
    ib__endpoint_request_timings_json(o, q);
    return o;
}

cJSON *ib__endpoint_json(const ib_endpoint_result *ep, const ib_gen_serve_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "url", ep->url);
    cJSON_AddStringToObject(o, "model", ep->model);
    cJSON_AddNumberToObject(o, "vocab", ep->vocab);
    ib__json_add_stats_or_null(o, "lateness_ms", &ep->lateness);
    ib__json_add_number(o, "lateness_bound_ms", ep->lateness_bound_ms);
    cJSON_AddBoolToObject(o, "client_late", ep->client_late);
    cJSON *f = cJSON_AddObjectToObject(o, "failures");
    for (int i = 1; i < IB_EP_N_FAILURES; i++)
        cJSON_AddNumberToObject(f, ib_endpoint_failure_str((ib_endpoint_failure)i), (double)ep->failures[i]);
    cJSON_AddNumberToObject(o, "failed", (double)ep->n_failed);
    cJSON_AddNumberToObject(o, "chunks", (double)ep->n_chunks);
    cJSON_AddNumberToObject(o, "multi_token_chunks", (double)ep->multi_token_chunks);
    cJSON_AddNumberToObject(o, "assumed_chunks", (double)ep->assumed_chunks);
    ib__endpoint_ceiling_json(o, ep, r);
    ib__endpoint_server_timings_json(o, ep);
    cJSON *reqs = cJSON_AddArrayToObject(o, "requests");
    for (size_t i = 0; i < ep->n_requests; i++) cJSON_AddItemToArray(reqs, json_request(&ep->requests[i]));
    return o;
}
