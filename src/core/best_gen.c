/* best for a generative model (docs/best.md, "Generative models"): the
 * generation side of best.c's race. A candidate's measurement is the
 * generation method's own (ib_measure_generation: cold run apart, warm-up,
 * its timed requests), and the race ranks one value a run: the run's TPOT
 * (the mean of its N decode steps) or its TTFT. A run, not a token, is the
 * unit: the steps of one run share its context's growth and its state, so
 * they are not independent samples, and an interval over them would claim
 * more than was measured. */
#include "core/best.h"
#include "base/common.h"
#include "core/generate.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ib_best_gen_init(ib_best_gen *gen)
{
    memset(gen, 0, sizeof *gen);
    ib_gen_config_init(&gen->gen);
    gen->figure = IB_BEST_GEN_TPOT;
}

const char *ib_best_gen_figure_name(ib_best_gen_figure figure)
{
    return figure == IB_BEST_GEN_TTFT ? "ttft" : "tpot";
}

/* A row's values so far: one TTFT and one TPOT a run, and its decode
 * tokens and their time (tokens/s is the one over the other). */
typedef struct gen_row {
    double *ttft, *tpot; /* [n] */
    size_t n;
    double tokens, steps_ms;
    ib_gen_result *final; /* its final measurement, kept for the winner */
    bool settled;         /* ran holds what it runs as */
    ib_option_list ran;   /* the settings in effect for the request */
} gen_row;

struct ib__best_gen_rows {
    size_t n_rows;
    gen_row rows[];
};

ib_status ib__best_gen_rows_new(size_t n_rows, ib__best_gen_rows **out, ib_error *err)
{
    *out = calloc(1, sizeof **out + n_rows * sizeof(gen_row));
    IB_FAIL_IF(!*out, err, IB_ERR_NO_MEMORY, "out of host memory");
    (*out)->n_rows = n_rows;
    return IB_OK;
}

static void drop_final(gen_row *gr)
{
    if (!gr->final) return;
    ib_gen_result_free(gr->final);
    free(gr->final);
    gr->final = NULL;
}

void ib__best_gen_rows_finish(ib__best_gen_rows *gr, int winner, ib_gen_result *out)
{
    memset(out, 0, sizeof *out);
    out->peak = out->knee = out->best_within_budget = -1;
    for (size_t i = 0; gr && i < gr->n_rows; i++) {
        gen_row *row = &gr->rows[i];
        if ((int)i == winner && row->final) {
            *out = *row->final; /* its arrays move with it */
            free(row->final);
            row->final = NULL;
        }
        drop_final(row);
        free(row->ttft);
        free(row->tpot);
    }
    free(gr);
}

void ib__best_gen_opened(ib_best_result *r, const ib_gen *g)
{
    r->gen_info = g->info;
    ib__strlcpy(r->info.model, g->info.model, sizeof r->info.model);
    ib__strlcpy(r->info.provider, g->info.arch, sizeof r->info.provider);
    r->info.device = g->info.device;
    r->info.batch = 1;
}

/* Whether a and b state the same settings: each key with the same value,
 * in the backend's order. A backend that states none says nothing of
 * what runs: its rows are never merged. */
static bool same_settings(const ib_option_list *a, const ib_option_list *b)
{
    if (a->n == 0 || a->n != b->n) return false;
    for (size_t k = 0; k < a->n; k++)
        if (strcmp(a->items[k].key, b->items[k].key) || strcmp(a->items[k].value, b->items[k].value))
            return false;
    return true;
}

ib_status ib__best_gen_settle(ib__best_gen_rows *gr, const ib_best_gen *gen, size_t i, ib_gen *g, int *same,
                              ib_error *err)
{
    *same = -1;
    /* What the backend states before its context is set is the context
     * it opened with: a runtime clamps to the request's context (llama.cpp's
     * n_batch and n_ubatch to its tokens) only once it is set. */
    IB_TRY(g->ops->set_sequences(g, 1, ib__gen_context_per_seq(&gen->gen), err));
    gen_row *row = &gr->rows[i];
    row->ran = g->info.options;
    row->settled = true;
    for (size_t j = 0; j < i && *same < 0; j++)
        if (gr->rows[j].settled && same_settings(&gr->rows[j].ran, &row->ran)) *same = (int)j;
    return IB_OK;
}

