/* The scripted generation workload: a generative model on a virtual clock.
 * Each prefill and step takes its scripted time, part of it queued (what
 * only synchronize waits for); the first calls are slower (cold); the KV
 * cache has a capacity; a call fails on demand. It also checks what it is
 * fed: each sequence is filled position after position, never past its
 * context, so that the method's bookkeeping is tested as well as its
 * arithmetic. */
#include "backend/fake/gen_fake.h"
#include "backend/fake/fake_power.h"
#include "backend/registry.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the fake's KV cache takes per token of context (for info.kv_bytes). */
#define KV_BYTES_PER_TOKEN 2048

typedef struct gen_fake {
    ib__gen_fake_script s;
    double now_ms;
    double device_done_ms; /* when the queued work ends */
    int64_t calls;         /* prefills and steps since open */
    int64_t calls_since_open;
    int32_t n_seqs, ctx_per_seq;
    int32_t filled[IB_GEN_MAX_SEQUENCES]; /* positions filled, per sequence */
    /* Whose ids each sequence's cells hold (a batch entry's request), and
     * below which position they are the shared prefix's: a new request
     * may reuse only those (the engine's prefix cache). */
    uint32_t held_request[IB_GEN_MAX_SEQUENCES];
    int32_t held_shared[IB_GEN_MAX_SEQUENCES];
    bool last_was_step; /* the last call a decode step: a prefill pays switch_ms */
    ib__gen_fake_counts counts;
    ib__fake_power power; /* the scripted energy counter's */
} gen_fake;

static gen_fake *impl(ib__gen *g) { return g->impl; }

static double virtual_now(const void *ctx) { return ((const gen_fake *)ctx)->now_ms; }

static void virtual_wait_until(const void *ctx, double t_ms)
{
    gen_fake *f = (gen_fake *)(uintptr_t)ctx;
    f->now_ms = fmax(f->now_ms, t_ms);
}

void ib__gen_fake_script_init(ib__gen_fake_script *s)
{
    *s = (ib__gen_fake_script){
        .prefill_ms = 2,
        .prefill_token_ms = 0.0078125,
        .step_ms = 1,
        .step_seq_ms = 0.125,
        .step_pos_ms = 0.0009765625,
        .queued_fraction = 0.5,
        .cold_calls = 2,
        .cold_factor = 8,
        .slow_factor = 1,
        .max_seqs = IB_GEN_MAX_SEQUENCES,
        .fail_at_call = -1,
        .cores = 2,
        .oversubscribed_factor = 1,
        .has_reopen = true,
        .n_ctx_train = 8192,
        .batch_ms = 1,
        .batch_decode_token_ms = 0.125,
        .batch_prefill_token_ms = 0.0078125,
    };
}

/* One prefill or step of ms over n_seqs sequences: the host's part now,
 * the queued part after what the device still has; the whole of it at the
 * call's power, for the energy counter. */
static ib_status execute(gen_fake *f, double ms, int32_t n_seqs, ib_error *err)
{
    int64_t index = f->calls++;
    if (index == 0) f->counts.energy_reads_before_calls = f->power.reads;
    if (f->s.sleep_us > 0)
        nanosleep(&(struct timespec){ f->s.sleep_us / 1000000, f->s.sleep_us % 1000000 * 1000 }, NULL);
    IB_FAIL_IF(index == f->s.fail_at_call, err, IB_ERR_RUNTIME, "fake: call %lld failed", (long long)index);
    if (f->calls_since_open++ < f->s.cold_calls) ms *= f->s.cold_factor;
    if (f->s.slow_every > 0 && (index + 1) % f->s.slow_every == 0) ms *= f->s.slow_factor;
    if (f->counts.threads > f->s.cores) ms *= f->s.oversubscribed_factor;
    double queued = ms * f->s.queued_fraction;
    f->now_ms += ms - queued;
    f->device_done_ms = fmax(f->now_ms, f->device_done_ms) + queued;
    return ib__fake_power_busy(&f->power, f->device_done_ms - ms, f->device_done_ms,
                               f->s.busy_w + f->s.busy_w_per_seq * n_seqs, err);
}

