/* The scripted streaming server (docs/script-server.md): an
 * OpenAI-compatible completions endpoint on 127.0.0.1 whose tokens leave
 * at the script's times, each event stamped as it is handed to the socket.
 *
 * libmicrohttpd, one thread a connection: each stream's content callback
 * waits for its next event's time on the server's condition variable (an
 * absolute CLOCK_MONOTONIC deadline), so a stream's timing depends on no
 * other stream and on no polling loop. libmicrohttpd documents a callback
 * that returns 0 as a busy loop unless the connection is suspended; the
 * suspended alternative wakes a stream through the daemon's polling thread,
 * one more hop between the deadline and the send. A thread a stream costs
 * a stack (kept small) and is what makes the server's own lateness the
 * kernel's wake-up alone, which its stamps show (planned against sent). */
#include "endpoint/script_server.h"

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* A request body larger than this is refused (413): a prompt of token ids
 * is a few kilobytes. */
#define MAX_BODY_BYTES (1u << 20)
/* Each stream's thread needs little: no recursion, small buffers. */
#define THREAD_STACK_BYTES (256u * 1024u)
/* Every output token's text: one piece, so a chunk's text says nothing of
 * how many tokens it holds (as with a real vocabulary). */
#define TOKEN_TEXT " x"
/* The ids a request's tokens carry when it asks for them (return_tokens). */
#define FIRST_TOKEN_ID 100

struct ib_script_server {
    ib_script script;
    struct MHD_Daemon *daemon;
    int port;
    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t wake;  /* broadcast when the server stops */
    bool stopping;
    int64_t n_requests;                        /* completions requests arrived so far */
    double slot_free_ms[IB__SCRIPT_MAX_SLOTS]; /* with script.slots: when each slot's stream ends */
    ib_script_stamp *stamps;
    size_t n_stamps, cap_stamps;
};

/* --- stamps ------------------------------------------------------------------ */

static void stamp(ib_script_server *srv, int64_t request, ib_script_stamp_kind kind, int64_t tokens,
                  double planned_ms, double sent_ms)
{
    pthread_mutex_lock(&srv->lock);
    if (srv->n_stamps == srv->cap_stamps) {
        size_t cap = srv->cap_stamps ? 2 * srv->cap_stamps : 1024;
        ib_script_stamp *grown = realloc(srv->stamps, cap * sizeof *grown);
        if (grown) {
            srv->stamps = grown;
            srv->cap_stamps = cap;
        }
    }
    /* Out of memory: the stamp is lost, the stream goes on (the count of
     * stamps then tells, against the chunks, that some are missing). */
    if (srv->n_stamps < srv->cap_stamps)
        srv->stamps[srv->n_stamps++] = (ib_script_stamp){
            .request = request, .kind = kind, .tokens = tokens, .planned_ms = planned_ms, .sent_ms = sent_ms
        };
    pthread_mutex_unlock(&srv->lock);
}

size_t ib_script_server_stamps(ib_script_server *srv, ib_script_stamp *out, size_t cap)
{
    if (!srv) return 0;
    pthread_mutex_lock(&srv->lock);
    size_t n = srv->n_stamps;
    if (out && cap && n)
        memcpy(out, srv->stamps, (n < cap ? n : cap) * sizeof *out); /* no stamps: no buffer yet */
    pthread_mutex_unlock(&srv->lock);
    return n;
}

/* Waits until the monotonic clock reads at_ms; false when the server stops
 * first. */
static bool wait_until(ib_script_server *srv, double at_ms)
{
    struct timespec ts = { .tv_sec = (time_t)floor(at_ms / 1e3) };
    ts.tv_nsec = (long)((at_ms - (double)ts.tv_sec * 1e3) * 1e6);
    if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
    pthread_mutex_lock(&srv->lock);
    while (!srv->stopping && pthread_cond_timedwait(&srv->wake, &srv->lock, &ts) != ETIMEDOUT) {
    }
    bool stopping = srv->stopping;
    pthread_mutex_unlock(&srv->lock);
    return !stopping;
}

