/* The ONNX graph builder (see graph.h). Every message and string is
 * malloc'ed and counts (n_*) always match what is allocated, so that
 * protobuf-c's free_unpacked can release a model, or a half-built message
 * after a failure, with no bookkeeping of our own. */
#include "zoo/graph.h"
#include "base/numeric.h"

#include "base/common.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- failures ------------------------------------------------------------ */

static void fail(ib__graph *g, ib_status status, const char *what)
{
    if (g->status != IB_OK) return; /* keep the first, it is the cause */
    g->status = status;
    g->failure = what;
}

static void *nomem(ib__graph *g)
{
    fail(g, IB_ERR_NO_MEMORY, "out of host memory");
    return NULL;
}

static char *dup_str(ib__graph *g, const char *s)
{
    char *p = strdup(s);
    if (!p) nomem(g);
    return p;
}

/* Makes room for one more element in a protobuf-c repeated field whose array
 * pointer lives at *array_field. memcpy moves the pointer in and out, so the
 * function serves arrays of any pointer type without aliasing tricks. */
static bool reserve(ib__graph *g, void *array_field, size_t n, size_t *cap, size_t elem_size)
{
    if (n < *cap) return true;
    size_t new_cap = *cap ? 2 * *cap : 16;
    void *old;
    memcpy(&old, array_field, sizeof old);
    void *p = realloc(old, new_cap * elem_size);
    if (!p) return nomem(g), false;
    memcpy(array_field, &p, sizeof p);
    *cap = new_cap;
    return true;
}

void ib__namef(ib__graph *g, char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap) fail(g, IB_ERR_INTERNAL, "a tensor name is too long");
}

/* ---- model ---------------------------------------------------------------- */

ib_status ib__graph_init(ib__graph *g, const char *graph_name, bool fp16, bool materialize, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    g->float_type = fp16 ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 : ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    g->materialize = materialize;
    g->rng = seed;
    g->status = IB_OK;

    g->model = malloc(sizeof *g->model);
    if (!g->model) return nomem(g), g->status;
    onnx__model_proto__init(g->model);
    Onnx__ModelProto *m = g->model;
    m->has_ir_version = true;
    m->ir_version = IB__ONNX_IR_VERSION;
    m->producer_name = dup_str(g, "inferbench");
    m->producer_version = dup_str(g, IB_VERSION_STRING);
    m->doc_string = dup_str(g, "inferbench model zoo: random weights (fixed seed)");

    m->opset_import = calloc(1, sizeof *m->opset_import);
    if (!m->opset_import) return nomem(g), g->status;
    m->n_opset_import = 1;
    Onnx__OperatorSetIdProto *op = malloc(sizeof *op);
    if (!op) return nomem(g), g->status;
    onnx__operator_set_id_proto__init(op);
    m->opset_import[0] = op;
    op->domain = dup_str(g, ""); /* the default ONNX domain */
    op->has_version = true;
    op->version = IB__ONNX_OPSET;

    g->graph = malloc(sizeof *g->graph);
    if (!g->graph) return nomem(g), g->status;
    onnx__graph_proto__init(g->graph);
    m->graph = g->graph;
    g->graph->name = dup_str(g, graph_name);
    return g->status;
}

void ib__graph_free(ib__graph *g)
{
    if (g->model) onnx__model_proto__free_unpacked(g->model, NULL);
    g->model = NULL;
    g->graph = NULL;
}

ib_status ib__graph_pack(ib__graph *g, uint8_t **bytes, size_t *len, ib_error *err)
{
    *bytes = NULL;
    *len = 0;
    IB_FAIL_IF(g->status != IB_OK, err, g->status, "zoo: building the model failed: %s",
               g->failure ? g->failure : "unknown");
    IB_FAIL_IF(!g->materialize, err, IB_ERR_INTERNAL, "zoo: a dry-run model has no weights to pack");
    size_t n = onnx__model_proto__get_packed_size(g->model);
    /* Protobuf messages are limited to 2 GiB; readers refuse larger ones. */
    IB_FAIL_IF(n > (size_t)INT32_MAX, err, IB_ERR_UNSUPPORTED,
               "zoo: the model would be %zu bytes, over protobuf's 2 GiB limit", n);
    uint8_t *buf = malloc(n);
    IB_FAIL_IF(!buf, err, IB_ERR_NO_MEMORY, "zoo: cannot allocate %zu bytes for the model", n);
    size_t written = onnx__model_proto__pack(g->model, buf);
    if (written != n) {
        free(buf);
        return ib__fail(err, IB_ERR_INTERNAL, "zoo: packed %zu bytes, expected %zu", written, n);
    }
    *bytes = buf;
    *len = n;
    return IB_OK;
}

