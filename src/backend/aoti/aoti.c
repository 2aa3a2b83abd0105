/* The aoti backend: a PyTorch model compiled ahead of time by AOTInductor
 * (torch._inductor.aoti_compile_and_package), measured with no Python.
 *
 * The model is a shared library with a C interface (a .pt2 package holds
 * it, with its weights and kernels, in data/aotinductor/<model>/; a bare
 * .so is taken as it is). Its tensors are libtorch's AtenTensorHandles, so
 * libtorch is needed at run time: it is dlopened from --option
 * libtorch=DIR (the torch/lib of the PyTorch that compiled the model) or
 * found by the model's own dependencies on the library path; inferbench
 * never links it. Inputs are allocated once per batch (on the device for
 * CUDA) and filled with seeded random values; every run wraps them in
 * fresh tensor handles (Run takes ownership of its inputs), runs the
 * model on our stream and releases the outputs it hands back. With
 * cuda_graph=yes the second run at each batch captures the model's run in
 * a CUDA graph, and the runs after it replay the graph.
 *
 * Everything opened is closed again when open fails: the unpacked files,
 * the model library, libtorch, the stream, the buffers. */
#include "backend/registry.h"
#include "backend/aoti/aoti.h"
#include "base/numeric.h"
#include "gpu/gpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* AOTInductor's model interface (torch/csrc/inductor/aoti_runtime/interface.h)
 * and libtorch's C shim (torch/csrc/inductor/aoti_torch/c/shim.h): 0 is
 * success for both. */
typedef int32_t (*create_fn)(void **container, size_t num_models, const char *device, const char *cubin_dir);
typedef int32_t (*delete_fn)(void *container);
typedef int32_t (*run_fn)(void *container, void **inputs, size_t num_inputs, void **outputs,
                          size_t num_outputs, void *stream, void *proxy_executor);
typedef int32_t (*count_fn)(void *container, size_t *n);
typedef int32_t (*from_blob_fn)(void *data, int64_t ndim, const int64_t *sizes, const int64_t *strides,
                                int64_t storage_offset, int32_t dtype, int32_t device_type,
                                int32_t device_index, void **tensor);
typedef int32_t (*delete_tensor_fn)(void *tensor);
typedef int32_t (*code_fn)(void);

typedef struct aoti_api {
    create_fn create;
    delete_fn delete_container;
    run_fn run;
    run_fn run_single; /* AOTInductorModelContainerRunSingleThreaded, with cuda_graph */
    count_fn num_inputs, num_outputs;
    from_blob_fn from_blob;
    delete_tensor_fn delete_tensor;
    int32_t dtype, device_type;
} aoti_api;

typedef enum elem { ELEM_F32, ELEM_F16, ELEM_BF16 } elem;
static const char *const elem_names[] = { "float32", "float16", "bfloat16" };
static const char *const elem_dtype_fns[] = { "aoti_torch_dtype_float32", "aoti_torch_dtype_float16",
                                              "aoti_torch_dtype_bfloat16" };

typedef struct input {
    int rank;
    int64_t dims[IB_MAX_RANK], strides[IB_MAX_RANK];
    void *data;
    size_t bytes;
} input;

/* libtorch's libraries, loaded in this order (each that DIR has). */
static const char *const libtorch_names[] = { "libc10.so", "libc10_cuda.so", "libtorch_cpu.so",
                                              "libtorch_cuda.so", "libtorch.so" };
#define N_LIBTORCH (sizeof libtorch_names / sizeof libtorch_names[0])

typedef struct aoti {
    char path[256];
    const char *model; /* option model=, within the args during open only */
    char libtorch_dir[512];
    char extract_parent[512];
    bool dynamic_batch, channels_last, sync;
    bool cuda_graph;      /* option cuda_graph=yes (CUDA only) */
    bool has_run;         /* a run has succeeded: a failure since is not the inputs' form */
    int64_t batch_runs;   /* runs that succeeded at this batch (cuda_graph: the
                             first is plain, the second captures) */
    ib__gpu_graph *graph; /* the run captured at this batch, replayed since */
    elem elem;
    int n_inputs;
    input in[IB_MAX_TENSORS];
    size_t n_outputs;
    ib_device_kind device;
    int device_id;
    void *stream;
    uint64_t seed;
    int64_t batch;
    ib__aoti_unpacked unpacked;
    void *libtorch[N_LIBTORCH];
    void *library;
    aoti_api api;
    void *container;
    void **outputs; /* [n_outputs], the handles a run gives back */
} aoti;

