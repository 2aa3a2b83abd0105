/* The interval of a difference of two proportions (compare's goodput
 * share: the share of requests that met every target, of two results). */
#include "core/compare.h"

#include <math.h>

/* The 95% normal quantile. */
#define Z95 1.959963984540054

/* Wilson's score interval of k/n. */
static void wilson(size_t k, size_t n, double ci[2])
{
    double p = (double)k / (double)n, z2 = Z95 * Z95, nn = (double)n;
    double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
    double half = Z95 / (1 + z2 / nn) * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
    ci[0] = fmax(0, centre - half);
    ci[1] = fmin(1, centre + half);
}

void ib__proportion_difference_ci(size_t ka, size_t na, size_t kb, size_t nb, double ci[2])
{
    ci[0] = ci[1] = NAN;
    if (na == 0 || nb == 0 || ka > na || kb > nb) return;
    double a[2], b[2], pa = (double)ka / (double)na, pb = (double)kb / (double)nb, d = pb - pa;
    wilson(ka, na, a);
    wilson(kb, nb, b);
    ci[0] = d - sqrt((pb - b[0]) * (pb - b[0]) + (a[1] - pa) * (a[1] - pa));
    ci[1] = d + sqrt((b[1] - pb) * (b[1] - pb) + (pa - a[0]) * (pa - a[0]));
}
