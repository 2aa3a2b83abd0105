/* Option parsing for every subcommand: one table of long options, grouped,
 * each command accepting the groups it names. Numbers are parsed strictly:
 * the whole text, in range, or a one-line error. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// clang-format off
enum {
    O_DEVICE = 256, O_DEVICE_ID, O_BATCH, O_SHAPE, O_SEED, O_BACKEND_FLAGS,
    O_RUNS, O_WARMUP_RUNS, O_WARMUP_MS, O_WARMUP_MAX_MS, O_NO_STEADY, O_PRECISION, O_MIN_RUNS,
    O_MAX_RUNS, O_MAX_TIME_MS, O_THROUGHPUT_MAX_MS, O_FLUSH_L2, O_EXCLUDE_LAUNCH, O_NO_GPU_STATE,
    O_JSON, O_HTML,
    O_MAX_BATCH, O_SERVE_MAX_BATCH, O_BUDGET, O_BATCHES, O_MEMORY_CAP,
    O_OUTPUT, O_FP16,
    O_THRESHOLD, O_FAIL_IF_SLOWER,
    O_HELP, O_QUIET,
    O_CSV, O_MD,
    O_INPUT,
    O_SESSIONS, O_MAX_SESSIONS, O_REQUIRE_IDLE_GPU,
    O_BACKEND, O_OPTION,
    O_MATH, O_MAX_ERROR,
    O_RATE, O_RATES, O_ARRIVALS, O_REQUESTS, O_DURATION_MS, O_REQUEST_BATCH, O_CONCURRENCY,
    O_MAX_DELAY_US, O_SLO_P99_MS, O_SLO_MS, O_SLO_PERCENTILE, O_CONFIDENCE, O_SCHEDULE_SEED, O_INSTANCES,
    O_EXHAUSTIVE, O_RATE_FLOOR, O_OBJECTIVE, O_NO_ENERGY,
    O_DEVICES, O_SHARE_GPU, O_RANK_TIMEOUT,
    O_SESSIONS_MAX_MS,
    O_REQUESTS_CSV,
    O_SPREAD_FROM,
    O_STEP_MAX_MS, O_FAR_FACTOR,
    O_PROMPT_TOKENS, O_NEW_TOKENS, O_DEPTH, O_CTX_PER_SEQ, O_SEQUENCES, O_SEARCH_SEQUENCES, O_MAX_SEQUENCES,
    O_SEQUENCE_RUNS, O_TPOT_BUDGET, O_TIME_SAMPLING, O_PITFALLS,
    O_SLOTS, O_PREFILL_CHUNK, O_BURSTINESS, O_SLO_TTFT_MS, O_SLO_TPOT_MS, O_SLO_E2E_MS, O_WARMUP_REQUESTS,
    O_ENGINE_COST,
    O_ENDPOINT, O_ENDPOINT_MODEL, O_REQUEST_TIMEOUT_MS, O_ENDPOINT_API,
    O_STEPS_CSV,
    O_SHARED_PREFIX, O_PREFIX_CACHE, O_SAMPLING, O_SERVE_PITFALLS,
    O_SERVE_BEST,
    O_ALIAS /* O_ALIAS + i: alias flag i of the backends (cli_alias_get) */
};
// clang-format on

/* Where an option does nothing. */
typedef enum option_device {
    ANY_DEVICE = 0,
    CUDA_ONLY,         /* refused on the CPU: it would change nothing measured there */
    CUDA_ONLY_HARMLESS /* warned about on the CPU: it only skips what the CPU lacks */
} option_device;

/* One option: how it is parsed, its line of --help, and the rules under
 * which it is refused. The help and the refusals read the same fields. */
typedef struct option_def {
    struct option opt;
    unsigned group;  /* 0: every command */
    const char *arg; /* argument name for the help, NULL for flags */
    const char *help;
    int needs;     /* 0, or the option (O_*) without which this one does nothing */
    int conflicts; /* 0, or an option (O_*) this one cannot be given with */
    option_device device;
    const char *why;   /* the reason given with a refusal by needs or conflicts */
    const char *scope; /* said when a command without the option's group refuses it */
} option_def;

