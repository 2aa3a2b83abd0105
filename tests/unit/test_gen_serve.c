/* Serving a generative model under load (docs/serve-generative.md): the
 * schedules (gamma arrivals, drawn lengths), the request trace parser,
 * and the engine on the scripted generation fake's virtual clock, whose
 * steps cost a known base + per decode token + per prompt token, so that
 * every TTFT, TPOT, gap and goodput below is worked out by hand. */
#include "check.h"
#include "report/printer.h"
#include "core/schedule.h"
#include "core/serve_gen.h"
#include "core/serve_gen_trace.h"
#include "gen_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Schedules                                                                 */
/* ------------------------------------------------------------------------ */

/* Shape 1 is Poisson's schedule itself; other shapes keep the mean gap
 * and move its spread as the gamma's: a squared coefficient of variation
 * of 1/shape. */
static void test_gamma_schedule(void)
{
    enum { N = 20000 };
    double *t = malloc(N * sizeof *t), *p = malloc(N * sizeof *p);
    ib__serve_gamma(50.0, 1.0, 3, N, t);
    ib__serve_poisson(50.0, 3, N, p);
    CHECK(memcmp(t, p, N * sizeof *t) == 0);
    const double shapes[] = { 0.25, 0.5, 4.0 };
    for (int k = 0; k < 3; k++) {
        ib__serve_gamma(50.0, shapes[k], 3, N, t);
        CHECK_NEAR(t[0], 0, 0);
        double sum = 0, sq = 0;
        for (size_t i = 1; i < N; i++) {
            double gap = t[i] - t[i - 1];
            CHECK(gap >= 0);
            sum += gap;
            sq += gap * gap;
        }
        double mean = sum / (N - 1), var = sq / (N - 1) - mean * mean;
        CHECK_NEAR(mean, 20.0, 20.0 * 0.03); /* 1000/50 ms */
        CHECK_NEAR(var / (mean * mean), 1.0 / shapes[k], 0.08 / shapes[k]);
        ib__serve_gamma(50.0, shapes[k], 3, N, p);
        CHECK(memcmp(t, p, N * sizeof *t) == 0); /* seeded */
    }
    free(t);
    free(p);
}

static void test_uniform_lengths(void)
{
    enum { N = 4000 };
    int32_t x[N], y[N];
    ib__schedule_uniform(128, 131, 9, N, x);
    int seen[4] = { 0 };
    for (size_t i = 0; i < N; i++) {
        CHECK(x[i] >= 128 && x[i] <= 131);
        if (x[i] >= 128 && x[i] <= 131) seen[x[i] - 128]++;
    }
    for (int v = 0; v < 4; v++) CHECK(seen[v] > N / 4 - 150 && seen[v] < N / 4 + 150);
    ib__schedule_uniform(128, 131, 9, N, y);
    CHECK(!memcmp(x, y, sizeof x));
    ib__schedule_uniform(64, 64, 9, 3, y);
    CHECK(y[0] == 64 && y[1] == 64 && y[2] == 64);
}

/* ------------------------------------------------------------------------ */
/* The request trace                                                         */
/* ------------------------------------------------------------------------ */

static ib_status parse(const char *text, ib_gen_request_spec **rs, size_t *n, ib_error *err)
{
    *err = (ib_error){ { 0 } };
    return ib_gen_trace_parse(text, strlen(text), rs, n, err);
}

static void test_trace_plain(void)
{
    ib_gen_request_spec *rs;
    size_t n;
    ib_error err;
    CHECK(parse("# arrival prompt output\n0 512 128\n12.5,64,8\r\n\n  12.5\t1 1  \n3e1, 7 ,9\n", &rs, &n,
                &err) == IB_OK);
    CHECK_EQ_INT(n, 4);
    if (n == 4) {
        CHECK_NEAR(rs[0].arrival_ms, 0, 0);
        CHECK(rs[0].prompt_tokens == 512 && rs[0].output_tokens == 128);
        CHECK_NEAR(rs[1].arrival_ms, 12.5, 0);
        CHECK(rs[1].prompt_tokens == 64 && rs[1].output_tokens == 8);
        CHECK(rs[2].prompt_tokens == 1 && rs[2].output_tokens == 1);
        CHECK_NEAR(rs[3].arrival_ms, 30, 0);
        CHECK(rs[3].prompt_tokens == 7 && rs[3].output_tokens == 9);
    }
    free(rs);
}

/* The Azure LLM inference trace as published: its header, then times of
 * the day with seven decimals; arrivals from the first row, across a
 * midnight too. */
static void test_trace_azure(void)
{
    ib_gen_request_spec *rs;
    size_t n;
    ib_error err;
    const char *text = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                       "2023-11-16 23:59:59.5000000,374,44\r\n"
                       "2023-11-16 23:59:59.6250000,1020,3\r\n"
                       "2023-11-17 00:00:01,9,1\r\n";
    CHECK(parse(text, &rs, &n, &err) == IB_OK);
    CHECK_EQ_INT(n, 3);
    if (n == 3) {
        CHECK_NEAR(rs[0].arrival_ms, 0, 0);
        CHECK_NEAR(rs[1].arrival_ms, 125, 1e-6);
        CHECK_NEAR(rs[2].arrival_ms, 1500, 1e-6);
        CHECK(rs[0].prompt_tokens == 374 && rs[0].output_tokens == 44);
        CHECK(rs[2].prompt_tokens == 9 && rs[2].output_tokens == 1);
    }
    free(rs);
    /* Microseconds kept: a difference of two times of the day, not of two
     * times from 1970 (whose doubles step by 0.24 us). */
    CHECK(parse("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,20,4\n"
                "2023-11-16 18:15:46.7,10,2\n",
                &rs, &n, &err) == IB_OK);
    if (n == 2) CHECK_NEAR(rs[1].arrival_ms, 19.41, 1e-6);
    free(rs);
}

