/* serve --best in CSV, Markdown and HTML (docs/best.md, "Serving: the
 * engine's settings raced"), as best's other kinds print theirs
 * (best_gen_report.c): the CSV a row per candidate alone (its settings
 * in effect, its figures, the measurement they are from, the winner
 * marked); the Markdown the race's table, its time by step, then the
 * winner's serving report (its final) in Markdown; the page the table,
 * the winner's row marked, then the text report (the winner's inside).
 * The figures and the words are best_serve_report.c's. */
#include "report/printer.h"
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines end in CRLF, as RFC 4180 writes them. */
#define EOL "\r\n"

/* ------------------------------------------------------------------------ */
/* CSV                                                                       */
/* ------------------------------------------------------------------------ */

char *ib__best_serve_csv(const ib_best_serve_result *r)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b,
                    "model,configuration,slots,prefill_chunk,stage,winner,figures_from,requests,completed,"
                    "good_requests,goodput_rate,good_share,ttft_p99_ms,tpot_p50_ms,tpot_p99_ms,"
                    "e2e_p99_ms,output_tokens_per_s,why,asked,same_as" EOL);
    for (size_t i = 0; i < r->n_rows; i++) {
        const ib_best_serve_row *row = &r->rows[i];
        double v[IB__BEST_SERVE_FIGURES];
        ib__best_serve_row_figures(row, v);
        ib__csv_field(&b, r->info.model);
        ib__csv_text_cell(&b, row->label);
        /* In effect: none for a row that never opened (skipped) */
        ib__csv_number(&b, row->slots > 0 ? row->slots : NAN);
        ib__csv_number(&b, row->slots > 0 ? row->prefill_chunk : NAN);
        ib__csv_text_cell(&b, ib_best_stage_name(row->stage));
        ib__sbuf_printf(&b, ",%s", (int)i == r->winner ? "true" : "false");
        ib__csv_text_cell(&b, ib__best_serve_figures_from(row));
        ib__sbuf_printf(&b, ",%zu,%zu,%zu", row->requests, row->completed, row->n_good);
        ib__csv_number(&b, v[0]);
        ib__csv_number(&b, row->requests ? row->good_share : NAN); /* a share, as the JSON's */
        for (int k = 2; k < IB__BEST_SERVE_FIGURES - 1; k++) ib__csv_number(&b, v[k]);
        ib__csv_number(&b, row->e2e.n ? row->e2e.p99 : NAN);
        ib__csv_number(&b, v[5]);
        ib__csv_text_cell(&b, row->why);
        ib__csv_text_cell(&b, row->asked);
        ib__csv_number(&b, row->same_as >= 0 ? row->same_as + 1 : NAN);
        ib__sbuf_printf(&b, EOL);
    }
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* Markdown and HTML                                                         */
/* ------------------------------------------------------------------------ */

/* Row i's cells in the tables' order: its label, the figures, the
 * requests its figures are from, its stage and why (the strings live in
 * *t). */
enum { ROW_CELLS = 10 };
typedef struct {
    char figures[IB__BEST_SERVE_FIGURES][32], served[48], why[512];
    const char *cells[ROW_CELLS];
} row_cells;

static void fill_row_cells(const ib_best_serve_row *row, row_cells *t)
{
    double v[IB__BEST_SERVE_FIGURES];
    ib__best_serve_row_figures(row, v);
    for (int k = 0; k < IB__BEST_SERVE_FIGURES; k++)
        ib__best_num(t->figures[k], k == IB__BEST_SERVE_FIGURES - 1 ? "%.0f" : "%.4g", v[k]);
    snprintf(t->served, sizeof t->served, "-"); /* completed of the requests its figures are from */
    if (row->requests) snprintf(t->served, sizeof t->served, "%zu/%zu", row->completed, row->requests);
    ib__best_serve_why_cell(row, t->why, sizeof t->why);
    t->cells[0] = row->label;
    for (int k = 0; k < IB__BEST_SERVE_FIGURES; k++) t->cells[1 + k] = t->figures[k];
    t->cells[7] = t->served;
    t->cells[8] = ib__best_stage_cell(row->stage);
    t->cells[9] = t->why;
}

