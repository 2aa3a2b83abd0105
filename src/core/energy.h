/* Energy per inference (docs/energy.md): the arithmetic on a cumulative
 * energy counter that moves in steps (pure functions, tested exactly), and
 * the meter that reads one around a window of work, aligning the window's
 * ends on the counter's changes. What a measurement needs is: open a meter
 * (ib__energy_meter_open), learn the counter's step and the idle power
 * before the timed phase (ib__energy_learn), then around the work
 * ib__energy_begin and ib__energy_end, each given the work to keep doing
 * while it waits for a change, and ib__energy_figure with the count of
 * items the window held: inputs for a forward pass, tokens for generation
 * (src/core/generate.c calls it so: begin, its steps with
 * ib__energy_meter_poll between them, end, then the figure over the
 * tokens). */
#ifndef IB_CORE_ENERGY_H
#define IB_CORE_ENERGY_H

#include "workload/workload.h"
#include "env/energy.h"

/* ------------------------------------------------------------------------ */
/* The arithmetic                                                            */
/* ------------------------------------------------------------------------ */

/* The counts between two reads v0 then v1 of a counter that goes back to 0
 * at range (0: never): false when v1 < v0 without a range, or either read
 * lies outside it (a reset, not a wrap: no figure). At most one wrap
 * between two reads is assumed: a meter reads often enough for that. */
bool ib__energy_delta(uint64_t v0, uint64_t v1, uint64_t range, uint64_t *delta);

/* A window as read: the joules counted between its two ends (on the
 * counter's clock), and each end's uncertainty: how far the energy the
 * counter holds there may lie from the end's time (the counter's step
 * at an end not aligned on a change; the gap between the reads either
 * side of the change at an aligned one). */
typedef struct ib__energy_window {
    double joules;
    double t0_ms, t1_ms;
    double end_ms[2]; /* uncertainty of the start, of the end */
    bool aligned;     /* both ends at changes */
    ib_energy_source source;
    double unit_j; /* one count of the counter (the reads' own rounding) */
    double extra;  /* a relative bound the source adds (sampled power) */
} ib__energy_window;

/* The relative bound on joules over the window, hence on every figure per
 * item or per second: the counted interval may be longer or shorter than
 * the window by the larger end uncertainty, at the window's average power
 * (max(end) / length), plus one count in the joules and the source's own
 * (extra). INFINITY for an empty window or no joules. */
double ib__energy_bound(const ib__energy_window *w);

/* The longest gap between consecutive changes at change_ms[0..n): what an
 * end not aligned on a change may be off by. NaN with fewer than two. */
double ib__energy_step_ms(const double *change_ms, size_t n);

/* The figures of window w over items, with idle_w (NaN unknown) and the
 * step learned (NaN unknown), into *out. No figure (source NONE, the
 * reason in note) when the bound is above IB_ENERGY_MAX_BOUND, the window
 * is empty or holds no items. */
void ib__energy_figures(const ib__energy_window *w, double items, double step_ms, double idle_w,
                        ib_energy *out);

/* The change of energy per item from a (baseline) to b, each with its
 * relative bound: *change = b / a - 1, and the interval every pair of
 * values inside the bounds gives: [b(1 - bb) / (a(1 + ba)), b(1 + bb) /
 * (a(1 - ba))] - 1. False when either figure is missing (NaN). */
bool ib__energy_change(double a, double a_bound, double b, double b_bound, double *change,
                       double interval[2]);

/* One side of a change of energy: a figure a session (a result of one
 * process: one), k of them, each joules per item > 0 with its relative
 * bound in [0, 1). */
typedef struct ib__energy_side {
    const double *joules_per_item, *bound;
    size_t k;
} ib__energy_side;

/* The change of energy per item from sessions a (baseline) to b: *change =
 * the ratio of their geometric means less 1, and its interval on the log
 * scale: the change's spread between sessions (Welch's t over the log
 * figures when both sides have 2 or more; ib__between_half of the side
 * that has them when one does, the other counting one) with both sides'
 * largest bound added. One figure a side: ib__energy_change's exactly.
 * False when a side has no figure or one is not a figure. */
bool ib__energy_sessions_change(const ib__energy_side *a, const ib__energy_side *b, double *change,
                                double interval[2]);

/* The classic way: the mean of at most `points` power readings of s[0..n)
 * (evenly spread over those taken during the runs: the first and last,
 * before and after, left out when there are others; readings of 0 W
 * skipped) times window_ms, over items, in J. *used: how many were read;
 * NaN when none. */
double ib__energy_few_samples(const ib_gpu_sample *s, size_t n, int points, double window_ms, double items,
                              int *used);

