/* Opening a generation workload (include/inferbench.h, ib_gen_open): the
 * backend named and its arguments (their defaults and the release of a
 * workload: generation.c). The backend layer, not the core, knows which
 * backends exist. */
#include "backend/registry.h"
#include "base/common.h"

#include <string.h>

/* The backends of generative models, one line each; the first is the
 * default. */
static const struct {
    const ib_gen_backend *info;
    ib_status (*open)(const ib__gen_open_args *a, ib__gen **out, ib_error *err);
} gen_backends[] = {
    { &ib__backend_llama_gen, ib__backend_llama_gen_open },
    { &ib__backend_fake_gen, ib__backend_fake_gen_open },
};
#define N_GEN_BACKENDS (sizeof gen_backends / sizeof gen_backends[0])

size_t ib_gen_backend_count(void) { return N_GEN_BACKENDS; }

const ib_gen_backend *ib_gen_backend_get(size_t index)
{
    return index < N_GEN_BACKENDS ? gen_backends[index].info : NULL;
}

void ib_gen_options_init(ib_gen_options *opts)
{
    *opts = (ib_gen_options){ .device = IB_DEVICE_AUTO, .seed = 42 };
}

ib_status ib_gen_open(const char *model, const ib_gen_options *opts, ib_gen **out, ib_error *err)
{
    *out = NULL;
    ib_gen_options defaults;
    ib_gen_options_init(&defaults);
    if (!opts) opts = &defaults;
    IB_FAIL_IF(!model || !*model, err, IB_ERR_INVALID_ARG, "no model given");
    ib__gen_open_args a;
    ib__gen_open_args_init(&a);
    a.model = model;
    a.options = opts->options;
    a.n_options = opts->n_options;
    a.device = opts->device;
    a.device_id = opts->device_id;
    a.seed = opts->seed;
    a.cache_dir = opts->cache_dir;
    const char *backend = opts->backend ? opts->backend : gen_backends[0].info->name;
    for (size_t i = 0; i < N_GEN_BACKENDS; i++)
        if (!strcmp(backend, gen_backends[i].info->name)) return gen_backends[i].open(&a, out, err);
    return ib__fail(err, IB_ERR_INVALID_ARG, "backend '%s' measures no generative model (llama or fake)",
                    backend);
}

const ib_gen_info *ib_gen_get_info(const ib_gen *g) { return &g->info; }

const char *ib_gen_open_note(const ib_gen *g) { return g->open_note; }

void ib_gen_destroy(ib_gen *g) { ib__gen_destroy(g); }
