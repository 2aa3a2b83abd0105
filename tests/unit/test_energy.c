/* Energy: the counters as read (RAPL's files in a folder of the test's,
 * the fake's scripted counter on its virtual clock), the arithmetic on
 * them exactly (src/core/energy.c), and the measurements' figures on the
 * fake. No GPU and no timing: every number is the script's. */
#include "check.h"
#include "report/report.h"
#include "backend/fake/fake.h"
#include "core/energy.h"
#include "env/energy.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool starts_with(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static char *render(const ib_result *r, const char *format)
{
    char *doc = ib_report(r, format);
    CHECK(doc != NULL);
    return doc;
}

/* A result in every format; released with docs_free. */
typedef struct docs {
    char *text, *json, *csv, *md, *html;
} docs;

static docs render_all(const ib_result *r)
{
    return (docs){ render(r, "text"), render(r, "json"), render(r, "csv"), render(r, "md"),
                   render(r, "html") };
}

static void docs_free(docs *d)
{
    free(d->text);
    free(d->json);
    free(d->csv);
    free(d->md);
    free(d->html);
}

/* The JSON's energy object against the figure it was written from. */
static void check_json_energy(const cJSON *o, const ib_energy *e)
{
    CHECK(cJSON_IsObject(o));
    const cJSON *src = cJSON_GetObjectItem(o, "source");
    if (e->source == IB_ENERGY_NONE) {
        CHECK(cJSON_IsNull(src) && cJSON_IsNull(cJSON_GetObjectItem(o, "joules_per_item")));
        CHECK(strcmp(cJSON_GetObjectItem(o, "note")->valuestring, e->note) == 0);
        return;
    }
    CHECK(cJSON_IsString(src) && strcmp(src->valuestring, "counter") == 0);
    CHECK_NEAR(cJSON_GetObjectItem(o, "joules_per_item")->valuedouble, e->joules_per_item,
               1e-12 * e->joules_per_item);
    CHECK_NEAR(cJSON_GetObjectItem(o, "items_per_joule")->valuedouble, e->items_per_joule,
               1e-12 * e->items_per_joule);
    CHECK_NEAR(cJSON_GetObjectItem(o, "bound")->valuedouble, e->bound, 1e-12 * e->bound);
    CHECK_NEAR(cJSON_GetObjectItem(o, "idle_power_w")->valuedouble, e->idle_power_w, 1e-9);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "aligned")) == e->aligned);
}

static double const_ms(int64_t batch, int64_t index, void *ctx)
{
    (void)index;
    return *(const double *)ctx * (double)batch;
}

/* A fake at run_ms a run, busy_w / idle_w, a counter stepping every step_ms. */
static ib_workload *energy_fake(double *run_ms, double step_ms, double busy_w, double idle_w)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = const_ms;
    s.ctx = run_ms;
    s.energy_step_ms = step_ms;
    s.busy_w = busy_w;
    s.idle_w = idle_w;
    ib_workload *w = NULL;
    ib_error err;
    CHECK(ib__workload_open_fake(&s, &w, &err) == IB_OK);
    return w;
}

static uint64_t read_now(const ib__energy_counter *c)
{
    uint64_t v = 0;
    CHECK(c->read(c->state, &v));
    return v;
}

/* The scripted counter moves only at multiples of its step, by what was
 * drawn before the multiple: idle, then busy while a run lasts. */
static void test_fake_counter_steps(void)
{
    double run_ms = 250;
    ib_workload *w = energy_fake(&run_ms, 100, 300, 50);
    ib__energy_counter c;
    char note[160];
    CHECK(w->own_energy(w, &c, note, sizeof note));
    CHECK_NEAR(c.unit_j, 1e-3, 0);
    CHECK_EQ_INT(read_now(&c), 0);
    w->clock.wait_until_ms(w->clock.ctx, 99.9);
    CHECK_EQ_INT(read_now(&c), 0); /* no step yet */
    w->clock.wait_until_ms(w->clock.ctx, 100);
    CHECK_EQ_INT(read_now(&c), 5000); /* 50 W x 0.1 s = 5 J */
    w->clock.wait_until_ms(w->clock.ctx, 150);
    ib_error err;
    CHECK(w->ops->run(w, &err) == IB_OK); /* busy 150 .. 400 ms */
    CHECK_NEAR(ib__workload_now_ms(w), 400, 0);
    /* At 400: 400 ms idle (20 J) and 250 ms of 250 W more (62.5 J). */
    CHECK_EQ_INT(read_now(&c), 82500);
    w->clock.wait_until_ms(w->clock.ctx, 399.0);
    w->clock.wait_until_ms(w->clock.ctx, 450);
    CHECK_EQ_INT(read_now(&c), 82500);
    ib__energy_close(&c);
    ib_workload_destroy(w);
}

/* A count that reaches its range goes back to 0. */
static void test_fake_counter_wraps(void)
{
    double run_ms = 1;
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = const_ms;
    s.ctx = &run_ms;
    s.energy_step_ms = 100;
    s.idle_w = 10; /* 1 J = 1000 mJ a step */
    s.energy_start = 9500;
    s.energy_range = 10000;
    ib_workload *w = NULL;
    ib_error err;
    CHECK(ib__workload_open_fake(&s, &w, &err) == IB_OK);
    ib__energy_counter c;
    char note[160];
    CHECK(w->own_energy(w, &c, note, sizeof note));
    CHECK_EQ_INT(c.range, 10000);
    CHECK_EQ_INT(read_now(&c), 9500);
    w->clock.wait_until_ms(w->clock.ctx, 100);
    CHECK_EQ_INT(read_now(&c), 500);
    ib_workload_destroy(w);
}

static void test_fake_without_counter(void)
{
    double run_ms = 1;
    ib_workload *w = energy_fake(&run_ms, 0, 0, 0);
    ib__energy_counter c;
    char note[160] = "";
    CHECK(!w->own_energy(w, &c, note, sizeof note));
    CHECK(strstr(note, "no energy counter") != NULL);
    ib_workload_destroy(w);
}

/* RAPL's files in a folder of the test's. */
static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void rapl_root(char *root, size_t cap, const char *name)
{
    const char *tmp = getenv("IB_TEST_TMP");
    snprintf(root, cap, "%s/rapl-%s-%d", tmp ? tmp : "/tmp", name, (int)getpid());
    mkdir(root, 0755);
    char zone[600];
    snprintf(zone, sizeof zone, "%s/intel-rapl:0", root);
    mkdir(zone, 0755);
}

static void test_rapl_reads_and_refuses(void)
{
    char root[400], zone[600], note[200];
    ib__energy_counter c;
    rapl_root(root, sizeof root, "ok");
    snprintf(zone, sizeof zone, "%s/intel-rapl:0", root);
    write_file(zone, "max_energy_range_uj", "262143328850\n");
    write_file(zone, "energy_uj", "262143000000\n");
    CHECK(ib__energy_open_rapl(root, &c, note, sizeof note));
    CHECK_NEAR(c.unit_j, 1e-6, 0);
    CHECK_EQ_INT(c.range, 262143328850LL);
    CHECK_EQ_INT(read_now(&c), 262143000000LL);
    write_file(zone, "energy_uj", "1000\n"); /* wrapped */
    CHECK_EQ_INT(read_now(&c), 1000);
    ib__energy_close(&c);

    /* Missing: one line why, no counter. */
    CHECK(!ib__energy_open_rapl("/nonexistent-powercap", &c, note, sizeof note));
    CHECK(strstr(note, "no RAPL package counter") && strstr(note, "no CPU energy"));
    /* Beyond its range: not a counter to trust. */
    write_file(zone, "energy_uj", "262143328851\n");
    CHECK(!ib__energy_open_rapl(root, &c, note, sizeof note));
    CHECK(strstr(note, "beyond its range") != NULL);
    /* Unreadable (the root-only file of Linux 5.10 on), unless we are root. */
    write_file(zone, "energy_uj", "5\n");
    char path[700];
    snprintf(path, sizeof path, "%s/energy_uj", zone);
    chmod(path, 0);
    FILE *probe = fopen(path, "r");
    if (!probe) {
        CHECK(!ib__energy_open_rapl(root, &c, note, sizeof note));
        CHECK(strstr(note, "root only") != NULL);
    } else {
        fclose(probe);
    }
    chmod(path, 0644);
}

