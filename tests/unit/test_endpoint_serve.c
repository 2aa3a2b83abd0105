/* serve --endpoint against the scripted loopback server
 * (docs/script-server.md): what is exact whatever the machine's load,
 * never a time: every request's chunks and the tokens each carried, the
 * gaps of 0 inside a chunk, usage against the chunks, the lateness
 * measured for every request sent, the failures by cause, the checks
 * before the run, an interrupted run. The script's tokens come no sooner
 * than its TTFT after the request arrived, which is after its schedule:
 * a TTFT below it would be a clock mixed up, not a slow machine. */
#include "check.h"
#include "endpoint_fixture.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { REQUESTS = 6, NEW_TOKENS = 8, PER_CHUNK = 3 };

static ib_script script(void)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = 2;
    s.itl_ms = 1;
    s.tokens_per_chunk = PER_CHUNK;
    snprintf(s.model, sizeof s.model, "tiny");
    return s;
}

/* Serves REQUESTS requests of 16 prompt and NEW_TOKENS output tokens,
 * one every 20 ms, no warm-up unless told. */
static void serve(endpoint_run *x, ib_script_server *srv, int warmup, const volatile int *cancel)
{
    endpoint_run_settings(x, srv, 2000, REQUESTS, NEW_TOKENS, warmup);
    x->cfg.run.cancel = cancel;
    x->st = ib_measure_endpoint_serve(&x->ep, &x->cfg, &x->r, &x->e, &x->err);
}

/* Every request: chunks of 3, 3 and 2 tokens (8 asked, 3 a chunk), as the
 * server's continuous usage says; usage 8; its lateness measured; its
 * TTFT no less than the script's; 7 gaps of which 5 are 0 (the tokens
 * after a chunk's first); the server's stamps: the same chunks. */
static void test_chunks_counted(void)
{
    ib_script s = script();
    ib_script_server *srv = endpoint_fixture_start(&s);
    endpoint_run x;
    serve(&x, srv, 2, NULL);
    CHECK(x.st == IB_OK);
    CHECK_EQ_INT(x.r.n_requests, REQUESTS);
    CHECK_EQ_INT(x.r.n_completed, REQUESTS);
    CHECK(strcmp(x.r.info.model, "tiny") == 0);
    CHECK_EQ_INT(x.e.n_failed, 0);
    CHECK_EQ_INT(x.e.n_chunks, 3 * REQUESTS);
    CHECK_EQ_INT(x.e.multi_token_chunks, 3 * REQUESTS);
    CHECK_EQ_INT(x.e.assumed_chunks, 0);
    CHECK_EQ_INT(x.e.lateness.n, REQUESTS);
    CHECK_EQ_INT(x.r.itl.n, 7 * REQUESTS);
    CHECK(x.r.itl.min == 0);
    CHECK(x.r.itl.p50 == 0); /* 5 of every 7 gaps */
    CHECK_EQ_INT(x.r.ttft.n, REQUESTS);
    CHECK(x.r.ttft.min >= s.ttft_ms);
    CHECK_EQ_INT(x.r.n_good, REQUESTS);
    const int32_t want[3] = { 3, 3, 2 };
    for (size_t i = 0; i < x.e.n_requests; i++) {
        const ib_endpoint_request *q = &x.e.requests[i];
        CHECK(q->failure == IB_EP_OK && q->http_status == 200 && q->usage_tokens == NEW_TOKENS);
        CHECK(q->usage_prompt_tokens == 16); /* the ids sent, as the server counted them */
        CHECK(q->chunk_tokens == NEW_TOKENS && !q->tokens_assumed && q->n_chunks == 3);
        for (size_t k = 0; k < q->n_chunks && k < 3; k++) {
            CHECK_EQ_INT(q->chunk_token_counts[k], want[k]);
            CHECK(k == 0 || q->chunk_ms[k] >= q->chunk_ms[k - 1]);
        }
        CHECK(q->lateness_ms == q->sent_ms - x.r.requests[i].spec.arrival_ms);
        CHECK(x.r.requests[i].admitted_ms == q->sent_ms);
        CHECK(x.r.requests[i].first_token_ms == q->chunk_ms[0]);
        CHECK(x.r.requests[i].generated_tokens == NEW_TOKENS);
        CHECK(q->sent_ms <= q->chunk_ms[0]);
    }
    /* The server: 2 warm-up requests and 6 measured arrived, 3 chunks each. */
    ib_script_stamp st[256];
    size_t n = ib_script_server_stamps(srv, st, 256), arrived = 0, chunks = 0, tokens = 0;
    for (size_t i = 0; i < n && i < 256; i++) {
        arrived += st[i].kind == IB_SCRIPT_ARRIVED;
        chunks += st[i].kind == IB_SCRIPT_CHUNK;
        tokens += st[i].kind == IB_SCRIPT_CHUNK ? (size_t)st[i].tokens : 0;
    }
    CHECK_EQ_INT(arrived, 2 + REQUESTS);
    CHECK_EQ_INT(chunks, 3 * (2 + REQUESTS));
    CHECK_EQ_INT(tokens, NEW_TOKENS * (2 + REQUESTS));
    endpoint_run_free(&x);
    ib_script_server_stop(srv);
}

