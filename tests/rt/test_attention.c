/* test_attention.c — srt_attention_* (docs/runtime.md, "Attention kinds as functions") on the simulator: a
 * window kind of head width 20 (the CUDA-core path) over a batch equals a double-precision reference of the
 * window rule written here (keys i - size < j <= i) at several lengths, and a given scale is used; a plan
 * compiles once per token class; bad descriptors and arguments are SRT_ERR_INVALID with the front end's
 * messages; every allocation failure on the way is an error, never a crash, and nothing leaks. The kernels the
 * cuda backend would compile (fp32 on the CUDA-core path, fp16 and bf16 on the tensor-core path) compile under
 * NVRTC for sm_80 (no GPU needed; the cuda path itself has not run on a GPU). */
#include "rt_internal.h" /* rt_attention_render: the source a plan compiles */
#include "rt_test.h"
#include "shortrt.h"

#include <math.h>

enum { B = 2, H = 2, D = 20, SIZE = 4, MAXT = 70 };

/* Fills x[n] with deterministic values in [-1, 1). */
static void fill(float *x, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

/* Max |out - reference| of window attention (size SIZE) over [B, H, T, D] at the given scale. */
static double worst_error(const float *q, const float *k, const float *v, const float *out, int T, double scale) {
    double worst = 0;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            size_t base = ((size_t)b * H + h) * T * D;
            for (int i = 0; i < T; i++) {
                double s[MAXT], mx = -INFINITY, sum = 0, acc[D] = {0};
                for (int j = i - SIZE + 1 > 0 ? i - SIZE + 1 : 0; j <= i; j++) {
                    double dot = 0;
                    for (int d = 0; d < D; d++) dot += (double)q[base + (size_t)i * D + d] * k[base + (size_t)j * D + d];
                    s[j] = dot * scale;
                    mx = fmax(mx, s[j]);
                }
                for (int j = i - SIZE + 1 > 0 ? i - SIZE + 1 : 0; j <= i; j++) {
                    double w = exp(s[j] - mx);
                    sum += w;
                    for (int d = 0; d < D; d++) acc[d] += w * v[base + (size_t)j * D + d];
                }
                for (int d = 0; d < D; d++) worst = fmax(worst, fabs(out[base + (size_t)i * D + d] - acc[d] / sum));
            }
        }
    return worst;
}

static srt_attention_param window_size[] = {{"size", SIZE}};

static srt_attention_desc window_desc(void) {
    srt_attention_desc d;
    srt_attention_desc_init(&d);
    d.kind = "window";
    d.params = window_size;
    d.nparams = 1;
    d.heads = H;
    d.head_dim = D;
    d.sim_threads = 2;
    return d;
}

static void test_values_and_classes(void) {
    Counter c = COUNTER_INIT;
    srt_context *ctx;
    CHECK(srt_context_create(&ctx, count_alloc, &c) == SRT_OK);
    srt_attention_desc d = window_desc();
    srt_attention_plan *p = NULL;
    CHECK(srt_attention_plan_create(ctx, &d, &p) == SRT_OK);
    size_t n = (size_t)B * H * MAXT * D;
    float *q = malloc(4 * n), *k = malloc(4 * n), *v = malloc(4 * n), *out = malloc(4 * n);
    static const int lengths[] = {1, 13, 64, 65};
    for (size_t t = 0; p && t < sizeof lengths / sizeof *lengths; t++) {
        int T = lengths[t];
        fill(q, n, 1 + T);
        fill(k, n, 2 + T);
        fill(v, n, 3 + T);
        CHECK(srt_attention_run(p, B, T, q, k, v, out) == SRT_OK);
        double w = worst_error(q, k, v, out, T, 1.0 / sqrt((double)D));
        if (!(w <= 1e-5)) printf("window T=%d: max |out - ref| = %g (%s)\n", T, w, srt_last_error(ctx));
        CHECK(w <= 1e-5);
        CHECK(srt_attention_plan_modules(p, NULL) == (T <= 64 ? 1 : 2)); /* classes 64 and 128 */
    }
    srt_attention_plan_destroy(p);
    d.scale = 0.25; /* a given scale, through the one-call form */
    CHECK(srt_attention(ctx, &d, B, 13, q, k, v, out) == SRT_OK);
    CHECK(worst_error(q, k, v, out, 13, 0.25) <= 1e-5);
    free(q);
    free(k);
    free(v);
    free(out);
    srt_context_destroy(ctx);
    CHECK(c.live == 0);
}

/* d fails with SRT_ERR_INVALID and a message holding want. */
static void refused(srt_context *ctx, const srt_attention_desc *d, const char *want) {
    srt_attention_plan *p = (srt_attention_plan *)1;
    CHECK(srt_attention_plan_create(ctx, d, &p) == SRT_ERR_INVALID && p == NULL);
    if (!strstr(srt_last_error(ctx), want)) printf("expected '%s' in '%s'\n", want, srt_last_error(ctx));
    CHECK(strstr(srt_last_error(ctx), want) != NULL);
}

