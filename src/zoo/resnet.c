/* ResNet-50 as torchvision.models.resnet50 (v1.5: the stride of a
 * downsampling bottleneck is on its 3x3 conv). 25,557,032 parameters. */
#include "zoo/layers.h"
#include "zoo/models.h"

#include <stdio.h>

enum { EXPANSION = 4 }; /* a bottleneck's output is 4x its width */

/* conv1x1 -> conv3x3(stride) -> conv1x1, each with BatchNorm, plus the
 * shortcut (a strided 1x1 conv + BN when the shape changes). */
static ib__fmap bottleneck(ib__graph *g, const char *prefix, ib__fmap x, int64_t width, int64_t stride)
{
    char name[64];
    ib__namef(g, name, sizeof name, "%s.conv1", prefix);
    ib__fmap y = ib__conv_bn(g, name, x, width, 1, 1, 1, IB__ACT_RELU);
    ib__namef(g, name, sizeof name, "%s.conv2", prefix);
    y = ib__conv_bn(g, name, y, width, 3, stride, 1, IB__ACT_RELU);
    ib__namef(g, name, sizeof name, "%s.conv3", prefix);
    y = ib__conv_bn(g, name, y, width * EXPANSION, 1, 1, 1, IB__ACT_NONE);

    ib__fmap shortcut = x;
    if (stride != 1 || x.c != width * EXPANSION) {
        ib__namef(g, name, sizeof name, "%s.downsample.0", prefix);
        shortcut = ib__conv_bn(g, name, x, width * EXPANSION, 1, stride, 1, IB__ACT_NONE);
    }
    return ib__activation(g, ib__add(g, y, shortcut), IB__ACT_RELU);
}

void ib__zoo_build_resnet50(ib__graph *g)
{
    static const struct {
        int64_t width, blocks, stride;
    } stages[] = { { 64, 3, 1 }, { 128, 4, 2 }, { 256, 6, 2 }, { 512, 3, 2 } };

    ib__graph_input(g, "input", g->float_type, "batch,3,224,224");
    ib__fmap x = { "input", 3, 224, 224 };
    x = ib__conv_bn(g, "conv1", x, 64, 7, 2, 1, IB__ACT_RELU);
    x = ib__max_pool(g, x, 3, 2, 1);

    char prefix[32];
    for (size_t s = 0; s < sizeof stages / sizeof stages[0]; s++) {
        for (int64_t b = 0; b < stages[s].blocks; b++) {
            ib__namef(g, prefix, sizeof prefix, "layer%zu.%lld", s + 1, (long long)b);
            x = bottleneck(g, prefix, x, stages[s].width, b == 0 ? stages[s].stride : 1);
        }
    }
    const char *logits = ib__classifier(g, "fc", x, 1000);
    ib__graph_output(g, logits, "logits", g->float_type, "batch,1000");
}
