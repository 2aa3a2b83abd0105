/* fp32 -> fp16 / bf16 conversion of an ONNX model, in memory, over the
 * structs protoc-c generates (the rules follow onnxconverter-common's
 * float16 converter; docs/precision.md lists them and the block list).
 *
 * Everything added hangs off the model and is malloc'ed, so that
 * protobuf-c's free_unpacked releases it with the rest. The input is
 * untrusted: counts are checked before they size anything, and subgraphs
 * nest at most MAX_DEPTH deep. */
#include "convert/convert.h"
#include "convert/types.h"
#include "base/numeric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define F16 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16
#define BF16 ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16
#define MAX_DEPTH 32

typedef struct conv {
    int32_t target;
    ib_convert_info *info;
    unsigned next_id; /* for unique names of what we add */
    ib_error *err;
} conv;

/* onnxconverter-common's DEFAULT_OP_BLOCK_LIST (float16.py): operators
 * without float16 kernels or whose results float16 spoils. */
static const char *const block_list[] = { "ArrayFeatureExtractor",
                                          "Binarizer",
                                          "CastMap",
                                          "CategoryMapper",
                                          "DictVectorizer",
                                          "FeatureVectorizer",
                                          "Imputer",
                                          "LabelEncoder",
                                          "LinearClassifier",
                                          "LinearRegressor",
                                          "Normalizer",
                                          "OneHotEncoder",
                                          "RandomUniformLike",
                                          "SVMClassifier",
                                          "SVMRegressor",
                                          "Scaler",
                                          "TreeEnsembleClassifier",
                                          "TreeEnsembleRegressor",
                                          "ZipMap",
                                          "NonMaxSuppression",
                                          "TopK",
                                          "RoiAlign",
                                          "Range",
                                          "CumSum",
                                          "Min",
                                          "Max",
                                          "Upsample",
                                          "Resize",
                                          NULL };

bool ib__convert_blocked(const char *domain, const char *op_type)
{
    if (!op_type) return false;
    if (domain && *domain && strcmp(domain, "ai.onnx") != 0 && strcmp(domain, "ai.onnx.ml") != 0)
        return false;
    for (const char *const *b = block_list; *b; b++)
        if (strcmp(op_type, *b) == 0) return true;
    return false;
}

static ib_status nomem(conv *c) { return ib__fail(c->err, IB_ERR_NO_MEMORY, "convert: out of memory"); }

static const char *node_label(const Onnx__NodeProto *n)
{
    return n->name && *n->name ? n->name : (n->output && n->n_output && n->output[0] ? n->output[0] : "?");
}

/* ---- tensors ---------------------------------------------------------------- */

int64_t ib__onnx_elements(const Onnx__TensorProto *t)
{
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++) {
        int64_t d = t->dims[i];
        if (d < 0 || (d != 0 && n > INT64_MAX / d)) return -1;
        n *= d;
    }
    return n;
}

static uint16_t reduce(int32_t target, float v)
{
    return target == F16 ? ib__float_to_half(v) : ib__float_to_bfloat16(v);
}

/* A float32 tensor's data to target, in raw_data. `what` names it. */
static ib_status convert_tensor(conv *c, Onnx__TensorProto *t, const char *what)
{
    if (!t || !t->has_data_type || t->data_type != F32) return IB_OK;
    const char *name = t->name && *t->name ? t->name : "(unnamed)";
    IB_FAIL_IF(t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL,
               c->err, IB_ERR_MODEL, "convert: %s '%s' keeps its data in an external file (not supported)",
               what, name);
    int64_t n = ib__onnx_elements(t);
    bool raw = t->has_raw_data;
    IB_FAIL_IF(n < 0 || (raw ? t->raw_data.len / 4 != (uint64_t)n || t->raw_data.len % 4
                             : t->n_float_data != (uint64_t)n),
               c->err, IB_ERR_MODEL, "convert: %s '%s' holds %zu values where its dimensions say %lld", what,
               name, raw ? t->raw_data.len / 4 : t->n_float_data, (long long)n);
    uint16_t *dst = malloc(n ? (size_t)n * 2 : 1);
    if (!dst) return nomem(c);
    for (int64_t i = 0; i < n; i++) {
        float v;
        if (raw)
            memcpy(&v, t->raw_data.data + 4 * i, 4);
        else
            v = t->float_data[i];
        dst[i] = reduce(c->target, v);
    }
    free(t->raw_data.data);
    free(t->float_data);
    t->float_data = NULL;
    t->n_float_data = 0;
    t->raw_data.data = (uint8_t *)dst;
    t->raw_data.len = (size_t)n * 2;
    t->has_raw_data = true;
    t->data_type = c->target;
    return IB_OK;
}

