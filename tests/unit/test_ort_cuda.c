/* The ONNX Runtime workload on the CUDA provider. Passes with nothing
 * checked where no GPU is usable (the unit suite runs everywhere); on a GPU
 * it checks the provider, the stream, device-resident runs, asynchronous
 * runs, copies, reopening, and both kinds of device out-of-memory. */
#include "check.h"
#include "backend/onnxruntime/ort.h"
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

static ib_model_options cuda_options(void)
{
    ib_model_options o;
    ib_model_options_init(&o);
    o.device = IB_DEVICE_CUDA;
    return o;
}

static ib_workload *open_or_report(const char *model, const ib_model_options *o)
{
    ib_workload *w = NULL;
    ib_error err = { "" };
    ib_status st = ib_workload_open_model(model, o, &w, &err);
    CHECK_EQ_INT(st, IB_OK);
    if (st != IB_OK) fprintf(stderr, "  open %s: [%s] %s\n", model, ib_status_str(st), err.message);
    return w;
}

static void check_ok(ib_status st, const ib_error *err, const char *what)
{
    CHECK_EQ_INT(st, IB_OK);
    if (st != IB_OK) fprintf(stderr, "  %s: [%s] %s\n", what, ib_status_str(st), err->message);
}

static void test_basics(void)
{
    char *path = fx_write_model(dir, "matmul");
    ib_model_options o = cuda_options();
    ib_workload *w = open_or_report(path, &o);
    free(path);
    if (!w) return;
    ib_error err = { "" };
    const ib_workload_info *info = ib_workload_get_info(w);
    CHECK(strcmp(info->provider, "CUDAExecutionProvider") == 0);
    CHECK_EQ_INT(info->device, IB_DEVICE_CUDA);
    CHECK(w->stream != NULL);
    void *target = NULL;
    const ib__timer_ops *t = ib__workload_device_timer(w, &target);
    CHECK(t == &ib__cuda_event_timer && target == w->stream);
    CHECK(w->ops->set_run_sync != NULL && ib__workload_can(w, IB_CAP_ASYNC_RUN | IB_CAP_L2_FLUSH));

    check_ok(w->ops->run(w, &err), &err, "cold run");
    check_ok(w->ops->run(w, &err), &err, "run");
    check_ok(ib_workload_set_batch(w, 64, &err), &err, "set_batch 64");
    CHECK_EQ_INT(info->outputs[0].dims[0], 64);
    check_ok(w->ops->run(w, &err), &err, "run at 64");

    /* the device timer brackets a run on our stream */
    void *timer = NULL;
    check_ok(t->create(target, w->device_id, &timer, &err), &err, "timer create");
    if (timer) {
        double ms = -1;
        check_ok(t->start(timer, &err), &err, "timer start");
        check_ok(w->ops->run(w, &err), &err, "timed run");
        check_ok(t->stop(timer, &err), &err, "timer stop");
        check_ok(t->elapsed_ms(timer, &ms, &err), &err, "timer elapsed");
        CHECK(ms > 0 && ms < 1000);
        fprintf(stderr, "  matmul batch 64: %.4f ms device\n", ms);
        t->destroy(timer);
    }

    /* asynchronous runs, then a wait */
    check_ok(w->ops->set_run_sync(w, false, &err), &err, "set_run_sync false");
    for (int i = 0; i < 20; i++) check_ok(w->ops->run(w, &err), &err, "async run");
    check_ok(ib__workload_synchronize(w, &err), &err, "synchronize");
    check_ok(w->ops->set_run_sync(w, true, &err), &err, "set_run_sync true");

    check_ok(w->ops->run_with_copies(w, &err), &err, "run with copies");
    check_ok(w->ops->run_with_copies(w, &err), &err, "run with copies");
    check_ok(w->ops->reopen(w, &err), &err, "reopen");
    check_ok(w->ops->run(w, &err), &err, "run after reopen");
    check_ok(w->ops->run_with_copies(w, &err), &err, "run with copies after reopen");
    ib_workload_destroy(w);
}

