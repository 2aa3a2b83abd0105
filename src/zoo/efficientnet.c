/* EfficientNet-B0 as torchvision.models.efficientnet_b0: MBConv blocks with
 * SiLU and squeeze-excitation. Stochastic depth is the identity at inference
 * and the classifier's dropout is omitted. 5,288,548 parameters. */
#include "zoo/layers.h"
#include "zoo/models.h"

#include <stdio.h>

/* torchvision's _make_divisible(v, 8): channel counts rounded to a multiple
 * of 8, never more than 10% down. */
static int64_t make_divisible(int64_t v)
{
    const int64_t divisor = 8;
    int64_t r = (v + divisor / 2) / divisor * divisor;
    if (r < divisor) r = divisor;
    if (10 * r < 9 * v) r += divisor;
    return r;
}

/* avgpool -> 1x1 conv (squeeze) -> SiLU -> 1x1 conv (excite) -> Sigmoid,
 * then the input scaled channel-wise. */
static ib__fmap squeeze_excitation(ib__graph *g, const char *prefix, ib__fmap x, int64_t squeeze_c)
{
    char name[96];
    ib__fmap s = ib__global_avg_pool(g, x);
    ib__namef(g, name, sizeof name, "%s.fc1", prefix);
    s = ib__conv_bias(g, name, s, squeeze_c, 1, IB__ACT_SILU);
    ib__namef(g, name, sizeof name, "%s.fc2", prefix);
    s = ib__conv_bias(g, name, s, x.c, 1, IB__ACT_SIGMOID);
    return ib__scale(g, x, s);
}

/* expand 1x1 (unless the ratio is 1) -> depthwise k x k(stride) -> SE ->
 * project 1x1 (no activation); a residual when the shape is kept. */
static ib__fmap mbconv(ib__graph *g, const char *prefix, ib__fmap x, int64_t expand_ratio, int64_t k,
                       int64_t stride, int64_t out_c)
{
    char name[96];
    int layer = 0; /* index inside torchvision's `block` sequence */
    int64_t expanded = make_divisible(x.c * expand_ratio);
    ib__fmap y = x;
    if (expanded != x.c) {
        ib__namef(g, name, sizeof name, "%s.block.%d.0", prefix, layer++);
        y = ib__conv_bn(g, name, y, expanded, 1, 1, 1, IB__ACT_SILU);
    }
    ib__namef(g, name, sizeof name, "%s.block.%d.0", prefix, layer++);
    y = ib__conv_bn(g, name, y, expanded, k, stride, expanded, IB__ACT_SILU);
    /* The squeeze width comes from the block's input channels, not the
     * expanded ones (torchvision: max(1, input_channels // 4)). */
    int64_t squeeze = x.c / 4 > 1 ? x.c / 4 : 1;
    ib__namef(g, name, sizeof name, "%s.block.%d", prefix, layer++);
    y = squeeze_excitation(g, name, y, squeeze);
    ib__namef(g, name, sizeof name, "%s.block.%d.0", prefix, layer);
    y = ib__conv_bn(g, name, y, out_c, 1, 1, 1, IB__ACT_NONE);
    return stride == 1 && x.c == out_c ? ib__add(g, y, x) : y;
}

void ib__zoo_build_efficientnet_b0(ib__graph *g)
{
    /* expand ratio, kernel, stride of the first block, channels, repeats */
    static const struct {
        int64_t expand, kernel, stride, channels, repeats;
    } stages[] = { { 1, 3, 1, 16, 1 },  { 6, 3, 2, 24, 2 },  { 6, 5, 2, 40, 2 }, { 6, 3, 2, 80, 3 },
                   { 6, 5, 1, 112, 3 }, { 6, 5, 2, 192, 4 }, { 6, 3, 1, 320, 1 } };
    const size_t n_stages = sizeof stages / sizeof stages[0];

    ib__graph_input(g, "input", g->float_type, "batch,3,224,224");
    ib__fmap x = { "input", 3, 224, 224 };
    x = ib__conv_bn(g, "features.0.0", x, make_divisible(32), 3, 2, 1, IB__ACT_SILU);

    char prefix[32];
    for (size_t s = 0; s < n_stages; s++) {
        for (int64_t r = 0; r < stages[s].repeats; r++) {
            ib__namef(g, prefix, sizeof prefix, "features.%zu.%lld", s + 1, (long long)r);
            x = mbconv(g, prefix, x, stages[s].expand, stages[s].kernel, r == 0 ? stages[s].stride : 1,
                       make_divisible(stages[s].channels));
        }
    }
    ib__namef(g, prefix, sizeof prefix, "features.%zu.0", n_stages + 1);
    x = ib__conv_bn(g, prefix, x, 4 * x.c, 1, 1, 1, IB__ACT_SILU); /* 320 -> 1280 */
    const char *logits = ib__classifier(g, "classifier.1", x, 1000);
    ib__graph_output(g, logits, "logits", g->float_type, "batch,1000");
}
