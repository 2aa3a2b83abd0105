/* The generation report (docs/generate.md): text for people, JSON with
 * every token's time (docs/json.md, "generation"), CSV rows and Markdown
 * tables. It reads the result only. */
#include "report/printer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

/* The settings of the runtime, each where the backend knows it (0: it does
 * not, ib_gen_info): a caller's own model (the callbacks, the Python
 * binding) states no layers, threads, batches or attention of llama.cpp's
 * kind, and "flash attention off" would then be said of attention nobody
 * looked at. A runtime that states its physical batch states its attention
 * too. */
void ib__gen_threads_detail(char *buf, size_t cap, const ib_gen_info *in)
{
    if (in->n_threads_default > 0 && in->n_cpus_allowed > 0)
        snprintf(buf, cap, " (runtime default %d, %d cores allowed)", (int)in->n_threads_default,
                 (int)in->n_cpus_allowed);
    else if (in->n_cpus_allowed > 0)
        snprintf(buf, cap, " (%d cores allowed)", (int)in->n_cpus_allowed);
    else
        snprintf(buf, cap, "%s", "");
}

static void text_settings(ib__sbuf *b, const ib_gen_info *in)
{
    if (in->device == IB_DEVICE_CUDA && in->n_gpu_layers > 0)
        ib__sbuf_printf(b, ", %d layers offloaded", (int)in->n_gpu_layers);
    if (in->n_threads > 0) {
        char detail[64];
        ib__gen_threads_detail(detail, sizeof detail, in);
        ib__sbuf_printf(b, "; %d threads%s", (int)in->n_threads, detail);
    }
    ib__sbuf_printf(b, "\ncontext %d (%d x %d)", (int)in->n_ctx, (int)in->n_seq_max,
                    (int)(in->n_seq_max ? in->n_ctx / in->n_seq_max : 0));
    if (in->n_batch > 0) ib__sbuf_printf(b, ", n_batch %d", (int)in->n_batch);
    if (in->n_ubatch > 0)
        ib__sbuf_printf(b, ", n_ubatch %d, flash attention %s", (int)in->n_ubatch,
                        in->flash_attn ? "on" : "off");
    /* What the runtime does not state is left out, not printed as "? 0 MB". */
    if (in->kv_type[0] || in->kv_bytes > 0) ib__sbuf_printf(b, ", KV cache");
    if (in->kv_type[0]) ib__sbuf_printf(b, " %s", in->kv_type);
    if (in->kv_bytes > 0) ib__sbuf_printf(b, " %.4g MB", (double)in->kv_bytes / 1e6);
    if (in->model_bytes > 0) ib__sbuf_printf(b, ", model %.4g MB", (double)in->model_bytes / 1e6);
    ib__sbuf_printf(b, "\n");
}

/* Whether word (len bytes) names a model's size: "7B", "1.5B", "8x7B",
 * "135M", or llama.cpp's "?B" for a size it could not name. */
static bool size_word(const char *word, size_t len)
{
    if (len < 2 || !strchr("KMBT", word[len - 1])) return false;
    if (len == 2 && word[0] == '?') return true;
    for (size_t i = 0; i + 1 < len; i++)
        if (!strchr("0123456789.x", word[i])) return false;
    return word[0] >= '0' && word[0] <= '9';
}

/* The runtime's description without the words said elsewhere: its size
 * (the count of parameters says it) and its weights' type at its end. */
static void model_words(ib__sbuf *b, const ib_gen_info *in, bool *typed)
{
    size_t w_len = strlen(in->weights_type);
    *typed = false;
    int said = 0;
    for (const char *w = in->model_type; *w;) {
        size_t len = strcspn(w, " ");
        bool last = w[len] == '\0';
        if (last && w_len && len == w_len && !strncmp(w, in->weights_type, len)) *typed = true;
        if (len && !(size_word(w, len) && (in->n_params > 0 || w[0] == '?')))
            ib__sbuf_printf(b, "%s%.*s", said++ ? " " : "", (int)len, w);
        w += len + !last;
    }
}

void ib__gen_model_text(ib__sbuf *b, const ib_gen_info *in)
{
    /* The runtime's description often opens with the architecture
     * ("llama 1B F16"): then it is not said twice. */
    size_t arch_len = strlen(in->arch), start = b->len;
    bool described = arch_len && !strncmp(in->model_type, in->arch, arch_len), typed;
    if (!described && arch_len) ib__sbuf_printf(b, "%s%s", in->arch, in->model_type[0] ? " " : "");
    model_words(b, in, &typed);
    if (!typed && in->weights_type[0])
        ib__sbuf_printf(b, "%s%s", b->len > start ? ", " : "", in->weights_type);
    if (in->n_params == 0) return;
    double n = (double)in->n_params;
    const char *sep = b->len > start ? ", " : "";
    if (n >= 1e9)
        ib__sbuf_printf(b, "%s%.3g B parameters", sep, n / 1e9);
    else if (n >= 1e6)
        ib__sbuf_printf(b, "%s%.3g M parameters", sep, n / 1e6);
    else
        ib__sbuf_printf(b, "%s%.0f parameters", sep, n);
}