/* A batch whose inputs alone pass the device's free memory: DEVICE_OOM
 * before anything is released, then a small batch runs. */
/* Input 0's host copy (made by a run with copies) at w's batch: a copy. */
static unsigned char *host_copy(ib_workload *w, size_t *bytes)
{
    ib_error err = { "" };
    check_ok(w->ops->run_with_copies(w, &err), &err, "run with copies");
    const void *host = ib__ort_input_host(w, 0, bytes);
    unsigned char *copy = host && *bytes ? malloc(*bytes) : NULL;
    if (copy) memcpy(copy, host, *bytes);
    return copy;
}

/* A switch to a smaller batch allocates nothing on the device (a view of
 * the largest batch's buffer), runs at the smaller shape, and its input
 * holds what a fresh workload at that batch holds. */
static void test_batch_switch_views(void)
{
    char *path = fx_write_model(dir, "matmul");
    ib_model_options o = cuda_options();
    ib_workload *w = open_or_report(path, &o), *fresh = open_or_report(path, &o);
    ib_error err = { "" };
    if (w && fresh) {
        check_ok(ib_workload_set_batch(w, 8, &err), &err, "batch 8");
        size_t allocs = ib__ort_input_allocations(w);
        check_ok(ib_workload_set_batch(w, 3, &err), &err, "batch 3");
        CHECK_EQ_INT(ib__ort_input_allocations(w), allocs);
        check_ok(w->ops->run(w, &err), &err, "run at batch 3");
        ib__output_values out;
        check_ok(w->ops->read_output(w, 0, &out, &err), &err, "output at batch 3");
        CHECK_EQ_INT(out.dims[0], 3);
        CHECK_EQ_INT(out.n, 3 * 4);
        ib__output_values_free(&out);
        check_ok(ib_workload_set_batch(fresh, 3, &err), &err, "fresh batch 3");
        size_t n_view = 0, n_fresh = 0;
        unsigned char *view = host_copy(w, &n_view), *made = host_copy(fresh, &n_fresh);
        CHECK(view && made && n_view == n_fresh && n_view == 3 * 16 * 4);
        if (view && made && n_view == n_fresh) CHECK(memcmp(view, made, n_view) == 0);
        free(view);
        free(made);
        /* the host copies are made at the capacity: switching keeps them */
        check_ok(ib_workload_set_batch(w, 5, &err), &err, "batch 5");
        check_ok(w->ops->run_with_copies(w, &err), &err, "run with copies at batch 5");
        CHECK_EQ_INT(ib__ort_input_allocations(w), allocs + 1);
    }
    ib_workload_destroy(w);
    ib_workload_destroy(fresh);
    free(path);
}

/* Output 0 of the last run, as read_output reads it (floats). */
static ib__output_values output0(ib_workload *w)
{
    ib_error err = { "" };
    ib__output_values out = { 0 };
    check_ok(w->ops->read_output(w, 0, &out, &err), &err, "read_output");
    return out;
}

/* What the last copy_out left in pinned memory equals the output read back. */
static void check_copied_out(ib_workload *w, const ib__output_values *want)
{
    size_t bytes = 0;
    const float *got = ib__ort_output_copied(w, 0, &bytes);
    CHECK(got != NULL && bytes == want->n * sizeof(float));
    for (size_t k = 0; got && bytes == want->n * sizeof(float) && k < want->n; k++)
        CHECK_NEAR(got[k], want->values[k], 1e-4); /* the same kernels on the same numbers */
}

/* copy_in, run, copy_out (serve's parts), queued without waits then
 * synchronized once, as serve runs them. */
static void run_with_parts(ib_workload *w)
{
    ib_error err = { "" };
    check_ok(w->ops->copy_in(w, &err), &err, "copy_in");
    check_ok(w->ops->run(w, &err), &err, "run");
    check_ok(w->ops->copy_out(w, &err), &err, "copy_out");
    check_ok(ib__workload_synchronize(w, &err), &err, "synchronize");
}