/* ---- tensors ---------------------------------------------------------------- */

static size_t elem_size(int32_t type)
{
    switch (type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return 2;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return 4;
    default: return 8; /* INT64, the only other type we write */
    }
}

/* A tensor with its name, type and dimensions; data is set by the caller. */
static Onnx__TensorProto *new_tensor(ib__graph *g, const char *name, int32_t type, size_t rank,
                                     const int64_t *dims)
{
    Onnx__TensorProto *t = malloc(sizeof *t);
    if (!t) return nomem(g);
    onnx__tensor_proto__init(t);
    t->has_data_type = true;
    t->data_type = type;
    t->name = dup_str(g, name);
    if (rank > 0) {
        t->dims = malloc(rank * sizeof *t->dims);
        if (t->dims) {
            memcpy(t->dims, dims, rank * sizeof *dims);
            t->n_dims = rank;
        } else {
            nomem(g);
        }
    }
    if (g->status != IB_OK) {
        onnx__tensor_proto__free_unpacked(t, NULL);
        return NULL;
    }
    return t;
}

/* Attaches n elements of `type` to t as raw_data (little-endian, as ONNX
 * requires; every machine we build for is little-endian). */
static bool set_raw(ib__graph *g, Onnx__TensorProto *t, const void *data, size_t n)
{
    size_t bytes = n * elem_size(t->data_type);
    t->raw_data.data = malloc(bytes ? bytes : 1);
    if (!t->raw_data.data) return nomem(g), false;
    if (data) memcpy(t->raw_data.data, data, bytes);
    t->raw_data.len = bytes;
    t->has_raw_data = true;
    return true;
}

static void fill_uniform(ib__graph *g, Onnx__TensorProto *t, size_t n, float center, float bound)
{
    uint8_t *out = t->raw_data.data;
    bool half = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
    for (size_t i = 0; i < n; i++) {
        float v = center + bound * ib__uniform_pm1(&g->rng);
        if (half) {
            uint16_t h = ib__float_to_half(v);
            memcpy(out + 2 * i, &h, 2);
        } else {
            memcpy(out + 4 * i, &v, 4);
        }
    }
}

static int64_t element_count(size_t rank, const int64_t *dims)
{
    int64_t n = 1;
    for (size_t i = 0; i < rank; i++) n *= dims[i];
    return n;
}

const char *ib__graph_weight(ib__graph *g, const char *name, size_t rank, const int64_t *dims, float center,
                             float bound)
{
    if (g->status != IB_OK) return "";
    Onnx__GraphProto *gr = g->graph;
    int64_t n = element_count(rank, dims);
    Onnx__TensorProto *t = new_tensor(g, name, g->float_type, rank, dims);
    if (!t) return "";
    if (g->materialize) {
        if (!set_raw(g, t, NULL, (size_t)n)) goto fail;
        fill_uniform(g, t, (size_t)n, center, bound);
    }
    if (!reserve(g, &gr->initializer, gr->n_initializer, &g->cap_initializer, sizeof *gr->initializer))
        goto fail;
    gr->initializer[gr->n_initializer++] = t;
    g->stored += n;
    return t->name;
fail:
    onnx__tensor_proto__free_unpacked(t, NULL);
    return "";
}

/* ---- nodes ------------------------------------------------------------------ */

static bool append_node(ib__graph *g, Onnx__NodeProto *node)
{
    Onnx__GraphProto *gr = g->graph;
    if (!reserve(g, &gr->node, gr->n_node, &g->cap_node, sizeof *gr->node)) return false;
    gr->node[gr->n_node++] = node;
    return true;
}

Onnx__NodeProto *ib__graph_node(ib__graph *g, const char *op, size_t n_inputs, const char *const *inputs)
{
    if (g->status != IB_OK) return NULL;
    Onnx__NodeProto *node = malloc(sizeof *node);
    if (!node) return nomem(g);
    onnx__node_proto__init(node);

    char name[64];
    snprintf(name, sizeof name, "%s_%u", op, g->next_id++);
    node->op_type = dup_str(g, op);
    node->name = dup_str(g, name);
    node->input = calloc(n_inputs ? n_inputs : 1, sizeof *node->input);
    node->output = calloc(1, sizeof *node->output);
    if (!node->input || !node->output) nomem(g);
    if (node->input) {
        node->n_input = n_inputs;
        for (size_t i = 0; i < n_inputs && g->status == IB_OK; i++) node->input[i] = dup_str(g, inputs[i]);
    }
    if (node->output) {
        node->n_output = 1;
        node->output[0] = dup_str(g, name);
    }
    if (g->status != IB_OK || !append_node(g, node)) {
        onnx__node_proto__free_unpacked(node, NULL);
        return NULL;
    }
    return node;
}