/* ------------------------------------------------------------------------ */
/* The arithmetic                                                            */
/* ------------------------------------------------------------------------ */

static void test_delta(void)
{
    uint64_t d = 0;
    CHECK(ib__energy_delta(5, 9, 0, &d) && d == 4);
    CHECK(ib__energy_delta(9, 9, 0, &d) && d == 0);
    CHECK(!ib__energy_delta(9, 5, 0, &d)); /* no range: a reset */
    CHECK(ib__energy_delta(9990, 10, 10000, &d) && d == 20);
    CHECK(ib__energy_delta(0, 9999, 10000, &d) && d == 9999);
    CHECK(!ib__energy_delta(10000, 10, 10000, &d)); /* outside the range */
    CHECK(!ib__energy_delta(10, 10001, 10000, &d));
}

static void test_bound_and_step(void)
{
    ib__energy_window w = {
        .joules = 100, .t0_ms = 500, .t1_ms = 1500, .end_ms = { 100, 50 }, .unit_j = 1e-3
    };
    CHECK_NEAR(ib__energy_bound(&w), 0.1 + 1e-5, 1e-15);
    w.end_ms[1] = 200;
    CHECK_NEAR(ib__energy_bound(&w), 0.2 + 1e-5, 1e-15);
    w.extra = 0.03;
    CHECK_NEAR(ib__energy_bound(&w), 0.23 + 1e-5, 1e-15);
    w.t1_ms = w.t0_ms;
    CHECK(isinf(ib__energy_bound(&w)));
    double changes[] = { 100, 200, 310, 400 };
    CHECK_NEAR(ib__energy_step_ms(changes, 4), 110, 1e-12);
    CHECK(isnan(ib__energy_step_ms(changes, 1)));
}

static void test_figures(void)
{
    ib__energy_window w = { .joules = 330,
                            .t0_ms = 500,
                            .t1_ms = 1600,
                            .end_ms = { 1, 1 },
                            .aligned = true,
                            .source = IB_ENERGY_COUNTER,
                            .unit_j = 1e-3 };
    ib_energy e;
    ib__energy_figures(&w, 1100, 100, 50, &e);
    CHECK(e.source == IB_ENERGY_COUNTER && e.aligned);
    CHECK_NEAR(e.window_ms, 1100, 0);
    CHECK_NEAR(e.joules, 330, 0);
    CHECK_NEAR(e.joules_per_item, 0.3, 1e-15);
    CHECK_NEAR(e.items_per_joule, 1100.0 / 330, 1e-12);
    CHECK_NEAR(e.power_w, 300, 1e-12);
    CHECK_NEAR(e.joules_above_idle, 330 - 55, 1e-12);
    CHECK_NEAR(e.joules_per_item_above_idle, 0.25, 1e-15);
    CHECK_NEAR(e.bound, 1.0 / 1100 + 1e-3 / 330, 1e-15);
    CHECK_NEAR(e.step_ms, 100, 0);
    /* Too short: no figure, the reason with the numbers. */
    w.t1_ms = 550;
    w.end_ms[0] = 100;
    ib__energy_figures(&w, 50, 100, 50, &e);
    CHECK(e.source == IB_ENERGY_NONE);
    CHECK(isnan(e.joules) && isnan(e.joules_per_item) && isnan(e.items_per_joule));
    CHECK(strstr(e.note, "a window of 50 ms") && strstr(e.note, "+-200%") && strstr(e.note, "above the 5%"));
    CHECK_NEAR(e.window_ms, 50, 0);
    /* Just inside and just outside the 5%. */
    w = (ib__energy_window){
        .joules = 1000, .t0_ms = 0, .t1_ms = 2000, .end_ms = { 100, 0 }, .source = IB_ENERGY_COUNTER
    };
    ib__energy_figures(&w, 10, 100, NAN, &e);
    CHECK(e.source == IB_ENERGY_NONE || e.bound <= 0.05);
    CHECK(e.source == IB_ENERGY_COUNTER);
    CHECK(isnan(e.joules_above_idle)); /* idle unknown */
    w.t1_ms = 1999;
    ib__energy_figures(&w, 10, 100, NAN, &e);
    CHECK(e.source == IB_ENERGY_NONE);
    ib__energy_figures(&w, 0, 100, NAN, &e);
    CHECK(strstr(e.note, "no inputs") != NULL);
}

static void test_from_samples(void)
{
    /* 100 W at 10 ms, 300 W at 20, 300 W at 30; window 5 .. 40. */
    ib_gpu_sample s[] = { { .t_ms = 0, .power_w = 0 },
                          { .t_ms = 10, .power_w = 100 },
                          { .t_ms = 20, .power_w = 300 },
                          { .t_ms = 30, .power_w = 300 },
                          { .t_ms = 50, .power_w = 80 } };
    ib__energy_window w;
    CHECK(ib__energy_from_samples(s, 5, 5, 40, &w));
    /* 5 ms x 100 + 10 x 200 + 10 x 300 + 10 x 300 (held) = 8500 W ms */
    CHECK_NEAR(w.joules, 8.5, 1e-12);
    CHECK_NEAR(w.end_ms[0], 5, 0);
    CHECK_NEAR(w.end_ms[1], 10, 0);
    CHECK_NEAR(w.extra, (200.0 / 2 * 10) / 8500 + 10.0 / 35, 1e-15);
    CHECK(w.source == IB_ENERGY_SAMPLED && !w.aligned);
    CHECK_NEAR(ib__energy_bound(&w), 10.0 / 35 + 1000.0 / 8500 + 10.0 / 35, 1e-12);
    CHECK(!ib__energy_from_samples(s, 5, 15, 25, &w)); /* one sample inside */
}

/* ------------------------------------------------------------------------ */
/* The meter on the scripted counter                                         */
/* ------------------------------------------------------------------------ */

static ib_status pad_run(void *ctx, double *items, ib_error *err)
{
    ib_workload *w = ctx;
    IB_TRY(w->ops->run(w, err));
    *items = (double)w->info.batch;
    return IB_OK;
}

static void run_n(ib_workload *w, int n)
{
    ib_error err;
    for (int i = 0; i < n; i++) CHECK(w->ops->run(w, &err) == IB_OK);
}

/* Learning on the idle fake: the step and the idle power exactly. */
static void test_meter_learns(void)
{
    double run_ms = 1;
    ib_workload *w = energy_fake(&run_ms, 100, 300, 50);
    ib__energy_meter m;
    CHECK(ib__energy_meter_open(&m, w));
    ib__energy_learn(&m);
    CHECK(!m.failed);
    CHECK_NEAR(m.step_ms, 100, 1e-12);
    CHECK_NEAR(m.idle_w, 50, 1e-9);
    CHECK_NEAR(ib__workload_now_ms(w), 400, 1e-12); /* 4 changes, 250 ms at least */
    ib__energy_meter_close(&m);
    ib_workload_destroy(w);
}

/* An aligned window: the start waits for the change at 500 (padding with
 * runs outside the window), 1000 timed runs to 1500, the end pads to the
 * next change after that, 1600: 1100 inputs over 1100 ms at 300 W. */
static void test_meter_aligned_window(void)
{
    double run_ms = 1;
    ib_workload *w = energy_fake(&run_ms, 100, 300, 50);
    ib__energy_meter m;
    ib_error err;
    CHECK(ib__energy_meter_open(&m, w));
    ib__energy_learn(&m);
    CHECK(ib__energy_begin(&m, pad_run, w, &err) == IB_OK);
    CHECK(m.start_aligned);
    CHECK_NEAR(m.start_ms, 500, 1e-9);
    CHECK_NEAR(m.start_unc_ms, 1, 1e-9);
    run_n(w, 1000);
    double pad_items = 0;
    CHECK(ib__energy_end(&m, pad_run, w, &pad_items, &err) == IB_OK);
    CHECK_NEAR(pad_items, 100, 0);
    ib_energy e;
    ib__energy_figure(&m, 1000 + pad_items, &e);
    CHECK(e.source == IB_ENERGY_COUNTER && e.aligned);
    CHECK_NEAR(e.window_ms, 1100, 1e-9);
    CHECK_NEAR(e.joules, 330, 1e-9);
    CHECK_NEAR(e.joules_per_item, 0.3, 1e-12);
    CHECK_NEAR(e.power_w, 300, 1e-9);
    CHECK_NEAR(e.idle_power_w, 50, 1e-9);
    CHECK_NEAR(e.joules_per_item_above_idle, 0.25, 1e-12);
    CHECK_NEAR(e.bound, 1.0 / 1100 + 1e-3 / 330, 1e-12);
    CHECK(strcmp(e.counter, "the fake's scripted counter") == 0);
    ib__energy_meter_close(&m);
    ib_workload_destroy(w);
}