static ib_status gen_clear(ib__gen *g, ib_error *err)
{
    (void)err;
    gen_fake *f = impl(g);
    memset(f->filled, 0, sizeof f->filled);
    f->counts.clears++;
    return IB_OK;
}

static ib_status gen_prefill(ib__gen *g, int32_t seq, int32_t pos, int32_t n_tokens, ib_error *err)
{
    gen_fake *f = impl(g);
    IB_FAIL_IF(seq < 0 || seq >= f->n_seqs, err, IB_ERR_INTERNAL, "fake: prefill of sequence %d of %d",
               (int)seq, (int)f->n_seqs);
    IB_FAIL_IF(n_tokens < 1 || pos != f->filled[seq], err, IB_ERR_INTERNAL,
               "fake: prefill of %d tokens at %d, sequence %d holds %d", (int)n_tokens, (int)pos, (int)seq,
               (int)f->filled[seq]);
    IB_FAIL_IF((int64_t)pos + n_tokens > f->ctx_per_seq, err, IB_ERR_INVALID_ARG,
               "fake: %d tokens at %d pass the context of %d", (int)n_tokens, (int)pos, (int)f->ctx_per_seq);
    double positions = (double)n_tokens * pos + (double)n_tokens * (n_tokens - 1) / 2;
    double after_step = f->last_was_step ? f->s.switch_ms : 0;
    IB_TRY(execute(
        f, f->s.prefill_ms + n_tokens * f->s.prefill_token_ms + positions * f->s.prefill_pos_ms + after_step,
        1, err));
    f->last_was_step = false;
    f->filled[seq] += n_tokens;
    f->counts.prefills++;
    f->counts.prefill_tokens += n_tokens;
    return IB_OK;
}

static ib_status gen_step(ib__gen *g, int32_t n_seqs, int32_t pos, ib_error *err)
{
    gen_fake *f = impl(g);
    IB_FAIL_IF(n_seqs < 1 || n_seqs > f->n_seqs, err, IB_ERR_INTERNAL, "fake: a step of %d sequences of %d",
               (int)n_seqs, (int)f->n_seqs);
    IB_FAIL_IF(pos >= f->ctx_per_seq, err, IB_ERR_INVALID_ARG, "fake: a step at %d passes the context of %d",
               (int)pos, (int)f->ctx_per_seq);
    for (int32_t s = 0; s < n_seqs; s++)
        IB_FAIL_IF(f->filled[s] != pos, err, IB_ERR_INTERNAL, "fake: a step at %d, sequence %d holds %d",
                   (int)pos, (int)s, (int)f->filled[s]);
    IB_FAIL_IF(f->s.step_oom_seqs > 0 && n_seqs > f->s.step_oom_seqs, err, IB_ERR_DEVICE_OOM,
               "fake: a step of %d sequences passes the %d its compute buffers hold", (int)n_seqs,
               (int)f->s.step_oom_seqs);
    IB_TRY(execute(f, f->s.step_ms + (n_seqs - 1) * f->s.step_seq_ms + pos * f->s.step_pos_ms, n_seqs, err));
    f->last_was_step = true;
    for (int32_t s = 0; s < n_seqs; s++) f->filled[s]++;
    f->counts.steps++;
    f->counts.last_step_seqs = n_seqs;
    f->counts.last_step_pos = pos;
    return IB_OK;
}

static ib_status gen_synchronize(ib__gen *g, ib_error *err)
{
    (void)err;
    gen_fake *f = impl(g);
    f->counts.idle_ms += fmax(0, f->device_done_ms - f->now_ms);
    f->now_ms = fmax(f->now_ms, f->device_done_ms);
    f->counts.syncs++;
    return IB_OK;
}

