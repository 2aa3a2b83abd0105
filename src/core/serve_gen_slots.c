/* The slots of a generative model's serve by default: the most sequences
 * whose KV cache fits at the context of a slot (the longest request's
 * prompt + output), found as generate finds the sequences it can decode
 * together (search.h: out of memory is "does not fit"), at most
 * IB_GEN_SERVE_MAX_DEFAULT_SLOTS (docs/serve-generative.md, "The slots by
 * default"). The search starts from the top: on a GPU the cap usually
 * fits, one probe. */
#include "core/search.h"
#include "core/serve_gen_machine.h"

#include <stdlib.h>

typedef struct probe {
    ib__gen *g;
    int32_t ctx;
    ib__gen_batch_entry *entries; /* a token of each sequence at position 0 */
    ib_error limit;               /* the runtime's words where it did not fit */
} probe;

/* n sequences fit when their context is created and a batch of a token
 * of each runs (buffers some runtimes allocate at the first decode);
 * the sequences are removed after. */
static ib_status slots_fit(void *user, int64_t n, bool growing, bool *fits, ib_error *err)
{
    (void)growing;
    probe *p = user;
    ib__gen *g = p->g;
    ib_error why = { { 0 } };
    ib_status st = g->ops->set_sequences(g, (int32_t)n, p->ctx, &why);
    for (int32_t s = 0; s < (int32_t)n; s++)
        p->entries[s] = (ib__gen_batch_entry){ s, 0, 1, true, (uint32_t)s, 0 };
    if (st == IB_OK) st = g->ops->decode_batch(g, p->entries, (size_t)n, &why);
    if (st == IB_OK) st = g->ops->synchronize(g, &why);
    for (int32_t s = 0; st == IB_OK && s < (int32_t)n; s++) st = g->ops->remove_sequence(g, s, 0, &why);
    if (st != IB_OK && !ib__search_capacity_limit(st, n)) {
        if (err) *err = why;
        return st;
    }
    *fits = st == IB_OK;
    if (!*fits) p->limit = why;
    return IB_OK;
}

ib_status ib__gen_serve_slots(ib__gen *g, const ib_gen_serve_config *cfg, int32_t ctx_per_slot,
                              int32_t *slots, ib_gen_slots_from *from, ib_error *err)
{
    *from = IB_GEN_SLOTS_GIVEN;
    *slots = cfg->slots;
    if (cfg->slots > 0) return IB_OK;
    int32_t cap = IB_GEN_SERVE_MAX_DEFAULT_SLOTS;
    if (g->info.n_batch > 0 && g->info.n_batch < cap) cap = g->info.n_batch;
    probe p = { .g = g, .ctx = ctx_per_slot, .entries = calloc((size_t)cap, sizeof *p.entries) };
    IB_FAIL_IF(!p.entries, err, IB_ERR_NO_MEMORY, "out of memory");
    int64_t fit = 0, no_fit = 0;
    ib_status st = ib__search_largest(slots_fit, &p, cap, true, cfg->run.cancel, "slots", &fit, &no_fit, err);
    free(p.entries);
    IB_TRY(st);
    IB_FAIL_IF(fit == 0, err, IB_ERR_DEVICE_OOM, "the KV cache of one slot of %d tokens does not fit (%s)",
               (int)ctx_per_slot, p.limit.message);
    *slots = (int32_t)fit;
    *from = no_fit == 0 ? IB_GEN_SLOTS_CAPPED : IB_GEN_SLOTS_KV_CAPACITY;
    return IB_OK;
}