/* An entry names only the rules it has (.needs, .device...): the others
 * default to none, so a plain entry stays four fields long. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
// clang-format off
static const option_def options[] = {
    {{"device", required_argument, NULL, O_DEVICE}, OPT_MODEL, "cuda|cpu|auto",
     "where to run (default: cuda when a GPU is usable, else cpu)"},
    {{"device-id", required_argument, NULL, O_DEVICE_ID}, OPT_DEVICE_ID, "N", "CUDA device index",
     .device = CUDA_ONLY},
    {{"batch", required_argument, NULL, O_BATCH}, OPT_BATCH, "N", "value of the batch dimension (default 1)",
     .scope = "latency and pitfalls run at one batch; throughput searches it or measures --batches"},
    {{"shape", required_argument, NULL, O_SHAPE}, OPT_FORWARD, "NAME:DxD..",
     "dimensions of input NAME (sets its symbolic dimensions; repeatable)"},
    {{"input", required_argument, NULL, O_INPUT}, OPT_FORWARD, "NAME=SPEC",
     "values of input NAME: a number, random, random:LO..HI, zeros, ones or @FILE (.bin raw "
     "little-endian, .npy); default random (repeatable)"},
    {{"seed", required_argument, NULL, O_SEED}, OPT_MODEL, "N", "seed of the random input values"},
    /* Here: the alias flags the backends declare for their options
     * (cli_alias_get), in the help, the prefixes and the refusals. */
    {{"", no_argument, NULL, O_BACKEND_FLAGS}, OPT_FORWARD, NULL, ""},
    {{"runs", required_argument, NULL, O_RUNS}, OPT_MEASURE, "N", "timed runs",
     .conflicts = O_PRECISION, .why = "--precision stops adaptively, bounded by --min-runs and --max-runs"},
    {{"warmup-runs", required_argument, NULL, O_WARMUP_RUNS}, OPT_MEASURE, "N", "at least N warm-up runs"},
    {{"warmup-ms", required_argument, NULL, O_WARMUP_MS}, OPT_MEASURE, "T", "and at least T ms of warm-up"},
    {{"warmup-max-ms", required_argument, NULL, O_WARMUP_MAX_MS}, OPT_MEASURE, "T",
     "give up waiting for steady timings after T ms"},
    {{"no-steady", no_argument, NULL, O_NO_STEADY}, OPT_MEASURE, NULL, "do not wait for steady timings in warm-up"},
    {{"precision", required_argument, NULL, O_PRECISION}, OPT_ADAPTIVE, "P%",
     "adaptive: sample until the median's 95% CI is within +-P percent",
     .scope = "adaptive stopping is for latency and pitfalls; throughput takes --runs runs per batch"},
    {{"min-runs", required_argument, NULL, O_MIN_RUNS}, OPT_ADAPTIVE, "N", "adaptive: at least N runs",
     .needs = O_PRECISION, .why = "it bounds adaptive stopping"},
    {{"max-runs", required_argument, NULL, O_MAX_RUNS}, OPT_ADAPTIVE, "N", "adaptive: at most N runs",
     .needs = O_PRECISION, .why = "it bounds adaptive stopping"},
    {{"max-time-ms", required_argument, NULL, O_MAX_TIME_MS}, OPT_ADAPTIVE, "T",
     "adaptive: stop after T ms of sampling", .needs = O_PRECISION, .why = "it bounds adaptive stopping"},
    /* The same flag bounds the whole throughput search (no adaptive
     * stopping there): an entry of its own, so that each command's help
     * says what it does there (same_name_hidden). */
    {{"max-time-ms", required_argument, NULL, O_THROUGHPUT_MAX_MS}, OPT_THROUGHPUT, "T",
     "start no batch that would end after T ms from the start, judged by those before it (the result is then "
     "partial; docs/throughput.md); 0: none"},
    {{"flush-l2", no_argument, NULL, O_FLUSH_L2}, OPT_MEASURE, NULL, "overwrite the GPU's L2 cache before each run (cold cache)",
     .device = CUDA_ONLY},
    {{"exclude-launch", no_argument, NULL, O_EXCLUDE_LAUNCH}, OPT_LAUNCH, NULL,
     "hold the stream until the run is queued, so launch latency is not counted", .device = CUDA_ONLY,
     .scope = "calibrate times every kernel with and without launch latency already"},
    {{"no-gpu-state", no_argument, NULL, O_NO_GPU_STATE}, OPT_MEASURE, NULL, "do not sample GPU clocks (NVML)",
     .device = CUDA_ONLY_HARMLESS},
    {{"no-energy", no_argument, NULL, O_NO_ENERGY}, OPT_MEASURE | OPT_SERVE, NULL,
     "do not read the energy counters (their step and the idle power cost a few hundred ms; docs/energy.md)"},
    {{"json", required_argument, NULL, O_JSON}, OPT_JSON, "FILE", "write the full result as JSON"},
    {{"html", required_argument, NULL, O_HTML}, OPT_HTML, "FILE",
     "write a self-contained HTML report with plots (docs/report.md)"},
    {{"csv", required_argument, NULL, O_CSV}, OPT_JSON, "FILE",
     "write the result as CSV: one row per run, batch or method (docs/report.md)"},
    {{"md", required_argument, NULL, O_MD}, OPT_JSON, "FILE",
     "write the summary tables as Markdown, for an issue or a pull request"},
    {{"max-batch", required_argument, NULL, O_MAX_BATCH}, OPT_THROUGHPUT | OPT_BEST, "N", "largest batch tried"},
    {{"max-batch", required_argument, NULL, O_SERVE_MAX_BATCH}, OPT_SERVE, "N",
     "dynamic batching: up to N requests a run, 1..256"},
    {{"latency-budget-ms", required_argument, NULL, O_BUDGET}, OPT_THROUGHPUT, "T",
     "also report the best throughput whose p99 batch latency is within T ms"},
    {{"batches", required_argument, NULL, O_BATCHES}, OPT_THROUGHPUT, "LIST",
     "measure exactly these batches, no search (\"1,8,64\" or \"16:512:16\")"},
    {{"memory-cap-mb", required_argument, NULL, O_MEMORY_CAP}, OPT_FORWARD, "MB",
     "memory a batch may use (GPU: the runtime's arena; CPU: default half the free RAM)"},
    {{"output", required_argument, NULL, O_OUTPUT}, OPT_EXPORT, "FILE", "where to write the model (-o)"},
    {{"fp16", no_argument, NULL, O_FP16}, OPT_EXPORT, NULL, "half-precision weights and inputs"},
    {{"threshold", required_argument, NULL, O_THRESHOLD}, OPT_COMPARE, "P%",
     "smallest change of the median that matters"},
    {{"fail-if-slower", no_argument, NULL, O_FAIL_IF_SLOWER}, OPT_COMPARE, NULL,
     "exit 3 when B is slower than A (for CI gating)"},
    {{"spread-from", required_argument, NULL, O_SPREAD_FROM}, OPT_COMPARE, "FILE",
     "a latency --sessions result of this device: how much sessions differ, for a side of one session "
     "(repeatable; docs/compare.md)"},
    {{"quiet", no_argument, NULL, O_QUIET}, OPT_QUIET, NULL,
     "no progress line (it is shown only when standard error is a terminal)"},
    {{"sessions", required_argument, NULL, O_SESSIONS}, OPT_SESSIONS | OPT_BEST, "N",
     "repeat the measurement in N fresh processes, each with its own warm-up; docs/method.md, Sessions",
     .scope = "sessions repeat a latency, throughput, pitfalls or generate measurement"},
    {{"max-sessions", required_argument, NULL, O_MAX_SESSIONS}, OPT_SESSIONS, "N",
     "with --precision and --sessions: add sessions until the two-level CI meets it, at most N",
     .needs = O_PRECISION, .why = "it bounds the sessions added to meet --precision",
     .scope = "sessions repeat a latency, throughput, pitfalls or generate measurement"},
    {{"sessions-max-ms", required_argument, NULL, O_SESSIONS_MAX_MS}, OPT_SESSIONS, "T",
     "with --sessions: start no session that would end after T ms, and end one still running then "
     "(the sessions done are kept, marked partial)",
     .needs = O_SESSIONS, .why = "it caps the time of the sessions",
     .scope = "sessions repeat a latency, throughput, pitfalls or generate measurement"},
    {{"require-idle-gpu", no_argument, NULL, O_REQUIRE_IDLE_GPU}, OPT_SESSIONS, NULL,
     "fail when another process computes on the GPU: exit 2 before measuring, 1 (results kept) when one "
     "appears during", .device = CUDA_ONLY, .scope = "it guards a latency, throughput or pitfalls measurement"},
    {{"backend", required_argument, NULL, O_BACKEND}, OPT_MODEL, "NAME|plugin:PATH.so",
     "what measures MODEL: a backend (inferbench backends lists them; default: the first) or a plugin"},
    {{"option", required_argument, NULL, O_OPTION}, OPT_MODEL, "KEY=VALUE",
     "a setting of the backend (repeatable; the backend says which keys it takes)"},
    {{"math", required_argument, NULL, O_MATH}, OPT_MATH, "fp32|tf32|fp16|bf16",
     "the arithmetic: fp32 (TF32 off), tf32, or the model converted to fp16/bf16 (default: the runtime's, "
     "stated in the result; docs/precision.md)"},
    {{"max-error", required_argument, NULL, O_MAX_ERROR}, OPT_ACCURACY, "X",
     "mark a result whose max absolute error against strict fp32 is above X"},
    {{"rate", required_argument, NULL, O_RATE}, OPT_SERVE, "R",
     "offered rate in requests/s (with a target: the search's first rate)", .conflicts = O_RATES,
     .why = "--rates measures a list of rates"},
    {{"rates", required_argument, NULL, O_RATES}, OPT_SERVE, "LIST", "measure these rates, no search (\"50,100,200\")"},
    {{"arrivals", required_argument, NULL, O_ARRIVALS}, OPT_SERVE, "poisson|constant|FILE",
     "when requests arrive (default poisson, seeded); FILE: one time in ms per line"},
    {{"requests", required_argument, NULL, O_REQUESTS}, OPT_SERVE, "N", "requests per rate"},
    {{"duration-ms", required_argument, NULL, O_DURATION_MS}, OPT_SERVE, "T",
     "instead of --requests: the requests arriving within T ms", .conflicts = O_REQUESTS,
     .why = "a rate runs a number of requests or a duration"},
    {{"request-batch", required_argument, NULL, O_REQUEST_BATCH}, OPT_SERVE, "N", "inputs in one request"},
    {{"concurrency", required_argument, NULL, O_CONCURRENCY}, OPT_SERVE, "C",
     "closed loop: C requests always outstanding (hides queueing; for comparison only)"},
    {{"max-delay-us", required_argument, NULL, O_MAX_DELAY_US}, OPT_SERVE, "D",
     "dynamic batching: wait at most D us after a batch's first request", .needs = O_SERVE_MAX_BATCH,
     .why = "it bounds the wait of dynamic batching"},
    {{"slo-p99-ms", required_argument, NULL, O_SLO_P99_MS}, OPT_SERVE, "T",
     "search the highest rate whose p99 latency is within T ms", .conflicts = O_SLO_MS,
     .why = "--slo-ms with --slo-percentile names the target"},
    {{"slo-ms", required_argument, NULL, O_SLO_MS}, OPT_SERVE, "T", "the latency target of --slo-percentile"},
    {{"slo-percentile", required_argument, NULL, O_SLO_PERCENTILE}, OPT_SERVE, "P",
     "the percentile held to --slo-ms (a generative model: to --slo-ttft-ms and --slo-tpot-ms), 0.99 or 99"},
    {{"confidence", required_argument, NULL, O_CONFIDENCE}, OPT_SERVE, "C",
     "confidence of the early-stopping bound"},
    {{"schedule-seed", required_argument, NULL, O_SCHEDULE_SEED}, OPT_SERVE, "N",
     "seed of the Poisson arrivals"},
    {{"instances", required_argument, NULL, O_INSTANCES}, OPT_SERVE, "K|max",
     "K copies of the model (sessions; on a GPU K streams) serving one queue (default 1); max: as many as fit in memory",
     .conflicts = O_CONCURRENCY, .why = "a closed loop runs on one instance"},
    {{"exhaustive", no_argument, NULL, O_EXHAUSTIVE}, OPT_BEST, NULL,
     "measure every configuration fully and search each one's batch: the sweep the race is checked against",
     .conflicts = O_SESSIONS, .why = "the sweep is the one-process reference the race is checked against"},
    {{"step-max-ms", required_argument, NULL, O_STEP_MAX_MS}, OPT_BEST | OPT_SERVE, "T",
     "each step of the race stops after T ms of measuring, what it measured kept; 0: none",
     .conflicts = O_EXHAUSTIVE, .why = "the sweep measures every configuration fully"},
    {{"far-factor", required_argument, NULL, O_FAR_FACTOR}, OPT_BEST, "X",
     "a configuration whose median's 95% CI at batch 1 starts above X times the leader's upper end leaves "
     "before the finals; 0: off",
     .conflicts = O_EXHAUSTIVE, .why = "the sweep measures every configuration fully"},
    {{"objective", required_argument, NULL, O_OBJECTIVE}, OPT_BEST, "time|energy|tpot|ttft",
     "rank by time (default) or by inputs per joule: energy needs an energy counter (docs/energy.md); a "
     "generative model by its time per output token (tpot, the default) or its time to first token (ttft)"},
    {{"rate-floor", required_argument, NULL, O_RATE_FLOOR}, OPT_SERVE, "R",
     "the search for a target halves to no rate below R requests/s (default: 4 halvings at most)"},
    {{"requests-csv", required_argument, NULL, O_REQUESTS_CSV}, OPT_SERVE, "FILE",
     "also write one CSV row per served request: its instance, run size and times (docs/serve.md)"},
    {{"devices", required_argument, NULL, O_DEVICES}, OPT_FLEET | OPT_DEVICES, "all|0,2,3",
     "measure on these devices at once, a worker each, and the host's aggregate (docs/fleet.md)",
     .conflicts = O_SESSIONS, .why = "each device is one worker of one run",
     .scope = "a fleet measures latency, throughput or serve"},
    {{"share-gpu", no_argument, NULL, O_SHARE_GPU}, OPT_FLEET, NULL,
     "under MPI: let more ranks than GPUs on a host share them", .device = CUDA_ONLY,
     .scope = "an MPI fleet measures latency or throughput (serve takes --devices, on one host)"},
    {{"rank-timeout-s", required_argument, NULL, O_RANK_TIMEOUT}, OPT_FLEET, "S",
     "under MPI: how long ranks wait for one missing at a barrier or the gather",
     .scope = "an MPI fleet measures latency or throughput (serve takes --devices, on one host)"},
    {{"prompt-tokens", required_argument, NULL, O_PROMPT_TOKENS}, OPT_GEN_RUN, "P",
     "tokens of the prompt, prefilled from a cleared cache to the first token"},
    {{"new-tokens", required_argument, NULL, O_NEW_TOKENS}, OPT_GEN_RUN, "N",
     "decode steps each run times, one token each; a fixed count, never stopped at end-of-sequence"},
    {{"depth", required_argument, NULL, O_DEPTH}, OPT_GEN_RUN, "D",
     "time the steps from context position D (the context up to D filled untimed; default: right after the prompt)"},
    {{"ctx-per-seq", required_argument, NULL, O_CTX_PER_SEQ}, OPT_GEN_RUN, "T",
     "tokens of context each sequence gets (default: depth + new tokens)"},
    {{"sequences", required_argument, NULL, O_SEQUENCES}, OPT_GEN, "LIST",
     "also decode these counts of sequences together (\"1,4,16\"): step latency and tokens/s of each"},
    {{"search-sequences", no_argument, NULL, O_SEARCH_SEQUENCES}, OPT_GEN, NULL,
     "find the most sequences whose KV cache fits at --ctx-per-seq, and time the curve up to it"},
    {{"max-sequences", required_argument, NULL, O_MAX_SEQUENCES}, OPT_GEN, "S",
     "the search's bound, 1..256", .needs = O_SEARCH_SEQUENCES, .why = "it bounds the search"},
    {{"sequence-runs", required_argument, NULL, O_SEQUENCE_RUNS}, OPT_GEN, "N",
     "runs of the new tokens timed at each sequence count"},
    {{"tpot-budget-ms", required_argument, NULL, O_TPOT_BUDGET}, OPT_GEN, "T",
     "also report the most tokens/s whose time per output token is within T ms"},
    {{"time-sampling", no_argument, NULL, O_TIME_SAMPLING}, OPT_GEN, NULL,
     "time a greedy sampling after each step, apart from the step"},
    {{"pitfalls", no_argument, NULL, O_PITFALLS}, OPT_GEN, NULL,
     "also show what each classic mistake of generation benchmarks reports, beside the correct figure",
     .conflicts = O_SESSIONS, .why = "the pitfall rows of sessions are not merged: run them in one session"},
    {{"slots", required_argument, NULL, O_SLOTS}, OPT_SERVE, "N",
     "a generative model: requests decoded together, a sequence of the KV cache each (default the KV "
     "cache's capacity at the longest request, at most 256)"},
    {{"prefill-chunk", required_argument, NULL, O_PREFILL_CHUNK}, OPT_SERVE, "T",
     "a generative model: prompt tokens one engine step takes at most (default 512)"},
    {{"burstiness", required_argument, NULL, O_BURSTINESS}, OPT_SERVE, "X",
     "a generative model: gamma gaps between arrivals of shape X (vLLM's; 1 Poisson, below 1 burstier)"},
    {{"slo-ttft-ms", required_argument, NULL, O_SLO_TTFT_MS}, OPT_SERVE, "T",
     "a generative model: goodput's target for the time to first token"},
    {{"slo-tpot-ms", required_argument, NULL, O_SLO_TPOT_MS}, OPT_SERVE, "T",
     "a generative model: goodput's target for the time per output token"},
    {{"slo-e2e-ms", required_argument, NULL, O_SLO_E2E_MS}, OPT_SERVE, "T",
     "a generative model: goodput's target for a request's end-to-end latency"},
    {{"warmup-requests", required_argument, NULL, O_WARMUP_REQUESTS}, OPT_SERVE, "N",
     "a generative model: requests served before the measured ones, not counted (default 4)"},
    {{"engine-cost", no_argument, NULL, O_ENGINE_COST}, OPT_SERVE, NULL,
     "a generative model: replay the run's batches in a bare loop, the engine's own cost a step beside it"},
    {{"endpoint", required_argument, NULL, O_ENDPOINT}, OPT_SERVE, "URL",
     "serve over HTTP: the OpenAI-compatible server at URL (loopback only) serves the requests, sent by one "
     "thread at their scheduled times (docs/serve-endpoint.md)", .needs = O_ENDPOINT_MODEL,
     .why = "the server serves the model it names"},
    {{"model", required_argument, NULL, O_ENDPOINT_MODEL}, OPT_SERVE, "NAME",
     "with --endpoint: the server's name of the model (GET /v1/models lists them)", .needs = O_ENDPOINT,
     .why = "it names the model of the endpoint"},
    {{"request-timeout-ms", required_argument, NULL, O_REQUEST_TIMEOUT_MS}, OPT_SERVE, "T",
     "with --endpoint: a request not ended T ms after its send fails as a timeout (default 600000)",
     .needs = O_ENDPOINT, .why = "it bounds a request to the endpoint"},
    {{"api", required_argument, NULL, O_ENDPOINT_API}, OPT_SERVE, "completions|llama",
     "with --endpoint: the API spoken, OpenAI's /v1/completions or llama.cpp's own /completion (each event's "
     "token ids, the server's timings; default completions)",
     .needs = O_ENDPOINT, .why = "it names the endpoint's API"},
    {{"steps-csv", required_argument, NULL, O_STEPS_CSV}, OPT_SERVE, "FILE",
     "a generative model: also write one CSV row per engine step (docs/serve-generative.md)"},
    {{"shared-prefix", required_argument, NULL, O_SHARED_PREFIX}, OPT_SERVE, "T",
     "a generative model: every prompt's first T tokens alike, a prefix-cache experiment (default 0)"},
    {{"prefix-cache", required_argument, NULL, O_PREFIX_CACHE}, OPT_SERVE, "on|off",
     "a generative model: a slot's next request reuses the common prefix of its cells (default on)"},
    {{"sampling", required_argument, NULL, O_SAMPLING}, OPT_SERVE, "none|greedy",
     "a generative model: how the engine picks each token: none, its own ids with no logits read on the host, or "
     "greedy, the argmax of its logits on the host within its step, as a server must pick it (default none)"},
    {{"pitfalls", no_argument, NULL, O_SERVE_PITFALLS}, OPT_SERVE, NULL,
     "a generative model: also what each classic mistake of serving benchmarks reports, beside the correct figure"},
    {{"best", no_argument, NULL, O_SERVE_BEST}, OPT_SERVE, NULL,
     "a generative model: race the engine's settings (slots, prefill chunk, the backend's raced options) by "
     "goodput at the targets; docs/best.md, Serving"},
    {{"help", no_argument, NULL, O_HELP}, 0, NULL, "this help"},
};
// clang-format on
#pragma GCC diagnostic pop
#define N_OPTIONS (sizeof options / sizeof options[0])
#define GIVEN_BITS (8 * sizeof((cli_args *)0)->given)
_Static_assert(N_OPTIONS <= GIVEN_BITS, "cli_args.given holds one bit per option");

