/* best for a generative model (ib_measure_best_generation) on the scripted
 * generation fake's virtual clock: each candidate a script of step and
 * prefill times, so that the drops, the finalists, the winner and every
 * measuring step's time are known exactly (docs/best.md, "Generative
 * models"). */
#include "backend/fake/gen_fake.h"
#include "check.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* P 16, N 8, depth P: a prefill of prefill_ms + 16/128 ms, a step at
 * position p of step_ms + p/1024 ms. The first two calls after each open
 * (the cold run's prefill and step) are 8 times slower. Dyadic numbers:
 * every sum is exact. */
#define P 16
#define N 8
#define SCREEN_RUNS 10
#define FINAL_RUNS 20
#define WARMUP 3

typedef struct script_row {
    const char *label;
    double prefill_ms, step_ms;
    int64_t fail_at_call; /* -1: none */
    const char *refuse;   /* the open's refusal (a combination the library does not take) */
    /* A value of n_ubatch asked (0: none stated); the model states it in
     * effect clamped to the request's P + N tokens, as llama.cpp does. */
    int ubatch;
    /* The steps of its later openings (its final: each measurement opens
     * it anew), 0: step_ms: a final that differs from the screening. */
    double final_step_ms;
} script_row;

typedef struct scripted {
    const script_row *rows;
    int opens[16];
    int cancel_at_open; /* 1-based: raise *cancel when that candidate opens */
    volatile int *cancel;
} scripted;

static ib_status open_row(size_t i, void *user, ib_gen **g, ib_error *err)
{
    scripted *sc = user;
    const script_row *r = &sc->rows[i];
    sc->opens[i]++;
    if (sc->cancel_at_open == (int)i + 1) *sc->cancel = 1; /* the user's ^C, as candidate i opens */
    if (r->refuse) {
        snprintf(err->message, sizeof err->message, "%s", r->refuse);
        return IB_ERR_INVALID_ARG;
    }
    ib__gen_fake_script s;
    ib__gen_fake_script_init(&s);
    s.prefill_ms = r->prefill_ms;
    s.step_ms = sc->opens[i] > 1 && r->final_step_ms > 0 ? r->final_step_ms : r->step_ms;
    s.fail_at_call = r->fail_at_call;
    ib__gen_open_args a;
    ib__gen_open_args_init(&a);
    a.model = "fake-lm";
    char ran[16];
    snprintf(ran, sizeof ran, "%d", r->ubatch < P + N ? r->ubatch : P + N);
    ib_backend_option in_effect = { "n_ubatch", ran };
    a.options = &in_effect;
    a.n_options = r->ubatch > 0;
    return ib__gen_open_fake_script(&s, &a, g, err);
}

/* The program's label of what runs: "ubatch N" of the value in effect. */
static void label_ran(size_t i, void *user, const ib_option_list *ran, char *label, size_t cap)
{
    (void)i;
    (void)user;
    const char *v = ib_option_list_get(ran, "n_ubatch");
    snprintf(label, cap, "ubatch %s", v ? v : "?");
}

/* A run: the prompt, then N steps at P..P+N-1. */
static double steps_ms(double step) { return N * step + (P + P + N - 1) * N / 2 / 1024.0; }
static double ttft_ms(double prefill) { return prefill + P / 128.0; }
static double run_ms(const script_row *r) { return ttft_ms(r->prefill_ms) + steps_ms(r->step_ms); }
/* One measurement: the cold run (a prefill and a step, 8 times slower),
 * the warm-up runs, the timed runs. */
static double measure_ms(const script_row *r, int runs)
{
    return 8 * (ttft_ms(r->prefill_ms) + r->step_ms + P / 1024.0) + (WARMUP + runs) * run_ms(r);
}

static const char *labels[] = { "fast", "slower", "close", "refused", "failing", "far" };
static const script_row rows[] = {
    { "fast", 2, 1, -1, NULL, 0, 0 },
    { "slower", 2, 1.5, -1, NULL, 0, 0 },
    { "close", 2, 1.0078125, -1, NULL, 0, 0 }, /* +0.7%: within the 2% margin, lost in the finals */
    { "refused", 2, 1, -1, "llama: kv_type=q8_0 needs flash attention (flash_attn=on or auto)", 0, 0 },
    { "failing", 2, 1, 5, NULL, 0, 0 }, /* a call of its warm-up fails */
    { "far", 2, 5, -1, NULL, 0, 0 },
};

static void config(ib_best_config *bc, ib_best_gen *bg, scripted *sc, size_t n)
{
    ib_best_config_init(bc);
    bc->n_candidates = n;
    bc->labels = labels;
    bc->screen_runs = SCREEN_RUNS;
    bc->latency.runs = FINAL_RUNS;
    bc->latency.warmup_runs = WARMUP;
    bc->latency.warmup_ms = 0;
    bc->latency.warmup_until_steady = false;
    ib_best_gen_init(bg);
    bg->open = open_row;
    bg->open_user = sc;
    bg->gen.prompt_tokens = P;
    bg->gen.new_tokens = N;
}

static void test_race_by_tpot(void)
{
    scripted sc = { .rows = rows };
    ib_best_config bc;
    ib_best_gen bg;
    config(&bc, &bg, &sc, 6);
    ib_best_result *r = malloc(sizeof *r);
    ib_gen_result win;
    ib_error err = { { 0 } };
    CHECK(ib_measure_best_generation(&bc, &bg, r, &win, &err) == IB_OK);
    CHECK(r->generation && r->figure == IB_BEST_GEN_TPOT && !r->partial);
    CHECK_EQ_INT(r->prompt_tokens, P);
    CHECK_EQ_INT(r->depth, P);
    CHECK(!strcmp(r->info.model, "fake-lm"));
    /* The winner and the finalist that lost by 0.7%, over the 0.5% of the finals. */
    CHECK_EQ_INT(r->latency_winner, 0);
    CHECK(r->rows[0].latency_stage == IB_BEST_WINNER);
    CHECK(r->rows[2].latency_stage == IB_BEST_FINALIST);
    CHECK(strstr(r->rows[2].latency_why, "against the winner") && strstr(r->rows[2].latency_why, "slower"));
    /* Dropped by the CI rule after the first round; refused; failed. */
    CHECK(r->rows[1].latency_stage == IB_BEST_DROPPED &&
          strstr(r->rows[1].latency_why, "screening: +49.1% against fast"));
    CHECK(r->rows[5].latency_stage == IB_BEST_DROPPED);
    CHECK(r->rows[3].latency_stage == IB_BEST_SKIPPED && strstr(r->rows[3].latency_why, "needs flash"));
    CHECK(r->rows[4].latency_stage == IB_BEST_FAILED &&
          strstr(r->rows[4].latency_why, "fake: call 5 failed"));
    CHECK(r->throughput_winner < 0 && r->searched < 0);
    /* The figures: one value a run, TPOT the mean of its N steps. */
    double tpot0 = steps_ms(1) / N;
    CHECK(r->rows[0].tpot.p50 == tpot0 && r->rows[0].latency.p50 == tpot0);
    CHECK_EQ_INT(r->rows[0].tpot.n, FINAL_RUNS);
    CHECK(r->rows[0].ttft.p50 == ttft_ms(2));
    CHECK_NEAR(r->rows[0].tokens_per_s, N / steps_ms(1) * 1e3, 1e-9);
    CHECK_EQ_INT(r->rows[0].latency_runs, SCREEN_RUNS + FINAL_RUNS);
    CHECK_EQ_INT(r->rows[1].latency_runs, SCREEN_RUNS);
    CHECK(r->rows[1].tpot.p50 == steps_ms(1.5) / N);
    /* Each measuring step exactly, on the virtual clock. */
    CHECK(r->rows[0].step_ms[IB_BEST_STEP_SCREEN] == measure_ms(&rows[0], SCREEN_RUNS));
    CHECK(r->rows[0].step_ms[IB_BEST_STEP_LATENCY_FINAL] == measure_ms(&rows[0], FINAL_RUNS));
    CHECK(r->rows[2].step_ms[IB_BEST_STEP_LATENCY_FINAL] == measure_ms(&rows[2], FINAL_RUNS));
    CHECK(r->rows[1].step_ms[IB_BEST_STEP_SCREEN] == measure_ms(&rows[1], SCREEN_RUNS));
    CHECK(r->rows[1].step_ms[IB_BEST_STEP_LATENCY_FINAL] == 0);
    CHECK(r->rows[0].ms == measure_ms(&rows[0], SCREEN_RUNS) + measure_ms(&rows[0], FINAL_RUNS));
    CHECK(r->step_ms[IB_BEST_STEP_BATCH_SEARCH] == 0 && r->step_ms[IB_BEST_STEP_THROUGHPUT_FINAL] == 0);
    /* Opened for each measurement, closed after it: the winner's screening
     * and its final; a dropped one once. */
    CHECK_EQ_INT(sc.opens[0], 2);
    CHECK_EQ_INT(sc.opens[1], 1);
    CHECK_EQ_INT(sc.opens[2], 2);
    /* The winner's full generation measurement: its final runs. */
    CHECK_EQ_INT(win.runs, FINAL_RUNS);
    CHECK_EQ_INT(win.new_tokens, N);
    CHECK(win.ttft.p50 == ttft_ms(2));
    CHECK_NEAR(win.tokens_per_s, r->rows[0].tokens_per_s, 1e-9);
    ib_gen_result_free(&win);
    free(r);
}

/* The JSON report of res, parsed (NULL when it fails). */
static cJSON *json_of(const ib_result *res)
{
    char *text = ib_report(res, "json");
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    ib_free(text);
    CHECK(doc != NULL);
    return doc;
}

static const cJSON *candidate(const cJSON *doc, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "candidates"), i);
}

