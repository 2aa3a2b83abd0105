/* Progress reports to the caller's ib_config.progress callback: at each
 * phase's start, then rate-limited between runs to at most one every
 * IB_PROGRESS_PERIOD_MS of the workload's clock (the clock the runner
 * already reads), so that the timed loop pays one clock read a run and
 * nothing inside a timed region. A measurement made of others (pitfalls'
 * rows, calibrate's points) hands its parts a nested configuration whose
 * reports carry its step and its elapsed time. */
#ifndef IB_CORE_PROGRESS_H
#define IB_CORE_PROGRESS_H

#include "workload/workload.h"

typedef struct ib__progress {
    ib_progress_fn fn; /* NULL: every call is a no-op */
    void *user;
    const ib_workload *w;   /* the clock; NULL: clock's, or the host's monotonic clock */
    const ib__clock *clock; /* without w: the clock (a generation workload's) */
    double t0_ms;           /* the measurement's start */
    double phase_t0_ms;     /* the current phase's start */
    double last_ms;         /* the last report */
    double end_ms;          /* when the whole measurement should end; NaN: not known */
    ib_progress p;
    char step_name[64];
} ib__progress;

void ib__progress_init(ib__progress *pr, const ib_config *cfg, const ib_workload *w);

/* The same on a clock of its own (a generation workload's: virtual for the
 * fake), not a workload's. */
void ib__progress_init_clock(ib__progress *pr, const ib_config *cfg, const ib__clock *clock);

/* Names the part of the measurement that follows (not reported until its
 * first phase starts): step of steps (0: none), its name (NULL: none) and
 * batch. */
void ib__progress_step(ib__progress *pr, int64_t step, int64_t steps, const char *name, int64_t batch);

/* serve: the offered rate of the step named last (requests/s; NaN or 0:
 * none, a closed loop). */
void ib__progress_rate(ib__progress *pr, double rate);

/* A phase of total runs (0: not known) starts: reported at once. */
void ib__progress_phase(ib__progress *pr, ib_phase phase, int64_t total);

/* done runs of the phase are over. cap_ms: the phase's time cap (NaN: none;
 * the time left is then estimated from the rate so far and the total).
 * Reported when IB_PROGRESS_PERIOD_MS passed since the last report. */
void ib__progress_runs(ib__progress *pr, int64_t done, double cap_ms);

/* The whole measurement has left_ms to go from now (NaN: not known): an
 * estimate, or a cap when is_bound. Every later report counts it down. */
void ib__progress_time_left(ib__progress *pr, double left_ms, bool is_bound);

/* cfg with its progress reports routed through pr: they carry pr's step and
 * elapsed time. pr must outlive the measurement that gets the copy. */
ib_config ib__progress_nested(const ib__progress *pr, const ib_config *cfg);

#endif
