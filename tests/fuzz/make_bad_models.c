/* Writes broken ONNX model files (and a few valid tiny ones) into a folder:
 * the inputs of tests/cli/bad_models.sh and the seed corpus of fuzz_onnx.
 *
 *   make_bad_models DIR        writes DIR/<case>.onnx for every case
 *   make_bad_models --list     prints the case names and what they are
 *
 * Models are built with the protobuf-c code generated from onnx.proto; the
 * byte-level cases (a huge length prefix, garbage) are written by hand.
 * docs/reliability.md lists the cases and what inferbench does with each. */
#include "onnx_fixtures.h"

#include "onnx/onnx.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F32 = 1, I64 = 7, STR = 8 };

/* ------------------------------------------------------------------------ */
/* A small graph builder, more general than the fixtures' (any number of     */
/* inputs, any rank, any number of node inputs).                             */
/* ------------------------------------------------------------------------ */

/* Every allocation of one build, freed together after packing. */
typedef struct arena {
    void *items[1024];
    size_t n;
    int failed;
} arena;

static void *alloc(arena *a, size_t size)
{
    void *p = calloc(1, size ? size : 1);
    if (!p || a->n == sizeof a->items / sizeof a->items[0]) {
        free(p);
        a->failed = 1;
        return NULL;
    }
    a->items[a->n++] = p;
    return p;
}

static char *str(arena *a, const char *s)
{
    char *p = alloc(a, strlen(s) + 1);
    if (p) strcpy(p, s);
    return p;
}

static void arena_free(arena *a)
{
    for (size_t i = 0; i < a->n; i++) free(a->items[i]);
    a->n = 0;
}

/* dims: comma-separated, a number fixed (may be negative), a name symbolic,
 * "" a scalar. */
static Onnx__ValueInfoProto *value(arena *a, const char *name, int elem_type, const char *dims)
{
    Onnx__ValueInfoProto *v = alloc(a, sizeof *v);
    Onnx__TypeProto *type = alloc(a, sizeof *type);
    Onnx__TypeProto__Tensor *tensor = alloc(a, sizeof *tensor);
    Onnx__TensorShapeProto *shape = alloc(a, sizeof *shape);
    Onnx__TensorShapeProto__Dimension **dim = alloc(a, 32 * sizeof *dim);
    if (!v || !type || !tensor || !shape || !dim) return NULL;
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(type);
    onnx__type_proto__tensor__init(tensor);
    onnx__tensor_shape_proto__init(shape);
    shape->dim = dim;
    for (const char *s = dims; *s && shape->n_dim < 32;) {
        size_t len = strcspn(s, ",");
        char tok[256];
        snprintf(tok, sizeof tok, "%.*s", (int)len, s);
        Onnx__TensorShapeProto__Dimension *d = alloc(a, sizeof *d);
        if (!d) return NULL;
        onnx__tensor_shape_proto__dimension__init(d);
        if ((tok[0] >= '0' && tok[0] <= '9') || tok[0] == '-') {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = strtoll(tok, NULL, 10);
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = str(a, tok);
        }
        dim[shape->n_dim++] = d;
        s += len;
        if (*s) s++;
    }
    tensor->has_elem_type = 1;
    tensor->elem_type = elem_type;
    tensor->shape = shape;
    type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type->tensor_type = tensor;
    v->name = str(a, name);
    v->type = type;
    return v;
}

/* inputs: NULL-terminated. */
static Onnx__NodeProto *node(arena *a, const char *op, const char *const *inputs, const char *output)
{
    Onnx__NodeProto *n = alloc(a, sizeof *n);
    char **in = alloc(a, 64 * sizeof *in);
    char **out = alloc(a, sizeof *out);
    if (!n || !in || !out) return NULL;
    onnx__node_proto__init(n);
    n->op_type = str(a, op);
    n->input = in;
    for (size_t i = 0; inputs[i] && i < 64; i++) in[n->n_input++] = str(a, inputs[i]);
    n->output = out;
    out[n->n_output++] = str(a, output);
    return n;
}