/* Ranked by TTFT, the candidate with the faster prefill and slower steps
 * wins; by TPOT, the other. */
static void test_figure_decides(void)
{
    static const script_row two[] = { { "a", 2, 1, -1, NULL, 0, 0 }, { "b", 1, 1.25, -1, NULL, 0, 0 } };
    for (int f = 0; f < 2; f++) {
        scripted sc = { .rows = two };
        ib_best_config bc;
        ib_best_gen bg;
        config(&bc, &bg, &sc, 2);
        bg.figure = f ? IB_BEST_GEN_TTFT : IB_BEST_GEN_TPOT;
        ib_best_result *r = malloc(sizeof *r);
        ib_gen_result win;
        ib_error err;
        CHECK(ib_measure_best_generation(&bc, &bg, r, &win, &err) == IB_OK);
        CHECK_EQ_INT(r->latency_winner, f ? 1 : 0);
        CHECK(r->rows[1].latency.p50 == (f ? ttft_ms(1) : steps_ms(1.25) / N));
        /* Both figures stated for each row, whichever ranks. */
        CHECK(r->rows[1].ttft.p50 == ttft_ms(1) && r->rows[1].tpot.p50 == steps_ms(1.25) / N);
        CHECK(r->rows[0].ttft.p50 == ttft_ms(2) && r->rows[0].tpot.p50 == steps_ms(1) / N);
        CHECK(win.ttft.p50 == ttft_ms(f ? 1 : 2));
        ib_gen_result_free(&win);
        free(r);
    }
}

