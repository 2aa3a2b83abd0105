/* An out-of-tree inferbench backend: C = A x B of given sizes, with cuBLAS
 * on the GPU (cuBLAS and the CUDA runtime loaded with dlopen, so that this
 * builds anywhere) or a blocked C loop on the CPU (fp32). A batch is that
 * many independent GEMMs of the same size. Options: m, n, k (default 1024),
 * dtype=fp32|fp16 (fp16: GPU only). See docs/backends.md. */
#include <inferbench_backend.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*cuda_fn)(); /* every call used returns a status */
enum { CUDA_R_32F = 0, CUDA_R_16F = 2, CUBLAS_COMPUTE_32F = 68, CUBLAS_GEMM_DEFAULT = -1 };
// clang-format off
static const char *const cuda_names[] = { "cudaSetDevice", "cudaStreamCreateWithFlags", "cudaStreamDestroy",
    "cudaStreamSynchronize", "cudaMalloc", "cudaFree", "cudaMemcpy", /* then cuBLAS's: */ "cublasCreate_v2",
    "cublasDestroy_v2", "cublasSetStream_v2", "cublasGemmStridedBatchedEx" };
enum { SET_DEVICE, STREAM_CREATE, STREAM_DESTROY, STREAM_SYNC, MALLOC, FREE, MEMCPY, CREATE, DESTROY,
       SET_STREAM, GEMM, N_CUDA };
// clang-format on

typedef struct gemm {
    long long m, n, k, batch;
    uint64_t seed;
    long long rows[3], cols[3]; /* of A, B and C */
    int fp16, gpu, sync;
    void *host[3], *dev[3]; /* A, B, C: on the CPU, or on the GPU */
    void *stream, *cublas, *libs[2];
    cuda_fn f[N_CUDA];
} gemm;

/* CUDA's out-of-memory (2) and cuBLAS's allocation failure (3) are what the
 * throughput search expects; any other error is a failed run. */
static ib_status check(int rc, int oom_code, const char *what, ib_error *err)
{
    if (rc == 0) return IB_OK;
    if (err) snprintf(err->message, sizeof err->message, "gemm: %s failed (error %d)", what, rc);
    return rc == oom_code ? IB_ERR_DEVICE_OOM : IB_ERR_RUNTIME;
}

static int load_cuda(gemm *g)
{
    static const char *const libs[2][3] = {
        { "libcudart.so", "libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so" },
        { "libcublas.so", "libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so" }
    };
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < 3 && !g->libs[l]; i++) g->libs[l] = dlopen(libs[l][i], RTLD_NOW | RTLD_LOCAL);
    for (int i = 0; i < N_CUDA && g->libs[0] && g->libs[1]; i++) {
        void *sym = dlsym(g->libs[i < CREATE ? 0 : 1], cuda_names[i]);
        if (!sym) return 0;
        memcpy(&g->f[i], &sym, sizeof sym);
    }
    return g->libs[0] && g->libs[1];
}

static void release_batch(gemm *g)
{
    for (int i = 0; i < 3; i++) {
        free(g->host[i]);
        if (g->dev[i]) g->f[FREE](g->dev[i]);
        g->host[i] = g->dev[i] = NULL;
    }
}

/* Random values in [0.5, 1) (not zeros: a GPU multiplying zeros draws less
 * power and runs faster): fp16 bit patterns of exponent -1, or floats. */
static void *random_values(const gemm *g, size_t count)
{
    unsigned char *p = malloc(count * (g->fp16 ? 2 : 4));
    unsigned x = (unsigned)g->seed;
    for (size_t i = 0; p && i < count; i++) {
        x = x * 1664525u + 1013904223u;
        unsigned short h = (unsigned short)(0x3800u | (x >> 22));
        if (g->fp16)
            memcpy(p + 2 * i, &h, 2);
        else
            ((float *)p)[i] = 0.5f + (float)(x >> 22) / 2048.0f;
    }
    return p;
}

/* Buffer i (A, B, C) filled with random values or zeros, made on the host
 * and, on the GPU, copied once to the device. */
static ib_status fill(gemm *g, int i, bool zeros, ib_error *err)
{
    size_t count = (size_t)(g->batch * g->rows[i] * g->cols[i]), elem = g->fp16 ? 2 : 4;
    void *values = zeros ? calloc(count, elem) : random_values(g, count);
    if (!values) return g->gpu ? IB_ERR_NO_MEMORY : IB_ERR_DEVICE_OOM; /* the CPU's memory is its device's */
    if (!g->gpu) return free(g->host[i]), g->host[i] = values, IB_OK;
    ib_status st = check(g->f[MEMCPY](g->dev[i], values, count * elem, 1), 2, "cudaMemcpy", err);
    free(values);
    return st;
}

