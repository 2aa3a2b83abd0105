/* inferbench serve MODEL: latency under load, and the highest request rate
 * that meets a latency target (docs/serve.md). */
#include "cli.h"
#include "cli_mpi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --arrivals FILE: read and parsed strictly; *times owned by the caller. */
static bool load_schedule(const char *path, double **times, size_t *n)
{
    size_t len = 0;
    char *text = cli_read_arrivals(path, &len);
    if (!text) return false;
    ib_error err = { { 0 } };
    ib_status st = ib_serve_trace_parse(text, len, times, n, &err);
    free(text);
    if (st != IB_OK) fprintf(stderr, "inferbench: --arrivals '%s': %s\n", path, err.message);
    return st == IB_OK;
}

/* The arrivals and the rates as the options give them; false (one line
 * printed) on bad input. */
static bool serve_config(cli_args *a, double *rates, double **trace)
{
    ib_serve_config *s = &a->serve;
    const char *arr = a->arrivals ? a->arrivals : "poisson";
    if (!strcmp(arr, "poisson"))
        s->arrivals = IB_ARRIVALS_POISSON;
    else if (!strcmp(arr, "constant"))
        s->arrivals = IB_ARRIVALS_CONSTANT;
    else if (!load_schedule(arr, trace, &s->n_trace))
        return false;
    else {
        s->arrivals = IB_ARRIVALS_TRACE;
        s->trace_ms = *trace;
    }
    if (cli_given(a, "slo-percentile") && !cli_given(a, "slo-ms")) {
        /* (a generative model's serve holds it to its own targets) */
        fprintf(stderr, "inferbench serve: --slo-percentile needs --slo-ms: it names the percentile of that "
                        "target\n");
        return false;
    }
    bool rated = a->rate > 0 || a->rates;
    if ((s->arrivals == IB_ARRIVALS_TRACE || s->concurrency > 0) && rated) {
        fprintf(stderr, "inferbench: --rate and --rates do not apply to %s\n",
                s->concurrency > 0 ? "a closed loop (--concurrency)" : "a schedule file (it sets the times)");
        return false;
    }
    if (s->concurrency > 0 && a->arrivals) {
        fprintf(stderr, "inferbench: --arrivals does not apply to a closed loop (--concurrency)\n");
        return false;
    }
    if (a->max_batch > IB_SERVE_MAX_BATCH) {
        fprintf(stderr, "inferbench: serve --max-batch %lld: at most %d requests a run\n",
                (long long)a->max_batch, IB_SERVE_MAX_BATCH);
        return false;
    }
    if (s->concurrency > 0 && a->max_batch > 1) {
        fprintf(stderr, "inferbench: --max-batch batches an open loop, not a closed one (--concurrency)\n");
        return false;
    }
    if (s->min_rate > 0 && (!(s->slo_ms > 0) || a->rates)) {
        fprintf(stderr, "inferbench: --rate-floor bounds the search for a target (--slo-p99-ms or --slo-ms, "
                        "not with --rates)\n");
        return false;
    }
    if (a->rates && !cli_parse_rates(a->rates, rates, &s->n_rates)) return false;
    if (a->rates)
        s->rates = rates;
    else if (a->rate > 0 && s->slo_ms > 0)
        s->start_rate = a->rate;
    else if (a->rate > 0) {
        rates[0] = a->rate;
        s->rates = rates;
        s->n_rates = 1;
    }
    if (!rated && !(s->slo_ms > 0) && s->arrivals != IB_ARRIVALS_TRACE && s->concurrency == 0) {
        fprintf(stderr, "inferbench: serve needs --rate R, --rates LIST, --slo-p99-ms T, --arrivals FILE "
                        "or --concurrency C\n");
        return false;
    }
    s->max_batch = a->max_batch;
    s->run = a->cfg;
    s->run.cancel = &cli_cancel_flag;
    cli_progress_attach(&s->run, a->quiet);
    return true;
}

/* --requests-csv: the requests the library hands over after each rate,
 * kept until the end and written with the other outputs. */
