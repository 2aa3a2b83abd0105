/* The reduced-precision converter, internal interface: an fp32 ONNX model
 * rewritten to fp16 or bf16 in memory (docs/precision.md). It knows ONNX
 * (through protoc-c's structs) and no runtime. */
#ifndef IB_CONVERT_CONVERT_H
#define IB_CONVERT_CONVERT_H

#include "base/common.h"
#include "onnx/onnx.pb-c.h"

/* Rewrites model in place for `target` (ONNX's FLOAT16 or BFLOAT16): float
 * initializers, constants and tensors to target, the main graph's float
 * inputs and outputs kept float32 behind Casts, blocked operators kept in
 * float32 between Casts, subgraphs handled recursively. Fills info. On
 * failure (IB_ERR_MODEL, naming the node or tensor; IB_ERR_NO_MEMORY) the
 * model is half-rewritten: the caller frees it. */
ib_status ib__convert_model(Onnx__ModelProto *model, int32_t target, ib_convert_info *info, ib_error *err);

/* Elements of a tensor: the product of its dims (1 for a scalar); -1 for
 * a negative dimension or a product that overflows (untrusted input). */
int64_t ib__onnx_elements(const Onnx__TensorProto *t);

/* Whether op_type of domain stays in float32 (the block list). */
bool ib__convert_blocked(const char *domain, const char *op_type);

#endif