/* A float32 initializer of the given dims whose data holds data_floats
 * values (a mismatch on purpose where the case wants one). */
static Onnx__TensorProto *weight(arena *a, const char *name, const int64_t *dims, size_t rank,
                                 size_t data_floats)
{
    Onnx__TensorProto *t = alloc(a, sizeof *t);
    int64_t *d = alloc(a, rank * sizeof *d);
    float *data = alloc(a, data_floats * sizeof *data);
    if (!t || !d || !data) return NULL;
    onnx__tensor_proto__init(t);
    memcpy(d, dims, rank * sizeof *d);
    t->dims = d;
    t->n_dims = rank;
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->name = str(a, name);
    for (size_t i = 0; i < data_floats; i++) data[i] = 0.25f;
    t->has_raw_data = 1;
    t->raw_data.data = (uint8_t *)data;
    t->raw_data.len = data_floats * sizeof *data;
    return t;
}

typedef struct graph {
    Onnx__ValueInfoProto *inputs[64], *outputs[8];
    size_t n_inputs, n_outputs;
    Onnx__NodeProto *nodes[8];
    size_t n_nodes;
    Onnx__TensorProto *weights[4];
    size_t n_weights;
    int64_t ir_version, opset;
} graph;

static uint8_t *pack(arena *a, const graph *g, size_t *len)
{
    Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
    Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
    Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    Onnx__OperatorSetIdProto *opsets[1] = { &opset };
    opset.domain = "";
    opset.has_version = 1;
    opset.version = g->opset ? g->opset : 17;
    model.has_ir_version = 1;
    model.ir_version = g->ir_version ? g->ir_version : 8;
    model.producer_name = "inferbench-make-bad-models";
    model.opset_import = opsets;
    model.n_opset_import = 1;
    gp.name = "bad";
    gp.input = (Onnx__ValueInfoProto **)g->inputs;
    gp.n_input = g->n_inputs;
    gp.output = (Onnx__ValueInfoProto **)g->outputs;
    gp.n_output = g->n_outputs;
    gp.node = (Onnx__NodeProto **)g->nodes;
    gp.n_node = g->n_nodes;
    gp.initializer = (Onnx__TensorProto **)g->weights;
    gp.n_initializer = g->n_weights;
    model.graph = &gp;
    uint8_t *bytes = NULL;
    if (!a->failed) {
        *len = onnx__model_proto__get_packed_size(&model);
        bytes = malloc(*len ? *len : 1);
        if (bytes) onnx__model_proto__pack(&model, bytes);
    }
    arena_free(a);
    return bytes;
}

/* x float32[batch,16] -> op(inputs) -> y float32[batch,16] */
static uint8_t *one_node(const char *op, const char *const *inputs, size_t *len)
{
    arena a = { .n = 0 };
    graph g = { .n_inputs = 1, .n_outputs = 1, .n_nodes = 1 };
    g.inputs[0] = value(&a, "x", F32, "batch,16");
    g.outputs[0] = value(&a, "y", F32, "batch,16");
    g.nodes[0] = node(&a, op, inputs, "y");
    return pack(&a, &g, len);
}

/* x[dims] -> Identity -> y[dims] */
static uint8_t *identity(const char *input_name, int elem_type, const char *dims, size_t *len)
{
    arena a = { .n = 0 };
    graph g = { .n_inputs = 1, .n_outputs = 1, .n_nodes = 1 };
    g.inputs[0] = value(&a, input_name, elem_type, dims);
    g.outputs[0] = value(&a, "y", elem_type, dims);
    g.nodes[0] = node(&a, "Identity", (const char *const[]){ input_name, NULL }, "y");
    return pack(&a, &g, len);
}

/* ------------------------------------------------------------------------ */
/* The cases                                                                 */
/* ------------------------------------------------------------------------ */