static void wait_for_stop(ib_script_server *srv)
{
    pthread_mutex_lock(&srv->lock);
    while (!srv->stopping) pthread_cond_wait(&srv->wake, &srv->lock);
    pthread_mutex_unlock(&srv->lock);
}

/* --- one stream ---------------------------------------------------------------- */

typedef enum stage { STAGE_CHUNKS, STAGE_USAGE, STAGE_DONE, STAGE_END } stage;

typedef struct stream {
    ib_script_server *srv;
    struct MHD_Connection *connection;
    int64_t index;
    bool fails; /* this request fails as scripted (mid-stream failures) */
    bool broken;
    double arrival_ms;
    int64_t max_tokens, n_tokens, prompt_tokens;
    bool include_usage, continuous_usage, return_tokens;
    bool native;           /* llama.cpp's own POST /completion: its events, its final one */
    int64_t sent_tokens;   /* tokens in the chunks sent so far */
    double next_token_ms;  /* offset from the arrival of token sent_tokens */
    double first_token_ms; /* offset from the arrival of the first token (a slot's wait in it) */
    double last_token_ms;  /* offset from the arrival of the last token sent */
    stage stage;
    char *out; /* the event being handed over */
    size_t n_out, off_out, cap_out;
} stream;

/* The offset from a request's start (its slot's, if it waited for one) to
 * its first token: the script's TTFT, the first request's with the cold
 * start. */
static double script_ttft_ms(const ib_script *s, int64_t index)
{
    return s->ttft_ms + (index == 0 ? s->cold_start_ms : 0);
}

/* Appends printf's output to the stream's event; false when out of memory. */
static bool put(stream *st, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = st->cap_out - st->n_out;
        int n = vsnprintf(st->out ? st->out + st->n_out : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) return false;
        if ((size_t)n < room) {
            st->n_out += (size_t)n;
            return true;
        }
        size_t cap = 2 * (st->cap_out + (size_t)n + 64);
        char *grown = realloc(st->out, cap);
        if (!grown) return false;
        st->out = grown;
        st->cap_out = cap;
    }
}

static bool put_usage(stream *st, int64_t completion_tokens)
{
    return put(st, ",\"usage\":{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,\"total_tokens\":%lld}",
               (long long)st->prompt_tokens, (long long)completion_tokens,
               (long long)(st->prompt_tokens + completion_tokens));
}

static bool put_head(stream *st)
{
    if (st->native) return put(st, "data: {\"index\":0,\"id_slot\":0");
    return put(
        st,
        "data: {\"id\":\"cmpl-script-%lld\",\"object\":\"text_completion\",\"created\":0,\"model\":\"%s\"",
        (long long)st->index, st->srv->script.model);
}

static bool put_ids(stream *st, int64_t k)
{
    bool ok = put(st, ",\"tokens\":[");
    for (int64_t i = 0; ok && i < k; i++)
        ok = put(st, "%s%lld", i ? "," : "", (long long)(FIRST_TOKEN_ID + st->sent_tokens + i));
    return ok && put(st, "]");
}

/* llama.cpp's own event of tokens [sent_tokens, sent_tokens + k): their
 * text, their ids, the cumulative counts (tools/server's partial result). */
static bool format_native_chunk(stream *st, int64_t k)
{
    bool ok = put_head(st) && put(st, ",\"content\":\"");
    for (int64_t i = 0; ok && i < k; i++) ok = put(st, TOKEN_TEXT);
    return ok && put(st, "\"") && put_ids(st, k) &&
           put(st, ",\"stop\":false,\"tokens_predicted\":%lld,\"tokens_evaluated\":%lld}\n\n",
               (long long)(st->sent_tokens + k), (long long)st->prompt_tokens);
}

/* llama.cpp's final event: no text or ids (a stream's are in the events
 * before), the counts, and the timings as the script planned them: the
 * prompt's from the arrival to the first token, the output's from the
 * first token to the last. */
