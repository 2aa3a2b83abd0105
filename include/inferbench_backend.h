/*
 * inferbench backends: the interface between the measurement core and the
 * thing measured, and how a backend is found by name or loaded from a
 * shared object (a plugin). docs/backends.md explains how to write one.
 *
 * A backend is a const table of function pointers (ib_backend), versioned as
 * curl's Curl_ssl and ggml's ggml_backend_i are: its size and ABI version
 * come first, optional slots are NULL, and one capabilities field
 * (IB_CAP_*) says what the backend can do, so that the core never guesses
 * from which slots are set.
 *
 * The ABI of version IB_BACKEND_ABI_VERSION is this header's ib_backend,
 * ib_backend_option_decl, ib_backend_open_args and ib_backend_handle, plus the types of
 * inferbench.h they name (ib_status, ib_error, ib_workload_info): a change
 * to any of them that moves a field is a new ABI version, and the core
 * refuses a plugin built for another.
 *
 * Threading: the core calls a workload's slots from one thread at a time
 * (the thread that measures), never concurrently. Different workloads of
 * one backend may live in different threads: keep no mutable state outside
 * the workload's own.
 *
 * Ownership: a backend owns its workload's state, its stream and whatever
 * it allocates; close releases all of it. Strings and arrays given to open
 * are the caller's, valid during open only: copy what must be kept. The
 * ib_workload_info given to describe is the core's: fill it, keep no
 * pointer to it.
 *
 * Errors: every slot that can fail returns an ib_status and writes a
 * one-line message into err (which may be NULL), as the library does. A
 * backend never prints, exits or aborts: the program does that.
 */
#ifndef INFERBENCH_BACKEND_H
#define INFERBENCH_BACKEND_H

#include "inferbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes (4: ib_backend_option_decl grew
 * serve_race, which changes the stride of a table's declarations). */
#define IB_BACKEND_ABI_VERSION 4u

/* The one symbol a plugin exports: a function returning its table. The
 * name carries the ABI version, so that a plugin of another version is
 * found missing rather than misread. */
#define IB_BACKEND_ENTRY_SYMBOL "inferbench_backend_v4"
typedef const struct ib_backend *(*ib_backend_entry_fn)(void);

/* What a backend can do: bits of ib_backend_handle.caps, set by open. */
enum {
    /* Runs execute on a GPU, asynchronously to the host: the host clock
     * alone would be wrong, and copies to and from the device exist. */
    IB_CAP_GPU = 1u << 0,
    /* handle.stream is the cudaStream_t every run's work is queued on, in
     * order, on CUDA device handle.device_id. The core queues its own work
     * there too (timing events, an L2 flush, a hold kernel) and waits on
     * it (cudaStreamSynchronize). */
    IB_CAP_CUDA_STREAM = 1u << 1,
    /* Runs can be timed on the device: the core records CUDA events on the
     * stream around them. Needs IB_CAP_CUDA_STREAM. Without it the core
     * times with the host clock around synchronous runs. */
    IB_CAP_DEVICE_TIMING = 1u << 2,
    /* set_run_sync is given: a run can return as soon as its work is
     * queued. Needed to time back-to-back runs without host gaps, to
     * exclude launch overhead, and to show the host-clock mistake. */
    IB_CAP_ASYNC_RUN = 1u << 3,
    /* run_with_copies is given: the pitfalls report can show what timing
     * the copies in and out costs. */
    IB_CAP_HOST_INPUT_RUN = 1u << 4,
    /* reopen is given: the first runs of a fresh session can be repeated
     * (the no-warm-up mistake), and a failed batch can be recovered from by
     * returning the runtime's memory. */
    IB_CAP_REOPEN = 1u << 5,
    /* set_batch accepts any batch >= 1 (that fits): the throughput search
     * runs. Without it the workload has one fixed batch, the one describe
     * reports. */
    IB_CAP_BATCH_DIM = 1u << 6,
    /* Runs replay a captured CUDA graph: one launch a run (reported). */
    IB_CAP_GRAPH_CAPTURE = 1u << 7,
    /* The runs read device memory through the L2 cache of device_id, so
     * that --flush-l2 (a cold cache before each run) means something.
     * Needs IB_CAP_CUDA_STREAM. */
    IB_CAP_L2_FLUSH = 1u << 8,
    /* fill_inputs is given: the inputs can be refilled in place, with zeros
     * and back, so that the pitfalls report can show what zero-filled
     * inputs would have measured. */
    IB_CAP_REFILL_INPUTS = 1u << 9,
    /* The backend picks its kernels by timing candidates when a session
     * opens (an exhaustive algorithm search): the choice, and so the figures,
     * can differ from one session to the next (warned about). */
    IB_CAP_AUTOTUNED = 1u << 10
};

