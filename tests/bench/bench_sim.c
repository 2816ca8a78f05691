/*
 * bench_sim.c — figures for the CPU SIMT simulator (not a test; run by hand):
 *
 *   ./build/tests/bench_sim [workers]
 *
 * prints the cost of a fiber switch, a barrier-free elementwise kernel on the
 * simulator against the same loop in plain C (1 worker, then `workers`), the
 * per-thread cost of a barrier, and GEMM throughput.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_driver.h"
#include "sim.h"

static const char *KERNELS =
    "extern \"C\" __global__ void b_axpb(float *y, const float *x, float a, float b, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + b;\n"
    "}\n"
    "extern \"C\" __global__ void b_gelu(float *y, const float *x, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) { float v = x[i]; y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))); }\n"
    "}\n"
    "extern \"C\" __global__ void b_barriers(float *y, int rounds) {\n"
    "    __shared__ float s[1024];\n"
    "    float v = threadIdx.x;\n"
    "    for (int r = 0; r < rounds; r++) { s[threadIdx.x] = v; __syncthreads(); v += s[(threadIdx.x + 1) % blockDim.x]; __syncthreads(); }\n"
    "    y[blockIdx.x * blockDim.x + threadIdx.x] = v;\n"
    "}\n";

/* The loops the kernels stand for, compiled with the project's flags
 * (c_axpb is vectorized by GCC at -O2; c_axpb_scalar is not, like the kernel). */
static __attribute__((noinline)) void c_axpb(float *y, const float *x, float a, float b, int n) {
    for (int i = 0; i < n; i++) y[i] = a * x[i] + b;
}
static __attribute__((noinline, optimize("no-tree-vectorize"))) void c_axpb_scalar(float *y, const float *x, float a,
                                                                                  float b, int n) {
    for (int i = 0; i < n; i++) y[i] = a * x[i] + b;
}
static __attribute__((noinline)) void c_gelu(float *y, const float *x, int n) {
    for (int i = 0; i < n; i++) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) n = 0;
    fclose(f);
    if (b) b[n] = 0;
    return b;
}

