/* serve on several devices at once, on scripted fake devices (each its own
 * virtual clock, the devices' threads and barriers for real): each device
 * serves its share of the host's rate exactly as it would alone at that
 * share with its own seed; the host's aggregate over the common window; a
 * search takes the highest host rate every device meets; a device that
 * fails stops the fleet after the rate in progress, the others' figures
 * kept; a schedule file dealt round-robin. */
#include "check.h"
#include "backend/fake/fake.h"
#include "core/fleet.h"
#include "core/serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ctx points to the device's run time in ms. */
static double scripted(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)index;
    return *(const double *)ctx;
}

static ib_workload *open_device(const double *run_ms, int64_t fail_at_run)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = scripted;
    s.ctx = (void *)(uintptr_t)run_ms;
    s.fail_at_run = fail_at_run;
    return check_open_fake(&s);
}

/* Two warm-up runs (indexes 0 and 1), then the requests. */
static void serve_config(ib_serve_config *cfg, int64_t requests, ib_arrivals arrivals)
{
    ib_serve_config_init(cfg);
    cfg->run.warmup_runs = 2;
    cfg->run.warmup_ms = 0;
    cfg->run.sample_gpu_state = false;
    cfg->requests = requests;
    cfg->arrivals = arrivals;
}

static void destroy_all(ib_workload **ws, size_t n)
{
    for (size_t i = 0; i < n; i++) ib_workload_destroy(ws[i]);
}

/* Constant arrivals at a host rate of 200/s on two devices: each serves
 * 100/s, one request every 10 ms, 1 ms and 2 ms a request: no queueing.
 * Device 0 ends at 991 ms, device 1 at 992: the window [0, 991], where
 * device 1 completed 99.9 requests (its 100th completes at 992, counted by
 * the share of the gap from 982). The straggler by p99: device 1, 2x. */
static void test_constant_share_and_window(void)
{
    static const double ms[2] = { 1, 2 };
    ib_workload *ws[2] = { open_device(&ms[0], -1), open_device(&ms[1], -1) };
    ib_serve_config cfg;
    serve_config(&cfg, 100, IB_ARRIVALS_CONSTANT);
    const double rate = 200;
    cfg.rates = &rate;
    cfg.n_rates = 1;
    ib_fleet_serve_result r;
    ib_error err = { { 0 } };
    CHECK_EQ_INT(ib_measure_fleet_serve(ws, 2, 1, &cfg, &r, &err), IB_OK);
    CHECK_EQ_INT(r.n_rates, 1);
    CHECK(!r.partial && !r.searched && !r.found);
    const ib_fleet_serve_rate *at = &r.rates[0];
    CHECK_NEAR(at->offered_rate, 200, 1e-9);
    CHECK_NEAR(r.serve[0].points[0].offered_rate, 100, 1e-12);
    CHECK_NEAR(r.serve[1].points[0].offered_rate, 100, 1e-12);
    CHECK_NEAR(at->devices[0].latency.p99, 1, 1e-12);
    CHECK_NEAR(at->devices[1].latency.p99, 2, 1e-12);
    CHECK_NEAR(at->devices[0].end_ms, 991, 1e-9);
    CHECK_NEAR(at->devices[1].end_ms, 992, 1e-9);
    CHECK_NEAR(at->host.window_start_ms, 0, 0);
    CHECK_NEAR(at->host.window_end_ms, 991, 1e-9);
    CHECK_NEAR(at->devices[0].window_runs, 100, 1e-9);
    CHECK_NEAR(at->devices[1].window_runs, 99.9, 1e-9);
    CHECK_NEAR(at->host.items_per_s, 199.9 / 0.991, 1e-6);
    CHECK_EQ_INT(at->host.pooled.n, 200);
    CHECK_NEAR(at->host.pooled.p50, 1.5, 1e-12);
    CHECK_NEAR(at->host.pooled.p99, 2, 1e-12);
    CHECK(at->host.measured == IB_RESULT_SERVE && at->host.serve == &r);
    CHECK_EQ_INT(at->host.straggler, 1);
    CHECK_EQ_INT(at->host.fastest, 0);
    CHECK_NEAR(at->host.straggler_ratio, 2, 1e-12);
    CHECK(at->devices[1].index == 1 && r.who[1].status == IB_OK);
    ib_fleet_serve_result_free(&r);
    destroy_all(ws, 2);
}

/* Poisson arrivals: device d serves exactly what it would alone at the
 * host's rate / n with seed + d: its own schedule, not the others'. */
