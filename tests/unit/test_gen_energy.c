/* Energy of a generation (docs/energy.md, "For generation") on the scripted
 * generation fake: its virtual clock and its scripted counter (100 ms
 * steps, 60 W idle, 300 W while a call runs), so that the decode window's
 * joules per token, the prefill window's per prompt token, the idle power
 * and the bounds are exact; the curve over sequences within its bounds;
 * every refusal with its reason; every format. */
#include "backend/fake/gen_fake.h"
#include "core/generate.h"
#include "check.h"
#include "gen_fixtures.h"
#include <cjson/cJSON.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* P 64, N 16: a prefill of 2 + 64/128 = 2.5 ms and a step of 1 ms (no cost
 * per position), 1/8 ms more per sequence: the steps and the prefills fall
 * on a grid that divides the counter's 100 ms, so both ends of a window lie
 * the same distance after the counter's changes and its length is the
 * counted interval's exactly. */
#define P 64
#define N 16

static ib__gen_fake_script script(void)
{
    ib__gen_fake_script s;
    ib__gen_fake_script_init(&s);
    s.step_pos_ms = 0;
    s.energy_step_ms = 100;
    s.idle_w = 60;
    s.busy_w = 300;
    return s;
}

/* The decode window: 1 ms steps at 300 W, the positions cycling over the
 * timed ones. It grows until 1 ms over its length is 1% (100 ms), the
 * counter's change at that instant is already read, so it ends at the
 * next: 200 ms, 200 tokens, 60 J. */
static void test_decode_exact(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    const ib_energy *e = &r.decode_energy;
    CHECK(e->source == IB_ENERGY_COUNTER && e->aligned);
    CHECK(e->window_ms == 200);
    CHECK(e->items == 200);
    CHECK_NEAR(e->joules, 60, 1e-9);
    CHECK_NEAR(e->joules_per_item, 0.3, 1e-12);
    CHECK_NEAR(e->items_per_joule, 1 / 0.3, 1e-9);
    CHECK_NEAR(e->power_w, 300, 1e-9);
    CHECK_NEAR(e->bound, 1.0 / 200 + 1e-3 / 60, 1e-12);
    CHECK_NEAR(e->idle_power_w, 60, 1e-9);
    CHECK_NEAR(e->joules_above_idle, 60 - 60 * 0.2, 1e-9);
    CHECK_NEAR(e->joules_per_item_above_idle, 0.24, 1e-12);
    CHECK(e->step_ms == 100);
    CHECK(e->timed_ms_per_item == 1); /* the TPOT over one sequence: the window ran as fast */
    CHECK(!strcmp(e->counter, "the fake's scripted counter"));
    /* The fake's own counter is not beside the machine's package. */
    CHECK(r.decode_cpu_energy.source == IB_ENERGY_NONE && strstr(r.decode_cpu_energy.note, "its own energy"));
    /* The timed figures are the steps' alone: the windows came after. */
    for (size_t i = 0; i < r.runs * N; i++) CHECK(r.token_ms[i] == 1);
    ib__gen_fake_counts n = ib__gen_fake_counts_of(g);
    CHECK(n.rewinds > 0);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* Steps that grow with the position, at a depth beyond the prompt: 129/64
 * + p/32 ms at p = 128..143, 100 ms over the 16, the counter's step. The
 * window's steps cycle over those positions (the cache rewound to the
 * depth), so it holds whole cycles: 1.875 J a token, 300 W x the mean step
 * of 6.25 ms; a cycle over other positions (from the prompt's end, or one
 * short) has another mean step, and other joules a token. */