static void text_header(ib__sbuf *b, const ib_gen_result *r)
{
    const ib_gen_info *in = &r->info;
    ib__sbuf model = { 0 }; /* empty: nothing is known of the model */
    ib__gen_model_text(&model, in);
    if (model.failed) b->failed = true;
    ib__sbuf_printf(b, "inferbench generate: %s", in->model);
    if (model.len && !model.failed) ib__sbuf_printf(b, " (%s)", model.data);
    ib__sbuf_printf(b, "\n");
    free(model.data);
    ib__text_env(b, &r->env); /* the machine, without its line's end */
    ib__sbuf_printf(b, "\n");
    ib__gen_runtime_text(b, in);
    ib__sbuf_printf(
        b,
        "\nmethod: prompt of %d tokens from a cleared cache to synchronized logits (TTFT), then %d "
        "decode steps at depth %d, each timed alone (host clock around the call and its "
        "synchronize); random token ids, a fixed length: never stopped at end-of-sequence\n",
        (int)r->prompt_tokens, (int)r->new_tokens, (int)r->depth);
}

/* One row, every figure in the table's unit (scale: that unit per ms). */
static void stats_row(ib__sbuf *b, const char *label, const ib_stats *st, double scale)
{
    const double v[] = { st->mean, st->p50, st->p90, st->p99, st->p999, st->max, st->min };
    ib__sbuf_printf(b, "%-14s %7zu", label, st->n);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char t[32];
        ib__sbuf_printf(b, " %10s", ib__fmt_plain4(t, v[i] * scale));
    }
    ib__sbuf_printf(b, " %6.2f%%\n", 100 * st->cv);
}

double ib__gen_table_unit(const ib_gen_result *r, const char **unit)
{
    double smallest = r->token.n ? r->token.p50 : r->ttft.p50;
    if (r->ttft.n && r->ttft.p50 < smallest) smallest = r->ttft.p50;
    return ib__latency_unit(smallest, unit);
}

static void text_intervals(ib__sbuf *b, const char *name, const ib_stats *st)
{
    if (st->n < IB_STATS_CI_MIN_N) return;
    char label[64];
    snprintf(label, sizeof label, "%s median", name);
    ib__text_estimate(b, label, st->p50, st->ci95_median);
    ib__sbuf_printf(b, "\n");
}

/* Latency by token position: a few positions of the median over runs. */
static void text_positions(ib__sbuf *b, const ib_gen_result *r)
{
    if (!r->position_p50_ms || r->new_tokens < 2) return;
    int32_t n = r->new_tokens, marks[5] = { 0, n / 4, n / 2, 3 * n / 4, n - 1 };
    ib__sbuf_printf(b, "by position (median over runs):");
    for (int i = 0; i < 5; i++) {
        if (i > 0 && marks[i] == marks[i - 1]) continue;
        char t[32];
        ib__sbuf_printf(b, "%s step %d (position %d) %s", i ? "," : "", (int)marks[i] + 1,
                        (int)(r->depth + marks[i]), ib__fmt_ms(t, r->position_p50_ms[marks[i]]));
    }
    ib__sbuf_printf(b, "\n");
}

/* Which spread the noise warning judged (core/generate.c): the runs',
 * TTFT's and the request's, not the tokens' in the cv column above it,
 * which is the model's own (the position, the step after the prefill, the
 * tail). */
static void text_noise(ib__sbuf *b, const ib_gen_result *r)
{
    if (!(r->warnings & IB_WARN_HIGH_CV)) return;
    ib__sbuf_printf(b,
                    "noise: the warning below judges the runs' cv, TTFT %.2f%% and the request %.2f%%; the "
                    "tokens' cv is the model's own (the position, the step after the prefill, the tail)\n",
                    100 * r->ttft.cv, 100 * r->request.cv);
}