static size_t elem_bytes(elem e) { return e == ELEM_F32 ? 4 : 2; }

/* --- options -------------------------------------------------------------- */

static ib_status parse_shape(aoti *a, const char *value, ib_error *err)
{
    IB_FAIL_IF(a->n_inputs == IB_MAX_TENSORS, err, IB_ERR_INVALID_ARG, "aoti: more than %d shapes",
               IB_MAX_TENSORS);
    char text[600];
    snprintf(text, sizeof text, "shape:%s", value);
    ib_shape_override s;
    ib_error why;
    IB_FAIL_IF(ib_shape_parse(text, &s, &why) != IB_OK, err, IB_ERR_INVALID_ARG,
               "aoti: option shape=%s: expected positive dimensions such as 1x3x224x224", value);
    input *in = &a->in[a->n_inputs++];
    in->rank = s.rank;
    memcpy(in->dims, s.dims, sizeof in->dims);
    return IB_OK;
}

static ib_status parse_dtype(aoti *a, const char *value, ib_error *err)
{
    for (int e = ELEM_F32; e <= ELEM_BF16; e++)
        if (!strcmp(value, elem_names[e])) return a->elem = (elem)e, IB_OK;
    return ib__fail(err, IB_ERR_INVALID_ARG, "aoti: option dtype=%s: expected float32, float16 or bfloat16",
                    value);
}

static ib_status parse_path(const char *key, const char *value, char *out, size_t cap, ib_error *err)
{
    IB_FAIL_IF(!*value || strlen(value) >= cap, err, IB_ERR_INVALID_ARG,
               "aoti: option %s: a path of 1 to %zu bytes", key, cap - 1);
    IB_FAIL_IF(access(value, R_OK | X_OK) != 0, err, IB_ERR_INVALID_ARG, "aoti: option %s=%s: %s", key, value,
               strerror(errno));
    ib__strlcpy(out, value, cap);
    return IB_OK;
}

static ib_status parse_option(aoti *a, const ib_backend_option *o, ib_error *err)
{
    if (!strcmp(o->key, "shape")) return parse_shape(a, o->value, err);
    if (!strcmp(o->key, "dtype")) return parse_dtype(a, o->value, err);
    if (!strcmp(o->key, "libtorch"))
        return parse_path(o->key, o->value, a->libtorch_dir, sizeof a->libtorch_dir, err);
    if (!strcmp(o->key, "extract_dir"))
        return parse_path(o->key, o->value, a->extract_parent, sizeof a->extract_parent, err);
    if (!strcmp(o->key, "dynamic_batch")) return ib__backend_option_bool(o, &a->dynamic_batch, err);
    if (!strcmp(o->key, "channels_last")) return ib__backend_option_bool(o, &a->channels_last, err);
    if (!strcmp(o->key, "cuda_graph")) return ib__backend_option_bool(o, &a->cuda_graph, err);
    if (!strcmp(o->key, "model")) return a->model = o->value, IB_OK;
    return ib__fail(err, IB_ERR_INVALID_ARG,
                    "aoti: unknown option '%s' (known: shape, dtype, libtorch, model, dynamic_batch, "
                    "channels_last, cuda_graph, extract_dir)",
                    o->key);
}

