/* What each classic mistake of serving benchmarks reports on the user's
 * model, beside the correct figure of the run just measured
 * (docs/serve-generative.md, "Pitfalls"). Two rows are read off that run
 * (TTFT from admission, the mean of per-request TPOT): the same data on
 * both sides, exact. Four are measured: the same requests all at time 0,
 * every prompt one prompt with the prefix cache on, one sequence decoding
 * alone (generate's TPOT), and no warm-up on a context made cold again
 * (last, since it leaves the workload cold). Each measured row is read by
 * compare's interval of its samples against the run's (pitfall_reading.c). */
#include "core/serve_gen.h"
#include "core/serve_gen_pitfall_rows.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Rows measured                                                             */
/* ------------------------------------------------------------------------ */

/* The run of c2 (a copy of the user's settings with the mistake in it),
 * its figure f's samples against the user's run's. */
static ib_status served_row(ib__gen *g, const ib_gen_serve_config *c2, const ib_gen_serve_result *r,
                            ib__serve_figure f, double *scratch, ib_gen_serve_pitfall_row *row, ib_error *err)
{
    ib_gen_serve_result w;
    ib_error why = { { 0 } };
    ib_status st = ib_measure_gen_serve(g, c2, &w, &why);
    if (st == IB_OK) {
        double *wrong = malloc((w.n_requests ? w.n_requests : 1) * sizeof *wrong);
        st = wrong ? IB_OK : ib__fail(&why, IB_ERR_NO_MEMORY, "out of memory");
        if (wrong)
            ib__serve_pitfall_median_row(row, wrong, ib__serve_pitfall_samples(&w, f, wrong), scratch,
                                         ib__serve_pitfall_samples(r, f, scratch));
        free(wrong);
    }
    ib_gen_serve_result_free(&w);
    return ib__serve_pitfall_settle(row, st, &why, err);
}

/* The user's settings, the pitfalls not asked again. */
static ib_gen_serve_config plain(const ib_gen_serve_config *c)
{
    ib_gen_serve_config c2 = *c;
    c2.pitfalls = false;
    return c2;
}

/* The same requests (lengths, warm-up), every one arriving at 0. */
static ib_status all_at_once(ib__gen *g, const ib_gen_serve_config *c, const ib_gen_serve_result *r,
                             double *scratch, ib_gen_serve_pitfall_row *row, ib_error *err)
{
    ib_gen_request_spec *at0 = malloc(r->n_requests * sizeof *at0);
    IB_FAIL_IF(!at0, err, IB_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < r->n_requests; i++)
        at0[i] =
            (ib_gen_request_spec){ 0, r->requests[i].spec.prompt_tokens, r->requests[i].spec.output_tokens };
    ib_gen_serve_config c2 = plain(c);
    c2.arrivals = IB_ARRIVALS_TRACE;
    c2.trace = at0;
    c2.n_trace = r->n_requests;
    ib_status st = served_row(g, &c2, r, IB__SERVE_TPOT, scratch, row, err);
    free(at0);
    return st;
}

/* Every prompt the same prompt (the shared prefix all of the shortest),
 * the prefix cache on. */
static ib_status repeated_prompt(ib__gen *g, const ib_gen_serve_config *c, const ib_gen_serve_result *r,
                                 double *scratch, ib_gen_serve_pitfall_row *row, ib_error *err)
{
    if (c->shared_prefix > 0) {
        ib__serve_pitfall_not_applicable(
            row, "the run itself shares a prefix between its prompts (--shared-prefix)");
        return IB_OK;
    }
    ib_gen_serve_config c2 = plain(c);
    c2.shared_prefix = r->requests[0].spec.prompt_tokens;
    for (size_t i = 1; i < r->n_requests; i++)
        if (r->requests[i].spec.prompt_tokens < c2.shared_prefix)
            c2.shared_prefix = r->requests[i].spec.prompt_tokens;
    c2.prefix_cache = true;
    return served_row(g, &c2, r, IB__SERVE_TTFT, scratch, row, err);
}

/* Steps of one sequence decoding alone the row times at least (the
 * requests' own lengths, as many requests as it takes). */
#define DECODE_ONLY_STEPS 32

/* Request q decoding alone as generate times it: its prompt prefilled
 * (untimed), then its tokens after the first one step at a time, each
 * step timed with its synchronize, into step_ms[*n...]. */
static ib_status decode_alone(ib__gen *g, const ib_gen_request_spec *q, double *step_ms, size_t *n,
                              ib_error *why)
{
    ib_status st = g->ops->clear(g, why);
    if (st == IB_OK) st = g->ops->prefill(g, 0, 0, q->prompt_tokens, why);
    if (st == IB_OK) st = g->ops->synchronize(g, why);
    for (int32_t k = 0; st == IB_OK && k < q->output_tokens - 1; k++, (*n)++) {
        double t0 = ib__gen_now_ms(g);
        st = g->ops->step(g, 1, q->prompt_tokens + k, why);
        if (st == IB_OK) st = g->ops->synchronize(g, why);
        step_ms[*n] = ib__gen_now_ms(g) - t0;
    }
    return st;
}

