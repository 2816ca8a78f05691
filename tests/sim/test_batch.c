/*
 * test_batch.c — a batch session equals each of its sequences run alone, bit for bit (issue 21).
 *
 * For every bundled tiny model (every attention kind and memory family: KV cache, Shortformer's cache,
 * Transformer-XL's memories, the recurrence, adaptive softmax), on ref and on sim, with seeded random weights,
 * a session of 4 sequences with prompts of mixed lengths (1, 5, 13 and up to a segment, capped by the model):
 *   - logits: the first call feeds three prompts while the fourth sequence sits out; the second feeds the
 *     fourth prompt beside one token of each other sequence (a prefill and decode steps at different
 *     positions in one call); then decode steps of one token per sequence. Every logits row of every
 *     sequence is bitwise the row a single-sequence session gives for the same calls;
 *   - draws: srt_forward_batch_sample with a seeded sampler per sequence (temperature 0.9, so the draws
 *     depend on every logit), each drawn token fed back, gives each sequence the tokens that
 *     srt_forward_sample gives it alone, and the same positions.
 * The interpreter (ref) is the oracle; on sim every row of a decode step is computed on its own, so the
 * equality is exact there too. With batched kernels (one pass per decode step) these equalities are what
 * they must keep.
 */
#include "rt_internal.h" /* the plan's decode_batch */

#include <stdbool.h>
#include <stdint.h>
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

enum { NSEQ = 4, MAX_STEPS = 6, MAX_CALLS = MAX_STEPS + 2 };

/* One test's sequences and calls: tokens of sequence b's call c are toks[b] + at[b][c], n[b][c] of them. */
typedef struct Schedule {
    int len[NSEQ];                /* prompt lengths */
    int steps;                    /* decode steps after the prompts */
    int ncalls;                   /* calls of the batch */
    int n[NSEQ][MAX_CALLS];       /* tokens of sequence b in call c (0: it sits the call out) */
    int at[NSEQ][MAX_CALLS];      /* their offset in the sequence */
    int total[NSEQ];              /* tokens fed to sequence b in all */
    int32_t *toks[NSEQ];          /* the tokens of sequence b: its prompt, then its decode tokens */
} Schedule;

/* Builds the calls: prompts (the last sequence's one call later), then one token per sequence per step. */
static bool schedule_make(Schedule *sc, const srt_model_info *info) {
    int seg = info->segment, limit = info->max_positions;
    int want[NSEQ] = {1, 5, 13, 24};
    memset(sc, 0, sizeof *sc);
    int longest = 0;
    for (int b = 0; b < NSEQ; b++) {
        int l = want[b] < seg ? want[b] : seg;
        if (limit > 0 && l > limit - 3) l = limit - 3 > 1 ? limit - 3 : 1;
        sc->len[b] = l;
        if (l > longest) longest = l;
    }
    /* the last sequence's prompt arrives one call late: it gets one step fewer */
    sc->steps = MAX_STEPS;
    if (limit > 0 && longest + sc->steps > limit) sc->steps = limit - longest;
    if (sc->steps < 2) return false;
    sc->ncalls = sc->steps + 1;
    for (int b = 0; b < NSEQ; b++) {
        int late = b == NSEQ - 1, pos = 0;
        for (int c = 0; c < sc->ncalls; c++) {
            int k = c == late ? sc->len[b] : c > late ? 1 : 0;
            sc->n[b][c] = k;
            sc->at[b][c] = pos;
            pos += k;
        }
        sc->total[b] = pos;
        if (!(sc->toks[b] = malloc(sizeof(int32_t) * (size_t)pos))) return false;
        uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(b + 1);
        for (int t = 0; t < pos; t++) {
            x ^= x >> 29, x *= 0xbf58476d1ce4e5b9ull, x ^= x >> 32;
            sc->toks[b][t] = (int32_t)(x % (uint64_t)info->vocab);
        }
    }
    return true;
}

static void schedule_free(Schedule *sc) {
    for (int b = 0; b < NSEQ; b++) free(sc->toks[b]);
}

