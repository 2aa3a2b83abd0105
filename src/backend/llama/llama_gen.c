/* Generative models on llama.cpp, through its C API (llama.h), as the
 * generation workload of src/workload/generation.h: a model loaded from a
 * GGUF file (or the zoo's, written to the program's cache), one context
 * holding n sequences of a given context each, random token ids fed at
 * positions, logits read after llama_synchronize. docs/backend-llama.md. */
#include "backend/llama/llama_backend.h"
#include "backend/llama/llama_probe.h"
#include "backend/registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The KV cache types offered (kv_type=), as llama-bench names them. */
typedef struct kv_choice {
    const char *name;
    enum ggml_type type;
} kv_choice;

static const kv_choice kv_choices[] = {
    { "f16", GGML_TYPE_F16 },   { "bf16", GGML_TYPE_BF16 }, { "f32", GGML_TYPE_F32 },
    { "q8_0", GGML_TYPE_Q8_0 }, { "q4_0", GGML_TYPE_Q4_0 },
};
#define N_KV_CHOICES (sizeof kv_choices / sizeof kv_choices[0])

typedef struct settings {
    char library[1024];    /* library=: "" the release set-up installed */
    int32_t n_gpu_layers;  /* -1: all (on a GPU) */
    int flash_attn;        /* -1 auto, 0 off, 1 on */
    const kv_choice *kv;   /* kv_type= */
    bool kv_unified;       /* kv_unified=: one cache for every sequence */
    int32_t n_batch;       /* 0: llama.cpp's default (2048) */
    int32_t n_ubatch;      /* 0: llama.cpp's default (512) */
    int32_t threads;       /* 0: the cores the process may use */
    uint64_t memory_limit; /* bytes; 0: none */
} settings;

typedef struct llama_gen {
    const ib__llama_api *api;
    settings set;
    ib_device_kind device;
    int device_id;   /* the GPU, among those llama.cpp sees */
    char path[1024]; /* the GGUF file loaded */
    struct llama_model *model;
    struct llama_context *ctx;
    ib__llama_pools pools; /* ctx's CPU threads, kept for its life */
    int32_t n_vocab;
    uint64_t seed;
    int32_t n_seqs, ctx_per_seq; /* the context asked for */
    int32_t threads;             /* in effect */
    uint64_t kv_bytes, compute_bytes;
    /* What set_sequences holds the KV cache and compute buffers against:
     * memory_limit, else on the CPU half of physical memory (memory past
     * what is free does not fail there: the machine swaps or the kernel
     * kills the process), else none (a GPU's allocation fails by itself). */
    uint64_t kv_limit;
    int flash_attn; /* as resolved at the last context creation */
    int32_t offloaded;
    /* The batch fed to llama_decode, of cap tokens. */
    struct llama_batch batch;
    llama_seq_id *seq_ids; /* [cap]: batch.seq_id[i] points at seq_ids[i] */
    int32_t cap;
    int32_t last_outputs;     /* logits the last decode produced: 1 (prefill) or n_seqs */
    bool last_was_prefill;    /* the last decode was a prompt's: its one output is last_prefill_seq's */
    bool last_was_mixed;      /* the last decode was a mixed batch: its outputs are by batch index */
    int32_t last_prefill_seq; /* the sequence of the last prefill */
    llama_token *next;        /* [n_seqs]: a sampled token for the next step, or -1 */
    int32_t *entry_of;        /* [n_seqs]: fill_mixed's entry of each sequence, or -1 */
    int32_t *output_at;       /* [n_seqs]: the batch index of each sequence's output in the last
                                 mixed batch, or -1 */
} llama_gen;

/* --- options ------------------------------------------------------------------ */

static ib_status parse_choice(const ib_backend_option *o, llama_gen *l, ib_error *err)
{
    if (!strcmp(o->key, "flash_attn")) {
        static const char *const v[] = { "auto", "on", "off", "yes", "no" };
        static const int fa[] = { -1, 1, 0, 1, 0 };
        for (size_t i = 0; i < 5; i++)
            if (!strcmp(o->value, v[i])) return l->set.flash_attn = fa[i], IB_OK;
        return ib__fail(err, IB_ERR_INVALID_ARG, "llama: option flash_attn=%s: expected auto, on or off",
                        o->value);
    }
    if (!strcmp(o->key, "kv_unified")) {
        if (!strcmp(o->value, "on") || !strcmp(o->value, "off"))
            return l->set.kv_unified = !strcmp(o->value, "on"), IB_OK;
        return ib__fail(err, IB_ERR_INVALID_ARG, "llama: option kv_unified=%s: expected on or off", o->value);
    }
    for (size_t i = 0; i < N_KV_CHOICES; i++)
        if (!strcmp(o->value, kv_choices[i].name)) return l->set.kv = &kv_choices[i], IB_OK;
    return ib__fail(err, IB_ERR_INVALID_ARG,
                    "llama: option kv_type=%s: expected f16, bf16, f32, q8_0 or q4_0", o->value);
}

/* The options parse_option takes, as `inferbench backends` lists them.
 * best races flash attention (on and off: auto is one of them, stated),
 * every KV cache type (a quantized one without flash attention is
 * refused by check_kv_type: the race's "does not apply") and three
 * physical batches: what changes a generation figure (docs/best.md). */
