/* Fuzz target: serialized ONNX models, the outside input the tool reads
 * most. Every input goes through ib_onnx_count_initializer_elements (our
 * protobuf-c reader); inputs below 64 KB are also opened as a model on the
 * CPU (ONNX Runtime's parser and our reading of the graph's inputs,
 * outputs and dimensions, input allocation and fill), then destroyed.
 *
 * There is no public in-memory path to a session, so the bytes go through a
 * file in /dev/shm (memory, not disk; /tmp where there is none). ONNX
 * Runtime is a prebuilt library without coverage instrumentation: the
 * fuzzer steers by our code's coverage, and a crash or hang inside ONNX
 * Runtime on some input is still a finding (reported with the input). With
 * a session per valid model this target runs at hundreds to a couple of
 * thousand inputs a second, slow for a fuzzer but the only way to reach the
 * code reading what ONNX Runtime says of a model. The host memory cap keeps
 * a model that declares huge input dimensions from allocating them: over
 * the cap is an out-of-memory status, which the fuzzer accepts. */
#include "fuzz.h"
#include "inferbench.h"

#include <string.h>
#include <unistd.h>

#define OPEN_BELOW_BYTES (64 * 1024)
#define HOST_CAP_BYTES ((size_t)64 << 20)

/* /dev/shm where there is one (memory, not disk), else /tmp. */
static const char *scratch_path(void)
{
    static char path[64];
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/ib-fuzz-onnx-%ld.onnx", dir, (long)getpid());
    }
    return path;
}

static int write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t n = size ? fwrite(data, 1, size, f) : 0;
    return (fclose(f) == 0 && n == size) ? 0 : -1;
}

static void check_message(ib_status st, const ib_error *err)
{
    if (st == IB_OK) return;
    size_t len = strnlen(err->message, sizeof err->message);
    FUZZ_ASSERT(len > 0 && len < sizeof err->message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ib_error err;
    memset(&err, 0x5a, sizeof err);
    int64_t count = -1;
    ib_status st = ib_onnx_count_initializer_elements(data, size, &count, &err);
    FUZZ_ASSERT(st == IB_OK || st == IB_ERR_MODEL);
    FUZZ_ASSERT(st == IB_OK ? count >= 0 : count == 0);
    check_message(st, &err);

    if (size >= OPEN_BELOW_BYTES) return 0;
    const char *path = scratch_path();
    if (write_file(path, data, size) != 0) return 0;

    ib_model_options opts;
    ib_model_options_init(&opts);
    opts.device = IB_DEVICE_CPU;
    static const ib_backend_option one_thread = { "threads", "1" };
    opts.options = &one_thread;
    opts.n_options = 1;
    opts.host_memory_limit_bytes = HOST_CAP_BYTES;
    ib_workload *w = NULL;
    memset(&err, 0x5a, sizeof err);
    st = ib_workload_open_model(path, &opts, &w, &err);
    check_message(st, &err);
    FUZZ_ASSERT((st == IB_OK) == (w != NULL));
    if (w) {
        const ib_workload_info *info = ib_workload_get_info(w);
        FUZZ_ASSERT(info->n_inputs >= 0 && info->n_inputs <= IB_MAX_TENSORS);
        FUZZ_ASSERT(info->n_outputs >= 0 && info->n_outputs <= IB_MAX_TENSORS);
        for (int i = 0; i < info->n_inputs; i++) {
            FUZZ_ASSERT(info->inputs[i].rank >= 0 && info->inputs[i].rank <= IB_MAX_RANK);
            for (int d = 0; d < info->inputs[i].rank; d++) FUZZ_ASSERT(info->inputs[i].dims[d] >= 0);
        }
    }
    ib_workload_destroy(w);
    unlink(path);
    return 0;
}
