/* Input values: ib_input_spec_parse (each form, each refusal and its
 * words), the .npy header reader (valid version 1.0/2.0/3.0 headers, each
 * malformed variant), the check of a spec against an input's element type
 * (what fits int64, uint8, uint64, int8, bool, float16, float32), and the
 * values made from it (ranges inclusive, constants, chunks, files). */
#include "backend/npy.h"
#include "backend/onnxruntime/ort.h"
#include "check.h"
#include "onnx_fixtures.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* ib_input_spec_parse                                                       */
/* ------------------------------------------------------------------------ */

static void check_spec(const char *text, const char *name, ib_input_fill fill, const char *spec,
                       const char *lo, const char *hi)
{
    ib_input_spec s;
    ib_error err = { "" };
    ib_status st = ib_input_spec_parse(text, &s, &err);
    CHECK_EQ_INT(st, IB_OK);
    if (st != IB_OK) {
        fprintf(stderr, "  '%s' refused: %s\n", text, err.message);
        return;
    }
    CHECK(strcmp(s.name, name) == 0);
    CHECK_EQ_INT(s.fill, fill);
    CHECK(strcmp(s.spec, spec) == 0);
    CHECK(strcmp(s.lo, lo) == 0);
    CHECK(strcmp(s.hi, hi) == 0);
}

static void check_spec_refused(const char *text, const char *says)
{
    ib_input_spec s;
    ib_error err = { "" };
    CHECK_EQ_INT(ib_input_spec_parse(text, &s, &err), IB_ERR_INVALID_ARG);
    CHECK(strchr(err.message, '\n') == NULL);
    if (!strstr(err.message, says)) {
        CHECK(!"message says what is wrong");
        fprintf(stderr, "  '%s': '%s' lacks '%s'\n", text, err.message, says);
    }
    CHECK(s.name[0] == '\0'); /* nothing half-parsed is left */
}

static void test_spec_forms(void)
{
    check_spec("sr=16000", "sr", IB_INPUT_CONSTANT, "16000", "16000", "");
    check_spec("scale=0.5", "scale", IB_INPUT_CONSTANT, "0.5", "0.5", "");
    check_spec("x=-1e-3", "x", IB_INPUT_CONSTANT, "-1e-3", "-1e-3", "");
    check_spec("x=random", "x", IB_INPUT_RANDOM, "random", "", "");
    check_spec("ids=random:0..30521", "ids", IB_INPUT_RANGE, "random:0..30521", "0", "30521");
    check_spec("x=random:-1.5..2.5", "x", IB_INPUT_RANGE, "random:-1.5..2.5", "-1.5", "2.5");
    check_spec("x=random:3..3", "x", IB_INPUT_RANGE, "random:3..3", "3", "3");
    check_spec("m=zeros", "m", IB_INPUT_ZEROS, "zeros", "", "");
    check_spec("m=ones", "m", IB_INPUT_ONES, "ones", "", "");
    check_spec("x=@data/x.npy", "x", IB_INPUT_FILE, "@data/x.npy", "", "");
    /* the first '=' splits: a file name may hold '=' */
    check_spec("x=@a=b.bin", "x", IB_INPUT_FILE, "@a=b.bin", "", "");
    check_spec("input:0=1", "input:0", IB_INPUT_CONSTANT, "1", "1", "");
}

static void test_spec_refusals(void)
{
    check_spec_refused("x", "expected NAME=SPEC");
    check_spec_refused("=1", "the input name before '=' is empty");
    check_spec_refused("x=", "the SPEC after '=' is empty");
    check_spec_refused("x=abc", "'abc' is not a number, random, random:LO..HI, zeros, ones or @FILE");
    check_spec_refused("x= 1", "is not a number");
    check_spec_refused("x=1 ", "is not a number");
    check_spec_refused("x=zero", "is not a number");
    check_spec_refused("x=random:", "expected random:LO..HI");
    check_spec_refused("x=random:5", "expected random:LO..HI");
    check_spec_refused("x=random:..5", "LO '' is not a number");
    check_spec_refused("x=random:1..", "HI '' is not a number");
    check_spec_refused("x=random:a..5", "LO 'a' is not a number");
    check_spec_refused("x=random:3..1", "LO 3 is not <= HI 1");
    check_spec_refused("x=random:nan..1", "LO nan is not <= HI 1");
    check_spec_refused("x=random:1...5", "more than one '..'");
    check_spec_refused("x=@", "no file name after '@'");
    check_spec_refused("x\t=1", "control character");
    char long_name[200];
    memset(long_name, 'n', 150);
    strcpy(long_name + 150, "=1");
    check_spec_refused(long_name, "the input name is longer than 127 characters");
    ib_error err;
    CHECK_EQ_INT(ib_input_spec_parse(NULL, NULL, &err), IB_ERR_INVALID_ARG);
}

