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

/* The next line of text at *pos (its length without the newline in
 * *line_len, *pos past it), counted in *line_no; refused when it holds a
 * NUL byte. Both files' parsers read their lines through it. */
static ib_status next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *line_len,
                           size_t *line_no, ib_error *err)
{
    const char *nl = memchr(text + *pos, '\n', len - *pos);
    *line_len = nl ? (size_t)(nl - (text + *pos)) : len - *pos;
    *line = text + *pos;
    *pos += *line_len + 1;
    ++*line_no;
    IB_FAIL_IF(memchr(*line, '\0', *line_len), err, IB_ERR_INVALID_ARG,
               "line %zu: a NUL byte (not a text file)", *line_no);
    return IB_OK;
}

static ib_status parse_lines(const char *text, size_t len, double **times, size_t *n, ib_error *err)
{
    size_t cap = 0, line_no = 0, line_len;
    const char *line;
    for (size_t pos = 0; pos < len;) {
        IB_TRY(next_line(text, len, &pos, &line, &line_len, &line_no, err));
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

/* ------------------------------------------------------------------------ */
/* A generative model's request trace (ib_gen_trace_parse)                   */
/* ------------------------------------------------------------------------ */

/* Longer than any request line a person or the Azure trace writes. */
#define MAX_REQUEST_LINE 128
#define AZURE_HEADER "TIMESTAMP,ContextTokens,GeneratedTokens"

/* A token count: digits only, 1..IB_GEN_SERVE_MAX_TOKENS. */
static bool parse_count(const char *s, size_t len, int32_t *out)
{
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r')) len--;
    while (len > 0 && (*s == ' ' || *s == '\t')) s++, len--;
    if (len == 0 || len > 8) return false;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = (int32_t)v;
    return v >= 1 && v <= IB_GEN_SERVE_MAX_TOKENS;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400, yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* n digits at s as a number, or -1. */
static int64_t digits(const char *s, size_t n)
{
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* "2023-11-16 18:15:46.6805900" (the Azure trace's TIMESTAMP): its day
 * (from 1970) and its ms within the day, apart so that a difference of two
 * keeps its microseconds; false when it is not one. */
static bool parse_timestamp(const char *s, size_t len, int64_t *day, double *ms)
{
    if (len < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' ||
        s[16] != ':')
        return false;
    int64_t y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2), h = digits(s + 11, 2),
            mi = digits(s + 14, 2), sec = digits(s + 17, 2);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 ||
        sec > 60)
        return false;
    double frac = 0, unit = 0.1;
    if (len > 19) {
        if (s[19] != '.' || len == 20) return false;
        for (size_t i = 20; i < len; i++, unit /= 10) {
            if (s[i] < '0' || s[i] > '9') return false;
            frac += (s[i] - '0') * unit;
        }
    }
    *day = days_from_civil(y, mo, d);
    *ms = ((double)(h * 3600 + mi * 60 + sec) + frac) * 1000.0;
    return true;
}

static bool blank(char c) { return c == ' ' || c == '\t'; }

/* The three fields of a request line: at commas (Azure: at commas only,
 * its time holds a blank), else at commas or blanks, a comma with blanks
 * around it one separator. */
static bool split3(const char *line, size_t len, bool azure, const char *f[3], size_t flen[3])
{
    const char *seps = azure ? "," : ", \t";
    size_t k = 0, i = 0;
    while (i < len && !azure && blank(line[i])) i++;
    while (i < len && k < 3) {
        size_t start = i;
        while (i < len && !strchr(seps, line[i])) i++;
        f[k] = line + start;
        flen[k++] = i - start;
        while (i < len && !azure && blank(line[i])) i++;
        if (i < len && line[i] == ',' && k < 3) i++;
        while (i < len && !azure && blank(line[i])) i++;
    }
    return k == 3 && i == len && flen[0] > 0 && flen[1] > 0 && flen[2] > 0;
}

/* A request of line; an Azure row's arrival in ms from the midnight of
 * *first_day (the first row's day, set by it). */
static ib_status parse_request(const char *line, size_t len, bool azure, int64_t *first_day, size_t line_no,
                               ib_gen_request_spec *r, ib_error *err)
{
    while (len > 0 && line[len - 1] == '\r') len--;
    const char *f[3];
    size_t flen[3];
    bool fields = len < MAX_REQUEST_LINE && split3(line, len, azure, f, flen);
    int64_t day = 0;
    bool when = fields && (azure ? parse_timestamp(f[0], flen[0], &day, &r->arrival_ms)
                                 : parse_time(f[0], flen[0], &r->arrival_ms));
    if (when && azure) {
        if (*first_day < 0) *first_day = day;
        r->arrival_ms += (double)(day - *first_day) * 86400000.0;
    }
    IB_FAIL_IF(
        !when, err, IB_ERR_INVALID_ARG,
        azure ? "line %zu: expected TIMESTAMP,ContextTokens,GeneratedTokens (2023-11-16 "
                "18:15:46.68,374,44)"
              : "line %zu: expected an arrival in ms (>= 0), prompt tokens and output tokens (12.5 512 128)",
        line_no);
    IB_FAIL_IF(!parse_count(f[1], flen[1], &r->prompt_tokens) ||
                   !parse_count(f[2], flen[2], &r->output_tokens),
               err, IB_ERR_INVALID_ARG, "line %zu: token counts are whole numbers from 1 to %d", line_no,
               IB_GEN_SERVE_MAX_TOKENS);
    return IB_OK;
}

static ib_status push_request(ib_gen_request_spec **rs, size_t *n, size_t *cap, const ib_gen_request_spec *r,
                              ib_error *err)
{
    if (*n == *cap) {
        size_t grown = *cap ? *cap * 2 : 256;
        ib_gen_request_spec *t = realloc(*rs, grown * sizeof **rs);
        IB_FAIL_IF(!t, err, IB_ERR_NO_MEMORY, "out of memory");
        *rs = t;
        *cap = grown;
    }
    (*rs)[(*n)++] = *r;
    return IB_OK;
}

/* Whether the line is the Azure trace's header (any other TIMESTAMP line
 * is refused rather than read as a request). */
static ib_status azure_header(const char *line, size_t len, size_t line_no, bool *azure, ib_error *err)
{
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ')) len--;
    *azure = len >= 9 && !memcmp(line, "TIMESTAMP", 9);
    IB_FAIL_IF(*azure && (len != strlen(AZURE_HEADER) || memcmp(line, AZURE_HEADER, len)), err,
               IB_ERR_INVALID_ARG, "line %zu: the Azure trace's header is " AZURE_HEADER, line_no);
    return IB_OK;
}

static ib_status parse_requests(const char *text, size_t len, ib_gen_request_spec **rs, size_t *n,
                                ib_error *err)
{
    size_t cap = 0, line_no = 0, line_len;
    const char *line;
    bool first = true, azure = false;
    int64_t first_day = -1;
    for (size_t pos = 0; pos < len;) {
        IB_TRY(next_line(text, len, &pos, &line, &line_len, &line_no, err));
        if (blank_or_comment(line, line_len)) continue;
        if (first) {
            first = false;
            IB_TRY(azure_header(line, line_len, line_no, &azure, err));
            if (azure) continue;
        }
        ib_gen_request_spec r;
        IB_TRY(parse_request(line, line_len, azure, &first_day, line_no, &r, err));
        IB_FAIL_IF(*n > 0 && r.arrival_ms < (*rs)[*n - 1].arrival_ms, err, IB_ERR_INVALID_ARG,
                   "line %zu: this request arrives before the previous one: arrivals must not decrease",
                   line_no);
        IB_FAIL_IF(*n == IB__SERVE_MAX_REQUESTS, err, IB_ERR_INVALID_ARG, "more than %d requests",
                   IB__SERVE_MAX_REQUESTS);
        IB_TRY(push_request(rs, n, &cap, &r, err));
    }
    IB_FAIL_IF(*n == 0, err, IB_ERR_INVALID_ARG,
               "no requests (one a line: arrival ms, prompt tokens, output tokens)");
    /* The Azure trace's times are of the day: the first request arrives at 0. */
    double origin = (*rs)[0].arrival_ms;
    for (size_t i = 0; azure && i < *n; i++) (*rs)[i].arrival_ms -= origin;
    return IB_OK;
}

ib_status ib_gen_trace_parse(const char *text, size_t len, ib_gen_request_spec **out, size_t *n,
                             ib_error *err)
{
    *out = NULL;
    *n = 0;
    IB_FAIL_IF(!text && len > 0, err, IB_ERR_INVALID_ARG, "no text");
    ib_status st = parse_requests(text, len, out, n, err);
    if (st != IB_OK) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return st;
}
