/* The pieces of a generative model's search or curve over rates
 * (gen_serve_curve_report.c) that its other formats share
 * (gen_serve_curve_formats.c: CSV, Markdown, HTML): each rate's verdict
 * and energy cell, the lines of the answer or of the knee and saturation,
 * the configuration of the run at the answer. */
#ifndef IB_REPORT_GEN_SERVE_CURVE_H
#define IB_REPORT_GEN_SERVE_CURVE_H

#include "report/printer.h"

/* A rate's energy per output token, "0.2968 +-2.5%", or "-" without one. */
const char *ib__gen_serve_point_energy(char buf[32], const ib_gen_serve_point *p);
/* The first rate without an energy figure (NULL: each has one). */
const ib_gen_serve_point *ib__gen_serve_first_without_energy(const ib_gen_serve_rates_result *r);
/* The lines after the table: the search's cost and answer, or the curve's
 * saturation and knee, PARTIAL, and over HTTP (ep non-NULL) the client's
 * rates late and the failures and cuts over every rate. */
void ib__gen_serve_rates_summary(ib__sbuf *b, const ib_gen_serve_rates_result *r,
                                 const ib_gen_serve_config *c, const ib_gen_serve_rates_config *rc,
                                 const ib_endpoint_result *ep);
/* The endpoint of res to print beside its rates: NULL in process. */
const ib_endpoint_result *ib__gen_serve_rates_endpoint(const ib_result *res);
/* The endpoint's result of the run at the answer, NULL when none (in
 * process, or no run kept). */
const ib_endpoint_result *ib__gen_serve_rates_at_endpoint(const ib_result *res);
/* The run at the answer's configuration (its rate); r->at_point >= 0. */
ib_gen_serve_config ib__gen_serve_rates_at_config(const ib_gen_serve_rates_result *r,
                                                  const ib_gen_serve_config *c);
/* "the answer's", "the knee's", "the curve's last": whose run r->at is. */
const char *ib__gen_serve_rates_at_whose(const ib_gen_serve_rates_result *r);

#endif
