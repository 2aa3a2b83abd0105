/* Faults injected into the scripted fake, beyond those test_latency.c
 * covers (a runtime error mid-measurement, out of memory in warm-up, a lost
 * device mid-measurement, a cancel before the start): a failure on the very
 * first run, a cancel raised during warm-up and during sampling, a fault in
 * adaptive sampling, what the reports say of a partial result, a lost
 * device staying lost, the workload staying usable after a non-sticky
 * fault, throughput stopped by faults and cancels, and configurations
 * holding NaN or infinities. Whatever happens: a status, the samples taken
 * kept, no crash, no hang. */
#include "check.h"
#include "backend/fake/fake.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The cancel flag the scripts raise from inside a run, as a signal handler
 * would. */
static volatile int cancel_flag;
static int64_t cancel_at_run = -1;

static double steady_raising_cancel(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    if (index == cancel_at_run) cancel_flag = 1;
    return 1.0 + 0.001 * (double)(index % 7);
}

static ib__fake_script script(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = steady_raising_cancel;
    cancel_flag = 0;
    cancel_at_run = -1;
    return s;
}

/* 1 cold + 5 warm-up runs, then 100 timed, unless something stops it. */
static ib_config config(void)
{
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 5;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.runs = 100;
    cfg.cancel = &cancel_flag;
    return cfg;
}

static void test_fault_on_the_cold_run(void)
{
    ib__fake_script s = script();
    s.fail_at_run = 0;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = config();
    ib_latency_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_RUNTIME);
    CHECK(r.partial);
    CHECK(r.stop_status == IB_ERR_RUNTIME);
    CHECK_EQ_INT(r.n, 0);
    CHECK_EQ_INT(r.warmup_runs_done, 0);
    CHECK(strstr(err.message, "run 0") != NULL);
    ib_latency_result_free(&r);

    /* A runtime error is not sticky: the same workload measures again. */
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n, 100);
    CHECK(!r.partial);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);

    s = script();
    s.oom_at_run = 0;
    w = check_open_fake(&s);
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_DEVICE_OOM);
    CHECK(r.partial);
    CHECK_EQ_INT(r.n, 0);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_cancel_during_warmup(void)
{
    ib__fake_script s = script();
    cancel_at_run = 3; /* the third warm-up run raises it */
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = config();
    ib_latency_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INTERRUPTED);
    CHECK(r.partial);
    CHECK(r.stop_status == IB_ERR_INTERRUPTED);
    CHECK_EQ_INT(r.n, 0);
    CHECK_EQ_INT(r.warmup_runs_done, 3);
    CHECK_EQ_INT(ib__fake_runs(w), 4); /* stopped right after the run in flight */
    CHECK(strstr(err.message, "warm-up") != NULL);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_cancel_during_sampling_keeps_samples(void)
{
    ib__fake_script s = script();
    cancel_at_run = 1 + 5 + 39; /* raised by the 40th timed run */
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = config();
    ib_latency_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INTERRUPTED);
    CHECK(r.partial);
    CHECK_EQ_INT(r.n, 40); /* the run in flight is kept, none is started after */
    CHECK_EQ_INT(ib__fake_runs(w), 1 + 5 + 40);
    CHECK_EQ_INT(r.device.n, 40);
    CHECK_EQ_INT(r.host.n, 40);
    CHECK(r.device.min >= 1.0 && r.device.max <= 1.007);
    CHECK(r.device_ms != NULL && r.host_ms != NULL);

    /* What the reports say of it: partial, why, and every sample. */
    const ib_workload_info *info = ib_workload_get_info(w);
    char *text = ib_latency_report_text(&r, info);
    CHECK(text != NULL && strstr(text, "PARTIAL") != NULL && strstr(text, "interrupted") != NULL);
    ib_free(text);
    char *json = ib_latency_report_json(&r, info, &cfg);
    CHECK(json != NULL);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    CHECK(doc != NULL);
    if (doc) {
        CHECK(cJSON_IsTrue(cJSON_GetObjectItem(doc, "partial")));
        const cJSON *why = cJSON_GetObjectItem(doc, "stop_reason");
        CHECK(cJSON_IsString(why) && strcmp(why->valuestring, ib_status_str(IB_ERR_INTERRUPTED)) == 0);
        const cJSON *samples = cJSON_GetObjectItem(doc, "samples");
        CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(samples, "device_ms")), 40);
        CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(samples, "host_ms")), 40);
        const cJSON *lat = cJSON_GetObjectItem(doc, "latency_ms");
        CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(lat, "n")), 40);
        cJSON_Delete(doc);
    }
    ib_free(json);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_fault_in_adaptive_sampling(void)
{
    ib__fake_script s = script();
    s.fail_at_run = 1 + 5 + 70;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = config();
    cfg.precision = 1e-6; /* never met: only the fault stops it */
    cfg.min_runs = 10;
    cfg.max_runs = 100000;
    ib_latency_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_RUNTIME);
    CHECK(r.partial);
    CHECK_EQ_INT(r.n, 70);
    CHECK(r.precision_achieved > 0);
    CHECK(!r.precision_met);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_lost_device_stays_lost(void)
{
    ib__fake_script s = script();
    s.lose_device_at_run = 1 + 5 + 10;
    ib_workload *w = check_open_fake(&s);
    ib_config cfg = config();
    ib_latency_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_DEVICE_LOST);
    CHECK_EQ_INT(r.n, 10);
    ib_latency_result_free(&r);

    /* Every later call says so at once: no run, no crash, no hang. */
    CHECK(ib_workload_set_batch(w, 2, &err) == IB_ERR_DEVICE_LOST);
    int64_t runs = ib__fake_runs(w);
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_DEVICE_LOST);
    CHECK(r.partial);
    CHECK_EQ_INT(r.n, 0);
    CHECK_EQ_INT(ib__fake_runs(w), runs + 1); /* the cold run found it lost */
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static void test_oom_at_bind_leaves_a_usable_workload(void)
{
    ib__fake_script s = script();
    s.oom_above_batch = 16;
    ib_workload *w = check_open_fake(&s);
    ib_error err = { { 0 } };
    CHECK(ib_workload_set_batch(w, 64, &err) == IB_ERR_DEVICE_OOM);
    CHECK(ib_workload_set_batch(w, 8, &err) == IB_OK);
    CHECK_EQ_INT(ib_workload_get_info(w)->batch, 8);
    ib_config cfg = config();
    ib_latency_result r;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n, 100);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