static void text_single(ib__sbuf *b, const ib_gen_result *r)
{
    char t1[32], t2[32], t3[32];
    ib__sbuf_printf(b, "cold: first prefill %s, first step %s (in no figure)\n",
                    ib__fmt_ms(t1, r->cold_prefill_ms), ib__fmt_ms(t2, r->cold_step_ms));
    ib__sbuf_printf(b, "warm-up: %lld runs in %s%s\n", (long long)r->warmup_runs_done,
                    ib__fmt_ms(t3, r->warmup_ms_spent), r->warmup_steady ? ", steady" : ", NOT steady");
    if (r->runs == 0) {
        ib__sbuf_printf(b, "no timed run completed\n");
        return;
    }
    const char *unit;
    double scale = ib__gen_table_unit(r, &unit);
    ib__sbuf_printf(b, "\n%-14s %7s %10s %10s %10s %10s %10s %10s %10s %7s\n", unit, "n", "mean", "p50",
                    "p90", "p99", "p99.9", "max", "min", "cv");
    stats_row(b, "TTFT", &r->ttft, scale);
    stats_row(b, "per token", &r->token, scale);
    stats_row(b, "request", &r->request, scale);
    if (r->sample.n) stats_row(b, "sampling", &r->sample, scale);
    ib__sbuf_printf(b, "\n");
    text_intervals(b, "TTFT", &r->ttft);
    text_intervals(b, "per-token", &r->token);
    ib__sbuf_printf(b, "prompt: %.1f tokens/s (%d x %zu runs / prefill time)\n", r->prompt_tokens_per_s,
                    (int)r->prompt_tokens, r->runs);
    ib__sbuf_printf(b, "generation: %.1f tokens/s (%zu tokens / their time), TPOT %s\n", r->tokens_per_s,
                    r->runs * (size_t)r->new_tokens, ib__fmt_ms(t1, r->tpot_ms));
    ib__sbuf_printf(b, "request: TTFT + %d later tokens, median %s\n", (int)r->new_tokens - 1,
                    ib__fmt_ms(t1, r->request.p50));
    text_positions(b, r);
    text_noise(b, r);
    if (r->precision_target > 0)
        ib__sbuf_printf(b, "precision target +-%s: %s after %zu runs\n",
                        ib__fmt_percent(t1, r->precision_target), r->precision_met ? "met" : "NOT met",
                        r->runs);
}

/* Tokens per joule by sequence count, the most efficient beside the
 * fastest (energy_report.c's table, as throughput's by batch). */
static void text_sequences_energy(ib__sbuf *b, const ib_gen_result *r)
{
    ib__energy_curve_columns cols;
    ib__energy_curve c = ib__energy_curve_of_sequences(r, &cols);
    ib__text_energy_table(b, &c);
}

void ib__gen_search_sentence(ib__sbuf *b, const ib_gen_result *r)
{
    ib__sbuf_printf(b, "the largest that fits is %d sequences%s%s%s", (int)r->largest_fitting,
                    r->limited_by_max ? " (the search's bound, not memory)" : "",
                    r->limit_reason[0] ? "; above it: " : "", r->limit_reason);
}

const char *ib__gen_point_marks(char buf[64], const ib_gen_result *r, int i, const char *sep)
{
    snprintf(buf, 64, "%s%s%s%s%s", i == r->peak ? "peak" : "", i == r->peak && i == r->knee ? sep : "",
             i == r->knee ? "knee" : "",
             (i == r->peak || i == r->knee) && i == r->best_within_budget ? sep : "",
             i == r->best_within_budget ? "best within budget" : "");
    return buf;
}

/* The unit of the sequences' table: its fastest step's. */
static double sequences_unit(const ib_gen_result *r, const char **unit)
{
    double smallest = INFINITY;
    for (size_t i = 0; i < r->n_points; i++)
        if (r->points[i].status == IB_OK) smallest = fmin(smallest, r->points[i].step_ms.p50);
    return ib__latency_unit(isfinite(smallest) ? smallest : 1, unit);
}

void ib__gen_budget_line(ib__sbuf *b, const char *before, const char *after, const ib_gen_result *r)
{
    if (r->tpot_budget_ms > 0 && r->best_within_budget < 0)
        ib__sbuf_printf(b, "%sno count has a TPOT within %g ms%s", before, r->tpot_budget_ms, after);
}

static void text_sequences(ib__sbuf *b, const ib_gen_result *r)
{
    if (!r->n_points && !r->searched) return;
    ib__sbuf_printf(b, "\nsequences decoded together (%d tokens of context each):\n",
                    (int)r->search_ctx_per_seq);
    if (r->searched) {
        ib__sbuf_printf(b, "search: ");
        ib__gen_search_sentence(b, r);
        ib__sbuf_printf(b, "\n");
    }
    const char *unit;
    double scale = sequences_unit(r, &unit);
    char heads[3][24];
    snprintf(heads[0], sizeof heads[0], "step p50 %s", unit);
    snprintf(heads[1], sizeof heads[1], "p99 %s", unit);
    snprintf(heads[2], sizeof heads[2], "TPOT %s", unit);
    ib__sbuf_printf(b, "%9s %12s %10s %10s %12s\n", "sequences", heads[0], heads[1], heads[2], "tokens/s");
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_gen_point *p = &r->points[i];
        if (p->status != IB_OK) {
            ib__sbuf_printf(b, "%9d %s\n", (int)p->sequences, ib_status_str(p->status));
            continue;
        }
        char t[3][32], marks[64];
        ib__gen_point_marks(marks, r, (int)i, "  ");
        ib__sbuf_printf(
            b, "%9d %12s %10s %10s %12.1f%s%s\n", (int)p->sequences,
            ib__fmt_plain4(t[0], p->step_ms.p50 * scale), ib__fmt_plain4(t[1], p->step_ms.p99 * scale),
            ib__fmt_plain4(t[2], p->tpot_ms * scale), p->tokens_per_s, marks[0] ? "  " : "", marks);
    }
    ib__gen_budget_line(b, "", "\n", r);
    text_sequences_energy(b, r);
}

/* The decode window's energy per output token, the prefill's per prompt
 * token, the CPU package's; where none has a figure, one line. */
