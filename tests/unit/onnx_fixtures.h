/* Tiny ONNX models for the tests, built in memory with the protobuf-c code
 * generated from onnx.proto, and written to a temporary folder. */
#ifndef IB_TESTS_ONNX_FIXTURES_H
#define IB_TESTS_ONNX_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

/* A graph input or output: ONNX element type (1 float, 7 int64, 8 string,
 * 10 float16, ...) and its dimensions, comma-separated: a number is fixed,
 * a name symbolic, "?" unknown (neither), "" a scalar; NULL declares no
 * shape at all (not even a rank). */
typedef struct fx_tensor {
    const char *name;
    int elem_type;
    const char *dims;
} fx_tensor;

/* One node; `to` > 0 adds Cast's "to" attribute. */
typedef struct fx_node {
    const char *op;
    const char *inputs[3];
    const char *output;
    int64_t to;
} fx_node;

/* A float32 rows x cols initializer with small deterministic values. */
typedef struct fx_weight {
    const char *name;
    int64_t rows, cols;
} fx_weight;

typedef struct fx_model {
    fx_tensor inputs[4];
    size_t n_inputs;
    fx_tensor outputs[4];
    size_t n_outputs;
    fx_node nodes[4];
    size_t n_nodes;
    fx_weight weights[2];
    size_t n_weights;
} fx_model;

/* Serializes m as an ONNX model (IR 8, opset 17). malloc'ed; NULL on
 * failure. */
uint8_t *fx_build(const fx_model *m, size_t *len);

/* The test models:
 *   matmul      x float32[batch,16] -> MatMul W[16,4] -> y float32[batch,4]
 *   fixed       x float32[2,16]     -> MatMul W[16,4] -> y float32[2,4]
 *   seq         x float32[batch,seq,16] -> MatMul W -> y float32[batch,seq,4]
 *   ids         ids int64[batch,seq], mask int64[batch,seq] -> Add -> Cast
 *               -> y float32[batch,seq]
 *   half        x float16[batch,8] -> Cast -> y float32[batch,8]
 *   lookup      ids int64[batch], x float32[batch] -> Gather W[4,4] rows ids
 *               and int64(x), Add -> y float32[batch,4]: an index outside
 *               -4..3 fails the run with a message naming it, which shows
 *               the values the inputs held
 *   strings     s string[batch] -> Identity -> y string[batch]
 *   unnamed     x float32[?,16] -> MatMul W -> y float32[?,4]
 *   fixed1      x float32[1,16]     -> MatMul W[16,4] -> y float32[1,4]
 *   unranked    x float32 (no shape) -> Relu -> y float32 (no shape)
 *   state       x float32[batch,8], s float32[1,?,8] -> Add -> y float32[1,?,8]
 *               (s broadcasts against the batch: s:1x3x8 fails at batch 2)
 *   widen       x float32[batch,n,1] -> MatMul W[1,4096] -> ReduceSum
 *               -> y float32[1,1,1]: an intermediate 4096 times the input */
uint8_t *fx_model_bytes(const char *which, size_t *len);

/* A fresh folder under /tmp; malloc'ed path. */
char *fx_tmpdir(void);

/* Writes bytes to dir/file; returns the malloc'ed path, NULL on failure. */
char *fx_write(const char *dir, const char *file, const void *bytes, size_t len);

/* Writes model `which` to dir/which.onnx; malloc'ed path. */
char *fx_write_model(const char *dir, const char *which);

/* Removes the files fx_write put in dir, then dir. */
void fx_cleanup(const char *dir);

#endif
