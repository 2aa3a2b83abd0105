/* sessions: the variance decomposition against hand-computed values, the
 * geometric mean of session medians and its t-interval (hand-computed), the
 * interval's coverage on synthetic sessions of known between- and
 * within-session spread and on a population of two host states (and the
 * one-level interval's under-coverage on the same data), and the
 * comparison across sessions, with its rate of false verdicts. */
#include "check.h"
#include "backend/fake/fake.h"
#include "base/numeric.h"
#include "core/sessions.h"
#include "env/env.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TWO_PI 6.283185307179586

static double gaussian(uint64_t *rng)
{
    double u1 = ((double)(ib__splitmix64(rng) >> 11) + 0.5) * 0x1p-53;
    double u2 = ((double)(ib__splitmix64(rng) >> 11) + 0.5) * 0x1p-53;
    return sqrt(-2 * log(u1)) * cos(TWO_PI * u2);
}

static void test_variance_hand_computed(void)
{
    /* Sessions {1,2,3} and {4,5,6}: means 2 and 5, grand mean 3.5.
     * SS between = 3 (1.5^2) + 3 (1.5^2) = 13.5 on 1 df: MSB = 13.5.
     * SS within = 2 + 2 = 4 on 6 - 2 = 4 df: MSW = 1.
     * n0 = (6 - 18 / 6) / 1 = 3; between = (13.5 - 1) / 3 = 4.1666... */
    const double a[3] = { 1, 2, 3 }, b[3] = { 4, 5, 6 };
    ib_session_sample s[2] = { { a, 3 }, { b, 3 } };
    double between, within;
    ib__sessions_variance(s, 2, &between, &within);
    CHECK_NEAR(within, 1, 1e-12);
    CHECK_NEAR(between, 12.5 / 3, 1e-12);
    /* Unbalanced: {1,3} and {2,4,6,8}: means 2 and 5, grand 4; SSB = 2 (4)
     * + 4 (1) = 12, MSB = 12; SSW = 2 + 20 = 22 on 4 df, MSW = 5.5;
     * n0 = (6 - 20/6) / 1 = 8/3; between = (12 - 5.5) * 3 / 8 = 2.4375. */
    const double c[2] = { 1, 3 }, d[4] = { 2, 4, 6, 8 };
    ib_session_sample u[2] = { { c, 2 }, { d, 4 } };
    ib__sessions_variance(u, 2, &between, &within);
    CHECK_NEAR(within, 5.5, 1e-12);
    CHECK_NEAR(between, 2.4375, 1e-12);
    /* Sessions alike, runs apart: the between estimate would be negative. */
    const double e[3] = { 1, 5, 9 }, f[3] = { 2, 5, 8 };
    ib_session_sample v[2] = { { e, 3 }, { f, 3 } };
    ib__sessions_variance(v, 2, &between, &within);
    CHECK_NEAR(between, 0, 0);
    CHECK_NEAR(within, (16 + 16 + 9 + 9) / 4.0, 1e-12);
}

static void test_geomean_of_medians(void)
{
    const double a[3] = { 3, 1, 2 }, b[5] = { 9, 9, 9, 9, 9 }, c[2] = { 4, 6 };
    ib_session_sample s[3] = { { a, 3 }, { b, 5 }, { c, 2 } };
    ib_sessions_stats st;
    ib_error err = { { 0 } };
    CHECK(ib_sessions_compute(s, 3, &st, &err) == IB_OK);
    /* Session medians 2, 9, 5, one value each whatever its runs (the
     * pooled median, 9, would let the session with the most runs decide):
     * geometric mean 90^(1/3) = 4.481405; logs 0.693147, 2.197225,
     * 1.609438, mean 1.499937, sd 0.758001; t(0.975, 2) = 4.3027, half
     * 4.3027 * 0.758001 / sqrt(3) = 1.883010: [0.681782, 29.456632]. */
    CHECK_NEAR(st.geomean_ms, 4.481404746557165, 1e-12);
    CHECK_NEAR(st.ci95_ms[0], 0.6817815674202995, 1e-9);
    CHECK_NEAR(st.ci95_ms[1], 29.456631657635416, 1e-7);
    CHECK_NEAR(st.precision, (29.456631657635416 - 0.6817815674202995) / 2 / 4.481404746557165, 1e-8);
    CHECK_NEAR(st.spread, (9 - 2) / 4.481404746557165, 1e-12);
    CHECK_EQ_INT(st.k, 3);
    CHECK_EQ_INT(st.n, 10);
    CHECK(st.between_share > 0.5);
    /* One session: no interval across sessions. */
    CHECK(ib_sessions_compute(s, 1, &st, &err) == IB_OK);
    CHECK(isnan(st.ci95_ms[0]) && isnan(st.precision));
    CHECK_NEAR(st.geomean_ms, 2, 1e-15);
}

