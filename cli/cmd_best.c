/* inferbench best MODEL: the fastest configuration that stays accurate.
 * The program lists the candidates (a small table over the model options
 * that exist: --math, and on CUDA the CUDA graph, the NHWC preference and
 * cuDNN's search); the library races them (src/core/best.c, docs/best.md). */
#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const ib_math maths[] = { IB_MATH_FP32, IB_MATH_TF32, IB_MATH_FP16, IB_MATH_BF16 };
static const char *const searches[] = { "EXHAUSTIVE", "HEURISTIC" };

/* One candidate: the model options it changes, or why it is not tried. */
typedef struct candidate {
    ib_math math;
    bool cuda_graph, prefer_nhwc;
    const char *cudnn;
    const char *skip; /* non-NULL: listed, not opened, for this reason */
    char label[128];
} candidate;

typedef struct candidates {
    const cli_args *a;
    const char *session_dir; /* --sessions: where the finals' sessions write */
    size_t n;
    candidate c[IB_BEST_MAX_CANDIDATES];
    const char *labels[IB_BEST_MAX_CANDIDATES];
} candidates;

/* "fp16, graph, nhwc, heuristic": the math, then each CUDA option that is
 * on, then cuDNN's search; exactly what the candidate turns on. */
static void label(candidate *c, bool cuda)
{
    snprintf(c->label, sizeof c->label, "%s%s%s%s%s", ib_math_name(c->math), c->cuda_graph ? ", graph" : "",
             c->prefer_nhwc ? ", nhwc" : "", cuda ? ", " : "", cuda ? c->cudnn : "");
    for (char *p = c->label; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
}

static void add(candidates *cs, candidate c, bool cuda)
{
    label(&c, cuda);
    cs->c[cs->n] = c;
    cs->labels[cs->n] = cs->c[cs->n].label;
    cs->n++;
}

/* The value the user gave ONNX Runtime's option key last (--option or the
 * flag that stands for it), or NULL. */
static const char *given_option(const cli_args *a, const char *key)
{
    const char *value = NULL;
    for (size_t i = 0; i < a->n_options; i++)
        if (!strcmp(a->options[i].key, key)) value = a->options[i].value;
    return value;
}

static bool given_yes(const cli_args *a, const char *key)
{
    const char *v = given_option(a, key);
    return v && (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"));
}

/* Every combination the device offers. What the user fixed (--math,
 * --cudnn-search, --cuda-graph, --prefer-nhwc) is not varied. */
static void enumerate(candidates *cs, const cli_args *a, ib_device_kind device)
{
    const ib_model_options *m = &a->model_opts;
    bool cuda = device == IB_DEVICE_CUDA;
    const char *fixed_search = given_option(a, "cudnn_search");
    cs->a = a;
    cs->n = 0;
    for (size_t mi = 0; mi < sizeof maths / sizeof maths[0]; mi++) {
        if (m->math != IB_MATH_DEFAULT && m->math != maths[mi]) continue;
        for (int graph = given_yes(a, "cuda_graph"); graph <= (cuda ? 1 : 0); graph++)
            for (int nhwc = given_yes(a, "prefer_nhwc"); nhwc <= (cuda ? 1 : 0); nhwc++)
                for (size_t si = 0; si < (cuda && !fixed_search ? 2u : 1u); si++)
                    add(cs,
                        (candidate){ .math = maths[mi],
                                     .cuda_graph = graph,
                                     .prefer_nhwc = nhwc,
                                     .cudnn = fixed_search ? fixed_search : searches[si] },
                        cuda);
    }
    if (!cuda)
        add(cs,
            (candidate){ .math = IB_MATH_FP32,
                         .cuda_graph = true,
                         .prefer_nhwc = true,
                         .cudnn = "heuristic",
                         .skip =
                             "CUDA graph, NHWC and cuDNN's search are CUDA provider options: the model runs "
                             "on the CPU" },
            true);
}

#define CANDIDATE_OPTIONS 3 /* what a candidate varies: graph, NHWC, search */

/* The candidate's model options: the user's, then what it varies (a later
 * value of a key wins), in buf[CLI_MAX_BACKEND_OPTIONS + CANDIDATE_OPTIONS]. */
static ib_model_options options_of(const cli_args *a, const candidate *c, ib_backend_option *buf)
{
    ib_model_options o = a->model_opts;
    o.math = c->math;
    memcpy(buf, a->options, a->n_options * sizeof *buf);
    buf[a->n_options] = (ib_backend_option){ "cuda_graph", c->cuda_graph ? "yes" : "no" };
    buf[a->n_options + 1] = (ib_backend_option){ "prefer_nhwc", c->prefer_nhwc ? "yes" : "no" };
    buf[a->n_options + 2] = (ib_backend_option){ "cudnn_search", c->cudnn };
    o.options = buf;
    o.n_options = a->n_options + CANDIDATE_OPTIONS;
    return o;
}

/* The search's callback: opens candidate i, and judges its accuracy
 * against strict fp32 when asked (the reference session in the runtime's
 * default settings: ib_measure_accuracy). */
static ib_status open_candidate(size_t i, void *user, ib_workload **w, ib_accuracy *acc, ib_error *err)
{
    const candidates *cs = user;
    const candidate *c = &cs->c[i];
    if (c->skip) {
        snprintf(err->message, sizeof err->message, "%s", c->skip);
        return IB_ERR_UNSUPPORTED;
    }
    ib_backend_option buf[CLI_MAX_BACKEND_OPTIONS + CANDIDATE_OPTIONS];
    ib_model_options o = options_of(cs->a, c, buf);
    ib_status st = ib_workload_open_model(cs->a->model, &o, w, err);
    if (st != IB_OK || !acc) return st;
    memset(acc, 0, sizeof *acc);
    if (!strcmp(ib_workload_get_info(*w)->math, "fp32")) return IB_OK; /* the reference itself */
    st = ib_measure_accuracy(*w, cs->a->model, &o, cs->a->max_error, acc, err);
    if (st != IB_OK) {
        ib_workload_destroy(*w);
        *w = NULL;
    }
    return st;
}

/* The search's session callback (--sessions): candidate i measured in a
 * fresh process, the program started again as a session of best; its
 * timed samples come back through its latency JSON. */
static ib_status measure_session(size_t i, size_t session, void *user, double **ms, size_t *n, ib_error *err)
{
    const candidates *cs = user;
    char *doc = NULL;
    size_t len = 0;
    ib_status st = cli_run_candidate_session(cs->a, cs->session_dir, session, i + 1, &doc, &len, err);
    if (st != IB_OK) return st;
    ib_latency_file f;
    st = ib_latency_file_parse(doc, len, &f, err);
    free(doc);
    *ms = st == IB_OK ? malloc(f.n * sizeof **ms) : NULL;
    if (st == IB_OK && !*ms) st = IB_ERR_NO_MEMORY;
    if (*ms) memcpy(*ms, f.samples_ms, f.n * sizeof **ms);
    *n = *ms ? f.n : 0;
    ib_latency_file_free(&f);
    return st;
}

/* The search's configuration from the options: finalists timed as latency
 * times (--runs, or --precision's adaptive rule), each batch of the
 * throughput search with --runs runs, at most 100 (its own default). */
static void best_config(cli_args *a, candidates *cs, ib_best_config *bc)
{
    ib_best_config_init(bc);
    bc->n_candidates = cs->n;
    bc->labels = cs->labels;
    bc->open = open_candidate;
    bc->open_user = cs;
    bc->latency = a->cfg;
    bc->latency.cancel = &cli_cancel_flag;
    cli_progress_attach(&bc->latency, a->quiet);
    bc->throughput.max_batch = a->max_batch;
    if (a->cfg.precision <= 0 && a->cfg.runs < bc->throughput.run.runs) bc->throughput.run.runs = a->cfg.runs;
    bc->throughput.run.flush_l2 = a->cfg.flush_l2;
    bc->throughput.run.sample_gpu_state = a->cfg.sample_gpu_state;
    bc->exhaustive = a->exhaustive;
    if (a->sessions >= 2) {
        bc->sessions = (size_t)a->sessions;
        bc->measure_session = measure_session;
        bc->session_user = cs;
    }
}

/* The device the model opens on (--device auto resolved), the model and
 * the options checked once, as latency would open it: a bad model or
 * option is one line, before anything is searched. */
static int resolve_device(const cli_args *a, cli_outputs *out, ib_device_kind *device)
{
    ib_workload *w;
    int code = cli_start(a, out, &w);
    if (code != EXIT_OK) return code;
    *device = ib_workload_get_info(w)->device;
    ib_workload_destroy(w);
    return EXIT_OK;
}

/* Whether a candidate opened: without one there is no search to report,
 * only the first reason. */
static bool any_opened(const ib_best_result *r)
{
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].open_status == IB_OK && r->rows[i].latency_stage != IB_BEST_NOT_TRIED) return true;
    return false;
}

