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

/* What each classic mistake of serving benchmarks reports beside the
 * correct figures of r, the run of c on g just measured
 * (serve_gen_pitfalls.c): r->pitfalls filled, r->has_pitfalls set. A row
 * that fails keeps its error; an interruption stops the rest. */
ib_status ib__gen_serve_pitfalls(ib__gen *g, const ib_gen_serve_config *c, ib_gen_serve_result *r,
                                 ib_error *err);

/* The prefix cache (serve_gen_prefix.c). The tokens of a prompt of
 * prompt_tokens that are the shared prefix (c->shared_prefix, at most the
 * prompt). */
int32_t ib__gen_shared_tokens(const ib_gen_serve_config *c, int32_t prompt_tokens);

/* c->shared_prefix of 0 up to the shortest prompt of rs[0..n). */
ib_status ib__gen_prefix_validate(const ib_gen_serve_config *c, const ib_gen_serve_request *rs, size_t n,
                                  ib_error *err);

/* The free slot (busy[s] false) a request whose prompt of prompt_tokens
 * begins with shared tokens of the shared prefix is admitted to: the one
 * whose cells hold the longest common prefix with it (held_shared[s]: the
 * shared prefix tokens slot s holds, 0 when it holds none or the cache is
 * off), the lowest of equals; *reuse its cells the request keeps. -1 when
 * every slot is busy. */
int32_t ib__gen_prefix_slot(const bool *busy, const int32_t *held_shared, int32_t slots, int32_t shared,
                            int32_t prompt_tokens, int32_t *reuse);

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

/* The machine as watched from the open (the GPU's state sampled, other
 * processes' CPU use, the threads) to now, when the watch stops: into
 * *env, the warnings returned. Call it once, after the last run (a
 * curve's result holds the machine of all its runs). */
unsigned ib__gen_engine_watched(ib__gen_engine *e, ib_env *env);

#endif
