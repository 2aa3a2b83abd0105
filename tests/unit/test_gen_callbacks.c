/* The generation workload over the caller's callbacks (ib_gen_open_callbacks,
 * src/backend/callbacks/): a scripted model whose callbacks advance their
 * own clock, so that the method's figures through the public table are
 * checked exactly, with its optional slots, its capacity and its faults. */
#include "check.h"
#include "inferbench.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* P 64, N 16: a prefill of n tokens takes 2 + n/128 ms, a step of s
 * sequences at position p 1 + (s - 1)/8 + p/1024 ms, half of it queued
 * (only synchronize waits for it). Dyadic numbers: every sum is exact. */
#define P 64
#define N 16

typedef struct model {
    double now, done; /* the clock, and when the queued work ends */
    bool queue;       /* half of each call queued (else all of it in the call) */
    int32_t n_seqs, filled[64];
    int64_t capacity_tokens; /* set_sequences above it: out of memory (0: none) */
    int64_t calls, fail_at;  /* prefills and steps; the one that fails (-1: none) */
    int fail_with;           /* what it returns */
    bool fail_silently;      /* without a message */
    int prefills, steps, clears, syncs, forks, sets, samples, reopens, describes, destroys;
    int batches, removes; /* decode_batch, remove_sequence */
    int64_t prefill_tokens;
    int32_t last_ctx;
} model;

static void run_for(model *m, double ms)
{
    double queued = m->queue ? ms / 2 : 0;
    m->now += ms - queued;
    m->done = fmax(m->done, m->now) + queued;
}

static int call(model *m, double ms, ib_error *err)
{
    if (m->calls++ == m->fail_at) {
        if (!m->fail_silently) snprintf(err->message, sizeof err->message, "scripted failure");
        return m->fail_with;
    }
    run_for(m, ms);
    return IB_OK;
}

static ib_status clear(void *u, ib_error *err)
{
    (void)err;
    model *m = u;
    memset(m->filled, 0, sizeof m->filled);
    m->clears++;
    return IB_OK;
}

static ib_status prefill(void *u, int32_t seq, int32_t pos, int32_t n, ib_error *err)
{
    model *m = u;
    if (seq != 0 || pos != m->filled[0]) {
        snprintf(err->message, sizeof err->message, "prefill at %d, sequence 0 holds %d", (int)pos,
                 (int)m->filled[0]);
        return IB_ERR_INTERNAL;
    }
    int st = call(m, 2 + n / 128.0, err);
    if (st != IB_OK) return st;
    m->filled[0] += n;
    m->prefills++;
    m->prefill_tokens += n;
    return IB_OK;
}

static ib_status step(void *u, int32_t n_seqs, int32_t pos, ib_error *err)
{
    model *m = u;
    for (int32_t s = 0; s < n_seqs; s++)
        if (m->filled[s] != pos) return IB_ERR_INTERNAL;
    int st = call(m, 1 + (n_seqs - 1) / 8.0 + pos / 1024.0, err);
    if (st != IB_OK) return st;
    for (int32_t s = 0; s < n_seqs; s++) m->filled[s]++;
    m->steps++;
    return IB_OK;
}

static ib_status synchronize(void *u, ib_error *err)
{
    (void)err;
    model *m = u;
    m->now = fmax(m->now, m->done);
    m->syncs++;
    return IB_OK;
}

static ib_status fork(void *u, int32_t n_seqs, int32_t n_pos, ib_error *err)
{
    (void)err;
    model *m = u;
    for (int32_t s = 1; s < n_seqs; s++) m->filled[s] = n_pos;
    m->forks++;
    return IB_OK;
}

static ib_status set_sequences(void *u, int32_t n_seqs, int32_t ctx, ib_error *err)
{
    model *m = u;
    m->sets++;
    if (m->capacity_tokens && (int64_t)n_seqs * ctx > m->capacity_tokens) {
        snprintf(err->message, sizeof err->message, "scripted: %d x %d tokens do not fit", (int)n_seqs,
                 (int)ctx);
        return IB_ERR_DEVICE_OOM;
    }
    m->n_seqs = n_seqs;
    m->last_ctx = ctx;
    memset(m->filled, 0, sizeof m->filled);
    return IB_OK;
}

