/* The HTTP client's own error (docs/script-server.md, "The client's
 * calibration"): as calibrate times spin kernels of known duration, the
 * client of serve --endpoint is driven against the scripted server at
 * rising rates, and what it measured (its lateness, each request's TTFT,
 * each gap between chunks) is set against what the server did, by the
 * server's own stamps on the same clock. The first rate at which an
 * error's p99 passes the bound is where the client stops being accurate. */
#include "endpoint/script_server.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prompt lengths 1..PROMPT_KEYS key the requests: two requests of the
 * same length are PROMPT_KEYS apart in the schedule, far apart in time. */
#define PROMPT_KEYS 512
#define MIN_REQUESTS 20
#define MAX_REQUESTS 20000

void ib_client_calibration_config_init(ib_client_calibration_config *cfg)
{
    *cfg = (ib_client_calibration_config){
        .ttft_ms = 20, .itl_ms = 5, .output_tokens = 32, .seconds_per_rate = 2, .bound_ms = 1
    };
    for (double r = 8; r <= 4096; r *= 2) cfg->rates[cfg->n_rates++] = r;
}

/* --- one run's errors ---------------------------------------------------------- */

/* What the server did for one request: its arrival, prompt, chunks' sends. */
typedef struct served {
    double arrival_ms;
    int64_t prompt;
    size_t first, n_chunks; /* into the chunk send times, in request order */
} served;

typedef struct server_view {
    served *req;
    size_t n_req;
    double *chunk_ms;
    int64_t tokens, streams_max;
    double first_ms, last_ms;
} server_view;

static void view_free(server_view *v)
{
    free(v->req);
    free(v->chunk_ms);
}

/* Streams open at once, at most: +1 at an arrival, -1 at its end. */
static int64_t streams_max(const ib_script_stamp *st, size_t n)
{
    int64_t open = 0, most = 0;
    for (size_t i = 0; i < n; i++) {
        if (st[i].kind == IB_SCRIPT_ARRIVED) open++;
        if (st[i].kind == IB_SCRIPT_ENDED || st[i].kind == IB_SCRIPT_BROKEN ||
            st[i].kind == IB_SCRIPT_REFUSED)
            open--;
        if (open > most) most = open;
    }
    return most;
}

/* The stamps, by request: arrivals, prompts, each request's chunks in the
 * order sent (the stamps are in time order). */
static ib_status view_of(const ib_script_stamp *st, size_t n, server_view *v, ib_error *err)
{
    *v = (server_view){ .first_ms = INFINITY, .last_ms = -INFINITY };
    size_t n_chunks = 0;
    for (size_t i = 0; i < n; i++) {
        if (st[i].request + 1 > (int64_t)v->n_req) v->n_req = (size_t)st[i].request + 1;
        n_chunks += st[i].kind == IB_SCRIPT_CHUNK;
    }
    v->req = calloc(v->n_req ? v->n_req : 1, sizeof *v->req);
    v->chunk_ms = malloc((n_chunks ? n_chunks : 1) * sizeof *v->chunk_ms);
    IB_FAIL_IF(!v->req || !v->chunk_ms, err, IB_ERR_NO_MEMORY, "out of memory for the stamps");
    for (size_t i = 0; i < n; i++) {
        served *s = &v->req[st[i].request];
        if (st[i].kind == IB_SCRIPT_ARRIVED)
            *s = (served){ .arrival_ms = st[i].sent_ms, .prompt = st[i].tokens };
        if (st[i].kind == IB_SCRIPT_CHUNK) s->n_chunks++;
    }
    size_t at = 0;
    for (size_t r = 0; r < v->n_req; r++) {
        v->req[r].first = at;
        at += v->req[r].n_chunks;
        v->req[r].n_chunks = 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (st[i].kind != IB_SCRIPT_CHUNK) continue;
        served *s = &v->req[st[i].request];
        v->chunk_ms[s->first + s->n_chunks++] = st[i].sent_ms;
        v->tokens += st[i].tokens;
        v->first_ms = fmin(v->first_ms, v->req[st[i].request].arrival_ms);
        v->last_ms = fmax(v->last_ms, st[i].sent_ms);
    }
    v->streams_max = streams_max(st, n);
    return IB_OK;
}

/* The server's request of prompt length `prompt` that arrived nearest
 * sent_ms; NULL when none. */
static const served *match(const server_view *v, int64_t prompt, double sent_ms)
{
    const served *best = NULL;
    for (size_t r = 0; r < v->n_req; r++)
        if (v->req[r].prompt == prompt &&
            (!best || fabs(v->req[r].arrival_ms - sent_ms) < fabs(best->arrival_ms - sent_ms)))
            best = &v->req[r];
    return best;
}

typedef struct samples {
    double *late, *late_err, *ttft_err, *itl_err;
    size_t n, n_itl;
} samples;

/* One completed request's errors, when the server's record of it has as
 * many chunks as the client read; false otherwise. */
