/* The pitfalls measurement on the scripted fake: each wrong way reports
 * exactly what that mistake would report (host clock without sync = launch
 * overhead, copies = run + copy, no warm-up = the cold run in the mean,
 * single sample = the spread of the pattern); rows that cannot be made are
 * marked, failures stay in their row, the correct row's failure and a
 * cancel stop everything with what was measured. */
#include "check.h"
#include "backend/fake/fake.h"
#include "core/pitfall_reading.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define OVERHEAD_MS 0.05
#define COPY_MS 0.7
#define WARMUP 20
#define RUNS 300 /* a multiple of the pattern's period: every row sees the same mix */

/* The steady pattern: 2 ms -8%, -4%, 0, +4%, +8% by index % 5. */
static const double pattern_ms[5] = { 1.84, 1.92, 2.00, 2.08, 2.16 };

typedef struct cancel_at {
    volatile int *flag;
    int64_t index; /* the run that raises the flag */
} cancel_at;

/* Cold run 100 ms, start-up runs 1..5 decaying, then the pattern. */
static double script(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    cancel_at *c = ctx;
    if (c && index == c->index) *c->flag = 1;
    if (index == 0) return 100.0;
    if (index <= 5) return 2.0 + 10.0 / (double)index;
    return pattern_ms[index % 5];
}

static ib__fake_script gpu_script(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = script;
    s.host_overhead_ms = OVERHEAD_MS;
    s.gpu_like = true;
    s.copy_ms = COPY_MS;
    return s;
}

static ib_config fixed_config(void)
{
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = WARMUP;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.runs = RUNS;
    return cfg;
}

/* The runs taken by the correct row, after which the wrong ways start. */
#define CORRECT_RUNS (1 + WARMUP + RUNS)

/* The GPU-like scripted workload, measured with the fixed configuration. */
static ib_workload *measured_gpu_like(ib_pitfalls_result *r)
{
    ib__fake_script s = gpu_script();
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = fixed_config();
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, r, &err) == IB_OK);
    ib_pitfalls_result_free(r);
    return w;
}

static void test_gpu_rows_exact(void)
{
    ib_pitfalls_result r;
    ib_workload *w = measured_gpu_like(&r);
    ib_error err;
    CHECK(!r.partial);

    const ib_pitfall_row *ok = &r.rows[IB_PITFALL_CORRECT];
    CHECK(ok->status == IB_OK && ok->applies);
    CHECK_EQ_INT(ok->stats.n, RUNS);
    CHECK_NEAR(ok->stats.p50, 2.0, 1e-12); /* device time: no host overhead */
    CHECK_NEAR(ok->error_pct, 0, 0);

    /* Runs return once queued: the host clock sees the launch only. */
    const ib_pitfall_row *ns = &r.rows[IB_PITFALL_HOST_NO_SYNC];
    CHECK(ns->applies && ns->status == IB_OK);
    CHECK_EQ_INT(ns->stats.n, RUNS);
    CHECK_NEAR(ns->stats.p50, OVERHEAD_MS, 1e-9);
    CHECK_NEAR(ns->stats.max, OVERHEAD_MS, 1e-9);
    CHECK_NEAR(ns->error_pct, (OVERHEAD_MS / 2.0 - 1) * 100, 1e-6);

    /* Synchronous, host-timed, with the copies inside. */
    const ib_pitfall_row *cp = &r.rows[IB_PITFALL_COPIES];
    CHECK(cp->applies && cp->status == IB_OK);
    CHECK_EQ_INT(cp->stats.n, RUNS);
    CHECK_NEAR(cp->stats.p50, 2.0 + COPY_MS + OVERHEAD_MS, 1e-9);
    CHECK_NEAR(cp->stats.min, 1.84 + COPY_MS + OVERHEAD_MS, 1e-9);
    CHECK_NEAR(cp->error_pct, ((2.0 + COPY_MS + OVERHEAD_MS) / 2.0 - 1) * 100, 1e-6);

    /* A fresh session: runs 0..RUNS-1, the cold one and the start-up ones
     * included, device-timed. */
    const ib_pitfall_row *cold = &r.rows[IB_PITFALL_NO_WARMUP];
    CHECK(cold->applies && cold->status == IB_OK);
    double sum = 0;
    for (int64_t i = 0; i < RUNS; i++) sum += script(1, i, NULL);
    CHECK_EQ_INT(cold->stats.n, RUNS);
    CHECK_NEAR(cold->stats.mean, sum / RUNS, 1e-9);
    CHECK_NEAR(cold->stats.max, 100.0, 1e-9);
    CHECK(cold->stats.mean > ok->stats.mean + 0.3); /* the cold run alone adds 98/300 ms */
    CHECK_EQ_INT(ib__fake_runs(w), RUNS);           /* the run index restarted at the reopen */

    /* -8, -4, 0, +4, +8 percent, 60 runs each. */
    const ib_pitfall_row *one = &r.rows[IB_PITFALL_SINGLE_SAMPLE];
    CHECK(one->applies && one->status == IB_OK);
    CHECK_NEAR(one->single_p5_pct, -8.0, 1e-9);
    CHECK_NEAR(one->single_p95_pct, 8.0, 1e-9);
    CHECK_NEAR(one->single_off_5pct, 0.4, 1e-12);
    CHECK_NEAR(one->error_pct, 8.0, 1e-9);
    CHECK_NEAR(one->stats.p50, ok->stats.p50, 0);

    /* Runs are synchronous again: a run costs the host overhead + duration. */
    double t0 = w->clock.now_ms(w->clock.ctx);
    CHECK(w->ops->run(w, &err) == IB_OK);
    CHECK_NEAR(w->clock.now_ms(w->clock.ctx) - t0, OVERHEAD_MS + script(1, RUNS, NULL), 1e-9);
    ib_workload_destroy(w);
}

