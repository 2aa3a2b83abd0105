/* --sessions N: the measurement repeated in N fresh processes, each this
 * program started again (/proc/self/exe, the same arguments) with a hidden
 * trailing "--session-child K:PATH": the runtime, its caches, its kernel
 * choices and the CUDA context start anew in each, as in a user's next run.
 * A session writes its JSON (latency, throughput, pitfalls or generate) to PATH, in a
 * folder this process owns, and nothing else; this process alone writes
 * the user's outputs, from the sessions merged by the library
 * (docs/method.md, "Sessions"). --sessions-max-ms caps their time. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SESSION_CHILD_FLAG "--session-child"
#define WAIT_STEP_NS 10000000L /* how often a running session is polled */

bool cli_sessions_wanted(const cli_args *a) { return a->sessions >= 2 && !a->session_index; }

bool cli_take_session_child(int *argc, char **argv, int *index, int *candidate, const char **path)
{
    if (*argc < 3 || strcmp(argv[*argc - 2], SESSION_CHILD_FLAG)) return true;
    const char *arg = argv[*argc - 1];
    char *colon;
    long k = strtol(arg, &colon, 10), c = 0;
    /* best's finals: "K/C:PATH", session K of candidate C (1-based) */
    if (*colon == '/') c = strtol(colon + 1, &colon, 10);
    if (k < 1 || k > IB_SESSIONS_MAX || c < 0 || c > IB_BEST_MAX_CANDIDATES || *colon != ':' || !colon[1]) {
        fprintf(stderr, "inferbench: %s takes K:PATH\n", SESSION_CHILD_FLAG);
        return false;
    }
    *index = (int)k;
    *candidate = (int)c;
    *path = colon + 1;
    *argc -= 2;
    argv[*argc] = NULL;
    return true;
}

void cli_session_child_setup(cli_args *a)
{
    const char *crash = getenv("INFERBENCH_TEST_CRASH_SESSION");
    if (crash && atoi(crash) == a->session_index) raise(SIGKILL);
    a->json_path = a->session_result;
    a->html_path = a->csv_path = a->md_path = NULL;
    a->quiet = true;
}

/* An --input @FILE is read again by every session: a pipe or a terminal
 * would give the first session everything and the others nothing. */
static bool inputs_repeatable(const cli_args *a)
{
    for (size_t i = 0; i < a->model_opts.n_inputs; i++) {
        struct stat st;
        const char *path = a->inputs[i].spec + 1;
        if (a->inputs[i].fill == IB_INPUT_FILE && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            fprintf(stderr,
                    "inferbench: --sessions reads --input @%s once per session: it must be a regular file\n",
                    path);
            return false;
        }
    }
    return true;
}

/* Where session k's files go in dir: "DIR/K.json", "DIR/K.err". */
static void session_path(char *buf, size_t cap, const char *dir, size_t k, const char *ext)
{
    snprintf(buf, cap, "%s/%zu.%s", dir, k, ext);
}

/* In the forked child: stdout to /dev/null, stderr to err_path, then this
 * program again as session k (of best's candidate `candidate`, 1-based;
 * 0: none). Never returns. */
static void exec_session(const cli_args *a, size_t k, size_t candidate, const char *json_path,
                         const char *err_path)
{
    int null = open("/dev/null", O_WRONLY);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null < 0 || err < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) _exit(127);
    char child_arg[PATH_MAX + 64];
    if (candidate)
        snprintf(child_arg, sizeof child_arg, "%zu/%zu:%s", k, candidate, json_path);
    else
        snprintf(child_arg, sizeof child_arg, "%zu:%s", k, json_path);
    char **argv = calloc((size_t)a->argc + 3, sizeof *argv);
    if (!argv) _exit(127);
    for (int i = 0; i < a->argc; i++) argv[i] = a->argv[i];
    argv[a->argc] = SESSION_CHILD_FLAG;
    argv[a->argc + 1] = child_arg;
    execv("/proc/self/exe", argv);
    fprintf(stderr, "inferbench: cannot start a session: %s\n", strerror(errno));
    _exit(127);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* How a run of sessions stopped before its end. */
typedef enum stop_kind { RUNNING, STOP_SIGNAL, STOP_TIME_CAP } stop_kind;

/* The sessions' clock and their cap (--sessions-max-ms, 0: none). */
typedef struct sessions_clock {
    double t0_ms, cap_ms;
} sessions_clock;

/* Waits for pid; on a stop request (SIGINT, SIGTERM) or once the time cap
 * passes, the session is ended at once, its runs dropped: what finished
 * sessions measured is kept. */
