/* The calibration record of between-session spreads ("inferbench.spread/1",
 * docs/compare.md): for each kind of run, how much sessions of it differed,
 * pooled over the multi-session latency results the program recorded. The
 * document comes from a file anyone could have edited: every key is checked
 * before it is used, and a document that is not a record is refused. */
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPREAD_SCHEMA "inferbench.spread/1"
#define NOT_RECORD "not an inferbench calibration record: "

/* What makes two runs of one kind: the same device and GPU, model, batch,
 * arithmetic, clock and backend options, joined with '|'. */
static void kind_key(const ib_latency_file *f, char *key, size_t cap)
{
    snprintf(key, cap, "%s|%s|%s|%lld|%s|%s", f->device, f->gpu, f->model, (long long)f->batch, f->math,
             ib_timing_name(f->timing));
    for (size_t i = 0; i < f->options.n; i++) {
        size_t len = strlen(key);
        snprintf(key + len, cap - len, "|%s=%s", f->options.items[i].key, f->options.items[i].value);
    }
}

static bool whole_number(const cJSON *v, double min)
{
    return cJSON_IsNumber(v) && v->valuedouble >= min && v->valuedouble <= 1e12 &&
           v->valuedouble == floor(v->valuedouble);
}

/* An entry: a key, a between-session sd in [0, 10), df and results. */
static bool entry_ok(const cJSON *e)
{
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(e, "between_sd_log");
    return cJSON_IsObject(e) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "key")) &&
           cJSON_IsNumber(sd) && sd->valuedouble >= 0 && sd->valuedouble < 10 &&
           whole_number(cJSON_GetObjectItemCaseSensitive(e, "df"), 1) &&
           whole_number(cJSON_GetObjectItemCaseSensitive(e, "results"), 1);
}

/* doc parsed and checked into *root (a fresh record when doc is empty). */
static ib_status parse_record(const char *doc, size_t len, cJSON **root, ib_error *err)
{
    *root = NULL;
    if (!doc || len == 0) {
        *root = cJSON_CreateObject();
        IB_FAIL_IF(!*root, err, IB_ERR_NO_MEMORY, "out of memory");
        cJSON_AddStringToObject(*root, "schema", SPREAD_SCHEMA);
        cJSON_AddArrayToObject(*root, "kinds");
        return IB_OK;
    }
    IB_FAIL_IF(memchr(doc, '\0', len), err, IB_ERR_INVALID_ARG, NOT_RECORD "a NUL byte");
    char *copy = malloc(len + 1);
    IB_FAIL_IF(!copy, err, IB_ERR_NO_MEMORY, "out of memory");
    memcpy(copy, doc, len);
    copy[len] = '\0';
    *root = cJSON_ParseWithOpts(copy, NULL, 1);
    free(copy);
    IB_FAIL_IF(!*root, err, IB_ERR_INVALID_ARG, NOT_RECORD "not JSON");
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(*root, "schema");
    const cJSON *kinds = cJSON_GetObjectItemCaseSensitive(*root, "kinds");
    bool ok = cJSON_IsString(schema) && !strcmp(schema->valuestring, SPREAD_SCHEMA) && cJSON_IsArray(kinds) &&
              cJSON_GetArraySize(kinds) <= IB_SPREAD_RECORD_MAX_KINDS;
    for (const cJSON *e = ok ? kinds->child : NULL; e; e = e->next) ok = ok && entry_ok(e);
    if (!ok) {
        cJSON_Delete(*root);
        *root = NULL;
        return ib__fail(err, IB_ERR_INVALID_ARG, NOT_RECORD "schema \"%s\" expected, with valid kinds",
                        SPREAD_SCHEMA);
    }
    return IB_OK;
}

static cJSON *find_kind(const cJSON *root, const char *key)
{
    const cJSON *kinds = cJSON_GetObjectItemCaseSensitive(root, "kinds");
    for (cJSON *e = kinds->child; e; e = e->next)
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(e, "key")->valuestring, key)) return e;
    return NULL;
}

/* A new entry of f's kind, with its parts spelled out for a reader. */
static cJSON *new_kind(cJSON *root, const ib_latency_file *f, const char *key)
{
    cJSON *kinds = cJSON_GetObjectItemCaseSensitive(root, "kinds");
    if (cJSON_GetArraySize(kinds) >= IB_SPREAD_RECORD_MAX_KINDS) cJSON_DeleteItemFromArray(kinds, 0);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "key", key);
    cJSON_AddStringToObject(e, "device", f->device);
    cJSON_AddStringToObject(e, "gpu", f->gpu);
    cJSON_AddStringToObject(e, "model", f->model);
    cJSON_AddNumberToObject(e, "batch", (double)f->batch);
    cJSON_AddItemToObject(e, "backend_options", ib__json_options(&f->options));
    cJSON_AddNumberToObject(e, "between_sd_log", 0);
    cJSON_AddNumberToObject(e, "df", 0);
    cJSON_AddNumberToObject(e, "results", 0);
    cJSON_AddItemToArray(kinds, e);
    return e;
}

static void set_number(cJSON *e, const char *name, double v)
{
    cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(e, name), v);
}

char *ib_spread_record_add(const char *doc, size_t len, const ib_latency_file *f, ib_error *err)
{
    double sd;
    size_t k;
    if (ib_latency_file_spread(f, &sd, &k, err) != IB_OK) return NULL;
    cJSON *root;
    if (parse_record(doc, len, &root, err) != IB_OK) return NULL;
    char key[2048];
    kind_key(f, key, sizeof key);
    cJSON *e = find_kind(root, key);
    if (!e) e = new_kind(root, f, key);
    double df = cJSON_GetObjectItemCaseSensitive(e, "df")->valuedouble;
    double old_sd = cJSON_GetObjectItemCaseSensitive(e, "between_sd_log")->valuedouble;
    set_number(e, "between_sd_log", ib_spread_pooled(old_sd, (size_t)df, sd, k - 1));
    set_number(e, "df", df + (double)(k - 1));
    set_number(e, "results", cJSON_GetObjectItemCaseSensitive(e, "results")->valuedouble + 1);
    char *out = ib__json_finish(root);
    if (!out) ib__fail(err, IB_ERR_NO_MEMORY, "out of memory writing the calibration record");
    return out;
}

ib_status ib_spread_record_find(const char *doc, size_t len, const ib_latency_file *f, double *between_sd,
                                size_t *sessions, size_t *results, ib_error *err)
{
    *between_sd = 0;
    *sessions = *results = 0;
    cJSON *root;
    IB_TRY(parse_record(doc, len, &root, err));
    char key[2048];
    kind_key(f, key, sizeof key);
    const cJSON *e = find_kind(root, key);
    if (e) {
        *between_sd = cJSON_GetObjectItemCaseSensitive(e, "between_sd_log")->valuedouble;
        *results = (size_t)cJSON_GetObjectItemCaseSensitive(e, "results")->valuedouble;
        *sessions = (size_t)cJSON_GetObjectItemCaseSensitive(e, "df")->valuedouble + *results;
    }
    cJSON_Delete(root);
    return IB_OK;
}