/* Whether the option table's entry i was given. */
static bool given_at(const cli_args *a, size_t i) { return a->given[i / 64] >> (i % 64) & 1u; }

static bool in_groups(const cli_command *cmd, const option_def *d)
{
    return !d->group || (d->group & cmd->groups);
}

static const option_def *find_option(int id);

/* An option whose group cmd takes, but which needs an option cmd does not
 * take (throughput: --max-sessions needs --precision), could never be
 * given: cmd does not take it either, and its help does not list it. */
static bool accepts(const cli_command *cmd, const option_def *d)
{
    return in_groups(cmd, d) && (!d->needs || in_groups(cmd, find_option(d->needs)));
}

/* Two entries of one name (--max-time-ms: adaptive stopping's cap, and
 * throughput's bound; --max-batch: the batch search's, and serve's dynamic
 * batching) are one flag to a command: the entry it takes, or the first
 * when it takes neither. Whether entry i is the other one for cmd. */
static bool same_name_hidden(const cli_command *cmd, size_t i)
{
    bool takes_i = accepts(cmd, &options[i]);
    for (size_t j = 0; j < N_OPTIONS; j++) {
        if (j == i || strcmp(options[j].opt.name, options[i].opt.name)) continue;
        bool takes_j = accepts(cmd, &options[j]);
        if ((takes_j && !takes_i) || (takes_j == takes_i && j < i)) return true;
    }
    return false;
}