/* Ends not aligned: each is off by up to a step. Shorter than a step: no
 * figure; 3 s: a figure with its 3.3% bound. */
static void test_meter_unaligned_windows(void)
{
    double run_ms = 1;
    ib_workload *w = energy_fake(&run_ms, 100, 300, 50);
    ib__energy_meter m;
    ib_error err;
    double pad_items;
    CHECK(ib__energy_meter_open(&m, w));
    ib__energy_learn(&m);
    run_n(w, 50); /* to 450 */
    CHECK(ib__energy_begin(&m, NULL, NULL, &err) == IB_OK);
    CHECK(!m.start_aligned);
    run_n(w, 50); /* 50 ms: half a step */
    CHECK(ib__energy_end(&m, NULL, NULL, &pad_items, &err) == IB_OK);
    ib_energy e;
    ib__energy_figure(&m, 50, &e);
    CHECK(e.source == IB_ENERGY_NONE);
    CHECK(strstr(e.note, "a window of 50 ms") && strstr(e.note, "steps every 100 ms"));
    CHECK_NEAR(e.bound, 2.0 + 1e-3 / 30, 1e-12); /* the counter read 400 .. 500: 100 ms busy, 30 J */

    CHECK(ib__energy_begin(&m, NULL, NULL, &err) == IB_OK);
    run_n(w, 3000);
    CHECK(ib__energy_end(&m, NULL, NULL, &pad_items, &err) == IB_OK);
    ib__energy_figure(&m, 3000, &e);
    CHECK(e.source == IB_ENERGY_COUNTER && !e.aligned);
    CHECK_NEAR(e.bound, 100.0 / 3000 + 1e-3 / 900, 1e-12);
    CHECK_NEAR(e.joules_per_item, 0.3, 1e-12);
    ib__energy_meter_close(&m);
    ib_workload_destroy(w);
}

/* A wrap inside the window is undone; no counter gives the reason. */
static void test_meter_wrap_and_missing(void)
{
    double run_ms = 1;
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = const_ms;
    s.ctx = &run_ms;
    s.energy_step_ms = 100;
    s.busy_w = 300;
    s.idle_w = 50;
    s.energy_range = 100000; /* 100 J */
    s.energy_start = 99000;
    ib_workload *w = NULL;
    ib_error err;
    CHECK(ib__workload_open_fake(&s, &w, &err) == IB_OK);
    ib__energy_meter m;
    CHECK(ib__energy_meter_open(&m, w));
    ib__energy_learn(&m); /* wraps at 20 ms of 50 W */
    CHECK_NEAR(m.idle_w, 50, 1e-9);
    CHECK(ib__energy_begin(&m, pad_run, w, &err) == IB_OK);
    for (int i = 0; i < 20; i++) { /* 600 J: six wraps, each seen by a read of its own */
        run_n(w, 100);
        ib__energy_meter_poll(&m);
    }
    double pad_items;
    CHECK(ib__energy_end(&m, pad_run, w, &pad_items, &err) == IB_OK);
    ib_energy e;
    ib__energy_figure(&m, 2000 + pad_items, &e);
    CHECK(e.source == IB_ENERGY_COUNTER);
    CHECK_NEAR(e.joules_per_item, 0.3, 1e-12);
    ib__energy_meter_close(&m);
    ib_workload_destroy(w);

    w = energy_fake(&run_ms, 0, 0, 0);
    CHECK(!ib__energy_meter_open(&m, w));
    ib__energy_learn(&m);
    CHECK(ib__energy_begin(&m, pad_run, w, &err) == IB_OK);
    CHECK_EQ_INT(ib__fake_runs(w), 0); /* no counter: no padding */
    CHECK(ib__energy_end(&m, pad_run, w, &pad_items, &err) == IB_OK);
    ib__energy_figure(&m, 10, &e);
    CHECK(e.source == IB_ENERGY_NONE && strstr(e.note, "no energy counter"));
    ib_workload_destroy(w);
}

/* RAPL's counter through the meter: a wrap between two reads. */
static void test_meter_rapl_wrap(void)
{
    char root[400], zone[600];
    rapl_root(root, sizeof root, "meter");
    snprintf(zone, sizeof zone, "%s/intel-rapl:0", root);
    write_file(zone, "max_energy_range_uj", "1000000\n");
    write_file(zone, "energy_uj", "999000\n");
    double run_ms = 1;
    ib_workload *w = energy_fake(&run_ms, 0, 0, 0);
    ib__energy_meter m;
    CHECK(ib__energy_meter_open_cpu(&m, &w->clock, root));
    write_file(zone, "energy_uj", "500\n");
    CHECK(ib__energy_meter_poll(&m));
    CHECK_NEAR(m.joules, 1500e-6, 1e-15);
    write_file(zone, "energy_uj", "400\n"); /* 999,900 uJ later, by the wrap's reading */
    CHECK(ib__energy_meter_poll(&m));
    CHECK_NEAR(m.joules, 1500e-6 + 999900e-6, 1e-12);
    ib__energy_meter_close(&m);
    ib_workload_destroy(w);
}

/* ------------------------------------------------------------------------ */
/* The measurements                                                          */
/* ------------------------------------------------------------------------ */

/* Latency on the scripted counter: the window aligned on the counter's
 * changes, the timed runs and the end's padding inside it, at 300 W. */
