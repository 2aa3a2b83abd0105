/* What a user would see wrong, tested on the scripted fake workload with
 * irregular distributions (heavy tails, two modes, warm-ups that get faster
 * or slower), not one line at a time:
 * - every summary statistic of the JSON report recomputed here from the
 *   samples in the same document;
 * - the steady-state rule in both directions;
 * - the stopping rules at each edge, and whether "precision met" is told right;
 * - the budget batch chosen by p99 (not p50) and the peak by back-to-back rate
 *   (not the synchronized one), on points where those disagree;
 * - a failure in the middle of the timed runs: a partial document holding
 *   exactly the runs before it.
 * docs/testing.md lists the bug each test was shown to catch. */
#include "check.h"
#include "backend/fake/fake.h"
#include "core/rules.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Statistics computed here, from their definitions                         */
/* ------------------------------------------------------------------------ */

typedef struct expected_stats {
    double n, mean, std, min, p50, p90, p95, p99, p999, max, cv;
} expected_stats;

static expected_stats summarize(const double *x, size_t n)
{
    double *s = malloc(n * sizeof *s), sum = 0, ss = 0;
    expected_stats e = { .n = (double)n };
    if (!s) return e;
    memcpy(s, x, n * sizeof *s);
    check_sort(s, n);
    for (size_t i = 0; i < n; i++) sum += s[i];
    e.mean = sum / (double)n;
    for (size_t i = 0; i < n; i++) ss += (s[i] - e.mean) * (s[i] - e.mean);
    e.std = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    e.min = s[0];
    e.max = s[n - 1];
    e.p50 = check_quantile7(s, n, 0.50);
    e.p90 = check_quantile7(s, n, 0.90);
    e.p95 = check_quantile7(s, n, 0.95);
    e.p99 = check_quantile7(s, n, 0.99);
    e.p999 = check_quantile7(s, n, 0.999);
    e.cv = e.std / e.mean;
    free(s);
    return e;
}

static double *json_doubles(const cJSON *array, size_t *n)
{
    *n = (size_t)cJSON_GetArraySize(array);
    double *x = malloc((*n ? *n : 1) * sizeof *x);
    if (!x) return NULL;
    for (size_t i = 0; i < *n; i++) x[i] = cJSON_GetArrayItem(array, (int)i)->valuedouble;
    return x;
}

static void check_field(const cJSON *stats, const char *name, double want)
{
    const cJSON *v = cJSON_GetObjectItem(stats, name);
    CHECK(cJSON_IsNumber(v));
    if (!cJSON_IsNumber(v)) return;
    double tol = 1e-9 * fmax(fabs(want), 1e-12);
    if (!(fabs(v->valuedouble - want) <= tol))
        fprintf(stderr, "  %s: JSON has %.17g, the samples give %.17g\n", name, v->valuedouble, want);
    CHECK(fabs(v->valuedouble - want) <= tol);
}

/* Every summary field of `stats` against the samples in `samples`. */
static void check_summary_matches(const cJSON *stats, const cJSON *samples)
{
    CHECK(cJSON_IsObject(stats) && cJSON_IsArray(samples));
    size_t n;
    double *x = json_doubles(samples, &n);
    CHECK(x != NULL && n > 0);
    if (!x || n == 0) {
        free(x);
        return;
    }
    expected_stats e = summarize(x, n);
    check_field(stats, "n", e.n);
    check_field(stats, "mean", e.mean);
    check_field(stats, "std", e.std);
    check_field(stats, "min", e.min);
    check_field(stats, "p50", e.p50);
    check_field(stats, "p90", e.p90);
    check_field(stats, "p95", e.p95);
    check_field(stats, "p99", e.p99);
    check_field(stats, "p999", e.p999);
    check_field(stats, "max", e.max);
    check_field(stats, "cv", e.cv);
    free(x);
}

