/* The backend ABI from the core's side: a table written here (a host
 * workload that counts its calls) opened through ib_workload_open_backend
 * and measured, tables the core must refuse (another ABI version, a short
 * table, a missing required slot, capabilities without their slots), the
 * registry's built-in names, and the built-in backends through their
 * tables (ONNX Runtime, the fake, the spin kernel). */
#include "check.h"
#include "backend/registry.h"
#include "gpu/gpu.h"

#include <math.h>
#include <string.h>

typedef struct counting {
    int64_t batch;
    int runs, set_batches, reopens, closes;
} counting;

static counting calls; /* one workload at a time in these tests */

static ib_status c_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    for (size_t i = 0; i < args->n_options; i++)
        if (strcmp(args->options[i].key, "ok"))
            return ib__fail(err, IB_ERR_INVALID_ARG, "counting: unknown option '%s'", args->options[i].key);
    calls = (counting){ .batch = args->batch };
    *out = (ib_backend_handle){ .state = &calls, .caps = IB_CAP_BATCH_DIM | IB_CAP_REOPEN };
    return IB_OK;
}

static void c_describe(void *state, ib_workload_info *info)
{
    const counting *c = state;
    strcpy(info->model, "counting");
    strcpy(info->provider, "test table");
    info->batch = c->batch;
    info->has_batch_dim = false; /* the capabilities say otherwise: they win */
    info->flops_per_item = 7;
}

static ib_status c_set_batch(void *state, int64_t batch, ib_error *err)
{
    counting *c = state;
    c->set_batches++;
    IB_FAIL_IF(batch > 64, err, IB_ERR_DEVICE_OOM, "counting: out of memory at %lld", (long long)batch);
    c->batch = batch;
    return IB_OK;
}

static ib_status c_run(void *state, ib_error *err)
{
    (void)err;
    ((counting *)state)->runs++;
    return IB_OK;
}

static ib_status c_reopen(void *state, ib_error *err)
{
    (void)err;
    ((counting *)state)->reopens++;
    return IB_OK;
}

static void c_close(void *state) { ((counting *)state)->closes++; }

static const ib_backend counting_table = {
    .struct_size = sizeof(ib_backend),
    .abi_version = IB_BACKEND_ABI_VERSION,
    .name = "counting",
    .description = "counts its calls",
    .open = c_open,
    .describe = c_describe,
    .set_batch = c_set_batch,
    .run = c_run,
    .reopen = c_reopen,
    .close = c_close,
};

static ib_backend_open_args args_batch(int64_t batch)
{
    ib_backend_open_args a;
    ib_backend_open_args_init(&a);
    a.batch = batch;
    return a;
}

/* Measures w's latency with `runs` runs after two warm-up runs. */
static ib_status measure(ib_workload *w, int64_t runs, ib_latency_result *r, ib_error *err)
{
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 2, cfg.warmup_ms = 0, cfg.warmup_until_steady = false, cfg.runs = runs;
    cfg.sample_gpu_state = false;
    return ib_measure_latency(w, &cfg, r, err);
}

static void test_open_and_measure(void)
{
    ib_backend_open_args a = args_batch(4);
    ib_workload *w = NULL;
    ib_error err;
    CHECK_EQ_INT(ib_workload_open_backend(&counting_table, &a, &w, &err), IB_OK);
    if (!w) return;
    const ib_workload_info *info = ib_workload_get_info(w);
    CHECK(!strcmp(info->model, "counting") && info->batch == 4 && info->flops_per_item == 7);
    CHECK(info->has_batch_dim && info->device == IB_DEVICE_CPU);
    CHECK(ib__workload_can(w, IB_CAP_BATCH_DIM | IB_CAP_REOPEN) &&
          !ib__workload_can(w, IB_CAP_DEVICE_TIMING));

    ib_latency_result r;
    CHECK_EQ_INT(measure(w, 20, &r, &err), IB_OK);
    CHECK(!r.has_device_timer && r.n == 20);
    CHECK_EQ_INT(calls.runs, 1 + 2 + 20);
    ib_latency_result_free(&r);

    /* set_batch goes to the table, describe follows it; its OOM is kept. */
    CHECK_EQ_INT(ib_workload_set_batch(w, 16, &err), IB_OK);
    CHECK_EQ_INT(info->batch, 16);
    CHECK_EQ_INT(ib_workload_set_batch(w, 128, &err), IB_ERR_DEVICE_OOM);
    CHECK(strstr(err.message, "out of memory at 128") != NULL);
    CHECK_EQ_INT(w->ops->reopen(w, &err), IB_OK);
    CHECK_EQ_INT(calls.reopens, 1);
    CHECK(w->ops->set_run_sync == NULL && w->ops->run_with_copies == NULL);
    ib_workload_destroy(w);
    CHECK_EQ_INT(calls.closes, 1);
}

