/* A small builder of ONNX models over the structs that protoc-c generates
 * from onnx.proto: initializers with random weights, nodes with attributes,
 * graph inputs and outputs, and packing to bytes.
 *
 * Everything the builder allocates hangs off one Onnx__ModelProto and is
 * allocated with malloc, so protobuf-c's own free_unpacked releases it all
 * (ib__graph_free).
 *
 * Errors are sticky: after the first failure (host memory), every further
 * call does nothing and returns a placeholder, and ib__graph_pack reports
 * the failure. Model code therefore reads as a plain sequence of layers.
 *
 * The builder also carries the counters that the model code fills while it
 * builds (params, MACs), so that one pass over the architecture both emits
 * the graph and describes it. A dry run (materialize = false) builds the
 * nodes and the initializers' shapes but no weight data: it is how the zoo
 * computes its table cheaply. */
#ifndef IB_ZOO_GRAPH_H
#define IB_ZOO_GRAPH_H

#include "inferbench.h"
#include "onnx/onnx.pb-c.h"

#define IB__ONNX_IR_VERSION 8 /* the IR version that goes with opset 17 */
#define IB__ONNX_OPSET 17

#define IB__GRAPH_MAX_CONSTS 32

typedef struct ib__graph {
    Onnx__ModelProto *model;
    Onnx__GraphProto *graph;
    size_t cap_node, cap_initializer; /* capacities of the repeated fields */
    int32_t float_type;               /* ONNX data type of weights and float tensors */
    bool materialize;                 /* false: a dry run, initializers carry no data */
    uint64_t rng;                     /* splitmix64 state: weights are reproducible */
    unsigned next_id;                 /* for unique node and tensor names */
    ib_status status;                 /* the first failure, sticky */
    const char *failure;              /* what failed (static text) */

    /* Filled by the model code while it builds (see docs/zoo.md). */
    int64_t params; /* parameters as the reference framework counts */
    int64_t macs;   /* multiply-accumulates per item, default shape */
    int64_t stored; /* weight elements put in initializers */

    /* Constant nodes already emitted, so each distinct constant is one node. */
    struct ib__graph_const {
        int32_t type;     /* ONNX data type */
        size_t rank, n;   /* rank 0 or 1; n values */
        int64_t ints[8];  /* int64 values */
        float f;          /* a float scalar's value */
        const char *name; /* the Constant node's output */
    } consts[IB__GRAPH_MAX_CONSTS];
    size_t n_consts;
} ib__graph;

/* Starts an empty model. fp16 selects float16 for weights, constants and the
 * float inputs/outputs. seed fixes the weights. Returns IB_ERR_NO_MEMORY or
 * IB_OK; ib__graph_free must be called in both cases. */
ib_status ib__graph_init(ib__graph *g, const char *graph_name, bool fp16, bool materialize, uint64_t seed);

/* Releases everything the builder allocated. Accepts a zeroed struct. */
void ib__graph_free(ib__graph *g);

/* Serializes the model; *bytes is malloc'ed. Reports a sticky failure. */
ib_status ib__graph_pack(ib__graph *g, uint8_t **bytes, size_t *len, ib_error *err);

/* A weight initializer named `name` of the model's float type, with values
 * uniform in [center - bound, center + bound]. Adds its element count to
 * g->stored (not to g->params: the model code counts those). Returns the
 * tensor name, owned by the graph. */
const char *ib__graph_weight(ib__graph *g, const char *name, size_t rank, const int64_t *dims, float center,
                             float bound);

/* A scalar constant of the model's float type (a Constant node). */
const char *ib__graph_const_float(ib__graph *g, float value);

/* An int64 constant: rank 0 (a scalar, n must be 1) or rank 1 of n values. */
const char *ib__graph_const_ints(ib__graph *g, size_t rank, size_t n, const int64_t *values);

/* Appends a node of op type `op` with the given inputs and one output,
 * named uniquely. Returns the node (to add attributes) or NULL after a
 * failure. */
Onnx__NodeProto *ib__graph_node(ib__graph *g, const char *op, size_t n_inputs, const char *const *inputs);

/* The name of a node's first output ("" for NULL, after a failure). */
const char *ib__node_output(const Onnx__NodeProto *node);

/* Shorthands: a node of one or two inputs, no attributes; its output. */
const char *ib__op1(ib__graph *g, const char *op, const char *a);
const char *ib__op2(ib__graph *g, const char *op, const char *a, const char *b);

/* Attributes; a NULL node (after a failure) is ignored. */
void ib__attr_int(ib__graph *g, Onnx__NodeProto *node, const char *name, int64_t v);
void ib__attr_float(ib__graph *g, Onnx__NodeProto *node, const char *name, float v);
void ib__attr_ints(ib__graph *g, Onnx__NodeProto *node, const char *name, size_t n, const int64_t *v);

/* Declares a graph input. dims lists the dimensions separated by commas,
 * numbers for fixed ones and names for symbolic ones: "batch,3,224,224". */
void ib__graph_input(ib__graph *g, const char *name, int32_t elem_type, const char *dims);

/* Declares tensor `tensor` a graph output named `name` (renaming the tensor
 * everywhere when the names differ). dims as for ib__graph_input. */
void ib__graph_output(ib__graph *g, const char *tensor, const char *name, int32_t elem_type,
                      const char *dims);

/* snprintf into a name buffer; a name that does not fit is a bug in the
 * model code and fails the build of the graph (IB_ERR_INTERNAL). */
void ib__namef(ib__graph *g, char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
