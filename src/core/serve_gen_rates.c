/* A generative model served at several rates on one engine (its context
 * and warm-up once): the SLO rate search, the highest rate whose TTFT and
 * TPOT percentiles both meet their targets by LoadGen's early-stopping
 * bound (serve.c's ib_serve_percentile_met, as forward-pass serve judges
 * its latency), and the curve over given rates with its knee and
 * saturation point (docs/serve-generative.md, "The answer"). The rates are
 * served by an ib__gen_rate_server: the engine here, an HTTP endpoint in
 * src/endpoint/endpoint_rates.c. */
#include "core/serve_gen_rates.h"
#include "core/serve_gen_rates_progress.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A search halves its first rate at most this many times looking for one
 * that meets the targets. */
#define MAX_HALVINGS 6

void ib_gen_serve_rates_config_init(ib_gen_serve_rates_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->percentile = 0.99;
    cfg->confidence = 0.99;
    cfg->precision = 0.05;
}

void ib_gen_serve_rates_result_free(ib_gen_serve_rates_result *r)
{
    if (r) ib_gen_serve_result_free(&r->at);
}

/* ------------------------------------------------------------------------ */
/* Judging a rate: the early-stopping bound on each target                   */
/* ------------------------------------------------------------------------ */

typedef struct judge {
    const ib_gen_serve_config *cfg;
    const ib_gen_serve_rates_config *rc;
    int64_t n;                    /* the requests the bound judges at the run's end */
    int64_t ttft_over, tpot_over; /* so far */
    int64_t ended_short;          /* requests that ended short of their tokens (over HTTP: failed) */
} judge;

/* Whether n requests of which k over the target meet the percentile
 * (no target: nothing to meet). */
static bool bound_met(const judge *j, double target_ms, int64_t n, int64_t k)
{
    return !(target_ms > 0) || ib_serve_percentile_met(n, k, j->rc->percentile, j->rc->confidence);
}

/* Whether the run can still meet both targets: with the over counts so far
 * and every request still to come within them. The bound is judged over
 * all the requests of the rate (n): more requests over a target only make
 * it worse, so a rate that fails it now fails it at the end. (TPOT's own
 * count is that of requests of 2 tokens or more, at most n: judging over n
 * ends a run no sooner than its own count would.) */
static bool reachable(const judge *j)
{
    /* A rate meets its targets only with every request completed. */
    return j->ended_short == 0 && bound_met(j, j->cfg->slo_ttft_ms, j->n, j->ttft_over) &&
           bound_met(j, j->cfg->slo_tpot_ms, j->n, j->tpot_over);
}

/* The server's watch: a request's TTFT is known at its first token, its
 * TPOT at its last (last for a request that ended short too: an endpoint's
 * failure); false (end the run) once the bound is out of reach. */
static bool watch_request(void *ctx, const ib_gen_serve_request *r, bool first, bool last)
{
    judge *j = ctx;
    ib_gen_serve_request q = *r;
    ib__gen_serve_request_figures(j->cfg, &q);
    if (first && j->cfg->slo_ttft_ms > 0 && q.ttft_ms > j->cfg->slo_ttft_ms) j->ttft_over++;
    if (last && j->cfg->slo_tpot_ms > 0 && q.tpot_ms > j->cfg->slo_tpot_ms) j->tpot_over++;
    if (last && q.generated_tokens < q.spec.output_tokens) j->ended_short++;
    return reachable(j);
}

/* ------------------------------------------------------------------------ */
/* A rate's point                                                            */
/* ------------------------------------------------------------------------ */

static double p_or_nan(const ib_stats *st, double v) { return st->n > 0 ? v : NAN; }

/* The quantile q of the requests' figure (TTFT or TPOT) that has one, and
 * how many of them pass target_ms; NaN when none has it. */
static double figure_at(const ib_gen_serve_result *r, bool tpot, double q, double target_ms, int64_t *over,
                        int64_t *n_judged)
{
    double *x = malloc((r->n_requests ? r->n_requests : 1) * sizeof *x);
    size_t n = 0;
    *over = 0;
    for (size_t i = 0; x && i < r->n_requests; i++) {
        const ib_gen_serve_request *rq = &r->requests[i];
        double v = tpot ? rq->tpot_ms : rq->ttft_ms;
        bool done = tpot ? rq->generated_tokens == rq->spec.output_tokens : rq->generated_tokens > 0;
        if (!done || isnan(v)) continue;
        x[n++] = v;
        *over += target_ms > 0 && v > target_ms;
    }
    *n_judged = (int64_t)n;
    double at = NAN;
    if (x && n > 0) {
        ib__sort(x, n);
        at = ib_quantile_sorted(x, n, q);
    }
    free(x);
    return at;
}

