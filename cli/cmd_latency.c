/* inferbench latency MODEL: the distribution of one forward pass. */
#include "cli.h"

int cmd_latency(cli_args *a)
{
    if (cli_sessions_wanted(a)) return cli_run_sessions(a, IB_RESULT_LATENCY);
    if (cli_fleet_wanted(a)) return cli_run_fleet(a, IB_RESULT_LATENCY, 0);
    if (a->session_index) cli_session_child_setup(a);
    cli_outputs out;
    ib_workload *w;
    cli_apply_memory_cap(a);
    int code = cli_start(a, &out, &w);
    if (code != EXIT_OK) return code;
    ib_accuracy accuracy;
    code = cli_require_idle_gpu(a, true);
    if (code == EXIT_OK) code = cli_accuracy(a, w, &accuracy);
    if (code != EXIT_OK) {
        cli_outputs_abort(&out);
        ib_workload_destroy(w);
        return code;
    }
    a->cfg.cancel = &cli_cancel_flag;
    cli_progress_attach(&a->cfg, a->quiet);
    ib_latency_result r;
    ib_error err = { { 0 } };
    ib_status st = ib_measure_latency(w, &a->cfg, &r, &err);
    st = cli_idle_gpu_after(a, &r.env, st, &err);
    r.accuracy = accuracy;
    bool measured = st == IB_OK || r.n > 0;
    ib_result res = {
        .kind = IB_RESULT_LATENCY, .latency = &r, .info = ib_workload_get_info(w), .cfg = &a->cfg
    };
    code = cli_report(&out, measured ? &res : NULL, st, &err);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
    return code;
}
