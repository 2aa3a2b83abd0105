/* The search's and the curve's own progress (docs/serve-generative.md,
 * "Progress"): after each rate, which rate of how many and, for a search,
 * its bracket so far, read off the points measured. The library reports;
 * the program prints (cli/progress.c). */
#include "core/serve_gen_rates_progress.h"

#include <math.h>

/* A search's rates lie on a grid of m steps a doubling: its grid step is
 * 2^(1/m) - 1. */
static int steps_per_doubling(const ib_gen_serve_rates_result *out)
{
    return (int)lround(log(2.0) / log1p(out->grid_step));
}

/* Grid steps of bisection left between two grid rates d steps apart: each
 * halves the bracket until its ends are neighbours. */
static int bisections(int d) { return d > 1 ? (int)ceil(log2((double)d)) : 0; }

/* The highest rate met and the lowest failed, NaN where none. */
static void bracket(const ib_gen_serve_rates_result *out, double *met, double *failed)
{
    *met = *failed = NAN;
    for (size_t i = 0; i < out->n_points; i++) {
        double rate = out->points[i].offered_rate;
        if (out->points[i].met && !(rate <= *met)) *met = rate;
        if (!out->points[i].met && !(rate >= *failed)) *failed = rate;
    }
}

/* The most rates the search takes in all: with both ends, those measured
 * and the bisection between them; with a failed end alone, its halvings
 * (the first rate and at most max_halvings more) and then a bisection of
 * one doubling; with none failed, not known (0: it doubles until one
 * does). */
static size_t search_at_most(const ib_gen_serve_rates_result *out, double met, double failed,
                             int max_halvings)
{
    int m = steps_per_doubling(out);
    if (isnan(failed)) return 0;
    if (isnan(met)) return (size_t)(1 + max_halvings + bisections(m));
    int d = (int)lround(m * log2(failed / met));
    return out->n_points + (size_t)bisections(d);
}

void ib__gen_serve_rate_progress(const ib_gen_serve_rates_config *rc, const ib_gen_serve_rates_result *out,
                                 int max_halvings)
{
    if (!rc->rate_progress || out->n_points == 0) return;
    ib_gen_serve_rate_progress p = { .searched = out->searched,
                                     .rate = out->n_points,
                                     .rates_at_most = rc->n_rates,
                                     .point = &out->points[out->n_points - 1],
                                     .met_rate = NAN,
                                     .failed_rate = NAN };
    if (out->searched) {
        bracket(out, &p.met_rate, &p.failed_rate);
        p.rates_at_most = search_at_most(out, p.met_rate, p.failed_rate, max_halvings);
    }
    rc->rate_progress(&p, rc->rate_progress_user);
}
