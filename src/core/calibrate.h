/* Calibration's source of kernels of known duration, apart from the GPU's
 * spin kernel, so that the whole calibration (its points, the harness
 * correction, a failure part-way) runs on the fake backend in the tests. */
#ifndef IB_CORE_CALIBRATE_H
#define IB_CORE_CALIBRATE_H

#include "workload/workload.h"

typedef struct ib__known_kernel {
    /* A workload each of whose runs keeps the device busy duration_us
     * (0: an empty kernel, the harness). */
    ib_status (*open)(double duration_us, int device_id, void *ctx, ib_workload **out, ib_error *err);
    void *ctx;
    int device_id;
} ib__known_kernel;

/* ib_calibrate on k's kernels; ib_calibrate (src/entry/entry.c, which
 * opens the spin backend's kernels: the method opens none) is this on the
 * spin kernel, once a GPU is known to be there. */
ib_status ib__calibrate_with(const ib__known_kernel *k, const ib_config *cfg, const double *durations_us,
                             size_t n, ib_calibration_result *out, ib_error *err);

#endif
