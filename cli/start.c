/* The start of a command that measures a model: its outputs prepared
 * (output.c), its workload opened (backend.c), the options judged against
 * the device it runs on (options.c). A file of its own, above the three
 * it joins, so that they do not call each other in a circle. */
#include "cli.h"

int cli_start(const cli_args *a, cli_outputs *out, ib_workload **w)
{
    *w = NULL;
    int code = cli_prepare_outputs(a, out);
    if (code != EXIT_OK) return code;
    /* A device that is not there is named before the model opens: --device
     * auto would otherwise fall back to the CPU and blame the option. */
    code = cli_check_device_id(a) ? cli_open_workload(a, w) : EXIT_BAD_INPUT;
    /* --device auto is resolved now: CUDA-only options are judged here. */
    if (code == EXIT_OK && cli_options_fit_device(a, ib_workload_get_info(*w)->device)) return EXIT_OK;
    cli_outputs_abort(out);
    if (code == EXIT_OK) {
        ib_workload_destroy(*w);
        *w = NULL;
        return EXIT_BAD_INPUT;
    }
    return code;
}
