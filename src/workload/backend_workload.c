/* A workload of any backend table (include/inferbench_backend.h): the
 * core's handle around the backend's state. The slots forward one to one;
 * what the core needs besides (info, stream, capabilities) is taken from
 * the handle open gave and from describe, and checked once, here. */
#include "workload/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct table_workload {
    const ib_backend *b;
    void *state;
    ib__workload_ops ops; /* the forwarders of the slots the table has */
} table_workload;

static table_workload *impl(ib_workload *w) { return w->impl; }

/* What the core reports is what the capabilities say, whatever describe
 * wrote: the batch dimension and whether the runs are on a GPU. */
static void describe(ib_workload *w)
{
    table_workload *t = impl(w);
    memset(&w->info, 0, sizeof w->info);
    t->b->describe(t->state, &w->info);
    w->info.has_batch_dim = ib__workload_can(w, IB_CAP_BATCH_DIM);
    w->info.device = ib__workload_can(w, IB_CAP_GPU) ? IB_DEVICE_CUDA : IB_DEVICE_CPU;
    if (w->info.batch < 1) w->info.batch = 1;
}

static ib_status tw_set_batch(ib_workload *w, int64_t batch, ib_error *err)
{
    IB_TRY(impl(w)->b->set_batch(impl(w)->state, batch, err));
    describe(w);
    return IB_OK;
}

static ib_status tw_run(ib_workload *w, ib_error *err) { return impl(w)->b->run(impl(w)->state, err); }

static ib_status tw_set_run_sync(ib_workload *w, bool sync, ib_error *err)
{
    return impl(w)->b->set_run_sync(impl(w)->state, sync, err);
}

static ib_status tw_run_with_copies(ib_workload *w, ib_error *err)
{
    return impl(w)->b->run_with_copies(impl(w)->state, err);
}

static ib_status tw_reopen(ib_workload *w, ib_error *err)
{
    IB_TRY(impl(w)->b->reopen(impl(w)->state, err));
    describe(w);
    return IB_OK;
}

static ib_status tw_fill_inputs(ib_workload *w, bool zeros, ib_error *err)
{
    return impl(w)->b->fill_inputs(impl(w)->state, zeros, err);
}

static void tw_destroy(ib_workload *w)
{
    table_workload *t = impl(w);
    t->b->close(t->state);
    free(t);
    free(w);
}

static const ib__workload_ops table_ops = {
    .version = IB__WORKLOAD_OPS_VERSION,
    .set_batch = tw_set_batch,
    .run = tw_run,
    .set_run_sync = tw_set_run_sync,
    .run_with_copies = tw_run_with_copies,
    .reopen = tw_reopen,
    .fill_inputs = tw_fill_inputs,
    .destroy = tw_destroy,
};

void ib_backend_open_args_init(ib_backend_open_args *args)
{
    *args = (ib_backend_open_args){
        .struct_size = sizeof *args,
        .device = IB_DEVICE_AUTO,
        .batch = 1,
        .seed = 42,
    };
}

const ib_backend_option_decl *ib_backend_option_find(const ib_backend *b, const char *key)
{
    for (size_t i = 0; b && key && i < b->n_options; i++)
        if (!strcmp(b->options[i].key, key)) return &b->options[i];
    return NULL;
}

/* A table's option declarations: each with a key and a help line, no key
 * twice, a process option only with a configure slot to take it. */
static ib_status check_declarations(const ib_backend *b, ib_error *err)
{
    IB_FAIL_IF(b->n_options > 0 && !b->options, err, IB_ERR_INVALID_ARG,
               "backend '%s' declares %zu options but gives none", b->name, b->n_options);
    for (size_t i = 0; i < b->n_options; i++) {
        const ib_backend_option_decl *d = &b->options[i];
        IB_FAIL_IF(!d->key || !*d->key || !d->help, err, IB_ERR_INVALID_ARG,
                   "backend '%s': option %zu without a key or a help line", b->name, i);
        IB_FAIL_IF(ib_backend_option_find(b, d->key) != d, err, IB_ERR_INVALID_ARG,
                   "backend '%s' declares option '%s' twice", b->name, d->key);
        IB_FAIL_IF((d->flags & IB_OPTION_PROCESS) && !b->configure, err, IB_ERR_INVALID_ARG,
                   "backend '%s': option '%s' of the whole process, but no configure slot", b->name, d->key);
    }
    return IB_OK;
}

