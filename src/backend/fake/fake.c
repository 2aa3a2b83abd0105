/* The scripted fake workload: time is virtual, advanced by the script on
 * every run, so that the measurement loop, its rules and the batch search
 * are tested on exact numbers; faults are injected on demand (SQLite's idea
 * of testing every failure path by scripting it). */
#include "backend/fake/fake.h"
#include "backend/fake/fake_power.h"
#include "backend/registry.h"
#include "timer/energy_counter.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fake {
    ib__fake_script script;
    double now_ms;         /* the virtual clock */
    double device_done_ms; /* when the virtual device ends its queued work */
    int64_t runs;          /* runs issued, the cold one included */
    int64_t set_batches;
    bool run_sync;
    bool lost;        /* after a sticky fault every call fails */
    bool zero_inputs; /* fill_inputs(zeros) was the last fill */
    bool tf32_on;     /* set_tf32(true) was the last switch */
    /* The virtual stream hold: work queued while held is laid out from
     * hold_base_ms and moved by hold_shift_ms once released. */
    bool held;
    bool hold_timed_out;
    double hold_base_ms;  /* when the hold began on the device */
    double hold_until_ms; /* when it gives up by itself */
    double hold_shift_ms; /* the last hold: release time - hold_base_ms */
    /* Opened by name (the fake's table): a run's duration, the scripted
     * one of its options. */
    double run_ms, item_ms;
    ib__fake_power power; /* the scripted energy counter's */
} fake;

typedef struct fake_timer {
    fake *f;
    double start_ms, stop_ms;
    bool start_held, stop_held; /* queued behind a hold: fire hold_shift_ms later */
} fake_timer;

static fake *impl(ib_workload *w) { return w->impl; }

static double virtual_now(const void *ctx) { return ((const fake *)ctx)->now_ms; }

/* An idle wait moves virtual time on; ctx is the fake the clock was made
 * with (const only in the clock's signature). */
static void virtual_wait_until(const void *ctx, double t_ms)
{
    fake *f = (fake *)(uintptr_t)ctx;
    f->now_ms = fmax(f->now_ms, t_ms);
}

void ib__fake_script_init(ib__fake_script *s)
{
    *s = (ib__fake_script){
        .oom_above_batch = 0,
        .fail_at_run = -1,
        .lose_device_at_run = -1,
        .oom_at_run = -1,
        .has_batch_dim = true,
        .has_device_timer = true,
    };
}

static ib_status fake_set_batch(ib_workload *w, int64_t batch, ib_error *err)
{
    fake *f = impl(w);
    f->set_batches++;
    IB_FAIL_IF(f->lost, err, IB_ERR_DEVICE_LOST, "fake: device lost");
    IB_FAIL_IF(!f->script.has_batch_dim && batch != w->info.batch, err, IB_ERR_UNSUPPORTED,
               "fake: fixed batch %lld", (long long)w->info.batch);
    IB_FAIL_IF(f->script.oom_above_batch > 0 && batch > f->script.oom_above_batch, err, IB_ERR_DEVICE_OOM,
               "fake: out of memory at batch %lld", (long long)batch);
    f->now_ms += f->script.set_batch_ms;
    w->info.batch = batch;
    return IB_OK;
}

/* Ends the hold: the queued work starts when the host releases it, or when
 * the hold gives up by itself. */
static void end_hold(fake *f)
{
    double release_ms = fmin(fmax(f->now_ms, f->hold_base_ms), f->hold_until_ms);
    f->hold_timed_out = f->now_ms >= f->hold_until_ms;
    f->hold_shift_ms = release_ms - f->hold_base_ms;
    f->device_done_ms += f->hold_shift_ms;
    f->now_ms = fmax(f->now_ms, release_ms);
    f->held = false;
}

/* Records [start, end) as device work at the batch's power, for the
 * energy counter. */
static ib_status note_busy(fake *f, int64_t batch, double start_ms, double end_ms, ib_error *err)
{
    return ib__fake_power_busy(&f->power, start_ms, end_ms,
                               f->script.busy_w + f->script.busy_w_per_item * (double)batch, err);
}

