/* serve: latency under load. Requests arrive on a schedule made before the
 * run (seeded Poisson, constant, or a trace) or, in a closed loop, when an
 * earlier one completes; a request's latency runs from its SCHEDULED arrival
 * to its completion, so time spent waiting behind a slow request is counted
 * (no coordinated omission), and no request is dropped for being late.
 * Every time is read from the workload's clock, virtual for the fake, so the
 * accounting is tested on exact numbers. */
#include "core/serve.h"
#include "workload/workload.h"
#include "core/energy.h"
#include "base/numeric.h"
#include "core/progress.h"
#include "core/stats.h"
#include "env/env.h"
#include "core/latency.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest one wait sleeps before looking at the cancel flag again. */
#define CANCEL_POLL_MS 50.0
/* A search halves the first rate at most this many times looking for one
 * that meets the target. */
#define MAX_HALVINGS 4
/* Warm-up runs whose times give the service time (the latest ones kept). */
#define IB__SERVE_WARMUP_CAP 1024
/* The host-wait check's pairs after warm-up: fewer than latency's 100, for
 * a check serve makes before every search (0.12 s at a 2 ms run). */
#define SERVE_HOST_WAIT_PAIRS 30
/* Progress is reported while the first instance waits for a request due
 * at least this far ahead: never while a request could be waiting for it
 * (a rate's whole run is the timed region: its queueing counts). */
#define PROGRESS_SLACK_MS 1.0

void ib_serve_config_init(ib_serve_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    ib_config_init(&cfg->run);
    cfg->seed = 1;
    cfg->requests = 1000;
    cfg->request_batch = 1;
    cfg->max_batch = 1;
    cfg->slo_percentile = 0.99;
    cfg->confidence = 0.99;
    cfg->search_tolerance = 0.05;
}

/* ------------------------------------------------------------------------ */
/* The batcher, the early-stopping bound: pure functions (schedules: schedule.c) */
/* ------------------------------------------------------------------------ */

double ib__binomial_cdf(int64_t k, int64_t n, double q)
{
    if (k < 0) return 0.0;
    if (k >= n) return 1.0;
    if (q <= 0) return 1.0;
    if (q >= 1) return 0.0;
    double sum = 0, lq = log(q), lp = log1p(-q), ln_n = lgamma((double)n + 1);
    for (int64_t i = 0; i <= k; i++)
        sum += exp(ln_n - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) + (double)i * lq +
                   (double)(n - i) * lp);
    return fmin(sum, 1.0);
}

bool ib_serve_percentile_met(int64_t n, int64_t k, double p, double c)
{
    if (n <= 0 || k < 0 || k > n) return false;
    return ib__binomial_cdf(k, n, 1.0 - p) <= 1.0 - c;
}

ib__batch_decision ib__batcher_decide(const double *arrivals_ms, size_t n_pending, double free_ms,
                                      size_t max_batch, double max_delay_ms)
{
    double start = fmax(free_ms, arrivals_ms[0]);
    size_t full = max_batch < n_pending ? max_batch : n_pending;
    double when;
    if (max_batch <= 1)
        when = start;
    else if (full == max_batch && arrivals_ms[max_batch - 1] <= arrivals_ms[0] + max_delay_ms)
        when = fmax(start, arrivals_ms[max_batch - 1]); /* the batch fills before the delay ends */
    else
        when = fmax(start, arrivals_ms[0] + max_delay_ms);
    size_t count = 0;
    while (count < full && arrivals_ms[count] <= when) count++;
    return (ib__batch_decision){ .dispatch_ms = when, .count = count };
}

/* ------------------------------------------------------------------------ */
/* Timing a request's parts                                                  */
/* ------------------------------------------------------------------------ */

enum { PART_H2D, PART_COMPUTE, PART_D2H, N_PARTS };

/* One copy of the model serving from the shared queue: its own session,
 * stream and marks. */
typedef struct instance {
    ib_workload *w;
    const ib__timer_ops *timer; /* the workload's device timer; NULL without */
    void *marks[N_PARTS];       /* device timer states; NULL without a device timer */
    bool async;                 /* the workload's own end-of-run wait is off */
    int64_t bound_batch;        /* the batch the workload is bound at */
    int index;                  /* among the server's instances */
    struct server *s;
} instance;

typedef struct server {
    const ib_serve_config *cfg;
    ib_serve_copies copies;
    instance *inst;
    size_t n_inst;
    /* One rate's records, one entry per request (total NaN until done);
     * wakeup: the part of queue after the run's dispatch time (how late the
     * instance's thread started it). */
    double *arrival, *queue, *wakeup, *part[N_PARTS], *total;
    size_t *run_of; /* the run that served each request, in the run log */
    /* The run log, in the order each instance ran its runs: the instance,
     * batch of requests and compute of each; n_runs of them (a run serves
     * one request at least, so there are at most as many as requests). */
    int *run_instance;
    int64_t *run_size;
    double *run_compute;
    size_t n_runs;
    size_t cap;
    /* One rate's dispatch, shared by the instances under lock. */
    pthread_mutex_t lock;
    size_t n, next; /* requests scheduled; the first not yet taken */
    double t0;      /* the schedule's origin on the host clock */
    double last_end;
    ib_serve_point *pt;
    ib_status status; /* the first failure; the others stop on it */
    ib_error err;
    const ib__serve_hooks *hooks; /* a fleet's (NULL: alone) */
    /* The GPU's state sampled over warm-up and the rates into the result's
     * environment (alone, on a CUDA workload with sample_gpu_state; NULL
     * otherwise), for what explains
     * compute under load: each window's bounds on the sampler's clock
     * (the host's, from sample_t0). */
    ib_env *env;
    ib__gpu_sampler *sampler;
    double sample_t0;
    double warm_ms[2];
    double rate_ms[IB_SERVE_MAX_RATES][2];
    ib__progress pr;          /* the caller's progress reports: touched by
                                 the calling thread only (instance 0's) */
    ib__energy_meters energy; /* the device's, learned before the warm-up */
} server;