/* ------------------------------------------------------------------------ */
/* Scripted distributions                                                    */
/* ------------------------------------------------------------------------ */

/* A fixed pseudo-random number in [0, 1) per run index. */
static double uniform(int64_t index)
{
    uint64_t z = (uint64_t)index * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

/* Pareto tail (alpha 1.5) over 1 ms: most runs near 1 ms, a few 10-100x. */
static double heavy_tail(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return 1.0 / pow(1.0 - uniform(index) * 0.9999, 1.0 / 1.5);
}

/* Two modes, 2 ms and 5 ms, in a 70/30 mix, each with a little jitter. */
static double two_modes(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    double u = uniform(index), jitter = 0.01 * uniform(index + 1000003);
    return (u < 0.7 ? 2.0 : 5.0) + jitter;
}

/* Warm-up that gets slower (a clock that ramps down, a cache that fills):
 * 3 ms - 2 ms/index, rising towards 3 ms. */
static double slowing(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return index == 0 ? 50.0 : 3.0 - 2.0 / (double)index;
}

/* Warm-up that gets faster: 2 ms + 4 ms/index, falling towards 2 ms. */
static double speeding(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return index == 0 ? 50.0 : 2.0 + 4.0 / (double)index;
}

static ib_config quick_config(int64_t runs)
{
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 3;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.runs = runs;
    return cfg;
}

static cJSON *latency_json(const ib_latency_result *r, ib_workload *w, const ib_config *cfg)
{
    char *text = ib_latency_report_json(r, ib_workload_get_info(w), cfg);
    CHECK(text != NULL);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    CHECK(doc != NULL);
    ib_free(text);
    return doc;
}

/* ------------------------------------------------------------------------ */
/* JSON statistics against the samples                                       */
/* ------------------------------------------------------------------------ */

static void check_json_stats(double (*script)(int64_t, int64_t, void *), int64_t runs, bool device_timer)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = script;
    s.host_overhead_ms = 0.25; /* host and device times differ */
    s.has_device_timer = device_timer;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = quick_config(runs);
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    cJSON *doc = latency_json(&r, w, &cfg);
    const cJSON *samples = cJSON_GetObjectItem(doc, "samples");
    const cJSON *device = cJSON_GetObjectItem(samples, "device_ms");
    const cJSON *host = cJSON_GetObjectItem(samples, "host_ms");
    CHECK_EQ_INT(cJSON_GetArraySize(host), runs);
    check_summary_matches(cJSON_GetObjectItem(doc, "host_latency_ms"), host);
    /* The headline statistics summarize the device samples where there are. */
    check_summary_matches(cJSON_GetObjectItem(doc, "latency_ms"), device_timer ? device : host);
    CHECK(device_timer ? cJSON_IsArray(device) : cJSON_IsNull(device));
    cJSON_Delete(doc);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_json_stats_from_samples(void)
{
    check_json_stats(heavy_tail, 2000, true); /* p99.9 between two far-apart runs */
    check_json_stats(heavy_tail, 7, false);   /* tiny n: quantiles all interpolated */
    check_json_stats(two_modes, 1001, true);
    check_json_stats(two_modes, 300, false);
}

/* ------------------------------------------------------------------------ */
/* Steady state, both directions                                             */
/* ------------------------------------------------------------------------ */

static double median_of(const double *x, size_t n)
{
    double s[64];
    memcpy(s, x, n * sizeof *s);
    check_sort(s, n);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The first warm-up count k (runs 1..k) whose last two windows of 10 runs
 * have medians within 2% of the later one, found by brute force. */
static int64_t first_steady(double (*script)(int64_t, int64_t, void *))
{
    for (int64_t k = 20; k < 100000; k++) {
        double w1[10], w2[10];
        for (int i = 0; i < 10; i++) {
            w1[i] = script(1, k - 19 + i, NULL);
            w2[i] = script(1, k - 9 + i, NULL);
        }
        double m1 = median_of(w1, 10), m2 = median_of(w2, 10);
        if (fabs(m1 - m2) <= 0.02 * m2) return k;
    }
    return -1;
}

static void check_warmup_until_steady(double (*script)(int64_t, int64_t, void *))
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = script;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = quick_config(10);
    cfg.warmup_runs = 0;
    cfg.warmup_until_steady = true;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    int64_t expected = first_steady(script);
    CHECK(expected > 20); /* the script really has a warm-up to wait out */
    CHECK(r.warmup_steady);
    CHECK_EQ_INT(r.warmup_runs_done, expected);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_steady_both_directions(void)
{
    double x[20];
    for (int i = 0; i < 20; i++) x[i] = i < 10 ? 1.0 : 1.03; /* later window 3% slower */
    CHECK(!ib__is_steady(x, 20, 10, 0.02));
    for (int i = 0; i < 20; i++) x[i] = i < 10 ? 1.03 : 1.0; /* later window 3% faster */
    CHECK(!ib__is_steady(x, 20, 10, 0.02));
    for (int i = 0; i < 20; i++) x[i] = i < 10 ? 1.0 : 1.019; /* within 2% either way */
    CHECK(ib__is_steady(x, 20, 10, 0.02));
    for (int i = 0; i < 20; i++) x[i] = i < 10 ? 1.019 : 1.0;
    CHECK(ib__is_steady(x, 20, 10, 0.02));
    /* The loop itself, on a warm-up that gets slower and one that gets faster. */
    check_warmup_until_steady(slowing);
    check_warmup_until_steady(speeding);
}

/* ------------------------------------------------------------------------ */
/* Stopping rules at their edges                                             */
/* ------------------------------------------------------------------------ */

static void test_stop_rule_edges(void)
{
    enum { N = 200 };
    double noisy[N], flat[N];
    for (int i = 0; i < N; i++) {
        noisy[i] = i % 2 ? 1.0 : 3.0; /* the median's CI never narrows */
        flat[i] = 2.0;                /* the CI is zero wide at once */
    }
    ib__stop_rule rule = { .precision = 0.01, .min_runs = 30, .max_runs = 100, .max_time_ms = 50 };
    double achieved = -1;
    /* Time cap before the minimum count: go on; at the minimum: stop. */
    CHECK(ib__stop_check(&rule, noisy, 29, 1000, &achieved) == IB__CONTINUE);
    CHECK(ib__stop_check(&rule, noisy, 30, 1000, &achieved) == IB__STOP_MAX_TIME);
    CHECK(ib__stop_check(&rule, noisy, 31, 1000, &achieved) == IB__STOP_MAX_TIME);
    /* The time cap itself: just under it goes on, at it stops. */
    CHECK(ib__stop_check(&rule, noisy, 40, 49.999, &achieved) == IB__CONTINUE);
    CHECK(ib__stop_check(&rule, noisy, 40, 50, &achieved) == IB__STOP_MAX_TIME);
    /* The run cap: one under it goes on, at it stops, before the time cap. */
    CHECK(ib__stop_check(&rule, noisy, 99, 10, &achieved) == IB__CONTINUE);
    CHECK(ib__stop_check(&rule, noisy, 100, 10, &achieved) == IB__STOP_MAX_RUNS);
    /* Precision met: not before the minimum, at it yes, and it wins over caps. */
    achieved = -1;
    CHECK(ib__stop_check(&rule, flat, 29, 10, &achieved) == IB__CONTINUE);
    CHECK_NEAR(achieved, -1, 0); /* no CI computed before the minimum */
    CHECK(ib__stop_check(&rule, flat, 30, 10, &achieved) == IB__STOP_PRECISION);
    CHECK_NEAR(achieved, 0, 0);
    CHECK(ib__stop_check(&rule, flat, 100, 1000, &achieved) == IB__STOP_PRECISION);
    /* Not met: the achieved figure is the one computed, above the target. */
    CHECK(ib__stop_check(&rule, noisy, 30, 10, &achieved) == IB__CONTINUE);
    CHECK(achieved > 0.01);
    /* A fixed count: exactly at the count, never on time. */
    ib__stop_rule fixed = { .runs = 30, .max_time_ms = 1 };
    CHECK(ib__stop_check(&fixed, noisy, 29, 1e9, &achieved) == IB__CONTINUE);
    CHECK(ib__stop_check(&fixed, noisy, 30, 0, &achieved) == IB__STOP_COUNT);
}

/* The latency loop with adaptive stopping: how many runs were taken and
 * whether the report says the target was met, text and JSON. */
static void check_adaptive_run(double (*script)(int64_t, int64_t, void *), double max_time_ms,
                               int64_t max_runs, bool met, int64_t n)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = script;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = quick_config(10);
    cfg.precision = 0.01;
    cfg.min_runs = 40;
    cfg.max_runs = max_runs;
    cfg.max_time_ms = max_time_ms;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(r.precision_met == met);
    CHECK_EQ_INT(r.n, n);
    CHECK_EQ_INT((r.warnings & IB_WARN_PRECISION_NOT_MET) != 0, !met);
    char *text = ib_latency_report_text(&r, ib_workload_get_info(w));
    char line[128];
    snprintf(line, sizeof line, "precision target +-1%%: %s after %lld runs", met ? "met" : "NOT met",
             (long long)n);
    CHECK(text && strstr(text, line) != NULL);
    if (text && !strstr(text, line)) fprintf(stderr, "  no \"%s\" in:\n%s", line, text);
    ib_free(text);
    cJSON *doc = latency_json(&r, w, &cfg);
    CHECK(cJSON_IsBool(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "precision"), "met")));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "precision"), "met")) == met);
    cJSON_Delete(doc);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static double constant_2ms(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)index;
    (void)ctx;
    return 2.0;
}

