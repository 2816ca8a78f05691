/*
 * fuzz_npy.c — libFuzzer target: bytes as a .npy file through the runtime's
 * reader (srt_npy_read: header dict, dtype, shape, element count against
 * the data). A file read back must hold exactly its shape's elements.
 */
#include "fuzz_file.h"
#include "rt_internal.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("npy", data, size);
    srt_context *ctx;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) abort();
    srt_dtype dt = (srt_dtype)-1;
    void *vals = NULL;
    int64_t shape[8];
    int rank = 8;
    if (srt_npy_read(ctx, path, &dt, &vals, shape, &rank) == SRT_OK) {
        unsigned __int128 count = 1;
        for (int i = 0; i < rank; i++) count *= (uint64_t)shape[i];
        if (count * 4 > size) abort();   /* more elements than bytes: the count was not checked */
        srt_free(ctx, vals);
    }
    srt_context_destroy(ctx);
    return 0;
}
