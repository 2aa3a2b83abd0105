/* Fuzz target: ib_serve_trace_parse (serve --arrivals FILE) on the raw
 * input. Beyond "no crash", an accepted schedule is what the header
 * promises (at least one time, each finite and >= 0, non-decreasing), and a
 * refusal leaves nothing allocated and a one-line message. */
#include "fuzz.h"
#include "inferbench.h"

#include <math.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    double *t = (double *)&size; /* must be reset by the parser */
    size_t n = 12345;
    ib_error err;
    memset(&err, 0x5a, sizeof err);
    ib_status st = ib_serve_trace_parse((const char *)data, size, &t, &n, &err);
    if (st == IB_OK) {
        FUZZ_ASSERT(t != NULL && n > 0);
        for (size_t i = 0; i < n; i++) {
            FUZZ_ASSERT(isfinite(t[i]) && t[i] >= 0);
            FUZZ_ASSERT(i == 0 || t[i] >= t[i - 1]);
        }
        ib_free(t);
    } else {
        FUZZ_ASSERT(st == IB_ERR_INVALID_ARG || st == IB_ERR_NO_MEMORY);
        FUZZ_ASSERT(t == NULL && n == 0);
        size_t len = strnlen(err.message, sizeof err.message);
        FUZZ_ASSERT(len > 0 && len < sizeof err.message && strchr(err.message, '\n') == NULL);
    }
    return 0;
}
