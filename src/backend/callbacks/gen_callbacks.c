/* A generation workload whose operations are the caller's callbacks
 * (include/inferbench.h, ib_gen_callbacks): any model the caller can drive
 * token by token (a PyTorch model from Python, a runtime this library does
 * not know) measured by the generation method. This file turns the public,
 * versioned table into the internal one (workload/generation.h): it checks
 * the table once, fills what an optional slot left out, keeps the info the
 * caller stated, and makes every failure a status with one line. */
#include "base/common.h"
#include "workload/generation.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The table's first size (version 1 before the mixed batch's slots): a
 * caller built then is still taken, without them. */
#define FIRST_SIZE offsetof(ib_gen_callbacks, decode_batch)

/* The public entry and the internal one are the same bytes: the engine's
 * batch is handed over as it is, each step, without a copy. */
_Static_assert(sizeof(ib_gen_batch_entry) == sizeof(ib__gen_batch_entry) &&
                   offsetof(ib_gen_batch_entry, pos) == offsetof(ib__gen_batch_entry, pos) &&
                   offsetof(ib_gen_batch_entry, n_tokens) == offsetof(ib__gen_batch_entry, n_tokens) &&
                   offsetof(ib_gen_batch_entry, logits) == offsetof(ib__gen_batch_entry, logits) &&
                   offsetof(ib_gen_batch_entry, request) == offsetof(ib__gen_batch_entry, request) &&
                   offsetof(ib_gen_batch_entry, shared) == offsetof(ib__gen_batch_entry, shared),
               "ib_gen_batch_entry mirrors ib__gen_batch_entry");

typedef struct gen_cb {
    ib_gen_callbacks cb;
    ib_gen_info stated; /* the info as given at open: its fixed capacity */
    ib__gen_ops ops;    /* cb_ops less the optional slots not given */
} gen_cb;

static gen_cb *impl(ib__gen *g) { return g->impl; }

void ib_gen_callbacks_init(ib_gen_callbacks *cb)
{
    *cb = (ib_gen_callbacks){ .struct_size = sizeof *cb, .version = IB_GEN_CALLBACKS_VERSION };
}

/* What a slot returned, as a status the method can act on: anything that
 * is not one is a runtime failure, and a failure always has its line. */
static ib_status answer(int st, const char *slot, ib_error *err)
{
    if (st == IB_OK) return IB_OK;
    if (st > IB_OK || st < IB_ERR_DEADLOCK)
        return ib__fail(err, IB_ERR_RUNTIME, "the callbacks' %s returned %d, not an ib_status", slot, st);
    if (err && !err->message[0])
        ib__fail(err, (ib_status)st, "the callbacks' %s failed (%s)", slot, ib_status_str((ib_status)st));
    return (ib_status)st;
}

/* A slot's err starts empty, so that a slot that fails silently is told
 * apart from one that explained. */
static ib_error *fresh(ib_error *err)
{
    if (err) err->message[0] = '\0';
    return err;
}

static ib_status cb_clear(ib__gen *g, ib_error *err)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    return answer(c->clear(c->user, fresh(err)), "clear", err);
}

static ib_status cb_prefill(ib__gen *g, int32_t seq, int32_t pos, int32_t n_tokens, ib_error *err)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    return answer(c->prefill(c->user, seq, pos, n_tokens, fresh(err)), "prefill", err);
}

static ib_status cb_step(ib__gen *g, int32_t n_seqs, int32_t pos, ib_error *err)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    return answer(c->step(c->user, n_seqs, pos, fresh(err)), "step", err);
}

/* No synchronize slot: the calls return once done, nothing to wait for. */
static ib_status cb_synchronize(ib__gen *g, ib_error *err)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    return c->synchronize ? answer(c->synchronize(c->user, fresh(err)), "synchronize", err) : IB_OK;
}

static ib_status cb_fork(ib__gen *g, int32_t n_seqs, int32_t n_pos, ib_error *err)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    if (n_seqs <= 1) return IB_OK; /* nothing to copy */
    IB_FAIL_IF(!c->fork, err, IB_ERR_UNSUPPORTED, "the callbacks give no fork: one sequence only");
    return answer(c->fork(c->user, n_seqs, n_pos, fresh(err)), "fork", err);
}

static void describe(ib__gen *g)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    if (c->describe) c->describe(c->user, &g->info);
}

