/* The generation method on the scripted fake's virtual clock: every figure
 * against the script's arithmetic, exactly (docs/generate.md). */
#include "backend/fake/gen_fake.h"
#include "core/generate.h"
#include "core/stats.h"
#include "check.h"
#include "gen_fixtures.h"
#include "report/printer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* P 64, N 16: a prefill of 2 + 64/128 = 2.5 ms; a step at position p of 1 +
 * p/1024 ms (+ 1/8 per sequence more), half of each queued. The first two
 * calls are 8 times slower. Dyadic numbers: every sum is exact. */
#define P 64
#define N 16

static ib__gen_fake_script script(void)
{
    ib__gen_fake_script s;
    ib__gen_fake_script_init(&s);
    return s;
}

static double step_ms(int32_t seqs, int32_t pos) { return 1 + (seqs - 1) * 0.125 + pos / 1024.0; }

static double sum(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}

static void test_counts_and_figures(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(!r.partial && r.fixed_length);
    CHECK_EQ_INT(r.runs, 10);
    CHECK_EQ_INT(r.ttft.n, 10);
    CHECK_EQ_INT(r.token.n, 10 * N);
    CHECK_EQ_INT(r.prompt_tokens, P);
    CHECK_EQ_INT(r.new_tokens, N);
    CHECK_EQ_INT(r.depth, P);
    CHECK_EQ_INT(r.ctx_per_seq, P + N);
    CHECK_EQ_INT(r.warmup_runs_done, 3);
    /* Cold apart: the first prefill and step 8 times slower, in no figure. */
    CHECK(r.cold_prefill_ms == 2.5 * 8);
    CHECK(r.cold_step_ms == step_ms(1, P) * 8);
    double tokens = 0;
    for (size_t k = 0; k < r.runs; k++) {
        CHECK(r.ttft_ms[k] == 2.5);
        /* TTFT against the first decode: the prompt's prefill, then a step at P. */
        CHECK(r.token_ms[k * N] == step_ms(1, P));
        for (int i = 0; i < N; i++) CHECK(r.token_ms[k * N + i] == step_ms(1, P + i));
        CHECK(r.request_ms[k] == 2.5 + sum(r.token_ms + k * N, N - 1));
        tokens += sum(r.token_ms + k * N, N);
    }
    /* Tokens over their time, exactly; the prompt's rate the same way. */
    CHECK(r.tokens_per_s == 10.0 * N / sum(r.token_ms, 10 * N) * 1e3);
    CHECK(r.tokens_per_s == 10.0 * N / tokens * 1e3);
    CHECK(r.prompt_tokens_per_s == (double)P * 10 / 25.0 * 1e3);
    CHECK(r.tpot_ms == r.token.mean);
    CHECK(r.position_p50_ms[0] == step_ms(1, P) && r.position_p50_ms[N - 1] == step_ms(1, P + N - 1));
    ib__gen_fake_counts n = ib__gen_fake_counts_of(g);
    CHECK_EQ_INT(n.prefills, 1 + 3 + 10);
    CHECK_EQ_INT(n.prefill_tokens, 14 * P);
    CHECK_EQ_INT(n.steps, 1 + 13 * N);
    CHECK_EQ_INT(n.clears, 14);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* Every format through ib_report. */
static void test_reports(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.pitfalls = true;
    int32_t list[] = { 1, 2 };
    c.sequences = list;
    c.n_sequences = 2;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    ib_result res = { .kind = IB_RESULT_GENERATION, .generation = &r, .gen_cfg = &c };
    char *text = ib_report(&res, "text"), *json = ib_report(&res, "json"), *csv = ib_report(&res, "csv");
    char *md = ib_report(&res, "md");
    CHECK(text && strstr(text, "generation: ") && strstr(text, "pitfalls"));
    CHECK(json && strstr(json, "\"inferbench.generation/1\""));
    CHECK(csv && strstr(csv, "token,,0,0,64,1,1.0625,ms\r\n"));
    CHECK(md && strstr(md, "| per token | 160 |"));
    char *html = ib_report(&res, "html");
    CHECK(html && strstr(html, "Latency by token position") && strstr(html, "Per-token latency") &&
          strstr(html, "tokens per second against sequences") && strstr(html, "</html>"));
    free(html);
    ib_result missing = { .kind = IB_RESULT_GENERATION, .generation = &r };
    CHECK(ib_report(&missing, "json") == NULL); /* no configuration: no document */
    free(text);
    free(json);
    free(csv);
    free(md);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

static void test_depth(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.depth = 256;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.depth, 256);
    CHECK_EQ_INT(r.ctx_per_seq, 256 + N);
    /* TTFT is still the prompt's; the fill to the depth is untimed. */
    CHECK(r.ttft_ms[0] == 2.5);
    CHECK(r.token_ms[0] == step_ms(1, 256));
    CHECK(r.token_ms[N - 1] == step_ms(1, 256 + N - 1));
    ib__gen_fake_counts n = ib__gen_fake_counts_of(g);
    CHECK_EQ_INT(n.last_step_pos, 256 + N - 1);
    CHECK_EQ_INT(n.prefill_tokens, 14 * 256);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

static void test_search_under_capacity(void)
{
    ib__gen_fake_script s = script();
    s.kv_capacity_tokens = 37 * 100;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.ctx_per_seq = 100;
    c.search = true;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.searched && !r.limited_by_max);
    CHECK_EQ_INT(r.largest_fitting, 37);
    CHECK_EQ_INT(r.search_ctx_per_seq, 100);
    static const int32_t probes[] = { 1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37 };
    CHECK_EQ_INT(r.n_probes, 12);
    for (size_t i = 0; i < r.n_probes && i < 12; i++) {
        CHECK_EQ_INT(r.probes[i].sequences, probes[i]);
        CHECK(r.probes[i].fits == (probes[i] <= 37));
    }
    static const int32_t points[] = { 1, 2, 4, 8, 16, 32, 37 };
    CHECK_EQ_INT(r.n_points, 7);
    /* The search's curve, and a listed count above the largest: its point
     * says it does not fit. */
    ib_gen_result r2;
    int32_t listed[] = { 3, 40 };
    c.sequences = listed;
    c.n_sequences = 2;
    CHECK(ib_measure_generation(g, &c, &r2, &err) == IB_OK);
    CHECK_EQ_INT(r2.n_points, 9);
    CHECK(r2.points[2].sequences == 3 && r2.points[2].status == IB_OK);
    CHECK(r2.points[8].sequences == 40 && r2.points[8].status == IB_ERR_DEVICE_OOM);
    CHECK_EQ_INT(r2.points[r2.peak].sequences, 37);
    ib_gen_result_free(&r2);
    for (size_t i = 0; i < r.n_points && i < 7; i++) {
        const ib_gen_point *p = &r.points[i];
        CHECK_EQ_INT(p->sequences, points[i]);
        CHECK(p->status == IB_OK);
        CHECK_EQ_INT(p->steps, 3 * N);
        double t = 0;
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < N; j++) t += step_ms(points[i], P + j);
        CHECK(p->tokens_per_s == (double)points[i] * 3 * N / t * 1e3);
    }
    /* More sequences, more tokens/s on this script: the peak is the largest. */
    CHECK_EQ_INT(r.points[r.peak].sequences, 37);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* Every context is created, but a step of more than 5 sequences runs out
 * of memory (buffers allocated at the first decode): a count fits only when
 * its first step ran, so the search ends at 5, not at the bound. */
static void test_search_ended_by_first_step(void)
{
    ib__gen_fake_script s = script();
    s.step_oom_seqs = 5;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.search = true;
    c.sequence_runs = 1;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.largest_fitting, 5);
    CHECK(!r.limited_by_max);
    CHECK(strstr(r.limit_reason, "a step of 6 sequences passes the 5") != NULL);
    static const int32_t probes[] = { 1, 2, 4, 8, 6, 5 };
    CHECK_EQ_INT(r.n_probes, 6);
    for (size_t i = 0; i < r.n_probes && i < 6; i++) {
        CHECK_EQ_INT(r.probes[i].sequences, probes[i]);
        CHECK(r.probes[i].fits == (probes[i] <= 5));
        CHECK(r.probes[i].status == (probes[i] <= 5 ? IB_OK : IB_ERR_DEVICE_OOM));
    }
    CHECK_EQ_INT(ib__gen_fake_counts_of(g).set_sequences, 1 + 6 + 4); /* each probe's context was made */
    CHECK_EQ_INT(r.n_points, 4);
    for (size_t i = 0; i < r.n_points; i++) CHECK(r.points[i].status == IB_OK);
    CHECK_EQ_INT(r.points[r.peak].sequences, 5);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

static void test_search_bounds(void)
{
    ib__gen_fake_script s = script();
    s.max_seqs = 100; /* the runtime allows fewer than memory */
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.search = true;
    c.sequence_runs = 1;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.largest_fitting, 100);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
    s = script();
    g = gen_fixture_open(&s);
    c.max_sequences = 24;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.largest_fitting, 24);
    CHECK(r.limited_by_max);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
    /* Not even one sequence fits: out of memory, said. */
    s = script();
    s.kv_capacity_tokens = 50;
    g = gen_fixture_open(&s);
    c = gen_fixture_config(P, N);
    c.ctx_per_seq = 100;
    c.search = true;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_DEVICE_OOM); /* the single sequence already */
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

