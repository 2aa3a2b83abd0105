/* Reading a pitfall row by the interval of its difference (docs/pitfalls.md,
 * "Reading a row"): a row is two measurements, and a difference inside
 * their noise is no effect of the mistake, whatever its sign. */
#include "core/pitfall_reading.h"

#include <math.h>

const char *ib_pitfall_reading_name(ib_pitfall_reading reading)
{
    switch (reading) {
    case IB_READING_NOT_COMPARED: return "not compared";
    case IB_READING_WITHIN_NOISE: return "within noise";
    case IB_READING_LOW: return "reads low";
    case IB_READING_HIGH: return "reads high";
    case IB_READING_NO_INTERVAL: return "no interval";
    }
    return "not compared";
}

/* A difference the mistake cannot make: the two measurements differ by
 * what changed between them. */
static const char *const against_lowering =
    "reads high, which this mistake does not cause (it makes the figure lower): the difference is the "
    "machine's state between the two measurements (other load, clocks), not the mistake";
static const char *const against_raising =
    "reads low, which this mistake does not cause (it makes the figure higher): the difference is the "
    "machine's state between the two measurements (other load, clocks), not the mistake";

/* Within noise, for a row with no words of its own for it. */
static const char *const within_noise =
    "the difference is within noise or below compare's 1% threshold, the smallest change that matters: "
    "this mistake changes nothing measurable here";

const char *ib__pitfall_why(const ib__pitfall_texts *t, bool gpu, ib_pitfall_reading reading)
{
    const char *effect = gpu || !t->effect_cpu ? t->effect_gpu : t->effect_cpu;
    if (reading == IB_READING_WITHIN_NOISE) {
        const char *noise = gpu || !t->noise_cpu ? t->noise_gpu : t->noise_cpu;
        return noise ? noise : within_noise;
    }
    bool low = reading == IB_READING_LOW, high = reading == IB_READING_HIGH;
    bool against = (t->direction < 0 && high) || (t->direction > 0 && low);
    if (!against) return effect;
    if (gpu && t->against_gpu) return t->against_gpu;
    return t->direction < 0 ? against_lowering : against_raising;
}

/* A bound this close to 0 (percent) is 0: the ratio of two sums of the
 * same durations on a clock in floating point can be off in its last
 * digits. */
#define ROUNDING_PCT 1e-7

/* Low or high where the interval excludes 0 and reaches past compare's
 * threshold, the smallest change that matters: an interval wholly within
 * +-1% is compare's "no change" (the H100's "no warm-up -0.03% [-0.06%,
 * -0.00%]" is real within one process and below what separates two
 * processes, docs/measurements.md), read as the exact rows' are. */
static ib_pitfall_reading by_interval(const double ci_pct[2])
{
    double threshold_pct = 100 * IB_COMPARE_DEFAULT_THRESHOLD;
    bool within_threshold = ci_pct[0] >= -threshold_pct && ci_pct[1] <= threshold_pct;
    if (within_threshold) return IB_READING_WITHIN_NOISE;
    if (ci_pct[0] > ROUNDING_PCT) return IB_READING_HIGH;
    if (ci_pct[1] < -ROUNDING_PCT) return IB_READING_LOW;
    return IB_READING_WITHIN_NOISE;
}

ib_pitfall_reading ib__pitfall_too_few(double ci_pct[2], const char **no_interval)
{
    ci_pct[0] = ci_pct[1] = NAN;
    *no_interval = "too few samples: compare needs 6 on each side";
    return IB_READING_NO_INTERVAL;
}

ib_pitfall_reading ib__pitfall_interval(const double *correct, size_t n_correct, const double *wrong,
                                        size_t n_wrong, double ci_pct[2], const char **no_interval)
{
    ci_pct[0] = ci_pct[1] = NAN;
    *no_interval = NULL;
    if (n_correct < IB_COMPARE_MIN_SAMPLES || n_wrong < IB_COMPARE_MIN_SAMPLES)
        return ib__pitfall_too_few(ci_pct, no_interval);
    /* The threshold only makes compare's verdict, which a row does not
     * use: a row reads by whether its interval holds 0. */
    ib_comparison c;
    ib_error err;
    if (ib_compare_samples(correct, n_correct, wrong, n_wrong, IB_COMPARE_DEFAULT_THRESHOLD, &c, &err) !=
        IB_OK) {
        *no_interval = "the samples are not durations compare can take, or memory ran out";
        return IB_READING_NO_INTERVAL;
    }
    ci_pct[0] = 100 * c.change_ci95[0];
    ci_pct[1] = 100 * c.change_ci95[1];
    return by_interval(ci_pct);
}

ib_pitfall_reading ib__pitfall_exact(double error_pct, double ci_pct[2], const char **no_interval)
{
    ci_pct[0] = ci_pct[1] = NAN;
    *no_interval = "read off the correct runs themselves: the same data on both sides, so the difference "
                   "is exact, not noise";
    if (!isfinite(error_pct)) return IB_READING_NO_INTERVAL;
    /* No sampling noise lies between the two sides, but a difference
     * below compare's threshold (the smallest change that matters) is one
     * no second measurement could tell from run-to-run noise. */
    if (fabs(error_pct) < 100 * IB_COMPARE_DEFAULT_THRESHOLD) return IB_READING_WITHIN_NOISE;
    return error_pct < 0 ? IB_READING_LOW : IB_READING_HIGH;
}
