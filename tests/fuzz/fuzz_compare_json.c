/* Fuzz target: latency results read back by `compare`, the JSON a CI job
 * hands the tool from wherever it kept it. The bytes go to
 * ib_latency_file_parse as they are (embedded NULs included). Beyond "no
 * crash", it checks what the header promises: a refusal is
 * IB_ERR_INVALID_ARG with one terminated line and an emptied result; an
 * accepted result has 1..1,000,000 samples, each a duration from 1 ns to
 * 10^9 ms. An accepted
 * result of at least 6 samples is then compared with itself (which must
 * give a change of exactly 0 and a Mann-Whitney p of 1) and both reports
 * are written, the JSON one parsed back, and again widened by a spread
 * between sessions. The bytes are also read as a calibration record. */
#include "fuzz.h"
#include "core/compare.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

static void check_refused(ib_status st, const ib_error *err, const ib_latency_file *f)
{
    FUZZ_ASSERT(st == IB_ERR_INVALID_ARG || st == IB_ERR_NO_MEMORY);
    size_t len = strnlen(err->message, sizeof err->message);
    FUZZ_ASSERT(len > 0 && len < sizeof err->message);
    FUZZ_ASSERT(strchr(err->message, '\n') == NULL);
    static const char prefix[] = "not an inferbench latency result: ";
    FUZZ_ASSERT(st != IB_ERR_INVALID_ARG || strncmp(err->message, prefix, sizeof prefix - 1) == 0);
    FUZZ_ASSERT(f->samples_ms == NULL && f->n == 0);
    FUZZ_ASSERT(f->sessions == NULL && f->n_sessions == 0);
}

/* A multi-session result: each session failed (no samples) or holds
 * durations; compared with itself (two levels when 2 measured) and
 * reported. */
static void check_sessions(const ib_latency_file *f)
{
    FUZZ_ASSERT(f->n_sessions <= IB_SESSIONS_MAX && f->sessions != NULL);
    for (size_t i = 0; i < f->n_sessions; i++) {
        const ib_latency_session *s = &f->sessions[i];
        FUZZ_ASSERT((s->samples_ms == NULL) == (s->n == 0));
        for (size_t j = 0; j < s->n; j++)
            FUZZ_ASSERT(s->samples_ms[j] >= IB__MIN_DURATION_MS && s->samples_ms[j] <= IB__MAX_DURATION_MS);
        FUZZ_ASSERT(strnlen(s->message, sizeof s->message) < sizeof s->message);
    }
    char *text = ib_sessions_report_text(f);
    FUZZ_ASSERT(text != NULL);
    ib_free(text);
    char *page = ib_sessions_report_html(f);
    FUZZ_ASSERT(page != NULL);
    ib_free(page);
    ib_comparison c;
    ib_error err;
    ib_status st = ib_compare_files(f, f, 0.01, &c, &err);
    FUZZ_ASSERT(st == IB_OK || st == IB_ERR_INVALID_ARG || st == IB_ERR_NO_MEMORY);
    if (st == IB_OK)
        FUZZ_ASSERT(c.change == 0 && c.verdict != IB_CHANGE_FASTER && c.verdict != IB_CHANGE_SLOWER);
}

static void check_accepted(const ib_latency_file *f)
{
    FUZZ_ASSERT(f->n >= 1 && f->n <= 1000000 && f->samples_ms != NULL);
    for (size_t i = 0; i < f->n; i++)
        FUZZ_ASSERT(f->samples_ms[i] >= IB__MIN_DURATION_MS && f->samples_ms[i] <= IB__MAX_DURATION_MS);
    FUZZ_ASSERT(strnlen(f->model, sizeof f->model) < sizeof f->model);
    FUZZ_ASSERT(strnlen(f->device, sizeof f->device) < sizeof f->device);
    FUZZ_ASSERT(strnlen(f->gpu, sizeof f->gpu) < sizeof f->gpu);
    FUZZ_ASSERT(strnlen(f->provider, sizeof f->provider) < sizeof f->provider);
    FUZZ_ASSERT(strnlen(f->runtime_version, sizeof f->runtime_version) < sizeof f->runtime_version);
    FUZZ_ASSERT(f->timing == IB_TIMING_DEVICE_EVENTS || f->timing == IB_TIMING_HOST_CLOCK);
    FUZZ_ASSERT(f->batch >= 0);
    /* the options: whole keys and values, each key once */
    FUZZ_ASSERT(f->options.n <= IB_MAX_OPTIONS);
    for (size_t i = 0; i < f->options.n && i < IB_MAX_OPTIONS; i++) {
        FUZZ_ASSERT(f->options.items[i].key[0] &&
                    strnlen(f->options.items[i].key, IB_OPTION_KEY_LEN) < IB_OPTION_KEY_LEN);
        FUZZ_ASSERT(strnlen(f->options.items[i].value, IB_OPTION_VALUE_LEN) < IB_OPTION_VALUE_LEN);
        FUZZ_ASSERT(ib_option_list_get(&f->options, f->options.items[i].key) == f->options.items[i].value);
    }
}