/* A CPU workload: no async runs, no copies; the other rows still measured. */
static void test_cpu_not_applicable(void)
{
    ib__fake_script s = gpu_script();
    s.gpu_like = false;
    s.has_device_timer = false;
    ib_workload *w = check_open_fake(&s);
    ib__workload_ops cpu_ops = *w->ops;
    cpu_ops.set_run_sync = NULL;
    cpu_ops.run_with_copies = NULL;
    w->ops = &cpu_ops;
    ib_config cfg = fixed_config();
    ib_pitfalls_result r;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_OK);
    ib_pitfalls_result_free(&r);
    CHECK(!r.partial);
    for (int k = IB_PITFALL_HOST_NO_SYNC; k <= IB_PITFALL_COPIES; k++) {
        CHECK(!r.rows[k].applies);
        CHECK(r.rows[k].not_applicable != NULL && strlen(r.rows[k].not_applicable) > 10);
        CHECK(r.rows[k].status == IB_OK);
        CHECK_EQ_INT(r.rows[k].stats.n, 0);
    }
    CHECK(strstr(r.rows[IB_PITFALL_HOST_NO_SYNC].not_applicable, "synchronous") != NULL);
    /* Host-timed correct row: overhead included, the same in every row. */
    CHECK_NEAR(r.rows[IB_PITFALL_CORRECT].stats.p50, 2.0 + OVERHEAD_MS, 1e-9);
    CHECK(r.rows[IB_PITFALL_NO_WARMUP].applies);
    CHECK_EQ_INT(r.rows[IB_PITFALL_NO_WARMUP].stats.n, RUNS);
    CHECK_NEAR(r.rows[IB_PITFALL_NO_WARMUP].stats.max, 100.0 + OVERHEAD_MS, 1e-9);
    CHECK_EQ_INT(r.rows[IB_PITFALL_SINGLE_SAMPLE].stats.n, RUNS);
    CHECK_EQ_INT(ib__fake_runs(w), RUNS);
    ib_workload_destroy(w);
}

/* A GPU workload missing the optional slots: a run that cannot return
 * early is a mistake that applies but cannot be shown (the row says why);
 * without a fresh session the cold start is not applicable; the others run. */
