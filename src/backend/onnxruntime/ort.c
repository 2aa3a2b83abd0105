/* The ONNX Runtime workload: ib_workload_open_model and the operations the
 * measurement core drives. Inputs are made once per batch, outside the
 * timed region, where the model runs (device memory on CUDA); outputs are
 * bound to the same device so that ORT allocates them there and nothing is
 * copied during a timed run. docs/backend-onnxruntime.md has the design. */
#include "backend/onnxruntime/ort.h"
#include "backend/registry.h"
#include "base/numeric.h"
#include "gpu/gpu.h"
#include "zoo/lm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NVIDIA_VENDOR_ID 0x10DE
/* Host memory used to fill a device input, whatever its size. */
#define STAGING_BYTES ((size_t)64 << 20)

/* Pinned host memory that copy_out copies an output into: grown to the
 * largest output seen, never shrunk. */
typedef struct ort_pinned {
    void *data;
    size_t cap;   /* bytes allocated */
    size_t bytes; /* the last copy's */
} ort_pinned;

typedef struct ort_workload {
    const OrtApi *api;
    ib__ort_session_spec spec; /* what the session is (re)created from */
    char *path;                /* spec.path, owned */
    uint8_t *bytes;            /* spec.bytes (zoo), owned */
    char *label;               /* spec.label, owned */
    bool cuda;
    uint64_t seed;
    size_t host_cap_bytes; /* CPU: host_memory_limit_bytes, else half of physical memory */
    bool host_cap_given;   /* host_cap_bytes is the caller's */

    OrtMemoryInfo *cpu_info;
    const OrtMemoryInfo *device_info; /* CUDA: the provider's, or owned_device_info */
    OrtMemoryInfo *owned_device_info;

    OrtSession *session;
    OrtRunOptions *run_options;      /* the timed run; sync as set_run_sync says */
    OrtRunOptions *copy_run_options; /* run_with_copies: always waits */
    OrtIoBinding *binding;           /* inputs and outputs on the device */
    OrtIoBinding *copy_binding;      /* host inputs and outputs; made on first use */

    ib__ort_port *inputs, *outputs;
    size_t n_inputs, n_outputs;
    ib__ort_buffer *buffers; /* [n_inputs] */
    ort_pinned *copied_out;  /* [n_outputs]: copy_out's host memory (CUDA) */
    bool runs_async;         /* set_run_sync(false): runs and copies do not wait */
    int64_t cap_batch;       /* the batch the buffers were made for; 0: none */
    size_t allocations;      /* input buffers allocated (for tests) */
    bool zero_filled;        /* fill_inputs(zeros) is in the buffers */
    bool bound;              /* buffers and binding hold w->info.batch */
    bool graph_captured;     /* cuda_graph: this session has run (and
                                captured its shapes and addresses) */
    const char *math;        /* the arithmetic in effect (static text) */
    bool math_default;       /* not asked: the runtime's default */
    ib_math own_math;        /* the model's own (a float16 export), else DEFAULT */
} ort_workload;

static ort_workload *impl(ib_workload *w) { return w->impl; }
static void compute_capability(int device_id, int *major, int *minor);

/* ------------------------------------------------------------------------ */
/* Inputs and binding                                                        */
/* ------------------------------------------------------------------------ */

static void release_copy_binding(ort_workload *o)
{
    if (o->copy_binding) o->api->ReleaseIoBinding(o->copy_binding);
    o->copy_binding = NULL;
}

static void release_binding(ort_workload *o)
{
    release_copy_binding(o);
    if (o->binding) o->api->ReleaseIoBinding(o->binding);
    o->binding = NULL;
}

/* Releases the cached views of one buffer, [0, capacity]. */
static void release_views(ort_workload *o, OrtValue ***views)
{
    for (int64_t k = 0; *views && k <= o->cap_batch; k++)
        if ((*views)[k]) o->api->ReleaseValue((*views)[k]);
    free(*views);
    *views = NULL;
}

static void release_host_inputs(ort_workload *o)
{
    for (size_t i = 0; o->buffers && i < o->n_inputs; i++) {
        ib__ort_buffer *b = &o->buffers[i];
        release_views(o, &b->host_views);
        free(b->host);
        b->host_value = NULL;
        b->host = NULL;
    }
}

static void release_pinned_inputs(ort_workload *o)
{
    for (size_t i = 0; o->buffers && i < o->n_inputs; i++) {
        ib__gpu_host_free(o->buffers[i].pinned);
        o->buffers[i].pinned = NULL;
    }
}

static void release_copied_outputs(ort_workload *o)
{
    for (size_t i = 0; o->copied_out && i < o->n_outputs; i++) {
        ib__gpu_host_free(o->copied_out[i].data);
        o->copied_out[i] = (ort_pinned){ 0 };
    }
}

/* Drops the current batch: bindings first (they reference the values, and
 * hold the outputs of the last run), then values, then memory. */
static void release_batch(ib_workload *w)
{
    ort_workload *o = impl(w);
    if (o->cuda && w->stream) {
        ib_error ignored;
        /* an asynchronous run may still read the inputs */
        (void)ib__gpu_stream_sync(w->stream, &ignored);
    }
    if (o->binding) {
        o->api->ClearBoundInputs(o->binding);
        o->api->ClearBoundOutputs(o->binding);
    }
    release_copy_binding(o);
    release_host_inputs(o);
    release_pinned_inputs(o);
    for (size_t i = 0; o->buffers && i < o->n_inputs; i++) {
        ib__ort_buffer *b = &o->buffers[i];
        release_views(o, &b->device_views);
        if (b->device) ib__gpu_free(b->device);
        *b = (ib__ort_buffer){ 0 };
    }
    o->cap_batch = 0;
    o->bound = false;
}

/* Bytes that the inputs and the (known) outputs of a batch take. This is
 * the host memory cap's estimate: it leaves out ORT's intermediate tensors
 * and weights, which do not grow with the batch in a way we can see. */
static bool batch_bytes(const ort_workload *o, int64_t batch, size_t *total)
{
    size_t sum = 0, n;
    for (size_t i = 0; i < o->n_inputs; i++) {
        if (!ib__ort_port_bytes(&o->inputs[i], batch, &n) || sum + n < sum) return false;
        sum += n;
    }
    for (size_t i = 0; i < o->n_outputs; i++)
        if (ib__ort_port_bytes(&o->outputs[i], batch, &n) && sum + n >= sum) sum += n;
    *total = sum;
    return true;
}

static ib_status make_value(ort_workload *o, const OrtMemoryInfo *info, void *data, size_t bytes,
                            const ib__ort_port *p, int64_t batch, OrtValue **out, ib_error *err)
{
    int64_t shape[IB_MAX_RANK];
    ib__ort_port_shape(p, batch, shape);
    return ib__ort_check(
        o->api->CreateTensorWithDataAsOrtValue(info, data, bytes, shape, (size_t)p->rank, p->type, out),
        IB_ERR_INTERNAL, err, "cannot wrap an input tensor");
}

/* The seed of input i: a different stream of numbers per input (hashed,
 * so that no input's numbers are another's shifted), the same every time. */
