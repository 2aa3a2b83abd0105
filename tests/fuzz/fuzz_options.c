/* Fuzz target: the option parser of every command. The input is split into
 * argument words on NUL or newline (at most 32) and handed to cli_parse as
 * the argv of a command that takes every group of options. cli_parse must
 * never exit or crash; what it accepts must be a configuration the library
 * accepts too (so that no option combination fails only after the model
 * was loaded). */
#include "fuzz.h"
#include "cli.h"
#include "core/latency.h"

#include <string.h>

#define MAX_WORDS 32

static int no_run(cli_args *a)
{
    (void)a;
    return 0;
}

static const cli_command every_group = {
    "fuzz",
    "[MODEL] [options]",
    "Every option group.",
    "every option group",
    OPT_MODEL | OPT_BATCH | OPT_DEVICE_ID | OPT_MEASURE | OPT_ADAPTIVE | OPT_LAUNCH | OPT_JSON | OPT_HTML |
        OPT_THROUGHPUT | OPT_EXPORT | OPT_COMPARE | OPT_QUIET | OPT_MATH | OPT_ACCURACY,
    no_run,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        /* --help prints the help on stdout: noise, not a finding. */
        quiet = freopen("/dev/null", "w", stdout) != NULL;
    }
    /* Every word its own allocation, so that a read past a word's end or
     * of a word after cli_parse returned is caught by AddressSanitizer. */
    char *argv[MAX_WORDS + 2];
    int argc = 0;
    argv[argc++] = strdup("fuzz");
    size_t start = 0;
    for (size_t i = 0; i <= size && argc < MAX_WORDS + 1; i++) {
        if (i < size && data[i] != '\0' && data[i] != '\n') continue;
        size_t len = i - start;
        char *word = malloc(len + 1);
        if (!word) break;
        memcpy(word, data + start, len);
        word[len] = '\0';
        argv[argc++] = word;
        start = i + 1;
    }
    argv[argc] = NULL;
    char *owned[MAX_WORDS + 2];
    memcpy(owned, argv, sizeof owned); /* getopt_long permutes argv */

    cli_args a;
    cli_parse_result r = cli_parse(&every_group, argc, argv, &a);
    if (r == CLI_PARSED) {
        FUZZ_ASSERT(a.n_pos >= 0 && a.n_pos <= 4 && a.model != NULL);
        FUZZ_ASSERT(a.model_opts.batch >= 0 && a.model_opts.n_shapes <= IB_MAX_TENSORS);
        FUZZ_ASSERT(a.max_batch >= 1);
        ib_error err;
        ib_status st = ib__config_validate(&a.cfg, &err);
        if (st != IB_OK) {
            fprintf(stderr, "accepted by cli_parse, refused by the library: %s\n", err.message);
            abort();
        }
    }
    for (int i = 0; i < argc; i++) free(owned[i]);
    return 0;
}