static void test_missing_slots(void)
{
    ib__fake_script s = gpu_script();
    ib_workload *w = check_open_fake(&s);
    ib__workload_ops ops = *w->ops;
    ops.set_run_sync = NULL;
    ops.reopen = NULL;
    w->ops = &ops;
    w->caps &= ~(uint64_t)(IB_CAP_ASYNC_RUN | IB_CAP_REOPEN);
    ib_config cfg = fixed_config();
    ib_pitfalls_result r;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_OK);
    ib_pitfalls_result_free(&r);
    const ib_pitfall_row *ns = &r.rows[IB_PITFALL_HOST_NO_SYNC];
    CHECK(ns->applies && ns->status == IB_ERR_UNSUPPORTED && ns->stats.n == 0 && ns->error[0]);
    const ib_pitfall_row *cold = &r.rows[IB_PITFALL_NO_WARMUP];
    CHECK(!cold->applies && cold->status == IB_OK && cold->stats.n == 0);
    CHECK(strstr(cold->not_applicable, "fresh session") != NULL);
    CHECK(r.rows[IB_PITFALL_COPIES].status == IB_OK);
    CHECK_EQ_INT(r.rows[IB_PITFALL_COPIES].stats.n, RUNS);
    /* the correct row, the copies, the zero-filled input's whole latency
     * measurement (cold run and warm-up included) */
    CHECK_EQ_INT(ib__fake_runs(w), 2 * CORRECT_RUNS + RUNS);
    ib_workload_destroy(w);
}

/* A wrong way that fails keeps its samples and its error; the next row runs. */
static void test_row_failure_isolated(void)
{
    ib__fake_script s = gpu_script();
    s.fail_at_run = CORRECT_RUNS + RUNS + 10; /* the 11th copies run */
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = fixed_config();
    ib_pitfalls_result r;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_OK);
    ib_pitfalls_result_free(&r);
    CHECK(!r.partial);
    const ib_pitfall_row *cp = &r.rows[IB_PITFALL_COPIES];
    CHECK(cp->status == IB_ERR_RUNTIME);
    CHECK(strstr(cp->error, "failed") != NULL);
    CHECK_EQ_INT(cp->stats.n, 10);
    CHECK(r.rows[IB_PITFALL_NO_WARMUP].status == IB_OK);
    CHECK_EQ_INT(r.rows[IB_PITFALL_NO_WARMUP].stats.n, RUNS);
    ib_workload_destroy(w);
}

/* The correct row fails: its error is returned, with what it measured. */
static void test_correct_failure(void)
{
    ib__fake_script s = gpu_script();
    s.fail_at_run = 1 + WARMUP + 40;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = fixed_config();
    ib_pitfalls_result r;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_ERR_RUNTIME);
    ib_pitfalls_result_free(&r);
    CHECK(r.partial);
    CHECK(r.stop_status == IB_ERR_RUNTIME);
    CHECK(strstr(err.message, "failed") != NULL);
    CHECK(r.rows[IB_PITFALL_CORRECT].status == IB_ERR_RUNTIME);
    CHECK_EQ_INT(r.rows[IB_PITFALL_CORRECT].stats.n, 40);
    for (int k = IB_PITFALL_HOST_NO_SYNC; k < IB_PITFALL_COUNT; k++) {
        CHECK(r.rows[k].status == IB_ERR_RUNTIME);
        CHECK_EQ_INT(r.rows[k].stats.n, 0);
        CHECK(strstr(r.rows[k].error, "the correct measurement failed") != NULL);
    }
    CHECK_EQ_INT(ib__fake_runs(w), 1 + WARMUP + 41);
    ib_workload_destroy(w);
}

/* Cancelled inside the no-sync row: that row keeps its samples, the later
 * ones are not measured, runs are synchronous again. */