static int search(cli_args *a, candidates *cs, cli_outputs *out)
{
    ib_best_config bc;
    best_config(a, cs, &bc);
    ib_best_result *r = malloc(sizeof *r);
    if (!r) {
        cli_outputs_abort(out);
        return cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    }
    ib_error err = { { 0 } };
    ib_status st = ib_measure_best(&bc, r, &err);
    if (st == IB_OK && !any_opened(r)) {
        st = r->rows[0].open_status;
        snprintf(err.message, sizeof err.message, "no configuration could be opened: %s",
                 r->rows[0].latency_why);
    } else if (st == IB_OK && r->latency_winner < 0) {
        st = IB_ERR_RUNTIME;
        snprintf(err.message, sizeof err.message,
                 "no configuration passed the accuracy gate and ran (see the table)");
    }
    ib_result res = { .kind = IB_RESULT_BEST, .best = r, .best_cfg = &bc };
    int code = cli_report(out, any_opened(r) ? &res : NULL, st, &err);
    free(r);
    return code;
}

/* In a session of best's finals (hidden --session-child K/C:PATH): the
 * candidate C measured by the full latency rule, its latency JSON written
 * where the parent reads it. The candidates are listed as the parent
 * listed them (the same options, the same device). */
static int session_child(cli_args *a, candidates *cs, cli_outputs *out)
{
    size_t i = (size_t)a->session_candidate - 1;
    ib_workload *w = NULL;
    ib_error err = { { 0 } };
    ib_status st = i < cs->n ? open_candidate(i, cs, &w, NULL, &err) : IB_ERR_INVALID_ARG;
    if (st != IB_OK) {
        cli_outputs_abort(out);
        return cli_fail(st, err.message[0] ? err.message : "no such candidate");
    }
    a->cfg.cancel = &cli_cancel_flag;
    ib_latency_result r;
    st = ib_measure_latency(w, &a->cfg, &r, &err);
    ib_result res = {
        .kind = IB_RESULT_LATENCY, .latency = &r, .info = ib_workload_get_info(w), .cfg = &a->cfg
    };
    int code = cli_report(out, st == IB_OK || r.n > 0 ? &res : NULL, st, &err);
    ib_latency_result_free(&r);
    ib_workload_destroy(w);
    return code;
}