/* Logits: the batch's rows (got) against a single session's for each sequence's calls (want). */
static void check_logits(srt_context *ctx, const char *model, const char *bn, srt_model *m, const Schedule *sc,
                         int vocab) {
    srt_session *batch = NULL, *single = NULL;
    float *got[NSEQ] = {0}, *want[NSEQ] = {0};
    int before = failures;
    bool ok = srt_session_create(m, NSEQ, &batch) == SRT_OK && srt_session_create(m, 1, &single) == SRT_OK;
    for (int b = 0; b < NSEQ && ok; b++) {
        size_t cnt = (size_t)sc->total[b] * (size_t)vocab;
        ok = (got[b] = malloc(sizeof(float) * cnt)) && (want[b] = malloc(sizeof(float) * cnt));
    }
    CHECK(ok, "%s on %s: sessions: %s", model, bn, srt_last_error(ctx));
    for (int c = 0; ok && c < sc->ncalls; c++) {
        const int32_t *tk[NSEQ];
        float *lg[NSEQ];
        int n[NSEQ];
        for (int b = 0; b < NSEQ; b++) {
            n[b] = sc->n[b][c];
            tk[b] = sc->toks[b] + sc->at[b][c];
            lg[b] = got[b] + (size_t)sc->at[b][c] * (size_t)vocab;
        }
        ok = srt_forward_batch(batch, tk, n, lg) == SRT_OK;
        CHECK(ok, "%s on %s: batch call %d: %s", model, bn, c, srt_last_error(ctx));
    }
    for (int b = 0; ok && b < NSEQ; b++) {
        ok = srt_session_reset(single) == SRT_OK;
        for (int c = 0; ok && c < sc->ncalls; c++)
            if (sc->n[b][c] > 0)
                ok = srt_forward(single, sc->toks[b] + sc->at[b][c], sc->n[b][c],
                                 want[b] + (size_t)sc->at[b][c] * (size_t)vocab) == SRT_OK;
        CHECK(ok, "%s on %s: sequence %d alone: %s", model, bn, b, srt_last_error(ctx));
        if (!ok) break;
        size_t cnt = (size_t)sc->total[b] * (size_t)vocab, first = cnt;
        for (size_t i = 0; i < cnt && first == cnt; i++)
            if (memcmp(&got[b][i], &want[b][i], sizeof(float)) != 0) first = i;
        /* positions as a single session reports them (a recurrent model's is always 0: whole windows) */
        CHECK(first == cnt, "%s on %s: sequence %d of the batch: row %zu differs (%.9g, alone %.9g)", model, bn, b,
              first / (size_t)vocab, first < cnt ? got[b][first] : 0.0, first < cnt ? want[b][first] : 0.0);
        CHECK(srt_session_position_of(batch, b) == srt_session_position(single),
              "%s on %s: sequence %d of the batch at position %d, alone at %d", model, bn, b,
              srt_session_position_of(batch, b), srt_session_position(single));
    }
    if (ok && failures == before)
        printf("%s on %s: batch of %d (prompts %d, %d, %d, %d; %d calls) = each sequence alone, bitwise\n", model, bn,
               NSEQ, sc->len[0], sc->len[1], sc->len[2], sc->len[3], sc->ncalls);
    for (int b = 0; b < NSEQ; b++) {
        free(got[b]);
        free(want[b]);
    }
    srt_session_destroy(batch);
    srt_session_destroy(single);
}

/* Makes sequence b's sampler (temperature 0.9, seed b + 1). */
static srt_status make_sampler(srt_context *ctx, int b, int vocab, srt_sampler **out) {
    srt_sampling cfg;
    srt_sampling_init(&cfg);
    cfg.temperature = 0.9;
    cfg.seed = (uint64_t)b + 1;
    return srt_sampler_create(ctx, &cfg, vocab, out);
}

