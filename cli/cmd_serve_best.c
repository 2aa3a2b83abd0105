/* inferbench serve MODEL.gguf --best: the engine's settings of a
 * generative model raced by goodput at the user's targets, at the user's
 * rate and schedule (the library's ib_measure_best_serve; docs/best.md,
 * "Serving: the engine's settings raced"). serve, not best, takes it: the
 * question is a serving one, and every option of the schedule, the engine
 * and the targets is serve's. The candidates: --slots (4, 8, 16 unless
 * given) x --prefill-chunk (256, 512 unless given) x the options the
 * generation backend declares to race (flash attention, the KV cache's
 * type), but those it raced for one request only (n_ubatch). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define RACED_SLOTS "4|8|16"
#define RACED_CHUNKS "256|512"
#define MAX_RACED 8
#define VALUE_LEN 32

typedef struct candidate {
    char value[MAX_RACED][VALUE_LEN]; /* each raced option's ("": left at its default) */
    char label[160];
} candidate;

typedef struct race {
    const cli_args *a;
    const ib_backend_option_decl *raced[MAX_RACED];
    size_t n_raced;
    size_t n;
    candidate c[IB_BEST_SERVE_MAX_CANDIDATES];
    ib_best_serve_candidate bc[IB_BEST_SERVE_MAX_CANDIDATES];
} race;

/* "fa on, kv q8_0": each raced option set, a switch by its label when on,
 * another by its value after its label. */
static size_t label_options(const race *rc, char values[][VALUE_LEN], char *out, size_t cap, size_t n)
{
    for (size_t i = 0; i < rc->n_raced && n < cap; i++) {
        const ib_backend_option_decl *d = rc->raced[i];
        bool is_switch = d->flags & IB_OPTION_SWITCH;
        const char *word =
            is_switch ? (!strcmp(values[i], "yes") ? (d->label ? d->label : d->key) : "") : values[i];
        const char *lead = !is_switch && d->label ? d->label : "";
        if (*word) n += (size_t)snprintf(out + n, cap - n, ", %s%s%s", lead, *lead ? " " : "", word);
    }
    return n;
}

static void label(const race *rc, candidate *c, int32_t slots, int32_t chunk)
{
    size_t n = (size_t)snprintf(c->label, sizeof c->label, "slots %d, chunk %d", (int)slots, (int)chunk);
    label_options(rc, c->value, c->label, sizeof c->label, n);
    cli_lower_case(c->label);
}

/* The values serve --best races of an option: its grid of serving's own
 * (serve_race), else best's (race); NULL: not raced here. */
static const char *serving_values(const ib_backend_option_decl *d)
{
    if (d->flags & IB_OPTION_RACE_NOT_SERVING) return NULL;
    return d->serve_race ? d->serve_race : d->race;
}

/* Whether option i varies: raced for serving, not given. */
static bool varies(const race *rc, size_t i)
{
    return serving_values(rc->raced[i]) && !cli_option_given(rc->a, rc->raced[i]->key);
}

static bool add(race *rc, candidate *c, int32_t slots, int32_t chunk)
{
    if (rc->n == IB_BEST_SERVE_MAX_CANDIDATES) return false;
    label(rc, c, slots, chunk);
    rc->c[rc->n] = *c;
    rc->bc[rc->n] = (ib_best_serve_candidate){ rc->c[rc->n].label, slots, chunk };
    rc->n++;
    return true;
}

/* Every combination of the backend's options from i on, at slots and chunk. */
static bool combine(race *rc, candidate *c, size_t i, int32_t slots, int32_t chunk)
{
    if (i == rc->n_raced) return add(rc, c, slots, chunk);
    c->value[i][0] = '\0';
    if (!varies(rc, i)) return combine(rc, c, i + 1, slots, chunk);
    for (size_t k = 0; cli_race_value(serving_values(rc->raced[i]), k, c->value[i], VALUE_LEN); k++)
        if (!combine(rc, c, i + 1, slots, chunk)) return false;
    return true;
}

/* The engine's values raced: the one given, else the defaults raced. */
static const char *engine_values(const cli_args *a, const char *flag, int32_t given, char *buf, size_t cap,
                                 const char *raced)
{
    if (!cli_given(a, flag)) return raced;
    snprintf(buf, cap, "%d", (int)given);
    return buf;
}

