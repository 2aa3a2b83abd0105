/* inferbench best MODEL: the fastest configuration that stays accurate.
 * The program lists the candidates (a small table over the model options
 * that exist: --math, for a backend of models, and the options the backend
 * declares to race, ib_backend_option_decl.race); the library races them
 * (src/core/best.c, docs/best.md). A generative model's candidates are its
 * generation backend's options raced (flash attention, the KV cache's type,
 * n_ubatch), raced on the generation method's runs. */
#include "cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const ib_math maths[] = { IB_MATH_FP32, IB_MATH_TF32, IB_MATH_FP16, IB_MATH_BF16 };

#define MAX_RACED 8 /* options raced at once */
#define VALUE_LEN 32

/* One candidate: the math and the value of each raced option ("": not
 * set), or why it is not tried. */
typedef struct candidate {
    ib_math math;
    char value[MAX_RACED][VALUE_LEN];
    const char *skip; /* non-NULL: listed, not opened, for this reason */
    char label[128];
} candidate;

typedef struct candidates {
    const cli_args *a;
    const ib_backend_option_decl *raced[MAX_RACED]; /* what the backend declares to race */
    size_t n_raced;
    bool race_math;          /* a backend of models: --math is raced too */
    const char *session_dir; /* --sessions: where the finals' sessions write */
    /* Strict fp32's outputs, opened by the first accuracy check: every
     * candidate runs the same model on the same inputs. */
    ib_accuracy_reference *reference;
    size_t n;
    candidate c[IB_BEST_MAX_CANDIDATES];
    const char *labels[IB_BEST_MAX_CANDIDATES];
    char skip_why[CLI_DEVICES_TEXT + 256];
} candidates;

/* "fp16, graph, nhwc, heuristic": the math, then each raced option that is
 * set, in the backend's order: a switch by its label when on, any other by
 * its value, after its label when it has one ("fa on, kv q8_0, ubatch
 * 512"); exactly what the candidate turns on. */
static void label(const candidates *cs, candidate *c)
{
    size_t n = (size_t)snprintf(c->label, sizeof c->label, "%s", c->math ? ib_math_name(c->math) : "");
    for (size_t i = 0; i < cs->n_raced && n < sizeof c->label; i++) {
        const ib_backend_option_decl *d = cs->raced[i];
        bool is_switch = d->flags & IB_OPTION_SWITCH;
        const char *word =
            is_switch ? (!strcmp(c->value[i], "yes") ? (d->label ? d->label : d->key) : "") : c->value[i];
        const char *lead = !is_switch && d->label ? d->label : "";
        if (*word)
            n += (size_t)snprintf(c->label + n, sizeof c->label - n, "%s%s%s%s", n ? ", " : "", lead,
                                  *lead ? " " : "", word);
    }
    cli_lower_case(c->label);
}

static bool add(candidates *cs, candidate *c)
{
    if (cs->n == IB_BEST_MAX_CANDIDATES) return false;
    label(cs, c);
    cs->c[cs->n] = *c;
    cs->labels[cs->n] = cs->c[cs->n].label;
    cs->n++;
    return true;
}

/* Whether option i varies on this device: raced, applicable, not fixed by
 * the user (a value given with --option or its flag is kept, not varied). */
static bool varies(const candidates *cs, size_t i, bool cuda)
{
    return (cuda || !(cs->raced[i]->flags & IB_OPTION_CUDA_ONLY)) &&
           !cli_option_given(cs->a, cs->raced[i]->key);
}

/* Adds every combination of the raced options from option i on (the first
 * varies slowest), c holding the choices made before i. */
static bool combine(candidates *cs, candidate *c, size_t i, bool cuda)
{
    if (i == cs->n_raced) return add(cs, c);
    const ib_backend_option_decl *d = cs->raced[i];
    if (!varies(cs, i, cuda)) {
        const char *given = cli_option_given(cs->a, d->key);
        snprintf(c->value[i], VALUE_LEN, "%s",
                 given && (cuda || !(d->flags & IB_OPTION_CUDA_ONLY)) ? given : "");
        return combine(cs, c, i + 1, cuda);
    }
    for (size_t k = 0; cli_race_value(d->race, k, c->value[i], VALUE_LEN); k++)
        if (!combine(cs, c, i + 1, cuda)) return false;
    return true;
}