static void text_energy(ib__sbuf *b, const ib_gen_result *r)
{
    const ib_energy *d = &r->decode_energy, *p = &r->prefill_energy, *cpu = &r->decode_cpu_energy;
    if (r->runs == 0) return;
    ib__sbuf_printf(b, "\n");
    if (d->source == IB_ENERGY_NONE && p->source == IB_ENERGY_NONE && cpu->source == IB_ENERGY_NONE) {
        ib__sbuf_printf(b, "energy: no figure: %s", d->note);
        if (strcmp(cpu->note, d->note)) ib__sbuf_printf(b, "; the CPU package: %s", cpu->note);
        ib__sbuf_printf(b, "\n");
        return;
    }
    ib__text_energy_of(b, "energy per output token (decode)", d, "token");
    ib__text_energy_of(b, "energy per prompt token (prefill)", p, "token");
    if (p->source != IB_ENERGY_NONE)
        ib__sbuf_printf(b, "  a request's prefill of %d tokens: %.4g J\n", (int)r->prompt_tokens,
                        p->joules_per_item * r->prompt_tokens);
    ib__text_energy_of(b, "CPU package energy per output token", cpu, "token");
}

static void text_pitfalls(ib__sbuf *b, const ib_gen_result *r)
{
    if (!r->has_pitfalls) return;
    ib__sbuf_printf(b,
                    "\npitfalls (what each mistake reports, beside the correct figure; the 95%% interval of "
                    "the medians' change, as `compare` computes it, within noise when it holds 0):\n");
    ib__sbuf_printf(b, "%-34s %-17s %12s %12s %9s %17s  %s\n", "method", "figure", "reports", "correct",
                    "error", "95% interval", "reading");
    for (int k = 0; k < IB_GEN_PITFALL_COUNT; k++) {
        const ib_gen_pitfall_row *row = &r->pitfalls[k];
        if (!row->applies) {
            ib__sbuf_printf(b, "%-34s n/a: %s\n", row->name, row->not_applicable);
            continue;
        }
        if (row->status != IB_OK) {
            ib__sbuf_printf(b, "%-34s failed: %s\n", row->name, row->error);
            continue;
        }
        char interval[48];
        ib__sbuf_printf(b, "%-34s %-17s %12.5g %12.5g %+8.1f%% %17s  %s\n", row->name, row->figure,
                        row->wrong, row->correct, ib__signed_shown(row->error_pct, 1),
                        ib__fmt_pitfall_interval(interval, row->error_ci95_pct, row->reading),
                        ib_pitfall_reading_name(row->reading));
    }
    for (int k = 0; k < IB_GEN_PITFALL_COUNT; k++) {
        const ib_gen_pitfall_row *row = &r->pitfalls[k];
        if (!row->applies) continue;
        ib__sbuf_printf(b, "  %s: %s", row->name, row->why);
        if (row->no_interval) ib__sbuf_printf(b, " (no interval: %s)", row->no_interval);
        ib__sbuf_printf(b, "\n");
    }
}

char *ib__gen_report_text(const ib_gen_result *r)
{
    ib__sbuf b = { 0 };
    text_header(&b, r);
    text_single(&b, r);
    text_energy(&b, r);
    text_sequences(&b, r);
    text_pitfalls(&b, r);
    ib__text_footer(&b, r->partial, r->stop_status, &r->env, r->warnings);
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

static cJSON *json_info(const ib_gen_info *in)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", in->model);
    ib__json_add_string_or_null(o, "arch", in->arch);
    ib__json_add_string_or_null(o, "model_type", in->model_type);
    ib__json_add_string_or_null(o, "weights_type", in->weights_type);
    cJSON_AddNumberToObject(o, "n_params", (double)in->n_params);
    cJSON_AddNumberToObject(o, "model_bytes", (double)in->model_bytes);
    cJSON_AddNumberToObject(o, "n_layers", in->n_layers);
    cJSON_AddNumberToObject(o, "n_embd", in->n_embd);
    cJSON_AddNumberToObject(o, "n_vocab", in->n_vocab);
    cJSON_AddNumberToObject(o, "n_ctx_train", in->n_ctx_train);
    cJSON_AddStringToObject(o, "device", ib__device_name(in->device));
    cJSON_AddNumberToObject(o, "device_id", in->device_id);
    cJSON_AddNumberToObject(o, "n_gpu_layers", in->n_gpu_layers);
    cJSON_AddNumberToObject(o, "n_ctx", in->n_ctx);
    cJSON_AddNumberToObject(o, "n_seq_max", in->n_seq_max);
    cJSON_AddNumberToObject(o, "n_batch", in->n_batch);
    cJSON_AddNumberToObject(o, "n_ubatch", in->n_ubatch);
    cJSON_AddBoolToObject(o, "flash_attn", in->flash_attn);
    ib__json_add_string_or_null(o, "kv_type", in->kv_type);
    cJSON_AddNumberToObject(o, "kv_bytes", (double)in->kv_bytes);
    cJSON_AddNumberToObject(o, "n_threads", in->n_threads);
    cJSON_AddNumberToObject(o, "n_threads_default", in->n_threads_default);
    cJSON_AddNumberToObject(o, "n_cpus_allowed", in->n_cpus_allowed);
    ib__json_add_string_or_null(o, "runtime_version", in->runtime_version);
    ib__json_add_string_or_null(o, "runtime_library", in->runtime_library);
    cJSON_AddItemToObject(o, "options", ib__json_options(&in->options));
    return o;
}

