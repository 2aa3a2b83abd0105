/* The generation workload: what the generation method (src/core/generate.c)
 * drives on a generative model, token by token. It is not the forward-pass
 * workload of workload.h: a generative model keeps state between calls (its
 * KV cache), is fed tokens at positions of sequences, and its figures are a
 * prefill (the prompt up to the first token) and decode steps (one token of
 * each sequence decoded together).
 *
 * A backend of generative models (src/backend/llama/) fills one const table
 * of these operations; the scripted fake (src/backend/fake/) fills another
 * on a virtual clock. The method sees nothing else of either: no runtime's
 * words reach the core.
 *
 * Timing: the runtime queues its work on streams of its own, so the method
 * times with the host clock around a call and its synchronize (the call
 * returns once the work is queued; synchronize returns once its outputs, the
 * last token's logits, can be read). Leaving synchronize out is a pitfall the
 * method shows, never its figure. */
#ifndef IB_WORKLOAD_GENERATION_H
#define IB_WORKLOAD_GENERATION_H

#include <stdbool.h>
#include <stdint.h>

#include "inferbench.h"
#include "timer/energy_counter.h"
#include "timer/timer.h"

typedef struct ib__gen ib__gen;

/* One entry of a mixed batch (decode_batch): n_tokens tokens of sequence
 * seq at positions pos..pos+n_tokens-1, the logits of the last one
 * computed when logits is set. A decode token is an entry of one token;
 * a prompt chunk an entry of several. The ids are random, fixed by the
 * seed and the request's identity: positions below shared take the ids
 * every request shares (the --shared-prefix experiment), the others the
 * request's own, so no two requests' prompts repeat each other; for one
 * token after a prompt, the one sample picked if any. A request's ids
 * are the prefill op's of sequence request (prefill(g, request, ...)). */
typedef struct ib__gen_batch_entry {
    int32_t seq;
    int32_t pos;
    int32_t n_tokens;
    bool logits;
    uint32_t request; /* whose ids */
    int32_t shared;   /* positions below it: the shared prefix's ids */
} ib__gen_batch_entry;

/* What changes a generation figure, every setting the result states: the
 * public ib_gen_info (include/inferbench.h), since results carry it. Filled
 * by the backend at open and after set_sequences. */
typedef ib_gen_info ib__gen_info;