static const ib_backend_option_decl llama_options[] = {
    { .key = "library",
      .help = "the folder of libllama.so and ggml's libraries (default: the release set-up installed)",
      .values = "PATH",
      .env = "INFERBENCH_LLAMA_LIBRARY" },
    { .key = "n_gpu_layers",
      .help = "layers offloaded to the GPU (default all on a GPU, 0 on the CPU)",
      .values = "all|-1..100000" },
    { .key = "flash_attn",
      .help = "flash attention (default auto: llama.cpp's choice)",
      .values = "auto|on|off",
      .race = "off|on",
      .label = "fa" },
    { .key = "kv_type",
      .help = "the K and V caches' type (default f16)",
      .values = "f16|bf16|f32|q8_0|q4_0",
      .race = "f16|bf16|f32|q8_0|q4_0",
      .label = "kv",
      .serve_race = "f16|q8_0" },
    { .key = "kv_unified",
      .help = "one KV cache shared by the sequences (on) or one a sequence (off, default: llama-server's "
              "with -np N)",
      .values = "on|off",
      .label = "unified",
      .serve_race = "off|on" },
    { .key = "n_batch",
      .help = "logical batch: tokens one decode call takes (default 2048, at most the context)",
      .values = "1..1048576" },
    { .key = "n_ubatch",
      .help = "physical batch: tokens one compute graph takes (default 512)",
      .values = "1..1048576",
      .race = "128|256|512",
      .label = "ubatch",
      .flags = IB_OPTION_RACE_NOT_SERVING },
    { .key = "threads",
      .help = "CPU threads (default: the cores the process may use, not llama.cpp's default)",
      .values = "1..1048576" },
    { .key = "memory_limit_mb",
      .help = "memory the KV cache and compute buffers may take (CPU default: half of RAM)",
      .values = "0..1073741824" },
};

const ib_gen_backend ib__backend_llama_gen = {
    .name = "llama",
    .description = "generative models (GGUF files, zoo:NAME) on llama.cpp's C API, loaded at run time",
    .options = llama_options,
    .n_options = sizeof llama_options / sizeof llama_options[0],
};

static ib_status parse_option(const ib_backend_option *o, llama_gen *l, ib_error *err)
{
    long long v;
    if (!strcmp(o->key, "library")) {
        IB_FAIL_IF(!*o->value || strlen(o->value) >= sizeof l->set.library, err, IB_ERR_INVALID_ARG,
                   "llama: option library=%s: a folder of 1 to %zu bytes", o->value,
                   sizeof l->set.library - 1);
        struct stat st;
        IB_FAIL_IF(stat(o->value, &st) != 0 || !S_ISDIR(st.st_mode), err, IB_ERR_INVALID_ARG,
                   "llama: option library=%s: not a folder (give the one holding libllama.so)", o->value);
        snprintf(l->set.library, sizeof l->set.library, "%s", o->value);
        return IB_OK;
    }
    if (!strcmp(o->key, "flash_attn") || !strcmp(o->key, "kv_type") || !strcmp(o->key, "kv_unified"))
        return parse_choice(o, l, err);
    if (!strcmp(o->key, "n_gpu_layers")) {
        if (!strcmp(o->value, "all")) return l->set.n_gpu_layers = -1, IB_OK;
        IB_TRY(ib__backend_option_int(o, -1, 100000, &v, err));
        return l->set.n_gpu_layers = (int32_t)v, IB_OK;
    }
    int32_t *slot = !strcmp(o->key, "n_batch")    ? &l->set.n_batch
                    : !strcmp(o->key, "n_ubatch") ? &l->set.n_ubatch
                    : !strcmp(o->key, "threads")  ? &l->set.threads
                                                  : NULL;
    if (slot) {
        IB_TRY(ib__backend_option_int(o, 1, 1 << 20, &v, err));
        return *slot = (int32_t)v, IB_OK;
    }
    if (!strcmp(o->key, "memory_limit_mb")) {
        IB_TRY(ib__backend_option_int(o, 0, 1LL << 30, &v, err));
        return l->set.memory_limit = (uint64_t)v << 20, IB_OK;
    }
    /* The keys named from the declarations `inferbench backends` lists, so
     * that the two never disagree. */
    char known[256] = "";
    for (size_t i = 0; i < ib__backend_llama_gen.n_options; i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                 ib__backend_llama_gen.options[i].key);
    return ib__fail(err, IB_ERR_INVALID_ARG, "llama: unknown option '%s' (known: %s)", o->key, known);
}

/* --- the batch ---------------------------------------------------------------- */

static void free_batch(llama_gen *l)
{
    free(l->batch.token);
    free(l->batch.pos);
    free(l->batch.n_seq_id);
    free(l->batch.seq_id);
    free(l->batch.logits);
    free(l->seq_ids);
    free(l->next);
    free(l->entry_of);
    free(l->output_at);
    l->batch = (struct llama_batch){ 0 };
    l->seq_ids = NULL;
    l->next = NULL;
    l->entry_of = NULL;
    l->output_at = NULL;
    l->cap = 0;
}

/* Room for cap tokens, each of one sequence (the decode steps of n_seqs
 * sequences and the prompt's pieces of n_batch). */
static ib_status alloc_batch(llama_gen *l, int32_t cap, int32_t n_seqs, ib_error *err)
{
    free_batch(l);
    size_t n = (size_t)cap;
    l->batch.token = calloc(n, sizeof *l->batch.token);
    l->batch.pos = calloc(n, sizeof *l->batch.pos);
    l->batch.n_seq_id = calloc(n, sizeof *l->batch.n_seq_id);
    l->batch.seq_id = calloc(n, sizeof *l->batch.seq_id);
    l->batch.logits = calloc(n, sizeof *l->batch.logits);
    l->seq_ids = calloc(n, sizeof *l->seq_ids);
    l->next = calloc((size_t)n_seqs, sizeof *l->next);
    l->entry_of = calloc((size_t)n_seqs, sizeof *l->entry_of);
    l->output_at = calloc((size_t)n_seqs, sizeof *l->output_at);
    if (!l->batch.token || !l->batch.pos || !l->batch.n_seq_id || !l->batch.seq_id || !l->batch.logits ||
        !l->seq_ids || !l->next || !l->entry_of || !l->output_at) {
        free_batch(l);
        return ib__fail(err, IB_ERR_NO_MEMORY, "llama: out of host memory for a batch of %d tokens", cap);
    }
    for (size_t i = 0; i < n; i++) {
        l->batch.seq_id[i] = &l->seq_ids[i];
        l->batch.n_seq_id[i] = 1;
    }
    for (int32_t s = 0; s < n_seqs; s++) l->next[s] = l->entry_of[s] = l->output_at[s] = -1;
    l->cap = cap;
    return IB_OK;
}

