/* The best search on scripted fake candidates: the faster configuration
 * wins; a faster one that fails the accuracy gate does not; one that
 * cannot open is skipped with its reason while the others run; the race
 * never drops the true winner in scripted noisy cases; it costs at most a
 * quarter of the exhaustive sweep's (virtual) time and finds the same
 * winners; cancel keeps what was measured; every printer prints it. */
#include "check.h"
#include "backend/fake/fake.h"
#include "report/printer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One scripted candidate: a run at batch b takes base_ms + item_ms * b,
 * each input past `knee` costing more again (so the throughput peaks
 * inside the batches that fit), times 1 +- noise (a fixed pseudo-random
 * draw per run). */
typedef struct spec {
    double base_ms, item_ms;
    double noise;
    double cosine;      /* < 1: the accuracy check reports it */
    double tolerance;   /* > 0: the check had this tolerance on max abs error */
    const char *refuse; /* non-NULL: open fails with this */
    int64_t oom_above;  /* > 0: batches above it run out of memory (else 256) */
    uint64_t seed;
    volatile int *cancel; /* raised after cancel_after runs in all */
    int64_t cancel_after;
    int64_t *runs;        /* runs of every candidate together */
    double check_spin_ms; /* > 0: its accuracy check spins this long (host clock) */
    double check_ms;      /* what its check reported taking */
} spec;

#define KNEE 64

/* text holds part (text shown when it does not). */
#define CHECK_STR_CONTAINS(text, part)                                                                       \
    do {                                                                                                     \
        const char *check_t_ = (text);                                                                       \
        CHECK(check_t_ &&strstr(check_t_, part));                                                            \
        if (!check_t_ || !strstr(check_t_, part))                                                            \
            fprintf(stderr, "  in: %s\n", check_t_ ? check_t_ : "(null)");                                   \
    } while (0)

static double clean_ms(const spec *s, int64_t b)
{
    double over = b > KNEE ? (double)(b - KNEE) / KNEE : 0;
    return s->base_ms + s->item_ms * (double)b * (1 + over);
}

/* splitmix64 of (seed, index) as a draw in [-1, 1). */
static double draw(uint64_t seed, int64_t index)
{
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + (uint64_t)index + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / (double)(1ull << 52) - 1.0;
}

static double duration(int64_t batch, int64_t index, void *ctx)
{
    spec *s = ctx;
    if (s->runs && ++*s->runs == s->cancel_after && s->cancel) *s->cancel = 1;
    return clean_ms(s, batch) * (1 + s->noise * draw(s->seed, index));
}

typedef struct scenario {
    size_t n;
    spec s[IB_BEST_MAX_CANDIDATES];
    char labels[IB_BEST_MAX_CANDIDATES][32];
    const char *label_ptrs[IB_BEST_MAX_CANDIDATES];
    int64_t runs;
} scenario;

static ib_status open_spec(size_t i, void *user, ib_workload **w, ib_accuracy *acc, ib_error *err)
{
    scenario *sc = user;
    spec *s = &sc->s[i];
    if (s->refuse) {
        snprintf(err->message, sizeof err->message, "%s", s->refuse);
        return IB_ERR_UNSUPPORTED;
    }
    ib__fake_script fs;
    ib__fake_script_init(&fs);
    fs.duration_ms = duration;
    fs.ctx = s;
    fs.oom_above_batch = s->oom_above > 0 ? s->oom_above : 256;
    IB_TRY(ib__workload_open_fake(&fs, w, err));
    if (acc) {
        memset(acc, 0, sizeof *acc);
        if (s->cosine < 1) {
            acc->measured = true;
            acc->n_outputs = 1;
            snprintf(acc->outputs[0].name, sizeof acc->outputs[0].name, "y");
            acc->outputs[0].compared = true;
            acc->outputs[0].cosine = s->cosine;
            acc->outputs[0].max_abs_error = 1 - s->cosine;
            acc->tolerance = s->tolerance;
            acc->outputs[0].over_tolerance = s->tolerance > 0 && 1 - s->cosine > s->tolerance;
        }
        if (s->check_spin_ms > 0) { /* a check of real duration, timed as ib_measure_accuracy times */
            double t0 = ib__now_ms();
            while (ib__now_ms() - t0 < s->check_spin_ms) {
            }
            acc->ms = s->check_ms = ib__now_ms() - t0;
        }
    }
    return IB_OK;
}

static void add(scenario *sc, double base_ms, double item_ms, double noise, double cosine)
{
    size_t i = sc->n++;
    sc->s[i] = (spec){ .base_ms = base_ms,
                       .item_ms = item_ms,
                       .noise = noise,
                       .cosine = cosine,
                       .seed = i + 1,
                       .runs = &sc->runs };
    snprintf(sc->labels[i], sizeof sc->labels[i], "c%zu", i);
    sc->label_ptrs[i] = sc->labels[i];
}

/* Short fixed warm-ups and run counts: exact virtual times. */
static void config(scenario *sc, ib_best_config *c, bool exhaustive)
{
    ib_best_config_init(c);
    c->n_candidates = sc->n;
    c->labels = sc->label_ptrs;
    c->open = open_spec;
    c->open_user = sc;
    c->latency.warmup_until_steady = false;
    c->throughput.run.warmup_until_steady = false;
    c->throughput.run.runs = 50;
    c->exhaustive = exhaustive;
}

static ib_best_result *run(scenario *sc, bool exhaustive, ib_status *st)
{
    ib_best_config c;
    config(sc, &c, exhaustive);
    ib_best_result *r = malloc(sizeof *r);
    ib_error err = { { 0 } };
    *st = ib_measure_best(&c, r, &err);
    return r;
}

/* The true best among the accurate candidates that open: lowest latency
 * at batch 1, highest inputs/s over the batches that fit. */
static size_t true_fastest(const scenario *sc)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < sc->n; i++)
        if (!sc->s[i].refuse && sc->s[i].cosine >= IB_BEST_DEFAULT_MIN_COSINE &&
            (best == SIZE_MAX || clean_ms(&sc->s[i], 1) < clean_ms(&sc->s[best], 1)))
            best = i;
    return best;
}

