/* nvrtc_facts.h — static kernel facts of an emitted .cu from NVRTC (nvrtc_facts.c). */
#ifndef SHORTC_NVRTC_FACTS_H
#define SHORTC_NVRTC_FACTS_H

#include "shortc.h"

/*
 * Compiles the .cu text for sm_<arch> with NVRTC (no GPU needed) and fills t
 * (at most max entries) with what ptxas reports per function and each
 * kernel's PTX instruction mix, and its SASS mix when cuobjdump is found
 * (has_sass; otherwise note says why, else note is ""). Returns the number of
 * entries, or -1 with a message in err (compile error, unreadable log, too
 * many functions).
 */
int nvrtc_kernel_facts(const char *cu, int arch, KernelFacts *t, int max, char *err, size_t errlen, char *note,
                       size_t notelen);

/*
 * What the facts depend on besides the .cu text (the cache key of cli/facts_cache.c):
 * arch, NVRTC's version, the CUDA include directory and the cuobjdump found ("none").
 */
void nvrtc_facts_config(int arch, char *out, size_t len);

#endif