/* The ids every request shares below its entry's shared positions: a
 * stream no request (nor sequence) is keyed by. */
#define SHARED_PREFIX_STREAM UINT32_MAX

/* The random token of stream key at position pos: fixed by the seed. The
 * prefill op's stream is its sequence, a mixed batch entry's its
 * request's (or the shared prefix's). */
static llama_token token_at(const llama_gen *l, uint32_t key, int32_t pos)
{
    uint64_t x = l->seed ^ ((uint64_t)key << 32) ^ (uint32_t)pos;
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    x ^= x >> 31;
    return (llama_token)(x % (uint64_t)l->n_vocab);
}

static ib_status decode(llama_gen *l, int32_t n, const char *what, ib_error *err)
{
    l->batch.n_tokens = n;
    int32_t rc = l->api->decode(l->ctx, l->batch);
    IB_FAIL_IF(rc == 1, err, IB_ERR_INVALID_ARG,
               "llama: %s does not fit the context (%u tokens a sequence): no room in the KV cache", what,
               l->api->n_ctx(l->ctx) / l->api->n_seq_max(l->ctx));
    IB_FAIL_IF(rc != 0, err, IB_ERR_RUNTIME, "llama: llama_decode of the %s failed (%d)", what, rc);
    ib__llama_threadpool_decoded(l->api, &l->pools);
    return IB_OK;
}

/* --- the context ------------------------------------------------------------ */

static struct llama_context_params context_params(const llama_gen *l, int32_t n_seqs, int32_t ctx_per_seq)
{
    struct llama_context_params p = l->api->context_default_params();
    p.n_ctx = (uint32_t)n_seqs * (uint32_t)ctx_per_seq;
    p.n_seq_max = (uint32_t)n_seqs;
    if (l->set.n_batch) p.n_batch = (uint32_t)l->set.n_batch;
    if (l->set.n_ubatch) p.n_ubatch = (uint32_t)l->set.n_ubatch;
    p.n_threads = p.n_threads_batch = l->threads;
    p.flash_attn_type = l->set.flash_attn < 0   ? LLAMA_FLASH_ATTN_TYPE_AUTO
                        : l->set.flash_attn > 0 ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                                                : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    p.type_k = p.type_v = l->set.kv->type;
    p.no_perf = true;
    /* By default one cache a sequence (llama.cpp's default, llama-server's
     * with -np N): the sequences are independent requests decoded
     * together. kv_unified=on: one cache for all (llama-server's with -np
     * auto): a step is then always one compute graph a ubatch, whatever
     * sequences it holds (fill_mixed), and every token's attention spans
     * the cells of every sequence, masked. */
    p.kv_unified = l->set.kv_unified;
    return p;
}

/* Per-head widths of K and V: the model's key_length / value_length when
 * it says them, else n_embd / n_head. */
static int64_t head_width(const llama_gen *l, const char *which)
{
    char key[96], buf[32];
    char arch[32] = "llama";
    l->api->model_meta_val_str(l->model, "general.architecture", arch, sizeof arch);
    snprintf(key, sizeof key, "%s.attention.%s_length", arch, which);
    if (l->api->model_meta_val_str(l->model, key, buf, sizeof buf) > 0) return atoll(buf);
    return l->api->model_n_embd(l->model) / l->api->model_n_head(l->model);
}

/* The bytes of a KV cache of n_ctx cells: K and V rows of every layer. */
static uint64_t kv_bytes_of(const llama_gen *l, uint64_t n_ctx)
{
    int64_t kv_heads = l->api->model_n_head_kv(l->model);
    uint64_t row = l->api->row_size(l->set.kv->type, head_width(l, "key") * kv_heads) +
                   l->api->row_size(l->set.kv->type, head_width(l, "value") * kv_heads);
    return n_ctx * (uint64_t)l->api->model_n_layer(l->model) * row;
}

/* llama.cpp rounds each sequence's context up to 256 cells. */
static uint64_t padded_ctx(int32_t n_seqs, int32_t ctx_per_seq)
{
    return (uint64_t)n_seqs * (((uint64_t)ctx_per_seq + 255) / 256 * 256);
}

static void free_context(llama_gen *l)
{
    if (l->ctx) l->api->free(l->ctx);
    l->ctx = NULL;
    ib__llama_threadpool_free(l->api, &l->pools); /* after the context that used them */
}

static ib_status over_limit(llama_gen *l, int32_t n_seqs, int32_t ctx_per_seq, uint64_t kv, uint64_t compute,
                            ib_error *err)
{
    return ib__fail(
        err, IB_ERR_DEVICE_OOM,
        "llama: %d sequences of %d tokens do not fit %s%llu: KV cache %.1f MiB + compute buffers "
        "%.1f MiB",
        n_seqs, ctx_per_seq, l->set.memory_limit ? "memory_limit_mb=" : "half of this machine's memory, MiB ",
        (unsigned long long)(l->kv_limit >> 20), (double)kv / 1048576.0, (double)compute / 1048576.0);
}

