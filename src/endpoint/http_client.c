/* Serving over HTTP: the schedule of the in-process engine (the same
 * requests, the same figures: src/core/serve_gen*.c) sent to an
 * OpenAI-compatible endpoint by one thread, libcurl's multi interface,
 * open loop: each request is added to the multi handle when its scheduled
 * time comes, whatever the others do, and the loop sleeps in
 * curl_multi_poll no longer than to the next due send (a spin for the
 * last millisecond: poll's timeout is whole ms). Every figure runs from
 * the schedule; the client's own lateness (sent - scheduled) is measured
 * per request, so that a client too slow for the load is told apart from
 * a slow server (docs/serve-endpoint.md). */
#include "core/progress.h"
#include "core/serve_gen.h"
#include "endpoint/chunk.h"
#include "endpoint/endpoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The longest one wait sleeps before looking at the cancel flag. */
#define CANCEL_POLL_MS 50
/* The lateness p99 a client may have before the run is the client's
 * fault: 1% of the median TTFT it reports (the lateness is inside every
 * TTFT, one for one), and at least 1 ms, the resolution of the wait
 * (curl_multi_poll's) and well above a loopback send's own cost. */
#define LATE_SHARE 0.01
#define LATE_FLOOR_MS 1.0
/* Warm-up requests are told apart from the measured in their prompt ids. */
#define WARMUP_SEED 0x7761726d7570ull

static const char *const failure_names[IB_EP_N_FAILURES] = {
    "ok",          "connect", "http",     "reset", "timeout",  "malformed",
    "error_event", "no_done", "no_usage", "short", "mismatch", "other",
};

const char *ib_endpoint_failure_str(ib_endpoint_failure f)
{
    return f >= 0 && f < IB_EP_N_FAILURES ? failure_names[f] : "unknown";
}

void ib_endpoint_config_init(ib_endpoint_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->request_timeout_ms = IB__EP_DEFAULT_TIMEOUT_MS;
}

/* A request's chunk arrays (NULL after). */
static void free_chunks(ib_endpoint_request *ep)
{
    free(ep->chunk_ms);
    free(ep->chunk_token_counts);
    ep->chunk_ms = NULL;
    ep->chunk_token_counts = NULL;
}

void ib_endpoint_result_free(ib_endpoint_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_requests; i++) free_chunks(&r->requests[i]);
    free(r->requests);
    r->requests = NULL;
    r->n_requests = 0;
}

typedef struct ib__ep_client {
    const ib_endpoint_config *cfg;
    const ib_gen_serve_config *scfg;
    CURLM *multi;
    char *completions_url;
    int32_t vocab;
    double origin_ms;       /* the last run's schedule origin on the host clock */
    double warm_rate_per_s; /* the warm-up's completed requests a second (NaN: none) */
    /* The run's watch (NULL: none), told each request's first token and
     * its end; stopped once it said to end the run. */
    const ib__gen_serve_watch *watch;
    bool stopped;
    /* Reports to scfg->run.progress on the host clock, as the engine's in
     * process: a phase's start, then the requests ended, rate-limited. */
    ib__progress pr;
} client;

/* Starts request i of a run: its transfer added to the multi handle. */
static ib_status start(client *c, ib__ep_transfer *t, double origin_ms, uint64_t seed,
                       ib_gen_serve_request *r, ib_endpoint_request *ep, ib_error *err)
{
    t->origin_ms = origin_ms;
    IB_TRY(ib__ep_transfer_init(t, c->completions_url, c->cfg->api, c->cfg->model, c->cfg->request_timeout_ms,
                                c->vocab, seed, r, ep, err));
    IB_FAIL_IF(curl_multi_add_handle(c->multi, t->easy) != CURLM_OK, err, IB_ERR_INTERNAL,
               "libcurl refused a request");
    return IB_OK;
}

