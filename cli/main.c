/* inferbench: measure deep-network inference correctly.
 *
 *   inferbench                      latency of the default model (zoo:efficientnet-b0)
 *   inferbench latency MODEL        latency distribution of one forward pass
 *   inferbench throughput MODEL     best batch, inputs/s and the whole curve
 *   inferbench pitfalls MODEL       what classic timing mistakes would report
 *   inferbench best MODEL           the fastest configuration that stays accurate
 *   inferbench serve MODEL          latency under load, the highest rate within a target
 *   inferbench generate MODEL       TTFT, time per token, sequences decoded together (GGUF)
 *   inferbench calibrate            the tool's own accuracy on known kernels
 *   inferbench compare A.json B.json  is B really faster or slower than A?
 *   inferbench zoo list|export      the built-in models
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const cli_command commands[] = {
    { "latency", "[MODEL] [options]", "Latency of one forward pass as a distribution, timed correctly.",
      "Latency of one forward pass as a distribution: device-timed, warmed up, device-resident data.\n"
      "MODEL is an .onnx file or zoo:NAME (default " CLI_DEFAULT_MODEL ").",
      OPT_MODEL | OPT_FORWARD | OPT_BATCH | OPT_DEVICE_ID | OPT_MEASURE | OPT_ADAPTIVE | OPT_LAUNCH |
          OPT_JSON | OPT_HTML | OPT_QUIET | OPT_SESSIONS | OPT_MATH | OPT_ACCURACY | OPT_FLEET,
      cmd_latency },
    { "throughput", "[MODEL] [options]", "Best batch and inputs/s over the whole batch curve.",
      "Best batch, inputs/s and the whole batch curve: the largest batch that fits is searched, candidates "
      "timed back-to-back.",
      OPT_MODEL | OPT_FORWARD | OPT_DEVICE_ID | OPT_MEASURE | OPT_LAUNCH | OPT_JSON | OPT_HTML |
          OPT_THROUGHPUT | OPT_QUIET | OPT_MATH | OPT_ACCURACY | OPT_FLEET | OPT_SESSIONS,
      cmd_throughput },
    { "pitfalls", "[MODEL] [options]", "What each classic timing mistake would report on this model.",
      "What each classic timing mistake would report on this model, next to the correct latency.\n"
      "Rows: host clock without synchronization, copies included, no warm-up, a single run,\n"
      "zero-filled input, TF32 taken for fp32.",
      OPT_MODEL | OPT_FORWARD | OPT_BATCH | OPT_DEVICE_ID | OPT_MEASURE | OPT_ADAPTIVE | OPT_LAUNCH |
          OPT_JSON | OPT_HTML | OPT_QUIET | OPT_MATH | OPT_SESSIONS,
      cmd_pitfalls },
    { "best", "[MODEL] [options]", "The fastest configuration that stays accurate.",
      "The fastest configuration that stays accurate: --math fp32/tf32/fp16/bf16 and the options the\n"
      "backend declares to race (inferbench backends), raced at batch 1 and at the throughput peak, each\n"
      "judged against strict fp32 (docs/best.md). A generative model (a GGUF file or zoo:NAME): flash\n"
      "attention, the KV cache's type and n_ubatch, raced by each run's TPOT (--objective ttft: TTFT).",
      OPT_MODEL | OPT_FORWARD | OPT_DEVICE_ID | OPT_MEASURE | OPT_ADAPTIVE | OPT_JSON | OPT_HTML | OPT_QUIET |
          OPT_MATH | OPT_ACCURACY | OPT_BEST | OPT_GEN_RUN,
      cmd_best },
    { "generate", "MODEL [options]", "Time to first token and every later token of a generative model.",
      "A generative model token by token (llama.cpp, a GGUF file or zoo:NAME): time to first token,\n"
      "every token's latency at a depth, tokens/s as tokens / time, sequences decoded together and the\n"
      "most whose KV cache fits; --pitfalls: what each classic mistake reports (docs/generate.md).",
      OPT_MODEL | OPT_DEVICE_ID | OPT_MEASURE | OPT_ADAPTIVE | OPT_JSON | OPT_HTML | OPT_QUIET | OPT_GEN |
          OPT_GEN_RUN | OPT_SESSIONS,
      cmd_generate },
    { "calibrate", "[client] [options]", "The tool's own accuracy on kernels of known duration.",
      "The tool's own accuracy on this GPU: spin kernels of known duration (5 us to 100 ms) timed\n"
      "by the measurement loop, with and without launch overhead, plus the harness overhead and\n"
      "the timer's resolution.\n"
      "calibrate client: the HTTP client's (serve --endpoint) own error against a scripted server\n"
      "on loopback, at rising rates, and the load it stays accurate to (docs/script-server.md),\n"
      "kept for every serve --endpoint to state (INFERBENCH_CLIENT_CALIBRATION, else\n"
      "~/.cache/inferbench/client-calibration.json).",
      OPT_DEVICE_ID | OPT_MEASURE | OPT_JSON | OPT_QUIET, cmd_calibrate },
    { "compare", "BASELINE.json CANDIDATE.json [options]",
      "Whether result B is really faster or slower than result A.",
      "Is B really faster or slower than A? Two results of latency --json compared statistically:\n"
      "the median's change with its 95% bootstrap CI, the Mann-Whitney U test, and a verdict\n"
      "(faster, slower, no change, inconclusive) against --threshold. Exit 3 with --fail-if-slower\n"
      "when B is slower.",
      OPT_COMPARE | OPT_JSON, cmd_compare },
    { "serve", "[MODEL] [options]", "Latency under load, and the highest rate that meets a target.",
      "Latency under load: requests arrive on a seeded schedule (open loop) and each one's latency runs\n"
      "from its scheduled arrival; --slo-p99-ms T searches the highest rate that meets T (docs/serve.md).\n"
      "A generative model (MODEL.gguf, zoo:llama-*) is served by continuous batching: TTFT, TPOT, every\n"
      "gap and goodput from the schedule (--slots, --prefill-chunk, --slo-ttft-ms; "
      "docs/serve-generative.md).",
      OPT_MODEL | OPT_FORWARD | OPT_DEVICE_ID | OPT_JSON | OPT_HTML | OPT_QUIET | OPT_SERVE | OPT_DEVICES |
          OPT_GEN_RUN | OPT_SESSIONS,
      cmd_serve },
    { "info", "[--device-id N]", "What this machine offers: runtimes, CPU, GPU, driver, clocks.",
      "What this machine offers: the backends' runtimes, CPU, GPU, driver, clocks. Exits 1 without a usable "
      "GPU.",
      OPT_DEVICE_ID, cmd_info },
    { "backends", "", "List the backends --backend can name.",
      "List the backends --backend can name (plugins: --backend plugin:PATH.so).", 0, cmd_backends },
    { "convert", "MODEL --math fp16|bf16 -o FILE.onnx", "Write the model converted to fp16 or bf16.",
      "Write the model converted to fp16 or bf16 (what --math fp16/bf16 measures; docs/precision.md).",
      OPT_MATH | OPT_EXPORT, cmd_convert },
    { "zoo-list", "", "List the built-in models.", "List the built-in models.", 0, cmd_zoo_list },
    { "zoo-export", "NAME -o FILE.onnx [--fp16] | NAME[?TYPE] -o FILE.gguf",
      "Write a built-in model as a file.",
      "Write a built-in model as an ONNX file, or a generative one as a GGUF file.", OPT_EXPORT,
      cmd_zoo_export },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* One line per command whose name starts with prefix: its brief, whole (the
 * summary is the command's own --help). */