/* The candidates, the slots varying slowest; false when there are more
 * than the race takes. */
static bool enumerate(race *rc, const cli_args *a)
{
    const ib_gen_backend *b = cli_gen_backend_of(a);
    rc->a = a;
    for (size_t i = 0; i < b->n_options && rc->n_raced < MAX_RACED; i++)
        if (b->options[i].race || b->options[i].serve_race) rc->raced[rc->n_raced++] = &b->options[i];
    char sbuf[16], cbuf[16], sv[VALUE_LEN], cv[VALUE_LEN];
    const char *slots = engine_values(a, "slots", a->gen_serve.slots, sbuf, sizeof sbuf, RACED_SLOTS);
    const char *chunks =
        engine_values(a, "prefill-chunk", a->gen_serve.prefill_chunk, cbuf, sizeof cbuf, RACED_CHUNKS);
    for (size_t s = 0; cli_race_value(slots, s, sv, sizeof sv); s++)
        for (size_t k = 0; cli_race_value(chunks, k, cv, sizeof cv); k++) {
            candidate c;
            memset(&c, 0, sizeof c);
            if (!combine(rc, &c, 0, (int32_t)atoi(sv), (int32_t)atoi(cv))) return false;
        }
    return true;
}

/* The race's callback: candidate i's model, the user's options and its
 * raced values after them. */
static ib_status open_candidate(size_t i, void *user, ib_gen **g, ib_error *err)
{
    const race *rc = user;
    ib_backend_option extra[MAX_RACED];
    size_t n = 0;
    for (size_t k = 0; k < rc->n_raced; k++)
        if (rc->c[i].value[k][0]) extra[n++] = (ib_backend_option){ rc->raced[k]->key, rc->c[i].value[k] };
    return cli_gen_open(rc->a, extra, n, g, err);
}

/* Candidate i's label as it runs: each raced option at the value in
 * effect its model states, the chunk in effect. */
static void label_ran(size_t i, void *user, const ib_option_list *ran, int32_t chunk, char *out, size_t cap)
{
    const race *rc = user;
    candidate c = rc->c[i];
    for (size_t k = 0; k < rc->n_raced; k++) {
        const char *v = ib_option_list_get(ran, rc->raced[k]->key);
        if (v && c.value[k][0]) snprintf(c.value[k], VALUE_LEN, "%s", v);
    }
    label(rc, &c, rc->bc[i].slots, chunk);
    snprintf(out, cap, "%s", c.label);
}

/* The model as given, opened once: its options and the device checked
 * before anything is measured. */
static int check_model(const cli_args *a)
{
    ib_gen *g;
    ib_error err = { { 0 } };
    ib_status st = cli_gen_open(a, NULL, 0, &g, &err);
    if (st != IB_OK) return cli_fail(st, err.message), EXIT_BAD_INPUT;
    bool fits = cli_options_fit_device(a, ib_gen_get_info(g)->device);
    ib_gen_destroy(g);
    return fits ? EXIT_OK : EXIT_BAD_INPUT;
}

static bool any_served(const ib_best_serve_result *r)
{
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].requests > 0) return true;
    return false;
}

/* The first row that failed or was skipped when every row was (or runs
 * as one that was): why nothing served; NULL when a row served, or was
 * left unmeasured by the time bound (a race cut short, not refused). */
static const ib_best_serve_row *every_row_refused(const ib_best_serve_result *r)
{
    const ib_best_serve_row *first = NULL;
    for (size_t i = 0; i < r->n_rows; i++) {
        ib_best_stage stage = r->rows[i].stage;
        bool refused = stage == IB_BEST_FAILED || stage == IB_BEST_SKIPPED;
        if (!refused && stage != IB_BEST_MERGED) return NULL;
        if (refused && !first) first = &r->rows[i];
    }
    return first;
}

/* A race that ran to its end without a winner, or one the bound cut short
 * (its answer may not be the best), fails: exit 1, the result written. */