static ib_status sample(void *u, int32_t seq, ib_error *err)
{
    (void)seq;
    (void)err;
    model *m = u;
    m->now = fmax(m->now, m->done) + 0.25;
    m->samples++;
    return IB_OK;
}

static ib_status reopen(void *u, ib_error *err)
{
    (void)err;
    ((model *)u)->reopens++;
    return IB_OK;
}

static void describe(void *u, ib_gen_info *info)
{
    model *m = u;
    m->describes++;
    info->kv_bytes = (uint64_t)info->n_ctx * 1024;
}

static double now_ms(void *u) { return ((model *)u)->now; }

static void destroy(void *u) { ((model *)u)->destroys++; }

static ib_gen_callbacks table(model *m)
{
    *m = (model){ .queue = true, .fail_at = -1 };
    ib_gen_callbacks cb;
    ib_gen_callbacks_init(&cb);
    cb.user = m;
    cb.clear = clear;
    cb.prefill = prefill;
    cb.step = step;
    cb.synchronize = synchronize;
    cb.fork = fork;
    cb.set_sequences = set_sequences;
    cb.describe = describe;
    cb.now_ms = now_ms;
    cb.destroy = destroy;
    return cb;
}

static ib_gen *open_cb(const ib_gen_callbacks *cb, const ib_gen_info *info)
{
    ib_gen *g = NULL;
    ib_error err = { { 0 } };
    CHECK(ib_gen_open_callbacks(cb, info, &g, &err) == IB_OK);
    return g;
}

static ib_gen_config config(void)
{
    ib_gen_config c;
    ib_gen_config_init(&c);
    c.prompt_tokens = P;
    c.new_tokens = N;
    c.run.runs = 10;
    c.run.warmup_runs = 3;
    c.run.warmup_ms = 0;
    c.run.warmup_until_steady = false;
    return c;
}

static double step_ms(int32_t seqs, int32_t pos) { return 1 + (seqs - 1) * 0.125 + pos / 1024.0; }

static double sum(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}

static void test_figures_on_the_callers_clock(void)
{
    model m;
    ib_gen_callbacks cb = table(&m);
    ib_gen *g = open_cb(&cb, NULL);
    ib_gen_config c = config();
    ib_gen_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.runs, 10);
    CHECK_EQ_INT(r.token.n, 10 * N);
    CHECK(r.timer_resolution_ms == 0); /* the caller's clock, its resolution */
    /* The first prefill and step apart; no cold factor in this script. */
    CHECK(r.cold_prefill_ms == 2.5);
    CHECK(r.cold_step_ms == step_ms(1, P));
    for (size_t k = 0; k < r.runs; k++) {
        CHECK(r.ttft_ms[k] == 2.5); /* the queued half included: synchronize waited for it */
        for (int i = 0; i < N; i++) CHECK(r.token_ms[k * N + i] == step_ms(1, P + i));
    }
    CHECK(r.tokens_per_s == 10.0 * N / sum(r.token_ms, 10 * N) * 1e3);
    CHECK(r.prompt_tokens_per_s == (double)P * 10 / 25.0 * 1e3);
    CHECK_EQ_INT(m.prefills, 1 + 3 + 10);
    CHECK_EQ_INT(m.prefill_tokens, 14 * P);
    CHECK_EQ_INT(m.steps, 1 + 13 * N);
    CHECK_EQ_INT(m.clears, 14);
    CHECK_EQ_INT(m.sets, 1);
    CHECK_EQ_INT(m.last_ctx, P + N);
    ib_gen_result_free(&r);
    ib_gen_destroy(g);
    CHECK_EQ_INT(m.destroys, 1);
}

/* What the caller states is what the result carries; describe adds what
 * changes with the sequences. */