/* serve's copies apart, at a switched batch (3 within a capacity of 8),
 * asynchronous: copy_in carries what is in pinned memory into the device
 * inputs the run reads (zeros written there give the zero-input output),
 * copy_out carries the run's output back; with cuda_graph the replayed
 * graph reads what copy_in wrote. */
static void test_copies(const char *graph)
{
    char *path = fx_write_model(dir, "matmul");
    ib_model_options o = cuda_options();
    ib_backend_option opt = { "cuda_graph", graph };
    o.options = &opt;
    o.n_options = 1;
    ib_workload *w = open_or_report(path, &o);
    free(path);
    if (!w) return;
    ib_error err = { "" };
    check_ok(ib_workload_set_batch(w, 8, &err), &err, "batch 8");
    check_ok(ib_workload_set_batch(w, 3, &err), &err, "batch 3");
    check_ok(w->ops->fill_inputs(w, true, &err), &err, "zeros");
    check_ok(w->ops->run(w, &err), &err, "run on zeros");
    ib__output_values zero = output0(w);
    check_ok(w->ops->fill_inputs(w, false, &err), &err, "values");
    check_ok(w->ops->run(w, &err), &err, "run");
    ib__output_values ref = output0(w);
    CHECK_EQ_INT(ref.n, 3 * 4);
    CHECK(ref.n == zero.n && memcmp(ref.values, zero.values, ref.n * sizeof *ref.values) != 0);

    check_ok(w->ops->set_run_sync(w, false, &err), &err, "set_run_sync false");
    run_with_parts(w);
    check_copied_out(w, &ref); /* the same inputs copied in: the same output */
    size_t bytes = 0;
    void *pinned = ib__ort_input_pinned(w, 0, &bytes);
    CHECK(pinned != NULL && bytes == 3 * 16 * 4);
    if (pinned) memset(pinned, 0, bytes);
    run_with_parts(w);
    check_copied_out(w, &zero);
    check_ok(w->ops->set_run_sync(w, true, &err), &err, "set_run_sync true");
    /* synchronous: each copy has ended on return */
    check_ok(w->ops->copy_in(w, &err), &err, "copy_in sync");
    check_ok(w->ops->run(w, &err), &err, "run sync");
    check_ok(w->ops->copy_out(w, &err), &err, "copy_out sync");
    check_copied_out(w, &zero);
    ib__output_values_free(&zero);
    ib__output_values_free(&ref);
    ib_workload_destroy(w);
}

static void test_copies_apart(void) { test_copies("no"); }
static void test_copies_with_cuda_graph(void) { test_copies("yes"); }

static void test_input_oom(void)
{
    char *path = fx_write_model(dir, "seq");
    ib_model_options o = cuda_options();
    ib_shape_override s;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_shape_parse("x:1x4096x16", &s, &err), IB_OK);
    o.shapes = &s;
    o.n_shapes = 1;
    ib_workload *w = open_or_report(path, &o);
    free(path);
    if (!w) return;
    check_ok(w->ops->run(w, &err), &err, "run");
    /* 2^20 items of 256 KiB: 256 GiB */
    ib_status st = ib_workload_set_batch(w, 1 << 20, &err);
    CHECK_EQ_INT(st, IB_ERR_DEVICE_OOM);
    fprintf(stderr, "  input OOM: [%s] %s\n", ib_status_str(st), err.message);
    /* Refused before anything was released: the batch bound before still runs. */
    CHECK_EQ_INT(ib_workload_get_info(w)->batch, 1);
    check_ok(w->ops->run(w, &err), &err, "run at the batch kept after the refusal");
    check_ok(w->ops->reopen(w, &err), &err, "reopen after OOM");
    check_ok(ib_workload_set_batch(w, 2, &err), &err, "set_batch 2 after OOM");
    check_ok(w->ops->run(w, &err), &err, "run after OOM");
    ib_workload_destroy(w);
}

