#include "check.h"
#include "backend/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int check_failures = 0;
int check_count = 0;

int check_summary(const char *test_name)
{
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
