/* The entry point every fuzz target defines. libFuzzer calls it with each
 * input it tries; replay_main.c calls it with each file of a corpus, so that
 * the corpora run in the normal test suite. A target returns 0; a finding
 * is a crash, a sanitizer report or a failed FUZZ_ASSERT. */
#ifndef IB_TESTS_FUZZ_H
#define IB_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant the code under test promises: abort (a finding) when it
 * does not hold, in every build type. */
#define FUZZ_ASSERT(cond)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);                     \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)

#endif