static const option_def *find_option(int id)
{
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (options[i].opt.val == id) return &options[i];
    return NULL;
}

static bool given(const cli_args *a, int id)
{
    const option_def *d = find_option(id);
    return d && given_at(a, (size_t)(d - options));
}

bool cli_given(const cli_args *a, const char *name)
{
    /* Every entry of the name: a flag may have one per command group. */
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (!strcmp(options[i].opt.name, name) && given_at(a, i)) return true;
    return false;
}

/* The defaults cmd starts from (before its options are applied): the
 * configuration its init functions fill, which its help states too. */
static void set_defaults(const cli_command *cmd, cli_args *a, bool gen_named)
{
    ib_model_options_init(&a->model_opts);
    /* A sweep warms up and times every batch: its own defaults. */
    ib_throughput_config tc;
    ib_throughput_config_init(&tc);
    ib_gen_config_init(&a->gen);
    a->gen_backend = (cmd->groups & OPT_GEN) || gen_named;
    if (cmd->groups & OPT_THROUGHPUT)
        a->cfg = tc.run;
    else if (a->gen_backend)
        a->cfg = a->gen.run; /* a run is a whole request: its own defaults */
    else
        ib_config_init(&a->cfg);
    a->max_batch = tc.max_batch;
    a->throughput_max_ms = tc.max_time_ms;
    ib_serve_config_init(&a->serve);
    if (cmd->groups & OPT_SERVE)
        a->max_batch = a->serve.max_batch; /* serve: no dynamic batching unless asked */
    a->threshold = IB_COMPARE_DEFAULT_THRESHOLD;
    a->sessions = 1;
    a->max_sessions = 20;
    a->rank_timeout_s = 120;
    a->step_max_ms = a->far_factor = -1; /* best's own defaults */
    a->gen_figure = -1;
}

/* How a count of cmd's runs is counted: throughput's per batch, calibrate's
 * per kernel (fewer for a long one). */
static const char *runs_unit(const cli_command *cmd)
{
    if (cmd->groups & OPT_THROUGHPUT) return " per batch";
    return strcmp(cmd->name, "calibrate") ? "" : " per kernel at most";
}

/* A count of runs: best's with a generative model's beside it (best of
 * one times whole requests, as generate: gen_value). */
static void runs_text(const cli_command *cmd, int64_t value, int64_t gen_value, const char *unit, char *buf,
                      size_t cap)
{
    if (cmd->groups & OPT_BEST)
        snprintf(buf, cap, "%lld%s, a generative model's %lld", (long long)value, unit, (long long)gen_value);
    else
        snprintf(buf, cap, "%lld%s", (long long)value, unit);
}

/* --step-max-ms: best's race's default, or serve --best's. */
static double step_max_default(const cli_command *cmd, const ib_best_config *bc)
{
    ib_best_serve_config sc;
    ib_best_serve_config_init(&sc);
    return cmd->groups & OPT_SERVE ? sc.step_max_ms : bc->step_max_ms;
}

/* "300", "100 per batch": the default of option id in cmd, read from a (set
 * by set_defaults) or from the init function cmd takes it from; false for
 * an option whose help says its default in words, or that has none. */
static bool default_text(const cli_command *cmd, const cli_args *a, int id, char *buf, size_t cap)
{
    const ib_config *c = &a->cfg;
    const char *per_batch = cmd->groups & OPT_THROUGHPUT ? " per batch" : "";
    ib_best_config bc;
    ib_best_config_init(&bc);
    switch (id) {
    case O_RUNS: return runs_text(cmd, c->runs, a->gen.run.runs, runs_unit(cmd), buf, cap), true;
    case O_WARMUP_RUNS:
        return runs_text(cmd, c->warmup_runs, a->gen.run.warmup_runs, per_batch, buf, cap), true;
    case O_WARMUP_MS: return snprintf(buf, cap, "%g%s", c->warmup_ms, per_batch), true;
    case O_WARMUP_MAX_MS: return snprintf(buf, cap, "%g%s", c->warmup_max_ms, per_batch), true;
    case O_MIN_RUNS: return snprintf(buf, cap, "%lld", (long long)c->min_runs), true;
    case O_MAX_RUNS: return snprintf(buf, cap, "%lld", (long long)c->max_runs), true;
    case O_MAX_TIME_MS: return snprintf(buf, cap, "%g", c->max_time_ms), true;
    case O_THROUGHPUT_MAX_MS: return snprintf(buf, cap, "%g", a->throughput_max_ms), true;
    case O_DEVICE_ID: return snprintf(buf, cap, "%d", a->model_opts.device_id), true;
    case O_SEED: return snprintf(buf, cap, "%llu", (unsigned long long)a->model_opts.seed), true;
    case O_MAX_BATCH: return snprintf(buf, cap, "%lld", (long long)a->max_batch), true;
    case O_SERVE_MAX_BATCH: return snprintf(buf, cap, "%lld: no batching", (long long)a->max_batch), true;
    case O_THRESHOLD: return snprintf(buf, cap, "%g%%", 100 * a->threshold), true;
    case O_SESSIONS: return snprintf(buf, cap, "%lld", (long long)a->sessions), true;
    case O_MAX_SESSIONS: return snprintf(buf, cap, "%lld", (long long)a->max_sessions), true;
    case O_RANK_TIMEOUT: return snprintf(buf, cap, "%g", a->rank_timeout_s), true;
    case O_STEP_MAX_MS: return snprintf(buf, cap, "%g", step_max_default(cmd, &bc)), true;
    case O_FAR_FACTOR: return snprintf(buf, cap, "%g", bc.far_factor), true;
    case O_REQUESTS: return snprintf(buf, cap, "%lld", (long long)a->serve.requests), true;
    case O_REQUEST_BATCH: return snprintf(buf, cap, "%lld", (long long)a->serve.request_batch), true;
    case O_MAX_DELAY_US: return snprintf(buf, cap, "%g", a->serve.max_delay_us), true;
    case O_SLO_PERCENTILE: return snprintf(buf, cap, "%g", a->serve.slo_percentile), true;
    case O_CONFIDENCE: return snprintf(buf, cap, "%g", a->serve.confidence), true;
    case O_SCHEDULE_SEED: return snprintf(buf, cap, "%llu", (unsigned long long)a->serve.seed), true;
    case O_PROMPT_TOKENS: return snprintf(buf, cap, "%d", (int)a->gen.prompt_tokens), true;
    case O_NEW_TOKENS: return snprintf(buf, cap, "%d", (int)a->gen.new_tokens), true;
    case O_MAX_SEQUENCES: return snprintf(buf, cap, "%d", (int)a->gen.max_sequences), true;
    case O_SEQUENCE_RUNS: return snprintf(buf, cap, "%lld", (long long)a->gen.sequence_runs), true;
    default: return false;
    }
}

/* The default and the rules of an option as cmd's help states them:
 * " (default 30; CUDA only; needs --precision)". Empty when it has none. A
 * rule naming an option cmd does not take is moot there. */
