/* Statistics against values computed by hand (and by Python's exact
 * binomial for the median's interval ranks). */
#include "check.h"
#include "core/stats.h"
#include "timer/timer.h"

#include <math.h>
#include <stdlib.h>

static void test_one_to_ten(void)
{
    /* Deliberately unsorted: the summary must not depend on order. */
    const double x[10] = { 7, 3, 10, 1, 5, 2, 9, 4, 8, 6 };
    ib_stats st;
    CHECK(ib_stats_compute(x, 10, &st) == IB_OK);
    CHECK_EQ_INT(st.n, 10);
    CHECK_NEAR(st.mean, 5.5, 1e-12);
    CHECK_NEAR(st.std, 3.0276503540974917, 1e-12); /* sqrt(82.5 / 9) */
    CHECK_NEAR(st.min, 1, 0);
    CHECK_NEAR(st.max, 10, 0);
    CHECK_NEAR(st.p50, 5.5, 1e-12);
    CHECK_NEAR(st.p90, 9.1, 1e-12); /* h = 9*0.9 = 8.1 */
    CHECK_NEAR(st.p95, 9.55, 1e-12);
    CHECK_NEAR(st.p99, 9.91, 1e-12);
    CHECK_NEAR(st.p999, 9.991, 1e-12);
    CHECK_NEAR(st.cv, 3.0276503540974917 / 5.5, 1e-12);
    /* The expanded percentile bootstrap from its fixed seed: 3.3 and 7.7,
     * close to Student's t, 5.5 -+ 2.2622 * 3.02765 / sqrt(10) = [3.334,
     * 7.666], as it should be on symmetric data. */
    CHECK_NEAR(st.ci95_mean[0], 3.3, 1e-12);
    CHECK_NEAR(st.ci95_mean[1], 7.7, 1e-12);
    CHECK(!st.ci95_widened);
    /* P(B<=1) = 11/1024 <= 0.025 < P(B<=2) = 56/1024: x(2)..x(9). */
    CHECK_NEAR(st.ci95_median[0], 2, 0);
    CHECK_NEAR(st.ci95_median[1], 9, 0);
}

static void test_single_and_constant(void)
{
    ib_stats st;
    const double one = 4.25;
    CHECK(ib_stats_compute(&one, 1, &st) == IB_OK);
    CHECK_NEAR(st.p50, 4.25, 0);
    CHECK_NEAR(st.std, 0, 0);
    CHECK_NEAR(st.p999, 4.25, 0);

    double same[50];
    for (int i = 0; i < 50; i++) same[i] = 2.0;
    CHECK(ib_stats_compute(same, 50, &st) == IB_OK);
    CHECK_NEAR(st.std, 0, 1e-15);
    CHECK_NEAR(st.cv, 0, 1e-15);
    CHECK_NEAR(st.ci95_median[0], 2.0, 0);

    CHECK(ib_stats_compute(same, 0, &st) == IB_ERR_INVALID_ARG);
}

