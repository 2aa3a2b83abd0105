/* A test plugin that declares its options (include/inferbench_backend.h,
 * ib_backend_option_decl): a run spins on the host clock for `us`
 * microseconds, twice as long in mode slow, half with turbo. Its
 * declarations give the program alias flags (--knob-us, --knob-mode,
 * --knob-turbo), an environment variable (IB_TEST_KNOB_US) and values for
 * best to race (mode, turbo). Built with the public header alone. */
#define _POSIX_C_SOURCE 200809L
#include "inferbench_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct knobs {
    long us;
    char mode[8];
    bool turbo;
} knobs;

static ib_status refuse(ib_error *err, const char *what, const char *value)
{
    if (err) snprintf(err->message, sizeof err->message, "knobs: %s '%s'", what, value);
    return IB_ERR_INVALID_ARG;
}

static ib_status apply(knobs *k, const ib_backend_option *o, ib_error *err)
{
    if (!strcmp(o->key, "us")) {
        char *end;
        k->us = strtol(o->value, &end, 10);
        return *end || k->us < 1 || k->us > 100000 ? refuse(err, "us is not 1..100000:", o->value) : IB_OK;
    }
    if (!strcmp(o->key, "mode")) {
        if (strcmp(o->value, "fast") && strcmp(o->value, "slow"))
            return refuse(err, "mode is not fast|slow:", o->value);
        snprintf(k->mode, sizeof k->mode, "%s", o->value);
        return IB_OK;
    }
    if (!strcmp(o->key, "turbo")) {
        k->turbo = !strcmp(o->value, "yes");
        return k->turbo || !strcmp(o->value, "no") ? IB_OK : refuse(err, "turbo is not yes|no:", o->value);
    }
    return refuse(err, "unknown option", o->key);
}

static ib_status knobs_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    if (args->device == IB_DEVICE_CUDA) return refuse(err, "runs on the", "cpu");
    knobs *k = calloc(1, sizeof *k);
    if (!k) return IB_ERR_NO_MEMORY;
    *k = (knobs){ .us = 50, .mode = "fast" };
    for (size_t i = 0; i < args->n_options; i++) {
        ib_status st = apply(k, &args->options[i], err);
        if (st != IB_OK) {
            free(k);
            return st;
        }
    }
    out->state = k;
    return IB_OK;
}

static void knobs_describe(void *state, ib_workload_info *info)
{
    const knobs *k = state;
    char us[24];
    snprintf(us, sizeof us, "%ld", k->us);
    snprintf(info->model, sizeof info->model, "knobs");
    snprintf(info->provider, sizeof info->provider, "host");
    info->device = IB_DEVICE_CPU;
    info->batch = 1;
    /* A plugin links no inferbench library: it fills the list itself. */
    const char *keys[] = { "us", "mode", "turbo" }, *values[] = { us, k->mode, k->turbo ? "yes" : "no" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(info->options.items[i].key, IB_OPTION_KEY_LEN, "%s", keys[i]);
        snprintf(info->options.items[i].value, IB_OPTION_VALUE_LEN, "%s", values[i]);
    }
    info->options.n = 3;
}

static ib_status knobs_set_batch(void *state, int64_t batch, ib_error *err)
{
    (void)state;
    return batch == 1 ? IB_OK : refuse(err, "batch is fixed:", "1");
}

static ib_status knobs_run(void *state, ib_error *err)
{
    (void)err;
    const knobs *k = state;
    double us = (double)k->us * (strcmp(k->mode, "slow") ? 1.0 : 2.0) * (k->turbo ? 0.5 : 1.0);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) * 1e6 + (double)(t.tv_nsec - t0.tv_nsec) / 1e3 < us);
    return IB_OK;
}

static void knobs_close(void *state) { free(state); }

static const ib_backend_option_decl knobs_options[] = {
    { .key = "us",
      .help = "microseconds a run spins",
      .values = "1..100000",
      .flag = "knob-us",
      .env = "IB_TEST_KNOB_US" },
    { .key = "mode",
      .help = "fast, or slow (twice as long)",
      .values = "fast|slow",
      .flag = "knob-mode",
      .race = "fast|slow" },
    { .key = "turbo",
      .help = "half as long",
      .values = "yes|no",
      .flag = "knob-turbo",
      .race = "no|yes",
      .label = "turbo",
      .flags = IB_OPTION_SWITCH },
};

static const ib_backend knobs_backend = {
    .struct_size = sizeof(ib_backend),
    .abi_version = IB_BACKEND_ABI_VERSION,
    .name = "knobs",
    .description = "a host spin of --option us=N microseconds, with options declared",
    .open = knobs_open,
    .describe = knobs_describe,
    .set_batch = knobs_set_batch,
    .run = knobs_run,
    .close = knobs_close,
    .options = knobs_options,
    .n_options = sizeof knobs_options / sizeof knobs_options[0],
};

const ib_backend *inferbench_backend_v4(void);
const ib_backend *inferbench_backend_v4(void) { return &knobs_backend; }
