/* The generation measurement (docs/generate.md): the cold first prefill and
 * step apart, warm-up until steady, then requests timed one after another,
 * each the prompt's prefill (TTFT) and N decode steps timed one by one; the
 * statistics with their intervals (stats.c), the stopping rules (rules.c).
 * The sequences decoded together and the pitfalls follow in their files. */
#include "core/generate.h"
#include "core/latency.h"
#include "core/rules.h"
#include "core/stats.h"
#include "env/env.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ib_gen_config_init(ib_gen_config *cfg)
{
    *cfg = (ib_gen_config){
        .prompt_tokens = 512,
        .new_tokens = 128,
        .max_sequences = IB_GEN_MAX_SEQUENCES,
        .sequence_runs = 3,
        .knee_fraction = 0.95,
    };
    ib_config_init(&cfg->run);
    /* A run is a whole request (P + N tokens, ~0.2 s of a 1B model on a
     * GPU) and gives N token samples: fewer runs than a forward pass's. */
    cfg->run.runs = 30;
    cfg->run.warmup_runs = 3;
}

/* ------------------------------------------------------------------------ */
/* Validation: every bad count refused before anything runs                  */
/* ------------------------------------------------------------------------ */

static ib_status validate_counts(const ib_gen_config *cfg, ib_error *err)
{
    IB_FAIL_IF(cfg->prompt_tokens < 1 || cfg->prompt_tokens > IB__GEN_MAX_TOKENS, err, IB_ERR_INVALID_ARG,
               "the prompt must be 1 to %d tokens (%d given)", IB__GEN_MAX_TOKENS, (int)cfg->prompt_tokens);
    IB_FAIL_IF(cfg->new_tokens < 1 || cfg->new_tokens > IB__GEN_MAX_TOKENS, err, IB_ERR_INVALID_ARG,
               "the new tokens must be 1 to %d (%d given)", IB__GEN_MAX_TOKENS, (int)cfg->new_tokens);
    IB_FAIL_IF(cfg->depth < 0 || (cfg->depth > 0 && cfg->depth < cfg->prompt_tokens), err, IB_ERR_INVALID_ARG,
               "depth %d is below the prompt of %d tokens: the depth is the context before the first timed "
               "step, the prompt included",
               (int)cfg->depth, (int)cfg->prompt_tokens);
    IB_FAIL_IF(
        cfg->depth > IB__GEN_MAX_TOKENS || cfg->ctx_per_seq < 0 || cfg->ctx_per_seq > IB__GEN_MAX_TOKENS, err,
        IB_ERR_INVALID_ARG, "the depth and the context per sequence are 0 to %d tokens", IB__GEN_MAX_TOKENS);
    IB_FAIL_IF(cfg->sequence_runs < 1 || cfg->sequence_runs > IB__MAX_RUNS, err, IB_ERR_INVALID_ARG,
               "runs per sequence count must be 1 to %d", IB__MAX_RUNS);
    IB_FAIL_IF(cfg->max_sequences < 1 || cfg->max_sequences > IB_GEN_MAX_SEQUENCES, err, IB_ERR_INVALID_ARG,
               "the search's bound must be 1 to %d sequences", IB_GEN_MAX_SEQUENCES);
    IB_FAIL_IF(!(cfg->tpot_budget_ms >= 0 && cfg->tpot_budget_ms <= IB__MAX_TIME_MS), err, IB_ERR_INVALID_ARG,
               "the TPOT budget must be between 0 (none) and %.0f ms", IB__MAX_TIME_MS);
    IB_FAIL_IF(!(cfg->knee_fraction > 0 && cfg->knee_fraction <= 1), err, IB_ERR_INVALID_ARG,
               "the knee fraction must be in (0, 1]");
    return IB_OK;
}

/* The samples kept stay bounded: the runs asked for (or the adaptive cap)
 * times the tokens of each. */
