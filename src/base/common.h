/* Internal helpers shared by every subsystem: error reporting and the
 * propagation macros. Internal non-static names carry the ib__ prefix. */
#ifndef IB_CORE_COMMON_H
#define IB_CORE_COMMON_H

#include "inferbench.h"

#include <stdarg.h>

/* Writes a formatted one-line message into err (if not NULL) and returns
 * status, so that a failure reads `return ib__fail(err, IB_ERR_IO, "...")`. */
ib_status ib__fail(ib_error *err, ib_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Propagates a failure: evaluates expr once, returns it if it is an error. */
#define IB_TRY(expr)                                                                                         \
    do {                                                                                                     \
        ib_status ib__s_ = (expr);                                                                           \
        if (ib__s_ != IB_OK) return ib__s_;                                                                  \
    } while (0)

/* Fails with status and a message when cond holds. */
#define IB_FAIL_IF(cond, err, status, ...)                                                                   \
    do {                                                                                                     \
        if (cond) return ib__fail((err), (status), __VA_ARGS__);                                             \
    } while (0)

/* Cores this process may run on (sched_getaffinity), at least 1: what a
 * thread count is judged against (a container or taskset may allow fewer
 * than the machine has). */
int32_t ib__cpus_allowed(void);

/* True when the caller's cancel flag (NULL: none) was raised. */
static inline bool ib__cancelled(const volatile int *flag) { return flag && *flag; }

/* Monotonic host clock in milliseconds (CLOCK_MONOTONIC). */
double ib__now_ms(void);

/* Copies src into dst[cap] always NUL-terminated, truncating. */
void ib__strlcpy(char *dst, const char *src, size_t cap);

/* x for a signed figure printed with `decimals` digits after the point
 * ("%+.*f"): 0 where it prints as zero, so that a hair below zero (or -0)
 * reads "+0.0", not "-0.0", a sign the figure does not have; x itself
 * otherwise (NaN and infinities too). */
double ib__signed_shown(double x, int decimals);

#endif
