/* When to stop warming up and when to stop sampling: pure functions over
 * samples, so that they are tested on scripted numbers. */
#ifndef IB_CORE_RULES_H
#define IB_CORE_RULES_H

#include "base/common.h"

/* Steady state: the medians of the last two windows of `window` samples
 * differ by at most `tolerance` (relative to the later one). recent holds
 * the last n samples, oldest first; n < 2*window is never steady. */
#define IB__STEADY_WINDOW 10
#define IB__STEADY_MIN_WINDOW 3
#define IB__STEADY_TOLERANCE 0.02
bool ib__is_steady(const double *recent, size_t n, size_t window, double tolerance);
/* The window steadiness is judged on: IB__STEADY_WINDOW runs, or fewer
 * (down to IB__STEADY_MIN_WINDOW) when two windows of runs of run_ms would
 * not fit in the warm-up's cap of cap_ms, so that long runs can still be
 * judged within it. */
size_t ib__steady_window(double cap_ms, double run_ms);

typedef enum ib__stop_decision {
    IB__CONTINUE = 0,
    IB__STOP_COUNT,     /* fixed count reached */
    IB__STOP_PRECISION, /* adaptive target met */
    IB__STOP_MAX_RUNS,  /* adaptive: run cap reached first */
    IB__STOP_MAX_TIME   /* adaptive: time cap reached first */
} ib__stop_decision;

typedef struct ib__stop_rule {
    int64_t runs;     /* fixed count (precision == 0) */
    double precision; /* > 0: adaptive */
    int64_t min_runs, max_runs;
    double max_time_ms;
    double resolution_ms; /* the timer's: the median's CI is never narrower
                             than +- this (0 or NaN: unknown) */
} ib__stop_rule;

/* Decides after n samples taken in elapsed_ms. *achieved receives the
 * relative half-width of the median's 95% CI when it was computed (adaptive
 * mode), else is left alone. The CI is recomputed only every ~5% of n, so
 * the check stays cheap on long runs. */
ib__stop_decision ib__stop_check(const ib__stop_rule *rule, const double *samples, size_t n,
                                 double elapsed_ms, double *achieved);

#endif
