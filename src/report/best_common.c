/* What the two reports of `inferbench best` share (best_report.c for a
 * forward-pass model, best_gen_report.c for a generative one): the cells,
 * the time by step and the race's rules as text, the steps as JSON, the
 * page's frame. */
#include "report/printer.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A large figure (15110 ms, 123456 inputs/s) in whole units, never as
 * %g's exponent ("1.511e+04"); a small one (an error of 2.6e-05) as fmt. */
const char *ib__best_num(char buf[32], const char *fmt, double v)
{
    if (!isfinite(v))
        snprintf(buf, 32, "-");
    else if (fabs(v) >= 1e4)
        snprintf(buf, 32, "%.0f", v);
    else
        snprintf(buf, 32, fmt, v);
    return buf;
}

/* "WINNER" / "dropped" ...: a stage as the tables print it. */
const char *ib__best_stage_cell(ib_best_stage s)
{
    return s == IB_BEST_WINNER         ? "WINNER"
           : s == IB_BEST_NOT_MEASURED ? "not measured (time bound)"
                                       : ib_best_stage_name(s);
}

const char *ib__best_ci_cell(char buf[64], const double ci[2])
{
    if (isfinite(ci[0]) && isfinite(ci[1])) {
        char lo[32], hi[32];
        snprintf(buf, 64, "%s..%s", ib__fmt_plain4(lo, ci[0]), ib__fmt_plain4(hi, ci[1]));
    } else
        snprintf(buf, 64, "-");
    return buf;
}

/* "#2, #3": the rows merged into row i (their run is its), "" none. */
static void merged_into(const ib_best_result *r, size_t i, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t j = 0; j < r->n_rows && n < cap; j++)
        if (r->rows[j].latency_stage == IB_BEST_MERGED && r->rows[j].same_as == (int)i)
            n += (size_t)snprintf(out + n, cap - n, "%s#%zu", n ? ", " : "", j + 1);
}

void ib__best_merge_lines(ib__sbuf *b, const ib_best_result *r)
{
    bool first = true;
    for (size_t i = 0; i < r->n_rows; i++) {
        const ib_best_row *row = &r->rows[i];
        char also[256];
        merged_into(r, i, also, sizeof also);
        if (!row->asked[0] && !also[0]) continue;
        if (first) ib__sbuf_printf(b, "\nas run (the settings in effect for the request):\n");
        first = false;
        ib__sbuf_printf(b, "%2zu  ran as: %s%s%s%s%s%s\n", i + 1, row->label,
                        row->asked[0] ? " (asked: " : "", row->asked, row->asked[0] ? ")" : "",
                        also[0] ? "; the same run as asked by " : "", also);
    }
}

void ib__best_why_cell(const ib_best_result *r, size_t i, char *out, size_t cap)
{
    const ib_best_row *row = &r->rows[i];
    char also[256];
    merged_into(r, i, also, sizeof also);
    bool second = row->throughput_why[0] && strcmp(row->latency_why, row->throughput_why) && !r->generation;
    size_t n = 0;
    out[0] = '\0';
    if (row->asked[0]) n += (size_t)snprintf(out + n, cap - n, "ran as this, asked: %s; ", row->asked);
    if (also[0] && n < cap) n += (size_t)snprintf(out + n, cap - n, "the same run as asked by %s; ", also);
    if (n < cap)
        snprintf(out + n, cap - n, "%s%s%s", row->latency_why, second && row->latency_why[0] ? "; " : "",
                 second ? row->throughput_why : "");
    n = strlen(out);
    if (n >= 2 && !strcmp(out + n - 2, "; ")) out[n - 2] = '\0';
}

void ib__best_stop_reason(const ib_best_result *r, char *out, size_t cap)
{
    if (r->stop_status != IB_OK)
        snprintf(out, cap, "%s", ib_status_str(r->stop_status));
    else
        snprintf(out, cap,
                 "the race was cut short: the time bound (%.4g s a step, --step-max-ms) left %zu "
                 "candidate%s not measured",
                 r->step_max_ms / 1e3, r->not_measured, r->not_measured == 1 ? "" : "s");
}

