/* inferbench zoo list | zoo export NAME -o FILE [--fp16]: the ONNX models,
 * and the generative ones as GGUF files (zoo export llama-tiny?q8_0 -o F). */
#include "cli.h"

#include <string.h>
#include <sys/stat.h>

int cmd_zoo_list(cli_args *a)
{
    if (a->n_pos > 0) return cli_fail(IB_ERR_INVALID_ARG, "zoo list takes no argument");
    printf("%-16s %12s %8s %8s  %s\n", "name", "params", "GMACs", "GFLOPs", "inputs -> outputs");
    for (size_t i = 0; i < ib_zoo_count(); i++) {
        const ib_zoo_entry *e = ib_zoo_get(i);
        printf("%-16s %12lld %8.3f %8.3f  %s -> %s\n", e->name, (long long)e->params, e->gmacs_per_item,
               e->gflops_per_item, e->inputs, e->outputs);
    }
    printf("\nper input at the default shape; 1 MAC = 2 FLOPs. Use a model as zoo:NAME (zoo:NAME?fp16\n"
           "for half precision) wherever a model file is taken.\n\n");
    printf("%-16s %14s %6s %6s %9s %6s %8s  %s\n", "generative", "params", "layers", "width", "heads/kv",
           "FFN", "vocab", "GGUF, for llama.cpp");
    for (size_t i = 0; i < ib_zoo_lm_count(); i++) {
        const ib_zoo_lm_entry *e = ib_zoo_lm_get(i);
        char heads[16];
        snprintf(heads, sizeof heads, "%d/%d", e->n_heads, e->n_kv_heads);
        printf("%-16s %14lld %6d %6d %9s %6d %8d  float16; ?q8_0 ?q4_0 ?q4_k_m ?q5_k_m ?q6_k quantized\n",
               e->name, (long long)e->params, e->n_layers, e->n_embd, heads, e->n_ff, e->n_vocab);
    }
    printf("\nrandom weights, fixed seed; written once into the cache (INFERBENCH_ZOO_CACHE, else\n"
           "~/.cache/inferbench/zoo). zoo export NAME -o FILE.gguf writes one.\n");
    return EXIT_OK;
}

/* A generative model, through the llama backend's GGUF writer: the file is
 * made in the cache (or found there, checked) and copied to the path. */
static int export_gguf(const cli_args *a, const char *name)
{
    if (a->fp16)
        return cli_fail(IB_ERR_INVALID_ARG, "--fp16 is for ONNX models: give a GGUF type as NAME?q8_0");
    if (!strcmp(a->output_path, "-"))
        return cli_fail(IB_ERR_INVALID_ARG, "a GGUF model is written to a file, not to standard output");
    char cache[1024];
    if (!cli_zoo_cache_dir(cache, sizeof cache))
        return cli_fail(IB_ERR_IO, "cannot create the zoo's cache folder (set INFERBENCH_ZOO_CACHE)");
    ib_error err = { { 0 } };
    char note[512] = "";
    ib_status st =
        ib_zoo_export_gguf(name, a->output_path, cli_llama_library(), cache, note, sizeof note, &err);
    if (note[0]) fprintf(stderr, "inferbench: %s\n", note); /* said even when the export then failed */
    if (st != IB_OK) return cli_fail(st, err.message);
    struct stat s;
    long long bytes = stat(a->output_path, &s) == 0 ? (long long)s.st_size : -1;
    printf("wrote %s (%lld bytes)\n", a->output_path, bytes);
    return EXIT_OK;
}

int cmd_zoo_export(cli_args *a)
{
    if (a->n_pos != 1) return cli_fail(IB_ERR_INVALID_ARG, "zoo export takes one model name (see zoo list)");
    if (!a->output_path) return cli_fail(IB_ERR_INVALID_ARG, "zoo export needs -o FILE.onnx (FILE.gguf)");
    const char *name = a->pos[0];
    if (!strncmp(name, "zoo:", 4)) name += 4;
    if (ib_zoo_lm_find(name)) return export_gguf(a, name);
    cli_output out;
    if (!cli_output_prepare(&out, "-o", a->output_path, NULL, NULL)) return EXIT_BAD_INPUT;
    /* The model on standard output (-o -): the message goes to stderr. */
    FILE *said = cli_output_is_stdout(&out) ? stderr : stdout;
    uint8_t *bytes = NULL;
    size_t len = 0;
    ib_error err = { { 0 } };
    ib_status st = ib_zoo_build(name, a->fp16, &bytes, &len, &err);
    if (st != IB_OK) {
        cli_output_abort(&out);
        return cli_fail(st, err.message);
    }
    bool written = cli_output_commit_bytes(&out, bytes, len);
    ib_free(bytes);
    if (!written) return EXIT_RUN_FAILED;
    fprintf(said, "wrote %s (%zu bytes)\n", a->output_path, len);
    return EXIT_OK;
}
