/* Descriptive statistics of timing samples, with the confidence intervals
 * the report and the adaptive stopping rule rely on. */
#include "core/stats.h"
#include "base/numeric.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ib__sort(double *x, size_t n) { qsort(x, n, sizeof *x, cmp_double); }

double ib__median_in_place(double *x, size_t n)
{
    ib__sort(x, n);
    return ib_quantile_sorted(x, n, 0.5);
}

double ib__sum(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}

double ib_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (n == 0) return NAN;
    if (q <= 0) return sorted[0];
    if (q >= 1) return sorted[n - 1];
    double h = (double)(n - 1) * q; /* type 7: h = (n-1)q, 0-based */
    size_t lo = (size_t)floor(h);
    double frac = h - (double)lo;
    if (lo + 1 >= n) return sorted[n - 1];
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* Two-sided 97.5% quantile of Student's t with df degrees of freedom. Exact
 * table values up to 30, then the Cornish-Fisher expansion, whose error is
 * below 1e-4 there. */
double ib__t975(size_t df)
{
    static const double table[31] = { NAN,    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646,
                                      2.3060, 2.2622,  2.2281, 2.2010, 2.1788, 2.1604, 2.1448, 2.1314,
                                      2.1199, 2.1098,  2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687,
                                      2.0639, 2.0595,  2.0555, 2.0518, 2.0484, 2.0452, 2.0423 };
    if (df == 0) return NAN;
    if (df <= 30) return table[df];
    const double z = 1.959963984540054;
    double v = (double)df, z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
    return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
           (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

ib_status ib__slope_ci95(const double *x, const double *y, size_t n, double *slope, double ci95[2])
{
    if (n < 3) return IB_ERR_INVALID_ARG;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) return IB_ERR_INVALID_ARG;
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (!(sxx > 0)) return IB_ERR_INVALID_ARG;
    double b = sxy / sxx, sse = 0;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - my - b * (x[i] - mx);
        sse += e * e;
    }
    double half = ib__t975(n - 2) * sqrt(sse / (double)(n - 2) / sxx);
    *slope = b;
    ci95[0] = b - half;
    ci95[1] = b + half;
    return IB_OK;
}

/* log of the binomial probability mass C(n,k) / 2^n. */
static double log_binom_half(size_t n, size_t k)
{
    return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) - (double)n * log(2.0);
}

void ib__median_ci_ranks(size_t n, size_t *lo, size_t *hi)
{
    /* With order statistics x(1) <= ... <= x(n), the interval [x(j),
     * x(n-j+1)] holds the true median with probability 1 - 2 P(B <= j-1),
     * B ~ Binomial(n, 1/2). Take the largest j whose coverage is >= 95%.
     * Below n = 6 no j reaches 95%: the whole range is returned. */
    size_t best = 0;
    double cdf = 0;
    for (size_t j = 1; j <= n / 2; j++) {
        cdf += exp(log_binom_half(n, j - 1));
        if (cdf > 0.025) break;
        best = j;
    }
    if (best == 0) {
        *lo = 0;
        *hi = n ? n - 1 : 0;
        return;
    }
    *lo = best - 1; /* 0-based */
    *hi = n - best;
}

/* The tail share each side of the expanded percentile interval
 * (Hesterberg 2015): Phi(-sqrt(n/(n-1)) t(0.975, n-1)) instead of 2.5%.
 * The plain percentile interval is too narrow for small n (it uses the
 * normal quantile and divides the spread by n, not n-1); this widens it
 * like Student's t does and tends to 2.5% as n grows. */
static double expanded_tail(size_t n)
{
    double t = sqrt((double)n / (double)(n - 1)) * ib__t975(n - 1);
    return 0.5 * erfc(t / sqrt(2.0));
}

/* Expanded percentile bootstrap of the mean: quantiles of the means of
 * resamples drawn with replacement. Each resample mean lies in [min, max],
 * so the interval does too: never below zero for durations, and longer on
 * the side of a right tail. Fewer resamples for large samples, to bound the
 * work (their interval is narrow anyway). */
static ib_status bootstrap_mean_ci(const double *x, size_t n, double ci[2])
{
    size_t resamples = (size_t)fmin(IB__MEAN_RESAMPLES, IB__MEAN_BOOTSTRAP_DRAWS / (double)n);
    double *means = malloc(resamples * sizeof *means);
    if (!means) return IB_ERR_NO_MEMORY;
    uint64_t rng = IB__MEAN_BOOTSTRAP_SEED;
    for (size_t r = 0; r < resamples; r++) {
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
            /* The top 53 bits as a fraction in [0, 1), scaled: no modulo bias. */
            size_t k = (size_t)((double)(ib__splitmix64(&rng) >> 11) * 0x1p-53 * (double)n);
            sum += x[k < n ? k : n - 1];
        }
        means[r] = sum / (double)n;
    }
    ib__sort(means, resamples);
    double tail = expanded_tail(n);
    ci[0] = ib_quantile_sorted(means, resamples, tail);
    ci[1] = ib_quantile_sorted(means, resamples, 1 - tail);
    free(means);
    return IB_OK;
}

/* The mean's 95% CI from sorted[0..n): the bootstrap while the draw budget
 * affords its minimum of resamples. Beyond (100,000 samples), the resample
 * means are normal (central limit) to far within their own resampling
 * noise, and in normal form the expanded percentile interval is exactly
 * Student's t: mean +- t(0.975, n-1) s / sqrt(n), since its quantile
 * sqrt(n/(n-1)) t times the resamples' spread sqrt((n-1)/n) s / sqrt(n) is
 * that. It is kept within [min, max], as every resample mean is. */
