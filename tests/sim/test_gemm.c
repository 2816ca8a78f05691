/*
 * test_gemm.c — the simulator's cublasGemmEx / cublasGemmStridedBatchedEx
 * against a naive double-precision product written from the cuBLAS
 * definition (column-major, op(A) m x k, op(B) k x n, C m x n): every
 * transpose combination at odd shapes, padded leading dimensions, beta 0
 * (C not read) and beta != 0, fp16/bf16 storage, strided batches, argument
 * validation, and the time of a GPT-2-small-sized product.
 */
#include "rt_internal.h"
#include "sim_test.h"

#include <time.h>

static RtDriver D;
static cublasHandle_t H;

enum { F32, F16, BF16 };
static const cudaDataType TYPES[] = {CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF};

static size_t esz(int t) { return t == F32 ? 4 : 2; }
static float get(const void *p, int t, size_t i) {
    if (t == F32) return ((const float *)p)[i];
    if (t == F16) return rt_f16_to_f32(((const uint16_t *)p)[i]);
    return rt_bf16_to_f32(((const uint16_t *)p)[i]);
}
static void put(void *p, int t, size_t i, float v) {
    if (t == F32) ((float *)p)[i] = v;
    else if (t == F16) ((uint16_t *)p)[i] = rt_f32_to_f16(v);
    else ((uint16_t *)p)[i] = rt_f32_to_bf16(v);
}

/* op(X)(r, c) for X stored column-major with leading dimension ld. */
static float opel(const void *X, int t, int trans, int ld, int r, int c) {
    return trans ? get(X, t, (size_t)c + (size_t)r * ld) : get(X, t, (size_t)r + (size_t)c * ld);
}

static unsigned long long rng = 88172645463325252ull;
static float rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

