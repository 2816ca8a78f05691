/*
 * sim_valgrind.h — valgrind's stack client requests for the simulator's
 * fiber stacks. <valgrind/valgrind.h> is a header-only macro file whose
 * requests cost a few instructions and do nothing outside valgrind; without
 * it (no valgrind-dev on the build machine) the requests are no-ops.
 * Registered stacks let valgrind tell a fiber switch from a giant stack
 * frame, so `ctest -T memcheck` can check simulator runs.
 */
#ifndef SIM_VALGRIND_H
#define SIM_VALGRIND_H

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef VALGRIND_STACK_REGISTER
#define VALGRIND_STACK_REGISTER(lo, hi) ((void)(lo), (void)(hi), 0u)
#define VALGRIND_STACK_DEREGISTER(id) ((void)(id))
#endif

#endif /* SIM_VALGRIND_H */