int main(int argc, char **argv) {
    int workers = argc > 1 ? atoi(argv[1]) : 0;
    RtDriver d;
    char err[65536];
    if (rt_driver_sim(&d, 1, 0, err, sizeof err) != SRT_OK) return 1;

    printf("fiber switch: %.2f ns\n", sim_measure_switch_ns(5000000));

    char path[1024];
    snprintf(path, sizeof path, "%s/templates/prelude.cuh", SHORTC_SOURCE_DIR);
    char *prelude = read_all(path);
    if (!prelude) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    size_t len = strlen(prelude) + strlen(KERNELS) + 2;
    char *src = malloc(len);
    snprintf(src, len, "%s\n%s", prelude, KERNELS);
    const char *names[] = {"b_axpb", "b_gelu", "b_barriers"};
    const char *cache = getenv("SHORTC_CACHE") ? getenv("SHORTC_CACHE") : "/tmp/shortc-bench-cache";
    RtCompileRequest req = {.source = src, .len = strlen(src), .name = "bench_sim", .arch = 80, .cache_dir = cache, .kernel_names = names, .nkernels = 3};
    RtCompiled out;
    if (d.compile_module(&req, &out, err, sizeof err) != SRT_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("kernel object: %s (%s, %.0f ms)\n", (char *)out.image, out.cache_hit ? "cached" : "compiled",
           out.compile_ms);
    CUmodule mod;
    CUfunction fa, fg, fb;
    if (d.moduleLoadData(&mod, out.image) || d.moduleGetFunction(&fa, mod, "b_axpb") ||
        d.moduleGetFunction(&fg, mod, "b_gelu") || d.moduleGetFunction(&fb, mod, "b_barriers")) {
        fprintf(stderr, "load: %s\n", d.last_fault());
        return 1;
    }

    int n = 1 << 24;
    CUdeviceptr dx, dy;
    d.memAlloc(&dx, (size_t)n * 4);
    d.memAlloc(&dy, (size_t)n * 4);
    float *x = (float *)(uintptr_t)dx, *y = (float *)(uintptr_t)dy;
    for (int i = 0; i < n; i++) x[i] = (float)((i * 7919) % 2001 - 1000) / 500.0f;
    float a = 1.5f, b = 0.25f;
    int reps = 10;
    for (int pass = 0; pass < 2; pass++) {
        int w = pass == 0 ? 1 : workers;
        rt_driver_sim(&d, w, 0, err, sizeof err);
        for (int k = 0; k < 2; k++) {
            double best_sim = 1e30, best_c = 1e30, best_s = 1e30;
            for (int r = 0; r < reps; r++) {
                double t0 = now_ms();
                void *pa[] = {&dy, &dx, &a, &b, &n}, *pg[] = {&dy, &dx, &n};
                CUresult rc = d.launchKernel(k == 0 ? fa : fg, (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL,
                                             k == 0 ? pa : pg, NULL);
                double t1 = now_ms();
                if (rc) fprintf(stderr, "launch: %s\n", d.last_fault());
                if (k == 0) c_axpb(y, x, a, b, n);
                else c_gelu(y, x, n);
                double t2 = now_ms();
                if (k == 0) c_axpb_scalar(y, x, a, b, n);
                double t3 = now_ms();
                if (t1 - t0 < best_sim) best_sim = t1 - t0;
                if (t2 - t1 < best_c) best_c = t2 - t1;
                if (t3 - t2 < best_s) best_s = t3 - t2;
            }
            printf("%-5s %d worker(s): sim %.2f ns/element; plain C loop %.2f ns/element (ratio %.2fx)", k == 0 ? "axpb" : "gelu",
                   sim_nworkers(), best_sim * 1e6 / n, best_c * 1e6 / n, best_sim / best_c);
            if (k == 0) printf("; not vectorized %.2f ns/element (ratio %.2fx)", best_s * 1e6 / n, best_sim / best_s);
            printf("\n");
        }
    }
    long plain = 0, fiber = 0;
    sim_func_stats(fa, &plain, &fiber);
    printf("b_axpb blocks: %ld plain, %ld fiber\n", plain, fiber);

    /* barriers: 64 blocks of 256 threads, 100 rounds of 2 barriers */
    int rounds = 100, nb = 64;
    void *pb[] = {&dy, &rounds};
    rt_driver_sim(&d, 1, 0, err, sizeof err);
    double t0 = now_ms();
    d.launchKernel(fb, (unsigned)nb, 1, 1, 256, 1, 1, 0, NULL, pb, NULL);
    double t1 = now_ms();
    printf("barrier: %.1f ns per thread per __syncthreads (1 worker)\n",
           (t1 - t0) * 1e6 / ((double)nb * 256 * rounds * 2));

    /* GEMM: GPT-2 small MLP up-projection at 128 tokens */
    rt_driver_sim(&d, workers, 0, err, sizeof err);
    int m = 3072, nn = 128, kk = 768;
    float *A = malloc((size_t)m * kk * 4), *B = malloc((size_t)kk * nn * 4), *C = malloc((size_t)m * nn * 4);
    for (size_t i = 0; i < (size_t)m * kk; i++) A[i] = (float)(i % 13) * 0.1f;
    for (size_t i = 0; i < (size_t)kk * nn; i++) B[i] = (float)(i % 7) * 0.1f;
    cublasHandle_t h;
    d.blasCreate(&h);
    float one = 1.0f, zero = 0.0f;
    for (int r = 0; r < 2; r++) {
        t0 = now_ms();
        d.gemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, nn, kk, &one, A, CUDA_R_32F, m, B, CUDA_R_32F, kk, &zero, C,
                 CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        t1 = now_ms();
    }
    printf("gemm %dx%dx%d fp32: %.1f ms, %.1f GFLOP/s (%d workers)\n", m, nn, kk, t1 - t0,
           2.0 * m * nn * kk / (t1 - t0) / 1e6, sim_nworkers());
    d.blasDestroy(h);
    free(A);
    free(B);
    free(C);
    d.memFree(dx);
    d.memFree(dy);
    d.moduleUnload(mod);
    rt_compiled_release(&out);
    free(src);
    free(prelude);
    return 0;
}