static ib_status gen_fork(ib__gen *g, int32_t n_seqs, int32_t n_pos, ib_error *err)
{
    gen_fake *f = impl(g);
    IB_FAIL_IF(n_seqs < 1 || n_seqs > f->n_seqs || n_pos > f->filled[0], err, IB_ERR_INTERNAL,
               "fake: fork of %d positions to %d sequences (sequence 0 holds %d, %d sequences)", (int)n_pos,
               (int)n_seqs, (int)f->filled[0], (int)f->n_seqs);
    for (int32_t s = 1; s < n_seqs; s++) f->filled[s] = n_pos;
    f->counts.forks++;
    return IB_OK;
}

static ib_status gen_rewind(ib__gen *g, int32_t n_seqs, int32_t n_pos, ib_error *err)
{
    gen_fake *f = impl(g);
    IB_FAIL_IF(n_seqs < 1 || n_seqs > f->n_seqs || n_pos < 0, err, IB_ERR_INTERNAL,
               "fake: rewind of %d sequences of %d to %d", (int)n_seqs, (int)f->n_seqs, (int)n_pos);
    for (int32_t s = 0; s < n_seqs; s++) {
        IB_FAIL_IF(f->filled[s] < n_pos, err, IB_ERR_INTERNAL,
                   "fake: rewind of sequence %d to %d, it holds %d", (int)s, (int)n_pos, (int)f->filled[s]);
        f->filled[s] = n_pos;
    }
    f->counts.rewinds++;
    return IB_OK;
}

/* An entry of a mixed batch as the fake's cache allows it; *seen marks
 * the sequences of the batch so far (each at most once). */
static ib_status check_entry(const gen_fake *f, const ib__gen_batch_entry *e, bool *seen, ib_error *err)
{
    IB_FAIL_IF(e->seq < 0 || e->seq >= f->n_seqs || seen[e->seq], err, IB_ERR_INTERNAL,
               "fake: a batch entry of sequence %d (of %d, or twice)", (int)e->seq, (int)f->n_seqs);
    IB_FAIL_IF(e->n_tokens < 1 || e->pos != f->filled[e->seq], err, IB_ERR_INTERNAL,
               "fake: a batch entry of %d tokens at %d, sequence %d holds %d", (int)e->n_tokens, (int)e->pos,
               (int)e->seq, (int)f->filled[e->seq]);
    IB_FAIL_IF((int64_t)e->pos + e->n_tokens > f->ctx_per_seq, err, IB_ERR_INVALID_ARG,
               "fake: %d tokens at %d pass the context of %d", (int)e->n_tokens, (int)e->pos,
               (int)f->ctx_per_seq);
    seen[e->seq] = true;
    return IB_OK;
}

/* Entry e's ids go to its sequence's cells: a request other than the one
 * the cells hold starts there, after the cells it reuses, which must be
 * the shared prefix of both (no request's own ids are another's). */
static ib_status hold(gen_fake *f, const ib__gen_batch_entry *e, ib_error *err)
{
    int32_t s = e->seq;
    bool starts = e->pos == 0 || e->request != f->held_request[s];
    if (!starts) return IB_OK;
    int32_t shared = f->held_shared[s] < e->shared ? f->held_shared[s] : e->shared;
    IB_FAIL_IF(e->pos > shared, err, IB_ERR_INTERNAL,
               "fake: request %u reuses %d cells of sequence %d, of which only %d are the shared prefix",
               (unsigned)e->request, (int)e->pos, (int)s, (int)(e->pos == 0 ? 0 : shared));
    f->held_request[s] = e->request;
    f->held_shared[s] = e->shared;
    f->counts.requests_started++;
    f->counts.cells_reused += e->pos;
    return IB_OK;
}

