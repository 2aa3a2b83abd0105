/* inferbench calibrate: the tool's accuracy and overhead on this GPU. */
#include "cli.h"

#include <string.h>

int cmd_calibrate(cli_args *a)
{
    if (a->n_pos == 1 && !strcmp(a->pos[0], "client")) return cmd_calibrate_client(a);
    if (a->n_pos > 0) return cli_fail(IB_ERR_INVALID_ARG, "calibrate takes no model");
    cli_outputs out;
    if (!cli_check_device_id(a) || !cli_outputs_prepare(&out, a, NULL)) return EXIT_BAD_INPUT;
    a->cfg.cancel = &cli_cancel_flag;
    cli_progress_attach(&a->cfg, a->quiet);
    ib_calibration_result r;
    ib_error err = { { 0 } };
    ib_status st = ib_calibrate(a->model_opts.device_id, &a->cfg, NULL, 0, &r, &err);
    bool measured = st == IB_OK || r.n_points > 0;
    ib_result res = { .kind = IB_RESULT_CALIBRATION, .calibration = &r, .cfg = &a->cfg };
    return cli_report(&out, measured ? &res : NULL, st, &err);
}
