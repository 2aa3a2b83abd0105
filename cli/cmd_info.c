/* inferbench info: what this machine offers the measurement. Exit 0 when a
 * CUDA GPU is usable, 1 when not (scripts and the GPU tests ask so). */
#include "cli.h"

/* One line per backend with a runtime to load: its version, build and
 * library, or that it cannot be loaded. */
static void print_runtimes(void)
{
    for (size_t i = 0; i < ib_backend_count(); i++) {
        ib_runtime_info rt;
        if (!ib_backend_runtime(ib_backend_get(i), &rt)) continue;
        if (rt.version[0])
            printf("%-15s %s, %s build (%s)\n", rt.name, rt.version, rt.build, rt.library);
        else
            printf("%-15s cannot be loaded (opening a model says why)\n", rt.name);
    }
}

/* The backends line: the forward-pass backends (--backend), then the
 * generative ones (generate --backend), so that llama is not left out. */
static void print_backends(void)
{
    char names[256];
    cli_backend_names(names, sizeof names);
    printf("backends        %s (--backend; out of tree: plugin:PATH.so); generative: ", names);
    for (size_t i = 0; i < ib_gen_backend_count(); i++)
        printf("%s%s", i ? ", " : "", ib_gen_backend_get(i)->name);
    printf(" (generate --backend)\n");
}

int cmd_info(cli_args *a)
{
    if (a->n_pos > 0) return cli_fail(IB_ERR_INVALID_ARG, "info takes no argument");
    ib_env env;
    bool has_gpu;
    ib_env_probe(a->model_opts.device_id, &env, &has_gpu);
    printf("inferbench      %s\n", env.tool_version);
    print_runtimes();
    printf("cpu             %s\n", env.host_cpu);
    print_backends();
    if (!has_gpu) {
        /* A device index past the machine's: which devices there are. */
        char names[CLI_MAX_DEVICES_LISTED][IB_DEVICE_NAME_LEN], line[CLI_DEVICES_TEXT + 64];
        size_t n = ib_cuda_devices(names, CLI_MAX_DEVICES_LISTED);
        if (n > 0 && cli_device_id_refusal(line, sizeof line, a->model_opts.device_id,
                                           (const char(*)[IB_DEVICE_NAME_LEN])names, n))
            printf("gpu             %s\n", line);
        else
            printf("gpu             none usable (measurements run on the CPU)\n");
        return EXIT_RUN_FAILED;
    }
    printf("gpu             %s (device %d)\n", env.gpu_name, a->model_opts.device_id);
    printf("cuda            driver %d.%d, runtime %d.%d\n", env.cuda_driver_version / 1000,
           env.cuda_driver_version % 1000 / 10, env.cuda_runtime_version / 1000,
           env.cuda_runtime_version % 1000 / 10);
    printf("l2 cache        %llu bytes\n", env.l2_cache_bytes);
    if (env.nvml_available) {
        printf("driver          %s\n", env.driver_version);
        printf("persistence     %s\n", env.persistence_mode == 1   ? "on"
                                       : env.persistence_mode == 0 ? "off"
                                                                   : "?");
        printf("max clocks      SM %u MHz, memory %u MHz\n", env.sm_clock_max_mhz, env.mem_clock_max_mhz);
    } else {
        printf("nvml            %s\n", env.nvml_note);
    }
    return EXIT_OK;
}