/* What an option of a backend means to the program, beyond its key
 * (ib_backend_option_decl.role). */
typedef enum ib_option_role {
    IB_OPTION_ROLE_NONE = 0,
    /* The number of CPU threads one workload computes with: a program that
     * runs several workloads on one host's CPU at once (a fleet) splits the
     * cores between them through it. */
    IB_OPTION_ROLE_THREADS = 1
} ib_option_role;

/* Bits of ib_backend_option_decl.flags. */
enum {
    /* The option changes something only on a GPU: a program refuses it on
     * the CPU. */
    IB_OPTION_CUDA_ONLY = 1u << 0,
    /* Its values are "yes" and "no"; an alias flag takes no argument and
     * sets "yes". */
    IB_OPTION_SWITCH = 1u << 1,
    /* A setting of the whole process, not of one workload (where a runtime
     * is loaded from): given with ib_backend_configure before the backend's
     * first use, through the table's configure slot. */
    IB_OPTION_PROCESS = 1u << 2,
    /* Raced by best of one request, not by serve --best (docs/best.md,
     * "Serving"): there the engine's prefill chunk bounds the tokens of a
     * step, and the option stays at its default unless given. */
    IB_OPTION_RACE_NOT_SERVING = 1u << 3
};

/* One option a backend takes: what `inferbench backends` lists, what the
 * program builds its flags, their help and their value checks from, and
 * what `best` races. Only key and help are required. */
typedef struct ib_backend_option_decl {
    const char *key;  /* as --option KEY=VALUE gives it: "threads" */
    const char *help; /* one line: "intra-op threads of the CPU provider" */
    /* The values taken: "a|b|c" (one of these, matched without regard to
     * case and passed on spelled as here), "LO..HI" (a whole number in
     * that range), or a word that names the syntax ("PATH": any text).
     * NULL: any text. */
    const char *values;
    const char *flag; /* NULL, or a command-line alias: "--threads N" is
                         --option threads=N ("threads", without dashes) */
    const char *env;  /* NULL, or an environment variable the program reads
                         to set the option (the library never reads it) */
    /* NULL, or the values `best` races, "a|b", in the order tried; a
     * candidate's label names the value, or for an IB_OPTION_SWITCH the
     * label below when "yes". */
    const char *race;
    const char *label; /* a candidate's word for a switch raced on: "graph"; for
                          another option, the word before its value ("kv q8_0") */
    uint32_t flags;    /* IB_OPTION_* */
    ib_option_role role;
    /* NULL, or the values serve --best races instead of race's (a grid of
     * serving's own: an option that matters only under load, or fewer
     * values where the race of one request takes many); not with
     * IB_OPTION_RACE_NOT_SERVING. */
    const char *serve_race;
} ib_backend_option_decl;

/* What open is given. Initialize with ib_backend_open_args_init: fields
 * added later (at the end, struct_size telling which exist) keep their
 * defaults. */
