/* How a pitfall row reads (docs/pitfalls.md, "Reading a row"): the
 * interval of its difference from the correct figure, computed as
 * `compare` computes it, and the explanation that fits the device and the
 * direction the figure reads in. Shared by the forward-pass and the
 * generation pitfalls. */
#ifndef IB_CORE_PITFALL_READING_H
#define IB_CORE_PITFALL_READING_H

#include "base/common.h"

/* What a row's mistake does to its figure, and why, by what it reads. */
typedef struct ib__pitfall_texts {
    int direction;                       /* the mistake's own: -1 it lowers the figure, +1 it raises
                                            it, 0 either way */
    const char *effect_gpu, *effect_cpu; /* it reads in that direction (or not judged) */
    const char *noise_gpu, *noise_cpu;   /* within noise */
    const char *against_gpu;             /* against its direction on a GPU where the mistake
                                            explains that too; NULL: the machine's state does */
} ib__pitfall_texts;

/* The row's why for its reading on a GPU or not; a NULL text of the CPU
 * is the GPU's. */
const char *ib__pitfall_why(const ib__pitfall_texts *t, bool gpu, ib_pitfall_reading reading);

/* The 95% interval of median(wrong) / median(correct) - 1, in percent, as
 * ib_compare_samples computes it (correct as A, wrong as B), and the
 * reading by it. Too few samples on a side (IB_COMPARE_MIN_SAMPLES) or
 * samples compare cannot take: IB_READING_NO_INTERVAL, the interval NaN,
 * *no_interval why. */
ib_pitfall_reading ib__pitfall_interval(const double *correct, size_t n_correct, const double *wrong,
                                        size_t n_wrong, double ci_pct[2], const char **no_interval);

/* A row with fewer samples than an interval needs (one run): says so. */
ib_pitfall_reading ib__pitfall_too_few(double ci_pct[2], const char **no_interval);

/* A row read off the correct runs themselves: the same data on both
 * sides, so its difference is exact, not noise; read by its sign, within
 * noise below compare's threshold (IB_COMPARE_DEFAULT_THRESHOLD). */
ib_pitfall_reading ib__pitfall_exact(double error_pct, double ci_pct[2], const char **no_interval);

#endif
