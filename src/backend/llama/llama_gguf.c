/* The zoo's generative models as GGUF files (docs/backend-llama.md): the
 * zoo describes them (src/zoo/lm.c: keys, tensors, random weights), this
 * file writes them through ggml's own GGUF writer (gguf.h, in the
 * libggml-base the backend loaded) and quantizes them with llama.cpp's
 * llama_model_quantize. The files live in a cache folder the program
 * chooses: keyed by name, type and seed, written to a temporary file and
 * renamed, so that a reader never sees half a file and a second use reads
 * the first's. */
#include "backend/llama/llama_backend.h"
#include "zoo/lm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* The weight types offered: float16 as written, the others quantized from
 * it by llama.cpp (the names llama-quantize takes, lower case). */
typedef struct weight_type {
    const char *name;
    enum llama_ftype ftype;
} weight_type;

static const weight_type weight_types[] = {
    { "f16", LLAMA_FTYPE_MOSTLY_F16 },       { "q8_0", LLAMA_FTYPE_MOSTLY_Q8_0 },
    { "q4_0", LLAMA_FTYPE_MOSTLY_Q4_0 },     { "q4_k_m", LLAMA_FTYPE_MOSTLY_Q4_K_M },
    { "q5_k_m", LLAMA_FTYPE_MOSTLY_Q5_K_M }, { "q6_k", LLAMA_FTYPE_MOSTLY_Q6_K },
};
#define N_WEIGHT_TYPES (sizeof weight_types / sizeof weight_types[0])

static const weight_type *find_type(const char *name)
{
    for (size_t i = 0; i < N_WEIGHT_TYPES; i++)
        if (!strcmp(weight_types[i].name, name)) return &weight_types[i];
    return NULL;
}

/* The tokenizer the zoo's files have had since they carry a vocabulary
 * (lm.h): a cached file with another ("none": the dummy tokens of an
 * earlier inferbench, which llama-server cannot turn into text) is stale. */
#define ZOO_TOKENIZER "llama"

static bool has_zoo_vocabulary(const ib__llama_api *api, const struct gguf_context *g)
{
    int64_t key = api->gguf_find_key(g, "tokenizer.ggml.model");
    return key >= 0 && api->gguf_get_kv_type(g, key) == GGUF_TYPE_STRING &&
           !strcmp(api->gguf_get_val_str(g, key), ZOO_TOKENIZER);
}

/* Why the cached file at path cannot be used, as the rest of the sentence
 * "the zoo's cached PATH ...", into why[cap]: false when it can. Its
 * header is read (gguf, no tensor data) and its size checked against the
 * end of its last tensor, so a truncated file (until issue 35 the export
 * was a hard link to the cache: truncating the export truncated the
 * cache) is found before llama.cpp refuses it mid-load; a file of an
 * earlier inferbench, without the vocabulary, is stale. */
static bool unusable(const ib__llama_api *api, const char *path, const struct stat *st, char *why, size_t cap)
{
    struct gguf_init_params p = { .no_alloc = true, .ctx = NULL };
    ib__llama_log log;
    ib__llama_log_begin(api, &log); /* gguf's complaint is captured, not printed */
    struct gguf_context *g = api->gguf_init_from_file(path, p);
    ib__llama_log_end(api);
    if (!g) {
        snprintf(why, cap, "was damaged (%lld bytes, not a GGUF header gguf reads)", (long long)st->st_size);
        return true;
    }
    unsigned long long data = api->gguf_get_data_offset(g), end = data;
    for (int64_t i = 0; i < api->gguf_get_n_tensors(g); i++) {
        unsigned long long tensor_end =
            data + api->gguf_get_tensor_offset(g, i) + api->gguf_get_tensor_size(g, i);
        if (tensor_end > end) end = tensor_end;
    }
    bool stale = !has_zoo_vocabulary(api, g);
    api->gguf_free(g);
    if ((unsigned long long)st->st_size < end) {
        snprintf(why, cap, "was damaged (%lld bytes where its tensors end at %llu)", (long long)st->st_size,
                 end);
        return true;
    }
    if (stale) snprintf(why, cap, "had no vocabulary (an earlier inferbench's file)");
    return stale;
}

/* The vocabulary (lm.h) as llama.cpp's llama_vocab reads a SentencePiece
 * one: tokens, scores and types, and which are begin, end and unknown.
 * False when out of memory. */