static void test_refuses(void)
{
    ib_sessions_stats st;
    ib_error err = { { 0 } };
    const double ok[2] = { 1, 2 }, bad[2] = { 1, -1 };
    ib_session_sample s[2] = { { ok, 2 }, { bad, 2 } };
    CHECK(ib_sessions_compute(s, 0, &st, &err) == IB_ERR_INVALID_ARG);
    CHECK(ib_sessions_compute(s, 2, &st, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "session 2 sample 1") != NULL);
    ib_session_sample empty[1] = { { ok, 0 } };
    CHECK(ib_sessions_compute(empty, 1, &st, &err) == IB_ERR_INVALID_ARG);
    CHECK(ib_sessions_compute(s, IB_SESSIONS_MAX + 1, &st, &err) == IB_ERR_INVALID_ARG);
    ib_comparison c;
    CHECK(ib_compare_sessions(s, 1, s, 1, 0.01, &c, &err) == IB_ERR_INVALID_ARG);
}

/* Synthetic sessions: session i's runs are 100 + b_i + e_ij, b_i ~ N(0,
 * sb^2), e_ij ~ N(0, sw^2); the true median (of the session medians, and
 * of everything) is 100. */
#define K 10
#define RUNS 30
typedef struct synthetic {
    double runs[K][RUNS];
    ib_session_sample s[K];
} synthetic;

static void make_sessions(synthetic *d, double sb, double sw, double offset, uint64_t *rng)
{
    for (size_t i = 0; i < K; i++) {
        double b = sb * gaussian(rng);
        for (size_t j = 0; j < RUNS; j++) d->runs[i][j] = 100 + offset + b + sw * gaussian(rng);
        check_sort(d->runs[i], RUNS);
        d->s[i] = (ib_session_sample){ d->runs[i], RUNS };
    }
}

static void test_two_level_coverage(void)
{
    /* Between-session spread 1, within 2 (sessions of 30 runs): each
     * session median is off by about sqrt(1 + pi/2 4/30) = 1.1, of which a
     * one-level interval of the pooled runs sees only the within part. */
    const size_t trials = 2000;
    uint64_t rng = 12345;
    size_t two_level = 0, one_level = 0;
    static synthetic d;
    for (size_t t = 0; t < trials; t++) {
        make_sessions(&d, 1.0, 2.0, 0, &rng);
        ib_sessions_stats st;
        CHECK(ib_sessions_compute(d.s, K, &st, NULL) == IB_OK);
        two_level += st.ci95_ms[0] <= 100 && st.ci95_ms[1] >= 100;
        ib_stats pooled;
        CHECK(ib_stats_compute(&d.runs[0][0], K * RUNS, &pooled) == IB_OK);
        one_level += pooled.ci95_median[0] <= 100 && pooled.ci95_median[1] >= 100;
    }
    double cover = (double)two_level / (double)trials, cover1 = (double)one_level / (double)trials;
    fprintf(stderr, "coverage over %zu trials: two-level %.3f, one-level %.3f\n", trials, cover, cover1);
    CHECK(cover >= 0.93 && cover <= 0.97);
    CHECK(cover1 < 0.80);
}

/* Sessions in two host states, as the H200's launch-bound sessions fall
 * (docs/measurements.md): each session at 100 or, with probability 0.3,
 * at 125 (a whole session slower), runs spread by 2 around it. */
