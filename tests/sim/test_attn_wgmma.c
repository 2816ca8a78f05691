/*
 * test_attn_wgmma.c — the sm_90a attention kernel of templates/attn_wgmma.cuh
 * (docs/attention/hopper.md "The attention kernel") on the simulator, against
 * plain C: causal and window attention with P cached keys before T queries,
 * for fp16 and bf16, head dims 64 and 128, odd T (partial query and key tiles) and P = 0
 * or not. The inputs are in the attention engine's layouts (qkv [T, 3*H*D],
 * the cache [2, H, rows, D] with rows past P that must not be read) and reach
 * the kernel as TMA tensor maps (3D: {D, rows, H} with the layouts' strides,
 * 128-byte swizzle, boxes of 64 x 64) encoded by the runtime's
 * rt_attn_wgmma_maps through the driver table (its refusals: case maps).
 *
 *   sim_attn_wgmma [case]   runs one case ({causal,window}_{f16,bf16}_{d64,d128}, maps, short_smem) or all
 */
#include "sim_test.h"

#include "half.h"
#include "rt_attn_wgmma.h"

static RtDriver D;
static CUmodule M;
static char errbuf[4096];

static const char *const NAMES[] = {"k_aw_causal_f16_d64",   "k_aw_causal_f16_d128", "k_aw_causal_bf16_d64",
                                    "k_aw_causal_bf16_d128", "k_aw_window_f16_d64",  "k_aw_window_f16_d128",
                                    "k_aw_window_bf16_d64",  "k_aw_window_bf16_d128"};
#define NNAMES ((int)(sizeof NAMES / sizeof *NAMES))

enum { H = 2, EXTRA_ROWS = 3 }; /* heads; cache rows past P (filled with garbage the kernel must not read) */

/* Dynamic shared memory of the kernel for head dim d (ShortcAwLayout<D>::SMEM: five 64 x d tiles and 64
 * bytes of mbarriers). */
static unsigned smem_bytes(int d) { return 5u * 64u * (unsigned)d * 2u + 64u; }

static uint16_t to_bits(bool bf16, float x) { return bf16 ? rt_f32_to_bf16(x) : rt_f32_to_f16(x); }
static float from_bits(bool bf16, uint16_t h) { return bf16 ? rt_bf16_to_f32(h) : rt_f16_to_f32(h); }

/* n random values rounded to the element type: bits into h, their values into f. */
static void fill_rounded(bool bf16, uint16_t *h, float *f, size_t n, unsigned seed) {
    sim_test_fill(f, n, seed);
    for (size_t i = 0; i < n; i++) {
        h[i] = to_bits(bf16, f[i]);
        f[i] = from_bits(bf16, h[i]);
    }
}

static CUdeviceptr upload(const void *h, size_t n) {
    CUdeviceptr d = 0;
    CHECK_CU(D.memAlloc(&d, n));
    if (h)
        CHECK_CU(D.memcpyHtoD(d, h, n));
    else
        CHECK_CU(D.memsetD8(d, 0, n));
    return d;
}

/* The engine's layouts (templates/attn_engine.cuh): qkv [t][3][H][d] (q | k | v, head-major), the cache
 * kv [2][H][rows][d] (head-major) or [2][rows][H][d]; element c of head h's query i, key j and value j (keys
 * below p from the cache). */
typedef struct Inputs {
    const float *qkv, *kv; /* the rounded values */
    int t, p, rows, d;     /* queries, cached keys, cache rows, head dim */
    bool head_major;       /* the cache's layout */
} Inputs;
/* Index of element c of cached row j of head h (which: 0 keys, 1 values). */
static size_t kv_index(const Inputs *in, int which, int h, int j, int c) {
    if (in->head_major) return (((size_t)which * H + h) * in->rows + j) * in->d + c;
    return (((size_t)which * in->rows + j) * H + h) * in->d + c;
}
static double q_at(const Inputs *in, int h, int i, int c) { return in->qkv[((size_t)i * 3 * H + h) * in->d + c]; }
static double kv_at(const Inputs *in, int which, int h, int j, int c) {
    if (j >= in->p) return in->qkv[((size_t)(j - in->p) * 3 * H + (size_t)(1 + which) * H + h) * in->d + c];
    return in->kv[kv_index(in, which, h, j, c)];
}

