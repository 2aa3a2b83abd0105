/* The zoo's generative models: decoder-only transformers of the Llama
 * architecture, described as GGUF files describe them (the keys, the
 * tensors' names and dimensions in ggml's order), with their random
 * weights (a fixed seed). The zoo knows no runtime: a backend writes the
 * file from this description through its runtime's GGUF writer. */
#ifndef IB_ZOO_LM_H
#define IB_ZOO_LM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ib__lm_arch {
    const char *name;        /* "llama-3.2-1b" */
    const char *description; /* one line */
    int32_t n_layer, n_embd, n_head, n_head_kv, n_ff, n_vocab, n_ctx_train;
    float rope_freq_base, rms_eps;
} ib__lm_arch;

size_t ib__lm_count(void);
const ib__lm_arch *ib__lm_get(size_t i);
const ib__lm_arch *ib__lm_find(const char *name);

/* One tensor of the model: its GGUF name, dimensions (ne[0] the row
 * length, as ggml counts), and whether it is a norm's weight (stored as
 * float32 and all ones; the others float16, random). */
typedef struct ib__lm_tensor {
    char name[48];
    int n_dims;
    int64_t ne[2];
    bool norm;
} ib__lm_tensor;

/* The tensors of a, in the file's order: 3 + 9 per layer. */
size_t ib__lm_n_tensors(const ib__lm_arch *a);
void ib__lm_tensor_at(const ib__lm_arch *a, size_t i, ib__lm_tensor *out);
int64_t ib__lm_elements(const ib__lm_tensor *t);
/* Parameters of a: the elements of all its tensors. */
int64_t ib__lm_params(const ib__lm_arch *a);

/* Values first..first+n-1 (row-major in ggml's order) of tensor i, from
 * the seed: uniform in +-1/sqrt(row length) for weights, 1 for norms. */
void ib__lm_values(const ib__lm_arch *a, size_t i, uint64_t seed, int64_t first, size_t n, float *out);

/* The vocabulary, a Llama SentencePiece one of made-up pieces
 * (docs/backend-llama.md, "The zoo's GGUF files"): a server that turns
 * every generated token into text (llama-server) can serve the model,
 * and the tokens stay what they are to the in-process method (random ids
 * below n_vocab). Ids: 0 "<unk>", 1 "<s>" (begin), 2 "</s>" (end), 3..258
 * the bytes "<0x00>".."<0xFF>", then made-up pieces up to n_vocab: the
 * word-start mark U+2581 and letters ("_a", ..., "_z", "_aa", ...). */
enum {
    IB__LM_TOKEN_UNK = 0,
    IB__LM_TOKEN_BOS = 1,
    IB__LM_TOKEN_EOS = 2,
    IB__LM_FIRST_BYTE = 3,
    IB__LM_FIRST_PIECE = IB__LM_FIRST_BYTE + 256,
};
/* GGUF's tokenizer.ggml.token_type values (llama.h's llama_token_type). */
enum ib__lm_token_type {
    IB__LM_TYPE_NORMAL = 1,
    IB__LM_TYPE_UNKNOWN = 2,
    IB__LM_TYPE_CONTROL = 3,
    IB__LM_TYPE_BYTE = 6,
};
typedef struct ib__lm_token {
    char piece[16]; /* UTF-8 */
    float score;    /* SentencePiece's log-probability: 0 for the special and byte tokens */
    int32_t type;   /* enum ib__lm_token_type */
} ib__lm_token;

/* Token id (0 <= id < a->n_vocab, which is more than IB__LM_FIRST_PIECE). */
void ib__lm_token_at(const ib__lm_arch *a, int32_t id, ib__lm_token *out);

/* The weights' seed of every zoo file (as the ONNX zoo's). */
#define IB__LM_SEED 0x1b5eedu

#endif
