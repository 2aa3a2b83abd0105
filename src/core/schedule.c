/* Schedules made before a run: schedule.h. */
#include "core/schedule.h"
#include "base/numeric.h"

#include <math.h>

/* 53 random bits, shifted into (0, 1]: log never sees 0. */
static double uniform_open0(uint64_t *state)
{
    return ((double)(ib__splitmix64(state) >> 11) + 1.0) / 9007199254740992.0;
}

void ib__serve_poisson(double rate, uint64_t seed, size_t n, double *arrivals_ms)
{
    uint64_t state = seed;
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        arrivals_ms[i] = t;
        t += -log(uniform_open0(&state)) * 1000.0 / rate;
    }
}

void ib__serve_constant(double rate, size_t n, double *arrivals_ms)
{
    for (size_t i = 0; i < n; i++) arrivals_ms[i] = (double)i * 1000.0 / rate;
}

/* A standard normal draw (Box-Muller, one of the pair). */
static double normal(uint64_t *state)
{
    double u1 = uniform_open0(state), u2 = uniform_open0(state);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* A gamma draw of scale 1 (Marsaglia and Tsang's method; a shape below 1
 * drawn at shape + 1 and scaled by U^(1/shape)). */
static double gamma_draw(double shape, uint64_t *state)
{
    if (shape < 1) {
        double boost = pow(uniform_open0(state), 1.0 / shape);
        return gamma_draw(shape + 1, state) * boost;
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = normal(state), v = 1 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        if (log(uniform_open0(state)) < 0.5 * x * x + d - d * v + d * log(v)) return d * v;
    }
}

void ib__serve_gamma(double rate, double burstiness, uint64_t seed, size_t n, double *arrivals_ms)
{
    if (burstiness == 1) {
        ib__serve_poisson(rate, seed, n, arrivals_ms);
        return;
    }
    uint64_t state = seed;
    double t = 0, scale_ms = 1000.0 / (rate * burstiness);
    for (size_t i = 0; i < n; i++) {
        arrivals_ms[i] = t;
        t += gamma_draw(burstiness, &state) * scale_ms;
    }
}

void ib__schedule_uniform(int32_t lo, int32_t hi, uint64_t seed, size_t n, int32_t *out)
{
    uint64_t state = seed, span = (uint64_t)((int64_t)hi - lo + 1);
    for (size_t i = 0; i < n; i++) out[i] = lo == hi ? lo : lo + (int32_t)(ib__splitmix64(&state) % span);
}
