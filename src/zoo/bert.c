/* BERT-base encoder as HuggingFace BertModel (with its pooler), exported the
 * way such models usually are: MatMul + Add for every Linear (weights in
 * [in, out] layout), LayerNormalization, GELU in its erf form, Softmax.
 *
 * One input, input_ids int64 [batch, sequence]. Position ids 0..sequence-1
 * are made inside the graph (Range over the sequence length) and gathered
 * from the position table; token type ids are all zero, so their embedding is row 0 of the
 * token type table, broadcast. There is no attention mask: every token
 * attends to every other. 109,482,240 parameters, all stored. */
#include "zoo/models.h"

#include <math.h>
#include <stdio.h>

enum {
    VOCAB = 30522,
    POSITIONS = 512,
    TOKEN_TYPES = 2,
    HIDDEN = 768,
    LAYERS = 12,
    HEADS = 12,
    HEAD_DIM = HIDDEN / HEADS,
    FFN = 3072
};

static const float LAYER_NORM_EPS = 1e-12f;
static const float EMBEDDING_BOUND = 0.05f; /* HF initialises with std 0.02 */

/* Tokens per item at the default shape: what the MAC count assumes. */
static const int64_t SEQ = IB__BERT_DEFAULT_SEQUENCE;

/* x [.., in] @ W [in, out] + b, applied to `rows` vectors per item. */
static const char *linear(ib__graph *g, const char *prefix, const char *x, int64_t in, int64_t out,
                          int64_t rows)
{
    char name[96];
    float bound = 1.0f / sqrtf((float)in);
    ib__namef(g, name, sizeof name, "%s.weight", prefix);
    const char *w = ib__graph_weight(g, name, 2, (int64_t[]){ in, out }, 0.0f, bound);
    ib__namef(g, name, sizeof name, "%s.bias", prefix);
    const char *b = ib__graph_weight(g, name, 1, (int64_t[]){ out }, 0.0f, bound);
    g->params += in * out + out;
    g->macs += rows * in * out;
    return ib__op2(g, "Add", ib__op2(g, "MatMul", x, w), b);
}

/* LayerNorm over the hidden dimension: a weight near 1, a bias near 0. */
static const char *layer_norm(ib__graph *g, const char *prefix, const char *x)
{
    char name[96];
    ib__namef(g, name, sizeof name, "%s.weight", prefix);
    const char *w = ib__graph_weight(g, name, 1, (int64_t[]){ HIDDEN }, 1.0f, 0.05f);
    ib__namef(g, name, sizeof name, "%s.bias", prefix);
    const char *b = ib__graph_weight(g, name, 1, (int64_t[]){ HIDDEN }, 0.0f, 0.05f);
    g->params += 2 * HIDDEN;
    Onnx__NodeProto *node = ib__graph_node(g, "LayerNormalization", 3, (const char *[]){ x, w, b });
    ib__attr_int(g, node, "axis", -1);
    ib__attr_float(g, node, "epsilon", LAYER_NORM_EPS);
    return ib__node_output(node);
}

static const char *transpose(ib__graph *g, const char *x, const int64_t perm[4])
{
    Onnx__NodeProto *node = ib__graph_node(g, "Transpose", 1, (const char *[]){ x });
    ib__attr_ints(g, node, "perm", 4, perm);
    return ib__node_output(node);
}

/* [batch, seq, HIDDEN] -> [batch, seq, HEADS, HEAD_DIM] -> transposed. */
static const char *split_heads(ib__graph *g, const char *x, const int64_t perm[4])
{
    /* 0 in a Reshape target copies that input dimension (batch, seq). */
    const char *shape = ib__graph_const_ints(g, 1, 4, (int64_t[]){ 0, 0, HEADS, HEAD_DIM });
    return transpose(g, ib__op2(g, "Reshape", x, shape), perm);
}

/* Multi-head self-attention, then its output Linear. */
static const char *self_attention(ib__graph *g, const char *prefix, const char *x)
{
    static const int64_t to_heads[4] = { 0, 2, 1, 3 };    /* [b, heads, seq, dim] */
    static const int64_t to_heads_kt[4] = { 0, 2, 3, 1 }; /* [b, heads, dim, seq] */
    char name[96];

    ib__namef(g, name, sizeof name, "%s.self.query", prefix);
    const char *q = split_heads(g, linear(g, name, x, HIDDEN, HIDDEN, SEQ), to_heads);
    ib__namef(g, name, sizeof name, "%s.self.key", prefix);
    const char *kt = split_heads(g, linear(g, name, x, HIDDEN, HIDDEN, SEQ), to_heads_kt);
    ib__namef(g, name, sizeof name, "%s.self.value", prefix);
    const char *v = split_heads(g, linear(g, name, x, HIDDEN, HIDDEN, SEQ), to_heads);

    /* softmax(Q K^T / sqrt(HEAD_DIM)) V: two batched products of
     * SEQ x SEQ x HEAD_DIM per head. */
    const char *scores = ib__op2(g, "MatMul", q, kt);
    scores = ib__op2(g, "Div", scores, ib__graph_const_float(g, sqrtf((float)HEAD_DIM)));
    Onnx__NodeProto *softmax = ib__graph_node(g, "Softmax", 1, (const char *[]){ scores });
    ib__attr_int(g, softmax, "axis", -1);
    const char *context = ib__op2(g, "MatMul", ib__node_output(softmax), v);
    g->macs += 2 * HEADS * SEQ * SEQ * HEAD_DIM;

    context = transpose(g, context, to_heads); /* back to [b, seq, heads, dim] */
    const char *merged_shape = ib__graph_const_ints(g, 1, 3, (int64_t[]){ 0, 0, HIDDEN });
    context = ib__op2(g, "Reshape", context, merged_shape);
    ib__namef(g, name, sizeof name, "%s.output.dense", prefix);
    return linear(g, name, context, HIDDEN, HIDDEN, SEQ);
}

