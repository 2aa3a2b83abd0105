/* Serving a generative model (docs/serve-generative.md): what the engine
 * (serve_gen.c) asks of the machine around it: the slots by default
 * (serve_gen_slots.c), the machine's state and the run's energy
 * (serve_gen_energy.c), the engine's own cost per step (serve_gen_cost.c). */
#ifndef IB_CORE_SERVE_GEN_MACHINE_H
#define IB_CORE_SERVE_GEN_MACHINE_H

#include "core/energy.h"
#include "env/env.h"
#include "workload/generation.h"

/* ------------------------------------------------------------------------ */
/* The slots                                                                 */
/* ------------------------------------------------------------------------ */

/* The slots of cfg (cfg->slots when given), else the most sequences whose
 * KV cache fits at ctx_per_slot tokens each: generate's search (out of
 * memory creating the context, or at the first batch of a token of every
 * sequence, is "does not fit"), from the top: IB_GEN_SERVE_MAX_DEFAULT_SLOTS
 * or n_batch first (a step decodes every slot). None fitting:
 * IB_ERR_DEVICE_OOM, one line. g's context is left as the last probe's. */
ib_status ib__gen_serve_slots(ib__gen *g, const ib_gen_serve_config *cfg, int32_t ctx_per_slot,
                              int32_t *slots, ib_gen_slots_from *from, ib_error *err);

/* ------------------------------------------------------------------------ */
/* The machine and the energy of a run                                       */
/* ------------------------------------------------------------------------ */

/* The state of the machine over a serve, as forward-pass serve watches it
 * (the GPU's state sampled, other processes' CPU use, the threads), and
 * its energy meters, learned before the warm-up. */
typedef struct ib__gen_serve_machine {
    ib__gen *g;
    ib_env *env;
    ib__gpu_sampler *sampler;
    ib__cpu_watch cpu;
    ib__energy_meters energy;
    bool open;
} ib__gen_serve_machine;

/* Captures env's facts (the GPU's where g runs on one), starts watching,
 * opens the energy meters run asks for and learns the counter's step and
 * the idle power: call it with the device idle, before the warm-up. */
void ib__gen_serve_machine_open(ib__gen_serve_machine *m, ib__gen *g, const ib_config *run, ib_env *env);

/* Stops watching: the machine's warnings (IB_WARN_*). Closes the meters. */
unsigned ib__gen_serve_machine_close(ib__gen_serve_machine *m);

/* One served run's energy window (a rate of a curve calls these around
 * each run): begun at the schedule's origin, ended at its last
 * completion, neither end aligned on the counter (the schedule starts
 * when it starts; padding would change what is measured). */
ib_status ib__gen_serve_energy_begin(ib__gen_serve_machine *m, ib_error *err);
ib_status ib__gen_serve_energy_end(ib__gen_serve_machine *m, ib_error *err);

/* The figures of the window just ended over r's completed requests (their
 * output tokens), into *out; run_status: how the run ended (not IB_OK: no
 * figure). */
void ib__gen_serve_energy_figures(const ib__gen_serve_machine *m, ib_status run_status,
                                  const ib_gen_serve_result *r, ib_gen_serve_energy *out);

/* ------------------------------------------------------------------------ */
/* The engine's own cost                                                     */
/* ------------------------------------------------------------------------ */

/* The measured run's mixed batches, in order: step i's are the count
 * entries from entries[steps[i].first]. */
typedef struct ib__gen_batch_span {
    size_t first, count;
} ib__gen_batch_span;

typedef struct ib__gen_batch_log {
    ib__gen_batch_entry *entries;
    size_t n_entries, cap_entries;
    ib__gen_batch_span *steps;
    size_t n_steps, cap_steps;
} ib__gen_batch_log;

/* Grows *p (of *cap elements of size bytes) to hold need, doubling. */
ib_status ib__gen_serve_grow(void **p, size_t *cap, size_t need, size_t size, ib_error *err);

ib_status ib__gen_batch_log_add(ib__gen_batch_log *log, const ib__gen_batch_entry *entries, size_t n,
                                ib_error *err);
void ib__gen_batch_log_free(ib__gen_batch_log *log);

/* The engine's figures: its steps' total time engine_ms (each from its
 * start to its bookkeeping done), runtime_ms (their decode_batch +
 * synchronize, and the samples when sampling) and removal_ms (the
 * runtime's sequence removals in them) over steps. */
void ib__gen_serve_engine_figures(double engine_ms, double runtime_ms, double removal_ms, size_t steps,
                                  ib_gen_serve_engine_cost *out);

/* The step's tokens picked (--sampling greedy): a greedy sample of every
 * entry whose logits the step read, after its synchronize. */
ib_status ib__gen_sample_outputs(ib__gen *g, const ib__gen_batch_entry *entries, size_t n, ib_error *err);

/* Replays log through decode_batch + synchronize (and the samples, when
 * sampling) in a bare loop, each sequence removed before its prompt starts
 * again at position 0 and at the end (as the engine removed it), timed on
 * g's clock as one span:
 * out->bare_us_per_step and against_bare_us. g's cache holds no sequence
 * before (the engine removed each) and after, a failure's or cancel's
 * (IB_ERR_INTERRUPTED) too. */
ib_status ib__gen_serve_replay(ib__gen *g, const ib__gen_batch_log *log, int32_t slots, bool sampling,
                               const volatile int *cancel, ib_gen_serve_engine_cost *out, ib_error *err);

#endif