static void make_two_state_sessions(synthetic *d, uint64_t *rng)
{
    for (size_t i = 0; i < K; i++) {
        double level = (double)(ib__splitmix64(rng) >> 11) * 0x1p-53 < 0.3 ? 125 : 100;
        for (size_t j = 0; j < RUNS; j++) d->runs[i][j] = level + 2 * gaussian(rng);
        check_sort(d->runs[i], RUNS);
        d->s[i] = (ib_session_sample){ d->runs[i], RUNS };
    }
}

static void test_two_state_population(void)
{
    /* The figure estimated is the population's geometric mean of session
     * medians, exp(0.7 ln 100 + 0.3 ln 125) = 106.9; ten sessions from two
     * groups can land mostly in one, and the interval must still cover it
     * (a median of the session medians would jump between the groups).
     * Two sets of the same population compared must rarely be called
     * different: at most the 5% a 95% interval allows, at a 1% threshold. */
    const double truth = exp(0.7 * log(100.0) + 0.3 * log(125.0));
    const size_t trials = 2000;
    uint64_t rng = 4242;
    size_t covered = 0, false_verdicts = 0;
    static synthetic a, b;
    for (size_t t = 0; t < trials; t++) {
        make_two_state_sessions(&a, &rng);
        make_two_state_sessions(&b, &rng);
        ib_sessions_stats st;
        CHECK(ib_sessions_compute(a.s, K, &st, NULL) == IB_OK);
        covered += st.ci95_ms[0] <= truth && st.ci95_ms[1] >= truth;
        ib_comparison c;
        CHECK(ib_compare_sessions(a.s, K, b.s, K, 0.01, &c, NULL) == IB_OK);
        false_verdicts += c.verdict == IB_CHANGE_FASTER || c.verdict == IB_CHANGE_SLOWER;
    }
    double cover = (double)covered / (double)trials, wrong = (double)false_verdicts / (double)trials;
    fprintf(stderr, "two host states, %zu trials: coverage %.3f, false verdicts %.3f\n", trials, cover,
            wrong);
    CHECK(cover >= 0.92 && cover <= 0.975);
    CHECK(wrong <= 0.05);
}

static void test_compare_two_level(void)
{
    uint64_t rng = 777;
    static synthetic a, b;
    ib_error err = { { 0 } };
    ib_comparison c;
    /* Sessions that differ by 1% (between) and runs by 0.2%: B 1% slower
     * on its runs. The runs alone call it slower; the sessions say it
     * cannot be told. */
    make_sessions(&a, 1.0, 0.2, 0, &rng);
    make_sessions(&b, 1.0, 0.2, 1.0, &rng);
    CHECK(ib_compare_sessions(a.s, K, b.s, K, 0.005, &c, &err) == IB_OK);
    CHECK(c.two_level);
    CHECK(c.change_ci95[0] < c.change && c.change < c.change_ci95[1]);
    CHECK(c.verdict == IB_CHANGE_INCONCLUSIVE);
    ib_comparison one;
    CHECK(ib_compare_samples(&a.runs[0][0], K * RUNS, &b.runs[0][0], K * RUNS, 0.005, &one, &err) == IB_OK);
    CHECK(!one.two_level);
    CHECK(one.change_ci95[1] - one.change_ci95[0] < (c.change_ci95[1] - c.change_ci95[0]) / 2);
    /* 10% slower is slower on both levels. */
    make_sessions(&b, 1.0, 0.2, 10.0, &rng);
    CHECK(ib_compare_sessions(a.s, K, b.s, K, 0.01, &c, &err) == IB_OK);
    CHECK(c.verdict == IB_CHANGE_SLOWER);
    CHECK(c.change > 0.05 && c.change_ci95[0] > 0.05);
    /* Reproducible: the same sessions, the same interval. */
    ib_comparison again;
    CHECK(ib_compare_sessions(a.s, K, b.s, K, 0.01, &again, &err) == IB_OK);
    CHECK(again.change_ci95[0] == c.change_ci95[0] && again.change_ci95[1] == c.change_ci95[1]);
    /* Welch's t by hand: A's session medians 1, 1.2, 1.5 (log sd 0.2036)
     * against B's 1.10-1.13 (log sd 0.0116); variances of the means
     * 0.013815 and 0.0000338, df (Welch-Satterthwaite) 2.0098, rounded
     * down to 2: t 4.3027. Change exp(mean log B - mean log A) - 1 =
     * -8.3437%, interval [-44.690%, +51.886%] (with the pooled df of 5 it
     * would be narrower: [-31.23%, ...]). Every run of a session alike. */
    static double ra[3][6], rb[4][6];
    const double ma[3] = { 1.0, 1.2, 1.5 }, mb[4] = { 1.10, 1.11, 1.12, 1.13 };
    ib_session_sample sa[3], sb[4];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 6; j++) ra[i][j] = ma[i];
        sa[i] = (ib_session_sample){ ra[i], 6 };
    }
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 6; j++) rb[i][j] = mb[i];
        sb[i] = (ib_session_sample){ rb[i], 6 };
    }
    CHECK(ib_compare_sessions(sa, 3, sb, 4, 0.01, &c, &err) == IB_OK);
    CHECK_NEAR(c.change, -0.08343726187738389, 1e-12);
    CHECK_NEAR(c.change_ci95[0], -0.4468967829644062, 1e-9);
    CHECK_NEAR(c.change_ci95[1], 0.5188616284268789, 1e-9);
}