static void test_cancel(void)
{
    static volatile int flag = 0;
    cancel_at c = { .flag = &flag, .index = CORRECT_RUNS + 99 };
    ib__fake_script s = gpu_script();
    s.ctx = &c;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = fixed_config();
    cfg.cancel = &flag;
    ib_pitfalls_result r;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_ERR_INTERRUPTED);
    ib_pitfalls_result_free(&r);
    CHECK(r.partial);
    CHECK(r.rows[IB_PITFALL_CORRECT].status == IB_OK);
    CHECK(r.rows[IB_PITFALL_SINGLE_SAMPLE].status == IB_OK);
    CHECK(r.rows[IB_PITFALL_HOST_NO_SYNC].status == IB_ERR_INTERRUPTED);
    CHECK_EQ_INT(r.rows[IB_PITFALL_HOST_NO_SYNC].stats.n, 100);
    CHECK(r.rows[IB_PITFALL_COPIES].status == IB_ERR_INTERRUPTED);
    CHECK_EQ_INT(r.rows[IB_PITFALL_COPIES].stats.n, 0);
    CHECK(r.rows[IB_PITFALL_NO_WARMUP].status == IB_ERR_INTERRUPTED);
    CHECK_EQ_INT(ib__fake_runs(w), CORRECT_RUNS + 100);
    double t0 = w->clock.now_ms(w->clock.ctx);
    CHECK(w->ops->run(w, &err) == IB_OK);
    CHECK(w->clock.now_ms(w->clock.ctx) - t0 > OVERHEAD_MS + 1.0);
    char *text = ib_pitfalls_report_text(&r, ib_workload_get_info(w));
    CHECK(text && strstr(text, "stopped early (interrupted)") != NULL);
    CHECK(text && strstr(text, "copies included        not measured: interrupted\n") != NULL);
    CHECK(text && strstr(text, "PARTIAL: stopped early (interrupted)") != NULL);
    ib_free(text);

    flag = 1; /* raised before anything ran */
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_ERR_INTERRUPTED);
    ib_pitfalls_result_free(&r);
    CHECK(r.partial);
    CHECK(r.rows[IB_PITFALL_CORRECT].status == IB_ERR_INTERRUPTED);
    CHECK(strstr(r.rows[IB_PITFALL_COPIES].error, "interrupted") != NULL);
    flag = 0;
    ib_workload_destroy(w);
}

static void test_bad_config(void)
{
    ib__fake_script s = gpu_script();
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = fixed_config();
    cfg.runs = 0;
    ib_pitfalls_result r;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_pitfalls_result_free(&r);
    CHECK_EQ_INT(ib__fake_runs(w), 0);
    CHECK(ib_measure_pitfalls(NULL, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_pitfalls_result_free(&r);
    ib_workload_destroy(w);
}

static const cJSON *row_of(const cJSON *rows, const char *kind)
{
    const cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(row, "kind");
        if (cJSON_IsString(k) && !strcmp(k->valuestring, kind)) return row;
    }
    return NULL;
}

static void test_reports(void)
{
    ib__fake_script s = gpu_script();
    s.gpu_like = false;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = fixed_config();
    ib_pitfalls_result r;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_OK);
    ib_pitfalls_result_free(&r);
    const ib_workload_info *info = ib_workload_get_info(w);

    char *text = ib_pitfalls_report_text(&r, info);
    CHECK(text != NULL);
    if (text) {
        CHECK(strstr(text, "N/A: not a mistake on the CPU") != NULL);
        CHECK(strstr(text, "N/A: the data already lives in host memory") != NULL);
        CHECK(strstr(text, "one run lands between -8.0% and +8.0% of the median") != NULL);
        CHECK(strstr(text, "40% of single runs are off by >5%") != NULL);
        CHECK(strstr(text, "+-8.0%") != NULL);
    }
    ib_free(text);

    char *json = ib_pitfalls_report_json(&r, info, &cfg);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    CHECK(doc != NULL);
    if (doc) {
        const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
        CHECK(cJSON_IsString(schema) && !strcmp(schema->valuestring, "inferbench.pitfalls/2"));
        const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
        CHECK_EQ_INT(cJSON_GetArraySize(rows), IB_PITFALL_COUNT);
        const cJSON *ns = row_of(rows, "host_no_sync");
        CHECK(ns && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(ns, "applies")));
        CHECK(ns && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ns, "not_applicable")));
        CHECK(ns && cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(ns, "stats")));
        const cJSON *one = row_of(rows, "single_sample");
        const cJSON *p5 = one ? cJSON_GetObjectItemCaseSensitive(one, "single_p5_pct") : NULL;
        CHECK(cJSON_IsNumber(p5) && fabs(p5->valuedouble + 8.0) < 1e-9);
        const cJSON *cold = row_of(rows, "no_warmup");
        const cJSON *st = cold ? cJSON_GetObjectItemCaseSensitive(cold, "stats") : NULL;
        CHECK(st && cJSON_GetObjectItemCaseSensitive(st, "mean") != NULL);
        CHECK(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "environment")));
        CHECK(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "config")));
    }
    cJSON_Delete(doc);
    ib_free(json);
    ib_workload_destroy(w);
}