static double true_peak(const spec *s)
{
    double peak = 0;
    for (int64_t b = 1; b <= 256; b++) peak = fmax(peak, (double)b / clean_ms(s, b) * 1000);
    return peak;
}

/* Each row's measuring steps add up to its ms, the result's steps to the
 * rows', its measured_ms to the measuring steps. */
static void check_step_sums(const ib_best_result *r)
{
    double measured = 0;
    for (int k = 0; k < IB_BEST_STEPS; k++) {
        double rows = 0;
        for (size_t i = 0; i < r->n_rows; i++) rows += r->rows[i].step_ms[k];
        CHECK_NEAR(r->step_ms[k], rows, 1e-9);
        CHECK(r->step_ms[k] >= 0);
        if (k >= IB_BEST_STEP_SCREEN) measured += r->step_ms[k];
    }
    CHECK_NEAR(r->measured_ms, measured, 1e-9);
    for (size_t i = 0; i < r->n_rows; i++) {
        double row = 0;
        for (int k = IB_BEST_STEP_SCREEN; k < IB_BEST_STEPS; k++) row += r->rows[i].step_ms[k];
        CHECK_NEAR(r->rows[i].ms, row, 1e-9);
    }
}

static void test_faster_wins(void)
{
    scenario sc = { 0 };
    add(&sc, 1.00, 0.010, 0.01, 1);
    add(&sc, 1.10, 0.010, 0.01, 1);
    add(&sc, 0.90, 0.012, 0.01, 1); /* fastest at batch 1 */
    add(&sc, 1.30, 0.004, 0.01, 1); /* the most inputs/s */
    add(&sc, 0.95, 0.010, 0.01, 1);
    add(&sc, 2.00, 0.020, 0.01, 1);
    ib_status st;
    ib_best_result *r = run(&sc, false, &st);
    CHECK_EQ_INT(st, IB_OK);
    CHECK_EQ_INT(r->latency_winner, 2);
    CHECK_EQ_INT(r->rows[2].latency_stage, IB_BEST_WINNER);
    CHECK_NEAR(r->rows[2].latency.p50, clean_ms(&sc.s[2], 1), 0.01);
    CHECK_EQ_INT(r->throughput_winner, 3);
    CHECK_EQ_INT(r->rows[3].throughput_stage, IB_BEST_WINNER);
    CHECK(r->rows[3].items_per_s >= 0.98 * true_peak(&sc.s[3]));
    CHECK_EQ_INT(r->searched, 2); /* the batch searched on the latency winner */
    CHECK_EQ_INT(r->peak_batch, KNEE);
    /* The clearly slow one left in screening, saying against whom. */
    CHECK_EQ_INT(r->rows[5].latency_stage, IB_BEST_DROPPED);
    CHECK(strstr(r->rows[5].latency_why, "screening: +") && strstr(r->rows[5].latency_why, "against c2") &&
          strstr(r->rows[5].latency_why, "margin"));
    CHECK_EQ_INT(r->rows[5].latency_runs, 30); /* one screening round */
    /* Every loser says why. */
    for (size_t i = 0; i < sc.n; i++)
        if ((int)i != r->latency_winner) CHECK(r->rows[i].latency_why[0]);
    CHECK(r->measured_ms > 0);
    check_step_sums(r);
    free(r);
}

/* A loser's noisy runs are its row's warning, not the answer's; the
 * winner's are the answer's. */
static void test_warnings_of_the_winners(void)
{
    scenario sc = { 0 };
    add(&sc, 1.00, 0.010, 0.01, 1); /* steady, the fastest */
    add(&sc, 2.00, 0.020, 0.30, 1); /* +-30%: a CV near 17% */
    ib_status st;
    ib_best_result *r = run(&sc, false, &st);
    CHECK_EQ_INT(st, IB_OK);
    CHECK_EQ_INT(r->latency_winner, 0);
    CHECK_EQ_INT(r->throughput_winner, 0);
    CHECK(r->rows[1].latency_warnings & IB_WARN_HIGH_CV);
    CHECK(!(r->rows[0].latency_warnings & IB_WARN_HIGH_CV) &&
          !(r->rows[0].throughput_warnings & IB_WARN_HIGH_CV));
    CHECK(!(r->warnings & IB_WARN_HIGH_CV));
    ib_best_config c;
    config(&sc, &c, false);
    char *json = ib_best_report_json(r, &c);
    cJSON *doc = cJSON_Parse(json);
    const cJSON *loser = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "candidates"), 1);
    const cJSON *keys = cJSON_GetObjectItem(cJSON_GetObjectItem(loser, "latency"), "warnings");
    CHECK(cJSON_GetArraySize(keys) >= 1 && !strcmp(cJSON_GetArrayItem(keys, 0)->valuestring, "high_cv"));
    const cJSON *w; /* the machine's may be there (a loaded host's cpu_busy); the samples' not */
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(doc, "warnings")) CHECK(strcmp(w->valuestring, "high_cv") != 0);
    cJSON_Delete(doc);
    ib_free(json);
    free(r);
    sc.s[0].noise = 0.30; /* the winner noisy now */
    sc.s[1].noise = 0.01;
    r = run(&sc, false, &st);
    CHECK_EQ_INT(st, IB_OK);
    CHECK_EQ_INT(r->latency_winner, 0);
    CHECK(r->warnings & IB_WARN_HIGH_CV);
    free(r);
}

/* Candidates closer than the screening margin all reach the final, whose
 * full measurements decide; each finalist says how far it is. */
static void test_finalists_decide(void)
{
    scenario sc = { 0 };
    add(&sc, 1.000, 0.001, 0.005, 1);
    add(&sc, 0.990, 0.001, 0.005, 1);
    add(&sc, 1.005, 0.001, 0.005, 1);
    ib_status st;
    ib_best_result *r = run(&sc, false, &st);
    CHECK_EQ_INT(st, IB_OK);
    CHECK_EQ_INT(r->latency_winner, 1);
    CHECK_EQ_INT(r->rows[0].latency_stage, IB_BEST_FINALIST);
    CHECK_EQ_INT(r->rows[2].latency_stage, IB_BEST_FINALIST);
    CHECK(r->rows[0].latency_runs > 300); /* screening rounds, then the full 300 */
    CHECK(strstr(r->rows[0].latency_why, "against the winner") && strstr(r->rows[0].latency_why, "slower"));
    free(r);
}

