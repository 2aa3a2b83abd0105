/* best of a generative model served under load (serve --best; docs/best.md,
 * "Serving"): the race's table, why each lost, the winner, then the
 * winner's own serving report (its final), in text and JSON; and the
 * pieces its other formats (best_serve_formats.c) share with these. */
#include "report/printer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The configuration the winner's final ran with: the race's schedule, its
 * engine settings. */
ib_gen_serve_config ib__best_serve_winner_config(const ib_best_serve_result *r,
                                                 const ib_best_serve_config *cfg)
{
    ib_gen_serve_config c = cfg->serve;
    if (r->winner >= 0) {
        c.slots = cfg->candidates[r->winner].slots;
        c.prefill_chunk = cfg->candidates[r->winner].prefill_chunk;
    }
    return c;
}

static const char *step_name(int k)
{
    return k == IB_BEST_SERVE_STEP_OPEN ? "opening" : k == IB_BEST_SERVE_STEP_SCREEN ? "screening" : "finals";
}

/* Why a partial race stopped: its status (an interruption), or "the race
 * was cut short: 2 candidates not measured" (the bound's, status IB_OK). */
const char *ib__best_serve_stop_reason(const ib_best_serve_result *r, char *buf, size_t cap)
{
    if (r->stop_status != IB_OK)
        snprintf(buf, cap, "%s", ib_status_str(r->stop_status));
    else
        snprintf(buf, cap, "the race was cut short: %zu candidate%s not measured", r->not_measured,
                 r->not_measured == 1 ? "" : "s");
    return buf;
}

const char *ib__best_serve_figures_from(const ib_best_serve_row *row)
{
    return row->requests == 0 ? "none" : row->final ? "final" : "screening";
}

void ib__best_serve_row_figures(const ib_best_serve_row *row, double v[IB__BEST_SERVE_FIGURES])
{
    bool has = row->requests > 0;
    v[0] = has ? row->goodput_rate : NAN;
    v[1] = has ? 100 * row->good_share : NAN;
    v[2] = row->ttft.n ? row->ttft.p99 : NAN;
    v[3] = row->tpot.n ? row->tpot.p50 : NAN;
    v[4] = row->tpot.n ? row->tpot.p99 : NAN;
    v[5] = has ? row->output_tokens_per_s : NAN;
}

/* "ran as this, asked: slots 4, chunk 256; does not apply: ...": what the
 * text says in its "as run" and "why each lost" lines, in one cell. */
void ib__best_serve_why_cell(const ib_best_serve_row *row, char *out, size_t cap)
{
    int n = row->asked[0]
                ? snprintf(out, cap, "ran as this, asked: %s%s", row->asked, row->why[0] ? "; " : "")
                : snprintf(out, cap, "%s", "");
    if (n >= 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, "%s%s", row->stage == IB_BEST_SKIPPED ? "does not apply: " : "",
                 row->why);
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

void ib__best_serve_targets_line(ib__sbuf *b, const ib_gen_serve_config *c)
{
    const char *sep = "";
    ib__sbuf_printf(b, "goodput: requests a second within every target (");
    if (c->slo_ttft_ms > 0) ib__sbuf_printf(b, "%sTTFT <= %.4g ms", sep, c->slo_ttft_ms), sep = ", ";
    if (c->slo_tpot_ms > 0) ib__sbuf_printf(b, "%sTPOT <= %.4g ms", sep, c->slo_tpot_ms), sep = ", ";
    if (c->slo_e2e_ms > 0) ib__sbuf_printf(b, "%send-to-end <= %.4g ms", sep, c->slo_e2e_ms);
    ib__sbuf_printf(
        b, "), each from the request's scheduled arrival; equal goodput: the lower end-to-end p99\n");
}

static void text_cell(ib__sbuf *b, double v, int width)
{
    if (isfinite(v))
        ib__sbuf_printf(b, " %*.4g", width, v);
    else
        ib__sbuf_printf(b, " %*s", width, "-");
}

static void text_row(ib__sbuf *b, size_t i, const ib_best_serve_row *row, int width)
{
    static const int widths[IB__BEST_SERVE_FIGURES - 1] = { 10, 7, 11, 11, 11 };
    double v[IB__BEST_SERVE_FIGURES];
    ib__best_serve_row_figures(row, v);
    ib__sbuf_printf(b, "%3zu  %-*s", i + 1, width, row->label);
    for (int k = 0; k < IB__BEST_SERVE_FIGURES - 1; k++) text_cell(b, v[k], widths[k]);
    if (isfinite(v[5])) /* tokens/s in whole tokens */
        ib__sbuf_printf(b, " %10.0f", v[5]);
    else
        text_cell(b, NAN, 10);
    char served[48] = "-"; /* completed of the requests its figures are from */
    if (row->requests > 0) snprintf(served, sizeof served, "%zu/%zu", row->completed, row->requests);
    ib__sbuf_printf(b, " %9s  %s\n", served, ib__best_stage_cell(row->stage));
}

static void text_table(ib__sbuf *b, const ib_best_serve_result *r)
{
    int width = 13; /* the widest label, "configuration" at least */
    for (size_t i = 0; i < r->n_rows; i++)
        if ((int)strlen(r->rows[i].label) > width) width = (int)strlen(r->rows[i].label);
    ib__sbuf_printf(b, "\n  #  %-*s %10s %7s %11s %11s %11s %10s %9s  stage\n", width, "configuration",
                    "goodput/s", "within%", "TTFT p99 ms", "TPOT p50 ms", "TPOT p99 ms", "tokens/s",
                    "requests");
    for (size_t i = 0; i < r->n_rows; i++) text_row(b, i, &r->rows[i], width);
    bool any_asked = false;
    for (size_t i = 0; i < r->n_rows; i++) any_asked |= r->rows[i].asked[0] != 0;
    if (any_asked) ib__sbuf_printf(b, "as run (the settings in effect):\n");
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].asked[0])
            ib__sbuf_printf(b, "%3zu  ran as: %s (asked: %s)\n", i + 1, r->rows[i].label, r->rows[i].asked);
    ib__sbuf_printf(b, "why each lost:\n");
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].why[0] && r->rows[i].stage != IB_BEST_WINNER)
            ib__sbuf_printf(b, "%3zu  %s%s\n", i + 1,
                            r->rows[i].stage == IB_BEST_SKIPPED ? "does not apply: " : "", r->rows[i].why);
}

