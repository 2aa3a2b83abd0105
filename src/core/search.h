/* The search for the largest count that fits, whatever is counted: the
 * batch of a forward pass (batch_search.c) or the sequences a generative
 * model decodes together (generate_sequences.c). Written once: geometric
 * growth from 1, then bisection; or, from the top, the bound first. */
#ifndef IB_CORE_SEARCH_H
#define IB_CORE_SEARCH_H

#include "base/common.h"

/* Does n fit? *fits answers; growing says the probe is one of the growth's
 * (powers of two, which the caller may time there and then). An error
 * other than "does not fit" stops the search and is returned. */
typedef ib_status (*ib__fits_fn)(void *user, int64_t n, bool growing, bool *fits, ib_error *err);

/* Whether a probe's failure st at n is its answer, "does not fit": out of
 * memory, or the runtime refusing a size above 1 (IB_ERR_UNSUPPORTED: GPU
 * kernel libraries reject tensors of 2^31 elements whatever the memory;
 * at 1 it is a real failure, as is any other status). */
bool ib__search_capacity_limit(ib_status st, int64_t n);

/* What a fits callback returns (with *fits true) for a growth probe after
 * which the growth must not go on: n is then the answer (*no_fit 0), as
 * when max is reached. Not an error: positive, as no ib_status is. */
#define IB__SEARCH_ENOUGH ((ib_status)1)

/* The largest n in [1, max] that fits: doubling from 1 (max itself when
 * doubling would pass it) until one does not, then bisection between the
 * last that fit and the first that did not; from_top asks max first and
 * bisects below it when it does not fit. *fit: the largest seen to fit (0:
 * none, also what fit so far on failure); *no_fit: the smallest seen not
 * to fit (0: none, max reached). The cancel flag is checked before each
 * probe (IB_ERR_INTERRUPTED, "interrupted during the WHAT search"). */
ib_status ib__search_largest(ib__fits_fn fits, void *user, int64_t max, bool from_top,
                             const volatile int *cancel, const char *what, int64_t *fit, int64_t *no_fit,
                             ib_error *err);

#endif
