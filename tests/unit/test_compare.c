/* compare: the Mann-Whitney test against hand-computed values, the
 * bootstrap against the exact distribution of a resampled median, verdicts
 * on scripted samples, and the reader of latency results on every kind of
 * bad input. */
#include "check.h"
#include "backend/fake/fake.h"
#include "core/compare.h"
#include "base/numeric.h"
#include "core/stats.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Mann-Whitney U                                                            */
/* ------------------------------------------------------------------------ */

static void test_mann_whitney_separated(void)
{
    /* A = 1..6 all below B = 7..12. Ranks of A: 1..6, R_A = 21;
     * U_A = R_A - nA(nA+1)/2 = 21 - 21 = 0 (no pair with a > b).
     * Mean nA nB / 2 = 18; variance nA nB (N+1) / 12 = 36 * 13 / 12 = 39.
     * z = (|0 - 18| - 0.5) / sqrt(39) = 17.5 / 6.2450 = 2.8022;
     * p = erfc(z / sqrt 2) = erfc(17.5 / sqrt 78) = 0.0050748681 (as
     * scipy's mannwhitneyu, asymptotic, with continuity correction). */
    const double a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 7, 8, 9, 10, 11, 12 };
    double u, p;
    ib__mann_whitney(a, 6, b, 6, &u, &p);
    CHECK_NEAR(u, 0, 0);
    CHECK_NEAR(p, 0.005074868097940257, 1e-12);
    /* The other way round: all 36 pairs have a > b, U = 36, same p. */
    ib__mann_whitney(b, 6, a, 6, &u, &p);
    CHECK_NEAR(u, 36, 0);
    CHECK_NEAR(p, 0.005074868097940257, 1e-12);
}

static void test_mann_whitney_ties(void)
{
    /* A = {1,2,2,3,4,5}, B = {2,3,5,6,7,8}. Merged: 1a | 2a 2a 2b | 3a 3b |
     * 4a | 5a 5b | 6b 7b 8b. Average ranks: 1 -> 1; the 2s span 2..4 -> 3;
     * the 3s 5..6 -> 5.5; 4 -> 7; the 5s 8..9 -> 8.5.
     * R_A = 1 + 3 + 3 + 5.5 + 7 + 8.5 = 28, U_A = 28 - 21 = 7. By pairs:
     * a=1: 0; a=2 (twice): one tie each, 0.5 + 0.5; a=3: 1 + 0.5;
     * a=4: 2; a=5: 2 + 0.5: 0 + 1 + 1.5 + 2 + 2.5 = 7.
     * Ties: groups of 3, 2, 2: sum(t^3 - t) = 24 + 6 + 6 = 36.
     * Variance 36/12 (13 - 36 / (12 * 11)) = 3 * 12.727273 = 38.181818.
     * p = erfc((|7 - 18| - 0.5) / sqrt(2 * 38.181818)) = 0.0892693494. */
    const double a[6] = { 1, 2, 2, 3, 4, 5 }, b[6] = { 2, 3, 5, 6, 7, 8 };
    double u, p;
    ib__mann_whitney(a, 6, b, 6, &u, &p);
    CHECK_NEAR(u, 7, 1e-12);
    CHECK_NEAR(p, 0.0892693494106903, 1e-12);
}

static void test_mann_whitney_no_difference(void)
{
    /* Identical samples: each value a tie of 2, A gets 1.5, 3.5, ..., 11.5,
     * R_A = 39, U = 18 = the mean: |U - mean| - 0.5 < 0, p = 1. */
    const double a[6] = { 1, 2, 3, 4, 5, 6 };
    double u, p;
    ib__mann_whitney(a, 6, a, 6, &u, &p);
    CHECK_NEAR(u, 18, 1e-12);
    CHECK_NEAR(p, 1, 0);
    /* Every value equal: variance 0 with the tie correction, p = 1. */
    const double same[6] = { 3, 3, 3, 3, 3, 3 };
    ib__mann_whitney(same, 6, same, 6, &u, &p);
    CHECK_NEAR(u, 18, 1e-12);
    CHECK_NEAR(p, 1, 0);
}

/* ------------------------------------------------------------------------ */
/* The bootstrap                                                             */
/* ------------------------------------------------------------------------ */

/* P(Binomial(n, q) >= k) */
static double binomial_tail(int n, double q, int k)
{
    double sum = 0;
    for (int i = k; i <= n; i++) {
        double c = 1;
        for (int j = 0; j < i; j++) c = c * (n - j) / (j + 1);
        sum += c * pow(q, i) * pow(1 - q, n - i);
    }
    return sum;
}