static ib_status create_context(llama_gen *l, int32_t n_seqs, int32_t ctx_per_seq, ib_error *err)
{
    free_context(l);
    uint64_t kv = kv_bytes_of(l, padded_ctx(n_seqs, ctx_per_seq));
    /* Before llama.cpp allocates (and clears) the cache: on the CPU memory
     * past what is free would not fail, the kernel would kill us. */
    if (l->kv_limit && kv > l->kv_limit) return over_limit(l, n_seqs, ctx_per_seq, kv, 0, err);
    ib__llama_log log;
    ib__llama_log_begin(l->api, &log);
    l->ctx = l->api->init_from_model(l->model, context_params(l, n_seqs, ctx_per_seq));
    ib__llama_log_end(l->api);
    IB_FAIL_IF(!l->ctx, err, IB_ERR_DEVICE_OOM, "llama: no context of %d sequences x %d tokens: %s", n_seqs,
               ctx_per_seq, log.first_error[0] ? log.first_error : "llama_init_from_model failed");
    l->kv_bytes = kv_bytes_of(l, l->api->n_ctx(l->ctx));
    l->compute_bytes = (uint64_t)(log.compute_mib * 1048576.0 + 0.5);
    if (l->kv_limit && l->kv_bytes + l->compute_bytes > l->kv_limit) {
        free_context(l);
        return over_limit(l, n_seqs, ctx_per_seq, l->kv_bytes, l->compute_bytes, err);
    }
    l->flash_attn = log.flash_attn >= 0 ? log.flash_attn : l->set.flash_attn != 0;
    int32_t cap = (int32_t)l->api->n_batch(l->ctx);
    ib_status st = ib__llama_threadpool_attach(l->api, l->ctx, l->threads, &l->pools, err);
    if (st == IB_OK) st = alloc_batch(l, cap > n_seqs ? cap : n_seqs, n_seqs, err);
    if (st != IB_OK) {
        free_context(l);
        return st;
    }
    l->n_seqs = n_seqs;
    l->ctx_per_seq = ctx_per_seq;
    l->last_outputs = 0;
    l->last_was_prefill = false;
    l->last_was_mixed = false;
    return IB_OK;
}

/* --- the model ---------------------------------------------------------------- */

/* A first look at the file, for a message that says what is wrong with it
 * rather than the loader's. */
static ib_status check_file(const char *path, ib_error *err)
{
    FILE *f = fopen(path, "rb");
    IB_FAIL_IF(!f, err, IB_ERR_INVALID_ARG, "llama: cannot open %s: %s", path, strerror(errno));
    char magic[4];
    size_t n = fread(magic, 1, 4, f);
    fclose(f);
    IB_FAIL_IF(n == 0, err, IB_ERR_INVALID_ARG, "llama: %s is empty, not a GGUF file", path);
    IB_FAIL_IF(n < 4 || memcmp(magic, "GGUF", 4) != 0, err, IB_ERR_INVALID_ARG,
               "llama: %s is not a GGUF file (it does not begin with GGUF)", path);
    return IB_OK;
}

static uint64_t file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static ib_status load_model(llama_gen *l, ib_error *err)
{
    IB_TRY(check_file(l->path, err));
    uint64_t bytes = file_bytes(l->path);
    IB_FAIL_IF(l->set.memory_limit && bytes > l->set.memory_limit, err, IB_ERR_DEVICE_OOM,
               "llama: out of memory loading %s: its %.1f MiB exceed memory_limit_mb=%llu", l->path,
               (double)bytes / 1048576.0, (unsigned long long)(l->set.memory_limit >> 20));
    struct llama_model_params p = l->api->model_default_params();
    static ggml_backend_dev_t no_devices[1] = { NULL };
    if (l->device == IB_DEVICE_CPU) p.devices = no_devices; /* an empty list: no GPU at all */
    p.n_gpu_layers = l->device == IB_DEVICE_CPU ? 0 : l->set.n_gpu_layers;
    /* One GPU, the one asked: llama.cpp's default splits the layers over
     * every GPU of the host, which is another measurement. */
    p.split_mode = LLAMA_SPLIT_MODE_NONE;
    p.main_gpu = l->device_id;
    ib__llama_log log;
    ib__llama_log_begin(l->api, &log);
    l->model = l->api->model_load_from_file(l->path, p);
    ib__llama_log_end(l->api);
    if (!l->model) {
        const char *why = log.first_error[0] ? log.first_error : "llama_model_load_from_file failed";
        IB_FAIL_IF(log.out_of_memory, err, IB_ERR_DEVICE_OOM, "llama: out of memory loading %s: %s", l->path,
                   why);
        return ib__fail(err, IB_ERR_INVALID_ARG, "llama: cannot load %s: %s", l->path, why);
    }
    l->offloaded = log.offloaded > 0 ? log.offloaded : 0;
    l->n_vocab = l->api->vocab_n_tokens(l->api->model_get_vocab(l->model));
    IB_FAIL_IF(l->n_vocab <= 0, err, IB_ERR_INVALID_ARG, "llama: %s has no vocabulary size", l->path);
    return IB_OK;
}

static void free_model(llama_gen *l)
{
    free_context(l);
    if (l->model) l->api->model_free(l->model);
    l->model = NULL;
}

/* --- the ops --------------------------------------------------------------------- */

static llama_gen *impl(ib__gen *g) { return g->impl; }

static void fill_info(ib__gen *g);

static ib_status need_context(const llama_gen *l, ib_error *err)
{
    IB_FAIL_IF(!l->ctx, err, IB_ERR_INVALID_ARG,
               "llama: no context (the last set_sequences did not fit): set the sequences again");
    return IB_OK;
}

static ib_status op_clear(ib__gen *g, ib_error *err)
{
    llama_gen *l = impl(g);
    IB_TRY(need_context(l, err));
    l->api->memory_clear(l->api->get_memory(l->ctx), false);
    l->last_outputs = 0;
    l->last_was_prefill = false;
    l->last_was_mixed = false;
    return IB_OK;
}

static ib_status check_span(const llama_gen *l, int32_t seq, int32_t pos, int32_t n, ib_error *err)
{
    IB_FAIL_IF(seq < 0 || seq >= l->n_seqs, err, IB_ERR_INVALID_ARG,
               "llama: sequence %d, but the context holds %d", seq, l->n_seqs);
    uint32_t per_seq = l->api->n_ctx(l->ctx) / l->api->n_seq_max(l->ctx);
    IB_FAIL_IF(pos < 0 || n < 1 || (int64_t)pos + n > (int64_t)per_seq, err, IB_ERR_INVALID_ARG,
               "llama: positions %d..%lld are beyond the context of a sequence (%u tokens)", pos,
               (long long)pos + n - 1, per_seq);
    return IB_OK;
}

