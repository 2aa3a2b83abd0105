/* llama.cpp's library, loaded (dlopen) when a generative model is first
 * opened, never linked: the program starts, and everything else runs and
 * is tested, where it is absent. Loaded once per process (ggml's backend
 * registry is the process's); the outcome, success or failure, is kept.
 *
 * The release check: llama_model_params and llama_context_params are
 * passed by value, so a library of another release than llama.h would be
 * handed structures it misreads. The library is accepted when it says the
 * release of the headers (llama_version() and ggml_version(), against the
 * versions of the source bundle the headers came from) and when the
 * default parameter structures it returns are of the headers' size and
 * layout: each default function writes its structure into a larger
 * buffer filled with a pattern, so the bytes it wrote show its size, and
 * fields at both ends must read the defaults of llama.cpp's source. */
#define _GNU_SOURCE /* dlmopen */
#include "backend/llama/llama_backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef IB_LLAMA_ROOT
#error "IB_LLAMA_ROOT (the llama.cpp release set-up installed) is set by CMake"
#endif

/* The names the library goes by: a build from source (libllama.so, its
 * SONAME libllama.so.0) and node-llama-cpp's (libllama.v0.5.0.so). */
static const char *const library_names[] = { "libllama.so", "libllama.so.0",
                                             "libllama.v" IB_LLAMA_RELEASE ".so" };

static pthread_mutex_t lib_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool lib_tried;
static char lib_dir[1024];
static ib__llama_api lib_api;
static bool lib_ok;
static char lib_error[512];

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The default folder: the CUDA build set-up made from the bundle where
 * there is one, else the CPU build from the npm registry. */
static const char *default_dir(void)
{
    static const char *const dirs[] = { IB_LLAMA_ROOT "/cuda/lib", IB_LLAMA_ROOT "/lib" };
    char path[1200];
    for (size_t d = 0; d < 2; d++)
        for (size_t i = 0; i < sizeof library_names / sizeof *library_names; i++) {
            snprintf(path, sizeof path, "%s/%s", dirs[d], library_names[i]);
            if (is_file(path)) return dirs[d];
        }
    return dirs[1];
}

static bool sym(void *h, const char *name, void *slot)
{
    void *p = dlsym(h, name);
    if (!p) {
        snprintf(lib_error, sizeof lib_error,
                 "%.300s is not llama.cpp's release " IB_LLAMA_RELEASE " (ggml " IB_GGML_RELEASE
                 "): it has no %s",
                 lib_api.library, name);
        return false;
    }
    memcpy(slot, &p, sizeof p); /* POSIX: data and function pointers convert */
    return true;
}

#define SYM(field, name)                                                                                     \
    do {                                                                                                     \
        if (!sym(h, name, &lib_api.field)) return false;                                                     \
    } while (0)

/* "0.5.0-dev" is release 0.5.0 (a build with LLAMA_BUILD_IS_DEV, the default). */
static bool same_release(const char *said, const char *want)
{
    size_t n = strlen(want);
    return said && !strncmp(said, want, n) && (said[n] == '\0' || !strcmp(said + n, "-dev"));
}

/* The release first: a library of another one most likely lacks or
 * changed some of what follows, and this says why. */
static bool find_release(void *h)
{
    SYM(llama_version, "llama_version");
    SYM(ggml_version, "ggml_version");
    const char *v = lib_api.llama_version(), *gv = lib_api.ggml_version();
    if (!same_release(v, IB_LLAMA_RELEASE) || !same_release(gv, IB_GGML_RELEASE)) {
        snprintf(lib_error, sizeof lib_error,
                 "%.300s is llama.cpp %.20s (ggml %.20s), not the release inferbench was built against "
                 "(" IB_LLAMA_RELEASE ", ggml " IB_GGML_RELEASE
                 "): its parameter structures would be misread",
                 lib_api.library, v ? v : "?", gv ? gv : "?");
        return false;
    }
    return true;
}