/* One run, with extra_ms of device work around it (copies). The device
 * starts it once the host has launched it and earlier work is done; the host
 * waits for it unless the run is queued (gpu_like, set_run_sync(false)). */
static ib_status execute(ib_workload *w, double extra_ms, bool wait, ib_error *err)
{
    fake *f = impl(w);
    int64_t index = f->runs++;
    IB_FAIL_IF(f->lost, err, IB_ERR_DEVICE_LOST, "fake: device lost");
    if (index == f->script.lose_device_at_run) {
        f->lost = true;
        return ib__fail(err, IB_ERR_DEVICE_LOST, "fake: device lost at run %lld", (long long)index);
    }
    IB_FAIL_IF(index == f->script.fail_at_run, err, IB_ERR_RUNTIME, "fake: run %lld failed",
               (long long)index);
    IB_FAIL_IF(f->script.refuse_above_batch > 0 && w->info.batch > f->script.refuse_above_batch, err,
               IB_ERR_UNSUPPORTED, "fake: batch %lld not supported", (long long)w->info.batch);
    IB_FAIL_IF(f->script.fail_above_batch > 0 && w->info.batch > f->script.fail_above_batch, err,
               IB_ERR_RUNTIME, "fake: shape error at batch %lld", (long long)w->info.batch);
    IB_FAIL_IF(index == f->script.oom_at_run, err, IB_ERR_DEVICE_OOM, "fake: out of memory at run %lld",
               (long long)index);
    f->now_ms += f->script.host_overhead_ms;
    if (wait && f->held) { /* the device never gets to it: the hold times out */
        f->now_ms = fmax(f->now_ms, f->hold_until_ms);
        end_hold(f);
    }
    /* Behind a hold the run follows what is queued with no launch gap. */
    double start_ms = f->held ? f->device_done_ms : fmax(f->now_ms, f->device_done_ms) + f->script.launch_ms;
    double ms = f->script.duration_ms(w->info.batch, index, f->script.ctx);
    if (f->zero_inputs && f->script.zero_input_factor > 0) ms *= f->script.zero_input_factor;
    if (f->tf32_on) ms *= f->script.tf32_factor;
    f->device_done_ms = start_ms + extra_ms + ms;
    if (wait) f->now_ms = f->device_done_ms;
    return note_busy(f, w->info.batch, start_ms, f->device_done_ms, err);
}

static ib_status fake_run(ib_workload *w, ib_error *err)
{
    fake *f = impl(w);
    return execute(w, 0.0, f->run_sync || !f->script.gpu_like, err);
}

/* Naive code's run: copies in and out around it, and it always waits. */
static ib_status fake_run_with_copies(ib_workload *w, ib_error *err)
{
    return execute(w, impl(w)->script.copy_ms, true, err);
}

/* A copy between host and device: copy_ms / 2 of device work queued after
 * what is queued already; the host waits only when runs are synchronous. */
static ib_status fake_copy(ib_workload *w, ib_error *err)
{
    fake *f = impl(w);
    IB_FAIL_IF(f->lost, err, IB_ERR_DEVICE_LOST, "fake: device lost");
    f->now_ms += f->script.host_overhead_ms;
    double start_ms = fmax(f->now_ms, f->device_done_ms);
    f->device_done_ms = start_ms + f->script.copy_ms / 2;
    if (f->run_sync || !f->script.gpu_like) f->now_ms = f->device_done_ms;
    return note_busy(f, w->info.batch, start_ms, f->device_done_ms, err);
}

static ib_status fake_set_run_sync(ib_workload *w, bool sync, ib_error *err)
{
    (void)err;
    fake *f = impl(w);
    f->run_sync = sync;
    /* The fake has no stream, so ib__workload_synchronize cannot reach its
     * queue: going back to synchronous runs drains it instead, so that
     * queued work never lands in a later timing. */
    if (sync) f->now_ms = fmax(f->now_ms, f->device_done_ms);
    return IB_OK;
}