static void test_decode_cycles_over_the_depth(void)
{
    ib__gen_fake_script s = script();
    s.step_ms = 129.0 / 64;
    s.step_pos_ms = 1.0 / 32;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.depth = 128;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    const ib_energy *e = &r.decode_energy;
    CHECK(e->source == IB_ENERGY_COUNTER && e->aligned);
    CHECK(fmod(e->window_ms, 100) == 0 && e->items == 16 * e->window_ms / 100);
    CHECK_NEAR(e->joules_per_item, 1.875, 1e-12);
    CHECK_NEAR(e->power_w, 300, 1e-9);
    CHECK_NEAR(e->timed_ms_per_item, 6.25, 1e-12);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* One new token: the window's every step at the depth, the cache rewound
 * after each. A step of 2.5 ms at 300 W: 0.75 J a token. */
static void test_decode_one_new_token(void)
{
    ib__gen_fake_script s = script();
    s.step_ms = 2.5 - 64.0 / 32;
    s.step_pos_ms = 1.0 / 32;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, 1);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    const ib_energy *e = &r.decode_energy;
    CHECK(e->source == IB_ENERGY_COUNTER && e->aligned);
    CHECK_NEAR(e->joules_per_item, 0.75, 1e-12);
    CHECK_EQ_INT(ib__gen_fake_counts_of(g).last_step_pos, P);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* The idle power is learned before the cold run (docs/energy.md, "For
 * generation"): the device at rest, not still warm from the runs. The
 * counter's reads before the fake's first prefill are the learning's: one
 * poll and one a change at least, for IB__ENERGY_LEARN_CHANGES changes. */
static void test_idle_learned_before_the_cold_run(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(ib__gen_fake_counts_of(g).energy_reads_before_calls >= 1 + IB__ENERGY_LEARN_CHANGES);
    CHECK_NEAR(r.decode_energy.idle_power_w, 60, 1e-9);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* The prefill window: 2.5 ms prefills of 64 tokens at 300 W; 250 ms for
 * 1%, then to the next change: 300 ms, 120 prefills. */
static void test_prefill_exact(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    const ib_energy *e = &r.prefill_energy;
    CHECK(e->source == IB_ENERGY_COUNTER && e->aligned);
    CHECK(e->window_ms == 300);
    CHECK(e->items == 120 * P);
    CHECK_NEAR(e->joules, 90, 1e-9);
    CHECK_NEAR(e->joules_per_item, 90.0 / (120 * P), 1e-12);
    CHECK_NEAR(e->joules_per_item * P, 0.75, 1e-12); /* a request's: 300 W x 2.5 ms */
    CHECK_NEAR(e->bound, 2.5 / 300 + 1e-3 / 90, 1e-12);
    CHECK_NEAR(e->idle_power_w, 60, 1e-9);
    CHECK_NEAR(e->timed_ms_per_item, 2.5 / P, 1e-15); /* the TTFT's median a prompt token */
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* The curve: each count's window at 100 + 100 x s W. Per token (100 +
 * 100 s)(1 + (s - 1)/8) / s mJ: the most efficient is 2 sequences, the
 * fastest 8. */
static double joules_per_token(int s) { return (100 + 100.0 * s) * (1 + (s - 1) / 8.0) / s / 1e3; }

static void test_sequences_curve(void)
{
    ib__gen_fake_script s = script();
    s.busy_w = 100;
    s.busy_w_per_seq = 100;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    int32_t list[] = { 1, 2, 4, 8 };
    c.sequences = list;
    c.n_sequences = 4;
    c.sequence_runs = 1;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK_EQ_INT(r.n_points, 4);
    for (size_t i = 0; i < r.n_points; i++) {
        const ib_energy *e = &r.points[i].energy;
        double want = joules_per_token(list[i]);
        CHECK(e->source == IB_ENERGY_COUNTER && e->aligned && e->bound <= IB_ENERGY_MAX_BOUND);
        CHECK(fabs(e->joules_per_item / want - 1) <= e->bound);
        /* tokens: the sequences of each step in the window */
        CHECK(fmod(e->items, list[i]) == 0);
    }
    CHECK_EQ_INT(r.most_efficient, 1);
    CHECK_EQ_INT(r.peak, 3);
    /* The single sequence's decode window, at 200 W: 0.2 J a token, exactly. */
    CHECK_NEAR(r.decode_energy.joules_per_item, 0.2, 1e-12);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* --no-energy: no figure, said, and not one call more than without a
 * counter (test_generate's counts). */
static void test_not_asked(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.run.measure_energy = false;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.decode_energy.source == IB_ENERGY_NONE && strstr(r.decode_energy.note, "not measured"));
    CHECK(r.prefill_energy.source == IB_ENERGY_NONE && isnan(r.prefill_energy.joules_per_item));
    ib__gen_fake_counts n = ib__gen_fake_counts_of(g);
    CHECK_EQ_INT(n.prefills, 1 + 3 + 10);
    CHECK_EQ_INT(n.steps, 1 + 13 * N);
    CHECK_EQ_INT(n.rewinds, 0);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* No counter scripted: its reason, and no window run. */
static void test_no_counter(void)
{
    ib__gen_fake_script s = script();
    s.energy_step_ms = 0;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.decode_energy.source == IB_ENERGY_NONE &&
          !strcmp(r.decode_energy.note, "the fake scripts no energy counter (energy_step_ms 0)"));
    CHECK(r.prefill_energy.source == IB_ENERGY_NONE);
    ib__gen_fake_counts n = ib__gen_fake_counts_of(g);
    CHECK_EQ_INT(n.steps, 1 + 13 * N);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* Steps of 300 ms: a 3 s window is read to 300 / 3000 ms, 10%: above the
 * 5% a figure needs, so none, and why. */
static void test_window_too_short(void)
{
    ib__gen_fake_script s = script();
    s.step_ms = 300;
    s.cold_calls = 0;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    c.new_tokens = 4;
    c.run.runs = 2;
    c.run.warmup_runs = 1;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    const ib_energy *e = &r.decode_energy;
    CHECK(e->source == IB_ENERGY_NONE && isnan(e->joules_per_item));
    CHECK(strstr(e->note, "reads its energy to +-") && strstr(e->note, "above the 5% a figure needs"));
    CHECK(e->bound > IB_ENERGY_MAX_BOUND && e->window_ms >= 3000);
    /* The prefill's 2.5 ms are short: its figure stands. */
    CHECK(r.prefill_energy.source == IB_ENERGY_COUNTER);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* A backend that cannot rewind its cache: no decode window, said. */
static void test_no_rewind(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib__gen_ops ops = *g->ops;
    ops.rewind = NULL;
    g->ops = &ops;
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.decode_energy.source == IB_ENERGY_NONE && strstr(r.decode_energy.note, "cannot rewind"));
    CHECK(r.prefill_energy.source == IB_ENERGY_COUNTER);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* A clock of the caller's own that cannot wait (the callbacks' now_ms): no
 * meter, said, rather than a wait that cannot end. */
static void test_clock_cannot_wait(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    g->clock.wait_until_ms = NULL;
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    CHECK(r.decode_energy.source == IB_ENERGY_NONE && strstr(r.decode_energy.note, "cannot wait"));
    CHECK(r.prefill_energy.source == IB_ENERGY_NONE);
    ib__gen_fake_counts n = ib__gen_fake_counts_of(g);
    CHECK_EQ_INT(n.steps, 1 + 13 * N);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* A failure inside the energy window: the timed runs kept, the error
 * returned. Call 1 + 3 x 17 + 10 x 17 = 222 is the window's first pad. */
static void test_failure_in_window(void)
{
    ib__gen_fake_script s = script();
    s.fail_at_call = 1 + 1 + 13 * (1 + N) + 2;
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_ERR_RUNTIME);
    CHECK(r.partial && r.runs == 10);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* Every format carries the figures. */
static void test_formats(void)
{
    ib__gen_fake_script s = script();
    ib__gen *g = gen_fixture_open(&s);
    ib_gen_config c = gen_fixture_config(P, N);
    int32_t list[] = { 1, 2 };
    c.sequences = list;
    c.n_sequences = 2;
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    ib_result res = { .kind = IB_RESULT_GENERATION, .generation = &r, .gen_cfg = &c };
    char *text = ib_report(&res, "text"), *json = ib_report(&res, "json"), *csv = ib_report(&res, "csv");
    char *md = ib_report(&res, "md"), *html = ib_report(&res, "html");
    CHECK(text &&
          strstr(text, "energy per output token (decode): 0.3 J a token (+-0.5%), 3.333 tokens/J, 300 W "
                       "average over 200 ms (the window's ends on the counter's changes)\n"));
    CHECK(text &&
          strstr(text, "  idle 60 W before the runs: 0.24 J a token above idle (80% of the total)\n"));
    CHECK(text && strstr(text, "energy per prompt token (prefill): 0.01172 J a token"));
    CHECK(text && strstr(text, "  a request's prefill of 64 tokens: 0.75 J\n"));
    CHECK(text && strstr(text, "sequences    tokens/J"));
    CHECK(json && strstr(json, "\"decode_energy\"") && strstr(json, "\"prefill_energy\"") &&
          strstr(json, "\"joules_per_request\":\t0.75") && strstr(json, "\"most_efficient\""));
    CHECK(csv && strstr(csv, "energy,decode_joules_per_token,,,,1,0.3"));
    CHECK(csv && strstr(csv, "energy,prefill_joules_per_token,,,,1,"));
    CHECK(csv && strstr(csv, "sequences,joules_per_token,,,,2,"));
    CHECK(md && strstr(md, "| decode | 0.3 |"));
    CHECK(html && strstr(html, "<p>decode, per output token: 0.3 J a token (+-0.5%), 3.333 tokens/J"));
    CHECK(html && strstr(html, "<h2>Tokens per joule against sequences</h2>") &&
          strstr(html, "most efficient: "));
    free(text);
    free(json);
    free(csv);
    free(md);
    free(html);
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
}

/* One measurement's JSON document on script s. */
static char *json_of(const ib__gen_fake_script *s)
{
    ib__gen *g = gen_fixture_open(s);
    ib_gen_config c = gen_fixture_config(P, N);
    ib_gen_result r;
    ib_error err;
    CHECK(ib_measure_generation(g, &c, &r, &err) == IB_OK);
    ib_result res = { .kind = IB_RESULT_GENERATION, .generation = &r, .gen_cfg = &c };
    char *json = ib_report(&res, "json");
    ib_gen_result_free(&r);
    ib__gen_destroy(g);
    return json;
}

/* One measurement's JSON document at busy_w (energy_step_ms 0: no counter). */
static char *measured_json(double busy_w, double energy_step_ms)
{
    ib__gen_fake_script s = script();
    s.busy_w = busy_w;
    s.energy_step_ms = energy_step_ms;
    return json_of(&s);
}

static void parse(const char *json, ib_gen_file *f)
{
    ib_error err;
    CHECK(json && ib_gen_file_parse(json, strlen(json), f, &err) == IB_OK);
}

/* The first decode figure of json made -1: refused, one line. */
static void check_broken_figure(char *json)
{
    char *at = strstr(json, "\"decode_energy\"");
    at = at ? strstr(at, "\"joules_per_item\":\t") : NULL;
    CHECK(at != NULL);
    if (at) memcpy(at + strlen("\"joules_per_item\":\t"), "-1", 2);
    ib_gen_file x;
    ib_error err;
    CHECK(ib_gen_file_parse(json, strlen(json), &x, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "decode_energy.joules_per_item is not a positive number"));
}

/* compare: 330 W against 300 W is 10% more energy a token, within the
 * interval the two bounds give; a file without a figure: not in both. */
static void test_compare(void)
{
    char *ja = measured_json(300, 100), *jb = measured_json(330, 100), *jn = measured_json(300, 0);
    ib_gen_file a, b, n;
    parse(ja, &a);
    parse(jb, &b);
    parse(jn, &n);
    CHECK_NEAR(a.decode_joules_per_token, 0.3, 1e-12);
    CHECK_NEAR(b.decode_joules_per_token, 0.33, 1e-12);
    CHECK_NEAR(a.decode_energy_bound, 1.0 / 200 + 1e-3 / 60, 1e-12);
    CHECK(isnan(n.decode_joules_per_token) && isnan(n.decode_energy_bound));
    ib_gen_comparison c;
    ib_error err;
    CHECK(ib_compare_gen_files(&a, &b, 0.01, &c, &err) == IB_OK);
    double ba = a.decode_energy_bound, bb = b.decode_energy_bound;
    CHECK_NEAR(c.energy_change, 0.1, 1e-12);
    CHECK_NEAR(c.energy_change_interval[0], 0.33 * (1 - bb) / (0.3 * (1 + ba)) - 1, 1e-12);
    CHECK_NEAR(c.energy_change_interval[1], 0.33 * (1 + bb) / (0.3 * (1 - ba)) - 1, 1e-12);
    ib_result res = { .kind = IB_RESULT_GEN_COMPARISON, .gen_comparison = &c, .gen_a = &a, .gen_b = &b };
    char *text = ib_report(&res, "text"), *json = ib_report(&res, "json");
    CHECK(text &&
          strstr(text, "energy per token (decode): 0.3 J -> 0.33 J: +10.00%, within [+8.90%, +11.11%]"));
    CHECK(text && strstr(text, "): more energy\n"));
    CHECK(json && strstr(json, "\"energy_change\"") && strstr(json, "\"verdict\":\t\"more energy\""));
    free(text);
    free(json);
    CHECK(ib_compare_gen_files(&a, &n, 0.01, &c, &err) == IB_OK);
    CHECK(isnan(c.energy_change) && isnan(c.energy_change_interval[0]));
    res.gen_b = &n;
    text = ib_report(&res, "text");
    CHECK(text &&
          strstr(text, "energy per token (decode): not in both files: B has no figure: the fake scripts no "
                       "energy counter (energy_step_ms 0)\n"));
    free(text);
    /* A broken figure: refused, one line. */
    check_broken_figure(ja);
    ib_gen_file_free(&a);
    ib_gen_file_free(&b);
    ib_gen_file_free(&n);
    free(ja);
    free(jb);
    free(jn);
}

/* compare of two rates: steps of 1 ms (A) and of 1.25 ms (B), 1000 and
 * 800 tokens/s: B's change is -20% of A's rate; A against B, +25% of B's. */
static void test_compare_rates(void)
{
    ib__gen_fake_script s = script();
    char *ja = json_of(&s);
    s.step_ms = 1.25;
    char *jb = json_of(&s);
    ib_gen_file a, b;
    parse(ja, &a);
    parse(jb, &b);
    CHECK(a.tokens_per_s == 1000 && b.tokens_per_s == 800);
    ib_gen_comparison c;
    ib_error err;
    CHECK(ib_compare_gen_files(&a, &b, 0.01, &c, &err) == IB_OK);
    CHECK_NEAR(c.tokens_per_s_change, -0.2, 1e-15);
    ib_result res = { .kind = IB_RESULT_GEN_COMPARISON, .gen_comparison = &c, .gen_a = &a, .gen_b = &b };
    char *text = ib_report(&res, "text"), *json = ib_report(&res, "json");
    CHECK(text && strstr(text, "tokens/s A 1000.0, B 800.0 (-20.00%)"));
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(root, "tokens_per_s_change")), -0.2, 1e-15);
    cJSON_Delete(root);
    CHECK(ib_compare_gen_files(&b, &a, 0.01, &c, &err) == IB_OK);
    CHECK_NEAR(c.tokens_per_s_change, 0.25, 1e-15);
    free(text);
    free(json);
    ib_gen_file_free(&a);
    ib_gen_file_free(&b);
    free(ja);
    free(jb);
}

/* --sessions: each session's energy in its entry, the figures across
 * sessions (a geometric mean of one value each, with its t interval). */
static void test_sessions(void)
{
    char *docs[3] = { measured_json(300, 100), measured_json(330, 100), measured_json(300, 100) };
    ib_session_outcome o[3];
    for (int i = 0; i < 3; i++) o[i] = (ib_session_outcome){ docs[i], strlen(docs[i]), 0, "" };
    ib_error err;
    char *merged = ib_sessions_merge(IB_RESULT_GENERATION, o, 3, 3, NULL, &err);
    CHECK(merged != NULL);
    cJSON *root = merged ? cJSON_Parse(merged) : NULL;
    const cJSON *sessions = cJSON_GetObjectItem(root, "sessions"), *f, *decode = NULL;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(sessions, "figures"))
    {
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "key")), "decode_joules_per_token"))
            decode = f;
    }
    CHECK(decode != NULL);
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(decode, "geomean")), cbrt(0.3 * 0.33 * 0.3), 1e-12);
    const cJSON *ci = cJSON_GetObjectItem(decode, "ci95");
    CHECK(cJSON_GetArraySize(ci) == 2 && cJSON_GetArrayItem(ci, 0)->valuedouble < 0.3 &&
          cJSON_GetArrayItem(ci, 1)->valuedouble > 0.33);
    const cJSON *second = cJSON_GetArrayItem(cJSON_GetObjectItem(sessions, "runs"), 1);
    CHECK_NEAR(cJSON_GetNumberValue(
                   cJSON_GetObjectItem(cJSON_GetObjectItem(second, "decode_energy"), "joules_per_item")),
               0.33, 1e-12);
    CHECK(cJSON_GetObjectItem(root, "decode_energy") == NULL); /* a session's, not the merge's */
    ib_result r = { .kind = IB_RESULT_GENERATION_SESSIONS, .sessions_json = merged };
    char *text = ib_report(&r, "text");
    CHECK(text && strstr(text, "decode energy: geometric mean of sessions"));
    free(text);
    cJSON_Delete(root);
    free(merged);
    for (int i = 0; i < 3; i++) free(docs[i]);
}

