#include "timer/timer.h"
#include "base/common.h"

#include <errno.h>
#include <math.h>
#include <time.h>

/* Reads of the host clock taken to see its smallest step. */
#define HOST_STEP_READS 64

static double monotonic_now_ms(const void *ctx)
{
    (void)ctx;
    return ib__now_ms();
}

/* What the clock can tell apart: clock_getres's promise, or the smallest
 * step two reads in a row show (the cost of a read), whichever is larger. */
static double host_resolution_ms(void)
{
    struct timespec res;
    double promised =
        clock_getres(CLOCK_MONOTONIC, &res) == 0 ? (double)res.tv_sec * 1e3 + (double)res.tv_nsec / 1e6 : 0;
    double step = INFINITY;
    for (int i = 0; i < HOST_STEP_READS; i++) {
        double t0 = ib__now_ms(), t1 = ib__now_ms();
        /* A read that did not move says nothing about the step: read on. */
        for (int spin = 0; t1 == t0 && spin < 1000000; spin++) t1 = ib__now_ms();
        if (t1 > t0) step = fmin(step, t1 - t0);
    }
    return isfinite(step) ? fmax(promised, step) : promised;
}

double ib__host_wait_sleep_to(double now_ms, double t_ms)
{
    double sleep_to = t_ms - IB__HOST_SPIN_MS;
    return now_ms < sleep_to ? sleep_to : -INFINITY;
}

static void monotonic_wait_until_ms(const void *ctx, double t_ms)
{
    (void)ctx;
    double sleep_to = ib__host_wait_sleep_to(ib__now_ms(), t_ms);
    if (isfinite(sleep_to)) {
        struct timespec ts = { .tv_sec = (time_t)(sleep_to / 1e3),
                               .tv_nsec = (long)(fmod(sleep_to, 1e3) * 1e6) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
    while (ib__now_ms() < t_ms) {
    }
}

ib__clock ib__host_clock(void)
{
    return (ib__clock){ .now_ms = monotonic_now_ms,
                        .ctx = NULL,
                        .resolution_ms = host_resolution_ms(),
                        .wait_until_ms = monotonic_wait_until_ms };
}
