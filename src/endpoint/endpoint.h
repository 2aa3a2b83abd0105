/* The HTTP client's parts (docs/serve-endpoint.md): the endpoint checked
 * before a run (endpoint_check.c), one request's transfer (request.c),
 * the open-loop event loop (http_client.c). */
#ifndef IB_ENDPOINT_ENDPOINT_H
#define IB_ENDPOINT_ENDPOINT_H

#include "base/common.h"
#include "core/serve_gen.h"
#include "endpoint/sse.h"

#include <curl/curl.h>

/* Ids below this are a llama vocabulary's specials and bytes (<unk>, <s>,
 * </s>, <0x00>..<0xFF>): prompts draw above them. */
#define IB__EP_LOWEST_ID 259
/* The vocabulary assumed when the server does not state its own. */
#define IB__EP_DEFAULT_VOCAB 32000
/* A request's limit unless told: ten minutes, longer than any output a
 * loopback server should take, short enough that a hung one ends. */
#define IB__EP_DEFAULT_TIMEOUT_MS 600000.0
/* Most warm-up requests (as the in-process engine). */
#define IB__EP_MAX_WARMUP 10000
/* The wait for GET /v1/models before the run. */
#define IB__EP_CHECK_TIMEOUT_MS 10000

/* The server's root URL of cfg->url with path appended ("/v1/models"),
 * malloc'ed, after checking it is http(s) on a loopback host:
 * IB_ERR_INVALID_ARG with one line otherwise. */
ib_status ib__ep_url(const char *url, const char *path, char **out, ib_error *err);

/* The settings every transfer of the client has: loopback only (no
 * proxy from the environment, no redirect), http(s) only, no signals. */
void ib__ep_easy_defaults(CURL *easy);

/* One request's transfer: its body, its stream read as it arrives. */
typedef struct ib__ep_transfer {
    CURL *easy;
    struct curl_slist *headers;
    char *body;
    ib__sse sse;
    double origin_ms; /* the schedule's origin on the host clock */
    ib_gen_serve_request *req;
    ib_endpoint_request *ep;
    size_t cap_chunks;
    bool done;                   /* [DONE] read */
    bool checked_status;         /* the HTTP status looked at (first bytes) */
    ib_endpoint_failure failure; /* found while reading (malformed, error event) */
} ib__ep_transfer;

/* Request req (and ep) as before it is sent: its times NaN, no token, no
 * usage, no failure (a request never sent, the run interrupted first,
 * stays so). */
void ib__ep_request_unsent(ib_gen_serve_request *req, ib_endpoint_request *ep);

/* Prepares t for request req (its prompt ids drawn from seed and index
 * below vocab) to completions_url: the easy handle and the body. */
ib_status ib__ep_transfer_init(ib__ep_transfer *t, const char *completions_url, const char *model,
                               double timeout_ms, int32_t vocab, uint64_t seed, ib_gen_serve_request *req,
                               ib_endpoint_request *ep, ib_error *err);

/* The transfer ended with libcurl's code: the request's failure cause (or
 * IB_EP_OK) and its figures' times set. */
void ib__ep_transfer_finish(ib__ep_transfer *t, CURLcode code);

void ib__ep_transfer_free(ib__ep_transfer *t);

/* --- The client across runs (http_client.c; endpointrates: the search and
 * the curve over rates, endpoint_rates.c, warm up once and serve each rate
 * on it) --- */
typedef struct ib__ep_client ib__ep_client;

/* Checks scfg's requests and the endpoint (ib_endpoint_check: nothing
 * sent when it fails) and opens the client; closed with
 * ib__ep_client_close. */
ib_status ib__ep_client_open(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                             ib__ep_client **out, ib_error *err);

/* The warm-up of the open's scfg (its first requests' lengths, all at
 * once, forgotten). */
ib_status ib__ep_client_warm_up(ib__ep_client *c, ib_error *err);

/* The requests the last warm-up completed a second (NaN: none). */
double ib__ep_client_warm_rate(const ib__ep_client *c);

/* One measured run of scfg (warmed up first when warm) as
 * ib_measure_endpoint_serve fills out and ep; watch (NULL: none) is told
 * each request's first chunk and its end (a failure too), and when it
 * returns false the run ends: no request sent after, those in flight
 * aborted and cut (ib_endpoint_request.cut, not failures). */
ib_status ib__ep_client_serve(ib__ep_client *c, const ib_gen_serve_config *scfg,
                              const ib__gen_serve_watch *watch, bool warm, ib_gen_serve_result *out,
                              ib_endpoint_result *ep, ib_error *err);

void ib__ep_client_close(ib__ep_client *c);

#endif
