/* The zoo's model generators. Each builds its whole model into g (inputs,
 * nodes, weights, outputs) and fills g->params and g->macs as it goes; the
 * registry (zoo.c) runs them once as a dry run for its table and again,
 * materialized, to produce a model. */
#ifndef IB_ZOO_MODELS_H
#define IB_ZOO_MODELS_H

#include "zoo/graph.h"

void ib__zoo_build_mlp(ib__graph *g);
void ib__zoo_build_resnet50(ib__graph *g);
void ib__zoo_build_mobilenet_v2(ib__graph *g);
void ib__zoo_build_efficientnet_b0(ib__graph *g);
void ib__zoo_build_bert_base(ib__graph *g);

/* Default value of BERT's symbolic "sequence" dimension (MACs are counted
 * at it). */
#define IB__BERT_DEFAULT_SEQUENCE 128

#endif