static ib_status outcome(const ib_best_serve_result *r, ib_status st, ib_error *err)
{
    if (st != IB_OK) return st;
    if (r->partial) {
        snprintf(
            err->message, sizeof err->message,
            "serve --best: the race was cut short: the time bound (%.4g s a step, --step-max-ms) left %zu "
            "candidate%s not measured; %s",
            r->step_max_ms / 1e3, r->not_measured, r->not_measured == 1 ? "" : "s",
            r->winner >= 0 ? "the winner is the best of those measured" : "none won");
        return IB_ERR_RUNTIME;
    }
    if (r->winner < 0) {
        snprintf(err->message, sizeof err->message,
                 "serve --best: no configuration served the schedule (see the table)");
        return IB_ERR_RUNTIME;
    }
    return IB_OK;
}

static int run_race(cli_args *a, race *rc, const ib_gen_serve_config *sc, cli_outputs *out)
{
    ib_best_serve_config bc;
    ib_best_serve_config_init(&bc);
    bc.serve = *sc;
    bc.candidates = rc->bc;
    bc.n_candidates = rc->n;
    bc.open = open_candidate;
    bc.label_ran = label_ran;
    bc.user = rc;
    if (a->step_max_ms >= 0) bc.step_max_ms = a->step_max_ms;
    ib_best_serve_result *r = calloc(1, sizeof *r);
    if (!r) {
        cli_outputs_abort(out);
        return cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    }
    ib_error err = { { 0 } };
    ib_status st = ib_measure_best_serve(&bc, r, &err);
    const ib_best_serve_row *refused = every_row_refused(r);
    /* Nothing served and every row refused: a bad setting of the schedule
     * (a request past a slot's context), the user's, before measuring. A
     * race the time bound cut before anything served is not that: one row
     * that does not apply (a quantized cache without flash attention) then
     * stands beside rows not measured, and the race's own exit says so. */
    if (st == IB_OK && !any_served(r) && refused && refused->status == IB_ERR_INVALID_ARG) {
        cli_outputs_abort(out);
        int code = cli_fail(refused->status, refused->why);
        ib_best_serve_result_free(r);
        free(r);
        return code;
    }
    st = outcome(r, st, &err);
    ib_result res = { .kind = IB_RESULT_BEST_SERVE, .best_serve = r, .best_serve_cfg = &bc };
    int code = cli_report(out, any_served(r) || st == IB_OK ? &res : NULL, st, &err);
    ib_best_serve_result_free(r);
    free(r);
    return code;
}

int cmd_serve_best(cli_args *a)
{
    ib_gen_serve_config sc;
    ib_gen_request_spec *trace = NULL;
    race *rc = calloc(1, sizeof *rc);
    int code = rc ? EXIT_OK : cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    if (code == EXIT_OK && !cli_gen_serve_settings(a, &sc, &trace)) code = EXIT_BAD_INPUT;
    if (code == EXIT_OK && (sc.pitfalls || sc.engine_cost))
        code = cli_fail(IB_ERR_INVALID_ARG, "serve --best races the serving runs alone: measure its winner's "
                                            "--pitfalls or --engine-cost with serve");
    if (code == EXIT_OK && a->rates)
        code = cli_fail(IB_ERR_INVALID_ARG,
                        "serve --best races at one rate (--rate R, or a trace), not --rates");
    if (code == EXIT_OK && a->sessions >= 2)
        code =
            cli_fail(IB_ERR_INVALID_ARG, "serve --best races in one process: measure its winner with serve "
                                         "--sessions N");
    if (code == EXIT_OK && !(sc.slo_ttft_ms > 0) && !(sc.slo_tpot_ms > 0))
        code = cli_fail(IB_ERR_INVALID_ARG,
                        "serve --best races goodput at the targets: give --slo-ttft-ms and/or --slo-tpot-ms");
    if (code == EXIT_OK && !enumerate(rc, a))
        code =
            cli_fail(IB_ERR_INVALID_ARG, "serve --best: more configurations to race than the race takes (at "
                                         "most 64): fix some with --slots, --prefill-chunk or --option");
    cli_outputs out;
    if (code == EXIT_OK) code = cli_prepare_outputs(a, &out);
    if (code == EXIT_OK && (code = check_model(a)) != EXIT_OK) cli_outputs_abort(&out);
    if (code == EXIT_OK) code = run_race(a, rc, &sc, &out);
    free(trace);
    free(rc);
    return code;
}
