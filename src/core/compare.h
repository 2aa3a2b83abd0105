/* Internals of the comparison of two samples, exposed for their tests. */
#ifndef IB_CORE_COMPARE_H
#define IB_CORE_COMPARE_H

#include "base/common.h"

/* Durations a latency sample can be, in ms: 1 ns to 10^9 ms (11.6 days).
 * Beyond them a value is not a measurement, and their bounds keep every
 * ratio of two samples finite: the bootstrap's percentiles interpolate
 * between ratios, and inf - inf would make them NaN (found by
 * fuzz_compare_json). */
#define IB__MIN_DURATION_MS 1e-6
#define IB__MAX_DURATION_MS 1e9

static inline bool ib__is_duration_ms(double ms)
{
    return ms >= IB__MIN_DURATION_MS && ms <= IB__MAX_DURATION_MS; /* false for NaN */
}

/* The Mann-Whitney U of A (pairs a > b, a tie counting 1/2) over two sorted
 * samples, and its two-sided p-value by the normal approximation with the
 * tie and continuity corrections (1 when every value is equal). */
void ib__mann_whitney(const double *sorted_a, size_t na, const double *sorted_b, size_t nb, double *u,
                      double *p);

/* The median (type 7) of one bootstrap resample of sorted[0..n): n draws
 * with replacement, drawn in O(1) (see compare.c). rng: splitmix64 state. */
double ib__bootstrap_median(const double *sorted, size_t n, uint64_t *rng);

/* The verdict of a confidence interval of the relative change. */
ib_change ib__change_verdict(const double ci[2], double threshold);

/* The 95% interval of kb/nb - ka/na, two independent proportions
 * (Newcombe's hybrid score interval, his method 10: from each side's
 * Wilson interval; Statistics in Medicine 17, 1998). NaN, NaN when a side
 * has no trial. */
void ib__proportion_difference_ci(size_t ka, size_t na, size_t kb, size_t nb, double ci[2]);

#endif
