/* facts_cache.h — static kernel facts kept in the kernel cache (facts_cache.c). */
#ifndef SHORTC_FACTS_CACHE_H
#define SHORTC_FACTS_CACHE_H

#include "shortc.h"

/*
 * nvrtc_kernel_facts (nvrtc_facts.h) through the kernel cache: the facts of
 * the same .cu text, arch, NVRTC version, include directory and cuobjdump
 * come from a valid cache entry (*cached true) without compiling; otherwise
 * they are computed and stored. A corrupt entry is recomputed; a failed
 * store is not an error (the next call compiles again). Same returns as
 * nvrtc_kernel_facts.
 */
int cached_kernel_facts(const char *cu, int arch, KernelFacts *t, int max, char *err, size_t errlen, char *note,
                        size_t notelen, bool *cached);

#endif
