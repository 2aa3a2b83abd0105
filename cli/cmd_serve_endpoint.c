/* inferbench serve --endpoint URL --model NAME: the requests of a
 * generative model's serve (the same options, the same schedule, the same
 * figures) sent over HTTP to an OpenAI-compatible server on this machine
 * (the library's ib_measure_endpoint_serve; docs/serve-endpoint.md). */
#include "cli.h"

#include <stdlib.h>

/* The in-process engine's settings (the server has its own) and its
 * experiments not (yet) over HTTP. */
static const char *const engine_only[] = { "slots",     "prefill-chunk", "ctx-per-seq",
                                           "steps-csv", "prefix-cache",  "shared-prefix" };
/* Not over HTTP yet (docs/serve-endpoint.md, "Still to come"). */
static const char *const not_yet[] = { "rates", "slo-percentile", "confidence" };

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
    for (size_t i = 0; i < sizeof not_yet / sizeof *not_yet; i++)
        if (cli_given(a, not_yet[i])) {
            fprintf(stderr,
                    "inferbench: serve --%s: the curve over rates and the SLO search are not (yet) over "
                    "--endpoint: one --rate or a trace\n",
                    not_yet[i]);
            return true;
        }
    if (!(a->rate > 0) && !a->arrivals) {
        fprintf(stderr,
                "inferbench: serve --endpoint needs --rate R (requests/s) or --arrivals FILE (a trace): "
                "the SLO search is not (yet) over an endpoint\n");
        return true;
    }
    return false;
}

int cmd_serve_endpoint(cli_args *a)
{
    if (refused(a)) return EXIT_BAD_INPUT;
    ib_gen_serve_config c;
    ib_gen_request_spec *trace = NULL;
    if (!cli_gen_serve_settings(a, &c, &trace)) return EXIT_BAD_INPUT;
    cli_outputs out;
    int code = cli_prepare_outputs(a, &out);
    if (code == EXIT_OK) {
        ib_gen_serve_result r;
        ib_endpoint_result ep;
        ib_error err = { { 0 } };
        /* --pitfalls: its cold run first, while the server is cold. */
        ib_status st = c.pitfalls ? ib_measure_endpoint_serve_pitfalls(&a->endpoint, &c, &r, &ep, &err)
                                  : ib_measure_endpoint_serve(&a->endpoint, &c, &r, &ep, &err);
        cli_client_ceiling_load(&ep.ceiling); /* the client's own limit, stated beside the figures */
        /* Nothing was sent when the endpoint or the settings were refused. */
        bool began = r.requests != NULL;
        ib_result res = {
            .kind = IB_RESULT_GEN_SERVE, .gen_serve = &r, .gen_serve_cfg = &c, .endpoint = &ep
        };
        code = cli_report(&out, began ? &res : NULL, st, &err);
        ib_gen_serve_result_free(&r);
        ib_endpoint_result_free(&ep);
    }
    free(trace);
    return code;
}
