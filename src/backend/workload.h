/* The workload interface: what the measurement core drives. Each backend
 * (a model runtime, the spin kernel, the scripted fake) fills one const table of
 * operations; the core sees nothing else of it. These are the slots of the
 * public ABI (include/inferbench_backend.h) on the core's own handle: an
 * in-tree backend fills the handle directly, a backend of the ABI (a plugin)
 * is seen through backend_workload.c. What a workload can do is said once,
 * in w->caps (IB_CAP_*): the core reads the bits, never which slots are set. */
#ifndef IB_BACKEND_WORKLOAD_H
#define IB_BACKEND_WORKLOAD_H

#include "core/common.h"
#include "inferbench_backend.h"
#include "timer/timer.h"

#define IB__WORKLOAD_OPS_VERSION 1

struct ib__output_values;
struct ib__energy_counter;

typedef struct ib__workload_ops {
    int version; /* IB__WORKLOAD_OPS_VERSION */

    /* Allocates and binds inputs and outputs for `batch` (untimed). Device
     * out of memory: IB_ERR_DEVICE_OOM, after freeing what this batch took,
     * so that a smaller batch can follow. Required. */
    ib_status (*set_batch)(ib_workload *w, int64_t batch, ib_error *err);

    /* The timed region: one inference on the bound data. On a device it
     * enqueues on w->stream and, unless set_run_sync(false) was called,
     * returns after the device finished. Required. */
    ib_status (*run)(ib_workload *w, ib_error *err);

    /* Optional (IB_CAP_ASYNC_RUN; NULL: runs are always synchronous).
     * Whether run waits for the device before returning (a runtime's
     * end-of-run sync). */
    ib_status (*set_run_sync)(ib_workload *w, bool sync, ib_error *err);

    /* Optional (IB_CAP_HOST_INPUT_RUN). One inference as naive code does
     * it: input taken from host memory and copied in, outputs copied back to
     * the host, all inside. */
    ib_status (*run_with_copies)(ib_workload *w, ib_error *err);

    /* Optional (IB_CAP_REOPEN). Drops the runtime session and creates it
     * anew, so that the next run is cold again (and arenas are returned). */
    ib_status (*reopen)(ib_workload *w, ib_error *err);

    /* Optional (IB_CAP_REFILL_INPUTS). Refills the bound inputs in place
     * (untimed): with zeros, or (zeros false) with the values they were
     * made with. */
    ib_status (*fill_inputs)(ib_workload *w, bool zeros, ib_error *err);

    /* Optional, both or neither (serve times a request's parts with them).
     * copy_in copies the inputs from host memory into the bound device
     * inputs, copy_out the bound outputs back to host memory; enqueued on
     * w->stream like run, waiting for the device only when runs do. */
    ib_status (*copy_in)(ib_workload *w, ib_error *err);
    ib_status (*copy_out)(ib_workload *w, ib_error *err);

    /* Releases everything. Required. */
    void (*destroy)(ib_workload *w);

    /* Optional. Output `index` of the last run, copied to the host
     * (untimed) as doubles: values malloc'ed into out (release with
     * ib__output_values_free). A non-float output: IB_ERR_UNSUPPORTED. */
    ib_status (*read_output)(ib_workload *w, size_t index, struct ib__output_values *out, ib_error *err);

    /* Optional (NULL: the device has no TF32 switch). Turns TF32 on or off
     * for the following runs (a new session, bound at the same batch). */
    ib_status (*set_tf32)(ib_workload *w, bool on, ib_error *err);
} ib__workload_ops;

/* An output read back to the host. */
typedef struct ib__output_values {
    double *values; /* [n], malloc'ed */
    size_t n;
    int rank;
    int64_t dims[IB_MAX_RANK];
} ib__output_values;

void ib__output_values_free(ib__output_values *v);

/* Launch-overhead exclusion (--exclude-launch): hold makes the work queued
 * on the workload's stream wait until release, so that it then starts
 * back-to-back; release reports *timed_out when the hold gave up after
 * timeout_ms (the workload waited on the held stream). A GPU workload's is
 * src/gpu/hold.c's (the runner's default); the fake has a virtual one. */
typedef struct ib__hold_ops {
    ib_status (*create)(ib_workload *w, void **state, ib_error *err);
    ib_status (*hold)(ib_workload *w, void *state, double timeout_ms, ib_error *err);
    ib_status (*release)(void *state, bool *timed_out, ib_error *err);
    void (*destroy)(void *state);
} ib__hold_ops;

struct ib_workload {
    const ib__workload_ops *ops;
    void *impl; /* the backend's own state */
    ib_workload_info info;
    int device_id;
    void *stream;    /* cudaStream_t the work runs on; NULL on the host */
    ib__clock clock; /* host clock (virtual for the fake) */
    uint64_t caps;   /* IB_CAP_*: what this workload can do */
    /* The backend's own device timer, created on timer_target (the fake's
     * virtual one); NULL: with IB_CAP_DEVICE_TIMING, CUDA events on stream.
     * Read it through ib__workload_device_timer, which knows both. */
    const ib__timer_ops *own_timer;
    void *timer_target;
    const ib__hold_ops *stream_hold; /* NULL: the GPU's on w->stream */
    const ib_backend *backend;       /* the table it was opened through (its
                                        runtime facts); NULL: a bare workload */
    /* The backend's own energy counter (the fake's scripted one), opened
     * into *c; false: it has none, the reason in note[cap]. NULL: a GPU
     * workload's is NVML's on device_id (ib__workload_energy_counter). */
    bool (*own_energy)(ib_workload *w, struct ib__energy_counter *c, char *note, size_t cap);
};

