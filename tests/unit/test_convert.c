/* The fp16/bf16 converter (src/convert): hand-made graphs with a blocked
 * operator, an If subgraph and an integer shape path, checked structurally
 * and run in ONNX Runtime's CPU provider against fp32; the zoo's small
 * models converted, loaded and run; bad models refused with the node
 * named. The larger zoo models: test_convert_zoo.c. */
#include "check.h"
#include "convert/convert.h"
#include "onnx_fixtures.h"
#include "zoo/graph.h"

#include <stdlib.h>
#include <string.h>

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define F16 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16
#define BF16 ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

/* ---- building the hand-made graphs ------------------------------------------ */

static void add_value_info(Onnx__GraphProto *g, const char *name, int32_t type)
{
    Onnx__ValueInfoProto *v = malloc(sizeof *v);
    Onnx__TypeProto *tp = malloc(sizeof *tp);
    Onnx__TypeProto__Tensor *tt = malloc(sizeof *tt);
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = true, tt->elem_type = type;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, tp->tensor_type = tt;
    v->name = strdup(name), v->type = tp;
    g->value_info = realloc(g->value_info, (g->n_value_info + 1) * sizeof *g->value_info);
    g->value_info[g->n_value_info++] = v;
}

static void attach_graph(Onnx__NodeProto *node, const char *name, Onnx__GraphProto *sub)
{
    Onnx__AttributeProto *a = malloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = strdup(name);
    a->has_type = true, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    a->g = sub;
    node->attribute = realloc(node->attribute, (node->n_attribute + 1) * sizeof *node->attribute);
    node->attribute[node->n_attribute++] = a;
}

static uint8_t *pack(ib__graph *g, size_t *len)
{
    uint8_t *bytes = NULL;
    ib_error err;
    CHECK(ib__graph_pack(g, &bytes, len, &err) == IB_OK);
    ib__graph_free(g);
    return bytes;
}

/* x[batch,16] -> MatMul W -> a; Relu -> r; Max(a, r) -> m; Min(m, a) -> n;
 * Neg -> y. Max and Min are blocked: they stay float32, and the Casts
 * between them cancel. */
static uint8_t *blocked_model(size_t *len)
{
    ib__graph g;
    ib__graph_init(&g, "blocked", false, true, 1);
    int64_t wd[2] = { 16, 16 };
    const char *w = ib__graph_weight(&g, "W", 2, wd, 0, 0.25f);
    const char *a = ib__op2(&g, "MatMul", "x", w);
    const char *r = ib__op1(&g, "Relu", a);
    const char *m = ib__op2(&g, "Max", a, r);
    const char *n = ib__op2(&g, "Min", m, a);
    const char *y = ib__op1(&g, "Neg", n);
    ib__graph_input(&g, "x", F32, "batch,16");
    ib__graph_output(&g, y, "y", F32, "batch,16");
    add_value_info(g.graph, a, F32);
    return pack(&g, len);
}

/* x[batch,16] -> MatMul W -> h; Shape(x) -> Gather 0 -> Unsqueeze ->
 * Concat [4, 4] -> Reshape(h) -> y[batch,4,4]: the shape path is int64. */
static uint8_t *shape_model(size_t *len)
{
    ib__graph g;
    ib__graph_init(&g, "shape", false, true, 2);
    int64_t wd[2] = { 16, 16 }, zero = 0, four_four[2] = { 4, 4 };
    const char *h = ib__op2(&g, "MatMul", "x", ib__graph_weight(&g, "W", 2, wd, 0, 0.25f));
    const char *s = ib__op1(&g, "Shape", "x");
    const char *b = ib__op2(&g, "Gather", s, ib__graph_const_ints(&g, 0, 1, &zero));
    const char *b1 = ib__op2(&g, "Unsqueeze", b, ib__graph_const_ints(&g, 1, 1, &zero));
    const char *cat_in[2] = { b1, ib__graph_const_ints(&g, 1, 2, four_four) };
    Onnx__NodeProto *cat = ib__graph_node(&g, "Concat", 2, cat_in);
    ib__attr_int(&g, cat, "axis", 0);
    const char *y = ib__op2(&g, "Reshape", h, ib__node_output(cat));
    ib__graph_input(&g, "x", F32, "batch,16");
    ib__graph_output(&g, y, "y", F32, "batch,4,4");
    return pack(&g, len);
}

