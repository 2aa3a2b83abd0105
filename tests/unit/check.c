#include "check.h"
#include "backend/workload.h"

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

size_t count_occurrences(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p++) n++;
    return n;
}
