/* Energy per inference: the arithmetic (pure) and the meter (core/energy.h;
 * the method and its error: docs/energy.md). */
#include "core/energy.h"
#include "base/common.h"
#include "core/sessions.h"

#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The arithmetic                                                            */
/* ------------------------------------------------------------------------ */

bool ib__energy_delta(uint64_t v0, uint64_t v1, uint64_t range, uint64_t *delta)
{
    if (range > 0 && (v0 >= range || v1 >= range)) return false;
    if (v1 >= v0) {
        *delta = v1 - v0;
        return true;
    }
    if (range == 0) return false;
    *delta = range - v0 + v1;
    return true;
}

double ib__energy_bound(const ib__energy_window *w)
{
    double length = w->t1_ms - w->t0_ms;
    if (!(length > 0) || !(w->joules > 0)) return INFINITY;
    return fmax(w->end_ms[0], w->end_ms[1]) / length + w->unit_j / w->joules + w->extra;
}

double ib__energy_step_ms(const double *change_ms, size_t n)
{
    if (n < 2) return NAN;
    double step = 0;
    for (size_t i = 1; i < n; i++) step = fmax(step, change_ms[i] - change_ms[i - 1]);
    return step;
}

bool ib__energy_change(double a, double a_bound, double b, double b_bound, double *change, double interval[2])
{
    if (!(a > 0) || !(b > 0) || !(a_bound >= 0 && a_bound < 1) || !(b_bound >= 0 && b_bound < 1))
        return false;
    *change = b / a - 1;
    interval[0] = b * (1 - b_bound) / (a * (1 + a_bound)) - 1;
    interval[1] = b * (1 + b_bound) / (a * (1 - a_bound)) - 1;
    return true;
}

/* A side's log geometric mean, the sd of its log figures and its largest
 * bound; false when it has no figure or one is not a figure. */
static bool side_logs(const ib__energy_side *s, double *mean, double *sd, double *bound)
{
    *bound = 0;
    for (size_t i = 0; i < s->k; i++) {
        if (!(s->joules_per_item[i] > 0) || !(s->bound[i] >= 0 && s->bound[i] < 1)) return false;
        *bound = fmax(*bound, s->bound[i]);
    }
    if (s->k == 0) return false;
    ib__log_mean_sd(s->joules_per_item, s->k, mean, sd);
    return true;
}

bool ib__energy_sessions_change(const ib__energy_side *a, const ib__energy_side *b, double *change,
                                double interval[2])
{
    double ma, sa, ba, mb, sb, bb;
    if (!side_logs(a, &ma, &sa, &ba) || !side_logs(b, &mb, &sb, &bb)) return false;
    if (a->k == 1 && b->k == 1)
        return ib__energy_change(a->joules_per_item[0], ba, b->joules_per_item[0], bb, change, interval);
    /* How much sessions differ: from both sides when both have sessions,
     * else from the side that has, as a comparison of runs is widened. */
    double half = a->k >= 2 && b->k >= 2 ? ib__welch_half(sa, a->k, sb, b->k)
                  : a->k >= 2            ? ib__between_half(sa, a->k - 1, a->k, b->k)
                                         : ib__between_half(sb, b->k - 1, a->k, b->k);
    /* The bounds are limits, not spreads: every figure within its bound,
     * they add to the interval, as they make the interval of two figures. */
    double d = mb - ma;
    *change = expm1(d);
    interval[0] = expm1(d - half + log1p(-bb) - log1p(ba));
    interval[1] = expm1(d + half + log1p(bb) - log1p(-ba));
    return true;
}

double ib__energy_few_samples(const ib_gpu_sample *s, size_t n, int points, double window_ms, double items,
                              int *used)
{
    *used = 0;
    if (n == 0 || points < 1 || !(items > 0)) return NAN;
    size_t first = n > 2 ? 1 : 0, last = n > 2 ? n - 2 : n - 1; /* the during-run samples */
    double sum = 0;
    size_t previous = SIZE_MAX;
    for (int k = 0; k < points; k++) {
        size_t i =
            points > 1 ? first + (last - first) * (size_t)k / (size_t)(points - 1) : (first + last) / 2;
        if (i == previous || !(s[i].power_w > 0)) continue; /* fewer samples than points: each read once */
        previous = i;
        sum += s[i].power_w;
        (*used)++;
    }
    return *used ? sum / *used * (window_ms / 1e3) / items : NAN;
}