/* On the CPU, the GPU options raced on CUDA: one row that says so, with
 * each at its last value raced. */
static bool add_cuda_only_row(candidates *cs)
{
    candidate c = { .math = cs->race_math ? IB_MATH_FP32 : cs->a->model_opts.math };
    size_t n = 0, len = 0;
    for (size_t i = 0; i < cs->n_raced; i++) {
        const ib_backend_option_decl *d = cs->raced[i];
        if (!(d->flags & IB_OPTION_CUDA_ONLY)) continue;
        for (size_t k = 0; cli_race_value(d->race, k, c.value[i], VALUE_LEN); k++) {
        }
        n++;
    }
    if (n == 0) return true;
    for (size_t i = 0, k = 0; i < cs->n_raced; i++)
        if (cs->raced[i]->flags & IB_OPTION_CUDA_ONLY)
            len += (size_t)snprintf(cs->skip_why + len, sizeof cs->skip_why - len, "%s%s",
                                    k++ == 0 ? ""
                                    : k == n ? " and "
                                             : ", ",
                                    cs->raced[i]->key);
    char why[CLI_DEVICES_TEXT + 128];
    cli_cpu_reason_here(cs->a, why, sizeof why);
    snprintf(cs->skip_why + len, sizeof cs->skip_why - len, " appl%s to CUDA only: %s", n == 1 ? "ies" : "y",
             why);
    c.skip = cs->skip_why;
    return add(cs, &c);
}

/* Every combination the device offers. What the user fixed (--math, an
 * option raced) is not varied. False when there are more than the search
 * takes. */
static bool enumerate(candidates *cs, const cli_args *a, ib_device_kind device)
{
    bool cuda = device == IB_DEVICE_CUDA;
    const ib_math fixed = a->model_opts.math;
    for (size_t mi = 0; mi < (cs->race_math ? sizeof maths / sizeof maths[0] : 1); mi++) {
        if (cs->race_math && fixed != IB_MATH_DEFAULT && fixed != maths[mi]) continue;
        candidate c = { .math = cs->race_math ? maths[mi] : fixed };
        if (!combine(cs, &c, 0, cuda)) return false;
    }
    return cuda || add_cuda_only_row(cs);
}

/* The candidate's model options: the user's, then what it varies (a later
 * value of a key wins), in buf[CLI_MAX_BACKEND_OPTIONS + MAX_RACED]. */
static ib_model_options options_of(const candidates *cs, const candidate *c, ib_backend_option *buf,
                                   const char **model)
{
    ib_model_options o;
    cli_model_options(cs->a, &o, model); /* checked by resolve_device already */
    if (cs->race_math) o.math = c->math;
    memcpy(buf, cs->a->options, cs->a->n_options * sizeof *buf);
    size_t n = cs->a->n_options;
    for (size_t i = 0; i < cs->n_raced; i++)
        if (c->value[i][0]) buf[n++] = (ib_backend_option){ cs->raced[i]->key, c->value[i] };
    o.options = buf;
    o.n_options = n;
    return o;
}

/* The search's callback: opens candidate i, and judges its accuracy
 * against strict fp32 when asked (the reference session in the runtime's
 * default settings, opened and run by the first check: an accuracy check's
 * time is its own run's and the comparison's, the first one's the
 * reference's too). */
