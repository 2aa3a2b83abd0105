/* Sessions of throughput, pitfalls and generation, from the documents of scripted
 * sessions (the fake workload, a duration per session and batch): the
 * figures across sessions (each session's peak, the batch most chose and
 * each session's inputs/s there, the correct method's interval across sessions),
 * a failed session kept without figures, the stop reason, and the CSV,
 * Markdown, text and HTML reports of every kind measured in sessions. */
#include "check.h"
#include "backend/fake/fake.h"
#include "core/sessions.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A session's script: every run takes (1 + 0.1 batch) ms times factor,
 * and times slow_factor at slow_batch (that session's odd batch). */
typedef struct session_script {
    double factor;
    int64_t slow_batch;
    double slow_factor;
    double busy_w; /* a scripted energy counter (100 ms steps) drawing this while running; 0: none */
} session_script;

static double scripted(int64_t batch, int64_t index, void *ctx)
{
    const session_script *s = ctx;
    (void)index;
    return (1 + 0.1 * (double)batch) * s->factor * (batch == s->slow_batch ? s->slow_factor : 1);
}

static double items_per_s(int64_t batch, const session_script *s)
{
    return (double)batch / scripted(batch, 0, (void *)s) * 1000;
}

static ib_workload *open_session(session_script *ctx)
{
    ib__fake_script s;
    ib__fake_script_init(&s);
    s.duration_ms = scripted;
    s.ctx = ctx;
    if (ctx->busy_w > 0) {
        s.energy_step_ms = 100;
        s.idle_w = 60;
        s.busy_w = ctx->busy_w;
    }
    return check_open_fake(&s);
}

/* One throughput session's document at batches 1, 4, 16. */
static char *throughput_doc(session_script *ctx)
{
    ib_workload *w = open_session(ctx);
    ib_throughput_config cfg;
    ib_throughput_config_init(&cfg);
    cfg.run.warmup_runs = 2;
    cfg.run.warmup_ms = 0;
    cfg.run.warmup_until_steady = false;
    cfg.run.runs = 10;
    static const int64_t list[] = { 1, 4, 16 };
    cfg.batches = list;
    cfg.n_batches = 3;
    ib_throughput_result *r = malloc(sizeof *r);
    ib_error err;
    CHECK(r && ib_measure_throughput(w, &cfg, r, &err) == IB_OK);
    char *doc = ib_throughput_report_json(r, ib_workload_get_info(w), &cfg);
    free(r);
    ib_workload_destroy(w);
    return doc;
}

static const cJSON *figure(const cJSON *root, const char *key)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(cJSON_GetObjectItem(root, "sessions"), "figures"))
    {
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "key")), key)) return f;
    }
    return NULL;
}

static double value(const cJSON *f, int i)
{
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(f, "values"), i);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The number in the CSV cell after the line that starts with prefix
 * (its next field), NaN when there is none. */
static double csv_after(const char *csv, const char *prefix)
{
    const char *at = csv ? strstr(csv, prefix) : NULL;
    return at ? strtod(at + strlen(prefix), NULL) : NAN;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++) n += *s == '\n';
    return n;
}

/* Four sessions: two plain (factor 1 and 1.1), one whose batch 16 is three
 * times slower (its peak at batch 4), one killed. Peaks at 16, 16, 4: the
 * best batch is 16 (two sessions), and each session's inputs/s there is
 * read from its own curve. */
