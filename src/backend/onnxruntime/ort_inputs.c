/* The values the inputs are filled with: each input's ib_input_spec checked
 * against its element type (does 300 fit a uint8? does the .npy file hold
 * int64?), then the values made, generated or read from the file, outside
 * any timed region. docs/cli.md (--input) and docs/method.md (why random). */
#include "backend/npy.h"
#include "backend/onnxruntime/ort.h"
#include "base/numeric.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

const ib__ort_values ib__ort_zeros = { .constant = true, .text = "zeros" };

/* ------------------------------------------------------------------------ */
/* Types                                                                     */
/* ------------------------------------------------------------------------ */

static bool is_float_type(ONNXTensorElementDataType t)
{
    return t == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT || t == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE ||
           t == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 || t == ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
}

static double float_type_max(ONNXTensorElementDataType t)
{
    switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return 65504.0;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: return 3.3895313892515355e38;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return FLT_MAX;
    default: return DBL_MAX;
    }
}

static bool is_signed_type(ONNXTensorElementDataType t)
{
    return t == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 || t == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 ||
           t == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 || t == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
}

/* An integer as sign and magnitude: every int64 and uint64 fits. */
typedef struct integer {
    bool neg;
    uint64_t mag;
} integer;

/* The range of an integer type: -min_mag..max (bool: 0..1). */
static void int_range(ONNXTensorElementDataType t, uint64_t *min_mag, uint64_t *max)
{
    size_t bits = ib__ort_type_size(t) * 8;
    if (t == ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL) {
        *min_mag = 0;
        *max = 1;
    } else if (is_signed_type(t)) {
        *min_mag = (uint64_t)1 << (bits - 1);
        *max = *min_mag - 1;
    } else {
        *min_mag = 0;
        *max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    }
}

static uint64_t int_bits(integer v) { return v.neg ? (uint64_t)0 - v.mag : v.mag; }

static bool int_le(integer a, integer b)
{
    if (a.neg != b.neg) return a.neg || (a.mag == 0 && b.mag == 0);
    return a.neg ? a.mag >= b.mag : a.mag <= b.mag;
}

/* ------------------------------------------------------------------------ */
/* Checking numbers against a type                                           */
/* ------------------------------------------------------------------------ */

/* Reads a decimal integer exactly ("-5", "+30521"); false when text is not
 * only a sign and digits, or passes 2^64 - 1 (*overflow then). */
static bool read_decimal(const char *text, integer *out, bool *overflow)
{
    const char *p = text;
    out->neg = *p == '-';
    if (*p == '-' || *p == '+') p++;
    if (!*p) return false;
    out->mag = 0;
    *overflow = false;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        unsigned d = (unsigned)(*p - '0');
        if (out->mag > (UINT64_MAX - d) / 10)
            *overflow = true;
        else
            out->mag = out->mag * 10 + d;
    }
    return true;
}

static ib_status int_value(const ib__ort_port *p, const char *spec, const char *text, integer *out,
                           ib_error *err)
{
    const char *type = ib__ort_type_name(p->type);
    uint64_t min_mag, max;
    int_range(p->type, &min_mag, &max);
    bool overflow = false;
    if (!read_decimal(text, out, &overflow)) {
        /* "1e3" is an integer too; "3.5", "nan" and "inf" are not */
        double d = strtod(text, NULL);
        IB_FAIL_IF(!isfinite(d) || d != floor(d), err, IB_ERR_INVALID_ARG,
                   "--input %s=%s: input '%s' is %s and %s is not an integer", p->name, spec, p->name, type,
                   text);
        overflow = fabs(d) >= 18446744073709551616.0;
        out->neg = d < 0;
        out->mag = overflow ? 0 : (uint64_t)fabs(d);
    }
    bool fits = !overflow && (out->neg ? out->mag <= min_mag : out->mag <= max);
    if (fits) return IB_OK;
    if (min_mag == 0)
        return ib__fail(err, IB_ERR_INVALID_ARG,
                        "--input %s=%s: input '%s' is %s and %s is out of its range 0..%llu", p->name, spec,
                        p->name, type, text, (unsigned long long)max);
    return ib__fail(err, IB_ERR_INVALID_ARG,
                    "--input %s=%s: input '%s' is %s and %s is out of its range -%llu..%llu", p->name, spec,
                    p->name, type, text, (unsigned long long)min_mag, (unsigned long long)max);
}