typedef struct ib_backend_open_args {
    size_t struct_size;               /* sizeof(ib_backend_open_args) of the caller */
    const char *model;                /* the MODEL argument as given, or NULL; a backend
                                         may ignore it or read it its own way */
    const ib_backend_option *options; /* [n_options], in the order given */
    size_t n_options;
    ib_device_kind device; /* where to run; AUTO: the backend's choice */
    int device_id;         /* CUDA device index (default 0) */
    int64_t batch;         /* the batch to bind first (default 1) */
    uint64_t seed;         /* for input values (default 42) */
} ib_backend_open_args;

void ib_backend_open_args_init(ib_backend_open_args *args);

/* What open hands back. The core zeroes it before the call. */
typedef struct ib_backend_handle {
    void *state;   /* the backend's own; passed back to every slot */
    uint64_t caps; /* IB_CAP_* */
    void *stream;  /* with IB_CAP_CUDA_STREAM: the cudaStream_t, owned by the
                      backend (destroyed by close); NULL otherwise */
    int device_id; /* the CUDA device of stream */
} ib_backend_handle;

/* A backend. Required slots: open, describe, set_batch, run, close. The
 * optional ones are set exactly when the matching capability is declared;
 * the core refuses a table where they disagree. */
typedef struct ib_backend {
    size_t struct_size;      /* sizeof(ib_backend) as the backend was built */
    uint32_t abi_version;    /* IB_BACKEND_ABI_VERSION */
    const char *name;        /* short, lower case: "gemm" */
    const char *description; /* one line, for listings */

    /* Opens a workload: parses args->options (an unknown key or a bad value
     * is IB_ERR_INVALID_ARG with a message naming it), prepares the work
     * and binds args->batch (as set_batch does). On failure nothing is
     * left allocated and out is ignored. */
    ib_status (*open)(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err);

    /* Fills info (zeroed by the core) with what is measured: model,
     * provider, device, batch, has_batch_dim, tensors, flops_per_item (0
     * when unknown), and options: the settings in effect (defaults too),
     * each in the key open takes, only those this backend has. Called
     * after open, set_batch and reopen. */
    void (*describe)(void *state, ib_workload_info *info);

    /* Binds the inputs and outputs of `batch` (untimed). Device memory
     * exhausted: IB_ERR_DEVICE_OOM, after freeing what this batch took, so
     * that a smaller batch can follow; a size the backend refuses:
     * IB_ERR_UNSUPPORTED. */
    ib_status (*set_batch)(void *state, int64_t batch, ib_error *err);

    /* The timed region: one inference on the bound data. With
     * IB_CAP_CUDA_STREAM it enqueues on the stream and, unless
     * set_run_sync(false) was called, returns after the device finished;
     * otherwise it runs synchronously. */
    ib_status (*run)(void *state, ib_error *err);

    /* Optional (IB_CAP_ASYNC_RUN): whether run waits for its work to end
     * before returning. The core turns it off while it times with events
     * and back on afterwards. */
    ib_status (*set_run_sync)(void *state, bool sync, ib_error *err);

    /* Optional (IB_CAP_HOST_INPUT_RUN): one inference as naive code does
     * it: inputs copied in from host memory, outputs back, all inside,
     * returning when done. */
    ib_status (*run_with_copies)(void *state, ib_error *err);

    /* Optional (IB_CAP_REOPEN): drops the session and creates it anew (its
     * memory returned), so that the next run is cold again; the bound
     * batch stays bound. */
    ib_status (*reopen)(void *state, ib_error *err);

    /* Optional (IB_CAP_REFILL_INPUTS): refills the bound inputs in place
     * (untimed): with zeros, or (zeros false) with the values they were
     * made with. */
    ib_status (*fill_inputs)(void *state, bool zeros, ib_error *err);

    /* Releases the workload: its state, buffers and stream. */
    void (*close)(void *state);

    /* The options open takes, [n_options] (NULL, 0: none declared; open
     * may still take others). Keys are unique. */
    const ib_backend_option_decl *options;
    size_t n_options;

    /* Optional: sets an option declared IB_OPTION_PROCESS for the whole
     * process (before the first open, or the backend says why not). */
    ib_status (*configure)(const ib_backend_option *option, ib_error *err);
} ib_backend;