static uint64_t input_seed(const ort_workload *o, size_t i)
{
    uint64_t z = o->seed + 0xD1B54A32D192ED03ull * (i + 1);
    z = (z ^ (z >> 33)) * 0xFF51AFD7ED558CCDull;
    z = (z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53ull;
    return z ^ (z >> 33);
}

/* Fills host memory of input i's capacity (its host or pinned buffer)
 * with `values`. */
static ib_status fill_host_input(ort_workload *o, size_t i, void *host, const ib__ort_values *values,
                                 ib_error *err)
{
    const ib__ort_port *p = &o->inputs[i];
    ib__ort_buffer *b = &o->buffers[i];
    return ib__ort_values_make(values, p->type, host, b->cap_bytes / ib__ort_type_size(p->type),
                               input_seed(o, i), 0, err);
}

/* An empty cache of views, one slot per batch up to the capacity. */
static ib_status new_views(const ort_workload *o, OrtValue ***views, ib_error *err)
{
    *views = calloc((size_t)o->cap_batch + 1, sizeof **views);
    IB_FAIL_IF(!*views, err, IB_ERR_NO_MEMORY, "out of memory");
    return IB_OK;
}

/* Allocates and fills the host buffer of input i (the whole capacity). */
static ib_status make_host_input(ort_workload *o, size_t i, ib_status oom, ib_error *err)
{
    const ib__ort_port *p = &o->inputs[i];
    ib__ort_buffer *b = &o->buffers[i];
    /* malloc(0) may return NULL: an empty tensor still gets a buffer */
    b->host = malloc(b->cap_bytes ? b->cap_bytes : 1);
    IB_FAIL_IF(!b->host, err, oom, "batch %lld: cannot allocate %zu bytes of host memory for input '%s'",
               (long long)o->cap_batch, b->cap_bytes, p->name);
    o->allocations++;
    IB_TRY(new_views(o, &b->host_views, err));
    return fill_host_input(o, i, b->host, &p->values, err);
}

/* Fills the device buffer of input i with `values` through a bounded host
 * staging buffer (the same numbers as the host buffer would hold), so that
 * a batch that fits on the device needs little host memory. */
static ib_status upload_input(ib_workload *w, size_t i, const ib__ort_values *values, ib_error *err)
{
    ort_workload *o = impl(w);
    const ib__ort_port *p = &o->inputs[i];
    ib__ort_buffer *b = &o->buffers[i];
    size_t size = ib__ort_type_size(p->type), n = b->cap_bytes / size;
    size_t chunk = STAGING_BYTES / size < n ? STAGING_BYTES / size : n;
    unsigned char *stage = malloc(chunk ? chunk * size : 1);
    IB_FAIL_IF(!stage, err, IB_ERR_NO_MEMORY, "cannot allocate a staging buffer");
    ib_status st = IB_OK;
    for (size_t first = 0; first < n && st == IB_OK; first += chunk) {
        size_t k = n - first < chunk ? n - first : chunk;
        st = ib__ort_values_make(values, p->type, stage, k, input_seed(o, i), first, err);
        /* waits for the copy: the staging buffer is reused at once */
        if (st == IB_OK)
            st = ib__gpu_copy_h2d((unsigned char *)b->device + first * size, stage, k * size, w->stream, err);
    }
    free(stage);
    return st;
}

/* Makes input i for the capacity (o->cap_batch): on the CPU its host
 * buffer; on CUDA its device buffer, allocated first so that a batch too
 * large for the device fails before any host memory is touched. */
static ib_status make_input(ib_workload *w, size_t i, ib_error *err)
{
    ort_workload *o = impl(w);
    const ib__ort_port *p = &o->inputs[i];
    ib__ort_buffer *b = &o->buffers[i];
    IB_FAIL_IF(!ib__ort_port_bytes(p, o->cap_batch, &b->cap_bytes), err, IB_ERR_DEVICE_OOM,
               "batch %lld: input '%s' is too large to allocate", (long long)o->cap_batch, p->name);
    IB_TRY(ib__ort_values_check(p, o->cap_batch, err));
    if (!o->cuda) return make_host_input(o, i, IB_ERR_DEVICE_OOM, err);
    IB_TRY(ib__gpu_malloc(b->cap_bytes ? b->cap_bytes : 1, &b->device, err));
    o->allocations++;
    IB_TRY(new_views(o, &b->device_views, err));
    return upload_input(w, i, &p->values, err);
}

/* The view of `data` as input p at `batch`: the tensor of that shape over
 * the first bytes of the memory, made on first use and cached. */
static ib_status view_at(ort_workload *o, const OrtMemoryInfo *info, void *data, OrtValue **views,
                         const ib__ort_port *p, int64_t batch, size_t bytes, OrtValue **out, ib_error *err)
{
    if (!views[batch]) IB_TRY(make_value(o, info, data, bytes, p, batch, &views[batch], err));
    *out = views[batch];
    return IB_OK;
}

/* Points every input's current values at its views for `batch` (within
 * the capacity), host and device as the buffers exist. */
static ib_status select_views(ort_workload *o, int64_t batch, ib_error *err)
{
    for (size_t i = 0; i < o->n_inputs; i++) {
        const ib__ort_port *p = &o->inputs[i];
        ib__ort_buffer *b = &o->buffers[i];
        IB_FAIL_IF(!ib__ort_port_bytes(p, batch, &b->bytes), err, IB_ERR_INTERNAL,
                   "batch %lld: input '%s' has no size", (long long)batch, p->name);
        if (b->host)
            IB_TRY(view_at(o, o->cpu_info, b->host, b->host_views, p, batch, b->bytes, &b->host_value, err));
        if (b->device)
            IB_TRY(view_at(o, o->device_info, b->device, b->device_views, p, batch, b->bytes,
                           &b->device_value, err));
    }
    return IB_OK;
}

/* CUDA: host copies of the inputs (run_with_copies' or copy_in's, at the
 * capacity) past half of this machine's memory are refused. */
static ib_status check_host_copies(ib_workload *w, ib_error *err)
{
    ort_workload *o = impl(w);
    size_t need = 0;
    for (size_t i = 0; i < o->n_inputs; i++) need += o->buffers[i].cap_bytes;
    size_t host = ib__host_memory_bytes();
    IB_FAIL_IF(host > 0 && need > host / 2, err, IB_ERR_NO_MEMORY,
               "batch %lld: host copies of the inputs need %.1f GB, more than half of this "
               "machine's %.1f GB",
               (long long)w->info.batch, (double)need / 1e9, (double)host / 1e9);
    return IB_OK;
}

/* CUDA, run_with_copies: the host copies of the inputs, made on first use. */
static ib_status ensure_host_inputs(ib_workload *w, ib_error *err)
{
    ort_workload *o = impl(w);
    if (o->n_inputs == 0 || o->buffers[0].host) return IB_OK;
    IB_TRY(check_host_copies(w, err));
    ib_status st = IB_OK;
    for (size_t i = 0; i < o->n_inputs && st == IB_OK; i++) st = make_host_input(o, i, IB_ERR_NO_MEMORY, err);
    if (st == IB_OK) st = select_views(o, w->info.batch, err);
    if (st != IB_OK) release_host_inputs(o);
    return st;
}

/* Binds the inputs: the device copies on CUDA, else the host ones. A host
 * value bound for a CUDA session is copied to the device by BindInput
 * itself (ONNX Runtime's CopyOneInputAcrossDevices), not by the run. */
static ib_status bind_inputs(ort_workload *o, OrtIoBinding *binding, bool device_inputs, ib_error *err)
{
    for (size_t i = 0; i < o->n_inputs; i++) {
        const OrtValue *v = device_inputs && o->cuda ? o->buffers[i].device_value : o->buffers[i].host_value;
        IB_TRY(ib__ort_check(o->api->BindInput(binding, o->inputs[i].name, v), IB_ERR_INTERNAL, err,
                             "cannot bind an input"));
    }
    return IB_OK;
}

/* Binds inputs and outputs. Outputs are bound to a device, not to buffers:
 * ORT allocates them (from its arena, so after the first run at no cost)
 * wherever info says. */
static ib_status bind_all(ort_workload *o, OrtIoBinding *binding, bool device_inputs,
                          const OrtMemoryInfo *out_info, ib_error *err)
{
    IB_TRY(bind_inputs(o, binding, device_inputs, err));
    for (size_t i = 0; i < o->n_outputs; i++)
        IB_TRY(ib__ort_check(o->api->BindOutputToDevice(binding, o->outputs[i].name, out_info),
                             IB_ERR_INTERNAL, err, "cannot bind an output"));
    return IB_OK;
}

static ib_status bind_device(ort_workload *o, ib_error *err)
{
    if (!o->binding)
        IB_TRY(ib__ort_check(o->api->CreateIoBinding(o->session, &o->binding), IB_ERR_INTERNAL, err,
                             "cannot create an I/O binding"));
    return bind_all(o, o->binding, true, o->cuda ? o->device_info : o->cpu_info, err);
}

static void update_info_dims(ib_workload *w)
{
    ort_workload *o = impl(w);
    for (int i = 0; i < w->info.n_inputs; i++)
        ib__ort_port_shape(&o->inputs[i], w->info.batch, w->info.inputs[i].dims);
    for (int i = 0; i < w->info.n_outputs; i++)
        ib__ort_port_shape(&o->outputs[i], w->info.batch, w->info.outputs[i].dims);
}

/* "8000 bytes", "64.0 MB", "1563 MB": MB in the MiB that --memory-cap-mb
 * counts in. */
static void format_mib(size_t bytes, char *buf, size_t cap)
{
    double mib = (double)bytes / (1 << 20);
    if (bytes < ((size_t)1 << 20))
        snprintf(buf, cap, "%zu bytes", bytes);
    else
        snprintf(buf, cap, mib < 100 ? "%.1f MB" : "%.0f MB", mib);
}

/* The error of a CPU batch needing about `need` bytes of host memory (what
 * the estimate counts: `what`), more than the cap. */
static ib_status host_cap_exceeded(const ort_workload *o, int64_t batch, size_t need, const char *what,
                                   ib_error *err)
{
    char need_s[32], cap_s[32];
    format_mib(need, need_s, sizeof need_s);
    format_mib(o->host_cap_bytes, cap_s, sizeof cap_s);
    return ib__fail(err, IB_ERR_DEVICE_OOM,
                    "model '%.300s' at batch %lld needs about %s of host memory%s, more than the "
                    "limit of %s%s (--memory-cap-mb sets %s)",
                    o->label, (long long)batch, need_s, what, cap_s,
                    o->host_cap_given ? "" : ", half of this machine's memory",
                    o->host_cap_given ? "it" : "another");
}

/* CUDA: a batch whose inputs and outputs pass the device's free memory
 * (with what the current batch's inputs, freed first, hold) is out of
 * memory before anything is released; cudaMemGetInfo is cheap. A batch
 * that passes may still run out inside the runtime, which ends the same
 * way (IB_ERR_DEVICE_OOM), from ORT's or CUDA's message. */
static ib_status check_device_free(const ort_workload *o, int64_t batch, size_t need, ib_error *err)
{
    size_t free_bytes, total_bytes, held = 0;
    ib_error ignored;
    if (ib__gpu_mem_info(&free_bytes, &total_bytes, &ignored) != IB_OK) return IB_OK;
    for (size_t i = 0; o->buffers && i < o->n_inputs; i++)
        if (o->buffers[i].device) held += o->buffers[i].cap_bytes;
    if (need <= free_bytes + held) return IB_OK;
    char need_s[32], free_s[32];
    format_mib(need, need_s, sizeof need_s);
    format_mib(free_bytes + held, free_s, sizeof free_s);
    return ib__fail(err, IB_ERR_DEVICE_OOM,
                    "model '%.300s' at batch %lld needs about %s of device memory for its inputs "
                    "and outputs alone, more than the %s free on the device",
                    o->label, (long long)batch, need_s, free_s);
}

/* A batch whose inputs and outputs cannot fit is out of memory, before
 * anything is allocated. CPU: past the cap (past physical memory,
 * allocation does not fail, the process is killed). CUDA: past the device's
 * free memory. */
static ib_status check_batch_memory(const ort_workload *o, int64_t batch, ib_error *err)
{
    size_t need;
    IB_FAIL_IF(!batch_bytes(o, batch, &need), err, IB_ERR_DEVICE_OOM,
               "batch %lld: its inputs are too large to allocate", (long long)batch);
    if (o->cuda) return check_device_free(o, batch, need, err);
    if (need <= o->host_cap_bytes) return IB_OK;
    return host_cap_exceeded(o, batch, need, " for its inputs and outputs alone", err);
}

/* CPU: ONNX Runtime's host arena is bounded by the cap (ort_session.c).
 * When a run passes it, its message says what was left and what one
 * allocation asked for: the run needed at least the cap less what was left
 * plus the request. Rewrites err in those words; other messages stay. */
static ib_status explain_host_arena_limit(const ort_workload *o, int64_t batch, ib_status st, ib_error *err)
{
    if (o->cuda || st != IB_ERR_DEVICE_OOM || !err) return st;
    const char *p = strstr(err->message, "Available memory of ");
    unsigned long long left, asked;
    if (!p ||
        sscanf(p, "Available memory of %llu is smaller than requested bytes of %llu", &left, &asked) != 2 ||
        left > o->host_cap_bytes)
        return st;
    size_t need = o->host_cap_bytes - (size_t)left + (size_t)asked;
    return host_cap_exceeded(o, batch, need, "", err);
}

/* Drops the session (and with it the arena and any captured CUDA graph)
 * and creates it again; the buffers stay, nothing is bound. */
static ib_status new_session(ib_workload *w, ib_error *err)
{
    ort_workload *o = impl(w);
    if (o->cuda && w->stream) {
        ib_error ignored;
        (void)ib__gpu_stream_sync(w->stream, &ignored);
    }
    release_binding(o);
    o->bound = false;
    o->graph_captured = false;
    if (o->session) o->api->ReleaseSession(o->session);
    o->session = NULL;
    return ib__ort_session_create(&o->spec, &o->session, err);
}

/* Refills the resident inputs (and the host copies, when they exist) with
 * zeros or with their own values again, in place: bindings, and a captured
 * CUDA graph, keep pointing at the same memory. Untimed. */
static ib_status ort_fill_inputs(ib_workload *w, bool zeros, ib_error *err)
{
    ort_workload *o = impl(w);
    if (!o->bound) return ib__fail(err, IB_ERR_INVALID_ARG, "model '%s': no batch is bound", o->label);
    /* a copy_in still queued may be reading the pinned inputs */
    if (o->cuda) IB_TRY(ib__gpu_stream_sync(w->stream, err));
    for (size_t i = 0; i < o->n_inputs; i++) {
        const ib__ort_values *values = zeros ? &ib__ort_zeros : &o->inputs[i].values;
        if (o->buffers[i].host) IB_TRY(fill_host_input(o, i, o->buffers[i].host, values, err));
        if (o->buffers[i].pinned) IB_TRY(fill_host_input(o, i, o->buffers[i].pinned, values, err));
        if (o->cuda) IB_TRY(upload_input(w, i, values, err));
    }
    o->zero_filled = zeros;
    return o->cuda ? ib__gpu_stream_sync(w->stream, err) : IB_OK;
}

static ib_status batch_failed(ib_workload *w, ib_status st)
{
    release_batch(w);
    return st;
}

/* Binds the inputs' current views (and the outputs) and makes `batch` the
 * workload's. */
static ib_status bind_batch(ib_workload *w, int64_t batch, ib_error *err)
{
    ort_workload *o = impl(w);
    ib_status st = bind_device(o, err);
    if (st != IB_OK) return batch_failed(w, st);
    w->info.batch = batch;
    update_info_dims(w);
    o->bound = true;
    return IB_OK;
}

/* Whether every input's batch dimension is its first (or it has none): then
 * input p at a smaller batch is the first bytes of p at a larger one. */
static bool batch_leads(const ort_workload *o)
{
    for (size_t i = 0; i < o->n_inputs; i++)
        for (int d = 1; d < o->inputs[i].rank; d++)
            if (o->inputs[i].follows_batch[d]) return false;
    return true;
}

/* A batch within the capacity: the inputs' views at that batch (cached)
 * are bound in place of the current ones; nothing is allocated or filled.
 * Values are made by element position (ib__ort_values_make), so the first
 * bytes of the capacity's are what a fresh fill of this batch would hold.
 * This is what a dynamic batcher pays between requests of different sizes
 * (docs/backend-onnxruntime.md). */
static ib_status switch_batch(ib_workload *w, int64_t batch, ib_error *err)
{
    ort_workload *o = impl(w);
    /* The batch bound already (the one a probe ran): nothing changes, and
     * a captured graph still replays it. */
    if (batch == w->info.batch && !o->zero_filled) return IB_OK;
    for (size_t i = 0; i < o->n_inputs; i++) IB_TRY(ib__ort_values_check(&o->inputs[i], batch, err));
    if (o->cuda && w->stream) {
        ib_error ignored;
        /* an asynchronous run may still write the outputs unbound below */
        (void)ib__gpu_stream_sync(w->stream, &ignored);
    }
    /* A captured graph replays the shapes it was captured with. */
    if (o->graph_captured) IB_TRY(new_session(w, err));
    if (o->binding) o->api->ClearBoundOutputs(o->binding);
    release_copy_binding(o); /* made again on the next run_with_copies */
    ib_status st = select_views(o, batch, err);
    if (st != IB_OK) return batch_failed(w, st);
    IB_TRY(bind_batch(w, batch, err));
    /* set_batch binds the inputs' own values, as a fresh fill would */
    return o->zero_filled ? ort_fill_inputs(w, false, err) : IB_OK;
}

static ib_status ort_set_batch(ib_workload *w, int64_t batch, ib_error *err)
{
    ort_workload *o = impl(w);
    IB_FAIL_IF(batch < 1, err, IB_ERR_INVALID_ARG, "batch %lld: must be at least 1", (long long)batch);
    IB_FAIL_IF(!w->info.has_batch_dim && batch != w->info.batch, err, IB_ERR_UNSUPPORTED,
               "model '%s' has a fixed batch of %lld (no input has a symbolic first dimension): "
               "it cannot run at batch %lld",
               o->label, (long long)w->info.batch, (long long)batch);
    /* Before anything is released: a batch over the cap leaves the current
     * one in place. */
    IB_TRY(check_batch_memory(o, batch, err));
    IB_FAIL_IF(!o->session, err, IB_ERR_RUNTIME, "model '%s': no session (the last reopen failed)", o->label);

    if (o->bound && batch <= o->cap_batch && batch_leads(o)) return switch_batch(w, batch, err);

    release_batch(w);
    /* A captured graph replays the shapes and addresses it was captured
     * with: another batch needs a session of its own. */
    if (o->graph_captured) IB_TRY(new_session(w, err));
    o->cap_batch = batch;
    o->zero_filled = false;
    ib_status st = IB_OK;
    for (size_t i = 0; i < o->n_inputs && st == IB_OK; i++) st = make_input(w, i, err);
    /* The uploads are on our stream: finish them before anything is timed. */
    if (st == IB_OK && o->cuda) st = ib__gpu_stream_sync(w->stream, err);
    if (st == IB_OK) st = select_views(o, batch, err);
    return st == IB_OK ? bind_batch(w, batch, err) : batch_failed(w, st);
}

/* ------------------------------------------------------------------------ */
/* Runs                                                                      */
/* ------------------------------------------------------------------------ */

static ib_status not_ready(ib_workload *w, ib_error *err)
{
    return ib__fail(err, IB_ERR_INVALID_ARG,
                    "model '%s': no batch is bound (the last set_batch or reopen failed)", impl(w)->label);
}

/* Converts a failed run; kept out of the run path so that the timed region
 * formats nothing when all goes well. */
static ib_status run_failed(ib_workload *w, OrtStatus *st, const char *how, ib_error *err)
{
    char what[400];
    snprintf(what, sizeof what, "model '%.300s' failed to run%s at batch %lld", impl(w)->label, how,
             (long long)w->info.batch);
    return explain_host_arena_limit(impl(w), w->info.batch, ib__ort_check(st, IB_ERR_RUNTIME, err, what),
                                    err);
}

static ib_status ort_run(ib_workload *w, ib_error *err)
{
    ort_workload *o = impl(w);
    if (!o->bound) return not_ready(w, err);
    OrtStatus *st = o->api->RunWithBinding(o->session, o->run_options, o->binding);
    if (st) return run_failed(w, st, "", err);
    o->graph_captured = o->spec.cuda_graph;
    return IB_OK;
}

/* Naive code's run: the input handed over from host memory each time (on
 * CUDA, copied to the device by binding it again), outputs bound to host
 * memory (copied back by the run), all inside the caller's timing. */
static ib_status ort_run_with_copies(ib_workload *w, ib_error *err)
{
    ort_workload *o = impl(w);
    if (!o->bound) return not_ready(w, err);
    IB_FAIL_IF(o->spec.cuda_graph, err, IB_ERR_UNSUPPORTED,
               "with --cuda-graph the inputs must stay where the graph was captured: a run that "
               "hands them over from host memory cannot be replayed");
    if (!o->copy_binding) {
        /* Made on first use: most measurements never ask for it. */
        if (o->cuda) IB_TRY(ensure_host_inputs(w, err));
        IB_TRY(ib__ort_check(o->api->CreateIoBinding(o->session, &o->copy_binding), IB_ERR_INTERNAL, err,
                             "cannot create an I/O binding"));
        ib_status s = bind_all(o, o->copy_binding, false, o->cpu_info, err);
        if (s != IB_OK) {
            release_copy_binding(o);
            return s;
        }
    } else if (o->cuda) {
        IB_TRY(bind_inputs(o, o->copy_binding, false, err));
    }
    OrtStatus *st = o->api->RunWithBinding(o->session, o->copy_run_options, o->copy_binding);
    return st ? run_failed(w, st, " with copies", err) : IB_OK;
}

static ib_status ort_set_run_sync(ib_workload *w, bool sync, ib_error *err)
{
    ort_workload *o = impl(w);
    /* kOrtRunOptionsConfigDisableSynchronizeExecutionProviders: "1" lets
     * Run return once the work is queued on the stream. */
    IB_TRY(ib__ort_check(o->api->AddRunConfigEntry(o->run_options, "disable_synchronize_execution_providers",
                                                   sync ? "0" : "1"),
                         IB_ERR_INTERNAL, err, "cannot set the run's synchronization"));
    o->runs_async = !sync;
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* A request's copies, timed apart by serve (CUDA)                          */
/* ------------------------------------------------------------------------ */

/* The bound outputs of the last run (tensors ONNX Runtime allocated where
 * they were bound), each a reference of ours until release_outputs. */
typedef struct bound_values {
    OrtValue **values;
    size_t count;
    OrtAllocator *alloc; /* holds the array */
} bound_values;

static ib_status bound_outputs(ort_workload *o, bound_values *bv, ib_error *err)
{
    *bv = (bound_values){ 0 };
    IB_TRY(ib__ort_check(o->api->GetAllocatorWithDefaultOptions(&bv->alloc), IB_ERR_INTERNAL, err,
                         "cannot get the default allocator"));
    return ib__ort_check(o->api->GetBoundOutputValues(o->binding, bv->alloc, &bv->values, &bv->count),
                         IB_ERR_RUNTIME, err, "cannot read the outputs back (has the model run?)");
}

static void release_outputs(ort_workload *o, bound_values *bv)
{
    for (size_t i = 0; i < bv->count; i++) o->api->ReleaseValue(bv->values[i]);
    if (bv->values) bv->alloc->Free(bv->alloc, bv->values);
    *bv = (bound_values){ 0 };
}

/* Copies wait for the device when runs do (set_run_sync). */
static ib_status copies_done(ib_workload *w, ib_error *err)
{
    return impl(w)->runs_async ? IB_OK : ib__gpu_stream_sync(w->stream, err);
}

/* The requests' inputs in pinned host memory, at the capacity (so a batch
 * switch reuses them, as it reuses the device inputs), filled with what the
 * device inputs hold; made on the first copy_in, dropped with the batch. */
static ib_status ensure_pinned_inputs(ib_workload *w, ib_error *err)
{
    ort_workload *o = impl(w);
    if (o->n_inputs == 0 || o->buffers[0].pinned) return IB_OK;
    IB_TRY(check_host_copies(w, err));
    ib_status st = IB_OK;
    for (size_t i = 0; i < o->n_inputs && st == IB_OK; i++) {
        ib__ort_buffer *b = &o->buffers[i];
        const ib__ort_values *values = o->zero_filled ? &ib__ort_zeros : &o->inputs[i].values;
        st = ib__gpu_host_alloc(b->cap_bytes ? b->cap_bytes : 1, &b->pinned, err);
        if (st == IB_OK) st = fill_host_input(o, i, b->pinned, values, err);
    }
    if (st != IB_OK) release_pinned_inputs(o);
    return st;
}

/* A request's inputs from pinned host memory into the bound device inputs
 * (the current batch's prefix of each), queued on our stream: the run
 * after it reads them there, and a captured CUDA graph too (the copy is
 * outside the graph, into the addresses it was captured with). */
static ib_status ort_copy_in(ib_workload *w, ib_error *err)
{
    ort_workload *o = impl(w);
    if (!o->bound) return not_ready(w, err);
    IB_TRY(ensure_pinned_inputs(w, err));
    for (size_t i = 0; i < o->n_inputs; i++) {
        const ib__ort_buffer *b = &o->buffers[i];
        IB_TRY(ib__gpu_copy_h2d_async(b->device, b->pinned, b->bytes, w->stream, err));
    }
    return copies_done(w, err);
}

/* Output tensor v (on the device) into dst, queued on our stream. dst grows
 * when v is larger than it holds: in serve's warm-up, which runs every
 * batch size before anything is timed. */
static ib_status output_to_pinned(ib_workload *w, ort_pinned *dst, OrtValue *v, ib_error *err)
{
    ort_workload *o = impl(w);
    size_t bytes = 0;
    void *data = NULL;
    IB_TRY(ib__ort_check(o->api->GetTensorSizeInBytes(v, &bytes), IB_ERR_UNSUPPORTED, err,
                         "an output that is not a tensor cannot be copied"));
    IB_TRY(ib__ort_check(o->api->GetTensorMutableData(v, &data), IB_ERR_INTERNAL, err, "output data"));
    if (bytes > dst->cap) {
        /* a copy_out still queued may be writing the old memory */
        IB_TRY(ib__gpu_stream_sync(w->stream, err));
        ib__gpu_host_free(dst->data);
        *dst = (ort_pinned){ 0 };
        IB_TRY(ib__gpu_host_alloc(bytes, &dst->data, err));
        dst->cap = bytes;
    }
    dst->bytes = bytes;
    return bytes ? ib__gpu_copy_d2h_async(dst->data, data, bytes, w->stream, err) : IB_OK;
}

/* A request's outputs, the last run's, from the device into pinned host
 * memory, queued on our stream after the run. */
static ib_status ort_copy_out(ib_workload *w, ib_error *err)
{
    ort_workload *o = impl(w);
    if (!o->bound) return not_ready(w, err);
    bound_values bv;
    IB_TRY(bound_outputs(o, &bv, err));
    ib_status st = IB_OK;
    for (size_t i = 0; i < bv.count && i < o->n_outputs && st == IB_OK; i++)
        st = output_to_pinned(w, &o->copied_out[i], bv.values[i], err);
    release_outputs(o, &bv);
    return st == IB_OK ? copies_done(w, err) : st;
}

/* ------------------------------------------------------------------------ */
/* Session life                                                              */
/* ------------------------------------------------------------------------ */

static ib_status ort_reopen(ib_workload *w, ib_error *err)
{
    ort_workload *o = impl(w);
    bool was_bound = o->bound;
    /* The session owns the arena: releasing it returns the memory. */
    IB_TRY(new_session(w, err));
    if (!was_bound) return IB_OK; /* the next set_batch binds */
    IB_TRY(bind_device(o, err));
    o->bound = true;
    return IB_OK;
}

static void ort_destroy(ib_workload *w)
{
    if (!w) return;
    ort_workload *o = impl(w);
    if (o) {
        release_batch(w);
        release_copied_outputs(o);
        release_binding(o);
        if (o->run_options) o->api->ReleaseRunOptions(o->run_options);
        if (o->copy_run_options) o->api->ReleaseRunOptions(o->copy_run_options);
        if (o->session) o->api->ReleaseSession(o->session);
        if (o->cpu_info) o->api->ReleaseMemoryInfo(o->cpu_info);
        if (o->owned_device_info) o->api->ReleaseMemoryInfo(o->owned_device_info);
        ib__ort_ports_free(o->inputs, o->n_inputs);
        ib__ort_ports_free(o->outputs, o->n_outputs);
        free(o->buffers);
        free(o->copied_out);
        free(o->path);
        free(o->bytes);
        free(o->label);
        free(o);
    }
    /* after the session: ORT may use the stream until released */
    if (w->stream) ib__gpu_stream_destroy(w->stream);
    free(w);
}

/* ------------------------------------------------------------------------ */
/* Outputs read back, TF32 switched (untimed)                                */
/* ------------------------------------------------------------------------ */

/* n elements of a float type at src as doubles; false for other types. */
static bool to_doubles(const void *src, ONNXTensorElementDataType type, size_t n, double *dst)
{
    const uint8_t *p = src;
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        float f;
        switch (type) {
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: memcpy(&f, p + 4 * i, 4), dst[i] = f; break;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: memcpy(&dst[i], p + 8 * i, 8); break;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
            memcpy(&h, p + 2 * i, 2), dst[i] = ib__half_to_float(h);
            break;
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
            memcpy(&h, p + 2 * i, 2), dst[i] = ib__bfloat16_to_float(h);
            break;
        default: return false;
        }
    }
    return true;
}

/* One bound output value's elements, copied to the host as doubles. */
static ib_status value_to_host(ib_workload *w, const OrtValue *v, ib__output_values *out, ib_error *err)
{
    ort_workload *o = impl(w);
    const OrtApi *api = o->api;
    OrtTensorTypeAndShapeInfo *ti = NULL;
    IB_TRY(
        ib__ort_check(api->GetTensorTypeAndShape(v, &ti), IB_ERR_UNSUPPORTED, err, "output is not a tensor"));
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    size_t rank = 0, n = 0;
    ib_status st = ib__ort_check(api->GetTensorElementType(ti, &type), IB_ERR_INTERNAL, err, "output type");
    if (st == IB_OK)
        st = ib__ort_check(api->GetDimensionsCount(ti, &rank), IB_ERR_INTERNAL, err, "output rank");
    if (st == IB_OK && rank > IB_MAX_RANK) st = ib__fail(err, IB_ERR_UNSUPPORTED, "output of rank %zu", rank);
    if (st == IB_OK)
        st = ib__ort_check(api->GetDimensions(ti, out->dims, rank), IB_ERR_INTERNAL, err, "output shape");
    if (st == IB_OK)
        st = ib__ort_check(api->GetTensorShapeElementCount(ti, &n), IB_ERR_INTERNAL, err, "output size");
    api->ReleaseTensorTypeAndShapeInfo(ti);
    IB_TRY(st);
    size_t size = ib__ort_type_size(type);
    bool is_float =
        type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT || type == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE ||
        type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 || type == ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
    IB_FAIL_IF(!is_float, err, IB_ERR_UNSUPPORTED, "a %s output, not a float one", ib__ort_type_name(type));
    void *data = NULL;
    IB_TRY(
        ib__ort_check(api->GetTensorMutableData((OrtValue *)v, &data), IB_ERR_INTERNAL, err, "output data"));
    void *host = o->cuda ? malloc(n * size + 1) : data;
    out->values = malloc(n * sizeof *out->values + 1);
    if (!host || !out->values) st = ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading an output");
    if (st == IB_OK && o->cuda) st = ib__gpu_copy_d2h(host, data, n * size, w->stream, err);
    if (st == IB_OK) to_doubles(host, type, n, out->values);
    if (o->cuda) free(host);
    out->n = n;
    out->rank = (int)rank;
    return st;
}

static ib_status ort_read_output(ib_workload *w, size_t index, ib__output_values *out, ib_error *err)
{
    ort_workload *o = impl(w);
    *out = (ib__output_values){ 0 };
    if (!o->bound) return not_ready(w, err);
    bound_values bv;
    IB_TRY(bound_outputs(o, &bv, err));
    ib_status st = index < bv.count
                       ? value_to_host(w, bv.values[index], out, err)
                       : ib__fail(err, IB_ERR_INVALID_ARG, "output %zu: the model has %zu", index, bv.count);
    release_outputs(o, &bv);
    if (st != IB_OK) ib__output_values_free(out);
    return st;
}

static ib_status ort_set_tf32(ib_workload *w, bool on, ib_error *err)
{
    ort_workload *o = impl(w);
    int major = 0, minor = 0;
    compute_capability(w->device_id, &major, &minor);
    IB_FAIL_IF(major < 8, err, IB_ERR_UNSUPPORTED,
               "this GPU (compute capability %d.%d) has no TF32 (8.0 and newer do)", major, minor);
    o->spec.use_tf32 = on ? 1 : 0;
    IB_TRY(ort_reopen(w, err));
    o->math = on ? "tf32" : "fp32";
    o->math_default = false;
    ib__strlcpy(w->info.math, o->math, sizeof w->info.math);
    w->info.math_default = false;
    return IB_OK;
}

static const ib__workload_ops ort_cpu_ops = {
    .version = IB__WORKLOAD_OPS_VERSION,
    .set_batch = ort_set_batch,
    .run = ort_run,
    .set_run_sync = NULL, /* the CPU provider's runs end when the work does */
    .run_with_copies = ort_run_with_copies,
    .reopen = ort_reopen,
    .fill_inputs = ort_fill_inputs,
    .destroy = ort_destroy,
    .read_output = ort_read_output,
};

static const ib__workload_ops ort_cuda_ops = {
    .version = IB__WORKLOAD_OPS_VERSION,
    .set_batch = ort_set_batch,
    .run = ort_run,
    .set_run_sync = ort_set_run_sync,
    .run_with_copies = ort_run_with_copies,
    .reopen = ort_reopen,
    .fill_inputs = ort_fill_inputs,
    .destroy = ort_destroy,
    .copy_in = ort_copy_in,
    .copy_out = ort_copy_out,
    .read_output = ort_read_output,
    .set_tf32 = ort_set_tf32,
};

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */
/* ------------------------------------------------------------------------ */

/* Both providers run from host memory and open sessions anew; the CUDA one
 * runs on our stream and can return before the device is done. */
static uint64_t ort_caps(bool cuda, bool has_batch_dim, const ib__ort_session_spec *spec)
{
    uint64_t caps =
        IB_CAP_HOST_INPUT_RUN | IB_CAP_REOPEN | IB_CAP_REFILL_INPUTS | (has_batch_dim ? IB_CAP_BATCH_DIM : 0);
    if (cuda)
        caps |= IB_CAP_GPU | IB_CAP_CUDA_STREAM | IB_CAP_DEVICE_TIMING | IB_CAP_ASYNC_RUN | IB_CAP_L2_FLUSH |
                (spec->cuda_graph ? IB_CAP_GRAPH_CAPTURE : 0) |
                (!strcmp(spec->cudnn_conv_algo_search, "EXHAUSTIVE") ? IB_CAP_AUTOTUNED : 0);
    return caps;
}

/* Checks a model file before ORT sees it, for plain messages. */
static ib_status check_model_file(const char *path, ib_error *err)
{
    struct stat sb;
    int fd = open(path, O_RDONLY);
    IB_FAIL_IF(fd < 0, err, IB_ERR_IO, "cannot open model '%s': %s", path, strerror(errno));
    int r = fstat(fd, &sb);
    int saved = errno;
    close(fd);
    IB_FAIL_IF(r != 0, err, IB_ERR_IO, "cannot open model '%s': %s", path, strerror(saved));
    IB_FAIL_IF(S_ISDIR(sb.st_mode), err, IB_ERR_IO, "cannot open model '%s': %s", path, strerror(EISDIR));
    IB_FAIL_IF(sb.st_size == 0, err, IB_ERR_MODEL, "model '%s' is empty (0 bytes)", path);
    return IB_OK;
}

/* "zoo:NAME" or "zoo:NAME?fp16": builds the model into o->bytes. */
static ib_status load_zoo(ort_workload *o, const char *spec, ib__dim_defaults *defaults,
                          double *flops_per_item, ib_error *err)
{
    char name[128];
    const char *q = strchr(spec, '?');
    size_t len = q ? (size_t)(q - spec) : strlen(spec);
    bool fp16 = false;
    if (q) {
        IB_FAIL_IF(strcmp(q, "?fp16") != 0, err, IB_ERR_INVALID_ARG,
                   "model 'zoo:%s': unknown option '%s' (only ?fp16 exists)", spec, q + 1);
        fp16 = true;
    }
    IB_FAIL_IF(len == 0 || len >= sizeof name, err, IB_ERR_INVALID_ARG,
               "model 'zoo:%s': expected zoo:NAME or zoo:NAME?fp16", spec);
    memcpy(name, spec, len);
    name[len] = '\0';
    const ib_zoo_entry *e = ib_zoo_find(name);
    IB_FAIL_IF(!e && ib__lm_find(name), err, IB_ERR_INVALID_ARG,
               "zoo:%s is a generative model: inferbench generate (or best) measures it", name);
    if (!e) {
        char known[300] = "";
        size_t used = 0;
        for (size_t i = 0; i < ib_zoo_count() && used + 1 < sizeof known; i++) {
            int k = snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", ib_zoo_get(i)->name);
            if (k < 0) break;
            used += (size_t)k;
        }
        return ib__fail(err, IB_ERR_INVALID_ARG, "unknown zoo model '%s'; the zoo has: %s", name,
                        known[0] ? known : "(nothing)");
    }
    IB_TRY(ib__dim_defaults_parse(e->dim_defaults, defaults, err));
    *flops_per_item = e->gflops_per_item * 1e9;
    size_t n = 0;
    IB_TRY(ib_zoo_build(name, fp16, &o->bytes, &n, err));
    o->spec.bytes = o->bytes;
    o->spec.len = n;
    return IB_OK;
}

/* Picks the provider: the CUDA one's device when asked or, for AUTO, when a
 * GPU is usable; none (CPU) when asked or when AUTO finds no usable GPU. A
 * usable GPU whose provider cannot load is an error even for AUTO: measuring
 * the CPU instead would answer a question nobody asked. */
static ib_status choose_device(const ib_model_options *opts, const OrtEpDevice **ep, ib_error *err)
{
    *ep = NULL;
    if (opts->device == IB_DEVICE_CPU) return IB_OK;
    bool asked = opts->device == IB_DEVICE_CUDA;
    ib_error why = { "" };
    if (!ib__gpu_available(opts->device_id)) {
        if (!asked) return IB_OK;
        ib__gpu_props props;
        if (ib__gpu_props_get(opts->device_id, &props, &why) == IB_OK || !why.message[0])
            snprintf(why.message, sizeof why.message, "device %d is not usable", opts->device_id);
        return ib__fail(err, IB_ERR_NO_DEVICE, "--device cuda: no usable CUDA GPU (%s)", why.message);
    }
    if (ib__ort_cuda_ep_device(opts->device_id, ep, &why) != IB_OK) {
        *ep = NULL;
        if (asked) return ib__fail(err, IB_ERR_NO_DEVICE, "--device cuda: %s", why.message);
        return ib__fail(err, IB_ERR_NO_DEVICE,
                        "a CUDA GPU is present but %s (--device cpu measures on the CPU)", why.message);
    }
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* Arithmetic (docs/precision.md)                                            */
/* ------------------------------------------------------------------------ */

/* Compute capability of device_id, 0.0 when unknown. */
static void compute_capability(int device_id, int *major, int *minor)
{
    ib__gpu_props p;
    *major = *minor = 0;
    if (ib__gpu_props_get(device_id, &p, NULL) == IB_OK) *major = p.cc_major, *minor = p.cc_minor;
}

/* A model that is float16 or bfloat16 itself runs in that arithmetic: no
 * TF32 switch or conversion changes it, and there is no float32 of it to
 * run (inferbench converts down, never up). Asked for its own math or
 * nothing, it is measured as it is; any other --math is refused rather
 * than stated falsely. */
static ib_status resolve_own_math(ort_workload *o, ib_math math, ib_error *err)
{
    IB_FAIL_IF(math != IB_MATH_DEFAULT && math != o->own_math, err, IB_ERR_UNSUPPORTED,
               "--math %s: model '%s' is %s itself (most of its weights), so it runs in %s whatever is "
               "asked: measure it without --math, or measure its float32 export",
               ib_math_name(math), o->label, ib_math_name(o->own_math), ib_math_name(o->own_math));
    o->spec.use_tf32 = -1;
    o->math_default = false;
    o->math = ib_math_name(o->own_math);
    return IB_OK;
}

/* Decides the TF32 switch and the math stated, refusing what the device
 * cannot do: TF32 off the GPU or before Ampere (compute capability 8.0),
 * bfloat16 before Ampere. The CUDA provider's use_tf32 is on by default. */
static ib_status resolve_math(ort_workload *o, ib_math math, int device_id, ib_error *err)
{
    if (o->own_math != IB_MATH_DEFAULT) return resolve_own_math(o, math, err);
    int major = 0, minor = 0;
    if (o->cuda) compute_capability(device_id, &major, &minor);
    bool has_tf32 = o->cuda && major >= 8;
    IB_FAIL_IF(math == IB_MATH_TF32 && !o->cuda, err, IB_ERR_UNSUPPORTED,
               "--math tf32: the CPU has no TF32 (NVIDIA GPUs of compute capability 8.0 and newer do)");
    IB_FAIL_IF(math == IB_MATH_TF32 && !has_tf32, err, IB_ERR_UNSUPPORTED,
               "--math tf32: this GPU (compute capability %d.%d) has no TF32 (8.0 and newer do)", major,
               minor);
    IB_FAIL_IF(
        math == IB_MATH_BF16 && o->cuda && major < 8, err, IB_ERR_UNSUPPORTED,
        "--math bf16: this GPU (compute capability %d.%d) has no bfloat16 arithmetic (8.0 and newer do)",
        major, minor);
    o->spec.use_tf32 = math == IB_MATH_FP32 ? 0 : math == IB_MATH_TF32 ? 1 : -1;
    o->math_default = math == IB_MATH_DEFAULT;
    o->math = o->math_default ? (has_tf32 ? "tf32" : "fp32") : ib_math_name(math);
    return IB_OK;
}

/* The whole model file in memory (conversion works on bytes). */
static ib_status read_model_file(const char *path, uint8_t **bytes, size_t *len, ib_error *err)
{
    FILE *f = fopen(path, "rb");
    IB_FAIL_IF(!f, err, IB_ERR_IO, "cannot open model '%s': %s", path, strerror(errno));
    ib_status st = IB_OK;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size <= 0 || size > INT32_MAX || fseek(f, 0, SEEK_SET) != 0)
        st = ib__fail(err, IB_ERR_MODEL,
                      "model '%s': cannot be read whole (size %ld; ONNX files are under 2 GiB)", path, size);
    *bytes = st == IB_OK ? malloc((size_t)size) : NULL;
    if (st == IB_OK && !*bytes) st = ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading '%s'", path);
    if (st == IB_OK && fread(*bytes, 1, (size_t)size, f) != (size_t)size)
        st = ib__fail(err, IB_ERR_IO, "cannot read model '%s'", path);
    fclose(f);
    if (st != IB_OK) {
        free(*bytes);
        *bytes = NULL;
        return st;
    }
    *len = (size_t)size;
    return IB_OK;
}

/* Whether math converts the model: fp16/bf16 asked of a model that is not
 * of a reduced type itself (resolve_own_math). */
static bool converts(const ort_workload *o, ib_math math)
{
    return (math == IB_MATH_FP16 || math == IB_MATH_BF16) && o->own_math == IB_MATH_DEFAULT;
}

/* The model's own arithmetic, read from its bytes. A file is read for it
 * once: kept when it is to be converted (convert_model works on them),
 * let go otherwise (ONNX Runtime still opens it by path, for its external
 * data). A file that cannot be read whole is left to ONNX Runtime, or to
 * the conversion, to judge. */
static void read_own_math(ort_workload *o, ib_math math)
{
    uint8_t *bytes = o->bytes;
    size_t len = o->spec.len;
    if (!bytes && read_model_file(o->path, &bytes, &len, NULL) != IB_OK) return;
    o->own_math = ib_onnx_model_math(bytes, len);
    if (bytes == o->bytes) return;
    if (converts(o, math)) {
        o->bytes = bytes;
        o->spec.len = len;
    } else {
        free(bytes);
    }
}

/* fp16/bf16: the model converted in memory; the session loads the bytes. */
static ib_status convert_model(ort_workload *o, ib_math math, ib_error *err)
{
    if (!converts(o, math)) return IB_OK;
    if (!o->bytes) IB_TRY(read_model_file(o->path, &o->bytes, &o->spec.len, err)); /* read_own_math failed */
    o->spec.path = NULL;
    uint8_t *converted = NULL;
    size_t len = 0;
    ib_error why = { "" };
    ib_status st = ib_onnx_convert(o->bytes, o->spec.len, math, &converted, &len, NULL, &why);
    IB_FAIL_IF(st != IB_OK, err, st, "--math %s: model '%s' cannot be converted: %s", ib_math_name(math),
               o->label, why.message);
    free(o->bytes);
    o->bytes = converted;
    o->spec.bytes = converted;
    o->spec.len = len;
    return IB_OK;
}

/* A converted model the provider refuses (no kernel of the type for some
 * operator): said as such, a bad input. */
static ib_status create_session(ort_workload *o, ib_math math, ib_error *err)
{
    ib_status st = ib__ort_session_create(&o->spec, &o->session, err);
    if (st == IB_OK || !converts(o, math) || !err) return st;
    char msg[sizeof err->message];
    ib__strlcpy(msg, err->message, sizeof msg);
    return ib__fail(err, st == IB_ERR_NO_MEMORY || st == IB_ERR_DEVICE_OOM ? st : IB_ERR_UNSUPPORTED,
                    "--math %s: the converted model does not run on the %s provider: %s", ib_math_name(math),
                    o->cuda ? "CUDA" : "CPU", msg);
}

static ib_status check_options(const char *model, const ib_model_options *opts, ib_error *err)
{
    IB_FAIL_IF(opts->math < IB_MATH_DEFAULT || opts->math > IB_MATH_BF16, err, IB_ERR_INVALID_ARG,
               "unknown math %d", (int)opts->math);
    IB_FAIL_IF(!model || !*model, err, IB_ERR_INVALID_ARG, "no model given");
    IB_FAIL_IF(opts->device != IB_DEVICE_AUTO && opts->device != IB_DEVICE_CPU &&
                   opts->device != IB_DEVICE_CUDA,
               err, IB_ERR_INVALID_ARG, "unknown device kind %d", (int)opts->device);
    IB_FAIL_IF(opts->device_id < 0, err, IB_ERR_INVALID_ARG, "device id %d: must be >= 0", opts->device_id);
    IB_FAIL_IF(opts->batch < 0, err, IB_ERR_INVALID_ARG, "batch %lld: must be at least 1 (or 0: not given)",
               (long long)opts->batch);
    IB_FAIL_IF(opts->n_shapes > 0 && !opts->shapes, err, IB_ERR_INVALID_ARG,
               "%zu shape overrides but no array", opts->n_shapes);
    IB_FAIL_IF(opts->n_inputs > 0 && !opts->inputs, err, IB_ERR_INVALID_ARG, "%zu input specs but no array",
               opts->n_inputs);
    IB_FAIL_IF(opts->n_options > 0 && !opts->options, err, IB_ERR_INVALID_ARG, "%zu options but no array",
               opts->n_options);
    return IB_OK;
}

/* ONNX Runtime's own settings, from the KEY=VALUE options. */
typedef struct ort_settings {
    int threads;              /* intra-op threads, 0: ONNX Runtime's default */
    const char *cudnn_search; /* static text */
    bool prefer_nhwc, cuda_graph;
} ort_settings;

static ib_status apply_option(ort_settings *s, const ib_backend_option *o, ib_error *err)
{
    static const char *const searches[] = { "EXHAUSTIVE", "HEURISTIC", "DEFAULT" };
    long long n;
    if (!strcmp(o->key, "threads")) {
        IB_TRY(ib__backend_option_int(o, 1, 1024, &n, err));
        s->threads = (int)n;
        return IB_OK;
    }
    if (!strcmp(o->key, "prefer_nhwc")) return ib__backend_option_bool(o, &s->prefer_nhwc, err);
    if (!strcmp(o->key, "cuda_graph")) return ib__backend_option_bool(o, &s->cuda_graph, err);
    if (!strcmp(o->key, "library")) return ib__ort_set_library(o->value, err);
    if (!strcmp(o->key, "cudnn_search")) {
        for (size_t i = 0; i < 3; i++)
            if (!strcmp(o->value, searches[i])) return s->cudnn_search = searches[i], IB_OK;
        return ib__fail(err, IB_ERR_INVALID_ARG,
                        "option cudnn_search=%s: expected EXHAUSTIVE, HEURISTIC or DEFAULT", o->value);
    }
    return ib__fail(
        err, IB_ERR_INVALID_ARG,
        "onnxruntime: unknown option '%s' (known: threads, cudnn_search, prefer_nhwc, cuda_graph, library)",
        o->key);
}

static ib_status read_settings(const ib_model_options *opts, ort_settings *s, ib_error *err)
{
    *s = (ort_settings){ .cudnn_search = "EXHAUSTIVE" };
    for (size_t i = 0; i < opts->n_options; i++) IB_TRY(apply_option(s, &opts->options[i], err));
    return IB_OK;
}

static ib_status make_memory_infos(ort_workload *o, const OrtEpDevice *ep, int device_id, ib_error *err)
{
    const OrtApi *api = o->api;
    IB_TRY(ib__ort_check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &o->cpu_info),
                         IB_ERR_INTERNAL, err, "cannot describe host memory"));
    if (!ep) return IB_OK;
    /* The provider's own description of its device memory is the one its
     * allocator and data transfer recognise. */
    o->device_info = api->EpDevice_MemoryInfo(ep, OrtDeviceMemoryType_DEFAULT);
    if (o->device_info) return IB_OK;
    IB_TRY(ib__ort_check(api->CreateMemoryInfo_V2("Cuda", OrtMemoryInfoDeviceType_GPU, NVIDIA_VENDOR_ID,
                                                  device_id, OrtDeviceMemoryType_DEFAULT, 0,
                                                  OrtDeviceAllocator, &o->owned_device_info),
                         IB_ERR_INTERNAL, err, "cannot describe CUDA memory"));
    o->device_info = o->owned_device_info;
    return IB_OK;
}