static void test_bootstrap_median_exact_distribution(void)
{
    /* Odd n = 7: the resample's median is its 4th smallest draw, at or
     * below sorted[j] exactly when at least 4 of the 7 draws fall on
     * indices 0..j: P = P(Binomial(7, (j+1)/7) >= 4). 200,000 draws of the
     * O(1) sampler must match it to Monte Carlo precision (sd <= 0.0012). */
    const double x[7] = { 1, 2, 3, 4, 5, 6, 7 };
    enum { DRAWS = 200000 };
    size_t count[7] = { 0 };
    uint64_t rng = 1;
    for (int r = 0; r < DRAWS; r++) {
        double m = ib__bootstrap_median(x, 7, &rng);
        count[(int)m - 1]++;
    }
    size_t cum = 0;
    for (int j = 0; j < 7; j++) {
        cum += count[j];
        CHECK_NEAR((double)cum / DRAWS, binomial_tail(7, (j + 1) / 7.0, 4), 0.006);
    }
}

static void test_bootstrap_median_even_matches_resampling(void)
{
    /* Even n = 8: the type-7 median averages the 4th and 5th draws. The
     * O(1) sampler and plain resampling (8 draws, sort, median) must give
     * the same mean and spread to Monte Carlo precision. */
    const double x[8] = { 1, 2, 4, 8, 16, 32, 64, 128 };
    enum { DRAWS = 100000 };
    uint64_t rng = 7, brute = 11;
    double m1 = 0, s1 = 0, m2 = 0, s2 = 0;
    for (int r = 0; r < DRAWS; r++) {
        double fast = ib__bootstrap_median(x, 8, &rng);
        double resample[8];
        for (int i = 0; i < 8; i++) resample[i] = x[ib__splitmix64(&brute) % 8];
        ib__sort(resample, 8);
        double slow = ib_quantile_sorted(resample, 8, 0.5);
        m1 += fast, s1 += fast * fast, m2 += slow, s2 += slow * slow;
    }
    m1 /= DRAWS, m2 /= DRAWS;
    double sd1 = sqrt(s1 / DRAWS - m1 * m1), sd2 = sqrt(s2 / DRAWS - m2 * m2);
    /* The median's sd here is about 10: the means' sd about 0.03. */
    CHECK_NEAR(m1, m2, 0.2);
    CHECK_NEAR(sd1, sd2, 0.2);
}

/* ------------------------------------------------------------------------ */
/* Verdicts on scripted samples                                              */
/* ------------------------------------------------------------------------ */

/* 10 ms +- spread, a fixed pattern of 11 levels (no randomness). */
static void pattern(double *x, size_t n, double spread, double scale)
{
    for (size_t i = 0; i < n; i++) x[i] = scale * 10.0 * (1 + spread * ((double)((i * 7) % 11) - 5) / 5);
}

static ib_change verdict_of(const double *a, size_t na, const double *b, size_t nb, ib_comparison *c)
{
    ib_error err;
    CHECK(ib_compare_samples(a, na, b, nb, 0.01, c, &err) == IB_OK);
    return c->verdict;
}

static void test_verdicts(void)
{
    enum { N = 300 };
    double a[N], b[N];
    ib_comparison c;
    pattern(a, N, 0.01, 1.0);

    CHECK_EQ_INT(verdict_of(a, N, a, N, &c), IB_CHANGE_NONE);
    CHECK_NEAR(c.change, 0, 0);
    CHECK(c.change_ci95[0] >= -0.01 && c.change_ci95[1] <= 0.01);
    CHECK(c.mann_whitney_p > 0.9);

    /* +10%: the median scales exactly; the CI holds the true shift. */
    pattern(b, N, 0.01, 1.10);
    CHECK_EQ_INT(verdict_of(a, N, b, N, &c), IB_CHANGE_SLOWER);
    CHECK_NEAR(c.change, 0.10, 1e-12);
    CHECK(c.change_ci95[0] <= 0.10 && 0.10 <= c.change_ci95[1]);
    CHECK(c.change_ci95[0] > 0.01);
    CHECK(c.mann_whitney_p < 1e-10);
    CHECK_NEAR(c.a.p50, 10.0, 1e-12);
    CHECK_EQ_INT(c.b.n, N);

    pattern(b, N, 0.01, 0.90);
    CHECK_EQ_INT(verdict_of(a, N, b, N, &c), IB_CHANGE_FASTER);
    CHECK(c.change_ci95[0] <= -0.10 && -0.10 <= c.change_ci95[1]);

    /* 8 noisy samples (+-20%) and +1%: the CI is far wider than 1%. */
    double small_a[8], small_b[8];
    pattern(small_a, 8, 0.20, 1.0);
    pattern(small_b, 8, 0.20, 1.01);
    CHECK_EQ_INT(verdict_of(small_a, 8, small_b, 8, &c), IB_CHANGE_INCONCLUSIVE);
    CHECK(c.change_ci95[0] < -0.01 && c.change_ci95[1] > 0.01);
}

