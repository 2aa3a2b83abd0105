/* Sequences decoded together: each count's step latency and aggregate
 * tokens/s, and the search for the largest count whose KV cache fits at a
 * context per sequence (search.h: the batch search's growth and bisection;
 * out of memory from set_sequences is "does not fit"), then the curve up
 * to it, its peak, its knee and the best within the TPOT budget. */
#include "core/generate.h"
#include "core/search.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct probe_state {
    ib__genm *m;
    ib_error limit; /* the runtime's words where it did not fit */
} probe_state;

/* A count fits when its context is created and one step of every sequence
 * runs (buffers some runtimes allocate only at the first decode). */
static ib_status seqs_fit(void *user, int64_t n, bool growing, bool *fits, ib_error *err)
{
    (void)growing;
    probe_state *ps = user;
    ib__genm *m = ps->m;
    ib_gen_result *r = m->r;
    IB_FAIL_IF(r->n_probes == IB_GEN_MAX_PROBES, err, IB_ERR_INTERNAL, "sequence search: more than %d probes",
               IB_GEN_MAX_PROBES);
    ib__progress_step(&m->pr, (int64_t)r->n_probes + 1, 0, "probe", n);
    ib__progress_phase(&m->pr, IB_PHASE_BATCH_PROBE, 0);
    double t0 = ib__gen_now_ms(m->g), ttft;
    ib_error why = { { 0 } };
    ib_status st = m->g->ops->set_sequences(m->g, (int32_t)n, m->ctx, &why);
    ib__gen_run_spec spec = ib__gen_request_spec(m);
    spec.n_seqs = (int32_t)n;
    spec.steps = 1;
    if (st == IB_OK) st = ib__gen_run(m->g, &spec, &ttft, m->steps, m->samples, &why);
    if (st != IB_OK && !ib__search_capacity_limit(st, n)) {
        if (err) *err = why;
        return st;
    }
    *fits = st == IB_OK;
    if (!*fits) ps->limit = why;
    r->probes[r->n_probes++] = (ib_gen_probe){
        .sequences = (int32_t)n, .fits = *fits, .status = st, .ms = ib__gen_now_ms(m->g) - t0
    };
    return IB_OK;
}

static ib_status search(ib__genm *m, ib_error *err)
{
    ib_gen_result *r = m->r;
    probe_state ps = { .m = m };
    int64_t fit = 0, no_fit = 0;
    ib_status st = ib__search_largest(seqs_fit, &ps, m->cfg->max_sequences, false, m->cfg->run.cancel,
                                      "sequence", &fit, &no_fit, err);
    r->searched = true;
    r->largest_fitting = (int32_t)fit;
    r->limited_by_max = st == IB_OK && no_fit == 0;
    ib__strlcpy(r->limit_reason, ps.limit.message, sizeof r->limit_reason);
    IB_TRY(st);
    IB_FAIL_IF(fit == 0, err, IB_ERR_DEVICE_OOM, "one sequence of %d tokens does not fit (%s)", (int)m->ctx,
               ps.limit.message);
    return IB_OK;
}

static int compare_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The counts timed: the list as given; with the search, the powers of two
 * up to the largest, the largest, and the list's counts, in order (one
 * above the largest is its point's "does not fit", said, not dropped). */
static size_t candidates(const ib__genm *m, int32_t *out)
{
    const ib_gen_config *cfg = m->cfg;
    size_t n = 0;
    if (!cfg->search) {
        memcpy(out, cfg->sequences, cfg->n_sequences * sizeof *out);
        return cfg->n_sequences;
    }
    int32_t largest = m->r->largest_fitting;
    for (int32_t s = 1; s <= largest; s *= 2) out[n++] = s;
    if (out[n - 1] != largest) out[n++] = largest;
    for (size_t i = 0; i < cfg->n_sequences && n < IB_GEN_MAX_POINTS; i++) {
        bool known = false;
        for (size_t j = 0; j < n; j++) known |= out[j] == cfg->sequences[i];
        if (!known) out[n++] = cfg->sequences[i];
    }
    qsort(out, n, sizeof *out, compare_i32);
    return n;
}