static double alternating(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return index % 2 ? 1.0 : 3.0;
}

static void test_adaptive_edges(void)
{
    /* Met at the first check, the minimum count. */
    check_adaptive_run(constant_2ms, 30000, 1000, true, 40);
    /* Time cap (2 ms runs, 20 ms) long before the minimum: the minimum is kept. */
    check_adaptive_run(alternating, 20, 1000, false, 40);
    /* Time cap after the minimum: 200 ms of 2 ms runs on average. */
    check_adaptive_run(alternating, 200, 1000, false, 100);
    /* Run cap before the time cap. */
    check_adaptive_run(alternating, 30000, 77, false, 77);
}

/* ------------------------------------------------------------------------ */
/* Throughput: the budget batch by p99, the peak by back-to-back rate        */
/* ------------------------------------------------------------------------ */

/* Batch 1: 1 ms; batch 2: 1.2 ms; batch 4: 1.5 ms but 2 runs in 100 take
 * 6 ms, so its p50 and p95 are 1.5 ms and its p99 6 ms. */
static double tail_at_4(int64_t batch, int64_t index, void *ctx)
{
    (void)ctx;
    if (batch == 4) return index % 50 == 0 ? 6.0 : 1.5;
    return batch == 2 ? 1.2 : 1.0;
}

