/* The plotting primitives of the HTML reports (round ticks, escaping,
 * bins, downsampling) and the reports on degenerate results. */
#include "check.h"
#include "report/printer.h"
#include "report/svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The axis' tick labels joined by spaces. */
static const char *labels(const ib__axis *a)
{
    static char out[512];
    char one[32];
    out[0] = '\0';
    for (int i = 0; i < a->n_ticks; i++) {
        if (i) strcat(out, " ");
        strcat(out, ib__axis_label(a, i, one));
    }
    return out;
}

#define CHECK_LABELS(axis, want)                                                                             \
    do {                                                                                                     \
        ib__axis check_axis_ = (axis);                                                                       \
        const char *got_ = labels(&check_axis_);                                                             \
        CHECK(strcmp(got_, want) == 0);                                                                      \
        if (strcmp(got_, want)) fprintf(stderr, "  got \"%s\", want \"%s\"\n", got_, want);                  \
    } while (0)

static void test_nice_ticks(void)
{
    CHECK_LABELS(ib__nice_axis(0, 7.3, 10), "0 1 2 3 4 5 6 7 8");
    CHECK_LABELS(ib__nice_axis(0, 7.3, 6), "0 2 4 6 8");
    CHECK_LABELS(ib__nice_axis(0.0123, 0.0189, 8), "0.012 0.013 0.014 0.015 0.016 0.017 0.018 0.019");
    CHECK_LABELS(ib__nice_axis(0.0123, 0.0189, 5), "0.012 0.014 0.016 0.018 0.020");
    CHECK_LABELS(ib__nice_axis(0, 123456, 8), "0 20000 40000 60000 80000 100000 120000 140000");
    CHECK_LABELS(ib__nice_axis(1.26, 1.83, 7), "1.2 1.4 1.6 1.8 2.0");
    /* A zero range is widened, around the value or around 0. */
    CHECK_LABELS(ib__nice_axis(5, 5, 6), "4.6 4.8 5.0 5.2 5.4");
    CHECK_LABELS(ib__nice_axis(0, 0, 6), "-1.0 -0.5 0.0 0.5 1.0");
    /* Every axis covers its data. */
    ib__axis a = ib__nice_axis(0.0123, 0.0189, 8);
    CHECK(a.lo <= 0.0123 && a.hi >= 0.0189);
    /* log2: whole doublings, labelled as the numbers. */
    CHECK_LABELS(ib__log2_axis(0, 4, 12), "1 2 4 8 16");
    CHECK_LABELS(ib__log2_axis(0, 0, 12), "1 2");
    CHECK_LABELS(ib__log2_axis(0, 20, 12), "1 4 16 64 256 1024 4096 16384 65536 262144 1048576");
}

static void test_escape(void)
{
    ib__sbuf b = { 0 };
    ib__xml_escape(&b, "<a href=\"x\">Tom & Jerry's</a>");
    char *s = ib__sbuf_finish(&b);
    CHECK(s && strcmp(s, "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;") == 0);
    free(s);
}

static void test_histogram(void)
{
    double x[1000];
    uint64_t state = 12345;
    for (int i = 0; i < 1000; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = 1 + (double)(state >> 11) / 9007199254740992.0;
    }
    x[0] = 1; /* the edges themselves */
    x[1] = 2;
    size_t counts[60], sum = 0;
    ib__histogram(x, 1000, 1, 2, 37, counts);
    for (int i = 0; i < 37; i++) sum += counts[i];
    CHECK_EQ_INT(sum, 1000);

    double sorted[3] = { 1, 1, 1 };
    CHECK_EQ_INT(ib__histogram_bins(sorted, 1), 5); /* clamped up */
    CHECK_EQ_INT(ib__histogram_bins(sorted, 3), 5); /* zero range */
    double wide[1000];
    for (int i = 0; i < 1000; i++) wide[i] = i < 999 ? 1 + i * 1e-3 : 1e6; /* one far outlier */
    CHECK_EQ_INT(ib__histogram_bins(wide, 1000), 60);                      /* clamped down */

    double with_nan[3] = { 1, NAN, 2 };
    CHECK_EQ_INT(ib__histogram(with_nan, 3, 1, 2, 5, counts), 0);
    CHECK_EQ_INT(counts[0] + counts[1] + counts[2] + counts[3] + counts[4], 2);

    /* Samples outside [lo, hi] are in no bin (an edge bin would draw them
     * where they are not): counted apart, for the chart to say. */
    double far[6] = { 0.5, 1, 1.5, 2, 3, 815 };
    CHECK_EQ_INT(ib__histogram(far, 6, 1, 2, 5, counts), 3);
    CHECK_EQ_INT(counts[0], 1);
    CHECK_EQ_INT(counts[2], 1);
    CHECK_EQ_INT(counts[4], 1);
    CHECK_EQ_INT(counts[1] + counts[3], 0);
}

