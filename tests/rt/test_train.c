/*
 * The trainer's C API (srt_trainer_*, docs/training.md) on gpt2_tiny, reference backend: options defaults
 * and refusals, the learning-rate schedules, a refused step leaving the weights as they were, a step
 * changing exactly the trainable weights and what the model's forwards compute, a saved file loading back
 * to the same logits, and every allocation through the host allocator coming back. The numbers themselves
 * are checked against PyTorch by tests/train/torch_check.py.
 */
#include "rt_test.h"
#include "shortrt.h"

#include <math.h>
#include <stdbool.h>

static srt_context *ctx;
static const int32_t toks[24] = {5, 17, 200, 3, 99, 14, 250, 7, 64, 128, 1, 0, 33, 45, 12, 9, 180, 77, 2, 140, 66, 91, 8, 230};

/* gpt2_tiny's logits of toks[0..12) with m's current weights (malloc'd), or NULL. */
static float *logits_of(srt_model *m) {
    srt_session *s = NULL;
    if (srt_session_create(m, 1, &s) != SRT_OK) return NULL;
    float *l = malloc(sizeof *l * 12 * 256);
    if (srt_forward(s, toks, 12, l) != SRT_OK) {
        free(l);
        l = NULL;
    }
    srt_session_destroy(s);
    return l;
}

static bool same(const float *a, const float *b, size_t n) { return a && b && memcmp(a, b, sizeof *a * n) == 0; }

static void check_schedules(void) {
    srt_train_options o;
    srt_train_options_default(&o);
    CHECK(o.optimizer == SRT_OPT_ADAMW && o.lr == 1e-3 && o.beta1 == 0.9 && o.beta2 == 0.999 && o.eps == 1e-8 &&
          o.weight_decay == 0 && o.clip == 0 && o.warmup == 0 && o.schedule == SRT_SCHEDULE_CONSTANT);
    o.lr = 1.0;
    o.warmup = 4;
    o.steps = 14;
    CHECK(srt_train_lr(&o, 0) == 0.25 && srt_train_lr(&o, 3) == 1.0 && srt_train_lr(&o, 9) == 1.0);
    o.schedule = SRT_SCHEDULE_COSINE;
    CHECK(srt_train_lr(&o, 4) == 1.0 && fabs(srt_train_lr(&o, 9) - 0.5) < 1e-15 && srt_train_lr(&o, 14) < 1e-15);
    o.schedule = SRT_SCHEDULE_INVERSE_SQRT;
    CHECK(fabs(srt_train_lr(&o, 15) - 0.5) < 1e-15 && srt_train_lr(&o, 1) == 0.5);
}

static void check_refusals(srt_model *m) {
    srt_train_options o;
    srt_train_options_default(&o);
    srt_trainer *t = (srt_trainer *)1;
    CHECK(srt_trainer_create(m, NULL, &t) == SRT_ERR_INVALID && t == NULL);
    o.lr = -1;
    CHECK(srt_trainer_create(m, &o, &t) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "learning rate -1");
    srt_train_options_default(&o);
    o.beta2 = 1.0;
    CHECK(srt_trainer_create(m, &o, &t) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "betas");
    srt_train_options_default(&o);
    o.nfreeze = 2;
    CHECK(srt_trainer_create(m, &o, &t) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "2 freeze patterns but no array");
    srt_trainer_free(NULL);
    CHECK(srt_trainer_step(NULL, toks, 1, 12, NULL) == SRT_ERR_INVALID);
    CHECK(srt_trainer_weight_count(NULL) == 0);
}

