/* The converter on the zoo's larger models (slow: labelled so, left out of
 * the sanitizer run): ResNet-50, EfficientNet-B0 and BERT-base converted
 * to fp16 (every initializer float16, inputs and outputs unchanged) and to
 * bf16 (idem), and run as --math fp16 on ONNX Runtime's CPU provider
 * within fp16's tolerance of strict fp32. */
#include "check.h"
#include "inferbench.h"
#include "onnx/onnx.pb-c.h"

#include <stdbool.h>

#include <stdlib.h>
#include <string.h>

static bool all_initializers(const Onnx__GraphProto *g, int32_t type)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->data_type != type &&
            g->initializer[i]->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
            return false;
    return g->n_initializer > 0;
}

static bool same_edges(const Onnx__GraphProto *a, const Onnx__GraphProto *b)
{
    if (a->n_input != b->n_input || a->n_output != b->n_output) return false;
    for (size_t i = 0; i < a->n_input; i++)
        if (strcmp(a->input[i]->name, b->input[i]->name) ||
            a->input[i]->type->tensor_type->elem_type != b->input[i]->type->tensor_type->elem_type)
            return false;
    for (size_t i = 0; i < a->n_output; i++)
        if (strcmp(a->output[i]->name, b->output[i]->name) ||
            a->output[i]->type->tensor_type->elem_type != b->output[i]->type->tensor_type->elem_type)
            return false;
    return true;
}

static void check_structure(const char *name, const uint8_t *bytes, size_t len, ib_math math, int32_t type)
{
    uint8_t *out = NULL;
    size_t out_len = 0;
    ib_error err = { "" };
    CHECK(ib_onnx_convert(bytes, len, math, &out, &out_len, NULL, &err) == IB_OK);
    Onnx__ModelProto *a = onnx__model_proto__unpack(NULL, len, bytes);
    Onnx__ModelProto *b = out ? onnx__model_proto__unpack(NULL, out_len, out) : NULL;
    CHECK(a && b);
    if (a && b) {
        CHECK(all_initializers(b->graph, type));
        CHECK(same_edges(a->graph, b->graph));
        if (!all_initializers(b->graph, type) || !same_edges(a->graph, b->graph))
            fprintf(stderr, "  %s %s: structure\n", name, ib_math_name(math));
    }
    if (a) onnx__model_proto__free_unpacked(a, NULL);
    if (b) onnx__model_proto__free_unpacked(b, NULL);
    ib_free(out);
}

static void run_fp16(const char *name, double max_abs)
{
    char model[64];
    snprintf(model, sizeof model, "zoo:%s", name);
    ib_model_options opts;
    ib_model_options_init(&opts);
    opts.device = IB_DEVICE_CPU;
    opts.math = IB_MATH_FP16;
    ib_workload *w = NULL;
    ib_error err = { "" };
    ib_accuracy acc;
    ib_status st = ib_workload_open_model(model, &opts, &w, &err);
    if (st == IB_OK) st = ib_measure_accuracy(w, model, &opts, max_abs, &acc, &err);
    CHECK(st == IB_OK);
    if (st != IB_OK) fprintf(stderr, "  %s: %s\n", name, err.message);
    for (int i = 0; st == IB_OK && i < acc.n_outputs; i++) {
        const ib_output_accuracy *o = &acc.outputs[i];
        CHECK(o->compared && !o->over_tolerance && o->cosine > 0.999);
        if (o->class_scores) CHECK(o->top1_agreement == 1.0);
        fprintf(stderr, "  %s %s: max abs %.3g, mean abs %.3g, cosine %.6f\n", name, o->name,
                o->max_abs_error, o->mean_abs_error, o->cosine);
    }
    ib_workload_destroy(w);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    static const struct {
        const char *name;
        double max_abs;
    } models[] = { { "resnet-50", 0.05 }, { "efficientnet-b0", 0.05 }, { "bert-base", 0.1 } };
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        if (!check_selected(models[i].name)) continue;
        uint8_t *bytes = NULL;
        size_t len = 0;
        CHECK(ib_zoo_build(models[i].name, false, &bytes, &len, NULL) == IB_OK);
        check_structure(models[i].name, bytes, len, IB_MATH_FP16, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16);
        check_structure(models[i].name, bytes, len, IB_MATH_BF16, ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16);
        ib_free(bytes);
        run_fp16(models[i].name, models[i].max_abs);
    }
    return check_summary("test_convert_zoo");
}
