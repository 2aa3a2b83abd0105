/* The cells of the table formats (cells.h): what every table writer
 * shares, the format printers and the result types' own tables (best's,
 * the fleet's). It calls no writer, so that the writers and the printers
 * that call them make no circle. */
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
