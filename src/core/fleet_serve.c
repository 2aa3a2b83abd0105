/* serve on several devices at once (docs/fleet.md): a host thread per
 * device, each serving its share of the host's rate (src/core/serve.c with
 * a fleet's hooks). The devices meet before every rate, so that its
 * schedules start together, and after it, so that every device's search
 * goes on one verdict (every device met the target) and takes the same next
 * rate; then the host's aggregate at each rate over the common window
 * (src/core/fleet.c). */
#include "core/fleet.h"
#include "core/latency.h"
#include "core/serve.h"
#include "env/env.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct fleet_serve fleet_serve;

/* One device: its share of the configuration, what it publishes to the
 * others at each meeting, and its summary at each rate. */
typedef struct device_run {
    fleet_serve *fleet;
    size_t index;
    ib_workload *const *ws;
    size_t instances;
    ib_serve_config cfg; /* its share */
    double rates[IB_SERVE_MAX_RATES];
    double *trace; /* its share of a schedule file */
    ib_env *env;
    ib__gpu_sampler *sampler;
    /* Written before a meeting, read by every device after it (and not
     * written again before the next meeting). */
    bool failed, met, compute_over;
    double capacity;
    ib_fleet_worker *summaries; /* [IB_SERVE_MAX_RATES]: one per rate */
    size_t n_rates;
    ib_serve_result *serve;
    ib_status status;
    ib_error err;
    pthread_t thread;
} device_run;

struct fleet_serve {
    size_t n;
    device_run *devices;
    ib__fleet_gate start;
    pthread_barrier_t barrier;
};

static void meet(device_run *d) { pthread_barrier_wait(&d->fleet->barrier); }

static bool any_failed(const fleet_serve *f)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->devices[i].failed) return true;
    return false;
}

/* After warm-up: go on when every device warmed up; the search starts at
 * half the slowest device's capacity (each device's share is one rate). */
static bool on_warmed(void *user, ib_status st, double *capacity)
{
    device_run *d = user;
    d->failed = st != IB_OK;
    d->capacity = capacity ? *capacity : INFINITY;
    meet(d);
    fleet_serve *f = d->fleet;
    if (any_failed(f)) return false;
    for (size_t i = 0; i < f->n; i++) *capacity = fmin(*capacity, f->devices[i].capacity);
    if (d->cfg.run.sample_gpu_state && ib__workload_can(d->ws[0], IB_CAP_CUDA_STREAM))
        d->sampler = ib__gpu_sampler_start(d->env, d->ws[0]->device_id, IB__GPU_SAMPLE_PERIOD_MS);
    return true;
}

static void on_before_rate(void *user) { meet(user); }

/* After a rate: this device's summary of it, then the fleet's verdict. */
static ib__serve_verdict on_after_rate(void *user, ib_status st, const ib_serve_point *pt,
                                       const double *arrival_ms, const double *total_ms, size_t n)
{
    device_run *d = user;
    ib_fleet_worker *w = &d->summaries[d->n_rates++];
    *w = (ib_fleet_worker){ .index = (int)d->index, .rank = -1, .local_rank = -1 };
    if (ib__fleet_worker_from_requests(arrival_ms, total_ms, n, &pt->total, st, d->err.message, w) != IB_OK)
        ib_fleet_worker_failed(IB_ERR_NO_MEMORY, "out of memory summarizing a rate", w);
    d->failed = st != IB_OK || w->status != IB_OK;
    d->met = pt->met;
    d->compute_over = pt->compute_at_percentile_ms > d->cfg.slo_ms;
    meet(d);
    fleet_serve *f = d->fleet;
    ib__serve_verdict v = { .met = true };
    for (size_t i = 0; i < f->n; i++) {
        const device_run *o = &f->devices[i];
        v.met = v.met && o->met && !o->failed;
        v.compute_over = v.compute_over || o->compute_over;
        v.stop = v.stop || o->failed;
    }
    return v;
}

