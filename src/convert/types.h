/* Element types of tensors by name, in scopes (a subgraph sees its
 * parents' tensors), for the converter. */
#ifndef IB_CONVERT_TYPES_H
#define IB_CONVERT_TYPES_H

#include "base/common.h"
#include "onnx/onnx.pb-c.h"

typedef struct ib__type_slot {
    char *name;   /* owned; NULL: free slot */
    int32_t type; /* ONNX data type; 0 unknown */
    bool exact;   /* a tensor the converter made: type is its final type */
} ib__type_slot;

typedef struct ib__types {
    ib__type_slot *slots; /* open addressing, cap a power of two */
    size_t cap, n;
    const struct ib__types *parent; /* the enclosing graph's scope */
} ib__types;

void ib__types_init(ib__types *t, const ib__types *parent);
void ib__types_free(ib__types *t);

/* Records name's type in this scope: its type in the model as given (exact
 * false) or, for a tensor the converter made, its final type. false when
 * memory ran out. An empty name is ignored. */
bool ib__types_set(ib__types *t, const char *name, int32_t type, bool exact);

/* The type name had in the model as given (0: unknown or made by us). */
int32_t ib__types_original(const ib__types *t, const char *name);

/* The type name has after conversion to target: float32 becomes target,
 * except for the tensors recorded exact. */
int32_t ib__types_converted(const ib__types *t, const char *name, int32_t target);

/* The elem_type a value_info declares; 0 for none or a non-tensor. */
int32_t ib__value_info_type(const Onnx__ValueInfoProto *v);

/* The attribute called name, or NULL. */
const Onnx__AttributeProto *ib__node_attr(const Onnx__NodeProto *node, const char *name);

/* The type of output k of node, from its inputs' types in t and the
 * operator (0: unknown). */
int32_t ib__node_output_type(const ib__types *t, const Onnx__NodeProto *node, size_t k);

#endif
