/* serve on the scripted fake and its virtual clock: the schedules (seeded,
 * Poisson checked by a Kolmogorov-Smirnov test), the early-stopping bound
 * against exact binomial values, the dynamic batcher's decisions, the
 * latency accounting from the scheduled arrival (a slow request's wait is
 * seen by the requests behind it; a closed loop hides it), the parts of a
 * request, the rate search on a known capacity, the schedule file parser,
 * cancel and the reports. */
#include "check.h"
#include "backend/fake/fake.h"
#include "core/serve.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Schedules                                                                 */
/* ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The Kolmogorov-Smirnov statistic of gaps[0..n) (sorted here) against the
 * exponential distribution of the given rate (requests/s, gaps in ms). */
static double ks_exponential(double *gaps, size_t n, double rate)
{
    qsort(gaps, n, sizeof *gaps, cmp_double);
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double cdf = 1 - exp(-gaps[i] * rate / 1000.0);
        d = fmax(d, fmax((double)(i + 1) / (double)n - cdf, cdf - (double)i / (double)n));
    }
    return d;
}

static void test_poisson_schedule(void)
{
    enum { N = 5000 };
    double *t = malloc(N * sizeof *t), *again = malloc(N * sizeof *again),
           *gaps = malloc((N - 1) * sizeof *gaps);
    ib__serve_poisson(200.0, 7, N, t);
    CHECK_NEAR(t[0], 0, 0);
    for (size_t i = 1; i < N; i++) gaps[i - 1] = t[i] - t[i - 1];
    /* The rate: (N-1) gaps in the span; 1.4% is the mean's standard error. */
    CHECK_NEAR((double)(N - 1) * 1000.0 / t[N - 1], 200.0, 200.0 * 0.03);
    double d = ks_exponential(gaps, N - 1, 200.0);
    /* 1.628/sqrt(n): the 1% critical value; the seed's exact statistic
     * pins the generator (a change of it is a change of every schedule). */
    CHECK(d < 1.628 / sqrt(N - 1));
    CHECK_NEAR(d, 0.0130066, 1e-6);
    /* The test has power: the same gaps are far from a 20% faster rate. */
    CHECK(ks_exponential(gaps, N - 1, 240.0) > 1.628 / sqrt(N - 1));
    ib__serve_poisson(200.0, 7, N, again);
    CHECK(memcmp(t, again, N * sizeof *t) == 0);
    ib__serve_poisson(200.0, 8, N, again);
    CHECK(memcmp(t, again, N * sizeof *t) != 0);
    free(t);
    free(again);
    free(gaps);
}

static void test_constant_schedule(void)
{
    double t[5];
    ib__serve_constant(250.0, 5, t);
    for (int i = 0; i < 5; i++) CHECK_NEAR(t[i], 4.0 * i, 1e-12);
}

/* ------------------------------------------------------------------------ */
/* The early-stopping bound                                                  */
/* ------------------------------------------------------------------------ */

static void test_binomial_exact(void)
{
    /* Exact values (Python fractions, math.comb). */
    CHECK_NEAR(ib__binomial_cdf(0, 459, 0.01), 0.009920974201040626, 1e-15);
    CHECK_NEAR(ib__binomial_cdf(0, 458, 0.01), 0.010021186061657198, 1e-15);
    CHECK_NEAR(ib__binomial_cdf(3, 1000, 0.01), 0.01007265477201438, 1e-13);
    CHECK_NEAR(ib__binomial_cdf(4, 1000, 0.01), 0.028686399999004727, 1e-13);
    CHECK_NEAR(ib__binomial_cdf(5, 100, 0.1), 0.05757688648703381, 1e-13);
    CHECK_NEAR(ib__binomial_cdf(10, 2000, 0.01), 0.010522510740822038, 1e-13);
    CHECK_NEAR(ib__binomial_cdf(50, 10000, 0.01) / 2.1122399326323814e-08, 1.0, 1e-9);
    CHECK_NEAR(ib__binomial_cdf(-1, 10, 0.5), 0, 0);
    CHECK_NEAR(ib__binomial_cdf(10, 10, 0.5), 1, 0);
}

static void test_early_stopping(void)
{
    /* p99 at 99% confidence: 459 requests all within the target are the
     * fewest that say so (0.99^459 <= 0.01 < 0.99^458). */
    CHECK(ib_serve_percentile_met(459, 0, 0.99, 0.99));
    CHECK(!ib_serve_percentile_met(458, 0, 0.99, 0.99));
    /* Of 1000, 2 over the target pass and 3 do not (P = 0.01007). */
    CHECK(ib_serve_percentile_met(1000, 2, 0.99, 0.99));
    CHECK(!ib_serve_percentile_met(1000, 3, 0.99, 0.99));
    /* Lower confidence allows more: P(X <= 4 | 1000) = 0.0287 <= 0.05. */
    CHECK(ib_serve_percentile_met(1000, 4, 0.99, 0.95));
    CHECK(!ib_serve_percentile_met(0, 0, 0.99, 0.99));
}

/* ------------------------------------------------------------------------ */
/* The dynamic batcher                                                       */
/* ------------------------------------------------------------------------ */

static void test_batcher(void)
{
    const double a[] = { 0, 1, 2, 10 };
    ib__batch_decision d = ib__batcher_decide(a, 4, 0, 3, 5);
    CHECK_NEAR(d.dispatch_ms, 2, 0); /* the batch fills at 2, before the delay ends at 5 */
    CHECK_EQ_INT(d.count, 3);
    d = ib__batcher_decide(a, 4, 0, 3, 1.5);
    CHECK_NEAR(d.dispatch_ms, 1.5, 0); /* the delay ends first: the two arrived */
    CHECK_EQ_INT(d.count, 2);
    d = ib__batcher_decide(a, 4, 12, 3, 5);
    CHECK_NEAR(d.dispatch_ms, 12, 0); /* busy until 12: all arrived, the batch is full */
    CHECK_EQ_INT(d.count, 3);
    d = ib__batcher_decide(a, 4, 0, 1, 5);
    CHECK_NEAR(d.dispatch_ms, 0, 0); /* no batching: at once, alone */
    CHECK_EQ_INT(d.count, 1);
    d = ib__batcher_decide(a + 3, 1, 0, 4, 5);
    CHECK_NEAR(d.dispatch_ms, 15, 0); /* the last one waits out the delay */
    CHECK_EQ_INT(d.count, 1);
    d = ib__batcher_decide(a, 4, 3, 8, 20);
    CHECK_NEAR(d.dispatch_ms, 20, 0); /* fewer than B ever come: the delay decides */
    CHECK_EQ_INT(d.count, 4);
}

/* ------------------------------------------------------------------------ */
/* Serving the fake                                                          */
/* ------------------------------------------------------------------------ */

/* Run index slow_run takes 50 ms, every other 1 ms (+0.1 ms an input
 * above one in a batch). */
typedef struct slow_script {
    int64_t slow_run;
    int64_t cancel_at_run;
    volatile int *cancel;
} slow_script;

