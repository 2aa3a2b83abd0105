/* serve --endpoint --api llama (llama.cpp's own POST /completion,
 * docs/serve-endpoint.md, "The API") against the scripted loopback
 * server speaking it (docs/script-server.md): what is exact whatever the
 * machine's load, never a time the client measured: every request's
 * chunks and the tokens each carried counted from its ids, the count the
 * server's final event's, the server's own timings as the script planned
 * them (its TTFT, its gaps), their statistics, the failures of the
 * native stream (no final event, a malformed event, fewer tokens than
 * asked), and the server's stamps of the same chunks. */
#include "check.h"
#include "endpoint_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { REQUESTS = 6, NEW_TOKENS = 7, PER_CHUNK = 3 };
#define TTFT_MS 2.0
#define ITL_MS 1.0

static ib_script script(void)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = TTFT_MS;
    s.itl_ms = ITL_MS;
    s.tokens_per_chunk = PER_CHUNK;
    snprintf(s.model, sizeof s.model, "tiny");
    return s;
}

/* REQUESTS requests of 16 prompt and NEW_TOKENS output tokens, one every
 * 20 ms, in llama.cpp's API, `warmup` warm-up requests. */
static void serve(endpoint_run *x, ib_script_server *srv, int warmup)
{
    endpoint_run_settings(x, srv, 5000, REQUESTS, NEW_TOKENS, warmup);
    x->ep.api = IB_ENDPOINT_API_LLAMA;
    x->st = ib_measure_endpoint_serve(&x->ep, &x->cfg, &x->r, &x->e, &x->err);
}

/* Every request: chunks of 3, 3 and 1 tokens by their ids, 7 by the final
 * event, 16 prompt tokens; the server's timings the script's: 2 ms to the
 * first token, 6 gaps of 1 ms after it (the first request 100 ms colder);
 * the server's stamps: 3 chunks and one final event a request. */
static void test_native_counts_and_timings(void)
{
    ib_script s = script();
    s.cold_start_ms = 100;
    ib_script_server *srv = endpoint_fixture_start(&s);
    endpoint_run x;
    serve(&x, srv, 0);
    CHECK(x.st == IB_OK);
    CHECK(x.e.api == IB_ENDPOINT_API_LLAMA);
    CHECK_EQ_INT(x.r.n_completed, REQUESTS);
    CHECK_EQ_INT(x.e.n_failed, 0);
    CHECK_EQ_INT(x.e.n_chunks, 3 * REQUESTS);
    CHECK_EQ_INT(x.e.assumed_chunks, 0);
    const int32_t want[3] = { 3, 3, 1 };
    for (size_t i = 0; i < x.e.n_requests; i++) {
        const ib_endpoint_request *q = &x.e.requests[i];
        CHECK(q->failure == IB_EP_OK && q->usage_tokens == NEW_TOKENS && q->usage_prompt_tokens == 16);
        CHECK(q->chunk_tokens == NEW_TOKENS && !q->tokens_assumed && q->n_chunks == 3);
        for (size_t k = 0; k < q->n_chunks && k < 3; k++) CHECK_EQ_INT(q->chunk_token_counts[k], want[k]);
        CHECK(q->server_prompt_ms == TTFT_MS + (i == 0 ? 100 : 0));
        CHECK(q->server_predicted_ms == (NEW_TOKENS - 1) * ITL_MS);
        CHECK(q->server_prompt_n == 16 && q->server_cache_n == 0);
        CHECK(q->id_tokens == NEW_TOKENS); /* the script holds no token back */
        CHECK(x.r.requests[i].generated_tokens == NEW_TOKENS);
    }
    CHECK_EQ_INT(x.e.server_prompt_ms.n, REQUESTS);
    CHECK(x.e.server_prompt_ms.p50 == TTFT_MS && x.e.server_prompt_ms.max == TTFT_MS + 100);
    CHECK_EQ_INT(x.e.server_decode_ms_per_token.n, REQUESTS);
    CHECK(x.e.server_decode_ms_per_token.min == ITL_MS && x.e.server_decode_ms_per_token.max == ITL_MS);
    size_t n = ib_script_server_stamps(srv, NULL, 0), chunks = 0, finals = 0;
    ib_script_stamp *st = calloc(n ? n : 1, sizeof *st);
    n = ib_script_server_stamps(srv, st, n);
    for (size_t i = 0; i < n; i++) {
        chunks += st[i].kind == IB_SCRIPT_CHUNK;
        finals += st[i].kind == IB_SCRIPT_USAGE;
        CHECK(st[i].kind != IB_SCRIPT_DONE); /* llama.cpp's stream has no [DONE] */
    }
    CHECK_EQ_INT(chunks, 3 * REQUESTS);
    CHECK_EQ_INT(finals, REQUESTS);
    free(st);
    endpoint_run_free(&x);
    ib_script_server_stop(srv);
}

