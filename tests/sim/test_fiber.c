/*
 * test_fiber.c — the simulator's context switch: fibers that interleave
 * floating-point and integer work keep their state across switches, and a
 * switch is cheap (the figure is printed; bench_sim reports it too).
 */
#include "sim_test.h"
#include "sim_valgrind.h"

#include <stdint.h>

#define NF 3
#define STACK (64 * 1024)

static SimFiberCtx main_ctx, ctx[NF];
static double result[NF];
static int rounds;

/* Each fiber accumulates a series with many live values, yielding to the next fiber every step. */
static void fiber_fn(void *arg) {
    int id = (int)(intptr_t)arg;
    double a = id + 1, b = 0.5 * id, c = 1.0;
    int64_t ia = id * 7, ib = 3;
    for (int i = 0; i < rounds; i++) {
        a = a * 0.999 + b;
        b = b * 0.5 + c * 0.25;
        c = c + 1e-3 * (double)(ia % 5);
        ia = ia * 3 + ib;
        ib ^= ia >> 3;
        ia &= 0xffffff;
        sim_fiber_switch(&ctx[id], id + 1 < NF ? &ctx[id + 1] : &main_ctx);
    }
    result[id] = a + b + c + (double)ia + (double)ib;
    sim_fiber_switch(&ctx[id], &main_ctx);
    for (;;) sim_fiber_switch(&ctx[id], &main_ctx); /* never resumed */
}

/* The same computation without fibers. */
static double reference(int id) {
    double a = id + 1, b = 0.5 * id, c = 1.0;
    int64_t ia = id * 7, ib = 3;
    for (int i = 0; i < rounds; i++) {
        a = a * 0.999 + b;
        b = b * 0.5 + c * 0.25;
        c = c + 1e-3 * (double)(ia % 5);
        ia = ia * 3 + ib;
        ib ^= ia >> 3;
        ia &= 0xffffff;
    }
    return a + b + c + (double)ia + (double)ib;
}

int main(void) {
    rounds = 1000;
    char *stacks = malloc((size_t)NF * STACK);
    unsigned vg[NF];
    for (int i = 0; i < NF; i++) vg[i] = VALGRIND_STACK_REGISTER(stacks + (size_t)i * STACK, stacks + (size_t)(i + 1) * STACK);
    for (int i = 0; i < NF; i++) sim_fiber_make(&ctx[i], stacks + (size_t)i * STACK, STACK, fiber_fn, (void *)(intptr_t)i);
    /* a round: main -> 0 -> 1 -> 2 -> main */
    for (int r = 0; r <= rounds; r++) sim_fiber_switch(&main_ctx, &ctx[0]);
    for (int i = 1; i < NF; i++) sim_fiber_switch(&main_ctx, &ctx[i]); /* let 1 and 2 write their results */
    for (int i = 0; i < NF; i++) CHECK(result[i] == reference(i));
    for (int i = 0; i < NF; i++) VALGRIND_STACK_DEREGISTER(vg[i]);
    free(stacks);
    double ns = sim_measure_switch_ns(2000000);
    printf("fiber switch: %.1f ns\n", ns);
    CHECK(ns > 0 && ns < 1000); /* generous: only catches a broken (syscall-per-switch) path */
    return check_done("sim_fiber");
}
