/* inferbench compare A.json B.json: is the change between two latency
 * results real, or noise? For a person, a verdict; for a CI job, an exit
 * code (3 with --fail-if-slower when B is slower). */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A result of a million samples (the most a measurement takes) is about
 * 40 MB of JSON; a file far beyond that is not one, and is refused before
 * it is read into memory. */
#define MAX_RESULT_BYTES ((size_t)256 << 20)

static int too_large(const char *path)
{
    fprintf(stderr, "inferbench: '%s' is larger than %zu MB: not a latency result\n", path,
            MAX_RESULT_BYTES >> 20);
    return EXIT_BAD_INPUT;
}

/* Reads until the end, also from a pipe (whose size is not known up
 * front), stopping one byte past the limit. */
static int read_all(FILE *f, const char *path, char **text, size_t *len)
{
    size_t cap = (size_t)64 << 10, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) return cli_fail(IB_ERR_NO_MEMORY, "out of memory reading a latency result");
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || n > MAX_RESULT_BYTES) break;
        size_t bigger = cap * 2 > MAX_RESULT_BYTES + 1 ? MAX_RESULT_BYTES + 1 : cap * 2;
        char *p = realloc(buf, bigger);
        if (!p) free(buf);
        buf = p;
        cap = bigger;
    }
    int code = EXIT_OK;
    if (ferror(f)) {
        fprintf(stderr, "inferbench: cannot read '%s': %s\n", path, strerror(errno));
        code = EXIT_BAD_INPUT;
    } else if (n > MAX_RESULT_BYTES) {
        code = too_large(path);
    }
    if (code != EXIT_OK) {
        free(buf);
        return code;
    }
    *text = buf;
    *len = n;
    return EXIT_OK;
}

static int read_text(const char *path, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "inferbench: cannot read '%s': %s\n", path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    struct stat st;
    bool known = fstat(fileno(f), &st) == 0;
    int code = EXIT_OK;
    if (known && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "inferbench: cannot read '%s': it is a directory\n", path);
        code = EXIT_BAD_INPUT;
    } else if (known && S_ISREG(st.st_mode) && (uint64_t)st.st_size > MAX_RESULT_BYTES) {
        code = too_large(path);
    } else {
        code = read_all(f, path, text, len);
    }
    fclose(f);
    return code;
}

/* A latency result from its text (read once: a pipe cannot be read again). */
static int parse_latency(const char *path, const char *text, size_t len, ib_latency_file *out)
{
    ib_error err = { { 0 } };
    ib_status st = ib_latency_file_parse(text, len, out, &err);
    if (st == IB_OK) return EXIT_OK;
    /* The library says "not an inferbench latency result: why". */
    if (st == IB_ERR_INVALID_ARG)
        fprintf(stderr, "inferbench: '%s' is %s\n", path, err.message);
    else
        cli_fail(st, err.message);
    return cli_exit_code(st);
}

static int load(const char *path, ib_latency_file *out)
{
    char *text = NULL;
    size_t len = 0;
    int code = read_text(path, &text, &len);
    if (code == EXIT_OK) code = parse_latency(path, text, len, out);
    free(text);
    return code;
}

/* Device events and the host clock measure different things (the host
 * adds launch and synchronization costs): a difference between them is not
 * a change of the model's speed. Other differences (model, batch, GPU) are
 * the user's to judge: the report warns about them. */
static int check_same_timing(const cli_args *a, const ib_latency_file *fa, const ib_latency_file *fb)
{
    if (fa->timing == fb->timing) return EXIT_OK;
    fprintf(stderr, "inferbench: '%s' is timed by %s and '%s' by %s: different clocks cannot be compared\n",
            a->pos[0], ib_timing_name(fa->timing), a->pos[1], ib_timing_name(fb->timing));
    return EXIT_BAD_INPUT;
}

/* How much sessions differ, known from elsewhere than the two results. */
typedef struct known_spread {
    double between_sd; /* 0: not known */
    size_t df;         /* its degrees of freedom */
    char source[200];
} known_spread;

/* A --spread-from file: a latency result of 2 or more sessions measured on
 * A's device; its between-session sd pooled into *known (known->df: the
 * sessions minus one a result, pooled so far). */
