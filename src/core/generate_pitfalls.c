/* What each classic mistake of generation benchmarks reports on the user's
 * model, beside the correct figure (docs/generate.md, "Pitfalls"). Four
 * rows are read off the correct runs themselves (the rate with the prefill,
 * the mean of rates, one run, runs of lengths that differ); five are
 * measured (no synchronize, an empty context, the runtime's default
 * threads, prefills back to back, no warm-up: the last, since it leaves
 * the workload cold). */
#include "core/generate.h"
#include "core/pitfall_reading.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Runs of each measured row: as many as the correct figure's, at most 10. */
#define PITFALL_MAX_RUNS 10
/* Steps of the run that settles a change of threads before it is timed. */
#define SETTLE_STEPS 4
/* The seed of the lengths of runs stopped at an end-of-sequence token. */
#define EOS_SEED 0x656f73ull

typedef struct row_text {
    const char *name, *figure;
    ib__pitfall_texts why;
} row_text;

static const row_text texts[IB_GEN_PITFALL_COUNT] = {
    [IB_GEN_PITFALL_NO_SYNC] = { "host clock, no synchronize",
                                 "per-token p50 ms",
                                 { -1,
                                   "a decode call returns once its work is queued: the clock stops before "
                                   "the token exists",
                                   "a CPU decode returns when its work is done, so without synchronize the "
                                   "clock should read the same: a difference beyond the noise is the "
                                   "machine's state between the two measurements (other load), unless this "
                                   "runtime queues work on the CPU too",
                                   "this runtime's decode waits for its logits before it returns: without "
                                   "synchronize the clock reads the same here",
                                   "a CPU decode returns when its work is done: without synchronize the "
                                   "clock reads the same",
                                   NULL } },
    [IB_GEN_PITFALL_PREFILL_IN_RATE] = { "tokens/s with the prefill",
                                         "tokens/s",
                                         { -1, "the prompt's prefill is another phase (TTFT): counted in the "
                                               "generation rate it lowers it" } },
    [IB_GEN_PITFALL_NO_WARMUP] = { "no warm-up",
                                   "TTFT mean ms",
                                   { 1, "a fresh context's first calls pay for buffers, kernels and caches",
                                     "a fresh context's first calls pay for buffers and caches" } },
    [IB_GEN_PITFALL_EMPTY_CONTEXT] = { "decode at an empty context",
                                       "per-token p50 ms",
                                       { -1,
                                         "a step attends over the whole context: at position 0 it is faster "
                                         "than at the depth requests reach",
                                         NULL,
                                         "the depth costs nothing measurable here: the attention over this "
                                         "context is small against the rest of the step, no difference shows "
                                         "beyond the noise",
                                         NULL, NULL } },
    [IB_GEN_PITFALL_MEAN_OF_RATES] = { "mean of per-run tokens/s",
                                       "tokens/s",
                                       { 1, "the mean of rates weighs fast runs more than their time: it is "
                                            "above tokens / time" } },
    [IB_GEN_PITFALL_ONE_RUN] = { "one run", "tokens/s", { 0, "one run is one draw of a distribution" } },
    [IB_GEN_PITFALL_EOS] = { "runs stopped at end-of-sequence",
                             "tokens/s",
                             { 0,
                               "runs of other lengths time other positions: their figures do not compare" } },
    [IB_GEN_PITFALL_THREADS] = { "default threads",
                                 "per-token p50 ms",
                                 { 1, "more threads than the cores the process may use wait for each other",
                                   NULL,
                                   "the runtime's default threads cost nothing measurable here (they only "
                                   "feed the device): no difference shows beyond the noise",
                                   "the runtime's default threads cost nothing measurable here (the extra "
                                   "threads found cores idle): no difference shows beyond the noise",
                                   NULL } },
    [IB_GEN_PITFALL_BACK_TO_BACK] = { "prefills back to back",
                                      "TTFT p50 ms",
                                      { -1,
                                        "prompts timed one after another (llama-bench's pp): a request's "
                                        "prefill follows decode steps, and the switch costs",
                                        NULL,
                                        "the switch from decode steps to a prefill costs nothing measurable "
                                        "here: no difference shows beyond the noise of the two measurements",
                                        NULL, NULL } },
};

/* No interval for the no-warm-up row: its figure is a mean (the cold
 * run's weight in it is the mistake), compare's interval is of medians. */
static const char *const mean_no_interval =
    "the figure is a mean (the cold run's weight in it is the mistake), compare's interval is of medians";

