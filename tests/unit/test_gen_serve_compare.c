/* Two generative serve results compared (docs/compare.md, "Generative
 * serve results"): the interval of a difference of two proportions (the
 * goodput share) against Newcombe's published values, a result read back
 * from its JSON to the engine's own samples (the gaps rebuilt from the
 * steps), broken documents refused, and two runs of the scripted fake,
 * one with slower steps, compared to a verdict. */
#include "check.h"
#include "core/compare.h"
#include "gen_fixtures.h"
#include "report/printer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Newcombe (1998), table II, method 10: 56/70 - 48/80 = 0.2, [0.0524,
 * 0.3339]; 9/10 - 3/10 = 0.6, [0.1705, 0.8090] (four decimals). */
static void test_proportion_interval(void)
{
    double ci[2];
    ib__proportion_difference_ci(48, 80, 56, 70, ci);
    CHECK_NEAR(ci[0], 0.0524, 5e-5);
    CHECK_NEAR(ci[1], 0.3339, 5e-5);
    ib__proportion_difference_ci(3, 10, 9, 10, ci);
    CHECK_NEAR(ci[0], 0.1705, 5e-5);
    CHECK_NEAR(ci[1], 0.8090, 5e-5);
    ib__proportion_difference_ci(0, 0, 1, 2, ci);
    CHECK(isnan(ci[0]) && isnan(ci[1]));
}

static ib__gen *open_scripted(double batch_ms)
{
    ib__gen_fake_script s;
    ib__gen_fake_script_init(&s);
    s.cold_calls = 0;
    s.batch_ms = batch_ms;
    s.batch_decode_token_ms = 0.5;
    s.batch_prefill_token_ms = 0.1;
    return gen_fixture_open(&s);
}

/* The JSON of a run of cfg on the fake of batch_ms a step (malloc'ed). */
static char *served_json(double batch_ms, const ib_gen_serve_config *c)
{
    ib__gen *g = open_scripted(batch_ms);
    if (!g) return NULL;
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, c, &r, &err) == IB_OK);
    char *json = ib__gen_serve_report_json(&r, c);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
    return json;
}

static const ib_gen_request_spec three[] = { { 0, 10, 3 }, { 0, 20, 2 }, { 1, 5, 2 } };

static ib_gen_serve_config by_hand(void)
{
    ib_gen_serve_config c;
    ib_gen_serve_config_init(&c);
    c.arrivals = IB_ARRIVALS_TRACE;
    c.trace = three;
    c.n_trace = 3;
    c.slots = 2;
    c.prefill_chunk = 10;
    c.warmup_requests = 0;
    c.slo_ttft_ms = 7.5;
    c.slo_tpot_ms = 2.5;
    return c;
}

/* test_gen_serve.c's by-hand run read back: TTFT {2, 7, 8}, TPOT {2.5,
 * 2, 1.5}, the gaps {2.5, 2.5, 2, 1.5} from the steps, 2 of 3 good. */
static void test_read_back(void)
{
    ib_gen_serve_config c = by_hand();
    char *json = served_json(1, &c);
    ib_gen_serve_file f;
    ib_error err = { { 0 } };
    CHECK(json && ib_gen_serve_file_parse(json, strlen(json), &f, &err) == IB_OK);
    const double ttft[] = { 2, 7, 8 }, tpot[] = { 2.5, 2, 1.5 }, itl[] = { 2.5, 2.5, 2, 1.5 };
    CHECK_EQ_INT(f.n_ttft, 3);
    CHECK_EQ_INT(f.n_tpot, 3);
    CHECK_EQ_INT(f.n_itl, 4);
    for (size_t i = 0; i < 3 && f.n_ttft == 3 && f.n_tpot == 3; i++) {
        CHECK_NEAR(f.ttft_ms[i], ttft[i], 0);
        CHECK_NEAR(f.tpot_ms[i], tpot[i], 0);
    }
    for (size_t i = 0; i < 4 && f.n_itl == 4; i++) CHECK_NEAR(f.itl_ms[i], itl[i], 0);
    CHECK_EQ_INT(f.completed, 3);
    CHECK_EQ_INT(f.good, 2);
    CHECK_NEAR(f.slo_ttft_ms, 7.5, 0);
    CHECK(isnan(f.slo_e2e_ms));
    CHECK_EQ_INT(f.slots, 2);
    ib_gen_serve_file_free(&f);
    free(json);
}

/* Not one at all: unsupported (compare tries the other readers); one
 * that is broken: invalid, in one line. */