static ib_serve_copies copies_of(const ib_workload *w)
{
    if (w->info.device != IB_DEVICE_CUDA) return IB_SERVE_COPIES_NONE;
    void *target;
    if (w->ops->copy_in && w->ops->copy_out && ib__workload_device_timer(w, &target))
        return IB_SERVE_COPIES_APART;
    return w->ops->run_with_copies ? IB_SERVE_COPIES_INSIDE : IB_SERVE_COPIES_NONE;
}

static ib_status instance_open(instance *in, ib_workload *w, server *s, ib_error *err)
{
    void *target = NULL;
    *in = (instance){ .w = w, .s = s, .timer = ib__workload_device_timer(w, &target) };
    for (int p = 0; p < N_PARTS && in->timer; p++)
        IB_TRY(in->timer->create(target, w->device_id, &in->marks[p], err));
    /* As in the runner: with device marks the wait is on the last mark,
     * not inside the run, so no host wake-up is counted as device time. */
    if (in->timer && ib__workload_can(w, IB_CAP_ASYNC_RUN)) {
        IB_TRY(w->ops->set_run_sync(w, false, err));
        in->async = true;
    }
    return IB_OK;
}

static void instance_close(instance *in)
{
    if (!in->w) return;
    if (in->async) in->w->ops->set_run_sync(in->w, true, NULL);
    for (int p = 0; p < N_PARTS; p++)
        if (in->marks[p]) in->timer->destroy(in->marks[p]);
}

static void free_records(server *s)
{
    free(s->arrival);
    free(s->queue);
    free(s->wakeup);
    for (int p = 0; p < N_PARTS; p++) free(s->part[p]);
    free(s->total);
    free(s->run_of);
    free(s->run_instance);
    free(s->run_size);
    free(s->run_compute);
    s->run_instance = NULL;
    s->run_size = NULL;
    s->run_compute = NULL;
    s->n_runs = 0;
    s->arrival = s->queue = s->wakeup = s->total = NULL;
    s->run_of = NULL;
    memset(s->part, 0, sizeof s->part);
    s->cap = 0;
}

static ib_status server_open(server *s, ib_workload *const *ws, size_t n_inst, const ib_serve_config *cfg,
                             ib_error *err)
{
    *s = (server){ .cfg = cfg, .copies = copies_of(ws[0]), .n_inst = n_inst };
    s->inst = calloc(n_inst, sizeof *s->inst);
    IB_FAIL_IF(!s->inst, err, IB_ERR_NO_MEMORY, "out of memory");
    IB_FAIL_IF(pthread_mutex_init(&s->lock, NULL) != 0, err, IB_ERR_INTERNAL, "cannot make a lock");
    for (size_t i = 0; i < n_inst; i++) {
        IB_TRY(instance_open(&s->inst[i], ws[i], s, err));
        s->inst[i].index = (int)i;
    }
    return IB_OK;
}

static void server_close(server *s)
{
    ib__energy_meters_close(&s->energy);
    for (size_t i = 0; s->inst && i < s->n_inst; i++) instance_close(&s->inst[i]);
    free(s->inst);
    pthread_mutex_destroy(&s->lock);
    free_records(s);
}

static ib_status alloc_records(server *s, size_t n, ib_error *err)
{
    free_records(s);
    s->arrival = malloc(n * sizeof(double));
    s->queue = malloc(n * sizeof(double));
    s->wakeup = malloc(n * sizeof(double));
    s->total = malloc(n * sizeof(double));
    s->run_of = malloc(n * sizeof(size_t));
    s->run_instance = malloc(n * sizeof(int));
    s->run_size = malloc(n * sizeof(int64_t));
    s->run_compute = malloc(n * sizeof(double));
    bool ok = s->arrival && s->queue && s->wakeup && s->total && s->run_of && s->run_instance &&
              s->run_size && s->run_compute;
    for (int p = 0; p < N_PARTS; p++) ok = (s->part[p] = malloc(n * sizeof(double))) != NULL && ok;
    if (!ok) {
        free_records(s);
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory for %zu requests", n);
    }
    for (size_t i = 0; i < n; i++) s->total[i] = NAN;
    s->cap = n;
    return IB_OK;
}

static double now(const instance *in) { return ib__workload_now_ms(in->w); }

/* One op between a pair of device marks (host clock around it without). */
typedef ib_status (*workload_op)(ib_workload *w, ib_error *err);

static ib_status marked(instance *in, int part, workload_op op, ib_error *err)
{
    if (in->marks[part]) IB_TRY(in->timer->start(in->marks[part], err));
    IB_TRY(op(in->w, err));
    if (in->marks[part]) IB_TRY(in->timer->stop(in->marks[part], err));
    return IB_OK;
}

/* One run at the bound batch, its parts in ms (NaN: not a part here). */
static ib_status run_parts(instance *in, ib_serve_copies copies, double ms[N_PARTS], ib_error *err)
{
    const ib__workload_ops *ops = in->w->ops;
    for (int p = 0; p < N_PARTS; p++) ms[p] = NAN;
    double t0 = now(in);
    if (copies == IB_SERVE_COPIES_APART) {
        IB_TRY(marked(in, PART_H2D, ops->copy_in, err));
        IB_TRY(marked(in, PART_COMPUTE, ops->run, err));
        IB_TRY(marked(in, PART_D2H, ops->copy_out, err));
    } else {
        IB_TRY(marked(in, PART_COMPUTE, copies == IB_SERVE_COPIES_INSIDE ? ops->run_with_copies : ops->run,
                      err));
    }
    for (int p = 0; p < N_PARTS; p++)
        if (in->marks[p] && (p == PART_COMPUTE || copies == IB_SERVE_COPIES_APART))
            IB_TRY(in->timer->elapsed_ms(in->marks[p], &ms[p], err));
    IB_TRY(ib__workload_synchronize(in->w, err));
    if (!in->marks[PART_COMPUTE]) ms[PART_COMPUTE] = now(in) - t0;
    return IB_OK;
}