static double slow_duration(int64_t batch, int64_t index, void *ctx)
{
    slow_script *s = ctx;
    if (s->cancel && index == s->cancel_at_run) *s->cancel = 1;
    return index == s->slow_run ? 50.0 : 1.0 + 0.1 * (double)(batch - 1);
}

static ib_workload *open_slow(slow_script *ss, int64_t slow_run)
{
    *ss = (slow_script){ .slow_run = slow_run, .cancel_at_run = -1 };
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = slow_duration;
    s.ctx = ss;
    return check_open_fake(&s);
}

/* Two warm-up runs (indexes 0 and 1), then the requests. */
static void serve_config(ib_serve_config *cfg, int64_t requests)
{
    ib_serve_config_init(cfg);
    cfg->run.warmup_runs = 2;
    cfg->run.warmup_ms = 0;
    cfg->requests = requests;
    cfg->arrivals = IB_ARRIVALS_CONSTANT;
}

/* What on_request handed over (up to 64 requests). */
typedef struct handed {
    ib_serve_request r[64];
    size_t n;
} handed;

static void keep(void *ctx, const ib_serve_request *r)
{
    handed *h = ctx;
    if (h->n < 64) h->r[h->n] = *r;
    h->n++;
}

/* Requests every 10 ms; the third (run index 4) takes 50 ms: the ones
 * behind it wait, and their latency from the scheduled arrival says so. */
static void test_open_loop_counts_the_wait(void)
{
    slow_script ss;
    ib_workload *w = open_slow(&ss, 4);
    ib_serve_config cfg;
    serve_config(&cfg, 10);
    double rate = 100;
    cfg.rates = &rate;
    cfg.n_rates = 1;
    handed h = { .n = 0 };
    cfg.on_request = keep;
    cfg.on_request_ctx = &h;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    CHECK_EQ_INT(r->n_points, 1);
    const ib_serve_point *p = &r->points[0];
    CHECK_EQ_INT(p->n, 10);
    CHECK(!p->partial);
    CHECK_EQ_INT(r->copies, IB_SERVE_COPIES_NONE);
    /* Totals 1, 1, 50, 41, 32, 23, 14, 5, 1, 1 ms; queue 40, 31, 22, 13, 4
     * for the five behind the slow one. */
    CHECK_NEAR(p->total.mean, 169.0 / 10, 1e-9);
    CHECK_NEAR(p->total.max, 50, 1e-9);
    CHECK_NEAR(p->queue.mean, 110.0 / 10, 1e-9);
    CHECK_NEAR(p->queue.max, 40, 1e-9);
    CHECK_NEAR(p->compute.max, 50, 1e-9);
    CHECK_NEAR(p->offered_rate, 100, 0);
    CHECK_NEAR(p->achieved_rate, 10 * 1000.0 / 91.0, 1e-9); /* the last completes at 91 ms */
    CHECK_EQ_INT(p->batch_hist[1], 10);
    /* Each request handed over in schedule order, with its own times. */
    const double totals[] = { 1, 1, 50, 41, 32, 23, 14, 5, 1, 1 };
    CHECK_EQ_INT(h.n, 10);
    for (size_t i = 0; i < 10 && i < h.n; i++) {
        const ib_serve_request *q = &h.r[i];
        CHECK_EQ_INT(q->rate_index, 0);
        CHECK_EQ_INT(q->index, i);
        CHECK_EQ_INT(q->instance, 0);
        CHECK_EQ_INT(q->run_requests, 1);
        CHECK_NEAR(q->arrival_ms, 10.0 * (double)i, 1e-9);
        CHECK_NEAR(q->total_ms, totals[i], 1e-9);
        CHECK_NEAR(q->queue_ms, i >= 3 && i <= 7 ? 40.0 - 9.0 * (double)(i - 3) : 0, 1e-9);
        CHECK_NEAR(q->compute_ms, i == 2 ? 50 : 1, 1e-9);
        CHECK_NEAR(q->start_ms, q->arrival_ms + q->queue_ms, 1e-9);
        CHECK_NEAR(q->end_ms, q->arrival_ms + q->total_ms, 1e-9);
        CHECK(isnan(q->h2d_ms) && isnan(q->d2h_ms));
    }
    free(r);
    ib_workload_destroy(w);
}

/* The CSV of handed-over requests: exact cells, an empty one for a part
 * not measured. */
static void test_requests_csv(void)
{
    ib_serve_request q[2] = {
        { .rate_index = 0,
          .index = 0,
          .instance = 1,
          .run_requests = 3,
          .arrival_ms = 0.5,
          .start_ms = 2.5,
          .end_ms = 3.75,
          .queue_ms = 2,
          .wakeup_ms = 0.125,
          .h2d_ms = NAN,
          .compute_ms = 1.25,
          .d2h_ms = NAN,
          .total_ms = 3.25 },
        { .rate_index = 2,
          .index = 7,
          .instance = 0,
          .run_requests = 1,
          .arrival_ms = 0.1,
          .start_ms = 0.1,
          .end_ms = 0.3,
          .queue_ms = 0,
          .wakeup_ms = 0,
          .h2d_ms = 0.05,
          .compute_ms = 0.1,
          .d2h_ms = 0.05,
          .total_ms = 0.2 },
    };
    char *csv = ib_serve_requests_csv(q, 2);
    CHECK(csv &&
          !strcmp(csv,
                  "rate_index,request,instance,run_requests,arrival_ms,start_ms,end_ms,queue_ms,wakeup_ms,"
                  "h2d_ms,compute_ms,d2h_ms,total_ms\r\n"
                  "0,0,1,3,0.5,2.5,3.75,2,0.125,,1.25,,3.25\r\n"
                  "2,7,0,1,0.1,0.1,0.3,0,0,0.05,0.1,0.05,0.2\r\n"));
    ib_free(csv);
}

/* The same script in a closed loop of one: each request is issued when the
 * one before completes, so the slow run's wait is in nobody's latency
 * (coordinated omission). */
static void test_closed_loop_hides_the_wait(void)
{
    slow_script ss;
    ib_workload *w = open_slow(&ss, 4);
    ib_serve_config cfg;
    serve_config(&cfg, 10);
    cfg.concurrency = 1;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    const ib_serve_point *p = &r->points[0];
    CHECK_EQ_INT(p->n, 10);
    CHECK(isnan(p->offered_rate));
    CHECK_NEAR(p->total.mean, (9 * 1.0 + 50) / 10, 1e-9);
    CHECK_NEAR(p->queue.max, 0, 1e-9);
    free(r);
    ib_workload_destroy(w);

    /* Two outstanding on one instance: the second waits for the first. */
    w = open_slow(&ss, -1);
    cfg.concurrency = 2;
    r = calloc(1, sizeof *r);
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    CHECK_NEAR(r->points[0].total.min, 1, 1e-9);
    CHECK_NEAR(r->points[0].total.max, 2, 1e-9);
    free(r);
    ib_workload_destroy(w);
}

