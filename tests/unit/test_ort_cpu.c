/* The ONNX Runtime workload on the CPU provider: opening, information,
 * runs, batches, copies, reopening, and every refusal with its message. */
#include "check.h"
#include "backend/onnxruntime/ort.h"
#include "base/numeric.h"
#include "gpu/gpu.h"
#include "onnx_fixtures.h"

#include <stdlib.h>
#include <string.h>

/* tests/CMakeLists.txt builds each test from its own file and check.c: the
 * fixtures come in here until the build links them to the tests. */

static char *dir;

/* Sanitizer builds: ONNX Runtime loses a few bytes of its own while the
 * environment is created (the environment lives to the end by design). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libonnxruntime.so\n"; }

static ib_model_options cpu_options(void)
{
    ib_model_options o;
    ib_model_options_init(&o);
    static const ib_backend_option one_thread = { "threads", "1" };
    o.device = IB_DEVICE_CPU;
    o.options = &one_thread;
    o.n_options = 1;
    return o;
}

static bool contains(const char *s, const char *part)
{
    if (strstr(s, part)) return true;
    fprintf(stderr, "  message '%s' lacks '%s'\n", s, part);
    return false;
}

/* Opens path with opts and expects failure `want` with a one-line message
 * holding each of the parts. */
static void check_open_fails(const char *path, const ib_model_options *opts, ib_status want,
                             const char *part1, const char *part2)
{
    ib_workload *w = (ib_workload *)1;
    ib_error err = { "" };
    ib_status st = ib_workload_open_model(path, opts, &w, &err);
    CHECK_EQ_INT(st, want);
    CHECK(w == NULL);
    CHECK(err.message[0] != '\0');
    CHECK(strchr(err.message, '\n') == NULL);
    if (getenv("IB_TEST_VERBOSE")) fprintf(stderr, "  [%s] %s\n", ib_status_str(st), err.message);
    if (part1) CHECK(contains(err.message, part1));
    if (part2) CHECK(contains(err.message, part2));
    if (st == IB_OK) ib_workload_destroy(w);
}

static void test_open_and_info(void)
{
    char *path = fx_write_model(dir, "matmul");
    ib_model_options o = cpu_options();
    ib_workload *w = NULL;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (!w) {
        fprintf(stderr, "  open: %s\n", err.message);
        free(path);
        return;
    }
    const ib_workload_info *info = ib_workload_get_info(w);
    CHECK(strcmp(info->model, path) == 0);
    CHECK(strcmp(info->provider, "CPUExecutionProvider") == 0);
    CHECK_EQ_INT(info->device, IB_DEVICE_CPU);
    CHECK_EQ_INT(info->batch, 1);
    CHECK(info->has_batch_dim);
    CHECK_EQ_INT(info->n_inputs, 1);
    CHECK_EQ_INT(info->n_outputs, 1);
    CHECK(strcmp(info->inputs[0].name, "x") == 0);
    CHECK(strcmp(info->inputs[0].type, "float32") == 0);
    CHECK_EQ_INT(info->inputs[0].rank, 2);
    CHECK_EQ_INT(info->inputs[0].dims[0], 1);
    CHECK_EQ_INT(info->inputs[0].dims[1], 16);
    CHECK(strcmp(info->inputs[0].dim_names[0], "batch") == 0);
    CHECK(strcmp(info->inputs[0].dim_names[1], "") == 0);
    CHECK(strcmp(info->outputs[0].name, "y") == 0);
    CHECK_EQ_INT(info->outputs[0].dims[0], 1);
    CHECK_EQ_INT(info->outputs[0].dims[1], 4);
    CHECK(info->flops_per_item == 0);
    CHECK(w->stream == NULL);
    CHECK(w->own_timer == NULL && !ib__workload_can(w, IB_CAP_DEVICE_TIMING));
    CHECK(ib__workload_can(w, IB_CAP_HOST_INPUT_RUN | IB_CAP_REOPEN | IB_CAP_BATCH_DIM));
    CHECK(!(w->caps & (IB_CAP_GPU | IB_CAP_CUDA_STREAM | IB_CAP_ASYNC_RUN)));
    CHECK(w->clock.now_ms != NULL);
    CHECK(w->ops->set_run_sync == NULL);

    CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
    CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);

    /* 1 -> 8: dims follow, runs work */
    CHECK_EQ_INT(ib_workload_set_batch(w, 8, &err), IB_OK);
    CHECK_EQ_INT(info->batch, 8);
    CHECK_EQ_INT(info->inputs[0].dims[0], 8);
    CHECK_EQ_INT(info->outputs[0].dims[0], 8);
    CHECK_EQ_INT(info->outputs[0].dims[1], 4);
    CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
    CHECK_EQ_INT(ib_workload_set_batch(w, 3, &err), IB_OK);
    CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);

    /* the naive way works too, also after a batch change */
    CHECK_EQ_INT(w->ops->run_with_copies(w, &err), IB_OK);
    CHECK_EQ_INT(ib_workload_set_batch(w, 5, &err), IB_OK);
    CHECK_EQ_INT(w->ops->run_with_copies(w, &err), IB_OK);
    CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);

    /* reopen: same batch, still runs */
    CHECK_EQ_INT(w->ops->reopen(w, &err), IB_OK);
    CHECK_EQ_INT(info->batch, 5);
    CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
    CHECK_EQ_INT(w->ops->run_with_copies(w, &err), IB_OK);
    CHECK_EQ_INT(ib_workload_set_batch(w, 2, &err), IB_OK);
    CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);

    CHECK_EQ_INT(ib_workload_set_batch(w, 0, &err), IB_ERR_INVALID_ARG);
    ib_workload_destroy(w);
    free(path);
}

