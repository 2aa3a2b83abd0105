/* ONNX Runtime sessions: the process-wide environment, OrtStatus conversion,
 * the CUDA execution provider loaded as a plugin, and session creation. */
#include "backend/onnxruntime/ort.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CUDA_EP_NAME "CUDAExecutionProvider"
#define CUDA_EP_LIBRARY "libonnxruntime_providers_cuda.so"

/* ------------------------------------------------------------------------ */
/* The environment                                                           */
/* ------------------------------------------------------------------------ */

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static const OrtApi *g_api;
static OrtEnv *g_env;
static char g_env_error[512];
static ib_status g_env_status = IB_ERR_RUNTIME; /* why there is no g_env */

/* The last message ORT logged at ERROR or above: a failing call sometimes
 * says less in its status than in its log (an EP that did not load).
 * log_count tells whether something was logged during a call. */
static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;
static char g_last_log[256];
static unsigned long g_log_count;

static void ORT_API_CALL keep_errors_logger(void *param, OrtLoggingLevel severity, const char *category,
                                            const char *logid, const char *code_location, const char *message)
{
    (void)param, (void)category, (void)logid, (void)code_location;
    if (severity < ORT_LOGGING_LEVEL_ERROR || !message) return;
    pthread_mutex_lock(&log_mutex);
    ib__strlcpy(g_last_log, message, sizeof g_last_log);
    g_log_count++;
    pthread_mutex_unlock(&log_mutex);
}

static unsigned long log_count(void)
{
    pthread_mutex_lock(&log_mutex);
    unsigned long n = g_log_count;
    pthread_mutex_unlock(&log_mutex);
    return n;
}

/* Copies the last logged error into buf if one was logged since `since`. */
static bool last_log_since(unsigned long since, char *buf, size_t cap)
{
    pthread_mutex_lock(&log_mutex);
    bool logged = g_log_count != since;
    if (logged) ib__strlcpy(buf, g_last_log, cap);
    pthread_mutex_unlock(&log_mutex);
    return logged;
}

static void create_env(void)
{
    const OrtApiBase *base;
    ib_error why;
    ib_status loaded = ib__ort_api_base(&base, &why);
    if (loaded != IB_OK) {
        ib__strlcpy(g_env_error, why.message, sizeof g_env_error);
        g_env_status = loaded;
        return;
    }
    g_api = base->GetApi(ORT_API_VERSION);
    if (!g_api) {
        snprintf(g_env_error, sizeof g_env_error,
                 "the ONNX Runtime library (%s) does not provide API version %d: 1.%d or later "
                 "is needed",
                 base->GetVersionString(), ORT_API_VERSION, ORT_API_VERSION);
        return;
    }
    /* The logger keeps errors and drops everything, so nothing reaches
     * stdout or stderr; WARNING is not kept, ERROR is. */
    OrtStatus *st = g_api->CreateEnvWithCustomLogger(keep_errors_logger, NULL, ORT_LOGGING_LEVEL_ERROR,
                                                     "inferbench", &g_env);
    if (st) {
        snprintf(g_env_error, sizeof g_env_error, "cannot create the ONNX Runtime environment: %s",
                 g_api->GetErrorMessage(st));
        g_api->ReleaseStatus(st);
        g_env = NULL;
    }
}

ib_status ib__ort_init(const OrtApi **api, OrtEnv **env, ib_error *err)
{
    pthread_once(&env_once, create_env);
    IB_FAIL_IF(!g_env, err, g_env_status, "%s", g_env_error);
    *api = g_api;
    if (env) *env = g_env;
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* Status conversion                                                         */
/* ------------------------------------------------------------------------ */

static bool contains_nocase(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = haystack; *p; p++)
        if (strncasecmp(p, needle, n) == 0) return true;
    return false;
}