static ib_status gen_decode_batch(ib__gen *g, const ib__gen_batch_entry *entries, size_t n_entries,
                                  ib_error *err)
{
    gen_fake *f = impl(g);
    bool seen[IB_GEN_MAX_SEQUENCES] = { false };
    int64_t decode = 0, prefill = 0;
    IB_FAIL_IF(n_entries < 1, err, IB_ERR_INTERNAL, "fake: an empty batch");
    for (size_t i = 0; i < n_entries; i++) {
        IB_TRY(check_entry(f, &entries[i], seen, err));
        IB_TRY(hold(f, &entries[i], err));
        if (entries[i].n_tokens == 1)
            decode++;
        else
            prefill += entries[i].n_tokens;
    }
    IB_FAIL_IF(decode + prefill > g->info.n_batch, err, IB_ERR_INVALID_ARG,
               "fake: a batch of %lld tokens passes n_batch %d", (long long)(decode + prefill),
               (int)g->info.n_batch);
    IB_TRY(execute(f,
                   f->s.batch_ms + (double)decode * f->s.batch_decode_token_ms +
                       (double)prefill * f->s.batch_prefill_token_ms,
                   (int32_t)n_entries, err));
    for (size_t i = 0; i < n_entries; i++) f->filled[entries[i].seq] += entries[i].n_tokens;
    f->counts.batches++;
    f->counts.batch_decode_tokens += decode;
    f->counts.batch_prefill_tokens += prefill;
    return IB_OK;
}

/* Costs nothing: a later entry pays only for the tokens it sends. */
static ib_status gen_remove_sequence(ib__gen *g, int32_t seq, int32_t from_pos, ib_error *err)
{
    gen_fake *f = impl(g);
    IB_FAIL_IF(seq < 0 || seq >= f->n_seqs || from_pos < 0 || from_pos > f->filled[seq], err, IB_ERR_INTERNAL,
               "fake: removing sequence %d of %d from %d (it holds %d)", (int)seq, (int)f->n_seqs,
               (int)from_pos, (int)(seq >= 0 && seq < f->n_seqs ? f->filled[seq] : 0));
    f->filled[seq] = from_pos;
    f->counts.removes++;
    f->now_ms += f->s.remove_ms;
    return IB_OK;
}

int32_t ib__gen_fake_filled(const ib__gen *g, int32_t seq)
{
    return ((const gen_fake *)g->impl)->filled[seq];
}

static bool gen_energy(void *g, ib__energy_counter *c, char *note, size_t cap)
{
    return ib__fake_power_counter(&impl(g)->power, c, note, cap);
}

static void describe_sequences(ib__gen *g)
{
    gen_fake *f = impl(g);
    g->info.n_seq_max = f->n_seqs;
    g->info.n_ctx = f->n_seqs * f->ctx_per_seq;
    g->info.kv_bytes = (uint64_t)g->info.n_ctx * KV_BYTES_PER_TOKEN;
}

static ib_status gen_set_sequences(ib__gen *g, int32_t n_seqs, int32_t ctx_per_seq, ib_error *err)
{
    gen_fake *f = impl(g);
    f->counts.set_sequences++;
    IB_FAIL_IF(n_seqs < 1 || ctx_per_seq < 1, err, IB_ERR_INVALID_ARG, "fake: %d sequences of %d tokens",
               (int)n_seqs, (int)ctx_per_seq);
    IB_FAIL_IF(n_seqs > f->s.max_seqs, err, IB_ERR_UNSUPPORTED, "fake: at most %d sequences",
               (int)f->s.max_seqs);
    IB_FAIL_IF(f->s.kv_capacity_tokens > 0 && (int64_t)n_seqs * ctx_per_seq > f->s.kv_capacity_tokens, err,
               IB_ERR_DEVICE_OOM, "fake: a KV cache of %lld tokens passes the capacity of %lld",
               (long long)n_seqs * ctx_per_seq, (long long)f->s.kv_capacity_tokens);
    f->now_ms = fmax(f->now_ms, f->device_done_ms); /* the old context ends after its work */
    f->n_seqs = n_seqs;
    f->ctx_per_seq = ctx_per_seq;
    memset(f->filled, 0, sizeof f->filled);
    describe_sequences(g);
    return IB_OK;
}

static ib_status gen_sample(ib__gen *g, int32_t seq, ib_error *err)
{
    gen_fake *f = impl(g);
    IB_FAIL_IF(seq < 0 || seq >= f->n_seqs || f->filled[seq] == 0, err, IB_ERR_INTERNAL,
               "fake: sampling sequence %d, which has no logits", (int)seq);
    f->now_ms = fmax(f->now_ms, f->device_done_ms) + f->s.sample_ms; /* reads the logits */
    f->counts.samples++;
    return IB_OK;
}