static void test_budget(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    int32_t list[] = { 1, 4, 16 };
    c.sequences = list;
    c.n_sequences = 3;
    /* TPOT at 4 sequences: 1 + 3/8 + (64 + 7.5)/1024 = 1.4448 ms; at 16, 2.94. */
    c.tpot_budget_ms = 2;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n_points, 3);
    CHECK_EQ_INT(r.points[r.best_within_budget].sequences, 4);
    CHECK_EQ_INT(r.points[r.peak].sequences, 16);
    CHECK(r.points[1].tpot_ms == r.points[1].step_ms.mean);
    ib_gen_result_free(&r);
    c.tpot_budget_ms = 0.5;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_NOT_MET);
    CHECK(!r.partial && r.best_within_budget == -1 && r.n_points == 3);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* A tail (every 7th call three times as long): each count's mean step
 * (its TPOT) above its median. A budget between the median and the mean of
 * 4 sequences: 4 is not within it (docs/generate.md: the budget is the
 * TPOT's), 1 is. */
static void test_budget_on_the_mean(void)
{
    ib__gen_fake_script s = script();
    s.slow_every = 7;
    s.slow_factor = 3;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    int32_t list[] = { 1, 4 };
    c.sequences = list;
    c.n_sequences = 2;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    const ib_gen_point *four = &r.points[1];
    CHECK(four->tpot_ms == four->step_ms.mean && four->step_ms.p50 < four->tpot_ms);
    double budget = (four->step_ms.p50 + four->tpot_ms) / 2;
    CHECK(r.points[0].tpot_ms <= budget);
    CHECK_EQ_INT(r.peak, 1);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
    g = gen_fixture_open(&s); /* the same calls again: the same figures */
    c.tpot_budget_ms = budget;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.points[1].step_ms.p50 < budget && r.points[1].tpot_ms > budget);
    CHECK_EQ_INT(r.best_within_budget, 0);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* The fake's own step, then for more than 8 sequences 0.5 ms of the host's
 * more a sequence above 8 (a crowded batch): a curve that falls after 8. */
static const ib__gen_ops *uncrowded;

static ib_status crowded_step(ib__gen *g, int32_t n_seqs, int32_t pos, ib_error *err)
{
    IB_TRY(uncrowded->step(g, n_seqs, pos, err));
    if (n_seqs > 8) g->clock.wait_until_ms(g->clock.ctx, ib__gen_now_ms(g) + (n_seqs - 8) * 0.5);
    return IB_OK;
}

/* A curve that flattens early and peaks before its last count: a step of
 * s sequences takes s + p/1024 ms (each sequence as dear as the first, none
 * queued), so tokens/s is within 7% of the peak from 1 on; 16 falls. The
 * knee is the fewest sequences within 95% of the peak (8): 2, not 1 (93.4
 * against 96.6% of a sequence a ms), not the peak, nor the last count. */
static void test_knee_of_a_flat_curve(void)
{
    ib__gen_fake_script s = script();
    s.step_seq_ms = 1;
    s.queued_fraction = 0;
    ib__gen *g = gen_fixture_open(&s);
    uncrowded = g->ops;
    ib__gen_ops ops = *g->ops;
    ops.step = crowded_step;
    g->ops = &ops;
    ib_gen_config c = gen_fixture_config(P, N);
    int32_t list[] = { 1, 2, 4, 8, 16 };
    c.sequences = list;
    c.n_sequences = 5;
    c.sequence_runs = 1;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n_points, 5);
    CHECK_EQ_INT(r.points[r.peak].sequences, 8);
    double bar = 0.95 * r.points[r.peak].tokens_per_s;
    CHECK(r.points[0].tokens_per_s < bar &&
          r.points[1].tokens_per_s >= bar); /* the script is what we think */
    CHECK(r.points[4].tokens_per_s < r.points[0].tokens_per_s);
    CHECK_EQ_INT(r.points[r.knee].sequences, 2);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* The noise warning is the runs': TTFT and each request's total across
 * runs. Tokens whose latency grows with the position (a CV of 5.8% over
 * them) in runs that repeat exactly are not noisy; a run in two with a
 * step ten times as long is. */
static void test_noise_warning(void)
{
    ib__gen_fake_script s = script();
    s.step_pos_ms = 1.0 / 8; /* steps of 9 to 10.875 ms over positions 64..79 */
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.token.cv > 0.05 && r.request.cv == 0 && r.ttft.cv == 0);
    CHECK(!(r.warnings & IB_WARN_HIGH_CV) && !(r.warnings & IB_WARN_BIMODAL));
    CHECK(r.warnings & IB_WARN_FEW_SAMPLES); /* 10 runs */
    char *text = ib__gen_report_text(&r);
    CHECK(text && !strstr(text, "noise:"));
    free(text);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
    s = script();
    s.slow_every = 2 * (N + 1); /* a prefill and N steps a run */
    s.slow_factor = 10;
    g = gen_fixture_open(&s);
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.request.cv > 0.05);
    CHECK(r.warnings & IB_WARN_HIGH_CV);
    /* the text says which spread the warning judged, with its figures */
    char expect[256];
    snprintf(expect, sizeof expect,
             "noise: the warning below judges the runs' cv, TTFT %.2f%% and the request %.2f%%;",
             100 * r.ttft.cv, 100 * r.request.cv);
    text = ib__gen_report_text(&r);
    CHECK(text && strstr(text, expect));
    free(text);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* The lengths the EOS row draws, written again here. */
