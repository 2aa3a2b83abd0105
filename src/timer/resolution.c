/* A device timer's resolution, measured the way calibrate reports it. */
#include "timer/timer.h"

#include <math.h>

ib_status ib__timer_resolution_ms(const ib__timer_ops *ops, void *state, int pairs, double *ms, ib_error *err)
{
    double best = INFINITY;
    ib_status st = IB_OK;
    for (int i = 0; i < pairs && st == IB_OK; i++) {
        double elapsed;
        st = ops->start(state, err);
        if (st == IB_OK) st = ops->stop(state, err);
        if (st == IB_OK) st = ops->elapsed_ms(state, &elapsed, err);
        if (st == IB_OK && elapsed > 0 && elapsed < best) best = elapsed;
    }
    *ms = isfinite(best) ? best : NAN;
    return st;
}
