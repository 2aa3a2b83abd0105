/* A stand-in for libtorch's C shim (torch/csrc/inductor/aoti_torch/c/shim.h),
 * built by the tests as "libtorch.so": tensors are plain structs over the
 * caller's memory, counted so that a handle never released is reported by
 * the stand-in model when its container is deleted. */
#include "standin.h"

#include <stdlib.h>
#include <string.h>

static long live;

long standin_live_tensors(void) { return live; }

int32_t aoti_torch_dtype_float32(void) { return STANDIN_FLOAT32; }
int32_t aoti_torch_dtype_float16(void) { return STANDIN_FLOAT16; }
int32_t aoti_torch_dtype_bfloat16(void) { return STANDIN_BFLOAT16; }
int32_t aoti_torch_device_type_cpu(void) { return STANDIN_CPU; }
int32_t aoti_torch_device_type_cuda(void) { return STANDIN_CUDA; }

int32_t aoti_torch_create_tensor_from_blob(void *data, int64_t ndim, const int64_t *sizes,
                                           const int64_t *strides, int64_t storage_offset, int32_t dtype,
                                           int32_t device_type, int32_t device_index, standin_tensor **ret)
{
    (void)strides;
    (void)device_index;
    if (ndim < 0 || ndim > 8 || storage_offset != 0) return 1;
    standin_tensor *t = calloc(1, sizeof *t);
    if (!t) return 1;
    t->data = data;
    t->ndim = ndim;
    memcpy(t->sizes, sizes, (size_t)ndim * sizeof *sizes);
    t->dtype = dtype;
    t->device_type = device_type;
    live++;
    *ret = t;
    return 0;
}

int32_t aoti_torch_delete_tensor_object(standin_tensor *t)
{
    if (!t) return 1;
    live--;
    free(t);
    return 0;
}
