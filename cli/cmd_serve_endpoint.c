/* inferbench serve --endpoint URL --model NAME: the requests of a
 * generative model's serve (the same options, the same schedule, the same
 * figures) sent over HTTP to an OpenAI-compatible server on this machine
 * (the library's ib_measure_endpoint_serve; docs/serve-endpoint.md): one
 * rate or a trace, the curve over --rates, the SLO search (targets and no
 * rate: ib_search_endpoint_serve), or one of those in --sessions N. */
#include "cli.h"

#include <stdlib.h>

/* The in-process engine's settings (the server has its own) and its
 * experiments not (yet) over HTTP. */
static const char *const engine_only[] = { "slots",        "prefill-chunk", "ctx-per-seq", "steps-csv",
                                           "prefix-cache", "shared-prefix", "sampling" };

static bool refused(const cli_args *a)
{
    if (a->n_pos > 0) {
        fprintf(stderr,
                "inferbench: serve --endpoint takes no MODEL ('%s'): the server holds it, --model NAME "
                "names it\n",
                a->pos[0]);
        return true;
    }
    for (size_t i = 0; i < sizeof engine_only / sizeof *engine_only; i++)
        if (cli_given(a, engine_only[i])) {
            fprintf(stderr, "inferbench: serve --%s is the in-process engine's, not (yet) over --endpoint\n",
                    engine_only[i]);
            return true;
        }
    return false;
}

/* One rate or a trace. */
static int measure(cli_args *a, const ib_gen_serve_config *c, cli_outputs *out)
{
    ib_gen_serve_result r;
    ib_endpoint_result ep;
    ib_error err = { { 0 } };
    /* --pitfalls: its cold run first, while the server is cold. */
    ib_status st = c->pitfalls ? ib_measure_endpoint_serve_pitfalls(&a->endpoint, c, &r, &ep, &err)
                               : ib_measure_endpoint_serve(&a->endpoint, c, &r, &ep, &err);
    cli_client_ceiling_load(&ep.ceiling); /* the client's own limit, stated beside the figures */
    /* Nothing was sent when the endpoint or the settings were refused. */
    bool began = r.requests != NULL;
    ib_result res = { .kind = IB_RESULT_GEN_SERVE, .gen_serve = &r, .gen_serve_cfg = c, .endpoint = &ep };
    int code = cli_report(out, began ? &res : NULL, st, &err);
    ib_gen_serve_result_free(&r);
    ib_endpoint_result_free(&ep);
    return code;
}

/* The curve over --rates, or the search (targets, no rate): the rates,
 * then the run at the answer with its endpoint's block, as in process. */
static int measure_rates(cli_args *a, const ib_gen_serve_config *c, const double *rates, size_t n_rates,
                         cli_outputs *out)
{
    ib_gen_serve_rates_config rc;
    cli_gen_serve_rates_config(a, rates, n_rates, &rc);
    ib_gen_serve_rates_result r;
    ib_endpoint_result ep;
    ib_error err = { { 0 } };
    ib_status st = n_rates > 0 ? ib_measure_endpoint_serve_curve(&a->endpoint, c, &rc, &r, &ep, &err)
                               : ib_search_endpoint_serve(&a->endpoint, c, &rc, &r, &ep, &err);
    cli_client_ceiling_load(&ep.ceiling);
    bool began = r.n_points > 0;
    ib_result res = { .kind = IB_RESULT_GEN_SERVE,
                      .gen_serve = &r.at,
                      .gen_serve_cfg = c,
                      .endpoint = &ep,
                      .gen_serve_rates = &r,
                      .gen_serve_rates_cfg = &rc };
    int code = cli_report(out, began ? &res : NULL, st, &err);
    ib_gen_serve_rates_result_free(&r);
    ib_endpoint_result_free(&ep);
    return code;
}

int cmd_serve_endpoint(cli_args *a)
{
    if (refused(a)) return EXIT_BAD_INPUT;
    if (a->session_index) cli_session_child_setup(a);
    ib_gen_serve_config c;
    ib_gen_request_spec *trace = NULL;
    double rates[IB_SERVE_MAX_RATES];
    size_t n_rates = 0;
    int code = EXIT_OK;
    if (!cli_gen_serve_begin(a, &c, &trace, rates, &n_rates, &code)) return code;
    cli_outputs out;
    code = cli_prepare_outputs(a, &out);
    if (code == EXIT_OK)
        code = n_rates > 0 || cli_gen_serve_searching(a, &c) ? measure_rates(a, &c, rates, n_rates, &out)
                                                             : measure(a, &c, &out);
    free(trace);
    return code;
}
