/* Accuracy beside speed: the outputs of a reduced arithmetic (TF32, fp16,
 * bf16) against strict fp32 on the same inputs (docs/precision.md). The
 * metrics are pure functions; a reference runs strict fp32 once and keeps
 * its outputs, against which each workload is run and compared. The method
 * is handed the reference (ib__reference_opener): the public calls that
 * open it on the model's backend are src/entry/entry.c's. */
#include "core/accuracy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOP_K 5

/* Indices of the k largest of row[0..c) into top[0..k), largest first
 * (ties: the lower index first; NaN counts as smallest). */
static void top_indices(const double *row, int64_t c, int k, int64_t *top)
{
    for (int j = 0; j < k; j++) {
        int64_t best = -1;
        for (int64_t i = 0; i < c; i++) {
            bool taken = false;
            for (int t = 0; t < j; t++) taken = taken || top[t] == i;
            if (taken) continue;
            if (best < 0 || row[i] > row[best] || (isnan(row[best]) && !isnan(row[i]))) best = i;
        }
        top[j] = best;
    }
}

static bool same_set(const int64_t *a, const int64_t *b, int k)
{
    for (int i = 0; i < k; i++) {
        bool found = false;
        for (int j = 0; j < k; j++) found = found || a[i] == b[j];
        if (!found) return false;
    }
    return true;
}

/* Top-1 and top-5 agreement over the rows of [batch, C] scores, and where
 * a row differs, how close the reference's call was: the gap between its
 * k-th and (k+1)-th scores, the largest such gap kept. */
static void class_agreement(const double *reference, const double *value, int64_t rows, int64_t c,
                            ib_output_accuracy *out)
{
    int k = c < TOP_K ? (int)c : TOP_K;
    int ranked = c > k ? k + 1 : k; /* the reference's (k+1)-th, where there is one, for the gap */
    int64_t top1 = 0, top5 = 0;
    out->top1_gap = out->top5_gap = NAN;
    for (int64_t r = 0; r < rows; r++) {
        const double *ref = reference + r * c;
        int64_t a[TOP_K + 1], b[TOP_K];
        top_indices(ref, c, ranked, a);
        top_indices(value + r * c, c, k, b);
        if (a[0] == b[0])
            top1++;
        else
            out->top1_gap = fmax(out->top1_gap, ref[a[0]] - ref[a[1]]);
        if (same_set(a, b, k))
            top5++;
        else
            out->top5_gap = fmax(out->top5_gap, ref[a[k - 1]] - ref[a[k]]);
    }
    out->top1_agreement = rows ? (double)top1 / (double)rows : 0;
    out->top5_agreement = rows ? (double)top5 / (double)rows : 0;
}

void ib_accuracy_compare(const double *reference, const double *value, size_t n, int rank,
                         const int64_t *dims, ib_output_accuracy *out)
{
    double max_abs = 0, max_rel = 0, sum_abs = 0, dot = 0, rr = 0, vv = 0;
    bool finite = true;
    for (size_t i = 0; i < n; i++) {
        double r = reference[i], v = value[i], d = fabs(v - r);
        finite = finite && isfinite(r) && isfinite(v);
        if (d > max_abs || isnan(d)) max_abs = isnan(max_abs) ? max_abs : d;
        if (r != 0 && (d / fabs(r) > max_rel || isnan(d))) max_rel = isnan(max_rel) ? max_rel : d / fabs(r);
        sum_abs += d;
        dot += r * v, rr += r * r, vv += v * v;
    }
    out->n = n;
    out->compared = true;
    out->max_abs_error = max_abs;
    out->max_rel_error = max_rel;
    out->mean_abs_error = n ? sum_abs / (double)n : 0;
    if (!finite)
        out->cosine = NAN;
    else if (rr == 0 && vv == 0)
        out->cosine = 1;
    else if (rr == 0 || vv == 0)
        out->cosine = 0;
    else
        out->cosine = dot / (sqrt(rr) * sqrt(vv));
    out->class_scores = rank == 2 && dims && dims[0] >= 1 && dims[1] >= 2 && (size_t)(dims[0] * dims[1]) == n;
    if (out->class_scores) class_agreement(reference, value, dims[0], dims[1], out);
}

/* Runs w once and reads every output (non-float ones stay empty). */
static ib_status run_and_read(ib_workload *w, ib__output_values *outs, int n, ib_error *err)
{
    IB_TRY(w->ops->run(w, err));
    IB_TRY(ib__workload_synchronize(w, err));
    for (int i = 0; i < n; i++) {
        ib_error why;
        ib_status st = w->ops->read_output(w, (size_t)i, &outs[i], &why);
        if (st != IB_OK && st != IB_ERR_UNSUPPORTED) return ib__fail(err, st, "%s", why.message);
    }
    return IB_OK;
}