/* Whether w declares every capability in caps. */
static inline bool ib__workload_can(const ib_workload *w, uint64_t caps) { return (w->caps & caps) == caps; }

/* How w's runs are timed on the device, and on what: NULL without device
 * timing. */
const ib__timer_ops *ib__workload_device_timer(const ib_workload *w, void **target);

/* The capabilities a table of operations and a stream can honour, checked
 * against the declared ones: IB_ERR_INVALID_ARG naming the first that
 * disagrees ("declares IB_CAP_REOPEN without a reopen slot"). */
ib_status ib__workload_check_caps(const ib_workload *w, const char *who, ib_error *err);

/* The workload's host clock in ms (virtual for the fake). */
static inline double ib__workload_now_ms(const ib_workload *w) { return w->clock.now_ms(w->clock.ctx); }

/* Waits for all work queued on w->stream (no-op on the host). */
ib_status ib__workload_synchronize(ib_workload *w, ib_error *err);

/* The scripted fake workload, for tests: a virtual clock advanced by a
 * scripted duration on each run, faults injected on demand. */
typedef struct ib__fake_script {
    /* Duration of run number `index` (0 = the cold run) at `batch`. */
    double (*duration_ms)(int64_t batch, int64_t index, void *ctx);
    void *ctx;
    int64_t oom_above_batch;    /* set_batch/run above this: DEVICE_OOM; 0 = never */
    int64_t fail_at_run;        /* run index that fails with RUNTIME; -1 = never */
    int64_t refuse_above_batch; /* runs above this batch fail with UNSUPPORTED
                                   (the runtime refuses the size); 0 = never */
    int64_t fail_above_batch;   /* runs above this batch fail with RUNTIME (a
                                   shape error in the model); 0 = never */
    int64_t lose_device_at_run; /* run index that fails with DEVICE_LOST; -1 = never */
    int64_t oom_at_run;         /* run index that fails with DEVICE_OOM; -1 = never */
    bool has_batch_dim;
    bool has_device_timer;   /* exposes a (virtual) device timer */
    double host_overhead_ms; /* host time added around each run */
    /* Behaves as a GPU workload (info.device CUDA): after set_run_sync(false)
     * a run costs the host only host_overhead_ms and its work is queued on a
     * virtual device; whatever waits for the device (a synchronous run,
     * run_with_copies, reopen, set_run_sync(true), the device timer's
     * elapsed) brings the host clock to the end of the queued work. Without
     * it runs are always synchronous. */
    bool gpu_like;
    double copy_ms;             /* run_with_copies: a run plus this copy time;
                                   copy_in and copy_out: half of it each */
    double timer_resolution_ms; /* > 0: the device timer reads in steps of
                                   this (a pair of marks with nothing
                                   between reads one step), and the virtual
                                   host clock claims it as its resolution;
                                   0: both exact */
    double zero_input_factor;   /* runs on zero-filled inputs (fill_inputs)
                                   take this times the duration; 0 = 1 */
    double tf32_factor;         /* > 0: set_tf32 exists and runs with TF32
                                   on take this times the duration; 0: the
                                   device has no TF32 (set_tf32 refuses) */

    /* gpu_like: the virtual device idles this long before each run it
     * starts, the launch latency a timer's marks around the run count;
     * work queued behind a hold starts without it. */
    double launch_ms;
    bool has_stream_hold; /* gpu_like: a virtual stream hold (stream_hold) */
    double set_batch_ms;  /* host time set_batch takes (a rebind's buffers) */

    /* A scripted energy counter (w->own_energy) on the virtual clock: the
     * device draws idle_w, and busy_w + busy_w_per_item x batch while it
     * runs work (copies included); the count moves
     * only at multiples of energy_step_ms (what it reads between two is
     * the energy up to the last multiple, in whole energy_unit_j units),
     * from energy_start, going back to 0 at energy_range (0: never).
     * energy_step_ms 0: no counter (a GPU without one). */
    double energy_step_ms, idle_w, busy_w, busy_w_per_item, energy_unit_j;
    uint64_t energy_start, energy_range;
} ib__fake_script;

void ib__fake_script_init(ib__fake_script *s);
ib_status ib__workload_open_fake(const ib__fake_script *s, ib_workload **out, ib_error *err);
int64_t ib__fake_runs(const ib_workload *w);        /* runs issued so far */
int64_t ib__fake_set_batches(const ib_workload *w); /* set_batch calls so far */
bool ib__fake_zero_inputs(const ib_workload *w);    /* inputs zero-filled now */

#endif