/* The KV cache cells held after each step, mean and max, as a share of
 * the cache the slots hold. */
static void kv_occupancy(const ib_gen_serve_result *r, ib_gen_serve_point *pt)
{
    double sum = 0, max = 0, cache = (double)r->slots * r->ctx_per_slot;
    for (size_t i = 0; i < r->n_steps; i++) {
        sum += r->steps[i].kv_cells;
        max = fmax(max, r->steps[i].kv_cells);
    }
    pt->kv_mean_share = r->n_steps > 0 && cache > 0 ? sum / (double)r->n_steps / cache : NAN;
    pt->kv_max_share = r->n_steps > 0 && cache > 0 ? max / cache : NAN;
}

/* The fewest requests that can meet the bound: all within the target,
 * p^n <= 1 - c (459 for p99 at 99%). */
static double fewest_to_meet(const ib_gen_serve_rates_config *rc)
{
    return ceil(log1p(-rc->confidence) / log(rc->percentile));
}

static void point_of(const judge *j, const ib_gen_serve_result *r, bool ended_early, ib_gen_serve_point *pt)
{
    const ib_gen_serve_config *c = j->cfg;
    double q = j->rc->percentile;
    *pt = (ib_gen_serve_point){ .offered_rate = r->offered_rate,
                                .achieved_rate = r->achieved_rate,
                                .pace = r->pace,
                                .ttft_growth = r->ttft_growth,
                                .saturated = r->saturated,
                                .scheduled = (int64_t)r->n_requests,
                                .completed = (int64_t)r->n_completed,
                                .ttft_p50_ms = p_or_nan(&r->ttft, r->ttft.p50),
                                .ttft_p99_ms = p_or_nan(&r->ttft, r->ttft.p99),
                                .tpot_p50_ms = p_or_nan(&r->tpot, r->tpot.p50),
                                .tpot_p99_ms = p_or_nan(&r->tpot, r->tpot.p99),
                                .queue_p99_ms = p_or_nan(&r->queue, r->queue.p99),
                                .ended_early = ended_early,
                                .goodput_rate = r->goodput_rate,
                                .good_share = r->good_share,
                                .output_tokens_per_s = r->output_tokens_per_s,
                                .total_tokens_per_s = r->total_tokens_per_s,
                                .partial = r->partial,
                                .energy = r->energy.device,
                                .client_lateness_p99_ms = NAN };
    for (size_t i = 0; i < r->n_requests; i++) pt->admitted += !isnan(r->requests[i].admitted_ms);
    int64_t n_ttft = 0, n_tpot = 0;
    pt->ttft_at_percentile_ms = figure_at(r, false, q, c->slo_ttft_ms, &pt->ttft_over, &n_ttft);
    pt->tpot_at_percentile_ms = figure_at(r, true, q, c->slo_tpot_ms, &pt->tpot_over, &n_tpot);
    bool targets = c->slo_ttft_ms > 0 || c->slo_tpot_ms > 0;
    pt->too_few = targets && (double)pt->scheduled < fewest_to_meet(j->rc);
    pt->met = targets && !r->partial && !ended_early && pt->completed == pt->scheduled &&
              bound_met(j, c->slo_ttft_ms, n_ttft, pt->ttft_over) &&
              (n_tpot == 0 || bound_met(j, c->slo_tpot_ms, n_tpot, pt->tpot_over));
    kv_occupancy(r, pt);
}

/* ------------------------------------------------------------------------ */
/* Rates on one server                                                       */
/* ------------------------------------------------------------------------ */

typedef struct rates {
    const ib__gen_rate_server *srv;
    const ib_gen_serve_config *cfg;
    const ib_gen_serve_rates_config *rc;
    ib_gen_serve_rates_result *out;
} rates;

/* Serves one rate (ending it early when early and the bound gets out of
 * reach) into *run, and adds its point. */