static ib_status parse_args(aoti *a, const ib_backend_open_args *args, ib_error *err)
{
    IB_FAIL_IF(!args->model || !*args->model, err, IB_ERR_INVALID_ARG,
               "aoti: give the model: a .pt2 package or an AOTInductor model library (.so)");
    IB_FAIL_IF(strlen(args->model) >= sizeof a->path, err, IB_ERR_INVALID_ARG, "aoti: model path too long");
    ib__strlcpy(a->path, args->model, sizeof a->path);
    ib__strlcpy(a->extract_parent, "/tmp", sizeof a->extract_parent);
    for (size_t i = 0; i < args->n_options; i++) IB_TRY(parse_option(a, &args->options[i], err));
    IB_FAIL_IF(a->n_inputs == 0, err, IB_ERR_INVALID_ARG,
               "aoti: give each input's shape: --option shape=1x3x224x224 (once per input, in order)");
    for (int i = 0; a->channels_last && i < a->n_inputs; i++)
        IB_FAIL_IF(a->in[i].rank != 4, err, IB_ERR_INVALID_ARG,
                   "aoti: channels_last needs 4-D inputs (input %d has %d)", i, a->in[i].rank);
    a->device_id = args->device_id;
    a->seed = args->seed;
    a->device = args->device == IB_DEVICE_AUTO
                    ? (ib__gpu_available(args->device_id) ? IB_DEVICE_CUDA : IB_DEVICE_CPU)
                    : args->device;
    IB_FAIL_IF(a->cuda_graph && a->device != IB_DEVICE_CUDA, err, IB_ERR_INVALID_ARG,
               "aoti: --option cuda_graph=yes needs a CUDA device: a CUDA graph replays GPU work, and this "
               "model would run on the CPU (%s)",
               args->device == IB_DEVICE_CPU ? "--device cpu" : "this machine has no usable CUDA device");
    a->batch = a->dynamic_batch ? args->batch : a->in[0].dims[0];
    IB_FAIL_IF(!a->dynamic_batch && args->batch != 1 && args->batch != a->batch, err, IB_ERR_INVALID_ARG,
               "aoti: batch %lld, but the shapes give %lld: a model exported with a dynamic batch takes "
               "--option dynamic_batch=yes",
               (long long)args->batch, (long long)a->batch);
    return IB_OK;
}

/* --- loading -------------------------------------------------------------- */

static ib_status load_libtorch(aoti *a, ib_error *err)
{
    bool any = false;
    for (size_t i = 0; i < N_LIBTORCH; i++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s", a->libtorch_dir, libtorch_names[i]);
        if (access(path, R_OK) != 0) continue;
        a->libtorch[i] = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        IB_FAIL_IF(!a->libtorch[i], err, IB_ERR_INVALID_ARG, "aoti: libtorch: %s", dlerror());
        any = true;
    }
    IB_FAIL_IF(!any, err, IB_ERR_INVALID_ARG,
               "aoti: option libtorch=%s: no libtorch.so there (torch/lib of a PyTorch)", a->libtorch_dir);
    return IB_OK;
}

/* dlopen's words turned into what to do about them. */
static ib_status library_refused(const char *library, const char *why, ib_error *err)
{
    const char *symbol = strstr(why, "undefined symbol: ");
    if (symbol)
        return ib__fail(
            err, IB_ERR_MODEL,
            "aoti: the model library needs %s, which the libtorch loaded lacks: it was compiled for "
            "another PyTorch version",
            symbol + strlen("undefined symbol: "));
    if (strstr(why, "cannot open shared object file") && (strstr(why, "libtorch") || strstr(why, "libc10")))
        return ib__fail(
            err, IB_ERR_INVALID_ARG,
            "aoti: libtorch not found (%s): give --option libtorch=DIR, the torch/lib of the PyTorch "
            "that compiled the model",
            why);
    return ib__fail(err, IB_ERR_MODEL, "aoti: cannot load the model library '%s': %s", library, why);
}

static bool is_shared_library(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char magic[4] = { 0 };
    bool elf = f && fread(magic, 1, 4, f) == 4 &&
               !memcmp(magic,
                       "\x7f"
                       "ELF",
                       4);
    if (f) fclose(f);
    return elf;
}

static ib_status find_library(aoti *a, const char **library, ib_error *err)
{
    IB_FAIL_IF(access(a->path, R_OK) != 0, err, IB_ERR_MODEL, "aoti: '%s': %s", a->path, strerror(errno));
    if (is_shared_library(a->path)) return *library = a->path, IB_OK;
    IB_TRY(ib__aoti_unpack(a->path, a->model, a->extract_parent, &a->unpacked, err));
    *library = a->unpacked.library;
    return IB_OK;
}

static void *symbol(aoti *a, const char *name, const char **missing)
{
    void *p = dlsym(a->library, name);
    if (!p && !*missing) *missing = name;
    return p;
}

/* The model's functions and libtorch's, reached through the model library
 * (dlsym searches its dependencies too). */
