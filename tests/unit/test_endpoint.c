/* The HTTP client's readers and checks (docs/serve-endpoint.md), with
 * exact values: the SSE reader (every WHATWG rule, the stream cut at every
 * byte), a completion chunk's JSON and the tokens it carried, the
 * loopback-only URL, and the schedule the client shares with the
 * in-process engine. */
#include "check.h"
#include "core/schedule.h"
#include "core/serve_gen.h"
#include "endpoint/chunk.h"
#include "endpoint/endpoint.h"
#include "endpoint/sse.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* SSE                                                                       */
/* ------------------------------------------------------------------------ */

/* The events read, as "type|data" lines joined by '#'. */
typedef struct events {
    char text[1024];
    int n;
    int stop_after; /* 0: never stop */
} events;

static bool keep_event(void *ctx, const char *type, const char *data, size_t len)
{
    events *e = ctx;
    size_t k = strlen(e->text);
    snprintf(e->text + k, sizeof e->text - k, "%s|%.*s#", type, (int)len, data);
    e->n++;
    return e->stop_after == 0 || e->n < e->stop_after;
}

/* Reads stream[0..n) in pieces cut at cut1 and cut2 (cut1 <= cut2). */
static ib_status read_cut(const char *stream, size_t n, size_t cut1, size_t cut2, events *e)
{
    ib__sse s;
    ib__sse_init(&s);
    memset(e, 0, sizeof *e);
    ib_status st = ib__sse_feed(&s, stream, cut1, keep_event, e);
    if (st == IB_OK) st = ib__sse_feed(&s, stream + cut1, cut2 - cut1, keep_event, e);
    if (st == IB_OK) st = ib__sse_feed(&s, stream + cut2, n - cut2, keep_event, e);
    ib__sse_free(&s);
    return st;
}

/* Every rule of the standard in one stream: a BOM, comments, CRLF, CR
 * and LF line ends, data fields joined, one space after the colon
 * dropped (only one), a field without a colon, an event type, an event
 * with no data (not dispatched), an id and unknown fields (ignored), and
 * a last event with no blank line after it (never dispatched). */
static const char STREAM[] = "\xEF\xBB\xBF: a comment\r\n"
                             "data: one\r\ndata: 1\r\n\r\n"
                             "data:two\rdata:  three\r\r"
                             "event: ping\nid: 7\nretry: 10\nfoo: bar\ndata\n\n"
                             "event: lonely\n\n"
                             "data: {\"a\": 1}\n\n"
                             "data: [DONE]\n\n"
                             "data: cut off";
static const char EXPECTED[] = "message|one\n1#message|two\n three#ping|#message|{\"a\": 1}#message|[DONE]#";

static void test_sse_rules(void)
{
    events e;
    size_t n = sizeof STREAM - 1;
    CHECK(read_cut(STREAM, n, n, n, &e) == IB_OK);
    CHECK(strcmp(e.text, EXPECTED) == 0);
    CHECK_EQ_INT(e.n, 5);
    if (strcmp(e.text, EXPECTED)) fprintf(stderr, "read: %s\n", e.text);
}

/* The same events whatever the pieces: the stream cut at every pair of
 * places, so that a CRLF, the BOM, a field's name and the colon are each
 * split between two pieces. */
static void test_sse_every_cut(void)
{
    size_t n = sizeof STREAM - 1, wrong = 0;
    for (size_t a = 0; a <= n; a++)
        for (size_t b = a; b <= n; b += 3) {
            events e;
            if (read_cut(STREAM, n, a, b, &e) != IB_OK || strcmp(e.text, EXPECTED)) wrong++;
        }
    CHECK_EQ_INT(wrong, 0);
}

/* A CR at the end of one piece and the LF starting the next are one line
 * end: the blank line after it is a second one (an event), not a third. */
static void test_sse_split_crlf(void)
{
    events e;
    const char s[] = "data: x\r\ndata: z\r\n\r\ndata: y\r\n\r\n";
    CHECK(read_cut(s, sizeof s - 1, 8, 8, &e) == IB_OK);
    CHECK(strcmp(e.text, "message|x\nz#message|y#") == 0);
    /* Byte by byte. */
    ib__sse sse;
    ib__sse_init(&sse);
    memset(&e, 0, sizeof e);
    for (size_t i = 0; i + 1 < sizeof s; i++) CHECK(ib__sse_feed(&sse, s + i, 1, keep_event, &e) == IB_OK);
    ib__sse_free(&sse);
    CHECK(strcmp(e.text, "message|x\nz#message|y#") == 0);
}

