/* inferbench serve MODEL.gguf|zoo:NAME: a generative model served under
 * load by the in-process engine (the library's ib_measure_gen_serve;
 * docs/serve-generative.md). The same command as a forward-pass model's
 * serve, chosen by the model; the options of one kind given to the other
 * are refused. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool cli_generative_model(const cli_args *a)
{
    const char *model = a->model;
    if (a->gen_backend) return true;
    if (!model) return false;
    if (!strncmp(model, "zoo:", 4)) return ib_zoo_lm_find(model + 4) != NULL;
    size_t n = strlen(model);
    return n > 5 && !strcasecmp(model + n - 5, ".gguf");
}

/* Both paths of serve read their --arrivals files through this one. */
char *cli_read_arrivals(const char *path, size_t *len)
{
    errno = 0;
    FILE *f = fopen(path, "rb");
    char *buf = f ? malloc(MAX_SCHEDULE_BYTES + 1) : NULL;
    *len = buf ? fread(buf, 1, MAX_SCHEDULE_BYTES + 1, f) : 0;
    bool failed = !buf || ferror(f);
    int why = errno;
    if (f) fclose(f);
    if (failed) {
        free(buf);
        fprintf(stderr, "inferbench: --arrivals '%s': cannot read it (%s)\n", path,
                why ? strerror(why) : "out of memory");
        return NULL;
    }
    if (*len > MAX_SCHEDULE_BYTES) {
        free(buf);
        fprintf(stderr, "inferbench: --arrivals '%s': larger than 64 MiB\n", path);
        return NULL;
    }
    return buf;
}

static bool bad_input(const char *flag, const char *text, const char *why)
{
    fprintf(stderr, "inferbench: %s '%s': %s\n", flag, text, why);
    return false;
}

/* "50,100,200": numbers above zero, at most IB_SERVE_MAX_RATES. */
bool cli_parse_rates(const char *text, double *out, size_t *n)
{
    *n = 0;
    for (const char *s = text;;) {
        size_t len = strcspn(s, ",");
        char buf[64], *end;
        if (*n == IB_SERVE_MAX_RATES) return bad_input("--rates", text, "more than 32 rates");
        if (len == 0 || len >= sizeof buf || *s == ' ' || *s == '+')
            return bad_input("--rates", text, "expected numbers above 0 separated by commas");
        memcpy(buf, s, len);
        buf[len] = '\0';
        double v = strtod(buf, &end);
        if (*end || !isfinite(v) || v > 1e9)
            return bad_input("--rates", text, "expected numbers separated by commas");
        if (!(v > 0)) return bad_input("--rates", text, "a rate must be above 0 requests/s");
        out[(*n)++] = v;
        if (s[len] == '\0') return true;
        s += len + 1;
    }
}

/* serve's options that a generative model's engine does not take (yet:
 * the HTTP client is still to come, docs/serve-generative.md), and those
 * only it takes. */
static const char *const forward_only[] = {
    "slo-p99-ms",    "slo-ms",    "rate-floor",   "instances",   "concurrency",
    "request-batch", "max-batch", "max-delay-us", "duration-ms", "devices",
    "requests-csv",  "depth",     "shape",        "input",       "memory-cap-mb",
};
static const char *const generative_only[] = {
    "slots",           "prefill-chunk",    "burstiness",  "slo-ttft-ms", "slo-tpot-ms",   "slo-e2e-ms",
    "warmup-requests", "prompt-tokens",    "new-tokens",  "ctx-per-seq", "shared-prefix", "prefix-cache",
    "pitfalls",        "steps-csv",        "engine-cost", "best",        "step-max-ms",   "sessions",
    "sessions-max-ms", "require-idle-gpu", "sampling",
};

static int refuse_options(const cli_args *a, bool gen)
{
    const char *const *names = gen ? forward_only : generative_only;
    size_t n =
        gen ? sizeof forward_only / sizeof *forward_only : sizeof generative_only / sizeof *generative_only;
    for (size_t i = 0; i < n; i++)
        if (cli_given(a, names[i])) {
            fprintf(stderr,
                    gen ? "inferbench: serve --%s is not (yet) for a generative model: %s is served by its "
                          "engine (docs/serve-generative.md)\n"
                        : "inferbench: serve --%s is for a generative model (a GGUF file or one of the "
                          "zoo's), not %s\n",
                    names[i], a->model);
            return EXIT_BAD_INPUT;
        }
    return EXIT_OK;
}

