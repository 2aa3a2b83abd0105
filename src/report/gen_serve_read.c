/* A generative serve result read back (ib_gen_serve_file_parse) and two of
 * them compared (ib_compare_gen_serve_files): what compare needs of the
 * JSON gen_serve_report.c writes. The document holds every request's
 * figures and every step, so the samples are rebuilt exactly: TTFT, TPOT
 * and end-to-end of each completed request, and every inter-token gap
 * from the steps (serve_gen_trace.c, as the engine made them). A result
 * of serve --endpoint has no steps (the server's are unseen): its gaps
 * come from the chunks its client received, as the run counted them
 * (ib__chunk_gaps), so that a run in process and one over HTTP compare:
 * the server's cost (docs/serve-endpoint.md). */
#include "core/compare.h"
#include "core/serve_gen_trace.h"
#include "endpoint/chunk.h"
#include "report/printer.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA "inferbench.serve_generative/1"

static ib_status bad(ib_error *err, const char *why)
{
    return ib__fail(err, IB_ERR_INVALID_ARG, "not an inferbench serve_generative result: %s", why);
}

/* o[key] as a number: NaN for null or absent (the document's NaN). */
static double number(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* o[key] as a count in [0, IB_GEN_SERVE_MAX_TOKENS]; -1 when it is not one. */
static int32_t count(const cJSON *o, const char *key)
{
    double v = number(o, key);
    return v >= 0 && v <= IB_GEN_SERVE_MAX_TOKENS && v == floor(v) ? (int32_t)v : -1;
}

static ib_status read_request(const cJSON *o, ib_gen_serve_request *q, ib_error *err)
{
    *q = (ib_gen_serve_request){ .spec = { number(o, "scheduled_ms"), count(o, "prompt_tokens"),
                                           count(o, "output_tokens") },
                                 .admitted_ms = number(o, "admitted_ms"),
                                 .first_token_ms = number(o, "first_token_ms"),
                                 .end_ms = number(o, "end_ms"),
                                 .generated_tokens = count(o, "generated_tokens"),
                                 .queue_ms = number(o, "queue_ms"),
                                 .ttft_ms = number(o, "ttft_ms"),
                                 .tpot_ms = number(o, "tpot_ms"),
                                 .e2e_ms = number(o, "e2e_ms"),
                                 .met = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "met")) };
    if (!cJSON_IsObject(o) || q->spec.output_tokens < 1 || q->generated_tokens < 0 ||
        q->generated_tokens > q->spec.output_tokens)
        return bad(err, "a request's token counts are missing or wrong");
    bool done = q->generated_tokens == q->spec.output_tokens;
    if (done &&
        !(ib__is_duration_ms(q->ttft_ms) && ib__is_duration_ms(q->e2e_ms) && isfinite(q->first_token_ms) &&
          isfinite(q->end_ms) && (q->spec.output_tokens < 2 || ib__is_duration_ms(q->tpot_ms))))
        return bad(err, "a completed request's times are missing");
    return IB_OK;
}

static ib_status read_step(const cJSON *o, const ib_gen_serve_step *before, ib_gen_serve_step *s,
                           ib_error *err)
{
    *s = (ib_gen_serve_step){ .start_ms = number(o, "start_ms"),
                              .end_ms = number(o, "end_ms"),
                              .decode_tokens = count(o, "decode_tokens"),
                              .prefill_tokens = count(o, "prefill_tokens"),
                              .running = count(o, "running"),
                              .waiting = count(o, "waiting"),
                              .kv_cells = count(o, "kv_cells") };
    if (!isfinite(s->end_ms) || (before && s->end_ms < before->end_ms))
        return bad(err, "a step's end is missing or out of order");
    return IB_OK;
}

