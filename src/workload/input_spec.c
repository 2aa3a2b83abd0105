/* Input value specs ("NAME=SPEC", docs/cli.md --input). This is the syntax
 * only: whether a number fits an input is known once the model says the
 * input's element type (its backend checks). Like ib_shape_parse it is strict, so
 * that a typo is reported instead of measured. */
#include "base/common.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_FORMS "a number, random, random:LO..HI, zeros, ones or @FILE"

/* Whether text is one whole number as strtod reads it, without the
 * leading blanks strtod would skip. */
static bool is_number(const char *text)
{
    if (!*text || isspace((unsigned char)text[0])) return false;
    char *end;
    (void)strtod(text, &end);
    return *end == '\0';
}

/* Copies text[0..len) into dst[cap]; false when it does not fit. */
static bool copy_part(char *dst, size_t cap, const char *text, size_t len)
{
    if (len >= cap) return false;
    memcpy(dst, text, len);
    dst[len] = '\0';
    return true;
}

/* "random:LO..HI": LO and HI numbers, LO <= HI. */
static ib_status parse_range(const char *text, const char *range, ib_input_spec *out, ib_error *err)
{
    const char *dots = strstr(range, "..");
    IB_FAIL_IF(!dots, err, IB_ERR_INVALID_ARG,
               "invalid input '%.200s': expected random:LO..HI (e.g. random:0..30521)", text);
    IB_FAIL_IF(strstr(dots + 1, ".."), err, IB_ERR_INVALID_ARG,
               "invalid input '%.200s': more than one '..' in random:LO..HI", text);
    IB_FAIL_IF(!copy_part(out->lo, sizeof out->lo, range, (size_t)(dots - range)) ||
                   !copy_part(out->hi, sizeof out->hi, dots + 2, strlen(dots + 2)),
               err, IB_ERR_INVALID_ARG, "invalid input '%.200s': a bound is longer than %zu characters", text,
               sizeof out->lo - 1);
    IB_FAIL_IF(!is_number(out->lo), err, IB_ERR_INVALID_ARG,
               "invalid input '%.200s': LO '%s' is not a number", text, out->lo);
    IB_FAIL_IF(!is_number(out->hi), err, IB_ERR_INVALID_ARG,
               "invalid input '%.200s': HI '%s' is not a number", text, out->hi);
    /* NaN compares false both ways: refused here, whatever the type */
    double lo = strtod(out->lo, NULL), hi = strtod(out->hi, NULL);
    IB_FAIL_IF(!(lo <= hi), err, IB_ERR_INVALID_ARG, "invalid input '%.200s': LO %s is not <= HI %s", text,
               out->lo, out->hi);
    out->fill = IB_INPUT_RANGE;
    return IB_OK;
}

static ib_status parse_value(const char *text, const char *spec, ib_input_spec *out, ib_error *err)
{
    IB_FAIL_IF(!*spec, err, IB_ERR_INVALID_ARG, "invalid input '%.200s': the SPEC after '=' is empty (%s)",
               text, SPEC_FORMS);
    IB_FAIL_IF(!copy_part(out->spec, sizeof out->spec, spec, strlen(spec)), err, IB_ERR_INVALID_ARG,
               "invalid input '%.200s': the SPEC is longer than %zu characters", text, sizeof out->spec - 1);
    if (!strcmp(spec, "random")) {
        out->fill = IB_INPUT_RANDOM;
    } else if (!strncmp(spec, "random:", 7)) {
        IB_TRY(parse_range(text, spec + 7, out, err));
    } else if (!strcmp(spec, "zeros")) {
        out->fill = IB_INPUT_ZEROS;
    } else if (!strcmp(spec, "ones")) {
        out->fill = IB_INPUT_ONES;
    } else if (spec[0] == '@') {
        IB_FAIL_IF(!spec[1], err, IB_ERR_INVALID_ARG, "invalid input '%.200s': no file name after '@'", text);
        out->fill = IB_INPUT_FILE;
    } else {
        IB_FAIL_IF(!copy_part(out->lo, sizeof out->lo, spec, strlen(spec)) || !is_number(spec), err,
                   IB_ERR_INVALID_ARG, "invalid input '%.200s': '%.80s' is not %s", text, spec, SPEC_FORMS);
        out->fill = IB_INPUT_CONSTANT;
    }
    return IB_OK;
}

static ib_status parse_spec(const char *text, ib_input_spec *out, ib_error *err)
{
    /* The first '=' splits: file names may hold '=' themselves. */
    const char *eq = strchr(text, '=');
    IB_FAIL_IF(!eq, err, IB_ERR_INVALID_ARG,
               "invalid input '%.200s': expected NAME=SPEC, SPEC %s (e.g. ids=random:0..30521)", text,
               SPEC_FORMS);
    size_t name_len = (size_t)(eq - text);
    IB_FAIL_IF(name_len == 0, err, IB_ERR_INVALID_ARG,
               "invalid input '%.200s': the input name before '=' is empty", text);
    IB_FAIL_IF(!copy_part(out->name, sizeof out->name, text, name_len), err, IB_ERR_INVALID_ARG,
               "invalid input '%.200s': the input name is longer than %zu characters", text,
               sizeof out->name - 1);
    for (const char *c = text; *c; c++)
        IB_FAIL_IF((unsigned char)*c < 0x20 || *c == 0x7f, err, IB_ERR_INVALID_ARG,
                   "invalid input '%.200s': it holds a control character", text);
    return parse_value(text, eq + 1, out, err);
}

ib_status ib_input_spec_parse(const char *text, ib_input_spec *out, ib_error *err)
{
    IB_FAIL_IF(!text || !out, err, IB_ERR_INVALID_ARG, "invalid input: no text");
    memset(out, 0, sizeof *out);
    ib_status st = parse_spec(text, out, err);
    if (st != IB_OK) memset(out, 0, sizeof *out); /* nothing half-parsed */
    return st;
}
