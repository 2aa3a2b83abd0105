/* The scripted streaming server (src/endpoint/script_server.c), spoken to
 * with libcurl's easy interface: the events it sends (chunks, tokens a
 * chunk, usage, [DONE]), the failures it is scripted to make, its stamps'
 * count and order and the times they were planned for. No timing is
 * asserted: a planned time is the script's arithmetic, exact whatever the
 * machine's load. A bad script is refused in one line. */
#include "check.h"
#include "endpoint/script_server.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include <stdlib.h>
#include <string.h>

/* --- a tiny client ------------------------------------------------------------------ */

typedef struct reply {
    CURLcode code;
    long status;
    char body[1 << 16];
    size_t n;
} reply;

static size_t gather(char *data, size_t size, size_t nmemb, void *ctx)
{
    reply *r = ctx;
    size_t n = size * nmemb;
    if (r->n + n >= sizeof r->body) return 0;
    memcpy(r->body + r->n, data, n);
    r->n += n;
    r->body[r->n] = '\0';
    return n;
}

/* GET path, or POST body (JSON) to it when body is not NULL. */
static void ask(const ib_script_server *srv, const char *path, const char *body, long timeout_ms, reply *r)
{
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", ib_script_server_port(srv), path);
    memset(r, 0, sizeof *r);
    CURL *c = curl_easy_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, gather);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    }
    r->code = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
}

/* The stream's events' data, in order (at most 64). */
typedef struct events {
    char *data[64];
    size_t n;
} events;

static void split_events(char *body, events *e)
{
    e->n = 0;
    for (char *s = body, *end; e->n < 64 && (end = strstr(s, "\n\n")); s = end + 2) {
        *end = '\0';
        if (!strncmp(s, "data: ", 6)) e->data[e->n++] = s + 6;
    }
}

/* The number of tokens a chunk's text holds (each token is " x"), -1 when
 * the event is not a chunk of text. */
static int chunk_text_tokens(const char *data)
{
    cJSON *root = cJSON_Parse(data);
    const cJSON *text =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "choices"), 0), "text");
    int n = cJSON_IsString(text) ? (int)strlen(text->valuestring) / 2 : -1;
    cJSON_Delete(root);
    return n;
}

/* A number at root.a.b (b NULL: root.a) of an event; -1 when absent. */
static double number_at(const char *data, const char *a, const char *b)
{
    cJSON *root = cJSON_Parse(data);
    const cJSON *v = cJSON_GetObjectItem(root, a);
    if (b) v = cJSON_GetObjectItem(v, b);
    double x = cJSON_IsNumber(v) ? v->valuedouble : -1;
    cJSON_Delete(root);
    return x;
}

static int array_size_at(const char *data, const char *key)
{
    cJSON *root = cJSON_Parse(data);
    const cJSON *v = cJSON_GetObjectItem(root, key);
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    cJSON_Delete(root);
    return n;
}

static bool finish_is(const char *data, const char *want)
{
    cJSON *root = cJSON_Parse(data);
    const cJSON *f =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "choices"), 0), "finish_reason");
    bool same = want ? cJSON_IsString(f) && !strcmp(f->valuestring, want) : cJSON_IsNull(f);
    cJSON_Delete(root);
    return same;
}

static ib_script_server *start(const ib_script *s)
{
    ib_script_server *srv = NULL;
    ib_error err = { { 0 } };
    ib_status st = ib_script_server_start(s, &srv, &err);
    if (st != IB_OK) fprintf(stderr, "start: %s\n", err.message);
    CHECK(st == IB_OK && ib_script_server_port(srv) > 0);
    return srv;
}

/* The stamps' kinds in order, as letters (A arrived, C chunk, U usage, D
 * done, R refused, B broken, E ended), and the stamps themselves. */
static size_t stamp_kinds(ib_script_server *srv, char *kinds, ib_script_stamp *stamps, size_t cap)
{
    size_t n = ib_script_server_stamps(srv, stamps, cap);
    for (size_t i = 0; i < n && i < cap; i++) kinds[i] = "ACUDRBE"[stamps[i].kind];
    kinds[n < cap ? n : cap] = '\0';
    return n;
}

