/*
 * fuzz_tokenizer.c — libFuzzer target: GPT-2 byte-level BPE
 * (runtime/src/tokenizer.c). The input is a tokenizer.json, a NUL byte,
 * then text: the file is opened (vocabulary, merges, added tokens), the
 * text encoded, and the ids decoded again. Every id must be in the
 * vocabulary.
 */
#include "fuzz_file.h"
#include "rt_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nul = memchr(data, 0, size);
    size_t jlen = nul ? (size_t)(nul - data) : size;
    const char *text = nul ? (const char *)nul + 1 : "Hello world, 123!";
    size_t tlen = nul ? size - jlen - 1 : strlen(text);
    const char *path = fuzz_file("json", data, jlen);
    srt_context *ctx;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) abort();
    srt_tokenizer *t;
    if (srt_tokenizer_open(ctx, path, NULL, &t) == SRT_OK) {
        int32_t *ids = NULL;
        size_t n = 0;
        if (srt_tokenizer_encode(t, text, tlen, &ids, &n) == SRT_OK) {
            for (size_t i = 0; i < n; i++)
                if (ids[i] < 0 || ids[i] >= srt_tokenizer_vocab_size(t)) abort();
            char *back = NULL;
            size_t blen = 0;
            if (srt_tokenizer_decode(t, ids, n, &back, &blen) == SRT_OK) srt_free(ctx, back);
            srt_free(ctx, ids);
        }
        srt_tokenizer_close(t);
    }
    srt_context_destroy(ctx);
    return 0;
}