/* ------------------------------------------------------------------------ */
/* Sessions of the fake workload merged                                      */
/* ------------------------------------------------------------------------ */

/* Session s's runs: 1 ms + s * 0.1 ms (a per-session offset), + 0.001 ms
 * every other run. */
typedef struct offset_ctx {
    double offset_ms;
} offset_ctx;

static double offset_duration(int64_t batch, int64_t index, void *ctx)
{
    (void)batch;
    return 1.0 + ((offset_ctx *)ctx)->offset_ms + (index % 2 ? 0.001 : 0);
}

/* The latency JSON of one session of the fake workload with that offset. */
static char *fake_session_doc(double offset_ms, int64_t runs)
{
    offset_ctx ctx = { offset_ms };
    ib__fake_script s = { .duration_ms = offset_duration,
                          .ctx = &ctx,
                          .fail_at_run = -1,
                          .lose_device_at_run = -1,
                          .oom_at_run = -1,
                          .has_batch_dim = true,
                          .has_device_timer = true };
    ib_workload *w = check_open_fake(&s);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 2;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.runs = runs;
    ib_latency_result r;
    ib_error err;
    CHECK(ib_measure_latency(w, &cfg, &r, &err) == IB_OK);
    char *doc = ib_latency_report_json(&r, ib_workload_get_info(w), &cfg);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
    return doc;
}

