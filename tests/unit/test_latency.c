/* The latency loop on the scripted fake workload: cold run separated,
 * warm-up counted and excluded, runs counted, adaptive stopping and
 * steady-state warm-up stop when and only when they should, faults keep
 * what was measured. */
#include "check.h"
#include "backend/fake/fake.h"
#include "core/rules.h"
#include "core/stats.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <string.h>

/* Cold run 100 ms; runs 1..5 decay (start-up costs); then 2 ms +- a fixed
 * pattern of 0.01 ms steps. */
static double startup_then_steady(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    if (index == 0) return 100.0;
    if (index <= 5) return 2.0 + 10.0 / (double)index;
    return 2.0 + 0.01 * (double)(index % 5);
}

static void test_counts_and_cold_run(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = startup_then_steady;
    s.host_overhead_ms = 0.5;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 20;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.runs = 300;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n, 300);
    CHECK_EQ_INT(r.warmup_runs_done, 20);
    CHECK_EQ_INT(ib__fake_runs(w), 1 + 20 + 300);
    CHECK_NEAR(r.cold_device_ms, 100.0, 1e-9);
    CHECK_NEAR(r.cold_host_ms, 100.5, 1e-9);
    /* Timed runs are 21..320: index % 5 cycles evenly, so the mean is
     * 2.02 and no start-up run is mixed in. */
    CHECK_NEAR(r.device.mean, 2.02, 1e-9);
    CHECK_NEAR(r.device.min, 2.0, 1e-9);
    CHECK_NEAR(r.device.max, 2.04, 1e-9);
    CHECK_NEAR(r.host.mean, 2.52, 1e-9);
    CHECK(!r.partial);
    CHECK(!(r.warnings & IB_WARN_HIGH_CV));
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_warmup_by_time(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = startup_then_steady;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 1;
    cfg.warmup_ms = 100; /* 100 ms of ~2 ms runs after the 5 slow ones */
    cfg.warmup_until_steady = false;
    cfg.runs = 10;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    /* Expected: the first count of runs (indices 1..k) whose durations add
     * up to at least 100 ms. */
    double total = 0;
    int64_t expected = 0;
    while (total < 100.0) total += startup_then_steady(1, ++expected, NULL);
    CHECK_EQ_INT(r.warmup_runs_done, expected);
    CHECK_NEAR(r.warmup_ms_spent, total, 1e-9);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

/* Slowly decaying start-up: 2 ms + 4 ms / index. Steady by the 2% rule
 * only once consecutive 10-run windows' medians agree within 2%. */
static double slow_decay(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return index == 0 ? 50.0 : 2.0 + 4.0 / (double)index;
}

static void test_warmup_until_steady(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = slow_decay;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 0;
    cfg.warmup_ms = 0;
    cfg.runs = 10;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(r.warmup_steady);
    /* Warm-up runs are indices 1..k; windows [k-19,k-10], [k-9,k]. The
     * first k where |median1 - median2| <= 0.02 * median2 is computed here
     * independently by brute force. */
    int64_t expected = 0;
    for (int64_t k = 20; k < 10000 && !expected; k++) {
        double m1 = (slow_decay(1, k - 14, NULL) + slow_decay(1, k - 15, NULL)) / 2;
        double m2 = (slow_decay(1, k - 4, NULL) + slow_decay(1, k - 5, NULL)) / 2;
        if (fabs(m1 - m2) <= 0.02 * m2) expected = k;
    }
    CHECK_EQ_INT(r.warmup_runs_done, expected);
    ib_latency_result_free(&r);

    /* A cap below that point (a fresh workload, decaying again): warm-up
     * stops at the cap, not steady, warned. */
    ib_workload_destroy(w);
    w = check_open_fake(&s);
    cfg.warmup_max_ms = 20;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(!r.warmup_steady);
    CHECK(r.warnings & IB_WARN_NOT_STEADY);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_steady_rule(void)
{
    double x[20];
    for (int i = 0; i < 20; i++) x[i] = 1.0;
    CHECK(ib__is_steady(x, 20, 10, 0.02));
    CHECK(!ib__is_steady(x, 19, 10, 0.02));   /* too few */
    for (int i = 0; i < 10; i++) x[i] = 1.03; /* earlier window 3% slower */
    CHECK(!ib__is_steady(x, 20, 10, 0.02));
    for (int i = 0; i < 10; i++) x[i] = 1.019;
    CHECK(ib__is_steady(x, 20, 10, 0.02));

    /* The window: 10 runs while 20 fit in the cap, fewer for long runs,
     * never under 3. */
    CHECK_EQ_INT(ib__steady_window(3000, 2), 10);
    CHECK_EQ_INT(ib__steady_window(3000, 150), 10);
    CHECK_EQ_INT(ib__steady_window(3000, 164), 9);
    CHECK_EQ_INT(ib__steady_window(3000, 400), 3);
    CHECK_EQ_INT(ib__steady_window(3000, 2000), 3);
    CHECK_EQ_INT(ib__steady_window(3000, 0), 10);
    CHECK_EQ_INT(ib__steady_window(0, 5), 10); /* no cap: the full window */
}

/* A long first run, then 164 ms runs: a large batch's runs. */
static double long_runs(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return index == 0 ? 2000.0 : 164.0;
}

/* Runs too long for two windows of 10 in the cap are judged on shorter
 * windows: steady after 2 x 9 runs (2952 ms) within a 3 s cap, where 20
 * runs (3280 ms) would have hit it first. */
static void test_steady_long_runs(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = long_runs;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 5;
    cfg.warmup_ms = 200;
    cfg.warmup_max_ms = 3000;
    cfg.runs = 10;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(r.warmup_steady);
    CHECK(!(r.warnings & IB_WARN_NOT_STEADY));
    CHECK_EQ_INT(r.warmup_runs_done, 18);
    CHECK_NEAR(r.warmup_ms_spent, 18 * 164.0, 1e-9);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

/* A launch-bound run (the core's judgement, test_runner.c) is called so,
 * with the way out, and only then. */
static void test_launch_bound_note(void)
{
    double device[3] = { 0.9, 1.0, 1.1 };
    ib_latency_result r;
    memset(&r, 0, sizeof r);
    r.n = 3;
    r.device_ms = r.host_ms = device;
    r.has_device_timer = true;
    r.cold_host_ms = r.cold_device_ms = 5;
    CHECK(ib_stats_compute(device, 3, &r.device) == IB_OK);
    CHECK(ib_stats_compute(device, 3, &r.host) == IB_OK);
    ib_workload_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.model, sizeof info.model, "m.onnx");
    info.batch = 1;
    static const struct {
        double launch_ms;
        bool launch_bound;
        const char *noted;
    } cases[] = { { 1.5, true,
                    "run it; a backend that captures the run as a graph replays it in one launch\n" },
                  { 0.5, false, NULL },
                  { 1.5, false, NULL } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        r.launch_overhead_ms = cases[i].launch_ms;
        r.launch_bound = cases[i].launch_bound;
        char *text = ib_latency_report_text(&r, &info);
        CHECK(text != NULL);
        const char *line =
            text ? strstr(text, "launch-bound: enqueuing a run takes longer than the GPU needs to ") : NULL;
        CHECK((line != NULL) == (cases[i].noted != NULL));
        const char *rest = line ? strstr(line, "needs to ") : NULL;
        if (rest && cases[i].noted) CHECK(!strncmp(rest + 9, cases[i].noted, strlen(cases[i].noted)));
        ib_free(text);
    }
}

/* Alternates 1 ms and 3 ms: the median's CI spans [1, 3] for ever. */
static double alternating(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return index % 2 ? 1.0 : 3.0;
}

/* 2 ms with a deterministic +-1% jitter. */
static double jitter(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return 2.0 * (1.0 + 0.01 * sin((double)index * 12.9898));
}

static void test_adaptive_stopping(void)
{
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 0;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.precision = 0.005;
    cfg.min_runs = 30;
    cfg.max_runs = 5000;
    ib_latency_result r;
    ib_error err;

    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = jitter;
    ib_workload *w = check_open_fake(&s);
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(r.precision_met);
    CHECK(r.precision_achieved <= 0.005);
    CHECK(r.n >= 30 && r.n < 5000);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);

    s.duration_ms = alternating;
    w = check_open_fake(&s);
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(!r.precision_met);
    CHECK_EQ_INT(r.n, 5000);
    CHECK(r.warnings & IB_WARN_PRECISION_NOT_MET);
    ib_latency_result_free(&r);

    cfg.max_time_ms = 100; /* 2 ms a run: the time cap comes first */
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(!r.precision_met);
    CHECK_EQ_INT(r.n, 50);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_stop_rule_direct(void)
{
    ib__stop_rule fixed = { .runs = 3 };
    double x[3] = { 1, 1, 1 };
    double achieved = -1;
    CHECK(ib__stop_check(&fixed, x, 2, 0, &achieved) == IB__CONTINUE);
    CHECK(ib__stop_check(&fixed, x, 3, 0, &achieved) == IB__STOP_COUNT);
    CHECK_NEAR(achieved, -1, 0); /* fixed count computes no CI */
}

static void test_faults_keep_samples(void)
{
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 5;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.runs = 100;
    ib_latency_result r;
    ib_error err;

    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = jitter;
    s.fail_at_run = 1 + 5 + 40; /* the 41st timed run fails */
    ib_workload *w = check_open_fake(&s);
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_RUNTIME);
    CHECK(r.partial);
    CHECK_EQ_INT(r.n, 40);
    CHECK_EQ_INT(r.device.n, 40);
    CHECK(strstr(err.message, "failed") != NULL);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);

    ib__fake_script_init(&s);
    s.duration_ms = jitter;
    s.oom_at_run = 3; /* during warm-up */
    w = check_open_fake(&s);
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_DEVICE_OOM);
    CHECK(r.partial);
    CHECK_EQ_INT(r.n, 0);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);

    ib__fake_script_init(&s);
    s.duration_ms = jitter;
    s.lose_device_at_run = 50;
    w = check_open_fake(&s);
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_DEVICE_LOST);
    CHECK_EQ_INT(r.n, 50 - 6);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_cancel(void)
{
    static volatile int cancel = 0;
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = jitter;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.cancel = &cancel;
    cancel = 1;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INTERRUPTED);
    CHECK(r.partial);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_bad_config(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = jitter;
    ib_workload *w = check_open_fake(&s);
    ib_latency_result r;
    ib_error err;
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.runs = 0;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_config_init(&cfg);
    cfg.runs = 2000000000;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_config_init(&cfg);
    cfg.warmup_ms = -1;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_config_init(&cfg);
    cfg.precision = 0.9;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_config_init(&cfg);
    cfg.flush_l2 = true; /* a host workload has no L2 of a GPU to flush */
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_UNSUPPORTED);
    CHECK_EQ_INT(ib__fake_runs(w), 0);
    ib_workload_destroy(w);
}

