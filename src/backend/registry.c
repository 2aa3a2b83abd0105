/* The registry: backends by name. The built-in tables are listed here, one
 * line each; plugins are shared objects loaded at run time through one
 * versioned entry symbol (IB_BACKEND_ENTRY_SYMBOL), checked before their
 * first use and closed again when refused, so nothing is half-loaded.
 * Plugins are loaded and unloaded from one thread, before and after
 * measuring (the registry takes no lock). */
#include "backend/registry.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Adding a backend in tree: its folder, and one line here (its table, its
 * hooks or NULL, and NULL; a backend a build may leave out: the line of the
 * build without it, its table NULL, its hooks and why). The first is the
 * default backend, also where it is left out. */
static const struct {
    const ib_backend *table;
    const ib__backend_hooks *hooks;
    const ib__backend_absence *absent;
} builtin[] = {
#ifdef IB_HAVE_ONNXRUNTIME /* CMake: ONNX Runtime's headers were found */
    { &ib__backend_onnxruntime, &ib__onnxruntime_hooks, NULL },
#else
    { NULL, &ib__onnxruntime_hooks, &ib__onnxruntime_absence },
#endif
    { &ib__backend_spin, NULL, NULL },
    { &ib__backend_fake, NULL, NULL },
    { &ib__backend_aoti, NULL, NULL },
};
#define N_BUILTIN (sizeof builtin / sizeof builtin[0])

#define MAX_PLUGINS 16
static struct {
    void *handle;
    const ib_backend *table;
} plugins[MAX_PLUGINS];
static size_t n_plugins;

/* The built-in tables of this build: those of the list not left out. */
static size_t n_built_in(void)
{
    size_t n = 0;
    for (size_t i = 0; i < N_BUILTIN; i++) n += builtin[i].table != NULL;
    return n;
}

size_t ib_backend_count(void) { return n_built_in() + n_plugins; }

const ib_backend *ib_backend_get(size_t index)
{
    for (size_t i = 0; i < N_BUILTIN; i++)
        if (builtin[i].table && index-- == 0) return builtin[i].table;
    return index < n_plugins ? plugins[index].table : NULL;
}

const char *ib_backend_absent(const char *name)
{
    for (size_t i = 0; i < N_BUILTIN; i++) {
        const ib__backend_absence *a = builtin[i].absent;
        if (a && (name ? !strcmp(a->name, name) : i == 0)) return a->why;
    }
    return NULL;
}

const ib_backend *ib_backend_find(const char *name)
{
    for (size_t i = 0; name && i < ib_backend_count(); i++)
        if (!strcmp(ib_backend_get(i)->name, name)) return ib_backend_get(i);
    return NULL;
}

const ib_backend *ib_backend_default(void) { return builtin[0].table; }

const ib__backend_hooks *ib__backend_hooks_of(const ib_backend *b)
{
    for (size_t i = 0; b && i < N_BUILTIN; i++)
        if (builtin[i].table == b) return builtin[i].hooks;
    return NULL;
}

const ib__legacy_result_keys *ib__legacy_result_keys_get(void)
{
    for (size_t i = 0; i < N_BUILTIN; i++)
        if (builtin[i].hooks && builtin[i].hooks->legacy) return builtin[i].hooks->legacy;
    return NULL;
}

bool ib_backend_takes_model_options(const ib_backend *b)
{
    const ib__backend_hooks *h = ib__backend_hooks_of(b);
    return h && h->open_model;
}

bool ib_backend_runtime(const ib_backend *b, ib_runtime_info *out)
{
    memset(out, 0, sizeof *out);
    if (!b) return false;
    ib__strlcpy(out->name, b->name, sizeof out->name);
    const ib__backend_hooks *h = ib__backend_hooks_of(b);
    if (!h || !h->runtime_facts) return false;
    h->runtime_facts(out);
    return true;
}

ib_status ib_backend_configure(const ib_backend *b, const char *key, const char *value, ib_error *err)
{
    IB_FAIL_IF(!b || !value, err, IB_ERR_INVALID_ARG, "no backend or no value to configure");
    const ib_backend_option_decl *d = ib_backend_option_find(b, key);
    IB_FAIL_IF(!d || !(d->flags & IB_OPTION_PROCESS) || !b->configure, err, IB_ERR_INVALID_ARG,
               "%s: '%s' is not an option of the whole process", b->name, key ? key : "");
    ib_backend_option o = { d->key, value };
    return b->configure(&o, err);
}

/* A plugin of another ABI version exports another entry symbol: say which,
 * rather than only that ours is missing. */
static unsigned other_abi_version(void *handle)
{
    for (unsigned v = 0; v < 100; v++) {
        char name[64];
        snprintf(name, sizeof name, "inferbench_backend_v%u", v);
        if (v != IB_BACKEND_ABI_VERSION && dlsym(handle, name)) return v;
    }
    return IB_BACKEND_ABI_VERSION;
}

static ib_status entry_table(void *handle, const ib_backend **table, ib_error *err)
{
    void *sym = dlsym(handle, IB_BACKEND_ENTRY_SYMBOL);
    if (!sym) {
        unsigned v = other_abi_version(handle);
        IB_FAIL_IF(v != IB_BACKEND_ABI_VERSION, err, IB_ERR_INVALID_ARG,
                   "built for backend ABI version %u (it exports inferbench_backend_v%u), but this "
                   "inferbench speaks version %u",
                   v, v, IB_BACKEND_ABI_VERSION);
        return ib__fail(err, IB_ERR_INVALID_ARG, "no entry symbol %s: not an inferbench backend plugin",
                        IB_BACKEND_ENTRY_SYMBOL);
    }
    ib_backend_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* POSIX: data and function pointers convert */
    *table = entry();
    IB_TRY(ib__backend_check(*table, err));
    IB_FAIL_IF(ib_backend_find((*table)->name), err, IB_ERR_INVALID_ARG,
               "a backend named '%s' is registered already", (*table)->name);
    return IB_OK;
}

ib_status ib_backend_load_plugin(const char *path, const ib_backend **out, ib_error *err)
{
    IB_FAIL_IF(!out || !path || !*path, err, IB_ERR_INVALID_ARG, "no plugin path");
    *out = NULL;
    IB_FAIL_IF(access(path, R_OK) != 0, err, IB_ERR_INVALID_ARG, "plugin '%s': no such file", path);
    IB_FAIL_IF(n_plugins == MAX_PLUGINS, err, IB_ERR_INVALID_ARG,
               "plugin '%s': %d plugins are loaded already", path, MAX_PLUGINS);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) return ib__fail(err, IB_ERR_INVALID_ARG, "plugin '%s': %s", path, dlerror());
    const ib_backend *table = NULL;
    ib_error why;
    if (entry_table(handle, &table, &why) != IB_OK) {
        dlclose(handle);
        return ib__fail(err, IB_ERR_INVALID_ARG, "plugin '%s': %s", path, why.message);
    }
    plugins[n_plugins].handle = handle;
    plugins[n_plugins++].table = table;
    *out = table;
    return IB_OK;
}

void ib_backend_unload_plugins(void)
{
    while (n_plugins > 0) dlclose(plugins[--n_plugins].handle);
}