static void test_median_ranks(void)
{
    /* Expected ranks from the exact binomial (Python math.comb). */
    static const struct {
        size_t n, lo, hi;
    } cases[] = {
        { 6, 0, 5 }, { 10, 1, 8 }, { 30, 9, 20 }, { 300, 132, 167 }, { 1000, 468, 531 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t lo, hi;
        ib__median_ci_ranks(cases[i].n, &lo, &hi);
        CHECK_EQ_INT(lo, cases[i].lo);
        CHECK_EQ_INT(hi, cases[i].hi);
    }
    size_t lo, hi;
    ib__median_ci_ranks(5, &lo, &hi); /* too few for 95%: whole range */
    CHECK_EQ_INT(lo, 0);
    CHECK_EQ_INT(hi, 4);
}

static void test_t_quantile(void)
{
    CHECK_NEAR(ib__t975(1), 12.7062, 1e-4);
    CHECK_NEAR(ib__t975(30), 2.0423, 1e-4);
    /* The expansion's first value, to its stated accuracy: its last term
     * (1.7e-4 here) with the wrong sign fails. */
    CHECK_NEAR(ib__t975(31), 2.039513, 2e-5);
    CHECK_NEAR(ib__t975(40), 2.0211, 2e-4);
    /* The expansion's own error is 1.7e-6 at df 31 and 6e-7 at 40 (against
     * t(0.975) = 2.0395134464, 2.0210753555): each of its terms counts. */
    CHECK_NEAR(ib__t975(31), 2.0395134464, 2.5e-6);
    CHECK_NEAR(ib__t975(40), 2.0210753555, 1e-6);
    CHECK_NEAR(ib__t975(120), 1.9799, 2e-4);
    CHECK_NEAR(ib__t975(100000), 1.95997, 1e-4);
}

static void test_quantile_interpolation(void)
{
    const double s[4] = { 10, 20, 30, 40 };
    CHECK_NEAR(ib_quantile_sorted(s, 4, 0.0), 10, 0);
    CHECK_NEAR(ib_quantile_sorted(s, 4, 1.0), 40, 0);
    CHECK_NEAR(ib_quantile_sorted(s, 4, 0.5), 25, 1e-12);
    CHECK_NEAR(ib_quantile_sorted(s, 4, 0.25), 17.5, 1e-12); /* h = 0.75 */
}

static void test_bimodal(void)
{
    double x[200];
    for (int i = 0; i < 200; i++) x[i] = 1.0 + 0.001 * (i % 10); /* one cluster */
    CHECK(!ib__is_bimodal(x, 200));
    for (int i = 0; i < 60; i++) x[i] = 2.0 + 0.001 * (i % 10); /* 30% at 2 ms */
    CHECK(ib__is_bimodal(x, 200));
    for (int i = 0; i < 200; i++) x[i] = 1.0 + 0.001 * (i % 10);
    for (int i = 0; i < 5; i++) x[i] = 5.0; /* a tail of 2.5% is not a mode */
    CHECK(!ib__is_bimodal(x, 200));
}

/* Below 6 samples no interval reaches 95%: both are NaN (null in JSON,
 * words in the text); from 6 both exist, the median's being the range. */
static void test_intervals_need_six(void)
{
    const double x[6] = { 4, 1, 6, 2, 5, 3 };
    static const size_t sizes[] = { 1, 2, 5 };
    ib_stats st;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        CHECK(ib_stats_compute(x, sizes[i], &st) == IB_OK);
        CHECK(isnan(st.ci95_mean[0]) && isnan(st.ci95_mean[1]));
        CHECK(isnan(st.ci95_median[0]) && isnan(st.ci95_median[1]));
        CHECK(isinf(ib__median_ci_relative_halfwidth(&st)));
        CHECK(isinf(ib__median_precision(x, sizes[i], 0)));
    }
    CHECK(ib_stats_compute(x, 6, &st) == IB_OK);
    CHECK_NEAR(st.ci95_median[0], 1, 0);
    CHECK_NEAR(st.ci95_median[1], 6, 0);
    CHECK(st.ci95_mean[0] >= 1 && st.ci95_mean[0] < 3.5 && st.ci95_mean[1] > 3.5 && st.ci95_mean[1] <= 6);
    CHECK_NEAR(ib__median_precision(x, 6, 0), 2.5 / 3.5, 1e-12);
}

/* Positive, heavily right-skewed, few samples: Student's t goes below zero
 * (17.5 - 2.5706 * 40.42 / sqrt(6) = -24.9), the bootstrap stays within
 * the data, longer on the side of the tail. */