static bool add_request(samples *sm, const served *s, const server_view *v, const ib_gen_serve_request *r,
                        const ib_endpoint_request *e, double origin_ms)
{
    if (!s || s->n_chunks != e->n_chunks || e->n_chunks == 0) return false;
    const double *sent = v->chunk_ms + s->first;
    double late = s->arrival_ms - (origin_ms + r->spec.arrival_ms);
    sm->late[sm->n] = late;
    sm->late_err[sm->n] = fabs(late - e->lateness_ms);
    sm->ttft_err[sm->n++] = fabs(origin_ms + e->chunk_ms[0] - sent[0]);
    for (size_t k = 1; k < e->n_chunks; k++)
        sm->itl_err[sm->n_itl++] = fabs((e->chunk_ms[k] - e->chunk_ms[k - 1]) - (sent[k] - sent[k - 1]));
    return true;
}

static void stats_or_empty(const double *x, size_t n, ib_stats *out)
{
    if (n == 0 || ib_stats_compute(x, n, out) != IB_OK) *out = (ib_stats){ 0 };
}

static bool within(const ib_stats *s, double bound_ms) { return s->n == 0 || s->p99 <= bound_ms; }

static void judge(const samples *sm, double bound_ms, ib_client_calibration_point *p)
{
    stats_or_empty(sm->late, sm->n, &p->lateness);
    stats_or_empty(sm->late_err, sm->n, &p->lateness_error);
    stats_or_empty(sm->ttft_err, sm->n, &p->ttft_error);
    stats_or_empty(sm->itl_err, sm->n_itl, &p->itl_error);
    p->accurate = p->n_failed == 0 && p->n_unmatched == 0 && sm->n > 0 && within(&p->lateness, bound_ms) &&
                  within(&p->lateness_error, bound_ms) && within(&p->ttft_error, bound_ms) &&
                  within(&p->itl_error, bound_ms);
}

static ib_status collect(const server_view *v, const ib_gen_serve_result *out, const ib_endpoint_result *ep,
                         double bound_ms, ib_client_calibration_point *p, ib_error *err)
{
    size_t n_itl = 0;
    for (size_t i = 0; i < ep->n_requests; i++) n_itl += ep->requests[i].n_chunks;
    size_t n = ep->n_requests ? ep->n_requests : 1;
    samples sm = { malloc(n * sizeof(double)),
                   malloc(n * sizeof(double)),
                   malloc(n * sizeof(double)),
                   malloc((n_itl ? n_itl : 1) * sizeof(double)),
                   0,
                   0 };
    ib_status st = sm.late && sm.late_err && sm.ttft_err && sm.itl_err
                       ? IB_OK
                       : ib__fail(err, IB_ERR_NO_MEMORY, "out of memory for the errors");
    for (size_t i = 0; st == IB_OK && i < ep->n_requests && i < out->n_requests; i++) {
        const ib_endpoint_request *e = &ep->requests[i];
        const ib_gen_serve_request *r = &out->requests[i];
        if (e->failure != IB_EP_OK) {
            p->n_failed++;
            continue;
        }
        const served *s = match(v, r->spec.prompt_tokens, ep->origin_ms + e->sent_ms);
        if (!add_request(&sm, s, v, r, e, ep->origin_ms)) p->n_unmatched++;
    }
    if (st == IB_OK) judge(&sm, bound_ms, p);
    free(sm.late);
    free(sm.late_err);
    free(sm.ttft_err);
    free(sm.itl_err);
    return st;
}

ib_status ib__client_errors(const ib_script_stamp *st, size_t n, const ib_gen_serve_result *out,
                            const ib_endpoint_result *ep, double bound_ms, ib_client_calibration_point *p,
                            ib_error *err)
{
    server_view v;
    ib_status s = view_of(st, n, &v, err);
    if (s == IB_OK) {
        p->streams_max = v.streams_max;
        p->tokens_per_s = v.last_ms > v.first_ms ? 1e3 * (double)v.tokens / (v.last_ms - v.first_ms) : 0;
        s = collect(&v, out, ep, bound_ms, p, err);
    }
    view_free(&v);
    return s;
}

/* --- the run over rates -------------------------------------------------------- */

static ib_status check_config(const ib_client_calibration_config *cfg, ib_error *err)
{
    IB_FAIL_IF(cfg->n_rates < 1 || cfg->n_rates > IB_MAX_CLIENT_CALIBRATION_POINTS, err, IB_ERR_INVALID_ARG,
               "client calibration: %zu rates, not 1 to %d", cfg->n_rates, IB_MAX_CLIENT_CALIBRATION_POINTS);
    for (size_t i = 0; i < cfg->n_rates; i++)
        IB_FAIL_IF(!(cfg->rates[i] > 0) || !isfinite(cfg->rates[i]), err, IB_ERR_INVALID_ARG,
                   "client calibration: rate %g is not > 0 requests/s", cfg->rates[i]);
    IB_FAIL_IF(cfg->output_tokens < 1, err, IB_ERR_INVALID_ARG,
               "client calibration: %d output tokens, not >= 1", (int)cfg->output_tokens);
    IB_FAIL_IF(!(cfg->seconds_per_rate > 0) || cfg->seconds_per_rate > 3600, err, IB_ERR_INVALID_ARG,
               "client calibration: %g s a rate, not in (0, 3600]", cfg->seconds_per_rate);
    IB_FAIL_IF(!(cfg->bound_ms > 0) || !isfinite(cfg->bound_ms), err, IB_ERR_INVALID_ARG,
               "client calibration: bound %g ms is not > 0", cfg->bound_ms);
    return IB_OK;
}

