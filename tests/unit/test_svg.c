/* The plotting primitives of the HTML reports (round ticks, escaping,
 * bins, downsampling) and the reports on degenerate results. */
#include "check.h"
#include "report/svg.h"

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

#define CHECK_LABELS(axis, want)                                                               \
    do {                                                                                       \
        ib__axis check_axis_ = (axis);                                                         \
        const char *got_ = labels(&check_axis_);                                               \
        CHECK(strcmp(got_, want) == 0);                                                        \
        if (strcmp(got_, want)) fprintf(stderr, "  got \"%s\", want \"%s\"\n", got_, want);    \
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
    ib__sbuf b = {0};
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

    double sorted[3] = {1, 1, 1};
    CHECK_EQ_INT(ib__histogram_bins(sorted, 1), 5);     /* clamped up */
    CHECK_EQ_INT(ib__histogram_bins(sorted, 3), 5);     /* zero range */
    double wide[1000];
    for (int i = 0; i < 1000; i++) wide[i] = i < 999 ? 1 + i * 1e-3 : 1e6; /* one far outlier */
    CHECK_EQ_INT(ib__histogram_bins(wide, 1000), 60);   /* clamped down */

    double with_nan[3] = {1, NAN, 2};
    ib__histogram(with_nan, 3, 1, 2, 5, counts);
    CHECK_EQ_INT(counts[0] + counts[1] + counts[2] + counts[3] + counts[4], 2);
}

static void test_downsample(void)
{
    enum { N = 10000 };
    static double y[N];
    static size_t idx[2000];
    for (int i = 0; i < N; i++) y[i] = 1.0 + (i % 7) * 1e-3;
    y[5555] = 9;  /* a spike */
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
    double host[3] = {0.05, 0.05, 0.05};
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
    r->points[0] = (ib_throughput_point){.batch = 1, .status = IB_OK, .items_per_s = 1000,
                                         .items_per_s_sync = 900, .back_to_back_ms_per_run = 1};
    r->points[1] = (ib_throughput_point){.batch = 2, .status = IB_ERR_DEVICE_OOM};
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

int main(void)
{
    test_nice_ticks();
    test_escape();
    test_histogram();
    test_downsample();
    test_latency_degenerate();
    test_throughput_single_point();
    return check_summary("test_svg");
}
