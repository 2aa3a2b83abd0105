/* A fleet: several workers (devices of one host, or MPI ranks) measured at
 * once. Each worker's timed phase starts at a barrier; the aggregate is
 * taken over the common window, from the latest start to the earliest end,
 * so that no worker's idle head or tail counts (docs/fleet.md). A worker is
 * summarized into a fixed-size struct (bounded marks of its run count and a
 * reservoir of its latencies), which is what an MPI rank sends. */
#include "core/fleet.h"
#include "core/latency.h"
#include "base/numeric.h"
#include "core/stats.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Fixed: the same runs, the same reservoir. */
#define RESERVOIR_SEED 0x666c656574ull

/* The cumulative run count at the end of runs: every run when they fit,
 * else evenly spaced ones (the last always). */
static void summarize_marks(const double *end_ms, size_t n, ib_fleet_worker *w)
{
    w->marks[0] = (ib_fleet_mark){ 0, 0 };
    size_t slots = IB_FLEET_MARKS - 1;
    size_t m = n < slots ? n : slots;
    for (size_t k = 1; k <= m; k++) {
        size_t runs = n <= slots ? k : (size_t)llround((double)k * (double)n / (double)slots);
        w->marks[k] = (ib_fleet_mark){ end_ms[runs - 1], (double)runs };
    }
    w->n_marks = m + 1;
}

/* Algorithm R: every run has the same chance, IB_FLEET_RESERVOIR / n, to
 * be kept. */
static void summarize_reservoir(const double *ms, size_t n, ib_fleet_worker *w)
{
    uint64_t rng = RESERVOIR_SEED;
    w->n_kept = n < IB_FLEET_RESERVOIR ? n : IB_FLEET_RESERVOIR;
    memcpy(w->kept_ms, ms, w->n_kept * sizeof *ms);
    for (size_t i = IB_FLEET_RESERVOIR; i < n; i++) {
        size_t j = (size_t)(ib__splitmix64(&rng) % (uint64_t)(i + 1));
        if (j < IB_FLEET_RESERVOIR) w->kept_ms[j] = ms[i];
    }
}

void ib__fleet_worker_gpu_state(const ib_env *env, ib_fleet_worker *w)
{
    double clock = 0, power = 0;
    size_t n_clock = 0, n_power = 0;
    w->sm_clock_pct = w->mean_power_w = NAN;
    for (size_t i = 0; i < env->n_gpu_samples; i++) {
        const ib_gpu_sample *s = &env->gpu_samples[i];
        if (s->sm_clock_mhz) clock += s->sm_clock_mhz, n_clock++;
        if (s->power_w > 0) power += s->power_w, n_power++;
        if (s->temperature_c > w->max_temperature_c) w->max_temperature_c = s->temperature_c;
        w->throttle_reasons |= s->throttle_reasons;
    }
    if (n_clock && env->sm_clock_max_mhz)
        w->sm_clock_pct = 100 * clock / (double)n_clock / env->sm_clock_max_mhz;
    if (n_power) w->mean_power_w = power / (double)n_power;
}

static const char *device_word(ib_device_kind d) { return d == IB_DEVICE_CUDA ? "cuda" : "cpu"; }

/* Clears w but what the caller set: who the worker is. */
static void reset_worker(ib_fleet_worker *w)
{
    ib_fleet_worker who = *w;
    memset(w, 0, sizeof *w);
    w->index = who.index;
    w->rank = who.rank;
    w->local_rank = who.local_rank;
    memcpy(w->host, who.host, sizeof w->host);
    w->numa_node = -1;
    w->sm_clock_pct = w->mean_power_w = w->items_per_s = NAN;
}

void ib_fleet_worker_failed(ib_status status, const char *message, ib_fleet_worker *w)
{
    reset_worker(w);
    w->status = status == IB_OK ? IB_ERR_INTERNAL : status;
    ib__strlcpy(w->error, message && message[0] ? message : ib_status_str(w->status), sizeof w->error);
}

void ib__fleet_worker_identity(const ib_env *env, ib_device_kind device, ib_fleet_worker *w)
{
    ib__strlcpy(w->device, device_word(device), sizeof w->device);
    ib__strlcpy(w->name, env->gpu_name[0] ? env->gpu_name : env->host_cpu, sizeof w->name);
    ib__strlcpy(w->uuid, env->gpu_uuid, sizeof w->uuid);
    ib__strlcpy(w->pci_bus_id, env->gpu_pci_bus_id, sizeof w->pci_bus_id);
    w->numa_node = env->gpu_numa_node;
}

