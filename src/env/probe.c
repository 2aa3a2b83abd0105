/* The environment without a workload: what `inferbench info` shows and what
 * tests ask to know whether a GPU is there. */
#include "env/env.h"
#include "gpu/gpu.h"

#include <string.h>

void ib_env_probe(int device_id, ib_env *env, bool *has_gpu)
{
    memset(env, 0, sizeof *env);
    *has_gpu = ib__gpu_available(device_id);
    /* The capture reads the device from a workload; describe one. */
    ib_workload w = { .device_id = device_id, .caps = *has_gpu ? IB_CAP_GPU : 0 };
    ib__env_capture(env, &w);
}

/* A host holds at most this many (cudaGetDeviceCount's answer is bounded
 * here so that a broken driver cannot make the loop long). */
#define MAX_CUDA_DEVICES 64

size_t ib_cuda_devices(char (*names)[IB_DEVICE_NAME_LEN], size_t cap)
{
    size_t n = 0;
    while (n < MAX_CUDA_DEVICES && ib__gpu_available((int)n)) {
        if (n < cap) {
            ib__gpu_props props;
            if (ib__gpu_props_get((int)n, &props, NULL) != IB_OK) props.name[0] = '\0';
            ib__strlcpy(names[n], props.name[0] ? props.name : "unnamed GPU", IB_DEVICE_NAME_LEN);
        }
        n++;
    }
    return n;
}