static bool format_native_final(stream *st)
{
    const char *stop_type = st->n_tokens < st->max_tokens ? "eos" : "limit";
    double first_ms = script_ttft_ms(&st->srv->script, st->index);
    double predicted_ms = st->sent_tokens > 0 ? st->last_token_ms - st->first_token_ms : 0;
    return put_head(st) &&
           put(st,
               ",\"content\":\"\",\"tokens\":[],\"stop\":true,\"model\":\"%s\",\"tokens_predicted\":%lld,"
               "\"tokens_evaluated\":%lld,\"stop_type\":\"%s\",\"tokens_cached\":%lld,\"timings\":{\"cache_"
               "n\":0,"
               "\"prompt_n\":%lld,\"prompt_ms\":%.17g,\"predicted_n\":%lld,\"predicted_ms\":%.17g}}\n\n",
               st->srv->script.model, (long long)st->sent_tokens, (long long)st->prompt_tokens, stop_type,
               (long long)(st->prompt_tokens + st->sent_tokens), (long long)st->prompt_tokens, first_ms,
               (long long)st->sent_tokens, predicted_ms);
}

/* The chunk of tokens [sent_tokens, sent_tokens + k). */
static bool format_chunk(stream *st, int64_t k)
{
    if (st->native) return format_native_chunk(st, k);
    int64_t last = st->sent_tokens + k;
    const char *finish = last < st->n_tokens             ? "null"
                         : st->n_tokens < st->max_tokens ? "\"stop\""
                                                         : "\"length\"";
    bool ok = put_head(st) && put(st, ",\"choices\":[{\"index\":0,\"text\":\"");
    for (int64_t i = 0; ok && i < k; i++) ok = put(st, TOKEN_TEXT);
    ok = ok && put(st, "\",\"logprobs\":null,\"finish_reason\":%s}]", finish);
    if (ok && st->return_tokens) ok = put_ids(st, k);
    if (ok && st->continuous_usage) ok = put_usage(st, last);
    return ok && put(st, "}\n\n");
}

/* The offset from the arrival at which the next chunk's last token is due;
 * advances the stream's token clock past it. */
static double next_chunk_offset_ms(stream *st, int64_t k)
{
    double at = st->next_token_ms;
    for (int64_t i = 1; i < k; i++) at += ib__script_gap_ms(&st->srv->script, st->sent_tokens + i);
    st->next_token_ms = at + ib__script_gap_ms(&st->srv->script, st->sent_tokens + k);
    st->last_token_ms = at;
    return at;
}

typedef enum step { STEP_EVENT, STEP_END, STEP_CUT } step;

/* A connection closed with SO_LINGER 0 is reset (RST), as a server that
 * crashed mid-stream leaves it. */
