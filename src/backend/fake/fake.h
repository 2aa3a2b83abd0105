/* The fake backend's own calls, for the tests: a scripted workload opened
 * directly (the CLI opens it through its table, --backend fake). Apart from
 * the workload contract (workload/workload.h), which names no backend. */
#ifndef IB_BACKEND_FAKE_H
#define IB_BACKEND_FAKE_H

#include "workload/workload.h"

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
    bool tf32_by_default;       /* with tf32_factor: TF32 is on from the start,
                                   info.math "tf32" as the runtime's default
                                   (a GPU runtime's on compute capability 8.0+);
                                   else strict "fp32" */

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
