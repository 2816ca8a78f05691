/*
 * test_kernels.c — the simulator end to end: tests/sim/kernels/basic.cu is
 * compiled by the simulator's compile_module, loaded and launched through
 * the RtDriver table, and every result is checked on the host.
 *
 *   sim_kernels [case]     runs one case (see CASES below) or all of them
 */
#include "sim_test.h"

#include <time.h>

static RtDriver D;
static CUmodule M;
static char errbuf[4096];

static const char *const NAMES[] = {
    "k_scale",     "k_block_sum", "k_prelude_sum", "k_shuffles",   "k_halfwarps", "k_late_collective",
    "k_div_barrier", "k_exit_wait", "k_exit_first", "k_warp_exit", "k_warp_mixed", "k_bar_vs_warp",
    "k_oob",       "k_dyn_smem",  "k_big_static",  "k_half_rt",    "k_atomics",   "k_mma",
    "k_transpose", "k_softmax",   "k_assert",      "k_divzero",    "k_bar_reduce",
};
#define NNAMES ((int)(sizeof NAMES / sizeof *NAMES))

static int setup(int threads, int checked) {
    if (rt_driver_sim(&D, threads, checked, errbuf, sizeof errbuf) != SRT_OK) {
        fprintf(stderr, "rt_driver_sim: %s\n", errbuf);
        return -1;
    }
    if (!M) M = sim_test_module(&D, "basic.cu", NAMES, NNAMES, 80, NULL);
    return M ? 0 : -1;
}

static CUdeviceptr dalloc(size_t bytes) {
    CUdeviceptr p = 0;
    CHECK_CU(D.memAlloc(&p, bytes));
    return p;
}
static void h2d(CUdeviceptr d, const void *h, size_t n) { CHECK_CU(D.memcpyHtoD(d, h, n)); }
static void d2h(void *h, CUdeviceptr d, size_t n) { CHECK_CU(D.memcpyDtoH(h, d, n)); }

static CUresult launch(const char *name, unsigned gx, unsigned gy, unsigned bx, unsigned by, unsigned bz,
                       unsigned smem, void **params) {
    CUfunction f = sim_test_fn(&D, M, name);
    if (!f) return CUDA_ERROR_NOT_FOUND;
    return D.launchKernel(f, gx, gy, 1, bx, by, bz, smem, NULL, params, NULL);
}

/* y = 2x over n elements; 0 when right. Used after faults to show the simulator recovered. */
static int scale_ok(int n) {
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    sim_test_fill(x, (size_t)n, 7);
    CUdeviceptr dx = dalloc(n * sizeof *x), dy = dalloc(n * sizeof *y);
    h2d(dx, x, n * sizeof *x);
    float a = 2.0f;
    void *p[] = {&dy, &dx, &a, &n};
    int bad = launch("k_scale", (unsigned)(n + 127) / 128, 1, 128, 1, 1, 0, p) != CUDA_SUCCESS;
    d2h(y, dy, n * sizeof *y);
    for (int i = 0; i < n && !bad; i++) bad = y[i] != 2.0f * x[i];
    D.memFree(dx);
    D.memFree(dy);
    free(x);
    free(y);
    return bad;
}

static void test_fast_path(void) {
    CHECK(scale_ok(100000) == 0);
    long plain = 0, fiber = 0;
    sim_func_stats(sim_test_fn(&D, M, "k_scale"), &plain, &fiber);
    CHECK(plain == (100000 + 127) / 128);
    CHECK(fiber == 0);
}