static ib_status op_prefill(ib__gen *g, int32_t seq, int32_t pos, int32_t n_tokens, ib_error *err)
{
    llama_gen *l = impl(g);
    IB_TRY(need_context(l, err));
    IB_TRY(check_span(l, seq, pos, n_tokens, err));
    for (int32_t done = 0; done < n_tokens;) {
        int32_t n = n_tokens - done < l->cap ? n_tokens - done : l->cap;
        for (int32_t i = 0; i < n; i++) {
            int32_t p = pos + done + i;
            l->batch.token[i] = token_at(l, (uint32_t)seq, p);
            l->batch.pos[i] = p;
            l->seq_ids[i] = seq;
            l->batch.logits[i] = done + i == n_tokens - 1;
        }
        IB_TRY(decode(l, n, "prompt", err));
        done += n;
    }
    l->last_outputs = 1;
    l->last_was_prefill = true;
    l->last_was_mixed = false;
    l->last_prefill_seq = seq;
    return IB_OK;
}

static ib_status op_step(ib__gen *g, int32_t n_seqs, int32_t pos, ib_error *err)
{
    llama_gen *l = impl(g);
    IB_TRY(need_context(l, err));
    IB_FAIL_IF(n_seqs < 1 || n_seqs > l->n_seqs, err, IB_ERR_INVALID_ARG,
               "llama: a step of %d sequences, but the context holds %d", n_seqs, l->n_seqs);
    IB_TRY(check_span(l, 0, pos, 1, err));
    for (int32_t s = 0; s < n_seqs; s++) {
        l->batch.token[s] = l->next[s] >= 0 ? l->next[s] : token_at(l, (uint32_t)s, pos);
        l->next[s] = -1;
        l->batch.pos[s] = pos;
        l->seq_ids[s] = s;
        l->batch.logits[s] = 1;
    }
    IB_TRY(decode(l, n_seqs, "decode step", err));
    l->last_outputs = n_seqs;
    l->last_was_prefill = false;
    l->last_was_mixed = false;
    return IB_OK;
}

/* The entries of a mixed batch laid out in l->batch by increasing
 * sequence id, whatever their order; *n the tokens. Over a cache of one
 * stream a sequence (kv_unified off) llama.cpp puts in one ubatch only
 * sequences of consecutive ids listed in increasing order (split_equal's
 * sequential rule), and computes each ubatch as a graph of its own: in the
 * engine's admission order a step of 8 decode tokens could take several
 * graphs where llama-server's, laid out by slot, takes one per run of
 * consecutive ids. Each entry is checked as a prefill's span is. */
static ib_status fill_mixed(llama_gen *l, const ib__gen_batch_entry *entries, size_t n_entries, int32_t *n,
                            ib_error *err)
{
    ib_status st = IB_OK;
    for (size_t k = 0; k < n_entries && st == IB_OK; k++) {
        const ib__gen_batch_entry *e = &entries[k];
        st = check_span(l, e->seq, e->pos, e->n_tokens, err);
        if (st == IB_OK && l->entry_of[e->seq] >= 0)
            st = ib__fail(err, IB_ERR_INVALID_ARG, "llama: sequence %d twice in a mixed batch", e->seq);
        if (st == IB_OK) l->entry_of[e->seq] = (int32_t)k;
    }
    *n = 0;
    for (int32_t s = 0; s < l->n_seqs; s++) {
        int32_t k = l->entry_of[s];
        l->entry_of[s] = l->output_at[s] = -1;
        if (k < 0 || st != IB_OK) continue;
        const ib__gen_batch_entry *e = &entries[k];
        if (*n + (int64_t)e->n_tokens > l->cap)
            st = ib__fail(err, IB_ERR_INVALID_ARG, "llama: a mixed batch of more than %d tokens (n_batch)",
                          l->cap);
        for (int32_t i = 0; i < e->n_tokens && st == IB_OK; i++, (*n)++) {
            bool sampled = e->n_tokens == 1 && l->next[e->seq] >= 0;
            int32_t p = e->pos + i;
            l->batch.token[*n] =
                sampled ? l->next[e->seq] : token_at(l, p < e->shared ? SHARED_PREFIX_STREAM : e->request, p);
            l->batch.pos[*n] = e->pos + i;
            l->seq_ids[*n] = e->seq;
            l->batch.logits[*n] = e->logits && i == e->n_tokens - 1;
            if (l->batch.logits[*n]) l->output_at[e->seq] = *n;
        }
        if (st == IB_OK && e->n_tokens == 1) l->next[e->seq] = -1;
    }
    return st;
}

/* One llama_decode of several sequences' tokens: a continuous-batching
 * server's step. The outputs are read by batch index (the probe), not by
 * sample, which knows a prompt's or a step's layout only. */
static ib_status op_decode_batch(ib__gen *g, const ib__gen_batch_entry *entries, size_t n_entries,
                                 ib_error *err)
{
    llama_gen *l = impl(g);
    IB_TRY(need_context(l, err));
    IB_FAIL_IF(n_entries < 1, err, IB_ERR_INVALID_ARG, "llama: an empty mixed batch");
    int32_t n;
    IB_TRY(fill_mixed(l, entries, n_entries, &n, err));
    IB_TRY(decode(l, n, "mixed batch", err));
    l->last_outputs = 0;
    l->last_was_prefill = false;
    l->last_was_mixed = true;
    return IB_OK;
}

