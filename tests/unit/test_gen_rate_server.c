/* The search and the curve over rates on a server of one rate at a time
 * (src/core/serve_gen_rates.h: the seam the engine and the HTTP client
 * share), driven here by a server of pure arithmetic: one slot of 10 ms a
 * request (a capacity of 100 requests/s), the first token 2 ms after a
 * request starts, every time exact. What the method does with any server:
 * the rates it asks for, the watch told and obeyed (a run ends where the
 * watch says), a request that ends short of its tokens (an endpoint's
 * failure) ending its rate at once, the server's hook told each point. */
#include "check.h"
#include "core/serve_gen_rates.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { REQUESTS = 8, OUTPUT = 5, MAX_CALLS = IB_GEN_SERVE_MAX_RATES };
#define SERVICE_MS 10.0
#define TTFT_MS 2.0

typedef struct arithmetic_server {
    int64_t short_at;                /* this request ends a token short (-1: none) */
    size_t calls, served[MAX_CALLS]; /* each run: the requests served before the watch ended it */
    size_t n_told, told[MAX_CALLS];  /* the point hook's indexes, in order */
} arithmetic_server;

/* Request i starts when it arrives or when the slot frees, whichever is
 * later; the watch is told its first token, then its end. */
static ib_status serve(void *ctx, const ib_gen_serve_config *cfg, const ib__gen_serve_watch *watch,
                       ib_gen_serve_result *run, ib_error *err)
{
    arithmetic_server *s = ctx;
    memset(run, 0, sizeof *run);
    IB_TRY(ib__gen_serve_schedule(cfg, &run->requests, &run->n_requests, err));
    double free_ms = 0;
    size_t i = 0;
    for (bool going = true; i < run->n_requests && going; i++) {
        ib_gen_serve_request *r = &run->requests[i];
        r->admitted_ms = fmax(r->spec.arrival_ms, free_ms);
        r->first_token_ms = r->admitted_ms + TTFT_MS;
        r->end_ms = free_ms = r->admitted_ms + SERVICE_MS;
        r->generated_tokens = r->spec.output_tokens - ((int64_t)i == s->short_at);
        going = !watch || (watch->fn(watch->ctx, r, true, false) && watch->fn(watch->ctx, r, false, true));
    }
    for (size_t k = i; k < run->n_requests; k++)
        run->requests[k].admitted_ms = run->requests[k].first_token_ms = run->requests[k].end_ms = NAN;
    if (s->calls < MAX_CALLS) s->served[s->calls++] = i;
    return ib__gen_serve_figures(cfg, NULL, 0,
                                 ib__gen_serve_offered_rate(cfg, run->requests, run->n_requests), run);
}

static void told_point(void *ctx, size_t index, ib_gen_serve_point *pt)
{
    arithmetic_server *s = ctx;
    (void)pt;
    if (s->n_told < MAX_CALLS) s->told[s->n_told++] = index;
}

/* 8 requests of 5 tokens at constant arrivals, the median TTFT held to 5
 * ms at 90% confidence; a grid of sqrt(2) steps from 50/s. */
static void setup(ib_gen_serve_config *c, ib_gen_serve_rates_config *rc)
{
    ib_gen_serve_config_init(c);
    c->arrivals = IB_ARRIVALS_CONSTANT;
    c->requests = REQUESTS;
    c->prompt_min = c->prompt_max = 16;
    c->output_min = c->output_max = OUTPUT;
    c->slo_ttft_ms = 5;
    ib_gen_serve_rates_config_init(rc);
    rc->percentile = 0.5;
    rc->confidence = 0.9;
    rc->precision = 0.5;
    rc->first_rate = 50;
}

/* Up to 100/s no request waits (TTFT 2 ms); at 200/s request i waits 5i
 * ms, at 141.4/s 2.93i ms: past 5 ms from the second on. So 50 and 100
 * meet, 200 fails, its middle with 100 (141.4) fails: the answer 100/s.
 * The failed rates end where the watch said (fewer than all served); the
 * hook is told every point, in order. */
