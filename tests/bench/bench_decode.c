/*
 * bench_decode.c — what the KV cache buys when generating (not a test; run by hand):
 *
 *   ./build/tests/bench_decode [MODEL.arch] [REPEATS]
 *
 * For contexts of 16, 64 and 128 tokens (those within the model's segment), on
 * the CPU simulator backend with seeded random weights, prints the time to
 * produce one more token's logits
 *   - with the cache: the session holds the C-1 earlier tokens (a prompt run
 *     first, not timed) and one 1-token forward runs (the plan's decode
 *     program: one query against C keys);
 *   - re-running the prefix: a fresh sequence of all C tokens in one forward
 *     (what generation costs without state);
 * each the median of REPEATS runs (default 5), and the FLOPs per token of
 * each from the compiler's cost model (compiler/cost.c): without a cache one
 * forward on C tokens; with the cache the forward on 1 token whose attention
 * scores its query against all C keys (4·head_dim FLOPs per key and head).
 */
#include "rt_internal.h"
#include "shortc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Cost-model FLOPs of the token after C cached ones (compiler/cost.c: every node at T = 1, attention over the
 * keys 0..C its pattern lets it see). */
static double cached_flops(const Graph *g, int C) {
    OpCost c;
    cost_cached_token(g, C, &c);
    return c.flops;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : SHORTC_SOURCE_DIR "/models/gpt2_tiny.arch";
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    if (repeats < 1 || repeats > 1000) {
        fprintf(stderr, "usage: bench_decode [MODEL.arch] [REPEATS 1..1000]\n");
        return 2;
    }
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = path};
    CompileResult cr;
    srt_context *ctx = NULL;
    srt_model *m = NULL;
    srt_session *s = NULL;
    int status = 1;
    double *t_cache = malloc(sizeof(double) * (size_t)repeats), *t_rerun = malloc(sizeof(double) * (size_t)repeats);
    if (!t_cache || !t_rerun || !shortc_compile(&a, &d, &co, &cr)) goto done;
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_SIM;
    opt.sim_checked = 0; /* timings of the plain simulator */
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK || srt_model_open(ctx, path, &opt, &m) != SRT_OK ||
        srt_model_random_weights(m, 1) != SRT_OK || srt_session_create(m, 1, &s) != SRT_OK) {
        fprintf(stderr, "bench_decode: %s\n", ctx ? srt_last_error(ctx) : "no context");
        goto done;
    }
    srt_model_info info;
    srt_model_get_info(m, &info);
    int V = info.vocab, seg = info.segment;
    int32_t *tokens = malloc(sizeof *tokens * (size_t)seg);
    float *logits = malloc(sizeof *logits * (size_t)seg * (size_t)V);
    if (!tokens || !logits) goto done_buf;
    for (int t = 0; t < seg; t++) tokens[t] = (t * 37 + 11) % V;
    printf("%s on the simulator (unchecked), %d repeats, median ms per generated token\n", info.name, repeats);
    printf("%8s %12s %12s %8s %14s %14s %8s\n", "context", "cache ms", "re-run ms", "speedup", "cache FLOPs",
           "re-run FLOPs", "ratio");
    static const int contexts[] = {16, 64, 128};
    for (size_t k = 0; k < sizeof contexts / sizeof *contexts; k++) {
        int C = contexts[k];
        if (C > seg || C > info.max_positions) continue;
        bool ok = true;
        for (int r = 0; r < repeats && ok; r++) {
            ok = srt_session_reset(s) == SRT_OK && (C == 1 || srt_forward(s, tokens, C - 1, logits) == SRT_OK);
            double t0 = rt_now_ms();
            ok = ok && srt_forward_rows(s, tokens + C - 1, 1, 0, logits) == SRT_OK;
            t_cache[r] = rt_now_ms() - t0;
            ok = ok && srt_session_reset(s) == SRT_OK;
            t0 = rt_now_ms();
            ok = ok && srt_forward_rows(s, tokens, C, C - 1, logits) == SRT_OK;
            t_rerun[r] = rt_now_ms() - t0;
        }
        if (!ok) {
            fprintf(stderr, "bench_decode: context %d: %s\n", C, srt_last_error(ctx));
            goto done_buf;
        }
        OpCost full;
        cost_forward(cr.graph, C, &full);
        double fc = cached_flops(cr.graph, C), mc = median(t_cache, repeats), mr = median(t_rerun, repeats);
        printf("%8d %12.3f %12.3f %7.1fx %14.4g %14.4g %7.1fx\n", C, mc, mr, mr / mc, fc, full.flops, full.flops / fc);
    }
    status = 0;
done_buf:
    free(tokens);
    free(logits);
done:
    free(t_cache);
    free(t_rerun);
    srt_model_close(m);
    srt_context_destroy(ctx);
    compile_result_free(&cr);
    arena_free(&a);
    return status;
}