/* ------------------------------------------------------------------------ */
/* .npy headers                                                              */
/* ------------------------------------------------------------------------ */

/* A .npy file of `major`.0 with `dict` as its header, padded as numpy pads
 * it, followed by data_len zero bytes. *len gets its size; malloc'ed. */
static unsigned char *npy_bytes(int major, const char *dict, size_t data_len, size_t *len)
{
    size_t pre = major == 1 ? 10 : 12, hl = strlen(dict) + 1;
    hl += (64 - (pre + hl) % 64) % 64;
    *len = pre + hl + data_len;
    unsigned char *b = calloc(1, *len);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    for (size_t i = 0; i < pre - 8; i++) b[8 + i] = (unsigned char)(hl >> (8 * i));
    memset(b + pre, ' ', hl - 1);
    memcpy(b + pre, dict, strlen(dict));
    b[pre + hl - 1] = '\n';
    return b;
}

static void check_npy(int major, const char *dict, const char *descr, int rank, const int64_t *shape)
{
    size_t len;
    unsigned char *b = npy_bytes(major, dict, 8, &len);
    ib__npy_header h;
    ib_error err = { "" };
    ib_status st = ib__npy_parse_header(b, len, "t.npy", &h, &err);
    CHECK_EQ_INT(st, IB_OK);
    if (st != IB_OK) fprintf(stderr, "  %s refused: %s\n", dict, err.message);
    CHECK(strcmp(h.descr, descr) == 0);
    CHECK_EQ_INT(h.rank, rank);
    for (int i = 0; i < rank; i++) CHECK_EQ_INT(h.shape[i], shape[i]);
    CHECK_EQ_INT(h.data_offset, len - 8);
    CHECK_EQ_INT(h.data_offset % 64, 0);
    free(b);
}

static void check_npy_bytes_refused(const unsigned char *b, size_t len, const char *says)
{
    ib__npy_header h;
    ib_error err = { "" };
    CHECK_EQ_INT(ib__npy_parse_header(b, len, "t.npy", &h, &err), IB_ERR_INVALID_ARG);
    CHECK(strchr(err.message, '\n') == NULL);
    CHECK(strstr(err.message, "t.npy") != NULL);
    if (!strstr(err.message, says)) {
        CHECK(!"npy message says what is wrong");
        fprintf(stderr, "  '%s' lacks '%s'\n", err.message, says);
    }
}

static void check_npy_refused(const char *dict, const char *says)
{
    size_t len;
    unsigned char *b = npy_bytes(1, dict, 0, &len);
    check_npy_bytes_refused(b, len, says);
    free(b);
}

static void test_npy_valid(void)
{
    check_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "<f4", 2,
              (int64_t[]){ 2, 3 });
    check_npy(2, "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", "<i8", 1, (int64_t[]){ 5 });
    check_npy(3, "{'descr': '|u1', 'fortran_order': False, 'shape': (), }", "|u1", 0, NULL);
    check_npy(1, "{\"shape\": (1, 3, 224, 224), \"fortran_order\": False, \"descr\": \"<f2\"}", "<f2", 4,
              (int64_t[]){ 1, 3, 224, 224 });
    check_npy(1, "{'descr':'|b1','fortran_order':False,'shape':(0,4,)}", "|b1", 2, (int64_t[]){ 0, 4 });
}