static ib_status mean_ci(const double *sorted, size_t n, double mean, double std, double ci[2])
{
    if (n < IB_STATS_CI_MIN_N) {
        ci[0] = ci[1] = NAN;
        return IB_OK;
    }
    if ((double)n * IB__MEAN_MIN_RESAMPLES <= IB__MEAN_BOOTSTRAP_DRAWS)
        return bootstrap_mean_ci(sorted, n, ci);
    double half = ib__t975(n - 1) * std / sqrt((double)n);
    ci[0] = fmax(sorted[0], mean - half);
    ci[1] = fmin(sorted[n - 1], mean + half);
    return IB_OK;
}

/* [x(lo), x(hi)] of sorted[0..n): NaN below IB_STATS_CI_MIN_N samples. */
static void median_ci(const double *sorted, size_t n, double ci[2])
{
    if (n < IB_STATS_CI_MIN_N) {
        ci[0] = ci[1] = NAN;
        return;
    }
    size_t lo, hi;
    ib__median_ci_ranks(n, &lo, &hi);
    ci[0] = sorted[lo];
    ci[1] = sorted[hi];
}

ib_status ib_stats_compute(const double *x, size_t n, ib_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0 || x == NULL) return IB_ERR_INVALID_ARG;
    double *s = malloc(n * sizeof *s);
    if (!s) return IB_ERR_NO_MEMORY;
    memcpy(s, x, n * sizeof *s);
    ib__sort(s, n);

    /* Welford: stable for long runs of nearly equal values. */
    double mean = 0, m2 = 0;
    for (size_t i = 0; i < n; i++) {
        double d = s[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * (s[i] - mean);
    }
    out->n = n;
    out->mean = mean;
    out->std = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0;
    out->min = s[0];
    out->max = s[n - 1];
    out->p50 = ib_quantile_sorted(s, n, 0.50);
    out->p90 = ib_quantile_sorted(s, n, 0.90);
    out->p95 = ib_quantile_sorted(s, n, 0.95);
    out->p99 = ib_quantile_sorted(s, n, 0.99);
    out->p999 = ib_quantile_sorted(s, n, 0.999);
    out->cv = mean != 0 ? out->std / mean : 0;

    median_ci(s, n, out->ci95_median);
    ib_status st = mean_ci(s, n, mean, out->std, out->ci95_mean);
    free(s);
    return st;
}

/* Widens ci to +- resolution around its centre when it is narrower: one
 * reading of a timer can be off by a step either way, so no interval on
 * its readings is tighter. A duration's interval stops at zero. */
static bool widen(double ci[2], double resolution)
{
    if (!isfinite(ci[0]) || !isfinite(ci[1]) || !(resolution > 0)) return false;
    if ((ci[1] - ci[0]) / 2 >= resolution) return false;
    double centre = (ci[0] + ci[1]) / 2;
    ci[0] = fmax(0, centre - resolution);
    ci[1] = centre + resolution;
    return true;
}

void ib__stats_widen_to_resolution(ib_stats *st, double resolution_ms)
{
    bool mean = widen(st->ci95_mean, resolution_ms);
    bool median = widen(st->ci95_median, resolution_ms);
    st->ci95_widened = mean || median;
}

double ib__median_precision(const double *x, size_t n, double resolution_ms)
{
    if (n < IB_STATS_CI_MIN_N) return INFINITY;
    double *s = malloc(n * sizeof *s);
    if (!s) return INFINITY;
    memcpy(s, x, n * sizeof *s);
    ib__sort(s, n);
    ib_stats st = { .n = n, .p50 = ib_quantile_sorted(s, n, 0.5), .ci95_mean = { NAN, NAN } };
    median_ci(s, n, st.ci95_median);
    free(s);
    ib__stats_widen_to_resolution(&st, resolution_ms);
    return ib__median_ci_relative_halfwidth(&st);
}

double ib__median_ci_relative_halfwidth(const ib_stats *st)
{
    if (st->n < IB_STATS_CI_MIN_N || st->p50 <= 0) return INFINITY;
    return (st->ci95_median[1] - st->ci95_median[0]) / 2 / st->p50;
}

bool ib__is_bimodal(const double *x, size_t n)
{
    /* Two clusters, each holding at least 10% of the samples, separated by a
     * gap wider than either cluster's own 10-90% spread and wider than 5% of
     * the median. Long tails are not bimodal: their outer part holds less
     * than 10% or has no such gap. */
    if (n < 20) return false;
    double *s = malloc(n * sizeof *s);
    if (!s) return false;
    memcpy(s, x, n * sizeof *s);
    ib__sort(s, n);
    double median = ib_quantile_sorted(s, n, 0.5);
    bool bimodal = false;
    for (size_t k = n / 10; k <= n - n / 10 && !bimodal; k++) {
        double gap = s[k] - s[k - 1];
        if (gap <= 0.05 * median) continue;
        double left = ib_quantile_sorted(s, k, 0.9) - ib_quantile_sorted(s, k, 0.1);
        double right = ib_quantile_sorted(s + k, n - k, 0.9) - ib_quantile_sorted(s + k, n - k, 0.1);
        bimodal = gap > left && gap > right;
    }
    free(s);
    return bimodal;
}