static int spread_file(const char *path, const ib_latency_file *fa, known_spread *known)
{
    ib_latency_file f;
    memset(&f, 0, sizeof f);
    int code = load(path, &f);
    double sd;
    size_t k = 0;
    ib_error err = { { 0 } };
    if (code == EXIT_OK && ib_latency_file_spread(&f, &sd, &k, &err) != IB_OK) {
        fprintf(stderr, "inferbench: --spread-from '%s': %s\n", path, err.message);
        code = EXIT_BAD_INPUT;
    } else if (code == EXIT_OK && (strcmp(f.device, fa->device) || strcmp(f.gpu, fa->gpu))) {
        fprintf(stderr,
                "inferbench: --spread-from '%s' was measured on %s%s%s, A on %s%s%s: another device\n", path,
                f.device, f.gpu[0] ? " " : "", f.gpu, fa->device, fa->gpu[0] ? " " : "", fa->gpu);
        code = EXIT_BAD_INPUT;
    }
    if (code == EXIT_OK) {
        known->between_sd = ib_spread_pooled(known->between_sd, known->df, sd, k - 1);
        known->df += k - 1;
    }
    ib_latency_file_free(&f);
    return code;
}

/* The --spread-from files, read before anything is written. */
static int spread_from_files(const cli_args *a, const ib_latency_file *fa, known_spread *known)
{
    memset(known, 0, sizeof *known);
    for (size_t i = 0; i < a->n_spread_from; i++) {
        int code = spread_file(a->spread_from[i], fa, known);
        if (code != EXIT_OK) return code;
    }
    if (a->n_spread_from)
        snprintf(known->source, sizeof known->source, "--spread-from: %zu result%s, %zu sessions",
                 a->n_spread_from, a->n_spread_from == 1 ? "" : "s", known->df + a->n_spread_from);
    return EXIT_OK;
}

/* Without --spread-from: the calibration record, the larger spread of A's
 * and B's kinds of run. A recorded spread of 0 (the sessions' variance
 * estimate floored) is known, and said, too: it widens by nothing. */
static known_spread spread_from_record(const ib_latency_file *fa, const ib_latency_file *fb)
{
    known_spread known = { 0 };
    const ib_latency_file *sides[2] = { fa, fb };
    for (int i = 0; i < 2; i++) {
        double sd;
        size_t sessions, results;
        char path[PATH_MAX];
        if (!cli_spread_record_find(sides[i], &sd, &sessions, &results, path, sizeof path) ||
            (known.source[0] && sd <= known.between_sd))
            continue;
        known.between_sd = sd;
        known.df = sessions - results; /* each result's sessions less one, pooled */
        snprintf(known.source, sizeof known.source,
                 "the calibration record %.120s: %zu sessions of %s's kind in %zu result%s", path, sessions,
                 i ? "B" : "A", results, results == 1 ? "" : "s");
    }
    return known;
}

static size_t measured_sessions(const ib_latency_file *f)
{
    size_t k = 0;
    for (size_t i = 0; i < f->n_sessions; i++) k += f->sessions[i].samples_ms != NULL;
    return k;
}

/* A side of one session, its interval not widened by the other side's
 * sessions: widened by what is known of the spread between sessions. */
static void widen(const ib_latency_file *fa, const ib_latency_file *fb, const known_spread *files,
                  ib_comparison *c)
{
    if (c->two_level || c->spread_source[0]) return;
    known_spread known = files->source[0] ? *files : spread_from_record(fa, fb);
    if (known.source[0])
        ib_compare_widen(c, known.between_sd, known.df, measured_sessions(fa), measured_sessions(fb),
                         known.source, NULL);
}

static int compare(const cli_args *a, const ib_latency_file *fa, const ib_latency_file *fb,
                   const known_spread *files, cli_outputs *out)
{
    ib_comparison c;
    ib_error err = { { 0 } };
    ib_status st = ib_compare_files(fa, fb, a->threshold, &c, &err);
    if (st == IB_OK) widen(fa, fb, files, &c);
    ib_result res = { .kind = IB_RESULT_COMPARISON,
                      .comparison = &c,
                      .a = fa,
                      .a_name = a->pos[0],
                      .b = fb,
                      .b_name = a->pos[1] };
    int code = cli_report(out, st == IB_OK ? &res : NULL, st, &err);
    if (code == EXIT_OK && a->fail_if_slower && c.verdict == IB_CHANGE_SLOWER) {
        fprintf(stderr,
                "inferbench: B is slower than A: median %+.2f%%, 95%% CI [%+.2f%%, %+.2f%%] "
                "(--fail-if-slower)\n",
                100 * c.change, 100 * c.change_ci95[0], 100 * c.change_ci95[1]);
        code = EXIT_NOT_MET;
    }
    return code;
}

