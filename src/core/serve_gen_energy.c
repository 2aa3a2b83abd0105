/* The machine around a generative model's serve and the energy of a
 * served run (docs/serve-generative.md, "The machine and its energy";
 * docs/energy.md, "Under load"): the environment captured and watched as
 * forward-pass serve watches it (serve.c, serve_watched), and the energy
 * module's meters on generate's source (generate_energy.c), learned with
 * the device idle before the warm-up, read over the measured schedule. */
#include "core/generate.h"
#include "core/latency.h"
#include "core/serve_gen_machine.h"

#include <math.h>
#include <string.h>

void ib__gen_serve_machine_open(ib__gen_serve_machine *m, ib__gen *g, const ib_config *run, ib_env *env)
{
    *m = (ib__gen_serve_machine){ .g = g, .env = env, .open = true };
    bool gpu = g->info.device == IB_DEVICE_CUDA;
    ib__env_capture(env, NULL);
    memset(&env->runtime, 0, sizeof env->runtime); /* the info states it, as generate's */
    if (gpu) ib__env_capture_gpu(env, g->info.device_id);
    ib__energy_source src = ib__gen_energy_source(g);
    ib__energy_meters_open_on(&m->energy, &g->clock, &src, run); /* the idle: before the sampler's reads */
    if (gpu && run->sample_gpu_state)
        m->sampler = ib__gpu_sampler_start(env, g->info.device_id, IB__GPU_SAMPLE_PERIOD_MS);
    ib__cpu_watch_start(&m->cpu, env);
}

unsigned ib__gen_serve_machine_close(ib__gen_serve_machine *m)
{
    if (!m->open) return 0;
    const ib_gen_info *in = &m->g->info;
    bool cpu = in->device == IB_DEVICE_CPU;
    unsigned w = ib__cpu_watch_stop(&m->cpu, m->env, cpu);
    w |= ib__env_threads_warning(m->env, in->n_threads, in->n_cpus_allowed, cpu);
    ib__gpu_sampler_stop(m->sampler);
    m->sampler = NULL;
    w |= ib__env_gpu_warnings(m->env);
    ib__energy_meters_close(&m->energy);
    m->open = false;
    return w;
}

ib_status ib__gen_serve_energy_begin(ib__gen_serve_machine *m, ib_error *err)
{
    return ib__energy_meters_begin(&m->energy, NULL, NULL, err);
}

ib_status ib__gen_serve_energy_end(ib__gen_serve_machine *m, ib_error *err)
{
    double none;
    return ib__energy_meters_end(&m->energy, NULL, NULL, &none, err);
}

void ib__gen_serve_energy_figures(const ib__gen_serve_machine *m, ib_status run_status,
                                  const ib_gen_serve_result *r, ib_gen_serve_energy *out)
{
    out->joules_per_request = NAN;
    if (run_status != IB_OK) {
        ib__energy_none(&out->device, "the run did not run to the end: no energy figure");
        ib__energy_none(&out->cpu, "the run did not run to the end: no energy figure");
        return;
    }
    double tokens = 0;
    for (size_t i = 0; i < r->n_requests; i++)
        if (r->requests[i].generated_tokens == r->requests[i].spec.output_tokens)
            tokens += r->requests[i].spec.output_tokens;
    /* No environment: the samples are the sampler's while it runs (a curve's
     * rates are read in the middle of it), so a GPU without a counter has
     * no figure, as a forward-pass serve rate has none. */
    ib__energy_meters_figures(&m->energy, tokens, NULL, NAN, &out->device, &out->cpu);
    if (m->env->power_limit_w > 0 && out->device.source != IB_ENERGY_NONE) /* the limit is static */
        out->device.power_limit_fraction = out->device.power_w / m->env->power_limit_w;
    /* The whole run's per output token: no timed figure of one token to
     * set beside it (a token's share of a mixed step is not one). */
    if (out->device.source != IB_ENERGY_NONE && r->n_completed > 0)
        out->joules_per_request = out->device.joules / (double)r->n_completed;
}