static void test_refused(void)
{
    ib_gen_serve_file f;
    ib_error err = { { 0 } };
    CHECK(ib_gen_serve_file_parse("{\"schema\": \"inferbench.latency/2\"}", 34, &f, &err) ==
          IB_ERR_UNSUPPORTED);
    CHECK(ib_gen_serve_file_parse("{\"schema\": ", 11, &f, &err) == IB_ERR_UNSUPPORTED);
    const char *no_steps = "{\"schema\": \"inferbench.serve_generative/1\", \"requests\": []}";
    CHECK(ib_gen_serve_file_parse(no_steps, strlen(no_steps), &f, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "not an inferbench serve_generative result: ") == err.message);
    /* The by-hand run without its last step: R2's second token is gone. */
    ib_gen_serve_config c = by_hand();
    char *json = served_json(1, &c);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    cJSON *steps = cJSON_GetObjectItem(doc, "steps");
    cJSON_DeleteItemFromArray(steps, cJSON_GetArraySize(steps) - 1);
    char *cut = cJSON_PrintUnformatted(doc);
    CHECK(cut && ib_gen_serve_file_parse(cut, strlen(cut), &f, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "its steps do not give its requests their tokens") != NULL);
    CHECK(f.ttft_ms == NULL && f.itl_ms == NULL);
    free(cut);
    cJSON_Delete(doc);
    free(json);
}

/* 30 requests at a constant 20 a second, 10 prompt tokens and 5 output
 * each: every request alone on the engine (done in 8 or 18 ms of its 50),
 * its prompt a step of 2 or 4 ms (1 or 3 + 10 x 0.1), each later token a
 * step of 1.5 or 3.5 ms. */
static void test_slower_run(void)
{
    ib_gen_serve_config c;
    ib_gen_serve_config_init(&c);
    c.arrivals = IB_ARRIVALS_CONSTANT;
    c.rate = 20;
    c.requests = 30;
    c.prompt_min = c.prompt_max = 10;
    c.output_min = c.output_max = 5;
    c.slots = 2;
    c.warmup_requests = 0;
    c.slo_tpot_ms = 2;
    char *ja = served_json(1, &c), *jb = served_json(3, &c);
    ib_gen_serve_file a, b;
    ib_error err = { { 0 } };
    CHECK(ja && ib_gen_serve_file_parse(ja, strlen(ja), &a, &err) == IB_OK);
    CHECK(jb && ib_gen_serve_file_parse(jb, strlen(jb), &b, &err) == IB_OK);
    ib_gen_serve_comparison cmp;
    CHECK(ib_compare_gen_serve_files(&a, &b, 0.01, &cmp, &err) == IB_OK);
    /* Every TPOT a step of one decode token: 1.5 against 3.5 ms; every
     * request met TPOT <= 2 in A, none in B. */
    CHECK_NEAR(cmp.ttft.a.max, 2, 1e-9);
    CHECK_NEAR(cmp.ttft.b.min, 4, 1e-9);
    CHECK_NEAR(cmp.tpot.a.p50, 1.5, 1e-9);
    CHECK_NEAR(cmp.tpot.b.p50, 3.5, 1e-9);
    CHECK(cmp.tpot.verdict == IB_CHANGE_SLOWER);
    CHECK(cmp.itl.verdict == IB_CHANGE_SLOWER);
    CHECK(cmp.ttft.verdict == IB_CHANGE_SLOWER);
    CHECK_NEAR(cmp.good_share_a, 1, 0);
    CHECK_NEAR(cmp.good_share_b, 0, 0);
    CHECK(cmp.good_share_ci95[1] < 0);
    CHECK(cmp.same_targets);
    /* The reports say it. */
    ib_result res = { .kind = IB_RESULT_GEN_SERVE_COMPARISON,
                      .gen_serve_comparison = &cmp,
                      .gen_serve_a = &a,
                      .gen_serve_b = &b,
                      .a_name = "a.json",
                      .b_name = "b.json" };
    char *text = ib_report(&res, "text");
    CHECK(text && strstr(text, "TPOT       median A 1.5 ms, B 3.5 ms: +133.33%"));
    CHECK(text && strstr(text, "goodput share: A 100% (30 of 30), B 0% (0 of 30): -100.00 points"));
    const char *formats[] = { "json", "csv", "md" };
    for (size_t i = 0; i < 3; i++) {
        char *doc = ib_report(&res, formats[i]);
        CHECK(doc && strstr(doc, "slower"));
        ib_free(doc);
    }
    CHECK(!ib_report_supports("html", IB_RESULT_GEN_SERVE_COMPARISON));
    ib_free(text);
    ib_gen_serve_file_free(&a);
    ib_gen_serve_file_free(&b);
    free(ja);
    free(jb);
}

int main(void)
{
    RUN(test_proportion_interval);
    RUN(test_read_back);
    RUN(test_refused);
    RUN(test_slower_run);
    return check_summary("test_gen_serve_compare");
}
