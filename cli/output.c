/* What the program does around a measurement: errors and exit codes,
 * signals, and the result files: checked before anything is measured,
 * written at the end whole or not at all, never harming what is at the
 * path (docs/cli.md, "Output files"). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

volatile int cli_cancel_flag = 0;
static volatile sig_atomic_t signal_received = 0;
/* The temporary file being written at the end (outputs are written one
 * after the other), for the second signal's handler to remove (unlink is
 * async-signal-safe). Empty when there is none. */
static char active_tmp_path[PATH_MAX];

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

int cli_close_stdout(int code)
{
    /* As coreutils' close_stdout: an earlier write that failed, or the
     * flush of what is still buffered (a report is one buffer on a file or
     * a pipe, so /dev/full fails only here). A standard output closed by
     * the caller (>&-) with nothing written to it is no error. */
    bool pending = __fpending(stdout) != 0, failed_before = ferror(stdout) != 0;
    errno = 0;
    bool close_failed = fclose(stdout) != 0;
    int why = errno; /* before anything else can change it */
    if (!failed_before && !(close_failed && (pending || why != EBADF))) return code;
    cli_progress_clear();
    fprintf(stderr, "inferbench: cannot write the report to standard output%s%s\n", why ? ": " : "",
            why ? strerror(why) : "");
    return code == EXIT_OK ? EXIT_RUN_FAILED : code;
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
        if (active_tmp_path[0]) unlink(active_tmp_path);
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
    /* A reader that goes away (a FIFO, `--json - | head`) makes a write
     * fail with EPIPE, reported in one line, instead of killing us. */
    signal(SIGPIPE, SIG_IGN);
}

int cli_signal_exit_code(void) { return signal_received ? 128 + (int)signal_received : 0; }

/* ------------------------------------------------------------------------ */
/* Output files                                                              */
/* ------------------------------------------------------------------------ */

/* The kernel's own limit on a chain of symbolic links. */
#define MAX_LINKS 40

/* Sets the temporary the second signal removes ("": none); the caller
 * blocks the signals, so that the handler never sees half a path. */
static void set_active_tmp(const char *path)
{
    if (strlen(path) < sizeof active_tmp_path) memcpy(active_tmp_path, path, strlen(path) + 1);
}

static void block_signals(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, old);
}

static bool refuse(const cli_output *o, const char *why)
{
    fprintf(stderr, "inferbench: cannot write '%s' (%s): %s\n", o->path, o->flag, why);
    return false;
}

/* The folder holding path ("." for a bare name); caller frees. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A link in /proc (/dev/stdout -> /proc/self/fd/1 -> ...) names an open
 * file: its text is not a path ("pipe:[123]", or a file a shell opened for
 * us), so it is written through, never followed and replaced. */