/* A refused step leaves the weights; a step changes the trainable ones only; save and load back. */
static void check_steps(srt_model *m, const char *dir) {
    const char *freeze[] = {"h.1.*", "ln_f.*"};
    srt_train_options o;
    srt_train_options_default(&o);
    o.lr = 1e-2;
    o.freeze = freeze;
    o.nfreeze = 2;
    srt_trainer *t = NULL;
    CHECK(srt_trainer_create(m, &o, &t) == SRT_OK && t);
    if (!t) return;
    int n = srt_trainer_weight_count(t);
    CHECK(n == 28);
    const char *name = NULL;
    size_t count = 0;
    CHECK(srt_trainer_weight(t, 0, &name, &count) == SRT_OK && name && count > 0);
    CHECK(srt_trainer_weight(t, n, &name, &count) == SRT_ERR_INVALID);
    float *before = logits_of(m);
    int32_t bad[12];
    memcpy(bad, toks, sizeof bad);
    bad[7] = 256;
    srt_train_stats s;
    CHECK(srt_trainer_step(t, bad, 1, 12, &s) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "token 256 at index 7 is outside the vocabulary [0, 256)");
    CHECK(srt_trainer_step(t, toks, 1, 1, &s) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "sequence length 1: must be 2 to 128");
    CHECK(srt_trainer_step(t, toks, 0, 12, &s) == SRT_ERR_INVALID);
    float *still = logits_of(m);
    CHECK(same(before, still, 12 * 256)); /* nothing moved */

    float **g = calloc((size_t)n, sizeof *g);
    for (int i = 0; i < n; i++) {
        srt_trainer_weight(t, i, NULL, &count);
        g[i] = calloc(count, sizeof **g);
    }
    double loss = 0;
    CHECK(srt_trainer_grad(t, toks, 2, 12, g, &loss) == SRT_OK && loss > 4 && loss < 8);
    CHECK(srt_trainer_step(t, toks, 2, 12, &s) == SRT_OK);
    CHECK(s.step == 1 && fabs(s.loss - loss) < 1e-12 && s.lr == 1e-2 && s.grad_norm > 0 && s.tokens == 24);
    float *after = logits_of(m);
    CHECK(after && !same(before, after, 12 * 256)); /* the forwards read the new weights */

    char path[400];
    snprintf(path, sizeof path, "%s/trained.safetensors", dir);
    CHECK(srt_trainer_save(t, path) == SRT_OK);
    CHECK(srt_model_random_weights(m, 9) == SRT_OK); /* something else, then the saved file back */
    CHECK(srt_model_load_weights(m, path) == SRT_OK);
    float *loaded = logits_of(m);
    CHECK(same(after, loaded, 12 * 256));
    for (int i = 0; i < n; i++) free(g[i]);
    free(g);
    free(before);
    free(still);
    free(after);
    free(loaded);
    srt_trainer_free(t);
}

int main(void) {
    char dir[256];
    if (!rt_test_mkdtemp(dir, sizeof dir, "train")) return check_done("test_train");
    CHECK(chdir(SHORTC_SOURCE_DIR) == 0);
    Counter cnt = COUNTER_INIT;
    CHECK(srt_context_create(&ctx, count_alloc, &cnt) == SRT_OK);
    check_schedules();
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_REF;
    srt_model *m = NULL;
    CHECK(srt_model_open(ctx, "models/gpt2_tiny.arch", &opt, &m) == SRT_OK);
    srt_train_options o;
    srt_train_options_default(&o);
    srt_trainer *t = NULL;
    CHECK(srt_trainer_create(m, &o, &t) == SRT_ERR_INVALID); /* no weights yet */
    CHECK_HAS(srt_last_error(ctx), "load or draw the weights first");
    CHECK(srt_model_random_weights(m, 4) == SRT_OK);
    check_refusals(m);
    check_steps(m, dir);
    srt_model_close(m);

    opt.backend = SRT_BACKEND_SIM; /* the other backends: refused with a clear line */
    if (srt_model_open(ctx, "models/gpt2_tiny.arch", &opt, &m) == SRT_OK) {
        CHECK(srt_model_random_weights(m, 4) == SRT_OK);
        CHECK(srt_trainer_create(m, &o, &t) == SRT_ERR_UNSUPPORTED && t == NULL);
        CHECK_HAS(srt_last_error(ctx), "training runs on the reference backend");
        srt_model_close(m);
    }
    srt_context_destroy(ctx);
    CHECK(cnt.live == 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return check_done("test_train");
}
