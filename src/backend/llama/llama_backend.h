/* The llama backend's own declarations: llama.cpp's C API as a table of
 * functions found in the library it loads at run time (llama_lib.c), the
 * log it captures, and the GGUF files of the zoo (llama_gguf.c). Only the
 * files of src/backend/llama/ include it (they alone see llama.h). */
#ifndef IB_BACKEND_LLAMA_H
#define IB_BACKEND_LLAMA_H

#include "base/common.h"
#include "backend/registry.h"
#include "workload/generation.h"

#include <ggml-backend.h>
#include <ggml.h>
#include <gguf.h>
#include <llama.h>

/* The functions of llama.cpp, ggml and gguf the backend calls, looked up
 * in the library loaded (and its ggml libraries). */
typedef struct ib__llama_api {
    /* llama */
    void (*backend_init)(void);
    const char *(*llama_version)(void);
    struct llama_model_params (*model_default_params)(void);
    struct llama_context_params (*context_default_params)(void);
    struct llama_model_quantize_params (*model_quantize_default_params)(void);
    struct llama_model *(*model_load_from_file)(const char *path, struct llama_model_params params);
    void (*model_free)(struct llama_model *model);
    struct llama_context *(*init_from_model)(struct llama_model *model, struct llama_context_params params);
    void (*free)(struct llama_context *ctx);
    size_t (*max_parallel_sequences)(void);
    uint32_t (*n_ctx)(const struct llama_context *ctx);
    uint32_t (*n_batch)(const struct llama_context *ctx);
    uint32_t (*n_ubatch)(const struct llama_context *ctx);
    uint32_t (*n_seq_max)(const struct llama_context *ctx);
    llama_memory_t (*get_memory)(const struct llama_context *ctx);
    void (*memory_clear)(llama_memory_t mem, bool data);
    void (*memory_seq_cp)(llama_memory_t mem, llama_seq_id src, llama_seq_id dst, llama_pos p0, llama_pos p1);
    llama_pos (*memory_seq_pos_min)(llama_memory_t mem, llama_seq_id seq);
    llama_pos (*memory_seq_pos_max)(llama_memory_t mem, llama_seq_id seq);
    bool (*memory_seq_rm)(llama_memory_t mem, llama_seq_id seq, llama_pos p0, llama_pos p1);
    int32_t (*decode)(struct llama_context *ctx, struct llama_batch batch);
    void (*synchronize)(struct llama_context *ctx);
    float *(*get_logits_ith)(struct llama_context *ctx, int32_t i);
    void (*set_n_threads)(struct llama_context *ctx, int32_t n_threads, int32_t n_threads_batch);
    int32_t (*n_threads)(struct llama_context *ctx);
    int32_t (*n_threads_batch)(struct llama_context *ctx);
    void (*attach_threadpool)(struct llama_context *ctx, ggml_threadpool_t pool,
                              ggml_threadpool_t pool_batch);
    const struct llama_vocab *(*model_get_vocab)(const struct llama_model *model);
    int32_t (*vocab_n_tokens)(const struct llama_vocab *vocab);
    int32_t (*model_n_layer)(const struct llama_model *model);
    int32_t (*model_n_embd)(const struct llama_model *model);
    int32_t (*model_n_head)(const struct llama_model *model);
    int32_t (*model_n_head_kv)(const struct llama_model *model);
    int32_t (*model_n_ctx_train)(const struct llama_model *model);
    int32_t (*model_desc)(const struct llama_model *model, char *buf, size_t size);
    int32_t (*model_meta_val_str)(const struct llama_model *model, const char *key, char *buf, size_t size);
    uint64_t (*model_size)(const struct llama_model *model);
    uint64_t (*model_n_params)(const struct llama_model *model);
    enum llama_ftype (*model_ftype)(const struct llama_model *model);
    const char *(*ftype_name)(enum llama_ftype ftype);
    uint32_t (*model_quantize)(const char *in, const char *out, const llama_model_quantize_params *params);
    void (*log_set)(ggml_log_callback cb, void *user_data);
    /* ggml */
    const char *(*ggml_version)(void);
    void (*backend_load_all_from_path)(const char *dir);
    size_t (*reg_count)(void);
    size_t (*dev_count)(void);
    ggml_backend_dev_t (*dev_get)(size_t i);
    enum ggml_backend_dev_type (*dev_type)(ggml_backend_dev_t dev);
    const char *(*dev_name)(ggml_backend_dev_t dev);
    const char *(*dev_description)(ggml_backend_dev_t dev);
    ggml_backend_dev_t (*dev_by_type)(enum ggml_backend_dev_type type);
    ggml_backend_reg_t (*dev_backend_reg)(ggml_backend_dev_t dev);
    void *(*reg_get_proc_address)(ggml_backend_reg_t reg, const char *name);
    struct ggml_threadpool_params (*threadpool_params_default)(int n_threads);
    /* The CPU backend's (its registry's proc addresses, found once the
     * backends are loaded; NULL without a CPU backend): llama_threadpool.c */
    ggml_threadpool_t (*threadpool_new)(struct ggml_threadpool_params *params);
    void (*threadpool_free)(ggml_threadpool_t pool);
    size_t (*row_size)(enum ggml_type type, int64_t n);
    const char *(*type_name)(enum ggml_type type);
    struct ggml_context *(*ggml_init)(struct ggml_init_params params);
    void (*ggml_free)(struct ggml_context *ctx);
    size_t (*tensor_overhead)(void);
    struct ggml_tensor *(*new_tensor)(struct ggml_context *ctx, enum ggml_type type, int n_dims,
                                      const int64_t *ne);
    struct ggml_tensor *(*set_name)(struct ggml_tensor *t, const char *name);
    void (*fp32_to_fp16_row)(const float *x, ggml_fp16_t *y, int64_t n);
    /* gguf */
    struct gguf_context *(*gguf_init_empty)(void);
    struct gguf_context *(*gguf_init_from_file)(const char *fname, struct gguf_init_params params);
    void (*gguf_free)(struct gguf_context *ctx);
    void (*gguf_set_val_str)(struct gguf_context *ctx, const char *key, const char *val);
    void (*gguf_set_val_u32)(struct gguf_context *ctx, const char *key, uint32_t val);
    void (*gguf_set_val_f32)(struct gguf_context *ctx, const char *key, float val);
    void (*gguf_set_arr_data)(struct gguf_context *ctx, const char *key, enum gguf_type type,
                              const void *data, size_t n);
    void (*gguf_set_arr_str)(struct gguf_context *ctx, const char *key, const char **data, size_t n);
    int64_t (*gguf_find_key)(const struct gguf_context *ctx, const char *key);
    enum gguf_type (*gguf_get_kv_type)(const struct gguf_context *ctx, int64_t key_id);
    const char *(*gguf_get_val_str)(const struct gguf_context *ctx, int64_t key_id);
    void (*gguf_add_tensor)(struct gguf_context *ctx, const struct ggml_tensor *t);
    size_t (*gguf_get_meta_size)(const struct gguf_context *ctx);
    void (*gguf_get_meta_data)(const struct gguf_context *ctx, void *data);
    size_t (*gguf_get_data_offset)(const struct gguf_context *ctx);
    size_t (*gguf_get_tensor_offset)(const struct gguf_context *ctx, int64_t id);
    size_t (*gguf_get_tensor_size)(const struct gguf_context *ctx, int64_t id);
    int64_t (*gguf_get_n_tensors)(const struct gguf_context *ctx);

    /* What was loaded: the folder, the file, the release it says. */
    char dir[1024];
    char library[1200];
    char version[64];  /* llama_version() */
    bool has_gpu;      /* a GPU device was registered (ggml_backend_dev_*) */
    int n_gpus;        /* how many */
    char gpu_name[96]; /* the first's description */
} ib__llama_api;

