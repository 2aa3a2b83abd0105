/* A generative model's serve (docs/serve-generative.md): the slots by
 * default (the KV cache's capacity at the longest request), the served
 * run's energy on the generation fake's scripted counter, the machine's
 * state in the result, and the engine's own cost against a bare loop of
 * its batches, on the fake's virtual clock where both are exact. */
#include "check.h"
#include "report/printer.h"
#include "gen_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A step costs 1 ms + 0.5 ms a decode token + 0.1 ms a prompt token. */
static void scripted(ib__gen_fake_script *s)
{
    ib__gen_fake_script_init(s);
    s->cold_calls = 0;
    s->batch_ms = 1;
    s->batch_decode_token_ms = 0.5;
    s->batch_prefill_token_ms = 0.1;
}

/* test_gen_serve.c's three requests: the longest needs 20 + 2 = 22 cells. */
static const ib_gen_request_spec three[] = { { 0, 10, 3 }, { 0, 20, 2 }, { 1, 5, 2 } };

static ib_gen_serve_config trace_config(int32_t slots)
{
    ib_gen_serve_config c;
    ib_gen_serve_config_init(&c);
    c.arrivals = IB_ARRIVALS_TRACE;
    c.trace = three;
    c.n_trace = 3;
    c.slots = slots;
    c.prefill_chunk = 10;
    c.warmup_requests = 0;
    return c;
}

/* A cache of 131 cells holds 5 slots of 22 (110), not 6 (132): the
 * default is 5, said so, and the run is served on them; 21 cells hold
 * none: out of memory, one line, nothing served. */
static void test_default_slots(void)
{
    ib__gen_fake_script s;
    scripted(&s);
    s.kv_capacity_tokens = 131;
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c = trace_config(0);
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.slots, 5);
    CHECK(r.slots_from == IB_GEN_SLOTS_KV_CAPACITY);
    CHECK_EQ_INT(r.info.n_seq_max, 5);
    CHECK_EQ_INT(r.n_completed, 3);
    for (int32_t q = 0; q < 5; q++) CHECK_EQ_INT(ib__gen_fake_filled(g, q), 0);
    char *text = ib__gen_serve_report_text(&r, &c, NULL);
    CHECK(text &&
          strstr(text, "\nslots 5 (the KV cache's capacity at 22 tokens a slot; --slots N to choose)\n"));
    free(text);
    char *json = ib__gen_serve_report_json(&r, &c, NULL);
    CHECK(json && strstr(json, "\"slots_from\":\t\"kv_capacity\""));
    free(json);
    ib_gen_serve_result_free(&r);
    c.slots = 3; /* given: no search */
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    CHECK(r.slots == 3 && r.slots_from == IB_GEN_SLOTS_GIVEN);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);

    s.kv_capacity_tokens = 21;
    g = gen_fixture_open(&s);
    if (!g) return;
    c.slots = 0;
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_DEVICE_OOM);
    CHECK(strstr(err.message, "the KV cache of one slot of 22 tokens does not fit (fake: a KV cache of 22 "
                              "tokens passes the capacity of 21)") != NULL);
    CHECK(r.requests == NULL);
    ib__gen_destroy(g);
}

/* A cache that holds any count: the cap, said so. */
static void test_default_slots_capped(void)
{
    ib__gen_fake_script s;
    scripted(&s);
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c = trace_config(0);
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.slots, IB_GEN_SERVE_MAX_DEFAULT_SLOTS);
    CHECK(r.slots_from == IB_GEN_SLOTS_CAPPED);
    char *text = ib__gen_serve_report_text(&r, &c, NULL);
    CHECK(text &&
          strstr(text, "\nslots 256 (the most the default takes: the KV cache holds 256 or more at 22 "
                       "tokens a slot; --slots N to choose)\n"));
    free(text);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* 100 requests at 100/s (10 + 5 tokens each), the device drawing 50 W
 * idle and 150 W while a step runs, its counter changing every 10 ms.
 * The window is the schedule's (neither end aligned: each off by up to a
 * step), so the joules are the true energy of the window, 50 W over it
 * and 100 W more over the steps, within the bound; the bound is a step
 * over the window plus a count over the joules; the tokens, the idle
 * power and the per-request figure are exact. */