static void blank(ib_energy *out)
{
    *out = (ib_energy){
        .source = IB_ENERGY_NONE,
        .window_ms = NAN,
        .items = NAN,
        .joules = NAN,
        .joules_per_item = NAN,
        .items_per_joule = NAN,
        .power_w = NAN,
        .bound = NAN,
        .step_ms = NAN,
        .idle_power_w = NAN,
        .joules_above_idle = NAN,
        .joules_per_item_above_idle = NAN,
        .power_limit_fraction = NAN,
        .timed_ms_per_item = NAN,
    };
}

void ib__energy_none(ib_energy *out, const char *fmt, ...)
{
    blank(out);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->note, sizeof out->note, fmt, ap);
    va_end(ap);
}

/* Why a window's figure is refused, with what would give one. */
static void refuse_bound(const ib__energy_window *w, double length, double step_ms, ib_energy *out)
{
    char step[64] = "";
    if (isfinite(step_ms)) snprintf(step, sizeof step, " (the counter steps every %.4g ms)", step_ms);
    snprintf(out->note, sizeof out->note,
             "a window of %.4g ms reads its energy to +-%.3g%% only (its ends +-%.3g ms%s): above the %.0f%% "
             "a figure needs",
             length, 100 * out->bound, fmax(w->end_ms[0], w->end_ms[1]), step, 100 * IB_ENERGY_MAX_BOUND);
}

void ib__energy_figures(const ib__energy_window *w, double items, double step_ms, double idle_w,
                        ib_energy *out)
{
    blank(out);
    double length = w->t1_ms - w->t0_ms;
    out->window_ms = length;
    out->items = items;
    out->aligned = w->aligned;
    out->step_ms = step_ms;
    out->idle_power_w = idle_w;
    if (!(length > 0)) {
        snprintf(out->note, sizeof out->note, "an empty window: no energy figure");
        return;
    }
    if (!(items > 0)) {
        snprintf(out->note, sizeof out->note, "no inputs in the window: no energy figure");
        return;
    }
    out->bound = ib__energy_bound(w);
    if (!(out->bound <= IB_ENERGY_MAX_BOUND)) {
        refuse_bound(w, length, step_ms, out);
        return;
    }
    out->source = w->source;
    out->joules = w->joules;
    out->joules_per_item = w->joules / items;
    out->items_per_joule = items / w->joules;
    out->power_w = w->joules / (length / 1e3);
    out->joules_above_idle = w->joules - idle_w * length / 1e3;
    out->joules_per_item_above_idle = out->joules_above_idle / items;
}

/* The samples with a power reading inside [t0, t1]. */
static size_t in_window(const ib_gpu_sample *s, size_t n, double t0_ms, double t1_ms, size_t *first)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(s[i].power_w > 0) || s[i].t_ms < t0_ms || s[i].t_ms > t1_ms) continue;
        if (count++ == 0) *first = i;
    }
    return count;
}

bool ib__energy_from_samples(const ib_gpu_sample *s, size_t n, double t0_ms, double t1_ms,
                             ib__energy_window *out)
{
    size_t first = 0;
    if (in_window(s, n, t0_ms, t1_ms, &first) < 2) return false;
    double joules_ms = 0, missed_ms = 0, longest_gap = 0; /* W x ms, ms */
    const ib_gpu_sample *prev = &s[first];
    joules_ms += prev->power_w * (prev->t_ms - t0_ms);
    double head_ms = prev->t_ms - t0_ms;
    for (size_t i = first + 1; i < n; i++) {
        if (!(s[i].power_w > 0) || s[i].t_ms < t0_ms || s[i].t_ms > t1_ms) continue;
        double gap = s[i].t_ms - prev->t_ms;
        joules_ms += (s[i].power_w + prev->power_w) / 2 * gap;
        missed_ms += fabs(s[i].power_w - prev->power_w) / 2 * gap;
        longest_gap = fmax(longest_gap, gap);
        prev = &s[i];
    }
    joules_ms += prev->power_w * (t1_ms - prev->t_ms);
    /* A reading is NVML's average over a trailing window of its own: where
     * in the gap before it the power was is not known, so the longest gap
     * is one more uncertainty of the window's length. */
    double extra = joules_ms > 0 ? missed_ms / joules_ms + longest_gap / (t1_ms - t0_ms) : INFINITY;
    *out = (ib__energy_window){
        .joules = joules_ms / 1e3,
        .t0_ms = t0_ms,
        .t1_ms = t1_ms,
        .end_ms = { head_ms, t1_ms - prev->t_ms },
        .aligned = false,
        .source = IB_ENERGY_SAMPLED,
        .unit_j = 0,
        .extra = extra,
    };
    return true;
}

