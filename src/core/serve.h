/* Internals of serve (latency under load), exposed for the unit tests: the
 * schedules, the dynamic batcher's decision and the binomial tail of the
 * early-stopping rule are pure functions. */
#ifndef IB_CORE_SERVE_H
#define IB_CORE_SERVE_H

#include "core/common.h"

/* Requests one rate may schedule: 56 bytes of records each, so 56 MB. */
#define IB__SERVE_MAX_REQUESTS 1000000

/* n arrival times (ms from the start, the first at 0) of a Poisson process
 * at rate requests/s: exponential gaps of mean 1000/rate, drawn by inverse
 * transform from splitmix64 seeded with seed. */
void ib__serve_poisson(double rate, uint64_t seed, size_t n, double *arrivals_ms);

/* n arrival times at constant gaps of 1000/rate ms, the first at 0. */
void ib__serve_constant(double rate, size_t n, double *arrivals_ms);

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

#endif
