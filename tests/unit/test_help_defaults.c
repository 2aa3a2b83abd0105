/* Every default a command's --help states is the value the command starts
 * from: the configuration its init function fills (issue 35: generate's
 * help said 300 runs and 10 warm-up runs, latency's, where generate runs
 * 30 and 3). The program is run (IB_PROGRAM: its path) with every
 * command's --help; each option's "default X" is read there and compared
 * with the init functions' values here. An option that states a default
 * this test does not know fails it, unless the help says it in words (a
 * behaviour, not a number of the configuration: the words list below). */
#include "check.h"
#include "inferbench.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef IB_PROGRAM
#error "IB_PROGRAM: the path of the inferbench program"
#endif

/* Options whose default is a behaviour, said in words ("cuda when a GPU is
 * usable", "what --shape gives", "the runtime's"), or the backend's own
 * (--cudnn-search, declared by it). */
static const char *const in_words[] = { "--device",      "--batch",         "--input",       "--backend",
                                        "--math",        "--depth",         "--ctx-per-seq", "--rate-floor",
                                        "--objective",   "--memory-cap-mb", "--arrivals",    "--instances",
                                        "--cudnn-search" };

typedef struct expected {
    char command[16];
    char option[24];
    char value[64]; /* what follows "default " up to ';' or ')' */
    bool seen;
} expected;

static expected want[160];
static size_t n_want;

static void expect(const char *command, const char *option, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void expect(const char *command, const char *option, const char *fmt, ...)
{
    expected *e = &want[n_want++];
    snprintf(e->command, sizeof e->command, "%s", command);
    snprintf(e->option, sizeof e->option, "%s", option);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->value, sizeof e->value, fmt, ap);
    va_end(ap);
}

/* The warm-up and sampling options of a command that starts from c, its
 * counts per what unit says (" per batch"). */
static void expect_measure(const char *command, const ib_config *c, const char *runs_unit, const char *unit)
{
    expect(command, "--runs", "%lld%s", (long long)c->runs, runs_unit);
    expect(command, "--warmup-runs", "%lld%s", (long long)c->warmup_runs, unit);
    expect(command, "--warmup-ms", "%g%s", c->warmup_ms, unit);
    expect(command, "--warmup-max-ms", "%g%s", c->warmup_max_ms, unit);
}

static void expect_adaptive(const char *command, const ib_config *c)
{
    expect(command, "--min-runs", "%lld", (long long)c->min_runs);
    expect(command, "--max-runs", "%lld", (long long)c->max_runs);
    expect(command, "--max-time-ms", "%g", c->max_time_ms);
}

static void expect_model(const char *command, const ib_model_options *m)
{
    expect(command, "--device-id", "%d", m->device_id);
    expect(command, "--seed", "%llu", (unsigned long long)m->seed);
}