/* One branch of the If: then = Relu(h) * 0.5 (a float Constant inside);
 * else = Neg(h) + B (an initializer of the subgraph). Both read the outer
 * h. */
static Onnx__GraphProto *branch(bool then, unsigned first_id)
{
    ib__graph s;
    ib__graph_init(&s, then ? "then" : "else", false, true, 3);
    s.next_id = first_id;
    const char *out;
    if (then) {
        out = ib__op2(&s, "Mul", ib__op1(&s, "Relu", "h"), ib__graph_const_float(&s, 0.5f));
    } else {
        int64_t bd[1] = { 16 };
        out = ib__op2(&s, "Add", ib__op1(&s, "Neg", "h"), ib__graph_weight(&s, "B", 1, bd, 0, 0.5f));
    }
    ib__graph_output(&s, out, then ? "then_out" : "else_out", F32, "batch,16");
    CHECK(s.status == IB_OK);
    Onnx__GraphProto *g = s.model->graph;
    s.model->graph = NULL;
    ib__graph_free(&s);
    return g;
}

/* x[batch,16], flag bool -> MatMul W -> h -> If(flag) -> y[batch,16]. */
static uint8_t *if_model(size_t *len)
{
    ib__graph g;
    ib__graph_init(&g, "if", false, true, 4);
    int64_t wd[2] = { 16, 16 };
    char h[64]; /* a copy: the node's own string is replaced below */
    snprintf(h, sizeof h, "%s", ib__op2(&g, "MatMul", "x", ib__graph_weight(&g, "W", 2, wd, 0, 0.25f)));
    const char *in[1] = { "flag" };
    Onnx__NodeProto *node = ib__graph_node(&g, "If", 1, in);
    attach_graph(node, "then_branch", branch(true, 100));
    attach_graph(node, "else_branch", branch(false, 200));
    /* the branches read the outer tensor under the name "h" */
    for (size_t i = 0; i < g.graph->n_node; i++)
        for (size_t k = 0; k < g.graph->node[i]->n_output; k++)
            if (!strcmp(g.graph->node[i]->output[k], h)) {
                free(g.graph->node[i]->output[0]);
                g.graph->node[i]->output[0] = strdup("h");
            }
    ib__graph_input(&g, "x", F32, "batch,16");
    ib__graph_input(&g, "flag", BOOL, "1");
    ib__graph_output(&g, ib__node_output(node), "y", F32, "batch,16");
    return pack(&g, len);
}

/* ---- reading a converted model --------------------------------------------- */

static Onnx__ModelProto *convert(const uint8_t *bytes, size_t len, ib_math math, ib_convert_info *info)
{
    uint8_t *out = NULL;
    size_t out_len = 0;
    ib_error err = { "" };
    ib_status st = ib_onnx_convert(bytes, len, math, &out, &out_len, info, &err);
    CHECK(st == IB_OK);
    if (st != IB_OK) {
        fprintf(stderr, "  %s\n", err.message);
        return NULL;
    }
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, out_len, out);
    free(out);
    CHECK(m != NULL);
    return m;
}

static Onnx__NodeProto *producer(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (!strcmp(g->node[i]->output[k], name)) return g->node[i];
    return NULL;
}

static int64_t cast_to(const Onnx__NodeProto *n)
{
    if (!n || strcmp(n->op_type, "Cast")) return -1;
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!strcmp(n->attribute[i]->name, "to")) return n->attribute[i]->i;
    return -1;
}

static size_t count_op(const Onnx__GraphProto *g, const char *op)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_node; i++) n += !strcmp(g->node[i]->op_type, op);
    return n;
}

/* Every float initializer, here and in subgraphs, is of type `type`. */
static bool all_initializers(const Onnx__GraphProto *g, int32_t type)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->data_type == F32 || g->initializer[i]->data_type != type) return false;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_attribute; k++)
            if (g->node[i]->attribute[k]->g && !all_initializers(g->node[i]->attribute[k]->g, type))
                return false;
    return true;
}

