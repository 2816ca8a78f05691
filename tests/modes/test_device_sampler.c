/*
 * test_device_sampler.c — sampling on the device (srt_forward_sample, the
 * plan's "sample" program, templates/sample.cuh) against the host sampler.
 *
 *   test_device_sampler MODEL.arch
 *
 * On the simulator, for every combination of temperature (0: greedy, 0.5,
 * 1, 2), top-k (0, 1, 5, 40) and top-p (1, 0.9, 0.3) and two seeds, a
 * sequence of tokens generated with srt_forward_sample (drawn on the device)
 * equals the one generated with srt_forward_rows + srt_sampler_next (drawn
 * on the host from the copied row) from the same prompt and seed; greedy
 * picks the row's first largest logit; a step copies one token id (4 bytes)
 * to the host instead of a row; srt_forward_batch_sample over sequences of
 * different lengths draws what each draws alone; the ref backend draws the
 * same tokens as well. Errors: a sampler of another vocabulary, NULLs.
 *
 *   test_device_sampler MODEL.arch --large
 *
 * For a GPT-2-sized vocabulary (tests/modes/sample_50k.arch): device, host
 * and ref draw the same tokens for top-k 0, 40 and 20000 with top-p 1 and
 * 0.9; prints the simulator time of the device-sampled steps.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "check.h"
#include "shortrt.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { STEPS = 10, PROMPT = 5 };

/* A model on one backend with its sessions. */
typedef struct M {
    srt_model *m;       /* the model, random weights (seed 5) */
    srt_session *a, *b; /* two single-sequence sessions */
    int V;              /* vocabulary */
} M;

static int open_model(srt_context *ctx, const char *path, srt_backend be, M *out) {
    srt_options o;
    srt_options_init(&o);
    o.backend = be;
    srt_model_info mi;
    memset(out, 0, sizeof *out);
    if (srt_model_open(ctx, path, &o, &out->m) != SRT_OK || srt_model_random_weights(out->m, 5) != SRT_OK ||
        srt_model_get_info(out->m, &mi) != SRT_OK || srt_session_create(out->m, 1, &out->a) != SRT_OK ||
        srt_session_create(out->m, 1, &out->b) != SRT_OK) {
        fprintf(stderr, "test_device_sampler: %s\n", srt_last_error(ctx));
        return 0;
    }
    out->V = mi.vocab;
    return 1;
}

static void prompt_of(int32_t *p, int n, int V, int salt) {
    for (int i = 0; i < n; i++) p[i] = (int32_t)((i * 31 + 7 + salt * 13) % V);
}

/* STEPS tokens from the prompt: device = srt_forward_sample, else srt_forward_rows + srt_sampler_next. */
static srt_status generate(srt_context *ctx, srt_session *s, const srt_sampling *cfg, int V, int device, int salt,
                           int32_t *out) {
    srt_sampler *smp = NULL;
    float *row = malloc(sizeof *row * (size_t)V);
    int32_t prompt[PROMPT];
    prompt_of(prompt, PROMPT, V, salt);
    srt_status st = srt_session_reset(s);
    if (st == SRT_OK) st = srt_sampler_create(ctx, cfg, V, &smp);
    const int32_t *in = prompt;
    int n = PROMPT;
    for (int i = 0; st == SRT_OK && i < STEPS; i++) {
        if (device) st = srt_forward_sample(s, in, n, smp, &out[i]);
        else {
            st = srt_forward_rows(s, in, n, n - 1, row);
            if (st == SRT_OK) st = srt_sampler_next(smp, row, &out[i]);
        }
        in = &out[i], n = 1;
    }
    if (st != SRT_OK) fprintf(stderr, "generate: %s\n", srt_last_error(ctx));
    srt_sampler_destroy(smp);
    free(row);
    return st;
}

/* Wall-clock milliseconds (for the printed figure only). */
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int same(const int32_t *x, const int32_t *y) { return memcmp(x, y, sizeof *x * STEPS) == 0; }

