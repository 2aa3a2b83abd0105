/* The SLO rate search and the curve over rates of a generative model
 * served (docs/serve-generative.md, "The answer"), on the scripted
 * generation fake's virtual clock, where the engine's capacity is worked
 * out by hand.
 *
 * The script: one slot, every request a prompt of 10 tokens and 5 output
 * tokens; a step costs 1 ms + 0.5 ms a decode token + 0.1 ms a prompt
 * token. A request alone: its prompt in one step (2 ms: its TTFT), then 4
 * decode steps of 1.5 ms (its TPOT): 8 ms of service, a capacity of 125
 * requests/s exactly. Constant arrivals at r: below or at 125 no request
 * waits (TTFT 2 ms each); above, request i starts at 8i ms and arrives at
 * 1000i/r, so its TTFT is 2 + i (8 - 1000/r) ms, growing without bound. */
#include "check.h"
#include "core/serve_gen.h"
#include "gen_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static ib__gen *open_one_slot_engine(void)
{
    ib__gen_fake_script s;
    ib__gen_fake_script_init(&s);
    s.cold_calls = 0;
    s.batch_ms = 1;
    s.batch_decode_token_ms = 0.5;
    s.batch_prefill_token_ms = 0.1;
    return gen_fixture_open(&s);
}

/* 50 requests at constant arrivals, TTFT <= 3 ms and TPOT <= 2 ms at p90
 * with confidence 0.9: of 50 requests one over a target still meets it
 * (P(X <= 1) = 0.034 for X ~ Binomial(50, 0.1)), two do not (0.112). */
static ib_gen_serve_config serve_config(void)
{
    ib_gen_serve_config c;
    ib_gen_serve_config_init(&c);
    c.arrivals = IB_ARRIVALS_CONSTANT;
    c.requests = 50;
    c.prompt_min = c.prompt_max = 10;
    c.output_min = c.output_max = 5;
    c.slots = 1;
    c.warmup_requests = 2;
    c.slo_ttft_ms = 3;
    c.slo_tpot_ms = 2;
    return c;
}

static ib_gen_serve_rates_config rates_config(void)
{
    ib_gen_serve_rates_config rc;
    ib_gen_serve_rates_config_init(&rc);
    rc.percentile = 0.9;
    rc.confidence = 0.9;
    return rc;
}

/* From 31.25 requests/s (a quarter of the capacity) on a grid of 15 steps
 * a doubling (4.73%: precision 0.05): 31.25, 62.5 and 125 meet; 250 fails
 * (its request 1 has a TTFT of 6, request 2 of 10: the second over ends
 * the rate after 3 requests); bisection on the grid between 125 (index 30)
 * and 250 (45), the upper of two middles: index 38 (180.9/s) and 34
 * (150.4) fail after 3 requests, 32 (137.1, TTFT 2 + 0.707 i: requests 2
 * and 3 over) after 4, 31 (130.9, TTFT 2 + 0.364 i: requests 3 and 4
 * over) after 5. The answer is 125 exactly, 130.9 the last failing rate;
 * the search served 3 x 50 + 3 + 3 + 3 + 4 + 5 = 168 requests, where a
 * sweep of the grid from 31.25 (index 0) to 250 (45) serves 46 x 50 =
 * 2300. */
