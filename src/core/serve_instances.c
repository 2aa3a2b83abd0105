/* --instances max: the most copies of a model that fit in memory at once
 * (docs/serve.md). A copy fits when it has run at the largest batch serve
 * will use: a runtime allocates its weights when the session opens but its
 * activations only on the first run, so an open alone proves little. */
#include "workload/workload.h"

static ib_status run_once_at(ib_workload *w, int64_t batch, ib_error *err)
{
    IB_TRY(ib_workload_set_batch(w, batch, err));
    IB_TRY(w->ops->run(w, err));
    return ib__workload_synchronize(w, err);
}

static bool out_of_memory(ib_status st) { return st == IB_ERR_DEVICE_OOM || st == IB_ERR_NO_MEMORY; }

/* Opens (unless already open) and runs copy i; on failure it is closed and
 * ws[i] is NULL. */
static ib_status fit_copy(ib_serve_open_fn open_copy, void *ctx, int64_t batch, ib_workload **w,
                          ib_error *err)
{
    if (!*w) IB_TRY(open_copy(ctx, w, err));
    ib_status st = run_once_at(*w, batch, err);
    if (st != IB_OK) {
        ib_workload_destroy(*w);
        *w = NULL;
    }
    return st;
}

ib_status ib_serve_open_instances(ib_serve_open_fn open_copy, void *ctx, int64_t batch, size_t max,
                                  ib_workload **ws, size_t *n, bool *ran_out, ib_error *err)
{
    IB_FAIL_IF(!open_copy || !ws || !n || !ran_out || batch < 1 || max < 1 || *n > max, err,
               IB_ERR_INVALID_ARG, "open_instances: bad arguments");
    *ran_out = false;
    size_t open = *n;
    *n = 0;
    for (size_t i = 0; i < max; i++) {
        if (i >= open) ws[i] = NULL;
        ib_error e = { { 0 } };
        ib_status st = fit_copy(open_copy, ctx, batch, &ws[i], &e);
        if (st == IB_OK) {
            *n = i + 1;
            continue;
        }
        /* The copies already open past this one (given on entry) go too. */
        for (size_t j = i + 1; j < open; j++) {
            ib_workload_destroy(ws[j]);
            ws[j] = NULL;
        }
        if (out_of_memory(st) && i > 0) {
            *ran_out = true;
            return IB_OK;
        }
        if (err) *err = e;
        return st;
    }
    return IB_OK;
}