/* ------------------------------------------------------------------------ */
/* The registry: backends by name                                            */
/* ------------------------------------------------------------------------ */

/* The backends built in (registry.c's list) and the plugins loaded, in
 * that order. ib_backend_get(i) is NULL past the end. */
size_t ib_backend_count(void);
const ib_backend *ib_backend_get(size_t index);

/* The backend called name (built in or loaded), or NULL. */
const ib_backend *ib_backend_find(const char *name);

/* What backend b says of its runtime whether or not it measured (its name,
 * and for a built-in backend with a runtime to load, the runtime's version,
 * library and build): the facts of ib_runtime_info but the provider, which
 * a measurement gives. Returns whether b has such facts to report (false:
 * out holds its name only); a runtime that cannot be loaded leaves them
 * "". Never fails. */
bool ib_backend_runtime(const ib_backend *b, ib_runtime_info *out);

/* The default backend: the one a model is opened on when none is named
 * (ib_model_options.backend NULL), the registry's first; NULL when this
 * build left it out (ib_backend_absent(NULL) says why). */
const ib_backend *ib_backend_default(void);

/* Why the built-in backend called name (NULL: the default one) is not in
 * this build (one line: what to rebuild with), or NULL when it is, or when
 * there is no such built-in backend at all. */
const char *ib_backend_absent(const char *name);

/* The declaration of option key in b, or NULL. */
const ib_backend_option_decl *ib_backend_option_find(const ib_backend *b, const char *key);

/* Sets b's process-wide option key (declared IB_OPTION_PROCESS) to value,
 * through b's configure slot. IB_ERR_INVALID_ARG when b does not declare
 * key so, or the backend refuses the value (too late, for instance). */
ib_status ib_backend_configure(const ib_backend *b, const char *key, const char *value, ib_error *err);

/* Whether b reads the model options of ib_model_options beyond what its
 * table's open is given (shapes, inputs, math, memory limits): true for a
 * built-in backend of models; ib_workload_open_model refuses them for the
 * others. */
bool ib_backend_takes_model_options(const ib_backend *b);

/* Loads a plugin: dlopens path, looks up IB_BACKEND_ENTRY_SYMBOL, checks the
 * table (ABI version, size, required slots, slots against capabilities)
 * and registers it under its name. A missing file, a missing symbol, a
 * table of another ABI version or a bad table: IB_ERR_INVALID_ARG with a
 * one-line message, and the object is closed again (nothing half-loaded).
 * The plugin stays loaded until ib_backend_unload_plugins. */
ib_status ib_backend_load_plugin(const char *path, const ib_backend **out, ib_error *err);

/* Unloads every plugin loaded. No workload of theirs may be open. */
void ib_backend_unload_plugins(void);

/* A backend of generative models: the names ib_gen_open (inferbench.h)
 * takes as ib_gen_options.backend, what `inferbench backends` lists. Its
 * options are declared as a forward-pass backend's are; n_options 0 where
 * the backend is not in this build (description says why). */
typedef struct ib_gen_backend {
    const char *name;        /* "llama" */
    const char *description; /* one line */
    const ib_backend_option_decl *options;
    size_t n_options;
} ib_gen_backend;

/* The backends of generative models, the default first; ib_gen_backend_get(i)
 * is NULL past the end. */
size_t ib_gen_backend_count(void);
const ib_gen_backend *ib_gen_backend_get(size_t index);

/* Opens a workload of backend b for the measurement functions of
 * inferbench.h. The workload keeps b: it must outlive it. */
ib_status ib_workload_open_backend(const ib_backend *b, const ib_backend_open_args *args, ib_workload **out,
                                   ib_error *err);

#ifdef __cplusplus
}
#endif

#endif /* INFERBENCH_BACKEND_H */