static void describe_rules(const cli_command *cmd, const cli_args *defaults, const option_def *d, char *out,
                           size_t size)
{
    char parts[4][80], value[64];
    int n = 0;
    if (default_text(cmd, defaults, d->opt.val, value, sizeof value))
        snprintf(parts[n++], sizeof parts[0], "default %s", value);
    if (d->device != ANY_DEVICE) snprintf(parts[n++], sizeof parts[0], "CUDA only");
    if (d->needs && accepts(cmd, find_option(d->needs)))
        snprintf(parts[n++], sizeof parts[0], "needs --%s", find_option(d->needs)->opt.name);
    if (d->conflicts && accepts(cmd, find_option(d->conflicts)))
        snprintf(parts[n++], sizeof parts[0], "not with --%s", find_option(d->conflicts)->opt.name);
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s%s", i ? "; " : " (", parts[i],
                 i == n - 1 ? ")" : "");
}

/* One option's lines of the help: its flag and value in a column, then
 * what it does, wrapped at HELP_WIDTH columns into the column after it. A
 * flag whose values overflow its column (a backend's flag with a long list
 * of values) has its text start on the next line. */
#define HELP_FLAG_COLUMN 34
#define HELP_TEXT_COLUMN (2 + HELP_FLAG_COLUMN + 1)
#define HELP_WIDTH 80
static void print_line(const char *left, const char *help, const char *rules)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%s", help, rules);
    if (strlen(left) > HELP_FLAG_COLUMN)
        printf("  %s\n%*s", left, HELP_TEXT_COLUMN, "");
    else
        printf("  %-*s ", HELP_FLAG_COLUMN, left);
    size_t column = HELP_TEXT_COLUMN;
    for (const char *w = text; *w;) {
        size_t len = strcspn(w, " ");
        /* A word that does not fit goes to the next line (alone when it
         * is longer than the column is wide). */
        if (column > HELP_TEXT_COLUMN && column + 1 + len > HELP_WIDTH) {
            printf("\n%*s", HELP_TEXT_COLUMN, "");
            column = HELP_TEXT_COLUMN;
        }
        if (column > HELP_TEXT_COLUMN) column += (size_t)printf(" ");
        column += (size_t)printf("%.*s", (int)len, w);
        w += len;
        while (*w == ' ') w++;
    }
    printf("\n");
}

/* Whether alias al can be a flag: not one of the table's names (the table's
 * wins). */
static bool alias_usable(const cli_alias *al)
{
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (!strcmp(options[i].opt.name, al->decl->flag)) return false;
    return true;
}

/* The help lines of the alias flags: the backend's help line, its rules,
 * and the backend's name when it is not the default. */
static void print_aliases(void)
{
    const cli_alias *al;
    for (size_t i = 0; (al = cli_alias_get(i)); i++) {
        if (!alias_usable(al)) continue;
        char left[64], syntax[48], rules[96] = "";
        cli_option_syntax(al->decl, syntax, sizeof syntax);
        snprintf(left, sizeof left, "--%s%s%s", al->decl->flag, syntax[0] ? " " : "", syntax);
        bool cuda = al->decl->flags & IB_OPTION_CUDA_ONLY, other = al->backend != ib_backend_default();
        if (cuda || other)
            snprintf(rules, sizeof rules, " (%s%s%s%s)", cuda ? "CUDA only" : "", cuda && other ? "; " : "",
                     other ? "backend " : "", other ? al->backend->name : "");
        print_line(left, al->decl->help, rules);
    }
}

static void print_help(const cli_command *cmd)
{
    static cli_args defaults; /* large: not on the stack */
    memset(&defaults, 0, sizeof defaults);
    set_defaults(cmd, &defaults, false);
    char typed[32]; /* zoo-export is typed "zoo export" */
    snprintf(typed, sizeof typed, "%s", cmd->name);
    char *dash = strchr(typed, '-');
    if (dash) *dash = ' ';
    printf("usage: inferbench %s %s\n%s\n\noptions:\n", typed, cmd->usage, cmd->summary);
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option_def *d = &options[i];
        if (!accepts(cmd, d)) continue;
        if (d->opt.val == O_BACKEND_FLAGS) {
            print_aliases();
            continue;
        }
        char left[64], rules[400];
        snprintf(left, sizeof left, "--%s%s%s", d->opt.name, d->arg ? " " : "", d->arg ? d->arg : "");
        describe_rules(cmd, &defaults, d, rules, sizeof rules);
        print_line(left, d->help, rules);
    }
}

void cli_list_options(const cli_command *cmd, FILE *f)
{
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (same_name_hidden(cmd, i)) continue;
        bool takes = accepts(cmd, &options[i]);
        if (options[i].opt.val != O_BACKEND_FLAGS) {
            fprintf(f, "%s\t--%s\t%s\t%s\n", cmd->name, options[i].opt.name,
                    options[i].arg ? options[i].arg : "-", takes ? "yes" : "no");
            continue;
        }
        const cli_alias *al;
        for (size_t k = 0; (al = cli_alias_get(k)); k++) {
            char syntax[48];
            cli_option_syntax(al->decl, syntax, sizeof syntax);
            if (alias_usable(al))
                fprintf(f, "%s\t--%s\t%s\t%s\n", cmd->name, al->decl->flag, syntax[0] ? syntax : "-",
                        takes ? "yes" : "no");
        }
    }
}

static bool bad(const char *opt, const char *text, const char *why)
{
    fprintf(stderr, "inferbench: --%s '%s': %s\n", opt, text, why);
    return false;
}

/* --objective time|energy|tpot|ttft: a generative model's two figures
 * (time is tpot for it), checked against the model by best. */
static bool parse_objective(const char *v, cli_args *a)
{
    static const char *const names[] = { "time", "energy", "tpot", "ttft" };
    for (int i = 0; i < 4; i++)
        if (!strcmp(v, names[i])) {
            a->objective_energy = i == 1;
            a->gen_figure = i >= 2 ? i - 2 : -1;
            return true;
        }
    return bad("objective", v, "expected time, energy, tpot or ttft");
}