static void test_npy_malformed(void)
{
    check_npy_refused("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", "big-endian");
    check_npy_refused("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", "Fortran order");
    check_npy_refused("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", "not True or False");
    check_npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (5), }", "write (N,)");
    check_npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': [5], }", "not a tuple");
    check_npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                      "not a non-negative integer");
    check_npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }",
                      "not a tuple of integers");
    check_npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
                      "more dimensions than inferbench supports");
    check_npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (9999999999999,), }", "too large");
    check_npy_refused("{'descr': '<f4', 'shape': (2,), }", "lacks 'descr', 'fortran_order' or 'shape'");
    check_npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "a key other than");
    check_npy_refused("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                      "repeats a key");
    check_npy_refused("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                      "expected a quoted string");
    check_npy_refused("{'descr': '<f', 'fortran_order': False, 'shape': (1,), }", "not a simple type");
    check_npy_refused("{'descr': '<f4x', 'fortran_order': False, 'shape': (1,), }", "not a simple type");
    check_npy_refused("{'descr': '<f\\4', 'fortran_order': False, 'shape': (1,), }", "escape");
    check_npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1,) } x", "text after");
    check_npy_refused("{'descr': '<f4' 'fortran_order': False}", "expected ',' or '}'");
    check_npy_refused("['descr']", "not a dict");
    check_npy_refused("{'descr': '<f4444444", "too long");

    /* unpadded: the text ends inside the string */
    const unsigned char unclosed[] = "\x93NUMPY\x01\x00\x04\x00{'a\n";
    check_npy_bytes_refused(unclosed, sizeof unclosed - 1, "not closed");

    size_t len;
    unsigned char *b = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 0, &len);
    check_npy_bytes_refused(b, 9, "magic");
    check_npy_bytes_refused(b, 40, "ends inside the header");
    b[len - 1] = ' ';
    check_npy_bytes_refused(b, len, "does not end with a newline");
    b[len - 1] = '\n';
    b[20] = '\0';
    check_npy_bytes_refused(b, len, "NUL");
    b[6] = 4;
    ib__npy_header h;
    ib_error err = { "" };
    CHECK_EQ_INT(ib__npy_parse_header(b, len, "t.npy", &h, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "version 4.0: only 1.0, 2.0 and 3.0") != NULL);
    b[6] = 1;
    b[7] = 1;
    CHECK_EQ_INT(ib__npy_parse_header(b, len, "t.npy", &h, &err), IB_ERR_INVALID_ARG);
    b[7] = 0;
    b[1] = 'X';
    check_npy_bytes_refused(b, len, "magic");
    free(b);
    /* version 2.0: a 4-byte length past 1 MB */
    b = npy_bytes(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 0, &len);
    b[11] = 0x10;
    check_npy_bytes_refused(b, len, "larger than 1 MB");
    free(b);
}

/* ------------------------------------------------------------------------ */
/* Specs against element types                                               */
/* ------------------------------------------------------------------------ */

static ib__ort_port make_port(const char *name, ONNXTensorElementDataType type, int64_t n)
{
    ib__ort_port p = { 0 };
    p.name = strdup(name);
    p.onnx_type = ONNX_TYPE_TENSOR;
    p.type = type;
    p.rank = 1;
    p.model_dims[0] = p.dims[0] = n;
    return p;
}

/* Plans `text` for one input of `type` (n elements); *err gets the message. */
static ib_status plan(ONNXTensorElementDataType type, int64_t n, const char *text, ib__ort_port *out,
                      ib_error *err)
{
    ib_input_spec s;
    *out = make_port("in", type, n);
    IB_TRY(ib_input_spec_parse(text, &s, err));
    return ib__ort_values_plan(out, 1, &s, 1, err);
}

static void check_fits(ONNXTensorElementDataType type, const char *text)
{
    ib__ort_port p;
    ib_error err = { "" };
    ib_status st = plan(type, 4, text, &p, &err);
    CHECK_EQ_INT(st, IB_OK);
    if (st != IB_OK) fprintf(stderr, "  %s refused: %s\n", text, err.message);
    free(p.name);
    free(p.values.path);
}

