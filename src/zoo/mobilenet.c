/* MobileNetV2 as torchvision.models.mobilenet_v2 (width 1.0): inverted
 * residual blocks with ReLU6 (exported as Clip(0, 6)). 3,504,872
 * parameters. */
#include "zoo/layers.h"
#include "zoo/models.h"

#include <stdio.h>

/* expand 1x1 (unless t == 1) -> depthwise 3x3(stride) -> linear project 1x1;
 * a residual when the shape is kept. `index` numbers the block in
 * torchvision's `features`. */
static ib__fmap inverted_residual(ib__graph *g, int index, ib__fmap x, int64_t out_c, int64_t stride,
                                  int64_t expand_ratio)
{
    char name[64];
    int layer = 0; /* index inside the block's `conv` sequence */
    int64_t hidden = x.c * expand_ratio;
    ib__fmap y = x;
    if (expand_ratio != 1) {
        ib__namef(g, name, sizeof name, "features.%d.conv.%d.0", index, layer++);
        y = ib__conv_bn(g, name, y, hidden, 1, 1, 1, IB__ACT_RELU6);
    }
    ib__namef(g, name, sizeof name, "features.%d.conv.%d.0", index, layer++);
    y = ib__conv_bn(g, name, y, hidden, 3, stride, hidden, IB__ACT_RELU6);
    ib__namef(g, name, sizeof name, "features.%d.conv.%d", index, layer);
    y = ib__conv_bn(g, name, y, out_c, 1, 1, 1, IB__ACT_NONE);
    return stride == 1 && x.c == out_c ? ib__add(g, x, y) : y;
}

void ib__zoo_build_mobilenet_v2(ib__graph *g)
{
    /* t (expansion), c (channels), n (repeats), s (stride of the first) */
    static const struct {
        int64_t t, c, n, s;
    } cfg[] = { { 1, 16, 1, 1 }, { 6, 24, 2, 2 },  { 6, 32, 3, 2 }, { 6, 64, 4, 2 },
                { 6, 96, 3, 1 }, { 6, 160, 3, 2 }, { 6, 320, 1, 1 } };

    ib__graph_input(g, "input", g->float_type, "batch,3,224,224");
    ib__fmap x = { "input", 3, 224, 224 };
    x = ib__conv_bn(g, "features.0.0", x, 32, 3, 2, 1, IB__ACT_RELU6);

    int index = 1;
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
        for (int64_t r = 0; r < cfg[i].n; r++)
            x = inverted_residual(g, index++, x, cfg[i].c, r == 0 ? cfg[i].s : 1, cfg[i].t);

    char name[32];
    ib__namef(g, name, sizeof name, "features.%d.0", index);
    x = ib__conv_bn(g, name, x, 1280, 1, 1, 1, IB__ACT_RELU6);
    const char *logits = ib__classifier(g, "classifier.1", x, 1000);
    ib__graph_output(g, logits, "logits", g->float_type, "batch,1000");
}