static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void test_pitfalls(void)
{
    ib__gen_fake_script s = script();
    s.threads_default = 4;
    s.oversubscribed_factor = 300;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.pitfalls = true;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.has_pitfalls);
    const ib_gen_pitfall_row *row = r.pitfalls;
    for (int k = 0; k < IB_GEN_PITFALL_COUNT; k++) CHECK(row[k].applies && row[k].status == IB_OK);
    /* Measured: half of each step is queued, so the host clock reads half. */
    CHECK(row[IB_GEN_PITFALL_NO_SYNC].correct == r.token.p50);
    CHECK(r.token.p50 == step_ms(1, P + 7) / 2 + step_ms(1, P + 8) / 2);
    CHECK(row[IB_GEN_PITFALL_NO_SYNC].wrong == 0.5 * r.token.p50);
    CHECK(row[IB_GEN_PITFALL_NO_SYNC].error_pct == -50);
    CHECK(row[IB_GEN_PITFALL_EMPTY_CONTEXT].wrong == step_ms(1, 7) / 2 + step_ms(1, 8) / 2);
    CHECK_NEAR(row[IB_GEN_PITFALL_THREADS].wrong, 300 * r.token.p50, 1e-9);
    CHECK_EQ_INT(row[IB_GEN_PITFALL_THREADS].detail, 4);
    CHECK_EQ_INT(ib__gen_fake_counts_of(g).threads, 2); /* the chosen ones back */
    CHECK(row[IB_GEN_PITFALL_NO_WARMUP].correct == r.ttft.mean);
    CHECK(row[IB_GEN_PITFALL_NO_WARMUP].wrong == (20 + 9 * 2.5) / 10);
    CHECK_EQ_INT(ib__gen_fake_counts_of(g).reopens, 1);
    /* No switch between decode and prefill scripted: back to back reads
     * the requests' TTFT. */
    CHECK(row[IB_GEN_PITFALL_BACK_TO_BACK].wrong == 2.5 && row[IB_GEN_PITFALL_BACK_TO_BACK].correct == 2.5);
    CHECK(row[IB_GEN_PITFALL_BACK_TO_BACK].error_pct == 0);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* A prefill after a decode step 0.5 ms slower (the switch): every request's
 * prefill follows the run before's steps (3 ms), prompts back to back do
 * not (2.5 ms), the first of them untimed. */
