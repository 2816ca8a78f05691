/*
 * test_state.c — sessions keep their KV state on every backend (issue 6).
 *
 * For every bundled tiny model (every attention kind: causal, window,
 * dilated, strided, bigbird, gaussian) and tests/sim/kinds_mixed_tiny.arch
 * (causal, dilated and window layers), on ref and on sim, with seeded random
 * weights and tokens:
 *   - one call == chunks of 1 (the decode program where the model has
 *     causal layers, else the forward program at T = 1) == chunks of 7
 *     (queries at P > 0, P not a multiple of the engine's query tile)
 *     (every logits element within 1e-5 of the largest logit), and the
 *     session's position follows;
 *   - srt_session_reset gives exactly what a fresh session gives;
 *   - the backend reports kv_cache 1, the position limit and the state bytes;
 *   - a session of 3 sequences fed with srt_forward_batch (different lengths,
 *     in two calls, one sequence sitting a call out) gives each sequence the
 *     logits of a single-sequence session;
 * a model whose cache slides (PIA): calls of 1 and 7 over 3 segments and 5 tokens (crossing segment ends)
 * give cached evaluation's logits, and srt_forward_rows / srt_forward_nll across segment ends their rows;
 * and on sim, after a call, every KV state buffer of the session equals the
 * interpreter's session state on the rows written (0..N-1, strided by the
 * capacity), within the golden suite's tolerance for the KV dtype.
 *
 * Decoding runs one query per step: on gpt2_tiny and kinds_mixed_tiny after a
 * 100-token prompt, each 1-token forward launches no causal (prefill)
 * attention block, ceil((P+1)/64) x heads x causal layers blocks of the
 * decode attention's partial kernel (flash-decoding: the keys split in chunks
 * of 64) plus heads x causal layers blocks of its combine kernel, and heads x
 * sparse layers blocks of the attention engine (T = 1: one query tile per
 * head) (counted by the simulator per kernel).
 */
#include "rt_internal.h"
#include "shortc.h"
#include "../suite/weights_by_value.h"
#include "kernel_blocks.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...)                                                              \
    do {                                                                           \
        if (!(c)) {                                                                \
            failures++;                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                            \
            printf(__VA_ARGS__);                                                   \
            printf("\n");                                                          \
        }                                                                          \
    } while (0)

/* Largest |a - b| over n floats relative to the largest |b| (decoding sums a query's keys in chunks, so
 * single logits near 0 may differ by rounding from one call's order). */
static double max_rel(const float *a, const float *b, size_t n) {
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= worst)) worst = d;
        if (fabs((double)b[i]) > scale) scale = fabs((double)b[i]);
    }
    return worst / (scale > 0 ? scale : 1);
}

/* Feeds tokens[0..n) in calls of `chunk` tokens (n: one call) into s; logits [n, vocab]. */
static srt_status feed(srt_session *s, const int32_t *tokens, int n, int chunk, int vocab, float *logits) {
    for (int at = 0; at < n; at += chunk) {
        int k = n - at < chunk ? n - at : chunk;
        srt_status st = srt_forward(s, tokens + at, k, logits + (size_t)at * (size_t)vocab);
        if (st != SRT_OK) return st;
    }
    return SRT_OK;
}

/* Decodes a state buffer's element i of dtype t. */
static float state_elem_value(DType t, const unsigned char *raw, size_t i) {
    uint16_t h;
    float f;
    switch (t) {
    case DT_F16: memcpy(&h, raw + 2 * i, 2); return rt_f16_to_f32(h);
    case DT_BF16: memcpy(&h, raw + 2 * i, 2); return rt_bf16_to_f32(h);
    default: memcpy(&f, raw + 4 * i, 4); return f;
    }
}

/*
 * The sim session's KV state against the interpreter's after the same n tokens: every state value of the
 * graph, the rows 0..n-1 of each slab (the elements before the token axis), within the golden tolerance.
 */