static void test_throughput_sessions(void)
{
    session_script scripts[4] = { { 1, 0, 1, 0 }, { 1.1, 0, 1, 0 }, { 1, 16, 3, 0 }, { 1, 0, 1, 0 } };
    char *docs[4];
    ib_session_outcome o[4];
    for (int i = 0; i < 4; i++) {
        docs[i] = i == 3 ? NULL : throughput_doc(&scripts[i]);
        o[i] = (ib_session_outcome){ docs[i], docs[i] ? strlen(docs[i]) : 0, i == 3 ? -9 : 0,
                                     i == 3 ? "ended by signal 9 (Killed)" : "" };
    }
    ib_error err = { { 0 } };
    char *merged = ib_sessions_merge(IB_RESULT_THROUGHPUT, o, 4, 5, NULL, &err);
    cJSON *root = merged ? cJSON_Parse(merged) : NULL;
    CHECK(root != NULL);
    const cJSON *sessions = cJSON_GetObjectItem(root, "sessions");
    CHECK_NEAR(num(sessions, "best_batch"), 16, 0);
    CHECK_NEAR(num(sessions, "measured"), 3, 0);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(root, "partial")));
    CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "stop_reason")), "sessions incomplete"));
    const cJSON *peak = figure(root, "peak_items_per_s"), *at = figure(root, "items_per_s_at_best_batch");
    const cJSON *batch = figure(root, "peak_batch");
    CHECK(peak && at && batch);
    CHECK_NEAR(value(batch, 0), 16, 0);
    CHECK_NEAR(value(batch, 2), 4, 0);
    CHECK(isnan(value(peak, 3)) && isnan(value(at, 3))); /* the killed session */
    CHECK_NEAR(value(peak, 2), items_per_s(4, &scripts[2]), 1e-6);
    CHECK_NEAR(value(at, 2), items_per_s(16, &scripts[2]), 1e-6);
    CHECK_NEAR(value(at, 1), items_per_s(16, &scripts[1]), 1e-6);
    /* The geometric means of the three sessions' figures. */
    double peak_mean =
        cbrt(items_per_s(16, &scripts[0]) * items_per_s(16, &scripts[1]) * items_per_s(4, &scripts[2]));
    double at_mean =
        cbrt(items_per_s(16, &scripts[0]) * items_per_s(16, &scripts[1]) * items_per_s(16, &scripts[2]));
    CHECK_NEAR(num(peak, "geomean"), peak_mean, 1e-6);
    CHECK_NEAR(num(at, "geomean"), at_mean, 1e-6);
    const cJSON *ci = cJSON_GetObjectItem(at, "ci95");
    CHECK(cJSON_GetArrayItem(ci, 0)->valuedouble < at_mean &&
          cJSON_GetArrayItem(ci, 1)->valuedouble > at_mean);
    /* Symmetric on the log scale: the geometric mean is the interval's. */
    CHECK_NEAR(sqrt(cJSON_GetArrayItem(ci, 0)->valuedouble * cJSON_GetArrayItem(ci, 1)->valuedouble), at_mean,
               1e-6);
    /* One value a session: all the variation is between them, the sample
     * sd of the three log values. */
    double logs[3], mean = 0, ss = 0;
    for (int i = 0; i < 3; i++) mean += (logs[i] = log(items_per_s(16, &scripts[i]))) / 3;
    for (int i = 0; i < 3; i++) ss += (logs[i] - mean) * (logs[i] - mean);
    CHECK_NEAR(num(at, "between_sd_log"), sqrt(ss / 2), 1e-12);
    CHECK(num(at, "between_sd_log") > 0.05);
    CHECK(isnan(num(at, "within_sd_log")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(batch, "ci95"))); /* a batch: no interval */
    /* The spread of the peaks: (max - min) / their geometric mean. */
    CHECK_NEAR(num(peak, "spread"), (items_per_s(16, &scripts[0]) - items_per_s(4, &scripts[2])) / peak_mean,
               1e-9);
    CHECK(isnan(ib_sessions_precision(merged))); /* throughput has no --precision */
    ib_result r = { .kind = IB_RESULT_THROUGHPUT_SESSIONS, .sessions_json = merged };
    char *csv = ib_report(&r, "csv"), *md = ib_report(&r, "md"), *text = ib_report(&r, "text");
    char *html = ib_report(&r, "html");
    /* A header, 4 sessions, 5 aggregate rows. */
    CHECK_EQ_INT(count_lines(csv), 10);
    CHECK(csv && strstr(csv, ",4,-9,ended by signal 9 (Killed),,,\r\n"));
    CHECK(md && strstr(md, "| ci95_low |") && strstr(md, "**inferbench throughput**"));
    CHECK(text && strstr(text, "best batch: 16 (the peak of most sessions)") &&
          strstr(text, "failed: ended by signal 9"));
    CHECK(text && strstr(text, "INCOMPLETE: 4 of 5 sessions ran"));
    CHECK(html && strstr(html, "<svg") && strstr(html, "t over the sessions' log values"));
    ib_free(csv), ib_free(md), ib_free(text), ib_free(html);
    cJSON_Delete(root);
    ib_free(merged);
    for (int i = 0; i < 4; i++) ib_free(docs[i]);
}

