/* A generative model served at several rates (docs/serve-generative.md,
 * "The answer"): the SLO search's rates, its answer and its cost against
 * a sweep, or the curve with its knee and saturation point; text and
 * JSON. The whole run at the answer's rate (or the knee's) follows, in
 * gen_serve_report.c's words. */
#include "report/gen_serve_curve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

static const char *cell(char buf[32], double v) { return isnan(v) ? "-" : ib__fmt_plain4(buf, v); }

const char *ib__gen_serve_point_energy(char buf[32], const ib_gen_serve_point *p)
{
    const ib_energy *e = &p->energy;
    if (e->source == IB_ENERGY_NONE) return "-";
    snprintf(buf, 32, "%.4g +-%.2g%%", e->joules_per_item, 100 * e->bound);
    return buf;
}

const ib_gen_serve_point *ib__gen_serve_first_without_energy(const ib_gen_serve_rates_result *r)
{
    for (size_t i = 0; i < r->n_points; i++)
        if (r->points[i].energy.source == IB_ENERGY_NONE) return &r->points[i];
    return NULL;
}

const char *ib_gen_serve_point_verdict(char buf[IB_GEN_SERVE_VERDICT_LEN], const ib_gen_serve_point *p,
                                       const ib_gen_serve_config *c)
{
    bool targets = c->slo_ttft_ms > 0 || c->slo_tpot_ms > 0;
    if (p->partial) return "partial";
    if (!targets) return "";
    if (p->too_few) return "too few to judge";
    if (p->met) return "met";
    char served[48] = "", failed[32] = "";
    if (p->ended_early)
        snprintf(served, sizeof served, "%lld/%lld served; ", (long long)p->admitted,
                 (long long)p->scheduled);
    if (p->failed > 0) snprintf(failed, sizeof failed, ", %lld failed", (long long)p->failed);
    snprintf(buf, IB_GEN_SERVE_VERDICT_LEN, "failed%s (%s%lld TTFT and %lld TPOT over%s)",
             p->ended_early ? " early" : "", served, (long long)p->ttft_over, (long long)p->tpot_over,
             failed);
    return buf;
}

/* Over HTTP: a rate's client lateness p99 (marked when past its bound),
 * failures and cuts, as three more columns ("" in process). */
static const char *client_cells(char buf[64], const ib_gen_serve_point *p, bool over_http)
{
    char late[32];
    if (!over_http) return "";
    snprintf(buf, 64, " %9s%s %6lld %6lld", cell(late, p->client_lateness_p99_ms), p->client_late ? "!" : " ",
             (long long)p->failed, (long long)p->cut);
    return buf;
}

static void text_rows(ib__sbuf *b, const ib_gen_serve_rates_result *r, const ib_gen_serve_config *c,
                      bool over_http)
{
    char a0[32];
    ib__sbuf_printf(b, "%9s %9s %9s %9s %9s %9s %9s %9s %8s %9s %11s %14s%s %s\n", "offered", "achieved",
                    "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "queue p99", "goodput", "good",
                    "out tok/s", "KV mean/max", "J/token", over_http ? "  late p99  failed    cut" : "", "");
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_gen_serve_point *p = &r->points[i];
        char a[32], b1[32], c1[32], d[32], e[32], f[32], g[32], h[32], k[32], o[32],
            v[IB_GEN_SERVE_VERDICT_LEN], kv[32], j[32], cl[64];
        snprintf(kv, sizeof kv, "%.0f%%/%.0f%%", 100 * p->kv_mean_share, 100 * p->kv_max_share);
        snprintf(k, sizeof k, "%.4g%%", 100 * p->good_share);
        ib__sbuf_printf(b, "%9s %9s %9s %9s %9s %9s %9s %9s %8s %9s %11s %14s%s %s\n",
                        cell(a, p->offered_rate), cell(b1, p->achieved_rate), cell(c1, p->ttft_p50_ms),
                        cell(d, p->ttft_p99_ms), cell(e, p->tpot_p50_ms), cell(f, p->tpot_p99_ms),
                        cell(g, p->queue_p99_ms), cell(h, p->goodput_rate), isnan(p->good_share) ? "-" : k,
                        cell(o, p->output_tokens_per_s), isnan(p->kv_mean_share) ? "-" : kv,
                        ib__gen_serve_point_energy(j, p), client_cells(cl, p, over_http),
                        ib_gen_serve_point_verdict(v, p, c));
    }
    ib__sbuf_printf(b,
                    "rates in requests/s, times in ms from each request's scheduled arrival; KV: the cells "
                    "held after each step, of the slots' cache; J/token: the device's energy per output "
                    "token over the rate's run, +- its bound%s\n",
                    over_http ? "; over HTTP, late p99: the client's lateness (sent - scheduled) over the "
                                "requests sent (queue: over those completed), ! past its bound; failed: the "
                                "requests that failed; cut: those in flight when the rate ended early"
                              : "");
    if (r->n_points > 0 && r->points[0].too_few)
        ib__sbuf_printf(b,
                        "too few to judge: %lld requests a rate cannot meet the targets' percentile by the "
                        "bound even with none over (%lld at least: --requests)\n",
                        (long long)r->points[0].scheduled, (long long)r->fewest_to_meet);
    const ib_gen_serve_point *none = ib__gen_serve_first_without_energy(r);
    if (none)
        ib__sbuf_printf(b, "J/token -: no figure (at %s requests/s: %s)\n", cell(a0, none->offered_rate),
                        none->energy.note);
}