/* Opening with options NULL uses the defaults (AUTO: CPU here). */
static void test_default_options(void)
{
    char *path = fx_write_model(dir, "matmul");
    ib_workload *w = NULL;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_workload_open_model(path, NULL, &w, &err), IB_OK);
    if (w) {
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        ib_workload_destroy(w);
    }
    free(path);
}

static void test_fixed_batch(void)
{
    char *path = fx_write_model(dir, "fixed");
    ib_model_options o = cpu_options();
    /* a batch other than the model's is refused, not ignored */
    o.batch = 4;
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "fixed batch of 2", "--batch 4 cannot apply");
    o.batch = 2; /* its own batch, asked: fine */
    ib_workload *w = NULL;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        const ib_workload_info *info = ib_workload_get_info(w);
        CHECK(!info->has_batch_dim);
        CHECK_EQ_INT(info->batch, 2);
        CHECK_EQ_INT(info->inputs[0].dims[0], 2);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        CHECK_EQ_INT(ib_workload_set_batch(w, 2, &err), IB_OK);
        CHECK_EQ_INT(ib_workload_set_batch(w, 8, &err), IB_ERR_UNSUPPORTED);
        CHECK(contains(err.message, "fixed batch of 2"));
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK); /* still usable */
        ib_workload_destroy(w);
    }
    free(path);
}

static void test_symbolic_dims(void)
{
    char *path = fx_write_model(dir, "seq");
    ib_model_options o = cpu_options();
    /* "seq" has no value */
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "input 'x'", "symbolic 'seq' (dimension 2)");
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "--shape x:1xNx16", NULL);

    ib_shape_override s[2];
    ib_error err = { "" };
    CHECK_EQ_INT(ib_shape_parse("x:1x32x16", &s[0], &err), IB_OK);
    o.shapes = s;
    o.n_shapes = 1;
    ib_workload *w = NULL;
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        const ib_workload_info *info = ib_workload_get_info(w);
        CHECK_EQ_INT(info->inputs[0].dims[1], 32);
        CHECK(strcmp(info->inputs[0].dim_names[1], "seq") == 0);
        CHECK_EQ_INT(info->outputs[0].dims[1], 32); /* resolved by name */
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        CHECK_EQ_INT(ib_workload_set_batch(w, 4, &err), IB_OK);
        CHECK_EQ_INT(info->inputs[0].dims[0], 4);
        CHECK_EQ_INT(info->inputs[0].dims[1], 32);
        CHECK_EQ_INT(info->outputs[0].dims[0], 4);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        ib_workload_destroy(w);
    }

    /* without --batch, the batch dimension in --shape sets the batch */
    CHECK_EQ_INT(ib_shape_parse("x:8x32x16", &s[0], &err), IB_OK);
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        CHECK_EQ_INT(ib_workload_get_info(w)->batch, 8);
        CHECK_EQ_INT(ib_workload_get_info(w)->inputs[0].dims[0], 8);
        ib_workload_destroy(w);
    }
    /* an explicit --batch that agrees is fine, one that does not is not */
    o.batch = 8;
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) ib_workload_destroy(w);
    o.batch = 3;
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "the value 8, but --batch is 3", NULL);
    o.batch = 1;

    /* a fixed dimension cannot be changed */
    CHECK_EQ_INT(ib_shape_parse("x:1x32x8", &s[0], &err), IB_OK);
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "fixes it at 16", NULL);
    /* rank mismatch */
    CHECK_EQ_INT(ib_shape_parse("x:1x32", &s[0], &err), IB_OK);
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "2 dimension(s), but it has 3", "float32[batch,seq,16]");
    /* unknown input */
    CHECK_EQ_INT(ib_shape_parse("input:1x32x16", &s[0], &err), IB_OK);
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "'input'", "inputs are: x");
    free(path);
}

