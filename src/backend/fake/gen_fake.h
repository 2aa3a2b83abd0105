/* The scripted generation workload (gen_fake.c): a generative model on a
 * virtual clock, so that the generation method's arithmetic is tested on
 * exact numbers, with its faults on demand. */
#ifndef IB_BACKEND_FAKE_GEN_FAKE_H
#define IB_BACKEND_FAKE_GEN_FAKE_H

#include "backend/registry.h"
#include "workload/generation.h"

/* Durations in ms of virtual time. A prefill of n tokens at positions
 * pos..pos+n-1 takes prefill_ms + n x prefill_token_ms + prefill_pos_ms x
 * (the sum of those positions); a step of s sequences at position pos takes
 * step_ms + (s - 1) x step_seq_ms + pos x step_pos_ms. Of each, the share
 * queued_fraction is queued (only synchronize waits for it); the host spends
 * the rest inside the call. */
typedef struct ib__gen_fake_script {
    double prefill_ms, prefill_token_ms, prefill_pos_ms;
    double step_ms, step_seq_ms, step_pos_ms;
    double queued_fraction; /* in [0, 1] */
    bool gpu_like;          /* info.device CUDA (the queued share, a GPU's queue): the
                               method's choices by device are tested on it */
    /* A prefill right after a decode step takes this much longer (the
     * switch between the two kinds of graph llama.cpp shows on the H200,
     * docs/generate.md, "Pitfalls"). */
    double switch_ms;
    double sample_ms; /* a sampling (host, not queued); 0: no sample op */
    /* The first cold_calls prefills and steps after open (or reopen) take
     * cold_factor times as long. */
    int64_t cold_calls;
    double cold_factor;
    /* Every slow_every-th call (0: none) takes slow_factor times as long:
     * runs that differ, as a loaded machine's do. */
    int64_t slow_every;
    double slow_factor;
    /* set_sequences(s, ctx) with s x ctx above this: IB_ERR_DEVICE_OOM (0:
     * none); more than max_seqs: IB_ERR_UNSUPPORTED. */
    int64_t kv_capacity_tokens;
    int32_t max_seqs;
    /* A step of more than step_oom_seqs sequences (0: none) is
     * IB_ERR_DEVICE_OOM, its context created: the compute buffers some
     * runtimes allocate only at the first decode of a count. */
    int32_t step_oom_seqs;
    /* The call (prefill or step, 0-based since open) that fails with
     * IB_ERR_RUNTIME; -1: none. */
    int64_t fail_at_call;
    /* Threads: the backend chooses `cores` (the cores allowed); the
     * runtime's default is threads_default; a call with more threads than
     * cores takes oversubscribed_factor times as long. threads_default 0:
     * no set_threads op. */
    int32_t cores, threads_default;
    double oversubscribed_factor;
    bool has_reopen;
    /* Real time each prefill and step also takes (us, slept): so that a
     * test can interrupt the program while it measures. 0: none. */
    int64_t sleep_us;
    int32_t n_ctx_train; /* the model's context (0: unknown) */
    /* A scripted energy counter (the energy op) on the virtual clock,
     * fake_power.h: the device draws idle_w, and busy_w + busy_w_per_seq x
     * the sequences of a call (a prefill's: 1) over each prefill's and
     * step's whole time; the counter moves only at multiples of
     * energy_step_ms, in mJ. energy_step_ms 0: no counter. */
    double energy_step_ms, idle_w, busy_w, busy_w_per_seq;
    /* A mixed batch (decode_batch) takes batch_ms + batch_decode_token_ms
     * x its decode tokens (entries of one token) + batch_prefill_token_ms
     * x its prompt tokens (entries of more), so that a test knows every
     * step of the serving engine; queued, cold and slow as the others. */
    double batch_ms, batch_decode_token_ms, batch_prefill_token_ms;
    /* Host time a sequence's removal takes (llama.cpp scans its cache's
     * cells): the serving engine's cost tells it apart from its own. */
    double remove_ms;
} ib__gen_fake_script;

void ib__gen_fake_script_init(ib__gen_fake_script *s);

/* Opens the fake with script s (copied) and the rest of a (model name,
 * sequences, context per sequence). */
ib_status ib__gen_open_fake_script(const ib__gen_fake_script *s, const ib__gen_open_args *a, ib__gen **out,
                                   ib_error *err);

/* What the tests read back: calls made (prefills and steps), clears,
 * reopens, the threads in effect, the positions filled of sequence seq. */
typedef struct ib__gen_fake_counts {
    int64_t prefills, steps, prefill_tokens, clears, reopens, forks, samples, set_sequences, syncs, rewinds;
    int64_t batches, batch_decode_tokens, batch_prefill_tokens, removes; /* decode_batch, remove_sequence */
    /* Batch entries that started a request on a sequence (one other than
     * its cells held, or at position 0), and the cells they reused. */
    int64_t requests_started, cells_reused;
    int32_t threads;
    int32_t last_step_seqs, last_step_pos;
    double idle_ms; /* host time spent waiting in synchronize */
    /* The energy counter's reads before the first prefill or step. */
    int64_t energy_reads_before_calls;
} ib__gen_fake_counts;
ib__gen_fake_counts ib__gen_fake_counts_of(const ib__gen *g);

/* The positions sequence seq holds in the fake's KV cache (0: none). */
int32_t ib__gen_fake_filled(const ib__gen *g, int32_t seq);

#endif