static ib_status bind_batch(instance *in, int64_t batch, ib_error *err)
{
    if (batch == in->bound_batch) return IB_OK;
    IB_TRY(ib_workload_set_batch(in->w, batch, err));
    in->bound_batch = batch;
    return IB_OK;
}

/* Runs every batch the dynamic batcher can form (2 to max_batch requests)
 * warmup_runs times (at least once) before anything is timed: a runtime
 * pays its first run at a new shape (a kernel algorithm search, the arena's
 * growth) here, never inside a timed request. Rebinding to a size already
 * run is what timed requests still pay (their queueing). */
static ib_status warm_batches(instance *in, const ib_serve_config *cfg, ib_serve_copies copies, ib_error *err)
{
    int64_t runs = cfg->run.warmup_runs > 0 ? cfg->run.warmup_runs : 1;
    for (int64_t count = cfg->max_batch; count >= 2; count--) {
        IB_TRY(bind_batch(in, count * cfg->request_batch, err));
        for (int64_t i = 0; i < runs; i++) {
            IB_FAIL_IF(ib__cancelled(cfg->run.cancel), err, IB_ERR_INTERRUPTED, "interrupted");
            double ms[N_PARTS];
            IB_TRY(run_parts(in, copies, ms, err));
        }
    }
    return IB_OK;
}

/* Warm-up of every batch size, then at one request's batch: the count and
 * the time the config asks for (bounded by warmup_max_ms); the median run
 * there gives the service time. */
static ib_status warm_up(instance *in, const ib_serve_config *cfg, ib_serve_copies copies, double *service_ms,
                         ib_error *err)
{
    const ib_config *run = &cfg->run;
    IB_TRY(warm_batches(in, cfg, copies, err));
    IB_TRY(bind_batch(in, cfg->request_batch, err));
    int64_t max_runs = run->warmup_runs > 0 ? run->warmup_runs * 100 : 100;
    double host[IB__SERVE_WARMUP_CAP];
    size_t n = 0;
    double t0 = now(in);
    for (int64_t i = 0;; i++) {
        double elapsed = now(in) - t0;
        bool enough = i >= run->warmup_runs && elapsed >= run->warmup_ms;
        if (i > 0 && (enough || elapsed >= run->warmup_max_ms || i >= max_runs)) break;
        IB_FAIL_IF(ib__cancelled(run->cancel), err, IB_ERR_INTERRUPTED, "interrupted");
        double ms[N_PARTS], start = now(in);
        IB_TRY(run_parts(in, copies, ms, err));
        host[n++ % IB__SERVE_WARMUP_CAP] = now(in) - start;
        ib__progress_runs(&in->s->pr, (int64_t)n, run->warmup_max_ms);
    }
    size_t kept = n < IB__SERVE_WARMUP_CAP ? n : IB__SERVE_WARMUP_CAP;
    ib__sort(host, kept);
    *service_ms = ib_quantile_sorted(host, kept, 0.5);
    return IB_OK;
}

/* The host-wait check after warm-up (docs/serve.md): whether the run is
 * host-bound, which a rate's compute under load is then judged by. Its
 * own failure (a run that waits for the GPU while held) leaves it
 * unchecked; an interruption stops the measurement. */