/* A tie of votes goes to the smaller batch; the time cap's reason is kept. */
static void test_throughput_tie_and_reason(void)
{
    session_script scripts[2] = { { 1, 0, 1, 0 }, { 1, 16, 3, 0 } };
    char *docs[2] = { throughput_doc(&scripts[0]), throughput_doc(&scripts[1]) };
    ib_session_outcome o[2] = { { docs[0], strlen(docs[0]), 0, "" }, { docs[1], strlen(docs[1]), 0, "" } };
    ib_error err;
    char *merged =
        ib_sessions_merge(IB_RESULT_THROUGHPUT, o, 2, 6, "session time cap (--sessions-max-ms)", &err);
    cJSON *root = merged ? cJSON_Parse(merged) : NULL;
    CHECK_NEAR(num(cJSON_GetObjectItem(root, "sessions"), "best_batch"), 4, 0);
    CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(root, "stop_reason")),
                  "session time cap (--sessions-max-ms)"));
    cJSON_Delete(root);
    ib_free(merged);
    /* A document of another command is refused. */
    CHECK(ib_sessions_merge(IB_RESULT_PITFALLS, o, 2, 2, NULL, &err) == NULL);
    CHECK(strstr(err.message, "not an inferbench.pitfalls/2 result") != NULL);
    CHECK(ib_sessions_merge(IB_RESULT_CALIBRATION, o, 2, 2, NULL, &err) == NULL);
    ib_free(docs[0]), ib_free(docs[1]);
}

/* The t-interval over k log values, as the sessions' figures give it. */
static void log_interval(const double *v, int k, double t975, double *geomean, double ci[2])
{
    double mean = 0, ss = 0;
    for (int i = 0; i < k; i++) mean += log(v[i]) / k;
    for (int i = 0; i < k; i++) ss += (log(v[i]) - mean) * (log(v[i]) - mean);
    double half = t975 * sqrt(ss / (k - 1)) / sqrt(k);
    *geomean = exp(mean);
    ci[0] = exp(mean - half);
    ci[1] = exp(mean + half);
}

/* A session's curve point at batch (its document), NULL when none. */
static const cJSON *curve_point(const char *doc, cJSON **root, double batch)
{
    *root = cJSON_Parse(doc);
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(*root, "curve")) if (num(p, "batch") == batch) return p;
    return NULL;
}

/* Throughput in sessions with the fake's scripted counter (issue 29: the
 * interval of the energy per input across sessions): three sessions at
 * 1, 1.1 and 1.2 times the run time, the device drawing 300 W while it
 * runs. Each session's energy per input at the best batch (16) is its own
 * curve's figure, within its bound of 300 W x run time / 16; across the
 * sessions, their geometric mean and Student's t over their three logs
 * (t(0.975, 2) = 4.3027, the table value the library uses); every format shows the figure. Without a
 * counter, no energy figure. */