ib_status ib__ort_classify(const char *message, ib_status fallback)
{
    /* What ORT, its BFC arena and the CUDA libraries say when memory runs
     * out (cudaErrorMemoryAllocation is error 2). */
    static const char *const oom[] = {
        "out of memory",
        "Failed to allocate memory",
        "BFCArena",
        "CUDNN_STATUS_ALLOC_FAILED",
        "CUBLAS_STATUS_ALLOC_FAILED",
        "cudaErrorMemoryAllocation",
        "CUDA failure 2:",
        "Available memory of",
        "bad_alloc",
    };
    /* Errors that leave the CUDA context unusable: every later call fails. */
    static const char *const lost[] = {
        "illegal memory access",      "illegal address",
        "cudaErrorIllegalAddress",    "CUDA failure 700",
        "unspecified launch failure", "cudaErrorLaunchFailure",
        "CUDA failure 719",           "misaligned address",
        "CUDA failure 716",           "device-side assert",
        "CUDA failure 710",           "uncorrectable ECC",
        "CUDA failure 214",           "cudaErrorDevicesUnavailable",
        "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED",
    };
    /* The runtime refusing a size, whatever the memory: cuDNN and cuBLAS
     * reject tensors of 2^31 elements and more, a kernel grid too large is
     * CUDA's invalid configuration (error 9). The batch search counts these
     * as the limit above a batch that ran; any other failure is an error. */
    static const char *const size_limit[] = {
        "CUDNN_STATUS_NOT_SUPPORTED",
        "CUBLAS_STATUS_NOT_SUPPORTED",
        "invalid configuration argument",
        "cudaErrorInvalidConfiguration",
        "CUDA failure 9:",
    };
    if (!message) return fallback;
    for (size_t i = 0; i < sizeof lost / sizeof lost[0]; i++)
        if (contains_nocase(message, lost[i])) return IB_ERR_DEVICE_LOST;
    for (size_t i = 0; i < sizeof oom / sizeof oom[0]; i++)
        if (contains_nocase(message, oom[i])) return IB_ERR_DEVICE_OOM;
    for (size_t i = 0; i < sizeof size_limit / sizeof size_limit[0]; i++)
        if (contains_nocase(message, size_limit[i])) return IB_ERR_UNSUPPORTED;
    return fallback;
}

ib_status ib__ort_check(OrtStatus *st, ib_status fallback, ib_error *err, const char *what)
{
    if (!st) return IB_OK;
    const char *msg = g_api->GetErrorMessage(st);
    ib_status status =
        g_api->GetErrorCode(st) == ORT_DEVICE_RESET ? IB_ERR_DEVICE_LOST : ib__ort_classify(msg, fallback);
    ib__fail(err, status, "%s: %s", what, msg);
    g_api->ReleaseStatus(st);
    return status;
}

/* ------------------------------------------------------------------------ */
/* The CUDA execution provider plugin                                        */
/* ------------------------------------------------------------------------ */

static pthread_mutex_t cuda_ep_mutex = PTHREAD_MUTEX_INITIALIZER;
static int cuda_ep_state; /* 0 not tried, 1 registered, -1 failed */
static char cuda_ep_error[512];

/* The provider library ships beside libonnxruntime.so. */
static void cuda_ep_library_path(const char *core, char *path, size_t cap)
{
    const char *slash = strrchr(core, '/');
    if (!slash) {
        /* No directory known: let the loader search as it did for ORT. */
        ib__strlcpy(path, CUDA_EP_LIBRARY, cap);
        return;
    }
    snprintf(path, cap, "%.*s/%s", (int)(slash - core), core, CUDA_EP_LIBRARY);
}

/* Why the CUDA provider cannot be loaded beside this core library, or false.
 * The provider calls shared operator code (Slice's, Gather's shape helpers)
 * back in the core library through ONNX Runtime's provider-host table; a
 * CPU build's table does not match the CUDA build's, and those calls land
 * on the wrong function: the process crashes (seen with 1.29 on the H200,
 * docs/backend-onnxruntime.md). */