/* "TTFT p99 <= 500 ms and TPOT p99 <= 30 ms" */
static void targets_text(ib__sbuf *b, const ib_gen_serve_config *c, const ib_gen_serve_rates_config *rc)
{
    char pct[32];
    ib__fmt_percent(pct, rc->percentile);
    pct[strlen(pct) - 1] = '\0'; /* "99%" -> "p99" */
    if (c->slo_ttft_ms > 0) ib__sbuf_printf(b, "TTFT p%s <= %.4g ms", pct, c->slo_ttft_ms);
    if (c->slo_ttft_ms > 0 && c->slo_tpot_ms > 0) ib__sbuf_printf(b, " and ");
    if (c->slo_tpot_ms > 0) ib__sbuf_printf(b, "TPOT p%s <= %.4g ms", pct, c->slo_tpot_ms);
}

static void text_answer(ib__sbuf *b, const ib_gen_serve_rates_result *r, const ib_gen_serve_config *c,
                        const ib_gen_serve_rates_config *rc, bool over_http)
{
    char rate[32], fail[32], good[32], tok[32];
    ib__sbuf_printf(b,
                    "search: rates on a grid of %.3g%% steps; each judged by LoadGen's early-stopping bound "
                    "(confidence %.4g%%), ended as soon as it could no longer be met\n",
                    100 * r->grid_step, 100 * rc->confidence);
    ib__sbuf_printf(b,
                    "search cost: %lld requests served over %zu rates, against %lld for a sweep of the same "
                    "grid (%lld rates x %lld requests): %.3g%%\n",
                    (long long)r->requests_served, r->n_points, (long long)r->sweep_requests,
                    (long long)r->sweep_rates, (long long)c->requests,
                    100.0 * (double)r->requests_served / (double)r->sweep_requests);
    if (r->found < 0) {
        ib__sbuf_printf(b, "answer: no rate met ");
        targets_text(b, c, rc);
        ib__sbuf_printf(b, "\n");
        return;
    }
    const ib_gen_serve_point *p = &r->points[r->found];
    ib__sbuf_printf(b, "answer: %s requests/s meets ", ib__fmt_plain4(rate, p->offered_rate));
    targets_text(b, c, rc);
    if (r->last_failed >= 0)
        ib__sbuf_printf(b, "; %s requests/s failed",
                        ib__fmt_plain4(fail, r->points[r->last_failed].offered_rate));
    else
        ib__sbuf_printf(
            b,
            "; none failed: the %s was saturated there (its completions kept %.0f%% of the "
            "arrivals' pace, its last quarter's TTFT %.3gx its first's), its queue still within the "
            "targets over %lld requests (a longer run would pass them): the search stops at "
            "saturation",
            over_http ? "server" : "engine", 100 * p->pace, p->ttft_growth, (long long)c->requests);
    char energy[32];
    ib__sbuf_printf(
        b, "\nat %s requests/s: goodput %s requests/s (%.4g%%), %s output tokens/s, energy %s J/token\n",
        rate, cell(good, p->goodput_rate), 100 * p->good_share, cell(tok, p->output_tokens_per_s),
        ib__gen_serve_point_energy(energy, p));
}

