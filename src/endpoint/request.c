/* One request to the endpoint: its body (the prompt as token ids, so that
 * P tokens are P tokens on the server; a fixed output length), its stream
 * read event by event as libcurl hands the bytes over, each chunk stamped
 * on the host clock when its bytes arrive, and its failure cause when it
 * ends. */
#include "base/numeric.h"
#include "endpoint/chunk.h"
#include "endpoint/endpoint.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Seeds the prompt ids apart from the schedule's streams. */
#define PROMPT_IDS_SEED 0x69647370726f6dull

static const char *const api_names[] = { "completions", "llama" };
static const char *const api_paths[] = { "/v1/completions", "/completion" };

const char *ib_endpoint_api_str(ib_endpoint_api api)
{
    return api >= 0 && (size_t)api < sizeof api_names / sizeof *api_names ? api_names[api] : NULL;
}

const char *ib__ep_api_path(ib_endpoint_api api) { return ib_endpoint_api_str(api) ? api_paths[api] : NULL; }

/* The OpenAI completions request with the fields that make the tokens
 * exact on the servers that have them (ignore_eos: llama-server, vLLM,
 * SGLang; continuous_usage_stats: vLLM's usage in every chunk;
 * timings_per_token and return_tokens: llama-server's predicted_n and
 * token ids in every chunk). A server ignores the fields it does not
 * know. */
static void completions_fields(cJSON *root, const ib_gen_request_spec *s)
{
    cJSON *opts = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "max_tokens", s->output_tokens);
    cJSON_AddBoolToObject(root, "ignore_eos", 1);
    cJSON_AddNumberToObject(root, "temperature", 0);
    cJSON_AddBoolToObject(root, "stream", 1);
    cJSON_AddBoolToObject(opts, "include_usage", 1);
    cJSON_AddBoolToObject(opts, "continuous_usage_stats", 1);
    cJSON_AddItemToObject(root, "stream_options", opts);
    cJSON_AddBoolToObject(root, "timings_per_token", 1);
    cJSON_AddBoolToObject(root, "return_tokens", 1);
}

/* llama.cpp's own request (tools/server, POST /completion): n_predict
 * tokens whatever the model says (ignore_eos), streamed, each event with
 * its token ids, the last with the counts and the timings; cache_prompt
 * as llama-server's default (on), said rather than assumed. */
static void llama_fields(cJSON *root, const ib_gen_request_spec *s)
{
    cJSON_AddNumberToObject(root, "n_predict", s->output_tokens);
    cJSON_AddBoolToObject(root, "ignore_eos", 1);
    cJSON_AddNumberToObject(root, "temperature", 0);
    cJSON_AddBoolToObject(root, "stream", 1);
    cJSON_AddBoolToObject(root, "cache_prompt", 1);
}

/* The body in api: the prompt as token ids drawn from seed, the model,
 * the API's fields. */
static char *make_body(ib_endpoint_api api, const char *model, const ib_gen_request_spec *s, int32_t vocab,
                       uint64_t seed)
{
    int *ids = malloc((size_t)s->prompt_tokens * sizeof *ids);
    if (!ids) return NULL;
    uint64_t state = seed ^ PROMPT_IDS_SEED;
    uint64_t span = (uint64_t)(vocab - IB__EP_LOWEST_ID);
    for (int32_t i = 0; i < s->prompt_tokens; i++)
        ids[i] = IB__EP_LOWEST_ID + (int)(ib__splitmix64(&state) % span);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", model);
    cJSON_AddItemToObject(root, "prompt", cJSON_CreateIntArray(ids, s->prompt_tokens));
    if (api == IB_ENDPOINT_API_LLAMA)
        llama_fields(root, s);
    else
        completions_fields(root, s);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    free(ids);
    return text;
}

/* Keeps a chunk of k tokens that arrived at t. */
static bool keep_chunk(ib__ep_transfer *t, double at_ms, int64_t k)
{
    ib_endpoint_request *ep = t->ep;
    if (ep->n_chunks == t->cap_chunks) {
        size_t cap = t->cap_chunks ? 2 * t->cap_chunks : 64;
        double *ms = realloc(ep->chunk_ms, cap * sizeof *ms);
        if (ms) ep->chunk_ms = ms;
        int32_t *tk = ms ? realloc(ep->chunk_token_counts, cap * sizeof *tk) : NULL;
        if (tk) ep->chunk_token_counts = tk;
        if (!ms || !tk) return false;
        t->cap_chunks = cap;
    }
    ep->chunk_ms[ep->n_chunks] = at_ms;
    ep->chunk_token_counts[ep->n_chunks++] = (int32_t)k;
    ep->chunk_tokens += k;
    return true;
}

