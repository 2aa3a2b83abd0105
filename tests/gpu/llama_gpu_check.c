/* The llama backend on a GPU against a bare loop (tests/gpu/llama_gpu.sh):
 *
 *   llama_gpu_check MODEL LIBRARY_DIR CACHE_DIR [PROMPT [TOKENS [ROUNDS]]]
 *
 * (LIBRARY_DIR "": the llama.cpp set-up installed)
 * opens MODEL (a GGUF file or zoo:NAME) through the backend with every
 * layer offloaded, prints what the workload states (device, layers
 * offloaded, context, batches, flash attention, KV cache), then alternates
 * ROUNDS times (default 5) between
 *   - the backend's ops: clear, prefill PROMPT (default 512) + synchronize,
 *     then TOKENS (default 128) steps, each step + synchronize timed alone;
 *   - a bare loop on a context of its own, same model, same settings:
 *     llama_memory_clear, llama_decode of the prompt in n_batch pieces +
 *     llama_synchronize, then llama_decode of one token + llama_synchronize
 *     per step, timed the same way;
 * and prints, for each, the first prefill (cold), the median warm prefill,
 * the steps' median and p99 over every round, and tokens/s (tokens / time),
 * then the difference of the medians per step: the backend's own cost.
 * Exits 77 when the model did not land on a GPU (IB_LLAMA_CHECK_ON_CPU=1:
 * runs there too), 1 on a failure; checks
 * nothing about speed (the lead reads the figures). */
#include "backend/llama/llama_backend.h"
#include "backend/llama/llama_probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, cmp);
    double h = (double)(n - 1) * q;
    size_t i = (size_t)h;
    return i + 1 < n ? v[i] + (h - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

typedef struct figures {
    double cold_prefill_ms;
    double *prefill_ms; /* [rounds] */
    double *step_ms;    /* [rounds * tokens] */
    double total_step_ms;
} figures;

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "llama_gpu_check: %s: %s\n", what, why);
    return 1;
}

/* One round through the backend's ops. */
static int ops_round(ib__gen *g, int prompt, int tokens, int round, figures *f)
{
    ib_error err;
    if (g->ops->clear(g, &err) != IB_OK) return fail("clear", err.message);
    double t0 = ib__now_ms();
    if (g->ops->prefill(g, 0, 0, prompt, &err) != IB_OK || g->ops->synchronize(g, &err) != IB_OK)
        return fail("prefill", err.message);
    f->prefill_ms[round] = ib__now_ms() - t0;
    for (int i = 0; i < tokens; i++) {
        double s = ib__now_ms();
        if (g->ops->step(g, 1, prompt + i, &err) != IB_OK || g->ops->synchronize(g, &err) != IB_OK)
            return fail("step", err.message);
        f->step_ms[(size_t)round * tokens + i] = ib__now_ms() - s;
        f->total_step_ms += f->step_ms[(size_t)round * tokens + i];
    }
    return 0;
}

/* One round of the bare loop: llama.cpp's calls and nothing else. */
static int bare_round(const ib__llama_api *api, struct llama_context *ctx, int prompt, int tokens, int round,
                      figures *f)
{
    int32_t n_batch = (int32_t)api->n_batch(ctx);
    struct llama_batch b = { 0 };
    llama_token *tok = calloc((size_t)n_batch, sizeof *tok);
    llama_pos *pos = calloc((size_t)n_batch, sizeof *pos);
    int32_t *nseq = calloc((size_t)n_batch, sizeof *nseq);
    llama_seq_id **sid = calloc((size_t)n_batch, sizeof *sid);
    int8_t *logits = calloc((size_t)n_batch, sizeof *logits);
    static llama_seq_id zero = 0;
    for (int32_t i = 0; i < n_batch; i++) nseq[i] = 1, sid[i] = &zero;
    b.token = tok, b.pos = pos, b.n_seq_id = nseq, b.seq_id = sid, b.logits = logits;
    api->memory_clear(api->get_memory(ctx), false);
    int rc = 0;
    double t0 = ib__now_ms();
    for (int done = 0; done < prompt && rc == 0;) {
        int n = prompt - done < n_batch ? prompt - done : n_batch;
        for (int i = 0; i < n; i++)
            tok[i] = (done + i) * 7919 % 1000, pos[i] = done + i, logits[i] = done + i == prompt - 1;
        b.n_tokens = n;
        rc = api->decode(ctx, b);
        done += n;
    }
    api->synchronize(ctx);
    f->prefill_ms[round] = ib__now_ms() - t0;
    for (int i = 0; i < tokens && rc == 0; i++) {
        tok[0] = (prompt + i) * 7919 % 1000, pos[0] = prompt + i, logits[0] = 1;
        b.n_tokens = 1;
        double s = ib__now_ms();
        rc = api->decode(ctx, b);
        api->synchronize(ctx);
        f->step_ms[(size_t)round * tokens + i] = ib__now_ms() - s;
        f->total_step_ms += f->step_ms[(size_t)round * tokens + i];
    }
    free(tok), free(pos), free(nseq), free(sid), free(logits);
    return rc ? fail("bare llama_decode", "nonzero") : 0;
}

