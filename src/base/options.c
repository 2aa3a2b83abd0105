/* The list of a workload's settings as its backend reports them: keys and
 * values in words, in the order first set, so that every printer and
 * compare read them the same way and no runtime's words reach the core. */
#include "base/common.h"

#include <stddef.h>
#include <string.h>

static ptrdiff_t find_key(const ib_option_list *list, const char *key)
{
    for (size_t i = 0; i < list->n; i++)
        if (!strcmp(list->items[i].key, key)) return (ptrdiff_t)i;
    return -1;
}

ib_status ib_option_list_set(ib_option_list *list, const char *key, const char *value)
{
    if (!list || !key || !value || !key[0] || strlen(key) >= IB_OPTION_KEY_LEN ||
        strlen(value) >= IB_OPTION_VALUE_LEN)
        return IB_ERR_INVALID_ARG;
    ptrdiff_t at = find_key(list, key);
    if (at < 0) {
        if (list->n == IB_MAX_OPTIONS) return IB_ERR_NO_MEMORY;
        at = (ptrdiff_t)list->n++;
        ib__strlcpy(list->items[at].key, key, IB_OPTION_KEY_LEN);
    }
    ib__strlcpy(list->items[at].value, value, IB_OPTION_VALUE_LEN);
    return IB_OK;
}

const char *ib_option_list_get(const ib_option_list *list, const char *key)
{
    ptrdiff_t at = list && key ? find_key(list, key) : -1;
    return at < 0 ? NULL : list->items[at].value;
}
