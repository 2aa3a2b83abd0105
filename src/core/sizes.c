/* The sizes of the public structs by name, for bindings that mirror them
 * without reading the header (Python's ctypes): a binding checks its
 * mirrors against these before the first call, so that a header changed
 * since the binding was written is refused rather than misread, and
 * allocates the results it never looks inside with the size given here. */
#include "inferbench_backend.h"

#include <string.h>

#define IB_SIZE(type)                                                                                        \
    {                                                                                                        \
#type, sizeof(type)                                                                                  \
    }

static const struct {
    const char *name;
    size_t size;
} sizes[] = {
    IB_SIZE(ib_error),
    IB_SIZE(ib_config),
    IB_SIZE(ib_throughput_config),
    IB_SIZE(ib_latency_result),
    IB_SIZE(ib_throughput_result),
    IB_SIZE(ib_pitfalls_result),
    IB_SIZE(ib_calibration_result),
    IB_SIZE(ib_workload_info),
    IB_SIZE(ib_tensor_info),
    IB_SIZE(ib_backend),
    IB_SIZE(ib_backend_open_args),
    IB_SIZE(ib_backend_handle),
    IB_SIZE(ib_gen_options),
    IB_SIZE(ib_gen_config),
    IB_SIZE(ib_gen_info),
    IB_SIZE(ib_gen_result),
    IB_SIZE(ib_gen_callbacks),
    IB_SIZE(ib_gen_batch_entry),
    IB_SIZE(ib_gen_serve_config),
    IB_SIZE(ib_gen_serve_result),
    IB_SIZE(ib_result),
};

size_t ib_struct_size(const char *name)
{
    for (size_t i = 0; name && i < sizeof sizes / sizeof sizes[0]; i++)
        if (!strcmp(sizes[i].name, name)) return sizes[i].size;
    return 0;
}
