/* The inferbench program: subcommands over the library. The program, not
 * the library, reads options, prints, writes files and picks exit codes. */
#ifndef IB_CLI_CLI_H
#define IB_CLI_CLI_H

#include "inferbench.h"
#include "inferbench_backend.h"

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit codes (documented in docs/cli.md). An interrupted run exits with
 * 128 + the signal number, as shells report it, after writing what was
 * measured. */
enum {
    EXIT_OK = 0,
    EXIT_RUN_FAILED = 1, /* the device or runtime failed while measuring */
    EXIT_BAD_INPUT = 2,  /* bad option, model, file, or device asked for */
    EXIT_NOT_MET = 3     /* a goal (latency budget) no candidate meets; compare
                            --fail-if-slower: B is slower than A */
};

#define CLI_MAX_BACKEND_OPTIONS 32
#define CLI_MAX_SPREAD_FROM 8

/* Everything a command may be given. Each command says which groups of
 * options it takes (cli_spec) and parses into this. */
typedef struct cli_args {
    const char *pos[4]; /* positional arguments */
    int n_pos;
    const char *model; /* the first positional, or the default */
    ib_model_options model_opts;
    ib_shape_override shapes[IB_MAX_TENSORS];
    ib_input_spec inputs[IB_MAX_TENSORS]; /* --input */
    ib_config cfg;
    const char *json_path;
    const char *html_path;   /* --html: the report as a page with plots */
    const char *csv_path;    /* --csv: one row per run, batch, method, ... */
    const char *md_path;     /* --md: the summary tables in Markdown */
    const char *output_path; /* zoo export -o */
    bool fp16;
    /* throughput */
    int64_t max_batch;
    double throughput_max_ms; /* throughput --max-time-ms: the search's bound */
    double latency_budget_ms;
    const char *batches; /* explicit batch list, no search */
    size_t memory_cap_mb;
    /* --backend NAME or plugin:PATH.so (NULL: the registry's default), and
     * its --option KEY=VALUE (keys copied here, values pointing into argv,
     * static text or option_values) */
    const char *backend;
    ib_backend_option options[CLI_MAX_BACKEND_OPTIONS];
    char option_keys[CLI_MAX_BACKEND_OPTIONS][64];
    size_t n_options;
    const ib_backend *backend_table;                 /* what --backend names, resolved (a
                                                        plugin loaded) by cli_parse; NULL:
                                                        the default */
    char option_values[CLI_MAX_BACKEND_OPTIONS][64]; /* values of alias
                                                        flags, as declared */
    uint64_t aliases_given;                          /* bit i: alias flag i (cli_alias_get) given */
    /* compare */
    double threshold; /* fraction; IB_COMPARE_DEFAULT_THRESHOLD */
    bool fail_if_slower;
    const char *spread_from[CLI_MAX_SPREAD_FROM]; /* --spread-from FILE: results with sessions */
    size_t n_spread_from;
    bool quiet;       /* --quiet: no progress line */
    double max_error; /* --max-error: 0 none */
    /* serve (its --max-batch is max_batch, 1 unless given) */
    ib_serve_config serve;
    double rate;                   /* --rate: one rate, or the search's first */
    const char *rates;             /* --rates LIST */
    const char *arrivals;          /* --arrivals poisson|constant|FILE */
    const char *requests_csv_path; /* --requests-csv: one row per served request */
    const char *steps_csv_path;    /* --steps-csv: one row per engine step (a generative model) */
    int64_t instances;             /* --instances K (0: not given, 1) */
    bool instances_max;            /* --instances max: the most copies that fit */
    uint64_t given[2];             /* bit i (of word i / 64): the option table's entry i was given */
    /* sessions (cli/sessions.c) */
    int64_t sessions;           /* --sessions: fresh processes (default 1) */
    int64_t max_sessions;       /* --max-sessions: with --precision (default 20) */
    int argc;                   /* the program's arguments, which a session's */
    char **argv;                /* process is started with again */
    int session_index;          /* 1-based when this process is a session of
                                   another (hidden --session-child); 0 else */
    const char *session_result; /* where a session writes its latency JSON */
    int session_candidate;      /* best's finals: the 1-based candidate a
                                   session measures (hidden K/C:PATH); 0 none */
    bool require_idle_gpu;      /* --require-idle-gpu */
    bool exhaustive;            /* best --exhaustive: every candidate measured fully */
    double step_max_ms;         /* best --step-max-ms: each step's bound; < 0: the default */
    double far_factor;          /* best --far-factor; < 0: the default */
    bool objective_energy;      /* best --objective energy: ranked by inputs per joule */
    int gen_figure;             /* best --objective tpot|ttft: ib_best_gen_figure; -1 not given */
    /* fleet (cli/fleet.c) */
    const char *devices;    /* --devices all|0,2,3 */
    bool share_gpu;         /* --share-gpu: MPI ranks may share a GPU */
    double rank_timeout_s;  /* --rank-timeout-s: how long ranks wait for a missing one */
    double sessions_max_ms; /* --sessions-max-ms: 0 none */
    /* generate: its configuration (run: cfg above, copied in), the
     * --sequences list as given, and whether --backend names a generation
     * backend (llama, fake) rather than the registry's */
    ib_gen_config gen;
    const char *sequences;
    bool gen_backend;
    /* serve of a generative model (cli/cmd_serve_gen.c): its configuration
     * (--prompt-tokens and --new-tokens as counts or ranges) */
    ib_gen_serve_config gen_serve;
    bool token_range; /* a range A..B was given */
    /* serve --endpoint URL --model NAME (cli/cmd_serve_endpoint.c) */
    ib_endpoint_config endpoint;
    bool serve_best; /* serve --best: the engine's settings raced (cmd_serve_best.c) */
} cli_args;

