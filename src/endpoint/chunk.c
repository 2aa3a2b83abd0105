/* One streamed completion event read: cJSON for the JSON (the library's
 * reader of every JSON it takes in), the counts that say how many tokens
 * the event carried. Servers differ in which they send: vLLM its
 * cumulative usage in every chunk when asked (continuous_usage_stats),
 * llama-server its timings (timings_per_token) and token ids
 * (return_tokens), every one of them the final usage (include_usage);
 * llama.cpp's own /completion its ids in every event and its counts and
 * timings in the last. */
#include "endpoint/chunk.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

/* A whole number >= 0 at key of obj into *out (-1 when absent or null);
 * false when it is something else. */
static bool read_count(const cJSON *obj, const char *key, int64_t *out)
{
    const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    *out = -1;
    if (!v || cJSON_IsNull(v)) return true;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > 1e15 ||
        v->valuedouble != floor(v->valuedouble))
        return false;
    *out = (int64_t)v->valuedouble;
    return true;
}

static bool non_empty_string(const cJSON *v) { return cJSON_IsString(v) && v->valuestring[0] != '\0'; }

/* The first choice: its text (completions) or delta's content (chat). */
static void read_choice(const cJSON *root, ib__chunk *out)
{
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
    const cJSON *first = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
    out->has_choice = cJSON_IsObject(first);
    if (!out->has_choice) return;
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(first, "delta");
    out->has_text = non_empty_string(cJSON_GetObjectItemCaseSensitive(first, "text")) ||
                    non_empty_string(cJSON_GetObjectItemCaseSensitive(delta, "content"));
}

static ib_status read_counts(const cJSON *root, ib__chunk *out, ib_error *err)
{
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(root, "tokens");
    IB_FAIL_IF(ids && !cJSON_IsNull(ids) && !cJSON_IsArray(ids), err, IB_ERR_INVALID_ARG,
               "a chunk's tokens is not an array");
    out->token_ids = cJSON_IsArray(ids) ? cJSON_GetArraySize(ids) : -1;
    IB_FAIL_IF(
        !read_count(cJSON_GetObjectItemCaseSensitive(root, "usage"), "completion_tokens", &out->usage_tokens),
        err, IB_ERR_INVALID_ARG, "a chunk's usage.completion_tokens is not a whole number");
    IB_FAIL_IF(
        !read_count(cJSON_GetObjectItemCaseSensitive(root, "usage"), "prompt_tokens", &out->prompt_tokens),
        err, IB_ERR_INVALID_ARG, "a chunk's usage.prompt_tokens is not a whole number");
    IB_FAIL_IF(
        !read_count(cJSON_GetObjectItemCaseSensitive(root, "timings"), "predicted_n", &out->predicted_tokens),
        err, IB_ERR_INVALID_ARG, "a chunk's timings.predicted_n is not a whole number");
    return IB_OK;
}

/* A time >= 0 at key of obj into *out (NaN when absent or null); false
 * when it is something else. */
static bool read_ms(const cJSON *obj, const char *key, double *out)
{
    const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    *out = NAN;
    if (!v || cJSON_IsNull(v)) return true;
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !isfinite(v->valuedouble)) return false;
    *out = v->valuedouble;
    return true;
}

/* llama-server's timings of the request so far (its final event's are
 * the whole request's). */
static ib_status read_timings(const cJSON *root, ib__chunk *out, ib_error *err)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "timings");
    IB_FAIL_IF(!read_ms(t, "prompt_ms", &out->server_prompt_ms) ||
                   !read_ms(t, "predicted_ms", &out->server_predicted_ms),
               err, IB_ERR_INVALID_ARG, "a chunk's timings.prompt_ms or predicted_ms is not a time");
    IB_FAIL_IF(!read_count(t, "prompt_n", &out->server_prompt_n) ||
                   !read_count(t, "cache_n", &out->server_cache_n),
               err, IB_ERR_INVALID_ARG, "a chunk's timings.prompt_n or cache_n is not a whole number");
    return IB_OK;
}

/* llama.cpp's own event: "stop" (false, then true in the final one) and
 * its cumulative counts. */
static ib_status read_native(const cJSON *root, ib__chunk *out, ib_error *err)
{
    const cJSON *stop = cJSON_GetObjectItemCaseSensitive(root, "stop");
    out->native = cJSON_IsBool(stop);
    out->stop = cJSON_IsTrue(stop);
    IB_FAIL_IF(!read_count(root, "tokens_predicted", &out->tokens_predicted) ||
                   !read_count(root, "tokens_evaluated", &out->tokens_evaluated),
               err, IB_ERR_INVALID_ARG,
               "an event's tokens_predicted or tokens_evaluated is not a whole number");
    return IB_OK;
}

ib_status ib__chunk_parse(const char *data, size_t len, ib__chunk *out, ib_error *err)
{
    *out = (ib__chunk){ .usage_tokens = -1,
                        .prompt_tokens = -1,
                        .predicted_tokens = -1,
                        .token_ids = -1,
                        .tokens_predicted = -1,
                        .tokens_evaluated = -1,
                        .server_prompt_ms = NAN,
                        .server_predicted_ms = NAN,
                        .server_prompt_n = -1,
                        .server_cache_n = -1 };
    if (len == 6 && !memcmp(data, "[DONE]", 6)) {
        out->done = true;
        return IB_OK;
    }
    cJSON *root = cJSON_ParseWithLength(data, len);
    ib_status st = IB_OK;
    if (!cJSON_IsObject(root))
        st = ib__fail(err, IB_ERR_INVALID_ARG, "an event that is not a JSON object");
    else if (cJSON_GetObjectItemCaseSensitive(root, "error"))
        out->error = true;
    else {
        read_choice(root, out);
        st = read_counts(root, out, err);
        if (st == IB_OK) st = read_native(root, out, err);
        if (st == IB_OK) st = read_timings(root, out, err);
    }
    cJSON_Delete(root);
    return st;
}

/* llama.cpp's own event: the change of its cumulative count, else its
 * ids. Not the ids first: llama-server sends no event for a token whose
 * text ends inside a UTF-8 character (a byte token), so that token's id
 * never reaches a streaming client, while its count does (the next
 * event's, or the final one's). */
static int64_t native_tokens(const ib__chunk *c, int64_t counted)
{
    int64_t k = c->tokens_predicted >= 0 ? c->tokens_predicted - counted
                : c->token_ids >= 0      ? c->token_ids
                                         : 0;
    return k < 0 ? -1 : k;
}

int64_t ib__chunk_tokens(const ib__chunk *c, int64_t counted, bool *exact)
{
    *exact = true;
    if (c->native) return native_tokens(c, counted);
    if (!c->has_choice) return 0;
    int64_t k = c->usage_tokens >= 0       ? c->usage_tokens - counted
                : c->predicted_tokens >= 0 ? c->predicted_tokens - counted
                : c->token_ids >= 0        ? c->token_ids
                                           : -2;
    if (k != -2) return k < 0 ? -1 : k;
    *exact = false;
    return c->has_text ? 1 : 0;
}

size_t ib__chunk_gaps(const double *chunk_ms, const int32_t *chunk_tokens, size_t n_chunks, double *out)
{
    size_t n = 0;
    for (size_t k = 0; k < n_chunks; k++)
        for (int32_t j = 0; j < chunk_tokens[k]; j++)
            if (k > 0 || j > 0) out[n++] = j > 0 ? 0 : chunk_ms[k] - chunk_ms[k - 1];
    return n;
}