/* ------------------------------------------------------------------------ */
/* The meter                                                                 */
/* ------------------------------------------------------------------------ */

static double now_ms(const ib__energy_meter *m) { return m->clock.now_ms(m->clock.ctx); }

static void meter_fail(ib__energy_meter *m, const char *why)
{
    if (!m->failed) ib__strlcpy(m->note, why, sizeof m->note);
    m->failed = true;
}

static bool first_read(ib__energy_meter *m)
{
    m->open = true;
    m->step_ms = m->idle_w = NAN;
    m->change_ms = m->before_change_ms = NAN;
    m->read_ms = now_ms(m);
    if (!m->c.read(m->c.state, &m->last)) {
        meter_fail(m, "the energy counter could not be read: no energy figure");
        return false;
    }
    return true;
}

/* A clock that cannot wait (a caller's own, through callbacks) cannot pace
 * the reads: then no meter, said. */
static bool clock_waits(ib__energy_meter *m)
{
    if (m->clock.wait_until_ms) return true;
    snprintf(m->note, sizeof m->note, "the workload's clock is its own and cannot wait: no energy figure");
    m->failed = true;
    return false;
}

/* The counter open gives, read on clock (copied); false without one, the
 * reason in m->note. Whatever is measured (a forward pass, a generation)
 * comes to the meter so: a clock and a counter. */
static bool meter_open_on(ib__energy_meter *m, const ib__clock *clock, ib__energy_open_fn open, void *ctx)
{
    *m = (ib__energy_meter){ .clock = *clock };
    if (!clock_waits(m)) return false;
    if (!open(ctx, &m->c, m->note, sizeof m->note)) {
        m->failed = true;
        return false;
    }
    return first_read(m);
}

/* An ib__energy_open_fn over ctx, a const ib__energy_source: its own
 * counter, else NVML's on its GPU, else none, its cpu_note said. */
static bool source_counter(void *ctx, ib__energy_counter *c, char *note, size_t cap)
{
    const ib__energy_source *s = ctx;
    if (s->own) return s->own(s->self, c, note, cap);
    if (s->on_gpu) return ib__energy_open_gpu(s->device_id, c, note, cap);
    snprintf(note, cap, "%s", s->cpu_note);
    return false;
}

/* A workload's: its own, else NVML's on its GPU (a workload on the CUDA
 * stream). */
static ib__energy_source workload_source(ib_workload *w)
{
    return (ib__energy_source){ w->own_energy, w, ib__workload_can(w, IB_CAP_CUDA_STREAM), w->device_id,
                                IB__ENERGY_CPU_WORKLOAD_NOTE };
}

bool ib__energy_meter_open(ib__energy_meter *m, ib_workload *w)
{
    ib__energy_source s = workload_source(w);
    return meter_open_on(m, &w->clock, source_counter, &s);
}

/* The CPU package's counter: RAPL under root (ctx; NULL: the system's). */
static bool rapl_counter(void *ctx, ib__energy_counter *c, char *note, size_t cap)
{
    return ib__energy_open_rapl(ctx, c, note, cap);
}

bool ib__energy_meter_open_cpu(ib__energy_meter *m, const ib__clock *clock, const char *root)
{
    return meter_open_on(m, clock, rapl_counter, (void *)root);
}

void ib__energy_meter_close(ib__energy_meter *m)
{
    ib__energy_close(&m->c);
    m->open = false;
}