static void test_reproducible(void)
{
    double a[50], b[50];
    pattern(a, 50, 0.05, 1.0);
    pattern(b, 50, 0.05, 1.03);
    ib_comparison c1, c2;
    ib_error err;
    CHECK(ib_compare_samples(a, 50, b, 50, 0.01, &c1, &err) == IB_OK);
    CHECK(ib_compare_samples(a, 50, b, 50, 0.01, &c2, &err) == IB_OK);
    CHECK(c1.change_ci95[0] == c2.change_ci95[0] && c1.change_ci95[1] == c2.change_ci95[1]);
    CHECK(c1.change_ci95[0] <= c1.change && c1.change <= c1.change_ci95[1]);
}

static void test_verdict_edges(void)
{
    /* Strictly beyond for faster/slower, inclusive for "no change". */
    const double on_edge[2] = { 0.01, 0.02 }, within[2] = { -0.01, 0.01 }, beyond[2] = { 0.0101, 0.5 },
                 below[2] = { -0.3, -0.02 }, across[2] = { -0.02, 0.005 };
    CHECK_EQ_INT(ib__change_verdict(on_edge, 0.01), IB_CHANGE_INCONCLUSIVE);
    CHECK_EQ_INT(ib__change_verdict(within, 0.01), IB_CHANGE_NONE);
    CHECK_EQ_INT(ib__change_verdict(beyond, 0.01), IB_CHANGE_SLOWER);
    CHECK_EQ_INT(ib__change_verdict(below, 0.01), IB_CHANGE_FASTER);
    CHECK_EQ_INT(ib__change_verdict(across, 0.01), IB_CHANGE_INCONCLUSIVE);
    CHECK(!strcmp(ib_change_name(IB_CHANGE_NONE), "no change"));
    CHECK(!strcmp(ib_change_name(IB_CHANGE_SLOWER), "slower"));
}

static void test_compare_refuses(void)
{
    double a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 1, 2, 3, 4, 5, 6 };
    ib_comparison c;
    ib_error err;
    CHECK(ib_compare_samples(a, 5, b, 6, 0.01, &c, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "at least 6") != NULL);
    CHECK(ib_compare_samples(a, 6, NULL, 6, 0.01, &c, &err) == IB_ERR_INVALID_ARG);
    CHECK(ib_compare_samples(a, 6, b, 6, 0, &c, &err) == IB_ERR_INVALID_ARG);
    CHECK(ib_compare_samples(a, 6, b, 6, 1, &c, &err) == IB_ERR_INVALID_ARG);
    CHECK(ib_compare_samples(a, 6, b, 6, NAN, &c, &err) == IB_ERR_INVALID_ARG);
    b[3] = NAN;
    CHECK(ib_compare_samples(a, 6, b, 6, 0.01, &c, &err) == IB_ERR_INVALID_ARG);
    b[3] = 0;
    CHECK(ib_compare_samples(a, 6, b, 6, 0.01, &c, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "sample 3") != NULL);
    /* Found by fuzz_compare_json: 1.3e307 ms beside 0.006 ms made a ratio
     * of medians infinite and the interval's end NaN. Not a duration. */
    b[3] = 1.3e307;
    CHECK(ib_compare_samples(a, 6, b, 6, 0.01, &c, &err) == IB_ERR_INVALID_ARG);
    b[3] = 1e-300;
    CHECK(ib_compare_samples(a, 6, b, 6, 0.01, &c, &err) == IB_ERR_INVALID_ARG);
    /* The widest ratio the bounds allow stays finite, the interval ordered. */
    const double tiny[6] = { 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6 },
                 huge[6] = { 1e9, 1e9, 1e9, 1e-6, 1e9, 1e9 };
    CHECK(ib_compare_samples(tiny, 6, huge, 6, 0.01, &c, &err) == IB_OK);
    CHECK(isfinite(c.change) && isfinite(c.change_ci95[0]) && isfinite(c.change_ci95[1]));
    CHECK(c.change_ci95[0] <= c.change_ci95[1] && c.verdict == IB_CHANGE_SLOWER);
}

/* ------------------------------------------------------------------------ */
/* Reading latency results                                                   */
/* ------------------------------------------------------------------------ */

/* Most documents below are of the first schema: it must still be read. */
#define SCHEMA "\"schema\":\"inferbench.latency/1\""
#define SCHEMA_2 "\"schema\":\"inferbench.latency/2\""

static ib_status parse(const char *text, ib_latency_file *f, ib_error *err)
{
    return ib_latency_file_parse(text, strlen(text), f, err);
}

/* Item i of list is key=value. */
static void check_option(const ib_option_list *list, size_t i, const char *key, const char *value)
{
    CHECK(i < list->n && !strcmp(list->items[i].key, key) && !strcmp(list->items[i].value, value));
}

