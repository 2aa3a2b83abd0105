/* Serving a generative model under load, in process: a schedule of
 * requests made before the run, and one engine loop driving the
 * generation workload as a continuous-batching server drives its runtime
 * (llama.cpp's server, update_slots()). Each step is one mixed batch: a
 * token for every request generating, then prompt chunks of admitted
 * requests up to the step's budget; synchronized, and that instant is the
 * completion time of every token of the step. A request is admitted once
 * its scheduled arrival has passed and a slot is free; its sequence is
 * removed when it ends. Every figure runs from the scheduled arrival, so
 * the wait for a slot is counted, never hidden (docs/serve-generative.md). */
#include "core/progress.h"
#include "core/schedule.h"
#include "core/serve.h"
#include "core/serve_gen.h"
#include "core/serve_gen_machine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The longest one idle wait sleeps before looking at the cancel flag. */
#define CANCEL_POLL_MS 50.0
/* Most warm-up requests. */
#define MAX_WARMUP 10000
/* Seeds of the drawn lengths, apart from the arrivals' stream. */
#define PROMPT_SEED 0x70726f6d7074ull
#define OUTPUT_SEED 0x6f7574707574ull
/* The token ids of warm-up request i are request WARMUP_IDS + i's, apart
 * from every measured request's. */
#define WARMUP_IDS 0x80000000u

void ib_gen_serve_config_init(ib_gen_serve_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    ib_config_init(&cfg->run);
    cfg->arrivals = IB_ARRIVALS_POISSON;
    cfg->burstiness = 1;
    cfg->seed = 1;
    cfg->requests = 1000; /* serve's default: one for both kinds of model */
    cfg->prompt_min = cfg->prompt_max = 512;
    cfg->output_min = cfg->output_max = 128;
    cfg->prefill_chunk = IB__GEN_SERVE_DEFAULT_CHUNK;
    cfg->warmup_requests = IB__GEN_SERVE_DEFAULT_WARMUP;
    cfg->prefix_cache = true; /* llama-server's default: nothing is reused unless prompts share a prefix */
}

void ib_gen_serve_result_free(ib_gen_serve_result *r)
{
    if (!r) return;
    free(r->requests);
    free(r->steps);
    r->requests = NULL;
    r->steps = NULL;
    r->n_requests = r->n_steps = 0;
}

/* ------------------------------------------------------------------------ */
/* Settings and the schedule                                                 */
/* ------------------------------------------------------------------------ */

static ib_status validate_lengths(int32_t lo, int32_t hi, const char *what, ib_error *err)
{
    IB_FAIL_IF(lo < 1 || hi < lo || hi > IB_GEN_SERVE_MAX_TOKENS, err, IB_ERR_INVALID_ARG,
               "%s tokens %d..%d: a range of whole numbers from 1 to %d, the first not above the second",
               what, (int)lo, (int)hi, IB_GEN_SERVE_MAX_TOKENS);
    return IB_OK;
}

ib_status ib__gen_serve_validate_arrivals(const ib_gen_serve_config *c, ib_error *err)
{
    if (c->arrivals == IB_ARRIVALS_TRACE) {
        IB_FAIL_IF(!c->trace || c->n_trace == 0 || c->n_trace > IB__SERVE_MAX_REQUESTS, err,
                   IB_ERR_INVALID_ARG, "a trace of 1 to %d requests", IB__SERVE_MAX_REQUESTS);
        return IB_OK;
    }
    IB_FAIL_IF(!(c->rate > 0) || !isfinite(c->rate), err, IB_ERR_INVALID_ARG,
               "a rate above 0 requests/s (or a trace)");
    IB_FAIL_IF(!(c->burstiness > 0) || !isfinite(c->burstiness), err, IB_ERR_INVALID_ARG,
               "burstiness %g: the gamma shape of the gaps is above 0 (1: Poisson)", c->burstiness);
    IB_FAIL_IF(c->arrivals == IB_ARRIVALS_CONSTANT && c->burstiness != 1, err, IB_ERR_INVALID_ARG,
               "burstiness shapes random arrivals, not constant ones");
    IB_FAIL_IF(c->requests < 1 || c->requests > IB__SERVE_MAX_REQUESTS, err, IB_ERR_INVALID_ARG,
               "requests: 1 to %d", IB__SERVE_MAX_REQUESTS);
    IB_TRY(validate_lengths(c->prompt_min, c->prompt_max, "prompt", err));
    return validate_lengths(c->output_min, c->output_max, "output", err);
}

