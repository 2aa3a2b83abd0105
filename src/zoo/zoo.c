/* The zoo's registry: names, descriptions, input/output signatures, and the
 * figures (parameters, MACs) that each generator computes from its own
 * architecture description.
 *
 * The figures are filled on the first ib_zoo_get / ib_zoo_find by a dry run
 * of every generator (nodes and weight shapes, no weight data: a few
 * milliseconds), then cached, so later calls cost nothing. The cache is not
 * thread-safe: the first call must not race with another. */
#include "base/common.h"
#include "zoo/graph.h"
#include "zoo/models.h"

#include <stdio.h>
#include <string.h>

/* Weights are the same in every build: the seed is fixed. */
static const uint64_t ZOO_SEED = 0x1b5eedu;

typedef struct zoo_model {
    ib_zoo_entry entry; /* params and G(M|FL)OPs filled by count_all() */
    void (*build)(ib__graph *g);
} zoo_model;

#define VISION_INPUT "input: float32[batch,3,224,224]"
#define VISION_OUTPUT "logits: float32[batch,1000]"

static zoo_model models[] = {
    { { "mlp", "multilayer perceptron 256-512-512-10 with ReLU (fast tests)", 0, 0, 0,
        "input: float32[batch,256]", "logits: float32[batch,10]", "" },
      ib__zoo_build_mlp },
    { { "resnet-50", "ResNet-50 v1.5 (torchvision resnet50), ImageNet classifier", 0, 0, 0, VISION_INPUT,
        VISION_OUTPUT, "" },
      ib__zoo_build_resnet50 },
    { { "mobilenet-v2", "MobileNetV2 (torchvision mobilenet_v2), ImageNet classifier", 0, 0, 0, VISION_INPUT,
        VISION_OUTPUT, "" },
      ib__zoo_build_mobilenet_v2 },
    { { "efficientnet-b0", "EfficientNet-B0 (torchvision efficientnet_b0), ImageNet classifier", 0, 0, 0,
        VISION_INPUT, VISION_OUTPUT, "" },
      ib__zoo_build_efficientnet_b0 },
    { { "bert-base", "BERT-base encoder with pooler (HuggingFace BertModel, uncased vocab)", 0, 0, 0,
        "input_ids: int64[batch,sequence]",
        "last_hidden_state: float32[batch,sequence,768], pooler_output: float32[batch,768]", "sequence=128" },
      ib__zoo_build_bert_base },
};

static const size_t n_models = sizeof models / sizeof models[0];
static bool counted;

/* Runs one generator without weight data and copies its counters. */
static ib_status count_model(zoo_model *m)
{
    ib__graph g;
    ib_status st = ib__graph_init(&g, m->entry.name, false, false, ZOO_SEED);
    if (st == IB_OK) {
        m->build(&g);
        st = g.status;
    }
    if (st == IB_OK) {
        m->entry.params = g.params;
        m->entry.gmacs_per_item = (double)g.macs / 1e9;
        /* Convention (docs/zoo.md): 2 FLOPs per multiply-accumulate;
         * elementwise ops, activations, pooling and normalisation are left
         * out, as in the usual published figures. */
        m->entry.gflops_per_item = 2.0 * (double)g.macs / 1e9;
    }
    ib__graph_free(&g);
    return st;
}

/* Fills the table once. On a failure (host memory) it is tried again on the
 * next call; the entries read 0 meanwhile. */
static void count_all(void)
{
    if (counted) return;
    bool ok = true;
    for (size_t i = 0; i < n_models; i++) ok = count_model(&models[i]) == IB_OK && ok;
    counted = ok;
}

size_t ib_zoo_count(void) { return n_models; }

const ib_zoo_entry *ib_zoo_get(size_t index)
{
    if (index >= n_models) return NULL;
    count_all();
    return &models[index].entry;
}

static zoo_model *find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < n_models; i++)
        if (strcmp(models[i].entry.name, name) == 0) return &models[i];
    return NULL;
}

const ib_zoo_entry *ib_zoo_find(const char *name)
{
    zoo_model *m = find(name);
    if (!m) return NULL;
    count_all();
    return &m->entry;
}

/* "a, b, c": the known names, for error messages. */
static void known_names(char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n_models && used < cap; i++) {
        int n = snprintf(out + used, cap - used, "%s%s", i ? ", " : "", models[i].entry.name);
        if (n < 0) break;
        used += (size_t)n;
    }
}

ib_status ib_zoo_build(const char *name, bool fp16, uint8_t **bytes, size_t *len, ib_error *err)
{
    IB_FAIL_IF(!bytes || !len, err, IB_ERR_INVALID_ARG, "zoo: no output buffer given");
    *bytes = NULL;
    *len = 0;
    zoo_model *m = find(name);
    if (!m) {
        char names[256];
        known_names(names, sizeof names);
        return ib__fail(err, IB_ERR_INVALID_ARG, "zoo: unknown model '%s' (known: %s)",
                        name ? name : "(null)", names);
    }
    ib__graph g;
    ib_status st = ib__graph_init(&g, m->entry.name, fp16, true, ZOO_SEED);
    if (st == IB_OK) {
        m->build(&g);
        st = ib__graph_pack(&g, bytes, len, err);
    } else {
        ib__fail(err, st, "zoo: out of host memory building '%s'", m->entry.name);
    }
    ib__graph_free(&g);
    return st;
}