/* Every bad trace: refused with one line naming the line, nothing kept. */
static void test_trace_bad(void)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        { "", "no requests" },
        { "# only a comment\n\n", "no requests" },
        { "10 5 5\n5 5 5\n", "line 2: this request arrives before" },
        { "-1 5 5\n", "line 1: expected an arrival" },
        { "0 -5 5\n", "line 1: token counts" },
        { "0 5 0\n", "line 1: token counts" },
        { "0 5\n", "line 1: expected an arrival" },
        { "0 5 5 5\n", "line 1: expected an arrival" },
        { "abc 5 5\n", "line 1: expected an arrival" },
        { "0 5x 5\n", "line 1: token counts" },
        { "0 2000000 5\n", "line 1: token counts" },
        { "nan 5 5\n", "line 1: expected an arrival" },
        { "0 5 5\n\0 5 5\n", "line 2: a NUL byte" },
        { "TIMESTAMP,Context,Generated\n", "line 1: the Azure trace's header" },
        { "TIMESTAMP,ContextTokens,GeneratedTokens\n", "no requests" },
        { "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-16 00:00:00,5,5\n",
          "line 2: expected TIMESTAMP" },
        { "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 00:00:01,5,5\n2023-11-16 00:00:00,5,5\n",
          "line 3: this request arrives before" },
        { "TIMESTAMP,ContextTokens,GeneratedTokens\n0,5,5\n", "line 2: expected TIMESTAMP" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ib_gen_request_spec *rs = (ib_gen_request_spec *)&i;
        size_t n = 7, len = strlen(bad[i].text);
        if (strstr(bad[i].says, "NUL")) len = 12;
        ib_error err = { { 0 } };
        ib_status st = ib_gen_trace_parse(bad[i].text, len, &rs, &n, &err);
        CHECK(st == IB_ERR_INVALID_ARG);
        CHECK(rs == NULL && n == 0);
        if (!strstr(err.message, bad[i].says)) fprintf(stderr, "  case %zu said: %s\n", i, err.message);
        CHECK(strstr(err.message, bad[i].says) != NULL);
        CHECK(!strchr(err.message, '\n'));
    }
}

/* ------------------------------------------------------------------------ */
/* The engine on the fake's virtual clock                                    */
/* ------------------------------------------------------------------------ */

/* A step costs 1 ms + 0.5 ms a decode token + 0.1 ms a prompt token; no
 * cold calls. */
static void script_by_hand(ib__gen_fake_script *s)
{
    ib__gen_fake_script_init(s);
    s->cold_calls = 0;
    s->batch_ms = 1;
    s->batch_decode_token_ms = 0.5;
    s->batch_prefill_token_ms = 0.1;
}

static ib__gen *open_scripted(void)
{
    ib__gen_fake_script s;
    script_by_hand(&s);
    return gen_fixture_open(&s);
}

static ib_gen_serve_config trace_config(const ib_gen_request_spec *trace, size_t n)
{
    ib_gen_serve_config c;
    ib_gen_serve_config_init(&c);
    c.arrivals = IB_ARRIVALS_TRACE;
    c.trace = trace;
    c.n_trace = n;
    c.slots = 2;
    c.prefill_chunk = 10;
    c.warmup_requests = 0;
    return c;
}

/* Two slots, chunks of 10 prompt tokens; R0 (0 ms, 10 + 3 tokens), R1 (0
 * ms, 20 + 2), R2 (1 ms, 5 + 2). The steps, by hand:
 *   1 [0, 2]      R0's prompt (10)                        1 + 1
 *   2 [2, 4.5]    R0's token 2, R1's first chunk (10)     1 + 0.5 + 1   R2 waits: no slot
 *   3 [4.5, 7]    R0's token 3 (ends), R1's last chunk    1 + 0.5 + 1
 *   4 [7, 9]      R2 admitted; R1's token 2 (ends), R2's prompt (5)   1 + 0.5 + 0.5
 *   5 [9, 10.5]   R2's token 2 (ends)                     1 + 0.5
 * so R2 waits 6 ms for a slot (counted: its TTFT is 8, not the 2 an
 * actual-start clock would show), and R0's gaps are 2.5 ms where a chunk
 * shares its step, against the 1.5 of a decode-only step. */
static const ib_gen_request_spec three[] = { { 0, 10, 3 }, { 0, 20, 2 }, { 1, 5, 2 } };

