/* A device timer's resolution, measured the way calibrate reports it.
 *
 * Resolution is the step of the timer's grid, not the length of an empty
 * interval: two CUDA events with nothing between them read about 1.2 us on
 * an H200 (the cost of recording the second event), yet runs of a kernel
 * read values 0.03 us apart. Empty intervals of the same length land on
 * neighbouring points of the grid, so the smallest positive gap between two
 * distinct readings is the step. Where every reading is the same, no step can
 * be seen: the smallest positive reading bounds it from above. */
#include "timer/timer.h"
#include "base/common.h"

#include <math.h>
#include <stdlib.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ib__timer_step_ms(double *readings, size_t n)
{
    if (n == 0) return NAN;
    qsort(readings, n, sizeof *readings, compare_doubles);
    double smallest_positive = NAN, step = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!(readings[i] > 0)) continue;
        if (isnan(smallest_positive)) smallest_positive = readings[i];
        /* From 0 too: a zero reading and a first positive one are a step apart. */
        double gap = readings[i] - (i > 0 ? fmax(readings[i - 1], 0) : 0);
        if (i > 0 && gap > 0 && gap < step) step = gap;
    }
    return isfinite(step) ? step : smallest_positive;
}

ib_status ib__timer_resolution_ms(const ib__timer_ops *ops, void *state, int pairs, double *ms, ib_error *err)
{
    *ms = NAN;
    IB_FAIL_IF(pairs < 1, err, IB_ERR_INVALID_ARG, "timer resolution: no pairs to measure");
    double *readings = malloc((size_t)pairs * sizeof *readings);
    IB_FAIL_IF(readings == NULL, err, IB_ERR_NO_MEMORY, "timer resolution: out of host memory");
    ib_status st = IB_OK;
    int n = 0;
    for (; n < pairs && st == IB_OK; n++) {
        st = ops->start(state, err);
        if (st == IB_OK) st = ops->stop(state, err);
        if (st == IB_OK) st = ops->elapsed_ms(state, &readings[n], err);
    }
    if (st == IB_OK) *ms = ib__timer_step_ms(readings, (size_t)n);
    free(readings);
    return st;
}