/* A BOM only at the very start, once; a stream that starts like one but
 * is not keeps its bytes. */
static void test_sse_bom(void)
{
    events e;
    const char twice[] = "\xEF\xBB\xBF\xEF\xBB\xBF"
                         "data: a\n\n";
    CHECK(read_cut(twice, sizeof twice - 1, 1, 4, &e) == IB_OK);
    CHECK(strcmp(e.text, "") == 0); /* the second BOM begins a field name: no data field */
    const char almost[] = "\xEF\xBB"
                          "data: a\n\ndata: b\n\n";
    CHECK(read_cut(almost, sizeof almost - 1, 1, 2, &e) == IB_OK);
    CHECK(strcmp(e.text, "message|b#") == 0); /* the first line's name is "\xEF\xBB" "data" */
}

/* The reader stops when told, and refuses a line past its bound (and
 * everything after). */
static void test_sse_stop_and_bound(void)
{
    events e;
    ib__sse s;
    ib__sse_init(&s);
    memset(&e, 0, sizeof e);
    e.stop_after = 1;
    const char two[] = "data: a\n\ndata: b\n\n";
    CHECK(ib__sse_feed(&s, two, sizeof two - 1, keep_event, &e) == IB_ERR_INTERRUPTED);
    CHECK_EQ_INT(e.n, 1);
    ib__sse_free(&s);

    ib__sse_init(&s);
    memset(&e, 0, sizeof e);
    char *big = malloc(IB__SSE_MAX_BYTES + 16);
    memset(big, 'x', IB__SSE_MAX_BYTES + 16);
    memcpy(big, "data: ", 6);
    CHECK(ib__sse_feed(&s, big, IB__SSE_MAX_BYTES + 16, keep_event, &e) == IB_ERR_INVALID_ARG);
    CHECK(ib__sse_feed(&s, "\n\n", 2, keep_event, &e) == IB_ERR_INVALID_ARG);
    CHECK_EQ_INT(e.n, 0);
    ib__sse_free(&s);
    free(big);
}

/* ------------------------------------------------------------------------ */
/* Chunks                                                                    */
/* ------------------------------------------------------------------------ */

static ib__chunk parse(const char *json, ib_status want)
{
    ib__chunk c;
    ib_error err = { { 0 } };
    CHECK(ib__chunk_parse(json, strlen(json), &c, &err) == want);
    if (want != IB_OK) CHECK(err.message[0] != '\0');
    return c;
}

/* What each server sends, and the tokens each chunk carried. */
static void test_chunk_counts(void)
{
    bool exact;
    /* llama-server with timings_per_token: its cumulative predicted_n. */
    ib__chunk c =
        parse("{\"choices\":[{\"text\":\"ab\",\"index\":0}],\"timings\":{\"predicted_n\":5}}", IB_OK);
    CHECK(c.has_choice && c.has_text && c.predicted_tokens == 5 && c.usage_tokens == -1);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 3, &exact), 2);
    CHECK(exact);
    /* vLLM with continuous_usage_stats: its cumulative usage. */
    c = parse("{\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":4,\"prompt_tokens\":8}}",
              IB_OK);
    CHECK_EQ_INT(c.prompt_tokens, 8);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 1, &exact), 3);
    CHECK(exact);
    /* llama.cpp's token ids of the chunk. */
    c = parse("{\"choices\":[{\"text\":\"a\"}],\"tokens\":[1,2]}", IB_OK);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 9, &exact), 2);
    CHECK(exact);
    /* Nothing stated: one token assumed for a piece of text, none for an
     * empty one (a finish_reason chunk), and said. */
    c = parse("{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}", IB_OK);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 0, &exact), 1);
    CHECK(!exact);
    c = parse("{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}", IB_OK);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 0, &exact), 0);
    /* The final usage, no choice: no tokens of its own. */
    c = parse("{\"choices\":[],\"usage\":{\"completion_tokens\":8}}", IB_OK);
    CHECK(!c.has_choice && c.usage_tokens == 8);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 8, &exact), 0);
    /* A count that goes back. */
    c = parse("{\"choices\":[{\"text\":\"a\"}],\"timings\":{\"predicted_n\":2}}", IB_OK);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 3, &exact), -1);
    /* [DONE], an error, and what is malformed. */
    c = parse("[DONE]", IB_OK);
    CHECK(c.done);
    c = parse("{\"error\":{\"message\":\"boom\",\"code\":500}}", IB_OK);
    CHECK(c.error);
    parse("{\"choices\":[", IB_ERR_INVALID_ARG);
    parse("[1,2]", IB_ERR_INVALID_ARG);
    parse("{\"usage\":{\"completion_tokens\":-1}}", IB_ERR_INVALID_ARG);
    parse("{\"usage\":{\"completion_tokens\":1.5}}", IB_ERR_INVALID_ARG);
    parse("{\"usage\":{\"prompt_tokens\":true}}", IB_ERR_INVALID_ARG);
    parse("{\"timings\":{\"predicted_n\":\"3\"}}", IB_ERR_INVALID_ARG);
    parse("{\"tokens\":3}", IB_ERR_INVALID_ARG);
    c = parse("{\"usage\":null,\"choices\":[{\"text\":\"a\"}]}", IB_OK);
    CHECK(c.usage_tokens == -1);
}