static ib_status op_remove_sequence(ib__gen *g, int32_t seq, int32_t from_pos, ib_error *err)
{
    llama_gen *l = impl(g);
    IB_TRY(need_context(l, err));
    IB_FAIL_IF(seq < 0 || seq >= l->n_seqs || from_pos < 0, err, IB_ERR_INVALID_ARG,
               "llama: removing sequence %d from %d, but the context holds %d", seq, from_pos, l->n_seqs);
    /* A whole sequence's removal never fails (llama.h); a part's does
     * where the cache cannot keep a prefix (a recurrent model's). */
    bool removed = l->api->memory_seq_rm(l->api->get_memory(l->ctx), seq, from_pos, -1);
    IB_FAIL_IF(
        !removed, err, IB_ERR_UNSUPPORTED,
        "llama: this model's cache cannot drop part of a sequence: no prefix cache (--prefix-cache off)");
    l->next[seq] = -1;
    return IB_OK;
}

static ib_status op_synchronize(ib__gen *g, ib_error *err)
{
    llama_gen *l = impl(g);
    IB_TRY(need_context(l, err));
    l->api->synchronize(l->ctx);
    return IB_OK;
}

static ib_status op_fork(ib__gen *g, int32_t n_seqs, int32_t n_pos, ib_error *err)
{
    llama_gen *l = impl(g);
    IB_TRY(need_context(l, err));
    IB_FAIL_IF(n_seqs < 1 || n_seqs > l->n_seqs, err, IB_ERR_INVALID_ARG,
               "llama: fork to %d sequences, but the context holds %d", n_seqs, l->n_seqs);
    llama_memory_t mem = l->api->get_memory(l->ctx);
    /* Sequences of their own caches are copied whole (llama.cpp copies
     * only full caches between streams): sequence 0 must hold exactly
     * positions 0..n_pos-1. */
    llama_pos lo = l->api->memory_seq_pos_min(mem, 0), hi = l->api->memory_seq_pos_max(mem, 0);
    IB_FAIL_IF(n_pos < 1 || lo != 0 || hi != n_pos - 1, err, IB_ERR_INVALID_ARG,
               "llama: fork of positions 0..%d, but sequence 0 holds %d..%d", n_pos - 1, lo, hi);
    for (int32_t s = 1; s < n_seqs; s++) l->api->memory_seq_cp(mem, 0, s, -1, -1);
    return IB_OK;
}

static ib_status op_rewind(ib__gen *g, int32_t n_seqs, int32_t n_pos, ib_error *err)
{
    llama_gen *l = impl(g);
    IB_TRY(need_context(l, err));
    IB_FAIL_IF(n_seqs < 1 || n_seqs > l->n_seqs || n_pos < 0, err, IB_ERR_INVALID_ARG,
               "llama: rewind of %d sequences to position %d, but the context holds %d", n_seqs, n_pos,
               l->n_seqs);
    llama_memory_t mem = l->api->get_memory(l->ctx);
    for (int32_t s = 0; s < n_seqs; s++)
        IB_FAIL_IF(!l->api->memory_seq_rm(mem, s, n_pos, -1), err, IB_ERR_RUNTIME,
                   "llama: positions %d and after of sequence %d could not be removed", n_pos, s);
    return IB_OK;
}

static ib_status op_set_sequences(ib__gen *g, int32_t n_seqs, int32_t ctx_per_seq, ib_error *err)
{
    llama_gen *l = impl(g);
    size_t most = l->api->max_parallel_sequences();
    IB_FAIL_IF(n_seqs < 1 || ctx_per_seq < 1, err, IB_ERR_INVALID_ARG,
               "llama: %d sequences of %d tokens: both must be at least 1", n_seqs, ctx_per_seq);
    IB_FAIL_IF((size_t)n_seqs > most, err, IB_ERR_UNSUPPORTED,
               "llama: %d sequences, more than llama.cpp decodes together (%zu)", n_seqs, most);
    IB_FAIL_IF(!l->model, err, IB_ERR_INVALID_ARG, "llama: no model (the last reopen failed)");
    ib_status st = create_context(l, n_seqs, ctx_per_seq, err);
    if (st == IB_OK) fill_info(g);
    return st;
}

/* The index llama_get_logits_ith reads sequence seq's output of the last
 * decode at: a prompt's one output is the last (-1), a step's are in
 * sequence order, a mixed batch's where fill_mixed laid them out;
 * NO_OUTPUT when that decode gave seq none. */
#define NO_OUTPUT (-2)
static int32_t output_of(const llama_gen *l, int32_t seq)
{
    if (l->last_was_prefill) return seq == l->last_prefill_seq ? -1 : NO_OUTPUT;
    if (seq < 0 || seq >= l->n_seqs) return NO_OUTPUT;
    if (l->last_was_mixed) return l->output_at[seq] >= 0 ? l->output_at[seq] : NO_OUTPUT;
    return seq < l->last_outputs ? seq : NO_OUTPUT;
}

static ib_status op_sample(ib__gen *g, int32_t seq, ib_error *err)
{
    llama_gen *l = impl(g);
    IB_TRY(need_context(l, err));
    int32_t at = output_of(l, seq);
    IB_FAIL_IF(at == NO_OUTPUT, err, IB_ERR_INVALID_ARG, "llama: no logits of sequence %d to sample from",
               seq);
    float *logits = l->api->get_logits_ith(l->ctx, at);
    IB_FAIL_IF(!logits, err, IB_ERR_RUNTIME, "llama: llama_get_logits_ith gave no logits of sequence %d",
               seq);
    /* The largest value kept in a register: comparing with logits[best]
     * reloads it each time, six times slower over 128,256 logits (458
     * against 76 us on the development machine's EPYC), half of a 2.6 ms
     * step on the H100 at three sequences. The first index of the
     * largest, as llama.cpp's greedy sampler. */
    int32_t best = 0;
    float largest = logits[0];
    for (int32_t i = 1; i < l->n_vocab; i++)
        if (logits[i] > largest) largest = logits[i], best = i;
    l->next[seq] = best;
    return IB_OK;
}

