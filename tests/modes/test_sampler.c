/*
 * test_sampler.c — srt_sampler_* (runtime/src/sample.c) on fixed logits:
 * greedy at temperature 0 and with top-k 1 (the first of equal logits); the
 * frequencies of 60000 draws match softmax(logits / T) restricted to the
 * top-k tokens and to the nucleus, both computed here from their
 * definitions, within 0.01; no token outside them is ever drawn; a seed
 * repeats its draws and another seed does not; top-k on a 2000-token row
 * with ties draws only (and, for k = 5, all of) the k first tokens; bad
 * settings and non-finite logits are refused.
 */
#include "check.h"
#include "shortrt.h"

#include <math.h>

#define V 6
#define DRAWS 60000

static const float logits[V] = {2.0f, 1.0f, 0.5f, 0.5f, -1.0f, 3.0f};
/* logits' ids by descending logit, ties by id */
static const int order[V] = {5, 0, 1, 2, 3, 4};

/* Expected probabilities: softmax(logits / t) over the k best, then the smallest prefix of them whose
 * mass reaches p, renormalised. */
static void expected(double t, int k, double p, double *want) {
    double e[V] = {0}, sum = 0, mass = 0;
    for (int i = 0; i < k; i++) sum += e[order[i]] = exp(logits[order[i]] / t);
    for (int i = 0; i < V; i++) want[i] = 0;
    for (int i = 0; i < k && (i == 0 || mass < p * sum); i++) mass += want[order[i]] = e[order[i]];
    for (int i = 0; i < V; i++) want[i] /= mass;
}

static srt_sampler *make(srt_context *ctx, double t, int k, double p, uint64_t seed) {
    srt_sampling c;
    srt_sampling_init(&c);
    c.temperature = t, c.top_k = k, c.top_p = p, c.seed = seed;
    srt_sampler *s = NULL;
    CHECK(srt_sampler_create(ctx, &c, V, &s) == SRT_OK);
    return s;
}

static void check_distribution(srt_context *ctx, double t, int k, double p) {
    double want[V], got[V] = {0};
    expected(t, k, p, want);
    srt_sampler *s = make(ctx, t, k, p, 11);
    for (int i = 0; s && i < DRAWS; i++) {
        int32_t tok = -1;
        CHECK(srt_sampler_next(s, logits, &tok) == SRT_OK);
        if (tok >= 0 && tok < V) got[tok] += 1.0 / DRAWS;
    }
    for (int i = 0; i < V; i++) {
        if (fabs(got[i] - want[i]) > 0.01 || (want[i] == 0 && got[i] != 0))
            fprintf(stderr, "t %g k %d p %g: token %d drawn %.4f, expected %.4f\n", t, k, p, i, got[i], want[i]);
        CHECK(fabs(got[i] - want[i]) <= 0.01 && (want[i] != 0 || got[i] == 0));
    }
    srt_sampler_destroy(s);
}

/* 50 draws of seed into out. */
static void draws(srt_context *ctx, uint64_t seed, int32_t *out) {
    srt_sampler *s = make(ctx, 1.0, 0, 1.0, seed);
    for (int i = 0; s && i < 50; i++) CHECK(srt_sampler_next(s, logits, &out[i]) == SRT_OK);
    srt_sampler_destroy(s);
}

/*
 * Top-k on a 2000-token row with many equal logits (the host selects the k
 * first before sorting them): with a high temperature every draw is one of
 * the k first by (logit descending, id ascending), and for k = 5 each of
 * them is drawn.
 */
static void check_topk_large(srt_context *ctx) {
    enum { N = 2000 };
    static float row[N];
    for (int i = 0; i < N; i++) row[i] = (float)((i * 7919) % 97 / 8); /* 13 distinct values, ties */
    static const int ks[] = {1, 5, 150, 1999};
    for (size_t j = 0; j < sizeof ks / sizeof *ks; j++) {
        int k = ks[j], drawn[N] = {0};
        srt_sampling c;
        srt_sampling_init(&c);
        c.temperature = 1000, c.top_k = k, c.seed = 5;
        srt_sampler *s = NULL;
        CHECK(srt_sampler_create(ctx, &c, N, &s) == SRT_OK);
        for (int i = 0; s && i < 3000; i++) {
            int32_t tok = -1;
            CHECK(srt_sampler_next(s, row, &tok) == SRT_OK && tok >= 0 && tok < N);
            if (tok < 0 || tok >= N) break;
            int before = 0; /* tokens ahead of tok in the order: it is in the top k iff fewer than k */
            for (int v = 0; v < N; v++) before += row[v] > row[tok] || (row[v] == row[tok] && v < tok);
            CHECK(before < k);
            drawn[before] = 1;
        }
        for (int r = 0; k == 5 && r < k; r++) CHECK(drawn[r]);
        srt_sampler_destroy(s);
    }
}

int main(void) {
    srt_context *ctx = NULL;
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);
    int32_t tok = -1;
    srt_sampler *s = make(ctx, 0, 0, 1, 1);
    CHECK(srt_sampler_next(s, logits, &tok) == SRT_OK && tok == 5);
    const float flat[V] = {1, 1, 1, 1, 1, 1};
    CHECK(srt_sampler_next(s, flat, &tok) == SRT_OK && tok == 0);
    srt_sampler_destroy(s);
    s = make(ctx, 2.0, 1, 1, 1);
    CHECK(srt_sampler_next(s, logits, &tok) == SRT_OK && tok == 5);
    srt_sampler_destroy(s);

    check_distribution(ctx, 1.0, V, 1.0);
    check_distribution(ctx, 2.0, V, 1.0);
    check_distribution(ctx, 0.5, 2, 1.0);
    check_distribution(ctx, 1.0, V, 0.8);
    check_distribution(ctx, 1.5, 4, 0.9);
    check_topk_large(ctx);

    int32_t a[50], b[50], c[50];
    draws(ctx, 3, a);
    draws(ctx, 3, b);
    draws(ctx, 4, c);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(memcmp(a, c, sizeof a) != 0);

    srt_sampling bad;
    srt_sampling_init(&bad);
    bad.top_p = 0;
    CHECK(srt_sampler_create(ctx, &bad, V, &s) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "0 < top-p <= 1");
    bad.top_p = 1, bad.temperature = -1;
    CHECK(srt_sampler_create(ctx, &bad, V, &s) == SRT_ERR_INVALID);
    s = make(ctx, 1, 0, 1, 1);
    float nan_row[V] = {0, 0, NAN, 0, 0, 0};
    CHECK(srt_sampler_next(s, nan_row, &tok) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "logit 2 is not finite");
    srt_sampler_destroy(s);
    srt_context_destroy(ctx);
    return check_done("test_sampler");
}