static bool set_vocabulary(const ib__llama_api *api, struct gguf_context *g, const ib__lm_arch *a)
{
    size_t n = (size_t)a->n_vocab;
    ib__lm_token *tokens = malloc(n * sizeof *tokens);
    const char **pieces = malloc(n * sizeof *pieces);
    float *scores = malloc(n * sizeof *scores);
    int32_t *types = malloc(n * sizeof *types);
    bool ok = tokens && pieces && scores && types;
    for (size_t i = 0; ok && i < n; i++) {
        ib__lm_token_at(a, (int32_t)i, &tokens[i]);
        pieces[i] = tokens[i].piece;
        scores[i] = tokens[i].score;
        types[i] = tokens[i].type;
    }
    if (ok) {
        api->gguf_set_val_str(g, "tokenizer.ggml.model", ZOO_TOKENIZER);
        api->gguf_set_arr_str(g, "tokenizer.ggml.tokens", pieces, n);
        api->gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, n);
        api->gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, n);
        api->gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", IB__LM_TOKEN_BOS);
        api->gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", IB__LM_TOKEN_EOS);
        api->gguf_set_val_u32(g, "tokenizer.ggml.unknown_token_id", IB__LM_TOKEN_UNK);
    }
    free(tokens);
    free(pieces);
    free(scores);
    free(types);
    return ok;
}

/* The metadata llama.cpp's llama architecture reads (llama-arch.cpp's
 * keys), the vocabulary apart. */
static void set_keys(const ib__llama_api *api, struct gguf_context *g, const ib__lm_arch *a)
{
    api->gguf_set_val_str(g, "general.architecture", "llama");
    api->gguf_set_val_str(g, "general.name", a->name);
    api->gguf_set_val_u32(g, "general.file_type", LLAMA_FTYPE_MOSTLY_F16);
    api->gguf_set_val_u32(g, "llama.context_length", (uint32_t)a->n_ctx_train);
    api->gguf_set_val_u32(g, "llama.embedding_length", (uint32_t)a->n_embd);
    api->gguf_set_val_u32(g, "llama.block_count", (uint32_t)a->n_layer);
    api->gguf_set_val_u32(g, "llama.feed_forward_length", (uint32_t)a->n_ff);
    api->gguf_set_val_u32(g, "llama.attention.head_count", (uint32_t)a->n_head);
    api->gguf_set_val_u32(g, "llama.attention.head_count_kv", (uint32_t)a->n_head_kv);
    api->gguf_set_val_f32(g, "llama.attention.layer_norm_rms_epsilon", a->rms_eps);
    api->gguf_set_val_f32(g, "llama.rope.freq_base", a->rope_freq_base);
    api->gguf_set_val_u32(g, "llama.rope.dimension_count", (uint32_t)(a->n_embd / a->n_head));
    api->gguf_set_val_u32(g, "llama.vocab_size", (uint32_t)a->n_vocab);
}

static bool pad_to(FILE *f, long long *at, long long to)
{
    static const char zeros[64];
    while (*at < to) {
        size_t n = (size_t)(to - *at < 64 ? to - *at : 64);
        if (fwrite(zeros, 1, n, f) != n) return false;
        *at += (long long)n;
    }
    return true;
}

/* Tensor i's data, generated and written in pieces (a 1B model's 3 GB
 * never sit in memory at once). */
static bool write_tensor(const ib__llama_api *api, FILE *f, const ib__lm_arch *a, size_t i, float *vals,
                         ggml_fp16_t *halves, size_t chunk)
{
    ib__lm_tensor t;
    ib__lm_tensor_at(a, i, &t);
    int64_t n = ib__lm_elements(&t);
    for (int64_t first = 0; first < n; first += (int64_t)chunk) {
        size_t k = (size_t)(n - first < (int64_t)chunk ? n - first : (int64_t)chunk);
        ib__lm_values(a, i, IB__LM_SEED, first, k, vals);
        if (t.norm) {
            if (fwrite(vals, sizeof *vals, k, f) != k) return false;
        } else {
            api->fp32_to_fp16_row(vals, halves, (int64_t)k);
            if (fwrite(halves, sizeof *halves, k, f) != k) return false;
        }
    }
    return true;
}

/* The header through gguf (keys, tensor infos, offsets), then each
 * tensor's data at the offset gguf gave it. */
static bool write_file(const ib__llama_api *api, FILE *f, const ib__lm_arch *a, struct gguf_context *g)
{
    size_t meta = api->gguf_get_meta_size(g);
    void *bytes = malloc(meta);
    if (!bytes) return false;
    api->gguf_get_meta_data(g, bytes);
    bool ok = fwrite(bytes, 1, meta, f) == meta;
    free(bytes);
    enum { CHUNK = 1 << 20 };
    float *vals = malloc(CHUNK * sizeof *vals);
    ggml_fp16_t *halves = malloc(CHUNK * sizeof *halves);
    long long at = (long long)meta, data = (long long)api->gguf_get_data_offset(g);
    int64_t n = api->gguf_get_n_tensors(g);
    ok = ok && vals && halves;
    for (int64_t i = 0; ok && i < n; i++) {
        ok = pad_to(f, &at, data + (long long)api->gguf_get_tensor_offset(g, i)) &&
             write_tensor(api, f, a, (size_t)i, vals, halves, CHUNK);
        at += (long long)api->gguf_get_tensor_size(g, i);
    }
    /* The last tensor padded as gguf pads each (GGUF_DEFAULT_ALIGNMENT). */
    ok = ok && pad_to(f, &at, (at + 31) / 32 * 32);
    free(vals);
    free(halves);
    return ok;
}