static ib_status resolve(aoti *a, ib_error *err)
{
    const char *missing = NULL;
    aoti_api *p = &a->api;
    /* POSIX: data and function pointers convert (memcpy keeps -Wpedantic quiet). */
    void *s[] = {
        symbol(a, "AOTInductorModelContainerCreateWithDevice", &missing),
        symbol(a, "AOTInductorModelContainerDelete", &missing),
        symbol(a, "AOTInductorModelContainerRun", &missing),
        symbol(a, "AOTInductorModelContainerGetNumInputs", &missing),
        symbol(a, "AOTInductorModelContainerGetNumOutputs", &missing),
    };
    IB_FAIL_IF(missing, err, IB_ERR_MODEL, "aoti: '%s' is not an AOTInductor model library: no %s", a->path,
               missing);
    void *t[] = {
        symbol(a, "aoti_torch_create_tensor_from_blob", &missing),
        symbol(a, "aoti_torch_delete_tensor_object", &missing),
        symbol(a, elem_dtype_fns[a->elem], &missing),
        symbol(a, a->device == IB_DEVICE_CUDA ? "aoti_torch_device_type_cuda" : "aoti_torch_device_type_cpu",
               &missing),
    };
    IB_FAIL_IF(missing, err, IB_ERR_MODEL, "aoti: libtorch's %s not found: not a libtorch the model can use",
               missing);
    /* Run records the model's completion event on the stream, and queries
     * it at the next Run: recorded inside a capture, the event cannot be
     * queried any more (cudaErrorCapturedEvent), so the plain run at the
     * next batch would fail. The single-threaded Run keeps no such event. */
    void *single = a->cuda_graph ? dlsym(a->library, "AOTInductorModelContainerRunSingleThreaded") : NULL;
    IB_FAIL_IF(a->cuda_graph && !single, err, IB_ERR_UNSUPPORTED,
               "aoti: --option cuda_graph=yes needs AOTInductorModelContainerRunSingleThreaded, which this "
               "model library lacks (compiled by an older PyTorch): its Run cannot be captured and run "
               "again");
    memcpy(&p->create, &s[0], sizeof p->create);
    memcpy(&p->delete_container, &s[1], sizeof p->delete_container);
    memcpy(&p->run, &s[2], sizeof p->run);
    if (single) memcpy(&p->run_single, &single, sizeof p->run_single);
    memcpy(&p->num_inputs, &s[3], sizeof p->num_inputs);
    memcpy(&p->num_outputs, &s[4], sizeof p->num_outputs);
    memcpy(&p->from_blob, &t[0], sizeof p->from_blob);
    memcpy(&p->delete_tensor, &t[1], sizeof p->delete_tensor);
    code_fn dtype, device_type;
    memcpy(&dtype, &t[2], sizeof dtype);
    memcpy(&device_type, &t[3], sizeof device_type);
    p->dtype = dtype();
    p->device_type = device_type();
    return IB_OK;
}

static ib_status create_container(aoti *a, ib_error *err)
{
    char device[32], folder[sizeof a->unpacked.library];
    if (a->device == IB_DEVICE_CUDA)
        snprintf(device, sizeof device, "cuda:%d", a->device_id);
    else
        snprintf(device, sizeof device, "cpu");
    /* Kernels (cubins) and weights kept apart lie beside the library. */
    ib__strlcpy(folder, a->unpacked.library[0] ? a->unpacked.dir : ".", sizeof folder);
    if (!a->unpacked.library[0] && strrchr(a->path, '/'))
        snprintf(folder, sizeof folder, "%.*s", (int)(strrchr(a->path, '/') - a->path), a->path);
    IB_FAIL_IF(a->api.create(&a->container, 1, device, folder) != 0, err, IB_ERR_MODEL,
               "aoti: the model refused device '%s' (AOTInductorModelContainerCreateWithDevice failed): "
               "compiled for "
               "another device, or its weights are missing",
               device);
    size_t n_in = 0;
    IB_FAIL_IF(a->api.num_inputs(a->container, &n_in) != 0 ||
                   a->api.num_outputs(a->container, &a->n_outputs) != 0,
               err, IB_ERR_MODEL, "aoti: the model does not say how many inputs and outputs it has");
    IB_FAIL_IF(n_in != (size_t)a->n_inputs, err, IB_ERR_INVALID_ARG,
               "aoti: the model has %zu inputs, %d shapes given (--option shape=... once per input)", n_in,
               a->n_inputs);
    a->outputs = calloc(a->n_outputs ? a->n_outputs : 1, sizeof *a->outputs);
    IB_FAIL_IF(!a->outputs, err, IB_ERR_NO_MEMORY, "out of memory");
    return IB_OK;
}

