/* Tiny ONNX models for the tests: see onnx_fixtures.h. */
#include "onnx_fixtures.h"

#include "onnx/onnx.pb-c.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every allocation of one build, freed together after packing. */
typedef struct pool {
    void *items[256];
    size_t n;
    int failed;
} pool;

static void *pool_alloc(pool *p, size_t size)
{
    void *q = calloc(1, size);
    if (!q || p->n == sizeof p->items / sizeof p->items[0]) {
        free(q);
        p->failed = 1;
        return NULL;
    }
    p->items[p->n++] = q;
    return q;
}

static char *pool_str(pool *p, const char *s)
{
    char *q = pool_alloc(p, strlen(s) + 1);
    if (q) strcpy(q, s);
    return q;
}

static void pool_free(pool *p)
{
    for (size_t i = 0; i < p->n; i++) free(p->items[i]);
}

static Onnx__TensorShapeProto *make_shape(pool *p, const char *dims)
{
    Onnx__TensorShapeProto *shape = pool_alloc(p, sizeof *shape);
    Onnx__TensorShapeProto__Dimension **dim = pool_alloc(p, 8 * sizeof *dim);
    if (!shape || !dim) return NULL;
    onnx__tensor_shape_proto__init(shape);
    shape->dim = dim;
    const char *s = dims;
    while (*s && shape->n_dim < 8) {
        size_t len = strcspn(s, ",");
        char tok[64];
        snprintf(tok, sizeof tok, "%.*s", (int)len, s);
        Onnx__TensorShapeProto__Dimension *d = pool_alloc(p, sizeof *d);
        if (!d) return NULL;
        onnx__tensor_shape_proto__dimension__init(d);
        if (tok[0] >= '0' && tok[0] <= '9') {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = strtoll(tok, NULL, 10);
        } else if (strcmp(tok, "?") != 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = pool_str(p, tok);
        }
        dim[shape->n_dim++] = d;
        s += len;
        if (*s) s++;
    }
    return shape;
}

static Onnx__ValueInfoProto *make_value_info(pool *p, const fx_tensor *t)
{
    Onnx__ValueInfoProto *v = pool_alloc(p, sizeof *v);
    Onnx__TypeProto *type = pool_alloc(p, sizeof *type);
    Onnx__TypeProto__Tensor *tensor = pool_alloc(p, sizeof *tensor);
    if (!v || !type || !tensor) return NULL;
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(type);
    onnx__type_proto__tensor__init(tensor);
    tensor->has_elem_type = 1;
    tensor->elem_type = t->elem_type;
    tensor->shape = t->dims ? make_shape(p, t->dims) : NULL; /* NULL: no shape at all */
    type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type->tensor_type = tensor;
    v->name = pool_str(p, t->name);
    v->type = type;
    return v;
}

static Onnx__NodeProto *make_node(pool *p, const fx_node *n)
{
    Onnx__NodeProto *node = pool_alloc(p, sizeof *node);
    char **in = pool_alloc(p, 3 * sizeof *in);
    char **out = pool_alloc(p, sizeof *out);
    if (!node || !in || !out) return NULL;
    onnx__node_proto__init(node);
    node->op_type = pool_str(p, n->op);
    node->input = in;
    for (size_t i = 0; i < 3 && n->inputs[i]; i++) in[node->n_input++] = pool_str(p, n->inputs[i]);
    node->output = out;
    out[node->n_output++] = pool_str(p, n->output);
    if (n->to > 0) {
        Onnx__AttributeProto **attrs = pool_alloc(p, sizeof *attrs);
        Onnx__AttributeProto *a = pool_alloc(p, sizeof *a);
        if (!attrs || !a) return NULL;
        onnx__attribute_proto__init(a);
        a->name = pool_str(p, "to");
        a->has_type = 1;
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        a->has_i = 1;
        a->i = n->to;
        attrs[0] = a;
        node->attribute = attrs;
        node->n_attribute = 1;
    }
    return node;
}

static Onnx__TensorProto *make_weight(pool *p, const fx_weight *w)
{
    Onnx__TensorProto *t = pool_alloc(p, sizeof *t);
    int64_t *dims = pool_alloc(p, 2 * sizeof *dims);
    size_t n = (size_t)(w->rows * w->cols);
    float *data = pool_alloc(p, n * sizeof *data);
    if (!t || !dims || !data) return NULL;
    onnx__tensor_proto__init(t);
    dims[0] = w->rows;
    dims[1] = w->cols;
    t->dims = dims;
    t->n_dims = 2;
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->name = pool_str(p, w->name);
    for (size_t i = 0; i < n; i++) data[i] = (float)((int)(i % 7) - 3) * 0.1f;
    t->has_raw_data = 1; /* little-endian floats, as ONNX stores them */
    t->raw_data.data = (uint8_t *)data;
    t->raw_data.len = n * sizeof *data;
    return t;
}