int cli_serve_refuse_generative(const cli_args *a) { return refuse_options(a, false); }

/* --arrivals FILE: the request trace, parsed strictly; *trace owned by the
 * caller. */
static bool load_trace(const char *path, ib_gen_request_spec **trace, size_t *n)
{
    size_t len = 0;
    char *text = cli_read_arrivals(path, &len);
    if (!text) return false;
    ib_error err = { { 0 } };
    ib_status st = ib_gen_trace_parse(text, len, trace, n, &err);
    free(text);
    if (st != IB_OK) fprintf(stderr, "inferbench: --arrivals '%s': %s\n", path, err.message);
    return st == IB_OK;
}

/* No rate, no list, a target: the search for the highest rate within it. */
static bool searching(const cli_args *a, const ib_gen_serve_config *c)
{
    return !(a->rate > 0) && !a->rates && c->arrivals != IB_ARRIVALS_TRACE &&
           (c->slo_ttft_ms > 0 || c->slo_tpot_ms > 0);
}

bool cli_gen_serve_searching(const cli_args *a, const ib_gen_serve_config *c) { return searching(a, c); }

/* The arrivals as the options give them; false after one line. */
static bool arrivals(cli_args *a, ib_gen_serve_config *c, ib_gen_request_spec **trace)
{
    const char *arr = a->arrivals ? a->arrivals : "poisson";
    if (!strcmp(arr, "poisson"))
        c->arrivals = IB_ARRIVALS_POISSON;
    else if (!strcmp(arr, "constant"))
        c->arrivals = IB_ARRIVALS_CONSTANT;
    else if (!load_trace(arr, trace, &c->n_trace))
        return false;
    else {
        c->arrivals = IB_ARRIVALS_TRACE;
        c->trace = *trace;
    }
    const char *why = NULL;
    if (c->arrivals == IB_ARRIVALS_TRACE && (a->rate > 0 || a->rates || cli_given(a, "requests")))
        why = "--rate, --rates and --requests do not apply to a trace (it gives every request)";
    else if (c->arrivals == IB_ARRIVALS_TRACE &&
             (a->token_range || cli_given(a, "prompt-tokens") || cli_given(a, "new-tokens")))
        why = "--prompt-tokens and --new-tokens do not apply to a trace (it gives every request's lengths)";
    else if (c->arrivals != IB_ARRIVALS_POISSON && cli_given(a, "burstiness"))
        why = "--burstiness shapes random arrivals (poisson, the default), not constant ones or a trace";
    else if (c->arrivals != IB_ARRIVALS_TRACE && !(a->rate > 0) && !a->rates && !searching(a, c))
        why = "serve of a generative model needs --rate R (requests/s), --rates LIST (the curve), targets to "
              "search the highest rate within (--slo-ttft-ms, --slo-tpot-ms) or --arrivals FILE (a trace)";
    else if (cli_given(a, "slo-percentile") && !(c->slo_ttft_ms > 0 || c->slo_tpot_ms > 0))
        why = "--slo-percentile needs --slo-ttft-ms or --slo-tpot-ms: it names their percentile";
    else if ((cli_given(a, "slo-percentile") || cli_given(a, "confidence")) && !a->rates && !searching(a, c))
        why = "--slo-percentile and --confidence judge the rates of a search or of --rates, not one run";
    else if (c->pitfalls && (a->rates || searching(a, c)))
        why = "--pitfalls measures one run's mistakes: give --rate R or a trace, not --rates or a search";
    if (why) fprintf(stderr, "inferbench: %s\n", why);
    return why == NULL;
}

