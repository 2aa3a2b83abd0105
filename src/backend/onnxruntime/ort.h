/* The ONNX Runtime workload, internal interface. The files that share it:
 *   ort_library.c  the core library, loaded on first use (not linked), and
 *                  its facts for the environment;
 *   ort_session.c  the process-wide OrtEnv, OrtStatus conversion, the CUDA
 *                  execution provider plugin, session creation;
 *   ort_tensors.c  what the model's inputs and outputs are, the values of
 *                  their dimensions, input buffers, their fill, I/O binding;
 *   ort.c          ib__ort_open_model and the workload operations.
 * docs/backend-onnxruntime.md explains the design. */
#ifndef IB_BACKEND_ORT_H
#define IB_BACKEND_ORT_H

#include "backend/registry.h"
#include "workload/workload.h"

#include <onnxruntime_c_api.h>

/* ------------------------------------------------------------------------ */
/* Session layer (ort_session.c)                                             */
/* ------------------------------------------------------------------------ */

/* The ORT API table and the process-wide environment, created on first use
 * (ORT allows one OrtEnv per process; it is never released). Its logger
 * drops every message: the library never prints. */
ib_status ib__ort_init(const OrtApi **api, OrtEnv **env, ib_error *err);

/* Converts an OrtStatus at the edge and releases it. NULL (success) gives
 * IB_OK. Otherwise the message is "<what>: <ORT's message>" and the status
 * is IB_ERR_DEVICE_OOM or IB_ERR_DEVICE_LOST when ORT's message says so
 * (see ib__ort_classify), else `fallback`. */
ib_status ib__ort_check(OrtStatus *st, ib_status fallback, ib_error *err, const char *what);

/* IB_ERR_DEVICE_OOM for messages saying memory ran out, IB_ERR_DEVICE_LOST
 * for the CUDA errors after which the context is unusable,
 * IB_ERR_UNSUPPORTED for a size the runtime refuses (cuDNN's 2^31
 * elements), else fallback. */
ib_status ib__ort_classify(const char *message, ib_status fallback);

/* ------------------------------------------------------------------------ */
/* The core library (ort_library.c)                                          */
/* ------------------------------------------------------------------------ */

/* Where the core library is loaded from (the option `library`, of the
 * whole process): NULL or "" is libonnxruntime.so.1 as the loader finds it.
 * Taken until the first load is tried, and the same path again after;
 * IB_ERR_INVALID_ARG for another path then. The path is copied. */
ib_status ib__ort_set_library(const char *path, ib_error *err);

/* Opens a model on ONNX Runtime with the whole of the model options
 * (opts not NULL): the open_model hook of ib__onnxruntime_hooks. */
ib_status ib__ort_open_model(const char *model, const ib_model_options *opts, ib_workload **out,
                             ib_error *err);

/* What the backend says of ONNX Runtime whether or not it measured
 * (ib_backend_runtime): the runtime_facts hook. */
void ib__ort_runtime_facts(ib_runtime_info *rt);

/* ONNX Runtime's API base, the core library loaded (dlopen) on first use
 * from the path ib__ort_set_library took, else libonnxruntime.so.1
 * as the loader finds it. IB_ERR_UNSUPPORTED with the loader's reason when
 * it cannot be loaded (every later call says the same). */
ib_status ib__ort_api_base(const OrtApiBase **out, ib_error *err);

/* The path of the ONNX Runtime core library in use (into path, when given)
 * and whether it is a CUDA build, the kind the CUDA provider needs. False
 * and "" when it cannot be loaded. */
bool ib__ort_core_library(char *path, size_t cap);

/* Finds the OrtEpDevice of the CUDA execution provider for CUDA device
 * `device_id`, registering the provider's library (beside libonnxruntime.so)
 * with the environment on first use. IB_ERR_NO_DEVICE with the reason when
 * the library is not there or does not load, or the device is not listed. */
ib_status ib__ort_cuda_ep_device(int device_id, const OrtEpDevice **out, ib_error *err);