static ib_status measure_rate(rates *s, double rate, bool early, ib_gen_serve_result *run, ib_error *err)
{
    ib_gen_serve_rates_result *out = s->out;
    IB_FAIL_IF(out->n_points == IB_GEN_SERVE_MAX_RATES, err, IB_ERR_INTERNAL, "more than %d rates",
               IB_GEN_SERVE_MAX_RATES);
    ib_gen_serve_config c = *s->cfg;
    c.rate = rate;
    judge j = { .cfg = &c, .rc = s->rc, .n = c.requests };
    ib__gen_serve_watch w = { watch_request, &j };
    ib_status st = s->srv->serve(s->srv->ctx, &c, early ? &w : NULL, run, err);
    if (!run->requests) return st; /* refused before the run: no point */
    ib_gen_serve_point *pt = &out->points[out->n_points++];
    point_of(&j, run, early && !reachable(&j), pt);
    if (s->srv->point) s->srv->point(s->srv->ctx, out->n_points - 1, pt);
    out->requests_served += pt->admitted;
    if (st != IB_OK) {
        out->partial = true;
        out->stop_status = st;
    }
    ib__gen_serve_rate_progress(s->rc, out, MAX_HALVINGS);
    return st;
}

/* The grid's steps per doubling: the fewest whose ratio is within the
 * precision asked. */
static int steps_per_doubling(double precision) { return (int)ceil(log(2.0) / log1p(precision)); }

static double grid_rate(double first, int m, int k) { return first * pow(2.0, (double)k / m); }

/* Keeps run as the answer's (out->at, its point index) in place of the
 * one kept before; frees run otherwise. */
static void keep_run(ib_gen_serve_rates_result *out, ib_gen_serve_result *run, bool keep)
{
    if (!keep) {
        ib_gen_serve_result_free(run);
        return;
    }
    ib_gen_serve_result_free(&out->at);
    out->at = *run;
    out->at_point = (int32_t)out->n_points - 1;
    memset(run, 0, sizeof *run);
}

/* The grid indexes measured, by point. */
typedef struct bracket {
    int k[IB_GEN_SERVE_MAX_RATES];
    bool has_lo, has_hi;
    int lo, hi; /* the highest index met, the lowest failed above it */
} bracket;

/* Where the search goes after a rate: up by a doubling until one fails,
 * down by one while none has met (at most MAX_HALVINGS times), then the
 * middle of the bracket until its ends are neighbours: of two middles the
 * upper, since a failure ends early and a pass runs in full (as many
 * rates at worst either way; scripts/search_cost_seeds.sh measures what
 * it saves). false: done, also when a rate met while saturated: the
 * engine serves the requests slower than they come, its queue growing,
 * yet within the targets over this many requests (generous targets); past
 * the engine's capacity the rate found says nothing more (a longer run
 * would fail it). */
static bool next_index(const bracket *b, const ib_gen_serve_point *last, int m, int *halvings, int *k)
{
    if (!b->has_lo) {
        *k = b->hi - m;
        return (*halvings)++ < MAX_HALVINGS;
    }
    if (!b->has_hi) {
        *k = b->lo + m;
        return !(last->met && last->saturated);
    }
    *k = b->lo + (b->hi - b->lo + 1) / 2;
    return b->hi - b->lo > 1;
}

/* The sweep the search stands for: every grid rate from the lowest it
 * measured to the highest, each in full (a sweep of the same range at the
 * same precision; one that stopped at its first failure would be a
 * search of its own, and needs to know where to start). */
static void sweep_cost(const bracket *b, const ib_gen_serve_config *cfg, ib_gen_serve_rates_result *out)
{
    int lo = b->k[0], hi = b->k[0];
    for (size_t i = 0; i < out->n_points; i++) {
        lo = b->k[i] < lo ? b->k[i] : lo;
        hi = b->k[i] > hi ? b->k[i] : hi;
    }
    out->sweep_rates = hi - lo + 1;
    out->sweep_requests = out->sweep_rates * cfg->requests;
}

static ib_status search(rates *s, double first, ib_error *err)
{
    ib_gen_serve_rates_result *out = s->out;
    int m = steps_per_doubling(s->rc->precision), k = 0, halvings = 0;
    out->grid_step = pow(2.0, 1.0 / m) - 1;
    bracket b;
    memset(&b, 0, sizeof b);
    ib_status st = IB_OK;
    do {
        if (out->n_points == IB_GEN_SERVE_MAX_RATES) break;
        b.k[out->n_points] = k;
        ib_gen_serve_result run;
        st = measure_rate(s, grid_rate(first, m, k), true, &run, err);
        bool met = out->n_points > 0 && out->points[out->n_points - 1].met;
        if (met && (!b.has_lo || k > b.lo)) b.lo = k, b.has_lo = true;
        if (!met && (!b.has_hi || k < b.hi)) b.hi = k, b.has_hi = true;
        keep_run(out, &run, met && b.lo == k);
    } while (st == IB_OK && next_index(&b, &out->points[out->n_points - 1], m, &halvings, &k));
    for (size_t i = 0; i < out->n_points; i++) {
        if (b.has_lo && b.k[i] == b.lo) out->found = (int32_t)i;
        if (b.has_hi && b.has_lo && b.k[i] == b.hi) out->last_failed = (int32_t)i;
    }
    sweep_cost(&b, s->cfg, out);
    IB_TRY(st);
    const ib_gen_serve_point *low = &out->points[out->n_points - 1];
    IB_FAIL_IF(out->found < 0, err, IB_ERR_NOT_MET,
               "no rate met the targets: at the lowest, %.4g requests/s, TTFT p%g %.4g ms, TPOT p%g %.4g ms",
               low->offered_rate, 100 * s->rc->percentile, low->ttft_at_percentile_ms,
               100 * s->rc->percentile, low->tpot_at_percentile_ms);
    return IB_OK;
}

