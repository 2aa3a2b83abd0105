/* Private to src/env: NVML, loaded at run time. inferbench neither links
 * nor includes NVML: libnvidia-ml.so.1 comes with the driver, so a machine
 * without a driver simply has none, and the tool still starts there. */
#ifndef IB_ENV_NVML_H
#define IB_ENV_NVML_H

#include "inferbench.h"

/* One GPU seen through NVML, between ib__nvml_open and ib__nvml_close
 * (each pair is one nvmlInit_v2 / nvmlShutdown: NVML counts them). */
typedef struct ib__nvml_gpu {
    void *device; /* nvmlDevice_t */
} ib__nvml_gpu;

/* Finds CUDA device cuda_device_id in NVML, by PCI bus id (NVML's indices
 * ignore CUDA_VISIBLE_DEVICES and may follow another order), falling back to
 * the same index when the bus id is not to be had. On failure returns false
 * and writes why into note[cap]. */
bool ib__nvml_open(ib__nvml_gpu *gpu, int cuda_device_id, char *note, size_t cap);
void ib__nvml_close(ib__nvml_gpu *gpu);

/* What NVML answers of the current state; a query that fails leaves its
 * field unknown (pstate -1, others 0). t_ms is stored as given. */
void ib__nvml_sample(const ib__nvml_gpu *gpu, double t_ms, ib_gpu_sample *out);

/* Driver version, persistence mode, maximum clocks and the enforced power
 * limit into env (the fields NVML cannot read are left as they are). */
void ib__nvml_static(const ib__nvml_gpu *gpu, ib_env *env);

/* The pids and GPU memory of the compute processes on the device, at most
 * cap; returns how many there are (may exceed cap), or -1 when NVML cannot
 * tell. */
int ib__nvml_compute_processes(const ib__nvml_gpu *gpu, unsigned *pids, unsigned long long *memory,
                               size_t cap);

/* The energy the GPU used since the driver was loaded, in millijoules
 * (nvmlDeviceGetTotalEnergyConsumption): false where NVML or the GPU has no
 * such counter (before Volta, some virtual GPUs). The value moves in steps
 * (every 100 ms on an H200): src/core/energy.c learns how often. */
bool ib__nvml_total_energy_mj(const ib__nvml_gpu *gpu, unsigned long long *millijoules);

#endif
