/* Statistics internals shared by the measurement loop and its rules. */
#ifndef IB_CORE_STATS_H
#define IB_CORE_STATS_H

#include "core/common.h"

void ib__sort(double *x, size_t n);

/* 97.5% quantile of Student's t with df degrees of freedom. */
double ib__t975(size_t df);

/* 0-based ranks of the order statistics bounding the distribution-free 95%
 * confidence interval of the median of n samples. */
void ib__median_ci_ranks(size_t n, size_t *lo, size_t *hi);

/* Half-width of the median's 95% CI relative to the median (INFINITY when
 * it cannot be computed). */
double ib__median_ci_relative_halfwidth(const ib_stats *st);

/* True when the samples form two separated clusters (see stats.c). */
bool ib__is_bimodal(const double *x, size_t n);

#endif