static ib_status validate(const ib__gen *g, const ib_gen_serve_config *c, ib_error *err)
{
    IB_FAIL_IF(!g || !c, err, IB_ERR_INVALID_ARG, "no generation workload or configuration");
    IB_FAIL_IF(!g->ops->decode_batch || !g->ops->remove_sequence, err, IB_ERR_UNSUPPORTED,
               "this generation backend cannot decode a mixed batch of sequences: it cannot be served under "
               "load");
    IB_FAIL_IF(c->sample_greedy && !g->ops->sample, err, IB_ERR_UNSUPPORTED,
               "this generation backend cannot sample: --sampling greedy needs it");
    IB_TRY(ib__gen_serve_validate_arrivals(c, err));
    IB_FAIL_IF(c->slots < 0 || c->slots > IB_GEN_MAX_SEQUENCES, err, IB_ERR_INVALID_ARG,
               "slots: 1 to %d (0: the default)", IB_GEN_MAX_SEQUENCES);
    IB_FAIL_IF(c->prefill_chunk < 1 || c->prefill_chunk > IB_GEN_SERVE_MAX_TOKENS, err, IB_ERR_INVALID_ARG,
               "prefill chunk: 1 to %d tokens a step", IB_GEN_SERVE_MAX_TOKENS);
    IB_FAIL_IF(c->warmup_requests < 0 || c->warmup_requests > MAX_WARMUP, err, IB_ERR_INVALID_ARG,
               "warm-up requests: 0 to %d", MAX_WARMUP);
    IB_FAIL_IF(c->ctx_per_slot < 0, err, IB_ERR_INVALID_ARG, "a context per slot of %d tokens",
               c->ctx_per_slot);
    IB_FAIL_IF(!(c->slo_ttft_ms >= 0) || !(c->slo_tpot_ms >= 0) || !(c->slo_e2e_ms >= 0), err,
               IB_ERR_INVALID_ARG, "targets are above 0 ms (0: none)");
    return IB_OK;
}

ib_status ib__gen_serve_schedule(const ib_gen_serve_config *c, ib_gen_serve_request **out, size_t *n,
                                 ib_error *err)
{
    *n = c->arrivals == IB_ARRIVALS_TRACE ? c->n_trace : (size_t)c->requests;
    double *at = malloc(*n * sizeof *at);
    int32_t *prompt = malloc(*n * sizeof *prompt), *output = malloc(*n * sizeof *output);
    *out = calloc(*n, sizeof **out);
    bool ok = at && prompt && output && *out;
    if (ok && c->arrivals != IB_ARRIVALS_TRACE) {
        if (c->arrivals == IB_ARRIVALS_CONSTANT)
            ib__serve_constant(c->rate, *n, at);
        else
            ib__serve_gamma(c->rate, c->burstiness, c->seed, *n, at);
        ib__schedule_uniform(c->prompt_min, c->prompt_max, c->seed ^ PROMPT_SEED, *n, prompt);
        ib__schedule_uniform(c->output_min, c->output_max, c->seed ^ OUTPUT_SEED, *n, output);
    }
    for (size_t i = 0; ok && i < *n; i++)
        (*out)[i].spec = c->arrivals == IB_ARRIVALS_TRACE
                             ? c->trace[i]
                             : (ib_gen_request_spec){ at[i], prompt[i], output[i] };
    free(at);
    free(prompt);
    free(output);
    if (!ok) {
        free(*out);
        *out = NULL;
        return ib__fail(err, IB_ERR_NO_MEMORY, "out of memory for a schedule of %zu requests", *n);
    }
    return IB_OK;
}

/* The context a slot needs (the longest request's prompt + output), or
 * the one asked when every request fits it. */