/* The option values whose every combination is checked. */
typedef struct Grid {
    const double *temps;     /* temperatures */
    int ntemps;              /* count */
    const int *top_ks;       /* top-k values */
    int ntop_ks;             /* count */
    const double *top_ps;    /* top-p values */
    int ntop_ps;             /* count */
    const uint64_t *seeds;   /* sampler seeds */
    int nseeds;              /* count */
} Grid;

/* Every option combination of g: the device's tokens equal the host's, and ref's; returns the
 * milliseconds the device draws took in all. */
static double check_combinations(srt_context *ctx, M *sim, M *ref, const Grid *g) {
    int combos = 0, differ = 0;
    double device_ms = 0;
    for (int t = 0; t < g->ntemps; t++)
        for (int k = 0; k < g->ntop_ks; k++)
            for (int p = 0; p < g->ntop_ps; p++)
                for (int z = 0; z < g->nseeds; z++) {
                    srt_sampling cfg;
                    srt_sampling_init(&cfg);
                    cfg.temperature = g->temps[t], cfg.top_k = g->top_ks[k], cfg.top_p = g->top_ps[p];
                    cfg.seed = g->seeds[z];
                    int32_t dev[STEPS], host[STEPS], r[STEPS];
                    size_t before = srt_session_bytes_to_host(sim->a);
                    double t0 = now_ms();
                    CHECK(generate(ctx, sim->a, &cfg, sim->V, 1, z, dev) == SRT_OK);
                    device_ms += now_ms() - t0;
                    /* one token id per step comes back, no logits */
                    CHECK(srt_session_bytes_to_host(sim->a) - before == STEPS * sizeof(int32_t));
                    CHECK(generate(ctx, sim->b, &cfg, sim->V, 0, z, host) == SRT_OK);
                    CHECK(generate(ctx, ref->a, &cfg, ref->V, 1, z, r) == SRT_OK);
                    if (!same(dev, host) || !same(dev, r)) {
                        differ++;
                        fprintf(stderr, "temperature %g top-k %d top-p %g seed %llu: device, host and ref differ\n",
                                cfg.temperature, cfg.top_k, cfg.top_p, (unsigned long long)cfg.seed);
                    }
                    combos++;
                }
    CHECK(combos == g->ntemps * g->ntop_ks * g->ntop_ps * g->nseeds && differ == 0);
    return device_ms;
}

/* The small model's grid: 96 combinations, greedy included. */
static void check_small(srt_context *ctx, M *sim, M *ref) {
    static const double temps[] = {0, 0.5, 1, 2}, top_ps[] = {1, 0.9, 0.3};
    static const int top_ks[] = {0, 1, 5, 40};
    static const uint64_t seeds[] = {1, 12345};
    const Grid g = {temps, 4, top_ks, 4, top_ps, 3, seeds, 2};
    check_combinations(ctx, sim, ref, &g);
}

/* A GPT-2-sized vocabulary (--large): top-k with a small and a large k, top-p alone, plain temperature. */
static void check_large(srt_context *ctx, M *sim, M *ref) {
    static const double temps[] = {0.7}, top_ps[] = {1, 0.9};
    static const int top_ks[] = {0, 40, 20000};
    static const uint64_t seeds[] = {7};
    const Grid g = {temps, 1, top_ks, 3, top_ps, 2, seeds, 1};
    double ms = check_combinations(ctx, sim, ref, &g);
    printf("vocab %d: %d sampled steps on the simulator in %.0f ms (forward and draw)\n", sim->V, 6 * STEPS, ms);
}