static bool parse_i64(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    if (!*text || *text == ' ' || *text == '+') return bad(opt, text, "not a whole number");
    long long v = strtoll(text, &end, 10);
    if (*end) return bad(opt, text, "not a whole number");
    if (errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr, "inferbench: --%s '%s': must be between %lld and %lld\n", opt, text, (long long)lo,
                (long long)hi);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_f64(const char *opt, const char *text, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    if (!*text || *text == ' ') return bad(opt, text, "not a number");
    double v = strtod(text, &end);
    if (*end || !isfinite(v)) return bad(opt, text, "not a number");
    if (v < lo || v > hi) {
        fprintf(stderr, "inferbench: --%s '%s': must be between %g and %g\n", opt, text, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

/* "0.5%" or "0.5": percent, in (0, 50]. */
static bool parse_percent(const char *opt, const char *text, double *fraction)
{
    char buf[64];
    size_t n = strlen(text);
    if (n == 0 || n >= sizeof buf) return bad(opt, text, "not a percentage");
    memcpy(buf, text, n + 1);
    if (buf[n - 1] == '%') buf[n - 1] = '\0';
    char *end;
    double pct = strtod(buf, &end);
    if (end == buf || buf[0] == ' ' || *end || !isfinite(pct)) return bad(opt, text, "not a percentage");
    if (!(pct > 0 && pct <= 50)) return bad(opt, text, "must be above 0% and at most 50%");
    *fraction = pct / 100.0;
    return true;
}

static bool parse_device(const char *text, ib_device_kind *out)
{
    if (!strcmp(text, "cuda") || !strcmp(text, "gpu"))
        *out = IB_DEVICE_CUDA;
    else if (!strcmp(text, "cpu"))
        *out = IB_DEVICE_CPU;
    else if (!strcmp(text, "auto"))
        *out = IB_DEVICE_AUTO;
    else
        return bad("device", text, "expected cuda, cpu or auto");
    return true;
}

static bool parse_math(const char *text, ib_math *out)
{
    ib_error err;
    if (ib_math_parse(text, out, &err) == IB_OK) return true;
    return bad("math", text, "expected fp32, tf32, fp16 or bf16");
}

static bool add_shape(cli_args *a, const char *text)
{
    if (a->model_opts.n_shapes == IB_MAX_TENSORS) return bad("shape", text, "too many --shape options");
    ib_error err;
    ib_shape_override *s = &a->shapes[a->model_opts.n_shapes];
    if (ib_shape_parse(text, s, &err) != IB_OK) {
        fprintf(stderr, "inferbench: --shape: %s\n", err.message);
        return false;
    }
    for (size_t i = 0; i < a->model_opts.n_shapes; i++)
        if (!strcmp(a->shapes[i].name, s->name)) return bad("shape", text, "input given twice");
    a->model_opts.n_shapes++;
    a->model_opts.shapes = a->shapes;
    return true;
}

static bool add_input(cli_args *a, const char *text)
{
    if (a->model_opts.n_inputs == IB_MAX_TENSORS) return bad("input", text, "too many --input options");
    ib_error err;
    ib_input_spec *s = &a->inputs[a->model_opts.n_inputs];
    if (ib_input_spec_parse(text, s, &err) != IB_OK) {
        fprintf(stderr, "inferbench: --input: %s\n", err.message);
        return false;
    }
    for (size_t i = 0; i < a->model_opts.n_inputs; i++)
        if (!strcmp(a->inputs[i].name, s->name)) return bad("input", text, "input given twice");
    a->model_opts.n_inputs++;
    a->model_opts.inputs = a->inputs;
    return true;
}

/* A rate, a target: above zero, with a message that says so. */
static bool parse_positive(const char *opt, const char *text, double *out)
{
    if (!parse_f64(opt, text, -INFINITY, 1e9, out)) return false;
    return *out > 0 || bad(opt, text, "must be above 0");
}

static bool parse_fraction(const char *opt, const char *text, double *out)
{
    if (!parse_f64(opt, text, 0, 1, out)) return false;
    return (*out > 0 && *out < 1) || bad(opt, text, "must be between 0 and 1, both excluded (0.99)");
}

/* --api completions|llama: the names ib_endpoint_api_str gives. */
static bool parse_api(const char *opt, const char *text, ib_endpoint_api *out)
{
    for (ib_endpoint_api api = IB_ENDPOINT_API_COMPLETIONS; ib_endpoint_api_str(api); api++)
        if (!strcmp(text, ib_endpoint_api_str(api))) {
            *out = api;
            return true;
        }
    return bad(opt, text, "is not completions (OpenAI's /v1/completions) or llama (llama.cpp's /completion)");
}

/* serve --endpoint's options: they write a->endpoint. */
static bool apply_endpoint(cli_args *a, int id, const char *name, const char *v)
{
    switch (id) {
    case O_ENDPOINT: a->endpoint.url = v; return true;
    case O_ENDPOINT_MODEL: a->endpoint.model = v; return true;
    case O_REQUEST_TIMEOUT_MS: return parse_positive(name, v, &a->endpoint.request_timeout_ms);
    case O_ENDPOINT_API: return parse_api(name, v, &a->endpoint.api);
    }
    return false;
}

/* A percentile as a fraction (0.99, as forward-pass serve always took it)
 * or in percent (99, as LoadGen and the targets say it): 1 and above is
 * percent, below 100. */
static bool parse_percentile(const char *opt, const char *text, double *out)
{
    if (!parse_f64(opt, text, 0, 100, out)) return false;
    if (!(*out > 0 && *out < 100))
        return bad(opt, text, "a percentile between 0 and 100, both excluded (99, or the fraction 0.99)");
    if (*out >= 1) *out /= 100;
    return true;
}

/* serve's options of a generative model: they write a->gen_serve. */
static bool apply_gen_serve(cli_args *a, int id, const char *name, const char *v)
{
    ib_gen_serve_config *g = &a->gen_serve;
    int64_t i64;
    switch (id) {
    case O_SLOTS: return parse_i64(name, v, 1, IB_GEN_MAX_SEQUENCES, &i64) && (g->slots = (int32_t)i64, true);
    case O_PREFILL_CHUNK:
        return parse_i64(name, v, 1, IB_GEN_SERVE_MAX_TOKENS, &i64) &&
               (g->prefill_chunk = (int32_t)i64, true);
    case O_WARMUP_REQUESTS:
        return parse_i64(name, v, 0, 10000, &i64) && (g->warmup_requests = (int32_t)i64, true);
    case O_BURSTINESS: return parse_positive(name, v, &g->burstiness);
    case O_SLO_TTFT_MS: return parse_positive(name, v, &g->slo_ttft_ms);
    case O_SLO_TPOT_MS: return parse_positive(name, v, &g->slo_tpot_ms);
    case O_SLO_E2E_MS: return parse_positive(name, v, &g->slo_e2e_ms);
    case O_SHARED_PREFIX:
        return parse_i64(name, v, 0, IB_GEN_SERVE_MAX_TOKENS, &i64) &&
               (g->shared_prefix = (int32_t)i64, true);
    case O_PREFIX_CACHE:
        if (strcmp(v, "on") && strcmp(v, "off")) return bad(name, v, "on or off");
        g->prefix_cache = !strcmp(v, "on");
        return true;
    case O_SAMPLING:
        if (strcmp(v, "none") && strcmp(v, "greedy")) return bad(name, v, "none or greedy");
        g->sample_greedy = !strcmp(v, "greedy");
        return true;
    case O_SERVE_PITFALLS: g->pitfalls = true; return true;
    case O_ENGINE_COST: g->engine_cost = true; return true;
    case O_SERVE_BEST: a->serve_best = true; return true;
    }
    return apply_endpoint(a, id, name, v);
}

static bool apply_serve(cli_args *a, int id, const char *name, const char *v)
{
    ib_serve_config *s = &a->serve;
    int64_t i64;
    switch (id) {
    case O_RATE: return parse_positive(name, v, &a->rate);
    case O_RATES: a->rates = v; return true;
    case O_ARRIVALS: a->arrivals = v; return true;
    case O_REQUESTS: return parse_i64(name, v, 1, 1000000, &s->requests);
    case O_DURATION_MS: s->requests = 0; return parse_positive(name, v, &s->duration_ms);
    case O_REQUEST_BATCH: return parse_i64(name, v, 1, 1 << 20, &s->request_batch);
    case O_CONCURRENCY: return parse_i64(name, v, 1, 1000000, &s->concurrency);
    case O_MAX_DELAY_US: return parse_f64(name, v, 0, 1e7, &s->max_delay_us);
    case O_SLO_P99_MS: s->slo_percentile = 0.99; return parse_positive(name, v, &s->slo_ms);
    case O_SLO_MS: return parse_positive(name, v, &s->slo_ms);
    case O_SLO_PERCENTILE: return parse_percentile(name, v, &s->slo_percentile);
    case O_CONFIDENCE: return parse_fraction(name, v, &s->confidence);
    case O_INSTANCES:
        a->instances_max = !strcmp(v, "max");
        return a->instances_max || parse_i64(name, v, 1, IB_SERVE_MAX_INSTANCES, &a->instances);
    case O_RATE_FLOOR: return parse_positive(name, v, &s->min_rate);
    case O_REQUESTS_CSV: a->requests_csv_path = v; return true;
    case O_STEPS_CSV: a->steps_csv_path = v; return true;
    case O_SCHEDULE_SEED: return parse_i64(name, v, 0, INT64_MAX, &i64) && (s->seed = (uint64_t)i64, true);
    }
    return apply_gen_serve(a, id, name, v);
}

/* --prompt-tokens and --new-tokens: a count, or (serve of a generative
 * model) a range "A..B" of counts drawn uniformly; *count is the first,
 * *lo_out and *hi_out the bounds (serve's). */
static bool parse_tokens(cli_args *a, const char *name, const char *v, int32_t *count, int32_t *lo_out,
                         int32_t *hi_out)
{
    const char *dots = strstr(v, "..");
    int64_t lo, hi;
    char first[32];
    size_t n = dots ? (size_t)(dots - v) : 0;
    if (dots && (n == 0 || n >= sizeof first)) return bad(name, v, "expected a count or a range A..B");
    if (dots) memcpy(first, v, n), first[n] = '\0';
    if (!parse_i64(name, dots ? first : v, 1, IB_GEN_SERVE_MAX_TOKENS, &lo)) return false;
    if (dots && !parse_i64(name, dots + 2, 1, IB_GEN_SERVE_MAX_TOKENS, &hi)) return false;
    if (!dots) hi = lo;
    if (hi < lo) return bad(name, v, "a range A..B needs A not above B");
    a->token_range = a->token_range || hi > lo;
    *count = (int32_t)lo;
    *lo_out = (int32_t)lo;
    *hi_out = (int32_t)hi;
    return true;
}

/* generate's options: they write a->gen. False for an id that is not one
 * of them, or a bad value (after its one line). */
static bool apply_gen(cli_args *a, int id, const char *name, const char *v)
{
    ib_gen_config *g = &a->gen;
    int64_t i64;
    bool ok = true;
    switch (id) {
    case O_PROMPT_TOKENS:
        return parse_tokens(a, name, v, &g->prompt_tokens, &a->gen_serve.prompt_min,
                            &a->gen_serve.prompt_max);
    case O_NEW_TOKENS:
        return parse_tokens(a, name, v, &g->new_tokens, &a->gen_serve.output_min, &a->gen_serve.output_max);
    case O_DEPTH:
        ok = parse_i64(name, v, 1, 1 << 20, &i64);
        g->depth = (int32_t)i64;
        break;
    case O_CTX_PER_SEQ:
        ok = parse_i64(name, v, 1, 1 << 20, &i64);
        g->ctx_per_seq = (int32_t)i64;
        break;
    case O_SEQUENCES: a->sequences = v; return true;
    case O_SEARCH_SEQUENCES: g->search = true; return true;
    case O_MAX_SEQUENCES:
        ok = parse_i64(name, v, 1, IB_GEN_MAX_SEQUENCES, &i64);
        g->max_sequences = (int32_t)i64;
        break;
    case O_SEQUENCE_RUNS: return parse_i64(name, v, 1, 1000000, &g->sequence_runs);
    case O_TPOT_BUDGET: return parse_f64(name, v, 1e-6, 3600000, &g->tpot_budget_ms);
    case O_TIME_SAMPLING: g->time_sampling = true; return true;
    case O_PITFALLS: g->pitfalls = true; return true;
    default: return false;
    }
    return ok;
}

static bool add_spread_from(cli_args *a, const char *path)
{
    if (a->n_spread_from == CLI_MAX_SPREAD_FROM) {
        fprintf(stderr, "inferbench: --spread-from: at most %d files\n", CLI_MAX_SPREAD_FROM);
        return false;
    }
    a->spread_from[a->n_spread_from++] = path;
    return true;
}

static bool apply(cli_args *a, int id, const char *name, const char *v)
{
    int64_t i64;
    ib_config *c = &a->cfg;
    switch (id) {
    case O_DEVICE: return parse_device(v, &a->model_opts.device);
    case O_DEVICE_ID:
        if (!parse_i64(name, v, 0, 63, &i64)) return false;
        a->model_opts.device_id = (int)i64;
        return true;
    case O_BATCH: return parse_i64(name, v, 1, 1 << 20, &a->model_opts.batch);
    case O_SHAPE: return add_shape(a, v);
    case O_INPUT: return add_input(a, v);
    case O_SEED: return parse_i64(name, v, 0, INT64_MAX, &i64) && (a->model_opts.seed = (uint64_t)i64, true);
    case O_RUNS: return parse_i64(name, v, 1, 1000000, &c->runs);
    case O_WARMUP_RUNS: return parse_i64(name, v, 0, 1000000, &c->warmup_runs);
    case O_WARMUP_MS: return parse_f64(name, v, 0, 3600000, &c->warmup_ms);
    case O_WARMUP_MAX_MS: return parse_f64(name, v, 0, 3600000, &c->warmup_max_ms);
    case O_NO_STEADY: c->warmup_until_steady = false; return true;
    case O_PRECISION: return parse_percent(name, v, &c->precision);
    case O_MIN_RUNS: return parse_i64(name, v, 6, 1000000, &c->min_runs);
    case O_MAX_RUNS: return parse_i64(name, v, 6, 1000000, &c->max_runs);
    case O_MAX_TIME_MS: return parse_f64(name, v, 1, 3600000, &c->max_time_ms);
    case O_FLUSH_L2: c->flush_l2 = true; return true;
    case O_EXCLUDE_LAUNCH: c->exclude_launch = true; return true;
    case O_NO_GPU_STATE: c->sample_gpu_state = false; return true;
    case O_NO_ENERGY: c->measure_energy = false; return true;
    case O_JSON: a->json_path = v; return true;
    case O_HTML: a->html_path = v; return true;
    case O_CSV: a->csv_path = v; return true;
    case O_MD: a->md_path = v; return true;
    case O_MAX_BATCH:
    case O_SERVE_MAX_BATCH: return parse_i64(name, v, 1, 1 << 20, &a->max_batch);
    case O_THROUGHPUT_MAX_MS: return parse_f64(name, v, 0, 86400000, &a->throughput_max_ms);
    case O_BUDGET: return parse_f64(name, v, 1e-6, 3600000, &a->latency_budget_ms);
    case O_BATCHES: a->batches = v; return true;
    case O_MEMORY_CAP:
        if (!parse_i64(name, v, 1, 1 << 30, &i64)) return false;
        a->memory_cap_mb = (size_t)i64;
        return true;
    case O_OUTPUT: a->output_path = v; return true;
    case O_FP16: a->fp16 = true; return true;
    case O_THRESHOLD: return parse_percent(name, v, &a->threshold);
    case O_FAIL_IF_SLOWER: a->fail_if_slower = true; return true;
    case O_SPREAD_FROM: return add_spread_from(a, v);
    case O_QUIET: a->quiet = true; return true;
    case O_SESSIONS: return parse_i64(name, v, 1, IB_SESSIONS_MAX, &a->sessions);
    case O_MAX_SESSIONS: return parse_i64(name, v, 2, IB_SESSIONS_MAX, &a->max_sessions);
    case O_REQUIRE_IDLE_GPU: a->require_idle_gpu = true; return true;
    case O_DEVICES: a->devices = v; return true;
    case O_SHARE_GPU: a->share_gpu = true; return true;
    case O_RANK_TIMEOUT: return parse_f64(name, v, 0.1, 86400, &a->rank_timeout_s);
    case O_SESSIONS_MAX_MS: return parse_f64(name, v, 1, 86400000, &a->sessions_max_ms);
    case O_OPTION: return cli_add_backend_option(a, v);
    case O_MATH: return parse_math(v, &a->model_opts.math);
    case O_MAX_ERROR: return parse_f64(name, v, 1e-300, 1e300, &a->max_error);
    case O_EXHAUSTIVE: a->exhaustive = true; return true;
    case O_STEP_MAX_MS: return parse_f64(name, v, 0, 360000000, &a->step_max_ms);
    case O_FAR_FACTOR:
        if (!parse_f64(name, v, 0, 1e6, &a->far_factor)) return false;
        if (a->far_factor > 0 && a->far_factor < 1) {
            fprintf(stderr, "inferbench: --%s '%s': must be 0 (off) or at least 1\n", name, v);
            return false;
        }
        return true;
    case O_OBJECTIVE: return parse_objective(v, a);
    case O_BACKEND:
        a->backend = v; /* generate's backends are not the registry's: ib_gen_open names them */
        return (a->gen_backend && (!strcmp(v, "llama") || !strcmp(v, "fake"))) ||
               cli_find_backend(v, &a->backend_table) == EXIT_OK;
    default: return apply_gen(a, id, name, v) || apply_serve(a, id, name, v);
    }
    return false;
}

/* An option given without the one it needs, or with one it conflicts with,
 * would be ignored or overruled: refused instead (the table says which). */
static bool check_rules(const cli_command *cmd, const cli_args *a)
{
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option_def *d = &options[i];
        if (!given_at(a, i)) continue;
        if (d->needs && !given(a, d->needs)) {
            fprintf(stderr, "inferbench %s: --%s needs --%s: %s\n", cmd->name, d->opt.name,
                    find_option(d->needs)->opt.name, d->why);
            return false;
        }
        if (d->conflicts && given(a, d->conflicts)) {
            fprintf(stderr, "inferbench %s: --%s cannot be given with --%s: %s\n", cmd->name, d->opt.name,
                    find_option(d->conflicts)->opt.name, d->why);
            return false;
        }
    }
    return true;
}

/* --device-id 0 names the default device: harmless wherever it is given. */
static bool harmless_on_cpu(const option_def *d, const cli_args *a)
{
    return d->device == CUDA_ONLY_HARMLESS || (d->opt.val == O_DEVICE_ID && a->model_opts.device_id == 0);
}

bool cli_options_fit_device(const cli_args *a, ib_device_kind device)
{
    if (device == IB_DEVICE_CUDA) return true;
    /* Why the CPU (asked for, no GPU here, or the backend's choice): said
     * in every line below, worked out once one is needed. */
    char why[CLI_DEVICES_TEXT + 128] = "";
    const cli_alias *al;
    for (size_t i = 0; (al = cli_alias_get(i)); i++) {
        if (!(a->aliases_given >> i & 1u) || !(al->decl->flags & IB_OPTION_CUDA_ONLY)) continue;
        cli_cpu_reason_here(a, why, sizeof why);
        cli_progress_clear();
        fprintf(stderr, "inferbench: --%s applies to CUDA only: %s\n", al->decl->flag, why);
        return false;
    }
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option_def *d = &options[i];
        if (d->device == ANY_DEVICE || !given_at(a, i)) continue;
        if (!why[0]) cli_cpu_reason_here(a, why, sizeof why);
        if (harmless_on_cpu(d, a)) {
            cli_warn("--%s has no effect: %s", d->opt.name, why);
            continue;
        }
        cli_progress_clear();
        fprintf(stderr, "inferbench: --%s applies to CUDA only: %s\n", d->opt.name, why);
        return false;
    }
    return true;
}

/* Names what getopt_long refused: an ambiguous prefix ("--pre" for
 * --precision and --prefer-nhwc) or an unknown option; getopt_long answers
 * '?' for both. */
static void report_unknown(const cli_command *cmd, const char *word, const struct option *longopts)
{
    char matches[256] = "";
    int n = 0;
    bool is_long = word[0] == '-' && word[1] == '-';
    size_t len = is_long ? strcspn(word + 2, "=") : 0;
    for (size_t i = 0; len > 0 && longopts[i].name; i++)
        if (!strncmp(longopts[i].name, word + 2, len)) {
            snprintf(matches + strlen(matches), sizeof matches - strlen(matches), "%s--%s", n ? ", " : "",
                     longopts[i].name);
            n++;
        }
    if (n > 1)
        fprintf(stderr, "inferbench %s: ambiguous option '%.*s' (%s)\n", cmd->name, (int)(len + 2), word,
                matches);
    else
        fprintf(stderr, "inferbench %s: unknown option '%s' (see inferbench %s --help)\n", cmd->name, word,
                cmd->name);
}

static bool check_consistency(const cli_args *a)
{
    const ib_config *c = &a->cfg;
    if (c->warmup_max_ms < c->warmup_ms) {
        fprintf(stderr, "inferbench: --warmup-max-ms must not be below --warmup-ms\n");
        return false;
    }
    if (given(a, O_MAX_SESSIONS) && a->max_sessions < a->sessions) {
        fprintf(stderr, "inferbench: --max-sessions must not be below --sessions\n");
        return false;
    }
    if (c->precision > 0 && c->min_runs > c->max_runs) {
        fprintf(stderr, "inferbench: --min-runs must not exceed --max-runs\n");
        return false;
    }
    return true;
}

/* Options given to a command they do not apply to are errors, not silently
 * ignored: a user who typed --flush-l2 to `zoo list` expects something. */
static void refuse_elsewhere(const cli_command *cmd, const option_def *d)
{
    if (in_groups(cmd, d))
        fprintf(stderr,
                "inferbench %s: --%s does not apply to this command: it works with --%s, which %s does not "
                "take\n",
                cmd->name, d->opt.name, find_option(d->needs)->opt.name, cmd->name);
    else if (d->scope)
        fprintf(stderr, "inferbench %s: --%s does not apply to this command: %s\n", cmd->name, d->opt.name,
                d->scope);
    else
        fprintf(stderr, "inferbench %s: --%s does not apply to this command (see inferbench %s --help)\n",
                cmd->name, d->opt.name, cmd->name);
}

/* The long options getopt reads: the table's, with the backends' alias
 * flags where the table holds their place; a NULL name ends them. */
static void build_longopts(const cli_command *cmd, struct option *out)
{
    size_t n = 0;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (same_name_hidden(cmd, i)) continue;
        if (options[i].opt.val != O_BACKEND_FLAGS) {
            out[n++] = options[i].opt;
            continue;
        }
        const cli_alias *al;
        for (size_t k = 0; (al = cli_alias_get(k)); k++)
            if (alias_usable(al))
                out[n++] =
                    (struct option){ al->decl->flag,
                                     al->decl->flags & IB_OPTION_SWITCH ? no_argument : required_argument,
                                     NULL, O_ALIAS + (int)k };
    }
    out[n] = (struct option){ 0 };
}

/* The value of --backend in argv (as "--backend V" or "--backend=V"), or
 * NULL: read before parsing, so that a plugin's alias flags exist when
 * the rest is parsed. */
/* A backend of generative models only (llama: not a name of the
 * registry's, as fake is): best takes it for a generative model. */
static bool generation_only(const char *name)
{
    for (size_t i = 0; name && i < ib_gen_backend_count(); i++)
        if (!strcmp(ib_gen_backend_get(i)->name, name)) return !ib_backend_find(name);
    return false;
}

static const char *backend_named(int argc, char **argv)
{
    const char *name = NULL;
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--backend") && i + 1 < argc) name = argv[++i];
        if (!strncmp(argv[i], "--backend=", 10)) name = argv[i] + 10;
    }
    return name;
}