/* An ib_energy with no figure and note (printf-style) as the reason. */
void ib__energy_none(ib_energy *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Without a counter: the power samples s[0..n) (t_ms, power_w; those with
 * power 0 are not read) integrated by trapezoids over [t0_ms, t1_ms],
 * the power held flat beyond the first and last sample. The window's end
 * uncertainties are the stretches held flat; its extra bound what the
 * trapezoids may miss between two samples (the sum of |p(i+1) - p(i)| x
 * their gap / 2, over the joules) plus the longest gap over the window (a
 * reading averages a trailing window of its own). False with fewer than
 * two samples in the window. */
bool ib__energy_from_samples(const ib_gpu_sample *s, size_t n, double t0_ms, double t1_ms,
                             ib__energy_window *out);

/* ------------------------------------------------------------------------ */
/* The meter                                                                 */
/* ------------------------------------------------------------------------ */

/* How often the meter reads the counter while it waits for a change (the
 * aligned ends' uncertainty when nothing else is done between reads). */
#define IB__ENERGY_POLL_MS 0.5
/* Learning: at least this long and this many changes, at most the cap. */
#define IB__ENERGY_LEARN_MS 250.0
#define IB__ENERGY_LEARN_CHANGES 4
#define IB__ENERGY_LEARN_MAX_MS 3000.0

typedef struct ib__energy_meter {
    ib__energy_counter c;
    ib__clock clock; /* times the reads: the measured work's (virtual for a fake) */
    bool open;
    uint64_t last;            /* the last count read */
    double joules;            /* counted since opened (wraps undone) */
    double read_ms;           /* when last read */
    double change_ms;         /* the read that saw the last change */
    double before_change_ms;  /* the read before it */
    double step_ms, idle_w;   /* learned; NaN unknown */
    double start_j, start_ms; /* the window's start */
    double start_unc_ms;
    bool start_aligned;
    ib__energy_window window; /* after ib__energy_end */
    bool failed;              /* a read failed or went back: no figure */
    char note[200];           /* why there is no figure */
} ib__energy_meter;

/* What a measured thing (a workload, a generation workload) counts its
 * energy with: a counter of its own (a fake's scripted one) when own is
 * set, else NVML's on its GPU when it runs on one, else none. */
typedef struct ib__energy_source {
    ib__energy_open_fn own; /* NULL: none of its own */
    void *self;             /* own's ctx: the measured thing */
    bool on_gpu;
    int device_id;        /* the GPU's (CUDA's numbering) */
    const char *cpu_note; /* why there is none on the CPU */
} ib__energy_source;

/* The workload's own counter (w->own_energy), else a GPU workload's
 * (NVML on its device); false without one, the reason in m->note. */
bool ib__energy_meter_open(ib__energy_meter *m, ib_workload *w);
/* The CPU package's (RAPL under root; NULL: /sys/class/powercap), read on
 * clock. */
bool ib__energy_meter_open_cpu(ib__energy_meter *m, const ib__clock *clock, const char *root);
void ib__energy_meter_close(ib__energy_meter *m);

/* Reads the counter: true when its count changed since the last read. A
 * failed read marks the meter failed. */
bool ib__energy_meter_poll(ib__energy_meter *m);

/* What the window's ends pad with while waiting for a change: one unit of
 * work (a run, a few back-to-back runs), *items what it did. */
typedef ib_status (*ib__energy_pad_fn)(void *ctx, double *items, ib_error *err);

/* Learns the step and the idle power (the device idle meanwhile): reads
 * every IB__ENERGY_POLL_MS until IB__ENERGY_LEARN_CHANGES changes and
 * IB__ENERGY_LEARN_MS have passed, at most IB__ENERGY_LEARN_MAX_MS (a
 * counter that does not change in that time: no figure). */
void ib__energy_learn(ib__energy_meter *m);

/* Starts the window: with pad, at the next change (pad called until it
 * comes: its items are outside the window), else now, unaligned. A change
 * that does not come within 3 steps leaves the start unaligned. */
ib_status ib__energy_begin(ib__energy_meter *m, ib__energy_pad_fn pad, void *ctx, ib_error *err);

/* Ends the window: with pad, at the next change (pad called until it
 * comes; *pad_items what it did, inside the window), else now. */
ib_status ib__energy_end(ib__energy_meter *m, ib__energy_pad_fn pad, void *ctx, double *pad_items,
                         ib_error *err);

/* The figures of the window just ended over items (inputs, tokens). */
void ib__energy_figure(const ib__energy_meter *m, double items, ib_energy *out);

/* ------------------------------------------------------------------------ */
/* A measurement's meters                                                    */
/* ------------------------------------------------------------------------ */

/* During the work a counter is read only as often as its wraps need (a
 * wrap between two reads must not be missed; ib__energy_tick_ms): a
 * quarter of its shortest wrap, its range drawn at IB__ENERGY_MAX_W, and
 * at most every IB__ENERGY_TICK_MS. A counter that does not wrap (NVML's
 * 64 bits of mJ) is read at the window's ends alone: every read between
 * is host time the measured loop waits on. */
#define IB__ENERGY_TICK_MS 10.0
#define IB__ENERGY_MAX_W 2000.0
double ib__energy_tick_ms(const ib__energy_counter *c);
/* A window whose time an item is over this times the timed runs' is said
 * to have run slower (ib_energy.timed_ms_per_item). */
#define IB__ENERGY_SLOW_WINDOW 1.1

/* What latency and throughput read: the device's counter (aligned on its
 * changes) and the CPU package's (read at the same instants; aligned
 * itself when the device has none), and the window's ends on the host's
 * real clock, for integrating sampled power where the device has no
 * counter. */
typedef struct ib__energy_meters {
    ib__energy_meter device, cpu;
    bool asked;                    /* cfg->measure_energy, and not in a fleet */
    char why_not[96];              /* !asked: why */
    double host_t0_ms, host_t1_ms; /* ib__now_ms at the window's ends */
} ib__energy_meters;

/* The device meter's note on a workload that runs on the CPU (no counter
 * of its own, no CUDA stream): its energy is the CPU package's. */
#define IB__ENERGY_CPU_WORKLOAD_NOTE "a CPU workload: no GPU energy counter"

/* Opens the meters cfg asks for and learns their steps and the idle power
 * (the device idle: call it before the cold run). */
void ib__energy_meters_open(ib__energy_meters *m, ib_workload *w, const ib_config *cfg);
/* The same for what src counts with, read on clock (a counter of its own,
 * a fake's on a virtual clock: the CPU package is then not read). */
void ib__energy_meters_open_on(ib__energy_meters *m, const ib__clock *clock, const ib__energy_source *src,
                               const ib_config *cfg);
void ib__energy_meters_close(ib__energy_meters *m);
ib_status ib__energy_meters_begin(ib__energy_meters *m, ib__energy_pad_fn pad, void *ctx, ib_error *err);
/* Reads each counter when its ib__energy_tick_ms passed since its last read. */
void ib__energy_meters_tick(ib__energy_meters *m);
ib_status ib__energy_meters_end(ib__energy_meters *m, ib__energy_pad_fn pad, void *ctx, double *pad_items,
                                ib_error *err);
/* A window of its own grows until its bound would be this, or the cap is
 * reached (its figure is still given when the bound is within
 * IB_ENERGY_MAX_BOUND): a throughput point's, a generation's. */
#define IB__ENERGY_TARGET_BOUND 0.01
#define IB__ENERGY_WINDOW_CAP_MS 3000.0

/* Whether a window would be read: asked, and the meter its ends align on
 * (the device's, else the CPU's) open. */
bool ib__energy_meters_usable(const ib__energy_meters *m);

/* A window of its own, grown: begin (aligned, pad until a change), pad
 * until the bound would be target_bound (each pad about unit_ms long) or
 * cap_ms have passed on the meters' clock, end (aligned). *items: what the
 * pads inside the window did, those of the end's alignment included.
 * IB_ERR_INTERRUPTED when cancel is set. Without a counter (or not
 * asked: !ib__energy_meters_usable) nothing is padded: *items 0. */
ib_status ib__energy_meters_window(ib__energy_meters *m, ib__energy_pad_fn pad, void *ctx, double unit_ms,
                                   double target_bound, double cap_ms, const volatile int *cancel,
                                   double *items, ib_error *err);
/* The figures over items; where the device has no counter but env holds
 * power samples (taken by a sampler whose time 0 is sampler_t0_ms on
 * ib__now_ms's clock; NaN: none), the sampled power integrated instead. */
/* The sampled power of env (time 0 at sampler_t0_ms) over [host_t0_ms,
 * host_t1_ms] of ib__now_ms's clock, over items, into *out; its note
 * begins with why_no_counter. */
void ib__energy_sampled_figure(const ib_env *env, double sampler_t0_ms, double host_t0_ms, double host_t1_ms,
                               double items, const char *why_no_counter, ib_energy *out);
void ib__energy_meters_figures(const ib__energy_meters *m, double items, const ib_env *env,
                               double sampler_t0_ms, ib_energy *device, ib_energy *cpu);

#endif