enum {
    OPT_MODEL = 1u << 0,   /* --device, --batch, --shape, ... */
    OPT_MEASURE = 1u << 1, /* --runs, --warmup-*, --precision, ... */
    OPT_JSON = 1u << 2,
    OPT_THROUGHPUT = 1u << 3, /* --max-batch, --latency-budget-ms, ... */
    OPT_EXPORT = 1u << 4,     /* -o, --fp16 */
    OPT_DEVICE_ID = 1u << 5,  /* --device-id */
    OPT_COMPARE = 1u << 6,    /* --threshold, --fail-if-slower */
    OPT_HTML = 1u << 7,       /* --html */
    OPT_BATCH = 1u << 8,      /* --batch (throughput searches it or takes --batches) */
    OPT_ADAPTIVE = 1u << 9,   /* --precision, --min-runs, --max-runs, --max-time-ms */
    OPT_LAUNCH = 1u << 10,    /* --exclude-launch (calibrate times both ways itself) */
    OPT_QUIET = 1u << 11,     /* --quiet: the measuring commands */
    OPT_SESSIONS = 1u << 20,  /* --sessions, --max-sessions */
    OPT_MATH = 1u << 21,      /* --math: the measuring commands and convert */
    OPT_ACCURACY = 1u << 22,  /* --max-error: latency, throughput */
    OPT_SERVE = 1u << 12,     /* --rate, --arrivals, --slo-p99-ms, ...: serve */
    OPT_BEST = 1u << 23,      /* --exhaustive, --max-batch: best */
    OPT_FLEET = 1u << 24,     /* --devices, --share-gpu: latency, throughput */
    OPT_DEVICES = 1u << 25,   /* --devices alone: serve (which does not run under MPI) */
    OPT_GEN = 1u << 26,       /* --prompt-tokens, --new-tokens, --sequences, ...: generate */
    OPT_FORWARD = 1u << 27,   /* --shape, --input, --memory-cap-mb, the default backend's flags
                                 (--threads, --cuda-graph, ...): forward-pass models, not generate */
    OPT_GEN_RUN = 1u << 28    /* --prompt-tokens, --new-tokens, --depth, --ctx-per-seq: a generation
                                 request (generate, and best of a generative model) */
};

typedef struct cli_command {
    const char *name;
    const char *usage;   /* the arguments, "MODEL [options]" */
    const char *brief;   /* one whole sentence on one line: inferbench --help */
    const char *summary; /* the long help, at the head of COMMAND --help */
    unsigned groups;
    int (*run)(cli_args *a);
} cli_command;

typedef enum cli_parse_result { CLI_PARSED, CLI_HELP_SHOWN, CLI_BAD_INPUT } cli_parse_result;

/* Parses argv (argv[0] is the command name) into a, with the library's
 * defaults for what is not given. Prints a one-line error on bad input;
 * prints the command's help for --help. Never exits. */
