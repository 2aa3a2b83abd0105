/* A generation result read back (ib_gen_file_parse) and two of them
 * compared (ib_compare_gen_files, its text and JSON): what compare needs of
 * the JSON generate_report.c writes. */
#include "report/printer.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GEN_SCHEMA "inferbench.generation/1"

static ib_status bad(ib_error *err, const char *why)
{
    return ib__fail(err, IB_ERR_INVALID_ARG, "not an inferbench generation result: %s", why);
}

static void copy_string(const cJSON *o, const char *key, char *dst, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ib__strlcpy(dst, cJSON_IsString(v) ? v->valuestring : "", cap);
}

/* A count at key: 0 when absent, not a number or out of int32's range (a
 * setting compare only tells apart, never computes with). */
static int32_t read_int(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    bool in_range = cJSON_IsNumber(v) && v->valuedouble >= INT32_MIN && v->valuedouble <= INT32_MAX;
    return in_range ? (int32_t)v->valuedouble : 0;
}

/* The numbers of a (nested when nested) array, flattened into *out. */
static ib_status read_samples(const cJSON *a, bool nested, double **out, size_t *n, ib_error *err)
{
    *out = NULL;
    *n = 0;
    if (!cJSON_IsArray(a)) return bad(err, "its samples are missing");
    size_t cap = 0;
    for (const cJSON *row = a->child; row; row = row->next) {
        const cJSON *first = nested ? row->child : row, *end = nested ? NULL : row->next;
        if (nested && !cJSON_IsArray(row)) return bad(err, "a run's tokens are not an array");
        for (const cJSON *v = first; v != end; v = v->next) {
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return bad(err, "a sample is not a number");
            if (*n == cap) {
                cap = cap ? 2 * cap : 1024;
                double *p = realloc(*out, cap * sizeof *p);
                if (!p) return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading a generation result");
                *out = p;
            }
            (*out)[(*n)++] = v->valuedouble;
        }
    }
    return IB_OK;
}

static ib_status read_doc(const cJSON *root, ib_gen_file *out, ib_error *err)
{
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, GEN_SCHEMA))
        return bad(err, "no " GEN_SCHEMA " schema");
    copy_string(root, "model", out->model, sizeof out->model);
    copy_string(root, "device", out->device, sizeof out->device);
    out->partial = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "partial"));
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "workload");
    copy_string(w, "weights_type", out->weights_type, sizeof out->weights_type);
    copy_string(w, "runtime_version", out->runtime_version, sizeof out->runtime_version);
    out->n_threads = read_int(w, "n_threads");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "settings");
    out->prompt_tokens = read_int(s, "prompt_tokens");
    out->new_tokens = read_int(s, "new_tokens");
    out->depth = read_int(s, "depth");
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(root, "tokens_per_s");
    out->tokens_per_s = cJSON_IsNumber(rate) ? rate->valuedouble : NAN;
    int energy = ib__energy_read_figure(cJSON_GetObjectItemCaseSensitive(root, "decode_energy"),
                                        &out->decode_joules_per_token, &out->decode_energy_bound);
    if (energy == -1) return bad(err, "decode_energy is not an object");
    if (energy == -2)
        return bad(err, "decode_energy.joules_per_item is not a positive number with a bound in [0, 1)");
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(root, "samples");
    IB_TRY(read_samples(cJSON_GetObjectItemCaseSensitive(samples, "ttft_ms"), false, &out->ttft_ms,
                        &out->n_ttft, err));
    return read_samples(cJSON_GetObjectItemCaseSensitive(samples, "token_ms"), true, &out->token_ms,
                        &out->n_token, err);
}

ib_status ib_gen_file_parse(const char *text, size_t len, ib_gen_file *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) return bad(err, "not JSON");
    ib_status st = read_doc(root, out, err);
    cJSON_Delete(root);
    if (st != IB_OK) ib_gen_file_free(out);
    return st;
}

void ib_gen_file_free(ib_gen_file *f)
{
    if (!f) return;
    free(f->ttft_ms);
    free(f->token_ms);
    f->ttft_ms = f->token_ms = NULL;
    f->n_ttft = f->n_token = 0;
}