/* A new tensor of target holding n values (rank 0 when rank0, else [n]). */
static Onnx__TensorProto *reduced_tensor(conv *c, const float *values, size_t n, bool rank0)
{
    Onnx__TensorProto *t = malloc(sizeof *t);
    uint16_t *data = malloc(n ? n * 2 : 1);
    int64_t *dims = rank0 ? NULL : malloc(sizeof *dims);
    if (!t || !data || (!rank0 && !dims)) {
        free(t), free(data), free(dims);
        return NULL;
    }
    onnx__tensor_proto__init(t);
    t->has_data_type = true;
    t->data_type = c->target;
    for (size_t i = 0; i < n; i++) data[i] = reduce(c->target, values[i]);
    t->raw_data.data = (uint8_t *)data;
    t->raw_data.len = n * 2;
    t->has_raw_data = true;
    if (!rank0) {
        dims[0] = (int64_t)n;
        t->dims = dims;
        t->n_dims = 1;
    }
    return t;
}

/* ---- names and nodes ------------------------------------------------------- */

static char *made_name(conv *c, const char *base, const char *tag)
{
    size_t cap = strlen(base) + strlen(tag) + 32;
    char *s = malloc(cap);
    if (s) snprintf(s, cap, "%s__ib_%s%u", base, tag, c->next_id++);
    return s;
}

static bool replace_str(char **slot, const char *value)
{
    char *s = strdup(value);
    if (!s) return false;
    free(*slot);
    *slot = s;
    return true;
}

/* A Cast node from `in` to `out` (taken, malloc'ed) of type `to`. */
static Onnx__NodeProto *cast_node(conv *c, const char *in, char *out, int32_t to)
{
    Onnx__NodeProto *n = calloc(1, sizeof *n);
    Onnx__AttributeProto *a = calloc(1, sizeof *a);
    char **ins = calloc(1, sizeof *ins), **outs = calloc(1, sizeof *outs);
    Onnx__AttributeProto **attrs = calloc(1, sizeof *attrs);
    char name[32];
    snprintf(name, sizeof name, "ib_cast_%u", c->next_id++);
    if (n) onnx__node_proto__init(n);
    if (a) onnx__attribute_proto__init(a);
    if (n) n->op_type = strdup("Cast"), n->name = strdup(name);
    if (a) a->name = strdup("to");
    if (ins) ins[0] = strdup(in);
    if (!n || !a || !ins || !outs || !attrs || !out || !n->op_type || !n->name || !a->name || !ins[0]) {
        if (ins) free(ins[0]);
        free(ins), free(outs), free(attrs), free(out);
        if (a) onnx__attribute_proto__free_unpacked(a, NULL);
        if (n) onnx__node_proto__free_unpacked(n, NULL);
        return NULL;
    }
    a->has_type = true, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = true, a->i = to;
    outs[0] = out;
    attrs[0] = a;
    n->input = ins, n->n_input = 1;
    n->output = outs, n->n_output = 1;
    n->attribute = attrs, n->n_attribute = 1;
    c->info->casts_added++;
    return n;
}

/* A growing list of nodes: the graph's new order. */
typedef struct node_list {
    Onnx__NodeProto **v;
    size_t n, cap;
} node_list;

static bool push(node_list *l, Onnx__NodeProto *node)
{
    if (!node) return false;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        Onnx__NodeProto **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            onnx__node_proto__free_unpacked(node, NULL);
            return false;
        }
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = node;
    return true;
}

static bool add_attribute(Onnx__NodeProto *node, Onnx__AttributeProto *a)
{
    Onnx__AttributeProto **v = realloc(node->attribute, (node->n_attribute + 1) * sizeof *v);
    if (!v) return false;
    node->attribute = v;
    v[node->n_attribute++] = a;
    return true;
}

static Onnx__AttributeProto *new_attribute(const char *name, Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = malloc(sizeof *a);
    if (!a) return NULL;
    onnx__attribute_proto__init(a);
    a->name = strdup(name);
    if (!a->name) {
        free(a);
        return NULL;
    }
    a->has_type = true, a->type = type;
    return a;
}

