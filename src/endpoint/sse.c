/* Server-sent events read incrementally, by the WHATWG HTML standard's
 * rules (9.2.6 "Interpreting an event stream"): one leading UTF-8 BOM
 * skipped; lines ended by CRLF, LF or CR; a blank line dispatches the
 * event; a line starting with ':' is a comment; "field:value" with one
 * space after the colon dropped, a line without a colon a field of empty
 * value; "data" fields appended with an LF each, the last LF removed at
 * dispatch; "event" names the type; "id" and "retry" concern reconnection,
 * which this client never does, and other fields are ignored. libcurl has
 * no reader of its own, and the rules are short enough to follow exactly
 * here (tests/unit/test_endpoint.c, tests/fuzz/fuzz_sse.c). */
#include "endpoint/sse.h"

#include <stdlib.h>
#include <string.h>

static const unsigned char BOM[3] = { 0xEF, 0xBB, 0xBF };

void ib__sse_init(ib__sse *s) { memset(s, 0, sizeof *s); }

void ib__sse_free(ib__sse *s)
{
    if (!s) return;
    free(s->line);
    free(s->data);
    ib__sse_init(s);
}

/* Appends bytes[0..n) to *buf (kept NUL-terminated), within the bound. */
static ib_status append(char **buf, size_t *len, size_t *cap, const char *bytes, size_t n, bool *too_long)
{
    if (*len + n + 1 > IB__SSE_MAX_BYTES) {
        *too_long = true;
        return IB_ERR_INVALID_ARG;
    }
    if (*len + n + 1 > *cap) {
        size_t want = *cap ? *cap : 256;
        while (want < *len + n + 1) want *= 2;
        char *p = realloc(*buf, want);
        if (!p) return IB_ERR_NO_MEMORY;
        *buf = p;
        *cap = want;
    }
    memcpy(*buf + *len, bytes, n);
    *len += n;
    (*buf)[*len] = '\0';
    return IB_OK;
}

static ib_status dispatch(ib__sse *s, ib__sse_event_fn on_event, void *ctx)
{
    bool any = s->n_data > 0;
    if (any) s->data[--s->n_data] = '\0'; /* the last field's LF */
    bool go = !any || on_event(ctx, s->type[0] ? s->type : "message", s->data, s->n_data);
    s->n_data = 0;
    s->type[0] = '\0';
    return go ? IB_OK : IB_ERR_INTERRUPTED;
}

/* One complete line (without its end) of s->line. */
static ib_status process_line(ib__sse *s, ib__sse_event_fn on_event, void *ctx)
{
    const char *line = s->n_line ? s->line : "";
    size_t n = s->n_line;
    s->n_line = 0;
    if (n == 0) return dispatch(s, on_event, ctx);
    if (line[0] == ':') return IB_OK;
    const char *colon = memchr(line, ':', n);
    size_t name_len = colon ? (size_t)(colon - line) : n;
    const char *value = colon ? colon + 1 : line + n;
    size_t value_len = (size_t)(line + n - value);
    if (value_len > 0 && value[0] == ' ') value++, value_len--;
    if (name_len == 4 && !memcmp(line, "data", 4)) {
        ib_status st = append(&s->data, &s->n_data, &s->cap_data, value, value_len, &s->too_long);
        return st == IB_OK ? append(&s->data, &s->n_data, &s->cap_data, "\n", 1, &s->too_long) : st;
    }
    if (name_len == 5 && !memcmp(line, "event", 5)) {
        /* A type longer than the buffer is cut: only "message" and short
         * names mean anything to this client. */
        size_t k = value_len < sizeof s->type - 1 ? value_len : sizeof s->type - 1;
        memcpy(s->type, value, k);
        s->type[k] = '\0';
    }
    return IB_OK;
}

/* Bytes of the stream past its BOM. */
static ib_status feed_lines(ib__sse *s, const char *p, size_t n, ib__sse_event_fn on_event, void *ctx)
{
    size_t i = 0;
    while (i < n) {
        if (s->after_cr && p[i] == '\n') i++; /* the LF of a CRLF split anywhere */
        s->after_cr = false;
        size_t j = i;
        while (j < n && p[j] != '\r' && p[j] != '\n') j++;
        IB_TRY(append(&s->line, &s->n_line, &s->cap_line, p + i, j - i, &s->too_long));
        if (j == n) return IB_OK; /* the line goes on in the next piece */
        s->after_cr = p[j] == '\r';
        i = j + 1;
        IB_TRY(process_line(s, on_event, ctx));
    }
    return IB_OK;
}

ib_status ib__sse_feed(ib__sse *s, const char *bytes, size_t n, ib__sse_event_fn on_event, void *ctx)
{
    if (s->too_long) return IB_ERR_INVALID_ARG;
    size_t i = 0;
    while (!s->bom_seen && i < n) {
        if ((unsigned char)bytes[i] == BOM[s->n_bom]) {
            i++;
            if (++s->n_bom == sizeof BOM) s->bom_seen = true;
            continue;
        }
        /* Not a BOM after all: the bytes matched so far are the stream's. */
        s->bom_seen = true;
        IB_TRY(feed_lines(s, (const char *)BOM, s->n_bom, on_event, ctx));
    }
    return feed_lines(s, bytes + i, n - i, on_event, ctx);
}
