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

typedef struct spin {
    uint64_t duration_ns;
    bool sync; /* run waits for the kernel (the default) */
} spin;

static ib_status spin_set_batch(ib_workload *w, int64_t batch, ib_error *err)
{
    (void)w;
    IB_FAIL_IF(batch != 1, err, IB_ERR_UNSUPPORTED,
               "the spin kernel has no batch dimension: batch %lld is not 1", (long long)batch);
    return IB_OK;
}

static ib_status spin_run(ib_workload *w, ib_error *err)
{
    const spin *s = w->impl;
    IB_TRY(ib__gpu_spin(w->stream, s->duration_ns, err));
    return s->sync ? ib__gpu_stream_sync(w->stream, err) : IB_OK;
}

static ib_status spin_set_run_sync(ib_workload *w, bool sync, ib_error *err)
{
    (void)err;
    ((spin *)w->impl)->sync = sync;
    return IB_OK;
}

static void spin_destroy(ib_workload *w)
{
    ib__gpu_stream_destroy(w->stream);
    free(w->impl);
    free(w);
}

static const ib__workload_ops spin_ops = {
    .version = IB__WORKLOAD_OPS_VERSION,
    .set_batch = spin_set_batch,
    .run = spin_run,
    .set_run_sync = spin_set_run_sync,
    .destroy = spin_destroy,
};

ib_status ib_workload_open_spin_kernel(double duration_us, int device_id, ib_workload **out,
                                       ib_error *err)
{
    IB_FAIL_IF(out == NULL, err, IB_ERR_INVALID_ARG, "spin kernel: no output handle");
    *out = NULL;
    IB_FAIL_IF(!(duration_us >= 0.0 && duration_us <= MAX_DURATION_US), err, IB_ERR_INVALID_ARG,
               "spin kernel: duration %g us is not in [0, %g] us", duration_us, MAX_DURATION_US);
    IB_FAIL_IF(device_id < 0, err, IB_ERR_INVALID_ARG, "spin kernel: device %d is not a device index",
               device_id);

    ib_workload *w = calloc(1, sizeof *w);
    spin *s = calloc(1, sizeof *s);
    if (!w || !s) {
        free(w);
        free(s);
        return ib__fail(err, IB_ERR_NO_MEMORY, "spin kernel: out of host memory");
    }
    s->duration_ns = (uint64_t)llround(duration_us * 1e3);
    s->sync = true;
    *w = (ib_workload){
        .ops = &spin_ops,
        .impl = s,
        .device_id = device_id,
        .clock = ib__host_clock(),
        .caps = IB_CAP_GPU | IB_CAP_CUDA_STREAM | IB_CAP_DEVICE_TIMING | IB_CAP_ASYNC_RUN | IB_CAP_L2_FLUSH,
    };
    snprintf(w->info.model, sizeof w->info.model, "spin:%gus", duration_us);
    ib__strlcpy(w->info.provider, "spin-kernel", sizeof w->info.provider);
    w->info.device = IB_DEVICE_CUDA;
    w->info.batch = 1;
    w->info.has_batch_dim = false;

    ib_error cause;
    ib_status st = ib__gpu_stream_create(device_id, &w->stream, &cause);
    if (st != IB_OK) {
        spin_destroy(w);
        /* The cause says which: a build without CUDA, no driver, no such
         * device. */
        return ib__fail(err, st, "spin kernel on CUDA device %d: %s", device_id, cause.message);
    }
    *out = w;
    return IB_OK;
}

/* The spin kernel as a table of the backend ABI: --option us=DURATION. */
static ib_status spin_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    long long us = 0;
    for (size_t i = 0; i < args->n_options; i++) {
        IB_FAIL_IF(strcmp(args->options[i].key, "us"), err, IB_ERR_INVALID_ARG,
                   "spin: unknown option '%s' (known: us, the kernel's duration in microseconds)",
                   args->options[i].key);
        IB_TRY(ib__backend_option_int(&args->options[i], 0, (long long)MAX_DURATION_US, &us, err));
    }
    ib_workload *w;
    IB_TRY(ib_workload_open_spin_kernel((double)us, args->device_id, &w, err));
    ib__builtin_hand_over(w, out);
    return IB_OK;
}

const ib_backend ib__backend_spin = {
    .struct_size = sizeof(ib_backend),
    .abi_version = IB_BACKEND_ABI_VERSION,
    .name = "spin",
    .description = "a CUDA kernel that spins for a known time (--option us=N): the calibration workload",
    .open = spin_open,
    .describe = ib__builtin_describe,
    .set_batch = ib__builtin_set_batch,
    .run = ib__builtin_run,
    .set_run_sync = ib__builtin_set_run_sync,
    .close = ib__builtin_close,
};