/* Draws: each drawn token fed back, the batch's against each sequence's alone. */
static void check_draws(srt_context *ctx, const char *model, const char *bn, srt_model *m, const Schedule *sc,
                        int vocab) {
    srt_session *batch = NULL, *single = NULL;
    srt_sampler *smp[NSEQ] = {0};
    int32_t got[NSEQ][MAX_CALLS], want[MAX_CALLS], last[NSEQ] = {0}, next[NSEQ];
    int before = failures;
    bool ok = srt_session_create(m, NSEQ, &batch) == SRT_OK && srt_session_create(m, 1, &single) == SRT_OK;
    for (int b = 0; b < NSEQ && ok; b++) ok = make_sampler(ctx, b, vocab, &smp[b]) == SRT_OK;
    CHECK(ok, "%s on %s: draws: %s", model, bn, srt_last_error(ctx));
    for (int c = 0; ok && c < sc->ncalls; c++) {
        const int32_t *tk[NSEQ];
        int n[NSEQ];
        for (int b = 0; b < NSEQ; b++) {
            n[b] = sc->n[b][c];
            tk[b] = n[b] > 1 || sc->at[b][c] == 0 ? sc->toks[b] : &last[b]; /* a prompt, or the last draw */
            got[b][c] = -1;
        }
        ok = srt_forward_batch_sample(batch, tk, n, smp, next) == SRT_OK;
        for (int b = 0; ok && b < NSEQ; b++)
            if (n[b] > 0) got[b][c] = last[b] = next[b];
        CHECK(ok, "%s on %s: batch draw %d: %s", model, bn, c, srt_last_error(ctx));
    }
    for (int b = 0; ok && b < NSEQ; b++) {
        srt_sampler *alone = NULL;
        int32_t prev = 0;
        ok = make_sampler(ctx, b, vocab, &alone) == SRT_OK && srt_session_reset(single) == SRT_OK;
        int mismatch = -1;
        for (int c = 0; ok && c < sc->ncalls; c++) {
            if (sc->n[b][c] == 0) continue;
            const int32_t *tk = sc->n[b][c] > 1 || sc->at[b][c] == 0 ? sc->toks[b] : &prev;
            ok = srt_forward_sample(single, tk, sc->n[b][c], alone, &want[c]) == SRT_OK;
            prev = want[c];
            if (ok && want[c] != got[b][c] && mismatch < 0) mismatch = c;
        }
        CHECK(ok && mismatch < 0 && srt_session_position_of(batch, b) == srt_session_position(single),
              "%s on %s: sequence %d draws %s (call %d: %d, alone %d)", model, bn, b,
              ok ? "differ" : srt_last_error(ctx), mismatch, mismatch >= 0 ? got[b][mismatch] : 0,
              mismatch >= 0 ? want[mismatch] : 0);
        srt_sampler_destroy(alone);
    }
    if (ok && failures == before) printf("%s on %s: batch draws (temperature 0.9, fed back) = each sequence alone\n", model, bn);
    for (int b = 0; b < NSEQ; b++) srt_sampler_destroy(smp[b]);
    srt_session_destroy(batch);
    srt_session_destroy(single);
}

static void check_model(srt_context *ctx, const char *model, srt_backend backend) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.arch", SHORTC_SOURCE_DIR, model);
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = backend;
    srt_model *m = NULL;
    srt_model_info info;
    if (srt_model_open(ctx, path, &opt, &m) != SRT_OK || srt_model_random_weights(m, 5) != SRT_OK ||
        srt_model_get_info(m, &info) != SRT_OK) {
        CHECK(false, "%s on %s: %s", model, srt_backend_name(backend), srt_last_error(ctx));
        srt_model_close(m);
        return;
    }
    Schedule sc;
    bool ok = schedule_make(&sc, &info);
    CHECK(ok, "%s: no schedule for segment %d, %d positions", model, info.segment, info.max_positions);
    if (ok) check_logits(ctx, model, srt_backend_name(backend), m, &sc, info.vocab);
    if (ok) check_draws(ctx, model, srt_backend_name(backend), m, &sc, info.vocab);
    schedule_free(&sc);
    srt_model_close(m);
}

/* The device calls of one decode step of every sequence of a session of B (after prompts of 3 tokens): with
 * samplers or logits; graphs off, so that every launch and GEMM is counted. */