/* One (batched) product checked element by element; returns failures. */
static int check_gemm(int ta, int tb, int m, int n, int k, int pad, float alpha, float beta, int at, int ct, int batch,
                      long long extra_stride, int broadcast_a) {
    /* stored shapes: A is (ta ? k x m : m x k), B is (tb ? n x k : k x n) */
    int arows = ta ? k : m, acols = ta ? m : k, brows = tb ? n : k, bcols = tb ? k : n;
    int lda = arows + pad, ldb = brows + pad, ldc = m + pad;
    long long sA = broadcast_a ? 0 : (long long)lda * acols + extra_stride;
    long long sB = (long long)ldb * bcols + extra_stride, sC = (long long)ldc * n + extra_stride;
    size_t na = (size_t)(sA * (batch - 1) + (long long)lda * acols);
    size_t nb = (size_t)(sB * (batch - 1) + (long long)ldb * bcols);
    size_t nc = (size_t)(sC * (batch - 1) + (long long)ldc * n);
    void *A = malloc(na * esz(at) + 1), *B = malloc(nb * esz(at) + 1);
    void *C = malloc(nc * esz(ct) + 1), *C0 = malloc(nc * esz(ct) + 1);
    for (size_t i = 0; i < na; i++) put(A, at, i, rnd());
    for (size_t i = 0; i < nb; i++) put(B, at, i, rnd());
    for (size_t i = 0; i < nc; i++) put(C, ct, i, beta == 0.0f ? NAN : rnd()); /* beta 0: C must not be read */
    memcpy(C0, C, nc * esz(ct));
    cublasOperation_t opa = ta ? (ta == 2 ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
    cublasOperation_t opb = tb ? (tb == 2 ? CUBLAS_OP_C : CUBLAS_OP_T) : CUBLAS_OP_N;
    cublasStatus_t st;
    if (batch == 1 && !extra_stride)
        st = D.gemmEx(H, opa, opb, m, n, k, &alpha, A, TYPES[at], lda, B, TYPES[at], ldb, &beta, C, TYPES[ct], ldc,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    else
        st = D.gemmStridedBatchedEx(H, opa, opb, m, n, k, &alpha, A, TYPES[at], lda, sA, B, TYPES[at], ldb, sB, &beta,
                                    C, TYPES[ct], ldc, sC, batch, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
    int bad = 0;
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "gemm status %d: %s\n", (int)st, sim_last_fault());
        bad = 1;
    }
    double tol_rel = ct == F32 ? 1e-5 : ct == F16 ? 1.0 / 1024 : 1.0 / 128;
    for (int b = 0; b < batch && !bad; b++)
        for (int j = 0; j < n && !bad; j++) {
            for (int i = 0; i < m && !bad; i++) {
                double s = 0, mag = 0;
                for (int p = 0; p < k; p++) {
                    double x = opel((const char *)A + (size_t)(sA * b) * esz(at), at, ta, lda, i, p);
                    double y = opel((const char *)B + (size_t)(sB * b) * esz(at), at, tb, ldb, p, j);
                    s += x * y;
                    mag += fabs(x * y);
                }
                size_t ci = (size_t)(sC * b) + (size_t)i + (size_t)j * ldc;
                double ref = alpha * s, refmag = fabs(alpha) * mag;
                if (beta != 0.0f) {
                    ref += beta * (double)get(C0, ct, ci);
                    refmag += fabs(beta * (double)get(C0, ct, ci));
                }
                double got = get(C, ct, ci);
                if (!(fabs(got - ref) <= 1e-5 * refmag + tol_rel * fabs(ref) + 1e-6)) {
                    fprintf(stderr, "C[%d](%d,%d) = %.8g, want %.8g (ta %d tb %d m %d n %d k %d pad %d beta %g types %d/%d)\n",
                            b, i, j, got, ref, ta, tb, m, n, k, pad, beta, at, ct);
                    bad = 1;
                }
            }
            /* padding rows of C are untouched */
            for (int i = m; i < ldc && !bad; i++) {
                size_t ci = (size_t)(sC * b) + (size_t)i + (size_t)j * ldc;
                float g = get(C, ct, ci), w = get(C0, ct, ci);
                if (memcmp(&g, &w, sizeof g) != 0 && !(isnan(g) && isnan(w))) {
                    fprintf(stderr, "padding C(%d,%d) changed\n", i, j);
                    bad = 1;
                }
            }
        }
    free(A);
    free(B);
    free(C);
    free(C0);
    return bad;
}

static void test_shapes(void) {
    static const int sizes[] = {1, 7, 33, 65, 130};
    int count = 0, idx = 0;
    for (int ta = 0; ta < 3; ta++)
        for (int tb = 0; tb < 3; tb++)
            for (int a = 0; a < 5; a++)
                for (int b = 0; b < 5; b++)
                    for (int c = 0; c < 5; c++, idx++) {
                        int pad = idx % 3 == 0 ? 3 : 0;
                        float beta = idx % 2 ? 0.5f : 0.0f, alpha = idx % 4 == 1 ? -1.5f : 1.0f;
                        if (check_gemm(ta, tb, sizes[a], sizes[b], sizes[c], pad, alpha, beta, F32, F32, 1, 0, 0)) {
                            check_failures++;
                            return;
                        }
                        count++;
                    }
    printf("fp32: %d products ok\n", count);
}

static void test_types(void) {
    static const int combos[][2] = {{F16, F16}, {F16, F32}, {BF16, BF16}, {BF16, F32}};
    for (int c = 0; c < 4; c++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                CHECK(check_gemm(ta, tb, 33, 7, 65, 0, 1.0f, 0.0f, combos[c][0], combos[c][1], 1, 0, 0) == 0);
                CHECK(check_gemm(ta, tb, 65, 130, 33, 2, 0.75f, 0.5f, combos[c][0], combos[c][1], 1, 0, 0) == 0);
            }
}

static void test_batched(void) {
    CHECK(check_gemm(0, 1, 33, 7, 65, 1, 1.0f, 0.0f, F32, F32, 3, 5, 0) == 0);
    CHECK(check_gemm(1, 0, 16, 17, 9, 0, 1.0f, 0.25f, F32, F32, 4, 0, 0) == 0);
    CHECK(check_gemm(0, 0, 7, 33, 16, 0, 1.0f, 0.0f, F16, F32, 5, 3, 1) == 0); /* strideA 0: A shared */
    CHECK(check_gemm(1, 1, 64, 64, 64, 0, 0.125f, 0.0f, BF16, BF16, 12, 0, 0) == 0);
}

static void test_edges(void) {
    float one = 1.0f, zero = 0.0f, half = 0.5f, c[4] = {1, 2, 3, 4}, a[4] = {1, 1, 1, 1};
    /* k == 0 and alpha == 0: C = beta*C, A and B not read */
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 0, &one, NULL, CUDA_R_32F, 2, NULL, CUDA_R_32F, 1, &half, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    CHECK(c[0] == 0.5f && c[3] == 2.0f);
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &zero, NULL, CUDA_R_32F, 2, NULL, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    CHECK(c[0] == 0.0f && c[3] == 0.0f);
    /* m == 0: nothing happens */
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 0, 2, 2, &one, a, CUDA_R_32F, 1, a, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    /* validation as cuBLAS does it */
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, a, CUDA_R_32F, 1, a, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    CHECK(D.gemmEx(H, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &one, a, CUDA_R_32F, 2, a, CUDA_R_32F, 3, &zero, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE); /* lda < k */
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_T, 2, 3, 2, &one, a, CUDA_R_32F, 2, a, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE); /* ldb < n */
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, a, CUDA_R_32F, 2, a, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE); /* ldc < m */
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, -1, 2, 2, &one, a, CUDA_R_32F, 2, a, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(D.gemmEx(H, (cublasOperation_t)7, CUBLAS_OP_N, 2, 2, 2, &one, a, CUDA_R_32F, 2, a, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, a, CUDA_R_16F, 2, a, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, a, CUDA_R_32F, 2, a, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK(D.gemmEx(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, a, CUDA_R_32F, 2, a, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK(D.gemmStridedBatchedEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, a, CUDA_R_32F, 2, 0, a, CUDA_R_32F, 2, 0,
                                 &zero, c, CUDA_R_32F, 2, 4, -1, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);
    /* a bad pointer is a reported execution failure, not a crash */
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, (void *)16, CUDA_R_32F, 2, a, CUDA_R_32F, 2, &zero, c,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_EXECUTION_FAILED);
    CHECK_HAS(sim_last_fault(), "cublasGemmEx: invalid memory access");
}

/* GPT-2 small shapes (d_model 768, d_ff 3072, 128 tokens): timed, must be well under a second. */
static void test_speed(void) {
    int T = 128, dm = 768, dff = 3072;
    float *W = malloc((size_t)dm * dff * 4), *X = malloc((size_t)dm * T * 4), *Y = malloc((size_t)dff * T * 4);
    for (size_t i = 0; i < (size_t)dm * dff; i++) W[i] = rnd();
    for (size_t i = 0; i < (size_t)dm * T; i++) X[i] = rnd();
    float one = 1.0f, zero = 0.0f;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* Y^T[dff, T] = W^T X^T: transa N, m dff, n T, k dm (plan.md's row-major weight convention) */
    CHECK(D.gemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, dff, T, dm, &one, W, CUDA_R_32F, dff, X, CUDA_R_32F, dm, &zero, Y,
                   CUDA_R_32F, dff, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("gemm %dx%dx%d: %.1f ms (%.2f GFLOP/s, %d workers)\n", dff, T, dm, ms, 2.0 * dff * T * dm / ms / 1e6,
           sim_nworkers());
    CHECK(ms < 5000); /* generous for loaded CI machines and sanitizer builds */
    /* spot check */
    for (int s = 0; s < 20; s++) {
        int i = (s * 997) % dff, j = (s * 31) % T;
        double ref = 0;
        for (int p = 0; p < dm; p++) ref += (double)W[i + (size_t)p * dff] * X[p + (size_t)j * dm];
        CHECK(fabs(Y[i + (size_t)j * dff] - ref) < 1e-3);
    }
    free(W);
    free(X);
    free(Y);
}

/*
 * cublasLtMatmul with each epilogue, through the runtime's rt_gemm_lt (as
 * the executor calls it), against the double product + bias + activation
 * (GELU: the tanh approximation); also TF32 compute on fp32 inputs, which
 * must equal the product of the inputs rounded to 10 mantissa bits.
 */
static int check_lt(PlanEpilogue e, int ta, int tb, int t, bool tf32) {
    int m = 37, n = 11, k = 29;
    int arows = ta ? k : m, acols = ta ? m : k, brows = tb ? n : k, bcols = tb ? k : n;
    void *A = malloc((size_t)arows * acols * esz(t)), *B = malloc((size_t)brows * bcols * esz(t));
    void *C = malloc((size_t)m * n * esz(t)), *bias = malloc((size_t)m * esz(t));
    for (int i = 0; i < arows * acols; i++) put(A, t, (size_t)i, rnd());
    for (int i = 0; i < brows * bcols; i++) put(B, t, (size_t)i, rnd());
    for (int i = 0; i < m; i++) put(bias, t, (size_t)i, rnd());
    RtLtGemm g = {.ta = ta ? CUBLAS_OP_T : CUBLAS_OP_N, .tb = tb ? CUBLAS_OP_T : CUBLAS_OP_N, .m = m, .n = n, .k = k,
                  .A = A, .B = B, .C = C, .lda = arows, .ldb = brows, .ldc = m, .atype = TYPES[t], .btype = TYPES[t],
                  .ctype = TYPES[t], .compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                  .epilogue = e, .bias = bias};
    cublasLtHandle_t h;
    RtLtPlan plans[RT_LT_WAYS] = {0};
    CHECK(D.ltCreate(&h) == CUBLAS_STATUS_SUCCESS);
    CHECK(rt_gemm_lt(&D, h, plans, &g) == CUBLAS_STATUS_SUCCESS);
    for (int w = 0; w < RT_LT_WAYS; w++) rt_lt_plan_release(&D, &plans[w]);
    CHECK(D.ltDestroy(h) == CUBLAS_STATUS_SUCCESS);
    int bad = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double acc = 0;
            for (int p = 0; p < k; p++) {
                float a = opel(A, t, ta, arows, i, p), b = opel(B, t, tb, brows, p, j);
                if (tf32) a = rt_round_tf32(a), b = rt_round_tf32(b);
                acc += (double)a * b;
            }
            if (plan_epilogue_has_bias(e)) acc += get(bias, t, (size_t)i);
            if (e == PLAN_EPI_RELU || e == PLAN_EPI_BIAS_RELU) acc = acc > 0 ? acc : 0;
            if (e == PLAN_EPI_GELU_TANH || e == PLAN_EPI_BIAS_GELU_TANH)
                acc = 0.5 * acc * (1.0 + tanh(0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)));
            double got = get(C, t, (size_t)i + (size_t)j * m), tol = t == F32 ? 1e-5 : 4e-3;
            if (!(fabs(got - acc) <= tol * (1.0 + fabs(acc)))) bad++;
        }
    free(A), free(B), free(C), free(bias);
    return bad;
}

static void test_lt(void) {
    for (int e = PLAN_EPI_BIAS; e < PLAN_EPI_COUNT; e++)
        for (int t = F32; t <= BF16; t++)
            for (int ta = 0; ta < 2; ta++) {
                int bad = check_lt((PlanEpilogue)e, ta, 1 - ta, t, false);
                CHECK(bad == 0);
                if (bad) fprintf(stderr, "cublasLtMatmul epilogue %s type %d ta %d: %d elements off\n", plan_epilogue_name((PlanEpilogue)e), t, ta, bad);
            }
    CHECK(check_lt(PLAN_EPI_BIAS, 0, 0, F32, true) == 0);
    /* an epilogue the simulator lacks is refused, with a fault message */
    cublasLtMatmulDesc_t desc;
    CHECK(D.ltMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
    int32_t bad_attr = 0;
    CHECK(D.ltMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &bad_attr, sizeof bad_attr) ==
          CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK(D.last_fault() && strstr(D.last_fault(), "not supported"));
    CHECK(D.ltMatmulDescDestroy(desc) == CUBLAS_STATUS_SUCCESS);
}

/* rt_gemm_lt's plans: built once per shape (one descriptor, one heuristic query), reused with another bias;
 * a second shape gets the second plan and both stay; a third key (an operand's alignment) replaces the least
 * recently used one. The same numbers either way. */
static void test_lt_plan(void) {
    int m = 24, n = 8, k = 16;
    float *buf = calloc(4096, sizeof *buf), *C1 = calloc((size_t)m * n, sizeof *C1);
    for (int i = 0; i < 4096; i++) buf[i] = rnd();
    float *A = buf, *B = buf + 1024, *C = buf + 2048, *bias = buf + 3072, *bias2 = buf + 3136;
    RtLtGemm g = {.ta = CUBLAS_OP_N, .tb = CUBLAS_OP_N, .m = m, .n = n, .k = k, .A = A, .B = B, .C = C, .lda = m,
                  .ldb = k, .ldc = m, .atype = CUDA_R_32F, .btype = CUDA_R_32F, .ctype = CUDA_R_32F,
                  .compute = CUBLAS_COMPUTE_32F, .epilogue = PLAN_EPI_BIAS_RELU, .bias = bias};
    cublasLtHandle_t h;
    RtLtPlan set[RT_LT_WAYS] = {0};
    RtCallCounts c[6];
    CHECK(D.ltCreate(&h) == CUBLAS_STATUS_SUCCESS);
    D.call_counts(&c[0]);
    CHECK(rt_gemm_lt(&D, h, set, &g) == CUBLAS_STATUS_SUCCESS);
    memcpy(C1, C, sizeof *C1 * (size_t)m * n);
    g.bias = bias2; /* a second call: another bias, the plan kept */
    CHECK(rt_gemm_lt(&D, h, set, &g) == CUBLAS_STATUS_SUCCESS);
    D.call_counts(&c[1]);
    CHECK(c[1].lt_descs - c[0].lt_descs == 1 && c[1].lt_heuristics - c[0].lt_heuristics == 1 &&
          c[1].gemms - c[0].gemms == 2);
    int differ = 0; /* the bias pointer set per call is the one used */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double acc = 0;
            for (int p = 0; p < k; p++) acc += (double)A[i + p * m] * B[p + j * k];
            acc += bias2[i];
            acc = acc > 0 ? acc : 0;
            differ += fabs(C[i + j * m] - acc) > 1e-5;
        }
    CHECK(differ == 0);
    g.n = 7; /* a second shape: the second plan */
    CHECK(rt_gemm_lt(&D, h, set, &g) == CUBLAS_STATUS_SUCCESS);
    g.n = 8, g.bias = bias; /* the first shape again: still there */
    CHECK(rt_gemm_lt(&D, h, set, &g) == CUBLAS_STATUS_SUCCESS);
    CHECK(memcmp(C1, C, sizeof *C1 * (size_t)m * n) == 0); /* the first call's numbers again */
    D.call_counts(&c[2]);
    CHECK(c[2].lt_descs - c[1].lt_descs == 1 && c[2].lt_heuristics - c[1].lt_heuristics == 1);
    g.A = A + 1; /* A 4-byte aligned instead of 256: a third key replaces the least recently used (n = 7) */
    CHECK(rt_gemm_lt(&D, h, set, &g) == CUBLAS_STATUS_SUCCESS);
    CHECK((set[0].ready && set[0].key.align[0] == 4) || (set[1].ready && set[1].key.align[0] == 4));
    D.call_counts(&c[3]);
    CHECK(c[3].lt_descs - c[2].lt_descs == 1);
    g.A = A; /* n = 8 at A was kept */
    CHECK(rt_gemm_lt(&D, h, set, &g) == CUBLAS_STATUS_SUCCESS);
    D.call_counts(&c[4]);
    CHECK(c[4].lt_descs == c[3].lt_descs);
    /* an algorithm the heuristic did not return, or a workspace size without a workspace, is refused */
    RtLtPlan *p = &set[0];
    cublasLtMatmulAlgo_t bogus;
    memset(&bogus, 0, sizeof bogus);
    float one = 1.0f, zero = 0.0f;
    CHECK(D.ltMatmul(h, p->desc, &one, A, p->la, B, p->lb, &zero, C, p->lc, C, p->lc, &bogus, NULL, 0, NULL) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "did not return");
    CHECK(D.ltMatmul(h, p->desc, &one, A, p->la, B, p->lb, &zero, C, p->lc, C, p->lc, &p->algo, NULL, 64, NULL) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "without a workspace");
    /* preference attributes: a wrong size and an unknown attribute are refused */
    cublasLtMatmulPreference_t pref;
    CHECK(D.ltMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS);
    uint32_t small = 0;
    CHECK(D.ltMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &small, sizeof small) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(D.ltMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, &small, sizeof small) ==
          CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK(D.ltMatmulPreferenceDestroy(pref) == CUBLAS_STATUS_SUCCESS);
    for (int w = 0; w < RT_LT_WAYS; w++) {
        rt_lt_plan_release(&D, &set[w]);
        CHECK(!set[w].ready && !set[w].desc);
    }
    CHECK(D.ltDestroy(h) == CUBLAS_STATUS_SUCCESS);
    free(buf);
    free(C1);
}

int main(void) {
    char err[256];
    CHECK(rt_driver_sim(&D, 0, 1, err, sizeof err) == SRT_OK);
    CHECK(D.blasCreate(&H) == CUBLAS_STATUS_SUCCESS);
    CHECK(D.blasSetStream(H, NULL) == CUBLAS_STATUS_SUCCESS);
    test_shapes();
    test_types();
    test_batched();
    test_edges();
    test_lt();
    test_lt_plan();
    test_speed();
    CHECK(D.blasDestroy(H) == CUBLAS_STATUS_SUCCESS);
    return check_done("sim_gemm");
}
