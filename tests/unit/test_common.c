/* The core's small helpers: error messages, status names, the bounded copy
 * and the clock. Written for survivors of the mutation run (docs/testing.md):
 * an off-by-one in the copy's bound and a status name that fell through to
 * the next case passed every other test. */
#include "check.h"
#include "base/common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void test_strlcpy_bounds(void)
{
    char dst[8];
    memset(dst, 'x', sizeof dst);
    ib__strlcpy(dst, "abcdefghijkl", 4); /* 3 characters and the terminator */
    CHECK(strcmp(dst, "abc") == 0);
    CHECK(dst[4] == 'x'); /* nothing written past cap */

    memset(dst, 'x', sizeof dst);
    ib__strlcpy(dst, "ab", 4);
    CHECK(strcmp(dst, "ab") == 0);
    CHECK(dst[3] == 'x');

    memset(dst, 'x', sizeof dst);
    ib__strlcpy(dst, "abc", 4); /* exactly fits */
    CHECK(strcmp(dst, "abc") == 0);

    memset(dst, 'x', sizeof dst);
    ib__strlcpy(dst, "abc", 0); /* no room: nothing written */
    CHECK(dst[0] == 'x');
}

/* "%+.Nf" of what ib__signed_shown gives, as every report prints it. */
static const char *shown(char buf[32], double x, int decimals)
{
    snprintf(buf, 32, "%+.*f", decimals, ib__signed_shown(x, decimals));
    return buf;
}

static void test_signed_shown(void)
{
    char b[32];
    /* A hair below zero, and -0 itself, read +0 at every precision. */
    CHECK(strcmp(shown(b, -0.04, 1), "+0.0") == 0);
    CHECK(strcmp(shown(b, -0.0, 1), "+0.0") == 0);
    CHECK(strcmp(shown(b, -0.0, 0), "+0") == 0);
    CHECK(strcmp(shown(b, -0.004, 2), "+0.00") == 0);
    CHECK(strcmp(shown(b, -1e-300, 3), "+0.000") == 0);
    /* printf's own rounding decides: -0.5 is "-0" at no decimals
       (half to even), and must read +0; -0.6 is a real -1. */
    CHECK(strcmp(shown(b, -0.5, 0), "+0") == 0);
    CHECK(strcmp(shown(b, -0.6, 0), "-1") == 0);
    /* What prints as a figure keeps its sign and value. */
    CHECK(strcmp(shown(b, -0.05001, 1), "-0.1") == 0);
    CHECK(strcmp(shown(b, -0.006, 2), "-0.01") == 0);
    CHECK(strcmp(shown(b, 0.04, 1), "+0.0") == 0);
    CHECK(strcmp(shown(b, 12.25, 1), "+12.2") == 0);
    CHECK(ib__signed_shown(-3.75, 1) == -3.75);
    CHECK(isnan(ib__signed_shown(NAN, 1)));
    CHECK(ib__signed_shown(-INFINITY, 1) == -INFINITY);
    CHECK(ib__signed_shown(-1e300, 2) == -1e300); /* too long to print whole: a figure */
}

static void test_status_names(void)
{
    /* Every status has its own name: a case that falls through to the next
     * one would name two statuses alike. */
    const ib_status all[] = { IB_OK,
                              IB_ERR_INVALID_ARG,
                              IB_ERR_IO,
                              IB_ERR_MODEL,
                              IB_ERR_UNSUPPORTED,
                              IB_ERR_NO_DEVICE,
                              IB_ERR_NO_MEMORY,
                              IB_ERR_DEVICE_OOM,
                              IB_ERR_RUNTIME,
                              IB_ERR_DEVICE_LOST,
                              IB_ERR_INTERRUPTED,
                              IB_ERR_INTERNAL,
                              IB_ERR_NOT_MET,
                              IB_ERR_DEADLOCK };
    const size_t n = sizeof all / sizeof all[0];
    for (size_t i = 0; i < n; i++) {
        const char *name = ib_status_str(all[i]);
        CHECK(strcmp(name, "unknown status") != 0);
        for (size_t j = 0; j < i; j++) CHECK(strcmp(name, ib_status_str(all[j])) != 0);
    }
    CHECK(strcmp(ib_status_str(IB_OK), "ok") == 0);
    CHECK(strcmp(ib_status_str(IB_ERR_DEVICE_LOST), "device lost") == 0);
    CHECK(strcmp(ib_status_str((ib_status)-99), "unknown status") == 0);
}