static ib_status gen_reopen(ib__gen *g, ib_error *err)
{
    (void)err;
    gen_fake *f = impl(g);
    f->now_ms = fmax(f->now_ms, f->device_done_ms);
    f->calls_since_open = 0; /* cold again */
    f->last_was_step = false;
    memset(f->filled, 0, sizeof f->filled);
    f->counts.reopens++;
    return IB_OK;
}

static ib_status gen_set_threads(ib__gen *g, int32_t n_threads, ib_error *err)
{
    IB_FAIL_IF(n_threads < 1, err, IB_ERR_INVALID_ARG, "fake: %d threads", (int)n_threads);
    impl(g)->counts.threads = n_threads;
    g->info.n_threads = n_threads;
    return IB_OK;
}

static void gen_destroy(ib__gen *g)
{
    ib__fake_power_free(&impl(g)->power);
    free(g->impl);
    free(g);
}

/* Optional slots are in each table only where the script has them. */
#define FAKE_OPS(SAMPLE, REOPEN, THREADS)                                                                    \
    {                                                                                                        \
        .version = IB__GEN_OPS_VERSION, .clear = gen_clear, .prefill = gen_prefill, .step = gen_step,        \
        .synchronize = gen_synchronize, .fork = gen_fork, .set_sequences = gen_set_sequences,                \
        .sample = (SAMPLE), .reopen = (REOPEN), .set_threads = (THREADS), .rewind = gen_rewind,              \
        .decode_batch = gen_decode_batch, .remove_sequence = gen_remove_sequence, .energy = gen_energy,      \
        .destroy = gen_destroy,                                                                              \
    }
static const ib__gen_ops fake_ops[8] = {
    FAKE_OPS(NULL, NULL, NULL),
    FAKE_OPS(gen_sample, NULL, NULL),
    FAKE_OPS(NULL, gen_reopen, NULL),
    FAKE_OPS(gen_sample, gen_reopen, NULL),
    FAKE_OPS(NULL, NULL, gen_set_threads),
    FAKE_OPS(gen_sample, NULL, gen_set_threads),
    FAKE_OPS(NULL, gen_reopen, gen_set_threads),
    FAKE_OPS(gen_sample, gen_reopen, gen_set_threads),
};

static void describe(ib__gen *g, const ib__gen_open_args *a)
{
    const ib__gen_fake_script *s = &impl(g)->s;
    ib__gen_info *in = &g->info;
    ib__strlcpy(in->model, a->model ? a->model : "fake", sizeof in->model);
    ib__strlcpy(in->arch, "fake", sizeof in->arch);
    ib__strlcpy(in->model_type, "scripted", sizeof in->model_type);
    ib__strlcpy(in->weights_type, "F16", sizeof in->weights_type);
    ib__strlcpy(in->kv_type, "f16", sizeof in->kv_type);
    ib__strlcpy(in->runtime_version, "fake", sizeof in->runtime_version);
    in->device = s->gpu_like ? IB_DEVICE_CUDA : IB_DEVICE_CPU;
    in->n_ctx_train = s->n_ctx_train;
    in->n_layers = 2;
    in->n_embd = 64;
    in->n_vocab = 256;
    in->n_batch = in->n_ubatch = 512;
    in->n_threads = s->cores;
    in->n_threads_default = s->threads_default;
    in->n_cpus_allowed = s->cores;
    for (size_t i = 0; i < a->n_options; i++)
        ib_option_list_set(&in->options, a->options[i].key, a->options[i].value);
}