static void test_downsample(void)
{
    enum { N = 10000 };
    static double y[N];
    static size_t idx[2000];
    for (int i = 0; i < N; i++) y[i] = 1.0 + (i % 7) * 1e-3;
    y[5555] = 9;   /* a spike */
    y[8001] = 0.5; /* a dip */
    size_t m = ib__downsample_minmax(y, N, 2000, idx);
    CHECK(m <= 2000 && m >= 1000);
    bool spike = false, dip = false, ordered = true;
    for (size_t i = 0; i < m; i++) {
        spike |= idx[i] == 5555;
        dip |= idx[i] == 8001;
        if (i && idx[i] <= idx[i - 1]) ordered = false;
    }
    CHECK(spike && dip && ordered);
    CHECK_EQ_INT(ib__downsample_minmax(y, 10, 2000, idx), 10);
}

static ib_workload_info evil_info(void)
{
    ib_workload_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.model, sizeof info.model, "<script>alert('x')</script>&.onnx");
    snprintf(info.provider, sizeof info.provider, "CPUExecutionProvider");
    info.batch = 1;
    return info;
}

/* One sample, all equal, partial, host clock only: the page still has both
 * plots and the model name cannot inject markup. */
static void test_latency_degenerate(void)
{
    ib_workload_info info = evil_info();
    double host[3] = { 0.05, 0.05, 0.05 };
    for (size_t n = 1; n <= 3; n += 2) {
        ib_latency_result r;
        memset(&r, 0, sizeof r);
        r.partial = true;
        r.stop_status = IB_ERR_INTERRUPTED;
        r.n = n;
        r.host_ms = host;
        r.cold_device_ms = NAN;
        r.launch_overhead_ms = NAN;
        CHECK(ib_stats_compute(host, n, &r.host) == IB_OK);
        char *html = ib_latency_report_html(&r, &info);
        CHECK(html != NULL);
        if (!html) continue;
        CHECK_EQ_INT(count_occurrences(html, "<svg"), 2);
        CHECK_EQ_INT(count_occurrences(html, "<script"), 0);
        CHECK(strstr(html, "&lt;script&gt;alert(&#39;x&#39;)") != NULL);
        CHECK(strstr(html, "PARTIAL") != NULL);
        CHECK(strstr(html, "nan") == NULL && strstr(html, "\"inf") == NULL);
        ib_free(html);
    }
    ib_latency_result none;
    memset(&none, 0, sizeof none);
    char *html = ib_latency_report_html(&none, &info);
    CHECK(html && count_occurrences(html, "<svg") == 0);
    ib_free(html);
}