/* What a progress callback saw. */
#define MAX_REPORTS 256
typedef struct seen {
    size_t n;
    ib_progress p[MAX_REPORTS];
} seen;

static void record(const ib_progress *p, void *user)
{
    seen *s = user;
    if (s->n < MAX_REPORTS) s->p[s->n] = *p;
    s->n++;
}

/* Cold run, warm-up and sampling reported in that order, each at its
 * start; between runs at most one report per IB_PROGRESS_PERIOD_MS of the
 * workload's clock; runs counted, and the time left estimated from the
 * rate so far. */
static void test_progress_reports(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = startup_then_steady;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 20;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.runs = 300; /* ~2 ms each: ~600 ms of sampling */
    seen got = { 0 };
    cfg.progress = record;
    cfg.progress_user = &got;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(got.n >= 3 && got.n <= MAX_REPORTS);
    CHECK_EQ_INT(got.p[0].phase, IB_PHASE_COLD_RUN);
    CHECK_EQ_INT(got.p[1].phase, IB_PHASE_WARMUP);
    CHECK_EQ_INT(got.p[1].total, 20);
    size_t sampling = 0, timed_reports = 0;
    for (size_t i = 1; i < got.n && i < MAX_REPORTS; i++) {
        const ib_progress *p = &got.p[i];
        CHECK(p->phase >= got.p[i - 1].phase); /* phases never go back */
        CHECK(p->elapsed_ms >= got.p[i - 1].elapsed_ms);
        CHECK(p->done <= p->total);
        CHECK_EQ_INT(p->batch, 1);
        CHECK_EQ_INT(p->steps, 0);
        if (p->phase != IB_PHASE_SAMPLING) continue;
        if (sampling++ == 0) {
            CHECK_EQ_INT(p->done, 0); /* the phase's start */
            CHECK_EQ_INT(p->total, 300);
            continue;
        }
        timed_reports++;
        CHECK(p->elapsed_ms - got.p[i - 1].elapsed_ms >= IB_PROGRESS_PERIOD_MS);
        CHECK(!p->eta_is_bound);
        CHECK_NEAR(p->eta_ms, (double)(300 - p->done) * 2.02, 0.05 * (double)(300 - p->done) + 0.5);
    }
    /* ~606 ms of runs: 5 or 6 reports after the start, not one a run. */
    CHECK(timed_reports >= 5 && timed_reports <= 6);
    ib_latency_result_free(&r);

    /* Adaptive: the time left is what the time cap leaves. */
    got.n = 0;
    cfg.precision = 0.01;
    cfg.min_runs = 200; /* ~400 ms before the first check */
    cfg.max_time_ms = 500;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(got.n > 3 && got.n < MAX_REPORTS);
    const ib_progress *last = &got.p[got.n - 1], *start = NULL;
    for (size_t i = 0; i < got.n; i++)
        if (!start && got.p[i].phase == IB_PHASE_SAMPLING) start = &got.p[i];
    CHECK_EQ_INT(last->phase, IB_PHASE_SAMPLING);
    CHECK_EQ_INT(last->total, cfg.max_runs);
    CHECK(last->eta_is_bound);
    CHECK(last->done > 100);
    CHECK_NEAR(last->eta_ms, 500 - (last->elapsed_ms - start->elapsed_ms), 1e-6);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

/* ------------------------------------------------------------------------ */
/* Statistics at the edges: what the reports say of the intervals            */
/* ------------------------------------------------------------------------ */

/* Runs of a fake workload with no warm-up; precision 0: a fixed count. */
static ib_status measure_runs(ib_workload *w, int64_t runs, double precision, ib_latency_result *r)
{
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 0;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.runs = runs;
    cfg.precision = precision;
    cfg.min_runs = 30;
    cfg.max_runs = 60;
    ib_error err;
    return ib_measure_latency(w, &cfg, r, &err);
}

/* The line of text starting with prefix, copied into line[cap] ("" if none). */
static const char *line_starting(const char *text, const char *prefix, char *line, size_t cap)
{
    line[0] = '\0';
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, prefix, strlen(prefix)) != 0) continue;
        size_t len = strcspn(p, "\n");
        snprintf(line, cap, "%.*s", (int)(len < cap ? len : cap - 1), p);
        break;
    }
    return line;
}

