/* One timed run of a workload, the way every measurement takes it: the
 * device timer's marks around the run on the workload's stream, the host
 * clock around the whole, and the optional extras (L2 flush before, the
 * stream held until the run is queued). Latency, throughput and pitfalls all
 * time through this, so that the method is written once. */
#ifndef IB_CORE_RUNNER_H
#define IB_CORE_RUNNER_H

#include "workload/workload.h"
#include "gpu/gpu.h"

typedef struct ib__runner {
    ib_workload *w;
    const ib__timer_ops *timer_ops; /* the workload's device timer, NULL without */
    void *timer;                    /* its state, NULL without */
    ib__gpu_l2_flusher *flusher;    /* NULL unless flushing */
    void *hold;                     /* NULL unless excluding launch overhead */
    const ib__hold_ops *hold_ops;   /* the workload's, else the GPU's */
    const volatile int *cancel;
    int64_t runs;  /* timed so far through this runner */
    bool hold_off; /* with a hold: the next runs as they are, unheld */
    bool async;    /* the workload's own end-of-run wait is off
                      while the runner lives (device marks) */
} ib__runner;

/* Sets up what cfg asks for (flush_l2 and exclude_launch need a CUDA
 * workload; exclude_launch also a workload whose run can skip its own
 * synchronization). */
ib_status ib__runner_init(ib__runner *r, ib_workload *w, const ib_config *cfg, ib_error *err);
void ib__runner_release(ib__runner *r);

/* Times one run. *device_ms is NAN without a device timer. The first run
 * through a runner is never held: a kernel's first launch may load its
 * module, which waits for the device to idle, so it would wait behind the
 * hold until the timeout. */
ib_status ib__runner_time_one(ib__runner *r, double *device_ms, double *host_ms, ib_error *err);

/* The resolution of what times a run: the device timer's, measured on the
 * runner's own marks (NaN when none reads above zero), else the host
 * clock's. */
ib_status ib__runner_resolution_ms(ib__runner *r, double *ms, ib_error *err);

/* Times `count` runs issued back-to-back: one pair of marks around all of
 * them, the workload's own end-of-run synchronization off, so that no host
 * gap between runs is counted. Returns the total device time (host time
 * without a device timer) and the host wall time of the whole. */
ib_status ib__runner_time_back_to_back(ib__runner *r, int64_t count, double *device_ms, double *host_ms,
                                       ib_error *err);

#endif
