/* The library's entry points that join the registry to the layers that do
 * not know it (docs/architecture.md): the method is handed its workloads
 * and the result reader its legacy keys, and these public calls, which
 * open the workloads on their backends and ask the registry, hand them
 * over. The method (src/core/) and the printers (src/report/) call none of
 * them. */
#include "backend/registry.h"
#include "core/accuracy.h"
#include "core/calibrate.h"
#include "gpu/gpu.h"
#include "report/report.h"

#include <string.h>

/* --- the accuracy check's fp32 reference, on the model's backend -------- */

typedef struct model_ref {
    const char *model;
    const ib_model_options *opts;
} model_ref;

/* The same model, strict fp32 (TF32 off, unconverted), plain session: the
 * runtime's settings left at their defaults (no graph replay). */
static ib_status open_reference(ib_workload *w, void *ctx, ib_workload **ref, ib_error *err)
{
    const model_ref *m = ctx;
    ib_model_options o = *m->opts;
    o.math = IB_MATH_FP32;
    o.options = NULL;
    o.n_options = 0;
    o.device = w->info.device;
    o.batch = w->info.has_batch_dim ? w->info.batch : 0;
    ib_error why;
    ib_status st = ib_workload_open_model(m->model, &o, ref, &why);
    IB_FAIL_IF(st != IB_OK, err, st, "the fp32 reference for the accuracy check: %s", why.message);
    return IB_OK;
}

ib_status ib_measure_accuracy_kept(ib_workload *w, const char *model, const ib_model_options *opts,
                                   double tolerance, ib_accuracy_reference **ref, ib_accuracy *out,
                                   ib_error *err)
{
    IB_FAIL_IF(!w || !model || !opts || !ref || !out, err, IB_ERR_INVALID_ARG, "accuracy: missing argument");
    model_ref m = { model, opts };
    const ib__reference_opener opener = { open_reference, &m };
    return ib__measure_accuracy_with(w, &opener, tolerance, ref, out, err);
}

ib_status ib_measure_accuracy(ib_workload *w, const char *model, const ib_model_options *opts,
                              double tolerance, ib_accuracy *out, ib_error *err)
{
    ib_accuracy_reference *ref = NULL;
    ib_status st = ib_measure_accuracy_kept(w, model, opts, tolerance, &ref, out, err);
    ib_accuracy_reference_free(ref);
    return st;
}

/* --- calibration on the spin backend's kernels ----------------------------- */

/* The GPU's spin kernel; the first open (the environment's probe, once
 * the arguments are checked) says when there is no GPU. */
static ib_status open_spin_kernel(double duration_us, int device_id, void *ctx, ib_workload **out,
                                  ib_error *err)
{
    (void)ctx;
    IB_FAIL_IF(!ib__gpu_available(device_id), err, IB_ERR_NO_DEVICE,
               "calibrate needs a CUDA GPU: none is usable as device %d", device_id);
    return ib_workload_open_spin_kernel(duration_us, device_id, out, err);
}

ib_status ib_calibrate(int device_id, const ib_config *cfg, const double *durations_us, size_t n,
                       ib_calibration_result *out, ib_error *err)
{
    const ib__known_kernel spin = { .open = open_spin_kernel, .device_id = device_id };
    return ib__calibrate_with(&spin, cfg, durations_us, n, out, err);
}

/* --- result files, with the keys of the runtime that wrote old ones -------- */

ib_status ib_latency_file_parse(const char *text, size_t len, ib_latency_file *out, ib_error *err)
{
    return ib__latency_file_read(text, len, ib__legacy_result_keys_get(), out, err);
}