/* One slot, three requests at 0: the second and third wait for it, and
 * the server's timings (its own, as llama-server's) leave the wait out:
 * 2 ms and 6 ms each, while the client's TTFT holds the wait (the
 * script's floor: the third request's first token no sooner than two
 * whole requests and its own TTFT). */
static void test_native_timings_leave_the_wait_out(void)
{
    ib_script s = script();
    s.slots = 1;
    ib_script_server *srv = endpoint_fixture_start(&s);
    endpoint_run x;
    memset(&x, 0, sizeof x);
    endpoint_fixture_target(&x.ep, x.url, sizeof x.url, srv);
    x.ep.api = IB_ENDPOINT_API_LLAMA;
    ib_gen_request_spec at0[3] = { { 0, 16, NEW_TOKENS }, { 0, 16, NEW_TOKENS }, { 0, 16, NEW_TOKENS } };
    ib_gen_serve_config_init(&x.cfg);
    x.cfg.arrivals = IB_ARRIVALS_TRACE;
    x.cfg.trace = at0;
    x.cfg.n_trace = 3;
    x.cfg.warmup_requests = 0;
    x.st = ib_measure_endpoint_serve(&x.ep, &x.cfg, &x.r, &x.e, &x.err);
    CHECK(x.st == IB_OK);
    CHECK_EQ_INT(x.r.n_completed, 3);
    for (size_t i = 0; i < x.e.n_requests; i++) {
        CHECK(x.e.requests[i].server_prompt_ms == TTFT_MS);
        CHECK(x.e.requests[i].server_predicted_ms == (NEW_TOKENS - 1) * ITL_MS);
    }
    double request_ms = TTFT_MS + (NEW_TOKENS - 1) * ITL_MS;
    CHECK(x.r.ttft.max >= 2 * request_ms + TTFT_MS);
    endpoint_run_free(&x);
    ib_script_server_stop(srv);
}

/* The script's failure on every second request, counted by its cause. */
static void expect_failures(ib_script s, ib_endpoint_failure cause, size_t n_failed)
{
    ib_script_server *srv = endpoint_fixture_start(&s);
    endpoint_run x;
    serve(&x, srv, 0);
    CHECK(x.st == (n_failed == REQUESTS ? IB_ERR_RUNTIME : IB_OK));
    CHECK_EQ_INT(x.e.failures[cause], n_failed);
    CHECK_EQ_INT(x.e.n_failed, n_failed);
    CHECK_EQ_INT(x.r.n_completed, REQUESTS - n_failed);
    /* The server's timings are over the completed requests alone. */
    CHECK_EQ_INT(x.e.server_prompt_ms.n, REQUESTS - n_failed);
    endpoint_run_free(&x);
    ib_script_server_stop(srv);
}

/* No final event (the stream's end in this API), a malformed event,
 * fewer tokens than asked (the final event's count). */
static void test_native_failures(void)
{
    ib_script s = script();
    s.failure = IB_SCRIPT_FAIL_NO_DONE;
    s.fail_every = 2;
    expect_failures(s, IB_EP_NO_DONE, REQUESTS / 2);
    s.failure = IB_SCRIPT_FAIL_MALFORMED;
    s.fail_after_chunks = 1;
    expect_failures(s, IB_EP_MALFORMED, REQUESTS / 2);
    s = script();
    s.stop_after_tokens = NEW_TOKENS - 1;
    expect_failures(s, IB_EP_SHORT, REQUESTS);
}

/* An API the library does not know: refused before anything is sent. */
static void test_unknown_api(void)
{
    ib_script s = script();
    ib_script_server *srv = endpoint_fixture_start(&s);
    ib_endpoint_config ep;
    ib_endpoint_config_init(&ep);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ib_script_server_port(srv));
    ep.url = url;
    ep.model = "tiny";
    ep.api = (ib_endpoint_api)7;
    int32_t vocab;
    ib_error err = { { 0 } };
    CHECK(ib_endpoint_check(&ep, &vocab, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "API 7 unknown") != NULL);
    CHECK(ib_endpoint_api_str((ib_endpoint_api)7) == NULL);
    CHECK(strcmp(ib_endpoint_api_str(IB_ENDPOINT_API_LLAMA), "llama") == 0);
    ib_script_server_stop(srv);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_native_counts_and_timings);
    RUN(test_native_timings_leave_the_wait_out);
    RUN(test_native_failures);
    RUN(test_unknown_api);
    return check_summary("test_endpoint_native");
}