/* The transfers that ended: finished, their handles released. */
static size_t reap(client *c)
{
    size_t ended = 0;
    int left;
    CURLMsg *m;
    while ((m = curl_multi_info_read(c->multi, &left))) {
        if (m->msg != CURLMSG_DONE) continue;
        ib__ep_transfer *t = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        CURLcode code = m->data.result;
        curl_multi_remove_handle(c->multi, m->easy_handle);
        ib__ep_transfer_finish(t, code);
        ib__ep_transfer_free(t);
        ended++;
        /* Its end (a failure too: it ended short); its first token, when
         * it had one, told before (watch_first_tokens runs first). */
        if (c->watch && !c->stopped) c->stopped = !c->watch->fn(c->watch->ctx, t->req, false, true);
    }
    return ended;
}

/* The wait in whole ms before the next look: to the next due send (0 in
 * its last millisecond: a spin), at most the cancel poll. */
static int wait_ms(double due_ms)
{
    double left = due_ms - ib__now_ms();
    if (!(left < CANCEL_POLL_MS)) return CANCEL_POLL_MS;
    return left <= 1.5 ? 0 : (int)(left - 1.0);
}

/* What a run's watch was told of the first chunks: each request's once. */
typedef struct told {
    bool *first; /* [n] */
    size_t lo;   /* every request below it told, or ended */
} told;

/* Tells the watch of the requests sent so far, ts[0..sent): the first
 * chunk of each in flight (its times as they stand). The requests end
 * about in the order sent: the scan starts past those done. */
static void watch_first_tokens(client *c, const ib__ep_transfer *ts, told *w, size_t sent)
{
    while (w->lo < sent && (w->first[w->lo] || !ts[w->lo].easy)) w->lo++;
    for (size_t i = w->lo; i < sent && !c->stopped; i++) {
        const ib__ep_transfer *t = &ts[i];
        if (w->first[i] || !t->easy || t->ep->n_chunks == 0) continue;
        w->first[i] = true;
        ib_gen_serve_request q = *t->req;
        q.admitted_ms = t->ep->sent_ms;
        q.first_token_ms = t->ep->chunk_ms[0];
        q.end_ms = t->ep->chunk_ms[t->ep->n_chunks - 1];
        q.generated_tokens = (int32_t)t->ep->chunk_tokens;
        c->stopped = !c->watch->fn(c->watch->ctx, &q, true, false);
    }
}

/* A request in flight when the watch ended the run: its transfer aborted,
 * its times left where they got, cut (not a failure: the client ended it,
 * as the engine drops the requests still running). One started in the
 * last pass but not yet sent (curl never reached its prereq callback)
 * goes back to unsent, as the requests after it: a cut request was
 * admitted (sent), so that admitted = completed + cut + failed. */
static void cut(client *c, ib__ep_transfer *t)
{
    bool sent = !isnan(t->ep->sent_ms);
    curl_multi_remove_handle(c->multi, t->easy);
    ib__ep_transfer_finish(t, CURLE_ABORTED_BY_CALLBACK);
    t->ep->failure = IB_EP_OK;
    t->ep->cut = sent;
    if (!sent) {
        free_chunks(t->ep); /* none came, but ep is reset whole */
        ib__ep_request_unsent(t->req, t->ep);
    }
    ib__ep_transfer_free(t);
}

/* Sends rs[0..n) on their schedule from now, and reads every answer; with
 * a watch (NULL: none), until it says to end the run (the rest never
 * sent). */