/* The saturation point: the lowest rate saturated (ib_gen_serve_result).
 * The knee: the highest rate below it whose TTFT p99 is within
 * IB_GEN_SERVE_KNEE_FACTOR of the curve's lowest TTFT p99 (its floor).
 * Rates cut short do not count. */
static void knee_and_saturation(ib_gen_serve_rates_result *out)
{
    double floor = INFINITY;
    for (size_t i = 0; i < out->n_points; i++) {
        const ib_gen_serve_point *p = &out->points[i];
        if (p->partial) continue;
        floor = fmin(floor, p->ttft_p99_ms);
        if (p->saturated &&
            (out->saturation < 0 || p->offered_rate < out->points[out->saturation].offered_rate))
            out->saturation = (int32_t)i;
    }
    double below = out->saturation < 0 ? INFINITY : out->points[out->saturation].offered_rate;
    for (size_t i = 0; i < out->n_points; i++) {
        const ib_gen_serve_point *p = &out->points[i];
        if (p->partial || !(p->offered_rate < below) || !(p->ttft_p99_ms <= IB_GEN_SERVE_KNEE_FACTOR * floor))
            continue;
        if (out->knee < 0 || p->offered_rate > out->points[out->knee].offered_rate) out->knee = (int32_t)i;
    }
}

