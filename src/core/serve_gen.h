/* Serving a generative model under load (docs/serve-generative.md): what
 * the engine (serve_gen.c) and its figures (serve_gen_figures.c) share. */
#ifndef IB_CORE_SERVE_GEN_H
#define IB_CORE_SERVE_GEN_H

#include "base/common.h"
#include "workload/generation.h"

/* The prompt tokens one step takes at most, unless told. */
#define IB__GEN_SERVE_DEFAULT_CHUNK 512
/* Warm-up requests, unless told. */
#define IB__GEN_SERVE_DEFAULT_WARMUP 4

/* A request's own figures from its times (NaN where not reached), and
 * whether it met every target given (a request of one token has no TPOT:
 * that target does not judge it). */
void ib__gen_serve_request_figures(const ib_gen_serve_config *cfg, ib_gen_serve_request *r);

/* Every figure of out from its requests (their times set, NaN where not
 * reached), its inter-token gaps itl_ms[0..n_itl) and the targets of cfg;
 * offered_rate_per_s as the schedule offered it. */
ib_status ib__gen_serve_figures(const ib_gen_serve_config *cfg, const double *itl_ms, size_t n_itl,
                                double offered_rate_per_s, ib_gen_serve_result *out);

/* The engine open on a generation workload: its context created once
 * for the slots and warmed up, so that measured runs (one per rate of a
 * search or a curve) follow one another on it (serve_gen.c). */
typedef struct ib__gen_engine ib__gen_engine;

/* What a measured run tells its watcher: request r's first token (first)
 * or its last (last; both for a request of one token), its times set.
 * Returning false ends the run at the step's end: the requests still
 * running are dropped (their sequences removed), their times left where
 * they got. */
typedef struct ib__gen_serve_watch {
    bool (*fn)(void *ctx, const ib_gen_serve_request *r, bool first, bool last);
    void *ctx;
} ib__gen_serve_watch;

/* Checks cfg, creates g's context for its slots (the context per slot from
 * cfg's schedule, or cfg's own) and serves the warm-up. *out is closed with
 * ib__gen_engine_close. */
ib_status ib__gen_engine_open(ib__gen *g, const ib_gen_serve_config *cfg, ib__gen_engine **out,
                              ib_error *err);

/* One measured run of cfg's schedule (its arrivals and rate; the engine's
 * slots, context and chunk as opened) from its origin now, as
 * ib_measure_gen_serve describes out; watch may be NULL. A request longer
 * than the opened context: IB_ERR_INVALID_ARG, nothing run. */
ib_status ib__gen_engine_serve(ib__gen_engine *e, const ib_gen_serve_config *cfg,
                               const ib__gen_serve_watch *watch, ib_gen_serve_result *out, ib_error *err);

/* Requests a second the warm-up served (its requests all arriving at
 * once: the engine's rate at that many requests); NaN without warm-up. */
double ib__gen_engine_warm_rate(const ib__gen_engine *e);

void ib__gen_engine_close(ib__gen_engine *e);

#endif
