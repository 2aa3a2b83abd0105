/* The fleet on scripted workers: each fake workload's virtual clock runs
 * its own scripted durations, the workers meet at the barrier (threads),
 * and the aggregate over the common window, the straggler, the scaling
 * efficiency, the reservoir and the failures are checked on exact numbers;
 * then every format lists every device. */
#include "check.h"
#include "backend/fake/fake.h"
#include "core/fleet.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ctx points to the worker's run time in ms. */
static double scripted(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)index;
    return *(const double *)ctx;
}

/* Runs that slow down steadily: 1 ms to 2 ms over 3000 runs. */
static double ramp(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return 1 + (double)index / 3000;
}

static void quick_config(ib_config *cfg, int64_t runs)
{
    ib_config_init(cfg);
    cfg->warmup_runs = 2;
    cfg->warmup_ms = 0;
    cfg->warmup_until_steady = false;
    cfg->runs = runs;
    cfg->sample_gpu_state = false;
}

static ib_workload *open_worker(const double *run_ms, int64_t fail_at_run)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = scripted;
    s.ctx = (void *)(uintptr_t)run_ms;
    s.fail_at_run = fail_at_run;
    return check_open_fake(&s);
}

/* Two workers, 1 ms and 2 ms a run, 100 runs each: their phases are
 * [0, 100] and [0, 200] ms, the window [0, 100]: 100 runs of the first and
 * 50 of the second in it, 1000 + 500 inputs/s; the second is the
 * straggler, 2x. */
static void test_common_window(void)
{
    static const double ms[2] = { 1, 2 };
    ib_workload *ws[2] = { open_worker(&ms[0], -1), open_worker(&ms[1], -1) };
    ib_config cfg;
    quick_config(&cfg, 100);
    ib_fleet_worker workers[2];
    ib_error err = { { 0 } };
    CHECK(ib_measure_fleet(ws, 2, &cfg, workers, &err) == IB_OK);
    ib_fleet_result f;
    CHECK(ib_fleet_aggregate(workers, 2, NULL, &f, &err) == IB_OK);
    CHECK_NEAR(f.window_start_ms, 0, 1e-9);
    CHECK_NEAR(f.window_end_ms, 100, 1e-9);
    CHECK_NEAR(workers[0].window_runs, 100, 1e-9);
    CHECK_NEAR(workers[1].window_runs, 50, 1e-9);
    CHECK_NEAR(workers[0].items_per_s, 1000, 1e-6);
    CHECK_NEAR(workers[1].items_per_s, 500, 1e-6);
    CHECK_NEAR(f.items_per_s, 1500, 1e-6);
    CHECK_EQ_INT(f.straggler, 1);
    CHECK_EQ_INT(f.fastest, 0);
    CHECK_NEAR(f.straggler_ratio, 2, 1e-12);
    CHECK_EQ_INT(f.n_failed, 0);
    CHECK(!f.pooled_sampled);
    CHECK_EQ_INT(f.pooled.n, 200);
    CHECK_NEAR(f.pooled.p50, 1.5, 1e-12); /* 100 ones and 100 twos */
    CHECK(isnan(f.scaling_efficiency));
    ib_workload_destroy(ws[0]);
    ib_workload_destroy(ws[1]);
}

/* The window's edges cut runs: a run counts by the share of it inside. */
static void test_window_cuts_runs(void)
{
    ib_fleet_worker a = { .status = IB_OK, .n = 4, .batch = 8, .start_ms = 0, .end_ms = 12 };
    a.latency.p50 = 3;
    double ends[4] = { 3, 6, 9, 12 };
    a.marks[0] = (ib_fleet_mark){ 0, 0 };
    for (int k = 0; k < 4; k++) a.marks[k + 1] = (ib_fleet_mark){ ends[k], k + 1 };
    a.n_marks = 5;
    CHECK_NEAR(ib__fleet_runs_by(&a, 4.5), 1.5, 1e-12);
    CHECK_NEAR(ib__fleet_runs_by(&a, -1), 0, 1e-12);
    CHECK_NEAR(ib__fleet_runs_by(&a, 99), 4, 1e-12);
    /* b starts later (1 ms) and ends earlier (10 ms): the window is [1, 10] */
    ib_fleet_worker b = a;
    b.start_ms = 1;
    b.end_ms = 10;
    b.marks[0].t_ms = 1;
    b.marks[4].t_ms = 10;
    ib_fleet_worker ws[2] = { a, b };
    ib_fleet_result f;
    ib_error err;
    CHECK(ib_fleet_aggregate(ws, 2, NULL, &f, &err) == IB_OK);
    CHECK_NEAR(f.window_start_ms, 1, 1e-12);
    CHECK_NEAR(f.window_end_ms, 10, 1e-12);
    /* a: runs by 10 = 3 + 1/3, by 1 = 1/3: 3 runs in 9 ms at batch 8 */
    CHECK_NEAR(ws[0].window_runs, 3, 1e-12);
    CHECK_NEAR(ws[0].window_items_per_s, 3 * 8 / 0.009, 1e-6);
    CHECK_EQ_INT(f.pooled.n, 0); /* no latencies kept: none pooled */
    /* b's last run [9, 10] ends inside: all 4 of its runs */
    CHECK_NEAR(ws[1].window_runs, 4, 1e-12);
    CHECK(!f.mixed_devices);
    /* devices of different models: allowed, marked, also when the other
     * model is the fastest */
    strcpy(ws[1].name, "another GPU");
    CHECK(ib_fleet_aggregate(ws, 2, NULL, &f, &err) == IB_OK);
    CHECK(f.mixed_devices);
    ws[1].latency.p50 = 2;
    CHECK(ib_fleet_aggregate(ws, 2, NULL, &f, &err) == IB_OK);
    CHECK(f.mixed_devices);
    ws[1].latency.p50 = 3;
    /* phases that do not overlap are refused */
    ws[1].start_ms = 20;
    ws[1].end_ms = 30;
    CHECK(ib_fleet_aggregate(ws, 2, NULL, &f, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "do not overlap") != NULL);
}