/* A bound that the first candidate's screening spends exactly: the others
 * are not measured in the screening, said; the winner's final, longer than
 * the bound, is cut where it reaches it (after 10 runs: the cold run, the
 * warm-up and 10 runs are the bound), what it measured standing. */
static void test_step_bound(void)
{
    scripted sc = { .rows = rows };
    ib_best_config bc;
    ib_best_gen bg;
    config(&bc, &bg, &sc, 3);
    bc.step_max_ms = measure_ms(&rows[0], SCREEN_RUNS);
    ib_best_result *r = malloc(sizeof *r);
    ib_gen_result win;
    ib_error err;
    CHECK(ib_measure_best_generation(&bc, &bg, r, &win, &err) == IB_OK);
    CHECK(r->steps_bounded == (1u << IB_BEST_STEP_SCREEN | 1u << IB_BEST_STEP_LATENCY_FINAL));
    CHECK(strstr(r->rows[0].latency_why,
                 "cut after 10 runs: the latency finals reached the step's time bound"));
    CHECK(r->rows[0].step_ms[IB_BEST_STEP_LATENCY_FINAL] == measure_ms(&rows[0], SCREEN_RUNS));
    CHECK(r->rows[0].step_ms[IB_BEST_STEP_SCREEN] == measure_ms(&rows[0], SCREEN_RUNS));
    CHECK_EQ_INT(r->latency_winner, 0);
    for (size_t i = 1; i < 3; i++) {
        CHECK(r->rows[i].latency_stage == IB_BEST_NOT_MEASURED);
        CHECK(strstr(r->rows[i].latency_why, "not measured: the screening reached the step's time bound"));
        CHECK(r->rows[i].step_ms[IB_BEST_STEP_SCREEN] == 0);
    }
    CHECK_EQ_INT(win.runs, 10);
    CHECK(win.partial);
    /* The race was cut short: partial, though nothing failed; said in
     * every format, the rows "not measured (time bound)", not dropped. */
    CHECK(r->partial && r->stop_status == IB_OK);
    CHECK_EQ_INT(r->not_measured, 2);
    ib_result res = {
        .kind = IB_RESULT_BEST, .best = r, .best_cfg = &bc, .generation = &win, .gen_cfg = &bg.gen
    };
    static const char *const said[][2] = {
        { "text", "PARTIAL: the race was cut short: the time bound (0.1587 s a step, --step-max-ms) left 2 "
                  "candidates not measured" },
        { "text", " 0  not measured (time bound)\n" },
        { "csv", ",not measured,tpot," },
        { "md", "| not measured (time bound) |" },
        { "md", "**partial**: the race was cut short" },
        { "html", "<td>not measured (time bound)</td>" },
    };
    for (size_t k = 0; k < sizeof said / sizeof *said; k++) {
        char *doc = ib_report(&res, said[k][0]);
        CHECK(doc && strstr(doc, said[k][1]));
        if (!doc || !strstr(doc, said[k][1])) fprintf(stderr, "  %s lacks: %s\n", said[k][0], said[k][1]);
        ib_free(doc);
    }
    cJSON *doc = json_of(&res);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(doc, "partial")));
    CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "stop_reason")),
                  "the race was cut short: the time bound (0.1587 s a step, --step-max-ms) left 2 candidates "
                  "not measured"));
    CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(candidate(doc, 2), "stage")), "not measured"));
    CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "search"), "not_measured")->valuedouble == 2);
    cJSON_Delete(doc);
    ib_gen_result_free(&win);
    free(r);
}

