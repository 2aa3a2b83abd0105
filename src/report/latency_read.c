/* Reading a latency result back from its JSON document, for `compare`.
 * The text comes from anywhere (a file, a CI artifact, a fuzzer), so every
 * key is checked for its type before it is used, and a document that is not
 * what latency --json writes is refused with the reason, never guessed at. */
#include "report/report.h"
#include "json/read.h"
#include "core/compare.h"
#include "core/latency.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Schema 2 records the backend's options as an object of strings and the
 * devices as a list; schema 1 (runtime_options of the one runtime there was
 * then, one "gpu" string) is still read, its options in today's keys. */
#define LATENCY_SCHEMA_1 "inferbench.latency/1"
#define LATENCY_SCHEMA_2 "inferbench.latency/2"
#define NOT_LATENCY "not an inferbench latency result: "

const char *ib_timing_name(ib_timing timing)
{
    return timing == IB_TIMING_DEVICE_EVENTS ? "device-events" : "host-clock";
}

/* A latency result holds two arrays of at most IB__MAX_RUNS samples and a
 * few thousand other values (metadata, GPU state samples). cJSON spends a
 * 64-byte node (and the allocator's header) on every value, so "[1,1,...]"
 * would cost it about 40 times its size in memory; a bound on the values,
 * checked before parsing, keeps that to what a real result of a million
 * runs costs. Every value but the first follows a ',' or opens with a '['
 * or '{' (counting inside strings too only over-counts). */
#define MAX_VALUES (3 * (size_t)IB__MAX_RUNS)

static size_t count_value_marks(const char *text, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += text[i] == ',' || text[i] == '[' || text[i] == '{';
    return n;
}

/* A copy with a terminating NUL: cJSON then parses exactly these bytes and
 * can require that nothing but white space follows the document. */
static ib_status parse_json(const char *text, size_t len, cJSON **root, ib_error *err)
{
    *root = NULL;
    IB_FAIL_IF(len == 0 || !text, err, IB_ERR_INVALID_ARG, NOT_LATENCY "the text is empty");
    const char *nul = memchr(text, '\0', len);
    IB_FAIL_IF(nul, err, IB_ERR_INVALID_ARG, NOT_LATENCY "a NUL byte at offset %zu", (size_t)(nul - text));
    IB_FAIL_IF(count_value_marks(text, len) > MAX_VALUES, err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "more than %zu values", MAX_VALUES);
    char *copy = malloc(len + 1);
    IB_FAIL_IF(!copy, err, IB_ERR_NO_MEMORY, "out of memory reading a latency result");
    memcpy(copy, text, len);
    copy[len] = '\0';
    const char *end = NULL;
    *root = cJSON_ParseWithOpts(copy, &end, 1);
    /* cJSON fails the same way when its allocations do: the offset tells a
     * person where to look either way. */
    size_t at = end && end >= copy && end <= copy + len ? (size_t)(end - copy) : 0;
    free(copy);
    IB_FAIL_IF(!*root, err, IB_ERR_INVALID_ARG, NOT_LATENCY "not JSON (error near byte %zu)", at);
    return IB_OK;
}

/* The schema's version: 1 or 2. */
static ib_status read_schema(const cJSON *root, int *version, ib_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "schema");
    IB_FAIL_IF(!cJSON_IsString(v) || !v->valuestring, err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "no \"schema\" string");
    *version = !strcmp(v->valuestring, LATENCY_SCHEMA_2)   ? 2
               : !strcmp(v->valuestring, LATENCY_SCHEMA_1) ? 1
                                                           : 0;
    /* %.64s: the value is outside input; the message stays one short line. */
    IB_FAIL_IF(!*version, err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "schema is \"%.64s\", expected \"" LATENCY_SCHEMA_2
                           "\" (or the older \"" LATENCY_SCHEMA_1 "\")",
               v->valuestring);
    return IB_OK;
}

/* batch, when present, is a whole number >= 1 (JSON numbers are doubles:
 * 2^53 is where they stop being whole). */
