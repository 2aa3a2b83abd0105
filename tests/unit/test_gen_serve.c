/* Serving a generative model under load (docs/serve-generative.md): the
 * schedules (gamma arrivals, drawn lengths), the request trace parser,
 * and the engine on the scripted generation fake's virtual clock, whose
 * steps cost a known base + per decode token + per prompt token, so that
 * every TTFT, TPOT, gap and goodput below is worked out by hand. */
#include "check.h"
#include "core/schedule.h"
#include "gen_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Schedules                                                                 */
/* ------------------------------------------------------------------------ */

/* Shape 1 is Poisson's schedule itself; other shapes keep the mean gap
 * and move its spread as the gamma's: a squared coefficient of variation
 * of 1/shape. */
static void test_gamma_schedule(void)
{
    enum { N = 20000 };
    double *t = malloc(N * sizeof *t), *p = malloc(N * sizeof *p);
    ib__serve_gamma(50.0, 1.0, 3, N, t);
    ib__serve_poisson(50.0, 3, N, p);
    CHECK(memcmp(t, p, N * sizeof *t) == 0);
    const double shapes[] = { 0.25, 0.5, 4.0 };
    for (int k = 0; k < 3; k++) {
        ib__serve_gamma(50.0, shapes[k], 3, N, t);
        CHECK_NEAR(t[0], 0, 0);
        double sum = 0, sq = 0;
        for (size_t i = 1; i < N; i++) {
            double gap = t[i] - t[i - 1];
            CHECK(gap >= 0);
            sum += gap;
            sq += gap * gap;
        }
        double mean = sum / (N - 1), var = sq / (N - 1) - mean * mean;
        CHECK_NEAR(mean, 20.0, 20.0 * 0.03); /* 1000/50 ms */
        CHECK_NEAR(var / (mean * mean), 1.0 / shapes[k], 0.08 / shapes[k]);
        ib__serve_gamma(50.0, shapes[k], 3, N, p);
        CHECK(memcmp(t, p, N * sizeof *t) == 0); /* seeded */
    }
    free(t);
    free(p);
}

static void test_uniform_lengths(void)
{
    enum { N = 4000 };
    int32_t x[N], y[N];
    ib__schedule_uniform(128, 131, 9, N, x);
    int seen[4] = { 0 };
    for (size_t i = 0; i < N; i++) {
        CHECK(x[i] >= 128 && x[i] <= 131);
        if (x[i] >= 128 && x[i] <= 131) seen[x[i] - 128]++;
    }
    for (int v = 0; v < 4; v++) CHECK(seen[v] > N / 4 - 150 && seen[v] < N / 4 + 150);
    ib__schedule_uniform(128, 131, 9, N, y);
    CHECK(!memcmp(x, y, sizeof x));
    ib__schedule_uniform(64, 64, 9, 3, y);
    CHECK(y[0] == 64 && y[1] == 64 && y[2] == 64);
}

/* ------------------------------------------------------------------------ */
/* The request trace                                                         */
/* ------------------------------------------------------------------------ */

static ib_status parse(const char *text, ib_gen_request_spec **rs, size_t *n, ib_error *err)
{
    *err = (ib_error){ { 0 } };
    return ib_gen_trace_parse(text, strlen(text), rs, n, err);
}

static void test_trace_plain(void)
{
    ib_gen_request_spec *rs;
    size_t n;
    ib_error err;
    CHECK(parse("# arrival prompt output\n0 512 128\n12.5,64,8\r\n\n  12.5\t1 1  \n3e1, 7 ,9\n", &rs, &n,
                &err) == IB_OK);
    CHECK_EQ_INT(n, 4);
    if (n == 4) {
        CHECK_NEAR(rs[0].arrival_ms, 0, 0);
        CHECK(rs[0].prompt_tokens == 512 && rs[0].output_tokens == 128);
        CHECK_NEAR(rs[1].arrival_ms, 12.5, 0);
        CHECK(rs[1].prompt_tokens == 64 && rs[1].output_tokens == 8);
        CHECK(rs[2].prompt_tokens == 1 && rs[2].output_tokens == 1);
        CHECK_NEAR(rs[3].arrival_ms, 30, 0);
        CHECK(rs[3].prompt_tokens == 7 && rs[3].output_tokens == 9);
    }
    free(rs);
}

