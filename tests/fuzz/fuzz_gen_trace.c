/* Fuzz target: ib_gen_trace_parse (serve --trace FILE of a generative
 * model) on the raw input. Beyond "no crash", an accepted trace is what
 * the header promises (at least one request, arrivals finite, >= 0 and
 * non-decreasing, token counts in 1..IB_GEN_SERVE_MAX_TOKENS), and a
 * refusal leaves nothing allocated and a one-line message. */
#include "fuzz.h"
#include "inferbench.h"

#include <math.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ib_gen_request_spec *rs = (ib_gen_request_spec *)&size; /* must be reset by the parser */
    size_t n = 12345;
    ib_error err;
    memset(&err, 0x5a, sizeof err);
    ib_status st = ib_gen_trace_parse((const char *)data, size, &rs, &n, &err);
    if (st == IB_OK) {
        FUZZ_ASSERT(rs != NULL && n > 0);
        for (size_t i = 0; i < n; i++) {
            FUZZ_ASSERT(isfinite(rs[i].arrival_ms) && rs[i].arrival_ms >= 0);
            FUZZ_ASSERT(i == 0 || rs[i].arrival_ms >= rs[i - 1].arrival_ms);
            FUZZ_ASSERT(rs[i].prompt_tokens >= 1 && rs[i].prompt_tokens <= IB_GEN_SERVE_MAX_TOKENS);
            FUZZ_ASSERT(rs[i].output_tokens >= 1 && rs[i].output_tokens <= IB_GEN_SERVE_MAX_TOKENS);
        }
        ib_free(rs);
    } else {
        FUZZ_ASSERT(st == IB_ERR_INVALID_ARG || st == IB_ERR_NO_MEMORY);
        FUZZ_ASSERT(rs == NULL && n == 0);
        size_t len = strnlen(err.message, sizeof err.message);
        FUZZ_ASSERT(len > 0 && len < sizeof err.message && strchr(err.message, '\n') == NULL);
    }
    return 0;
}