static void set_figures(ib_gen_pitfall_row *row, double wrong, double correct)
{
    row->wrong = wrong;
    row->correct = correct;
    row->error_pct = (wrong - correct) / correct * 100;
}

static void not_applicable(ib_gen_pitfall_row *row, const char *why)
{
    row->applies = false;
    row->not_applicable = why;
}

/* ------------------------------------------------------------------------ */
/* Rows read off the correct runs                                            */
/* ------------------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The length run k would have had, stopped at an end-of-sequence token:
 * uniform in [N/8, N] (at least 1), from a fixed seed. */
static int32_t eos_length(int32_t n, uint64_t *state)
{
    int32_t lo = n / 8 > 1 ? n / 8 : 1;
    return lo + (int32_t)(splitmix(state) % (uint64_t)(n - lo + 1));
}

/* A row read off the correct runs: the same data on both sides. */
static void read_exactly(ib_gen_pitfall_row *row)
{
    row->reading = ib__pitfall_exact(row->error_pct, row->error_ci95_pct, &row->no_interval);
}

static void read_off(const ib_gen_result *r, ib_gen_pitfall_row *rows)
{
    size_t n = (size_t)r->new_tokens, runs = r->runs;
    double steps = ib__sum(r->token_ms, runs * n);
    set_figures(&rows[IB_GEN_PITFALL_PREFILL_IN_RATE],
                (double)(runs * n) / (steps + ib__sum(r->ttft_ms, runs)) * 1e3, r->tokens_per_s);
    double rates = 0;
    for (size_t k = 0; k < runs; k++) rates += (double)n / ib__sum(r->token_ms + k * n, n) * 1e3;
    set_figures(&rows[IB_GEN_PITFALL_MEAN_OF_RATES], rates / (double)runs, r->tokens_per_s);
    set_figures(&rows[IB_GEN_PITFALL_ONE_RUN], (double)n / ib__sum(r->token_ms, n) * 1e3, r->tokens_per_s);
    ib_gen_pitfall_row *one = &rows[IB_GEN_PITFALL_ONE_RUN];
    one->reading = ib__pitfall_too_few(one->error_ci95_pct, &one->no_interval);
    read_exactly(&rows[IB_GEN_PITFALL_PREFILL_IN_RATE]);
    read_exactly(&rows[IB_GEN_PITFALL_MEAN_OF_RATES]);
    ib_gen_pitfall_row *eos = &rows[IB_GEN_PITFALL_EOS];
    if (n < 2) {
        not_applicable(eos, "one new token: no length to stop short of");
        return;
    }
    /* A run stopped after L tokens timed exactly its first L steps. */
    uint64_t state = EOS_SEED;
    double tokens = 0, ms = 0;
    eos->detail = (int32_t)n;
    for (size_t k = 0; k < runs; k++) {
        int32_t len = eos_length((int32_t)n, &state);
        tokens += len;
        ms += ib__sum(r->token_ms + k * n, (size_t)len);
        if (len < eos->detail) eos->detail = len;
    }
    set_figures(eos, tokens / ms * 1e3, r->tokens_per_s);
    read_exactly(eos);
}

/* ------------------------------------------------------------------------ */
/* Rows measured                                                             */
/* ------------------------------------------------------------------------ */

/* One run of spec, unless the measurement was interrupted. */
static ib_status run_once(ib__genm *m, const ib__gen_run_spec *spec, double *ttft, double *steps,
                          ib_error *err)
{
    if (ib__cancelled(m->cfg->run.cancel)) return ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
    return ib__gen_run(m->g, spec, ttft, steps, NULL, err);
}

/* runs of spec: every step's time into steps[runs x spec->steps] and each
 * TTFT into ttft[runs] (either NULL: not kept). */
static ib_status time_runs(ib__genm *m, const ib__gen_run_spec *spec, size_t runs, double *steps,
                           double *ttft, ib_error *err)
{
    size_t n = (size_t)spec->steps;
    double one_ttft;
    ib_status st = IB_OK;
    for (size_t k = 0; k < runs && st == IB_OK; k++)
        st = run_once(m, spec, ttft ? &ttft[k] : &one_ttft, steps ? steps + k * n : m->steps, err);
    return st;
}

static size_t row_runs(const ib_gen_result *r)
{
    return r->runs < PITFALL_MAX_RUNS ? r->runs : PITFALL_MAX_RUNS;
}

