#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "base/common.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

ib_status ib__fail(ib_error *err, ib_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        /* One line: a foreign message may carry newlines. */
        for (char *p = err->message; *p; p++)
            if (*p == '\n' || *p == '\r') *p = ' ';
    }
    return status;
}

double ib__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void ib__strlcpy(char *dst, const char *src, size_t cap)
{
    if (cap == 0) return;
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

double ib__signed_shown(double x, int decimals)
{
    if (!isfinite(x)) return x;
    /* As printf rounds it (round-half-even on the binary value), not as
     * round() would: the digits decide. */
    char digits[512];
    snprintf(digits, sizeof digits, "%.*f", decimals, x);
    return strspn(digits, "-0.") == strlen(digits) ? 0.0 : x;
}

const char *ib_status_str(ib_status status)
{
    switch (status) {
    case IB_OK: return "ok";
    case IB_ERR_INVALID_ARG: return "invalid argument";
    case IB_ERR_IO: return "input/output error";
    case IB_ERR_MODEL: return "invalid model";
    case IB_ERR_UNSUPPORTED: return "unsupported";
    case IB_ERR_NO_DEVICE: return "no such device";
    case IB_ERR_NO_MEMORY: return "out of host memory";
    case IB_ERR_DEVICE_OOM: return "device out of memory";
    case IB_ERR_RUNTIME: return "runtime error";
    case IB_ERR_DEVICE_LOST: return "device lost";
    case IB_ERR_INTERRUPTED: return "interrupted";
    case IB_ERR_INTERNAL: return "internal error";
    case IB_ERR_NOT_MET: return "goal not met";
    case IB_ERR_DEADLOCK: return "workload blocked on a held stream";
    }
    return "unknown status";
}

void ib_free(void *p) { free(p); }

int32_t ib__cpus_allowed(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}