static ib_status check_host_wait(instance *in, const ib_serve_config *cfg, ib_serve_result *out,
                                 ib_error *err)
{
    out->warmup_held_ms = out->warmup_host_wait_ms = NAN;
    if (!ib__can_hold(in->w)) return IB_OK;
    ib__host_wait hw;
    ib_error ignored;
    ib_status st = ib__host_wait_pairs(in->w, &cfg->run, SERVE_HOST_WAIT_PAIRS, 0, &hw, &ignored);
    /* The runner's release made the run synchronous again. */
    if (in->async) IB_TRY(in->w->ops->set_run_sync(in->w, false, err));
    if (st == IB_ERR_INTERRUPTED) return ib__fail(err, st, "interrupted");
    if (st != IB_OK) return IB_OK;
    out->warmup_held_ms = hw.held.p50;
    out->warmup_host_wait_ms = hw.wait_ms;
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* One rate                                                                  */
/* ------------------------------------------------------------------------ */

/* The number of requests the schedule holds: --requests, or those that
 * arrive within duration_ms at this rate. */
static ib_status schedule_size(const ib_serve_config *cfg, double rate, size_t *n, ib_error *err)
{
    if (cfg->arrivals == IB_ARRIVALS_TRACE)
        *n = cfg->n_trace;
    else if (cfg->requests > 0 || cfg->concurrency > 0)
        *n = (size_t)cfg->requests;
    else {
        /* The Poisson count is rate x duration on average: twice that and
         * 100 more fall short with a probability below 1e-20. */
        double expected = rate * cfg->duration_ms / 1000.0;
        IB_FAIL_IF(expected > IB__SERVE_MAX_REQUESTS, err, IB_ERR_INVALID_ARG,
                   "%.0f requests/s for %.0f ms is more than %d requests", rate, cfg->duration_ms,
                   IB__SERVE_MAX_REQUESTS);
        *n = (size_t)fmin(2 * expected + 100, IB__SERVE_MAX_REQUESTS);
    }
    return IB_OK;
}

/* Fills s->arrival for one rate; *n is cut to the arrivals within the
 * duration when the run is bounded by time. */
static ib_status make_schedule(server *s, double rate, size_t *n, ib_error *err)
{
    const ib_serve_config *cfg = s->cfg;
    IB_TRY(schedule_size(cfg, rate, n, err));
    IB_TRY(alloc_records(s, *n, err));
    if (cfg->concurrency > 0) {
        /* The first C are issued at once; the others when one completes. */
        for (size_t i = 0; i < *n; i++) s->arrival[i] = i < (size_t)cfg->concurrency ? 0 : NAN;
        return IB_OK;
    }
    if (cfg->arrivals == IB_ARRIVALS_TRACE)
        memcpy(s->arrival, cfg->trace_ms, *n * sizeof(double));
    else if (cfg->arrivals == IB_ARRIVALS_CONSTANT)
        ib__serve_constant(rate, *n, s->arrival);
    else
        ib__serve_poisson(rate, cfg->seed, *n, s->arrival);
    if (cfg->requests == 0 && cfg->arrivals != IB_ARRIVALS_TRACE) {
        size_t within = 0;
        while (within < *n && s->arrival[within] < cfg->duration_ms) within++;
        *n = within > 0 ? within : 1;
    }
    return IB_OK;
}

/* The requests of the rate taken so far, to the progress reports (rate
 * limited by them). */
static void report_served(server *s)
{
    pthread_mutex_lock(&s->lock);
    size_t taken = s->next;
    pthread_mutex_unlock(&s->lock);
    ib__progress_runs(&s->pr, (int64_t)taken, NAN);
}

/* Waits until the instance's clock reads t, looking at the cancel flag now
 * and then, and reporting progress while the first instance is idle with
 * time to spare; false when cancelled. */
static bool wait_until(instance *in, double t)
{
    const ib__clock *c = &in->w->clock;
    while (now(in) < t) {
        if (ib__cancelled(in->s->cfg->run.cancel)) return false;
        if (in->index == 0 && t - now(in) >= PROGRESS_SLACK_MS) report_served(in->s);
        /* A clock without a wait (a backend that made its own) is read
         * until it gets there. */
        if (c->wait_until_ms) c->wait_until_ms(c->ctx, fmin(t, now(in) + CANCEL_POLL_MS));
    }
    return true;
}

/* When one run was due (its requests arrived, the instance free), when
 * its thread was awake to start it, and the run itself (after any rebind);
 * ms from the schedule's origin. */
typedef struct run_times {
    double due, woke, start, end;
} run_times;

/* What one run served: requests [first, first+count) of the schedule.
 * Under the lock. */
static void record_run(server *s, const instance *in, size_t first, size_t count, const run_times *t,
                       const double ms[N_PARTS])
{
    size_t run = s->n_runs++;
    s->run_instance[run] = in->index;
    s->run_size[run] = (int64_t)count;
    s->run_compute[run] = ms[PART_COMPUTE];
    for (size_t j = first; j < first + count; j++) {
        s->run_of[j] = run;
        s->queue[j] = t->start - s->arrival[j];
        s->wakeup[j] = t->woke - t->due;
        s->total[j] = t->end - s->arrival[j];
        for (int p = 0; p < N_PARTS; p++) s->part[p][j] = ms[p];
        if (s->cfg->slo_ms > 0 && s->total[j] > s->cfg->slo_ms) s->pt->over_slo++;
        /* Closed loop: a completion issues the request C places later. */
        size_t next = j + (size_t)s->cfg->concurrency;
        if (s->cfg->concurrency > 0 && next < s->cap) s->arrival[next] = t->end;
    }
    s->last_end = fmax(s->last_end, t->end);
    s->pt->runs++;
    s->pt->batch_hist[count]++;
}

/* The median compute of the runs after a batch change on their instance
 * and of those at an unchanged batch (an instance's first run of the rate
 * is neither). The changed ones are gathered at the front of run_compute:
 * the run log's last use. */
static void batch_switches(server *s, ib_serve_point *pt)
{
    pt->switch_compute_p50_ms = pt->unchanged_compute_p50_ms = NAN;
    double *same = malloc((s->n_runs + 1) * sizeof *same);
    if (!same) return;
    int64_t prev[IB_SERVE_MAX_INSTANCES] = { 0 };
    size_t n_changed = 0, n_same = 0;
    for (size_t r = 0; r < s->n_runs; r++) {
        int i = s->run_instance[r];
        int64_t before = prev[i];
        prev[i] = s->run_size[r];
        if (before == 0) continue;
        if (before != s->run_size[r])
            s->run_compute[n_changed++] = s->run_compute[r];
        else
            same[n_same++] = s->run_compute[r];
    }
    pt->switch_runs = (int64_t)n_changed;
    ib__sort(s->run_compute, n_changed);
    ib__sort(same, n_same);
    if (n_changed) pt->switch_compute_p50_ms = ib_quantile_sorted(s->run_compute, n_changed, 0.5);
    if (n_same) pt->unchanged_compute_p50_ms = ib_quantile_sorted(same, n_same, 0.5);
    free(same);
}

/* Takes the next run's requests off the queue for an instance free at
 * free_ms; false when none is left or the rate failed. Under the lock. */
static bool take(server *s, double free_ms, size_t *first, ib__batch_decision *d)
{
    if (s->status != IB_OK || s->next >= s->n) return false;
    const ib_serve_config *cfg = s->cfg;
    /* In a closed loop only the issued requests are known. */
    size_t pending = cfg->concurrency > 0 ? 1 : s->n - s->next;
    *d = ib__batcher_decide(s->arrival + s->next, pending, free_ms, (size_t)cfg->max_batch,
                            cfg->max_delay_us / 1000.0);
    *first = s->next;
    s->next += d->count;
    return true;
}

static void fail(server *s, ib_status st, const ib_error *err)
{
    pthread_mutex_lock(&s->lock);
    if (s->status == IB_OK) {
        s->status = st;
        s->err = *err;
    }
    pthread_mutex_unlock(&s->lock);
}

/* One run of an instance: waits for its dispatch time, rebinds when the
 * batch size changes (a cost of serving: it lands in these requests'
 * queueing, not in the dispatcher's wake-up), runs, records. */
static ib_status serve_run(instance *in, size_t first, ib__batch_decision d, ib_error *err)
{
    server *s = in->s;
    if (!wait_until(in, s->t0 + d.dispatch_ms)) return ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
    run_times t = { .due = d.dispatch_ms, .woke = now(in) - s->t0 };
    IB_TRY(bind_batch(in, (int64_t)d.count * s->cfg->request_batch, err));
    t.start = now(in) - s->t0;
    double ms[N_PARTS];
    IB_TRY(run_parts(in, s->copies, ms, err));
    t.end = now(in) - s->t0;
    pthread_mutex_lock(&s->lock);
    record_run(s, in, first, d.count, &t, ms);
    pthread_mutex_unlock(&s->lock);
    return IB_OK;
}

/* An instance's loop: take, serve, until the queue is empty or a run
 * failed anywhere. */
static void *instance_loop(void *arg)
{
    instance *in = arg;
    server *s = in->s;
    for (;;) {
        size_t first;
        ib__batch_decision d;
        pthread_mutex_lock(&s->lock);
        bool more = take(s, now(in) - s->t0, &first, &d);
        pthread_mutex_unlock(&s->lock);
        if (!more) return NULL;
        ib_error err = { { 0 } };
        ib_status st = serve_run(in, first, d, &err);
        if (st != IB_OK) {
            fail(s, st, &err);
            return NULL;
        }
    }
}

/* Serves the n scheduled requests: one instance in the calling thread
 * (exact on a virtual clock), more in a thread each. */
static ib_status dispatch(server *s, size_t n, ib_serve_point *pt, ib_error *err)
{
    s->n = n;
    s->next = 0;
    s->pt = pt;
    s->last_end = 0;
    s->status = IB_OK;
    s->t0 = now(&s->inst[0]);
    pthread_t threads[IB_SERVE_MAX_INSTANCES];
    size_t started = 0;
    for (size_t i = 1; i < s->n_inst; i++, started++)
        if (pthread_create(&threads[started], NULL, instance_loop, &s->inst[i]) != 0) {
            fail(s, IB_ERR_INTERNAL, &(ib_error){ .message = "cannot start an instance's thread" });
            break;
        }
    instance_loop(&s->inst[0]);
    for (size_t i = 0; i < started; i++) pthread_join(threads[i], NULL);
    if (s->status != IB_OK && err) *err = s->err;
    return s->status;
}

/* Moves the records of the completed requests to the front, in schedule
 * order (instances complete out of order, and a partial rate has holes);
 * returns how many. */
static size_t compact_completed(server *s)
{
    size_t done = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (isnan(s->total[i])) continue;
        s->arrival[done] = s->arrival[i];
        s->queue[done] = s->queue[i];
        s->wakeup[done] = s->wakeup[i];
        s->total[done] = s->total[i];
        for (int p = 0; p < N_PARTS; p++) s->part[p][done] = s->part[p][i];
        done++;
    }
    return done;
}