static int wait_session(pid_t pid, const sessions_clock *clock, stop_kind *stop)
{
    int status = 0;
    const struct timespec step = { 0, WAIT_STEP_NS };
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return status;
        if (r < 0 && errno != EINTR) return -1;
        stop_kind why = cli_cancel_flag                                                ? STOP_SIGNAL
                        : clock->cap_ms > 0 && now_ms() - clock->t0_ms > clock->cap_ms ? STOP_TIME_CAP
                                                                                       : RUNNING;
        if (why != RUNNING && *stop == RUNNING) {
            kill(pid, SIGKILL);
            *stop = why;
        }
        nanosleep(&step, NULL);
    }
}

/* The whole of a small file, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *data = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 + 1 > cap) {
            char *grown = realloc(data, cap = 2 * cap + 4096 + 1);
            if (!grown) break;
            data = grown;
        }
        size_t got = fread(data + *len, 1, cap - *len - 1, f);
        *len += got;
        if (got == 0) break;
    }
    fclose(f);
    if (data) data[*len] = '\0';
    return data;
}

/* The last non-empty line a failed session wrote on stderr, into msg. */
static void last_line(const char *err_path, char *msg, size_t cap)
{
    size_t len;
    char *text = slurp(err_path, &len);
    msg[0] = '\0';
    while (text && len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r')) text[--len] = '\0';
    if (text && len > 0) {
        char *nl = strrchr(text, '\n');
        const char *line = nl ? nl + 1 : text;
        /* The session's "inferbench: " is the parent's to print. */
        const char prefix[] = "inferbench: ";
        if (strncmp(line, prefix, sizeof prefix - 1) == 0) line += sizeof prefix - 1;
        snprintf(msg, cap, "%s", line);
    }
    free(text);
}

/* One session that ran: its document (NULL when none) and how it ended. */
typedef struct session {
    char *doc;
    size_t len;
    int exit_status;
    char message[256];
} session;

static void describe_end(session *s, int status, const char *err_path)
{
    if (WIFSIGNALED(status)) {
        s->exit_status = -WTERMSIG(status);
        snprintf(s->message, sizeof s->message, "ended by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    } else {
        s->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 127;
        if (s->exit_status != 0) last_line(err_path, s->message, sizeof s->message);
    }
}

/* Runs session k (1-based; of best's candidate `candidate`, 0: none) to
 * its end; false when it was stopped (its runs dropped). */
static bool run_session(const cli_args *a, const char *dir, size_t k, size_t candidate, session *s,
                        const sessions_clock *clock, stop_kind *stop)
{
    char json_path[PATH_MAX + 32], err_path[PATH_MAX + 32];
    session_path(json_path, sizeof json_path, dir, k, "json");
    session_path(err_path, sizeof err_path, dir, k, "err");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(s->message, sizeof s->message, "cannot start a session: %s", strerror(errno));
        s->exit_status = 127;
        return true;
    }
    if (pid == 0) exec_session(a, k, candidate, json_path, err_path);
    int status = wait_session(pid, clock, stop);
    if (*stop != RUNNING) {
        unlink(json_path);
        unlink(err_path);
        return false;
    }
    describe_end(s, status, err_path);
    s->doc = slurp(json_path, &s->len);
    if (!s->doc && s->exit_status == 0) {
        s->exit_status = 1;
        if (!s->message[0]) snprintf(s->message, sizeof s->message, "it wrote no result");
    }
    unlink(json_path);
    unlink(err_path);
    return true;
}

/* The outcomes of s[0..k), pointing into s; caller frees. */
static ib_session_outcome *outcomes(const session *s, size_t k)
{
    ib_session_outcome *o = calloc(k ? k : 1, sizeof *o);
    for (size_t i = 0; o && i < k; i++)
        o[i] = (ib_session_outcome){ s[i].doc, s[i].len, s[i].exit_status, s[i].message };
    return o;
}

/* With --precision: the interval across the sessions so far (latency:
 * the median's; pitfalls: the correct method's) is within the target. */
static bool precision_met(ib_result_kind command, const session *s, size_t k, double target)
{
    ib_session_outcome *o = outcomes(s, k);
    char *doc = o ? ib_sessions_merge(command, o, k, k, NULL, NULL) : NULL;
    bool met = ib_sessions_precision(doc) <= target;
    ib_free(doc);
    free(o);
    return met;
}

/* The progress line (on a terminal, without --quiet) as session k of cap
 * starts: the sessions themselves run quiet. */
static void show_session(const cli_args *a, size_t k, size_t cap, double t0_ms)
{
    ib_config shown = { 0 };
    cli_progress_attach(&shown, a->quiet);
    if (!shown.progress) return;
    ib_progress p = { .phase = IB_PHASE_COLD_RUN,
                      .elapsed_ms = now_ms() - t0_ms,
                      .eta_ms = NAN,
                      .total_eta_ms = NAN,
                      .batch = a->model_opts.batch,
                      .step = (int64_t)k,
                      .steps = (int64_t)cap,
                      .step_name = "session" };
    shown.progress(&p, shown.progress_user);
}

/* With --sessions-max-ms: the next session, as long as the mean of
 * those done, would end past the cap (the first always starts). */
static bool next_passes_cap(const sessions_clock *clock, size_t done)
{
    if (clock->cap_ms <= 0 || done == 0) return false;
    double elapsed = now_ms() - clock->t0_ms;
    return elapsed + elapsed / (double)done > clock->cap_ms;
}

/* Sessions until a->sessions ran (with --precision: until the interval
 * meets it, from a->sessions up to --max-sessions), a stop request or the
 * time cap. Returns how many ran to their end. */
static size_t run_all(const cli_args *a, ib_result_kind command, const char *dir, session *s, size_t cap,
                      stop_kind *stop)
{
    size_t k = 0;
    bool adaptive = a->cfg.precision > 0 && command != IB_RESULT_THROUGHPUT;
    sessions_clock clock = { now_ms(), a->sessions_max_ms };
    while (k < cap && *stop == RUNNING) {
        if (next_passes_cap(&clock, k)) {
            *stop = STOP_TIME_CAP;
            break;
        }
        show_session(a, k + 1, cap, clock.t0_ms);
        if (!run_session(a, dir, k + 1, 0, &s[k], &clock, stop)) break;
        /* Bad input (a model that is not there): every session would say so. */
        if (s[k++].exit_status == EXIT_BAD_INPUT) break;
        if (k >= (size_t)a->sessions && (!adaptive || precision_met(command, s, k, a->cfg.precision))) break;
    }
    return k;
}

/* The failures, one line: "2 of 5 sessions failed (session 3: ...)". */
static void failure_message(const session *s, size_t k, size_t requested, ib_error *err)
{
    size_t failed = 0, first = k;
    for (size_t i = 0; i < k; i++)
        if (s[i].exit_status != 0) {
            failed++;
            if (first == k) first = i;
        }
    if (failed == 0) {
        snprintf(err->message, sizeof err->message, "%zu of %zu sessions ran", k, requested);
        return;
    }
    snprintf(err->message, sizeof err->message,
             "%zu of %zu sessions failed (session %zu, exit status %d: %.300s)", failed, k, first + 1,
             s[first].exit_status, s[first].message[0] ? s[first].message : "no message");
}

/* Why the sessions stopped short, as the merged document says it. */
static const char *stop_reason(stop_kind stop)
{
    return stop == STOP_SIGNAL     ? "interrupted"
           : stop == STOP_TIME_CAP ? "session time cap (--sessions-max-ms)"
                                   : NULL;
}

/* The result the printers get: a latency read back, or the document of
 * throughput's or pitfalls' sessions. */
static ib_result sessions_result(ib_result_kind command, const char *doc, const ib_latency_file *f)
{
    ib_result_kind kind = command == IB_RESULT_LATENCY      ? IB_RESULT_SESSIONS
                          : command == IB_RESULT_THROUGHPUT ? IB_RESULT_THROUGHPUT_SESSIONS
                          : command == IB_RESULT_GENERATION ? IB_RESULT_GENERATION_SESSIONS
                          : command == IB_RESULT_GEN_SERVE  ? IB_RESULT_GEN_SERVE_SESSIONS
                                                            : IB_RESULT_PITFALLS_SESSIONS;
    return (ib_result){ .kind = kind, .sessions_json = doc, .sessions = f };
}

/* Merges, reports and saves what the sessions measured. The time cap is a
 * limit the user set, as --max-time-ms: the result is marked partial and
 * warns, and the exit status stays 0. */
static int finish(ib_result_kind command, cli_outputs *out, session *s, size_t k, size_t requested,
                  stop_kind stop)
{
    ib_session_outcome *o = outcomes(s, k);
    bool failed = false;
    for (size_t i = 0; i < k; i++) failed = failed || s[i].exit_status != 0;
    ib_error err = { { 0 } };
    char *doc = o && k > 0 ? ib_sessions_merge(command, o, k, requested, stop_reason(stop), &err) : NULL;
    free(o);
    if (!doc) {
        cli_outputs_abort(out);
        if (stop == STOP_SIGNAL) return cli_fail(IB_ERR_INTERRUPTED, "interrupted before a session finished");
        if (stop == STOP_TIME_CAP && k == 0)
            return cli_fail(IB_ERR_RUNTIME,
                            "the session time cap (--sessions-max-ms) passed before a session finished");
        if (k > 0 && s[k - 1].exit_status == EXIT_BAD_INPUT)
            return cli_fail(IB_ERR_INVALID_ARG, s[k - 1].message);
        if (k > 0 && !err.message[0]) failure_message(s, k, requested, &err);
        return cli_fail(IB_ERR_RUNTIME, err.message[0] ? err.message : "no session ran");
    }
    ib_latency_file f = { 0 };
    ib_status st = command == IB_RESULT_LATENCY ? ib_latency_file_parse(doc, strlen(doc), &f, &err) : IB_OK;
    ib_result res = sessions_result(command, doc, &f);
    bool readable = st == IB_OK;
    if (readable && command == IB_RESULT_LATENCY) cli_spread_record_add(&f);
    if (readable && stop == STOP_SIGNAL) {
        st = IB_ERR_INTERRUPTED;
        snprintf(err.message, sizeof err.message, "interrupted after %zu of %zu sessions", k, requested);
    } else if (readable && failed) {
        st = IB_ERR_RUNTIME;
        failure_message(s, k, requested, &err);
    }
    int code = cli_report(out, readable ? &res : NULL, st, &err);
    ib_latency_file_free(&f);
    ib_free(doc);
    return code;
}

/* The formats a merged result is not written in (none since every
 * printer writes sessions; kept as the check of the library's word). */
static bool outputs_supported(const cli_outputs *out, ib_result_kind kind)
{
    static const char *const formats[CLI_N_OUTPUTS] = {
        [CLI_OUT_JSON] = "json", [CLI_OUT_HTML] = "html", [CLI_OUT_CSV] = "csv", [CLI_OUT_MD] = "md"
    };
    for (int i = 0; i < CLI_N_OUTPUTS; i++)
        if (cli_outputs_wanted(out, i) && !ib_report_supports(formats[i], kind)) {
            fprintf(stderr, "inferbench: --%s is not written for --sessions of this command\n", formats[i]);
            return false;
        }
    return true;
}

/* A session ended by SIGKILL (a stop request, the time cap) may leave the
 * temporary file it was writing its result to: the folder is emptied of
 * whatever its sessions left, then removed. */
void cli_sessions_dir_remove(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[PATH_MAX + 256];
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    if (d) closedir(d);
    rmdir(dir);
}

bool cli_sessions_dir(char *dir, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/inferbench-sessions.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) != NULL;
}

