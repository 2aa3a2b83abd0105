/* The throughput report: the search, the curve as a table, the answers;
 * and the same as JSON (schema inferbench.throughput/1, docs/throughput.md). */
#include "report/report.h"

#include <math.h>
#include <stdio.h>

const char *ib__fmt_rate(char buf[32], double v)
{
    if (!isfinite(v))
        snprintf(buf, 32, "-");
    else if (v >= 1000)
        snprintf(buf, 32, "%.0f", v);
    else
        snprintf(buf, 32, "%.4g", v);
    return buf;
}

static const ib_throughput_point *point_at(const ib_throughput_result *r, int i)
{
    return i >= 0 && (size_t)i < r->n_points ? &r->points[i] : NULL;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

static void text_search(ib__sbuf *b, const ib_throughput_result *r, const ib_workload_info *info)
{
    char t[32];
    if (!r->searched && !info->has_batch_dim) {
        ib__sbuf_printf(b,
                        "fixed-batch model: measured at its batch %lld only (no input has a symbolic "
                        "batch dimension, so there is no batch to search)\n",
                        r->n_points ? (long long)r->points[0].batch : (long long)info->batch);
    } else if (!r->searched) {
        ib__sbuf_printf(b, "batches as given: no search\n");
    } else if (r->search_stopped && r->largest_fitting == 0) {
        ib__sbuf_printf(b, "batch search stopped after %zu probes (%s): no batch was seen to fit\n",
                        r->n_probes, ib__fmt_ms(t, r->search_ms));
    } else if (r->search_stopped) {
        ib__sbuf_printf(b,
                        "batch search stopped after %zu probes (%s); "
                        "largest batch that fit so far: %lld\n",
                        r->n_probes, ib__fmt_ms(t, r->search_ms), (long long)r->largest_fitting);
    } else if (r->stop != IB_THROUGHPUT_STOP_DONE) {
        ib__sbuf_printf(b, "largest batch tried: %lld (%zu probes, %s); the search stopped there\n",
                        (long long)r->largest_fitting, r->n_probes, ib__fmt_ms(t, r->search_ms));
    } else if (r->limited_by_max_batch) {
        ib__sbuf_printf(b,
                        "largest batch tried: %lld, limited by --max-batch, not by memory "
                        "(%zu probes, %s)\n",
                        (long long)r->largest_fitting, r->n_probes, ib__fmt_ms(t, r->search_ms));
    } else {
        ib__sbuf_printf(b, "largest batch that fits: %lld (%zu probes, %s)\n", (long long)r->largest_fitting,
                        r->n_probes, ib__fmt_ms(t, r->search_ms));
        if (r->limit_reason[0]) ib__sbuf_printf(b, "  the next batch failed: %s\n", r->limit_reason);
    }
}

/* Why no more batches were timed, and when (docs/throughput.md, "When the
 * search stops"). Nothing when every candidate was. */
void ib__throughput_stop_line(ib__sbuf *b, const ib_throughput_result *r)
{
    char t1[32], t2[32], t3[32];
    const ib_throughput_point *peak = point_at(r, r->peak);
    if (r->stop == IB_THROUGHPUT_STOP_PAST_PEAK && peak)
        ib__sbuf_printf(b,
                        "stopped past the peak after %s: the last two batches were both below %.0f%% of the "
                        "peak's (batch %lld) beyond their intervals; batch %lld was not tried\n",
                        ib__fmt_ms(t1, r->stop_ms), 100 * r->knee_fraction, (long long)peak->batch,
                        (long long)r->stop_next_batch);
    else if (r->stop == IB_THROUGHPUT_STOP_TIME_BOUND)
        ib__sbuf_printf(b,
                        "stopped by the time bound after %s: batch %lld, estimated at %s, would have ended "
                        "past %s (--max-time-ms); the curve is partial\n",
                        ib__fmt_ms(t1, r->stop_ms), (long long)r->stop_next_batch,
                        ib__fmt_ms(t2, r->stop_next_ms), ib__fmt_ms(t3, r->max_time_ms));
}

static void text_marks(ib__sbuf *b, const ib_throughput_result *r, int i)
{
    const char *marks[3];
    size_t n = 0;
    if (i == r->peak) marks[n++] = "peak";
    if (i == r->knee) marks[n++] = "knee";
    if (i == r->best_within_budget) marks[n++] = "best within budget";
    for (size_t k = 0; k < n; k++) ib__sbuf_printf(b, "%s%s", k ? ", " : "  ", marks[k]);
}

static void text_row(ib__sbuf *b, const ib_throughput_result *r, int i)
{
    const ib_throughput_point *p = &r->points[i];
    char t1[32], t2[32];
    ib__sbuf_printf(b, "%9lld ", (long long)p->batch);
    if (p->status == IB_ERR_DEVICE_OOM)
        ib__sbuf_printf(b, "  out of memory at this batch during the sweep "
                           "(session reopened, sweep went on)");
    else if (p->status != IB_OK)
        ib__sbuf_printf(b, "  not measured: %s", ib_status_str(p->status));
    else {
        char ms[3][32]; /* ms without an exponent: a batch of 15 s reads "15110" */
        ib__sbuf_printf(b, "%13s %13s %11s %9s %9s", ib__fmt_rate(t1, p->items_per_s),
                        ib__fmt_rate(t2, p->items_per_s_sync),
                        ib__fmt_plain4(ms[0], p->back_to_back_ms_per_run),
                        ib__fmt_plain4(ms[1], p->latency_ms.p50), ib__fmt_plain4(ms[2], p->latency_ms.p99));
    }
    text_marks(b, r, i);
    ib__sbuf_printf(b, "\n");
}

static void text_curve(ib__sbuf *b, const ib_throughput_result *r)
{
    ib__sbuf_printf(b, "\n%9s %13s %13s %11s %9s %9s\n", "batch", "inputs/s", "inputs/s", "ms/run", "p50 ms",
                    "p99 ms");
    ib__sbuf_printf(b, "%9s %13s %13s %11s %9s %9s\n", "", "back-to-back", "per-run sync", "back-to-back",
                    "batch", "batch");
    for (size_t i = 0; i < r->n_points; i++) text_row(b, r, (int)i);
}

static void text_answers(ib__sbuf *b, const ib_throughput_result *r)
{
    char t1[32], t2[32];
    const ib_throughput_point *peak = point_at(r, r->peak), *knee = point_at(r, r->knee);
    if (!peak) return;
    ib__sbuf_printf(b, "\npeak: %s inputs/s at batch %lld\n", ib__fmt_rate(t1, peak->items_per_s),
                    (long long)peak->batch);
    ib__sbuf_printf(b,
                    "      per-run synchronized timing (the classic method) gives %s inputs/s at this "
                    "batch (%+.1f%%)\n",
                    ib__fmt_rate(t2, peak->items_per_s_sync),
                    ib__signed_shown(100 * (peak->items_per_s_sync / peak->items_per_s - 1), 1));
    if (knee)
        ib__sbuf_printf(b,
                        "knee: batch %lld, %s inputs/s (%.1f%% of the peak): "
                        "the smallest batch close to it\n",
                        (long long)knee->batch, ib__fmt_rate(t1, knee->items_per_s),
                        100 * knee->items_per_s / peak->items_per_s);
    if (!(r->latency_budget_ms > 0)) return;
    const ib_throughput_point *best = point_at(r, r->best_within_budget);
    char t3[32]; /* a buffer per figure: they are formatted before printing */
    if (best)
        ib__sbuf_printf(b, "within %s p99 batch latency: batch %lld, %s inputs/s (p99 %s)\n",
                        ib__fmt_ms(t1, r->latency_budget_ms), (long long)best->batch,
                        ib__fmt_rate(t2, best->items_per_s), ib__fmt_ms(t3, best->latency_ms.p99));
    else
        ib__sbuf_printf(b, "within %s p99 batch latency: NO batch meets the budget\n",
                        ib__fmt_ms(t1, r->latency_budget_ms));
}

char *ib_throughput_report_text(const ib_throughput_result *r, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    char t[32];
    ib__sbuf_printf(&b, "inferbench throughput: %s, %s\n", info->model, info->provider);
    ib__text_env(&b, &r->env);
    ib__text_runtime_options(&b, info);
    ib__sbuf_printf(&b, "\nmethod: per batch, warm-up; runs each synchronized and timed alone (batch "
                        "latency, per-run inputs/s);\n        then as many runs back-to-back under one "
                        "timing (inputs/s = runs x batch / their time)\n");
    text_search(&b, r, info);
    ib__throughput_stop_line(&b, r);
    if (r->n_points > 0) {
        text_curve(&b, r);
        text_answers(&b, r);
        ib__sbuf_printf(&b, "sweep: %s\n", ib__fmt_ms(t, r->sweep_ms));
        ib__text_energy_curve(&b, r);
    }
    ib__text_accuracy(&b, &r->accuracy);
    /* A time bound's partial result said why above (text_stop). */
    ib__text_footer(&b, r->partial && r->stop != IB_THROUGHPUT_STOP_TIME_BOUND, r->stop_status, &r->env,
                    r->warnings);
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

static cJSON *config_json(const ib_throughput_config *cfg)
{
    cJSON *o = ib__json_config(&cfg->run);
    cJSON_AddNumberToObject(o, "max_batch", (double)cfg->max_batch);
    cJSON_AddNumberToObject(o, "knee_fraction", cfg->knee_fraction);
    cJSON_AddNumberToObject(o, "latency_budget_ms", cfg->latency_budget_ms);
    if (cfg->max_time_ms > 0)
        cJSON_AddNumberToObject(o, "max_time_ms", cfg->max_time_ms);
    else
        cJSON_AddNullToObject(o, "max_time_ms");
    if (cfg->batches) {
        cJSON *list = cJSON_AddArrayToObject(o, "batches");
        for (size_t i = 0; i < cfg->n_batches; i++)
            cJSON_AddItemToArray(list, cJSON_CreateNumber((double)cfg->batches[i]));
    } else {
        cJSON_AddNullToObject(o, "batches");
    }
    return o;
}

static cJSON *search_json(const ib_throughput_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "searched", r->searched);
    cJSON_AddNumberToObject(o, "largest_fitting", (double)r->largest_fitting);
    cJSON_AddBoolToObject(o, "limited_by_max_batch", r->limited_by_max_batch);
    cJSON_AddBoolToObject(o, "stopped", r->search_stopped);
    /* Why no more batches were timed, when, and the batch not tried. */
    cJSON_AddStringToObject(o, "stop", ib_throughput_stop_name(r->stop));
    bool stopped = r->stop != IB_THROUGHPUT_STOP_DONE;
    ib__json_add_number(o, "stop_ms", stopped ? r->stop_ms : NAN);
    if (stopped)
        cJSON_AddNumberToObject(o, "stop_next_batch", (double)r->stop_next_batch);
    else
        cJSON_AddNullToObject(o, "stop_next_batch");
    ib__json_add_number(o, "stop_next_ms", r->stop == IB_THROUGHPUT_STOP_TIME_BOUND ? r->stop_next_ms : NAN);
    if (r->limit_reason[0]) cJSON_AddStringToObject(o, "limit_reason", r->limit_reason);
    cJSON *probes = cJSON_AddArrayToObject(o, "probes");
    for (size_t i = 0; i < r->n_probes; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "batch", (double)r->probes[i].batch);
        cJSON_AddBoolToObject(p, "fits", r->probes[i].fits);
        if (!r->probes[i].fits) cJSON_AddStringToObject(p, "failure", ib_status_str(r->probes[i].status));
        ib__json_add_number(p, "ms", r->probes[i].ms);
        cJSON_AddItemToArray(probes, p);
    }
    ib__json_add_number(o, "search_ms", r->search_ms);
    return o;
}