/* The point's statistics; the records stay in schedule order (the total's
 * percentile, which sorts them, is total_percentile's). Returns how many
 * requests completed. */
static size_t summarize(server *s, ib_serve_point *pt)
{
    const ib_serve_config *cfg = s->cfg;
    size_t done = compact_completed(s);
    double first_arrival = s->arrival[0];
    pt->n = (int64_t)done;
    pt->at_percentile_ms = pt->compute_at_percentile_ms = NAN;
    batch_switches(s, pt);
    if (done == 0) return 0;
    ib_stats_compute(s->queue, done, &pt->queue);
    ib_stats_compute(s->wakeup, done, &pt->wakeup);
    ib_stats_compute(s->total, done, &pt->total);
    ib_stats_compute(s->part[PART_COMPUTE], done, &pt->compute);
    if (s->copies == IB_SERVE_COPIES_APART) {
        ib_stats_compute(s->part[PART_H2D], done, &pt->h2d);
        ib_stats_compute(s->part[PART_D2H], done, &pt->d2h);
    }
    if (cfg->slo_ms > 0) {
        ib__sort(s->part[PART_COMPUTE], done);
        pt->compute_at_percentile_ms = ib_quantile_sorted(s->part[PART_COMPUTE], done, cfg->slo_percentile);
    }
    double span = s->last_end - first_arrival;
    pt->achieved_rate = span > 0 ? (double)done * 1000.0 / span : NAN;
    pt->met = cfg->slo_ms > 0 && !pt->partial &&
              ib_serve_percentile_met(pt->n, pt->over_slo, cfg->slo_percentile, cfg->confidence);
    return done;
}

/* The total's percentile of the target (sorts the records: last). */
static void total_percentile(server *s, ib_serve_point *pt, size_t done)
{
    if (!(s->cfg->slo_ms > 0) || done == 0) return;
    ib__sort(s->total, done);
    pt->at_percentile_ms = ib_quantile_sorted(s->total, done, s->cfg->slo_percentile);
}

/* The verdict the search goes on: the point's own, or a fleet's. */
static ib__serve_verdict verdict(server *s, ib_status st, const ib_serve_point *pt, size_t done)
{
    ib__serve_verdict v = { .met = pt->met,
                            .compute_over = pt->compute_at_percentile_ms > s->cfg->slo_ms,
                            .stop = st != IB_OK };
    if (s->hooks) v = s->hooks->after_rate(s->hooks->user, st, pt, s->arrival, s->total, done);
    return v;
}

