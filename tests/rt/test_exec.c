/*
 * The plan executor end to end on the fake driver (fake_cuda.c, loaded as
 * libcuda/libcublas): the toy plan's kernel is compiled by NVRTC (through
 * the cache), its launch arguments and GEMM parameters must arrive exactly,
 * logits must match a host computation, state persists across forwards and
 * is cleared by reset, errors name the failing step, and every host and
 * device allocation is released — also when the host allocator fails at any
 * point.
 */
#define _GNU_SOURCE
#include "rt_test.h"
#include "rt_internal.h"
#include "toy_plan.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static const char *toy_kernel =
    "extern \"C\" __global__ void toy_embed(const int *tok, const float *wte, float *x, int T, float scale, float *counter) {\n"
    "  int t = blockIdx.x, d = threadIdx.x;\n"
    "  if (t < T) x[t * 4 + d] = wte[tok[t] * 4 + d] * scale + *counter;\n"
    "}\n";

static char dir[256];
static long (*fake_outstanding)(void);
static void (*fake_fail_launch)(int);
static int (*fake_last_grid)(void);
static int (*fake_lt_matmuls)(void);
static int (*fake_lt_heuristics)(void);
static void (*fake_capture_mode)(int);
static int (*fake_captures)(void);

static void write_cu(const char *path, const char *plan, const char *kernel) {
    char *buf = malloc(strlen(plan) + strlen(kernel) + 128);
    sprintf(buf, "// toy\n/* SHORTC-PLAN-BEGIN\n%sSHORTC-PLAN-END */\n%s", plan, kernel);
    rt_test_write(path, buf, strlen(buf));
    free(buf);
}

static void expected(const float *wte, const int32_t *tok, int T, float counter, float *out) {
    for (int t = 0; t < T; t++)
        for (int v = 0; v < 8; v++) {
            double acc = 0;
            for (int d = 0; d < 4; d++) acc += (double)wte[v * 4 + d] * (wte[tok[t] * 4 + d] * 0.5f + counter);
            out[t * 8 + v] = (float)acc;
        }
}

static int close_to(const float *a, const float *b, int n) {
    for (int i = 0; i < n; i++)
        if (fabsf(a[i] - b[i]) > 1e-6f + 1e-5f * fabsf(b[i])) return 0;
    return 1;
}

/* One whole life cycle; returns the first failing status. */
static srt_status cycle(srt_context *ctx, const char *cu) {
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_CUDA;
    srt_model *m = NULL;
    srt_session *s = NULL;
    srt_status st = srt_model_open(ctx, cu, &opt, &m);
    if (st == SRT_OK) st = srt_model_random_weights(m, 3);
    if (st == SRT_OK) st = srt_session_create(m, 1, &s);
    int32_t tok[2] = {3, 4};
    float logits[16];
    if (st == SRT_OK) st = srt_forward(s, tok, 2, logits);
    if (st == SRT_OK) st = srt_session_reset(s);
    if (st == SRT_OK && (st = srt_session_create(m, 1, &s)) == SRT_OK) st = srt_forward(s, tok, 1, logits);
    /* a session of 3 sequences: one call runs two of them */
    const int32_t *toks[3] = {tok, NULL, tok + 1};
    int lens[3] = {2, 0, 1};
    float l2[16], *outs[3] = {logits, NULL, l2};
    if (st == SRT_OK && (st = srt_session_create(m, 3, &s)) == SRT_OK) st = srt_forward_batch(s, toks, lens, outs);
    srt_model_close(m); /* closes the three sessions */
    return st;
}