/* A measured row: a failure is the row's (kept in it), an interruption
 * the measurement's. */
static ib_status settle(ib_gen_pitfall_row *row, ib_status st, const ib_error *why, ib_error *err)
{
    row->status = st;
    if (st == IB_OK) return IB_OK;
    ib__strlcpy(row->error, why->message, sizeof row->error);
    if (st != IB_ERR_INTERRUPTED) return IB_OK;
    if (err) *err = *why;
    return st;
}

/* A row whose figure is the median of x[0..n) (sorted here), read against
 * the correct samples by their interval. */
static void median_row(ib_gen_pitfall_row *row, double *x, size_t n, const double *correct, size_t n_correct,
                       double correct_median)
{
    set_figures(row, ib__median_in_place(x, n), correct_median);
    row->reading = ib__pitfall_interval(correct, n_correct, x, n, row->error_ci95_pct, &row->no_interval);
}

/* Its steps against the correct steps. */
static void steps_median_row(ib_gen_pitfall_row *row, double *steps, size_t n, const ib_gen_result *r)
{
    median_row(row, steps, n, r->token_ms, r->runs * (size_t)r->new_tokens, r->token.p50);
}

/* A row whose mistake is in how the steps are run (spec): their median
 * against the correct per-token median. */
static ib_status steps_row(ib__genm *m, const ib__gen_run_spec *spec, ib_gen_pitfall_row *row, ib_error *err)
{
    size_t runs = row_runs(m->r), n = runs * (size_t)spec->steps;
    double *steps = malloc(n * sizeof *steps);
    IB_FAIL_IF(!steps, err, IB_ERR_NO_MEMORY, "out of host memory for samples");
    ib_error why = { { 0 } };
    ib_status st = time_runs(m, spec, runs, steps, NULL, &why);
    if (st == IB_OK) steps_median_row(row, steps, n, m->r);
    free(steps);
    return settle(row, st, &why, err);
}

static ib_status no_sync(ib__genm *m, ib_gen_pitfall_row *row, ib_error *err)
{
    ib__gen_run_spec spec = ib__gen_request_spec(m);
    spec.sync_steps = false;
    return steps_row(m, &spec, row, err);
}

static ib_status empty_context(ib__genm *m, ib_gen_pitfall_row *row, ib_error *err)
{
    ib__gen_run_spec spec = ib__gen_request_spec(m);
    spec.prompt = spec.depth = 0;
    return steps_row(m, &spec, row, err);
}

/* The runtime's default threads: a short run to settle (its thread pool),
 * then one run timed (its N steps: where the mistake is two orders of
 * magnitude, as it is with threads beyond the cores, more runs would take
 * minutes and say nothing more); the chosen threads back after. */
static ib_status default_threads(ib__genm *m, ib_gen_pitfall_row *row, ib_error *err)
{
    const ib__gen_info *in = &m->r->info;
    if (!m->g->ops->set_threads || in->n_threads_default <= 0 || in->n_threads_default == in->n_threads) {
        not_applicable(row, m->g->ops->set_threads && in->n_threads_default > 0
                                ? "the runtime's default threads are the ones chosen"
                                : "no threads to choose here");
        return IB_OK;
    }
    /* The mistake is more threads than the cores: a default within them
     * (a GPU host's many cores) is another setting, not this pitfall. */
    if (in->n_cpus_allowed > 0 && in->n_threads_default <= in->n_cpus_allowed) {
        not_applicable(row, "the runtime's default threads fit in the cores the process may use");
        return IB_OK;
    }
    row->detail = in->n_threads_default;
    ib__gen_run_spec spec = ib__gen_request_spec(m), settle_spec = spec;
    settle_spec.steps = spec.steps < SETTLE_STEPS ? spec.steps : SETTLE_STEPS;
    double ttft;
    ib_error why = { { 0 } };
    ib_status st = m->g->ops->set_threads(m->g, in->n_threads_default, &why);
    if (st == IB_OK) st = ib__gen_run(m->g, &settle_spec, &ttft, m->steps, NULL, &why);
    if (st == IB_OK) st = time_runs(m, &spec, 1, NULL, NULL, &why);
    ib_status back = m->g->ops->set_threads(m->g, in->n_threads, err);
    if (st == IB_OK) steps_median_row(row, m->steps, (size_t)spec.steps, m->r);
    IB_TRY(settle(row, st, &why, err));
    return back;
}

