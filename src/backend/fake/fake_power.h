/* The scripted power of a fake device, shared by the forward-pass fake
 * (fake.c) and the generation fake (gen_fake.c): the intervals it was busy
 * at a power above idle, and the count a cumulative energy counter that
 * moves only at multiples of its step reads on the virtual clock. So both
 * fakes' energy is the same arithmetic, tested once (test_energy.c). */
#ifndef IB_BACKEND_FAKE_FAKE_POWER_H
#define IB_BACKEND_FAKE_FAKE_POWER_H

#include "inferbench.h"
#include "timer/energy_counter.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ib__fake_power {
    /* The script: a counter stepping every step_ms (0: none), the device
     * drawing idle_w at rest, counting unit_j joules a count (0: 1 mJ), from
     * start, going back to 0 at range (0: never). */
    double step_ms, idle_w, unit_j;
    uint64_t start, range;
    /* [busy_head, n_busy) not yet folded into busy_folded_mj. */
    double (*busy)[3]; /* start, end, the excess watts above idle */
    size_t n_busy, cap_busy, busy_head;
    double busy_folded_mj; /* the excess energy of those before them */
    const double *now_ms;  /* the fake's virtual clock */
    int64_t reads;         /* of the counter, so far: tests read the order of the calls */
} ib__fake_power;

/* Records [start_ms, end_ms) as work at watts (nothing without a counter:
 * a long run keeps no list then). */
ib_status ib__fake_power_busy(ib__fake_power *p, double start_ms, double end_ms, double watts, ib_error *err);

/* The counter of p into *c (its name, unit, range, read at *p->now_ms);
 * false without one, the reason in note[cap]. */
bool ib__fake_power_counter(ib__fake_power *p, ib__energy_counter *c, char *note, size_t cap);

void ib__fake_power_free(ib__fake_power *p);

#endif