static void text_curve(ib__sbuf *b, const ib_gen_serve_rates_result *r)
{
    char x[32], y[32];
    if (r->saturation >= 0) {
        const ib_gen_serve_point *s = &r->points[r->saturation];
        ib__sbuf_printf(b,
                        "saturation: %s requests/s (its completions kept %.0f%% of the arrivals' pace, "
                        "below %.0f%%, and its last quarter's TTFT was %.3gx its first's, past %.3gx: the "
                        "queue grows)\n",
                        ib__fmt_plain4(x, s->offered_rate), 100 * s->pace, 100 * IB_GEN_SERVE_SATURATED,
                        s->ttft_growth, IB_GEN_SERVE_TTFT_GROWTH);
    } else
        ib__sbuf_printf(b,
                        "saturation: none of these rates (none both kept less than %.0f%% of its arrivals' "
                        "pace and saw its last quarter's TTFT past %.3gx its first's)\n",
                        100 * IB_GEN_SERVE_SATURATED, IB_GEN_SERVE_TTFT_GROWTH);
    if (r->knee >= 0)
        ib__sbuf_printf(
            b,
            "knee: %s requests/s (the highest rate below saturation whose TTFT p99, %s ms, is within "
            "%.4gx the curve's lowest)\n",
            ib__fmt_plain4(x, r->points[r->knee].offered_rate),
            ib__fmt_plain4(y, r->points[r->knee].ttft_p99_ms), IB_GEN_SERVE_KNEE_FACTOR);
    else
        ib__sbuf_printf(b, "knee: none (every rate saturated)\n");
}

ib_gen_serve_config ib__gen_serve_rates_at_config(const ib_gen_serve_rates_result *r,
                                                  const ib_gen_serve_config *c)
{
    ib_gen_serve_config at = *c;
    at.rate = r->points[r->at_point].offered_rate;
    return at;
}

const char *ib__gen_serve_rates_at_whose(const ib_gen_serve_rates_result *r)
{
    return r->searched ? "the answer's" : r->knee >= 0 ? "the knee's" : "the curve's last";
}

const ib_endpoint_result *ib__gen_serve_rates_endpoint(const ib_result *res)
{
    return res->gen_serve_rates ? res->endpoint : NULL;
}

const ib_endpoint_result *ib__gen_serve_rates_at_endpoint(const ib_result *res)
{
    const ib_endpoint_result *ep = ib__gen_serve_rates_endpoint(res);
    return ep && ep->n_requests > 0 && res->gen_serve_rates->at.n_requests > 0 ? ep : NULL;
}

/* Over HTTP: the rates whose client was late, the failures and the cuts
 * over every rate. */
static void client_summary(ib__sbuf *b, const ib_gen_serve_rates_result *r, const ib_endpoint_result *ep)
{
    int64_t failed = 0, cut = 0;
    size_t late = 0;
    ib__sbuf_printf(b, "over HTTP: %s, model %s", ep->url, ep->model);
    for (size_t i = 0; i < r->n_points; i++) {
        char rate[32];
        failed += r->points[i].failed;
        cut += r->points[i].cut;
        if (!r->points[i].client_late) continue;
        ib__sbuf_printf(b, "%s%s", late++ ? ", " : "; CLIENT LATE at ",
                        ib__fmt_plain4(rate, r->points[i].offered_rate));
    }
    if (late)
        ib__sbuf_printf(b, " requests/s (lateness p99 past its bound: those rates' TTFTs carry the client's "
                           "delay)");
    ib__sbuf_printf(b,
                    "; %lld requests failed over the rates (by cause: the run at the answer's), %lld cut "
                    "when a rate ended early (in flight, aborted: not failures)\n",
                    (long long)failed, (long long)cut);
}

void ib__gen_serve_rates_summary(ib__sbuf *b, const ib_gen_serve_rates_result *r,
                                 const ib_gen_serve_config *c, const ib_gen_serve_rates_config *rc,
                                 const ib_endpoint_result *ep)
{
    if (r->searched)
        text_answer(b, r, c, rc, ep != NULL);
    else
        text_curve(b, r);
    if (ep) client_summary(b, r, ep);
    if (r->partial)
        ib__sbuf_printf(b, "PARTIAL: stopped early (%s); the rates above are what was measured\n",
                        ib_status_str(r->stop_status));
}

