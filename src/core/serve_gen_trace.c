/* Why the tail of a generative model served under load is what it is
 * (docs/serve-generative.md, "Why the tail"): the step trace read back
 * into each request's inter-token gaps and the steps that made them, and
 * summarized. A step decodes every request generating, so a request's
 * tokens after its first are the ends of the steps between its first
 * token and its last: the gaps, and whether each one's step carried a
 * prompt chunk, come from the trace alone (the JSON's too, for compare). */
#include "core/serve_gen_trace.h"

#include <math.h>
#include <stdlib.h>

/* The first of steps[0..n) that ended after t (n when none). */
static size_t first_ending_after(const ib_gen_serve_step *steps, size_t n, double t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (steps[mid].end_ms > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void ib__gen_serve_gap_steps(const ib_gen_serve_step *steps, size_t n, double first_ms, double end_ms,
                             size_t *lo, size_t *hi)
{
    *lo = first_ending_after(steps, n, first_ms);
    *hi = first_ending_after(steps, n, end_ms);
    if (*hi < *lo) *hi = *lo; /* an end before the first token: no gap */
}

double ib__gen_serve_gap_ms(const ib_gen_serve_step *steps, size_t lo, size_t k, double first_ms)
{
    return steps[k].end_ms - (k == lo ? first_ms : steps[k - 1].end_ms);
}

static bool completed(const ib_gen_serve_request *q) { return q->generated_tokens == q->spec.output_tokens; }

/* Whether the steps give every completed request its tokens after its
 * first (hi - lo of them), and how many gaps that makes. Checked before
 * anything is allocated: a document read back may claim any count. */
static bool gaps_counted(const ib_gen_serve_request *rs, size_t n, const ib_gen_serve_step *steps,
                         size_t n_steps, size_t *total)
{
    *total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!completed(&rs[i])) continue;
        size_t lo, hi;
        ib__gen_serve_gap_steps(steps, n_steps, rs[i].first_token_ms, rs[i].end_ms, &lo, &hi);
        if (hi - lo != (size_t)rs[i].spec.output_tokens - 1) return false;
        *total += hi - lo;
    }
    return true;
}

ib_status ib__gen_serve_gaps(const ib_gen_serve_request *rs, size_t n, const ib_gen_serve_step *steps,
                             size_t n_steps, double **gaps_ms, size_t *n_gaps)
{
    size_t total;
    *gaps_ms = NULL;
    *n_gaps = 0;
    if (!gaps_counted(rs, n, steps, n_steps, &total)) return IB_ERR_INVALID_ARG;
    if (total == 0) return IB_OK;
    double *g = malloc(total * sizeof *g);
    if (!g) return IB_ERR_NO_MEMORY;
    for (size_t i = 0; i < n; i++) {
        const ib_gen_serve_request *q = &rs[i];
        if (!completed(q)) continue;
        size_t lo, hi;
        ib__gen_serve_gap_steps(steps, n_steps, q->first_token_ms, q->end_ms, &lo, &hi);
        for (size_t k = lo; k < hi; k++)
            g[(*n_gaps)++] = ib__gen_serve_gap_ms(steps, lo, k, q->first_token_ms);
    }
    *gaps_ms = g;
    return IB_OK;
}

static double share(double part, double whole) { return whole > 0 ? part / whole : NAN; }

/* The gaps: how many, how many of a step with a chunk, and the same of
 * those at or above the ITL p99. */
static ib_status gap_tail(const ib_gen_serve_result *r, ib_gen_serve_tail *t)
{
    double *gaps = NULL;
    size_t n = 0;
    IB_TRY(ib__gen_serve_gaps(r->requests, r->n_requests, r->steps, r->n_steps, &gaps, &n));
    ib_stats st = { 0 };
    if (n > 0 && ib_stats_compute(gaps, n, &st) != IB_OK) n = 0;
    t->itl_p99_ms = n > 0 ? st.p99 : NAN;
    size_t at = 0; /* the gaps are in ib__gen_serve_gaps' order: request after request */
    for (size_t i = 0; i < r->n_requests && n > 0; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        if (!completed(q)) continue;
        size_t lo, hi;
        ib__gen_serve_gap_steps(r->steps, r->n_steps, q->first_token_ms, q->end_ms, &lo, &hi);
        for (size_t k = lo; k < hi; k++, at++) {
            bool chunked = r->steps[k].prefill_tokens > 0, tail = gaps[at] >= st.p99;
            t->gaps++;
            t->gaps_chunked += chunked;
            t->tail_gaps += tail;
            t->tail_gaps_chunked += tail && chunked;
        }
    }
    free(gaps);
    return IB_OK;
}