static const char *const ten_tokens =
    "{\"model\":\"script\",\"prompt\":[1,2,3,4,5],\"max_tokens\":10,\"stream\":true,"
    "\"stream_options\":{\"include_usage\":true},\"return_tokens\":true}";

/* --- the stream as scripted ------------------------------------------------------------ */

/* ttft 2 ms, then gaps of 1 and 2 ms in turn: tokens due at 2, 3, 5, 6, 8,
 * 9, 11, 12, 14, 15 ms; three a chunk, a chunk leaves with its last token:
 * at 5, 9, 14 and 15 ms, holding 3, 3, 3 and 1 tokens. */
static void test_chunks_tokens_usage_and_stamps(void)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = 2;
    s.n_gaps = 2;
    s.gaps_ms[0] = 1;
    s.gaps_ms[1] = 2;
    s.tokens_per_chunk = 3;
    ib_script_server *srv = start(&s);
    if (!srv) return;
    static reply r;
    ask(srv, "/v1/completions", ten_tokens, 10000, &r);
    CHECK(r.code == CURLE_OK);
    CHECK_EQ_INT(r.status, 200);
    events e;
    split_events(r.body, &e);
    CHECK_EQ_INT(e.n, 6); /* 4 chunks, the usage, [DONE] */
    int want[4] = { 3, 3, 3, 1 };
    for (int i = 0; i < 4 && e.n == 6; i++) {
        CHECK_EQ_INT(chunk_text_tokens(e.data[i]), want[i]);
        CHECK_EQ_INT(array_size_at(e.data[i], "tokens"), want[i]);
        CHECK(finish_is(e.data[i], i < 3 ? NULL : "length"));
        CHECK(strstr(e.data[i], "\"id\":\"cmpl-script-0\",\"object\":\"text_completion\"") != NULL);
    }
    if (e.n == 6) {
        CHECK_EQ_INT(number_at(e.data[4], "usage", "prompt_tokens"), 5);
        CHECK_EQ_INT(number_at(e.data[4], "usage", "completion_tokens"), 10);
        CHECK_EQ_INT(number_at(e.data[4], "usage", "total_tokens"), 15);
        CHECK_EQ_INT(array_size_at(e.data[4], "choices"), 0);
        CHECK(!strcmp(e.data[5], "[DONE]"));
    }
    ib_script_stamp st[16];
    char kinds[17];
    CHECK_EQ_INT(stamp_kinds(srv, kinds, st, 16), 8);
    CHECK(!strcmp(kinds, "ACCCCUDE"));
    double due_ms[4] = { 5, 9, 14, 15 };
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(st[1 + i].tokens, want[i]);
        CHECK_NEAR(st[1 + i].planned_ms - st[0].sent_ms, due_ms[i], 1e-6);
    }
    CHECK_EQ_INT(st[0].tokens, 5); /* the arrival: the prompt's tokens */
    for (int i = 0; i < 8; i++) CHECK_EQ_INT(st[i].request, 0);
    for (int i = 1; i < 8; i++) CHECK(st[i].sent_ms >= st[i - 1].sent_ms);
    ib_script_server_stop(srv);
}

/* vLLM's continuous usage: every chunk says the tokens so far; no
 * include_usage: no usage chunk; no max_tokens: the script's default. */
static void test_continuous_usage_and_default_length(void)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = 0;
    s.itl_ms = 0;
    s.tokens_per_chunk = 2;
    s.default_max_tokens = 5;
    ib_script_server *srv = start(&s);
    if (!srv) return;
    static reply r;
    ask(srv, "/v1/completions",
        "{\"prompt\":\"abcd\",\"stream\":true,\"stream_options\":{\"continuous_usage_stats\":true}}", 10000,
        &r);
    events e;
    split_events(r.body, &e);
    CHECK_EQ_INT(e.n, 4); /* 2 + 2 + 1 tokens, [DONE] */
    int so_far[3] = { 2, 4, 5 };
    for (int i = 0; i < 3 && e.n == 4; i++) {
        CHECK_EQ_INT(number_at(e.data[i], "usage", "completion_tokens"), so_far[i]);
        CHECK_EQ_INT(number_at(e.data[i], "usage", "prompt_tokens"), 4); /* a string: a byte a token */
        CHECK_EQ_INT(array_size_at(e.data[i], "tokens"), -1);
    }
    ib_script_server_stop(srv);
}

