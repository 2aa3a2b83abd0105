/* Result files of schema 1 and early schema 2 were written when ONNX
 * Runtime was the only runtime: their runtime keys are names of the file
 * format (docs/json.md), read here in the keys this backend reports today,
 * so that compare still takes them, through the checked reads of
 * src/json/ (no printer's). The reader is handed them (the registry's
 * legacy hook, asked by ib_latency_file_parse) and names no runtime. */
#include "backend/onnxruntime/ort_legacy.h"
#include "json/read.h"

#include <stdio.h>

/* workload.runtime_options of schema 1: cuDNN's search, the NHWC
 * preference and the graph only where they were reported (the CUDA
 * provider, the one with a search), and the intra-op threads. */
static ib_status read_runtime_options(const cJSON *rt, const char *where, ib_option_list *options,
                                      ib_error *err)
{
    char cudnn[16], nhwc[4], graph[4];
    double threads;
    IB_TRY(ib__json_read_string(rt, "cudnn_conv_algo_search", where, cudnn, sizeof cudnn, err));
    IB_TRY(ib__json_read_yes_no(rt, "prefer_nhwc", where, nhwc, err));
    IB_TRY(ib__json_read_yes_no(rt, "cuda_graph", where, graph, err));
    IB_TRY(ib__json_read_count(rt, "intra_op_threads", where, &threads, err));
    if (cudnn[0]) {
        IB_TRY(ib__json_set_option(options, where, "cudnn_search", cudnn, err));
        if (nhwc[0]) IB_TRY(ib__json_set_option(options, where, "prefer_nhwc", nhwc, err));
        if (graph[0]) IB_TRY(ib__json_set_option(options, where, "cuda_graph", graph, err));
    }
    char count[24] = "default";
    if (threads > 0) snprintf(count, sizeof count, "%.0f", threads);
    return ib__json_set_option(options, where, "threads", count, err);
}

const ib__legacy_result_keys ib__ort_legacy_keys = {
    .version_key = "onnxruntime_version",
    .read_runtime_options = read_runtime_options,
};
