/* The endpoint tests' fixture (endpoint_fixture.h). */
#include "endpoint_fixture.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ib_script_server *endpoint_fixture_start(const ib_script *s)
{
    ib_script_server *srv = NULL;
    ib_error err = { { 0 } };
    ib_status st = ib_script_server_start(s, &srv, &err);
    if (st == IB_ERR_UNSUPPORTED) {
        fprintf(stderr, "skipped: %s\n", err.message);
        exit(77);
    }
    CHECK(st == IB_OK);
    return srv;
}

void endpoint_fixture_target(ib_endpoint_config *ep, char *url, size_t url_size, const ib_script_server *srv)
{
    snprintf(url, url_size, "http://127.0.0.1:%d", ib_script_server_port(srv));
    ib_endpoint_config_init(ep);
    ep->url = url;
    ep->model = "tiny";
}

void endpoint_fixture_arrivals(ib_gen_serve_config *cfg, int64_t requests, int32_t new_tokens)
{
    ib_gen_serve_config_init(cfg);
    cfg->arrivals = IB_ARRIVALS_CONSTANT;
    cfg->requests = requests;
    cfg->prompt_min = cfg->prompt_max = 16;
    cfg->output_min = cfg->output_max = new_tokens;
}

void endpoint_run_settings(endpoint_run *x, const ib_script_server *srv, double request_timeout_ms,
                           int64_t requests, int32_t new_tokens, int32_t warmup)
{
    memset(x, 0, sizeof *x);
    endpoint_fixture_target(&x->ep, x->url, sizeof x->url, srv);
    x->ep.request_timeout_ms = request_timeout_ms;
    endpoint_fixture_arrivals(&x->cfg, requests, new_tokens);
    x->cfg.rate = 50;
    x->cfg.warmup_requests = warmup;
    x->cfg.slo_ttft_ms = 1e6;
}

void endpoint_run_free(endpoint_run *x)
{
    ib_gen_serve_result_free(&x->r);
    ib_endpoint_result_free(&x->e);
}