/* The document's requests and steps, as the engine kept them. */
static ib_status read_trace(const cJSON *root, ib_gen_serve_result *t, ib_error *err)
{
    const cJSON *reqs = cJSON_GetObjectItemCaseSensitive(root, "requests");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(root, "steps");
    if (!cJSON_IsArray(reqs) || !cJSON_IsArray(steps)) return bad(err, "its requests or steps are missing");
    size_t nr = (size_t)cJSON_GetArraySize(reqs), ns = (size_t)cJSON_GetArraySize(steps);
    t->requests = calloc(nr ? nr : 1, sizeof *t->requests);
    t->steps = calloc(ns ? ns : 1, sizeof *t->steps);
    if (!t->requests || !t->steps) return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading a result");
    const cJSON *o;
    cJSON_ArrayForEach(o, reqs) IB_TRY(read_request(o, &t->requests[t->n_requests++], err));
    cJSON_ArrayForEach(o, steps)
    {
        IB_TRY(read_step(o, t->n_steps ? &t->steps[t->n_steps - 1] : NULL, &t->steps[t->n_steps], err));
        t->n_steps++;
    }
    return IB_OK;
}

/* The gaps of one completed request of an endpoint's result, appended to
 * itl: its chunks' arrivals (in order) and tokens (theirs summing to the
 * request's). */
static ib_status endpoint_gaps(const cJSON *o, const ib_gen_serve_request *q, double *itl, size_t *n_itl,
                               ib_error *err)
{
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "chunk_ms");
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(o, "chunk_tokens_each");
    size_t n = cJSON_IsArray(ms) && cJSON_IsArray(tk) ? (size_t)cJSON_GetArraySize(ms) : 0;
    if (n == 0 || (size_t)cJSON_GetArraySize(tk) != n)
        return bad(err, "an endpoint request's chunks are missing");
    double *at = malloc(n * sizeof *at);
    int32_t *tokens = malloc(n * sizeof *tokens);
    ib_status st = at && tokens ? IB_OK : ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading a result");
    int64_t sum = 0;
    for (size_t k = 0; k < n && st == IB_OK; k++) {
        const cJSON *m = cJSON_GetArrayItem(ms, (int)k), *t = cJSON_GetArrayItem(tk, (int)k);
        at[k] = cJSON_IsNumber(m) ? m->valuedouble : NAN;
        double v = cJSON_IsNumber(t) ? t->valuedouble : -1;
        tokens[k] = v >= 0 && v <= IB_GEN_SERVE_MAX_TOKENS && v == floor(v) ? (int32_t)v : -1;
        sum += tokens[k];
        if (!isfinite(at[k]) || tokens[k] < 0 || (k > 0 && at[k] < at[k - 1]))
            st = bad(err, "an endpoint request's chunk is missing or out of order");
    }
    if (st == IB_OK && sum != q->generated_tokens)
        st = bad(err, "an endpoint request's chunks do not give it its tokens");
    if (st == IB_OK) *n_itl += ib__chunk_gaps(at, tokens, n, itl + *n_itl);
    free(at);
    free(tokens);
    return st;
}

/* Every gap of the completed requests of an endpoint's result (the
 * endpoint's requests beside the document's, index for index). */
static ib_status read_endpoint(const cJSON *endpoint, const ib_gen_serve_result *t, ib_gen_serve_file *out,
                               ib_error *err)
{
    const cJSON *reqs = cJSON_GetObjectItemCaseSensitive(endpoint, "requests");
    if (!cJSON_IsArray(reqs) || (size_t)cJSON_GetArraySize(reqs) != t->n_requests)
        return bad(err, "its endpoint requests are not its requests");
    size_t n = 0;
    for (size_t i = 0; i < t->n_requests; i++) n += (size_t)t->requests[i].generated_tokens;
    out->itl_ms = malloc((n ? n : 1) * sizeof *out->itl_ms);
    if (!out->itl_ms) return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading a result");
    out->over_http = true;
    out->client_late = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(endpoint, "client_late"));
    size_t i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, reqs)
    {
        const ib_gen_serve_request *q = &t->requests[i++];
        if (q->generated_tokens == q->spec.output_tokens)
            IB_TRY(endpoint_gaps(o, q, out->itl_ms, &out->n_itl, err));
    }
    return IB_OK;
}

