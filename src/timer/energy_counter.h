/* An energy counter: a cumulative count of joules kept by the hardware,
 * seen through one small table, as a device timer is (timer.h). Its kinds
 * are opened in src/env/energy.h (NVML, RAPL); a test's counter is any other
 * table (the fake backend scripts one on its virtual clock). A header of
 * its own, in the instruments' folder, so that a backend can offer a
 * counter without knowing the machine-facts layer. */
#ifndef IB_TIMER_ENERGY_COUNTER_H
#define IB_TIMER_ENERGY_COUNTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ib__energy_counter {
    char name[96];  /* what is counted, for the report ("NVML total energy") */
    double unit_j;  /* joules one count is */
    uint64_t range; /* the count goes back to 0 on reaching this; 0: never */
    /* Reads the count now; false when the read failed. */
    bool (*read)(void *state, uint64_t *count);
    void (*close)(void *state); /* NULL: nothing to release */
    void *state;
} ib__energy_counter;

/* Opens a counter into *c: false with the reason in note[cap]. What a
 * measured thing offers (its own counter: ctx is the thing), or what the
 * meter opens (src/core/energy.h). */
typedef bool (*ib__energy_open_fn)(void *ctx, ib__energy_counter *c, char *note, size_t cap);

#endif
