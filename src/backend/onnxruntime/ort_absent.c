/* The onnxruntime backend in a build without it (CMake found no ONNX
 * Runtime headers, or IB_WITH_ONNXRUNTIME=OFF): this file replaces the
 * backend's others but ort_legacy.c (which needs no ONNX Runtime header),
 * the registry lists no such table, and a model asked of it (the default
 * backend) is refused with one message saying how to get it. The library
 * keeps the same API and ABI either way. */
#include "backend/onnxruntime/ort_legacy.h"
#include "backend/registry.h"

const ib__backend_absence ib__onnxruntime_absence = {
    .name = "onnxruntime",
    .why =
        "this inferbench was built without the onnxruntime backend: rebuild it with ONNX Runtime's headers "
        "(cmake -DORT_ROOT=\"$(scripts/setup.sh)\", as make does), or measure with another backend "
        "(inferbench backends lists them)",
};

/* Old result files are still read (compare needs no runtime). */
const ib__backend_hooks ib__onnxruntime_hooks = { .legacy = &ib__ort_legacy_keys };