/* --- inputs --------------------------------------------------------------- */

static void set_strides(const aoti *a, input *in)
{
    int64_t step = 1;
    for (int d = in->rank - 1; d >= 0; d--) in->strides[d] = step, step *= in->dims[d];
    if (a->channels_last) { /* N, C, H, W laid out as N, H, W, C */
        in->strides[1] = 1;
        in->strides[3] = in->dims[1];
        in->strides[2] = in->dims[1] * in->dims[3];
        in->strides[0] = in->strides[2] * in->dims[2];
    }
}

static void free_inputs(aoti *a)
{
    for (int i = 0; i < a->n_inputs; i++) {
        if (a->device == IB_DEVICE_CUDA)
            ib__gpu_free(a->in[i].data);
        else
            free(a->in[i].data);
        a->in[i].data = NULL;
    }
}

/* Values of input i: seeded random in [-1, 1), or zeros, in its type. */
static void make_values(const aoti *a, int i, bool zeros, void *host, size_t n)
{
    /* Input i starts 2^40 draws after input i - 1: no two inputs share values. */
    uint64_t state = a->seed + ((uint64_t)i << 40) * IB__SPLITMIX64_STEP;
    for (size_t k = 0; k < n; k++) {
        float v = zeros ? 0.0f : ib__uniform_pm1(&state);
        if (a->elem == ELEM_F32)
            ((float *)host)[k] = v;
        else
            ((uint16_t *)host)[k] = a->elem == ELEM_F16 ? ib__float_to_half(v) : ib__float_to_bfloat16(v);
    }
}

static ib_status fill_input(aoti *a, int i, bool zeros, ib_error *err)
{
    input *in = &a->in[i];
    if (a->device == IB_DEVICE_CPU) {
        make_values(a, i, zeros, in->data, in->bytes / elem_bytes(a->elem));
        return IB_OK;
    }
    void *host = malloc(in->bytes);
    IB_FAIL_IF(!host, err, IB_ERR_NO_MEMORY, "out of memory");
    make_values(a, i, zeros, host, in->bytes / elem_bytes(a->elem));
    ib_status st = ib__gpu_copy_h2d(in->data, host, in->bytes, a->stream, err);
    free(host);
    return st;
}

static ib_status alloc_input(aoti *a, input *in, ib_error *err)
{
    size_t n = 1;
    for (int d = 0; d < in->rank; d++) {
        IB_FAIL_IF((size_t)in->dims[d] > SIZE_MAX / 8 / n, err, IB_ERR_INVALID_ARG,
                   "aoti: an input too large");
        n *= (size_t)in->dims[d];
    }
    in->bytes = n * elem_bytes(a->elem);
    if (a->device == IB_DEVICE_CUDA) return ib__gpu_malloc(in->bytes, &in->data, err);
    in->data = malloc(in->bytes);
    IB_FAIL_IF(!in->data, err, a->dynamic_batch ? IB_ERR_DEVICE_OOM : IB_ERR_NO_MEMORY,
               "aoti: out of memory for %zu bytes of input", in->bytes);
    return IB_OK;
}

/* The captured graph reads the inputs by address: new inputs need a new
 * graph, captured after a plain run at their batch. */
static void drop_graph(aoti *a)
{
    ib__gpu_graph_destroy(a->graph);
    a->graph = NULL;
    a->batch_runs = 0;
}

/* Allocates and fills the inputs of batch; on failure none is left. */
static ib_status bind(aoti *a, int64_t batch, ib_error *err)
{
    drop_graph(a);
    free_inputs(a);
    ib_status st = IB_OK;
    for (int i = 0; st == IB_OK && i < a->n_inputs; i++) {
        if (a->dynamic_batch) a->in[i].dims[0] = batch;
        set_strides(a, &a->in[i]);
        st = alloc_input(a, &a->in[i], err);
        if (st == IB_OK) st = fill_input(a, i, false, err);
    }
    if (st != IB_OK)
        free_inputs(a);
    else
        a->batch = batch;
    return st;
}