static void test_open_refused_by_the_backend(void)
{
    ib_backend_option bad = { "tile", "8" };
    ib_backend_open_args a = args_batch(1);
    a.options = &bad;
    a.n_options = 1;
    ib_workload *w = (ib_workload *)&a;
    ib_error err;
    CHECK_EQ_INT(ib_workload_open_backend(&counting_table, &a, &w, &err), IB_ERR_INVALID_ARG);
    CHECK(w == NULL && strstr(err.message, "unknown option 'tile'"));
    a.n_options = 0;
    a.batch = 0;
    CHECK_EQ_INT(ib_workload_open_backend(&counting_table, &a, &w, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "at least 1") != NULL);
    a.struct_size = 8; /* not initialized by ib_backend_open_args_init */
    CHECK_EQ_INT(ib_workload_open_backend(&counting_table, &a, &w, &err), IB_ERR_INVALID_ARG);
}

/* Each table is refused before open is called, with a message naming why. */
static void check_table_refused(const ib_backend *b, const char *why)
{
    ib_backend_open_args a = args_batch(1);
    ib_workload *w = NULL;
    ib_error err = { { 0 } };
    calls = (counting){ 0 };
    CHECK_EQ_INT(ib_workload_open_backend(b, &a, &w, &err), IB_ERR_INVALID_ARG);
    CHECK(w == NULL);
    if (!strstr(err.message, why)) fprintf(stderr, "  message: %s (expected %s)\n", err.message, why);
    CHECK(strstr(err.message, why) != NULL);
}

static void test_bad_tables(void)
{
    ib_backend b = counting_table;
    b.abi_version = IB_BACKEND_ABI_VERSION + 1;
    check_table_refused(&b, "backend ABI version 5, but this inferbench speaks version 4");
    b = counting_table;
    b.struct_size = sizeof b - sizeof b.close;
    check_table_refused(&b, "backend table of");
    b = counting_table;
    b.run = NULL;
    check_table_refused(&b, "lacks a required slot");
    b = counting_table;
    b.name = "";
    check_table_refused(&b, "without a name");
}

/* Option declarations the registry refuses before a table's first use. */
static void test_bad_declarations(void)
{
    ib_backend b = counting_table;
    ib_backend_option_decl decls[2] = { { .key = "ok", .help = "fine" }, { .key = "ok", .help = "again" } };
    b.options = decls;
    b.n_options = 2;
    check_table_refused(&b, "backend 'counting' declares option 'ok' twice");
    decls[1] = (ib_backend_option_decl){ .key = "other" };
    check_table_refused(&b, "option 1 without a key or a help line");
    decls[1] = (ib_backend_option_decl){ .key = "library", .help = "where", .flags = IB_OPTION_PROCESS };
    check_table_refused(&b, "option 'library' of the whole process, but no configure slot");
    b.options = NULL;
    check_table_refused(&b, "declares 2 options but gives none");
    b.n_options = 0;
    ib_error err;
    CHECK_EQ_INT(ib__backend_check(&b, &err), IB_OK);
}

/* What the built-in backends declare, as the program reads it. */
static void test_declarations(void)
{
    const ib_backend *ort = ib_backend_find("onnxruntime"), *fake = ib_backend_find("fake");
    CHECK(ib_backend_default() == ib_backend_get(0));
    /* In this build (with it) nothing is left out. */
    CHECK(ib_backend_absent(NULL) == NULL && ib_backend_absent("onnxruntime") == NULL);
    CHECK(ib_backend_absent("nosuch") == NULL);
    const ib_backend_option_decl *search = ib_backend_option_find(ort, "cudnn_search");
    CHECK(search && search->race && !strcmp(search->flag, "cudnn-search") &&
          (search->flags & IB_OPTION_CUDA_ONLY));
    const ib_backend_option_decl *threads = ib_backend_option_find(ort, "threads");
    CHECK(threads && threads->role == IB_OPTION_ROLE_THREADS);
    CHECK(ib_backend_option_find(ort, "nosuch") == NULL && ib_backend_option_find(NULL, "threads") == NULL);
    CHECK(ib_backend_takes_model_options(ort) && !ib_backend_takes_model_options(fake));
    ib_error err;
    CHECK_EQ_INT(ib_backend_configure(fake, "us", "5", &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "fake: 'us' is not an option of the whole process") != NULL);
}

