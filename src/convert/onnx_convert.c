/* The public side of the converter: math names, and a serialized model in,
 * a serialized converted model out. */
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

/* The reduced type a graph holds itself: FLOAT16 or BFLOAT16 when no
 * float32 weight, input or output is in it and one of that type is (the
 * first met, for the rare graph that mixes both); 0 otherwise. */
static int32_t own_reduced_type(const Onnx__GraphProto *g)
{
    int32_t reduced = 0;
    for (size_t i = 0; i < g->n_initializer; i++) {
        int32_t t = g->initializer[i]->data_type;
        if (t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) return 0;
        if (!reduced &&
            (t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 || t == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16))
            reduced = t;
    }
    const Onnx__ValueInfoProto *const *ports[2] = { (const Onnx__ValueInfoProto *const *)g->input,
                                                    (const Onnx__ValueInfoProto *const *)g->output };
    size_t counts[2] = { g->n_input, g->n_output };
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < counts[p]; i++) {
            const Onnx__TypeProto *tp = ports[p][i]->type;
            if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) continue;
            int32_t t = tp->tensor_type->elem_type;
            if (t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) return 0;
            if (!reduced &&
                (t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 || t == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16))
                reduced = t;
        }
    return reduced;
}

static ib_math math_of_type(int32_t type)
{
    return type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16    ? IB_MATH_FP16
           : type == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16 ? IB_MATH_BF16
                                                             : IB_MATH_DEFAULT;
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
    ib_math own = m->graph ? math_of_type(own_reduced_type(m->graph)) : IB_MATH_DEFAULT;
    ib_status st;
    if (!m->graph || m->n_opset_import == 0)
        st = ib__fail(err, IB_ERR_MODEL, "convert: not a valid ONNX model (it has %s)",
                      !m->graph ? "no graph" : "no opset import");
    else if (own == math)
        info->unchanged = true, st = copy_bytes(bytes, len, out, out_len, err);
    else if (own != IB_MATH_DEFAULT) /* naming it bf16 would misstate what runs */
        st = ib__fail(err, IB_ERR_UNSUPPORTED,
                      "convert: the model holds no float32 (it is %s throughout): only float32 is "
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