/* Two generation results (generate --json): their TTFT and per-token
 * latency compared. */
static int compare_generation(cli_args *a, const ib_gen_file *fa, const ib_gen_file *fb)
{
    cli_outputs out;
    const char *reads[3] = { a->pos[0], a->pos[1], NULL };
    if (!cli_outputs_prepare(&out, a, reads)) return EXIT_BAD_INPUT;
    ib_gen_comparison c;
    ib_error err = { { 0 } };
    ib_status st = ib_compare_gen_files(fa, fb, a->threshold, &c, &err);
    ib_result res = { .kind = IB_RESULT_GEN_COMPARISON,
                      .gen_comparison = &c,
                      .gen_a = fa,
                      .gen_b = fb,
                      .a_name = a->pos[0],
                      .b_name = a->pos[1] };
    int code = cli_report(&out, st == IB_OK ? &res : NULL, st, &err);
    bool slower = c.ttft.verdict == IB_CHANGE_SLOWER || c.token.verdict == IB_CHANGE_SLOWER;
    if (code == EXIT_OK && a->fail_if_slower && slower)
        code = cli_fail(IB_ERR_NOT_MET, "B is slower than A (--fail-if-slower)");
    return code;
}

/* What a result file is, for a person, from its schema:
 * "a best result (inferbench.best/2)"; the command is between the dot and
 * the slash. */
static void describe(const char *text, size_t len, char *out, size_t cap)
{
    char schema[80];
    if (!ib_result_schema(text, len, schema, sizeof schema)) {
        snprintf(out, cap, "not an inferbench result (no \"schema\")");
        return;
    }
    const char *dot = strchr(schema, '.'), *slash = dot ? strchr(dot, '/') : NULL;
    if (!strncmp(schema, "inferbench.", 11) && slash && slash > dot + 1)
        snprintf(out, cap, "a %.*s result (%s)", (int)(slash - dot - 1), dot + 1, schema);
    else
        snprintf(out, cap, "not an inferbench result (schema \"%.64s\")", schema);
}

/* A generation result and another kind: refused, each file named for
 * what it is. */
static int refuse_mixed(const cli_args *a, char *const text[2], const size_t len[2])
{
    char what[2][160];
    for (int i = 0; i < 2; i++) describe(text[i], len[i], what[i], sizeof what[i]);
    fprintf(stderr,
            "inferbench: '%s' is %s and '%s' %s: compare takes two latency results, two generation "
            "results or two generative serve results\n",
            a->pos[0], what[0], a->pos[1], what[1]);
    return EXIT_BAD_INPUT;
}

/* Two generative serve results (serve MODEL.gguf --json): TTFT, TPOT,
 * ITL, end-to-end and the goodput share compared. */
static int compare_gen_serve(cli_args *a, const ib_gen_serve_file *fa, const ib_gen_serve_file *fb)
{
    cli_outputs out;
    const char *reads[3] = { a->pos[0], a->pos[1], NULL };
    if (!cli_outputs_prepare(&out, a, reads)) return EXIT_BAD_INPUT;
    ib_gen_serve_comparison c;
    ib_error err = { { 0 } };
    ib_status st = ib_compare_gen_serve_files(fa, fb, a->threshold, &c, &err);
    ib_result res = { .kind = IB_RESULT_GEN_SERVE_COMPARISON,
                      .gen_serve_comparison = &c,
                      .gen_serve_a = fa,
                      .gen_serve_b = fb,
                      .a_name = a->pos[0],
                      .b_name = a->pos[1] };
    int code = cli_report(&out, st == IB_OK ? &res : NULL, st, &err);
    bool slower = c.ttft.verdict == IB_CHANGE_SLOWER || c.tpot.verdict == IB_CHANGE_SLOWER ||
                  c.itl.verdict == IB_CHANGE_SLOWER || c.e2e.verdict == IB_CHANGE_SLOWER;
    if (code == EXIT_OK && a->fail_if_slower && slower)
        code = cli_fail(IB_ERR_NOT_MET, "B is slower than A (--fail-if-slower)");
    return code;
}

/* Whether both files are generative serve results: then compared as such
 * (*code its exit), or refused when only one is (another kind, or broken). */