static void test_errors(void) {
    Counter c = COUNTER_INIT;
    srt_context *ctx;
    CHECK(srt_context_create(&ctx, count_alloc, &c) == SRT_OK);
    srt_attention_desc d = window_desc();
    d.kind = "windo";
    refused(ctx, &d, "unknown attention kind 'windo'; did you mean 'window'?");
    d = window_desc();
    srt_attention_param twice[] = {{"size", 3}, {"size", 4}}, bad[] = {{"size", 0}}, frac[] = {{"size", 2.5}},
                        typo[] = {{"sise", 3}};
    d.params = twice;
    d.nparams = 2;
    refused(ctx, &d, "parameter 'size' is given twice");
    d.params = bad;
    d.nparams = 1;
    refused(ctx, &d, "attention 'window': size=0 must be a whole number in [1, 1048576]");
    d.params = frac;
    refused(ctx, &d, "size=2.5 must be a whole number");
    d.params = typo;
    refused(ctx, &d, "attention 'window' has no parameter 'sise'; did you mean 'size'?");
    d.nparams = 0;
    refused(ctx, &d, "attention 'window' needs 'size=NUM'");
    d = window_desc();
    d.kind = "relative";
    d.nparams = 0;
    refused(ctx, &d, "not a function of q, k and v");
    d = window_desc();
    d.head_dim = 0;
    refused(ctx, &d, "head_dim=0");
    d = window_desc();
    d.dtype = "fp64";
    refused(ctx, &d, "dtype 'fp64'");
    d = window_desc();
    d.backend = SRT_BACKEND_AUTO;
    refused(ctx, &d, "say sim (host pointers) or cuda (device pointers)");
    d = window_desc();
    d.scale = -1;
    refused(ctx, &d, "scale=-1");
    srt_attention_plan *p = NULL;
    d = window_desc();
    CHECK(srt_attention_plan_create(ctx, &d, &p) == SRT_OK);
    float x[H * D] = {0};
    CHECK(srt_attention_run(p, 1, 1, x, x, NULL, x) == SRT_ERR_INVALID);
    CHECK(srt_attention_run(p, 0, 1, x, x, x, x) == SRT_ERR_INVALID);
    CHECK(srt_attention_run(p, 1, 0, x, x, x, x) == SRT_ERR_INVALID);
    CHECK(srt_attention_plan_modules(p, NULL) == 0); /* nothing compiled by refused calls */
    srt_attention_plan_destroy(p);
    CHECK(srt_attention_plan_create(ctx, NULL, &p) == SRT_ERR_INVALID);
    srt_context_destroy(ctx);
    CHECK(c.live == 0);
}

/* Every allocation of a create and a run failing in turn: an error status, no leak; then success. */
static void test_allocation_failures(void) {
    srt_attention_desc d = window_desc();
    float q[2 * H * D], out[2 * H * D];
    fill(q, sizeof q / sizeof *q, 9);
    int ok = 0;
    for (long at = 0; at < 200 && !ok; at++) {
        Counter c = COUNTER_INIT;
        c.fail_at = at;
        srt_context *ctx;
        if (srt_context_create(&ctx, count_alloc, &c) != SRT_OK) continue;
        srt_attention_plan *p = NULL;
        srt_status st = srt_attention_plan_create(ctx, &d, &p);
        if (st == SRT_OK) st = srt_attention_run(p, 1, 2, q, q, q, out);
        srt_attention_plan_destroy(p);
        ok = st == SRT_OK;
        CHECK(st == SRT_OK || st == SRT_ERR_NOMEM || st == SRT_ERR_COMPILE);
        srt_context_destroy(ctx);
        CHECK(c.live == 0);
    }
    CHECK(ok);
}

/* The cuda backend's kernels of a few kinds and dtypes compile under NVRTC (sm_80). */
static void test_nvrtc_sources(void) {
    srt_context *ctx;
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);
    srt_attention_param bigbird[] = {{"block", 16}, {"seed", 1}};
    static const struct { const char *kind, *dtype; int hd; } cases[] = {
        {"window", "fp32", 20}, {"bigbird", "fp16", 64}, {"bigbird", "bf16", 64}, {"window", "fp16", 20}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        srt_attention_desc d = window_desc();
        d.kind = cases[i].kind;
        d.dtype = cases[i].dtype;
        d.head_dim = cases[i].hd;
        d.backend = SRT_BACKEND_CUDA;
        if (strcmp(d.kind, "bigbird") == 0) {
            d.params = bigbird;
            d.nparams = 2;
        }
        RtAttnKernel k;
        CHECK(rt_attention_render(ctx, &d, 128, &k) == SRT_OK);
        if (!k.source) continue;
        CHECK(strstr(k.source, k.name) != NULL);
        srt_status st = srt_nvrtc_compile(ctx, k.source, strlen(k.source), 80, NULL);
        if (st != SRT_OK) printf("%s %s: %s\n", cases[i].kind, cases[i].dtype, srt_last_error(ctx));
        CHECK(st == SRT_OK);
        rt_free(ctx, k.source);
    }
    srt_context_destroy(ctx);
}

int main(void) {
    test_values_and_classes();
    test_errors();
    test_allocation_failures();
    test_nvrtc_sources();
    return check_done("rt_attention");
}
