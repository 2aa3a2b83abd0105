/* What the tests read of a llama workload beyond the generation ops (the
 * state llama.cpp holds), without llama.h. Not for the method: it sees
 * the ops alone. */
#ifndef IB_BACKEND_LLAMA_PROBE_H
#define IB_BACKEND_LLAMA_PROBE_H

#include "workload/generation.h"

/* The positions sequence seq holds in the KV cache, lo..hi (-1, -1 when
 * it holds none). */
void ib__llama_probe_positions(ib__gen *g, int32_t seq, int32_t *lo, int32_t *hi);
/* The logits of output i of the last decode (a step: the sequence; a
 * prompt: -1, its last token), n_vocab of them; NULL when there are none. */
const float *ib__llama_probe_logits(ib__gen *g, int32_t i);
/* The token the next step feeds sequence seq: what sample picked, or -1
 * (a random one); set_next makes it token. */
int32_t ib__llama_probe_next(ib__gen *g, int32_t seq);
void ib__llama_probe_set_next(ib__gen *g, int32_t seq, int32_t token);
/* The id of token i of the last batch decoded (a mixed batch's, in its
 * entries' order). */
int32_t ib__llama_probe_batch_token(ib__gen *g, int32_t i);
/* The llama_model the workload loaded (a bare loop beside it: tests/gpu). */
struct llama_model *ib__llama_probe_model(ib__gen *g);
/* The threads llama.cpp decodes a batch of tokens with (a prompt's),
 * beside info.n_threads (a step's). */
int32_t ib__llama_probe_threads_batch(ib__gen *g);
/* The compute buffers of the context, as llama.cpp said them. */
uint64_t ib__llama_probe_compute_bytes(ib__gen *g);

#endif