/* n_ubatch 128, 256 and 512 asked, each clamped to the request's P + N =
 * 24 tokens: one run, raced once (the first, labelled as it runs, "ubatch
 * 24"); the two others merged into it, opened once and never measured.
 * 16 is a run of its own. Said in every format. */
static void test_same_runs_merged(void)
{
    static const script_row asked[] = {
        { "ubatch 128", 2, 1, -1, NULL, 128, 0 },
        { "ubatch 256", 2, 1, -1, NULL, 256, 0 },
        { "ubatch 512", 2, 1, -1, NULL, 512, 0 },
        { "ubatch 16", 2, 1.5, -1, NULL, 16, 0 },
    };
    static const char *const asked_labels[] = { "ubatch 128", "ubatch 256", "ubatch 512", "ubatch 16" };
    scripted sc = { .rows = asked };
    ib_best_config bc;
    ib_best_gen bg;
    config(&bc, &bg, &sc, 4);
    bc.labels = asked_labels;
    bg.label_ran = label_ran;
    ib_best_result *r = malloc(sizeof *r);
    ib_gen_result win;
    ib_error err;
    CHECK(ib_measure_best_generation(&bc, &bg, r, &win, &err) == IB_OK);
    CHECK(!r->partial);
    CHECK_EQ_INT(r->merged, 2);
    CHECK(!strcmp(r->rows[0].label, "ubatch 24") && !strcmp(r->rows[0].asked, "ubatch 128"));
    CHECK_EQ_INT(r->rows[0].same_as, -1);
    CHECK_EQ_INT(r->latency_winner, 0);
    for (size_t i = 1; i < 3; i++) {
        CHECK(r->rows[i].latency_stage == IB_BEST_MERGED);
        CHECK_EQ_INT(r->rows[i].same_as, 0);
        CHECK(!strcmp(r->rows[i].label, asked_labels[i]) && !r->rows[i].asked[0]);
        CHECK(!strcmp(r->rows[i].latency_why,
                      "runs as #1 (ubatch 24): the same settings in effect, raced once"));
        CHECK_EQ_INT(r->rows[i].latency_runs, 0);
        CHECK(r->rows[i].ms == 0);
        CHECK_EQ_INT(sc.opens[i], 1);
    }
    /* 16 runs as asked: its own run, raced (dropped by the CI rule). */
    CHECK(!strcmp(r->rows[3].label, "ubatch 16") && !r->rows[3].asked[0]);
    CHECK(r->rows[3].latency_stage == IB_BEST_DROPPED && strstr(r->rows[3].latency_why, "against ubatch 24"));
    CHECK_EQ_INT(r->rows[3].latency_runs, SCREEN_RUNS);
    ib_result res = {
        .kind = IB_RESULT_BEST, .best = r, .best_cfg = &bc, .generation = &win, .gen_cfg = &bg.gen
    };
    static const char *const said[][2] = {
        { "text", "merged: 2 of 4 candidates run as an earlier one" },
        { "text", " 1  ran as: ubatch 24 (asked: ubatch 128); the same run as asked by #2, #3\n" },
        { "text", " 2  merged: runs as #1 (ubatch 24)" },
        { "text", "\nfastest: ubatch 24: median run TPOT" },
        { "csv", ",ubatch 512,merged,tpot,,,,,,,0,\"runs as #1 (ubatch 24): the same settings in effect, "
                 "raced once\",,1\r\n" },
        { "md", "| ubatch 24 | " },
        { "md", "ran as this, asked: ubatch 128; the same run as asked by #2, #3" },
        { "html", "<td>merged</td><td>runs as #1 (ubatch 24)" },
        { "html", "ran as this, asked: ubatch 128; the same run as asked by #2, #3" },
    };
    for (size_t k = 0; k < sizeof said / sizeof *said; k++) {
        char *doc = ib_report(&res, said[k][0]);
        CHECK(doc && strstr(doc, said[k][1]));
        if (!doc || !strstr(doc, said[k][1])) fprintf(stderr, "  %s lacks: %s\n", said[k][0], said[k][1]);
        ib_free(doc);
    }
    cJSON *doc = json_of(&res);
    CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(candidate(doc, 0), "label")), "ubatch 24"));
    CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(candidate(doc, 0), "asked")), "ubatch 128"));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(candidate(doc, 0), "same_as")));
    CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(candidate(doc, 1), "stage")), "merged"));
    CHECK(cJSON_GetObjectItem(candidate(doc, 1), "same_as")->valuedouble == 0);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(candidate(doc, 1), "asked")));
    CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "search"), "merged")->valuedouble == 2);
    cJSON_Delete(doc);
    ib_gen_result_free(&win);
    free(r);
}