static bool find_llama(void *h)
{
    SYM(backend_init, "llama_backend_init");
    SYM(model_default_params, "llama_model_default_params");
    SYM(context_default_params, "llama_context_default_params");
    SYM(model_quantize_default_params, "llama_model_quantize_default_params");
    SYM(model_load_from_file, "llama_model_load_from_file");
    SYM(model_free, "llama_model_free");
    SYM(init_from_model, "llama_init_from_model");
    SYM(free, "llama_free");
    SYM(max_parallel_sequences, "llama_max_parallel_sequences");
    SYM(n_ctx, "llama_n_ctx");
    SYM(n_batch, "llama_n_batch");
    SYM(n_ubatch, "llama_n_ubatch");
    SYM(n_seq_max, "llama_n_seq_max");
    SYM(get_memory, "llama_get_memory");
    SYM(memory_clear, "llama_memory_clear");
    SYM(memory_seq_cp, "llama_memory_seq_cp");
    SYM(memory_seq_pos_min, "llama_memory_seq_pos_min");
    SYM(memory_seq_pos_max, "llama_memory_seq_pos_max");
    SYM(memory_seq_rm, "llama_memory_seq_rm");
    SYM(decode, "llama_decode");
    SYM(synchronize, "llama_synchronize");
    SYM(get_logits_ith, "llama_get_logits_ith");
    SYM(set_n_threads, "llama_set_n_threads");
    SYM(n_threads, "llama_n_threads");
    SYM(n_threads_batch, "llama_n_threads_batch");
    SYM(attach_threadpool, "llama_attach_threadpool");
    SYM(model_get_vocab, "llama_model_get_vocab");
    SYM(vocab_n_tokens, "llama_vocab_n_tokens");
    SYM(model_n_layer, "llama_model_n_layer");
    SYM(model_n_embd, "llama_model_n_embd");
    SYM(model_n_head, "llama_model_n_head");
    SYM(model_n_head_kv, "llama_model_n_head_kv");
    SYM(model_n_ctx_train, "llama_model_n_ctx_train");
    SYM(model_desc, "llama_model_desc");
    SYM(model_meta_val_str, "llama_model_meta_val_str");
    SYM(model_size, "llama_model_size");
    SYM(model_n_params, "llama_model_n_params");
    SYM(model_ftype, "llama_model_ftype");
    SYM(ftype_name, "llama_ftype_name");
    SYM(model_quantize, "llama_model_quantize");
    SYM(log_set, "llama_log_set");
    return true;
}

static bool find_ggml(void *h)
{
    SYM(backend_load_all_from_path, "ggml_backend_load_all_from_path");
    SYM(reg_count, "ggml_backend_reg_count");
    SYM(dev_count, "ggml_backend_dev_count");
    SYM(dev_get, "ggml_backend_dev_get");
    SYM(dev_type, "ggml_backend_dev_type");
    SYM(dev_name, "ggml_backend_dev_name");
    SYM(dev_description, "ggml_backend_dev_description");
    SYM(dev_by_type, "ggml_backend_dev_by_type");
    SYM(dev_backend_reg, "ggml_backend_dev_backend_reg");
    SYM(reg_get_proc_address, "ggml_backend_reg_get_proc_address");
    SYM(threadpool_params_default, "ggml_threadpool_params_default");
    SYM(row_size, "ggml_row_size");
    SYM(type_name, "ggml_type_name");
    SYM(ggml_init, "ggml_init");
    SYM(ggml_free, "ggml_free");
    SYM(tensor_overhead, "ggml_tensor_overhead");
    SYM(new_tensor, "ggml_new_tensor");
    SYM(set_name, "ggml_set_name");
    SYM(fp32_to_fp16_row, "ggml_fp32_to_fp16_row");
    SYM(gguf_init_empty, "gguf_init_empty");
    SYM(gguf_init_from_file, "gguf_init_from_file");
    SYM(gguf_free, "gguf_free");
    SYM(gguf_set_val_str, "gguf_set_val_str");
    SYM(gguf_set_val_u32, "gguf_set_val_u32");
    SYM(gguf_set_val_f32, "gguf_set_val_f32");
    SYM(gguf_set_arr_data, "gguf_set_arr_data");
    SYM(gguf_set_arr_str, "gguf_set_arr_str");
    SYM(gguf_find_key, "gguf_find_key");
    SYM(gguf_get_kv_type, "gguf_get_kv_type");
    SYM(gguf_get_val_str, "gguf_get_val_str");
    SYM(gguf_add_tensor, "gguf_add_tensor");
    SYM(gguf_get_meta_size, "gguf_get_meta_size");
    SYM(gguf_get_meta_data, "gguf_get_meta_data");
    SYM(gguf_get_data_offset, "gguf_get_data_offset");
    SYM(gguf_get_tensor_offset, "gguf_get_tensor_offset");
    SYM(gguf_get_tensor_size, "gguf_get_tensor_size");
    SYM(gguf_get_n_tensors, "gguf_get_n_tensors");
    return true;
}