static ib_status validate_samples(const ib_gen_config *cfg, ib_error *err)
{
    int64_t runs = cfg->run.precision > 0 ? cfg->run.max_runs : cfg->run.runs;
    IB_FAIL_IF(runs * cfg->new_tokens > IB__GEN_MAX_SAMPLES, err, IB_ERR_INVALID_ARG,
               "%lld runs of %d new tokens are more than the %lld token samples a measurement keeps",
               (long long)runs, (int)cfg->new_tokens, (long long)IB__GEN_MAX_SAMPLES);
    IB_FAIL_IF(cfg->sequence_runs * cfg->new_tokens > IB__GEN_MAX_SAMPLES, err, IB_ERR_INVALID_ARG,
               "%lld runs of %d new tokens per sequence count are more than the %lld token samples a "
               "measurement keeps",
               (long long)cfg->sequence_runs, (int)cfg->new_tokens, (long long)IB__GEN_MAX_SAMPLES);
    return IB_OK;
}

static ib_status validate_sequences(const ib_gen_config *cfg, ib_error *err)
{
    IB_FAIL_IF(cfg->n_sequences > IB_GEN_MAX_POINTS || (cfg->n_sequences && !cfg->sequences), err,
               IB_ERR_INVALID_ARG, "a sequence list holds 1 to %d counts", IB_GEN_MAX_POINTS);
    for (size_t i = 0; i < cfg->n_sequences; i++) {
        int32_t s = cfg->sequences[i];
        IB_FAIL_IF(s < 1 || s > IB_GEN_MAX_SEQUENCES, err, IB_ERR_INVALID_ARG,
                   "%d sequences: a count is 1 to %d (the most the runtime allows)", (int)s,
                   IB_GEN_MAX_SEQUENCES);
        for (size_t j = 0; j < i; j++)
            IB_FAIL_IF(cfg->sequences[j] == s, err, IB_ERR_INVALID_ARG, "%d sequences are listed twice",
                       (int)s);
    }
    IB_FAIL_IF(cfg->tpot_budget_ms > 0 && !cfg->search && !cfg->n_sequences, err, IB_ERR_INVALID_ARG,
               "a TPOT budget picks among sequence counts: give a list or the search");
    return IB_OK;
}

int32_t ib__gen_context_per_seq(const ib_gen_config *cfg)
{
    int32_t depth = cfg->depth > 0 ? cfg->depth : cfg->prompt_tokens;
    return cfg->ctx_per_seq > 0 ? cfg->ctx_per_seq : (int32_t)((int64_t)depth + cfg->new_tokens);
}

/* The context each sequence gets and its checks against the prompt, the
 * depth and the model. */
static ib_status context_in_effect(const ib__gen *g, const ib_gen_config *cfg, int32_t *depth, int32_t *ctx,
                                   ib_error *err)
{
    *depth = cfg->depth > 0 ? cfg->depth : cfg->prompt_tokens;
    int64_t needed = (int64_t)*depth + cfg->new_tokens;
    *ctx = ib__gen_context_per_seq(cfg);
    IB_FAIL_IF(cfg->prompt_tokens > *ctx, err, IB_ERR_INVALID_ARG,
               "a prompt of %d tokens is longer than the context of %d", (int)cfg->prompt_tokens, (int)*ctx);
    IB_FAIL_IF(needed > *ctx, err, IB_ERR_INVALID_ARG, "depth %d + %d new tokens pass the context of %d",
               (int)*depth, (int)cfg->new_tokens, (int)*ctx);
    int32_t train = g->info.n_ctx_train;
    IB_FAIL_IF(train > 0 && *ctx > train, err, IB_ERR_INVALID_ARG,
               "a context of %d tokens per sequence passes the model's own (n_ctx_train %d)", (int)*ctx,
               (int)train);
    return IB_OK;
}

