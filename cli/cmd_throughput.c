/* inferbench throughput MODEL: the best batch, inputs/s and the whole curve. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* The largest batch a list may name (as --max-batch). */
#define MAX_LISTED_BATCH ((int64_t)1 << 20)

static bool bad_batches(const char *text, const char *why)
{
    fprintf(stderr, "inferbench: --batches '%s': %s\n", text, why);
    return false;
}

/* One whole number of [s, s+len): digits only (no sign, no space), in
 * 1..MAX_LISTED_BATCH. */
static bool parse_count(const char *s, size_t len, int64_t *out)
{
    if (len == 0 || len > 8) return false; /* 8 digits pass the bound already */
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return v >= 1 && v <= MAX_LISTED_BATCH;
}

/* "A:B:STEP": A, A+STEP, ... up to B. */
static bool parse_range(const char *text, int64_t *out, size_t *n)
{
    const char *c1 = strchr(text, ':');
    const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    int64_t lo, hi, step;
    if (!c2 || strchr(c2 + 1, ':') || strchr(text, ','))
        return bad_batches(text, "a range is FIRST:LAST:STEP, three whole numbers");
    if (!parse_count(text, (size_t)(c1 - text), &lo) || !parse_count(c1 + 1, (size_t)(c2 - c1 - 1), &hi) ||
        !parse_count(c2 + 1, strlen(c2 + 1), &step))
        return bad_batches(text, "each of FIRST:LAST:STEP must be a whole number between 1 and 1048576");
    if (lo > hi) return bad_batches(text, "FIRST must not exceed LAST");
    if ((hi - lo) / step + 1 > IB_MAX_POINTS) return bad_batches(text, "more than 256 batches");
    *n = 0;
    for (int64_t b = lo; b <= hi; b += step) out[(*n)++] = b;
    return true;
}

/* "1,8,64": distinct whole numbers, nothing empty between the commas. */
static bool parse_list(const char *text, int64_t *out, size_t *n)
{
    *n = 0;
    for (const char *s = text;;) {
        size_t len = strcspn(s, ",");
        if (*n == IB_MAX_POINTS) return bad_batches(text, "more than 256 batches");
        if (!parse_count(s, len, &out[*n]))
            return bad_batches(text, "expected whole numbers between 1 and 1048576 separated by commas");
        for (size_t i = 0; i < *n; i++)
            if (out[i] == out[*n]) return bad_batches(text, "a batch is listed twice");
        (*n)++;
        if (s[len] == '\0') return true;
        s += len + 1;
    }
}

static bool parse_batches(const char *text, int64_t *out, size_t *n)
{
    return strchr(text, ':') ? parse_range(text, out, n) : parse_list(text, out, n);
}

static void throughput_config(const cli_args *a, ib_throughput_config *tc)
{
    ib_throughput_config_init(tc);
    tc->run = a->cfg; /* cli_parse started from the throughput defaults */
    tc->run.cancel = &cli_cancel_flag;
    cli_progress_attach(&tc->run, a->quiet);
    tc->max_batch = a->max_batch;
    tc->max_time_ms = a->throughput_max_ms;
    tc->latency_budget_ms = a->latency_budget_ms;
}

/* Measures, shows and saves; what was measured is kept after a failure.
 * The result is large (every probe and point): on the heap. */
static int measure(const cli_args *a, ib_workload *w, const ib_throughput_config *tc,
                   const ib_accuracy *accuracy, cli_outputs *out)
{
    ib_throughput_result *r = malloc(sizeof *r);
    if (!r) {
        cli_outputs_abort(out);
        return cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    }
    ib_error err = { { 0 } };
    ib_status st = ib_measure_throughput(w, tc, r, &err);
    st = cli_idle_gpu_after(a, &r->env, st, &err);
    r->accuracy = *accuracy;
    bool measured = r->n_points > 0 || r->n_probes > 0;
    ib_result res = {
        .kind = IB_RESULT_THROUGHPUT, .throughput = r, .info = ib_workload_get_info(w), .throughput_cfg = tc
    };
    int code = cli_report(out, measured ? &res : NULL, st, &err);
    free(r);
    return code;
}

/* A file holds the values of one batch, and the search runs many: no rule
 * makes a batch of 256 from a file of 1 without inventing values, so a
 * file input is refused here (docs/cli.md). */
static bool refuse_file_inputs(const cli_args *a)
{
    for (size_t i = 0; i < a->model_opts.n_inputs; i++)
        if (a->inputs[i].fill == IB_INPUT_FILE) {
            fprintf(stderr,
                    "inferbench: --input %s=%s: throughput runs other batches than the one a file "
                    "holds; use a generated SPEC (random, random:LO..HI, a number, zeros, ones), "
                    "or latency --batch N for this file\n",
                    a->inputs[i].name, a->inputs[i].spec);
            return true;
        }
    return false;
}

int cmd_throughput(cli_args *a)
{
    if (refuse_file_inputs(a)) return EXIT_BAD_INPUT;
    int64_t batches[IB_MAX_POINTS];
    size_t n_batches = 0;
    if (a->batches && !parse_batches(a->batches, batches, &n_batches)) return EXIT_BAD_INPUT;
    if (cli_sessions_wanted(a)) return cli_run_sessions(a, IB_RESULT_THROUGHPUT);
    if (a->session_index) cli_session_child_setup(a);
    ib_throughput_config tc;
    throughput_config(a, &tc);
    if (cli_fleet_wanted(a) && n_batches > 1) {
        fprintf(stderr,
                "inferbench: --batches %s: a fleet runs every device at one batch (--batches B, or "
                "none: the peak of a search on the first device)\n",
                a->batches);
        return EXIT_BAD_INPUT;
    }
    if (cli_fleet_wanted(a)) return cli_run_fleet(a, IB_RESULT_THROUGHPUT, n_batches == 1 ? batches[0] : 0);
    if (n_batches > 0) {
        tc.batches = batches;
        tc.n_batches = n_batches;
    }
    cli_apply_memory_cap(a);

    cli_outputs out;
    ib_workload *w;
    int code = cli_start(a, &out, &w);
    if (code != EXIT_OK) return code;
    ib_accuracy accuracy;
    code = cli_require_idle_gpu(a, true);
    if (code == EXIT_OK) code = cli_accuracy(a, w, &accuracy);
    if (code == EXIT_OK)
        code = measure(a, w, &tc, &accuracy, &out);
    else
        cli_outputs_abort(&out);
    ib_workload_destroy(w);
    return code;
}