/* The requests' configuration from the options; false after one line. */
static bool gen_serve_config(cli_args *a, ib_gen_serve_config *c, ib_gen_request_spec **trace)
{
    *c = a->gen_serve;
    c->rate = a->rate;
    c->seed = a->serve.seed;
    c->requests = a->serve.requests; /* the one default of both kinds of serve */
    if (cli_given(a, "ctx-per-seq")) c->ctx_per_slot = a->gen.ctx_per_seq;
    c->run = a->cfg;
    c->run.cancel = &cli_cancel_flag;
    cli_progress_attach(&c->run, a->quiet);
    return arrivals(a, c, trace);
}

static int open_model(const cli_args *a, ib_gen **g)
{
    ib_error err = { { 0 } };
    ib_status st = cli_gen_open(a, NULL, 0, g, &err);
    if (st != IB_OK) return cli_fail(st, err.message), EXIT_BAD_INPUT;
    return cli_options_fit_device(a, ib_gen_get_info(*g)->device) ? EXIT_OK : EXIT_BAD_INPUT;
}

/* --steps-csv: prepared beside the other outputs (never one of their
 * files, nor a file serve reads); false after a one-line refusal. */
static bool prepare_steps_csv(const cli_args *a, const cli_outputs *out, cli_output *steps)
{
    memset(steps, 0, sizeof *steps);
    if (a->steps_csv_path && !strcmp(a->steps_csv_path, "-")) {
        fprintf(stderr, "inferbench: --steps-csv: give a file (standard output carries the report)\n");
        return false;
    }
    const char *reads[] = { a->model, a->arrivals, NULL };
    const cli_output *earlier[CLI_N_OUTPUTS + 1] = { NULL };
    for (int i = 0; i < CLI_N_OUTPUTS; i++) earlier[i] = &out->file[i];
    return cli_output_prepare(steps, "--steps-csv", a->steps_csv_path, reads, earlier);
}

/* The steps served (before a failure or Ctrl-C too); false after one line. */
static bool write_steps_csv(cli_output *steps, const ib_gen_serve_result *r)
{
    if (!cli_output_wanted(steps)) return true;
    char *csv = r->requests ? ib_gen_serve_steps_csv(r) : NULL;
    if (!csv) {
        cli_output_abort(steps);
        if (r->requests) fprintf(stderr, "inferbench: --steps-csv: out of memory: not written\n");
        return !r->requests;
    }
    bool ok = cli_output_commit_bytes(steps, csv, strlen(csv));
    ib_free(csv);
    return ok;
}

static int measure(ib_gen *g, const ib_gen_serve_config *c, cli_outputs *out, cli_output *steps)
{
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    ib_status st = ib_measure_gen_serve(g, c, &r, &err);
    /* Nothing was served when the settings were refused before the run. */
    bool began = r.requests != NULL;
    ib_result res = { .kind = IB_RESULT_GEN_SERVE, .gen_serve = &r, .gen_serve_cfg = c };
    int code = cli_report(out, began ? &res : NULL, st, &err);
    if (!write_steps_csv(steps, &r) && code == EXIT_OK)
        code = EXIT_RUN_FAILED; /* as serve's --requests-csv */
    ib_gen_serve_result_free(&r);
    /* The slots' KV cache not fitting is an answer before the run, as a
     * bad setting is (the sequence search's "does not fit"). */
    return !began && st == IB_ERR_DEVICE_OOM ? EXIT_BAD_INPUT : code;
}

bool cli_gen_serve_settings(cli_args *a, ib_gen_serve_config *c, ib_gen_request_spec **trace)
{
    *trace = NULL;
    if (refuse_options(a, true) != EXIT_OK) return false;
    if (gen_serve_config(a, c, trace)) return true;
    free(*trace);
    *trace = NULL;
    return false;
}

bool cli_gen_serve_begin(cli_args *a, ib_gen_serve_config *c, ib_gen_request_spec **trace, double *rates,
                         size_t *n_rates, int *code)
{
    *n_rates = 0;
    *code = EXIT_BAD_INPUT;
    if (!cli_gen_serve_settings(a, c, trace)) return false;
    if (a->rates && !cli_parse_rates(a->rates, rates, n_rates)) {
        free(*trace);
        *trace = NULL;
        return false;
    }
    if (!cli_sessions_wanted(a)) return true;
    /* The sessions read c's trace: freed once they are done. */
    *code = cli_gen_serve_sessions(a, c, *n_rates);
    free(*trace);
    *trace = NULL;
    return false;
}