static cJSON *point_json(const ib_throughput_point *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "batch", (double)p->batch);
    cJSON_AddStringToObject(o, "status", ib_status_str(p->status));
    bool ok = p->status == IB_OK;
    ib__json_add_number(o, "items_per_s", ok ? p->items_per_s : NAN);
    ib__json_add_number(o, "items_per_s_sync", ok ? p->items_per_s_sync : NAN);
    ib__json_add_number(o, "back_to_back_ms_per_run", ok ? p->back_to_back_ms_per_run : NAN);
    if (ok)
        cJSON_AddItemToObject(o, "latency_ms", ib__json_stats(&p->latency_ms));
    else
        cJSON_AddNullToObject(o, "latency_ms");
    ib__json_add_number(o, "first_run_ms", ok ? p->first_run_ms : NAN);
    if (ok) {
        cJSON_AddNumberToObject(o, "warmup_runs", (double)p->warmup_runs);
        cJSON_AddBoolToObject(o, "warmup_steady", p->warmup_steady);
    } else {
        cJSON_AddNullToObject(o, "warmup_runs");
        cJSON_AddNullToObject(o, "warmup_steady");
    }
    cJSON_AddItemToObject(o, "energy", ib__json_energy(&p->energy));
    return o;
}

/* {batch, items_per_s} of a chosen point, or null when there is none. */
static cJSON *choice_json(const ib_throughput_result *r, int i)
{
    const ib_throughput_point *p = point_at(r, i);
    if (!p) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "batch", (double)p->batch);
    ib__json_add_number(o, "items_per_s", p->items_per_s);
    return o;
}

