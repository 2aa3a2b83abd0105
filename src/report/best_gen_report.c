/* The reports of `inferbench best` for a generative model in every format
 * (docs/best.md, "Generative models"): one row per candidate with what
 * was on, its TPOT and TTFT (one value a run) and its decode tokens/s, how
 * far it went and why it lost; then the winner's full generation
 * measurement, in the format of `generate`'s own report. */
#include "report/printer.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define num ib__best_num

static const char *figure_words(const ib_best_result *r)
{
    return r->figure == IB_BEST_GEN_TTFT ? "TTFT, each run's time to first token"
                                         : "run TPOT, each run's time per output token (the mean of its "
                                           "decode steps)";
}

/* Two figures say TPOT: a row's run TPOT (one value a run, the median
 * over its runs ranked) and the winner's generation measurement's TPOT
 * (the mean step over all its tokens, 1000 / its tokens/s). */
static const char *const tpot_names =
    "run TPOT: one run's mean decode step; p50: the median over the runs. TPOT (generate's): the mean "
    "step over all the tokens of the runs, 1000 / tokens/s";

/* The mean step over all of a row's tokens: its tokens/s inverted. */
static double mean_tpot_ms(const ib_best_row *row) { return 1e3 / row->tokens_per_s; }

/* The ranked figure's median and its interval, NaN when none. */
static double ranked(const ib_best_row *row, double ci[2])
{
    bool has = row->latency.n > 0;
    ci[0] = has ? row->latency.ci95_median[0] : NAN;
    ci[1] = has ? row->latency.ci95_median[1] : NAN;
    return has ? row->latency.p50 : NAN;
}

static double p50_or_nan(const ib_stats *st) { return st->n > 0 ? st->p50 : NAN; }