static ib_status slot_context(const ib__gen *g, const ib_gen_serve_config *c, const ib_gen_serve_request *rs,
                              size_t n, int32_t *ctx, ib_error *err)
{
    int64_t longest = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        if ((int64_t)rs[i].spec.prompt_tokens + rs[i].spec.output_tokens > longest) {
            longest = (int64_t)rs[i].spec.prompt_tokens + rs[i].spec.output_tokens;
            at = i;
        }
    *ctx = c->ctx_per_slot > 0 ? c->ctx_per_slot : (int32_t)fmin((double)longest, INT32_MAX);
    IB_FAIL_IF(longest > *ctx, err, IB_ERR_INVALID_ARG,
               "request %zu: a prompt of %d tokens + %d output tokens pass the context of a slot (%d)",
               at + 1, (int)rs[at].spec.prompt_tokens, (int)rs[at].spec.output_tokens, (int)*ctx);
    int32_t train = g->info.n_ctx_train;
    IB_FAIL_IF(train > 0 && *ctx > train, err, IB_ERR_INVALID_ARG,
               "a context of %d tokens per slot passes the model's own (n_ctx_train %d)", (int)*ctx,
               (int)train);
    return IB_OK;
}

/* ------------------------------------------------------------------------ */
/* The engine                                                                */
/* ------------------------------------------------------------------------ */

struct ib__gen_engine {
    ib__gen *g;
    const ib_gen_serve_config *cfg;
    int32_t slots, budget; /* budget: the prompt tokens one step takes at most */
    ib_gen_serve_request *reqs;
    size_t n, next; /* next: the first request not admitted */
    int32_t *prefilled;
    size_t *running; /* requests holding a slot, in admission order */
    int32_t n_running;
    bool *slot_busy;
    int32_t *slot_shared; /* the shared prefix tokens each slot's cells hold (the prefix cache) */
    uint32_t first_ids;   /* request 0's token ids: 0, or WARMUP_IDS */
    ib__gen_batch_entry *entries;
    size_t *entry_req;
    double origin_ms;
    bool record; /* the measured run: gaps and steps kept */
    double *itl;
    size_t n_itl, cap_itl;
    ib_gen_serve_step *steps;
    size_t n_steps, cap_steps;
    size_t n_done; /* requests completed */
    int32_t ctx_per_slot;
    double warm_rate_per_s; /* requests a second the warm-up served (NaN: none) */
    ib__progress pr;
    const ib__gen_serve_watch *watch; /* the measured run's (NULL: none) */
    bool stopped;                     /* the watch ended the run */
    ib_gen_slots_from slots_from;
    ib_env env;                    /* the machine, watched from the open to ib__gen_engine_watched */
    ib__gen_serve_machine machine; /* that watch and the energy meters */
    /* The measured run's steps: whole, in decode + synchronize, and in the
     * runtime's sequence removals (admission's trim, a request's end). */
    double engine_ms, runtime_ms, removal_ms;
    ib__gen_batch_log log; /* their batches, for the replay (cfg->engine_cost) */
};

/* The engine's clock and when request i is due, both read on the
 * workload's clock itself (never a difference of the two: an idle wait
 * ends exactly at the due time, even on a virtual clock). */
typedef ib__gen_engine engine;

static double clock_ms(const engine *e) { return ib__gen_now_ms(e->g); }

static double due(const engine *e, size_t i) { return e->origin_ms + e->reqs[i].spec.arrival_ms; }

/* Waits until the engine's clock reads t (the fake's virtual clock
 * advances); false when cancelled. */
static bool wait_until(const engine *e, double t)
{
    const ib__clock *c = &e->g->clock;
    while (clock_ms(e) < t) {
        if (ib__cancelled(e->cfg->run.cancel)) return false;
        if (c->wait_until_ms) c->wait_until_ms(c->ctx, fmin(t, clock_ms(e) + CANCEL_POLL_MS));
    }
    return true;
}

/* Removes slot's cells from position from on (the runtime's work, timed
 * apart from the engine's own: llama.cpp's scans its cache's cells). */
static ib_status remove_cells(engine *e, int32_t slot, int32_t from, ib_error *err)
{
    double t0 = clock_ms(e);
    ib_status st = e->g->ops->remove_sequence(e->g, slot, from, err);
    e->removal_ms += clock_ms(e) - t0;
    return st;
}