cli_parse_result cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *a);

/* Whether the option of the table called name ("runs", without dashes)
 * was given. */
bool cli_given(const cli_args *a, const char *name);

/* Refuses (one line, false) or warns once about the options given that the
 * device a model opened on does not use (CUDA-only options on the CPU).
 * Called once the device is known, before anything is measured. */
bool cli_options_fit_device(const cli_args *a, ib_device_kind device);

/* Devices in refusals (cli/devices.c). The wording is made from a list of
 * device names, names[0..n) (CUDA's order), so that tests script it:
 * "1 (0: NVIDIA H200)", or "none" when n is 0. */
#define CLI_MAX_DEVICES_LISTED 64 /* as many as ib_cuda_devices counts */
#define CLI_DEVICES_TEXT 1024
void cli_describe_devices(char *buf, size_t cap, const char (*names)[IB_DEVICE_NAME_LEN], size_t n);
/* Whether device_id names none of the n devices: then true, with "there
 * is no CUDA device 7: this machine has 1 (0: NVIDIA H200)" in buf. */
bool cli_device_id_refusal(char *buf, size_t cap, int device_id, const char (*names)[IB_DEVICE_NAME_LEN],
                           size_t n);
/* Why a model runs on the CPU, for a CUDA-only option's refusal: the CPU
 * was asked for (--device cpu), the machine has no CUDA device, or the
 * backend ran it there although the machine has the n devices named. */
void cli_cpu_reason(char *buf, size_t cap, bool cpu_asked, const char *backend,
                    const char (*names)[IB_DEVICE_NAME_LEN], size_t n);
/* The same for a's model on this machine's devices (ib_cuda_devices). */
void cli_cpu_reason_here(const cli_args *a, char *buf, size_t cap);
/* Before a model opens (or calibrate measures): a --device-id that names
 * no device of this machine is refused, one line saying which devices
 * there are (false); --device cpu and device 0 are left to the checks
 * after the model opens. */
bool cli_check_device_id(const cli_args *a);

/* For tests: one line per option of the table,
 * "COMMAND<TAB>--NAME<TAB>ARG<TAB>yes|no", yes when cmd accepts it (ARG "-"
 * for a flag). From the table --help and the refusals read, so the three
 * cannot drift. */
void cli_list_options(const cli_command *cmd, FILE *f);

/* The default model of every command that takes one. */
#define CLI_DEFAULT_MODEL "zoo:efficientnet-b0"

/* Opens a's generative model (cli/cmd_generate.c) with a's options, then
 * extra's (at most CLI_GEN_EXTRA_OPTIONS; a later value of a key wins):
 * INFERBENCH_LLAMA_LIBRARY as library= unless given, zoo models in the
 * zoo's cache folder. *g NULL on a failure. */
#define CLI_GEN_EXTRA_OPTIONS 8
ib_status cli_gen_open(const cli_args *a, const ib_backend_option *extra, size_t n_extra, ib_gen **g,
                       ib_error *err);

/* The folder of the zoo's generative models (cli/zoo_cache.c):
 * INFERBENCH_ZOO_CACHE, else $XDG_CACHE_HOME/inferbench/zoo, else
 * $HOME/.cache/inferbench/zoo; created. False when it cannot be. */
bool cli_zoo_cache_dir(char *buf, size_t cap);
/* Creates path and its parents (0755); false with errno set. */
bool cli_make_dirs(char *path);

/* The client's calibrated ceiling on file (cli/client_calibration_file.c;
 * docs/serve-endpoint.md, "The client's ceiling"): the file is
 * INFERBENCH_CLIENT_CALIBRATION, else $XDG_CACHE_HOME/inferbench/
 * client-calibration.json, else $HOME/.cache/inferbench/...
 * cli_client_calibration_prepare checks before the run that it can be
 * written (its folder made); cli_client_calibration_save then writes r's
 * ceiling there whole (a temporary renamed over it) and says where. Both:
 * false with one line.
 * cli_client_ceiling_load fills *c: never fails, a missing, unreadable or
 * stale file is a state of it that the report states. */
struct cli_output;
bool cli_client_calibration_prepare(struct cli_output *o);
bool cli_client_calibration_save(struct cli_output *o, const ib_client_calibration_result *r, FILE *say);
void cli_client_ceiling_load(ib_client_ceiling *c);
/* INFERBENCH_LLAMA_LIBRARY (the folder of a llama.cpp library), or NULL:
 * the llama backend's library= option where none is given. */
