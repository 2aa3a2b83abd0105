/* Checked reads of a result file's JSON (src/json/read.c): the reader of
 * result files (src/report/latency_read.c) and the backends that read
 * their own keys of old files (ib__legacy_result_keys) share them, and
 * neither is the other's: a key of the wrong type is refused with the
 * key's place named after `where`, never guessed at. */
#ifndef IB_JSON_READ_H
#define IB_JSON_READ_H

#include "base/common.h"

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

/* The runtime-specific keys of an old result file, read by the backend
 * that wrote it (its registry hook), handed to the reader of result files
 * (ib__latency_file_read) by whoever asks the registry. */
typedef struct ib__legacy_result_keys {
    /* environment.<version_key>: the runtime's version, before
     * environment.runtime existed */
    const char *version_key;
    /* Reads workload.runtime_options (schema 1: rt, never NULL; messages
     * name keys after where) into today's keys of the backend's options
     * and the math, through the checked reads above. */
    ib_status (*read_runtime_options)(const cJSON *rt, const char *where, ib_option_list *options,
                                      ib_error *err);
} ib__legacy_result_keys;

#endif