static void check_reports(const ib_comparison *c, const ib_latency_file *f)
{
    char *text = ib_comparison_report_text(c, f, "a.json", f, "b.json");
    FUZZ_ASSERT(text && strstr(text, "\nverdict: "));
    ib_free(text);
    char *doc = ib_comparison_report_json(c, f, "a.json", f, "b.json");
    FUZZ_ASSERT(doc != NULL);
    cJSON *root = cJSON_Parse(doc);
    FUZZ_ASSERT(root != NULL);
    const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(root, "verdict");
    FUZZ_ASSERT(cJSON_IsString(verdict) && !strcmp(verdict->valuestring, ib_change_name(c->verdict)));
    cJSON_Delete(root);
    ib_free(doc);
}

/* Identical samples: U sits exactly at its mean (sums of halves are exact
 * in a double at these sizes), so p is 1, and the medians' ratio is 1. */
static void compare_with_itself(const ib_latency_file *f)
{
    ib_comparison c;
    ib_error err;
    ib_status st = ib_compare_samples(f->samples_ms, f->n, f->samples_ms, f->n, 0.01, &c, &err);
    FUZZ_ASSERT(st == IB_OK || st == IB_ERR_NO_MEMORY);
    if (st != IB_OK) return;
    FUZZ_ASSERT(c.change == 0 && c.mann_whitney_p == 1);
    FUZZ_ASSERT(c.change_ci95[0] <= c.change_ci95[1]);
    FUZZ_ASSERT(c.verdict != IB_CHANGE_FASTER && c.verdict != IB_CHANGE_SLOWER);
    check_reports(&c, f);
    /* Widened by a spread between sessions: wider, still holding 0. */
    ib_comparison w = c;
    FUZZ_ASSERT(ib_compare_widen(&w, 0.01, 4, 1, 1, "fuzz", &err) == IB_OK);
    FUZZ_ASSERT(w.change_ci95[0] <= c.change_ci95[0] && w.change_ci95[1] >= c.change_ci95[1]);
    FUZZ_ASSERT(w.change_ci95[0] <= 0 && w.change_ci95[1] >= 0);
    FUZZ_ASSERT(w.verdict != IB_CHANGE_FASTER && w.verdict != IB_CHANGE_SLOWER);
    check_reports(&w, f);
}

/* The bytes as a calibration record (docs/json.md, "inferbench.spread/1"):
 * refused with one line, or read; an accepted result of sessions added to
 * it (or to a new record when it is not one) is found again. */
static void check_record(const char *text, size_t len, const ib_latency_file *f)
{
    double sd;
    size_t sessions, results;
    ib_error err;
    ib_status st = ib_spread_record_find(text, len, f, &sd, &sessions, &results, &err);
    FUZZ_ASSERT(st == IB_OK || st == IB_ERR_INVALID_ARG || st == IB_ERR_NO_MEMORY);
    FUZZ_ASSERT(st != IB_OK || (sd >= 0 && sd < 10 && (results == 0) == (sessions == 0)));
    if (ib_latency_file_spread(f, &sd, &sessions, &err) != IB_OK) return;
    char *doc = ib_spread_record_add(st == IB_OK ? text : NULL, st == IB_OK ? len : 0, f, &err);
    FUZZ_ASSERT(doc != NULL);
    FUZZ_ASSERT(ib_spread_record_find(doc, strlen(doc), f, &sd, &sessions, &results, &err) == IB_OK);
    FUZZ_ASSERT(results >= 1 && sd >= 0 && sd < 10);
    ib_free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ib_latency_file f;
    ib_error err;
    memset(&f, 0x5a, sizeof f); /* the parser must set every field */
    memset(&err, 0x5a, sizeof err);
    ib_status st = ib_latency_file_parse((const char *)data, size, &f, &err);
    if (st != IB_OK) {
        check_refused(st, &err, &f);
        check_record((const char *)data, size, &f); /* f emptied: a kind of nothing */
    } else {
        check_record((const char *)data, size, &f);
        check_accepted(&f);
        if (f.n >= IB_COMPARE_MIN_SAMPLES) compare_with_itself(&f);
        if (f.n_sessions > 0) check_sessions(&f);
    }
    ib_latency_file_free(&f);
    return 0;
}
