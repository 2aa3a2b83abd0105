/* What the endpoint's API adds to its report (docs/serve-endpoint.md,
 * "The API"): the words of the header for the API spoken (OpenAI's
 * completions or llama.cpp's own /completion), and the server's own
 * timings beside the client's figures, in text and JSON (the CSV's
 * cells: endpoint_csv.c). */
#include "report/printer.h"

#include <math.h>

/* The API's words in the client's line of the header. */
typedef struct api_words {
    const char *request, *length, *tokens;
} api_words;

static const api_words words[] = {
    [IB_ENDPOINT_API_COMPLETIONS] = { "POST /v1/completions", "max_tokens, ignore_eos",
                                      "tokens from the server's usage" },
    [IB_ENDPOINT_API_LLAMA] = { "POST /completion, llama.cpp's own API", "n_predict, ignore_eos",
                                "tokens from each event's count (tokens_predicted), its ids kept; the "
                                "request's count the final event's" },
};

void ib__endpoint_api_header(ib__sbuf *b, const ib_endpoint_result *ep)
{
    const api_words *w = &words[ep->api == IB_ENDPOINT_API_LLAMA ? IB_ENDPOINT_API_LLAMA : 0];
    ib__sbuf_printf(b,
                    "\nclient: one thread, libcurl's multi interface, open loop (each request sent at its "
                    "scheduled time, whatever the others do), streamed (%s), every chunk stamped on arrival; "
                    "prompts as token ids below %d, a fixed output length (%s); %s\n",
                    w->request, (int)ep->vocab, w->length, w->tokens);
}

void ib__endpoint_server_timings_text(ib__sbuf *b, const ib_endpoint_result *ep, const ib_gen_serve_result *r)
{
    const ib_stats *p = &ep->server_prompt_ms, *d = &ep->server_decode_ms_per_token;
    if (p->n == 0) return;
    char prompt[32], ttft[32];
    ib__sbuf_printf(b,
                    "server's own timings (its `timings`, %zu requests): prompt p50 %s against the client's "
                    "TTFT p50 %s (the rest: the wait for a slot, HTTP and the client)",
                    p->n, ib__fmt_ms(prompt, p->p50), ib__fmt_ms(ttft, r->ttft.p50));
    if (d->n > 0) {
        char per[32], tpot[32];
        ib__sbuf_printf(b, "; per output token after the first p50 %s against the client's TPOT p50 %s",
                        ib__fmt_ms(per, d->p50), ib__fmt_ms(tpot, r->tpot.p50));
    }
    ib__sbuf_printf(b, "\n");
}

/* A count the server may not have stated (-1): null. */
static void add_count(cJSON *o, const char *key, int64_t n)
{
    if (n >= 0)
        cJSON_AddNumberToObject(o, key, (double)n);
    else
        cJSON_AddNullToObject(o, key);
}

void ib__endpoint_server_timings_json(cJSON *endpoint, const ib_endpoint_result *ep)
{
    cJSON_AddStringToObject(endpoint, "api",
                            ib_endpoint_api_str(ep->api) ? ib_endpoint_api_str(ep->api) : "");
    cJSON *t = cJSON_AddObjectToObject(endpoint, "server_timings");
    ib__json_add_stats_or_null(t, "prompt_ms", &ep->server_prompt_ms);
    ib__json_add_stats_or_null(t, "decode_ms_per_token", &ep->server_decode_ms_per_token);
}

void ib__endpoint_request_timings_json(cJSON *o, const ib_endpoint_request *q)
{
    ib__json_add_number(o, "server_prompt_ms", q->server_prompt_ms);
    ib__json_add_number(o, "server_predicted_ms", q->server_predicted_ms);
    add_count(o, "server_prompt_n", q->server_prompt_n);
    add_count(o, "server_cache_n", q->server_cache_n);
    add_count(o, "id_tokens", q->id_tokens);
}
