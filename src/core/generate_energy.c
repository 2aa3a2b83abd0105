/* Energy of a generation (docs/energy.md, "For generation"): windows of
 * their own after the timed runs, as a throughput point has, read with
 * the energy module's meter (core/energy.h): a decode window of steps at
 * the timed steps' positions (per output token), and a prefill window of
 * the prompt's prefills (per prompt token). The windows' ends are aligned
 * on the counter's changes, padded with more of the same work; the polls
 * are between steps, never inside a timed region (the windows' steps are
 * not the timed figures). */
#include "core/generate.h"

#include <math.h>

ib__energy_source ib__gen_energy_source(ib__gen *g)
{
    return (ib__energy_source){ g->ops->energy, g, g->info.device == IB_DEVICE_CUDA, g->info.device_id,
                                "a CPU run: no GPU energy counter" };
}

void ib__gen_energy_open(ib__genm *m)
{
    ib__energy_source s = ib__gen_energy_source(m->g);
    ib__energy_meters_open_on(&m->energy, &m->g->clock, &s, &m->cfg->run);
}

void ib__gen_energy_close(ib__genm *m) { ib__energy_meters_close(&m->energy); }

/* What a decode window pads with: one synchronized step of every sequence,
 * the positions cycling over [depth, depth + steps) (the cache rewound to
 * depth at the end), so that every step is one the timed ones were. */
typedef struct decode_pad {
    ib__gen *g;
    ib__gen_run_spec spec;
    int32_t pos;
} decode_pad;

static ib_status pad_step(void *ctx, double *items, ib_error *err)
{
    decode_pad *d = ctx;
    ib__gen *g = d->g;
    if (d->pos == d->spec.depth + d->spec.steps) {
        IB_TRY(g->ops->rewind(g, d->spec.n_seqs, d->spec.depth, err));
        d->pos = d->spec.depth;
    }
    IB_TRY(g->ops->step(g, d->spec.n_seqs, d->pos, err));
    IB_TRY(g->ops->synchronize(g, err));
    d->pos++;
    *items = d->spec.n_seqs;
    return IB_OK;
}

/* Why no window is read, or NULL: the meters' own reasons come through
 * their figures. */
static const char *no_window(const ib__genm *m)
{
    if (!ib__energy_meters_usable(&m->energy)) return NULL;
    if (!m->g->ops->rewind) return "the backend cannot rewind its KV cache: no decode energy window";
    return NULL;
}

static void figures(const ib__genm *m, double items, ib_energy *device, ib_energy *cpu)
{
    ib_energy unused;
    ib__energy_meters_figures(&m->energy, items, NULL, NAN, device, cpu ? cpu : &unused);
}

ib_status ib__gen_decode_energy(ib__genm *m, const ib__gen_run_spec *spec, double unit_ms, ib_energy *device,
                                ib_energy *cpu, ib_error *err)
{
    const char *why = no_window(m);
    if (why) {
        ib__energy_none(device, "%s", why);
        if (cpu) ib__energy_none(cpu, "%s", why);
        return IB_OK;
    }
    decode_pad d = { .g = m->g, .spec = *spec, .pos = spec->depth };
    double items = 0, ttft;
    if (ib__energy_meters_usable(&m->energy)) {
        ib__gen_run_spec fill = *spec;
        fill.steps = 0; /* the prompt and the context to depth, untimed here: outside the window */
        IB_TRY(ib__gen_run(m->g, &fill, &ttft, m->steps, m->samples, err));
        ib__progress_phase(&m->pr, IB_PHASE_BACK_TO_BACK, 0);
        IB_TRY(ib__energy_meters_window(&m->energy, pad_step, &d, unit_ms, IB__ENERGY_TARGET_BOUND,
                                        IB__ENERGY_WINDOW_CAP_MS, m->cfg->run.cancel, &items, err));
    }
    figures(m, items, device, cpu);
    device->timed_ms_per_item = unit_ms / spec->n_seqs;
    if (cpu) cpu->timed_ms_per_item = device->timed_ms_per_item;
    return IB_OK;
}

/* What a prefill window pads with: the prompt's prefill from a clear
 * cache, synchronized (the clear, the cache's bookkeeping, is inside). */
typedef struct prefill_pad {
    ib__gen *g;
    int32_t prompt;
} prefill_pad;

static ib_status pad_prefill(void *ctx, double *items, ib_error *err)
{
    prefill_pad *p = ctx;
    IB_TRY(p->g->ops->clear(p->g, err));
    IB_TRY(p->g->ops->prefill(p->g, 0, 0, p->prompt, err));
    IB_TRY(p->g->ops->synchronize(p->g, err));
    *items = p->prompt;
    return IB_OK;
}

static ib_status prefill_energy(ib__genm *m, ib_error *err)
{
    prefill_pad p = { .g = m->g, .prompt = m->cfg->prompt_tokens };
    double items = 0;
    ib__progress_phase(&m->pr, IB_PHASE_BACK_TO_BACK, 0);
    IB_TRY(ib__energy_meters_window(&m->energy, pad_prefill, &p, m->r->ttft.mean, IB__ENERGY_TARGET_BOUND,
                                    IB__ENERGY_WINDOW_CAP_MS, m->cfg->run.cancel, &items, err));
    figures(m, items, &m->r->prefill_energy, NULL);
    m->r->prefill_energy.timed_ms_per_item = m->r->ttft.p50 / p.prompt;
    return IB_OK;
}

ib_status ib__gen_request_energy(ib__genm *m, ib_error *err)
{
    ib_gen_result *r = m->r;
    ib__gen_run_spec spec = ib__gen_request_spec(m);
    IB_TRY(ib__gen_decode_energy(m, &spec, r->tpot_ms, &r->decode_energy, &r->decode_cpu_energy, err));
    return prefill_energy(m, err);
}
