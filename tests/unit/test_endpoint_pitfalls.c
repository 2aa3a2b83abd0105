/* serve --endpoint --pitfalls' no-warm-up row against the scripted
 * loopback server (docs/serve-endpoint.md, "Pitfalls"): the schedule sent
 * cold before the run, to a server whose first request is slow (the
 * script's cold start), its TTFT mean against the run's. What is exact
 * whatever the machine's load, never a time: which requests the server
 * saw before the run's origin (the cold run's and the warm-up's), the
 * cold request's planned first chunk, the row's correct figure and error
 * from the run's own, and the floor the script puts under the cold run's
 * mean (every token comes no sooner than scripted). */
#include "check.h"
#include "endpoint_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { REQUESTS = 6, NEW_TOKENS = 8, PER_CHUNK = 3, WARMUP = 2 };
#define TTFT_MS 2.0
#define ITL_MS 1.0
#define COLD_START_MS 200.0

static ib_script_server *start(double cold_start_ms)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = TTFT_MS;
    s.itl_ms = ITL_MS;
    s.tokens_per_chunk = PER_CHUNK;
    s.cold_start_ms = cold_start_ms;
    snprintf(s.model, sizeof s.model, "tiny");
    return endpoint_fixture_start(&s);
}

/* REQUESTS requests of 16 prompt and NEW_TOKENS output tokens, one every
 * 20 ms, `warmup` warm-up requests, the pitfalls asked. */
static void settings(endpoint_run *x, ib_script_server *srv, int warmup)
{
    endpoint_run_settings(x, srv, 5000, REQUESTS, NEW_TOKENS, warmup);
    x->cfg.pitfalls = true;
}

/* The server's requests that arrived before t_ms, and the planned time of
 * its request 0's first chunk minus that request's arrival. */
static size_t arrived_before(ib_script_server *srv, double t_ms, double *first_chunk_offset_ms)
{
    size_t n = ib_script_server_stamps(srv, NULL, 0);
    ib_script_stamp *st = calloc(n ? n : 1, sizeof *st);
    CHECK(st != NULL);
    if (!st) return 0;
    n = ib_script_server_stamps(srv, st, n);
    size_t before = 0;
    double arrival0 = NAN;
    *first_chunk_offset_ms = NAN;
    for (size_t i = 0; i < n; i++) {
        if (st[i].kind == IB_SCRIPT_ARRIVED) before += st[i].sent_ms < t_ms;
        if (st[i].request != 0) continue;
        if (st[i].kind == IB_SCRIPT_ARRIVED) arrival0 = st[i].planned_ms;
        if (st[i].kind == IB_SCRIPT_CHUNK && isnan(*first_chunk_offset_ms))
            *first_chunk_offset_ms = st[i].planned_ms - arrival0;
    }
    free(st);
    return before;
}

/* The schedule sent cold first: the server's first request (its cold
 * start) is the cold run's, none of the run's; the row is the cold run's
 * TTFT mean against the run's, no interval. */