/* Renames every use of `from` as a node input, in g and its subgraphs. */
static bool rename_uses(Onnx__GraphProto *g, const char *from, const char *to);

static bool rename_in_attributes(Onnx__NodeProto *node, const char *from, const char *to)
{
    for (size_t i = 0; i < node->n_attribute; i++) {
        Onnx__AttributeProto *a = node->attribute[i];
        if (a->g && !rename_uses(a->g, from, to)) return false;
        for (size_t k = 0; k < a->n_graphs; k++)
            if (!rename_uses(a->graphs[k], from, to)) return false;
    }
    return true;
}

static bool rename_uses(Onnx__GraphProto *g, const char *from, const char *to)
{
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *node = g->node[i];
        if (!node) continue;
        for (size_t k = 0; k < node->n_input; k++)
            if (node->input[k] && strcmp(node->input[k], from) == 0 && !replace_str(&node->input[k], to))
                return false;
        if (!rename_in_attributes(node, from, to)) return false;
    }
    return true;
}

static size_t count_uses(const Onnx__GraphProto *g, const char *name)
{
    size_t uses = 0;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *node = g->node[i];
        if (!node) continue;
        for (size_t k = 0; k < node->n_input; k++)
            uses += node->input[k] && strcmp(node->input[k], name) == 0;
        for (size_t k = 0; k < node->n_attribute; k++) {
            const Onnx__AttributeProto *a = node->attribute[k];
            if (a->g) uses += count_uses(a->g, name);
            for (size_t j = 0; j < a->n_graphs; j++) uses += count_uses(a->graphs[j], name);
        }
    }
    return uses;
}

static bool is_graph_output(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_output; i++)
        if (g->output[i]->name && strcmp(g->output[i]->name, name) == 0) return true;
    return false;
}

static void set_declared_type(Onnx__ValueInfoProto *v, int32_t type)
{
    if (v->type && v->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && v->type->tensor_type)
        v->type->tensor_type->elem_type = type;
}

/* ---- the nodes ------------------------------------------------------------- */

/* Constant's value_float(s) become a value tensor of target. */
static ib_status convert_constant_floats(conv *c, Onnx__AttributeProto *a)
{
    bool scalar = strcmp(a->name, "value_float") == 0;
    if (!scalar && strcmp(a->name, "value_floats") != 0) return IB_OK;
    Onnx__TensorProto *t =
        scalar ? reduced_tensor(c, &a->f, 1, true) : reduced_tensor(c, a->floats, a->n_floats, false);
    if (!t || !replace_str(&a->name, "value")) {
        if (t) onnx__tensor_proto__free_unpacked(t, NULL);
        return nomem(c);
    }
    free(a->floats);
    a->floats = NULL, a->n_floats = 0, a->has_f = false;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    a->t = t;
    c->info->constants++;
    return IB_OK;
}

/* The float attributes of a converted node: tensors (Constant's value,
 * ConstantOfShape's), Cast's and the generators' float32 targets. */
static ib_status convert_attributes(conv *c, Onnx__NodeProto *node)
{
    bool is_cast = strcmp(node->op_type, "Cast") == 0;
    for (size_t i = 0; i < node->n_attribute; i++) {
        Onnx__AttributeProto *a = node->attribute[i];
        if (!a->name) continue;
        if (a->t && a->t->data_type == F32) {
            IB_TRY(convert_tensor(c, a->t, "constant"));
            c->info->constants++;
        }
        for (size_t k = 0; k < a->n_tensors; k++) {
            if (a->tensors[k]->data_type != F32) continue;
            IB_TRY(convert_tensor(c, a->tensors[k], "constant"));
            c->info->constants++;
        }
        bool retarget = (is_cast && strcmp(a->name, "to") == 0) || strcmp(a->name, "dtype") == 0;
        if (retarget && a->has_i && a->i == F32) a->i = c->target;
        if (strcmp(node->op_type, "Constant") == 0) IB_TRY(convert_constant_floats(c, a));
    }
    return IB_OK;
}

/* Operators whose float32 output is a default, not an attribute: given the
 * target explicitly. */