static void compare_output(const ib__output_values *ref, const ib__output_values *got, double tolerance,
                           ib_output_accuracy *out)
{
    bool same_shape = ref->values && got->values && ref->n == got->n && ref->rank == got->rank &&
                      memcmp(ref->dims, got->dims, sizeof(int64_t) * (size_t)ref->rank) == 0;
    if (!ref->values || !got->values) {
        ib__strlcpy(out->why, "not a float output", sizeof out->why);
        return;
    }
    if (!same_shape) {
        ib__strlcpy(out->why, "its shape differs from the reference's", sizeof out->why);
        return;
    }
    ib_accuracy_compare(ref->values, got->values, ref->n, ref->rank, ref->dims, out);
    out->over_tolerance = tolerance > 0 && !(out->max_abs_error <= tolerance);
}

/* Strict fp32's outputs, on the inputs of the workload it was opened for. */
struct ib_accuracy_reference {
    ib_device_kind device;
    int64_t batch;
    int n_outputs;
    ib__output_values outputs[IB_MAX_TENSORS];
};

static ib_status reference_open(ib_workload *w, const ib__reference_opener *opener,
                                ib_accuracy_reference **out, ib_error *err)
{
    ib_accuracy_reference *ref = calloc(1, sizeof *ref);
    IB_FAIL_IF(!ref, err, IB_ERR_NO_MEMORY, "out of host memory");
    ref->device = w->info.device;
    ref->batch = w->info.batch;
    ref->n_outputs = w->info.n_outputs;
    ib_workload *fp32 = NULL;
    ib_status st = opener->open(w, opener->ctx, &fp32, err);
    if (st == IB_OK) st = run_and_read(fp32, ref->outputs, ref->n_outputs, err);
    ib_workload_destroy(fp32);
    if (st != IB_OK) {
        ib_accuracy_reference_free(ref);
        return st;
    }
    *out = ref;
    return IB_OK;
}

void ib_accuracy_reference_free(ib_accuracy_reference *ref)
{
    if (!ref) return;
    for (int i = 0; i < ref->n_outputs; i++) ib__output_values_free(&ref->outputs[i]);
    free(ref);
}

/* w run once and compared with the reference's outputs. */
static ib_status against(ib_workload *w, const ib_accuracy_reference *ref, double tolerance, ib_accuracy *out,
                         ib_error *err)
{
    IB_FAIL_IF(w->info.device != ref->device, err, IB_ERR_INVALID_ARG,
               "accuracy: the reference ran on another device than this workload");
    IB_FAIL_IF(w->info.batch != ref->batch || w->info.n_outputs != ref->n_outputs, err, IB_ERR_INVALID_ARG,
               "accuracy: the reference ran at batch %lld with %d outputs, this workload is at batch %lld "
               "with %d",
               (long long)ref->batch, ref->n_outputs, (long long)w->info.batch, w->info.n_outputs);
    int n = w->info.n_outputs;
    ib__output_values got[IB_MAX_TENSORS] = { 0 };
    ib_status st = run_and_read(w, got, n, err);
    if (st == IB_OK) {
        out->measured = true;
        ib__strlcpy(out->math, w->info.math, sizeof out->math);
        ib__strlcpy(out->reference, "fp32, TF32 off", sizeof out->reference);
        out->batch = w->info.batch;
        out->tolerance = tolerance;
        out->n_outputs = n;
        for (int i = 0; i < n; i++) {
            ib_output_accuracy *o = &out->outputs[i];
            ib__strlcpy(o->name, w->info.outputs[i].name, sizeof o->name);
            compare_output(&ref->outputs[i], &got[i], tolerance, o);
            out->over_tolerance = out->over_tolerance || o->over_tolerance;
        }
    }
    for (int i = 0; i < n; i++) ib__output_values_free(&got[i]);
    return st;
}

ib_status ib__measure_accuracy_with(ib_workload *w, const ib__reference_opener *opener, double tolerance,
                                    ib_accuracy_reference **ref, ib_accuracy *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    IB_FAIL_IF(!w->ops->read_output, err, IB_ERR_UNSUPPORTED,
               "accuracy: this workload's outputs cannot be read");
    double t0 = ib__now_ms();
    ib_status st = *ref ? IB_OK : reference_open(w, opener, ref, err);
    if (st == IB_OK) st = against(w, *ref, tolerance, out, err);
    out->ms = ib__now_ms() - t0;
    return st;
}