static void test_throughput_sessions_energy(void)
{
    session_script scripts[3] = { { 1, 0, 1, 300 }, { 1.1, 0, 1, 300 }, { 1.2, 0, 1, 300 } };
    char *docs[3];
    ib_session_outcome o[3];
    double jpi[3];
    for (int i = 0; i < 3; i++) {
        docs[i] = throughput_doc(&scripts[i]);
        o[i] = (ib_session_outcome){ docs[i], strlen(docs[i]), 0, "" };
        cJSON *root;
        const cJSON *e = cJSON_GetObjectItem(curve_point(docs[i], &root, 16), "energy");
        jpi[i] = num(e, "joules_per_item");
        double want = 300 * scripted(16, 0, &scripts[i]) / 1000 / 16;
        CHECK(fabs(jpi[i] / want - 1) <= num(e, "bound") && num(e, "bound") < 0.05);
        cJSON_Delete(root);
    }
    ib_error err;
    char *merged = ib_sessions_merge(IB_RESULT_THROUGHPUT, o, 3, 3, NULL, &err);
    cJSON *root = merged ? cJSON_Parse(merged) : NULL;
    CHECK_NEAR(num(cJSON_GetObjectItem(root, "sessions"), "best_batch"), 16, 0);
    const cJSON *f = figure(root, "joules_per_item_at_best_batch");
    CHECK(f && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "unit")), "J"));
    CHECK(f && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "label")), "J/input, batch 16"));
    for (int i = 0; i < 3; i++) CHECK(value(f, i) == jpi[i]);
    double geomean, ci[2];
    log_interval(jpi, 3, 4.3027, &geomean, ci);
    CHECK_NEAR(num(f, "geomean"), geomean, 1e-15);
    const cJSON *got = cJSON_GetObjectItem(f, "ci95");
    CHECK_NEAR(cJSON_GetArrayItem(got, 0)->valuedouble, ci[0], 1e-12 * ci[0]);
    CHECK_NEAR(cJSON_GetArrayItem(got, 1)->valuedouble, ci[1], 1e-12 * ci[1]);
    CHECK(ci[0] < jpi[0] && ci[1] > jpi[2]);
    ib_result r = { .kind = IB_RESULT_THROUGHPUT_SESSIONS, .sessions_json = merged };
    char *text = ib_report(&r, "text"), *csv = ib_report(&r, "csv"), *md = ib_report(&r, "md");
    char *html = ib_report(&r, "html");
    char line[160];
    snprintf(line, sizeof line,
             "J/input, batch 16: geometric mean of sessions %.6g J, 95%% CI [%.6g, %.6g] J", geomean, ci[0],
             ci[1]);
    CHECK(text && strstr(text, line));
    CHECK(csv && strstr(csv, ",joules_per_item_at_best_batch\r\n"));
    CHECK(md && strstr(md, "| J/input, batch 16 (J) |"));
    CHECK(html && strstr(html, "J/input, batch 16 (J)"));
    ib_free(text), ib_free(csv), ib_free(md), ib_free(html);
    cJSON_Delete(root);
    ib_free(merged);
    for (int i = 0; i < 3; i++) ib_free(docs[i]);
    /* No counter: no energy figure. */
    session_script plain = { 1, 0, 1, 0 };
    docs[0] = throughput_doc(&plain);
    o[0] = (ib_session_outcome){ docs[0], strlen(docs[0]), 0, "" };
    o[1] = o[0];
    merged = ib_sessions_merge(IB_RESULT_THROUGHPUT, o, 2, 2, NULL, &err);
    root = merged ? cJSON_Parse(merged) : NULL;
    CHECK(root && figure(root, "items_per_s_at_best_batch") &&
          !figure(root, "joules_per_item_at_best_batch"));
    cJSON_Delete(root);
    ib_free(merged);
    ib_free(docs[0]);
}

/* One pitfalls session's document, its runs scripted by factor. */
static char *pitfalls_doc(session_script *ctx)
{
    ib_workload *w = open_session(ctx);
    ib_config cfg;
    ib_config_init(&cfg);
    cfg.warmup_runs = 2;
    cfg.warmup_ms = 0;
    cfg.warmup_until_steady = false;
    cfg.runs = 30;
    ib_pitfalls_result r;
    ib_error err;
    CHECK(ib_measure_pitfalls(w, &cfg, &r, &err) == IB_OK);
    char *doc = ib_pitfalls_report_json(&r, ib_workload_get_info(w), &cfg);
    ib_pitfalls_result_free(&r);
    ib_workload_destroy(w);
    return doc;
}

/* Sessions at 1.1, 1.21, 1.32 ms (factors 1, 1.1, 1.2 of batch 1): the
 * correct method's figure is over each session's runs, its geometric mean
 * 1.1 x 1.32^(1/3) = 1.206657 ms, its interval Student's t over the three
 * log medians (sd 0.091193, t 4.3027): [0.962056, 1.513448] ms, wider than
 * the sessions' range, as three sessions allow. */