/* What a session is created with; kept by the workload to create it again. */
typedef struct ib__ort_session_spec {
    const char *path;     /* model file, or NULL with bytes */
    const uint8_t *bytes; /* serialized model (zoo) */
    size_t len;
    const char *label;            /* for messages: the path or the zoo name */
    int intra_op_threads;         /* 0 = ORT's default */
    int graph_optimization_level; /* GraphOptimizationLevel; 0 = ORT_ENABLE_ALL */
    /* CUDA: ep_device non-NULL */
    const OrtEpDevice *ep_device;
    int device_id;
    void *stream; /* user_compute_stream */
    const char *cudnn_conv_algo_search;
    bool prefer_nhwc;
    bool cuda_graph;            /* enable_cuda_graph */
    int use_tf32;               /* -1: the provider's default (on), 0 off, 1 on */
    size_t gpu_mem_limit_bytes; /* 0 = none */
    /* CPU: max_mem of the host arena the session allocates from (the
     * environment's, shared by sessions of the same limit); 0 = ORT's own
     * unbounded arena */
    size_t host_arena_limit_bytes;
} ib__ort_session_spec;

/* Creates a session. Load and parse failures are IB_ERR_MODEL, operators
 * ORT does not implement IB_ERR_UNSUPPORTED, memory IB_ERR_DEVICE_OOM. */
ib_status ib__ort_session_create(const ib__ort_session_spec *spec, OrtSession **out, ib_error *err);

/* ------------------------------------------------------------------------ */
/* Tensors (ort_tensors.c)                                                   */
/* ------------------------------------------------------------------------ */

/* How the values of one input are made (ort_inputs.c), resolved from its
 * ib_input_spec against its element type. */
typedef struct ib__ort_values {
    bool from_file;
    bool pm1;           /* floats: the default random, uniform in
                           [-1, 1) by ib__uniform_pm1 */
    bool constant;      /* every element flo (floats), ulo (integers) */
    double flo, fhi;    /* floats: uniform in [flo, fhi) */
    uint64_t ulo, span; /* integers, as two's complement bits:
                           ulo + draw % (span + 1) */
    char *path;         /* from_file: malloc'ed */
    bool npy;           /* from_file: a .npy file, else raw */
    size_t data_offset; /* from_file: where the values start */
    int npy_rank;
    int64_t npy_shape[IB_MAX_RANK];
    char text[256]; /* the spec as reported */
} ib__ort_values;

/* One input or output of the model. */
typedef struct ib__ort_port {
    char *name;         /* malloc'ed */
    ONNXType onnx_type; /* tensors only are supported inputs */
    ONNXTensorElementDataType type;
    int rank;
    bool unranked;                   /* declares no shape (inputs: --shape gives it) */
    int64_t model_dims[IB_MAX_RANK]; /* as the model declares: -1 symbolic */
    char dim_names[IB_MAX_RANK][32]; /* symbolic names, "" where fixed or unnamed */
    /* Resolved at open: dims[i] is the value bound, except where
     * follows_batch[i] (the batch dimension, or a dimension of the same
     * name), which takes the current batch. -1: unknown (outputs only). */
    int64_t dims[IB_MAX_RANK];
    bool follows_batch[IB_MAX_RANK];
    ib__ort_values values; /* inputs only */
} ib__ort_port;

/* An input's memory, allocated and filled for the largest batch bound
 * since it was made (the capacity); a smaller batch binds a view of its
 * prefix (see ort.c: batch switches). On the CPU the host buffer is what
 * runs read; on CUDA the device buffer is, and the host one exists only
 * once run_with_copies asked for it, the pinned one once copy_in did. */
typedef struct ib__ort_buffer {
    void *host;
    void *device;            /* CUDA only */
    void *pinned;            /* CUDA, copy_in: pinned host memory, capacity */
    size_t bytes;            /* the current batch's tensor */
    size_t cap_bytes;        /* allocated: the capacity's tensor */
    OrtValue *host_value;    /* views of host and device at the */
    OrtValue *device_value;  /* current batch (cached below) */
    OrtValue **host_views;   /* [capacity + 1], by batch; NULL */
    OrtValue **device_views; /* until made; CUDA only */
} ib__ort_buffer;

/* Reads the inputs and outputs of a session. *inputs and *outputs are
 * calloc'ed arrays; release with ib__ort_ports_free. Unsupported input types,
 * non-tensor inputs and ranks above IB_MAX_RANK are IB_ERR_UNSUPPORTED. */
ib_status ib__ort_ports_read(const OrtApi *api, OrtSession *session, ib__ort_port **inputs, size_t *n_inputs,
                             ib__ort_port **outputs, size_t *n_outputs, ib_error *err);
void ib__ort_ports_free(ib__ort_port *ports, size_t n);

/* For tests: the host buffer of input i as filled for the current batch
 * (NULL before the first set_batch, and on CUDA until run_with_copies made
 * it), its size in *bytes. w must be an ONNX Runtime workload. */
const void *ib__ort_input_host(const ib_workload *w, size_t i, size_t *bytes);