static ib_status add_default_float(conv *c, Onnx__NodeProto *node)
{
    bool fill = strcmp(node->op_type, "ConstantOfShape") == 0 && !ib__node_attr(node, "value");
    bool random =
        (strcmp(node->op_type, "RandomNormal") == 0 || strcmp(node->op_type, "RandomUniform") == 0) &&
        !ib__node_attr(node, "dtype");
    if (!fill && !random) return IB_OK;
    Onnx__AttributeProto *a =
        new_attribute(fill ? "value" : "dtype", fill ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR
                                                     : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (a && fill) {
        float zero = 0;
        a->t = reduced_tensor(c, &zero, 1, false);
    } else if (a) {
        a->has_i = true, a->i = c->target;
    }
    if (!a || (fill && !a->t) || !add_attribute(node, a)) {
        if (a) onnx__attribute_proto__free_unpacked(a, NULL);
        return nomem(c);
    }
    return IB_OK;
}

/* A blocked node runs in float32: Casts to float32 before its reduced
 * inputs, and back to target after its float32 outputs (which keep their
 * names, so consumers are untouched). */
static ib_status block_node(conv *c, ib__types *ty, Onnx__NodeProto *node, node_list *out)
{
    for (size_t k = 0; k < node->n_input; k++) {
        const char *in = node->input[k];
        if (!in || !*in || ib__types_converted(ty, in, c->target) != c->target) continue;
        char *f32 = made_name(c, in, "fp32_");
        if (!f32 || !ib__types_set(ty, f32, F32, true) || !push(out, cast_node(c, in, strdup(f32), F32)) ||
            !replace_str(&node->input[k], f32)) {
            free(f32);
            return nomem(c);
        }
        free(f32);
    }
    if (!push(out, node)) return nomem(c);
    for (size_t k = 0; k < node->n_output; k++) {
        const char *o = node->output[k];
        if (!o || !*o || ib__types_original(ty, o) != F32) continue;
        char *f32 = made_name(c, o, "fp32_");
        if (!f32 || !ib__types_set(ty, f32, F32, true) ||
            !push(out, cast_node(c, f32, strdup(o), c->target)) || !replace_str(&node->output[k], f32)) {
            free(f32);
            return nomem(c);
        }
        free(f32);
    }
    c->info->blocked_nodes++;
    return IB_OK;
}

/* ---- graphs ---------------------------------------------------------------- */

static ib_status convert_graph(conv *c, Onnx__GraphProto *g, const ib__types *outer, bool main, int depth);

/* What the model declares and what each node makes, before any change. */
static ib_status learn_types(conv *c, Onnx__GraphProto *g, ib__types *ty)
{
    bool ok = true;
    for (size_t i = 0; i < g->n_initializer; i++)
        ok = ok && ib__types_set(ty, g->initializer[i]->name, g->initializer[i]->data_type, false);
    for (size_t i = 0; i < g->n_input; i++)
        ok = ok && ib__types_set(ty, g->input[i]->name, ib__value_info_type(g->input[i]), false);
    for (size_t i = 0; i < g->n_value_info; i++)
        ok = ok && ib__types_set(ty, g->value_info[i]->name, ib__value_info_type(g->value_info[i]), false);
    for (size_t i = 0; i < g->n_output; i++)
        ok = ok && ib__types_set(ty, g->output[i]->name, ib__value_info_type(g->output[i]), false);
    for (size_t i = 0; ok && i < g->n_node; i++) {
        const Onnx__NodeProto *node = g->node[i];
        IB_FAIL_IF(!node->op_type, c->err, IB_ERR_MODEL, "convert: node %zu ('%s') has no operator type", i,
                   node_label(node));
        for (size_t k = 0; ok && k < node->n_output; k++) {
            const char *o = node->output[k];
            if (!o || !*o || ib__types_original(ty, o)) continue; /* declared wins */
            ok = ib__types_set(ty, o, ib__node_output_type(ty, node, k), false);
        }
    }
    return ok ? IB_OK : nomem(c);
}

static ib_status convert_subgraphs(conv *c, Onnx__NodeProto *node, const ib__types *ty, int depth)
{
    for (size_t i = 0; i < node->n_attribute; i++) {
        Onnx__AttributeProto *a = node->attribute[i];
        if (a->g) IB_TRY(convert_graph(c, a->g, ty, false, depth + 1));
        for (size_t k = 0; k < a->n_graphs; k++) IB_TRY(convert_graph(c, a->graphs[k], ty, false, depth + 1));
    }
    return IB_OK;
}

/* The main graph's float32 inputs stay float32: a Cast to target at the
 * front feeds what read them. Inputs that are initializers (old models list
 * them) are weights: converted, their declaration with them. */
static ib_status edge_inputs(conv *c, Onnx__GraphProto *g, ib__types *ty, node_list *out)
{
    for (size_t i = 0; i < g->n_input; i++) {
        Onnx__ValueInfoProto *v = g->input[i];
        if (!v->name || ib__value_info_type(v) != F32) continue;
        bool weight = false;
        for (size_t k = 0; k < g->n_initializer; k++)
            weight = weight || (g->initializer[k]->name && strcmp(g->initializer[k]->name, v->name) == 0);
        if (weight) {
            set_declared_type(v, c->target);
            continue;
        }
        char *reduced = made_name(c, v->name, "reduced_");
        if (!reduced || !rename_uses(g, v->name, reduced) || !ib__types_set(ty, reduced, F32, false) ||
            !ib__types_set(ty, v->name, F32, true)) {
            free(reduced);
            return nomem(c);
        }
        if (!push(out, cast_node(c, v->name, reduced, c->target))) return nomem(c);
    }
    return IB_OK;
}

/* The main graph's float32 outputs stay float32: their producer's tensor is
 * renamed (in g, whose nodes are the new list by now) and a Cast to
 * float32, appended to tail, makes the output. */
static ib_status edge_outputs(conv *c, Onnx__GraphProto *g, ib__types *ty, node_list *tail)
{
    for (size_t i = 0; i < g->n_output; i++) {
        const char *y = g->output[i]->name;
        if (!y || ib__value_info_type(g->output[i]) != F32) continue;
        Onnx__TensorProto *init = NULL;
        Onnx__NodeProto *producer = NULL;
        size_t slot = 0;
        for (size_t k = 0; k < g->n_initializer; k++)
            if (g->initializer[k]->name && strcmp(g->initializer[k]->name, y) == 0) init = g->initializer[k];
        for (size_t n = 0; n < g->n_node && !producer; n++)
            for (size_t k = 0; k < g->node[n]->n_output; k++)
                if (g->node[n]->output[k] && strcmp(g->node[n]->output[k], y) == 0)
                    producer = g->node[n], slot = k;
        if (!init && !producer) continue; /* an input passed through: unchanged */
        char *reduced = made_name(c, y, "reduced_");
        bool ok =
            reduced && rename_uses(g, y, reduced) && ib__types_set(ty, reduced, F32, false) &&
            (producer ? replace_str(&producer->output[slot], reduced) : replace_str(&init->name, reduced));
        if (!ok || !push(tail, cast_node(c, reduced, strdup(y), F32))) {
            free(reduced);
            return nomem(c);
        }
        free(reduced);
    }
    return IB_OK;
}

static int32_t cast_to(const Onnx__NodeProto *node)
{
    if (!node || strcmp(node->op_type, "Cast") != 0 || node->n_input != 1 || node->n_output != 1) return 0;
    const Onnx__AttributeProto *a = ib__node_attr(node, "to");
    return a && a->has_i ? (int32_t)a->i : 0;
}

static Onnx__NodeProto *producer_of(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_node; i++)
        if (g->node[i] && g->node[i]->n_output == 1 && g->node[i]->output[0] &&
            strcmp(g->node[i]->output[0], name) == 0)
            return g->node[i];
    return NULL;
}