static bool step_counts(srt_context *ctx, srt_model *m, int B, bool sample, int vocab, srt_call_counts *out) {
    srt_session *s = NULL;
    const int32_t *tk[16];
    int n[16];
    float *lg[16] = {0};
    srt_sampler *smp[16] = {0};
    int32_t toks[16][3], drawn[16];
    bool ok = srt_session_create(m, B, &s) == SRT_OK;
    for (int b = 0; ok && b < B; b++) {
        for (int t = 0; t < 3; t++) toks[b][t] = (int32_t)((7 * b + 3 * t + 1) % vocab);
        tk[b] = toks[b], n[b] = 3;
        ok = (lg[b] = malloc(sizeof(float) * 3 * (size_t)vocab)) && make_sampler(ctx, b, vocab, &smp[b]) == SRT_OK;
    }
    srt_call_counts c0, c1;
    ok = ok && srt_forward_batch(s, tk, n, lg) == SRT_OK && srt_session_call_counts(s, &c0) == SRT_OK;
    for (int b = 0; b < B; b++) tk[b] = toks[b] + 2, n[b] = 1;
    ok = ok && (sample ? srt_forward_batch_sample(s, tk, n, smp, drawn) : srt_forward_batch(s, tk, n, lg)) == SRT_OK &&
         srt_session_call_counts(s, &c1) == SRT_OK;
    CHECK(ok, "step counts at B=%d: %s", B, srt_last_error(ctx));
    *out = (srt_call_counts){c1.launches - c0.launches, c1.gemms - c0.gemms, c1.graph_launches - c0.graph_launches,
                             c1.syncs - c0.syncs, c1.copies - c0.copies, c1.bytes - c0.bytes};
    for (int b = 0; b < B; b++) {
        free(lg[b]);
        srt_sampler_destroy(smp[b]);
    }
    srt_session_destroy(s);
    return ok;
}

/*
 * On sim, one decode step makes as many launches, GEMM calls and synchronisations at B = 16 as at B = 1 (logits;
 * a batched step adds one copy, its sequence table); drawing tokens, the same GEMMs and one sample launch per
 * sequence (the sample program over each row: only the token ids come back).
 */
static void check_counts(srt_context *ctx, const char *model) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.arch", SHORTC_SOURCE_DIR, model);
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_SIM;
    srt_model *m = NULL;
    srt_model_info info;
    setenv("SHORTC_NO_GRAPHS", "1", 1); /* read when the model opens */
    bool ok = srt_model_open(ctx, path, &opt, &m) == SRT_OK && srt_model_random_weights(m, 5) == SRT_OK &&
              srt_model_get_info(m, &info) == SRT_OK;
    unsetenv("SHORTC_NO_GRAPHS");
    CHECK(ok, "%s: counts: %s", model, srt_last_error(ctx));
    srt_call_counts one, two, many, two_s, many_s;
    ok = ok && step_counts(ctx, m, 1, false, info.vocab, &one) && step_counts(ctx, m, 16, false, info.vocab, &many) &&
         step_counts(ctx, m, 2, true, info.vocab, &two_s) && step_counts(ctx, m, 16, true, info.vocab, &many_s) &&
         step_counts(ctx, m, 2, false, info.vocab, &two);
    if (ok) {
        CHECK(one.launches > 0 && one.gemms > 0 && many.launches == one.launches && many.gemms == one.gemms &&
                  many.syncs == one.syncs && many.graph_launches == 0 && many.copies == one.copies + 1,
              "%s: a decode step at B=16 makes %lld launches, %lld GEMMs, %lld syncs, %lld copies; at B=1 %lld, %lld, "
              "%lld, %lld",
              model, many.launches, many.gemms, many.syncs, many.copies, one.launches, one.gemms, one.syncs, one.copies);
        /* drawing: the sample program once per row (its launch, parameters in and token out, a sync) */
        CHECK(many_s.launches == one.launches + 16 && two_s.launches == one.launches + 2 && many_s.gemms == one.gemms &&
                  many_s.syncs == one.syncs + 16 && many_s.copies == 2 + 2 * 16 && many.launches == two.launches,
              "%s: a drawing decode step at B=16 makes %lld launches, %lld GEMMs, %lld syncs, %lld copies; at B=2 %lld "
              "launches", model, many_s.launches, many_s.gemms, many_s.syncs, many_s.copies, two_s.launches);
        printf("%s on sim, one decode step (graphs off): B=1: %lld launches, %lld GEMMs, %lld syncs, %lld copies, %lld "
               "bytes; B=16: %lld, %lld, %lld, %lld, %lld; drawing at B=16: %lld, %lld, %lld, %lld, %lld\n",
               model, one.launches, one.gemms, one.syncs, one.copies, one.bytes, many.launches, many.gemms, many.syncs,
               many.copies, many.bytes, many_s.launches, many_s.gemms, many_s.syncs, many_s.copies, many_s.bytes);
    }
    srt_model_close(m);
}

/*
 * More sequences than one batched decode step runs (tests/tokenizer/tok_tiny.arch: 24 per step): 27 sequences,
 * prompts of 2 tokens, then 2 decode steps of 27 rows each (a step of 24 and one of 3), every row bitwise a
 * single session's.
 */
