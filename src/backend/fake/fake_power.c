/* The scripted power of a fake device (fake_power.h). */
#include "backend/fake/fake_power.h"
#include "base/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ib_status ib__fake_power_busy(ib__fake_power *p, double start_ms, double end_ms, double watts, ib_error *err)
{
    if (!(p->step_ms > 0)) return IB_OK;
    if (p->busy_head > 0 && p->busy_head == p->n_busy) p->busy_head = p->n_busy = 0;
    if (p->n_busy == p->cap_busy) {
        if (p->busy_head > 0) { /* room at the front: move the pending ones down */
            memmove(p->busy, p->busy + p->busy_head, (p->n_busy - p->busy_head) * sizeof *p->busy);
            p->n_busy -= p->busy_head;
            p->busy_head = 0;
        } else {
            size_t cap = p->cap_busy ? 2 * p->cap_busy : 256;
            double(*b)[3] = realloc(p->busy, cap * sizeof *b);
            IB_FAIL_IF(!b, err, IB_ERR_NO_MEMORY, "out of memory");
            p->busy = b;
            p->cap_busy = cap;
        }
    }
    p->busy[p->n_busy][0] = start_ms;
    p->busy[p->n_busy][1] = end_ms;
    p->busy[p->n_busy][2] = watts - p->idle_w;
    p->n_busy++;
    return IB_OK;
}

/* The device's energy above idle before t_ms, in mJ; t_ms never goes
 * back between calls (the counter is read at multiples of its step of a
 * clock that only advances), so the intervals wholly before it are folded
 * away. */
static double busy_mj_before(ib__fake_power *p, double t_ms)
{
    double pending = 0;
    while (p->busy_head < p->n_busy && p->busy[p->busy_head][1] <= t_ms) {
        const double *b = p->busy[p->busy_head];
        p->busy_folded_mj += (b[1] - b[0]) * b[2]; /* W x ms */
        p->busy_head++;
    }
    for (size_t i = p->busy_head; i < p->n_busy; i++)
        if (p->busy[i][0] < t_ms) pending += (fmin(p->busy[i][1], t_ms) - p->busy[i][0]) * p->busy[i][2];
    return p->busy_folded_mj + pending;
}

static double unit_j(const ib__fake_power *p) { return p->unit_j > 0 ? p->unit_j : 1e-3; }

/* The count at the last multiple of the step: idle power throughout, the
 * busy power's excess over the device's work before then. */
static bool power_read(void *state, uint64_t *count)
{
    ib__fake_power *p = state;
    p->reads++;
    double at_ms = floor(*p->now_ms / p->step_ms) * p->step_ms;
    double joules = p->idle_w * at_ms / 1e3 + busy_mj_before(p, at_ms) / 1e3;
    /* The tiny term keeps a whole number of units whole despite rounding. */
    double c = (double)p->start + floor(joules / unit_j(p) + 1e-9);
    if (p->range > 0) c = fmod(c, (double)p->range);
    *count = (uint64_t)c;
    return true;
}

bool ib__fake_power_counter(ib__fake_power *p, ib__energy_counter *c, char *note, size_t cap)
{
    *c = (ib__energy_counter){ 0 };
    if (!(p->step_ms > 0)) {
        snprintf(note, cap, "the fake scripts no energy counter (energy_step_ms 0)");
        return false;
    }
    snprintf(c->name, sizeof c->name, "the fake's scripted counter");
    c->unit_j = unit_j(p);
    c->range = p->range;
    c->read = power_read;
    c->state = p;
    return true;
}

void ib__fake_power_free(ib__fake_power *p)
{
    free(p->busy);
    p->busy = NULL;
    p->n_busy = p->cap_busy = p->busy_head = 0;
}