/* The rate a trace offers: its requests over its span. */
static double trace_rate(const ib_serve_config *cfg)
{
    double span = cfg->n_trace > 1 ? cfg->trace_ms[cfg->n_trace - 1] - cfg->trace_ms[0] : 0;
    return span > 0 ? (double)(cfg->n_trace - 1) * 1000.0 / span : NAN;
}

/* Hands each completed request of the rate over to on_request, in
 * schedule order (before summarize reorders the records). */
static void hand_over_requests(const server *s, size_t rate_index)
{
    const ib_serve_config *cfg = s->cfg;
    if (!cfg->on_request) return;
    for (size_t i = 0; i < s->n; i++) {
        if (isnan(s->total[i])) continue;
        ib_serve_request r = {
            .rate_index = rate_index,
            .index = i,
            .instance = s->run_instance[s->run_of[i]],
            .run_requests = s->run_size[s->run_of[i]],
            .arrival_ms = s->arrival[i],
            .start_ms = s->arrival[i] + s->queue[i],
            .end_ms = s->arrival[i] + s->total[i],
            .queue_ms = s->queue[i],
            .wakeup_ms = s->wakeup[i],
            .h2d_ms = s->part[PART_H2D][i],
            .compute_ms = s->part[PART_COMPUTE][i],
            .d2h_ms = s->part[PART_D2H][i],
            .total_ms = s->total[i],
        };
        cfg->on_request(cfg->on_request_ctx, &r);
    }
}

/* The rate's energy per request input (none for a rate cut short). */
static void serve_energy(const server *s, ib_status st, ib_serve_point *pt)
{
    ib_energy cpu;
    if (st != IB_OK) {
        ib__energy_none(&pt->energy, "the rate did not run to the end: no energy figure");
        return;
    }
    ib__energy_meters_figures(&s->energy, (double)pt->n * (double)s->cfg->request_batch, NULL, NAN,
                              &pt->energy, &cpu);
}

/* One rate, and the verdict on it. In a fleet every device meets the
 * others before it (the rate's origin) and after it, whatever failed. */