/* want[t][H][d] = softmax(q k^T * scale) v in double, query i (at position p + i) seeing keys j <= p + i,
 * and with a window (size > 0) only those with p + i - j < size (attn_visible_causal, attn_visible_window). */
static void ref_attention(const Inputs *in, int size, double *want) {
    const int d = in->d, p = in->p;
    const double scale = 1.0 / sqrt((double)d);
    double *w = malloc(sizeof(double) * (size_t)(p + in->t));
    for (int h = 0; h < H; h++)
        for (int i = 0; i < in->t; i++) {
            const int j0 = size > 0 && p + i - size + 1 > 0 ? p + i - size + 1 : 0;
            double mx = -INFINITY, sum = 0.0;
            for (int j = j0; j <= p + i; j++) {
                double dot = 0.0;
                for (int c = 0; c < d; c++) dot += q_at(in, h, i, c) * kv_at(in, 0, h, j, c);
                w[j] = dot * scale;
                mx = fmax(mx, w[j]);
            }
            for (int j = j0; j <= p + i; j++) sum += w[j] = exp(w[j] - mx);
            for (int c = 0; c < d; c++) {
                double acc = 0.0;
                for (int j = j0; j <= p + i; j++) acc += w[j] * kv_at(in, 1, h, j, c);
                want[((size_t)i * H + h) * d + c] = acc / sum;
            }
        }
    free(w);
}

/* One launch of kernel at (t, p) (size > 0: a window kernel of that size); the largest |y - want| relative
 * to max(1, max |want|) must stay within tol (P rounded to the element type for P V, y rounded on store). */
static void check_attention(const char *kernel, bool bf16, int d, int t, int p, int size, double tol) {
    const int rows = p + EXTRA_ROWS;
    const size_t nqkv = (size_t)t * 3 * H * d, nkv = (size_t)2 * H * rows * d, ny = (size_t)t * H * d;
    uint16_t *qkvh = malloc(nqkv * 2), *kvh = malloc(nkv * 2), *yh = malloc(ny * 2);
    float *qkvf = malloc(nqkv * 4), *kvf = malloc(nkv * 4);
    double *want = malloc(ny * sizeof(double));
    fill_rounded(bf16, qkvh, qkvf, nqkv, 100u + (unsigned)t);
    fill_rounded(bf16, kvh, kvf, nkv, 200u + (unsigned)p);
    const Inputs in = {qkvf, kvf, t, p, rows, d, p != 128}; /* P = 128: the token-major cache */
    for (int w = 0; w < 2; w++) /* the rows past p: huge keys and values, which would dominate if read */
        for (int h = 0; h < H; h++)
            for (int j = p; j < rows; j++)
                for (int c = 0; c < d; c++) kvh[kv_index(&in, w, h, j, c)] = to_bits(bf16, 1000.0f);
    ref_attention(&in, size, want);
    CUdeviceptr dqkv = upload(qkvh, nqkv * 2), dkv = upload(kvh, nkv * 2), dy = upload(NULL, ny * 2);
    const RtAttnWgmmaTensors tensors = {dqkv, dkv, t, p, H, d, rows, in.head_major, bf16};
    RtAttnWgmmaMaps maps;
    char err[512];
    srt_status st = rt_attn_wgmma_maps(&D, &tensors, &maps, err, sizeof err);
    if (st != SRT_OK) fprintf(stderr, "rt_attn_wgmma_maps: %s\n", err);
    CHECK(st == SRT_OK);
    float scale_log2 = (float)(1.4426950408889634 / sqrt((double)d));
    void *params[] = {&maps.q, &maps.k,    &maps.v,    &maps.kc,    &maps.vc,
                      &dy,     (void *)&t, (void *)&p, &scale_log2, (void *)&size};
    CUfunction f = sim_test_fn(&D, M, kernel);
    if (f && st == SRT_OK) {
        unsigned smem = smem_bytes(d);
        CHECK_CU(D.funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem));
        CHECK_CU(D.launchKernel(f, (unsigned)(t + 63) / 64, H, 1, 256, 1, 1, smem, NULL, params, NULL));
        CHECK_CU(D.memcpyDtoH(yh, dy, ny * 2));
        double scl = 1.0, err = 0.0;
        for (size_t i = 0; i < ny; i++) scl = fmax(scl, fabs(want[i]));
        for (size_t i = 0; i < ny; i++) err = fmax(err, fabs(from_bits(bf16, yh[i]) - want[i]));
        err /= scl;
        printf("  %s T %3d P %3d size %3d: max relative error %.3g\n", kernel, t, p, size, err);
        CHECK(err <= tol);
    }
    D.memFree(dqkv);
    D.memFree(dkv);
    D.memFree(dy);
    free(qkvh), free(kvh), free(yh), free(qkvf), free(kvf), free(want);
}