static ib_status validate(const ib__gen *g, const ib_gen_config *cfg, ib_error *err)
{
    IB_FAIL_IF(!g, err, IB_ERR_INVALID_ARG, "no generation workload");
    IB_FAIL_IF(!g->ops || g->ops->version != IB__GEN_OPS_VERSION, err, IB_ERR_INTERNAL,
               "generation workload of another version");
    IB_TRY(ib__config_validate(&cfg->run, err));
    IB_TRY(validate_counts(cfg, err));
    IB_TRY(validate_samples(cfg, err));
    IB_TRY(validate_sequences(cfg, err));
    IB_FAIL_IF(cfg->time_sampling && !g->ops->sample, err, IB_ERR_UNSUPPORTED, "this backend cannot sample");
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* Samples                                                                   */
/* ------------------------------------------------------------------------ */

/* Room for one more run's samples. */
static ib_status grow(ib_gen_result *r, size_t *cap, bool sampling)
{
    if (r->runs < *cap) return IB_OK;
    size_t ncap = *cap ? *cap * 2 : 64, n = (size_t)r->new_tokens;
    double *p;
    if (!(p = realloc(r->ttft_ms, ncap * sizeof *p))) return IB_ERR_NO_MEMORY;
    r->ttft_ms = p;
    if (!(p = realloc(r->request_ms, ncap * sizeof *p))) return IB_ERR_NO_MEMORY;
    r->request_ms = p;
    if (!(p = realloc(r->token_ms, ncap * n * sizeof *p))) return IB_ERR_NO_MEMORY;
    r->token_ms = p;
    if (sampling) {
        if (!(p = realloc(r->sample_ms, ncap * n * sizeof *p))) return IB_ERR_NO_MEMORY;
        r->sample_ms = p;
    }
    *cap = ncap;
    return IB_OK;
}

/* Keeps the run just timed (m->steps, m->samples): the request is the TTFT
 * and the N - 1 steps after it that a user waits for. */
static void keep_run(ib__genm *m, double ttft)
{
    ib_gen_result *r = m->r;
    size_t n = (size_t)r->new_tokens;
    r->ttft_ms[r->runs] = ttft;
    r->request_ms[r->runs] = ib__gen_run_total(ttft, m->steps, (int32_t)n - 1);
    memcpy(r->token_ms + r->runs * n, m->steps, n * sizeof *m->steps);
    if (r->sample_ms) memcpy(r->sample_ms + r->runs * n, m->samples, n * sizeof *m->samples);
    r->runs++;
}

static ib_status sample(ib__genm *m, ib_error *err)
{
    const ib_config *c = &m->cfg->run;
    ib_gen_result *r = m->r;
    ib__stop_rule rule = { .runs = c->runs,
                           .precision = c->precision,
                           .min_runs = c->min_runs,
                           .max_runs = c->max_runs,
                           .max_time_ms = c->max_time_ms,
                           .resolution_ms = r->timer_resolution_ms };
    ib__gen_run_spec spec = ib__gen_request_spec(m);
    spec.sample = m->cfg->time_sampling;
    size_t cap = 0;
    ib__progress_phase(&m->pr, IB_PHASE_SAMPLING, c->precision > 0 ? c->max_runs : c->runs);
    double t0 = ib__gen_now_ms(m->g), achieved = INFINITY;
    for (;;) {
        double elapsed = ib__gen_now_ms(m->g) - t0;
        ib__stop_decision d = ib__stop_check(&rule, r->ttft_ms, r->runs, elapsed, &achieved);
        /* Precision is the TTFT's and the token's both. */
        if (d == IB__STOP_PRECISION && ib__median_precision(r->token_ms, r->runs * (size_t)r->new_tokens,
                                                            rule.resolution_ms) > c->precision)
            d = IB__CONTINUE;
        if (d != IB__CONTINUE) return IB_OK;
        IB_FAIL_IF(ib__cancelled(c->cancel), err, IB_ERR_INTERRUPTED, "interrupted");
        IB_FAIL_IF(grow(r, &cap, spec.sample) != IB_OK, err, IB_ERR_NO_MEMORY,
                   "out of host memory for samples");
        double ttft;
        IB_TRY(ib__gen_run(m->g, &spec, &ttft, m->steps, m->samples, err));
        keep_run(m, ttft);
        ib__progress_runs(&m->pr, (int64_t)r->runs, c->precision > 0 ? c->max_time_ms : NAN);
    }
}

/* ------------------------------------------------------------------------ */
/* Figures                                                                   */
/* ------------------------------------------------------------------------ */

static void stats_of(const double *x, size_t n, double resolution_ms, ib_stats *st)
{
    if (n == 0 || ib_stats_compute(x, n, st) != IB_OK) return;
    ib__stats_widen_to_resolution(st, resolution_ms);
}

/* The median over runs of each step position: latency by token position. */
static ib_status by_position(ib_gen_result *r)
{
    size_t n = (size_t)r->new_tokens;
    r->position_p50_ms = malloc(n * sizeof *r->position_p50_ms);
    double *col = malloc(r->runs * sizeof *col);
    if (!r->position_p50_ms || !col) {
        free(r->position_p50_ms);
        free(col);
        r->position_p50_ms = NULL;
        return IB_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < r->runs; k++) col[k] = r->token_ms[k * n + i];
        ib__sort(col, r->runs);
        r->position_p50_ms[i] = ib_quantile_sorted(col, r->runs, 0.5);
    }
    free(col);
    return IB_OK;
}

