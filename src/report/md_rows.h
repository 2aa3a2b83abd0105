/* A Markdown row (a header) of the cells given as arguments, counted:
 * IB__MD_ROW(b, "a", "b") for ib__md_row(b, 2, cells). Apart from
 * cells.h, which declares the functions (a macro there naming them would
 * make cells.c and its header a circle: tests/lint/layers.rules). */
#ifndef IB_REPORT_MD_ROWS_H
#define IB_REPORT_MD_ROWS_H

#include "report/cells.h"

#define IB__MD_ROW(b, ...)                                                                                   \
    ib__md_row(b, sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(const char *),                            \
               (const char *[]){ __VA_ARGS__ })
#define IB__MD_HEADER(b, align, ...)                                                                         \
    ib__md_header(b, align, sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(const char *),                  \
                  (const char *[]){ __VA_ARGS__ })

#endif
