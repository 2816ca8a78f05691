/*
 * argmax.c — the smallest complete libshortrt program: open a model (an
 * emitted .cu or an .arch), load weights (a safetensors file or seeded
 * random ones), run one segment and print the most likely next token after
 * every position. Uses only the public header.
 *
 *   argmax MODEL.cu|MODEL.arch [--backend ref|sim|cuda|auto]
 *          [--weights FILE.safetensors | --seed N] [TOKEN ...]
 *
 * Without tokens it runs 0 1 2 ... 7 (modulo the vocabulary).
 */
#include "shortrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void) {
    fprintf(stderr, "usage: argmax MODEL.cu|MODEL.arch [--backend ref|sim|cuda|auto] "
                    "[--weights FILE.safetensors | --seed N] [TOKEN ...]\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage();
    const char *model = argv[1], *weights = NULL;
    unsigned long long seed = 0;
    srt_options opt;
    srt_options_init(&opt);
    enum { DEFAULT_TOKENS = 8 };
    /* room for every argument as a token, or for the default prompt */
    int32_t *tokens = calloc((size_t)(argc > DEFAULT_TOKENS ? argc : DEFAULT_TOKENS), sizeof *tokens);
    int ntokens = 0;
    if (!tokens) return 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--backend") == 0 && i + 1 < argc) {
            const char *b = argv[++i];
            if (strcmp(b, "ref") == 0) opt.backend = SRT_BACKEND_REF;
            else if (strcmp(b, "sim") == 0) opt.backend = SRT_BACKEND_SIM;
            else if (strcmp(b, "cuda") == 0) opt.backend = SRT_BACKEND_CUDA;
            else if (strcmp(b, "auto") == 0) opt.backend = SRT_BACKEND_AUTO;
            else return usage();
        } else if (strcmp(a, "--weights") == 0 && i + 1 < argc) {
            weights = argv[++i];
        } else if (strcmp(a, "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else {
            char *end;
            long v = strtol(a, &end, 10);
            if (*end || end == a) return usage();
            tokens[ntokens++] = (int32_t)v;
        }
    }

    srt_context *ctx = NULL;
    srt_model *m = NULL;
    srt_session *s = NULL;
    float *logits = NULL;
    int rc = 1;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) {
        fprintf(stderr, "argmax: cannot create a runtime context\n");
        free(tokens);
        return 1;
    }
    srt_model_info info;
    if (srt_model_open(ctx, model, &opt, &m) != SRT_OK) goto fail;
    if ((weights ? srt_model_load_weights(m, weights) : srt_model_random_weights(m, seed)) != SRT_OK) goto fail;
    if (srt_model_get_info(m, &info) != SRT_OK) goto fail;
    if (ntokens == 0) {
        ntokens = info.segment < DEFAULT_TOKENS ? info.segment : DEFAULT_TOKENS;
        for (int i = 0; i < ntokens; i++) tokens[i] = i % info.vocab;
    }
    logits = malloc(sizeof *logits * (size_t)ntokens * (size_t)info.vocab);
    if (!logits) goto fail;
    if (srt_session_create(m, 1, &s) != SRT_OK) goto fail;
    if (srt_forward(s, tokens, ntokens, logits) != SRT_OK) goto fail;

    printf("%s on %s, %s weights\n", info.name, srt_backend_name(info.backend), weights ? weights : "random");
    for (int t = 0; t < ntokens; t++) {
        const float *row = logits + (size_t)t * (size_t)info.vocab;
        int best = 0;
        for (int v = 1; v < info.vocab; v++)
            if (row[v] > row[best]) best = v;
        printf("position %d: token %d -> next %d (logit %.4f)\n", t, tokens[t], best, row[best]);
    }
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "argmax: %s\n", srt_last_error(ctx));
done:
    srt_model_close(m); /* also destroys the session */
    srt_context_destroy(ctx);
    free(logits);
    free(tokens);
    return rc;
}
