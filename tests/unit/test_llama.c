/* The llama backend (src/backend/llama/) on llama.cpp's CPU build and the
 * zoo's tiny model: what each operation of the generation workload does
 * (positions, sequences, fork, rewind, the context re-created, out of
 * memory under the cap, logits after synchronize, the threads of a step
 * and of a prompt, one thread where one CPU is allowed, the info), and
 * every bad input. Skips (77) where set-up installed no llama.cpp library.
 * No timing is asserted.
 *
 * The library is loaded once per process, so the cases of another library
 * (missing, of another release) run in a child process each. */
#define _GNU_SOURCE /* memmem, CPU_SET */
#include "backend/llama/llama_probe.h"
#include "backend/registry.h"
#include "check.h"
#include "base/common.h"
#include "workload/generation.h"
#include "zoo/lm.h"

#include <dirent.h>
#include <math.h>
#include <sched.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char cache_dir[1100];
static char tmp_dir[1024];

/* Opens model with the options "k=v" given (NULL-terminated). */
static ib_status open_with(const char *model, const char *const *kv, int32_t n_seqs, int32_t ctx, ib__gen **g,
                           ib_error *err)
{
    ib_backend_option opts[16];
    char keys[16][64];
    size_t n = 0;
    for (; kv && kv[n]; n++) {
        const char *eq = strchr(kv[n], '=');
        snprintf(keys[n], sizeof keys[n], "%.*s", (int)(eq - kv[n]), kv[n]);
        opts[n] = (ib_backend_option){ keys[n], eq + 1 };
    }
    ib__gen_open_args a;
    ib__gen_open_args_init(&a);
    a.model = model;
    a.options = opts;
    a.n_options = n;
    a.device = IB_DEVICE_CPU;
    a.n_seqs = n_seqs;
    a.ctx_per_seq = ctx;
    a.cache_dir = cache_dir;
    *err = (ib_error){ { 0 } };
    return ib__backend_llama_gen_open(&a, g, err);
}

static ib__gen *open_tiny(int32_t n_seqs, int32_t ctx)
{
    ib__gen *g = NULL;
    ib_error err;
    ib_status st = open_with("zoo:llama-tiny", NULL, n_seqs, ctx, &g, &err);
    if (st != IB_OK) fprintf(stderr, "open zoo:llama-tiny: %s\n", err.message);
    CHECK(st == IB_OK);
    return g;
}

/* The tiny model's shape, written here (not read from the zoo's table):
 * 2 layers, 256 wide, 4 heads of which 2 for K and V, vocabulary 2048. */
enum { TINY_LAYERS = 2, TINY_EMBD = 256, TINY_HEADS = 4, TINY_KV_HEADS = 2, TINY_VOCAB = 2048 };