static void test_engine_by_hand(void)
{
    ib__gen *g = open_scripted();
    if (!g) return;
    ib_gen_serve_config c = trace_config(three, 3);
    c.slo_ttft_ms = 7.5;
    c.slo_tpot_ms = 2.5;
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n_requests, 3);
    CHECK_EQ_INT(r.n_completed, 3);
    CHECK(!r.partial);
    const double admitted[] = { 0, 0, 7 }, first[] = { 2, 7, 9 }, end[] = { 7, 9, 10.5 };
    const double queue[] = { 0, 0, 6 }, ttft[] = { 2, 7, 8 }, tpot[] = { 2.5, 2, 1.5 }, e2e[] = { 7, 9, 9.5 };
    const int32_t slot[] = { 0, 1, 0 };
    for (int i = 0; i < 3 && r.n_requests == 3; i++) {
        const ib_gen_serve_request *q = &r.requests[i];
        CHECK_NEAR(q->admitted_ms, admitted[i], 1e-9);
        CHECK_NEAR(q->first_token_ms, first[i], 1e-9);
        CHECK_NEAR(q->end_ms, end[i], 1e-9);
        CHECK_NEAR(q->queue_ms, queue[i], 1e-9);
        CHECK_NEAR(q->ttft_ms, ttft[i], 1e-9);
        CHECK_NEAR(q->tpot_ms, tpot[i], 1e-9);
        CHECK_NEAR(q->e2e_ms, e2e[i], 1e-9);
        CHECK_EQ_INT(q->slot, slot[i]);
        CHECK_EQ_INT(q->generated_tokens, three[i].output_tokens);
        CHECK(q->met == (i < 2)); /* R2's TTFT of 8 passes 7.5 */
    }
    /* The steps: times, tokens, requests running and waiting, the cells
     * held after each (1: R0's 10; 2: R0's 11, R1's 10; 3: 12 + 20; 4:
     * R1's 21, R2's 5; 5: R2's 6). */
    const double t0[] = { 0, 2, 4.5, 7, 9 }, t1[] = { 2, 4.5, 7, 9, 10.5 };
    const int32_t dec[] = { 0, 1, 1, 1, 1 }, pre[] = { 10, 10, 10, 5, 0 }, run[] = { 2, 2, 2, 2, 1 },
                  wait[] = { 0, 1, 1, 0, 0 }, kv[] = { 10, 21, 32, 26, 6 };
    CHECK_EQ_INT(r.n_steps, 5);
    for (int i = 0; i < 5 && r.n_steps == 5; i++) {
        CHECK_NEAR(r.steps[i].start_ms, t0[i], 1e-9);
        CHECK_NEAR(r.steps[i].end_ms, t1[i], 1e-9);
        CHECK_EQ_INT(r.steps[i].decode_tokens, dec[i]);
        CHECK_EQ_INT(r.steps[i].prefill_tokens, pre[i]);
        CHECK_EQ_INT(r.steps[i].running, run[i]);
        CHECK_EQ_INT(r.steps[i].waiting, wait[i]);
        CHECK_EQ_INT(r.steps[i].kv_cells, kv[i]);
    }
    /* Distributions: TTFT {2, 7, 8}, the wait {0, 0, 6}, TPOT {2.5, 2, 1.5},
     * the gaps {2.5, 2.5, 2, 1.5}, end-to-end {7, 9, 9.5}. */
    CHECK_EQ_INT(r.ttft.n, 3);
    CHECK_NEAR(r.ttft.p50, 7, 1e-9);
    CHECK_NEAR(r.ttft.max, 8, 1e-9);
    CHECK_NEAR(r.queue.max, 6, 1e-9);
    CHECK_NEAR(r.queue.mean, 2, 1e-9);
    CHECK_NEAR(r.tpot.mean, 2, 1e-9);
    CHECK_EQ_INT(r.itl.n, 4);
    CHECK_NEAR(r.itl.mean, 2.125, 1e-9);
    CHECK_NEAR(r.itl.max, 2.5, 1e-9);
    CHECK_NEAR(r.itl.min, 1.5, 1e-9);
    CHECK_NEAR(r.e2e.p50, 9, 1e-9);
    /* Over the span from 0 to 10.5 ms: 7 output tokens, 42 in all, 3
     * requests, 2 of them good; the trace offered 2 requests in 1 ms. */
    CHECK_NEAR(r.span_ms, 10.5, 1e-9);
    CHECK_NEAR(r.output_tokens_per_s, 7 * 1000 / 10.5, 1e-6);
    CHECK_NEAR(r.total_tokens_per_s, 42 * 1000 / 10.5, 1e-6);
    CHECK_NEAR(r.achieved_rate, 3 * 1000 / 10.5, 1e-6);
    CHECK_NEAR(r.offered_rate, 2000, 1e-9);
    CHECK_EQ_INT(r.n_good, 2);
    CHECK_NEAR(r.goodput_rate, 2 * 1000 / 10.5, 1e-6);
    CHECK_NEAR(r.good_share, 2.0 / 3.0, 1e-12);
    CHECK_EQ_INT(r.slots, 2);
    CHECK_EQ_INT(r.ctx_per_slot, 22); /* R1: 20 + 2 */
    /* Nothing left in the cache; every request's tokens fed. */
    ib__gen_fake_counts k = ib__gen_fake_counts_of(g);
    CHECK_EQ_INT(k.batches, 5);
    /* The prefix cache (on): each admission trims its slot from the
     * common prefix, 0 with ids of each request's own; the 2 slots emptied
     * after the warm-up (none here) and at the end. Each request started
     * once on its slot, nothing reused. */
    CHECK_EQ_INT(k.removes, 3 + 2 + 2);
    CHECK_EQ_INT(k.requests_started, 3);
    CHECK_EQ_INT(k.cells_reused, 0);
    CHECK_EQ_INT(r.cached_tokens, 0);
    CHECK_EQ_INT(k.batch_prefill_tokens, 35);
    CHECK_EQ_INT(k.batch_decode_tokens, 4);
    CHECK_EQ_INT(ib__gen_fake_filled(g, 0), 0);
    CHECK_EQ_INT(ib__gen_fake_filled(g, 1), 0);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* The trace summarized (docs/serve-generative.md, "Why the tail"), the
 * by-hand run above: gaps 2.5 (R0, step 2, chunk), 2.5 (R0, step 3,
 * chunk), 2 (R1, step 4, chunk), 1.5 (R2, step 5, none); ITL p99 2.5: its
 * tail the two gaps of 2.5, both chunked, against 3 of 4. TPOT {2.5, 2,
 * 1.5}, p99 2.49: R0's 5 ms of decode all chunked; of all, 7 of 8.5 ms.
 * TTFT {2, 7, 8} (p99 7.98) = wait {0, 0, 6} + prefill {2, 7, 2}: the wait
 * 6 of 17 ms, R2's 6 of 8 in the tail. Cells 10, 21, 32, 26, 6 over steps
 * of 2, 2.5, 2.5, 2, 1.5 ms: 213.5 / 10.5 on average, 32 at most, of 2 x
 * 22. */
