/* The pitfalls report: the correct figure and what each classic timing
 * mistake would have said, side by side; table and JSON. */
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* JSON names of the rows, by ib_pitfall. */
static const char *const kind_keys[IB_PITFALL_COUNT] = {
    [IB_PITFALL_CORRECT] = "correct",
    [IB_PITFALL_HOST_NO_SYNC] = "host_no_sync",
    [IB_PITFALL_COPIES] = "copies",
    [IB_PITFALL_NO_WARMUP] = "no_warmup",
    [IB_PITFALL_SINGLE_SAMPLE] = "single_sample",
    [IB_PITFALL_ZERO_INPUT] = "zero_input",
    [IB_PITFALL_TF32] = "tf32",
};

const char *ib__fmt_pitfall_error(char buf[32], const ib_pitfall_row *row)
{
    if (row->kind == IB_PITFALL_CORRECT || !isfinite(row->error_pct))
        snprintf(buf, 32, "-");
    else if (row->kind == IB_PITFALL_SINGLE_SAMPLE)
        snprintf(buf, 32, "+-%.1f%%", row->error_pct);
    else
        snprintf(buf, 32, "%+.1f%%", ib__signed_shown(row->error_pct, 1));
    return buf;
}

const char *ib__fmt_pitfall_interval(char buf[48], const double ci_pct[2], ib_pitfall_reading reading)
{
    if (reading == IB_READING_NOT_COMPARED)
        snprintf(buf, 48, "-");
    else if (isfinite(ci_pct[0]) && isfinite(ci_pct[1]))
        snprintf(buf, 48, "[%+.1f%%, %+.1f%%]", ib__signed_shown(ci_pct[0], 1),
                 ib__signed_shown(ci_pct[1], 1));
    else
        snprintf(buf, 48, reading == IB_READING_NO_INTERVAL ? "none" : "exact (same runs)");
    return buf;
}

void ib__json_pitfall_reading(cJSON *o, const double ci_pct[2], ib_pitfall_reading reading,
                              const char *no_interval)
{
    if (isfinite(ci_pct[0]) && isfinite(ci_pct[1]))
        cJSON_AddItemToObject(o, "error_ci95_pct", ib__json_array(ci_pct, 2));
    else
        cJSON_AddNullToObject(o, "error_ci95_pct");
    ib__json_add_string_or_null(o, "verdict",
                                reading == IB_READING_NOT_COMPARED ? NULL : ib_pitfall_reading_name(reading));
    ib__json_add_string_or_null(o, "no_interval", no_interval);
}

const char *ib__pitfalls_reference(char buf[IB__REFERENCE_TEXT_LEN], const char *math, bool math_default)
{
    const char *what = "reference arithmetic (the correct row's, every row's but the TF32 one)";
    const char *dflt = math_default ? ", the runtime's default" : "";
    if (!strcmp(math, "tf32"))
        snprintf(buf, IB__REFERENCE_TEXT_LEN,
                 "%s: TF32%s (float32 tensors, 10-bit mantissas in convolutions and matrix products)", what,
                 dflt);
    else if (!strcmp(math, "fp32"))
        snprintf(buf, IB__REFERENCE_TEXT_LEN, "%s: strict fp32 (no TF32)%s", what, dflt);
    else if (math[0])
        snprintf(buf, IB__REFERENCE_TEXT_LEN, "%s: %s%s", what, math, dflt);
    else
        snprintf(buf, IB__REFERENCE_TEXT_LEN, "%s: the backend's own (it does not say which)", what);
    return buf;
}

const char *ib__pitfall_math(const ib_pitfalls_result *r, const ib_pitfall_row *row)
{
    return row->math[0] ? row->math : r->reference_math;
}