/* Runs the script's failure on every fail_every-th request and checks the
 * count of the cause (and that nothing else failed). */
static void expect_failures(ib_script s, ib_endpoint_failure cause, size_t n_failed)
{
    ib_script_server *srv = endpoint_fixture_start(&s);
    endpoint_run x;
    serve(&x, srv, 0, NULL);
    bool all = n_failed == REQUESTS;
    CHECK(x.st == (all ? IB_ERR_RUNTIME : IB_OK));
    if (all) CHECK(strstr(x.err.message, "every request") != NULL);
    CHECK_EQ_INT(x.e.n_requests, REQUESTS); /* measured and kept, even when all failed */
    CHECK_EQ_INT(x.e.failures[cause], n_failed);
    CHECK_EQ_INT(x.e.n_failed, n_failed);
    CHECK_EQ_INT(x.r.n_completed, REQUESTS - n_failed);
    CHECK_EQ_INT(x.r.n_good, REQUESTS - n_failed); /* against goodput */
    if (x.e.failures[cause] != n_failed)
        for (size_t i = 0; i < x.e.n_requests; i++)
            fprintf(stderr, "request %zu: %s\n", i, ib_endpoint_failure_str(x.e.requests[i].failure));
    endpoint_run_free(&x);
    ib_script_server_stop(srv);
}

/* Each cause, counted where it happened, the run going on. */
static void test_failures_by_cause(void)
{
    ib_script s = script();
    s.failure = IB_SCRIPT_FAIL_HTTP_500;
    s.fail_every = 2;
    expect_failures(s, IB_EP_HTTP, REQUESTS / 2);
    s.failure = IB_SCRIPT_FAIL_RESET;
    s.fail_after_chunks = 1;
    expect_failures(s, IB_EP_RESET, REQUESTS / 2);
    s.failure = IB_SCRIPT_FAIL_NO_DONE;
    expect_failures(s, IB_EP_NO_DONE, REQUESTS / 2);
    s.failure = IB_SCRIPT_FAIL_MALFORMED;
    expect_failures(s, IB_EP_MALFORMED, REQUESTS / 2);
    s.failure = IB_SCRIPT_FAIL_ERROR;
    expect_failures(s, IB_EP_ERROR, REQUESTS / 2);
    s.failure = IB_SCRIPT_FAIL_STALL;
    s.fail_every = 3;
    expect_failures(s, IB_EP_TIMEOUT, REQUESTS / 3);
    s = script();
    s.stop_after_tokens = NEW_TOKENS - 1;
    expect_failures(s, IB_EP_SHORT, REQUESTS);
}

/* Stops the server once it has ended two streams (its own stamps). */
static void *stop_after_two(void *arg)
{
    ib_script_server *srv = arg;
    for (;;) {
        ib_script_stamp st[64];
        size_t n = ib_script_server_stamps(srv, st, 64), ended = 0;
        for (size_t i = 0; i < n && i < 64; i++) ended += st[i].kind == IB_SCRIPT_ENDED;
        if (ended >= 2) break;
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    }
    ib_script_server_stop(srv);
    return NULL;
}

/* The server gone mid-run: the two requests scheduled after it stopped
 * find no connection (a trace: two at 0 and 10 ms, two at 1000 and
 * 1010), counted as such, the two before it completed. */
