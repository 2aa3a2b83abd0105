/* An incremental reader of server-sent events (src/endpoint/sse.c), as
 * the WHATWG HTML standard's "event stream interpretation" reads them:
 * libcurl hands the body over in pieces of any size, so a line (ended by
 * CR, LF or CRLF, the CRLF possibly split between two pieces) and an
 * event (ended by a blank line) may span any number of them. */
#ifndef IB_ENDPOINT_SSE_H
#define IB_ENDPOINT_SSE_H

#include "base/common.h"

/* The longest line or event's data the reader keeps (a bound of ours:
 * a completion chunk is a few hundred bytes). */
#define IB__SSE_MAX_BYTES (1u << 20)

/* An event: its type ("message" when none was named), its data (the
 * "data:" fields joined by LF, no trailing LF, NUL-terminated). Returns
 * false to stop reading. */
typedef bool (*ib__sse_event_fn)(void *ctx, const char *type, const char *data, size_t len);

typedef struct ib__sse {
    char *line, *data;
    size_t n_line, cap_line, n_data, cap_data;
    char type[64];
    bool after_cr; /* the last byte was a CR: an LF next ends nothing */
    bool bom_seen; /* past the stream's first bytes (a UTF-8 BOM skipped once) */
    size_t n_bom;  /* bytes of a BOM matched so far */
    bool too_long; /* a line or an event passed IB__SSE_MAX_BYTES */
} ib__sse;

void ib__sse_init(ib__sse *s);
void ib__sse_free(ib__sse *s);

/* Reads bytes[0..n): calls on_event for every event completed in them.
 * IB_OK; IB_ERR_INVALID_ARG when a line or an event is too long (the
 * reader then refuses everything after), IB_ERR_NO_MEMORY, or
 * IB_ERR_INTERRUPTED when on_event returned false. An event not ended
 * by a blank line when the stream ends is never dispatched (the
 * standard's rule). */
ib_status ib__sse_feed(ib__sse *s, const char *bytes, size_t n, ib__sse_event_fn on_event, void *ctx);

#endif