/* For tests: the pinned host memory copy_in copies input i from (NULL
 * before the first copy_in), the current batch's size in *bytes; a test
 * writes it to see copy_in carry it. w must be an ONNX Runtime workload. */
void *ib__ort_input_pinned(ib_workload *w, size_t i, size_t *bytes);

/* For tests: output i as the last copy_out left it in pinned host memory
 * (NULL before one), its size in *bytes. w must be an ONNX Runtime
 * workload. */
const void *ib__ort_output_copied(const ib_workload *w, size_t i, size_t *bytes);

/* For tests: how many input buffers (host or device) the workload has
 * allocated since it was opened. A batch switch within the capacity adds
 * none. */
size_t ib__ort_input_allocations(const ib_workload *w);

/* Names of the symbolic dimensions that the zoo (or a caller) gives a value
 * by default: "sequence=128,past=0". */
typedef struct ib__dim_defaults {
    size_t n;
    char names[8][32];
    int64_t values[8];
} ib__dim_defaults;

ib_status ib__dim_defaults_parse(const char *text, ib__dim_defaults *out, ib_error *err);

/* Gives every dimension of every input a value: fixed ones keep the
 * model's, the batch dimension (the first dimension of an input when it is
 * symbolic) follows the batch, other symbolic dimensions take, in order,
 * the input's --shape override, the value another input's override gives a
 * dimension of the same name, the default of that name. Outputs' symbolic
 * dimensions are resolved by name where an input names them, else -1.
 * An input that declares no shape takes its override's rank and dimensions
 * (and without one is an error). Sets *has_batch_dim and *batch: the
 * asked batch (--batch) when > 0, else the value the overrides give the
 * batch dimension, else 1; overrides disagreeing with it are an error. */
ib_status ib__ort_resolve_dims(ib__ort_port *inputs, size_t n_inputs, ib__ort_port *outputs, size_t n_outputs,
                               const ib_shape_override *shapes, size_t n_shapes,
                               const ib__dim_defaults *defaults, int64_t asked_batch, int64_t *batch,
                               bool *has_batch_dim, ib_error *err);

/* The ports' names into buf[cap]: "x, mask" ("(none)" for none). */
void ib__ort_port_names(const ib__ort_port *ports, size_t n, char *buf, size_t cap);

/* The shape of a port at `batch` (unknown dimensions stay -1). */
void ib__ort_port_shape(const ib__ort_port *p, int64_t batch, int64_t *shape);

/* Size of one element of a supported type, 0 for the others. */
size_t ib__ort_type_size(ONNXTensorElementDataType type);
/* "float32", "int64", ... ("?" for none known). */
const char *ib__ort_type_name(ONNXTensorElementDataType type);

/* Bytes of the port at `batch`; false when a dimension is unknown or the
 * size overflows. */
bool ib__ort_port_bytes(const ib__ort_port *p, int64_t batch, size_t *bytes);

/* ------------------------------------------------------------------------ */
/* Input values (ort_inputs.c)                                               */
/* ------------------------------------------------------------------------ */

/* Resolves how each input is filled: the spec naming it, else random.
 * A name no input has, a name given twice, a value that does not fit the
 * input's type, a file that cannot be read or whose .npy header is
 * malformed or of another dtype: IB_ERR_INVALID_ARG, one line. */
ib_status ib__ort_values_plan(ib__ort_port *inputs, size_t n_inputs, const ib_input_spec *specs,
                              size_t n_specs, ib_error *err);

/* Checks that input p's file (if it is filled from one) holds exactly the
 * tensor p is at `batch`: its size, and a .npy file's shape. */
ib_status ib__ort_values_check(const ib__ort_port *p, int64_t batch, ib_error *err);

/* Writes elements [first, first + n) of a tensor of `type` made as v says
 * into dst[0..n): read from v's file, or generated from a PRNG seeded with
 * seed, element i from draw i, so that a tensor made in chunks is the same
 * as one made at once. */
ib_status ib__ort_values_make(const ib__ort_values *v, ONNXTensorElementDataType type, void *dst, size_t n,
                              uint64_t seed, size_t first, ib_error *err);

/* The default values (random) of `type`, as ib__ort_values_make makes
 * them: floats uniform in [-1, 1), integers and booleans in {0, 1}. */
void ib__ort_fill(void *dst, ONNXTensorElementDataType type, size_t n, uint64_t seed, size_t first);

/* Every element zero (the pitfalls' zero-filled input). */
extern const ib__ort_values ib__ort_zeros;

#endif