/* Without a set_sequences slot the cache is the one stated: its sequences
 * and its tokens bound what fits. */
static ib_status fixed_capacity(const ib_gen_info *s, int32_t n_seqs, int32_t ctx_per_seq, ib_error *err)
{
    int32_t most = s->n_seq_max > 0 ? s->n_seq_max : 1;
    IB_FAIL_IF(n_seqs > most, err, IB_ERR_UNSUPPORTED,
               "%d sequences: the callbacks' cache holds %d (no set_sequences)", (int)n_seqs, (int)most);
    IB_FAIL_IF(s->n_ctx > 0 && (int64_t)n_seqs * ctx_per_seq > s->n_ctx, err, IB_ERR_INVALID_ARG,
               "%d sequences of %d tokens pass the callbacks' context of %d tokens (no set_sequences)",
               (int)n_seqs, (int)ctx_per_seq, (int)s->n_ctx);
    return IB_OK;
}

static ib_status cb_set_sequences(ib__gen *g, int32_t n_seqs, int32_t ctx_per_seq, ib_error *err)
{
    gen_cb *f = impl(g);
    const ib_gen_callbacks *c = &f->cb;
    IB_FAIL_IF(n_seqs < 1 || ctx_per_seq < 1, err, IB_ERR_INVALID_ARG, "%d sequences of %d tokens",
               (int)n_seqs, (int)ctx_per_seq);
    if (c->set_sequences)
        IB_TRY(answer(c->set_sequences(c->user, n_seqs, ctx_per_seq, fresh(err)), "set_sequences", err));
    else
        IB_TRY(fixed_capacity(&f->stated, n_seqs, ctx_per_seq, err));
    g->info.n_seq_max = n_seqs;
    g->info.n_ctx = n_seqs * ctx_per_seq;
    /* What the caller stated of another cache is not this one's: its
     * describe says it, else unknown. */
    if (c->set_sequences) g->info.kv_bytes = 0;
    describe(g);
    return IB_OK;
}

static ib_status cb_sample(ib__gen *g, int32_t seq, ib_error *err)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    return answer(c->sample(c->user, seq, fresh(err)), "sample", err);
}

static ib_status cb_reopen(ib__gen *g, ib_error *err)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    return answer(c->reopen(c->user, fresh(err)), "reopen", err);
}

static ib_status cb_set_threads(ib__gen *g, int32_t n_threads, ib_error *err)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    IB_TRY(answer(c->set_threads(c->user, n_threads, fresh(err)), "set_threads", err));
    g->info.n_threads = n_threads;
    return IB_OK;
}

static ib_status cb_decode_batch(ib__gen *g, const ib__gen_batch_entry *entries, size_t n_entries,
                                 ib_error *err)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    return answer(c->decode_batch(c->user, (const ib_gen_batch_entry *)entries, n_entries, fresh(err)),
                  "decode_batch", err);
}

static ib_status cb_remove_sequence(ib__gen *g, int32_t seq, int32_t from_pos, ib_error *err)
{
    const ib_gen_callbacks *c = &impl(g)->cb;
    return answer(c->remove_sequence(c->user, seq, from_pos, fresh(err)), "remove_sequence", err);
}

static void cb_destroy(ib__gen *g)
{
    gen_cb *f = impl(g);
    if (f->cb.destroy) f->cb.destroy(f->cb.user);
    free(f);
    free(g);
}

/* The table of a workload: the optional slots only where the caller gave
 * them (the method checks them for NULL). */
static const ib__gen_ops cb_ops = {
    .version = IB__GEN_OPS_VERSION,
    .clear = cb_clear,
    .prefill = cb_prefill,
    .step = cb_step,
    .synchronize = cb_synchronize,
    .fork = cb_fork,
    .set_sequences = cb_set_sequences,
    .sample = cb_sample,
    .reopen = cb_reopen,
    .set_threads = cb_set_threads,
    .decode_batch = cb_decode_batch,
    .remove_sequence = cb_remove_sequence,
    .destroy = cb_destroy,
};

static double caller_now(const void *ctx)
{
    const ib_gen_callbacks *c = &((const gen_cb *)ctx)->cb;
    return c->now_ms(c->user);
}