/* Admits, in arrival order, every request arrived by t while a slot is
 * free: to the slot with the longest common prefix, its cells past it
 * dropped (the prefix cache; without it the slot was emptied at retire). */
static ib_status admit(engine *e, double t, ib_error *err)
{
    while (e->next < e->n && due(e, e->next) <= t && e->n_running < e->slots) {
        ib_gen_serve_request *r = &e->reqs[e->next];
        int32_t shared = ib__gen_shared_tokens(e->cfg, r->spec.prompt_tokens), reuse;
        int32_t slot = ib__gen_prefix_slot(e->slot_busy, e->slot_shared, e->slots, shared,
                                           r->spec.prompt_tokens, &reuse);
        if (e->cfg->prefix_cache) {
            IB_TRY(remove_cells(e, slot, reuse, err));
            e->slot_shared[slot] = shared;
        }
        e->slot_busy[slot] = true;
        r->slot = slot;
        r->admitted_ms = t - e->origin_ms;
        r->cached_tokens = e->prefilled[e->next] = reuse;
        e->running[e->n_running++] = e->next++;
    }
    return IB_OK;
}

static int32_t waiting(const engine *e, double t)
{
    size_t k = e->next;
    while (k < e->n && due(e, k) <= t) k++;
    return (int32_t)(k - e->next);
}

/* Request q's token ids (distinct between requests, warm-up's included). */
static uint32_t ids(const engine *e, size_t q) { return e->first_ids + (uint32_t)q; }

/* The step's entries: a token of every request generating, then prompt
 * chunks in admission order up to the budget (and n_batch). */
static size_t plan(engine *e, ib_gen_serve_step *st)
{
    size_t k = 0;
    for (int32_t i = 0; i < e->n_running; i++) {
        const ib_gen_serve_request *r = &e->reqs[e->running[i]];
        if (r->generated_tokens == 0) continue;
        e->entry_req[k] = e->running[i];
        e->entries[k++] = (ib__gen_batch_entry){ .seq = r->slot,
                                                 .pos = r->spec.prompt_tokens + r->generated_tokens - 1,
                                                 .n_tokens = 1,
                                                 .logits = true,
                                                 .request = ids(e, e->running[i]) };
    }
    st->decode_tokens = (int32_t)k;
    int32_t room = e->g->info.n_batch - st->decode_tokens, left = e->budget < room ? e->budget : room;
    for (int32_t i = 0; i < e->n_running && left > 0; i++) {
        size_t q = e->running[i];
        const ib_gen_serve_request *r = &e->reqs[q];
        int32_t rest = r->spec.prompt_tokens - e->prefilled[q];
        if (r->generated_tokens > 0 || rest == 0) continue;
        int32_t chunk = rest < left ? rest : left;
        e->entry_req[k] = q;
        e->entries[k++] =
            (ib__gen_batch_entry){ .seq = r->slot,
                                   .pos = e->prefilled[q],
                                   .n_tokens = chunk,
                                   .logits = chunk == rest,
                                   .request = ids(e, q),
                                   .shared = ib__gen_shared_tokens(e->cfg, r->spec.prompt_tokens) };
        left -= chunk;
        st->prefill_tokens += chunk;
    }
    return k;
}

/* The cells the running requests hold once the step planned in st is
 * done: a generating request's prompt and every token it was fed (its
 * newest, fed by this step, included), a prefilling one's chunks so far
 * and this step's. */
static int32_t kv_cells_after(const engine *e, const ib_gen_serve_step *st)
{
    int64_t cells = st->prefill_tokens;
    for (int32_t i = 0; i < e->n_running; i++)
        cells += e->prefilled[e->running[i]] + e->reqs[e->running[i]].generated_tokens;
    return (int32_t)cells;
}