static void text_row(ib__sbuf *b, const ib_pitfall_row *row)
{
    if (!row->applies) {
        ib__sbuf_printf(b, "%-22s N/A: %s\n", row->name, row->not_applicable);
        return;
    }
    if (row->stats.n == 0) {
        ib__sbuf_printf(b, "%-22s not measured: %s\n", row->name, row->error);
        return;
    }
    char mean[32], std[32], median[32], error[32], interval[48];
    const char *reading =
        row->reading == IB_READING_NOT_COMPARED ? "" : ib_pitfall_reading_name(row->reading);
    ib__sbuf_printf(b, "%-22s %7zu %10s %10s %10s %11s %17s  %-12s  %s\n", row->name, row->stats.n,
                    ib__fmt_ms(mean, row->stats.mean), ib__fmt_ms(std, row->stats.std),
                    ib__fmt_ms(median, row->stats.p50), ib__fmt_pitfall_error(error, row),
                    ib__fmt_pitfall_interval(interval, row->error_ci95_pct, row->reading), reading, row->why);
    if (row->no_interval) ib__sbuf_printf(b, "%-22s no interval: %s\n", "", row->no_interval);
    if (row->status != IB_OK)
        ib__sbuf_printf(b, "%-22s stopped early (%s): %s\n", "", ib_status_str(row->status), row->error);
}

static void text_single_sample(ib__sbuf *b, const ib_pitfall_row *row)
{
    if (row->stats.n == 0 || !isfinite(row->single_p5_pct)) return;
    ib__sbuf_printf(b,
                    "single sample: one run lands between %+.1f%% and %+.1f%% of the median (5th-95th "
                    "pct); %.0f%% of single runs are off by >5%%\n",
                    ib__signed_shown(row->single_p5_pct, 1), ib__signed_shown(row->single_p95_pct, 1),
                    100 * row->single_off_5pct);
}

/* A cold start is one run among many: it barely moves the median the
 * table compares, but it moves the mean, which is what naive code reports. */
static void text_no_warmup(ib__sbuf *b, const ib_pitfall_row *row, const ib_pitfall_row *correct)
{
    if (row->stats.n == 0 || correct->stats.n == 0 || !(correct->stats.mean > 0)) return;
    char slowest[32], mean[32];
    ib__sbuf_printf(b,
                    "no warm-up: its slowest run took %s (%.1fx the correct median); its mean, %s, is "
                    "%+.1f%% off the correct mean\n",
                    ib__fmt_ms(slowest, row->stats.max), row->stats.max / correct->stats.p50,
                    ib__fmt_ms(mean, row->stats.mean),
                    ib__signed_shown((row->stats.mean / correct->stats.mean - 1) * 100, 1));
}

/* What TF32 changes, both measured in the row (fresh sessions each): time
 * against strict fp32, and outputs. */
static void text_tf32(ib__sbuf *b, const ib_pitfall_row *row)
{
    if (!row->applies || row->stats.n == 0 || !(row->tf32_off_median_ms > 0)) return;
    char on[32], off[32];
    ib__sbuf_printf(
        b,
        "TF32 against strict fp32 (each in a fresh session): median %s with TF32, %s strict (TF32 "
        "%+.1f%%)",
        ib__fmt_ms(on, row->tf32_on_median_ms), ib__fmt_ms(off, row->tf32_off_median_ms),
        ib__signed_shown((row->tf32_on_median_ms / row->tf32_off_median_ms - 1) * 100, 1));
    if (isfinite(row->tf32_max_abs_error))
        ib__sbuf_printf(b, "; outputs differ by up to %.3g (absolute), %.3g (relative)",
                        row->tf32_max_abs_error, row->tf32_max_rel_error);
    ib__sbuf_printf(b, "\n");
}

