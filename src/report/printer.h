/* Printers: one per output format, each one file (text_printer.c,
 * json_printer.c, html_printer.c, csv_printer.c, md_printer.c) exporting
 * one const table; printer.c lists them. ib_report finds a format's
 * printer by name and hands it the tagged result: a printer gets every
 * kind of result through one entry point (nvbench's printers over tagged
 * summaries). A new format is one new file plus one line in printer.c. */
#ifndef IB_REPORT_PRINTER_H
#define IB_REPORT_PRINTER_H

#include "report/cells.h"
#include "report/report.h"

/* The bit of kind in a printer's kinds. */
#define IB__KIND_BIT(kind) (1u << (unsigned)(kind))
#define IB__ALL_KINDS                                                                                        \
    (IB__KIND_BIT(IB_RESULT_LATENCY) | IB__KIND_BIT(IB_RESULT_THROUGHPUT) |                                  \
     IB__KIND_BIT(IB_RESULT_PITFALLS) | IB__KIND_BIT(IB_RESULT_CALIBRATION) |                                \
     IB__KIND_BIT(IB_RESULT_COMPARISON) | IB__KIND_BIT(IB_RESULT_SERVE) | IB__KIND_BIT(IB_RESULT_BEST) |     \
     IB__KIND_BIT(IB_RESULT_FLEET) | IB__KIND_BIT(IB_RESULT_GENERATION))

/* The results measured in sessions: every format prints them. */
#define IB__SESSIONS_KINDS                                                                                   \
    (IB__KIND_BIT(IB_RESULT_SESSIONS) | IB__KIND_BIT(IB_RESULT_THROUGHPUT_SESSIONS) |                        \
     IB__KIND_BIT(IB_RESULT_PITFALLS_SESSIONS) | IB__KIND_BIT(IB_RESULT_GENERATION_SESSIONS) |               \
     IB__KIND_BIT(IB_RESULT_GEN_SERVE_SESSIONS))

typedef struct ib__printer {
    const char *name;      /* as ib_report and the docs spell it: "csv" */
    const char *extension; /* without the dot */
    unsigned kinds;        /* IB__KIND_BIT of each kind it prints */
    /* The whole document of r (of a kind in kinds, its pointers checked by
     * ib_report); malloc'ed, NULL when memory ran out. */
    char *(*render)(const ib_result *r);
} ib__printer;

extern const ib__printer ib__text_printer;
extern const ib__printer ib__json_printer;
extern const ib__printer ib__html_printer;
extern const ib__printer ib__csv_printer;
extern const ib__printer ib__md_printer;

/* The generation result's reports (generate_report.c). */
char *ib__gen_report_text(const ib_gen_result *r);
char *ib__gen_report_json(const ib_gen_result *r, const ib_gen_config *cfg);
char *ib__gen_report_csv(const ib_gen_result *r);
char *ib__gen_report_md(const ib_gen_result *r);
char *ib__gen_comparison_text(const ib_result *r); /* generate_read.c */
char *ib__gen_comparison_json(const ib_result *r);
/* One figure of a comparison as JSON: a, b (statistics), change,
 * change_ci95, mann_whitney_u and _p, verdict, two_level, runs_ci95,
 * between_sd, spread_source (generate_read.c). */
cJSON *ib__json_comparison(const ib_comparison *c);
char *ib__gen_report_html(const ib_gen_result *r); /* html_report.c: the page's pieces live there */
/* What is known of the threads beside their count: " (runtime default 4,
 * 2 cores allowed)", " (2 cores allowed)" or "" (generate_report.c). */
void ib__gen_threads_detail(char *buf, size_t cap, const ib_gen_info *in);
/* What every format of a generation result says alike (generate_report.c):
 * the model, "llama F16, 2.23 M parameters" (its size said once, as a
 * count, what is not known left out); the search's sentence, "the largest
 * that fits is 8 sequences (the search's bound, not memory)"; a point's
 * marks, "peak, knee" (sep between them; "" for none); the sentence saying
 * no count met the TPOT budget, between before and after (nothing
 * otherwise); and the unit of the
 * statistics table (its smallest median's, ib__latency_unit). */