static void check_does_not_fit(ONNXTensorElementDataType type, const char *text, const char *says)
{
    ib__ort_port p;
    ib_error err = { "" };
    CHECK_EQ_INT(plan(type, 4, text, &p, &err), IB_ERR_INVALID_ARG);
    CHECK(strchr(err.message, '\n') == NULL);
    if (!strstr(err.message, says)) {
        CHECK(!"type message says what is wrong");
        fprintf(stderr, "  %s: '%s' lacks '%s'\n", text, err.message, says);
    }
    free(p.name);
    free(p.values.path);
}

static void test_type_fit(void)
{
    const ONNXTensorElementDataType I64 = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,
                                    U8 = ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8,
                                    I8 = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,
                                    U64 = ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64,
                                    U32 = ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32,
                                    BOOL = ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,
                                    F16 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
                                    F32 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    check_fits(I64, "in=16000");
    check_fits(I64, "in=-9223372036854775808");
    check_fits(I64, "in=9223372036854775807");
    check_fits(I64, "in=1e3");
    check_fits(I64, "in=random:0..30521");
    check_fits(U8, "in=255");
    check_fits(U8, "in=random:0..255");
    check_fits(I8, "in=-128");
    check_fits(U64, "in=18446744073709551615");
    check_fits(BOOL, "in=ones");
    check_fits(F16, "in=65504");
    check_fits(F32, "in=random:-3.5..1e30");
    check_fits(F32, "in=zeros");

    check_does_not_fit(I64, "in=3.5", "input 'in' is int64 and 3.5 is not an integer");
    check_does_not_fit(I64, "in=nan", "input 'in' is int64 and nan is not an integer");
    check_does_not_fit(I64, "in=inf", "input 'in' is int64 and inf is not an integer");
    check_does_not_fit(I64, "in=9223372036854775808",
                       "is out of its range -9223372036854775808..9223372036854775807");
    check_does_not_fit(I64, "in=-9223372036854775809", "out of its range");
    check_does_not_fit(I64, "in=99999999999999999999999", "out of its range");
    check_does_not_fit(I64, "in=1e30", "out of its range");
    check_does_not_fit(U8, "in=300", "input 'in' is uint8 and 300 is out of its range 0..255");
    check_does_not_fit(U8, "in=-1", "input 'in' is uint8 and -1 is out of its range 0..255");
    check_does_not_fit(U8, "in=random:0..256", "256 is out of its range 0..255");
    check_does_not_fit(U32, "in=-1", "is uint32 and -1 is out of its range 0..4294967295");
    check_does_not_fit(U64, "in=18446744073709551616", "out of its range 0..18446744073709551615");
    check_does_not_fit(I8, "in=-129", "is int8 and -129 is out of its range -128..127");
    check_does_not_fit(BOOL, "in=2", "is bool and 2 is out of its range 0..1");
    check_does_not_fit(F16, "in=70000", "is float16 and 70000 is out of its range (+-65504)");
    check_does_not_fit(F32, "in=1e39", "is float32 and 1e39 is out of its range");
    check_does_not_fit(F32, "in=nan", "is float32 and nan is not a finite number");
    check_does_not_fit(F32, "in=random:0..inf", "inf is not a finite number");
    /* beyond a double's 53 bits: compared exactly, not as doubles */
    check_does_not_fit(I64, "in=random:9007199254740993..9007199254740992",
                       "LO 9007199254740993 is not <= HI");
}

static void test_names(void)
{
    ib__ort_port ports[2] = { make_port("ids", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 4),
                              make_port("mask", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 4) };
    ib_input_spec s[2];
    ib_error err = { "" };
    CHECK(ib_input_spec_parse("nope=1", &s[0], NULL) == IB_OK);
    CHECK_EQ_INT(ib__ort_values_plan(ports, 2, s, 1, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "--input names input 'nope', but the model's inputs are: ids, mask") != NULL);
    CHECK(ib_input_spec_parse("ids=1", &s[0], NULL) == IB_OK);
    CHECK(ib_input_spec_parse("ids=2", &s[1], NULL) == IB_OK);
    CHECK_EQ_INT(ib__ort_values_plan(ports, 2, s, 2, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "--input gives input 'ids' twice") != NULL);
    CHECK(ib_input_spec_parse("mask=zeros", &s[1], NULL) == IB_OK);
    CHECK_EQ_INT(ib__ort_values_plan(ports, 2, s, 2, &err), IB_OK);
    CHECK(strcmp(ports[0].values.text, "1") == 0 && strcmp(ports[1].values.text, "zeros") == 0);
    CHECK_EQ_INT(ib__ort_values_plan(ports, 2, NULL, 0, &err), IB_OK);
    CHECK(strcmp(ports[0].values.text, "random") == 0 && strcmp(ports[1].values.text, "random") == 0);
    free(ports[0].name);
    free(ports[1].name);
}

