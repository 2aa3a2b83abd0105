/* One run of a generation measurement and the warm-up over such runs: the
 * timed regions, written once for the request, the sequences and the
 * pitfalls. A region is the host clock around the call and its synchronize
 * (workload/generation.h): the call returns once the work is queued. */
#include "core/generate.h"
#include "core/rules.h"

#include <math.h>
#include <string.h>

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

ib_status ib__gen_warm_up(ib__genm *m, const ib__gen_run_spec *spec, const ib__gen_warmup *rule,
                          int64_t *runs_done, double *ms_spent, bool *steady, ib_error *err)
{
    double recent[2 * IB__STEADY_WINDOW];
    size_t n_recent = 0;
    ib__gen *g = m->g;
    double t0 = ib__gen_now_ms(g);
    *runs_done = 0;
    *steady = !rule->until_steady;
    ib__progress_phase(&m->pr, IB_PHASE_WARMUP, rule->until_steady ? 0 : rule->min_runs);
    for (;;) {
        double elapsed = ib__gen_now_ms(g) - t0;
        *ms_spent = elapsed;
        bool minimums_met = *runs_done >= rule->min_runs && elapsed >= rule->min_ms;
        if (minimums_met && (*steady || elapsed >= rule->max_ms)) return IB_OK;
        IB_FAIL_IF(ib__cancelled(m->cfg->run.cancel), err, IB_ERR_INTERRUPTED, "interrupted during warm-up");
        double ttft;
        IB_TRY(ib__gen_run(g, spec, &ttft, m->steps, m->samples, err));
        (*runs_done)++;
        ib__progress_runs(&m->pr, *runs_done, rule->until_steady ? rule->max_ms : NAN);
        if (n_recent == 2 * IB__STEADY_WINDOW) {
            memmove(recent, recent + 1, (n_recent - 1) * sizeof *recent);
            n_recent--;
        }
        double total = ib__gen_run_total(ttft, m->steps, spec->steps);
        recent[n_recent++] = total;
        if (rule->until_steady && !*steady)
            *steady =
                ib__is_steady(recent, n_recent, ib__steady_window(rule->max_ms, total), IB__STEADY_TOLERANCE);
    }
}