/* Two inputs share "seq": setting it on one sets it on both. */
static void test_int64_inputs(void)
{
    char *path = fx_write_model(dir, "ids");
    ib_model_options o = cpu_options();
    ib_shape_override s;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_shape_parse("ids:1x64", &s, &err), IB_OK);
    o.shapes = &s;
    o.n_shapes = 1;
    ib_workload *w = NULL;
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        const ib_workload_info *info = ib_workload_get_info(w);
        CHECK_EQ_INT(info->n_inputs, 2);
        CHECK(strcmp(info->inputs[0].type, "int64") == 0);
        CHECK_EQ_INT(info->inputs[1].dims[1], 64);
        CHECK_EQ_INT(info->outputs[0].dims[1], 64);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        CHECK_EQ_INT(ib_workload_set_batch(w, 16, &err), IB_OK);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        CHECK_EQ_INT(w->ops->run_with_copies(w, &err), IB_OK);
        ib_workload_destroy(w);
    }
    free(path);
}

static void test_float16_input(void)
{
    char *path = fx_write_model(dir, "half");
    ib_model_options o = cpu_options();
    o.batch = 3;
    ib_workload *w = NULL;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        CHECK(strcmp(ib_workload_get_info(w)->inputs[0].type, "float16") == 0);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        ib_workload_destroy(w);
    }
    free(path);
}

/* An unnamed symbolic first dimension is still the batch. */
static void test_unnamed_batch(void)
{
    char *path = fx_write_model(dir, "unnamed");
    ib_model_options o = cpu_options();
    o.batch = 6;
    ib_workload *w = NULL;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        const ib_workload_info *info = ib_workload_get_info(w);
        CHECK(info->has_batch_dim);
        CHECK_EQ_INT(info->inputs[0].dims[0], 6);
        CHECK_EQ_INT(info->outputs[0].dims[0], 6);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        ib_workload_destroy(w);
    }
    free(path);
}

static void test_bad_files(void)
{
    ib_model_options o = cpu_options();
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/missing.onnx", dir);
    check_open_fails(missing, &o, IB_ERR_IO, "cannot open model", "No such file");
    check_open_fails(dir, &o, IB_ERR_IO, "cannot open model", "Is a directory");

    char *empty = fx_write(dir, "empty.onnx", "", 0);
    check_open_fails(empty, &o, IB_ERR_MODEL, "is empty", NULL);

    const char garbage[] = "this is not an ONNX model, only some text\n\x01\x02\xff";
    char *junk = fx_write(dir, "garbage.onnx", garbage, sizeof garbage - 1);
    check_open_fails(junk, &o, IB_ERR_MODEL, "cannot load model", "garbage.onnx");

    size_t len = 0;
    uint8_t *bytes = fx_model_bytes("matmul", &len);
    char *cut = fx_write(dir, "truncated.onnx", bytes, len * 2 / 3);
    check_open_fails(cut, &o, IB_ERR_MODEL, "cannot load model", NULL);

    char *strings = fx_write_model(dir, "strings");
    check_open_fails(strings, &o, IB_ERR_UNSUPPORTED, "input 's'", "string");

    check_open_fails("", &o, IB_ERR_INVALID_ARG, "no model", NULL);
    check_open_fails("zoo:no-such-model", &o, IB_ERR_INVALID_ARG, "unknown zoo model", NULL);
    /* A generative model of the zoo: which command measures it. */
    check_open_fails("zoo:llama-tiny", &o, IB_ERR_INVALID_ARG,
                     "zoo:llama-tiny is a generative model: inferbench generate", NULL);
    check_open_fails("zoo:mlp?int8", &o, IB_ERR_INVALID_ARG, "?fp16", NULL);
    free(bytes);
    free(empty);
    free(junk);
    free(cut);
    free(strings);
}

static void test_bad_options(void)
{
    char *path = fx_write_model(dir, "matmul");
    ib_model_options o = cpu_options();
    o.batch = -1;
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "batch -1", NULL);
    const ib_backend_option fast = { "cudnn_search", "FAST" }, unknown = { "x", "1" };
    o = cpu_options();
    o.options = &fast;
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "cudnn_search=FAST", "EXHAUSTIVE");
    o.options = &unknown;
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "unknown option 'x'", "threads");
    o = cpu_options();
    o.device_id = -1;
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "device id", NULL);

    /* no GPU on this machine (or a build without CUDA) */
    o = cpu_options();
    o.device = IB_DEVICE_CUDA;
    if (!ib__gpu_available(0))
        check_open_fails(path, &o, IB_ERR_NO_DEVICE, "--device cuda: no usable CUDA GPU", NULL);
    free(path);
}

