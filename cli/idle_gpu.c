/* --require-idle-gpu: a GPU another process computes on gives figures that
 * include its interference (measured on an H200: 12.66 ms instead of 6.71,
 * with a tight interval and no other sign). Refused before measuring,
 * failed after (the results kept) when one appeared during. */
#include "cli.h"

#include <string.h>

/* "PID name, PID name" of the processes, into buf. */
static void list_processes(const ib_process_info *p, size_t n, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < IB_MAX_OTHER_PROCESSES; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%u %s", i ? ", " : "", p[i].pid, p[i].name);
    }
}

int cli_require_idle_gpu(const cli_args *a, bool self_on_gpu)
{
    if (!a->require_idle_gpu) return EXIT_OK;
    ib_process_info others[IB_MAX_OTHER_PROCESSES];
    size_t n;
    ib_error err = { { 0 } };
    if (ib_gpu_other_processes(a->model_opts.device_id, self_on_gpu, others, IB_MAX_OTHER_PROCESSES, &n,
                               &err) != IB_OK) {
        fprintf(stderr, "inferbench: --require-idle-gpu: cannot tell whether the GPU is idle: %s\n",
                err.message);
        return EXIT_BAD_INPUT;
    }
    if (n == 0) return EXIT_OK;
    char list[1024];
    list_processes(others, n, list, sizeof list);
    fprintf(stderr,
            "inferbench: the GPU is busy: %zu other process%s compute on it (%s); --require-idle-gpu\n", n,
            n == 1 ? "" : "es", list);
    return EXIT_BAD_INPUT;
}

ib_status cli_idle_gpu_after(const cli_args *a, const ib_env *env, ib_status st, ib_error *err)
{
    if (!a->require_idle_gpu || st != IB_OK || env->n_other_gpu_processes == 0) return st;
    char list[1024];
    list_processes(env->other_gpu_processes, env->n_other_gpu_processes, list, sizeof list);
    snprintf(err->message, sizeof err->message,
             "%zu other process%s used the GPU during the measurement (%.300s); --require-idle-gpu",
             env->n_other_gpu_processes, env->n_other_gpu_processes == 1 ? "" : "es", list);
    return IB_ERR_RUNTIME;
}
