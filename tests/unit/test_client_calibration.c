/* The client calibration's arithmetic (src/endpoint/script_server_calibrate.c):
 * a client's record and a server's stamps made up by hand, every error
 * known in advance (multiples of 0.25 ms: exact in binary). The live run
 * is tests/cli/calibrate_client.sh's, which asserts no timing. */
#include "check.h"
#include "endpoint/script_server.h"

#include <stdlib.h>
#include <string.h>

/* The schedule's origin on the host clock, in the client's record. */
#define ORIGIN 1000.0

typedef struct fixture {
    ib_gen_serve_request req[3];
    ib_endpoint_request ep[3];
    double chunks0[3], chunks1[2], chunks2[1];
    ib_gen_serve_result out;
    ib_endpoint_result epr;
} fixture;

/* The client: request 0 (prompt 1) scheduled at 0, sent at 0.5, chunks
 * at 21, 26, 31; request 1 (prompt 2) at 10, sent 10.25, chunks 31.5, 36.5. */
static void client(fixture *f, size_t n)
{
    memset(f, 0, sizeof *f);
    double c0[3] = { 21, 26, 31 }, c1[2] = { 31.5, 36.5 }, c2[1] = { 40 };
    memcpy(f->chunks0, c0, sizeof c0);
    memcpy(f->chunks1, c1, sizeof c1);
    memcpy(f->chunks2, c2, sizeof c2);
    f->req[0].spec = (ib_gen_request_spec){ 0, 1, 3 };
    f->req[1].spec = (ib_gen_request_spec){ 10, 2, 2 };
    f->req[2].spec = (ib_gen_request_spec){ 20, 3, 1 };
    f->ep[0] =
        (ib_endpoint_request){ .sent_ms = 0.5, .lateness_ms = 0.5, .n_chunks = 3, .chunk_ms = f->chunks0 };
    f->ep[1] =
        (ib_endpoint_request){ .sent_ms = 10.25, .lateness_ms = 0.25, .n_chunks = 2, .chunk_ms = f->chunks1 };
    f->ep[2] =
        (ib_endpoint_request){ .sent_ms = 20, .failure = IB_EP_RESET, .n_chunks = 1, .chunk_ms = f->chunks2 };
    f->out = (ib_gen_serve_result){ .requests = f->req, .n_requests = n };
    f->epr = (ib_endpoint_result){ .requests = f->ep, .n_requests = n, .origin_ms = ORIGIN };
}

/* The server, in time order: a warm-up request of prompt 1 long before
 * (its first: a decoy for the match), then the client's two, numbered the
 * other way round (the client's request 1 is the server's 1, its 0 the
 * server's 2). */
static const ib_script_stamp stamps[] = {
    { 0, IB_SCRIPT_ARRIVED, 1, 900, 900 },       { 0, IB_SCRIPT_CHUNK, 1, 920, 920 },
    { 0, IB_SCRIPT_ENDED, 1, 900, 921 },         { 2, IB_SCRIPT_ARRIVED, 1, 1000.75, 1000.75 },
    { 1, IB_SCRIPT_ARRIVED, 2, 1010.5, 1010.5 }, { 2, IB_SCRIPT_CHUNK, 1, 1020.75, 1020.5 },
    { 2, IB_SCRIPT_CHUNK, 1, 1025.75, 1025.5 },  { 2, IB_SCRIPT_CHUNK, 1, 1030.75, 1030 },
    { 2, IB_SCRIPT_ENDED, 3, 1000.75, 1030.25 }, { 1, IB_SCRIPT_CHUNK, 1, 1030.5, 1031 },
    { 1, IB_SCRIPT_CHUNK, 1, 1035.5, 1036.5 },   { 1, IB_SCRIPT_ENDED, 2, 1010.5, 1036.75 },
};
#define N_STAMPS (sizeof stamps / sizeof *stamps)

static void test_errors_by_hand(void)
{
    fixture f;
    client(&f, 2);
    ib_client_calibration_point p = { 0 };
    ib_error err = { { 0 } };
    CHECK(ib__client_errors(stamps, N_STAMPS, &f.out, &f.epr, 1.0, &p, &err) == IB_OK);
    CHECK_EQ_INT(p.n_failed, 0);
    CHECK_EQ_INT(p.n_unmatched, 0);
    CHECK_EQ_INT(p.streams_max, 2);
    CHECK_NEAR(p.tokens_per_s, 1e3 * 6 / (1036.5 - 900), 1e-9);
    /* Lateness as the server saw it: 0.75 and 0.5; the client said 0.5
     * and 0.25: 0.25 unseen each. */
    CHECK_EQ_INT(p.lateness.n, 2);
    CHECK(p.lateness.min == 0.5 && p.lateness.max == 0.75);
    CHECK(p.lateness_error.min == 0.25 && p.lateness_error.max == 0.25);
    /* First chunks: sent 1020.5 and 1031, seen 1021 and 1031.5. */
    CHECK(p.ttft_error.min == 0.5 && p.ttft_error.max == 0.5);
    /* Gaps seen 5, 5 and 5; sent 5, 4.5 and 5.5. */
    CHECK_EQ_INT(p.itl_error.n, 3);
    CHECK(p.itl_error.min == 0 && p.itl_error.max == 0.5);
    CHECK(p.accurate);
}