/* Every odd T of the issue, without and with a cache; window kernels at sizes below, at and above a key tile
 * (so that query tiles skip leading key tiles and mask partial tiles at both ends). */
static void check_kernel(const char *kind, bool bf16, int d) {
    static const int ts[] = {1, 2, 15, 17, 63, 65, 129}, ps[] = {0, 37, 128}, windows[] = {1, 40, 64, 100};
    /* one rounding of P to the element type and one of y: a few units of its last place (measured: up to
     * 3.8e-4 for fp16, 2.7e-3 for bf16) */
    const double tol = bf16 ? 6e-3 : 1e-3;
    const bool window = strcmp(kind, "window") == 0;
    char kernel[64];
    snprintf(kernel, sizeof kernel, "k_aw_%s_%s_d%d", kind, bf16 ? "bf16" : "f16", d);
    for (size_t w = 0; w < (window ? sizeof windows / sizeof *windows : 1); w++)
        for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
            for (size_t j = 0; j < sizeof ps / sizeof *ps; j++)
                check_attention(kernel, bf16, d, ts[i], ps[j], window ? windows[w] : 0, tol);
}

static void test_causal_f16_d64(void) { check_kernel("causal", false, 64); }
static void test_causal_f16_d128(void) { check_kernel("causal", false, 128); }
static void test_causal_bf16_d64(void) { check_kernel("causal", true, 64); }
static void test_causal_bf16_d128(void) { check_kernel("causal", true, 128); }
static void test_window_f16_d64(void) { check_kernel("window", false, 64); }
static void test_window_f16_d128(void) { check_kernel("window", false, 128); }
static void test_window_bf16_d64(void) { check_kernel("window", true, 64); }
static void test_window_bf16_d128(void) { check_kernel("window", true, 128); }

/* rt_attn_wgmma_maps refuses what the kernel does not take, with the reason. */
static void expect_maps_error(const RtAttnWgmmaTensors *t, srt_status want, const char *text) {
    RtAttnWgmmaMaps maps;
    char err[512] = "";
    srt_status st = rt_attn_wgmma_maps(&D, t, &maps, err, sizeof err);
    printf("  -> %d %s\n", (int)st, err);
    CHECK(st == want);
    CHECK_HAS(err, text);
}

static void test_maps(void) {
    CUdeviceptr qkv = upload(NULL, (size_t)17 * 3 * H * 128 * 2), kv = upload(NULL, (size_t)2 * H * 40 * 128 * 2);
    const RtAttnWgmmaTensors ok = {qkv, kv, 17, 37, H, 128, 40, true, false};
    RtAttnWgmmaTensors t = ok;
    t.D = 96;
    expect_maps_error(&t, SRT_ERR_INVALID, "head dim must be 64 or 128");
    t = ok, t.P = 41;
    expect_maps_error(&t, SRT_ERR_INVALID, "P exceeds the cache's kv_rows");
    t = ok, t.kv = 0;
    expect_maps_error(&t, SRT_ERR_INVALID, "the cache is NULL");
    t = ok, t.T = 0;
    expect_maps_error(&t, SRT_ERR_INVALID, "T and H must be at least 1");
    t = ok, t.qkv = qkv + 2; /* not 16-byte aligned */
    expect_maps_error(&t, SRT_ERR_DRIVER, "refused the q map");
    t = ok, t.T = 18; /* one row more than the allocation holds */
    expect_maps_error(&t, SRT_ERR_DRIVER, "does not lie inside one device allocation");
    RtDriver old = D;
    D.tensorMapEncodeTiled = NULL;
    expect_maps_error(&ok, SRT_ERR_UNSUPPORTED, "no cuTensorMapEncodeTiled");
    D = old;
    RtAttnWgmmaMaps maps;
    char err[512];
    CHECK(rt_attn_wgmma_maps(&D, &ok, &maps, err, sizeof err) == SRT_OK);
    D.memFree(qkv);
    D.memFree(kv);
}