void ib__best_text_footer(ib__sbuf *b, const ib_best_result *r)
{
    bool cut = r->partial && r->stop_status == IB_OK;
    if (cut) {
        char why[192];
        ib__best_stop_reason(r, why, sizeof why);
        bool won = r->latency_winner >= 0 || r->throughput_winner >= 0;
        ib__sbuf_printf(b, "PARTIAL: %s (\"not measured (time bound)\"); %s\n", why,
                        won ? "the winner is the best of those measured" : "none won");
    }
    ib__text_footer(b, r->partial && !cut, r->stop_status, &r->env, r->warnings);
}

cJSON *ib__best_json_document(const ib_best_result *r)
{
    cJSON *root = ib__json_document("inferbench.best/2", r->partial, r->stop_status,
                                    r->info.model[0] ? &r->info : NULL);
    if (r->partial && r->stop_status == IB_OK) {
        char why[192];
        ib__best_stop_reason(r, why, sizeof why);
        cJSON_ReplaceItemInObject(root, "stop_reason", cJSON_CreateString(why));
    }
    return root;
}

/* The search's own work between the steps (comparing candidates, the
 * bookkeeping): the elapsed time less every step's. Only the host clock
 * makes them comparable: with workloads on a virtual clock (the fake) the
 * steps may exceed the elapsed time, and the rest reads 0. */
double ib__best_rest_ms(const ib_best_result *r)
{
    double steps = 0;
    for (int k = 0; k < IB_BEST_STEPS; k++) steps += r->step_ms[k];
    return fmax(r->elapsed_ms - steps, 0);
}

/* "time by step: opening 1.2 s, accuracy checks 0.4 s, ..., other 0.1 s";
 * a generative model's race has three steps. */
void ib__best_steps_line(ib__sbuf *b, const char *lead, const ib_best_result *r)
{
    static const char *const words[IB_BEST_STEPS] = {
        [IB_BEST_STEP_OPEN] = "opening",
        [IB_BEST_STEP_ACCURACY] = "accuracy checks",
        [IB_BEST_STEP_SCREEN] = "screening",
        [IB_BEST_STEP_LATENCY_FINAL] = "latency finals",
        [IB_BEST_STEP_BATCH_SEARCH] = "batch search",
        [IB_BEST_STEP_PEAK_SCREEN] = "peak screening",
        [IB_BEST_STEP_THROUGHPUT_FINAL] = "throughput finals",
    };
    const unsigned gen =
        1u << IB_BEST_STEP_OPEN | 1u << IB_BEST_STEP_SCREEN | 1u << IB_BEST_STEP_LATENCY_FINAL;
    ib__sbuf_printf(b, "%s", lead);
    for (int k = 0, n = 0; k < IB_BEST_STEPS; k++)
        if (!r->generation || (gen >> k & 1u))
            ib__sbuf_printf(b, "%s %s %.1f s", n++ ? "," : "",
                            r->generation && k == IB_BEST_STEP_LATENCY_FINAL ? "finals" : words[k],
                            r->step_ms[k] / 1e3);
    ib__sbuf_printf(b, ", other %.1f s\n", ib__best_rest_ms(r) / 1e3);
}

/* The race's rules against wasted time, and the steps their bound
 * stopped (docs/best.md, "Far behind, and each step's time bound"). */
void ib__best_rules_lines(ib__sbuf *b, const ib_best_result *r)
{
    if (r->exhaustive) return;
    if (r->far_factor > 0)
        ib__sbuf_printf(b,
                        "far behind: a candidate whose median's 95%% CI%s starts above %.4g x the leader's "
                        "upper end leaves before the finals%s\n",
                        r->generation ? "" : " at batch 1", r->far_factor,
                        r->generation ? "" : ", the throughput race included");
    if (r->step_max_ms > 0)
        ib__sbuf_printf(b, "time bound: each step at most %.4g s (--step-max-ms)\n", r->step_max_ms / 1e3);
    for (int k = 0; k < IB_BEST_STEPS; k++)
        if (r->steps_bounded & (1u << k))
            ib__sbuf_printf(b, "time bound reached: %s stopped at %.4g s; what it measured by then stands\n",
                            ib_best_step_name((ib_best_step)k), r->step_max_ms / 1e3);
}

