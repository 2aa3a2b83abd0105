/* The JSON printer: one document per result for machines (docs/json.md).
 * Each kind's document is built in its own report file. */
#include "report/fleet_report.h"
#include "report/printer.h"

#include <string.h>

/* best's JSON of either kind of model (the winner's generation apart:
 * ib_report with ib_result.generation adds it). */
char *ib_best_report_json(const ib_best_result *r, const ib_best_config *cfg)
{
    return r->generation ? ib__best_gen_json(r, cfg, NULL, NULL) : ib__best_json(r, cfg);
}

static char *render_json(const ib_result *r)
{
    /* A document records the configuration it was measured with: without
     * it there is no document. */
    switch (r->kind) {
    case IB_RESULT_LATENCY: return r->cfg ? ib_latency_report_json(r->latency, r->info, r->cfg) : NULL;
    case IB_RESULT_THROUGHPUT:
        return r->throughput_cfg ? ib_throughput_report_json(r->throughput, r->info, r->throughput_cfg)
                                 : NULL;
    case IB_RESULT_PITFALLS: return r->cfg ? ib_pitfalls_report_json(r->pitfalls, r->info, r->cfg) : NULL;
    case IB_RESULT_CALIBRATION: return r->cfg ? ib_calibration_report_json(r->calibration, r->cfg) : NULL;
    case IB_RESULT_COMPARISON:
        return ib_comparison_report_json(r->comparison, r->a, r->a_name, r->b, r->b_name);
    case IB_RESULT_SESSIONS:
    case IB_RESULT_THROUGHPUT_SESSIONS:
    case IB_RESULT_PITFALLS_SESSIONS:
    case IB_RESULT_GENERATION_SESSIONS:
    case IB_RESULT_GEN_SERVE_SESSIONS: return strdup(r->sessions_json); /* merged already */
    case IB_RESULT_SERVE: return ib_serve_report_json(r->serve, r->serve_cfg, r->info);
    case IB_RESULT_BEST:
        return r->best->generation ? ib__best_gen_json(r->best, r->best_cfg, r->generation, r->gen_cfg)
                                   : ib__best_json(r->best, r->best_cfg);
    case IB_RESULT_FLEET:
        return r->fleet->serve ? ib__fleet_serve_report_json(r->fleet, r->info)
                               : ib__fleet_report_json(r->fleet, r->info, r->cfg);
    case IB_RESULT_GENERATION: return ib__gen_report_json(r->generation, r->gen_cfg);
    case IB_RESULT_GEN_SERVE: return ib__gen_serve_rates_report_json(r);
    case IB_RESULT_BEST_SERVE: return ib__best_serve_json(r->best_serve, r->best_serve_cfg);
    case IB_RESULT_GEN_COMPARISON: return ib__gen_comparison_json(r);
    case IB_RESULT_GEN_SERVE_COMPARISON: return ib__gen_serve_comparison_json(r);
    }
    return NULL;
}

const ib__printer ib__json_printer = { "json", "json",
                                       IB__ALL_KINDS | IB__SESSIONS_KINDS |
                                           IB__KIND_BIT(IB_RESULT_GEN_COMPARISON) |
                                           IB__KIND_BIT(IB_RESULT_GEN_SERVE) |
                                           IB__KIND_BIT(IB_RESULT_GEN_SERVE_COMPARISON) |
                                           IB__KIND_BIT(IB_RESULT_BEST_SERVE),
                                       render_json };
