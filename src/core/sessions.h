/* Internals of the statistics across sessions, exposed for their tests. */
#ifndef IB_CORE_SESSIONS_H
#define IB_CORE_SESSIONS_H

#include "core/common.h"

/* One draw of the two-level bootstrap of the median of session medians:
 * k sessions drawn with replacement from sorted[0..k) (each session's
 * samples sorted), then the median of a resample of the runs of each
 * (ib__bootstrap_median), then the median of those k values. scratch holds
 * k doubles. rng: splitmix64 state. */
double ib__sessions_resample(const ib_session_sample *sorted, size_t k, double *scratch, uint64_t *rng);

/* The 95% percentile interval of the median of session medians from
 * `resamples` two-level draws starting at seed (sorted as above). */
ib_status ib__sessions_ci(const ib_session_sample *sorted, size_t k, size_t resamples, uint64_t seed,
                          double ci[2], ib_error *err);

/* The one-way random-effects ANOVA of the runs: the between- and
 * within-session variance components (method of moments, unbalanced
 * sessions: n0 = (N - sum n_i^2 / N) / (k - 1)); the between one is 0 when
 * the estimate is negative, both 0 where undefined (k < 2 or N <= k). */
void ib__sessions_variance(const ib_session_sample *s, size_t k, double *between_var, double *within_var);

/* The primary samples of f's sessions that measured, *k of them (not
 * owned: they point into f); the caller frees the array. NULL when memory
 * ran out. */
ib_session_sample *ib__measured_sessions(const ib_latency_file *f, size_t *k);

#endif
