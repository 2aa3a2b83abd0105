/* In-tree workloads seen through the backend ABI: the table's state is the
 * in-tree workload itself, every slot forwards to its operations. This is
 * what makes a built-in backend's ib_backend_find(NAME) a table like a plugin's.
 * The other half of the ABI's adapter (backend_workload.c: a table seen as
 * the core's handle), in the contract's folder with it. */
#include "workload/workload.h"

void ib__builtin_hand_over(ib_workload *inner, ib_backend_handle *out)
{
    *out = (ib_backend_handle){
        .state = inner,
        .caps = inner->caps,
        .stream = inner->stream,
        .device_id = inner->device_id,
    };
}

bool ib__backend_is_in_tree(const ib_backend *b) { return b->close == ib__builtin_close; }

void ib__builtin_describe(void *state, ib_workload_info *info) { *info = ((ib_workload *)state)->info; }

ib_status ib__builtin_set_batch(void *state, int64_t batch, ib_error *err)
{
    return ib_workload_set_batch(state, batch, err);
}

ib_status ib__builtin_run(void *state, ib_error *err)
{
    ib_workload *w = state;
    return w->ops->run(w, err);
}

ib_status ib__builtin_set_run_sync(void *state, bool sync, ib_error *err)
{
    ib_workload *w = state;
    return w->ops->set_run_sync(w, sync, err);
}

ib_status ib__builtin_run_with_copies(void *state, ib_error *err)
{
    ib_workload *w = state;
    return w->ops->run_with_copies(w, err);
}

ib_status ib__builtin_reopen(void *state, ib_error *err)
{
    ib_workload *w = state;
    return w->ops->reopen(w, err);
}

ib_status ib__builtin_fill_inputs(void *state, bool zeros, ib_error *err)
{
    ib_workload *w = state;
    return w->ops->fill_inputs(w, zeros, err);
}

void ib__builtin_close(void *state) { ib_workload_destroy(state); }