static ib_status make_run_options(ort_workload *o, ib_error *err)
{
    const OrtApi *api = o->api;
    IB_TRY(ib__ort_check(api->CreateRunOptions(&o->run_options), IB_ERR_INTERNAL, err,
                         "cannot create run options"));
    IB_TRY(ib__ort_check(api->CreateRunOptions(&o->copy_run_options), IB_ERR_INTERNAL, err,
                         "cannot create run options"));
    IB_TRY(
        ib__ort_check(api->AddRunConfigEntry(o->run_options, "disable_synchronize_execution_providers", "0"),
                      IB_ERR_INTERNAL, err, "cannot set the run's synchronization"));
    return ib__ort_check(
        api->AddRunConfigEntry(o->copy_run_options, "disable_synchronize_execution_providers", "0"),
        IB_ERR_INTERNAL, err, "cannot set the run's synchronization");
}

static void fill_tensor_info(ib_tensor_info *t, const ib__ort_port *p)
{
    ib__strlcpy(t->name, p->name, sizeof t->name);
    ib__strlcpy(t->type, p->onnx_type == ONNX_TYPE_TENSOR ? ib__ort_type_name(p->type) : "?", sizeof t->type);
    t->rank = p->rank;
    for (int d = 0; d < p->rank; d++) {
        t->dims[d] = p->dims[d];
        ib__strlcpy(t->dim_names[d], p->dim_names[d], sizeof t->dim_names[d]);
    }
}