static void test_tail_by_hand(void)
{
    ib__gen *g = open_scripted();
    if (!g) return;
    ib_gen_serve_config c = trace_config(three, 3);
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    const ib_gen_serve_tail *t = &r.tail;
    CHECK_EQ_INT(t->gaps, 4);
    CHECK_EQ_INT(t->gaps_chunked, 3);
    CHECK_NEAR(t->itl_p99_ms, 2.5, 1e-12);
    CHECK_EQ_INT(t->tail_gaps, 2);
    CHECK_EQ_INT(t->tail_gaps_chunked, 2);
    CHECK_NEAR(t->tpot_p99_ms, 2.49, 1e-12);
    CHECK_EQ_INT(t->tail_requests, 1);
    CHECK_NEAR(t->tail_decode_chunked_share, 1, 1e-12);
    CHECK_NEAR(t->decode_chunked_share, 7 / 8.5, 1e-12);
    CHECK_NEAR(t->prefill.p50, 2, 1e-12);
    CHECK_NEAR(t->prefill.max, 7, 1e-12);
    CHECK_NEAR(t->ttft_p99_ms, 7.98, 1e-12);
    CHECK_EQ_INT(t->ttft_tail_requests, 1);
    CHECK_NEAR(t->ttft_queue_share, 6.0 / 17, 1e-12);
    CHECK_NEAR(t->tail_ttft_queue_share, 0.75, 1e-12);
    CHECK_NEAR(t->kv_cells_mean, 213.5 / 10.5, 1e-12);
    CHECK_NEAR(t->kv_cells_max, 32, 0);
    CHECK_NEAR(t->kv_capacity_cells, 44, 0);
    /* The gaps rebuilt from the trace are the engine's own. */
    double *gaps = NULL;
    size_t n = 0;
    CHECK(ib__gen_serve_gaps(r.requests, r.n_requests, r.steps, r.n_steps, &gaps, &n) == IB_OK);
    const double want[] = { 2.5, 2.5, 2, 1.5 };
    CHECK_EQ_INT(n, 4);
    for (size_t i = 0; i < 4 && n == 4; i++) CHECK_NEAR(gaps[i], want[i], 1e-12);
    free(gaps);
    /* A trace that does not give a request its tokens is refused. */
    r.requests[0].spec.output_tokens = 4;
    r.requests[0].generated_tokens = 4;
    CHECK(ib__gen_serve_gaps(r.requests, r.n_requests, r.steps, r.n_steps, &gaps, &n) == IB_ERR_INVALID_ARG);
    CHECK(gaps == NULL && n == 0);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* The engine opened once serves run after run: warm-up once, each run the
 * same figures as the by-hand test's, none left in the cache. */
static void test_engine_reused(void)
{
    ib__gen *g = open_scripted();
    if (!g) return;
    ib_gen_serve_config c = trace_config(three, 3);
    c.warmup_requests = 2;
    ib__gen_engine *e = NULL;
    ib_error err = { { 0 } };
    CHECK(ib__gen_engine_open(g, &c, &e, &err) == IB_OK);
    CHECK_EQ_INT(ib__gen_fake_counts_of(g).removes,
                 2 + 2); /* the warm-up's admissions, its 2 slots emptied */
    for (int run = 0; run < 2 && e; run++) {
        ib_gen_serve_result r;
        CHECK(ib__gen_engine_serve(e, &c, NULL, &r, &err) == IB_OK);
        CHECK_EQ_INT(r.n_steps, 5);
        CHECK_NEAR(r.requests[2].ttft_ms, 8, 1e-9);
        CHECK_NEAR(r.span_ms, 10.5, 1e-9);
        ib_gen_serve_result_free(&r);
    }
    CHECK_EQ_INT(ib__gen_fake_counts_of(g).removes,
                 4 + 2 * (3 + 2)); /* each run: 3 admissions, 2 slots emptied */
    for (int32_t s = 0; s < 2; s++) CHECK_EQ_INT(ib__gen_fake_filled(g, s), 0);
    ib__gen_engine_close(e);
    ib__gen_destroy(g);
}

/* A watch that ends the run at R0's last token (step 3): R1 and R2 are
 * dropped, their sequences removed, and the next run starts clean. */
static bool stop_at_first_end(void *ctx, const ib_gen_serve_request *r, bool first, bool last)
{
    (void)r;
    (void)first;
    ++*(int *)ctx;
    return !last;
}

static void test_engine_watch_stops(void)
{
    ib__gen *g = open_scripted();
    if (!g) return;
    ib_gen_serve_config c = trace_config(three, 3);
    ib__gen_engine *e = NULL;
    ib_error err = { { 0 } };
    CHECK(ib__gen_engine_open(g, &c, &e, &err) == IB_OK);
    int calls = 0;
    ib__gen_serve_watch w = { stop_at_first_end, &calls };
    ib_gen_serve_result r;
    CHECK(ib__gen_engine_serve(e, &c, &w, &r, &err) == IB_OK);
    CHECK(!r.partial);
    CHECK_EQ_INT(r.n_steps, 3);
    CHECK_EQ_INT(r.n_completed, 1);
    CHECK_EQ_INT(calls, 3); /* R0's first token (step 1), its last and R1's first (step 3) */
    CHECK_EQ_INT(ib__gen_fake_filled(g, 0), 0);
    CHECK_EQ_INT(ib__gen_fake_filled(g, 1), 0);
    ib_gen_serve_result_free(&r);
    CHECK(ib__gen_engine_serve(e, &c, NULL, &r, &err) == IB_OK);
    CHECK_NEAR(r.requests[2].ttft_ms, 8, 1e-9);
    ib_gen_serve_result_free(&r);
    ib__gen_engine_close(e);
    ib__gen_destroy(g);
}

/* The text report: the model named as generate names it (the weights'
 * type once: the H100's read "llama 1B F16, F16"), a large rate in whole
 * units ("12280", not "1.228e+04"). */
static void test_text_report(void)
{
    ib__gen *g = open_scripted();
    if (!g) return;
    ib_gen_serve_config c = trace_config(three, 3);
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    r.total_tokens_per_s = 12280.4;
    char *text = ib__gen_serve_report_text(&r, &c, NULL);
    CHECK(text && strstr(text, ", 12280 in all (prompt + output) a second\n"));
    const char *type = r.info.weights_type;
    size_t line = text ? strcspn(text, "\n") : 0, said = 0;
    for (const char *p = text; type[0] && p && (p = strstr(p, type)) && (size_t)(p - text) < line; p++)
        said++;
    CHECK(type[0] && said == 1);
    CHECK(text && !strstr(text, "e+0"));
    ib_free(text);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* With nothing running, the engine waits for the next arrival (the
 * virtual clock advances): a request arriving on an idle engine is
 * admitted at its arrival, its TTFT the prefill step alone. No targets:
 * no goodput. */
static void test_idle_until_arrival(void)
{
    ib__gen *g = open_scripted();
    if (!g) return;
    const ib_gen_request_spec two[] = { { 100, 10, 2 }, { 250, 10, 2 } };
    ib_gen_serve_config c = trace_config(two, 2);
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    for (size_t i = 0; i < r.n_requests; i++) {
        CHECK_NEAR(r.requests[i].admitted_ms, two[i].arrival_ms, 1e-9);
        CHECK_NEAR(r.requests[i].ttft_ms, 2, 1e-9);   /* 1 + 10 x 0.1 */
        CHECK_NEAR(r.requests[i].tpot_ms, 1.5, 1e-9); /* 1 + 0.5 */
        CHECK(!r.requests[i].met);
    }
    CHECK_NEAR(r.span_ms, 250 + 3.5 - 100, 1e-9);
    CHECK(isnan(r.goodput_rate) && isnan(r.good_share));
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* The warm-up pays the cold start: with cold first calls (8x) and two
 * warm-up requests the measured figures are those of a warm engine; with
 * none, the first request pays it. */
static void test_warmup_excluded(void)
{
    ib__gen_fake_script s;
    script_by_hand(&s);
    s.cold_calls = 2;
    s.cold_factor = 8;
    const ib_gen_request_spec two[] = { { 0, 10, 2 }, { 50, 10, 2 } };
    for (int warm = 0; warm < 2; warm++) {
        ib__gen *g = gen_fixture_open(&s);
        if (!g) return;
        ib_gen_serve_config c = trace_config(two, 2);
        c.warmup_requests = warm ? 2 : 0;
        ib_gen_serve_result r;
        ib_error err = { { 0 } };
        CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
        CHECK_NEAR(r.requests[0].ttft_ms, warm ? 2 : 16, 1e-9);
        CHECK_NEAR(r.requests[0].tpot_ms, warm ? 1.5 : 12, 1e-9);
        CHECK_NEAR(r.requests[1].ttft_ms, 2, 1e-9);
        CHECK_EQ_INT(r.warmup_requests, warm ? 2 : 0);
        /* Admissions, the 2 slots emptied after the warm-up and at the end. */
        CHECK_EQ_INT(ib__gen_fake_counts_of(g).removes, (warm ? 4 : 2) + 2 + 2);
        ib_gen_serve_result_free(&r);
        ib__gen_destroy(g);
    }
}

/* The prefix cache on one slot, requests 100 ms apart of 10 + 2 tokens
 * whose first 6 are the shared prefix: R0 finds the slot empty (TTFT 1 +
 * 10 x 0.1 = 2 ms), R1 and R2 keep its 6 cells and prefill the other 4
 * (1 + 4 x 0.1 = 1.4 ms). Without the cache or without a shared prefix
 * every TTFT is 2. The whole prompt shared (a repeated prompt): 9 cells
 * kept, the last token decoded again for its logits, as llama-server
 * does (1 + 0.5 = 1.5 ms: one token, billed by the fake as a decode's). */
static void test_shared_prefix(void)
{
    const ib_gen_request_spec spaced[] = { { 0, 10, 2 }, { 100, 10, 2 }, { 200, 10, 2 } };
    const struct {
        int32_t shared;
        bool cache;
        double ttft_later;
        int32_t kept;
    } cases[] = { { 6, true, 1.4, 6 }, { 6, false, 2, 0 }, { 0, true, 2, 0 }, { 10, true, 1.5, 9 } };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        ib__gen *g = open_scripted();
        if (!g) return;
        ib_gen_serve_config c = trace_config(spaced, 3);
        c.slots = 1;
        c.shared_prefix = cases[k].shared;
        c.prefix_cache = cases[k].cache;
        ib_gen_serve_result r;
        ib_error err = { { 0 } };
        CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
        const double ttft[] = { 2, cases[k].ttft_later, cases[k].ttft_later };
        const int32_t kept[] = { 0, cases[k].kept, cases[k].kept };
        for (size_t i = 0; i < 3 && r.n_requests == 3; i++) {
            CHECK_NEAR(r.requests[i].ttft_ms, ttft[i], 1e-9);
            CHECK_EQ_INT(r.requests[i].cached_tokens, kept[i]);
        }
        CHECK_EQ_INT(r.cached_tokens, 2 * cases[k].kept);
        CHECK_EQ_INT(r.shared_prefix, cases[k].shared);
        CHECK(r.prefix_cache == cases[k].cache);
        /* The backend saw the same: cells kept, the prompt tokens saved. */
        ib__gen_fake_counts n = ib__gen_fake_counts_of(g);
        CHECK_EQ_INT(n.cells_reused, 2 * cases[k].kept);
        CHECK_EQ_INT(n.requests_started, 3);
        CHECK_EQ_INT(n.batch_prefill_tokens + n.batch_decode_tokens, 30 - 2 * cases[k].kept + 3);
        CHECK_EQ_INT(ib__gen_fake_filled(g, 0), 0);
        ib_gen_serve_result_free(&r);
        ib__gen_destroy(g);
    }
}

/* The pitfall rows read off the run (the hand-worked three requests):
 * TTFT from admission is {2, 7, 2} where the schedule's is {2, 7, 8}, so
 * its p99 (type 7: 2 + 0.98 x 5 = 6.9 against 7 + 0.98 = 7.98) reads
 * low; the mean of per-request TPOT {2.5, 2, 1.5} is 2 where decode time
 * over decode tokens is (5 + 2 + 1.5) / 4 = 2.125. Both exact. */
static void test_pitfalls_read_off(void)
{
    ib__gen *g = open_scripted();
    if (!g) return;
    ib_gen_serve_config c = trace_config(three, 3);
    c.pitfalls = true;
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    CHECK(r.has_pitfalls);
    const ib_gen_serve_pitfall_row *a = &r.pitfalls[IB_GEN_SERVE_PITFALL_ACTUAL_START],
                                   *m = &r.pitfalls[IB_GEN_SERVE_PITFALL_MEAN_TPOT];
    CHECK_NEAR(a->wrong, 6.9, 1e-9);
    CHECK_NEAR(a->correct, 7.98, 1e-9);
    CHECK(a->reading == IB_READING_LOW);
    CHECK_NEAR(m->wrong, 2, 1e-9);
    CHECK_NEAR(m->correct, 2.125, 1e-9);
    CHECK(m->reading == IB_READING_LOW);
    CHECK(isnan(a->error_ci95_pct[0]) && a->no_interval != NULL);
    /* The run had no warm-up: that mistake is not one to show. */
    CHECK(!r.pitfalls[IB_GEN_SERVE_PITFALL_NO_WARMUP].applies);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* The measured pitfall rows on three requests 100 ms apart (10 + 3
 * tokens, two slots, one warm-up request that takes the fake's two cold
 * calls): alone, each has TTFT 1 + 10 x 0.1 = 2 ms and TPOT 1 + 0.5 =
 * 1.5 ms.
 * - Every request at 0: R0's prompt [0, 2]; R0's token and R1's prompt
 *   [2, 4.5]; both tokens [4.5, 6.5] (R0 ends); R1's last token and R2's
 *   prompt [6.5, 9]; R2's tokens [9, 10.5], [10.5, 12]: TPOT {2.25, 2.25,
 *   1.5}, median 2.25 against 1.5.
 * - One prompt for all (the prefix cache on): R0 finds the slots empty
 *   (the warm-up's emptied, TTFT 2), R1 and R2 keep 9 of slot 0's cells
 *   and send the last token (1 + 0.5 = 1.5 ms, a decode's cost on the
 *   fake): TTFT median 1.5 against 2.
 * - Each request decoding alone in turn: its two steps of step_ms 0.75
 *   against TPOT 1.5 (6 steps, but 3 TPOTs: still no interval).
 * - No warm-up, the context cold again: R0's prompt and first token cost
 *   8 times (16 ms), R1 and R2 2: a mean TTFT of 20 / 3 against 2.
 * Three samples a side: no interval (compare needs 6). */
static void test_pitfalls_measured(void)
{
    ib__gen_fake_script s;
    script_by_hand(&s);
    s.cold_calls = 2;
    s.cold_factor = 8;
    s.step_ms = 0.75;
    s.step_pos_ms = 0;
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    const ib_gen_request_spec spaced[] = { { 0, 10, 3 }, { 100, 10, 3 }, { 200, 10, 3 } };
    ib_gen_serve_config c = trace_config(spaced, 3);
    c.warmup_requests = 1;
    c.pitfalls = true;
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    const struct {
        ib_gen_serve_pitfall kind;
        double wrong, correct;
    } rows[] = { { IB_GEN_SERVE_PITFALL_ALL_AT_ONCE, 2.25, 1.5 },
                 { IB_GEN_SERVE_PITFALL_REPEATED_PROMPT, 1.5, 2 },
                 { IB_GEN_SERVE_PITFALL_DECODE_ONLY, 0.75, 1.5 },
                 { IB_GEN_SERVE_PITFALL_NO_WARMUP, 20.0 / 3, 2 },
                 { IB_GEN_SERVE_PITFALL_ACTUAL_START, 2, 2 } };
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        const ib_gen_serve_pitfall_row *row = &r.pitfalls[rows[k].kind];
        CHECK(row->applies && row->status == IB_OK);
        CHECK_NEAR(row->wrong, rows[k].wrong, 1e-9);
        CHECK_NEAR(row->correct, rows[k].correct, 1e-9);
        CHECK(row->reading == (k < 4 ? IB_READING_NO_INTERVAL : IB_READING_WITHIN_NOISE));
        CHECK(row->why && row->why[0]);
    }
    /* No sequence left behind by the rows' runs. */
    CHECK_EQ_INT(ib__gen_fake_filled(g, 0), 0);
    CHECK_EQ_INT(ib__gen_fake_filled(g, 1), 0);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* --sampling greedy: each token read is sampled after the step's
 * synchronize, within the step (0.3 ms a sample on the fake). The steps of
 * test_engine_by_hand, each longer by its outputs' samples:
 *   1 [0, 2.3]      R0's prompt, its first token sampled
 *   2 [2.3, 5.1]    R0's token 2 sampled (R1's first chunk reads nothing)
 *   3 [5.1, 8.2]    R0's token 3 and R1's first token sampled; R0 ends
 *   4 [8.2, 10.8]   R2 admitted; R1's token 2 (ends), R2's first token
 *   5 [10.8, 12.6]  R2's token 2
 * seven samples, one a token; without a sample operation, refused. */
static void test_sampling_greedy(void)
{
    ib__gen_fake_script s;
    script_by_hand(&s);
    s.sample_ms = 0.3;
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c = trace_config(three, 3);
    c.sample_greedy = true;
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    CHECK(r.sample_greedy);
    const double first[] = { 2.3, 8.2, 10.8 }, end[] = { 8.2, 10.8, 12.6 }, tpot[] = { 2.95, 2.6, 1.8 };
    for (int i = 0; i < 3 && r.n_requests == 3; i++) {
        CHECK_NEAR(r.requests[i].first_token_ms, first[i], 1e-9);
        CHECK_NEAR(r.requests[i].end_ms, end[i], 1e-9);
        CHECK_NEAR(r.requests[i].tpot_ms, tpot[i], 1e-9);
    }
    const double t1[] = { 2.3, 5.1, 8.2, 10.8, 12.6 };
    CHECK_EQ_INT(r.n_steps, 5);
    for (int i = 0; i < 5 && r.n_steps == 5; i++) CHECK_NEAR(r.steps[i].end_ms, t1[i], 1e-9);
    CHECK_EQ_INT(ib__gen_fake_counts_of(g).samples, 7);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
    /* No sample operation (the fake's without sample_us): one line. */
    g = open_scripted();
    if (!g) return;
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_UNSUPPORTED);
    CHECK(!strcmp(err.message, "this generation backend cannot sample: --sampling greedy needs it"));
    ib__gen_destroy(g);
}

/* Every request at time 0 can read low: requests of like lengths then
 * run in waves. Two slots, chunks of 20, twelve requests of 10 + 3
 * tokens. Arriving every 2 ms, each request's prompt shares a step with
 * the other slot's decode: a request's steps after its first token are
 * one of 2.5 ms (a token and the next prompt) and one of 2, a TPOT of
 * 2.25 (the last request's 1.75: no prompt after it). All at 0, the two
 * slots admit two at a time and prefill both prompts in one step, then
 * decode both alone: steps of 2 ms, a TPOT of 2. The mistake lowers the
 * figure here (-11.1%), and the row's why is the mistake's, not "the
 * machine's state". */
static void test_pitfall_all_at_once_waves(void)
{
    ib__gen *g = open_scripted();
    if (!g) return;
    ib_gen_request_spec spaced[12];
    for (int i = 0; i < 12; i++) spaced[i] = (ib_gen_request_spec){ 2.0 * i, 10, 3 };
    ib_gen_serve_config c = trace_config(spaced, 12);
    c.prefill_chunk = 20;
    c.pitfalls = true;
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    const ib_gen_serve_pitfall_row *row = &r.pitfalls[IB_GEN_SERVE_PITFALL_ALL_AT_ONCE];
    CHECK(row->applies && row->status == IB_OK);
    CHECK_NEAR(row->correct, 2.25, 1e-9);
    CHECK_NEAR(row->wrong, 2.0, 1e-9);
    CHECK(row->reading == IB_READING_LOW);
    CHECK(row->why && strstr(row->why, "in waves") && !strstr(row->why, "does not cause"));
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* A row whose run fails keeps its error; the rows after it are measured
 * and the correct figures stand (the run's 5 steps are calls 0..4, the
 * repeated prompt's run fails at its first). */
static void test_pitfall_row_fails(void)
{
    ib__gen_fake_script s;
    script_by_hand(&s);
    s.fail_at_call = 5;
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c = trace_config(three, 3);
    c.pitfalls = true;
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    CHECK(!r.partial);
    CHECK_NEAR(r.ttft.max, 8, 1e-9);
    const ib_gen_serve_pitfall_row *rep = &r.pitfalls[IB_GEN_SERVE_PITFALL_REPEATED_PROMPT];
    CHECK(rep->status == IB_ERR_RUNTIME && strstr(rep->error, "fake: call 5 failed"));
    CHECK(r.pitfalls[IB_GEN_SERVE_PITFALL_ALL_AT_ONCE].status == IB_OK);
    CHECK(r.pitfalls[IB_GEN_SERVE_PITFALL_DECODE_ONLY].status == IB_OK);
    char *text = ib__gen_serve_report_text(&r, &c, NULL);
    CHECK(text && strstr(text, "a prompt repeated          failed: fake: call 5 failed\n"));
    ib_free(text);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* A seeded schedule: the same seed, the same requests; lengths drawn in
 * their ranges; every request served. */
static void test_seeded_schedule(void)
{
    ib__gen *g = open_scripted();
    if (!g) return;
    ib_gen_serve_config c;
    ib_gen_serve_config_init(&c);
    c.rate = 200;
    c.burstiness = 0.5;
    c.requests = 40;
    c.prompt_min = 4;
    c.prompt_max = 40;
    c.output_min = 1;
    c.output_max = 9;
    c.warmup_requests = 1;
    ib_gen_serve_result a, b;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &a, &err) == IB_OK);
    CHECK(ib_measure_gen_serve(g, &c, &b, &err) == IB_OK);
    CHECK_EQ_INT(a.n_completed, 40);
    CHECK_EQ_INT(a.slots, IB_GEN_SERVE_MAX_DEFAULT_SLOTS); /* the fake's cache holds any count */
    CHECK(a.slots_from == IB_GEN_SLOTS_CAPPED);
    CHECK_NEAR(a.offered_rate, 200, 0);
    int64_t out_tokens = 0;
    for (size_t i = 0; i < a.n_requests && b.n_requests == a.n_requests; i++) {
        const ib_gen_request_spec *p = &a.requests[i].spec, *q = &b.requests[i].spec;
        CHECK(p->arrival_ms == q->arrival_ms && p->prompt_tokens == q->prompt_tokens &&
              p->output_tokens == q->output_tokens);
        CHECK(p->prompt_tokens >= 4 && p->prompt_tokens <= 40 && p->output_tokens >= 1 &&
              p->output_tokens <= 9);
        CHECK_EQ_INT(a.requests[i].generated_tokens, p->output_tokens);
        out_tokens += p->output_tokens;
    }
    /* Gaps: a request's tokens but its first. */
    CHECK_EQ_INT(a.itl.n, out_tokens - 40);
    for (int s = 0; s < a.slots; s++) CHECK_EQ_INT(ib__gen_fake_filled(g, s), 0);
    ib_gen_serve_result_free(&a);
    ib_gen_serve_result_free(&b);
    ib__gen_destroy(g);
}

/* A failure mid-run keeps what was measured (partial); a cancel before
 * the first request, the same with nothing completed. */
static void test_partial(void)
{
    ib__gen_fake_script s;
    ib__gen_fake_script_init(&s);
    s.cold_calls = 0;
    s.fail_at_call = 3;
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c = trace_config(three, 3);
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_RUNTIME);
    CHECK(r.partial);
    CHECK_EQ_INT(r.n_steps, 3);
    CHECK_EQ_INT(r.n_completed, 1); /* R0 ended in step 3 */
    /* R2 was admitted for the step that failed; it has no token. */
    CHECK(!isnan(r.requests[2].admitted_ms) && isnan(r.requests[2].first_token_ms));
    CHECK_EQ_INT(r.ttft.n, 1);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);

    g = open_scripted();
    volatile int cancel = 1;
    c.run.cancel = &cancel;
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_INTERRUPTED);
    CHECK(r.partial && r.n_completed == 0 && r.n_requests == 3);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* Every bad setting: refused before anything runs. */