/* The graph's inputs and outputs: names and element types as in `before`. */
static void check_edges(const Onnx__GraphProto *before, const Onnx__GraphProto *after)
{
    CHECK_EQ_INT(after->n_input, before->n_input);
    CHECK_EQ_INT(after->n_output, before->n_output);
    for (size_t i = 0; i < before->n_input && i < after->n_input; i++) {
        CHECK(!strcmp(after->input[i]->name, before->input[i]->name));
        CHECK_EQ_INT(after->input[i]->type->tensor_type->elem_type,
                     before->input[i]->type->tensor_type->elem_type);
    }
    for (size_t i = 0; i < before->n_output && i < after->n_output; i++) {
        CHECK(!strcmp(after->output[i]->name, before->output[i]->name));
        CHECK_EQ_INT(after->output[i]->type->tensor_type->elem_type,
                     before->output[i]->type->tensor_type->elem_type);
        /* the output is made by a Cast back to float32 */
        CHECK_EQ_INT(cast_to(producer(after, after->output[i]->name)), F32);
    }
}

/* Runs `bytes` (written to a file) on the CPU converted to math, against
 * strict fp32; the outputs agree within tol. */
static void run_against_fp32(const char *label, const uint8_t *bytes, size_t len, ib_math math,
                             const ib_input_spec *inputs, size_t n_inputs, double tol)
{
    char *dir = fx_tmpdir();
    char file[96];
    snprintf(file, sizeof file, "%s.onnx", label);
    char *path = fx_write(dir, file, bytes, len);
    ib_model_options opts;
    ib_model_options_init(&opts);
    opts.device = IB_DEVICE_CPU;
    opts.math = math;
    opts.inputs = inputs;
    opts.n_inputs = n_inputs;
    opts.batch = 3;
    ib_workload *w = NULL;
    ib_error err = { "" };
    ib_status st = ib_workload_open_model(path, &opts, &w, &err);
    CHECK(st == IB_OK);
    if (st != IB_OK) fprintf(stderr, "  %s: %s\n", label, err.message);
    ib_accuracy acc;
    if (st == IB_OK) {
        CHECK(!strcmp(ib_workload_get_info(w)->math, ib_math_name(math)));
        st = ib_measure_accuracy(w, path, &opts, tol, &acc, &err);
        CHECK(st == IB_OK);
        if (st != IB_OK) fprintf(stderr, "  %s: %s\n", label, err.message);
    }
    if (st == IB_OK) {
        CHECK(acc.measured);
        CHECK(acc.ms > 0); /* what the check took: best counts it apart from opening */
        CHECK(!acc.over_tolerance);
        for (int i = 0; i < acc.n_outputs; i++) {
            CHECK(acc.outputs[i].compared);
            CHECK(acc.outputs[i].cosine > 0.999);
            if (acc.outputs[i].max_abs_error > tol || !(acc.outputs[i].cosine > 0.999))
                fprintf(stderr, "  %s %s: max abs %g, cosine %g\n", label, acc.outputs[i].name,
                        acc.outputs[i].max_abs_error, acc.outputs[i].cosine);
        }
    }
    ib_workload_destroy(w);
    free(path);
    fx_cleanup(dir);
    free(dir);
}

/* ---- the tests -------------------------------------------------------------- */

