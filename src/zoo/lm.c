/* The zoo's generative models (lm.h): shapes and random weights. */
#include "zoo/lm.h"
#include "inferbench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const ib__lm_arch archs[] = {
    /* Llama 3.2 1B's shape (its config.json), with an output matrix of its
     * own rather than tied to the embedding: 1.50 B parameters. */
    { "llama-3.2-1b",
      "Llama 3.2 1B's shape (16 layers, 2048 wide, GQA 32/8 heads, FFN 8192, vocabulary 128,256)", 16, 2048,
      32, 8, 8192, 128256, 131072, 500000.0f, 1e-5f },
    /* A few MB: loads and decodes in milliseconds on a CPU (the tests).
     * 256 wide so that every matrix row holds whole Q4_K blocks. */
    { "llama-tiny", "a tiny Llama (2 layers, 256 wide, GQA 4/2 heads, FFN 512, vocabulary 2048) for tests", 2,
      256, 4, 2, 512, 2048, 4096, 10000.0f, 1e-5f },
};

static const size_t n_archs = sizeof archs / sizeof archs[0];

size_t ib__lm_count(void) { return n_archs; }

const ib__lm_arch *ib__lm_get(size_t i) { return i < n_archs ? &archs[i] : NULL; }

const ib__lm_arch *ib__lm_find(const char *name)
{
    for (size_t i = 0; name && i < n_archs; i++)
        if (!strcmp(archs[i].name, name)) return &archs[i];
    return NULL;
}

enum { GLOBAL_TENSORS = 3, LAYER_TENSORS = 9 };

size_t ib__lm_n_tensors(const ib__lm_arch *a) { return GLOBAL_TENSORS + (size_t)a->n_layer * LAYER_TENSORS; }

static void set(ib__lm_tensor *t, const char *name, int64_t ne0, int64_t ne1)
{
    snprintf(t->name, sizeof t->name, "%s", name);
    t->n_dims = ne1 ? 2 : 1;
    t->ne[0] = ne0;
    t->ne[1] = ne1 ? ne1 : 1;
    t->norm = ne1 == 0;
}

/* llama.cpp's names (LLM_TENSOR_NAMES of the llama architecture); a
 * matrix's ne[0] is its input width. */
void ib__lm_tensor_at(const ib__lm_arch *a, size_t i, ib__lm_tensor *out)
{
    int64_t e = a->n_embd, kv = (int64_t)a->n_embd / a->n_head * a->n_head_kv, ff = a->n_ff;
    if (i < GLOBAL_TENSORS) {
        static const char *const global[GLOBAL_TENSORS] = { "token_embd.weight", "output_norm.weight",
                                                            "output.weight" };
        set(out, global[i], e, i == 1 ? 0 : a->n_vocab);
        return;
    }
    size_t layer = (i - GLOBAL_TENSORS) / LAYER_TENSORS, k = (i - GLOBAL_TENSORS) % LAYER_TENSORS;
    static const char *const names[LAYER_TENSORS] = { "attn_norm", "attn_q",      "attn_k",
                                                      "attn_v",    "attn_output", "ffn_norm",
                                                      "ffn_gate",  "ffn_down",    "ffn_up" };
    const int64_t shapes[LAYER_TENSORS][2] = { { e, 0 }, { e, e },  { e, kv }, { e, kv }, { e, e },
                                               { e, 0 }, { e, ff }, { ff, e }, { e, ff } };
    char name[48];
    snprintf(name, sizeof name, "blk.%zu.%s.weight", layer, names[k]);
    set(out, name, shapes[k][0], shapes[k][1]);
}

int64_t ib__lm_elements(const ib__lm_tensor *t) { return t->ne[0] * t->ne[1]; }

int64_t ib__lm_params(const ib__lm_arch *a)
{
    int64_t n = 0;
    ib__lm_tensor t;
    for (size_t i = 0; i < ib__lm_n_tensors(a); i++) {
        ib__lm_tensor_at(a, i, &t);
        n += ib__lm_elements(&t);
    }
    return n;
}

