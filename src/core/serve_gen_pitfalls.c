/* What each classic mistake of serving benchmarks reports on the user's
 * model, beside the correct figure of the run just measured
 * (docs/serve-generative.md, "Pitfalls"). Two rows are read off that run
 * (TTFT from admission, the mean of per-request TPOT): the same data on
 * both sides, exact. Four are measured: the same requests all at time 0,
 * every prompt one prompt with the prefix cache on, one sequence decoding
 * alone (generate's TPOT), and no warm-up on a context made cold again
 * (last, since it leaves the workload cold). Each measured row is read by
 * compare's interval of its samples against the run's (pitfall_reading.c). */
#include "core/pitfall_reading.h"
#include "core/serve_gen.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct row_text {
    const char *name, *figure;
    ib__pitfall_texts why;
} row_text;

static const row_text texts[IB_GEN_SERVE_PITFALL_COUNT] = {
    [IB_GEN_SERVE_PITFALL_ACTUAL_START] = { "TTFT from admission",
                                            "TTFT p99 ms",
                                            { -1,
                                              "timed from when the engine took the request, not when it was "
                                              "due: the wait for a slot vanishes from the tail exactly when "
                                              "the engine falls behind (coordinated omission)",
                                              NULL,
                                              "no request waited long for a slot at this rate: timing from "
                                              "admission hides nothing measurable here (it does nearer "
                                              "saturation)",
                                              NULL, NULL } },
    [IB_GEN_SERVE_PITFALL_ALL_AT_ONCE] = { "every request at time 0",
                                           "TPOT p50 ms",
                                           { 1,
                                             "a rate of infinity (vLLM bench serve's default) fills every "
                                             "slot "
                                             "from the first step: each token is decoded in the fullest "
                                             "batch, "
                                             "beside prompt chunks, the TPOT of saturation and not of the "
                                             "rate "
                                             "asked",
                                             NULL,
                                             "no difference beyond the noise of the two runs: the engine is "
                                             "about as full at this rate as with every request at once (or "
                                             "too "
                                             "few requests tell them apart)",
                                             NULL, NULL } },
    [IB_GEN_SERVE_PITFALL_NO_WARMUP] = { "no warm-up",
                                         "TTFT mean ms",
                                         { 1, "a fresh context's first requests pay for buffers, kernels and "
                                              "caches" } },
    [IB_GEN_SERVE_PITFALL_MEAN_TPOT] = { "mean of per-request TPOT",
                                         "TPOT ms",
                                         { 0,
                                           "each request's TPOT weighs the same whatever its tokens: the "
                                           "few tokens of short requests count as much as the many of long "
                                           "ones, where decode time over decode tokens weighs each token "
                                           "once",
                                           NULL,
                                           "requests of equal output counts weigh alike either way: the mean "
                                           "of per-request TPOT is decode time over tokens here (not once "
                                           "lengths differ)",
                                           NULL, NULL } },
    [IB_GEN_SERVE_PITFALL_REPEATED_PROMPT] = { "a prompt repeated",
                                               "TTFT p50 ms",
                                               { -1,
                                                 "a seeded dataset that repeats its prompts lets the prefix "
                                                 "cache skip their prefill: a warm prefix no real traffic "
                                                 "has",
                                                 NULL,
                                                 "the prefill of these prompts is too small a part of the "
                                                 "TTFT for the prefix cache to show",
                                                 NULL, NULL } },
    [IB_GEN_SERVE_PITFALL_DECODE_ONLY] = { "decode-only TPOT",
                                           "TPOT p50 ms",
                                           { -1,
                                             "one sequence decoding alone (generate's TPOT, llama-bench's "
                                             "tg) "
                                             "shares no step with other requests' tokens or prompt chunks: "
                                             "under load each token waits for the whole batch",
                                             NULL,
                                             "a step of the whole batch costs what a step of one sequence "
                                             "does here: decoding alone reads the same",
                                             NULL, NULL } },
};

/* No interval for the no-warm-up row: its figure is a mean (the cold
 * requests' weight in it is the mistake), compare's interval is of medians. */
static const char *const mean_no_interval =
    "the figure is a mean (the cold requests' weight in it is the mistake), compare's interval is of medians";

static void set_figures(ib_gen_serve_pitfall_row *row, double wrong, double correct)
{
    row->wrong = wrong;
    row->correct = correct;
    row->error_pct = (wrong - correct) / correct * 100;
}

static void not_applicable(ib_gen_serve_pitfall_row *row, const char *why)
{
    row->applies = false;
    row->not_applicable = why;
}

