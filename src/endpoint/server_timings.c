/* The server's own timings beside the client's figures
 * (docs/serve-endpoint.md, "The API"): llama-server states, in its last
 * event, how long it took over the request's prompt (prompt_ms) and over
 * its output from the first token to the last (predicted_ms). Set against
 * the client's TTFT and TPOT, the difference is what the server does not
 * time: the wait for a slot, HTTP and the client's reading. */
#include "endpoint/endpoint.h"

#include <math.h>
#include <stdlib.h>

/* The statistics of x[0..n) into *out (all 0 when n is 0). */
static ib_status stats_of(const double *x, size_t n, ib_stats *out)
{
    *out = (ib_stats){ 0 };
    return n > 0 ? ib_stats_compute(x, n, out) : IB_OK;
}

ib_status ib__ep_server_timings(ib_endpoint_result *ep)
{
    size_t cap = ep->n_requests ? ep->n_requests : 1;
    double *prompt_ms = malloc(cap * sizeof *prompt_ms), *per_token_ms = malloc(cap * sizeof *per_token_ms);
    size_t n_prompt = 0, n_per_token = 0;
    ib_status st = prompt_ms && per_token_ms ? IB_OK : IB_ERR_NO_MEMORY;
    for (size_t i = 0; st == IB_OK && i < ep->n_requests; i++) {
        const ib_endpoint_request *q = &ep->requests[i];
        if (q->failure != IB_EP_OK) continue;
        if (!isnan(q->server_prompt_ms)) prompt_ms[n_prompt++] = q->server_prompt_ms;
        /* The first token comes of the prompt: the output's time is the steps of the others. */
        if (!isnan(q->server_predicted_ms) && q->usage_tokens > 1)
            per_token_ms[n_per_token++] = q->server_predicted_ms / (double)(q->usage_tokens - 1);
    }
    if (st == IB_OK) st = stats_of(prompt_ms, n_prompt, &ep->server_prompt_ms);
    if (st == IB_OK) st = stats_of(per_token_ms, n_per_token, &ep->server_decode_ms_per_token);
    free(prompt_ms);
    free(per_token_ms);
    return st;
}