/* ib_workload_open_model by backend name: a backend of no models through
 * its table, the model options it cannot read refused, not ignored. */
static void test_open_model_by_name(void)
{
    ib_backend_option us = { "us", "2000" };
    ib_model_options o;
    ib_model_options_init(&o);
    o.backend = "fake";
    o.options = &us;
    o.n_options = 1;
    o.batch = 3;
    ib_workload *w = NULL;
    ib_error err;
    CHECK_EQ_INT(ib_workload_open_model(NULL, &o, &w, &err), IB_OK);
    if (w) {
        const ib_workload_info *info = ib_workload_get_info(w);
        CHECK(!strcmp(info->model, "fake:2000us+0us/item") && info->batch == 3);
        ib_workload_destroy(w);
    }
    o.math = IB_MATH_FP16;
    CHECK_EQ_INT(ib_workload_open_model(NULL, &o, &w, &err), IB_ERR_INVALID_ARG);
    CHECK(w == NULL && strstr(err.message, "backend 'fake' takes no model math") != NULL);
    o.math = IB_MATH_DEFAULT;
    o.backend = "nosuch";
    CHECK_EQ_INT(ib_workload_open_model(NULL, &o, &w, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "no backend named 'nosuch'") != NULL);
}

/* Capabilities that promise a slot the table lacks: refused after open,
 * and what open made is closed again. */
static void test_capabilities_without_slots(void)
{
    ib_backend b = counting_table;
    b.reopen = NULL;
    check_table_refused(&b, "backend 'counting' declares IB_CAP_REOPEN without a reopen slot");
    CHECK_EQ_INT(calls.closes, 1);
}

static void test_registry(void)
{
    CHECK(ib_backend_count() >= 2);
    CHECK(ib_backend_find("onnxruntime") == &ib__backend_onnxruntime);
    CHECK(ib_backend_find("spin") == &ib__backend_spin);
    CHECK(ib_backend_find("fake") == &ib__backend_fake);
    CHECK(ib_backend_find("tensorrt") == NULL && ib_backend_find(NULL) == NULL);
    CHECK(ib_backend_get(ib_backend_count()) == NULL);
    ib_error err;
    for (size_t i = 0; i < ib_backend_count(); i++)
        CHECK_EQ_INT(ib__backend_check(ib_backend_get(i), &err), IB_OK);
    const ib_backend *p = (const ib_backend *)&err;
    CHECK_EQ_INT(ib_backend_load_plugin("/nonexistent/x.so", &p, &err), IB_ERR_INVALID_ARG);
    CHECK(p == NULL && strstr(err.message, "no such file"));
}

/* ONNX Runtime through its table: a CPU workload like ib_workload_open_model's. */
static void test_onnxruntime_table(void)
{
    ib_backend_option threads = { "threads", "1" };
    ib_backend_open_args a = args_batch(2);
    a.model = "zoo:mlp";
    a.device = IB_DEVICE_CPU;
    a.options = &threads;
    a.n_options = 1;
    ib_workload *w = NULL;
    ib_error err;
    CHECK_EQ_INT(ib_workload_open_backend(ib_backend_find("onnxruntime"), &a, &w, &err), IB_OK);
    if (!w) return;
    const ib_workload_info *info = ib_workload_get_info(w);
    CHECK(!strcmp(info->provider, "CPUExecutionProvider") && info->batch == 2);
    /* reported: the CPU provider's settings only, threads as given */
    const char *reported = ib_option_list_get(&info->options, "threads");
    CHECK(reported && !strcmp(reported, "1") && info->options.n == 1);
    CHECK(ib__workload_can(w, IB_CAP_HOST_INPUT_RUN | IB_CAP_REOPEN | IB_CAP_BATCH_DIM));
    CHECK(!(w->caps & (IB_CAP_GPU | IB_CAP_ASYNC_RUN)));
    CHECK_EQ_INT(w->ops->run(w, &err), IB_OK);
    CHECK_EQ_INT(ib_workload_set_batch(w, 8, &err), IB_OK);
    CHECK_EQ_INT(info->outputs[0].dims[0], 8);
    ib_workload_destroy(w);
    threads.value = "many";
    CHECK_EQ_INT(ib_workload_open_backend(ib_backend_find("onnxruntime"), &a, &w, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "threads=many") != NULL);
}

/* The fake by name: its options script the durations on the virtual clock,
 * and the in-tree workload is the core's handle itself (its copy slots and
 * clock, which the ABI does not carry, are there). */
