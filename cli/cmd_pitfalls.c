/* inferbench pitfalls MODEL: the correct latency and what each classic
 * timing mistake would have reported, on the user's own model. */
#include "cli.h"

/* Something was measured: the correct row has samples. */
static bool has_figures(ib_status st, const ib_pitfalls_result *r)
{
    return st == IB_OK || r->rows[IB_PITFALL_CORRECT].stats.n > 0;
}

static void print_text(const ib_pitfalls_result *r, const ib_workload *w)
{
    char *text = ib_pitfalls_report_text(r, ib_workload_get_info(w));
    if (text) fputs(text, stdout);
    ib_free(text);
}

int cmd_pitfalls(cli_args *a)
{
    if (a->n_pos > 1) return cli_fail(IB_ERR_INVALID_ARG, "pitfalls takes one model");
    cli_output json = {0};
    if (a->json_path && !cli_output_open(&json, a->json_path)) return EXIT_BAD_INPUT;

    ib_workload *w = NULL;
    int code = cli_open_model(a, &w);
    if (code != EXIT_OK) {
        cli_output_abort(&json);
        return code;
    }
    a->cfg.cancel = &cli_cancel_flag;
    ib_pitfalls_result r;
    ib_error err = {{0}};
    ib_status st = ib_measure_pitfalls(w, &a->cfg, &r, &err);

    /* Whatever was measured is shown and saved, also after a failure. */
    if (has_figures(st, &r)) print_text(&r, w);
    if (json.f) {
        char *doc = has_figures(st, &r) ? ib_pitfalls_report_json(&r, ib_workload_get_info(w), &a->cfg)
                                        : NULL;
        if (!doc) cli_output_abort(&json);
        else if (!cli_output_commit(&json, doc)) code = EXIT_RUN_FAILED;
        ib_free(doc);
    }
    if (st != IB_OK) code = cli_fail(st, err.message);
    ib_workload_destroy(w);
    return code;
}