static void test_server_gone(void)
{
    ib_script s = script();
    ib_script_server *srv = endpoint_fixture_start(&s);
    pthread_t stopper;
    CHECK(pthread_create(&stopper, NULL, stop_after_two, srv) == 0);
    const ib_gen_request_spec trace[4] = {
        { 0, 16, NEW_TOKENS }, { 10, 16, NEW_TOKENS }, { 1000, 16, NEW_TOKENS }, { 1010, 16, NEW_TOKENS }
    };
    endpoint_run x;
    endpoint_fixture_target(&x.ep, x.url, sizeof x.url, srv);
    ib_gen_serve_config_init(&x.cfg);
    x.cfg.arrivals = IB_ARRIVALS_TRACE;
    x.cfg.trace = trace;
    x.cfg.n_trace = 4;
    x.cfg.warmup_requests = 0;
    x.st = ib_measure_endpoint_serve(&x.ep, &x.cfg, &x.r, &x.e, &x.err);
    pthread_join(stopper, NULL);
    CHECK(x.st == IB_OK);
    CHECK_EQ_INT(x.r.n_completed, 2);
    CHECK_EQ_INT(x.e.failures[IB_EP_CONNECT], 2);
    CHECK(x.e.requests[2].failure == IB_EP_CONNECT && x.e.requests[3].failure == IB_EP_CONNECT);
    CHECK(isnan(x.e.requests[2].sent_ms)); /* never sent: no lateness */
    CHECK_EQ_INT(x.e.lateness.n, 2);
    endpoint_run_free(&x);
}

/* Before the run: no server, no such model, not an OpenAI server, not
 * loopback: one line each, nothing sent. */
static void test_checks_before(void)
{
    ib_script s = script();
    ib_script_server *srv = endpoint_fixture_start(&s);
    int port = ib_script_server_port(srv);
    char url[96];
    int32_t vocab = 1;
    ib_endpoint_config ep;
    ib_endpoint_config_init(&ep);
    ep.url = url;
    ep.model = "tiny";
    ib_error err = { { 0 } };
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
    CHECK(ib_endpoint_check(&ep, &vocab, &err) == IB_OK);
    CHECK_EQ_INT(vocab, 0); /* the script states none */
    ep.model = "other";
    CHECK(ib_endpoint_check(&ep, &vocab, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "no model 'other' (it has: 'tiny')") != NULL);
    ep.model = "tiny";
    snprintf(url, sizeof url, "http://127.0.0.1:%d/elsewhere", port);
    CHECK(ib_endpoint_check(&ep, &vocab, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "HTTP 404: not an OpenAI-compatible server") != NULL);
    ib_script_server_stop(srv);
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    CHECK(ib_endpoint_check(&ep, &vocab, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "does not answer") != NULL);
    endpoint_run x;
    memset(&x, 0, sizeof x);
    ib_gen_serve_config_init(&x.cfg);
    x.cfg.rate = 1;
    ep.url = "http://192.168.1.1:8080";
    CHECK(ib_measure_endpoint_serve(&ep, &x.cfg, &x.r, &x.e, &x.err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(x.err.message, "not a loopback address") != NULL);
    CHECK(x.r.requests == NULL && x.e.requests == NULL);
}

/* Cancelled: what was measured kept, marked partial, no request counted
 * completed that did not complete. */
static void test_interrupted(void)
{
    ib_script s = script();
    ib_script_server *srv = endpoint_fixture_start(&s);
    volatile int cancel = 1;
    endpoint_run x;
    serve(&x, srv, 0, &cancel);
    CHECK(x.st == IB_ERR_INTERRUPTED);
    CHECK(x.r.partial && x.r.stop_status == IB_ERR_INTERRUPTED);
    CHECK_EQ_INT(x.r.n_requests, REQUESTS);
    CHECK_EQ_INT(x.r.n_completed, 0);
    CHECK_EQ_INT(x.e.lateness.n, 0); /* nothing was sent: no lateness, no time */
    CHECK(isnan(x.r.requests[0].admitted_ms) && isnan(x.e.requests[0].sent_ms));
    CHECK_EQ_INT(x.e.n_failed, 0);
    endpoint_run_free(&x);
    ib_script_server_stop(srv);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_chunks_counted);
    RUN(test_failures_by_cause);
    RUN(test_server_gone);
    RUN(test_checks_before);
    RUN(test_interrupted);
    return check_summary("test_endpoint_serve");
}