static bool cuda_ep_unusable(char *path, size_t cap)
{
    char core[2048];
    bool cuda_build = ib__ort_core_library(core, sizeof core);
    cuda_ep_library_path(core, path, cap);
    if (strchr(path, '/') && access(path, R_OK) != 0) {
        snprintf(cuda_ep_error, sizeof cuda_ep_error,
                 "the CUDA execution provider is not installed (no %.400s)", path);
        return true;
    }
    if (!cuda_build) {
        snprintf(cuda_ep_error, sizeof cuda_ep_error,
                 "the ONNX Runtime core library %.300s is a CPU build: the CUDA execution "
                 "provider needs the CUDA build of the same version (scripts/setup.sh installs "
                 "it where a GPU is present)",
                 core[0] ? core : "(unknown path)");
        return true;
    }
    return false;
}

/* Registers the library once per process; the outcome is kept, a library
 * that failed to load will not load on a second try either. */
static ib_status cuda_ep_register(ib_error *err)
{
    pthread_mutex_lock(&cuda_ep_mutex);
    if (cuda_ep_state == 0) {
        char path[4096];
        if (cuda_ep_unusable(path, sizeof path)) {
            cuda_ep_state = -1;
        } else {
            ib_error e;
            unsigned long before = log_count();
            OrtStatus *st = g_api->RegisterExecutionProviderLibrary(g_env, "CUDA", path);
            if (ib__ort_check(st, IB_ERR_NO_DEVICE, &e, "cannot load the CUDA execution provider") == IB_OK) {
                cuda_ep_state = 1;
            } else {
                char logged[256];
                if (last_log_since(before, logged, sizeof logged) && !strstr(e.message, logged))
                    snprintf(cuda_ep_error, sizeof cuda_ep_error, "%.300s (%.200s)", e.message, logged);
                else
                    ib__strlcpy(cuda_ep_error, e.message, sizeof cuda_ep_error);
                cuda_ep_state = -1;
            }
        }
    }
    ib_status status = cuda_ep_state == 1 ? IB_OK : IB_ERR_NO_DEVICE;
    if (status != IB_OK) ib__fail(err, status, "%s", cuda_ep_error);
    pthread_mutex_unlock(&cuda_ep_mutex);
    return status;
}

/* The CUDA ordinal an OrtEpDevice stands for: the provider puts it in the
 * device's EP options as "device_id"; -1 when it does not. */
static int ep_device_cuda_id(const OrtEpDevice *d)
{
    const OrtKeyValuePairs *options = g_api->EpDevice_EpOptions(d);
    const char *id = options ? g_api->GetKeyValue(options, "device_id") : NULL;
    if (!id || !*id) return -1;
    char *end;
    long v = strtol(id, &end, 10);
    return *end == '\0' && v >= 0 && v <= 1024 ? (int)v : -1;
}

ib_status ib__ort_cuda_ep_device(int device_id, const OrtEpDevice **out, ib_error *err)
{
    const OrtApi *api = NULL;
    OrtEnv *env = NULL;
    *out = NULL;
    IB_TRY(ib__ort_init(&api, &env, err));
    IB_TRY(cuda_ep_register(err));

    const OrtEpDevice *const *devices = NULL;
    size_t n = 0;
    IB_TRY(ib__ort_check(api->GetEpDevices(env, &devices, &n), IB_ERR_NO_DEVICE, err,
                         "cannot list the execution providers' devices"));
    /* Match on the ordinal where the provider says it; otherwise the k-th
     * CUDA device listed is ordinal k (how the provider numbers them). */
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = api->EpDevice_EpName(devices[i]);
        if (!name || strcmp(name, CUDA_EP_NAME) != 0) continue;
        int id = ep_device_cuda_id(devices[i]);
        if ((id >= 0 ? id : k) == device_id) {
            *out = devices[i];
            return IB_OK;
        }
        k++;
    }
    return ib__fail(err, IB_ERR_NO_DEVICE,
                    "the CUDA execution provider lists %d device(s), none is CUDA device %d", k, device_id);
}

/* ------------------------------------------------------------------------ */
/* Sessions                                                                  */
/* ------------------------------------------------------------------------ */

