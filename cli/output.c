/* What the program does around a measurement: errors and exit codes,
 * signals, files written whole or not at all. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile int cli_cancel_flag = 0;
static volatile sig_atomic_t signal_received = 0;
/* The temporary output files being written (--json and --html), for the
 * second signal's handler to remove (unlink is async-signal-safe). */
#define MAX_ACTIVE_OUTPUTS 2
static char active_tmp_paths[MAX_ACTIVE_OUTPUTS][4096];

int cli_exit_code(ib_status st)
{
    switch (st) {
    case IB_OK: return EXIT_OK;
    case IB_ERR_INVALID_ARG:
    case IB_ERR_IO:
    case IB_ERR_MODEL:
    case IB_ERR_UNSUPPORTED:
    case IB_ERR_NO_DEVICE: return EXIT_BAD_INPUT;
    case IB_ERR_NOT_MET: return EXIT_NOT_MET;
    case IB_ERR_INTERRUPTED: return cli_signal_exit_code() ? cli_signal_exit_code() : 130;
    default: return EXIT_RUN_FAILED;
    }
}

int cli_fail(ib_status st, const char *message)
{
    cli_progress_clear();
    fprintf(stderr, "inferbench: %s\n", message && *message ? message : ib_status_str(st));
    return cli_exit_code(st);
}

void cli_warn(const char *fmt, ...)
{
    cli_progress_clear();
    va_list ap;
    va_start(ap, fmt);
    fputs("inferbench: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* A signal within this long of the first is the same request delivered
 * twice (timeout(1) signals the child and then its whole process group). */
#define DUPLICATE_SIGNAL_NS 500000000LL

static long long monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The first signal asks the measurement to stop and keep its results; a
 * second one, later, ends the program at once, leaving no half-written
 * file. */
static void on_signal(int sig)
{
    /* Only this handler touches it, and both signals are blocked while it
     * runs (sa_mask), so it is never read half-written. */
    static long long first_ns;
    long long now = monotonic_ns();
    if (cli_cancel_flag) {
        if (now - first_ns < DUPLICATE_SIGNAL_NS) return;
        for (int i = 0; i < MAX_ACTIVE_OUTPUTS; i++)
            if (active_tmp_paths[i][0]) unlink(active_tmp_paths[i]);
        _exit(128 + sig);
    }
    first_ns = now;
    signal_received = sig;
    cli_cancel_flag = 1;
}

void cli_install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cli_signal_exit_code(void) { return signal_received ? 128 + (int)signal_received : 0; }

/* Sets the slot holding from (NULL: a free one) to to ("": frees it),
 * with the signals blocked so that the handler never sees half a path. */
static void swap_tmp(const char *from, const char *to)
{
    if (strlen(to) >= sizeof active_tmp_paths[0]) return;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    for (int i = 0; i < MAX_ACTIVE_OUTPUTS; i++)
        if (from ? !strcmp(active_tmp_paths[i], from) : !active_tmp_paths[i][0]) {
            memcpy(active_tmp_paths[i], to, strlen(to) + 1);
            break;
        }
    sigprocmask(SIG_SETMASK, &old, NULL);
}

static void forget_tmp(const cli_output *o) { swap_tmp(o->tmp_path, ""); }

bool cli_output_open(cli_output *o, const char *path)
{
    memset(o, 0, sizeof *o);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "inferbench: cannot write '%s': it is a directory\n", path);
        return false;
    }
    size_t n = strlen(path) + 32;
    o->path = strdup(path);
    o->tmp_path = malloc(n);
    if (!o->path || !o->tmp_path) {
        cli_output_abort(o);
        fprintf(stderr, "inferbench: out of memory\n");
        return false;
    }
    snprintf(o->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    o->f = fopen(o->tmp_path, "wx");
    if (!o->f) {
        fprintf(stderr, "inferbench: cannot write '%s': %s\n", path, strerror(errno));
        free(o->path);
        free(o->tmp_path);
        memset(o, 0, sizeof *o);
        return false;
    }
    swap_tmp(NULL, o->tmp_path);
    return true;
}

bool cli_output_commit(cli_output *o, const char *text)
{
    if (!o->f) return false;
    /* text NULL: the caller wrote the content through o->f itself. */
    bool ok = text == NULL || (fputs(text, o->f) >= 0 && fputc('\n', o->f) != EOF);
    ok = (fflush(o->f) == 0) && ok;
    ok = (fsync(fileno(o->f)) == 0) && ok;
    ok = (fclose(o->f) == 0) && ok;
    o->f = NULL;
    if (ok && rename(o->tmp_path, o->path) != 0) ok = false;
    forget_tmp(o);
    if (!ok) {
        fprintf(stderr, "inferbench: cannot write '%s': %s\n", o->path, strerror(errno));
        unlink(o->tmp_path);
    }
    free(o->path);
    free(o->tmp_path);
    memset(o, 0, sizeof *o);
    return ok;
}

void cli_output_abort(cli_output *o)
{
    if (o->f) {
        fclose(o->f);
        unlink(o->tmp_path);
        forget_tmp(o);
    }
    free(o->path);
    free(o->tmp_path);
    memset(o, 0, sizeof *o);
}

int cli_start(const cli_args *a, cli_output *json, cli_output *html, ib_workload **w)
{
    *w = NULL;
    memset(json, 0, sizeof *json);
    if (html) memset(html, 0, sizeof *html);
    if (a->n_pos > 1) return cli_fail(IB_ERR_INVALID_ARG, "give one model (a file or zoo:NAME)");
    if (a->json_path && !cli_output_open(json, a->json_path)) return EXIT_BAD_INPUT;
    if (html && a->html_path && !cli_output_open(html, a->html_path)) {
        cli_output_abort(json);
        return EXIT_BAD_INPUT;
    }
    ib_error err = {{0}};
    ib_status st = ib_workload_open_model(a->model, &a->model_opts, w, &err);
    /* --device auto is resolved now: CUDA-only options are judged here. */
    if (st == IB_OK && cli_options_fit_device(a, ib_workload_get_info(*w)->device)) return EXIT_OK;
    cli_output_abort(json);
    if (html) cli_output_abort(html);
    if (st == IB_OK) {
        ib_workload_destroy(*w);
        *w = NULL;
        return EXIT_BAD_INPUT;
    }
    return cli_fail(st, err.message);
}

/* Commits doc to o when o is open (aborts it when there is no doc); frees
 * doc. False when the file could not be written. */
static bool save(cli_output *o, char *doc)
{
    bool ok = true;
    if (o && o->f) {
        if (!doc) cli_output_abort(o);
        else ok = cli_output_commit(o, doc);
    }
    ib_free(doc);
    return ok;
}

int cli_finish_with_html(cli_output *json, cli_output *html, char *text, char *doc, char *page,
                         ib_status st, const ib_error *err)
{
    int code = EXIT_OK;
    cli_progress_clear();
    if (text) fputs(text, stdout);
    ib_free(text);
    if (!save(json, doc)) code = EXIT_RUN_FAILED;
    if (!save(html, page)) code = EXIT_RUN_FAILED;
    if (st != IB_OK) code = cli_fail(st, err->message);
    return code;
}

int cli_finish(cli_output *json, char *text, char *doc, ib_status st, const ib_error *err)
{
    return cli_finish_with_html(json, NULL, text, doc, NULL, st, err);
}