static ib_status read_batch(const cJSON *root, int64_t *batch, ib_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "batch");
    *batch = 0;
    if (!v) return IB_OK;
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    IB_FAIL_IF(!(d >= 1 && d <= 9007199254740992.0 && d == floor(d)), err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "batch is not a whole number >= 1");
    *batch = (int64_t)d;
    return IB_OK;
}

static ib_status read_partial(const cJSON *root, bool *partial, ib_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "partial");
    *partial = false;
    if (!v) return IB_OK;
    IB_FAIL_IF(!cJSON_IsBool(v), err, IB_ERR_INVALID_ARG, NOT_LATENCY "partial is not true or false");
    *partial = cJSON_IsTrue(v);
    return IB_OK;
}

/* The object at key, or NULL when absent or null; an error when it is
 * something else. */
static ib_status read_object(const cJSON *obj, const char *key, const char *where, const cJSON **out,
                             ib_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) return IB_OK;
    IB_FAIL_IF(!cJSON_IsObject(v), err, IB_ERR_INVALID_ARG, NOT_LATENCY "%s%s is not an object", where, key);
    *out = v;
    return IB_OK;
}

/* Schema 2: the name of the first of environment.devices, the device
 * measured on (a list, possibly empty: no GPU). */
static ib_status read_first_device(const cJSON *env, ib_latency_file *out, ib_error *err)
{
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(env, "devices");
    if (!devices || cJSON_IsNull(devices)) return IB_OK;
    IB_FAIL_IF(!cJSON_IsArray(devices), err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "environment.devices is not an array");
    const cJSON *first = cJSON_GetArrayItem(devices, 0);
    if (!first) return IB_OK;
    IB_FAIL_IF(!cJSON_IsObject(first), err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "environment.devices[0] is not an object");
    return ib__json_read_string(first, "name", "environment.devices[0].", out->gpu, sizeof out->gpu, err);
}

/* environment.runtime: what ran the model. Files written before it was an
 * object (schema 1, early schema 2) hold the only runtime there was then in
 * flat keys: its version (in the key the legacy keys name) and
 * provider read into the same fields. */
static ib_status read_runtime(const cJSON *env, const ib__legacy_result_keys *legacy, ib_latency_file *out,
                              ib_error *err)
{
    const cJSON *rt;
    IB_TRY(read_object(env, "runtime", "environment.", &rt, err));
    if (!rt) {
        if (legacy)
            IB_TRY(ib__json_read_string(env, legacy->version_key, "environment.", out->runtime_version,
                                        sizeof out->runtime_version, err));
        return ib__json_read_string(env, "execution_provider", "environment.", out->provider,
                                    sizeof out->provider, err);
    }
    const char *where = "environment.runtime.";
    IB_TRY(ib__json_read_string(rt, "name", where, out->runtime, sizeof out->runtime, err));
    IB_TRY(
        ib__json_read_string(rt, "version", where, out->runtime_version, sizeof out->runtime_version, err));
    return ib__json_read_string(rt, "provider", where, out->provider, sizeof out->provider, err);
}

static ib_status read_environment(const cJSON *root, int version, const ib__legacy_result_keys *legacy,
                                  ib_latency_file *out, ib_error *err)
{
    const cJSON *env;
    IB_TRY(read_object(root, "environment", "", &env, err));
    if (!env) return IB_OK;
    if (version == 1)
        IB_TRY(ib__json_read_string(env, "gpu", "environment.", out->gpu, sizeof out->gpu, err));
    else
        IB_TRY(read_first_device(env, out, err));
    return read_runtime(env, legacy, out, err);
}

/* The arithmetic (math, with math_default when it was the runtime's own
 * choice and math_of_model when the model's; in workload.runtime_options
 * in schema 1, in workload in 2) as one string: "tf32 (runtime default)". */
static ib_status read_math(const cJSON *rt, const char *where, ib_latency_file *out, ib_error *err)
{
    char math[8], by_default[4], of_model[4];
    IB_TRY(ib__json_read_string(rt, "math", where, math, sizeof math, err));
    IB_TRY(ib__json_read_yes_no(rt, "math_default", where, by_default, err));
    IB_TRY(ib__json_read_yes_no(rt, "math_of_model", where, of_model, err));
    snprintf(out->math, sizeof out->math, "%s%s", math,
             math[0] ? ib__math_note(!strcmp(by_default, "yes"), !strcmp(of_model, "yes")) : "");
    return IB_OK;
}