/* Fewer tokens than asked: the stream stops at 4, says "stop", and its
 * usage counts the 4. */
static void test_fewer_tokens_than_asked(void)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = 0;
    s.itl_ms = 0;
    s.stop_after_tokens = 4;
    ib_script_server *srv = start(&s);
    if (!srv) return;
    static reply r;
    ask(srv, "/v1/completions", ten_tokens, 10000, &r);
    events e;
    split_events(r.body, &e);
    CHECK_EQ_INT(e.n, 6); /* 4 chunks of one token, the usage, [DONE] */
    if (e.n == 6) {
        CHECK(finish_is(e.data[3], "stop"));
        CHECK_EQ_INT(number_at(e.data[4], "usage", "completion_tokens"), 4);
    }
    ib_script_server_stop(srv);
}

/* --- failures on demand ------------------------------------------------------------- */

static void test_unknown_model_404_and_bad_requests_400(void)
{
    ib_script s;
    ib_script_init(&s);
    ib_script_server *srv = start(&s);
    if (!srv) return;
    static reply r;
    ask(srv, "/v1/completions", "{\"model\":\"gpt\",\"prompt\":[1],\"stream\":true}", 10000, &r);
    CHECK_EQ_INT(r.status, 404);
    CHECK(!strcmp(r.body,
                  "{\"error\":{\"message\":\"The model `gpt` does not exist.\",\"type\":\"NotFoundError\","
                  "\"code\":404}}"));
    ask(srv, "/v1/completions", "{\"prompt\":[1],\"stream\":false}", 10000, &r);
    CHECK_EQ_INT(r.status, 400);
    ask(srv, "/v1/completions", "{\"stream\":true}", 10000, &r);
    CHECK_EQ_INT(r.status, 400);
    CHECK(strstr(r.body, "prompt is neither a string nor an array of token ids") != NULL);
    ask(srv, "/v1/completions", "{\"prompt\":[1],\"stream\":true,\"max_tokens\":0}", 10000, &r);
    CHECK_EQ_INT(r.status, 400);
    ask(srv, "/v1/completions", "not json", 10000, &r);
    CHECK_EQ_INT(r.status, 400);
    ask(srv, "/v1/chat/completions", "{}", 10000, &r);
    CHECK_EQ_INT(r.status, 404);
    ib_script_stamp st[16];
    char kinds[17];
    CHECK_EQ_INT(stamp_kinds(srv, kinds, st, 16), 10); /* the unknown path is no completion */
    CHECK(!strcmp(kinds, "ARARARARAR"));
    CHECK_EQ_INT(st[0].tokens, 1);
    CHECK_EQ_INT(st[1].tokens, 404);
    CHECK_EQ_INT(st[8].tokens, -1); /* not JSON: no prompt read */
    CHECK_EQ_INT(st[3].tokens, 400);
    CHECK_EQ_INT(st[9].request, 4);
    ib_script_server_stop(srv);
}

/* Every second request (the 2nd, the 4th) answers 500. */
static void test_http_500_every_second_request(void)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = 0;
    s.itl_ms = 0;
    s.failure = IB_SCRIPT_FAIL_HTTP_500;
    s.fail_every = 2;
    ib_script_server *srv = start(&s);
    if (!srv) return;
    static reply r;
    long want[4] = { 200, 500, 200, 500 };
    for (int i = 0; i < 4; i++) {
        ask(srv, "/v1/completions", ten_tokens, 10000, &r);
        CHECK_EQ_INT(r.status, want[i]);
    }
    CHECK(strstr(r.body, "\"type\":\"server_error\"") != NULL);
    ib_script_server_stop(srv);
}

/* A reset after two chunks: the client has the two and an error, no
 * [DONE]; the stamps end with the break. */
