/* The llama backend in a build without it (CMake found no llama.cpp
 * headers in LLAMA_ROOT, or IB_WITH_LLAMA=OFF): this file replaces the
 * backend's others, and a generative model is refused with one line
 * saying how to get it. */
#include "base/common.h"
#include "backend/registry.h"
#include "workload/generation.h"

#define WHY                                                                                                  \
    "this inferbench was built without the llama backend: run scripts/setup.sh (it installs llama.cpp's "    \
    "headers into .cache/) and rebuild"

const ib_gen_backend ib__backend_llama_gen = {
    .name = "llama",
    .description = "generative models on llama.cpp: not in this build (run scripts/setup.sh and rebuild)",
};

ib_status ib_zoo_export_gguf(const char *name, const char *path, const char *library_dir,
                             const char *cache_dir, char *note, size_t note_cap, ib_error *err)
{
    (void)name, (void)path, (void)library_dir, (void)cache_dir;
    if (note && note_cap) note[0] = '\0';
    return ib__fail(err, IB_ERR_UNSUPPORTED, WHY);
}

ib_status ib__backend_llama_gen_open(const ib__gen_open_args *a, ib__gen **out, ib_error *err)
{
    (void)a;
    *out = NULL;
    return ib__fail(err, IB_ERR_UNSUPPORTED, WHY);
}
