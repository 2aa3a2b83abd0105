/* Shape overrides ("NAME:D1xD2x...") and the defaults of the model options.
 * The parser is strict: what it accepts is exactly what the message in the
 * header promises, so that a typo is reported instead of measured. */
#include "base/common.h"

#include <string.h>

/* The largest dimension accepted: 2^31. Larger values are typos in
 * practice, and every product of a few of them still fits in int64. */
#define MAX_DIM ((int64_t)1 << 31)

void ib_model_options_init(ib_model_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->device = IB_DEVICE_AUTO;
    opts->device_id = 0;
    opts->batch = 0; /* not given: 1, or what --shape gives the batch dimension */
    opts->seed = 42;
}

/* Parses one dimension text[0..len): a positive decimal integer <= MAX_DIM,
 * digits only. Returns -1 when it is not one. */
static int64_t parse_dim(const char *text, size_t len)
{
    if (len == 0) return -1;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (c - '0');
        if (v > MAX_DIM) return -1; /* stops before int64 could overflow */
    }
    return v >= 1 ? v : -1;
}

/* Says what is wrong with dimension text[0..len) in words. */
static const char *dim_problem(const char *text, size_t len)
{
    if (len == 0) return "is empty";
    for (size_t i = 0; i < len; i++)
        if (text[i] < '0' || text[i] > '9') return "is not a positive decimal integer";
    return strspn(text, "0") >= len ? "is 0, must be positive" : "is larger than 2147483648";
}

ib_status ib_shape_parse(const char *text, ib_shape_override *out, ib_error *err)
{
    IB_FAIL_IF(!text || !out, err, IB_ERR_INVALID_ARG, "invalid shape: no text");
    memset(out, 0, sizeof *out);

    /* Names may hold ':' themselves (TensorFlow exports name inputs
     * "input:0"), dimensions never do: the last ':' separates them. */
    const char *colon = strrchr(text, ':');
    IB_FAIL_IF(!colon, err, IB_ERR_INVALID_ARG,
               "invalid shape '%.200s': expected NAME:D1xD2x... (e.g. input:1x3x224x224)", text);
    size_t name_len = (size_t)(colon - text);
    IB_FAIL_IF(name_len == 0, err, IB_ERR_INVALID_ARG,
               "invalid shape '%.200s': the input name before ':' is empty", text);
    IB_FAIL_IF(name_len >= sizeof out->name, err, IB_ERR_INVALID_ARG,
               "invalid shape '%.200s': the input name is longer than %zu characters", text,
               sizeof out->name - 1);
    for (size_t i = 0; i < name_len; i++)
        IB_FAIL_IF((unsigned char)text[i] < 0x20 || text[i] == 0x7f, err, IB_ERR_INVALID_ARG,
                   "invalid shape '%.200s': the input name holds a control character", text);

    const char *p = colon + 1;
    IB_FAIL_IF(*p == '\0', err, IB_ERR_INVALID_ARG, "invalid shape '%.200s': no dimensions after ':'", text);
    int rank = 0;
    for (;;) {
        size_t len = strcspn(p, "x");
        IB_FAIL_IF(rank == IB_MAX_RANK, err, IB_ERR_INVALID_ARG,
                   "invalid shape '%.200s': more than %d dimensions", text, IB_MAX_RANK);
        int64_t v = parse_dim(p, len);
        IB_FAIL_IF(v < 0, err, IB_ERR_INVALID_ARG, "invalid shape '%.200s': dimension %d %s", text, rank + 1,
                   dim_problem(p, len));
        out->dims[rank++] = v;
        if (p[len] == '\0') break;
        p += len + 1; /* past the 'x' */
    }
    memcpy(out->name, text, name_len);
    out->name[name_len] = '\0';
    out->rank = rank;
    return IB_OK;
}
