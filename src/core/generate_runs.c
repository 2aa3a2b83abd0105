/* One run of a generation measurement and the warm-up over such runs: the
 * timed regions, written once for the request, the sequences and the
 * pitfalls. A region is the host clock around the call and its synchronize
 * (workload/generation.h): the call returns once the work is queued. */
#include "core/generate.h"

#include <math.h>

static ib_status prefill_timed(ib__gen *g, int32_t n, double *ms, ib_error *err)
{
    double t0 = ib__gen_now_ms(g);
    IB_TRY(g->ops->prefill(g, 0, 0, n, err));
    IB_TRY(g->ops->synchronize(g, err));
    *ms = ib__gen_now_ms(g) - t0;
    return IB_OK;
}

/* The context from the prompt's end to depth, untimed, and the other
 * sequences forked from sequence 0 (untimed: a server prefills each
 * request's prompt apart; what is timed here is the steps decoded
 * together). */
static ib_status fill(ib__gen *g, const ib__gen_run_spec *s, ib_error *err)
{
    if (s->depth > s->prompt) IB_TRY(g->ops->prefill(g, 0, s->prompt, s->depth - s->prompt, err));
    if (s->n_seqs > 1) IB_TRY(g->ops->fork(g, s->n_seqs, s->depth, err));
    return g->ops->synchronize(g, err);
}

static ib_status step_timed(ib__gen *g, const ib__gen_run_spec *s, int32_t i, double *ms, ib_error *err)
{
    double t0 = ib__gen_now_ms(g);
    IB_TRY(g->ops->step(g, s->n_seqs, s->depth + i, err));
    if (s->sync_steps) IB_TRY(g->ops->synchronize(g, err));
    *ms = ib__gen_now_ms(g) - t0;
    return IB_OK;
}

static ib_status sample_timed(ib__gen *g, double *ms, ib_error *err)
{
    double t0 = ib__gen_now_ms(g);
    IB_TRY(g->ops->sample(g, 0, err));
    *ms = ib__gen_now_ms(g) - t0;
    return IB_OK;
}

ib_status ib__gen_run(ib__gen *g, const ib__gen_run_spec *spec, double *ttft_ms, double *steps_ms,
                      double *samples_ms, ib_error *err)
{
    *ttft_ms = NAN;
    IB_TRY(g->ops->clear(g, err));
    if (spec->prompt > 0) IB_TRY(prefill_timed(g, spec->prompt, ttft_ms, err));
    IB_TRY(fill(g, spec, err));
    for (int32_t i = 0; i < spec->steps; i++) {
        IB_TRY(step_timed(g, spec, i, &steps_ms[i], err));
        if (spec->sample) IB_TRY(sample_timed(g, &samples_ms[i], err));
    }
    /* Unsynchronized steps leave work queued: it must not land in what is
     * timed next. */
    return spec->sync_steps ? IB_OK : g->ops->synchronize(g, err);
}

double ib__gen_run_total(double ttft_ms, const double *steps_ms, int32_t steps)
{
    double total = isnan(ttft_ms) ? 0 : ttft_ms;
    for (int32_t i = 0; i < steps; i++) total += steps_ms[i];
    return total;
}

ib__gen_run_spec ib__gen_request_spec(const ib__genm *m)
{
    return (ib__gen_run_spec){ .n_seqs = 1,
                               .prompt = m->cfg->prompt_tokens,
                               .depth = m->depth,
                               .steps = m->cfg->new_tokens,
                               .sync_steps = true };
}

/* A warm-up run: steadiness on the run's total, which also sizes the
 * window. */
typedef struct warm_run {
    ib__genm *m;
    const ib__gen_run_spec *spec;
} warm_run;

static ib_status gen_warm_run(void *user, double *value, double *run_ms, ib_error *err)
{
    warm_run *w = user;
    double ttft;
    IB_TRY(ib__gen_run(w->m->g, w->spec, &ttft, w->m->steps, w->m->samples, err));
    *value = *run_ms = ib__gen_run_total(ttft, w->m->steps, w->spec->steps);
    return IB_OK;
}

ib_status ib__gen_warm_up(ib__genm *m, const ib__gen_run_spec *spec, const ib__warmup_rule *rule,
                          int64_t *runs_done, double *ms_spent, bool *steady, ib_error *err)
{
    warm_run w = { .m = m, .spec = spec };
    return ib__warm_up_loop(rule, &m->g->clock, m->cfg->run.cancel, &m->pr, gen_warm_run, &w, runs_done,
                            ms_spent, steady, err);
}