/* ------------------------------------------------------------------------ */
/* The values made                                                           */
/* ------------------------------------------------------------------------ */

#define N 20000

static void test_generated_values(void)
{
    ib__ort_port p;
    ib_error err;
    /* integers: the whole inclusive range, nothing outside */
    CHECK(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, N, "in=random:-3..3", &p, &err) == IB_OK);
    int64_t *v = malloc(N * sizeof *v);
    CHECK(ib__ort_values_make(&p.values, p.type, v, N, 42, 0, &err) == IB_OK);
    int seen[7] = { 0 };
    bool inside = true;
    for (int i = 0; i < N; i++) {
        inside = inside && v[i] >= -3 && v[i] <= 3;
        if (v[i] >= -3 && v[i] <= 3) seen[v[i] + 3]++;
    }
    CHECK(inside);
    for (int k = 0; k < 7; k++) CHECK(seen[k] > N / 7 / 2);
    /* in chunks: the same numbers */
    int64_t *w = malloc(N * sizeof *w);
    CHECK(ib__ort_values_make(&p.values, p.type, w, 777, 42, 0, &err) == IB_OK);
    CHECK(ib__ort_values_make(&p.values, p.type, w + 777, N - 777, 42, 777, &err) == IB_OK);
    CHECK(memcmp(v, w, N * sizeof *v) == 0);
    /* another seed: other numbers */
    CHECK(ib__ort_values_make(&p.values, p.type, w, N, 43, 0, &err) == IB_OK);
    CHECK(memcmp(v, w, N * sizeof *v) != 0);
    free(p.name);

    /* uint8 over its whole range, both ends reached */
    CHECK(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, N, "in=random:0..255", &p, &err) == IB_OK);
    unsigned char *u = (unsigned char *)w;
    CHECK(ib__ort_values_make(&p.values, p.type, u, N, 42, 0, &err) == IB_OK);
    bool lo = false, hi = false;
    for (int i = 0; i < N; i++) {
        lo = lo || u[i] == 0;
        hi = hi || u[i] == 255;
    }
    CHECK(lo && hi);
    free(p.name);

    /* floats in [2, 3) */
    CHECK(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, N, "in=random:2..3", &p, &err) == IB_OK);
    double *d = (double *)w;
    CHECK(ib__ort_values_make(&p.values, p.type, d, N, 42, 0, &err) == IB_OK);
    double mn = 10, mx = -10;
    for (int i = 0; i < N; i++) {
        mn = d[i] < mn ? d[i] : mn;
        mx = d[i] > mx ? d[i] : mx;
    }
    CHECK(mn >= 2 && mn < 2.01 && mx < 3 && mx > 2.99);
    free(p.name);

    /* constants: every element, in the type's own bits */
    CHECK(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, 4, "in=ones", &p, &err) == IB_OK);
    uint16_t h[4];
    CHECK(ib__ort_values_make(&p.values, p.type, h, 4, 42, 0, &err) == IB_OK);
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(h[i], 0x3C00);
    free(p.name);
    CHECK(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, 4, "in=-2", &p, &err) == IB_OK);
    int16_t s16[4];
    CHECK(ib__ort_values_make(&p.values, p.type, s16, 4, 42, 0, &err) == IB_OK);
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(s16[i], -2);
    free(p.name);
    CHECK(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, 4, "in=18446744073709551615", &p, &err) == IB_OK);
    uint64_t u64[4];
    CHECK(ib__ort_values_make(&p.values, p.type, u64, 4, 42, 0, &err) == IB_OK);
    for (int i = 0; i < 4; i++) CHECK(u64[i] == UINT64_MAX);
    free(p.name);
    /* zeros for the pitfall row */
    float f[4] = { 1, 1, 1, 1 };
    CHECK(ib__ort_values_make(&ib__ort_zeros, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, f, 4, 42, 0, &err) ==
          IB_OK);
    for (int i = 0; i < 4; i++) CHECK(f[i] == 0.0f);
    free(v);
    free(w);
}

