/* ONNX Runtime as a table of the backend ABI: the same workload as
 * ib_workload_open_model, its settings given as KEY=VALUE options. */
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
    IB_TRY(ib_workload_open_model(args->model, &m, &w, err));
    ib__builtin_hand_over(w, out);
    return IB_OK;
}

const ib_backend ib__backend_onnxruntime = IB__IN_TREE_BACKEND(
    "onnxruntime", "ONNX models (.onnx files, zoo:NAME) on ONNX Runtime's CUDA or CPU provider", ort_open);
