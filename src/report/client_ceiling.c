/* The client's calibrated ceiling (docs/serve-endpoint.md, "The client's
 * ceiling"): calibrate client's result as a small file's text and back
 * (the program writes and reads the file), and the line of an endpoint
 * run that sets the run's load against it. */
#include "json/read.h"
#include "report/printer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SCHEMA "inferbench.client_calibration/1"

char *ib_client_ceiling_file_text(const ib_client_calibration_result *r, const char *date, const char *host,
                                  const char *version)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", SCHEMA);
    cJSON_AddStringToObject(root, "date", date);
    cJSON_AddStringToObject(root, "host", host);
    cJSON_AddStringToObject(root, "version", version);
    ib__json_add_number(root, "rate", r->ceiling_rate);
    cJSON_AddNumberToObject(root, "streams", (double)r->ceiling_streams);
    ib__json_add_number(root, "tokens_per_s", r->ceiling_tokens_per_s);
    ib__json_add_number(root, "bound_ms", r->bound_ms);
    return ib__json_finish(root);
}

/* A finite number >= 0 at key, required. */
static ib_status read_figure(const cJSON *doc, const char *key, double *out, ib_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);
    IB_FAIL_IF(!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0, err, IB_ERR_INVALID_ARG,
               "its \"%s\" is not a number >= 0", key);
    *out = v->valuedouble;
    return IB_OK;
}

static ib_status read_text(const cJSON *doc, const char *key, char *dst, size_t cap, ib_error *err)
{
    ib_status st = ib__json_read_string(doc, key, "the calibration", dst, cap, err);
    if (st == IB_OK && !dst[0]) return ib__fail(err, IB_ERR_INVALID_ARG, "it has no \"%s\"", key);
    return st;
}

static ib_status read_doc(const cJSON *doc, ib_client_ceiling *out, ib_error *err)
{
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    IB_FAIL_IF(!cJSON_IsString(schema) || strcmp(schema->valuestring, SCHEMA) != 0, err, IB_ERR_INVALID_ARG,
               "its schema is not %s", SCHEMA);
    double streams = 0;
    ib_status st = read_text(doc, "date", out->date, sizeof out->date, err);
    if (st == IB_OK) st = read_text(doc, "host", out->host, sizeof out->host, err);
    if (st == IB_OK) st = read_text(doc, "version", out->version, sizeof out->version, err);
    if (st == IB_OK) st = read_figure(doc, "rate", &out->rate, err);
    if (st == IB_OK) st = read_figure(doc, "streams", &streams, err);
    if (st == IB_OK) st = read_figure(doc, "tokens_per_s", &out->tokens_per_s, err);
    if (st == IB_OK) st = read_figure(doc, "bound_ms", &out->bound_ms, err);
    out->streams = (int64_t)streams;
    return st;
}

ib_status ib_client_ceiling_parse(const char *text, ib_client_ceiling *out, ib_error *err)
{
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    ib_client_ceiling read = *out;
    ib_status st = doc ? read_doc(doc, &read, err) : ib__fail(err, IB_ERR_INVALID_ARG, "it is not JSON");
    cJSON_Delete(doc);
    if (st != IB_OK) return st;
    read.state = IB_CEILING_CURRENT;
    *out = read;
    return IB_OK;
}

/* This run's load, as the calibration measured its own: the offered
 * rate, the streams open at once at most (a request's from its send to
 * its last chunk), the output tokens a second. */
typedef struct run_load {
    double rate, tokens_per_s;
    int64_t streams;
} run_load;

static int64_t streams_peak(const ib_endpoint_result *ep)
{
    int64_t peak = 0;
    for (size_t i = 0; i < ep->n_requests; i++) {
        const ib_endpoint_request *q = &ep->requests[i];
        if (q->n_chunks == 0) continue;
        int64_t open = 0; /* the requests open when q was sent, q among them */
        for (size_t j = 0; j < ep->n_requests; j++) {
            const ib_endpoint_request *o = &ep->requests[j];
            if (o->n_chunks > 0 && o->sent_ms <= q->sent_ms && o->chunk_ms[o->n_chunks - 1] >= q->sent_ms)
                open++;
        }
        if (open > peak) peak = open;
    }
    return peak;
}