const char *cli_llama_library(void);

/* Whether a names a generative model: one of the zoo's (zoo:llama-tiny,
 * NAME?TYPE), a GGUF file, or any model with --backend naming a backend
 * of generative models only (llama). best races it, serve serves it with
 * its engine (cmd_serve_gen.c). */
bool cli_generative_model(const cli_args *a);

/* serve of a generative model (cmd_serve_gen.c): the engine of
 * docs/serve-generative.md on the model a names. */
int cmd_serve_gen(cli_args *a);
/* The requests of serve of a generative model from the options (in
 * process and over HTTP alike): false after one line; *trace (a trace
 * file's requests, c->trace) freed by the caller. */
bool cli_gen_serve_settings(cli_args *a, ib_gen_serve_config *c, ib_gen_request_spec **trace);
/* What serve of a generative model does first (in process and over HTTP
 * alike): its settings, its --rates (into rates[IB_SERVE_MAX_RATES]),
 * --sessions run. True when the caller measures: c, *trace (freed by the
 * caller) and rates[0..*n_rates) set; false with *code the exit code (a
 * refusal in one line, or the sessions'), nothing left to free. */
bool cli_gen_serve_begin(cli_args *a, ib_gen_serve_config *c, ib_gen_request_spec **trace, double *rates,
                         size_t *n_rates, int *code);
/* No rate, no --rates, no trace, a target: serve searches the highest rate
 * within it (in process and over HTTP alike). */
bool cli_gen_serve_searching(const cli_args *a, const ib_gen_serve_config *c);
/* The search's or the curve's settings (rates[0..n_rates): the curve's;
 * none: the search) from the options, its line a rate attached
 * (cli_progress_attach_rates: rc must outlive the measurement). */
void cli_gen_serve_rates_config(const cli_args *a, const double *rates, size_t n_rates,
                                ib_gen_serve_rates_config *rc);
/* --sessions N of serve's one run (in process or over HTTP: each session
 * this program again), refused for a search, a curve or the pitfalls. */
int cli_gen_serve_sessions(cli_args *a, const ib_gen_serve_config *c, size_t n_rates);
/* serve --endpoint (cmd_serve_endpoint.c): the same requests sent to an
 * OpenAI-compatible server over HTTP. */
int cmd_serve_endpoint(cli_args *a);
/* serve --best (cmd_serve_best.c): the engine's settings raced by goodput. */
int cmd_serve_best(cli_args *a);
/* backend_options.c: the k-th of the raced values "a|b|c" into out[cap],
 * false past the end; the generation backend --backend names, else the
 * default. */
bool cli_race_value(const char *values, size_t k, char *out, size_t cap);
const ib_gen_backend *cli_gen_backend_of(const cli_args *a);
/* serve's options of a generative model given with a forward-pass one:
 * one line, EXIT_BAD_INPUT; else EXIT_OK. */
int cli_serve_refuse_generative(const cli_args *a);

/* A schedule file larger than this is refused before it is read. */
#define MAX_SCHEDULE_BYTES ((size_t)64 << 20)
/* The text of --arrivals FILE (a schedule or a request trace), *len bytes,
 * malloc'ed; NULL after one line on standard error when it cannot be read
 * or is larger than MAX_SCHEDULE_BYTES. */
char *cli_read_arrivals(const char *path, size_t *len);
/* --rates "50,100,200" into out[0..*n): numbers above 0, at most
 * IB_SERVE_MAX_RATES; false after one line (both kinds of serve). */
bool cli_parse_rates(const char *text, double *out, size_t *n);

/* calibrate client (cmd_calibrate_client.c): the HTTP client's error
 * against the scripted server (docs/script-server.md). */
int cmd_calibrate_client(cli_args *a);

/* The hidden script-server (cmd_script_server.c): the scripted streaming
 * server of docs/script-server.md until SIGINT/SIGTERM; its arguments
 * after the command's name. */
int cmd_script_server(int argc, char **argv);

