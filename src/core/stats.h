/* Statistics internals shared by the measurement loop and its rules. */
#ifndef IB_CORE_STATS_H
#define IB_CORE_STATS_H

#include "base/common.h"

/* The mean's bootstrap: resamples, fewer when resamples x n would pass the
 * draw budget, from a fixed seed; where even the minimum would pass it,
 * the bootstrap's normal form (stats.c). */
#define IB__MEAN_RESAMPLES 2000
#define IB__MEAN_MIN_RESAMPLES 200
#define IB__MEAN_BOOTSTRAP_DRAWS 2e7
#define IB__MEAN_BOOTSTRAP_SEED 0x6d65616eull

void ib__sort(double *x, size_t n);
/* The median of x[0..n), sorted in place. */
double ib__median_in_place(double *x, size_t n);
/* x[0] + ... + x[n-1]. */
double ib__sum(const double *x, size_t n);

/* 97.5% quantile of Student's t with df degrees of freedom. */
double ib__t975(size_t df);

/* The least-squares slope of y over x[0..n) and its 95% interval
 * (Student's t with n - 2 degrees of freedom over the residuals' spread):
 * what a curve shows of a trend, said from the data. IB_ERR_INVALID_ARG
 * below 3 points, with x all equal or with a value not finite. */
ib_status ib__slope_ci95(const double *x, const double *y, size_t n, double *slope, double ci95[2]);

/* 0-based ranks of the order statistics bounding the distribution-free 95%
 * confidence interval of the median of n samples. */
void ib__median_ci_ranks(size_t n, size_t *lo, size_t *hi);

/* Half-width of the median's 95% CI relative to the median (INFINITY when
 * it cannot be computed). */
double ib__median_ci_relative_halfwidth(const ib_stats *st);

/* Widens the 95% intervals of st that are narrower than +- resolution_ms
 * (the timer's resolution; NaN or 0: unknown, nothing done) to that, and
 * sets st->ci95_widened when it did. */
void ib__stats_widen_to_resolution(ib_stats *st, double resolution_ms);

/* The relative half-width of the median's 95% CI of x[0..n), widened to
 * the timer's resolution: what the adaptive stopping rule checks, without
 * the rest of the summary (INFINITY below IB_STATS_CI_MIN_N samples). */
double ib__median_precision(const double *x, size_t n, double resolution_ms);

/* True when the samples form two separated clusters (see stats.c). */
bool ib__is_bimodal(const double *x, size_t n);

#endif