/* Three sessions at busy_w[0..3) merged, as generate --sessions 3 writes
 * them (NULL at i: session i killed, no document). */
static char *merged_json(const double busy_w[3], double energy_step_ms)
{
    char *docs[3];
    ib_session_outcome o[3];
    for (int i = 0; i < 3; i++) {
        docs[i] = busy_w[i] > 0 ? measured_json(busy_w[i], energy_step_ms) : NULL;
        o[i] = (ib_session_outcome){ docs[i], docs[i] ? strlen(docs[i]) : 0, docs[i] ? 0 : -9,
                                     docs[i] ? "" : "ended by signal 9" };
    }
    ib_error err;
    char *merged = ib_sessions_merge(IB_RESULT_GENERATION, o, 3, 3, NULL, &err);
    for (int i = 0; i < 3; i++) free(docs[i]);
    return merged;
}

/* The bound of a decode window at busy_w: 200 ms of 1 ms steps, the
 * counter's 1 mJ over its joules. */
static double decode_bound(double busy_w) { return 1.0 / 200 + 1e-3 / (busy_w * 0.2); }

/* compare of two merged results (generate --sessions 3, twice): each
 * session read back, the timed figures two-level, the energy per token's
 * change that of the geometric means with Welch's t over the sessions'
 * log figures (A's sd log(1.1) / sqrt(3), B's 0: 2 degrees of freedom)
 * and the largest bounds; one side merged, the other one process: the
 * spread of the merged side's sessions (2 degrees of freedom, the single
 * side counting one); a side without a counter: its own reason. The t
 * quantile is the library's table's, to 4 decimals. */
