/* The latency report: table and JSON. */
#include "report/report.h"
#include "core/latency.h"

#include <math.h>
#include <string.h>

/* One row of the statistics table, every figure in the table's unit
 * (scale: that unit per ms). */
static void stats_row(ib__sbuf *b, const char *label, const ib_stats *st, double scale)
{
    const double v[] = { st->mean, st->std, st->min, st->p50, st->p90, st->p95, st->p99, st->p999, st->max };
    ib__sbuf_printf(b, "%-7s %6zu", label, st->n);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char t[32];
        ib__sbuf_printf(b, " %9s", ib__fmt_plain4(t, v[i] * scale));
    }
    ib__sbuf_printf(b, " %6.2f%%\n", 100 * st->cv);
}

double ib__latency_unit(double median_ms, const char **unit)
{
    bool us = median_ms < 0.1, seconds = median_ms >= 1000;
    *unit = us ? "us" : seconds ? "s" : "ms";
    return us ? 1000.0 : seconds ? 1e-3 : 1.0;
}

static const char *method_text(const ib_latency_result *r, const ib_workload_info *info)
{
    if (!r->has_device_timer) return "host monotonic clock around each synchronous run";
    if (info->device == IB_DEVICE_CUDA && info->n_inputs > 0)
        return "CUDA events on the runtime's own stream, inputs and outputs resident on the GPU; "
               "host wall time of the same runs alongside";
    return "CUDA events around each run on the workload's stream; host wall time alongside";
}

/* The median and the mean with their 95% intervals, each line in one unit;
 * in words where there are too few runs for an interval or where the timer
 * could not resolve it; then the precision target, if one was set. */
static void text_intervals(ib__sbuf *b, const ib_latency_result *r, const ib_stats *p)
{
    char t[32], t2[32];
    if (p->n < IB_STATS_CI_MIN_N) {
        ib__sbuf_printf(b, "\nmedian %s, mean %s; too few runs for a 95%% interval: n=%zu, needs %d\n",
                        ib__fmt_ms(t, p->p50), ib__fmt_ms(t2, p->mean), p->n, IB_STATS_CI_MIN_N);
    } else {
        ib__sbuf_printf(b, "\n");
        ib__text_estimate(b, "median", p->p50, p->ci95_median);
        /* A median of 0 (a timer too coarse for the runs) has no relative width. */
        /* Three digits, and never an exponent for a wide interval (few runs
         * under load can give +-1234%). */
        double pct = 100 * r->precision_achieved;
        if (isfinite(pct)) ib__sbuf_printf(b, pct < 1000 ? " (+-%.3g%%)" : " (+-%.0f%%)", pct);
        ib__sbuf_printf(b, "\n");
        ib__text_estimate(b, "mean", p->mean, p->ci95_mean);
        ib__sbuf_printf(b, "\n");
        if (p->ci95_widened)
            ib__sbuf_printf(b,
                            "interval widened to the timer resolution (+-%s): the runs differ by less "
                            "than the timer can tell apart\n",
                            ib__fmt_ms(t, r->timer_resolution_ms));
    }
    if (r->precision_target > 0)
        ib__sbuf_printf(b, "precision target +-%s: %s after %zu runs\n",
                        ib__fmt_percent(t, r->precision_target), r->precision_met ? "met" : "NOT met", r->n);
}

/* The host-wait check's line: the runs as they are against the same runs
 * with their launch held, and what the difference says. */
static void text_host_wait(ib__sbuf *b, const ib_latency_result *r)
{
    const ib_stats *a = &r->host_wait_plain, *h = &r->host_wait_held;
    if (a->n == 0) return;
    char t[5][32];
    ib__sbuf_printf(b, "host wait: %zu runs as they are %s (95%% CI %s..%s), launch held %s (%s..", a->n,
                    ib__fmt_ms(t[0], a->p50), ib__fmt_ms(t[1], a->ci95_median[0]),
                    ib__fmt_ms(t[2], a->ci95_median[1]), ib__fmt_ms(t[3], h->p50),
                    ib__fmt_ms(t[4], h->ci95_median[0]));
    ib__sbuf_printf(b, "%s): ", ib__fmt_ms(t[0], h->ci95_median[1]));
    double pct = 100 * r->host_wait_ms / h->p50;
    if (r->host_bound)
        ib__sbuf_printf(b, "the GPU waited for the host %s a run (%.1f%%)\n",
                        ib__fmt_ms(t[1], r->host_wait_ms), pct);
    else if (r->host_wait_ms > 0)
        ib__sbuf_printf(b,
                        "the GPU waited for the host %s a run (%.1f%%), under the %.0f%% that makes the "
                        "figure the host's\n",
                        ib__fmt_ms(t[1], r->host_wait_ms), pct, 100 * IB__HOST_BOUND_SHARE);
    else
        ib__sbuf_printf(b, "within their intervals, the GPU did not wait for the host\n");
}

