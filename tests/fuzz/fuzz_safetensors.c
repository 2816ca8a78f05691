/*
 * fuzz_safetensors.c — libFuzzer target: bytes as a safetensors file
 * (header length, JSON header, data section) through the runtime's reader
 * and validation, then every tensor looked up by name.
 */
#include "rt_internal.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    srt_context *ctx;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) abort();
    RtSafetensors st;
    if (rt_st_open_memory(ctx, "fuzz.safetensors", data, size, &st) == SRT_OK) {
        for (int i = 0; i < st.ntensors; i++)
            if (rt_st_find(&st, st.tensors[i].name) == NULL) abort(); /* every listed tensor is found */
        rt_st_close(&st);
    }
    srt_context_destroy(ctx);
    return 0;
}