static cJSON *json_settings(const ib_gen_result *r, const ib_gen_config *cfg)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "prompt_tokens", r->prompt_tokens);
    cJSON_AddNumberToObject(o, "new_tokens", r->new_tokens);
    cJSON_AddNumberToObject(o, "depth", r->depth);
    cJSON_AddNumberToObject(o, "ctx_per_seq", r->ctx_per_seq);
    cJSON_AddBoolToObject(o, "fixed_length", r->fixed_length);
    cJSON_AddStringToObject(o, "tokens", "random ids");
    cJSON_AddBoolToObject(o, "time_sampling", cfg->time_sampling);
    cJSON_AddNumberToObject(o, "sequence_runs", (double)cfg->sequence_runs);
    cJSON_AddItemToObject(o, "run", ib__json_config(&cfg->run));
    return o;
}

/* Every token's time: one array of N per run. */
static cJSON *json_per_run(const double *x, size_t runs, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t k = 0; x && k < runs; k++) cJSON_AddItemToArray(a, ib__json_array(x + k * n, n));
    return a;
}

static void json_single(cJSON *root, const ib_gen_result *r)
{
    ib__json_add_number(root, "cold_prefill_ms", r->cold_prefill_ms);
    ib__json_add_number(root, "cold_step_ms", r->cold_step_ms);
    ib__json_add_warmup(root, r->warmup_runs_done, r->warmup_ms_spent, r->warmup_steady);
    cJSON_AddNumberToObject(root, "runs", (double)r->runs);
    ib__json_add_stats_or_null(root, "ttft_ms", &r->ttft);
    ib__json_add_stats_or_null(root, "token_ms", &r->token);
    ib__json_add_stats_or_null(root, "request_ms", &r->request);
    ib__json_add_stats_or_null(root, "sample_ms", &r->sample);
    ib__json_add_number(root, "prompt_tokens_per_s", r->prompt_tokens_per_s);
    ib__json_add_number(root, "tokens_per_s", r->tokens_per_s);
    ib__json_add_number(root, "tpot_ms", r->tpot_ms);
    ib__json_add_number(root, "timer_resolution_ms", r->timer_resolution_ms);
    ib__json_add_precision(root, r->precision_target, r->precision_achieved, r->precision_met);
    size_t n = (size_t)r->new_tokens;
    cJSON *s = cJSON_AddObjectToObject(root, "samples");
    cJSON_AddItemToObject(s, "ttft_ms", ib__json_array(r->ttft_ms, r->runs));
    cJSON_AddItemToObject(s, "request_ms", ib__json_array(r->request_ms, r->runs));
    cJSON_AddItemToObject(s, "token_ms", json_per_run(r->token_ms, r->runs, n));
    if (r->sample_ms)
        cJSON_AddItemToObject(s, "sample_ms", json_per_run(r->sample_ms, r->runs, n));
    else
        cJSON_AddNullToObject(s, "sample_ms");
    if (r->position_p50_ms)
        cJSON_AddItemToObject(root, "position_p50_ms", ib__json_array(r->position_p50_ms, n));
    else
        cJSON_AddNullToObject(root, "position_p50_ms");
}

/* The energy objects (docs/energy.md): items are output tokens for the
 * decode window, prompt tokens for the prefill's. */
static void json_energy(cJSON *root, const ib_gen_result *r)
{
    cJSON_AddItemToObject(root, "decode_energy", ib__json_energy(&r->decode_energy));
    cJSON_AddItemToObject(root, "decode_cpu_energy", ib__json_energy(&r->decode_cpu_energy));
    cJSON *p = ib__json_energy(&r->prefill_energy);
    ib__json_add_number(p, "joules_per_request", r->prefill_energy.joules_per_item * r->prompt_tokens);
    cJSON_AddItemToObject(root, "prefill_energy", p);
}