/* Removes round trips Cast(x -> A) -> Cast(-> type of x) between float32
 * and target: the second's consumers read x. */
static ib_status remove_cast_pairs(conv *c, Onnx__GraphProto *g, const ib__types *ty)
{
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *second = g->node[i];
        int32_t to2 = cast_to(second);
        if ((to2 != F32 && to2 != c->target) || !second->input[0]) continue;
        Onnx__NodeProto *first = producer_of(g, second->input[0]);
        int32_t to1 = cast_to(first);
        if ((to1 != F32 && to1 != c->target) || to1 == to2 || !first->input[0]) continue;
        const char *x = first->input[0], *z = second->output[0];
        if (ib__types_converted(ty, x, c->target) != to2 || !z || is_graph_output(g, z)) continue;
        if (!rename_uses(g, z, x)) return nomem(c);
        onnx__node_proto__free_unpacked(second, NULL);
        g->node[i] = NULL;
        c->info->casts_removed++;
        if (count_uses(g, first->output[0]) || is_graph_output(g, first->output[0])) continue;
        for (size_t k = 0; k < g->n_node; k++)
            if (g->node[k] == first) g->node[k] = NULL;
        onnx__node_proto__free_unpacked(first, NULL);
        c->info->casts_removed++;
    }
    size_t kept = 0;
    for (size_t i = 0; i < g->n_node; i++)
        if (g->node[i]) g->node[kept++] = g->node[i];
    g->n_node = kept;
    return IB_OK;
}

