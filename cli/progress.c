/* The progress line: one line on a terminal's standard error, rewritten in
 * place (carriage return, then erase to the end of the line) as the
 * library reports progress, and erased before anything else is printed.
 * Nothing when standard error is a file or a pipe, or with --quiet. No
 * colour. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define ERASE_TO_END "\033[K"

/* Whether a line is on the screen now (one process, one line). */
static bool shown;

void cli_progress_clear(void)
{
    if (!shown) return;
    fputs("\r" ERASE_TO_END, stderr);
    fflush(stderr);
    shown = false;
}

/* Columns of the terminal, so that the line never wraps (a wrapped line
 * cannot be rewritten by a carriage return). */
static size_t terminal_columns(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) return ws.ws_col;
    return 80;
}

/* "[3/9 candidate, batch 64] ", "[candidate 3, batch 4] " (a count not
 * known yet: the points the batch search times as it goes), "[250
 * requests/s] " (a rate of no step: a generative model's search or curve
 * runs each rate on its engine, its own line saying which of how many) or
 * "" */
static void format_step(const ib_progress *p, char *out, size_t size)
{
    out[0] = '\0';
    if (p->step == 0 && p->rate > 0) snprintf(out, size, "[%.4g requests/s] ", p->rate);
    if (p->phase == IB_PHASE_BATCH_PROBE || p->step == 0) return;
    char batch[48] = "";
    if (p->rate > 0) /* serve: the rate, not the batch of a request */
        snprintf(batch, sizeof batch, ", %.4g requests/s", p->rate);
    else if (p->batch > 1)
        snprintf(batch, sizeof batch, ", batch %lld", (long long)p->batch);
    const char *name = p->step_name ? p->step_name : "";
    if (p->steps > 0)
        snprintf(out, size, "[%lld/%lld %s%s] ", (long long)p->step, (long long)p->steps, name, batch);
    else
        snprintf(out, size, "[%s %lld%s] ", name, (long long)p->step, batch);
}

/* "sampling 40/100 runs" / "probe 7: batch 512" */
static void format_phase(const ib_progress *p, char *out, size_t size)
{
    if (p->phase == IB_PHASE_BATCH_PROBE)
        snprintf(out, size, "batch search: probe %lld, batch %lld", (long long)p->step, (long long)p->batch);
    else if (p->phase == IB_PHASE_COLD_RUN)
        snprintf(out, size, "%s", ib_phase_name(p->phase));
    else if (p->total > 0)
        snprintf(out, size, "%s %lld/%lld %s", ib_phase_name(p->phase), (long long)p->done,
                 (long long)p->total, p->phase == IB_PHASE_SERVING ? "requests" : "runs");
    else
        snprintf(out, size, "%s %lld runs", ib_phase_name(p->phase), (long long)p->done);
}

/* ", ~2.1 s left" / ", at most 8.8 s left" / "", then the whole
 * measurement's when known: " (all: ~95.0 s)" / " (all: at most 288.0 s)" */
static void format_eta(const ib_progress *p, char *out, size_t size)
{
    out[0] = '\0';
    if (!isnan(p->eta_ms))
        snprintf(out, size, ", %s%.1f s left", p->eta_is_bound ? "at most " : "~", p->eta_ms / 1e3);
    if (!isnan(p->total_eta_ms))
        snprintf(out + strlen(out), size - strlen(out), " (all: %s%.1f s)",
                 p->total_eta_is_bound ? "at most " : "~", p->total_eta_ms / 1e3);
}

static void show(const ib_progress *p, void *user)
{
    (void)user;
    char step[128], phase[128], eta[64], line[512];
    format_step(p, step, sizeof step);
    format_phase(p, phase, sizeof phase);
    format_eta(p, eta, sizeof eta);
    snprintf(line, sizeof line, "inferbench: %s%s, %.1f s elapsed%s", step, phase, p->elapsed_ms / 1e3, eta);
    size_t width = terminal_columns() - 1;
    if (strlen(line) > width) line[width] = '\0';
    fprintf(stderr, "\r%s" ERASE_TO_END, line);
    fflush(stderr);
    shown = true;
}

/* For the tests (tests/cli/lib.sh's wait_for): INFERBENCH_TEST_MARK=N:PATH
 * creates PATH once a progress report says N timed runs are done (
 * warmup:PATH: once the warm-up reports), so that a test sends its signal
 * after an event it can see, not after a guess at how long start-up takes
 * on a loaded machine. Read by the program, not the library (as
 * INFERBENCH_TEST_CRASH_SESSION). */