static void text_winner(ib__sbuf *b, const ib_best_serve_result *r)
{
    if (r->winner < 0) {
        ib__sbuf_printf(b, "best: none (no finalist served the whole schedule)\n");
        return;
    }
    const ib_best_serve_row *w = &r->rows[r->winner];
    char tokens[32]; /* whole tokens, never %g's exponent ("1.6e+04") */
    ib__sbuf_printf(
        b,
        "best: %s: goodput %.4g requests/s (%zu of %zu requests within the targets, %.1f%%); TTFT "
        "p99 %.4g ms, TPOT p99 %.4g ms, %s output tokens/s (its final's figures)\n",
        w->label, w->goodput_rate, w->n_good, w->completed, 100 * w->good_share, w->ttft.p99, w->tpot.p99,
        ib__best_num(tokens, "%.4g", w->output_tokens_per_s));
}

void ib__best_serve_times_lines(ib__sbuf *b, const ib_best_serve_result *r)
{
    ib__sbuf_printf(b, "time by step:");
    for (int k = 0; k < IB_BEST_SERVE_STEPS; k++)
        ib__sbuf_printf(b, "%s %s %.1f s", k ? "," : "", step_name(k), r->step_ms[k] / 1e3);
    if (r->step_max_ms > 0)
        ib__sbuf_printf(b, " (each step at most %.4g s, --step-max-ms)", r->step_max_ms / 1e3);
    ib__sbuf_printf(b, "\n");
    for (int k = 1; k < IB_BEST_SERVE_STEPS; k++)
        if (r->steps_bounded & (1u << k))
            ib__sbuf_printf(b, "time bound reached: %s stopped at %.4g s; what it measured by then stands\n",
                            step_name(k), r->step_max_ms / 1e3);
}

char *ib__best_serve_text(const ib_best_serve_result *r, const ib_best_serve_config *cfg)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(
        &b,
        "inferbench serve --best: %s, %zu candidates, raced by goodput (screened on the schedule's "
        "first %zu of %zu requests, the %zu best serving all of them)\n",
        r->info.model[0] ? r->info.model : "?", r->n_rows, r->screen_requests, r->final_requests,
        r->finalists);
    ib__best_serve_targets_line(&b, &cfg->serve);
    if (r->merged)
        ib__sbuf_printf(
            &b,
            "merged: %zu of %zu candidates run as an earlier one (the same settings in effect), each "
            "distinct run raced once\n",
            r->merged, r->n_rows);
    text_table(&b, r);
    text_winner(&b, r);
    ib__best_serve_times_lines(&b, r);
    char cut[128];
    if (r->partial) ib__sbuf_printf(&b, "PARTIAL: %s\n", ib__best_serve_stop_reason(r, cut, sizeof cut));
    if (r->winner >= 0 && r->winner_serve.requests) {
        ib_gen_serve_config wc = ib__best_serve_winner_config(r, cfg);
        char *text = ib__gen_serve_report_text(&r->winner_serve, &wc, NULL);
        ib__sbuf_printf(&b, "\nthe winner's serving measurement (%s):\n%s", r->rows[r->winner].label,
                        text ? text : "");
        if (!text) b.failed = true;
        free(text);
    }
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