static void summarize(ib_gen_result *r)
{
    if (r->runs == 0) return;
    size_t n_tok = r->runs * (size_t)r->new_tokens;
    double res = r->timer_resolution_ms;
    stats_of(r->ttft_ms, r->runs, res, &r->ttft);
    stats_of(r->token_ms, n_tok, res, &r->token);
    stats_of(r->request_ms, r->runs, res, &r->request);
    if (r->sample_ms) stats_of(r->sample_ms, n_tok, res, &r->sample);
    /* Rates are tokens over the time they took, never a mean of rates. */
    r->prompt_tokens_per_s = (double)r->prompt_tokens * (double)r->runs / ib__sum(r->ttft_ms, r->runs) * 1e3;
    r->tokens_per_s = (double)n_tok / ib__sum(r->token_ms, n_tok) * 1e3;
    r->tpot_ms = r->token.mean;
    r->precision_achieved =
        fmax(ib__median_ci_relative_halfwidth(&r->ttft), ib__median_ci_relative_halfwidth(&r->token));
    if (r->precision_target > 0) r->precision_met = r->precision_achieved <= r->precision_target;
    /* Noise is the runs' spread: the TTFT's and each request's total. The
     * tokens' own spread is the model's (latency grows with the position,
     * the step after a prefill is slower, the tail): their CV was over 5%
     * in every H200 run whose requests repeated within 1 to 1.6%. */
    r->warnings |=
        ib__sample_warnings(r->ttft_ms, &r->ttft) | ib__sample_warnings(r->request_ms, &r->request);
    if (r->precision_target > 0 && !r->precision_met) r->warnings |= IB_WARN_PRECISION_NOT_MET;
    (void)by_position(r); /* a view of token_ms: without memory for it the figures stand */
}

/* ------------------------------------------------------------------------ */
/* The measurement                                                           */
/* ------------------------------------------------------------------------ */

static void no_energy(ib_gen_result *r, const char *why)
{
    ib__energy_none(&r->decode_energy, "%s", why);
    ib__energy_none(&r->decode_cpu_energy, "%s", why);
    ib__energy_none(&r->prefill_energy, "%s", why);
}

static void result_init(ib_gen_result *r, const ib__gen *g, const ib_gen_config *cfg)
{
    memset(r, 0, sizeof *r);
    r->info = g ? g->info : (ib_gen_info){ 0 };
    r->prompt_tokens = cfg->prompt_tokens;
    r->new_tokens = cfg->new_tokens;
    r->fixed_length = true;
    r->cold_prefill_ms = r->cold_step_ms = NAN;
    r->prompt_tokens_per_s = r->tokens_per_s = r->tpot_ms = NAN;
    r->precision_target = cfg->run.precision;
    r->precision_achieved = NAN;
    r->timer_resolution_ms = g ? g->clock.resolution_ms : NAN;
    r->peak = r->knee = r->best_within_budget = r->most_efficient = -1;
    r->tpot_budget_ms = cfg->tpot_budget_ms;
    no_energy(r, "not measured");
}

/* The machine: the host's facts (the runtime is the workload's, in its
 * info: not the forward-pass backends' that ib__env_capture would name). */
static void capture_env(ib_gen_result *r)
{
    ib__env_capture(&r->env, NULL);
    memset(&r->env.runtime, 0, sizeof r->env.runtime); /* the info states it */
}

