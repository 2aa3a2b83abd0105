/* Fuzz target: generative serve results read back by `compare` (the JSON
 * of `serve MODEL.gguf --json`). The bytes go to ib_gen_serve_file_parse
 * as they are. Beyond "no crash", it checks what the header promises: a
 * refusal is IB_ERR_INVALID_ARG or IB_ERR_UNSUPPORTED (or out of memory)
 * with one terminated line and an emptied result; an accepted result holds
 * durations for samples, as many TTFT and end-to-end samples as completed
 * requests, no more good requests than completed. An accepted result is
 * then compared with itself: where the comparison takes it, every change
 * is exactly 0 and every report is written, the JSON parsed back. */
#include "fuzz.h"

#include "inferbench.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

static void check_refused(ib_status st, const ib_error *err, const ib_gen_serve_file *f)
{
    FUZZ_ASSERT(st == IB_ERR_INVALID_ARG || st == IB_ERR_UNSUPPORTED || st == IB_ERR_NO_MEMORY);
    size_t len = strnlen(err->message, sizeof err->message);
    FUZZ_ASSERT(len > 0 && len < sizeof err->message);
    FUZZ_ASSERT(strchr(err->message, '\n') == NULL);
    static const char prefix[] = "not an inferbench serve_generative result: ";
    FUZZ_ASSERT(st == IB_ERR_NO_MEMORY || strncmp(err->message, prefix, sizeof prefix - 1) == 0);
    FUZZ_ASSERT(f->ttft_ms == NULL && f->tpot_ms == NULL && f->itl_ms == NULL && f->e2e_ms == NULL);
    FUZZ_ASSERT(f->n_ttft == 0 && f->n_tpot == 0 && f->n_itl == 0 && f->n_e2e == 0);
}

static void check_samples(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) FUZZ_ASSERT(isfinite(x[i]));
}

static void check_reports(const ib_gen_serve_file *f, const ib_gen_serve_comparison *c)
{
    ib_result res = { .kind = IB_RESULT_GEN_SERVE_COMPARISON,
                      .gen_serve_comparison = c,
                      .gen_serve_a = f,
                      .gen_serve_b = f,
                      .a_name = "a.json",
                      .b_name = "b.json" };
    const char *formats[] = { "text", "json", "csv", "md" };
    for (size_t i = 0; i < 4; i++) {
        char *doc = ib_report(&res, formats[i]);
        FUZZ_ASSERT(doc != NULL);
        if (i == 1) {
            cJSON *back = cJSON_Parse(doc);
            FUZZ_ASSERT(back != NULL);
            cJSON_Delete(back);
        }
        ib_free(doc);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ib_gen_serve_file f;
    ib_error err = { { 0 } };
    ib_status st = ib_gen_serve_file_parse((const char *)data, size, &f, &err);
    if (st != IB_OK) {
        check_refused(st, &err, &f);
        return 0;
    }
    FUZZ_ASSERT(f.n_ttft == f.completed && f.n_e2e == f.completed && f.good <= f.completed);
    FUZZ_ASSERT(f.completed <= f.requests && f.n_tpot <= f.completed);
    check_samples(f.ttft_ms, f.n_ttft);
    check_samples(f.tpot_ms, f.n_tpot);
    check_samples(f.itl_ms, f.n_itl);
    check_samples(f.e2e_ms, f.n_e2e);
    ib_gen_serve_comparison c;
    if (ib_compare_gen_serve_files(&f, &f, 0.01, &c, &err) == IB_OK) {
        FUZZ_ASSERT(c.ttft.change == 0 && c.tpot.change == 0 && c.itl.change == 0 && c.e2e.change == 0);
        FUZZ_ASSERT(isnan(c.good_share_change) || c.good_share_change == 0);
        check_reports(&f, &c);
    } else {
        FUZZ_ASSERT(strchr(err.message, '\n') == NULL);
    }
    ib_gen_serve_file_free(&f);
    FUZZ_ASSERT(f.ttft_ms == NULL && f.itl_ms == NULL);
    return 0;
}
