/* Shared objects the registry must refuse, one per PLUGIN_KIND: a table of
 * another ABI version behind the right symbol (wrong_version), plugins of
 * older ABIs exporting their own entry symbols (abi_v1; abi_v2, built before
 * backends declared their options), and no entry symbol at all (no_entry).
 * Built with the public header alone, as plugins are. */
#include "inferbench_backend.h"

#if PLUGIN_KIND == 1 /* wrong_version */
static ib_status never_open(const ib_backend_open_args *args, ib_backend_handle *out, ib_error *err)
{
    (void)args, (void)out, (void)err;
    return IB_ERR_INTERNAL;
}
static const ib_backend table = {
    .struct_size = sizeof(ib_backend),
    .abi_version = IB_BACKEND_ABI_VERSION + 1,
    .name = "future",
    .description = "a table of the next ABI version",
    .open = never_open,
};
const ib_backend *inferbench_backend_v4(void);
const ib_backend *inferbench_backend_v4(void) { return &table; }
#elif PLUGIN_KIND == 2 /* abi_v1: a plugin built before the options list */
const void *inferbench_backend_v1(void);
const void *inferbench_backend_v1(void) { return 0; }
#elif PLUGIN_KIND == 3 /* abi_v2: a plugin built before option declarations */
const void *inferbench_backend_v2(void);
const void *inferbench_backend_v2(void) { return 0; }
#else                  /* no_entry */
int not_an_inferbench_backend(void);
int not_an_inferbench_backend(void) { return 0; }
#endif