/* The latency JSON of r, parsed; NULL on failure. */
static cJSON *json_of(const ib_latency_result *r, ib_workload *w)
{
    ib_config cfg;
    ib_config_init(&cfg);
    char *json = ib_latency_report_json(r, ib_workload_get_info(w), &cfg);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    if (json) {
        /* The compare reader still reads it (null intervals, no precision). */
        ib_latency_file f;
        ib_error err;
        CHECK(ib_latency_file_parse(json, strlen(json), &f, &err) == IB_OK);
        CHECK_EQ_INT(f.n, r->n);
        ib_latency_file_free(&f);
    }
    ib_free(json);
    return doc;
}

/* n = 1, 2, 5: no interval, said in words, null in JSON, never "inf";
 * n = 6: both intervals. */
static void test_intervals_by_run_count(void)
{
    static const int64_t counts[] = { 1, 2, 5, 6 };
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = jitter;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        ib_workload *w = check_open_fake(&s);
        ib_latency_result r;
        CHECK(measure_runs(w, counts[i], 0, &r) == IB_OK);
        char *text = ib_latency_report_text(&r, ib_workload_get_info(w));
        cJSON *doc = json_of(&r, w);
        cJSON *st = cJSON_GetObjectItem(doc, "latency_ms");
        char words[96];
        snprintf(words, sizeof words, "too few runs for a 95%% interval: n=%lld, needs 6",
                 (long long)counts[i]);
        bool few = counts[i] < 6;
        CHECK(text && (strstr(text, words) != NULL) == few);
        CHECK(text && !strstr(text, "inf%") && !strstr(text, "inf]") && !strstr(text, "[-inf"));
        CHECK(text && (strstr(text, "95% CI [") != NULL) == !few);
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(st, "ci95_mean")) == few);
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(st, "ci95_median")) == few);
        CHECK(cJSON_IsArray(cJSON_GetObjectItem(st, "ci95_mean")) == !few);
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "host_latency_ms"), "ci95_mean")) ==
              few);
        cJSON_Delete(doc);
        ib_free(text);
        ib_latency_result_free(&r);
        ib_workload_destroy(w);
    }
}

