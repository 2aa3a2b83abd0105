#include "core/progress.h"

#include <math.h>
#include <string.h>

const char *ib_phase_name(ib_phase phase)
{
    switch (phase) {
    case IB_PHASE_COLD_RUN: return "cold run";
    case IB_PHASE_WARMUP: return "warm-up";
    case IB_PHASE_SAMPLING: return "sampling";
    case IB_PHASE_BACK_TO_BACK: return "back-to-back";
    case IB_PHASE_BATCH_PROBE: return "probe";
    case IB_PHASE_SERVING: return "serving";
    }
    return "?";
}

static double now_ms(const ib__progress *pr)
{
    if (pr->w) return ib__workload_now_ms(pr->w);
    return pr->clock ? pr->clock->now_ms(pr->clock->ctx) : ib__now_ms();
}

void ib__progress_init(ib__progress *pr, const ib_config *cfg, const ib_workload *w)
{
    memset(pr, 0, sizeof *pr);
    pr->fn = cfg->progress;
    pr->user = cfg->progress_user;
    pr->w = w;
    pr->end_ms = NAN;
    pr->p.total_eta_ms = NAN;
    if (!pr->fn) return;
    pr->t0_ms = pr->phase_t0_ms = pr->last_ms = now_ms(pr);
    pr->p.eta_ms = NAN;
}

void ib__progress_init_clock(ib__progress *pr, const ib_config *cfg, const ib__clock *clock)
{
    ib__progress_init(pr, cfg, NULL);
    pr->clock = clock;
    if (pr->fn) pr->t0_ms = pr->phase_t0_ms = pr->last_ms = now_ms(pr);
}

void ib__progress_step(ib__progress *pr, int64_t step, int64_t steps, const char *name, int64_t batch)
{
    if (!pr->fn) return;
    pr->p.step = step;
    pr->p.steps = steps;
    pr->p.batch = batch;
    pr->p.rate = 0;
    ib__strlcpy(pr->step_name, name ? name : "", sizeof pr->step_name);
    pr->p.step_name = name ? pr->step_name : NULL;
}

void ib__progress_rate(ib__progress *pr, double rate)
{
    if (pr->fn) pr->p.rate = isfinite(rate) && rate > 0 ? rate : 0;
}

void ib__progress_time_left(ib__progress *pr, double left_ms, bool is_bound)
{
    if (!pr->fn) return;
    pr->end_ms = isnan(left_ms) ? NAN : now_ms(pr) + left_ms;
    pr->p.total_eta_is_bound = is_bound;
}

static void report(ib__progress *pr, double now)
{
    pr->last_ms = now;
    pr->p.elapsed_ms = now - pr->t0_ms;
    pr->p.total_eta_ms = isnan(pr->end_ms) ? NAN : fmax(pr->end_ms - now, 0);
    pr->fn(&pr->p, pr->user);
}

void ib__progress_phase(ib__progress *pr, ib_phase phase, int64_t total)
{
    if (!pr->fn) return;
    double now = now_ms(pr);
    pr->phase_t0_ms = now;
    pr->p.phase = phase;
    pr->p.done = 0;
    pr->p.total = total;
    pr->p.eta_ms = NAN;
    pr->p.eta_is_bound = false;
    report(pr, now);
}

void ib__progress_runs(ib__progress *pr, int64_t done, double cap_ms)
{
    if (!pr->fn) return;
    double now = now_ms(pr);
    if (now - pr->last_ms < IB_PROGRESS_PERIOD_MS) return;
    double in_phase = now - pr->phase_t0_ms;
    pr->p.done = done;
    pr->p.eta_is_bound = !isnan(cap_ms);
    if (pr->p.eta_is_bound)
        pr->p.eta_ms = fmax(cap_ms - in_phase, 0);
    else if (pr->p.total > 0 && done > 0)
        pr->p.eta_ms = (double)(pr->p.total - done) * in_phase / (double)done;
    else
        pr->p.eta_ms = NAN;
    report(pr, now);
}

/* An inner measurement's report, as a step of the outer one. */
static void forward(const ib_progress *inner, void *user)
{
    const ib__progress *outer = user;
    ib_progress p = *inner;
    p.step = outer->p.step;
    p.steps = outer->p.steps;
    p.step_name = outer->p.step_name;
    p.elapsed_ms = now_ms(outer) - outer->t0_ms;
    outer->fn(&p, outer->user);
}

ib_config ib__progress_nested(const ib__progress *pr, const ib_config *cfg)
{
    ib_config nested = *cfg;
    if (pr->fn) {
        nested.progress = forward;
        nested.progress_user = (void *)pr; /* read only, by forward */
    }
    return nested;
}