static bool in_procfs(const char *path)
{
    char *folder = folder_of(path);
    struct statfs fs;
    bool proc = folder && statfs(folder, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
    free(folder);
    return proc;
}

/* The path a symlink names, relative to the link's own folder; caller frees. */
static char *link_target(const char *link)
{
    char text[PATH_MAX];
    ssize_t n = readlink(link, text, sizeof text - 1);
    if (n < 0) return NULL;
    text[n] = '\0';
    if (text[0] == '/') return strdup(text);
    char *folder = folder_of(link);
    char *joined = folder ? malloc(strlen(folder) + (size_t)n + 2) : NULL;
    if (joined) sprintf(joined, "%s/%s", folder, text);
    free(folder);
    return joined;
}

/* Follows the symlinks that path ends in, a chain, to the file they name
 * (which need not exist yet), stopping at a /proc link (*through_proc).
 * Caller frees; NULL with errno set on failure. */
static char *follow_links(const char *path, bool *through_proc)
{
    char *at = strdup(path);
    for (int hops = 0; at; hops++) {
        struct stat st;
        if (lstat(at, &st) != 0 || !S_ISLNK(st.st_mode)) return at;
        if (in_procfs(at)) {
            *through_proc = true;
            return at;
        }
        char *next = hops < MAX_LINKS ? link_target(at) : NULL;
        free(at);
        if (hops == MAX_LINKS) errno = ELOOP;
        at = next;
    }
    return NULL;
}

static void set_identity(cli_output *o, const struct stat *st, bool exists)
{
    o->exists = exists;
    o->dev = st->st_dev;
    o->ino = st->st_ino;
    o->mode = st->st_mode;
}

/* A file that does not exist yet: it is created in its folder, which must
 * exist and take new files. Its identity is the folder's and its name. */
static bool place_new(cli_output *o)
{
    char *folder = folder_of(o->target);
    if (!folder) return refuse(o, "out of memory");
    struct stat st;
    char why[PATH_MAX + 64];
    errno = 0;
    bool ok = stat(folder, &st) == 0 && S_ISDIR(st.st_mode) && access(folder, W_OK | X_OK) == 0;
    if (!ok)
        snprintf(why, sizeof why, "its folder '%s': %s", folder, errno ? strerror(errno) : "not a directory");
    free(folder);
    if (!ok) return refuse(o, why);
    set_identity(o, &st, false);
    o->kind = CLI_OUTPUT_REPLACE;
    return true;
}

/* A regular file is replaced whole: the temporary that replaces it is
 * created beside it, so its folder must take new files. */
static bool place_regular(cli_output *o)
{
    char *folder = folder_of(o->target);
    if (!folder) return refuse(o, "out of memory");
    char why[PATH_MAX + 64];
    bool ok = access(folder, W_OK | X_OK) == 0;
    if (!ok)
        snprintf(why, sizeof why, "its folder '%s' does not take new files: %s", folder, strerror(errno));
    free(folder);
    if (!ok) return refuse(o, why);
    o->kind = CLI_OUTPUT_REPLACE;
    return true;
}

static bool same_as_stdout(const struct stat *st)
{
    struct stat out;
    return fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st->st_dev && out.st_ino == st->st_ino;
}

/* Decides how o->path is written (see cli_output_kind) and where, following
 * its symlinks; refuses a folder and what cannot be written. */
static bool place(cli_output *o)
{
    struct stat st;
    if (!strcmp(o->path, "-")) {
        if (fstat(STDOUT_FILENO, &st) != 0) return refuse(o, "standard output is closed");
        set_identity(o, &st, true);
        o->kind = CLI_OUTPUT_STDOUT;
        return true;
    }
    bool through_proc = false;
    errno = 0;
    o->target = follow_links(o->path, &through_proc);
    if (!o->target) return refuse(o, strerror(errno ? errno : ENOMEM));
    errno = 0;
    if (stat(o->target, &st) != 0)
        return errno == ENOENT && !through_proc ? place_new(o) : refuse(o, strerror(errno));
    if (S_ISDIR(st.st_mode)) return refuse(o, "it is a directory");
    if (access(o->target, W_OK) != 0) return refuse(o, strerror(errno));
    set_identity(o, &st, true);
    if (through_proc && same_as_stdout(&st))
        o->kind = CLI_OUTPUT_STDOUT;
    else if (S_ISREG(st.st_mode) && !through_proc)
        return place_regular(o);
    else
        o->kind = CLI_OUTPUT_STREAM;
    return true;
}

static bool same_file(const cli_output *a, const cli_output *b)
{
    if (a->exists != b->exists || a->dev != b->dev || a->ino != b->ino) return false;
    /* Two files to be created: the same name in the same folder. */
    return a->exists || !strcmp(base_name(a->target), base_name(b->target));
}

/* Refuses an output that is one of the files the command reads, or the
 * file of an output prepared before it. */
static bool distinct(const cli_output *o, const char *const *reads, const cli_output *const *earlier)
{
    struct stat st;
    char why[PATH_MAX + 64];
    for (; reads && *reads; reads++)
        if (o->exists && stat(*reads, &st) == 0 && st.st_dev == o->dev && st.st_ino == o->ino) {
            snprintf(why, sizeof why, "it is '%s', which this command reads", *reads);
            return refuse(o, why);
        }
    for (; earlier && *earlier; earlier++) {
        const cli_output *e = *earlier;
        if (e->kind == CLI_OUTPUT_NONE || !same_file(o, e)) continue;
        if (o->kind == CLI_OUTPUT_STDOUT && e->kind == CLI_OUTPUT_STDOUT)
            snprintf(why, sizeof why, "%s goes to standard output already; only one output can", e->flag);
        else
            snprintf(why, sizeof why, "%s '%s' is the same file", e->flag, e->path);
        return refuse(o, why);
    }
    return true;
}

bool cli_output_prepare(cli_output *o, const char *flag, const char *path, const char *const *reads,
                        const cli_output *const *earlier)
{
    memset(o, 0, sizeof *o);
    if (!path) return true;
    o->flag = flag;
    o->path = strdup(path);
    if (!o->path) {
        fprintf(stderr, "inferbench: out of memory\n");
        return false;
    }
    bool ok = *path ? place(o) && distinct(o, reads, earlier) : refuse(o, "the path is empty");
    if (!ok) cli_output_abort(o);
    return ok;
}

bool cli_output_wanted(const cli_output *o) { return o && o->kind != CLI_OUTPUT_NONE; }

bool cli_output_is_stdout(const cli_output *o) { return o && o->kind == CLI_OUTPUT_STDOUT; }

void cli_output_abort(cli_output *o)
{
    free(o->path);
    free(o->target);
    memset(o, 0, sizeof *o);
}

/* A result in pieces (a document and its closing newline). */
typedef struct chunk {
    const void *data;
    size_t len;
} chunk;

/* Writes every piece, also across short writes and interruptions: a first
 * signal keeps the result, so its writing goes on. */
static bool write_chunks(int fd, const chunk *parts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *p = parts[i].data;
        size_t left = parts[i].len;
        while (left > 0) {
            ssize_t k = write(fd, p, left);
            if (k < 0 && errno == EINTR) continue;
            if (k == 0) errno = EIO;
            if (k <= 0) return false;
            p += k;
            left -= (size_t)k;
        }
    }
    return true;
}

