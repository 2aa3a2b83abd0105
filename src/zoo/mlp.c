/* A small multilayer perceptron for fast tests: [batch,256] -> Linear(256,512)
 * -> ReLU -> Linear(512,512) -> ReLU -> Linear(512,10) -> logits.
 * 399,370 parameters (131,584 + 262,656 + 5,130), all stored. */
#include "zoo/layers.h"
#include "zoo/models.h"

#include <stdio.h>

void ib__zoo_build_mlp(ib__graph *g)
{
    static const int64_t widths[] = { 256, 512, 512, 10 };
    const size_t n_layers = sizeof widths / sizeof widths[0] - 1;

    ib__graph_input(g, "input", g->float_type, "batch,256");
    const char *x = "input";
    char prefix[32];
    for (size_t i = 0; i < n_layers; i++) {
        ib__namef(g, prefix, sizeof prefix, "fc%zu", i + 1);
        x = ib__linear(g, prefix, x, widths[i], widths[i + 1]);
        if (i + 1 < n_layers) x = ib__op1(g, "Relu", x);
    }
    ib__graph_output(g, x, "logits", g->float_type, "batch,10");
}