static void test_mean_ci_positive_under_skew(void)
{
    const double x[6] = { 1, 1, 100, 1, 1, 1 };
    ib_stats st;
    CHECK(ib_stats_compute(x, 6, &st) == IB_OK);
    CHECK(st.mean - ib__t975(5) * st.std / sqrt(6.0) < 0);
    /* 5/6^6 = 33% of resamples miss the 100: the low end is 1. The high end
     * is four 100s of six (P(k <= 4) = 99.93% passes the 99.76% quantile
     * of the expanded interval at n = 6): (2 + 400) / 6 = 67. */
    CHECK_NEAR(st.ci95_mean[0], 1, 1e-12);
    CHECK_NEAR(st.ci95_mean[1], 67, 1e-12);

    const double tail[8] = { 0.9, 1.1, 1.0, 250, 1.2, 0.95, 1.05, 1.0 };
    CHECK(ib_stats_compute(tail, 8, &st) == IB_OK);
    CHECK(st.ci95_mean[0] >= 0.9 && st.ci95_mean[0] < st.mean && st.ci95_mean[1] <= 250);
    CHECK(st.ci95_mean[1] - st.mean > st.mean - st.ci95_mean[0]);

    ib_stats again; /* a fixed seed: the same samples, the same interval */
    CHECK(ib_stats_compute(tail, 8, &again) == IB_OK);
    CHECK_NEAR(again.ci95_mean[0], st.ci95_mean[0], 0);
    CHECK_NEAR(again.ci95_mean[1], st.ci95_mean[1], 0);
}

/* From 100,000 samples the bootstrap's normal form (Student's t) is used,
 * kept within [min, max] as the resample means are: one huge outlier among
 * 200,000 tiny positive samples would put t's interval below zero. */
static void test_mean_ci_large_n(void)
{
    size_t n = 200000;
    double *x = malloc(n * sizeof *x);
    if (!x) return;
    for (size_t i = 0; i < n; i++) x[i] = 1.0 + 0.001 * (double)(i % 100);
    ib_stats st;
    CHECK(ib_stats_compute(x, n, &st) == IB_OK);
    double half = ib__t975(n - 1) * st.std / sqrt((double)n);
    CHECK_NEAR(st.ci95_mean[0], st.mean - half, 1e-12);
    CHECK_NEAR(st.ci95_mean[1], st.mean + half, 1e-12);

    for (size_t i = 0; i < n; i++) x[i] = 0.001;
    x[7] = 1e9;
    CHECK(ib_stats_compute(x, n, &st) == IB_OK);
    CHECK(st.mean - ib__t975(n - 1) * st.std / sqrt((double)n) < 0);
    CHECK_NEAR(st.ci95_mean[0], 0.001, 0);
    CHECK(st.ci95_mean[1] > st.mean && st.ci95_mean[1] <= 1e9);
    free(x);
}

/* Identical readings (a timer of 1.25 us steps): the intervals collapse to
 * a point, which is no interval; widened to +- the resolution. */
static void test_widen_to_resolution(void)
{
    double same[50];
    for (int i = 0; i < 50; i++) same[i] = 0.03533;
    ib_stats st;
    CHECK(ib_stats_compute(same, 50, &st) == IB_OK);
    CHECK_NEAR(st.ci95_median[1] - st.ci95_median[0], 0, 0);
    ib__stats_widen_to_resolution(&st, 0.00125);
    CHECK(st.ci95_widened);
    CHECK_NEAR(st.ci95_median[0], 0.03408, 1e-12);
    CHECK_NEAR(st.ci95_median[1], 0.03658, 1e-12);
    CHECK_NEAR(st.ci95_mean[0], 0.03408, 1e-12);
    CHECK_NEAR(st.ci95_mean[1], 0.03658, 1e-12);
    CHECK_NEAR(ib__median_ci_relative_halfwidth(&st), 0.00125 / 0.03533, 1e-12);
    CHECK_NEAR(ib__median_precision(same, 50, 0.00125), 0.00125 / 0.03533, 1e-12);

    /* Wider than the resolution already: kept. Unknown resolution: kept. */
    const double x[10] = { 7, 3, 10, 1, 5, 2, 9, 4, 8, 6 };
    CHECK(ib_stats_compute(x, 10, &st) == IB_OK);
    ib__stats_widen_to_resolution(&st, 1.0);
    CHECK(!st.ci95_widened);
    CHECK_NEAR(st.ci95_median[0], 2, 0);
    ib__stats_widen_to_resolution(&st, NAN);
    CHECK(!st.ci95_widened);
    CHECK_NEAR(st.ci95_median[1], 9, 0);

    /* Near zero the widened interval stops at zero: a duration. */
    for (int i = 0; i < 50; i++) same[i] = 0.0005;
    CHECK(ib_stats_compute(same, 50, &st) == IB_OK);
    ib__stats_widen_to_resolution(&st, 0.00125);
    CHECK_NEAR(st.ci95_median[0], 0, 0);
    CHECK_NEAR(st.ci95_median[1], 0.00175, 1e-12);

    /* Too few samples: nothing to widen, still no interval. */
    CHECK(ib_stats_compute(same, 5, &st) == IB_OK);
    ib__stats_widen_to_resolution(&st, 0.00125);
    CHECK(!st.ci95_widened && isnan(st.ci95_median[0]));
}