/* On a GPU-like workload every row applies: the chart has a bar for each
 * mistake but the single sample, which is a range, against the correct
 * median's line; a bar is red when its interval excludes 0, neutral when
 * it holds it; each bar's label gives its difference, interval and
 * reading. */
static void test_html_report(void)
{
    ib_pitfalls_result r;
    ib_workload *w = measured_gpu_like(&r);
    char *html = ib_pitfalls_report_html(&r, ib_workload_get_info(w));
    CHECK(html != NULL);
    if (html) {
        CHECK_EQ_INT(count_occurrences(html, "<svg"), 1);
        int red = 0, neutral = 0;
        for (int k = IB_PITFALL_HOST_NO_SYNC; k < IB_PITFALL_COUNT; k++) {
            const ib_pitfall_row *row = &r.rows[k];
            if (k == IB_PITFALL_SINGLE_SAMPLE || !row->applies) continue;
            bool beyond = row->reading == IB_READING_LOW || row->reading == IB_READING_HIGH;
            red += beyond, neutral += !beyond;
            char interval[48], label[128];
            snprintf(label, sizeof label, "class=\"row-error\">%+.1f%% %s %s<",
                     ib__signed_shown(row->error_pct, 1),
                     ib__fmt_pitfall_interval(interval, row->error_ci95_pct, row->reading),
                     ib_pitfall_reading_name(row->reading));
            CHECK(strstr(html, label) != NULL);
        }
        /* No sync, copies: beyond; zero-filled (the same durations): within. */
        CHECK(r.rows[IB_PITFALL_HOST_NO_SYNC].reading == IB_READING_LOW);
        CHECK(r.rows[IB_PITFALL_COPIES].reading == IB_READING_HIGH);
        CHECK(r.rows[IB_PITFALL_ZERO_INPUT].reading == IB_READING_WITHIN_NOISE);
        CHECK_EQ_INT(count_occurrences(html, "<rect class=\"bar-wrong\""), red);
        CHECK_EQ_INT(count_occurrences(html, "<rect class=\"bar-noise\""), neutral);
        CHECK_EQ_INT(count_occurrences(html, "class=\"spread\"/>"), 1);
        CHECK_EQ_INT(count_occurrences(html, "<circle class=\"mean\""), 1); /* the no-warm-up row's mean */
        CHECK(strstr(html, "class=\"row-error\">one run: -8.0% .. +8.0%<") != NULL);
        CHECK(strstr(html, "correct median 2 ms") != NULL);
        CHECK(strstr(html, "</html>") != NULL);
    }
    ib_free(html);
    ib_workload_destroy(w);
}

/* The zero-filled input row is the correct method on zeros: runs on zeros
 * scripted 10% faster give -10%, and the inputs get their values back. A
 * workload that cannot refill its inputs says so in the row. */
static void test_zero_input(void)
{
    ib__fake_script s = gpu_script();
    s.zero_input_factor = 0.9;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = fixed_config();
    ib_pitfalls_result r;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_OK);
    ib_pitfalls_result_free(&r);
    const ib_pitfall_row *zero = &r.rows[IB_PITFALL_ZERO_INPUT];
    CHECK(zero->applies && zero->status == IB_OK);
    CHECK_EQ_INT(zero->stats.n, RUNS);
    CHECK_NEAR(zero->stats.p50, 1.8, 1e-9);
    CHECK_NEAR(zero->error_pct, -10.0, 1e-6);
    CHECK(strstr(zero->why, "power") && strstr(zero->why, "data-dependent"));
    CHECK(!ib__fake_zero_inputs(w));
    /* the rows after it ran on the inputs' own values */
    CHECK_NEAR(r.rows[IB_PITFALL_NO_WARMUP].stats.max, 100.0, 1e-9);
    ib_workload_destroy(w);

    w = check_open_fake(&s);
    ib__workload_ops ops = *w->ops;
    ops.fill_inputs = NULL;
    w->ops = &ops;
    w->caps &= ~(uint64_t)IB_CAP_REFILL_INPUTS;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_OK);
    ib_pitfalls_result_free(&r);
    zero = &r.rows[IB_PITFALL_ZERO_INPUT];
    CHECK(zero->applies && zero->status == IB_ERR_UNSUPPORTED && zero->stats.n == 0);
    CHECK(strstr(zero->error, "refill") != NULL);
    ib_workload_destroy(w);
}