bool ib__energy_meter_poll(ib__energy_meter *m)
{
    if (!m->open || m->failed) return false;
    double t = now_ms(m);
    uint64_t v, delta;
    if (!m->c.read(m->c.state, &v)) {
        meter_fail(m, "a read of the energy counter failed: no energy figure");
        return false;
    }
    if (!ib__energy_delta(m->last, v, m->c.range, &delta)) {
        char why[sizeof m->note];
        snprintf(why, sizeof why,
                 "the energy counter went back from %llu to %llu (a reset): no energy figure",
                 (unsigned long long)m->last, (unsigned long long)v);
        meter_fail(m, why);
        return false;
    }
    m->last = v;
    m->joules += (double)delta * m->c.unit_j;
    bool changed = delta > 0;
    if (changed) {
        m->before_change_ms = m->read_ms;
        m->change_ms = t;
    }
    m->read_ms = t;
    return changed;
}

/* Moves the clock on when the work between two reads did not (a virtual
 * clock, or work shorter than a read): a wait for a change must end. */
static void pace(ib__energy_meter *m, double since_ms)
{
    if (now_ms(m) <= since_ms) m->clock.wait_until_ms(m->clock.ctx, since_ms + IB__ENERGY_POLL_MS);
}

#define LEARN_MAX_CHANGES 64

void ib__energy_learn(ib__energy_meter *m)
{
    if (!m->open || m->failed) return;
    double change_ms[LEARN_MAX_CHANGES], change_j[LEARN_MAX_CHANGES];
    size_t n = 0;
    double t0 = now_ms(m);
    ib__energy_meter_poll(m); /* a change before the start is not one seen */
    for (;;) {
        double t = now_ms(m);
        if ((n >= IB__ENERGY_LEARN_CHANGES && t - t0 >= IB__ENERGY_LEARN_MS) || n == LEARN_MAX_CHANGES ||
            t - t0 >= IB__ENERGY_LEARN_MAX_MS || m->failed)
            break;
        m->clock.wait_until_ms(m->clock.ctx, m->read_ms + IB__ENERGY_POLL_MS);
        if (ib__energy_meter_poll(m)) {
            change_ms[n] = m->change_ms;
            change_j[n++] = m->joules;
        }
    }
    if (m->failed) return;
    if (n < 2) {
        char why[sizeof m->note];
        snprintf(why, sizeof why,
                 "the energy counter changed %zu times in %.0f ms of reads: no energy figure", n,
                 now_ms(m) - t0);
        meter_fail(m, why);
        return;
    }
    m->step_ms = ib__energy_step_ms(change_ms, n);
    m->idle_w = (change_j[n - 1] - change_j[0]) / ((change_ms[n - 1] - change_ms[0]) / 1e3);
}

/* Pads until the counter changes, at most 3 steps: true when it did. */
static ib_status pad_to_change(ib__energy_meter *m, ib__energy_pad_fn pad, void *ctx, double *items,
                               bool *changed, ib_error *err)
{
    double limit_ms = 3 * (isfinite(m->step_ms) ? m->step_ms : IB__ENERGY_LEARN_MAX_MS);
    double t0 = now_ms(m);
    *changed = false;
    *items = 0;
    ib__energy_meter_poll(m); /* a change already past is not the one to align on */
    while (!m->failed && now_ms(m) - t0 < limit_ms) {
        double before = m->read_ms, done = 0;
        IB_TRY(pad(ctx, &done, err));
        *items += done;
        pace(m, before);
        if (ib__energy_meter_poll(m)) {
            *changed = true;
            return IB_OK;
        }
    }
    return IB_OK;
}

ib_status ib__energy_begin(ib__energy_meter *m, ib__energy_pad_fn pad, void *ctx, ib_error *err)
{
    if (!m->open || m->failed) return IB_OK;
    bool changed = false;
    double items;
    if (pad)
        IB_TRY(pad_to_change(m, pad, ctx, &items, &changed, err));
    else
        ib__energy_meter_poll(m);
    m->start_aligned = changed;
    m->start_j = m->joules;
    m->start_ms = changed ? m->change_ms : m->read_ms;
    m->start_unc_ms = changed ? m->change_ms - m->before_change_ms : m->step_ms;
    return IB_OK;
}

