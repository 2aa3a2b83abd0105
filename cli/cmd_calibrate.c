/* inferbench calibrate: the tool's accuracy and overhead on this GPU. */
#include "cli.h"

int cmd_calibrate(cli_args *a)
{
    if (a->n_pos > 0) return cli_fail(IB_ERR_INVALID_ARG, "calibrate takes no model");
    cli_output json = {0};
    if (a->json_path && !cli_output_open(&json, a->json_path)) return EXIT_BAD_INPUT;
    a->cfg.cancel = &cli_cancel_flag;
    ib_calibration_result r;
    ib_error err = {{0}};
    ib_status st = ib_calibrate(a->model_opts.device_id, &a->cfg, NULL, 0, &r, &err);
    int code = EXIT_OK;
    if (st == IB_OK || r.n_points > 0) {
        char *text = ib_calibration_report_text(&r);
        if (text) fputs(text, stdout);
        ib_free(text);
    }
    if (json.f) {
        char *doc = st == IB_OK || r.n_points > 0 ? ib_calibration_report_json(&r, &a->cfg) : NULL;
        if (!doc) cli_output_abort(&json);
        else if (!cli_output_commit(&json, doc)) code = EXIT_RUN_FAILED;
        ib_free(doc);
    }
    if (st != IB_OK) code = cli_fail(st, err.message);
    return code;
}