static ib_status fake_reopen(ib_workload *w, ib_error *err)
{
    fake *f = impl(w);
    IB_FAIL_IF(f->lost, err, IB_ERR_DEVICE_LOST, "fake: device lost");
    f->now_ms = fmax(f->now_ms, f->device_done_ms); /* a session ends after its work */
    f->runs = 0;                                    /* the next run is the cold one again */
    return IB_OK;
}

static ib_status fake_fill_inputs(ib_workload *w, bool zeros, ib_error *err)
{
    fake *f = impl(w);
    IB_FAIL_IF(f->lost, err, IB_ERR_DEVICE_LOST, "fake: device lost");
    f->zero_inputs = zeros;
    return IB_OK;
}

/* A new session with TF32 on or off: cold again, like reopen. */
static ib_status fake_set_tf32(ib_workload *w, bool on, ib_error *err)
{
    fake *f = impl(w);
    IB_FAIL_IF(!(f->script.tf32_factor > 0), err, IB_ERR_UNSUPPORTED, "fake: no TF32 (tf32_factor 0)");
    IB_TRY(fake_reopen(w, err));
    f->tf32_on = on;
    ib__strlcpy(w->info.math, on ? "tf32" : "fp32", sizeof w->info.math);
    w->info.math_default = false;
    return IB_OK;
}

static void fake_destroy(ib_workload *w)
{
    ib__fake_power_free(&impl(w)->power);
    free(w->impl);
    free(w);
}

static ib_status hold_create(ib_workload *w, void **state, ib_error *err)
{
    (void)err;
    *state = impl(w);
    return IB_OK;
}

static ib_status hold_stream(ib_workload *w, void *state, double timeout_ms, ib_error *err)
{
    (void)w;
    fake *f = state;
    IB_FAIL_IF(f->held, err, IB_ERR_INVALID_ARG, "fake: the stream is held already");
    f->held = true;
    f->hold_base_ms = fmax(f->now_ms, f->device_done_ms);
    f->hold_until_ms = f->hold_base_ms + timeout_ms;
    f->device_done_ms = f->hold_base_ms;
    return IB_OK;
}

static ib_status hold_release(void *state, bool *timed_out, ib_error *err)
{
    (void)err;
    fake *f = state;
    if (f->held) end_hold(f);
    *timed_out = f->hold_timed_out;
    f->hold_timed_out = false;
    return IB_OK;
}

static void hold_destroy(void *state) { (void)state; }

static const ib__hold_ops fake_hold_ops = {
    .create = hold_create,
    .hold = hold_stream,
    .release = hold_release,
    .destroy = hold_destroy,
};

static const ib__workload_ops fake_ops = {
    .version = IB__WORKLOAD_OPS_VERSION,
    .set_batch = fake_set_batch,
    .run = fake_run,
    .set_run_sync = fake_set_run_sync,
    .run_with_copies = fake_run_with_copies,
    .reopen = fake_reopen,
    .fill_inputs = fake_fill_inputs,
    .copy_in = fake_copy,
    .copy_out = fake_copy,
    .destroy = fake_destroy,
    .set_tf32 = fake_set_tf32,
};

/* The virtual device timer: the device time of a run is its scripted
 * duration, without the host overhead. A mark fires once the work queued
 * before it is done. */
static ib_status timer_create(void *target, int device_id, void **state, ib_error *err)
{
    (void)device_id;
    fake_timer *t = calloc(1, sizeof *t);
    IB_FAIL_IF(!t, err, IB_ERR_NO_MEMORY, "out of memory");
    t->f = target;
    *state = t;
    return IB_OK;
}

static ib_status timer_start(void *state, ib_error *err)
{
    (void)err;
    fake_timer *t = state;
    t->start_held = t->f->held;
    t->start_ms = t->start_held ? t->f->device_done_ms
                                : fmax(t->f->now_ms + t->f->script.host_overhead_ms, t->f->device_done_ms);
    return IB_OK;
}

static ib_status timer_stop(void *state, ib_error *err)
{
    (void)err;
    fake_timer *t = state;
    t->stop_held = t->f->held;
    t->stop_ms = t->stop_held ? t->f->device_done_ms : fmax(t->f->now_ms, t->f->device_done_ms);
    return IB_OK;
}