/* llama.cpp's own /completion events (tools/server's partial and final
 * results): each event's ids, the final one's counts and timings. */
static void test_chunk_native(void)
{
    bool exact;
    ib__chunk c = parse("{\"index\":0,\"content\":\" a b\",\"tokens\":[7,8],\"stop\":false,\"id_slot\":0,"
                        "\"tokens_predicted\":5,\"tokens_evaluated\":16}",
                        IB_OK);
    CHECK(c.native && !c.stop && !c.has_choice && c.token_ids == 2);
    CHECK(c.tokens_predicted == 5 && c.tokens_evaluated == 16 && isnan(c.server_prompt_ms));
    CHECK_EQ_INT(ib__chunk_tokens(&c, 3, &exact), 2);
    CHECK(exact);
    /* A token held back (its text inside a UTF-8 character: no event, no
     * id): the count's change, not the ids. */
    c = parse("{\"content\":\"\\u00e9\",\"tokens\":[9],\"stop\":false,\"tokens_predicted\":5}", IB_OK);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 3, &exact), 2);
    /* Without a count: the ids. */
    c = parse("{\"content\":\"a\",\"tokens\":[9],\"stop\":false}", IB_OK);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 3, &exact), 1);
    c = parse("{\"content\":\"a\",\"stop\":false,\"tokens_predicted\":2}", IB_OK);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 3, &exact), -1);
    /* The final event: no ids of its own in a stream, the counts and timings. */
    c = parse("{\"content\":\"\",\"tokens\":[],\"stop\":true,\"tokens_predicted\":7,\"tokens_evaluated\":16,"
              "\"stop_type\":\"limit\",\"timings\":{\"cache_n\":3,\"prompt_n\":13,\"prompt_ms\":2.5,"
              "\"predicted_n\":7,\"predicted_ms\":6.25,\"predicted_per_token_ms\":1.04}}",
              IB_OK);
    CHECK(c.native && c.stop && c.tokens_predicted == 7 && c.tokens_evaluated == 16);
    CHECK(c.server_prompt_ms == 2.5 && c.server_predicted_ms == 6.25);
    CHECK(c.server_prompt_n == 13 && c.server_cache_n == 3 && c.predicted_tokens == 7);
    CHECK_EQ_INT(ib__chunk_tokens(&c, 7, &exact), 0);
    /* OpenAI's chunk is not native (no top-level stop), and its timings read as well. */
    c = parse("{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}],\"timings\":{\"prompt_ms\":1}}",
              IB_OK);
    CHECK(!c.native && c.server_prompt_ms == 1 && isnan(c.server_predicted_ms));
    parse("{\"stop\":true,\"tokens_predicted\":-2}", IB_ERR_INVALID_ARG);
    parse("{\"stop\":true,\"tokens_evaluated\":\"16\"}", IB_ERR_INVALID_ARG);
    parse("{\"stop\":true,\"timings\":{\"prompt_ms\":-1}}", IB_ERR_INVALID_ARG);
    parse("{\"stop\":true,\"timings\":{\"predicted_ms\":\"x\"}}", IB_ERR_INVALID_ARG);
    parse("{\"stop\":true,\"timings\":{\"cache_n\":0.5}}", IB_ERR_INVALID_ARG);
}

