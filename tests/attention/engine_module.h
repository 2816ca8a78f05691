/* engine_module.h — compiles and loads a source of rendered engine kernels
 * (tests/attention/engine_render.h) through a driver (the CPU simulator in the
 * tests and benchmarks of tests/bench and tests/costdoc), with the instrumented
 * build's `NAME_count` reader beside kernel NAME (needs runtime/src/rt_driver.h). */
#ifndef SHORTC_ENGINE_MODULE_H
#define SHORTC_ENGINE_MODULE_H

#include "rt_driver.h"
#include "shortc_common.h" /* SHORTC_SMEM_DEFAULT_LIMIT */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Module of src (freed here) holding kernels `name` and `name`_count, compiled as `who` (errors on stderr
 * with that prefix; SHORTC_CACHE picks the cache); NULL on failure. */
static inline CUmodule engine_module(const RtDriver *D, char *src, const char *name, const char *who) {
    char count[128];
    snprintf(count, sizeof count, "%s_count", name);
    const char *names[] = {name, count};
    const char *cache = getenv("SHORTC_CACHE");
    RtCompileRequest req = {.source = src, .len = strlen(src), .name = who, .arch = 80,
                            .cache_dir = cache && *cache ? cache : "/tmp/shortc-sim-test-cache", .kernel_names = names,
                            .nkernels = 2};
    static char err[65536];
    RtCompiled out;
    CUmodule m = NULL;
    if (D->compile_module(&req, &out, err, sizeof err) != SRT_OK) fprintf(stderr, "%s: %s\n", who, err);
    else if (D->moduleLoadData(&m, out.image) != CUDA_SUCCESS) m = NULL;
    if (req.source) rt_compiled_release(&out);
    free(src);
    return m;
}

/* Launches kernel f on grid (gx, gy) of `block` threads with smem bytes of dynamic shared memory, raising the
 * function's limit first when smem exceeds the default 48 KB (the runtime does the same: runtime/src/exec.c). */
static inline CUresult engine_launch(const RtDriver *D, CUfunction f, int gx, int gy, int block, int smem, void **args) {
    if (smem > SHORTC_SMEM_DEFAULT_LIMIT) {
        CUresult r = D->funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
        if (r != CUDA_SUCCESS) return r;
    }
    return D->launchKernel(f, gx, gy, 1, block, 1, 1, (unsigned)smem, NULL, args, NULL);
}

#endif
