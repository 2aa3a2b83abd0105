/* ONNX Runtime's core library, loaded (dlopen) the first time it is needed,
 * not linked: what measures no model (compare, zoo, the other backends) runs
 * where it is absent, and a missing or broken library is one clear error
 * when a model is opened instead of a loader failure at start. Loaded once
 * per process; the outcome, success or failure, is kept. */
#define _GNU_SOURCE /* dladdr, dlmopen */
#include "backend/onnxruntime/ort.h"
#include "backend/registry.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The SONAME of the core library: found through the RUNPATH of the object
 * that loads it (the program or libinferbench.so: the library built
 * against, or the copy installed beside them), or LD_LIBRARY_PATH. */
#define DEFAULT_LIBRARY "libonnxruntime.so.1"

typedef const OrtApiBase *(ORT_API_CALL *api_base_fn)(void);

static pthread_mutex_t lib_mutex = PTHREAD_MUTEX_INITIALIZER;
static char lib_request[4096]; /* "" : DEFAULT_LIBRARY */
static bool lib_tried;
static api_base_fn lib_entry;
static char lib_error[512];

ib_status ib__ort_set_library(const char *path, ib_error *err)
{
    pthread_mutex_lock(&lib_mutex);
    bool same = !strcmp(lib_request, path ? path : "");
    bool tried = lib_tried && !same;
    if (!lib_tried) ib__strlcpy(lib_request, path ? path : "", sizeof lib_request);
    pthread_mutex_unlock(&lib_mutex);
    IB_FAIL_IF(tried, err, IB_ERR_INVALID_ARG,
               "a load of the ONNX Runtime library was tried already: set its path before the first "
               "model is opened");
    return IB_OK;
}

/* Loads the library and finds the entry point; the reason into lib_error on
 * failure. Global scope, as a linked library's symbols were: the execution
 * providers ONNX Runtime loads in turn may look its symbols up. dlmopen
 * into the base namespace is dlopen, but not intercepted by the
 * sanitizers: their dlopen calls from their own library, whose RUNPATH
 * (none) the loader then searches instead of ours. */
static void load(void)
{
    const char *name = lib_request[0] ? lib_request : DEFAULT_LIBRARY;
    void *handle = dlmopen(LM_ID_BASE, name, RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
        snprintf(lib_error, sizeof lib_error, "cannot load the ONNX Runtime library: %.400s", dlerror());
        return;
    }
    void *sym = dlsym(handle, "OrtGetApiBase");
    if (!sym) {
        snprintf(lib_error, sizeof lib_error, "%.400s is not ONNX Runtime: it has no OrtGetApiBase", name);
        dlclose(handle);
        return;
    }
    memcpy(&lib_entry, &sym, sizeof lib_entry); /* POSIX: data and function pointers convert */
}

ib_status ib__ort_api_base(const OrtApiBase **out, ib_error *err)
{
    pthread_mutex_lock(&lib_mutex);
    if (!lib_tried) load();
    lib_tried = true;
    api_base_fn entry = lib_entry;
    pthread_mutex_unlock(&lib_mutex);
    IB_FAIL_IF(!entry, err, IB_ERR_UNSUPPORTED, "%s", lib_error);
    *out = entry();
    IB_FAIL_IF(!*out, err, IB_ERR_UNSUPPORTED, "ONNX Runtime's OrtGetApiBase returned nothing");
    return IB_OK;
}

bool ib__ort_core_library(char *path, size_t cap)
{
    if (path && cap) path[0] = '\0';
    const OrtApiBase *base;
    if (ib__ort_api_base(&base, NULL) != IB_OK) return false;
    /* The API base lives in the core library's data: where it was loaded from. */
    Dl_info info;
    if (!dladdr((const void *)base, &info) || !info.dli_fname) return false;
    if (path) ib__strlcpy(path, info.dli_fname, cap);
    void *lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) return false;
    /* ONNX Runtime's export list names the entry point of each provider a
     * build enabled: only a CUDA build exports this one. */
    bool cuda_build = dlsym(lib, "OrtSessionOptionsAppendExecutionProvider_CUDA") != NULL;
    dlclose(lib);
    return cuda_build;
}

/* The registry's runtime hook for this backend: ONNX Runtime's version,
 * library and kind of build, "" when it cannot be loaded. */
void ib__ort_runtime_facts(ib_runtime_info *rt)
{
    const OrtApiBase *base;
    rt->version[0] = rt->library[0] = rt->build[0] = '\0';
    if (ib__ort_api_base(&base, NULL) != IB_OK) return;
    ib__strlcpy(rt->version, base->GetVersionString(), sizeof rt->version);
    bool cuda_build = ib__ort_core_library(rt->library, sizeof rt->library);
    ib__strlcpy(rt->build, cuda_build ? "cuda" : "cpu", sizeof rt->build);
}