static cJSON *json_points(const ib_gen_result *r)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < r->n_points; i++) {
        const ib_gen_point *p = &r->points[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "sequences", p->sequences);
        cJSON_AddStringToObject(o, "status", p->status == IB_OK ? "ok" : ib_status_str(p->status));
        ib__json_add_stats_or_null(o, "step_ms", &p->step_ms);
        ib__json_add_number(o, "tokens_per_s", p->tokens_per_s);
        ib__json_add_number(o, "tpot_ms", p->tpot_ms);
        cJSON_AddNumberToObject(o, "steps", (double)p->steps);
        ib__json_add_number(o, "first_step_ms", p->first_step_ms);
        cJSON_AddItemToObject(o, "energy", ib__json_energy(&p->energy));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *json_index(int i, const ib_gen_result *r)
{
    return i >= 0 ? cJSON_CreateNumber(r->points[i].sequences) : cJSON_CreateNull();
}

static void json_sequences(cJSON *root, const ib_gen_result *r)
{
    cJSON *o = cJSON_AddObjectToObject(root, "sequences");
    cJSON_AddNumberToObject(o, "ctx_per_seq", r->search_ctx_per_seq);
    cJSON_AddBoolToObject(o, "searched", r->searched);
    cJSON_AddNumberToObject(o, "largest_fitting", r->largest_fitting);
    cJSON_AddBoolToObject(o, "limited_by_max", r->limited_by_max);
    ib__json_add_string_or_null(o, "limit_reason", r->limit_reason);
    cJSON *probes = cJSON_AddArrayToObject(o, "probes");
    for (size_t i = 0; i < r->n_probes; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "sequences", r->probes[i].sequences);
        cJSON_AddBoolToObject(p, "fits", r->probes[i].fits);
        cJSON_AddStringToObject(p, "status", r->probes[i].fits ? "ok" : ib_status_str(r->probes[i].status));
        ib__json_add_number(p, "ms", r->probes[i].ms);
        cJSON_AddItemToArray(probes, p);
    }
    cJSON_AddItemToObject(o, "points", json_points(r));
    cJSON_AddItemToObject(o, "peak", json_index(r->peak, r));
    cJSON_AddItemToObject(o, "knee", json_index(r->knee, r));
    cJSON_AddItemToObject(o, "most_efficient", json_index(r->most_efficient, r));
    ib__json_add_number(o, "tpot_budget_ms", r->tpot_budget_ms > 0 ? r->tpot_budget_ms : NAN);
    cJSON_AddItemToObject(o, "best_within_budget", json_index(r->best_within_budget, r));
}

static const char *const pitfall_keys[IB_GEN_PITFALL_COUNT] = {
    "no_sync", "prefill_in_rate",      "no_warmup", "empty_context", "mean_of_rates", "one_run", "eos",
    "threads", "back_to_back_prefill",
};

static void json_pitfalls(cJSON *root, const ib_gen_result *r)
{
    if (!r->has_pitfalls) return;
    cJSON *a = cJSON_AddArrayToObject(root, "pitfalls");
    for (int k = 0; k < IB_GEN_PITFALL_COUNT; k++) {
        const ib_gen_pitfall_row *row = &r->pitfalls[k];
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
        cJSON_AddNumberToObject(o, "detail", row->detail);
        cJSON_AddItemToArray(a, o);
    }
}

char *ib__gen_report_json(const ib_gen_result *r, const ib_gen_config *cfg)
{
    cJSON *root = ib__json_document("inferbench.generation/1", r->partial, r->stop_status, NULL);
    cJSON_AddStringToObject(root, "model", r->info.model);
    cJSON_AddStringToObject(root, "device", ib__device_name(r->info.device));
    cJSON_AddStringToObject(root, "timing", "host-clock-synchronized");
    cJSON_AddItemToObject(root, "workload", json_info(&r->info));
    cJSON_AddItemToObject(root, "settings", json_settings(r, cfg));
    json_single(root, r);
    json_energy(root, r);
    json_sequences(root, r);
    json_pitfalls(root, r);
    ib__json_add_warnings(root, r->warnings);
    cJSON_AddItemToObject(root, "environment", ib__json_env(&r->env));
    return ib__json_finish(root);
}

/* ------------------------------------------------------------------------ */
/* CSV and Markdown                                                          */
/* ------------------------------------------------------------------------ */

/* One figure's rows: "energy,decode_joules_per_token,..." for the request's
 * windows (window: "decode", "prefill"), "sequences,joules_per_token,..."
 * for a point's (window NULL); none without a figure. per_request: the
 * tokens of a request's prefill (NaN: no such row). */
static void csv_energy(ib__sbuf *b, const char *window, const ib_energy *e, int32_t sequences,
                       double per_request)
{
    if (e->source == IB_ENERGY_NONE) return;
    const char *names[] = {
        "joules_per_token",  "tokens_per_joule", "energy_bound", "power_w", "joules_per_token_above_idle",
        "joules_per_request"
    };
    const char *units[] = { "J", "tokens/J", "fraction", "W", "J", "J" };
    double values[] = { e->joules_per_item,
                        e->items_per_joule,
                        e->bound,
                        e->power_w,
                        e->joules_per_item_above_idle,
                        e->joules_per_item * per_request };
    for (int i = 0; i < 6; i++) {
        if (i == 5 && isnan(per_request)) continue;
        if (window)
            ib__sbuf_printf(b, "energy,%s_%s,,,,%d", window, names[i], (int)sequences);
        else
            ib__sbuf_printf(b, "sequences,%s,,,,%d", names[i], (int)sequences);
        ib__csv_number(b, values[i]);
        ib__sbuf_printf(b, ",%s\r\n", units[i]);
    }
}

/* A pitfall's difference, its interval's bounds (in %) and its reading
 * (in the value column, a word), a row each under the pitfall's name. */
