/* The llama backend's mixed batch (decode_batch) and sequence removal on
 * llama.cpp's CPU build and the zoo's tiny model: a batch of two
 * sequences' decode tokens and a third's prompt chunk computes what the
 * three compute apart (the serving engine's step, docs/serve-generative.md),
 * a removed sequence leaves the cache, every bad entry is refused, and
 * the serving engine leaves no sequence behind.
 * Skips (77) where set-up installed no llama.cpp library. No timing. */
#include "backend/llama/llama_probe.h"
#include "backend/registry.h"
#include "base/common.h"
#include "check.h"
#include "workload/generation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { TINY_VOCAB = 2048 };

static char cache_dir[1100];

/* The tiny model on the CPU: n_seqs sequences of ctx tokens; n_batch and
 * kv_unified as given (NULL: the backend's default). */
static ib_status open_tiny_with(int32_t n_seqs, int32_t ctx, const char *n_batch, const char *kv_unified,
                                ib__gen **g, ib_error *err)
{
    ib_backend_option opts[2];
    size_t n = 0;
    if (n_batch) opts[n++] = (ib_backend_option){ "n_batch", n_batch };
    if (kv_unified) opts[n++] = (ib_backend_option){ "kv_unified", kv_unified };
    ib__gen_open_args a;
    ib__gen_open_args_init(&a);
    a.model = "zoo:llama-tiny";
    a.options = n ? opts : NULL;
    a.n_options = n;
    a.device = IB_DEVICE_CPU;
    a.n_seqs = n_seqs;
    a.ctx_per_seq = ctx;
    a.cache_dir = cache_dir;
    *err = (ib_error){ { 0 } };
    return ib__backend_llama_gen_open(&a, g, err);
}

static ib_status open_tiny(int32_t n_seqs, int32_t ctx, const char *n_batch, ib__gen **g, ib_error *err)
{
    return open_tiny_with(n_seqs, ctx, n_batch, NULL, g, err);
}

static bool ok(ib_status st, const ib_error *err)
{
    if (st != IB_OK) fprintf(stderr, "  failed: %s\n", err->message);
    return st == IB_OK;
}

static void check_positions(ib__gen *g, int32_t seq, int32_t lo, int32_t hi)
{
    int32_t a, b;
    ib__llama_probe_positions(g, seq, &a, &b);
    CHECK_EQ_INT(a, lo);
    CHECK_EQ_INT(b, hi);
}

/* Prompts of 10 and 12 tokens on sequences 0 and 1 (their decode tokens
 * follow at 10 and 12); sequence 2 empty. */
