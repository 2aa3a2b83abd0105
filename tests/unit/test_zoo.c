/* The built-in model zoo: exact parameter counts, the weights the generated
 * models really store (derived here independently from the architectures),
 * that every model loads and runs in ONNX Runtime's CPU execution provider
 * in float32 and float16 with the expected output shapes, and the error
 * paths of the registry and the ONNX inspector. */
#include "check.h"
#include "inferbench.h"
#include "onnxruntime_c_api.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- stored weights, derived from the architectures ------------------------
 * A folded BatchNorm over C channels is counted by torchvision as 2*C
 * parameters (weight, bias) but stored as a C-element conv bias: each BN
 * stores C fewer elements than it counts. So stored = params - (sum of the
 * channels of every BN). */

/* MLP 256-512-512-10: three Linear layers, weights and biases, all stored. */
static int64_t mlp_params(void)
{
    return (256 * 512 + 512) + (512 * 512 + 512) + (512 * 10 + 10); /* 399,370 */
}

/* ResNet-50: bn1 (64), then per bottleneck of width w: bn1 (w), bn2 (w),
 * bn3 (4w), plus the downsample BN (4w) in the first block of each stage
 * (stage 1 too: 64 -> 256 channels). */
static int64_t resnet50_bn_channels(void)
{
    static const int64_t width[4] = { 64, 128, 256, 512 }, blocks[4] = { 3, 4, 6, 3 };
    int64_t sum = 64;
    for (int s = 0; s < 4; s++) sum += blocks[s] * (width[s] + width[s] + 4 * width[s]) + 4 * width[s];
    return sum; /* 26,560 */
}

/* MobileNetV2: stem BN (32); per block with expansion t from c_in to c_out:
 * expand BN (t*c_in, absent when t == 1), depthwise BN (t*c_in), project BN
 * (c_out); last conv BN (1280). */
static int64_t mobilenet_v2_bn_channels(void)
{
    static const int64_t cfg[7][3] = { { 1, 16, 1 }, { 6, 24, 2 },  { 6, 32, 3 }, { 6, 64, 4 },
                                       { 6, 96, 3 }, { 6, 160, 3 }, { 6, 320, 1 } }; /* t, c, n */
    int64_t sum = 32, c_in = 32;
    for (int i = 0; i < 7; i++) {
        for (int64_t r = 0; r < cfg[i][2]; r++) {
            int64_t hidden = cfg[i][0] * c_in;
            sum += (cfg[i][0] != 1 ? hidden : 0) + hidden + cfg[i][1];
            c_in = cfg[i][1];
        }
    }
    return sum + 1280;
}

/* EfficientNet-B0: as MobileNetV2 (expand, depthwise, project BNs; stem 32,
 * head 1280). The squeeze-excitation convs have true biases: no BN. All the
 * expanded widths are multiples of 8 already. */
static int64_t efficientnet_b0_bn_channels(void)
{
    static const int64_t cfg[7][3] = { { 1, 16, 1 },  { 6, 24, 2 },  { 6, 40, 2 }, { 6, 80, 3 },
                                       { 6, 112, 3 }, { 6, 192, 4 }, { 6, 320, 1 } }; /* t, c, n */
    int64_t sum = 32, c_in = 32;
    for (int i = 0; i < 7; i++) {
        for (int64_t r = 0; r < cfg[i][2]; r++) {
            int64_t expanded = cfg[i][0] * c_in;
            sum += (cfg[i][0] != 1 ? expanded : 0) + expanded + cfg[i][1];
            c_in = cfg[i][1];
        }
    }
    return sum + 1280;
}

/* BERT-base MACs per item at sequence S = 128: per layer, four HxH
 * projections and the two FFN products on S tokens, and Q.K^T and P.V
 * (S x S x H over all heads); the pooler's HxH on one token. */
static double bert_base_gmacs(void)
{
    const double S = 128, H = 768, F = 3072;
    return (12 * (S * (4 * H * H + 2 * H * F) + 2 * S * S * H) + H * H) / 1e9;
}

/* ---- the cases -------------------------------------------------------------- */

enum { BATCH = -1 }; /* in dims: the batch dimension */

typedef struct io_spec {
    const char *name;
    int rank;
    int64_t dims[4];
} io_spec;