static void test_merge_fake_sessions(void)
{
    /* Sessions at 1.0, 1.3, 1.1, (crashed), 1.2 ms: medians 1.0005 +
     * offset. */
    const double offsets[5] = { 0, 0.3, 0.1, 0, 0.2 };
    char *docs[5];
    ib_session_outcome o[5];
    for (size_t i = 0; i < 5; i++) {
        docs[i] = i == 3 ? NULL : fake_session_doc(offsets[i], 40);
        o[i] = (ib_session_outcome){ docs[i], docs[i] ? strlen(docs[i]) : 0, i == 3 ? -9 : 0,
                                     i == 3 ? "ended by signal 9 (Killed)" : "" };
    }
    ib_error err = { { 0 } };
    char *merged = ib_sessions_merge_json(o, 5, 6, &err);
    CHECK(merged != NULL);
    ib_latency_file f;
    CHECK(merged && ib_latency_file_parse(merged, strlen(merged), &f, &err) == IB_OK);
    CHECK_EQ_INT(f.n_sessions, 5);
    CHECK_EQ_INT(f.sessions_requested, 6);
    CHECK_EQ_INT(f.n, 4 * 40); /* the runs of the sessions that measured, pooled */
    CHECK(f.partial);          /* one failed, one never ran */
    CHECK(f.warnings & IB_WARN_SESSIONS_INCOMPLETE);
    CHECK(f.timing == IB_TIMING_DEVICE_EVENTS);
    CHECK(f.sessions[3].samples_ms == NULL && f.sessions[3].exit_status == -9);
    CHECK(!strcmp(f.sessions[3].message, "ended by signal 9 (Killed)"));
    CHECK_NEAR(f.sessions[1].samples_ms[0], 1.3 + 0.001, 1e-9); /* timed run 1 is odd */
    size_t k;
    ib_session_sample *s = ib__measured_sessions(&f, &k);
    CHECK_EQ_INT(k, 4);
    ib_sessions_stats st;
    CHECK(s && ib_sessions_compute(s, k, &st, &err) == IB_OK);
    /* The four medians 1.0005, 1.3005, 1.1005, 1.2005: geometric mean
     * 1.145038. */
    CHECK_NEAR(st.geomean_ms, 1.1450380408486769, 1e-9);
    CHECK(st.between_share > 0.99);
    CHECK_NEAR(st.spread, 0.3 / st.geomean_ms, 1e-9);
    char *text = ib_sessions_report_text(&f);
    CHECK(text && strstr(text, "failed: ended by signal 9") && strstr(text, "INCOMPLETE: 5 of 6"));
    CHECK(
        text &&
        strstr(text, "INCOMPLETE: 5 of 6 sessions ran; 1 failed (session 4: ended by signal 9 (Killed))\n"));
    char *page = ib_sessions_report_html(&f);
    CHECK(page && count_occurrences(page, "class=\"run\"") == 4 && strstr(page, "95% CI across sessions"));
    /* compare: a set of sessions with itself, on two levels. */
    ib_comparison c;
    CHECK(ib_compare_files(&f, &f, 0.01, &c, &err) == IB_OK);
    CHECK(c.two_level && c.change == 0 && c.verdict != IB_CHANGE_SLOWER);
    ib_free(text);
    ib_free(page);
    free(s);
    ib_latency_file_free(&f);
    ib_free(merged);
    /* Nothing measured: no document. */
    ib_session_outcome none[1] = { { NULL, 0, 1, "boom" } };
    CHECK(ib_sessions_merge_json(none, 1, 1, &err) == NULL);
    for (size_t i = 0; i < 5; i++) ib_free(docs[i]);
}

/* ------------------------------------------------------------------------ */
/* One session against a known spread between sessions                       */
/* ------------------------------------------------------------------------ */

/* n runs of `ms` each, +-0.1% alternately: a narrow interval. */
static void steady_runs(double *x, size_t n, double ms)
{
    for (size_t i = 0; i < n; i++) x[i] = ms * (i % 2 ? 1.001 : 0.999);
}

/* The interval widened in quadrature on the log scale, exactly. */
static void test_widen_exact(void)
{
    static double a[200], b[200];
    steady_runs(a, 200, 1.0);
    steady_runs(b, 200, 1.02);
    ib_comparison c;
    ib_error err = { { 0 } };
    CHECK(ib_compare_samples(a, 200, b, 200, 0.01, &c, &err) == IB_OK);
    CHECK(c.verdict == IB_CHANGE_SLOWER); /* the runs alone: 2% slower */
    const ib_comparison runs = c;
    CHECK(ib_compare_widen(&c, 0.01, 0, 1, 1, "test", &err) == IB_OK);
    double half = 1.959963984540054 * 0.01 * sqrt(2.0), mid = log1p(runs.change);
    double lo = mid - log1p(runs.change_ci95[0]), hi = log1p(runs.change_ci95[1]) - mid;
    CHECK_NEAR(c.change_ci95[0], expm1(mid - sqrt(lo * lo + half * half)), 1e-15);
    CHECK_NEAR(c.change_ci95[1], expm1(mid + sqrt(hi * hi + half * half)), 1e-15);
    CHECK(c.runs_ci95[0] == runs.change_ci95[0] && c.runs_ci95[1] == runs.change_ci95[1]);
    CHECK(c.change == runs.change && c.between_sd == 0.01 && c.between_df == 0 &&
          !strcmp(c.spread_source, "test"));
    CHECK(c.verdict == IB_CHANGE_INCONCLUSIVE); /* 2% is within 1.96 x 1% x sqrt 2 */
    CHECK(ib_compare_widen(&c, 0.01, 0, 1, 1, "twice", &err) == IB_ERR_INVALID_ARG);
    /* The other side in 4 sessions: its share of the variance is a quarter. */
    c = runs;
    CHECK(ib_compare_widen(&c, 0.01, 0, 4, 0, NULL, &err) == IB_OK);
    half = 1.959963984540054 * 0.01 * sqrt(1.25);
    CHECK_NEAR(c.change_ci95[1], expm1(mid + sqrt(hi * hi + half * half)), 1e-15);
    /* A spread learnt with 4 degrees of freedom (a record of 5 sessions):
     * Student's t, 2.7764, in place of 1.96; with 2, 4.3027. */
    const double t975[] = { [2] = 4.3027, [4] = 2.7764 };
    for (size_t df = 2; df <= 4; df += 2) {
        c = runs;
        CHECK(ib_compare_widen(&c, 0.01, df, 1, 1, NULL, &err) == IB_OK);
        half = t975[df] * 0.01 * sqrt(2.0);
        CHECK_NEAR(c.change_ci95[0], expm1(mid - sqrt(lo * lo + half * half)), 1e-15);
        CHECK_NEAR(c.change_ci95[1], expm1(mid + sqrt(hi * hi + half * half)), 1e-15);
        CHECK(c.between_df == df);
    }
    for (int bad = 0; bad < 3; bad++) {
        c = runs;
        CHECK(ib_compare_widen(&c, (double[]){ 10, -0.01, NAN }[bad], 0, 1, 1, NULL, &err) ==
              IB_ERR_INVALID_ARG);
    }
    /* Sessions that differed no more than their runs: the interval stays,
     * the source is said. */
    c = runs;
    CHECK(ib_compare_widen(&c, 0, 0, 1, 1, NULL, &err) == IB_OK);
    CHECK_NEAR(c.change_ci95[0], runs.change_ci95[0], 1e-15);
    CHECK(c.verdict == runs.verdict && !strcmp(c.spread_source, "a known spread"));
    c = runs;
    c.two_level = true;
    CHECK(ib_compare_widen(&c, 0.01, 0, 1, 1, NULL, &err) == IB_ERR_INVALID_ARG);
}

