/* The calibration record of between-session spreads (docs/compare.md, "The
 * calibration record"): a small JSON file in the program's state folder,
 * $XDG_STATE_HOME/inferbench/spread.json (~/.local/state/... when
 * XDG_STATE_HOME is not set), that every latency --sessions run adds its
 * between-session spread to and compare reads when a side has one session.
 * The library reads and writes the document; this file finds, reads and
 * writes the file. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RECORD_NAME "inferbench/spread.json"
#define MAX_RECORD_BYTES ((size_t)4 << 20) /* IB_SPREAD_RECORD_MAX_KINDS entries fit well within */

/* The state folder: XDG_STATE_HOME when it is an absolute path (the XDG
 * rule: a relative one is ignored), else $HOME/.local/state. False when
 * neither is known. */
static bool state_dir(char *buf, size_t cap)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/') return (size_t)snprintf(buf, cap, "%s", xdg) < cap;
    if (home && home[0] == '/') return (size_t)snprintf(buf, cap, "%s/.local/state", home) < cap;
    return false;
}

static bool record_path(char *buf, size_t cap)
{
    char dir[PATH_MAX];
    return state_dir(dir, sizeof dir) && (size_t)snprintf(buf, cap, "%s/" RECORD_NAME, dir) < cap;
}

/* mkdir -p of path's folder. */
static bool make_folders(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST) return false;
        *p = '/';
    }
    return true;
}

/* The record's text (NULL, *len 0: there is none yet); false when it is
 * there and cannot be read, or is too large to be a record. */
static bool read_record(const char *path, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return errno == ENOENT;
    char *buf = malloc(MAX_RECORD_BYTES + 1);
    size_t n = buf ? fread(buf, 1, MAX_RECORD_BYTES + 1, f) : 0;
    bool ok = buf && !ferror(f) && n <= MAX_RECORD_BYTES;
    fclose(f);
    if (!ok) {
        free(buf);
        return false;
    }
    *text = buf;
    *len = n;
    return true;
}

void cli_spread_record_add(const ib_latency_file *f)
{
    double sd;
    size_t k;
    char path[PATH_MAX];
    if (ib_latency_file_spread(f, &sd, &k, NULL) != IB_OK || !record_path(path, sizeof path)) return;
    char *old;
    size_t len;
    ib_error err = { { 0 } };
    char *doc = NULL;
    if (!read_record(path, &old, &len))
        snprintf(err.message, sizeof err.message, "cannot read it");
    else
        doc = ib_spread_record_add(old, len, f, &err);
    free(old);
    cli_output o;
    if (!doc)
        cli_warn("the calibration record %s was not updated: %s", path, err.message);
    else if (!make_folders(path))
        cli_warn("the calibration record %s was not updated: cannot make its folder: %s", path,
                 strerror(errno));
    else if (cli_output_prepare(&o, "the calibration record", path, NULL, NULL))
        cli_output_commit(&o, doc);
    ib_free(doc);
}

bool cli_spread_record_find(const ib_latency_file *f, double *between_sd, size_t *sessions, size_t *results,
                            char *path, size_t cap)
{
    char *text;
    size_t len;
    if (!record_path(path, cap)) return false;
    if (!read_record(path, &text, &len)) {
        cli_warn("the calibration record %s cannot be read: not used", path);
        return false;
    }
    if (!text) return false; /* none yet */
    ib_error err = { { 0 } };
    ib_status st = ib_spread_record_find(text, len, f, between_sd, sessions, results, &err);
    free(text);
    if (st != IB_OK) cli_warn("the calibration record %s is %s: not used", path, err.message);
    return st == IB_OK && *results > 0;
}