static bool gen_serve_pair(cli_args *a, char *const text[2], const size_t len[2], int *code)
{
    ib_gen_serve_file f[2];
    memset(f, 0, sizeof f);
    ib_status st[2];
    ib_error err[2];
    for (int i = 0; i < 2; i++) st[i] = ib_gen_serve_file_parse(text[i], len[i], &f[i], &err[i]);
    bool any = st[0] != IB_ERR_UNSUPPORTED || st[1] != IB_ERR_UNSUPPORTED;
    *code = EXIT_OK;
    for (int i = 0; i < 2 && any && *code == EXIT_OK; i++)
        if (st[i] == IB_ERR_INVALID_ARG) {
            fprintf(stderr, "inferbench: '%s' is %s\n", a->pos[i], err[i].message);
            *code = EXIT_BAD_INPUT;
        } else if (st[i] != IB_OK && st[i] != IB_ERR_UNSUPPORTED) {
            *code = cli_fail(st[i], err[i].message);
        }
    if (any && *code == EXIT_OK && (st[0] != IB_OK || st[1] != IB_OK))
        *code = refuse_mixed(a, text, len);
    else if (any && *code == EXIT_OK)
        *code = compare_gen_serve(a, &f[0], &f[1]);
    for (int i = 0; i < 2; i++) ib_gen_serve_file_free(&f[i]);
    return any;
}

/* The two files read once each: generation results are compared as such,
 * a generation result and a latency one refused, two latency results
 * parsed into fa and fb (*generation false). */
static int load_both(cli_args *a, ib_latency_file *fa, ib_latency_file *fb, bool *generation)
{
    char *text[2] = { NULL, NULL };
    size_t len[2] = { 0, 0 };
    ib_gen_file g[2];
    memset(g, 0, sizeof g);
    bool is_gen[2] = { false, false };
    ib_error err;
    int code = read_text(a->pos[0], &text[0], &len[0]);
    if (code == EXIT_OK) code = read_text(a->pos[1], &text[1], &len[1]);
    /* A generative serve result is compared with its kind alone. */
    if (code == EXIT_OK && gen_serve_pair(a, text, len, &code)) {
        for (int i = 0; i < 2; i++) free(text[i]);
        *generation = true; /* compared (or refused) already */
        return code;
    }
    for (int i = 0; i < 2 && code == EXIT_OK; i++) {
        ib_status st = ib_gen_file_parse(text[i], len[i], &g[i], &err);
        is_gen[i] = st == IB_OK;
        /* A broken generation result is said as one, not as a latency
         * result it never claimed to be. */
        if (st == IB_ERR_INVALID_ARG) {
            fprintf(stderr, "inferbench: '%s' is %s\n", a->pos[i], err.message);
            code = EXIT_BAD_INPUT;
        } else if (st != IB_OK && st != IB_ERR_UNSUPPORTED) {
            code = cli_fail(st, err.message);
        }
    }
    *generation = is_gen[0] && is_gen[1];
    if (code == EXIT_OK && is_gen[0] != is_gen[1])
        code = refuse_mixed(a, text, len);
    else if (code == EXIT_OK && *generation)
        code = compare_generation(a, &g[0], &g[1]);
    else if (code == EXIT_OK)
        code = parse_latency(a->pos[0], text[0], len[0], fa);
    if (code == EXIT_OK && !*generation) code = parse_latency(a->pos[1], text[1], len[1], fb);
    for (int i = 0; i < 2; i++) {
        free(text[i]);
        ib_gen_file_free(&g[i]);
    }
    return code;
}

int cmd_compare(cli_args *a)
{
    if (a->n_pos != 2)
        return cli_fail(IB_ERR_INVALID_ARG,
                        "compare takes two latency results: BASELINE.json CANDIDATE.json");
    ib_latency_file fa, fb; /* freed below whatever failed */
    memset(&fa, 0, sizeof fa);
    memset(&fb, 0, sizeof fb);
    cli_outputs out;
    memset(&out, 0, sizeof out);
    bool generation = false;
    int code = load_both(a, &fa, &fb, &generation);
    if (generation) return code; /* compared already */
    if (code == EXIT_OK) code = check_same_timing(a, &fa, &fb);
    known_spread files;
    if (code == EXIT_OK) code = spread_from_files(a, &fa, &files);
    /* The results read are never written over. */
    const char *reads[2 + CLI_MAX_SPREAD_FROM + 1] = { a->pos[0], a->pos[1] };
    for (size_t i = 0; i < a->n_spread_from; i++) reads[2 + i] = a->spread_from[i];
    if (code == EXIT_OK && !cli_outputs_prepare(&out, a, reads)) code = EXIT_BAD_INPUT;
    if (code == EXIT_OK) code = compare(a, &fa, &fb, &files, &out);
    ib_latency_file_free(&fa);
    ib_latency_file_free(&fb);
    return code;
}
