/* inferbench generate MODEL: a generative model token by token (the
 * library's ib_measure_generation; docs/generate.md). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* "1,4,16" into counts[]: each a whole number (the library judges the
 * range, so that one message says it). */
static bool parse_sequences(const char *text, int32_t *counts, size_t cap, size_t *n)
{
    *n = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno == ERANGE || v < INT32_MIN || v > INT32_MAX || (*end && *end != ',') ||
            *n == cap) {
            fprintf(stderr,
                    "inferbench: --sequences '%s': expected counts separated by commas, at most %zu\n", text,
                    cap);
            return false;
        }
        counts[(*n)++] = (int32_t)v;
        if (!*end) return true;
        p = end + 1;
    }
}

/* generate's options are its own group's and the model's common ones
 * (--device, --device-id, --seed, --backend, --option): the parser refuses
 * a forward-pass model's (--shape, --input, --memory-cap-mb). */
static int need_model(const cli_args *a)
{
    if (a->n_pos == 0) return cli_fail(IB_ERR_INVALID_ARG, "generate needs a model: a GGUF file or zoo:NAME");
    return EXIT_OK;
}

ib_status cli_gen_open(const cli_args *a, const ib_backend_option *extra, size_t n_extra, ib_gen **g,
                       ib_error *err)
{
    char cache[1024];
    ib_gen_options o;
    ib_gen_options_init(&o);
    o.backend = a->backend;
    o.device = a->model_opts.device;
    o.device_id = a->model_opts.device_id;
    o.seed = a->model_opts.seed;
    /* INFERBENCH_LLAMA_LIBRARY: the library's folder unless --option gives it. */
    ib_backend_option opts[CLI_MAX_BACKEND_OPTIONS + CLI_GEN_EXTRA_OPTIONS + 1];
    size_t n = 0;
    const char *library = cli_llama_library();
    if (library && !cli_option_given(a, "library") && (!a->backend || !strcmp(a->backend, "llama")))
        opts[n++] = (ib_backend_option){ "library", library };
    memcpy(opts + n, a->options, a->n_options * sizeof *opts);
    n += a->n_options;
    for (size_t i = 0; i < n_extra && i < CLI_GEN_EXTRA_OPTIONS; i++) opts[n++] = extra[i];
    o.options = opts;
    o.n_options = n;
    o.cache_dir = strncmp(a->model, "zoo:", 4) || !cli_zoo_cache_dir(cache, sizeof cache) ? NULL : cache;
    *g = NULL;
    ib_status st = ib_gen_open(a->model, &o, g, err);
    if (st == IB_OK && *ib_gen_open_note(*g)) {
        cli_progress_clear();
        fprintf(stderr, "inferbench: %s\n", ib_gen_open_note(*g));
    }
    return st;
}

static int open_model(const cli_args *a, ib_gen **g)
{
    ib_error err = { { 0 } };
    ib_status st = cli_gen_open(a, NULL, 0, g, &err);
    /* Nothing was measured yet: a model that cannot be opened is bad input,
     * out of memory while loading included. */
    if (st != IB_OK) return cli_fail(st, err.message), EXIT_BAD_INPUT;
    return cli_options_fit_device(a, ib_gen_get_info(*g)->device) ? EXIT_OK : EXIT_BAD_INPUT;
}

int cmd_generate(cli_args *a)
{
    int code = need_model(a);
    if (code != EXIT_OK) return code;
    if (cli_sessions_wanted(a)) return cli_run_sessions(a, IB_RESULT_GENERATION);
    if (a->session_index) cli_session_child_setup(a);
    int32_t counts[IB_GEN_MAX_POINTS];
    ib_gen_config cfg = a->gen;
    if (a->sequences && !parse_sequences(a->sequences, counts, IB_GEN_MAX_POINTS, &cfg.n_sequences))
        return EXIT_BAD_INPUT;
    cfg.sequences = counts;
    cfg.run = a->cfg;
    cli_outputs out;
    code = cli_prepare_outputs(a, &out);
    if (code != EXIT_OK) return code;
    ib_gen *g;
    code = open_model(a, &g);
    if (code != EXIT_OK) {
        cli_outputs_abort(&out);
        ib_gen_destroy(g);
        return code;
    }
    cfg.run.cancel = &cli_cancel_flag;
    cli_progress_attach(&cfg.run, a->quiet);
    ib_gen_result r;
    ib_error err = { { 0 } };
    ib_status st = ib_measure_generation(g, &cfg, &r, &err);
    /* Something was measured: a timed run, or (a bad setting refused) nothing. */
    bool measured = st == IB_OK || st == IB_ERR_NOT_MET || r.runs > 0;
    ib_result res = { .kind = IB_RESULT_GENERATION, .generation = &r, .gen_cfg = &cfg };
    code = cli_report(&out, measured ? &res : NULL, st, &err);
    ib_gen_result_free(&r);
    ib_gen_destroy(g);
    return code;
}
