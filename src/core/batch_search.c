/* The search for the largest batch that fits: geometric growth, then
 * bisection; or, from the top, the bound first, then bisection below it. A
 * probe is what the runtime really needs at that batch, not an
 * estimate: set_batch allocates the inputs and outputs, and one untimed run
 * makes the runtime allocate its intermediate buffers (runtimes with an
 * arena do so during the run, not at binding time). */
#include "core/search.h"
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
bool ib__search_capacity_limit(ib_status st, int64_t n)
{
    return st == IB_ERR_DEVICE_OOM || (n > 1 && st == IB_ERR_UNSUPPORTED);
}

/* One search's state: what every step needs. */
typedef struct search {
    ib_workload *w;
    ib__progress *pr;
    ib_throughput_result *r;
    ib__probe_fits_fn on_fit; /* NULL: none */
    void *user;
    double on_fit_ms; /* spent in on_fit: the points', not the search's */
    bool enough;      /* on_fit ended the growth (IB__SEARCH_ENOUGH) */
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
    if (st != IB_OK && !ib__search_capacity_limit(st, batch)) {
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
    s->enough = st == IB__SEARCH_ENOUGH;
    return st;
}

/* The batch search's question to the shared search: does batch fit, and,
 * for a growth probe that fits, its point timed there and then. */
static ib_status batch_fits(void *user, int64_t batch, bool growing, bool *fits, ib_error *err)
{
    search *s = user;
    double run_ms;
    IB_TRY(probe(s, batch, fits, &run_ms, err));
    return growing && *fits ? fitted(s, batch, run_ms, err) : IB_OK;
}

/* ------------------------------------------------------------------------ */
/* The largest count that fits, whatever is counted (a batch here, the      */
/* sequences decoded together in generate_sequences.c): search.h.           */
/* ------------------------------------------------------------------------ */

typedef struct largest {
    ib__fits_fn fits;
    void *user;
    const volatile int *cancel;
    const char *what;
} largest;

static ib_status ask(const largest *l, int64_t n, bool growing, bool *fits, ib_error *err)
{
    IB_FAIL_IF(ib__cancelled(l->cancel), err, IB_ERR_INTERRUPTED, "interrupted during the %s search",
               l->what);
    return l->fits(l->user, n, growing, fits, err);
}

/* Doubles from 1 while counts fit. On return *fit is the largest count
 * seen to fit (0: none) and *no_fit the first that did not (0: none, the
 * growth reached max). */
static ib_status grow(const largest *l, int64_t max, int64_t *fit, int64_t *no_fit, ib_error *err)
{
    *fit = *no_fit = 0;
    for (int64_t n = 1;; n = n > max / 2 ? max : 2 * n) {
        bool fits;
        ib_status st = ask(l, n, true, &fits, err);
        if (st == IB__SEARCH_ENOUGH) {
            *fit = n;
            return IB_OK;
        }
        IB_TRY(st);
        if (!fits) {
            *no_fit = n;
            return IB_OK;
        }
        *fit = n;
        if (n == max) return IB_OK;
    }
}

/* Bisects (fit, no_fit) down to adjacent counts. */
static ib_status bisect(const largest *l, int64_t *fit, int64_t no_fit, ib_error *err)
{
    while (no_fit - *fit > 1) {
        int64_t mid = *fit + (no_fit - *fit) / 2;
        bool fits;
        IB_TRY(ask(l, mid, false, &fits, err));
        if (fits)
            *fit = mid;
        else
            no_fit = mid;
    }
    return IB_OK;
}

/* max first; below it, when it does not fit, bisection from 0 (no count
 * known to fit): it ends at 1 at the lowest. */
static ib_status from_the_top(const largest *l, int64_t max, int64_t *fit, int64_t *no_fit, ib_error *err)
{
    bool fits;
    IB_TRY(ask(l, max, false, &fits, err));
    *fit = fits ? max : 0;
    *no_fit = fits ? 0 : max;
    return IB_OK;
}

ib_status ib__search_largest(ib__fits_fn fits, void *user, int64_t max, bool from_top,
                             const volatile int *cancel, const char *what, int64_t *fit, int64_t *no_fit,
                             ib_error *err)
{
    largest l = { .fits = fits, .user = user, .cancel = cancel, .what = what };
    *fit = *no_fit = 0;
    ib_status st = from_top ? from_the_top(&l, max, fit, no_fit, err) : grow(&l, max, fit, no_fit, err);
    /* Growth stops with 1 not fitting (no_fit 1: nothing to bisect); from
     * the top, 1 is where a bisection from 0 ends at the lowest. */
    if (st == IB_OK && *no_fit != 0) st = bisect(&l, fit, *no_fit, err);
    return st;
}

ib_status ib__batch_search(ib_workload *w, int64_t max_batch, bool from_top, const volatile int *cancel,
                           ib__progress *pr, ib__probe_fits_fn on_fit, void *user, ib_throughput_result *r,
                           ib_error *err)
{
    double t0 = ib__workload_now_ms(w);
    search s = { .w = w, .pr = pr, .r = r, .on_fit = on_fit, .user = user };
    int64_t fit = 0, no_fit = 0;
    ib_status st =
        ib__search_largest(batch_fits, &s, max_batch, from_top, cancel, "batch", &fit, &no_fit, err);
    if (st == IB_OK && fit == 0)
        st = ib__fail(err, IB_ERR_DEVICE_OOM,
                      "batch 1 does not fit in the device's memory, so no batch can run (%s)",
                      s.limit.message);
    r->largest_fitting = fit;
    ib__strlcpy(r->limit_reason, s.limit.message, sizeof r->limit_reason);
    r->limited_by_max_batch = st == IB_OK && no_fit == 0 && !s.enough;
    r->search_stopped = st != IB_OK;
    r->search_ms = ib__workload_now_ms(w) - t0 - s.on_fit_ms;
    return st;
}
