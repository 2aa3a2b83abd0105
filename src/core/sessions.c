/* Statistics across sessions: a measurement repeated in fresh processes
 * varies from one process to the next (kernel choices, memory placement,
 * clocks), by more than the runs of one process show. The geometric mean of
 * the session medians, the variance split between and within sessions, and
 * a t-interval over the sessions that covers both (docs/method.md,
 * "Sessions"). */
#include "core/sessions.h"
#include "core/compare.h"
#include "core/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ib__sessions_variance(const ib_session_sample *s, size_t k, double *between_var, double *within_var)
{
    *between_var = *within_var = 0;
    double total = 0, n_all = 0, sum_n2 = 0;
    for (size_t i = 0; i < k; i++) {
        for (size_t j = 0; j < s[i].n; j++) total += s[i].ms[j];
        n_all += (double)s[i].n;
        sum_n2 += (double)s[i].n * (double)s[i].n;
    }
    if (k < 2 || n_all <= (double)k) return;
    double grand = total / n_all, ss_between = 0, ss_within = 0;
    for (size_t i = 0; i < k; i++) {
        double mean = 0;
        for (size_t j = 0; j < s[i].n; j++) mean += s[i].ms[j];
        mean /= (double)s[i].n;
        ss_between += (double)s[i].n * (mean - grand) * (mean - grand);
        for (size_t j = 0; j < s[i].n; j++) ss_within += (s[i].ms[j] - mean) * (s[i].ms[j] - mean);
    }
    double ms_between = ss_between / (double)(k - 1), ms_within = ss_within / (n_all - (double)k);
    double n0 = (n_all - sum_n2 / n_all) / (double)(k - 1);
    *within_var = ms_within;
    *between_var = fmax(0, (ms_between - ms_within) / n0);
}

static ib_status check_sessions(const ib_session_sample *s, size_t k, const char *which, ib_error *err)
{
    IB_FAIL_IF(!s || k < 1 || k > IB_SESSIONS_MAX, err, IB_ERR_INVALID_ARG,
               "%s has %zu sessions: from 1 to %d are taken", which, s ? k : 0, IB_SESSIONS_MAX);
    for (size_t i = 0; i < k; i++) {
        IB_FAIL_IF(!s[i].ms || s[i].n == 0, err, IB_ERR_INVALID_ARG, "%s session %zu has no samples", which,
                   i + 1);
        for (size_t j = 0; j < s[i].n; j++)
            IB_FAIL_IF(!ib__is_duration_ms(s[i].ms[j]), err, IB_ERR_INVALID_ARG,
                       "%s session %zu sample %zu is not a duration (1e-6 to 1e9 ms)", which, i + 1, j);
    }
    return IB_OK;
}

/* Sorted copies of every session's samples, in one block: sorted[i].ms
 * points into *block (the caller frees it). */
static ib_status sort_sessions(const ib_session_sample *s, size_t k, ib_session_sample *sorted,
                               double **block, ib_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < k; i++) n += s[i].n;
    *block = malloc(n * sizeof **block);
    IB_FAIL_IF(!*block, err, IB_ERR_NO_MEMORY, "out of memory sorting %zu samples", n);
    double *at = *block;
    for (size_t i = 0; i < k; i++) {
        memcpy(at, s[i].ms, s[i].n * sizeof *at);
        ib__sort(at, s[i].n);
        sorted[i] = (ib_session_sample){ at, s[i].n };
        at += s[i].n;
    }
    return IB_OK;
}

/* The summary of k sessions' log medians: their mean and sample sd (0
 * for one session), and the span of the medians. */
typedef struct log_medians {
    double mean, sd, span;
} log_medians;

void ib__log_mean_sd(const double *v, size_t k, double *mean, double *sd)
{
    double sum = 0;
    for (size_t i = 0; i < k; i++) sum += log(v[i]);
    *mean = sum / (double)k;
    double ss = 0;
    for (size_t i = 0; i < k; i++) ss += (log(v[i]) - *mean) * (log(v[i]) - *mean);
    *sd = k > 1 ? sqrt(ss / (double)(k - 1)) : 0;
}

