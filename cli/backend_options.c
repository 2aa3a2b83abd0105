/* What backends declare of their options (include/inferbench_backend.h,
 * ib_backend_option_decl), turned into the program's flags: the alias
 * flags (--threads N is --option threads=N), their value checks, the help's
 * syntax, and the environment variables that set options. The program
 * names no backend's option itself: it reads the registry. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Whether an earlier backend declared alias flag already (the first wins). */
static bool flag_taken(size_t before_backend, const char *flag)
{
    for (size_t i = 0; i < before_backend; i++) {
        const ib_backend *b = ib_backend_get(i);
        for (size_t k = 0; k < b->n_options; k++)
            if (b->options[k].flag && !strcmp(b->options[k].flag, flag)) return true;
    }
    return false;
}

const cli_alias *cli_alias_get(size_t index)
{
    static cli_alias alias;
    size_t n = 0;
    for (size_t i = 0; i < ib_backend_count(); i++) {
        const ib_backend *b = ib_backend_get(i);
        for (size_t k = 0; k < b->n_options; k++) {
            const ib_backend_option_decl *d = &b->options[k];
            if (!d->flag || !*d->flag || flag_taken(i, d->flag)) continue;
            if (n++ < index) continue;
            alias = (cli_alias){ b, d };
            return n <= CLI_MAX_ALIASES ? &alias : NULL;
        }
    }
    return NULL;
}

void cli_lower_case(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z') *s = (char)(*s - 'A' + 'a');
}

bool cli_option_range(const ib_backend_option_decl *decl, long long *lo, long long *hi)
{
    const char *values = decl->values;
    char *end;
    if (!values) return false;
    *lo = strtoll(values, &end, 10);
    if (end == values || strncmp(end, "..", 2)) return false;
    const char *rest = end + 2;
    *hi = strtoll(rest, &end, 10);
    return end != rest && !*end;
}

static bool is_list(const char *values) { return values && strchr(values, '|'); }

void cli_option_syntax(const ib_backend_option_decl *decl, char *buf, size_t cap)
{
    long long lo, hi;
    buf[0] = '\0';
    if (decl->flags & IB_OPTION_SWITCH) return;
    if (cli_option_range(decl, &lo, &hi)) {
        snprintf(buf, cap, "N");
        return;
    }
    snprintf(buf, cap, "%s", decl->values ? decl->values : "VALUE");
    if (is_list(decl->values)) cli_lower_case(buf); /* matched without regard to case */
}

/* "a, b or c" of the declared "A|B|C", in lower case, into buf[cap]. */
static void list_values(const char *values, char *buf, size_t cap)
{
    size_t n = 0, count = 1;
    for (const char *p = values; *p; p++) count += *p == '|';
    buf[0] = '\0';
    for (const char *p = values; *p && n + 8 < cap;) {
        size_t len = strcspn(p, "|");
        n += (size_t)snprintf(buf + n, cap - n, "%.*s", (int)len, p);
        p += len + (p[len] == '|');
        count--;
        if (*p) n += (size_t)snprintf(buf + n, cap - n, count == 1 ? " or " : ", ");
    }
    cli_lower_case(buf);
}

/* text as one of the declared "A|B|C" (without regard to case): the
 * declared spelling into buf[cap]; false when none. */
static bool match_value(const char *values, const char *text, char *buf, size_t cap)
{
    for (const char *p = values; *p;) {
        size_t len = strcspn(p, "|");
        if (len == strlen(text) && !strncasecmp(p, text, len) && len < cap) {
            memcpy(buf, p, len);
            buf[len] = '\0';
            return true;
        }
        p += len + (p[len] == '|');
    }
    return false;
}

bool cli_alias_value(const cli_alias *al, const char *text, char *buf, size_t cap, const char **value)
{
    const ib_backend_option_decl *d = al->decl;
    *value = text;
    if (d->flags & IB_OPTION_SWITCH) {
        *value = "yes";
        return true;
    }
    if (!is_list(d->values)) return true;
    if (match_value(d->values, text, buf, cap)) {
        *value = buf;
        return true;
    }
    char expected[256];
    list_values(d->values, expected, sizeof expected);
    fprintf(stderr, "inferbench: --%s '%s': expected %s\n", d->flag, text, expected);
    return false;
}

/* Here, below backend.c and options.c (which call it): the backend whose
 * declarations a's options and environment variables are read by. */
const ib_backend *cli_backend(const cli_args *a)
{
    return a->backend_table ? a->backend_table : ib_backend_default();
}

const char *cli_option_given(const cli_args *a, const char *key)
{
    const char *value = NULL;
    for (size_t i = 0; i < a->n_options; i++)
        if (!strcmp(a->options[i].key, key)) value = a->options[i].value;
    return value;
}

/* Puts key=value before the options given, so that those win. */
static bool put_first(cli_args *a, const char *key, const char *value)
{
    if (strlen(key) >= sizeof a->option_keys[0] || a->n_options == CLI_MAX_BACKEND_OPTIONS) {
        fprintf(stderr, "inferbench: %s=%s: more than %d options\n", key, value, CLI_MAX_BACKEND_OPTIONS);
        return false;
    }
    memmove(&a->option_keys[1], &a->option_keys[0], a->n_options * sizeof a->option_keys[0]);
    memmove(&a->options[1], &a->options[0], a->n_options * sizeof a->options[0]);
    a->n_options++;
    for (size_t i = 1; i < a->n_options; i++) a->options[i].key = a->option_keys[i];
    snprintf(a->option_keys[0], sizeof a->option_keys[0], "%s", key);
    a->options[0] = (ib_backend_option){ .key = a->option_keys[0], .value = value };
    return true;
}

/* One declared environment variable: set for the process on its backend,
 * or an option of a's backend. */
static bool apply_variable(cli_args *a, const ib_backend *b, const ib_backend_option_decl *d,
                           const char *value)
{
    if (d->flags & IB_OPTION_PROCESS) {
        ib_error err = { { 0 } };
        if (ib_backend_configure(b, d->key, value, &err) == IB_OK) return true;
        fprintf(stderr, "inferbench: %s: %s\n", d->env, err.message);
        return false;
    }
    return b != cli_backend(a) || put_first(a, d->key, value);
}

bool cli_apply_environment(cli_args *a)
{
    for (size_t i = 0; i < ib_backend_count(); i++) {
        const ib_backend *b = ib_backend_get(i);
        for (size_t k = 0; k < b->n_options; k++) {
            const ib_backend_option_decl *d = &b->options[k];
            const char *value = d->env ? getenv(d->env) : NULL;
            if (value && *value && !apply_variable(a, b, d, value)) return false;
        }
    }
    return true;
}

/* The k-th of the values "a|b|c" into out[cap]; false past the end. */
bool cli_race_value(const char *values, size_t k, char *out, size_t cap)
{
    for (const char *p = values; *p; k--) {
        size_t len = strcspn(p, "|");
        if (k == 0) {
            snprintf(out, cap, "%.*s", (int)len, p);
            return true;
        }
        p += len + (p[len] == '|');
    }
    return false;
}

/* The generation backend --backend names, else the default (one that is
 * no such backend is refused when the model opens). */
const ib_gen_backend *cli_gen_backend_of(const cli_args *a)
{
    for (size_t i = 0; a->backend && i < ib_gen_backend_count(); i++)
        if (!strcmp(ib_gen_backend_get(i)->name, a->backend)) return ib_gen_backend_get(i);
    return ib_gen_backend_get(0);
}
