/* Internals of the fleet's aggregate, exposed for their tests. */
#ifndef IB_CORE_FLEET_H
#define IB_CORE_FLEET_H

#include "base/common.h"

#include <pthread.h>

/* The runs w had ended by t_ms: linear between its marks, which is each
 * run counted by the share of it before t_ms when every run is marked. */
double ib__fleet_runs_by(const ib_fleet_worker *w, double t_ms);

/* A value and the number of runs it stands for. */
typedef struct ib__weighted {
    double v, w;
} ib__weighted;

/* The statistics of p[0..m) (m >= 1, sorted here) with weights: n is the
 * total weight, the percentiles the first value where the cumulative
 * weight reaches the share; no confidence intervals (NaN). */
void ib__fleet_weighted_stats(ib__weighted *p, size_t m, ib_stats *out);

/* Where a fleet's threads wait until every one has started: one missing
 * would leave the others at their barrier for ever. */
typedef struct ib__fleet_gate {
    pthread_mutex_t lock;
    pthread_cond_t opened;
    int state; /* 0 closed, 1 go, -1 abort: a worker could not start */
} ib__fleet_gate;
#define IB__FLEET_GATE_INIT                                                                                  \
    {                                                                                                        \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0                                               \
    }
/* Waits for the gate to open: true to go, false to abort. */
bool ib__fleet_gate_wait(ib__fleet_gate *g);
/* Opens it: state 1 go, -1 abort. */
void ib__fleet_gate_open(ib__fleet_gate *g, int state);

/* ib_fleet_aggregate for results of kind measured_as (out->measured):
 * IB_RESULT_SERVE judges the straggler by p99, the others by the median. */
ib_status ib__fleet_aggregate_as(ib_result_kind measured_as, ib_fleet_worker *workers, size_t n,
                                 const ib_fleet_worker *alone, ib_fleet_result *out, ib_error *err);

/* Who w is (name, UUID, PCI bus id, NUMA node) and its GPU's state over
 * the samples of env. */
void ib__fleet_worker_identity(const ib_env *env, ib_device_kind device, ib_fleet_worker *w);
void ib__fleet_worker_gpu_state(const ib_env *env, ib_fleet_worker *w);

/* Fills w's figures (who it is kept) from n requests served at one rate:
 * their scheduled arrivals and total latencies (ms from the barrier) and
 * the totals' statistics: batch 1, so its "runs" are requests and
 * items_per_s requests/s; the marks count completions. n 0: failed with
 * status and message. IB_ERR_NO_MEMORY when memory ran out. */
ib_status ib__fleet_worker_from_requests(const double *arrival_ms, const double *total_ms, size_t n,
                                         const ib_stats *total, ib_status status, const char *message,
                                         ib_fleet_worker *w);

#endif