static void test_dynamic_batching(void)
{
    slow_script ss;
    ib_workload *w = open_slow(&ss, -1);
    ib_serve_config cfg;
    serve_config(&cfg, 12);
    double rate = 1000; /* one request a ms */
    cfg.rates = &rate;
    cfg.n_rates = 1;
    cfg.max_batch = 4;
    cfg.max_delay_us = 2500;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    const ib_serve_point *p = &r->points[0];
    /* The fourth arrives after the delay of the first: batches of 3, each
     * dispatched 2.5 ms after its first and taking 1.2 ms. */
    CHECK_EQ_INT(p->runs, 4);
    CHECK_EQ_INT(p->batch_hist[3], 4);
    CHECK_EQ_INT(p->n, 12);
    CHECK_NEAR(p->total.max, 2.5 + 1.2, 1e-9);
    CHECK_NEAR(p->total.min, 0.5 + 1.2, 1e-9);
    CHECK_EQ_INT(ib__fake_set_batches(w), 5); /* warm-up at 4, 3, 2 and 1, then at 3 once */
    free(r);
    ib_workload_destroy(w);
}

/* A constant run time of the script's ctx (a double, ms). */
static double constant_duration(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)index;
    return *(const double *)ctx;
}

/* One rate of Poisson arrivals; each request handed to check (if not NULL). */
static const ib_serve_point *serve_poisson(ib_workload *w, double rate, int64_t requests,
                                           void (*check)(void *, const ib_serve_request *), void *check_ctx,
                                           ib_serve_result *r)
{
    ib_serve_config cfg;
    serve_config(&cfg, requests);
    cfg.arrivals = IB_ARRIVALS_POISSON;
    cfg.rates = &rate;
    cfg.n_rates = 1;
    cfg.on_request = check;
    cfg.on_request_ctx = check_ctx;
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    return &r->points[0];
}

/* At 17.5 requests/s and a 3.1 ms run (the H200's EfficientNet-B0 with its
 * copies), 5.4% of Poisson arrivals find the instance busy, waiting for
 * the rest of its run: the queue's p99 is 2.6 ms at 5% load (M/D/1: P(wait
 * > x) = load x (1 - x / run) for x < run; a simulation of 200000 gives
 * p99 2.62 ms). It is queueing, the dispatcher adds nothing (wake-up 0 on
 * the virtual clock); with a 30 us run the same schedule queues nobody at
 * the p99. */
static void test_queue_at_low_load_is_queueing(void)
{
    double run_ms = 3.1;
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = constant_duration;
    s.ctx = &run_ms;
    ib_workload *w = check_open_fake(&s);
    ib_serve_result *r = calloc(1, sizeof *r);
    const ib_serve_point *p = serve_poisson(w, 17.5, 20000, NULL, NULL, r);
    CHECK_EQ_INT(p->n, 20000);
    CHECK(p->queue.p50 == 0 && p->queue.p90 == 0);
    CHECK(p->queue.p99 > 2.45 && p->queue.p99 < 2.8);
    CHECK(p->queue.p95 > 0 && p->queue.p95 < 0.5); /* between 5% and 10% waited */
    printf("  M/D/1 at 17.5/s, 3.1 ms runs: queue p95 %.3f p99 %.3f max %.3f ms\n", p->queue.p95,
           p->queue.p99, p->queue.max);
    CHECK(p->wakeup.max < 1e-9);
    ib_workload_destroy(w);

    run_ms = 0.03;
    w = check_open_fake(&s);
    p = serve_poisson(w, 17.5, 20000, NULL, NULL, r);
    CHECK(p->queue.p99 == 0 && p->queue.max < run_ms + 1e-9);
    free(r);
    ib_workload_destroy(w);
}

/* A workload on the real host clock whose run spins for *impl ms: the
 * dispatcher's own sleeping and waking, which a virtual clock skips. */
static ib_status spin_set_batch(ib_workload *w, int64_t batch, ib_error *err)
{
    (void)err;
    w->info.batch = batch;
    return IB_OK;
}

static ib_status spin_run(ib_workload *w, ib_error *err)
{
    (void)err;
    w->clock.wait_until_ms(w->clock.ctx, ib__workload_now_ms(w) + *(const double *)w->impl);
    return IB_OK;
}

static void spin_destroy(ib_workload *w) { (void)w; }

static const ib__workload_ops spin_ops = {
    .version = IB__WORKLOAD_OPS_VERSION,
    .set_batch = spin_set_batch,
    .run = spin_run,
    .destroy = spin_destroy,
};

/* A wait until t_ms on the monotonic clock. */
typedef void (*wait_fn)(double t_ms);

static void host_clock_wait(double t_ms)
{
    ib__clock c = ib__host_clock();
    c.wait_until_ms(c.ctx, t_ms);
}