char *ib_latency_report_text(const ib_latency_result *r, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    char t1[32], t2[32], t3[32];
    ib__sbuf_printf(&b, "inferbench latency: %s, batch %lld, %s\n", info->model, (long long)info->batch,
                    info->provider);
    ib__text_env(&b, &r->env);
    ib__text_runtime_options(&b, info);
    ib__sbuf_printf(&b, "\nmethod: %s\n", method_text(r, info));
    ib__sbuf_printf(&b, "cold first run: %s host", ib__fmt_ms(t1, r->cold_host_ms));
    if (r->has_device_timer) ib__sbuf_printf(&b, ", %s device", ib__fmt_ms(t2, r->cold_device_ms));
    ib__sbuf_printf(&b, " (not in the statistics)\nwarm-up: %lld runs in %s%s\n",
                    (long long)r->warmup_runs_done, ib__fmt_ms(t3, r->warmup_ms_spent),
                    r->warmup_steady ? ", steady" : ", NOT steady");
    if (r->n == 0) {
        ib__sbuf_printf(&b, "no timed run completed\n");
    } else {
        const ib_stats *p = r->has_device_timer ? &r->device : &r->host;
        const char *unit;
        double scale = ib__latency_unit(p->p50, &unit);
        ib__sbuf_printf(&b, "\n%-7s %6s %9s %9s %9s %9s %9s %9s %9s %9s %9s %7s\n", unit, "n", "mean", "std",
                        "min", "p50", "p90", "p95", "p99", "p99.9", "max", "cv");
        if (r->has_device_timer) stats_row(&b, "device", &r->device, scale);
        stats_row(&b, "host", &r->host, scale);
        text_intervals(&b, r, p);
        if (isfinite(r->launch_overhead_ms)) {
            ib__sbuf_printf(&b, "launch overhead excluded: %s per run (stream held until queued)\n",
                            ib__fmt_ms(t1, r->launch_overhead_ms));
            /* The host takes longer to enqueue the run than the GPU takes
             * to run it: the latency a user sees is the host's. */
            if (r->launch_bound)
                ib__sbuf_printf(&b,
                                "launch-bound: enqueuing a run takes longer than the GPU needs to run it; "
                                "a backend that captures the run as a graph replays it in one launch\n");
        }
        text_host_wait(&b, r);
        if (p->p50 > 0)
            ib__sbuf_printf(&b, "one request at a time: %.1f inputs/s (batch / median)\n",
                            (double)info->batch * 1000.0 / p->p50);
        if (info->flops_per_item > 0 && p->p50 > 0)
            ib__sbuf_printf(&b, "achieved: %.3g TFLOP/s\n",
                            info->flops_per_item * (double)info->batch / (p->p50 / 1000.0) / 1e12);
    }
    ib__sbuf_printf(&b, "\n");
    unsigned shown = ib__energy_shown(&r->energy, &r->cpu_energy);
    if (shown & IB__ENERGY_SHOW_DEVICE) ib__text_energy(&b, "energy", &r->energy);
    if (shown & IB__ENERGY_SHOW_CPU) ib__text_energy(&b, "CPU package energy", &r->cpu_energy);
    ib__text_accuracy(&b, &r->accuracy);
    ib__text_footer(&b, r->partial, r->stop_status, &r->env, r->warnings);
    return ib__sbuf_finish(&b);
}

char *ib_latency_report_json(const ib_latency_result *r, const ib_workload_info *info, const ib_config *cfg)
{
    cJSON *root = ib__json_document("inferbench.latency/2", r->partial, r->stop_status, info);
    cJSON_AddNumberToObject(root, "batch", (double)info->batch);
    cJSON_AddStringToObject(root, "timing", r->has_device_timer ? "device-events" : "host-clock");
    cJSON_AddItemToObject(root, "config", ib__json_config(cfg));
    ib__json_add_number(root, "cold_ms", r->cold_host_ms);
    ib__json_add_number(root, "cold_device_ms", r->cold_device_ms);
    ib__json_add_warmup(root, r->warmup_runs_done, r->warmup_ms_spent, r->warmup_steady);
    if (r->n > 0) {
        cJSON_AddItemToObject(root, "latency_ms",
                              ib__json_stats(r->has_device_timer ? &r->device : &r->host));
        cJSON_AddItemToObject(root, "host_latency_ms", ib__json_stats(&r->host));
    } else {
        cJSON_AddNullToObject(root, "latency_ms");
        cJSON_AddNullToObject(root, "host_latency_ms");
    }
    ib__json_add_precision(root, r->precision_target, r->precision_achieved, r->precision_met);
    ib__json_add_number(root, "timer_resolution_ms", r->timer_resolution_ms);
    ib__json_add_number(root, "host_timer_resolution_ms", r->host_timer_resolution_ms);
    ib__json_add_number(root, "launch_overhead_ms", r->launch_overhead_ms);
    if (r->host_wait_plain.n > 0) {
        cJSON *hw = cJSON_AddObjectToObject(root, "host_wait");
        cJSON_AddItemToObject(hw, "as_is_ms", ib__json_stats(&r->host_wait_plain));
        cJSON_AddItemToObject(hw, "held_ms", ib__json_stats(&r->host_wait_held));
        cJSON_AddNumberToObject(hw, "wait_ms", r->host_wait_ms);
        cJSON_AddBoolToObject(hw, "host_bound", r->host_bound);
    } else {
        cJSON_AddNullToObject(root, "host_wait");
    }
    cJSON *samples = cJSON_AddObjectToObject(root, "samples");
    if (r->has_device_timer)
        cJSON_AddItemToObject(samples, "device_ms", ib__json_array(r->device_ms, r->n));
    else
        cJSON_AddNullToObject(samples, "device_ms");
    cJSON_AddItemToObject(samples, "host_ms", ib__json_array(r->host_ms, r->n));
    cJSON_AddItemToObject(root, "energy", ib__json_energy(&r->energy));
    cJSON_AddItemToObject(root, "cpu_energy", ib__json_energy(&r->cpu_energy));
    ib__json_accuracy(root, &r->accuracy);
    ib__json_add_warnings(root, r->warnings);
    cJSON_AddItemToObject(root, "environment", ib__json_env(&r->env));
    return ib__json_finish(root);
}
