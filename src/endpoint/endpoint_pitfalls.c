/* What each classic mistake of HTTP serving benchmarks reports on the
 * user's endpoint, beside the correct figure of the run just measured
 * (docs/serve-endpoint.md, "Pitfalls"), in the in-process rows (the same
 * row type, reading and printers: core/serve_gen_pitfall_rows.h). Three
 * are read off the run, exact: TTFT from each request's send, the gaps
 * between chunks taken for the gaps between tokens, the mean of
 * per-request TPOT. Two are measured by sending the schedule again: the
 * same seeded prompts a second time (first, while the server's prefix
 * cache holds them), then every request at time 0 (prompts of another
 * seed, so that the cache does not help it). One is measured before the
 * run, from the server as it started: the schedule sent cold, no warm-up
 * (ib_measure_endpoint_serve_pitfalls: a client cannot make a server
 * cold again, so the cold run comes first). */
#include "core/serve_gen_pitfall_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The prompts of the all-at-once run are drawn from the seed xor this:
 * prompts of their own, which the server has not cached. */
#define ALL_AT_ONCE_SEED 0x616c6c6174300aull
/* And the cold run's from the seed xor this: none of them is the run's. */
#define COLD_SEED 0x636f6c64ull

/* The gaps between consecutive chunks of the completed requests: their
 * mean against the run's ITL (the gaps between tokens, a chunk of k
 * tokens giving k - 1 gaps of 0). */
static void chunk_gaps(const ib_gen_serve_result *r, const ib_endpoint_result *ep,
                       ib_gen_serve_pitfall_row *row)
{
    double sum_ms = 0;
    size_t n = 0;
    for (size_t i = 0; i < ep->n_requests; i++) {
        const ib_endpoint_request *q = &ep->requests[i];
        if (q->failure != IB_EP_OK || q->n_chunks < 2) continue;
        sum_ms += q->chunk_ms[q->n_chunks - 1] - q->chunk_ms[0];
        n += q->n_chunks - 1;
    }
    if (n == 0 || r->itl.n == 0) {
        ib__serve_pitfall_not_applicable(row, "no completed request streamed more than one chunk");
        return;
    }
    ib__serve_pitfall_set(row, sum_ms / (double)n, r->itl.mean);
    row->reading = ib__pitfall_exact(row->error_pct, row->error_ci95_pct, &row->no_interval);
}

/* The schedule of c2 sent again (the user's settings with the mistake
 * in it, no warm-up: the server is warm from the run), its figure f's
 * samples against the run's. */
static ib_status sent_again(const ib_endpoint_config *cfg, const ib_gen_serve_config *c2,
                            const ib_gen_serve_result *r, ib__serve_figure f, double *scratch,
                            ib_gen_serve_pitfall_row *row, ib_error *err)
{
    ib_gen_serve_result w;
    ib_endpoint_result wep;
    ib_error why = { { 0 } };
    ib_status st = ib_measure_endpoint_serve(cfg, c2, &w, &wep, &why);
    if (st == IB_OK) {
        double *wrong = malloc((w.n_requests ? w.n_requests : 1) * sizeof *wrong);
        st = wrong ? IB_OK : ib__fail(&why, IB_ERR_NO_MEMORY, "out of memory");
        if (wrong)
            ib__serve_pitfall_median_row(row, wrong, ib__serve_pitfall_samples(&w, f, wrong), scratch,
                                         ib__serve_pitfall_samples(r, f, scratch));
        free(wrong);
    }
    ib_gen_serve_result_free(&w);
    ib_endpoint_result_free(&wep);
    return ib__serve_pitfall_settle(row, st, &why, err);
}

static ib_gen_serve_config again(const ib_gen_serve_config *c)
{
    ib_gen_serve_config c2 = *c;
    c2.pitfalls = false;
    c2.warmup_requests = 0;
    return c2;
}

/* The same requests (lengths), every one arriving at 0, prompts of their
 * own. */
static ib_status all_at_once(const ib_endpoint_config *cfg, const ib_gen_serve_config *c,
                             const ib_gen_serve_result *r, double *scratch, ib_gen_serve_pitfall_row *row,
                             ib_error *err)
{
    ib_gen_request_spec *at0 = malloc((r->n_requests ? r->n_requests : 1) * sizeof *at0);
    IB_FAIL_IF(!at0, err, IB_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < r->n_requests; i++)
        at0[i] =
            (ib_gen_request_spec){ 0, r->requests[i].spec.prompt_tokens, r->requests[i].spec.output_tokens };
    ib_gen_serve_config c2 = again(c);
    c2.arrivals = IB_ARRIVALS_TRACE;
    c2.trace = at0;
    c2.n_trace = r->n_requests;
    c2.seed = c->seed ^ ALL_AT_ONCE_SEED;
    ib_status st = sent_again(cfg, &c2, r, IB__SERVE_TPOT, scratch, row, err);
    free(at0);
    return st;
}

/* The schedule sent cold, before the run's warm-up: how it went, its
 * TTFT mean. */
typedef struct cold_run {
    ib_status st;
    ib_error why;
    double ttft_mean_ms;
} cold_run;

/* The cold run's TTFT mean against the run's (the in-process row's
 * figure and reading: a mean, no interval). No cold run: why not. */