/* A change smaller than the spread between sessions is never called
 * faster or slower; one far larger still is. */
static void test_widen_never_calls_spread_real(void)
{
    static double a[300], b[300];
    steady_runs(a, 300, 2.0);
    const double spreads[3] = { 0.005, 0.01, 0.03 };
    for (int i = 0; i < 3; i++)
        for (int j = -10; j <= 10; j++) {
            double change = spreads[i] * j / 10.0; /* within +-1 sd */
            steady_runs(b, 300, 2.0 * (1 + change));
            ib_comparison c;
            ib_error err = { { 0 } };
            CHECK(ib_compare_samples(a, 300, b, 300, 0.001, &c, &err) == IB_OK);
            CHECK(ib_compare_widen(&c, spreads[i], 0, 1, 1, NULL, &err) == IB_OK);
            CHECK(c.verdict != IB_CHANGE_FASTER && c.verdict != IB_CHANGE_SLOWER);
        }
    steady_runs(b, 300, 2.0 * 1.2);
    ib_comparison c;
    ib_error err = { { 0 } };
    CHECK(ib_compare_samples(a, 300, b, 300, 0.01, &c, &err) == IB_OK);
    CHECK(ib_compare_widen(&c, 0.01, 0, 1, 1, NULL, &err) == IB_OK);
    CHECK(c.verdict == IB_CHANGE_SLOWER);
}

/* A result of 4 sessions (offsets 0, 0.3, 0.1, 0.2 ms a session, times
 * scale) read back. */
static void four_sessions(ib_latency_file *f, double scale)
{
    const double offsets[4] = { 0, 0.3, 0.1, 0.2 };
    char *docs[4];
    ib_session_outcome o[4];
    for (size_t i = 0; i < 4; i++) {
        docs[i] = fake_session_doc(offsets[i] * scale, 30);
        o[i] = (ib_session_outcome){ docs[i], strlen(docs[i]), 0, "" };
    }
    ib_error err = { { 0 } };
    char *merged = ib_sessions_merge_json(o, 4, 4, &err);
    CHECK(merged && ib_latency_file_parse(merged, strlen(merged), f, &err) == IB_OK);
    ib_free(merged);
    for (size_t i = 0; i < 4; i++) ib_free(docs[i]);
}

