/* inferbench script-server (hidden): the scripted streaming server of
 * docs/script-server.md, standalone, for the tests that start it as a
 * process and for a user who calibrates another HTTP client (vLLM's bench,
 * guidellm) against it. Its first line on standard output is its URL; it
 * serves until SIGINT or SIGTERM, then writes its stamps (--stamps FILE)
 * and one summary line.
 *
 * Hidden, with its own few options: it is an instrument of the tool, not a
 * measurement; the commands' option table (and its help, golden files and
 * refusals) is for measurements of a model. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool parse_ms(const char *name, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v)) {
        fprintf(stderr, "inferbench: script-server: %s '%s' is not a number of ms\n", name, text);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_count(const char *name, const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end) {
        fprintf(stderr, "inferbench: script-server: %s '%s' is not a whole number\n", name, text);
        return false;
    }
    *out = (int64_t)v;
    return true;
}

/* "1,2.5,3": the gaps in turn. */
static bool parse_gaps(const char *text, ib_script *s)
{
    char buf[4096];
    if (strlen(text) >= sizeof buf) {
        fprintf(stderr, "inferbench: script-server: --gaps-ms is too long\n");
        return false;
    }
    strcpy(buf, text);
    s->n_gaps = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (s->n_gaps == IB_SCRIPT_MAX_GAPS) {
            fprintf(stderr, "inferbench: script-server: more than %d gaps in --gaps-ms\n",
                    IB_SCRIPT_MAX_GAPS);
            return false;
        }
        if (!parse_ms("--gaps-ms", tok, &s->gaps_ms[s->n_gaps++])) return false;
    }
    return true;
}

static const char *const failure_names[] = {
    "none", "500", "reset", "no-done", "malformed", "stall", "error"
};

static bool parse_failure(const char *text, ib_script *s)
{
    for (size_t i = 0; i < sizeof failure_names / sizeof *failure_names; i++)
        if (!strcmp(text, failure_names[i])) {
            s->failure = (ib_script_failure)i;
            return true;
        }
    fprintf(stderr,
            "inferbench: script-server: --fail '%s' is not none, 500, reset, no-done, malformed, stall or "
            "error\n",
            text);
    return false;
}

/* One option and its value into s (or *stamps_path). */
static bool parse_option(const char *name, const char *value, ib_script *s, const char **stamps_path)
{
    int64_t k = 0;
    if (!strcmp(name, "--ttft-ms")) return parse_ms(name, value, &s->ttft_ms);
    if (!strcmp(name, "--itl-ms")) return parse_ms(name, value, &s->itl_ms);
    if (!strcmp(name, "--cold-start-ms")) return parse_ms(name, value, &s->cold_start_ms);
    if (!strcmp(name, "--gaps-ms")) return parse_gaps(value, s);
    if (!strcmp(name, "--model")) {
        if (strlen(value) >= sizeof s->model) {
            fprintf(stderr, "inferbench: script-server: --model is longer than %zu characters\n",
                    sizeof s->model - 1);
            return false;
        }
        strcpy(s->model, value);
        return true;
    }
    if (!strcmp(name, "--fail")) return parse_failure(value, s);
    if (!strcmp(name, "--stamps")) {
        *stamps_path = value;
        return true;
    }
    if (!strcmp(name, "--tokens-per-chunk")) {
        if (!parse_count(name, value, &k)) return false;
        s->tokens_per_chunk = k < INT32_MIN ? INT32_MIN : k > INT32_MAX ? INT32_MAX : (int32_t)k;
        return true;
    }
    if (!strcmp(name, "--max-tokens")) return parse_count(name, value, &s->default_max_tokens);
    if (!strcmp(name, "--stop-after-tokens")) return parse_count(name, value, &s->stop_after_tokens);
    if (!strcmp(name, "--fail-after-chunks")) return parse_count(name, value, &s->fail_after_chunks);
    if (!strcmp(name, "--fail-every")) return parse_count(name, value, &s->fail_every);
    if (!strcmp(name, "--slots")) {
        if (!parse_count(name, value, &k)) return false;
        s->slots = k < INT32_MIN ? INT32_MIN : k > INT32_MAX ? INT32_MAX : (int32_t)k;
        return true;
    }
    fprintf(stderr, "inferbench: script-server: unknown option '%s' (docs/script-server.md lists them)\n",
            name);
    return false;
}

static bool parse_args(int argc, char **argv, ib_script *s, const char **stamps_path)
{
    for (int i = 0; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        char name[64];
        const char *value;
        if (eq) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - argv[i]) < 63 ? (int)(eq - argv[i]) : 63, argv[i]);
            value = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", argv[i]);
            if (i + 1 == argc) {
                fprintf(stderr, "inferbench: script-server: %s needs a value\n", name);
                return false;
            }
            value = argv[++i];
        }
        if (!parse_option(name, value, s, stamps_path)) return false;
    }
    return true;
}

static const char *const kind_names[] = { "arrived", "chunk", "usage", "done", "refused", "broken", "ended" };

/* The stamps as CSV: one row a stamp, in the order they happened. */
static bool write_stamps(const char *path, const ib_script_stamp *st, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "inferbench: script-server: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    fprintf(f, "request,kind,tokens,planned_ms,sent_ms\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%lld,%s,%lld,%.6f,%.6f\n", (long long)st[i].request, kind_names[st[i].kind],
                (long long)st[i].tokens, st[i].planned_ms, st[i].sent_ms);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        fprintf(stderr, "inferbench: script-server: cannot write %s\n", path);
        remove(path);
    }
    return ok;
}

/* What was served: requests, chunks and tokens, from the stamps. */
static void print_summary(const ib_script_stamp *st, size_t n)
{
    long long requests = 0, chunks = 0, tokens = 0;
    for (size_t i = 0; i < n; i++) {
        requests += st[i].kind == IB_SCRIPT_ARRIVED;
        chunks += st[i].kind == IB_SCRIPT_CHUNK;
        tokens += st[i].kind == IB_SCRIPT_CHUNK ? st[i].tokens : 0;
    }
    printf("served %lld requests: %lld chunks, %lld tokens\n", requests, chunks, tokens);
}

static int serve_until_signal(ib_script_server *srv, const char *stamps_path)
{
    printf("http://127.0.0.1:%d\n", ib_script_server_port(srv));
    fflush(stdout);
    const struct timespec tick = { .tv_nsec = 50 * 1000 * 1000 };
    while (!cli_cancel_flag) nanosleep(&tick, NULL);
    /* Stamps may still come (a stream ends): those after the copy are lost. */
    size_t n = ib_script_server_stamps(srv, NULL, 0);
    ib_script_stamp *st = calloc(n ? n : 1, sizeof *st);
    size_t total = st ? ib_script_server_stamps(srv, st, n) : 0;
    n = total < n ? total : n;
    ib_script_server_stop(srv);
    bool ok = !stamps_path || write_stamps(stamps_path, st, n);
    print_summary(st, n);
    free(st);
    return ok ? EXIT_OK : EXIT_RUN_FAILED;
}

int cmd_script_server(int argc, char **argv)
{
    ib_script s;
    ib_script_init(&s);
    const char *stamps_path = NULL;
    if (!parse_args(argc, argv, &s, &stamps_path)) return EXIT_BAD_INPUT;
    ib_script_server *srv = NULL;
    ib_error err = { { 0 } };
    ib_status st = ib_script_server_start(&s, &srv, &err);
    if (st != IB_OK) return cli_fail(st, err.message);
    cli_install_signal_handlers();
    return serve_until_signal(srv, stamps_path);
}