ib_status cli_run_candidate_session(const cli_args *a, const char *dir, size_t k, size_t candidate,
                                    char **doc, size_t *len, ib_error *err)
{
    session s = { 0 };
    sessions_clock clock = { now_ms(), 0 };
    stop_kind stop = RUNNING;
    show_session(a, k, (size_t)a->sessions, clock.t0_ms);
    if (!run_session(a, dir, k, candidate, &s, &clock, &stop)) {
        snprintf(err->message, sizeof err->message, "interrupted in session %zu", k);
        return IB_ERR_INTERRUPTED;
    }
    if (s.exit_status != 0) {
        free(s.doc);
        snprintf(err->message, sizeof err->message, "session %zu, exit status %d: %.300s", k, s.exit_status,
                 s.message[0] ? s.message : "no message");
        return IB_ERR_RUNTIME;
    }
    *doc = s.doc;
    *len = s.len;
    return IB_OK;
}

int cli_run_sessions(cli_args *a, ib_result_kind command)
{
    if (!inputs_repeatable(a) || !cli_check_device_id(a)) return EXIT_BAD_INPUT;
    /* Each session checks again, with its own context (and refuses the
     * option on the CPU, saying why: also where --device auto finds no
     * GPU, which NVML here could only answer with its own absence). */
    bool cpu = a->model_opts.device == IB_DEVICE_CPU ||
               (a->model_opts.device == IB_DEVICE_AUTO && ib_cuda_devices(NULL, 0) == 0);
    int idle = cpu ? EXIT_OK : cli_require_idle_gpu(a, false);
    if (idle != EXIT_OK) return idle;
    cli_outputs out;
    int code = cli_prepare_outputs(a, &out);
    if (code != EXIT_OK) return code;
    if (!outputs_supported(&out, sessions_result(command, NULL, NULL).kind)) {
        cli_outputs_abort(&out);
        return EXIT_BAD_INPUT;
    }
    char dir[PATH_MAX];
    size_t cap =
        (size_t)(a->cfg.precision > 0 && a->max_sessions > a->sessions ? a->max_sessions : a->sessions);
    session *s = calloc(cap, sizeof *s);
    if (!s || !cli_sessions_dir(dir, sizeof dir)) {
        free(s);
        cli_outputs_abort(&out);
        return cli_fail(IB_ERR_IO, "cannot make a folder for the sessions' results");
    }
    stop_kind stop = RUNNING;
    size_t k = run_all(a, command, dir, s, cap, &stop);
    cli_sessions_dir_remove(dir);
    size_t requested = stop != RUNNING ? cap : k < (size_t)a->sessions ? (size_t)a->sessions : k;
    code = finish(command, &out, s, k, requested, stop);
    for (size_t i = 0; i < cap; i++) free(s[i].doc);
    free(s);
    return code;
}