/* Throughput over an explicit list of batches, stopped by a fault or a
 * cancel on the way: the batches measured before are kept. */
static void test_throughput_stopped(void)
{
    static const int64_t batches[] = { 1, 2, 4, 8 };
    ib_throughput_config tc;
    ib_throughput_config_init(&tc);
    tc.batches = batches;
    tc.n_batches = 4;
    tc.run.warmup_runs = 2;
    tc.run.warmup_ms = 0;
    tc.run.warmup_until_steady = false;
    tc.run.runs = 20;
    tc.run.cancel = &cancel_flag;
    ib_throughput_result r;
    ib_error err = { { 0 } };

    ib__fake_script s = script();
    s.lose_device_at_run = 150; /* somewhere in the later batches */
    ib_workload *w = check_open_fake(&s);
    CHECK(ib_measure_throughput(w, &tc, &r, &err) == IB_ERR_DEVICE_LOST);
    CHECK(r.partial);
    CHECK(r.stop_status == IB_ERR_DEVICE_LOST);
    CHECK(r.n_points >= 1);
    CHECK(r.points[0].batch == 1 && r.points[0].status == IB_OK && r.points[0].items_per_s > 0);
    char *json = ib_throughput_report_json(&r, ib_workload_get_info(w), &tc);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    CHECK(doc != NULL && cJSON_IsTrue(cJSON_GetObjectItem(doc, "partial")));
    cJSON_Delete(doc);
    ib_free(json);
    ib_workload_destroy(w);

    s = script();
    cancel_at_run = 60;
    w = check_open_fake(&s);
    CHECK(ib_measure_throughput(w, &tc, &r, &err) == IB_ERR_INTERRUPTED);
    CHECK(r.partial);
    CHECK(r.n_points >= 1 && r.points[0].status == IB_OK);
    CHECK(ib__fake_runs(w) <= 62); /* stops at the next check, not at the end */
    ib_workload_destroy(w);
}

static void test_config_nan_and_infinity(void)
{
    ib__fake_script s = script();
    ib_workload *w = check_open_fake(&s);
    ib_latency_result r;
    ib_error err = { { 0 } };
    ib_config cfg;

    ib_config_init(&cfg);
    cfg.warmup_ms = NAN;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_config_init(&cfg);
    cfg.warmup_max_ms = INFINITY;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_config_init(&cfg);
    cfg.precision = NAN;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_config_init(&cfg);
    cfg.precision = 0.01;
    cfg.max_time_ms = NAN;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_config_init(&cfg);
    cfg.precision = 0.01;
    cfg.max_time_ms = INFINITY;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    /* The sample memory bound: at most 1,000,000 runs, adaptive too. */
    ib_config_init(&cfg);
    cfg.precision = 0.01;
    cfg.max_runs = 1000001;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    ib_config_init(&cfg);
    cfg.warmup_runs = -1;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK_EQ_INT(ib__fake_runs(w), 0);
    ib_workload_destroy(w);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_fault_on_the_cold_run);
    RUN(test_cancel_during_warmup);
    RUN(test_cancel_during_sampling_keeps_samples);
    RUN(test_fault_in_adaptive_sampling);
    RUN(test_lost_device_stays_lost);
    RUN(test_oom_at_bind_leaves_a_usable_workload);
    RUN(test_throughput_stopped);
    RUN(test_config_nan_and_infinity);
    return check_summary("test_faults");
}