static void test_pitfalls_sessions(void)
{
    session_script scripts[3] = { { 1, 0, 1, 0 }, { 1.1, 0, 1, 0 }, { 1.2, 0, 1, 0 } };
    char *docs[3];
    ib_session_outcome o[3];
    for (int i = 0; i < 3; i++) {
        docs[i] = pitfalls_doc(&scripts[i]);
        o[i] = (ib_session_outcome){ docs[i], strlen(docs[i]), 0, "" };
    }
    ib_error err;
    char *merged = ib_sessions_merge(IB_RESULT_PITFALLS, o, 3, 3, NULL, &err);
    cJSON *root = merged ? cJSON_Parse(merged) : NULL;
    const cJSON *correct = figure(root, "correct_median_ms");
    CHECK(correct != NULL);
    CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(correct, "interval")), IB__SESSIONS_INTERVAL));
    for (int i = 0; i < 3; i++) CHECK_NEAR(value(correct, i), 1.1 * scripts[i].factor, 1e-9);
    CHECK_NEAR(num(correct, "geomean"), 1.206657441535176, 1e-9);
    const cJSON *ci = cJSON_GetObjectItem(correct, "ci95");
    CHECK_NEAR(cJSON_GetArrayItem(ci, 0)->valuedouble, 0.962056106533672, 1e-6);
    CHECK_NEAR(cJSON_GetArrayItem(ci, 1)->valuedouble, 1.513448302363908, 1e-6);
    /* Every run of a session alike: all the variance lies between them. */
    CHECK_NEAR(num(correct, "within_sd_log"), 0, 1e-12);
    CHECK(num(correct, "between_sd_log") > 0.05);
    CHECK(!cJSON_IsTrue(cJSON_GetObjectItem(root, "partial")));
    CHECK_NEAR(ib_sessions_precision(merged), num(correct, "precision"), 0);
    CHECK(num(correct, "precision") > 0);
    CHECK(!figure(root, "correct_joules_per_item")); /* no counter: no energy figure */
    ib_result r = { .kind = IB_RESULT_PITFALLS_SESSIONS, .sessions_json = merged };
    char *text = ib_report(&r, "text"), *csv = ib_report(&r, "csv");
    CHECK(text && strstr(text, "(across sessions: both levels)"));
    CHECK(csv && strstr(csv, "model,device,batch,session,exit_status,message,correct_median_ms,"));
    CHECK_EQ_INT(count_lines(csv), 1 + 3 + 5);
    ib_free(text), ib_free(csv);
    cJSON_Delete(root);
    ib_free(merged);
    /* The first session failed: the others' runs still give two levels. */
    ib_session_outcome later[3] = { { NULL, 0, 1, "boom" }, o[1], o[2] };
    merged = ib_sessions_merge(IB_RESULT_PITFALLS, later, 3, 3, NULL, &err);
    root = merged ? cJSON_Parse(merged) : NULL;
    correct = figure(root, "correct_median_ms");
    CHECK(correct &&
          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(correct, "interval")), IB__SESSIONS_INTERVAL));
    CHECK(correct && isnan(value(correct, 0)) && cJSON_IsTrue(cJSON_GetObjectItem(root, "partial")));
    cJSON_Delete(root);
    ib_free(merged);
    for (int i = 0; i < 3; i++) ib_free(docs[i]);
}

/* Pitfalls in sessions with the fake's scripted counter: each session's
 * correct row's energy per input is its document's, within its bound of
 * 300 W x its run (1.1, 1.21, 1.32 ms: 0.33, 0.363, 0.396 J; a window of
 * whole 100 ms steps holds whole runs: 30 J over 91 runs, 0.32967 J, for
 * the first); across the sessions their geometric mean and Student's t
 * over their three logs. The methods' table is of the methods only: the
 * energy is no method with an error against the correct median. */
