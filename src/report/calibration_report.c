/* The calibration report: the tool's accuracy statement on this machine. */
#include "report/report.h"

#include <math.h>

char *ib_calibration_report_text(const ib_calibration_result *r)
{
    ib__sbuf b = {0};
    ib__sbuf_printf(&b, "inferbench calibrate: spin kernels of known duration, timed by the tool's own loop\n");
    ib__text_env(&b, &r->env);
    ib__sbuf_printf(&b, "\n\n%10s %6s %12s %10s %8s %20s %12s %10s %10s %12s\n", "true us", "n", "median us",
                    "error us", "error", "spread p5..p95 us", "held us", "held err", "launch us",
                    "host us");
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_calibration_point *p = &r->points[i];
        ib__sbuf_printf(&b, "%10.1f %6zu %12.3f %+10.3f %+7.2f%% %9.3f..%-10.3f %12.3f %+10.3f %10.3f %12.3f\n",
                        p->true_us, p->n, p->median_us, p->error_us, p->error_pct, p->p5_us, p->p95_us,
                        p->held_median_us, p->held_error_us, p->launch_overhead_us, p->host_median_us);
    }
    ib__sbuf_printf(&b, "\nharness overhead (an empty kernel): %.3f us device-timed, %.3f us host wall time\n",
                    r->harness_device_us, r->harness_host_us);
    ib__sbuf_printf(&b, "timer resolution (two events, nothing between): %.3f us\n", r->timer_resolution_us);
    ib__sbuf_printf(&b, "held: the stream is held until the run is queued, so launch latency is excluded\n");
    if (r->partial)
        ib__sbuf_printf(&b, "PARTIAL: stopped early (%s)\n", ib_status_str(r->stop_status));
    ib__text_warnings(&b, r->warnings);
    return ib__sbuf_finish(&b);
}

static cJSON *point_json(const ib_calibration_point *p)
{
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "true_us", p->true_us);
    cJSON_AddNumberToObject(o, "n", (double)p->n);
    ib__json_add_number(o, "median_us", p->median_us);
    ib__json_add_number(o, "error_us", p->error_us);
    ib__json_add_number(o, "error_pct", p->error_pct);
    ib__json_add_number(o, "p5_us", p->p5_us);
    ib__json_add_number(o, "p95_us", p->p95_us);
    ib__json_add_number(o, "held_median_us", p->held_median_us);
    ib__json_add_number(o, "held_error_us", p->held_error_us);
    ib__json_add_number(o, "launch_overhead_us", p->launch_overhead_us);
    ib__json_add_number(o, "host_median_us", p->host_median_us);
    return o;
}

char *ib_calibration_report_json(const ib_calibration_result *r, const ib_config *cfg)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "inferbench.calibrate/1");
    cJSON_AddBoolToObject(root, "partial", r->partial);
    if (r->partial) cJSON_AddStringToObject(root, "stop_reason", ib_status_str(r->stop_status));
    cJSON_AddNumberToObject(root, "max_runs_per_point", (double)cfg->runs);
    cJSON *pts = cJSON_AddArrayToObject(root, "points");
    for (size_t i = 0; i < r->n_points; i++) cJSON_AddItemToArray(pts, point_json(&r->points[i]));
    ib__json_add_number(root, "harness_device_us", r->harness_device_us);
    ib__json_add_number(root, "harness_host_us", r->harness_host_us);
    ib__json_add_number(root, "timer_resolution_us", r->timer_resolution_us);
    cJSON_AddItemToObject(root, "warnings", ib__json_warnings(r->warnings));
    cJSON_AddItemToObject(root, "environment", ib__json_env(&r->env));
    return ib__json_finish(root);
}