static uint8_t *dup_bytes(const void *p, size_t n, size_t *len)
{
    uint8_t *b = malloc(n ? n : 1);
    if (b && n) memcpy(b, p, n);
    *len = n;
    return b;
}

static uint8_t *make_empty(size_t *len) { return dup_bytes("", 0, len); }

static uint8_t *make_text(size_t *len)
{
    static const char text[] = "this is not a model, it is a text file\n";
    return dup_bytes(text, sizeof text - 1, len);
}

/* Deterministic noise. */
static uint8_t *make_garbage(size_t *len)
{
    uint8_t *b = malloc(512);
    uint32_t s = 12345;
    for (size_t i = 0; b && i < 512; i++) {
        s = s * 1103515245u + 12345u;
        b[i] = (uint8_t)(s >> 16);
    }
    *len = 512;
    return b;
}

/* What people hand over by mistake: a PyTorch checkpoint is a zip file. */
static uint8_t *make_wrong_magic(size_t *len)
{
    static const uint8_t zip[] = { 'P', 'K', 3,   4,   20,  0,   0,   0,   8,   0,   'a', 'r', 'c',  'h',
                                   'i', 'v', 'e', '/', 'd', 'a', 't', 'a', '.', 'p', 'k', 'l', 0x80, 2 };
    return dup_bytes(zip, sizeof zip, len);
}

/* The first half of a valid model: a length prefix runs past the end. */
static uint8_t *make_truncated(size_t *len)
{
    uint8_t *b = fx_model_bytes("matmul", len);
    if (b) *len /= 2;
    return b;
}

/* ir_version 8, then field 7 (graph, length-delimited) declaring 2^40
 * bytes, followed by a few. */