static void test_barrier_sum(void) {
    int n = 5000, nb = (n + 255) / 256;
    float *x = malloc(n * sizeof *x), *out = malloc(nb * sizeof *out);
    sim_test_fill(x, (size_t)n, 1);
    CUdeviceptr dx = dalloc(n * sizeof *x), dout = dalloc(nb * sizeof *out);
    h2d(dx, x, n * sizeof *x);
    void *p[] = {&dout, &dx, &n};
    CHECK_CU(launch("k_block_sum", (unsigned)nb, 1, 256, 1, 1, 0, p));
    d2h(out, dout, nb * sizeof *out);
    for (int b = 0; b < nb; b++) {
        double ref = 0;
        for (int i = b * 256; i < n && i < (b + 1) * 256; i++) ref += x[i];
        CHECK(fabs(out[b] - ref) < 1e-4);
    }
    long plain = 0, fiber = 0;
    sim_func_stats(sim_test_fn(&D, M, "k_block_sum"), &plain, &fiber);
    CHECK(plain == 0 && fiber == nb);
    D.memFree(dx);
    D.memFree(dout);
    free(x);
    free(out);
}

static void test_prelude_sum(void) {
    int nb = 3, bs = 96, n = nb * bs;
    float *x = malloc(n * sizeof *x), *out = malloc(2 * n * sizeof *out);
    sim_test_fill(x, (size_t)n, 2);
    CUdeviceptr dx = dalloc(n * sizeof *x), dout = dalloc(2 * n * sizeof *out);
    h2d(dx, x, n * sizeof *x);
    void *p[] = {&dout, &dx};
    CHECK_CU(launch("k_prelude_sum", (unsigned)nb, 1, (unsigned)bs, 1, 1, 0, p));
    d2h(out, dout, 2 * n * sizeof *out);
    for (int i = 0; i < n; i++) {
        int b = i / bs, w = i / 32;
        double s = 0;
        float m = -INFINITY;
        for (int j = b * bs; j < (b + 1) * bs; j++) s += x[j];
        for (int j = w * 32; j < w * 32 + 32; j++) m = fmaxf(m, x[j]);
        CHECK(fabs(out[2 * i] - s) < 1e-4);
        CHECK(out[2 * i + 1] == m);
    }
    D.memFree(dx);
    D.memFree(dout);
    free(x);
    free(out);
}

/* Expected values from CUDA's documented semantics (programming guide, warp shuffle functions). */
static void test_shuffles(void) {
    static const int combos[][4] = {{32, 5, 3, 6}, {16, 19, 5, 3}, {8, 2, 1, 12}, {4, 7, 2, 1}, {32, 31, 31, 31}};
    CUdeviceptr dout = dalloc(9 * 64 * sizeof(int));
    int out[9 * 64];
    for (size_t c = 0; c < sizeof combos / sizeof *combos; c++) {
        int w = combos[c][0], src = combos[c][1], delta = combos[c][2], lm = combos[c][3];
        void *p[] = {&dout, &w, &src, &delta, &lm};
        CHECK_CU(launch("k_shuffles", 1, 1, 64, 1, 1, 0, p));
        d2h(out, dout, sizeof out);
        for (int t = 0; t < 64; t++) {
            int lane = t % 32, base = t - lane;
#define V(u) ((u) * 10 + 1)
            int e_idx = V(base + (lane / w) * w + src % w);
            int e_up = lane % w >= delta ? V(t - delta) : V(t);
            int e_down = lane % w + delta < w ? V(t + delta) : V(t);
            int tgt = lane ^ lm;
            int e_xor = tgt < (lane / w + 1) * w ? V(base + tgt) : V(t);
#undef V
            unsigned ballot = 0;
            for (int l = 0; l < 32; l++)
                if ((base + l) % 3 == 0) ballot |= 1u << l;
            CHECK(out[0 * 64 + t] == e_idx);
            CHECK(out[1 * 64 + t] == e_up);
            CHECK(out[2 * 64 + t] == e_down);
            CHECK(out[3 * 64 + t] == e_xor);
            CHECK((unsigned)out[4 * 64 + t] == ballot);
            CHECK(out[5 * 64 + t] == (base == 32));
            CHECK(out[6 * 64 + t] == (base == 0));
            CHECK(out[7 * 64 + t] == (t ^ 1) * 4 + 1);
            CHECK(out[8 * 64 + t] == (lane < 31 ? t + 1 : t));
            if (check_failures) {
                fprintf(stderr, "shuffles: width %d src %d delta %d mask %d, thread %d\n", w, src, delta, lm, t);
                D.memFree(dout);
                return;
            }
        }
    }
    D.memFree(dout);
}