/* Prints "inferbench: <message>" on stderr; returns the exit code for st. */
int cli_fail(ib_status st, const char *message);
/* Prints "inferbench: warning: <message>" on stderr. */
/* Closes standard output at exit, where the report of most commands is:
 * when what was written to it cannot be (a full disk, /dev/full), one line
 * on stderr and EXIT_RUN_FAILED in place of EXIT_OK (docs/cli.md, exit
 * codes); code otherwise. */
int cli_close_stdout(int code);
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The progress line (cli/progress.c): shown on standard error while cfg is
 * measured when it is a terminal and not quiet. cli_progress_clear erases
 * it; every message on stderr and the report call it first. */
void cli_progress_attach(ib_config *cfg, bool quiet);
/* A search's or a curve's own line a rate (kept above the progress line
 * of each rate's run), on the same terms; rc (the callback's user) and
 * serve (its targets) must outlive the measurement. */
void cli_progress_attach_rates(ib_gen_serve_rates_config *rc, const ib_gen_serve_config *serve, bool quiet);
void cli_progress_clear(void);
int cli_exit_code(ib_status st);

/* Cancellation by SIGINT/SIGTERM: the flag the library polls. */
extern volatile int cli_cancel_flag;
void cli_install_signal_handlers(void);
/* 128 + the signal received, or 0. */
int cli_signal_exit_code(void);

/* How an output is written (docs/cli.md, "Output files"). */
typedef enum cli_output_kind {
    CLI_OUTPUT_NONE,    /* not asked for */
    CLI_OUTPUT_REPLACE, /* a regular file or none yet (also at the end of a
                           symlink chain): a temporary beside it, renamed over */
    CLI_OUTPUT_STREAM,  /* a device, FIFO, socket, or an open file named
                           through /proc: written into, never replaced */
    CLI_OUTPUT_STDOUT   /* "-" or /dev/stdout: the report then goes to stderr */
} cli_output_kind;

/* A result file (--json, --html, zoo export -o): checked before anything is
 * measured, written whole at the end. Nothing exists on disk in between, so
 * a killed run leaves nothing behind. */
typedef struct cli_output {
    const char *flag; /* "--json": for messages */
    char *path;       /* as given */
    char *target;     /* path with its symlinks followed: what is written */
    cli_output_kind kind;
    /* The file's identity (its folder's when it does not exist yet, with
     * target's name), to refuse two outputs or an input on one file. */
    bool exists;
    dev_t dev;
    ino_t ino;
    mode_t mode;
} cli_output;
/* Checks path (NULL: o is not wanted) for flag and decides how it is
 * written: refuses (one line on stderr, false) an empty path, a folder, a
 * missing or unwritable folder, a file that cannot be written, one of the
 * files the command reads (reads, NULL-terminated, may be NULL), or the
 * file of an output in earlier (NULL-terminated, may be NULL). Creates
 * nothing. */
bool cli_output_prepare(cli_output *o, const char *flag, const char *path, const char *const *reads,
                        const cli_output *const *earlier);
bool cli_output_wanted(const cli_output *o);
/* The output goes to standard output: the human report goes to stderr. */
bool cli_output_is_stdout(const cli_output *o);
/* Writes text and a newline (or len bytes of data) to the output and
 * releases it; false, with one line on stderr, when it could not be
 * written. */
bool cli_output_commit(cli_output *o, const char *text);
bool cli_output_commit_bytes(cli_output *o, const void *data, size_t len);
/* Releases an output without writing it. */
void cli_output_abort(cli_output *o);

/* The result files of a measuring command, one per format, checked in
 * this order: each is refused when it is the file of one before it, and
 * only one may be standard output. */
enum { CLI_OUT_JSON, CLI_OUT_HTML, CLI_OUT_CSV, CLI_OUT_MD, CLI_N_OUTPUTS };
typedef struct cli_outputs {
    cli_output file[CLI_N_OUTPUTS];
} cli_outputs;

/* Prepares every output a asks for (--json, --html, --csv, --md: a path
 * the command does not take is NULL), none of them one of reads
 * (NULL-terminated, may be NULL). False after a one-line refusal, leaving
 * nothing prepared. */
bool cli_outputs_prepare(cli_outputs *o, const cli_args *a, const char *const *reads);
void cli_outputs_abort(cli_outputs *o);
/* Whether output which (CLI_OUT_*) was asked for. */
bool cli_outputs_wanted(const cli_outputs *o, int which);