static void test_throughput_single_point(void)
{
    ib_workload_info info = evil_info();
    ib_throughput_result *r = calloc(1, sizeof *r);
    if (!r) return;
    r->n_points = 2;
    r->points[0] = (ib_throughput_point){ .batch = 1,
                                          .status = IB_OK,
                                          .items_per_s = 1000,
                                          .items_per_s_sync = 900,
                                          .back_to_back_ms_per_run = 1 };
    r->points[1] = (ib_throughput_point){ .batch = 2, .status = IB_ERR_DEVICE_OOM };
    r->peak = r->knee = 0;
    r->best_within_budget = -1;
    char *html = ib_throughput_report_html(r, &info);
    CHECK(html != NULL);
    if (html) {
        CHECK_EQ_INT(count_occurrences(html, "<svg"), 1);
        CHECK_EQ_INT(count_occurrences(html, "class=\"pt-b2b\""), 1);
        CHECK_EQ_INT(count_occurrences(html, "class=\"pt-sync\""), 1);
        CHECK(strstr(html, "peak and knee") != NULL);
        CHECK(strstr(html, "nan") == NULL && strstr(html, "\"inf") == NULL);
    }
    ib_free(html);
    free(r);
}

/* ------------------------------------------------------------------------ */
/* The plots parsed back: what is drawn against the numbers it stands for    */
/* ------------------------------------------------------------------------ */

/* The text of the <svg> whose accessible title is `title`, or NULL. */
static char *svg_titled(const char *html, const char *title)
{
    char key[128];
    snprintf(key, sizeof key, "aria-label=\"%s\"", title);
    const char *start = html ? strstr(html, key) : NULL;
    const char *end = start ? strstr(start, "</svg>") : NULL;
    if (!end) return NULL;
    char *out = malloc((size_t)(end - start) + 1);
    if (!out) return NULL;
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return out;
}

/* The value of attribute `name` in the element starting at `elem`. */
static double attr(const char *elem, const char *name)
{
    char key[32];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *at = strstr(elem, key);
    const char *close = strchr(elem, '>');
    return at && (!close || at < close) ? strtod(at + strlen(key), NULL) : NAN;
}

/* A linear map from data to pixels, read off two tick labels of an axis. */
typedef struct pixel_map {
    double v0, p0, v1, p1;
} pixel_map;

static double to_px(const pixel_map *m, double v)
{
    return m->p0 + (v - m->v0) * (m->p1 - m->p0) / (m->v1 - m->v0);
}
static double to_value(const pixel_map *m, double px)
{
    return m->v0 + (px - m->p0) * (m->v1 - m->v0) / (m->p1 - m->p0);
}

/* The first and last tick labels of the x axis (anchor "middle") or the y
 * axis (anchor "end", drawn 4 px below its tick). log2: labels are 2^x. */
static pixel_map axis_map(const char *svg, bool x_axis, bool log2_labels)
{
    const char *anchor =
        x_axis ? "text-anchor=\"middle\" class=\"tick-label\">" : "text-anchor=\"end\" class=\"tick-label\">";
    pixel_map m = { NAN, NAN, NAN, NAN };
    bool first = true;
    for (const char *t = strstr(svg, "<text "); t; t = strstr(t + 1, "<text ")) {
        const char *a = strstr(t, anchor);
        if (!a || a > strchr(t, '>')) continue;
        double v = strtod(a + strlen(anchor), NULL);
        if (log2_labels) v = log2(v);
        double px = x_axis ? attr(t, "x") : attr(t, "y") - 4;
        if (first) m.v0 = v, m.p0 = px;
        m.v1 = v, m.p1 = px;
        first = false;
    }
    return m;
}

/* The histogram of the samples as docs/report.md describes it: the
 * Freedman-Diaconis bin count (clamped to 5..60) over min..max. */
static size_t expected_histogram(const double *x, size_t n, double *lo, double *w, size_t counts[60])
{
    double *s = malloc(n * sizeof *s);
    if (!s) return 0;
    memcpy(s, x, n * sizeof *s);
    check_sort(s, n);
    double width = 2 * (check_quantile7(s, n, 0.75) - check_quantile7(s, n, 0.25)) / cbrt((double)n);
    double bins = ceil((s[n - 1] - s[0]) / width);
    size_t k = bins < 5 ? 5 : bins > 60 ? 60 : (size_t)bins;
    *lo = s[0];
    *w = (s[n - 1] - s[0]) / (double)k;
    memset(counts, 0, 60 * sizeof *counts);
    for (size_t i = 0; i < n; i++) {
        size_t b = (size_t)floor((s[i] - *lo) / *w);
        counts[b < k ? b : k - 1]++;
    }
    free(s);
    return k;
}