static void test_pitfalls_sessions_energy(void)
{
    session_script scripts[3] = { { 1, 0, 1, 300 }, { 1.1, 0, 1, 300 }, { 1.2, 0, 1, 300 } };
    char *docs[3];
    ib_session_outcome o[3];
    double want[3];
    for (int i = 0; i < 3; i++) {
        docs[i] = pitfalls_doc(&scripts[i]);
        o[i] = (ib_session_outcome){ docs[i], strlen(docs[i]), 0, "" };
        cJSON *doc = cJSON_Parse(docs[i]);
        const cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "energy"), "correct");
        want[i] = num(e, "joules_per_item");
        CHECK(fabs(want[i] / (0.33 * scripts[i].factor) - 1) <= num(e, "bound") && num(e, "bound") < 0.05);
        cJSON_Delete(doc);
    }
    CHECK_NEAR(want[0], 30.0 / 91, 1e-12);
    ib_error err;
    char *merged = ib_sessions_merge(IB_RESULT_PITFALLS, o, 3, 3, NULL, &err);
    cJSON *root = merged ? cJSON_Parse(merged) : NULL;
    const cJSON *f = figure(root, "correct_joules_per_item");
    CHECK(f && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "label")), "energy per input"));
    for (int i = 0; i < 3; i++) CHECK(value(f, i) == want[i]);
    double geomean, ci[2];
    log_interval(want, 3, 4.3027, &geomean, ci);
    CHECK_NEAR(num(f, "geomean"), geomean, 1e-15);
    CHECK_NEAR(geomean, cbrt(want[0] * want[1] * want[2]), 1e-15);
    const cJSON *got = cJSON_GetObjectItem(f, "ci95");
    CHECK_NEAR(cJSON_GetArrayItem(got, 0)->valuedouble, ci[0], 1e-12 * ci[0]);
    CHECK_NEAR(cJSON_GetArrayItem(got, 1)->valuedouble, ci[1], 1e-12 * ci[1]);
    /* The correct median's interval is the first figure still. */
    CHECK_NEAR(ib_sessions_precision(merged), num(figure(root, "correct_median_ms"), "precision"), 0);
    ib_result r = { .kind = IB_RESULT_PITFALLS_SESSIONS, .sessions_json = merged };
    char *text = ib_report(&r, "text"), *csv = ib_report(&r, "csv");
    char line[160];
    snprintf(line, sizeof line, "energy per input: geometric mean of sessions %.6g J, 95%% CI [%.6g, %.6g] J",
             geomean, ci[0], ci[1]);
    CHECK(text && strstr(text, line));
    CHECK(text && !strstr(text, "\nenergy per input   ")); /* not a row of the methods' table */
    CHECK(csv && strstr(csv, ",correct_joules_per_item\r\n"));
    ib_free(text), ib_free(csv);
    cJSON_Delete(root);
    ib_free(merged);
    for (int i = 0; i < 3; i++) ib_free(docs[i]);
}

/* A generation session's document (the parts the merge reads): every
 * run's TTFT ttft ms, its two tokens token ms each, tokens/s from them. */
static char *generation_doc(double ttft, double token)
{
    char *doc = malloc(1024);
    snprintf(
        doc, 1024,
        "{\"schema\": \"inferbench.generation/1\", \"model\": \"m\", \"device\": \"cpu\", "
        "\"settings\": {\"prompt_tokens\": 4, \"new_tokens\": 2, \"depth\": 4}, \"runs\": 3, "
        "\"ttft_ms\": {\"p50\": %.17g}, \"token_ms\": {\"p50\": %.17g}, \"request_ms\": {\"p50\": %.17g}, "
        "\"tokens_per_s\": %.17g, \"prompt_tokens_per_s\": %.17g, \"partial\": false, "
        "\"samples\": {\"ttft_ms\": [%.17g, %.17g, %.17g], \"request_ms\": [%.17g, %.17g, %.17g], "
        "\"token_ms\": [[%.17g, %.17g], [%.17g, %.17g], [%.17g, %.17g]]}, \"warnings\": [], \"notes\": []}",
        ttft, token, ttft + token, 1000 / token, 4000 / ttft, ttft, ttft, ttft, ttft + token, ttft + token,
        ttft + token, token, token, token, token, token, token);
    return doc;
}

