/* serve's progress reports (issue 28, point 5), on the fake's virtual
 * clock: the warm-up of each instance, then each rate as a step (its
 * number, of the list's count or of a search's unknown one, its offered
 * rate) whose phase "serving" counts the rate's requests; updated during a
 * rate only while the first instance is idle before a request due later,
 * never while requests wait (the whole rate is timed: its queueing
 * counts). */
#include "check.h"
#include "backend/fake/fake.h"

#include <stdlib.h>
#include <string.h>

typedef struct trace {
    size_t n;
    ib_progress p[1024];
    char name[1024][16];
} trace;

static void keep(const ib_progress *p, void *user)
{
    trace *t = user;
    if (t->n == sizeof t->p / sizeof t->p[0]) return;
    t->p[t->n] = *p;
    snprintf(t->name[t->n], sizeof t->name[0], "%s", p->step_name ? p->step_name : "");
    t->n++;
}

static double run_ms(int64_t batch, int64_t index, void *ctx)
{
    (void)batch, (void)index;
    return *(const double *)ctx;
}

/* Serves rates (n of them; 0: the search for slo_ms) of 50 constant
 * arrivals on instances fakes whose runs take ms each; the reports in t. */
static ib_serve_result *serve(double ms, size_t instances, const double *rates, size_t n, double slo_ms,
                              trace *t)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = run_ms;
    s.ctx = &ms;
    ib_workload *ws[4];
    for (size_t i = 0; i < instances; i++) ws[i] = check_open_fake(&s);
    ib_serve_config cfg;
    ib_serve_config_init(&cfg);
    cfg.run.warmup_runs = 2;
    cfg.run.warmup_ms = 0;
    cfg.requests = 50;
    cfg.arrivals = IB_ARRIVALS_CONSTANT;
    cfg.rates = n ? rates : NULL;
    cfg.n_rates = n;
    cfg.slo_ms = slo_ms;
    cfg.slo_percentile = 0.99;
    cfg.start_rate = n ? 0 : rates[0];
    cfg.run.progress = keep;
    cfg.run.progress_user = t;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    ib_status st = ib_measure_serve_instances(ws, instances, &cfg, r, &err);
    CHECK(st == IB_OK || (slo_ms > 0 && st == IB_ERR_NOT_MET));
    for (size_t i = 0; i < instances; i++) ib_workload_destroy(ws[i]);
    return r;
}

/* 100 and 50 requests/s, runs of 1 ms: idle 9 ms and more between
 * requests, so the line moves during each rate (0.5 and 1 s of virtual
 * time, a report every 100 ms at most). */
static void test_rates_as_steps(void)
{
    trace *t = calloc(1, sizeof *t);
    const double rates[] = { 100, 50 };
    ib_serve_result *r = serve(1.0, 1, rates, 2, 0, t);
    CHECK_EQ_INT(r->n_points, 2);
    CHECK(t->n > 0 && t->p[0].phase == IB_PHASE_WARMUP && t->p[0].step == 0);
    size_t starts = 0, during[2] = { 0, 0 };
    int64_t last_done = -1;
    for (size_t i = 0; i < t->n; i++) {
        const ib_progress *p = &t->p[i];
        if (p->phase != IB_PHASE_SERVING) {
            CHECK(p->phase == IB_PHASE_WARMUP && starts == 0); /* warm-up first, once */
            continue;
        }
        CHECK(p->step >= 1 && p->step <= 2 && p->steps == 2 && !strcmp(t->name[i], "rate"));
        CHECK(p->rate == rates[p->step - 1] && p->total == 50);
        CHECK(p->done >= 0 && p->done <= 50);
        if (p->done == 0 && p->step == (int64_t)starts + 1) {
            starts++, last_done = 0;
            continue;
        }
        CHECK(p->done >= last_done); /* requests taken only grow within a rate */
        last_done = p->done;
        if (p->done > 0 && p->done < 50) during[p->step - 1]++;
    }
    CHECK_EQ_INT(starts, 2);
    CHECK(during[0] >= 3 && during[1] >= 3); /* the line moved during each rate */
    free(r);
    free(t);
}

/* Runs of 9.5 ms against a request every 10 ms: the instance idles 0.5 ms
 * before each request, too little to report in (a line printed then could
 * make the next request wait), so nothing is reported during the rate. */
static void test_nothing_while_requests_wait(void)
{
    trace *t = calloc(1, sizeof *t);
    const double rate = 100;
    ib_serve_result *r = serve(9.5, 1, &rate, 1, 0, t);
    CHECK_EQ_INT(r->n_points, 1);
    size_t serving = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->p[i].phase == IB_PHASE_SERVING) {
            serving++;
            CHECK_EQ_INT(t->p[i].done, 0); /* the rate's start only */
        }
    CHECK_EQ_INT(serving, 1);
    free(r);
    free(t);
}

/* A search: rates numbered as they come, of a count not known; two
 * instances warm up as steps 1 and 2 of 2. */
static void test_search_and_instances(void)
{
    trace *t = calloc(1, sizeof *t);
    const double first = 100;
    ib_serve_result *r = serve(1.0, 2, &first, 0, 5.0, t);
    CHECK(r->searched && r->n_points >= 2);
    size_t warm = 0;
    int64_t rate_steps = 0;
    for (size_t i = 0; i < t->n; i++) {
        const ib_progress *p = &t->p[i];
        if (p->phase == IB_PHASE_WARMUP && p->done == 0) {
            CHECK(p->step == (int64_t)++warm && p->steps == 2 && !strcmp(t->name[i], "instance"));
        } else if (p->phase == IB_PHASE_SERVING) {
            CHECK(p->steps == 0 && p->step >= rate_steps && p->step <= (int64_t)r->n_points);
            if (p->step > rate_steps) { /* a rate starts: its offered rate */
                CHECK(p->step == rate_steps + 1 && p->rate == r->points[p->step - 1].offered_rate);
                rate_steps = p->step;
            }
        }
    }
    CHECK_EQ_INT(warm, 2);
    CHECK_EQ_INT(rate_steps, (int64_t)r->n_points);
    free(r);
    free(t);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_rates_as_steps);
    RUN(test_nothing_while_requests_wait);
    RUN(test_search_and_instances);
    return check_summary("test_serve_progress");
}
