/* A generative model's serve (docs/serve-generative.md): the prompts and
 * the prefix cache in a line, and the pitfalls (serve --pitfalls), each
 * mistake's figure beside the correct one with compare's interval and
 * its reading; text, JSON and Markdown, called from gen_serve_report.c
 * (and from the Markdown and HTML printers of a generative serve). */
#include "report/gen_serve_sections.h"

#include <math.h>

void ib__gen_serve_prompts_text(ib__sbuf *b, const ib_gen_serve_result *r)
{
    if (r->shared_prefix > 0)
        ib__sbuf_printf(b, "prompts: the first %d tokens alike in every prompt (a prefix-cache experiment), ",
                        (int)r->shared_prefix);
    else
        ib__sbuf_printf(b, "prompts: random ids of each request's own, ");
    if (!r->prefix_cache) {
        ib__sbuf_printf(b, "prefix cache off\n");
        return;
    }
    double per = r->n_requests ? (double)r->cached_tokens / (double)r->n_requests : 0;
    ib__sbuf_printf(
        b, "prefix cache on: %lld prompt tokens reused from a slot's last request (%.4g a request)\n",
        (long long)r->cached_tokens, per);
}

void ib__gen_serve_prompts_json(cJSON *settings, cJSON *figures, const ib_gen_serve_result *r)
{
    cJSON_AddNumberToObject(settings, "shared_prefix", r->shared_prefix);
    cJSON_AddBoolToObject(settings, "prefix_cache", r->prefix_cache);
    cJSON_AddNumberToObject(figures, "cached_tokens", (double)r->cached_tokens);
}

void ib__gen_serve_pitfalls_text(ib__sbuf *b, const ib_gen_serve_result *r)
{
    if (!r->has_pitfalls) return;
    ib__sbuf_printf(
        b, "\npitfalls of serving benchmarks (what each mistake reports, beside the correct figure; the "
           "95%% interval of the medians' change, as `compare` computes it, within noise when it "
           "holds 0):\n");
    ib__sbuf_printf(b, "%-26s %-13s %12s %12s %9s %17s  %s\n", "method", "figure", "reports", "correct",
                    "error", "95% interval", "reading");
    for (int k = 0; k < IB_GEN_SERVE_PITFALL_COUNT; k++) {
        const ib_gen_serve_pitfall_row *row = &r->pitfalls[k];
        if (!row->name) continue; /* not a row of this side (in process or over HTTP) */
        if (!row->applies) {
            ib__sbuf_printf(b, "%-26s n/a: %s\n", row->name, row->not_applicable);
            continue;
        }
        if (row->status != IB_OK) {
            ib__sbuf_printf(b, "%-26s failed: %s\n", row->name, row->error);
            continue;
        }
        char interval[48];
        ib__sbuf_printf(b, "%-26s %-13s %12.5g %12.5g %+8.1f%% %17s  %s\n", row->name, row->figure,
                        row->wrong, row->correct, ib__signed_shown(row->error_pct, 1),
                        ib__fmt_pitfall_interval(interval, row->error_ci95_pct, row->reading),
                        ib_pitfall_reading_name(row->reading));
    }
    for (int k = 0; k < IB_GEN_SERVE_PITFALL_COUNT; k++) {
        const ib_gen_serve_pitfall_row *row = &r->pitfalls[k];
        if (!row->name || !row->applies) continue;
        ib__sbuf_printf(b, "  %s: %s", row->name, row->why);
        if (row->no_interval) ib__sbuf_printf(b, " (no interval: %s)", row->no_interval);
        ib__sbuf_printf(b, "\n");
    }
}

static const char *const pitfall_keys[IB_GEN_SERVE_PITFALL_COUNT] = {
    [IB_GEN_SERVE_PITFALL_ACTUAL_START] = "ttft_from_admission",
    [IB_GEN_SERVE_PITFALL_ALL_AT_ONCE] = "all_at_time_zero",
    [IB_GEN_SERVE_PITFALL_NO_WARMUP] = "no_warmup",
    [IB_GEN_SERVE_PITFALL_MEAN_TPOT] = "mean_of_request_tpot",
    [IB_GEN_SERVE_PITFALL_REPEATED_PROMPT] = "repeated_prompt",
    [IB_GEN_SERVE_PITFALL_DECODE_ONLY] = "decode_only_tpot",
    [IB_GEN_SERVE_PITFALL_CHUNK_GAPS] = "chunk_gaps_as_token_gaps",
};

void ib__gen_serve_pitfalls_json(cJSON *root, const ib_gen_serve_result *r)
{
    if (!r->has_pitfalls) return;
    cJSON *a = cJSON_AddArrayToObject(root, "pitfalls");
    for (int k = 0; k < IB_GEN_SERVE_PITFALL_COUNT; k++) {
        const ib_gen_serve_pitfall_row *row = &r->pitfalls[k];
        if (!row->name) continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "key", pitfall_keys[k]);
        cJSON_AddStringToObject(o, "name", row->name);
        cJSON_AddStringToObject(o, "figure", row->figure);
        cJSON_AddBoolToObject(o, "applies", row->applies);
        ib__json_add_string_or_null(o, "not_applicable", row->applies ? NULL : row->not_applicable);
        cJSON_AddStringToObject(o, "status", row->status == IB_OK ? "ok" : ib_status_str(row->status));
        ib__json_add_string_or_null(o, "error", row->error);
        ib__json_add_number(o, "reports", row->wrong);
        ib__json_add_number(o, "correct", row->correct);
        ib__json_add_number(o, "error_pct", row->error_pct);
        ib__json_pitfall_reading(o, row->error_ci95_pct, row->reading, row->no_interval);
        cJSON_AddStringToObject(o, "why", row->why);
        cJSON_AddItemToArray(a, o);
    }
}

void ib__gen_serve_pitfalls_md(ib__sbuf *b, const ib_gen_serve_result *r)
{
    if (!r->has_pitfalls) return;
    ib__sbuf_printf(b, "\n| method | figure | reports | correct | error | 95%% interval | reading | why |\n"
                       "|---|---|---:|---:|---:|---:|---|---|\n");
    for (int k = 0; k < IB_GEN_SERVE_PITFALL_COUNT; k++) {
        const ib_gen_serve_pitfall_row *row = &r->pitfalls[k];
        char interval[48];
        if (!row->name || !row->applies || row->status != IB_OK) continue;
        ib__sbuf_printf(b, "| %s | %s | %.5g | %.5g | %+.1f%% | %s | %s | ", row->name, row->figure,
                        row->wrong, row->correct, ib__signed_shown(row->error_pct, 1),
                        ib__fmt_pitfall_interval(interval, row->error_ci95_pct, row->reading),
                        ib_pitfall_reading_name(row->reading));
        ib__md_cell(b, row->why);
        ib__sbuf_printf(b, " |\n");
    }
}