static void test_latency_energy(void)
{
    double run_ms = 1;
    ib_workload *w = energy_fake(&run_ms, 100, 300, 50);
    ib_config cfg;
    ib_config_init(&cfg);
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    const ib_energy *e = &r.energy;
    CHECK(e->source == IB_ENERGY_COUNTER && e->aligned);
    CHECK(e->items >= 300);
    CHECK_NEAR(e->window_ms, e->items * run_ms, 1e-6); /* back-to-back 1 ms runs fill it */
    CHECK_NEAR(fmod(e->window_ms, 100), 0, 1e-6);      /* from a change to a change */
    CHECK_NEAR(e->joules_per_item, 0.3, 1e-12);
    CHECK_NEAR(e->items_per_joule, 1 / 0.3, 1e-9);
    CHECK_NEAR(e->power_w, 300, 1e-9);
    CHECK_NEAR(e->idle_power_w, 50, 1e-9);
    CHECK_NEAR(e->joules_per_item_above_idle, 0.25, 1e-12);
    CHECK_NEAR(e->step_ms, 100, 1e-9);
    CHECK_NEAR(e->bound, 1 / e->window_ms + 1e-3 / e->joules, 1e-12);
    ib_latency_result_free(&r);

    /* At batch 8 (8 ms a run): the window holds the timed runs and the
     * end's padding, each counted once at 8 inputs, so the window is
     * still 1 ms an input and 0.3 J an input. */
    CHECK(ib_workload_set_batch(w, 8, &err) == IB_OK);
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(e->source == IB_ENERGY_COUNTER && e->aligned);
    CHECK_NEAR(fmod(e->items, 8), 0, 0);
    CHECK(e->items > 8 * (double)r.n); /* the end's padding, inside */
    CHECK_NEAR(e->window_ms, e->items * run_ms, 1e-6);
    /* The counter changes mid-run here: its window is the runs' to within
     * the stated bound. */
    CHECK(fabs(e->joules_per_item - 0.3) <= 0.3 * e->bound);
    CHECK_NEAR(e->timed_ms_per_item, 1, 1e-12); /* the 8 ms median over 8 inputs */
    ib_latency_result_free(&r);
    CHECK(ib_workload_set_batch(w, 1, &err) == IB_OK);

    /* Off: no figure, and no padding. */
    cfg.measure_energy = false;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(r.energy.source == IB_ENERGY_NONE && strstr(r.energy.note, "measure_energy off"));
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

/* Three runs of 40 ms: the window's ends are known to 40 ms only, against
 * a window of one to three steps: no figure, the reason said. */
static void test_latency_energy_too_short(void)
{
    double run_ms = 40;
    ib_workload *w = energy_fake(&run_ms, 100, 300, 50);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.runs = 3;
    cfg.warmup_runs = 1;
    cfg.warmup_ms = 0;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(r.energy.source == IB_ENERGY_NONE);
    CHECK(r.energy.bound > IB_ENERGY_MAX_BOUND);
    CHECK(strstr(r.energy.note, "above the 5% a figure needs") != NULL);
    CHECK(isnan(r.energy.joules_per_item));
    ib_latency_result_free(&r);
    ib_workload_destroy(w);

    /* No counter: the reason. */
    w = energy_fake(&run_ms, 0, 0, 0);
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    CHECK(r.energy.source == IB_ENERGY_NONE && strstr(r.energy.note, "no energy counter"));
    CHECK_EQ_INT(ib__fake_runs(w), 1 + r.warmup_runs_done + (int64_t)r.n); /* nothing padded */
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

static double affine_ms(int64_t batch, int64_t index, void *ctx)
{
    (void)index;
    (void)ctx;
    return 1 + 0.1 * (double)batch;
}

/* Throughput on a device whose power grows with the batch (100 + 10 x
 * batch W) and whose run takes 1 + 0.1 x batch ms: the fastest batch is
 * the largest, the most inputs per joule is batch 8. Each point's energy
 * is power x run time / batch, within the point's bound. */
static void test_throughput_energy(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = affine_ms;
    s.energy_step_ms = 100;
    s.idle_w = 60;
    s.busy_w = 100;
    s.busy_w_per_item = 10;
    ib_workload *w = NULL;
    ib_error err;
    CHECK(ib__workload_open_fake(&s, &w, &err) == IB_OK);
    ib_throughput_config cfg;
    ib_throughput_config_init(&cfg);
    int64_t batches[] = { 1, 2, 4, 8, 16, 32 };
    cfg.batches = batches;
    cfg.n_batches = 6;
    ib_throughput_result *r = calloc(1, sizeof *r);
    CHECK(ib_measure_throughput(w, &cfg, r, &err) == IB_OK);
    CHECK_EQ_INT(r->n_points, 6);
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_throughput_point *p = &r->points[i];
        double b = (double)p->batch;
        CHECK(p->energy.source == IB_ENERGY_COUNTER && p->energy.aligned);
        /* The changes fall inside chunks: the figure is off by what the
         * bound says it may be, and no more. */
        double truth = (100 + 10 * b) * (1 + 0.1 * b) / b / 1e3;
        CHECK(fabs(p->energy.joules_per_item - truth) <= p->energy.bound * truth);
        CHECK_NEAR(p->energy.idle_power_w, 60, 1e-9);
        CHECK(p->energy.bound <= 0.0101); /* grown to 1% (and a count) */
        CHECK(p->energy.window_ms >= 100);
    }
    CHECK_EQ_INT(r->points[r->peak].batch, 32);
    CHECK(r->most_efficient >= 0);
    CHECK_EQ_INT(r->points[r->most_efficient].batch, 8);
    free(r);
    ib_workload_destroy(w);

    /* Without a counter: none, and no most efficient batch. */
    s.energy_step_ms = 0;
    CHECK(ib__workload_open_fake(&s, &w, &err) == IB_OK);
    r = calloc(1, sizeof *r);
    CHECK(ib_measure_throughput(w, &cfg, r, &err) == IB_OK);
    CHECK(r->points[0].energy.source == IB_ENERGY_NONE &&
          strstr(r->points[0].energy.note, "no energy counter"));
    CHECK_EQ_INT(r->most_efficient, -1);
    free(r);
    ib_workload_destroy(w);
}

/* Serve at 100 requests/s, 1 ms each, for 10 s: idle 50 W throughout and
 * 250 W more during the 1 s of runs, 0.75 J a request, within the window's
 * bound (its ends not aligned: the step over the window); a rate too
 * short for the 5% has none. */
static void test_serve_energy(void)
{
    double run_ms = 1;
    ib_workload *w = energy_fake(&run_ms, 100, 300, 50);
    ib_serve_config cfg;
    ib_serve_config_init(&cfg);
    cfg.run.warmup_runs = 2;
    cfg.run.warmup_ms = 0;
    cfg.requests = 1000;
    cfg.arrivals = IB_ARRIVALS_CONSTANT;
    double rates[] = { 100, 1000 };
    cfg.rates = rates;
    cfg.n_rates = 2;
    ib_serve_result *r = calloc(1, sizeof *r);
    ib_error err;
    CHECK_EQ_INT(ib_measure_serve(w, &cfg, r, &err), IB_OK);
    const ib_energy *e = &r->points[0].energy;
    CHECK(e->source == IB_ENERGY_COUNTER && !e->aligned);
    CHECK_NEAR(e->items, 1000, 0);
    CHECK(fabs(e->joules_per_item - 0.75) <= e->bound * 0.75);
    CHECK_NEAR(e->bound, 100 / e->window_ms + 1e-3 / e->joules, 1e-12);
    CHECK(e->bound < 0.0102);
    /* 1000 requests at 1000/s: a 1 s window read to +-10%. */
    e = &r->points[1].energy;
    CHECK(e->source == IB_ENERGY_NONE && strstr(e->note, "above the 5%"));
    /* Every format. */
    ib_result res = {
        .kind = IB_RESULT_SERVE, .serve = r, .serve_cfg = &cfg, .info = ib_workload_get_info(w)
    };
    docs d = render_all(&res);
    char *text = d.text, *json = d.json, *csv = d.csv, *md = d.md, *html = d.html;
    CHECK(text && strstr(text, "  energy: 0.7") && strstr(text, "  energy: no figure: a window of"));
    cJSON *doc = cJSON_Parse(json);
    const cJSON *jrates = cJSON_GetObjectItem(doc, "rates") ? cJSON_GetObjectItem(doc, "rates")
                                                            : cJSON_GetObjectItem(doc, "points");
    CHECK(cJSON_GetArraySize(jrates) == 2);
    check_json_energy(cJSON_GetObjectItem(cJSON_GetArrayItem(jrates, 0), "energy"), &r->points[0].energy);
    check_json_energy(cJSON_GetObjectItem(cJSON_GetArrayItem(jrates, 1), "energy"), &r->points[1].energy);
    cJSON_Delete(doc);
    char cell[IB__EXACT_LEN];
    ib__format_exact(cell, r->points[0].energy.items_per_joule);
    CHECK(csv && strstr(csv, ",joules_per_item,items_per_joule,energy_bound\r\n") && strstr(csv, cell));
    CHECK(md && strstr(md, "| inputs/J |"));
    CHECK(html && strstr(html, "energy: 0.7"));
    docs_free(&d);
    free(r);
    ib_workload_destroy(w);
}

/* ------------------------------------------------------------------------ */
/* best --objective energy                                                   */
/* ------------------------------------------------------------------------ */

/* Two candidates: "fast" runs 1 + 0.1 x batch ms at 400 W, "frugal" 1.5 +
 * 0.15 x batch ms at 150 W: the fast one wins on time, the frugal one on
 * inputs per joule (0.44 against 0.2475 J an input at batch 1). */
typedef struct candidate {
    double base_ms, item_ms, busy_w;
    double step_ms; /* 0: no counter */
} candidate;

static double candidate_ms(int64_t batch, int64_t index, void *ctx)
{
    (void)index;
    const candidate *c = ctx;
    return c->base_ms + c->item_ms * (double)batch;
}

static ib_status open_candidate(size_t i, void *user, ib_workload **w, ib_accuracy *acc, ib_error *err)
{
    candidate *c = &((candidate *)user)[i];
    ib__fake_script fs;
    ib__fake_script_init(&fs);
    fs.duration_ms = candidate_ms;
    fs.ctx = c;
    fs.oom_above_batch = 16;
    fs.energy_step_ms = c->step_ms;
    fs.idle_w = 50;
    fs.busy_w = c->busy_w;
    if (acc) memset(acc, 0, sizeof *acc);
    return ib__workload_open_fake(&fs, w, err);
}

static void best_config(ib_best_config *c, candidate *cands, const char **labels, ib_best_objective objective)
{
    ib_best_config_init(c);
    c->n_candidates = 2;
    c->labels = labels;
    c->open = open_candidate;
    c->open_user = cands;
    c->objective = objective;
    c->latency.runs = 100;
    c->latency.warmup_ms = 0;
    c->throughput.max_batch = 16;
    c->throughput.run.runs = 20;
    c->throughput.run.warmup_ms = 0;
}

static void test_best_energy_objective(void)
{
    candidate cands[] = { { 1, 0.1, 400, 100 }, { 1.5, 0.15, 150, 100 } };
    const char *labels[] = { "fast", "frugal" };
    ib_best_config c;
    ib_best_result *r = calloc(1, sizeof *r);
    ib_error err;

    best_config(&c, cands, labels, IB_BEST_OBJECTIVE_TIME);
    CHECK(ib_measure_best(&c, r, &err) == IB_OK);
    CHECK_EQ_INT(r->latency_winner, 0);
    CHECK_EQ_INT(r->throughput_winner, 0);
    char *time_text = ib_best_report_text(r); /* the figures beside the time */
    CHECK(time_text &&
          strstr(time_text,
                 "\ninputs per joule (beside the time; --objective energy ranks by it):\n 1  batch 1: "));
    ib_free(time_text);

    best_config(&c, cands, labels, IB_BEST_OBJECTIVE_ENERGY);
    CHECK(ib_measure_best(&c, r, &err) == IB_OK);
    CHECK_EQ_INT(r->objective, IB_BEST_OBJECTIVE_ENERGY);
    CHECK_EQ_INT(r->latency_winner, 1);
    CHECK_EQ_INT(r->throughput_winner, 1);
    const ib_energy *e1 = &r->rows[1].latency_energy, *e0 = &r->rows[0].latency_energy;
    CHECK(e1->source == IB_ENERGY_COUNTER && e0->source == IB_ENERGY_COUNTER);
    CHECK(fabs(e1->joules_per_item - 0.2475) <= e1->bound * 0.2475);
    CHECK(fabs(e0->joules_per_item - 0.44) <= e0->bound * 0.44);
    CHECK(strstr(r->rows[0].latency_why, "inputs per joule against the winner") != NULL);
    CHECK(strstr(r->rows[0].latency_why, "a tie") == NULL); /* 0.44 against 0.2475 J: far apart */
    CHECK(r->rows[1].throughput_energy.source == IB_ENERGY_COUNTER);
    CHECK(r->rows[0].latency_stage == IB_BEST_FINALIST); /* not dropped by time */
    /* The other row, screened at the peak by its inputs/s alone (no energy
     * window there), goes on to the finals, where its energy is measured. */
    CHECK_EQ_INT(r->rows[0].throughput_stage, IB_BEST_FINALIST);
    CHECK(r->rows[0].throughput_energy.source == IB_ENERGY_COUNTER);
    CHECK(strstr(r->rows[0].throughput_why, "inputs per joule against the winner") != NULL);
    ib_result res = { .kind = IB_RESULT_BEST, .best = r, .best_cfg = &c };
    docs d = render_all(&res);
    char *text = d.text, *json = d.json, *csv = d.csv, *md = d.md, *html = d.html;
    CHECK(text && strstr(text, "most inputs per joule at batch 1: frugal") &&
          strstr(text, "inputs per joule (the objective"));
    cJSON *doc = cJSON_Parse(json);
    CHECK(strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "search"), "objective")->valuestring,
                 "energy") == 0);
    const cJSON *cand = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "candidates"), 1);
    check_json_energy(cJSON_GetObjectItem(cJSON_GetObjectItem(cand, "latency"), "energy"), e1);
    check_json_energy(cJSON_GetObjectItem(cJSON_GetObjectItem(cand, "throughput"), "energy"),
                      &r->rows[1].throughput_energy);
    cJSON_Delete(doc);
    char cell[IB__EXACT_LEN];
    ib__format_exact(cell, e1->items_per_joule);
    CHECK(csv && strstr(csv, "latency_items_per_joule,latency_energy_bound,") && strstr(csv, cell));
    CHECK(md && strstr(md, "| inputs/J batch 1 | inputs/J at batch |"));
    CHECK(html && strstr(html, "<th>inputs/J<br>batch 1</th>"));
    docs_free(&d);
    /* A row with no figure (left before the finals): counted, not listed
     * as a batch 0 it never ran. */
    r->rows[0].latency_energy.source = r->rows[0].throughput_energy.source = IB_ENERGY_NONE;
    r->rows[0].batch = 0;
    char *left = ib_best_report_text(r);
    CHECK(left && !strstr(left, " 1  batch 1:") && !strstr(left, "at batch 0") &&
          strstr(left, "\n 2  batch 1: ") && strstr(left, "(1 without a figure: left before the finals"));
    ib_free(left);

    /* Two of the same time and power: their figures' bounds overlap, the
     * loser's why says it is a tie. */
    cands[1] = cands[0];
    CHECK(ib_measure_best(&c, r, &err) == IB_OK);
    int loser = r->latency_winner == 0 ? 1 : 0;
    CHECK(strstr(r->rows[loser].latency_why, "they overlap, a tie") != NULL);

    /* Without a counter: refused, one line. */
    cands[0].step_ms = cands[1].step_ms = 0;
    CHECK(ib_measure_best(&c, r, &err) == IB_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "the energy objective ranks by inputs per joule") &&
          strstr(err.message, "no energy counter") && !strchr(err.message, '\n'));
    /* Nor in sessions. */
    c.sessions = 3;
    CHECK(ib_measure_best(&c, r, &err) == IB_ERR_INVALID_ARG);
    free(r);
}