/* The host cap: a batch whose inputs and outputs pass it is out of memory,
 * and the workload goes on at the batch it had, and at smaller ones. */
static void test_host_memory_cap(void)
{
    char *path = fx_write_model(dir, "matmul");
    ib_model_options o = cpu_options();
    /* per item: 16 + 4 floats = 80 bytes; cap 8000 bytes = 100 items */
    o.host_memory_limit_bytes = 8000;
    ib_workload *w = NULL;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        CHECK_EQ_INT(ib_workload_set_batch(w, 100, &err), IB_OK);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        CHECK_EQ_INT(ib_workload_set_batch(w, 101, &err), IB_ERR_DEVICE_OOM);
        CHECK(contains(err.message, "at batch 101 needs about"));
        CHECK(contains(err.message, "limit of 8000 bytes (--memory-cap-mb sets it)"));
        CHECK_EQ_INT(ib_workload_get_info(w)->batch, 100);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        CHECK_EQ_INT(ib_workload_set_batch(w, 1 << 20, &err), IB_ERR_DEVICE_OOM);
        CHECK_EQ_INT(ib_workload_set_batch(w, 7, &err), IB_OK);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        ib_workload_destroy(w);
    }
    o.batch = 1000;
    check_open_fails(path, &o, IB_ERR_DEVICE_OOM,
                     "batch 1000 needs about 80000 bytes of host memory for its inputs and outputs",
                     "limit of 8000 bytes");

    /* no cap: half of the machine's memory is the limit (2^31 items of 80
     * bytes is 172 GB), so the search never gets the process killed */
    o = cpu_options();
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        CHECK_EQ_INT(ib_workload_set_batch(w, (int64_t)1 << 31, &err), IB_ERR_DEVICE_OOM);
        CHECK(contains(err.message, "half of this machine's memory (--memory-cap-mb sets another)"));
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        ib_workload_destroy(w);
    }
    free(path);
}

/* A run that ORT refuses gives RUNTIME with ORT's message; the workload
 * goes on. Two overrides that disagree on "seq" make Add fail. */
static void test_run_failure(void)
{
    char *path = fx_write_model(dir, "ids");
    ib_model_options o = cpu_options();
    ib_shape_override s[2];
    ib_error err = { "" };
    CHECK_EQ_INT(ib_shape_parse("ids:1x64", &s[0], &err), IB_OK);
    CHECK_EQ_INT(ib_shape_parse("mask:1x32", &s[1], &err), IB_OK);
    o.shapes = s;
    o.n_shapes = 2;
    ib_workload *w = NULL;
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        CHECK_EQ_INT(w->ops->run(w, &err), IB_ERR_RUNTIME);
        CHECK(contains(err.message, "failed to run at batch 1"));
        CHECK(strchr(err.message, '\n') == NULL);
        ib_workload_destroy(w);
    }
    free(path);
}

/* A zoo model: built in memory, its dimension defaults and FLOPs known. */
static void test_zoo(void)
{
    ib_model_options o = cpu_options();
    o.batch = 2;
    const char *specs[] = { "zoo:mlp", "zoo:mlp?fp16" };
    for (int k = 0; k < 2; k++) {
        ib_workload *w = NULL;
        ib_error err = { "" };
        CHECK_EQ_INT(ib_workload_open_model(specs[k], &o, &w, &err), IB_OK);
        if (!w) {
            fprintf(stderr, "  %s: %s\n", specs[k], err.message);
            continue;
        }
        const ib_workload_info *info = ib_workload_get_info(w);
        CHECK(strcmp(info->model, specs[k]) == 0);
        CHECK(info->has_batch_dim);
        CHECK_EQ_INT(info->inputs[0].dims[0], 2);
        CHECK(strcmp(info->inputs[0].type, k ? "float16" : "float32") == 0);
        /* the fp16 model's arithmetic is its own, not the runtime's fp32 */
        CHECK(strcmp(info->math, k ? "fp16" : "fp32") == 0);
        CHECK(info->math_of_model == (k == 1) && info->math_default == (k == 0));
        CHECK_NEAR(info->flops_per_item, ib_zoo_find("mlp")->gflops_per_item * 1e9, 1e-3);
        CHECK(info->flops_per_item > 0);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        CHECK_EQ_INT(w->ops->reopen(w, &err), IB_OK);
        CHECK_EQ_INT(ib_workload_set_batch(w, 32, &err), IB_OK);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        ib_workload_destroy(w);
    }
}