static void test_info_stated_and_described(void)
{
    model m;
    ib_gen_callbacks cb = table(&m);
    ib_gen_info info = { .n_layers = 4, .n_vocab = 1000, .kv_bytes = 99 };
    strcpy(info.arch, "tiny-llama");
    strcpy(info.weights_type, "float16");
    CHECK(ib_option_list_set(&info.options, "attention", "sdpa") == IB_OK);
    memset(info.kv_type, 'x', sizeof info.kv_type); /* not terminated: cut at its size */
    ib_gen *g = open_cb(&cb, &info);
    const ib_gen_info *in = ib_gen_get_info(g);
    CHECK(!strcmp(in->model, "callbacks") && !strcmp(in->arch, "tiny-llama"));
    CHECK(strlen(in->kv_type) == sizeof in->kv_type - 1);
    CHECK(in->device == IB_DEVICE_CPU); /* AUTO read as the CPU */
    CHECK_EQ_INT(m.describes, 1);
    ib_gen_config c = config();
    c.run.runs = 2;
    ib_gen_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.info.n_layers, 4);
    CHECK_EQ_INT(r.info.n_seq_max, 1);
    CHECK_EQ_INT(r.info.n_ctx, P + N);
    CHECK_EQ_INT(r.info.kv_bytes, (P + N) * 1024);
    CHECK(r.info.options.n == 1 && !strcmp(r.info.options.items[0].value, "sdpa"));
    ib_result res = { .kind = IB_RESULT_GENERATION, .generation = &r, .gen_cfg = &c };
    char *json = ib_report(&res, "json");
    CHECK(json && strstr(json, "\"tiny-llama\"") && strstr(json, "\"sdpa\""));
    ib_free(json);
    ib_gen_result_free(&r);
    ib_gen_destroy(g);
}

/* Out of memory from set_sequences ends the search's growth; fork makes
 * the sequences. */
static void test_search_ended_by_memory(void)
{
    model m;
    ib_gen_callbacks cb = table(&m);
    m.capacity_tokens = 37 * (P + N);
    ib_gen *g = open_cb(&cb, NULL);
    ib_gen_config c = config();
    c.run.runs = 2;
    c.search = true;
    c.sequence_runs = 1;
    ib_gen_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.searched);
    CHECK_EQ_INT(r.largest_fitting, 37);
    CHECK(!r.limited_by_max);
    CHECK(strstr(r.limit_reason, "do not fit") != NULL);
    CHECK(m.forks > 0);
    CHECK(r.n_points >= 2 && r.points[r.n_points - 1].sequences == 37);
    const ib_gen_point *p = &r.points[r.n_points - 1];
    double total = 0;
    for (int i = 0; i < N; i++) total += step_ms(37, P + i);
    CHECK_EQ_INT(p->steps, N);
    CHECK(p->tokens_per_s == 37.0 * N / total * 1e3);
    ib_gen_result_free(&r);
    ib_gen_destroy(g);
}

/* Without set_sequences the stated cache bounds what fits; without fork
 * only one sequence. */
static void test_fixed_cache_and_no_fork(void)
{
    model m;
    ib_gen_callbacks cb = table(&m);
    cb.set_sequences = NULL;
    ib_gen_info info = { .n_seq_max = 4 };
    ib_gen *g = open_cb(&cb, &info);
    ib_gen_config c = config();
    c.run.runs = 2;
    c.search = true;
    c.sequence_runs = 1;
    ib_gen_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.largest_fitting, 4);
    CHECK(strstr(r.limit_reason, "holds 4 (no set_sequences)") != NULL);
    ib_gen_result_free(&r);
    ib_gen_destroy(g);

    cb = table(&m);
    cb.fork = NULL;
    g = open_cb(&cb, NULL);
    int32_t list[] = { 1, 2 };
    c.search = false;
    c.sequences = list;
    c.n_sequences = 2;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n_points, 2);
    CHECK(r.points[0].status == IB_OK && r.points[1].status == IB_ERR_UNSUPPORTED);
    ib_gen_result_free(&r);
    ib_gen_destroy(g);

    /* A context stated too small for the measurement: one line. */
    cb = table(&m);
    cb.set_sequences = NULL;
    info = (ib_gen_info){ .n_ctx = 32 };
    g = open_cb(&cb, &info);
    c = config();
    err.message[0] = '\0';
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "pass the callbacks' context of 32 tokens") != NULL);
    ib_gen_result_free(&r);
    ib_gen_destroy(g);
}

/* No synchronize: the calls are synchronous, timed as they return. */
static void test_synchronous_calls(void)
{
    model m;
    ib_gen_callbacks cb = table(&m);
    cb.synchronize = NULL;
    ib_gen *g = open_cb(&cb, NULL);
    m.queue = false;
    ib_gen_config c = config();
    c.run.runs = 3;
    ib_gen_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.ttft_ms[0] == 2.5 && r.token_ms[N - 1] == step_ms(1, P + N - 1));
    CHECK_EQ_INT(m.syncs, 0);
    ib_gen_result_free(&r);
    ib_gen_destroy(g);
}

