/*
 * test_attn_grid.c — the causal attention kernel is launched with exactly
 * one block per QT queries and head: ceil(T/QT) x H blocks, never a block
 * without queries (issue 6: the grid was ceil((T+QT-1)/QT), one idle block
 * whenever T > 1, which still computed every key tile).
 *
 * gpt2_tiny runs on the simulator at several token counts; the blocks each
 * forward launched of the attention kernel are read from the simulator's
 * per-function statistics. QT and H are taken from the kernel's geometry
 * comment in the emitted CUDA ("grid (ceil(T/QT), H, 1)"), the layer count
 * from the plan. A 1-token call runs the plan's "decode" program and launches
 * no causal attention block (its split-key decode kernels are counted in
 * tests/sim/test_state.c).
 */
#include "rt_internal.h"
#include "shortc.h"
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

/* QT and H from the attention kernel's geometry comment; false if not found. */
static bool attention_geometry(const char *cu, int *qt, int *heads) {
    const char *p = strstr(cu, "queries of one head per block");
    if (!p) return false;
    while (p > cu && p[-1] != '\n') p--;
    return sscanf(p, "// grid (ceil(T/%d), %d, 1)", qt, heads) == 2;
}

/* Blocks launched so far of the plan's attention kernel (all of them, summed). */
static long attention_blocks(const srt_model *m) {
    long total = 0;
    for (int k = 0; k < m->plan.nkernels; k++) {
        if (!strstr(m->plan.kernels[k].name, "attn_causal")) continue;
        long plain = 0, fiber = 0;
        sim_func_stats(m->funcs[k], &plain, &fiber);
        total += plain + fiber;
    }
    return total;
}

int main(void) {
    const char *path = SHORTC_SOURCE_DIR "/models/gpt2_tiny.arch";
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = path};
    CompileResult cr;
    int qt = 0, heads = 0;
    bool ok = shortc_compile(&a, &d, &co, &cr) && attention_geometry(cr.emit.cu, &qt, &heads);
    CHECK(ok && qt > 1 && heads > 0, "no attention geometry comment in the emitted CUDA");
    int segment = cr.spec ? cr.spec->segment : 0;
    compile_result_free(&cr);
    arena_free(&a);
    if (!ok) return 1;

    srt_context *ctx = NULL;
    srt_model *m = NULL;
    srt_session *s = NULL;
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_SIM;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK || srt_model_open(ctx, path, &opt, &m) != SRT_OK ||
        srt_model_random_weights(m, 1) != SRT_OK || srt_session_create(m, 1, &s) != SRT_OK) {
        printf("FAIL: opening gpt2_tiny on the simulator: %s\n", ctx ? srt_last_error(ctx) : "no context");
        srt_context_destroy(ctx);
        return 1;
    }
    int layers = m->plan.n_layers;
    const int counts[] = {1, 2, qt - 1, qt, qt + 1, 2 * qt, 2 * qt + 1, segment};
    int32_t *tokens = calloc((size_t)segment, sizeof *tokens);
    float *logits = malloc(sizeof *logits * (size_t)segment * (size_t)m->plan.vocab);
    CHECK(tokens && logits, "out of memory");
    for (size_t i = 0; tokens && logits && i < sizeof counts / sizeof *counts; i++) {
        int T = counts[i];
        if (T < 1 || T > segment) continue;
        for (int t = 0; t < T; t++) tokens[t] = (t * 7 + 3) % m->plan.vocab;
        long before = attention_blocks(m);
        srt_session_reset(s); /* each count is a fresh sequence of T tokens (a session continues its sequence) */
        srt_status st = srt_forward(s, tokens, T, logits);
        CHECK(st == SRT_OK, "forward at T=%d: %s", T, srt_last_error(ctx));
        long got = attention_blocks(m) - before;
        /* a 1-token call runs the "decode" program, whose attention is attn_decode (tests/sim/test_state.c) */
        long want = T == 1 ? 0 : (long)((T + qt - 1) / qt) * heads * layers;
        CHECK(got == want, "T=%d: %ld attention blocks launched, want ceil(%d/%d) x %d heads x %d layers = %ld", T, got,
              T, qt, heads, layers, want);
        printf("T=%-4d %ld attention blocks (QT %d, %d heads, %d layers)\n", T, got, qt, heads, layers);
    }
    free(tokens);
    free(logits);
    srt_model_close(m);
    srt_context_destroy(ctx);
    if (failures) printf("test_attn_grid: %d check(s) failed\n", failures);
    else printf("test_attn_grid: all checks passed\n");
    return failures ? 1 : 0;
}