static ib_status serve_rate(server *s, double rate, size_t rate_index, ib_serve_point *pt,
                            ib__serve_verdict *v, ib_error *err)
{
    memset(pt, 0, sizeof *pt);
    pt->offered_rate = s->cfg->concurrency > 0                 ? NAN
                       : s->cfg->arrivals == IB_ARRIVALS_TRACE ? trace_rate(s->cfg)
                                                               : rate;
    pt->at_percentile_ms = pt->compute_at_percentile_ms = NAN;
    size_t n = 0, done = 0;
    ib_status st = make_schedule(s, rate, &n, err);
    if (s->hooks) s->hooks->before_rate(s->hooks->user);
    if (st == IB_OK) {
        pt->scheduled = (int64_t)n;
        bool list = s->cfg->n_rates > 0,
             one = s->cfg->concurrency > 0 || s->cfg->arrivals == IB_ARRIVALS_TRACE;
        ib__progress_step(&s->pr, one ? 0 : (int64_t)rate_index + 1, list ? (int64_t)s->cfg->n_rates : 0,
                          "rate", s->cfg->request_batch);
        ib__progress_rate(&s->pr, pt->offered_rate);
        ib__progress_phase(&s->pr, IB_PHASE_SERVING, (int64_t)n);
        /* The schedule starts when it starts: the energy window's ends are
         * not aligned on the counter (the bound is its step). */
        st = ib__energy_meters_begin(&s->energy, NULL, NULL, err);
        if (st == IB_OK) st = dispatch(s, n, pt, err);
        double none;
        ib_status ended = ib__energy_meters_end(&s->energy, NULL, NULL, &none, err);
        if (st == IB_OK) st = ended;
        pt->partial = st != IB_OK;
        hand_over_requests(s, rate_index);
        done = summarize(s, pt);
        serve_energy(s, st, pt);
    }
    *v = verdict(s, st, pt, done);
    total_percentile(s, pt, done);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Which rates: a list, or the search for the highest that meets the target  */
/* ------------------------------------------------------------------------ */

/* Now on the GPU samples' clock. */
static double sample_now(const server *s) { return ib__now_ms() - s->sample_t0; }

static ib_status measure_point(server *s, double rate, ib_serve_result *out, ib__serve_verdict *v,
                               ib_error *err)
{
    IB_FAIL_IF(out->n_points == IB_SERVE_MAX_RATES, err, IB_ERR_INTERNAL, "more than %d rates",
               IB_SERVE_MAX_RATES);
    ib_serve_point *pt = &out->points[out->n_points++];
    double *window = s->rate_ms[out->n_points - 1];
    window[0] = sample_now(s);
    ib_status st = serve_rate(s, rate, (size_t)out->n_points - 1, pt, v, err);
    window[1] = sample_now(s);
    if (pt->met && (!out->found || rate > out->points[out->best].offered_rate)) {
        out->found = true;
        out->best = out->n_points - 1;
    }
    return st;
}

/* Grows the rate geometrically (x2) from the first until one fails the
 * target, halving instead while none has met it (at most MAX_HALVINGS
 * times, never below min_rate), then bisects (geometric mean) between the
 * highest met and the lowest failed until they are within the tolerance.
 * Halving stops where the run time alone passes the target: queueing only
 * adds to it, so no lower rate can meet it. Each step goes on the verdict
 * alone, so that a fleet's devices all take the same rates. */
static ib_status search(server *s, double first, ib_serve_result *out, ib_error *err)
{
    double lo = 0, hi = INFINITY, rate = first;
    for (;;) {
        ib__serve_verdict v;
        IB_TRY(measure_point(s, rate, out, &v, err));
        if (v.stop) return IB_OK;
        if (v.met)
            lo = rate;
        else
            hi = rate;
        if (lo == 0 && v.compute_over) return IB_OK;
        if (lo == 0 && (hi <= first / pow(2, MAX_HALVINGS) || hi / 2 < s->cfg->min_rate)) return IB_OK;
        if (isinf(hi))
            rate = lo * 2;
        else if (lo == 0)
            rate = hi / 2;
        else if (hi / lo <= 1 + s->cfg->search_tolerance)
            return IB_OK;
        else
            rate = sqrt(lo * hi);
        if (out->n_points == IB_SERVE_MAX_RATES) return IB_OK;
    }
}

static ib_status validate(const ib_serve_config *c, ib_error *err)
{
    for (size_t i = 0; i < c->n_rates; i++)
        IB_FAIL_IF(!(c->rates[i] > 0) || !isfinite(c->rates[i]), err, IB_ERR_INVALID_ARG,
                   "rate %g: a rate is above 0 requests/s", c->rates[i]);
    IB_FAIL_IF(c->n_rates > IB_SERVE_MAX_RATES, err, IB_ERR_INVALID_ARG, "more than %d rates",
               IB_SERVE_MAX_RATES);
    IB_FAIL_IF(!(c->min_rate >= 0) || !isfinite(c->min_rate), err, IB_ERR_INVALID_ARG,
               "a search's lowest rate is 0 (none) or above");
    IB_FAIL_IF(c->requests < 0 || c->requests > IB__SERVE_MAX_REQUESTS, err, IB_ERR_INVALID_ARG,
               "requests: 1 to %d", IB__SERVE_MAX_REQUESTS);
    IB_FAIL_IF(c->requests == 0 && !(c->duration_ms > 0) && c->arrivals != IB_ARRIVALS_TRACE, err,
               IB_ERR_INVALID_ARG, "give a number of requests or a duration");
    IB_FAIL_IF(c->concurrency > 0 && c->requests == 0, err, IB_ERR_INVALID_ARG,
               "a closed loop runs a number of requests, not a duration");
    IB_FAIL_IF(c->request_batch < 1 || c->max_batch < 1 || c->max_batch > IB_SERVE_MAX_BATCH, err,
               IB_ERR_INVALID_ARG, "a request batch is at least 1 and a dynamic batch 1 to %d",
               IB_SERVE_MAX_BATCH);
    IB_FAIL_IF(c->concurrency > 0 && c->max_batch > 1, err, IB_ERR_INVALID_ARG,
               "dynamic batching serves an open loop, not a closed one");
    IB_FAIL_IF(c->arrivals == IB_ARRIVALS_TRACE && (!c->trace_ms || c->n_trace == 0), err, IB_ERR_INVALID_ARG,
               "an empty schedule");
    IB_FAIL_IF(c->slo_ms > 0 && !(c->slo_percentile > 0 && c->slo_percentile < 1 && c->confidence > 0 &&
                                  c->confidence < 1),
               err, IB_ERR_INVALID_ARG, "a percentile and a confidence are between 0 and 1");
    bool open_rates = c->concurrency == 0 && c->arrivals != IB_ARRIVALS_TRACE;
    IB_FAIL_IF(open_rates && c->n_rates == 0 && !(c->slo_ms > 0), err, IB_ERR_INVALID_ARG,
               "give a rate, rates, or a latency target to search for");
    return IB_OK;
}

/* Which rates, in order: the closed loop or a trace once, a list, or the
 * search from the given first rate or half the warm-up's capacity. */
static ib_status serve_all(server *s, ib_serve_result *out, ib_error *err)
{
    const ib_serve_config *cfg = s->cfg;
    ib_status st = IB_OK;
    /* The counter's step and the idle power, before any request; a fleet's
     * devices share the host: not measured there. */
    ib_config energy_cfg = cfg->run;
    energy_cfg.measure_energy = cfg->run.measure_energy && !s->hooks;
    ib__energy_meters_open(&s->energy, s->inst[0].w, &energy_cfg);
    if (s->hooks)
        snprintf(s->energy.why_not, sizeof s->energy.why_not,
                 "not measured in a fleet (--devices, MPI): not built yet");
    s->warm_ms[0] = sample_now(s);
    for (size_t i = s->n_inst; i-- > 0 && st == IB_OK;) {
        bool several = s->n_inst > 1;
        ib__progress_step(&s->pr, several ? (int64_t)(s->n_inst - i) : 0, several ? (int64_t)s->n_inst : 0,
                          several ? "instance" : NULL, cfg->request_batch);
        ib__progress_phase(&s->pr, IB_PHASE_WARMUP, 0);
        st = warm_up(&s->inst[i], cfg, s->copies, &out->service_ms, err);
    }
    if (st == IB_OK) st = check_host_wait(&s->inst[0], cfg, out, err);
    s->warm_ms[1] = sample_now(s);
    double capacity = (double)s->n_inst * 1000.0 / fmax(out->service_ms, 1e-6);
    if (s->hooks && !s->hooks->warmed(s->hooks->user, st, st == IB_OK ? &capacity : NULL)) return st;
    IB_TRY(st);
    ib__serve_verdict v;
    if (cfg->concurrency > 0 || cfg->arrivals == IB_ARRIVALS_TRACE)
        return measure_point(s, NAN, out, &v, err);
    if (cfg->n_rates > 0) {
        for (size_t i = 0; i < cfg->n_rates; i++) {
            IB_TRY(measure_point(s, cfg->rates[i], out, &v, err));
            if (v.stop) break;
        }
        return IB_OK;
    }
    out->searched = true;
    return search(s, cfg->start_rate > 0 ? cfg->start_rate : capacity / 2, out, err);
}

/* Alone on a CUDA workload: the GPU's state sampled into the result's
 * environment from before warm-up to the last rate (a fleet samples each
 * device itself). */
static void start_sampling(server *s, ib_workload *w, ib_env *env)
{
    s->sample_t0 = ib__now_ms();
    if (s->hooks || !s->cfg->run.sample_gpu_state || !ib__workload_can(w, IB_CAP_CUDA_STREAM)) return;
    s->env = env;
    s->sampler = ib__gpu_sampler_start(s->env, w->device_id, IB__GPU_SAMPLE_PERIOD_MS);
}

/* Each rate's compute against the service time of warm-up, once the
 * sampler is stopped (its samples are read then, never while it runs).
 * Warm-up's clock is that of its second half: its first runs ramp the
 * clocks up. */
static void explain_points(server *s, ib_serve_result *out)
{
    ib__gpu_sampler_stop(s->sampler);
    s->sampler = NULL;
    const ib_gpu_sample *g = s->env ? s->env->gpu_samples : NULL;
    size_t n = s->env ? s->env->n_gpu_samples : 0;
    double warm = ib__serve_sm_clock_median(g, n, (s->warm_ms[0] + s->warm_ms[1]) / 2, s->warm_ms[1]);
    for (size_t i = 0; i < out->n_points; i++) {
        ib_serve_point *p = &out->points[i];
        double load = ib__serve_sm_clock_median(g, n, s->rate_ms[i][0], s->rate_ms[i][1]);
        ib__serve_explain(out->service_ms, p->n > 0 ? p->compute.p50 : NAN, warm, load,
                          p->n > 0 ? p->wakeup.p50 : NAN, out->warmup_host_wait_ms / out->warmup_held_ms,
                          &p->explained);
    }
    s->env = NULL;
}

/* Serves every rate, the machine watched as latency watches it: other
 * processes' CPU use over the serving, the threads asked, the GPU's state
 * (docs/serve.md, "The machine"). */
static ib_status serve_watched(server *s, ib_workload *w, ib_serve_result *out, ib_error *err)
{
    bool cpu_device = w->info.device == IB_DEVICE_CPU;
    start_sampling(s, w, &out->env);
    ib__cpu_watch cpu;
    ib__cpu_watch_start(&cpu, &out->env);
    ib_status st = serve_all(s, out, err);
    out->warnings |= ib__cpu_watch_stop(&cpu, &out->env, cpu_device);
    out->warnings |= ib__env_threads_warning(&out->env, ib__workload_threads(w), 0, cpu_device);
    explain_points(s, out);
    out->warnings |= ib__env_gpu_warnings(&out->env);
    return st;
}

ib_status ib_measure_serve(ib_workload *w, const ib_serve_config *cfg, ib_serve_result *out, ib_error *err)
{
    return ib_measure_serve_instances(&w, 1, cfg, out, err);
}

static ib_status validate_instances(ib_workload *const *ws, size_t n, ib_error *err)
{
    IB_FAIL_IF(!ws || n < 1 || n > IB_SERVE_MAX_INSTANCES, err, IB_ERR_INVALID_ARG, "1 to %d instances",
               IB_SERVE_MAX_INSTANCES);
    for (size_t i = 0; i < n; i++) {
        IB_FAIL_IF(!ws[i], err, IB_ERR_INVALID_ARG, "no workload");
        IB_FAIL_IF(i > 0 && (ws[i]->info.device != ws[0]->info.device || ws[i] == ws[0]), err,
                   IB_ERR_INVALID_ARG, "instances are distinct workloads on one kind of device");
    }
    return IB_OK;
}

static ib_status validate_request(ib_workload *const *ws, size_t n_instances, const ib_serve_config *cfg,
                                  ib_error *err)
{
    IB_FAIL_IF(!cfg, err, IB_ERR_INVALID_ARG, "no configuration");
    IB_TRY(validate_instances(ws, n_instances, err));
    IB_TRY(validate(cfg, err));
    IB_FAIL_IF(n_instances > 1 && cfg->concurrency > 0, err, IB_ERR_UNSUPPORTED,
               "a closed loop runs on one instance");
    return IB_OK;
}

ib_status ib_measure_serve_instances(ib_workload *const *ws, size_t n_instances, const ib_serve_config *cfg,
                                     ib_serve_result *out, ib_error *err)
{
    return ib__measure_serve_hooked(ws, n_instances, cfg, NULL, out, err);
}

ib_status ib__measure_serve_hooked(ib_workload *const *ws, size_t n_instances, const ib_serve_config *cfg,
                                   const ib__serve_hooks *hooks, ib_serve_result *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    ib_status st = validate_request(ws, n_instances, cfg, err);
    if (st != IB_OK) {
        /* A fleet's device that cannot start still meets the others. */
        if (hooks) hooks->warmed(hooks->user, st, NULL);
        return st;
    }
    out->copies = copies_of(ws[0]);
    out->instances = n_instances;
    ib__env_capture(&out->env, ws[0]);
    server s;
    st = server_open(&s, ws, n_instances, cfg, err);
    s.hooks = hooks;
    ib__progress_init(&s.pr, &cfg->run, ws[0]);
    if (st == IB_OK) {
        st = serve_watched(&s, ws[0], out, err);
    } else if (hooks) {
        hooks->warmed(hooks->user, st, NULL);
    }
    server_close(&s);
    out->partial = st != IB_OK;
    out->stop_status = st;
    if (st == IB_OK && cfg->slo_ms > 0 && !out->found)
        return ib__fail(err, IB_ERR_NOT_MET, "no rate measured met p%g <= %g ms", cfg->slo_percentile * 100,
                        cfg->slo_ms);
    return st;
}