/* --- the slots ------------------------------------------------------------ */

static void aoti_close(void *state)
{
    aoti *a = state;
    drop_graph(a);
    free_inputs(a);
    free(a->outputs);
    if (a->container) a->api.delete_container(a->container);
    if (a->library) dlclose(a->library);
    for (size_t i = N_LIBTORCH; i-- > 0;)
        if (a->libtorch[i]) dlclose(a->libtorch[i]);
    ib__aoti_unpacked_remove(&a->unpacked);
    if (a->stream) ib__gpu_stream_destroy(a->stream);
    free(a);
}

static ib_status load(aoti *a, ib_error *err)
{
    if (a->device == IB_DEVICE_CUDA) IB_TRY(ib__gpu_stream_create(a->device_id, &a->stream, err));
    if (a->libtorch_dir[0]) IB_TRY(load_libtorch(a, err));
    const char *library = NULL;
    IB_TRY(find_library(a, &library, err));
    a->library = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!a->library) return library_refused(library, dlerror(), err);
    IB_TRY(resolve(a, err));
    IB_TRY(create_container(a, err));
    return bind(a, a->batch, err);
}

static ib_status aoti_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    aoti *a = calloc(1, sizeof *a);
    IB_FAIL_IF(!a, err, IB_ERR_NO_MEMORY, "out of memory");
    a->sync = true;
    ib_status st = parse_args(a, args, err);
    if (st == IB_OK) st = load(a, err);
    a->model = NULL; /* the caller's string */
    if (st != IB_OK) {
        aoti_close(a);
        return st;
    }
    uint64_t caps = a->dynamic_batch ? IB_CAP_BATCH_DIM : 0;
    if (a->device == IB_DEVICE_CUDA)
        caps |= IB_CAP_GPU | IB_CAP_CUDA_STREAM | IB_CAP_DEVICE_TIMING | IB_CAP_ASYNC_RUN | IB_CAP_L2_FLUSH;
    /* Runs are replays of one graph: one launch a run, so a launch that
     * outlasts the run is not the model's launch-bound state (latency.c). */
    if (a->cuda_graph) caps |= IB_CAP_GRAPH_CAPTURE;
    *out = (ib_backend_handle){
        .state = a, .caps = caps | IB_CAP_REFILL_INPUTS, .stream = a->stream, .device_id = a->device_id
    };
    return IB_OK;
}

static void aoti_describe(void *state, ib_workload_info *info)
{
    const aoti *a = state;
    ib__strlcpy(info->model, a->path, sizeof info->model);
    ib__strlcpy(info->provider, "AOTInductor", sizeof info->provider);
    info->batch = a->batch;
    info->n_inputs = a->n_inputs;
    for (int i = 0; i < a->n_inputs; i++) {
        ib_tensor_info *t = &info->inputs[i];
        snprintf(t->name, sizeof t->name, "input%d", i);
        ib__strlcpy(t->type, elem_names[a->elem], sizeof t->type);
        t->rank = a->in[i].rank;
        memcpy(t->dims, a->in[i].dims, sizeof t->dims);
        if (a->dynamic_batch) ib__strlcpy(t->dim_names[0], "batch", sizeof t->dim_names[0]);
        ib__strlcpy(t->values, "random", sizeof t->values);
    }
    info->n_outputs = a->n_outputs < IB_MAX_TENSORS ? (int)a->n_outputs : IB_MAX_TENSORS;
    for (int i = 0; i < info->n_outputs; i++)
        snprintf(info->outputs[i].name, sizeof info->outputs[i].name, "output%d", i);
    /* The settings that make two results of one package unlike (compare
     * names them key by key); the paths are not among them. */
    info->options = (ib_option_list){ 0 };
    ib_option_list_set(&info->options, "dtype", elem_names[a->elem]);
    ib_option_list_set(&info->options, "channels_last", a->channels_last ? "yes" : "no");
    ib_option_list_set(&info->options, "dynamic_batch", a->dynamic_batch ? "yes" : "no");
    ib_option_list_set(&info->options, "cuda_graph", a->cuda_graph ? "yes" : "no");
    /* No math stated: a package's arithmetic was fixed when it was compiled
     * and its C interface does not tell it (the input's dtype does not: a
     * float32-input model may compute in half inside). Its fp32 reference
     * would be another package, so there is none to judge accuracy by. */
}

