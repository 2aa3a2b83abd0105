/* calibrate client's ceiling kept on this machine, and read back by serve
 * --endpoint to state it in every run (docs/serve-endpoint.md, "The
 * client's ceiling"). The program reads and writes the file; the library
 * makes and reads its text. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FILE_NAME "client-calibration.json"
#define MAX_FILE_BYTES 65536

/* The file's path into buf (its folder created when make_folder). */
static bool calibration_path(char *buf, size_t cap, bool make_folder)
{
    const char *own = getenv("INFERBENCH_CLIENT_CALIBRATION"), *xdg = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    int n;
    if (own && *own)
        return snprintf(buf, cap, "%s", own) < (int)cap;
    else if (xdg && xdg[0] == '/')
        n = snprintf(buf, cap, "%s/inferbench", xdg);
    else if (home && home[0] == '/')
        n = snprintf(buf, cap, "%s/.cache/inferbench", home);
    else
        n = snprintf(buf, cap, "/tmp/inferbench");
    if (n < 0 || (size_t)n + sizeof "/" FILE_NAME > cap) return false;
    bool made = !make_folder || cli_make_dirs(buf);
    strcat(buf, "/" FILE_NAME);
    return made;
}

/* This host's name and inferbench's version: what makes a calibration
 * this machine's. */
static void this_host(char *host, size_t cap)
{
    if (gethostname(host, cap - 1) != 0) snprintf(host, cap, "unknown");
    host[cap - 1] = '\0';
}

bool cli_client_calibration_prepare(cli_output *o)
{
    char path[512];
    if (!calibration_path(path, sizeof path, true)) {
        fprintf(stderr, "inferbench: calibrate client: no folder for %s to keep the calibration in (%s)\n",
                path, strerror(errno));
        return false;
    }
    return cli_output_prepare(o, "calibrate client's file", path, NULL, NULL);
}

bool cli_client_calibration_save(cli_output *o, const ib_client_calibration_result *r, FILE *say)
{
    char host[128], date[32], path[512];
    snprintf(path, sizeof path, "%s", o->path); /* the commit lets o go */
    this_host(host, sizeof host);
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    char *text = ib_client_ceiling_file_text(r, date, host, IB_VERSION_STRING);
    bool ok = text && cli_output_commit(o, text);
    if (!text) cli_output_abort(o);
    free(text);
    if (ok) fprintf(say, "kept for serve --endpoint in %s\n", path);
    return ok;
}

/* The file's text (NUL-terminated, malloc'd), or NULL with errno. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = malloc(MAX_FILE_BYTES + 1);
    size_t n = text ? fread(text, 1, MAX_FILE_BYTES + 1, f) : 0;
    int failed = !text || ferror(f);
    fclose(f);
    if (failed || n > MAX_FILE_BYTES) {
        free(text);
        errno = failed ? EIO : EFBIG;
        return NULL;
    }
    text[n] = '\0';
    return text;
}

/* Made on another host or by another version: say which. */
static void check_current(ib_client_ceiling *c)
{
    char host[128];
    this_host(host, sizeof host);
    if (!strcmp(c->host, host) && !strcmp(c->version, IB_VERSION_STRING)) return;
    c->state = IB_CEILING_STALE;
    snprintf(c->note, sizeof c->note, "on host %s by inferbench %s; this is %s, inferbench %s", c->host,
             c->version, host, IB_VERSION_STRING);
}

void cli_client_ceiling_load(ib_client_ceiling *c)
{
    memset(c, 0, sizeof *c);
    if (!calibration_path(c->path, sizeof c->path, false)) {
        c->state = IB_CEILING_MISSING;
        return;
    }
    char *text = read_text(c->path);
    if (!text) {
        c->state = errno == ENOENT ? IB_CEILING_MISSING : IB_CEILING_UNREADABLE;
        if (c->state == IB_CEILING_UNREADABLE) snprintf(c->note, sizeof c->note, "%s", strerror(errno));
        return;
    }
    ib_error err = { { 0 } };
    if (ib_client_ceiling_parse(text, c, &err) != IB_OK) {
        c->state = IB_CEILING_UNREADABLE;
        snprintf(c->note, sizeof c->note, "%s", err.message);
    } else {
        check_current(c);
    }
    free(text);
}
