/* The figures of a generative model served under load, every one from
 * the scheduled arrival (docs/serve-generative.md): per request the wait
 * for a slot, TTFT, TPOT and end-to-end; their distributions and the
 * inter-token gaps'; tokens over the time from the first arrival to the
 * last completion; goodput at the targets given. */
#include "core/serve_gen.h"
#include "core/serve_gen_trace.h"

#include <math.h>
#include <stdlib.h>

static bool completed(const ib_gen_serve_request *r) { return r->generated_tokens == r->spec.output_tokens; }

void ib__gen_serve_request_figures(const ib_gen_serve_config *c, ib_gen_serve_request *r)
{
    double at = r->spec.arrival_ms;
    r->queue_ms = r->admitted_ms - at;
    r->ttft_ms = r->first_token_ms - at;
    r->e2e_ms = r->end_ms - at;
    int32_t n = r->spec.output_tokens;
    r->tpot_ms = n > 1 ? (r->end_ms - r->first_token_ms) / (n - 1) : NAN;
    bool targets = c->slo_ttft_ms > 0 || c->slo_tpot_ms > 0 || c->slo_e2e_ms > 0;
    r->met = targets && completed(r) && !(c->slo_ttft_ms > 0 && r->ttft_ms > c->slo_ttft_ms) &&
             !(c->slo_tpot_ms > 0 && n > 1 && r->tpot_ms > c->slo_tpot_ms) &&
             !(c->slo_e2e_ms > 0 && r->e2e_ms > c->slo_e2e_ms);
}

/* ib_stats_compute of x[0..n), or an empty summary (n 0) when none. */
static void summarize(const double *x, size_t n, ib_stats *out)
{
    if (n == 0 || ib_stats_compute(x, n, out) != IB_OK) *out = (ib_stats){ 0 };
}

/* The distributions of the completed requests' figures. */
static ib_status distributions(ib_gen_serve_result *r)
{
    size_t n = r->n_requests ? r->n_requests : 1;
    double *ttft = malloc(n * sizeof *ttft), *queue = malloc(n * sizeof *queue),
           *tpot = malloc(n * sizeof *tpot), *e2e = malloc(n * sizeof *e2e);
    ib_status st = ttft && queue && tpot && e2e ? IB_OK : IB_ERR_NO_MEMORY;
    size_t k = 0, k_tpot = 0;
    for (size_t i = 0; st == IB_OK && i < r->n_requests; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        if (!completed(q)) continue;
        ttft[k] = q->ttft_ms;
        queue[k] = q->queue_ms;
        e2e[k++] = q->e2e_ms;
        if (q->spec.output_tokens > 1) tpot[k_tpot++] = q->tpot_ms;
    }
    if (st == IB_OK) {
        summarize(ttft, k, &r->ttft);
        summarize(queue, k, &r->queue);
        summarize(tpot, k_tpot, &r->tpot);
        summarize(e2e, k, &r->e2e);
    }
    free(ttft);
    free(queue);
    free(tpot);
    free(e2e);
    return st;
}

/* Tokens and requests over the span from the first arrival to the last
 * completion (LoadGen's tokens/s: never a mean of per-request rates). */
static void rates(const ib_gen_serve_config *c, ib_gen_serve_result *r)
{
    double last = -INFINITY, out_tokens = 0, all_tokens = 0;
    r->n_completed = r->n_good = 0;
    r->cached_tokens = 0;
    for (size_t i = 0; i < r->n_requests; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        r->cached_tokens += q->cached_tokens;
        if (!completed(q)) continue;
        r->n_completed++;
        r->n_good += q->met;
        last = fmax(last, q->end_ms);
        out_tokens += q->spec.output_tokens;
        all_tokens += (double)q->spec.prompt_tokens + q->spec.output_tokens;
    }
    r->span_ms = r->n_completed > 0 ? last - r->requests[0].spec.arrival_ms : NAN;
    double per_s = r->span_ms > 0 ? 1000.0 / r->span_ms : NAN;
    r->achieved_rate = (double)r->n_completed * per_s;
    r->output_tokens_per_s = out_tokens * per_s;
    r->total_tokens_per_s = all_tokens * per_s;
    bool targets = c->slo_ttft_ms > 0 || c->slo_tpot_ms > 0 || c->slo_e2e_ms > 0;
    r->goodput_rate = targets ? (double)r->n_good * per_s : NAN;
    r->good_share = targets && r->n_completed > 0 ? (double)r->n_good / (double)r->n_completed : NAN;
}

ib_status ib__gen_serve_figures(const ib_gen_serve_config *cfg, const double *itl_ms, size_t n_itl,
                                double offered_rate_per_s, ib_gen_serve_result *out)
{
    for (size_t i = 0; i < out->n_requests; i++) ib__gen_serve_request_figures(cfg, &out->requests[i]);
    summarize(itl_ms, n_itl, &out->itl);
    out->offered_rate = offered_rate_per_s;
    rates(cfg, out);
    IB_TRY(distributions(out));
    return ib__gen_serve_tail(out, &out->tail); /* reads the distributions' p99s */
}