/* splitmix64 of the seed, the tensor and the element: any range of a
 * tensor can be generated alone, so that a large file is written in
 * pieces with the values it would have in one. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

void ib__lm_values(const ib__lm_arch *a, size_t i, uint64_t seed, int64_t first, size_t n, float *out)
{
    ib__lm_tensor t;
    ib__lm_tensor_at(a, i, &t);
    if (t.norm) {
        for (size_t k = 0; k < n; k++) out[k] = 1.0f;
        return;
    }
    float scale = 1.0f / sqrtf((float)t.ne[0]);
    uint64_t base = mix(seed ^ mix((uint64_t)i + 1));
    for (size_t k = 0; k < n; k++) {
        uint64_t r = mix(base + (uint64_t)first + k);
        out[k] = scale * (float)((double)(r >> 11) * 0x1.0p-52 - 1.0); /* [-1, 1) */
    }
}

void ib__lm_token_at(const ib__lm_arch *a, int32_t id, ib__lm_token *out)
{
    (void)a; /* every model's vocabulary begins alike; n_vocab says where it ends */
    static const char *const special[IB__LM_FIRST_BYTE] = { "<unk>", "<s>", "</s>" };
    *out = (ib__lm_token){ .score = 0.0f, .type = IB__LM_TYPE_NORMAL };
    if (id < IB__LM_FIRST_BYTE) {
        snprintf(out->piece, sizeof out->piece, "%s", special[id]);
        out->type = id == IB__LM_TOKEN_UNK ? IB__LM_TYPE_UNKNOWN : IB__LM_TYPE_CONTROL;
        return;
    }
    if (id < IB__LM_FIRST_PIECE) {
        snprintf(out->piece, sizeof out->piece, "<0x%02X>", (unsigned)(id - IB__LM_FIRST_BYTE));
        out->type = IB__LM_TYPE_BYTE;
        return;
    }
    /* The k-th made-up piece: the word-start mark U+2581 and k in
     * bijective base 26 (a..z, aa..zz, ...): each piece distinct, a later
     * one less likely, as SentencePiece orders its pieces. */
    int32_t k = id - IB__LM_FIRST_PIECE;
    char letters[8];
    size_t n = 0;
    for (int32_t left = k + 1; left > 0 && n < sizeof letters; left = (left - 1) / 26)
        letters[n++] = (char)('a' + (left - 1) % 26);
    size_t at = (size_t)snprintf(out->piece, sizeof out->piece, "\xe2\x96\x81");
    while (n > 0 && at + 1 < sizeof out->piece) out->piece[at++] = letters[--n];
    out->piece[at] = '\0';
    out->score = -(float)k;
}

/* --- the public listing (inferbench.h) ------------------------------------- */

static ib_zoo_lm_entry entries[sizeof archs / sizeof archs[0]];

static void fill_entries(void)
{
    for (size_t i = 0; i < n_archs; i++) {
        const ib__lm_arch *a = &archs[i];
        entries[i] = (ib_zoo_lm_entry){ a->name,   a->description, ib__lm_params(a), a->n_layer, a->n_embd,
                                        a->n_head, a->n_head_kv,   a->n_ff,          a->n_vocab };
    }
}

size_t ib_zoo_lm_count(void) { return n_archs; }

const ib_zoo_lm_entry *ib_zoo_lm_get(size_t index)
{
    if (index >= n_archs) return NULL;
    fill_entries();
    return &entries[index];
}

const ib_zoo_lm_entry *ib_zoo_lm_find(const char *name)
{
    if (!name) return NULL;
    size_t n = strcspn(name, "?");
    for (size_t i = 0; i < n_archs; i++)
        if (strlen(archs[i].name) == n && !strncmp(archs[i].name, name, n)) return ib_zoo_lm_get(i);
    return NULL;
}