typedef struct request_log {
    cli_output file;
    ib_serve_request *rows;
    size_t n, cap;
    bool out_of_memory; /* a row could not be kept: the file is not written */
} request_log;

static void keep_request(void *ctx, const ib_serve_request *r)
{
    request_log *log = ctx;
    if (log->out_of_memory) return;
    if (log->n == log->cap) {
        size_t cap = log->cap ? 2 * log->cap : 1024;
        ib_serve_request *grown = realloc(log->rows, cap * sizeof *grown);
        if (!grown) {
            log->out_of_memory = true;
            return;
        }
        log->rows = grown;
        log->cap = cap;
    }
    log->rows[log->n++] = *r;
}

/* Prepared beside the other outputs (never one of their files, nor a file
 * serve reads); false after a one-line refusal. */
static bool prepare_request_log(const cli_args *a, const cli_outputs *out, request_log *log)
{
    if (a->requests_csv_path && !strcmp(a->requests_csv_path, "-")) {
        fprintf(stderr, "inferbench: --requests-csv: give a file (standard output carries the report)\n");
        return false;
    }
    const char *reads[] = { a->model, a->arrivals, NULL };
    const cli_output *earlier[CLI_N_OUTPUTS + 1] = { NULL };
    for (int i = 0; i < CLI_N_OUTPUTS; i++) earlier[i] = &out->file[i];
    return cli_output_prepare(&log->file, "--requests-csv", a->requests_csv_path, reads, earlier);
}

/* Writes the rows kept (what was served before a failure or Ctrl-C too);
 * false after a one-line error. */
static bool write_request_log(request_log *log)
{
    if (!cli_output_wanted(&log->file)) return true;
    if (log->out_of_memory || log->n == 0) {
        cli_output_abort(&log->file);
        if (log->out_of_memory) fprintf(stderr, "inferbench: --requests-csv: out of memory: not written\n");
        return !log->out_of_memory;
    }
    char *csv = ib_serve_requests_csv(log->rows, log->n);
    if (!csv) {
        cli_output_abort(&log->file);
        fprintf(stderr, "inferbench: --requests-csv: out of memory: not written\n");
        return false;
    }
    bool ok = cli_output_commit_bytes(&log->file, csv, strlen(csv));
    ib_free(csv);
    return ok;
}

static int measure(cli_args *a, ib_workload **ws, size_t k, cli_outputs *out)
{
    request_log log = { 0 };
    ib_serve_result *r = malloc(sizeof *r);
    if (!r || !prepare_request_log(a, out, &log)) {
        free(r);
        cli_outputs_abort(out);
        return r ? EXIT_BAD_INPUT : cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    }
    a->serve.on_request = cli_output_wanted(&log.file) ? keep_request : NULL;
    a->serve.on_request_ctx = &log;
    ib_error err = { { 0 } };
    ib_status st = ib_measure_serve_instances(ws, k, &a->serve, r, &err);
    bool measured = r->n_points > 0;
    ib_result res = {
        .kind = IB_RESULT_SERVE, .serve = r, .serve_cfg = &a->serve, .info = ib_workload_get_info(ws[0])
    };
    bool logged = write_request_log(&log);
    int code = cli_report(out, measured ? &res : NULL, st, &err);
    free(log.rows);
    free(r);
    return code == EXIT_OK && !logged ? EXIT_RUN_FAILED : code;
}

/* The instances after the first (cli_start opened it): the same model
 * opened again. Out of memory at instance i+1: i fit, said in one line. */
static int open_instances(const cli_args *a, ib_workload **ws, size_t k)
{
    ib_model_options m;
    const char *model;
    int code = cli_model_options(a, &m, &model);
    if (code != EXIT_OK) return code;
    for (size_t i = 1; i < k; i++) {
        ib_error err = { { 0 } };
        ib_status st = ib_workload_open_model(model, &m, &ws[i], &err);
        if (st == IB_OK) continue;
        char line[sizeof err.message + 160];
        if (st == IB_ERR_DEVICE_OOM || st == IB_ERR_NO_MEMORY)
            snprintf(line, sizeof line,
                     "--instances %zu: only %zu instance%s fit in memory (instance %zu: %s)", k, i,
                     i == 1 ? "" : "s", i + 1, err.message);
        else
            snprintf(line, sizeof line, "--instances %zu: instance %zu: %s", k, i + 1, err.message);
        return cli_fail(st, line);
    }
    return EXIT_OK;
}