/* The Azure LLM inference trace as published: its header, then times of
 * the day with seven decimals; arrivals from the first row, across a
 * midnight too. */
static void test_trace_azure(void)
{
    ib_gen_request_spec *rs;
    size_t n;
    ib_error err;
    const char *text = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                       "2023-11-16 23:59:59.5000000,374,44\r\n"
                       "2023-11-16 23:59:59.6250000,1020,3\r\n"
                       "2023-11-17 00:00:01,9,1\r\n";
    CHECK(parse(text, &rs, &n, &err) == IB_OK);
    CHECK_EQ_INT(n, 3);
    if (n == 3) {
        CHECK_NEAR(rs[0].arrival_ms, 0, 0);
        CHECK_NEAR(rs[1].arrival_ms, 125, 1e-6);
        CHECK_NEAR(rs[2].arrival_ms, 1500, 1e-6);
        CHECK(rs[0].prompt_tokens == 374 && rs[0].output_tokens == 44);
        CHECK(rs[2].prompt_tokens == 9 && rs[2].output_tokens == 1);
    }
    free(rs);
}

/* Every bad trace: refused with one line naming the line, nothing kept. */
static void test_trace_bad(void)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        { "", "no requests" },
        { "# only a comment\n\n", "no requests" },
        { "10 5 5\n5 5 5\n", "line 2: this request arrives before" },
        { "-1 5 5\n", "line 1: expected an arrival" },
        { "0 -5 5\n", "line 1: token counts" },
        { "0 5 0\n", "line 1: token counts" },
        { "0 5\n", "line 1: expected an arrival" },
        { "0 5 5 5\n", "line 1: expected an arrival" },
        { "abc 5 5\n", "line 1: expected an arrival" },
        { "0 5x 5\n", "line 1: token counts" },
        { "0 2000000 5\n", "line 1: token counts" },
        { "nan 5 5\n", "line 1: expected an arrival" },
        { "0 5 5\n\0 5 5\n", "line 2: a NUL byte" },
        { "TIMESTAMP,Context,Generated\n", "line 1: the Azure trace's header" },
        { "TIMESTAMP,ContextTokens,GeneratedTokens\n", "no requests" },
        { "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-16 00:00:00,5,5\n",
          "line 2: expected TIMESTAMP" },
        { "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 00:00:01,5,5\n2023-11-16 00:00:00,5,5\n",
          "line 3: this request arrives before" },
        { "TIMESTAMP,ContextTokens,GeneratedTokens\n0,5,5\n", "line 2: expected TIMESTAMP" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ib_gen_request_spec *rs = (ib_gen_request_spec *)&i;
        size_t n = 7, len = strlen(bad[i].text);
        if (strstr(bad[i].says, "NUL")) len = 12;
        ib_error err = { { 0 } };
        ib_status st = ib_gen_trace_parse(bad[i].text, len, &rs, &n, &err);
        CHECK(st == IB_ERR_INVALID_ARG);
        CHECK(rs == NULL && n == 0);
        if (!strstr(err.message, bad[i].says)) fprintf(stderr, "  case %zu said: %s\n", i, err.message);
        CHECK(strstr(err.message, bad[i].says) != NULL);
        CHECK(!strchr(err.message, '\n'));
    }
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_gamma_schedule);
    RUN(test_uniform_lengths);
    RUN(test_trace_plain);
    RUN(test_trace_azure);
    RUN(test_trace_bad);
    return check_summary("test_gen_serve");
}