/* The first step of every model command (cli/start.c): takes at most one model, prepares
 * the outputs asked for (before anything is measured, so that a bad path
 * fails at once), then opens the model. Returns EXIT_OK or the exit code of
 * the error it printed, leaving nothing open. */
int cli_start(const cli_args *a, cli_outputs *out, ib_workload **w);

/* Sets the model options' memory limits from --memory-cap-mb (both the
 * CUDA arena's and the host's), the host one by default to half of the
 * MemAvailable of /proc/meminfo. Every model command calls it before
 * cli_start. */
void cli_apply_memory_cap(cli_args *a);

/* Opens the workload a names: the model on the backend of --backend (the
 * default without), with the model options and the --option pairs.
 * Prints a one-line error and returns its exit code on failure. */
int cli_open_workload(const cli_args *a, ib_workload **w);

/* The backend a measures with: what --backend named, else the default. */
const ib_backend *cli_backend(const cli_args *a);
/* The model options a opens the model with on its backend (its options
 * and its name), and the model that backend is given (*model: MODEL as
 * given, the default model only for a backend of models). Prints a
 * one-line error and returns its exit code when a gives a model option
 * the backend does not read. */
int cli_model_options(const cli_args *a, ib_model_options *m, const char **model);
/* Resolves --backend NAME or plugin:PATH (loading the plugin) into *b;
 * prints a one-line error and returns its exit code when it cannot. */
int cli_find_backend(const char *name, const ib_backend **b);

/* Alias flags (cli/backend_options.c): every flag a backend declares for
 * one of its options (ib_backend_option_decl.flag), of the built-in
 * backends and the plugin --backend loaded, in the registry's order. */
typedef struct cli_alias {
    const ib_backend *backend;
    const ib_backend_option_decl *decl;
} cli_alias;
#define CLI_MAX_ALIASES 32
/* Alias i, or NULL past the end. */
const cli_alias *cli_alias_get(size_t i);
/* Checks text against the values "a|b|c" the option declares, one line on
 * stderr when it is not one of them; *value: the value to pass on (a
 * declared spelling copied into buf[cap], "yes" for a switch, or text).
 * A range is the caller's to check (cli_option_range). */
bool cli_alias_value(const cli_alias *al, const char *text, char *buf, size_t cap, const char **value);
/* Whether decl's values are a range "LO..HI" of whole numbers: its bounds. */
bool cli_option_range(const ib_backend_option_decl *decl, long long *lo, long long *hi);
/* Lowers the ASCII letters of s in place. */
void cli_lower_case(char *s);
/* "exhaustive|heuristic|default", "N", "PATH": how the help shows the
 * values of decl, into buf[cap]; "" for a switch. */
void cli_option_syntax(const ib_backend_option_decl *decl, char *buf, size_t cap);
/* The options the environment sets (ib_backend_option_decl.env): those of
 * the whole process configured on their backend, the others of a's backend
 * put before the options given (which win). False after a one-line error. */
bool cli_apply_environment(cli_args *a);
/* The value a gives key (the last one), or NULL. */
const char *cli_option_given(const cli_args *a, const char *key);

/* Splits "KEY=VALUE" into a's next backend option (KEY non-empty). */
bool cli_add_backend_option(cli_args *a, const char *text);
/* A flag that is a backend setting (--threads 2: threads=2), added to the
 * same list after the --option given before it. value must outlive a. */
bool cli_set_backend_option(cli_args *a, const char *flag, const char *key, const char *value);

/* "NAME, NAME...": the registered backends' names, for messages. */
void cli_backend_names(char *buf, size_t cap);

int cmd_backends(cli_args *a);

/* The last step of every measuring command: whatever was measured is shown
 * and saved, also after a failure. Prints r's text report (on stderr when
 * an output is standard output), writes r to each output asked for in its
 * format (ib_report; r NULL when nothing was measured: no file is
 * written), then the error for st. Returns the exit code. */
int cli_report(cli_outputs *out, const ib_result *r, ib_status st, const ib_error *err);

/* Sessions (cli/sessions.c). True when a asks for the measurement to be
 * repeated in fresh processes. */
bool cli_sessions_wanted(const cli_args *a);
/* Runs the measurement of a in a->sessions fresh processes (each this
 * program again, as a session), merges what they wrote and reports it as
 * the command would; returns the exit code. */
