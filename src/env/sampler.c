/* The GPU state sampler: NVML read before the measurement, every period on a
 * background thread during it, and once after. The thread owns
 * env->gpu_samples from start to stop (the caller reads them only after
 * stop, which joins the thread), so the samples need no lock; the mutex and
 * condition variable only carry the stop request, which also cuts the wait
 * for the next sample short. */
#include "env/env.h"
#include "env/nvml.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct ib__gpu_sampler {
    ib_env *env;
    ib__nvml_gpu gpu;
    double t0_ms, period_ms;
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    bool stop;
};

static void take(ib__gpu_sampler *s, ib_gpu_sample *out)
{
    ib__nvml_sample(&s->gpu, ib__now_ms() - s->t0_ms, out);
}

static struct timespec monotonic_at(double t_ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(t_ms / 1e3);
    ts.tv_nsec = (long)((t_ms - (double)ts.tv_sec * 1e3) * 1e6);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static void *sampler_main(void *arg)
{
    ib__gpu_sampler *s = arg;
    double next_ms = s->t0_ms + s->period_ms;
    pthread_mutex_lock(&s->mutex);
    while (!s->stop) {
        const struct timespec deadline = monotonic_at(next_ms);
        pthread_cond_timedwait(&s->cond, &s->mutex, &deadline);
        if (s->stop) break;
        double now = ib__now_ms();
        if (now < next_ms) continue; /* woken early */
        pthread_mutex_unlock(&s->mutex);
        ib_gpu_sample sample;
        take(s, &sample);
        ib__env_add_sample(s->env, &sample, &s->period_ms);
        ib__env_note_gpu_processes(s->env, &s->gpu);
        /* After a slow NVML answer, start again from now rather than take a
         * burst of samples to catch up. */
        next_ms += s->period_ms;
        if (next_ms < now) next_ms = now + s->period_ms;
        pthread_mutex_lock(&s->mutex);
    }
    pthread_mutex_unlock(&s->mutex);
    return NULL;
}

/* The condition variable waits on CLOCK_MONOTONIC, the clock of ib__now_ms,
 * so a change of the wall clock does not stretch or cut a period. */
static bool sync_init(ib__gpu_sampler *s)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0) return false;
    bool ok =
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&s->cond, &attr) == 0;
    pthread_condattr_destroy(&attr);
    if (!ok) return false;
    if (pthread_mutex_init(&s->mutex, NULL) != 0) {
        pthread_cond_destroy(&s->cond);
        return false;
    }
    return true;
}

static void sync_destroy(ib__gpu_sampler *s)
{
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->mutex);
}

ib__gpu_sampler *ib__gpu_sampler_start(ib_env *env, int device_id, double period_ms)
{
    env->n_gpu_samples = 0;
    if (!(period_ms > 0.0)) return NULL;
    ib__gpu_sampler *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    /* The note explains missing samples; a note already there (from the
     * capture) is kept. */
    char note[sizeof env->nvml_note];
    if (!ib__nvml_open(&s->gpu, device_id, note, sizeof note)) {
        if (env->nvml_note[0] == '\0') ib__strlcpy(env->nvml_note, note, sizeof env->nvml_note);
        free(s);
        return NULL;
    }
    if (!sync_init(s)) {
        ib__nvml_close(&s->gpu);
        free(s);
        return NULL;
    }
    s->env = env;
    s->period_ms = period_ms;
    s->t0_ms = ib__now_ms();
    ib_gpu_sample before;
    take(s, &before);
    ib__env_add_sample(env, &before, &s->period_ms);
    env->n_other_gpu_processes = 0;
    ib__env_note_gpu_processes(env, &s->gpu);
    if (pthread_create(&s->thread, NULL, sampler_main, s) != 0) {
        env->n_gpu_samples = 0; /* NULL means nothing sampled */
        sync_destroy(s);
        ib__nvml_close(&s->gpu);
        free(s);
        return NULL;
    }
    return s;
}

void ib__gpu_sampler_stop(ib__gpu_sampler *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->mutex);
    s->stop = true;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->mutex);
    pthread_join(s->thread, NULL);
    sync_destroy(s);

    /* ib__env_add_sample keeps one slot free for this one. */
    ib_gpu_sample after;
    take(s, &after);
    s->env->gpu_samples[s->env->n_gpu_samples++] = after;
    ib__nvml_close(&s->gpu);
    free(s);
}

double ib__gpu_sampler_t0_ms(const ib__gpu_sampler *s) { return s ? s->t0_ms : NAN; }