static ib_status run(client *c, ib_phase phase, ib_gen_serve_request *rs, ib_endpoint_request *eps, size_t n,
                     uint64_t seed, const ib__gen_serve_watch *watch, ib_error *err)
{
    ib__ep_transfer *ts = calloc(n ? n : 1, sizeof *ts);
    told w = { calloc(n ? n : 1, sizeof *w.first), 0 };
    if (!ts || !w.first) {
        free(ts);
        free(w.first);
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < n; i++) ib__ep_request_unsent(&rs[i], &eps[i]);
    ib__progress_phase(&c->pr, phase, (int64_t)n);
    double origin = c->origin_ms = ib__now_ms();
    size_t next = 0, ended = 0;
    ib_status st = IB_OK;
    c->watch = watch;
    c->stopped = false;
    while (st == IB_OK && ended < n && !c->stopped) {
        if (ib__cancelled(c->scfg->run.cancel)) {
            st = ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
            break;
        }
        while (st == IB_OK && next < n && origin + rs[next].spec.arrival_ms <= ib__now_ms()) {
            st = start(c, &ts[next], origin, seed + next, &rs[next], &eps[next], err);
            next++;
        }
        int running;
        curl_multi_perform(c->multi, &running);
        if (c->watch) watch_first_tokens(c, ts, &w, next);
        ended += reap(c);
        ib__progress_runs(&c->pr, (int64_t)ended, NAN);
        if (st == IB_OK && ended < n && !c->stopped)
            curl_multi_poll(c->multi, NULL, 0,
                            next < n ? wait_ms(origin + rs[next].spec.arrival_ms) : CANCEL_POLL_MS, NULL);
    }
    /* Interrupted: the requests in flight end unfinished (never completed);
     * ended by the watch: cut. */
    for (size_t i = 0; i < next; i++)
        if (ts[i].easy && c->stopped)
            cut(c, &ts[i]);
        else if (ts[i].easy) {
            curl_multi_remove_handle(c->multi, ts[i].easy);
            ib__ep_transfer_finish(&ts[i], CURLE_ABORTED_BY_CALLBACK);
            ib__ep_transfer_free(&ts[i]);
        }
    free(ts);
    free(w.first);
    c->watch = NULL;
    return st;
}

/* The warm-up: the first requests' lengths, all at once, forgotten (a
 * server's first requests are slower: its cold start); the requests it
 * completed a second, the rate a search starts from (as in process). */
static ib_status warm_up(client *c, const ib_gen_serve_request *measured, size_t n_measured, ib_error *err)
{
    size_t n = (size_t)c->scfg->warmup_requests;
    if (n == 0) return IB_OK;
    ib_gen_serve_request *w = calloc(n, sizeof *w);
    ib_endpoint_request *we = calloc(n, sizeof *we);
    ib_status st = w && we ? IB_OK : ib__fail(err, IB_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; st == IB_OK && i < n; i++)
        w[i].spec = (ib_gen_request_spec){ 0, measured[i % n_measured].spec.prompt_tokens,
                                           measured[i % n_measured].spec.output_tokens };
    if (st == IB_OK) st = run(c, IB_PHASE_WARMUP, w, we, n, c->scfg->seed ^ WARMUP_SEED, NULL, err);
    size_t completed = 0;
    for (size_t i = 0; st == IB_OK && i < n; i++)
        completed += w[i].generated_tokens == w[i].spec.output_tokens;
    if (completed > 0) c->warm_rate_per_s = (double)completed * 1000.0 / (ib__now_ms() - c->origin_ms);
    ib_endpoint_result tmp = { .requests = we, .n_requests = we ? n : 0 };
    ib_endpoint_result_free(&tmp);
    free(w);
    return st;
}

/* Neither failed nor cut off by the watch. */
static bool completed(const ib_endpoint_request *r) { return r->failure == IB_EP_OK && !r->cut; }

/* Every gap between two tokens of the completed requests (ib__chunk_gaps). */
static ib_status token_gaps(const ib_gen_serve_result *out, const ib_endpoint_result *ep, double **itl,
                            size_t *n_itl, ib_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < ep->n_requests; i++)
        if (completed(&ep->requests[i])) n += (size_t)ep->requests[i].chunk_tokens;
    *itl = malloc((n ? n : 1) * sizeof **itl);
    IB_FAIL_IF(!*itl, err, IB_ERR_NO_MEMORY, "out of memory for the gaps");
    *n_itl = 0;
    for (size_t i = 0; i < ep->n_requests; i++) {
        const ib_endpoint_request *r = &ep->requests[i];
        if (!completed(r)) continue;
        *n_itl += ib__chunk_gaps(r->chunk_ms, r->chunk_token_counts, r->n_chunks, *itl + *n_itl);
    }
    (void)out;
    return IB_OK;
}