void cli_gen_serve_rates_config(const cli_args *a, const double *rates, size_t n_rates,
                                ib_gen_serve_rates_config *rc)
{
    ib_gen_serve_rates_config_init(rc);
    rc->percentile = a->serve.slo_percentile;
    rc->confidence = a->serve.confidence;
    rc->rates = rates;
    rc->n_rates = n_rates;
    /* In process and over HTTP alike: a line a rate, at the targets given */
    cli_progress_attach_rates(rc, &a->gen_serve, a->quiet);
}

/* The same schedule served in fresh processes, merged by the library:
 * one run's figures a session, not a search's or a curve's. */
int cli_gen_serve_sessions(cli_args *a, const ib_gen_serve_config *c, size_t n_rates)
{
    if (n_rates > 0 || searching(a, c) || c->pitfalls)
        return cli_fail(IB_ERR_INVALID_ARG, "serve --sessions repeats the run of one rate (--rate R or a "
                                            "trace), not a search, a curve over rates or the pitfalls");
    return cli_run_sessions(a, IB_RESULT_GEN_SERVE);
}

/* The search (no rate, targets) or the curve (--rates): the run at the
 * answer printed with the rates. */
static int measure_rates(ib_gen *g, const cli_args *a, const ib_gen_serve_config *c, const double *rates,
                         size_t n_rates, cli_outputs *out, cli_output *steps)
{
    ib_gen_serve_rates_config rc;
    cli_gen_serve_rates_config(a, rates, n_rates, &rc);
    ib_gen_serve_rates_result r;
    ib_error err = { { 0 } };
    ib_status st = n_rates > 0 ? ib_measure_gen_serve_curve(g, c, &rc, &r, &err)
                               : ib_search_gen_serve(g, c, &rc, &r, &err);
    bool began = r.n_points > 0;
    ib_result res = { .kind = IB_RESULT_GEN_SERVE,
                      .gen_serve = &r.at,
                      .gen_serve_cfg = c,
                      .gen_serve_rates = &r,
                      .gen_serve_rates_cfg = &rc };
    int code = cli_report(out, began ? &res : NULL, st, &err);
    if (!write_steps_csv(steps, &r.at) && code == EXIT_OK)
        code = EXIT_RUN_FAILED; /* the run at the answer's */
    ib_gen_serve_rates_result_free(&r);
    return !began && st == IB_ERR_DEVICE_OOM ? EXIT_BAD_INPUT : code;
}

int cmd_serve_gen(cli_args *a)
{
    if (cli_given(a, "step-max-ms"))
        return cli_fail(IB_ERR_INVALID_ARG, "serve --step-max-ms bounds the race of --best");
    if (a->session_index) cli_session_child_setup(a);
    ib_gen_serve_config c;
    ib_gen_request_spec *trace = NULL;
    double rates[IB_SERVE_MAX_RATES];
    size_t n_rates = 0;
    int code = EXIT_OK;
    if (!cli_gen_serve_begin(a, &c, &trace, rates, &n_rates, &code)) return code;
    cli_outputs out;
    cli_output steps;
    code = cli_prepare_outputs(a, &out);
    if (code == EXIT_OK && !prepare_steps_csv(a, &out, &steps)) {
        cli_outputs_abort(&out);
        code = EXIT_BAD_INPUT;
    }
    ib_gen *g = NULL;
    if (code == EXIT_OK && (code = open_model(a, &g)) != EXIT_OK) {
        cli_outputs_abort(&out);
        cli_output_abort(&steps);
    }
    if (code == EXIT_OK)
        code = n_rates > 0 || searching(a, &c) ? measure_rates(g, a, &c, rates, n_rates, &out, &steps)
                                               : measure(g, &c, &out, &steps);
    ib_gen_destroy(g);
    free(trace);
    return code;
}