typedef struct model_case {
    const char *name;
    int64_t params;
    int64_t stored;          /* -1: only checked against params */
    double gmacs, gmacs_tol; /* torchvision's table, or derived */
    bool int_input;          /* int64 token ids instead of floats */
    io_spec input;
    int n_outputs;
    io_spec outputs[2];
    int max_batch; /* run at batch 1..max_batch */
} model_case;

static model_case cases[5];

static void init_cases(void)
{
    const io_spec image = { "input", 4, { BATCH, 3, 224, 224 } };
    const io_spec logits = { "logits", 2, { BATCH, 1000 } };
    cases[0] = (model_case){ "mlp",
                             399370,
                             mlp_params(),
                             398336e-9,
                             1e-12,
                             false,
                             { "input", 2, { BATCH, 256 } },
                             1,
                             { { "logits", 2, { BATCH, 10 } } },
                             2 };
    cases[1] =
        (model_case){ "resnet-50", 25557032, 25557032 - resnet50_bn_channels(), 4.09, 0.005, false, image, 1,
                      { logits },  2 };
    cases[2] = (model_case){
        "mobilenet-v2", 3504872, 3504872 - mobilenet_v2_bn_channels(), 0.30, 0.005, false, image, 1,
        { logits },     1
    };
    cases[3] = (model_case){
        "efficientnet-b0", 5288548, 5288548 - efficientnet_b0_bn_channels(), 0.39, 0.005, false, image, 1,
        { logits },        1
    };
    /* BERT has no BatchNorm: every parameter is stored. */
    cases[4] = (model_case){ "bert-base",
                             109482240,
                             109482240,
                             bert_base_gmacs(),
                             1e-9,
                             true,
                             { "input_ids", 2, { BATCH, 128 } },
                             2,
                             { { "last_hidden_state", 3, { BATCH, 128, 768 } },
                               { "pooler_output", 2, { BATCH, 768 } } },
                             1 };
}

/* ---- ONNX Runtime ---------------------------------------------------------------- */

static const OrtApi *ort;
static OrtEnv *ort_env;

/* Checks an OrtStatus: prints and counts a failure, releases it. */
static bool ort_ok(OrtStatus *status, const char *what)
{
    check_count++;
    if (!status) return true;
    check_failures++;
    fprintf(stderr, "ORT %s: %s\n", what, ort->GetErrorMessage(status));
    ort->ReleaseStatus(status);
    return false;
}

static float half_to_float(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    float v = exp == 0    ? ldexpf((float)mant, -24)
              : exp == 31 ? (mant ? NAN : INFINITY)
                          : ldexpf((float)(mant | 0x400), exp - 25);
    return (h & 0x8000) ? -v : v;
}

/* float16 bits of k/1024, |k| <= 1024 (exact: 11 significant bits), built
 * by hand so that the test does not reuse the library's converter. 0x3C00
 * is 1.0. */
static uint16_t float_to_half_exact(float v)
{
    if (v == 0.0f) return 0;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    float a = fabsf(v);
    int e = 0;
    float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    /* a = (1 + f/1024) * 2^(e-1): exponent e-1+15, mantissa bits f. */
    uint16_t f = (uint16_t)((m * 2.0f - 1.0f) * 1024.0f);
    return (uint16_t)(sign | (uint16_t)((e - 1 + 15) << 10) | f);
}

static uint32_t lcg_next(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*state >> 33);
}

static uint64_t rng_state = 7;
static uint32_t next_u32(void) { return lcg_next(&rng_state); }

/* An input tensor of the case's shape at `batch`, filled with values from a
 * fixed sequence (token ids in [0, 100); floats k/1024 in [-1, 1), exact in
 * float16 too, so both precisions see the same input). *buf receives the
 * data to free. */
static OrtValue *make_input(const model_case *c, bool fp16, int64_t batch, void **buf)
{
    int64_t shape[4], n = 1;
    for (int i = 0; i < c->input.rank; i++) {
        shape[i] = c->input.dims[i] == BATCH ? batch : c->input.dims[i];
        n *= shape[i];
    }
    ONNXTensorElementDataType type;
    size_t elem;
    if (c->int_input) {
        type = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, elem = 8;
    } else if (fp16) {
        type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, elem = 2;
    } else {
        type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, elem = 4;
    }
    uint8_t *data = malloc((size_t)n * elem);
    uint64_t state = 12345;
    for (int64_t i = 0; i < n; i++) {
        uint32_t r = lcg_next(&state);
        if (c->int_input) {
            int64_t id = r % 100;
            memcpy(data + 8 * i, &id, 8);
        } else if (fp16) {
            uint16_t h = float_to_half_exact((float)((int)(r % 2048) - 1024) / 1024.0f);
            memcpy(data + 2 * i, &h, 2);
        } else {
            float v = (float)((int)(r % 2048) - 1024) / 1024.0f;
            memcpy(data + 4 * i, &v, 4);
        }
    }
    OrtMemoryInfo *mem = NULL;
    OrtValue *value = NULL;
    if (ort_ok(ort->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem), "memory info"))
        ort_ok(ort->CreateTensorWithDataAsOrtValue(mem, data, (size_t)n * elem, shape, (size_t)c->input.rank,
                                                   type, &value),
               "create input");
    ort->ReleaseMemoryInfo(mem);
    *buf = data;
    return value;
}