static void test_pitfalls_back_to_back(void)
{
    ib__gen_fake_script s = script();
    s.switch_ms = 0.5;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.pitfalls = true;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    const ib_gen_pitfall_row *row = &r.pitfalls[IB_GEN_PITFALL_BACK_TO_BACK];
    CHECK(row->applies && row->status == IB_OK);
    CHECK(r.ttft.p50 == 3.0 && row->correct == 3.0);
    CHECK(row->wrong == 2.5);
    CHECK_NEAR(row->error_pct, -100.0 / 6, 1e-12);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* The rows read off the correct runs, on runs that differ (every 7th call
 * twice as slow). */
static void test_pitfalls_read_off(void)
{
    ib__gen_fake_script s = script();
    s.slow_every = 7;
    s.slow_factor = 2;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.pitfalls = true;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    const ib_gen_pitfall_row *row = r.pitfalls;
    size_t n = 10 * N;
    double steps = sum(r.token_ms, n);
    /* Read off the correct runs. */
    CHECK(row[IB_GEN_PITFALL_PREFILL_IN_RATE].wrong == n / (steps + sum(r.ttft_ms, 10)) * 1e3);
    CHECK(row[IB_GEN_PITFALL_PREFILL_IN_RATE].correct == r.tokens_per_s);
    double rates = 0;
    for (int k = 0; k < 10; k++) rates += N / sum(r.token_ms + k * N, N) * 1e3;
    CHECK(row[IB_GEN_PITFALL_MEAN_OF_RATES].wrong == rates / 10);
    CHECK(row[IB_GEN_PITFALL_MEAN_OF_RATES].wrong > r.tokens_per_s);
    CHECK(row[IB_GEN_PITFALL_ONE_RUN].wrong == N / sum(r.token_ms, N) * 1e3);
    uint64_t state = 0x656f73ull;
    double tok = 0, ms = 0;
    int32_t shortest = N;
    for (int k = 0; k < 10; k++) {
        int32_t len = 2 + (int32_t)(splitmix(&state) % (N - 2 + 1));
        tok += len;
        ms += sum(r.token_ms + k * N, (size_t)len);
        if (len < shortest) shortest = len;
    }
    CHECK(row[IB_GEN_PITFALL_EOS].wrong == tok / ms * 1e3);
    CHECK_EQ_INT(row[IB_GEN_PITFALL_EOS].detail, shortest);
    /* Later positions are slower: runs stopped early report more tokens/s. */
    CHECK(row[IB_GEN_PITFALL_PREFILL_IN_RATE].wrong < r.tokens_per_s);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

static void test_pitfalls_not_applicable(void)
{
    ib__gen_fake_script s = script();
    s.has_reopen = false;
    s.threads_default = 2; /* = cores: no mistake to make */
    s.slow_every = 0;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.pitfalls = true;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(!r.pitfalls[IB_GEN_PITFALL_NO_WARMUP].applies);
    CHECK(!r.pitfalls[IB_GEN_PITFALL_THREADS].applies);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
    /* A default below the chosen threads but within the cores (a GPU host's
     * 16 cores, llama.cpp's default 4): not the mistake of too many. */
    s.cores = 8;
    s.threads_default = 4;
    g = gen_fixture_open(&s);
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(!r.pitfalls[IB_GEN_PITFALL_THREADS].applies);
    CHECK(strstr(r.pitfalls[IB_GEN_PITFALL_THREADS].not_applicable, "fit in the cores") != NULL);
    s.cores = 2;
    s.threads_default = 2;
    /* No warm-up, exactly: a fresh context's mean TTFT is (20 + 9 x 2.5) / 10. */
    ib_gen_result_free(&r);
    s.has_reopen = true;
    ib__gen_destroy(g);
    g = gen_fixture_open(&s);
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.pitfalls[IB_GEN_PITFALL_NO_WARMUP].wrong == (20 + 9 * 2.5) / 10);
    CHECK(r.pitfalls[IB_GEN_PITFALL_NO_WARMUP].correct == 2.5);
    CHECK(r.pitfalls[IB_GEN_PITFALL_NO_WARMUP].error_pct == 70);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

static void test_failure_keeps_runs(void)
{
    ib__gen_fake_script s = script();
    /* Calls: the cold prefill and step (2), 3 warm-up runs of 17, then the
     * timed runs: the 6th call of the 5th run fails. */
    s.fail_at_call = 2 + 3 * 17 + 4 * 17 + 5;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_RUNTIME);
    CHECK(r.partial && r.stop_status == IB_ERR_RUNTIME);
    CHECK_EQ_INT(r.runs, 4);
    CHECK_EQ_INT(r.token.n, 4 * N);
    CHECK(r.tokens_per_s == 4.0 * N / sum(r.token_ms, 4 * N) * 1e3);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* Steps timed without synchronize leave work queued: the run drains it, so
 * that it never lands in what is timed next. */
static void test_unsynchronized_run_drains(void)
{
    ib__gen_fake_script s = script();
    s.cold_calls = 0;
    s.queued_fraction = 0.75; /* the device falls behind the host: a backlog */
    ib__gen *g = gen_fixture_open(&s);
    ib_error err;
    CHECK(g->ops->set_sequences(g, 1, P + N, &err) == IB_OK);
    ib__gen_run_spec spec = { .n_seqs = 1, .prompt = P, .depth = P, .steps = N, .sync_steps = false };
    double ttft, steps[N];
    CHECK(ib__gen_run(g, &spec, &ttft, steps, NULL, &err) == IB_OK);
    CHECK(steps[0] == step_ms(1, P) / 4); /* the host's quarter only */
    spec.sync_steps = true;
    CHECK(ib__gen_run(g, &spec, &ttft, steps, NULL, &err) == IB_OK);
    CHECK(ttft == 2.5);
    CHECK(steps[0] == step_ms(1, P));
    ib__gen_destroy(g);
}

static volatile int cancel_flag;
static int64_t cancel_after;

static void cancel_at(const ib_progress *p, void *user)
{
    (void)user;
    if (p->phase == IB_PHASE_SAMPLING && p->done >= cancel_after) cancel_flag = 1;
}

static void test_interrupt_keeps_runs(void)
{
    ib__gen_fake_script s = script();
    s.step_ms = 8; /* a run of about 130 ms: a progress report after each */
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.run.runs = 30;
    c.run.cancel = &cancel_flag;
    c.run.progress = cancel_at;
    cancel_after = 5;
    cancel_flag = 0;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_INTERRUPTED);
    CHECK(r.partial && r.stop_status == IB_ERR_INTERRUPTED);
    CHECK_EQ_INT(r.runs, 5);
    CHECK_EQ_INT(r.token.n, 5 * N);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

static void test_sampling_timed_apart(void)
{
    ib__gen_fake_script s = script();
    s.sample_ms = 0.25;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.time_sampling = true;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.sample.n, 10 * N);
    CHECK(r.sample.p50 == 0.25 && r.sample.max == 0.25);
    CHECK(r.token_ms[0] == step_ms(1, P)); /* not in the step */
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
    s.sample_ms = 0;
    g = gen_fixture_open(&s);
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_UNSUPPORTED);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

static void test_precision(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.run.precision = 0.01;
    c.run.min_runs = 12;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    /* Every TTFT is 2.5: met at the first check, the minimum. */
    CHECK_EQ_INT(r.runs, 12);
    CHECK(r.precision_met);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* Steady TTFTs, spread steps (latency growing with the position, 9 to
 * 10.875 ms): the TTFT's interval is met at the first check, the tokens'
 * later, and the runs stop at the first check (every 10 runs here) where
 * the tokens' interval is within the target too, not before. */
static void test_precision_follows_tokens(void)
{
    ib__gen_fake_script s = script();
    s.step_pos_ms = 1.0 / 8;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.run.precision = 0.01;
    c.run.min_runs = 10;
    c.run.max_runs = 1000;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.precision_met && r.ttft.cv == 0);
    CHECK(r.runs > 10 && r.runs % 10 == 0);
    CHECK(ib__median_precision(r.token_ms, r.runs * N, 0) <= 0.01);
    CHECK(ib__median_precision(r.token_ms, (r.runs - 10) * N, 0) > 0.01);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

static ib_status refused(ib_gen_config c, const ib__gen_fake_script *s, const char *words)
{
    ib__gen *g = gen_fixture_open(s);
    ib_gen_result r;
    ib_error err = { { 0 } };
    ib_status st = ib_measure_generation(g, &c, &r, &err);
    CHECK(strstr(err.message, words) != NULL);
    if (!strstr(err.message, words)) fprintf(stderr, "  message: %s\n", err.message);
    CHECK(r.runs == 0 && ib__gen_fake_counts_of(g).prefills == 0); /* refused before anything ran */
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
    return st;
}

static void test_bad_input(void)
{
    ib__gen_fake_script s = script();
    ib_gen_config c = gen_fixture_config(P, N);
    c.ctx_per_seq = 32;
    CHECK(refused(c, &s, "a prompt of 64 tokens is longer than the context of 32") == IB_ERR_INVALID_ARG);
    c = gen_fixture_config(P, N);
    c.ctx_per_seq = 70;
    CHECK(refused(c, &s, "depth 64 + 16 new tokens pass the context of 70") == IB_ERR_INVALID_ARG);
    c = gen_fixture_config(P, N);
    c.depth = 8190;
    CHECK(refused(c, &s, "passes the model's own (n_ctx_train 8192)") == IB_ERR_INVALID_ARG);
    c = gen_fixture_config(P, N);
    c.depth = 10;
    CHECK(refused(c, &s, "depth 10 is below the prompt") == IB_ERR_INVALID_ARG);
    int32_t many[] = { 1, 257 };
    c = gen_fixture_config(P, N);
    c.sequences = many;
    c.n_sequences = 2;
    CHECK(refused(c, &s, "257 sequences: a count is 1 to 256") == IB_ERR_INVALID_ARG);
    int32_t twice[] = { 4, 4 };
    c.sequences = twice;
    CHECK(refused(c, &s, "4 sequences are listed twice") == IB_ERR_INVALID_ARG);
    c = gen_fixture_config(P, N);
    c.prompt_tokens = 0;
    CHECK(refused(c, &s, "the prompt must be 1 to") == IB_ERR_INVALID_ARG);
    c = gen_fixture_config(P, N);
    c.new_tokens = -3;
    CHECK(refused(c, &s, "the new tokens must be 1 to") == IB_ERR_INVALID_ARG);
    c = gen_fixture_config(P, N);
    c.run.runs = 0;
    CHECK(refused(c, &s, "runs must be between 1 and") == IB_ERR_INVALID_ARG);
    c = gen_fixture_config(P, N);
    c.run.runs = 1000000;
    c.new_tokens = 64;
    CHECK(refused(c, &s, "1000000 runs of 64 new tokens are more than the 33554432 token samples") ==
          IB_ERR_INVALID_ARG);
    c = gen_fixture_config(P, N);
    c.tpot_budget_ms = 5;
    CHECK(refused(c, &s, "a TPOT budget picks among sequence counts") == IB_ERR_INVALID_ARG);
}

static void test_open_by_name(void)
{
    ib_gen_options o;
    ib_gen_options_init(&o);
    o.backend = "fake";
    ib_backend_option opts[] = { { "step_us", "2000" }, { "kv_tokens", "1000" } };
    o.options = opts;
    o.n_options = 2;
    ib_gen *g;
    ib_error err;
    CHECK(ib_gen_open("m", &o, &g, &err) == IB_OK);
    CHECK(!strcmp(ib_gen_get_info(g)->model, "m"));
    CHECK(!strcmp(ib_option_list_get(&ib_gen_get_info(g)->options, "step_us"), "2000"));
    ib_gen_destroy(g);
    ib_backend_option bad[] = { { "nope", "1" } };
    o.options = bad;
    o.n_options = 1;
    CHECK(ib_gen_open("m", &o, &g, &err) == IB_ERR_INVALID_ARG &&
          strstr(err.message, "unknown option 'nope'"));
    o.backend = "onnxruntime";
    o.n_options = 0;
    CHECK(ib_gen_open("m", &o, &g, &err) == IB_ERR_INVALID_ARG);
    ib_gen_destroy(NULL);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_counts_and_figures);
    RUN(test_reports);
    RUN(test_depth);
    RUN(test_search_under_capacity);
    RUN(test_search_ended_by_first_step);
    RUN(test_search_bounds);
    RUN(test_budget);
    RUN(test_budget_on_the_mean);
    RUN(test_knee_of_a_flat_curve);
    RUN(test_noise_warning);
    RUN(test_pitfalls);
    RUN(test_pitfalls_back_to_back);
    RUN(test_pitfalls_read_off);
    RUN(test_pitfalls_not_applicable);
    RUN(test_unsynchronized_run_drains);
    RUN(test_failure_keeps_runs);
    RUN(test_interrupt_keeps_runs);
    RUN(test_sampling_timed_apart);
    RUN(test_precision);
    RUN(test_precision_follows_tokens);
    RUN(test_bad_input);
    RUN(test_open_by_name);
    return check_summary("test_generate");
}