/* The settings in effect, in the keys --option takes: cuDNN's and the CUDA
 * provider's only where that provider runs. */
static void report_settings(ib_option_list *list, const ib__ort_session_spec *spec)
{
    char threads[16] = "default";
    if (spec->intra_op_threads > 0) snprintf(threads, sizeof threads, "%d", spec->intra_op_threads);
    *list = (ib_option_list){ 0 };
    if (spec->ep_device) {
        ib_option_list_set(list, "cudnn_search", spec->cudnn_conv_algo_search);
        ib_option_list_set(list, "prefer_nhwc", spec->prefer_nhwc ? "yes" : "no");
        ib_option_list_set(list, "cuda_graph", spec->cuda_graph ? "yes" : "no");
    }
    ib_option_list_set(list, "threads", threads);
}

static void fill_info(ib_workload *w, const char *model, double flops_per_item)
{
    ort_workload *o = impl(w);
    ib_workload_info *info = &w->info;
    ib__strlcpy(info->model, model, sizeof info->model);
    ib__strlcpy(info->provider, o->cuda ? "CUDAExecutionProvider" : "CPUExecutionProvider",
                sizeof info->provider);
    info->device = o->cuda ? IB_DEVICE_CUDA : IB_DEVICE_CPU;
    info->flops_per_item = flops_per_item;
    report_settings(&info->options, &o->spec);
    ib__strlcpy(info->math, o->math, sizeof info->math);
    info->math_default = o->math_default;
    info->math_of_model = o->own_math != IB_MATH_DEFAULT;
    /* Listed up to IB_MAX_TENSORS; all are bound. */
    info->n_inputs = (int)(o->n_inputs < IB_MAX_TENSORS ? o->n_inputs : IB_MAX_TENSORS);
    info->n_outputs = (int)(o->n_outputs < IB_MAX_TENSORS ? o->n_outputs : IB_MAX_TENSORS);
    for (int i = 0; i < info->n_inputs; i++) {
        fill_tensor_info(&info->inputs[i], &o->inputs[i]);
        ib__strlcpy(info->inputs[i].values, o->inputs[i].values.text, sizeof info->inputs[i].values);
    }
    for (int i = 0; i < info->n_outputs; i++) fill_tensor_info(&info->outputs[i], &o->outputs[i]);
}