static void csv_pitfall_reading(ib__sbuf *b, const ib_gen_pitfall_row *row)
{
    const char *kinds[] = { "pitfall_error", "pitfall_ci95_low", "pitfall_ci95_high" };
    const double values[] = { row->error_pct, row->error_ci95_pct[0], row->error_ci95_pct[1] };
    for (int i = 0; i < 3; i++) {
        ib__sbuf_printf(b, "%s", kinds[i]);
        ib__csv_text_cell(b, row->name);
        ib__sbuf_printf(b, ",,,,1");
        ib__csv_number(b, values[i]);
        ib__sbuf_printf(b, ",%%\r\n");
    }
    ib__sbuf_printf(b, "pitfall_verdict");
    ib__csv_text_cell(b, row->name);
    ib__sbuf_printf(b, ",,,,1");
    ib__csv_text_cell(b, ib_pitfall_reading_name(row->reading));
    ib__sbuf_printf(b, ",\r\n");
}

/* CSV (RFC 4180, CRLF as the other results' CSV): one row per timed token (kind "token", run, step, position,
 * ms), per TTFT
 * ("ttft", run), per point ("sequences": count, tokens/s in value) and per
 * pitfall ("pitfall": its name, what it reports in ms or tokens/s; then
 * its reading, csv_pitfall_reading). */
char *ib__gen_report_csv(const ib_gen_result *r)
{
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "kind,name,run,step,position,sequences,value,unit\r\n");
    size_t n = (size_t)r->new_tokens;
    for (size_t k = 0; k < r->runs; k++) {
        ib__sbuf_printf(&b, "ttft,,%zu,,,1", k);
        ib__csv_number(&b, r->ttft_ms[k]);
        ib__sbuf_printf(&b, ",ms\r\n");
        for (size_t i = 0; i < n; i++) {
            ib__sbuf_printf(&b, "token,,%zu,%zu,%zu,1", k, i, (size_t)r->depth + i);
            ib__csv_number(&b, r->token_ms[k * n + i]);
            ib__sbuf_printf(&b, ",ms\r\n");
        }
    }
    for (size_t i = 0; i < r->n_points; i++) {
        if (r->points[i].status != IB_OK) continue;
        ib__sbuf_printf(&b, "sequences,tokens_per_s,,,,%d", (int)r->points[i].sequences);
        ib__csv_number(&b, r->points[i].tokens_per_s);
        ib__sbuf_printf(&b, ",tokens/s\r\nsequences,tpot_ms,,,,%d", (int)r->points[i].sequences);
        ib__csv_number(&b, r->points[i].tpot_ms);
        ib__sbuf_printf(&b, ",ms\r\n");
    }
    csv_energy(&b, "decode", &r->decode_energy, 1, NAN);
    csv_energy(&b, "prefill", &r->prefill_energy, 1, r->prompt_tokens);
    for (size_t i = 0; i < r->n_points; i++)
        if (r->points[i].status == IB_OK)
            csv_energy(&b, NULL, &r->points[i].energy, r->points[i].sequences, NAN);
    for (int k = 0; r->has_pitfalls && k < IB_GEN_PITFALL_COUNT; k++) {
        const ib_gen_pitfall_row *row = &r->pitfalls[k];
        if (!row->applies || row->status != IB_OK) continue;
        ib__sbuf_printf(&b, "pitfall");
        ib__csv_text_cell(&b, row->name);
        ib__sbuf_printf(&b, ",,,,1");
        ib__csv_number(&b, row->wrong);
        ib__csv_text_cell(&b, row->figure);
        ib__sbuf_printf(&b, "\r\n");
        csv_pitfall_reading(&b, row);
    }
    return ib__sbuf_finish(&b);
}

/* The request's energy: a row each for the decode and the prefill window,
 * or one line why there is none. */
static void md_energy(ib__sbuf *b, const ib_gen_result *r)
{
    const ib_energy *rows[] = { &r->decode_energy, &r->prefill_energy };
    const char *names[] = { "decode", "prefill" };
    if (rows[0]->source == IB_ENERGY_NONE && rows[1]->source == IB_ENERGY_NONE) {
        ib__sbuf_printf(b, "\nenergy: no figure: ");
        ib__md_cell(b, rows[0]->note);
        ib__sbuf_printf(b, "\n");
        return;
    }
    ib__sbuf_printf(b, "\n| energy | J/token | tokens/J | +- | W | J/token above idle |\n"
                       "|---|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < 2; i++) {
        const ib_energy *e = rows[i];
        if (e->source == IB_ENERGY_NONE) {
            ib__sbuf_printf(b, "| %s | no figure: ", names[i]);
            ib__md_cell(b, e->note);
            ib__sbuf_printf(b, " | | | | |\n");
            continue;
        }
        ib__sbuf_printf(b, "| %s | %.4g | %.4g | %.2g%% | %.4g | %.4g |\n", names[i], e->joules_per_item,
                        e->items_per_joule, 100 * e->bound, e->power_w, e->joules_per_item_above_idle);
    }
}