/* What the host clock's wait would be without its spin: one sleep. */
static void plain_sleep(double t_ms)
{
    struct timespec ts = { .tv_sec = (time_t)(t_ms / 1e3), .tv_nsec = (long)(fmod(t_ms, 1e3) * 1e6) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

/* The wait's lateness to a deadline 1 ms ahead (so that it sleeps first);
 * negative if it returned early. */
static double lateness_ms(wait_fn wait)
{
    double t = ib__now_ms() + 1.0;
    wait(t);
    return ib__now_ms() - t;
}

/* The host clock's wait sleeps to just before the deadline and spins the
 * rest, so that a due run starts within microseconds (a sleep alone wakes
 * tens of microseconds late: timer slack, then the scheduler). Its plan is
 * checked exactly (ib__host_wait_sleep_to); how late it and a plain sleep
 * wake, interleaved, 10th fastest of 100 each, is printed: a figure of the
 * machine (54 us for a sleep, 0.1 us for the wait on a quiet host). It was
 * a bound (the wait's 10th fastest under half the sleep's) until issue 28:
 * on a loaded machine the scheduler wakes both late alike. */
static void test_host_clock_wait_spins_to_the_deadline(void)
{
    enum { WAITS = 100, KTH = 9 };
    double spin[WAITS], slept[WAITS];
    for (int i = 0; i < WAITS; i++) {
        spin[i] = lateness_ms(host_clock_wait);
        slept[i] = lateness_ms(plain_sleep);
    }
    qsort(spin, WAITS, sizeof *spin, cmp_double);
    qsort(slept, WAITS, sizeof *slept, cmp_double);
    /* How late each wakes is the machine's load as much as the code's: a
     * figure, printed (docs/measurements.md), not a verdict (issue 28: a
     * red run must mean a bug). What the code does is checked exactly:
     * it sleeps to IB__HOST_SPIN_MS before the deadline and spins the
     * rest, and never returns before the deadline. */
    printf("  host clock's wait: 10th fastest %.4f ms late (fastest %.4f), a plain sleep's %.4f (%.4f)\n",
           spin[KTH], spin[0], slept[KTH], slept[0]);
    CHECK(spin[0] >= 0); /* never before the deadline */
    CHECK_NEAR(ib__host_wait_sleep_to(100.0, 101.0), 101.0 - IB__HOST_SPIN_MS, 0);
    CHECK_NEAR(IB__HOST_SPIN_MS, 0.2, 0);
    CHECK(ib__host_wait_sleep_to(100.85, 101.0) == -INFINITY); /* within the spin: no sleep */
    CHECK(ib__host_wait_sleep_to(100.8, 101.0) == -INFINITY);  /* exactly at it: spin */
    CHECK(ib__host_wait_sleep_to(102.0, 101.0) == -INFINITY);  /* past the deadline */
}

/* Each request served on the host clock against what holds whatever the
 * machine's speed and load. */
typedef struct host_requests {
    double run_ms;
    int n, broken;
} host_requests;

static void check_host_request(void *ctx, const ib_serve_request *r)
{
    host_requests *h = ctx;
    h->n++;
    /* The wake-up is the part of the queue after the run was due: never
     * before it, never more than the queue (its clock reads in one time
     * base); the run spins run_ms on the same clock. */
    bool ok = r->wakeup_ms >= -1e-9 && r->wakeup_ms <= r->queue_ms + 1e-9 &&
              r->compute_ms >= h->run_ms - 1e-9 && fabs(r->start_ms - r->arrival_ms - r->queue_ms) < 1e-9 &&
              r->total_ms >= r->queue_ms + r->compute_ms - 1e-9;
    if (!ok) {
        h->broken++;
        fprintf(stderr, "  request %zu: arrival %.4f queue %.4f wake-up %.4f compute %.4f total %.4f ms\n",
                r->index, r->arrival_ms, r->queue_ms, r->wakeup_ms, r->compute_ms, r->total_ms);
    }
}

/* The dispatcher on the host clock, with real threads sleeping and
 * waking (which a virtual clock skips), at 200 requests/s with a 50 us run:
 * every request served once and its times consistent. How late it wakes
 * is the host clock's wait (above) and, on the virtual clock, nothing
 * (test_queue_at_low_load_is_queueing); not bounded here: on a loaded
 * machine the spinning run itself is preempted and requests queue behind
 * it (seen p50 2.8 ms with a wake-up p50 of 0.6 us), and the scheduler's
 * wake-ups are late (a wake-up p50 over 20 us under ASan and make test). */
static void test_queue_on_the_host_clock(void)
{
    host_requests h = { .run_ms = 0.05 };
    ib_workload w = { .ops = &spin_ops, .impl = &h.run_ms, .clock = ib__host_clock() };
    w.info.device = IB_DEVICE_CPU;
    w.info.batch = 1;
    ib_serve_result *r = calloc(1, sizeof *r);
    const ib_serve_point *p = serve_poisson(&w, 200, 200, check_host_request, &h, r);
    CHECK_EQ_INT(p->n, 200);
    CHECK_EQ_INT(h.n, 200);
    CHECK_EQ_INT(h.broken, 0);
    CHECK(p->wakeup.min >= -1e-9 && p->wakeup.max <= p->queue.max + 1e-9);
    printf("  host clock, 200/s, 50 us runs: queue p50 %.4f p99 %.4f, wake-up p50 %.4f p99 %.4f ms\n",
           p->queue.p50, p->queue.p99, p->wakeup.p50, p->wakeup.p99);
    free(r);
}

/* A runtime's first run at a new shape pays a search (cuDNN's): 100 ms
 * here, 1 ms + 0.1 ms a request after. */
typedef struct first_run_script {
    bool seen[IB_SERVE_MAX_BATCH + 1];
} first_run_script;

static double first_run_duration(int64_t batch, int64_t index, void *ctx)
{
    (void)index;
    first_run_script *s = ctx;
    bool first = !s->seen[batch];
    s->seen[batch] = true;
    return first ? 100.0 : 1.0 + 0.1 * (double)(batch - 1);
}

/* Dynamic batching forms batches of many sizes; each size's first run is
 * paid in the warm-up, so no timed request carries it. A rebind to another
 * size is a cost of serving: in the queue of the run's requests. */
/* 400 Poisson requests at 2000/s, batched up to 6 waiting 1.5 ms, on the
 * first-run script with a 0.5 ms rebind (gpu_like: with 0.4 ms copies);
 * checks every request ran and several batch sizes formed. */
static ib_serve_result *serve_batched(first_run_script *fr, bool gpu_like, ib_workload **w)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = first_run_duration;
    s.ctx = fr;
    s.set_batch_ms = 0.5; /* a rebind's cost: in the queue, not in the wake-up */
    s.gpu_like = gpu_like;
    if (gpu_like) s.copy_ms = 0.4;
    *w = check_open_fake(&s);
    ib_serve_config cfg;
    serve_config(&cfg, 400);
    cfg.arrivals = IB_ARRIVALS_POISSON;
    double rate = 2000;
    cfg.rates = &rate;
    cfg.n_rates = 1;
    cfg.max_batch = 6;
    cfg.max_delay_us = 1500;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(*w, &cfg, r, &err), IB_OK);
    const ib_serve_point *p = &r->points[0];
    CHECK_EQ_INT(p->n, 400);
    int sizes = 0;
    for (int b = 1; b <= 6; b++) sizes += p->batch_hist[b] > 0;
    CHECK(sizes >= 4); /* the schedule did form several sizes */
    return r;
}

static void test_batches_warmed_before_timing(void)
{
    first_run_script fr = { { false } };
    ib_workload *w;
    ib_serve_result *r = serve_batched(&fr, false, &w);
    const ib_serve_point *p = &r->points[0];
    CHECK(p->compute.max <= 1.5 + 1e-9);
    CHECK(p->total.max < 100);
    for (int b = 1; b <= 6; b++) CHECK(fr.seen[b]);
    CHECK_NEAR(p->total.mean, p->queue.mean + p->compute.mean, 1e-9);
    CHECK(p->queue.max >= 0.5 && p->wakeup.max < 1e-9);
    free(r);
    ib_workload_destroy(w);
}

static void test_copies_apart(void)
{
    slow_script ss = { .slow_run = -1, .cancel_at_run = -1 };
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = slow_duration;
    s.ctx = &ss;
    s.gpu_like = true;
    s.copy_ms = 0.4;
    ib_workload *w = check_open_fake(&s);
    ib_serve_config cfg;
    serve_config(&cfg, 20);
    double rate = 10;
    cfg.rates = &rate;
    cfg.n_rates = 1;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    CHECK_EQ_INT(r->copies, IB_SERVE_COPIES_APART);
    const ib_serve_point *p = &r->points[0];
    CHECK_NEAR(p->h2d.p50, 0.2, 1e-9);
    CHECK_NEAR(p->compute.p50, 1.0, 1e-9);
    CHECK_NEAR(p->d2h.p50, 0.2, 1e-9);
    CHECK_NEAR(p->total.p50, 1.4, 1e-9);
    CHECK_NEAR(p->queue.max, 0, 1e-9);
    /* The stacked parts: the three means, nothing left for the host, no
     * queue. */
    char *html = ib_serve_report_html(r, &cfg, ib_workload_get_info(w));
    CHECK(html && strstr(html, "<title>copy in: mean 200 us</title>"));
    CHECK(html && strstr(html, "<title>compute: mean 1 ms</title>"));
    CHECK(html && strstr(html, "<title>copy out: mean 200 us</title>"));
    CHECK(html && !strstr(html, "class=\"part-host\"") && !strstr(html, "class=\"part-queue\""));
    free(html);
    char *text = ib_serve_report_text(r, &cfg, ib_workload_get_info(w));
    CHECK(text && strstr(text, "\n  copies: in p50 200 us p99 200 us, out p50 200 us p99 200 us\n"));
    free(text);
    free(r);
    ib_workload_destroy(w);
}