static void check_state(const char *model, const Graph *g, srt_model *m, srt_session *s, const int32_t *tokens, int n) {
    const RtPlan *p = &m->plan;
    float **pvals = calloc((size_t)p->nweights + 1, sizeof *pvals);
    const float **wts = calloc((size_t)g->nvalues + 1, sizeof *wts);
    float *logits = malloc(sizeof *logits * (size_t)n * (size_t)p->vocab);
    InterpSession *is = interp_session_new(g);
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    bool ok = pvals && wts && logits && is && rt_weights_random(m->ctx, p, 3, pvals) == SRT_OK;
    if (ok) weights_by_value(g, p, pvals, wts);
    ok = ok && interp_forward(is, &d, wts, tokens, n, logits, NULL);
    CHECK(ok, "%s: the interpreter's run failed", model);
    int compared = 0;
    for (int v = 0; ok && v < g->nvalues; v++) {
        const Value *val = g->values[v];
        if (val->role == STATE_NONE || ir_value_derived(val) || !ir_value_live(g, val)) continue; /* derived: test_loadprog */
        int idx = -1, cap = 0;
        for (int i = 0; i < p->nstate; i++)
            if (strcmp(p->state[i].name, val->name + (val->name[0] == '%')) == 0) idx = i;
        const float *want = interp_session_state(is, v, &cap);
        CHECK(idx >= 0 && want && cap == p->state[idx].capacity, "%s: state %s: no plan entry or interpreter state",
              model, val->name);
        if (idx < 0 || !want) continue;
        unsigned char *raw = malloc(p->state[idx].bytes);
        if (!raw || m->drv.memcpyDtoH(raw, s->state[idx], p->state[idx].bytes) != CUDA_SUCCESS) {
            CHECK(false, "%s: reading state %s failed", model, val->name);
            free(raw);
            continue;
        }
        size_t inner = 1, outer = 1;
        int axis = ir_token_axis(val) < 0 ? 0 : ir_token_axis(val);
        for (int k = 0; k < axis; k++) outer *= (size_t)ir_dim(val, k);
        for (int k = axis + 1; k < val->rank; k++) inner *= (size_t)ir_dim(val, k);
        /* the golden suite's tolerance per storage dtype: |d| <= tol * (1 + |ref|) */
        double tol = val->dtype == DT_F32 ? 1e-4 : 2e-2, worst = 0;
        for (size_t o = 0; o < outer; o++)
            for (size_t r = 0; r < (size_t)n; r++)
                for (size_t j = 0; j < inner; j++) {
                    size_t e = (o * (size_t)cap + r) * inner + j;
                    double dd = fabs((double)state_elem_value(val->dtype, raw, e) - want[e]) / (1.0 + fabs(want[e]));
                    if (!(dd <= worst)) worst = dd;
                }
        CHECK(worst <= tol, "%s: state %s differs from the interpreter's by %.3g x (1 + |ref|)", model, val->name, worst);
        compared++;
        free(raw);
    }
    CHECK(!ok || compared > 0, "%s: no state compared", model);
    printf("%s: sim state of %d KV caches equals the interpreter's after %d tokens\n", model, compared, n);
    interp_session_free(is);
    arena_free(&a);
    for (int i = 0; pvals && i < p->nweights; i++) rt_free(m->ctx, pvals[i]);
    free(pvals);
    free(wts);
    free(logits);
}

/* Blocks launched so far of the plan's attention-engine kernels of the sparse kinds (every attn_ kernel but the
 * causal and decode ones): none in a decode step. */
static long sparse_engine_blocks(const srt_model *m) {
    return blocks_of(m, "shortc_attn_") - blocks_of(m, "attn_causal") - blocks_of(m, "attn_decode");
}

/*
 * One query per decoding step on the simulator, with the decode program's launch geometry: every layer,
 * causal or sparse (sparse_layers of them: a visibility hook in the same kernel), runs flash-decoding over
 * ceil((P+1)/64) key chunks per head, and no layer runs the attention engine.
 */
