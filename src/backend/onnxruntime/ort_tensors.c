/* The model's inputs and outputs: what they are, the value of each of their
 * dimensions, and the data the inputs are filled with. */
#include "backend/onnxruntime/ort.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Element types                                                             */
/* ------------------------------------------------------------------------ */

size_t ib__ort_type_size(ONNXTensorElementDataType type)
{
    switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return 8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return 4;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return 2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return 1;
    default: return 0; /* strings, complex, 8/4/2-bit floats and ints */
    }
}

const char *ib__ort_type_name(ONNXTensorElementDataType type)
{
    switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return "float32";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return "uint8";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return "int8";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return "uint16";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16: return "int16";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return "int32";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return "int64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING: return "string";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return "bool";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return "float16";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return "float64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return "uint32";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return "uint64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64: return "complex64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128: return "complex128";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: return "bfloat16";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN: return "float8e4m3fn";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ: return "float8e4m3fnuz";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2: return "float8e5m2";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ: return "float8e5m2fnuz";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4: return "uint4";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4: return "int4";
    default: return "?";
    }
}

/* ------------------------------------------------------------------------ */
/* Reading the ports                                                         */
/* ------------------------------------------------------------------------ */

static const char *onnx_type_name(ONNXType t)
{
    switch (t) {
    case ONNX_TYPE_SEQUENCE: return "sequence";
    case ONNX_TYPE_MAP: return "map";
    case ONNX_TYPE_OPTIONAL: return "optional";
    case ONNX_TYPE_SPARSETENSOR: return "sparse tensor";
    case ONNX_TYPE_OPAQUE: return "opaque";
    default: return "unknown";
    }
}

/* Fills the type and shape of p from a tensor's type info. */
static ib_status read_tensor_shape(const OrtApi *api, const OrtTensorTypeAndShapeInfo *ti, ib__ort_port *p,
                                   bool is_input, ib_error *err)
{
    size_t rank = 0;
    IB_TRY(ib__ort_check(api->GetTensorElementType(ti, &p->type), IB_ERR_MODEL, err,
                         "cannot read a tensor type"));
    /* Without a shape ORT answers rank 0, as for a scalar: an input
     * declaring none takes its rank from --shape (resolve_input). */
    p->unranked = !api->TensorTypeAndShape_HasShape(ti);
    if (p->unranked) return IB_OK;
    IB_TRY(ib__ort_check(api->GetDimensionsCount(ti, &rank), IB_ERR_MODEL, err, "cannot read a tensor rank"));
    IB_FAIL_IF(rank > IB_MAX_RANK, err, IB_ERR_UNSUPPORTED, "%s '%s' has rank %zu; at most %d is supported",
               is_input ? "input" : "output", p->name, rank, IB_MAX_RANK);
    p->rank = (int)rank;
    if (rank == 0) return IB_OK;
    const char *names[IB_MAX_RANK] = { 0 };
    IB_TRY(ib__ort_check(api->GetDimensions(ti, p->model_dims, rank), IB_ERR_MODEL, err,
                         "cannot read tensor dimensions"));
    IB_TRY(ib__ort_check(api->GetSymbolicDimensions(ti, names, rank), IB_ERR_MODEL, err,
                         "cannot read symbolic dimensions"));
    for (size_t i = 0; i < rank; i++) {
        /* ORT says -1 for a symbolic or unknown dimension; 0 is a real
         * (empty) size only when the model writes it, which we keep. */
        if (p->model_dims[i] < 0) p->model_dims[i] = -1;
        ib__strlcpy(p->dim_names[i], p->model_dims[i] < 0 && names[i] ? names[i] : "",
                    sizeof p->dim_names[i]);
    }
    return IB_OK;
}

static ib_status check_input_supported(const ib__ort_port *p, ib_error *err)
{
    IB_FAIL_IF(p->onnx_type != ONNX_TYPE_TENSOR, err, IB_ERR_UNSUPPORTED,
               "input '%s' is a %s; only tensor inputs are supported", p->name, onnx_type_name(p->onnx_type));
    IB_FAIL_IF(ib__ort_type_size(p->type) == 0, err, IB_ERR_UNSUPPORTED,
               "input '%s' has element type %s; supported: float32, float16, bfloat16, float64, "
               "int64, int32, int16, int8, uint64, uint32, uint16, uint8, bool",
               p->name, ib__ort_type_name(p->type));
    return IB_OK;
}

