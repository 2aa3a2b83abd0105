/* The onnxruntime backend's public entry points in a build without it
 * (CMake found no ONNX Runtime headers, or IB_WITH_ONNXRUNTIME=OFF): this
 * file replaces the backend's others, the registry lists no such backend,
 * and what would open a model through it is refused with one message
 * saying how to get it. The library keeps the same API and ABI either way. */
#include "backend/workload.h"

#define ABSENT_MESSAGE                                                                                       \
    "this inferbench was built without the onnxruntime backend: rebuild it with ONNX Runtime's headers "     \
    "(cmake -DORT_ROOT=\"$(scripts/setup.sh)\", as make does), or measure with another backend "             \
    "(inferbench backends lists them)"

ib_status ib_workload_open_model(const char *model, const ib_model_options *opts, ib_workload **out,
                                 ib_error *err)
{
    (void)model;
    (void)opts;
    if (out) *out = NULL;
    return ib__fail(err, IB_ERR_UNSUPPORTED, "%s", ABSENT_MESSAGE);
}

ib_status ib_set_onnxruntime_library(const char *path, ib_error *err)
{
    (void)path;
    return ib__fail(err, IB_ERR_UNSUPPORTED, "%s", ABSENT_MESSAGE);
}