/* The values of an output as floats (n of them), malloc'ed. */
typedef struct values {
    float *v;
    size_t n;
} values;

/* Checks an output's element type and shape, and that its values are
 * finite (the random weights keep activations in range). Returns them. */
static values check_output(const model_case *c, const io_spec *spec, OrtValue *out, bool fp16, int64_t batch)
{
    values vals = { NULL, 0 };
    OrtTensorTypeAndShapeInfo *info = NULL;
    if (!ort_ok(ort->GetTensorTypeAndShape(out, &info), "output shape")) return vals;
    ONNXTensorElementDataType type;
    size_t rank = 0, n = 0;
    int64_t dims[8] = { 0 };
    ort_ok(ort->GetTensorElementType(info, &type), "element type");
    ort_ok(ort->GetDimensionsCount(info, &rank), "rank");
    ort_ok(ort->GetTensorShapeElementCount(info, &n), "count");
    if (rank <= 8) ort_ok(ort->GetDimensions(info, dims, rank), "dims");
    ort->ReleaseTensorTypeAndShapeInfo(info);

    CHECK_EQ_INT(type, fp16 ? ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 : ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);
    CHECK_EQ_INT(rank, spec->rank);
    for (int i = 0; i < spec->rank && i < (int)rank; i++) {
        int64_t want = spec->dims[i] == BATCH ? batch : spec->dims[i];
        if (dims[i] != want)
            fprintf(stderr, "%s %s: dim %d is %lld, expected %lld\n", c->name, spec->name, i,
                    (long long)dims[i], (long long)want);
        CHECK_EQ_INT(dims[i], want);
    }
    void *data = NULL;
    if (!ort_ok(ort->GetTensorMutableData(out, &data), "output data")) return vals;
    vals.v = malloc((n ? n : 1) * sizeof *vals.v);
    vals.n = n;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        vals.v[i] = fp16 ? half_to_float(((const uint16_t *)data)[i]) : ((const float *)data)[i];
        bad += !isfinite(vals.v[i]);
    }
    if (bad) fprintf(stderr, "%s %s: %zu non-finite values\n", c->name, spec->name, bad);
    CHECK_EQ_INT(bad, 0);
    return vals;
}

/* Runs the session once at `batch`; returns the first output's values. */
static values run_once(const model_case *c, OrtSession *session, bool fp16, int64_t batch)
{
    values first = { NULL, 0 };
    void *buf = NULL;
    OrtValue *input = make_input(c, fp16, batch, &buf);
    OrtValue *outputs[2] = { NULL, NULL };
    const char *in_names[1] = { c->input.name };
    const char *out_names[2] = { c->outputs[0].name, c->outputs[1].name };
    if (input && ort_ok(ort->Run(session, NULL, in_names, (const OrtValue *const *)&input, 1, out_names,
                                 (size_t)c->n_outputs, outputs),
                        c->name)) {
        for (int i = 0; i < c->n_outputs; i++) {
            values v = check_output(c, &c->outputs[i], outputs[i], fp16, batch);
            if (i == 0)
                first = v;
            else
                free(v.v);
        }
    }
    for (int i = 0; i < c->n_outputs; i++) ort->ReleaseValue(outputs[i]);
    ort->ReleaseValue(input);
    free(buf);
    return first;
}

/* Loads the model into a CPU session and runs it at batch 1..max_batch.
 * Returns the first output at batch 1. */
