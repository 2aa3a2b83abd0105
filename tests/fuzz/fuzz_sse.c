/* Fuzz target: the HTTP client's stream reader (src/endpoint/sse.c) and
 * each event's JSON (src/endpoint/chunk.c), as a server's bytes reach
 * them. The input's first byte picks where the stream is cut into two
 * pieces (libcurl hands bytes over in pieces of any size); beyond "no
 * crash": the events are the same whatever the cut (the reader keeps its
 * state across pieces exactly), every event's data is NUL-terminated and
 * within the bound, a chunk is read or refused with one line, and the
 * tokens it carries are a count >= 0 or -1 (a count going back). */
#include "endpoint/chunk.h"
#include "endpoint/sse.h"
#include "fuzz.h"

#include <string.h>

typedef struct digest {
    uint64_t hash;
    size_t n;
    int64_t counted; /* the tokens so far, as the client counts them */
} digest;

static bool on_event(void *ctx, const char *type, const char *data, size_t len)
{
    digest *d = ctx;
    FUZZ_ASSERT(data[len] == '\0' && len < IB__SSE_MAX_BYTES && type[0] != '\0');
    for (const char *p = type; *p; p++) d->hash = (d->hash ^ (unsigned char)*p) * 1099511628211ull;
    for (size_t i = 0; i < len; i++) d->hash = (d->hash ^ (unsigned char)data[i]) * 1099511628211ull;
    d->hash = (d->hash ^ 0x100) * 1099511628211ull;
    d->n++;
    ib__chunk c;
    ib_error err;
    memset(&err, 0x5a, sizeof err);
    ib_status st = ib__chunk_parse(data, len, &c, &err);
    if (st != IB_OK) {
        FUZZ_ASSERT(st == IB_ERR_INVALID_ARG);
        size_t n = strnlen(err.message, sizeof err.message);
        FUZZ_ASSERT(n > 0 && n < sizeof err.message && !strchr(err.message, '\n'));
        return true;
    }
    bool exact;
    int64_t k = ib__chunk_tokens(&c, d->counted, &exact);
    FUZZ_ASSERT(k >= -1);
    if (k > 0 && k < (1 << 20)) d->counted += k;
    return true;
}

static ib_status read_stream(const char *p, size_t n, size_t cut, digest *d)
{
    ib__sse s;
    ib__sse_init(&s);
    memset(d, 0, sizeof *d);
    ib_status st = ib__sse_feed(&s, p, cut, on_event, d);
    if (st == IB_OK) st = ib__sse_feed(&s, p + cut, n - cut, on_event, d);
    ib__sse_free(&s);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1, cut = n ? data[0] % (n + 1) : 0;
    digest whole, pieces;
    ib_status a = read_stream(p, n, n, &whole), b = read_stream(p, n, cut, &pieces);
    FUZZ_ASSERT(a == b);
    FUZZ_ASSERT(whole.n == pieces.n && whole.hash == pieces.hash && whole.counted == pieces.counted);
    return 0;
}
