/* A generative model served over HTTP as CSV (docs/serve-endpoint.md,
 * "The result"): the row per request of gen_serve_csv.c, with the
 * endpoint's own cells of that request after the figures, named as the
 * JSON's `endpoint.requests[]` names them: its send and the client's
 * lateness, the HTTP status and the failure's cause, the server's usage,
 * the tokens the chunks carried, the chunks, and the tokens of each chunk
 * in one cell ("3;3;1": a list in a cell, as a row is one request), and
 * the server's own timings where it states them (llama-server's). */
#include "report/printer.h"

void ib__endpoint_csv_header(ib__sbuf *b)
{
    ib__sbuf_printf(
        b, ",sent_ms,lateness_ms,http_status,failure,usage_tokens,usage_prompt_tokens,"
           "chunk_tokens,tokens_assumed,chunks,chunk_tokens_each,server_prompt_ms,server_predicted_ms,"
           "server_prompt_n,server_cache_n,id_tokens");
}

/* A count the server may not have stated (-1): an empty cell. */
static void count_cell(ib__sbuf *b, int64_t n)
{
    if (n < 0)
        ib__sbuf_printf(b, ",");
    else
        ib__sbuf_printf(b, ",%lld", (long long)n);
}

void ib__endpoint_csv_cells(ib__sbuf *b, const ib_endpoint_request *q)
{
    ib__csv_number(b, q->sent_ms);
    ib__csv_number(b, q->lateness_ms);
    ib__sbuf_printf(b, ",%ld,%s", q->http_status, ib_endpoint_failure_str(q->failure));
    count_cell(b, q->usage_tokens);
    count_cell(b, q->usage_prompt_tokens);
    ib__sbuf_printf(b, ",%lld,%s,%zu,", (long long)q->chunk_tokens, q->tokens_assumed ? "true" : "false",
                    q->n_chunks);
    for (size_t k = 0; k < q->n_chunks; k++)
        ib__sbuf_printf(b, "%s%d", k ? ";" : "", (int)q->chunk_token_counts[k]);
    ib__csv_number(b, q->server_prompt_ms);
    ib__csv_number(b, q->server_predicted_ms);
    count_cell(b, q->server_prompt_n);
    count_cell(b, q->server_cache_n);
    count_cell(b, q->id_tokens);
}
