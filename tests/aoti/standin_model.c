/* A stand-in for an AOTInductor model library (the C interface of
 * torch/csrc/inductor/aoti_runtime/interface.h) with known behaviour, for
 * the aoti backend's tests. Built in variants (tests/CMakeLists.txt):
 *   STANDIN_DEVICE "cpu" or "cuda": the device it was "compiled" for;
 *     another is refused by CreateWithDevice, as a real model does;
 *   STANDIN_NEWER: needs a shim function this libtorch lacks (a model
 *     compiled by a newer PyTorch), so that loading it fails.
 * Unlike a real model library (whose runtime prints the reason of a
 * refusal on stderr) it refuses silently.
 * It needs "weights.bin" in the folder it is given (where a real model's
 * weights and kernels lie), takes STANDIN_INPUTS inputs (1) and gives
 * 2 outputs. Its inputs are float32, or float16 when STANDIN_HALF=1 (a model
 * exported in half). Each run takes its input handles (freeing them), checks them,
 * busy-waits STANDIN_DELAY_US (300), and fails at run STANDIN_FAIL_AT_RUN
 * (counting from 0; -1: never), as the environment says. Deleting the
 * container reports tensors never released on stderr ("standin: N tensors
 * leaked"). */
#include "standin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef STANDIN_NEWER
int32_t aoti_torch_from_a_newer_pytorch(void);
#endif

typedef struct container {
    long runs;
    long fail_at;
    double delay_us;
    size_t inputs;
    int32_t dtype; /* the inputs' */
} container;

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : fallback;
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int32_t AOTInductorModelContainerCreateWithDevice(container **out, size_t num_models, const char *device,
                                                  const char *cubin_dir)
{
#ifdef STANDIN_NEWER
    if (aoti_torch_from_a_newer_pytorch() != 0) return 1;
#endif
    if (num_models != 1 || strncmp(device, STANDIN_DEVICE, strlen(STANDIN_DEVICE)) != 0) return 1;
    char weights[1024];
    snprintf(weights, sizeof weights, "%s/weights.bin", cubin_dir ? cubin_dir : ".");
    FILE *f = fopen(weights, "rb");
    if (!f) return 1;
    fclose(f);
    container *c = calloc(1, sizeof *c);
    if (!c) return 1;
    c->fail_at = env_long("STANDIN_FAIL_AT_RUN", -1);
    c->delay_us = (double)env_long("STANDIN_DELAY_US", 300);
    c->inputs = (size_t)env_long("STANDIN_INPUTS", 1);
    c->dtype = env_long("STANDIN_HALF", 0) ? aoti_torch_dtype_float16() : aoti_torch_dtype_float32();
    *out = c;
    return 0;
}

int32_t AOTInductorModelContainerDelete(container *c)
{
    if (standin_live_tensors() != 0) fprintf(stderr, "standin: %ld tensors leaked\n", standin_live_tensors());
    free(c);
    return 0;
}

int32_t AOTInductorModelContainerGetNumInputs(container *c, size_t *n)
{
    *n = c->inputs;
    return 0;
}

int32_t AOTInductorModelContainerGetNumOutputs(container *c, size_t *n)
{
    (void)c;
    *n = 2;
    return 0;
}

/* The inputs are checked (a CPU tensor of the model's dtype, its first byte read:
 * under ASan a buffer already freed is caught) and taken. */
static int take_inputs(container *c, standin_tensor **in, size_t n)
{
    int bad = n != c->inputs;
    for (size_t i = 0; i < n; i++) {
        if (!in[i]) return 1;
        volatile unsigned char first = *(const unsigned char *)in[i]->data;
        (void)first;
        bad |= in[i]->dtype != c->dtype || in[i]->device_type != aoti_torch_device_type_cpu();
        aoti_torch_delete_tensor_object(in[i]);
    }
    return bad;
}

int32_t AOTInductorModelContainerRun(container *c, standin_tensor **in, size_t num_inputs,
                                     standin_tensor **out, size_t num_outputs, void *stream, void *proxy)
{
    (void)stream;
    (void)proxy;
    static float result;
    long run = c->runs++;
    if (take_inputs(c, in, num_inputs) || num_outputs != 2 || run == c->fail_at) return 1;
    double end = now_us() + c->delay_us;
    while (now_us() < end) {
    }
    int64_t one = 1;
    for (size_t i = 0; i < num_outputs; i++)
        if (aoti_torch_create_tensor_from_blob(&result, 1, &one, &one, 0, aoti_torch_dtype_float32(),
                                               aoti_torch_device_type_cpu(), 0, &out[i]) != 0)
            return 1;
    return 0;
}