/* An alias flag: its value checked against what the backend declares, then
 * its option put in the list after those given before it. */
static bool apply_alias(const cli_command *cmd, cli_args *a, int id, const char *v)
{
    const cli_alias *al = cli_alias_get((size_t)(id - O_ALIAS));
    const option_def *group = find_option(O_BACKEND_FLAGS);
    if (!accepts(cmd, group)) {
        fprintf(stderr, "inferbench %s: --%s does not apply to this command (see inferbench %s --help)\n",
                cmd->name, al->decl->flag, cmd->name);
        return false;
    }
    char flag[80];
    snprintf(flag, sizeof flag, "--%s", al->decl->flag);
    const char *value;
    size_t slot = a->n_options < CLI_MAX_BACKEND_OPTIONS ? a->n_options : 0;
    long long lo, hi;
    int64_t i64;
    if (cli_option_range(al->decl, &lo, &hi)) {
        if (!parse_i64(al->decl->flag, v, lo, hi, &i64)) return false;
        value = v;
    } else if (!cli_alias_value(al, v, a->option_values[slot], sizeof a->option_values[slot], &value)) {
        return false;
    }
    a->aliases_given |= (uint64_t)1 << (size_t)(id - O_ALIAS);
    return cli_set_backend_option(a, flag, al->decl->key, value);
}