static void test_fake_table(void)
{
    ib_backend_option opts[] = { { "us", "2000" }, { "item_us", "500" }, { "oom_above", "8" } };
    ib_backend_open_args a = args_batch(4);
    a.options = opts;
    a.n_options = 3;
    ib_workload *w = NULL;
    ib_error err;
    CHECK_EQ_INT(ib_workload_open_backend(ib_backend_find("fake"), &a, &w, &err), IB_OK);
    if (!w) return;
    CHECK(w->ops->copy_in != NULL && w->ops->set_tf32 != NULL);
    CHECK(!strcmp(w->info.model, "fake:2000us+500us/item") && w->info.batch == 4);
    ib_latency_result r;
    CHECK_EQ_INT(measure(w, 10, &r, &err), IB_OK);
    CHECK_NEAR(r.host.p50, 2.0 + 0.5 * 4, 1e-9); /* us + item_us x batch, exactly */
    ib_latency_result_free(&r);
    CHECK_EQ_INT(ib_workload_set_batch(w, 8, &err), IB_OK);
    CHECK_EQ_INT(ib_workload_set_batch(w, 9, &err), IB_ERR_DEVICE_OOM);
    ib_workload_destroy(w);

    /* Bound at open: a first batch past oom_above fails there. */
    a.batch = 9;
    CHECK_EQ_INT(ib_workload_open_backend(ib_backend_find("fake"), &a, &w, &err), IB_ERR_DEVICE_OOM);
    CHECK(w == NULL);
    ib_backend_option bad = { "ms", "1" };
    a = args_batch(1);
    a.options = &bad;
    a.n_options = 1;
    CHECK_EQ_INT(ib_workload_open_backend(ib_backend_find("fake"), &a, &w, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "fake: unknown option 'ms'") != NULL);
    a.n_options = 0;
    a.device = IB_DEVICE_CUDA;
    CHECK_EQ_INT(ib_workload_open_backend(ib_backend_find("fake"), &a, &w, &err), IB_ERR_UNSUPPORTED);
}

/* The spin kernel, a backend of the table alone: what it refuses before
 * touching a GPU, and (without one) the missing device, nothing left open. */
static void test_spin_table(void)
{
    const ib_backend *spin = ib_backend_find("spin");
    ib_backend_option us = { "us", "12.5" };
    ib_backend_open_args a = args_batch(1);
    a.options = &us;
    a.n_options = 1;
    ib_workload *w = NULL;
    ib_error err;
    CHECK(!ib__backend_is_in_tree(spin));
    us.value = "-1";
    CHECK_EQ_INT(ib_workload_open_backend(spin, &a, &w, &err), IB_ERR_INVALID_ARG);
    CHECK(!strcmp(err.message, "spin kernel: duration '-1' us is not in [0, 1e+07] us"));
    us.value = "12.5us";
    CHECK_EQ_INT(ib_workload_open_backend(spin, &a, &w, &err), IB_ERR_INVALID_ARG);
    us.key = "ms";
    CHECK_EQ_INT(ib_workload_open_backend(spin, &a, &w, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "spin: unknown option 'ms'") != NULL);
    us = (ib_backend_option){ "us", "12.5" };
    a.device = IB_DEVICE_CPU;
    CHECK_EQ_INT(ib_workload_open_backend(spin, &a, &w, &err), IB_ERR_UNSUPPORTED);
    a.device = IB_DEVICE_AUTO;
    a.device_id = -1;
    CHECK_EQ_INT(ib_workload_open_backend(spin, &a, &w, &err), IB_ERR_INVALID_ARG);
    CHECK_EQ_INT(ib_workload_open_spin_kernel(NAN, 0, &w, &err), IB_ERR_INVALID_ARG);
    CHECK(w == NULL);
    a.device_id = 0;
    if (ib__gpu_available(0)) {
        CHECK_EQ_INT(ib_workload_open_backend(spin, &a, &w, &err), IB_OK);
        if (w) CHECK(!strcmp(ib_workload_get_info(w)->model, "spin:12.5us") && w->stream != NULL);
        ib_workload_destroy(w);
    } else {
        CHECK_EQ_INT(ib_workload_open_backend(spin, &a, &w, &err), IB_ERR_NO_DEVICE);
        CHECK(w == NULL && strstr(err.message, "spin kernel on CUDA device 0: ") != NULL);
    }
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_open_and_measure);
    RUN(test_open_refused_by_the_backend);
    RUN(test_bad_tables);
    RUN(test_bad_declarations);
    RUN(test_declarations);
    RUN(test_open_model_by_name);
    RUN(test_capabilities_without_slots);
    RUN(test_registry);
    RUN(test_onnxruntime_table);
    RUN(test_fake_table);
    RUN(test_spin_table);
    return check_summary("test_backend");
}