static ib_status write_f16(const ib__llama_api *api, const ib__lm_arch *a, const char *tmp, ib_error *err)
{
    size_t n = ib__lm_n_tensors(a);
    struct ggml_init_params ip = { .mem_size = (n + 1) * api->tensor_overhead(),
                                   .mem_buffer = NULL,
                                   .no_alloc = true };
    struct ggml_context *ctx = api->ggml_init(ip);
    struct gguf_context *g = api->gguf_init_empty();
    bool described = ctx && g;
    if (described) set_keys(api, g, a);
    described = described && set_vocabulary(api, g, a);
    if (!described) {
        if (g) api->gguf_free(g);
        if (ctx) api->ggml_free(ctx);
        return ib__fail(err, IB_ERR_NO_MEMORY, "zoo: out of host memory describing %s", a->name);
    }
    for (size_t i = 0; i < n; i++) {
        ib__lm_tensor t;
        ib__lm_tensor_at(a, i, &t);
        struct ggml_tensor *x = api->new_tensor(ctx, t.norm ? GGML_TYPE_F32 : GGML_TYPE_F16, t.n_dims, t.ne);
        api->set_name(x, t.name);
        api->gguf_add_tensor(g, x);
    }
    FILE *f = fopen(tmp, "wb");
    bool ok = f && write_file(api, f, a, g);
    int saved = errno;
    ok = f && fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
    if (f) ok = fclose(f) == 0 && ok;
    api->gguf_free(g);
    api->ggml_free(ctx);
    if (!ok) unlink(tmp);
    IB_FAIL_IF(!ok, err, IB_ERR_IO, "zoo: cannot write %s: %s", tmp, strerror(saved ? saved : errno));
    return IB_OK;
}

static ib_status quantize(const ib__llama_api *api, const char *f16, const weight_type *t, int32_t threads,
                          const char *tmp, ib_error *err)
{
    llama_model_quantize_params p = api->model_quantize_default_params();
    p.nthread = threads;
    p.ftype = t->ftype;
    ib__llama_log log;
    ib__llama_log_begin(api, &log);
    uint32_t rc = api->model_quantize(f16, tmp, &p);
    ib__llama_log_end(api);
    if (rc != 0) unlink(tmp);
    IB_FAIL_IF(rc != 0, err, IB_ERR_UNSUPPORTED, "zoo: llama.cpp cannot quantize to %s: %s", t->name,
               log.first_error[0] ? log.first_error : "it failed");
    return IB_OK;
}

/* Writes path through a temporary file beside it: the f16 file written,
 * or f16 quantized to t. */
static ib_status make(const ib__llama_api *api, const ib__lm_arch *a, const weight_type *t, const char *f16,
                      int32_t threads, const char *path, ib_error *err)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    ib_status st = t->ftype == LLAMA_FTYPE_MOSTLY_F16 ? write_f16(api, a, tmp, err)
                                                      : quantize(api, f16, t, threads, tmp, err);
    if (st != IB_OK) return st;
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return ib__fail(err, IB_ERR_IO, "zoo: cannot rename %s to %s: %s", tmp, path, strerror(e));
    }
    return IB_OK;
}

/* path in the cache, made (f16 written, or quantized from f16) when it is
 * not there or cannot be used; one that could not is added to note. */
static ib_status ensure(const ib__llama_api *api, const ib__lm_arch *a, const weight_type *t, const char *f16,
                        int32_t threads, const char *path, char *note, size_t note_cap, ib_error *err)
{
    struct stat st;
    char why[128];
    bool present = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    if (present && !unusable(api, path, &st, why, sizeof why)) return IB_OK;
    IB_TRY(make(api, a, t, f16, threads, path, err));
    size_t used = note ? strlen(note) : 0;
    if (present && note && used < note_cap)
        snprintf(note + used, note_cap - used, "%sthe zoo's cached %s %s: made again", used ? "; " : "", path,
                 why);
    return IB_OK;
}

static void known_types(char *out, size_t cap)
{
    size_t used = 0;
    for (size_t i = 0; i < N_WEIGHT_TYPES && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? ", " : "", weight_types[i].name);
}

