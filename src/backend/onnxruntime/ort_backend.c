/* ONNX Runtime as a table of the backend ABI: the same workload as
 * ib__ort_open_model, its settings given as KEY=VALUE options and declared
 * here (the program builds its flags --threads, --cuda-graph,
 * --prefer-nhwc, --cudnn-search, their help, best's race and the
 * environment variable of the library from these lines), and the hooks of
 * the default backend: its runtime facts, the whole of the model options,
 * the keys of the result files written when it was the only runtime. */
#include "backend/onnxruntime/ort.h"
#include "backend/onnxruntime/ort_legacy.h"
#include "backend/registry.h"

#include <string.h>

static ib_status ort_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    IB_FAIL_IF(!args->model, err, IB_ERR_INVALID_ARG, "onnxruntime: no model (an .onnx file or zoo:NAME)");
    ib_model_options m;
    ib_model_options_init(&m);
    m.device = args->device;
    m.device_id = args->device_id;
    m.batch = args->batch;
    m.seed = args->seed;
    m.options = args->options;
    m.n_options = args->n_options;
    ib_workload *w;
    IB_TRY(ib__ort_open_model(args->model, &m, &w, err));
    ib__builtin_hand_over(w, out);
    return IB_OK;
}

/* The order of the raced ones is best's: the graph varies slowest, the
 * search fastest, and a label names them in this order. */
static const ib_backend_option_decl ort_options[] = {
    { .key = "threads",
      .help = "CPU provider intra-op threads",
      .values = "1..1024",
      .flag = "threads",
      .role = IB_OPTION_ROLE_THREADS },
    { .key = "cuda_graph",
      .help = "let the CUDA provider capture a run as a CUDA graph and replay it (one launch a run)",
      .values = "yes|no",
      .flag = "cuda-graph",
      .race = "no|yes",
      .label = "graph",
      .flags = IB_OPTION_CUDA_ONLY | IB_OPTION_SWITCH },
    { .key = "prefer_nhwc",
      .help = "let the CUDA provider use NHWC layouts",
      .values = "yes|no",
      .flag = "prefer-nhwc",
      .race = "no|yes",
      .label = "nhwc",
      .flags = IB_OPTION_CUDA_ONLY | IB_OPTION_SWITCH },
    { .key = "cudnn_search",
      .help = "cuDNN convolution algorithm search (default exhaustive)",
      .values = "EXHAUSTIVE|HEURISTIC|DEFAULT",
      .flag = "cudnn-search",
      .race = "EXHAUSTIVE|HEURISTIC",
      .flags = IB_OPTION_CUDA_ONLY },
    { .key = "library",
      .help = "the ONNX Runtime core library to load (default libonnxruntime.so.1 as the loader finds it)",
      .values = "PATH",
      .env = "INFERBENCH_ONNXRUNTIME_LIBRARY",
      .flags = IB_OPTION_PROCESS },
};

static ib_status ort_configure(const ib_backend_option *o, ib_error *err)
{
    return ib__ort_set_library(o->value, err); /* library: the one process option */
}

const ib_backend ib__backend_onnxruntime = IB__IN_TREE_BACKEND(
    "onnxruntime", "ONNX models (.onnx files, zoo:NAME) on ONNX Runtime's CUDA or CPU provider", ort_open,
    ort_options, sizeof ort_options / sizeof ort_options[0], ort_configure);

const ib__backend_hooks ib__onnxruntime_hooks = {
    .runtime_facts = ib__ort_runtime_facts,
    .open_model = ib__ort_open_model,
    .legacy = &ib__ort_legacy_keys,
};