/* Schema 1: workload.runtime_options, the fields of the one runtime there
 * was then, in the keys its backend reports today (the legacy keys read
 * them), so that an old result compares with a new one; the math beside. */
static ib_status read_runtime_options_v1(const cJSON *rt, const ib__legacy_result_keys *legacy,
                                         ib_latency_file *out, ib_error *err)
{
    const char *where = "workload.runtime_options.";
    if (legacy) IB_TRY(legacy->read_runtime_options(rt, where, &out->options, err));
    return read_math(rt, where, out, err);
}

/* Schema 2: workload.backend_options, an object of strings, and the math
 * beside it. */
static ib_status read_backend_options(const cJSON *workload, ib_latency_file *out, ib_error *err)
{
    const cJSON *options;
    IB_TRY(read_object(workload, "backend_options", "workload.", &options, err));
    const cJSON *e;
    cJSON_ArrayForEach(e, options)
    {
        IB_FAIL_IF(!cJSON_IsString(e) || !e->valuestring || !e->string, err, IB_ERR_INVALID_ARG,
                   NOT_LATENCY "workload.backend_options.%.64s is not a string", e->string ? e->string : "?");
        IB_TRY(
            ib__json_set_option(&out->options, "workload.backend_options.", e->string, e->valuestring, err));
    }
    return read_math(workload, "workload.", out, err);
}

static ib_status read_runtime_options(const cJSON *root, int version, const ib__legacy_result_keys *legacy,
                                      ib_latency_file *out, ib_error *err)
{
    const cJSON *workload, *rt;
    IB_TRY(read_object(root, "workload", "", &workload, err));
    if (!workload) return IB_OK;
    if (version == 2) return read_backend_options(workload, out, err);
    IB_TRY(read_object(workload, "runtime_options", "workload.", &rt, err));
    return rt ? read_runtime_options_v1(rt, legacy, out, err) : IB_OK;
}

/* The measurement options that change what is timed: a cold L2 cache, the
 * launch held back. */
static ib_status read_config(const cJSON *root, ib_latency_file *out, ib_error *err)
{
    const cJSON *config;
    IB_TRY(read_object(root, "config", "", &config, err));
    if (!config) return IB_OK;
    IB_TRY(ib__json_read_yes_no(config, "flush_l2", "config.", out->flush_l2, err));
    return ib__json_read_yes_no(config, "exclude_launch", "config.", out->exclude_launch, err);
}

/* The array of samples.<key>: 1..IB__MAX_RUNS durations
 * (the measurement's own cap, so that a hostile file cannot make us
 * allocate more than a real result would). */
static ib_status read_samples(const cJSON *arr, const char *key, ib_latency_file *out, ib_error *err)
{
    IB_FAIL_IF(!cJSON_IsArray(arr), err, IB_ERR_INVALID_ARG, NOT_LATENCY "samples.%s is not an array", key);
    size_t n = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, arr)
    {
        IB_FAIL_IF(++n > IB__MAX_RUNS, err, IB_ERR_INVALID_ARG,
                   NOT_LATENCY "samples.%s holds more than %d samples", key, IB__MAX_RUNS);
    }
    IB_FAIL_IF(n == 0, err, IB_ERR_INVALID_ARG, NOT_LATENCY "samples.%s is empty", key);
    out->samples_ms = malloc(n * sizeof *out->samples_ms);
    IB_FAIL_IF(!out->samples_ms, err, IB_ERR_NO_MEMORY, "out of memory reading %zu samples", n);
    size_t i = 0;
    cJSON_ArrayForEach(v, arr)
    {
        double ms = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        IB_FAIL_IF(!ib__is_duration_ms(ms), err, IB_ERR_INVALID_ARG,
                   NOT_LATENCY "samples.%s[%zu] is not a duration (a number from 1e-6 to 1e9 ms)", key, i);
        out->samples_ms[i++] = ms;
    }
    out->n = n;
    return IB_OK;
}