static void test_poisson_shares_are_own_schedules(void)
{
    static const double ms = 4; /* queueing at 150/s a device: the schedule shows */
    ib_workload *ws[3] = { open_device(&ms, -1), open_device(&ms, -1), open_device(&ms, -1) };
    ib_serve_config cfg;
    serve_config(&cfg, 400, IB_ARRIVALS_POISSON);
    cfg.seed = 7;
    const double rate = 450;
    cfg.rates = &rate;
    cfg.n_rates = 1;
    ib_fleet_serve_result r;
    ib_error err = { { 0 } };
    CHECK_EQ_INT(ib_measure_fleet_serve(ws, 3, 1, &cfg, &r, &err), IB_OK);
    CHECK_EQ_INT(r.n_rates, 1);
    for (size_t d = 0; d < 3; d++) {
        ib_workload *alone = open_device(&ms, -1);
        ib_serve_config one = cfg;
        const double share = 150;
        one.rates = &share;
        one.seed = 7 + d;
        ib_serve_result *a = calloc(1, sizeof *a);
        CHECK_EQ_INT(ib_measure_serve(alone, &one, a, &err), IB_OK);
        const ib_serve_point *p = &r.serve[d].points[0], *q = &a->points[0];
        CHECK_NEAR(p->total.p99, q->total.p99, 1e-9);
        CHECK_NEAR(p->queue.mean, q->queue.mean, 1e-9);
        CHECK_NEAR(p->achieved_rate, q->achieved_rate, 1e-9);
        CHECK_NEAR(r.rates[0].devices[d].latency.p50, q->total.p50, 1e-9);
        free(a);
        ib_workload_destroy(alone);
    }
    /* distinct seeds: the devices' queueing differs */
    CHECK(r.serve[0].points[0].queue.mean != r.serve[1].points[0].queue.mean);
    CHECK_NEAR(r.rates[0].offered_rate, 450, 1e-9);
    ib_fleet_serve_result_free(&r);
    destroy_all(ws, 3);
}

/* A search: the host's answer is the highest rate at which every device
 * meets the target, so with a 1 ms and a 4 ms device it is twice what the
 * 4 ms device meets alone (the same first rate: half the slowest device's
 * capacity, the same steps). */
static void test_search_every_device_meets(void)
{
    static const double ms[2] = { 1, 4 };
    ib_workload *ws[2] = { open_device(&ms[0], -1), open_device(&ms[1], -1) };
    ib_serve_config cfg;
    serve_config(&cfg, 1000, IB_ARRIVALS_POISSON);
    cfg.slo_ms = 10;
    ib_fleet_serve_result r;
    ib_error err = { { 0 } };
    CHECK_EQ_INT(ib_measure_fleet_serve(ws, 2, 1, &cfg, &r, &err), IB_OK);
    CHECK(r.searched && r.found);
    ib_workload *slow = open_device(&ms[1], -1);
    ib_serve_config one = cfg;
    one.seed = cfg.seed + 1;
    ib_serve_result *a = calloc(1, sizeof *a);
    CHECK_EQ_INT(ib_measure_serve(slow, &one, a, &err), IB_OK);
    CHECK(a->found);
    CHECK_EQ_INT(r.n_rates, a->n_points);
    CHECK_NEAR(r.rates[r.best].offered_rate, 2 * a->points[a->best].offered_rate, 1e-9);
    CHECK_NEAR(r.rates[0].offered_rate, 2 * 125, 1e-9); /* half of 250/s, the 4 ms device's */
    /* every rate: the host met it exactly when the slow device did (the
     * fast one meets them all), and the fast device's own verdict kept */
    for (size_t i = 0; i < r.n_rates; i++) {
        CHECK(r.rates[i].met == a->points[i].met);
        CHECK(r.serve[0].points[i].met);
        CHECK_EQ_INT(r.rates[i].host.straggler, 1);
    }
    free(a);
    ib_workload_destroy(slow);
    ib_fleet_serve_result_free(&r);
    destroy_all(ws, 2);
}

/* Device 1 fails at its 31st request (run 32) of the first rate: device 0
 * finishes that rate, the second is never served; device 1 is named, its
 * error kept; the host's aggregate at the rate is device 0's. */