static void no_warmup(const ib_gen_serve_config *c, const ib_gen_serve_result *r, const cold_run *cold,
                      ib_gen_serve_pitfall_row *row)
{
    if (c->warmup_requests == 0) {
        ib__serve_pitfall_not_applicable(
            row,
            "the run itself has no warm-up (--warmup-requests 0): its first requests are in its figures");
        return;
    }
    if (!cold) {
        ib__serve_pitfall_not_applicable(
            row,
            "the run was measured before the pitfalls were asked, on a warm server: a client cannot make "
            "a server cold again (ib_measure_endpoint_serve_pitfalls sends the schedule cold first)");
        return;
    }
    if (cold->st == IB_OK) {
        ib__serve_pitfall_set(row, cold->ttft_mean_ms, r->ttft.mean);
        row->reading = IB_READING_NO_INTERVAL;
        row->no_interval = ib__serve_pitfall_mean_no_interval;
    }
    ib__serve_pitfall_settle(row, cold->st, &cold->why, NULL);
}

/* Decode-only TPOT: generate's, in process. */
static void decode_only_not(ib_gen_serve_pitfall_row *row)
{
    ib__serve_pitfall_not_applicable(row, "one sequence decoding alone is generate's figure, in process: "
                                          "`inferbench serve MODEL.gguf --pitfalls` shows it");
}

/* The rows of the run r, ep; cold: the schedule sent cold before it (NULL:
 * none was). */
static ib_status pitfalls(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                          ib_gen_serve_result *r, const ib_endpoint_result *ep, const cold_run *cold,
                          ib_error *err)
{
    IB_FAIL_IF(!cfg || !scfg || !r || !ep, err, IB_ERR_INVALID_ARG, "no run to read the pitfalls of");
    ib_gen_serve_pitfall_row *rows = r->pitfalls;
    ib__serve_pitfall_rows_init(r, IB__SERVE_OVER_HTTP);
    double *scratch = malloc((r->n_requests ? r->n_requests : 1) * sizeof *scratch);
    IB_FAIL_IF(!scratch, err, IB_ERR_NO_MEMORY, "out of memory for the pitfalls");
    ib__serve_pitfall_actual_start(r, scratch, &rows[IB_GEN_SERVE_PITFALL_ACTUAL_START]);
    ib__serve_pitfall_mean_tpot(r, &rows[IB_GEN_SERVE_PITFALL_MEAN_TPOT]);
    chunk_gaps(r, ep, &rows[IB_GEN_SERVE_PITFALL_CHUNK_GAPS]);
    no_warmup(scfg, r, cold, &rows[IB_GEN_SERVE_PITFALL_NO_WARMUP]);
    decode_only_not(&rows[IB_GEN_SERVE_PITFALL_DECODE_ONLY]);
    /* The server's device is not known: the CPU's words where a row has them. */
    ib__serve_pitfall_explain(rows, IB__SERVE_OVER_HTTP, true);
    ib_gen_serve_config c2 = again(scfg);
    ib_status st =
        sent_again(cfg, &c2, r, IB__SERVE_TTFT, scratch, &rows[IB_GEN_SERVE_PITFALL_REPEATED_PROMPT], err);
    if (st == IB_OK) st = all_at_once(cfg, scfg, r, scratch, &rows[IB_GEN_SERVE_PITFALL_ALL_AT_ONCE], err);
    if (st != IB_OK) ib__serve_pitfall_unreached(rows, st, r);
    ib__serve_pitfall_explain(rows, IB__SERVE_OVER_HTTP, true);
    free(scratch);
    return st;
}

ib_status ib_endpoint_serve_pitfalls(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                     ib_gen_serve_result *r, const ib_endpoint_result *ep, ib_error *err)
{
    return pitfalls(cfg, scfg, r, ep, NULL, err);
}

/* The schedule sent to a server that has served nothing yet, as a run
 * without warm-up sends it (prompts of their own: the run after it finds
 * none of them cached). */
static cold_run send_cold(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg)
{
    ib_gen_serve_config c2 = again(scfg);
    c2.seed = scfg->seed ^ COLD_SEED;
    ib_gen_serve_result w;
    ib_endpoint_result wep;
    cold_run cold = { .st = IB_OK };
    cold.st = ib_measure_endpoint_serve(cfg, &c2, &w, &wep, &cold.why);
    cold.ttft_mean_ms = w.ttft.mean;
    ib_gen_serve_result_free(&w);
    ib_endpoint_result_free(&wep);
    return cold;
}

ib_status ib_measure_endpoint_serve_pitfalls(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                             ib_gen_serve_result *r, ib_endpoint_result *ep, ib_error *err)
{
    IB_FAIL_IF(!r || !ep, err, IB_ERR_INVALID_ARG, "no result to fill");
    memset(r, 0, sizeof *r);
    memset(ep, 0, sizeof *ep);
    IB_FAIL_IF(!cfg || !scfg, err, IB_ERR_INVALID_ARG, "no configuration");
    bool sent_cold = scfg->warmup_requests > 0;
    cold_run cold = { .st = IB_OK };
    if (sent_cold) {
        cold = send_cold(cfg, scfg);
        /* Refused before anything was sent (the checks, the settings), or
         * interrupted: there is no run to set a row against. */
        if (cold.st == IB_ERR_INVALID_ARG || cold.st == IB_ERR_INTERRUPTED) {
            if (err) *err = cold.why;
            return cold.st;
        }
    }
    IB_TRY(ib_measure_endpoint_serve(cfg, scfg, r, ep, err));
    return pitfalls(cfg, scfg, r, ep, sent_cold ? &cold : NULL, err);
}