/* Copies apart under dynamic batching: every run, whatever its size and
 * after a rebind to it, has its copy in, compute and copy out timed apart,
 * and each request's total is exactly its queue and its run's three parts
 * (the rebind in the queue). */
static void test_copies_apart_batched(void)
{
    first_run_script fr = { { false } };
    ib_workload *w;
    ib_serve_result *r = serve_batched(&fr, true, &w);
    CHECK_EQ_INT(r->copies, IB_SERVE_COPIES_APART);
    const ib_serve_point *p = &r->points[0];
    CHECK_NEAR(p->h2d.min, 0.2, 1e-9);
    CHECK_NEAR(p->h2d.max, 0.2, 1e-9);
    CHECK_NEAR(p->d2h.min, 0.2, 1e-9);
    CHECK_NEAR(p->d2h.max, 0.2, 1e-9);
    CHECK(p->compute.min >= 1.0 - 1e-9 && p->compute.max <= 1.5 + 1e-9);
    CHECK_NEAR(p->total.mean, p->queue.mean + p->h2d.mean + p->compute.mean + p->d2h.mean, 1e-9);
    free(r);
    ib_workload_destroy(w);
}

/* The requests over 5 ms at rate (> 1000/s) when each takes 1 ms and they
 * arrive at constant gaps: request i completes i * (1 - gap) late. */
static int64_t over_target(double rate, int64_t n)
{
    double gap = 1000.0 / rate;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += 1.0 + (double)i * fmax(0, 1 - gap) > 5.0;
    return k;
}

static void test_search_known_capacity(void)
{
    slow_script ss;
    ib_workload *w = open_slow(&ss, -1);
    ib_serve_config cfg;
    serve_config(&cfg, 1000);
    cfg.slo_ms = 5;
    cfg.start_rate = 100;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    CHECK(r->searched && r->found);
    /* The highest rate that truly passes: 2 requests over of 1000 pass
     * p99 at 99% confidence, 3 do not. */
    double truth = 1000;
    while (over_target(truth + 0.01, 1000) <= 2) truth += 0.01;
    double best = r->points[r->best].offered_rate;
    CHECK(best <= truth);
    bool bracketed = false;
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_serve_point *p = &r->points[i];
        CHECK_EQ_INT(p->over_slo, over_target(p->offered_rate, 1000));
        CHECK(p->met == (p->over_slo <= 2));
        if (!p->met && p->offered_rate > best && p->offered_rate <= best * 1.05) bracketed = true;
    }
    CHECK(bracketed);
    CHECK(best >= truth / 1.05);
    CHECK_NEAR(r->points[0].offered_rate, 100, 0);
    CHECK_NEAR(r->points[1].offered_rate, 200, 0); /* grown geometrically */
    free(r);
    ib_workload_destroy(w);
}

static void test_target_never_met(void)
{
    slow_script ss;
    ib_workload *w = open_slow(&ss, -1);
    ib_serve_config cfg;
    serve_config(&cfg, 500);
    cfg.slo_ms = 0.5; /* below the service time */
    cfg.start_rate = 100;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_ERR_NOT_MET);
    /* The run time alone passes the target: no lower rate is tried. */
    CHECK(!r->found && r->n_points == 1 && !r->partial);
    CHECK_NEAR(r->points[r->n_points - 1].at_percentile_ms, 1.0, 1e-9);
    char *text = ib_serve_report_text(r, &cfg, ib_workload_get_info(w));
    CHECK(text && strstr(text, "no rate met p99 <= 500 us"));
    CHECK(text && strstr(text, "no lower rate can meet it"));
    free(text);
    free(r);
    ib_workload_destroy(w);
}

/* A target that queueing breaks but the run time meets: the search halves
 * the rate until one meets it. */
static void test_search_halves_down(void)
{
    slow_script ss;
    ib_workload *w = open_slow(&ss, -1);
    ib_serve_config cfg;
    serve_config(&cfg, 500);
    cfg.slo_ms = 3;
    cfg.start_rate = 4000;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    CHECK(r->found && !r->points[0].met);
    CHECK_NEAR(r->points[1].offered_rate, 2000, 0);
    CHECK(r->points[r->best].offered_rate <= 1004.1 && r->points[r->best].offered_rate >= 900);

    /* The same, halving to no rate below 1500/s: 4000 and 2000 fail, 1000
     * is below the floor, so nothing met. */
    cfg.min_rate = 1500;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_ERR_NOT_MET);
    CHECK(!r->found && r->n_points == 2);
    CHECK_NEAR(r->points[1].offered_rate, 2000, 0);
    cfg.min_rate = -1;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_ERR_INVALID_ARG);
    free(r);
    ib_workload_destroy(w);
}

static void test_cancel_keeps_rates(void)
{
    slow_script ss;
    ib_workload *w = open_slow(&ss, -1);
    volatile int cancel = 0;
    ss.cancel = &cancel;
    ss.cancel_at_run = 2 + 100 + 30; /* the 31st request of the second rate */
    ib_serve_config cfg;
    serve_config(&cfg, 100);
    cfg.run.cancel = &cancel;
    double rates[] = { 50, 100, 200 };
    cfg.rates = rates;
    cfg.n_rates = 3;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_ERR_INTERRUPTED);
    CHECK(r->partial);
    CHECK_EQ_INT(r->n_points, 2);
    CHECK(!r->points[0].partial && r->points[0].n == 100);
    CHECK(r->points[1].partial && r->points[1].n == 31);
    char *json = ib_serve_report_json(r, &cfg, ib_workload_get_info(w));
    cJSON *d = cJSON_Parse(json);
    CHECK(d && !strcmp(cJSON_GetObjectItem(d, "schema")->valuestring, "inferbench.serve/2"));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(d, "partial")));
    cJSON *pts = cJSON_GetObjectItem(d, "rates");
    CHECK_EQ_INT(cJSON_GetArraySize(pts), 2);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(pts, 1), "partial")));
    cJSON_Delete(d);
    free(json);
    free(r);
    ib_workload_destroy(w);
}

static void test_bad_config(void)
{
    slow_script ss;
    ib_workload *w = open_slow(&ss, -1);
    ib_serve_config cfg;
    serve_config(&cfg, 10);
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_ERR_INVALID_ARG); /* no rate, no target */
    double bad = 0;
    cfg.rates = &bad;
    cfg.n_rates = 1;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "above 0") != NULL);
    CHECK_EQ_INT(ib__fake_runs(w), 0); /* refused before anything ran */
    free(r);
    ib_workload_destroy(w);
}

/* Two instances serve one queue, a thread each. Each fake has its own
 * virtual clock, so which instance takes which request depends on the
 * threads; what must hold whatever the order: every request served once,
 * and at 100/s with 1 ms runs nobody waits. */