static ib_status curve(rates *s, ib_error *err)
{
    ib_gen_serve_rates_result *out = s->out;
    ib_gen_serve_result *runs = calloc(s->rc->n_rates, sizeof *runs);
    IB_FAIL_IF(!runs, err, IB_ERR_NO_MEMORY, "out of memory");
    ib_status st = IB_OK;
    for (size_t i = 0; i < s->rc->n_rates && st == IB_OK; i++)
        st = measure_rate(s, s->rc->rates[i], false, &runs[i], err);
    knee_and_saturation(out);
    int32_t at = out->knee >= 0 ? out->knee : (int32_t)out->n_points - 1;
    for (size_t i = 0; i < s->rc->n_rates; i++) {
        if ((int32_t)i != at) ib_gen_serve_result_free(&runs[i]);
        if ((int32_t)i == at && at >= 0) out->at = runs[i], out->at_point = at;
    }
    free(runs);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Settings, and the entry points                                            */
/* ------------------------------------------------------------------------ */

static ib_status validate(const ib_gen_serve_config *c, const ib_gen_serve_rates_config *rc, bool searching,
                          ib_error *err)
{
    IB_FAIL_IF(!c || !rc, err, IB_ERR_INVALID_ARG, "no configuration");
    IB_FAIL_IF(c->arrivals == IB_ARRIVALS_TRACE, err, IB_ERR_INVALID_ARG,
               "a trace gives its own arrivals: it is served at one rate, not searched or swept");
    IB_FAIL_IF(!(rc->percentile > 0 && rc->percentile < 1) || !(rc->confidence > 0 && rc->confidence < 1),
               err, IB_ERR_INVALID_ARG, "a percentile and a confidence are between 0 and 1");
    if (!searching) {
        IB_FAIL_IF(!rc->rates || rc->n_rates == 0 || rc->n_rates > IB_GEN_SERVE_MAX_RATES, err,
                   IB_ERR_INVALID_ARG, "a curve of 1 to %d rates", IB_GEN_SERVE_MAX_RATES);
        for (size_t i = 0; i < rc->n_rates; i++)
            IB_FAIL_IF(!(rc->rates[i] > 0) || !isfinite(rc->rates[i]), err, IB_ERR_INVALID_ARG,
                       "rate %g: a rate is above 0 requests/s", rc->rates[i]);
        return IB_OK;
    }
    IB_FAIL_IF(!(c->slo_ttft_ms > 0) && !(c->slo_tpot_ms > 0), err, IB_ERR_INVALID_ARG,
               "the search needs a TTFT or a TPOT target (or both) above 0 ms");
    IB_FAIL_IF(!(rc->precision > 0 && rc->precision < 1), err, IB_ERR_INVALID_ARG,
               "a search's precision is between 0 and 1 (0.05: 5%%)");
    IB_FAIL_IF(!(rc->first_rate >= 0) || !isfinite(rc->first_rate), err, IB_ERR_INVALID_ARG,
               "a first rate of 0 (from the warm-up) or above");
    double fewest = fewest_to_meet(rc);
    IB_FAIL_IF((double)c->requests < fewest, err, IB_ERR_INVALID_ARG,
               "%lld requests a rate can never meet a p%g target at confidence %g%%: %.0f at least",
               (long long)c->requests, 100 * rc->percentile, 100 * rc->confidence, fewest);
    return IB_OK;
}

ib_status ib__gen_serve_rates_begin(const ib_gen_serve_config *cfg, const ib_gen_serve_rates_config *rc,
                                    bool searching, ib_gen_serve_rates_result *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    out->searched = searching;
    out->found = out->last_failed = out->knee = out->saturation = out->at_point = -1;
    IB_TRY(validate(cfg, rc, searching, err));
    if (cfg->slo_ttft_ms > 0 || cfg->slo_tpot_ms > 0) out->fewest_to_meet = (int64_t)fewest_to_meet(rc);
    return IB_OK;
}

ib_gen_serve_config ib__gen_serve_rates_first(const ib_gen_serve_config *cfg,
                                              const ib_gen_serve_rates_config *rc, bool searching)
{
    ib_gen_serve_config first = *cfg;
    first.rate = searching ? (rc->first_rate > 0 ? rc->first_rate : 1) : rc->rates[0];
    return first;
}

ib_status ib__gen_serve_rates_drive(const ib__gen_rate_server *srv, const ib_gen_serve_config *cfg,
                                    const ib_gen_serve_rates_config *rc, double warm_rate_per_s,
                                    ib_gen_serve_rates_result *out, ib_error *err)
{
    rates s = { .srv = srv, .cfg = cfg, .rc = rc, .out = out };
    if (!out->searched) return curve(&s, err);
    double start = rc->first_rate > 0 ? rc->first_rate : warm_rate_per_s;
    IB_FAIL_IF(!(start > 0 && isfinite(start)), err, IB_ERR_INVALID_ARG,
               "a search starts at a first rate or at the rate the warm-up "
               "served: give one, or warm-up requests");
    return search(&s, start, err);
}

/* The engine as the rates' server. */
static ib_status engine_serve(void *ctx, const ib_gen_serve_config *cfg, const ib__gen_serve_watch *watch,
                              ib_gen_serve_result *run, ib_error *err)
{
    return ib__gen_engine_serve(ctx, cfg, watch, run, err);
}

static ib_status run_rates(ib__gen *g, const ib_gen_serve_config *cfg, const ib_gen_serve_rates_config *rc,
                           bool searching, ib_gen_serve_rates_result *out, ib_error *err)
{
    IB_TRY(ib__gen_serve_rates_begin(cfg, rc, searching, out, err));
    ib_gen_serve_config first = ib__gen_serve_rates_first(cfg, rc, searching);
    ib__gen_engine *e = NULL;
    IB_TRY(ib__gen_engine_open(g, &first, &e, err));
    ib__gen_rate_server srv = { .serve = engine_serve, .ctx = e };
    ib_status st = ib__gen_serve_rates_drive(&srv, cfg, rc, ib__gen_engine_warm_rate(e), out, err);
    /* The machine over every rate, stated with the run at the answer. */
    if (out->at.requests) out->at.warnings |= ib__gen_engine_watched(e, &out->at.env);
    ib__gen_engine_close(e);
    return st;
}

ib_status ib_search_gen_serve(ib_gen *g, const ib_gen_serve_config *cfg, const ib_gen_serve_rates_config *rc,
                              ib_gen_serve_rates_result *out, ib_error *err)
{
    return run_rates(g, cfg, rc, true, out, err);
}

ib_status ib_measure_gen_serve_curve(ib_gen *g, const ib_gen_serve_config *cfg,
                                     const ib_gen_serve_rates_config *rc, ib_gen_serve_rates_result *out,
                                     ib_error *err)
{
    return run_rates(g, cfg, rc, false, out, err);
}