/* Initializers and declared types (except the main graph's edges) to target. */
static ib_status convert_declarations(conv *c, Onnx__GraphProto *g, bool main)
{
    for (size_t i = 0; i < g->n_initializer; i++) {
        if (g->initializer[i]->data_type != F32) continue;
        IB_TRY(convert_tensor(c, g->initializer[i], "initializer"));
        c->info->initializers++;
    }
    for (size_t i = 0; i < g->n_sparse_initializer; i++)
        IB_TRY(convert_tensor(c, g->sparse_initializer[i]->values, "sparse initializer"));
    for (size_t i = 0; i < g->n_value_info; i++)
        if (ib__value_info_type(g->value_info[i]) == F32) set_declared_type(g->value_info[i], c->target);
    for (size_t i = 0; !main && i < g->n_input; i++)
        if (ib__value_info_type(g->input[i]) == F32) set_declared_type(g->input[i], c->target);
    for (size_t i = 0; !main && i < g->n_output; i++)
        if (ib__value_info_type(g->output[i]) == F32) set_declared_type(g->output[i], c->target);
    return IB_OK;
}

/* The nodes in their new order: edge Casts, each node converted (or
 * blocked), edge Casts; then the graph takes the list. */
static ib_status rewrite_nodes(conv *c, Onnx__GraphProto *g, ib__types *ty, bool main, int depth)
{
    node_list out = { 0 };
    ib_status st = main ? edge_inputs(c, g, ty, &out) : IB_OK;
    size_t done = 0;
    for (; st == IB_OK && done < g->n_node; done++) {
        Onnx__NodeProto *node = g->node[done];
        st = convert_subgraphs(c, node, ty, depth);
        if (st == IB_OK && ib__convert_blocked(node->domain, node->op_type)) {
            st = block_node(c, ty, node, &out);
            continue;
        }
        if (st == IB_OK) st = convert_attributes(c, node);
        if (st == IB_OK) st = add_default_float(c, node);
        if (st == IB_OK && !push(&out, node)) st = nomem(c);
    }
    if (st != IB_OK) {
        /* nodes not yet moved stay in g (freed with it); moved ones too */
        for (size_t i = 0; i < out.n; i++) {
            bool original = false;
            for (size_t k = 0; k < g->n_node; k++) original = original || g->node[k] == out.v[i];
            if (!original) onnx__node_proto__free_unpacked(out.v[i], NULL);
        }
        free(out.v);
        return st;
    }
    free(g->node);
    g->node = out.v;
    g->n_node = out.n;
    if (!main) return IB_OK;
    node_list tail = { 0 };
    st = edge_outputs(c, g, ty, &tail);
    for (size_t i = 0; i < tail.n; i++) {
        if (st == IB_OK && !push(&out, tail.v[i]))
            st = nomem(c);
        else if (st != IB_OK)
            onnx__node_proto__free_unpacked(tail.v[i], NULL);
    }
    free(tail.v);
    g->node = out.v;
    g->n_node = out.n;
    return st;
}

static ib_status convert_graph(conv *c, Onnx__GraphProto *g, const ib__types *outer, bool main, int depth)
{
    IB_FAIL_IF(depth > MAX_DEPTH, c->err, IB_ERR_MODEL, "convert: subgraphs nested over %d deep", MAX_DEPTH);
    if (!main) c->info->subgraphs++;
    ib__types ty;
    ib__types_init(&ty, outer);
    ib_status st = learn_types(c, g, &ty);
    if (st == IB_OK) st = rewrite_nodes(c, g, &ty, main, depth);
    if (st == IB_OK) st = convert_declarations(c, g, main);
    if (st == IB_OK) st = remove_cast_pairs(c, g, &ty);
    ib__types_free(&ty);
    return st;
}

ib_status ib__convert_model(Onnx__ModelProto *model, int32_t target, ib_convert_info *info, ib_error *err)
{
    conv c = { .target = target, .info = info, .err = err };
    *info = (ib_convert_info){ 0 };
    return convert_graph(&c, model->graph, NULL, true, 0);
}
