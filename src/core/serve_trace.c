/* The schedule file of serve --arrivals FILE: outside input, parsed
 * strictly (tests/fuzz/fuzz_schedule.c). */
#include "base/common.h"
#include "core/serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Longer than any number a person writes: a longer line is refused. */
#define MAX_LINE 64

static bool blank_or_comment(const char *line, size_t len)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) i++;
    return i == len || line[i] == '#';
}

/* A plain decimal: digits, '.', an exponent; no sign but the exponent's,
 * no hex, no inf or nan (which strtod would take). */
static bool parse_time(const char *line, size_t len, double *ms)
{
    while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r')) len--;
    while (len > 0 && (*line == ' ' || *line == '\t')) line++, len--;
    if (len == 0 || len >= MAX_LINE) return false;
    char buf[MAX_LINE];
    memcpy(buf, line, len);
    buf[len] = '\0';
    if (strspn(buf, "0123456789.eE+-") != len || !strchr("0123456789.", buf[0])) return false;
    char *end;
    *ms = strtod(buf, &end);
    return *end == '\0' && end != buf && isfinite(*ms) && *ms >= 0;
}

static ib_status push(double **times, size_t *n, size_t *cap, double v, ib_error *err)
{
    if (*n == *cap) {
        size_t grown = *cap ? *cap * 2 : 256;
        double *t = realloc(*times, grown * sizeof(double));
        IB_FAIL_IF(!t, err, IB_ERR_NO_MEMORY, "out of memory");
        *times = t;
        *cap = grown;
    }
    (*times)[(*n)++] = v;
    return IB_OK;
}

static ib_status parse_lines(const char *text, size_t len, double **times, size_t *n, ib_error *err)
{
    size_t cap = 0, line_no = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t line_len = nl ? (size_t)(nl - (text + pos)) : len - pos;
        const char *line = text + pos;
        pos += line_len + 1;
        line_no++;
        if (memchr(line, '\0', line_len))
            return ib__fail(err, IB_ERR_INVALID_ARG, "line %zu: a NUL byte (not a text file)", line_no);
        if (blank_or_comment(line, line_len)) continue;
        double ms;
        IB_FAIL_IF(!parse_time(line, line_len, &ms), err, IB_ERR_INVALID_ARG,
                   "line %zu: expected an arrival time in ms (a number >= 0, e.g. 12.5)", line_no);
        IB_FAIL_IF(*n > 0 && ms < (*times)[*n - 1], err, IB_ERR_INVALID_ARG,
                   "line %zu: %g ms comes before the previous arrival (%g ms): the times must not decrease",
                   line_no, ms, (*times)[*n - 1]);
        IB_FAIL_IF(*n == IB__SERVE_MAX_REQUESTS, err, IB_ERR_INVALID_ARG, "more than %d arrivals",
                   IB__SERVE_MAX_REQUESTS);
        IB_TRY(push(times, n, &cap, ms, err));
    }
    IB_FAIL_IF(*n == 0, err, IB_ERR_INVALID_ARG, "no arrival times (one time in ms per line)");
    return IB_OK;
}

ib_status ib_serve_trace_parse(const char *text, size_t len, double **times_ms, size_t *n, ib_error *err)
{
    *times_ms = NULL;
    *n = 0;
    IB_FAIL_IF(!text && len > 0, err, IB_ERR_INVALID_ARG, "no text");
    ib_status st = parse_lines(text, len, times_ms, n, err);
    if (st != IB_OK) {
        free(*times_ms);
        *times_ms = NULL;
        *n = 0;
    }
    return st;
}