int cmd_best(cli_args *a)
{
    if (a->session_index) cli_session_child_setup(a);
    if (a->backend && (strcmp(a->backend, "onnxruntime") || a->n_options)) {
        fprintf(stderr,
                "inferbench: best searches ONNX Runtime's options (--math, CUDA graph, NHWC, cuDNN "
                "search): --backend %s has none of them; measure it with latency or throughput\n",
                a->backend);
        return EXIT_BAD_INPUT;
    }
    cli_apply_memory_cap(a);
    cli_outputs out;
    ib_device_kind device;
    int code = resolve_device(a, &out, &device);
    if (code != EXIT_OK) return code;
    candidates *cs = malloc(sizeof *cs);
    if (!cs) {
        cli_outputs_abort(&out);
        return cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    }
    enumerate(cs, a, device);
    char dir[PATH_MAX];
    if (a->session_index) {
        code = session_child(a, cs, &out);
    } else if (a->sessions >= 2 && !cli_sessions_dir(dir, sizeof dir)) {
        cli_outputs_abort(&out);
        code = cli_fail(IB_ERR_IO, "cannot make a folder for the sessions' results");
    } else {
        cs->session_dir = a->sessions >= 2 ? dir : NULL;
        code = search(a, cs, &out);
        if (cs->session_dir) cli_sessions_dir_remove(dir);
    }
    free(cs);
    return code;
}