/* A refused combination, as the table's notes say it. */
static const char *stage_words(ib_best_stage s)
{
    return s == IB_BEST_SKIPPED ? "does not apply" : s == IB_BEST_MERGED ? "merged" : NULL;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

static void text_head(ib__sbuf *b, const ib_best_result *r)
{
    ib__sbuf_printf(b, "inferbench best: %s on %s, %zu candidates, %s\n",
                    r->info.model[0] ? r->info.model : "-", ib__device_name(r->info.device), r->n_rows,
                    r->exhaustive ? "exhaustive (each measured fully)"
                                  : "raced (screened, finalists measured fully)");
    ib__text_env(b, &r->env);
    ib__sbuf_printf(b,
                    "\nrequest: prompt %d tokens, %d new tokens from depth %d; ranked by %s, one value a run "
                    "(--objective %s)\n",
                    (int)r->prompt_tokens, (int)r->new_tokens, (int)r->depth, figure_words(r),
                    ib_best_gen_figure_name((ib_best_gen_figure)r->figure));
    ib__sbuf_printf(b, "accuracy: not judged (the weights are the same; a quantized KV cache changes the "
                       "logits, which the race does not compare)\n");
    if (r->merged > 0)
        ib__sbuf_printf(
            b,
            "merged: %zu of %zu candidates run as an earlier one (the settings in effect for this "
            "request the same: the runtime clamps a value), each distinct run raced once and "
            "labelled as it runs\n",
            r->merged, r->n_rows);
    ib__sbuf_printf(b, "%s\n", tpot_names);
}

static void text_row(ib__sbuf *b, size_t i, const ib_best_row *row)
{
    char c[5][32];
    double ci[2], p50 = ranked(row, ci);
    ib__sbuf_printf(b, "%2zu  %-36.36s %11s %10s %12s %12s %11s %6lld  %s\n", i + 1, row->label,
                    num(c[0], "%.4g", p50), num(c[1], "%.3g", ci[1] - p50),
                    num(c[2], "%.4g", p50_or_nan(&row->tpot)), num(c[3], "%.4g", p50_or_nan(&row->ttft)),
                    num(c[4], "%.5g", row->tokens_per_s), (long long)row->latency_runs,
                    ib__best_stage_cell(row->latency_stage));
}

static void text_whys(ib__sbuf *b, const ib_best_result *r)
{
    ib__best_merge_lines(b, r);
    ib__sbuf_printf(b, "\nwhy each lost:\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        const ib_best_row *row = &r->rows[i];
        const char *words = stage_words(row->latency_stage);
        if (row->latency_why[0])
            ib__sbuf_printf(b, "%2zu  %s: %s\n", i + 1, words ? words : "latency", row->latency_why);
    }
}

static void text_winner(ib__sbuf *b, const ib_best_result *r)
{
    if (r->latency_winner < 0) {
        ib__sbuf_printf(b, "\nfastest: none (no candidate was measured)\n");
        return;
    }
    const ib_best_row *w = &r->rows[r->latency_winner];
    double ci[2], p50 = ranked(w, ci);
    bool ttft = r->figure == IB_BEST_GEN_TTFT;
    ib__sbuf_printf(b,
                    "\nfastest: %s: median %s %.4g ms (95%% CI %.4g..%.4g); median %s %.4g ms; TPOT %.4g ms, "
                    "%.5g tokens/s (its final's tokens over their time)\n",
                    w->label, ttft ? "TTFT" : "run TPOT", p50, ci[0], ci[1], ttft ? "run TPOT" : "TTFT",
                    p50_or_nan(ttft ? &w->tpot : &w->ttft), mean_tpot_ms(w), w->tokens_per_s);
}

char *ib__best_gen_text(const ib_best_result *r, const ib_gen_result *win)
{
    ib__sbuf b = { 0 };
    text_head(&b, r);
    ib__sbuf_printf(&b, "\n%2s  %-36s %11s %10s %12s %12s %11s %6s  %s\n", "#", "configuration", "p50 ms",
                    "+-CI ms", "run TPOT p50", "TTFT p50 ms", "tokens/s", "runs", "stage");
    for (size_t i = 0; i < r->n_rows; i++) text_row(&b, i, &r->rows[i]);
    text_whys(&b, r);
    text_winner(&b, r);
    ib__sbuf_printf(&b, "time: %.1f s in all, %.1f s of it measuring\n", r->elapsed_ms / 1e3,
                    r->measured_ms / 1e3);
    ib__best_steps_line(&b, "time by step:", r);
    ib__best_rules_lines(&b, r);
    ib__best_text_footer(&b, r);
    if (win && r->latency_winner >= 0) {
        char *text = ib__gen_report_text(win);
        ib__sbuf_printf(&b, "\nthe winner's generation measurement (%s):\n%s",
                        r->rows[r->latency_winner].label, text ? text : "");
        if (!text) b.failed = true;
        free(text);
    }
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

static void add_stats(cJSON *o, const char *key, const ib_stats *st)
{
    if (st->n)
        cJSON_AddItemToObject(o, key, ib__json_stats(st));
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *row_json(const ib_best_row *row)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "label", row->label);
    if (row->asked[0])
        cJSON_AddStringToObject(j, "asked", row->asked);
    else
        cJSON_AddNullToObject(j, "asked");
    ib__json_add_number(j, "same_as", row->same_as >= 0 ? row->same_as : NAN);
    cJSON_AddBoolToObject(j, "opened", row->open_status == IB_OK);
    cJSON_AddStringToObject(j, "stage", ib_best_stage_name(row->latency_stage));
    cJSON_AddStringToObject(j, "why", row->latency_why);
    cJSON_AddNumberToObject(j, "runs", (double)row->latency_runs);
    add_stats(j, "ranked_ms", &row->latency);
    add_stats(j, "run_tpot_ms", &row->tpot);
    add_stats(j, "ttft_ms", &row->ttft);
    ib__json_add_number(j, "tokens_per_s", row->tokens_per_s);
    ib__json_add_warnings(j, row->latency_warnings);
    ib__json_add_number(j, "measured_ms", row->ms);
    cJSON_AddItemToObject(j, "steps_ms", ib__best_steps_json(row->step_ms));
    return j;
}

static cJSON *search_json(const ib_best_result *r, const ib_best_config *cfg)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "mode", r->exhaustive ? "exhaustive" : "raced");
    cJSON_AddStringToObject(s, "objective", ib_best_gen_figure_name((ib_best_gen_figure)r->figure));
    cJSON_AddNumberToObject(s, "prompt_tokens", r->prompt_tokens);
    cJSON_AddNumberToObject(s, "new_tokens", r->new_tokens);
    cJSON_AddNumberToObject(s, "depth", r->depth);
    if (cfg) {
        cJSON_AddNumberToObject(s, "screen_runs", (double)cfg->screen_runs);
        cJSON_AddNumberToObject(s, "rounds", cfg->rounds);
        cJSON_AddNumberToObject(s, "finalists", (double)cfg->finalists);
        cJSON_AddNumberToObject(s, "margin", cfg->margin);
        cJSON_AddItemToObject(s, "latency_config", ib__json_config(&cfg->latency));
    }
    ib__best_json_rules(s, r);
    return s;
}