/* A fresh context timed at once: the naive loop's mean TTFT, its first
 * (cold) run included. */
static ib_status no_warmup(ib__genm *m, ib_gen_pitfall_row *row, ib_error *err)
{
    if (!m->g->ops->reopen) {
        not_applicable(row, "the backend cannot make its context cold again");
        return IB_OK;
    }
    ib__gen_run_spec spec = ib__gen_request_spec(m);
    size_t runs = row_runs(m->r);
    double ttft[PITFALL_MAX_RUNS];
    ib_error why = { { 0 } };
    ib_status st = m->g->ops->reopen(m->g, &why);
    if (st == IB_OK) st = time_runs(m, &spec, runs, NULL, ttft, &why);
    if (st == IB_OK) {
        set_figures(row, ib__sum(ttft, runs) / (double)runs, m->r->ttft.mean);
        row->reading = IB_READING_NO_INTERVAL;
        row->no_interval = mean_no_interval;
    }
    return settle(row, st, &why, err);
}

/* Prompts prefilled one after another with no decode between them, as
 * llama-bench's pp times them: their TTFT median against the requests'
 * (each prefill there follows the run before's decode steps). One untimed
 * prefill first: the switch from the rows before is not this row's. */
static ib_status back_to_back(ib__genm *m, ib_gen_pitfall_row *row, ib_error *err)
{
    ib__gen_run_spec spec = ib__gen_request_spec(m);
    if (spec.prompt <= 0) {
        not_applicable(row, "no prompt to prefill");
        return IB_OK;
    }
    spec.steps = 0;
    spec.depth = spec.prompt;
    size_t runs = row_runs(m->r);
    double ttft[PITFALL_MAX_RUNS], settle_ms;
    ib_error why = { { 0 } };
    ib_status st = run_once(m, &spec, &settle_ms, NULL, &why);
    for (size_t k = 0; k < runs && st == IB_OK; k++) st = run_once(m, &spec, &ttft[k], NULL, &why);
    if (st == IB_OK) median_row(row, ttft, runs, m->r->ttft_ms, m->r->runs, m->r->ttft.p50);
    return settle(row, st, &why, err);
}

/* Each row's why, by how it reads on this device. */
static void explain_rows(ib_gen_pitfall_row *rows, bool gpu)
{
    for (int k = 0; k < IB_GEN_PITFALL_COUNT; k++)
        rows[k].why = ib__pitfall_why(&texts[k].why, gpu, rows[k].reading);
}

ib_status ib__gen_pitfalls(ib__genm *m, ib_error *err)
{
    ib_gen_result *r = m->r;
    ib_gen_pitfall_row *rows = r->pitfalls;
    r->has_pitfalls = true;
    for (int k = 0; k < IB_GEN_PITFALL_COUNT; k++)
        rows[k] = (ib_gen_pitfall_row){ .kind = (ib_gen_pitfall)k,
                                        .name = texts[k].name,
                                        .why = texts[k].why.effect_gpu,
                                        .figure = texts[k].figure,
                                        .applies = true,
                                        .wrong = NAN,
                                        .correct = NAN,
                                        .error_pct = NAN,
                                        .error_ci95_pct = { NAN, NAN } };
    bool gpu = r->info.device != IB_DEVICE_CPU;
    read_off(r, rows);
    explain_rows(rows, gpu); /* the rows an interruption leaves keep these */
    static ib_status (*const measured[])(ib__genm *, ib_gen_pitfall_row *,
                                         ib_error *) = { no_sync, empty_context, default_threads,
                                                         back_to_back, no_warmup };
    static const ib_gen_pitfall kinds[] = { IB_GEN_PITFALL_NO_SYNC, IB_GEN_PITFALL_EMPTY_CONTEXT,
                                            IB_GEN_PITFALL_THREADS, IB_GEN_PITFALL_BACK_TO_BACK,
                                            IB_GEN_PITFALL_NO_WARMUP };
    const size_t n_measured = sizeof kinds / sizeof kinds[0];
    ib_status st = IB_OK;
    for (size_t i = 0; i < n_measured && st == IB_OK; i++) {
        ib__progress_step(&m->pr, (int64_t)i + 1, (int64_t)n_measured, rows[kinds[i]].name, 1);
        ib__progress_phase(&m->pr, IB_PHASE_SAMPLING, (int64_t)row_runs(r));
        st = measured[i](m, &rows[kinds[i]], err);
    }
    explain_rows(rows, gpu);
    return st;
}