uint8_t *fx_build(const fx_model *m, size_t *len)
{
    pool p = { .n = 0 };
    Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
    Onnx__GraphProto graph = ONNX__GRAPH_PROTO__INIT;
    Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    Onnx__OperatorSetIdProto *opsets[1] = { &opset };
    Onnx__ValueInfoProto *inputs[4], *outputs[4];
    Onnx__NodeProto *nodes[4];
    Onnx__TensorProto *weights[2];

    opset.domain = "";
    opset.has_version = 1;
    opset.version = 17;
    model.has_ir_version = 1;
    model.ir_version = 8;
    model.producer_name = "inferbench-tests";
    model.opset_import = opsets;
    model.n_opset_import = 1;
    graph.name = "fixture";
    for (size_t i = 0; i < m->n_inputs; i++) inputs[i] = make_value_info(&p, &m->inputs[i]);
    for (size_t i = 0; i < m->n_outputs; i++) outputs[i] = make_value_info(&p, &m->outputs[i]);
    for (size_t i = 0; i < m->n_nodes; i++) nodes[i] = make_node(&p, &m->nodes[i]);
    for (size_t i = 0; i < m->n_weights; i++) weights[i] = make_weight(&p, &m->weights[i]);
    graph.input = inputs;
    graph.n_input = m->n_inputs;
    graph.output = outputs;
    graph.n_output = m->n_outputs;
    graph.node = nodes;
    graph.n_node = m->n_nodes;
    graph.initializer = weights;
    graph.n_initializer = m->n_weights;
    model.graph = &graph;

    uint8_t *bytes = NULL;
    if (!p.failed) {
        *len = onnx__model_proto__get_packed_size(&model);
        bytes = malloc(*len);
        if (bytes) onnx__model_proto__pack(&model, bytes);
    }
    pool_free(&p);
    return bytes;
}

enum { F32 = 1, I64 = 7, STR = 8, F16 = 10 };