/* Six readings of 0 (a timer too coarse for the runs): an interval, but no
 * relative width to print, and still no "inf". */
/* The text report of host timings x[0..6) (the median's CI is [min, max]). */
static char *text_of_six(double x[6])
{
    ib_latency_result r;
    memset(&r, 0, sizeof r);
    r.n = 6;
    r.host_ms = x;
    r.cold_host_ms = 1;
    r.launch_overhead_ms = r.timer_resolution_ms = NAN;
    CHECK(ib_stats_compute(x, 6, &r.host) == IB_OK);
    r.precision_achieved = ib__median_ci_relative_halfwidth(&r.host);
    ib_workload_info info;
    memset(&info, 0, sizeof info);
    info.batch = 1;
    return ib_latency_report_text(&r, &info);
}

static void test_zero_median_text(void)
{
    double zeros[6] = { 0, 0, 0, 0, 0, 0 };
    char *text = text_of_six(zeros);
    CHECK(text && strstr(text, "\nmedian 0 us, 95% CI [0, 0] us\n"));
    CHECK(text && !strstr(text, "inf%"));
    ib_free(text);
}

/* An interval a hundred times the median is printed without an exponent. */
static void test_wide_interval_text(void)
{
    double spread[6] = { 1, 1, 1, 1, 1, 100 };
    char *text = text_of_six(spread);
    CHECK(text && strstr(text, "\nmedian 1 ms, 95% CI [1, 100] ms (+-4950%)\n"));
    ib_free(text);
}