static void test_two_instances(void)
{
    slow_script s0, s1;
    ib_workload *ws[2] = { open_slow(&s0, -1), open_slow(&s1, -1) };
    ib_serve_config cfg;
    serve_config(&cfg, 50);
    double rate = 100;
    cfg.rates = &rate;
    cfg.n_rates = 1;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve_instances(ws, 2, &cfg, r, &err), IB_OK);
    CHECK_EQ_INT(r->instances, 2);
    const ib_serve_point *p = &r->points[0];
    CHECK_EQ_INT(p->n, 50);
    CHECK_EQ_INT(p->batch_hist[1], 50);
    CHECK_EQ_INT(ib__fake_runs(ws[0]) + ib__fake_runs(ws[1]), 2 * 2 + 50); /* warm-ups + one run a request */
    CHECK_NEAR(p->total.min, 1, 1e-9);
    CHECK_NEAR(p->total.max, 1, 1e-9);
    CHECK_NEAR(p->queue.max, 0, 1e-9);
    cfg.concurrency = 1;
    cfg.n_rates = 0;
    CHECK_EQ_INT(ib_measure_serve_instances(ws, 2, &cfg, r, &err), IB_ERR_UNSUPPORTED);
    ib_workload *same[2] = { ws[0], ws[0] };
    CHECK_EQ_INT(ib_measure_serve_instances(same, 2, &cfg, r, &err), IB_ERR_INVALID_ARG);
    free(r);
    ib_workload_destroy(ws[0]);
    ib_workload_destroy(ws[1]);
}

/* Hands out fakes; the copy numbered oom_copy (from 1) runs out of memory
 * above batch 4, or (oom_at_open) when it opens; fail_copy fails to open. */
typedef struct opener {
    slow_script ss[8];
    int opened, oom_copy, fail_copy;
    bool oom_at_open;
} opener;

static ib_status open_copy(void *ctx, ib_workload **out, ib_error *err)
{
    opener *o = ctx;
    int k = ++o->opened;
    IB_FAIL_IF(k == o->fail_copy, err, IB_ERR_RUNTIME, "copy %d: broken", k);
    IB_FAIL_IF(k == o->oom_copy && o->oom_at_open, err, IB_ERR_DEVICE_OOM, "copy %d: out of memory", k);
    o->ss[k - 1] = (slow_script){ .slow_run = -1, .cancel_at_run = -1 };
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = slow_duration;
    s.ctx = &o->ss[k - 1];
    s.oom_above_batch = k == o->oom_copy ? 4 : 0;
    return ib__workload_open_fake(&s, out, err);
}

static void close_all(ib_workload **ws, size_t n)
{
    for (size_t i = 0; i < n; i++) ib_workload_destroy(ws[i]);
}

/* --instances max: copies are opened and run at the largest batch until
 * one runs out of memory, whether when it opens or when it runs. */
static void test_open_instances(void)
{
    ib_workload *ws[8] = { 0 };
    size_t n = 0;
    bool ran_out;
    ib_error err;
    opener o = { .oom_copy = 4 };
    CHECK_EQ_INT(ib_serve_open_instances(open_copy, &o, 8, 8, ws, &n, &ran_out, &err), IB_OK);
    CHECK_EQ_INT(n, 3);
    CHECK(ran_out && o.opened == 4 && ws[3] == NULL);
    CHECK_EQ_INT(ib__fake_runs(ws[0]), 1);
    CHECK_EQ_INT(ws[2]->info.batch, 8); /* each ran at the largest batch */
    close_all(ws, n);

    o = (opener){ .oom_copy = 4 };
    n = 0;
    CHECK_EQ_INT(ib_serve_open_instances(open_copy, &o, 4, 8, ws, &n, &ran_out, &err), IB_OK);
    CHECK(n == 8 && !ran_out); /* batch 4 fits everywhere: the limit */
    close_all(ws, n);

    o = (opener){ .oom_copy = 3, .oom_at_open = true };
    CHECK_EQ_INT(open_copy(&o, &ws[0], &err), IB_OK); /* the first is given open */
    n = 1;
    CHECK_EQ_INT(ib_serve_open_instances(open_copy, &o, 8, 8, ws, &n, &ran_out, &err), IB_OK);
    CHECK(n == 2 && ran_out && o.opened == 3);
    close_all(ws, n);

    o = (opener){ .oom_copy = 1 };
    n = 0;
    CHECK_EQ_INT(ib_serve_open_instances(open_copy, &o, 8, 8, ws, &n, &ran_out, &err), IB_ERR_DEVICE_OOM);
    CHECK(n == 0 && !ran_out);

    o = (opener){ .fail_copy = 2 };
    CHECK_EQ_INT(ib_serve_open_instances(open_copy, &o, 8, 8, ws, &n, &ran_out, &err), IB_ERR_RUNTIME);
    CHECK(n == 1 && strstr(err.message, "copy 2: broken"));
    close_all(ws, n);
}

/* ------------------------------------------------------------------------ */
/* The schedule file                                                         */
/* ------------------------------------------------------------------------ */

static ib_status parse(const char *text, double **t, size_t *n, ib_error *err)
{
    return ib_serve_trace_parse(text, strlen(text), t, n, err);
}

static void test_trace_parse(void)
{
    double *t;
    size_t n;
    ib_error err;
    CHECK_EQ_INT(parse("# ms\n0\n1.5\n\n1.5\r\n 20 \n3e1", &t, &n, &err), IB_OK);
    CHECK_EQ_INT(n, 5);
    CHECK(n == 5 && t[1] == 1.5 && t[3] == 20 && t[4] == 30);
    free(t);
    CHECK_EQ_INT(parse("0\n5\n4\n", &t, &n, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "line 3") && strstr(err.message, "must not decrease"));
    CHECK(t == NULL && n == 0);
    CHECK_EQ_INT(parse("", &t, &n, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "no arrival times") != NULL);
    CHECK_EQ_INT(parse("# nothing\n\n", &t, &n, &err), IB_ERR_INVALID_ARG);
    const char *bad[] = { "-1", "abc", "1 2", "nan", "inf", "0x10", "1,5", "+3", "1e999", "5ms" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(parse(bad[i], &t, &n, &err), IB_ERR_INVALID_ARG);
        CHECK(strstr(err.message, "line 1") != NULL);
    }
    CHECK_EQ_INT(ib_serve_trace_parse("1\n\0\n", 4, &t, &n, &err), IB_ERR_INVALID_ARG);
}

/* A schedule from a file is served at its own times. */
/* A runtime that selects its kernels again on every batch change: 20 ms
 * more for a run at another batch than the run before it. */
static double switching_duration(int64_t batch, int64_t index, void *ctx)
{
    (void)index;
    int64_t *last = ctx;
    double ms = 1.0 + 0.1 * (double)(batch - 1) + (*last && batch != *last ? 20.0 : 0.0);
    *last = batch;
    return ms;
}