static ib_status summarize_medians(const ib_session_sample *sorted, size_t k, log_medians *out, ib_error *err)
{
    double *m = malloc(k * sizeof *m);
    IB_FAIL_IF(!m, err, IB_ERR_NO_MEMORY, "out of memory for %zu session medians", k);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < k; i++) {
        m[i] = ib_quantile_sorted(sorted[i].ms, sorted[i].n, 0.5);
        lo = fmin(lo, m[i]);
        hi = fmax(hi, m[i]);
    }
    ib__log_mean_sd(m, k, &out->mean, &out->sd);
    out->span = (hi - lo) / exp(out->mean);
    free(m);
    return IB_OK;
}

/* The variance components of the log times: latencies vary by factors
 * (a slower kernel slows every run by a share), and their right tail would
 * make the components of raw times those of a few outliers. */
static ib_status log_variance(const ib_session_sample *s, size_t k, double *between, double *within,
                              ib_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < k; i++) n += s[i].n;
    double *logs = malloc(n * sizeof *logs);
    ib_session_sample *ls = malloc(k * sizeof *ls);
    if (!logs || !ls) {
        free(logs);
        free(ls);
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory for the variance of %zu samples", n);
    }
    double *at = logs;
    for (size_t i = 0; i < k; i++) {
        for (size_t j = 0; j < s[i].n; j++) at[j] = log(s[i].ms[j]);
        ls[i] = (ib_session_sample){ at, s[i].n };
        at += s[i].n;
    }
    ib__sessions_variance(ls, k, between, within);
    free(logs);
    free(ls);
    return IB_OK;
}

/* Everything but the checks, on sorted sessions. */
static ib_status compute_sorted(const ib_session_sample *sorted, size_t k, ib_sessions_stats *out,
                                ib_error *err)
{
    out->k = k;
    for (size_t i = 0; i < k; i++) out->n += sorted[i].n;
    log_medians lm;
    IB_TRY(summarize_medians(sorted, k, &lm, err));
    out->geomean_ms = exp(lm.mean);
    out->spread = lm.span;
    double between, within;
    IB_TRY(log_variance(sorted, k, &between, &within, err));
    /* Sessions of one value each (a throughput figure) have no runs to
     * tell apart: all their variation is between them. */
    out->between_sd = out->n == k ? lm.sd : sqrt(between);
    out->within_sd = sqrt(within);
    out->between_share = between + within > 0 ? between / (between + within) : 0;
    out->ci95_ms[0] = out->ci95_ms[1] = out->precision = NAN;
    /* One session says nothing of how sessions differ. */
    if (k < 2) return IB_OK;
    /* Each session's median carries its runs' noise as well as the
     * session's own offset, so the spread of the k medians holds both
     * levels; Student's t for the few sessions there are. */
    double half = ib__t975(k - 1) * lm.sd / sqrt((double)k);
    out->ci95_ms[0] = exp(lm.mean - half);
    out->ci95_ms[1] = exp(lm.mean + half);
    out->precision = (out->ci95_ms[1] - out->ci95_ms[0]) / 2 / out->geomean_ms;
    return IB_OK;
}

ib_status ib_sessions_compute(const ib_session_sample *s, size_t k, ib_sessions_stats *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    IB_TRY(check_sessions(s, k, "the result", err));
    ib_session_sample *sorted = malloc(k * sizeof *sorted);
    IB_FAIL_IF(!sorted, err, IB_ERR_NO_MEMORY, "out of memory for %zu sessions", k);
    double *block = NULL;
    ib_status st = sort_sessions(s, k, sorted, &block, err);
    if (st == IB_OK) st = compute_sorted(sorted, k, out, err);
    free(block);
    free(sorted);
    return st;
}

/* The pooled runs of k sessions, one array; caller frees. */
static double *pool(const ib_session_sample *s, size_t k, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < k; i++) *n += s[i].n;
    double *all = malloc(*n * sizeof *all);
    if (!all) return NULL;
    for (size_t i = 0, at = 0; i < k; at += s[i].n, i++) memcpy(all + at, s[i].ms, s[i].n * sizeof *all);
    return all;
}

