/* Which devices there are, in the words of a refusal: a --device-id that
 * names no device, and a CUDA-only option on a model that runs on the
 * CPU, say what the machine has rather than what the device chosen
 * automatically happened to be (issue 28). The wording is made from a
 * list of names (cli_describe_devices and the reasons below take one, so
 * that tests script it); the list itself comes from ib_cuda_devices. */
#include "cli.h"

#include <string.h>

void cli_describe_devices(char *buf, size_t cap, const char (*names)[IB_DEVICE_NAME_LEN], size_t n)
{
    if (n == 0) {
        snprintf(buf, cap, "none");
        return;
    }
    size_t used = (size_t)snprintf(buf, cap, "%zu (", n);
    for (size_t i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%zu: %s", i ? ", " : "", i, names[i]);
    if (used < cap) snprintf(buf + used, cap - used, ")");
}

bool cli_device_id_refusal(char *buf, size_t cap, int device_id, const char (*names)[IB_DEVICE_NAME_LEN],
                           size_t n)
{
    if (device_id >= 0 && (size_t)device_id < n) return false;
    char list[CLI_DEVICES_TEXT];
    cli_describe_devices(list, sizeof list, names, n);
    snprintf(buf, cap, "there is no CUDA device %d: this machine has %s", device_id, list);
    return true;
}

void cli_cpu_reason(char *buf, size_t cap, bool cpu_asked, const char *backend,
                    const char (*names)[IB_DEVICE_NAME_LEN], size_t n)
{
    if (cpu_asked) {
        snprintf(buf, cap, "the model runs on the CPU");
        return;
    }
    if (n == 0) {
        snprintf(buf, cap, "the model runs on the CPU, as this machine has no CUDA device");
        return;
    }
    char list[CLI_DEVICES_TEXT];
    cli_describe_devices(list, sizeof list, names, n);
    snprintf(buf, cap, "backend '%s' runs the model on the CPU, though this machine has CUDA devices: %s",
             backend, list);
}

/* This machine's CUDA devices into names[cap]; how many (cap holds every
 * device ib_cuda_devices can count). */
static size_t machine_devices(char (*names)[IB_DEVICE_NAME_LEN], size_t cap)
{
    size_t n = ib_cuda_devices(names, cap);
    return n < cap ? n : cap;
}

bool cli_check_device_id(const cli_args *a)
{
    if (a->model_opts.device == IB_DEVICE_CPU || a->model_opts.device_id == 0) return true;
    char names[CLI_MAX_DEVICES_LISTED][IB_DEVICE_NAME_LEN];
    size_t n = machine_devices(names, CLI_MAX_DEVICES_LISTED);
    char line[CLI_DEVICES_TEXT + 64];
    if (!cli_device_id_refusal(line, sizeof line, a->model_opts.device_id,
                               (const char(*)[IB_DEVICE_NAME_LEN])names, n))
        return true;
    cli_progress_clear();
    fprintf(stderr, "inferbench: %s\n", line);
    return false;
}

void cli_cpu_reason_here(const cli_args *a, char *buf, size_t cap)
{
    char names[CLI_MAX_DEVICES_LISTED][IB_DEVICE_NAME_LEN];
    bool asked = a->model_opts.device == IB_DEVICE_CPU;
    size_t n = asked ? 0 : machine_devices(names, CLI_MAX_DEVICES_LISTED);
    const ib_backend *b = cli_backend(a);
    cli_cpu_reason(buf, cap, asked, b ? b->name : "?", (const char(*)[IB_DEVICE_NAME_LEN])names, n);
}