/* ------------------------------------------------------------------------ */
/* Every format                                                              */
/* ------------------------------------------------------------------------ */

static void test_formats_latency(void)
{
    double run_ms = 1;
    ib_workload *w = energy_fake(&run_ms, 100, 300, 50);
    ib_config cfg;
    ib_config_init(&cfg);
    ib_latency_result lr;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &lr, &err) == IB_OK);
    ib_result r = { .kind = IB_RESULT_LATENCY, .latency = &lr, .info = ib_workload_get_info(w), .cfg = &cfg };
    docs d = render_all(&r);
    char *text = d.text, *json = d.json, *md = d.md, *html = d.html;
    CHECK(text && strstr(text, "energy: 0.3 J an input (+-") &&
          strstr(text, "3.333 inputs/J, 300 W average") &&
          strstr(text, "idle 50 W before the runs: 0.25 J an input above idle"));
    cJSON *doc = cJSON_Parse(json);
    CHECK(doc != NULL);
    check_json_energy(cJSON_GetObjectItem(doc, "energy"), &lr.energy);
    check_json_energy(cJSON_GetObjectItem(doc, "cpu_energy"), &lr.cpu_energy);
    cJSON_Delete(doc);
    CHECK(md && strstr(md, "\nenergy: 0.3 J an input"));
    CHECK(html && strstr(html, "<h2>Energy</h2>\n<p>device: 0.3 J an input"));
    docs_free(&d);
    ib_latency_result_free(&lr);
    ib_workload_destroy(w);
}

static void test_formats_throughput(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = affine_ms;
    s.energy_step_ms = 100;
    s.idle_w = 60;
    s.busy_w = 100;
    s.busy_w_per_item = 10;
    ib_workload *w = NULL;
    ib_error err;
    CHECK(ib__workload_open_fake(&s, &w, &err) == IB_OK);
    ib_throughput_config cfg;
    ib_throughput_config_init(&cfg);
    int64_t batches[] = { 1, 8, 32 };
    cfg.batches = batches;
    cfg.n_batches = 3;
    ib_throughput_result *tr = calloc(1, sizeof *tr);
    CHECK(ib_measure_throughput(w, &cfg, tr, &err) == IB_OK);
    ib_result r = { .kind = IB_RESULT_THROUGHPUT,
                    .throughput = tr,
                    .info = ib_workload_get_info(w),
                    .throughput_cfg = &cfg };
    docs d = render_all(&r);
    char *text = d.text, *json = d.json, *csv = d.csv, *md = d.md, *html = d.html;
    CHECK(text && strstr(text, "most efficient") && strstr(text, "fastest") &&
          strstr(text, "most inputs per joule at batch 8"));
    cJSON *doc = cJSON_Parse(json);
    const cJSON *curve = cJSON_GetObjectItem(doc, "curve");
    CHECK(cJSON_GetArraySize(curve) == 3);
    for (int i = 0; i < 3; i++)
        check_json_energy(cJSON_GetObjectItem(cJSON_GetArrayItem(curve, i), "energy"), &tr->points[i].energy);
    const cJSON *eff = cJSON_GetObjectItem(doc, "most_efficient");
    CHECK_EQ_INT(cJSON_GetObjectItem(eff, "batch")->valuedouble, 8);
    cJSON_Delete(doc);
    /* CSV: the batch 8 row holds its figures exactly and is the most efficient. */
    char *row = csv ? strstr(csv, ",8,,ok,") : NULL;
    CHECK(row != NULL);
    if (row) {
        char cell[IB__EXACT_LEN];
        ib__format_exact(cell, tr->points[1].energy.items_per_joule);
        char *end = strstr(row, "\r\n");
        CHECK(end && starts_with(end - strlen(",true"), ",true"));
        CHECK(strstr(row, cell) && strstr(row, cell) < end);
    }
    CHECK(md && strstr(md, "| inputs/J |") && strstr(md, "most inputs per joule |"));
    CHECK(html && strstr(html, "<h2>Inputs per joule against batch</h2>") &&
          strstr(html, "most efficient: "));
    docs_free(&d);
    free(tr);
    ib_workload_destroy(w);
}