/* ------------------------------------------------------------------------ */
/* The URL: loopback only                                                    */
/* ------------------------------------------------------------------------ */

static void url_is(const char *url, const char *want)
{
    char *got = NULL;
    ib_error err = { { 0 } };
    ib_status st = ib__ep_url(url, "/v1/completions", &got, &err);
    if (want) {
        CHECK(st == IB_OK && got && !strcmp(got, want));
        if (!got || strcmp(got, want)) fprintf(stderr, "%s: %s\n", url, got ? got : err.message);
    } else {
        CHECK(st == IB_ERR_INVALID_ARG && !got);
        CHECK(err.message[0] != '\0' && !strchr(err.message, '\n'));
    }
    free(got);
}

static void test_url(void)
{
    url_is("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/completions");
    url_is("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1/completions");
    url_is("http://127.0.0.1:8080/api/v1?x=1#f", "http://127.0.0.1:8080/api/v1/completions");
    url_is("https://127.9.8.7", "https://127.9.8.7/v1/completions");
    url_is("http://localhost:1", "http://localhost:1/v1/completions");
    url_is("http://LOCALHOST:1", "http://LOCALHOST:1/v1/completions");
    url_is("http://[::1]:2", "http://[::1]:2/v1/completions");
    url_is("http://10.0.0.1:8080", NULL);
    url_is("http://128.0.0.1", NULL);
    url_is("http://example.com", NULL);
    url_is("http://localhost.example.com", NULL);
    url_is("http://[::2]:1", NULL);
    url_is("http://[::ffff:127.0.0.1]:1", NULL); /* not ::1: refused, as the rule says */
    url_is("ftp://127.0.0.1", NULL);
    url_is("file:///etc/passwd", NULL);
    url_is("127.0.0.1:8080", NULL); /* a scheme is required, never guessed */
    url_is("", NULL);
}

/* ------------------------------------------------------------------------ */
/* The shared schedule                                                       */
/* ------------------------------------------------------------------------ */

/* The client sends the engine's schedule: the same function, the same
 * arrivals and lengths from the same seed. */
static void test_shared_schedule(void)
{
    ib_gen_serve_config c;
    ib_gen_serve_config_init(&c);
    c.arrivals = IB_ARRIVALS_CONSTANT;
    c.rate = 4;
    c.requests = 3;
    c.prompt_min = c.prompt_max = 16;
    c.output_min = c.output_max = 8;
    ib_gen_serve_request *rs = NULL;
    size_t n = 0;
    ib_error err = { { 0 } };
    CHECK(ib__gen_serve_schedule(&c, &rs, &n, &err) == IB_OK);
    CHECK_EQ_INT(n, 3);
    for (size_t i = 0; rs && i < n; i++) {
        CHECK(rs[i].spec.arrival_ms == 250.0 * (double)i);
        CHECK(rs[i].spec.prompt_tokens == 16 && rs[i].spec.output_tokens == 8);
    }
    free(rs);
    c.arrivals = IB_ARRIVALS_POISSON;
    c.requests = 50;
    CHECK(ib__gen_serve_schedule(&c, &rs, &n, &err) == IB_OK);
    double want[50];
    ib__serve_poisson(4, 1, 50, want);
    size_t same = 0;
    for (size_t i = 0; rs && i < n; i++) same += rs[i].spec.arrival_ms == want[i];
    CHECK_EQ_INT(same, 50);
    free(rs);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_sse_rules);
    RUN(test_sse_every_cut);
    RUN(test_sse_split_crlf);
    RUN(test_sse_bom);
    RUN(test_sse_stop_and_bound);
    RUN(test_chunk_counts);
    RUN(test_chunk_native);
    RUN(test_url);
    RUN(test_shared_schedule);
    return check_summary("test_endpoint");
}