static void test_parse_valid(void)
{
    ib_latency_file f;
    ib_error err;
    const char *device = "{\"schema\":\"inferbench.latency/1\",\"partial\":true,\"model\":\"zoo:mlp\","
                         "\"device\":\"cuda\",\"batch\":8,\"environment\":{\"gpu\":\"NVIDIA H200\","
                         "\"execution_provider\":\"CUDAExecutionProvider\"},"
                         "\"samples\":{\"device_ms\":[1.5,2,2.5],\"host_ms\":[9,9,9]}}";
    CHECK(parse(device, &f, &err) == IB_OK);
    CHECK(f.timing == IB_TIMING_DEVICE_EVENTS && f.n == 3 && f.samples_ms[2] == 2.5);
    CHECK(!strcmp(f.model, "zoo:mlp") && !strcmp(f.device, "cuda") && f.batch == 8 && f.partial);
    CHECK(!strcmp(f.gpu, "NVIDIA H200") && !strcmp(f.provider, "CUDAExecutionProvider"));
    CHECK(f.runtime_version[0] == '\0' && f.options.n == 0);
    CHECK(f.flush_l2[0] == '\0' && f.exclude_launch[0] == '\0'); /* not recorded: unknown */
    ib_latency_file_free(&f);

    /* The conditions of the measurement, read as lines compare can diff. */
    const char *conditions =
        "{" SCHEMA ",\"environment\":{\"onnxruntime_version\":\"1.29.0\"},"
        "\"workload\":{\"runtime_options\":{\"cudnn_conv_algo_search\":\"HEURISTIC\",\"prefer_nhwc\":true,"
        "\"cuda_graph\":true,\"intra_op_threads\":4}},\"config\":{\"flush_l2\":true,\"exclude_launch\":false}"
        ","
        "\"samples\":{\"host_ms\":[1]}}";
    CHECK(parse(conditions, &f, &err) == IB_OK);
    CHECK(!strcmp(f.runtime_version, "1.29.0") && f.runtime[0] == '\0');
    /* schema 1's runtime_options, in the keys the backend reports today */
    CHECK_EQ_INT(f.options.n, 4);
    check_option(&f.options, 0, "cudnn_search", "HEURISTIC");
    check_option(&f.options, 1, "prefer_nhwc", "yes");
    check_option(&f.options, 2, "cuda_graph", "yes");
    check_option(&f.options, 3, "threads", "4");
    CHECK(!strcmp(f.flush_l2, "yes") && !strcmp(f.exclude_launch, "no"));
    ib_latency_file_free(&f);

    /* environment.runtime, the object today's files hold */
    const char *runtime =
        "{" SCHEMA_2 ",\"environment\":{\"runtime\":{\"name\":\"aoti\",\"version\":\"2.9.1\","
        "\"library\":\"\",\"build\":\"cuda\",\"provider\":\"aoti-cuda\"}},"
        "\"samples\":{\"host_ms\":[1]}}";
    CHECK(parse(runtime, &f, &err) == IB_OK);
    CHECK(!strcmp(f.runtime, "aoti") && !strcmp(f.runtime_version, "2.9.1") &&
          !strcmp(f.provider, "aoti-cuda"));
    ib_latency_file_free(&f);
    const char *bad_runtime =
        "{" SCHEMA_2 ",\"environment\":{\"runtime\":{\"version\":2}},\"samples\":{\"host_ms\":[1]}}";
    CHECK(parse(bad_runtime, &f, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "environment.runtime.version is not a string") != NULL);
    const char *cpu = "{" SCHEMA ",\"workload\":{\"runtime_options\":{\"cudnn_conv_algo_search\":null,"
                      "\"prefer_nhwc\":false,\"intra_op_threads\":0}},\"samples\":{\"host_ms\":[1]}}";
    CHECK(parse(cpu, &f, &err) == IB_OK);
    /* the CPU provider has no cuDNN search, NHWC or graph: only threads */
    CHECK_EQ_INT(f.options.n, 1);
    const char *threads = ib_option_list_get(&f.options, "threads");
    CHECK(threads && !strcmp(threads, "default"));
    ib_latency_file_free(&f);

    /* Schema 2: the options an object of strings, the math beside them,
     * the devices a list (the first is the one measured on). */
    const char *v2 =
        "{" SCHEMA_2 ",\"environment\":{\"devices\":[{\"index\":0,\"name\":\"NVIDIA H200\","
        "\"uuid\":\"GPU-1\"}]},\"workload\":{\"backend_options\":{\"m\":\"4096\",\"dtype\":\"fp16\"},"
        "\"math\":\"tf32\",\"math_default\":true},\"samples\":{\"host_ms\":[1]}}";
    CHECK(parse(v2, &f, &err) == IB_OK);
    CHECK_EQ_INT(f.options.n, 2);
    check_option(&f.options, 0, "m", "4096");
    check_option(&f.options, 1, "dtype", "fp16");
    CHECK(!strcmp(f.math, "tf32 (runtime default)") && !strcmp(f.gpu, "NVIDIA H200"));
    ib_latency_file_free(&f);
    const char *v2_cpu =
        "{" SCHEMA_2 ",\"environment\":{\"devices\":[]},\"workload\":{\"backend_options\":{}},"
        "\"samples\":{\"host_ms\":[1]}}";
    CHECK(parse(v2_cpu, &f, &err) == IB_OK);
    CHECK(f.options.n == 0 && f.gpu[0] == '\0');
    ib_latency_file_free(&f);

    /* Host clock: device_ms null; no GPU: gpu null; metadata may be absent. */
    const char *host = " {\"schema\":\"inferbench.latency/1\",\"environment\":{\"gpu\":null},"
                       "\"samples\":{\"device_ms\":null,\"host_ms\":[4,5]}}\n";
    CHECK(parse(host, &f, &err) == IB_OK);
    CHECK(f.timing == IB_TIMING_HOST_CLOCK && f.n == 2 && f.samples_ms[0] == 4);
    CHECK(f.gpu[0] == '\0' && f.model[0] == '\0' && f.batch == 0 && !f.partial);
    CHECK(!strcmp(ib_timing_name(f.timing), "host-clock"));
    ib_latency_file_free(&f);
    ib_latency_file_free(NULL);
}