/* The backend, its options and the model as the first instance was
 * opened with (cli_model_options; checked already when it was). */
static ib_status open_copy(void *ctx, ib_workload **out, ib_error *err)
{
    ib_model_options m;
    const char *model;
    if (cli_model_options(ctx, &m, &model) != EXIT_OK) {
        snprintf(err->message, sizeof err->message, "the model's options were refused");
        return IB_ERR_INVALID_ARG;
    }
    return ib_workload_open_model(model, &m, out, err);
}

/* --instances max: as many copies as fit, each run once at the largest
 * batch serve will use; *k is the count. */
static int open_most_instances(cli_args *a, ib_workload **ws, size_t *k)
{
    ib_error err = { { 0 } };
    size_t n = 1;
    int64_t largest = a->serve.request_batch * a->serve.max_batch;
    ib_status st = ib_serve_open_instances(open_copy, a, largest, IB_SERVE_MAX_INSTANCES, ws, &n,
                                           &a->serve.instances_ran_out, &err);
    *k = n;
    a->serve.instances_max = true;
    if (st == IB_OK) return EXIT_OK;
    char line[sizeof err.message + 80];
    snprintf(line, sizeof line, "--instances max: instance %zu: %s", n + 1, err.message);
    return cli_fail(st, line);
}

static void close_instances(ib_workload **ws, size_t k)
{
    for (size_t i = 0; i < k; i++) ib_workload_destroy(ws[i]);
}

/* What serve does not do: under MPI (one rank per GPU would need the
 * ranks to agree on every rate of a search: docs/fleet.md), and a closed
 * loop or --instances max across devices. */
static bool serve_refused(const cli_args *a)
{
    const char *why = NULL;
    if (cli_mpi_launched(NULL))
        why = "serve does not run under MPI (each rank would serve alone): use --devices for the GPUs of one "
              "host";
    else if (a->devices && a->serve.concurrency > 0)
        why = "--devices serves an open loop; a closed loop (--concurrency) runs on one device";
    else if (a->devices && a->instances_max)
        why = "--instances max searches one device's memory: give --instances K with --devices";
    else if (a->devices && a->requests_csv_path)
        why = "--requests-csv logs the requests of one device: not with --devices";
    if (why) fprintf(stderr, "inferbench: %s\n", why);
    return why != NULL;
}

int cmd_serve(cli_args *a)
{
    if (a->endpoint.url) return cmd_serve_endpoint(a);
    if (cli_generative_model(a)) return a->serve_best ? cmd_serve_best(a) : cmd_serve_gen(a);
    if (cli_serve_refuse_generative(a) != EXIT_OK) return EXIT_BAD_INPUT;
    double rates[IB_SERVE_MAX_RATES];
    double *trace = NULL;
    if (serve_refused(a) || !serve_config(a, rates, &trace)) {
        free(trace);
        return EXIT_BAD_INPUT;
    }
    cli_apply_memory_cap(a);
    size_t k = a->instances > 0 ? (size_t)a->instances : 1;
    if (a->devices) {
        int code = cli_run_fleet_serve(a, k);
        free(trace);
        return code;
    }
    ib_workload *ws[IB_SERVE_MAX_INSTANCES] = { 0 };
    cli_outputs out;
    int code = cli_start(a, &out, &ws[0]);
    bool started = code == EXIT_OK;
    if (started) code = a->instances_max ? open_most_instances(a, ws, &k) : open_instances(a, ws, k);
    if (code == EXIT_OK)
        code = measure(a, ws, k, &out);
    else if (started)
        cli_outputs_abort(&out);
    close_instances(ws, k);
    free(trace);
    return code;
}