/* Generation in sessions: TTFT 2 and 8 ms (geometric mean 4), tokens 1 and
 * 4 ms (2; tokens/s 1000 and 250: 500), every run of a session alike (the
 * variance all between them), a third session failed and kept as such. */
static void test_generation_sessions(void)
{
    char *docs[2] = { generation_doc(2, 1), generation_doc(8, 4) };
    ib_session_outcome o[3] = { { docs[0], strlen(docs[0]), 0, "" },
                                { NULL, 0, 1, "boom" },
                                { docs[1], strlen(docs[1]), 0, "" } };
    ib_error err;
    char *merged = ib_sessions_merge(IB_RESULT_GENERATION, o, 3, 3, NULL, &err);
    cJSON *root = merged ? cJSON_Parse(merged) : NULL;
    const cJSON *ttft = figure(root, "ttft_median_ms"), *token = figure(root, "token_median_ms"),
                *tps = figure(root, "tokens_per_s");
    CHECK(ttft && token && tps && figure(root, "request_median_ms") && figure(root, "prompt_tokens_per_s"));
    CHECK(ttft &&
          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(ttft, "interval")), IB__SESSIONS_INTERVAL));
    CHECK(token &&
          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(token, "interval")), IB__SESSIONS_INTERVAL));
    CHECK(ttft && value(ttft, 0) == 2 && isnan(value(ttft, 1)) && value(ttft, 2) == 8);
    CHECK_NEAR(num(ttft, "geomean"), 4, 1e-12);
    CHECK_NEAR(num(token, "geomean"), 2, 1e-12);
    CHECK_NEAR(num(tps, "geomean"), 500, 1e-9);
    CHECK_NEAR(num(ttft, "sessions"), 2, 0);
    /* Two sessions: Student's t at 1 degree of freedom (12.706, the
     * library's table to 5 digits) over the log medians, whose sd is
     * log(4) / sqrt(2): symmetric about the geometric mean on the log scale. */
    const cJSON *ci = cJSON_GetObjectItem(ttft, "ci95");
    double lo = cJSON_GetArrayItem(ci, 0)->valuedouble, hi = cJSON_GetArrayItem(ci, 1)->valuedouble;
    CHECK_NEAR(lo * hi, 16, 1e-9);
    CHECK_NEAR(log(hi / 4) / (12.706204736174698 * log(4) / 2), 1, 1e-5);
    CHECK_NEAR(num(ttft, "within_sd_log"), 0, 1e-12);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(root, "partial")));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "sessions"), "incomplete")));
    CHECK(!cJSON_GetObjectItem(root, "samples") && !cJSON_GetObjectItem(root, "tokens_per_s"));
    CHECK_NEAR(ib_sessions_precision(merged), num(ttft, "precision"), 0);
    ib_result r = { .kind = IB_RESULT_GENERATION_SESSIONS, .sessions_json = merged };
    char *text = ib_report(&r, "text");
    CHECK(
        text &&
        strstr(text, "inferbench generate: m, cpu, prompt 4 tokens, 2 new tokens from depth 4, 3 sessions"));
    CHECK(text && strstr(text, "failed: boom"));
    ib_free(text);
    cJSON_Delete(root);
    ib_free(merged);
    for (int i = 0; i < 2; i++) free(docs[i]);
}

/* The latency of sessions in CSV: each session's median and p99, then the
 * aggregate rows; the figures' geomean is the geometric mean of session
 * medians 1.1, 1.43, 1.21: 1.1 x 1.43^(1/3) = 1.239285 ms, its interval
 * [0.891028, 1.723659] (Student's t over the three log medians). */