static void check_decode_launches(srt_context *ctx, const char *path, int causal_layers, int sparse_layers) {
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_SIM;
    srt_model *m = NULL;
    srt_session *s = NULL;
    if (srt_model_open(ctx, path, &opt, &m) != SRT_OK || srt_model_random_weights(m, 3) != SRT_OK ||
        srt_session_create(m, 1, &s) != SRT_OK) {
        CHECK(false, "decode launches: %s", srt_last_error(ctx));
        srt_model_close(m);
        return;
    }
    const int heads = m->plan.n_heads, prompt = 100;
    CHECK(causal_layers + sparse_layers == m->plan.n_layers, "%s: %d layers, not %d causal + %d sparse", path,
          m->plan.n_layers, causal_layers, sparse_layers);
    int32_t tokens[100];
    float *logits = malloc(sizeof *logits * (size_t)prompt * (size_t)m->plan.vocab);
    for (int t = 0; t < prompt; t++) tokens[t] = (t * 5 + 1) % m->plan.vocab;
    CHECK(logits && srt_forward(s, tokens, prompt, logits) == SRT_OK, "prompt: %s", srt_last_error(ctx));
    for (int step = 0; logits && step < 5; step++) {
        int P = srt_session_position(s);
        long causal = blocks_of(m, "attn_causal"), partial = blocks_of(m, "attn_decode_partial"),
             combine = blocks_of(m, "attn_decode_combine"), sparse = sparse_engine_blocks(m);
        int32_t next = (int32_t)(step * 3 % m->plan.vocab);
        CHECK(srt_forward_rows(s, &next, 1, 0, logits) == SRT_OK, "decode step %d: %s", step, srt_last_error(ctx));
        long dc = blocks_of(m, "attn_causal") - causal, dp = blocks_of(m, "attn_decode_partial") - partial,
             dm = blocks_of(m, "attn_decode_combine") - combine, ds = sparse_engine_blocks(m) - sparse,
             layers = causal_layers + sparse_layers, want = (long)((P + 1 + 63) / 64) * heads * layers;
        CHECK(dc == 0 && dp == want && dm == (long)heads * layers && ds == 0,
              "%s: decode step at P=%d: %ld causal, %ld partial (want %ld), %ld combine (want %d), %ld sparse engine "
              "(want 0) attention blocks",
              path, P, dc, dp, want, dm, (int)(heads * layers), ds);
        printf("decode step at P=%d: one query, %ld partial + %ld combine attention blocks (%d of %ld layers sparse), "
               "no prefill or engine attention\n",
               P, dp, dm, sparse_layers, layers);
    }
    free(logits);
    srt_model_close(m);
}

/* A batch of 3 sequences of different lengths, in two calls, against three single runs. */
static void check_batch(srt_context *ctx, const char *model, srt_model *m, srt_session *single, const int32_t *tokens,
                        int n, int vocab) {
    const char *bn = srt_backend_name(m->backend);
    srt_session *s = NULL;
    const int len[3] = {n, 13 < n ? 13 : n, 5 < n ? 5 : n};
    const int first[2][3] = {{n / 2, len[1], 0}, {n - n / 2, 0, len[2]}}; /* tokens per call */
    float *want[3], *got[3];
    bool ok = srt_session_create(m, 3, &s) == SRT_OK && srt_session_batch(s) == 3;
    for (int b = 0; b < 3; b++) {
        want[b] = malloc(sizeof(float) * (size_t)len[b] * (size_t)vocab);
        got[b] = malloc(sizeof(float) * (size_t)len[b] * (size_t)vocab);
        ok = ok && want[b] && got[b];
    }
    /* sequence b: len[b] tokens from offset 3*b (each a different sequence; 3*b + len[b] <= n for n >= 16) */
    for (int b = 0; ok && b < 3; b++)
        ok = srt_session_reset(single) == SRT_OK && feed(single, tokens + 3 * b, len[b], len[b], vocab, want[b]) == SRT_OK;
    int done[3] = {0, 0, 0};
    for (int call = 0; ok && call < 2; call++) {
        const int32_t *tk[3];
        float *lg[3];
        for (int b = 0; b < 3; b++) {
            tk[b] = tokens + 3 * b + done[b];
            lg[b] = got[b] + (size_t)done[b] * (size_t)vocab;
        }
        ok = srt_forward_batch(s, tk, first[call], lg) == SRT_OK;
        for (int b = 0; b < 3; b++) done[b] += first[call][b];
    }
    CHECK(ok, "%s on %s: batch of 3: %s", model, bn, srt_last_error(ctx));
    for (int b = 0; ok && b < 3; b++) {
        double d = max_rel(got[b], want[b], (size_t)len[b] * (size_t)vocab);
        CHECK(d <= 1e-5 && srt_session_position_of(s, b) == len[b],
              "%s on %s: batch sequence %d differs from a single run by %.3g (position %d, want %d)", model, bn, b, d,
              srt_session_position_of(s, b), len[b]);
    }
    /* a bad sequence stops the whole call before any runs; single-sequence calls are refused */
    if (ok) {
        int32_t bad[2] = {1, (int32_t)vocab};
        const int32_t *tk[3] = {tokens, tokens, bad};
        const int lens[3] = {0, 1, 2}; /* sequence 0 may already be at the position limit */
        float *lg[3] = {got[0], got[1], got[2]};
        CHECK(srt_forward_batch(s, tk, lens, lg) == SRT_ERR_INVALID &&
                  strstr(srt_last_error(ctx), "sequence 2: token") && srt_session_position_of(s, 0) == len[0] &&
                  srt_session_position_of(s, 1) == len[1],
              "%s on %s: a bad sequence in a batch: %s", model, bn, srt_last_error(ctx));
        CHECK(srt_forward(s, tokens, 1, got[0]) == SRT_ERR_INVALID, "%s on %s: srt_forward on a batch session", model, bn);
    }
    if (ok) printf("%s on %s: a batch of 3 sequences (%d, %d, %d tokens in two calls) = 3 single runs\n", model, bn, len[0],
                   len[1], len[2]);
    for (int b = 0; b < 3; b++) {
        free(want[b]);
        free(got[b]);
    }
    srt_session_destroy(s);
}