/* The library in dir (NULL or "": the release set-up installed, its CUDA
 * build when one was made), loaded once per process: a later call with
 * another folder is refused (ggml's backends are the process's). A missing
 * library, missing functions, or one of another release than the headers
 * (llama_version, ggml_version, and the sizes of the parameter structures
 * passed by value): IB_ERR_INVALID_ARG with one line. */
ib_status ib__llama_load(const char *dir, const ib__llama_api **out, ib_error *err);

/* The library's log, captured (a backend never prints): lines of the
 * calls between begin and end go to the capture. Captures nest in no
 * way: one at a time, from the thread that drives the workload. */
typedef struct ib__llama_log {
    char first_error[400]; /* the first error line (or a warning, while no error came) */
    bool error_seen;
    double compute_mib; /* sum of "compute buffer size = X MiB" lines */
    int flash_attn;     /* -1: not said, 0: disabled, 1: enabled */
    int offloaded, of;  /* "offloaded N/M layers to GPU", -1 when not said */
    bool out_of_memory; /* a line said an allocation failed */
} ib__llama_log;

void ib__llama_log_begin(const ib__llama_api *api, ib__llama_log *log);
void ib__llama_log_end(const ib__llama_api *api);

/* A context's CPU threadpools (llama_threadpool.c): the one attached, and
 * the one its CPU backend computed with last, which it pauses when it
 * next switches (so it lives until then). */
typedef struct ib__llama_pools {
    ggml_threadpool_t attached, in_use;
} ib__llama_pools;

/* A threadpool of n_threads CPU threads attached to ctx, kept for its
 * life, as llama.cpp's own tools do (llama-bench, llama-server): without
 * one ggml starts and joins n_threads - 1 threads at every graph compute,
 * a decode's cost on the CPU that no user of llama.cpp's tools pays
 * (docs/generate.md, "CPU threads"). A pool matches its context's
 * threads exactly: a new thread count attaches a new pool.
 * IB_ERR_RUNTIME when the CPU backend has none to give. */
ib_status ib__llama_threadpool_attach(const ib__llama_api *api, struct llama_context *ctx, int32_t n_threads,
                                      ib__llama_pools *pools, ib_error *err);
/* After a decode of ctx: its CPU backend has switched to the attached
 * pool, and the one before can go. */
void ib__llama_threadpool_decoded(const ib__llama_api *api, ib__llama_pools *pools);
/* Every pool, after llama_free(ctx). */
void ib__llama_threadpool_free(const ib__llama_api *api, ib__llama_pools *pools);

/* The GGUF file of zoo model name ("llama-tiny", "llama-3.2-1b?q4_k_m")
 * in cache_dir, written there first when it is not (atomically: a
 * temporary file renamed; a second use reuses it), its path into path.
 * A cached file found damaged (a header gguf cannot read, or shorter than
 * its tensors' extents) or stale (without the zoo's vocabulary: an earlier
 * inferbench's) is made again, and note[note_cap] says which and
 * why (a backend never prints: the program does); "" when none was.
 * threads: the quantizer's. Unknown name or type: IB_ERR_INVALID_ARG. */
ib_status ib__llama_zoo_file(const ib__llama_api *api, const char *name, const char *cache_dir,
                             int32_t threads, char *path, size_t cap, char *note, size_t note_cap,
                             ib_error *err);

#endif