static void test_dim_defaults(void)
{
    ib__dim_defaults d;
    ib_error err = { "" };
    CHECK_EQ_INT(ib__dim_defaults_parse("sequence=128", &d, &err), IB_OK);
    CHECK_EQ_INT(d.n, 1);
    CHECK(strcmp(d.names[0], "sequence") == 0);
    CHECK_EQ_INT(d.values[0], 128);
    CHECK_EQ_INT(ib__dim_defaults_parse("a=1, b=2;c=3", &d, &err), IB_OK);
    CHECK_EQ_INT(d.n, 3);
    CHECK_EQ_INT(d.values[2], 3);
    CHECK_EQ_INT(ib__dim_defaults_parse("", &d, &err), IB_OK);
    CHECK_EQ_INT(d.n, 0);
    CHECK_EQ_INT(ib__dim_defaults_parse(NULL, &d, &err), IB_OK);
    CHECK(ib__dim_defaults_parse("a=", &d, &err) != IB_OK);
    CHECK(ib__dim_defaults_parse("=3", &d, &err) != IB_OK);
    CHECK(ib__dim_defaults_parse("a=0", &d, &err) != IB_OK);
    CHECK(ib__dim_defaults_parse("a=3x", &d, &err) != IB_OK);
}

static void test_classify(void)
{
    CHECK_EQ_INT(ib__ort_classify("CUDA failure 2: out of memory ; GPU=0", IB_ERR_RUNTIME),
                 IB_ERR_DEVICE_OOM);
    CHECK_EQ_INT(
        ib__ort_classify("Failed to allocate memory for requested buffer of size 123", IB_ERR_RUNTIME),
        IB_ERR_DEVICE_OOM);
    CHECK_EQ_INT(ib__ort_classify("BFCArena::AllocateRawInternal Available memory of 0 is "
                                  "smaller than requested bytes of 4096",
                                  IB_ERR_RUNTIME),
                 IB_ERR_DEVICE_OOM);
    CHECK_EQ_INT(ib__ort_classify("CUDNN failure 4: CUDNN_STATUS_ALLOC_FAILED", IB_ERR_RUNTIME),
                 IB_ERR_DEVICE_OOM);
    CHECK_EQ_INT(ib__ort_classify("CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED", IB_ERR_MODEL),
                 IB_ERR_DEVICE_OOM);
    CHECK_EQ_INT(
        ib__ort_classify("CUDA failure 700: an illegal memory access was encountered", IB_ERR_RUNTIME),
        IB_ERR_DEVICE_LOST);
    CHECK_EQ_INT(ib__ort_classify("Non-zero status code returned while running Add node.", IB_ERR_RUNTIME),
                 IB_ERR_RUNTIME);
    /* the runtime refusing a size: the batch search's limit above batch 1 */
    CHECK_EQ_INT(ib__ort_classify("CUDNN failure 9: CUDNN_STATUS_NOT_SUPPORTED ; GPU=0", IB_ERR_RUNTIME),
                 IB_ERR_UNSUPPORTED);
    CHECK_EQ_INT(ib__ort_classify("CUDA failure 9: invalid configuration argument", IB_ERR_RUNTIME),
                 IB_ERR_UNSUPPORTED);
    CHECK_EQ_INT(ib__ort_classify("Attempting to broadcast an axis by a dimension other than 1. "
                                  "2 by 3",
                                  IB_ERR_RUNTIME),
                 IB_ERR_RUNTIME);
    CHECK_EQ_INT(ib__ort_classify(NULL, IB_ERR_MODEL), IB_ERR_MODEL);
}

/* An input declaring no shape (not even a rank) is not a scalar: it needs
 * --shape, which gives its rank and dimensions. */
static void test_unranked_input(void)
{
    char *path = fx_write_model(dir, "unranked");
    ib_model_options o = cpu_options();
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "input 'x' (float32) declares no shape, not even a rank",
                     "--shape x:");
    ib_shape_override s;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_shape_parse("x:4x5", &s, &err), IB_OK);
    o.shapes = &s;
    o.n_shapes = 1;
    ib_workload *w = NULL;
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        const ib_workload_info *info = ib_workload_get_info(w);
        CHECK_EQ_INT(info->inputs[0].rank, 2);
        CHECK_EQ_INT(info->inputs[0].dims[0], 4);
        CHECK_EQ_INT(info->inputs[0].dims[1], 5);
        CHECK(!info->has_batch_dim);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        ib_workload_destroy(w);
    }
    free(path);
}

/* An unnamed dimension of a second input: the error names the input and the
 * dimension; set by --shape, it stays fixed, so a model that needs it to
 * follow the batch fails at batch 2 as a runtime error (not a size limit:
 * the batch search must report it, not stop at batch 1). */