static ib_status read_port(const OrtApi *api, OrtSession *session, OrtAllocator *alloc, size_t index,
                           bool is_input, ib__ort_port *p, ib_error *err)
{
    char *name = NULL;
    IB_TRY(ib__ort_check(is_input ? api->SessionGetInputName(session, index, alloc, &name)
                                  : api->SessionGetOutputName(session, index, alloc, &name),
                         IB_ERR_MODEL, err, "cannot read a tensor name"));
    p->name = strdup(name);
    IB_TRY(ib__ort_check(api->AllocatorFree(alloc, name), IB_ERR_INTERNAL, err, "cannot free a name"));
    IB_FAIL_IF(!p->name, err, IB_ERR_NO_MEMORY, "out of memory");

    OrtTypeInfo *info = NULL;
    IB_TRY(ib__ort_check(is_input ? api->SessionGetInputTypeInfo(session, index, &info)
                                  : api->SessionGetOutputTypeInfo(session, index, &info),
                         IB_ERR_MODEL, err, "cannot read a tensor's type"));
    ib_status st = ib__ort_check(api->GetOnnxTypeFromTypeInfo(info, &p->onnx_type), IB_ERR_MODEL, err,
                                 "cannot read a tensor's type");
    if (st == IB_OK && p->onnx_type == ONNX_TYPE_TENSOR) {
        const OrtTensorTypeAndShapeInfo *ti = NULL;
        st = ib__ort_check(api->CastTypeInfoToTensorInfo(info, &ti), IB_ERR_MODEL, err,
                           "cannot read a tensor's shape");
        if (st == IB_OK && ti) st = read_tensor_shape(api, ti, p, is_input, err);
    }
    api->ReleaseTypeInfo(info);
    if (st == IB_OK && is_input) st = check_input_supported(p, err);
    return st;
}

void ib__ort_ports_free(ib__ort_port *ports, size_t n)
{
    if (!ports) return;
    for (size_t i = 0; i < n; i++) {
        free(ports[i].name);
        free(ports[i].values.path);
    }
    free(ports);
}

static ib_status read_ports(const OrtApi *api, OrtSession *session, OrtAllocator *alloc, bool is_input,
                            ib__ort_port **out, size_t *n_out, ib_error *err)
{
    size_t n = 0;
    *out = NULL;
    *n_out = 0;
    IB_TRY(ib__ort_check(is_input ? api->SessionGetInputCount(session, &n)
                                  : api->SessionGetOutputCount(session, &n),
                         IB_ERR_MODEL, err, "cannot count the model's tensors"));
    ib__ort_port *ports = calloc(n ? n : 1, sizeof *ports);
    IB_FAIL_IF(!ports, err, IB_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        ib_status st = read_port(api, session, alloc, i, is_input, &ports[i], err);
        if (st != IB_OK) {
            ib__ort_ports_free(ports, n);
            return st;
        }
    }
    *out = ports;
    *n_out = n;
    return IB_OK;
}

ib_status ib__ort_ports_read(const OrtApi *api, OrtSession *session, ib__ort_port **inputs, size_t *n_inputs,
                             ib__ort_port **outputs, size_t *n_outputs, ib_error *err)
{
    OrtAllocator *alloc = NULL;
    IB_TRY(ib__ort_check(api->GetAllocatorWithDefaultOptions(&alloc), IB_ERR_INTERNAL, err,
                         "cannot get ORT's default allocator"));
    IB_TRY(read_ports(api, session, alloc, true, inputs, n_inputs, err));
    ib_status st = read_ports(api, session, alloc, false, outputs, n_outputs, err);
    if (st != IB_OK) {
        ib__ort_ports_free(*inputs, *n_inputs);
        *inputs = NULL;
        *n_inputs = 0;
    }
    return st;
}

/* ------------------------------------------------------------------------ */
/* Resolving dimensions                                                      */
/* ------------------------------------------------------------------------ */