/* Clears w but who it is, and sets how it ended. */
static void begin_summary(ib_status status, const char *message, ib_fleet_worker *w)
{
    reset_worker(w);
    w->status = status;
    if (status != IB_OK)
        ib__strlcpy(w->error, message && message[0] ? message : ib_status_str(status), sizeof w->error);
}

/* The figures of n runs (or requests) of batch that ended at end_ms
 * (sorted, ms from the barrier) and took ms each. */
static void summarize_runs(const double *end_ms, const double *ms, size_t n, int64_t batch,
                           ib_fleet_worker *w)
{
    w->batch = batch;
    w->n = n;
    w->start_ms = 0; /* the barrier */
    w->end_ms = end_ms[n - 1];
    w->items_per_s = w->end_ms > 0 ? (double)n * (double)batch / (w->end_ms / 1000) : NAN;
    summarize_marks(end_ms, n, w);
    summarize_reservoir(ms, n, w);
}

void ib_fleet_worker_summarize(const ib_latency_result *r, const ib_workload_info *info, ib_status status,
                               const ib_error *err, ib_fleet_worker *w)
{
    if (r->n == 0 || !r->end_ms) {
        ib_fleet_worker_failed(status, err ? err->message : NULL, w);
        return;
    }
    begin_summary(status, err ? err->message : NULL, w);
    ib__fleet_worker_identity(&r->env, info->device, w);
    w->latency = r->has_device_timer ? r->device : r->host;
    summarize_runs(r->end_ms, r->has_device_timer ? r->device_ms : r->host_ms, r->n, info->batch, w);
    ib__fleet_worker_gpu_state(&r->env, w);
    w->warnings = r->warnings;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

ib_status ib__fleet_worker_from_requests(const double *arrival_ms, const double *total_ms, size_t n,
                                         const ib_stats *total, ib_status status, const char *message,
                                         ib_fleet_worker *w)
{
    if (n == 0) {
        ib_fleet_worker_failed(status == IB_OK ? IB_ERR_RUNTIME : status, message, w);
        return IB_OK;
    }
    double *done = malloc(n * sizeof *done);
    if (!done) return IB_ERR_NO_MEMORY;
    for (size_t i = 0; i < n; i++) done[i] = arrival_ms[i] + total_ms[i];
    qsort(done, n, sizeof *done, by_double); /* the instances complete out of order */
    begin_summary(status, message, w);
    w->latency = *total;
    summarize_runs(done, total_ms, n, 1, w);
    free(done);
    return IB_OK;
}

double ib__fleet_runs_by(const ib_fleet_worker *w, double t_ms)
{
    const ib_fleet_mark *m = w->marks;
    if (w->n_marks == 0 || t_ms <= m[0].t_ms) return 0;
    for (size_t k = 1; k < w->n_marks; k++) {
        if (t_ms > m[k].t_ms) continue;
        double span = m[k].t_ms - m[k - 1].t_ms;
        double share = span > 0 ? (t_ms - m[k - 1].t_ms) / span : 1;
        return m[k - 1].runs + share * (m[k].runs - m[k - 1].runs);
    }
    return m[w->n_marks - 1].runs;
}

/* A worker with figures (and counts within its arrays: a summary that came
 * over MPI is bytes from another process). */
static bool measured(const ib_fleet_worker *w)
{
    return w->status == IB_OK && w->n > 0 && w->n_marks >= 1 && w->n_marks <= IB_FLEET_MARKS &&
           w->n_kept <= IB_FLEET_RESERVOIR;
}

static int by_value(const void *a, const void *b)
{
    double x = ((const ib__weighted *)a)->v, y = ((const ib__weighted *)b)->v;
    return (x > y) - (x < y);
}

/* The value where the cumulative weight of sorted p[0..m) (total W)
 * reaches q x W. */
static double weighted_quantile(const ib__weighted *p, size_t m, double total, double q)
{
    double cum = 0;
    for (size_t i = 0; i < m; i++) {
        cum += p[i].w;
        if (cum >= q * total) return p[i].v;
    }
    return p[m - 1].v;
}

void ib__fleet_weighted_stats(ib__weighted *p, size_t m, ib_stats *out)
{
    qsort(p, m, sizeof *p, by_value);
    double total = 0, sum = 0, sq = 0;
    for (size_t i = 0; i < m; i++) total += p[i].w, sum += p[i].w * p[i].v;
    double mean = sum / total;
    for (size_t i = 0; i < m; i++) sq += p[i].w * (p[i].v - mean) * (p[i].v - mean);
    *out = (ib_stats){
        .n = (size_t)llround(total), .mean = mean, .std = sqrt(sq / total), .min = p[0].v, .max = p[m - 1].v
    };
    out->p50 = weighted_quantile(p, m, total, 0.5);
    out->p90 = weighted_quantile(p, m, total, 0.9);
    out->p95 = weighted_quantile(p, m, total, 0.95);
    out->p99 = weighted_quantile(p, m, total, 0.99);
    out->p999 = weighted_quantile(p, m, total, 0.999);
    out->cv = mean > 0 ? out->std / mean : 0;
    out->ci95_mean[0] = out->ci95_mean[1] = out->ci95_median[0] = out->ci95_median[1] = NAN;
}

/* The latencies of the workers that measured, pooled: exact when every
 * run was kept, else each kept one weighing the runs it stands for. */
static ib_status pool_latencies(const ib_fleet_worker *ws, size_t n, ib_fleet_result *out, ib_error *err)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (measured(&ws[i])) {
            m += ws[i].n_kept;
            out->pooled_sampled |= ws[i].n_kept < ws[i].n;
        }
    if (m == 0) return IB_OK; /* nothing kept: no pooled distribution */
    ib__weighted *p = malloc(m * sizeof *p);
    IB_FAIL_IF(!p, err, IB_ERR_NO_MEMORY, "out of memory pooling %zu latencies", m);
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; measured(&ws[i]) && k < ws[i].n_kept; k++)
            p[at++] = (ib__weighted){ ws[i].kept_ms[k], (double)ws[i].n / (double)ws[i].n_kept };
    ib_status st = IB_OK;
    if (out->pooled_sampled) {
        ib__fleet_weighted_stats(p, m, &out->pooled);
    } else {
        double *v = (double *)p; /* the values, packed in place */
        for (size_t k = 0; k < m; k++) v[k] = p[k].v;
        st = ib_stats_compute(v, m, &out->pooled);
    }
    free(p);
    return st;
}