/* Appends the CUDA provider for spec->ep_device with our options. The
 * legacy CreateCUDAProviderOptions path does not reach a plugin-loaded
 * provider: options go through SessionOptionsAppendExecutionProvider_V2. */
static ib_status append_cuda(const OrtApi *api, OrtEnv *env, OrtSessionOptions *so,
                             const ib__ort_session_spec *spec, ib_error *err)
{
    char device_id[16], stream[32], mem_limit[32];
    snprintf(device_id, sizeof device_id, "%d", spec->device_id);
    /* The provider parses the stream's address as a decimal integer. */
    snprintf(stream, sizeof stream, "%" PRIuPTR, (uintptr_t)spec->stream);
    const char *keys[10], *values[10];
    size_t n = 0;
    keys[n] = "device_id", values[n++] = device_id;
    keys[n] = "has_user_compute_stream", values[n++] = "1";
    keys[n] = "user_compute_stream", values[n++] = stream;
    keys[n] = "cudnn_conv_algo_search", values[n++] = spec->cudnn_conv_algo_search;
    if (spec->prefer_nhwc) keys[n] = "prefer_nhwc", values[n++] = "1";
    if (spec->cuda_graph) keys[n] = "enable_cuda_graph", values[n++] = "1";
    if (spec->use_tf32 >= 0) keys[n] = "use_tf32", values[n++] = spec->use_tf32 ? "1" : "0";
    if (spec->gpu_mem_limit_bytes > 0) {
        snprintf(mem_limit, sizeof mem_limit, "%zu", spec->gpu_mem_limit_bytes);
        keys[n] = "gpu_mem_limit", values[n++] = mem_limit;
    }
    const OrtEpDevice *devices[1] = { spec->ep_device };
    return ib__ort_check(api->SessionOptionsAppendExecutionProvider_V2(so, env, devices, 1, keys, values, n),
                         IB_ERR_NO_DEVICE, err, "cannot configure the CUDA execution provider");
}

/* CPU sessions with a limit take the environment's bounded arena. */
static bool bounded_host_arena(const ib__ort_session_spec *spec)
{
    return !spec->ep_device && spec->host_arena_limit_bytes > 0;
}

static ib_status session_options(const OrtApi *api, OrtEnv *env, const ib__ort_session_spec *spec,
                                 OrtSessionOptions **out, ib_error *err)
{
    OrtSessionOptions *so = NULL;
    IB_TRY(
        ib__ort_check(api->CreateSessionOptions(&so), IB_ERR_RUNTIME, err, "cannot create session options"));
    GraphOptimizationLevel level = spec->graph_optimization_level
                                       ? (GraphOptimizationLevel)spec->graph_optimization_level
                                       : ORT_ENABLE_ALL;
    ib_status st = ib__ort_check(api->SetSessionGraphOptimizationLevel(so, level), IB_ERR_RUNTIME, err,
                                 "cannot set the optimization level");
    if (st == IB_OK && spec->intra_op_threads > 0)
        st = ib__ort_check(api->SetIntraOpNumThreads(so, spec->intra_op_threads), IB_ERR_INVALID_ARG, err,
                           "cannot set the intra-op thread count");
    if (st == IB_OK && spec->ep_device) st = append_cuda(api, env, so, spec, err);
    if (st == IB_OK && bounded_host_arena(spec))
        st = ib__ort_check(api->AddSessionConfigEntry(so, "session.use_env_allocators", "1"), IB_ERR_INTERNAL,
                           err, "cannot share the host memory arena");
    if (st != IB_OK) {
        api->ReleaseSessionOptions(so);
        return st;
    }
    *out = so;
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* The bounded host arena                                                    */
/* ------------------------------------------------------------------------ */

/* CPU sessions with a host memory limit take their memory from an arena
 * registered with the environment (session.use_env_allocators), created
 * with max_mem = the limit: an allocation past it fails inside ONNX
 * Runtime ("Available memory of A is smaller than requested bytes of R")
 * instead of succeeding on overcommitted memory that the kernel's OOM
 * killer reclaims later by killing us. Each session creation registers a
 * fresh arena (the environment holds one for host memory): a session keeps
 * the arena it was made with, and releasing it returns the arena's memory,
 * as with ONNX Runtime's own per-session arena (reopen relies on that).
 * arena_mutex is held from the registration to the end of the creation. */
static pthread_mutex_t arena_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool g_arena_registered;

static ib_status register_host_arena(const OrtApi *api, OrtEnv *env, size_t limit, ib_error *err)
{
    OrtMemoryInfo *info = NULL;
    IB_TRY(ib__ort_check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &info),
                         IB_ERR_INTERNAL, err, "cannot describe host memory"));
    ib_status st = IB_OK;
    if (g_arena_registered)
        st = ib__ort_check(api->UnregisterAllocator(env, info), IB_ERR_INTERNAL, err,
                           "cannot replace the host memory arena");
    g_arena_registered = false;
    OrtArenaCfg *cfg = NULL;
    const char *keys[1] = { "max_mem" };
    size_t values[1] = { limit };
    if (st == IB_OK)
        st = ib__ort_check(api->CreateArenaCfgV2(keys, values, 1, &cfg), IB_ERR_INTERNAL, err,
                           "cannot configure the host memory arena");
    if (st == IB_OK)
        st = ib__ort_check(api->CreateAndRegisterAllocator(env, info, cfg), IB_ERR_INTERNAL, err,
                           "cannot create the host memory arena");
    g_arena_registered = st == IB_OK;
    if (cfg) api->ReleaseArenaCfg(cfg);
    api->ReleaseMemoryInfo(info);
    return st;
}