static void test_blocked(void)
{
    size_t len = 0;
    uint8_t *bytes = blocked_model(&len);
    Onnx__ModelProto *before = onnx__model_proto__unpack(NULL, len, bytes);
    ib_convert_info info;
    Onnx__ModelProto *m = convert(bytes, len, IB_MATH_FP16, &info);
    if (m && before) {
        const Onnx__GraphProto *g = m->graph;
        check_edges(before->graph, g);
        CHECK(all_initializers(g, F16));
        CHECK_EQ_INT(info.blocked_nodes, 2);
        CHECK_EQ_INT(info.initializers, 1);
        Onnx__NodeProto *max = NULL, *min = NULL;
        for (size_t i = 0; i < g->n_node; i++) {
            if (!strcmp(g->node[i]->op_type, "Max")) max = g->node[i];
            if (!strcmp(g->node[i]->op_type, "Min")) min = g->node[i];
        }
        CHECK(max && min);
        if (max && min) {
            /* Max's inputs come through Casts to float32 */
            for (size_t k = 0; k < max->n_input; k++) CHECK_EQ_INT(cast_to(producer(g, max->input[k])), F32);
            /* Min reads Max's float32 output directly: that pair cancelled */
            CHECK(producer(g, min->input[0]) == max);
            CHECK_EQ_INT(cast_to(producer(g, min->input[1])), F32);
            /* Min's output goes back to float16 for Neg */
            Onnx__NodeProto *neg = NULL;
            for (size_t i = 0; i < g->n_node; i++)
                if (!strcmp(g->node[i]->op_type, "Neg")) neg = g->node[i];
            CHECK(neg && cast_to(producer(g, neg->input[0])) == F16);
        }
        CHECK(info.casts_removed >= 2);
        /* the declared intermediate is float16 now */
        CHECK_EQ_INT(g->value_info[0]->type->tensor_type->elem_type, F16);
    }
    if (m) onnx__model_proto__free_unpacked(m, NULL);
    if (before) onnx__model_proto__free_unpacked(before, NULL);
    run_against_fp32("blocked", bytes, len, IB_MATH_FP16, NULL, 0, 0.02);
    free(bytes);
}

static void test_shape_path(void)
{
    size_t len = 0;
    uint8_t *bytes = shape_model(&len);
    ib_convert_info info;
    Onnx__ModelProto *m = convert(bytes, len, IB_MATH_FP16, &info);
    if (m) {
        const Onnx__GraphProto *g = m->graph;
        CHECK(all_initializers(g, F16));
        for (size_t i = 0; i < g->n_node; i++) {
            const Onnx__NodeProto *n = g->node[i];
            if (!strcmp(n->op_type, "Constant")) CHECK_EQ_INT(n->attribute[0]->t->data_type, I64);
            if (!strcmp(n->op_type, "Gather") || !strcmp(n->op_type, "Unsqueeze") ||
                !strcmp(n->op_type, "Concat"))
                for (size_t k = 0; k < n->n_input; k++) CHECK(cast_to(producer(g, n->input[k])) < 0);
            if (!strcmp(n->op_type, "Reshape"))
                CHECK(strcmp(producer(g, n->input[1])->op_type, "Concat") == 0);
        }
        /* only the two edge Casts: nothing on the integer path */
        CHECK_EQ_INT(count_op(g, "Cast"), 2);
        CHECK_EQ_INT(info.blocked_nodes, 0);
        onnx__model_proto__free_unpacked(m, NULL);
    }
    run_against_fp32("shape", bytes, len, IB_MATH_FP16, NULL, 0, 0.02);
    free(bytes);
}

static void test_if_subgraph(void)
{
    size_t len = 0;
    uint8_t *bytes = if_model(&len);
    ib_convert_info info;
    Onnx__ModelProto *m = convert(bytes, len, IB_MATH_FP16, &info);
    if (m) {
        const Onnx__GraphProto *g = m->graph;
        CHECK_EQ_INT(info.subgraphs, 2);
        CHECK(all_initializers(g, F16)); /* the else branch's B too */
        Onnx__NodeProto *node = NULL;
        for (size_t i = 0; i < g->n_node; i++)
            if (!strcmp(g->node[i]->op_type, "If")) node = g->node[i];
        CHECK(node != NULL);
        for (size_t k = 0; node && k < node->n_attribute; k++) {
            const Onnx__GraphProto *sub = node->attribute[k]->g;
            CHECK_EQ_INT(sub->output[0]->type->tensor_type->elem_type, F16);
            for (size_t i = 0; i < sub->n_node; i++)
                if (!strcmp(sub->node[i]->op_type, "Constant"))
                    CHECK_EQ_INT(sub->node[i]->attribute[0]->t->data_type, F16);
        }
        onnx__model_proto__free_unpacked(m, NULL);
    }
    ib_input_spec flag;
    CHECK(ib_input_spec_parse("flag=ones", &flag, NULL) == IB_OK);
    run_against_fp32("if_then", bytes, len, IB_MATH_FP16, &flag, 1, 0.02);
    CHECK(ib_input_spec_parse("flag=zeros", &flag, NULL) == IB_OK);
    run_against_fp32("if_else", bytes, len, IB_MATH_FP16, &flag, 1, 0.02);
    free(bytes);
}