static void test_latency_sessions_csv(void)
{
    session_script scripts[3] = { { 1, 0, 1, 0 }, { 1.3, 0, 1, 0 }, { 1.1, 0, 1, 0 } };
    char *docs[3];
    ib_session_outcome o[3];
    for (int i = 0; i < 3; i++) {
        ib_workload *w = open_session(&scripts[i]);
        ib_config cfg;
        ib_config_init(&cfg);
        cfg.warmup_runs = 2, cfg.warmup_ms = 0, cfg.warmup_until_steady = false, cfg.runs = 20;
        ib_latency_result lr;
        ib_error err;
        CHECK(ib_measure_latency(w, &cfg, &lr, &err) == IB_OK);
        docs[i] = ib_latency_report_json(&lr, ib_workload_get_info(w), &cfg);
        ib_latency_result_free(&lr);
        ib_workload_destroy(w);
        o[i] = (ib_session_outcome){ docs[i], strlen(docs[i]), 0, "" };
    }
    ib_error err;
    char *merged = ib_sessions_merge_json(o, 3, 3, &err);
    cJSON *root = merged ? cJSON_Parse(merged) : NULL;
    const cJSON *median = figure(root, "median_ms");
    CHECK_NEAR(num(median, "geomean"), 1.2392854884680333, 1e-9);
    CHECK_NEAR(num(median, "geomean"), num(cJSON_GetObjectItem(root, "sessions"), "geomean_ms"), 0);
    ib_latency_file f;
    CHECK(ib_latency_file_parse(merged, strlen(merged), &f, &err) == IB_OK);
    ib_result r = { .kind = IB_RESULT_SESSIONS, .sessions_json = merged, .sessions = &f };
    char *csv = ib_report(&r, "csv"), *md = ib_report(&r, "md");
    CHECK_NEAR(csv_after(csv, "\nfake,cpu,1,2,0,,"), 1.43, 1e-9); /* session 2: every run 1.3 x 1.1 ms */
    CHECK_NEAR(csv_after(csv, "\nfake,cpu,1,geomean,,,"), 1.2392854884680333, 1e-9);
    CHECK_NEAR(csv_after(csv, "\nfake,cpu,1,ci95_low,,,"), 0.891028054275781, 1e-6);
    CHECK_NEAR(csv_after(csv, "\nfake,cpu,1,ci95_high,,,"), 1.7236589965461397, 1e-6);
    CHECK_EQ_INT(count_lines(md), 2 + 2 + 3 + 5);
    ib_free(csv), ib_free(md);
    ib_latency_file_free(&f);
    cJSON_Delete(root);
    ib_free(merged);
    for (int i = 0; i < 3; i++) ib_free(docs[i]);
}

/* A throughput on an autotuned backend (cuDNN's exhaustive search) warns
 * that another session may pick other kernels; otherwise not. */
static void test_throughput_session_dependent(void)
{
    for (int i = 0; i < 2; i++) {
        session_script ctx = { 1, 0, 1, 0 };
        ib__fake_script s;
        ib__fake_script_init(&s);
        s.duration_ms = scripted;
        s.ctx = &ctx;
        s.gpu_like = true;
        ib_workload *w = check_open_fake(&s);
        if (i == 0) w->caps |= IB_CAP_AUTOTUNED; /* what the exhaustive search declares */
        ib_throughput_config cfg;
        ib_throughput_config_init(&cfg);
        cfg.run.warmup_runs = 2, cfg.run.warmup_ms = 0, cfg.run.warmup_until_steady = false, cfg.run.runs = 5;
        cfg.run.sample_gpu_state = false;
        static const int64_t list[] = { 1, 2 };
        cfg.batches = list, cfg.n_batches = 2;
        ib_throughput_result *r = malloc(sizeof *r);
        ib_error err;
        CHECK(r && ib_measure_throughput(w, &cfg, r, &err) == IB_OK);
        CHECK(r && !!(r->warnings & IB_WARN_SESSION_DEPENDENT) == (i == 0));
        free(r);
        ib_workload_destroy(w);
    }
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_throughput_session_dependent);
    RUN(test_throughput_sessions);
    RUN(test_throughput_tie_and_reason);
    RUN(test_throughput_sessions_energy);
    RUN(test_pitfalls_sessions);
    RUN(test_pitfalls_sessions_energy);
    RUN(test_generation_sessions);
    RUN(test_latency_sessions_csv);
    return check_summary("test_sessions_commands");
}