static ib_status open_candidate(size_t i, void *user, ib_workload **w, ib_accuracy *acc, ib_error *err)
{
    candidates *cs = user;
    const candidate *c = &cs->c[i];
    if (c->skip) {
        snprintf(err->message, sizeof err->message, "%s", c->skip);
        return IB_ERR_UNSUPPORTED;
    }
    ib_backend_option buf[CLI_MAX_BACKEND_OPTIONS + MAX_RACED];
    const char *model;
    ib_model_options o = options_of(cs, c, buf, &model);
    ib_status st = ib_workload_open_model(model, &o, w, err);
    if (st != IB_OK || !acc) return st;
    memset(acc, 0, sizeof *acc);
    const ib_workload_info *info = ib_workload_get_info(*w);
    /* fp32 is the reference itself; no math stated, or a float16 model's
     * own, has none */
    if (!cs->race_math || !info->math[0] || !strcmp(info->math, "fp32") || info->math_of_model) return IB_OK;
    st = ib_measure_accuracy_kept(*w, model, &o, cs->a->max_error, &cs->reference, acc, err);
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
    bc->throughput.run.measure_energy = a->cfg.measure_energy;
    bc->exhaustive = a->exhaustive;
    if (a->step_max_ms >= 0) bc->step_max_ms = a->step_max_ms;
    if (a->far_factor >= 0) bc->far_factor = a->far_factor;
    bc->objective = a->objective_energy ? IB_BEST_OBJECTIVE_ENERGY : IB_BEST_OBJECTIVE_TIME;
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
    /* A candidate still racing when the search was interrupted has its
     * screening runs: reported, not lost. */
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].open_status == IB_OK &&
            (r->rows[i].latency_stage != IB_BEST_NOT_TRIED || r->rows[i].latency.n > 0))
            return true;
    return false;
}

/* A search that ran to its end without a winner fails: none opened (the
 * first one's reason), or none passed the gate and ran. One its time
 * bound cut short (candidates not measured) fails too: its answer may
 * not be the best, so the exit status says so (1, as other partial
 * results), the result written. */
static ib_status outcome(const ib_best_result *r, ib_status st, ib_error *err)
{
    if (st == IB_OK && !any_opened(r)) {
        snprintf(err->message, sizeof err->message, "no configuration could be opened: %s",
                 r->rows[0].latency_why);
        return r->rows[0].open_status;
    }
    if (st == IB_OK && r->partial) {
        snprintf(err->message, sizeof err->message,
                 "best: the race was cut short: the time bound (%.4g s a step, --step-max-ms) left %zu "
                 "candidate%s not measured; %s",
                 r->step_max_ms / 1e3, r->not_measured, r->not_measured == 1 ? "" : "s",
                 r->latency_winner >= 0 ? "the winner is the best of those measured" : "none won");
        return IB_ERR_RUNTIME;
    }
    if (st == IB_OK && r->latency_winner < 0) {
        snprintf(err->message, sizeof err->message, "%s",
                 r->generation ? "no configuration ran (see the table)"
                               : "no configuration passed the accuracy gate and ran (see the table)");
        return IB_ERR_RUNTIME;
    }
    return st;
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
    ib_accuracy_reference_free(cs->reference);
    cs->reference = NULL;
    st = outcome(r, st, &err);
    ib_result res = { .kind = IB_RESULT_BEST, .best = r, .best_cfg = &bc };
    int code = cli_report(out, any_opened(r) ? &res : NULL, st, &err);
    free(r);
    return code;
}

/* The options of decls[0..n) declared with values to race. */
static void take_raced(candidates *cs, const ib_backend_option_decl *decls, size_t n)
{
    cs->n = cs->n_raced = 0;
    for (size_t i = 0; i < n && cs->n_raced < MAX_RACED; i++)
        if (decls[i].race) cs->raced[cs->n_raced++] = &decls[i];
}

/* What the backend races: its options declared with values to race, and
 * the math when it is a backend of models. False when it races nothing. */