/* Each must be refused with IB_ERR_INVALID_ARG, one line saying why. */
static void check_refused(const char *text, size_t len, const char *why)
{
    ib_latency_file f;
    ib_error err;
    memset(&f, 0x5a, sizeof f);
    ib_status st = ib_latency_file_parse(text, len, &f, &err);
    CHECK_EQ_INT(st, IB_ERR_INVALID_ARG);
    CHECK(f.samples_ms == NULL && f.n == 0);
    if (st == IB_ERR_INVALID_ARG) {
        CHECK(strncmp(err.message, "not an inferbench latency result: ", 34) == 0);
        CHECK(strchr(err.message, '\n') == NULL);
        if (!strstr(err.message, why)) {
            check_failures++;
            fprintf(stderr, "refused for '%s', expected '%s'\n", err.message, why);
        }
    }
    ib_latency_file_free(&f);
}

static void test_parse_refuses(void)
{
    static const struct {
        const char *text, *why;
    } cases[] = {
        { "", "empty" },
        { "this is not JSON", "not JSON" },
        { "{\"schema\":", "not JSON" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":[1]}} trailing", "not JSON" },
        { "[1, 2, 3]", "not an object" },
        { "42", "not an object" },
        { "{\"samples\":{\"host_ms\":[1]}}", "no \"schema\"" },
        { "{\"schema\":\"inferbench.throughput/2\",\"points\":[]}", "schema is \"inferbench.throughput/2\"" },
        { "{\"schema\":\"inferbench.latency/3\",\"samples\":{\"host_ms\":[1]}}",
          "schema is \"inferbench.latency/3\", expected \"inferbench.latency/2\" (or the older "
          "\"inferbench.latency/1\")" },
        { "{" SCHEMA_2 ",\"workload\":{\"backend_options\":[]},\"samples\":{\"host_ms\":[1]}}",
          "workload.backend_options is not an object" },
        { "{" SCHEMA_2 ",\"workload\":{\"backend_options\":{\"threads\":1}},\"samples\":{\"host_ms\":[1]}}",
          "workload.backend_options.threads is not a string" },
        { "{" SCHEMA_2
          ",\"workload\":{\"backend_options\":{\"a_key_of_forty_bytes_is_too_long_for_it\":\"1\"}},"
          "\"samples\":{\"host_ms\":[1]}}",
          "workload.backend_options.a_key_of_forty_bytes_is_too_long_for_it: a key of 1 to 31 bytes" },
        { "{" SCHEMA_2 ",\"workload\":{\"math\":1},\"samples\":{\"host_ms\":[1]}}",
          "workload.math is not a string" },
        { "{" SCHEMA_2 ",\"environment\":{\"devices\":{}},\"samples\":{\"host_ms\":[1]}}",
          "environment.devices is not an array" },
        { "{" SCHEMA_2 ",\"environment\":{\"devices\":[\"H200\"]},\"samples\":{\"host_ms\":[1]}}",
          "environment.devices[0] is not an object" },
        { "{" SCHEMA_2 ",\"environment\":{\"devices\":[{\"name\":7}]},\"samples\":{\"host_ms\":[1]}}",
          "environment.devices[0].name is not a string" },
        { "{\"schema\":7}", "no \"schema\"" },
        { "{" SCHEMA "}", "no \"samples\"" },
        { "{" SCHEMA ",\"samples\":[1,2]}", "no \"samples\"" },
        { "{" SCHEMA ",\"samples\":{}}", "both missing" },
        { "{" SCHEMA ",\"samples\":{\"device_ms\":null,\"host_ms\":null}}", "both missing" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":[]}}", "empty" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":{}}}", "not an array" },
        { "{" SCHEMA ",\"samples\":{\"device_ms\":7,\"host_ms\":[1]}}", "device_ms is not an array" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":[1,null,3]}}", "host_ms[1] is not a duration" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":[1,\"2\"]}}", "host_ms[1]" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":[NaN]}}", "not JSON" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":[1e999]}}", "host_ms[0]" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":[-1]}}", "host_ms[0]" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":[1,1.01e9]}}", "host_ms[1]" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":[1,0.9e-6]}}", "host_ms[1]" },
        { "{" SCHEMA ",\"samples\":{\"device_ms\":[1,0]}}", "device_ms[1]" },
        { "{" SCHEMA ",\"samples\":{\"host_ms\":[[1]]}}", "host_ms[0]" },
        { "{" SCHEMA ",\"batch\":1.5,\"samples\":{\"host_ms\":[1]}}", "batch" },
        { "{" SCHEMA ",\"batch\":0,\"samples\":{\"host_ms\":[1]}}", "batch" },
        { "{" SCHEMA ",\"model\":3,\"samples\":{\"host_ms\":[1]}}", "model is not a string" },
        { "{" SCHEMA ",\"partial\":\"yes\",\"samples\":{\"host_ms\":[1]}}", "partial" },
        { "{" SCHEMA ",\"environment\":[],\"samples\":{\"host_ms\":[1]}}", "environment is not an object" },
        { "{" SCHEMA ",\"environment\":{\"gpu\":1},\"samples\":{\"host_ms\":[1]}}", "environment.gpu" },
        { "{" SCHEMA ",\"environment\":{\"onnxruntime_version\":1},\"samples\":{\"host_ms\":[1]}}",
          "environment.onnxruntime_version is not a string" },
        { "{" SCHEMA ",\"workload\":7,\"samples\":{\"host_ms\":[1]}}", "workload is not an object" },
        { "{" SCHEMA ",\"workload\":{\"runtime_options\":[]},\"samples\":{\"host_ms\":[1]}}",
          "workload.runtime_options is not an object" },
        { "{" SCHEMA ",\"workload\":{\"runtime_options\":{\"prefer_nhwc\":1}},\"samples\":{\"host_ms\":[1]}}",
          "workload.runtime_options.prefer_nhwc is not true or false" },
        { "{" SCHEMA
          ",\"workload\":{\"runtime_options\":{\"cuda_graph\":\"no\"}},\"samples\":{\"host_ms\":[1]}}",
          "workload.runtime_options.cuda_graph is not true or false" },
        { "{" SCHEMA
          ",\"workload\":{\"runtime_options\":{\"intra_op_threads\":-1}},\"samples\":{\"host_ms\":[1]}}",
          "intra_op_threads is not a whole number" },
        { "{" SCHEMA
          ",\"workload\":{\"runtime_options\":{\"intra_op_threads\":1.5}},\"samples\":{\"host_ms\":[1]}}",
          "intra_op_threads is not a whole number" },
        { "{" SCHEMA ",\"workload\":{\"runtime_options\":{\"cudnn_conv_algo_search\":false}},"
          "\"samples\":{\"host_ms\":[1]}}",
          "cudnn_conv_algo_search is not a string" },
        { "{" SCHEMA ",\"config\":\"x\",\"samples\":{\"host_ms\":[1]}}", "config is not an object" },
        { "{" SCHEMA ",\"config\":{\"flush_l2\":\"yes\"},\"samples\":{\"host_ms\":[1]}}",
          "config.flush_l2 is not true or false" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_refused(cases[i].text, strlen(cases[i].text), cases[i].why);

    /* A NUL inside the given length: refused, not read as a shorter text. */
    const char nul[] = "{" SCHEMA ",\"samples\":{\"host_ms\":[1]}}\0junk";
    check_refused(nul, sizeof nul - 1, "NUL byte");
    check_refused(NULL, 0, "empty");
}

static void test_parse_too_many_samples(void)
{
    /* 1,000,001 samples: one more than a measurement takes. */
    const char head[] = "{" SCHEMA ",\"samples\":{\"host_ms\":[";
    size_t n = 1000001, len = strlen(head) + 2 * n + 3;
    char *text = malloc(len + 1);
    CHECK(text != NULL);
    if (!text) return;
    size_t at = strlen(head);
    memcpy(text, head, at);
    for (size_t i = 0; i < n; i++) memcpy(text + at + 2 * i, "1,", 2);
    at += 2 * n - 1; /* drop the last comma */
    memcpy(text + at, "]}}", 4);
    check_refused(text, strlen(text), "more than 1000000 samples");
    /* One fewer is accepted. */
    text[at - 2] = ']';
    memcpy(text + at - 1, "}}", 3);
    ib_latency_file f;
    ib_error err;
    CHECK(ib_latency_file_parse(text, strlen(text), &f, &err) == IB_OK);
    CHECK_EQ_INT(f.n, 1000000);
    ib_latency_file_free(&f);
    free(text);

    /* More values than two arrays of a million can hold: refused before
     * cJSON spends 64 bytes on each. */
    size_t marks = 3000001;
    char *commas = malloc(marks);
    CHECK(commas != NULL);
    if (!commas) return;
    memset(commas, ',', marks);
    check_refused(commas, marks, "more than 3000000 values");
    free(commas);
}

/* What latency --json writes reads back to the same samples. */
static double steady(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    (void)ctx;
    return 2.0 + 0.01 * (double)(index % 7);
}

static void test_round_trip(void)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = steady;
    s.host_overhead_ms = 0.25;
    ib_workload *w = NULL;
    ib_error err;
    CHECK(ib__workload_open_fake(&s, &w, &err) == IB_OK);
    if (!w) return;
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_ms = 0;
    cfg.runs = 40;
    /* the backend's options and a device, as a backend and the probe
     * would report them */
    CHECK(ib_option_list_set(&w->info.options, "threads", "2") == IB_OK);
    CHECK(ib_option_list_set(&w->info.options, "dtype", "fp16") == IB_OK);
    ib_latency_result r;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    snprintf(r.env.gpu_name, sizeof r.env.gpu_name, "Test GPU");
    char *doc = ib_latency_report_json(&r, ib_workload_get_info(w), &cfg);
    ib_latency_file f;
    CHECK(doc && ib_latency_file_parse(doc, strlen(doc), &f, &err) == IB_OK);
    if (doc && f.samples_ms) {
        CHECK(f.timing == (r.has_device_timer ? IB_TIMING_DEVICE_EVENTS : IB_TIMING_HOST_CLOCK));
        CHECK_EQ_INT(f.n, r.n);
        const double *want = r.has_device_timer ? r.device_ms : r.host_ms;
        /* cJSON prints 15 significant digits when they read back within
         * an epsilon: the last bit may differ. */
        for (size_t i = 0; i < f.n && i < r.n; i++) CHECK_NEAR(f.samples_ms[i], want[i], 1e-14 * want[i]);
        CHECK_EQ_INT(f.batch, ib_workload_get_info(w)->batch);
        CHECK_EQ_INT(f.options.n, 2);
        check_option(&f.options, 0, "threads", "2");
        check_option(&f.options, 1, "dtype", "fp16");
        CHECK(!strcmp(f.gpu, "Test GPU"));
    }
    ib_latency_file_free(&f);
    ib_free(doc);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
}

/* ------------------------------------------------------------------------ */
/* Reports                                                                   */
/* ------------------------------------------------------------------------ */

static ib_latency_file file_of(const char *model, int64_t batch, double *x, size_t n)
{
    ib_latency_file f;
    memset(&f, 0, sizeof f);
    snprintf(f.model, sizeof f.model, "%s", model);
    snprintf(f.device, sizeof f.device, "cpu");
    f.batch = batch;
    f.timing = IB_TIMING_HOST_CLOCK;
    f.samples_ms = x;
    f.n = n;
    return f;
}

static void test_reports(void)
{
    enum { N = 100 };
    double a[N], b[N];
    pattern(a, N, 0.01, 1.0);
    pattern(b, N, 0.01, 1.10);
    ib_latency_file fa = file_of("zoo:mlp", 1, a, N), fb = file_of("zoo:resnet-50", 1, b, N);
    fb.partial = true;
    ib_comparison c;
    ib_error err;
    CHECK(ib_compare_samples(a, N, b, N, 0.01, &c, &err) == IB_OK);

    char *text = ib_comparison_report_text(&c, &fa, "a.json", &fb, "b.json");
    CHECK(text && strstr(text, "verdict: slower") && strstr(text, "median change: +10.00%"));
    CHECK(text && strstr(text, "warning: different models: zoo:mlp (A) vs zoo:resnet-50 (B)"));
    CHECK(text && strstr(text, "warning: B's measurement stopped early"));
    CHECK(text && !strstr(text, "batch sizes"));
    ib_free(text);

    /* Conditions that change what is timed: each difference is a warning. */
    ib_latency_file ca = file_of("zoo:mlp", 1, a, N), cb = file_of("zoo:mlp", 1, b, N);
    /* options compared key by key: one differs, one only B has, one agrees */
    CHECK(ib_option_list_set(&ca.options, "cudnn_search", "EXHAUSTIVE") == IB_OK);
    CHECK(ib_option_list_set(&ca.options, "threads", "default") == IB_OK);
    CHECK(ib_option_list_set(&cb.options, "threads", "default") == IB_OK);
    CHECK(ib_option_list_set(&cb.options, "cudnn_search", "HEURISTIC") == IB_OK);
    CHECK(ib_option_list_set(&cb.options, "dtype", "fp16") == IB_OK);
    snprintf(ca.flush_l2, sizeof ca.flush_l2, "no");
    snprintf(cb.flush_l2, sizeof cb.flush_l2, "yes");
    snprintf(ca.exclude_launch, sizeof ca.exclude_launch, "no");
    snprintf(cb.exclude_launch, sizeof cb.exclude_launch, "no");
    snprintf(ca.runtime_version, sizeof ca.runtime_version, "1.29.0");
    char *cond = ib_comparison_report_text(&c, &ca, "a.json", &cb, "b.json");
    CHECK(cond &&
          strstr(cond, "warning: different backend option cudnn_search: EXHAUSTIVE (A) vs HEURISTIC (B); "
                       "compared anyway\n"));
    CHECK(
        cond &&
        strstr(cond, "warning: different backend option dtype: not set (A) vs fp16 (B); compared anyway\n"));
    CHECK(cond && !strstr(cond, "backend option threads"));
    CHECK(cond && strstr(cond, "warning: different L2 cache states (--flush-l2): no (A) vs yes (B)"));
    CHECK(cond && strstr(cond, "warning: different runtime versions: 1.29.0 (A) vs unknown (B)"));
    CHECK(cond && !strstr(cond, "--exclude-launch"));
    ib_free(cond);
    char *cond_json = ib_comparison_report_json(&c, &ca, "a.json", &cb, "b.json");
    cJSON *cond_root = cond_json ? cJSON_Parse(cond_json) : NULL;
    cJSON *keys = cJSON_GetObjectItem(cond_root, "warnings");
    size_t option_keys = 0; /* the differing options, in order: A's keys, then B's */
    const cJSON *key;
    cJSON_ArrayForEach(key, keys)
    {
        if (strncmp(cJSON_GetStringValue(key), "backend_options.", 16)) continue;
        CHECK(!strcmp(cJSON_GetStringValue(key),
                      option_keys ? "backend_options.dtype" : "backend_options.cudnn_search"));
        option_keys++;
    }
    CHECK_EQ_INT(option_keys, 2);
    cJSON *b_options = cJSON_GetObjectItem(cJSON_GetObjectItem(cond_root, "b"), "backend_options");
    CHECK(cJSON_IsString(cJSON_GetObjectItem(b_options, "dtype")) &&
          !strcmp(cJSON_GetObjectItem(b_options, "dtype")->valuestring, "fp16"));
    cJSON_Delete(cond_root);
    ib_free(cond_json);

    char *doc = ib_comparison_report_json(&c, &fa, "a.json", &fb, "b.json");
    cJSON *root = doc ? cJSON_Parse(doc) : NULL;
    CHECK(root != NULL);
    if (root) {
        cJSON *schema = cJSON_GetObjectItem(root, "schema"), *verdict = cJSON_GetObjectItem(root, "verdict");
        CHECK(cJSON_IsString(schema) && !strcmp(schema->valuestring, "inferbench.compare/3"));
        CHECK(cJSON_IsString(verdict) && !strcmp(verdict->valuestring, "slower"));
        cJSON *ai = cJSON_GetObjectItem(root, "a");
        CHECK(cJSON_GetObjectItem(ai, "median_ms")->valuedouble == c.a.p50);
        CHECK(!strcmp(cJSON_GetObjectItem(ai, "file")->valuestring, "a.json"));
        cJSON *warnings = cJSON_GetObjectItem(root, "warnings");
        CHECK_EQ_INT(cJSON_GetArraySize(warnings), 2); /* model, partial */
        CHECK_NEAR(cJSON_GetObjectItem(root, "threshold_pct")->valuedouble, 1.0, 1e-12);
        cJSON *ci = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "change"), "ci95_pct");
        CHECK_EQ_INT(cJSON_GetArraySize(ci), 2);
    }
    cJSON_Delete(root);
    ib_free(doc);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_mann_whitney_separated);
    RUN(test_mann_whitney_ties);
    RUN(test_mann_whitney_no_difference);
    RUN(test_bootstrap_median_exact_distribution);
    RUN(test_bootstrap_median_even_matches_resampling);
    RUN(test_verdicts);
    RUN(test_reproducible);
    RUN(test_verdict_edges);
    RUN(test_compare_refuses);
    RUN(test_parse_valid);
    RUN(test_parse_refuses);
    RUN(test_parse_too_many_samples);
    RUN(test_round_trip);
    RUN(test_reports);
    return check_summary("test_compare");
}