/* The winner's figures are its final's alone: its final steps (0.75 ms)
 * differ from its screening's (1 ms), so a figure pooled with the
 * screening, or taken from it, differs from the final's. */
static void test_winner_figures_from_its_final(void)
{
    static const script_row two[] = { { "a", 2, 1, -1, NULL, 0, 0.75 }, { "b", 2, 1.5, -1, NULL, 0, 0 } };
    scripted sc = { .rows = two };
    ib_best_config bc;
    ib_best_gen bg;
    config(&bc, &bg, &sc, 2);
    ib_best_result *r = malloc(sizeof *r);
    ib_gen_result win;
    ib_error err;
    CHECK(ib_measure_best_generation(&bc, &bg, r, &win, &err) == IB_OK);
    CHECK_EQ_INT(r->latency_winner, 0);
    CHECK_EQ_INT(sc.opens[0], 2);
    const ib_best_row *w = &r->rows[0];
    /* Its tokens over the time of its final's steps, exactly. */
    CHECK_EQ_INT(win.runs, FINAL_RUNS);
    CHECK(w->tokens_per_s == N / steps_ms(0.75) * 1e3);
    CHECK(w->tokens_per_s == win.tokens_per_s);
    CHECK(w->tpot.p50 == steps_ms(0.75) / N && w->latency.p50 == w->tpot.p50);
    CHECK_EQ_INT(w->tpot.n, FINAL_RUNS);
    /* The text's winner line states the same figure. */
    ib_result res = {
        .kind = IB_RESULT_BEST, .best = r, .best_cfg = &bc, .generation = &win, .gen_cfg = &bg.gen
    };
    char *text = ib_report(&res, "text"), line[160];
    snprintf(line, sizeof line, "; TPOT %.4g ms, %.5g tokens/s (its final's tokens over their time)",
             steps_ms(0.75) / N, N / steps_ms(0.75) * 1e3);
    CHECK(text && strstr(text, line));
    ib_free(text);
    ib_gen_result_free(&win);
    free(r);
}