/* Runs of 1, 3, 3 and 1 requests (a schedule file, batching up to 4): the
 * second and the fourth follow a change, the third does not; the first is
 * neither (it follows the warm-up). */
static void test_batch_switches(void)
{
    int64_t last = 0;
    ib__fake_script sc;
    ib__fake_script_init(&sc);
    sc.duration_ms = switching_duration;
    sc.ctx = &last;
    ib_workload *w = check_open_fake(&sc);
    ib_serve_config cfg;
    serve_config(&cfg, 0);
    const double times[] = { 0, 100, 100.1, 100.2, 200, 200.1, 200.2, 300 };
    cfg.arrivals = IB_ARRIVALS_TRACE;
    cfg.trace_ms = times;
    cfg.n_trace = 8;
    cfg.max_batch = 4;
    cfg.max_delay_us = 500;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    const ib_serve_point *p = &r->points[0];
    CHECK_EQ_INT(p->runs, 4);
    CHECK_EQ_INT(p->batch_hist[3], 2);
    CHECK_EQ_INT(p->switch_runs, 2);
    CHECK_NEAR(p->switch_compute_p50_ms, (21.2 + 21.0) / 2, 1e-9);
    CHECK_NEAR(p->unchanged_compute_p50_ms, 1.2, 1e-9);
    ib_result res = {
        .kind = IB_RESULT_SERVE, .serve = r, .serve_cfg = &cfg, .info = ib_workload_get_info(w)
    };
    char *text = ib_report(&res, "text");
    CHECK(text &&
          strstr(text, "  batch changes: 2 runs after one, compute p50 21.1 ms (1.2 ms at an unchanged "
                       "batch): the runtime selects its kernels again when the shape changes"));
    ib_free(text);
    free(r);
    ib_workload_destroy(w);
}

static void test_trace_served(void)
{
    slow_script ss;
    ib_workload *w = open_slow(&ss, -1);
    ib_serve_config cfg;
    serve_config(&cfg, 0);
    const double times[] = { 0, 0, 0, 10 };
    cfg.arrivals = IB_ARRIVALS_TRACE;
    cfg.trace_ms = times;
    cfg.n_trace = 4;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    const ib_serve_point *p = &r->points[0];
    CHECK_EQ_INT(p->n, 4);
    CHECK_NEAR(p->total.max, 3, 1e-9); /* the third of three at once */
    CHECK_NEAR(p->offered_rate, 300, 1e-9);
    free(r);
    ib_workload_destroy(w);
}

/* ------------------------------------------------------------------------ */
/* What explains compute under load                                          */
/* ------------------------------------------------------------------------ */

/* The rule on given numbers (docs/serve.md), from issue 28's H200 figures:
 * warm-up's service time 1.824 ms, compute 2.879 ms at 50 requests/s. */
static void test_explain_rule(void)
{
    ib_serve_explanation e;
    /* A clock 1980 -> 1230 MHz accounts for 1.824 x (1980/1230 - 1) ms. */
    ib__serve_explain(1.824, 2.879, 1980, 1230, 0.02, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_CLOCK);
    CHECK_NEAR(e.excess, 2.879 / 1.824 - 1, 1e-12);
    CHECK_NEAR(e.clock_ms, 1.824 * (1980.0 / 1230.0 - 1), 1e-12);
    CHECK_NEAR(e.wakeup_ms, 0.02, 0);
    CHECK_NEAR(e.warmup_sm_clock_mhz, 1980, 0);
    CHECK_NEAR(e.load_sm_clock_mhz, 1230, 0);
    /* The clock barely lower (0.077 ms), the threads 0.6 ms late. */
    ib__serve_explain(1.824, 2.879, 1980, 1900, 0.6, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_WAKEUP);
    ib__serve_explain(1.824, 2.879, 1980, 1230, 0.6, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_BOTH);
    ib__serve_explain(1.824, 2.879, 1980, 1900, 0.02, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_UNEXPLAINED);
    /* No clock samples (the CPU, no NVML): the clock is not judged. */
    ib__serve_explain(1.824, 2.879, NAN, NAN, 0.02, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_UNEXPLAINED);
    CHECK(isnan(e.clock_ms));
    ib__serve_explain(1.824, 2.879, NAN, 1230, 0.6, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_WAKEUP);
    /* The edges: +5% needs explaining, just under it does not; a cause
     * of exactly half the excess explains it. */
    ib__serve_explain(2.0, 2.1, NAN, NAN, 0, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_UNEXPLAINED);
    ib__serve_explain(2.0, 2.0999, NAN, NAN, 0, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_AS_WARM);
    ib__serve_explain(2.0, 1.5, 1980, 1980, 0, NAN, &e); /* faster under load: nothing to explain */
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_AS_WARM);
    ib__serve_explain(1.0, 2.0, NAN, NAN, 0.5, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_WAKEUP);
    ib__serve_explain(1.0, 2.0, NAN, NAN, 0.4999, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_UNEXPLAINED);
    ib__serve_explain(1.0, 2.0, 1500, 1000, 0, NAN, &e); /* 1.0 x (1.5 - 1) = 0.5 ms: half */
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_CLOCK);
    /* Nothing measured: not judged. */
    ib__serve_explain(1.0, NAN, 1980, 1230, NAN, NAN, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_NONE);
    CHECK(!strcmp(ib_serve_cause_name(IB_SERVE_CAUSE_CLOCK), "the SM clock"));
    /* The H200's figures of the eleventh session: +60% at the same SM
     * clock, 1.3 us of wake-up, the run host-bound in warm-up (the GPU
     * waiting for the host 351% of its part): the host's launching. A wait
     * of 5% is not host-bound: unexplained; a measured cause comes first. */
    ib__serve_explain(1.804, 2.877, 1980, 1980, 0.0013, 3.51, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_HOST);
    CHECK_NEAR(e.host_wait_share, 3.51, 0);
    ib__serve_explain(1.804, 2.877, 1980, 1980, 0.0013, 0.05, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_UNEXPLAINED);
    ib__serve_explain(1.824, 2.879, 1980, 1230, 0.02, 3.51, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_CLOCK);
    ib__serve_explain(1.824, 2.879, 1980, 1900, 0.6, 3.51, &e);
    CHECK_EQ_INT(e.cause, IB_SERVE_CAUSE_WAKEUP);
    CHECK(!strcmp(ib_serve_cause_name(IB_SERVE_CAUSE_HOST), "a host-bound run"));
}

static double tenth_ms(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)index;
    (void)ctx;
    return 0.1;
}

/* The host-wait check after warm-up, on a fake that holds its stream: runs
 * of 0.1 ms behind a 1 ms launch wait 1 ms for the host (1000% of the
 * held run), said in the text and the JSON and handed to each rate's
 * explanation; without a hold, not checked (NaN, nothing said). */