/* The checks on one backend; g (the compiled IR) only for sim's state comparison. */
/*
 * A model whose cache slides (PIA): 3 segments and 5 tokens in calls of 1 and 7 (calls that cross segment ends:
 * the runtime cuts them there) give the logits of calls of a segment (cached evaluation); srt_forward_rows and
 * srt_forward_nll on calls crossing segment ends hand back the right rows and the losses of those logits.
 */
static void check_segments(srt_context *ctx, const char *model, const char *bn, srt_session *s, int L, int vocab) {
    int n = 3 * L + 5;
    size_t cnt = (size_t)n * (size_t)vocab;
    int32_t *tokens = malloc(sizeof *tokens * (size_t)n);
    float *seg = malloc(sizeof *seg * cnt), *c1 = malloc(sizeof *c1 * cnt), *c7 = malloc(sizeof *c7 * cnt);
    float *nll = malloc(sizeof *nll * (size_t)n);
    RtRng rng = {0x5e65ull};
    for (int t = 0; tokens && t < n; t++) tokens[t] = (int32_t)(rt_splitmix64(&rng) % (uint64_t)vocab);
    bool ok = tokens && seg && c1 && c7 && nll && srt_session_reset(s) == SRT_OK &&
              feed(s, tokens, n, L, vocab, seg) == SRT_OK && srt_session_reset(s) == SRT_OK &&
              feed(s, tokens, n, 1, vocab, c1) == SRT_OK && srt_session_reset(s) == SRT_OK &&
              feed(s, tokens, n, 7, vocab, c7) == SRT_OK;
    CHECK(ok, "%s on %s: segments: %s", model, bn, srt_last_error(ctx));
    if (ok) {
        double d1 = max_rel(c1, seg, cnt), d7 = max_rel(c7, seg, cnt);
        CHECK(d1 <= 1e-5 && d7 <= 1e-5, "%s on %s: %d tokens in calls of 1 / 7 differ from calls of a segment by "
              "%.3g / %.3g", model, bn, n, d1, d7);
        printf("%s on %s: %d tokens, calls of 1 / 7 vs segments: max rel diff %.2g / %.2g\n", model, bn, n, d1, d7);
    }
    /* one call of L tokens from L - 2 (across a segment end), rows from 3 on, and its losses */
    int at = L - 2, len = L, first = 3;
    ok = ok && srt_session_reset(s) == SRT_OK && feed(s, tokens, at, at, vocab, c1) == SRT_OK &&
         srt_forward_rows(s, tokens + at, len, first, c7) == SRT_OK;
    CHECK(ok && max_rel(c7, seg + (size_t)(at + first) * (size_t)vocab, (size_t)(len - first) * (size_t)vocab) <= 1e-5,
          "%s on %s: srt_forward_rows across segment ends: %s", model, bn, ok ? "rows differ" : srt_last_error(ctx));
    ok = ok && srt_session_reset(s) == SRT_OK && feed(s, tokens, at, at, vocab, c1) == SRT_OK &&
         srt_forward_nll(s, tokens + at, len, first, tokens + at + first + 1, nll) == SRT_OK;
    for (int i = 0; ok && i < len - first; i++) {
        float want = rt_row_nll(seg + (size_t)(at + first + i) * (size_t)vocab, vocab, tokens[at + first + i + 1]);
        CHECK(fabsf(nll[i] - want) <= 1e-4f * (1 + fabsf(want)), "%s on %s: loss %d across segment ends %g, want %g",
              model, bn, i, nll[i], want);
    }
    CHECK(ok, "%s on %s: srt_forward_nll across segment ends: %s", model, bn, srt_last_error(ctx));
    free(tokens);
    free(seg);
    free(c1);
    free(c7);
    free(nll);
}

