/* The calibration report: the tool's accuracy statement on this machine. */
#include "report/report.h"

#include <math.h>
#include <stdio.h>

static void point_row(ib__sbuf *b, const char *label, const ib_calibration_point *p)
{
    ib__sbuf_printf(b, "%10s %6zu %11.3f %9.3f..%-10.3f %+9.3f %+9.3f %11.3f %+9.3f %+9.3f %9.3f %11.3f\n",
                    label, p->n, p->median_us, p->p5_us, p->p95_us, ib__signed_shown(p->error_us, 3),
                    ib__signed_shown(p->corrected_error_us, 3), p->held_median_us,
                    ib__signed_shown(p->held_error_us, 3), ib__signed_shown(p->held_corrected_error_us, 3),
                    p->launch_overhead_us, p->host_median_us);
}

char *ib_calibration_report_text(const ib_calibration_result *r)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b,
                    "inferbench calibrate: spin kernels of known duration, timed by the tool's own loop\n");
    ib__text_env(&b, &r->env);
    ib__sbuf_printf(
        &b,
        "\n\nall in us. events: CUDA events around each run, as every measurement takes them;\n"
        "held: the stream held until the run is queued (launch latency excluded);\n"
        "err: median - true; corr: median - empty-kernel median - true (the harness's fixed cost off)\n\n");
    ib__sbuf_printf(&b, "%10s %6s %11s %21s %9s %9s %11s %9s %9s %9s %11s\n", "true", "n", "events",
                    "spread p5..p95", "err", "corr", "held", "err", "corr", "launch", "host");
    point_row(&b, "empty", &r->harness);
    for (size_t i = 0; i < r->n_points; i++) {
        char label[32];
        snprintf(label, sizeof label, "%.1f", r->points[i].true_us);
        point_row(&b, label, &r->points[i]);
    }
    ib__sbuf_printf(
        &b,
        "\nharness overhead (an empty kernel): %.3f us with events, %.3f us held, %.3f us host wall time\n",
        r->harness.median_us, r->harness.held_median_us, r->harness.host_median_us);
    ib__sbuf_printf(&b,
                    "timer resolution (step between readings of two events with nothing between): %.3f us\n",
                    r->timer_resolution_us);
    ib__text_footer(&b, r->partial, r->stop_status, &r->env, r->warnings);
    return ib__sbuf_finish(&b);
}

static cJSON *point_json(const ib_calibration_point *p)
{
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "true_us", p->true_us);
    cJSON_AddNumberToObject(o, "n", (double)p->n);
    ib__json_add_number(o, "median_us", p->median_us);
    ib__json_add_number(o, "p5_us", p->p5_us);
    ib__json_add_number(o, "p95_us", p->p95_us);
    ib__json_add_number(o, "error_us", p->error_us);
    ib__json_add_number(o, "error_pct", p->error_pct);
    ib__json_add_number(o, "corrected_error_us", p->corrected_error_us);
    ib__json_add_number(o, "held_median_us", p->held_median_us);
    ib__json_add_number(o, "held_error_us", p->held_error_us);
    ib__json_add_number(o, "held_corrected_error_us", p->held_corrected_error_us);
    ib__json_add_number(o, "launch_overhead_us", p->launch_overhead_us);
    ib__json_add_number(o, "host_median_us", p->host_median_us);
    return o;
}

char *ib_calibration_report_json(const ib_calibration_result *r, const ib_config *cfg)
{
    cJSON *root = ib__json_document("inferbench.calibrate/2", r->partial, r->stop_status, NULL);
    cJSON_AddNumberToObject(root, "max_runs_per_point", (double)cfg->runs);
    cJSON *pts = cJSON_AddArrayToObject(root, "points");
    for (size_t i = 0; i < r->n_points; i++) cJSON_AddItemToArray(pts, point_json(&r->points[i]));
    cJSON_AddItemToObject(root, "harness", point_json(&r->harness));
    ib__json_add_number(root, "timer_resolution_us", r->timer_resolution_us);
    ib__json_add_warnings(root, r->warnings);
    cJSON_AddItemToObject(root, "environment", ib__json_env(&r->env));
    return ib__json_finish(root);
}