static void reset_on_close(stream *st)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(st->connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct linger hard = { .l_onoff = 1, .l_linger = 0 };
    if (ci) setsockopt(ci->connect_fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
}

/* Whether this stream's scripted failure comes after chunks_sent chunks. */
static bool failure_due(const stream *st, int64_t chunks_sent)
{
    ib_script_failure f = st->srv->script.failure;
    return st->fails && !st->broken && chunks_sent == st->srv->script.fail_after_chunks &&
           (f == IB_SCRIPT_FAIL_RESET || f == IB_SCRIPT_FAIL_MALFORMED || f == IB_SCRIPT_FAIL_STALL ||
            f == IB_SCRIPT_FAIL_ERROR);
}

static step fail_now(stream *st)
{
    ib_script_server *srv = st->srv;
    st->broken = true;
    stamp(srv, st->index, IB_SCRIPT_BROKEN, srv->script.failure, st->arrival_ms, ib__now_ms());
    switch (srv->script.failure) {
    case IB_SCRIPT_FAIL_MALFORMED:
        /* An event whose data is cut inside the JSON. */
        return put_head(st) && put(st, ",\"choices\":[{\"text\":\n\n") ? STEP_EVENT : STEP_CUT;
    case IB_SCRIPT_FAIL_STALL: wait_for_stop(srv); return STEP_CUT;
    case IB_SCRIPT_FAIL_ERROR:
        /* As llama-server ends a stream that failed mid-way: an error
         * event in OpenAI's shape, then the stream's end (no [DONE]). */
        st->stage = STAGE_END;
        return put(st, "data: {\"error\":{\"code\":500,\"message\":\"scripted failure\","
                       "\"type\":\"server_error\"}}\n\n")
                   ? STEP_EVENT
                   : STEP_CUT;
    default: reset_on_close(st); return STEP_CUT;
    }
}

static step chunk_step(stream *st, int64_t chunks_sent)
{
    ib_script_server *srv = st->srv;
    if (failure_due(st, chunks_sent)) return fail_now(st);
    if (st->sent_tokens == st->n_tokens) {
        st->stage = STAGE_USAGE;
        return STEP_END; /* nothing here: the caller goes on to the next stage */
    }
    int64_t left = st->n_tokens - st->sent_tokens;
    int64_t k = left < srv->script.tokens_per_chunk ? left : srv->script.tokens_per_chunk;
    if (!format_chunk(st, k)) return STEP_CUT;
    double planned = st->arrival_ms + next_chunk_offset_ms(st, k);
    if (!wait_until(srv, planned)) return STEP_CUT;
    st->sent_tokens += k;
    stamp(srv, st->index, IB_SCRIPT_CHUNK, k, planned, ib__now_ms());
    return STEP_EVENT;
}

/* Fills st->out with the next event (waiting for its time): STEP_EVENT, or
 * STEP_END (the stream is over) or STEP_CUT (closed mid-stream). */
static step next_event(stream *st)
{
    ib_script_server *srv = st->srv;
    st->n_out = st->off_out = 0;
    int64_t tpc = srv->script.tokens_per_chunk;
    while (st->stage == STAGE_CHUNKS) {
        step s = chunk_step(st, (st->sent_tokens + tpc - 1) / tpc);
        if (s != STEP_END) return s;
    }
    bool no_done = st->fails && srv->script.failure == IB_SCRIPT_FAIL_NO_DONE;
    if (st->stage == STAGE_USAGE && st->native) {
        /* llama.cpp's final event is its stream's end: no [DONE] follows. */
        st->stage = STAGE_END;
        if (!no_done) {
            if (!format_native_final(st)) return STEP_CUT;
            stamp(srv, st->index, IB_SCRIPT_USAGE, st->sent_tokens, st->arrival_ms, ib__now_ms());
            return STEP_EVENT;
        }
    }
    if (st->stage == STAGE_USAGE) {
        st->stage = STAGE_DONE;
        if (st->include_usage) {
            if (!put_head(st) || !put(st, ",\"choices\":[]") || !put_usage(st, st->sent_tokens) ||
                !put(st, "}\n\n"))
                return STEP_CUT;
            stamp(srv, st->index, IB_SCRIPT_USAGE, st->sent_tokens, st->arrival_ms, ib__now_ms());
            return STEP_EVENT;
        }
    }
    if (st->stage == STAGE_DONE) {
        st->stage = STAGE_END;
        if (!no_done) {
            if (!put(st, "data: [DONE]\n\n")) return STEP_CUT;
            stamp(srv, st->index, IB_SCRIPT_DONE, 0, st->arrival_ms, ib__now_ms());
            return STEP_EVENT;
        }
    }
    stamp(srv, st->index, IB_SCRIPT_ENDED, st->sent_tokens, st->arrival_ms, ib__now_ms());
    return STEP_END;
}

static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream *st = cls;
    if (st->off_out == st->n_out) {
        step s = next_event(st);
        if (s == STEP_END) return MHD_CONTENT_READER_END_OF_STREAM;
        if (s == STEP_CUT) return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = st->n_out - st->off_out < max ? st->n_out - st->off_out : max;
    memcpy(buf, st->out + st->off_out, n);
    st->off_out += n;
    return (ssize_t)n;
}

static void free_stream(void *cls)
{
    stream *st = cls;
    free(st->out);
    free(st);
}

/* --- requests ------------------------------------------------------------------ */

/* What a connection's request gathered before it is answered: its body. */
typedef struct request {
    char *body;
    size_t n_body;
    bool too_big;
} request;

static enum MHD_Result answer_json(struct MHD_Connection *c, unsigned status, const char *json)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(json), (void *)json, MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* An OpenAI error body (cJSON escapes the message). */
static enum MHD_Result answer_error(struct MHD_Connection *c, unsigned status, const char *type,
                                    const char *message)
{
    cJSON *root = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(root, "error");
    cJSON_AddStringToObject(e, "message", message);
    cJSON_AddStringToObject(e, "type", type);
    cJSON_AddNumberToObject(e, "code", status);
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    enum MHD_Result ok = json ? answer_json(c, status, json) : MHD_NO;
    cJSON_free(json);
    return ok;
}

/* A completions request refused before its stream: stamped, answered. */
static enum MHD_Result refuse(ib_script_server *srv, struct MHD_Connection *c, int64_t index,
                              double arrival_ms, unsigned status, const char *type, const char *message)
{
    stamp(srv, index, IB_SCRIPT_REFUSED, status, arrival_ms, ib__now_ms());
    return answer_error(c, status, type, message);
}

static bool flag(const cJSON *obj, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/* The prompt's length in tokens: an array of token ids is that many; a
 * string is read one byte a token (the script has no vocabulary). -1: no
 * prompt, or one of another form. */
static int64_t prompt_tokens(const cJSON *prompt)
{
    if (cJSON_IsString(prompt)) return (int64_t)strlen(prompt->valuestring);
    if (!cJSON_IsArray(prompt)) return -1;
    const cJSON *id;
    cJSON_ArrayForEach(id, prompt) if (!cJSON_IsNumber(id)) return -1;
    return cJSON_GetArraySize(prompt);
}

/* The request's max_tokens: the script's default when absent; -1 when it
 * is not a whole number from 1 to the bound. */
static int64_t max_tokens(const ib_script *s, const cJSON *v)
{
    if (!v || cJSON_IsNull(v)) return s->default_max_tokens;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 ||
        v->valuedouble > IB__SCRIPT_MAX_TOKENS)
        return -1;
    return (int64_t)v->valuedouble;
}

/* The wait before a request's script starts (0 without slots): on the slot
 * free soonest, from the later of its arrival and that slot's end, which
 * moves to its own last token as scripted (whether the client stays or
 * not: the server does not look). */
static double slot_wait_ms(ib_script_server *srv, int64_t index, double arrival_ms, int64_t n_tokens)
{
    const ib_script *s = &srv->script;
    if (s->slots == 0) return 0;
    double busy_ms = script_ttft_ms(s, index);
    for (int64_t i = 1; i < n_tokens; i++) busy_ms += ib__script_gap_ms(s, i);
    pthread_mutex_lock(&srv->lock);
    int32_t first = 0;
    for (int32_t k = 1; k < s->slots; k++)
        if (srv->slot_free_ms[k] < srv->slot_free_ms[first]) first = k;
    double start = fmax(arrival_ms, srv->slot_free_ms[first]);
    srv->slot_free_ms[first] = start + busy_ms;
    pthread_mutex_unlock(&srv->lock);
    return start - arrival_ms;
}

static enum MHD_Result start_stream(struct MHD_Connection *c, stream *st)
{
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, st, free_stream);
    if (!r) {
        free_stream(st);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

/* The stream a valid request asks for (native: llama.cpp's own
 * /completion, its length n_predict), or a refusal's answer. */
static enum MHD_Result serve_completion(ib_script_server *srv, struct MHD_Connection *c, const cJSON *body,
                                        bool native, int64_t index, double arrival_ms)
{
    const ib_script *s = &srv->script;
    if (!cJSON_IsObject(body))
        return refuse(srv, c, index, arrival_ms, MHD_HTTP_BAD_REQUEST, "invalid_request_error",
                      "the body is not a JSON object");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(body, "model");
    if (cJSON_IsString(model) && strcmp(model->valuestring, s->model) != 0) {
        char message[512];
        snprintf(message, sizeof message, "The model `%.300s` does not exist.", model->valuestring);
        return refuse(srv, c, index, arrival_ms, MHD_HTTP_NOT_FOUND, "NotFoundError", message);
    }
    if (!flag(body, "stream"))
        return refuse(srv, c, index, arrival_ms, MHD_HTTP_BAD_REQUEST, "invalid_request_error",
                      "this server only streams: \"stream\": true");
    int64_t p = prompt_tokens(cJSON_GetObjectItemCaseSensitive(body, "prompt"));
    int64_t n = max_tokens(s, cJSON_GetObjectItemCaseSensitive(body, native ? "n_predict" : "max_tokens"));
    if (p < 0 || n < 0)
        return refuse(srv, c, index, arrival_ms, MHD_HTTP_BAD_REQUEST, "invalid_request_error",
                      p < 0    ? "prompt is neither a string nor an array of token ids"
                      : native ? "n_predict is not a whole number from 1 to 1000000"
                               : "max_tokens is not a whole number from 1 to 1000000");
    if (ib__script_fails(s, index) && s->failure == IB_SCRIPT_FAIL_HTTP_500)
        return refuse(srv, c, index, arrival_ms, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error",
                      "scripted failure");
    int64_t tokens = s->stop_after_tokens > 0 && s->stop_after_tokens < n ? s->stop_after_tokens : n;
    stream *st = calloc(1, sizeof *st);
    if (!st) return MHD_NO;
    const cJSON *options = cJSON_GetObjectItemCaseSensitive(body, "stream_options");
    *st = (stream){ .srv = srv,
                    .connection = c,
                    .index = index,
                    .fails = ib__script_fails(s, index),
                    .arrival_ms = arrival_ms,
                    .max_tokens = n,
                    .n_tokens = tokens,
                    .prompt_tokens = p,
                    .include_usage = flag(options, "include_usage"),
                    .continuous_usage = flag(options, "continuous_usage_stats"),
                    .return_tokens = flag(body, "return_tokens"),
                    .native = native,
                    .next_token_ms = slot_wait_ms(srv, index, arrival_ms, tokens) + script_ttft_ms(s, index),
                    .stage = STAGE_CHUNKS };
    st->first_token_ms = st->next_token_ms;
    return start_stream(c, st);
}

static enum MHD_Result serve_completions(ib_script_server *srv, struct MHD_Connection *c, const request *rq,
                                         bool native)
{
    double arrival_ms = ib__now_ms();
    pthread_mutex_lock(&srv->lock);
    int64_t index = srv->n_requests++;
    pthread_mutex_unlock(&srv->lock);
    cJSON *body = rq->too_big ? NULL : cJSON_ParseWithLength(rq->body ? rq->body : "", rq->n_body);
    /* The prompt's length keys a request between the server's stamps and
     * a client's record (a calibration gives each its own length). */
    int64_t p = cJSON_IsObject(body) ? prompt_tokens(cJSON_GetObjectItemCaseSensitive(body, "prompt")) : -1;
    stamp(srv, index, IB_SCRIPT_ARRIVED, p, arrival_ms, arrival_ms);
    enum MHD_Result ok = rq->too_big ? refuse(srv, c, index, arrival_ms, MHD_HTTP_CONTENT_TOO_LARGE,
                                              "invalid_request_error", "the body is larger than 1 MiB")
                                     : serve_completion(srv, c, body, native, index, arrival_ms);
    cJSON_Delete(body);
    return ok;
}

static enum MHD_Result serve_models(ib_script_server *srv, struct MHD_Connection *c)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"object\":\"list\",\"data\":[{\"id\":\"%s\",\"object\":\"model\",\"created\":0,"
             "\"owned_by\":\"inferbench\"}]}",
             srv->script.model);
    return answer_json(c, MHD_HTTP_OK, json);
}

