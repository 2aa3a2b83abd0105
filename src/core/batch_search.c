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

/* Tries one batch. *fits answers the question; the status is an error only
 * when the probe failed for another reason than capacity (or recovery
 * failed), and then nothing is recorded. *limit keeps the backend's words
 * at the last batch that did not fit. */
static ib_status probe(ib_workload *w, int64_t batch, ib__progress *pr, ib_throughput_result *r, bool *fits,
                       ib_error *limit, ib_error *err)
{
    IB_FAIL_IF(r->n_probes == IB_MAX_PROBES, err, IB_ERR_INTERNAL, "batch search: more than %d probes",
               IB_MAX_PROBES);
    ib__progress_step(pr, (int64_t)r->n_probes + 1, 0, NULL, batch);
    ib__progress_phase(pr, IB_PHASE_BATCH_PROBE, 0);
    double t0 = ib__workload_now_ms(w);
    ib_error why = { { 0 } };
    ib_status st = ib_workload_set_batch(w, batch, &why);
    if (st == IB_OK) st = w->ops->run(w, &why);
    if (st != IB_OK && !is_capacity_limit(st, batch)) {
        if (err) *err = why;
        return st;
    }
    *fits = st == IB_OK;
    if (!*fits) {
        *limit = why;
        IB_TRY(ib__recover_from_oom(w, err));
    }
    r->probes[r->n_probes++] =
        (ib_batch_probe){ .batch = batch, .fits = *fits, .status = st, .ms = ib__workload_now_ms(w) - t0 };
    return IB_OK;
}

/* Doubles from 1 while batches fit. On return *fit is the largest batch
 * seen to fit (0: none) and *no_fit the first that did not (0: none, the
 * growth reached max_batch). */
static ib_status grow(ib_workload *w, int64_t max_batch, const volatile int *cancel, ib__progress *pr,
                      ib_throughput_result *r, int64_t *fit, int64_t *no_fit, ib_error *oom, ib_error *err)
{
    *fit = *no_fit = 0;
    for (int64_t b = 1;; b = b > max_batch / 2 ? max_batch : 2 * b) {
        IB_FAIL_IF(ib__cancelled(cancel), err, IB_ERR_INTERRUPTED, "interrupted during the batch search");
        bool fits;
        IB_TRY(probe(w, b, pr, r, &fits, oom, err));
        if (!fits) {
            *no_fit = b;
            return IB_OK;
        }
        *fit = b;
        if (b == max_batch) return IB_OK;
    }
}

/* Bisects (fit, no_fit) down to adjacent batches. */
static ib_status bisect(ib_workload *w, const volatile int *cancel, ib__progress *pr, ib_throughput_result *r,
                        int64_t *fit, int64_t no_fit, ib_error *oom, ib_error *err)
{
    while (no_fit - *fit > 1) {
        IB_FAIL_IF(ib__cancelled(cancel), err, IB_ERR_INTERRUPTED, "interrupted during the batch search");
        int64_t mid = *fit + (no_fit - *fit) / 2;
        bool fits;
        IB_TRY(probe(w, mid, pr, r, &fits, oom, err));
        if (fits)
            *fit = mid;
        else
            no_fit = mid;
    }
    return IB_OK;
}

/* max_batch first; below it, when it does not fit, bisection from 0 (no
 * batch known to fit): it ends at batch 1 at the lowest. */
static ib_status from_the_top(ib_workload *w, int64_t max_batch, const volatile int *cancel, ib__progress *pr,
                              ib_throughput_result *r, int64_t *fit, int64_t *no_fit, ib_error *oom,
                              ib_error *err)
{
    IB_FAIL_IF(ib__cancelled(cancel), err, IB_ERR_INTERRUPTED, "interrupted during the batch search");
    bool fits;
    IB_TRY(probe(w, max_batch, pr, r, &fits, oom, err));
    *fit = fits ? max_batch : 0;
    *no_fit = fits ? 0 : max_batch;
    return IB_OK;
}

ib_status ib__batch_search(ib_workload *w, int64_t max_batch, bool from_top, const volatile int *cancel,
                           ib__progress *pr, ib_throughput_result *r, ib_error *err)
{
    double t0 = ib__workload_now_ms(w);
    int64_t fit = 0, no_fit = 0;
    ib_error oom = { { 0 } };
    ib_status st = from_top ? from_the_top(w, max_batch, cancel, pr, r, &fit, &no_fit, &oom, err)
                            : grow(w, max_batch, cancel, pr, r, &fit, &no_fit, &oom, err);
    /* Growth stops with batch 1 not fitting (no_fit 1: nothing to bisect);
     * from the top, batch 1 is where a bisection from 0 ends at the lowest. */
    if (st == IB_OK && no_fit != 0) st = bisect(w, cancel, pr, r, &fit, no_fit, &oom, err);
    if (st == IB_OK && fit == 0)
        st = ib__fail(err, IB_ERR_DEVICE_OOM,
                      "batch 1 does not fit in the device's memory, so no batch can run (%s)", oom.message);
    r->largest_fitting = fit;
    ib__strlcpy(r->limit_reason, oom.message, sizeof r->limit_reason);
    r->limited_by_max_batch = st == IB_OK && no_fit == 0;
    r->search_ms = ib__workload_now_ms(w) - t0;
    return st;
}