static void test_info(void)
{
    ib__gen *g = open_tiny(2, 300);
    if (!g) return;
    const ib__gen_info *in = &g->info;
    CHECK(!strcmp(in->model, "zoo:llama-tiny"));
    CHECK(!strcmp(in->arch, "llama"));
    CHECK(!strcmp(in->weights_type, "F16"));
    CHECK(strstr(in->model_type, "F16") != NULL);
    CHECK_EQ_INT(in->n_layers, TINY_LAYERS);
    CHECK_EQ_INT(in->n_embd, TINY_EMBD);
    CHECK_EQ_INT(in->n_vocab, TINY_VOCAB);
    CHECK_EQ_INT(in->n_ctx_train, 4096);
    /* 2 x (256 x 2048) embeddings and output, 256 for the output norm,
     * each layer 2 norms, q and o 256x256, k and v 256x128, 3 FFN 256x512. */
    uint64_t layer = 2 * 256 + 2 * 256 * 256 + 2 * 256 * 128 + 3 * 256 * 512;
    uint64_t params = 2ull * 256 * 2048 + 256 + TINY_LAYERS * layer;
    CHECK_EQ_INT(in->n_params, params);
    CHECK_EQ_INT(ib__lm_params(ib__lm_find("llama-tiny")), params);
    /* float16 matrices, float32 norms */
    uint64_t norms = 256 + TINY_LAYERS * 2 * 256;
    CHECK_EQ_INT(in->model_bytes, (params - norms) * 2 + norms * 4);
    CHECK(in->device == IB_DEVICE_CPU);
    CHECK_EQ_INT(in->device_id, 0);
    CHECK_EQ_INT(in->n_gpu_layers, 0);
    /* 300 tokens a sequence, rounded up to 256 cells: 512 each. */
    CHECK_EQ_INT(in->n_seq_max, 2);
    CHECK_EQ_INT(in->n_ctx, 2 * 512);
    CHECK_EQ_INT(in->n_batch, 600); /* llama.cpp's 2048, no more than the context asked (2 x 300) */
    CHECK_EQ_INT(in->n_ubatch, 512);
    CHECK(!strcmp(in->kv_type, "f16"));
    /* K and V: 2 layers x 1024 cells x (2 heads x 64) x 2 bytes each */
    CHECK_EQ_INT(in->kv_bytes, 2ull * TINY_LAYERS * 1024 * (TINY_KV_HEADS * (TINY_EMBD / TINY_HEADS)) * 2);
    CHECK(in->n_cpus_allowed >= 1);
    CHECK_EQ_INT(in->n_threads, in->n_cpus_allowed); /* the default: the cores, not llama.cpp's 4 */
    CHECK_EQ_INT(ib__llama_probe_threads_batch(g), in->n_cpus_allowed); /* a prompt's the same */
    CHECK_EQ_INT(in->n_threads_default, 4);
    CHECK(!strncmp(in->runtime_version, "llama.cpp 0.5.0", 15));
    CHECK(strstr(in->runtime_library, "libllama") != NULL);
    CHECK(!strcmp(ib_option_list_get(&in->options, "kv_type"), "f16"));
    CHECK(!strcmp(ib_option_list_get(&in->options, "flash_attn"), "auto"));
    CHECK(!strcmp(ib_option_list_get(&in->options, "n_gpu_layers"), "0"));
    /* no cap given: on the CPU, half of physical memory */
    long long phys = (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
    CHECK_EQ_INT(atoll(ib_option_list_get(&in->options, "memory_limit_mb")), phys / 2 / 1048576);
    ib__gen_destroy(g);
}

static void check_positions(ib__gen *g, int32_t seq, int32_t lo, int32_t hi)
{
    int32_t a, b;
    ib__llama_probe_positions(g, seq, &a, &b);
    CHECK_EQ_INT(a, lo);
    CHECK_EQ_INT(b, hi);
}

static bool ok(ib_status st, const ib_error *err)
{
    if (st != IB_OK) fprintf(stderr, "  failed: %s\n", err->message);
    return st == IB_OK;
}

/* A prompt lands at the positions asked, in pieces of n_batch, and clear
 * empties the cache. */
static void test_prefill_positions(void)
{
    ib__gen *g = NULL;
    ib_error err;
    const char *kv[] = { "n_batch=32", NULL };
    CHECK(ok(open_with("zoo:llama-tiny", kv, 1, 256, &g, &err), &err));
    if (!g) return;
    CHECK_EQ_INT(g->info.n_batch, 32);
    CHECK(ok(g->ops->prefill(g, 0, 0, 100, &err), &err)); /* 4 calls: 32, 32, 32, 4 */
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    check_positions(g, 0, 0, 99);
    const float *logits = ib__llama_probe_logits(g, -1);
    CHECK(logits != NULL);
    bool finite = logits != NULL;
    for (int i = 0; logits && i < TINY_VOCAB; i++) finite = finite && isfinite(logits[i]);
    CHECK(finite);
    CHECK(ok(g->ops->prefill(g, 0, 100, 50, &err), &err));
    check_positions(g, 0, 0, 149);
    CHECK(ok(g->ops->clear(g, &err), &err));
    check_positions(g, 0, -1, -1);
    /* Beyond the context of a sequence (256), or of a sequence not there. */
    CHECK(g->ops->prefill(g, 0, 200, 57, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "beyond the context") != NULL);
    CHECK(g->ops->prefill(g, 1, 0, 10, &err) == IB_ERR_INVALID_ARG);
    CHECK(ok(g->ops->prefill(g, 0, 0, 256, &err), &err)); /* exactly the context */
    check_positions(g, 0, 0, 255);
    ib__gen_destroy(g);
}

/* fork copies sequence 0's cache into the others (the data, not only the
 * positions: the same token after the same history gives the same
 * logits), and a step decodes one token of each sequence. */
static void test_fork_and_step(void)
{
    ib__gen *g = open_tiny(4, 128);
    if (!g) return;
    ib_error err;
    CHECK(ok(g->ops->prefill(g, 0, 0, 20, &err), &err));
    CHECK(ok(g->ops->fork(g, 4, 20, &err), &err));
    for (int s = 0; s < 4; s++) check_positions(g, s, 0, 19);
    CHECK(ok(g->ops->step(g, 4, 20, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    for (int s = 0; s < 4; s++) check_positions(g, s, 0, 20);
    /* Sequences 0 and 1 now differ at position 20 (random tokens of their
     * own); 2 and 3 too. Restart from one prompt and give 0 and 1 the
     * same token: */
    CHECK(ok(g->ops->clear(g, &err), &err));
    CHECK(ok(g->ops->prefill(g, 0, 0, 20, &err), &err));
    CHECK(ok(g->ops->fork(g, 3, 20, &err), &err));
    check_positions(g, 3, -1, -1); /* not forked to */
    ib__llama_probe_set_next(g, 0, 7);
    ib__llama_probe_set_next(g, 1, 7);
    ib__llama_probe_set_next(g, 2, 8);
    CHECK(ok(g->ops->step(g, 3, 20, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    const float *l0 = ib__llama_probe_logits(g, 0), *l1 = ib__llama_probe_logits(g, 1),
                *l2 = ib__llama_probe_logits(g, 2);
    CHECK(l0 && l1 && l2);
    if (l0 && l1 && l2) {
        CHECK(!memcmp(l0, l1, TINY_VOCAB * sizeof *l0));
        CHECK(memcmp(l0, l2, TINY_VOCAB * sizeof *l0) != 0);
    }
    /* fork of positions sequence 0 does not hold exactly */
    CHECK(g->ops->fork(g, 2, 20, &err) == IB_ERR_INVALID_ARG);
    CHECK(g->ops->step(g, 5, 21, &err) == IB_ERR_INVALID_ARG); /* more than the context holds */
    ib__gen_destroy(g);
}

/* A copy of the logits of output i of the last decode (NULL: none). */
static float *logits_copy(ib__gen *g, int32_t i)
{
    const float *l = ib__llama_probe_logits(g, i);
    float *copy = l ? malloc(TINY_VOCAB * sizeof *copy) : NULL;
    if (copy) memcpy(copy, l, TINY_VOCAB * sizeof *copy);
    return copy;
}

/* rewind keeps the positions before it and removes those after, in every
 * sequence asked: steps at 20..23, rewound to 21, then the step at 21
 * again gives the logits it gave the first time (the same history, the
 * same token); a sequence not asked keeps its positions. */
static void test_rewind(void)
{
    ib__gen *g = open_tiny(2, 64);
    if (!g) return;
    ib_error err;
    CHECK(ok(g->ops->prefill(g, 0, 0, 20, &err), &err));
    CHECK(ok(g->ops->fork(g, 2, 20, &err), &err));
    CHECK(ok(g->ops->step(g, 2, 20, &err), &err));
    CHECK(ok(g->ops->step(g, 2, 21, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    float *first0 = logits_copy(g, 0), *first1 = logits_copy(g, 1);
    CHECK(first0 && first1);
    CHECK(ok(g->ops->step(g, 2, 22, &err), &err));
    CHECK(ok(g->ops->step(g, 2, 23, &err), &err));
    CHECK(ok(g->ops->rewind(g, 2, 21, &err), &err));
    for (int s = 0; s < 2; s++) check_positions(g, s, 0, 20);
    CHECK(ok(g->ops->step(g, 2, 21, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    for (int s = 0; s < 2; s++) check_positions(g, s, 0, 21);
    const float *again0 = ib__llama_probe_logits(g, 0), *again1 = ib__llama_probe_logits(g, 1);
    CHECK(first0 && again0 && !memcmp(first0, again0, TINY_VOCAB * sizeof *again0));
    CHECK(first1 && again1 && !memcmp(first1, again1, TINY_VOCAB * sizeof *again1));
    /* The first sequence only: the other keeps its positions. */
    CHECK(ok(g->ops->rewind(g, 1, 10, &err), &err));
    check_positions(g, 0, 0, 9);
    check_positions(g, 1, 0, 21);
    CHECK(g->ops->rewind(g, 3, 10, &err) == IB_ERR_INVALID_ARG);
    CHECK(g->ops->rewind(g, 1, -1, &err) == IB_ERR_INVALID_ARG);
    free(first0);
    free(first1);
    ib__gen_destroy(g);
}

/* sample picks the greedy token of a sequence's last logits, and the
 * next step feeds it. */
static void test_sample(void)
{
    ib__gen *g = open_tiny(2, 64);
    if (!g) return;
    ib_error err;
    CHECK(g->ops->sample(g, 0, &err) == IB_ERR_INVALID_ARG); /* no logits yet */
    CHECK(ok(g->ops->prefill(g, 0, 0, 8, &err), &err));
    CHECK(ok(g->ops->fork(g, 2, 8, &err), &err));
    CHECK(ok(g->ops->step(g, 2, 8, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    const float *l1 = ib__llama_probe_logits(g, 1);
    int best = 0;
    for (int i = 1; l1 && i < TINY_VOCAB; i++)
        if (l1[i] > l1[best]) best = i;
    CHECK_EQ_INT(ib__llama_probe_next(g, 1), -1);
    CHECK(ok(g->ops->sample(g, 1, &err), &err));
    CHECK_EQ_INT(ib__llama_probe_next(g, 1), best);
    CHECK_EQ_INT(ib__llama_probe_next(g, 0), -1);
    CHECK(ok(g->ops->step(g, 2, 9, &err), &err));
    CHECK_EQ_INT(ib__llama_probe_next(g, 1), -1); /* fed */
    /* After a prompt of sequence 1, only sequence 1 has logits; after a
     * step of one sequence, sequence 0. */
    CHECK(ok(g->ops->prefill(g, 1, 10, 2, &err), &err));
    CHECK(g->ops->sample(g, 0, &err) == IB_ERR_INVALID_ARG);
    CHECK(ok(g->ops->sample(g, 1, &err), &err));
    CHECK(ok(g->ops->step(g, 1, 10, &err), &err));
    CHECK(ok(g->ops->sample(g, 0, &err), &err));
    CHECK(g->ops->sample(g, 1, &err) == IB_ERR_INVALID_ARG);
    CHECK(ok(g->ops->prefill(g, 0, 11, 1, &err), &err));
    CHECK(ok(g->ops->clear(g, &err), &err));
    CHECK(g->ops->sample(g, 0, &err) == IB_ERR_INVALID_ARG); /* cleared: no logits */
    ib__gen_destroy(g);
}

/* The context re-created for more sequences, the cap making a count that
 * does not fit IB_ERR_DEVICE_OOM, the workload usable after it; more
 * sequences than llama.cpp allows refused. */
static void test_set_sequences_cap(void)
{
    ib__gen *g = NULL;
    ib_error err;
    const char *kv[] = { "memory_limit_mb=8", NULL };
    CHECK(ok(open_with("zoo:llama-tiny", kv, 1, 256, &g, &err), &err));
    if (!g) return;
    /* A sequence of 256 cells: 2 layers x 256 x (128 + 128) x 2 bytes = 256 KiB. */
    const uint64_t per_seq = 2ull * 256 * 256 * 2, cap = 8ull << 20;
    int32_t fits = 0;
    for (int32_t n = 1; n <= 64; n++) {
        ib_status st = g->ops->set_sequences(g, n, 256, &err);
        if (st != IB_OK) {
            CHECK(st == IB_ERR_DEVICE_OOM);
            CHECK(strstr(err.message, "memory_limit_mb=8") != NULL);
            break;
        }
        fits = n;
        CHECK_EQ_INT(g->info.n_seq_max, n);
        CHECK_EQ_INT(g->info.n_ctx, 256 * n);
        CHECK_EQ_INT(g->info.kv_bytes, per_seq * (uint64_t)n);
        CHECK(g->info.kv_bytes + ib__llama_probe_compute_bytes(g) <= cap);
    }
    /* Something fits, not everything: the KV cache alone of 32 is the cap. */
    CHECK(fits >= 1 && fits < 32);
    /* The count after the last that fits does not, again; the workload is
     * usable at the one that does. */
    CHECK(g->ops->set_sequences(g, fits + 1, 256, &err) == IB_ERR_DEVICE_OOM);
    CHECK(g->ops->prefill(g, 0, 0, 4, &err) == IB_ERR_INVALID_ARG); /* no context now */
    CHECK(ok(g->ops->set_sequences(g, fits, 256, &err), &err));
    CHECK_EQ_INT(g->info.n_seq_max, fits);
    CHECK(ok(g->ops->prefill(g, 0, 0, 16, &err), &err));
    CHECK(ok(g->ops->fork(g, fits, 16, &err), &err));
    CHECK(ok(g->ops->step(g, fits, 16, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    check_positions(g, fits - 1, 0, 16);
    /* llama.cpp decodes at most 256 sequences together */
    CHECK(g->ops->set_sequences(g, 257, 16, &err) == IB_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "(256)") != NULL);
    CHECK(g->ops->set_sequences(g, 0, 16, &err) == IB_ERR_INVALID_ARG);
    ib__gen_destroy(g);
}

static void test_threads_and_reopen(void)
{
    ib__gen *g = NULL;
    ib_error err;
    const char *kv[] = { "threads=1", NULL };
    CHECK(ok(open_with("zoo:llama-tiny", kv, 2, 64, &g, &err), &err));
    if (!g) return;
    CHECK_EQ_INT(g->info.n_threads, 1);
    CHECK_EQ_INT(ib__llama_probe_threads_batch(g), 1); /* a prompt's threads follow the step's */
    CHECK(!strcmp(ib_option_list_get(&g->info.options, "threads"), "1"));
    CHECK(ok(g->ops->set_threads(g, 2, &err), &err));
    CHECK_EQ_INT(g->info.n_threads, 2);
    CHECK_EQ_INT(ib__llama_probe_threads_batch(g), 2);
    CHECK(g->ops->set_threads(g, 0, &err) == IB_ERR_INVALID_ARG);
    CHECK(ok(g->ops->prefill(g, 0, 0, 10, &err), &err));
    CHECK(ok(g->ops->reopen(g, &err), &err));
    check_positions(g, 0, -1, -1); /* a new context */
    CHECK_EQ_INT(g->info.n_seq_max, 2);
    CHECK_EQ_INT(g->info.n_threads, 2);
    CHECK_EQ_INT(ib__llama_probe_threads_batch(g), 2);
    CHECK(ok(g->ops->prefill(g, 0, 0, 10, &err), &err));
    check_positions(g, 0, 0, 9);
    ib__gen_destroy(g);
}

/* This process's threads, their ids sorted into ids[0..return). */
static size_t threads_of_process(long *ids, size_t cap)
{
    DIR *d = opendir("/proc/self/task");
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.' && n < cap) ids[n++] = atol(e->d_name);
    if (d) closedir(d);
    for (size_t i = 1; i < n; i++) /* few: insertion */
        for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
            long t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    return n;
}

/* The count of this process's threads once it is want: a joined thread
 * can stay listed in /proc/self/task a moment after pthread_join returns
 * (the kernel reaps it after clearing the id join waits on), so the count
 * is read again, every 10 ms for up to 2 s, before it is taken as is. Not
 * a bound on anything measured: a pool never freed stays counted. */
static size_t threads_settled(size_t want, long *ids, size_t cap)
{
    size_t n = threads_of_process(ids, cap);
    for (int i = 0; i < 200 && n != want; i++) {
        nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
        n = threads_of_process(ids, cap);
    }
    return n;
}

/* The context's CPU threads live as long as it does, as in llama.cpp's own
 * tools: 3 threads are the caller's and 2 workers, alive between decodes
 * and the same ones after them (ggml alone would start and join the
 * workers at every decode: on 2 cores a run's decodes took 4x their bare
 * replay's); 1 thread, no worker; the context gone, none. */
static void test_threads_kept(void)
{
    long before[64], open_ids[64], after[64];
    size_t n0 = threads_of_process(before, 64);
    ib__gen *g = NULL;
    ib_error err;
    const char *kv[] = { "threads=3", NULL };
    CHECK(ok(open_with("zoo:llama-tiny", kv, 1, 64, &g, &err), &err));
    if (!g) return;
    size_t n1 = threads_of_process(open_ids, 64);
    CHECK_EQ_INT(n1, n0 + 2);
    CHECK(ok(g->ops->prefill(g, 0, 0, 10, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    CHECK(ok(g->ops->step(g, 1, 10, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    size_t n2 = threads_of_process(after, 64);
    CHECK(n2 == n1 && !memcmp(open_ids, after, n1 * sizeof *after));
    /* A new count, a new pool; the old one freed once the next decode
     * has left it (the CPU backend pauses it then). */
    CHECK(ok(g->ops->set_threads(g, 1, &err), &err));
    CHECK(ok(g->ops->prefill(g, 0, 11, 5, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    CHECK_EQ_INT(threads_settled(n0, after, 64), n0);
    CHECK(
        ok(g->ops->set_threads(g, 2, &err), &err)); /* twice before a decode: the unused pool freed at once */
    CHECK(ok(g->ops->set_threads(g, 3, &err), &err));
    CHECK(ok(g->ops->prefill(g, 0, 16, 5, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    CHECK_EQ_INT(threads_settled(n0 + 2, after, 64), n0 + 2);
    ib__gen_destroy(g);
    CHECK_EQ_INT(threads_settled(n0, after, 64), n0);
}

/* The options in effect, and what they change. */
static void test_options(void)
{
    ib__gen *g = NULL;
    ib_error err;
    const char *q8[] = { "kv_type=q8_0", "flash_attn=on", "n_ubatch=64", NULL };
    CHECK(ok(open_with("zoo:llama-tiny", q8, 1, 256, &g, &err), &err));
    if (g) {
        CHECK(!strcmp(g->info.kv_type, "q8_0"));
        CHECK(g->info.flash_attn);
        CHECK_EQ_INT(g->info.n_ubatch, 64);
        /* q8_0: 34 bytes a block of 32 values; rows of 128 values */
        CHECK_EQ_INT(g->info.kv_bytes, 2ull * 256 * 2 * (128 / 32 * 34));
        ib__gen_destroy(g);
    }
    const char *off[] = { "flash_attn=off", NULL };
    g = NULL;
    CHECK(ok(open_with("zoo:llama-tiny", off, 1, 64, &g, &err), &err));
    if (g) CHECK(!g->info.flash_attn);
    ib__gen_destroy(g);
    static const char *const bad[][2] = {
        { "kv_type=q3", "kv_type=q3" },
        { "flash_attn=maybe", "flash_attn" },
        { "n_batch=0", "n_batch=0" },
        { "threads=x", "threads=x" },
        { "no_such=1", "unknown option 'no_such' (known: library, n_gpu_layers, flash_attn, "
                       "kv_type, kv_unified, n_batch, n_ubatch, threads, memory_limit_mb)" },
        { "library=/no/such/dir", "not a folder" }
    };
    /* a quantized V cache without flash attention: refused as such */
    const char *pair[] = { "kv_type=q4_0", "flash_attn=off", NULL };
    g = NULL;
    CHECK(open_with("zoo:llama-tiny", pair, 1, 64, &g, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "kv_type=q4_0 needs flash attention") != NULL);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *kv[] = { bad[i][0], NULL };
        g = NULL;
        CHECK(open_with("zoo:llama-tiny", kv, 1, 64, &g, &err) == IB_ERR_INVALID_ARG);
        CHECK(g == NULL);
        CHECK(strstr(err.message, bad[i][1]) != NULL);
        CHECK(!strchr(err.message, '\n'));
    }
}

static bool no_temporary_files(void)
{
    DIR *d = opendir(cache_dir);
    bool clean = d != NULL;
    for (struct dirent *e; d && (e = readdir(d));) clean = clean && !strstr(e->d_name, ".tmp");
    if (d) closedir(d);
    return clean;
}

static long long mtime_ns(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

static void write_bytes(const char *path, const void *bytes, size_t n);

/* A GGUF file (version 3) of no tensor and the keys general.architecture
 * = arch and, unless NULL, tokenizer.ggml.model = tokenizer, padded to the
 * 32-byte alignment where its data would start. */
static void write_gguf_of_arch(const char *path, const char *arch, const char *tokenizer)
{
    const char *keys[2][2] = { { "general.architecture", arch }, { "tokenizer.ggml.model", tokenizer } };
    unsigned char buf[512] = { 'G', 'G', 'U', 'F' };
    size_t at = 4;
    uint32_t version = 3, type_string = 8;
    uint64_t n_tensors = 0, n_kv = tokenizer ? 2 : 1;
    memcpy(buf + at, &version, 4), at += 4;
    memcpy(buf + at, &n_tensors, 8), at += 8;
    memcpy(buf + at, &n_kv, 8), at += 8;
    for (uint64_t k = 0; k < n_kv; k++) {
        uint64_t key_len = strlen(keys[k][0]), val_len = strlen(keys[k][1]);
        memcpy(buf + at, &key_len, 8), at += 8;
        memcpy(buf + at, keys[k][0], key_len), at += key_len;
        memcpy(buf + at, &type_string, 4), at += 4;
        memcpy(buf + at, &val_len, 8), at += 8;
        memcpy(buf + at, keys[k][1], val_len), at += val_len;
    }
    write_bytes(path, buf, (at + 31) / 32 * 32);
}

/* Quantized variants through llama.cpp's quantizer; a file written once
 * and found again; an unknown type or model refused. */
static void test_quantized(void)
{
    static const char *const types[][2] = { { "q8_0", "Q8_0" }, { "q4_k_m", "Q4_K_M" } };
    for (size_t i = 0; i < 2; i++) {
        char model[64], path[1200];
        snprintf(model, sizeof model, "zoo:llama-tiny?%s", types[i][0]);
        snprintf(path, sizeof path, "%s/llama-tiny-%s-%llx.gguf", cache_dir, types[i][0],
                 (unsigned long long)IB__LM_SEED);
        ib__gen *g = NULL;
        ib_error err;
        CHECK(ok(open_with(model, NULL, 1, 64, &g, &err), &err));
        if (!g) continue;
        CHECK(!strcmp(g->info.weights_type, types[i][1]));
        CHECK(g->info.model_bytes < 2 * 2300000ull); /* smaller than float16 */
        CHECK(ok(g->ops->prefill(g, 0, 0, 8, &err), &err));
        ib__gen_destroy(g);
        long long written = mtime_ns(path);
        CHECK(written > 0);
        g = NULL;
        CHECK(ok(open_with(model, NULL, 1, 64, &g, &err), &err));
        ib__gen_destroy(g);
        CHECK_EQ_INT(mtime_ns(path), written); /* reused, not written again */
    }
    CHECK(no_temporary_files());
    ib__gen *g = NULL;
    ib_error err;
    /* A cached float16 file that is not GGUF (damaged, in a cache of its
     * own): made again before it is quantized, and the note says so. */
    char broken[1200], f16[1300], out[1300];
    snprintf(broken, sizeof broken, "%s/broken-cache", tmp_dir);
    mkdir(broken, 0755);
    snprintf(f16, sizeof f16, "%s/llama-tiny-f16-%llx.gguf", broken, (unsigned long long)IB__LM_SEED);
    write_bytes(f16, "not a model\n", 12);
    ib__gen_open_args a;
    ib__gen_open_args_init(&a);
    a.model = "zoo:llama-tiny?q8_0";
    a.device = IB_DEVICE_CPU;
    a.cache_dir = broken;
    CHECK(ok(ib__backend_llama_gen_open(&a, &g, &err), &err));
    CHECK(g && strstr(g->open_note, "was damaged (12 bytes, not a GGUF header gguf reads): made again"));
    ib__gen_destroy(g);
    g = NULL;
    /* A cached file of an earlier inferbench: whole, but with llama.cpp's
     * dummy tokens ("none"), which llama-server cannot turn into text:
     * stale, made again with the vocabulary, and the note says so. */
    write_gguf_of_arch(f16, "llama", "none");
    a.model = "zoo:llama-tiny";
    CHECK(ok(ib__backend_llama_gen_open(&a, &g, &err), &err));
    CHECK(g && strstr(g->open_note, "had no vocabulary (an earlier inferbench's file): made again"));
    CHECK_EQ_INT(g ? g->info.n_vocab : 0, TINY_VOCAB);
    ib__gen_destroy(g);
    g = NULL;
    a.model = "zoo:llama-tiny?q8_0";
    /* llama.cpp's quantizer failing (on a float16 file whose header is
     * whole, no tensor cut short, but of an architecture llama.cpp does
     * not know): its words, one line, and no file. */
    snprintf(out, sizeof out, "%s/llama-tiny-q8_0-%llx.gguf", broken, (unsigned long long)IB__LM_SEED);
    unlink(out);
    write_gguf_of_arch(f16, "no-such-arch", "llama");
    CHECK(ib__backend_llama_gen_open(&a, &g, &err) == IB_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "llama.cpp cannot quantize to q8_0: ") != NULL);
    CHECK(!strchr(err.message, '\n'));
    CHECK(access(out, F_OK) != 0);
    CHECK(open_with("zoo:llama-tiny?q3_xyz", NULL, 1, 64, &g, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "unknown weight type 'q3_xyz'") != NULL);
    CHECK(strstr(err.message, "q4_k_m") != NULL);
    CHECK(open_with("zoo:llama-huge", NULL, 1, 64, &g, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "unknown generative model 'llama-huge'") != NULL);
    /* A forward-pass model of the zoo: which command measures it. */
    CHECK(open_with("zoo:efficientnet-b0", NULL, 1, 64, &g, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "zoo:efficientnet-b0 is a forward-pass model: inferbench latency") != NULL);
}

static void write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(bytes, 1, n, f) == n);
    fclose(f);
}

/* The tiny model's file, read whole (for the broken copies). */
static unsigned char *tiny_bytes(size_t *n)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/llama-tiny-f16-%llx.gguf", cache_dir, (unsigned long long)IB__LM_SEED);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n);
    if (b && fread(b, 1, *n, f) != *n) free(b), b = NULL;
    fclose(f);
    return b;
}

static void expect_refused(const char *path, ib_status want, const char *words)
{
    ib__gen *g = NULL;
    ib_error err;
    ib_status st = open_with(path, NULL, 1, 64, &g, &err);
    CHECK_EQ_INT(st, want);
    CHECK(g == NULL);
    if (!strstr(err.message, words)) fprintf(stderr, "  %s: '%s' lacks '%s'\n", path, err.message, words);
    CHECK(strstr(err.message, words) != NULL);
    CHECK(!strchr(err.message, '\n'));
}

/* Files that are not GGUF, a GGUF of an architecture llama.cpp does not
 * know, a model larger than the memory allowed. */
static void test_bad_files(void)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/empty.gguf", tmp_dir);
    write_bytes(path, "", 0);
    expect_refused(path, IB_ERR_INVALID_ARG, "is empty, not a GGUF file");
    snprintf(path, sizeof path, "%s/text.gguf", tmp_dir);
    write_bytes(path, "hello, this is text\n", 20);
    expect_refused(path, IB_ERR_INVALID_ARG, "is not a GGUF file");
    expect_refused("/no/such/model.gguf", IB_ERR_INVALID_ARG, "cannot open /no/such/model.gguf");
    size_t n = 0;
    unsigned char *b = tiny_bytes(&n);
    CHECK(b != NULL);
    if (!b) return;
    snprintf(path, sizeof path, "%s/truncated.gguf", tmp_dir);
    write_bytes(path, b, 3000); /* the header and part of the tensors' list */
    expect_refused(path, IB_ERR_INVALID_ARG, "cannot load");
    snprintf(path, sizeof path, "%s/truncated-data.gguf", tmp_dir);
    write_bytes(path, b, n - 1000); /* the last tensor cut short */
    expect_refused(path, IB_ERR_INVALID_ARG, "cannot load");
    /* general.architecture's value "llama" (after the key, its type and
     * its length) becomes "xyzzy". */
    const char key[] = "general.architecture";
    unsigned char *at = memmem(b, n, key, sizeof key - 1);
    CHECK(at != NULL);
    if (at && !memcmp(at + sizeof key - 1 + 4 + 8, "llama", 5)) {
        memcpy(at + sizeof key - 1 + 4 + 8, "xyzzy", 5);
        snprintf(path, sizeof path, "%s/arch.gguf", tmp_dir);
        write_bytes(path, b, n);
        expect_refused(path, IB_ERR_INVALID_ARG, "unknown model architecture: 'xyzzy'");
    }
    /* A file gone when the model is reopened: the reopen fails, and the
     * workload says so rather than crash. */
    free(b);
    b = tiny_bytes(&n);
    snprintf(path, sizeof path, "%s/gone.gguf", tmp_dir);
    if (b) write_bytes(path, b, n);
    free(b);
    ib__gen *gone = NULL;
    ib_error e2;
    CHECK(ok(open_with(path, NULL, 1, 64, &gone, &e2), &e2));
    if (gone) {
        unlink(path);
        CHECK(gone->ops->reopen(gone, &e2) == IB_ERR_INVALID_ARG);
        CHECK(strstr(e2.message, "cannot open") != NULL);
        CHECK(gone->ops->set_sequences(gone, 1, 64, &e2) == IB_ERR_INVALID_ARG);
        CHECK(strstr(e2.message, "no model") != NULL);
        CHECK(gone->ops->prefill(gone, 0, 0, 4, &e2) == IB_ERR_INVALID_ARG);
        ib__gen_destroy(gone);
    }
    /* 4.4 MB of weights under a 1 MB cap: out of memory while loading */
    ib__gen *g = NULL;
    ib_error err;
    const char *kv[] = { "memory_limit_mb=1", NULL };
    CHECK_EQ_INT(open_with("zoo:llama-tiny", kv, 1, 64, &g, &err), IB_ERR_DEVICE_OOM);
    CHECK(strstr(err.message, "out of memory loading") != NULL);
    /* no GPU here: CUDA asked is refused */
    ib__gen_open_args a;
    ib__gen_open_args_init(&a);
    a.model = "zoo:llama-tiny";
    a.cache_dir = cache_dir;
    a.device = IB_DEVICE_CUDA;
    CHECK(ib__backend_llama_gen_open(&a, &g, &err) == IB_ERR_NO_DEVICE);
    a.device = IB_DEVICE_CPU;
    a.cache_dir = NULL;
    CHECK(ib__backend_llama_gen_open(&a, &g, &err) == IB_ERR_INVALID_ARG); /* a zoo model needs the cache */
    CHECK(strstr(err.message, "no folder given") != NULL);
}

/* A library other than the release of the headers, each in a child (one
 * library a process): missing, of another release, of the release but
 * with a larger structure, lacking a function. */
/* A process allowed one CPU (its affinity mask, as taskset or a cgroup
 * gives) chooses one thread, for a step and a prompt alike: in a child,
 * before this process has decoded anything (no thread pool to fork). */
static void test_one_cpu_allowed(void)
{
    cpu_set_t mask, one;
    CHECK(sched_getaffinity(0, sizeof mask, &mask) == 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask)) {
            CPU_SET(c, &one);
            break;
        }
    int fd[2];
    CHECK(pipe(fd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(3);
        ib__gen *g = NULL;
        ib_error err;
        if (open_with("zoo:llama-tiny", NULL, 1, 64, &g, &err) != IB_OK) {
            dprintf(fd[1], "open: %s", err.message);
            _exit(4);
        }
        dprintf(fd[1], "%d %d %d", (int)g->info.n_cpus_allowed, (int)g->info.n_threads,
                (int)ib__llama_probe_threads_batch(g));
        ib__gen_destroy(g);
        _exit(0);
    }
    close(fd[1]);
    char got[700] = { 0 };
    ssize_t r = read(fd[0], got, sizeof got - 1);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(r > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (strcmp(got, "1 1 1")) fprintf(stderr, "  one CPU allowed: cpus, threads, batch threads: '%s'\n", got);
    CHECK(!strcmp(got, "1 1 1"));
}

static void test_bad_library(void)
{
    const char *standins = getenv("IB_LLAMA_STANDINS");
    char empty[1200];
    snprintf(empty, sizeof empty, "%s/no-library", tmp_dir);
    mkdir(empty, 0755);
    struct {
        char dir[1200];
        const char *words;
    } cases[4] = { { "", "no llama.cpp library (libllama.so) in" },
                   { "", "is llama.cpp 0.4.0 (ggml 0.24.0), not the release" },
                   { "", "its parameter structures are not those of the headers" },
                   { "", "it has no llama_decode" } };
    snprintf(cases[0].dir, sizeof cases[0].dir, "%s", empty);
    static const char *const variants[] = { "old", "larger", "missing" };
    for (int i = 0; i < 3; i++)
        snprintf(cases[i + 1].dir, sizeof cases[i + 1].dir, "%s/%s", standins ? standins : "", variants[i]);
    size_t n = standins ? 4 : 1;
    if (!standins) printf("note: IB_LLAMA_STANDINS not set: only the missing library is tried\n");
    for (size_t i = 0; i < n; i++) {
        int fd[2];
        CHECK(pipe(fd) == 0);
        pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            char opt[1300];
            snprintf(opt, sizeof opt, "library=%s", cases[i].dir);
            const char *kv[] = { opt, NULL };
            ib__gen *g = NULL;
            ib_error err;
            ib_status st = open_with("zoo:llama-tiny", kv, 1, 64, &g, &err);
            dprintf(fd[1], "%d %s", (int)st, err.message);
            _exit(0);
        }
        close(fd[1]);
        char got[700] = { 0 };
        ssize_t r = read(fd[0], got, sizeof got - 1);
        close(fd[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(r > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK(atoi(got) == IB_ERR_INVALID_ARG);
        if (!strstr(got, cases[i].words)) fprintf(stderr, "  library %s: '%s'\n", cases[i].dir, got);
        CHECK(strstr(got, cases[i].words) != NULL);
        CHECK(!strchr(got, '\n'));
    }
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    const char *t = getenv("IB_TEST_TMP");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/llama-%ld", t ? t : "/tmp", (long)getpid());
    mkdir(tmp_dir, 0755);
    snprintf(cache_dir, sizeof cache_dir, "%s/zoo", tmp_dir);
    /* Before the real library is loaded: each case in a child. */
    RUN(test_bad_library);
    /* Skip where there is no library to test. */
    ib__gen *g = NULL;
    ib_error err;
    ib_status st = open_with("zoo:llama-tiny", NULL, 1, 64, &g, &err);
    if (st != IB_OK &&
        (strstr(err.message, "no llama.cpp library") || strstr(err.message, "without the llama"))) {
        printf("SKIP: %s\n", err.message);
        return 77;
    }
    ib__gen_destroy(g);
    RUN(test_one_cpu_allowed);
    RUN(test_info);
    RUN(test_prefill_positions);
    RUN(test_fork_and_step);
    RUN(test_rewind);
    RUN(test_sample);
    RUN(test_set_sequences_cap);
    RUN(test_threads_and_reopen);
    RUN(test_threads_kept);
    RUN(test_options);
    RUN(test_quantized);
    RUN(test_bad_files);
    return check_summary("test_llama");
}