double ib__welch_half(double sd_a, size_t ka, double sd_b, size_t kb)
{
    double va = sd_a * sd_a / (double)ka, vb = sd_b * sd_b / (double)kb;
    double df = va + vb > 0
                    ? (va + vb) * (va + vb) / (va * va / (double)(ka - 1) + vb * vb / (double)(kb - 1))
                    : (double)(ka + kb - 2);
    return ib__t975((size_t)fmax(1, floor(df))) * sqrt(va + vb);
}

/* The change of the geometric means of session medians, B against A, and
 * its 95% interval: Welch's t on the difference of the mean log medians
 * (the sides may vary by different amounts), its degrees of freedom
 * rounded down (Welch-Satterthwaite), which widens the interval a little. */
static void welch_change(const log_medians *a, size_t ka, const log_medians *b, size_t kb, double *change,
                         double ci[2])
{
    double d = b->mean - a->mean, half = ib__welch_half(a->sd, ka, b->sd, kb);
    *change = expm1(d);
    ci[0] = expm1(d - half);
    ci[1] = expm1(d + half);
}

/* The comparison once both sides are checked: the one-level figures of the
 * pooled runs (the test, the summaries), then the change across sessions. */
static ib_status compare_checked(const ib_session_sample *a, size_t ka, const ib_session_sample *b, size_t kb,
                                 double threshold, ib_comparison *out, ib_error *err)
{
    size_t na, nb;
    double *pa = pool(a, ka, &na), *pb = pool(b, kb, &nb);
    ib_status st = pa && pb ? ib_compare_samples(pa, na, pb, nb, threshold, out, err)
                            : ib__fail(err, IB_ERR_NO_MEMORY, "out of memory pooling the sessions");
    free(pa);
    free(pb);
    IB_TRY(st);
    ib_session_sample *sorted = malloc((ka + kb) * sizeof *sorted);
    double *block_a = NULL, *block_b = NULL;
    st = sorted ? sort_sessions(a, ka, sorted, &block_a, err)
                : ib__fail(err, IB_ERR_NO_MEMORY, "out of memory for %zu sessions", ka + kb);
    if (st == IB_OK) st = sort_sessions(b, kb, sorted + ka, &block_b, err);
    log_medians la, lb;
    if (st == IB_OK) st = summarize_medians(sorted, ka, &la, err);
    if (st == IB_OK) st = summarize_medians(sorted + ka, kb, &lb, err);
    if (st == IB_OK) {
        welch_change(&la, ka, &lb, kb, &out->change, out->change_ci95);
        out->verdict = ib__change_verdict(out->change_ci95, threshold);
        out->two_level = true;
    }
    free(block_a);
    free(block_b);
    free(sorted);
    return st;
}

ib_status ib_compare_sessions(const ib_session_sample *a, size_t ka, const ib_session_sample *b, size_t kb,
                              double threshold, ib_comparison *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    IB_TRY(check_sessions(a, ka, "the baseline (A)", err));
    IB_TRY(check_sessions(b, kb, "the candidate (B)", err));
    IB_FAIL_IF(ka < 2 || kb < 2, err, IB_ERR_INVALID_ARG,
               "a two-level comparison needs at least 2 sessions on each side (A has %zu, B %zu)", ka, kb);
    return compare_checked(a, ka, b, kb, threshold, out, err);
}

ib_session_sample *ib__measured_sessions(const ib_latency_file *f, size_t *k)
{
    ib_session_sample *s = malloc((f->n_sessions ? f->n_sessions : 1) * sizeof *s);
    *k = 0;
    for (size_t i = 0; s && i < f->n_sessions; i++)
        if (f->sessions[i].samples_ms)
            s[(*k)++] = (ib_session_sample){ f->sessions[i].samples_ms, f->sessions[i].n };
    return s;
}

/* One side has one session: the runs compared, and when the other side
 * has sessions, the interval widened by how much they differed. */
static ib_status compare_runs(const ib__compare_side *a, const ib__compare_side *b, double threshold,
                              ib_comparison *out, ib_error *err)
{
    IB_TRY(ib_compare_samples(a->runs, a->n, b->runs, b->n, threshold, out, err));
    const ib__compare_side *many = a->k >= 2 ? a : b->k >= 2 ? b : NULL;
    ib_sessions_stats st;
    if (!many || ib_sessions_compute(many->sessions, many->k, &st, err) != IB_OK) return IB_OK;
    char source[200];
    snprintf(source, sizeof source, "the %zu sessions of %s", many->k, many == a ? "A" : "B");
    return ib_compare_widen(out, st.between_sd, many->k - 1, a->k, b->k, source, err);
}