static void test_inaccurate_never_wins(void)
{
    scenario sc = { 0 };
    add(&sc, 1.00, 0.010, 0.01, 1);
    add(&sc, 0.50, 0.002, 0.01, 0.95);   /* twice as fast, wrong */
    add(&sc, 0.80, 0.010, 0.01, 0.9995); /* reduced, within the gate */
    ib_status st;
    ib_best_result *r = run(&sc, false, &st);
    CHECK_EQ_INT(st, IB_OK);
    CHECK_EQ_INT(r->latency_winner, 2);
    CHECK(r->throughput_winner != 1);
    CHECK_EQ_INT(r->rows[1].latency_stage, IB_BEST_INACCURATE);
    CHECK_EQ_INT(r->rows[1].throughput_stage, IB_BEST_INACCURATE);
    CHECK(!r->rows[1].accurate && r->rows[2].accurate && r->rows[0].accurate);
    CHECK(strstr(r->rows[1].latency_why, "cosine"));
    CHECK_NEAR(r->rows[1].latency.p50, 0.50, 0.01); /* its figure is shown */
    free(r);
    /* With a tolerance (--max-error) the gate is the max abs error: a
     * cosine that passes does not save a candidate over it. */
    scenario t = { 0 };
    add(&t, 1.00, 0.010, 0.01, 1);
    add(&t, 0.50, 0.002, 0.01, 0.9999); /* max abs 1e-4 */
    t.s[1].tolerance = 1e-5;
    r = run(&t, false, &st);
    CHECK_EQ_INT(r->latency_winner, 0);
    CHECK_EQ_INT(r->rows[1].latency_stage, IB_BEST_INACCURATE);
    CHECK(strstr(r->rows[1].latency_why, "tolerance"));
    free(r);
    t.s[1].tolerance = 1e-3;
    r = run(&t, false, &st);
    CHECK_EQ_INT(r->latency_winner, 1);
    free(r);
}

static void test_skipped_with_reason(void)
{
    scenario sc = { 0 };
    add(&sc, 1.00, 0.010, 0.01, 1);
    add(&sc, 0.10, 0.001, 0.01, 1);
    sc.s[1].refuse = "--math bf16: no bfloat16 Conv";
    ib_status st;
    ib_best_result *r = run(&sc, false, &st);
    CHECK_EQ_INT(st, IB_OK);
    CHECK_EQ_INT(r->latency_winner, 0);
    CHECK_EQ_INT(r->rows[1].latency_stage, IB_BEST_SKIPPED);
    CHECK_EQ_INT(r->rows[1].open_status, IB_ERR_UNSUPPORTED);
    CHECK(!strcmp(r->rows[1].latency_why, "--math bf16: no bfloat16 Conv"));
    CHECK_EQ_INT(r->rows[1].latency.n, 0);
    free(r);
}

/* A candidate that cannot run the peak batch fails there, with the
 * runtime's words; the others go on. */
static void test_fails_at_peak_batch(void)
{
    scenario sc = { 0 };
    add(&sc, 1.00, 0.010, 0.01, 1);
    add(&sc, 1.10, 0.001, 0.01, 1); /* the most inputs/s, if it fitted */
    add(&sc, 1.20, 0.010, 0.01, 1);
    sc.s[1].oom_above = 16;
    ib_status st;
    ib_best_result *r = run(&sc, false, &st);
    CHECK_EQ_INT(st, IB_OK);
    CHECK_EQ_INT(r->peak_batch, KNEE);
    CHECK_EQ_INT(r->rows[1].throughput_stage, IB_BEST_FAILED);
    CHECK(strstr(r->rows[1].throughput_why, "out of device memory"));
    CHECK(r->throughput_winner == 0 || r->throughput_winner == 2);
    CHECK(r->rows[1].latency.n > 0); /* its latency stands */
    free(r);
}

/* Many noisy scenarios with close candidates: the true winner is never
 * dropped in screening, and the winner is within 2% of the true best. */
static void test_never_drops_true_winner(void)
{
    int dropped = 0, off = 0;
    for (uint64_t k = 0; k < 12; k++) {
        scenario sc = { 0 };
        for (size_t i = 0; i < 8; i++) {
            double base = 1.0 + 0.01 * (double)((i * 7 + k * 3) % 8); /* 1.00 .. 1.07, 1% apart */
            add(&sc, base, 0.01, 0.03, 1);
            sc.s[i].seed = k * 100 + i;
        }
        ib_status st;
        ib_best_result *r = run(&sc, false, &st);
        size_t truth = true_fastest(&sc);
        dropped += r->rows[truth].latency_stage == IB_BEST_DROPPED;
        off +=
            r->latency_winner < 0 || clean_ms(&sc.s[r->latency_winner], 1) > 1.02 * clean_ms(&sc.s[truth], 1);
        free(r);
    }
    CHECK_EQ_INT(dropped, 0);
    CHECK_EQ_INT(off, 0);
}

/* The race against the exhaustive sweep on 16 candidates: the same winners
 * (within 2%), at most a quarter of the time. */
static void test_cost_against_exhaustive(void)
{
    scenario sc = { 0 };
    for (size_t i = 0; i < 16; i++)
        add(&sc, 1.0 + 0.05 * (double)(i % 5), 0.004 + 0.001 * (double)(i % 7), 0.01, 1);
    ib_status st_race, st_all;
    ib_best_result *race = run(&sc, false, &st_race);
    ib_best_result *all = run(&sc, true, &st_all);
    CHECK_EQ_INT(st_race, IB_OK);
    CHECK_EQ_INT(st_all, IB_OK);
    CHECK(all->exhaustive && !race->exhaustive);
    for (size_t i = 0; i < sc.n; i++) CHECK_EQ_INT(all->rows[i].throughput_stage >= IB_BEST_FINALIST, 1);
    CHECK(race->latency_winner >= 0 && all->latency_winner >= 0);
    CHECK(race->throughput_winner >= 0 && all->throughput_winner >= 0);
    CHECK(race->rows[race->latency_winner].latency.p50 <= 1.02 * all->rows[all->latency_winner].latency.p50);
    CHECK(race->rows[race->throughput_winner].items_per_s >=
          0.98 * all->rows[all->throughput_winner].items_per_s);
    CHECK(race->measured_ms <= 0.25 * all->measured_ms);
    fprintf(stderr, "test_best: race %.0f ms, exhaustive %.0f ms (virtual): %.0f%%\n", race->measured_ms,
            all->measured_ms, 100 * race->measured_ms / all->measured_ms);
    free(race);
    free(all);
}

