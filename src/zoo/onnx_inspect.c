/* Reading serialized ONNX models with protobuf-c: what a model really
 * carries. The input is untrusted (a user's file, a fuzzer's bytes): every
 * count is checked before it is multiplied or summed. */
#include "core/common.h"
#include "onnx/onnx.pb-c.h"

#include <stdint.h>

/* Elements of a tensor: the product of its dims (1 for a scalar). Negative
 * dims or an overflowing product make the tensor invalid (-1). */
static int64_t tensor_elements(const Onnx__TensorProto *t)
{
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++) {
        int64_t d = t->dims[i];
        if (d < 0) return -1;
        if (d != 0 && n > INT64_MAX / d) return -1;
        n *= d;
    }
    return n;
}

/* Adds one tensor's element count to *sum; false when it is invalid. */
static bool add_elements(const Onnx__TensorProto *t, int64_t *sum)
{
    if (!t) return true;
    int64_t n = tensor_elements(t);
    if (n < 0 || *sum > INT64_MAX - n) return false;
    *sum += n;
    return true;
}

static ib_status count_graph(const Onnx__GraphProto *g, int64_t *count, ib_error *err)
{
    int64_t sum = 0;
    for (size_t i = 0; i < g->n_initializer; i++)
        IB_FAIL_IF(!add_elements(g->initializer[i], &sum), err, IB_ERR_MODEL,
                   "onnx: initializer '%s' has invalid dimensions",
                   g->initializer[i]->name ? g->initializer[i]->name : "");
    /* A sparse initializer stores only its non-zero values. */
    for (size_t i = 0; i < g->n_sparse_initializer; i++)
        IB_FAIL_IF(!add_elements(g->sparse_initializer[i]->values, &sum), err, IB_ERR_MODEL,
                   "onnx: sparse initializer %zu has invalid dimensions", i);
    *count = sum;
    return IB_OK;
}

ib_status ib_onnx_count_initializer_elements(const uint8_t *bytes, size_t len, int64_t *count, ib_error *err)
{
    IB_FAIL_IF(!count, err, IB_ERR_INVALID_ARG, "onnx: no output given for the count");
    *count = 0;
    IB_FAIL_IF(!bytes || len == 0, err, IB_ERR_MODEL, "onnx: the model is empty (0 bytes)");

    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, bytes);
    IB_FAIL_IF(!m, err, IB_ERR_MODEL,
               "onnx: not a valid ONNX model (%zu bytes that do not parse as a ModelProto; "
               "truncated or not ONNX)",
               len);
    /* Many byte strings parse as some protobuf message; an ONNX model also
     * has a graph and imports at least one opset (ONNX IR >= 3). */
    ib_status st;
    if (!m->graph || m->n_opset_import == 0)
        st = ib__fail(err, IB_ERR_MODEL, "onnx: not a valid ONNX model (%zu bytes parse, but carry %s)", len,
                      !m->graph ? "no graph" : "no opset import");
    else
        st = count_graph(m->graph, count, err);
    onnx__model_proto__free_unpacked(m, NULL);
    return st;
}

/* Float weight elements by type: [0] float32, [1] float16, [2] bfloat16. */
static void count_float_weights(const Onnx__GraphProto *g, int64_t counts[3])
{
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        int k = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT      ? 0
                : t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16  ? 1
                : t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16 ? 2
                                                                          : -1;
        int64_t n = k < 0 ? -1 : tensor_elements(t);
        if (n > 0 && counts[k] <= INT64_MAX - n) counts[k] += n;
    }
}

/* Without weights: the graph's float inputs and outputs by type. */
static void count_float_ports(const Onnx__GraphProto *g, int64_t counts[3])
{
    const Onnx__ValueInfoProto *const *ports[2] = { (const Onnx__ValueInfoProto *const *)g->input,
                                                    (const Onnx__ValueInfoProto *const *)g->output };
    size_t n[2] = { g->n_input, g->n_output };
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < n[p]; i++) {
            const Onnx__TypeProto *tp = ports[p][i]->type;
            if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) continue;
            int32_t t = tp->tensor_type->elem_type;
            counts[0] += t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
            counts[1] += t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
            counts[2] += t == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
        }
}

ib_math ib_onnx_model_math(const uint8_t *bytes, size_t len)
{
    Onnx__ModelProto *m = bytes && len ? onnx__model_proto__unpack(NULL, len, bytes) : NULL;
    if (!m) return IB_MATH_DEFAULT;
    int64_t counts[3] = { 0, 0, 0 };
    if (m->graph) {
        count_float_weights(m->graph, counts);
        if (counts[0] + counts[1] + counts[2] == 0) count_float_ports(m->graph, counts);
    }
    onnx__model_proto__free_unpacked(m, NULL);
    /* Most of the arithmetic is done in the type most of the weights have
     * (a float16 model keeps a few float32 ones around blocked operators). */
    int64_t reduced = counts[1] > counts[2] ? counts[1] : counts[2];
    if (reduced <= counts[0]) return IB_MATH_DEFAULT;
    return counts[1] >= counts[2] ? IB_MATH_FP16 : IB_MATH_BF16;
}
