/* The keys of result files written when ONNX Runtime was the only runtime
 * (ort_legacy.c), apart from ort.h: a build without ONNX Runtime's headers
 * still reads them (ort_absent.c). */
#ifndef IB_BACKEND_ORT_LEGACY_H
#define IB_BACKEND_ORT_LEGACY_H

#include "backend/registry.h"

/* The legacy hook of the onnxruntime backend's hooks. */
extern const ib__legacy_result_keys ib__ort_legacy_keys;

#endif
