/* The client calibration's report (docs/script-server.md): each rate's
 * errors of the HTTP client against the scripted server, and the ceiling. */
#include "report/report.h"

#include <math.h>
#include <stdio.h>

static void point_row(ib__sbuf *b, const ib_client_calibration_point *p)
{
    ib__sbuf_printf(b, "%8.0f %8zu %7lld %9.0f %9.3f %9.3f %9.3f %9.3f %6zu %9zu  %s\n", p->rate,
                    p->n_requests, (long long)p->streams_max, p->tokens_per_s, p->lateness.p99,
                    p->lateness_error.p99, p->ttft_error.p99, p->itl_error.p99, p->n_failed, p->n_unmatched,
                    p->accurate ? "yes" : "NO");
}

static void ceiling_line(ib__sbuf *b, const ib_client_calibration_result *r)
{
    const ib_client_calibration_point *last = r->n_points ? &r->points[r->n_points - 1] : NULL;
    if (r->ceiling_rate == 0) {
        ib__sbuf_printf(b, "ceiling: none: the client is not accurate at the lowest rate tried\n");
        return;
    }
    ib__sbuf_printf(b, "ceiling: %.0f requests/s, %lld streams at once, %.0f tokens/s", r->ceiling_rate,
                    (long long)r->ceiling_streams, r->ceiling_tokens_per_s);
    if (last && !last->accurate)
        ib__sbuf_printf(b, " (at %.0f requests/s it was not)\n", last->rate);
    else
        ib__sbuf_printf(b, " (the highest rate tried: the ceiling is above)\n");
}

char *ib_client_calibration_report_text(const ib_client_calibration_result *r)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(
        &b,
        "inferbench calibrate client: the HTTP client (serve --endpoint) against the scripted "
        "server on 127.0.0.1\n"
        "script: first token %.3f ms after the request, then one every %.3f ms, %d a request, one a "
        "chunk\n\n",
        r->ttft_ms, r->itl_ms, (int)r->output_tokens);
    ib__sbuf_printf(
        &b,
        "all p99, in ms. late: the request read by the server - scheduled; late err: that - the "
        "client's own lateness;\nttft err: |client's TTFT - server's|; itl err: |a chunk gap as seen "
        "- as sent|. accurate: all within %.3f ms, nothing failed or unmatched\n\n",
        r->bound_ms);
    ib__sbuf_printf(&b, "%8s %8s %7s %9s %9s %9s %9s %9s %6s %9s  %s\n", "rate/s", "requests", "streams",
                    "tokens/s", "late", "late err", "ttft err", "itl err", "failed", "unmatched", "accurate");
    for (size_t i = 0; i < r->n_points; i++) point_row(&b, &r->points[i]);
    ib__sbuf_printf(&b, "\n");
    ceiling_line(&b, r);
    if (r->partial)
        ib__sbuf_printf(&b, "stopped early (%s): the rates measured so far\n", ib_status_str(r->stop_status));
    return ib__sbuf_finish(&b);
}

static cJSON *point_json(const ib_client_calibration_point *p)
{
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "rate", p->rate);
    cJSON_AddNumberToObject(o, "requests", (double)p->n_requests);
    cJSON_AddNumberToObject(o, "failed", (double)p->n_failed);
    cJSON_AddNumberToObject(o, "unmatched", (double)p->n_unmatched);
    cJSON_AddNumberToObject(o, "streams_max", (double)p->streams_max);
    ib__json_add_number(o, "tokens_per_s", p->tokens_per_s);
    ib__json_add_stats_or_null(o, "lateness_ms", &p->lateness);
    ib__json_add_stats_or_null(o, "lateness_error_ms", &p->lateness_error);
    ib__json_add_stats_or_null(o, "ttft_error_ms", &p->ttft_error);
    ib__json_add_stats_or_null(o, "itl_error_ms", &p->itl_error);
    cJSON_AddBoolToObject(o, "accurate", p->accurate);
    return o;
}

char *ib_client_calibration_report_json(const ib_client_calibration_result *r)
{
    cJSON *root = ib__json_document("inferbench.calibrate_client/1", r->partial, r->stop_status, NULL);
    cJSON *script = cJSON_AddObjectToObject(root, "script");
    ib__json_add_number(script, "ttft_ms", r->ttft_ms);
    ib__json_add_number(script, "itl_ms", r->itl_ms);
    cJSON_AddNumberToObject(script, "output_tokens", r->output_tokens);
    ib__json_add_number(root, "bound_ms", r->bound_ms);
    cJSON *pts = cJSON_AddArrayToObject(root, "points");
    for (size_t i = 0; i < r->n_points; i++) cJSON_AddItemToArray(pts, point_json(&r->points[i]));
    cJSON *ceiling = cJSON_AddObjectToObject(root, "ceiling");
    ib__json_add_number(ceiling, "rate", r->ceiling_rate);
    cJSON_AddNumberToObject(ceiling, "streams", (double)r->ceiling_streams);
    ib__json_add_number(ceiling, "tokens_per_s", r->ceiling_tokens_per_s);
    return ib__json_finish(root);
}
