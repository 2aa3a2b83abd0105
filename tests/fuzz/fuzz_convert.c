/* Fuzz target: the fp16/bf16 converter (src/convert) on serialized ONNX
 * models, outside input it parses and rewrites. Every input is converted
 * to fp16 and to bf16; a success must be a model that parses again, that
 * converts again (the converted model is no worse an input than the
 * original), and a failure a one-line message. No runtime is involved:
 * thousands of inputs a second. */
#include "fuzz.h"
#include "inferbench.h"

#include "onnx/onnx.pb-c.h"

#include <string.h>

static void check_message(ib_status st, const ib_error *err)
{
    if (st == IB_OK) return;
    size_t len = strnlen(err->message, sizeof err->message);
    FUZZ_ASSERT(len > 0 && len < sizeof err->message);
    FUZZ_ASSERT(!memchr(err->message, '\n', len));
}

static void convert_once(const uint8_t *data, size_t size, ib_math math)
{
    uint8_t *out = NULL;
    size_t out_len = 0;
    ib_convert_info info;
    ib_error err;
    memset(&err, 0x5a, sizeof err);
    ib_status st = ib_onnx_convert(data, size, math, &out, &out_len, &info, &err);
    FUZZ_ASSERT(st == IB_OK || st == IB_ERR_MODEL || st == IB_ERR_UNSUPPORTED);
    FUZZ_ASSERT((st == IB_OK) == (out != NULL));
    check_message(st, &err);
    if (st != IB_OK) return;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, out_len, out);
    FUZZ_ASSERT(m != NULL && m->graph != NULL);
    onnx__model_proto__free_unpacked(m, NULL);
    uint8_t *again = NULL;
    size_t again_len = 0;
    st = ib_onnx_convert(out, out_len, math, &again, &again_len, NULL, &err);
    FUZZ_ASSERT(st == IB_OK);
    ib_free(again);
    ib_free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    convert_once(data, size, IB_MATH_FP16);
    convert_once(data, size, IB_MATH_BF16);
    return 0;
}