static void test_unnamed_dim_in_second_input(void)
{
    char *path = fx_write_model(dir, "state");
    ib_model_options o = cpu_options();
    check_open_fails(path, &o, IB_ERR_INVALID_ARG, "input 's' (float32[1,?,8]) has dimension 2",
                     "--shape s:1xNx8");
    ib_shape_override s;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_shape_parse("s:1x3x8", &s, &err), IB_OK);
    o.shapes = &s;
    o.n_shapes = 1;
    ib_workload *w = NULL;
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        CHECK_EQ_INT(ib_workload_set_batch(w, 2, &err), IB_OK);
        CHECK_EQ_INT(w->ops->run(w, &err), IB_ERR_RUNTIME);
        CHECK(contains(err.message, "broadcast"));
        ib_workload_destroy(w);
    }
    free(path);
}

/* The host cap bounds ONNX Runtime's own memory: a model whose input is
 * small (400 KB) but whose intermediate is 4096 times larger (1.6 GB) ends
 * its run with the memory it needs and the limit, before touching it. */
static void test_host_arena_cap(void)
{
    char *path = fx_write_model(dir, "widen");
    ib_model_options o = cpu_options();
    ib_shape_override s;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_shape_parse("x:1x100000x1", &s, &err), IB_OK);
    o.shapes = &s;
    o.n_shapes = 1;
    o.host_memory_limit_bytes = (size_t)64 << 20;
    ib_workload *w = NULL;
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        CHECK_EQ_INT(w->ops->run(w, &err), IB_ERR_DEVICE_OOM);
        CHECK(contains(err.message, "model"));
        CHECK(contains(err.message, "at batch 1 needs about 1563 MB of host memory, more than the "
                                    "limit of 64.0 MB (--memory-cap-mb sets it)"));
        /* the workload recovers (the session and its arena made anew) */
        CHECK_EQ_INT(w->ops->reopen(w, &err), IB_OK);
        ib_workload_destroy(w);
    }
    /* within the cap the same model runs */
    CHECK_EQ_INT(ib_shape_parse("x:1x1000x1", &s, &err), IB_OK);
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
        ib_workload_destroy(w);
    }
    free(path);
}