static void test_halfwarps(void) {
    CUdeviceptr d = dalloc(32 * sizeof(int));
    int out[32];
    void *p[] = {&d};
    CHECK_CU(launch("k_halfwarps", 1, 1, 32, 1, 1, 0, p));
    d2h(out, d, sizeof out);
    for (int t = 0; t < 32; t++) CHECK(out[t] == (t ^ 1) + 100 * 8);
    D.memFree(d);
}

static void test_late_collective(void) {
    CUdeviceptr d = dalloc(64 * sizeof(int));
    int out[64];
    void *p[] = {&d};
    CHECK_CU(launch("k_late_collective", 2, 1, 64, 1, 1, 0, p));
    d2h(out, d, sizeof out);
    for (int t = 0; t < 64; t++) CHECK(out[t] == (t < 32 ? -1 : (t ^ 1)));
}

/* Launches a kernel that must fault; checks the code and that the message has every needle. */
static void expect_fault(const char *name, unsigned grid, unsigned block, unsigned smem, void **p, CUresult code,
                         const char *const *needles) {
    CUresult r = launch(name, grid, 1, block, 1, 1, smem, p);
    if (r != code) fprintf(stderr, "%s: got %d, want %d (%s)\n", name, (int)r, (int)code, D.last_fault());
    CHECK(r == code);
    CHECK_HAS(D.last_fault(), name);
    for (int i = 0; needles[i]; i++) CHECK_HAS(D.last_fault(), needles[i]);
    printf("  %s -> %s\n", name, D.last_fault());
    CHECK(scale_ok(1000) == 0); /* later launches still work */
}

static void test_divergence(void) {
    CUdeviceptr d = dalloc(64 * sizeof(float));
    void *p[] = {&d};
    expect_fault("k_div_barrier", 1, 64, 0, p, CUDA_ERROR_LAUNCH_FAILED,
                 (const char *const[]){"block (0,0,0)", "thread (5,0,0)", "different __syncthreads()",
                                       "thread (0,0,0)", NULL});
    expect_fault("k_exit_wait", 2, 64, 0, p, CUDA_ERROR_LAUNCH_FAILED,
                 (const char *const[]){"thread (3,0,0)", "exited while thread (0,0,0)", NULL});
    expect_fault("k_exit_first", 1, 64, 0, p, CUDA_ERROR_LAUNCH_FAILED,
                 (const char *const[]){"thread (1,0,0)", "thread (0,0,0) exited without reaching it", NULL});
    expect_fault("k_warp_exit", 1, 32, 0, p, CUDA_ERROR_LAUNCH_FAILED,
                 (const char *const[]){"lane 7", "__shfl_xor_sync", NULL});
    expect_fault("k_warp_mixed", 1, 32, 0, p, CUDA_ERROR_LAUNCH_FAILED,
                 (const char *const[]){"thread (16,0,0)", "__any_sync", "__ballot_sync", NULL});
    expect_fault("k_bar_vs_warp", 1, 64, 0, p, CUDA_ERROR_LAUNCH_FAILED,
                 (const char *const[]){"__syncthreads()", "thread (33,0,0) waits at __shfl_xor_sync", NULL});
    D.memFree(d);
}

static void test_trap(void) {
    CUdeviceptr d = dalloc(64 * sizeof(int));
    void *p[] = {&d};
    expect_fault("k_assert", 1, 64, 0, p, CUDA_ERROR_LAUNCH_FAILED,
                 (const char *const[]){"thread (5,0,0)", "assertion", NULL});
    int z = 0;
    void *p2[] = {&d, &z};
    expect_fault("k_divzero", 1, 64, 0, p2, CUDA_ERROR_ILLEGAL_ADDRESS,
                 (const char *const[]){"thread (2,0,0)", "integer division by zero", NULL});
    D.memFree(d);
}