static void check_backend(srt_context *ctx, const char *model, const char *path, srt_backend b, const Graph *g) {
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = b;
    srt_model *m = NULL;
    srt_session *s = NULL, *fresh = NULL;
    srt_model_info info;
    if (srt_model_open(ctx, path, &opt, &m) != SRT_OK || srt_model_random_weights(m, 3) != SRT_OK ||
        srt_session_create(m, 1, &s) != SRT_OK || srt_session_create(m, 1, &fresh) != SRT_OK ||
        srt_model_get_info(m, &info) != SRT_OK) {
        CHECK(false, "%s on %s: %s", model, srt_backend_name(b), srt_last_error(ctx));
        srt_model_close(m);
        return;
    }
    const char *bn = srt_backend_name(b);
    CHECK(info.kv_cache == 1 && info.max_positions == ir_position_limit(g->spec),
          "%s on %s: kv_cache %d, max_positions %d (want 1, %d)", model, bn, info.kv_cache, info.max_positions,
          ir_position_limit(g->spec));
    CHECK(info.state_bytes == ir_state_bytes(g) && srt_session_state_bytes(s) == info.state_bytes,
          "%s on %s: state bytes %zu / %zu, the IR's %zu", model, bn, info.state_bytes, srt_session_state_bytes(s),
          ir_state_bytes(g));
    int n = info.segment < 40 ? info.segment : 40, vocab = info.vocab;
    size_t cnt = (size_t)n * (size_t)vocab;
    int32_t *tokens = malloc(sizeof *tokens * (size_t)n);
    float *one = malloc(sizeof *one * cnt), *c1 = malloc(sizeof *c1 * cnt), *c7 = malloc(sizeof *c7 * cnt),
          *again = malloc(sizeof *again * cnt);
    RtRng rng = {0x57a7eull};
    for (int t = 0; tokens && t < n; t++) tokens[t] = (int32_t)(rt_splitmix64(&rng) % (uint64_t)vocab);
    bool ok = tokens && one && c1 && c7 && again;
    ok = ok && feed(s, tokens, n, n, vocab, one) == SRT_OK && srt_session_position(s) == n;
    CHECK(ok, "%s on %s: one call: %s", model, bn, srt_last_error(ctx));
    if (ok && b == SRT_BACKEND_SIM) check_state(model, g, m, s, tokens, n);
    ok = ok && srt_session_reset(s) == SRT_OK && srt_session_position(s) == 0 &&
         feed(s, tokens, n, 1, vocab, c1) == SRT_OK && srt_session_position(s) == n;
    CHECK(ok, "%s on %s: chunks of 1: %s", model, bn, srt_last_error(ctx));
    ok = ok && srt_session_reset(s) == SRT_OK && feed(s, tokens, n, 7, vocab, c7) == SRT_OK;
    CHECK(ok, "%s on %s: chunks of 7: %s", model, bn, srt_last_error(ctx));
    if (ok) {
        /* Chunks of 1 run the decode program, whose causal layers keep the softmax weights in fp32
         * (attn_decode.cuh); a forward of several tokens on fp16/bf16 keys and values runs the tensor-core
         * path, which rounds them to the K/V type for P·V (attn_mma.cuh; bf16: 2^-9 relative). */
        DType kvt = g ? g->spec->layout[TC_KV].dtype : DT_F32;
        double tol1 = b == SRT_BACKEND_SIM && (kvt == DT_F16 || kvt == DT_BF16) ? 2e-3 : 1e-5;
        double d1 = max_rel(c1, one, cnt), d7 = max_rel(c7, one, cnt);
        CHECK(d1 <= tol1 && d7 <= 1e-5, "%s on %s: chunks of 1 / 7 differ from one call by %.3g / %.3g", model, bn, d1,
              d7);
        printf("%s on %s: %d tokens, chunk 1 / chunk 7 vs one call: max rel diff %.2g / %.2g\n", model, bn, n, d1, d7);
    }
    /* a reset session and a fresh one give the same logits */
    ok = ok && srt_session_reset(s) == SRT_OK && feed(s, tokens, n, n, vocab, again) == SRT_OK &&
         feed(fresh, tokens, n, n, vocab, c1) == SRT_OK;
    CHECK(ok && memcmp(again, c1, sizeof *c1 * cnt) == 0, "%s on %s: reset is not a fresh session", model, bn);
    if (ok) check_batch(ctx, model, m, s, tokens, n, vocab);
    if (ok && g && ir_state_keep(g) >= 0) check_segments(ctx, model, bn, s, info.segment, vocab);
    free(tokens);
    free(one);
    free(c1);
    free(c7);
    free(again);
    srt_model_close(m);
}

