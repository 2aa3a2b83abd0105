/* The values of a backend's options (KEY=VALUE) read for its open: yes or
 * no, a whole number in a range, each refused with one line naming the
 * option. For the backends' folders (registry.h declares them). */
#include "backend/registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ib_status ib__backend_option_bool(const ib_backend_option *o, bool *out, ib_error *err)
{
    static const char *const yes[] = { "yes", "true", "1" }, *const no[] = { "no", "false", "0" };
    for (size_t i = 0; i < 3; i++) {
        if (!strcmp(o->value, yes[i])) return *out = true, IB_OK;
        if (!strcmp(o->value, no[i])) return *out = false, IB_OK;
    }
    return ib__fail(err, IB_ERR_INVALID_ARG, "option %s=%s: expected yes or no", o->key, o->value);
}

ib_status ib__backend_option_int(const ib_backend_option *o, long long lo, long long hi, long long *out,
                                 ib_error *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(o->value, &end, 10);
    IB_FAIL_IF(!*o->value || *end || errno == ERANGE || v < lo || v > hi, err, IB_ERR_INVALID_ARG,
               "option %s=%s: expected a whole number from %lld to %lld", o->key, o->value, lo, hi);
    *out = v;
    return IB_OK;
}

size_t ib__host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 0;
    return (size_t)pages * (size_t)page;
}