static void test_bound_failures_and_mismatch(void)
{
    fixture f;
    client(&f, 2);
    ib_client_calibration_point p = { 0 };
    ib_error err = { { 0 } };
    /* Lateness p99 0.7475 (0.5 + 0.99 x 0.25): past a bound of 0.7. */
    ib__client_errors(stamps, N_STAMPS, &f.out, &f.epr, 0.7, &p, &err);
    CHECK_NEAR(p.lateness.p99, 0.7475, 1e-12);
    CHECK(!p.accurate);
    /* A request the client counts as failed: not accurate, whatever the rest. */
    client(&f, 3);
    p = (ib_client_calibration_point){ 0 };
    ib__client_errors(stamps, N_STAMPS, &f.out, &f.epr, 1.0, &p, &err);
    CHECK_EQ_INT(p.n_failed, 1);
    CHECK(!p.accurate);
    /* A request whose chunks are not the server's count: unmatched. */
    client(&f, 2);
    f.ep[0].n_chunks = 2;
    p = (ib_client_calibration_point){ 0 };
    ib__client_errors(stamps, N_STAMPS, &f.out, &f.epr, 1.0, &p, &err);
    CHECK_EQ_INT(p.n_unmatched, 1);
    CHECK_EQ_INT(p.ttft_error.n, 1);
    CHECK(!p.accurate);
}

static void test_bad_settings_refused(void)
{
    ib_client_calibration_config cfg;
    ib_client_calibration_config_init(&cfg);
    CHECK_EQ_INT(cfg.n_rates, 10); /* 8 .. 4096 */
    CHECK(cfg.rates[9] == 4096);
    ib_client_calibration_result r;
    ib_error err = { { 0 } };
    cfg.rates[3] = -1;
    CHECK(ib_calibrate_client(&cfg, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(!strcmp(err.message, "client calibration: rate -1 is not > 0 requests/s"));
    ib_client_calibration_config_init(&cfg);
    cfg.ttft_ms = -2;
    CHECK(ib_calibrate_client(&cfg, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(!strcmp(err.message, "script: ttft -2 ms is not a time >= 0"));
    ib_client_calibration_config_init(&cfg);
    cfg.bound_ms = 0;
    CHECK(ib_calibrate_client(&cfg, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK_EQ_INT(r.n_points, 0);
}

/* A live point: the client of serve --endpoint against the server, 20
 * requests; what must hold whatever the machine's load: every request
 * completed and matched, every chunk gap measured, one point. */
static void test_live_point_matches_every_request(void)
{
    ib_client_calibration_config cfg;
    ib_client_calibration_config_init(&cfg);
    cfg.rates[0] = 40;
    cfg.n_rates = 1;
    cfg.seconds_per_rate = 0.5;
    cfg.ttft_ms = 2;
    cfg.itl_ms = 1;
    cfg.output_tokens = 4;
    ib_client_calibration_result r;
    ib_error err = { { 0 } };
    ib_status st = ib_calibrate_client(&cfg, &r, &err);
    if (st == IB_ERR_UNSUPPORTED) {
        fprintf(stderr, "skipped: %s\n", err.message);
        return;
    }
    CHECK(st == IB_OK);
    CHECK_EQ_INT(r.n_points, 1);
    const ib_client_calibration_point *p = &r.points[0];
    CHECK_EQ_INT(p->n_requests, 20);
    CHECK_EQ_INT(p->n_failed, 0);
    CHECK_EQ_INT(p->n_unmatched, 0);
    CHECK_EQ_INT(p->ttft_error.n, 20);
    CHECK_EQ_INT(p->itl_error.n, 20 * 3);
    CHECK(p->streams_max >= 1);
    CHECK(r.ceiling_rate == (p->accurate ? 40 : 0));
    char *text = ib_client_calibration_report_text(&r), *json = ib_client_calibration_report_json(&r);
    CHECK(text && strstr(text, "ceiling: ") != NULL);
    CHECK(json && strstr(json, "\"inferbench.calibrate_client/1\"") != NULL);
    free(text);
    free(json);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_errors_by_hand);
    RUN(test_bound_failures_and_mismatch);
    RUN(test_bad_settings_refused);
    RUN(test_live_point_matches_every_request);
    return check_summary("test_client_calibration");
}