static ib_status op_reopen(ib__gen *g, ib_error *err)
{
    llama_gen *l = impl(g);
    free_model(l);
    IB_TRY(load_model(l, err));
    IB_TRY(create_context(l, l->n_seqs, l->ctx_per_seq, err));
    fill_info(g);
    return IB_OK;
}

static ib_status op_set_threads(ib__gen *g, int32_t n_threads, ib_error *err)
{
    llama_gen *l = impl(g);
    IB_TRY(need_context(l, err));
    IB_FAIL_IF(n_threads < 1, err, IB_ERR_INVALID_ARG, "llama: %d threads", n_threads);
    /* A pool of exactly the context's threads (llama.cpp's common.cpp:
     * each pool matches its n_threads): a new one. */
    IB_TRY(ib__llama_threadpool_attach(l->api, l->ctx, n_threads, &l->pools, err));
    l->api->set_n_threads(l->ctx, n_threads, n_threads);
    l->threads = n_threads;
    fill_info(g);
    return IB_OK;
}

static void op_destroy(ib__gen *g)
{
    llama_gen *l = impl(g);
    if (l) {
        free_model(l);
        free_batch(l);
        free(l);
    }
    free(g);
}

static const ib__gen_ops llama_ops = {
    .version = IB__GEN_OPS_VERSION,
    .clear = op_clear,
    .prefill = op_prefill,
    .step = op_step,
    .synchronize = op_synchronize,
    .fork = op_fork,
    .set_sequences = op_set_sequences,
    .sample = op_sample,
    .reopen = op_reopen,
    .set_threads = op_set_threads,
    .rewind = op_rewind,
    .decode_batch = op_decode_batch,
    .remove_sequence = op_remove_sequence,
    .destroy = op_destroy,
};

/* --- the info ------------------------------------------------------------------ */

/* llama_ftype_name's words as llama-quantize spells the type: "Q4_K - Medium" is Q4_K_M. */
static void weights_name(const char *said, char *out, size_t cap)
{
    static const char *const suffix[][2] = { { " - Small", "_S" },
                                             { " - Medium", "_M" },
                                             { " - Large", "_L" } };
    snprintf(out, cap, "%s", said);
    for (size_t i = 0; i < 3; i++) {
        char *at = strstr(out, suffix[i][0]);
        if (at) snprintf(at, cap - (size_t)(at - out), "%s", suffix[i][1]);
    }
}

static void fill_options(const llama_gen *l, ib_option_list *o)
{
    char v[64];
    *o = (ib_option_list){ 0 };
    ib_option_list_set(o, "library", l->api->dir);
    snprintf(v, sizeof v, "%d", l->device == IB_DEVICE_CPU ? 0 : l->set.n_gpu_layers);
    ib_option_list_set(o, "n_gpu_layers", l->set.n_gpu_layers < 0 && l->device != IB_DEVICE_CPU ? "all" : v);
    ib_option_list_set(o, "flash_attn", l->set.flash_attn < 0 ? "auto" : l->set.flash_attn ? "on" : "off");
    ib_option_list_set(o, "kv_type", l->set.kv->name);
    ib_option_list_set(o, "kv_unified", l->set.kv_unified ? "on" : "off");
    snprintf(v, sizeof v, "%u", l->ctx ? l->api->n_batch(l->ctx) : 0u);
    ib_option_list_set(o, "n_batch", v);
    snprintf(v, sizeof v, "%u", l->ctx ? l->api->n_ubatch(l->ctx) : 0u);
    ib_option_list_set(o, "n_ubatch", v);
    snprintf(v, sizeof v, "%d", l->threads);
    ib_option_list_set(o, "threads", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)(l->kv_limit >> 20));
    ib_option_list_set(o, "memory_limit_mb", v);
}

static void fill_info(ib__gen *g)
{
    llama_gen *l = impl(g);
    const ib__llama_api *api = l->api;
    ib__gen_info *in = &g->info;
    char buf[128];
    api->model_meta_val_str(l->model, "general.architecture", in->arch, sizeof in->arch);
    api->model_desc(l->model, in->model_type, sizeof in->model_type);
    weights_name(api->ftype_name(api->model_ftype(l->model)), buf, sizeof buf);
    ib__strlcpy(in->weights_type, buf, sizeof in->weights_type);
    in->n_params = api->model_n_params(l->model);
    in->model_bytes = api->model_size(l->model);
    in->n_layers = api->model_n_layer(l->model);
    in->n_embd = api->model_n_embd(l->model);
    in->n_vocab = l->n_vocab;
    in->n_ctx_train = api->model_n_ctx_train(l->model);
    in->n_gpu_layers = l->offloaded;
    in->device = l->offloaded > 0 ? IB_DEVICE_CUDA : IB_DEVICE_CPU;
    in->device_id = in->device == IB_DEVICE_CUDA ? l->device_id : 0;
    in->n_ctx = l->ctx ? (int32_t)api->n_ctx(l->ctx) : 0;
    in->n_seq_max = l->ctx ? (int32_t)api->n_seq_max(l->ctx) : 0;
    in->n_batch = l->ctx ? (int32_t)api->n_batch(l->ctx) : 0;
    in->n_ubatch = l->ctx ? (int32_t)api->n_ubatch(l->ctx) : 0;
    in->flash_attn = l->flash_attn == 1;
    snprintf(in->kv_type, sizeof in->kv_type, "%s", l->set.kv->name);
    in->kv_bytes = l->ctx ? l->kv_bytes : 0;
    in->n_threads = l->ctx ? api->n_threads(l->ctx) : l->threads;
    in->n_threads_default = api->context_default_params().n_threads;
    in->n_cpus_allowed = ib__cpus_allowed();
    snprintf(in->runtime_version, sizeof in->runtime_version, "llama.cpp %.40s", api->version);
    ib__strlcpy(in->runtime_library, api->library, sizeof in->runtime_library);
    fill_options(l, &in->options);
}

/* --- open ------------------------------------------------------------------------- */

