/* The generation result's reports against what the result knows: the
 * Markdown's warnings, intervals and marks, the HTML's captions and
 * header, the tables' units and what a caller's own model does not state,
 * on the scripted fake's exact figures (docs/generate.md, docs/report.md).
 * The plots themselves are parsed back in test_svg.c. */
#include "backend/fake/gen_fake.h"
#include "check.h"
#include "core/generate.h"
#include "gen_fixtures.h"
#include "report/printer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* P 64, N 16: a step of s sequences at position p takes 1 + (s - 1)/8 +
 * p/1024 ms (gen_fake.c's script); dyadic, so every figure is exact. */
#define P 64
#define N 16

/* CHECK(strstr(text, want)), printing what was missing. */
#define CHECK_HAS(text, want)                                                                                \
    do {                                                                                                     \
        const char *has_ = (text) ? strstr((text), (want)) : NULL;                                           \
        CHECK(has_ != NULL);                                                                                 \
        if (!has_) fprintf(stderr, "  missing: \"%s\"\n", (want));                                           \
    } while (0)
#define CHECK_HAS_NOT(text, unwanted)                                                                        \
    do {                                                                                                     \
        const char *has_ = (text) ? strstr((text), (unwanted)) : NULL;                                       \
        CHECK(has_ == NULL);                                                                                 \
        if (has_) fprintf(stderr, "  unwanted: \"%s\"\n", (unwanted));                                       \
    } while (0)

static bool measure(const ib__gen_fake_script *s, const ib_gen_config *c, ib_gen_result *r)
{
    ib__gen *g = gen_fixture_open(s);
    ib_error err;
    bool ok = g && ib_measure_generation(g, c, r, &err) == IB_OK;
    CHECK(ok);
    ib__gen_destroy(g);
    return ok;
}

static ib__gen_fake_script script(void)
{
    ib__gen_fake_script s;
    ib__gen_fake_script_init(&s);
    return s;
}

/* A curve of 1, 4 and 16 sequences under a TPOT budget of 2 ms: 4 is the
 * best within it (TPOT 1.4448 ms), 16 the peak and the knee. */
static bool budget_curve(ib_gen_result *r)
{
    static int32_t list[] = { 1, 4, 16 };
    ib__gen_fake_script s = script();
    ib_gen_config c = gen_fixture_config(P, N);
    c.sequences = list;
    c.n_sequences = 3;
    c.tpot_budget_ms = 2;
    return measure(&s, &c, r);
}

/* The Markdown says what the JSON knows: the warnings (10 runs: few
 * samples), the medians' intervals, each count's marks. */
static void test_md_warnings_intervals_marks(void)
{
    ib_gen_result r;
    if (!budget_curve(&r)) return;
    CHECK(r.warnings & IB_WARN_FEW_SAMPLES);
    char *md = ib__gen_report_md(&r);
    CHECK_HAS(
        md, "| figure | n | min | median | mean | p90 | p99 | max | std | median CI low | median CI high |");
    /* every run's TTFT is 2.5 ms: its interval too */
    CHECK_HAS(md,
              "| TTFT | 10 | 2.5 ms | 2.5 ms | 2.5 ms | 2.5 ms | 2.5 ms | 2.5 ms | 0 us | 2.5 ms | 2.5 ms |");
    CHECK_HAS(md, "\n- warning: fewer than 30 samples: the statistics are weak\n");
    /* TPOT at 4: 1 + 3/8 + (64 + 7.5)/1024 = 1.4448 ms; at 16: 2.9448 */
    CHECK_HAS(md, "| 4 | 1.445 ms | 1.452 ms | 1.445 ms | 2768.5 | - | best within budget |");
    CHECK_HAS(md, "| 16 | 2.945 ms | 2.952 ms | 2.945 ms | 5433.3 | - | peak, knee |");
    free(md);
    ib_gen_result_free(&r);

    /* No count within a budget of 0.5 ms: the Markdown says so, as the text. */
    static int32_t list[] = { 1, 4 };
    ib__gen_fake_script s = script();
    ib_gen_config c = gen_fixture_config(P, N);
    c.sequences = list;
    c.n_sequences = 2;
    c.tpot_budget_ms = 0.5;
    ib__gen *g = gen_fixture_open(&s);
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_NOT_MET);
    md = ib__gen_report_md(&r);
    CHECK_HAS(md, "\nno count has a TPOT within 0.5 ms\n");
    free(md);
    char *html = ib__gen_report_html(&r);
    CHECK_HAS(html, " each; no count has a TPOT within 0.5 ms.</figcaption>");
    free(html);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* The marks beside the points in the HTML's table of the text. */
static void test_text_marks(void)
{
    ib_gen_result r;
    if (!budget_curve(&r)) return;
    char *text = ib__gen_report_text(&r);
    CHECK_HAS(text, "        4        1.445      1.452      1.445       2768.5  best within budget\n");
    CHECK_HAS(text, "       16        2.945      2.952      2.945       5433.3  peak  knee\n");
    free(text);
    ib_gen_result_free(&r);
}

/* The sequences' caption says what bounded the search, as the text does:
 * --max-sequences is not memory, so it is not "the most that fit". */
static void test_html_search_bound(void)
{
    ib__gen_fake_script s = script();
    ib_gen_config c = gen_fixture_config(P, N);
    c.search = true;
    c.sequence_runs = 1;
    c.max_sequences = 24;
    ib_gen_result r;
    if (!measure(&s, &c, &r)) return;
    CHECK(r.limited_by_max);
    char *html = ib__gen_report_html(&r), *text = ib__gen_report_text(&r);
    CHECK_HAS(text, "search: the largest that fits is 24 sequences (the search's bound, not memory)\n");
    CHECK_HAS(
        html,
        "; search: the largest that fits is 24 sequences (the search&#39;s bound, not memory).</figcaption>");
    CHECK_HAS_NOT(html, "the most that fit");
    free(html);
    free(text);
    ib_gen_result_free(&r);
}

/* The positions' caption states the slope the data shows (1/1024 ms a
 * position on the script), or no trend where the steps are flat. */
static void test_html_position_trend(void)
{
    ib__gen_fake_script s = script();
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    if (!measure(&s, &c, &r)) return;
    char *html = ib__gen_report_html(&r);
    CHECK_HAS(html,
              "Each step's median over the 10 runs: it grows with the position (least-squares slope per "
              "position 0.9766 us, 95% CI [0.9766, 0.9766] us).</figcaption>");
    CHECK_HAS_NOT(html, "so latency grows with the position");
    free(html);
    ib_gen_result_free(&r);
    s.step_pos_ms = 0;
    if (!measure(&s, &c, &r)) return;
    html = ib__gen_report_html(&r);
    CHECK_HAS(html,
              "Each step's median over the 10 runs: no trend with the position (least-squares slope per "
              "position 0 us, 95% CI [0, 0] us).</figcaption>");
    free(html);
    ib_gen_result_free(&r);
}

/* llama.cpp's "llama ?B F16" for a model it cannot size: the size said
 * once, as a count of parameters, in the text and the HTML alike. */
static void test_model_size(void)
{
    ib__gen_fake_script s = script();
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    if (!measure(&s, &c, &r)) return;
    strcpy(r.info.arch, "llama");
    strcpy(r.info.model_type, "llama ?B F16");
    strcpy(r.info.weights_type, "F16");
    r.info.n_params = 2230000;
    char *html = ib__gen_report_html(&r), *text = ib__gen_report_text(&r);
    CHECK_HAS(text, "inferbench generate: fake-model (llama F16, 2.23 M parameters)\n");
    CHECK_HAS(html, "<tr><td>architecture</td><td>llama F16, 2.23 M parameters</td></tr>");
    CHECK_HAS_NOT(html, "?B");
    free(html);
    free(text);
    /* A size it names is said once too: by the count. */
    strcpy(r.info.model_type, "llama 1B Q4_0");
    strcpy(r.info.weights_type, "Q4_0");
    r.info.n_params = 1235814400;
    text = ib__gen_report_text(&r);
    CHECK_HAS(text, "inferbench generate: fake-model (llama Q4_0, 1.24 B parameters)\n");
    free(text);
    ib_gen_result_free(&r);
}

/* A request of 15 s in a table of ms: a number, not "1.5e+04". */
static void test_table_units(void)
{
    ib__gen_fake_script s = script();
    s.step_ms = 1000; /* a request: 2.5 + 15 x 1000 + (64 + ... + 78)/1024 = 15003.54 ms */
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    if (!measure(&s, &c, &r)) return;
    char *text = ib__gen_report_text(&r), *html = ib__gen_report_html(&r);
    CHECK_HAS(
        text,
        "\nrequest             10      15004      15004      15004      15004      15004      15004      "
        "15004   0.00%\n");
    CHECK_HAS_NOT(text, "e+0");
    CHECK_HAS(html, "<tr><td>request</td><td>10</td><td>15004</td>");
    CHECK_HAS_NOT(html, "e+0");
    free(text);
    free(html);
    ib_gen_result_free(&r);
    /* Every figure under a millisecond: the table in us. */
    s = script();
    s.prefill_ms = 0.03125;
    s.prefill_token_ms = 0;
    s.step_ms = 0.0625;
    s.step_pos_ms = 0;
    if (!measure(&s, &c, &r)) return;
    text = ib__gen_report_text(&r);
    CHECK_HAS(text, "\nus                   n       mean        p50");
    CHECK_HAS(text, "\nTTFT                10      31.25      31.25");
    free(text);
    ib_gen_result_free(&r);
}

/* A caller's own model (the callbacks, the Python binding) states no
 * architecture, runtime or KV cache: the reports leave them out rather
 * than print "(, ?)", "runtime ?" or "KV cache ? 0 MB". */
static void test_unknown_left_out(void)
{
    ib__gen_fake_script s = script();
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    if (!measure(&s, &c, &r)) return;
    r.info.arch[0] = r.info.model_type[0] = r.info.weights_type[0] = '\0';
    r.info.runtime_version[0] = r.info.kv_type[0] = '\0';
    r.info.kv_bytes = 0;
    r.info.n_batch = r.info.n_ubatch = 0;
    char *text = ib__gen_report_text(&r), *html = ib__gen_report_html(&r);
    CHECK_HAS(text, "inferbench generate: fake-model\n");
    CHECK_HAS(text, "\ndevice cpu; 2 threads (2 cores allowed)\ncontext 80 (1 x 80)\n");
    CHECK_HAS_NOT(text, "?");
    CHECK_HAS_NOT(html, "<td>architecture</td>");
    CHECK_HAS_NOT(html, "<td>runtime</td>");
    CHECK_HAS_NOT(html, "<td>runtime options</td>");
    free(text);
    free(html);
    ib_gen_result_free(&r);
}

/* The CSV's rows end in CRLF, every one (RFC 4180, as the other results'
 * CSV): the sequences' TPOT row too. */
static void test_csv_line_ends(void)
{
    ib_gen_result r;
    if (!budget_curve(&r)) return;
    char *csv = ib__gen_report_csv(&r);
    CHECK(csv != NULL);
    size_t bare = 0;
    for (const char *c = csv; c && *c; c++) bare += *c == '\n' && (c == csv || c[-1] != '\r');
    CHECK_EQ_INT(bare, 0);
    CHECK_HAS(csv, "sequences,tokens_per_s,,,,4,2768.");
    free(csv);
    ib_gen_result_free(&r);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_md_warnings_intervals_marks);
    RUN(test_text_marks);
    RUN(test_html_search_bound);
    RUN(test_html_position_trend);
    RUN(test_model_size);
    RUN(test_table_units);
    RUN(test_unknown_left_out);
    RUN(test_csv_line_ends);
    return check_summary("test_gen_report");
}