static void test_fill(void)
{
    float f[1000];
    ib__ort_fill(f, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, 1000, 42, 0);
    double lo = 1, hi = -1;
    for (int i = 0; i < 1000; i++) {
        lo = f[i] < lo ? f[i] : lo;
        hi = f[i] > hi ? f[i] : hi;
    }
    CHECK(lo >= -1 && lo < -0.9);
    CHECK(hi <= 1 && hi > 0.9);
    float g[1000];
    ib__ort_fill(g, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, 1000, 42, 0);
    CHECK(memcmp(f, g, sizeof f) == 0); /* deterministic */
    /* in chunks: the same numbers */
    ib__ort_fill(g, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, 300, 42, 0);
    ib__ort_fill(g + 300, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, 700, 42, 300);
    CHECK(memcmp(f, g, sizeof f) == 0);
    ib__ort_fill(g, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, 1000, 43, 0);
    CHECK(memcmp(f, g, sizeof f) != 0);

    int64_t ids[1000];
    ib__ort_fill(ids, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 1000, 7, 0);
    int ones = 0, bad = 0;
    for (int i = 0; i < 1000; i++) {
        ones += ids[i] == 1;
        bad += ids[i] != 0 && ids[i] != 1;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(ones > 400 && ones < 600);

    CHECK_EQ_INT(ib__float_to_half(0.0f), 0x0000);
    CHECK_EQ_INT(ib__float_to_half(1.0f), 0x3C00);
    CHECK_EQ_INT(ib__float_to_half(-1.0f), 0xBC00);
    CHECK_EQ_INT(ib__float_to_half(0.5f), 0x3800);
    CHECK_EQ_INT(ib__float_to_half(65504.0f), 0x7BFF);
    CHECK_EQ_INT(ib__float_to_half(1e6f), 0x7C00);
    CHECK_EQ_INT(ib__float_to_half(5.9604645e-8f), 0x0001); /* smallest subnormal */
    CHECK_EQ_INT(ib__float_to_half(4.4703484e-8f), 0x0001); /* 1.5 x 2^-25 rounds up to it */
    CHECK_EQ_INT(ib__float_to_half(2.9802322e-8f), 0x0000); /* 2^-25: the tie goes to even 0 */
    CHECK_EQ_INT(ib__float_to_half(1.0009765625f), 0x3C01);
    CHECK_EQ_INT(ib__float_to_half(1.00048828125f), 0x3C00); /* tie: to even */
    CHECK_EQ_INT(ib__float_to_half(1.00146484375f), 0x3C02); /* tie above an odd half: up to even */
    CHECK_EQ_INT(ib__float_to_half(1.00146472454071044921875f), 0x3C01); /* 2^-23 under that tie: down */
    CHECK_EQ_INT(ib__float_to_half(1.00048840045928955078125f), 0x3C01); /* 2^-23 over the even tie: up */
    CHECK_EQ_INT(ib__float_to_bfloat16(1.0f), 0x3F80);
    CHECK_EQ_INT(ib__float_to_bfloat16(-2.0f), 0xC000);
}

/* A copy of input 0's values of a model opened with o and bound at batch
 * (a fresh workload: its first and only set_batch). */
static unsigned char *fresh_inputs(const char *path, const ib_model_options *o, int64_t batch, size_t *bytes)
{
    ib_workload *w = NULL;
    ib_error err = { "" };
    unsigned char *copy = NULL;
    *bytes = 0;
    CHECK_EQ_INT(ib_workload_open_model(path, o, &w, &err), IB_OK);
    if (!w) return NULL;
    CHECK_EQ_INT(ib_workload_set_batch(w, batch, &err), IB_OK);
    const void *host = ib__ort_input_host(w, 0, bytes);
    CHECK(host != NULL && *bytes > 0);
    if (host && (copy = malloc(*bytes))) memcpy(copy, host, *bytes);
    ib_workload_destroy(w);
    return copy;
}

/* The input values of a model opened with seed, at batch 2: a copy. */
static unsigned char *inputs_with_seed(const char *path, uint64_t seed, size_t *bytes)
{
    ib_model_options o = cpu_options();
    o.seed = seed;
    return fresh_inputs(path, &o, 2, bytes);
}

/* Input 0 of w (bound at `batch`) holds the same bytes as a fresh workload
 * opened with o at that batch, and output 0 after a run has the same shape
 * and values as the fresh one's. */
static void check_same_as_fresh(ib_workload *w, const char *path, const ib_model_options *o, int64_t batch)
{
    size_t fresh_bytes = 0, bytes = 0;
    unsigned char *fresh = fresh_inputs(path, o, batch, &fresh_bytes);
    const void *host = ib__ort_input_host(w, 0, &bytes);
    CHECK(fresh && host && bytes == fresh_bytes);
    if (fresh && host && bytes == fresh_bytes) CHECK(memcmp(fresh, host, bytes) == 0);
    free(fresh);
    ib_error err = { "" };
    CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
    ib__output_values out;
    CHECK_EQ_INT(w->ops->read_output(w, 0, &out, &err), IB_OK);
    CHECK_EQ_INT(out.rank, 2);
    CHECK_EQ_INT(out.dims[0], batch);
    CHECK_EQ_INT(out.n, batch * 4);
    ib__output_values_free(&out);
}

/* Switching to a smaller batch binds a view of the largest batch's inputs:
 * no buffer is allocated, the memory is the same, and its first bytes are
 * exactly what a fresh fill of the smaller batch holds, for each way an
 * input is filled. A larger batch allocates again. */
static void test_batch_switch_views(void)
{
    char *path = fx_write_model(dir, "matmul");
    static const char *fills[] = { NULL, "x=zeros", "x=random:-3..7", "x=2.5" };
    for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
        ib_model_options o = cpu_options();
        ib_input_spec spec;
        if (fills[f]) {
            CHECK_EQ_INT(ib_input_spec_parse(fills[f], &spec, NULL), IB_OK);
            o.inputs = &spec;
            o.n_inputs = 1;
        }
        ib_workload *w = NULL;
        ib_error err = { "" };
        CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
        if (!w) continue;
        CHECK_EQ_INT(ib_workload_set_batch(w, 8, &err), IB_OK);
        size_t allocs = ib__ort_input_allocations(w), bytes = 0;
        const void *at8 = ib__ort_input_host(w, 0, &bytes);
        CHECK_EQ_INT(bytes, 8 * 16 * 4);
        for (int64_t b = 7; b >= 1; b -= 3) {
            CHECK_EQ_INT(ib_workload_set_batch(w, b, &err), IB_OK);
            CHECK_EQ_INT(w->info.batch, b);
            CHECK(ib__ort_input_host(w, 0, &bytes) == at8);
            CHECK_EQ_INT(bytes, (size_t)b * 16 * 4);
            check_same_as_fresh(w, path, &o, b);
        }
        /* back up to the capacity, and a run with copies at a view */
        CHECK_EQ_INT(ib_workload_set_batch(w, 8, &err), IB_OK);
        check_same_as_fresh(w, path, &o, 8);
        CHECK_EQ_INT(ib_workload_set_batch(w, 2, &err), IB_OK);
        CHECK_EQ_INT(w->ops->run_with_copies(w, &err), IB_OK);
        /* zeros filled in place do not survive a switch: set_batch binds
         * the input's own values */
        CHECK_EQ_INT(w->ops->fill_inputs(w, true, &err), IB_OK);
        CHECK_EQ_INT(ib_workload_set_batch(w, 5, &err), IB_OK);
        check_same_as_fresh(w, path, &o, 5);
        /* the batch bound, again: nothing changes (a captured graph would
         * be kept); after zeros, the input's own values come back */
        CHECK_EQ_INT(ib_workload_set_batch(w, 5, &err), IB_OK);
        check_same_as_fresh(w, path, &o, 5);
        CHECK_EQ_INT(w->ops->fill_inputs(w, true, &err), IB_OK);
        CHECK_EQ_INT(ib_workload_set_batch(w, 5, &err), IB_OK);
        check_same_as_fresh(w, path, &o, 5);
        CHECK_EQ_INT(ib__ort_input_allocations(w), allocs);
        /* past the capacity: allocated again, filled for the new batch */
        CHECK_EQ_INT(ib_workload_set_batch(w, 9, &err), IB_OK);
        CHECK_EQ_INT(ib__ort_input_allocations(w), allocs + 1);
        check_same_as_fresh(w, path, &o, 9);
        ib_workload_destroy(w);
    }
    free(path);
}

