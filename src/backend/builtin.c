/* In-tree workloads seen through the backend ABI: the table's state is the
 * in-tree workload itself, every slot forwards to its operations. This is
 * what makes a built-in backend's ib_backend_find(NAME) a table like a plugin's. */
#include "backend/registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

ib_status ib__backend_option_bool(const ib_backend_option *o, bool *out, ib_error *err)
{
    static const char *const yes[] = { "yes", "true", "1" }, *const no[] = { "no", "false", "0" };
    for (size_t i = 0; i < 3; i++) {
        if (!strcmp(o->value, yes[i])) return *out = true, IB_OK;
        if (!strcmp(o->value, no[i])) return *out = false, IB_OK;
    }
    return ib__fail(err, IB_ERR_INVALID_ARG, "option %s=%s: expected yes or no", o->key, o->value);
}

ib_status ib__backend_option_int(const ib_backend_option *o, long long lo, long long hi, long long *out,
                                 ib_error *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(o->value, &end, 10);
    IB_FAIL_IF(!*o->value || *end || errno == ERANGE || v < lo || v > hi, err, IB_ERR_INVALID_ARG,
               "option %s=%s: expected a whole number from %lld to %lld", o->key, o->value, lo, hi);
    *out = v;
    return IB_OK;
}

size_t ib__host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 0;
    return (size_t)pages * (size_t)page;
}