char *ib_pitfalls_report_text(const ib_pitfalls_result *r, const ib_workload_info *info)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "inferbench pitfalls: %s, batch %lld, %s\n", info->model, (long long)info->batch,
                    info->provider);
    ib__text_env(&b, &r->env);
    ib__text_runtime_options(&b, info);
    ib__sbuf_printf(&b, "\n\nwhat each classic timing mistake would have reported, on this model in this "
                        "session:\n");
    char reference[IB__REFERENCE_TEXT_LEN];
    ib__sbuf_printf(
        &b,
        "%s\n"
        "each row against the correct one: the 95%% interval of the medians' change, as `compare` "
        "computes it; within noise when it holds 0\n\n%-22s %7s "
        "%10s %10s %10s %11s %17s  %-12s  %s\n",
        ib__pitfalls_reference(reference, r->reference_math, r->reference_math_default), "method", "n",
        "mean", "std", "median", "vs correct", "95% interval", "reading", "why");
    for (int k = 0; k < IB_PITFALL_COUNT; k++) text_row(&b, &r->rows[k]);
    ib__sbuf_printf(&b, "\n");
    text_no_warmup(&b, &r->rows[IB_PITFALL_NO_WARMUP], &r->rows[IB_PITFALL_CORRECT]);
    text_single_sample(&b, &r->rows[IB_PITFALL_SINGLE_SAMPLE]);
    text_tf32(&b, &r->rows[IB_PITFALL_TF32]);
    ib__text_energy_pitfall(&b, &r->energy);
    ib__text_footer(&b, r->partial, r->stop_status, &r->env, r->warnings);
    return ib__sbuf_finish(&b);
}

static cJSON *row_json(const ib_pitfall_row *row)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", kind_keys[row->kind]);
    cJSON_AddStringToObject(o, "name", row->name);
    cJSON_AddBoolToObject(o, "applies", row->applies);
    ib__json_add_string_or_null(o, "not_applicable", row->applies ? NULL : row->not_applicable);
    cJSON_AddStringToObject(o, "status", ib_status_str(row->status));
    ib__json_add_string_or_null(o, "error", row->status != IB_OK ? row->error : NULL);
    if (row->stats.n > 0)
        cJSON_AddItemToObject(o, "stats", ib__json_stats(&row->stats));
    else
        cJSON_AddNullToObject(o, "stats");
    ib__json_add_number(o, "error_pct", row->error_pct);
    ib__json_pitfall_reading(o, row->error_ci95_pct, row->reading, row->no_interval);
    cJSON_AddStringToObject(o, "why", row->why);
    if (row->kind == IB_PITFALL_SINGLE_SAMPLE) {
        ib__json_add_number(o, "single_p5_pct", row->single_p5_pct);
        ib__json_add_number(o, "single_p95_pct", row->single_p95_pct);
        ib__json_add_number(o, "single_off_5pct", row->single_off_5pct);
    }
    if (row->kind == IB_PITFALL_TF32) {
        ib__json_add_string_or_null(o, "math", row->math);
        ib__json_add_number(o, "tf32_on_median_ms", row->tf32_on_median_ms);
        ib__json_add_number(o, "tf32_off_median_ms", row->tf32_off_median_ms);
        ib__json_add_number(o, "tf32_max_abs_error", row->tf32_max_abs_error);
        ib__json_add_number(o, "tf32_max_rel_error", row->tf32_max_rel_error);
    }
    return o;
}

char *ib_pitfalls_report_json(const ib_pitfalls_result *r, const ib_workload_info *info, const ib_config *cfg)
{
    cJSON *root = ib__json_document("inferbench.pitfalls/2", r->partial, r->stop_status, info);
    cJSON_AddNumberToObject(root, "batch", (double)info->batch);
    cJSON_AddItemToObject(root, "config", ib__json_config(cfg));
    ib__json_add_string_or_null(root, "reference_math", r->reference_math);
    cJSON_AddBoolToObject(root, "reference_math_default", r->reference_math_default);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (int k = 0; k < IB_PITFALL_COUNT; k++) cJSON_AddItemToArray(rows, row_json(&r->rows[k]));
    /* The correct row's runs: a session's part of the two-level interval. */
    if (r->correct_ms && r->n_correct > 0)
        cJSON_AddItemToObject(cJSON_GetArrayItem(rows, IB_PITFALL_CORRECT), "samples_ms",
                              ib__json_array(r->correct_ms, r->n_correct));
    cJSON_AddItemToObject(root, "energy", ib__json_energy_pitfall(&r->energy));
    /* The correct row's warnings: its samples and the GPU's state. */
    ib__json_add_warnings(root, r->warnings);
    cJSON_AddItemToObject(root, "environment", ib__json_env(&r->env));
    return ib__json_finish(root);
}