/* Request q's token completed at t: a gap after the one before it. */
static ib_status token_done(engine *e, size_t q, double t, ib_error *err)
{
    ib_gen_serve_request *r = &e->reqs[q];
    bool first = r->generated_tokens++ == 0;
    if (first)
        r->first_token_ms = t;
    else if (e->record) {
        IB_TRY(ib__gen_serve_grow((void **)&e->itl, &e->cap_itl, e->n_itl + 1, sizeof *e->itl, err));
        e->itl[e->n_itl++] = t - r->end_ms;
    }
    r->end_ms = t; /* its last token so far */
    bool last = r->generated_tokens == r->spec.output_tokens;
    if (e->watch && (first || last) && !e->watch->fn(e->watch->ctx, r, first, last)) e->stopped = true;
    return IB_OK;
}

/* Frees the slots of the requests that ended (their sequences removed). */
static ib_status retire(engine *e, ib_error *err)
{
    int32_t kept = 0;
    for (int32_t i = 0; i < e->n_running; i++) {
        ib_gen_serve_request *r = &e->reqs[e->running[i]];
        if (r->generated_tokens < r->spec.output_tokens) {
            e->running[kept++] = e->running[i];
            continue;
        }
        /* With the prefix cache the cells stay for the slot's next request. */
        if (!e->cfg->prefix_cache) IB_TRY(remove_cells(e, r->slot, 0, err));
        e->slot_busy[r->slot] = false;
        e->n_done++;
    }
    e->n_running = kept;
    return IB_OK;
}

/* Every token of the step completed at t. */
static ib_status stamp(engine *e, size_t n_entries, double t, ib_error *err)
{
    for (size_t k = 0; k < n_entries; k++) {
        size_t q = e->entry_req[k];
        if (e->entries[k].n_tokens == 1 && e->reqs[q].generated_tokens > 0) {
            IB_TRY(token_done(e, q, t, err));
            continue;
        }
        e->prefilled[q] += e->entries[k].n_tokens;
        if (e->prefilled[q] == e->reqs[q].spec.prompt_tokens) IB_TRY(token_done(e, q, t, err));
    }
    return retire(e, err);
}

static ib_status keep_step(engine *e, const ib_gen_serve_step *st, ib_error *err)
{
    if (!e->record) return IB_OK;
    IB_TRY(ib__gen_serve_grow((void **)&e->steps, &e->cap_steps, e->n_steps + 1, sizeof *e->steps, err));
    e->steps[e->n_steps++] = *st;
    return IB_OK;
}

/* One step: admission, the mixed batch, synchronize, the stamps. */
static ib_status step(engine *e, ib_error *err)
{
    double t0 = clock_ms(e);
    IB_TRY(admit(e, t0, err));
    ib_gen_serve_step st = { .start_ms = t0 - e->origin_ms,
                             .running = e->n_running,
                             .waiting = waiting(e, t0) };
    size_t n_entries = plan(e, &st);
    st.kv_cells = kv_cells_after(e, &st);
    double t_decode = clock_ms(e);
    IB_TRY(e->g->ops->decode_batch(e->g, e->entries, n_entries, err));
    IB_TRY(e->g->ops->synchronize(e->g, err));
    if (e->cfg->sample_greedy) IB_TRY(ib__gen_sample_outputs(e->g, e->entries, n_entries, err));
    st.end_ms = clock_ms(e) - e->origin_ms;
    IB_TRY(stamp(e, n_entries, st.end_ms, err));
    ib__progress_runs(&e->pr, (int64_t)e->n_done, NAN); /* after the step's stamps, rate-limited */
    IB_TRY(keep_step(e, &st, err));
    if (!e->record) return IB_OK;
    /* The engine's own cost: the step whole against its two calls. */
    e->runtime_ms += st.end_ms + e->origin_ms - t_decode;
    e->engine_ms += clock_ms(e) - t0;
    return e->cfg->engine_cost ? ib__gen_batch_log_add(&e->log, e->entries, n_entries, err) : IB_OK;
}

/* Serves e->reqs from the origin now: steps while a request holds a
 * slot, idle until the next arrival when none does. */