static ib_status check_table(const ib_gen_callbacks *cb, ib_error *err)
{
    IB_FAIL_IF(!cb, err, IB_ERR_INVALID_ARG, "no generation callbacks");
    IB_FAIL_IF(cb->version != IB_GEN_CALLBACKS_VERSION, err, IB_ERR_INVALID_ARG,
               "generation callbacks of version %u, but this inferbench speaks version %u: rebuild against "
               "this inferbench's inferbench.h",
               cb->version, IB_GEN_CALLBACKS_VERSION);
    IB_FAIL_IF(cb->struct_size < FIRST_SIZE, err, IB_ERR_INVALID_ARG,
               "generation callbacks of %zu bytes, version %u needs at least %zu: initialize them with "
               "ib_gen_callbacks_init",
               cb->struct_size, IB_GEN_CALLBACKS_VERSION, FIRST_SIZE);
    bool batch = cb->struct_size >= sizeof *cb && cb->decode_batch;
    IB_FAIL_IF(cb->struct_size >= sizeof *cb && batch != (cb->remove_sequence != NULL), err,
               IB_ERR_INVALID_ARG, "the generation callbacks give %s without %s: serving needs both",
               batch ? "decode_batch" : "remove_sequence", batch ? "remove_sequence" : "decode_batch");
    const char *missing = !cb->clear ? "clear" : !cb->prefill ? "prefill" : !cb->step ? "step" : NULL;
    IB_FAIL_IF(missing, err, IB_ERR_INVALID_ARG, "the generation callbacks give no %s (required)", missing);
    IB_FAIL_IF(!(cb->clock_resolution_ms >= 0), err, IB_ERR_INVALID_ARG,
               "the callbacks' clock resolution must be 0 or more ms");
    return IB_OK;
}

/* The info as stated, with the library's defaults where it says nothing. */
static ib_gen_info stated_info(const ib_gen_info *info)
{
    ib_gen_info in = info ? *info : (ib_gen_info){ 0 };
    /* The caller's strings and list, bounded: what every report reads. */
    char *text[] = { in.model,           in.arch,           in.model_type, in.weights_type, in.kv_type,
                     in.runtime_version, in.runtime_library };
    size_t cap[] = { sizeof in.model,          sizeof in.arch,    sizeof in.model_type,
                     sizeof in.weights_type,   sizeof in.kv_type, sizeof in.runtime_version,
                     sizeof in.runtime_library };
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) text[i][cap[i] - 1] = '\0';
    if (in.options.n > IB_MAX_OPTIONS) in.options.n = IB_MAX_OPTIONS;
    for (size_t i = 0; i < in.options.n; i++) {
        in.options.items[i].key[sizeof in.options.items[i].key - 1] = '\0';
        in.options.items[i].value[sizeof in.options.items[i].value - 1] = '\0';
    }
    if (!in.model[0]) ib__strlcpy(in.model, "callbacks", sizeof in.model);
    if (in.device == IB_DEVICE_AUTO) in.device = IB_DEVICE_CPU;
    return in;
}

ib_status ib_gen_open_callbacks(const ib_gen_callbacks *cb, const ib_gen_info *info, ib_gen **out,
                                ib_error *err)
{
    *out = NULL;
    IB_TRY(check_table(cb, err));
    ib__gen *g = calloc(1, sizeof *g);
    gen_cb *f = calloc(1, sizeof *f);
    if (!g || !f) {
        free(g);
        free(f);
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory");
    }
    /* A table of the first size has no mixed batch: its tail stays NULL. */
    memcpy(&f->cb, cb, cb->struct_size < sizeof f->cb ? cb->struct_size : sizeof f->cb);
    f->cb.struct_size = sizeof f->cb;
    f->stated = stated_info(info);
    f->ops = cb_ops;
    if (!cb->sample) f->ops.sample = NULL;
    if (!cb->reopen) f->ops.reopen = NULL;
    if (!cb->set_threads) f->ops.set_threads = NULL;
    if (!f->cb.decode_batch) {
        f->ops.decode_batch = NULL;
        f->ops.remove_sequence = NULL;
    }
    g->ops = &f->ops;
    g->impl = f;
    g->info = f->stated;
    g->clock = ib__host_clock();
    if (cb->now_ms)
        g->clock = (ib__clock){ .now_ms = caller_now, .ctx = f, .resolution_ms = cb->clock_resolution_ms };
    describe(g);
    *out = g;
    return IB_OK;
}
