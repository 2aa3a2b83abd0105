/* Fuzz target: generation results read back by `compare` (the JSON of
 * `generate --json`, kept wherever a CI job kept it). The bytes go to
 * ib_gen_file_parse as they are. Beyond "no crash", it checks what the
 * header promises: a refusal is IB_ERR_INVALID_ARG or IB_ERR_UNSUPPORTED
 * (or out of memory) with one terminated line and an emptied result; an
 * accepted result holds finite samples, its arrays NULL exactly when
 * empty, a merged result's sessions laid over them in order. An accepted
 * result is then compared with itself: where the comparison takes it (6
 * samples of durations each), both changes are exactly 0 and the text and
 * JSON reports are written, the JSON parsed back. */
#include "fuzz.h"

#include "inferbench.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

static void check_refused(ib_status st, const ib_error *err, const ib_gen_file *f)
{
    FUZZ_ASSERT(st == IB_ERR_INVALID_ARG || st == IB_ERR_UNSUPPORTED || st == IB_ERR_NO_MEMORY);
    size_t len = strnlen(err->message, sizeof err->message);
    FUZZ_ASSERT(len > 0 && len < sizeof err->message);
    FUZZ_ASSERT(strchr(err->message, '\n') == NULL);
    static const char prefix[] = "not an inferbench generation result: ";
    FUZZ_ASSERT(st == IB_ERR_NO_MEMORY || strncmp(err->message, prefix, sizeof prefix - 1) == 0);
    FUZZ_ASSERT(f->ttft_ms == NULL && f->n_ttft == 0 && f->token_ms == NULL && f->n_token == 0);
    FUZZ_ASSERT(f->sessions == NULL && f->n_sessions == 0);
}

/* A merged result's sessions: each with runs of both kinds, laid one
 * after the other over the pooled arrays, which they fill. */
static void check_sessions(const ib_gen_file *f)
{
    size_t t = 0, k = 0;
    for (size_t i = 0; i < f->n_sessions; i++) {
        const ib_gen_file_session *s = &f->sessions[i];
        FUZZ_ASSERT(s->n_ttft > 0 && s->n_token > 0);
        FUZZ_ASSERT(s->ttft_ms == f->ttft_ms + t && s->token_ms == f->token_ms + k);
        t += s->n_ttft;
        k += s->n_token;
    }
    FUZZ_ASSERT(f->n_sessions == 0 || (t == f->n_ttft && k == f->n_token));
}

static void check_samples(const double *x, size_t n)
{
    FUZZ_ASSERT((x == NULL) == (n == 0));
    for (size_t i = 0; i < n; i++) FUZZ_ASSERT(isfinite(x[i]));
}

static void check_reports(const ib_gen_file *f, const ib_gen_comparison *c)
{
    ib_result res = { .kind = IB_RESULT_GEN_COMPARISON,
                      .gen_comparison = c,
                      .gen_a = f,
                      .gen_b = f,
                      .a_name = "a.json",
                      .b_name = "b.json" };
    char *text = ib_report(&res, "text"), *json = ib_report(&res, "json");
    FUZZ_ASSERT(text && json);
    cJSON *back = cJSON_Parse(json);
    FUZZ_ASSERT(back != NULL);
    cJSON_Delete(back);
    ib_free(text);
    ib_free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ib_gen_file f;
    ib_error err = { { 0 } };
    ib_status st = ib_gen_file_parse((const char *)data, size, &f, &err);
    if (st != IB_OK) {
        check_refused(st, &err, &f);
        return 0;
    }
    check_samples(f.ttft_ms, f.n_ttft);
    check_samples(f.token_ms, f.n_token);
    check_sessions(&f);
    ib_gen_comparison c;
    if (ib_compare_gen_files(&f, &f, 0.01, &c, &err) == IB_OK) {
        FUZZ_ASSERT(c.ttft.change == 0 && c.token.change == 0);
        check_reports(&f, &c);
    } else {
        FUZZ_ASSERT(strchr(err.message, '\n') == NULL);
    }
    ib_gen_file_free(&f);
    FUZZ_ASSERT(f.ttft_ms == NULL && f.token_ms == NULL);
    return 0;
}
