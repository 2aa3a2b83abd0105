/* Which backend measures the model: --backend NAME (a built-in table, see
 * `inferbench backends`), --backend plugin:PATH.so (or any path with a '/')
 * for an out-of-tree one, with its --option KEY=VALUE settings (the alias
 * flags its options declare are such settings too). Without --backend the
 * model goes to the registry's default backend. */
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

/* The plugin loaded last, by the path it was named with: --backend is read
 * twice (before parsing, for its alias flags, and as an option). */
static char loaded_path[4096];
static const ib_backend *loaded;

static int load_plugin(const char *name, const ib_backend **b)
{
    const char *path = strncmp(name, "plugin:", 7) ? name : name + 7;
    if (loaded && !strcmp(path, loaded_path)) {
        *b = loaded;
        return EXIT_OK;
    }
    ib_error err = { { 0 } };
    if (ib_backend_load_plugin(path, b, &err) != IB_OK) return cli_fail(IB_ERR_INVALID_ARG, err.message);
    snprintf(loaded_path, sizeof loaded_path, "%s", path);
    loaded = *b;
    return EXIT_OK;
}

int cli_find_backend(const char *name, const ib_backend **b)
{
    if (is_plugin_path(name)) return load_plugin(name, b);
    *b = ib_backend_find(name);
    if (*b) return EXIT_OK;
    const char *why = ib_backend_absent(name); /* built in, but not in this build */
    if (why) return cli_fail(IB_ERR_UNSUPPORTED, why);
    char known[512];
    cli_backend_names(known, sizeof known);
    fprintf(stderr, "inferbench: unknown backend '%s' (known: %s; or plugin:PATH.so)\n", name, known);
    return EXIT_BAD_INPUT;
}

/* The model options a backend of no models cannot be given, as flags. */
static const char *model_flag_given(const cli_args *a)
{
    const ib_model_options *m = &a->model_opts;
    if (m->n_shapes) return "--shape";
    if (m->n_inputs) return "--input";
    if (a->memory_cap_mb) return "--memory-cap-mb";
    if (m->math != IB_MATH_DEFAULT) return "--math";
    if (a->max_error > 0) return "--max-error";
    return NULL;
}

int cli_model_options(const cli_args *a, ib_model_options *m, const char **model)
{
    const ib_backend *b = cli_backend(a);
    *m = a->model_opts;
    m->options = a->options;
    m->n_options = a->n_options;
    m->backend = b ? b->name : NULL;
    *model = a->model;
    if (!b || ib_backend_takes_model_options(b)) return EXIT_OK;
    const char *flag = model_flag_given(a);
    if (flag) {
        fprintf(stderr,
                "inferbench: %s applies to a backend of models; give backend '%s' its settings as --option "
                "KEY=VALUE\n",
                flag, b->name);
        return EXIT_BAD_INPUT;
    }
    /* Its own model argument, or none: no default model; no memory caps. */
    *model = a->n_pos > 0 ? a->pos[0] : NULL;
    m->device_memory_limit_bytes = m->host_memory_limit_bytes = 0;
    return EXIT_OK;
}

int cli_open_workload(const cli_args *a, ib_workload **w)
{
    ib_model_options m;
    const char *model;
    int code = cli_model_options(a, &m, &model);
    if (code != EXIT_OK) return code;
    ib_error err = { { 0 } };
    ib_status st = ib_workload_open_model(model, &m, w, &err);
    return st == IB_OK ? EXIT_OK : cli_fail(st, err.message);
}

/* Appends a note, prefix then value, to notes (n characters so far),
 * after ", " unless it is the first; lower-cased when lower (a race's
 * values are written as the backend spells them). */
static void add_note(char *notes, size_t size, size_t *n, const char *prefix, const char *value, bool lower)
{
    if (*n >= size) return;
    size_t at = *n;
    *n += (size_t)snprintf(notes + at, size - at, "%s%s%s", at ? ", " : "", prefix, value);
    if (lower) cli_lower_case(notes + at);
}

/* One declared option of a backend, as `inferbench backends` lists it:
 * "  key=SYNTAX  help [--flag, $ENV, CUDA only, best races a|b, serve
 * --best races c|d]". */
static void print_option(const ib_backend_option_decl *d)
{
    char left[64], notes[192] = "";
    snprintf(left, sizeof left, "%s=%s", d->key, d->values ? d->values : "VALUE");
    if (strchr(left, '|')) cli_lower_case(left);
    size_t n = 0;
    if (d->flag) add_note(notes, sizeof notes, &n, "--", d->flag, false);
    if (d->env) add_note(notes, sizeof notes, &n, "$", d->env, false);
    if (d->flags & IB_OPTION_CUDA_ONLY) add_note(notes, sizeof notes, &n, "CUDA only", "", false);
    if (d->race) add_note(notes, sizeof notes, &n, "best races ", d->race, true);
    if (d->serve_race) add_note(notes, sizeof notes, &n, "serve --best races ", d->serve_race, true);
    printf("    %-30s %s%s%s%s\n", left, d->help, notes[0] ? " [" : "", notes, notes[0] ? "]" : "");
}

int cmd_backends(cli_args *a)
{
    if (a->n_pos > 0) return cli_fail(IB_ERR_INVALID_ARG, "backends takes no argument");
    for (size_t i = 0; i < ib_backend_count(); i++) {
        const ib_backend *b = ib_backend_get(i);
        printf("%-14s %s%s\n", b->name, b->description, b == ib_backend_default() ? " (the default)" : "");
        for (size_t k = 0; k < b->n_options; k++) print_option(&b->options[k]);
    }
    printf("%-14s %s\n", "plugin:PATH", "an out-of-tree backend: a shared object (docs/backends.md)");
    printf("\ngenerative models (inferbench generate --backend NAME):\n");
    for (size_t i = 0; i < ib_gen_backend_count(); i++) {
        const ib_gen_backend *b = ib_gen_backend_get(i);
        printf("%-14s %s%s\n", b->name, b->description, i == 0 ? " (the default)" : "");
        for (size_t k = 0; k < b->n_options; k++) print_option(&b->options[k]);
    }
    return EXIT_OK;
}
