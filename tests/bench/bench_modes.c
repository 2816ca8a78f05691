/*
 * bench_modes.c — tokens/s of each inference mode (srt_eval_nll) on the test-size models (not a
 * test; run by hand):
 *
 *   ./build/tests/bench_modes [BACKEND [MODEL.arch...]]
 *
 * BACKEND is sim (default) or ref; the models default to the bundled tiny ones. Each model is
 * evaluated over 1.5 segments of seeded tokens with random weights in nonoverlapping, sliding
 * (stride L/2 and 1), windows (overlap L/4) and tokenwise modes (and cached, on a model that carries
 * its state: shortformer_tiny's PIA cache); the simulator's kernels are
 * compiled once (the kernel cache) before timing. Each row also prints the cost model's matrix
 * FLOPs per scored token (compiler/cost.c): the window modes from cost_model over full windows
 * (as `shortc compare` prints them), tokenwise as the mean of cost_cached_token over the
 * positions the run feeds (one query against the cached keys). And the bytes copied from the
 * device to the host per scored token (srt_session_bytes_to_host): "before" is what scoring from
 * the logits rows costs (srt_eval_logits: the rows each token is scored with, as evaluation
 * copied them before the loss ran on the device), "after" what srt_eval_nll copies now (the
 * losses from the plan's loss program); 0 and 0 on ref, whose logits never leave the host.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shortc.h"
#include "shortrt.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Cost-model matrix FLOPs per scored token of a mode on n tokens with windows of L (-1 when unknown). */
static double mode_flops(Graph *g, srt_mode mode, int stride, int overlap, int L, int n) {
    if (!g) return -1;
    if (mode == SRT_MODE_TOKENWISE) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            OpCost c;
            cost_cached_token(g, i % L, &c);
            sum += c.flops;
        }
        return sum / n;
    }
    CostOptions o = {.window = L, .stride = stride, .overlap = overlap, .overlap_given = mode == SRT_MODE_WINDOWS};
    char why[256];
    const ModelCost *mc = cost_model(g, &o, why, sizeof why);
    if (!mc) return -1;
    CostMode cm = mode == SRT_MODE_SLIDING ? MODE_SLIDING : mode == SRT_MODE_WINDOWS ? MODE_OVERLAP : MODE_NONOVERLAP;
    return mc->modes[cm].flops;
}

/* Bytes srt_eval_logits copies to the host per scored token under o (-1 when it fails). */
static double rows_bytes_per_token(srt_session *s, const srt_eval_options *o, const int32_t *tok, int n, int vocab) {
    float *rows = malloc(sizeof *rows * (size_t)n * (size_t)vocab);
    size_t before = srt_session_bytes_to_host(s);
    srt_status st = rows ? srt_eval_logits(s, o, tok, n, rows) : SRT_ERR_NOMEM;
    free(rows);
    return st == SRT_OK ? (double)(srt_session_bytes_to_host(s) - before) / (n - 1) : -1;
}

/* Times one mode; prints a table row. */
static void bench_mode(const srt_context *ctx, srt_session *s, Graph *g, int L, srt_mode mode, int stride, int overlap,
                       const int32_t *tok, int n, float *nll, int vocab) {
    srt_eval_options o;
    srt_eval_options_init(&o);
    o.mode = mode, o.stride = stride, o.overlap = overlap;
    size_t bytes0 = srt_session_bytes_to_host(s);
    double t0 = now_s();
    srt_status st = srt_eval_nll(s, &o, tok, n, nll);
    double dt = now_s() - t0;
    double after = (double)(srt_session_bytes_to_host(s) - bytes0) / (n - 1);
    char what[64];
    snprintf(what, sizeof what, "%s%s%d", srt_mode_name(mode), stride ? " S=" : overlap ? " K=" : "",
             stride ? stride : overlap);
    if (!stride && !overlap) what[strlen(srt_mode_name(mode))] = 0;
    if (st != SRT_OK) printf("  %-22s not run: %s\n", what, srt_last_error(ctx));
    else
        printf("  %-22s %10.1f tokens/s  (%d tokens, %.3f s)  %10.4g FLOPs/token  to host %8.1f -> %5.1f bytes/token\n",
               what, (n - 1) / dt, n - 1, dt, mode_flops(g, mode, stride, overlap, L, n),
               rows_bytes_per_token(s, &o, tok, n, vocab), after);
}

static int bench_model(const char *path, srt_backend backend) {
    srt_context *ctx = NULL;
    srt_model *m = NULL;
    srt_session *s = NULL;
    srt_model_info mi;
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = backend;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) return 1;
    if (srt_model_open(ctx, path, &opt, &m) != SRT_OK || srt_model_random_weights(m, 1) != SRT_OK ||
        srt_model_get_info(m, &mi) != SRT_OK || srt_session_create(m, 1, &s) != SRT_OK) {
        fprintf(stderr, "bench_modes: %s: %s\n", path, srt_last_error(ctx));
        srt_model_close(m);
        srt_context_destroy(ctx);
        return 1;
    }
    int L = mi.segment, n = L + L / 2;
    int32_t *tok = malloc(sizeof *tok * (size_t)n);
    float *nll = malloc(sizeof *nll * (size_t)n);
    for (int i = 0; i < n; i++) tok[i] = (int32_t)((i * 7919 + 13) % mi.vocab);
    printf("%s on %s (segment %d, vocab %d)\n", mi.name, srt_backend_name(mi.backend), L, mi.vocab);
    srt_eval_options warm;
    srt_eval_options_init(&warm);
    srt_eval_nll(s, &warm, tok, 2, nll); /* warm-up: kernels compiled or taken from the cache */
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = path, .stop = COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    bool compiled = shortc_compile(&a, &d, &co, &cr);
    Graph *g = compiled ? cr.graph : NULL;
    bench_mode(ctx, s, g, L, SRT_MODE_NONOVERLAPPING, 0, 0, tok, n, nll, mi.vocab);
    bench_mode(ctx, s, g, L, SRT_MODE_SLIDING, L / 2, 0, tok, n, nll, mi.vocab);
    bench_mode(ctx, s, g, L, SRT_MODE_WINDOWS, 0, L / 4, tok, n, nll, mi.vocab);
    bench_mode(ctx, s, g, L, SRT_MODE_TOKENWISE, 0, 0, tok, n, nll, mi.vocab);
    bench_mode(ctx, s, g, L, SRT_MODE_SLIDING, 1, 0, tok, n, nll, mi.vocab);
    if (mi.carries_state) bench_mode(ctx, s, g, L, SRT_MODE_CACHED, 0, 0, tok, n, nll, mi.vocab); /* a PIA cache */
    if (compiled) compile_result_free(&cr);
    arena_free(&a);
    free(tok);
    free(nll);
    srt_session_destroy(s);
    srt_model_close(m);
    srt_context_destroy(ctx);
    return 0;
}

int main(int argc, char **argv) {
    srt_backend b = argc > 1 && strcmp(argv[1], "ref") == 0 ? SRT_BACKEND_REF : SRT_BACKEND_SIM;
    static const char *defaults[] = {SHORTC_SOURCE_DIR "/models/gpt2_tiny.arch",
                                     SHORTC_SOURCE_DIR "/models/baseline_ba_tiny.arch",
                                     SHORTC_SOURCE_DIR "/models/mixed_tiny.arch",
                                     SHORTC_SOURCE_DIR "/models/shortformer_tiny.arch"};
    int rc = 0;
    if (argc > 2)
        for (int i = 2; i < argc; i++) rc |= bench_model(argv[i], b);
    else
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++) rc |= bench_model(defaults[i], b);
    return rc;
}