static cJSON *budget_json(const ib_throughput_result *r)
{
    if (!(r->latency_budget_ms > 0)) return cJSON_CreateNull();
    const ib_throughput_point *p = point_at(r, r->best_within_budget);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "ms", r->latency_budget_ms);
    cJSON_AddBoolToObject(o, "met", p != NULL);
    if (p)
        cJSON_AddNumberToObject(o, "batch", (double)p->batch);
    else
        cJSON_AddNullToObject(o, "batch");
    ib__json_add_number(o, "items_per_s", p ? p->items_per_s : NAN);
    ib__json_add_number(o, "p99_ms", p ? p->latency_ms.p99 : NAN);
    return o;
}

char *ib_throughput_report_json(const ib_throughput_result *r, const ib_workload_info *info,
                                const ib_throughput_config *cfg)
{
    cJSON *root = ib__json_document("inferbench.throughput/2", r->partial, r->stop_status, info);
    if (r->partial && r->stop == IB_THROUGHPUT_STOP_TIME_BOUND)
        cJSON_ReplaceItemInObject(root, "stop_reason", cJSON_CreateString("time bound (--max-time-ms)"));
    cJSON_AddItemToObject(root, "config", config_json(cfg));
    cJSON_AddItemToObject(root, "search", search_json(r));
    ib__json_add_number(root, "sweep_ms", r->sweep_ms);
    cJSON *curve = cJSON_AddArrayToObject(root, "curve");
    for (size_t i = 0; i < r->n_points; i++) cJSON_AddItemToArray(curve, point_json(&r->points[i]));
    cJSON_AddItemToObject(root, "peak", choice_json(r, r->peak));
    cJSON *knee = choice_json(r, r->knee);
    const ib_throughput_point *peak = point_at(r, r->peak), *kp = point_at(r, r->knee);
    if (kp && peak) ib__json_add_number(knee, "fraction_of_peak", kp->items_per_s / peak->items_per_s);
    cJSON_AddItemToObject(root, "knee", knee);
    cJSON_AddItemToObject(root, "budget", budget_json(r));
    cJSON *eff = choice_json(r, r->most_efficient);
    if (r->most_efficient >= 0)
        ib__json_add_number(eff, "items_per_joule", r->points[r->most_efficient].energy.items_per_joule);
    cJSON_AddItemToObject(root, "most_efficient", eff);
    ib__json_add_number(root, "timer_resolution_ms", r->timer_resolution_ms);
    ib__json_accuracy(root, &r->accuracy);
    ib__json_add_warnings(root, r->warnings);
    cJSON_AddItemToObject(root, "environment", ib__json_env(&r->env));
    return ib__json_finish(root);
}
