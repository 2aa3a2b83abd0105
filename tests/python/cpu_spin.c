/* A known CPU workload for the Python binding's tests, in one shared
 * object used two ways: the C program loads it as a backend plugin
 * ("cpu-spin", option us=N: each run busy-waits N microseconds on the
 * monotonic clock), and Python calls ib_test_spin_us(N) through ctypes
 * inside a callable. The same work timed by both must give the same
 * figures, but for the binding's own overhead. */
#include "inferbench_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Exported for ctypes: busy-waits us microseconds. */
void ib_test_spin_us(double us);

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

void ib_test_spin_us(double us)
{
    double end = now_us() + us;
    while (now_us() < end) {
    }
}

typedef struct spin {
    double us;
    int64_t batch;
} spin;

static ib_status say(ib_error *err, ib_status st, const char *message)
{
    if (err) snprintf(err->message, sizeof err->message, "cpu-spin: %s", message);
    return st;
}

static ib_status spin_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    double us = 100;
    for (size_t i = 0; i < args->n_options; i++) {
        char *end;
        if (strcmp(args->options[i].key, "us") != 0)
            return say(err, IB_ERR_INVALID_ARG, "unknown option (known: us)");
        us = strtod(args->options[i].value, &end);
        if (*end || !(us > 0)) return say(err, IB_ERR_INVALID_ARG, "us: expected a positive number");
    }
    spin *s = malloc(sizeof *s);
    if (!s) return say(err, IB_ERR_NO_MEMORY, "out of memory");
    *s = (spin){ .us = us, .batch = args->batch };
    *out = (ib_backend_handle){ .state = s };
    return IB_OK;
}

static void spin_describe(void *state, ib_workload_info *info)
{
    const spin *s = state;
    snprintf(info->model, sizeof info->model, "cpu-spin %g us", s->us);
    snprintf(info->provider, sizeof info->provider, "cpu-spin");
    info->batch = s->batch;
}

static ib_status spin_set_batch(void *state, int64_t batch, ib_error *err)
{
    spin *s = state;
    if (batch != s->batch) return say(err, IB_ERR_UNSUPPORTED, "fixed batch");
    return IB_OK;
}

static ib_status spin_run(void *state, ib_error *err)
{
    (void)err;
    ib_test_spin_us(((spin *)state)->us);
    return IB_OK;
}

static void spin_close(void *state) { free(state); }

static const ib_backend_option_decl spin_options[] = {
    { .key = "us", .help = "microseconds a run busy-waits (default 100)", .values = "US" },
};

static const ib_backend table = {
    .struct_size = sizeof table,
    .abi_version = IB_BACKEND_ABI_VERSION,
    .name = "cpu-spin",
    .description = "busy-waits a fixed time (the Python binding's tests)",
    .open = spin_open,
    .describe = spin_describe,
    .set_batch = spin_set_batch,
    .run = spin_run,
    .close = spin_close,
    .options = spin_options,
    .n_options = sizeof spin_options / sizeof spin_options[0],
};

const ib_backend *inferbench_backend_v4(void);
const ib_backend *inferbench_backend_v4(void) { return &table; }
