/* Accuracy beside speed (docs/precision.md): the program's side. */
#include "cli.h"

#include <string.h>

int cli_accuracy(const cli_args *a, ib_workload *w, ib_accuracy *acc)
{
    memset(acc, 0, sizeof *acc);
    const ib_workload_info *info = ib_workload_get_info(w);
    /* A backend that states no arithmetic (a plugin) has no fp32 reference
     * to be judged against; fp32 is the reference itself. */
    if (!info->math[0]) return EXIT_OK;
    if (!strcmp(info->math, "fp32")) {
        if (a->max_error > 0) cli_warn("--max-error has no effect: the math is fp32, the reference itself");
        return EXIT_OK;
    }
    /* A float16 model has no float32 of itself to run (docs/precision.md). */
    if (info->math_of_model) {
        if (a->max_error > 0)
            cli_warn("--max-error has no effect: the model is %s itself, with no fp32 reference to judge it "
                     "against",
                     info->math);
        return EXIT_OK;
    }
    ib_error err = { { 0 } };
    ib_status st = ib_measure_accuracy(w, a->model, &a->model_opts, a->max_error, acc, &err);
    return st == IB_OK ? EXIT_OK : cli_fail(st, err.message);
}