static void test_reset_mid_stream(void)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = 0;
    s.itl_ms = 0;
    s.failure = IB_SCRIPT_FAIL_RESET;
    s.fail_after_chunks = 2;
    ib_script_server *srv = start(&s);
    if (!srv) return;
    static reply r;
    ask(srv, "/v1/completions", ten_tokens, 10000, &r);
    CHECK(r.code == CURLE_RECV_ERROR || r.code == CURLE_PARTIAL_FILE);
    events e;
    split_events(r.body, &e);
    CHECK_EQ_INT(e.n, 2);
    CHECK(strstr(r.body, "[DONE]") == NULL);
    ib_script_stamp st[16];
    char kinds[17];
    stamp_kinds(srv, kinds, st, 16);
    CHECK(!strcmp(kinds, "ACCB"));
    CHECK_EQ_INT(st[3].tokens, IB_SCRIPT_FAIL_RESET);
    ib_script_server_stop(srv);
}

/* No [DONE]: the stream ends cleanly after its usage. */
static void test_no_done(void)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = 0;
    s.itl_ms = 0;
    s.failure = IB_SCRIPT_FAIL_NO_DONE;
    ib_script_server *srv = start(&s);
    if (!srv) return;
    static reply r;
    ask(srv, "/v1/completions", ten_tokens, 10000, &r);
    CHECK(r.code == CURLE_OK);
    events e;
    split_events(r.body, &e);
    CHECK_EQ_INT(e.n, 11); /* 10 chunks, the usage */
    CHECK(strstr(r.body, "[DONE]") == NULL);
    ib_script_stamp st[16];
    char kinds[17];
    stamp_kinds(srv, kinds, st, 16);
    CHECK(!strcmp(kinds, "ACCCCCCCCCCUE"));
    ib_script_server_stop(srv);
}

/* A malformed event after one chunk, then the rest as scripted. */
static void test_malformed_event(void)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = 0;
    s.itl_ms = 0;
    s.tokens_per_chunk = 5;
    s.failure = IB_SCRIPT_FAIL_MALFORMED;
    s.fail_after_chunks = 1;
    ib_script_server *srv = start(&s);
    if (!srv) return;
    static reply r;
    ask(srv, "/v1/completions", ten_tokens, 10000, &r);
    CHECK(r.code == CURLE_OK);
    events e;
    split_events(r.body, &e);
    CHECK_EQ_INT(e.n, 5); /* a chunk, the malformed event, a chunk, the usage, [DONE] */
    if (e.n == 5) {
        CHECK_EQ_INT(chunk_text_tokens(e.data[0]), 5);
        cJSON *bad = cJSON_Parse(e.data[1]);
        CHECK(bad == NULL);
        cJSON_Delete(bad);
        CHECK_EQ_INT(chunk_text_tokens(e.data[2]), 5);
        CHECK(!strcmp(e.data[4], "[DONE]"));
    }
    ib_script_stamp st[16];
    char kinds[17];
    stamp_kinds(srv, kinds, st, 16);
    CHECK(!strcmp(kinds, "ACBCUDE"));
    ib_script_server_stop(srv);
}

/* A stream that stalls after a chunk: the client gives up (its own
 * timeout, not asserted on), the server stops without waiting for it. */
static void test_stall_then_stop(void)
{
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = 0;
    s.itl_ms = 0;
    s.failure = IB_SCRIPT_FAIL_STALL;
    s.fail_after_chunks = 1;
    ib_script_server *srv = start(&s);
    if (!srv) return;
    static reply r;
    ask(srv, "/v1/completions", ten_tokens, 300, &r);
    CHECK(r.code == CURLE_OPERATION_TIMEDOUT);
    events e;
    split_events(r.body, &e);
    CHECK_EQ_INT(e.n, 1);
    ib_script_stamp st[16];
    char kinds[17];
    stamp_kinds(srv, kinds, st, 16);
    CHECK(!strcmp(kinds, "ACB"));
    ib_script_server_stop(srv);
}

/* --- the other endpoints, and the stamps across requests ------------------------------- */