static ib_status serve_all(engine *e, ib_phase phase, ib_error *err)
{
    e->n_done = 0;
    ib__progress_phase(&e->pr, phase, (int64_t)e->n);
    e->origin_ms = ib__gen_now_ms(e->g);
    while ((e->next < e->n || e->n_running > 0) && !e->stopped) {
        IB_FAIL_IF(ib__cancelled(e->cfg->run.cancel), err, IB_ERR_INTERRUPTED, "interrupted");
        if (e->n_running == 0 && !wait_until(e, due(e, e->next)))
            return ib__fail(err, IB_ERR_INTERRUPTED, "interrupted");
        IB_TRY(step(e, err));
    }
    return IB_OK;
}

static ib_status engine_init(engine *e, ib__gen *g, const ib_gen_serve_config *c, int32_t slots,
                             ib_error *err)
{
    *e = (engine){ .g = g, .cfg = c, .slots = slots, .budget = c->prefill_chunk };
    ib__progress_init_clock(&e->pr, &c->run, &g->clock);
    ib__progress_rate(&e->pr, c->arrivals == IB_ARRIVALS_TRACE ? NAN : c->rate);
    e->running = calloc((size_t)slots, sizeof *e->running);
    e->slot_busy = calloc((size_t)slots, sizeof *e->slot_busy);
    e->slot_shared = calloc((size_t)slots, sizeof *e->slot_shared);
    e->entries = calloc((size_t)slots, sizeof *e->entries);
    e->entry_req = calloc((size_t)slots, sizeof *e->entry_req);
    IB_FAIL_IF(!e->running || !e->slot_busy || !e->slot_shared || !e->entries || !e->entry_req, err,
               IB_ERR_NO_MEMORY, "out of memory");
    IB_FAIL_IF(g->info.n_batch < slots, err, IB_ERR_INVALID_ARG,
               "%d slots, but a batch takes %d tokens (n_batch): a step could not decode them all",
               (int)slots, (int)g->info.n_batch);
    return IB_OK;
}

static void engine_free(engine *e)
{
    free(e->running);
    free(e->slot_busy);
    free(e->slot_shared);
    free(e->entries);
    free(e->entry_req);
    free(e->prefilled);
    free(e->itl);
    free(e->steps);
    ib__gen_batch_log_free(&e->log);
    ib__gen_serve_machine_close(&e->machine);
}

/* Points the engine at requests rs[0..n) (their times NaN until reached). */
static ib_status engine_load(engine *e, ib_gen_serve_request *rs, size_t n, ib_error *err)
{
    free(e->prefilled);
    e->prefilled = calloc(n ? n : 1, sizeof *e->prefilled);
    IB_FAIL_IF(!e->prefilled, err, IB_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        rs[i].admitted_ms = rs[i].first_token_ms = rs[i].end_ms = NAN;
        rs[i].slot = -1;
        rs[i].generated_tokens = rs[i].cached_tokens = 0;
    }
    e->reqs = rs;
    e->n = n;
    e->next = 0;
    e->engine_ms = e->runtime_ms = e->removal_ms = 0; /* the engine's cost is each run's own */
    e->log.n_steps = e->log.n_entries = 0;
    return IB_OK;
}

/* The warm-up: the first requests' lengths, all arriving at once, served
 * and forgotten (the first calls of a runtime are slower: docs/generate.md). */
static ib_status warm_up(engine *e, const ib_gen_serve_request *measured, size_t n_measured, ib_error *err)
{
    size_t n = (size_t)e->cfg->warmup_requests;
    if (n == 0) return IB_OK;
    ib_gen_serve_request *w = calloc(n, sizeof *w);
    IB_FAIL_IF(!w, err, IB_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++)
        w[i].spec = (ib_gen_request_spec){ 0, measured[i % n_measured].spec.prompt_tokens,
                                           measured[i % n_measured].spec.output_tokens };
    e->first_ids = WARMUP_IDS;
    ib_status st = engine_load(e, w, n, err);
    double t0 = clock_ms(e);
    if (st == IB_OK) st = serve_all(e, IB_PHASE_WARMUP, err);
    e->warm_rate_per_s = (double)n * 1000.0 / (clock_ms(e) - t0);
    e->first_ids = 0;
    free(w);
    return st;
}

/* Empties every slot the prefix cache kept (untimed), after the warm-up
 * and after each measured run: every run starts on empty slots, none
 * favoured by the one before, and no sequence is left in the KV cache. */