/* With arguments, the models checked are those (paths from the source root without .arch) instead of the bundled
 * tiny ones: the tiny models of every attention kind (the sparse kinds run the engine at P > 0 in chunks), and a
 * model mixing kinds, whose decode program runs flash-decoding and the engine with T = 1 side by side. */
int main(int argc, char **argv) {
    static const char *const bundled[] = {
        "models/gpt2_tiny",        "models/baseline_ba_tiny",    "models/mixed_tiny",
        "models/gpt2_tiny_half",   "models/local_tiny",          "models/longformer_lm_tiny",
        "models/sparse_strided_tiny", "models/sparse_fixed_tiny", "models/bigbird_lm_tiny", "models/gaussian_tiny",
        "tests/sim/kinds_mixed_tiny"};
    const char *const *models = argc > 1 ? (const char *const *)argv + 1 : bundled;
    size_t nmodels = argc > 1 ? (size_t)argc - 1 : sizeof bundled / sizeof *bundled;
    srt_context *ctx = NULL;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) return 1;
    for (size_t i = 0; i < nmodels; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.arch", SHORTC_SOURCE_DIR, models[i]);
        Arena a;
        arena_init(&a);
        Diag d;
        diag_init(&d, &a, stderr);
        CompileOptions co = {.path = path};
        CompileResult cr;
        if (!shortc_compile(&a, &d, &co, &cr)) {
            CHECK(false, "%s: compiling failed", models[i]);
        } else {
            check_backend(ctx, models[i], path, SRT_BACKEND_REF, cr.graph);
            check_backend(ctx, models[i], path, SRT_BACKEND_SIM, cr.graph);
        }
        compile_result_free(&cr);
        arena_free(&a);
    }
    check_decode_launches(ctx, SHORTC_SOURCE_DIR "/models/gpt2_tiny.arch", 2, 0);
    check_decode_launches(ctx, SHORTC_SOURCE_DIR "/tests/sim/kinds_mixed_tiny.arch", 1, 2);
    check_decode_launches(ctx, SHORTC_SOURCE_DIR "/models/gaussian_tiny.arch", 0, 2); /* every layer sparse, seeded */
    check_decode_launches(ctx, SHORTC_SOURCE_DIR "/models/sparse_fixed_tiny.arch", 0, 2); /* Child et al.'s fixed */
    check_decode_launches(ctx, SHORTC_SOURCE_DIR "/models/longformer_lm_tiny.arch", 0, 2); /* dilated on heads 2-3 */
    srt_context_destroy(ctx);
    if (failures) printf("test_state: %d check(s) failed\n", failures);
    else printf("test_state: all checks passed\n");
    return failures ? 1 : 0;
}