/* A launch with the dynamic shared memory of the D 64 kernel for the D 128 one fails with the simulator's
 * report (its mbarriers, after the tiles, lie outside the dynamic shared memory) instead of computing garbage. */
static void test_short_smem(void) {
    int t = 17, p = 0;
    CUdeviceptr qkv = upload(NULL, (size_t)t * 3 * H * 128 * 2), y = upload(NULL, (size_t)t * H * 128 * 2);
    const RtAttnWgmmaTensors tensors = {qkv, 0, t, p, H, 128, 0, true, false};
    RtAttnWgmmaMaps maps;
    char err[512];
    CHECK(rt_attn_wgmma_maps(&D, &tensors, &maps, err, sizeof err) == SRT_OK);
    float scale_log2 = 0.125f;
    void *params[] = {&maps.q, &maps.k, &maps.v, &maps.kc, &maps.vc, &y, &t, &p, &scale_log2};
    CUfunction f = sim_test_fn(&D, M, "k_aw_causal_f16_d128");
    if (f) {
        CUresult r = D.launchKernel(f, 1, H, 1, 256, 1, 1, smem_bytes(64), NULL, params, NULL);
        printf("  -> %d %s\n", (int)r, D.last_fault());
        CHECK(r != CUDA_SUCCESS);
        CHECK_HAS(D.last_fault(), "k_aw_causal_f16_d128");
        CHECK_HAS(D.last_fault(), "is not in shared memory");
    }
    D.memFree(qkv);
    D.memFree(y);
}

static const SimTestCase CASES[] = {
    {"maps", test_maps},
    {"short_smem", test_short_smem},
    {"causal_f16_d64", test_causal_f16_d64},
    {"causal_f16_d128", test_causal_f16_d128},
    {"causal_bf16_d64", test_causal_bf16_d64},
    {"causal_bf16_d128", test_causal_bf16_d128},
    {"window_f16_d64", test_window_f16_d64},
    {"window_f16_d128", test_window_f16_d128},
    {"window_bf16_d64", test_window_bf16_d64},
    {"window_bf16_d128", test_window_bf16_d128},
};

/* templates/prelude.cuh, hopper.cuh, attn_wgmma.cuh and tests/sim/kernels/attn_wgmma.cu, compiled and loaded. */
static CUmodule load_module(void) {
    static const char *const parts[] = {"templates/prelude.cuh", "templates/hopper.cuh", "templates/attn_wgmma.cuh",
                                        "tests/sim/kernels/attn_wgmma.cu"};
    char path[1024];
    char *src = NULL;
    size_t len = 0;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        snprintf(path, sizeof path, "%s/%s", SHORTC_SOURCE_DIR, parts[i]);
        if (!sim_test_append(&src, &len, path)) {
            free(src);
            check_failures++;
            return NULL;
        }
    }
    RtCompileRequest req = {.source = src,
                            .len = len,
                            .name = "attn_wgmma",
                            .arch = 90,
                            .cache_dir = sim_test_cache(),
                            .kernel_names = NAMES,
                            .nkernels = NNAMES};
    static char err[65536];
    RtCompiled out;
    srt_status st = D.compile_module(&req, &out, err, sizeof err);
    free(src);
    if (st != SRT_OK) {
        fprintf(stderr, "compile failed (%d): %s\n", (int)st, err);
        check_failures++;
        return NULL;
    }
    CUmodule m = NULL;
    if (D.moduleLoadData(&m, out.image) != CUDA_SUCCESS) {
        fprintf(stderr, "moduleLoadData: %s\n", D.last_fault());
        check_failures++;
        m = NULL;
    }
    rt_compiled_release(&out);
    return m;
}

int main(int argc, char **argv) {
    if (rt_driver_sim(&D, 2, 1, errbuf, sizeof errbuf) != SRT_OK) {
        fprintf(stderr, "rt_driver_sim: %s\n", errbuf);
        return 1;
    }
    M = load_module();
    if (!M) return check_done("sim_attn_wgmma");
    return sim_test_run_cases("sim_attn_wgmma", CASES, sizeof CASES / sizeof *CASES, argc > 1 ? argv[1] : NULL, NULL);
}