const ib_option_list *ib__best_gen_ran(const ib__best_gen_rows *gr, size_t i) { return &gr->rows[i].ran; }

/* The configuration of one measurement: gen's request, c's run rule, and
 * none of what a race does not rank. */
static ib_gen_config measurement(const ib_best_gen *gen, const ib_config *c)
{
    ib_gen_config gc = gen->gen;
    gc.run = *c;
    gc.sequences = NULL;
    gc.n_sequences = 0;
    gc.search = false;
    gc.tpot_budget_ms = 0;
    gc.time_sampling = false;
    gc.pitfalls = false;
    return gc;
}

/* Adds (or, when final, puts in place of the row's) the runs of res. */
static ib_status pool(gen_row *row, const ib_gen_result *res, bool final)
{
    size_t keep = final ? 0 : row->n, runs = res->runs, n_tok = (size_t)res->new_tokens;
    double *ttft = realloc(row->ttft, (keep + runs + 1) * sizeof *ttft);
    if (ttft) row->ttft = ttft;
    double *tpot = realloc(row->tpot, (keep + runs + 1) * sizeof *tpot);
    if (tpot) row->tpot = tpot;
    if (!ttft || !tpot) return IB_ERR_NO_MEMORY;
    if (final) row->tokens = row->steps_ms = 0;
    for (size_t k = 0; k < runs; k++) {
        double steps = ib__sum(res->token_ms + k * n_tok, n_tok);
        ttft[keep + k] = res->ttft_ms[k];
        tpot[keep + k] = steps / (double)n_tok;
        row->steps_ms += steps;
    }
    row->tokens += (double)(runs * n_tok);
    row->n = keep + runs;
    return IB_OK;
}

/* The row's figures over its pooled runs. */
static void figures(const gen_row *gr, ib_best_row *row)
{
    if (gr->n == 0) return;
    (void)ib_stats_compute(gr->ttft, gr->n, &row->ttft);
    (void)ib_stats_compute(gr->tpot, gr->n, &row->tpot);
    row->tokens_per_s = gr->steps_ms > 0 ? gr->tokens / gr->steps_ms * 1e3 : NAN;
}

/* The ranked values of the runs just pooled: the last `runs` of the row. */
static ib_status ranked(const gen_row *gr, ib_best_gen_figure figure, size_t runs, double **ms)
{
    const double *x = (figure == IB_BEST_GEN_TTFT ? gr->ttft : gr->tpot) + (gr->n - runs);
    *ms = malloc((runs + 1) * sizeof **ms);
    if (!*ms) return IB_ERR_NO_MEMORY;
    memcpy(*ms, x, runs * sizeof **ms);
    return IB_OK;
}

ib_status ib__best_gen_measure(ib__best_gen_rows *gr, const ib_best_gen *gen, size_t i, ib_gen *g,
                               const ib_config *c, bool final, ib_best_row *row, double **ms, size_t *n,
                               unsigned *warnings, ib_env *env, ib_error *err)
{
    *ms = NULL;
    *n = 0;
    ib_gen_result *res = malloc(sizeof *res);
    IB_FAIL_IF(!res, err, IB_ERR_NO_MEMORY, "out of host memory");
    ib_gen_config gc = measurement(gen, c);
    ib_status st = ib_measure_generation(g, &gc, res, err);
    *warnings = res->warnings;
    *env = res->env;
    gen_row *row_gr = &gr->rows[i];
    ib_status kept = res->runs > 0 ? pool(row_gr, res, final) : IB_OK;
    if (kept == IB_OK && res->runs > 0) kept = ranked(row_gr, gen->figure, res->runs, ms);
    if (kept != IB_OK) {
        ib_gen_result_free(res);
        free(res);
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of host memory for samples");
    }
    *n = res->runs;
    figures(row_gr, row);
    if (final && res->runs > 0) {
        drop_final(row_gr);
        row_gr->final = res;
    } else {
        ib_gen_result_free(res);
        free(res);
    }
    return st;
}