/* The requests in order, each decoding alone, until DECODE_ONLY_STEPS
 * steps are timed; their median against the run's TPOT. */
static ib_status decode_only(ib__gen *g, const ib_gen_serve_result *r, double *scratch,
                             ib_gen_serve_pitfall_row *row, ib_error *err)
{
    size_t cap = 0, used = 0;
    for (; used < r->n_requests && cap < DECODE_ONLY_STEPS; used++)
        cap += (size_t)r->requests[used].spec.output_tokens - 1;
    if (cap == 0) {
        ib__serve_pitfall_not_applicable(row, "the requests generate one token each: no step to time");
        return IB_OK;
    }
    double *step_ms = malloc(cap * sizeof *step_ms);
    IB_FAIL_IF(!step_ms, err, IB_ERR_NO_MEMORY, "out of memory");
    size_t n = 0;
    ib_error why = { { 0 } };
    ib_status st = IB_OK;
    for (size_t i = 0; i < used && st == IB_OK; i++)
        st = decode_alone(g, &r->requests[i].spec, step_ms, &n, &why);
    if (st == IB_OK) st = g->ops->clear(g, &why); /* no sequence left behind */
    if (st == IB_OK)
        ib__serve_pitfall_median_row(row, step_ms, n, scratch,
                                     ib__serve_pitfall_samples(r, IB__SERVE_TPOT, scratch));
    free(step_ms);
    return ib__serve_pitfall_settle(row, st, &why, err);
}

/* The same settings with no warm-up, on a context made cold again. */
static ib_status no_warmup(ib__gen *g, const ib_gen_serve_config *c, const ib_gen_serve_result *r,
                           ib_gen_serve_pitfall_row *row, ib_error *err)
{
    if (!g->ops->reopen) {
        ib__serve_pitfall_not_applicable(row, "the backend cannot make its context cold again");
        return IB_OK;
    }
    if (c->warmup_requests == 0) {
        ib__serve_pitfall_not_applicable(row, "the run itself has no warm-up (--warmup-requests 0)");
        return IB_OK;
    }
    ib_gen_serve_config c2 = plain(c);
    c2.warmup_requests = 0;
    ib_gen_serve_result w;
    ib_error why = { { 0 } };
    ib_status st = g->ops->reopen(g, &why);
    if (st == IB_OK) st = ib_measure_gen_serve(g, &c2, &w, &why);
    if (st == IB_OK) {
        ib__serve_pitfall_set(row, w.ttft.mean, r->ttft.mean);
        row->reading = IB_READING_NO_INTERVAL;
        row->no_interval = ib__serve_pitfall_mean_no_interval;
        ib_gen_serve_result_free(&w);
    }
    return ib__serve_pitfall_settle(row, st, &why, err);
}

ib_status ib__gen_serve_pitfalls(ib__gen *g, const ib_gen_serve_config *c, ib_gen_serve_result *r,
                                 ib_error *err)
{
    ib_gen_serve_pitfall_row *rows = r->pitfalls;
    ib__serve_pitfall_rows_init(r, IB__SERVE_IN_PROCESS);
    double *scratch = malloc((r->n_requests ? r->n_requests : 1) * sizeof *scratch);
    IB_FAIL_IF(!scratch, err, IB_ERR_NO_MEMORY, "out of memory for the pitfalls");
    bool gpu = r->info.device != IB_DEVICE_CPU;
    ib__serve_pitfall_actual_start(r, scratch, &rows[IB_GEN_SERVE_PITFALL_ACTUAL_START]);
    ib__serve_pitfall_mean_tpot(r, &rows[IB_GEN_SERVE_PITFALL_MEAN_TPOT]);
    ib__serve_pitfall_explain(rows, IB__SERVE_IN_PROCESS,
                              gpu); /* the rows an interruption leaves keep these */
    ib_status st = repeated_prompt(g, c, r, scratch, &rows[IB_GEN_SERVE_PITFALL_REPEATED_PROMPT], err);
    if (st == IB_OK) st = all_at_once(g, c, r, scratch, &rows[IB_GEN_SERVE_PITFALL_ALL_AT_ONCE], err);
    if (st == IB_OK) st = decode_only(g, r, scratch, &rows[IB_GEN_SERVE_PITFALL_DECODE_ONLY], err);
    if (st == IB_OK) st = no_warmup(g, c, r, &rows[IB_GEN_SERVE_PITFALL_NO_WARMUP], err);
    if (st != IB_OK) ib__serve_pitfall_unreached(rows, st, r);
    ib__serve_pitfall_explain(rows, IB__SERVE_IN_PROCESS, gpu);
    free(scratch);
    return st;
}