static run_load load_of(const ib_endpoint_result *ep, const ib_gen_serve_result *r)
{
    return (run_load){ .rate = r->offered_rate,
                       .tokens_per_s = r->output_tokens_per_s,
                       .streams = streams_peak(ep) };
}

/* Past the ceiling in any of its three figures: the client was never
 * shown accurate at this load. */
static bool above(const ib_client_ceiling *c, const run_load *l)
{
    return l->rate > c->rate || l->streams > c->streams || l->tokens_per_s > c->tokens_per_s;
}

static void text_missing(ib__sbuf *b, const ib_client_ceiling *c)
{
    const char *why = c->state == IB_CEILING_MISSING ? "none on file" : "the file is not one";
    ib__sbuf_printf(
        b, "client ceiling: not calibrated on this machine (%s: %s%s%s): run `inferbench calibrate client`\n",
        c->path, why, c->note[0] ? ": " : "", c->note);
}

void ib__endpoint_ceiling_text(ib__sbuf *b, const ib_endpoint_result *ep, const ib_gen_serve_result *r)
{
    const ib_client_ceiling *c = &ep->ceiling;
    if (c->state == IB_CEILING_NOT_GIVEN) return;
    if (c->state == IB_CEILING_MISSING || c->state == IB_CEILING_UNREADABLE) {
        text_missing(b, c);
        return;
    }
    run_load l = load_of(ep, r);
    bool stale = c->state == IB_CEILING_STALE;
    ib__sbuf_printf(b,
                    "client ceiling: %s (%s): accurate up to %.4g requests/s, %lld streams, %.0f tokens/s; "
                    "this run: %.4g requests/s, %lld streams at most, %.0f tokens/s: %s\n",
                    stale ? "calibrated elsewhere (STALE)" : "calibrated on this machine", c->date, c->rate,
                    (long long)c->streams, c->tokens_per_s, l.rate, (long long)l.streams, l.tokens_per_s,
                    above(c, &l) ? "ABOVE the ceiling: the figures may be the client's limit, not the "
                                   "server's"
                                 : "within the ceiling");
    if (stale) ib__sbuf_printf(b, "  stale: made %s: run `inferbench calibrate client` again\n", c->note);
}

static const char *state_str(ib_client_ceiling_state s)
{
    switch (s) {
    case IB_CEILING_MISSING: return "missing";
    case IB_CEILING_UNREADABLE: return "unreadable";
    case IB_CEILING_CURRENT: return "current";
    case IB_CEILING_STALE: return "stale";
    default: return "not_given";
    }
}

void ib__endpoint_ceiling_json(cJSON *endpoint, const ib_endpoint_result *ep, const ib_gen_serve_result *r)
{
    const ib_client_ceiling *c = &ep->ceiling;
    if (c->state == IB_CEILING_NOT_GIVEN) return;
    cJSON *o = cJSON_AddObjectToObject(endpoint, "client_ceiling");
    cJSON_AddStringToObject(o, "state", state_str(c->state));
    cJSON_AddStringToObject(o, "path", c->path);
    cJSON_AddStringToObject(o, "note", c->note);
    if (c->state != IB_CEILING_CURRENT && c->state != IB_CEILING_STALE) return;
    cJSON_AddStringToObject(o, "date", c->date);
    cJSON_AddStringToObject(o, "host", c->host);
    cJSON_AddStringToObject(o, "version", c->version);
    ib__json_add_number(o, "rate", c->rate);
    cJSON_AddNumberToObject(o, "streams", (double)c->streams);
    ib__json_add_number(o, "tokens_per_s", c->tokens_per_s);
    ib__json_add_number(o, "bound_ms", c->bound_ms);
    run_load l = load_of(ep, r);
    cJSON *run = cJSON_AddObjectToObject(o, "run");
    ib__json_add_number(run, "rate", l.rate);
    cJSON_AddNumberToObject(run, "streams_peak", (double)l.streams);
    ib__json_add_number(run, "tokens_per_s", l.tokens_per_s);
    cJSON_AddBoolToObject(o, "above", above(c, &l));
}