ib_status ib__dim_defaults_parse(const char *text, ib__dim_defaults *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    if (!text) return IB_OK;
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, ", ;");
        if (len > 0) {
            const char *eq = memchr(p, '=', len);
            IB_FAIL_IF(!eq || eq == p || (size_t)(eq - p) >= sizeof out->names[0], err, IB_ERR_INTERNAL,
                       "bad dimension defaults '%s'", text);
            IB_FAIL_IF(out->n == sizeof out->values / sizeof out->values[0], err, IB_ERR_INTERNAL,
                       "too many dimension defaults in '%s'", text);
            char *end;
            long long v = strtoll(eq + 1, &end, 10);
            IB_FAIL_IF(end != p + len || v < 1, err, IB_ERR_INTERNAL, "bad dimension defaults '%s'", text);
            memcpy(out->names[out->n], p, (size_t)(eq - p));
            out->names[out->n][eq - p] = '\0';
            out->values[out->n++] = v;
        }
        p += len;
        if (*p) p++;
    }
    return IB_OK;
}

static const ib_shape_override *find_override(const ib_shape_override *shapes, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(shapes[i].name, name) == 0) return &shapes[i];
    return NULL;
}

void ib__ort_port_names(const ib__ort_port *ports, size_t n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used + 1 < cap; i++) {
        int k = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", ports[i].name);
        if (k < 0) break;
        used += (size_t)k;
    }
    if (n == 0) ib__strlcpy(buf, "(none)", cap);
}

/* "float32[batch,16]" as the model declares it. */
static void describe_port(const ib__ort_port *p, char *buf, size_t cap)
{
    if (p->unranked) {
        snprintf(buf, cap, "%s, no shape", ib__ort_type_name(p->type));
        return;
    }
    size_t used = (size_t)snprintf(buf, cap, "%s[", ib__ort_type_name(p->type));
    for (int i = 0; i < p->rank && used < cap; i++) {
        const char *sep = i ? "," : "";
        if (p->model_dims[i] >= 0)
            used += (size_t)snprintf(buf + used, cap - used, "%s%lld", sep, (long long)p->model_dims[i]);
        else
            used += (size_t)snprintf(buf + used, cap - used, "%s%s", sep,
                                     p->dim_names[i][0] ? p->dim_names[i] : "?");
    }
    if (used < cap) snprintf(buf + used, cap - used, "]");
}

/* The first override that gives a value to a dimension named `name` (on
 * any input, at any position that is symbolic there). -1 if none. */
static int64_t override_by_name(const ib__ort_port *inputs, size_t n_inputs, const ib_shape_override *shapes,
                                size_t n_shapes, const char *name)
{
    for (size_t i = 0; i < n_inputs; i++) {
        const ib_shape_override *o = find_override(shapes, n_shapes, inputs[i].name);
        if (!o) continue;
        for (int d = 0; d < inputs[i].rank; d++)
            if (inputs[i].model_dims[d] < 0 && strcmp(inputs[i].dim_names[d], name) == 0 && o->dims[d] > 0)
                return o->dims[d];
    }
    return -1;
}

static int64_t default_by_name(const ib__dim_defaults *defaults, const char *name)
{
    for (size_t i = 0; defaults && i < defaults->n; i++)
        if (strcmp(defaults->names[i], name) == 0) return defaults->values[i];
    return -1;
}

/* Whether a dimension name is the name of some input's batch dimension. */
static bool is_batch_name(const ib__ort_port *inputs, size_t n_inputs, const char *name)
{
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i].rank > 0 && inputs[i].model_dims[0] < 0 && strcmp(inputs[i].dim_names[0], name) == 0)
            return true;
    return false;
}

/* An example of the --shape that would set input p: known values, "N"
 * where one is needed. */
static void shape_example(const ib__ort_port *p, int64_t batch, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "%s:", p->name);
    for (int d = 0; d < p->rank && used < cap; d++) {
        const char *sep = d ? "x" : "";
        if (p->follows_batch[d])
            used += (size_t)snprintf(buf + used, cap - used, "%s%lld", sep, (long long)batch);
        else if (p->dims[d] > 0 || p->model_dims[d] >= 0)
            used += (size_t)snprintf(buf + used, cap - used, "%s%lld", sep,
                                     (long long)(p->dims[d] > 0 ? p->dims[d] : p->model_dims[d]));
        else
            used += (size_t)snprintf(buf + used, cap - used, "%sN", sep);
    }
}