/* bf16: the same structure; ONNX Runtime's CPU provider has no bfloat16
 * MatMul, which the open names. */
static void test_bf16(void)
{
    size_t len = 0;
    uint8_t *bytes = blocked_model(&len);
    ib_convert_info info;
    Onnx__ModelProto *m = convert(bytes, len, IB_MATH_BF16, &info);
    if (m) {
        CHECK(all_initializers(m->graph, BF16));
        CHECK_EQ_INT(cast_to(producer(m->graph, "y")), F32);
        onnx__model_proto__free_unpacked(m, NULL);
    }
    free(bytes);
}

/* The zoo's small models: converted, every weight float16, the edges
 * unchanged, and run on the CPU within fp16's tolerance of fp32. */
static void test_zoo_small(void)
{
    static const char *const names[] = { "mlp", "mobilenet-v2" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        uint8_t *bytes = NULL;
        size_t len = 0;
        CHECK(ib_zoo_build(names[i], false, &bytes, &len, NULL) == IB_OK);
        Onnx__ModelProto *before = onnx__model_proto__unpack(NULL, len, bytes);
        ib_convert_info info;
        Onnx__ModelProto *m = convert(bytes, len, IB_MATH_FP16, &info);
        if (m && before) {
            CHECK(all_initializers(m->graph, F16));
            check_edges(before->graph, m->graph);
            CHECK(info.initializers > 0);
        }
        if (m) onnx__model_proto__free_unpacked(m, NULL);
        if (before) onnx__model_proto__free_unpacked(before, NULL);
        char label[64];
        snprintf(label, sizeof label, "zoo-%s", names[i]);
        run_against_fp32(label, bytes, len, IB_MATH_FP16, NULL, 0, 0.05);
        ib_free(bytes);
    }
}

static ib_workload *open_zoo_mlp(ib_model_options *opts, ib_math math, int64_t batch)
{
    ib_model_options_init(opts);
    opts->device = IB_DEVICE_CPU;
    opts->math = math;
    opts->batch = batch;
    ib_workload *w = NULL;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_workload_open_model("zoo:mlp", opts, &w, &err), IB_OK);
    return w;
}

static bool same_accuracy(const ib_accuracy *a, const ib_accuracy *b)
{
    bool same = a->measured && b->measured && a->n_outputs == b->n_outputs && a->batch == b->batch;
    for (int i = 0; same && i < a->n_outputs; i++)
        same = a->outputs[i].max_abs_error == b->outputs[i].max_abs_error &&
               a->outputs[i].mean_abs_error == b->outputs[i].mean_abs_error &&
               a->outputs[i].cosine == b->outputs[i].cosine;
    return same;
}

/* A kept reference (best's: strict fp32 run once for every candidate)
 * judges exactly as a reference of its own does, opened by the first call
 * alone; a workload at another batch is refused. */
static void test_kept_reference(void)
{
    ib_model_options opts;
    ib_workload *w = open_zoo_mlp(&opts, IB_MATH_FP16, 2);
    ib_accuracy own, first, again;
    ib_error err = { "" };
    ib_accuracy_reference *ref = NULL;
    CHECK_EQ_INT(ib_measure_accuracy(w, "zoo:mlp", &opts, 0, &own, &err), IB_OK);
    CHECK_EQ_INT(ib_measure_accuracy_kept(w, "zoo:mlp", &opts, 0, &ref, &first, &err), IB_OK);
    CHECK(ref != NULL);
    const ib_accuracy_reference *kept = ref;
    CHECK_EQ_INT(ib_measure_accuracy_kept(w, "zoo:mlp", &opts, 0, &ref, &again, &err), IB_OK);
    CHECK(ref == kept); /* not opened again */
    CHECK(same_accuracy(&own, &first) && same_accuracy(&own, &again));
    CHECK(own.outputs[0].max_abs_error > 0); /* fp16 differs from fp32: the comparison is not empty */
    ib_model_options other;
    ib_workload *w4 = open_zoo_mlp(&other, IB_MATH_FP16, 4);
    CHECK_EQ_INT(ib_measure_accuracy_kept(w4, "zoo:mlp", &other, 0, &ref, &again, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "the reference ran at batch 2") != NULL);
    ib_accuracy_reference_free(ref);
    ib_workload_destroy(w4);
    ib_workload_destroy(w);
}

