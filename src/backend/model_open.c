/* ib_workload_open_model: a model opened on the backend its options name.
 * A built-in backend of models reads the whole of ib_model_options (its
 * open_model hook); any other is opened through its table, given what the
 * table carries, and the model options it could not honour are refused
 * rather than ignored. */
#include "backend/registry.h"

#include <string.h>

/* The first model option b's table cannot be given, or NULL. */
static const char *model_option_given(const ib_model_options *m)
{
    if (m->n_shapes) return "shapes";
    if (m->n_inputs) return "inputs";
    if (m->math != IB_MATH_DEFAULT) return "math";
    if (m->device_memory_limit_bytes || m->host_memory_limit_bytes) return "memory limits";
    return NULL;
}

static ib_status open_through_table(const ib_backend *b, const char *model, const ib_model_options *m,
                                    ib_workload **out, ib_error *err)
{
    const char *given = model_option_given(m);
    IB_FAIL_IF(given, err, IB_ERR_INVALID_ARG,
               "backend '%s' takes no model %s: give it its settings as options (KEY=VALUE)", b->name, given);
    ib_backend_open_args args;
    ib_backend_open_args_init(&args);
    args.model = model;
    args.options = m->options;
    args.n_options = m->n_options;
    args.device = m->device;
    args.device_id = m->device_id;
    args.batch = m->batch > 0 ? m->batch : 1; /* 0: not given */
    args.seed = m->seed;
    return ib_workload_open_backend(b, &args, out, err);
}

ib_status ib_workload_open_model(const char *model, const ib_model_options *opts, ib_workload **out,
                                 ib_error *err)
{
    IB_FAIL_IF(!out, err, IB_ERR_INVALID_ARG, "no place for the workload");
    *out = NULL;
    ib_model_options defaults;
    if (!opts) {
        ib_model_options_init(&defaults);
        opts = &defaults;
    }
    const ib_backend *b = opts->backend ? ib_backend_find(opts->backend) : ib_backend_default();
    if (!b) {
        const char *why = ib_backend_absent(opts->backend);
        IB_FAIL_IF(why, err, IB_ERR_UNSUPPORTED, "%s", why);
        return ib__fail(err, IB_ERR_INVALID_ARG, "no backend named '%s'", opts->backend ? opts->backend : "");
    }
    const ib__backend_hooks *h = ib__backend_hooks_of(b);
    if (h && h->open_model) return h->open_model(model, opts, out, err);
    return open_through_table(b, model, opts, out, err);
}
