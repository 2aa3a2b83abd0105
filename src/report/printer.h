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
     IB__KIND_BIT(IB_RESULT_PITFALLS_SESSIONS) | IB__KIND_BIT(IB_RESULT_GENERATION_SESSIONS))

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
char *ib__gen_report_html(const ib_gen_result *r); /* html_report.c: the page's pieces live there */

/* The best search's CSV, Markdown and HTML (best_report.c). */
char *ib__best_csv(const ib_best_result *r);
char *ib__best_md(const ib_best_result *r);
char *ib__best_html(const ib_best_result *r);

#endif
