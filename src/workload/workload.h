/* The workload interface: what the measurement core drives. Each backend
 * (a model runtime, the spin kernel, the scripted fake) fills one const table of
 * operations; the core sees nothing else of it. These are the slots of the
 * public ABI (include/inferbench_backend.h) on the core's own handle: an
 * in-tree backend fills the handle directly, a backend of the ABI (a plugin)
 * is seen through backend_workload.c. What a workload can do is said once,
 * in w->caps (IB_CAP_*): the core reads the bits, never which slots are set. */
#ifndef IB_WORKLOAD_WORKLOAD_H
#define IB_WORKLOAD_WORKLOAD_H

#include "base/common.h"
#include "inferbench_backend.h"
#include "timer/energy_counter.h"
#include "timer/timer.h"

#define IB__WORKLOAD_OPS_VERSION 1

struct ib__output_values;

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
                                        name); NULL: a bare workload */
    /* What its backend says of its runtime (version, library, build), set
     * by the backend that made it (NULL: the name alone): how the machine
     * facts learn the runtime's without asking the registry. */
    void (*runtime_facts)(ib_runtime_info *rt);
    /* The backend's own energy counter (the fake's scripted one), opened
     * into *c, its ctx this workload; false: it has none, the reason in
     * note[cap]. NULL: a GPU workload's is NVML's on device_id
     * (ib__energy_source, src/core/energy.h). */
    ib__energy_open_fn own_energy;
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

/* The runtime that runs w, as its backend says: every field reset, the
 * backend's name, and what its runtime_facts fill ("" without a backend). */
void ib__workload_runtime(const ib_workload *w, ib_runtime_info *out);

/* The CPU threads w's runtime was asked for: its backend's "threads"
 * option (a runtime's intra-op threads), 0 when not given, "default"
 * or not a count. */
int32_t ib__workload_threads(const ib_workload *w);

/* Waits for all work queued on w->stream (no-op on the host). */
ib_status ib__workload_synchronize(ib_workload *w, ib_error *err);

/* The backend ABI's adapter, both ways (backend_workload.c: a table as the
 * core's handle; builtin.c: an in-tree workload as a table's state). */
/* Whether b is a built-in table whose state is an in-tree workload (its
 * slots are the ib__builtin_ forwarders below). */
bool ib__backend_is_in_tree(const ib_backend *b);

/* Checks a table before its first use: ABI version, size, name, required
 * slots. IB_ERR_INVALID_ARG with a message naming what is wrong. */
ib_status ib__backend_check(const ib_backend *b, ib_error *err);

/* In-tree backends as tables: an in-tree workload (which fills the core's
 * handle itself) handed over as the state of a table whose slots forward to
 * its operations. Its stream and capabilities go into out. */
void ib__builtin_hand_over(ib_workload *inner, ib_backend_handle *out);
void ib__builtin_describe(void *state, ib_workload_info *info);
ib_status ib__builtin_set_batch(void *state, int64_t batch, ib_error *err);
ib_status ib__builtin_run(void *state, ib_error *err);
ib_status ib__builtin_set_run_sync(void *state, bool sync, ib_error *err);
ib_status ib__builtin_run_with_copies(void *state, ib_error *err);
ib_status ib__builtin_reopen(void *state, ib_error *err);
ib_status ib__builtin_fill_inputs(void *state, bool zeros, ib_error *err);
void ib__builtin_close(void *state);

/* The table of an in-tree backend whose open hands its workload over: every
 * slot a forwarder (the workload's capabilities say which are called), its
 * option declarations and configure slot (NULL, 0, NULL: none). */
#define IB__IN_TREE_BACKEND(NAME, DESCRIPTION, OPEN, OPTIONS, N_OPTIONS, CONFIGURE)                          \
    {                                                                                                        \
        .struct_size = sizeof(ib_backend), .abi_version = IB_BACKEND_ABI_VERSION, .name = (NAME),            \
        .description = (DESCRIPTION), .open = (OPEN), .describe = ib__builtin_describe,                      \
        .set_batch = ib__builtin_set_batch, .run = ib__builtin_run,                                          \
        .set_run_sync = ib__builtin_set_run_sync, .run_with_copies = ib__builtin_run_with_copies,            \
        .reopen = ib__builtin_reopen, .fill_inputs = ib__builtin_fill_inputs, .close = ib__builtin_close,    \
        .options = (OPTIONS), .n_options = (N_OPTIONS), .configure = (CONFIGURE),                            \
    }

#endif
