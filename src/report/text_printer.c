/* The text printer: the report for people (docs/report.md). Each kind's
 * text is built in its own report file (latency_report.c, ...). */
#include "report/fleet_report.h"
#include "report/printer.h"

/* best's text of either kind of model (the winner's generation apart:
 * ib_report with ib_result.generation adds it). */
char *ib_best_report_text(const ib_best_result *r)
{
    return r->generation ? ib__best_gen_text(r, NULL) : ib__best_text(r);
}

static char *render_text(const ib_result *r)
{
    switch (r->kind) {
    case IB_RESULT_LATENCY: return ib_latency_report_text(r->latency, r->info);
    case IB_RESULT_THROUGHPUT: return ib_throughput_report_text(r->throughput, r->info);
    case IB_RESULT_PITFALLS: return ib_pitfalls_report_text(r->pitfalls, r->info);
    case IB_RESULT_CALIBRATION: return ib_calibration_report_text(r->calibration);
    case IB_RESULT_COMPARISON:
        return ib_comparison_report_text(r->comparison, r->a, r->a_name, r->b, r->b_name);
    case IB_RESULT_SESSIONS: return ib_sessions_report_text(r->sessions);
    case IB_RESULT_SERVE: return ib_serve_report_text(r->serve, r->serve_cfg, r->info);
    case IB_RESULT_BEST:
        return r->best->generation ? ib__best_gen_text(r->best, r->generation) : ib__best_text(r->best);
    case IB_RESULT_FLEET:
        return r->fleet->serve ? ib__fleet_serve_report_text(r->fleet, r->info)
                               : ib__fleet_report_text(r->fleet, r->info);
    case IB_RESULT_GENERATION: return ib__gen_report_text(r->generation);
    case IB_RESULT_GEN_SERVE: return ib__gen_serve_rates_report_text(r);
    case IB_RESULT_BEST_SERVE: return ib__best_serve_text(r->best_serve, r->best_serve_cfg);
    case IB_RESULT_GEN_COMPARISON: return ib__gen_comparison_text(r);
    case IB_RESULT_GEN_SERVE_COMPARISON: return ib__gen_serve_comparison_text(r);
    case IB_RESULT_THROUGHPUT_SESSIONS:
    case IB_RESULT_PITFALLS_SESSIONS:
    case IB_RESULT_GENERATION_SESSIONS:
    case IB_RESULT_GEN_SERVE_SESSIONS: return ib__sessions_report_text_doc(r->sessions_json);
    }
    return NULL;
}

const ib__printer ib__text_printer = { "text", "txt",
                                       IB__ALL_KINDS | IB__SESSIONS_KINDS |
                                           IB__KIND_BIT(IB_RESULT_GEN_COMPARISON) |
                                           IB__KIND_BIT(IB_RESULT_GEN_SERVE) |
                                           IB__KIND_BIT(IB_RESULT_GEN_SERVE_COMPARISON) |
                                           IB__KIND_BIT(IB_RESULT_BEST_SERVE),
                                       render_text };
