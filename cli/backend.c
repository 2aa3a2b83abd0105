/* Which backend measures the model: --backend NAME (a built-in table, see
 * `inferbench backends`), --backend plugin:PATH.so (or any path with a '/')
 * for an out-of-tree one, with its --option KEY=VALUE settings (ONNX
 * Runtime's flags --threads, --cudnn-search, --prefer-nhwc and --cuda-graph
 * are such settings too). Without --backend the model goes to ONNX Runtime
 * with the model options and those settings, as always. */
#include "cli.h"

#include <string.h>

/* Appends key[0..key_len) = value (which must outlive a: argv or static
 * text); false when the key is too long or the list full. */
static bool put_option(cli_args *a, const char *key, size_t key_len, const char *value)
{
    if (key_len >= sizeof a->option_keys[0] || a->n_options == CLI_MAX_BACKEND_OPTIONS) return false;
    char *copy = a->option_keys[a->n_options];
    memcpy(copy, key, key_len);
    copy[key_len] = '\0';
    a->options[a->n_options++] = (ib_backend_option){ .key = copy, .value = value };
    return true;
}

bool cli_add_backend_option(cli_args *a, const char *text)
{
    const char *eq = strchr(text, '=');
    size_t key_len = eq ? (size_t)(eq - text) : 0;
    if (!eq || key_len == 0) {
        fprintf(stderr, "inferbench: --option '%s': expected KEY=VALUE\n", text);
        return false;
    }
    if (!put_option(a, text, key_len, eq + 1)) {
        fprintf(stderr, "inferbench: --option '%s': too long a key, or more than %d options\n", text,
                CLI_MAX_BACKEND_OPTIONS);
        return false;
    }
    return true;
}

bool cli_set_backend_option(cli_args *a, const char *flag, const char *key, const char *value)
{
    if (put_option(a, key, strlen(key), value)) return true;
    fprintf(stderr, "inferbench: %s: more than %d options\n", flag, CLI_MAX_BACKEND_OPTIONS);
    return false;
}

static bool is_plugin_path(const char *name) { return !strncmp(name, "plugin:", 7) || strchr(name, '/'); }

void cli_backend_names(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ib_backend_count() && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", ib_backend_get(i)->name);
}

static int find_backend(const char *name, const ib_backend **b)
{
    ib_error err = { { 0 } };
    if (is_plugin_path(name)) {
        const char *path = strncmp(name, "plugin:", 7) ? name : name + 7;
        if (ib_backend_load_plugin(path, b, &err) != IB_OK) return cli_fail(IB_ERR_INVALID_ARG, err.message);
        return EXIT_OK;
    }
    *b = ib_backend_find(name);
    if (*b) return EXIT_OK;
    char known[512];
    cli_backend_names(known, sizeof known);
    fprintf(stderr, "inferbench: unknown backend '%s' (known: %s; or plugin:PATH.so)\n", name, known);
    return EXIT_BAD_INPUT;
}

/* The model options that only ONNX Runtime's own path reads. */
static const char *runtime_flag_given(const cli_args *a)
{
    const ib_model_options *m = &a->model_opts;
    ib_model_options defaults;
    ib_model_options_init(&defaults);
    if (m->n_shapes) return "--shape";
    if (m->n_inputs) return "--input";
    if (a->memory_cap_mb) return "--memory-cap-mb";
    if (m->math != IB_MATH_DEFAULT) return "--math";
    if (a->max_error > 0) return "--max-error";
    return NULL;
}

static int open_through_table(const cli_args *a, ib_workload **w)
{
    const ib_backend *b;
    int code = find_backend(a->backend ? a->backend : "onnxruntime", &b);
    if (code != EXIT_OK) return code;
    const char *flag = runtime_flag_given(a);
    if (flag) {
        fprintf(stderr,
                "inferbench: %s applies to the onnxruntime backend without --option; give "
                "backend '%s' its settings as --option KEY=VALUE\n",
                flag, b->name);
        return EXIT_BAD_INPUT;
    }
    ib_backend_open_args args;
    ib_backend_open_args_init(&args);
    args.model = a->n_pos > 0 ? a->pos[0] : NULL;
    args.options = a->options;
    args.n_options = a->n_options;
    args.device = a->model_opts.device;
    args.device_id = a->model_opts.device_id;
    args.batch = a->model_opts.batch > 0 ? a->model_opts.batch : 1; /* 0: --batch not given */
    args.seed = a->model_opts.seed;
    ib_error err = { { 0 } };
    ib_status st = ib_workload_open_backend(b, &args, w, &err);
    return st == IB_OK ? EXIT_OK : cli_fail(st, err.message);
}

int cli_open_workload(const cli_args *a, ib_workload **w)
{
    bool native = !a->backend || !strcmp(a->backend, "onnxruntime");
    if (!native) return open_through_table(a, w);
    ib_model_options m = a->model_opts;
    m.options = a->options;
    m.n_options = a->n_options;
    ib_error err = { { 0 } };
    ib_status st = ib_workload_open_model(a->model, &m, w, &err);
    return st == IB_OK ? EXIT_OK : cli_fail(st, err.message);
}

int cmd_backends(cli_args *a)
{
    if (a->n_pos > 0) return cli_fail(IB_ERR_INVALID_ARG, "backends takes no argument");
    for (size_t i = 0; i < ib_backend_count(); i++)
        printf("%-14s %s\n", ib_backend_get(i)->name, ib_backend_get(i)->description);
    printf("%-14s %s\n", "plugin:PATH", "an out-of-tree backend: a shared object (docs/backends.md)");
    return EXIT_OK;
}