/* ------------------------------------------------------------------------ */
/* Reading a row: its interval, as compare computes it                        */
/* ------------------------------------------------------------------------ */

/* Durations of 2 ms +-11.7%, 60 values each 5 times in any RUNS runs in a
 * row, dyadic (so that the virtual clock's differences are exact and the
 * samples known): spread enough that the bootstrap's interval of two
 * medians has width. */
#define PERIOD 60

static double spread_ms(int64_t index) { return 2 + (double)((index * 7) % PERIOD - PERIOD / 2) / 256; }

static double spread_script(int64_t batch, int64_t index, void *ctx)
{
    (void)batch, (void)ctx;
    return spread_ms(index);
}

/* The zero-filled row on a fake whose runs on zeros take factor times as
 * long (CPU or GPU-like). */
static ib_workload *measured_zero_factor(double factor, bool gpu_like, ib_pitfalls_result *r)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = spread_script;
    s.gpu_like = gpu_like;
    s.host_overhead_ms = 1.0 / 64; /* a launch the host clock can read */
    s.zero_input_factor = factor;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = fixed_config();
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, r, &err) == IB_OK);
    return w;
}

/* compare's interval (percent) of the correct samples against the zero
 * row's, which are factor x the same durations (the fake's device timer
 * times both: no launch in them). */
static void compare_interval_pct(double factor, double ci_pct[2])
{
    double a[RUNS], b[RUNS];
    for (int i = 0; i < RUNS; i++) a[i] = spread_ms(i), b[i] = factor * spread_ms(i);
    ib_comparison c;
    ib_error err;
    CHECK(ib_compare_samples(a, RUNS, b, RUNS, IB_COMPARE_DEFAULT_THRESHOLD, &c, &err) == IB_OK);
    ci_pct[0] = 100 * c.change_ci95[0];
    ci_pct[1] = 100 * c.change_ci95[1];
}

/* The zero row's JSON: its bounds and its verdict. */
static void check_zero_json(const ib_pitfalls_result *r, const ib_workload *w, const double ci_pct[2],
                            const char *verdict)
{
    ib_config cfg = fixed_config();
    char *json = ib_pitfalls_report_json(r, ib_workload_get_info(w), &cfg);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    const cJSON *zero = doc ? row_of(cJSON_GetObjectItemCaseSensitive(doc, "rows"), "zero_input") : NULL;
    const cJSON *ci = zero ? cJSON_GetObjectItemCaseSensitive(zero, "error_ci95_pct") : NULL;
    const cJSON *v = zero ? cJSON_GetObjectItemCaseSensitive(zero, "verdict") : NULL;
    CHECK(cJSON_IsArray(ci) && cJSON_GetArraySize(ci) == 2);
    if (cJSON_IsArray(ci)) {
        CHECK(cJSON_GetArrayItem(ci, 0)->valuedouble == ci_pct[0]);
        CHECK(cJSON_GetArrayItem(ci, 1)->valuedouble == ci_pct[1]);
    }
    CHECK(cJSON_IsString(v) && !strcmp(v->valuestring, verdict));
    cJSON_Delete(doc);
    ib_free(json);
}

/* The zero row's bar in the chart has this class. */
static void check_zero_bar(const ib_pitfalls_result *r, const ib_workload *w, const char *cls)
{
    char *html = ib_pitfalls_report_html(r, ib_workload_get_info(w));
    char bar[96];
    snprintf(bar, sizeof bar, "<rect class=\"%s\"", cls);
    const char *at = html ? strstr(html, ">zero-filled input</text>\n") : NULL;
    CHECK(at && !strncmp(strchr(at, '\n') + 1, bar, strlen(bar)));
    ib_free(html);
}

/* Zeros 0.4% slower, well inside the spread of the runs: the difference
 * is noise, the interval holds 0, the row reads "within noise", is drawn
 * neutral, and is not explained as an effect of zeros. Its bounds are
 * compare's. */