/* Greedy is the first largest logit of the row. */
static void check_greedy_argmax(srt_context *ctx, M *sim) {
    srt_sampling cfg;
    srt_sampling_init(&cfg);
    srt_sampler *smp = NULL;
    CHECK(srt_sampler_create(ctx, &cfg, sim->V, &smp) == SRT_OK);
    float *row = malloc(sizeof *row * (size_t)sim->V);
    for (int salt = 0; salt < 4; salt++) {
        int32_t prompt[PROMPT], tok = -1;
        prompt_of(prompt, PROMPT, sim->V, salt);
        CHECK(srt_session_reset(sim->a) == SRT_OK && srt_session_reset(sim->b) == SRT_OK);
        CHECK(srt_forward_sample(sim->a, prompt, PROMPT, smp, &tok) == SRT_OK);
        CHECK(srt_forward_rows(sim->b, prompt, PROMPT, PROMPT - 1, row) == SRT_OK);
        int best = 0;
        for (int v = 1; v < sim->V; v++)
            if (row[v] > row[best]) best = v;
        CHECK(tok == best);
    }
    free(row);
    srt_sampler_destroy(smp);
}

/* A batch of prompts of different lengths draws what each draws alone. */
static void check_batch(srt_context *ctx, M *sim) {
    enum { B = 3 };
    srt_session *bs = NULL;
    CHECK(srt_session_create(sim->m, B, &bs) == SRT_OK);
    if (!bs) return;
    srt_sampling cfg;
    srt_sampling_init(&cfg);
    cfg.temperature = 0.8, cfg.top_k = 20, cfg.seed = 3;
    srt_sampler *smp[B] = {NULL}, *alone = NULL;
    int32_t prompts[B][8], drawn[B], want[B];
    const int32_t *tok[B];
    int n[B] = {2, 7, 4};
    for (int b = 0; b < B; b++) {
        prompt_of(prompts[b], n[b], sim->V, b);
        tok[b] = prompts[b];
        CHECK(srt_sampler_create(ctx, &cfg, sim->V, &smp[b]) == SRT_OK);
        CHECK(srt_sampler_create(ctx, &cfg, sim->V, &alone) == SRT_OK);
        CHECK(srt_session_reset(sim->a) == SRT_OK);
        CHECK(srt_forward_sample(sim->a, prompts[b], n[b], alone, &want[b]) == SRT_OK);
        srt_sampler_destroy(alone);
    }
    CHECK(srt_forward_batch_sample(bs, tok, n, smp, drawn) == SRT_OK);
    CHECK(memcmp(drawn, want, sizeof want) == 0);
    /* errors: a sampler of another vocabulary, NULL arguments */
    srt_sampler *other = NULL;
    CHECK(srt_sampler_create(ctx, &cfg, sim->V + 1, &other) == SRT_OK);
    int32_t t0 = 0, out = -1;
    CHECK(srt_forward_sample(sim->a, &t0, 1, other, &out) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "a sampler for");
    CHECK(srt_forward_sample(sim->a, &t0, 1, smp[0], NULL) == SRT_ERR_INVALID);
    CHECK(srt_forward_batch_sample(bs, tok, n, NULL, drawn) == SRT_ERR_INVALID);
    srt_sampler_destroy(other);
    for (int b = 0; b < B; b++) srt_sampler_destroy(smp[b]);
    srt_session_destroy(bs);
}

int main(int argc, char **argv) {
    bool large = argc == 3 && strcmp(argv[2], "--large") == 0;
    if (argc != 2 && !large) {
        fprintf(stderr, "usage: test_device_sampler MODEL.arch [--large]\n");
        return 2;
    }
    srt_context *ctx = NULL;
    M sim, ref;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK || !open_model(ctx, argv[1], SRT_BACKEND_SIM, &sim) ||
        !open_model(ctx, argv[1], SRT_BACKEND_REF, &ref))
        return 1;
    if (large) {
        check_large(ctx, &sim, &ref);
    } else {
        check_small(ctx, &sim, &ref);
        check_greedy_argmax(ctx, &sim);
        check_batch(ctx, &sim);
    }
    srt_model_close(sim.m);
    srt_model_close(ref.m);
    srt_context_destroy(ctx);
    return check_done("test_device_sampler");
}