typedef struct ib__gen_ops {
    int version; /* IB__GEN_OPS_VERSION */

    /* Empties the KV cache of every sequence (untimed): the next prefill
     * starts at position 0. Required. */
    ib_status (*clear)(ib__gen *g, ib_error *err);

    /* Feeds n_tokens tokens (random ids, fixed by the workload's seed) to
     * sequence seq at positions pos..pos+n_tokens-1, in calls of at most
     * n_batch tokens, logits asked for the last token only. Returns once
     * the work is queued; synchronize waits for it. Required. */
    ib_status (*prefill)(ib__gen *g, int32_t seq, int32_t pos, int32_t n_tokens, ib_error *err);

    /* One decode step: one token for each of sequences 0..n_seqs-1, each at
     * position pos (the sequences are kept at one length), logits for all.
     * Returns once queued. Required. */
    ib_status (*step)(ib__gen *g, int32_t n_seqs, int32_t pos, ib_error *err);

    /* Waits until the work queued has finished and the last logits can be
     * read. Required. */
    ib_status (*synchronize)(ib__gen *g, ib_error *err);

    /* Copies the KV cache of sequence 0 (positions 0..n_pos-1) to sequences
     * 1..n_seqs-1 (untimed), so that sequences decoded together start from
     * one prefill. Required. */
    ib_status (*fork)(ib__gen *g, int32_t n_seqs, int32_t n_pos, ib_error *err);

    /* Creates the context anew for n_seqs sequences of ctx_per_seq tokens
     * each (untimed; info updated). The cache or its compute buffers do
     * not fit: IB_ERR_DEVICE_OOM, after freeing what the attempt took, the
     * workload usable again at a smaller count (the search's "does not
     * fit"). More than the runtime allows: IB_ERR_UNSUPPORTED. Required. */
    ib_status (*set_sequences)(ib__gen *g, int32_t n_seqs, int32_t ctx_per_seq, ib_error *err);

    /* Optional (NULL: not timed). Picks the next token of sequence seq from
     * its last logits (greedy), as a server would after each step. */
    ib_status (*sample)(ib__gen *g, int32_t seq, ib_error *err);

    /* Optional (NULL: the no-warm-up pitfall is not shown). Drops the
     * context and the model's buffers and creates them anew, so that the
     * next calls are cold again; the sequence setting stays. */
    ib_status (*reopen)(ib__gen *g, ib_error *err);

    /* Optional (NULL: no threads to choose). Sets the CPU threads of the
     * following calls (the too-many-threads pitfall). */
    ib_status (*set_threads)(ib__gen *g, int32_t n_threads, ib_error *err);

    /* Optional (NULL: the decode energy window ends where the context
     * does). Drops positions n_pos and after of sequences 0..n_seqs-1
     * (untimed, the cache's bookkeeping), so that steps go on at n_pos:
     * the energy window's steps cycle over the positions the timed steps
     * had (docs/energy.md). */
    ib_status (*rewind)(ib__gen *g, int32_t n_seqs, int32_t n_pos, ib_error *err);

    /* Optional (NULL: NVML's counter of the GPU of info.device_id when
     * info.device is the GPU, else none). A counter of the workload's own
     * (the fake's, scripted on its virtual clock) into *c; false with the
     * reason in note[cap]; its ctx is the ib__gen (the meter opens it
     * through ib__energy_source, as a forward-pass workload's). */
    ib__energy_open_fn energy;

    /* Optional (NULL: serving under load is refused). One mixed batch,
     * as a continuous-batching server feeds its runtime each step: the
     * entries (each sequence at most once, each at the position its
     * sequence is filled to) in one call of at most info.n_batch tokens.
     * Returns once queued; synchronize waits for it. */
    ib_status (*decode_batch)(ib__gen *g, const ib__gen_batch_entry *entries, size_t n_entries,
                              ib_error *err);

    /* Optional (NULL: serving under load is refused). Removes positions
     * from_pos and after of sequence seq from the KV cache (untimed
     * bookkeeping): 0 empties it, so that a new request starts on it at
     * position 0; above 0 keeps a common prefix the next request reuses
     * (the engine's prefix cache, as llama-server's cache_prompt). A cache
     * that cannot drop part of a sequence: IB_ERR_UNSUPPORTED. */
    ib_status (*remove_sequence)(ib__gen *g, int32_t seq, int32_t from_pos, ib_error *err);

    /* Releases everything. Required. */
    void (*destroy)(ib__gen *g);
} ib__gen_ops;

#define IB__GEN_OPS_VERSION 1

struct ib__gen {
    const ib__gen_ops *ops;
    void *impl; /* the backend's own state */
    ib__gen_info info;
    ib__clock clock;     /* host clock (virtual for the fake) */
    char open_note[512]; /* what opening did that the caller should say (ib_gen_open_note) */
};

/* The host clock of g in ms. */
static inline double ib__gen_now_ms(const ib__gen *g) { return g->clock.now_ms(g->clock.ctx); }

/* What a generation workload is opened with. Initialize with
 * ib__gen_open_args_init. */
typedef struct ib__gen_open_args {
    const char *model;                /* a GGUF file or zoo:NAME */
    const ib_backend_option *options; /* the backend's --option KEY=VALUE pairs, in order */
    size_t n_options;
    ib_device_kind device; /* AUTO: the GPU when there is one */
    int device_id;
    int32_t n_seqs;      /* sequences the first context holds (default 1) */
    int32_t ctx_per_seq; /* tokens of context each (default 0: prompt + tokens, given by the caller) */
    uint64_t seed;       /* of the random token ids (default 42) */
    /* Where the zoo's model files are written and found again (zoo:NAME:
     * a GGUF file of 3 GB for a 1B model in float16): a folder the program
     * chooses, the library reading no environment. NULL: zoo models are
     * refused. Not owned. */
    const char *cache_dir;
} ib__gen_open_args;

void ib__gen_open_args_init(ib__gen_open_args *a);

/* Releases g and everything it holds; NULL is a no-op. */
void ib__gen_destroy(ib__gen *g);

#endif