ib_status ib__energy_end(ib__energy_meter *m, ib__energy_pad_fn pad, void *ctx, double *pad_items,
                         ib_error *err)
{
    *pad_items = 0;
    if (!m->open || m->failed) return IB_OK;
    bool changed = false;
    if (pad)
        IB_TRY(pad_to_change(m, pad, ctx, pad_items, &changed, err));
    else
        ib__energy_meter_poll(m);
    double end_ms = changed ? m->change_ms : m->read_ms;
    m->window = (ib__energy_window){
        .joules = m->joules - m->start_j,
        .t0_ms = m->start_ms,
        .t1_ms = end_ms,
        .end_ms = { m->start_unc_ms, changed ? m->change_ms - m->before_change_ms : m->step_ms },
        .aligned = m->start_aligned && changed,
        .source = IB_ENERGY_COUNTER,
        .unit_j = m->c.unit_j,
    };
    return IB_OK;
}

void ib__energy_figure(const ib__energy_meter *m, double items, ib_energy *out)
{
    if (!m->open || m->failed) {
        ib__energy_none(out, "%s", m->note);
        return;
    }
    ib__energy_figures(&m->window, items, m->step_ms, m->idle_w, out);
    ib__strlcpy(out->counter, m->c.name, sizeof out->counter);
}

/* The relative bound the window would have if it ended now (aligned on a
 * change at most one poll away): for deciding when it is long enough. */
static double bound_if_ended(const ib__energy_meter *m, double end_unc_ms)
{
    double length = now_ms(m) - m->start_ms;
    if (!(length > 0)) return INFINITY;
    return fmax(m->start_unc_ms, end_unc_ms) / length;
}

/* ------------------------------------------------------------------------ */
/* A measurement's meters                                                    */
/* ------------------------------------------------------------------------ */

void ib__energy_meters_open(ib__energy_meters *m, ib_workload *w, const ib_config *cfg)
{
    ib__energy_source s = workload_source(w);
    ib__energy_meters_open_on(m, &w->clock, &s, cfg);
}

void ib__energy_meters_open_on(ib__energy_meters *m, const ib__clock *clock, const ib__energy_source *src,
                               const ib_config *cfg)
{
    *m = (ib__energy_meters){ .asked = cfg->measure_energy && !cfg->sync };
    if (!m->asked) {
        snprintf(m->why_not, sizeof m->why_not, "%s",
                 cfg->sync ? "not measured in a fleet (--devices, MPI): not built yet"
                           : "not measured (measure_energy off)");
        return;
    }
    if (meter_open_on(&m->device, clock, source_counter, (void *)src)) ib__energy_learn(&m->device);
    /* A backend with a counter of its own (the fake's, on a virtual clock)
     * is not beside the real package: reading RAPL against its clock would
     * mean nothing, and its tests must not depend on the machine's RAPL. */
    if (src->own) {
        m->cpu.failed = true;
        snprintf(m->cpu.note, sizeof m->cpu.note,
                 "the workload counts its own energy: the CPU package not read");
    } else if (ib__energy_meter_open_cpu(&m->cpu, clock, NULL)) {
        ib__energy_learn(&m->cpu);
    }
}

void ib__energy_meters_close(ib__energy_meters *m)
{
    ib__energy_meter_close(&m->device);
    ib__energy_meter_close(&m->cpu);
}

/* The meter the window's ends are aligned on: the device's, else the CPU's. */
static bool aligns_cpu(const ib__energy_meters *m) { return !m->device.open || m->device.failed; }

ib_status ib__energy_meters_begin(ib__energy_meters *m, ib__energy_pad_fn pad, void *ctx, ib_error *err)
{
    if (!m->asked) return IB_OK;
    bool cpu_aligned = aligns_cpu(m);
    IB_TRY(ib__energy_begin(&m->device, pad, ctx, err));
    IB_TRY(ib__energy_begin(&m->cpu, cpu_aligned ? pad : NULL, ctx, err));
    m->host_t0_ms = ib__now_ms();
    return IB_OK;
}

double ib__energy_tick_ms(const ib__energy_counter *c)
{
    if (c->range == 0) return INFINITY;
    double wrap_ms = (double)c->range * c->unit_j / IB__ENERGY_MAX_W * 1e3;
    return fmax(IB__ENERGY_TICK_MS, wrap_ms / 4);
}