/* The common window over the workers that measured; false when none did. */
static bool common_window(const ib_fleet_worker *ws, size_t n, double *start, double *end)
{
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (!measured(&ws[i])) continue;
        *start = any ? fmax(*start, ws[i].start_ms) : ws[i].start_ms;
        *end = any ? fmin(*end, ws[i].end_ms) : ws[i].end_ms;
        any = true;
    }
    return any;
}

/* What a straggler is judged by: the median, or for serve the p99 (a
 * served request's tail is what its target holds). */
static double judged(const ib_fleet_result *f, const ib_fleet_worker *w)
{
    return f->measured == IB_RESULT_SERVE ? w->latency.p99 : w->latency.p50;
}

/* The slowest and the fastest among the workers that measured. */
static void find_straggler(const ib_fleet_worker *ws, size_t n, ib_fleet_result *out)
{
    out->straggler = out->fastest = -1;
    const char *first_name = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!measured(&ws[i])) continue;
        if (out->straggler < 0 || judged(out, &ws[i]) > judged(out, &ws[out->straggler]))
            out->straggler = (int)i;
        if (out->fastest < 0 || judged(out, &ws[i]) < judged(out, &ws[out->fastest])) out->fastest = (int)i;
        if (!first_name) first_name = ws[i].name;
        if (strcmp(ws[i].name, first_name)) out->mixed_devices = true;
    }
    out->straggler_ratio = judged(out, &ws[out->straggler]) / judged(out, &ws[out->fastest]);
}

ib_status ib_fleet_aggregate(ib_fleet_worker *workers, size_t n, const ib_fleet_worker *alone,
                             ib_fleet_result *out, ib_error *err)
{
    return ib__fleet_aggregate_as(IB_RESULT_LATENCY, workers, n, alone, out, err);
}

ib_status ib__fleet_aggregate_as(ib_result_kind measured_as, ib_fleet_worker *workers, size_t n,
                                 const ib_fleet_worker *alone, ib_fleet_result *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    out->measured = measured_as;
    out->workers = workers;
    out->n_workers = n;
    out->items_per_s = out->scaling_efficiency = out->straggler_ratio = NAN;
    out->straggler = out->fastest = -1;
    size_t ok = 0;
    for (size_t i = 0; i < n; i++) ok += measured(&workers[i]);
    out->n_failed = n - ok;
    double start = 0, end = 0;
    IB_FAIL_IF(!common_window(workers, n, &start, &end), err, IB_ERR_INVALID_ARG, "no worker measured");
    IB_FAIL_IF(end <= start, err, IB_ERR_INVALID_ARG,
               "the workers' timed phases do not overlap (latest start %.3f ms, earliest end %.3f ms)", start,
               end);
    out->window_start_ms = start;
    out->window_end_ms = end;
    out->items_per_s = 0;
    for (size_t i = 0; i < n; i++) {
        ib_fleet_worker *w = &workers[i];
        if (!measured(w)) continue;
        w->window_runs = ib__fleet_runs_by(w, end) - ib__fleet_runs_by(w, start);
        w->window_items_per_s = w->window_runs * (double)w->batch / ((end - start) / 1000);
        out->items_per_s += w->window_items_per_s;
    }
    find_straggler(workers, n, out);
    if (alone && measured(alone)) {
        out->has_alone = true;
        out->alone = *alone;
        out->scaling_efficiency = out->items_per_s / ((double)ok * alone->items_per_s);
    }
    return pool_latencies(workers, n, out, err);
}