/* ------------------------------------------------------------------------ */
/* compare                                                                   */
/* ------------------------------------------------------------------------ */

static void test_energy_change(void)
{
    double change, ci[2];
    CHECK(ib__energy_change(0.3, 0.01, 0.33, 0.02, &change, ci));
    CHECK_NEAR(change, 0.1, 1e-12);
    CHECK_NEAR(ci[0], 0.33 * 0.98 / (0.3 * 1.01) - 1, 1e-12);
    CHECK_NEAR(ci[1], 0.33 * 1.02 / (0.3 * 0.99) - 1, 1e-12);
    CHECK(!ib__energy_change(NAN, 0.01, 0.33, 0.02, &change, ci));
    CHECK(!ib__energy_change(0.3, 1.0, 0.33, 0.02, &change, ci));
}

/* Two latency documents with energy read back and compared: the change
 * of the energy per input with its interval in text and JSON; a file
 * without a figure says so; a file with a broken figure is refused. */
static void test_compare_energy(void)
{
    double fast_ms = 1, slow_ms = 1.2;
    ib_workload *wa = energy_fake(&fast_ms, 100, 300, 50), *wb = energy_fake(&slow_ms, 100, 300, 50);
    ib_config cfg;
    ib_config_init(&cfg);
    ib_latency_result ra, rb;
    ib_error err;
    CHECK(ib_measure_latency(wa, &cfg, &ra, &err) == IB_OK);
    CHECK(ib_measure_latency(wb, &cfg, &rb, &err) == IB_OK);
    char *ja = ib_latency_report_json(&ra, ib_workload_get_info(wa), &cfg);
    char *jb = ib_latency_report_json(&rb, ib_workload_get_info(wb), &cfg);
    ib_latency_file fa, fb;
    CHECK(ib_latency_file_parse(ja, strlen(ja), &fa, &err) == IB_OK);
    CHECK(ib_latency_file_parse(jb, strlen(jb), &fb, &err) == IB_OK);
    CHECK_NEAR(fa.joules_per_item, ra.energy.joules_per_item, 1e-12);
    CHECK_NEAR(fb.energy_bound, rb.energy.bound, 1e-12);
    ib_comparison cmp;
    CHECK(ib_compare_samples(fa.samples_ms, fa.n, fb.samples_ms, fb.n, 0.01, &cmp, &err) == IB_OK);
    char *text = ib_comparison_report_text(&cmp, &fa, "a", &fb, "b");
    CHECK(text && strstr(text, "energy per input: 0.3 J -> ") && strstr(text, ": more energy\n"));
    char *json = ib_comparison_report_json(&cmp, &fa, "a", &fb, "b");
    cJSON *doc = cJSON_Parse(json);
    const cJSON *ec = cJSON_GetObjectItem(doc, "energy_change");
    double change, ci[2];
    CHECK(ib__energy_change(fa.joules_per_item, fa.energy_bound, fb.joules_per_item, fb.energy_bound, &change,
                            ci));
    CHECK_NEAR(cJSON_GetObjectItem(ec, "pct")->valuedouble, 100 * change, 1e-9);
    CHECK_NEAR(cJSON_GetArrayItem(cJSON_GetObjectItem(ec, "interval_pct"), 0)->valuedouble, 100 * ci[0],
               1e-9);
    CHECK(strcmp(cJSON_GetObjectItem(ec, "verdict")->valuestring, "more energy") == 0);
    cJSON_Delete(doc);
    free(text);
    free(json);
    /* No figure in B: said, no change computed. */
    fb.joules_per_item = NAN;
    text = ib_comparison_report_text(&cmp, &fa, "a", &fb, "b");
    CHECK(text && strstr(text, "energy: not in both files"));
    free(text);
    /* A broken figure: refused, one line. */
    char *bad = strstr(ja, "\"joules_per_item\":");
    CHECK(bad != NULL);
    if (bad) memcpy(bad + strlen("\"joules_per_item\":"), "-1", 2);
    ib_latency_file fx;
    CHECK(ib_latency_file_parse(ja, strlen(ja), &fx, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "energy.joules_per_item") != NULL);
    ib_latency_file_free(&fx);
    ib_latency_file_free(&fa);
    ib_latency_file_free(&fb);
    free(ja);
    free(jb);
    ib_latency_result_free(&ra);
    ib_latency_result_free(&rb);
    ib_workload_destroy(wa);
    ib_workload_destroy(wb);
}

/* The latency JSON of one session of runs of run_ms at 300 W (step 100
 * ms; step 0: no counter). */
static char *session_json(double run_ms, double step_ms)
{
    ib_workload *w = energy_fake(&run_ms, step_ms, 300, 50);
    ib_config cfg;
    ib_config_init(&cfg);
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    char *json = ib_latency_report_json(&r, ib_workload_get_info(w), &cfg);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
    return json;
}

/* Three sessions of runs of run_ms[i] merged (latency --sessions 3). */
static char *sessions_json(const double run_ms[3], double step_ms)
{
    char *doc[3];
    ib_session_outcome o[3];
    for (int i = 0; i < 3; i++) {
        doc[i] = session_json(run_ms[i], step_ms);
        o[i] = (ib_session_outcome){ doc[i], strlen(doc[i]), 0, "" };
    }
    ib_error err;
    char *merged = ib_sessions_merge_json(o, 3, 3, &err);
    CHECK(merged != NULL);
    for (int i = 0; i < 3; i++) free(doc[i]);
    return merged;
}

/* The energy per input of one session of runs of run_ms, read back. */
static double session_joules(double run_ms)
{
    char *json = session_json(run_ms, 100);
    ib_latency_file f;
    ib_error err;
    CHECK(ib_latency_file_parse(json, strlen(json), &f, &err) == IB_OK);
    double j = f.joules_per_item;
    ib_latency_file_free(&f);
    free(json);
    return j;
}

/* compare of two latency --sessions 3 documents: each session's figure
 * read back (that of the same measurement alone), the energy per input's
 * change that of the geometric means, its interval Welch's t over the
 * sessions' log figures (A's runs 1, 1.1 and 1 ms at 300 W: sd log(j11 /
 * j10) / sqrt(3); B's all 1.1 ms: 0; 2 degrees of freedom, the library's
 * t 4.3027) with the largest bounds, in text, JSON, CSV and Markdown;
 * against a document without a counter, its reason. */
