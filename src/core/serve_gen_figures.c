/* The figures of a generative model served under load, every one from
 * the scheduled arrival (docs/serve-generative.md): per request the wait
 * for a slot, TTFT, TPOT and end-to-end; their distributions and the
 * inter-token gaps'; tokens over the time from the first arrival to the
 * last completion; goodput at the targets given. */
#include "core/serve_gen.h"
#include "core/serve_gen_trace.h"
#include "core/stats.h"

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

/* Requests a second over their own span: (n - 1) / (last - first); NaN
 * for fewer than 2, or a span of 0. */
static double rate_over_own_span(size_t n, double first_ms, double last_ms)
{
    return n > 1 && last_ms > first_ms ? (double)(n - 1) * 1000.0 / (last_ms - first_ms) : NAN;
}

/* The completions' rate over their span against the same requests'
 * arrivals over theirs (ib_gen_serve_result.pace). Both spans leave out
 * the end-to-end latency the achieved rate's span adds to the arrivals':
 * a server that keeps up completes as fast as requests come, whatever
 * each takes. Over the completed requests only: a rate a search ended
 * early is judged on those it served. */
static double pace(const ib_gen_serve_result *r)
{
    double arrived[2] = { INFINITY, -INFINITY }, ended[2] = { INFINITY, -INFINITY };
    for (size_t i = 0; i < r->n_requests; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        if (!completed(q)) continue;
        arrived[0] = fmin(arrived[0], q->spec.arrival_ms), arrived[1] = fmax(arrived[1], q->spec.arrival_ms);
        ended[0] = fmin(ended[0], q->end_ms), ended[1] = fmax(ended[1], q->end_ms);
    }
    return rate_over_own_span(r->n_completed, ended[0], ended[1]) /
           rate_over_own_span(r->n_completed, arrived[0], arrived[1]);
}

/* The median TTFT of the last quarter of the completed requests (in
 * schedule order) over that of the first (ib_gen_serve_result.ttft_growth);
 * NaN below 4 completed, or out of memory. */
static double ttft_growth(const ib_gen_serve_result *r)
{
    size_t q = r->n_completed / 4, n = 0;
    double *ttft = q > 0 ? malloc(r->n_completed * sizeof *ttft) : NULL;
    if (!ttft) return NAN;
    for (size_t i = 0; i < r->n_requests; i++)
        if (completed(&r->requests[i])) ttft[n++] = r->requests[i].ttft_ms;
    double first = ib__median_in_place(ttft, q), last = ib__median_in_place(ttft + n - q, q);
    free(ttft);
    return last / first;
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
    r->pace = pace(r);
    r->ttft_growth = ttft_growth(r);
    /* Never the achieved rate against the offered, which a short run
     * leaves short by about rate x end-to-end / requests however well the
     * server keeps up. */
    r->saturated = r->pace < IB_GEN_SERVE_SATURATED && r->ttft_growth > IB_GEN_SERVE_TTFT_GROWTH;
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
    /* The step trace summarized (it reads the distributions' p99s). Served
     * over HTTP (src/endpoint/) there is no trace, the server's steps
     * unseen: the summary of an empty one (every figure NaN or 0). */
    const ib_gen_serve_result none = { 0 };
    return ib__gen_serve_tail(out->n_steps > 0 || out->n_completed == 0 ? out : &none, &out->tail);
}