static ib_status check_overrides(const ib__ort_port *inputs, size_t n_inputs, const ib_shape_override *shapes,
                                 size_t n_shapes, ib_error *err)
{
    for (size_t s = 0; s < n_shapes; s++) {
        const ib_shape_override *o = &shapes[s];
        const ib__ort_port *p = NULL;
        for (size_t i = 0; i < n_inputs && !p; i++)
            if (strcmp(inputs[i].name, o->name) == 0) p = &inputs[i];
        if (!p) {
            char names[300];
            ib__ort_port_names(inputs, n_inputs, names, sizeof names);
            return ib__fail(err, IB_ERR_INVALID_ARG,
                            "--shape names input '%s', but the model's inputs are: %s", o->name, names);
        }
        if (p->unranked) continue; /* the override is its shape */
        char decl[200];
        describe_port(p, decl, sizeof decl);
        IB_FAIL_IF(o->rank != p->rank, err, IB_ERR_INVALID_ARG,
                   "--shape gives input '%s' %d dimension(s), but it has %d: %s", o->name, o->rank, p->rank,
                   decl);
        for (int d = 0; d < p->rank; d++) {
            IB_FAIL_IF(o->dims[d] == 0 || o->dims[d] < -1, err, IB_ERR_INVALID_ARG,
                       "--shape gives input '%s' dimension %d the value %lld", o->name, d + 1,
                       (long long)o->dims[d]);
            IB_FAIL_IF(o->dims[d] > 0 && p->model_dims[d] >= 0 && o->dims[d] != p->model_dims[d], err,
                       IB_ERR_INVALID_ARG,
                       "--shape gives input '%s' dimension %d the value %lld, but the model fixes "
                       "it at %lld: %s",
                       o->name, d + 1, (long long)o->dims[d], (long long)p->model_dims[d], decl);
        }
    }
    return IB_OK;
}

/* The batch: --batch when given (asked > 0), else the value the --shape
 * overrides give the batch dimension (the symbolic first dimension), else 1.
 * Overrides that disagree with --batch or with each other are an error:
 * there is one batch. */
static ib_status choose_batch(const ib__ort_port *inputs, size_t n_inputs, const ib_shape_override *shapes,
                              size_t n_shapes, int64_t asked, int64_t *batch, ib_error *err)
{
    const char *from = NULL; /* the input whose override set the batch */
    *batch = asked;
    for (size_t i = 0; i < n_inputs; i++) {
        const ib__ort_port *p = &inputs[i];
        const ib_shape_override *o = find_override(shapes, n_shapes, p->name);
        if (!o || p->unranked || p->rank == 0 || p->model_dims[0] >= 0 || o->dims[0] < 1) continue;
        if (*batch == 0) {
            *batch = o->dims[0];
            from = p->name;
            continue;
        }
        if (o->dims[0] == *batch) continue;
        char dim[48] = "";
        if (p->dim_names[0][0]) snprintf(dim, sizeof dim, " '%s'", p->dim_names[0]);
        if (!from)
            return ib__fail(err, IB_ERR_INVALID_ARG,
                            "--shape gives input '%s' batch dimension%s the value %lld, but "
                            "--batch is %lld: drop one or make them agree",
                            p->name, dim, (long long)o->dims[0], (long long)*batch);
        return ib__fail(err, IB_ERR_INVALID_ARG,
                        "--shape gives input '%s' batch dimension%s the value %lld, but input "
                        "'%s' the value %lld: there is one batch",
                        p->name, dim, (long long)o->dims[0], from, (long long)*batch);
    }
    if (*batch == 0) *batch = 1;
    return IB_OK;
}

/* An input that declares no shape takes its override's rank and values
 * (fixed: nothing says one of them is the batch). */
static ib_status shape_unranked(ib__ort_port *p, const ib_shape_override *o, ib_error *err)
{
    IB_FAIL_IF(!o, err, IB_ERR_INVALID_ARG,
               "input '%s' (%s) declares no shape, not even a rank: give it one with --shape "
               "%s:D1xD2x...",
               p->name, ib__ort_type_name(p->type), p->name);
    p->rank = o->rank;
    for (int d = 0; d < p->rank; d++) {
        p->model_dims[d] = -1;
        p->dim_names[d][0] = '\0';
        p->dims[d] = o->dims[d];
        p->follows_batch[d] = false;
    }
    return IB_OK;
}

/* Resolves the dimensions of one input; fails on a symbolic one left
 * without a value. */
