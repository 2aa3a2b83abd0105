/* The accuracy check's method (src/core/accuracy.c), handed its fp32
 * reference: the method opens no workload. ib_measure_accuracy and
 * ib_measure_accuracy_kept (src/entry/entry.c) open it on the model's
 * backend through the registry; a test may hand it any workload. */
#ifndef IB_CORE_ACCURACY_H
#define IB_CORE_ACCURACY_H

#include "workload/workload.h"

typedef struct ib__reference_opener {
    /* Opens strict fp32 (TF32 off, unconverted, the runtime's defaults) of
     * the model w runs, on w's device at w's batch. */
    ib_status (*open)(ib_workload *w, void *ctx, ib_workload **ref, ib_error *err);
    void *ctx;
} ib__reference_opener;

/* ib_measure_accuracy_kept on a reference opened by opener (only when *ref
 * is NULL; its time then in out->ms); w, ref and out not NULL. */
ib_status ib__measure_accuracy_with(ib_workload *w, const ib__reference_opener *opener, double tolerance,
                                    ib_accuracy_reference **ref, ib_accuracy *out, ib_error *err);

#endif
