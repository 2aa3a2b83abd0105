/* Reading serialized ONNX models with protobuf-c: what a model really
 * carries. The input is untrusted (a user's file, a fuzzer's bytes): every
 * count is checked before it is multiplied or summed. */
#include "convert/convert.h"

#include <stdint.h>

/* Adds one tensor's element count to *sum; false when it is invalid. */
static bool add_elements(const Onnx__TensorProto *t, int64_t *sum)
{
    if (!t) return true;
    int64_t n = ib__onnx_elements(t);
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