/* Already float16: returned byte for byte. */
static void test_already_fp16(void)
{
    uint8_t *bytes = NULL, *out = NULL;
    size_t len = 0, out_len = 0;
    CHECK(ib_zoo_build("mlp", true, &bytes, &len, NULL) == IB_OK);
    ib_convert_info info;
    CHECK(ib_onnx_convert(bytes, len, IB_MATH_FP16, &out, &out_len, &info, NULL) == IB_OK);
    CHECK(info.unchanged);
    CHECK(out_len == len && out && memcmp(out, bytes, len) == 0);
    ib_free(out);
    ib_free(bytes);
}

/* x[batch,16] -> MatMul W[16,16] -> Add B[16] -> y, W stored as type big
 * and B as small (their values are not read: only the types count). */
static uint8_t *two_weights_model(int32_t big, int32_t small, size_t *len)
{
    ib__graph g;
    ib__graph_init(&g, "two", false, true, 5);
    int64_t wd[2] = { 16, 16 }, bd[1] = { 16 };
    const char *w = ib__graph_weight(&g, "W", 2, wd, 0, 0.25f);
    const char *b = ib__graph_weight(&g, "B", 1, bd, 0, 0.5f);
    const char *y = ib__op2(&g, "Add", ib__op2(&g, "MatMul", "x", w), b);
    ib__graph_input(&g, "x", F32, "batch,16");
    ib__graph_output(&g, y, "y", F32, "batch,16");
    g.model->graph->initializer[0]->data_type = big;
    g.model->graph->initializer[1]->data_type = small;
    return pack(&g, len);
}

/* x float16[batch,16] -> Relu -> y float16: no weight, float16 edges. */
static uint8_t *half_edges_model(size_t *len)
{
    ib__graph g;
    ib__graph_init(&g, "half_edges", true, true, 6);
    const char *y = ib__op1(&g, "Relu", "x");
    ib__graph_input(&g, "x", F16, "batch,16");
    ib__graph_output(&g, y, "y", F16, "batch,16");
    return pack(&g, len);
}

/* The math of a model made by build (freed after). */
static ib_math math_of(uint8_t *(*build)(int32_t, int32_t, size_t *), int32_t big, int32_t small)
{
    size_t len = 0;
    uint8_t *bytes = build(big, small, &len);
    ib_math m = ib_onnx_model_math(bytes, len);
    free(bytes);
    return m;
}

/* A model's own arithmetic: the type of most of its weight elements,
 * whatever its edges (converted with float32 inputs and outputs, it is
 * float16 all the same); without weights, its edges'; bytes that do not
 * parse are the runtime's to judge. */