static void list_commands(FILE *f, const char *prefix)
{
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strncmp(commands[i].name, prefix, strlen(prefix))) continue;
        char name[32];
        snprintf(name, sizeof name, "%s", commands[i].name);
        char *dash = strchr(name, '-'); /* zoo-list is typed "zoo list" */
        if (dash) *dash = ' ';
        fprintf(f, "  %-12s %s\n", name, commands[i].brief);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: inferbench [COMMAND] [MODEL] [options]\n\ncommands:\n");
    list_commands(f, "");
    fprintf(f,
            "\nWith no command: latency of %s on the GPU if there is one, else the CPU.\n"
            "inferbench COMMAND --help for a command's options.\n",
            CLI_DEFAULT_MODEL);
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

static bool is_help(const char *arg)
{
    return !strcmp(arg, "--help") || !strcmp(arg, "-h") || !strcmp(arg, "help");
}

/* "zoo SUBCOMMAND ...": the command zoo-SUBCOMMAND, or NULL with the exit
 * code in *code (the help shown, or an error printed). */
static const cli_command *find_zoo_command(int argc, char **argv, int *code)
{
    if (argc >= 3 && is_help(argv[2])) {
        printf(
            "usage: inferbench zoo list | zoo export NAME -o FILE.onnx [--fp16] | zoo export NAME[?TYPE] -o "
            "FILE.gguf\n\nsubcommands:\n");
        list_commands(stdout, "zoo-");
        *code = EXIT_OK;
        return NULL;
    }
    *code = EXIT_BAD_INPUT;
    if (argc < 3 || argv[2][0] == '-') {
        fprintf(stderr, "inferbench: zoo needs a subcommand: list or export (inferbench zoo --help)\n");
        return NULL;
    }
    char joined[64];
    snprintf(joined, sizeof joined, "zoo-%s", argv[2]);
    const cli_command *cmd = strlen(argv[2]) < 32 ? find_command(joined) : NULL;
    if (!cmd) fprintf(stderr, "inferbench: unknown zoo subcommand '%s' (list or export)\n", argv[2]);
    return cmd;
}