static ib_status gemm_set_batch(void *state, int64_t batch, ib_error *err)
{
    gemm *g = state;
    release_batch(g);
    g->batch = batch;
    ib_status st = IB_OK;
    for (int i = 0; i < 3 && st == IB_OK; i++) {
        size_t bytes = (size_t)(batch * g->rows[i] * g->cols[i]) * (g->fp16 ? 2 : 4);
        if (g->gpu) st = check(g->f[MALLOC](&g->dev[i], bytes), 2, "cudaMalloc", err);
        if (st == IB_OK) st = fill(g, i, false, err);
    }
    if (st != IB_OK) release_batch(g);
    return st;
}

/* The pitfalls report's zero-filled inputs, and back. */
static ib_status gemm_fill_inputs(void *state, bool zeros, ib_error *err)
{
    ib_status st = fill(state, 0, zeros, err);
    return st == IB_OK ? fill(state, 1, zeros, err) : st;
}

/* Row-major C[m x n] = A[m x k] B[k x n], blocked so that a tile of B stays
 * in cache and the inner loop is a vectorizable axpy. */
static void cpu_gemm(const float *a, const float *b, float *c, long long m, long long n, long long k)
{
    enum { T = 64 };
    memset(c, 0, (size_t)(m * n) * sizeof *c);
    for (long long i0 = 0; i0 < m; i0 += T)
        for (long long p0 = 0; p0 < k; p0 += T)
            for (long long i = i0; i < i0 + T && i < m; i++)
                for (long long p = p0; p < p0 + T && p < k; p++) {
                    float x = a[i * k + p];
                    for (long long j = 0; j < n; j++) c[i * n + j] += x * b[p * n + j];
                }
}

static ib_status gemm_run(void *state, ib_error *err)
{
    gemm *g = state;
    float *a = g->host[0], *b = g->host[1], *c = g->host[2];
    for (long long i = 0; !g->gpu && i < g->batch; i++)
        cpu_gemm(a + i * g->m * g->k, b + i * g->k * g->n, c + i * g->m * g->n, g->m, g->n, g->k);
    if (!g->gpu) return IB_OK;
    const float one = 1.0f, zero = 0.0f;
    int t = g->fp16 ? CUDA_R_16F : CUDA_R_32F, m = (int)g->m, n = (int)g->n, k = (int)g->k;
    /* Column-major, as cuBLAS counts: C (m x n) = A (m x k) B (k x n). */
    int rc = g->f[GEMM](g->cublas, 0, 0, m, n, k, &one, g->dev[0], t, m, g->m * g->k, g->dev[1], t, k,
                        g->k * g->n, &zero, g->dev[2], t, m, g->m * g->n, (int)g->batch, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
    if (rc != 0 || !g->sync) return check(rc, 3, "cublasGemmStridedBatchedEx", err);
    return check(g->f[STREAM_SYNC](g->stream), 2, "cudaStreamSynchronize", err);
}

static ib_status gemm_set_run_sync(void *state, bool sync, ib_error *err)
{
    return (void)err, ((gemm *)state)->sync = sync, IB_OK;
}

static void gemm_close(void *state)
{
    gemm *g = state;
    release_batch(g);
    if (g->cublas) g->f[DESTROY](g->cublas);
    if (g->stream) g->f[STREAM_DESTROY](g->stream);
    for (int l = 0; l < 2; l++)
        if (g->libs[l]) dlclose(g->libs[l]);
    free(g);
}

static ib_status refuse(ib_error *err, const char *fmt, const char *what)
{
    if (err) snprintf(err->message, sizeof err->message, fmt, what);
    return IB_ERR_INVALID_ARG;
}

static ib_status parse_option(gemm *g, const char *key, const char *v, ib_error *err)
{
    long long *size = !strcmp(key, "m")   ? &g->m
                      : !strcmp(key, "n") ? &g->n
                      : !strcmp(key, "k") ? &g->k
                                          : NULL;
    char *end = NULL;
    if (size) *size = strtoll(v, &end, 10);
    if (size && (end == v || *end || *size < 1 || *size > 65536))
        return refuse(err, "gemm: %s: a size is a whole number from 1 to 65536", key);
    if (size) return IB_OK;
    if (strcmp(key, "dtype")) return refuse(err, "gemm: unknown option '%s' (known: m, n, k, dtype)", key);
    if (strcmp(v, "fp16") && strcmp(v, "fp32"))
        return refuse(err, "gemm: dtype=%s: expected fp16 or fp32", v);
    g->fp16 = !strcmp(v, "fp16");
    return IB_OK;
}

/* AUTO takes the GPU when cuBLAS loads and device args->device_id is there. */
static ib_status open_device(gemm *g, const ib_backend_open_args *args, ib_error *err)
{
    for (size_t i = 0; i < args->n_options; i++)
        if (parse_option(g, args->options[i].key, args->options[i].value, err) != IB_OK)
            return IB_ERR_INVALID_ARG;
    g->rows[0] = g->m, g->rows[1] = g->k, g->rows[2] = g->m;
    g->cols[0] = g->k, g->cols[1] = g->n, g->cols[2] = g->n;
    if (args->device == IB_DEVICE_CPU && g->fp16)
        return refuse(err, "gemm: %s", "dtype=fp16 needs the GPU: the CPU loop is fp32 only");
    if (args->device == IB_DEVICE_CPU) return IB_OK;
    if (!load_cuda(g) || g->f[SET_DEVICE](args->device_id) != 0) {
        if (args->device == IB_DEVICE_AUTO && !g->fp16) return IB_OK;
        return refuse(err, "gemm: %s",
                      "no usable CUDA device (no GPU, or cuBLAS or the CUDA runtime missing)");
    }
    g->gpu = 1;
    ib_status st = check(g->f[STREAM_CREATE](&g->stream, 1 /* non-blocking */), 2, "cudaStreamCreate", err);
    if (st == IB_OK) st = check(g->f[CREATE](&g->cublas), 3, "cublasCreate", err);
    if (st == IB_OK) st = check(g->f[SET_STREAM](g->cublas, g->stream), 3, "cublasSetStream", err);
    return st;
}

static ib_status gemm_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    gemm *g = calloc(1, sizeof *g);
    if (!g) return IB_ERR_NO_MEMORY;
    *g = (gemm){ .m = 1024, .n = 1024, .k = 1024, .sync = 1, .seed = args->seed };
    ib_status st = open_device(g, args, err);
    if (st == IB_OK) st = gemm_set_batch(g, args->batch, err);
    if (st != IB_OK) return gemm_close(g), st;
    uint64_t gpu =
        IB_CAP_GPU | IB_CAP_CUDA_STREAM | IB_CAP_DEVICE_TIMING | IB_CAP_ASYNC_RUN | IB_CAP_L2_FLUSH;
    *out = (ib_backend_handle){ .state = g,
                                .caps = IB_CAP_BATCH_DIM | IB_CAP_REFILL_INPUTS | (g->gpu ? gpu : 0),
                                .stream = g->stream,
                                .device_id = args->device_id };
    return IB_OK;
}