/* A worker that fails mid-run: the others finish, the failed one is named
 * and left out of the aggregate; the scaling efficiency is against the
 * first worker alone. */
static void test_failed_worker_and_scaling(void)
{
    static const double ms[3] = { 1, 1, 4 };
    ib_workload *ws[3] = { open_worker(&ms[0], -1), open_worker(&ms[1], 20), open_worker(&ms[2], -1) };
    ib_config cfg;
    quick_config(&cfg, 100);
    ib_fleet_worker alone, workers[3];
    ib_error err = { { 0 } };
    CHECK(ib_measure_fleet(ws, 1, &cfg, &alone, &err) == IB_OK);
    CHECK(ib_measure_fleet(ws, 3, &cfg, workers, &err) == IB_OK);
    CHECK(workers[1].status == IB_ERR_RUNTIME);
    CHECK(workers[1].error[0] != '\0');
    CHECK(workers[0].status == IB_OK && workers[2].status == IB_OK);
    CHECK_EQ_INT(workers[2].n, 100);
    ib_fleet_result f;
    CHECK(ib_fleet_aggregate(workers, 3, &alone, &f, &err) == IB_OK);
    CHECK_EQ_INT(f.n_failed, 1);
    /* window [0, 100]: 1000/s + 250/s against 2 x 1000/s alone */
    CHECK_NEAR(f.items_per_s, 1250, 1e-6);
    CHECK(f.has_alone);
    CHECK_NEAR(f.scaling_efficiency, 0.625, 1e-9);
    CHECK_EQ_INT(f.straggler, 2);
    CHECK_NEAR(f.straggler_ratio, 4, 1e-12);
    for (int i = 0; i < 3; i++) ib_workload_destroy(ws[i]);
}

/* More runs than the reservoir keeps: the marks thin out evenly, the
 * pooled statistics weigh each kept sample by the runs it stands for. */
static void test_reservoir(void)
{
    static const double ms[2] = { 1, 3 };
    ib_workload *ws[2] = { open_worker(&ms[0], -1), open_worker(&ms[1], -1) };
    ib_config cfg;
    quick_config(&cfg, 3000);
    ib_fleet_worker workers[2];
    ib_error err = { { 0 } };
    CHECK(ib_measure_fleet(ws, 2, &cfg, workers, &err) == IB_OK);
    CHECK_EQ_INT(workers[0].n_kept, IB_FLEET_RESERVOIR);
    CHECK_EQ_INT(workers[0].n_marks, IB_FLEET_MARKS);
    CHECK_NEAR(workers[0].marks[IB_FLEET_MARKS - 1].runs, 3000, 0);
    ib_fleet_result f;
    CHECK(ib_fleet_aggregate(workers, 2, NULL, &f, &err) == IB_OK);
    CHECK(f.pooled_sampled);
    CHECK_EQ_INT(f.pooled.n, 6000);
    CHECK_NEAR(f.pooled.mean, 2, 1e-9);
    CHECK_NEAR(f.window_end_ms, 3000, 1e-9);
    /* the 3 ms worker ran 1000 runs in the window, up to the marks' spacing */
    CHECK_NEAR(workers[1].window_runs, 1000, 3000.0 / (IB_FLEET_MARKS - 1));
    ib_workload_destroy(ws[0]);
    ib_workload_destroy(ws[1]);

    /* A uniform reservoir of a ramp: its mean is the ramp's (about 1.5),
     * not that of the first runs. */
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = ramp;
    ib_workload *w = check_open_fake(&s);
    CHECK(ib_measure_fleet(&w, 1, &cfg, workers, &err) == IB_OK);
    double kept_mean = 0;
    for (size_t i = 0; i < workers[0].n_kept; i++)
        kept_mean += workers[0].kept_ms[i] / (double)workers[0].n_kept;
    CHECK_NEAR(kept_mean, workers[0].latency.mean, 0.03);
    ib_workload_destroy(w);

    ib__weighted p[3] = { { 3, 1 }, { 1, 1 }, { 2, 2 } };
    ib_stats st;
    ib__fleet_weighted_stats(p, 3, &st);
    CHECK_EQ_INT(st.n, 4);
    CHECK_NEAR(st.mean, 2, 1e-12);
    CHECK_NEAR(st.p50, 2, 0);
    CHECK_NEAR(st.p99, 3, 0);
}