ib_status ib__llama_zoo_file(const ib__llama_api *api, const char *name, const char *cache_dir,
                             int32_t threads, char *path, size_t cap, char *note, size_t note_cap,
                             ib_error *err)
{
    if (note && note_cap) note[0] = '\0';
    char base[64], list[128];
    const char *q = strchr(name, '?');
    snprintf(base, sizeof base, "%.*s", (int)(q ? (size_t)(q - name) : strlen(name)), name);
    const ib__lm_arch *a = ib__lm_find(base);
    IB_FAIL_IF(!a && ib_zoo_find(base), err, IB_ERR_INVALID_ARG,
               "zoo:%s is a forward-pass model: inferbench latency, throughput, pitfalls or best measure it",
               base);
    if (!a) {
        size_t used = 0;
        for (size_t i = 0; i < ib__lm_count() && used < sizeof list; i++)
            used +=
                (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", ib__lm_get(i)->name);
        return ib__fail(err, IB_ERR_INVALID_ARG, "zoo: unknown generative model '%s' (known: %s)", base,
                        list);
    }
    const weight_type *t = find_type(q ? q + 1 : "f16");
    known_types(list, sizeof list);
    IB_FAIL_IF(!t, err, IB_ERR_INVALID_ARG, "zoo: unknown weight type '%s' of %s (known: %s)", q + 1, base,
               list);
    IB_FAIL_IF(!cache_dir || !*cache_dir, err, IB_ERR_INVALID_ARG,
               "zoo: no folder given for the GGUF file of %s (the program gives its cache)", name);
    if (mkdir(cache_dir, 0755) != 0 && errno != EEXIST)
        return ib__fail(err, IB_ERR_IO, "zoo: cannot create %s: %s", cache_dir, strerror(errno));
    char f16[1024];
    snprintf(f16, sizeof f16, "%s/%s-f16-%llx.gguf", cache_dir, a->name, (unsigned long long)IB__LM_SEED);
    IB_TRY(ensure(api, a, &weight_types[0], NULL, threads, f16, note, note_cap, err));
    int n = snprintf(path, cap, "%s/%s-%s-%llx.gguf", cache_dir, a->name, t->name,
                     (unsigned long long)IB__LM_SEED);
    IB_FAIL_IF(n < 0 || (size_t)n >= cap, err, IB_ERR_INVALID_ARG, "zoo: cache folder path too long: %s",
               cache_dir);
    if (t != &weight_types[0]) IB_TRY(ensure(api, a, t, f16, threads, path, note, note_cap, err));
    return IB_OK;
}

/* --- export (inferbench.h) --------------------------------------------------- */

/* Copies the open file in into the open file out: a reflink (FICLONE)
 * where the file system offers one (the blocks shared copy-on-write, so a
 * later write to either file leaves the other as it was), else its bytes. */
static bool copy_into(int in, int out)
{
    if (ioctl(out, FICLONE, in) == 0) return true;
    char buf[1 << 16];
    for (ssize_t got; (got = read(in, buf, sizeof buf)) != 0;) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return false;
        for (ssize_t done = 0, w; done < got; done += w) {
            w = write(out, buf + done, (size_t)(got - done));
            if (w < 0 && errno == EINTR) w = 0;
            if (w < 0) return false;
        }
    }
    return true;
}

/* path from the cached file: a copy, never a link (a tool that edits or
 * truncates the exported file in place must not change the cache's),
 * through a temporary file synced and renamed, so that no half file is
 * left at path. */
static ib_status place(const char *from, const char *path, ib_error *err)
{
    char tmp[1100];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    IB_FAIL_IF(n < 0 || (size_t)n >= sizeof tmp, err, IB_ERR_INVALID_ARG, "zoo: output path too long: %s",
               path);
    unlink(tmp);
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = in < 0 ? -1 : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    bool ok = out >= 0 && copy_into(in, out) && fsync(out) == 0;
    int e = errno;
    if (in >= 0) close(in);
    if (out >= 0 && close(out) != 0 && ok) ok = false, e = errno;
    if (ok && rename(tmp, path) != 0) ok = false, e = errno;
    if (!ok) unlink(tmp);
    IB_FAIL_IF(!ok, err, IB_ERR_IO, "zoo: cannot write %s: %s", path, strerror(e));
    return IB_OK;
}

ib_status ib_zoo_export_gguf(const char *name, const char *path, const char *library_dir,
                             const char *cache_dir, char *note, size_t note_cap, ib_error *err)
{
    IB_FAIL_IF(!name || !path || !*path, err, IB_ERR_INVALID_ARG,
               "zoo: a model name and an output file are needed");
    const ib__llama_api *api;
    IB_TRY(ib__llama_load(library_dir, &api, err));
    char cached[1100];
    IB_TRY(ib__llama_zoo_file(api, name, cache_dir, ib__cpus_allowed(), cached, sizeof cached, note, note_cap,
                              err));
    return place(cached, path, err);
}