/* Every bar of the latency histogram where the samples put it: its left
 * edge at its bin's, its count in its title, its height that count on the
 * y axis; no bar for an empty bin. */
static void check_histogram_bars(const double *x_ms, size_t n, double scale)
{
    ib_latency_result r;
    memset(&r, 0, sizeof r);
    r.n = n;
    r.host_ms = (double *)x_ms;
    r.cold_device_ms = r.launch_overhead_ms = NAN;
    CHECK(ib_stats_compute(x_ms, n, &r.host) == IB_OK);
    ib_workload_info info = evil_info();
    char *html = ib_latency_report_html(&r, &info);
    char *svg = svg_titled(html, "histogram of the timed runs");
    CHECK(svg != NULL);
    double *x = malloc(n * sizeof *x);
    if (!svg || !x) goto out;
    for (size_t i = 0; i < n; i++) x[i] = x_ms[i] * scale;
    double lo = 0, w = 1;
    size_t counts[60];
    size_t k = expected_histogram(x, n, &lo, &w, counts);
    pixel_map px = axis_map(svg, true, false), py = axis_map(svg, false, false);
    double base = to_px(&py, 0);
    size_t bars = 0, nonzero = 0, total = 0;
    for (size_t b = 0; b < k; b++) nonzero += counts[b] > 0;
    for (const char *rect = strstr(svg, "<rect class=\"bar\""); rect;
         rect = strstr(rect + 1, "<rect class=\"bar\"")) {
        double left = attr(rect, "x"), top = attr(rect, "y"), height = attr(rect, "height");
        const char *title = strstr(rect, "<title>");
        size_t count = title ? (size_t)strtoul(title + 7, NULL, 10) : 0;
        double bin = (to_value(&px, left) - lo) / w;
        size_t b = (size_t)lround(bin);
        bars++;
        total += count;
        CHECK(fabs(bin - (double)b) < 0.05 && b < k);
        if (b >= k) continue;
        CHECK_EQ_INT(count, counts[b]);
        CHECK_NEAR(top + height, base, 0.15);
        CHECK_NEAR(to_value(&py, top), (double)counts[b],
                   0.15 * fabs(py.v1 - py.v0) / fabs(py.p1 - py.p0) + 1e-9);
        CHECK_NEAR(attr(rect, "width"), fmax(1, to_px(&px, lo + w) - to_px(&px, lo)), 0.15);
    }
    CHECK_EQ_INT(bars, nonzero);
    CHECK_EQ_INT(total, n);
out:
    free(x);
    free(svg);
    ib_free(html);
}

static void test_histogram_drawn_from_samples(void)
{
    enum { N = 600 };
    static double two_modes[N], small[N];
    uint64_t state = 777;
    for (int i = 0; i < N; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(state >> 11) / 9007199254740992.0;
        /* 2..2.6 ms for two runs in three, 4..4.9 ms for the rest */
        two_modes[i] = i % 3 ? 2.0 + 0.6 * u : 4.0 + 0.9 * u;
        small[i] = 0.020 + 0.004 * u * u; /* skewed, in microseconds on the plot */
    }
    check_histogram_bars(two_modes, N, 1.0);
    check_histogram_bars(small, N, 1000.0);
}

/* Every point of the throughput curve at its batch and rate (both curves),
 * read back through the axes' labels. */
