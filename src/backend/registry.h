/* The registry of backends (include/inferbench_backend.h): the tables built
 * in, their hooks, the plugins loaded, the option-value helpers of the
 * backends (option_values.c). */
#ifndef IB_BACKEND_REGISTRY_H
#define IB_BACKEND_REGISTRY_H

#include "json/read.h" /* ib__legacy_result_keys */
#include "workload/generation.h"
#include "workload/workload.h" /* the in-tree table (IB__IN_TREE_BACKEND) and its forwarders */

/* The built-in tables, one line each in registry.c's list. */
extern const ib_backend ib__backend_onnxruntime;
extern const ib_backend ib__backend_spin;
extern const ib_backend ib__backend_fake;
extern const ib_backend ib__backend_aoti;

/* The backends of generative models (gen_open.c lists them, one line each):
 * their open functions on the generation contract (workload/generation.h). */
/* llama.cpp through its C API, loaded at run time (src/backend/llama/):
 * the library missing, of another release than the headers, a file that is
 * not GGUF, an architecture it does not know: IB_ERR_INVALID_ARG (or
 * IB_ERR_UNSUPPORTED for what this build lacks) with one line; out of memory
 * while loading: IB_ERR_DEVICE_OOM. */
ib_status ib__backend_llama_gen_open(const ib__gen_open_args *a, ib__gen **out, ib_error *err);
/* The scripted fake's (src/backend/fake/gen_fake.c): its script from the
 * open arguments' options. */
ib_status ib__backend_fake_gen_open(const ib__gen_open_args *a, ib__gen **out, ib_error *err);
/* What each says of itself (ib_gen_backend_get): its name, description and
 * options. */
extern const ib_gen_backend ib__backend_llama_gen, ib__backend_fake_gen;

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
     * wrote them reads them (handed to src/report/latency_read.c by
     * ib_latency_file_parse, src/entry/entry.c). */
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

/* The legacy keys of the built-in backend that wrote old files, or NULL. */
const ib__legacy_result_keys *ib__legacy_result_keys_get(void);

/* Physical memory of this machine; 0 when unknown (a backend's default
 * cap of host memory is half of it). */
size_t ib__host_memory_bytes(void);

/* "yes"/"no" (also true/false, 1/0) of a backend option KEY. */
ib_status ib__backend_option_bool(const ib_backend_option *o, bool *out, ib_error *err);
/* A whole number in [lo, hi] of a backend option. */
ib_status ib__backend_option_int(const ib_backend_option *o, long long lo, long long hi, long long *out,
                                 ib_error *err);

#endif
