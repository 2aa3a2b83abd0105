/* The cells of the table formats (cells.h): what every table writer
 * shares, the format printers and the result types' own tables (best's,
 * the fleet's, generate's Markdown rows and footer). It calls no writer,
 * so that the writers and the printers that call them make no circle. */
#include "report/cells.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void ib__csv_field(ib__sbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        ib__sbuf_append_utf8(b, s, strlen(s));
        return;
    }
    ib__sbuf_printf(b, "\"");
    for (const char *q; (q = strchr(s, '"')); s = q + 1) {
        ib__sbuf_append_utf8(b, s, (size_t)(q - s));
        ib__sbuf_printf(b, "\"\"");
    }
    ib__sbuf_append_utf8(b, s, strlen(s));
    ib__sbuf_printf(b, "\"");
}

void ib__csv_number(ib__sbuf *b, double v)
{
    if (!isfinite(v)) {
        ib__sbuf_printf(b, ",");
        return;
    }
    char text[IB__EXACT_LEN];
    ib__format_exact(text, v);
    ib__sbuf_printf(b, ",%s", text);
}

void ib__csv_text_cell(ib__sbuf *b, const char *s)
{
    ib__sbuf_printf(b, ",");
    ib__csv_field(b, s);
}

void ib__md_cell(ib__sbuf *b, const char *s)
{
    for (size_t span; *s; s += span) {
        span = strcspn(s, "|\r\n");
        ib__sbuf_append_utf8(b, s, span);
        if (!s[span]) break;
        ib__sbuf_printf(b, "%s", s[span] == '|' ? "\\|" : " ");
        span++;
    }
}

void ib__md_row(ib__sbuf *b, size_t n, const char *const *cells)
{
    for (size_t i = 0; i < n; i++) {
        ib__sbuf_printf(b, "| ");
        ib__md_cell(b, cells[i]);
        ib__sbuf_printf(b, " ");
    }
    ib__sbuf_printf(b, "|\n");
}

void ib__md_header(ib__sbuf *b, const char *align, size_t n, const char *const *cells)
{
    ib__md_row(b, n, cells);
    for (size_t i = 0; i < n; i++) ib__sbuf_printf(b, "|%s", align[i] == 'r' ? "---:" : "---");
    ib__sbuf_printf(b, "|\n");
}

void ib__md_footer(ib__sbuf *b, bool partial, ib_status stop_status, unsigned warnings)
{
    const char *keys[IB__MAX_WARNINGS], *texts[IB__MAX_WARNINGS];
    bool notes[IB__MAX_WARNINGS];
    size_t n = ib__warning_list(warnings, keys, texts, notes, IB__MAX_WARNINGS);
    if (partial || n) ib__sbuf_printf(b, "\n");
    if (partial) ib__sbuf_printf(b, "- **partial**: stopped early (%s)\n", ib_status_str(stop_status));
    /* The warnings first, then the notes (standing advice), as the text. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
            if (notes[i] == (pass == 1))
                ib__sbuf_printf(b, "- %s: %s\n", pass ? "note" : "warning", texts[i]);
}

void ib__md_stats_header(ib__sbuf *b, const char *first)
{
    const char *cells[] = { first, "n",   "min", "median",        "mean",          "p90",
                            "p99", "max", "std", "median CI low", "median CI high" };
    ib__md_header(b, "lrrrrrrrrrr", sizeof cells / sizeof *cells, cells);
}

void ib__md_stats_row(ib__sbuf *b, const char *label, const ib_stats *st)
{
    char n[24], t[9][32];
    snprintf(n, sizeof n, "%zu", st->n);
    const char *cells[] = { label,
                            n,
                            ib__fmt_ms(t[0], st->min),
                            ib__fmt_ms(t[1], st->p50),
                            ib__fmt_ms(t[2], st->mean),
                            ib__fmt_ms(t[3], st->p90),
                            ib__fmt_ms(t[4], st->p99),
                            ib__fmt_ms(t[5], st->max),
                            ib__fmt_ms(t[6], st->std),
                            st->n >= IB_STATS_CI_MIN_N ? ib__fmt_ms(t[7], st->ci95_median[0]) : "-",
                            st->n >= IB_STATS_CI_MIN_N ? ib__fmt_ms(t[8], st->ci95_median[1]) : "-" };
    ib__md_row(b, sizeof cells / sizeof *cells, cells);
}