/* ------------------------------------------------------------------------ */
/* The workers of one host: a thread each                                    */
/* ------------------------------------------------------------------------ */

typedef struct fleet_gate {
    ib__fleet_gate start;
    pthread_barrier_t barrier;
} fleet_gate;

typedef struct fleet_thread {
    ib_workload *w;
    ib_config cfg;
    fleet_gate *gate;
    int reached; /* sync points passed */
    ib_fleet_worker *out;
    pthread_t thread;
} fleet_thread;

/* Meets the others at every sync point up to point, also those this
 * worker skipped by failing early: the others wait for it there. */
static ib_status meet(void *user, int point)
{
    fleet_thread *t = user;
    while (t->reached <= point) {
        pthread_barrier_wait(&t->gate->barrier);
        t->reached++;
    }
    return IB_OK;
}

bool ib__fleet_gate_wait(ib__fleet_gate *g)
{
    pthread_mutex_lock(&g->lock);
    while (g->state == 0) pthread_cond_wait(&g->opened, &g->lock);
    bool go = g->state > 0;
    pthread_mutex_unlock(&g->lock);
    return go;
}

void ib__fleet_gate_open(ib__fleet_gate *g, int state)
{
    pthread_mutex_lock(&g->lock);
    g->state = state;
    pthread_cond_broadcast(&g->opened);
    pthread_mutex_unlock(&g->lock);
}

static void *fleet_worker_main(void *arg)
{
    fleet_thread *t = arg;
    if (!ib__fleet_gate_wait(&t->gate->start)) return NULL;
    ib_latency_result r;
    ib_error err = { { 0 } };
    ib_status st = ib_measure_latency(t->w, &t->cfg, &r, &err);
    meet(t, IB_SYNC_AFTER_TIMED);
    ib_fleet_worker_summarize(&r, ib_workload_get_info(t->w), st, &err, t->out);
    ib_latency_result_free(&r);
    return NULL;
}

static void start_thread(fleet_thread *t, ib_workload *w, const ib_config *cfg, fleet_gate *g, int index,
                         ib_fleet_worker *out)
{
    *t = (fleet_thread){ .w = w, .cfg = *cfg, .gate = g, .out = out };
    t->cfg.sync = meet;
    t->cfg.sync_user = t;
    if (index > 0) t->cfg.progress = NULL; /* one progress line: the first worker's */
    out->index = index;
    out->rank = out->local_rank = -1;
    out->host[0] = '\0';
}

ib_status ib_measure_fleet(ib_workload *const *ws, size_t n, const ib_config *cfg, ib_fleet_worker *workers,
                           ib_error *err)
{
    IB_FAIL_IF(!ws || n < 1 || n > IB_FLEET_MAX_WORKERS || cfg->sync, err, IB_ERR_INVALID_ARG,
               "a fleet takes 1 to %d workloads and no sync of the caller's", IB_FLEET_MAX_WORKERS);
    fleet_thread *t = calloc(n, sizeof *t);
    fleet_gate g = { .start = IB__FLEET_GATE_INIT };
    if (!t || pthread_barrier_init(&g.barrier, NULL, (unsigned)n) != 0) {
        free(t);
        return ib__fail(err, IB_ERR_NO_MEMORY, "cannot start %zu fleet workers", n);
    }
    size_t started = 0;
    for (; started < n; started++) {
        start_thread(&t[started], ws[started], cfg, &g, (int)started, &workers[started]);
        if (pthread_create(&t[started].thread, NULL, fleet_worker_main, &t[started]) != 0) break;
    }
    ib__fleet_gate_open(&g.start, started == n ? 1 : -1);
    for (size_t i = 0; i < started; i++) pthread_join(t[i].thread, NULL);
    pthread_barrier_destroy(&g.barrier);
    free(t);
    IB_FAIL_IF(started < n, err, IB_ERR_NO_MEMORY, "cannot start fleet worker %zu of %zu", started + 1, n);
    return IB_OK;
}