/* Time by step: {open, accuracy, screen, ...} in ms. */
cJSON *ib__best_steps_json(const double step_ms[IB_BEST_STEPS])
{
    cJSON *j = cJSON_CreateObject();
    for (int k = 0; k < IB_BEST_STEPS; k++)
        cJSON_AddNumberToObject(j, ib_best_step_name((ib_best_step)k), step_ms[k]);
    return j;
}

void ib__best_md_cells(ib__sbuf *b, const char *const *cells, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ib__sbuf_printf(b, "| ");
        ib__md_cell(b, cells[i]);
        ib__sbuf_printf(b, " ");
    }
    ib__sbuf_printf(b, "|\n");
}

void ib__best_html_head(ib__sbuf *b, const char *model)
{
    ib__sbuf_printf(
        b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>inferbench best: ");
    ib__xml_escape(b, model);
    ib__sbuf_printf(
        b, "</title><style>body{font:14px/1.4 system-ui,sans-serif;max-width:1100px;margin:24px auto;"
           "padding:0 16px}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 6px;"
           "font-size:13px}td.n{text-align:right}tr.win{background:#e8f5e9}pre{background:#f7f7f7;"
           "padding:10px;font-size:12px;overflow-x:auto}</style></head><body>\n<h1>inferbench best: ");
    ib__xml_escape(b, model);
    ib__sbuf_printf(b, "</h1>\n");
}

void ib__best_html_row(ib__sbuf *b, bool win, const char *const *cells, size_t n, unsigned figures, bool head)
{
    ib__sbuf_printf(b, "<tr%s>", win ? " class=\"win\"" : "");
    for (size_t i = 0; i < n; i++) {
        ib__sbuf_printf(b, "<%s%s>", head ? "th" : "td", !head && (figures >> i & 1u) ? " class=n" : "");
        if (head)
            ib__sbuf_printf(b, "%s", cells[i]); /* the page's own markup */
        else
            ib__xml_escape(b, cells[i]);
        ib__sbuf_printf(b, "</%s>", head ? "th" : "td");
    }
    ib__sbuf_printf(b, "</tr>\n");
}

void ib__best_html_tail(ib__sbuf *b, char *text)
{
    ib__sbuf_printf(b, "</table>\n<h2>Report</h2>\n<pre>");
    if (text)
        ib__xml_escape(b, text);
    else
        b->failed = true;
    ib_free(text);
    ib__sbuf_printf(b, "</pre>\n</body></html>\n");
}

void ib__best_json_rules(cJSON *search, const ib_best_result *r)
{
    ib__json_add_number(search, "far_factor", r->far_factor > 0 ? r->far_factor : NAN);
    ib__json_add_number(search, "step_max_ms", r->step_max_ms > 0 ? r->step_max_ms : NAN);
    cJSON *bounded = cJSON_AddArrayToObject(search, "steps_bounded");
    for (int k = 0; k < IB_BEST_STEPS; k++)
        if (r->steps_bounded & (1u << k))
            cJSON_AddItemToArray(bounded, cJSON_CreateString(ib_best_step_name((ib_best_step)k)));
    cJSON_AddNumberToObject(search, "not_measured", (double)r->not_measured);
    cJSON_AddNumberToObject(search, "merged", (double)r->merged);
}

void ib__best_json_times(cJSON *root, const ib_best_result *r)
{
    cJSON_AddNumberToObject(root, "elapsed_ms", r->elapsed_ms);
    cJSON_AddNumberToObject(root, "measured_ms", r->measured_ms);
    cJSON *steps = ib__best_steps_json(r->step_ms);
    cJSON_AddNumberToObject(steps, "other", ib__best_rest_ms(r));
    cJSON_AddItemToObject(root, "steps_ms", steps);
}
