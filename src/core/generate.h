/* Internals of the generation measurement (generate.c, generate_runs.c,
 * generate_sequences.c, generate_pitfalls.c): what its parts share. The
 * method drives a generation workload (workload/generation.h) and never
 * knows which runtime is behind it. */
#ifndef IB_CORE_GENERATE_H
#define IB_CORE_GENERATE_H

#include "core/energy.h"
#include "core/latency.h"
#include "core/progress.h"
#include "workload/generation.h"

/* Bounds of the counts a configuration asks for: far from overflow, and a
 * run's samples bounded (8 bytes a token). */
#define IB__GEN_MAX_TOKENS (1 << 20)
/* The most token samples a measurement keeps (runs x new tokens, 8 bytes
 * each: 256 MB). */
#define IB__GEN_MAX_SAMPLES ((int64_t)1 << 25)

/* The context a sequence gets for cfg's request: ctx_per_seq, else the
 * depth (the prompt's by default) plus the new tokens. */
int32_t ib__gen_context_per_seq(const ib_gen_config *cfg);

/* One run of a measurement: the KV cache cleared, a prompt of `prompt`
 * tokens prefilled and timed to synchronized logits (0: none), the context
 * filled untimed up to `depth`, sequence 0 forked to `n_seqs`, then `steps`
 * decode steps at positions depth, depth + 1, ..., each timed alone
 * (synchronized unless sync_steps is false: the pitfall), a greedy sampling
 * after each timed apart when sample is set. */
typedef struct ib__gen_run_spec {
    int32_t n_seqs, prompt, depth, steps;
    bool sync_steps;
    bool sample;
} ib__gen_run_spec;

/* What a measurement's parts share. */
typedef struct ib__genm {
    ib__gen *g;
    const ib_gen_config *cfg;
    ib_gen_result *r;
    ib__progress pr;
    int32_t depth; /* the depth in effect (cfg's, or the prompt's) */
    int32_t ctx;   /* context per sequence in effect */
    double *steps; /* scratch of one run: [cfg->new_tokens] */
    double *samples;
    ib__energy_meters energy; /* learned before the cold run */
} ib__genm;

/* Runs spec once: *ttft_ms the prefill's time (NaN without a prompt),
 * steps_ms[0..spec->steps) and samples_ms (NULL unless spec->sample). */
ib_status ib__gen_run(ib__gen *g, const ib__gen_run_spec *spec, double *ttft_ms, double *steps_ms,
                      double *samples_ms, ib_error *err);

/* The total of a run, what warm-up judges steadiness on. */
double ib__gen_run_total(double ttft_ms, const double *steps_ms, int32_t steps);

/* Warm-up of runs of spec under rule (latency.h's loop): steadiness on
 * the runs' totals. */
ib_status ib__gen_warm_up(ib__genm *m, const ib__gen_run_spec *spec, const ib__warmup_rule *rule,
                          int64_t *runs_done, double *ms_spent, bool *steady, ib_error *err);

/* The single sequence's spec: the prompt, the depth, N steps. */
ib__gen_run_spec ib__gen_request_spec(const ib__genm *m);

/* The sequences decoded together (generate_sequences.c): the list, or the
 * search and its curve; peak, knee, the best within the TPOT budget. */
ib_status ib__gen_sequences(ib__genm *m, ib_error *err);

/* Energy (generate_energy.c, docs/energy.md): the meters opened and their
 * step and the idle power learned, the device idle (before the cold run);
 * closed. */
void ib__gen_energy_open(ib__genm *m);
/* What a generation workload counts its energy with: its own counter (the
 * fake's), else NVML's on its GPU, else none ("a CPU run"). */
ib__energy_source ib__gen_energy_source(ib__gen *g);
void ib__gen_energy_close(ib__genm *m);

/* The energy per token of a decode window at spec's sequences and depth,
 * its steps cycling over the positions spec's timed steps had (unit_ms:
 * one step's time, the mean of those timed); cpu may be NULL. */
ib_status ib__gen_decode_energy(ib__genm *m, const ib__gen_run_spec *spec, double unit_ms, ib_energy *device,
                                ib_energy *cpu, ib_error *err);

/* The single sequence's windows, after its timed runs: the decode window
 * and the prefill window (prefills of the prompt, per prompt token). */
ib_status ib__gen_request_energy(ib__genm *m, ib_error *err);

/* The pitfalls' rows (generate_pitfalls.c), after the correct figures. */
ib_status ib__gen_pitfalls(ib__genm *m, ib_error *err);

#endif