/* The decode time of request q spent in steps with a chunk, and all of it. */
static void decode_time(const ib_gen_serve_result *r, const ib_gen_serve_request *q, double *chunked,
                        double *all)
{
    size_t lo, hi;
    ib__gen_serve_gap_steps(r->steps, r->n_steps, q->first_token_ms, q->end_ms, &lo, &hi);
    for (size_t k = lo; k < hi; k++) {
        double gap = ib__gen_serve_gap_ms(r->steps, lo, k, q->first_token_ms);
        *all += gap;
        if (r->steps[k].prefill_tokens > 0) *chunked += gap;
    }
}

/* TPOT's tail: the decode time in steps with a chunk, of every request
 * and of those at or above the TPOT p99. */
static void tpot_tail(const ib_gen_serve_result *r, ib_gen_serve_tail *t)
{
    double chunked = 0, all = 0, tail_chunked = 0, tail_all = 0;
    t->tpot_p99_ms = r->tpot.n ? r->tpot.p99 : NAN;
    for (size_t i = 0; i < r->n_requests && r->tpot.n; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        if (!completed(q) || q->spec.output_tokens < 2) continue;
        bool tail = q->tpot_ms >= r->tpot.p99;
        double c = 0, a = 0;
        decode_time(r, q, &c, &a);
        chunked += c, all += a;
        if (tail) tail_chunked += c, tail_all += a, t->tail_requests++;
    }
    t->decode_chunked_share = share(chunked, all);
    t->tail_decode_chunked_share = share(tail_chunked, tail_all);
}

/* TTFT's parts: the prefill's distribution, the wait's share of TTFT of
 * every request and of those at or above the TTFT p99. */
static ib_status ttft_tail(const ib_gen_serve_result *r, ib_gen_serve_tail *t)
{
    double *prefill = malloc((r->n_requests ? r->n_requests : 1) * sizeof *prefill);
    if (!prefill) return IB_ERR_NO_MEMORY;
    double queue = 0, ttft = 0, tail_queue = 0, tail_ttft = 0;
    size_t n = 0;
    t->ttft_p99_ms = r->ttft.n ? r->ttft.p99 : NAN;
    for (size_t i = 0; i < r->n_requests && r->ttft.n; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        if (!completed(q)) continue;
        prefill[n++] = q->first_token_ms - q->admitted_ms;
        queue += q->queue_ms, ttft += q->ttft_ms;
        if (q->ttft_ms >= r->ttft.p99)
            tail_queue += q->queue_ms, tail_ttft += q->ttft_ms, t->ttft_tail_requests++;
    }
    if (n == 0 || ib_stats_compute(prefill, n, &t->prefill) != IB_OK) t->prefill = (ib_stats){ 0 };
    free(prefill);
    t->ttft_queue_share = share(queue, ttft);
    t->tail_ttft_queue_share = share(tail_queue, tail_ttft);
    return IB_OK;
}

/* The KV cache: cells held after each step, weighted by its duration. */
static void kv_occupancy(const ib_gen_serve_result *r, ib_gen_serve_tail *t)
{
    double weighted = 0, time = 0, most = NAN;
    for (size_t i = 0; i < r->n_steps; i++) {
        double d = r->steps[i].end_ms - r->steps[i].start_ms;
        weighted += d * r->steps[i].kv_cells;
        time += d;
        most = isnan(most) || r->steps[i].kv_cells > most ? r->steps[i].kv_cells : most;
    }
    t->kv_cells_mean = share(weighted, time);
    t->kv_cells_max = most;
    t->kv_capacity_cells = (double)r->slots * r->ctx_per_slot;
}

ib_status ib__gen_serve_tail(const ib_gen_serve_result *r, ib_gen_serve_tail *out)
{
    *out = (ib_gen_serve_tail){ 0 };
    IB_TRY(gap_tail(r, out));
    tpot_tail(r, out);
    IB_TRY(ttft_tail(r, out));
    kv_occupancy(r, out);
    return IB_OK;
}