static void test_oob(void) {
    int n = 1000;
    CUdeviceptr dx = dalloc(n * sizeof(float)), dy = dalloc(1024 * sizeof(float));
    void *p[] = {&dy, &dx};
    expect_fault("k_oob", 4, 256, 0, p, CUDA_ERROR_ILLEGAL_ADDRESS,
                 (const char *const[]){"block (3,0,0)", "thread (232,0,0)", "invalid memory access",
                                       "0 bytes past the end of allocation", "4000 bytes", NULL});
    /* faults are per launch: a later launch that succeeds leaves no message behind */
    CHECK_CU(launch("k_oob", 1, 1, 1000, 1, 1, 0, p));
    CHECK(D.last_fault()[0] == 0);
    D.memFree(dx);
    /* a size that is not a multiple of 16 bytes: the byte after the end is still the guard */
    dx = dalloc(1001 * sizeof(float));
    expect_fault("k_oob", 1, 1002, 0, p, CUDA_ERROR_ILLEGAL_ADDRESS,
                 (const char *const[]){"thread (1001,0,0)", "0 bytes past the end of allocation", "4004 bytes", NULL});
    D.memFree(dx);
    D.memFree(dy);
    /* out-of-range copies are refused, not performed */
    CUdeviceptr a = dalloc(64);
    char buf[128] = {0};
    CHECK(D.memcpyHtoD(a + 8, buf, 64) == CUDA_ERROR_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "not inside one allocation");
    CHECK(D.memcpyDtoH(buf, a, 65) == CUDA_ERROR_INVALID_VALUE);
    CHECK(D.memsetD8(a, 0, 64) == CUDA_SUCCESS);
    D.memFree(a);
}

static void test_limits(void) {
    CUdeviceptr d = dalloc(4096 * sizeof(float));
    int n = 16;
    float a = 1.0f;
    void *p[] = {&d, &d, &a, &n};
    CHECK(launch("k_scale", 1, 1, 1025, 1, 1, 0, p) == CUDA_ERROR_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "1025 threads per block");
    CHECK_HAS(D.last_fault(), "exceed the limit of 1024");
    CHECK(launch("k_scale", 1, 1, 32, 32, 2, 0, p) == CUDA_ERROR_INVALID_VALUE);
    CHECK(launch("k_scale", 1, 1, 1, 1, 65, 0, p) == CUDA_ERROR_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "block dimension limits");
    CHECK(launch("k_scale", 1, 70000, 32, 1, 1, 0, p) == CUDA_ERROR_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "grid limits");
    CHECK(launch("k_scale", 0, 1, 32, 1, 1, 0, p) == CUDA_ERROR_INVALID_VALUE);
    CHECK(launch("k_scale", 1, 1, 32, 1, 1, 49153, p) == CUDA_ERROR_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "49152-byte default limit");
    CHECK(launch("k_scale", 1, 1, 1024, 1, 1, 0, p) == CUDA_SUCCESS);
    int v = 0;
    CHECK(D.deviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0) == CUDA_SUCCESS && v == 1024);
    CHECK(D.deviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0) == CUDA_SUCCESS &&
          v == 166912);
    CHECK(D.deviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) == CUDA_SUCCESS && v == 8);
    D.memFree(d);
}