/* The cold first prefill and step, then warm-up: the single sequence. */
static ib_status cold_and_warm(ib__genm *m, ib_error *err)
{
    ib_gen_result *r = m->r;
    const ib_config *c = &m->cfg->run;
    ib__gen_run_spec cold = ib__gen_request_spec(m);
    cold.steps = 1;
    ib__progress_phase(&m->pr, IB_PHASE_COLD_RUN, 1);
    IB_TRY(ib__gen_run(m->g, &cold, &r->cold_prefill_ms, m->steps, m->samples, err));
    r->cold_step_ms = m->steps[0];
    ib__gen_run_spec spec = ib__gen_request_spec(m);
    ib__warmup_rule rule = { .min_runs = c->warmup_runs,
                             .min_ms = c->warmup_ms,
                             .max_ms = c->warmup_max_ms,
                             .until_steady = c->warmup_until_steady };
    IB_TRY(
        ib__gen_warm_up(m, &spec, &rule, &r->warmup_runs_done, &r->warmup_ms_spent, &r->warmup_steady, err));
    if (!r->warmup_steady) r->warnings |= IB_WARN_NOT_STEADY;
    return IB_OK;
}

static ib_status single_sequence(ib__genm *m, ib_error *err)
{
    IB_TRY(m->g->ops->set_sequences(m->g, 1, m->ctx, err));
    m->r->info = m->g->info;
    IB_TRY(cold_and_warm(m, err));
    return sample(m, err);
}

static ib_status measure(ib__genm *m, ib_error *err)
{
    ib__cpu_watch cpu;
    ib__cpu_watch_start(&cpu, &m->r->env);
    ib__gen_energy_open(m); /* the device idle: before the cold run */
    ib_status st = single_sequence(m, err);
    m->r->warnings |= ib__cpu_watch_stop(&cpu, &m->r->env, m->g->info.device == IB_DEVICE_CPU);
    m->r->warnings |= ib__env_threads_warning(&m->r->env, m->g->info.n_threads, m->g->info.n_cpus_allowed,
                                              m->g->info.device == IB_DEVICE_CPU);
    summarize(m->r);
    if (st == IB_OK)
        st = ib__gen_request_energy(m, err);
    else
        no_energy(m->r, "the measurement stopped early: no energy figure");
    if (st == IB_OK && m->cfg->pitfalls) st = ib__gen_pitfalls(m, err);
    if (st == IB_OK && (m->cfg->search || m->cfg->n_sequences)) st = ib__gen_sequences(m, err);
    ib__gen_energy_close(m);
    return st;
}

ib_status ib_gen_config_check(const ib_gen *g, const ib_gen_config *cfg, ib_error *err)
{
    int32_t depth, ctx;
    IB_TRY(validate(g, cfg, err));
    return context_in_effect(g, cfg, &depth, &ctx, err);
}

ib_status ib_measure_generation(ib_gen *g, const ib_gen_config *cfg, ib_gen_result *out, ib_error *err)
{
    result_init(out, g, cfg);
    IB_TRY(validate(g, cfg, err));
    ib__genm m = { .g = g, .cfg = cfg, .r = out };
    IB_TRY(context_in_effect(g, cfg, &m.depth, &m.ctx, err));
    out->depth = m.depth;
    out->ctx_per_seq = m.ctx;
    capture_env(out);
    m.steps = malloc((size_t)cfg->new_tokens * sizeof *m.steps);
    m.samples = malloc((size_t)cfg->new_tokens * sizeof *m.samples);
    ib_status st = m.steps && m.samples ? IB_OK : ib__fail(err, IB_ERR_NO_MEMORY, "out of host memory");
    ib__progress_init_clock(&m.pr, &cfg->run, &g->clock);
    ib__progress_step(&m.pr, 0, 0, NULL, 1);
    if (st == IB_OK) st = measure(&m, err);
    free(m.steps);
    free(m.samples);
    if (st != IB_OK && st != IB_ERR_NOT_MET) {
        out->partial = true;
        out->stop_status = st;
    }
    return st;
}

void ib_gen_result_free(ib_gen_result *r)
{
    if (!r) return;
    free(r->ttft_ms);
    free(r->token_ms);
    free(r->request_ms);
    free(r->sample_ms);
    free(r->position_p50_ms);
    r->ttft_ms = r->token_ms = r->request_ms = r->sample_ms = r->position_p50_ms = NULL;
    r->runs = 0;
}