static void test_health_models_and_arrival_order(void)
{
    ib_script s;
    ib_script_init(&s);
    ib__strlcpy(s.model, "zoo:tiny", sizeof s.model);
    s.ttft_ms = 0;
    s.itl_ms = 0;
    ib_script_server *srv = start(&s);
    if (!srv) return;
    static reply r;
    ask(srv, "/health", NULL, 10000, &r);
    CHECK_EQ_INT(r.status, 200);
    CHECK(!strcmp(r.body, "{\"status\":\"ok\"}"));
    ask(srv, "/v1/models", NULL, 10000, &r);
    CHECK(!strcmp(r.body,
                  "{\"object\":\"list\",\"data\":[{\"id\":\"zoo:tiny\",\"object\":\"model\",\"created\":0,"
                  "\"owned_by\":\"inferbench\"}]}"));
    for (int i = 0; i < 3; i++)
        ask(srv, "/v1/completions",
            "{\"model\":\"zoo:tiny\",\"prompt\":[1],\"max_tokens\":2,\"stream\":true}", 10000, &r);
    CHECK(strstr(r.body, "\"id\":\"cmpl-script-2\"") != NULL);
    ib_script_stamp st[32];
    char kinds[33];
    CHECK_EQ_INT(stamp_kinds(srv, kinds, st, 32), 15);
    CHECK(!strcmp(kinds, "ACCDEACCDEACCDE"));
    for (int i = 0; i < 15; i++) CHECK_EQ_INT(st[i].request, i / 5);
    ib_script_server_stop(srv);
}

/* --- bad scripts ------------------------------------------------------------------------- */

static void refused(void (*spoil)(ib_script *), const char *message)
{
    ib_script s;
    ib_script_init(&s);
    spoil(&s);
    ib_script_server *srv = (ib_script_server *)&s;
    ib_error err = { { 0 } };
    CHECK(ib_script_server_start(&s, &srv, &err) == IB_ERR_INVALID_ARG);
    CHECK(srv == NULL);
    if (strcmp(err.message, message)) fprintf(stderr, "got: %s\n", err.message);
    CHECK(!strcmp(err.message, message));
}

static void negative_ttft(ib_script *s) { s->ttft_ms = -1; }
static void nan_itl(ib_script *s) { s->itl_ms = NAN; }
static void negative_gap(ib_script *s)
{
    s->n_gaps = 2;
    s->gaps_ms[1] = -0.5;
}
static void no_tokens_per_chunk(ib_script *s) { s->tokens_per_chunk = 0; }
static void fail_every_zero(ib_script *s) { s->fail_every = 0; }
static void model_with_quote(ib_script *s) { ib__strlcpy(s->model, "a\"b", sizeof s->model); }
static void too_many_gaps(ib_script *s) { s->n_gaps = IB_SCRIPT_MAX_GAPS + 1; }

static void test_bad_scripts_refused(void)
{
    refused(negative_ttft, "script: ttft -1 ms is not a time >= 0");
    refused(nan_itl, "script: itl nan ms is not a time >= 0");
    refused(negative_gap, "script: gap 2 of -0.5 ms is not a time >= 0");
    refused(no_tokens_per_chunk, "script: 0 tokens a chunk, not 1 to 4096");
    refused(fail_every_zero, "script: fail every 0-th request, not >= 1");
    refused(model_with_quote, "script: model name empty, too long, or not letters, digits and . _ - : /");
    refused(too_many_gaps, "script: 65 gaps, not 0 to 64");
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_bad_scripts_refused);
    ib_script s;
    ib_script_init(&s);
    ib_script_server *srv = NULL;
    ib_error err = { { 0 } };
    if (ib_script_server_start(&s, &srv, &err) == IB_ERR_UNSUPPORTED) {
        fprintf(stderr, "skipped: %s\n", err.message);
        return check_failures ? 1 : 77;
    }
    ib_script_server_stop(srv);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    RUN(test_chunks_tokens_usage_and_stamps);
    RUN(test_continuous_usage_and_default_length);
    RUN(test_fewer_tokens_than_asked);
    RUN(test_unknown_model_404_and_bad_requests_400);
    RUN(test_http_500_every_second_request);
    RUN(test_reset_mid_stream);
    RUN(test_no_done);
    RUN(test_malformed_event);
    RUN(test_stall_then_stop);
    RUN(test_health_models_and_arrival_order);
    curl_global_cleanup();
    return check_summary("test_script_server");
}