static void test_dyn_smem(void) {
    int nb = 3;
    for (int round = 0; round < 2; round++) {
        int n = round == 0 ? 3000 : 20000; /* 12000 bytes, then 80000 (needs the opt-in) */
        unsigned smem = (unsigned)n * 4;
        CUdeviceptr d = dalloc((size_t)nb * n * sizeof(float));
        int over = 0;
        void *p[] = {&d, &n, &over};
        CUfunction f = sim_test_fn(&D, M, "k_dyn_smem");
        if (round == 1) {
            CHECK(launch("k_dyn_smem", (unsigned)nb, 1, 128, 1, 1, smem, p) == CUDA_ERROR_INVALID_VALUE);
            CHECK_HAS(D.last_fault(), "MAX_DYNAMIC_SHARED_SIZE_BYTES");
            CHECK(D.funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200000) ==
                  CUDA_ERROR_INVALID_VALUE); /* > 163 KB on sm_80 */
            CHECK(D.funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)0xffffffffu) ==
                  CUDA_ERROR_INVALID_VALUE);
            CHECK_HAS(D.last_fault(), ": 4294967295 bytes of dynamic shared memory"); /* never "-1 bytes" */
            CHECK_CU(D.funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem));
        }
        CHECK_CU(launch("k_dyn_smem", (unsigned)nb, 1, 128, 1, 1, smem, p));
        float *out = malloc((size_t)nb * n * sizeof *out);
        d2h(out, d, (size_t)nb * n * sizeof *out);
        for (int b = 0; b < nb; b++)
            for (int i = 0; i < n; i++) CHECK(out[b * n + i] == (n - 1 - i) * 2.0f + b);
        free(out);
        if (round == 0) { /* one element past the end hits the guard page */
            over = 1;
            expect_fault("k_dyn_smem", 1, 128, smem, p, CUDA_ERROR_ILLEGAL_ADDRESS,
                         (const char *const[]){"0 bytes past the end of the 12000-byte dynamic shared memory", NULL});
        }
        D.memFree(d);
    }
}

static void test_static_smem(void) {
    CUfunction f = sim_test_fn(&D, M, "k_big_static");
    CHECK(f && ((SimFunc *)f)->static_smem == 40000);
    CUdeviceptr d = dalloc(256 * sizeof(float));
    void *p[] = {&d};
    CHECK_CU(launch("k_big_static", 1, 1, 256, 1, 1, 1024, p));
    float out[256];
    d2h(out, d, sizeof out);
    for (int i = 0; i < 256; i++) CHECK(out[i] == 3.0f);
    CHECK(launch("k_big_static", 1, 1, 256, 1, 1, 10000, p) == CUDA_ERROR_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "+40000 static");
    D.memFree(d);
}

static void test_half(void) {
    static const float special[] = {0.0f, -0.0f, 1.0f, -2.5f, 1.0f / 3.0f, 65504.0f, 65519.0f, 65520.0f, 1e6f,
                                    6.1035156e-05f, 5.9604645e-08f, 2.9802322e-08f, 2.9802326e-08f, 1e-10f,
                                    3.14159265f, 1.00048828125f, 1.00146484375f, 0.1f, INFINITY, -INFINITY};
    int ns = (int)(sizeof special / sizeof *special), n = ns + 3000;
    float *x = malloc(n * sizeof *x);
    memcpy(x, special, sizeof special);
    sim_test_fill(x + ns, (size_t)(n - ns), 3);
    for (int i = ns; i < n; i++) x[i] *= (float)((i % 7) * 1000 + 1) * powf(2.0f, (float)(i % 40) - 30.0f);
    CUdeviceptr dh = dalloc(n * 2), db = dalloc(n * 2), dfh = dalloc(n * 4), dfb = dalloc(n * 4), dx = dalloc(n * 4);
    h2d(dx, x, n * sizeof *x);
    void *p[] = {&dh, &db, &dfh, &dfb, &dx, &n};
    CHECK_CU(launch("k_half_rt", (unsigned)(n + 127) / 128, 1, 128, 1, 1, 0, p));
    uint16_t *h = malloc(n * 2), *b = malloc(n * 2);
    float *fh = malloc(n * 4), *fb = malloc(n * 4);
    d2h(h, dh, n * 2);
    d2h(b, db, n * 2);
    d2h(fh, dfh, n * 4);
    d2h(fb, dfb, n * 4);
    /* the kernel used CUDA's host conversions; the simulator's C conversions must agree bit for bit */
    for (int i = 0; i < n; i++) {
        if (h[i] != rt_f32_to_f16(x[i]) || b[i] != rt_f32_to_bf16(x[i]))
            fprintf(stderr, "x=%.9g: half %04x vs %04x, bf16 %04x vs %04x\n", x[i], h[i], rt_f32_to_f16(x[i]), b[i],
                    rt_f32_to_bf16(x[i]));
        CHECK(h[i] == rt_f32_to_f16(x[i]));
        CHECK(b[i] == rt_f32_to_bf16(x[i]));
        CHECK(memcmp(&fh[i], &(float){rt_f16_to_f32(h[i])}, 4) == 0);
        CHECK(memcmp(&fb[i], &(float){rt_bf16_to_f32(b[i])}, 4) == 0);
    }
    CHECK(h[2] == 0x3c00 && h[4] == 0x3555 && h[5] == 0x7bff && h[6] == 0x7bff && h[7] == 0x7c00);
    CHECK(b[2] == 0x3f80 && b[4] == 0x3eab);
    D.memFree(dh);
    D.memFree(db);
    D.memFree(dfh);
    D.memFree(dfb);
    D.memFree(dx);
    free(x);
    free(h);
    free(b);
    free(fh);
    free(fb);
}