/* What a default-parameters function returns, with room after it: the
 * bytes past the headers' structure stay PATTERN unless the library's
 * structure is larger. */
#define PATTERN 0xA5
/* llama-quant.cpp's LLAMA_QUANT_MAX_BUF_SIZE, the default max_buf_size. */
#define QUANT_MAX_BUF_SIZE ((size_t)8 << 30)
typedef struct {
    struct llama_context_params p;
    unsigned char tail[512];
} cparams_probe;
typedef struct {
    struct llama_model_params p;
    unsigned char tail[512];
} mparams_probe;
typedef struct {
    llama_model_quantize_params p;
    unsigned char tail[512];
} qparams_probe;

static bool untouched(const unsigned char *tail, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tail[i] != PATTERN) return false;
    return true;
}

/* Calls a function returning a structure into out, prefilled with the
 * pattern. On x86-64 (System V) a structure this large is returned through
 * a hidden pointer passed as the first argument: calling the function as
 * one taking that pointer makes it write its own structure, of its own
 * size, into out, and nothing more. Elsewhere the hidden pointer is passed
 * otherwise (aarch64: x8): the structure is returned the ordinary way and
 * only its fields are checked. */
static void call_into(void *fn, void *out, size_t size, size_t own)
{
    memset(out, PATTERN, size);
#if defined(__x86_64__)
    (void)own;
    void *(*into)(void *);
    memcpy(&into, &fn, sizeof into);
    into(out);
#else
    (void)size;
    /* The library's structure, as large as the headers' (unchecked). */
    if (own == sizeof(struct llama_context_params)) {
        struct llama_context_params (*f)(void);
        memcpy(&f, &fn, sizeof f);
        ((cparams_probe *)out)->p = f();
    } else if (own == sizeof(struct llama_model_params)) {
        struct llama_model_params (*f)(void);
        memcpy(&f, &fn, sizeof f);
        ((mparams_probe *)out)->p = f();
    } else {
        llama_model_quantize_params (*f)(void);
        memcpy(&f, &fn, sizeof f);
        ((qparams_probe *)out)->p = f();
    }
#endif
}

/* The default structures the library returns against the headers': no
 * byte past their size written (a larger structure writes some), and the
 * fields of both ends reading llama.cpp's defaults (llama-context.cpp,
 * llama-model.cpp, llama-quant.cpp of the release): a structure shorter,
 * or with fields moved, reads something else there. */
static bool layout_matches(void)
{
    cparams_probe c;
    mparams_probe m;
    qparams_probe q;
    void *fn;
    memcpy(&fn, &lib_api.context_default_params, sizeof fn);
    call_into(fn, &c, sizeof c, sizeof c.p);
    memcpy(&fn, &lib_api.model_default_params, sizeof fn);
    call_into(fn, &m, sizeof m, sizeof m.p);
    memcpy(&fn, &lib_api.model_quantize_default_params, sizeof fn);
    call_into(fn, &q, sizeof q, sizeof q.p);
    bool ctx_ok = untouched(c.tail, sizeof c.tail) && c.p.n_ctx == 512 && c.p.n_batch == 2048 &&
                  c.p.n_ubatch == 512 && c.p.n_seq_max == 1 && c.p.type_k == GGML_TYPE_F16 &&
                  c.p.type_v == GGML_TYPE_F16 && c.p.flash_attn_type == LLAMA_FLASH_ATTN_TYPE_AUTO &&
                  c.p.offload_kqv && !c.p.embeddings && !c.p.kv_unified && c.p.samplers == NULL &&
                  c.p.n_samplers == 0 && c.p.ctx_other == NULL;
    bool model_ok = untouched(m.tail, sizeof m.tail) && m.p.devices == NULL && m.p.n_gpu_layers == -1 &&
                    m.p.main_gpu == 0 && m.p.kv_overrides == NULL && !m.p.vocab_only && m.p.use_extra_bufts &&
                    !m.p.no_alloc && !m.p.load_mtp;
    bool quant_ok = untouched(q.tail, sizeof q.tail) && q.p.nthread == 0 &&
                    q.p.ftype == LLAMA_FTYPE_MOSTLY_Q8_0 && q.p.output_tensor_type == GGML_TYPE_COUNT &&
                    q.p.token_embedding_type == GGML_TYPE_COUNT && q.p.quantize_output_tensor &&
                    !q.p.only_copy && q.p.imatrix == NULL && q.p.prune_layers == NULL &&
                    q.p.max_buf_size == QUANT_MAX_BUF_SIZE;
    return ctx_ok && model_ok && quant_ok;
}