/* Timed runs at one count: every step's latency kept. */
static ib_status time_point(ib__genm *m, const ib__gen_run_spec *spec, ib_gen_point *p, ib_error *err)
{
    int64_t runs = m->cfg->sequence_runs;
    size_t n = (size_t)runs * (size_t)spec->steps;
    double *all = malloc(n * sizeof *all), ttft;
    IB_FAIL_IF(!all, err, IB_ERR_NO_MEMORY, "out of host memory for samples");
    ib__progress_phase(&m->pr, IB_PHASE_SAMPLING, runs);
    ib_status st = IB_OK;
    for (int64_t k = 0; k < runs && st == IB_OK; k++) {
        st = ib__cancelled(m->cfg->run.cancel)
                 ? ib__fail(err, IB_ERR_INTERRUPTED, "interrupted")
                 : ib__gen_run(m->g, spec, &ttft, all + k * spec->steps, NULL, err);
        ib__progress_runs(&m->pr, k + 1, NAN);
    }
    if (st == IB_OK) {
        double total = ib__gen_run_total(NAN, all, (int32_t)n);
        ib_stats_compute(all, n, &p->step_ms);
        ib__stats_widen_to_resolution(&p->step_ms, m->g->clock.resolution_ms);
        p->steps = (int64_t)n;
        p->tokens_per_s = (double)spec->n_seqs * (double)n / total * 1e3;
        p->tpot_ms = p->step_ms.mean;
    }
    free(all);
    return st;
}

/* One count: its context, its cold first run apart, warm-up, then the
 * timed runs. Out of memory is this point's answer, not the measurement's. */
static ib_status measure_point(ib__genm *m, int32_t n_seqs, ib_gen_point *p, ib_error *err)
{
    *p = (ib_gen_point){ .sequences = n_seqs, .tokens_per_s = NAN, .tpot_ms = NAN, .first_step_ms = NAN };
    ib__energy_none(&p->energy, "the count did not run to the end: no energy figure");
    ib_error why = { { 0 } };
    ib_status st = m->g->ops->set_sequences(m->g, n_seqs, m->ctx, &why);
    ib__gen_run_spec spec = ib__gen_request_spec(m);
    spec.n_seqs = n_seqs;
    double ttft;
    if (st == IB_OK) st = ib__gen_run(m->g, &spec, &ttft, m->steps, m->samples, &why);
    if (st != IB_OK) {
        p->status = st;
        if (ib__search_capacity_limit(st, n_seqs)) return IB_OK;
        if (err) *err = why;
        return st;
    }
    p->first_step_ms = m->steps[0];
    const ib_config *c = &m->cfg->run;
    /* Each count is warmed up on its own, shorter than the request's. */
    ib__warmup_rule rule = { .min_runs = 1,
                             .min_ms = 0,
                             .max_ms = fmin(c->warmup_max_ms, 3000),
                             .until_steady = c->warmup_until_steady };
    int64_t done;
    double spent;
    bool steady;
    st = ib__gen_warm_up(m, &spec, &rule, &done, &spent, &steady, err);
    if (st == IB_OK) st = time_point(m, &spec, p, err);
    if (st == IB_OK) st = ib__gen_decode_energy(m, &spec, p->tpot_ms, &p->energy, NULL, err);
    p->status = st;
    return st;
}

/* Peak, knee, and the best within the budget, read off the curve. */
static void choose(ib_gen_result *r, double knee_fraction)
{
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_gen_point *p = &r->points[i];
        if (p->status != IB_OK) continue;
        if (r->peak < 0 || p->tokens_per_s > r->points[r->peak].tokens_per_s) r->peak = (int)i;
        if (p->energy.source != IB_ENERGY_NONE &&
            (r->most_efficient < 0 ||
             p->energy.items_per_joule > r->points[r->most_efficient].energy.items_per_joule))
            r->most_efficient = (int)i;
        bool within = r->tpot_budget_ms > 0 && p->tpot_ms <= r->tpot_budget_ms;
        if (within &&
            (r->best_within_budget < 0 || p->tokens_per_s > r->points[r->best_within_budget].tokens_per_s))
            r->best_within_budget = (int)i;
    }
    if (r->peak < 0) return;
    double bar = knee_fraction * r->points[r->peak].tokens_per_s;
    for (size_t i = 0; i < r->n_points && r->knee < 0; i++)
        if (r->points[i].status == IB_OK && r->points[i].tokens_per_s >= bar) r->knee = (int)i;
}

ib_status ib__gen_sequences(ib__genm *m, ib_error *err)
{
    ib_gen_result *r = m->r;
    r->search_ctx_per_seq = m->ctx;
    if (m->cfg->search) IB_TRY(search(m, err));
    int32_t counts[IB_GEN_MAX_POINTS];
    size_t n = candidates(m, counts);
    ib_status st = IB_OK;
    for (size_t i = 0; i < n && st == IB_OK; i++) {
        ib__progress_step(&m->pr, (int64_t)i + 1, (int64_t)n, "sequences", counts[i]);
        st = measure_point(m, counts[i], &r->points[r->n_points], err);
        r->n_points++;
    }
    choose(r, m->cfg->knee_fraction);
    if (st == IB_OK && r->tpot_budget_ms > 0 && r->best_within_budget < 0)
        st = ib__fail(err, IB_ERR_NOT_MET, "no sequence count has a TPOT within %g ms", r->tpot_budget_ms);
    return st;
}