/* The optional slots: sampling timed apart, reopen for the no-warm-up row. */
static void test_optional_slots(void)
{
    model m;
    ib_gen_callbacks cb = table(&m);
    ib_gen *g = open_cb(&cb, NULL);
    ib_gen_config c = config();
    c.run.runs = 2;
    c.time_sampling = true;
    ib_gen_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_UNSUPPORTED); /* no sample slot */
    ib_gen_result_free(&r);
    ib_gen_destroy(g);

    cb = table(&m);
    cb.sample = sample;
    cb.reopen = reopen;
    g = open_cb(&cb, NULL);
    c.pitfalls = true;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.sample_ms && r.sample_ms[0] == 0.25);
    CHECK_EQ_INT(m.samples, 2 * N); /* after each timed step, not in warm-up or the pitfalls' runs */
    CHECK(r.pitfalls[IB_GEN_PITFALL_NO_WARMUP].applies && m.reopens == 1);
    CHECK(!r.pitfalls[IB_GEN_PITFALL_THREADS].applies);
    ib_gen_result_free(&r);
    ib_gen_destroy(g);
}

/* A slot failing: its line (the library's where it gave none), the runs
 * before it kept; a value that is no status is a runtime failure. */
static void test_failures(void)
{
    model m;
    ib_gen_callbacks cb = table(&m);
    ib_gen *g = open_cb(&cb, NULL);
    /* The cold run is a prefill and a step, the 3 warm-up runs 3 x (1 + N)
     * calls; 2 timed runs more, then the third fails at its 6th call. */
    m.fail_at = 2 + 3 * (1 + N) + 2 * (1 + N) + 5;
    m.fail_with = IB_ERR_RUNTIME;
    ib_gen_config c = config();
    ib_gen_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_RUNTIME);
    CHECK(r.partial && r.runs == 2);
    CHECK(!strcmp(err.message, "scripted failure"));
    ib_gen_result_free(&r);
    ib_gen_destroy(g);

    cb = table(&m);
    g = open_cb(&cb, NULL);
    m.fail_at = 3;
    m.fail_silently = true;
    m.fail_with = IB_ERR_DEVICE_LOST;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_DEVICE_LOST);
    CHECK(strstr(err.message, "the callbacks' step failed") != NULL);
    ib_gen_result_free(&r);
    ib_gen_destroy(g);

    cb = table(&m);
    g = open_cb(&cb, NULL);
    m.fail_at = 0;
    m.fail_with = 5;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_RUNTIME);
    CHECK(!strcmp(err.message, "the callbacks' prefill returned 5, not an ib_status"));
    ib_gen_result_free(&r);
    ib_gen_destroy(g);
}

static void test_bad_tables(void)
{
    model m;
    ib_gen *g = (ib_gen *)&m;
    ib_error err = { { 0 } };
    CHECK(ib_gen_open_callbacks(NULL, NULL, &g, &err) == IB_ERR_INVALID_ARG && g == NULL);
    ib_gen_callbacks cb = table(&m);
    cb.version = 2;
    CHECK(ib_gen_open_callbacks(&cb, NULL, &g, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "of version 2, but this inferbench speaks version 1") != NULL);
    cb = table(&m);
    cb.struct_size = 16;
    CHECK(ib_gen_open_callbacks(&cb, NULL, &g, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "of 16 bytes") != NULL);
    cb = table(&m);
    cb.step = NULL;
    CHECK(ib_gen_open_callbacks(&cb, NULL, &g, &err) == IB_ERR_INVALID_ARG);
    CHECK(!strcmp(err.message, "the generation callbacks give no step (required)"));
    cb = table(&m);
    cb.clock_resolution_ms = NAN;
    CHECK(ib_gen_open_callbacks(&cb, NULL, &g, &err) == IB_ERR_INVALID_ARG);
    CHECK_EQ_INT(m.destroys, 0); /* nothing opened, nothing destroyed */
    CHECK(g == NULL);
}