static void gemm_describe(void *state, ib_workload_info *info)
{
    const gemm *g = state;
    snprintf(info->model, sizeof info->model, "gemm m=%lld n=%lld k=%lld %s", g->m, g->n, g->k,
             g->fp16 ? "fp16" : "fp32");
    snprintf(info->provider, sizeof info->provider, "%s", g->gpu ? "cuBLAS" : "C loop (fp32)");
    info->batch = g->batch;
    info->n_inputs = 2, info->n_outputs = 1;
    for (int i = 0; i < 3; i++) {
        ib_tensor_info *t = i < 2 ? &info->inputs[i] : &info->outputs[0];
        *t = (ib_tensor_info){ .name = { (char)('A' + i) },
                               .rank = 3,
                               .dims = { g->batch, g->rows[i], g->cols[i] } };
        strcpy(t->type, g->fp16 ? "float16" : "float32");
    }
    info->flops_per_item = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    /* The settings in effect, defaults too (workload.backend_options). */
    const char *keys[] = { "m", "n", "k", "dtype" };
    const long long sizes[] = { g->m, g->n, g->k };
    for (int i = 0; i < 4; i++) {
        snprintf(info->options.items[i].key, IB_OPTION_KEY_LEN, "%s", keys[i]);
        if (i < 3) snprintf(info->options.items[i].value, IB_OPTION_VALUE_LEN, "%lld", sizes[i]);
    }
    snprintf(info->options.items[3].value, IB_OPTION_VALUE_LEN, "%s", g->fp16 ? "fp16" : "fp32");
    info->options.n = 4;
}

/* What --option takes, for `inferbench latency --backend plugin:... --help`
 * and best; inferbench checks no value of it, parse_option does. */
static const ib_backend_option_decl gemm_options[] = {
    { .key = "m", .help = "rows of A and C (default 1024)", .values = "1..65536" },
    { .key = "n", .help = "columns of B and C (default 1024)", .values = "1..65536" },
    { .key = "k", .help = "columns of A, rows of B (default 1024)", .values = "1..65536" },
    { .key = "dtype", .help = "the element type (fp16: the GPU only)", .values = "fp32|fp16" },
};

static const ib_backend gemm_backend = {
    .struct_size = sizeof(ib_backend),
    .abi_version = IB_BACKEND_ABI_VERSION,
    .name = "gemm",
    .description = "C = A x B (--option m=, n=, k=, dtype=fp32|fp16): cuBLAS on the GPU, a C loop on the CPU",
    .open = gemm_open,
    .describe = gemm_describe,
    .set_batch = gemm_set_batch,
    .run = gemm_run,
    .set_run_sync = gemm_set_run_sync,
    .fill_inputs = gemm_fill_inputs,
    .close = gemm_close,
    .options = gemm_options,
    .n_options = sizeof gemm_options / sizeof gemm_options[0],
};

/* The one symbol inferbench looks up. */
const ib_backend *inferbench_backend_v4(void);
const ib_backend *inferbench_backend_v4(void) { return &gemm_backend; }
