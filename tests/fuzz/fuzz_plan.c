/*
 * fuzz_plan.c — libFuzzer target: bytes as the plan JSON of an emitted .cu
 * through the runtime's plan loader and validation (rt_plan_parse), and as
 * a whole .cu through the plan comment's extraction.
 */
#include "rt_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    srt_context *ctx;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) abort();
    char *text = malloc(size + 1);
    if (!text) abort();
    if (size) memcpy(text, data, size);
    text[size] = 0;
    RtPlan p;
    if (rt_plan_parse(ctx, "fuzz.json", text, size, &p) == SRT_OK) rt_plan_free(ctx, &p);
    const char *json;
    size_t jlen;
    if (rt_plan_extract(ctx, "fuzz.cu", text, size, &json, &jlen) == SRT_OK &&
        rt_plan_parse(ctx, "fuzz.cu", json, jlen, &p) == SRT_OK)
        rt_plan_free(ctx, &p);
    free(text);
    srt_context_destroy(ctx);
    return 0;
}
