/* Checked reads of a result file's JSON (read.h). Their messages are the
 * result reader's ("not an inferbench latency result: KEY is not ..."),
 * whoever reads through them. */
#include "json/read.h"

#include <math.h>

#define NOT_LATENCY "not an inferbench latency result: "

ib_status ib__json_read_string(const cJSON *obj, const char *key, const char *where, char *dst, size_t cap,
                               ib_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    dst[0] = '\0';
    if (!v || cJSON_IsNull(v)) return IB_OK;
    IB_FAIL_IF(!cJSON_IsString(v) || !v->valuestring, err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "%s%s is not a string", where, key);
    ib__strlcpy(dst, v->valuestring, cap);
    return IB_OK;
}

ib_status ib__json_read_yes_no(const cJSON *obj, const char *key, const char *where, char dst[4],
                               ib_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    dst[0] = '\0';
    if (!v || cJSON_IsNull(v)) return IB_OK;
    IB_FAIL_IF(!cJSON_IsBool(v), err, IB_ERR_INVALID_ARG, NOT_LATENCY "%s%s is not true or false", where,
               key);
    ib__strlcpy(dst, cJSON_IsTrue(v) ? "yes" : "no", 4);
    return IB_OK;
}

ib_status ib__json_set_option(ib_option_list *options, const char *where, const char *key, const char *value,
                              ib_error *err)
{
    ib_status st = ib_option_list_set(options, key, value);
    IB_FAIL_IF(st != IB_OK, err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "%s%.64s: a key of 1 to %d bytes and a value under %d, at most %d keys", where,
               key, IB_OPTION_KEY_LEN - 1, IB_OPTION_VALUE_LEN, IB_MAX_OPTIONS);
    return IB_OK;
}

ib_status ib__json_read_count(const cJSON *obj, const char *key, const char *where, double *out,
                              ib_error *err)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = t && !cJSON_IsNull(t) ? (cJSON_IsNumber(t) ? t->valuedouble : NAN) : 0;
    IB_FAIL_IF(!(*out >= 0 && *out <= 1e6 && *out == floor(*out)), err, IB_ERR_INVALID_ARG,
               NOT_LATENCY "%s%s is not a whole number >= 0", where, key);
    return IB_OK;
}