static void test_atomics(void) {
    int n = 100000;
    CUdeviceptr dc = dalloc(4), df = dalloc(4), dm = dalloc(4);
    CHECK_CU(D.memsetD8(dc, 0, 4));
    CHECK_CU(D.memsetD8(df, 0, 4));
    CHECK_CU(D.memsetD8(dm, 0, 4));
    void *p[] = {&dc, &df, &dm, &n};
    CHECK_CU(launch("k_atomics", (unsigned)(n + 255) / 256, 1, 256, 1, 1, 0, p));
    int c = 0;
    float f = 0;
    unsigned m = 0;
    d2h(&c, dc, 4);
    d2h(&f, df, 4);
    d2h(&m, dm, 4);
    CHECK(c == n);
    CHECK(f == (float)n);
    CHECK(m == (unsigned)n - 1);
    D.memFree(dc);
    D.memFree(df);
    D.memFree(dm);
}

static void test_mma(void) {
    uint16_t A[256], B[128];
    float Af[256], Bf[128], C[128], Dm[128];
    int flags[32];
    for (int i = 0; i < 256; i++) {
        A[i] = rt_f32_to_f16((float)((i * 37) % 17 - 8) / 8.0f);
        Af[i] = rt_f16_to_f32(A[i]);
    }
    for (int i = 0; i < 128; i++) {
        B[i] = rt_f32_to_f16((float)((i * 11) % 13 - 6) / 4.0f);
        Bf[i] = rt_f16_to_f32(B[i]);
        C[i] = (float)(i % 9) - 4.0f;
    }
    CUdeviceptr dD = dalloc(sizeof Dm), dA = dalloc(sizeof A), dB = dalloc(sizeof B), dC = dalloc(sizeof C),
                dF = dalloc(sizeof flags);
    h2d(dA, A, sizeof A);
    h2d(dB, B, sizeof B);
    h2d(dC, C, sizeof C);
    void *p[] = {&dD, &dA, &dB, &dC, &dF};
    CHECK_CU(launch("k_mma", 1, 1, 32, 1, 1, 0, p));
    d2h(Dm, dD, sizeof Dm);
    d2h(flags, dF, sizeof flags);
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++) {
            double ref = C[r * 8 + c];
            for (int k = 0; k < 16; k++) ref += (double)Af[r * 16 + k] * Bf[c * 16 + k];
            CHECK(fabs(Dm[r * 8 + c] - ref) < 1e-5);
        }
    for (int l = 0; l < 32; l++) CHECK(flags[l] == 1);
    /* all 32 lanes are required */
    expect_fault("k_mma", 1, 16, 0, p, CUDA_ERROR_LAUNCH_FAILED, (const char *const[]){"all 32 lanes", NULL});
    D.memFree(dD);
    D.memFree(dA);
    D.memFree(dB);
    D.memFree(dC);
    D.memFree(dF);
}