static const char *const heads[ROW_CELLS] = { "configuration", "goodput/s",   "within %", "TTFT p99 ms",
                                              "TPOT p50 ms",   "TPOT p99 ms", "tokens/s", "requests",
                                              "stage",         "why" };

/* The race in one sentence: "3 candidates raced by goodput, screened on
 * the schedule's first 4 of 16 requests, the 3 best serving all of them". */
static void race_sentence(ib__sbuf *b, const ib_best_serve_result *r)
{
    ib__sbuf_printf(b,
                    "%zu candidates raced by goodput, screened on the schedule's first %zu of %zu requests, "
                    "the %zu best serving all of them",
                    r->n_rows, r->screen_requests, r->final_requests, r->finalists);
    if (r->merged)
        ib__sbuf_printf(b, "; %zu run as an earlier one (the same settings in effect), raced once",
                        r->merged);
}

static void md_item(ib__sbuf *b, const char *line)
{
    ib__sbuf_printf(b, "- ");
    ib__md_cell(b, line);
    ib__sbuf_printf(b, "\n");
}

/* The targets, the time by step and why a partial race stopped, as items. */
static void notes(ib__sbuf *b, const ib_best_serve_result *r, const ib_best_serve_config *cfg,
                  void (*item)(ib__sbuf *, const char *))
{
    ib__sbuf lines = { 0 };
    ib__best_serve_targets_line(&lines, &cfg->serve);
    ib__best_serve_times_lines(&lines, r);
    char why[128];
    if (r->partial) ib__sbuf_printf(&lines, "PARTIAL: %s\n", ib__best_serve_stop_reason(r, why, sizeof why));
    ib__sbuf_each_line(b, &lines, item);
}

char *ib__best_serve_md(const ib_best_serve_result *r, const ib_best_serve_config *cfg)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "**inferbench serve --best**: ");
    ib__md_cell(&b, r->info.model[0] ? r->info.model : "?");
    ib__sbuf_printf(&b, ", ");
    race_sentence(&b, r);
    ib__sbuf_printf(&b, "\n\n");
    ib__md_header(&b, "lrrrrrrrll", ROW_CELLS, heads);
    for (size_t i = 0; i < r->n_rows; i++) {
        row_cells t;
        fill_row_cells(&r->rows[i], &t);
        ib__best_md_cells(&b, t.cells, ROW_CELLS);
    }
    ib__sbuf_printf(&b, "\n");
    notes(&b, r, cfg, md_item);
    if (r->winner >= 0 && r->winner_serve.requests) {
        ib_gen_serve_config wc = ib__best_serve_winner_config(r, cfg);
        char *md = ib__gen_serve_report_md(&r->winner_serve, &wc);
        ib__sbuf_printf(&b, "\n### The winner's serving measurement: ");
        ib__md_cell(&b, r->rows[r->winner].label);
        ib__sbuf_printf(&b, "\n\n%s", md ? md : "");
        if (!md) b.failed = true;
        free(md);
    }
    return ib__sbuf_finish(&b);
}

static void html_item(ib__sbuf *b, const char *line)
{
    ib__sbuf_printf(b, "<li>");
    ib__xml_escape(b, line);
    ib__sbuf_printf(b, "</li>\n");
}

char *ib__best_serve_html(const ib_best_serve_result *r, const ib_best_serve_config *cfg)
{
    ib__sbuf b = { 0 }, sentence = { 0 };
    ib__best_html_head(&b, r->info.model[0] ? r->info.model : "?");
    race_sentence(&sentence, r);
    char *text = ib__sbuf_finish(&sentence);
    ib__sbuf_printf(&b, "<p>serve --best: ");
    if (text)
        ib__xml_escape(&b, text);
    else
        b.failed = true;
    free(text);
    ib__sbuf_printf(&b, "</p>\n<ul>\n");
    notes(&b, r, cfg, html_item);
    ib__sbuf_printf(&b, "</ul>\n<table>");
    ib__best_html_row(&b, false, heads, ROW_CELLS, 0, true);
    for (size_t i = 0; i < r->n_rows; i++) {
        row_cells t;
        fill_row_cells(&r->rows[i], &t);
        ib__best_html_row(&b, (int)i == r->winner, t.cells, ROW_CELLS, 0xfeu, false);
    }
    ib__best_html_tail(&b, ib__best_serve_text(r, cfg));
    return ib__sbuf_finish(&b);
}
