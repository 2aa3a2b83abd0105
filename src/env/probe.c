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