static values run_in_ort(const model_case *c, const uint8_t *bytes, size_t len, bool fp16)
{
    values at_batch_1 = { NULL, 0 };
    OrtSessionOptions *opts = NULL;
    OrtSession *session = NULL;
    if (!ort_ok(ort->CreateSessionOptions(&opts), "session options")) return at_batch_1;
    ort_ok(ort->SetIntraOpNumThreads(opts, 2), "threads");
    if (ort_ok(ort->CreateSessionFromArray(ort_env, bytes, len, opts, &session), c->name)) {
        for (int64_t batch = 1; batch <= c->max_batch; batch++) {
            values v = run_once(c, session, fp16, batch);
            if (batch == 1)
                at_batch_1 = v;
            else
                free(v.v);
        }
    } else {
        fprintf(stderr, "  (%s, %s)\n", c->name, fp16 ? "fp16" : "fp32");
    }
    ort->ReleaseSession(session);
    ort->ReleaseSessionOptions(opts);
    return at_batch_1;
}

/* ---- tests ------------------------------------------------------------------- */

static void test_registry(void)
{
    CHECK_EQ_INT(ib_zoo_count(), 5);
    CHECK(ib_zoo_get(ib_zoo_count()) == NULL);
    CHECK(ib_zoo_find("no-such-model") == NULL);
    CHECK(ib_zoo_find(NULL) == NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const model_case *c = &cases[i];
        const ib_zoo_entry *e = ib_zoo_find(c->name);
        CHECK(e != NULL);
        if (!e) continue;
        CHECK(strcmp(e->name, c->name) == 0);
        CHECK_EQ_INT(e->params, c->params);
        CHECK_NEAR(e->gmacs_per_item, c->gmacs, c->gmacs_tol);
        CHECK_NEAR(e->gflops_per_item, 2 * e->gmacs_per_item, 1e-12);
        CHECK(e->description && e->description[0]);
        CHECK(e->inputs && strstr(e->inputs, c->input.name) == e->inputs);
        CHECK(e->outputs && strstr(e->outputs, c->outputs[0].name) == e->outputs);
        CHECK(e->dim_defaults != NULL);
        printf("  %-16s %12lld params %8.4f GMACs\n", e->name, (long long)e->params, e->gmacs_per_item);
    }
    CHECK(strcmp(ib_zoo_find("bert-base")->dim_defaults, "sequence=128") == 0);
    CHECK(strcmp(ib_zoo_find("resnet-50")->dim_defaults, "") == 0);
    /* Cached: the same entry every time. */
    CHECK(ib_zoo_get(1) == ib_zoo_get(1));
    CHECK(ib_zoo_find(ib_zoo_get(0)->name) == ib_zoo_get(0));
}

/* Builds the model, checks what it stores, runs it; returns its first
 * output at batch 1. */
static values test_model(const model_case *c, bool fp16)
{
    values out = { NULL, 0 };
    uint8_t *bytes = NULL;
    size_t len = 0;
    ib_error err = { { 0 } };
    ib_status st = ib_zoo_build(c->name, fp16, &bytes, &len, &err);
    CHECK_EQ_INT(st, IB_OK);
    if (st != IB_OK) {
        fprintf(stderr, "%s: %s\n", c->name, err.message);
        return out;
    }
    int64_t stored = -1;
    CHECK_EQ_INT(ib_onnx_count_initializer_elements(bytes, len, &stored, &err), IB_OK);
    if (c->stored >= 0) CHECK_EQ_INT(stored, c->stored);
    CHECK(stored >= 0.95 * (double)c->params);
    /* The weights are the bulk of the file, at 2 or 4 bytes each. */
    CHECK((double)len >= (double)stored * (fp16 ? 2 : 4));
    CHECK((double)len < (double)stored * (fp16 ? 2 : 4) * 1.01 + 65536);
    printf("  %-16s %s %11zu bytes, %11lld weights stored\n", c->name, fp16 ? "fp16" : "fp32", len,
           (long long)stored);
    out = run_in_ort(c, bytes, len, fp16);
    ib_free(bytes);
    return out;
}

/* The float16 model is the float32 one with rounded weights: on the same
 * input their outputs agree to float16 precision (relative to the largest
 * output), and differ from zero. */
static void compare_precisions(const model_case *c, values fp32, values fp16)
{
    CHECK(fp32.n > 0 && fp32.n == fp16.n);
    if (fp32.n == 0 || fp32.n != fp16.n) return;
    double peak = 0, diff = 0;
    for (size_t i = 0; i < fp32.n; i++) {
        peak = fmax(peak, fabs(fp32.v[i]));
        diff = fmax(diff, fabs((double)fp32.v[i] - fp16.v[i]));
    }
    printf("  %-16s fp16 vs fp32: max |diff| %.3g, max |fp32| %.3g\n", c->name, diff, peak);
    CHECK(peak > 0);
    CHECK(diff <= 0.03 * peak);
}