/* An input read from a file holds one batch: a switch to another is
 * refused as a fresh open at that batch would be, and leaves the bound
 * batch in place. */
static void test_batch_switch_file_input(void)
{
    char *path = fx_write_model(dir, "matmul");
    float values[4 * 16];
    for (int i = 0; i < 4 * 16; i++) values[i] = (float)i / 8;
    char *file = fx_write(dir, "x4.raw", values, sizeof values);
    ib_input_spec spec;
    char text[600];
    snprintf(text, sizeof text, "x=@%s", file ? file : "");
    CHECK_EQ_INT(ib_input_spec_parse(text, &spec, NULL), IB_OK);
    ib_model_options o = cpu_options();
    o.inputs = &spec;
    o.n_inputs = 1;
    o.batch = 4; /* the file is checked at open, at this batch */
    ib_workload *w = NULL;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_OK);
    if (w) {
        CHECK_EQ_INT(ib_workload_set_batch(w, 4, &err), IB_OK);
        size_t bytes = 0;
        const void *host = ib__ort_input_host(w, 0, &bytes);
        CHECK(host && bytes == sizeof values && memcmp(host, values, sizeof values) == 0);
        CHECK_EQ_INT(ib_workload_set_batch(w, 2, &err), IB_ERR_INVALID_ARG);
        CHECK(contains(err.message, "x4.raw"));
        CHECK_EQ_INT(w->info.batch, 4);
        check_same_as_fresh(w, path, &o, 4);
        ib_workload_destroy(w);
    }
    free(file);
    free(path);
}

/* --seed: the same seed gives the same inputs, another seed others. */
static void test_seed_sets_inputs(void)
{
    char *path = fx_write_model(dir, "matmul");
    size_t n42, n42b, n7;
    unsigned char *a = inputs_with_seed(path, 42, &n42), *b = inputs_with_seed(path, 42, &n42b),
                  *c = inputs_with_seed(path, 7, &n7);
    CHECK(a && b && c && n42 == n42b && n42 == n7);
    if (a && b && c) {
        CHECK(memcmp(a, b, n42) == 0);
        CHECK(memcmp(a, c, n42) != 0);
    }
    free(a);
    free(b);
    free(c);
    free(path);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    dir = fx_tmpdir();
    if (!dir) {
        fprintf(stderr, "cannot make a temporary folder\n");
        return 1;
    }
    RUN(test_classify);
    RUN(test_dim_defaults);
    RUN(test_fill);
    RUN(test_open_and_info);
    RUN(test_default_options);
    RUN(test_fixed_batch);
    RUN(test_symbolic_dims);
    RUN(test_int64_inputs);
    RUN(test_float16_input);
    RUN(test_unnamed_batch);
    RUN(test_bad_files);
    RUN(test_bad_options);
    RUN(test_host_memory_cap);
    RUN(test_unranked_input);
    RUN(test_unnamed_dim_in_second_input);
    RUN(test_host_arena_cap);
    RUN(test_run_failure);
    RUN(test_zoo);
    RUN(test_seed_sets_inputs);
    RUN(test_batch_switch_views);
    RUN(test_batch_switch_file_input);
    fx_cleanup(dir);
    free(dir);
    return check_summary("test_ort_cpu");
}
