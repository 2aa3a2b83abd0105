/* The registry of backends (include/inferbench_backend.h): the tables built
 * in, the plugins loaded, and the in-tree workloads seen as tables. */
#ifndef IB_BACKEND_REGISTRY_H
#define IB_BACKEND_REGISTRY_H

#include "backend/workload.h"

/* The built-in tables, one line each in registry.c's list. */
extern const ib_backend ib__backend_onnxruntime;
extern const ib_backend ib__backend_spin;
extern const ib_backend ib__backend_fake;
extern const ib_backend ib__backend_aoti;

/* What a built-in backend says of its runtime (version, library, build),
 * whether or not it measured: the runtime hook of registry.c's list, read
 * through ib_backend_runtime. It sets every field it owns ("" what cannot
 * be read) and never fails. */
typedef void (*ib__backend_runtime_fn)(ib_runtime_info *rt);
void ib__ort_runtime_facts(ib_runtime_info *rt);

/* Whether b is a built-in table whose state is an in-tree workload (its
 * slots are the ib__builtin_ forwarders below). */
bool ib__backend_is_in_tree(const ib_backend *b);

/* Checks a table before its first use: ABI version, size, name, required
 * slots. IB_ERR_INVALID_ARG with a message naming what is wrong. */
ib_status ib__backend_check(const ib_backend *b, ib_error *err);

/* In-tree backends as tables: an in-tree workload (which fills the core's
 * handle itself) handed over as the state of a table whose slots forward to
 * its operations. Its stream and capabilities go into out. */
void ib__builtin_hand_over(ib_workload *inner, ib_backend_handle *out);
void ib__builtin_describe(void *state, ib_workload_info *info);
ib_status ib__builtin_set_batch(void *state, int64_t batch, ib_error *err);
ib_status ib__builtin_run(void *state, ib_error *err);
ib_status ib__builtin_set_run_sync(void *state, bool sync, ib_error *err);
ib_status ib__builtin_run_with_copies(void *state, ib_error *err);
ib_status ib__builtin_reopen(void *state, ib_error *err);
ib_status ib__builtin_fill_inputs(void *state, bool zeros, ib_error *err);
void ib__builtin_close(void *state);

/* The table of an in-tree backend whose open hands its workload over: every
 * slot a forwarder (the workload's capabilities say which are called). */
#define IB__IN_TREE_BACKEND(NAME, DESCRIPTION, OPEN)                                                         \
    {                                                                                                        \
        .struct_size = sizeof(ib_backend), .abi_version = IB_BACKEND_ABI_VERSION, .name = (NAME),            \
        .description = (DESCRIPTION), .open = (OPEN), .describe = ib__builtin_describe,                      \
        .set_batch = ib__builtin_set_batch, .run = ib__builtin_run,                                          \
        .set_run_sync = ib__builtin_set_run_sync, .run_with_copies = ib__builtin_run_with_copies,            \
        .reopen = ib__builtin_reopen, .fill_inputs = ib__builtin_fill_inputs, .close = ib__builtin_close,    \
    }

/* "yes"/"no" (also true/false, 1/0) of a backend option KEY. */
ib_status ib__backend_option_bool(const ib_backend_option *o, bool *out, ib_error *err);
/* A whole number in [lo, hi] of a backend option. */
ib_status ib__backend_option_int(const ib_backend_option *o, long long lo, long long hi, long long *out,
                                 ib_error *err);

#endif