static void *open_in(const char *dir)
{
    for (size_t i = 0; i < sizeof library_names / sizeof *library_names; i++) {
        snprintf(lib_api.library, sizeof lib_api.library, "%s/%s", dir, library_names[i]);
        if (!is_file(lib_api.library)) continue;
        /* dlmopen into the base namespace is dlopen, not intercepted by the
         * sanitizers (see ort_library.c); global, as ggml's backends it
         * loads in turn look its symbols up. */
        void *h = dlmopen(LM_ID_BASE, lib_api.library, RTLD_NOW | RTLD_GLOBAL);
        if (!h) snprintf(lib_error, sizeof lib_error, "cannot load llama.cpp's library: %.400s", dlerror());
        return h;
    }
    snprintf(lib_error, sizeof lib_error, "no llama.cpp library (libllama.so) in %.300s%s", dir,
             lib_dir[0] ? "" : ": run scripts/setup.sh, or give the folder of one with --option library=DIR");
    return NULL;
}

/* The devices ggml registered: the GPUs, in llama.cpp's order (main_gpu
 * counts them so). */
static void find_devices(void)
{
    for (size_t i = 0; i < lib_api.dev_count(); i++) {
        ggml_backend_dev_t d = lib_api.dev_get(i);
        if (lib_api.dev_type(d) != GGML_BACKEND_DEVICE_TYPE_GPU) continue;
        if (!lib_api.has_gpu)
            snprintf(lib_api.gpu_name, sizeof lib_api.gpu_name, "%s", lib_api.dev_description(d));
        lib_api.has_gpu = true;
        lib_api.n_gpus++;
    }
}

/* The CPU backend's threadpool functions, from its registry (a loadable
 * backend's symbols are not the library's): NULL without one. */
static void find_cpu_threadpool(void)
{
    ggml_backend_dev_t cpu = lib_api.dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    ggml_backend_reg_t reg = cpu ? lib_api.dev_backend_reg(cpu) : NULL;
    void *make = reg ? lib_api.reg_get_proc_address(reg, "ggml_threadpool_new") : NULL;
    void *free_ = reg ? lib_api.reg_get_proc_address(reg, "ggml_threadpool_free") : NULL;
    if (!make || !free_) return;
    memcpy(&lib_api.threadpool_new, &make, sizeof make); /* POSIX: data and function pointers convert */
    memcpy(&lib_api.threadpool_free, &free_, sizeof free_);
}

/* The library's log while nothing captures it: dropped (a backend does
 * not print). */
static void log_drop(enum ggml_log_level level, const char *text, void *user)
{
    (void)level, (void)text, (void)user;
}

static void load(const char *dir)
{
    void *h = open_in(dir);
    if (!h) return;
    if (!find_release(h) || !find_llama(h) || !find_ggml(h)) return;
    const char *v = lib_api.llama_version();
    if (!layout_matches()) {
        snprintf(
            lib_error, sizeof lib_error,
            "%.300s says llama.cpp %s but its parameter structures are not those of the headers inferbench "
            "was built with: rebuild inferbench against its own llama.h",
            lib_api.library, v);
        return;
    }
    snprintf(lib_api.version, sizeof lib_api.version, "%s", v);
    snprintf(lib_api.dir, sizeof lib_api.dir, "%s", dir);
    lib_api.log_set(log_drop, NULL);
    lib_api.backend_init();
    /* A build of loadable backends (node-llama-cpp's: GGML_BACKEND_DL)
     * registers none by itself: the best CPU variant (libggml-cpu-*.so)
     * and a CUDA backend are loaded from the folder, as llama.cpp's tools
     * do (ggml_backend_load_all). A build with its backends linked in (a
     * build from source) has them already. */
    if (lib_api.reg_count() == 0) lib_api.backend_load_all_from_path(dir);
    find_devices();
    find_cpu_threadpool();
    lib_ok = true;
}

