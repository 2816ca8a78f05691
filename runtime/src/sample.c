/*
 * sample.c — choosing the next token from a logits row (srt_sampler_* in
 * shortrt.h): greedy (temperature 0: the first largest logit), or a draw
 * from softmax(logits / temperature) restricted to the top-k tokens and then
 * to the smallest set of most likely tokens whose probability reaches top-p
 * (nucleus). Draws come from the seeded splitmix64 stream of common/rng.c,
 * so a seed gives the same tokens on every backend and machine for the same
 * logits. templates/sample.cuh is the same algorithm on the device (the
 * plan's "sample" program, run by srt_forward_sample on sim and cuda); this
 * file also gives it its parameters and keeps the host's copy of the stream
 * in step with it. With top-k only the k first tokens are selected and
 * sorted, in the same total order (descending logit, then ascending id).
 */
#include "rt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct srt_sampler {
    srt_context *ctx;     /* allocator and errors */
    srt_sampling cfg;     /* the settings */
    int vocab;            /* logits width */
    RtRng rng;            /* the seeded stream */
    int32_t *order;       /* scratch: token ids sorted by logit, descending */
    double *prob;         /* scratch: their probabilities */
};

void srt_sampling_init(srt_sampling *c) {
    memset(c, 0, sizeof *c);
    c->top_p = 1.0;
}

srt_status srt_sampler_create(srt_context *ctx, const srt_sampling *cfg, int vocab, srt_sampler **out) {
    if (!ctx) return SRT_ERR_INVALID;
    if (!cfg || !out) return rt_error(ctx, SRT_ERR_INVALID, "srt_sampler_create: NULL argument");
    if (vocab < 1) return rt_error(ctx, SRT_ERR_INVALID, "srt_sampler_create: vocabulary of %d tokens", vocab);
    if (!(cfg->temperature >= 0) || isinf(cfg->temperature) || cfg->top_k < 0 || !(cfg->top_p > 0 && cfg->top_p <= 1))
        return rt_error(ctx, SRT_ERR_INVALID,
                        "sampling: temperature %g, top-k %d, top-p %g (expected temperature >= 0, top-k >= 0, "
                        "0 < top-p <= 1)", cfg->temperature, cfg->top_k, cfg->top_p);
    srt_sampler *s = rt_alloc(ctx, sizeof *s);
    if (s) {
        s->order = rt_alloc(ctx, sizeof *s->order * (size_t)vocab);
        s->prob = rt_alloc(ctx, sizeof *s->prob * (size_t)vocab);
    }
    if (!s || !s->order || !s->prob) {
        if (s) rt_free(ctx, s->order), rt_free(ctx, s->prob);
        rt_free(ctx, s);
        return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    }
    s->ctx = ctx, s->cfg = *cfg, s->vocab = vocab, s->rng.s = cfg->seed;
    *out = s;
    return SRT_OK;
}

void srt_sampler_destroy(srt_sampler *s) {
    if (!s) return;
    rt_free(s->ctx, s->order);
    rt_free(s->ctx, s->prob);
    rt_free(s->ctx, s);
}

/* The row by_logit compares through (qsort has no context argument; one per thread). */
static _Thread_local const float *sort_row;

/* Descending logit, then ascending id (a total order: the result does not depend on qsort). */
static int by_logit(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (sort_row[x] != sort_row[y]) return sort_row[x] > sort_row[y] ? -1 : 1;
    return (x > y) - (x < y);
}

static void swap_ids(int32_t *a, int32_t *b) {
    int32_t t = *a;
    *a = *b, *b = t;
}

/*
 * Moves the first k tokens of the by_logit order into order[0, k), in any
 * order (k < n): quickselect with the middle element as pivot (the order is
 * total, so a two-way partition is exact); after 64 rounds the range left is
 * sorted instead, which bounds the worst case.
 */