/* Every candidate measured fully, one after the other. */
static void test_exhaustive(void)
{
    scripted sc = { .rows = rows };
    ib_best_config bc;
    ib_best_gen bg;
    config(&bc, &bg, &sc, 3);
    bc.exhaustive = true;
    ib_best_result *r = malloc(sizeof *r);
    ib_gen_result win;
    ib_error err;
    CHECK(ib_measure_best_generation(&bc, &bg, r, &win, &err) == IB_OK);
    CHECK_EQ_INT(r->latency_winner, 0);
    for (size_t i = 0; i < 3; i++) {
        CHECK(r->rows[i].step_ms[IB_BEST_STEP_LATENCY_FINAL] == measure_ms(&rows[i], FINAL_RUNS));
        CHECK(r->rows[i].step_ms[IB_BEST_STEP_SCREEN] == 0);
        CHECK_EQ_INT(r->rows[i].latency_runs, FINAL_RUNS);
    }
    CHECK(r->rows[1].latency_stage == IB_BEST_FINALIST);
    ib_gen_result_free(&win);
    free(r);
}

/* Interrupted as the second candidate opens: the first one's screening
 * stands, the search stops, partial, with no winner. */
static void test_interrupted(void)
{
    volatile int stop = 0;
    scripted sc = { .rows = rows, .cancel_at_open = 2, .cancel = &stop };
    ib_best_config bc;
    ib_best_gen bg;
    config(&bc, &bg, &sc, 3);
    bc.latency.cancel = &stop;
    ib_best_result *r = malloc(sizeof *r);
    ib_gen_result win;
    ib_error err;
    CHECK(ib_measure_best_generation(&bc, &bg, r, &win, &err) == IB_ERR_INTERRUPTED);
    CHECK(r->partial && r->stop_status == IB_ERR_INTERRUPTED);
    CHECK_EQ_INT(r->rows[0].latency_runs, SCREEN_RUNS);
    CHECK(r->rows[0].tpot.p50 == steps_ms(1) / N);
    CHECK_EQ_INT(r->rows[1].latency_runs, 0);
    CHECK_EQ_INT(sc.opens[2], 0);
    CHECK(r->latency_winner < 0);
    CHECK_EQ_INT(win.runs, 0);
    ib_gen_result_free(&win);
    free(r);
}

static void test_refusals(void)
{
    scripted sc = { .rows = rows };
    ib_best_config bc;
    ib_best_gen bg;
    config(&bc, &bg, &sc, 2);
    ib_best_result *r = malloc(sizeof *r);
    ib_gen_result win;
    ib_error err;
    bc.objective = IB_BEST_OBJECTIVE_ENERGY;
    CHECK(ib_measure_best_generation(&bc, &bg, r, &win, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "not by energy"));
    bc.objective = IB_BEST_OBJECTIVE_TIME;
    bc.sessions = 3;
    CHECK(ib_measure_best_generation(&bc, &bg, r, &win, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "one process"));
    bc.sessions = 1;
    bg.open = NULL;
    CHECK(ib_measure_best_generation(&bc, &bg, r, &win, &err) == IB_ERR_INVALID_ARG);
    CHECK(ib_measure_best_generation(&bc, NULL, r, &win, &err) == IB_ERR_INVALID_ARG);
    CHECK_EQ_INT(win.runs, 0);
    CHECK_EQ_INT(sc.opens[0], 0);
    free(r);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_race_by_tpot);
    RUN(test_figure_decides);
    RUN(test_step_bound);
    RUN(test_same_runs_merged);
    RUN(test_winner_figures_from_its_final);
    RUN(test_exhaustive);
    RUN(test_interrupted);
    RUN(test_refusals);
    return check_summary("test_best_gen");
}
