/* The cells of the table formats, shared by every writer of a table: a
 * CSV field (RFC 4180) and a Markdown table cell (src/report/cells.c).
 * Below the printers and the result types' writers alike: it calls none
 * of them. */
#ifndef IB_REPORT_CELLS_H
#define IB_REPORT_CELLS_H

#include "report/report.h"

/* CSV (RFC 4180): appends s as one field, quoted when it holds a comma, a
 * double quote, CR or LF, its quotes doubled. */
void ib__csv_field(ib__sbuf *b, const char *s);
/* ",v" exactly (ib__format_exact, as the JSON documents print numbers), or
 * "," alone when v does not exist (NaN). */
void ib__csv_number(ib__sbuf *b, double v);
/* "," and s as one field. */
void ib__csv_text_cell(ib__sbuf *b, const char *s);
/* Markdown: appends s as one table cell's text: '|' escaped, a line break
 * as a space, so that the cell stays in its row. */
void ib__md_cell(ib__sbuf *b, const char *s);

#endif