ib_status ib__gen_open_fake_script(const ib__gen_fake_script *s, const ib__gen_open_args *a, ib__gen **out,
                                   ib_error *err)
{
    *out = NULL;
    IB_FAIL_IF(!(s->queued_fraction >= 0 && s->queued_fraction <= 1), err, IB_ERR_INVALID_ARG,
               "fake: the queued fraction is in [0, 1]");
    IB_FAIL_IF(s->max_seqs < 1 || s->max_seqs > IB_GEN_MAX_SEQUENCES, err, IB_ERR_INVALID_ARG,
               "fake: max_seqs is in 1..%d", IB_GEN_MAX_SEQUENCES);
    ib__gen *g = calloc(1, sizeof *g);
    gen_fake *f = calloc(1, sizeof *f);
    if (!g || !f) {
        free(g);
        free(f);
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory");
    }
    f->s = *s;
    f->counts.threads = s->cores;
    f->power = (ib__fake_power){ .step_ms = s->energy_step_ms, .idle_w = s->idle_w, .now_ms = &f->now_ms };
    g->ops = &fake_ops[(s->sample_ms > 0) | (s->has_reopen ? 2 : 0) | (s->threads_default > 0 ? 4 : 0)];
    g->impl = f;
    g->clock = (ib__clock){
        .now_ms = virtual_now, .ctx = f, .resolution_ms = 0, .wait_until_ms = virtual_wait_until
    };
    describe(g, a);
    /* The first context as asked (its capacity is checked when the method
     * sets the sequences it measures). */
    f->n_seqs = a->n_seqs > 0 && a->n_seqs <= IB_GEN_MAX_SEQUENCES ? a->n_seqs : 1;
    f->ctx_per_seq = a->ctx_per_seq > 0 ? a->ctx_per_seq : 1024;
    describe_sequences(g);
    *out = g;
    return IB_OK;
}

ib__gen_fake_counts ib__gen_fake_counts_of(const ib__gen *g) { return ((const gen_fake *)g->impl)->counts; }

/* ------------------------------------------------------------------------ */
/* The fake by name: its script from --option keys (times in us or ns).     */
/* ------------------------------------------------------------------------ */

typedef struct fake_key {
    const char *key;
    long long lo, hi;
    double scale; /* to the script's unit (ms; 1 for counts) */
    size_t offset;
    bool is_int; /* an int64 or int32 field, else a double */
    bool is_i32;
} fake_key;

#define D_KEY(K, LO, HI, SCALE, FIELD)                                                                       \
    {                                                                                                        \
        K, LO, HI, SCALE, offsetof(ib__gen_fake_script, FIELD), false, false                                 \
    }
#define I_KEY(K, LO, HI, FIELD)                                                                              \
    {                                                                                                        \
        K, LO, HI, 1, offsetof(ib__gen_fake_script, FIELD), true, false                                      \
    }
#define I32_KEY(K, LO, HI, FIELD)                                                                            \
    {                                                                                                        \
        K, LO, HI, 1, offsetof(ib__gen_fake_script, FIELD), true, true                                       \
    }
static const fake_key fake_keys[] = {
    D_KEY("prefill_us", 0, 1000000000, 1e-3, prefill_ms),
    D_KEY("token_us", 0, 1000000000, 1e-3, prefill_token_ms),
    D_KEY("prefill_pos_ns", 0, 1000000000, 1e-6, prefill_pos_ms),
    D_KEY("step_us", 0, 1000000000, 1e-3, step_ms),
    D_KEY("seq_us", 0, 1000000000, 1e-3, step_seq_ms),
    D_KEY("pos_ns", 0, 1000000000, 1e-6, step_pos_ms),
    D_KEY("queued_pct", 0, 100, 1e-2, queued_fraction),
    D_KEY("switch_us", 0, 1000000000, 1e-3, switch_ms),
    D_KEY("sample_us", 0, 1000000000, 1e-3, sample_ms),
    I_KEY("cold_calls", 0, 1000000, cold_calls),
    D_KEY("cold_x", 1, 1000, 1, cold_factor),
    I_KEY("slow_every", 0, 1000000000, slow_every),
    D_KEY("slow_x", 1, 1000, 1, slow_factor),
    I_KEY("kv_tokens", 0, (long long)1 << 40, kv_capacity_tokens),
    I32_KEY("max_seqs", 1, IB_GEN_MAX_SEQUENCES, max_seqs),
    I32_KEY("step_oom_seqs", 0, IB_GEN_MAX_SEQUENCES, step_oom_seqs),
    I_KEY("fail_at_call", -1, 1000000000, fail_at_call),
    I32_KEY("cores", 1, 4096, cores),
    I32_KEY("threads_default", 0, 4096, threads_default),
    D_KEY("oversub_x", 1, 100000, 1, oversubscribed_factor),
    I32_KEY("ctx_train", 0, 1 << 30, n_ctx_train),
    I_KEY("sleep_us", 0, 1000000, sleep_us),
    D_KEY("energy_step_ms", 0, 1000000, 1, energy_step_ms),
    D_KEY("idle_w", 0, 1000000, 1, idle_w),
    D_KEY("busy_w", 0, 1000000, 1, busy_w),
    D_KEY("busy_w_per_seq", 0, 1000000, 1, busy_w_per_seq),
    D_KEY("batch_us", 0, 1000000000, 1e-3, batch_ms),
    D_KEY("batch_decode_us", 0, 1000000000, 1e-3, batch_decode_token_ms),
    D_KEY("batch_prefill_ns", 0, 1000000000, 1e-6, batch_prefill_token_ms),
};
#define N_FAKE_KEYS (sizeof fake_keys / sizeof fake_keys[0])