static char *rates_text(const ib_result *res)
{
    const ib_gen_serve_rates_result *r = res->gen_serve_rates;
    const ib_gen_serve_config *c = res->gen_serve_cfg;
    const ib_endpoint_result *ep = ib__gen_serve_rates_endpoint(res);
    ib__sbuf b = { 0 };
    if (r->at.n_requests > 0) {
        ib_gen_serve_config at_cfg = ib__gen_serve_rates_at_config(r, c);
        char *at = ib__gen_serve_report_text(&r->at, &at_cfg, ib__gen_serve_rates_at_endpoint(res));
        char rate[32];
        ib__sbuf_printf(&b, "%s\nthe run above: %s, at %s requests/s\n\n", at ? at : "",
                        ib__gen_serve_rates_at_whose(r),
                        ib__fmt_plain4(rate, r->points[r->at_point].offered_rate));
        free(at);
    }
    ib__sbuf_printf(&b, "%s over %zu rates:\n", r->searched ? "the SLO search" : "the curve", r->n_points);
    text_rows(&b, r, c, ep != NULL);
    ib__gen_serve_rates_summary(&b, r, c, res->gen_serve_rates_cfg, ep);
    return ib__sbuf_finish(&b);
}

char *ib__gen_serve_rates_report_text(const ib_result *res)
{
    if (!res->gen_serve_rates)
        return ib__gen_serve_report_text(res->gen_serve, res->gen_serve_cfg, res->endpoint);
    return rates_text(res);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

static cJSON *json_point(const ib_gen_serve_point *p, bool over_http)
{
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "offered_rate", p->offered_rate);
    ib__json_add_number(o, "achieved_rate", p->achieved_rate);
    ib__json_add_number(o, "pace", p->pace);
    ib__json_add_number(o, "ttft_growth", p->ttft_growth);
    cJSON_AddNumberToObject(o, "scheduled", (double)p->scheduled);
    cJSON_AddNumberToObject(o, "admitted", (double)p->admitted);
    cJSON_AddNumberToObject(o, "completed", (double)p->completed);
    ib__json_add_number(o, "ttft_p50_ms", p->ttft_p50_ms);
    ib__json_add_number(o, "ttft_p99_ms", p->ttft_p99_ms);
    ib__json_add_number(o, "tpot_p50_ms", p->tpot_p50_ms);
    ib__json_add_number(o, "tpot_p99_ms", p->tpot_p99_ms);
    ib__json_add_number(o, "queue_p99_ms", p->queue_p99_ms);
    ib__json_add_number(o, "ttft_at_percentile_ms", p->ttft_at_percentile_ms);
    ib__json_add_number(o, "tpot_at_percentile_ms", p->tpot_at_percentile_ms);
    cJSON_AddNumberToObject(o, "ttft_over", (double)p->ttft_over);
    cJSON_AddNumberToObject(o, "tpot_over", (double)p->tpot_over);
    cJSON_AddBoolToObject(o, "met", p->met);
    cJSON_AddBoolToObject(o, "too_few", p->too_few);
    cJSON_AddBoolToObject(o, "ended_early", p->ended_early);
    ib__json_add_number(o, "goodput_rate", p->goodput_rate);
    ib__json_add_number(o, "good_share", p->good_share);
    ib__json_add_number(o, "output_tokens_per_s", p->output_tokens_per_s);
    ib__json_add_number(o, "total_tokens_per_s", p->total_tokens_per_s);
    ib__json_add_number(o, "kv_mean_share", p->kv_mean_share);
    ib__json_add_number(o, "kv_max_share", p->kv_max_share);
    cJSON_AddBoolToObject(o, "partial", p->partial);
    cJSON_AddItemToObject(o, "energy", ib__json_energy(&p->energy));
    if (!over_http) return o;
    ib__json_add_number(o, "client_lateness_p99_ms", p->client_lateness_p99_ms);
    cJSON_AddBoolToObject(o, "client_late", p->client_late);
    cJSON_AddNumberToObject(o, "failed", (double)p->failed);
    cJSON_AddNumberToObject(o, "cut", (double)p->cut);
    return o;
}

/* A point's offered rate, or null for -1. */
static void add_rate_at(cJSON *o, const char *key, const ib_gen_serve_rates_result *r, int32_t i)
{
    ib__json_add_number(o, key, i >= 0 ? r->points[i].offered_rate : NAN);
}