/* The endpoint's own figures: lateness, failures, chunks. */
static ib_status endpoint_figures(const ib_gen_serve_result *out, ib_endpoint_result *ep)
{
    double *late = malloc((ep->n_requests ? ep->n_requests : 1) * sizeof *late);
    if (!late) return IB_ERR_NO_MEMORY;
    size_t n_late = 0;
    memset(ep->failures, 0, sizeof ep->failures);
    ep->n_failed = ep->n_chunks = ep->multi_token_chunks = ep->assumed_chunks = ep->n_cut = 0;
    for (size_t i = 0; i < ep->n_requests; i++) {
        const ib_endpoint_request *r = &ep->requests[i];
        ep->n_cut += r->cut;
        if (isfinite(r->lateness_ms)) late[n_late++] = r->lateness_ms;
        ep->failures[r->failure]++;
        ep->n_failed += r->failure != IB_EP_OK;
        ep->n_chunks += r->n_chunks;
        if (r->tokens_assumed) ep->assumed_chunks += r->n_chunks;
        for (size_t k = 0; k < r->n_chunks; k++) ep->multi_token_chunks += r->chunk_token_counts[k] > 1;
    }
    if (n_late == 0 || ib_stats_compute(late, n_late, &ep->lateness) != IB_OK) ep->lateness = (ib_stats){ 0 };
    free(late);
    double ttft_p50 = out->ttft.n ? out->ttft.p50 : 0;
    ep->lateness_bound_ms = fmax(LATE_FLOOR_MS, LATE_SHARE * ttft_p50);
    ep->client_late = ep->lateness.n > 0 && ep->lateness.p99 > ep->lateness_bound_ms;
    return IB_OK;
}

static ib_status figures(const ib_gen_serve_config *scfg, ib_gen_serve_result *out, ib_endpoint_result *ep,
                         ib_error *err)
{
    double *itl = NULL;
    size_t n_itl = 0;
    IB_TRY(token_gaps(out, ep, &itl, &n_itl, err));
    ib_status st = ib__gen_serve_figures(
        scfg, itl, n_itl, ib__gen_serve_offered_rate(scfg, out->requests, out->n_requests), out);
    free(itl);
    if (st == IB_OK) st = endpoint_figures(out, ep);
    if (st == IB_OK) st = ib__ep_server_timings(ep);
    IB_FAIL_IF(st != IB_OK, err, st, "out of memory for the figures");
    /* The server's devices are its own: their energy is not the client's to read. */
    ib__strlcpy(out->energy.device.note, "none over HTTP (the server's device)",
                sizeof out->energy.device.note);
    ib__strlcpy(out->energy.cpu.note, out->energy.device.note, sizeof out->energy.cpu.note);
    return IB_OK;
}

static ib_status open_client(client *c, const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                             int32_t server_vocab, ib_error *err)
{
    c->cfg = cfg;
    c->scfg = scfg;
    c->warm_rate_per_s = NAN;
    ib__progress_init(&c->pr, &scfg->run, NULL);
    c->vocab = cfg->vocab > 0                    ? cfg->vocab
               : server_vocab > IB__EP_LOWEST_ID ? server_vocab
                                                 : IB__EP_DEFAULT_VOCAB;
    IB_TRY(ib__ep_url(cfg->url, ib__ep_api_path(cfg->api), &c->completions_url, err));
    c->multi = curl_multi_init();
    IB_FAIL_IF(!c->multi, err, IB_ERR_NO_MEMORY, "out of memory");
    return IB_OK;
}

/* A measured run after the checks: the schedule, the warm-up (warm), the
 * measured requests (watched by watch, NULL: none). */
static ib_status serve(client *c, ib_gen_serve_result *out, ib_endpoint_result *ep, bool warm,
                       const ib__gen_serve_watch *watch, bool *began, ib_error *err)
{
    IB_TRY(ib__gen_serve_schedule(c->scfg, &out->requests, &out->n_requests, err));
    ep->requests = calloc(out->n_requests, sizeof *ep->requests);
    IB_FAIL_IF(!ep->requests, err, IB_ERR_NO_MEMORY, "out of memory");
    ep->n_requests = out->n_requests;
    out->warmup_requests = c->scfg->warmup_requests;
    ib__strlcpy(out->info.model, c->cfg->model, sizeof out->info.model); /* the server's name of it */
    if (warm) IB_TRY(warm_up(c, out->requests, out->n_requests, err));
    *began = true;
    ib__progress_rate(&c->pr, c->scfg->arrivals == IB_ARRIVALS_TRACE ? NAN : c->scfg->rate);
    ib_status st =
        run(c, IB_PHASE_SAMPLING, out->requests, ep->requests, out->n_requests, c->scfg->seed, watch, err);
    ep->origin_ms = c->origin_ms;
    return st;
}