static ib_status apply_key(ib__gen_fake_script *s, const ib_backend_option *o, ib_error *err)
{
    if (!strcmp(o->key, "reopen")) return ib__backend_option_bool(o, &s->has_reopen, err);
    for (size_t i = 0; i < N_FAKE_KEYS; i++) {
        const fake_key *k = &fake_keys[i];
        if (strcmp(o->key, k->key)) continue;
        long long v;
        IB_TRY(ib__backend_option_int(o, k->lo, k->hi, &v, err));
        char *field = (char *)s + k->offset;
        if (k->is_i32)
            *(int32_t *)(void *)field = (int32_t)v;
        else if (k->is_int)
            *(int64_t *)(void *)field = v;
        else
            *(double *)(void *)field = (double)v * k->scale;
        return IB_OK;
    }
    char known[512] = "";
    for (size_t i = 0; i < N_FAKE_KEYS; i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s, ", fake_keys[i].key);
    return ib__fail(err, IB_ERR_INVALID_ARG, "fake: unknown option '%s' (known: %sreopen)", o->key, known);
}

/* best races the step's time on the fake: candidates of known, different
 * costs on the virtual clock (tests/cli/best_fake.sh). Not serve --best:
 * the serving engine's mixed batch (batch_us) does not take it; serve
 * --best races batch_us instead (a grid of serving's own, as llama's
 * kv_unified), best of one request does not. */
static const ib_backend_option_decl fake_raced[] = {
    { .key = "step_us",
      .help = "microseconds a decode step takes (default 1000)",
      .values = "0..1000000000",
      .race = "1000|1500",
      .label = "step_us",
      .flags = IB_OPTION_RACE_NOT_SERVING },
    { .key = "batch_us",
      .help = "microseconds a mixed batch takes besides its tokens (default 1000)",
      .values = "0..1000000000",
      .label = "batch_us",
      .serve_race = "1000|1500" },
};

const ib_gen_backend ib__backend_fake_gen = {
    .name = "fake",
    .description = "a scripted generation on a virtual clock, for tests (--option prefill_us=N, step_us=N, "
                   "kv_tokens=N, ...: docs/generate.md)",
    .options = fake_raced,
    .n_options = sizeof fake_raced / sizeof fake_raced[0],
};

ib_status ib__backend_fake_gen_open(const ib__gen_open_args *a, ib__gen **out, ib_error *err)
{
    *out = NULL;
    IB_FAIL_IF(a->device == IB_DEVICE_CUDA, err, IB_ERR_UNSUPPORTED, "fake: runs on the CPU only");
    ib__gen_fake_script s;
    ib__gen_fake_script_init(&s);
    for (size_t i = 0; i < a->n_options; i++) IB_TRY(apply_key(&s, &a->options[i], err));
    return ib__gen_open_fake_script(&s, a, out, err);
}