/* llama.cpp's final event: its counts are the request's usage. */
static void keep_final_counts(ib_endpoint_request *ep, const ib__chunk *c)
{
    if (c->tokens_predicted >= 0) ep->usage_tokens = c->tokens_predicted;
    if (c->tokens_evaluated >= 0) ep->usage_prompt_tokens = c->tokens_evaluated;
}

/* The server's timings as the event states them (the last are the
 * request's). */
static void keep_timings(ib_endpoint_request *ep, const ib__chunk *c)
{
    if (!isnan(c->server_prompt_ms)) ep->server_prompt_ms = c->server_prompt_ms;
    if (!isnan(c->server_predicted_ms)) ep->server_predicted_ms = c->server_predicted_ms;
    if (c->server_prompt_n >= 0) ep->server_prompt_n = c->server_prompt_n;
    if (c->server_cache_n >= 0) ep->server_cache_n = c->server_cache_n;
}

typedef struct event_ctx {
    ib__ep_transfer *t;
    double at_ms; /* when the bytes that completed the event arrived */
} event_ctx;

static bool on_event(void *ctx, const char *type, const char *data, size_t len)
{
    event_ctx *e = ctx;
    ib__ep_transfer *t = e->t;
    if (t->done || strcmp(type, "message")) return true; /* past [DONE], or not a completion's */
    ib__chunk c;
    ib_error err;
    if (ib__chunk_parse(data, len, &c, &err) != IB_OK) {
        t->failure = IB_EP_MALFORMED;
        return false;
    }
    if (c.error) {
        t->failure = IB_EP_ERROR;
        return false;
    }
    t->done = c.done || c.stop; /* [DONE], or llama.cpp's final event */
    if (c.usage_tokens >= 0) t->ep->usage_tokens = c.usage_tokens;
    if (c.prompt_tokens >= 0) t->ep->usage_prompt_tokens = c.prompt_tokens;
    if (c.stop) keep_final_counts(t->ep, &c);
    keep_timings(t->ep, &c);
    if (c.native && c.token_ids >= 0)
        t->ep->id_tokens = (t->ep->id_tokens < 0 ? 0 : t->ep->id_tokens) + c.token_ids;
    bool exact;
    int64_t k = c.done ? 0 : ib__chunk_tokens(&c, t->ep->chunk_tokens, &exact);
    if (k < 0 || k > IB_GEN_SERVE_MAX_TOKENS) {
        t->failure = IB_EP_MALFORMED; /* a cumulative count that went back */
        return false;
    }
    if (k == 0) return true;
    t->ep->tokens_assumed |= !exact;
    if (!keep_chunk(t, e->at_ms, k)) t->failure = IB_EP_OTHER;
    return t->failure == IB_EP_OK;
}

static size_t on_bytes(char *bytes, size_t size, size_t n, void *ctx)
{
    ib__ep_transfer *t = ctx;
    event_ctx e = { t, ib__now_ms() - t->origin_ms };
    if (!t->checked_status) {
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->ep->http_status);
        t->checked_status = true;
    }
    if (t->ep->http_status != 200) return size * n; /* an error page: not a stream, read and dropped */
    ib_status st = ib__sse_feed(&t->sse, bytes, size * n, on_event, &e);
    if (st != IB_OK && t->failure == IB_EP_OK) t->failure = IB_EP_MALFORMED; /* a line past the bound */
    return st == IB_OK ? size * n : 0;
}

/* libcurl is about to send the request (connection made or reused): the
 * send instant, on the same host clock as the schedule. */
static int on_send(void *ctx, char *ip, char *local_ip, int port, int local_port)
{
    (void)ip, (void)local_ip, (void)port, (void)local_port;
    ib__ep_transfer *t = ctx;
    t->ep->sent_ms = ib__now_ms() - t->origin_ms;
    t->ep->lateness_ms = t->ep->sent_ms - t->req->spec.arrival_ms;
    return CURL_PREREQFUNC_OK;
}

