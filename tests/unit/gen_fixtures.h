/* What the generation tests share (test_generate.c, test_gen_energy.c): the
 * scripted generation fake opened on a script, and a configuration of a
 * prompt of p tokens and n new ones, 10 runs after 3 warm-up runs with no
 * wait for steadiness (the virtual clock's runs are steady by design). */
#ifndef IB_TESTS_GEN_FIXTURES_H
#define IB_TESTS_GEN_FIXTURES_H

#include "backend/fake/gen_fake.h"

/* The fake on s, its model named "fake-model"; NULL (a failed check) when
 * it cannot be opened. */
ib__gen *gen_fixture_open(const ib__gen_fake_script *s);
ib_gen_config gen_fixture_config(int32_t p, int32_t n);

#endif
