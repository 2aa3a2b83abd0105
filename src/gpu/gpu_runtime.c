/* The CUDA layer's plain parts: error conversion, device queries, streams,
 * memory, copies, the spin launch and graph capture. The CUDA runtime is linked statically,
 * so every entry here must cope with a machine that has no driver: the
 * runtime then answers an error code, which becomes IB_ERR_NO_DEVICE. */
#include "gpu/gpu.h"
#include "gpu/gpu_cuda.h"

#include <stdio.h>
#include <stdlib.h>

/* Errors after which the context is unusable: the runtime documents each as
 * leaving the process "in an inconsistent state", every later call fails the
 * same way until the process restarts. ECC and NVLink uncorrectable errors
 * are listed as well: the data on the device can no longer be trusted. */
static bool is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorExternalDevice: return true;
    default: return false;
    }
}

/* The status of an error known by name; IB_OK for the others. */
static ib_status classify_known(cudaError_t e)
{
    switch (e) {
    case cudaErrorMemoryAllocation: return IB_ERR_DEVICE_OOM;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorInitializationError:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorStubLibrary:
    case cudaErrorSystemNotReady:
    case cudaErrorCallRequiresNewerDriver: return IB_ERR_NO_DEVICE;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInvalidKernelImage: return IB_ERR_UNSUPPORTED;
    default: return is_sticky(e) ? IB_ERR_DEVICE_LOST : IB_OK;
    }
}

static ib_status classify(cudaError_t e)
{
    ib_status s = classify_known(e);
    if (s != IB_OK) return s;
    /* An error we do not know by name (newer runtimes add sticky ones, e.g.
     * cudaErrorContained): clear the last error once; if an error is still
     * there, it cannot be cleared, which is what sticky means. (Without a
     * driver, what stays is the driver's absence.) */
    (void)cudaGetLastError();
    cudaError_t again = cudaPeekAtLastError();
    if (again == cudaSuccess) return IB_ERR_RUNTIME;
    s = classify_known(again);
    return s != IB_OK ? s : IB_ERR_DEVICE_LOST;
}

ib_status ib__cuda_status(cudaError_t e, ib_error *err, const char *what_fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, what_fmt);
    vsnprintf(what, sizeof what, what_fmt, ap);
    va_end(ap);

    ib_status status = classify(e);
    (void)cudaGetLastError();
    char hint[160] = "";
    if (status == IB_ERR_DEVICE_LOST)
        snprintf(hint, sizeof hint, "; the GPU context is unusable until the process restarts");
    else if (status == IB_ERR_UNSUPPORTED)
        snprintf(hint, sizeof hint, "; this inferbench was not built for this GPU's architecture");
    else if (e == cudaErrorInsufficientDriver)
        /* What the static runtime also answers where no driver is installed. */
        snprintf(hint, sizeof hint,
                 "; no NVIDIA driver was found, or it is older than the CUDA %d.%d runtime "
                 "inferbench was built with",
                 CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    return ib__fail(err, status, "%s: %s (%s)%s", what, cudaGetErrorString(e), cudaGetErrorName(e), hint);
}

/* Evaluates a CUDA call once and returns its conversion on failure. */
#define CUDA_TRY(err, call, ...)                                                                             \
    do {                                                                                                     \
        cudaError_t cuda_e_ = (call);                                                                        \
        if (cuda_e_ != cudaSuccess) return ib__cuda_status(cuda_e_, (err), __VA_ARGS__);                     \
    } while (0)

bool ib__gpu_available(int device_id)
{
    int n = 0, mode = 0;
    if (device_id < 0) return false;
    /* Without a driver the static runtime returns an error here (and prints
     * nothing); the error is cleared so that it is not reported later. */
    if (cudaGetDeviceCount(&n) != cudaSuccess || device_id >= n ||
        cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device_id) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return mode != cudaComputeModeProhibited;
}

ib_status ib__gpu_props_get(int device_id, ib__gpu_props *out, ib_error *err)
{
    struct cudaDeviceProp p;
    CUDA_TRY(err, cudaGetDeviceProperties(&p, device_id), "cudaGetDeviceProperties(device %d)", device_id);
    *out = (ib__gpu_props){ 0 };
    ib__strlcpy(out->name, p.name, sizeof out->name);
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->sm_count = p.multiProcessorCount;
    out->l2_cache_bytes = (unsigned long long)p.l2CacheSize;
    out->total_memory_bytes = (unsigned long long)p.totalGlobalMem;
    CUDA_TRY(err, cudaDriverGetVersion(&out->driver_version), "cudaDriverGetVersion");
    CUDA_TRY(err, cudaRuntimeGetVersion(&out->runtime_version), "cudaRuntimeGetVersion");
    return IB_OK;
}

ib_status ib__gpu_pci_bus_id(int device_id, char *buf, size_t cap, ib_error *err)
{
    IB_FAIL_IF(cap < 16 || cap > 1024, err, IB_ERR_INTERNAL, "ib__gpu_pci_bus_id: buffer of %zu bytes", cap);
    CUDA_TRY(err, cudaDeviceGetPCIBusId(buf, (int)cap, device_id), "cudaDeviceGetPCIBusId(device %d)",
             device_id);
    return IB_OK;
}