static void test_energy(void)
{
    ib__gen_fake_script s;
    scripted(&s);
    s.energy_step_ms = 10;
    s.idle_w = 50;
    s.busy_w = 150;
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c;
    ib_gen_serve_config_init(&c);
    c.arrivals = IB_ARRIVALS_CONSTANT;
    c.rate = 100;
    c.requests = 100;
    c.prompt_min = c.prompt_max = 10;
    c.output_min = c.output_max = 5;
    c.slots = 2;
    c.warmup_requests = 1;
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    const ib_energy *e = &r.energy.device;
    CHECK(e->source == IB_ENERGY_COUNTER);
    CHECK(!e->aligned);
    CHECK_NEAR(e->items, 500, 0);
    CHECK_NEAR(e->idle_power_w, 50, 1e-9);
    CHECK_NEAR(e->step_ms, 10, 1e-9);
    CHECK_NEAR(e->bound, 10 / e->window_ms + 1e-3 / e->joules, 1e-12);
    CHECK(e->bound < 0.02);
    CHECK_NEAR(e->joules_per_item, e->joules / 500, 1e-12);
    CHECK_NEAR(r.energy.joules_per_request, e->joules / 100, 1e-12);
    CHECK_NEAR(e->power_w, e->joules / e->window_ms * 1e3, 1e-9);
    CHECK_NEAR(e->joules_above_idle, e->joules - 50 * e->window_ms / 1e3, 1e-9);
    double busy_ms = 0;
    for (size_t i = 0; i < r.n_steps; i++) busy_ms += r.steps[i].end_ms - r.steps[i].start_ms;
    double truth = (50 * e->window_ms + 100 * busy_ms) / 1e3;
    CHECK(fabs(e->joules - truth) <= e->bound * e->joules);
    CHECK(fabs(e->window_ms - r.span_ms) <= 10); /* the schedule's, to a step */
    char *text = ib__gen_serve_report_text(&r, &c, NULL);
    CHECK(text && strstr(text, "\nenergy per output token (over the served schedule): "));
    CHECK(text && strstr(text, "\n  a request: "));
    free(text);
    char *json = ib__gen_serve_report_json(&r, &c, NULL);
    CHECK(json && strstr(json, "\"energy\":\t{") && strstr(json, "\"joules_per_request\":"));
    free(json);
    ib_gen_serve_result_free(&r);

    /* Not asked: no figure, and why. */
    c.run.measure_energy = false;
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    CHECK(r.energy.device.source == IB_ENERGY_NONE && isnan(r.energy.joules_per_request));
    ib_gen_serve_result_free(&r);

    ib__gen_destroy(g);

    /* A call failing mid-run: the partial result has no figure of a run
     * cut short (the warm-up's request takes the first 5 calls). */
    s.fail_at_call = 20;
    g = gen_fixture_open(&s);
    if (!g) return;
    c.run.measure_energy = true;
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_ERR_RUNTIME);
    CHECK(r.partial && r.n_steps > 0);
    CHECK(r.energy.device.source == IB_ENERGY_NONE);
    CHECK(!strcmp(r.energy.device.note, "the run did not run to the end: no energy figure"));
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* Without a counter: no figure, one line saying why. */
static void test_no_counter(void)
{
    ib__gen_fake_script s;
    scripted(&s);
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c = trace_config(2);
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    CHECK(r.energy.device.source == IB_ENERGY_NONE);
    char *text = ib__gen_serve_report_text(&r, &c, NULL);
    CHECK(text && strstr(text, "\nenergy: no figure: the fake scripts no energy counter (energy_step_ms 0)"));
    free(text);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* The machine: the environment captured, stated in the text's heading
 * and the JSON, with the warnings. */
static void test_environment(void)
{
    ib__gen_fake_script s;
    scripted(&s);
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c = trace_config(2);
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    CHECK(!strcmp(r.env.tool_version, IB_VERSION_STRING));
    CHECK(r.env.n_cpus > 0);
    char *text = ib__gen_serve_report_text(&r, &c, NULL);
    char heading[300];
    snprintf(heading, sizeof heading, " under load\n%s\n", r.env.host_cpu[0] ? r.env.host_cpu : "host CPU");
    CHECK(text && strstr(text, heading));
    free(text);
    char *json = ib__gen_serve_report_json(&r, &c, NULL);
    CHECK(json && strstr(json, "\"environment\":\t{") && strstr(json, "\"warnings\":\t["));
    free(json);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* The engine's own cost on the virtual clock, which only the workload's
 * calls move: the by-hand run's steps (2, 2.5, 2.5, 2, 1.5 ms: 2.1 ms a
 * step) are their decode_batch + synchronize whole, the engine's own time
 * 0; replayed back to back (with the removals), the same 2.1 ms a step:
 * 0 us against the bare loop. The replay feeds the fake every batch
 * again, and leaves no sequence in its cache. */
static void test_engine_cost(void)
{
    ib__gen_fake_script s;
    scripted(&s);
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c = trace_config(2);
    c.prefix_cache = false; /* each request's sequence removed at its end: the removals counted below */
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    const ib_gen_serve_engine_cost *k = &r.engine_cost;
    CHECK_EQ_INT(k->steps, 5);
    CHECK_NEAR(k->engine_us_per_step, 2100, 1e-9);
    CHECK_NEAR(k->runtime_us_per_step, 2100, 1e-9);
    CHECK_NEAR(k->removal_us_per_step, 0, 1e-9);
    CHECK_NEAR(k->own_us_per_step, 0, 1e-9);
    CHECK(!k->replayed && isnan(k->bare_us_per_step));
    ib_gen_serve_result_free(&r);

    c.engine_cost = true;
    ib__gen_fake_counts before = ib__gen_fake_counts_of(g);
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    ib__gen_fake_counts after = ib__gen_fake_counts_of(g);
    CHECK(k->replayed);
    CHECK_NEAR(k->bare_us_per_step, 2100, 1e-9);
    CHECK_NEAR(k->against_bare_us, 0, 1e-9);
    CHECK_EQ_INT(after.batches - before.batches, 10);
    CHECK_EQ_INT(after.removes - before.removes, 6);
    CHECK_EQ_INT(after.batch_prefill_tokens - before.batch_prefill_tokens, 70);
    CHECK_EQ_INT(ib__gen_fake_filled(g, 0), 0);
    CHECK_EQ_INT(ib__gen_fake_filled(g, 1), 0);
    char *text = ib__gen_serve_report_text(&r, &c, NULL);
    CHECK(text &&
          strstr(text, "\nengine's own time: 0 us a step (admission, planning, stamps) beside 2.1 ms in "
                       "decode_batch + synchronize and 0 us in the runtime's sequence removals, over 5 "
                       "steps\n"));
    CHECK(text && strstr(text, "\nengine against a bare loop of its batches: 2.1 ms a step against 2.1 ms "
                               "bare: +0 us a step\n"));
    free(text);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

/* The runtime's removals are its own work, not the engine's: the same
 * run with a removal of 250 us on the virtual clock (its 3 requests'
 * sequences removed at their ends, inside their last steps): 11.25 ms
 * over 5 steps whole, 2.1 ms a step in decode_batch + synchronize, 150 us
 * a step in removals, the engine's own time still 0. */
static void test_engine_cost_removals_apart(void)
{
    ib__gen_fake_script s;
    scripted(&s);
    s.remove_ms = 0.25;
    ib__gen *g = gen_fixture_open(&s);
    if (!g) return;
    ib_gen_serve_config c = trace_config(2);
    c.prefix_cache = false;
    ib_gen_serve_result r;
    ib_error err = { { 0 } };
    CHECK(ib_measure_gen_serve(g, &c, &r, &err) == IB_OK);
    const ib_gen_serve_engine_cost *k = &r.engine_cost;
    CHECK_EQ_INT(k->steps, 5);
    CHECK_NEAR(k->engine_us_per_step, 2250, 1e-9);
    CHECK_NEAR(k->runtime_us_per_step, 2100, 1e-9);
    CHECK_NEAR(k->removal_us_per_step, 150, 1e-9);
    CHECK_NEAR(k->own_us_per_step, 0, 1e-9);
    ib_gen_serve_result_free(&r);
    ib__gen_destroy(g);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_default_slots);
    RUN(test_default_slots_capped);
    RUN(test_energy);
    RUN(test_no_counter);
    RUN(test_environment);
    RUN(test_engine_cost);
    RUN(test_engine_cost_removals_apart);
    return check_summary("test_gen_serve_machine");
}