ib_status ib__ep_transfer_init(ib__ep_transfer *t, const char *completions_url, ib_endpoint_api api,
                               const char *model, double timeout_ms, int32_t vocab, uint64_t seed,
                               ib_gen_serve_request *req, ib_endpoint_request *ep, ib_error *err)
{
    ib__sse_init(&t->sse);
    t->req = req;
    t->ep = ep;
    t->body = make_body(api, model, &req->spec, vocab, seed);
    t->easy = curl_easy_init();
    t->headers = curl_slist_append(NULL, "Content-Type: application/json");
    /* No "Expect: 100-continue" (libcurl's for a body over 1 MiB: a long
     * prompt of ids): it would hold the body back for the server's answer,
     * up to a second, inside the request's TTFT. */
    struct curl_slist *more = t->headers ? curl_slist_append(t->headers, "Expect:") : NULL;
    if (more) t->headers = more;
    IB_FAIL_IF(!t->body || !t->easy || !more, err, IB_ERR_NO_MEMORY, "out of memory for a request");
    CURL *h = t->easy;
    ib__ep_easy_defaults(h);
    curl_easy_setopt(h, CURLOPT_URL, completions_url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, t->headers);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, t->body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_bytes);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, on_send);
    curl_easy_setopt(h, CURLOPT_PREREQDATA, t);
    curl_easy_setopt(h, CURLOPT_PRIVATE, t);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)ceil(timeout_ms));
    return IB_OK;
}

void ib__ep_request_unsent(ib_gen_serve_request *req, ib_endpoint_request *ep)
{
    *ep = (ib_endpoint_request){ .sent_ms = NAN,
                                 .lateness_ms = NAN,
                                 .usage_tokens = -1,
                                 .usage_prompt_tokens = -1,
                                 .server_prompt_ms = NAN,
                                 .server_predicted_ms = NAN,
                                 .server_prompt_n = -1,
                                 .server_cache_n = -1,
                                 .id_tokens = -1 };
    req->admitted_ms = req->first_token_ms = req->end_ms = NAN;
    req->slot = -1;
    req->generated_tokens = 0;
}

static ib_endpoint_failure transport_failure(CURLcode code)
{
    switch (code) {
    case CURLE_OK: return IB_EP_OK;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST: return IB_EP_CONNECT;
    case CURLE_OPERATION_TIMEDOUT: return IB_EP_TIMEOUT;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING: return IB_EP_RESET;
    default: return IB_EP_OTHER;
    }
}

/* The cause, the first that holds in the order a reader meets them. */
static ib_endpoint_failure classify(const ib__ep_transfer *t, CURLcode code)
{
    const ib_endpoint_request *ep = t->ep;
    if (t->failure != IB_EP_OK) return t->failure;
    if (code != CURLE_OK) return transport_failure(code);
    if (ep->http_status != 200) return IB_EP_HTTP;
    if (!t->done) return IB_EP_NO_DONE;
    if (ep->usage_tokens < 0) return IB_EP_NO_USAGE;
    if (ep->usage_tokens != t->req->spec.output_tokens) return IB_EP_SHORT;
    if (ep->chunk_tokens != ep->usage_tokens) return IB_EP_MISMATCH;
    return IB_EP_OK;
}

void ib__ep_transfer_finish(ib__ep_transfer *t, CURLcode code)
{
    ib_endpoint_request *ep = t->ep;
    ib_gen_serve_request *r = t->req;
    if (ep->http_status == 0) curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &ep->http_status);
    ep->failure = classify(t, code);
    r->admitted_ms = ep->sent_ms;
    if (ep->n_chunks > 0) {
        r->first_token_ms = ep->chunk_ms[0];
        r->end_ms = ep->chunk_ms[ep->n_chunks - 1];
    }
    /* A failed request never counts as completed (its tokens kept below
     * the count asked), whatever it received. */
    int64_t got = ep->failure == IB_EP_OK ? ep->usage_tokens : ep->chunk_tokens;
    if (ep->failure != IB_EP_OK && got >= r->spec.output_tokens) got = r->spec.output_tokens - 1;
    r->generated_tokens = (int32_t)got;
}

void ib__ep_transfer_free(ib__ep_transfer *t)
{
    if (!t) return;
    curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->headers);
    free(t->body);
    ib__sse_free(&t->sse);
    t->easy = NULL;
    t->headers = NULL;
    t->body = NULL;
}