/* What was measured, and IB_ERR_RUNTIME when every request failed. */
static ib_status conclude(const ib_gen_serve_config *scfg, ib_gen_serve_result *out, ib_endpoint_result *ep,
                          ib_status st, ib_error *err)
{
    out->partial = st != IB_OK;
    out->stop_status = st;
    ib_error ferr;
    ib_status fs = figures(scfg, out, ep, &ferr);
    if (st != IB_OK) return st;
    if (fs != IB_OK) return ib__fail(err, fs, "%s", ferr.message);
    IB_FAIL_IF(ep->n_failed == ep->n_requests, err, IB_ERR_RUNTIME,
               "every request to %s failed (%zu: the failures by cause above)", ep->url, ep->n_failed);
    return IB_OK;
}

ib_status ib__ep_client_open(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                             ib__ep_client **out, ib_error *err)
{
    *out = NULL;
    IB_FAIL_IF(!scfg, err, IB_ERR_INVALID_ARG, "no configuration");
    IB_TRY(ib__gen_serve_validate_arrivals(scfg, err));
    IB_FAIL_IF(scfg->warmup_requests < 0 || scfg->warmup_requests > IB__EP_MAX_WARMUP, err,
               IB_ERR_INVALID_ARG, "warm-up requests: 0 to %d", IB__EP_MAX_WARMUP);
    IB_FAIL_IF(!(scfg->slo_ttft_ms >= 0) || !(scfg->slo_tpot_ms >= 0) || !(scfg->slo_e2e_ms >= 0), err,
               IB_ERR_INVALID_ARG, "targets are above 0 ms (0: none)");
    int32_t server_vocab = 0;
    IB_TRY(ib_endpoint_check(cfg, &server_vocab, err));
    client *c = calloc(1, sizeof *c);
    IB_FAIL_IF(!c, err, IB_ERR_NO_MEMORY, "out of memory");
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ib_status st = open_client(c, cfg, scfg, server_vocab, err);
    if (st != IB_OK) ib__ep_client_close(c);
    if (st == IB_OK) *out = c;
    return st;
}

ib_status ib__ep_client_warm_up(ib__ep_client *c, ib_error *err)
{
    ib_gen_serve_request *rs = NULL;
    size_t n = 0;
    IB_TRY(ib__gen_serve_schedule(c->scfg, &rs, &n, err));
    ib_status st = warm_up(c, rs, n, err);
    free(rs);
    return st;
}

double ib__ep_client_warm_rate(const ib__ep_client *c) { return c->warm_rate_per_s; }

ib_status ib__ep_client_serve(ib__ep_client *c, const ib_gen_serve_config *scfg,
                              const ib__gen_serve_watch *watch, bool warm, ib_gen_serve_result *out,
                              ib_endpoint_result *ep, ib_error *err)
{
    memset(out, 0, sizeof *out);
    memset(ep, 0, sizeof *ep);
    ib__strlcpy(ep->url, c->cfg->url, sizeof ep->url);
    ib__strlcpy(ep->model, c->cfg->model, sizeof ep->model);
    ep->api = c->cfg->api;
    ep->vocab = c->vocab;
    c->scfg = scfg;
    bool began = false;
    ib_status st = serve(c, out, ep, warm, watch, &began, err);
    if (began) return conclude(scfg, out, ep, st, err);
    ib_gen_serve_result_free(out);
    ib_endpoint_result_free(ep);
    return st;
}

void ib__ep_client_close(ib__ep_client *c)
{
    if (!c) return;
    curl_multi_cleanup(c->multi);
    free(c->completions_url);
    free(c);
    curl_global_cleanup();
}

ib_status ib_measure_endpoint_serve(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                    ib_gen_serve_result *out, ib_endpoint_result *ep, ib_error *err)
{
    memset(out, 0, sizeof *out);
    memset(ep, 0, sizeof *ep);
    client *c = NULL;
    IB_TRY(ib__ep_client_open(cfg, scfg, &c, err));
    ib_status st = ib__ep_client_serve(c, scfg, NULL, true, out, ep, err);
    ib__ep_client_close(c);
    return st;
}