int main(void) {
    if (!rt_test_mkdtemp(dir, sizeof dir, "exec")) return check_done("test_exec");
    setenv("SHORTC_LIBCUDA", FAKE_CUDA_LIB, 1);
    setenv("SHORTC_LIBCUBLAS", FAKE_CUDA_LIB, 1);
    setenv("SHORTC_LIBCUBLASLT", FAKE_CUDA_LIB, 1);
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("SHORTC_CACHE", cache, 1);
    void *fake = dlopen(FAKE_CUDA_LIB, RTLD_NOW);
    CHECK(fake != NULL);
    if (!fake) return check_done("test_exec");
    *(void **)&fake_outstanding = dlsym(fake, "fake_outstanding");
    *(void **)&fake_fail_launch = dlsym(fake, "fake_fail_launch");
    *(void **)&fake_last_grid = dlsym(fake, "fake_last_grid");
    *(void **)&fake_lt_matmuls = dlsym(fake, "fake_lt_matmuls");
    *(void **)&fake_lt_heuristics = dlsym(fake, "fake_lt_heuristics");
    *(void **)&fake_capture_mode = dlsym(fake, "fake_capture_mode");
    *(void **)&fake_captures = dlsym(fake, "fake_captures");

    char cu[300];
    snprintf(cu, sizeof cu, "%s/toy.cu", dir);
    write_cu(cu, TOY_PLAN_JSON, toy_kernel);

    Counter cnt = COUNTER_INIT;
    srt_context *ctx;
    CHECK(srt_context_create(&ctx, count_alloc, &cnt) == SRT_OK);
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_CUDA;
    srt_model *m = NULL;
    srt_status st = srt_model_open(ctx, cu, &opt, &m);
    CHECK(st == SRT_OK);
    if (st != SRT_OK) {
        fprintf(stderr, "%s\n", srt_last_error(ctx));
        return check_done("test_exec");
    }
    srt_model_info info;
    CHECK(srt_model_get_info(m, &info) == SRT_OK);
    CHECK(info.backend == SRT_BACKEND_CUDA && strcmp(info.name, "toy") == 0 && info.vocab == 8 && info.segment == 4);
    CHECK(info.nkernels == 1 && info.nlaunches == 1 && info.ngemms == 1 && !info.cache_hit);
    CHECK(info.weight_bytes == 1024 && info.activation_bytes == 512 && info.state_bytes == 64);
    CHECK(strstr(srt_model_plan_json(m), "\"toy_embed\"") != NULL);

    srt_session *s;
    CHECK(srt_session_create(m, 0, &s) == SRT_ERR_INVALID);
    CHECK(srt_session_create(m, 257, &s) == SRT_ERR_INVALID);
    CHECK(srt_session_create(m, 1, &s) == SRT_OK);
    CHECK(srt_session_state_bytes(s) == 64);
    int32_t tok[3] = {1, 5, 2};
    float logits[32], want[32];
    CHECK(srt_forward(s, tok, 3, logits) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "has no weights");

    CHECK(srt_model_random_weights(m, 11) == SRT_OK);
    float wte[32];
    int64_t wshape[2] = {8, 4};
    rt_random_tensor(11, "wte.weight", 2, wshape, wte, 32);
    float wte0[32]; /* the seed-11 table (wte is overwritten below) */
    memcpy(wte0, wte, sizeof wte0);
    CHECK(m->graphs && fake_captures() == 0);
    CHECK(srt_forward(s, tok, 3, logits) == SRT_OK);
    expected(wte, tok, 3, 0.0f, want);
    CHECK(close_to(logits, want, 24));
    CHECK(fake_last_grid() == 3);
    /* the counter in persistent state advances ... (a second call with T=3 tries to capture a graph: the fake
     * refuses cuStreamBeginCapture, so the steps run one by one and the session captures no more) */
    CHECK(srt_forward(s, tok, 3, logits) == SRT_OK);
    expected(wte, tok, 3, 1.0f, want);
    CHECK(close_to(logits, want, 24));
    CHECK(fake_captures() == 1);
    CHECK_HAS(s->graph_note, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
    /* ... until reset */
    CHECK(srt_session_reset(s) == SRT_OK);
    CHECK(srt_forward(s, tok + 1, 2, logits) == SRT_OK);
    expected(wte, tok + 1, 2, 0.0f, want);
    CHECK(close_to(logits, want, 16));
    CHECK(fake_last_grid() == 2);
    CHECK(srt_session_reset(s) == SRT_OK && srt_forward(s, tok + 1, 2, logits) == SRT_OK && close_to(logits, want, 16));
    CHECK(fake_captures() == 1);

    /* a capture that starts but whose launches are refused: the failed step's error is the note, nothing
     * ran in the capture, and the steps run one by one */
    fake_capture_mode(1);
    srt_session *s2 = NULL;
    CHECK(srt_session_create(m, 1, &s2) == SRT_OK);
    for (int i = 0; s2 && i < 3; i++) {
        CHECK(srt_forward(s2, tok + 1, 2, logits) == SRT_OK);
        expected(wte, tok + 1, 2, 0.0f, want);
        CHECK(close_to(logits, want, 16));
        CHECK(srt_session_reset(s2) == SRT_OK);
    }
    CHECK(fake_captures() == 2);
    if (s2) CHECK_HAS(s2->graph_note, "capturing program 'forward'");
    if (s2) CHECK_HAS(s2->graph_note, "cuLaunchKernel");
    srt_session_destroy(s2);
    fake_capture_mode(0);

    /* weights from a file replace the random ones */
    char st_path[300];
    snprintf(st_path, sizeof st_path, "%s/toy.safetensors", dir);
    {
        const char *hdr = "{\"wte.weight\": {\"dtype\": \"F32\", \"shape\": [8, 4], \"data_offsets\": [0, 128]},"
                          " \"h.0.mlp.c_fc.weight\": {\"dtype\": \"F32\", \"shape\": [6, 4], \"data_offsets\": [128, 224]},"
                          " \"ln_f.weight\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [224, 240]}}";
        size_t h = strlen(hdr);
        unsigned char *b = calloc(1, 8 + h + 240);
        b[0] = (unsigned char)h;
        b[1] = (unsigned char)(h >> 8);
        memcpy(b + 8, hdr, h);
        for (int i = 0; i < 32; i++) wte[i] = (float)(i % 5) - 2.0f;
        memcpy(b + 8 + h, wte, 128);
        rt_test_write(st_path, b, 8 + h + 240);
        free(b);
    }
    CHECK(srt_model_load_weights(m, st_path) == SRT_OK);
    CHECK(srt_session_reset(s) == SRT_OK);
    CHECK(srt_forward(s, tok, 3, logits) == SRT_OK);
    expected(wte, tok, 3, 0.0f, want);
    CHECK(close_to(logits, want, 24));
    /* a failed load keeps the previous weights */
    CHECK(srt_model_load_weights(m, "/nonexistent.safetensors") == SRT_ERR_IO);
    CHECK(srt_session_reset(s) == SRT_OK);
    CHECK(srt_forward(s, tok, 3, logits) == SRT_OK);
    CHECK(close_to(logits, want, 24));

    /* argument errors */
    int32_t badtok[2] = {1, 8};
    CHECK(srt_forward(s, badtok, 2, logits) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "token 8 (index 1 of this call) is outside the vocabulary [0, 8)");
    badtok[1] = -1;
    CHECK(srt_forward(s, badtok, 2, logits) == SRT_ERR_INVALID);
    CHECK(srt_forward(s, tok, 0, logits) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "model 'toy' takes 1 to 4 per forward");
    int32_t five[5] = {0};
    CHECK(srt_forward(s, five, 5, logits) == SRT_ERR_INVALID);
    CHECK(srt_forward(s, NULL, 1, logits) == SRT_ERR_INVALID);

    /* a failing launch names the step, kernel and .arch line */
    fake_fail_launch(0);
    CHECK(srt_forward(s, tok, 3, logits) == SRT_ERR_DRIVER);
    CHECK_HAS(srt_last_error(ctx), "step 0 of 2 (launch toy_embed, toy.arch line 3)");
    CHECK_HAS(srt_last_error(ctx), "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");

    /* second open: kernels from the cache */
    srt_model *m2;
    CHECK(srt_model_open(ctx, cu, &opt, &m2) == SRT_OK);
    CHECK(srt_model_get_info(m2, &info) == SRT_OK && info.cache_hit && info.compile_ms == 0);
    srt_model_close(m2);
    srt_model_close(m); /* closes s too */
    CHECK(fake_outstanding() == 0);
    CHECK(cnt.live == 1);

    /* a GEMM whose C overruns its buffer is caught before the call */
    char *p2 = rt_test_replace(TOY_PLAN_JSON, "\"ldc\": 8", "\"ldc\": 64");
    write_cu(cu, p2, toy_kernel);
    free(p2);
    CHECK(srt_model_open(ctx, cu, &opt, &m) == SRT_OK);
    CHECK(srt_model_random_weights(m, 1) == SRT_OK && srt_session_create(m, 1, &s) == SRT_OK);
    CHECK(srt_forward(s, tok, 3, logits) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "step 1 of 2 (gemm, toy.arch line 7): matrix C needs 544 bytes at T=3 P=0 but its buffer has 256");
    srt_model_close(m);

    /* programs: one token runs "decode", whose launch reads its counter from the uploaded constant table */
    p2 = rt_test_replace(TOY_PLAN_JSON, "\"programs\": [", "\"programs\": [" TOY_DECODE_PROGRAM);
    write_cu(cu, p2, toy_kernel);
    free(p2);
    CHECK(srt_model_open(ctx, cu, &opt, &m) == SRT_OK);
    CHECK(srt_model_random_weights(m, 11) == SRT_OK && srt_session_create(m, 1, &s) == SRT_OK);
    CHECK(srt_forward(s, tok, 1, logits) == SRT_OK);
    expected(wte0, tok, 1, 2.0f, want); /* constants[0][0] = 2.0 */
    CHECK(close_to(logits, want, 8));
    CHECK(srt_forward(s, tok, 2, logits) == SRT_OK); /* "forward": the state's counter, still 0 */
    expected(wte0, tok, 2, 0.0f, want);
    CHECK(close_to(logits, want, 16));
    CHECK(srt_session_position(s) == 3);
    srt_model_close(m);

    /* a GEMM step with an epilogue runs as cublasLtMatmul (the fake's), its relu applied in the GEMM */
    p2 = rt_test_replace(TOY_PLAN_JSON, "\"compute\": \"f32\"", "\"compute\": \"f32\", \"epilogue\": \"relu\"");
    write_cu(cu, p2, toy_kernel);
    free(p2);
    CHECK(srt_model_open(ctx, cu, &opt, &m) == SRT_OK);
    CHECK(srt_model_random_weights(m, 11) == SRT_OK && srt_session_create(m, 1, &s) == SRT_OK);
    int lt_before = fake_lt_matmuls(), heur_before = fake_lt_heuristics();
    CHECK(srt_forward(s, tok, 3, logits) == SRT_OK);
    CHECK(fake_lt_matmuls() == lt_before + 1);
    CHECK(fake_lt_heuristics() == heur_before + 1); /* the algorithm chosen once for the step's shape ... */
    CHECK(srt_session_reset(s) == SRT_OK && srt_forward(s, tok, 3, logits) == SRT_OK);
    CHECK(fake_lt_matmuls() == lt_before + 2 && fake_lt_heuristics() == heur_before + 1); /* ... and kept */
    rt_random_tensor(11, "wte.weight", 2, wshape, wte, 32);
    expected(wte, tok, 3, 0.0f, want);
    int negative = 0;
    for (int i = 0; i < 24; i++) {
        negative += want[i] < 0;
        want[i] = want[i] > 0 ? want[i] : 0.0f;
    }
    CHECK(negative > 0 && close_to(logits, want, 24));
    /* a batch session's sequences share one activation arena and one cuBLASLt workspace: the later sequences make
     * the single session's device blocks less those two (here: their states) */
    long before = fake_outstanding();
    srt_session *one = NULL, *three = NULL;
    CHECK(srt_session_create(m, 1, &one) == SRT_OK);
    long per_single = fake_outstanding() - before;
    CHECK(srt_session_create(m, 3, &three) == SRT_OK);
    long per_batch = fake_outstanding() - before - per_single;
    CHECK(per_single >= 3 && per_batch == per_single + 2 * (per_single - 2));
    const int32_t *btok[3] = {tok, tok + 1, tok};
    int blen[3] = {3, 2, 1};
    float b0[24], b1[16], b2[8], *bout[3] = {b0, b1, b2};
    CHECK(srt_forward_batch(three, btok, blen, bout) == SRT_OK && close_to(b0, want, 24));
    srt_session_destroy(three);
    srt_session_destroy(one);
    CHECK(fake_outstanding() == before);
    srt_model_close(m);

    /* a plan kernel missing from the module */
    p2 = rt_test_replace(TOY_PLAN_JSON, "\"name\": \"toy_embed\"", "\"name\": \"toy_other\"");
    char *p3 = rt_test_replace(p2, "\"kernel\": \"toy_embed\"", "\"kernel\": \"toy_other\"");
    write_cu(cu, p3, toy_kernel);
    free(p2);
    free(p3);
    CHECK(srt_model_open(ctx, cu, &opt, &m) == SRT_ERR_DRIVER);
    CHECK_HAS(srt_last_error(ctx), "kernel 'toy_other' of the plan is not in the compiled module");
    /* a GEMM type combination cuBLAS does not have fails at open */
    p2 = rt_test_replace(TOY_PLAN_JSON, "\"btype\": \"f32\"", "\"btype\": \"bf16\"");
    write_cu(cu, p2, toy_kernel);
    free(p2);
    CHECK(srt_model_open(ctx, cu, &opt, &m) == SRT_ERR_UNSUPPORTED);
    CHECK_HAS(srt_last_error(ctx), "step 1 of 2 (gemm, toy.arch line 7): cuBLAS has no GEMM with A f32, B bf16, C f32");
    /* NVRTC errors surface as SRT_ERR_COMPILE */
    write_cu(cu, TOY_PLAN_JSON, "extern \"C\" __global__ void toy_embed( {}\n");
    CHECK(srt_model_open(ctx, cu, &opt, &m) == SRT_ERR_COMPILE);
    CHECK_HAS(srt_last_error(ctx), "NVRTC");
    CHECK(fake_outstanding() == 0);
    CHECK(cnt.live == 1);

    /* the host allocator failing at every point: SRT_ERR_NOMEM, nothing leaked */
    write_cu(cu, TOY_PLAN_JSON, toy_kernel);
    CHECK(cycle(ctx, cu) == SRT_OK);
    int failures = 0;
    for (long n = 0;; n++) {
        cnt.allocs = 0;
        cnt.fail_at = n;
        st = cycle(ctx, cu);
        if (st == SRT_OK) {
            printf("allocation failures injected at %ld points\n", n);
            break;
        }
        if (st != SRT_ERR_NOMEM) {
            fprintf(stderr, "allocation %ld failing gave %s: %s\n", n, srt_status_name(st), srt_last_error(ctx));
            failures++;
        }
        if (cnt.live != 1 || fake_outstanding() != 0) {
            fprintf(stderr, "allocation %ld failing leaked %ld host blocks, %ld device objects\n", n, cnt.live - 1,
                    fake_outstanding());
            failures++;
            cnt.live = 1;
        }
        if (n > 10000) {
            failures++;
            break;
        }
    }
    CHECK(failures == 0);
    cnt.fail_at = -1;
    srt_context_destroy(ctx);
    CHECK(cnt.live == 0);

    rt_test_rmdir(dir);
    return check_done("test_exec");
}
