/* Energy counters: a cumulative count of joules kept by the hardware, read
 * as it is (the arithmetic on it, wrap-around included, is
 * src/core/energy.c's). Two kinds: the GPU's through NVML
 * (nvmlDeviceGetTotalEnergyConsumption, mJ) and the CPU package's through
 * RAPL's powercap files (energy_uj, which wraps at max_energy_range_uj).
 * A test's counter is any other table: the fake backend scripts one on its
 * virtual clock. */
#ifndef IB_ENV_ENERGY_H
#define IB_ENV_ENERGY_H

#include "inferbench.h"
#include "timer/energy_counter.h"

#include <stdint.h>

/* The GPU's counter for CUDA device cuda_device_id. False with the reason
 * in note[cap] (no NVML, no such device, a GPU without the counter). */
bool ib__energy_open_gpu(int cuda_device_id, ib__energy_counter *c, char *note, size_t cap);

/* The CPU's package 0 counter under root (NULL: /sys/class/powercap; tests
 * give a folder of their own). False with the reason in note[cap]. */
bool ib__energy_open_rapl(const char *root, ib__energy_counter *c, char *note, size_t cap);

/* Releases c (an unopened, zeroed one too). */
void ib__energy_close(ib__energy_counter *c);

#endif
