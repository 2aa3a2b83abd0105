/* Energy: the counters as read (RAPL's files in a folder of the test's,
 * the fake's scripted counter on its virtual clock), the arithmetic on
 * them exactly (src/core/energy.c), and the measurements' figures on the
 * fake. No GPU and no timing: every number is the script's. */
#include "check.h"
#include "env/energy.h"
#include "backend/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_fake_counter_steps);
    RUN(test_fake_counter_wraps);
    RUN(test_fake_without_counter);
    RUN(test_rapl_reads_and_refuses);
    return check_summary("test_energy");
}
