/* Small numeric pieces shared by the subsystems that make data: the
 * reproducible random numbers (model weights, input values, bootstrap) and
 * the half-precision conversions. */
#ifndef IB_CORE_NUMERIC_H
#define IB_CORE_NUMERIC_H

#include <stdint.h>

/* splitmix64's step: state advances by this on every draw, so the state
 * after k draws from seed is seed + k * IB__SPLITMIX64_STEP. */
#define IB__SPLITMIX64_STEP 0x9E3779B97F4A7C15ull

/* splitmix64: tiny, fast, and the same sequence on every machine. */
uint64_t ib__splitmix64(uint64_t *state);

/* Uniform in [-1, 1): the top 24 bits of a draw, exact in a float. */
float ib__uniform_pm1(uint64_t *state);

/* IEEE half and bfloat16 from a float, rounding to nearest even; infinities
 * and NaNs kept. */
uint16_t ib__float_to_half(float f);
uint16_t ib__float_to_bfloat16(float f);

/* The float an IEEE half or a bfloat16 stands for (exact). */
float ib__half_to_float(uint16_t h);
float ib__bfloat16_to_float(uint16_t b);

#endif