void ib__gen_model_text(ib__sbuf *b, const ib_gen_info *in);
void ib__gen_search_sentence(ib__sbuf *b, const ib_gen_result *r);
const char *ib__gen_point_marks(char buf[64], const ib_gen_result *r, int i, const char *sep);
void ib__gen_budget_line(ib__sbuf *b, const char *before, const char *after, const ib_gen_result *r);
double ib__gen_table_unit(const ib_gen_result *r, const char **unit);

/* A generative model served under load (gen_serve_report.c), and what it
 * shares with generate's reports (generate_report.c): the runtime, device,
 * settings and options lines, the model's info as JSON. */
char *ib__gen_serve_report_text(const ib_gen_serve_result *r, const ib_gen_serve_config *cfg,
                                const ib_endpoint_result *ep);
char *ib__gen_serve_report_json(const ib_gen_serve_result *r, const ib_gen_serve_config *cfg,
                                const ib_endpoint_result *ep);
/* Served over HTTP (endpoint_report.c): the endpoint's header (in place of
 * the engine's), its own block after the figures, its JSON object. */
void ib__endpoint_text_header(ib__sbuf *b, const ib_endpoint_result *ep);
void ib__endpoint_text(ib__sbuf *b, const ib_endpoint_result *ep, const ib_gen_serve_result *r);
cJSON *ib__endpoint_json(const ib_endpoint_result *ep, const ib_gen_serve_result *r);
/* The client's calibrated ceiling against the run's load (client_ceiling.c):
 * a line or two of the endpoint block, its "client_ceiling" object. */
/* The endpoint block's lines (ib__endpoint_text's) handed to fn one by
 * one without their newline, as ib__gen_serve_tail_each does: a list item
 * each in Markdown and HTML. Returns how many. */
size_t ib__endpoint_each(ib__sbuf *b, const ib_endpoint_result *ep, const ib_gen_serve_result *r,
                         void (*fn)(ib__sbuf *b, const char *line, size_t index));
/* Every gap between two tokens of the completed requests, as the run's
 * ITL counts them (a chunk of k tokens: its gap, then k - 1 gaps of 0):
 * the ITL histogram of an endpoint run. *gaps_ms malloc'd. */
ib_status ib__endpoint_gaps(const ib_endpoint_result *ep, double **gaps_ms, size_t *n_gaps);
void ib__endpoint_ceiling_text(ib__sbuf *b, const ib_endpoint_result *ep, const ib_gen_serve_result *r);
void ib__endpoint_ceiling_json(cJSON *endpoint, const ib_endpoint_result *ep, const ib_gen_serve_result *r);
void ib__gen_runtime_text(ib__sbuf *b, const ib_gen_info *in);
/* Its slots' origin, energy and the engine's own cost (text), and those
 * with its warnings and environment (JSON): gen_serve_machine_report.c. */
void ib__gen_serve_text_machine(ib__sbuf *b, const ib_gen_serve_result *r);
void ib__gen_serve_json_machine(cJSON *root, const ib_gen_serve_result *r);
/* Why the tail is what it is (gen_serve_tail_report.c): the step trace's
 * summary as lines of text (the text, Markdown and HTML reports show
 * them), and as the JSON's "tail" object. */
void ib__gen_serve_tail_lines(ib__sbuf *b, const ib_gen_serve_result *r);
/* The same lines handed to fn one by one (index from 0), without their
 * newline: a list item each in Markdown and HTML. Returns how many. */
size_t ib__gen_serve_tail_each(ib__sbuf *b, const ib_gen_serve_result *r,
                               void (*fn)(ib__sbuf *b, const char *line, size_t index));
cJSON *ib__gen_serve_tail_json(const ib_gen_serve_tail *t);
/* Its other formats, a file each: gen_serve_csv.c (a row per request),
 * gen_serve_md.c, gen_serve_html.c (the distributions and the step
 * timeline). */
char *ib__gen_serve_report_csv(const ib_gen_serve_result *r, const ib_endpoint_result *ep);
/* An endpoint run's own columns of that row (endpoint_csv.c): the header's
 * names, then a request's cells, each with its leading comma. */
void ib__endpoint_csv_header(ib__sbuf *b);
void ib__endpoint_csv_cells(ib__sbuf *b, const ib_endpoint_request *q);
/* What the endpoint's API adds (endpoint_api_report.c): the client's line
 * of the header in its API's words; the server's own timings as a line of
 * the block (none when it stated none) and in the JSON (the endpoint's
 * "api" and "server_timings", a request's server_* keys). */