static void test_throughput_points_drawn_from_results(void)
{
    ib_workload_info info = evil_info();
    ib_throughput_result *r = calloc(1, sizeof *r);
    if (!r) return;
    static const double b2b[] = { 900, 1700, 3100, 5200, 6100, 5800 };
    static const double sync[] = { 500, 1100, 2300, 4100, 5600, 5700 };
    r->n_points = 6;
    for (size_t i = 0; i < r->n_points; i++)
        r->points[i] = (ib_throughput_point){ .batch = (int64_t)1 << (2 * i),
                                              .status = IB_OK,
                                              .items_per_s = b2b[i],
                                              .items_per_s_sync = sync[i],
                                              .back_to_back_ms_per_run = 1 };
    r->peak = 4;
    r->knee = 3;
    r->best_within_budget = -1;
    char *html = ib_throughput_report_html(r, &info);
    char *svg = svg_titled(html, "inputs per second against batch");
    CHECK(svg != NULL);
    if (svg) {
        pixel_map px = axis_map(svg, true, true), py = axis_map(svg, false, false);
        double tol_y = 0.15 * fabs(py.v1 - py.v0) / fabs(py.p1 - py.p0);
        static const char *const classes[2] = { "<circle class=\"pt-b2b\"", "<circle class=\"pt-sync\"" };
        for (int c = 0; c < 2; c++) {
            size_t i = 0;
            for (const char *pt = strstr(svg, classes[c]); pt; pt = strstr(pt + 1, classes[c]), i++) {
                if (i >= r->n_points) break;
                CHECK_NEAR(to_value(&px, attr(pt, "cx")), 2.0 * (double)i, 0.01);
                CHECK_NEAR(to_value(&py, attr(pt, "cy")), c == 0 ? b2b[i] : sync[i], tol_y);
            }
            CHECK_EQ_INT(i, r->n_points);
        }
    }
    free(svg);
    ib_free(html);
    /* A batch of 15 s: the tables print its ms as a number, not "1.511e+04". */
    r->points[5].back_to_back_ms_per_run = r->points[5].latency_ms.p50 = 15110;
    html = ib_throughput_report_html(r, &info);
    char *text = ib_throughput_report_text(r, &info);
    CHECK(html && strstr(html, "<td>15110</td><td>15110</td>") && !strstr(html, "e+04"));
    CHECK(text && strstr(text, "       15110     15110") && !strstr(text, "e+04"));
    ib_free(text);
    ib_free(html);
    free(r);
}

/* The sum of the bars' counts (their titles) in svg. */
static size_t bars_total(const char *svg)
{
    size_t total = 0;
    for (const char *rect = strstr(svg, "<rect class=\"bar\""); rect;
         rect = strstr(rect + 1, "<rect class=\"bar\"")) {
        const char *title = strstr(rect, "<title>");
        total += title ? (size_t)strtoul(title + 7, NULL, 10) : 0;
    }
    return total;
}

/* The last tick label of the x axis. */
static double x_axis_end(const char *svg)
{
    pixel_map m = axis_map(svg, true, false);
    return m.v1;
}

/* A generation result by hand: runs x n steps of token_ms, every TTFT
 * 2.5 ms, no curve of sequences. */
static ib_gen_result *gen_result(size_t runs, int32_t n, double *token_ms, double *ttft_ms)
{
    ib_gen_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    snprintf(r->info.model, sizeof r->info.model, "m");
    r->prompt_tokens = 8;
    r->new_tokens = n;
    r->depth = 8;
    r->runs = runs;
    r->token_ms = token_ms;
    r->ttft_ms = ttft_ms;
    r->request_ms = ttft_ms;
    for (size_t k = 0; k < runs; k++) ttft_ms[k] = 2.5;
    CHECK(ib_stats_compute(token_ms, runs * (size_t)n, &r->token) == IB_OK);
    CHECK(ib_stats_compute(ttft_ms, runs, &r->ttft) == IB_OK);
    r->request = r->ttft;
    r->peak = r->knee = r->best_within_budget = r->most_efficient = -1;
    return r;
}

/* The chart: steps of 100..300 ms and two of 815 ms. The axis
 * stops before them (a far tail would squeeze the body into a bin or
 * two), so the caption counts them: every step is in a bar or said. */