static void test_budget_by_p99(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = tail_at_4;
    ib_workload *w = check_open_fake(&s);
    ib_throughput_config cfg;
    ib_throughput_config_init(&cfg);
    cfg.run = quick_config(100);
    static const int64_t batches[] = { 1, 2, 4 };
    cfg.batches = batches;
    cfg.n_batches = 3;
    cfg.latency_budget_ms = 3.0;
    ib_throughput_result *r = malloc(sizeof *r);
    ib_error err;
    CHECK(r && ib_measure_throughput(w, &cfg, r, &err) == IB_OK);
    CHECK_EQ_INT(r->n_points, 3);
    const ib_throughput_point *p4 = &r->points[2];
    /* The script is what it should be: batch 4 is the fastest, and within
     * the budget by its p50 and p95, out of it by its p99. */
    CHECK(p4->latency_ms.p50 < 3.0 && p4->latency_ms.p95 < 3.0 && p4->latency_ms.p99 > 3.0);
    CHECK(p4->items_per_s > r->points[1].items_per_s);
    CHECK(r->peak == 2);
    CHECK(r->best_within_budget == 1);
    cJSON *doc = NULL;
    char *json = ib_throughput_report_json(r, ib_workload_get_info(w), &cfg);
    if (json) doc = cJSON_Parse(json);
    const cJSON *budget = cJSON_GetObjectItem(doc, "budget");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(budget, "met")));
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(budget, "batch")), 2, 0);
    cJSON_Delete(doc);
    ib_free(json);
    free(r);
    ib_workload_destroy(w);
}