void ib__endpoint_api_header(ib__sbuf *b, const ib_endpoint_result *ep);
void ib__endpoint_server_timings_text(ib__sbuf *b, const ib_endpoint_result *ep,
                                      const ib_gen_serve_result *r);
void ib__endpoint_server_timings_json(cJSON *endpoint, const ib_endpoint_result *ep);
void ib__endpoint_request_timings_json(cJSON *o, const ib_endpoint_request *q);
char *ib__gen_serve_report_md(const ib_gen_serve_result *r, const ib_gen_serve_config *cfg);
char *ib__gen_serve_report_html(const ib_gen_serve_result *r, const ib_gen_serve_config *cfg);
/* The same of a run over HTTP (ep, or NULL: the ones above): the endpoint
 * in place of the engine, and its block (the client's lateness, the
 * failures by cause, the chunks, the client's ceiling). */
char *ib__gen_serve_report_md_endpoint(const ib_gen_serve_result *r, const ib_gen_serve_config *cfg,
                                       const ib_endpoint_result *ep);
char *ib__gen_serve_report_html_endpoint(const ib_gen_serve_result *r, const ib_gen_serve_config *cfg,
                                         const ib_endpoint_result *ep);
/* The page's pieces of html_report.c for pages built elsewhere: its head
 * (to its <h1>), a row of its table of what was measured (none for ""),
 * a histogram of x[0..n) in ms with its median and p99 marked (returns
 * how many lie beyond its right edge) and the caption's sentence on them,
 * and its tail: the text report (freed), escaped, and the page closed. */
void ib__html_page_head(ib__sbuf *b, const char *what, const char *model);
void ib__html_meta_row(ib__sbuf *b, const char *key, const char *value);
size_t ib__html_histogram(ib__sbuf *b, const ib_stats *p, const double *x, size_t n, const char *x_title,
                          const char *y_title);
void ib__html_histogram_beyond(ib__sbuf *b, size_t beyond, const char *noun, double max_ms);
void ib__html_page_text_and_tail(ib__sbuf *b, char *text);
/* Two generative serve results compared (gen_serve_compare_report.c). */
char *ib__gen_serve_comparison_text(const ib_result *r);
char *ib__gen_serve_comparison_json(const ib_result *r);
char *ib__gen_serve_comparison_csv(const ib_result *r);
char *ib__gen_serve_comparison_md(const ib_result *r);
cJSON *ib__gen_json_info(const ib_gen_info *in);
/* A generative model's serve as its printers print it: the run alone, or
 * with a search or a curve over rates, the run at its answer (or knee)
 * beside it (gen_serve_curve_report.c). */
char *ib__gen_serve_rates_report_text(const ib_result *r);
char *ib__gen_serve_rates_report_json(const ib_result *r);
/* Its CSV (a row per rate), Markdown and HTML (gen_serve_curve_formats.c). */
char *ib__gen_serve_rates_report_csv(const ib_result *r);
char *ib__gen_serve_rates_report_md(const ib_result *r);
char *ib__gen_serve_rates_report_html(const ib_result *r);

/* The best search's reports (best_report.c); ib_best_report_text and
 * _json (text_printer.c, json_printer.c) choose between these and a
 * generative model's. */
char *ib__best_text(const ib_best_result *r);
char *ib__best_json(const ib_best_result *r, const ib_best_config *cfg);
char *ib__best_csv(const ib_best_result *r);
char *ib__best_md(const ib_best_result *r);
char *ib__best_html(const ib_best_result *r);
/* What best's two report files share (best_report.c): a number or "-",
 * a stage's cell, the search's own time, the time by step and the race's
 * rules as text, the steps as JSON. */
const char *ib__best_num(char buf[32], const char *fmt, double v);
const char *ib__best_stage_cell(ib_best_stage s);
double ib__best_rest_ms(const ib_best_result *r);
void ib__best_steps_line(ib__sbuf *b, const char *lead, const ib_best_result *r);
void ib__best_rules_lines(ib__sbuf *b, const ib_best_result *r);
cJSON *ib__best_steps_json(const double step_ms[IB_BEST_STEPS]);
/* The race's rules into a search object (far_factor, step_max_ms,
 * steps_bounded); the times into a document (elapsed_ms, measured_ms,
 * steps_ms with other). */
