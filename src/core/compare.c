/* Is B really faster or slower than A? The relative change of the median,
 * its bootstrap confidence interval, the Mann-Whitney U test, and a verdict
 * that says "no change" only when the interval shows it (docs/compare.md). */
#include "core/compare.h"
#include "base/numeric.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TWO_PI 6.283185307179586

const char *ib_change_name(ib_change change)
{
    switch (change) {
    case IB_CHANGE_NONE: return "no change";
    case IB_CHANGE_FASTER: return "faster";
    case IB_CHANGE_SLOWER: return "slower";
    case IB_CHANGE_INCONCLUSIVE: return "inconclusive";
    }
    return "inconclusive";
}

void ib__mann_whitney(const double *sorted_a, size_t na, const double *sorted_b, size_t nb, double *u,
                      double *p)
{
    /* Walk both samples in merged order, one group of equal values at a
     * time: the group spans ranks rank+1 .. rank+t and each member gets
     * their average, rank + (t+1)/2. Each group adds t^3 - t to the tie
     * correction of the variance. */
    double rank_sum_a = 0, ties = 0;
    size_t i = 0, j = 0, rank = 0;
    while (i < na || j < nb) {
        double v = j == nb || (i < na && sorted_a[i] <= sorted_b[j]) ? sorted_a[i] : sorted_b[j];
        size_t ca = 0, cb = 0;
        for (; i < na && sorted_a[i] == v; i++) ca++;
        for (; j < nb && sorted_b[j] == v; j++) cb++;
        double t = (double)(ca + cb);
        rank_sum_a += (double)ca * ((double)rank + (t + 1) / 2);
        ties += t * t * t - t;
        rank += ca + cb;
    }
    double n1 = (double)na, n2 = (double)nb, n = n1 + n2;
    *u = rank_sum_a - n1 * (n1 + 1) / 2;
    /* Under "one distribution", U has mean n1 n2 / 2 and variance
     * n1 n2 / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1))). The continuity
     * correction takes 1/2 off |U - mean| (U moves in steps of 1/2 or 1). */
    double var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
    double dist = fabs(*u - n1 * n2 / 2) - 0.5;
    /* Two-sided: 2 (1 - Phi(z)) = erfc(z / sqrt 2), z = dist / sqrt(var). */
    *p = var > 0 && dist > 0 ? erfc(dist / sqrt(2 * var)) : 1.0;
}

/* Uniform in (0, 1), never 0 or 1: the variates below take logarithms. */
static double uniform_open(uint64_t *rng) { return ((double)(ib__splitmix64(rng) >> 11) + 0.5) * 0x1p-53; }

static double normal(uint64_t *rng) /* Box-Muller */
{
    double r = sqrt(-2 * log(uniform_open(rng)));
    return r * cos(TWO_PI * uniform_open(rng));
}

/* Gamma(shape, 1) for shape >= 1: Marsaglia & Tsang (2000), which accepts
 * over 95% of its candidates at every shape. */
static double gamma_variate(double shape, uint64_t *rng)
{
    double d = shape - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = normal(rng), cx = c * x;
        if (cx <= -1) continue;
        double v = (1 + cx) * (1 + cx) * (1 + cx);
        if (log(uniform_open(rng)) < 0.5 * x * x + d - d * v + 3 * d * log1p(cx)) return d * v;
    }
}

static double beta_variate(double a, double b, uint64_t *rng)
{
    double x = gamma_variate(a, rng), y = gamma_variate(b, rng);
    return x / (x + y);
}

static size_t index_of(double u, size_t n)
{
    size_t i = (size_t)(u * (double)n);
    return i < n ? i : n - 1;
}

double ib__bootstrap_median(const double *sorted, size_t n, uint64_t *rng)
{
    /* A draw with replacement is sorted[floor(n U)], U uniform in (0,1);
     * floor is monotone, so the k-th smallest of n draws is
     * sorted[floor(n U(k))], U(k) the k-th smallest of n uniforms, which is
     * Beta(k, n + 1 - k). Drawing U(k) directly gives exactly the
     * distribution of resampling all n values, at O(1) instead of O(n) a
     * resample: a million samples cost what six do. */
    size_t k = (n + 1) / 2; /* the lower middle, 1-based */
    double uk = beta_variate((double)k, (double)(n + 1 - k), rng);
    double lower = sorted[index_of(uk, n)];
    if (n % 2) return lower;
    /* Even n: type 7 averages it with the next one, the least of the n - k
     * uniforms above U(k): U(k) + (1 - U(k)) (1 - V^(1/(n-k))). */
    double above = -expm1(log(uniform_open(rng)) / (double)(n - k));
    return (lower + sorted[index_of(uk + (1 - uk) * above, n)]) / 2;
}

