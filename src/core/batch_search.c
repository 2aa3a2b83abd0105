/* The search for the largest batch that fits: geometric growth, then
 * bisection; or, from the top, the bound first, then bisection below it. A
 * probe is what the runtime really needs at that batch, not an
 * estimate: set_batch allocates the inputs and outputs, and one untimed run
 * makes the runtime allocate its intermediate buffers (runtimes with an
 * arena do so during the run, not at binding time). */
#include "core/throughput.h"

ib_status ib__recover_from_oom(ib_workload *w, ib_error *err)
{
    return ib__workload_can(w, IB_CAP_REOPEN) ? w->ops->reopen(w, err) : IB_OK;
}

/* Out of memory is the expected answer of a probe. So, above a batch that
 * ran, is the runtime refusing the size (IB_ERR_UNSUPPORTED): GPU kernel
 * libraries, for one, reject tensors of 2^31 elements and more whatever
 * the memory. Batch 1 failing that way is a real failure, and so is
 * any other failure at any batch: a model whose shapes break at batch 2 (a
 * state input that does not follow the batch) must not read as "the largest
 * batch that fits is 1". */
static bool is_capacity_limit(ib_status st, int64_t batch)
{
    return st == IB_ERR_DEVICE_OOM || (batch > 1 && st == IB_ERR_UNSUPPORTED);
}

/* One search's state: what every step needs. */
typedef struct search {
    ib_workload *w;
    const volatile int *cancel;
    ib__progress *pr;
    ib_throughput_result *r;
    ib__probe_fits_fn on_fit; /* NULL: none */
    void *user;
    double on_fit_ms; /* spent in on_fit: the points', not the search's */
    ib_error limit;   /* the backend's words at the last batch that did not fit */
} search;

/* Tries one batch. *fits answers the question, *run_ms the run's time when
 * it fits; the status is an error only when the probe failed for another
 * reason than capacity (or recovery failed), and then nothing is
 * recorded. */
static ib_status probe(search *s, int64_t batch, bool *fits, double *run_ms, ib_error *err)
{
    ib_throughput_result *r = s->r;
    IB_FAIL_IF(r->n_probes == IB_MAX_PROBES, err, IB_ERR_INTERNAL, "batch search: more than %d probes",
               IB_MAX_PROBES);
    ib__progress_step(s->pr, (int64_t)r->n_probes + 1, 0, NULL, batch);
    ib__progress_phase(s->pr, IB_PHASE_BATCH_PROBE, 0);
    double t0 = ib__workload_now_ms(s->w), t_run = t0;
    ib_error why = { { 0 } };
    ib_status st = ib_workload_set_batch(s->w, batch, &why);
    if (st == IB_OK) {
        t_run = ib__workload_now_ms(s->w);
        st = s->w->ops->run(s->w, &why);
    }
    if (st != IB_OK && !is_capacity_limit(st, batch)) {
        if (err) *err = why;
        return st;
    }
    *fits = st == IB_OK;
    *run_ms = ib__workload_now_ms(s->w) - t_run;
    if (!*fits) {
        s->limit = why;
        IB_TRY(ib__recover_from_oom(s->w, err));
    }
    r->probes[r->n_probes++] =
        (ib_batch_probe){ .batch = batch, .fits = *fits, .status = st, .ms = ib__workload_now_ms(s->w) - t0 };
    return IB_OK;
}

/* A growth probe that fit: handed to on_fit, its time kept apart. */
static ib_status fitted(search *s, int64_t batch, double run_ms, ib_error *err)
{
    if (!s->on_fit) return IB_OK;
    double t0 = ib__workload_now_ms(s->w);
    ib_status st = s->on_fit(s->user, batch, run_ms, err);
    s->on_fit_ms += ib__workload_now_ms(s->w) - t0;
    return st;
}

/* Doubles from 1 while batches fit. On return *fit is the largest batch
 * seen to fit (0: none) and *no_fit the first that did not (0: none, the
 * growth reached max_batch). */
static ib_status grow(search *s, int64_t max_batch, int64_t *fit, int64_t *no_fit, ib_error *err)
{
    *fit = *no_fit = 0;
    for (int64_t b = 1;; b = b > max_batch / 2 ? max_batch : 2 * b) {
        IB_FAIL_IF(ib__cancelled(s->cancel), err, IB_ERR_INTERRUPTED, "interrupted during the batch search");
        bool fits;
        double run_ms;
        IB_TRY(probe(s, b, &fits, &run_ms, err));
        if (!fits) {
            *no_fit = b;
            return IB_OK;
        }
        *fit = b;
        IB_TRY(fitted(s, b, run_ms, err));
        if (b == max_batch) return IB_OK;
    }
}

/* Bisects (fit, no_fit) down to adjacent batches. */
static ib_status bisect(search *s, int64_t *fit, int64_t no_fit, ib_error *err)
{
    while (no_fit - *fit > 1) {
        IB_FAIL_IF(ib__cancelled(s->cancel), err, IB_ERR_INTERRUPTED, "interrupted during the batch search");
        int64_t mid = *fit + (no_fit - *fit) / 2;
        bool fits;
        double run_ms;
        IB_TRY(probe(s, mid, &fits, &run_ms, err));
        if (fits)
            *fit = mid;
        else
            no_fit = mid;
    }
    return IB_OK;
}

/* max_batch first; below it, when it does not fit, bisection from 0 (no
 * batch known to fit): it ends at batch 1 at the lowest. */
static ib_status from_the_top(search *s, int64_t max_batch, int64_t *fit, int64_t *no_fit, ib_error *err)
{
    IB_FAIL_IF(ib__cancelled(s->cancel), err, IB_ERR_INTERRUPTED, "interrupted during the batch search");
    bool fits;
    double run_ms;
    IB_TRY(probe(s, max_batch, &fits, &run_ms, err));
    *fit = fits ? max_batch : 0;
    *no_fit = fits ? 0 : max_batch;
    return IB_OK;
}

ib_status ib__batch_search(ib_workload *w, int64_t max_batch, bool from_top, const volatile int *cancel,
                           ib__progress *pr, ib__probe_fits_fn on_fit, void *user, ib_throughput_result *r,
                           ib_error *err)
{
    double t0 = ib__workload_now_ms(w);
    search s = { .w = w, .cancel = cancel, .pr = pr, .r = r, .on_fit = on_fit, .user = user };
    int64_t fit = 0, no_fit = 0;
    ib_status st =
        from_top ? from_the_top(&s, max_batch, &fit, &no_fit, err) : grow(&s, max_batch, &fit, &no_fit, err);
    /* Growth stops with batch 1 not fitting (no_fit 1: nothing to bisect);
     * from the top, batch 1 is where a bisection from 0 ends at the lowest. */
    if (st == IB_OK && no_fit != 0) st = bisect(&s, &fit, no_fit, err);
    if (st == IB_OK && fit == 0)
        st = ib__fail(err, IB_ERR_DEVICE_OOM,
                      "batch 1 does not fit in the device's memory, so no batch can run (%s)",
                      s.limit.message);
    r->largest_fitting = fit;
    ib__strlcpy(r->limit_reason, s.limit.message, sizeof r->limit_reason);
    r->limited_by_max_batch = st == IB_OK && no_fit == 0;
    r->search_stopped = st != IB_OK;
    r->search_ms = ib__workload_now_ms(w) - t0 - s.on_fit_ms;
    return st;
}
