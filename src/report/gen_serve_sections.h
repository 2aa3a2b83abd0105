/* Sections of a generative model's serve report of their own
 * (gen_serve_pitfalls_report.c): the prompts and the prefix cache, the
 * pitfalls. Each printer of a generative serve calls them with one line. */
#ifndef IB_REPORT_GEN_SERVE_SECTIONS_H
#define IB_REPORT_GEN_SERVE_SECTIONS_H

#include "report/printer.h"

/* "prompts: ..., prefix cache on: N prompt tokens reused ..." (a line). */
void ib__gen_serve_prompts_text(ib__sbuf *b, const ib_gen_serve_result *r);
/* settings.shared_prefix, settings.prefix_cache, figures.cached_tokens. */
void ib__gen_serve_prompts_json(cJSON *settings, cJSON *figures, const ib_gen_serve_result *r);

/* The pitfall rows (nothing without r->has_pitfalls): a table and each
 * row's why, as generate's; a "pitfalls" array of root; a Markdown table. */
void ib__gen_serve_pitfalls_text(ib__sbuf *b, const ib_gen_serve_result *r);
void ib__gen_serve_pitfalls_json(cJSON *root, const ib_gen_serve_result *r);
void ib__gen_serve_pitfalls_md(ib__sbuf *b, const ib_gen_serve_result *r);

#endif
