/* --memory-cap-mb and its default: the memory a model command may use. */
#include "cli.h"

#include <stdio.h>

/* MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read. */
static size_t mem_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    fclose(f);
    return (size_t)kb * 1024;
}

/* Each limit is read by one provider only (the CUDA arena cap on a GPU,
 * the host cap on the CPU), so both are set and --device auto needs no
 * guess. On the CPU memory past what is free does not fail: the machine
 * swaps or the kernel kills us. So the host cap defaults to half of the RAM
 * free now (the library's own default, half of physical memory, knows
 * nothing of the other processes). */
void cli_apply_memory_cap(cli_args *a)
{
    size_t cap = a->memory_cap_mb * ((size_t)1 << 20);
    a->model_opts.device_memory_limit_bytes = cap;
    a->model_opts.host_memory_limit_bytes = cap ? cap : mem_available_bytes() / 2;
}