static long long mark_runs;
static ib_phase mark_phase = IB_PHASE_SAMPLING;
static const char *mark_path;
static char show_line; /* its address as progress_user: the line is shown */

static void read_mark(void)
{
    static bool read;
    if (read) return;
    read = true;
    const char *v = getenv("INFERBENCH_TEST_MARK");
    char *colon;
    if (!v || !(colon = strchr(v, ':')) || !colon[1]) return;
    if (!strncmp(v, "warmup:", 7))
        mark_phase = IB_PHASE_WARMUP;
    else
        mark_runs = strtoll(v, NULL, 10);
    mark_path = colon + 1;
}

static void report(const ib_progress *p, void *user)
{
    if (mark_path && p->phase == mark_phase && p->done >= mark_runs) {
        FILE *f = fopen(mark_path, "w");
        if (f) fclose(f);
        mark_path = NULL;
    }
    if (user) show(p, user);
}

void cli_progress_attach(ib_config *cfg, bool quiet)
{
    read_mark();
    bool terminal = !quiet && isatty(STDERR_FILENO);
    if (!terminal && !mark_path) return;
    cfg->progress = report;
    cfg->progress_user = terminal ? &show_line : NULL;
}

/* ------------------------------------------------------------------------ */
/* The search's and the curve's own line: one a rate, kept on the screen    */
/* ------------------------------------------------------------------------ */

/* The serve settings of the search or curve shown (one a process): the
 * targets a curve's rate is judged by. */
static const ib_gen_serve_config *rates_serve;

/* "125", or "-" for NaN. */
static const char *rate_text(char buf[32], double v)
{
    if (isnan(v))
        snprintf(buf, 32, "-");
    else
        snprintf(buf, 32, "%.4g", v);
    return buf;
}

/* "inferbench: search: rate 4 of at most 8: 250 requests/s failed early
 * (3/50 served; 2 TTFT and 0 TPOT over); TTFT p90 6 ms, TPOT p90 1.5 ms;
 * bracket [125, 250] requests/s", or "inferbench: curve: rate 2 of 5: 100
 * requests/s, achieved 100, goodput 100 requests/s; TTFT p99 2 ms, TPOT
 * p99 1.5 ms; met", each rate's verdict the reports' (too few to judge, a
 * curve's rate of fewer requests than the bound needs). A line of its own,
 * kept above serve's progress line: the rates measured stay in view. */
static void show_rate(const ib_gen_serve_rate_progress *p, void *user)
{
    const ib_gen_serve_rates_config *rc = user;
    const ib_gen_serve_point *pt = p->point;
    char of[48] = "", buf[IB_GEN_SERVE_VERDICT_LEN], t[6][32], line[512];
    const char *verdict = ib_gen_serve_point_verdict(buf, pt, rates_serve);
    if (p->rates_at_most > 0)
        snprintf(of, sizeof of, " of %s%zu", p->searched ? "at most " : "", p->rates_at_most);
    if (p->searched) {
        snprintf(
            line, sizeof line,
            "inferbench: search: rate %zu%s: %s requests/s %s; TTFT p%g %s ms, TPOT p%g %s ms; bracket [%s, "
            "%s] requests/s",
            p->rate, of, rate_text(t[0], pt->offered_rate), verdict, 100 * rc->percentile,
            rate_text(t[1], pt->ttft_at_percentile_ms), 100 * rc->percentile,
            rate_text(t[2], pt->tpot_at_percentile_ms), rate_text(t[3], p->met_rate),
            rate_text(t[4], p->failed_rate));
    } else {
        snprintf(
            line, sizeof line,
            "inferbench: curve: rate %zu%s: %s requests/s, achieved %s, goodput %s requests/s; TTFT p99 %s "
            "ms, TPOT p99 %s ms%s%s",
            p->rate, of, rate_text(t[0], pt->offered_rate), rate_text(t[1], pt->achieved_rate),
            rate_text(t[2], pt->goodput_rate), rate_text(t[3], pt->ttft_p99_ms),
            rate_text(t[4], pt->tpot_p99_ms), verdict[0] ? "; " : "", verdict);
    }
    cli_progress_clear();
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void cli_progress_attach_rates(ib_gen_serve_rates_config *rc, const ib_gen_serve_config *serve, bool quiet)
{
    if (quiet || !isatty(STDERR_FILENO)) return;
    rates_serve = serve;
    rc->rate_progress = show_rate;
    rc->rate_progress_user = rc;
}