/* A mixed batch costs 1 ms + 0.5 a decode token + 0.1 a prompt token
 * (test_gen_serve.c's scripted engine), each sequence filled position
 * after position. */
static ib_status decode_batch(void *u, const ib_gen_batch_entry *e, size_t n, ib_error *err)
{
    model *m = u;
    double ms = 1;
    for (size_t i = 0; i < n; i++) {
        if (e[i].pos != m->filled[e[i].seq]) {
            snprintf(err->message, sizeof err->message, "entry at %d, sequence %d holds %d", (int)e[i].pos,
                     (int)e[i].seq, (int)m->filled[e[i].seq]);
            return IB_ERR_INTERNAL;
        }
        ms += e[i].n_tokens == 1 ? 0.5 : 0.1 * e[i].n_tokens;
    }
    int st = call(m, ms, err);
    if (st != IB_OK) return st;
    for (size_t i = 0; i < n; i++) m->filled[e[i].seq] += e[i].n_tokens;
    m->batches++;
    return IB_OK;
}

static ib_status remove_sequence(void *u, int32_t seq, int32_t from_pos, ib_error *err)
{
    (void)err;
    model *m = u;
    m->filled[seq] = from_pos;
    m->removes++;
    return IB_OK;
}

/* Serving through the callbacks: test_gen_serve.c's three requests by
 * hand (two slots, chunks of 10), the same times on the caller's clock:
 * TTFT 2, 7 and 8 ms, the last after 6 ms waiting for a slot. */
static void test_serve_through_callbacks(void)
{
    model m;
    ib_gen_callbacks cb = table(&m);
    cb.decode_batch = decode_batch;
    cb.remove_sequence = remove_sequence;
    /* The tokens one call takes: what the engine's step is bounded by (a
     * table that states none is refused by serving, one line). */
    ib_gen_info info = { .n_batch = 512 };
    ib_gen *g = open_cb(&cb, &info);
    if (!g) return;
    static const ib_gen_request_spec three[] = { { 0, 10, 3 }, { 0, 20, 2 }, { 1, 5, 2 } };
    ib_gen_serve_config c;
    ib_gen_serve_config_init(&c);
    c.arrivals = IB_ARRIVALS_TRACE;
    c.trace = three;
    c.n_trace = 3;
    c.slots = 2;
    c.prefill_chunk = 10;
    c.warmup_requests = 0;
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    const double ttft[] = { 2, 7, 8 }, queue[] = { 0, 0, 6 };
    for (size_t i = 0; i < 3 && r.n_requests == 3; i++) {
        CHECK_NEAR(r.requests[i].ttft_ms, ttft[i], 1e-9);
        CHECK_NEAR(r.requests[i].queue_ms, queue[i], 1e-9);
    }
    CHECK_NEAR(r.span_ms, 10.5, 1e-9);
    CHECK_EQ_INT(m.batches, 5);
    CHECK_EQ_INT(m.removes,
                 7); /* each end, and the prefix cache trimming a slot (remove_sequence from a position) */
    CHECK_EQ_INT(m.filled[0] + m.filled[1], 0); /* no sequence left in the cache */
    ib_gen_serve_result_free(&r);
    ib_gen_destroy(g);

    /* A table of the first size (built before the mixed batch): opened,
     * its serving refused; one slot of the two: refused at open. */
    cb = table(&m);
    cb.struct_size = offsetof(ib_gen_callbacks, decode_batch);
    g = open_cb(&cb, NULL);
    if (g) CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "cannot decode a mixed batch") != NULL);
    ib_gen_destroy(g);
    cb = table(&m);
    cb.decode_batch = decode_batch;
    g = NULL;
    CHECK(ib_gen_open_callbacks(&cb, NULL, &g, &err) == IB_ERR_INVALID_ARG);
    CHECK(!strcmp(err.message, "the generation callbacks give decode_batch without remove_sequence: serving "
                               "needs both"));
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_figures_on_the_callers_clock);
    RUN(test_info_stated_and_described);
    RUN(test_search_ended_by_memory);
    RUN(test_fixed_cache_and_no_fork);
    RUN(test_synchronous_calls);
    RUN(test_optional_slots);
    RUN(test_failures);
    RUN(test_bad_tables);
    RUN(test_serve_through_callbacks);
    return check_summary("test_gen_callbacks");
}