/* The sequences decoded together: a row per count, its marks as the
 * text's, the search's sentence and the budget's line as the text's. */
static void md_sequences(ib__sbuf *b, const ib_gen_result *r)
{
    if (!r->n_points && !r->searched) return;
    if (r->searched) {
        ib__sbuf_printf(b, "\nsearch: ");
        ib__gen_search_sentence(b, r);
        ib__sbuf_printf(b, "\n");
    }
    if (r->n_points)
        ib__sbuf_printf(b, "\n| sequences | step p50 | p99 | TPOT | tokens/s | tokens/J | |\n"
                           "|---:|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < r->n_points; i++) {
        char t[4][32], marks[64];
        const ib_gen_point *p = &r->points[i];
        if (p->status != IB_OK) {
            ib__sbuf_printf(b, "| %d | - | - | - | - | - | %s |\n", (int)p->sequences,
                            ib_status_str(p->status));
            continue;
        }
        ib__sbuf_printf(b, "| %d | %s | %s | %s | %.1f | %s%s | %s |\n", (int)p->sequences,
                        ib__fmt_ms(t[0], p->step_ms.p50), ib__fmt_ms(t[1], p->step_ms.p99),
                        ib__fmt_ms(t[2], p->tpot_ms), p->tokens_per_s,
                        ib__fmt_inputs_per_joule(t[3], &p->energy),
                        (int)i == r->most_efficient ? " (most efficient)" : "",
                        ib__gen_point_marks(marks, r, (int)i, ", "));
    }
    ib__gen_budget_line(b, "\n", "\n", r);
}

/* The statistics as latency's Markdown prints them (each figure in its
 * unit, the median's interval), the rates, the energy, the sequences, the
 * pitfalls, then the warnings as every result's Markdown ends. */
char *ib__gen_report_md(const ib_gen_result *r)
{
    ib__sbuf b = { 0 };
    char t[32];
    ib__sbuf_printf(&b, "### inferbench generate: ");
    ib__md_cell(&b, r->info.model);
    ib__sbuf_printf(&b, "\n\nprompt %d tokens, %d new tokens at depth %d, %zu runs%s\n\n",
                    (int)r->prompt_tokens, (int)r->new_tokens, (int)r->depth, r->runs,
                    r->partial ? " (PARTIAL)" : "");
    ib__md_stats_header(&b, "figure");
    const ib_stats *rows[] = { &r->ttft, &r->token, &r->request, &r->sample };
    const char *names[] = { "TTFT", "per token", "request", "sampling" };
    for (int i = 0; i < 4; i++)
        if (rows[i]->n) ib__md_stats_row(&b, names[i], rows[i]);
    ib__sbuf_printf(&b, "\nprompt %.1f tokens/s, generation %.1f tokens/s, TPOT %s\n", r->prompt_tokens_per_s,
                    r->tokens_per_s, ib__fmt_ms(t, r->tpot_ms));
    md_energy(&b, r);
    md_sequences(&b, r);
    if (r->has_pitfalls) {
        ib__sbuf_printf(&b,
                        "\n| method | figure | reports | correct | error | 95%% interval | reading | why |\n"
                        "|---|---|---:|---:|---:|---:|---|---|\n");
        for (int k = 0; k < IB_GEN_PITFALL_COUNT; k++) {
            const ib_gen_pitfall_row *row = &r->pitfalls[k];
            char interval[48];
            if (!row->applies || row->status != IB_OK) continue;
            ib__sbuf_printf(&b, "| %s | %s | %.5g | %.5g | %+.1f%% | %s | %s | ", row->name, row->figure,
                            row->wrong, row->correct, ib__signed_shown(row->error_pct, 1),
                            ib__fmt_pitfall_interval(interval, row->error_ci95_pct, row->reading),
                            ib_pitfall_reading_name(row->reading));
            ib__md_cell(&b, row->why);
            ib__sbuf_printf(&b, " |\n");
        }
    }
    ib__md_footer(&b, r->partial, r->stop_status, r->warnings);
    return ib__sbuf_finish(&b);
}

/* The runtime, the device, the settings and the options, a line each (a
 * caller's own model may name no runtime: the line says what is known):
 * generate's and a generative model's serve's (gen_serve_report.c). */
void ib__gen_runtime_text(ib__sbuf *b, const ib_gen_info *in)
{
    if (in->runtime_version[0])
        ib__sbuf_printf(b, "runtime %s%s%s; ", in->runtime_version, in->runtime_library[0] ? " from " : "",
                        in->runtime_library);
    ib__sbuf_printf(b, "device %s", ib__device_name(in->device));
    if (in->device == IB_DEVICE_CUDA) ib__sbuf_printf(b, " %d", in->device_id);
    text_settings(b, in);
    char opts[IB__OPTIONS_TEXT_LEN];
    ib__format_options(opts, sizeof opts, &in->options);
    if (opts[0]) ib__sbuf_printf(b, "options: %s\n", opts);
}

cJSON *ib__gen_json_info(const ib_gen_info *in) { return json_info(in); }