static void test_bad_settings(void)
{
    ib__gen *g = open_scripted();
    if (!g) return;
    ib_gen_serve_result r;
    ib_error err;
    ib_gen_serve_config c = trace_config(three, 3);
    c.ctx_per_slot = 21; /* R1 needs 22 */
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "request 2: a prompt of 20 tokens + 2 output tokens pass the context") != NULL);
    CHECK(r.requests == NULL && r.n_requests == 0);
    ib_gen_serve_config_init(&c);
    c.rate = 10;
    c.burstiness = 0;
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "burstiness") != NULL);
    c.burstiness = 1;
    c.rate = 0;
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_INVALID_ARG);
    c.rate = 10;
    c.slo_tpot_ms = -1;
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_INVALID_ARG);
    c.slo_tpot_ms = 0;
    c.prompt_min = 10;
    c.prompt_max = 5;
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_INVALID_ARG);
    c.prompt_max = 10;
    c.slots = 600; /* more than a batch (512) */
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_INVALID_ARG);
    c.slots = 0;
    c.ctx_per_slot = 9000; /* the fake's model was made for 8192 */
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "n_ctx_train") != NULL);
    c.ctx_per_slot = 0;
    c.shared_prefix = -1;
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "a shared prefix of -1 tokens") != NULL);
    c = trace_config(three, 3);
    c.shared_prefix = 6; /* R2's prompt is 5 */
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "passes request 3's prompt of 5") != NULL);
    CHECK(r.requests == NULL);
    CHECK_EQ_INT(ib__gen_fake_counts_of(g).batches, 0);
    ib__gen_destroy(g);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_gamma_schedule);
    RUN(test_uniform_lengths);
    RUN(test_trace_plain);
    RUN(test_trace_azure);
    RUN(test_trace_bad);
    RUN(test_engine_by_hand);
    RUN(test_engine_reused);
    RUN(test_engine_watch_stops);
    RUN(test_tail_by_hand);
    RUN(test_text_report);
    RUN(test_idle_until_arrival);
    RUN(test_warmup_excluded);
    RUN(test_shared_prefix);
    RUN(test_pitfalls_read_off);
    RUN(test_pitfalls_measured);
    RUN(test_pitfall_row_fails);
    RUN(test_pitfall_all_at_once_waves);
    RUN(test_sampling_greedy);
    RUN(test_seeded_schedule);
    RUN(test_partial);
    RUN(test_bad_settings);
    return check_summary("test_gen_serve");
}