static void check_chunks(srt_context *ctx) {
    enum { N = 27, STEPS = 2, LEN = 2 + STEPS };
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_SIM;
    srt_model *m = NULL;
    srt_session *batch = NULL, *single = NULL;
    srt_model_info info;
    bool ok = srt_model_open(ctx, SHORTC_SOURCE_DIR "/tests/tokenizer/tok_tiny.arch", &opt, &m) == SRT_OK &&
              srt_model_random_weights(m, 9) == SRT_OK && srt_model_get_info(m, &info) == SRT_OK &&
              srt_session_create(m, N, &batch) == SRT_OK && srt_session_create(m, 1, &single) == SRT_OK;
    size_t V = ok ? (size_t)info.vocab : 1;
    int32_t toks[N][LEN];
    float *got = malloc(sizeof(float) * N * LEN * V), *want = malloc(sizeof(float) * LEN * V);
    ok = ok && got && want;
    for (int b = 0; b < N; b++)
        for (int t = 0; t < LEN; t++) toks[b][t] = (int32_t)((b * 31 + t * 7 + 3) % (int)V);
    for (int c = 0; ok && c <= STEPS; c++) { /* the prompts, then the steps */
        const int32_t *tk[N];
        int n[N];
        float *lg[N];
        for (int b = 0; b < N; b++) {
            int at = c == 0 ? 0 : 1 + c;
            tk[b] = toks[b] + at, n[b] = c == 0 ? 2 : 1;
            lg[b] = got + ((size_t)b * LEN + (size_t)at) * V;
        }
        ok = srt_forward_batch(batch, tk, n, lg) == SRT_OK;
    }
    CHECK(ok, "chunks: %s", srt_last_error(ctx));
    int differ = -1;
    for (int b = 0; ok && b < N; b++) {
        ok = srt_session_reset(single) == SRT_OK && srt_forward(single, toks[b], 2, want) == SRT_OK;
        for (int t = 2; ok && t < LEN; t++) ok = srt_forward(single, toks[b] + t, 1, want + (size_t)t * V) == SRT_OK;
        if (ok && differ < 0 && memcmp(got + (size_t)b * LEN * V, want, sizeof(float) * LEN * V) != 0) differ = b;
    }
    CHECK(ok && differ < 0, "chunks: %d sequences in steps of %d: sequence %d differs from alone (%s)", N,
          m ? m->plan.decode_batch : 0, differ, ok ? "rows" : srt_last_error(ctx));
    if (ok && differ < 0)
        printf("tok_tiny on sim: %d sequences, decode steps of %d rows and %d rows = each sequence alone, bitwise\n", N,
               m->plan.decode_batch, N - m->plan.decode_batch);
    free(got);
    free(want);
    srt_model_close(m);
}

/* With arguments, the models checked are those (paths from the source root without .arch). */
int main(int argc, char **argv) {
    static const char *const bundled[] = {
        "models/gpt2_tiny",          "models/gpt2_tiny_half",      "models/baseline_ba_tiny",
        "models/mixed_tiny",         "models/local_tiny",          "models/longformer_lm_tiny",
        "models/sparse_strided_tiny", "models/sparse_fixed_tiny",  "models/bigbird_lm_tiny",
        "models/gaussian_tiny",      "models/shortformer_tiny",    "models/txl_tiny",
        "models/txl_lrm_tiny",       "models/gpt2_recurrent_tiny", "models/adaptive/baseline_ba_adaptive_tiny",
        "models/adaptive/txl_adaptive_tiny"};
    const char *const *models = argc > 1 ? (const char *const *)argv + 1 : bundled;
    size_t nmodels = argc > 1 ? (size_t)argc - 1 : sizeof bundled / sizeof *bundled;
    srt_context *ctx = NULL;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) return 1;
    for (size_t i = 0; i < nmodels; i++) {
        check_model(ctx, models[i], SRT_BACKEND_REF);
        check_model(ctx, models[i], SRT_BACKEND_SIM);
    }
    if (argc <= 1) {
        check_chunks(ctx);
        check_counts(ctx, "models/gpt2_tiny");
        check_counts(ctx, "models/mixed_tiny"); /* causal and sparse layers */
    }
    srt_context_destroy(ctx);
    if (failures) printf("test_batch: %d check(s) failed\n", failures);
    else printf("test_batch: all checks passed\n");
    return failures ? 1 : 0;
}
