/*
 * fuzz_tokens.c — libFuzzer target: bytes as a token file (`shortc run
 * --tokens`), through the CLI's reader (cli/tokens_file.c). Its messages go
 * to stderr, which run.sh sends to the log.
 */
#include "run_common.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int32_t *ids = NULL;
    int n = parse_tokens("fuzz.tokens", (const char *)data, size, &ids);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0) abort();   /* ids are non-negative */
    free(ids);
    return 0;
}