static void test_fail_message_is_one_line(void)
{
    ib_error err = { { 0 } };
    CHECK(ib__fail(&err, IB_ERR_IO, "first\nsecond\r%d", 3) == IB_ERR_IO);
    CHECK(strcmp(err.message, "first second 3") == 0);
    CHECK(ib__fail(NULL, IB_ERR_MODEL, "no error to fill") == IB_ERR_MODEL);
}

/* CLOCK_MONOTONIC in whole nanoseconds: the reference. */
static int64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A clock in seconds or microseconds is far off: at least the 20 ms slept,
 * at most what the reference read around it saw (not a fixed bound: a
 * loaded machine can sleep much longer than asked). */
static void test_clock_in_milliseconds(void)
{
    int64_t outer0 = monotonic_ns();
    double t0 = ib__now_ms();
    struct timespec nap = { 0, 20 * 1000 * 1000 }; /* 20 ms */
    nanosleep(&nap, NULL);
    double dt = ib__now_ms() - t0;
    double outer_ms = (double)(monotonic_ns() - outer0) / 1e6;
    CHECK(dt >= 19.9);
    CHECK(dt <= outer_ms + 1e-3);
}

/* The option list: set appends in order, a key set again keeps its place
 * with the new value, and what does not fit is refused, never cut. */
static void test_option_list(void)
{
    ib_option_list l = { 0 };
    CHECK(ib_option_list_get(&l, "threads") == NULL);
    CHECK_EQ_INT(ib_option_list_set(&l, "threads", "default"), IB_OK);
    CHECK_EQ_INT(ib_option_list_set(&l, "cudnn_search", "EXHAUSTIVE"), IB_OK);
    CHECK_EQ_INT(ib_option_list_set(&l, "threads", "2"), IB_OK);
    CHECK_EQ_INT(l.n, 2);
    CHECK(!strcmp(l.items[0].key, "threads") && !strcmp(l.items[0].value, "2"));
    const char *search = ib_option_list_get(&l, "cudnn_search");
    CHECK(search && !strcmp(search, "EXHAUSTIVE"));
    CHECK(ib_option_list_get(&l, "thread") == NULL && ib_option_list_get(&l, NULL) == NULL);

    char key[IB_OPTION_KEY_LEN + 1], value[IB_OPTION_VALUE_LEN + 1];
    memset(key, 'k', sizeof key);
    memset(value, 'v', sizeof value);
    key[IB_OPTION_KEY_LEN - 1] = value[IB_OPTION_VALUE_LEN - 1] = '\0'; /* the longest that fit */
    CHECK_EQ_INT(ib_option_list_set(&l, key, value), IB_OK);
    key[IB_OPTION_KEY_LEN - 1] = 'k', key[IB_OPTION_KEY_LEN] = '\0';
    CHECK_EQ_INT(ib_option_list_set(&l, key, "1"), IB_ERR_INVALID_ARG);
    value[IB_OPTION_VALUE_LEN - 1] = 'v', value[IB_OPTION_VALUE_LEN] = '\0';
    CHECK_EQ_INT(ib_option_list_set(&l, "threads", value), IB_ERR_INVALID_ARG);
    const char *threads = ib_option_list_get(&l, "threads");
    CHECK(threads && !strcmp(threads, "2"));
    CHECK_EQ_INT(ib_option_list_set(&l, "", "1"), IB_ERR_INVALID_ARG);
    CHECK_EQ_INT(l.n, 3);

    while (l.n < IB_MAX_OPTIONS) {
        char k[16];
        snprintf(k, sizeof k, "k%zu", l.n);
        CHECK_EQ_INT(ib_option_list_set(&l, k, "x"), IB_OK);
    }
    CHECK_EQ_INT(ib_option_list_set(&l, "one_more", "x"), IB_ERR_NO_MEMORY);
    CHECK_EQ_INT(ib_option_list_set(&l, "threads", "3"), IB_OK); /* full, but known */
    CHECK_EQ_INT(l.n, IB_MAX_OPTIONS);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_strlcpy_bounds);
    RUN(test_signed_shown);
    RUN(test_status_names);
    RUN(test_fail_message_is_one_line);
    RUN(test_clock_in_milliseconds);
    RUN(test_option_list);
    return check_summary("test_common");
}