/* Gathers the body (libmicrohttpd hands it over in pieces), then routes. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    ib_script_server *srv = cls;
    request *rq = *con_cls;
    if (!rq) {
        *con_cls = rq = calloc(1, sizeof *rq);
        return rq ? MHD_YES : MHD_NO;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        char *grown =
            rq->too_big || rq->n_body + n > MAX_BODY_BYTES ? NULL : realloc(rq->body, rq->n_body + n);
        if (!grown) {
            rq->too_big = true;
            return MHD_YES;
        }
        memcpy(grown + rq->n_body, upload_data, n);
        rq->body = grown;
        rq->n_body += n;
        return MHD_YES;
    }
    bool get = !strcmp(method, MHD_HTTP_METHOD_GET), post = !strcmp(method, MHD_HTTP_METHOD_POST);
    if (post && !strcmp(url, "/v1/completions")) return serve_completions(srv, c, rq, false);
    if (post && !strcmp(url, "/completion")) return serve_completions(srv, c, rq, true);
    if (get && !strcmp(url, "/health")) return answer_json(c, MHD_HTTP_OK, "{\"status\":\"ok\"}");
    if (get && !strcmp(url, "/v1/models")) return serve_models(srv, c);
    return answer_error(c, MHD_HTTP_NOT_FOUND, "NotFoundError", "no such endpoint");
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode why)
{
    (void)cls, (void)c, (void)why;
    request *rq = *con_cls;
    if (rq) free(rq->body);
    free(rq);
    *con_cls = NULL;
}

/* --- the server ---------------------------------------------------------------- */