static void test_compare_sessions_energy(void)
{
    const double ms_a[3] = { 1, 1.1, 1 }, ms_b[3] = { 1.1, 1.1, 1.1 };
    char *ja = sessions_json(ms_a, 100), *jb = sessions_json(ms_b, 100), *jn = sessions_json(ms_a, 0);
    ib_latency_file fa, fb, fn;
    ib_error err;
    CHECK(ib_latency_file_parse(ja, strlen(ja), &fa, &err) == IB_OK);
    CHECK(ib_latency_file_parse(jb, strlen(jb), &fb, &err) == IB_OK);
    CHECK(ib_latency_file_parse(jn, strlen(jn), &fn, &err) == IB_OK);
    CHECK(fa.n_sessions == 3 && isnan(fa.joules_per_item) && !fa.energy_note[0]);
    double j10 = session_joules(1), j11 = session_joules(1.1), ba = 0, bb = 0;
    CHECK_NEAR(j10, 0.3, 1e-12);
    for (size_t i = 0; i < 3; i++) {
        CHECK_NEAR(fa.sessions[i].joules_per_item, ms_a[i] == 1 ? j10 : j11, 1e-15);
        CHECK_NEAR(fb.sessions[i].joules_per_item, j11, 1e-15);
        CHECK(fa.sessions[i].energy_bound > 0 && fa.sessions[i].energy_bound < 0.01);
        ba = fmax(ba, fa.sessions[i].energy_bound);
        bb = fmax(bb, fb.sessions[i].energy_bound);
    }
    double ga = cbrt(j10 * j11 * j10), d = log(j11 / ga),
           half = 4.3027 * log(j11 / j10) / sqrt(3.0) / sqrt(3.0);
    double lo = expm1(d - half + log1p(-bb) - log1p(ba)), hi = expm1(d + half + log1p(bb) - log1p(-ba));
    ib_comparison cmp;
    CHECK(ib_compare_files(&fa, &fb, 0.01, &cmp, &err) == IB_OK);
    ib_result res = { .kind = IB_RESULT_COMPARISON, .comparison = &cmp, .a = &fa, .b = &fb };
    char *text = ib_report(&res, "text"), *json = ib_report(&res, "json"), *csv = ib_report(&res, "csv");
    char *md = ib_report(&res, "md");
    char line[400];
    snprintf(
        line, sizeof line,
        "energy per input: %.4g J -> %.4g J: %+.2f%%, within [%+.2f%%, %+.2f%%] (t over the sessions' log "
        "figures, A: 3 sessions, B: 3, and their bounds, up to +-%.2g%% and +-%.2g%%): inconclusive\n",
        ga, j11, 100 * expm1(d), 100 * lo, 100 * hi, 100 * ba, 100 * bb);
    CHECK(text && strstr(text, line));
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    const cJSON *ec = cJSON_GetObjectItem(doc, "energy_change");
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(ec, "pct")), 100 * expm1(d), 1e-9);
    CHECK_NEAR(cJSON_GetArrayItem(cJSON_GetObjectItem(ec, "interval_pct"), 0)->valuedouble, 100 * lo, 1e-9);
    CHECK_NEAR(cJSON_GetArrayItem(cJSON_GetObjectItem(ec, "interval_pct"), 1)->valuedouble, 100 * hi, 1e-9);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(ec, "why_not_b")));
    cJSON_Delete(doc);
    /* The energy verdict, then the two inputs' warnings (their keys, which
     * the machine's load may set: cpu_busy), the row's last cells. */
    char row[2048] = "";
    const char *second = csv ? strstr(csv, "\r\n") : NULL;
    if (second) snprintf(row, sizeof row, "%.*s", (int)strcspn(second + 2, "\r"), second + 2);
    for (int cells = 0; cells < 2; cells++) {
        char *comma = strrchr(row, ',');
        if (comma) *comma = '\0';
    }
    CHECK(strlen(row) > 13 && !strcmp(row + strlen(row) - 13, ",inconclusive"));
    snprintf(line, sizeof line,
             "Energy per input: %.4g J -> %.4g J, %+.2f%% within [%+.2f%%, %+.2f%%] (t over", ga, j11,
             100 * expm1(d), 100 * lo, 100 * hi);
    CHECK(md && strstr(md, line));
    free(text);
    free(json);
    free(csv);
    free(md);
    /* Against sessions without a counter: B's own reason. */
    res.b = &fn;
    CHECK(!strcmp(fn.energy_note, "the fake scripts no energy counter (energy_step_ms 0)"));
    text = ib_report(&res, "text");
    CHECK(text &&
          strstr(text, "energy: not in both files: B has no figure: the fake scripts no energy counter "
                       "(energy_step_ms 0)\n"));
    free(text);
    ib_latency_file_free(&fa);
    ib_latency_file_free(&fb);
    ib_latency_file_free(&fn);
    free(ja);
    free(jb);
    free(jn);
}

/* ------------------------------------------------------------------------ */
/* pitfalls                                                                  */
/* ------------------------------------------------------------------------ */

/* Power read at a few points times the time: the during-run readings
 * (the first and last, before and after, left out), evenly spread. */
static void test_few_samples(void)
{
    ib_gpu_sample s[7] = { { .power_w = 80 },  { .power_w = 300 }, { .power_w = 310 }, { .power_w = 320 },
                           { .power_w = 330 }, { .power_w = 340 }, { .power_w = 90 } };
    int used = 0;
    /* Points 1, 3, 5: (300 + 320 + 340) / 3 W over 2 s and 100 inputs. */
    CHECK_NEAR(ib__energy_few_samples(s, 7, 3, 2000, 100, &used), 320.0 * 2 / 100, 1e-12);
    CHECK_EQ_INT(used, 3);
    /* Three samples: one during-run reading, s[1]. */
    CHECK_NEAR(ib__energy_few_samples(s, 3, 3, 1000, 10, &used), 300.0 / 10, 1e-12);
    CHECK_EQ_INT(used, 1);
    s[1].power_w = s[2].power_w = s[3].power_w = s[4].power_w = s[5].power_w = 0;
    CHECK(isnan(ib__energy_few_samples(s, 7, 3, 1000, 10, &used)) && used == 0);
}

/* On the scripted counter: the correct row is latency's; a window of half
 * a step after it (ends not aligned) reads no change at all: -100%. */
static void test_pitfalls_energy(void)
{
    double run_ms = 1;
    ib_workload *w = energy_fake(&run_ms, 100, 300, 50);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.runs = 300;
    ib_pitfalls_result pr;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &pr, &err) == IB_OK);
    const ib_energy_pitfall *e = &pr.energy;
    CHECK(e->applies);
    CHECK_NEAR(e->correct.joules_per_item, 0.3, 1e-12);
    CHECK_NEAR(e->short_window_ms, 50, 1e-12);
    CHECK_NEAR(e->short_joules_per_item, 0, 0);
    CHECK_NEAR(e->short_error_pct, -100, 1e-9);
    CHECK_EQ_INT(e->sampled_points, 0); /* the fake has no NVML readings */
    CHECK(strstr(e->sampled_note, "no power readings") != NULL);
    ib_result r = {
        .kind = IB_RESULT_PITFALLS, .pitfalls = &pr, .info = ib_workload_get_info(w), .cfg = &cfg
    };
    docs d = render_all(&r);
    char *text = d.text, *json = d.json, *csv = d.csv, *md = d.md, *html = d.html;
    CHECK(text && strstr(text, "a 50 ms window (half a step)") && strstr(text, "0 J (-100.0%)"));
    cJSON *doc = cJSON_Parse(json);
    const cJSON *je = cJSON_GetObjectItem(doc, "energy");
    check_json_energy(cJSON_GetObjectItem(je, "correct"), &e->correct);
    CHECK_NEAR(
        cJSON_GetObjectItem(cJSON_GetObjectItem(je, "window_shorter_than_step"), "error_pct")->valuedouble,
        -100, 1e-9);
    cJSON_Delete(doc);
    CHECK(csv && strstr(csv, ",energy: a 50 ms window (half a step),true,ok,,,,,,-100,,,,,0\r\n"));
    CHECK(md && strstr(md, "| a 50 ms window (half a step) | 0 | -100.0% |"));
    CHECK(html && strstr(html, "a 50 ms window (half a step)"));
    docs_free(&d);
    ib_pitfalls_result_free(&pr);
    ib_workload_destroy(w);

    /* No counter: the row does not apply, and says why. */
    w = energy_fake(&run_ms, 0, 0, 0);
    CHECK(ib_measure_pitfalls(w, &cfg, &pr, &err) == IB_OK);
    CHECK(!pr.energy.applies && strstr(pr.energy.not_applicable, "no energy counter"));
    r.pitfalls = &pr;
    r.info = ib_workload_get_info(w);
    text = render(&r, "text");
    CHECK(text && strstr(text, "energy: n/a: no counter figure to compare with: "));
    free(text);
    ib_pitfalls_result_free(&pr);
    ib_workload_destroy(w);
}

/* Without a counter, a GPU's sampled power over the window: the figure,
 * the wider bound, and the report saying how it was got. */
