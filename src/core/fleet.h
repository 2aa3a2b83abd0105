/* Internals of the fleet's aggregate, exposed for their tests. */
#ifndef IB_CORE_FLEET_H
#define IB_CORE_FLEET_H

#include "core/common.h"

/* The runs w had ended by t_ms: linear between its marks, which is each
 * run counted by the share of it before t_ms when every run is marked. */
double ib__fleet_runs_by(const ib_fleet_worker *w, double t_ms);

/* A value and the number of runs it stands for. */
typedef struct ib__weighted {
    double v, w;
} ib__weighted;

/* The statistics of p[0..m) (m >= 1, sorted here) with weights: n is the
 * total weight, the percentiles the first value where the cumulative
 * weight reaches the share; no confidence intervals (NaN). */
void ib__fleet_weighted_stats(ib__weighted *p, size_t m, ib_stats *out);

#endif
