/* The scripted streaming server's parts that need no HTTP library
 * (src/endpoint/script_server_script.c): the script's defaults, its check
 * and its clock. The server itself is script_server.c (libmicrohttpd), or
 * script_server_absent.c in a build without it. */
#ifndef IB_ENDPOINT_SCRIPT_SERVER_H
#define IB_ENDPOINT_SCRIPT_SERVER_H

#include "base/common.h"

/* IB_OK, or IB_ERR_INVALID_ARG with one line naming the bad field. */
ib_status ib__script_check(const ib_script *s, ib_error *err);

/* The gap before output token i (i >= 1) of a request: itl_ms, or the
 * gaps in turn. Token 0 comes ttft_ms after the arrival. */
double ib__script_gap_ms(const ib_script *s, int64_t i);

/* Whether the request that arrived index-th (0, 1, ...) fails as scripted. */
bool ib__script_fails(const ib_script *s, int64_t index);

/* The largest tokens_per_chunk a script may ask (a chunk's bytes stay small). */
#define IB__SCRIPT_MAX_TOKENS_PER_CHUNK 4096
/* Most slots a script may have. */
#define IB__SCRIPT_MAX_SLOTS 4096
/* The largest max_tokens a request may ask. */
#define IB__SCRIPT_MAX_TOKENS 1000000

/* One calibration point's errors: the client's record of a run (out, ep)
 * set against the scripted server's stamps st[0..n) of the same run, each
 * client request matched to the server's request of the same prompt
 * length nearest its send; p->rate and p->n_requests are the caller's.
 * IB_ERR_NO_MEMORY, else IB_OK. */
ib_status ib__client_errors(const ib_script_stamp *st, size_t n, const ib_gen_serve_result *out,
                            const ib_endpoint_result *ep, double bound_ms, ib_client_calibration_point *p,
                            ib_error *err);
#endif
