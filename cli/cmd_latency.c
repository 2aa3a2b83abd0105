/* inferbench latency MODEL: the distribution of one forward pass. */
#include "cli.h"


static void print_text(const ib_latency_result *r, const ib_workload *w)
{
    char *text = ib_latency_report_text(r, ib_workload_get_info(w));
    if (text) fputs(text, stdout);
    ib_free(text);
}

int cmd_latency(cli_args *a)
{
    if (a->n_pos > 1) return cli_fail(IB_ERR_INVALID_ARG, "latency takes one model");
    cli_output json = {0};
    if (a->json_path && !cli_output_open(&json, a->json_path)) return EXIT_BAD_INPUT;

    ib_workload *w = NULL;
    int code = cli_open_model(a, &w);
    if (code != EXIT_OK) {
        cli_output_abort(&json);
        return code;
    }
    a->cfg.cancel = &cli_cancel_flag;
    ib_latency_result r;
    ib_error err = {{0}};
    ib_status st = ib_measure_latency(w, &a->cfg, &r, &err);

    /* Whatever was measured is shown and saved, also after a failure. */
    if (st == IB_OK || r.n > 0) print_text(&r, w);
    if (json.f) {
        char *doc = st == IB_OK || r.n > 0 ? ib_latency_report_json(&r, ib_workload_get_info(w), &a->cfg)
                                           : NULL;
        if (!doc) cli_output_abort(&json);
        else if (!cli_output_commit(&json, doc)) code = EXIT_RUN_FAILED;
        ib_free(doc);
    }
    if (st != IB_OK) code = cli_fail(st, err.message);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
    return code;
}