static void test_search_finds_the_capacity(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    ib_gen_serve_rates_config rc = rates_config();
    rc.first_rate = 31.25;
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    CHECK(ib_search_gen_serve(g, &c, &rc, &r, &err) == IB_OK);
    CHECK(r.searched && !r.partial);
    const double step = pow(2.0, 1.0 / 15);
    const double rate[] = {
        31.25, 62.5, 125, 250, 125 * pow(step, 8), 125 * pow(step, 4), 125 * pow(step, 2), 125 * step
    };
    const int64_t admitted[] = { 50, 50, 50, 3, 3, 3, 4, 5 };
    const bool met[] = { true, true, true, false, false, false, false, false };
    CHECK_EQ_INT(r.n_points, 8);
    for (size_t i = 0; i < 8 && r.n_points == 8; i++) {
        const ib_gen_serve_point *p = &r.points[i];
        CHECK_NEAR(p->offered_rate, rate[i], 1e-9);
        CHECK_EQ_INT(p->admitted, admitted[i]);
        CHECK(p->met == met[i]);
        CHECK(p->ended_early == !met[i]);
        CHECK_EQ_INT(p->ttft_over, met[i] ? 0 : 2);
    }
    CHECK_EQ_INT(r.found, 2);
    CHECK_EQ_INT(r.last_failed, 7);
    CHECK_NEAR(r.grid_step, step - 1, 1e-12);
    CHECK_EQ_INT(r.requests_served, 168);
    CHECK_EQ_INT(r.sweep_rates, 46);
    CHECK_EQ_INT(r.sweep_requests, 2300);
    /* The figures at the answer: every request within both targets, 250
     * output tokens over 400 ms (8 ms a request, back to back); the run
     * kept whole. */
    const ib_gen_serve_point *p = &r.points[2];
    CHECK_NEAR(p->ttft_p99_ms, 2, 1e-9);
    CHECK_NEAR(p->tpot_p99_ms, 1.5, 1e-9);
    CHECK_NEAR(p->achieved_rate, 125, 1e-9);
    CHECK_NEAR(p->goodput_rate, 125, 1e-9);
    CHECK_NEAR(p->good_share, 1, 0);
    CHECK_NEAR(p->output_tokens_per_s, 625, 1e-9);
    CHECK_EQ_INT(r.at_point, 2);
    CHECK_EQ_INT(r.at.n_requests, 50);
    CHECK_NEAR(r.at.offered_rate, 125, 0);
    /* One warm-up (its 2 requests) for every rate; every request admitted
     * started once on its slot, and the cache is empty after the runs
     * (the prefix cache trims a slot at admission and empties the slots
     * after the warm-up and each rate's run: removes are not one a request). */
    CHECK_EQ_INT(ib__gen_fake_counts_of(g).requests_started, 2 + 168);
    CHECK_EQ_INT(ib__gen_fake_filled(g, 0), 0);
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* Rates that fail on TPOT: two slots and a TTFT target of 5 ms. At 125/s
 * and below a request ends (8 ms) as the next arrives, each decoded alone
 * (TPOT 1.5 ms); above it a request is admitted while the one before
 * decodes, and both decode in steps of 2 ms, its prompt's step of 2.5 ms
 * beside the other's token: TPOT over 1.6 ms for both, while the TTFT (at
 * most 1.5 ms to the next step and 2.5 of prompt) stays within 5 ms until
 * the queue builds at 250. The bracket [125, 250] is bisected as with
 * TTFT: 180.9 (index 38), 150.4 (34), 137.1 (32), 130.9 (31) fail, no
 * TTFT over among them; the answer is 125 again. */