static void test_gen_histogram_beyond(void)
{
    enum { RUNS = 30, N = 16 };
    static double token_ms[RUNS * N], ttft_ms[RUNS];
    for (size_t i = 0; i < RUNS * N; i++) token_ms[i] = 100 + 200 * (double)(i % 97) / 96;
    token_ms[40] = token_ms[300] = 815;
    ib_gen_result *r = gen_result(RUNS, N, token_ms, ttft_ms);
    if (!r) return;
    char *html = ib__gen_report_html(r);
    char *svg = svg_titled(html, "histogram of the timed tokens");
    CHECK(svg != NULL);
    if (svg) {
        CHECK(x_axis_end(svg) < 815);
        CHECK_EQ_INT(bars_total(svg), RUNS * N - 2);
    }
    CHECK(html &&
          strstr(html, "dashed one p99. 2 steps, up to 815 ms, lie beyond the right edge.</figcaption>"));
    free(svg);
    ib_free(html);
    /* Without a far tail, the axis covers every step and no caption says otherwise. */
    token_ms[40] = token_ms[300] = 300;
    CHECK(ib_stats_compute(token_ms, RUNS * N, &r->token) == IB_OK);
    html = ib__gen_report_html(r);
    svg = svg_titled(html, "histogram of the timed tokens");
    CHECK(svg != NULL);
    if (svg) {
        CHECK(x_axis_end(svg) >= 300);
        CHECK_EQ_INT(bars_total(svg), RUNS * N);
    }
    CHECK(html && !strstr(html, "beyond the right edge"));
    free(svg);
    ib_free(html);
    free(r);
}

/* The sequences chart marks the text's points: each label names the
 * point's marks and figure, and sits beside that point. */
static void test_gen_sequences_marks(void)
{
    static double token_ms[10 * 4], ttft_ms[10];
    for (size_t i = 0; i < 40; i++) token_ms[i] = 1;
    ib_gen_result *r = gen_result(10, 4, token_ms, ttft_ms);
    if (!r) return;
    static const double rate[] = { 900, 1700, 3100, 3200 };
    r->n_points = 4;
    for (size_t i = 0; i < 4; i++)
        r->points[i] =
            (ib_gen_point){ .sequences = 1 << i, .status = IB_OK, .tokens_per_s = rate[i], .tpot_ms = 1 };
    r->peak = 3;
    r->knee = 2;
    r->best_within_budget = 1;
    r->tpot_budget_ms = 2;
    char *html = ib__gen_report_html(r);
    char *svg = svg_titled(html, "tokens per second against sequences");
    CHECK(svg != NULL);
    static const char *const labels[] = { NULL, "best within budget: 1700.0 tokens/s at 2 sequences",
                                          "knee: 3100.0 tokens/s at 4 sequences",
                                          "peak: 3200.0 tokens/s at 8 sequences" };
    if (svg) {
        pixel_map px = axis_map(svg, true, true), py = axis_map(svg, false, false);
        size_t found = 0;
        for (const char *t = strstr(svg, "class=\"mark\">"); t; t = strstr(t + 1, "class=\"mark\">")) {
            const char *text = t + strlen("class=\"mark\">"), *start = t;
            while (start > svg && strncmp(start, "<text ", 6)) start--;
            for (size_t i = 1; i < 4; i++) {
                if (strncmp(text, labels[i], strlen(labels[i]))) continue;
                found++;
                /* beside its point: 6 px from it across, above it */
                CHECK_NEAR(fabs(attr(start, "x") - to_px(&px, (double)i)), 6, 0.15);
                CHECK(attr(start, "y") < to_px(&py, rate[i]));
            }
        }
        CHECK_EQ_INT(found, 3);
    }
    free(svg);
    ib_free(html);
    free(r);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_nice_ticks);
    RUN(test_escape);
    RUN(test_histogram);
    RUN(test_downsample);
    RUN(test_latency_degenerate);
    RUN(test_throughput_single_point);
    RUN(test_histogram_drawn_from_samples);
    RUN(test_throughput_points_drawn_from_results);
    RUN(test_gen_histogram_beyond);
    RUN(test_gen_sequences_marks);
    return check_summary("test_svg");
}
