#include "check.h"
#include "backend/fake/fake.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int check_failures = 0;
int check_count = 0;

static const char *only_test; /* --test NAME: the one test to run */
static bool list_tests;       /* --list: name the tests, run none */
static int tests_selected;

void check_init(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {
            list_tests = true;
        } else if (strcmp(argv[i], "--test") == 0 && i + 1 < argc) {
            only_test = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--list | --test NAME]\n", argv[0]);
            exit(2);
        }
    }
}

bool check_selected(const char *name)
{
    if (list_tests) {
        printf("%s\n", name);
        return false;
    }
    if (only_test && strcmp(only_test, name) != 0) return false;
    tests_selected++;
    return true;
}

int check_summary(const char *test_name)
{
    if (list_tests) return 0;
    if (only_test && tests_selected == 0) {
        fprintf(stderr, "%s: no test named %s (--list names them)\n", test_name, only_test);
        return 2;
    }
    printf("%s: %d checks, %d failed\n", test_name, check_count, check_failures);
    return check_failures == 0 ? 0 : 1;
}

ib_workload *check_open_fake(const ib__fake_script *s)
{
    ib_workload *w = NULL;
    ib_error err;
    CHECK(ib__workload_open_fake(s, &w, &err) == IB_OK);
    return w;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void check_sort(double *x, size_t n) { qsort(x, n, sizeof *x, by_value); }

double check_quantile7(const double *sorted, size_t n, double q)
{
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n) return sorted[n - 1];
    return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

size_t count_occurrences(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p++) n++;
    return n;
}
