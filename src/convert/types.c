/* Element types of a graph's tensors, as far as they can be known without a
 * runtime: declared ones (inputs, outputs, value_info, initializers), the
 * types constants carry, and per-operator rules for the rest. The
 * converter asks only "was this tensor float32?", so an unknown type (0)
 * is safe: such a tensor is left alone. */
#include "convert/types.h"

#include <stdlib.h>
#include <string.h>

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void ib__types_init(ib__types *t, const ib__types *parent)
{
    memset(t, 0, sizeof *t);
    t->parent = parent;
}

void ib__types_free(ib__types *t)
{
    for (size_t i = 0; i < t->cap; i++) free(t->slots[i].name);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static ib__type_slot *find_slot(const ib__types *t, const char *name)
{
    if (!t->cap) return NULL;
    size_t i = (size_t)(hash_name(name) & (t->cap - 1));
    while (t->slots[i].name) {
        if (strcmp(t->slots[i].name, name) == 0) return &t->slots[i];
        i = (i + 1) & (t->cap - 1);
    }
    return &t->slots[i];
}

static bool grow(ib__types *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    ib__type_slot *old = t->slots;
    size_t old_cap = t->cap;
    t->slots = calloc(cap, sizeof *t->slots);
    if (!t->slots) {
        t->slots = old;
        return false;
    }
    t->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].name) *find_slot(t, old[i].name) = old[i];
    free(old);
    return true;
}

bool ib__types_set(ib__types *t, const char *name, int32_t type, bool exact)
{
    if (!name || !*name) return true;
    if ((t->n + 1) * 2 > t->cap && !grow(t)) return false;
    ib__type_slot *s = find_slot(t, name);
    if (!s->name) {
        s->name = strdup(name);
        if (!s->name) return false;
        t->n++;
    }
    s->type = type;
    s->exact = exact;
    return true;
}

int32_t ib__types_original(const ib__types *t, const char *name)
{
    for (; t; t = t->parent) {
        const ib__type_slot *s = find_slot(t, name);
        if (s && s->name) return s->exact ? 0 : s->type;
    }
    return 0;
}

int32_t ib__types_converted(const ib__types *t, const char *name, int32_t target)
{
    for (; t; t = t->parent) {
        const ib__type_slot *s = find_slot(t, name);
        if (s && s->name) return s->exact || s->type != F32 ? s->type : target;
    }
    return 0;
}

int32_t ib__value_info_type(const Onnx__ValueInfoProto *v)
{
    if (!v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return 0;
    const Onnx__TypeProto__Tensor *tt = v->type->tensor_type;
    return tt && tt->has_elem_type ? tt->elem_type : 0;
}

const Onnx__AttributeProto *ib__node_attr(const Onnx__NodeProto *node, const char *name)
{
    for (size_t i = 0; i < node->n_attribute; i++)
        if (node->attribute[i]->name && strcmp(node->attribute[i]->name, name) == 0)
            return node->attribute[i];
    return NULL;
}

static bool op_is(const Onnx__NodeProto *node, const char *const *ops)
{
    for (; *ops; ops++)
        if (strcmp(node->op_type, *ops) == 0) return true;
    return false;
}

/* The type a Constant node's value has. */
static int32_t constant_type(const Onnx__NodeProto *node)
{
    for (size_t i = 0; i < node->n_attribute; i++) {
        const Onnx__AttributeProto *a = node->attribute[i];
        if (!a->name) continue;
        if (strcmp(a->name, "value") == 0 && a->t) return a->t->data_type;
        if (strcmp(a->name, "value_float") == 0 || strcmp(a->name, "value_floats") == 0) return F32;
        if (strcmp(a->name, "value_int") == 0 || strcmp(a->name, "value_ints") == 0) return I64;
    }
    return 0;
}

static int32_t input_type(const ib__types *t, const Onnx__NodeProto *node, size_t i)
{
    return i < node->n_input && node->input[i] && node->input[i][0] ? ib__types_original(t, node->input[i])
                                                                    : 0;
}

static int32_t int_attr_or(const Onnx__NodeProto *node, const char *name, int32_t fallback)
{
    const Onnx__AttributeProto *a = ib__node_attr(node, name);
    return a && a->has_i ? (int32_t)a->i : fallback;
}

/* The element type of a subgraph's output k (an If's branch, a body). */
static int32_t graph_output_type(const Onnx__NodeProto *node, const char *attr, size_t k)
{
    const Onnx__AttributeProto *a = ib__node_attr(node, attr);
    if (!a || !a->g || k >= a->g->n_output) return 0;
    return ib__value_info_type(a->g->output[k]);
}

int32_t ib__node_output_type(const ib__types *t, const Onnx__NodeProto *node, size_t k)
{
    static const char *const to_int64[] = { "Shape",  "Size",   "NonZero",
                                            "ArgMax", "ArgMin", "NonMaxSuppression",
                                            NULL };
    static const char *const to_bool[] = {
        "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And",
        "Or",    "Xor",  "Not",     "IsNaN",       "IsInf",          NULL
    };
    static const char *const second_int64[] = { "TopK", "MaxPool", "Unique", NULL };
    if (!node->op_type) return 0;
    const char *op = node->op_type;
    if (op_is(node, to_int64)) return I64;
    if (op_is(node, to_bool)) return BOOL;
    if (k >= 1 && op_is(node, second_int64)) return I64;
    if (strcmp(op, "Dropout") == 0 && k == 1) return BOOL;
    if (strcmp(op, "Cast") == 0) return int_attr_or(node, "to", 0);
    if (strcmp(op, "CastLike") == 0) return input_type(t, node, 1);
    if (strcmp(op, "Constant") == 0) return constant_type(node);
    if (strcmp(op, "ConstantOfShape") == 0) {
        const Onnx__AttributeProto *a = ib__node_attr(node, "value");
        return a && a->t ? a->t->data_type : F32;
    }
    if (strcmp(op, "RandomNormal") == 0 || strcmp(op, "RandomUniform") == 0)
        return int_attr_or(node, "dtype", F32);
    if (strcmp(op, "EyeLike") == 0 || strcmp(op, "RandomNormalLike") == 0 ||
        strcmp(op, "RandomUniformLike") == 0)
        return int_attr_or(node, "dtype", input_type(t, node, 0));
    if (strcmp(op, "Where") == 0) return input_type(t, node, 1);
    if (strcmp(op, "OneHot") == 0) return input_type(t, node, 2);
    if (strcmp(op, "DequantizeLinear") == 0) return F32;
    if (strcmp(op, "QuantizeLinear") == 0) return input_type(t, node, 2);
    if (strcmp(op, "If") == 0) return graph_output_type(node, "then_branch", k);
    if (strcmp(op, "Loop") == 0) return graph_output_type(node, "body", k + 1);
    if (strcmp(op, "Scan") == 0) return graph_output_type(node, "body", k);
    /* ai.onnx.ml operators' outputs follow no common rule: unknown unless
     * value_info declares them. */
    if (node->domain && strcmp(node->domain, "ai.onnx.ml") == 0) return 0;
    return input_type(t, node, 0);
}