static void two_prompts(ib__gen *g)
{
    ib_error err;
    CHECK(ok(g->ops->clear(g, &err), &err));
    CHECK(ok(g->ops->prefill(g, 0, 0, 10, &err), &err));
    CHECK(ok(g->ops->prefill(g, 1, 0, 12, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
}

/* The logits of batch index i of the last decode, copied to out. */
static bool logits_at(ib__gen *g, int32_t i, float *out)
{
    const float *l = ib__llama_probe_logits(g, i);
    if (l) memcpy(out, l, TINY_VOCAB * sizeof *out);
    return l != NULL;
}

static int argmax(const float *x)
{
    int best = 0;
    for (int i = 1; i < TINY_VOCAB; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* The same logits to rounding (a batch of other sizes may take other
 * kernels' order of sums), and the same next token. */
static void check_same(const float *a, const float *b)
{
    double worst = 0;
    for (int i = 0; i < TINY_VOCAB; i++) worst = fmax(worst, fabs((double)a[i] - b[i]));
    CHECK(worst < 1e-3);
    CHECK_EQ_INT(argmax(a), argmax(b));
}

/* Sequences 0 and 1 decoding a token each and 2's prompt chunk of 16, in
 * one batch, against each apart; the entries given in the order asked
 * (forward or reversed), the cache unified or one a sequence. The batch is
 * laid out by sequence id whatever the entries' order (fill_mixed): the
 * outputs by batch index are 0's token, 1's, then the chunk's last (17). */
static void mixed_as_apart(const char *kv_unified, bool reversed)
{
    ib__gen *g = NULL;
    ib_error err;
    CHECK(ok(open_tiny_with(3, 64, NULL, kv_unified, &g, &err), &err));
    if (!g) return;
    static float together[3][TINY_VOCAB], apart[3][TINY_VOCAB];
    two_prompts(g);
    const ib__gen_batch_entry mixed[] = { { 0, 10, 1, true, 0, 0 },
                                          { 1, 12, 1, true, 1, 0 },
                                          { 2, 0, 16, true, 2, 0 } };
    const ib__gen_batch_entry backwards[] = { mixed[2], mixed[1], mixed[0] };
    CHECK(ok(g->ops->decode_batch(g, reversed ? backwards : mixed, 3, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    CHECK(logits_at(g, 0, together[0]) && logits_at(g, 1, together[1]) && logits_at(g, 17, together[2]));
    check_positions(g, 0, 0, 10);
    check_positions(g, 1, 0, 12);
    check_positions(g, 2, 0, 15);
    two_prompts(g);
    for (int k = 0; k < 3; k++) {
        CHECK(ok(g->ops->decode_batch(g, &mixed[k], 1, &err), &err));
        CHECK(ok(g->ops->synchronize(g, &err), &err));
        CHECK(logits_at(g, mixed[k].n_tokens - 1, apart[k]));
    }
    for (int k = 0; k < 3; k++) check_same(together[k], apart[k]);
    /* The chunk as the prefill op feeds it: the same tokens. */
    CHECK(ok(g->ops->remove_sequence(g, 2, 0, &err), &err));
    CHECK(ok(g->ops->prefill(g, 2, 0, 16, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    CHECK(logits_at(g, -1, apart[2]));
    check_same(together[2], apart[2]);
    ib__gen_destroy(g);
}

static void test_mixed_batch_as_apart(void) { mixed_as_apart(NULL, false); }
static void test_mixed_batch_by_sequence(void) { mixed_as_apart(NULL, true); }
static void test_mixed_batch_unified(void) { mixed_as_apart("on", true); }

/* serve --sampling greedy on llama.cpp: after a mixed batch (given
 * reversed), sample(seq) takes the argmax of that sequence's output
 * wherever the batch laid it, and the next step feeds it; a sequence
 * without an output in the batch has nothing to sample. */
static void test_mixed_batch_sampled(void)
{
    ib__gen *g = NULL;
    ib_error err;
    CHECK(ok(open_tiny(4, 64, NULL, &g, &err), &err));
    if (!g) return;
    static float out[3][TINY_VOCAB];
    two_prompts(g);
    const ib__gen_batch_entry backwards[] = { { 2, 0, 16, true, 2, 0 },
                                              { 1, 12, 1, true, 1, 0 },
                                              { 0, 10, 1, true, 0, 0 } };
    CHECK(ok(g->ops->decode_batch(g, backwards, 3, &err), &err));
    CHECK(ok(g->ops->synchronize(g, &err), &err));
    CHECK(logits_at(g, 0, out[0]) && logits_at(g, 1, out[1]) && logits_at(g, 17, out[2]));
    for (int32_t s = 0; s < 3; s++) CHECK(ok(g->ops->sample(g, s, &err), &err));
    CHECK(g->ops->sample(g, 3, &err) == IB_ERR_INVALID_ARG);
    CHECK(!strcmp(err.message, "llama: no logits of sequence 3 to sample from"));
    const ib__gen_batch_entry next[] = { { 2, 16, 1, true, 2, 0 },
                                         { 0, 11, 1, true, 0, 0 },
                                         { 1, 13, 1, true, 1, 0 } };
    CHECK(ok(g->ops->decode_batch(g, next, 3, &err), &err));
    for (int32_t i = 0; i < 3; i++) CHECK_EQ_INT(ib__llama_probe_batch_token(g, i), argmax(out[i]));
    ib__gen_destroy(g);
}

/* kv_unified: on or off, said back in the options; anything else refused. */
static void test_kv_unified_option(void)
{
    ib__gen *g = NULL;
    ib_error err;
    CHECK(ok(open_tiny_with(2, 64, NULL, "on", &g, &err), &err));
    if (!g) return;
    const char *said = ib_option_list_get(&g->info.options, "kv_unified");
    CHECK(said && !strcmp(said, "on"));
    ib__gen_destroy(g);
    CHECK(open_tiny_with(2, 64, NULL, "yes", &g, &err) == IB_ERR_INVALID_ARG);
    CHECK(!strcmp(err.message, "llama: option kv_unified=yes: expected on or off"));
}

/* remove_sequence empties one sequence, the others kept; the sequence is
 * then filled from 0 again. */
static void test_remove_sequence(void)
{
    ib__gen *g = NULL;
    ib_error err;
    CHECK(ok(open_tiny(3, 64, NULL, &g, &err), &err));
    if (!g) return;
    two_prompts(g);
    CHECK(ok(g->ops->remove_sequence(g, 0, 0, &err), &err));
    check_positions(g, 0, -1, -1);
    check_positions(g, 1, 0, 11);
    const ib__gen_batch_entry again[] = { { 0, 0, 5, false, 0, 0 }, { 1, 12, 1, true, 1, 0 } };
    CHECK(ok(g->ops->decode_batch(g, again, 2, &err), &err));
    check_positions(g, 0, 0, 4);
    check_positions(g, 1, 0, 12);
    CHECK(g->ops->remove_sequence(g, 3, 0, &err) == IB_ERR_INVALID_ARG);
    CHECK(g->ops->remove_sequence(g, -1, 0, &err) == IB_ERR_INVALID_ARG);
    ib__gen_destroy(g);
}

/* The ids of a prompt chunk of request 5, then of request 6 on the same
 * sequence: n of them, copied to out. */
static void chunk_ids(ib__gen *g, uint32_t request, int32_t shared, int32_t n, int32_t *out)
{
    ib_error err;
    CHECK(ok(g->ops->remove_sequence(g, 0, 0, &err), &err));
    const ib__gen_batch_entry chunk[] = { { 0, 0, n, true, request, shared } };
    CHECK(ok(g->ops->decode_batch(g, chunk, 1, &err), &err));
    for (int32_t i = 0; i < n; i++) out[i] = ib__llama_probe_batch_token(g, i);
}

static int32_t same_ids(const int32_t *a, const int32_t *b, int32_t from, int32_t to)
{
    int32_t n = 0;
    for (int32_t i = from; i < to; i++) n += a[i] == b[i];
    return n;
}

/* Each request's prompt is its own (the sequence it is decoded on does
 * not choose its ids), fixed by the seed; below shared positions every
 * request's are alike (--shared-prefix). */
static void test_ids_per_request(void)
{
    ib__gen *g = NULL;
    ib_error err;
    CHECK(ok(open_tiny(1, 64, NULL, &g, &err), &err));
    if (!g) return;
    int32_t five[16], six[16], again[16], five_shared[16], six_shared[16];
    chunk_ids(g, 5, 0, 16, five);
    chunk_ids(g, 6, 0, 16, six);
    chunk_ids(g, 5, 0, 16, again);
    CHECK_EQ_INT(same_ids(five, again, 0, 16), 16);
    CHECK(same_ids(five, six, 0, 16) <= 1); /* ids of a vocabulary of 2048: one may coincide */
    chunk_ids(g, 5, 6, 16, five_shared);
    chunk_ids(g, 6, 6, 16, six_shared);
    CHECK_EQ_INT(same_ids(five_shared, six_shared, 0, 6), 6);
    CHECK(same_ids(five_shared, six_shared, 6, 16) <= 1);
    CHECK_EQ_INT(same_ids(five_shared, five, 6, 16), 10); /* past the prefix: the request's own */
    ib__gen_destroy(g);
}

/* remove_sequence from a position keeps the positions before it (the
 * prefix cache's trim), and the sequence goes on from there. */
static void test_trim_sequence(void)
{
    ib__gen *g = NULL;
    ib_error err;
    CHECK(ok(open_tiny(2, 64, NULL, &g, &err), &err));
    if (!g) return;
    two_prompts(g);
    CHECK(ok(g->ops->remove_sequence(g, 1, 4, &err), &err));
    check_positions(g, 1, 0, 3);
    check_positions(g, 0, 0, 9);
    const ib__gen_batch_entry rest[] = { { 1, 4, 6, true, 9, 4 } };
    CHECK(ok(g->ops->decode_batch(g, rest, 1, &err), &err));
    check_positions(g, 1, 0, 9);
    CHECK(g->ops->remove_sequence(g, 1, -1, &err) == IB_ERR_INVALID_ARG);
    ib__gen_destroy(g);
}

/* Entries past the context or of no sequence, more tokens than n_batch,
 * an empty batch: refused with a line, nothing decoded. */
static void test_bad_batches(void)
{
    ib__gen *g = NULL;
    ib_error err;
    CHECK(ok(open_tiny(2, 64, "16", &g, &err), &err));
    if (!g) return;
    CHECK_EQ_INT(g->info.n_batch, 16);
    const ib__gen_batch_entry past[] = { { 0, 250, 10, true, 0, 0 } }; /* a sequence holds 256 cells */
    CHECK(g->ops->decode_batch(g, past, 1, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "beyond the context") != NULL);
    const ib__gen_batch_entry no_seq[] = { { 2, 0, 1, true, 2, 0 } };
    CHECK(g->ops->decode_batch(g, no_seq, 1, &err) == IB_ERR_INVALID_ARG);
    const ib__gen_batch_entry too_many[] = { { 0, 0, 10, false, 0, 0 }, { 1, 0, 7, true, 1, 0 } };
    CHECK(g->ops->decode_batch(g, too_many, 2, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "n_batch") != NULL);
    CHECK(g->ops->decode_batch(g, too_many, 0, &err) == IB_ERR_INVALID_ARG);
    const ib__gen_batch_entry twice[] = { { 1, 0, 3, true, 1, 0 }, { 1, 3, 1, true, 1, 0 } };
    CHECK(g->ops->decode_batch(g, twice, 2, &err) == IB_ERR_INVALID_ARG);
    CHECK(!strcmp(err.message, "llama: sequence 1 twice in a mixed batch"));
    CHECK(g->ops->decode_batch(g, no_seq, 1, &err) == IB_ERR_INVALID_ARG); /* the first check left no mark */
    CHECK(strstr(err.message, "the context holds 2") != NULL);
    check_positions(g, 0, -1, -1);
    check_positions(g, 1, -1, -1);
    ib__gen_destroy(g);
}

/* The engine on llama.cpp: every request's tokens generated, and no
 * sequence left in the KV cache after the run (each removed as it ended). */
static void test_served_leaves_nothing(void)
{
    ib__gen *g = NULL;
    ib_error err;
    CHECK(ok(open_tiny(1, 64, NULL, &g, &err), &err));
    if (!g) return;
    const ib_gen_request_spec trace[] = { { 0, 12, 3 }, { 0, 30, 5 }, { 0, 7, 1 }, { 0.5, 20, 4 } };
    ib_gen_serve_config c;
    ib_gen_serve_config_init(&c);
    c.arrivals = IB_ARRIVALS_TRACE;
    c.trace = trace;
    c.n_trace = 4;
    c.slots = 3;
    c.prefill_chunk = 8;
    c.warmup_requests = 2;
    ib_gen_serve_result r;
    CHECK(ok(ib_measure_gen_serve(g, &c, &r, &err), &err));
    CHECK_EQ_INT(r.n_completed, 4);
    for (size_t i = 0; i < r.n_requests; i++)
        CHECK_EQ_INT(r.requests[i].generated_tokens, trace[i].output_tokens);
    CHECK_EQ_INT(g->info.n_seq_max, 3);
    for (int32_t s = 0; s < 3; s++) check_positions(g, s, -1, -1);
    ib_gen_serve_result_free(&r);
    /* The prompts' first 7 tokens shared, the pitfalls measured: the
     * slots' kept cells reused (the warm-up's left the shared prefix in
     * them), and still nothing left after the run and every row's. */
    c.shared_prefix = 7;
    c.pitfalls = true;
    CHECK(ok(ib_measure_gen_serve(g, &c, &r, &err), &err));
    CHECK_EQ_INT(r.n_completed, 4);
    CHECK(r.cached_tokens > 0);
    for (size_t i = 0; i < r.n_requests; i++) /* the prefix, but never a prompt's last token */
        CHECK(r.requests[i].cached_tokens <= (trace[i].prompt_tokens <= 7 ? trace[i].prompt_tokens - 1 : 7));
    for (int k = 0; k < IB_GEN_SERVE_PITFALL_COUNT; k++) CHECK(r.pitfalls[k].status == IB_OK);
    for (int32_t s = 0; s < 3; s++) check_positions(g, s, -1, -1);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    const char *t = getenv("IB_TEST_TMP");
    char tmp_dir[1024];
    snprintf(tmp_dir, sizeof tmp_dir, "%s/llama-batch-%ld", t ? t : "/tmp", (long)getpid());
    mkdir(tmp_dir, 0755);
    snprintf(cache_dir, sizeof cache_dir, "%s/zoo", tmp_dir);
    ib__gen *g = NULL;
    ib_error err;
    ib_status st = open_tiny(1, 64, NULL, &g, &err);
    if (st != IB_OK &&
        (strstr(err.message, "no llama.cpp library") || strstr(err.message, "without the llama"))) {
        printf("SKIP: %s\n", err.message);
        return 77;
    }
    ib__gen_destroy(g);
    RUN(test_mixed_batch_as_apart);
    RUN(test_mixed_batch_by_sequence);
    RUN(test_mixed_batch_unified);
    RUN(test_kv_unified_option);
    RUN(test_mixed_batch_sampled);
    RUN(test_remove_sequence);
    RUN(test_ids_per_request);
    RUN(test_trim_sequence);
    RUN(test_bad_batches);
    RUN(test_served_leaves_nothing);
    return check_summary("test_llama_batch");
}
