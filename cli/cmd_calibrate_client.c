/* inferbench calibrate client: the HTTP client's own error against the
 * scripted server, rate by rate, and the load at which it stops being
 * accurate (docs/script-server.md). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

/* Prints the text report where the human reads it, writes the JSON. */
static int report(cli_outputs *out, const ib_client_calibration_result *r)
{
    char *text = ib_client_calibration_report_text(r);
    char *json = cli_outputs_wanted(out, CLI_OUT_JSON) ? ib_client_calibration_report_json(r) : NULL;
    FILE *human = cli_output_is_stdout(&out->file[CLI_OUT_JSON]) ? stderr : stdout;
    if (text) fputs(text, human);
    bool ok = text && (!cli_outputs_wanted(out, CLI_OUT_JSON) ||
                       (json && cli_output_commit(&out->file[CLI_OUT_JSON], json)));
    free(text);
    free(json);
    return ok ? EXIT_OK : EXIT_RUN_FAILED;
}

int cmd_calibrate_client(cli_args *a)
{
    cli_outputs out;
    if (!cli_outputs_prepare(&out, a, NULL)) return EXIT_BAD_INPUT;
    cli_output kept; /* the ceiling, for serve --endpoint to state */
    if (!cli_client_calibration_prepare(&kept)) {
        cli_outputs_abort(&out);
        return EXIT_BAD_INPUT;
    }
    ib_client_calibration_config cfg;
    ib_client_calibration_config_init(&cfg);
    cfg.cancel = &cli_cancel_flag;
    ib_client_calibration_result r;
    ib_error err = { { 0 } };
    ib_status st = ib_calibrate_client(&cfg, &r, &err);
    if (st != IB_OK && r.n_points == 0) {
        cli_outputs_abort(&out);
        cli_output_abort(&kept);
        return cli_fail(st, err.message);
    }
    FILE *human = cli_output_is_stdout(&out.file[CLI_OUT_JSON]) ? stderr : stdout;
    int code = report(&out, &r);
    /* Kept only whole: an interrupted calibration leaves the one on file. */
    if (st != IB_OK || code != EXIT_OK) cli_output_abort(&kept);
    if (st != IB_OK) return cli_fail(st, err.message);
    if (code == EXIT_OK && !cli_client_calibration_save(&kept, &r, human)) return EXIT_RUN_FAILED;
    return code;
}