/* A target is printed with the digits it was given; without one there is
 * no precision block and no verdict at all. */
static void test_precision_target_text(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = jitter;
    ib_workload *w = check_open_fake(&s);
    ib_latency_result r;
    CHECK(measure_runs(w, 100, 0.00001, &r) == IB_OK); /* --precision 0.001% */
    char *text = ib_latency_report_text(&r, ib_workload_get_info(w));
    CHECK(text && strstr(text, "precision target +-0.001%: NOT met after 60 runs\n"));
    cJSON *doc = json_of(&r, w);
    cJSON *prec = cJSON_GetObjectItem(doc, "precision");
    CHECK(cJSON_IsObject(prec) && cJSON_GetObjectItem(prec, "target")->valuedouble == 0.00001);
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(prec, "met")));
    cJSON_Delete(doc);
    ib_free(text);
    ib_latency_result_free(&r);

    CHECK(measure_runs(w, 100, 0, &r) == IB_OK);
    text = ib_latency_report_text(&r, ib_workload_get_info(w));
    CHECK(text && !strstr(text, "precision target"));
    doc = json_of(&r, w);
    CHECK(doc && !cJSON_HasObjectItem(doc, "precision"));
    cJSON_Delete(doc);
    ib_free(text);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

/* 35 us every run, read by a timer of 1.25 us steps (the H200's event
 * timer, a small model with --exclude-launch): the interval of identical readings is widened to +- 1.25 us
 * and the report says so; adaptive stopping cannot claim 1% from it. */
