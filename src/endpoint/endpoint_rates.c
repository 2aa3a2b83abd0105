/* The SLO rate search and the curve over rates over an HTTP endpoint
 * (docs/serve-endpoint.md, "Rates: the search and the curve"): the
 * method of src/core/serve_gen_rates.c, whose rates this client serves
 * (an ib__gen_rate_server): the endpoint checked and warmed up once, each
 * rate a measured run of http_client.c, its endpoint result kept beside
 * its point so that the answer's run keeps its own (lateness, failures by
 * cause, chunks). */
#include "core/serve_gen_rates.h"
#include "endpoint/endpoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct rates_client {
    ib__ep_client *c;
    ib_endpoint_result last; /* the run just served, until its point takes it */
    ib_endpoint_result *eps; /* [IB_GEN_SERVE_MAX_RATES]: each point's */
} rates_client;

static ib_status serve_rate(void *ctx, const ib_gen_serve_config *cfg, const ib__gen_serve_watch *watch,
                            ib_gen_serve_result *run, ib_error *err)
{
    rates_client *x = ctx;
    ib_endpoint_result_free(&x->last); /* a run that made no point */
    ib_status st = ib__ep_client_serve(x->c, cfg, watch, false, run, &x->last, err);
    /* Every request of this rate failed: a point that did not meet; the
     * rates go on (ib__ep_client_serve's IB_ERR_RUNTIME is one run's). */
    bool all_failed = run->requests && x->last.n_requests > 0 && x->last.n_failed == x->last.n_requests;
    return st == IB_ERR_RUNTIME && all_failed ? IB_OK : st;
}

static void rate_point(void *ctx, size_t index, ib_gen_serve_point *pt)
{
    rates_client *x = ctx;
    ib_endpoint_result *ep = &x->eps[index];
    *ep = x->last;
    memset(&x->last, 0, sizeof x->last);
    pt->client_lateness_p99_ms = ep->lateness.n > 0 ? ep->lateness.p99 : NAN;
    pt->client_late = ep->client_late;
    pt->failed = (int64_t)ep->n_failed;
    pt->cut = (int64_t)ep->n_cut;
}

/* No request of any rate completed, some failed: the endpoint's fault,
 * as one run whose every request failed. */
static ib_status every_rate_failed(const ib_gen_serve_rates_result *out, const char *url, ib_error *err)
{
    int64_t completed = 0, failed = 0;
    for (size_t i = 0; i < out->n_points; i++) {
        completed += out->points[i].completed;
        failed += out->points[i].failed;
    }
    IB_FAIL_IF(completed == 0 && failed > 0, err, IB_ERR_RUNTIME,
               "every request to %s failed (%lld over %zu rates: the failures by cause above)", url,
               (long long)failed, out->n_points);
    return IB_OK;
}

/* The answer's endpoint result into *ep (NULL: none kept), the others
 * freed; without an answer, *ep says where alone (no request). */
static void keep_answer(rates_client *x, const ib_endpoint_config *cfg, const ib_gen_serve_rates_result *out,
                        ib_endpoint_result *ep)
{
    for (size_t i = 0; i < out->n_points; i++) {
        if (ep && (int32_t)i == out->at_point)
            *ep = x->eps[i];
        else
            ib_endpoint_result_free(&x->eps[i]);
    }
    if (!ep || ep->n_requests > 0) return;
    ib__strlcpy(ep->url, cfg->url ? cfg->url : "", sizeof ep->url);
    ib__strlcpy(ep->model, cfg->model ? cfg->model : "", sizeof ep->model);
}

static ib_status endpoint_rates(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                const ib_gen_serve_rates_config *rc, bool searching,
                                ib_gen_serve_rates_result *out, ib_endpoint_result *ep, ib_error *err)
{
    if (ep) memset(ep, 0, sizeof *ep);
    IB_TRY(ib__gen_serve_rates_begin(scfg, rc, searching, out, err));
    IB_FAIL_IF(!cfg, err, IB_ERR_INVALID_ARG, "no endpoint");
    /* The checks and the one warm-up, at the first rate. */
    ib_gen_serve_config first = ib__gen_serve_rates_first(scfg, rc, searching);
    rates_client x = { .eps = calloc(IB_GEN_SERVE_MAX_RATES, sizeof *x.eps) };
    IB_FAIL_IF(!x.eps, err, IB_ERR_NO_MEMORY, "out of memory");
    ib_status st = ib__ep_client_open(cfg, &first, &x.c, err);
    if (st == IB_OK) st = ib__ep_client_warm_up(x.c, err);
    ib__gen_rate_server srv = { .serve = serve_rate, .point = rate_point, .ctx = &x };
    if (st == IB_OK) st = ib__gen_serve_rates_drive(&srv, scfg, rc, ib__ep_client_warm_rate(x.c), out, err);
    if (st == IB_OK || st == IB_ERR_NOT_MET) {
        ib_status all = every_rate_failed(out, cfg->url, err);
        st = all != IB_OK ? all : st;
    }
    ib__ep_client_close(x.c);
    ib_endpoint_result_free(&x.last);
    keep_answer(&x, cfg, out, ep);
    free(x.eps);
    return st;
}

ib_status ib_search_endpoint_serve(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                   const ib_gen_serve_rates_config *rc, ib_gen_serve_rates_result *out,
                                   ib_endpoint_result *ep, ib_error *err)
{
    return endpoint_rates(cfg, scfg, rc, true, out, ep, err);
}

ib_status ib_measure_endpoint_serve_curve(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                          const ib_gen_serve_rates_config *rc, ib_gen_serve_rates_result *out,
                                          ib_endpoint_result *ep, ib_error *err)
{
    return endpoint_rates(cfg, scfg, rc, false, out, ep, err);
}
