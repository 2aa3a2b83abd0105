#include "core/rules.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double median_of(const double *x, size_t n)
{
    double tmp[64];
    double *s = n <= 64 ? tmp : malloc(n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, x, n * sizeof *s);
    double m = ib__median_in_place(s, n);
    if (s != tmp) free(s);
    return m;
}

bool ib__is_steady(const double *recent, size_t n, size_t window, double tolerance)
{
    if (window == 0 || n < 2 * window) return false;
    double earlier = median_of(recent + n - 2 * window, window);
    double later = median_of(recent + n - window, window);
    if (!(later > 0)) return false;
    return fabs(earlier - later) <= tolerance * later;
}

size_t ib__steady_window(double cap_ms, double run_ms)
{
    if (!(run_ms > 0) || !(cap_ms > 0)) return IB__STEADY_WINDOW;
    double fit = floor(cap_ms / (2 * run_ms));
    if (fit >= IB__STEADY_WINDOW) return IB__STEADY_WINDOW;
    return fit > IB__STEADY_MIN_WINDOW ? (size_t)fit : IB__STEADY_MIN_WINDOW;
}

static bool adaptive_check_due(size_t n, int64_t min_runs)
{
    if ((int64_t)n < min_runs) return false;
    size_t step = n / 20 > 10 ? n / 20 : 10;
    return (int64_t)n == min_runs || n % step == 0;
}

ib__stop_decision ib__stop_check(const ib__stop_rule *rule, const double *samples, size_t n,
                                 double elapsed_ms, double *achieved)
{
    if (rule->precision <= 0) return (int64_t)n >= rule->runs ? IB__STOP_COUNT : IB__CONTINUE;

    if (adaptive_check_due(n, rule->min_runs)) {
        *achieved = ib__median_precision(samples, n, rule->resolution_ms);
        if (*achieved <= rule->precision) return IB__STOP_PRECISION;
    }
    if ((int64_t)n >= rule->max_runs) return IB__STOP_MAX_RUNS;
    if (elapsed_ms >= rule->max_time_ms && (int64_t)n >= rule->min_runs) return IB__STOP_MAX_TIME;
    return IB__CONTINUE;
}