/* Runs of a measurement with warm-up by count alone: the cold run, the
 * warm-up runs and the timed ones (twice at a throughput point: per run,
 * then back to back; once at a point of the race's screening and finals at
 * the peak, back to back alone). */
#define LATENCY_RUNS(warmup, runs) (1 + (warmup) + (runs))
#define POINT_RUNS(warmup, runs) (1 + (warmup) + 2 * (runs))
#define ITEMS_POINT_RUNS(warmup, runs) (1 + (warmup) + (runs))

static void check_steps(const ib_best_row *row, double screen, double latency_final, double batch_search,
                        double peak_screen, double throughput_final)
{
    CHECK_NEAR(row->step_ms[IB_BEST_STEP_SCREEN], screen, 1e-9);
    CHECK_NEAR(row->step_ms[IB_BEST_STEP_LATENCY_FINAL], latency_final, 1e-9);
    CHECK_NEAR(row->step_ms[IB_BEST_STEP_BATCH_SEARCH], batch_search, 1e-9);
    CHECK_NEAR(row->step_ms[IB_BEST_STEP_PEAK_SCREEN], peak_screen, 1e-9);
    CHECK_NEAR(row->step_ms[IB_BEST_STEP_THROUGHPUT_FINAL], throughput_final, 1e-9);
}

/* The JSON carries every row's steps and their totals as the result
 * holds them; the text, the totals in seconds (`line` of them). */
static void check_steps_reported(const ib_best_result *r, const ib_best_config *c, const char *line)
{
    char *json = ib_best_report_json(r, c);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    CHECK(doc != NULL);
    cJSON *total = cJSON_GetObjectItem(doc, "steps_ms");
    double steps = 0;
    for (int k = 0; k < IB_BEST_STEPS; k++) {
        const char *key = ib_best_step_name((ib_best_step)k);
        CHECK_NEAR(cJSON_GetObjectItem(total, key)->valuedouble, r->step_ms[k], 1e-9);
        steps += r->step_ms[k];
        for (size_t i = 0; i < r->n_rows; i++) {
            cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "candidates"), (int)i);
            CHECK_NEAR(cJSON_GetObjectItem(cJSON_GetObjectItem(row, "steps_ms"), key)->valuedouble,
                       r->rows[i].step_ms[k], 1e-9);
        }
    }
    CHECK_NEAR(cJSON_GetObjectItem(total, "other")->valuedouble, fmax(r->elapsed_ms - steps, 0), 1e-9);
    cJSON_Delete(doc);
    ib_free(json);
    char *text = ib_best_report_text(r);
    CHECK(text && strstr(text, "\ntime by step: opening ") && strstr(text, line));
    CHECK(text && !strstr(text, "inputs per joule")); /* no counter: no heading over an empty list */
    if (text && !strstr(text, line)) fprintf(stderr, "%s", text);
    ib_free(text);
}

/* Where the time goes, step by step, hand-computed from the script: every
 * run of c0 takes 1 ms, of c1 2 ms, of c2 0.5 ms at any batch (so the
 * peak is the largest batch, 4); c1 is clearly slower at batch 1, c2
 * inaccurate, c3 does not open. Warm-ups by count: the screening's is 3
 * runs, the finals' 10 at batch 1 and 5 at a batch; 30 screening runs,
 * 300 final, 50 per throughput point, a third of the screening's (10) at
 * the peak. */
static void test_time_by_step(void)
{
    scenario sc = { 0 };
    add(&sc, 1.0, 0, 0, 1);
    add(&sc, 2.0, 0, 0, 1);
    add(&sc, 0.5, 0, 0, 0.5);
    add(&sc, 1.0, 0, 0, 1);
    sc.s[1].check_spin_ms = sc.s[2].check_spin_ms = 0.5;
    sc.s[3].refuse = "no such configuration";
    for (int exhaustive = 0; exhaustive < 2; exhaustive++) {
        ib_best_config c;
        config(&sc, &c, exhaustive);
        c.latency.warmup_ms = 0;
        c.throughput.run.warmup_ms = 0;
        c.throughput.max_batch = 4;
        ib_best_result *r = malloc(sizeof *r);
        ib_error err = { { 0 } };
        CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_OK);
        double screen = LATENCY_RUNS(3, 30), final = LATENCY_RUNS(10, 300);
        /* The sweep's search: probes at 1, 2 and 4 (one run each), each
         * followed by its point, whose first run the probe's was. The
         * race's, from the top: a probe at 4, a point at 4, one at 2 (half
         * of 4's inputs/s: below the plateau, the last). */
        double search = exhaustive ? 3 + 3 * (POINT_RUNS(5, 50) - 1) : 1 + 2 * POINT_RUNS(5, 50);
        if (!exhaustive) {
            CHECK_EQ_INT(r->latency_winner, 0);
            CHECK_EQ_INT(r->rows[1].latency_stage, IB_BEST_DROPPED);
            CHECK_EQ_INT(r->peak_batch, 4);
            CHECK_EQ_INT(r->rows[1].throughput_stage, IB_BEST_FINALIST);
            check_steps(&r->rows[0], screen, final, search, 0, 0);
            /* c1: screened at the peak, then its finals at 2 and 4. */
            check_steps(&r->rows[1], 2 * screen, 0, 0, 2 * ITEMS_POINT_RUNS(3, 10),
                        2 * 2 * ITEMS_POINT_RUNS(5, 50));
            check_steps(&r->rows[2], 0.5 * screen, 0, 0, 0, 0);
        } else {
            check_steps(&r->rows[0], 0, final, search, 0, 0);
            check_steps(&r->rows[1], 0, 2 * final, 2 * search, 0, 0);
            check_steps(&r->rows[2], 0, 0, 0, 0, 0); /* inaccurate: the sweep does not time it */
        }
        check_steps(&r->rows[3], 0, 0, 0, 0, 0);
        check_step_sums(r);
        /* Opening and the checks, on the host clock: the check's own time
         * is what it reported, the opening's the rest of the callback. */
        CHECK_EQ_INT(r->rows[0].step_ms[IB_BEST_STEP_ACCURACY] == 0, 1);
        CHECK_NEAR(r->rows[1].step_ms[IB_BEST_STEP_ACCURACY], sc.s[1].check_ms, 1e-12);
        CHECK_NEAR(r->rows[2].step_ms[IB_BEST_STEP_ACCURACY], sc.s[2].check_ms, 1e-12);
        CHECK(sc.s[1].check_ms >= 0.5);
        for (size_t i = 0; i < sc.n; i++) CHECK(r->rows[i].step_ms[IB_BEST_STEP_OPEN] > 0);
        CHECK_EQ_INT(r->rows[3].step_ms[IB_BEST_STEP_ACCURACY] == 0, 1);
        check_steps_reported(r, &c,
                             exhaustive ? "screening 0.0 s, latency finals 0.9 s, batch search 1.0 s, peak "
                                          "screening 0.0 s, throughput finals 0.0 s, other "
                                        : "screening 0.1 s, latency finals 0.3 s, batch search 0.2 s, peak "
                                          "screening 0.0 s, throughput finals 0.2 s, other ");
        free(r);
    }
}

