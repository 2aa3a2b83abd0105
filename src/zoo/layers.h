/* Building blocks of the convolutional zoo models, in the terms torchvision
 * uses (Conv2d + BatchNorm2d + activation, Linear), each emitting its ONNX
 * nodes and adding what it costs to the graph's counters:
 *
 * - params: what torchvision counts (conv and linear weights and biases,
 *   BatchNorm weight and bias; not the running statistics);
 * - macs: multiply-accumulates of convolutions and matrix products per item
 *   (one image), the convention of torchvision's "GFLOPS" column; bias adds,
 *   activations, pooling and elementwise products are not counted.
 *
 * BatchNorm is folded into the convolution before it, as exporters do for
 * inference: the graph stores the conv weight and a bias of out_c values.
 * g->stored (the initializers) therefore differs from g->params by design. */
#ifndef IB_ZOO_LAYERS_H
#define IB_ZOO_LAYERS_H

#include "zoo/graph.h"

/* A feature map of one item: the tensor and its channels and spatial size
 * (the batch dimension is symbolic and left out). */
typedef struct ib__fmap {
    const char *name;
    int64_t c, h, w;
} ib__fmap;

typedef enum ib__act {
    IB__ACT_NONE,
    IB__ACT_RELU,
    IB__ACT_RELU6, /* Clip(0, 6) */
    IB__ACT_SILU,  /* x * Sigmoid(x): opset 17 has no SiLU op */
    IB__ACT_SIGMOID
} ib__act;

/* Conv2d(bias=False) k x k, padding (k-1)/2, then BatchNorm2d (folded), then
 * act. Weights are named prefix.weight and prefix.bias. */
ib__fmap ib__conv_bn(ib__graph *g, const char *prefix, ib__fmap x, int64_t out_c, int64_t k, int64_t stride,
                     int64_t groups, ib__act act);

/* Conv2d(bias=True) k x k, then act (squeeze-excitation's 1x1 convs). */
ib__fmap ib__conv_bias(ib__graph *g, const char *prefix, ib__fmap x, int64_t out_c, int64_t k, ib__act act);

ib__fmap ib__activation(ib__graph *g, ib__fmap x, ib__act act);

/* Elementwise a + b, and x * s with s broadcast ([N,C,1,1] scales). */
ib__fmap ib__add(ib__graph *g, ib__fmap a, ib__fmap b);
ib__fmap ib__scale(ib__graph *g, ib__fmap x, ib__fmap s);

ib__fmap ib__max_pool(ib__graph *g, ib__fmap x, int64_t k, int64_t stride, int64_t pad);

/* AdaptiveAvgPool2d(1): [N,C,H,W] -> [N,C,1,1]. */
ib__fmap ib__global_avg_pool(ib__graph *g, ib__fmap x);

/* Linear(in_features, out_features) on a [N,in] tensor, as one Gemm with the
 * weight in PyTorch's [out,in] layout (transB = 1). */
const char *ib__linear(ib__graph *g, const char *prefix, const char *x, int64_t in_features,
                       int64_t out_features);

/* The classifier head of the CNNs: global average pool, flatten, Linear. */
const char *ib__classifier(ib__graph *g, const char *prefix, ib__fmap x, int64_t classes);

#endif