static ib_status aoti_set_batch(void *state, int64_t batch, ib_error *err)
{
    aoti *a = state;
    if (batch == a->batch && a->in[0].data) return IB_OK;
    IB_FAIL_IF(
        !a->dynamic_batch, err, IB_ERR_UNSUPPORTED,
        "aoti: batch %lld, but the model's shapes are fixed at %lld (--option dynamic_batch=yes for a model "
        "exported with a dynamic batch)",
        (long long)batch, (long long)a->batch);
    return bind(a, batch, err);
}

static void release_outputs(aoti *a)
{
    for (size_t i = 0; i < a->n_outputs; i++) {
        if (a->outputs[i]) a->api.delete_tensor(a->outputs[i]);
        a->outputs[i] = NULL;
    }
}

/* The model's run function: with cuda_graph the single-threaded one. */
static const char *run_name(const aoti *a)
{
    return a->cuda_graph ? "AOTInductorModelContainerRunSingleThreaded" : "AOTInductorModelContainerRun";
}

static ib_status run_done(aoti *a, ib_error *err)
{
    a->has_run = true;
    a->batch_runs++;
    return a->sync && a->stream ? ib__gpu_stream_sync(a->stream, err) : IB_OK;
}

/* A run of the captured graph: one launch on our stream. */
static ib_status replay(aoti *a, ib_error *err)
{
    ib_error why;
    ib_status st = ib__gpu_graph_launch(a->graph, a->stream, &why);
    if (st != IB_OK)
        return ib__fail(err, st, "aoti: replaying the captured run failed at batch %lld: %s",
                        (long long)a->batch, why.message);
    return run_done(a, err);
}

/* A capture that failed: CUDA's words when it has some (what invalidated
 * the capture), else the model's run failing inside it. A run that cannot
 * be captured is the model's and the option's, not a failure of the
 * measurement: bad input, as ONNX Runtime's refused graphs are. Out of
 * memory stays what it is (the batch search recovers from it), and so
 * does a lost context. */
static ib_status capture_failed(const aoti *a, ib_status st, const ib_error *why, ib_error *err)
{
    if (st == IB_OK)
        return ib__fail(err, IB_ERR_UNSUPPORTED,
                        "aoti: the model's run cannot be captured in a CUDA graph (--option cuda_graph=yes): "
                        "%s failed inside the capture (batch %lld)",
                        run_name(a), (long long)a->batch);
    return ib__fail(err, st == IB_ERR_RUNTIME ? IB_ERR_UNSUPPORTED : st,
                    "aoti: the model's run cannot be captured in a CUDA graph (--option cuda_graph=yes): %s",
                    why->message);
}

/* Input handles over the bound inputs (Run takes them). */
static ib_status wrap_inputs(aoti *a, void **handles, ib_error *err)
{
    int32_t device_index = a->device == IB_DEVICE_CUDA ? a->device_id : 0;
    for (int i = 0; i < a->n_inputs; i++) {
        const input *in = &a->in[i];
        if (a->api.from_blob(in->data, in->rank, in->dims, in->strides, 0, a->api.dtype, a->api.device_type,
                             device_index, &handles[i]) != 0) {
            while (i-- > 0) a->api.delete_tensor(handles[i]);
            return ib__fail(err, IB_ERR_RUNTIME,
                            "aoti: aoti_torch_create_tensor_from_blob failed for input %d", i);
        }
    }
    return IB_OK;
}

/* The model's run on our stream, captured in a graph when capture: the
 * capture is ended whatever Run did, so the stream is usable after a
 * failure. The outputs Run made are released. */
