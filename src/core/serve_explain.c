/* What explains a rate's compute under load against the service time of
 * warm-up (issue 28: 2.879 ms at 50 requests/s against 1.824 ms in
 * warm-up on the H200, +58%, and the report left the user guessing). Two
 * things the tool sees can make a run slower under a light load than back
 * to back: a GPU idle between requests clocks down (its SM clock, sampled
 * through NVML), and a thread that sleeps between requests wakes slowly,
 * and the run's launches wait on that host (the dispatcher's wake-up
 * lateness). Each is turned into the milliseconds it accounts for; the
 * rule says which of them explains the excess (docs/serve.md). Where
 * neither does and the run is host-bound (the host-wait check after
 * warm-up), its launches are the cause: on the H200 EfficientNet-B0 at
 * batch 1 read +60% at 50 requests/s with the SM clock at 1980 MHz
 * throughout, and +0% replayed from one CUDA graph. */
#include "core/latency.h"
#include "core/serve.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>

const char *ib_serve_cause_name(ib_serve_cause cause)
{
    switch (cause) {
    case IB_SERVE_CAUSE_NONE: return "-";
    case IB_SERVE_CAUSE_AS_WARM: return "as in warm-up";
    case IB_SERVE_CAUSE_CLOCK: return "the SM clock";
    case IB_SERVE_CAUSE_WAKEUP: return "the wake-up";
    case IB_SERVE_CAUSE_BOTH: return "the SM clock and the wake-up";
    case IB_SERVE_CAUSE_HOST: return "a host-bound run";
    case IB_SERVE_CAUSE_UNEXPLAINED: return "unexplained";
    }
    return "?";
}

void ib__serve_explain(double service_ms, double compute_p50_ms, double warmup_sm_mhz, double load_sm_mhz,
                       double wakeup_p50_ms, double host_wait_share, ib_serve_explanation *out)
{
    *out = (ib_serve_explanation){ .cause = IB_SERVE_CAUSE_NONE,
                                   .excess = NAN,
                                   .warmup_sm_clock_mhz = warmup_sm_mhz,
                                   .load_sm_clock_mhz = load_sm_mhz,
                                   .clock_ms = NAN,
                                   .wakeup_ms = wakeup_p50_ms,
                                   .host_wait_share = host_wait_share };
    if (!(service_ms > 0) || !isfinite(compute_p50_ms)) return;
    out->excess = compute_p50_ms / service_ms - 1;
    /* A run at a lower clock takes longer in proportion, where its time is
     * the GPU's. */
    if (warmup_sm_mhz > 0 && load_sm_mhz > 0) out->clock_ms = service_ms * (warmup_sm_mhz / load_sm_mhz - 1);
    if (out->excess < IB__SERVE_AS_WARM) {
        out->cause = IB_SERVE_CAUSE_AS_WARM;
        return;
    }
    double need_ms = IB__SERVE_EXPLAINS * (compute_p50_ms - service_ms);
    bool clock = out->clock_ms >= need_ms; /* false for NaN: no clocks, not judged */
    bool wakeup = wakeup_p50_ms >= need_ms;
    /* A host-bound run's device time is the host's launching: a host that
     * slept between requests (a core clocked down, cold caches) launches
     * slower, and no sampled figure shows it. Said only where the measured
     * causes do not explain the excess: it is an inference. */
    bool host = host_wait_share > IB__HOST_BOUND_SHARE; /* false for NaN */
    out->cause = clock && wakeup ? IB_SERVE_CAUSE_BOTH
                 : clock         ? IB_SERVE_CAUSE_CLOCK
                 : wakeup        ? IB_SERVE_CAUSE_WAKEUP
                 : host          ? IB_SERVE_CAUSE_HOST
                                 : IB_SERVE_CAUSE_UNEXPLAINED;
}

double ib__serve_sm_clock_median(const ib_gpu_sample *samples, size_t n, double from_ms, double to_ms)
{
    double *mhz = malloc((n ? n : 1) * sizeof *mhz);
    if (!mhz) return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (samples[i].sm_clock_mhz > 0 && samples[i].t_ms >= from_ms && samples[i].t_ms <= to_ms)
            mhz[k++] = samples[i].sm_clock_mhz;
    double median = NAN;
    if (k > 0) {
        ib__sort(mhz, k);
        median = ib_quantile_sorted(mhz, k, 0.5);
    }
    free(mhz);
    return median;
}