static ib_status float_value(const ib__ort_port *p, const char *spec, const char *text, double *out,
                             ib_error *err)
{
    double d = strtod(text, NULL), max = float_type_max(p->type);
    IB_FAIL_IF(!isfinite(d), err, IB_ERR_INVALID_ARG,
               "--input %s=%s: input '%s' is %s and %s is not a finite number", p->name, spec, p->name,
               ib__ort_type_name(p->type), text);
    IB_FAIL_IF(fabs(d) > max, err, IB_ERR_INVALID_ARG,
               "--input %s=%s: input '%s' is %s and %s is out of its range (+-%g)", p->name, spec, p->name,
               ib__ort_type_name(p->type), text, max);
    *out = d;
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* Planning                                                                  */
/* ------------------------------------------------------------------------ */

/* numpy's name of a type, "" where numpy has none (bfloat16). */
static const char *npy_descr(ONNXTensorElementDataType t)
{
    switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return "<f4";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return "<f8";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return "<f2";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return "<i8";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return "<i4";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16: return "<i2";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return "|i1";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return "<u8";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return "<u4";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return "<u2";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return "|u1";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return "|b1";
    default: return "";
    }
}

static bool has_npy_suffix(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".npy") == 0;
}

/* Reads a .npy file's header and checks its dtype against p's type. */
static ib_status plan_npy(const ib__ort_port *p, int fd, const char *path, ib__ort_values *v, ib_error *err)
{
    const char *want = npy_descr(p->type);
    IB_FAIL_IF(!want[0], err, IB_ERR_INVALID_ARG,
               "--input %s=@%s: input '%s' is %s, which .npy has no dtype for: give its raw "
               "little-endian values in a file not named .npy",
               p->name, path, p->name, ib__ort_type_name(p->type));
    size_t cap = IB__NPY_MAX_HEADER + 12, len = 0;
    unsigned char *buf = malloc(cap);
    IB_FAIL_IF(!buf, err, IB_ERR_NO_MEMORY, "out of memory");
    ssize_t k;
    while (len < cap && (k = pread(fd, buf + len, cap - len, (off_t)len)) > 0) len += (size_t)k;
    ib__npy_header h;
    ib_status st = ib__npy_parse_header(buf, len, path, &h, err);
    free(buf);
    IB_TRY(st);
    /* byte-sized types have no byte order: '|u1' and '<u1' are the same */
    bool same = !strcmp(h.descr + 1, want + 1) && (h.descr[0] == '<' || ib__ort_type_size(p->type) == 1);
    IB_FAIL_IF(!same, err, IB_ERR_INVALID_ARG,
               "--input %s=@%s: input '%s' is %s (numpy '%s') but the file holds '%s'", p->name, path,
               p->name, ib__ort_type_name(p->type), want, h.descr);
    v->npy = true;
    v->data_offset = h.data_offset;
    v->npy_rank = h.rank;
    memcpy(v->npy_shape, h.shape, sizeof h.shape);
    return IB_OK;
}

static ib_status plan_file(const ib__ort_port *p, const char *path, ib__ort_values *v, ib_error *err)
{
    int fd = open(path, O_RDONLY);
    IB_FAIL_IF(fd < 0, err, IB_ERR_INVALID_ARG, "--input %s=@%s: cannot open '%s': %s", p->name, path, path,
               strerror(errno));
    struct stat sb;
    ib_status st = IB_OK;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        st = ib__fail(err, IB_ERR_INVALID_ARG, "--input %s=@%s: '%s' is not a regular file", p->name, path,
                      path);
    if (st == IB_OK && has_npy_suffix(path)) st = plan_npy(p, fd, path, v, err);
    close(fd);
    IB_TRY(st);
    v->from_file = true;
    v->path = strdup(path);
    IB_FAIL_IF(!v->path, err, IB_ERR_NO_MEMORY, "out of memory");
    return IB_OK;
}

static ib_status plan_range(const ib__ort_port *p, const ib_input_spec *s, ib__ort_values *v, ib_error *err)
{
    if (is_float_type(p->type)) {
        IB_TRY(float_value(p, s->spec, s->lo, &v->flo, err));
        IB_TRY(float_value(p, s->spec, s->hi, &v->fhi, err));
        v->constant = v->flo == v->fhi;
        return IB_OK;
    }
    integer lo, hi;
    IB_TRY(int_value(p, s->spec, s->lo, &lo, err));
    IB_TRY(int_value(p, s->spec, s->hi, &hi, err));
    /* the parser compared them as doubles; large integers need this */
    IB_FAIL_IF(!int_le(lo, hi), err, IB_ERR_INVALID_ARG, "--input %s=%s: LO %s is not <= HI %s", p->name,
               s->spec, s->lo, s->hi);
    v->ulo = int_bits(lo);
    v->span = int_bits(hi) - v->ulo;
    v->constant = v->span == 0;
    return IB_OK;
}

