/* inferbench latency MODEL: the distribution of one forward pass. */
#include "cli.h"

int cmd_latency(cli_args *a)
{
    cli_output json, html;
    ib_workload *w;
    cli_apply_memory_cap(a);
    int code = cli_start(a, &json, &html, &w);
    if (code != EXIT_OK) return code;
    a->cfg.cancel = &cli_cancel_flag;
    cli_progress_attach(&a->cfg, a->quiet);
    ib_latency_result r;
    ib_error err = {{0}};
    ib_status st = ib_measure_latency(w, &a->cfg, &r, &err);
    bool measured = st == IB_OK || r.n > 0;
    const ib_workload_info *info = ib_workload_get_info(w);
    code = cli_finish_with_html(
        &json, &html, measured ? ib_latency_report_text(&r, info) : NULL,
        measured && cli_output_wanted(&json) ? ib_latency_report_json(&r, info, &a->cfg) : NULL,
        measured && cli_output_wanted(&html) ? ib_latency_report_html(&r, info) : NULL, st, &err);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
    return code;
}
