/* Fuzz target: ib__npy_parse_header on the bytes as the start of a .npy
 * file. Beyond "no crash", it checks what npy.h promises of an accepted
 * header: the values start inside the bytes given, after the header; the
 * type is little-endian or byte-sized; at most IB_MAX_RANK dimensions, none
 * negative. A refusal is IB_ERR_INVALID_ARG with a terminated one-line
 * message. */
#include "backend/npy.h"
#include "fuzz.h"

#include <string.h>

static void check_accepted(const ib__npy_header *h, size_t size)
{
    FUZZ_ASSERT(h->data_offset > 10 && h->data_offset <= size);
    FUZZ_ASSERT(h->descr[0] == '<' || h->descr[0] == '|');
    FUZZ_ASSERT(strnlen(h->descr, sizeof h->descr) < sizeof h->descr);
    FUZZ_ASSERT(h->rank >= 0 && h->rank <= IB_MAX_RANK);
    for (int i = 0; i < h->rank; i++) FUZZ_ASSERT(h->shape[i] >= 0 && h->shape[i] <= ((int64_t)1 << 40));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly `size` bytes, so that ASan sees any read past them */
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    ib__npy_header h;
    ib_error err;
    memset(&err, 0x5a, sizeof err); /* the message must be terminated by the parser */
    ib_status st = ib__npy_parse_header(buf, size, "fuzz.npy", &h, &err);
    if (st == IB_OK) {
        check_accepted(&h, size);
    } else {
        FUZZ_ASSERT(st == IB_ERR_INVALID_ARG);
        size_t len = strnlen(err.message, sizeof err.message);
        FUZZ_ASSERT(len > 0 && len < sizeof err.message);
        FUZZ_ASSERT(strchr(err.message, '\n') == NULL);
    }
    free(buf);
    return 0;
}