static ib_status settle(ib_gen_serve_pitfall_row *row, ib_status st, const ib_error *why, ib_error *err)
{
    row->status = st;
    if (st == IB_OK) return IB_OK;
    ib__strlcpy(row->error, why->message, sizeof row->error);
    if (st != IB_ERR_INTERRUPTED) return IB_OK;
    if (err) *err = *why;
    return st;
}

static bool completed(const ib_gen_serve_request *q) { return q->generated_tokens == q->spec.output_tokens; }

typedef enum figure { TTFT, TPOT, TTFT_FROM_ADMISSION } figure;

/* The completed requests' figure f into out (room for r->n_requests; TPOT:
 * requests of more than one token); how many. */
static size_t samples(const ib_gen_serve_result *r, figure f, double *out)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_requests; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        if (!completed(q) || (f == TPOT && q->spec.output_tokens < 2)) continue;
        out[n++] = f == TTFT ? q->ttft_ms : f == TPOT ? q->tpot_ms : q->first_token_ms - q->admitted_ms;
    }
    return n;
}

static double median(const double *x, size_t n)
{
    ib_stats st;
    return n > 0 && ib_stats_compute(x, n, &st) == IB_OK ? st.p50 : NAN;
}

/* A measured row: the median of the mistake's samples against the run's,
 * read by compare's interval. */
static void median_row(ib_gen_serve_pitfall_row *row, const double *wrong, size_t n_wrong,
                       const double *correct, size_t n_correct)
{
    set_figures(row, median(wrong, n_wrong), median(correct, n_correct));
    row->reading =
        ib__pitfall_interval(correct, n_correct, wrong, n_wrong, row->error_ci95_pct, &row->no_interval);
}

/* ------------------------------------------------------------------------ */
/* Rows read off the run                                                     */
/* ------------------------------------------------------------------------ */

/* TTFT from admission against TTFT from the schedule, at the p99: the
 * tail is where the wait for a slot is. */
static void actual_start(const ib_gen_serve_result *r, double *scratch, ib_gen_serve_pitfall_row *row)
{
    size_t n = samples(r, TTFT_FROM_ADMISSION, scratch);
    ib_stats st;
    if (n == 0 || ib_stats_compute(scratch, n, &st) != IB_OK) {
        not_applicable(row, "no request completed");
        return;
    }
    set_figures(row, st.p99, r->ttft.p99);
    row->reading = ib__pitfall_exact(row->error_pct, row->error_ci95_pct, &row->no_interval);
}

/* The mean of per-request TPOT against decode time over decode tokens
 * (the span of each request's tokens after its first, summed, over their
 * count): the TPOT a token sees. */
static void mean_tpot(const ib_gen_serve_result *r, ib_gen_serve_pitfall_row *row)
{
    double decode_ms = 0, tokens = 0;
    for (size_t i = 0; i < r->n_requests; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        if (!completed(q) || q->spec.output_tokens < 2) continue;
        decode_ms += q->end_ms - q->first_token_ms;
        tokens += q->spec.output_tokens - 1;
    }
    if (tokens == 0) {
        not_applicable(row, "no request generated more than one token");
        return;
    }
    set_figures(row, r->tpot.mean, decode_ms / tokens);
    row->reading = ib__pitfall_exact(row->error_pct, row->error_ci95_pct, &row->no_interval);
}

/* ------------------------------------------------------------------------ */
/* Rows measured                                                             */
/* ------------------------------------------------------------------------ */

/* The run of c2 (a copy of the user's settings with the mistake in it),
 * its figure f's samples against the user's run's. */
static ib_status served_row(ib__gen *g, const ib_gen_serve_config *c2, const ib_gen_serve_result *r, figure f,
                            double *scratch, ib_gen_serve_pitfall_row *row, ib_error *err)
{
    ib_gen_serve_result w;
    ib_error why = { { 0 } };
    ib_status st = ib_measure_gen_serve(g, c2, &w, &why);
    if (st == IB_OK) {
        double *wrong = malloc((w.n_requests ? w.n_requests : 1) * sizeof *wrong);
        st = wrong ? IB_OK : ib__fail(&why, IB_ERR_NO_MEMORY, "out of memory");
        if (wrong) median_row(row, wrong, samples(&w, f, wrong), scratch, samples(r, f, scratch));
        free(wrong);
    }
    ib_gen_serve_result_free(&w);
    return settle(row, st, &why, err);
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
    ib_status st = served_row(g, &c2, r, TPOT, scratch, row, err);
    free(at0);
    return st;
}

/* Every prompt the same prompt (the shared prefix all of the shortest),
 * the prefix cache on. */
