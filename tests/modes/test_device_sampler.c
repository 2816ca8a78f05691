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
 */
#include "check.h"
#include "shortrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int same(const int32_t *x, const int32_t *y) { return memcmp(x, y, sizeof *x * STEPS) == 0; }

/* Every option combination: the device's tokens equal the host's, and ref's. */
static void check_combinations(srt_context *ctx, M *sim, M *ref) {
    static const double temps[] = {0, 0.5, 1, 2}, top_ps[] = {1, 0.9, 0.3};
    static const int top_ks[] = {0, 1, 5, 40};
    static const uint64_t seeds[] = {1, 12345};
    int combos = 0, differ = 0;
    for (size_t t = 0; t < sizeof temps / sizeof *temps; t++)
        for (size_t k = 0; k < sizeof top_ks / sizeof *top_ks; k++)
            for (size_t p = 0; p < sizeof top_ps / sizeof *top_ps; p++)
                for (size_t z = 0; z < sizeof seeds / sizeof *seeds; z++) {
                    srt_sampling cfg;
                    srt_sampling_init(&cfg);
                    cfg.temperature = temps[t], cfg.top_k = top_ks[k], cfg.top_p = top_ps[p], cfg.seed = seeds[z];
                    int32_t dev[STEPS], host[STEPS], r[STEPS];
                    size_t before = srt_session_bytes_to_host(sim->a);
                    CHECK(generate(ctx, sim->a, &cfg, sim->V, 1, (int)z, dev) == SRT_OK);
                    /* one token id per step comes back, no logits */
                    CHECK(srt_session_bytes_to_host(sim->a) - before == STEPS * sizeof(int32_t));
                    CHECK(generate(ctx, sim->b, &cfg, sim->V, 0, (int)z, host) == SRT_OK);
                    CHECK(generate(ctx, ref->a, &cfg, ref->V, 1, (int)z, r) == SRT_OK);
                    if (!same(dev, host) || !same(dev, r)) {
                        differ++;
                        fprintf(stderr, "temperature %g top-k %d top-p %g seed %llu: device, host and ref differ\n",
                                cfg.temperature, cfg.top_k, cfg.top_p, (unsigned long long)cfg.seed);
                    }
                    combos++;
                }
    CHECK(combos == 96 && differ == 0);
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
    if (argc != 2) {
        fprintf(stderr, "usage: test_device_sampler MODEL.arch\n");
        return 2;
    }
    srt_context *ctx = NULL;
    M sim, ref;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK || !open_model(ctx, argv[1], SRT_BACKEND_SIM, &sim) ||
        !open_model(ctx, argv[1], SRT_BACKEND_REF, &ref))
        return 1;
    check_combinations(ctx, &sim, &ref);
    check_greedy_argmax(ctx, &sim);
    check_batch(ctx, &sim);
    srt_model_close(sim.m);
    srt_model_close(ref.m);
    srt_context_destroy(ctx);
    return check_done("test_device_sampler");
}