static void test_cancel_keeps_what_was_measured(void)
{
    scenario sc = { 0 };
    volatile int cancel = 0;
    for (size_t i = 0; i < 4; i++) add(&sc, 1.0 + 0.1 * (double)i, 0.01, 0.01, 1);
    for (size_t i = 0; i < 4; i++) sc.s[i].cancel = &cancel, sc.s[i].cancel_after = 200;
    ib_best_config c;
    config(&sc, &c, false);
    c.latency.cancel = &cancel;
    ib_best_result *r = malloc(sizeof *r);
    ib_error err = { { 0 } };
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_ERR_INTERRUPTED);
    CHECK(r->partial);
    CHECK_EQ_INT(r->stop_status, IB_ERR_INTERRUPTED);
    CHECK(r->rows[0].latency.n > 0);                           /* measured before: kept */
    CHECK_EQ_INT(r->rows[3].latency_stage, IB_BEST_NOT_TRIED); /* never reached */
    check_step_sums(r);                                        /* what ran is counted */
    CHECK(r->step_ms[IB_BEST_STEP_SCREEN] > 0);
    char *text = ib_best_report_text(r);
    CHECK(text && strstr(text, "PARTIAL"));
    ib_free(text);
    free(r);
}

static void test_reports(void)
{
    scenario sc = { 0 };
    add(&sc, 1.00, 0.010, 0.01, 1);
    add(&sc, 0.90, 0.010, 0.01, 0.5);
    add(&sc, 1.00, 0.010, 0.01, 1);
    sc.s[2].refuse = "no TF32 on the CPU";
    ib_best_config c;
    config(&sc, &c, false);
    ib_best_result *r = malloc(sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_OK);
    ib_result res = { .kind = IB_RESULT_BEST, .best = r, .best_cfg = &c };
    const char *formats[] = { "text", "json", "html", "csv", "md" };
    for (size_t f = 0; f < 5; f++) {
        CHECK(ib_report_supports(formats[f], IB_RESULT_BEST));
        char *doc = ib_report(&res, formats[f]);
        CHECK(doc && strstr(doc, "c0") && strstr(doc, "c1") && strstr(doc, "c2"));
        ib_free(doc);
    }
    char *json = ib_report(&res, "json");
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    CHECK(root != NULL);
    CHECK(!strcmp(cJSON_GetObjectItem(root, "schema")->valuestring, "inferbench.best/2"));
    CHECK(!strcmp(cJSON_GetObjectItem(root, "latency_winner")->valuestring, "c0"));
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(root, "candidates")), 3);
    cJSON *c1 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "candidates"), 1);
    CHECK(
        !strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(c1, "latency"), "stage")->valuestring, "inaccurate"));
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(c1, "accurate")));
    cJSON_Delete(root);
    ib_free(json);
    char *text = ib_best_report_text(r);
    CHECK(text && strstr(text, "skipped: no TF32 on the CPU") && strstr(text, "fastest at batch 1: c0"));
    ib_free(text);
    /* The page's own table, before the text report it ends with, has the
     * intervals and why each lost (not only the text dump). */
    char *html = ib_report(&res, "html"), ci[96], why[320];
    char *dump = html ? strstr(html, "<h2>Report</h2>") : NULL;
    if (dump) *dump = '\0';
    snprintf(ci, sizeof ci, "<td class=n>%.4g..%.4g</td>", r->rows[0].latency.ci95_median[0],
             r->rows[0].latency.ci95_median[1]);
    snprintf(why, sizeof why, "%s</td></tr>",
             strstr(r->rows[1].latency_why, "cosine similarity 0.5 is below"));
    CHECK_STR_CONTAINS(html, "<th>95% CI ms</th>");
    CHECK_STR_CONTAINS(html, ci);
    CHECK_STR_CONTAINS(html, why);
    CHECK_STR_CONTAINS(html, "<td>no TF32 on the CPU</td>");
    ib_free(html);
    free(r);
}

/* Finals in sessions: each session of candidate i shifts its runs by
 * offset[i][k] (what changes from one process to the next), with a 0.2%
 * run-to-run noise; a session listed in fail_at fails. */
typedef struct sessions_script {
    scenario *sc;
    double offset[2][5];
    size_t fail_candidate, fail_session; /* 1-based; 0 none */
    size_t interrupt_after;              /* calls; 0 never */
    size_t calls;
    size_t order[16]; /* candidate of each call */
} sessions_script;

