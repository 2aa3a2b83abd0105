/* The step trace of a generative model served under load, read back into
 * what it explains (docs/serve-generative.md, "Why the tail"): each
 * request's inter-token gaps and the steps that made them, and the
 * summary of the tail (serve_gen_trace.c). */
#ifndef IB_CORE_SERVE_GEN_TRACE_H
#define IB_CORE_SERVE_GEN_TRACE_H

#include "base/common.h"

/* The steps that gave a request its tokens after its first (its first
 * token at first_ms, its last at end_ms): steps[*lo..*hi) of steps[0..n)
 * in time order, every step that ended after first_ms up to the one that
 * ended at end_ms. A step decodes every request generating, so each of
 * these steps made one gap of the request: hi - lo is its tokens less one. */
void ib__gen_serve_gap_steps(const ib_gen_serve_step *steps, size_t n, double first_ms, double end_ms,
                             size_t *lo, size_t *hi);

/* The gap that step k (in [lo, hi) above) made: its end less the end of
 * the step before it, or less first_ms for the first. */
double ib__gen_serve_gap_ms(const ib_gen_serve_step *steps, size_t lo, size_t k, double first_ms);

/* Every inter-token gap of the completed requests of rs[0..n) (those
 * with output_tokens generated), request after request, rebuilt from the
 * steps: *gaps_ms malloc'ed (the caller frees; NULL when there is none).
 * A request whose steps do not give its tokens (a trace that does not
 * belong to its requests): IB_ERR_INVALID_ARG. */
ib_status ib__gen_serve_gaps(const ib_gen_serve_request *rs, size_t n, const ib_gen_serve_step *steps,
                             size_t n_steps, double **gaps_ms, size_t *n_gaps);

/* The summary of r's trace (its requests, steps and distributions set)
 * into out. */
ib_status ib__gen_serve_tail(const ib_gen_serve_result *r, ib_gen_serve_tail *out);

#endif