static ib_status drop_cache(engine *e, ib_error *err)
{
    for (int32_t s = 0; e->cfg->prefix_cache && s < e->slots; s++) {
        IB_TRY(e->g->ops->remove_sequence(e->g, s, 0, err));
        e->slot_shared[s] = 0;
    }
    return IB_OK;
}

double ib__gen_serve_offered_rate(const ib_gen_serve_config *c, const ib_gen_serve_request *rs, size_t n)
{
    if (c->arrivals != IB_ARRIVALS_TRACE) return c->rate;
    double span = n > 1 ? rs[n - 1].spec.arrival_ms - rs[0].spec.arrival_ms : 0;
    return span > 0 ? (double)(n - 1) * 1000.0 / span : NAN;
}

/* The context for the slots, created once, and the warm-up, from the
 * first schedule of c (its lengths: every rate of one seed draws the same). */
static ib_status engine_open(engine *e, ib__gen *g, const ib_gen_serve_config *c, ib_error *err)
{
    ib_gen_serve_request *rs = NULL;
    size_t n = 0;
    int32_t slots = 0, ctx = 0;
    ib_gen_slots_from from = IB_GEN_SLOTS_GIVEN;
    ib_status st = ib__gen_serve_schedule(c, &rs, &n, err);
    if (st == IB_OK) st = ib__gen_prefix_validate(c, rs, n, err);
    if (st == IB_OK) st = slot_context(g, c, rs, n, &ctx, err);
    if (st == IB_OK) st = ib__gen_serve_slots(g, c, ctx, &slots, &from, err);
    if (st == IB_OK) st = g->ops->set_sequences(g, slots, ctx, err);
    if (st == IB_OK) st = engine_init(e, g, c, slots, err);
    e->ctx_per_slot = ctx;
    e->slots_from = from;
    if (st == IB_OK) ib__gen_serve_machine_open(&e->machine, g, &c->run, &e->env); /* idle: before warm-up */
    e->warm_rate_per_s = NAN;
    if (st == IB_OK) st = warm_up(e, rs, n, err);
    if (st == IB_OK) st = drop_cache(e, err); /* every measured run starts on empty slots */
    free(rs);
    return st;
}

ib_status ib__gen_engine_open(ib__gen *g, const ib_gen_serve_config *cfg, ib__gen_engine **out, ib_error *err)
{
    *out = NULL;
    IB_TRY(validate(g, cfg, err));
    engine *e = calloc(1, sizeof *e);
    IB_FAIL_IF(!e, err, IB_ERR_NO_MEMORY, "out of memory");
    ib_status st = engine_open(e, g, cfg, err);
    if (st != IB_OK) {
        ib__gen_engine_close(e);
        return st;
    }
    *out = e;
    return IB_OK;
}

double ib__gen_engine_warm_rate(const ib__gen_engine *e) { return e->warm_rate_per_s; }

void ib__gen_engine_close(ib__gen_engine *e)
{
    if (!e) return;
    engine_free(e);
    free(e);
}

/* Removes the sequences of the requests still running (a run the watch
 * stopped, or one that failed), so that the next run starts on an empty
 * cache. */
static ib_status drop_running(engine *e, ib_error *err)
{
    for (int32_t i = 0; i < e->n_running; i++) {
        int32_t slot = e->reqs[e->running[i]].slot;
        IB_TRY(e->g->ops->remove_sequence(e->g, slot, 0, err));
        e->slot_busy[slot] = false;
        e->slot_shared[slot] = 0;
    }
    e->n_running = 0;
    return IB_OK;
}

