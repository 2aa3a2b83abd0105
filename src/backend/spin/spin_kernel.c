/* The calibration workload: one kernel that spins for a known time on the
 * GPU's global timer. Measured by the tool, it shows the tool's own accuracy
 * and overhead (the calibrate command); with a duration of 0 it is an empty
 * kernel, what launching and timing alone cost. */
#include "backend/registry.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longer spins calibrate nothing more; they only risk display watchdogs. */
#define MAX_DURATION_US 10e6

/* The spin kernel is a backend of the public table alone (nothing of the
 * core's handle): the in-tree proof that a backend needs no more. */
typedef struct spin {
    double duration_us;
    uint64_t duration_ns;
    bool sync;    /* run waits for the kernel (the default) */
    void *stream; /* ours, on the device asked for */
} spin;

static void spin_describe(void *state, ib_workload_info *info)
{
    snprintf(info->model, sizeof info->model, "spin:%gus", ((const spin *)state)->duration_us);
    ib__strlcpy(info->provider, "spin-kernel", sizeof info->provider);
    info->batch = 1;
}

static ib_status spin_set_batch(void *state, int64_t batch, ib_error *err)
{
    (void)state;
    IB_FAIL_IF(batch != 1, err, IB_ERR_UNSUPPORTED,
               "the spin kernel has no batch dimension: batch %lld is not 1", (long long)batch);
    return IB_OK;
}

static ib_status spin_run(void *state, ib_error *err)
{
    const spin *s = state;
    IB_TRY(ib__gpu_spin(s->stream, s->duration_ns, err));
    return s->sync ? ib__gpu_stream_sync(s->stream, err) : IB_OK;
}

static ib_status spin_set_run_sync(void *state, bool sync, ib_error *err)
{
    (void)err;
    ((spin *)state)->sync = sync;
    return IB_OK;
}

static void spin_close(void *state)
{
    spin *s = state;
    if (s) ib__gpu_stream_destroy(s->stream);
    free(s);
}

/* --option us=DURATION: microseconds, fractions allowed. */
static ib_status parse_options(const ib_backend_open_args *args, double *us, ib_error *err)
{
    *us = 0;
    for (size_t i = 0; i < args->n_options; i++) {
        const ib_backend_option *o = &args->options[i];
        IB_FAIL_IF(strcmp(o->key, "us"), err, IB_ERR_INVALID_ARG,
                   "spin: unknown option '%s' (known: us, the kernel's duration in microseconds)", o->key);
        char *end;
        *us = strtod(o->value, &end);
        IB_FAIL_IF(!*o->value || *end || !(*us >= 0.0 && *us <= MAX_DURATION_US), err, IB_ERR_INVALID_ARG,
                   "spin kernel: duration '%s' us is not in [0, %g] us", o->value, MAX_DURATION_US);
    }
    return IB_OK;
}

static ib_status spin_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    double us;
    IB_TRY(parse_options(args, &us, err));
    IB_FAIL_IF(args->device == IB_DEVICE_CPU, err, IB_ERR_UNSUPPORTED,
               "spin kernel: runs on a CUDA GPU only");
    IB_FAIL_IF(args->device_id < 0, err, IB_ERR_INVALID_ARG, "spin kernel: device %d is not a device index",
               args->device_id);
    spin *s = calloc(1, sizeof *s);
    IB_FAIL_IF(!s, err, IB_ERR_NO_MEMORY, "spin kernel: out of host memory");
    *s = (spin){ .duration_us = us, .duration_ns = (uint64_t)llround(us * 1e3), .sync = true };
    ib_error cause;
    ib_status st = ib__gpu_stream_create(args->device_id, &s->stream, &cause);
    if (st != IB_OK) {
        free(s);
        /* The cause says which: a build without CUDA, no driver, no such
         * device. */
        return ib__fail(err, st, "spin kernel on CUDA device %d: %s", args->device_id, cause.message);
    }
    *out = (ib_backend_handle){
        .state = s,
        .caps = IB_CAP_GPU | IB_CAP_CUDA_STREAM | IB_CAP_DEVICE_TIMING | IB_CAP_ASYNC_RUN | IB_CAP_L2_FLUSH,
        .stream = s->stream,
        .device_id = args->device_id,
    };
    return IB_OK;
}

static const ib_backend_option_decl spin_options[] = {
    { .key = "us", .help = "the kernel's duration in microseconds (fractions allowed)", .values = "US" },
};

const ib_backend ib__backend_spin = {
    .struct_size = sizeof(ib_backend),
    .abi_version = IB_BACKEND_ABI_VERSION,
    .name = "spin",
    .description = "a CUDA kernel that spins for a known time (--option us=N): the calibration workload",
    .open = spin_open,
    .describe = spin_describe,
    .set_batch = spin_set_batch,
    .run = spin_run,
    .set_run_sync = spin_set_run_sync,
    .close = spin_close,
    .options = spin_options,
    .n_options = sizeof spin_options / sizeof spin_options[0],
};

ib_status ib_workload_open_spin_kernel(double duration_us, int device_id, ib_workload **out, ib_error *err)
{
    IB_FAIL_IF(out == NULL, err, IB_ERR_INVALID_ARG, "spin kernel: no output handle");
    *out = NULL;
    IB_FAIL_IF(!(duration_us >= 0.0 && duration_us <= MAX_DURATION_US), err, IB_ERR_INVALID_ARG,
               "spin kernel: duration %g us is not in [0, %g] us", duration_us, MAX_DURATION_US);
    char us[32];
    snprintf(us, sizeof us, "%.17g", duration_us); /* read back exactly */
    ib_backend_option option = { "us", us };
    ib_backend_open_args args;
    ib_backend_open_args_init(&args);
    args.options = &option;
    args.n_options = 1;
    args.device = IB_DEVICE_CUDA;
    args.device_id = device_id;
    return ib_workload_open_backend(&ib__backend_spin, &args, out, err);
}
