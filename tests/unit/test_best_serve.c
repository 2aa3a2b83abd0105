/* serve --best: the engine's settings raced by goodput on the generation
 * fake's virtual clock, where every step of the engine costs exactly 1 ms
 * (batch_us 1000, its tokens free), so that each candidate's schedule is
 * known by hand (docs/best.md, "Serving: the engine's settings raced"). */
#include "check.h"
#include "gen_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Four requests at 0 ms, each a prompt of 4 tokens and 2 output tokens;
 * targets TTFT <= 2 ms, TPOT <= 1 ms. The steps, by hand (each 1 ms):
 *   slots 4, chunk 16: all four prompts [0,1], their second tokens [1,2]:
 *     TTFT 1 1 1 1, all met, span 2 ms: goodput 2000/s
 *   slots 4, chunk 4: a prompt a step, each decoded the step after:
 *     first tokens at 1 2 3 4, ends 2 3 4 5: 2 met / 5 ms = 400/s
 *   slots 1 (chunk 16 runs as 4: one slot holds 4 prompt tokens): one at a
 *     time, first tokens at 1 3 5 7, span 8: 1 met, 125/s
 *   slots 2 (chunk 16 runs as 8): two at a time, first tokens 1 1 3 3,
 *     span 4: 2 met, 500/s
 *   slots 4, chunk 64: runs as chunk 16 (4 slots hold 16 prompt tokens):
 *     the first row's run, merged
 * Screening serves the first 2 requests: chunk 16 at 4 slots 1000/s
 * (span 2), chunk 4 666.7/s (R1's first token at 2, span 3), slots 1
 * 250/s (R1 waits: first token at 3, TTFT 3 over the target), slots 2
 * 1000/s: the tie with row 1 (the same end-to-end p99, 2 ms) keeps the
 * earlier first. The 2 best (rows 1 and 4) serve all 4. */
static const ib_gen_request_spec four[] = { { 0, 4, 2 }, { 0, 4, 2 }, { 0, 4, 2 }, { 0, 4, 2 } };

static const ib_best_serve_candidate cands[] = {
    { "slots 4, chunk 16", 4, 16 }, { "slots 4, chunk 4", 4, 4 },   { "slots 1, chunk 16", 1, 16 },
    { "slots 2, chunk 16", 2, 16 }, { "slots 4, chunk 64", 4, 64 }, { "slots 8, chunk 16", 8, 16 },
    { "refused", 4, 16 },
};
#define N_CANDS (sizeof cands / sizeof cands[0])

static int opened[N_CANDS];

static ib_status open_cand(size_t i, void *user, ib_gen **g, ib_error *err)
{
    (void)user;
    if (!strcmp(cands[i].label, "refused")) {
        snprintf(err->message, sizeof err->message, "fake: this one is refused");
        return IB_ERR_UNSUPPORTED;
    }
    opened[i]++;
    ib__gen_fake_script s;
    ib__gen_fake_script_init(&s);
    s.cold_calls = 0;
    s.batch_ms = 1;
    s.batch_decode_token_ms = 0;
    s.batch_prefill_token_ms = 0;
    s.max_seqs = 4; /* slots 8 do not fit */
    *g = gen_fixture_open(&s);
    return *g ? IB_OK : IB_ERR_RUNTIME;
}

static void label_ran(size_t i, void *user, const ib_option_list *ran, int32_t chunk, char *out, size_t cap)
{
    (void)user;
    (void)ran;
    snprintf(out, cap, "slots %d, chunk %d", (int)cands[i].slots, (int)chunk);
}

static ib_best_serve_config race_config(void)
{
    ib_best_serve_config c;
    ib_best_serve_config_init(&c);
    c.serve.arrivals = IB_ARRIVALS_TRACE;
    c.serve.trace = four;
    c.serve.n_trace = 4;
    c.serve.warmup_requests = 0;
    c.serve.slo_ttft_ms = 2;
    c.serve.slo_tpot_ms = 1;
    c.candidates = cands;
    c.n_candidates = N_CANDS;
    c.open = open_cand;
    c.label_ran = label_ran;
    c.screen_requests = 2;
    c.finalists = 2;
    memset(opened, 0, sizeof opened);
    return c;
}

static void test_race_by_hand(void)
{
    ib_best_serve_config c = race_config();
    ib_best_serve_result *r = calloc(1, sizeof *r);
    ib_error err = { { 0 } };
    CHECK(ib_measure_best_serve(&c, r, &err) == IB_OK);
    CHECK(!r->partial);
    CHECK_EQ_INT(r->winner, 0);
    CHECK_EQ_INT(r->screen_requests, 2);
    CHECK_EQ_INT(r->final_requests, 4);
    const ib_best_stage stage[] = { IB_BEST_WINNER, IB_BEST_DROPPED, IB_BEST_DROPPED, IB_BEST_FINALIST,
                                    IB_BEST_MERGED, IB_BEST_SKIPPED, IB_BEST_SKIPPED };
    for (size_t i = 0; i < N_CANDS; i++) CHECK_EQ_INT(r->rows[i].stage, stage[i]);
    /* The winner's figures are its final's alone: 4 of 4 requests, 2000/s
     * (its screening: 1000/s over 2). */
    const ib_best_serve_row *w = &r->rows[0];
    CHECK(w->final);
    CHECK_EQ_INT(w->requests, 4);
    CHECK_EQ_INT(w->n_good, 4);
    CHECK_NEAR(w->goodput_rate, 2000, 1e-6);
    CHECK_NEAR(w->ttft.p99, 1, 1e-9);
    CHECK_NEAR(w->tpot.p99, 1, 1e-9);
    CHECK_EQ_INT(r->winner_serve.n_requests, 4);
    CHECK_EQ_INT(r->winner_serve.slots, 4);
    CHECK_EQ_INT(r->winner_serve.prefill_chunk, 16);
    /* The other finalist: 500/s in its final (2 within the targets). */
    CHECK(r->rows[3].final);
    CHECK_NEAR(r->rows[3].goodput_rate, 500, 1e-6);
    CHECK_EQ_INT(r->rows[3].n_good, 2);
    CHECK(strstr(r->rows[3].why, "goodput -75.0% against the winner") != NULL);
    /* The dropped rows keep their screening's figures. */
    CHECK(!r->rows[1].final);
    CHECK_EQ_INT(r->rows[1].requests, 2);
    CHECK_NEAR(r->rows[1].goodput_rate, 2000.0 / 3, 1e-6);
    CHECK_NEAR(r->rows[2].goodput_rate, 250, 1e-6);
    CHECK_NEAR(r->rows[2].ttft.max, 3, 1e-9);
    CHECK(strstr(r->rows[2].why, "not among the 2 best") != NULL);
    /* Labelled as they run: the chunk in effect. */
    CHECK(!strcmp(r->rows[2].label, "slots 1, chunk 4"));
    CHECK(!strcmp(r->rows[2].asked, "slots 1, chunk 16"));
    CHECK(!strcmp(r->rows[3].label, "slots 2, chunk 8"));
    CHECK(!r->rows[0].asked[0]);
    /* Merged: chunk 64 at 4 slots runs as chunk 16, never served. */
    CHECK_EQ_INT(r->merged, 1);
    CHECK_EQ_INT(r->rows[4].same_as, 0);
    CHECK_EQ_INT(r->rows[4].prefill_chunk, 16);
    CHECK_EQ_INT(r->rows[4].requests, 0);
    CHECK_EQ_INT(opened[4], 1);
    CHECK(strstr(r->rows[4].why, "runs as #1") != NULL);
    /* Skipped: 8 slots do not fit the fake's 4, and a refusal. */
    CHECK(strstr(r->rows[5].why, "at most 4 sequences") != NULL);
    CHECK(!strcmp(r->rows[6].why, "fake: this one is refused"));
    /* Opened once to settle and once a measurement: rows 1 and 4 three
     * times, rows 2 and 3 twice. */
    CHECK_EQ_INT(opened[0], 3);
    CHECK_EQ_INT(opened[1], 2);
    CHECK_EQ_INT(opened[3], 3);
    /* The time by step on the virtual clock: screening 2 + 3 + 4 + 2 ms,
     * the finals 2 + 4 ms. */
    CHECK_NEAR(r->step_ms[IB_BEST_SERVE_STEP_SCREEN], 11, 1e-9);
    CHECK_NEAR(r->step_ms[IB_BEST_SERVE_STEP_FINAL], 6, 1e-9);
    CHECK_NEAR(r->rows[0].step_ms[IB_BEST_SERVE_STEP_FINAL], 2, 1e-9);

    ib_result res = { .kind = IB_RESULT_BEST_SERVE, .best_serve = r, .best_serve_cfg = &c };
    char *text = ib_report(&res, "text");
    CHECK(text && strstr(text, "best: slots 4, chunk 16: goodput 2000 requests/s (4 of 4 requests"));
    CHECK(text && strstr(text, "  3  ran as: slots 1, chunk 4 (asked: slots 1, chunk 16)"));
    CHECK(text && strstr(text, "  6  does not apply: fake: at most 4 sequences"));
    CHECK(text && strstr(text, "time by step: opening"));
    CHECK(text && strstr(text, "screening 0.0 s, finals 0.0 s"));
    CHECK(text && strstr(text, "the winner's serving measurement (slots 4, chunk 16):\ninferbench serve:"));
    CHECK(text && !strstr(text, "PARTIAL"));
    ib_free(text);
    char *json = ib_report(&res, "json");
    CHECK(json && strstr(json, "\"schema\":\t\"inferbench.best_serve/1\""));
    CHECK(json && strstr(json, "\"winner\":\t\"slots 4, chunk 16\""));
    CHECK(json && strstr(json, "\"figures_from\":\t\"final\""));
    CHECK(json && strstr(json, "\"same_as\":\t0"));
    CHECK(json && strstr(json, "\"winner_serve\":\t{\n\t\t\"schema\":\t\"inferbench.serve_generative/1\""));
    ib_free(json);
    /* The other formats: a row per candidate, the winner marked. */
    char *csv = ib_report(&res, "csv");
    CHECK(csv && strstr(csv, ",\"slots 4, chunk 16\",4,16,winner,true,final,4,4,4,2000,1,"));
    /* TTFT 1 and 3 ms: its p99 interpolated, 2.98 */
    CHECK(csv &&
          strstr(csv, ",\"slots 1, chunk 4\",1,4,dropped,false,screening,2,2,1,250,0.5,2.98,1,1,3.98,1000,"));
    CHECK(csv &&
          strstr(csv,
                 ",\"slots 8, chunk 16\",,,skipped,false,none,0,0,0,,,,,,,,fake: at most 4 sequences,,\r\n"));
    CHECK(csv && strstr(csv, ",\"slots 4, chunk 64\",4,16,merged,false,none,0,0,0,,,,,,,,"));
    CHECK(csv && strstr(csv, ",1\r\n")); /* the merged row's same_as: row 1 */
    ib_free(csv);
    char *md = ib_report(&res, "md");
    CHECK(md && strstr(md, "| slots 4, chunk 16 | 2000 | 100 |"));
    CHECK(md && strstr(md, "| skipped | does not apply: fake: at most 4 sequences"));
    CHECK(md && strstr(md, "### The winner's serving measurement: slots 4, chunk 16"));
    ib_free(md);
    char *html = ib_report(&res, "html");
    CHECK(html && strstr(html, "<tr class=\"win\"><td>slots 4, chunk 16</td><td class=n>2000</td>"));
    CHECK(html && strstr(html, "best: slots 4, chunk 16: goodput 2000 requests/s"));
    ib_free(html);
    ib_best_serve_result_free(r);
    free(r);
}

/* A bound of 5 ms a step: rows 1 and 2 screen (2 + 3 ms), rows 3 and 4
 * find the screening's time spent: not measured, the race cut short; the
 * finals (rows 1 and 2) still decide between those measured. */
static void test_step_bound(void)
{
    ib_best_serve_config c = race_config();
    c.step_max_ms = 5;
    ib_best_serve_result *r = calloc(1, sizeof *r);
    ib_error err = { { 0 } };
    CHECK(ib_measure_best_serve(&c, r, &err) == IB_OK);
    CHECK(r->partial);
    CHECK_EQ_INT(r->stop_status, IB_OK);
    CHECK_EQ_INT(r->not_measured, 2);
    CHECK_EQ_INT(r->rows[2].stage, IB_BEST_NOT_MEASURED);
    CHECK_EQ_INT(r->rows[3].stage, IB_BEST_NOT_MEASURED);
    CHECK(strstr(r->rows[2].why, "not measured: the screening reached the step's time bound (0.005 s") !=
          NULL);
    CHECK_EQ_INT(r->winner, 0);
    CHECK_EQ_INT(r->rows[1].stage, IB_BEST_FINALIST);
    CHECK_NEAR(r->rows[1].goodput_rate, 400, 1e-6);
    CHECK(r->steps_bounded & (1u << IB_BEST_SERVE_STEP_SCREEN));
    ib_result res = { .kind = IB_RESULT_BEST_SERVE, .best_serve = r, .best_serve_cfg = &c };
    char *text = ib_report(&res, "text");
    CHECK(text && strstr(text, "not measured (time bound)"));
    CHECK(text && strstr(text, "PARTIAL: the race was cut short: 2 candidates not measured"));
    ib_free(text);
    char *json = ib_report(&res, "json");
    CHECK(json && strstr(json, "\"partial\":\ttrue"));
    CHECK(json && strstr(json, "\"steps_bounded\":\t[\"screening\"]"));
    ib_free(json);
    ib_best_serve_result_free(r);
    free(r);
}

static void test_interrupted_and_refused(void)
{
    ib_best_serve_config c = race_config();
    volatile int stop = 1;
    c.serve.run.cancel = &stop;
    ib_best_serve_result *r = calloc(1, sizeof *r);
    ib_error err = { { 0 } };
    CHECK(ib_measure_best_serve(&c, r, &err) == IB_ERR_INTERRUPTED);
    CHECK(r->partial);
    CHECK_EQ_INT(r->winner, -1);
    ib_best_serve_result_free(r);
    c = race_config();
    c.serve.slo_ttft_ms = c.serve.slo_tpot_ms = 0;
    CHECK(ib_measure_best_serve(&c, r, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "give its targets") != NULL);
    ib_best_serve_result_free(r);
    free(r);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_race_by_hand);
    RUN(test_step_bound);
    RUN(test_interrupted_and_refused);
    return check_summary("test_best_serve");
}