static void test_file_values(void)
{
    char *dir = fx_tmpdir();
    int64_t ids[4] = { 5, -1, 30521, 0 };
    char *bin = fx_write(dir, "ids.bin", ids, sizeof ids);
    size_t len;
    unsigned char *b =
        npy_bytes(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }", sizeof ids, &len);
    memcpy(b + len - sizeof ids, ids, sizeof ids);
    char *npy = fx_write(dir, "ids.npy", b, len);
    free(b);
    b = npy_bytes(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", 4, &len);
    b[len - 2] = 2; /* not a bool */
    char *bools = fx_write(dir, "bools.npy", b, len);
    free(b);

    char spec[600];
    ib__ort_port p;
    ib_error err = { "" };
    int64_t got[4];
    snprintf(spec, sizeof spec, "in=@%s", bin);
    CHECK(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 4, spec, &p, &err) == IB_OK);
    CHECK(ib__ort_values_check(&p, 1, &err) == IB_OK);
    CHECK(ib__ort_values_make(&p.values, p.type, got, 4, 42, 0, &err) == IB_OK);
    CHECK(memcmp(got, ids, sizeof ids) == 0);
    CHECK(ib__ort_values_make(&p.values, p.type, got, 2, 42, 2, &err) == IB_OK); /* a chunk */
    CHECK(got[0] == 30521 && got[1] == 0);
    free(p.name);
    free(p.values.path);

    snprintf(spec, sizeof spec, "in=@%s", npy);
    CHECK(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 4, spec, &p, &err) == IB_OK);
    CHECK(ib__ort_values_check(&p, 1, &err) == IB_OK);
    memset(got, 0, sizeof got);
    CHECK(ib__ort_values_make(&p.values, p.type, got, 4, 42, 0, &err) == IB_OK);
    CHECK(memcmp(got, ids, sizeof ids) == 0);
    /* a batch dimension that follows the batch: batch 2 is shape (2,) */
    p.follows_batch[0] = true;
    CHECK_EQ_INT(ib__ort_values_check(&p, 2, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "has shape (2,) at batch 2 but the file holds (4,)") != NULL);
    free(p.name);
    free(p.values.path);
    /* raw: the size at batch 2 */
    snprintf(spec, sizeof spec, "in=@%s", bin);
    CHECK(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 4, spec, &p, &err) == IB_OK);
    p.follows_batch[0] = true;
    CHECK_EQ_INT(ib__ort_values_check(&p, 2, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "16 bytes of values, but the file holds 32 bytes") != NULL);
    free(p.name);
    free(p.values.path);

    snprintf(spec, sizeof spec, "in=@%s", npy);
    CHECK_EQ_INT(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, 4, spec, &p, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "input 'in' is int32 (numpy '<i4') but the file holds '<i8'") != NULL);
    free(p.name);
    CHECK_EQ_INT(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, 4, spec, &p, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "bfloat16, which .npy has no dtype for") != NULL);
    free(p.name);

    snprintf(spec, sizeof spec, "in=@%s", bools);
    CHECK(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, 4, spec, &p, &err) == IB_OK);
    unsigned char bv[4];
    CHECK_EQ_INT(ib__ort_values_make(&p.values, p.type, bv, 4, 42, 0, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "element 2 is 2, not a bool") != NULL);
    free(p.name);
    free(p.values.path);

    snprintf(spec, sizeof spec, "in=@%s/none.bin", dir);
    CHECK_EQ_INT(plan(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 4, spec, &p, &err), IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "No such file") != NULL);
    free(p.name);

    free(bin);
    free(npy);
    free(bools);
    fx_cleanup(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_spec_forms);
    RUN(test_spec_refusals);
    RUN(test_npy_valid);
    RUN(test_npy_malformed);
    RUN(test_type_fit);
    RUN(test_names);
    RUN(test_generated_values);
    RUN(test_file_values);
    return check_summary("test_inputs");
}
