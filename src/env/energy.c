/* The GPU's and the CPU's energy counters (env/energy.h). */
#include "env/energy.h"
#include "base/common.h"
#include "env/nvml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* NVML                                                                      */
/* ------------------------------------------------------------------------ */

static bool nvml_read(void *state, uint64_t *count)
{
    unsigned long long mj;
    if (!ib__nvml_total_energy_mj(state, &mj)) return false;
    *count = mj;
    return true;
}

static void nvml_close(void *state)
{
    ib__nvml_close(state);
    free(state);
}

bool ib__energy_open_gpu(int cuda_device_id, ib__energy_counter *c, char *note, size_t cap)
{
    *c = (ib__energy_counter){ 0 };
    ib__nvml_gpu *gpu = calloc(1, sizeof *gpu);
    if (!gpu) {
        snprintf(note, cap, "out of host memory for the energy counter");
        return false;
    }
    char why[160];
    if (!ib__nvml_open(gpu, cuda_device_id, why, sizeof why)) {
        /* NVML's note ends on what it means for clocks: say it for energy. */
        char *colon = strstr(why, ": GPU clocks");
        if (colon) *colon = '\0';
        snprintf(note, cap, "%s: no GPU energy counter", why);
        free(gpu);
        return false;
    }
    unsigned long long mj;
    if (!ib__nvml_total_energy_mj(gpu, &mj)) {
        snprintf(note, cap,
                 "this GPU has no energy counter (nvmlDeviceGetTotalEnergyConsumption: Volta and later)");
        nvml_close(gpu);
        return false;
    }
    snprintf(c->name, sizeof c->name, "NVML total energy, GPU %d", cuda_device_id);
    c->unit_j = 1e-3;
    c->range = 0; /* 64 bits of mJ: 584 million years at 1 kW */
    c->read = nvml_read;
    c->close = nvml_close;
    c->state = gpu;
    return true;
}

/* ------------------------------------------------------------------------ */
/* RAPL (powercap)                                                           */
/* ------------------------------------------------------------------------ */

typedef struct rapl {
    char energy_path[512];
} rapl;

/* One unsigned decimal number, the whole of a sysfs file. */
static bool read_u64(const char *path, uint64_t *v, int *error)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        *error = errno;
        return false;
    }
    unsigned long long x;
    bool ok = fscanf(f, "%llu", &x) == 1;
    fclose(f);
    *error = ok ? 0 : EINVAL;
    if (ok) *v = x;
    return ok;
}

static bool rapl_read(void *state, uint64_t *count)
{
    int error;
    return read_u64(((rapl *)state)->energy_path, count, &error);
}

static bool rapl_refuse(char *note, size_t cap, const char *path, int error)
{
    if (error == EACCES || error == EPERM)
        snprintf(note, cap,
                 "%s is readable by root only (Linux 5.10 on, against the PLATYPUS side channel): "
                 "no CPU energy",
                 path);
    else if (error == ENOENT)
        snprintf(note, cap, "no RAPL package counter (%s): no CPU energy", path);
    else
        snprintf(note, cap, "%s: %s: no CPU energy", path, strerror(error));
    return false;
}

bool ib__energy_open_rapl(const char *root, ib__energy_counter *c, char *note, size_t cap)
{
    *c = (ib__energy_counter){ 0 };
    if (!root) root = "/sys/class/powercap";
    char path[512];
    int error;
    uint64_t range, now;
    snprintf(path, sizeof path, "%s/intel-rapl:0/max_energy_range_uj", root);
    if (!read_u64(path, &range, &error)) return rapl_refuse(note, cap, path, error);
    snprintf(path, sizeof path, "%s/intel-rapl:0/energy_uj", root);
    if (!read_u64(path, &now, &error)) return rapl_refuse(note, cap, path, error);
    if (range == 0 || now >= range) {
        snprintf(note, cap, "RAPL's counter reads %llu uJ beyond its range %llu uJ: no CPU energy",
                 (unsigned long long)now, (unsigned long long)range);
        return false;
    }
    rapl *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(note, cap, "out of host memory for the energy counter");
        return false;
    }
    ib__strlcpy(r->energy_path, path, sizeof r->energy_path);
    snprintf(c->name, sizeof c->name, "RAPL package 0");
    c->unit_j = 1e-6;
    /* energy_uj goes back to 0 at max_energy_range_uj (a wrap reads as
     * v1 + range - v0, as the kernel's own tools and Zeus read it). */
    c->range = range;
    c->read = rapl_read;
    c->close = free;
    c->state = r;
    return true;
}

void ib__energy_close(ib__energy_counter *c)
{
    if (c->close && c->state) c->close(c->state);
    *c = (ib__energy_counter){ 0 };
}
