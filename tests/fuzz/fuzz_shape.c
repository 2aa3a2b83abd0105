/* Fuzz target: ib_shape_parse on the input as a NUL-terminated string.
 * Beyond "no crash", it checks what the header promises of an accepted
 * shape (a name, 1..IB_MAX_RANK dimensions in 1..2^31) and that printing an
 * accepted shape and parsing it again gives the same shape. */
#include "fuzz.h"
#include "inferbench.h"

#include <inttypes.h>
#include <string.h>

static void check_accepted(const ib_shape_override *s)
{
    size_t name_len = strnlen(s->name, sizeof s->name);
    FUZZ_ASSERT(name_len > 0 && name_len < sizeof s->name);
    FUZZ_ASSERT(s->rank >= 1 && s->rank <= IB_MAX_RANK);
    for (int i = 0; i < s->rank; i++) FUZZ_ASSERT(s->dims[i] >= 1 && s->dims[i] <= ((int64_t)1 << 31));

    /* name + ':' + 8 dims of at most 10 digits and their 'x' */
    char text[sizeof s->name + 1 + IB_MAX_RANK * 11 + 1];
    int n = snprintf(text, sizeof text, "%s:", s->name);
    for (int i = 0; i < s->rank; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%" PRId64, i ? "x" : "", s->dims[i]);
    FUZZ_ASSERT(n > 0 && (size_t)n < sizeof text);

    ib_shape_override again;
    ib_error err;
    FUZZ_ASSERT(ib_shape_parse(text, &again, &err) == IB_OK);
    FUZZ_ASSERT(strcmp(again.name, s->name) == 0 && again.rank == s->rank);
    for (int i = 0; i < s->rank; i++) FUZZ_ASSERT(again.dims[i] == s->dims[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    ib_shape_override s;
    ib_error err;
    memset(&err, 0x5a, sizeof err); /* the message must be terminated by the parser */
    ib_status st = ib_shape_parse(text, &s, &err);
    if (st == IB_OK) {
        check_accepted(&s);
    } else {
        FUZZ_ASSERT(st == IB_ERR_INVALID_ARG);
        size_t len = strnlen(err.message, sizeof err.message);
        FUZZ_ASSERT(len > 0 && len < sizeof err.message);
        FUZZ_ASSERT(strchr(err.message, '\n') == NULL || memchr(text, '\n', size) != NULL);
    }
    free(text);
    return 0;
}
