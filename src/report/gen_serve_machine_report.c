/* A generative model's serve: the machine it ran on, where its slots came
 * from, the served run's energy and the engine's own cost, in the text
 * and the JSON (gen_serve_report.c calls these; docs/serve-generative.md). */
#include "report/printer.h"

#include <math.h>
#include <string.h>

static void text_slots(ib__sbuf *b, const ib_gen_serve_result *r)
{
    if (r->slots_from == IB_GEN_SLOTS_KV_CAPACITY)
        ib__sbuf_printf(b, "slots %d (the KV cache's capacity at %d tokens a slot; --slots N to choose)\n",
                        (int)r->slots, (int)r->ctx_per_slot);
    else if (r->slots_from == IB_GEN_SLOTS_CAPPED)
        ib__sbuf_printf(b,
                        "slots %d (the most the default takes: the KV cache holds %d or more at %d tokens a "
                        "slot; --slots N to choose)\n",
                        (int)r->slots, (int)r->slots, (int)r->ctx_per_slot);
}

/* The device's figure per output token and per request, the CPU
 * package's where it has one; one line where neither has. */
static void text_energy(ib__sbuf *b, const ib_gen_serve_result *r)
{
    const ib_energy *d = &r->energy.device, *cpu = &r->energy.cpu;
    if (d->source == IB_ENERGY_NONE && cpu->source == IB_ENERGY_NONE) {
        ib__sbuf_printf(b, "energy: no figure: %s", d->note);
        if (strcmp(cpu->note, d->note)) ib__sbuf_printf(b, "; the CPU package: %s", cpu->note);
        ib__sbuf_printf(b, "\n");
        return;
    }
    ib__text_energy_of(b, "energy per output token (over the served schedule)", d, "token");
    if (isfinite(r->energy.joules_per_request))
        ib__sbuf_printf(b, "  a request: %.4g J on average (%zu completed, %.4g W)\n",
                        r->energy.joules_per_request, r->n_completed, d->power_w);
    if (cpu->source != IB_ENERGY_NONE)
        ib__text_energy_of(b, "CPU package energy per output token", cpu, "token");
}

static void text_engine_cost(ib__sbuf *b, const ib_gen_serve_result *r)
{
    const ib_gen_serve_engine_cost *c = &r->engine_cost;
    if (c->steps == 0) return;
    char runtime[32];
    ib__sbuf_printf(b,
                    "engine's own time: %.4g us a step (admission, planning, stamps) beside %s in "
                    "decode_batch + synchronize and %.4g us in the runtime's sequence removals, over %zu "
                    "steps\n",
                    c->own_us_per_step, ib__fmt_ms(runtime, c->runtime_us_per_step / 1e3),
                    c->removal_us_per_step, c->steps);
    if (!c->replayed) return;
    char engine[32], bare[32];
    ib__sbuf_printf(b,
                    "engine against a bare loop of its batches: %s a step against %s bare: %+.4g us a step\n",
                    ib__fmt_ms(engine, c->engine_us_per_step / 1e3),
                    ib__fmt_ms(bare, c->bare_us_per_step / 1e3), c->against_bare_us);
}

void ib__gen_serve_text_machine(ib__sbuf *b, const ib_gen_serve_result *r)
{
    text_slots(b, r);
    text_energy(b, r);
    text_engine_cost(b, r);
}

static const char *slots_from_name(ib_gen_slots_from f)
{
    return f == IB_GEN_SLOTS_KV_CAPACITY ? "kv_capacity" : f == IB_GEN_SLOTS_CAPPED ? "capped" : "given";
}

static cJSON *json_engine_cost(const ib_gen_serve_engine_cost *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "steps", (double)c->steps);
    ib__json_add_number(o, "engine_us_per_step", c->engine_us_per_step);
    ib__json_add_number(o, "runtime_us_per_step", c->runtime_us_per_step);
    ib__json_add_number(o, "removal_us_per_step", c->removal_us_per_step);
    ib__json_add_number(o, "own_us_per_step", c->own_us_per_step);
    cJSON_AddBoolToObject(o, "replayed", c->replayed);
    ib__json_add_number(o, "bare_us_per_step", c->bare_us_per_step);
    ib__json_add_number(o, "against_bare_us", c->against_bare_us);
    return o;
}

void ib__gen_serve_json_machine(cJSON *root, const ib_gen_serve_result *r)
{
    cJSON *settings = cJSON_GetObjectItem(root, "settings");
    if (settings) cJSON_AddStringToObject(settings, "slots_from", slots_from_name(r->slots_from));
    cJSON *e = ib__json_energy(&r->energy.device);
    ib__json_add_number(e, "joules_per_request", r->energy.joules_per_request);
    cJSON_AddItemToObject(root, "energy", e);
    cJSON_AddItemToObject(root, "cpu_energy", ib__json_energy(&r->energy.cpu));
    cJSON_AddItemToObject(root, "engine_cost", json_engine_cost(&r->engine_cost));
    ib__json_add_warnings(root, r->warnings);
    cJSON_AddItemToObject(root, "environment", ib__json_env(&r->env));
}
