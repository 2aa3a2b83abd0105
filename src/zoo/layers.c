/* Convolutional building blocks (see layers.h). */
#include "zoo/layers.h"

#include <math.h>
#include <stdio.h>

/* PyTorch's default initialisation bound for a layer of this fan-in: keeps
 * activations in a sane range through deep stacks, in float16 too. */
static float init_bound(int64_t fan_in) { return 1.0f / sqrtf((float)fan_in); }

static int64_t conv_out(int64_t size, int64_t k, int64_t stride, int64_t pad)
{
    return (size + 2 * pad - k) / stride + 1;
}

/* A Conv node with weight and bias initializers; counts its MACs. The caller
 * counts params, which depend on what the conv stands for. */
static ib__fmap conv(ib__graph *g, const char *prefix, ib__fmap x, int64_t out_c, int64_t k, int64_t stride,
                     int64_t groups)
{
    char name[128];
    int64_t in_per_group = x.c / groups;
    float bound = init_bound(in_per_group * k * k);
    ib__namef(g, name, sizeof name, "%s.weight", prefix);
    const char *w = ib__graph_weight(g, name, 4, (int64_t[]){ out_c, in_per_group, k, k }, 0.0f, bound);
    ib__namef(g, name, sizeof name, "%s.bias", prefix);
    const char *b = ib__graph_weight(g, name, 1, (int64_t[]){ out_c }, 0.0f, bound);

    int64_t pad = (k - 1) / 2;
    Onnx__NodeProto *node = ib__graph_node(g, "Conv", 3, (const char *[]){ x.name, w, b });
    ib__attr_ints(g, node, "kernel_shape", 2, (int64_t[]){ k, k });
    ib__attr_ints(g, node, "strides", 2, (int64_t[]){ stride, stride });
    ib__attr_ints(g, node, "pads", 4, (int64_t[]){ pad, pad, pad, pad });
    if (groups != 1) ib__attr_int(g, node, "group", groups);

    ib__fmap y = { ib__node_output(node), out_c, conv_out(x.h, k, stride, pad),
                   conv_out(x.w, k, stride, pad) };
    g->macs += y.c * y.h * y.w * in_per_group * k * k;
    return y;
}

ib__fmap ib__conv_bn(ib__graph *g, const char *prefix, ib__fmap x, int64_t out_c, int64_t k, int64_t stride,
                     int64_t groups, ib__act act)
{
    ib__fmap y = conv(g, prefix, x, out_c, k, stride, groups);
    /* torchvision: the conv weight (no bias) and BatchNorm's weight and bias. */
    g->params += out_c * (x.c / groups) * k * k + 2 * out_c;
    return ib__activation(g, y, act);
}

ib__fmap ib__conv_bias(ib__graph *g, const char *prefix, ib__fmap x, int64_t out_c, int64_t k, ib__act act)
{
    ib__fmap y = conv(g, prefix, x, out_c, k, 1, 1);
    g->params += out_c * x.c * k * k + out_c;
    return ib__activation(g, y, act);
}

ib__fmap ib__activation(ib__graph *g, ib__fmap x, ib__act act)
{
    switch (act) {
    case IB__ACT_NONE: break;
    case IB__ACT_RELU: x.name = ib__op1(g, "Relu", x.name); break;
    case IB__ACT_RELU6: {
        const char *lo = ib__graph_const_float(g, 0.0f);
        const char *hi = ib__graph_const_float(g, 6.0f);
        x.name = ib__node_output(ib__graph_node(g, "Clip", 3, (const char *[]){ x.name, lo, hi }));
        break;
    }
    case IB__ACT_SILU: x.name = ib__op2(g, "Mul", x.name, ib__op1(g, "Sigmoid", x.name)); break;
    case IB__ACT_SIGMOID: x.name = ib__op1(g, "Sigmoid", x.name); break;
    }
    return x;
}

ib__fmap ib__add(ib__graph *g, ib__fmap a, ib__fmap b)
{
    a.name = ib__op2(g, "Add", a.name, b.name);
    return a;
}

ib__fmap ib__scale(ib__graph *g, ib__fmap x, ib__fmap s)
{
    x.name = ib__op2(g, "Mul", x.name, s.name);
    return x;
}

ib__fmap ib__max_pool(ib__graph *g, ib__fmap x, int64_t k, int64_t stride, int64_t pad)
{
    Onnx__NodeProto *node = ib__graph_node(g, "MaxPool", 1, (const char *[]){ x.name });
    ib__attr_ints(g, node, "kernel_shape", 2, (int64_t[]){ k, k });
    ib__attr_ints(g, node, "strides", 2, (int64_t[]){ stride, stride });
    ib__attr_ints(g, node, "pads", 4, (int64_t[]){ pad, pad, pad, pad });
    return (ib__fmap){ ib__node_output(node), x.c, conv_out(x.h, k, stride, pad),
                       conv_out(x.w, k, stride, pad) };
}

ib__fmap ib__global_avg_pool(ib__graph *g, ib__fmap x)
{
    return (ib__fmap){ ib__op1(g, "GlobalAveragePool", x.name), x.c, 1, 1 };
}

const char *ib__linear(ib__graph *g, const char *prefix, const char *x, int64_t in_features,
                       int64_t out_features)
{
    char name[128];
    float bound = init_bound(in_features);
    ib__namef(g, name, sizeof name, "%s.weight", prefix);
    const char *w = ib__graph_weight(g, name, 2, (int64_t[]){ out_features, in_features }, 0.0f, bound);
    ib__namef(g, name, sizeof name, "%s.bias", prefix);
    const char *b = ib__graph_weight(g, name, 1, (int64_t[]){ out_features }, 0.0f, bound);
    Onnx__NodeProto *node = ib__graph_node(g, "Gemm", 3, (const char *[]){ x, w, b });
    ib__attr_int(g, node, "transB", 1);
    g->params += out_features * in_features + out_features;
    g->macs += out_features * in_features;
    return ib__node_output(node);
}

const char *ib__classifier(ib__graph *g, const char *prefix, ib__fmap x, int64_t classes)
{
    ib__fmap pooled = ib__global_avg_pool(g, x);
    const char *flat = ib__op1(g, "Flatten", pooled.name); /* axis 1: [N, C] */
    return ib__linear(g, prefix, flat, pooled.c, classes);
}