static ib_status repeated_prompt(ib__gen *g, const ib_gen_serve_config *c, const ib_gen_serve_result *r,
                                 double *scratch, ib_gen_serve_pitfall_row *row, ib_error *err)
{
    if (c->shared_prefix > 0) {
        not_applicable(row, "the run itself shares a prefix between its prompts (--shared-prefix)");
        return IB_OK;
    }
    ib_gen_serve_config c2 = plain(c);
    c2.shared_prefix = r->requests[0].spec.prompt_tokens;
    for (size_t i = 1; i < r->n_requests; i++)
        if (r->requests[i].spec.prompt_tokens < c2.shared_prefix)
            c2.shared_prefix = r->requests[i].spec.prompt_tokens;
    c2.prefix_cache = true;
    return served_row(g, &c2, r, TTFT, scratch, row, err);
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
        not_applicable(row, "the requests generate one token each: no step to time");
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
    if (st == IB_OK) median_row(row, step_ms, n, scratch, samples(r, TPOT, scratch));
    free(step_ms);
    return settle(row, st, &why, err);
}

/* The same settings with no warm-up, on a context made cold again. */
static ib_status no_warmup(ib__gen *g, const ib_gen_serve_config *c, const ib_gen_serve_result *r,
                           ib_gen_serve_pitfall_row *row, ib_error *err)
{
    if (!g->ops->reopen) {
        not_applicable(row, "the backend cannot make its context cold again");
        return IB_OK;
    }
    if (c->warmup_requests == 0) {
        not_applicable(row, "the run itself has no warm-up (--warmup-requests 0)");
        return IB_OK;
    }
    ib_gen_serve_config c2 = plain(c);
    c2.warmup_requests = 0;
    ib_gen_serve_result w;
    ib_error why = { { 0 } };
    ib_status st = g->ops->reopen(g, &why);
    if (st == IB_OK) st = ib_measure_gen_serve(g, &c2, &w, &why);
    if (st == IB_OK) {
        set_figures(row, w.ttft.mean, r->ttft.mean);
        row->reading = IB_READING_NO_INTERVAL;
        row->no_interval = mean_no_interval;
        ib_gen_serve_result_free(&w);
    }
    return settle(row, st, &why, err);
}

static void explain_rows(ib_gen_serve_pitfall_row *rows, bool gpu)
{
    for (int k = 0; k < IB_GEN_SERVE_PITFALL_COUNT; k++)
        rows[k].why = ib__pitfall_why(&texts[k].why, gpu, rows[k].reading);
}

ib_status ib__gen_serve_pitfalls(ib__gen *g, const ib_gen_serve_config *c, ib_gen_serve_result *r,
                                 ib_error *err)
{
    ib_gen_serve_pitfall_row *rows = r->pitfalls;
    r->has_pitfalls = true;
    for (int k = 0; k < IB_GEN_SERVE_PITFALL_COUNT; k++)
        rows[k] = (ib_gen_serve_pitfall_row){ .kind = (ib_gen_serve_pitfall)k,
                                              .name = texts[k].name,
                                              .why = texts[k].why.effect_gpu,
                                              .figure = texts[k].figure,
                                              .applies = true,
                                              .wrong = NAN,
                                              .correct = NAN,
                                              .error_pct = NAN,
                                              .error_ci95_pct = { NAN, NAN } };
    double *scratch = malloc((r->n_requests ? r->n_requests : 1) * sizeof *scratch);
    IB_FAIL_IF(!scratch, err, IB_ERR_NO_MEMORY, "out of memory for the pitfalls");
    bool gpu = r->info.device != IB_DEVICE_CPU;
    actual_start(r, scratch, &rows[IB_GEN_SERVE_PITFALL_ACTUAL_START]);
    mean_tpot(r, &rows[IB_GEN_SERVE_PITFALL_MEAN_TPOT]);
    explain_rows(rows, gpu); /* the rows an interruption leaves keep these */
    ib_status st = repeated_prompt(g, c, r, scratch, &rows[IB_GEN_SERVE_PITFALL_REPEATED_PROMPT], err);
    if (st == IB_OK) st = all_at_once(g, c, r, scratch, &rows[IB_GEN_SERVE_PITFALL_ALL_AT_ONCE], err);
    if (st == IB_OK) st = decode_only(g, r, scratch, &rows[IB_GEN_SERVE_PITFALL_DECODE_ONLY], err);
    if (st == IB_OK) st = no_warmup(g, c, r, &rows[IB_GEN_SERVE_PITFALL_NO_WARMUP], err);
    explain_rows(rows, gpu);
    free(scratch);
    return st;
}