static double constant_35us(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)index;
    (void)ctx;
    return 0.035;
}

static void test_widened_to_timer_resolution(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = constant_35us;
    s.timer_resolution_ms = 0.00125;
    ib_workload *w = check_open_fake(&s);
    ib_latency_result r;
    CHECK(measure_runs(w, 300, 0, &r) == IB_OK);
    CHECK_NEAR(r.timer_resolution_ms, 0.00125, 1e-15);
    CHECK_NEAR(r.host_timer_resolution_ms, 0.00125, 0);
    CHECK(r.device.ci95_widened);
    CHECK_NEAR(r.device.ci95_median[0], 0.03375, 1e-12);
    CHECK_NEAR(r.device.ci95_median[1], 0.03625, 1e-12);
    CHECK_NEAR(r.precision_achieved, 0.00125 / 0.035, 1e-9);
    char *text = ib_latency_report_text(&r, ib_workload_get_info(w));
    CHECK(text && strstr(text, "\nmedian 35 us, 95% CI [33.75, 36.25] us (+-3.57%)\n"));
    CHECK(text && strstr(text, "interval widened to the timer resolution (+-1.25 us)"));
    cJSON *doc = json_of(&r, w);
    CHECK(doc && cJSON_GetObjectItem(doc, "timer_resolution_ms")->valuedouble == r.timer_resolution_ms);
    CHECK(cJSON_IsTrue(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "latency_ms"), "ci95_widened_to_resolution")));
    cJSON_Delete(doc);
    ib_free(text);
    ib_latency_result_free(&r);

    CHECK(measure_runs(w, 0, 0.01, &r) == IB_OK); /* adaptive, 1%: 60 runs, not met */
    CHECK(!r.precision_met);
    CHECK_EQ_INT(r.n, 60);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);

    s.timer_resolution_ms = 0; /* an exact timer: nothing to widen, nothing said */
    w = check_open_fake(&s);
    CHECK(measure_runs(w, 300, 0, &r) == IB_OK);
    CHECK(!r.device.ci95_widened);
    text = ib_latency_report_text(&r, ib_workload_get_info(w));
    CHECK(text && !strstr(text, "widened"));
    ib_free(text);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

/* 136.7 .. 142.2 us: the table is in ms (median above 0.1 ms), but each line
 * of the text carries one unit, the median's. */
static double around_139us(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return 0.1356 + 0.0011 * (double)(index % 7);
}

static void test_one_unit_per_line(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = around_139us;
    ib_workload *w = check_open_fake(&s);
    ib_latency_result r;
    CHECK(measure_runs(w, 6, 0, &r) == IB_OK); /* runs 1..6: the CI is [min, max] */
    char *text = ib_latency_report_text(&r, ib_workload_get_info(w));
    char line[256];
    CHECK(text && strcmp(line_starting(text, "median ", line, sizeof line),
                         "median 139.5 us, 95% CI [136.7, 142.2] us (+-1.97%)") == 0);
    CHECK(text && strcmp(line_starting(text, "mean ", line, sizeof line),
                         "mean 139.4 us, 95% CI [137.4, 141.7] us") == 0);
    ib_free(text);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_intervals_by_run_count);
    RUN(test_zero_median_text);
    RUN(test_wide_interval_text);
    RUN(test_precision_target_text);
    RUN(test_widened_to_timer_resolution);
    RUN(test_one_unit_per_line);
    RUN(test_counts_and_cold_run);
    RUN(test_warmup_by_time);
    RUN(test_warmup_until_steady);
    RUN(test_steady_rule);
    RUN(test_steady_long_runs);
    RUN(test_launch_bound_note);
    RUN(test_adaptive_stopping);
    RUN(test_stop_rule_direct);
    RUN(test_faults_keep_samples);
    RUN(test_cancel);
    RUN(test_bad_config);
    RUN(test_progress_reports);
    return check_summary("test_latency");
}