/* A constant: every element `text`. */
static ib_status plan_constant(const ib__ort_port *p, const char *spec, const char *text, ib__ort_values *v,
                               ib_error *err)
{
    v->constant = true;
    if (is_float_type(p->type)) return float_value(p, spec, text, &v->flo, err);
    integer x;
    IB_TRY(int_value(p, spec, text, &x, err));
    v->ulo = int_bits(x);
    return IB_OK;
}

static ib_status plan_one(ib__ort_port *p, const ib_input_spec *s, ib_error *err)
{
    ib__ort_values *v = &p->values;
    free(v->path);
    memset(v, 0, sizeof *v);
    ib__strlcpy(v->text, s ? s->spec : "random", sizeof v->text);
    switch (s ? s->fill : IB_INPUT_RANDOM) {
    case IB_INPUT_RANDOM:
        /* integers: {0, 1}, so that token ids index any vocabulary and
         * masks stay masks */
        v->pm1 = is_float_type(p->type);
        v->span = 1;
        return IB_OK;
    case IB_INPUT_RANGE: return plan_range(p, s, v, err);
    case IB_INPUT_CONSTANT: return plan_constant(p, s->spec, s->lo, v, err);
    case IB_INPUT_ZEROS: return plan_constant(p, s->spec, "0", v, err);
    case IB_INPUT_ONES: return plan_constant(p, s->spec, "1", v, err);
    case IB_INPUT_FILE: return plan_file(p, s->spec + 1, v, err);
    }
    return ib__fail(err, IB_ERR_INVALID_ARG, "--input %s: unknown kind of values %d", s->name, (int)s->fill);
}

static ib_status check_names(const ib__ort_port *inputs, size_t n_inputs, const ib_input_spec *specs,
                             size_t n_specs, ib_error *err)
{
    for (size_t s = 0; s < n_specs; s++) {
        bool known = false;
        for (size_t i = 0; i < n_inputs && !known; i++) known = !strcmp(inputs[i].name, specs[s].name);
        if (!known) {
            char names[300];
            ib__ort_port_names(inputs, n_inputs, names, sizeof names);
            return ib__fail(err, IB_ERR_INVALID_ARG,
                            "--input names input '%s', but the model's inputs are: %s", specs[s].name, names);
        }
        for (size_t t = 0; t < s; t++)
            IB_FAIL_IF(!strcmp(specs[t].name, specs[s].name), err, IB_ERR_INVALID_ARG,
                       "--input gives input '%s' twice", specs[s].name);
    }
    return IB_OK;
}