static ib_status timer_elapsed(void *state, double *ms, ib_error *err)
{
    (void)err;
    fake_timer *t = state;
    if (t->start_held) t->start_ms += t->f->hold_shift_ms;
    if (t->stop_held) t->stop_ms += t->f->hold_shift_ms;
    t->start_held = t->stop_held = false;
    t->f->now_ms = fmax(t->f->now_ms, t->stop_ms); /* waits for the stop mark */
    *ms = t->stop_ms - t->start_ms;
    double step = t->f->script.timer_resolution_ms;
    if (step > 0) *ms = fmax(step, round(*ms / step) * step);
    return IB_OK;
}

static const ib__timer_ops fake_timer_ops = {
    .create = timer_create,
    .start = timer_start,
    .stop = timer_stop,
    .elapsed_ms = timer_elapsed,
    .destroy = free,
};

/* ------------------------------------------------------------------------ */
/* The scripted energy counter                                               */
/* ------------------------------------------------------------------------ */

static bool fake_energy(void *w, ib__energy_counter *c, char *note, size_t cap)
{
    return ib__fake_power_counter(&impl(w)->power, c, note, cap);
}

ib_status ib__workload_open_fake(const ib__fake_script *s, ib_workload **out, ib_error *err)
{
    *out = NULL;
    IB_FAIL_IF(!s->duration_ms, err, IB_ERR_INVALID_ARG, "fake: no duration script");
    ib_workload *w = calloc(1, sizeof *w);
    fake *f = calloc(1, sizeof *f);
    if (!w || !f) {
        free(w);
        free(f);
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory");
    }
    f->script = *s;
    f->run_sync = true;
    f->power = (ib__fake_power){ .step_ms = s->energy_step_ms,
                                 .idle_w = s->idle_w,
                                 .unit_j = s->energy_unit_j,
                                 .start = s->energy_start,
                                 .range = s->energy_range,
                                 .now_ms = &f->now_ms };
    w->ops = &fake_ops;
    w->impl = f;
    w->clock = (ib__clock){ .now_ms = virtual_now,
                            .ctx = f,
                            .resolution_ms = s->timer_resolution_ms,
                            .wait_until_ms = virtual_wait_until };
    w->own_timer = &fake_timer_ops;
    w->timer_target = f;
    w->caps = IB_CAP_ASYNC_RUN | IB_CAP_HOST_INPUT_RUN | IB_CAP_REOPEN | IB_CAP_REFILL_INPUTS |
              (s->has_device_timer ? IB_CAP_DEVICE_TIMING : 0) | (s->has_batch_dim ? IB_CAP_BATCH_DIM : 0) |
              (s->gpu_like ? IB_CAP_GPU : 0);
    w->stream_hold = s->gpu_like && s->has_stream_hold ? &fake_hold_ops : NULL;
    w->own_energy = fake_energy;
    ib__strlcpy(w->info.model, "fake", sizeof w->info.model);
    ib__strlcpy(w->info.provider, "fake", sizeof w->info.provider);
    w->info.device = s->gpu_like ? IB_DEVICE_CUDA : IB_DEVICE_CPU;
    w->info.batch = 1;
    w->info.has_batch_dim = s->has_batch_dim;
    if (s->tf32_factor > 0) { /* the arithmetic stated, as a runtime with TF32 states it */
        f->tf32_on = s->tf32_by_default;
        ib__strlcpy(w->info.math, s->tf32_by_default ? "tf32" : "fp32", sizeof w->info.math);
        w->info.math_default = true;
    }
    *out = w;
    return IB_OK;
}

int64_t ib__fake_runs(const ib_workload *w) { return ((const fake *)w->impl)->runs; }
int64_t ib__fake_set_batches(const ib_workload *w) { return ((const fake *)w->impl)->set_batches; }
bool ib__fake_zero_inputs(const ib_workload *w) { return ((const fake *)w->impl)->zero_inputs; }