static ib_status start_daemon(ib_script_server *srv, ib_error *err)
{
    struct sockaddr_in loopback = { .sin_family = AF_INET, .sin_port = 0 };
    loopback.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    srv->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD, 0, NULL,
                                   NULL, on_request, srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&loopback,
                                   MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
                                   MHD_OPTION_THREAD_STACK_SIZE, (size_t)THREAD_STACK_BYTES, MHD_OPTION_END);
    IB_FAIL_IF(!srv->daemon, err, IB_ERR_IO, "script server: cannot listen on 127.0.0.1: %s",
               strerror(errno));
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : 0;
    IB_FAIL_IF(srv->port == 0, err, IB_ERR_IO, "script server: no port bound on 127.0.0.1");
    return IB_OK;
}

static ib_status init_sync(ib_script_server *srv, ib_error *err)
{
    pthread_condattr_t attr;
    IB_FAIL_IF(pthread_condattr_init(&attr) != 0, err, IB_ERR_NO_MEMORY,
               "script server: no condition variable");
    /* Deadlines are CLOCK_MONOTONIC, the clock of every stamp. */
    int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0) rc = pthread_cond_init(&srv->wake, &attr);
    pthread_condattr_destroy(&attr);
    IB_FAIL_IF(rc != 0, err, IB_ERR_NO_MEMORY, "script server: no monotonic condition variable");
    if (pthread_mutex_init(&srv->lock, NULL) != 0) {
        pthread_cond_destroy(&srv->wake);
        return ib__fail(err, IB_ERR_NO_MEMORY, "script server: no mutex");
    }
    return IB_OK;
}

