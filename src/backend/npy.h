/* NumPy .npy headers: the part of the format that says what the data is.
 * https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html */
#ifndef IB_BACKEND_NPY_H
#define IB_BACKEND_NPY_H

#include "base/common.h"

/* The most header bytes read: numpy writes a few hundred, version 1.0
 * allows 65535; more is not a header we need to read. */
#define IB__NPY_MAX_HEADER ((size_t)1 << 20)

typedef struct ib__npy_header {
    char descr[8]; /* "<f4", "|u1", ...: little-endian or byte-sized */
    int rank;      /* 0 for a scalar */
    int64_t shape[IB_MAX_RANK];
    size_t data_offset; /* where the values start in the file */
} ib__npy_header;

/* Parses the header at the start of a .npy file, buf[0..len) (the file's
 * first bytes; len may stop anywhere after the header). Strict: the magic,
 * version 1.0, 2.0 or 3.0, a dict of exactly 'descr' (a little-endian or
 * byte-sized type), 'fortran_order' (False only) and 'shape' (a tuple of at
 * most IB_MAX_RANK non-negative integers), ending with a newline. Anything
 * else is IB_ERR_INVALID_ARG with a one-line message. `what` names the
 * file in messages. */
ib_status ib__npy_parse_header(const unsigned char *buf, size_t len, const char *what, ib__npy_header *out,
                               ib_error *err);

#endif
