/* The SLO rate search and the curve over rates (serve_gen_rates.c) on
 * whatever serves one rate at a time: the in-process engine
 * (ib__gen_engine_serve) or an HTTP endpoint (src/endpoint/endpoint_rates.c).
 * The method (the grid, the bracket, LoadGen's early-stopping bound, the
 * knee and saturation) is written once, here; a server is a run at a rate. */
#ifndef IB_CORE_SERVE_GEN_RATES_H
#define IB_CORE_SERVE_GEN_RATES_H

#include "core/serve_gen.h"

/* What serves the rates, opened and warmed up by its caller once for all
 * of them. */
typedef struct ib__gen_rate_server {
    /* One measured run of cfg's schedule at cfg->rate from now, as
     * ib__gen_engine_serve describes it: watch (NULL: none) ends it early;
     * *run left without requests when refused before the run. */
    ib_status (*serve)(void *ctx, const ib_gen_serve_config *cfg, const ib__gen_serve_watch *watch,
                       ib_gen_serve_result *run, ib_error *err);
    /* Optional: the server's own figures of the run just served added to
     * its point, points[index] (the endpoint's lateness and failures). */
    void (*point)(void *ctx, size_t index, ib_gen_serve_point *pt);
    void *ctx;
} ib__gen_rate_server;

/* Starts *out (no point, every index -1) and checks cfg and rc for a
 * search (searching) or a curve: IB_ERR_INVALID_ARG with one line. */
ib_status ib__gen_serve_rates_begin(const ib_gen_serve_config *cfg, const ib_gen_serve_rates_config *rc,
                                    bool searching, ib_gen_serve_rates_result *out, ib_error *err);

/* cfg at the first rate the server serves (the search's first rate, else
 * 1/s; the curve's first): what it is opened and warmed up at. Every rate
 * of one seed draws the same lengths, so that one context (and one
 * warm-up of the first requests' lengths) fits them all. */
ib_gen_serve_config ib__gen_serve_rates_first(const ib_gen_serve_config *cfg,
                                              const ib_gen_serve_rates_config *rc, bool searching);

/* The rates of *out's kind (begun) on srv: a search from rc->first_rate,
 * else warm_rate_per_s (the rate its warm-up served: NaN when none), or
 * the curve of rc->rates. As ib_search_gen_serve and
 * ib_measure_gen_serve_curve describe out. */
ib_status ib__gen_serve_rates_drive(const ib__gen_rate_server *srv, const ib_gen_serve_config *cfg,
                                    const ib_gen_serve_rates_config *rc, double warm_rate_per_s,
                                    ib_gen_serve_rates_result *out, ib_error *err);

#endif