static void test_model_math(void)
{
    size_t len = 0, out_len = 0;
    uint8_t *bytes = blocked_model(&len), *out = NULL;
    CHECK_EQ_INT(ib_onnx_model_math(bytes, len), IB_MATH_DEFAULT);
    CHECK_EQ_INT(ib_onnx_convert(bytes, len, IB_MATH_BF16, &out, &out_len, NULL, NULL), IB_OK);
    CHECK_EQ_INT(ib_onnx_model_math(out, out_len), IB_MATH_BF16);
    /* Converted again (float32 edges, bfloat16 weights): as it is. */
    uint8_t *again = NULL;
    size_t again_len = 0;
    ib_convert_info info;
    CHECK_EQ_INT(ib_onnx_convert(out, out_len, IB_MATH_BF16, &again, &again_len, &info, NULL), IB_OK);
    CHECK(info.unchanged && again_len == out_len && again && memcmp(again, out, out_len) == 0);
    ib_free(again);
    ib_free(out);
    free(bytes);
    CHECK(ib_zoo_build("mlp", true, &bytes, &len, NULL) == IB_OK);
    CHECK_EQ_INT(ib_onnx_model_math(bytes, len), IB_MATH_FP16);
    /* named bf16, it would run float16: refused */
    ib_error err = { "" };
    CHECK_EQ_INT(ib_onnx_convert(bytes, len, IB_MATH_BF16, &out, &out_len, NULL, &err), IB_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "the model is fp16 itself (most of its weights)") != NULL);
    CHECK(out == NULL);
    ib_free(bytes);
    CHECK_EQ_INT(math_of(two_weights_model, F16, F32), IB_MATH_FP16); /* 256 elements against 16 */
    CHECK_EQ_INT(math_of(two_weights_model, F32, F16), IB_MATH_DEFAULT);
    CHECK_EQ_INT(math_of(two_weights_model, BF16, F16), IB_MATH_BF16);
    CHECK_EQ_INT(math_of(two_weights_model, I64, F16), IB_MATH_FP16); /* integers do not count */
    bytes = half_edges_model(&len);
    CHECK_EQ_INT(ib_onnx_model_math(bytes, len), IB_MATH_FP16);
    free(bytes);
    const uint8_t junk[] = { 0xff, 0xff, 0xff, 0x01 };
    CHECK_EQ_INT(ib_onnx_model_math(junk, sizeof junk), IB_MATH_DEFAULT);
    CHECK_EQ_INT(ib_onnx_model_math(NULL, 0), IB_MATH_DEFAULT);
}

static void test_refusals(void)
{
    uint8_t *out = NULL;
    size_t out_len = 0, len = 0;
    ib_error err = { "" };
    const uint8_t junk[] = { 0xff, 0xff, 0xff, 0x01 };
    CHECK(ib_onnx_convert(junk, sizeof junk, IB_MATH_FP16, &out, &out_len, NULL, &err) == IB_ERR_MODEL);
    CHECK(out == NULL);
    uint8_t *bytes = blocked_model(&len);
    CHECK(ib_onnx_convert(bytes, len, IB_MATH_TF32, &out, &out_len, NULL, &err) == IB_ERR_INVALID_ARG);
    /* an initializer whose data does not match its dimensions is named */
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, bytes);
    m->graph->initializer[0]->raw_data.len -= 4;
    size_t n = onnx__model_proto__get_packed_size(m);
    uint8_t *bad = malloc(n);
    onnx__model_proto__pack(m, bad);
    onnx__model_proto__free_unpacked(m, NULL);
    CHECK(ib_onnx_convert(bad, n, IB_MATH_FP16, &out, &out_len, NULL, &err) == IB_ERR_MODEL);
    CHECK(strstr(err.message, "initializer 'W'") != NULL);
    free(bad);
    free(bytes);
    ib_math math;
    CHECK(ib_math_parse("fp16", &math, NULL) == IB_OK && math == IB_MATH_FP16);
    CHECK(ib_math_parse("fp64", &math, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "fp32, tf32, fp16 or bf16") != NULL);
    CHECK(ib__convert_blocked("", "Resize") && ib__convert_blocked("ai.onnx.ml", "ZipMap"));
    CHECK(!ib__convert_blocked("", "Conv") && !ib__convert_blocked("com.example", "Resize"));
}

/* test_convert DIR: writes the hand-made models to DIR (the seeds of the
 * fuzz_convert corpus) instead of testing. */
static int write_seeds(const char *dir)
{
    uint8_t *(*const build[3])(size_t *) = { blocked_model, shape_model, if_model };
    const char *const names[3] = { "blocked.onnx", "shape.onnx", "if.onnx" };
    for (int i = 0; i < 3; i++) {
        size_t len = 0;
        uint8_t *bytes = build[i](&len);
        free(fx_write(dir, names[i], bytes, len));
        free(bytes);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2) return write_seeds(argv[1]);
    check_init(argc, argv);
    RUN(test_blocked);
    RUN(test_shape_path);
    RUN(test_if_subgraph);
    RUN(test_bf16);
    RUN(test_zoo_small);
    RUN(test_already_fp16);
    RUN(test_model_math);
    RUN(test_kept_reference);
    RUN(test_refusals);
    return check_summary("test_convert");
}
