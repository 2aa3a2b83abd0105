/* Internals of best (best.c, best_gen.c): what the race keeps for a
 * generative model's rows. The race itself is best.c's, for both kinds of
 * model; this side turns one generation measurement into the values the
 * race ranks and keeps the figures the report states. */
#ifndef IB_CORE_BEST_H
#define IB_CORE_BEST_H

#include "workload/generation.h"

typedef struct ib__best_gen_rows ib__best_gen_rows;

ib_status ib__best_gen_rows_new(size_t n_rows, ib__best_gen_rows **out, ib_error *err);

/* Moves the final measurement of row `winner` (-1: none) into *out (runs
 * 0 when there is none) and frees the rest. */
void ib__best_gen_rows_finish(ib__best_gen_rows *gr, int winner, ib_gen_result *out);

/* One generation measurement of row i's model g with the run rule c, its
 * prompt, depth and tokens gen's: *ms (malloc'ed, [*n], one a run) the
 * figure ranked. Its TTFT and TPOT values and its tokens are pooled with
 * the row's earlier ones into row->ttft, row->tpot and row->tokens_per_s,
 * or, when final, replace them and the result is kept as the row's
 * final. *n is the runs timed, also on a failure. */
ib_status ib__best_gen_measure(ib__best_gen_rows *gr, const ib_best_gen *gen, size_t i, ib_gen *g,
                               const ib_config *c, bool final, ib_best_row *row, double **ms, size_t *n,
                               unsigned *warnings, ib_env *env, ib_error *err);

/* Sets row i's model g to the race's request (one sequence of its
 * context, as every measurement sets it) and keeps the settings in effect
 * its backend then states: what it runs as. *same: the first earlier row
 * settled with the same settings (the same run), -1 none. */
ib_status ib__best_gen_settle(ib__best_gen_rows *gr, const ib_best_gen *gen, size_t i, ib_gen *g, int *same,
                              ib_error *err);

/* Row i's settings in effect, as ib__best_gen_settle kept them. */
const ib_option_list *ib__best_gen_ran(const ib__best_gen_rows *gr, size_t i);

/* What the result states of the first generative model that opened. */
void ib__best_gen_opened(ib_best_result *r, const ib_gen *g);

#endif
