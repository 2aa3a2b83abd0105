/* The engine's own cost per step (docs/serve-generative.md, "The engine's
 * own cost"): its steps' time against their decode_batch + synchronize
 * inside them, and against a bare loop replaying the measured run's mixed
 * batches back to back through the same two calls (and the same
 * removals), with nothing of the engine around them. */
#include "core/serve_gen_machine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ib_status ib__gen_serve_grow(void **p, size_t *cap, size_t need, size_t size, ib_error *err)
{
    if (need <= *cap) return IB_OK;
    size_t grown = *cap ? *cap * 2 : 1024;
    while (grown < need) grown *= 2;
    void *q = realloc(*p, grown * size);
    IB_FAIL_IF(!q, err, IB_ERR_NO_MEMORY, "out of memory keeping the run's steps");
    *p = q;
    *cap = grown;
    return IB_OK;
}

ib_status ib__gen_batch_log_add(ib__gen_batch_log *log, const ib__gen_batch_entry *entries, size_t n,
                                ib_error *err)
{
    IB_TRY(ib__gen_serve_grow((void **)&log->entries, &log->cap_entries, log->n_entries + n,
                              sizeof *log->entries, err));
    IB_TRY(
        ib__gen_serve_grow((void **)&log->steps, &log->cap_steps, log->n_steps + 1, sizeof *log->steps, err));
    memcpy(log->entries + log->n_entries, entries, n * sizeof *entries);
    log->steps[log->n_steps++] = (ib__gen_batch_span){ log->n_entries, n };
    log->n_entries += n;
    return IB_OK;
}

void ib__gen_batch_log_free(ib__gen_batch_log *log)
{
    free(log->entries);
    free(log->steps);
    memset(log, 0, sizeof *log);
}

void ib__gen_serve_engine_figures(double engine_ms, double runtime_ms, double removal_ms, size_t steps,
                                  ib_gen_serve_engine_cost *out)
{
    *out = (ib_gen_serve_engine_cost){ .steps = steps, .bare_us_per_step = NAN, .against_bare_us = NAN };
    double n = steps ? (double)steps : NAN;
    out->engine_us_per_step = engine_ms * 1e3 / n;
    out->runtime_us_per_step = runtime_ms * 1e3 / n;
    out->removal_us_per_step = removal_ms * 1e3 / n;
    out->own_us_per_step = (engine_ms - runtime_ms - removal_ms) * 1e3 / n;
}

/* The sequences the replay fed and has not removed yet (next[s]: the
 * position sequence s goes on from, 0 when empty). */
static ib_status remove_all(ib__gen *g, int32_t *next, int32_t slots, ib_error *err)
{
    for (int32_t s = 0; s < slots; s++)
        if (next[s] > 0) {
            IB_TRY(g->ops->remove_sequence(g, s, 0, err));
            next[s] = 0;
        }
    return IB_OK;
}

ib_status ib__gen_sample_outputs(ib__gen *g, const ib__gen_batch_entry *entries, size_t n, ib_error *err)
{
    for (size_t k = 0; k < n; k++)
        if (entries[k].logits) IB_TRY(g->ops->sample(g, entries[k].seq, err));
    return IB_OK;
}

/* One step of the bare loop: an entry that does not go on where its
 * sequence left off begins a new request (the engine dropped the cells
 * past its reused prefix at admission: the same trim here), then the
 * batch and, when sampling, its samples. */
static ib_status replay_step(ib__gen *g, const ib__gen_batch_entry *e, size_t n, bool sampling, int32_t *next,
                             ib_error *err)
{
    for (size_t k = 0; k < n; k++) {
        if (e[k].pos != next[e[k].seq]) IB_TRY(g->ops->remove_sequence(g, e[k].seq, e[k].pos, err));
        next[e[k].seq] = e[k].pos + e[k].n_tokens;
    }
    IB_TRY(g->ops->decode_batch(g, e, n, err));
    IB_TRY(g->ops->synchronize(g, err));
    return sampling ? ib__gen_sample_outputs(g, e, n, err) : IB_OK;
}

ib_status ib__gen_serve_replay(ib__gen *g, const ib__gen_batch_log *log, int32_t slots, bool sampling,
                               const volatile int *cancel, ib_gen_serve_engine_cost *out, ib_error *err)
{
    int32_t *next = calloc(slots > 0 ? (size_t)slots : 1, sizeof *next);
    IB_FAIL_IF(!next, err, IB_ERR_NO_MEMORY, "out of memory");
    ib_status st = IB_OK;
    double t0 = ib__gen_now_ms(g);
    for (size_t i = 0; i < log->n_steps && st == IB_OK; i++)
        st = ib__cancelled(cancel) ? ib__fail(err, IB_ERR_INTERRUPTED, "interrupted")
                                   : replay_step(g, log->entries + log->steps[i].first, log->steps[i].count,
                                                 sampling, next, err);
    ib_error ignored; /* a failure's own words are kept */
    ib_status removed = remove_all(g, next, slots, st == IB_OK ? err : &ignored);
    if (st == IB_OK) st = removed;
    double t1 = ib__gen_now_ms(g);
    free(next);
    IB_TRY(st);
    out->replayed = true;
    out->bare_us_per_step = (t1 - t0) * 1e3 / (double)log->n_steps;
    out->against_bare_us = out->engine_us_per_step - out->bare_us_per_step;
    return IB_OK;
}
