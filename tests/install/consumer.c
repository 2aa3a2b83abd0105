/* A program that uses inferbench the way an outside project would: only
 * <inferbench.h> and what `pkg-config --cflags --libs inferbench` gives.
 * Prints what it computed, for install.sh to compare. */
#include <inferbench.h>

#include <stdio.h>

int main(void)
{
    const double x[] = { 4, 1, 3, 2, 5, 10, 6, 9, 7, 8 };
    ib_stats s;
    if (ib_stats_compute(x, sizeof x / sizeof x[0], &s) != IB_OK) return 1;
    const ib_zoo_entry *mlp = ib_zoo_find("mlp");
    if (!mlp) return 1;
    printf("n %zu mean %.2f p50 %.2f p90 %.2f min %.0f max %.0f\n", s.n, s.mean, s.p50, s.p90, s.min, s.max);
    printf("mlp params %lld\n", (long long)mlp->params);
    printf("status %s\n", ib_status_str(IB_ERR_DEVICE_OOM));
    /* A model on the CPU: ONNX Runtime loaded by the library at run time,
     * found beside it. */
    ib_model_options o;
    ib_model_options_init(&o);
    o.device = IB_DEVICE_CPU;
    ib_workload *w;
    ib_error err;
    if (ib_workload_open_model("zoo:mlp", &o, &w, &err) != IB_OK) {
        printf("model not opened: %s\n", err.message);
        return 1;
    }
    printf("model %s on %s\n", ib_workload_get_info(w)->model, ib_workload_get_info(w)->provider);
    ib_workload_destroy(w);
    return 0;
}
