/* What the tests of serve --endpoint share (test_endpoint_*.c): the
 * scripted loopback server started (the test skipped, exit 77, where it
 * cannot be), and the settings every run starts from: the server's url and
 * its model "tiny", constant arrivals of 16-token prompts. Each test keeps
 * its own script and its own numbers. */
#ifndef IB_TESTS_ENDPOINT_FIXTURE_H
#define IB_TESTS_ENDPOINT_FIXTURE_H

#include "inferbench.h"

#include <stddef.h>

/* The server on s; exits 77 (ctest's skip) where the platform has no
 * loopback server; a failed check otherwise. */
ib_script_server *endpoint_fixture_start(const ib_script *s);

/* ep on srv: url (of url_size bytes, which ep points to) its address,
 * model "tiny", the rest the defaults. */
void endpoint_fixture_target(ib_endpoint_config *ep, char *url, size_t url_size, const ib_script_server *srv);

/* cfg the defaults but for `requests` constant arrivals of 16 prompt
 * tokens and new_tokens output tokens. */
void endpoint_fixture_arrivals(ib_gen_serve_config *cfg, int64_t requests, int32_t new_tokens);

/* One run over HTTP: its settings, its results, its status. */
typedef struct endpoint_run {
    char url[64];
    ib_endpoint_config ep;
    ib_gen_serve_config cfg;
    ib_gen_serve_result r;
    ib_endpoint_result e;
    ib_error err;
    ib_status st;
} endpoint_run;

/* x zeroed, then on srv with a request timeout of request_timeout_ms:
 * `requests` requests of 16 prompt and new_tokens output tokens, one every
 * 20 ms, `warmup` warm-up requests, a TTFT target none can miss. */
void endpoint_run_settings(endpoint_run *x, const ib_script_server *srv, double request_timeout_ms,
                           int64_t requests, int32_t new_tokens, int32_t warmup);

/* Frees x's results. */
void endpoint_run_free(endpoint_run *x);

#endif