static void test_reading_within_noise(void)
{
    const double factor = 1 + 1.0 / 256;
    ib_pitfalls_result r;
    ib_workload *w = measured_zero_factor(factor, false, &r);
    const ib_pitfall_row *zero = &r.rows[IB_PITFALL_ZERO_INPUT];
    double ci[2];
    compare_interval_pct(factor, ci);
    CHECK(ci[0] < 0 && ci[1] > 0 && zero->error_pct > 0.3);
    CHECK(zero->error_ci95_pct[0] == ci[0] && zero->error_ci95_pct[1] == ci[1]);
    CHECK(zero->reading == IB_READING_WITHIN_NOISE && zero->no_interval == NULL);
    CHECK(strstr(zero->why, "zeros are no shortcut") != NULL);
    check_zero_json(&r, w, ci, "within noise");
    check_zero_bar(&r, w, "bar-noise");
    char *text = ib_pitfalls_report_text(&r, ib_workload_get_info(w));
    char interval[48], line[160];
    snprintf(line, sizeof line, "%17s  %-12s  %s", ib__fmt_pitfall_interval(interval, ci, zero->reading),
             "within noise", zero->why);
    CHECK(text && strstr(text, line));
    ib_free(text);
    ib_pitfalls_result_free(&r);
    ib_workload_destroy(w);
}

/* The same durations every run, zeros 0.5% faster: the interval is
 * [-0.5%, -0.5%], clear of 0 but wholly within compare's 1% threshold,
 * the smallest change that matters, so the row reads "within noise" and
 * is drawn neutral, as compare would say "no change" (the H100's "no
 * warm-up -0.03% [-0.06%, -0.00%]" was a red "reads low"); 2% faster
 * reaches past it and reads low. */
static double steady_script(int64_t batch, int64_t index, void *ctx)
{
    (void)batch, (void)index, (void)ctx;
    return 2;
}

static void test_reading_below_threshold(void)
{
    const double factors[] = { 1 - 1.0 / 200, 1 - 1.0 / 50 };
    const ib_pitfall_reading want[] = { IB_READING_WITHIN_NOISE, IB_READING_LOW };
    for (int k = 0; k < 2; k++) {
        ib__fake_script s;
        ib__fake_script_init(&s);
        s.duration_ms = steady_script;
        s.zero_input_factor = factors[k];
        ib_workload *w = check_open_fake(&s);
        ib_config cfg = fixed_config();
        ib_pitfalls_result r;
        ib_error err;
        CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_OK);
        const ib_pitfall_row *zero = &r.rows[IB_PITFALL_ZERO_INPUT];
        double pct = 100 * (factors[k] - 1);
        CHECK_NEAR(zero->error_ci95_pct[0], pct, 1e-6);
        CHECK_NEAR(zero->error_ci95_pct[1], pct, 1e-6);
        CHECK_EQ_INT(zero->reading, want[k]);
        check_zero_bar(&r, w, k == 0 ? "bar-noise" : "bar-wrong");
        ib_pitfalls_result_free(&r);
        ib_workload_destroy(w);
    }
}

/* An interval that starts inside compare's 1% threshold and ends past it
 * reads by its side of 0, not "within noise": half the mistake's runs
 * +0.2% and half +3% give about [+0.2%, +3%] (and the mirror image below
 * 0): a rule that judged one bound against the threshold for both would
 * take them for noise (the steady point intervals above cannot tell). */
static void test_reading_interval_past_threshold(void)
{
    double correct[30], high[30], low[30], ci[2];
    for (int i = 0; i < 30; i++) {
        correct[i] = 2;
        high[i] = i % 2 ? 2 * 1.03 : 2 * 1.002;
        low[i] = i % 2 ? 2 * 0.97 : 2 * 0.998;
    }
    const char *why;
    CHECK_EQ_INT(ib__pitfall_interval(correct, 30, high, 30, ci, &why), IB_READING_HIGH);
    CHECK(ci[0] > 0 && ci[0] < 1 && ci[1] > 1);
    CHECK_EQ_INT(ib__pitfall_interval(correct, 30, low, 30, ci, &why), IB_READING_LOW);
    CHECK(ci[1] < 0 && ci[1] > -1 && ci[0] < -1);
}

