/* Timers: how a run is timed, kept apart from what is run. The host clock
 * is a function; a device timer marks points on the workload's stream. */
#ifndef IB_TIMER_TIMER_H
#define IB_TIMER_TIMER_H

#include "inferbench.h"

/* A host clock in milliseconds; ctx lets the fake substitute virtual time. */
typedef struct ib__clock {
    double (*now_ms)(const void *ctx);
    const void *ctx;
    double resolution_ms; /* smallest step it reads; 0: exact (virtual) */
    /* Returns once the clock reads t_ms or later: sleeps on the real clock,
     * advances a virtual one (what an idle wait is to the fake). */
    void (*wait_until_ms)(const void *ctx, double t_ms);
} ib__clock;

/* The real monotonic clock, its resolution measured: the larger of what
 * clock_getres says and the smallest step seen between two reads. */
ib__clock ib__host_clock(void);

/* The host clock's wait to t_ms from now_ms: until when it sleeps before
 * it spins the rest (IB__HOST_SPIN_MS before the deadline: a sleep wakes
 * tens of microseconds late, which a request would count as queueing);
 * -INFINITY when the deadline is too near to sleep at all. */
#define IB__HOST_SPIN_MS 0.2
double ib__host_wait_sleep_to(double now_ms, double t_ms);

/* A device timer: start/stop are marks on a stream (CUDA event records);
 * elapsed waits for the stop mark and returns the device time between
 * them. create is given what the marks go on (a cudaStream_t for CUDA
 * events) and its device. */
typedef struct ib__timer_ops {
    ib_status (*create)(void *target, int device_id, void **state, ib_error *err);
    ib_status (*start)(void *state, ib_error *err);
    ib_status (*stop)(void *state, ib_error *err);
    ib_status (*elapsed_ms)(void *state, double *ms, ib_error *err);
    void (*destroy)(void *state);
} ib__timer_ops;

/* Pairs of marks with nothing between them that a resolution measurement
 * takes. */
#define IB__RESOLUTION_PAIRS 200

/* A device timer's resolution: the step of its grid, read from `pairs`
 * pairs of marks with nothing between them on a timer state made by
 * ops->create (ib__timer_step_ms of their readings). NaN when none reads
 * above zero. */
ib_status ib__timer_resolution_ms(const ib__timer_ops *ops, void *state, int pairs, double *ms,
                                  ib_error *err);

/* The step of a timer's grid from readings[0..n) of intervals of one
 * length: the smallest positive gap between two distinct readings, or, when
 * all are equal, the smallest positive reading (an upper bound); NaN when
 * none is above zero. Sorts readings in place. */
double ib__timer_step_ms(double *readings, size_t n);

#endif