ib_status ib__backend_check(const ib_backend *b, ib_error *err)
{
    IB_FAIL_IF(!b, err, IB_ERR_INVALID_ARG, "no backend table");
    IB_FAIL_IF(b->abi_version != IB_BACKEND_ABI_VERSION, err, IB_ERR_INVALID_ARG,
               "backend ABI version %u, but this inferbench speaks version %u: rebuild it against "
               "this inferbench's inferbench_backend.h",
               b->abi_version, IB_BACKEND_ABI_VERSION);
    IB_FAIL_IF(b->struct_size < sizeof *b, err, IB_ERR_INVALID_ARG,
               "backend table of %zu bytes, version %u needs %zu", b->struct_size, IB_BACKEND_ABI_VERSION,
               sizeof *b);
    IB_FAIL_IF(!b->name || !*b->name, err, IB_ERR_INVALID_ARG, "backend table without a name");
    IB_FAIL_IF(!b->open || !b->describe || !b->set_batch || !b->run || !b->close, err, IB_ERR_INVALID_ARG,
               "backend '%s' lacks a required slot (open, describe, set_batch, run, close)", b->name);
    return check_declarations(b, err);
}

/* The core's handle around an opened state; NULL when out of memory. */
static ib_workload *wrap(const ib_backend *b, const ib_backend_handle *h)
{
    ib_workload *w = calloc(1, sizeof *w);
    table_workload *t = calloc(1, sizeof *t);
    if (!w || !t) {
        free(w);
        free(t);
        return NULL;
    }
    *t = (table_workload){ .b = b, .state = h->state, .ops = table_ops };
    if (!b->set_run_sync) t->ops.set_run_sync = NULL;
    if (!b->run_with_copies) t->ops.run_with_copies = NULL;
    if (!b->reopen) t->ops.reopen = NULL;
    if (!b->fill_inputs) t->ops.fill_inputs = NULL;
    *w = (ib_workload){
        .ops = &t->ops,
        .impl = t,
        .device_id = h->device_id,
        .stream = h->stream,
        .clock = ib__host_clock(),
        .caps = h->caps,
        .backend = b,
    };
    return w;
}

ib_status ib_workload_open_backend(const ib_backend *b, const ib_backend_open_args *args, ib_workload **out,
                                   ib_error *err)
{
    IB_FAIL_IF(!out, err, IB_ERR_INVALID_ARG, "no place for the workload");
    *out = NULL;
    IB_FAIL_IF(!b || !args, err, IB_ERR_INVALID_ARG, "no backend or no arguments to open it with");
    IB_FAIL_IF(args->struct_size < sizeof *args, err, IB_ERR_INVALID_ARG,
               "ib_backend_open_args of %zu bytes: initialize it with ib_backend_open_args_init",
               args->struct_size);
    IB_FAIL_IF(args->batch < 1, err, IB_ERR_INVALID_ARG, "batch %lld: a batch is at least 1",
               (long long)args->batch);
    IB_TRY(ib__backend_check(b, err));
    ib_backend_handle h = { 0 };
    IB_TRY(b->open(args, &h, err));
    /* An in-tree backend's state is the core's handle already, with what
     * the ABI does not carry (the fake's virtual clock, a model's output
     * reads): use it as it is rather than through forwarders. */
    if (ib__backend_is_in_tree(b)) {
        *out = h.state;
        (*out)->backend = b;
        return IB_OK;
    }
    ib_workload *w = wrap(b, &h);
    if (!w) {
        b->close(h.state);
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory");
    }
    char who[96];
    snprintf(who, sizeof who, "backend '%s'", b->name);
    ib_status st = ib__workload_check_caps(w, who, err);
    if (st != IB_OK) {
        tw_destroy(w);
        return st;
    }
    describe(w);
    *out = w;
    return IB_OK;
}
