/* The list of printers and the one entry point over them (printer.h). */
#include "report/printer.h"

#include <string.h>

static const ib__printer *const printers[] = {
    &ib__text_printer, &ib__json_printer, &ib__html_printer, &ib__csv_printer, &ib__md_printer,
};

static const ib__printer *find_printer(const char *format)
{
    for (size_t i = 0; format && i < sizeof printers / sizeof printers[0]; i++)
        if (!strcmp(printers[i]->name, format)) return printers[i];
    return NULL;
}

bool ib_report_supports(const char *format, ib_result_kind kind)
{
    const ib__printer *p = find_printer(format);
    return p && (unsigned)kind <= IB_RESULT_GEN_SERVE_SESSIONS && (p->kinds & IB__KIND_BIT(kind));
}

const char *ib_report_extension(const char *format)
{
    const ib__printer *p = find_printer(format);
    return p ? p->extension : NULL;
}

/* The pointers a result of its kind cannot be printed without. */
static bool complete(const ib_result *r)
{
    switch (r->kind) {
    case IB_RESULT_LATENCY: return r->latency && r->info;
    case IB_RESULT_THROUGHPUT: return r->throughput && r->info;
    case IB_RESULT_PITFALLS: return r->pitfalls && r->info;
    case IB_RESULT_CALIBRATION: return r->calibration;
    case IB_RESULT_COMPARISON: return r->comparison && r->a && r->b;
    case IB_RESULT_SESSIONS: return r->sessions && r->sessions_json;
    case IB_RESULT_SERVE: return r->serve && r->serve_cfg && r->info;
    case IB_RESULT_BEST: return r->best && r->best_cfg;
    case IB_RESULT_FLEET: return r->fleet && r->info;
    case IB_RESULT_GENERATION: return r->generation && r->gen_cfg;
    case IB_RESULT_GEN_COMPARISON: return r->gen_comparison && r->gen_a && r->gen_b;
    case IB_RESULT_GEN_SERVE:
        return r->gen_serve && r->gen_serve_cfg && (!r->gen_serve_rates || r->gen_serve_rates_cfg);
    case IB_RESULT_GEN_SERVE_COMPARISON: return r->gen_serve_comparison && r->gen_serve_a && r->gen_serve_b;
    case IB_RESULT_BEST_SERVE: return r->best_serve && r->best_serve_cfg;
    case IB_RESULT_THROUGHPUT_SESSIONS:
    case IB_RESULT_PITFALLS_SESSIONS:
    case IB_RESULT_GENERATION_SESSIONS:
    case IB_RESULT_GEN_SERVE_SESSIONS: return r->sessions_json;
    }
    return false;
}

char *ib_report(const ib_result *r, const char *format)
{
    if (!r || !ib_report_supports(format, r->kind) || !complete(r)) return NULL;
    return find_printer(format)->render(r);
}