/* Every format names every device, the failed one with its error. */
static void test_formats(void)
{
    static const double ms[2] = { 1, 2 };
    ib_workload *ws[2] = { open_worker(&ms[0], -1), open_worker(&ms[1], 5) };
    ib_config cfg;
    quick_config(&cfg, 50);
    ib_fleet_worker workers[2];
    ib_error err = { { 0 } };
    CHECK(ib_measure_fleet(ws, 2, &cfg, workers, &err) == IB_OK);
    strcpy(workers[0].uuid, "GPU-fake-0");
    strcpy(workers[0].pci_bus_id, "0000:3b:00.0");
    ib_fleet_result f;
    CHECK(ib_fleet_aggregate(workers, 2, NULL, &f, &err) == IB_OK);
    ib_result r = { .kind = IB_RESULT_FLEET, .fleet = &f, .info = ib_workload_get_info(ws[0]), .cfg = &cfg };
    const char *formats[] = { "text", "json", "html", "csv", "md" };
    for (size_t i = 0; i < 5; i++) {
        char *doc = ib_report(&r, formats[i]);
        CHECK(doc != NULL);
        if (!doc) continue;
        CHECK(strstr(doc, "GPU-fake-0") != NULL);
        CHECK(strstr(doc, "0000:3b:00.0") != NULL);
        CHECK(strstr(doc, "device 1") != NULL || strstr(doc, "\"index\":\t1") != NULL);
        CHECK(strstr(doc, "fake: run 5 failed") != NULL || strstr(doc, "run 5") != NULL);
        ib_free(doc);
    }
    char *json = ib_report(&r, "json");
    cJSON *root = cJSON_Parse(json);
    cJSON *devices = cJSON_GetObjectItem(root, "devices");
    CHECK_EQ_INT(cJSON_GetArraySize(devices), 2);
    cJSON *d0 = cJSON_GetArrayItem(devices, 0);
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(d0, "samples_ms")), 50);
    CHECK(
        !strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(devices, 1), "status")->valuestring, "runtime error"));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(root, "partial")));
    CHECK_NEAR(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "fleet"), "items_per_s")->valuedouble, 1000,
               1e-6);
    cJSON_Delete(root);
    ib_free(json);
    ib_workload_destroy(ws[0]);
    ib_workload_destroy(ws[1]);
}

/* The sync points: once right before the first timed run (after the cold
 * run and warm-up), once after the last; the timed phase's clock starts at
 * the first. */
typedef struct sync_log {
    ib_workload *w;
    int calls;
    int64_t runs_at[2];
} sync_log;

static ib_status log_sync(void *user, int point)
{
    sync_log *l = user;
    if (l->calls < 2 && point == l->calls) l->runs_at[point] = ib__fake_runs(l->w);
    l->calls++;
    return IB_OK;
}

static void test_sync_points(void)
{
    static const double ms = 2;
    sync_log l = { .w = open_worker(&ms, -1) };
    ib_config cfg;
    quick_config(&cfg, 30);
    cfg.sync = log_sync;
    cfg.sync_user = &l;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(l.w, &cfg, &r, &err) == IB_OK);
    CHECK_EQ_INT(l.calls, 2);
    CHECK_EQ_INT(l.runs_at[0], 1 + 2);      /* the cold run and 2 warm-up runs */
    CHECK_EQ_INT(l.runs_at[1], 1 + 2 + 30); /* and the 30 timed */
    CHECK_NEAR(r.end_ms[0], 2, 1e-12);
    CHECK_NEAR(r.end_ms[29], 60, 1e-12);
    ib_latency_result_free(&r);
    ib_workload_destroy(l.w);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_sync_points);
    RUN(test_common_window);
    RUN(test_window_cuts_runs);
    RUN(test_failed_worker_and_scaling);
    RUN(test_reservoir);
    RUN(test_formats);
    return check_summary("test_fleet");
}