/* Batch 1 runs 0.5 ms on the device but the host needs 1 ms to issue a run:
 * timed one by one (device time) it does 2000/s, back-to-back only 1000/s.
 * Batch 2 runs 1.5 ms: 1333/s both ways. The peak is batch 2. */
static double launch_bound_at_1(int64_t batch, int64_t index, void *ctx)
{
    (void)index;
    (void)ctx;
    return batch == 1 ? 0.5 : 1.5;
}

static void test_peak_by_back_to_back(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = launch_bound_at_1;
    s.gpu_like = true;
    s.host_overhead_ms = 1.0;
    ib_workload *w = check_open_fake(&s);
    ib_throughput_config cfg;
    ib_throughput_config_init(&cfg);
    cfg.run = quick_config(50);
    static const int64_t batches[] = { 1, 2 };
    cfg.batches = batches;
    cfg.n_batches = 2;
    ib_throughput_result *r = malloc(sizeof *r);
    ib_error err;
    CHECK(r && ib_measure_throughput(w, &cfg, r, &err) == IB_OK);
    CHECK_EQ_INT(r->n_points, 2);
    const ib_throughput_point *p1 = &r->points[0], *p2 = &r->points[1];
    CHECK(p1->items_per_s_sync > p2->items_per_s_sync);
    CHECK(p1->items_per_s < p2->items_per_s);
    CHECK_NEAR(p1->items_per_s, 1000, 20); /* the first launch is not waited for: 49.5 ms for 50 */
    CHECK_NEAR(p2->items_per_s, 2000 / 1.5, 1e-6);
    CHECK_EQ_INT(r->peak, 1);
    free(r);
    ib_workload_destroy(w);
}

/* ------------------------------------------------------------------------ */
/* A failure in the middle of the timed runs                                 */
/* ------------------------------------------------------------------------ */

static void test_partial_document(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = two_modes;
    s.fail_at_run = 1 + 3 + 57; /* cold, 3 warm-up, then the 58th timed run */
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = quick_config(200);
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_RUNTIME);
    cJSON *doc = latency_json(&r, w, &cfg);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(doc, "partial")));
    const cJSON *device = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "samples"), "device_ms");
    CHECK_EQ_INT(cJSON_GetArraySize(device), 57);
    /* Exactly the runs before the failure, in order: run indices 4..60. */
    for (int i = 0; i < 57 && i < cJSON_GetArraySize(device); i++)
        CHECK_NEAR(cJSON_GetArrayItem(device, i)->valuedouble, two_modes(1, 4 + i, NULL), 1e-12);
    check_summary_matches(cJSON_GetObjectItem(doc, "latency_ms"), device);
    cJSON_Delete(doc);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_json_stats_from_samples);
    RUN(test_steady_both_directions);
    RUN(test_stop_rule_edges);
    RUN(test_adaptive_edges);
    RUN(test_budget_by_p99);
    RUN(test_peak_by_back_to_back);
    RUN(test_partial_document);
    return check_summary("test_behaviour");
}
