/* Internals of the latency measurement reused by throughput and pitfalls. */
#ifndef IB_CORE_LATENCY_H
#define IB_CORE_LATENCY_H

#include "core/progress.h"
#include "core/runner.h"

/* Limits that keep memory bounded and refuse absurd requests up front:
 * samples take 16 bytes a run, so a million runs is 16 MB. */
#define IB__MAX_RUNS 1000000
#define IB__MAX_TIME_MS 3600000.0
/* The period at which NVML samples GPU state during a measurement. */
#define IB__GPU_SAMPLE_PERIOD_MS 100.0
/* Coefficient of variation above which the report warns. */
#define IB__HIGH_CV 0.05

/* Fewer samples than this are too few for tail percentiles. */
#define IB__FEW_SAMPLES 30

ib_status ib__config_validate(const ib_config *cfg, ib_error *err);

/* A wait for the host over this share of the device's part makes a run
 * host-bound: its figure the host's (docs/method.md, "Host-bound"). */
#define IB__HOST_BOUND_SHARE 0.05

/* The host-wait check's pairs (ib__host_wait_pairs): the statistics of
 * the runs as they are and with their launch held; wait_ms the difference
 * of their medians where they differ beyond both intervals, else 0 (NAN:
 * not checked); bound when that is over IB__HOST_BOUND_SHARE of the held
 * median. */
typedef struct ib__host_wait {
    ib_stats plain, held;
    double wait_ms;
    bool bound;
} ib__host_wait;

/* Whether w can time a run with its launch held (the check's condition). */
bool ib__can_hold(const ib_workload *w);

/* pairs of w's run, as it is and held, alternated, on the bound batch;
 * the statistics widened to resolution_ms. The workload's run is left
 * synchronous (the runner's release). */
ib_status ib__host_wait_pairs(ib_workload *w, const ib_config *cfg, size_t pairs, double resolution_ms,
                              ib__host_wait *hw, ib_error *err);

/* ib_measure_latency, with or without the host-wait check after the timed
 * runs (check_host_wait; with exclude_launch it always runs: it prices the
 * launch overhead). The measurements made of latencies whose reports do
 * not show it (calibrate's points, pitfalls' inner rows, best's race)
 * skip it: 200 more runs each. */
ib_status ib__measure_latency(ib_workload *w, const ib_config *cfg, bool check_host_wait,
                              ib_latency_result *out, ib_error *err);

/* The trust warnings a set of timings raises by itself: high CV, few
 * samples, two clusters. */
unsigned ib__sample_warnings(const double *ms, const ib_stats *st);

/* The warm-up's rule: at least min_runs runs and min_ms, then until the
 * runs are steady (rules.h) when until_steady, or max_ms (the cap). */
typedef struct ib__warmup_rule {
    int64_t min_runs;
    double min_ms, max_ms;
    bool until_steady;
} ib__warmup_rule;

/* One warm-up run: *value the figure steadiness is judged on, *run_ms
 * its duration (what sizes the window, ib__steady_window). */
typedef ib_status (*ib__warmup_run_fn)(void *user, double *value, double *run_ms, ib_error *err);

/* Warms up with run(user) on clock under rule, checking cancel before each
 * run and reporting progress through pr: the loop every measurement's
 * warm-up is (a forward pass's runs, a generation's requests). */
ib_status ib__warm_up_loop(const ib__warmup_rule *rule, const ib__clock *clock, const volatile int *cancel,
                           ib__progress *pr, ib__warmup_run_fn run, void *user, int64_t *runs_done,
                           double *ms_spent, bool *steady, ib_error *err);

/* Warms up until cfg's count and time minimums are met and, when asked, the
 * timings are steady (rules.h), or the time cap is reached. Reports its
 * progress through pr. */
ib_status ib__warm_up(ib__runner *run, const ib_config *cfg, ib__progress *pr, int64_t *runs_done,
                      double *ms_spent, bool *steady, ib_error *err);

#endif