void ib__energy_meters_tick(ib__energy_meters *m)
{
    if (!m->asked) return;
    ib__energy_meter *each[] = { &m->device, &m->cpu };
    for (size_t i = 0; i < 2; i++)
        if (each[i]->open && now_ms(each[i]) - each[i]->read_ms >= ib__energy_tick_ms(&each[i]->c))
            ib__energy_meter_poll(each[i]);
}

ib_status ib__energy_meters_end(ib__energy_meters *m, ib__energy_pad_fn pad, void *ctx, double *pad_items,
                                ib_error *err)
{
    *pad_items = 0;
    if (!m->asked) return IB_OK;
    bool cpu_aligned = aligns_cpu(m);
    double cpu_items = 0;
    IB_TRY(ib__energy_end(&m->device, pad, ctx, pad_items, err));
    IB_TRY(ib__energy_end(&m->cpu, cpu_aligned ? pad : NULL, ctx, &cpu_items, err));
    if (cpu_aligned) *pad_items = cpu_items;
    m->host_t1_ms = ib__now_ms();
    return IB_OK;
}

bool ib__energy_meters_usable(const ib__energy_meters *m)
{
    const ib__energy_meter *d = aligns_cpu(m) ? &m->cpu : &m->device;
    return m->asked && d->open && !d->failed;
}

ib_status ib__energy_meters_window(ib__energy_meters *m, ib__energy_pad_fn pad, void *ctx, double unit_ms,
                                   double target_bound, double cap_ms, const volatile int *cancel,
                                   double *items, ib_error *err)
{
    const ib__energy_meter *d = aligns_cpu(m) ? &m->cpu : &m->device;
    *items = 0;
    if (!ib__energy_meters_usable(m)) return IB_OK;
    double done, pad_items;
    IB_TRY(ib__energy_meters_begin(m, pad, ctx, err));
    double t0 = now_ms(d);
    while (bound_if_ended(d, unit_ms) > target_bound && now_ms(d) - t0 < cap_ms) {
        IB_FAIL_IF(ib__cancelled(cancel), err, IB_ERR_INTERRUPTED, "interrupted");
        IB_TRY(pad(ctx, &done, err));
        *items += done;
        ib__energy_meters_tick(m);
    }
    IB_TRY(ib__energy_meters_end(m, pad, ctx, &pad_items, err));
    *items += pad_items;
    return IB_OK;
}

void ib__energy_sampled_figure(const ib_env *env, double sampler_t0_ms, double host_t0_ms, double host_t1_ms,
                               double items, const char *why_no_counter, ib_energy *out)
{
    ib__energy_window w;
    if (!isfinite(sampler_t0_ms) ||
        !ib__energy_from_samples(env->gpu_samples, env->n_gpu_samples, host_t0_ms - sampler_t0_ms,
                                 host_t1_ms - sampler_t0_ms, &w)) {
        ib__energy_none(out, "%s; fewer than two power samples in the window: no energy figure",
                        why_no_counter);
        return;
    }
    ib__energy_figures(&w, items, NAN, NAN, out);
    char line[512];
    snprintf(line, sizeof line, "no energy counter (%s): the sampled power integrated over the window%s%s",
             why_no_counter, out->note[0] ? "; " : "", out->note);
    ib__strlcpy(out->note, line, sizeof out->note);
    ib__strlcpy(out->counter, "NVML power samples", sizeof out->counter);
}

void ib__energy_meters_figures(const ib__energy_meters *m, double items, const ib_env *env,
                               double sampler_t0_ms, ib_energy *device, ib_energy *cpu)
{
    if (!m->asked) {
        ib__energy_none(device, "%s", m->why_not);
        ib__energy_none(cpu, "%s", m->why_not);
        return;
    }
    if (m->device.open || !(env && env->n_gpu_samples >= 2))
        ib__energy_figure(&m->device, items, device);
    else
        ib__energy_sampled_figure(env, sampler_t0_ms, m->host_t0_ms, m->host_t1_ms, items, m->device.note,
                                  device);
    /* Beside the figure: how near the card ran to its limit (capped, it
     * throttles: a question for the figure, docs/energy.md). */
    if (env && env->power_limit_w > 0 && device->source != IB_ENERGY_NONE)
        device->power_limit_fraction = device->power_w / env->power_limit_w;
    ib__energy_figure(&m->cpu, items, cpu);
}