int cli_run_sessions(cli_args *a, ib_result_kind command);
/* In a session's process: its result goes to the file its parent owns, no
 * report, no progress line, no HTML. Also the test hook
 * INFERBENCH_TEST_CRASH_SESSION=K (session K ends by SIGKILL). */
void cli_session_child_setup(cli_args *a);
/* Takes the hidden trailing "--session-child K:PATH" (best's finals:
 * "K/C:PATH", candidate C) off argv (*argc shrinks); false with a one-line
 * error when it is malformed. */
bool cli_take_session_child(int *argc, char **argv, int *index, int *candidate, const char **path);
/* A fresh folder for sessions' files under $TMPDIR (or /tmp), into dir;
 * false when it cannot be made. The caller removes it with
 * cli_sessions_dir_remove, which also deletes what sessions left there. */
bool cli_sessions_dir(char *dir, size_t cap);
void cli_sessions_dir_remove(const char *dir);
/* best's finals: session k of candidate (1-based) of a, the program
 * started again as "best ... --session-child K/C:PATH", its latency JSON
 * into *doc (malloc'ed, *len bytes). IB_ERR_INTERRUPTED on SIGINT or
 * SIGTERM (the session ended), IB_ERR_RUNTIME when the session failed:
 * err says its exit status and last line. */
ib_status cli_run_candidate_session(const cli_args *a, const char *dir, size_t k, size_t candidate,
                                    char **doc, size_t *len, ib_error *err);

/* The calibration record of between-session spreads (cli/spread.c,
 * docs/compare.md): in $XDG_STATE_HOME/inferbench/spread.json (or
 * ~/.local/state/...). cli_spread_record_add adds a latency result of 2 or
 * more sessions to it (a warning when it cannot). */
void cli_spread_record_add(const ib_latency_file *f);
/* What the record says of f's kind (ib_spread_record_find): true with
 * *between_sd, the sessions and results it pools and the record's path
 * when it has an entry; false when there is none, no record, or a record
 * that cannot be read (a warning then). */
bool cli_spread_record_find(const ib_latency_file *f, double *between_sd, size_t *sessions, size_t *results,
                            char *path, size_t cap);

/* --require-idle-gpu (cli/idle_gpu.c). Before measuring: EXIT_OK when the
 * GPU has no other compute process (self_on_gpu: this process holds a
 * context there), else the exit code of the one-line error printed (2).
 * After: st, or IB_ERR_RUNTIME with the message in err when other
 * processes were seen during the measurement (env). */
int cli_require_idle_gpu(const cli_args *a, bool self_on_gpu);
ib_status cli_idle_gpu_after(const cli_args *a, const ib_env *env, ib_status st, ib_error *err);

/* The outputs of a model command (cli_outputs_prepare), checked against
 * the files it reads; EXIT_OK or the exit code of the error printed. */
int cli_prepare_outputs(const cli_args *a, cli_outputs *out);

int cmd_latency(cli_args *a);
int cmd_throughput(cli_args *a);
int cmd_zoo_list(cli_args *a);
int cmd_zoo_export(cli_args *a);
int cmd_calibrate(cli_args *a);
int cmd_pitfalls(cli_args *a);
int cmd_info(cli_args *a);
int cmd_compare(cli_args *a);
int cmd_convert(cli_args *a);
int cmd_best(cli_args *a);
int cmd_generate(cli_args *a);

/* Accuracy beside speed: when the arithmetic in effect of w (opened from
 * a) is not fp32, compares its outputs with strict fp32 into *acc (zeroed
 * otherwise). Prints the error and returns its exit code on failure. */
int cli_accuracy(const cli_args *a, ib_workload *w, ib_accuracy *acc);
int cmd_serve(cli_args *a);

/* A fleet (cli/fleet.c): true when a asks for several devices at once
 * (--devices) or this process is an MPI rank (the launcher's environment). */
bool cli_fleet_wanted(const cli_args *a);
/* Measures the fleet (kind: IB_RESULT_LATENCY or IB_RESULT_THROUGHPUT at
 * batch, 0: the model's) and reports it; returns the exit code. */
int cli_run_fleet(cli_args *a, ib_result_kind kind, int64_t batch);
/* serve --devices (cli/fleet.c): `instances` copies of the model on each
 * device, a->serve's rates the host's; the report of every device. */
int cli_run_fleet_serve(cli_args *a, size_t instances);

#endif