ib_status ib__gpu_stream_create(int device_id, void **stream, ib_error *err)
{
    cudaStream_t s = NULL;
    *stream = NULL;
    CUDA_TRY(err, cudaSetDevice(device_id), "cudaSetDevice(%d)", device_id);
    /* Non-blocking: the legacy default stream, which other libraries may
     * use, neither waits for our work nor makes it wait. */
    CUDA_TRY(err, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    *stream = s;
    return IB_OK;
}

void ib__gpu_stream_destroy(void *stream)
{
    if (stream && cudaStreamDestroy((cudaStream_t)stream) != cudaSuccess)
        (void)cudaGetLastError(); /* nothing to do about it: keep it from showing up elsewhere */
}

ib_status ib__gpu_stream_sync(void *stream, ib_error *err)
{
    CUDA_TRY(err, cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
    return IB_OK;
}

ib_status ib__gpu_malloc(size_t bytes, void **ptr, ib_error *err)
{
    *ptr = NULL;
    CUDA_TRY(err, cudaMalloc(ptr, bytes), "cudaMalloc(%zu bytes)", bytes);
    return IB_OK;
}

ib_status ib__gpu_mem_info(size_t *free_bytes, size_t *total_bytes, ib_error *err)
{
    *free_bytes = *total_bytes = 0;
    CUDA_TRY(err, cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
    return IB_OK;
}

void ib__gpu_free(void *ptr)
{
    if (ptr && cudaFree(ptr) != cudaSuccess) (void)cudaGetLastError();
}

static const char *copy_name(enum cudaMemcpyKind kind)
{
    return kind == cudaMemcpyHostToDevice ? "host to device" : "device to host";
}

static ib_status copy_async(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, void *stream,
                            ib_error *err)
{
    CUDA_TRY(err, cudaMemcpyAsync(dst, src, bytes, kind, (cudaStream_t)stream),
             "cudaMemcpyAsync(%zu bytes, %s)", bytes, copy_name(kind));
    return IB_OK;
}

static ib_status copy_and_wait(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                               void *stream, ib_error *err)
{
    IB_TRY(copy_async(dst, src, bytes, kind, stream, err));
    CUDA_TRY(err, cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize after a copy %s",
             copy_name(kind));
    return IB_OK;
}

ib_status ib__gpu_copy_h2d(void *dst, const void *src, size_t bytes, void *stream, ib_error *err)
{
    return copy_and_wait(dst, src, bytes, cudaMemcpyHostToDevice, stream, err);
}

ib_status ib__gpu_copy_d2h(void *dst, const void *src, size_t bytes, void *stream, ib_error *err)
{
    return copy_and_wait(dst, src, bytes, cudaMemcpyDeviceToHost, stream, err);
}

ib_status ib__gpu_copy_h2d_async(void *dst, const void *src, size_t bytes, void *stream, ib_error *err)
{
    return copy_async(dst, src, bytes, cudaMemcpyHostToDevice, stream, err);
}

ib_status ib__gpu_copy_d2h_async(void *dst, const void *src, size_t bytes, void *stream, ib_error *err)
{
    return copy_async(dst, src, bytes, cudaMemcpyDeviceToHost, stream, err);
}

ib_status ib__gpu_host_alloc(size_t bytes, void **ptr, ib_error *err)
{
    *ptr = NULL;
    /* portable: pinned for every device's context, whichever is current */
    cudaError_t e = cudaHostAlloc(ptr, bytes, cudaHostAllocPortable);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return ib__fail(err, IB_ERR_NO_MEMORY, "cudaHostAlloc(%zu bytes): cannot pin that much host memory",
                        bytes);
    }
    CUDA_TRY(err, e, "cudaHostAlloc(%zu bytes)", bytes);
    return IB_OK;
}

void ib__gpu_host_free(void *ptr)
{
    if (ptr && cudaFreeHost(ptr) != cudaSuccess) (void)cudaGetLastError();
}

ib_status ib__gpu_spin(void *stream, uint64_t duration_ns, ib_error *err)
{
    CUDA_TRY(err, ib__launch_spin((cudaStream_t)stream, duration_ns), "launching the spin kernel");
    return IB_OK;
}

struct ib__gpu_graph {
    cudaGraphExec_t exec;
};

ib_status ib__gpu_capture_begin(void *stream, ib_error *err)
{
    CUDA_TRY(err, cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeRelaxed),
             "cudaStreamBeginCapture");
    return IB_OK;
}

ib_status ib__gpu_capture_end(void *stream, ib__gpu_graph **out, ib_error *err)
{
    *out = NULL;
    cudaGraph_t graph = NULL;
    /* Ends the capture even when it was invalidated (the graph is then NULL). */
    cudaError_t e = cudaStreamEndCapture((cudaStream_t)stream, &graph);
    if (e != cudaSuccess) {
        if (graph) (void)cudaGraphDestroy(graph);
        return ib__cuda_status(e, err, "cudaStreamEndCapture");
    }
    ib__gpu_graph *g = calloc(1, sizeof *g);
    if (!g) {
        (void)cudaGraphDestroy(graph);
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory");
    }
    e = cudaGraphInstantiateWithFlags(&g->exec, graph, 0);
    (void)cudaGraphDestroy(graph); /* the executable graph keeps what it needs */
    if (e != cudaSuccess) {
        free(g);
        return ib__cuda_status(e, err, "cudaGraphInstantiateWithFlags");
    }
    *out = g;
    return IB_OK;
}

ib_status ib__gpu_graph_launch(ib__gpu_graph *graph, void *stream, ib_error *err)
{
    CUDA_TRY(err, cudaGraphLaunch(graph->exec, (cudaStream_t)stream), "cudaGraphLaunch");
    return IB_OK;
}

void ib__gpu_graph_destroy(ib__gpu_graph *graph)
{
    if (!graph) return;
    if (cudaGraphExecDestroy(graph->exec) != cudaSuccess) (void)cudaGetLastError();
    free(graph);
}