static ib_status scripted_session(size_t i, size_t session, void *user, double **ms, size_t *n, ib_error *err)
{
    sessions_script *ss = user;
    if (ss->calls < 16) ss->order[ss->calls] = i;
    if (++ss->calls == ss->interrupt_after) {
        snprintf(err->message, sizeof err->message, "interrupted");
        return IB_ERR_INTERRUPTED;
    }
    if (i + 1 == ss->fail_candidate && session == ss->fail_session) {
        snprintf(err->message, sizeof err->message, "session %zu, exit status 1: boom", session);
        return IB_ERR_RUNTIME;
    }
    *n = 30;
    *ms = malloc(*n * sizeof **ms);
    for (size_t j = 0; j < *n; j++)
        (*ms)[j] = clean_ms(&ss->sc->s[i], 1) * (1 + ss->offset[i][session - 1]) *
                   (1 + 0.002 * draw(100 * i + session, (int64_t)j));
    return IB_OK;
}

static ib_best_result *run_sessions(sessions_script *ss, ib_status *st)
{
    ib_best_config c;
    config(ss->sc, &c, false);
    c.sessions = 5;
    c.measure_session = scripted_session;
    c.session_user = ss;
    ib_best_result *r = malloc(sizeof *r);
    ib_error err = { { 0 } };
    *st = ib_measure_best(&c, r, &err);
    return r;
}

/* c0 is 1% faster than c1, but its first session ran 3% slow: the winner
 * is chosen on the geometric means of session medians, and with sessions that
 * differ by about 1% a 1% difference is not called real (the interval
 * across sessions covers the threshold), where the runs alone would say
 * slower. */
static void test_finals_in_sessions(void)
{
    scenario sc = { 0 };
    add(&sc, 1.00, 0.01, 0, 1);
    add(&sc, 1.01, 0.01, 0, 1);
    sessions_script ss = {
        .sc = &sc, .offset = { { 0.03, -0.01, 0, -0.005, 0.005 }, { -0.02, 0.01, 0, 0.005, -0.005 } }
    };
    ib_status st;
    ib_best_result *r = run_sessions(&ss, &st);
    CHECK_EQ_INT(st, IB_OK);
    CHECK_EQ_INT(r->latency_winner, 0);
    CHECK_EQ_INT((int)r->sessions, 5);
    CHECK_EQ_INT((int)r->rows[0].sessions.k, 5);
    CHECK_EQ_INT((int)r->rows[1].sessions.k, 5);
    CHECK_EQ_INT((int)ss.calls, 10);
    /* round-robin: session 1 of each finalist, then session 2... */
    CHECK(ss.order[0] == 0 && ss.order[1] == 1 && ss.order[2] == 0 && ss.order[3] == 1);
    /* Each session's median is the configuration's times its offset: the
     * geometric mean, that of 1 + offset over the five (0.39% for c0). */
    for (int i = 0; i < 2; i++) {
        double offsets = 1;
        for (int k = 0; k < 5; k++) offsets *= 1 + ss.offset[i][k];
        CHECK(fabs(r->rows[i].sessions.geomean_ms / ((1.01 + 0.01 * i) * pow(offsets, 0.2)) - 1) < 0.003);
    }
    CHECK(r->rows[1].sessions.between_sd > 0.005);
    CHECK(strstr(r->rows[1].latency_why, "geometric mean of session medians") != NULL);
    CHECK(strstr(r->rows[1].latency_why, "across sessions") != NULL);
    CHECK(strstr(r->rows[1].latency_why, ": inconclusive") != NULL);
    CHECK_EQ_INT((int)r->rows[1].latency_runs, 30 + 5 * 30);
    /* The sessions are the latency finals, on the host clock. */
    check_step_sums(r);
    CHECK(r->rows[1].step_ms[IB_BEST_STEP_LATENCY_FINAL] > 0);
    char *text = ib_best_report_text(r);
    CHECK(text && strstr(text, "geometric mean of session medians 1.01"));
    CHECK(text && strstr(text, "measured in 5 fresh sessions"));
    ib_free(text);
    ib_best_config c;
    config(&sc, &c, false);
    c.sessions = 5;
    char *json = ib_best_report_json(r, &c);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "candidates"), 1);
    cJSON *sj = cJSON_GetObjectItem(cJSON_GetObjectItem(row, "latency"), "sessions");
    CHECK_EQ_INT((int)cJSON_GetObjectItem(sj, "count")->valuedouble, 5);
    CHECK(cJSON_GetObjectItem(sj, "between_sd_log")->valuedouble > 0.005);
    CHECK_EQ_INT((int)cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "search"), "sessions")->valuedouble, 5);
    cJSON_Delete(doc);
    ib_free(json);
    free(r);
}

/* A session that fails is counted and said; the others decide. An
 * interruption stops the search with what was measured. */
static void test_session_fails_or_interrupts(void)
{
    scenario sc = { 0 };
    add(&sc, 1.00, 0.01, 0, 1);
    add(&sc, 1.01, 0.01, 0, 1);
    sessions_script ss = { .sc = &sc, .fail_candidate = 2, .fail_session = 2 };
    ib_status st;
    ib_best_result *r = run_sessions(&ss, &st);
    CHECK_EQ_INT(st, IB_OK);
    CHECK_EQ_INT((int)r->rows[1].sessions.k, 4);
    CHECK_EQ_INT((int)r->rows[1].sessions_failed, 1);
    CHECK(strstr(r->rows[1].latency_why, "1 of 5 sessions failed: session 2, exit status 1: boom") != NULL);
    CHECK_EQ_INT(r->latency_winner, 0);
    free(r);
    sessions_script stop = { .sc = &sc, .interrupt_after = 3 };
    r = run_sessions(&stop, &st);
    CHECK_EQ_INT(st, IB_ERR_INTERRUPTED);
    CHECK(r->partial);
    CHECK_EQ_INT((int)r->rows[0].sessions.k, 1);
    CHECK_EQ_INT((int)r->rows[1].sessions.k, 1);
    free(r);
    /* Interrupted before any session: the finalists were not tried. */
    sessions_script first = { .sc = &sc, .interrupt_after = 1 };
    r = run_sessions(&first, &st);
    CHECK_EQ_INT(st, IB_ERR_INTERRUPTED);
    CHECK_EQ_INT(r->rows[0].latency_stage, IB_BEST_NOT_TRIED);
    CHECK(!strcmp(r->rows[1].latency_why, "interrupted before its sessions"));
    CHECK_EQ_INT(r->latency_winner, -1);
    free(r);
}