static int32_t model_run(aoti *a, void **handles, bool capture, ib_status *capture_st, ib_error *why)
{
    run_fn run = a->cuda_graph ? a->api.run_single : a->api.run;
    *capture_st = IB_OK;
    if (capture && (*capture_st = ib__gpu_capture_begin(a->stream, why)) != IB_OK) {
        for (int i = 0; i < a->n_inputs; i++) a->api.delete_tensor(handles[i]);
        return 0;
    }
    int32_t failed =
        run(a->container, handles, (size_t)a->n_inputs, a->outputs, a->n_outputs, a->stream, NULL);
    if (capture) *capture_st = ib__gpu_capture_end(a->stream, &a->graph, why);
    release_outputs(a);
    return failed;
}

/* One run: the model on our stream (plain, or captured at the second run
 * of a batch with cuda_graph, then replayed), the outputs it made
 * released. */
static ib_status aoti_run(void *state, ib_error *err)
{
    aoti *a = state;
    if (a->graph) return replay(a, err);
    void *handles[IB_MAX_TENSORS] = { 0 };
    IB_TRY(wrap_inputs(a, handles, err));
    /* The first run at a batch is plain: the model's lazy initialisation
     * (constant folding, its allocations, library handles) happens there,
     * outside the graph. */
    bool capture = a->cuda_graph && a->batch_runs > 0;
    ib_status capture_st;
    ib_error why;
    int32_t failed = model_run(a, handles, capture, &capture_st, &why);
    if (capture && (failed || capture_st != IB_OK)) {
        ib__gpu_graph_destroy(a->graph);
        a->graph = NULL;
        return capture_failed(a, capture_st, &why, err);
    }
    /* The C interface does not say the inputs' dtype or layout, so the first
     * run is where a model compiled for others refuses ours. */
    IB_FAIL_IF(
        failed && !a->has_run, err, IB_ERR_INVALID_ARG,
        "aoti: %s refused the first run (batch %lld): inputs of another "
        "shape, dtype or layout than the model was compiled for? (--option shape, dtype, channels_last)",
        run_name(a), (long long)a->batch);
    IB_FAIL_IF(failed, err, IB_ERR_RUNTIME, "aoti: %s failed at batch %lld", run_name(a),
               (long long)a->batch);
    /* The capture recorded the run without running it: the graph runs it. */
    return capture ? replay(a, err) : run_done(a, err);
}

static ib_status aoti_set_run_sync(void *state, bool sync, ib_error *err)
{
    (void)err;
    ((aoti *)state)->sync = sync;
    return IB_OK;
}

static ib_status aoti_fill_inputs(void *state, bool zeros, ib_error *err)
{
    aoti *a = state;
    for (int i = 0; i < a->n_inputs; i++) IB_TRY(fill_input(a, i, zeros, err));
    return a->stream ? ib__gpu_stream_sync(a->stream, err) : IB_OK;
}

static const ib_backend_option_decl aoti_options[] = {
    { .key = "model", .help = "the .pt2 package or model .so (default: MODEL)", .values = "PATH" },
    { .key = "shape", .help = "the input's dimensions", .values = "DxDx..." },
    { .key = "dtype", .help = "the input's type", .values = "float32|float16|bfloat16" },
    { .key = "libtorch", .help = "the folder of libtorch's libraries", .values = "DIR" },
    { .key = "extract_dir", .help = "where a .pt2 package is extracted", .values = "DIR" },
    { .key = "dynamic_batch", .help = "the model's first dimension is its batch", .values = "yes|no" },
    { .key = "channels_last", .help = "inputs in channels-last memory order", .values = "yes|no" },
    { .key = "cuda_graph",
      .help = "capture the model's run in a CUDA graph and replay it (one launch a run)",
      .values = "yes|no",
      .flags = IB_OPTION_CUDA_ONLY | IB_OPTION_SWITCH },
};

const ib_backend ib__backend_aoti = {
    .struct_size = sizeof(ib_backend),
    .abi_version = IB_BACKEND_ABI_VERSION,
    .name = "aoti",
    .description =
        "a PyTorch model compiled by AOTInductor (.pt2 package or model .so; libtorch at run time)",
    .open = aoti_open,
    .describe = aoti_describe,
    .set_batch = aoti_set_batch,
    .run = aoti_run,
    .set_run_sync = aoti_set_run_sync,
    .fill_inputs = aoti_fill_inputs,
    .close = aoti_close,
    .options = aoti_options,
    .n_options = sizeof aoti_options / sizeof aoti_options[0],
};