static cJSON *json_search(const ib_gen_serve_rates_result *r, const ib_gen_serve_config *c)
{
    cJSON *o = cJSON_CreateObject();
    add_rate_at(o, "rate_found", r, r->found);
    add_rate_at(o, "last_failed_rate", r, r->last_failed);
    ib__json_add_number(o, "grid_step", r->grid_step);
    cJSON_AddNumberToObject(o, "requests_per_rate", (double)c->requests);
    cJSON_AddNumberToObject(o, "requests_served", (double)r->requests_served);
    cJSON_AddNumberToObject(o, "sweep_rates", (double)r->sweep_rates);
    cJSON_AddNumberToObject(o, "sweep_requests", (double)r->sweep_requests);
    return o;
}

static cJSON *json_curve(const ib_gen_serve_rates_result *r)
{
    cJSON *o = cJSON_CreateObject();
    add_rate_at(o, "knee_rate", r, r->knee);
    add_rate_at(o, "saturation_rate", r, r->saturation);
    cJSON_AddNumberToObject(o, "knee_factor", IB_GEN_SERVE_KNEE_FACTOR);
    cJSON_AddNumberToObject(o, "saturated_below", IB_GEN_SERVE_SATURATED);
    cJSON_AddNumberToObject(o, "saturated_ttft_growth", IB_GEN_SERVE_TTFT_GROWTH);
    return o;
}

static char *rates_json(const ib_result *res)
{
    const ib_gen_serve_rates_result *r = res->gen_serve_rates;
    const ib_gen_serve_config *c = res->gen_serve_cfg;
    const ib_gen_serve_rates_config *rc = res->gen_serve_rates_cfg;
    const ib_endpoint_result *ep = ib__gen_serve_rates_endpoint(res);
    cJSON *root = ib__json_document("inferbench.serve_generative_rates/1", r->partial, r->stop_status, NULL);
    cJSON_AddStringToObject(root, "kind", r->searched ? "search" : "curve");
    ib__json_add_number(root, "slo_ttft_ms", c->slo_ttft_ms > 0 ? c->slo_ttft_ms : NAN);
    cJSON_AddNumberToObject(root, "fewest_to_meet", (double)r->fewest_to_meet);
    ib__json_add_number(root, "slo_tpot_ms", c->slo_tpot_ms > 0 ? c->slo_tpot_ms : NAN);
    cJSON_AddNumberToObject(root, "percentile", rc->percentile);
    cJSON_AddNumberToObject(root, "confidence", rc->confidence);
    cJSON *pts = cJSON_AddArrayToObject(root, "points");
    for (size_t i = 0; i < r->n_points; i++) cJSON_AddItemToArray(pts, json_point(&r->points[i], ep != NULL));
    cJSON_AddItemToObject(root, r->searched ? "search" : "curve",
                          r->searched ? json_search(r, c) : json_curve(r));
    if (ep) { /* over HTTP: where (the run at the answer holds its whole block) */
        cJSON *o = cJSON_AddObjectToObject(root, "endpoint");
        cJSON_AddStringToObject(o, "url", ep->url);
        cJSON_AddStringToObject(o, "model", ep->model);
    }
    if (ep) { /* over HTTP: where (the run at the answer holds its whole block) */
        cJSON *o = cJSON_AddObjectToObject(root, "endpoint");
        cJSON_AddStringToObject(o, "url", ep->url);
        cJSON_AddStringToObject(o, "model", ep->model);
    }
    add_rate_at(root, "at_rate", r, r->at_point);
    /* The run at the answer: its own document, whole. */
    ib_gen_serve_config at_cfg = r->at.n_requests > 0 ? ib__gen_serve_rates_at_config(r, c) : *c;
    char *at = r->at.n_requests > 0
                   ? ib__gen_serve_report_json(&r->at, &at_cfg, ib__gen_serve_rates_at_endpoint(res))
                   : NULL;
    cJSON *doc = at ? cJSON_Parse(at) : NULL;
    free(at);
    cJSON_AddItemToObject(root, "at", doc ? doc : cJSON_CreateNull());
    return ib__json_finish(root);
}

char *ib__gen_serve_rates_report_json(const ib_result *res)
{
    if (!res->gen_serve_rates)
        return ib__gen_serve_report_json(res->gen_serve, res->gen_serve_cfg, res->endpoint);
    return rates_json(res);
}