/* compare of one session against a result of sessions: widened by theirs. */
static void test_compare_files_widens_by_sessions(void)
{
    ib_latency_file many, one;
    four_sessions(&many, 1);
    char *doc = fake_session_doc(0.1, 30);
    ib_error err = { { 0 } };
    CHECK(ib_latency_file_parse(doc, strlen(doc), &one, &err) == IB_OK);
    double sd;
    size_t k;
    CHECK(ib_latency_file_spread(&many, &sd, &k, &err) == IB_OK);
    CHECK_EQ_INT(k, 4);
    CHECK(sd > 0.05);
    CHECK(ib_latency_file_spread(&one, &sd, &k, &err) == IB_ERR_INVALID_ARG);
    ib_comparison c;
    CHECK(ib_compare_files(&one, &many, 0.01, &c, &err) == IB_OK);
    CHECK(!c.two_level);
    CHECK(ib_latency_file_spread(&many, &sd, &k, &err) == IB_OK && c.between_sd == sd);
    CHECK(!strcmp(c.spread_source, "the 4 sessions of B"));
    CHECK(c.change_ci95[0] < c.runs_ci95[0] && c.change_ci95[1] > c.runs_ci95[1]);
    char *text = ib_comparison_report_text(&c, &one, "one.json", &many, "many.json");
    CHECK(text && strstr(text, "covers one session only; sessions of this kind of run differ by sd"));
    CHECK(text && strstr(text, "from the 4 sessions of B"));
    ib_free(text);
    ib_free(doc);
    ib_latency_file_free(&one);
    ib_latency_file_free(&many);
}

static void test_spread_record(void)
{
    ib_latency_file f, g;
    four_sessions(&f, 1);
    four_sessions(&g, 2); /* the same kind, sessions twice as far apart */
    double sf, sg, sd;
    size_t k, sessions, results;
    ib_error err = { { 0 } };
    CHECK(ib_latency_file_spread(&f, &sf, &k, &err) == IB_OK &&
          ib_latency_file_spread(&g, &sg, &k, &err) == IB_OK);
    char *one = ib_spread_record_add(NULL, 0, &f, &err);
    CHECK(one && ib_spread_record_find(one, strlen(one), &f, &sd, &sessions, &results, &err) == IB_OK);
    CHECK_NEAR(sd, sf, 1e-15);
    CHECK(sessions == 4 && results == 1);
    char *two = one ? ib_spread_record_add(one, strlen(one), &g, &err) : NULL;
    CHECK(two && ib_spread_record_find(two, strlen(two), &f, &sd, &sessions, &results, &err) == IB_OK);
    CHECK_NEAR(sd, sqrt((3 * sf * sf + 3 * sg * sg) / 6), 1e-12);
    CHECK(sessions == 8 && results == 2);
    CHECK_NEAR(ib_spread_pooled(sf, 3, sg, 3), sd, 1e-12);
    CHECK(ib_spread_pooled(1, 0, 2, 0) == 0);
    /* Another kind of run (another batch) is not found. */
    ib_latency_file other = f;
    other.batch = 8;
    CHECK(two && ib_spread_record_find(two, strlen(two), &other, &sd, &sessions, &results, &err) == IB_OK);
    CHECK(results == 0 && sd == 0);
    /* A file that is not a record is refused, never guessed at. */
    const char *bad[] = {
        "{}", "not json", "{\"schema\":\"inferbench.spread/2\",\"kinds\":[]}",
        "{\"schema\":\"inferbench.spread/1\",\"kinds\":[{\"key\":\"k\",\"between_sd_log\":-1,"
        "\"df\":1,\"results\":1}]}",
        "{\"schema\":\"inferbench.spread/1\",\"kinds\":[{\"key\":\"k\",\"between_sd_log\":0.1,"
        "\"df\":0.5,\"results\":1}]}"
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(ib_spread_record_find(bad[i], strlen(bad[i]), &f, &sd, &sessions, &results, &err) ==
              IB_ERR_INVALID_ARG);
        CHECK(ib_spread_record_add(bad[i], strlen(bad[i]), &f, &err) == NULL);
    }
    CHECK(strstr(err.message, "not an inferbench calibration record") != NULL);
    /* A result of one session has no spread to record. */
    char *doc = fake_session_doc(0, 30);
    ib_latency_file single;
    CHECK(ib_latency_file_parse(doc, strlen(doc), &single, &err) == IB_OK);
    CHECK(ib_spread_record_add(NULL, 0, &single, &err) == NULL);
    ib_latency_file_free(&single);
    ib_free(doc);
    ib_free(one);
    ib_free(two);
    ib_latency_file_free(&f);
    ib_latency_file_free(&g);
}

