#include "timer/timer.h"
#include "core/common.h"

static double monotonic_now_ms(const void *ctx)
{
    (void)ctx;
    return ib__now_ms();
}

ib__clock ib__host_clock(void)
{
    return (ib__clock){ .now_ms = monotonic_now_ms, .ctx = NULL };
}
