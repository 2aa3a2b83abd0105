/* Checked reads of a result file's JSON (latency_read.c), shared with the
 * hooks of backends that read their own keys of old files
 * (ib__legacy_result_keys): a key of the wrong type is refused with the
 * key's place named after `where`, never guessed at. */
#ifndef IB_REPORT_RESULT_KEYS_H
#define IB_REPORT_RESULT_KEYS_H

#include "core/common.h"

#include <cjson/cJSON.h>

/* The string at key copied into dst[cap]: "" when absent or null, an error
 * when it is something else. */
ib_status ib__json_read_string(const cJSON *obj, const char *key, const char *where, char *dst, size_t cap,
                               ib_error *err);
/* A boolean at key as "yes" / "no" in dst[4]: "" when absent or null. */
ib_status ib__json_read_yes_no(const cJSON *obj, const char *key, const char *where, char dst[4],
                               ib_error *err);
/* A whole number >= 0 at key (0 when absent or null) into *out. */
ib_status ib__json_read_count(const cJSON *obj, const char *key, const char *where, double *out,
                              ib_error *err);
/* Sets key in options; a value too long or too many keys are refused, not
 * cut, so that what compare reads is what was written. */
ib_status ib__json_set_option(ib_option_list *options, const char *where, const char *key, const char *value,
                              ib_error *err);

#endif