void ib__best_json_rules(cJSON *search, const ib_best_result *r);
void ib__best_json_times(cJSON *root, const ib_best_result *r);
/* A Markdown table's row of cells; the page's head (to its <h1>) and its
 * tail: the table closed, then text (freed), the text report. */
void ib__best_md_cells(ib__sbuf *b, const char *const *cells, size_t n);
void ib__best_html_head(ib__sbuf *b, const char *model);
void ib__best_html_tail(ib__sbuf *b, char *text);
/* A row of the page's table: cells escaped (a head's are markup: th),
 * the figures (bit k: cell k) right-aligned; win marks a winner's row. */
void ib__best_html_row(ib__sbuf *b, bool win, const char *const *cells, size_t n, unsigned figures,
                       bool head);
/* "lo..hi" of a 95% interval, "-" without one. */
const char *ib__best_ci_cell(char buf[64], const double ci[2]);
/* Row i's why in one cell (the tables of Markdown and HTML): what it was
 * asked as when it runs as another label, the rows merged into it (the
 * same run), why it lost (a forward-pass row: in each race). */
void ib__best_why_cell(const ib_best_result *r, size_t i, char *out, size_t cap);
/* Text, under a heading when there is any: "N  ran as: LABEL (asked:
 * ...); the same run as asked by #2, #3" for each row that runs as
 * another label or whose run others asked for. */
void ib__best_merge_lines(ib__sbuf *b, const ib_best_result *r);
/* Why a partial search stopped: its status, or the time bound that left
 * candidates not measured (the race cut short, status IB_OK). */
void ib__best_stop_reason(const ib_best_result *r, char *out, size_t cap);
/* The text's footer: the race cut short said, then ib__text_footer. */
void ib__best_text_footer(ib__sbuf *b, const ib_best_result *r);
/* The document's head (schema, partial, stop_reason, model, device,
 * workload), stop_reason saying a cut-short race as such. */
cJSON *ib__best_json_document(const ib_best_result *r);
/* serve --best (best_serve_report.c: text and JSON, and what its other
 * formats share with them: the winner's serving config, a row's figures
 * in the table's order (NaN: none), a row's why in one cell, the
 * targets' line, the time by step, why a partial race stopped; its CSV,
 * Markdown and HTML: best_serve_formats.c). */
char *ib__best_serve_text(const ib_best_serve_result *r, const ib_best_serve_config *cfg);
char *ib__best_serve_json(const ib_best_serve_result *r, const ib_best_serve_config *cfg);
char *ib__best_serve_csv(const ib_best_serve_result *r);
char *ib__best_serve_md(const ib_best_serve_result *r, const ib_best_serve_config *cfg);
char *ib__best_serve_html(const ib_best_serve_result *r, const ib_best_serve_config *cfg);
ib_gen_serve_config ib__best_serve_winner_config(const ib_best_serve_result *r,
                                                 const ib_best_serve_config *cfg);
/* goodput/s, within %, TTFT p99, TPOT p50, TPOT p99 (ms), output tokens/s. */
#define IB__BEST_SERVE_FIGURES 6
void ib__best_serve_row_figures(const ib_best_serve_row *row, double v[IB__BEST_SERVE_FIGURES]);
void ib__best_serve_why_cell(const ib_best_serve_row *row, char *out, size_t cap);
/* The measurement a row's figures are from: "final", "screening", "none". */
const char *ib__best_serve_figures_from(const ib_best_serve_row *row);
void ib__best_serve_targets_line(ib__sbuf *b, const ib_gen_serve_config *c);
/* "time by step: opening 0.0 s, ..." and a line for each step the bound stopped. */
void ib__best_serve_times_lines(ib__sbuf *b, const ib_best_serve_result *r);
const char *ib__best_serve_stop_reason(const ib_best_serve_result *r, char *buf, size_t cap);
/* A generative model's race (best_gen_report.c), with the winner's full
 * generation measurement after it when win is not NULL. */
char *ib__best_gen_text(const ib_best_result *r, const ib_gen_result *win);
char *ib__best_gen_json(const ib_best_result *r, const ib_best_config *cfg, const ib_gen_result *win,
                        const ib_gen_config *win_cfg);
char *ib__best_gen_csv(const ib_best_result *r);
char *ib__best_gen_md(const ib_best_result *r, const ib_gen_result *win);
char *ib__best_gen_html(const ib_best_result *r, const ib_gen_result *win);

#endif