static void select_first(int32_t *order, int n, int k) {
    int lo = 0, hi = n; /* the k-th boundary lies in [lo, hi) */
    for (int round = 0; hi - lo > 1; round++) {
        if (round == 64) {
            qsort(order + lo, (size_t)(hi - lo), sizeof *order, by_logit);
            return;
        }
        swap_ids(&order[lo + (hi - lo) / 2], &order[hi - 1]);
        int32_t pivot = order[hi - 1];
        int store = lo;
        for (int i = lo; i < hi - 1; i++)
            if (by_logit(&order[i], &pivot) < 0) swap_ids(&order[i], &order[store++]);
        swap_ids(&order[store], &order[hi - 1]);
        if (store + 1 == k) return; /* order[0, k) holds the k first */
        if (store + 1 > k) hi = store;
        else lo = store + 1;
    }
}

/* The first largest logit. */
static int32_t argmax(const float *row, int n) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++)
        if (row[i] > row[best]) best = i;
    return best;
}

/* Greedy settings draw nothing from the stream. */
static bool is_greedy(const srt_sampler *s) { return s->cfg.temperature == 0 || s->cfg.top_k == 1; }

void rt_sampler_params(const srt_sampler *s, RtSampleParams *p) {
    *p = (RtSampleParams){.state = s->rng.s, .temperature = s->cfg.temperature, .top_p = s->cfg.top_p,
                          .top_k = s->cfg.top_k, .token = -1};
}

void rt_sampler_drew(srt_sampler *s) {
    if (!is_greedy(s)) (void)rt_splitmix64(&s->rng); /* the one uniform the kernel drew */
}

int rt_sampler_vocab(const srt_sampler *s) { return s->vocab; }

srt_status rt_forward_sample_on_host(srt_session *ss, const int32_t *tokens, int ntokens, srt_sampler *s,
                                     int32_t *token) {
    srt_context *ctx = ss->m->ctx;
    float *row = rt_alloc(ctx, sizeof *row * (size_t)s->vocab);
    if (!row) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    srt_status st = ss->m->ops->forward(ss, tokens, ntokens, ntokens - 1, row);
    if (st == SRT_OK) st = srt_sampler_next(s, row, token);
    rt_free(ctx, row);
    return st;
}

srt_status rt_nonfinite_logit(srt_context *ctx, int i) {
    return rt_error(ctx, SRT_ERR_INVALID, "no token can be drawn: logit %d is not finite (NaN or infinite)", i);
}

srt_status srt_sampler_next(srt_sampler *s, const float *logits, int32_t *token) {
    if (!s) return SRT_ERR_INVALID;
    if (!logits || !token) return rt_error(s->ctx, SRT_ERR_INVALID, "srt_sampler_next: NULL argument");
    for (int i = 0; i < s->vocab; i++)
        if (!isfinite(logits[i])) return rt_nonfinite_logit(s->ctx, i);
    if (is_greedy(s)) {
        *token = argmax(logits, s->vocab);
        return SRT_OK;
    }
    for (int32_t i = 0; i < s->vocab; i++) s->order[i] = i;
    sort_row = logits;
    int k = s->cfg.top_k > 0 && s->cfg.top_k < s->vocab ? s->cfg.top_k : s->vocab;
    if (k < s->vocab) select_first(s->order, s->vocab, k); /* only the top-k are sorted, as on the device */
    qsort(s->order, (size_t)k, sizeof *s->order, by_logit);
    double top = logits[s->order[0]], sum = 0;
    for (int i = 0; i < k; i++) sum += s->prob[i] = exp(((double)logits[s->order[i]] - top) / s->cfg.temperature);
    int keep = 0;
    double mass = 0;
    while (keep < k && (keep == 0 || mass < s->cfg.top_p * sum)) mass += s->prob[keep++]; /* nucleus */
    double u = rt_rng_uniform(&s->rng) * mass, acc = 0;
    int pick = keep - 1;
    for (int i = 0; i < keep; i++)
        if ((acc += s->prob[i]) > u) {
            pick = i;
            break;
        }
    *token = s->order[pick];
    return SRT_OK;
}