/* GELU, erf form: x * 0.5 * (1 + erf(x / sqrt(2))). Spelled as PyTorch
 * exports it, the pattern runtimes fuse into one Gelu kernel. */
static const char *gelu(ib__graph *g, const char *x)
{
    const char *e = ib__op1(g, "Erf", ib__op2(g, "Div", x, ib__graph_const_float(g, sqrtf(2.0f))));
    const char *y = ib__op2(g, "Mul", x, ib__op2(g, "Add", e, ib__graph_const_float(g, 1.0f)));
    return ib__op2(g, "Mul", y, ib__graph_const_float(g, 0.5f));
}

/* One encoder layer: attention and feed-forward, each with a residual and a
 * post-LayerNorm. */
static const char *encoder_layer(ib__graph *g, int index, const char *x)
{
    char prefix[64], name[96];
    ib__namef(g, prefix, sizeof prefix, "encoder.layer.%d", index);

    ib__namef(g, name, sizeof name, "%s.attention", prefix);
    const char *attn = self_attention(g, name, x);
    ib__namef(g, name, sizeof name, "%s.attention.output.LayerNorm", prefix);
    x = layer_norm(g, name, ib__op2(g, "Add", attn, x));

    ib__namef(g, name, sizeof name, "%s.intermediate.dense", prefix);
    const char *h = gelu(g, linear(g, name, x, HIDDEN, FFN, SEQ));
    ib__namef(g, name, sizeof name, "%s.output.dense", prefix);
    h = linear(g, name, h, FFN, HIDDEN, SEQ);
    ib__namef(g, name, sizeof name, "%s.output.LayerNorm", prefix);
    return layer_norm(g, name, ib__op2(g, "Add", h, x));
}

/* word + position + token type embeddings, then LayerNorm. */
static const char *embeddings(ib__graph *g, const char *input_ids)
{
    const float b = EMBEDDING_BOUND;
    const char *word =
        ib__graph_weight(g, "embeddings.word_embeddings.weight", 2, (int64_t[]){ VOCAB, HIDDEN }, 0.0f, b);
    const char *pos = ib__graph_weight(g, "embeddings.position_embeddings.weight", 2,
                                       (int64_t[]){ POSITIONS, HIDDEN }, 0.0f, b);
    const char *type = ib__graph_weight(g, "embeddings.token_type_embeddings.weight", 2,
                                        (int64_t[]){ TOKEN_TYPES, HIDDEN }, 0.0f, b);
    g->params += (int64_t)(VOCAB + POSITIONS + TOKEN_TYPES) * HIDDEN;

    const char *words = ib__op2(g, "Gather", word, input_ids); /* [b, seq, H] */

    /* Positions 0..seq-1: rows Range(0, seq) of the table, [seq, H]. */
    const char *shape = ib__node_output(ib__graph_node(g, "Shape", 1, (const char *[]){ input_ids }));
    const char *seq_len = ib__op2(g, "Gather", shape, ib__graph_const_ints(g, 0, 1, (int64_t[]){ 1 }));
    const char *ids = ib__node_output(
        ib__graph_node(g, "Range", 3,
                       (const char *[]){ ib__graph_const_ints(g, 0, 1, (int64_t[]){ 0 }), seq_len,
                                         ib__graph_const_ints(g, 0, 1, (int64_t[]){ 1 }) }));
    const char *positions = ib__op2(g, "Gather", pos, ids);

    /* Token type ids all 0: every token adds row 0, [H]. */
    const char *zero = ib__graph_const_ints(g, 0, 1, (int64_t[]){ 0 });
    const char *types = ib__op2(g, "Gather", type, zero);

    const char *sum = ib__op2(g, "Add", ib__op2(g, "Add", words, positions), types);
    return layer_norm(g, "embeddings.LayerNorm", sum);
}

/* tanh(Linear(hidden state of the first token)). */
static const char *pooler(ib__graph *g, const char *hidden)
{
    const char *zero = ib__graph_const_ints(g, 0, 1, (int64_t[]){ 0 });
    Onnx__NodeProto *first = ib__graph_node(g, "Gather", 2, (const char *[]){ hidden, zero });
    ib__attr_int(g, first, "axis", 1); /* [b, H] */
    const char *dense = linear(g, "pooler.dense", ib__node_output(first), HIDDEN, HIDDEN, 1);
    return ib__op1(g, "Tanh", dense);
}

void ib__zoo_build_bert_base(ib__graph *g)
{
    ib__graph_input(g, "input_ids", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, "batch,sequence");
    const char *x = embeddings(g, "input_ids");
    for (int i = 0; i < LAYERS; i++) x = encoder_layer(g, i, x);

    /* Name the encoder's output first: the pooler reads it under that name. */
    ib__graph_output(g, x, "last_hidden_state", g->float_type, "batch,sequence,768");
    const char *pooled = pooler(g, "last_hidden_state");
    ib__graph_output(g, pooled, "pooler_output", g->float_type, "batch,768");
}