/* The far-behind rule, at its edge (noise 0: each median's interval is
 * the median itself): c1 at 4.1 x the leader's 1 ms leaves before the
 * finals and is never timed at the peak; c2 at 3.9 x stays in the
 * throughput race (screened at the peak). Off (0), c1 is screened at the
 * peak as before. */
static void test_far_behind_never_reaches_the_finals(void)
{
    scenario sc = { 0 };
    add(&sc, 1.0, 0, 0, 1);
    add(&sc, 4.1, 0, 0, 1);
    add(&sc, 3.9, 0, 0, 1);
    for (int off = 0; off < 2; off++) {
        ib_best_config c;
        config(&sc, &c, false);
        c.throughput.max_batch = 16;
        if (off) c.far_factor = 0;
        ib_best_result *r = malloc(sizeof *r);
        ib_error err = { { 0 } };
        CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_OK);
        CHECK_EQ_INT(r->latency_winner, 0);
        CHECK_EQ_INT(r->rows[1].latency_stage, IB_BEST_DROPPED);
        CHECK_EQ_INT(r->rows[2].throughput_stage, IB_BEST_FINALIST);
        CHECK(r->rows[2].step_ms[IB_BEST_STEP_PEAK_SCREEN] > 0);
        CHECK(r->rows[2].step_ms[IB_BEST_STEP_THROUGHPUT_FINAL] > 0);
        char *text = ib_best_report_text(r);
        char *json = ib_best_report_json(r, &c);
        cJSON *doc = cJSON_Parse(json);
        const cJSON *far = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "search"), "far_factor");
        if (!off) {
            CHECK_EQ_INT(r->rows[1].throughput_stage, IB_BEST_DROPPED);
            CHECK(r->rows[1].step_ms[IB_BEST_STEP_PEAK_SCREEN] == 0);
            CHECK(r->rows[1].step_ms[IB_BEST_STEP_THROUGHPUT_FINAL] == 0);
            CHECK(isnan(r->rows[1].items_per_s));
            CHECK_STR_CONTAINS(
                r->rows[1].throughput_why,
                "far behind at batch 1: median 95% CI 4.1..4.1 ms, its lower end over 4 x c0's "
                "upper end 1 ms: not raced at the peak");
            CHECK_STR_CONTAINS(text,
                               "far behind: a candidate whose median's 95% CI at batch 1 starts above 4 x");
            CHECK(cJSON_IsNumber(far) && far->valuedouble == 4);
        } else {
            CHECK_EQ_INT(r->rows[1].throughput_stage, IB_BEST_FINALIST);
            CHECK(r->rows[1].step_ms[IB_BEST_STEP_PEAK_SCREEN] > 0);
            CHECK(text && !strstr(text, "far behind"));
            CHECK(cJSON_IsNull(far));
        }
        cJSON_Delete(doc);
        ib_free(json);
        ib_free(text);
        free(r);
    }
}

/* The step bound on the virtual clock: the latency finals may measure
 * 100 ms. c0's final (1 ms runs, 300 of them) is cut after the first
 * progress report past the bound; c1 (+1%, a finalist too) is not
 * measured at all ("not measured (time bound)": the race was cut short,
 * the result partial though nothing failed); the other steps, shorter,
 * are not bounded. The text and the JSON say which step stopped. */
static void test_step_bound_stops_a_step(void)
{
    scenario sc = { 0 };
    add(&sc, 1.0, 0, 0, 1);
    add(&sc, 1.01, 0, 0, 1);
    ib_best_config c;
    config(&sc, &c, false);
    c.latency.warmup_ms = 0;
    c.throughput.run.warmup_ms = 0;
    c.throughput.max_batch = 4;
    c.throughput.run.runs = 20; /* the batch search: 93 ms, within the bound */
    c.step_max_ms = 100;
    ib_best_result *r = malloc(sizeof *r);
    ib_error err = { { 0 } };
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_OK);
    CHECK(r->partial && r->stop_status == IB_OK);
    CHECK_EQ_INT(r->not_measured, 1);
    CHECK_EQ_INT(r->steps_bounded, 1u << IB_BEST_STEP_LATENCY_FINAL);
    CHECK_EQ_INT(r->latency_winner, 0);
    const ib_best_row *c0 = &r->rows[0], *c1 = &r->rows[1];
    /* Cut: fewer than 300 runs, stopped within one report period (100 ms)
     * and one run past the bound. */
    double final_ms = c0->step_ms[IB_BEST_STEP_LATENCY_FINAL];
    CHECK(c0->latency.n > 30 && c0->latency.n < 300);
    CHECK(final_ms >= 100 && final_ms <= 100 + IB_PROGRESS_PERIOD_MS + 1);
    CHECK_STR_CONTAINS(c0->latency_why, "runs: the latency finals reached the step's time bound (0.1 s");
    CHECK_EQ_INT(c1->latency_stage, IB_BEST_NOT_MEASURED);
    CHECK(c1->step_ms[IB_BEST_STEP_LATENCY_FINAL] == 0);
    CHECK_STR_CONTAINS(c1->latency_why, "not measured: the latency finals reached the step's time bound");
    CHECK(r->step_ms[IB_BEST_STEP_SCREEN] < 100 && r->step_ms[IB_BEST_STEP_BATCH_SEARCH] < 100);
    CHECK_EQ_INT(r->throughput_winner >= 0, 1);
    char *text = ib_best_report_text(r);
    CHECK_STR_CONTAINS(text, "time bound: each step at most 0.1 s (--step-max-ms)");
    CHECK_STR_CONTAINS(text,
                       "time bound reached: latency_final stopped at 0.1 s; what it measured by then stands");
    CHECK_STR_CONTAINS(text, "not measured (time bound)");
    CHECK_STR_CONTAINS(text,
                       "PARTIAL: the race was cut short: the time bound (0.1 s a step, --step-max-ms) left 1 "
                       "candidate not measured");
    char *json = ib_best_report_json(r, &c);
    cJSON *doc = cJSON_Parse(json);
    const cJSON *search = cJSON_GetObjectItem(doc, "search");
    const cJSON *bounded = cJSON_GetObjectItem(search, "steps_bounded");
    CHECK(cJSON_GetArraySize(bounded) == 1 &&
          !strcmp(cJSON_GetArrayItem(bounded, 0)->valuestring, "latency_final"));
    CHECK(cJSON_GetObjectItem(search, "step_max_ms")->valuedouble == 100);
    cJSON_Delete(doc);
    ib_free(json);
    ib_free(text);
    /* No bound: the same race measures both finals fully. */
    c.step_max_ms = 0;
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_OK);
    CHECK_EQ_INT(r->steps_bounded, 0);
    CHECK(!r->partial);
    CHECK_EQ_INT(r->rows[0].latency.n, 300);
    CHECK_EQ_INT(r->rows[1].latency_stage, IB_BEST_FINALIST);
    free(r);
}

