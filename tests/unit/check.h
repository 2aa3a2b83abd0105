/* A minimal test harness: CHECK records a failure and goes on; the test's
 * main returns check_summary(). */
#ifndef IB_TESTS_CHECK_H
#define IB_TESTS_CHECK_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

extern int check_failures;
extern int check_count;

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        check_count++;                                                                                       \
        if (!(cond)) {                                                                                       \
            check_failures++;                                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                         \
        }                                                                                                    \
    } while (0)

/* |a - b| <= tol */
#define CHECK_NEAR(a, b, tol)                                                                                \
    do {                                                                                                     \
        double check_a_ = (a), check_b_ = (b);                                                               \
        check_count++;                                                                                       \
        if (!(fabs(check_a_ - check_b_) <= (tol))) {                                                         \
            check_failures++;                                                                                \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.12g, %s = %.12g\n", __FILE__, __LINE__, #a,    \
                    check_a_, #b, check_b_);                                                                 \
        }                                                                                                    \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                                   \
    do {                                                                                                     \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                                      \
        check_count++;                                                                                       \
        if (check_a_ != check_b_) {                                                                          \
            check_failures++;                                                                                \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld\n", __FILE__, __LINE__, #a,        \
                    check_a_, #b, check_b_);                                                                 \
        }                                                                                                    \
    } while (0)

/* Each test of a file runs by name (docs/testing.md): main calls
 * check_init(argc, argv) first, then RUN(test_fn) for each test.
 * `--list` names the tests and runs none; `--test NAME` runs that one (the
 * set-up outside RUN still runs). check_selected(name) is the same choice
 * for a test that is not a function (one model of a loop). */
void check_init(int argc, char **argv);
bool check_selected(const char *name);
#define RUN(test_fn)                                                                                         \
    do {                                                                                                     \
        if (check_selected(#test_fn)) test_fn();                                                             \
    } while (0)

/* Prints "N checks, M failed" and returns the exit status: 2 when --test
 * named no test. */
int check_summary(const char *test_name);

/* How many times needle occurs in s (overlapping occurrences counted). */
size_t count_occurrences(const char *s, const char *needle);

/* Sorts x ascending, and the quantile q of sorted x by its definition
 * (Hyndman & Fan type 7: x[h] interpolated at h = (n-1)q), computed here
 * so that the library's statistics are checked against an independent
 * implementation. */
void check_sort(double *x, size_t n);
double check_quantile7(const double *sorted, size_t n, double q);

/* Opens the scripted fake workload, checking that it opened. */
struct ib__fake_script;
struct ib_workload *check_open_fake(const struct ib__fake_script *s);

#endif