/* What each command starts from: the init functions its code calls (cli/). */
static void expectations(void)
{
    ib_config lat;
    ib_config_init(&lat);
    ib_throughput_config tp;
    ib_throughput_config_init(&tp);
    ib_gen_config gen;
    ib_gen_config_init(&gen);
    ib_serve_config sv;
    ib_serve_config_init(&sv);
    ib_best_config best;
    ib_best_config_init(&best);
    ib_best_gen best_gen;
    ib_best_gen_init(&best_gen);
    ib_model_options mo;
    ib_model_options_init(&mo);

    const char *latency_like[] = { "latency", "pitfalls" };
    for (size_t i = 0; i < 2; i++) {
        expect_measure(latency_like[i], &lat, "", "");
        expect_adaptive(latency_like[i], &lat);
        expect_model(latency_like[i], &mo);
    }
    expect_measure("throughput", &tp.run, " per batch", " per batch");
    expect("throughput", "--max-time-ms", "%g", tp.max_time_ms);
    expect("throughput", "--max-batch", "%lld", (long long)tp.max_batch);
    expect_model("throughput", &mo);

    /* best: a forward-pass model's latency finals (ib_config_init), a
     * generative model's runs as generate's (its request's config). */
    expect("best", "--runs", "%lld, a generative model's %lld", (long long)best.latency.runs,
           (long long)best_gen.gen.run.runs);
    expect("best", "--warmup-runs", "%lld, a generative model's %lld", (long long)best.latency.warmup_runs,
           (long long)best_gen.gen.run.warmup_runs);
    expect("best", "--warmup-ms", "%g", best.latency.warmup_ms);
    expect("best", "--warmup-max-ms", "%g", best.latency.warmup_max_ms);
    expect_adaptive("best", &best.latency);
    expect("best", "--max-batch", "%lld", (long long)best.throughput.max_batch);
    expect("best", "--step-max-ms", "%g", best.step_max_ms);
    ib_best_serve_config serve_best;
    ib_best_serve_config_init(&serve_best);
    expect("serve", "--step-max-ms", "%g", serve_best.step_max_ms);
    expect("serve", "--sessions", "%d", 1);
    expect("best", "--far-factor", "%g", best.far_factor);
    expect("best", "--prompt-tokens", "%d", (int)best_gen.gen.prompt_tokens);
    expect("best", "--new-tokens", "%d", (int)best_gen.gen.new_tokens);
    expect_model("best", &mo);

    expect_measure("generate", &gen.run, "", "");
    expect_adaptive("generate", &gen.run);
    expect("generate", "--prompt-tokens", "%d", (int)gen.prompt_tokens);
    expect("generate", "--new-tokens", "%d", (int)gen.new_tokens);
    expect("generate", "--max-sequences", "%d", (int)gen.max_sequences);
    expect("generate", "--sequence-runs", "%lld", (long long)gen.sequence_runs);
    expect_model("generate", &mo);

    /* calibrate sizes each kernel's runs to about a second, --runs at most. */
    expect_measure("calibrate", &lat, " per kernel at most", "");
    expect("calibrate", "--device-id", "%d", mo.device_id);

    expect("serve", "--max-batch", "%lld: no batching", (long long)sv.max_batch);
    expect("serve", "--requests", "%lld", (long long)sv.requests);
    expect("serve", "--request-batch", "%lld", (long long)sv.request_batch);
    expect("serve", "--max-delay-us", "%g", sv.max_delay_us);
    expect("serve", "--slo-percentile", "%g", sv.slo_percentile);
    expect("serve", "--confidence", "%g", sv.confidence);
    expect("serve", "--schedule-seed", "%llu", (unsigned long long)sv.seed);
    expect_model("serve", &mo);
    ib_gen_serve_config gs;
    ib_gen_serve_config_init(&gs);
    expect("serve", "--prompt-tokens", "%d", (int)gs.prompt_min);
    expect("serve", "--new-tokens", "%d", (int)gs.output_min);
    expect("serve", "--slots", "the KV cache's capacity at the longest request, at most %d",
           IB_GEN_SERVE_MAX_DEFAULT_SLOTS);
    expect("serve", "--prefill-chunk", "%d", (int)gs.prefill_chunk);
    expect("serve", "--warmup-requests", "%d", (int)gs.warmup_requests);
    ib_endpoint_config ep;
    ib_endpoint_config_init(&ep);
    expect("serve", "--request-timeout-ms", "%g", ep.request_timeout_ms);
    expect("serve", "--api", "%s", ib_endpoint_api_str(ep.api));
    expect("serve", "--shared-prefix", "%d", (int)gs.shared_prefix);
    expect("serve", "--prefix-cache", "%s", gs.prefix_cache ? "on" : "off");
    expect("serve", "--sampling", "%s", gs.sample_greedy ? "greedy" : "none");

    expect("compare", "--threshold", "%g%%", 100 * IB_COMPARE_DEFAULT_THRESHOLD);
    expect("info", "--device-id", "%d", mo.device_id);

    /* The program's own defaults (no init function of the library holds
     * them; docs/cli.md states them): sessions and MPI ranks. */
    const char *with_sessions[] = { "latency", "throughput", "pitfalls", "best", "generate" };
    for (size_t i = 0; i < 5; i++) expect(with_sessions[i], "--sessions", "1");
    const char *with_max_sessions[] = { "latency", "pitfalls", "generate" };
    for (size_t i = 0; i < 3; i++) expect(with_max_sessions[i], "--max-sessions", "20");
    expect("latency", "--rank-timeout-s", "120");
    expect("throughput", "--rank-timeout-s", "120");
}

