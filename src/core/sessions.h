/* Internals of the statistics across sessions, exposed for their tests. */
#ifndef IB_CORE_SESSIONS_H
#define IB_CORE_SESSIONS_H

#include "base/common.h"

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

/* A side of a comparison: its sessions that measured, sessions[0..k) (k 0
 * or 1: one process), and all its runs pooled, runs[0..n). */
typedef struct ib__compare_side {
    const ib_session_sample *sessions;
    size_t k;
    const double *runs;
    size_t n;
} ib__compare_side;

/* Compares two sides: by their sessions (ib_compare_sessions) when each
 * has at least 2, else by their runs (ib_compare_samples), the interval
 * widened by the spread between the sessions of the side that has 2 or
 * more (ib_compare_widen); what ib_compare_files does for latency
 * results, for any result with sessions. */
ib_status ib__compare_sides(const ib__compare_side *a, const ib__compare_side *b, double threshold,
                            ib_comparison *out, ib_error *err);

/* The mean and sample sd (0 for one) of the logs of v[0..k), each > 0,
 * k >= 1: a set of sessions' log medians, or one value a session. */
void ib__log_mean_sd(const double *v, size_t k, double *mean, double *sd);

/* The 95% half-width, on the log scale, of the difference of two means of
 * ka and kb log values (each at least 2) of sample sds sd_a and sd_b:
 * Welch's t, its Welch-Satterthwaite degrees of freedom rounded down (a
 * little wider, never narrower). */
double ib__welch_half(double sd_a, size_t ka, double sd_b, size_t kb);

/* The 95% half-width, on the log scale, of a change's between-session
 * part for a spread between_sd known with df degrees of freedom (0:
 * exactly: the normal quantile) and sides of ka and kb sessions (0 or 1:
 * one): t(0.975, df) between_sd sqrt(1/ka + 1/kb), what ib_compare_widen
 * adds to a comparison of runs. */
double ib__between_half(double between_sd, size_t df, size_t ka, size_t kb);

#endif
