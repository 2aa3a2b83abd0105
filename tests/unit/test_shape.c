/* ib_shape_parse: what it accepts, what it refuses and how it says so;
 * ib_model_options_init's defaults. */
#include "check.h"
#include "inferbench.h"

#include <string.h>

static void check_valid(const char *text, const char *name, int rank, const int64_t *dims)
{
    ib_shape_override s;
    ib_error err = { "" };
    ib_status st = ib_shape_parse(text, &s, &err);
    CHECK_EQ_INT(st, IB_OK);
    if (st != IB_OK) {
        fprintf(stderr, "  '%s' refused: %s\n", text, err.message);
        return;
    }
    CHECK(strcmp(s.name, name) == 0);
    CHECK_EQ_INT(s.rank, rank);
    for (int i = 0; i < rank; i++) CHECK_EQ_INT(s.dims[i], dims[i]);
}

/* Refused with INVALID_ARG, a one-line message that quotes the text (or
 * its first 200 characters) and, when given, holds `says`. */
static void check_invalid(const char *text, const char *says)
{
    ib_shape_override s;
    ib_error err = { "" };
    ib_status st = ib_shape_parse(text, &s, &err);
    CHECK_EQ_INT(st, IB_ERR_INVALID_ARG);
    CHECK(err.message[0] != '\0');
    CHECK(strchr(err.message, '\n') == NULL);
    if (text && !strpbrk(text, "\n\r")) { /* those become spaces */
        char quoted[220];
        snprintf(quoted, sizeof quoted, "'%.200s", text);
        CHECK(strstr(err.message, quoted) != NULL);
    }
    if (says && !strstr(err.message, says)) {
        CHECK(!"message says what is wrong");
        fprintf(stderr, "  '%s': '%s' lacks '%s'\n", text ? text : "(null)", err.message, says);
    }
}

static void test_valid(void)
{
    check_valid("x:1", "x", 1, (int64_t[]){ 1 });
    check_valid("input:1x3x224x224", "input", 4, (int64_t[]){ 1, 3, 224, 224 });
    check_valid("input_ids:8x128", "input_ids", 2, (int64_t[]){ 8, 128 });
    /* TensorFlow-style names hold ':' themselves: the last one splits. */
    check_valid("input:0:1x3", "input:0", 2, (int64_t[]){ 1, 3 });
    check_valid("a b:2", "a b", 1, (int64_t[]){ 2 });
    check_valid("x:1x2x3x4x5x6x7x8", "x", 8, (int64_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 });
    check_valid("x:2147483648", "x", 1, (int64_t[]){ 2147483648LL });
    check_valid("x:007", "x", 1, (int64_t[]){ 7 });
    char name127[140];
    memset(name127, 'n', 127);
    strcpy(name127 + 127, ":4");
    ib_shape_override s;
    CHECK_EQ_INT(ib_shape_parse(name127, &s, NULL), IB_OK);
    CHECK_EQ_INT(strlen(s.name), 127);
}

static void test_invalid(void)
{
    check_invalid("", "expected NAME:D1xD2x");
    check_invalid("x", "expected NAME:D1xD2x");
    check_invalid("1x3x224x224", "expected NAME:D1xD2x");
    check_invalid(":", "name");
    check_invalid(":1x2", "name");
    check_invalid("x:", "no dimensions");
    check_invalid("x:0", "dimension 1 is 0");
    check_invalid("x:1x0", "dimension 2 is 0");
    check_invalid("x:000", "dimension 1 is 0");
    check_invalid("x:-1", "dimension 1 is not a positive decimal integer");
    check_invalid("x:+1", "not a positive decimal integer");
    check_invalid("x:1x", "dimension 2 is empty");
    check_invalid("x:x1", "dimension 1 is empty");
    check_invalid("x:1xx2", "dimension 2 is empty");
    check_invalid("x:99999999999", "larger than 2147483648");
    check_invalid("x:2147483649", "larger than 2147483648");
    check_invalid("x:99999999999999999999999999", "larger than 2147483648");
    check_invalid("x:1x2x3x4x5x6x7x8x9", "more than 8 dimensions");
    check_invalid("x: 1", "not a positive decimal integer");
    check_invalid("x:1 ", "not a positive decimal integer");
    check_invalid("x:1x 2", "dimension 2 is not");
    check_invalid("a:b", "not a positive decimal integer");
    check_invalid("x:1X2", "not a positive decimal integer");
    check_invalid("x:1,2", "not a positive decimal integer");
    check_invalid("x:1*2", "not a positive decimal integer");
    check_invalid("x:0x10", "dimension 1 is 0");
    check_invalid("x:1.5", "not a positive decimal integer");
    check_invalid("x:1e3", "not a positive decimal integer");
    check_invalid("x:1:", "no dimensions");
    check_invalid("x\n:1", "control character");
    check_invalid("x\t:1", "control character");
    check_invalid(NULL, NULL);

    char name128[140];
    memset(name128, 'n', 128);
    strcpy(name128 + 128, ":4");
    check_invalid(name128, "longer than 127");

    /* A very long text is quoted in part and the message stays one line. */
    char lng[2000];
    memset(lng, 'y', sizeof lng - 1);
    lng[sizeof lng - 1] = '\0';
    check_invalid(lng, "expected NAME");
}

static void test_options_init(void)
{
    ib_model_options o;
    memset(&o, 0x5a, sizeof o);
    ib_model_options_init(&o);
    CHECK_EQ_INT(o.device, IB_DEVICE_AUTO);
    CHECK_EQ_INT(o.device_id, 0);
    CHECK_EQ_INT(o.batch, 0); /* not given */
    CHECK_EQ_INT(o.seed, 42);
    CHECK(o.shapes == NULL);
    CHECK_EQ_INT(o.n_shapes, 0);
    CHECK(o.options == NULL);
    CHECK_EQ_INT(o.n_options, 0);
    CHECK_EQ_INT(o.device_memory_limit_bytes, 0);
    CHECK_EQ_INT(o.host_memory_limit_bytes, 0);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_valid);
    RUN(test_invalid);
    RUN(test_options_init);
    return check_summary("test_shape");
}