/* What a failed session creation means for the caller. */
static ib_status creation_status(OrtErrorCode code)
{
    switch (code) {
    case ORT_NO_SUCHFILE: return IB_ERR_IO;
    case ORT_NOT_IMPLEMENTED: return IB_ERR_UNSUPPORTED;
    case ORT_EP_FAIL:
    case ORT_ENGINE_ERROR:
    case ORT_RUNTIME_EXCEPTION: return IB_ERR_RUNTIME;
    case ORT_DEVICE_RESET: return IB_ERR_DEVICE_LOST;
    default: return IB_ERR_MODEL; /* invalid protobuf, graph, argument */
    }
}

ib_status ib__ort_session_create(const ib__ort_session_spec *spec, OrtSession **out, ib_error *err)
{
    const OrtApi *api = NULL;
    OrtEnv *env = NULL;
    *out = NULL;
    IB_TRY(ib__ort_init(&api, &env, err));
    OrtSessionOptions *so;
    IB_TRY(session_options(api, env, spec, &so, err));

    unsigned long before = log_count();
    bool bounded = bounded_host_arena(spec);
    if (bounded) {
        pthread_mutex_lock(&arena_mutex);
        ib_status arena = register_host_arena(api, env, spec->host_arena_limit_bytes, err);
        if (arena != IB_OK) {
            pthread_mutex_unlock(&arena_mutex);
            api->ReleaseSessionOptions(so);
            return arena;
        }
    }
    OrtStatus *st = spec->path ? api->CreateSession(env, spec->path, so, out)
                               : api->CreateSessionFromArray(env, spec->bytes, spec->len, so, out);
    if (bounded) pthread_mutex_unlock(&arena_mutex);
    api->ReleaseSessionOptions(so);
    if (!st) return IB_OK;

    *out = NULL;
    char what[400];
    snprintf(what, sizeof what, "cannot load model '%.300s'", spec->label);
    ib_status status = ib__ort_check(st, creation_status(api->GetErrorCode(st)), err, what);
    /* A provider that failed during creation often logs the cause and
     * returns a generic status: add the log line when it says more. */
    char logged[256];
    if (err && last_log_since(before, logged, sizeof logged) && !strstr(err->message, logged)) {
        char msg[sizeof err->message];
        ib__strlcpy(msg, err->message, sizeof msg);
        ib__fail(err, status, "%s (%s)", msg, logged);
    }
    return status;
}