static void test_transpose(void) {
    int rows = 37, cols = 50;
    float *in = malloc(rows * cols * sizeof *in), *out = malloc(rows * cols * sizeof *out);
    sim_test_fill(in, (size_t)rows * cols, 4);
    CUdeviceptr di = dalloc(rows * cols * 4), dout = dalloc(rows * cols * 4);
    h2d(di, in, rows * cols * 4);
    void *p[] = {&dout, &di, &rows, &cols};
    CHECK_CU(launch("k_transpose", (unsigned)(cols + 15) / 16, (unsigned)(rows + 15) / 16, 16, 8, 1, 0, p));
    d2h(out, dout, rows * cols * 4);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) CHECK(out[c * rows + r] == in[r * cols + c]);
    D.memFree(di);
    D.memFree(dout);
    free(in);
    free(out);
}

static void test_bar_reduce(void) {
    CUdeviceptr d = dalloc(3 * sizeof(int));
    int out[3];
    void *p[] = {&d};
    CHECK_CU(launch("k_bar_reduce", 1, 1, 200, 1, 1, 0, p));
    d2h(out, d, sizeof out);
    CHECK(out[0] == 67 && out[1] == 1 && out[2] == 1);
}

/* Softmax and a GEMM with 1, 2 and 3 workers must agree bit for bit. */
static void test_determinism(void) {
    int rows = 64, cols = 333;
    size_t nbytes = (size_t)rows * cols * sizeof(float);
    float *x = malloc(nbytes), *y[3];
    sim_test_fill(x, (size_t)rows * cols, 5);
    int m = 70, n = 45, k = 130;
    float *A = malloc(m * k * 4), *B = malloc(k * n * 4), *Cg[3];
    sim_test_fill(A, (size_t)m * k, 8);
    sim_test_fill(B, (size_t)k * n, 9);
    for (int w = 1; w <= 3; w++) {
        CHECK(setup(w, 1) == 0);
        CHECK(sim_nworkers() == w);
        CUdeviceptr dx = dalloc(nbytes), dy = dalloc(nbytes);
        h2d(dx, x, nbytes);
        void *p[] = {&dy, &dx, &cols};
        CHECK_CU(launch("k_softmax", (unsigned)rows, 1, 128, 1, 1, 0, p));
        y[w - 1] = malloc(nbytes);
        d2h(y[w - 1], dy, nbytes);
        D.memFree(dx);
        D.memFree(dy);
        cublasHandle_t h;
        CHECK(D.blasCreate(&h) == CUBLAS_STATUS_SUCCESS);
        Cg[w - 1] = malloc(m * n * 4);
        float one = 1.0f, zero = 0.0f;
        CHECK(D.gemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, CUDA_R_32F, m, B, CUDA_R_32F, k, &zero,
                       Cg[w - 1], CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
        D.blasDestroy(h);
    }
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int c = 0; c < cols; c++) s += y[0][r * cols + c];
        CHECK(fabs(s - 1.0) < 1e-4);
    }
    CHECK(memcmp(y[0], y[1], nbytes) == 0);
    CHECK(memcmp(y[0], y[2], nbytes) == 0);
    CHECK(memcmp(Cg[0], Cg[1], m * n * 4) == 0);
    CHECK(memcmp(Cg[0], Cg[2], m * n * 4) == 0);
    for (int i = 0; i < 3; i++) free(y[i]), free(Cg[i]);
    free(x);
    free(A);
    free(B);
}

