/* The warnings a latency sample earns (ib__sample_warnings), each on its own
 * and at its threshold. Written for a survivor of the mutation run
 * (docs/testing.md): the bimodal warning left unset passed every other test,
 * which checked ib__is_bimodal but not the flag the report shows. */
#include "backend/fake/fake.h"
#include "check.h"
#include "core/latency.h"
#include "core/stats.h"

static unsigned warnings_of(const double *x, size_t n)
{
    ib_stats st;
    CHECK(ib_stats_compute(x, n, &st) == IB_OK);
    return ib__sample_warnings(x, &st);
}

static void test_clean_sample(void)
{
    double x[100];
    for (int i = 0; i < 100; i++) x[i] = 1.0 + 0.001 * (i % 10);
    CHECK_EQ_INT(warnings_of(x, 100), 0);
}

static void test_bimodal(void)
{
    double x[200];
    for (int i = 0; i < 200; i++) x[i] = (i < 60 ? 1.2 : 1.0) + 0.001 * (i % 10);
    unsigned w = warnings_of(x, 200);
    CHECK(w & IB_WARN_BIMODAL);
    CHECK(w & IB_WARN_HIGH_CV); /* two modes 20% apart: cv about 9% */
    CHECK(!(w & IB_WARN_FEW_SAMPLES));
}

static void test_few_samples_at_the_threshold(void)
{
    double x[IB__FEW_SAMPLES];
    for (int i = 0; i < IB__FEW_SAMPLES; i++) x[i] = 1.0;
    CHECK_EQ_INT(warnings_of(x, IB__FEW_SAMPLES - 1), IB_WARN_FEW_SAMPLES);
    CHECK_EQ_INT(warnings_of(x, IB__FEW_SAMPLES), 0);
}

static void test_high_cv_at_the_threshold(void)
{
    /* Half at 1 - d, half at 1 + d: mean 1, std = d * sqrt(n / (n - 1)). */
    double x[100];
    const double n = 100, scale = 1.0 / sqrt(n / (n - 1));
    for (int i = 0; i < 100; i++) x[i] = 1.0 + (i % 2 ? 1 : -1) * 0.049 * scale;
    CHECK(!(warnings_of(x, 100) & IB_WARN_HIGH_CV));
    for (int i = 0; i < 100; i++) x[i] = 1.0 + (i % 2 ? 1 : -1) * 0.051 * scale;
    CHECK(warnings_of(x, 100) & IB_WARN_HIGH_CV);
}

static double two_ms(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)index;
    (void)ctx;
    return 2.0;
}

/* A measurement of one run is summarized and warned about like any other
 * (a survivor skipped the summary below two runs). */
static void test_single_run_measured(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = two_ms;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 0;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.runs = 1;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n, 1);
    CHECK_EQ_INT(r.host.n, 1);
    CHECK(r.host.p50 >= 2.0);
    CHECK(r.warnings & IB_WARN_FEW_SAMPLES);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_clean_sample);
    RUN(test_bimodal);
    RUN(test_few_samples_at_the_threshold);
    RUN(test_high_cv_at_the_threshold);
    RUN(test_single_run_measured);
    return check_summary("test_sample_warnings");
}