static void test_sampled_figure(void)
{
    ib_env *env = calloc(1, sizeof *env);
    /* 300 W steady, a sample every 100 ms from 1000 to 4000 ms. */
    for (int i = 0; i <= 30; i++)
        env->gpu_samples[env->n_gpu_samples++] = (ib_gpu_sample){ .t_ms = 1000 + 100.0 * i, .power_w = 300 };
    ib_energy e;
    /* The sampler's time 0 at 500 on the host clock: the window 1000 ..
     * 4000 of its time, on the samples: steady power, its bound the
     * sampling's 100 ms over 3 s. */
    ib__energy_sampled_figure(env, 500, 1500, 4500, 3000, "this GPU has no energy counter", &e);
    CHECK(e.source == IB_ENERGY_SAMPLED && !e.aligned);
    CHECK_NEAR(e.joules, 900, 1e-9);
    CHECK_NEAR(e.joules_per_item, 0.3, 1e-12);
    CHECK_NEAR(e.bound, 100.0 / 3000, 1e-12);
    CHECK(strcmp(e.counter, "NVML power samples") == 0);
    CHECK(strstr(e.note,
                 "no energy counter (this GPU has no energy counter): the sampled power integrated") != NULL);
    /* 500 ms past the last sample, held flat: +-(500 + 100) / 3500 ms, too wide. */
    ib__energy_sampled_figure(env, 0, 1000, 4500, 3500, "no counter", &e);
    CHECK(e.source == IB_ENERGY_NONE);
    CHECK_NEAR(e.bound, 600.0 / 3500, 1e-12);
    CHECK(strstr(e.note, "the sampled power integrated over the window; a window of 3500 ms") != NULL);
    ib__energy_sampled_figure(env, 0, 5000, 6000, 10, "no counter", &e);
    CHECK(e.source == IB_ENERGY_NONE && strstr(e.note, "fewer than two power samples"));
    free(env);
}

/* How often a counter is read during the work: NVML's (no range) only at
 * the window's ends; RAPL's 262 kJ at a quarter of its wrap at 2 kW
 * (32.8 s); a tiny range no more often than every 10 ms. */
static void test_tick_follows_the_wrap(void)
{
    ib__energy_counter nvml = { .unit_j = 1e-3, .range = 0 };
    ib__energy_counter rapl = { .unit_j = 1e-6, .range = 262143328850ULL };
    ib__energy_counter tiny = { .unit_j = 1e-3, .range = 1000 };
    CHECK(isinf(ib__energy_tick_ms(&nvml)));
    CHECK_NEAR(ib__energy_tick_ms(&rapl), 262143.32885 / 2000 * 1e3 / 4, 1e-6);
    CHECK_NEAR(ib__energy_tick_ms(&tiny), 10, 0);

    /* On the fake's counter without a range: the ticks of a long window
     * read nothing (the meter's last read stays the window's start); with
     * a range, they read at its tick (12.5 ms here). */
    for (int ranged = 0; ranged < 2; ranged++) {
        double run_ms = 1;
        ib__fake_script s;
        ib__fake_script_init(&s);
        s.duration_ms = const_ms;
        s.ctx = &run_ms;
        s.energy_step_ms = 100;
        s.busy_w = 300;
        s.idle_w = 50;
        s.energy_range = ranged ? 100000 : 0; /* 100 J: a wrap each 333 ms at 300 W, a read each 12.5 ms */
        ib_workload *w = NULL;
        ib_error err;
        CHECK(ib__workload_open_fake(&s, &w, &err) == IB_OK);
        ib_config cfg;
        ib_config_init(&cfg);
        ib__energy_meters m;
        ib__energy_meters_open(&m, w, &cfg);
        CHECK(ib__energy_meters_begin(&m, pad_run, w, &err) == IB_OK);
        double start_read = m.device.read_ms;
        for (int i = 0; i < 1000; i++) {
            run_n(w, 1);
            ib__energy_meters_tick(&m);
        }
        if (ranged)
            CHECK(m.device.read_ms >= start_read + 1000 - ib__energy_tick_ms(&m.device.c) - 1);
        else
            CHECK_NEAR(m.device.read_ms, start_read, 0);
        double pad_items;
        CHECK(ib__energy_meters_end(&m, pad_run, w, &pad_items, &err) == IB_OK);
        ib_energy e, cpu;
        ib__energy_meters_figures(&m, 1000 + pad_items, NULL, NAN, &e, &cpu);
        CHECK(e.source == IB_ENERGY_COUNTER); /* the wraps were seen: the figure holds */
        CHECK_NEAR(e.joules_per_item, 0.3, 0.3 * e.bound);
        ib__energy_meters_close(&m);
        ib_workload_destroy(w);
    }
}

/* The card's power limit beside the figure: at 300 W against a 310 W
 * limit, the report says it was power-capped. */
static void test_power_limit(void)
{
    double run_ms = 1;
    ib_workload *w = energy_fake(&run_ms, 100, 300, 50);
    ib_config cfg;
    ib_config_init(&cfg);
    ib__energy_meters m;
    ib_error err;
    ib__energy_meters_open(&m, w, &cfg);
    CHECK(ib__energy_meters_begin(&m, pad_run, w, &err) == IB_OK);
    run_n(w, 1000);
    double pad_items;
    CHECK(ib__energy_meters_end(&m, pad_run, w, &pad_items, &err) == IB_OK);
    ib_env *env = calloc(1, sizeof *env);
    env->power_limit_w = 310;
    ib_energy e, cpu;
    ib__energy_meters_figures(&m, 1000 + pad_items, env, NAN, &e, &cpu);
    CHECK_NEAR(e.power_limit_fraction, 300.0 / 310, 1e-9);
    CHECK(strstr(cpu.note, "the CPU package not read") != NULL);
    ib__sbuf b = { 0 };
    ib__text_energy(&b, "energy", &e);
    char *text = ib__sbuf_finish(&b);
    CHECK(text && strstr(text, "at 97% of the GPU's power limit: the card was power-capped"));
    CHECK(text && !strstr(text, "the window ran")); /* its timed unit not stated */
    free(text);
    /* A window that ran slower than its timed runs says so (the H200's
     * decode window of the eleventh session: 979 tokens in 2190.8 ms
     * against a 1.375 ms TPOT); within 10% it says nothing. */
    e.window_ms = 2190.8;
    e.items = 979;
    e.timed_ms_per_item = 1.375;
    b = (ib__sbuf){ 0 };
    ib__text_energy_of(&b, "energy per output token (decode)", &e, "token");
    text = ib__sbuf_finish(&b);
    CHECK(text &&
          strstr(text, "\n  the window ran 2.238 ms a token against 1.375 ms timed: its energy counts the "
                       "time between the timed runs too\n"));
    free(text);
    e.timed_ms_per_item = 2.1;
    b = (ib__sbuf){ 0 };
    ib__text_energy_of(&b, "energy", &e, "token");
    text = ib__sbuf_finish(&b);
    CHECK(text && !strstr(text, "the window ran"));
    free(text);
    env->power_limit_w = 0; /* unknown: nothing said */
    ib__energy_meters_figures(&m, 1000 + pad_items, env, NAN, &e, &cpu);
    CHECK(isnan(e.power_limit_fraction));
    ib__energy_meters_close(&m);
    free(env);
    ib_workload_destroy(w);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_fake_counter_steps);
    RUN(test_fake_counter_wraps);
    RUN(test_fake_without_counter);
    RUN(test_rapl_reads_and_refuses);
    RUN(test_delta);
    RUN(test_bound_and_step);
    RUN(test_figures);
    RUN(test_from_samples);
    RUN(test_sampled_figure);
    RUN(test_meter_learns);
    RUN(test_meter_aligned_window);
    RUN(test_meter_unaligned_windows);
    RUN(test_meter_wrap_and_missing);
    RUN(test_meter_rapl_wrap);
    RUN(test_tick_follows_the_wrap);
    RUN(test_latency_energy);
    RUN(test_latency_energy_too_short);
    RUN(test_throughput_energy);
    RUN(test_serve_energy);
    RUN(test_best_energy_objective);
    RUN(test_formats_latency);
    RUN(test_formats_throughput);
    RUN(test_energy_change);
    RUN(test_compare_energy);
    RUN(test_compare_sessions_energy);
    RUN(test_few_samples);
    RUN(test_pitfalls_energy);
    RUN(test_power_limit);
    return check_summary("test_energy");
}