static void test_deterministic(void)
{
    uint8_t *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    CHECK_EQ_INT(ib_zoo_build("mlp", false, &a, &la, NULL), IB_OK);
    CHECK_EQ_INT(ib_zoo_build("mlp", false, &b, &lb, NULL), IB_OK);
    CHECK(a && b && la == lb && memcmp(a, b, la) == 0);
    ib_free(a);
    ib_free(b);
}

static void test_unknown_name(void)
{
    uint8_t *bytes = (uint8_t *)"sentinel";
    size_t len = 99;
    ib_error err = { { 0 } };
    CHECK_EQ_INT(ib_zoo_build("resnet-51", false, &bytes, &len, &err), IB_ERR_INVALID_ARG);
    CHECK(bytes == NULL && len == 0);
    CHECK(strstr(err.message, "resnet-51") != NULL);
    for (size_t i = 0; i < ib_zoo_count(); i++) CHECK(strstr(err.message, ib_zoo_get(i)->name));
    CHECK_EQ_INT(ib_zoo_build(NULL, false, &bytes, &len, NULL), IB_ERR_INVALID_ARG);
}

static void test_inspect_errors(void)
{
    int64_t count = 123;
    ib_error err = { { 0 } };
    CHECK_EQ_INT(ib_onnx_count_initializer_elements(NULL, 0, &count, &err), IB_ERR_MODEL);
    CHECK(strstr(err.message, "empty") != NULL);
    CHECK_EQ_INT(count, 0);
    const uint8_t empty[1] = { 0 };
    CHECK_EQ_INT(ib_onnx_count_initializer_elements(empty, 0, &count, NULL), IB_ERR_MODEL);

    /* Text and random bytes. */
    const char *text = "this is not an onnx model at all";
    CHECK_EQ_INT(ib_onnx_count_initializer_elements((const uint8_t *)text, strlen(text), &count, &err),
                 IB_ERR_MODEL);
    CHECK(strstr(err.message, "not a valid ONNX model") != NULL);
    uint8_t noise[4096];
    for (int trial = 0; trial < 64; trial++) {
        size_t n = 1 + next_u32() % sizeof noise;
        for (size_t i = 0; i < n; i++) noise[i] = (uint8_t)next_u32();
        CHECK_EQ_INT(ib_onnx_count_initializer_elements(noise, n, &count, NULL), IB_ERR_MODEL);
    }

    /* A real model cut short, at several points. */
    uint8_t *bytes = NULL;
    size_t len = 0;
    CHECK_EQ_INT(ib_zoo_build("mlp", false, &bytes, &len, NULL), IB_OK);
    if (bytes) {
        CHECK_EQ_INT(ib_onnx_count_initializer_elements(bytes, len, &count, NULL), IB_OK);
        CHECK_EQ_INT(count, mlp_params());
        size_t cuts[] = { 1, 2, 10, 100, len / 3, len / 2, len - 100, len - 1 };
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
            CHECK_EQ_INT(ib_onnx_count_initializer_elements(bytes, cuts[i], &count, &err), IB_ERR_MODEL);
        }
        /* Corrupt a length prefix in the middle: still no crash. */
        bytes[len / 2] ^= 0xff;
        ib_status st = ib_onnx_count_initializer_elements(bytes, len, &count, NULL);
        CHECK(st == IB_ERR_MODEL || st == IB_OK);
        ib_free(bytes);
    }
    CHECK_EQ_INT(ib_onnx_count_initializer_elements(empty, 1, NULL, NULL), IB_ERR_INVALID_ARG);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    init_cases();
    RUN(test_registry);
    RUN(test_unknown_name);
    RUN(test_inspect_errors);
    RUN(test_deterministic);

    ort = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    CHECK(ort != NULL);
    if (ort && ort_ok(ort->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "test_zoo", &ort_env), "env")) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            if (!check_selected(cases[i].name)) continue;
            values fp32 = test_model(&cases[i], false);
            values fp16 = test_model(&cases[i], true);
            compare_precisions(&cases[i], fp32, fp16);
            free(fp32.v);
            free(fp16.v);
        }
        ort->ReleaseEnv(ort_env);
    }
    return check_summary("test_zoo");
}