static void test_warmup_host_wait(void)
{
    for (int hold = 1; hold >= 0; hold--) {
        ib__fake_script s;
        ib__fake_script_init(&s);
        s.duration_ms = tenth_ms;
        s.gpu_like = true;
        s.has_stream_hold = hold;
        s.launch_ms = 1.0;
        ib_workload *w = check_open_fake(&s);
        ib_serve_config cfg;
        serve_config(&cfg, 20);
        double rate = 10;
        cfg.rates = &rate;
        cfg.n_rates = 1;
        ib_serve_result *r = calloc(1, sizeof *r);
        ib_error err;
        CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
        char *text = ib_serve_report_text(r, &cfg, ib_workload_get_info(w));
        char *json = ib_serve_report_json(r, &cfg, ib_workload_get_info(w));
        if (hold) {
            CHECK_NEAR(r->warmup_held_ms, 0.1, 1e-9);
            CHECK_NEAR(r->warmup_host_wait_ms, 1.0, 1e-9);
            CHECK_NEAR(r->points[0].explained.host_wait_share, 10, 1e-9);
            CHECK(text &&
                  strstr(text, "; launch held 100 us, the GPU waited for the host 1 ms a run (1000.0%)\n"));
            CHECK(json && strstr(json, "\"warmup_host_wait_ms\":\t1"));
            /* The run itself is unchanged by the check: its compute still
             * has the launch (the workload's run is asynchronous again). */
            CHECK_NEAR(r->points[0].compute.p50, 1.1, 1e-9);
        } else {
            CHECK(isnan(r->warmup_held_ms) && isnan(r->warmup_host_wait_ms));
            CHECK(isnan(r->points[0].explained.host_wait_share));
            CHECK(text && !strstr(text, "launch held"));
            CHECK(json && strstr(json, "\"warmup_host_wait_ms\":\tnull"));
        }
        ib_free(text);
        ib_free(json);
        free(r);
        ib_workload_destroy(w);
    }
}

/* The SM clock of a window: the median of the samples inside it (ends
 * included), a sample without a clock left out. */
static void test_sm_clock_of_a_window(void)
{
    const ib_gpu_sample g[] = {
        { .t_ms = 0, .sm_clock_mhz = 345 },    { .t_ms = 100, .sm_clock_mhz = 1980 },
        { .t_ms = 200, .sm_clock_mhz = 1965 }, { .t_ms = 300, .sm_clock_mhz = 0 },
        { .t_ms = 400, .sm_clock_mhz = 1230 }, { .t_ms = 500, .sm_clock_mhz = 1100 },
        { .t_ms = 600, .sm_clock_mhz = 1400 },
    };
    CHECK_NEAR(ib__serve_sm_clock_median(g, 7, 100, 200), 1972.5, 1e-12);
    CHECK_NEAR(ib__serve_sm_clock_median(g, 7, 250, 600), 1230, 1e-12);
    CHECK_NEAR(ib__serve_sm_clock_median(g, 7, 0, 0), 345, 1e-12);
    CHECK(isnan(ib__serve_sm_clock_median(g, 7, 301, 399)));
    CHECK(isnan(ib__serve_sm_clock_median(NULL, 0, 0, 1000)));
}

/* Warm-up's two runs take 1 ms, the requests' 1.58 ms (issue 28's +58%),
 * on the virtual clock (no wake-up lateness, no GPU samples): the rate's
 * compute is unexplained, said in the text and the JSON; runs as fast as
 * warm-up's are "as in warm-up", the verdict alone. The SM clock is named
 * (not sampled) on a GPU only: the third, a GPU-like fake. */
static double slower_after_warmup(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    return index < 2 ? 1.0 : *(const double *)ctx;
}

static void test_explained_on_the_virtual_clock(void)
{
    const double load_ms[] = { 1.58, 1.0, 1.58 };
    for (int k = 0; k < 3; k++) {
        ib__fake_script fs;
        ib__fake_script_init(&fs);
        fs.gpu_like = k == 2;
        fs.duration_ms = slower_after_warmup;
        fs.ctx = (void *)&load_ms[k];
        ib_workload *w = check_open_fake(&fs);
        ib_serve_config cfg;
        serve_config(&cfg, 20);
        double rate = 50;
        cfg.rates = &rate;
        cfg.n_rates = 1;
        ib_serve_result *r = calloc(1, sizeof *r);
        ib_error err;
        CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
        const ib_serve_explanation *e = &r->points[0].explained;
        CHECK_NEAR(r->service_ms, 1.0, 1e-12);
        CHECK_NEAR(e->excess, load_ms[k] - 1, 1e-9);
        CHECK_NEAR(e->wakeup_ms, 0, 1e-9);
        CHECK(isnan(e->warmup_sm_clock_mhz) && isnan(e->load_sm_clock_mhz) && isnan(e->clock_ms));
        CHECK_EQ_INT(e->cause, k == 1 ? IB_SERVE_CAUSE_AS_WARM : IB_SERVE_CAUSE_UNEXPLAINED);
        char *text = ib_serve_report_text(r, &cfg, ib_workload_get_info(w));
        char *json = ib_serve_report_json(r, &cfg, ib_workload_get_info(w));
        const char *want[] = {
            "  compute +58% against warm-up's service time (1 ms): wake-up p50 0 us; neither accounts for "
            "half "
            "of it\n",
            "  compute +0% against warm-up's service time (1 ms): as in warm-up\n",
            "  compute +58% against warm-up's service time (1 ms): SM clock not sampled; wake-up p50 0 us; "
            "neither accounts for half of it\n",
        };
        CHECK(text && strstr(text, want[k]));
        if (text && !strstr(text, want[k])) fprintf(stderr, "%s", text);
        cJSON *doc = cJSON_Parse(json);
        const cJSON *ex =
            cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "rates"), 0), "explained");
        const cJSON *cause = cJSON_GetObjectItem(ex, "cause");
        CHECK(cJSON_IsString(cause) && !strcmp(cause->valuestring, k == 1 ? "as in warm-up" : "unexplained"));
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(ex, "load_sm_clock_mhz")));
        cJSON_Delete(doc);
        ib_free(json);
        ib_free(text);
        free(r);
        ib_workload_destroy(w);
    }
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_poisson_schedule);
    RUN(test_constant_schedule);
    RUN(test_binomial_exact);
    RUN(test_early_stopping);
    RUN(test_batcher);
    RUN(test_open_loop_counts_the_wait);
    RUN(test_requests_csv);
    RUN(test_closed_loop_hides_the_wait);
    RUN(test_dynamic_batching);
    RUN(test_queue_at_low_load_is_queueing);
    RUN(test_host_clock_wait_spins_to_the_deadline);
    RUN(test_queue_on_the_host_clock);
    RUN(test_batches_warmed_before_timing);
    RUN(test_copies_apart);
    RUN(test_copies_apart_batched);
    RUN(test_search_known_capacity);
    RUN(test_target_never_met);
    RUN(test_search_halves_down);
    RUN(test_cancel_keeps_rates);
    RUN(test_bad_config);
    RUN(test_two_instances);
    RUN(test_open_instances);
    RUN(test_trace_parse);
    RUN(test_trace_served);
    RUN(test_batch_switches);
    RUN(test_explain_rule);
    RUN(test_warmup_host_wait);
    RUN(test_sm_clock_of_a_window);
    RUN(test_explained_on_the_virtual_clock);
    return check_summary("test_serve");
}