/* A constant-rate schedule whose requests' prompt lengths are their keys. */
static ib_gen_request_spec *schedule(const ib_client_calibration_config *cfg, double rate, size_t *n)
{
    double want = ceil(rate * cfg->seconds_per_rate);
    *n = want < MIN_REQUESTS ? MIN_REQUESTS : want > MAX_REQUESTS ? MAX_REQUESTS : (size_t)want;
    ib_gen_request_spec *t = malloc(*n * sizeof *t);
    for (size_t i = 0; t && i < *n; i++)
        t[i] = (ib_gen_request_spec){ 1e3 * (double)i / rate, (int32_t)(1 + i % PROMPT_KEYS),
                                      cfg->output_tokens };
    return t;
}

/* The client's run against srv at rate, the server's stamps read after. */
static ib_status drive(const ib_client_calibration_config *cfg, ib_script_server *srv, double rate,
                       ib_client_calibration_point *p, ib_error *err)
{
    size_t n = 0;
    ib_gen_request_spec *trace = schedule(cfg, rate, &n);
    IB_FAIL_IF(!trace, err, IB_ERR_NO_MEMORY, "out of memory for the schedule");
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ib_script_server_port(srv));
    ib_endpoint_config ec;
    ib_endpoint_config_init(&ec);
    ec.url = url;
    ec.model = "script";
    ib_gen_serve_config sc;
    ib_gen_serve_config_init(&sc);
    sc.arrivals = IB_ARRIVALS_TRACE;
    sc.trace = trace;
    sc.n_trace = n;
    sc.requests = (int64_t)n;
    sc.run.cancel = cfg->cancel;
    ib_gen_serve_result out;
    ib_endpoint_result ep;
    ib_status st = ib_measure_endpoint_serve(&ec, &sc, &out, &ep, err);
    /* Every request failed: a point (not accurate), not the end. */
    if (st == IB_ERR_RUNTIME) st = IB_OK;
    p->n_requests = n;
    size_t n_st = st == IB_OK ? ib_script_server_stamps(srv, NULL, 0) : 0;
    ib_script_stamp *stamps = n_st ? malloc(n_st * sizeof *stamps) : NULL;
    if (n_st && !stamps) st = ib__fail(err, IB_ERR_NO_MEMORY, "out of memory for the stamps");
    if (stamps) {
        size_t got = ib_script_server_stamps(srv, stamps, n_st);
        st = ib__client_errors(stamps, got < n_st ? got : n_st, &out, &ep, cfg->bound_ms, p, err);
    }
    free(stamps);
    ib_gen_serve_result_free(&out);
    ib_endpoint_result_free(&ep);
    free(trace);
    return st;
}

static ib_status measure_rate(const ib_client_calibration_config *cfg, double rate,
                              ib_client_calibration_point *p, ib_error *err)
{
    *p = (ib_client_calibration_point){ .rate = rate };
    ib_script s;
    ib_script_init(&s);
    s.ttft_ms = cfg->ttft_ms;
    s.itl_ms = cfg->itl_ms;
    ib_script_server *srv = NULL;
    IB_TRY(ib_script_server_start(&s, &srv, err));
    ib_status st = drive(cfg, srv, rate, p, err);
    ib_script_server_stop(srv);
    return st;
}

ib_status ib_calibrate_client(const ib_client_calibration_config *cfg, ib_client_calibration_result *out,
                              ib_error *err)
{
    memset(out, 0, sizeof *out);
    IB_TRY(check_config(cfg, err));
    ib_script probe;
    ib_script_init(&probe);
    probe.ttft_ms = cfg->ttft_ms;
    probe.itl_ms = cfg->itl_ms;
    IB_TRY(ib__script_check(&probe, err));
    *out = (ib_client_calibration_result){ .ttft_ms = cfg->ttft_ms,
                                           .itl_ms = cfg->itl_ms,
                                           .bound_ms = cfg->bound_ms,
                                           .output_tokens = cfg->output_tokens };
    bool below_all_accurate = true;
    for (size_t i = 0; i < cfg->n_rates; i++) {
        ib_client_calibration_point *p = &out->points[out->n_points];
        ib_status st = measure_rate(cfg, cfg->rates[i], p, err);
        if (st != IB_OK) {
            out->partial = out->n_points > 0;
            out->stop_status = st;
            return st;
        }
        out->n_points++;
        below_all_accurate = below_all_accurate && p->accurate;
        if (!below_all_accurate) break;
        out->ceiling_rate = p->rate;
        out->ceiling_streams = p->streams_max;
        out->ceiling_tokens_per_s = p->tokens_per_s;
    }
    return IB_OK;
}