ib_status ib__compare_sides(const ib__compare_side *a, const ib__compare_side *b, double threshold,
                            ib_comparison *out, ib_error *err)
{
    if (a->k >= 2 && b->k >= 2)
        return ib_compare_sessions(a->sessions, a->k, b->sessions, b->k, threshold, out, err);
    return compare_runs(a, b, threshold, out, err);
}

ib_status ib_compare_files(const ib_latency_file *a, const ib_latency_file *b, double threshold,
                           ib_comparison *out, ib_error *err)
{
    size_t ka, kb;
    ib_session_sample *sa = ib__measured_sessions(a, &ka), *sb = ib__measured_sessions(b, &kb);
    ib__compare_side side_a = { sa, ka, a->samples_ms, a->n }, side_b = { sb, kb, b->samples_ms, b->n };
    ib_status st = sa && sb ? ib__compare_sides(&side_a, &side_b, threshold, out, err)
                            : ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading the sessions");
    free(sa);
    free(sb);
    return st;
}

double ib__between_half(double between_sd, size_t df, size_t ka, size_t kb)
{
    double na = ka > 1 ? (double)ka : 1, nb = kb > 1 ? (double)kb : 1;
    /* A spread learnt from few sessions is itself uncertain: t, not z. */
    double quantile = df > 0 ? ib__t975(df) : 1.959963984540054;
    return quantile * between_sd * sqrt(1 / na + 1 / nb);
}

ib_status ib_compare_widen(ib_comparison *c, double between_sd, size_t df, size_t ka, size_t kb,
                           const char *source, ib_error *err)
{
    IB_FAIL_IF(!c || c->two_level || c->spread_source[0], err, IB_ERR_INVALID_ARG,
               "only a one-level comparison, once, is widened by the spread between sessions");
    IB_FAIL_IF(!(between_sd >= 0 && between_sd < 10), err, IB_ERR_INVALID_ARG,
               "a between-session sd of log times is a number from 0 to 10, not %g", between_sd);
    double half = ib__between_half(between_sd, df, ka, kb);
    double mid = log1p(c->change);
    double below = mid - log1p(c->change_ci95[0]), above = log1p(c->change_ci95[1]) - mid;
    c->runs_ci95[0] = c->change_ci95[0];
    c->runs_ci95[1] = c->change_ci95[1];
    c->change_ci95[0] = expm1(mid - sqrt(below * below + half * half));
    c->change_ci95[1] = expm1(mid + sqrt(above * above + half * half));
    c->verdict = ib__change_verdict(c->change_ci95, c->threshold);
    c->between_sd = between_sd;
    c->between_df = df;
    ib__strlcpy(c->spread_source, source && source[0] ? source : "a known spread", sizeof c->spread_source);
    return IB_OK;
}

ib_status ib_latency_file_spread(const ib_latency_file *f, double *between_sd, size_t *k, ib_error *err)
{
    ib_session_sample *s = ib__measured_sessions(f, k);
    IB_FAIL_IF(!s, err, IB_ERR_NO_MEMORY, "out of memory reading the sessions");
    ib_sessions_stats st;
    size_t measured = *k || f->n == 0 ? *k : 1; /* a result without sessions is one */
    ib_status r = *k >= 2
                      ? ib_sessions_compute(s, *k, &st, err)
                      : ib__fail(err, IB_ERR_INVALID_ARG,
                                 "it holds %zu session%s that measured: a spread between sessions needs 2",
                                 measured, measured == 1 ? "" : "s");
    free(s);
    *between_sd = r == IB_OK ? st.between_sd : 0;
    return r;
}

double ib_spread_pooled(double sd1, size_t df1, double sd2, size_t df2)
{
    double df = (double)df1 + (double)df2;
    return df > 0 ? sqrt(((double)df1 * sd1 * sd1 + (double)df2 * sd2 * sd2) / df) : 0;
}
