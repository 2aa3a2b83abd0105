/* Calibration on kernels of known duration, on the fake backend: the fake
 * behaves as a GPU whose marks count a launch gap of LAUNCH_US before each
 * unheld run and whose runs take exactly the duration asked. Every point is
 * measured, in microseconds, with the harness's cost taken off; a failure
 * part-way keeps the points measured and says why it stopped; progress names
 * the harness and each kernel. */
#include "check.h"
#include "backend/fake/fake.h"
#include "core/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LAUNCH_US 2.0
#define MAX_OPENS 64

typedef struct kernels {
    double duration_ms[MAX_OPENS]; /* of each workload opened, its script's ctx */
    int opens;
    double fail_duration_us; /* the kernel of this duration fails ... */
    int64_t fail_at_run;     /* ... at this run; -1: none fails */
} kernels;

static double known_duration(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)index;
    return *(const double *)ctx;
}

static ib_status open_fake_kernel(double duration_us, int device_id, void *ctx, ib_workload **out,
                                  ib_error *err)
{
    (void)device_id;
    kernels *k = ctx;
    CHECK(k->opens < MAX_OPENS);
    double *d = &k->duration_ms[k->opens++];
    *d = duration_us / 1e3;
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = known_duration;
    s.ctx = d;
    s.gpu_like = true;
    s.has_device_timer = true;
    s.has_stream_hold = true;
    s.launch_ms = LAUNCH_US / 1e3;
    s.host_overhead_ms = 0.001;
    if (duration_us == k->fail_duration_us) s.fail_at_run = k->fail_at_run;
    return ib__workload_open_fake(&s, out, err);
}

#define MAX_STEPS 16
typedef struct steps {
    char names[MAX_STEPS][32];
    int64_t of[MAX_STEPS];
} steps;

static void record_step(const ib_progress *p, void *user)
{
    steps *s = user;
    if (p->step >= 1 && p->step < MAX_STEPS && p->step_name) {
        snprintf(s->names[p->step], sizeof s->names[p->step], "%s", p->step_name);
        s->of[p->step] = p->steps;
    }
}

static void quick_config(ib_config *cfg)
{
    ib_config_init(cfg);
    cfg->runs = 40;
    cfg->warmup_runs = 2;
    cfg->warmup_ms = 0;
    cfg->warmup_until_steady = false;
}

static void test_every_point_measured(void)
{
    kernels k = { .fail_at_run = -1, .fail_duration_us = -1 };
    const ib__known_kernel known = { .open = open_fake_kernel, .ctx = &k };
    static const double durations[] = { 5, 20, 1000 };
    ib_config cfg;
    quick_config(&cfg);
    steps seen = { 0 };
    cfg.progress = record_step;
    cfg.progress_user = &seen;
    ib_calibration_result r;
    ib_error err;
    CHECK(ib__calibrate_with(&known, &cfg, durations, 3, &r, &err) == IB_OK);
    CHECK(!r.partial && r.stop_status == IB_OK);
    CHECK_EQ_INT(r.n_points, 3);
    /* The harness is an empty kernel: the launch gap is all it reads. */
    CHECK_NEAR(r.harness.median_us, LAUNCH_US, 1e-9);
    CHECK_NEAR(r.harness.held_median_us, 0, 1e-9);
    for (int i = 0; i < 3; i++) {
        const ib_calibration_point *p = &r.points[i];
        CHECK_EQ_INT(p->status, IB_OK);
        CHECK_EQ_INT(p->n, 40);
        CHECK_NEAR(p->true_us, durations[i], 0);
        CHECK_NEAR(p->median_us, durations[i] + LAUNCH_US, 1e-9);
        CHECK_NEAR(p->error_us, LAUNCH_US, 1e-9);
        CHECK_NEAR(p->error_pct, 100 * LAUNCH_US / durations[i], 1e-9);
        /* Every run reads the same: the percentiles, in us, are the median. */
        CHECK_NEAR(p->p5_us, p->median_us, 1e-9);
        CHECK_NEAR(p->p95_us, p->median_us, 1e-9);
        CHECK_NEAR(p->held_median_us, durations[i], 1e-9);
        CHECK_NEAR(p->held_error_us, 0, 1e-9);
        CHECK_NEAR(p->launch_overhead_us, LAUNCH_US, 1e-9);
        CHECK_NEAR(p->corrected_error_us, 0, 1e-9);
        CHECK_NEAR(p->held_corrected_error_us, 0, 1e-9);
        CHECK(p->host_median_us >= p->median_us);
    }
    /* Progress: the harness is step 1 of 4, then each kernel by its duration. */
    CHECK(strcmp(seen.names[1], "harness") == 0 && seen.of[1] == 4);
    CHECK(strcmp(seen.names[2], "spin 5 us") == 0);
    CHECK(strcmp(seen.names[3], "spin 20 us") == 0);
    CHECK(strcmp(seen.names[4], "spin 1000 us") == 0 && seen.of[4] == 4);
}

static void test_failure_keeps_points(void)
{
    kernels k = { .fail_duration_us = 50, .fail_at_run = 7 };
    const ib__known_kernel known = { .open = open_fake_kernel, .ctx = &k };
    static const double durations[] = { 5, 10, 50, 100 };
    ib_config cfg;
    quick_config(&cfg);
    ib_calibration_result r;
    ib_error err;
    CHECK(ib__calibrate_with(&known, &cfg, durations, 4, &r, &err) == IB_ERR_RUNTIME);
    CHECK(r.partial && r.stop_status == IB_ERR_RUNTIME);
    CHECK_EQ_INT(r.n_points, 2);
    CHECK_NEAR(r.points[1].median_us, 10 + LAUNCH_US, 1e-9);
    CHECK_EQ_INT(r.points[2].status, IB_ERR_RUNTIME);
}

static void test_bad_arguments(void)
{
    kernels k = { .fail_at_run = -1, .fail_duration_us = -1 };
    const ib__known_kernel known = { .open = open_fake_kernel, .ctx = &k };
    ib_config cfg;
    quick_config(&cfg);
    ib_calibration_result r;
    ib_error err;
    const double one = 5;
    CHECK(ib__calibrate_with(&known, &cfg, &one, 0, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(ib__calibrate_with(&known, &cfg, &one, IB_MAX_CALIBRATION_POINTS + 1, &r, &err) ==
          IB_ERR_INVALID_ARG);
    CHECK_EQ_INT(k.opens, 0);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_every_point_measured);
    RUN(test_failure_keeps_points);
    RUN(test_bad_arguments);
    return check_summary("test_calibrate");
}
