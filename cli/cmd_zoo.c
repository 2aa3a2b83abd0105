/* inferbench zoo list | zoo export NAME -o FILE [--fp16] */
#include "cli.h"

#include <string.h>

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
           "for half precision) wherever a model file is taken.\n");
    return EXIT_OK;
}

int cmd_zoo_export(cli_args *a)
{
    if (a->n_pos != 1) return cli_fail(IB_ERR_INVALID_ARG, "zoo export takes one model name (see zoo list)");
    if (!a->output_path) return cli_fail(IB_ERR_INVALID_ARG, "zoo export needs -o FILE.onnx");
    const char *name = a->pos[0];
    if (!strncmp(name, "zoo:", 4)) name += 4;
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