/* The whole output of `inferbench WORDS --help` (malloc'ed). */
static char *help_of(const char *words)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "'%s' %s --help", IB_PROGRAM, words);
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + n, 1, cap - 1 - n, p)) > 0) n += got;
    if (text) text[n] = '\0';
    CHECK(pclose(p) == 0);
    return text;
}

/* The entry of each option in help, its continuation lines joined:
 * calls fn(option, its text) for each. */
static void each_option(const char *help,
                        void (*fn)(const char *command, const char *option, const char *text),
                        const char *command)
{
    for (const char *line = help; line && *line;) {
        const char *end = strstr(line, "\n  --");
        if (strncmp(line, "  --", 4)) {
            line = end ? end + 1 : NULL;
            continue;
        }
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char entry[2048], option[64] = "";
        size_t k = 0;
        for (size_t i = 0; i < len && k + 1 < sizeof entry; i++) { /* the lines joined, spaces squeezed */
            char c = line[i] == '\n' ? ' ' : line[i];
            if (c != ' ' || (k > 0 && entry[k - 1] != ' ')) entry[k++] = c;
        }
        entry[k] = '\0';
        sscanf(entry, "%63s", option);
        fn(command, option, entry + strlen(option));
        line = end ? end + 1 : NULL;
    }
}

static bool said_in_words(const char *option)
{
    for (size_t i = 0; i < sizeof in_words / sizeof in_words[0]; i++)
        if (!strcmp(in_words[i], option)) return true;
    return false;
}

/* One option's entry: its stated default ("default 30;", "default 300,
 * a generative model's 30)") against the expectation. */
static void check_option(const char *command, const char *option, const char *text)
{
    const char *d = strstr(text, "default ");
    if (!d && !strstr(text, "default")) return;
    expected *e = NULL;
    for (size_t i = 0; i < n_want; i++)
        if (!strcmp(want[i].command, command) && !strcmp(want[i].option, option)) e = &want[i];
    if (!e) {
        if (!said_in_words(option)) {
            fprintf(stderr, "%s %s states a default this test does not know: %s\n", command, option, text);
            CHECK(said_in_words(option));
        }
        return;
    }
    e->seen = true;
    char stated[64] = "";
    if (d) snprintf(stated, sizeof stated, "%.*s", (int)strcspn(d + 8, ";)"), d + 8);
    if (strcmp(stated, e->value))
        fprintf(stderr, "%s %s: the help states default '%s', the command starts from '%s'\n", command,
                option, stated, e->value);
    CHECK(!strcmp(stated, e->value));
}

static void test_every_stated_default(void)
{
    expectations();
    FILE *p = popen("'" IB_PROGRAM "' --list-options", "r");
    CHECK(p != NULL);
    char line[256], last[64] = "";
    size_t commands = 0;
    while (p && fgets(line, sizeof line, p)) {
        char name[64];
        if (sscanf(line, "%63[^\t]", name) != 1 || !strcmp(name, last)) continue;
        snprintf(last, sizeof last, "%s", name);
        char words[64];
        snprintf(words, sizeof words, "%s", name);
        char *dash = strchr(words, '-'); /* zoo-list is typed "zoo list" */
        if (dash) *dash = ' ';
        char *help = help_of(words);
        CHECK(help && !strncmp(help, "usage: ", 7));
        each_option(help, check_option, name);
        free(help);
        commands++;
    }
    if (p) pclose(p);
    CHECK(commands >= 13);
    for (size_t i = 0; i < n_want; i++) {
        if (!want[i].seen)
            fprintf(stderr, "%s --help states no default for %s\n", want[i].command, want[i].option);
        CHECK(want[i].seen);
    }
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_every_stated_default);
    return check_summary("test_help_defaults");
}