/* ------------------------------------------------------------------------ */
/* The fake as a registered backend (--backend fake), for tests: a run of  */
/* us + item_us x batch microseconds on the virtual clock, so that what the */
/* program prints is exact.                                                 */
/* ------------------------------------------------------------------------ */

static double option_duration_ms(int64_t batch, int64_t index, void *ctx)
{
    (void)index;
    const fake *f = ctx;
    return f->run_ms + f->item_ms * (double)batch;
}

/* Applies one --option to the script or to the durations (in us). */
static ib_status apply_fake_option(ib__fake_script *s, long long us[2], const ib_backend_option *o,
                                   ib_error *err)
{
    static const char *const keys[] = { "us",          "item_us",        "oom_above",
                                        "fail_at_run", "energy_step_ms", "idle_w",
                                        "busy_w",      "busy_w_per_item" };
    long long v;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strcmp(o->key, keys[i])) continue;
        IB_TRY(ib__backend_option_int(o, i == 3 || i >= 5 ? 0 : 1, 1000000000, &v, err));
        if (i < 2) us[i] = v;
        if (i == 2) s->oom_above_batch = v;
        if (i == 3) s->fail_at_run = v;
        if (i == 4) s->energy_step_ms = (double)v;
        if (i == 5) s->idle_w = (double)v;
        if (i == 6) s->busy_w = (double)v;
        if (i == 7) s->busy_w_per_item = (double)v;
        return IB_OK;
    }
    return ib__fail(err, IB_ERR_INVALID_ARG,
                    "fake: unknown option '%s' (known: us, item_us, oom_above, fail_at_run, energy_step_ms, "
                    "idle_w, busy_w, busy_w_per_item)",
                    o->key);
}

static ib_status fake_table_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    IB_FAIL_IF(args->device == IB_DEVICE_CUDA, err, IB_ERR_UNSUPPORTED, "fake: runs on the CPU only");
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = option_duration_ms;
    s.has_device_timer = false;
    long long us[2] = { 1000, 0 };
    for (size_t i = 0; i < args->n_options; i++) IB_TRY(apply_fake_option(&s, us, &args->options[i], err));
    ib_workload *w;
    IB_TRY(ib__workload_open_fake(&s, &w, err));
    fake *f = impl(w);
    f->script.ctx = f;
    f->run_ms = (double)us[0] / 1e3;
    f->item_ms = (double)us[1] / 1e3;
    snprintf(w->info.model, sizeof w->info.model, "fake:%lldus+%lldus/item", us[0], us[1]);
    ib_status st = ib_workload_set_batch(w, args->batch, err);
    if (st != IB_OK) {
        ib_workload_destroy(w);
        return st;
    }
    ib__builtin_hand_over(w, out);
    return IB_OK;
}

static const ib_backend_option_decl fake_options[] = {
    { .key = "us", .help = "microseconds a run takes (default 1000)", .values = "1..1000000000" },
    { .key = "item_us",
      .help = "and microseconds more per item of the batch (default 0)",
      .values = "1..1000000000" },
    { .key = "oom_above", .help = "a batch above this runs out of device memory", .values = "1..1000000000" },
    { .key = "fail_at_run", .help = "run N fails (0: none)", .values = "0..1000000000" },
    { .key = "energy_step_ms",
      .help = "a scripted energy counter stepping every N ms (default none)",
      .values = "1..1000000000" },
    { .key = "idle_w", .help = "the scripted device's idle power (default 0)", .values = "0..1000000000" },
    { .key = "busy_w", .help = "its power while running (default 0)", .values = "0..1000000000" },
    { .key = "busy_w_per_item",
      .help = "and watts more per item of the batch (default 0)",
      .values = "0..1000000000" },
};

const ib_backend ib__backend_fake =
    IB__IN_TREE_BACKEND("fake",
                        "a scripted workload on a virtual clock, for tests (--option us=N, item_us=N, "
                        "oom_above=BATCH, fail_at_run=N, energy_step_ms=N, idle_w=W, busy_w=W, "
                        "busy_w_per_item=W)",
                        fake_table_open, fake_options, sizeof fake_options / sizeof fake_options[0], NULL);
