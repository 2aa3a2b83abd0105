/* A strict reader of .npy headers (npy.h). The header is a Python dict
 * literal written by numpy; we read the subset numpy writes and refuse the
 * rest with a message, never guess: a file read wrongly would be measured
 * silently on values nobody meant. */
#include "backend/npy.h"

#include <string.h>

static const unsigned char MAGIC[6] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };

/* Larger dimensions are not data anyone has; products of a few of them
 * still fit in int64 (the caller checks the product). */
#define MAX_DIM ((int64_t)1 << 40)

/* A cursor over the dict text. */
typedef struct cursor {
    const char *p, *end;
    const char *what;
    ib_error *err;
} cursor;

static void skip_blanks(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t')) c->p++;
}

static ib_status bad(cursor *c, const char *why)
{
    return ib__fail(c->err, IB_ERR_INVALID_ARG, "'%.300s' is not a valid .npy file: %s", c->what, why);
}

static bool take(cursor *c, char ch)
{
    skip_blanks(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A Python string literal in ' or " quotes, no escapes, into dst[cap]. */
static ib_status read_string(cursor *c, char *dst, size_t cap)
{
    skip_blanks(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return bad(c, "expected a quoted string");
    char quote = *c->p++;
    size_t n = 0;
    for (; c->p < c->end && *c->p != quote; c->p++) {
        if (*c->p == '\\' || (unsigned char)*c->p < 0x20)
            return bad(c, "a string holds an escape or a control character");
        if (n + 1 >= cap) return bad(c, "a string is too long");
        dst[n++] = *c->p;
    }
    if (c->p >= c->end) return bad(c, "a string is not closed");
    c->p++;
    dst[n] = '\0';
    return IB_OK;
}

static bool take_word(cursor *c, const char *word)
{
    skip_blanks(c);
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return false;
    c->p += n;
    return true;
}

static ib_status read_dim(cursor *c, int64_t *out)
{
    skip_blanks(c);
    int64_t v = 0;
    const char *start = c->p;
    for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++) {
        v = v * 10 + (*c->p - '0');
        if (v > MAX_DIM) return bad(c, "a dimension is too large");
    }
    if (c->p == start) return bad(c, "a dimension is not a non-negative integer");
    *out = v;
    return IB_OK;
}

/* "()", "(5,)", "(2, 3)", "(2, 3,)"; "(5)" is the integer 5 in Python,
 * not a tuple, and is refused as numpy refuses it. */
static ib_status read_shape(cursor *c, ib__npy_header *out)
{
    if (!take(c, '(')) return bad(c, "'shape' is not a tuple");
    out->rank = 0;
    if (take(c, ')')) return IB_OK;
    for (;;) {
        if (out->rank == IB_MAX_RANK)
            return bad(c, "'shape' has more dimensions than inferbench supports (8)");
        IB_TRY(read_dim(c, &out->shape[out->rank++]));
        bool comma = take(c, ',');
        if (take(c, ')')) {
            if (out->rank == 1 && !comma) return bad(c, "'shape' (N) is not a tuple: write (N,)");
            return IB_OK;
        }
        if (!comma) return bad(c, "'shape' is not a tuple of integers");
    }
}

/* Byte-sized types may say '|' (numpy writes '|u1'), the others must be
 * little-endian ('<'); the type letter and size are the caller's to
 * match. */
static ib_status check_descr(cursor *c, const char *descr)
{
    if (descr[0] == '>') return bad(c, "its data is big-endian: only little-endian data is read");
    if ((descr[0] != '<' && descr[0] != '|') || !descr[1] || !descr[2])
        return bad(c, "'descr' is not a simple type such as '<f4'");
    for (const char *p = descr + 2; *p; p++)
        if (*p < '0' || *p > '9') return bad(c, "'descr' is not a simple type such as '<f4'");
    return IB_OK;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static ib_status read_entry(cursor *c, unsigned *seen, ib__npy_header *out)
{
    char key[16];
    IB_TRY(read_string(c, key, sizeof key));
    if (!take(c, ':')) return bad(c, "expected ':' after a key");
    unsigned bit = !strcmp(key, "descr")           ? KEY_DESCR
                   : !strcmp(key, "fortran_order") ? KEY_FORTRAN
                   : !strcmp(key, "shape")         ? KEY_SHAPE
                                                   : 0;
    if (!bit) return bad(c, "the header has a key other than 'descr', 'fortran_order' and 'shape'");
    if (*seen & bit) return bad(c, "the header repeats a key");
    *seen |= bit;
    if (bit == KEY_DESCR) {
        IB_TRY(read_string(c, out->descr, sizeof out->descr));
        return check_descr(c, out->descr);
    }
    if (bit == KEY_SHAPE) return read_shape(c, out);
    if (take_word(c, "False")) return IB_OK;
    if (take_word(c, "True")) return bad(c, "it is in Fortran order: only C order is read");
    return bad(c, "'fortran_order' is not True or False");
}

static ib_status read_dict(cursor *c, ib__npy_header *out)
{
    unsigned seen = 0;
    if (!take(c, '{')) return bad(c, "the header is not a dict");
    while (!take(c, '}')) {
        IB_TRY(read_entry(c, &seen, out));
        if (!take(c, ',')) {
            if (!take(c, '}')) return bad(c, "expected ',' or '}' in the header");
            break;
        }
    }
    if (seen != (KEY_DESCR | KEY_FORTRAN | KEY_SHAPE))
        return bad(c, "the header lacks 'descr', 'fortran_order' or 'shape'");
    skip_blanks(c);
    if (c->p != c->end) return bad(c, "text after the header's dict");
    return IB_OK;
}

static uint32_t read_le(const unsigned char *p, int bytes)
{
    uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

ib_status ib__npy_parse_header(const unsigned char *buf, size_t len, const char *what, ib__npy_header *out,
                               ib_error *err)
{
    memset(out, 0, sizeof *out);
    cursor c = { NULL, NULL, what ? what : "(npy)", err };
    if (len < 10 || memcmp(buf, MAGIC, sizeof MAGIC) != 0) return bad(&c, "no \\x93NUMPY magic");
    unsigned major = buf[6], minor = buf[7];
    if (major < 1 || major > 3 || minor != 0)
        return ib__fail(err, IB_ERR_INVALID_ARG,
                        "'%.300s': .npy format version %u.%u: only 1.0, 2.0 and 3.0 are read", c.what, major,
                        minor);
    /* 1.0: a 2-byte header length; 2.0 and 3.0: 4 bytes */
    size_t field = major == 1 ? 2 : 4, start = 8 + field;
    if (len < start) return bad(&c, "the file ends inside the header");
    size_t header_len = read_le(buf + 8, (int)field);
    if (header_len > IB__NPY_MAX_HEADER) return bad(&c, "the header is larger than 1 MB");
    if (len - start < header_len) return bad(&c, "the file ends inside the header");
    const char *text = (const char *)buf + start;
    if (header_len == 0 || text[header_len - 1] != '\n')
        return bad(&c, "the header does not end with a newline");
    if (memchr(text, '\0', header_len)) return bad(&c, "the header holds a NUL byte");
    c.p = text;
    c.end = text + header_len - 1;
    /* numpy pads with spaces before the newline */
    IB_TRY(read_dict(&c, out));
    out->data_offset = start + header_len;
    return IB_OK;
}
