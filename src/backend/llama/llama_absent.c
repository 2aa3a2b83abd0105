/* The llama backend in a build without it (CMake found no llama.cpp
 * headers in LLAMA_ROOT, or IB_WITH_LLAMA=OFF): this file replaces the
 * backend's others, and a generative model is refused with one line
 * saying how to get it. */
#include "core/common.h"
#include "workload/generation.h"

ib_status ib__gen_open_llama(const ib__gen_open_args *a, ib__gen **out, ib_error *err)
{
    (void)a;
    *out = NULL;
    return ib__fail(err, IB_ERR_UNSUPPORTED,
                    "this inferbench was built without the llama backend: run scripts/setup.sh (it installs "
                    "llama.cpp's headers into .cache/) and rebuild");
}