/* The primary timing, as the latency report chooses it: device events when
 * the result has them, else the host clock. */
static ib_status read_primary_samples(const cJSON *root, ib_latency_file *out, ib_error *err)
{
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(root, "samples");
    IB_FAIL_IF(!cJSON_IsObject(samples), err, IB_ERR_INVALID_ARG, NOT_LATENCY "no \"samples\" object");
    const cJSON *device = cJSON_GetObjectItemCaseSensitive(samples, "device_ms");
    if (device && !cJSON_IsNull(device)) {
        out->timing = IB_TIMING_DEVICE_EVENTS;
        return read_samples(device, "device_ms", out, err);
    }
    out->timing = IB_TIMING_HOST_CLOCK;
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(samples, "host_ms");
    IB_FAIL_IF(!host || cJSON_IsNull(host), err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "samples.device_ms and samples.host_ms are both missing or null");
    return read_samples(host, "host_ms", out, err);
}

/* A whole number in [lo, hi] at key (absent or null: dflt). */
static ib_status read_whole(const cJSON *obj, const char *key, const char *where, double lo, double hi,
                            double dflt, double *out, ib_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    double d = !v || cJSON_IsNull(v) ? dflt : cJSON_IsNumber(v) ? v->valuedouble : NAN;
    IB_FAIL_IF(!(d >= lo && d <= hi && d == floor(d)), err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "%s%s is not a whole number from %.0f to %.0f", where, key, lo, hi);
    *out = d;
    return IB_OK;
}

/* o.energy's figure into *joules_per_item and *bound (NaN: none), and where
 * it has none and note is still empty, its reason; where: its place. */
static ib_status read_energy_at(const cJSON *o, const char *where, double *joules_per_item, double *bound,
                                char *note, size_t cap, ib_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "%senergy", where);
    return ib__energy_read_figure(cJSON_GetObjectItemCaseSensitive(o, "energy"), NOT_LATENCY, path,
                                  joules_per_item, bound, note, cap, err);
}

/* One entry of sessions.runs: how it ended and, unless it failed, its
 * samples of the result's timing. */
static ib_status read_session(const cJSON *e, size_t i, ib_timing timing, ib_latency_session *s,
                              ib_latency_file *out, ib_error *err)
{
    char where[48];
    snprintf(where, sizeof where, "sessions.runs[%zu].", i);
    IB_FAIL_IF(!cJSON_IsObject(e), err, IB_ERR_INVALID_ARG, NOT_LATENCY "sessions.runs[%zu] is not an object",
               i);
    double status;
    IB_TRY(read_whole(e, "exit_status", where, -64, 255, 0, &status, err));
    s->exit_status = (int)status;
    IB_TRY(ib__json_read_string(e, "message", where, s->message, sizeof s->message, err));
    IB_TRY(read_partial(e, &s->partial, err));
    IB_TRY(read_energy_at(e, where, &s->joules_per_item, &s->energy_bound, out->energy_note,
                          sizeof out->energy_note, err));
    const cJSON *samples;
    IB_TRY(read_object(e, "samples", where, &samples, err));
    if (!samples) return IB_OK; /* a session that failed */
    const char *key = timing == IB_TIMING_DEVICE_EVENTS ? "device_ms" : "host_ms";
    ib_latency_file one = { .n = 0 };
    ib_status st = read_samples(cJSON_GetObjectItemCaseSensitive(samples, key), key, &one, err);
    s->samples_ms = one.samples_ms;
    s->n = one.n;
    return st;
}