/* The winner's generation document (inferbench.generation/1), whole. */
static cJSON *winner_json(const ib_gen_result *win, const ib_gen_config *cfg)
{
    char *text = win && cfg ? ib__gen_report_json(win, cfg) : NULL;
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    free(text);
    return doc ? doc : cJSON_CreateNull();
}

char *ib__best_gen_json(const ib_best_result *r, const ib_best_config *cfg, const ib_gen_result *win,
                        const ib_gen_config *win_cfg)
{
    cJSON *root = ib__best_json_document(r);
    cJSON_AddStringToObject(root, "kind", "generation");
    cJSON_AddItemToObject(root, "search", search_json(r, cfg));
    if (r->latency_winner >= 0)
        cJSON_AddStringToObject(root, "winner", r->rows[r->latency_winner].label);
    else
        cJSON_AddNullToObject(root, "winner");
    ib__best_json_times(root, r);
    cJSON *rows = cJSON_AddArrayToObject(root, "candidates");
    for (size_t i = 0; i < r->n_rows; i++) cJSON_AddItemToArray(rows, row_json(&r->rows[i]));
    cJSON_AddItemToObject(root, "winner_generation",
                          winner_json(r->latency_winner >= 0 ? win : NULL, win_cfg));
    ib__json_add_warnings(root, r->warnings);
    cJSON_AddItemToObject(root, "env", ib__json_env(&r->env));
    return ib__json_finish(root);
}

/* ------------------------------------------------------------------------ */
/* CSV, Markdown, HTML                                                       */
/* ------------------------------------------------------------------------ */

/* The figures of a row as the Markdown and HTML tables show them: the
 * ranked p50 and its 95% interval, run TPOT and TTFT p50, tokens/s, runs. */
static void table_cells(const ib_best_row *row, char c[6][64])
{
    double ci[2], p50 = ranked(row, ci);
    num(c[0], "%.4g", p50);
    ib__best_ci_cell(c[1], ci);
    num(c[2], "%.4g", p50_or_nan(&row->tpot));
    num(c[3], "%.4g", p50_or_nan(&row->ttft));
    num(c[4], "%.5g", row->tokens_per_s);
    snprintf(c[5], 64, "%lld", (long long)row->latency_runs);
}

/* Row i's cells in the Markdown and HTML tables' order: its label, the
 * figures, its stage and why it lost (the strings live in *t). */
enum { ROW_CELLS = 9 };
typedef struct {
    char figures[6][64], why[700];
    const char *cells[ROW_CELLS];
} row_cells;

static void fill_row_cells(const ib_best_result *r, size_t i, row_cells *t)
{
    const ib_best_row *row = &r->rows[i];
    table_cells(row, t->figures);
    ib__best_why_cell(r, i, t->why, sizeof t->why);
    t->cells[0] = row->label;
    for (int k = 0; k < 6; k++) t->cells[1 + k] = t->figures[k];
    t->cells[7] = ib__best_stage_cell(row->latency_stage);
    t->cells[8] = t->why;
}