ib_status ib__llama_load(const char *dir, const ib__llama_api **out, ib_error *err)
{
    pthread_mutex_lock(&lib_mutex);
    const char *want = dir && *dir ? dir : default_dir();
    bool other = lib_tried && strcmp(lib_dir, want) != 0;
    if (!lib_tried) {
        snprintf(lib_dir, sizeof lib_dir, "%s", dir && *dir ? dir : "");
        load(want);
        snprintf(lib_dir, sizeof lib_dir, "%s", want);
        lib_tried = true;
    }
    bool ok = lib_ok;
    pthread_mutex_unlock(&lib_mutex);
    IB_FAIL_IF(other, err, IB_ERR_INVALID_ARG,
               "llama.cpp was loaded from %s already: one library a process (option library=%s)", lib_dir,
               want);
    IB_FAIL_IF(!ok, err, IB_ERR_INVALID_ARG, "%s", lib_error);
    *out = &lib_api;
    return IB_OK;
}

/* --- the log ----------------------------------------------------------------- */

static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;
static ib__llama_log *log_sink;
static char log_line[1024]; /* the line being assembled (llama logs in pieces) */
static enum ggml_log_level log_level;

static void parse_line(ib__llama_log *l, enum ggml_log_level level, const char *line)
{
    const char *p;
    double mib;
    if ((p = strstr(line, "compute buffer size = ")) && sscanf(p, "compute buffer size = %lf", &mib) == 1)
        l->compute_mib += mib;
    if (strstr(line, "Flash Attention enabled")) l->flash_attn = 1;
    if (strstr(line, "Flash Attention not supported")) l->flash_attn = 0;
    if ((p = strstr(line, "offloaded "))) sscanf(p, "offloaded %d/%d layers", &l->offloaded, &l->of);
    if (strstr(line, "failed to allocate") || strstr(line, "out of memory") ||
        strstr(line, "Cannot allocate memory") || strstr(line, "cudaMalloc failed"))
        l->out_of_memory = true;
    /* The first error is the cause ("unknown model architecture"); the
     * later ones say only that loading failed. A warning stands in until
     * an error comes. */
    bool error = level == GGML_LOG_LEVEL_ERROR;
    if ((error && !l->error_seen) || (level == GGML_LOG_LEVEL_WARN && !l->first_error[0])) {
        size_t n = strcspn(line, "\n");
        snprintf(l->first_error, sizeof l->first_error, "%.*s", (int)(n < 399 ? n : 399), line);
        l->error_seen = error;
    }
}

static void log_capture(enum ggml_log_level level, const char *text, void *user)
{
    (void)user;
    pthread_mutex_lock(&log_mutex);
    if (log_sink && text) {
        if (level != GGML_LOG_LEVEL_CONT) log_level = level;
        size_t have = strlen(log_line);
        snprintf(log_line + have, sizeof log_line - have, "%s", text);
        if (strchr(log_line, '\n') || strlen(log_line) + 1 >= sizeof log_line) {
            parse_line(log_sink, log_level, log_line);
            log_line[0] = '\0';
        }
    }
    pthread_mutex_unlock(&log_mutex);
}

void ib__llama_log_begin(const ib__llama_api *api, ib__llama_log *log)
{
    *log = (ib__llama_log){ .flash_attn = -1, .offloaded = -1, .of = -1 };
    pthread_mutex_lock(&log_mutex);
    log_sink = log;
    log_line[0] = '\0';
    pthread_mutex_unlock(&log_mutex);
    api->log_set(log_capture, NULL);
}

void ib__llama_log_end(const ib__llama_api *api)
{
    api->log_set(log_drop, NULL);
    pthread_mutex_lock(&log_mutex);
    if (log_sink && log_line[0]) parse_line(log_sink, log_level, log_line);
    log_sink = NULL;
    log_line[0] = '\0';
    pthread_mutex_unlock(&log_mutex);
}