/* Zeros 25% faster: the interval lies below 0, the row reads low, red,
 * explained by the device it ran on (no GPU clocks on a CPU); zeros 25%
 * slower reads high, which zeros do not cause: the machine's state. */
static void test_reading_effect_by_device(void)
{
    ib_pitfalls_result r;
    ib_workload *w = measured_zero_factor(0.75, false, &r);
    const ib_pitfall_row *zero = &r.rows[IB_PITFALL_ZERO_INPUT];
    double ci[2];
    compare_interval_pct(0.75, ci);
    CHECK(ci[1] < 0);
    CHECK(zero->error_ci95_pct[0] == ci[0] && zero->error_ci95_pct[1] == ci[1]);
    CHECK(zero->reading == IB_READING_LOW);
    CHECK(strstr(zero->why, "data-dependent shortcuts") && !strstr(zero->why, "GPU"));
    check_zero_json(&r, w, ci, "reads low");
    check_zero_bar(&r, w, "bar-wrong");
    ib_pitfalls_result_free(&r);
    ib_workload_destroy(w);

    w = measured_zero_factor(0.75, true, &r);
    CHECK(zero->reading == IB_READING_LOW);
    CHECK(strstr(zero->why, "higher GPU clocks") != NULL);
    /* The GPU's own mistake: the host clock sees the launch only. */
    CHECK(r.rows[IB_PITFALL_HOST_NO_SYNC].reading == IB_READING_LOW);
    CHECK(strstr(r.rows[IB_PITFALL_HOST_NO_SYNC].why, "queued") != NULL);
    ib_pitfalls_result_free(&r);
    ib_workload_destroy(w);

    w = measured_zero_factor(1.25, false, &r);
    compare_interval_pct(1.25, ci);
    CHECK(ci[0] > 0 && zero->reading == IB_READING_HIGH);
    CHECK(strstr(zero->why, "does not cause") && strstr(zero->why, "machine's state"));
    check_zero_json(&r, w, ci, "reads high");
    ib_pitfalls_result_free(&r);
    ib_workload_destroy(w);
}

/* Fewer runs than compare needs: no interval, said so, drawn neutral. */
static void test_reading_too_few(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = spread_script;
    s.zero_input_factor = 0.5;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = fixed_config();
    cfg.runs = IB_COMPARE_MIN_SAMPLES - 1;
    ib_pitfalls_result r;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_OK);
    const ib_pitfall_row *zero = &r.rows[IB_PITFALL_ZERO_INPUT];
    CHECK(zero->error_pct < -40);
    CHECK(zero->reading == IB_READING_NO_INTERVAL && isnan(zero->error_ci95_pct[0]));
    CHECK(zero->no_interval && strstr(zero->no_interval, "too few samples"));
    check_zero_bar(&r, w, "bar-noise");
    ib_config json_cfg = fixed_config();
    char *json = ib_pitfalls_report_json(&r, ib_workload_get_info(w), &json_cfg);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    const cJSON *row = doc ? row_of(cJSON_GetObjectItemCaseSensitive(doc, "rows"), "zero_input") : NULL;
    CHECK(row && cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(row, "error_ci95_pct")));
    const cJSON *v = row ? cJSON_GetObjectItemCaseSensitive(row, "verdict") : NULL;
    CHECK(cJSON_IsString(v) && !strcmp(v->valuestring, "no interval"));
    cJSON_Delete(doc);
    ib_free(json);
    ib_pitfalls_result_free(&r);
    ib_workload_destroy(w);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_gpu_rows_exact);
    RUN(test_cpu_not_applicable);
    RUN(test_missing_slots);
    RUN(test_row_failure_isolated);
    RUN(test_correct_failure);
    RUN(test_cancel);
    RUN(test_bad_config);
    RUN(test_reports);
    RUN(test_html_report);
    RUN(test_zero_input);
    RUN(test_reading_within_noise);
    RUN(test_reading_below_threshold);
    RUN(test_reading_interval_past_threshold);
    RUN(test_reading_effect_by_device);
    RUN(test_reading_too_few);
    return check_summary("test_pitfalls");
}