static bool race_of(const cli_args *a, candidates *cs)
{
    const ib_backend *b = cli_backend(a);
    cs->a = a;
    cs->race_math = ib_backend_takes_model_options(b);
    take_raced(cs, b ? b->options : NULL, b ? b->n_options : 0);
    return cs->n_raced > 0;
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

/* ------------------------------------------------------------------------ */
/* A generative model                                                        */
/* ------------------------------------------------------------------------ */

/* The options of one kind of model given to the other: one line, exit 2. */
static int refuse_options(const cli_args *a, bool gen)
{
    static const char *const forward[] = { "math",  "max-error", "max-batch",    "sessions",
                                           "shape", "input",     "memory-cap-mb" };
    static const char *const request[] = { "prompt-tokens", "new-tokens", "depth", "ctx-per-seq" };
    const char *const *names = gen ? forward : request;
    size_t n = gen ? sizeof forward / sizeof *forward : sizeof request / sizeof *request;
    for (size_t i = 0; i < n; i++)
        if (cli_given(a, names[i])) {
            fprintf(
                stderr,
                gen ? "inferbench: best --%s is for a forward-pass model: %s is a generative model, "
                      "raced on its generation backend's options (inferbench backends)\n"
                    : "inferbench: best --%s is for a generative model (a GGUF file or one of the zoo's), "
                      "not %s\n",
                names[i], a->model);
            return EXIT_BAD_INPUT;
        }
    if (gen && a->objective_energy)
        return cli_fail(IB_ERR_INVALID_ARG, "best --objective energy: a generative model is ranked by its "
                                            "time per output token (tpot) or to first token (ttft)");
    if (!gen && a->gen_figure >= 0)
        return cli_fail(IB_ERR_INVALID_ARG, "best --objective tpot and ttft rank a generative model: give "
                                            "time or energy for a forward-pass model");
    return EXIT_OK;
}

/* The race's callback: candidate i opened with the user's options and
 * its raced values after them. */
static ib_status open_generative(size_t i, void *user, ib_gen **g, ib_error *err)
{
    candidates *cs = user;
    const candidate *c = &cs->c[i];
    if (c->skip) {
        snprintf(err->message, sizeof err->message, "%s", c->skip);
        return IB_ERR_UNSUPPORTED;
    }
    ib_backend_option extra[MAX_RACED];
    size_t n = 0;
    for (size_t k = 0; k < cs->n_raced; k++)
        if (c->value[k][0]) extra[n++] = (ib_backend_option){ cs->raced[k]->key, c->value[k] };
    return cli_gen_open(cs->a, extra, n, g, err);
}

/* A candidate's label as it runs: each raced option at the value in
 * effect its model states for the request (llama.cpp clamps n_ubatch to
 * the request's tokens: "ubatch 128" runs as "ubatch 20"). */
static void label_ran(size_t i, void *user, const ib_option_list *ran, char *out, size_t cap)
{
    const candidates *cs = user;
    candidate c = cs->c[i];
    for (size_t k = 0; k < cs->n_raced; k++) {
        const char *v = ib_option_list_get(ran, cs->raced[k]->key);
        if (v && c.value[k][0]) snprintf(c.value[k], VALUE_LEN, "%s", v);
    }
    label(cs, &c);
    snprintf(out, cap, "%s", c.label);
}

/* The request every candidate is measured on; a run is a whole request,
 * so the finals take generate's defaults (30 runs, 3 warm-up) unless
 * given. */
static ib_gen_config gen_request(cli_args *a)
{
    ib_gen_config d;
    ib_gen_config_init(&d);
    if (!cli_given(a, "runs")) a->cfg.runs = d.run.runs;
    if (!cli_given(a, "warmup-runs")) a->cfg.warmup_runs = d.run.warmup_runs;
    ib_gen_config gc = a->gen;
    gc.run = a->cfg;
    return gc;
}

/* The model as given, opened once: its options, the request against its
 * context and the device checked before anything is measured. */
static int check_generative(const cli_args *a, const ib_gen_config *gc, ib_device_kind *device)
{
    ib_gen *g;
    ib_error err = { { 0 } };
    ib_status st = cli_gen_open(a, NULL, 0, &g, &err);
    if (st == IB_OK) st = ib_gen_config_check(g, gc, &err);
    if (st != IB_OK) {
        ib_gen_destroy(g);
        return cli_fail(st, err.message), EXIT_BAD_INPUT;
    }
    *device = ib_gen_get_info(g)->device;
    ib_gen_destroy(g);
    return cli_options_fit_device(a, *device) ? EXIT_OK : EXIT_BAD_INPUT;
}

static int race_generative(cli_args *a, candidates *cs, const ib_gen_config *gc, cli_outputs *out)
{
    ib_best_config bc;
    best_config(a, cs, &bc);
    bc.screen_runs = IB_BEST_GEN_SCREEN_RUNS;
    ib_best_gen bg;
    ib_best_gen_init(&bg);
    bg.open = open_generative;
    bg.label_ran = label_ran;
    bg.open_user = cs;
    bg.gen = *gc;
    bg.gen.run = bc.latency;
    bg.figure = a->gen_figure == IB_BEST_GEN_TTFT ? IB_BEST_GEN_TTFT : IB_BEST_GEN_TPOT;
    ib_best_result *r = malloc(sizeof *r);
    if (!r) {
        cli_outputs_abort(out);
        return cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    }
    ib_gen_result win;
    ib_error err = { { 0 } };
    ib_status st = outcome(r, ib_measure_best_generation(&bc, &bg, r, &win, &err), &err);
    ib_result res = { .kind = IB_RESULT_BEST,
                      .best = r,
                      .best_cfg = &bc,
                      .generation = win.runs > 0 ? &win : NULL,
                      .gen_cfg = &bg.gen };
    int code = cli_report(out, any_opened(r) ? &res : NULL, st, &err);
    ib_gen_result_free(&win);
    free(r);
    return code;
}

/* best of a generative model: its generation backend's raced options. */
static int best_generative(cli_args *a, candidates *cs)
{
    int code = refuse_options(a, true);
    if (code != EXIT_OK) return code;
    const ib_gen_backend *b = cli_gen_backend_of(a);
    cs->a = a;
    cs->race_math = false;
    take_raced(cs, b->options, b->n_options);
    ib_gen_config gc = gen_request(a);
    cli_outputs out;
    if ((code = cli_prepare_outputs(a, &out)) != EXIT_OK) return code;
    ib_device_kind device;
    if ((code = check_generative(a, &gc, &device)) == EXIT_OK && cs->n_raced == 0)
        code = cli_fail(IB_ERR_INVALID_ARG, "best: the generation backend declares no option to race");
    if (code == EXIT_OK && !enumerate(cs, a, device))
        code = cli_fail(IB_ERR_INVALID_ARG, "best: more configurations to race than the search takes");
    if (code != EXIT_OK) {
        cli_outputs_abort(&out);
        return code;
    }
    return race_generative(a, cs, &gc, &out);
}

int cmd_best(cli_args *a)
{
    candidates *cs = calloc(1, sizeof *cs);
    if (!cs) return cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    if (cli_generative_model(a) && !a->session_index) {
        int code = best_generative(a, cs);
        free(cs);
        return code;
    }
    if (refuse_options(a, false) != EXIT_OK) {
        free(cs);
        return EXIT_BAD_INPUT;
    }
    if (a->session_index) cli_session_child_setup(a);
    /* No backend: the default left out of this build, said when opened. */
    if (!race_of(a, cs) && cli_backend(a)) {
        fprintf(stderr,
                "inferbench: best races the options a backend declares to race: backend '%s' declares none; "
                "measure it with latency or throughput\n",
                cli_backend(a)->name);
        free(cs);
        return EXIT_BAD_INPUT;
    }
    cli_apply_memory_cap(a);
    cli_outputs out;
    ib_device_kind device;
    int code = resolve_device(a, &out, &device);
    char dir[PATH_MAX];
    if (code == EXIT_OK && !enumerate(cs, a, device)) {
        cli_outputs_abort(&out);
        code = cli_fail(IB_ERR_INVALID_ARG, "best: more configurations to race than the search takes");
    } else if (code == EXIT_OK && a->session_index) {
        code = session_child(a, cs, &out);
    } else if (code == EXIT_OK && a->sessions >= 2 && !cli_sessions_dir(dir, sizeof dir)) {
        cli_outputs_abort(&out);
        code = cli_fail(IB_ERR_IO, "cannot make a folder for the sessions' results");
    } else if (code == EXIT_OK) {
        cs->session_dir = a->sessions >= 2 ? dir : NULL;
        code = search(a, cs, &out);
        if (cs->session_dir) cli_sessions_dir_remove(dir);
    }
    free(cs);
    return code;
}
