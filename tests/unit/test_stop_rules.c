/* The adaptive stopping rule at its edges not covered by test_behaviour's
 * (which has the caps against the minimum): when the precision check is due,
 * and the configuration's limits. Written for survivors of the mutation run
 * (docs/testing.md): the check's cadence shifted by one run and the count
 * check removed passed every other test. */
#include "check.h"
#include "core/latency.h"
#include "core/rules.h"

#include <string.h>

static void test_precision_check_cadence(void)
{
    /* Equal samples: the target is met whenever it is checked, so the
     * decision shows when the check is due: at min_runs, then every
     * max(10, n/20) runs. */
    double x[200];
    for (size_t i = 0; i < 200; i++) x[i] = 5.0;
    const ib__stop_rule rule = { .precision = 0.01, .min_runs = 30, .max_runs = 100000, .max_time_ms = 1e9 };
    double achieved = -1;
    CHECK(ib__stop_check(&rule, x, 29, 0, &achieved) == IB__CONTINUE);
    CHECK_NEAR(achieved, -1, 0); /* not computed before min_runs */
    CHECK(ib__stop_check(&rule, x, 30, 0, &achieved) == IB__STOP_PRECISION);
    CHECK_NEAR(achieved, 0, 0);
    for (size_t n = 31; n < 40; n++) CHECK(ib__stop_check(&rule, x, n, 0, &achieved) == IB__CONTINUE);
    CHECK(ib__stop_check(&rule, x, 40, 0, &achieved) == IB__STOP_PRECISION);
    /* n = 200: step n/20 = 10 still; 210 would be next. */
    CHECK(ib__stop_check(&rule, x, 200, 0, &achieved) == IB__STOP_PRECISION);
    CHECK(ib__stop_check(&rule, x, 199, 0, &achieved) == IB__CONTINUE);
}

static void test_fixed_count(void)
{
    const double x[3] = { 1, 2, 3 };
    const ib__stop_rule rule = { .runs = 3, .precision = 0 };
    double achieved = -1;
    CHECK(ib__stop_check(&rule, x, 2, 1e9, &achieved) == IB__CONTINUE);
    CHECK(ib__stop_check(&rule, x, 3, 0, &achieved) == IB__STOP_COUNT);
    CHECK_NEAR(achieved, -1, 0);
}

/* The adaptive rule's counts as configured: at least 6 runs (no median
 * interval below that), the minimum within the maximum; the edges of the
 * time limits taken. (Removing the count check passed every other test.) */
static void test_adaptive_config_edges(void)
{
    ib_config cfg;
    ib_error err;
    ib_config_init(&cfg);
    cfg.precision = 0.01;
    cfg.min_runs = 6;
    cfg.max_runs = 6;
    CHECK(ib__config_validate(&cfg, &err) == IB_OK);
    cfg.min_runs = 5;
    CHECK(ib__config_validate(&cfg, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "min runs") != NULL);
    cfg.min_runs = 7;
    CHECK(ib__config_validate(&cfg, &err) == IB_ERR_INVALID_ARG);
    ib_config_init(&cfg);
    cfg.warmup_ms = IB__MAX_TIME_MS;
    cfg.warmup_max_ms = IB__MAX_TIME_MS;
    CHECK(ib__config_validate(&cfg, &err) == IB_OK);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_precision_check_cadence);
    RUN(test_fixed_count);
    RUN(test_adaptive_config_edges);
    return check_summary("test_stop_rules");
}