/* Each request's scheduled arrival and lengths, as the run was sent them. */
static ib_status read_schedule(const ib_gen_serve_result *t, ib_gen_serve_file *out, ib_error *err)
{
    out->schedule = malloc((t->n_requests ? t->n_requests : 1) * sizeof *out->schedule);
    if (!out->schedule) return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading a result");
    for (size_t i = 0; i < t->n_requests; i++) out->schedule[i] = t->requests[i].spec;
    return IB_OK;
}

static void read_settings(const cJSON *root, ib_gen_serve_file *out)
{
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    ib__strlcpy(out->model, cJSON_IsString(model) ? model->valuestring : "", sizeof out->model);
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(root, "info");
    const cJSON *device = cJSON_GetObjectItemCaseSensitive(info, "device");
    ib__strlcpy(out->device, cJSON_IsString(device) ? device->valuestring : "", sizeof out->device);
    out->partial = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "partial"));
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "settings");
    out->slots = count(s, "slots");
    out->prefill_chunk = count(s, "prefill_chunk");
    out->ctx_per_slot = count(s, "ctx_per_slot");
    out->slo_ttft_ms = number(s, "slo_ttft_ms");
    out->slo_tpot_ms = number(s, "slo_tpot_ms");
    out->slo_e2e_ms = number(s, "slo_e2e_ms");
    out->seed = number(s, "seed");
    const cJSON *sampling = cJSON_GetObjectItemCaseSensitive(s, "sampling");
    ib__strlcpy(out->sampling, cJSON_IsString(sampling) ? sampling->valuestring : "none",
                sizeof out->sampling);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "figures");
    out->offered_rate = number(f, "offered_rate");
    out->goodput_rate = number(f, "goodput_rate");
    out->output_tokens_per_s = number(f, "output_tokens_per_s");
}

/* The completed requests' figures as samples, every gap from the steps
 * (or, over HTTP, from the chunks). */
static ib_status samples(const cJSON *root, const ib_gen_serve_result *t, ib_gen_serve_file *out,
                         ib_error *err)
{
    size_t n = t->n_requests ? t->n_requests : 1;
    out->ttft_ms = malloc(n * sizeof *out->ttft_ms);
    out->tpot_ms = malloc(n * sizeof *out->tpot_ms);
    out->e2e_ms = malloc(n * sizeof *out->e2e_ms);
    if (!out->ttft_ms || !out->tpot_ms || !out->e2e_ms)
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory reading a result");
    out->requests = t->n_requests;
    for (size_t i = 0; i < t->n_requests; i++) {
        const ib_gen_serve_request *q = &t->requests[i];
        if (q->generated_tokens != q->spec.output_tokens) continue;
        out->completed++;
        out->good += q->met;
        out->ttft_ms[out->n_ttft++] = q->ttft_ms;
        out->e2e_ms[out->n_e2e++] = q->e2e_ms;
        if (q->spec.output_tokens > 1) out->tpot_ms[out->n_tpot++] = q->tpot_ms;
    }
    IB_TRY(read_schedule(t, out, err));
    const cJSON *endpoint = cJSON_GetObjectItemCaseSensitive(root, "endpoint");
    if (endpoint) return read_endpoint(endpoint, t, out, err);
    ib_status st =
        ib__gen_serve_gaps(t->requests, t->n_requests, t->steps, t->n_steps, &out->itl_ms, &out->n_itl);
    if (st == IB_ERR_INVALID_ARG) return bad(err, "its steps do not give its requests their tokens");
    return st == IB_OK ? IB_OK : ib__fail(err, st, "out of memory reading a result");
}