ib_change ib__change_verdict(const double ci[2], double threshold)
{
    if (ci[0] > threshold) return IB_CHANGE_SLOWER;
    if (ci[1] < -threshold) return IB_CHANGE_FASTER;
    if (ci[0] >= -threshold && ci[1] <= threshold) return IB_CHANGE_NONE;
    return IB_CHANGE_INCONCLUSIVE;
}

/* The percentile bootstrap of median(B) / median(A) - 1: A and B resampled
 * independently, IB_COMPARE_RESAMPLES times from IB_COMPARE_SEED. */
static ib_status bootstrap_ci(const double *sorted_a, size_t na, const double *sorted_b, size_t nb,
                              double ci[2], ib_error *err)
{
    double *change = malloc(IB_COMPARE_RESAMPLES * sizeof *change);
    IB_FAIL_IF(!change, err, IB_ERR_NO_MEMORY, "out of memory for the bootstrap");
    uint64_t rng = IB_COMPARE_SEED;
    for (size_t r = 0; r < IB_COMPARE_RESAMPLES; r++) {
        double ma = ib__bootstrap_median(sorted_a, na, &rng);
        change[r] = ib__bootstrap_median(sorted_b, nb, &rng) / ma - 1;
    }
    ib__sort(change, IB_COMPARE_RESAMPLES);
    ci[0] = ib_quantile_sorted(change, IB_COMPARE_RESAMPLES, 0.025);
    ci[1] = ib_quantile_sorted(change, IB_COMPARE_RESAMPLES, 0.975);
    free(change);
    return IB_OK;
}

static ib_status check_sample(const double *x, size_t n, const char *which, ib_error *err)
{
    IB_FAIL_IF(!x || n < IB_COMPARE_MIN_SAMPLES, err, IB_ERR_INVALID_ARG,
               "%s has %zu samples: comparing needs at least %d", which, x ? n : 0, IB_COMPARE_MIN_SAMPLES);
    for (size_t i = 0; i < n; i++)
        IB_FAIL_IF(!ib__is_duration_ms(x[i]), err, IB_ERR_INVALID_ARG,
                   "%s sample %zu is not a duration (1e-6 to 1e9 ms)", which, i);
    return IB_OK;
}

static double *sorted_copy(const double *x, size_t n)
{
    double *s = malloc(n * sizeof *s);
    if (!s) return NULL;
    memcpy(s, x, n * sizeof *s);
    ib__sort(s, n);
    return s;
}

/* Everything that needs the sorted samples: the test and the interval. */
static ib_status compare_sorted(const double *a, size_t na, const double *b, size_t nb, ib_comparison *out,
                                ib_error *err)
{
    double *sa = sorted_copy(a, na), *sb = sorted_copy(b, nb);
    ib_status st = IB_OK;
    if (!sa || !sb) {
        st = ib__fail(err, IB_ERR_NO_MEMORY, "out of memory comparing %zu and %zu samples", na, nb);
    } else {
        ib__mann_whitney(sa, na, sb, nb, &out->mann_whitney_u, &out->mann_whitney_p);
        st = bootstrap_ci(sa, na, sb, nb, out->change_ci95, err);
    }
    free(sa);
    free(sb);
    return st;
}

ib_status ib_compare_samples(const double *a, size_t na, const double *b, size_t nb, double threshold,
                             ib_comparison *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    IB_TRY(check_sample(a, na, "the baseline (A)", err));
    IB_TRY(check_sample(b, nb, "the candidate (B)", err));
    IB_FAIL_IF(!(threshold > 0 && threshold < 1), err, IB_ERR_INVALID_ARG,
               "the threshold must be a fraction above 0 and below 1");
    IB_FAIL_IF(ib_stats_compute(a, na, &out->a) != IB_OK || ib_stats_compute(b, nb, &out->b) != IB_OK, err,
               IB_ERR_NO_MEMORY, "out of memory comparing %zu and %zu samples", na, nb);
    out->change = out->b.p50 / out->a.p50 - 1;
    out->threshold = threshold;
    IB_TRY(compare_sorted(a, na, b, nb, out, err));
    out->verdict = ib__change_verdict(out->change_ci95, threshold);
    return IB_OK;
}