/* A back-to-back block cannot stop part-way: the throughput finals give a
 * finalist the runs its screened inputs/s says fit in what the step has
 * left. c1 (0.35 ms an input, 3.5 x c0 at batch 1: not far behind) is
 * timed in the finals at batches 2 and 4: 50 runs each would take
 * 56 x 2.1 = 117.6 ms of the 100 ms bound; its screened 2857 inputs/s at
 * batch 4 say 2.1 ms for a run at each, so 47 runs: 53 x 2.1 ms. */
static void test_step_bound_cuts_the_throughput_finals(void)
{
    scenario sc = { 0 };
    add(&sc, 0.1, 0, 0, 1);
    add(&sc, 0, 0.35, 0, 1);
    for (int bounded = 1; bounded >= 0; bounded--) {
        ib_best_config c;
        config(&sc, &c, false);
        c.latency.warmup_ms = 0;
        c.throughput.run.warmup_ms = 0;
        c.throughput.max_batch = 4;
        c.step_max_ms = bounded ? 100 : 0;
        ib_best_result *r = malloc(sizeof *r);
        ib_error err = { { 0 } };
        CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_OK);
        CHECK_EQ_INT(r->peak_batch, 4);
        CHECK_EQ_INT(r->rows[1].throughput_stage, IB_BEST_FINALIST);
        CHECK_EQ_INT(r->steps_bounded, bounded ? 1u << IB_BEST_STEP_THROUGHPUT_FINAL : 0);
        CHECK_NEAR(r->rows[1].step_ms[IB_BEST_STEP_THROUGHPUT_FINAL], (1 + 5 + (bounded ? 47 : 50)) * 2.1,
                   1e-9);
        free(r);
    }
}

static void test_bad_config(void)
{
    scenario sc = { 0 };
    add(&sc, 1.0, 0.01, 0, 1);
    ib_best_config c;
    ib_best_result *r = malloc(sizeof *r);
    ib_error err;
    config(&sc, &c, false);
    c.n_candidates = 0;
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_ERR_INVALID_ARG);
    config(&sc, &c, false);
    c.screen_runs = 2;
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_ERR_INVALID_ARG);
    config(&sc, &c, false);
    c.open = NULL;
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_ERR_INVALID_ARG);
    CHECK_EQ_INT(ib_measure_best(NULL, r, &err), IB_ERR_INVALID_ARG);
    config(&sc, &c, false);
    c.sessions = 3; /* without a callback */
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_ERR_INVALID_ARG);
    c.measure_session = scripted_session;
    c.exhaustive = true;
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_ERR_INVALID_ARG);
    config(&sc, &c, false);
    c.far_factor = 0.5; /* a factor below 1 would drop the leader's equals */
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_ERR_INVALID_ARG);
    config(&sc, &c, false);
    c.step_max_ms = -1;
    CHECK_EQ_INT(ib_measure_best(&c, r, &err), IB_ERR_INVALID_ARG);
    free(r);
}

/* The tables' cells: a large figure in whole units, never %g's exponent
 * (issue 35: "1.511e+04 ms"), a small error as its format says. */
static void test_cells_without_exponents(void)
{
    char buf[32], ci[64];
    CHECK(!strcmp(ib__best_num(buf, "%.4g", 15110.4), "15110"));
    CHECK(!strcmp(ib__best_num(buf, "%.5g", 123456.7), "123457"));
    CHECK(!strcmp(ib__best_num(buf, "%.4g", 9.87654), "9.877"));
    CHECK(!strcmp(ib__best_num(buf, "%.3g", 2.64e-05), "2.64e-05"));
    CHECK(!strcmp(ib__best_num(buf, "%.4g", NAN), "-"));
    CHECK(!strcmp(ib__best_ci_cell(ci, (const double[]){ 15000.2, 15220.9 }), "15000..15221"));
    CHECK(!strcmp(ib__best_ci_cell(ci, (const double[]){ 1.25, 1.375 }), "1.25..1.375"));
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_faster_wins);
    RUN(test_warnings_of_the_winners);
    RUN(test_finalists_decide);
    RUN(test_inaccurate_never_wins);
    RUN(test_skipped_with_reason);
    RUN(test_fails_at_peak_batch);
    RUN(test_never_drops_true_winner);
    RUN(test_cost_against_exhaustive);
    RUN(test_time_by_step);
    RUN(test_cancel_keeps_what_was_measured);
    RUN(test_reports);
    RUN(test_cells_without_exponents);
    RUN(test_finals_in_sessions);
    RUN(test_session_fails_or_interrupts);
    RUN(test_far_behind_never_reaches_the_finals);
    RUN(test_step_bound_stops_a_step);
    RUN(test_step_bound_cuts_the_throughput_finals);
    RUN(test_bad_config);
    return check_summary("test_best");
}