/* A regular file, or none yet: a temporary beside the target, written,
 * synced and renamed over it, so that a reader sees the old file or the
 * whole new one. The temporary exists only during this call; the second
 * signal's handler removes it. */
static bool replace(const cli_output *o, const chunk *parts, size_t n)
{
    size_t cap = strlen(o->target) + 32;
    char *tmp = malloc(cap);
    if (!tmp) return false;
    snprintf(tmp, cap, "%s.tmp.%ld", o->target, (long)getpid());
    sigset_t old;
    block_signals(&old); /* created and registered as one step */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) set_active_tmp(tmp);
    sigprocmask(SIG_SETMASK, &old, NULL);
    bool ok = fd >= 0 && write_chunks(fd, parts, n);
    /* The file replaced keeps its permissions (a private result stays so). */
    ok = ok && (!o->exists || fchmod(fd, o->mode & 07777) == 0);
    ok = ok && fsync(fd) == 0;
    if (fd >= 0) ok = close(fd) == 0 && ok;
    ok = ok && rename(tmp, o->target) == 0;
    int saved = errno;
    block_signals(&old);
    if (!ok && fd >= 0) unlink(tmp);
    set_active_tmp("");
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(tmp);
    errno = saved;
    return ok;
}

/* A unix socket is written by connecting to it (open() cannot). */
static int connect_socket(const char *path)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* Opens what stream() writes into; a FIFO waits for its reader. */
static int open_stream(const char *target)
{
    struct stat st;
    if (stat(target, &st) != 0) return -1;
    if (S_ISSOCK(st.st_mode)) return connect_socket(target);
    /* A regular file here is one a shell opened for us (--json /dev/stderr
     * 2>log): appended to, keeping what it holds. */
    int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (S_ISREG(st.st_mode) ? O_APPEND : 0);
    int fd;
    do fd = open(target, flags);
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* A device, FIFO, socket or an open file named through /proc: written into
 * as it is, never created, truncated, renamed over or removed. */
static bool stream(const cli_output *o, const chunk *parts, size_t n)
{
    int fd = open_stream(o->target);
    if (fd < 0) return false;
    bool ok = write_chunks(fd, parts, n);
    int saved = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    errno = saved;
    return ok;
}

static bool commit_chunks(cli_output *o, const chunk *parts, size_t n)
{
    if (o->kind == CLI_OUTPUT_NONE) return false;
    bool ok;
    errno = 0;
    if (o->kind == CLI_OUTPUT_REPLACE)
        ok = replace(o, parts, n);
    else if (o->kind == CLI_OUTPUT_STREAM)
        ok = stream(o, parts, n);
    else
        ok = fflush(stdout) == 0 && write_chunks(STDOUT_FILENO, parts, n);
    if (!ok) refuse(o, errno ? strerror(errno) : "out of memory");
    cli_output_abort(o);
    return ok;
}

bool cli_output_commit(cli_output *o, const char *text)
{
    chunk parts[2] = { { text, strlen(text) }, { "\n", 1 } };
    return commit_chunks(o, parts, 2);
}

bool cli_output_commit_bytes(cli_output *o, const void *data, size_t len)
{
    chunk part = { data, len };
    return commit_chunks(o, &part, 1);
}

/* ------------------------------------------------------------------------ */
/* A command's first and last steps                                          */
/* ------------------------------------------------------------------------ */

/* The files a model command reads: the model and the --input @FILEs
 * (NULL-terminated in reads, which holds IB_MAX_TENSORS + 2). */
static void files_read(const cli_args *a, const char **reads)
{
    size_t n = 0;
    reads[n++] = a->model;
    for (size_t i = 0; i < a->model_opts.n_inputs; i++)
        if (a->inputs[i].fill == IB_INPUT_FILE) reads[n++] = a->inputs[i].spec + 1;
    reads[n] = NULL;
}

/* The result files, in the order they are checked: each flag, the
 * printer it takes (ib_report's format) and where cli_args keeps its path. */
static const struct {
    const char *flag;
    const char *format;
} output_formats[CLI_N_OUTPUTS] = {
    [CLI_OUT_JSON] = { "--json", "json" },
    [CLI_OUT_HTML] = { "--html", "html" },
    [CLI_OUT_CSV] = { "--csv", "csv" },
    [CLI_OUT_MD] = { "--md", "md" },
};

static const char *output_path(const cli_args *a, int i)
{
    switch (i) {
    case CLI_OUT_JSON: return a->json_path;
    case CLI_OUT_HTML: return a->html_path;
    case CLI_OUT_CSV: return a->csv_path;
    case CLI_OUT_MD: return a->md_path;
    }
    return NULL;
}

bool cli_outputs_prepare(cli_outputs *o, const cli_args *a, const char *const *reads)
{
    memset(o, 0, sizeof *o);
    const cli_output *earlier[CLI_N_OUTPUTS + 1] = { NULL };
    for (int i = 0; i < CLI_N_OUTPUTS; i++) {
        if (!cli_output_prepare(&o->file[i], output_formats[i].flag, output_path(a, i), reads, earlier)) {
            cli_outputs_abort(o);
            return false;
        }
        earlier[i] = &o->file[i];
    }
    return true;
}

void cli_outputs_abort(cli_outputs *o)
{
    for (int i = 0; i < CLI_N_OUTPUTS; i++) cli_output_abort(&o->file[i]);
}

bool cli_outputs_wanted(const cli_outputs *o, int which) { return cli_output_wanted(&o->file[which]); }

int cli_prepare_outputs(const cli_args *a, cli_outputs *out)
{
    memset(out, 0, sizeof *out);
    if (a->n_pos > 1) return cli_fail(IB_ERR_INVALID_ARG, "give one model (a file or zoo:NAME)");
    const char *reads[IB_MAX_TENSORS + 2];
    files_read(a, reads);
    return cli_outputs_prepare(out, a, reads) ? EXIT_OK : EXIT_BAD_INPUT;
}

/* Writes r in o's format to o when o is wanted (aborts it when nothing
 * was measured). A document ending in a line keeps it; JSON gets its
 * closing newline. False when it could not be made or written. */
static bool save(cli_output *o, const char *format, const ib_result *r)
{
    if (!cli_output_wanted(o)) return true;
    if (!r) {
        cli_output_abort(o);
        return true;
    }
    char *doc = ib_report(r, format);
    if (!doc) {
        refuse(o, "out of memory");
        cli_output_abort(o);
        return false;
    }
    size_t len = strlen(doc);
    bool ok = len && doc[len - 1] == '\n' ? cli_output_commit_bytes(o, doc, len) : cli_output_commit(o, doc);
    ib_free(doc);
    return ok;
}

/* The error line of st. An interruption before anything was measured (in
 * warm-up, say) leaves nothing to print or write, and the line says so:
 * "interrupted" alone reads as if a partial result had been kept. */
static int fail_line(ib_status st, const ib_error *err, bool measured, bool files_asked)
{
    if (measured || st != IB_ERR_INTERRUPTED) return cli_fail(st, err->message);
    char line[sizeof err->message + 64];
    snprintf(line, sizeof line, "%s: nothing was measured%s", err->message[0] ? err->message : "interrupted",
             files_asked ? ", no file was written" : "");
    return cli_fail(st, line);
}

int cli_report(cli_outputs *out, const ib_result *r, ib_status st, const ib_error *err)
{
    int code = EXIT_OK;
    cli_progress_clear();
    char *text = r ? ib_report(r, "text") : NULL;
    bool doc_on_stdout = false, files_asked = false;
    for (int i = 0; i < CLI_N_OUTPUTS; i++) {
        doc_on_stdout |= cli_output_is_stdout(&out->file[i]);
        files_asked |= cli_output_wanted(&out->file[i]);
    }
    /* A document on standard output ("-") moves the report to stderr. */
    if (text) fputs(text, doc_on_stdout ? stderr : stdout);
    ib_free(text);
    for (int i = 0; i < CLI_N_OUTPUTS; i++)
        if (!save(&out->file[i], output_formats[i].format, r)) code = EXIT_RUN_FAILED;
    if (st != IB_OK) code = fail_line(st, err, r != NULL, files_asked);
    return code;
}