static void test_compare_sessions(void)
{
    const double wa[3] = { 300, 330, 300 }, wb[3] = { 330, 330, 330 };
    char *ja = merged_json(wa, 100), *jb = merged_json(wb, 100), *js = measured_json(330, 100);
    ib_gen_file a, b, single;
    parse(ja, &a);
    parse(jb, &b);
    parse(js, &single);
    CHECK(a.n_sessions == 3 && b.n_sessions == 3 && single.n_sessions == 0);
    CHECK(a.n_ttft == 30 && a.n_token == 30 * N);
    for (size_t i = 0; i < a.n_sessions; i++) {
        CHECK(a.sessions[i].n_ttft == 10 && a.sessions[i].n_token == 10 * N);
        CHECK(a.sessions[i].ttft_ms == a.ttft_ms + 10 * i &&
              a.sessions[i].token_ms == a.token_ms + 10 * N * i);
        CHECK_NEAR(a.sessions[i].decode_joules_per_token, wa[i] / 1000, 1e-12);
        CHECK_NEAR(a.sessions[i].decode_energy_bound, decode_bound(wa[i]), 1e-12);
        CHECK_NEAR(b.sessions[i].decode_energy_bound, decode_bound(wb[i]), 1e-12);
    }
    /* The merged figure: the geometric mean across sessions. */
    double ga = cbrt(0.3 * 0.33 * 0.3);
    CHECK_NEAR(a.decode_joules_per_token, ga, 1e-12);
    CHECK(isnan(a.decode_energy_bound) && !a.decode_energy_note[0]);
    CHECK_NEAR(a.tokens_per_s, 1000, 1e-9);
    ib_gen_comparison c;
    ib_error err;
    CHECK(ib_compare_gen_files(&a, &b, 0.01, &c, &err) == IB_OK);
    CHECK(c.ttft.two_level && c.token.two_level);
    const double t2 = 4.3027, sd_a = log(1.1) / sqrt(3.0);
    double d = log(0.33 / ga), half = t2 * sd_a / sqrt(3.0), ba = decode_bound(300), bb = decode_bound(330);
    CHECK_NEAR(c.energy_change, expm1(d), 1e-12);
    CHECK_NEAR(c.energy_change_interval[0], expm1(d - half + log1p(-bb) - log1p(ba)), 1e-12);
    CHECK_NEAR(c.energy_change_interval[1], expm1(d + half + log1p(bb) - log1p(-ba)), 1e-12);
    /* The prefill's figures scale with the power as the decode's do. */
    CHECK_NEAR(c.prefill_energy_change, expm1(d), 1e-12);
    ib_result res = { .kind = IB_RESULT_GEN_COMPARISON, .gen_comparison = &c, .gen_a = &a, .gen_b = &b };
    char *text = ib_report(&res, "text"), *json = ib_report(&res, "json");
    CHECK(text && strstr(text, "sessions: the intervals are two-level (A: 3 sessions, B: 3)"));
    CHECK(text && strstr(text, "energy per token (decode): 0.3097 J -> 0.33 J: +6.56%, within [-7.98%, "
                               "+23.40%] (t over the sessions' log figures, A: 3 sessions, B: 3, and their "
                               "bounds, up to +-0.5% and +-0.5%): inconclusive\n"));
    CHECK(text && strstr(text, "energy per prompt token (prefill): "));
    CHECK(text && !strstr(text, "not in both"));
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    const cJSON *e = cJSON_GetObjectItem(root, "energy_change");
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "pct")), 100 * expm1(d), 1e-9);
    CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "verdict")), "inconclusive"));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(e, "why_not_b")));
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(root, "sessions_a")) == 3);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "ttft"), "two_level")));
    e = cJSON_GetObjectItem(root, "prefill_energy_change");
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "pct")), 100 * expm1(d), 1e-9);
    cJSON_Delete(root);
    free(text);
    free(json);

    /* Merged A against one process B: the runs' comparison widened, the
     * energy's interval by A's spread between sessions. */
    CHECK(ib_compare_gen_files(&a, &single, 0.01, &c, &err) == IB_OK);
    CHECK(!c.ttft.two_level && !strcmp(c.ttft.spread_source, "the 3 sessions of A"));
    double h = t2 * sd_a * sqrt(1.0 / 3 + 1);
    CHECK_NEAR(c.energy_change, expm1(d), 1e-12);
    CHECK_NEAR(c.energy_change_interval[0], expm1(d - h + log1p(-bb) - log1p(ba)), 1e-12);
    CHECK_NEAR(c.energy_change_interval[1], expm1(d + h + log1p(bb) - log1p(-ba)), 1e-12);
    /* And the other way round: the spread of B's sessions. */
    ib_gen_comparison r;
    CHECK(ib_compare_gen_files(&single, &a, 0.01, &r, &err) == IB_OK);
    CHECK(!strcmp(r.ttft.spread_source, "the 3 sessions of B"));
    CHECK_NEAR(r.energy_change, expm1(-d), 1e-12);
    CHECK_NEAR(r.energy_change_interval[0], expm1(-d - h + log1p(-ba) - log1p(bb)), 1e-12);
    CHECK_NEAR(r.energy_change_interval[1], expm1(-d + h + log1p(ba) - log1p(-bb)), 1e-12);
    res.gen_b = &single;
    text = ib_report(&res, "text");
    CHECK(text && strstr(text, "energy per token (decode): 0.3097 J -> 0.33 J: +6.56%, within [-19.74%, "
                               "+41.48%] (the spread between the 3 sessions of A and the figures' bounds, up "
                               "to +-0.5% and +-0.5%): inconclusive\n"));
    free(text);

    /* Sessions without a counter, one killed: the two that measured, and
     * the reason of the result itself. */
    const double wn[3] = { 300, 0, 300 };
    char *jn = merged_json(wn, 0);
    ib_gen_file n;
    parse(jn, &n);
    CHECK(n.n_sessions == 2 && n.n_ttft == 20);
    CHECK(isnan(n.decode_joules_per_token) &&
          !strcmp(n.decode_energy_note, "the fake scripts no energy counter (energy_step_ms 0)"));
    CHECK(ib_compare_gen_files(&a, &n, 0.01, &c, &err) == IB_OK);
    CHECK(isnan(c.energy_change) && isnan(c.prefill_energy_change));
    res.gen_b = &n;
    text = ib_report(&res, "text");
    json = ib_report(&res, "json");
    CHECK(text && strstr(text, "energy per token (decode): not in both files: B has no figure: the fake "
                               "scripts no energy counter (energy_step_ms 0)\n"));
    CHECK(text && strstr(text, "energy per prompt token (prefill): not in both files: B has no figure: "));
    CHECK(json && strstr(json, "\"why_not_b\":\t\"the fake scripts no energy counter (energy_step_ms 0)\""));
    free(text);
    free(json);

    /* A broken session (its first decode figure): refused, one line. */
    check_broken_figure(jb);
    ib_gen_file x;
    const char *no_runs = "{\"schema\": \"inferbench.generation/1\", \"sessions\": {\"runs\": 3}}";
    CHECK(ib_gen_file_parse(no_runs, strlen(no_runs), &x, &err) == IB_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "sessions.runs is not an array of 1 to 1000 sessions"));
    ib_gen_file_free(&a);
    ib_gen_file_free(&b);
    ib_gen_file_free(&single);
    ib_gen_file_free(&n);
    free(ja);
    free(jb);
    free(js);
    free(jn);
}

int main(int argc, char **argv)
{
    check_init(argc, argv);
    RUN(test_decode_exact);
    RUN(test_decode_cycles_over_the_depth);
    RUN(test_decode_one_new_token);
    RUN(test_idle_learned_before_the_cold_run);
    RUN(test_prefill_exact);
    RUN(test_sequences_curve);
    RUN(test_not_asked);
    RUN(test_no_counter);
    RUN(test_window_too_short);
    RUN(test_no_rewind);
    RUN(test_clock_cannot_wait);
    RUN(test_failure_in_window);
    RUN(test_formats);
    RUN(test_compare);
    RUN(test_compare_rates);
    RUN(test_sessions);
    RUN(test_compare_sessions);
    return check_summary("test_gen_energy");
}