static void test_search_on_a_server(void)
{
    arithmetic_server s = { .short_at = -1 };
    ib__gen_rate_server srv = { .serve = serve, .point = told_point, .ctx = &s };
    ib_gen_serve_config c;
    ib_gen_serve_rates_config rc;
    setup(&c, &rc);
    ib_gen_serve_rates_result out;
    ib_error err = { { 0 } };
    CHECK(ib__gen_serve_rates_begin(&c, &rc, true, &out, &err) == IB_OK);
    CHECK(ib__gen_serve_rates_drive(&srv, &c, &rc, NAN, &out, &err) == IB_OK);
    CHECK_EQ_INT(out.n_points, 4);
    const double want[4] = { 50, 100, 200, 50 * pow(2, 1.5) };
    for (size_t i = 0; i < 4 && i < out.n_points; i++) CHECK_NEAR(out.points[i].offered_rate, want[i], 1e-9);
    CHECK_EQ_INT(out.found, 1);
    CHECK_EQ_INT(out.last_failed, 3);
    CHECK_EQ_INT(s.calls, 4);
    CHECK_EQ_INT(s.served[0], REQUESTS);
    CHECK_EQ_INT(s.served[1], REQUESTS);
    CHECK(s.served[2] < REQUESTS && s.served[3] < REQUESTS);
    CHECK(out.points[2].ended_early && out.points[3].ended_early);
    CHECK_EQ_INT(out.points[2].admitted, s.served[2]);
    CHECK_EQ_INT(s.n_told, 4);
    for (size_t i = 0; i < s.n_told; i++) CHECK_EQ_INT(s.told[i], i);
    CHECK(isnan(out.points[0].client_lateness_p99_ms)); /* none stated by this server */
    CHECK_EQ_INT(out.at_point, 1);
    CHECK_EQ_INT(out.at.n_requests, REQUESTS);
    ib_gen_serve_rates_result_free(&out);
}

/* The third request of every rate ends a token short (over HTTP: a
 * failure): its rate can never be met, and ends there (3 served), however
 * generous the targets; the search halves 6 times and no rate met. */
static void test_short_request_ends_a_rate(void)
{
    arithmetic_server s = { .short_at = 2 };
    ib__gen_rate_server srv = { .serve = serve, .ctx = &s };
    ib_gen_serve_config c;
    ib_gen_serve_rates_config rc;
    setup(&c, &rc);
    c.slo_ttft_ms = 1000;
    ib_gen_serve_rates_result out;
    ib_error err = { { 0 } };
    CHECK(ib__gen_serve_rates_begin(&c, &rc, true, &out, &err) == IB_OK);
    CHECK(ib__gen_serve_rates_drive(&srv, &c, &rc, NAN, &out, &err) == IB_ERR_NOT_MET);
    CHECK_EQ_INT(out.n_points, 7);
    CHECK_EQ_INT(out.found, -1);
    for (size_t i = 0; i < out.n_points; i++) {
        CHECK_EQ_INT(s.served[i], 3);
        CHECK(out.points[i].ended_early && !out.points[i].met);
        CHECK_EQ_INT(out.points[i].admitted, 3);
        CHECK_EQ_INT(out.points[i].completed, 2);
    }
    ib_gen_serve_rates_result_free(&out);
}

/* A search without a first rate starts at the warm-up's; none: refused. */
static void test_first_rate(void)
{
    arithmetic_server s = { .short_at = -1 };
    ib__gen_rate_server srv = { .serve = serve, .ctx = &s };
    ib_gen_serve_config c;
    ib_gen_serve_rates_config rc;
    setup(&c, &rc);
    rc.first_rate = 0;
    ib_gen_serve_rates_result out;
    ib_error err = { { 0 } };
    CHECK(ib__gen_serve_rates_begin(&c, &rc, true, &out, &err) == IB_OK);
    CHECK(ib__gen_serve_rates_drive(&srv, &c, &rc, NAN, &out, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "a search starts at a first rate") != NULL);
    CHECK_EQ_INT(s.calls, 0);
    CHECK(ib__gen_serve_rates_drive(&srv, &c, &rc, 100, &out, &err) == IB_OK);
    CHECK_NEAR(out.points[0].offered_rate, 100, 0);
    ib_gen_serve_rates_result_free(&out);
    ib_gen_serve_config first = ib__gen_serve_rates_first(&c, &rc, true);
    CHECK_NEAR(first.rate, 1, 0); /* opened at 1/s when the warm-up gives the first */
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_search_on_a_server);
    RUN(test_short_request_ends_a_rate);
    RUN(test_first_rate);
    return check_summary("test_gen_rate_server");
}
