/* The HTML printer: a self-contained page with plots (docs/report.md),
 * built in html_report.c. Calibration and comparison have no page. */
#include "report/fleet_report.h"
#include "report/printer.h"

static char *render_html(const ib_result *r)
{
    switch (r->kind) {
    case IB_RESULT_LATENCY: return ib_latency_report_html(r->latency, r->info);
    case IB_RESULT_THROUGHPUT: return ib_throughput_report_html(r->throughput, r->info);
    case IB_RESULT_PITFALLS: return ib_pitfalls_report_html(r->pitfalls, r->info);
    case IB_RESULT_SESSIONS: return ib_sessions_report_html(r->sessions);
    case IB_RESULT_THROUGHPUT_SESSIONS:
    case IB_RESULT_PITFALLS_SESSIONS:
    case IB_RESULT_GENERATION_SESSIONS:
    case IB_RESULT_GEN_SERVE_SESSIONS: return ib__sessions_report_html_doc(r->sessions_json);
    case IB_RESULT_SERVE: return ib_serve_report_html(r->serve, r->serve_cfg, r->info);
    case IB_RESULT_BEST:
        return r->best->generation ? ib__best_gen_html(r->best, r->generation) : ib__best_html(r->best);
    case IB_RESULT_FLEET:
        return r->fleet->serve ? ib__fleet_serve_report_html(r->fleet, r->info)
                               : ib__fleet_report_html(r->fleet, r->info);
    case IB_RESULT_GENERATION: return ib__gen_report_html(r->generation);
    case IB_RESULT_GEN_SERVE: return ib__gen_serve_rates_report_html(r);
    case IB_RESULT_BEST_SERVE: return ib__best_serve_html(r->best_serve, r->best_serve_cfg);
    case IB_RESULT_GEN_COMPARISON:
    case IB_RESULT_GEN_SERVE_COMPARISON:
    case IB_RESULT_CALIBRATION:
    case IB_RESULT_COMPARISON: break;
    }
    return NULL;
}

const ib__printer ib__html_printer = {
    "html",
    "html",
    IB__KIND_BIT(IB_RESULT_LATENCY) | IB__KIND_BIT(IB_RESULT_THROUGHPUT) | IB__KIND_BIT(IB_RESULT_PITFALLS) |
        IB__SESSIONS_KINDS | IB__KIND_BIT(IB_RESULT_SERVE) | IB__KIND_BIT(IB_RESULT_BEST) |
        IB__KIND_BIT(IB_RESULT_FLEET) | IB__KIND_BIT(IB_RESULT_GENERATION) |
        IB__KIND_BIT(IB_RESULT_GEN_SERVE) | IB__KIND_BIT(IB_RESULT_BEST_SERVE),
    render_html,
};
