/* inferbench convert MODEL --math fp16|bf16 -o FILE.onnx: the model as
 * --math fp16/bf16 measures it, written for the user to inspect. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The model's bytes: a file read whole, or a zoo model built
 * ("zoo:NAME", "zoo:NAME?fp16"). */
static ib_status load(const char *model, uint8_t **bytes, size_t *len, ib_error *err)
{
    if (!strncmp(model, "zoo:", 4)) {
        char name[128];
        const char *q = strchr(model + 4, '?');
        size_t n = q ? (size_t)(q - model - 4) : strlen(model + 4);
        if (n >= sizeof name || (q && strcmp(q, "?fp16") != 0)) {
            snprintf(err->message, sizeof err->message, "model '%s': expected zoo:NAME or zoo:NAME?fp16",
                     model);
            return IB_ERR_INVALID_ARG;
        }
        memcpy(name, model + 4, n);
        name[n] = '\0';
        return ib_zoo_build(name, q != NULL, bytes, len, err);
    }
    FILE *f = fopen(model, "rb");
    if (!f) {
        snprintf(err->message, sizeof err->message, "cannot open model '%s': %s", model, strerror(errno));
        return IB_ERR_IO;
    }
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    ib_status st = IB_OK;
    *bytes = size > 0 && size <= INT32_MAX && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)size) : NULL;
    if (!*bytes || fread(*bytes, 1, (size_t)size, f) != (size_t)size) {
        snprintf(err->message, sizeof err->message, "cannot read model '%s'%s", model,
                 size == 0 ? " (0 bytes)" : "");
        st = size == 0 ? IB_ERR_MODEL : IB_ERR_IO;
        free(*bytes);
        *bytes = NULL;
    }
    fclose(f);
    *len = (size_t)size;
    return st;
}

int cmd_convert(cli_args *a)
{
    if (a->n_pos != 1) return cli_fail(IB_ERR_INVALID_ARG, "convert takes one model (a file or zoo:NAME)");
    ib_math math = a->fp16 ? IB_MATH_FP16 : a->model_opts.math;
    if (math != IB_MATH_FP16 && math != IB_MATH_BF16)
        return cli_fail(IB_ERR_INVALID_ARG, "convert needs --math fp16 or --math bf16");
    if (!a->output_path) return cli_fail(IB_ERR_INVALID_ARG, "convert needs -o FILE.onnx");
    const char *reads[] = { a->model, NULL };
    cli_output out;
    if (!cli_output_prepare(&out, "-o", a->output_path, reads, NULL)) return EXIT_BAD_INPUT;
    FILE *said = cli_output_is_stdout(&out) ? stderr : stdout;
    uint8_t *bytes = NULL, *converted = NULL;
    size_t len = 0, converted_len = 0;
    ib_error err = { { 0 } };
    ib_convert_info info;
    ib_status st = load(a->model, &bytes, &len, &err);
    if (st == IB_OK) st = ib_onnx_convert(bytes, len, math, &converted, &converted_len, &info, &err);
    free(bytes);
    if (st != IB_OK) {
        cli_output_abort(&out);
        return cli_fail(st, err.message);
    }
    bool written = cli_output_commit_bytes(&out, converted, converted_len);
    ib_free(converted);
    if (!written) return EXIT_RUN_FAILED;
    if (info.unchanged)
        fprintf(said, "wrote %s (%zu bytes): the model has no float32 to convert, written as is\n",
                a->output_path, converted_len);
    else
        fprintf(said,
                "wrote %s (%zu bytes, %s): %zu initializers and %zu constants converted, %zu nodes kept in "
                "float32, %zu subgraphs, %zu Casts added, %zu removed\n",
                a->output_path, converted_len, ib_math_name(math), info.initializers, info.constants,
                info.blocked_nodes, info.subgraphs, info.casts_added, info.casts_removed);
    return EXIT_OK;
}
