/* The public side of the converter: math names, a model's own arithmetic
 * (the rule that says a model is float16 itself), and a serialized model
 * in, a serialized converted model out. */
#include "convert/convert.h"

#include <stdlib.h>
#include <string.h>

static const char *const math_names[] = { "default", "fp32", "tf32", "fp16", "bf16" };

const char *ib_math_name(ib_math math)
{
    return (unsigned)math < sizeof math_names / sizeof *math_names ? math_names[math] : "?";
}

ib_status ib_math_parse(const char *text, ib_math *out, ib_error *err)
{
    for (int m = IB_MATH_FP32; text && m <= IB_MATH_BF16; m++)
        if (strcmp(text, math_names[m]) == 0) {
            *out = (ib_math)m;
            return IB_OK;
        }
    return ib__fail(err, IB_ERR_INVALID_ARG, "--math '%s': expected fp32, tf32, fp16 or bf16",
                    text ? text : "");
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
        int64_t n = k < 0 ? -1 : ib__onnx_elements(t);
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

/* A graph's own arithmetic (ib_onnx_model_math's rule): most of the
 * arithmetic is done in the type most of the weights have (a float16
 * model keeps a few float32 ones around blocked operators). */
static ib_math graph_math(const Onnx__GraphProto *g)
{
    int64_t counts[3] = { 0, 0, 0 };
    count_float_weights(g, counts);
    if (counts[0] + counts[1] + counts[2] == 0) count_float_ports(g, counts);
    int64_t reduced = counts[1] > counts[2] ? counts[1] : counts[2];
    if (reduced <= counts[0]) return IB_MATH_DEFAULT;
    return counts[1] >= counts[2] ? IB_MATH_FP16 : IB_MATH_BF16;
}

ib_math ib_onnx_model_math(const uint8_t *bytes, size_t len)
{
    Onnx__ModelProto *m = bytes && len ? onnx__model_proto__unpack(NULL, len, bytes) : NULL;
    ib_math math = m && m->graph ? graph_math(m->graph) : IB_MATH_DEFAULT;
    if (m) onnx__model_proto__free_unpacked(m, NULL);
    return math;
}

static ib_status copy_bytes(const uint8_t *bytes, size_t len, uint8_t **out, size_t *out_len, ib_error *err)
{
    *out = malloc(len);
    IB_FAIL_IF(!*out, err, IB_ERR_NO_MEMORY, "convert: cannot allocate %zu bytes", len);
    memcpy(*out, bytes, len);
    *out_len = len;
    return IB_OK;
}

static ib_status pack(const Onnx__ModelProto *m, uint8_t **out, size_t *out_len, ib_error *err)
{
    size_t n = onnx__model_proto__get_packed_size(m);
    IB_FAIL_IF(n > (size_t)INT32_MAX, err, IB_ERR_UNSUPPORTED,
               "convert: the converted model would be %zu bytes, over protobuf's 2 GiB limit", n);
    uint8_t *buf = malloc(n ? n : 1);
    IB_FAIL_IF(!buf, err, IB_ERR_NO_MEMORY, "convert: cannot allocate %zu bytes", n);
    size_t written = onnx__model_proto__pack(m, buf);
    if (written != n) {
        free(buf);
        return ib__fail(err, IB_ERR_INTERNAL, "convert: packed %zu bytes, expected %zu", written, n);
    }
    /* protobuf-c reads some malformed messages that it then writes in a
     * form it does not read back (found by fuzz_convert): what we hand out
     * must parse. */
    Onnx__ModelProto *back = onnx__model_proto__unpack(NULL, n, buf);
    if (!back) {
        free(buf);
        return ib__fail(
            err, IB_ERR_MODEL,
            "convert: the model holds fields that do not survive being written back (malformed ONNX)");
    }
    onnx__model_proto__free_unpacked(back, NULL);
    *out = buf;
    *out_len = n;
    return IB_OK;
}

ib_status ib_onnx_convert(const uint8_t *bytes, size_t len, ib_math math, uint8_t **out, size_t *out_len,
                          ib_convert_info *info, ib_error *err)
{
    ib_convert_info local;
    if (!info) info = &local;
    *info = (ib_convert_info){ 0 };
    IB_FAIL_IF(!out || !out_len, err, IB_ERR_INVALID_ARG, "convert: no place for the model");
    *out = NULL;
    *out_len = 0;
    IB_FAIL_IF(math != IB_MATH_FP16 && math != IB_MATH_BF16, err, IB_ERR_INVALID_ARG,
               "convert: math %s is not a conversion (fp16 or bf16)", ib_math_name(math));
    IB_FAIL_IF(!bytes || len == 0, err, IB_ERR_MODEL, "convert: the model is empty (0 bytes)");
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, bytes);
    IB_FAIL_IF(!m, err, IB_ERR_MODEL, "convert: not a valid ONNX model (%zu bytes that do not parse)", len);
    ib_math own = m->graph ? graph_math(m->graph) : IB_MATH_DEFAULT;
    ib_status st;
    if (!m->graph || m->n_opset_import == 0)
        st = ib__fail(err, IB_ERR_MODEL, "convert: not a valid ONNX model (it has %s)",
                      !m->graph ? "no graph" : "no opset import");
    else if (own == math)
        info->unchanged = true, st = copy_bytes(bytes, len, out, out_len, err);
    else if (own != IB_MATH_DEFAULT) /* naming it bf16 would misstate what runs */
        st = ib__fail(err, IB_ERR_UNSUPPORTED,
                      "convert: the model is %s itself (most of its weights): only float32 is "
                      "converted, not one reduced type into another",
                      ib_math_name(own));
    else {
        int32_t target = math == IB_MATH_FP16 ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16
                                              : ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
        st = ib__convert_model(m, target, info, err);
        if (st == IB_OK) st = pack(m, out, out_len, err);
    }
    onnx__model_proto__free_unpacked(m, NULL);
    return st;
}