uint8_t *fx_model_bytes(const char *which, size_t *len)
{
    fx_model m = { .n_inputs = 1, .n_outputs = 1, .n_nodes = 1 };
    const fx_weight w16x4 = { "W", 16, 4 };
    if (strcmp(which, "matmul") == 0 || strcmp(which, "fixed") == 0 || strcmp(which, "unnamed") == 0) {
        const char *b = which[0] == 'm' ? "batch" : which[0] == 'f' ? "2" : "?";
        char in[32], out[32];
        snprintf(in, sizeof in, "%s,16", b);
        snprintf(out, sizeof out, "%s,4", b);
        m.inputs[0] = (fx_tensor){ "x", F32, in };
        m.outputs[0] = (fx_tensor){ "y", F32, out };
        m.nodes[0] = (fx_node){ "MatMul", { "x", "W" }, "y", 0 };
        m.weights[0] = w16x4;
        m.n_weights = 1;
        return fx_build(&m, len);
    }
    if (strcmp(which, "seq") == 0) {
        m.inputs[0] = (fx_tensor){ "x", F32, "batch,seq,16" };
        m.outputs[0] = (fx_tensor){ "y", F32, "batch,seq,4" };
        m.nodes[0] = (fx_node){ "MatMul", { "x", "W" }, "y", 0 };
        m.weights[0] = w16x4;
        m.n_weights = 1;
        return fx_build(&m, len);
    }
    if (strcmp(which, "ids") == 0) {
        m.n_inputs = 2;
        m.inputs[0] = (fx_tensor){ "ids", I64, "batch,seq" };
        m.inputs[1] = (fx_tensor){ "mask", I64, "batch,seq" };
        m.outputs[0] = (fx_tensor){ "y", F32, "batch,seq" };
        m.n_nodes = 2;
        m.nodes[0] = (fx_node){ "Add", { "ids", "mask" }, "sum", 0 };
        m.nodes[1] = (fx_node){ "Cast", { "sum" }, "y", F32 };
        return fx_build(&m, len);
    }
    if (strcmp(which, "half") == 0) {
        m.inputs[0] = (fx_tensor){ "x", F16, "batch,8" };
        m.outputs[0] = (fx_tensor){ "y", F32, "batch,8" };
        m.nodes[0] = (fx_node){ "Cast", { "x" }, "y", F32 };
        return fx_build(&m, len);
    }
    if (strcmp(which, "lookup") == 0) {
        m.n_inputs = 2;
        m.inputs[0] = (fx_tensor){ "ids", I64, "batch" };
        m.inputs[1] = (fx_tensor){ "x", F32, "batch" };
        m.outputs[0] = (fx_tensor){ "y", F32, "batch,4" };
        m.n_nodes = 4;
        m.nodes[0] = (fx_node){ "Gather", { "W", "ids" }, "a", 0 };
        m.nodes[1] = (fx_node){ "Cast", { "x" }, "xi", I64 };
        m.nodes[2] = (fx_node){ "Gather", { "W", "xi" }, "b", 0 };
        m.nodes[3] = (fx_node){ "Add", { "a", "b" }, "y", 0 };
        m.weights[0] = (fx_weight){ "W", 4, 4 };
        m.n_weights = 1;
        return fx_build(&m, len);
    }
    if (strcmp(which, "fixed1") == 0) {
        m.inputs[0] = (fx_tensor){ "x", F32, "1,16" };
        m.outputs[0] = (fx_tensor){ "y", F32, "1,4" };
        m.nodes[0] = (fx_node){ "MatMul", { "x", "W" }, "y", 0 };
        m.weights[0] = w16x4;
        m.n_weights = 1;
        return fx_build(&m, len);
    }
    if (strcmp(which, "unranked") == 0) {
        m.inputs[0] = (fx_tensor){ "x", F32, NULL };
        m.outputs[0] = (fx_tensor){ "y", F32, NULL };
        m.nodes[0] = (fx_node){ "Relu", { "x" }, "y", 0 };
        return fx_build(&m, len);
    }
    if (strcmp(which, "state") == 0) {
        /* s's unnamed dimension broadcasts against the batch: any value
         * runs at batch 1, a value other than 1 fails at batch 2. */
        m.n_inputs = 2;
        m.inputs[0] = (fx_tensor){ "x", F32, "batch,8" };
        m.inputs[1] = (fx_tensor){ "s", F32, "1,?,8" };
        m.outputs[0] = (fx_tensor){ "y", F32, "1,?,8" };
        m.nodes[0] = (fx_node){ "Add", { "x", "s" }, "y", 0 };
        return fx_build(&m, len);
    }
    if (strcmp(which, "widen") == 0) {
        /* 4096 floats of intermediate per input float, summed to one. */
        m.inputs[0] = (fx_tensor){ "x", F32, "batch,n,1" };
        m.outputs[0] = (fx_tensor){ "y", F32, "1,1,1" };
        m.n_nodes = 2;
        m.nodes[0] = (fx_node){ "MatMul", { "x", "W" }, "wide", 0 };
        m.nodes[1] = (fx_node){ "ReduceSum", { "wide" }, "y", 0 };
        m.weights[0] = (fx_weight){ "W", 1, 4096 };
        m.n_weights = 1;
        return fx_build(&m, len);
    }
    if (strcmp(which, "strings") == 0) {
        m.inputs[0] = (fx_tensor){ "s", STR, "batch" };
        m.outputs[0] = (fx_tensor){ "y", STR, "batch" };
        m.nodes[0] = (fx_node){ "Identity", { "s" }, "y", 0 };
        return fx_build(&m, len);
    }
    return NULL;
}

char *fx_tmpdir(void)
{
    char tmpl[] = "/tmp/ib-fixtures-XXXXXX";
    if (!mkdtemp(tmpl)) return NULL;
    return strdup(tmpl);
}

char *fx_write(const char *dir, const char *file, const void *bytes, size_t len)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *path = malloc(n);
    if (!path) return NULL;
    snprintf(path, n, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(bytes, 1, len, f) != len)) {
        if (f) fclose(f);
        free(path);
        return NULL;
    }
    if (fclose(f) != 0) {
        free(path);
        return NULL;
    }
    return path;
}

char *fx_write_model(const char *dir, const char *which)
{
    size_t len = 0;
    uint8_t *bytes = fx_model_bytes(which, &len);
    if (!bytes) return NULL;
    char file[64];
    snprintf(file, sizeof file, "%s.onnx", which);
    char *path = fx_write(dir, file, bytes, len);
    free(bytes);
    return path;
}

void fx_cleanup(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}