/* A timer's resolution is the step of its grid, seen between readings of
 * equal intervals (CUDA events: 1.216, 1.248, 1.280 us for an empty pair on
 * an H200), not the length of the shortest interval. */
static void test_timer_step(void)
{
    double grid[] = { 0.001248, 0.001280, 0.001216, 0.001248, 0.001280 };
    CHECK_NEAR(ib__timer_step_ms(grid, 5), 0.000032, 1e-12);
    double same[] = { 0.00125, 0.00125, 0.00125 };
    CHECK_NEAR(ib__timer_step_ms(same, 3), 0.00125, 1e-15); /* no step seen: the bound */
    double from_zero[] = { 0.002, 0, 0.002 };
    CHECK_NEAR(ib__timer_step_ms(from_zero, 3), 0.002, 1e-15);
    double wide[] = { 0.7, 0.5, 1.1 };
    CHECK_NEAR(ib__timer_step_ms(wide, 3), 0.2, 1e-12);
    double zeros[] = { 0, 0 };
    CHECK(isnan(ib__timer_step_ms(zeros, 2)));
    CHECK(isnan(ib__timer_step_ms(NULL, 0)));
}

/* The least-squares slope and its t interval, by hand: y = 0, 1, 1, 3 over
 * x = 0..3 has slope 4.5 / 5 = 0.9, residuals 0.1, 0.2, -0.7, 0.4 (sum of
 * squares 0.7), so +- t(2) sqrt(0.7 / 2 / 5) = 4.3027 x 0.26458. */
static void test_slope_ci95(void)
{
    const double x[] = { 0, 1, 2, 3 }, y[] = { 0, 1, 1, 3 }, line[] = { 1, 3, 5, 7 };
    double slope = NAN, ci[2] = { NAN, NAN };
    CHECK(ib__slope_ci95(x, y, 4, &slope, ci) == IB_OK);
    CHECK_NEAR(slope, 0.9, 1e-12);
    CHECK_NEAR(ci[0], 0.9 - 4.3027 * sqrt(0.07), 1e-9);
    CHECK_NEAR(ci[1], 0.9 + 4.3027 * sqrt(0.07), 1e-9);
    CHECK(ib__slope_ci95(x, line, 4, &slope, ci) == IB_OK);
    CHECK(slope == 2 && ci[0] == 2 && ci[1] == 2); /* on a line: no spread */
    const double same[] = { 5, 5, 5 }, with_nan[] = { 0, NAN, 2 };
    CHECK(ib__slope_ci95(x, y, 2, &slope, ci) == IB_ERR_INVALID_ARG);    /* no interval from 2 */
    CHECK(ib__slope_ci95(same, y, 3, &slope, ci) == IB_ERR_INVALID_ARG); /* no spread of x */
    CHECK(ib__slope_ci95(x, with_nan, 3, &slope, ci) == IB_ERR_INVALID_ARG);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_slope_ci95);
    RUN(test_timer_step);
    RUN(test_intervals_need_six);
    RUN(test_mean_ci_positive_under_skew);
    RUN(test_mean_ci_large_n);
    RUN(test_widen_to_resolution);
    RUN(test_one_to_ten);
    RUN(test_single_and_constant);
    RUN(test_median_ranks);
    RUN(test_t_quantile);
    RUN(test_quantile_interpolation);
    RUN(test_bimodal);
    return check_summary("test_stats");
}