/* A fixed-batch model's batch: the first dimension of its first input that
 * has one (1 for a model of scalars). */
static int64_t fixed_batch(const ort_workload *o)
{
    for (size_t i = 0; i < o->n_inputs; i++)
        if (o->inputs[i].rank > 0 && o->inputs[i].model_dims[0] > 0) return o->inputs[i].model_dims[0];
    return 1;
}

/* Everything after the workload exists: on failure the caller destroys it. */
static ib_status open_into(ib_workload *w, const char *model, const ib_model_options *opts, ib_error *err)
{
    ort_workload *o = impl(w);
    ib__dim_defaults defaults = { 0 };
    double flops_per_item = 0;
    IB_TRY(ib__ort_init(&o->api, NULL, err));

    o->label = strdup(model);
    IB_FAIL_IF(!o->label, err, IB_ERR_NO_MEMORY, "out of memory");
    o->spec.label = o->label;
    if (strncmp(model, "zoo:", 4) == 0) {
        IB_TRY(load_zoo(o, model + 4, &defaults, &flops_per_item, err));
    } else {
        IB_TRY(check_model_file(model, err));
        o->path = strdup(model);
        IB_FAIL_IF(!o->path, err, IB_ERR_NO_MEMORY, "out of memory");
        o->spec.path = o->path;
    }

    ort_settings set;
    IB_TRY(read_settings(opts, &set, err));
    const OrtEpDevice *ep = NULL;
    IB_TRY(choose_device(opts, &ep, err));
    /* Said from what put the model on the CPU: the user's --device cpu, or
     * --device auto finding no GPU (not the device it fell back to). */
    IB_FAIL_IF(
        set.cuda_graph && !ep, err, IB_ERR_INVALID_ARG, "--cuda-graph needs the CUDA execution provider: %s",
        opts->device == IB_DEVICE_CPU ? "the model runs on the CPU (--device cpu)"
                                      : "the model would run on the CPU, as this machine has no usable "
                                        "CUDA device");
    o->cuda = ep != NULL;
    w->ops = o->cuda ? &ort_cuda_ops : &ort_cpu_ops;
    if (o->cuda) IB_TRY(ib__gpu_stream_create(opts->device_id, &w->stream, err));
    IB_TRY(make_memory_infos(o, ep, opts->device_id, err));

    o->spec.intra_op_threads = set.threads;
    o->spec.ep_device = ep;
    o->spec.device_id = opts->device_id;
    o->spec.stream = w->stream;
    o->spec.cudnn_conv_algo_search = set.cudnn_search;
    o->spec.prefer_nhwc = set.prefer_nhwc;
    o->spec.cuda_graph = set.cuda_graph;
    o->spec.gpu_mem_limit_bytes = opts->device_memory_limit_bytes;
    o->spec.host_arena_limit_bytes = o->cuda ? 0 : o->host_cap_bytes;
    read_own_math(o, opts->math);
    IB_TRY(resolve_math(o, opts->math, opts->device_id, err));
    IB_TRY(convert_model(o, opts->math, err));
    IB_TRY(create_session(o, opts->math, err));

    IB_TRY(ib__ort_ports_read(o->api, o->session, &o->inputs, &o->n_inputs, &o->outputs, &o->n_outputs, err));
    bool has_batch_dim = false;
    int64_t batch = 1;
    IB_TRY(ib__ort_resolve_dims(o->inputs, o->n_inputs, o->outputs, o->n_outputs, opts->shapes,
                                opts->n_shapes, &defaults, opts->batch, &batch, &has_batch_dim, err));
    /* A fixed-batch model keeps its batch: a --batch asking for another is
     * refused, not ignored. */
    if (!has_batch_dim) batch = fixed_batch(o);
    IB_FAIL_IF(!has_batch_dim && opts->batch > 0 && opts->batch != batch, err, IB_ERR_INVALID_ARG,
               "model '%s' has a fixed batch of %lld (no input has a symbolic first dimension): "
               "--batch %lld cannot apply",
               model, (long long)batch, (long long)opts->batch);
    IB_TRY(ib__ort_values_plan(o->inputs, o->n_inputs, opts->inputs, opts->n_inputs, err));
    o->buffers = calloc(o->n_inputs ? o->n_inputs : 1, sizeof *o->buffers);
    IB_FAIL_IF(!o->buffers, err, IB_ERR_NO_MEMORY, "out of memory");
    o->copied_out = calloc(o->n_outputs ? o->n_outputs : 1, sizeof *o->copied_out);
    IB_FAIL_IF(!o->copied_out, err, IB_ERR_NO_MEMORY, "out of memory");
    IB_TRY(make_run_options(o, err));

    fill_info(w, model, flops_per_item);
    w->info.has_batch_dim = has_batch_dim;
    w->caps = ort_caps(o->cuda, has_batch_dim, &o->spec);
    w->info.batch = batch;
    return ort_set_batch(w, w->info.batch, err);
}