static void test_compile(void) {
    size_t len = 0;
    char *src = sim_test_source("basic.cu", &len);
    RtCompileRequest req = {.source = src, .len = len, .name = "simtest", .arch = 80, .cache_dir = sim_test_cache(), .kernel_names = NAMES, .nkernels = NNAMES};
    RtCompiled out;
    static char err[65536];
    CHECK(D.compile_module(&req, &out, err, sizeof err) == SRT_OK);
    CHECK(out.cache_hit == 1); /* compiled by setup() already */
    CHECK(out.image && strncmp((char *)out.image, "/proc/self/fd/", 14) == 0 && out.own_fd);
    rt_compiled_release(&out);
    /* a kernel name that is not in the source: the compiler's message comes back */
    const char *bad_names[] = {"k_scale", "k_no_such_kernel"};
    RtCompileRequest r2 = {.source = src, .len = len, .name = "simtest_bad", .arch = 80, .cache_dir = sim_test_cache(), .kernel_names = bad_names, .nkernels = 2};
    CHECK(D.compile_module(&r2, &out, err, sizeof err) == SRT_ERR_COMPILE);
    CHECK_HAS(err, "k_no_such_kernel");
    /* a syntax error, with the file name of the model */
    char *broken = malloc(len + 64);
    memcpy(broken, src, len);
    strcpy(broken + len, "\nthis is not C++;\n");
    RtCompileRequest r3 = {.source = broken, .len = strlen(broken), .name = "broken_model", .arch = 80, .cache_dir = sim_test_cache(), .kernel_names = NAMES, .nkernels = 1};
    CHECK(D.compile_module(&r3, &out, err, sizeof err) == SRT_ERR_COMPILE);
    CHECK_HAS(err, "broken_model.cu");
    CHECK_HAS(err, "error");
    const char *evil[] = {"k_scale); system(\"true\""};
    RtCompileRequest r4 = {.source = src, .len = len, .name = "x", .arch = 80, .cache_dir = sim_test_cache(), .kernel_names = evil, .nkernels = 1};
    CHECK(D.compile_module(&r4, &out, err, sizeof err) == SRT_ERR_INVALID);
    free(broken);
    free(src);
    /* a missing function and a bad image are errors, not crashes */
    CUfunction f;
    CHECK(D.moduleGetFunction(&f, M, "nope") == CUDA_ERROR_NOT_FOUND);
    CUmodule m2;
    CHECK(D.moduleLoadData(&m2, "/nonexistent/kernels.so") == CUDA_ERROR_INVALID_IMAGE);
    const char *s = NULL;
    CHECK(D.getErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &s) == CUDA_SUCCESS && s && strstr(s, "illegal"));
}

static void test_events(void) {
    CUevent a, b;
    CUstream s;
    CHECK_CU(D.streamCreate(&s, 0));
    CHECK_CU(D.eventCreate(&a, 0));
    CHECK_CU(D.eventCreate(&b, 0));
    float ms = -1;
    CHECK(D.eventElapsedTime(&ms, a, b) == CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(D.eventRecord(a, s));
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    CHECK_CU(D.eventRecord(b, s));
    CHECK_CU(D.eventSynchronize(b));
    CHECK_CU(D.streamSynchronize(s));
    CHECK_CU(D.eventElapsedTime(&ms, a, b));
    CHECK(ms >= 19.0f && ms < 2000.0f);
    CHECK_CU(D.eventDestroy(a));
    CHECK_CU(D.eventDestroy(b));
    CHECK_CU(D.streamDestroy(s));
}

static const SimTestCase CASES[] = {
    {"fast_path", test_fast_path},     {"barrier_sum", test_barrier_sum},
    {"prelude_sum", test_prelude_sum}, {"shuffles", test_shuffles},
    {"halfwarps", test_halfwarps},     {"late_collective", test_late_collective},
    {"divergence", test_divergence},   {"trap", test_trap},
    {"oob", test_oob},                 {"limits", test_limits},
    {"dyn_smem", test_dyn_smem},       {"static_smem", test_static_smem},
    {"half", test_half},               {"atomics", test_atomics},
    {"mma", test_mma},                 {"transpose", test_transpose},
    {"bar_reduce", test_bar_reduce},   {"determinism", test_determinism},
    {"compile", test_compile},         {"events", test_events},
};

/* Before each case: a fresh driver (two workers, checked), the module loaded once. */
static void setup_case(void) { setup(2, 1); }

int main(int argc, char **argv) {
    if (setup(2, 1) != 0) return check_done("sim_kernels");
    return sim_test_run_cases("sim_kernels", CASES, sizeof CASES / sizeof *CASES, argc > 1 ? argv[1] : NULL,
                              setup_case);
}