static void test_no_warmup_measured(void)
{
    ib_script_server *srv = start(COLD_START_MS);
    endpoint_run x;
    settings(&x, srv, WARMUP);
    x.st = ib_measure_endpoint_serve_pitfalls(&x.ep, &x.cfg, &x.r, &x.e, &x.err);
    CHECK(x.st == IB_OK);
    CHECK_EQ_INT(x.r.n_completed, REQUESTS);
    const ib_gen_serve_pitfall_row *row = &x.r.pitfalls[IB_GEN_SERVE_PITFALL_NO_WARMUP];
    CHECK(x.r.has_pitfalls && row->applies && row->status == IB_OK);
    CHECK(strcmp(row->name, "no warm-up") == 0 && strcmp(row->figure, "TTFT mean ms") == 0);
    CHECK(row->correct == x.r.ttft.mean);
    CHECK(row->error_pct == (row->wrong - row->correct) / row->correct * 100);
    /* Every cold TTFT is at least the script's, the first's with its cold start. */
    CHECK(row->wrong >= (COLD_START_MS + REQUESTS * TTFT_MS) / REQUESTS);
    CHECK(x.r.ttft.min >= TTFT_MS);
    CHECK(row->reading == IB_READING_NO_INTERVAL && isnan(row->error_ci95_pct[0]));
    CHECK(row->no_interval && strstr(row->no_interval, "compare's interval is of medians"));
    CHECK(strcmp(row->why, "a fresh context's first requests pay for buffers, kernels and caches") == 0);
    /* Before the run's origin: the cold run and the warm-up, the cold one first. */
    double first_chunk_ms;
    CHECK_EQ_INT(arrived_before(srv, x.e.origin_ms, &first_chunk_ms), REQUESTS + WARMUP);
    CHECK(first_chunk_ms == COLD_START_MS + TTFT_MS + (PER_CHUNK - 1) * ITL_MS);
    endpoint_run_free(&x);
    ib_script_server_stop(srv);
}

/* A run without warm-up is itself cold: no cold run is sent (the run and
 * the two rows sent again are all the server sees). */
static void test_no_warmup_run_cold(void)
{
    ib_script_server *srv = start(0);
    endpoint_run x;
    settings(&x, srv, 0);
    x.st = ib_measure_endpoint_serve_pitfalls(&x.ep, &x.cfg, &x.r, &x.e, &x.err);
    CHECK(x.st == IB_OK);
    const ib_gen_serve_pitfall_row *row = &x.r.pitfalls[IB_GEN_SERVE_PITFALL_NO_WARMUP];
    CHECK(!row->applies && strstr(row->not_applicable, "the run itself has no warm-up"));
    double first_chunk_ms;
    CHECK_EQ_INT(arrived_before(srv, INFINITY, &first_chunk_ms), 3 * REQUESTS);
    CHECK_EQ_INT(arrived_before(srv, x.e.origin_ms, &first_chunk_ms), 0);
    endpoint_run_free(&x);
    ib_script_server_stop(srv);
}

/* The rows of a run measured already: the server is warm, the row says
 * so. */
static void test_no_warmup_after_the_run(void)
{
    ib_script_server *srv = start(0);
    endpoint_run x;
    settings(&x, srv, WARMUP);
    x.cfg.pitfalls = false;
    x.st = ib_measure_endpoint_serve(&x.ep, &x.cfg, &x.r, &x.e, &x.err);
    CHECK(x.st == IB_OK);
    x.cfg.pitfalls = true;
    CHECK(ib_endpoint_serve_pitfalls(&x.ep, &x.cfg, &x.r, &x.e, &x.err) == IB_OK);
    const ib_gen_serve_pitfall_row *row = &x.r.pitfalls[IB_GEN_SERVE_PITFALL_NO_WARMUP];
    CHECK(!row->applies && strstr(row->not_applicable, "measured before the pitfalls were asked"));
    endpoint_run_free(&x);
    ib_script_server_stop(srv);
}

/* Refused before anything is sent: the checks' line, nothing measured. */
static void test_refused_before_the_cold_run(void)
{
    ib_script_server *srv = start(0);
    endpoint_run x;
    settings(&x, srv, WARMUP);
    x.ep.model = "another";
    x.st = ib_measure_endpoint_serve_pitfalls(&x.ep, &x.cfg, &x.r, &x.e, &x.err);
    CHECK(x.st == IB_ERR_INVALID_ARG && strstr(x.err.message, "another"));
    CHECK(x.r.requests == NULL && x.e.requests == NULL);
    double first_chunk_ms;
    CHECK_EQ_INT(arrived_before(srv, INFINITY, &first_chunk_ms), 0);
    ib_script_server_stop(srv);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_no_warmup_measured);
    RUN(test_no_warmup_run_cold);
    RUN(test_no_warmup_after_the_run);
    RUN(test_refused_before_the_cold_run);
    return check_summary("test_endpoint_pitfalls");
}