static ib_status resolve_input(ib__ort_port *inputs, size_t n_inputs, ib__ort_port *p,
                               const ib_shape_override *shapes, size_t n_shapes,
                               const ib__dim_defaults *defaults, int64_t batch, ib_error *err)
{
    const ib_shape_override *o = find_override(shapes, n_shapes, p->name);
    if (p->unranked) return shape_unranked(p, o, err);
    for (int d = 0; d < p->rank; d++) {
        p->follows_batch[d] = false;
        p->dims[d] = p->model_dims[d];
        if (p->model_dims[d] >= 0) continue;
        const char *name = p->dim_names[d];
        if (d == 0 || (name[0] && is_batch_name(inputs, n_inputs, name))) {
            p->follows_batch[d] = true;
            continue;
        }
        int64_t v = o ? o->dims[d] : -1;
        if (v < 1 && name[0]) v = override_by_name(inputs, n_inputs, shapes, n_shapes, name);
        if (v < 1 && name[0]) v = default_by_name(defaults, name);
        p->dims[d] = v;
    }
    for (int d = 0; d < p->rank; d++) {
        if (p->follows_batch[d] || p->dims[d] > 0 || p->model_dims[d] >= 0) continue;
        char decl[200], example[200], which[96];
        describe_port(p, decl, sizeof decl);
        shape_example(p, batch, example, sizeof example);
        if (p->dim_names[d][0])
            snprintf(which, sizeof which, "a symbolic '%s' (dimension %d) with no value", p->dim_names[d],
                     d + 1);
        else
            snprintf(which, sizeof which, "dimension %d with neither a value nor a name", d + 1);
        return ib__fail(err, IB_ERR_INVALID_ARG, "input '%s' (%s) has %s: set it with --shape %s", p->name,
                        decl, which, example);
    }
    return IB_OK;
}

/* Outputs: a symbolic dimension is the batch when an input's batch
 * dimension has its name (or both are unnamed and it comes first), takes
 * the value an input dimension of the same name has, else stays -1. */
static void resolve_output(const ib__ort_port *inputs, size_t n_inputs, ib__ort_port *p, bool has_batch_dim)
{
    for (int d = 0; d < p->rank; d++) {
        p->follows_batch[d] = false;
        p->dims[d] = p->model_dims[d];
        if (p->model_dims[d] >= 0) continue;
        const char *name = p->dim_names[d];
        if (name[0] ? is_batch_name(inputs, n_inputs, name) : d == 0 && has_batch_dim) {
            p->follows_batch[d] = true;
            continue;
        }
        for (size_t i = 0; i < n_inputs && name[0] && p->dims[d] < 0; i++)
            for (int k = 0; k < inputs[i].rank; k++)
                if (inputs[i].model_dims[k] < 0 && strcmp(inputs[i].dim_names[k], name) == 0 &&
                    inputs[i].dims[k] > 0) {
                    p->dims[d] = inputs[i].dims[k];
                    break;
                }
    }
}

ib_status ib__ort_resolve_dims(ib__ort_port *inputs, size_t n_inputs, ib__ort_port *outputs, size_t n_outputs,
                               const ib_shape_override *shapes, size_t n_shapes,
                               const ib__dim_defaults *defaults, int64_t asked_batch, int64_t *batch,
                               bool *has_batch_dim, ib_error *err)
{
    IB_TRY(check_overrides(inputs, n_inputs, shapes, n_shapes, err));
    IB_TRY(choose_batch(inputs, n_inputs, shapes, n_shapes, asked_batch, batch, err));
    *has_batch_dim = false;
    for (size_t i = 0; i < n_inputs; i++) {
        IB_TRY(resolve_input(inputs, n_inputs, &inputs[i], shapes, n_shapes, defaults, *batch, err));
        if (inputs[i].rank > 0 && inputs[i].follows_batch[0]) *has_batch_dim = true;
    }
    for (size_t i = 0; i < n_outputs; i++) resolve_output(inputs, n_inputs, &outputs[i], *has_batch_dim);
    return IB_OK;
}

void ib__ort_port_shape(const ib__ort_port *p, int64_t batch, int64_t *shape)
{
    for (int d = 0; d < p->rank; d++) shape[d] = p->follows_batch[d] ? batch : p->dims[d];
}

bool ib__ort_port_bytes(const ib__ort_port *p, int64_t batch, size_t *bytes)
{
    int64_t shape[IB_MAX_RANK];
    ib__ort_port_shape(p, batch, shape);
    size_t n = ib__ort_type_size(p->type);
    if (n == 0) return false;
    for (int d = 0; d < p->rank; d++) {
        if (shape[d] < 0) return false;
        if (shape[d] > 0 && n > SIZE_MAX / (size_t)shape[d]) return false;
        n *= (size_t)shape[d];
    }
    *bytes = n;
    return true;
}
