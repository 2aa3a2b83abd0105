/* ONNX Runtime as a table of the backend ABI: the same workload as
 * ib_workload_open_model, its settings given as KEY=VALUE options. */
#include "backend/registry.h"

#include <string.h>

static ib_status apply_option(ib_model_options *m, const ib_backend_option *o, ib_error *err)
{
    static const char *const searches[] = { "EXHAUSTIVE", "HEURISTIC", "DEFAULT" };
    long long n;
    if (!strcmp(o->key, "threads")) {
        IB_TRY(ib__backend_option_int(o, 1, 1024, &n, err));
        m->intra_op_threads = (int)n;
        return IB_OK;
    }
    if (!strcmp(o->key, "prefer_nhwc")) return ib__backend_option_bool(o, &m->prefer_nhwc, err);
    if (!strcmp(o->key, "cuda_graph")) return ib__backend_option_bool(o, &m->cuda_graph, err);
    if (!strcmp(o->key, "cudnn_search")) {
        for (size_t i = 0; i < 3; i++)
            if (!strcmp(o->value, searches[i])) return m->cudnn_conv_algo_search = searches[i], IB_OK;
        return ib__fail(err, IB_ERR_INVALID_ARG,
                        "option cudnn_search=%s: expected EXHAUSTIVE, HEURISTIC or DEFAULT", o->value);
    }
    return ib__fail(
        err, IB_ERR_INVALID_ARG,
        "onnxruntime: unknown option '%s' (known: threads, cudnn_search, prefer_nhwc, cuda_graph)", o->key);
}

static ib_status ort_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    IB_FAIL_IF(!args->model, err, IB_ERR_INVALID_ARG, "onnxruntime: no model (an .onnx file or zoo:NAME)");
    ib_model_options m;
    ib_model_options_init(&m);
    m.device = args->device;
    m.device_id = args->device_id;
    m.batch = args->batch;
    m.seed = args->seed;
    for (size_t i = 0; i < args->n_options; i++) IB_TRY(apply_option(&m, &args->options[i], err));
    ib_workload *w;
    IB_TRY(ib_workload_open_model(args->model, &m, &w, err));
    ib__builtin_hand_over(w, out);
    return IB_OK;
}

const ib_backend ib__backend_onnxruntime = IB__IN_TREE_BACKEND(
    "onnxruntime", "ONNX models (.onnx files, zoo:NAME) on ONNX Runtime's CUDA or CPU provider", ort_open);