/* "sessions", when present: the sessions a multi-session result ran. */
static ib_status read_sessions(const cJSON *root, ib_latency_file *out, ib_error *err)
{
    const cJSON *sessions;
    IB_TRY(read_object(root, "sessions", "", &sessions, err));
    if (!sessions) return IB_OK;
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(sessions, "runs");
    int n = cJSON_IsArray(runs) ? cJSON_GetArraySize(runs) : -1;
    IB_FAIL_IF(n < 1 || n > IB_SESSIONS_MAX, err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "sessions.runs is not an array of 1 to %d sessions", IB_SESSIONS_MAX);
    double requested;
    IB_TRY(read_whole(sessions, "requested", "sessions.", 1, IB_SESSIONS_MAX, n, &requested, err));
    out->sessions_requested = (size_t)requested;
    out->sessions = calloc((size_t)n, sizeof *out->sessions);
    IB_FAIL_IF(!out->sessions, err, IB_ERR_NO_MEMORY, "out of memory reading %d sessions", n);
    out->n_sessions = (size_t)n;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, runs)
    {
        IB_TRY(read_session(e, i, out->timing, &out->sessions[i], out, err));
        i++;
    }
    return IB_OK;
}

/* energy.joules_per_item and energy.bound, when the file has a figure
 * (absent or null: NaN, as for a file from before energy was measured). */
static ib_status read_energy(const cJSON *root, ib_latency_file *out, ib_error *err)
{
    return read_energy_at(root, "", &out->joules_per_item, &out->energy_bound, out->energy_note,
                          sizeof out->energy_note, err);
}

/* sessions.figures' "joules_per_item": its geomean and ci95 (NaN where a
 * number is missing: a figure of too few sessions has no interval). */
static void read_sessions_energy(const cJSON *root, ib_latency_file *out)
{
    out->sessions_joules_per_item = out->sessions_joules_ci95[0] = out->sessions_joules_ci95[1] = NAN;
    const cJSON *sessions = cJSON_GetObjectItemCaseSensitive(root, "sessions");
    const cJSON *f =
        ib__figure_named(cJSON_GetObjectItemCaseSensitive(sessions, "figures"), "joules_per_item");
    if (!f) return;
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(f, "ci95");
    out->sessions_joules_per_item = ib__json_num(f, "geomean");
    for (int i = 0; i < 2 && cJSON_GetArraySize(ci) == 2; i++) {
        const cJSON *v = cJSON_GetArrayItem(ci, i);
        out->sessions_joules_ci95[i] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    }
}

static ib_status read_document(const cJSON *root, const ib__legacy_result_keys *legacy, ib_latency_file *out,
                               ib_error *err)
{
    IB_FAIL_IF(!cJSON_IsObject(root), err, IB_ERR_INVALID_ARG, NOT_LATENCY "the document is not an object");
    int version;
    IB_TRY(read_schema(root, &version, err));
    IB_TRY(ib__json_read_string(root, "model", "", out->model, sizeof out->model, err));
    IB_TRY(ib__json_read_string(root, "device", "", out->device, sizeof out->device, err));
    IB_TRY(read_batch(root, &out->batch, err));
    IB_TRY(read_partial(root, &out->partial, err));
    IB_TRY(ib__json_read_string(root, "stop_reason", "", out->stop_reason, sizeof out->stop_reason, err));
    IB_TRY(read_environment(root, version, legacy, out, err));
    IB_TRY(read_runtime_options(root, version, legacy, out, err));
    IB_TRY(read_config(root, out, err));
    out->warnings = ib__json_result_warning_bits(root);
    IB_TRY(read_energy(root, out, err));
    read_sessions_energy(root, out);
    IB_TRY(read_primary_samples(root, out, err));
    IB_TRY(read_sessions(root, out, err));
    /* A figure has no reason to be missing. */
    if (isfinite(out->joules_per_item) || isfinite(out->sessions_joules_per_item)) out->energy_note[0] = '\0';
    return IB_OK;
}

ib_status ib__latency_file_read(const char *text, size_t len, const ib__legacy_result_keys *legacy,
                                ib_latency_file *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root;
    IB_TRY(parse_json(text, len, &root, err));
    ib_status st = read_document(root, legacy, out, err);
    cJSON_Delete(root);
    if (st != IB_OK) ib_latency_file_free(out);
    return st;
}

void ib_latency_file_free(ib_latency_file *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->n_sessions; i++) free(f->sessions[i].samples_ms);
    free(f->sessions);
    free(f->samples_ms);
    memset(f, 0, sizeof *f);
}