ib_status ib_script_server_start(const ib_script *s, ib_script_server **out, ib_error *err)
{
    *out = NULL;
    IB_TRY(ib__script_check(s, err));
    ib_script_server *srv = calloc(1, sizeof *srv);
    IB_FAIL_IF(!srv, err, IB_ERR_NO_MEMORY, "script server: out of memory");
    srv->script = *s;
    ib_status st = init_sync(srv, err);
    if (st != IB_OK) {
        free(srv);
        return st;
    }
    st = start_daemon(srv, err);
    if (st != IB_OK) {
        ib_script_server_stop(srv);
        return st;
    }
    *out = srv;
    return IB_OK;
}

int ib_script_server_port(const ib_script_server *srv) { return srv ? srv->port : -1; }

void ib_script_server_stop(ib_script_server *srv)
{
    if (!srv) return;
    /* Wake every stream waiting for its next token: each ends (cut), so
     * that the daemon can join its thread. */
    pthread_mutex_lock(&srv->lock);
    srv->stopping = true;
    pthread_cond_broadcast(&srv->wake);
    pthread_mutex_unlock(&srv->lock);
    if (srv->daemon) MHD_stop_daemon(srv->daemon);
    pthread_cond_destroy(&srv->wake);
    pthread_mutex_destroy(&srv->lock);
    free(srv->stamps);
    free(srv);
}