ib_status ib__ort_open_model(const char *model, const ib_model_options *opts, ib_workload **out,
                             ib_error *err)
{
    IB_TRY(check_options(model, opts, err));

    ib_workload *w = calloc(1, sizeof *w);
    ort_workload *o = calloc(1, sizeof *o);
    if (!w || !o) {
        free(w);
        free(o);
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory");
    }
    w->impl = o;
    w->backend = &ib__backend_onnxruntime; /* its name and its runtime facts, however opened */
    w->runtime_facts = ib__ort_runtime_facts;
    w->ops = &ort_cpu_ops;
    w->device_id = opts->device_id;
    w->clock = ib__host_clock();
    o->seed = opts->seed;
    o->host_cap_given = opts->host_memory_limit_bytes > 0;
    o->host_cap_bytes = o->host_cap_given ? opts->host_memory_limit_bytes : ib__host_memory_bytes() / 2;

    ib_status st = open_into(w, model, opts, err);
    if (st != IB_OK) {
        ort_destroy(w);
        return st;
    }
    *out = w;
    return IB_OK;
}

size_t ib__ort_input_allocations(const ib_workload *w)
{
    return ((const ort_workload *)w->impl)->allocations;
}

const void *ib__ort_input_host(const ib_workload *w, size_t i, size_t *bytes)
{
    const ort_workload *o = w->impl;
    if (i >= o->n_inputs || !o->buffers) return NULL;
    *bytes = o->buffers[i].bytes;
    return o->buffers[i].host;
}

const void *ib__ort_output_copied(const ib_workload *w, size_t i, size_t *bytes)
{
    const ort_workload *o = w->impl;
    if (i >= o->n_outputs || !o->copied_out) return NULL;
    *bytes = o->copied_out[i].bytes;
    return o->copied_out[i].data;
}

void *ib__ort_input_pinned(ib_workload *w, size_t i, size_t *bytes)
{
    ort_workload *o = impl(w);
    if (i >= o->n_inputs || !o->buffers) return NULL;
    *bytes = o->buffers[i].bytes;
    return o->buffers[i].pinned;
}
