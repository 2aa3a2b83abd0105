/* The registry of backends (include/inferbench_backend.h): the tables built
 * in, the plugins loaded, and the in-tree workloads seen as tables. */
#ifndef IB_BACKEND_REGISTRY_H
#define IB_BACKEND_REGISTRY_H

#include "backend/workload.h"

struct cJSON;

/* The built-in tables, one line each in registry.c's list. */
extern const ib_backend ib__backend_onnxruntime;
extern const ib_backend ib__backend_spin;
extern const ib_backend ib__backend_fake;
extern const ib_backend ib__backend_aoti;

/* What a built-in backend offers beyond its table, each hook optional:
 * registry.c's list pairs a table with its hooks. */
typedef struct ib__backend_hooks {
    /* What it says of its runtime (version, library, build), whether or not
     * it measured, read through ib_backend_runtime. It sets every field it
     * owns ("" what cannot be read) and never fails. */
    void (*runtime_facts)(ib_runtime_info *rt);
    /* Opens a model with the whole of ib_model_options (shapes, inputs,
     * math, memory limits): ib_workload_open_model's path for it. opts is
     * never NULL. */
    ib_status (*open_model)(const char *model, const ib_model_options *opts, ib_workload **out,
                            ib_error *err);
    /* Result files of schema 1 and early schema 2 were written when one
     * runtime was all there was, in keys of that runtime: the backend that
     * wrote them reads them (src/report/latency_read.c asks, by role). */
    const struct ib__legacy_result_keys *legacy;
} ib__backend_hooks;

/* The hooks of the built-in backends that have some: one line each in
 * registry.c's list. */
extern const ib__backend_hooks ib__onnxruntime_hooks;

/* A built-in backend this build left out (CMake found no headers it needs):
 * its name and why, said to whoever asks it for a model (its folder's
 * *_absent.c, which keeps its hooks that need no such header). */
typedef struct ib__backend_absence {
    const char *name;
    const char *why;
} ib__backend_absence;
extern const ib__backend_absence ib__onnxruntime_absence;

/* The hooks of a built-in backend, or NULL (a plugin, or none). */
const ib__backend_hooks *ib__backend_hooks_of(const ib_backend *b);

/* The runtime-specific keys of an old result file, read by the backend that
 * wrote it. */
typedef struct ib__legacy_result_keys {
    /* environment.<version_key>: the runtime's version, before
     * environment.runtime existed */
    const char *version_key;
    /* Reads workload.runtime_options (schema 1: rt, never NULL; messages
     * name keys after where) into today's keys of the backend's options
     * and the math, through the reader's checked accessors
     * (report/result_keys.h). */
    ib_status (*read_runtime_options)(const struct cJSON *rt, const char *where, ib_option_list *options,
                                      ib_error *err);
} ib__legacy_result_keys;

/* The legacy keys of the built-in backend that wrote old files, or NULL. */
const ib__legacy_result_keys *ib__legacy_result_keys_get(void);

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
 * slot a forwarder (the workload's capabilities say which are called), its
 * option declarations and configure slot (NULL, 0, NULL: none). */
#define IB__IN_TREE_BACKEND(NAME, DESCRIPTION, OPEN, OPTIONS, N_OPTIONS, CONFIGURE)                          \
    {                                                                                                        \
        .struct_size = sizeof(ib_backend), .abi_version = IB_BACKEND_ABI_VERSION, .name = (NAME),            \
        .description = (DESCRIPTION), .open = (OPEN), .describe = ib__builtin_describe,                      \
        .set_batch = ib__builtin_set_batch, .run = ib__builtin_run,                                          \
        .set_run_sync = ib__builtin_set_run_sync, .run_with_copies = ib__builtin_run_with_copies,            \
        .reopen = ib__builtin_reopen, .fill_inputs = ib__builtin_fill_inputs, .close = ib__builtin_close,    \
        .options = (OPTIONS), .n_options = (N_OPTIONS), .configure = (CONFIGURE),                            \
    }

/* Physical memory of this machine; 0 when unknown (a backend's default
 * cap of host memory is half of it). */
size_t ib__host_memory_bytes(void);

/* "yes"/"no" (also true/false, 1/0) of a backend option KEY. */
ib_status ib__backend_option_bool(const ib_backend_option *o, bool *out, ib_error *err);
/* A whole number in [lo, hi] of a backend option. */
ib_status ib__backend_option_int(const ib_backend_option *o, long long lo, long long hi, long long *out,
                                 ib_error *err);

#endif
