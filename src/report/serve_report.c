/* The serve report: one row per offered rate (latency percentiles of the
 * whole request and its parts), the answer to the target; and the same as
 * JSON (schema inferbench.serve/2, docs/serve.md). */
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *copies_text(ib_serve_copies c)
{
    switch (c) {
    case IB_SERVE_COPIES_NONE: return "none: the model runs on the host, compute timed by the host clock";
    case IB_SERVE_COPIES_APART: return "timed apart (copy-in, compute, copy-out by device marks)";
    case IB_SERVE_COPIES_INSIDE: return "inside compute (the backend copies within its run)";
    }
    return "?";
}

const char *ib__serve_copies_name(ib_serve_copies c)
{
    return c == IB_SERVE_COPIES_APART ? "apart" : c == IB_SERVE_COPIES_INSIDE ? "inside_compute" : "none";
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

/* After the service time: the host-wait check of warm-up, where made. */
static void text_host_wait(ib__sbuf *b, const ib_serve_result *r)
{
    if (!isfinite(r->warmup_host_wait_ms)) return;
    char h[32], w[32];
    ib__sbuf_printf(b, "; launch held %s", ib__fmt_ms(h, r->warmup_held_ms));
    if (r->warmup_host_wait_ms > 0)
        ib__sbuf_printf(b, ", the GPU waited for the host %s a run (%.1f%%)",
                        ib__fmt_ms(w, r->warmup_host_wait_ms),
                        100 * r->warmup_host_wait_ms / r->warmup_held_ms);
    else
        ib__sbuf_printf(b, ", the GPU did not wait for the host");
}

static void text_header(ib__sbuf *b, const ib_serve_result *r, const ib_serve_config *cfg,
                        const ib_workload_info *info)
{
    char t[32];
    ib__sbuf_printf(b, "model: %s\ndevice: %s\n", info->model,
                    info->device == IB_DEVICE_CUDA ? "cuda" : "cpu");
    ib__sbuf_printf(b, "machine: ");
    ib__text_env(b, &r->env);
    ib__sbuf_printf(b, "\n");
    ib__sbuf_printf(b, "requests: batch %lld each; ", (long long)cfg->request_batch);
    if (cfg->concurrency > 0)
        ib__sbuf_printf(b,
                        "closed loop, %lld outstanding (hides queueing: a request is issued only "
                        "when one completes)\n",
                        (long long)cfg->concurrency);
    else
        ib__sbuf_printf(b, "open loop, %s arrivals, latency from the scheduled arrival\n",
                        cfg->arrivals == IB_ARRIVALS_POISSON    ? "Poisson"
                        : cfg->arrivals == IB_ARRIVALS_CONSTANT ? "constant"
                                                                : "file");
    ib__sbuf_printf(b, "instances: %zu%s%s\n", r->instances,
                    r->instances > 1 ? " (sessions serving one queue, a host thread each)" : "",
                    !cfg->instances_max      ? ""
                    : cfg->instances_ran_out ? "; the most that fit in memory: the next ran out"
                                             : "; --instances max stopped at its limit, not at memory");
    if (cfg->max_batch > 1)
        ib__sbuf_printf(b, "dynamic batching: up to %lld requests a run, waiting at most %g us\n",
                        (long long)cfg->max_batch, cfg->max_delay_us);
    ib__sbuf_printf(b, "copies: %s\nservice time in warm-up: median %s", copies_text(r->copies),
                    ib__fmt_ms(t, r->service_ms));
    text_host_wait(b, r);
    ib__sbuf_printf(b, "\n\n");
}

static void text_row(ib__sbuf *b, const ib_serve_point *p, const ib_serve_config *cfg)
{
    char o[32], a[32], p50[32], p90[32], p99[32], q99[32], w99[32], c50[32];
    ib__sbuf_printf(b, "%10s %10s %7lld %10s %10s %10s %10s %10s %10s  %s%s\n",
                    ib__fmt_rate(o, p->offered_rate), ib__fmt_rate(a, p->achieved_rate), (long long)p->n,
                    ib__fmt_ms(p50, p->total.p50), ib__fmt_ms(p90, p->total.p90),
                    ib__fmt_ms(p99, p->total.p99), ib__fmt_ms(q99, p->queue.p99),
                    ib__fmt_ms(w99, p->wakeup.p99), ib__fmt_ms(c50, p->compute.p50),
                    cfg->slo_ms > 0 ? (p->met ? "met" : "not met") : "-", p->partial ? " (partial)" : "");
}

static void text_batches(ib__sbuf *b, const ib_serve_point *p)
{
    ib__sbuf_printf(b, "  batches:");
    for (int k = 1; k <= IB_SERVE_MAX_BATCH; k++)
        if (p->batch_hist[k]) ib__sbuf_printf(b, " %d x%lld", k, (long long)p->batch_hist[k]);
    ib__sbuf_printf(b, "\n");
}

/* Runs after a batch change against runs at an unchanged batch: a
 * runtime that selects its kernels again on every new shape makes each
 * change cost that, and dynamic batching changes batch all the time. */
static void text_switches(ib__sbuf *b, const ib_serve_point *p)
{
    if (p->switch_runs == 0) return;
    char c50[32], u50[32];
    ib__sbuf_printf(b, "  batch changes: %lld runs after one, compute p50 %s (%s at an unchanged batch)",
                    (long long)p->switch_runs, ib__fmt_ms(c50, p->switch_compute_p50_ms),
                    ib__fmt_ms(u50, p->unchanged_compute_p50_ms));
    if (p->switch_compute_p50_ms > 2 * p->unchanged_compute_p50_ms + 1)
        ib__sbuf_printf(b, ": the runtime selects its kernels again when the shape changes (docs/serve.md)");
    ib__sbuf_printf(b, "\n");
}

/* What explains the rate's compute against warm-up's service time: the
 * figures the rule weighed and its verdict (docs/serve.md); as in warm-up,
 * the verdict alone (nothing to explain), and the SM clock named only on
 * a GPU (the CPU has none to sample: a clause on every rate). */
static void text_explained(ib__sbuf *b, const ib_serve_point *p, double service_ms, bool gpu)
{
    const ib_serve_explanation *e = &p->explained;
    if (e->cause == IB_SERVE_CAUSE_NONE) return;
    char c[32], w[32], k[32];
    ib__sbuf_printf(b, "  compute %+.0f%% against warm-up's service time (%s): ",
                    ib__signed_shown(100 * e->excess, 0), ib__fmt_ms(c, service_ms));
    if (e->cause == IB_SERVE_CAUSE_AS_WARM) {
        ib__sbuf_printf(b, "as in warm-up\n");
        return;
    }
    if (isfinite(e->clock_ms))
        ib__sbuf_printf(b, "SM clock %.0f MHz under load, %.0f MHz in warm-up (accounts for %s); ",
                        e->load_sm_clock_mhz, e->warmup_sm_clock_mhz, ib__fmt_ms(k, e->clock_ms));
    else if (gpu)
        ib__sbuf_printf(b, "SM clock not sampled; ");
    ib__sbuf_printf(b, "wake-up p50 %s; ", ib__fmt_ms(w, e->wakeup_ms));
    switch (e->cause) {
    case IB_SERVE_CAUSE_CLOCK:
        ib__sbuf_printf(b, "explained by the SM clock: a GPU idle between requests clocks down\n");
        break;
    case IB_SERVE_CAUSE_WAKEUP:
        ib__sbuf_printf(b, "explained by the wake-up: a thread that sleeps between requests wakes "
                           "slowly, and so do its run's launches\n");
        break;
    case IB_SERVE_CAUSE_BOTH: ib__sbuf_printf(b, "explained by the SM clock and the wake-up, each\n"); break;
    case IB_SERVE_CAUSE_HOST:
        ib__sbuf_printf(b,
                        "neither accounts for half of it, and the run is host-bound (the GPU waited for "
                        "the host %.0f%% of a run in warm-up): its compute is the host's launching, slower "
                        "from a host idle between requests; --cuda-graph replays it from one launch\n",
                        100 * e->host_wait_share);
        break;
    default: ib__sbuf_printf(b, "neither accounts for half of it\n"); break;
    }
}

/* With the copies timed apart: a rate's copy parts, under its row. */
static void text_copies(ib__sbuf *b, const ib_serve_point *p)
{
    char i50[32], i99[32], o50[32], o99[32];
    ib__sbuf_printf(b, "  copies: in p50 %s p99 %s, out p50 %s p99 %s\n", ib__fmt_ms(i50, p->h2d.p50),
                    ib__fmt_ms(i99, p->h2d.p99), ib__fmt_ms(o50, p->d2h.p50), ib__fmt_ms(o99, p->d2h.p99));
}

/* Whether every rate has no energy figure for one same reason (a CPU
 * workload, --no-energy): then it is said once under the table, not under
 * every rate (issue 28: a line on every rate is skipped, and then so is
 * the one that matters). */
static bool energy_absent_alike(const ib_serve_result *r)
{
    for (size_t i = 0; i < r->n_points; i++)
        if (r->points[i].energy.source != IB_ENERGY_NONE ||
            strcmp(r->points[i].energy.note, r->points[0].energy.note))
            return false;
    return r->n_points > 0;
}

static void text_answer(ib__sbuf *b, const ib_serve_result *r, const ib_serve_config *cfg)
{
    char t[32], rate[32];
    if (!(cfg->slo_ms > 0) || r->n_points == 0) return;
    double pct = cfg->slo_percentile * 100;
    if (r->found) {
        ib__sbuf_printf(b, "\nhighest rate meeting p%g <= %s (%g%% confidence): %s requests/s\n", pct,
                        ib__fmt_ms(t, cfg->slo_ms), cfg->confidence * 100,
                        ib__fmt_rate(rate, r->points[r->best].offered_rate));
        return;
    }
    size_t low = 0;
    for (size_t i = 1; i < r->n_points; i++)
        if (r->points[i].offered_rate < r->points[low].offered_rate) low = i;
    char at[32];
    ib__sbuf_printf(b, "\nno rate met p%g <= %s; at the lowest, %s requests/s, p%g was %s\n", pct,
                    ib__fmt_ms(t, cfg->slo_ms), ib__fmt_rate(rate, r->points[low].offered_rate), pct,
                    ib__fmt_ms(at, r->points[low].at_percentile_ms));
    if (r->points[low].compute_at_percentile_ms > cfg->slo_ms)
        ib__sbuf_printf(b, "the run time alone (p%g %s) exceeds the target: no lower rate can meet it\n", pct,
                        ib__fmt_ms(at, r->points[low].compute_at_percentile_ms));
}

char *ib_serve_report_text(const ib_serve_result *r, const ib_serve_config *cfg, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    text_header(&b, r, cfg, info);
    ib__sbuf_printf(&b, "%10s %10s %7s %10s %10s %10s %10s %10s %10s  %s\n", "offered/s", "achieved/s", "n",
                    "p50", "p90", "p99", "queue p99", "wake p99", "compute", "target");
    bool energy_once = energy_absent_alike(r);
    for (size_t i = 0; i < r->n_points; i++) {
        text_row(&b, &r->points[i], cfg);
        text_explained(&b, &r->points[i], r->service_ms, info->device == IB_DEVICE_CUDA);
        if (r->copies == IB_SERVE_COPIES_APART && r->points[i].n > 0) text_copies(&b, &r->points[i]);
        if (cfg->max_batch > 1) {
            text_batches(&b, &r->points[i]);
            text_switches(&b, &r->points[i]);
        }
        if (!energy_once) ib__text_energy(&b, "  energy", &r->points[i].energy);
    }
    if (energy_once) ib__text_energy(&b, "energy (every rate)", &r->points[0].energy);
    text_answer(&b, r, cfg);
    if (r->partial)
        ib__sbuf_printf(&b,
                        "PARTIAL: stopped early (%s); the rates above are what was measured, the last "
                        "one marked partial if it was cut short\n",
                        ib_status_str(r->stop_status));
    ib__text_footer(&b, false, IB_OK, &r->env, r->warnings); /* PARTIAL is said above, in serve's words */
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

cJSON *ib__serve_json_point(const ib_serve_point *p, bool copies_apart)
{
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "offered_rate", p->offered_rate);
    ib__json_add_number(o, "achieved_rate", p->achieved_rate);
    cJSON_AddNumberToObject(o, "n", (double)p->n);
    cJSON_AddNumberToObject(o, "scheduled", (double)p->scheduled);
    cJSON_AddNumberToObject(o, "over_target", (double)p->over_slo);
    ib__json_add_number(o, "at_target_percentile_ms", p->at_percentile_ms);
    cJSON_AddBoolToObject(o, "met", p->met);
    cJSON_AddBoolToObject(o, "partial", p->partial);
    const struct {
        const char *name;
        const ib_stats *st;
        bool has;
    } parts[] = {
        { "queue_ms", &p->queue, true },     { "wakeup_ms", &p->wakeup, true },
        { "h2d_ms", &p->h2d, copies_apart }, { "compute_ms", &p->compute, true },
        { "d2h_ms", &p->d2h, copies_apart }, { "total_ms", &p->total, true },
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        cJSON_AddItemToObject(o, parts[i].name,
                              parts[i].has && p->n > 0 ? ib__json_stats(parts[i].st) : cJSON_CreateNull());
    cJSON_AddNumberToObject(o, "runs", (double)p->runs);
    cJSON *hist = cJSON_AddArrayToObject(o, "batch_histogram");
    for (int k = 1; k <= IB_SERVE_MAX_BATCH; k++) {
        if (!p->batch_hist[k]) continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "batch", k);
        cJSON_AddNumberToObject(e, "runs", (double)p->batch_hist[k]);
        cJSON_AddItemToArray(hist, e);
    }
    cJSON *sw = cJSON_AddObjectToObject(o, "batch_switch");
    cJSON_AddNumberToObject(sw, "runs", (double)p->switch_runs);
    ib__json_add_number(sw, "compute_p50_ms", p->switch_compute_p50_ms);
    ib__json_add_number(sw, "unchanged_compute_p50_ms", p->unchanged_compute_p50_ms);
    const ib_serve_explanation *e = &p->explained;
    cJSON *ex = cJSON_AddObjectToObject(o, "explained");
    cJSON_AddStringToObject(ex, "cause", ib_serve_cause_name(e->cause));
    ib__json_add_number(ex, "excess", e->excess);
    ib__json_add_number(ex, "warmup_sm_clock_mhz", e->warmup_sm_clock_mhz);
    ib__json_add_number(ex, "load_sm_clock_mhz", e->load_sm_clock_mhz);
    ib__json_add_number(ex, "clock_ms", e->clock_ms);
    ib__json_add_number(ex, "wakeup_ms", e->wakeup_ms);
    ib__json_add_number(ex, "host_wait_share", e->host_wait_share);
    cJSON_AddItemToObject(o, "energy", ib__json_energy(&p->energy));
    return o;
}

cJSON *ib__serve_json_config(const ib_serve_config *cfg, size_t instances)
{
    cJSON *o = cJSON_CreateObject();
    static const char *const arrivals[] = { "poisson", "constant", "file" };
    cJSON_AddStringToObject(o, "loop", cfg->concurrency > 0 ? "closed" : "open");
    cJSON_AddStringToObject(o, "arrivals", arrivals[cfg->arrivals]);
    cJSON_AddNumberToObject(o, "seed", (double)cfg->seed);
    cJSON_AddNumberToObject(o, "requests", (double)cfg->requests);
    ib__json_add_number(o, "duration_ms", cfg->requests > 0 ? NAN : cfg->duration_ms);
    cJSON_AddNumberToObject(o, "request_batch", (double)cfg->request_batch);
    cJSON_AddNumberToObject(o, "instances", (double)instances);
    if (cfg->instances_max)
        cJSON_AddStringToObject(o, "instances_search", cfg->instances_ran_out ? "out_of_memory" : "limit");
    else
        cJSON_AddNullToObject(o, "instances_search");
    cJSON_AddNumberToObject(o, "concurrency", (double)cfg->concurrency);
    cJSON_AddNumberToObject(o, "max_batch", (double)cfg->max_batch);
    cJSON_AddNumberToObject(o, "max_delay_us", cfg->max_delay_us);
    return o;
}

static cJSON *json_target(const ib_serve_result *r, const ib_serve_config *cfg)
{
    if (!(cfg->slo_ms > 0)) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "percentile", cfg->slo_percentile);
    cJSON_AddNumberToObject(o, "ms", cfg->slo_ms);
    cJSON_AddNumberToObject(o, "confidence", cfg->confidence);
    cJSON_AddBoolToObject(o, "searched", r->searched);
    cJSON_AddBoolToObject(o, "found", r->found);
    ib__json_add_number(o, "best_rate", r->found ? r->points[r->best].offered_rate : NAN);
    return o;
}

char *ib_serve_report_json(const ib_serve_result *r, const ib_serve_config *cfg, const ib_workload_info *info)
{
    cJSON *root = ib__json_document("inferbench.serve/2", r->partial, r->stop_status, info);
    cJSON_AddItemToObject(root, "config", ib__serve_json_config(cfg, r->instances));
    cJSON_AddStringToObject(root, "copies", ib__serve_copies_name(r->copies));
    ib__json_add_number(root, "service_ms", r->service_ms);
    ib__json_add_number(root, "warmup_held_ms", r->warmup_held_ms);
    ib__json_add_number(root, "warmup_host_wait_ms", r->warmup_host_wait_ms);
    cJSON *rates = cJSON_AddArrayToObject(root, "rates");
    for (size_t i = 0; i < r->n_points; i++)
        cJSON_AddItemToArray(rates, ib__serve_json_point(&r->points[i], r->copies == IB_SERVE_COPIES_APART));
    cJSON_AddItemToObject(root, "target", json_target(r, cfg));
    ib__json_add_warnings(root, r->warnings);
    cJSON_AddItemToObject(root, "environment", ib__json_env(&r->env));
    return ib__json_finish(root);
}