static void test_failed_device(void)
{
    static const double ms = 1;
    ib_workload *ws[2] = { open_device(&ms, -1), open_device(&ms, 2 + 30) };
    ib_serve_config cfg;
    serve_config(&cfg, 100, IB_ARRIVALS_CONSTANT);
    const double rates[2] = { 200, 400 };
    cfg.rates = rates;
    cfg.n_rates = 2;
    ib_fleet_serve_result r;
    ib_error err = { { 0 } };
    CHECK_EQ_INT(ib_measure_fleet_serve(ws, 2, 1, &cfg, &r, &err), IB_ERR_RUNTIME);
    CHECK(strstr(err.message, "device 1: ") == err.message);
    CHECK(r.partial);
    CHECK_EQ_INT(r.n_rates, 1);
    CHECK(r.who[0].status == IB_OK && r.who[1].status == IB_ERR_RUNTIME && r.who[1].error[0]);
    CHECK_EQ_INT(r.rates[0].devices[0].n, 100);
    CHECK(r.rates[0].devices[1].status == IB_ERR_RUNTIME);
    CHECK_EQ_INT(r.rates[0].host.n_failed, 1);
    CHECK_EQ_INT(r.rates[0].host.pooled.n, 100);
    CHECK(!r.rates[0].met);
    /* every format names the failed device and its error */
    CHECK(r.shown == &r.rates[0].host);
    ib_result res = { .kind = IB_RESULT_FLEET, .fleet = r.shown, .info = ib_workload_get_info(ws[0]) };
    const char *formats[] = { "text", "json", "html", "csv", "md" };
    for (size_t i = 0; i < 5; i++) {
        char *doc = ib_report(&res, formats[i]);
        CHECK(doc && strstr(doc, "fake: run 32 failed") &&
              (strstr(doc, "device 1") || strstr(doc, "\"index\":\t1")));
        ib_free(doc);
    }
    ib_fleet_serve_result_free(&r);
    destroy_all(ws, 2);

    /* failing in warm-up: nobody serves, the device is named */
    ib_workload *ws2[2] = { open_device(&ms, -1), open_device(&ms, 0) };
    CHECK_EQ_INT(ib_measure_fleet_serve(ws2, 2, 1, &cfg, &r, &err), IB_ERR_RUNTIME);
    CHECK_EQ_INT(r.n_rates, 0);
    CHECK(r.who[1].status == IB_ERR_RUNTIME && r.who[0].status == IB_OK);
    ib_fleet_serve_result_free(&r);
    destroy_all(ws2, 2);
}

/* A schedule file is dealt round-robin: device 0 the 1st, 3rd, ...
 * request, device 1 the 2nd, 4th...; the host offers the file's rate. */
static void test_trace_dealt(void)
{
    static const double ms = 1;
    ib_workload *ws[4] = { open_device(&ms, -1), open_device(&ms, -1), open_device(&ms, -1),
                           open_device(&ms, -1) };
    static const double trace[5] = { 0, 10, 20, 30, 40 };
    ib_serve_config cfg;
    serve_config(&cfg, 0, IB_ARRIVALS_TRACE);
    cfg.trace_ms = trace;
    cfg.n_trace = 5;
    ib_fleet_serve_result r;
    ib_error err = { { 0 } };
    CHECK_EQ_INT(ib_measure_fleet_serve(ws, 2, 2, &cfg, &r, &err), IB_OK);
    CHECK_EQ_INT(r.serve[0].points[0].n, 3); /* 0, 20, 40 */
    CHECK_EQ_INT(r.serve[1].points[0].n, 2); /* 10, 30 */
    CHECK_EQ_INT(r.serve[0].instances, 2);
    CHECK_NEAR(r.serve[0].points[0].offered_rate, 50, 1e-9);
    CHECK_NEAR(r.serve[1].points[0].offered_rate, 50, 1e-9);
    ib_fleet_serve_result_free(&r);
    /* fewer requests than devices; a closed loop: refused */
    cfg.n_trace = 1;
    CHECK_EQ_INT(ib_measure_fleet_serve(ws, 2, 2, &cfg, &r, &err), IB_ERR_INVALID_ARG);
    serve_config(&cfg, 10, IB_ARRIVALS_POISSON);
    cfg.concurrency = 1;
    CHECK_EQ_INT(ib_measure_fleet_serve(ws, 2, 2, &cfg, &r, &err), IB_ERR_UNSUPPORTED);
    destroy_all(ws, 4);
}

/* serve's straggler is the device with the highest p99 (a request's tail
 * is what the target holds), latency's the slowest median. */
static void test_straggler_by_p99(void)
{
    ib_fleet_worker ws[2] = { { .status = IB_OK, .n = 2, .batch = 1, .end_ms = 10, .n_marks = 2 },
                              { .status = IB_OK, .n = 2, .batch = 1, .end_ms = 10, .n_marks = 2 } };
    for (int i = 0; i < 2; i++) ws[i].marks[1] = (ib_fleet_mark){ 10, 2 };
    ws[0].latency.p50 = 2, ws[0].latency.p99 = 3;
    ws[1].latency.p50 = 1, ws[1].latency.p99 = 6;
    ib_fleet_result f;
    ib_error err;
    CHECK_EQ_INT(ib__fleet_aggregate_as(IB_RESULT_SERVE, ws, 2, NULL, &f, &err), IB_OK);
    CHECK_EQ_INT(f.straggler, 1);
    CHECK_NEAR(f.straggler_ratio, 2, 1e-12);
    CHECK_EQ_INT(ib_fleet_aggregate(ws, 2, NULL, &f, &err), IB_OK);
    CHECK_EQ_INT(f.straggler, 0);
    CHECK_NEAR(f.straggler_ratio, 2, 1e-12);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_constant_share_and_window);
    RUN(test_poisson_shares_are_own_schedules);
    RUN(test_search_every_device_meets);
    RUN(test_failed_device);
    RUN(test_trace_dealt);
    RUN(test_straggler_by_p99);
    return check_summary("test_fleet_serve");
}
