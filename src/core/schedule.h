/* Schedules made before a run (serve's, docs/serve.md, and a generative
 * model's, docs/serve-generative.md): arrival times from a seed, and each
 * request's lengths. Pure functions: the same seed gives the same schedule
 * on every machine. */
#ifndef IB_CORE_SCHEDULE_H
#define IB_CORE_SCHEDULE_H

#include "base/common.h"

/* n arrival times (ms from the start, the first at 0) of a Poisson process
 * at rate requests/s: exponential gaps of mean 1000/rate, drawn by inverse
 * transform from splitmix64 seeded with seed. */
void ib__serve_poisson(double rate, uint64_t seed, size_t n, double *arrivals_ms);

/* n arrival times at constant gaps of 1000/rate ms, the first at 0. */
void ib__serve_constant(double rate, size_t n, double *arrivals_ms);

/* n arrival times whose gaps are gamma distributed with shape burstiness
 * and mean 1000/rate ms (vLLM's --burstiness: scale 1000/(rate x shape)),
 * the first at 0. Below 1 burstier than Poisson, above 1 more regular;
 * exactly 1 is ib__serve_poisson's schedule. */
void ib__serve_gamma(double rate, double burstiness, uint64_t seed, size_t n, double *arrivals_ms);

/* n whole numbers drawn uniformly in [lo, hi] from splitmix64 seeded
 * with seed (lo == hi: all lo). */
void ib__schedule_uniform(int32_t lo, int32_t hi, uint64_t seed, size_t n, int32_t *out);

#endif
