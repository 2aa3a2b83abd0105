/* Internals of serve (latency under load), exposed for the unit tests: the
 * schedules, the dynamic batcher's decision and the binomial tail of the
 * early-stopping rule are pure functions. */
#ifndef IB_CORE_SERVE_H
#define IB_CORE_SERVE_H

#include "base/common.h"
#include "core/schedule.h"

/* Requests one rate may schedule: 56 bytes of records each, so 56 MB. */
#define IB__SERVE_MAX_REQUESTS 1000000

/* P(X <= k) for X ~ Binomial(n, q), summed term by term in log space
 * (lgamma), so exact to rounding for n up to millions. */
double ib__binomial_cdf(int64_t k, int64_t n, double q);

/* What the dynamic batcher does next, given the requests waiting or still
 * to come (arrivals_ms[0..n_pending), sorted) and the time the instance is
 * free: it starts once max_batch requests have arrived, or max_delay_ms
 * after the first one arrived, whichever is first (never before it is
 * free), with every request arrived by then, up to max_batch. */
typedef struct ib__batch_decision {
    double dispatch_ms;
    size_t count;
} ib__batch_decision;

ib__batch_decision ib__batcher_decide(const double *arrivals_ms, size_t n_pending, double free_ms,
                                      size_t max_batch, double max_delay_ms);

/* What a search goes on after a rate: alone, the rate's own point; in a
 * fleet, the devices' together, the same on every device. */
typedef struct ib__serve_verdict {
    bool met;          /* the target was met (a fleet: by every device) */
    bool compute_over; /* the run time alone passes the target (a fleet: on some device) */
    bool stop;         /* a failure (a fleet: on some device): no next rate */
} ib__serve_verdict;

/* How a fleet's devices (src/core/fleet_serve.c) meet while each serves:
 * every device calls them in the same order, so each may wait for all
 * (a barrier). A device that fails still calls the next one with its
 * status, so that none waits for it in vain. */
typedef struct ib__serve_hooks {
    void *user;
    /* After warm-up (st: how it went; capacity NULL when it did not get
     * that far): may set *capacity, requests/s, to the fleet's, so that
     * every device's search starts at one rate. false: do not serve. */
    bool (*warmed)(void *user, ib_status st, double *capacity);
    /* Right before a rate's first request: its schedule's origin follows. */
    void (*before_rate)(void *user);
    /* After a rate (st: how it went): its point and the n requests
     * completed, their scheduled arrival and total latency (ms from the
     * origin, in schedule order). Returns the fleet's verdict. */
    ib__serve_verdict (*after_rate)(void *user, ib_status st, const ib_serve_point *pt,
                                    const double *arrival_ms, const double *total_ms, size_t n);
} ib__serve_hooks;

/* What explains compute under load (serve_explain.c, docs/serve.md): the
 * rule, a pure function of given numbers. Compute within AS_WARM of the
 * service time needs no explanation; else a cause accounts for it when
 * it accounts for EXPLAINS or more of the excess in ms: the clock, the
 * service time at the load's SM clock (NaN clocks: not judged), the
 * wake-up, its median lateness. Where neither does, a run host-bound in
 * warm-up (host_wait_share over IB__HOST_BOUND_SHARE; NaN: not checked)
 * is said to be the cause. */
#define IB__SERVE_AS_WARM 0.05
#define IB__SERVE_EXPLAINS 0.5
void ib__serve_explain(double service_ms, double compute_p50_ms, double warmup_sm_mhz, double load_sm_mhz,
                       double wakeup_p50_ms, double host_wait_share, ib_serve_explanation *out);

/* The median SM clock of the busy or idle samples (known clock) whose time
 * lies in [from_ms, to_ms]; NaN when none does. */
double ib__serve_sm_clock_median(const ib_gpu_sample *samples, size_t n, double from_ms, double to_ms);

/* ib_measure_serve_instances with a fleet's hooks (NULL: alone). */
ib_status ib__measure_serve_hooked(ib_workload *const *ws, size_t n_instances, const ib_serve_config *cfg,
                                   const ib__serve_hooks *hooks, ib_serve_result *out, ib_error *err);

#endif