/* ONNX Runtime's arena fails (gpu_mem_limit): DEVICE_OOM from the run,
 * then reopen and a small batch run. */
static void test_arena_oom(void)
{
    char *path = fx_write_model(dir, "matmul");
    ib_model_options o = cuda_options();
    o.device_memory_limit_bytes = 4u << 20; /* 4 MB */
    ib_workload *w = open_or_report(path, &o);
    free(path);
    if (!w) return;
    ib_error err = { "" };
    check_ok(w->ops->run(w, &err), &err, "run");
    /* output of 2^22 x 4 floats = 64 MB from the arena */
    check_ok(ib_workload_set_batch(w, 1 << 22, &err), &err, "set_batch 2^22");
    ib_status st = w->ops->run(w, &err);
    CHECK_EQ_INT(st, IB_ERR_DEVICE_OOM);
    fprintf(stderr, "  arena OOM: [%s] %s\n", ib_status_str(st), err.message);
    check_ok(w->ops->reopen(w, &err), &err, "reopen after arena OOM");
    check_ok(ib_workload_set_batch(w, 16, &err), &err, "set_batch 16");
    check_ok(w->ops->run(w, &err), &err, "run after arena OOM");
    ib_workload_destroy(w);
}

/* Zoo models on the GPU, AUTO picking CUDA. bert-base calls the core
 * library's shared operator code (Gather, Range), which crashed the process
 * with a CPU build of the core library (docs/backend-onnxruntime.md). */
static void test_zoo(void)
{
    const char *models[] = { "zoo:mlp?fp16", "zoo:resnet-50", "zoo:efficientnet-b0?fp16", "zoo:bert-base" };
    for (int k = 0; k < 4; k++) {
        ib_model_options o;
        ib_model_options_init(&o);
        o.batch = 8;
        static const ib_backend_option nhwc = { "prefer_nhwc", "yes" };
        o.options = &nhwc;
        o.n_options = k == 2;
        ib_workload *w = open_or_report(models[k], &o);
        if (!w) continue;
        ib_error err = { "" };
        CHECK(strcmp(ib_workload_get_info(w)->provider, "CUDAExecutionProvider") == 0);
        double t0 = ib__now_ms();
        check_ok(w->ops->run(w, &err), &err, models[k]);
        double cold = ib__now_ms() - t0;
        t0 = ib__now_ms();
        for (int i = 0; i < 10; i++) check_ok(w->ops->run(w, &err), &err, models[k]);
        fprintf(stderr, "  %s batch 8: cold %.1f ms, warm %.3f ms (host)\n", models[k], cold,
                (ib__now_ms() - t0) / 10);
        check_ok(w->ops->run_with_copies(w, &err), &err, models[k]);
        ib_workload_destroy(w);
    }
}

static void test_no_such_device(void)
{
    char *path = fx_write_model(dir, "matmul");
    ib_model_options o = cuda_options();
    o.device_id = 97;
    ib_workload *w = NULL;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_workload_open_model(path, &o, &w, &err), IB_ERR_NO_DEVICE);
    CHECK(strstr(err.message, "--device cuda") != NULL);
    free(path);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    if (!ib__gpu_available(0)) {
        printf("test_ort_cuda: no usable GPU: skipped\n");
        return 77; /* ctest's skip code: nothing was checked */
    }
    dir = fx_tmpdir();
    if (!dir) {
        fprintf(stderr, "cannot make a temporary folder\n");
        return 1;
    }
    RUN(test_basics);
    RUN(test_batch_switch_views);
    RUN(test_copies_apart);
    RUN(test_copies_with_cuda_graph);
    RUN(test_input_oom);
    RUN(test_arena_oom);
    RUN(test_no_such_device);
    RUN(test_zoo);
    fx_cleanup(dir);
    free(dir);
    return check_summary("test_ort_cuda");
}