ib_status ib_compare_gen_files(const ib_gen_file *a, const ib_gen_file *b, double threshold,
                               ib_gen_comparison *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    ib_error why;
    if (ib_compare_samples(a->ttft_ms, a->n_ttft, b->ttft_ms, b->n_ttft, threshold, &out->ttft, &why) !=
        IB_OK)
        return ib__fail(err, IB_ERR_INVALID_ARG, "TTFT: %s", why.message);
    if (ib_compare_samples(a->token_ms, a->n_token, b->token_ms, b->n_token, threshold, &out->token, &why) !=
        IB_OK)
        return ib__fail(err, IB_ERR_INVALID_ARG, "per-token latency: %s", why.message);
    out->tokens_per_s_change = b->tokens_per_s / a->tokens_per_s - 1;
    const char *verdict;
    if (!ib__energy_verdict(a->decode_joules_per_token, a->decode_energy_bound, b->decode_joules_per_token,
                            b->decode_energy_bound, threshold, &out->energy_change,
                            out->energy_change_interval, &verdict))
        out->energy_change = out->energy_change_interval[0] = out->energy_change_interval[1] = NAN;
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* Reports                                                                   */
/* ------------------------------------------------------------------------ */

/* What differs between the two settings: each a reason not to read the
 * change as the model's or the runtime's. */
static size_t differences(const ib_gen_file *a, const ib_gen_file *b, const char **keys, const char **texts)
{
    size_t n = 0;
#define DIFF(COND, KEY, TEXT)                                                                                \
    if (COND) {                                                                                              \
        keys[n] = KEY;                                                                                       \
        texts[n++] = TEXT;                                                                                   \
    }
    DIFF(strcmp(a->model, b->model), "different_model", "A and B measured different models")
    DIFF(strcmp(a->device, b->device), "different_device", "A and B ran on different devices")
    DIFF(strcmp(a->weights_type, b->weights_type), "different_weights", "A and B have different weight types")
    DIFF(a->prompt_tokens != b->prompt_tokens, "different_prompt", "A and B have different prompts")
    DIFF(a->new_tokens != b->new_tokens, "different_new_tokens", "A and B timed different numbers of tokens")
    DIFF(a->depth != b->depth, "different_depth", "A and B decoded at different depths")
    DIFF(a->n_threads != b->n_threads, "different_threads", "A and B used different threads")
    DIFF(strcmp(a->runtime_version, b->runtime_version), "different_runtime",
         "A and B ran different runtimes")
    DIFF(a->partial || b->partial, "partial_input", "A or B is a partial result")
#undef DIFF
    return n;
}

static void text_one(ib__sbuf *b, const char *what, const ib_comparison *c)
{
    ib__sbuf_printf(
        b,
        "%-9s median A %.4g ms, B %.4g ms: %+.2f%%, 95%% CI [%+.2f%%, %+.2f%%]; Mann-Whitney p = %.3g: %s\n",
        what, c->a.p50, c->b.p50, ib__signed_shown(100 * c->change, 2),
        ib__signed_shown(100 * c->change_ci95[0], 2), ib__signed_shown(100 * c->change_ci95[1], 2),
        c->mann_whitney_p, ib_change_name(c->verdict));
}

char *ib__gen_comparison_text(const ib_result *r)
{
    const ib_gen_comparison *c = r->gen_comparison;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "inferbench compare: is generation B faster or slower than A?\n");
    ib__sbuf_printf(&b, "A (baseline)  %s: %s, %zu runs, %zu tokens\n", r->a_name ? r->a_name : "A",
                    r->gen_a->model, r->gen_a->n_ttft, r->gen_a->n_token);
    ib__sbuf_printf(&b, "B (candidate) %s: %s, %zu runs, %zu tokens\n\n", r->b_name ? r->b_name : "B",
                    r->gen_b->model, r->gen_b->n_ttft, r->gen_b->n_token);
    text_one(&b, "TTFT", &c->ttft);
    text_one(&b, "per token", &c->token);
    ib__sbuf_printf(&b, "TPOT (mean step) A %.4g ms, B %.4g ms; tokens/s A %.1f, B %.1f (%+.2f%%)\n",
                    c->token.a.mean, c->token.b.mean, r->gen_a->tokens_per_s, r->gen_b->tokens_per_s,
                    ib__signed_shown(100 * c->tokens_per_s_change, 2));
    ib__sbuf_printf(&b, "verdicts against a threshold of %.2f%% of the median\n", 100 * c->ttft.threshold);
    ib__text_energy_change(&b, "energy per token (decode)", "energy per token (decode)",
                           r->gen_a->decode_joules_per_token, r->gen_a->decode_energy_bound,
                           r->gen_b->decode_joules_per_token, r->gen_b->decode_energy_bound,
                           c->ttft.threshold);
    const char *keys[16], *texts[16];
    size_t n = differences(r->gen_a, r->gen_b, keys, texts);
    for (size_t i = 0; i < n; i++) ib__sbuf_printf(&b, "warning: %s\n", texts[i]);
    return ib__sbuf_finish(&b);
}

static cJSON *json_one(const ib_comparison *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "a", ib__json_stats(&c->a));
    cJSON_AddItemToObject(o, "b", ib__json_stats(&c->b));
    ib__json_add_number(o, "change", c->change);
    cJSON_AddItemToObject(o, "change_ci95", ib__json_array(c->change_ci95, 2));
    ib__json_add_number(o, "mann_whitney_u", c->mann_whitney_u);
    ib__json_add_number(o, "mann_whitney_p", c->mann_whitney_p);
    cJSON_AddStringToObject(o, "verdict", ib_change_name(c->verdict));
    return o;
}

char *ib__gen_comparison_json(const ib_result *r)
{
    const ib_gen_comparison *c = r->gen_comparison;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "inferbench.generation-compare/1");
    ib__json_add_string_or_null(root, "a", r->a_name);
    ib__json_add_string_or_null(root, "b", r->b_name);
    ib__json_add_number(root, "threshold", c->ttft.threshold);
    cJSON_AddItemToObject(root, "ttft", json_one(&c->ttft));
    cJSON_AddItemToObject(root, "token", json_one(&c->token));
    ib__json_add_number(root, "tpot_a_ms", c->token.a.mean);
    ib__json_add_number(root, "tpot_b_ms", c->token.b.mean);
    ib__json_add_number(root, "tokens_per_s_change", c->tokens_per_s_change);
    ib__json_add_number(root, "decode_joules_per_token_a", r->gen_a->decode_joules_per_token);
    ib__json_add_number(root, "decode_joules_per_token_b", r->gen_b->decode_joules_per_token);
    cJSON_AddItemToObject(root, "energy_change",
                          ib__json_energy_change(r->gen_a->decode_joules_per_token,
                                                 r->gen_a->decode_energy_bound,
                                                 r->gen_b->decode_joules_per_token,
                                                 r->gen_b->decode_energy_bound, c->ttft.threshold));
    const char *keys[16], *texts[16];
    size_t n = differences(r->gen_a, r->gen_b, keys, texts);
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(w, cJSON_CreateString(keys[i]));
    return ib__json_finish(root);
}