char *ib__best_gen_csv(const ib_best_result *r)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "model,device,configuration,stage,objective,p50_ms,ci95_lo_ms,ci95_hi_ms,"
                        "run_tpot_p50_ms,ttft_p50_ms,tokens_per_s,runs,why,asked,same_as\r\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        const ib_best_row *row = &r->rows[i];
        double ci[2], p50 = ranked(row, ci);
        ib__csv_field(&b, r->info.model);
        ib__csv_text_cell(&b, ib__device_name(r->info.device));
        ib__csv_text_cell(&b, row->label);
        ib__csv_text_cell(&b, ib_best_stage_name(row->latency_stage));
        ib__csv_text_cell(&b, ib_best_gen_figure_name((ib_best_gen_figure)r->figure));
        ib__csv_number(&b, p50);
        ib__csv_number(&b, ci[0]);
        ib__csv_number(&b, ci[1]);
        ib__csv_number(&b, p50_or_nan(&row->tpot));
        ib__csv_number(&b, p50_or_nan(&row->ttft));
        ib__csv_number(&b, row->tokens_per_s);
        ib__sbuf_printf(&b, ",%lld", (long long)row->latency_runs);
        ib__csv_text_cell(&b, row->latency_why);
        ib__csv_text_cell(&b, row->asked);
        ib__csv_number(&b, row->same_as >= 0 ? row->same_as + 1 : NAN);
        ib__sbuf_printf(&b, "\r\n");
    }
    return ib__sbuf_finish(&b);
}

char *ib__best_gen_md(const ib_best_result *r, const ib_gen_result *win)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "**inferbench best**: ");
    ib__md_cell(&b, r->info.model);
    ib__sbuf_printf(&b, ", %s, %s; prompt %d tokens, %d new tokens from depth %d; ranked by %s\n\n",
                    ib__device_name(r->info.device), r->exhaustive ? "exhaustive" : "raced",
                    (int)r->prompt_tokens, (int)r->new_tokens, (int)r->depth,
                    r->figure == IB_BEST_GEN_TTFT ? "TTFT" : "run TPOT");
    ib__sbuf_printf(&b, "%s%s.\n\n",
                    r->merged ? "Candidates that run as an earlier one are merged into it "
                                "(stage merged), raced once. "
                              : "",
                    tpot_names);
    ib__sbuf_printf(&b,
                    "| configuration | p50 ms | 95%% CI ms | run TPOT p50 ms | TTFT p50 ms | tokens/s | runs "
                    "| stage | why |\n"
                    "|---|--:|--:|--:|--:|--:|--:|---|---|\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        row_cells t;
        fill_row_cells(r, i, &t);
        ib__best_md_cells(&b, t.cells, ROW_CELLS);
    }
    char stop[192];
    ib__best_stop_reason(r, stop, sizeof stop);
    ib__sbuf_printf(&b, "\nTime: %.1f s (%.1f s measuring)%s%s\n", r->elapsed_ms / 1e3, r->measured_ms / 1e3,
                    r->partial ? "; **partial**: " : "", r->partial ? stop : "");
    ib__best_steps_line(&b, "\nTime by step:", r);
    if (win && r->latency_winner >= 0) {
        char *md = ib__gen_report_md(win);
        ib__sbuf_printf(&b, "\n### The winner's generation measurement: ");
        ib__md_cell(&b, r->rows[r->latency_winner].label);
        ib__sbuf_printf(&b, "\n\n%s", md ? md : "");
        if (!md) b.failed = true;
        free(md);
    }
    return ib__sbuf_finish(&b);
}

/* A page: the table, its intervals and why each lost in it, then the
 * text report, the winner's measurement in it. */
char *ib__best_gen_html(const ib_best_result *r, const ib_gen_result *win)
{
    static const char *const heads[] = {
        "configuration", "p50 ms", "95% CI ms", "run TPOT p50 ms", "TTFT p50 ms", "tokens/s",
        "runs",          "stage",  "why"
    };
    ib__sbuf b = { 0 };
    ib__best_html_head(&b, r->info.model);
    ib__sbuf_printf(&b, "<p>ranked by %s; ", figure_words(r));
    ib__xml_escape(&b, tpot_names);
    ib__sbuf_printf(&b, "</p>\n<table>");
    ib__best_html_row(&b, false, heads, sizeof heads / sizeof *heads, 0, true);
    for (size_t i = 0; i < r->n_rows; i++) {
        row_cells t;
        fill_row_cells(r, i, &t);
        ib__best_html_row(&b, (int)i == r->latency_winner, t.cells, ROW_CELLS, 0x7eu, false);
    }
    ib__best_html_tail(&b, ib__best_gen_text(r, win));
    return ib__sbuf_finish(&b);
}