/* ------------------------------------------------------------------------ */
/* Other work on the machine                                                 */
/* ------------------------------------------------------------------------ */

static void test_other_processes(void)
{
    unsigned self = (unsigned)getpid(), hidden = 4000000000u; /* no such pid here */
    const unsigned long long mem[3] = { 10, 20, 30 };
    ib_process_info out[4];
    /* NVML lists us, pid 1 and one not visible: the other two are others. */
    const unsigned same_ns[3] = { self, 1, hidden };
    CHECK_EQ_INT(ib__other_processes(same_ns, mem, 3, self, true, out, 4), 2);
    CHECK_EQ_INT(out[0].pid, 1);
    CHECK(out[0].name[0] && strcmp(out[0].name, "?") != 0);
    CHECK_EQ_INT(out[0].gpu_memory_bytes, 20);
    CHECK_EQ_INT(out[1].pid, hidden);
    CHECK(!strcmp(out[1].name, "?"));
    /* Another PID namespace: we are not listed under our pid; while we hold
     * a context, one hidden process is us. */
    const unsigned other_ns[2] = { hidden, hidden - 1 };
    CHECK_EQ_INT(ib__other_processes(other_ns, mem, 2, self, true, out, 4), 1);
    CHECK_EQ_INT(out[0].pid, hidden - 1);
    /* Without a context of ours (the parent of sessions), all are others. */
    CHECK_EQ_INT(ib__other_processes(other_ns, mem, 2, self, false, out, 4), 2);
    /* More than fit: counted, the first cap kept. */
    const unsigned many[3] = { 1, hidden, hidden - 1 };
    CHECK_EQ_INT(ib__other_processes(many, mem, 3, self, false, out, 1), 3);
    CHECK_EQ_INT(out[0].pid, 1);
}

static void test_cpu_other_cores(void)
{
    /* 400 jiffies of machine time on 4 CPUs (100 each), 150 busy of which
     * 50 ours: the others took 100 / 400 of the machine, one core. */
    CHECK_NEAR(ib__cpu_other_cores(150, 400, 50, 4), 1.0, 1e-12);
    CHECK_NEAR(ib__cpu_other_cores(50, 400, 50, 4), 0.0, 0);
    /* Our count can run ahead of the machine's by a tick: never negative. */
    CHECK_NEAR(ib__cpu_other_cores(49, 400, 50, 4), 0.0, 0);
    CHECK(isnan(ib__cpu_other_cores(10, 0, 0, 4)));
    CHECK(isnan(ib__cpu_other_cores(10, 100, 0, 0)));
    ib_env env;
    memset(&env, 0, sizeof env);
    ib__cpu_watch w;
    ib__cpu_watch_start(&w, &env);
    CHECK(w.ok && env.n_cpus >= 1 && env.load_average_1m >= 0);
    /* A CPU run warns only beside at least IB__CPU_BUSY_CORES of other work;
     * a GPU run never warns of the CPU. */
    double until = ib__now_ms() + 50; /* a few jiffies of our own */
    while (ib__now_ms() < until) {
    }
    unsigned bits = ib__cpu_watch_stop(&w, &env, false);
    CHECK(bits == 0 && env.other_cpu_cores >= 0);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_variance_hand_computed);
    RUN(test_geomean_of_medians);
    RUN(test_refuses);
    RUN(test_two_level_coverage);
    RUN(test_two_state_population);
    RUN(test_compare_two_level);
    RUN(test_merge_fake_sessions);
    RUN(test_widen_exact);
    RUN(test_widen_never_calls_spread_real);
    RUN(test_compare_files_widens_by_sessions);
    RUN(test_spread_record);
    RUN(test_other_processes);
    RUN(test_cpu_other_cores);
    return check_summary("test_sessions");
}