static void report(const char *who, figures *f, int rounds, int tokens)
{
    size_t n = (size_t)rounds * (size_t)tokens;
    double warm = rounds > 1 ? quantile(f->prefill_ms + 1, (size_t)rounds - 1, 0.5) : f->prefill_ms[0];
    double p50 = quantile(f->step_ms, n, 0.5), p99 = quantile(f->step_ms, n, 0.99);
    printf("%-8s first prefill %9.3f ms, warm prefill median %8.3f ms; step median %.4f ms, p99 %.4f ms, "
           "%.1f tokens/s (tokens / time of the steps)\n",
           who, f->cold_prefill_ms, warm, p50, p99, (double)n / (f->total_step_ms / 1000.0));
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: llama_gpu_check MODEL LIBRARY_DIR CACHE_DIR [PROMPT [TOKENS [ROUNDS]]]\n");
        return 2;
    }
    int prompt = argc > 4 ? atoi(argv[4]) : 512, tokens = argc > 5 ? atoi(argv[5]) : 128,
        rounds = argc > 6 ? atoi(argv[6]) : 5;
    ib_backend_option opt = { "library", argv[2] };
    ib__gen_open_args a;
    ib__gen_open_args_init(&a);
    a.model = argv[1];
    a.options = &opt;
    a.n_options = argv[2][0] ? 1 : 0; /* "": the release set-up installed */
    a.ctx_per_seq = prompt + tokens;
    a.cache_dir = argv[3];
    ib__gen *g;
    ib_error err;
    double t0 = ib__now_ms();
    if (ib__backend_llama_gen_open(&a, &g, &err) != IB_OK) return fail("open", err.message);
    const ib__gen_info *in = &g->info;
    printf("opened %s in %.1f s: %s, %s, %llu params, %.1f MiB; %s, %d layers offloaded of %d; n_ctx %d, "
           "n_batch %d, n_ubatch %d, flash attention %s, KV %s %.1f MiB, threads %d (llama.cpp's default %d, "
           "%d cores allowed); %s from %s\n",
           in->model, (ib__now_ms() - t0) / 1000.0, in->model_type, in->weights_type,
           (unsigned long long)in->n_params, (double)in->model_bytes / 1048576.0,
           in->device == IB_DEVICE_CUDA ? "CUDA" : "CPU", in->n_gpu_layers, in->n_layers, in->n_ctx,
           in->n_batch, in->n_ubatch, in->flash_attn ? "on" : "off", in->kv_type,
           (double)in->kv_bytes / 1048576.0, in->n_threads, in->n_threads_default, in->n_cpus_allowed,
           in->runtime_version, in->runtime_library);
    /* IB_LLAMA_CHECK_ON_CPU=1 runs the loops on the CPU too (a check of
     * this program where there is no GPU). */
    const char *on_cpu = getenv("IB_LLAMA_CHECK_ON_CPU");
    if (in->device != IB_DEVICE_CUDA && !(on_cpu && !strcmp(on_cpu, "1"))) {
        printf("the model is not on a GPU: skipped\n");
        ib__gen_destroy(g);
        return 77;
    }
    const ib__llama_api *api;
    if (ib__llama_load(argv[2], &api, &err) != IB_OK) return fail("library", err.message);
    /* The bare loop's own context, of the settings the backend used. */
    struct llama_context_params cp = api->context_default_params();
    cp.n_ctx = (uint32_t)in->n_ctx;
    cp.n_batch = (uint32_t)in->n_batch;
    cp.n_ubatch = (uint32_t)in->n_ubatch;
    cp.n_threads = cp.n_threads_batch = in->n_threads;
    cp.flash_attn_type = in->flash_attn ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;
    struct llama_context *ctx = api->init_from_model(ib__llama_probe_model(g), cp);
    if (!ctx) return fail("bare context", "llama_init_from_model failed");
    figures ops = { 0 }, bare = { 0 };
    ops.prefill_ms = calloc((size_t)rounds, sizeof(double));
    bare.prefill_ms = calloc((size_t)rounds, sizeof(double));
    ops.step_ms = calloc((size_t)rounds * tokens, sizeof(double));
    bare.step_ms = calloc((size_t)rounds * tokens, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        if (ops_round(g, prompt, tokens, r, &ops) || bare_round(api, ctx, prompt, tokens, r, &bare)) return 1;
        if (r == 0) ops.cold_prefill_ms = ops.prefill_ms[0], bare.cold_prefill_ms = bare.prefill_ms[0];
    }
    printf("prompt %d tokens, %d tokens decoded after it, %d rounds alternated\n", prompt, tokens, rounds);
    report("backend", &ops, rounds, tokens);
    report("bare", &bare, rounds, tokens);
    size_t n = (size_t)rounds * tokens;
    double d = quantile(ops.step_ms, n, 0.5) - quantile(bare.step_ms, n, 0.5);
    printf("backend - bare, step median: %+.2f us\n", d * 1000.0);
    api->free(ctx);
    ib__gen_destroy(g);
    return 0;
}