/* The measured run on the open engine: cfg's schedule from its origin. */
static ib_status serve_measured(engine *e, const ib_gen_serve_config *c, const ib__gen_serve_watch *watch,
                                ib_gen_serve_result *out, ib_error *err)
{
    e->cfg = c;
    IB_TRY(validate(e->g, c, err));
    IB_TRY(ib__gen_serve_schedule(c, &out->requests, &out->n_requests, err));
    IB_TRY(ib__gen_prefix_validate(c, out->requests, out->n_requests, err));
    out->shared_prefix = c->shared_prefix;
    out->prefix_cache = c->prefix_cache;
    out->sample_greedy = c->sample_greedy;
    out->slots = e->slots;
    out->slots_from = e->slots_from;
    out->prefill_chunk = e->budget;
    out->warmup_requests = c->warmup_requests;
    ib_gen_serve_config fixed = *c; /* every request must fit the context made at open */
    fixed.ctx_per_slot = e->ctx_per_slot;
    IB_TRY(slot_context(e->g, &fixed, out->requests, out->n_requests, &out->ctx_per_slot, err));
    out->info = e->g->info;
    IB_TRY(engine_load(e, out->requests, out->n_requests, err));
    ib__progress_rate(&e->pr, c->arrivals == IB_ARRIVALS_TRACE ? NAN : c->rate);
    e->n_itl = e->n_steps = 0;
    e->watch = watch;
    e->stopped = false;
    e->record = true;
    IB_TRY(ib__gen_serve_energy_begin(&e->machine, err));
    ib_status st = serve_all(e, IB_PHASE_SERVING, err);
    ib_status ended = ib__gen_serve_energy_end(&e->machine, err);
    if (st == IB_OK) st = ended;
    return st == IB_OK ? drop_cache(e, err) : st;
}

/* After a run: its energy (none for a run cut short or stopped by the
 * watch: its window holds tokens of requests it dropped), the engine's
 * own cost, and the replay when asked. */
static ib_status run_machine_figures(engine *e, ib_status st, ib_gen_serve_result *out, ib_error *err)
{
    ib__gen_serve_energy_figures(&e->machine, e->stopped ? IB_ERR_INTERRUPTED : st, out, &out->energy);
    ib__gen_serve_engine_figures(e->engine_ms, e->runtime_ms, e->removal_ms, out->n_steps, &out->engine_cost);
    if (!e->cfg->engine_cost || st != IB_OK) return st;
    return ib__gen_serve_replay(e->g, &e->log, e->slots, e->cfg->sample_greedy, e->cfg->run.cancel,
                                &out->engine_cost, err);
}

ib_status ib__gen_engine_serve(ib__gen_engine *e, const ib_gen_serve_config *cfg,
                               const ib__gen_serve_watch *watch, ib_gen_serve_result *out, ib_error *err)
{
    memset(out, 0, sizeof *out);
    e->record = false;
    ib_status st = serve_measured(e, cfg, watch, out, err);
    bool began = e->record;
    if (e->n_running > 0) {
        ib_error ignored;
        ib_status dropped = drop_running(e, st == IB_OK ? err : &ignored);
        if (st == IB_OK) st = dropped;
    }
    if (began) {
        out->steps = e->steps;
        out->n_steps = e->n_steps;
        e->steps = NULL;
        e->n_steps = e->cap_steps = 0;
        out->partial = st != IB_OK;
        out->stop_status = st;
        ib_status fs = ib__gen_serve_figures(
            cfg, e->itl, e->n_itl, ib__gen_serve_offered_rate(cfg, out->requests, out->n_requests), out);
        if (st == IB_OK) st = fs == IB_OK ? IB_OK : ib__fail(err, fs, "out of memory for the figures");
        st = run_machine_figures(e, st, out, err);
    }
    e->record = false;
    e->watch = NULL;
    if (!began) ib_gen_serve_result_free(out);
    return st;
}

ib_status ib_measure_gen_serve(ib__gen *g, const ib_gen_serve_config *cfg, ib_gen_serve_result *out,
                               ib_error *err)
{
    memset(out, 0, sizeof *out);
    ib__gen_engine *e = NULL;
    IB_TRY(ib__gen_engine_open(g, cfg, &e, err));
    ib_status st = ib__gen_engine_serve(e, cfg, NULL, out, err);
    if (out->requests) out->warnings |= ib__gen_engine_watched(e, &out->env);
    ib__gen_engine_close(e);
    if (st == IB_OK && cfg->pitfalls) st = ib__gen_serve_pitfalls(g, cfg, out, err);
    return st;
}

unsigned ib__gen_engine_watched(ib__gen_engine *e, ib_env *env)
{
    unsigned warnings = ib__gen_serve_machine_close(&e->machine);
    *env = e->env;
    return warnings;
}