ib_status ib__ort_values_plan(ib__ort_port *inputs, size_t n_inputs, const ib_input_spec *specs,
                              size_t n_specs, ib_error *err)
{
    IB_FAIL_IF(n_specs > 0 && !specs, err, IB_ERR_INVALID_ARG, "%zu input specs but no array", n_specs);
    IB_TRY(check_names(inputs, n_inputs, specs, n_specs, err));
    for (size_t i = 0; i < n_inputs; i++) {
        const ib_input_spec *s = NULL;
        for (size_t k = 0; k < n_specs && !s; k++)
            if (!strcmp(specs[k].name, inputs[i].name)) s = &specs[k];
        IB_TRY(plan_one(&inputs[i], s, err));
    }
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* Files against the bound shape                                             */
/* ------------------------------------------------------------------------ */

/* "(2, 3)" */
static void format_shape(const int64_t *dims, int rank, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "(");
    for (int d = 0; d < rank && used < cap; d++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%lld", d ? ", " : "", (long long)dims[d]);
    if (used < cap) snprintf(buf + used, cap - used, rank == 1 ? ",)" : ")");
}

ib_status ib__ort_values_check(const ib__ort_port *p, int64_t batch, ib_error *err)
{
    const ib__ort_values *v = &p->values;
    if (!v->from_file) return IB_OK;
    int64_t shape[IB_MAX_RANK];
    ib__ort_port_shape(p, batch, shape);
    char want[160];
    format_shape(shape, p->rank, want, sizeof want);
    if (v->npy) {
        bool same = v->npy_rank == p->rank;
        for (int d = 0; same && d < p->rank; d++) same = v->npy_shape[d] == shape[d];
        char has[160];
        format_shape(v->npy_shape, v->npy_rank, has, sizeof has);
        IB_FAIL_IF(!same, err, IB_ERR_INVALID_ARG,
                   "--input %s=@%s: input '%s' has shape %s at batch %lld but the file holds %s "
                   "(a file holds the values of one batch)",
                   p->name, v->path, p->name, want, (long long)batch, has);
    }
    size_t bytes = 0;
    struct stat sb;
    IB_FAIL_IF(!ib__ort_port_bytes(p, batch, &bytes), err, IB_ERR_INVALID_ARG,
               "--input %s=@%s: input '%s' is too large", p->name, v->path, p->name);
    IB_FAIL_IF(stat(v->path, &sb) != 0, err, IB_ERR_INVALID_ARG, "--input %s=@%s: cannot read '%s': %s",
               p->name, v->path, v->path, strerror(errno));
    uint64_t need = (uint64_t)v->data_offset + bytes;
    IB_FAIL_IF(
        (uint64_t)sb.st_size != need, err, IB_ERR_INVALID_ARG,
        "--input %s=@%s: input '%s' is %s of shape %s at batch %lld, %zu bytes of values, but the file "
        "holds %lld bytes%s",
        p->name, v->path, p->name, ib__ort_type_name(p->type), want, (long long)batch, bytes,
        (long long)sb.st_size - (long long)v->data_offset, v->npy ? " after its header" : "");
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* Making values                                                             */
/* ------------------------------------------------------------------------ */

/* One element: floats converted to the type, integers as the low bytes of
 * their two's complement bits, little-endian whatever the host. */
static void store(unsigned char *out, ONNXTensorElementDataType type, size_t size, double f, uint64_t bits)
{
    switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: {
        float x = (float)f;
        memcpy(out, &x, sizeof x);
        return;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: memcpy(out, &f, sizeof f); return;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: bits = ib__float_to_half((float)f); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: bits = ib__float_to_bfloat16((float)f); break;
    default: break;
    }
    for (size_t k = 0; k < size; k++) out[k] = (unsigned char)(bits >> (8 * k));
}

static void generate(const ib__ort_values *v, ONNXTensorElementDataType type, unsigned char *out, size_t n,
                     uint64_t seed, size_t first)
{
    /* splitmix64's state after k draws is seed + k * increment: element i
     * of the tensor is draw i wherever a chunk starts. */
    uint64_t s = seed + IB__SPLITMIX64_STEP * (uint64_t)first;
    size_t size = ib__ort_type_size(type);
    bool floats = is_float_type(type);
    for (size_t i = 0; i < n; i++, out += size) {
        if (v->constant) {
            store(out, type, size, v->flo, v->ulo);
        } else if (floats && v->pm1) {
            store(out, type, size, ib__uniform_pm1(&s), 0);
        } else if (floats) {
            double u = (double)(ib__splitmix64(&s) >> 11) * 0x1p-53; /* [0, 1) */
            store(out, type, size, v->flo + (v->fhi - v->flo) * u, 0);
        } else {
            uint64_t draw = ib__splitmix64(&s);
            /* span + 1 wraps to 0 for the whole 64-bit range: every draw */
            uint64_t width = v->span + 1;
            store(out, type, size, 0, v->ulo + (width ? draw % width : draw));
        }
    }
}

/* Reads elements [first, first + n) of the file's tensor into dst. */
static ib_status read_values(const ib__ort_values *v, ONNXTensorElementDataType type, unsigned char *dst,
                             size_t n, size_t first, ib_error *err)
{
    size_t size = ib__ort_type_size(type), want = n * size, got = 0;
    int fd = open(v->path, O_RDONLY);
    IB_FAIL_IF(fd < 0, err, IB_ERR_IO, "cannot open '%s': %s", v->path, strerror(errno));
    off_t at = (off_t)(v->data_offset + first * size);
    ssize_t k = 0;
    while (got < want && (k = pread(fd, dst + got, want - got, at + (off_t)got)) > 0) got += (size_t)k;
    int saved = errno;
    close(fd);
    IB_FAIL_IF(k < 0, err, IB_ERR_IO, "cannot read '%s': %s", v->path, strerror(saved));
    IB_FAIL_IF(got < want, err, IB_ERR_IO, "'%s' became shorter while it was read", v->path);
    if (type != ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL) return IB_OK;
    /* any other byte is not a bool the runtime can read */
    for (size_t i = 0; i < n; i++)
        IB_FAIL_IF(dst[i] > 1, err, IB_ERR_INVALID_ARG, "'%s': element %zu is %u, not a bool (0 or 1)",
                   v->path, first + i, dst[i]);
    return IB_OK;
}

ib_status ib__ort_values_make(const ib__ort_values *v, ONNXTensorElementDataType type, void *dst, size_t n,
                              uint64_t seed, size_t first, ib_error *err)
{
    if (v->from_file) return read_values(v, type, dst, n, first, err);
    generate(v, type, dst, n, seed, first);
    return IB_OK;
}

void ib__ort_fill(void *dst, ONNXTensorElementDataType type, size_t n, uint64_t seed, size_t first)
{
    const ib__ort_values random = { .pm1 = is_float_type(type), .span = 1 };
    generate(&random, type, dst, n, seed, first);
}