static void test_search_on_tpot(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    c.slots = 2;
    c.slo_ttft_ms = 5;
    c.slo_tpot_ms = 1.6;
    ib_gen_serve_rates_config rc = rates_config();
    rc.first_rate = 31.25;
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    CHECK(ib_search_gen_serve(g, &c, &rc, &r, &err) == IB_OK);
    const double step = pow(2.0, 1.0 / 15);
    const double rate[] = {
        31.25, 62.5, 125, 250, 125 * pow(step, 8), 125 * pow(step, 4), 125 * pow(step, 2), 125 * step
    };
    CHECK_EQ_INT(r.n_points, 8);
    for (size_t i = 0; i < 8 && r.n_points == 8; i++) {
        CHECK_NEAR(r.points[i].offered_rate, rate[i], 1e-9);
        CHECK(r.points[i].met == (i < 3));
        if (i >= 3) CHECK(r.points[i].tpot_over >= 2);
        if (i >= 4) CHECK_EQ_INT(r.points[i].ttft_over, 0);
    }
    CHECK_EQ_INT(r.found, 2);
    CHECK_EQ_INT(r.last_failed, 7);
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* A TTFT target below the 2 ms any request takes: every rate fails after
 * its second request; the search halves 6 times and says so. */
static void test_search_not_met(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    c.slo_ttft_ms = 1;
    ib_gen_serve_rates_config rc = rates_config();
    rc.first_rate = 64;
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    CHECK(ib_search_gen_serve(g, &c, &rc, &r, &err) == IB_ERR_NOT_MET);
    CHECK(strstr(err.message, "no rate met the targets: at the lowest, 1 requests/s") != NULL);
    CHECK_EQ_INT(r.n_points, 7);
    CHECK_NEAR(r.points[6].offered_rate, 1, 0);
    CHECK_EQ_INT(r.found, -1);
    CHECK_EQ_INT(r.requests_served, 7 * 2);
    CHECK_EQ_INT(r.at.n_requests, 0);
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* The rate the warm-up served starts the search when none is given: its
 * 2 requests, back to back on the slot, in 16 ms: 125 requests/s, met;
 * 250 fails; the bisection ends between 125 and 130.9 again. */
static void test_search_starts_at_warmup_rate(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    ib_gen_serve_rates_config rc = rates_config();
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    CHECK(ib_search_gen_serve(g, &c, &rc, &r, &err) == IB_OK);
    CHECK_NEAR(r.points[0].offered_rate, 125, 1e-9);
    CHECK(r.found >= 0 && r.points[r.found].offered_rate == 125);
    CHECK(r.last_failed >= 0 && fabs(r.points[r.last_failed].offered_rate - 125 * pow(2.0, 1.0 / 15)) < 1e-9);
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* Generous targets (TTFT <= 3 s): 250 requests/s saturates the engine
 * (achieved 125) and its 50 requests still meet them; the search stops
 * there, the answer that rate, no rate failed: 100 requests against a
 * sweep of the 16 grid rates from 125 to 250. */
static void test_search_stops_at_saturation(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    c.slo_ttft_ms = 3000;
    ib_gen_serve_rates_config rc = rates_config();
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    CHECK(ib_search_gen_serve(g, &c, &rc, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n_points, 2);
    CHECK(r.points[1].met);
    CHECK_NEAR(r.points[1].offered_rate, 250, 1e-9);
    CHECK_NEAR(r.points[1].achieved_rate, 125, 1e-9);
    CHECK_EQ_INT(r.found, 1);
    CHECK_EQ_INT(r.last_failed, -1);
    CHECK_EQ_INT(r.requests_served, 100);
    CHECK_EQ_INT(r.sweep_requests, 800);
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* The curve at 50, 100, 125, 200 and 250 requests/s: TTFT p99 2 ms up to
 * 125 (its floor), then growing; achieved 125 at 200 (below 95% of it):
 * saturation at 200, the knee at 125. The KV cache: a request holds 10,
 * 11, 12, 13, 14 cells after its 5 steps, of 15: a mean of 80%, a max of
 * 14/15. */
static void test_curve_knee_and_saturation(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    ib_gen_serve_rates_config rc = rates_config();
    const double rates[] = { 50, 100, 125, 200, 250 };
    rc.rates = rates;
    rc.n_rates = 5;
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve_curve(g, &c, &rc, &r, &err) == IB_OK);
    CHECK(!r.searched);
    CHECK_EQ_INT(r.n_points, 5);
    for (size_t i = 0; i < 5 && r.n_points == 5; i++) {
        const ib_gen_serve_point *p = &r.points[i];
        CHECK_NEAR(p->offered_rate, rates[i], 0);
        CHECK_EQ_INT(p->completed, 50); /* a curve serves every rate in full */
        CHECK(!p->ended_early);
        CHECK(p->met == (i < 3));
        CHECK_NEAR(p->tpot_p99_ms, 1.5, 1e-9);
        CHECK_NEAR(p->kv_mean_share, 0.8, 1e-12);
        CHECK_NEAR(p->kv_max_share, 14.0 / 15, 1e-12);
        if (i < 3) CHECK_NEAR(p->ttft_p99_ms, 2, 1e-9);
    }
    /* At 200: request i's TTFT 2 + 3i ms; 50 requests end at 400 ms. */
    CHECK_NEAR(r.points[3].ttft_p50_ms, 2 + 3 * 24.5, 1e-9);
    CHECK_NEAR(r.points[3].achieved_rate, 125, 1e-9);
    CHECK_EQ_INT(r.points[3].ttft_over, 49);
    CHECK_EQ_INT(r.saturation, 3);
    CHECK_EQ_INT(r.knee, 2);
    CHECK_EQ_INT(r.at_point, 2);
    CHECK_NEAR(r.at.offered_rate, 125, 0);
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* A drain long against the run's span: 10 slots, every step 1 ms whatever
 * it carries, 20 requests of 100 output tokens (a step for the prompt and
 * its first token, 99 decode steps: 100 ms each, admitted at arrival).
 * At 50/s (every 20 ms) at most 5 run at once: request i ends at 20i +
 * 100, the completions' span (380 ms) the arrivals', so their pace is 1:
 * not saturated, though the achieved rate, 20 over 480 ms (41.7/s), is
 * 83% of the offered (saturated by the old test, achieved < 95% of offered). At 200/s (every
 * 5 ms) requests 10 to 19 wait for the slot request i - 10 frees at 5(i -
 * 10) + 100, and end 100 ms later: the completions span 100 to 245 ms,
 * a pace of 95/145, and their TTFT is 51 ms against the first ones' 1
 * (ttft_growth 51): saturated. */
static void test_curve_long_drain_is_not_saturation(void)
{
    ib__gen_fake_script s;
    ib__gen_fake_script_init(&s);
    s.cold_calls = 0;
    s.batch_ms = 1;
    s.batch_decode_token_ms = s.batch_prefill_token_ms = 0;
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    c.requests = 20;
    c.output_min = c.output_max = 100;
    c.slots = 10;
    c.slo_ttft_ms = c.slo_tpot_ms = 0;
    ib_gen_serve_rates_config rc = rates_config();
    const double rates[] = { 50, 200 };
    rc.rates = rates;
    rc.n_rates = 2;
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve_curve(g, &c, &rc, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n_points, 2);
    if (r.n_points == 2) {
        CHECK_NEAR(r.points[0].achieved_rate, 20 / 0.48, 1e-9);
        CHECK_NEAR(r.points[0].pace, 1, 1e-12);
        CHECK_NEAR(r.points[0].ttft_p99_ms, 1, 1e-9);
        CHECK_NEAR(r.points[0].ttft_growth, 1, 1e-12);
        CHECK_NEAR(r.points[1].pace, 95.0 / 145, 1e-12);
        CHECK_NEAR(r.points[1].ttft_growth, 51, 1e-9);
        CHECK_NEAR(r.points[1].queue_p99_ms, 50, 1e-9);
    }
    CHECK_EQ_INT(r.saturation, 1);
    CHECK_EQ_INT(r.knee, 0);
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* The run's figures of 8 requests arriving every 10 ms, each of 2 tokens,
 * with its TTFT and end-to-end given (ms). */
static ib_gen_serve_result run_of(const double ttft_ms[8], const double e2e_ms[8])
{
    ib_gen_serve_config c = serve_config();
    ib_gen_serve_result r;
    memset(&r, 0, sizeof r);
    r.requests = calloc(8, sizeof *r.requests);
    if (!r.requests) return r;
    r.n_requests = 8;
    for (size_t i = 0; i < 8; i++) {
        ib_gen_serve_request *q = &r.requests[i];
        q->spec.arrival_ms = q->admitted_ms = 10.0 * (double)i;
        q->spec.output_tokens = q->generated_tokens = 2;
        q->first_token_ms = q->spec.arrival_ms + ttft_ms[i];
        q->end_ms = q->spec.arrival_ms + e2e_ms[i];
    }
    CHECK(ib__gen_serve_figures(&c, NULL, 0, 100, &r) == IB_OK);
    return r;
}

/* Saturated takes both signals. Ends slipping 5 ms a request behind their
 * arrivals (completions over 105 ms against arrivals over 70: a pace of
 * 2/3) with a flat TTFT: not saturated (a ramp, or Poisson's spread, on
 * a short run). A TTFT growing from 2 to 16 ms (medians of the first and
 * last quarters 3 and 15: 5x) with ends keeping pace: not saturated. Both:
 * saturated. */
static void test_saturated_needs_both_signals(void)
{
    const double flat[8] = { 2, 2, 2, 2, 2, 2, 2, 2 }, growing[8] = { 2, 4, 6, 8, 10, 12, 14, 16 };
    const double slipping[8] = { 50, 55, 60, 65, 70, 75, 80, 85 },
                 steady[8] = { 50, 50, 50, 50, 50, 50, 50, 50 };
    ib_gen_serve_result a = run_of(flat, slipping), b = run_of(growing, steady),
                        c = run_of(growing, slipping);
    CHECK_NEAR(a.pace, 70.0 / 105, 1e-12);
    CHECK_NEAR(a.ttft_growth, 1, 1e-12);
    CHECK(!a.saturated);
    CHECK_NEAR(b.pace, 1, 1e-12);
    CHECK_NEAR(b.ttft_growth, 5, 1e-12);
    CHECK(!b.saturated);
    CHECK(c.saturated);
    ib_gen_serve_result_free(&a);
    ib_gen_serve_result_free(&b);
    ib_gen_serve_result_free(&c);
}

/* Interrupted: the rate in progress kept, marked partial. */
static void test_interrupted(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    c.warmup_requests = 0;
    volatile int cancel = 1;
    c.run.cancel = &cancel;
    ib_gen_serve_rates_config rc = rates_config();
    const double rates[] = { 50, 100 };
    rc.rates = rates;
    rc.n_rates = 2;
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve_curve(g, &c, &rc, &r, &err) == IB_ERR_INTERRUPTED);
    CHECK(r.partial && r.stop_status == IB_ERR_INTERRUPTED);
    CHECK_EQ_INT(r.n_points, 1);
    CHECK(r.points[0].partial && !r.points[0].met);
    CHECK_EQ_INT(r.knee, -1);
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* The search's and the curve's own progress: the reports a rate, kept. */
typedef struct progress_log {
    size_t n;
    ib_gen_serve_rate_progress p[16];
    ib_gen_serve_point point[16]; /* each report's point, copied (valid during the call) */
} progress_log;

static void keep_progress(const ib_gen_serve_rate_progress *p, void *user)
{
    progress_log *log = user;
    if (log->n == 16) return;
    log->p[log->n] = *p;
    log->point[log->n++] = *p->point;
}

/* A search of c from first_rate, its progress kept in *log. */
static ib_status search_logged(ib__gen *g, const ib_gen_serve_config *c, double first_rate, progress_log *log,
                               ib_gen_serve_rates_result *r)
{
    ib_gen_serve_rates_config rc = rates_config();
    rc.first_rate = first_rate;
    rc.rate_progress = keep_progress;
    rc.rate_progress_user = log;
    ib_error err = { { 0 } };
    return ib_search_gen_serve(g, c, &rc, r, &err);
}

/* The search of test_search_finds_the_capacity reports each of its 8
 * rates: while every rate met (31.25, 62.5, 125) the count it can take is
 * not known; 250 fails: the bracket [125, 250] is a doubling, 15 grid
 * steps, so 4 bisections at most: 8 rates in all; 180.9 (index 38) fails:
 * [125, 180.9], 8 steps, 3 more: 8; 150.4 (34): 4 steps, 2 more: 8;
 * 137.1 (32): 2 steps, 1 more: 8; 130.9 (31): neighbours, 8 rates, the
 * search's end. */
static void test_progress_search(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    progress_log log = { 0 };
    ib_gen_serve_rates_result r;
    CHECK(search_logged(g, &c, 31.25, &log, &r) == IB_OK);
    const double step = pow(2.0, 1.0 / 15);
    const double rate[] = {
        31.25, 62.5, 125, 250, 125 * pow(step, 8), 125 * pow(step, 4), 125 * pow(step, 2), 125 * step
    };
    const size_t at_most[] = { 0, 0, 0, 8, 8, 8, 8, 8 };
    const double met[] = { 31.25, 62.5, 125, 125, 125, 125, 125, 125 };
    CHECK_EQ_INT(log.n, 8);
    for (size_t i = 0; i < 8 && log.n == 8; i++) {
        CHECK(log.p[i].searched);
        CHECK_EQ_INT(log.p[i].rate, i + 1);
        CHECK_EQ_INT(log.p[i].rates_at_most, at_most[i]);
        CHECK_NEAR(log.point[i].offered_rate, rate[i], 1e-9);
        CHECK(log.point[i].met == (i < 3));
        CHECK_NEAR(log.p[i].met_rate, met[i], 1e-9);
        if (i < 3)
            CHECK(isnan(log.p[i].failed_rate));
        else
            CHECK_NEAR(log.p[i].failed_rate, rate[i], 1e-9);
    }
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* A search that never meets: each rate failed, none met; the count at
 * most its first rate, 6 halvings and the 4 bisections of a doubling: 11
 * (it ends after 7). */
static void test_progress_search_not_met(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    c.slo_ttft_ms = 1;
    progress_log log = { 0 };
    ib_gen_serve_rates_result r;
    CHECK(search_logged(g, &c, 64, &log, &r) == IB_ERR_NOT_MET);
    CHECK_EQ_INT(log.n, 7);
    for (size_t i = 0; i < log.n; i++) {
        CHECK_EQ_INT(log.p[i].rates_at_most, 11);
        CHECK(isnan(log.p[i].met_rate));
        CHECK_NEAR(log.p[i].failed_rate, 64 / pow(2.0, (double)i), 1e-9);
    }
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* The curve: rate i of 5, in order, no bracket. */
static void test_progress_curve(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    ib_gen_serve_rates_config rc = rates_config();
    const double rates[] = { 50, 100, 125, 200, 250 };
    rc.rates = rates;
    rc.n_rates = 5;
    progress_log log = { 0 };
    rc.rate_progress = keep_progress;
    rc.rate_progress_user = &log;
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve_curve(g, &c, &rc, &r, &err) == IB_OK);
    CHECK_EQ_INT(log.n, 5);
    for (size_t i = 0; i < log.n; i++) {
        CHECK(!log.p[i].searched);
        CHECK_EQ_INT(log.p[i].rate, i + 1);
        CHECK_EQ_INT(log.p[i].rates_at_most, 5);
        CHECK_NEAR(log.point[i].offered_rate, rates[i], 0);
        CHECK(log.point[i].met == (i < 3));
        CHECK(isnan(log.p[i].met_rate) && isnan(log.p[i].failed_rate));
    }
    ib_gen_serve_rates_result_free(&r);
    ib__gen_destroy(g);
}

/* Bad settings: refused before anything runs. */
static void test_bad_settings(void)
{
    ib__gen *g = open_one_slot_engine();
    if (!g) return;
    ib_gen_serve_config c = serve_config();
    ib_gen_serve_rates_config rc = rates_config();
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    c.slo_ttft_ms = c.slo_tpot_ms = 0;
    CHECK(ib_search_gen_serve(g, &c, &rc, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "a TTFT or a TPOT target") != NULL);
    c = serve_config();
    rc.percentile = 1;
    CHECK(ib_search_gen_serve(g, &c, &rc, &r, &err) == IB_ERR_INVALID_ARG);
    rc = rates_config();
    rc.precision = 0;
    CHECK(ib_search_gen_serve(g, &c, &rc, &r, &err) == IB_ERR_INVALID_ARG);
    rc = rates_config();
    const double bad[] = { 10, -1 };
    rc.rates = bad;
    rc.n_rates = 2;
    CHECK(ib_measure_gen_serve_curve(g, &c, &rc, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "rate -1") != NULL);
    rc.n_rates = 0;
    CHECK(ib_measure_gen_serve_curve(g, &c, &rc, &r, &err) == IB_ERR_INVALID_ARG);
    rc = rates_config();
    rc.percentile = rc.confidence = 0.99; /* 459 requests at least, all within */
    CHECK(ib_search_gen_serve(g, &c, &rc, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message,
                 "50 requests a rate can never meet a p99 target at confidence 99%: 459 at least") != NULL);
    c.warmup_requests = 0; /* no first rate, no warm-up to start from */
    rc = rates_config();
    CHECK(ib_search_gen_serve(g, &c, &rc, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK_EQ_INT(r.n_points, 0);
    CHECK_EQ_INT(ib__gen_fake_counts_of(g).batches, 0);
    ib__gen_destroy(g);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_search_finds_the_capacity);
    RUN(test_search_on_tpot);
    RUN(test_search_not_met);
    RUN(test_search_starts_at_warmup_rate);
    RUN(test_search_stops_at_saturation);
    RUN(test_curve_knee_and_saturation);
    RUN(test_curve_long_drain_is_not_saturation);
    RUN(test_saturated_needs_both_signals);
    RUN(test_interrupted);
    RUN(test_progress_search);
    RUN(test_progress_search_not_met);
    RUN(test_progress_curve);
    RUN(test_bad_settings);
    return check_summary("test_gen_serve_rates");
}