static void *device_main(void *arg)
{
    device_run *d = arg;
    if (!ib__fleet_gate_wait(&d->fleet->start)) return NULL;
    const ib__serve_hooks hooks = {
        .user = d, .warmed = on_warmed, .before_rate = on_before_rate, .after_rate = on_after_rate
    };
    ib__env_capture(d->env, d->ws[0]);
    d->status = ib__measure_serve_hooked(d->ws, d->instances, &d->cfg, &hooks, d->serve, &d->err);
    ib__gpu_sampler_stop(d->sampler);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Each device's share                                                       */
/* ------------------------------------------------------------------------ */

/* Device d of n: 1/n of every host rate, its own Poisson seed, every n-th
 * request of a schedule file (round-robin, as a balancer deals them). */
static ib_status share(const ib_serve_config *host, size_t d, size_t n, device_run *out, ib_error *err)
{
    out->cfg = *host;
    out->cfg.on_request = NULL; /* one device's hand-over, from every thread at once: not in a fleet */
    if (d > 0) out->cfg.run.progress = NULL; /* one progress line: the first device's */
    out->cfg.seed = host->seed + d;
    for (size_t i = 0; i < host->n_rates; i++) out->rates[i] = host->rates[i] / (double)n;
    out->cfg.rates = host->n_rates ? out->rates : NULL;
    out->cfg.start_rate = host->start_rate / (double)n;
    out->cfg.min_rate = host->min_rate / (double)n;
    if (host->arrivals != IB_ARRIVALS_TRACE) return IB_OK;
    out->cfg.n_trace = (host->n_trace - d + n - 1) / n;
    out->trace = malloc(out->cfg.n_trace * sizeof *out->trace);
    IB_FAIL_IF(!out->trace, err, IB_ERR_NO_MEMORY, "out of memory dealing the schedule");
    for (size_t i = 0; i < out->cfg.n_trace; i++) out->trace[i] = host->trace_ms[d + i * n];
    out->cfg.trace_ms = out->trace;
    return IB_OK;
}

static ib_status validate(ib_workload *const *ws, size_t n, size_t instances, const ib_serve_config *cfg,
                          ib_error *err)
{
    IB_FAIL_IF(!ws || !cfg || n < 1 || n > IB_FLEET_MAX_WORKERS || instances < 1, err, IB_ERR_INVALID_ARG,
               "a fleet serves on 1 to %d devices, each with an instance or more", IB_FLEET_MAX_WORKERS);
    IB_FAIL_IF(cfg->concurrency > 0, err, IB_ERR_UNSUPPORTED,
               "a closed loop (concurrency) runs on one device, not a fleet");
    IB_FAIL_IF(cfg->arrivals == IB_ARRIVALS_TRACE && cfg->n_trace < n, err, IB_ERR_INVALID_ARG,
               "a schedule of %zu requests cannot be dealt to %zu devices", cfg->n_trace, n);
    return IB_OK;
}

static void free_devices(fleet_serve *f)
{
    for (size_t i = 0; f->devices && i < f->n; i++) {
        free(f->devices[i].trace);
        free(f->devices[i].env);
        free(f->devices[i].summaries);
    }
    free(f->devices);
}

static ib_status prepare(fleet_serve *f, ib_workload *const *ws, size_t instances, const ib_serve_config *cfg,
                         ib_fleet_serve_result *out, ib_error *err)
{
    f->devices = calloc(f->n, sizeof *f->devices);
    out->serve = calloc(f->n, sizeof *out->serve);
    out->who = calloc(f->n, sizeof *out->who);
    IB_FAIL_IF(!f->devices || !out->serve || !out->who, err, IB_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < f->n; i++) {
        device_run *d = &f->devices[i];
        *d = (device_run){ .fleet = f, .index = i, .ws = ws + i * instances, .instances = instances };
        d->serve = &out->serve[i];
        d->env = calloc(1, sizeof *d->env);
        d->summaries = calloc(IB_SERVE_MAX_RATES, sizeof *d->summaries);
        IB_FAIL_IF(!d->env || !d->summaries, err, IB_ERR_NO_MEMORY, "out of memory");
        IB_TRY(share(cfg, i, f->n, d, err));
    }
    return IB_OK;
}

/* Runs every device's thread, or none when one cannot start. */
static ib_status run_threads(fleet_serve *f, ib_error *err)
{
    f->start = (ib__fleet_gate)IB__FLEET_GATE_INIT;
    IB_FAIL_IF(pthread_barrier_init(&f->barrier, NULL, (unsigned)f->n) != 0, err, IB_ERR_NO_MEMORY,
               "cannot make the devices' barrier");
    size_t started = 0;
    while (started < f->n &&
           pthread_create(&f->devices[started].thread, NULL, device_main, &f->devices[started]) == 0)
        started++;
    ib__fleet_gate_open(&f->start, started == f->n ? 1 : -1);
    for (size_t i = 0; i < started; i++) pthread_join(f->devices[i].thread, NULL);
    pthread_barrier_destroy(&f->barrier);
    IB_FAIL_IF(started < f->n, err, IB_ERR_NO_MEMORY, "cannot start the thread of device %zu of %zu",
               started + 1, f->n);
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* The host at each rate                                                     */
/* ------------------------------------------------------------------------ */

static void copy_gpu_state(const ib_fleet_worker *from, ib_fleet_worker *to)
{
    to->sm_clock_pct = from->sm_clock_pct;
    to->max_temperature_c = from->max_temperature_c;
    to->mean_power_w = from->mean_power_w;
    to->throttle_reasons = from->throttle_reasons;
}

/* Who each device is, its GPU's state over the run, and how it ended (its
 * own search not meeting the target is no failure: the host's verdict is
 * the fleet's). */
static void describe_devices(const fleet_serve *f, ib_fleet_serve_result *out)
{
    for (size_t i = 0; i < f->n; i++) {
        const device_run *d = &f->devices[i];
        ib_fleet_worker *w = &out->who[i];
        bool failed = d->status != IB_OK && d->status != IB_ERR_NOT_MET;
        *w = (ib_fleet_worker){ .index = (int)i, .rank = -1, .local_rank = -1, .numa_node = -1 };
        w->items_per_s = NAN;
        if (failed) ib_fleet_worker_failed(d->status, d->err.message, w);
        ib__fleet_worker_identity(d->env, d->ws[0]->info.device, w);
        ib__fleet_worker_gpu_state(d->env, w);
        out->partial = out->partial || failed;
        if (failed && out->stop_status == IB_OK) out->stop_status = d->status;
    }
}

/* Rate r of every device: its summary (who it is from out->who), the
 * host's aggregate, the host's offered rate and verdict. */
static ib_status aggregate_rate(const fleet_serve *f, size_t r, ib_fleet_serve_result *out, ib_error *err)
{
    ib_fleet_serve_rate *rate = &out->rates[r];
    rate->devices = calloc(f->n, sizeof *rate->devices);
    IB_FAIL_IF(!rate->devices, err, IB_ERR_NO_MEMORY, "out of memory");
    rate->met = out->cfg->slo_ms > 0;
    for (size_t i = 0; i < f->n; i++) {
        ib_fleet_worker *w = &rate->devices[i], *who = &out->who[i];
        const ib_serve_point *pt = &out->serve[i].points[r];
        *w = f->devices[i].summaries[r];
        memcpy(w->device, who->device, sizeof w->device);
        memcpy(w->name, who->name, sizeof w->name);
        memcpy(w->uuid, who->uuid, sizeof w->uuid);
        memcpy(w->pci_bus_id, who->pci_bus_id, sizeof w->pci_bus_id);
        w->numa_node = who->numa_node;
        copy_gpu_state(who, w);
        rate->offered_rate += pt->offered_rate;
        rate->met = rate->met && pt->met && w->status == IB_OK;
    }
    ib_error none;
    /* No device measured at this rate: the aggregate says so (straggler -1). */
    ib__fleet_aggregate_as(IB_RESULT_SERVE, rate->devices, f->n, NULL, &rate->host, &none);
    rate->host.serve = out;
    if (rate->met && (!out->found || rate->offered_rate > out->rates[out->best].offered_rate)) {
        out->found = true;
        out->best = r;
    }
    return IB_OK;
}

static ib_status assemble(const fleet_serve *f, ib_fleet_serve_result *out, ib_error *err)
{
    describe_devices(f, out);
    size_t n_rates = IB_SERVE_MAX_RATES;
    for (size_t i = 0; i < f->n; i++) {
        if (f->devices[i].n_rates < n_rates) n_rates = f->devices[i].n_rates;
        out->searched = out->searched || out->serve[i].searched;
    }
    if (n_rates == 0) {
        ib_error none;
        ib__fleet_aggregate_as(IB_RESULT_SERVE, out->who, f->n, NULL, &out->unserved, &none);
        out->unserved.serve = out;
        out->shown = &out->unserved;
        return IB_OK;
    }
    out->rates = calloc(n_rates, sizeof *out->rates);
    IB_FAIL_IF(!out->rates, err, IB_ERR_NO_MEMORY, "out of memory");
    out->n_rates = n_rates;
    for (size_t r = 0; r < n_rates; r++) IB_TRY(aggregate_rate(f, r, out, err));
    out->shown = &out->rates[out->found ? out->best : n_rates - 1].host;
    return IB_OK;
}

/* The first failed device's error, named; else IB_ERR_NOT_MET when a
 * target was searched and no rate met it. */
static ib_status outcome(const fleet_serve *f, const ib_fleet_serve_result *out, ib_error *err)
{
    for (size_t i = 0; i < f->n; i++)
        if (out->who[i].status != IB_OK)
            return ib__fail(err, out->who[i].status, "device %zu: %s", i, out->who[i].error);
    if (out->cfg->slo_ms > 0 && !out->found)
        return ib__fail(err, IB_ERR_NOT_MET, "no rate measured met p%g <= %g ms on every device",
                        out->cfg->slo_percentile * 100, out->cfg->slo_ms);
    return IB_OK;
}

ib_status ib_measure_fleet_serve(ib_workload *const *ws, size_t n_devices, size_t instances,
                                 const ib_serve_config *cfg, ib_fleet_serve_result *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    IB_TRY(validate(ws, n_devices, instances, cfg, err));
    out->n_devices = n_devices;
    out->cfg = cfg;
    fleet_serve f = { .n = n_devices };
    ib_status st = prepare(&f, ws, instances, cfg, out, err);
    if (st == IB_OK) st = run_threads(&f, err);
    if (st == IB_OK) st = assemble(&f, out, err);
    if (st == IB_OK) st = outcome(&f, out, err);
    free_devices(&f);
    return st;
}

void ib_fleet_serve_result_free(ib_fleet_serve_result *r)
{
    if (!r) return;
    for (size_t i = 0; r->rates && i < r->n_rates; i++) free(r->rates[i].devices);
    free(r->rates);
    free(r->serve);
    free(r->who);
    memset(r, 0, sizeof *r);
}