static cJSON *row_json(const ib_best_serve_row *row)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "label", row->label);
    if (row->asked[0])
        cJSON_AddStringToObject(o, "asked", row->asked);
    else
        cJSON_AddNullToObject(o, "asked");
    if (row->same_as >= 0)
        cJSON_AddNumberToObject(o, "same_as", row->same_as);
    else
        cJSON_AddNullToObject(o, "same_as");
    cJSON_AddNumberToObject(o, "slots", row->slots);
    cJSON_AddNumberToObject(o, "prefill_chunk", row->prefill_chunk);
    cJSON_AddStringToObject(o, "stage", ib_best_stage_name(row->stage));
    cJSON_AddStringToObject(o, "why", row->why);
    cJSON_AddStringToObject(o, "figures_from", ib__best_serve_figures_from(row));
    cJSON_AddNumberToObject(o, "requests", (double)row->requests);
    cJSON_AddNumberToObject(o, "completed", (double)row->completed);
    cJSON_AddNumberToObject(o, "good_requests", (double)row->n_good);
    ib__json_add_number(o, "goodput_rate", row->requests ? row->goodput_rate : NAN);
    ib__json_add_number(o, "good_share", row->requests ? row->good_share : NAN);
    ib__json_add_number(o, "output_tokens_per_s", row->requests ? row->output_tokens_per_s : NAN);
    ib__json_add_stats_or_null(o, "ttft_ms", &row->ttft);
    ib__json_add_stats_or_null(o, "tpot_ms", &row->tpot);
    ib__json_add_stats_or_null(o, "e2e_ms", &row->e2e);
    cJSON *steps = cJSON_AddObjectToObject(o, "steps_ms");
    for (int k = 0; k < IB_BEST_SERVE_STEPS; k++) ib__json_add_number(steps, step_name(k), row->step_ms[k]);
    return o;
}

static cJSON *search_json(const ib_best_serve_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "ranked_by", "goodput_rate");
    cJSON_AddNumberToObject(o, "screen_requests", (double)r->screen_requests);
    cJSON_AddNumberToObject(o, "final_requests", (double)r->final_requests);
    cJSON_AddNumberToObject(o, "finalists", (double)r->finalists);
    cJSON_AddNumberToObject(o, "merged", (double)r->merged);
    cJSON_AddNumberToObject(o, "not_measured", (double)r->not_measured);
    ib__json_add_number(o, "step_max_ms", r->step_max_ms > 0 ? r->step_max_ms : NAN);
    cJSON *bounded = cJSON_AddArrayToObject(o, "steps_bounded");
    for (int k = 1; k < IB_BEST_SERVE_STEPS; k++)
        if (r->steps_bounded & (1u << k)) cJSON_AddItemToArray(bounded, cJSON_CreateString(step_name(k)));
    cJSON *steps = cJSON_AddObjectToObject(o, "steps_ms");
    for (int k = 0; k < IB_BEST_SERVE_STEPS; k++) ib__json_add_number(steps, step_name(k), r->step_ms[k]);
    return o;
}

static cJSON *winner_json(const ib_best_serve_result *r, const ib_best_serve_config *cfg)
{
    if (r->winner < 0 || !r->winner_serve.requests) return cJSON_CreateNull();
    ib_gen_serve_config wc = ib__best_serve_winner_config(r, cfg);
    char *text = ib__gen_serve_report_json(&r->winner_serve, &wc, NULL);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    return doc ? doc : cJSON_CreateNull();
}

char *ib__best_serve_json(const ib_best_serve_result *r, const ib_best_serve_config *cfg)
{
    cJSON *root = ib__json_document("inferbench.best_serve/1", r->partial, r->stop_status, NULL);
    char cut[128];
    if (r->partial && r->stop_status == IB_OK)
        cJSON_ReplaceItemInObject(root, "stop_reason",
                                  cJSON_CreateString(ib__best_serve_stop_reason(r, cut, sizeof cut)));
    cJSON_AddStringToObject(root, "model", r->info.model);
    cJSON_AddItemToObject(root, "search", search_json(r));
    ib__json_add_number(root, "slo_ttft_ms", cfg->serve.slo_ttft_ms > 0 ? cfg->serve.slo_ttft_ms : NAN);
    ib__json_add_number(root, "slo_tpot_ms", cfg->serve.slo_tpot_ms > 0 ? cfg->serve.slo_tpot_ms : NAN);
    ib__json_add_number(root, "slo_e2e_ms", cfg->serve.slo_e2e_ms > 0 ? cfg->serve.slo_e2e_ms : NAN);
    if (r->winner >= 0)
        cJSON_AddStringToObject(root, "winner", r->rows[r->winner].label);
    else
        cJSON_AddNullToObject(root, "winner");
    cJSON *rows = cJSON_AddArrayToObject(root, "candidates");
    for (size_t i = 0; i < r->n_rows; i++) cJSON_AddItemToArray(rows, row_json(&r->rows[i]));
    cJSON_AddItemToObject(root, "winner_serve", winner_json(r, cfg));
    return ib__json_finish(root);
}
