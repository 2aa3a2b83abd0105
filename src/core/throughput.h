/* Internals of the throughput measurement: the search for the largest batch
 * that fits, kept apart from the sweep that times the candidates. */
#ifndef IB_CORE_THROUGHPUT_H
#define IB_CORE_THROUGHPUT_H

#include "workload/workload.h"
#include "core/progress.h"
#include "core/search.h"

/* Upper bound of any batch asked for: it keeps batch arithmetic far from
 * overflow and the probe count small (at most ~2*20+2 probes). */
#define IB__MAX_BATCH ((int64_t)1 << 20)

/* Called when a growth probe fits, the workload still bound at batch and
 * past its first run there (run_ms: that run's time): the growth's batches
 * are the curve's powers of two, timed there and then so that no batch is
 * set up twice. An error stops the search and is returned;
 * IB__SEARCH_ENOUGH (search.h) ends the growth at batch, the answer. */
typedef ib_status (*ib__probe_fits_fn)(void *user, int64_t batch, double run_ms, ib_error *err);

/* Finds the largest batch in [1, max_batch] (validated by the caller) for
 * which set_batch and one untimed run succeed: doubling from 1 (max_batch
 * itself when doubling would pass it) until a probe runs out of device
 * memory, then bisection between the last batch that fit and the first that
 * did not. from_top probes max_batch first instead, and bisects below it
 * when it does not fit: one probe when it fits (every new batch a probe
 * visits costs the runtime a new shape's set-up). on_fit (may be NULL) is
 * called after each growth probe that fits. Fills r->probes, n_probes,
 * largest_fitting (what fit so far, on failure too), limited_by_max_batch
 * and search_ms (the probes' time, not on_fit's). Batch 1 not fitting
 * gives IB_ERR_DEVICE_OOM; any error other than out of memory stops the
 * search and is returned. */
ib_status ib__batch_search(ib_workload *w, int64_t max_batch, bool from_top, const volatile int *cancel,
                           ib__progress *pr, ib__probe_fits_fn on_fit, void *user, ib_throughput_result *r,
                           ib_error *err);

/* What follows a device out-of-memory: the runtime keeps its arena after a
 * failed allocation, so a fresh session (ops->reopen, when the backend has
 * one) gives the memory back before the next batch is tried. */
ib_status ib__recover_from_oom(ib_workload *w, ib_error *err);

#endif