const char *ib__node_output(const Onnx__NodeProto *node) { return node ? node->output[0] : ""; }

const char *ib__op1(ib__graph *g, const char *op, const char *a)
{
    return ib__node_output(ib__graph_node(g, op, 1, (const char *[]){ a }));
}

const char *ib__op2(ib__graph *g, const char *op, const char *a, const char *b)
{
    return ib__node_output(ib__graph_node(g, op, 2, (const char *[]){ a, b }));
}

/* Appends an empty attribute of `type` to node; NULL after a failure. */
static Onnx__AttributeProto *add_attr(ib__graph *g, Onnx__NodeProto *node, const char *name,
                                      Onnx__AttributeProto__AttributeType type)
{
    if (!node || g->status != IB_OK) return NULL;
    Onnx__AttributeProto **arr = realloc(node->attribute, (node->n_attribute + 1) * sizeof *arr);
    if (!arr) return nomem(g);
    node->attribute = arr;
    Onnx__AttributeProto *a = malloc(sizeof *a);
    if (!a) return nomem(g);
    onnx__attribute_proto__init(a);
    arr[node->n_attribute++] = a;
    a->name = dup_str(g, name);
    a->has_type = true;
    a->type = type;
    return g->status == IB_OK ? a : NULL;
}

void ib__attr_int(ib__graph *g, Onnx__NodeProto *node, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = add_attr(g, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (!a) return;
    a->has_i = true;
    a->i = v;
}

void ib__attr_float(ib__graph *g, Onnx__NodeProto *node, const char *name, float v)
{
    Onnx__AttributeProto *a = add_attr(g, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    if (!a) return;
    a->has_f = true;
    a->f = v;
}

void ib__attr_ints(ib__graph *g, Onnx__NodeProto *node, const char *name, size_t n, const int64_t *v)
{
    Onnx__AttributeProto *a = add_attr(g, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    if (!a) return;
    a->ints = malloc((n ? n : 1) * sizeof *a->ints);
    if (!a->ints) {
        nomem(g);
        return;
    }
    memcpy(a->ints, v, n * sizeof *v);
    a->n_ints = n;
}

/* A Constant node whose `value` attribute holds tensor t (taken over). */
static const char *constant_node(ib__graph *g, Onnx__TensorProto *t)
{
    Onnx__NodeProto *node = ib__graph_node(g, "Constant", 0, NULL);
    Onnx__AttributeProto *a = add_attr(g, node, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    if (!a) {
        onnx__tensor_proto__free_unpacked(t, NULL);
        return "";
    }
    a->t = t;
    return ib__node_output(node);
}

/* The Constant already emitted with this type and value, or NULL. Model code
 * asks for the same few constants (0, 6, reshape targets) many times. */
static const char *find_const(const ib__graph *g, const struct ib__graph_const *key)
{
    for (size_t i = 0; i < g->n_consts; i++) {
        const struct ib__graph_const *c = &g->consts[i];
        if (c->type == key->type && c->rank == key->rank && c->n == key->n &&
            memcmp(c->ints, key->ints, key->n * sizeof *key->ints) == 0 &&
            memcmp(&c->f, &key->f, sizeof c->f) == 0)
            return c->name;
    }
    return NULL;
}

static void remember_const(ib__graph *g, struct ib__graph_const *key, const char *name)
{
    if (g->status != IB_OK || g->n_consts == IB__GRAPH_MAX_CONSTS) return;
    key->name = name;
    g->consts[g->n_consts++] = *key;
}

const char *ib__graph_const_float(ib__graph *g, float value)
{
    if (g->status != IB_OK) return "";
    struct ib__graph_const key = { .type = g->float_type, .rank = 0, .n = 1, .f = value };
    const char *name = find_const(g, &key);
    if (name) return name;

    Onnx__TensorProto *t = new_tensor(g, "value", g->float_type, 0, NULL);
    if (!t) return "";
    bool ok;
    if (g->float_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16) {
        uint16_t h = ib__float_to_half(value);
        ok = set_raw(g, t, &h, 1);
    } else {
        ok = set_raw(g, t, &value, 1);
    }
    if (!ok) {
        onnx__tensor_proto__free_unpacked(t, NULL);
        return "";
    }
    name = constant_node(g, t);
    remember_const(g, &key, name);
    return name;
}

const char *ib__graph_const_ints(ib__graph *g, size_t rank, size_t n, const int64_t *values)
{
    if (g->status != IB_OK) return "";
    if (rank > 1 || (rank == 0 && n != 1) || n > 8) {
        fail(g, IB_ERR_INTERNAL, "unsupported int64 constant shape");
        return "";
    }
    struct ib__graph_const key = { .type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64, .rank = rank, .n = n };
    memcpy(key.ints, values, n * sizeof *values);
    const char *name = find_const(g, &key);
    if (name) return name;

    int64_t dims[1] = { (int64_t)n };
    Onnx__TensorProto *t = new_tensor(g, "value", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, rank, dims);
    if (!t) return "";
    if (!set_raw(g, t, values, n)) {
        onnx__tensor_proto__free_unpacked(t, NULL);
        return "";
    }
    name = constant_node(g, t);
    remember_const(g, &key, name);
    return name;
}

/* ---- graph inputs and outputs ------------------------------------------------- */

/* A tensor type with the shape spelled in dims ("batch,3,224,224"). */
static Onnx__TypeProto *tensor_type(ib__graph *g, int32_t elem_type, const char *dims)
{
    Onnx__TypeProto *tp = malloc(sizeof *tp);
    if (!tp) return nomem(g);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = malloc(sizeof *tt);
    Onnx__TensorShapeProto *shape = malloc(sizeof *shape);
    if (!tt || !shape) {
        free(tt);
        free(shape);
        onnx__type_proto__free_unpacked(tp, NULL);
        return nomem(g);
    }
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(shape);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = true;
    tt->elem_type = elem_type;
    tt->shape = shape;

    size_t rank = 1;
    for (const char *p = dims; *p; p++) rank += *p == ',';
    shape->dim = calloc(rank, sizeof *shape->dim);
    if (!shape->dim) nomem(g);
    const char *p = dims;
    for (size_t i = 0; i < rank && g->status == IB_OK; i++) {
        size_t len = strcspn(p, ",");
        Onnx__TensorShapeProto__Dimension *d = malloc(sizeof *d);
        if (!d) {
            nomem(g);
            break;
        }
        onnx__tensor_shape_proto__dimension__init(d);
        shape->dim[shape->n_dim++] = d;
        if (p[0] >= '0' && p[0] <= '9') {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = strtoll(p, NULL, 10);
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = strndup(p, len);
            if (!d->dim_param) nomem(g);
        }
        p += len + (p[len] == ',');
    }
    if (g->status != IB_OK) {
        onnx__type_proto__free_unpacked(tp, NULL);
        return NULL;
    }
    return tp;
}

/* Appends a value info to a graph's inputs or outputs (arrays grown by one:
 * there are only a few). */
static void add_value_info(ib__graph *g, Onnx__ValueInfoProto ***arr, size_t *n, const char *name,
                           int32_t elem_type, const char *dims)
{
    if (g->status != IB_OK) return;
    Onnx__ValueInfoProto **grown = realloc(*arr, (*n + 1) * sizeof *grown);
    if (!grown) {
        nomem(g);
        return;
    }
    *arr = grown;
    Onnx__ValueInfoProto *vi = malloc(sizeof *vi);
    if (!vi) {
        nomem(g);
        return;
    }
    onnx__value_info_proto__init(vi);
    grown[(*n)++] = vi;
    vi->name = dup_str(g, name);
    vi->type = tensor_type(g, elem_type, dims);
}

void ib__graph_input(ib__graph *g, const char *name, int32_t elem_type, const char *dims)
{
    if (g->status != IB_OK) return;
    add_value_info(g, &g->graph->input, &g->graph->n_input, name, elem_type, dims);
}

/* Replaces every reference to tensor `from` by `to` in the nodes. */
static void rename_tensor(ib__graph *g, const char *from, const char *to)
{
    char *old = dup_str(g, from); /* `from` may be one of the strings replaced */
    if (!old) return;
    Onnx__GraphProto *gr = g->graph;
    for (size_t i = 0; i < gr->n_node && g->status == IB_OK; i++) {
        Onnx__NodeProto *node = gr->node[i];
        char **names[2] = { node->input, node->output };
        size_t counts[2] = { node->n_input, node->n_output };
        for (size_t k = 0; k < 2; k++) {
            for (size_t j = 0; j < counts[k]; j++) {
                if (strcmp(names[k][j], old) != 0) continue;
                char *s = dup_str(g, to);
                if (!s) break;
                free(names[k][j]);
                names[k][j] = s;
            }
        }
    }
    free(old);
}

void ib__graph_output(ib__graph *g, const char *tensor, const char *name, int32_t elem_type, const char *dims)
{
    if (g->status != IB_OK) return;
    if (strcmp(tensor, name) != 0) rename_tensor(g, tensor, name);
    add_value_info(g, &g->graph->output, &g->graph->n_output, name, elem_type, dims);
}
