/*
 * kernel_blocks.h — what the simulator counts per kernel, for the sim tests that check how often a kernel
 * runs (tests/sim/test_state.c: decode launches; tests/sim/test_loadprog.c: the load program's tables).
 */
#ifndef SHORTC_TESTS_KERNEL_BLOCKS_H
#define SHORTC_TESTS_KERNEL_BLOCKS_H

#include "rt_internal.h"
#include "sim.h"

#include <string.h>

/* Blocks launched so far of m's plan kernels whose name contains part. */
static inline long blocks_of(const srt_model *m, const char *part) {
    long total = 0;
    for (int k = 0; k < m->plan.nkernels; k++) {
        if (!strstr(m->plan.kernels[k].name, part)) continue;
        long plain = 0, fiber = 0;
        sim_func_stats(m->funcs[k], &plain, &fiber);
        total += plain + fiber;
    }
    return total;
}

#endif