static uint8_t *make_huge_length(size_t *len)
{
    uint8_t b[64];
    size_t n = 0;
    b[n++] = 0x08; /* field 1, varint: ir_version */
    b[n++] = 8;
    b[n++] = 0x3a; /* field 7, length-delimited: graph */
    uint64_t v = (uint64_t)1 << 40;
    while (v >= 0x80) {
        b[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (uint8_t)v;
    for (int i = 0; i < 16; i++) b[n++] = 0x0a;
    return dup_bytes(b, n, len);
}

/* Node A reads B's output and B reads A's: no order runs them. */
static uint8_t *make_cyclic(size_t *len)
{
    arena a = { .n = 0 };
    graph g = { .n_inputs = 1, .n_outputs = 1, .n_nodes = 2 };
    g.inputs[0] = value(&a, "x", F32, "batch,16");
    g.outputs[0] = value(&a, "a", F32, "batch,16");
    g.nodes[0] = node(&a, "Add", (const char *const[]){ "x", "b", NULL }, "a");
    g.nodes[1] = node(&a, "Add", (const char *const[]){ "a", "x", NULL }, "b");
    return pack(&a, &g, len);
}

static uint8_t *make_unknown_op(size_t *len)
{
    return one_node("FrobnicateXYZ", (const char *const[]){ "x", NULL }, len);
}

/* "ghost" is no graph input, initializer or node output. */
static uint8_t *make_missing_input(size_t *len)
{
    return one_node("Add", (const char *const[]){ "x", "ghost", NULL }, len);
}

static uint8_t *make_strings(size_t *len) { return fx_model_bytes("strings", len); }

/* x float32[batch,seq,16]: "seq" has no value unless --shape gives one. */
static uint8_t *make_unset_dim(size_t *len) { return fx_model_bytes("seq", len); }

/* 17 inputs: one more than the tool's tables hold (IB_MAX_TENSORS). */
static uint8_t *make_many_inputs(size_t *len)
{
    arena a = { .n = 0 };
    graph g = { .n_inputs = 17, .n_outputs = 1, .n_nodes = 1 };
    const char *names[18];
    static char buf[17][8];
    for (int i = 0; i < 17; i++) {
        snprintf(buf[i], sizeof buf[i], "x%d", i);
        names[i] = buf[i];
        g.inputs[i] = value(&a, buf[i], F32, "batch,4");
    }
    names[17] = NULL;
    g.outputs[0] = value(&a, "y", F32, "batch,4");
    g.nodes[0] = node(&a, "Sum", names, "y");
    return pack(&a, &g, len);
}

/* Rank 9: one more dimension than the tool's tables hold (IB_MAX_RANK). */
static uint8_t *make_high_rank(size_t *len) { return identity("x", F32, "batch,1,1,1,1,1,1,1,2", len); }

/* An input name longer than the tool's 128-character name field. */
static uint8_t *make_long_name(size_t *len)
{
    char name[301];
    memset(name, 'n', 300);
    name[300] = '\0';
    return identity(name, F32, "batch,4", len);
}

/* Fixed input dimensions whose product is 2^48 floats (1 PiB). */
static uint8_t *make_huge_input(size_t *len) { return identity("x", F32, "65536,65536,65536", len); }

static uint8_t *make_negative_dim(size_t *len) { return identity("x", F32, "batch,-5", len); }

/* An initializer that declares 2^40 elements and carries 4. */
static uint8_t *make_huge_initializer(size_t *len)
{
    arena a = { .n = 0 };
    graph g = { .n_inputs = 1, .n_outputs = 1, .n_nodes = 1, .n_weights = 1 };
    g.inputs[0] = value(&a, "x", F32, "batch,16");
    g.outputs[0] = value(&a, "y", F32, "batch,16");
    g.nodes[0] = node(&a, "Add", (const char *const[]){ "x", "W", NULL }, "y");
    const int64_t dims[2] = { (int64_t)1 << 20, (int64_t)1 << 20 };
    g.weights[0] = weight(&a, "W", dims, 2, 4);
    return pack(&a, &g, len);
}

/* A ModelProto with no graph. */
static uint8_t *make_no_graph(size_t *len)
{
    static const uint8_t b[] = { 0x08, 8, 0x12, 4, 't', 'e', 's', 't' };
    return dup_bytes(b, sizeof b, len);
}

static uint8_t *make_future_opset(size_t *len)
{
    arena a = { .n = 0 };
    graph g = { .n_inputs = 1, .n_outputs = 1, .n_nodes = 1, .opset = 9999 };
    g.inputs[0] = value(&a, "x", F32, "batch,16");
    g.outputs[0] = value(&a, "y", F32, "batch,16");
    g.nodes[0] = node(&a, "Relu", (const char *const[]){ "x", NULL }, "y");
    return pack(&a, &g, len);
}

/* Two nodes write the same tensor. */
static uint8_t *make_duplicate_output(size_t *len)
{
    arena a = { .n = 0 };
    graph g = { .n_inputs = 1, .n_outputs = 1, .n_nodes = 2 };
    g.inputs[0] = value(&a, "x", F32, "batch,16");
    g.outputs[0] = value(&a, "y", F32, "batch,16");
    g.nodes[0] = node(&a, "Relu", (const char *const[]){ "x", NULL }, "y");
    g.nodes[1] = node(&a, "Neg", (const char *const[]){ "x", NULL }, "y");
    return pack(&a, &g, len);
}

/* A graph with no input at all: nothing to feed, nothing to time but a
 * constant. */
static uint8_t *make_no_inputs(size_t *len)
{
    arena a = { .n = 0 };
    graph g = { .n_outputs = 1, .n_nodes = 0 };
    g.outputs[0] = value(&a, "y", F32, "batch,16");
    return pack(&a, &g, len);
}

static uint8_t *valid(const char *which, size_t *len) { return fx_model_bytes(which, len); }
static uint8_t *make_valid_matmul(size_t *len) { return valid("matmul", len); }
static uint8_t *make_valid_fixed(size_t *len) { return valid("fixed", len); }
static uint8_t *make_valid_ids(size_t *len) { return valid("ids", len); }
static uint8_t *make_valid_half(size_t *len) { return valid("half", len); }
static uint8_t *make_valid_lookup(size_t *len) { return valid("lookup", len); }
static uint8_t *make_valid_fixed1(size_t *len) { return valid("fixed1", len); }
static uint8_t *make_unranked(size_t *len) { return valid("unranked", len); }
static uint8_t *make_state(size_t *len) { return valid("state", len); }
static uint8_t *make_widen(size_t *len) { return valid("widen", len); }

typedef struct bad_case {
    const char *name;
    const char *what;
    uint8_t *(*make)(size_t *len);
} bad_case;

static const bad_case cases[] = {
    { "empty", "a 0-byte file", make_empty },
    { "text", "a text file", make_text },
    { "garbage", "512 bytes of noise", make_garbage },
    { "wrong_magic", "a zip file (a PyTorch checkpoint) named .onnx", make_wrong_magic },
    { "truncated", "the first half of a valid model", make_truncated },
    { "huge_length", "a protobuf length prefix of 2^40 bytes", make_huge_length },
    { "no_graph", "a ModelProto without a graph", make_no_graph },
    { "cyclic", "node A reads B's output and B reads A's", make_cyclic },
    { "unknown_op", "an operator no runtime knows (FrobnicateXYZ)", make_unknown_op },
    { "missing_input", "a node input nothing produces", make_missing_input },
    { "duplicate_output", "two nodes write the same tensor", make_duplicate_output },
    { "future_opset", "opset 9999", make_future_opset },
    { "strings", "a string input (unsupported element type)", make_strings },
    { "unset_dim", "a symbolic non-batch dimension (seq) left unset", make_unset_dim },
    { "many_inputs", "17 inputs, more than inferbench's 16", make_many_inputs },
    { "high_rank", "a rank-9 input, more than inferbench's 8 dimensions", make_high_rank },
    { "long_name", "an input name of 300 characters", make_long_name },
    { "huge_input", "fixed input dimensions of 2^48 floats", make_huge_input },
    { "negative_dim", "a fixed input dimension of -5", make_negative_dim },
    { "huge_initializer", "an initializer declaring 2^40 floats and holding 4", make_huge_initializer },
    { "no_inputs", "a graph without inputs or nodes", make_no_inputs },
    { "valid_matmul", "valid: x[batch,16] MatMul W[16,4]", make_valid_matmul },
    { "valid_fixed", "valid: fixed batch 2", make_valid_fixed },
    { "valid_ids", "valid: int64 inputs", make_valid_ids },
    { "valid_half", "valid: float16 input", make_valid_half },
    { "valid_lookup", "valid: int64 and float32 inputs used as Gather indices", make_valid_lookup },
    { "valid_fixed1", "valid: fixed batch 1", make_valid_fixed1 },
    { "unranked", "an input that declares no shape (no rank)", make_unranked },
    { "state", "x[batch,8] + s[1,?,8]: s's unnamed dimension meets the batch", make_state },
    { "widen", "x[batch,n,1] MatMul W[1,4096]: an intermediate 4096x the input", make_widen },
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_bad_models DIR | --list\n");
        return 2;
    }
    size_t n_cases = sizeof cases / sizeof cases[0];
    if (strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n_cases; i++) printf("%-18s %s\n", cases[i].name, cases[i].what);
        return 0;
    }
    for (size_t i = 0; i < n_cases; i++) {
        size_t len = 0;
        uint8_t *bytes = cases[i].make(&len);
        if (!bytes) {
            fprintf(stderr, "make_bad_models: %s: out of memory\n", cases[i].name);
            return 1;
        }
        char file[64];
        snprintf(file, sizeof file, "%s.onnx", cases[i].name);
        char *path = fx_write(argv[1], file, bytes, len);
        free(bytes);
        if (!path) {
            fprintf(stderr, "make_bad_models: cannot write %s/%s\n", argv[1], file);
            return 1;
        }
        free(path);
    }
    return 0;
}