cli_parse_result cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *a)
{
    memset(a, 0, sizeof *a);
    ib_gen_serve_config_init(&a->gen_serve);
    ib_endpoint_config_init(&a->endpoint);
    /* generate names its own backends (no plugin, no alias flags of theirs). */
    const char *named =
        accepts(cmd, find_option(O_BACKEND)) && !(cmd->groups & OPT_GEN) ? backend_named(argc, argv) : NULL;
    /* best of a generative model may name its backend (--backend llama). */
    bool gen_named = (cmd->groups & (OPT_BEST | OPT_SERVE)) && generation_only(named);
    if (named && !gen_named && cli_find_backend(named, &a->backend_table) != EXIT_OK) return CLI_BAD_INPUT;
    struct option longopts[N_OPTIONS + CLI_MAX_ALIASES + 1];
    build_longopts(cmd, longopts);

    set_defaults(cmd, a, gen_named);

    optind = 0; /* 0, not 1: glibc then also forgets a half-read "-xo" of an earlier call */
    opterr = 0;
    for (;;) {
        int longindex = -1;
        int id = getopt_long(argc, argv, ":o:", longopts, &longindex);
        if (id == -1) break;
        if (id == 'o') id = O_OUTPUT;
        if (id == '?' || id == ':') {
            /* Inside a cluster of short options ("-xo") argv[optind-1] is
             * the cluster's word: name the character instead. */
            char shortopt[3] = { '-', (char)optopt, '\0' };
            const char *what = optopt > 0 && optopt < 128 ? shortopt : argv[optind - 1];
            if (id == '?' && what == argv[optind - 1])
                report_unknown(cmd, what, longopts);
            else
                fprintf(stderr, "inferbench %s: %s option '%s' (see inferbench %s --help)\n", cmd->name,
                        id == ':' ? "missing value for" : "unknown", what, cmd->name);
            return CLI_BAD_INPUT;
        }
        if (id >= O_ALIAS) {
            if (!apply_alias(cmd, a, id, optarg)) return CLI_BAD_INPUT;
            continue;
        }
        const option_def *d = find_option(id);
        if (id == O_HELP) {
            print_help(cmd);
            return CLI_HELP_SHOWN;
        }
        if (!accepts(cmd, d)) {
            refuse_elsewhere(cmd, d);
            return CLI_BAD_INPUT;
        }
        if (!apply(a, id, d->opt.name, optarg)) return CLI_BAD_INPUT;
        size_t bit = (size_t)(d - options);
        a->given[bit / 64] |= (uint64_t)1 << (bit % 64);
    }
    for (int i = optind; i < argc; i++) {
        if (a->n_pos == (int)(sizeof a->pos / sizeof a->pos[0])) {
            fprintf(stderr, "inferbench %s: too many arguments\n", cmd->name);
            return CLI_BAD_INPUT;
        }
        a->pos[a->n_pos++] = argv[i];
    }
    a->model = a->n_pos > 0 ? a->pos[0] : CLI_DEFAULT_MODEL;
    if (a->token_range && !(cmd->groups & OPT_SERVE)) {
        fprintf(stderr,
                "inferbench %s: a range of tokens (A..B) draws each request's length for serve: give "
                "one count\n",
                cmd->name);
        return CLI_BAD_INPUT;
    }
    return check_rules(cmd, a) && check_consistency(a) ? CLI_PARSED : CLI_BAD_INPUT;
}
