/* Internals of the statistics across sessions, exposed for their tests. */
#ifndef IB_CORE_SESSIONS_H
#define IB_CORE_SESSIONS_H

#include "core/common.h"

/* How the statistics across sessions are named in every report. */
#define IB__SESSIONS_STATISTIC "geometric mean of session medians"
#define IB__SESSIONS_INTERVAL "t over the sessions' log medians, which hold both levels"
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
