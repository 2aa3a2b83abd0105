/* The client's ceiling (src/report/client_ceiling.c): the file's text made
 * and read back exactly, a text that is not one refused in one line, and
 * a run's load set against the ceiling (the streams open at once counted
 * over overlapping requests) by hand, no server. */
#include "check.h"
#include "report/printer.h"

#include <stdlib.h>
#include <string.h>

static void test_file_text_round_trip(void)
{
    ib_client_calibration_result r;
    memset(&r, 0, sizeof r);
    r.ceiling_rate = 64, r.ceiling_streams = 12, r.ceiling_tokens_per_s = 2048.5, r.bound_ms = 1;
    char *text = ib_client_ceiling_file_text(&r, "2026-12-06T22:00:00Z", "gpu-host", "0.1.0");
    CHECK(text != NULL);
    ib_client_ceiling c;
    memset(&c, 0, sizeof c);
    snprintf(c.path, sizeof c.path, "/kept/path");
    ib_error err = { { 0 } };
    CHECK(ib_client_ceiling_parse(text, &c, &err) == IB_OK);
    CHECK(c.state == IB_CEILING_CURRENT);
    CHECK(c.rate == 64 && c.streams == 12 && c.tokens_per_s == 2048.5 && c.bound_ms == 1);
    CHECK(!strcmp(c.date, "2026-12-06T22:00:00Z") && !strcmp(c.host, "gpu-host") &&
          !strcmp(c.version, "0.1.0"));
    CHECK(!strcmp(c.path, "/kept/path")); /* the caller's, left as it was */
    free(text);
}

static void test_not_a_calibration_refused(void)
{
    static const struct {
        const char *text, *message;
    } bad[] = {
        { "{", "it is not JSON" },
        { "{\"schema\": \"inferbench.serve_generative/1\"}",
          "its schema is not inferbench.client_calibration/1" },
        { "{\"schema\": \"inferbench.client_calibration/1\", \"date\": \"d\", \"host\": \"h\"}",
          "it has no \"version\"" },
        { "{\"schema\": \"inferbench.client_calibration/1\", \"date\": \"d\", \"host\": \"h\", \"version\": "
          "\"v\", "
          "\"rate\": 8, \"streams\": \"4\"}",
          "its \"streams\" is not a number >= 0" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ib_client_ceiling c;
        memset(&c, 0, sizeof c);
        ib_error err = { { 0 } };
        CHECK(ib_client_ceiling_parse(bad[i].text, &c, &err) == IB_ERR_INVALID_ARG);
        CHECK(!strcmp(err.message, bad[i].message));
        CHECK(c.state == IB_CEILING_NOT_GIVEN); /* untouched */
    }
}

/* Three requests sent at 0, 1 and 2 ms, all open until 5 ms (3 at once),
 * and a fourth sent at 6 that never got a chunk (not a stream). */
static void test_run_set_against_the_ceiling(void)
{
    double chunks[3][1] = { { 5 }, { 5 }, { 5 } };
    int32_t counts[1] = { 1 };
    ib_endpoint_request q[4];
    memset(q, 0, sizeof q);
    for (int i = 0; i < 3; i++)
        q[i] = (ib_endpoint_request){
            .sent_ms = i, .n_chunks = 1, .chunk_ms = chunks[i], .chunk_token_counts = counts
        };
    q[3] = (ib_endpoint_request){ .sent_ms = 6, .failure = IB_EP_CONNECT };
    ib_endpoint_result ep;
    memset(&ep, 0, sizeof ep);
    ep.requests = q, ep.n_requests = 4;
    ep.ceiling =
        (ib_client_ceiling){ .state = IB_CEILING_CURRENT, .rate = 100, .streams = 3, .tokens_per_s = 500 };
    snprintf(ep.ceiling.date, sizeof ep.ceiling.date, "2026-12-06T22:00:00Z");
    ib_gen_serve_result r;
    memset(&r, 0, sizeof r);
    r.offered_rate = 50, r.output_tokens_per_s = 400;

    ib__sbuf b = { 0 };
    ib__endpoint_ceiling_text(&b, &ep, &r);
    char *text = ib__sbuf_finish(&b);
    CHECK(text &&
          !strcmp(text, "client ceiling: calibrated on this machine (2026-12-06T22:00:00Z): accurate up "
                        "to 100 requests/s, 3 streams, 500 tokens/s; this run: 50 requests/s, 3 streams "
                        "at most, 400 tokens/s: within the ceiling\n"));
    free(text);

    ep.ceiling.streams = 2; /* past it in streams alone: above */
    b = (ib__sbuf){ 0 };
    ib__endpoint_ceiling_text(&b, &ep, &r);
    text = ib__sbuf_finish(&b);
    CHECK(text && strstr(text, "3 streams at most, 400 tokens/s: ABOVE the ceiling: the figures may be the "
                               "client's limit, not the server's\n"));
    free(text);

    ep.ceiling.state = IB_CEILING_NOT_GIVEN; /* a library caller that set nothing: no line */
    b = (ib__sbuf){ 0 };
    ib__endpoint_ceiling_text(&b, &ep, &r);
    CHECK(b.len == 0);
    free(b.data);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_file_text_round_trip);
    RUN(test_not_a_calibration_refused);
    RUN(test_run_set_against_the_ceiling);
    return check_summary("test_client_ceiling");
}