/* The hidden --list-options: every command against every option, for the
 * tests that check the refusals and the help against the table. */
static void list_options(void)
{
    for (size_t i = 0; i < N_COMMANDS; i++) cli_list_options(&commands[i], stdout);
}

static int run_program(int argc, char **argv)
{
    if (argc >= 2 && is_help(argv[1])) {
        usage(stdout);
        return EXIT_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "--list-options")) {
        list_options();
        return EXIT_OK;
    }
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("inferbench %s\n", IB_VERSION_STRING);
        return EXIT_OK;
    }
    if (argc >= 2 && !strcmp(argv[1], "script-server")) return cmd_script_server(argc - 2, argv + 2);
    int session_index = 0, session_candidate = 0;
    const char *session_result = NULL;
    if (!cli_take_session_child(&argc, argv, &session_index, &session_candidate, &session_result))
        return EXIT_BAD_INPUT;
    /* No command, or options only: the default job. */
    const char *name = argc >= 2 && argv[1][0] != '-' ? argv[1] : "latency";
    int shift = argc >= 2 && argv[1][0] != '-' ? 1 : 0;
    const cli_command *cmd;
    if (!strcmp(name, "zoo")) {
        int code;
        cmd = find_zoo_command(argc, argv, &code);
        if (!cmd) return code;
        shift = 2;
    } else {
        cmd = find_command(name);
    }
    if (!cmd && (!strncmp(name, "zoo:", 4) || strstr(name, ".onnx"))) {
        cmd = find_command("latency"); /* inferbench MODEL: the default job on it */
        shift = 0;
    }
    if (!cmd) {
        fprintf(stderr, "inferbench: unknown command '%s' (inferbench --help lists them)\n", name);
        return EXIT_BAD_INPUT;
    }
    cli_args args;
    switch (cli_parse(cmd, argc - shift, argv + shift, &args)) {
    case CLI_HELP_SHOWN: return EXIT_OK;
    case CLI_BAD_INPUT: return EXIT_BAD_INPUT;
    case CLI_PARSED: break;
    }
    args.argc = argc;
    args.argv = argv;
    args.session_index = session_index;
    args.session_result = session_result;
    args.session_candidate = session_candidate;
    cli_install_signal_handlers();
    /* The options backends read from the environment (docs/cli.md): the
     * program reads it, the library may not. */
    int code = cli_apply_environment(&args) ? cmd->run(&args) : EXIT_BAD_INPUT;
    ib_backend_unload_plugins(); /* after the workloads: their code lives there */
    return code;
}

/* Every command's report may be on standard output: checked once, here. */
int main(int argc, char **argv) { return cli_close_stdout(run_program(argc, argv)); }