static ib_status read_doc(const cJSON *root, ib_gen_serve_file *out, ib_error *err)
{
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, SCHEMA))
        return ib__fail(err, IB_ERR_UNSUPPORTED,
                        "not an inferbench serve_generative result: no " SCHEMA " schema");
    read_settings(root, out);
    ib_gen_serve_result t = { 0 };
    ib_status st = read_trace(root, &t, err);
    if (st == IB_OK) st = samples(root, &t, out, err);
    free(t.requests);
    free(t.steps);
    return st;
}

ib_status ib_gen_serve_file_parse(const char *text, size_t len, ib_gen_serve_file *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root)
        return ib__fail(err, IB_ERR_UNSUPPORTED, "not an inferbench serve_generative result: not JSON");
    ib_status st = read_doc(root, out, err);
    cJSON_Delete(root);
    if (st != IB_OK) ib_gen_serve_file_free(out);
    return st;
}

void ib_gen_serve_file_free(ib_gen_serve_file *f)
{
    if (!f) return;
    free(f->ttft_ms);
    free(f->tpot_ms);
    free(f->itl_ms);
    free(f->e2e_ms);
    free(f->schedule);
    f->schedule = NULL;
    f->ttft_ms = f->tpot_ms = f->itl_ms = f->e2e_ms = NULL;
    f->n_ttft = f->n_tpot = f->n_itl = f->n_e2e = 0;
}

/* Two targets alike: both absent (NaN) or equal. */
static bool same_target(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static bool has_targets(const ib_gen_serve_file *f)
{
    return !isnan(f->slo_ttft_ms) || !isnan(f->slo_tpot_ms) || !isnan(f->slo_e2e_ms);
}

static ib_status compare_one(const char *what, const double *a, size_t na, const double *b, size_t nb,
                             double threshold, ib_comparison *out, ib_error *err)
{
    ib_error why = { { 0 } };
    ib_status st = ib_compare_samples(a, na, b, nb, threshold, out, &why);
    return st == IB_OK ? IB_OK : ib__fail(err, st, "%s: %s", what, why.message);
}

ib_status ib_compare_gen_serve_files(const ib_gen_serve_file *a, const ib_gen_serve_file *b, double threshold,
                                     ib_gen_serve_comparison *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    IB_TRY(compare_one("TTFT", a->ttft_ms, a->n_ttft, b->ttft_ms, b->n_ttft, threshold, &out->ttft, err));
    IB_TRY(compare_one("TPOT", a->tpot_ms, a->n_tpot, b->tpot_ms, b->n_tpot, threshold, &out->tpot, err));
    for (size_t i = 0; i < a->n_itl; i++) out->itl_zero_gaps_a += a->itl_ms[i] == 0;
    for (size_t i = 0; i < b->n_itl; i++) out->itl_zero_gaps_b += b->itl_ms[i] == 0;
    out->itl_compared = out->itl_zero_gaps_a == 0 && out->itl_zero_gaps_b == 0;
    if (out->itl_compared)
        IB_TRY(compare_one("ITL", a->itl_ms, a->n_itl, b->itl_ms, b->n_itl, threshold, &out->itl, err));
    IB_TRY(compare_one("end-to-end", a->e2e_ms, a->n_e2e, b->e2e_ms, b->n_e2e, threshold, &out->e2e, err));
    out->same_targets = same_target(a->slo_ttft_ms, b->slo_ttft_ms) &&
                        same_target(a->slo_tpot_ms, b->slo_tpot_ms) &&
                        same_target(a->slo_e2e_ms, b->slo_e2e_ms);
    bool judged = has_targets(a) && has_targets(b) && a->completed && b->completed;
    out->good_share_a = judged ? (double)a->good / (double)a->completed : NAN;
    out->good_share_b = judged ? (double)b->good / (double)b->completed : NAN;
    out->good_share_change = out->good_share_b - out->good_share_a;
    out->good_share_ci95[0] = out->good_share_ci95[1] = NAN;
    if (judged)
        ib__proportion_difference_ci(a->good, a->completed, b->good, b->completed, out->good_share_ci95);
    return IB_OK;
}
