#include "check.h"

int check_failures = 0;
int check_count = 0;

int check_summary(const char *test_name)
{
    printf("%s: %d checks, %d failed\n", test_name, check_count, check_failures);
    return check_failures == 0 ? 0 : 1;
}
