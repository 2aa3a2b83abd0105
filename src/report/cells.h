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
/* "| a | b |\n" of n cells; a header: that row, then its separator (align
 * holds an 'r' for each column of numbers, right-aligned, an 'l' for text). */
void ib__md_row(ib__sbuf *b, size_t n, const char *const *cells);
void ib__md_header(ib__sbuf *b, const char *align, size_t n, const char *const *cells);
/* What every result's Markdown shares: a statistics table (its header,
 * first: the first column's title; a row of st, each figure in its own
 * unit, with the median's interval), and after the tables the list of
 * PARTIAL, the warnings and the notes. */
void ib__md_stats_header(ib__sbuf *b, const char *first);
void ib__md_stats_row(ib__sbuf *b, const char *label, const ib_stats *st);
void ib__md_footer(ib__sbuf *b, bool partial, ib_status stop_status, unsigned warnings);

#endif
