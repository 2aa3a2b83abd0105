/* Statistics against values computed by hand (and by Python's exact
 * binomial for the median's interval ranks). */
#include "check.h"
#include "core/stats.h"

#include <stdlib.h>

static void test_one_to_ten(void)
{
    /* Deliberately unsorted: the summary must not depend on order. */
    const double x[10] = {7, 3, 10, 1, 5, 2, 9, 4, 8, 6};
    ib_stats st;
    CHECK(ib_stats_compute(x, 10, &st) == IB_OK);
    CHECK_EQ_INT(st.n, 10);
    CHECK_NEAR(st.mean, 5.5, 1e-12);
    CHECK_NEAR(st.std, 3.0276503540974917, 1e-12); /* sqrt(82.5 / 9) */
    CHECK_NEAR(st.min, 1, 0);
    CHECK_NEAR(st.max, 10, 0);
    CHECK_NEAR(st.p50, 5.5, 1e-12);
    CHECK_NEAR(st.p90, 9.1, 1e-12);   /* h = 9*0.9 = 8.1 */
    CHECK_NEAR(st.p95, 9.55, 1e-12);
    CHECK_NEAR(st.p99, 9.91, 1e-12);
    CHECK_NEAR(st.p999, 9.991, 1e-12);
    CHECK_NEAR(st.cv, 3.0276503540974917 / 5.5, 1e-12);
    /* t(0.975, 9) = 2.2622; half-width 2.2622 * 3.02765 / sqrt(10). */
    CHECK_NEAR(st.ci95_mean[0], 5.5 - 2.16585, 1e-4);
    CHECK_NEAR(st.ci95_mean[1], 5.5 + 2.16585, 1e-4);
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
    static const struct { size_t n, lo, hi; } cases[] = {
        {6, 0, 5}, {10, 1, 8}, {30, 9, 20}, {300, 132, 167}, {1000, 468, 531},
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
    CHECK_NEAR(ib__t975(40), 2.0211, 2e-4);
    CHECK_NEAR(ib__t975(120), 1.9799, 2e-4);
    CHECK_NEAR(ib__t975(100000), 1.95997, 1e-4);
}

static void test_quantile_interpolation(void)
{
    const double s[4] = {10, 20, 30, 40};
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
    for (int i = 0; i < 60; i++) x[i] = 2.0 + 0.001 * (i % 10);  /* 30% at 2 ms */
    CHECK(ib__is_bimodal(x, 200));
    for (int i = 0; i < 200; i++) x[i] = 1.0 + 0.001 * (i % 10);
    for (int i = 0; i < 5; i++) x[i] = 5.0; /* a tail of 2.5% is not a mode */
    CHECK(!ib__is_bimodal(x, 200));
}

int main(void)
{
    test_one_to_ten();
    test_single_and_constant();
    test_median_ranks();
    test_t_quantile();
    test_quantile_interpolation();
    test_bimodal();
    return check_summary("test_stats");
}