static ib_status choose_device(llama_gen *l, ib_device_kind asked, int device_id, ib_error *err)
{
    IB_FAIL_IF(asked == IB_DEVICE_CUDA && !l->api->has_gpu, err, IB_ERR_NO_DEVICE,
               "llama: no GPU: the llama.cpp library in %s has no CUDA backend or sees no GPU", l->api->dir);
    l->device = asked == IB_DEVICE_AUTO ? (l->api->has_gpu ? IB_DEVICE_CUDA : IB_DEVICE_CPU) : asked;
    IB_FAIL_IF(l->device == IB_DEVICE_CUDA && (device_id < 0 || device_id >= l->api->n_gpus), err,
               IB_ERR_NO_DEVICE, "llama: no GPU %d: llama.cpp sees %d", device_id, l->api->n_gpus);
    l->device_id = l->device == IB_DEVICE_CUDA ? device_id : 0;
    return IB_OK;
}

/* llama.cpp refuses a quantized V cache without flash attention: said
 * here as a bad pair of options, not later as a context that cannot be
 * created (which the sequence search would read as out of memory). */
static ib_status check_kv_type(const llama_gen *l, ib_error *err)
{
    bool quantized = l->set.kv->type == GGML_TYPE_Q8_0 || l->set.kv->type == GGML_TYPE_Q4_0;
    IB_FAIL_IF(quantized && l->set.flash_attn == 0, err, IB_ERR_INVALID_ARG,
               "llama: kv_type=%s needs flash attention (flash_attn=on or auto), not flash_attn=off",
               l->set.kv->name);
    return IB_OK;
}

/* l->path: the file given, or the zoo's cached file (note: one found
 * damaged and made again). */
static ib_status resolve_model(llama_gen *l, const ib__gen_open_args *a, char *note, size_t note_cap,
                               ib_error *err)
{
    IB_FAIL_IF(!a->model || !*a->model, err, IB_ERR_INVALID_ARG,
               "llama: no model given (a GGUF file or zoo:NAME)");
    if (strncmp(a->model, "zoo:", 4) != 0) {
        IB_FAIL_IF(strlen(a->model) >= sizeof l->path, err, IB_ERR_INVALID_ARG, "llama: model path too long");
        snprintf(l->path, sizeof l->path, "%s", a->model);
        return IB_OK;
    }
    return ib__llama_zoo_file(l->api, a->model + 4, a->cache_dir, l->threads, l->path, sizeof l->path, note,
                              note_cap, err);
}

static ib_status open_into(ib__gen *g, llama_gen *l, const ib__gen_open_args *a, ib_error *err)
{
    l->set = (settings){ .n_gpu_layers = -1, .flash_attn = -1, .kv = &kv_choices[0] };
    for (size_t i = 0; i < a->n_options; i++) IB_TRY(parse_option(&a->options[i], l, err));
    IB_TRY(ib__llama_load(l->set.library, &l->api, err));
    IB_TRY(choose_device(l, a->device, a->device_id, err));
    l->kv_limit = l->set.memory_limit          ? l->set.memory_limit
                  : l->device == IB_DEVICE_CPU ? ib__host_memory_bytes() / 2
                                               : 0;
    IB_TRY(check_kv_type(l, err));
    l->threads = l->set.threads ? l->set.threads : ib__cpus_allowed();
    l->seed = a->seed;
    IB_TRY(resolve_model(l, a, g->open_note, sizeof g->open_note, err));
    IB_TRY(load_model(l, err));
    int32_t n_seqs = a->n_seqs > 0 ? a->n_seqs : 1;
    int32_t per_seq = a->ctx_per_seq > 0 ? a->ctx_per_seq : 512;
    snprintf(g->info.model, sizeof g->info.model, "%s", a->model);
    return op_set_sequences(g, n_seqs, per_seq, err);
}

ib_status ib__backend_llama_gen_open(const ib__gen_open_args *a, ib__gen **out, ib_error *err)
{
    *out = NULL;
    ib__gen *g = calloc(1, sizeof *g);
    llama_gen *l = calloc(1, sizeof *l);
    if (!g || !l) {
        free(g);
        free(l);
        return ib__fail(err, IB_ERR_NO_MEMORY, "llama: out of host memory");
    }
    g->ops = &llama_ops;
    g->impl = l;
    g->clock = ib__host_clock();
    ib_status st = open_into(g, l, a, err);
    if (st != IB_OK) {
        op_destroy(g);
        return st;
    }
    *out = g;
    return IB_OK;
}

/* --- probes (llama_probe.h) ------------------------------------------------- */

void ib__llama_probe_positions(ib__gen *g, int32_t seq, int32_t *lo, int32_t *hi)
{
    llama_gen *l = impl(g);
    llama_memory_t mem = l->api->get_memory(l->ctx);
    *lo = l->api->memory_seq_pos_min(mem, seq);
    *hi = l->api->memory_seq_pos_max(mem, seq);
}

const float *ib__llama_probe_logits(ib__gen *g, int32_t i)
{
    llama_gen *l = impl(g);
    return l->last_outputs || l->last_was_mixed ? l->api->get_logits_ith(l->ctx, i) : NULL;
}

int32_t ib__llama_probe_next(ib__gen *g, int32_t seq) { return impl(g)->next[seq]; }

void ib__llama_probe_set_next(ib__gen *g, int32_t seq, int32_t token) { impl(g)->next[seq] = token; }

int32_t ib__llama_probe_threads_batch(ib__gen *g) { return impl(g)->api->n_threads_batch(impl(g)->ctx); }

uint64_t ib__llama_probe_compute_bytes(ib__gen *g) { return impl(g)->compute_bytes; }

struct llama_model *ib__llama_probe_model(ib__gen *g) { return impl(g)->model; }

int32_t ib__llama_probe_batch_token(ib__gen *g, int32_t i) { return impl(g)->batch.token[i]; }
