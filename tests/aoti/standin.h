/* What the stand-in libtorch and the stand-in model libraries share
 * (tests/aoti): the tensor behind an AtenTensorHandle, the type codes. */
#ifndef STANDIN_H
#define STANDIN_H

#include <stdint.h>

/* torch's ScalarType and DeviceType codes. */
enum { STANDIN_FLOAT16 = 5, STANDIN_FLOAT32 = 6, STANDIN_BFLOAT16 = 15 };
enum { STANDIN_CPU = 0, STANDIN_CUDA = 1 };

typedef struct standin_tensor {
    void *data;
    int64_t ndim;
    int64_t sizes[8];
    int32_t dtype, device_type;
} standin_tensor;

long standin_live_tensors(void);
int32_t aoti_torch_create_tensor_from_blob(void *data, int64_t ndim, const int64_t *sizes,
                                           const int64_t *strides, int64_t storage_offset, int32_t dtype,
                                           int32_t device_type, int32_t device_index, standin_tensor **ret);
int32_t aoti_torch_delete_tensor_object(standin_tensor *t);
int32_t aoti_torch_dtype_float32(void);
int32_t aoti_torch_dtype_float16(void);
int32_t aoti_torch_device_type_cpu(void);

#endif
