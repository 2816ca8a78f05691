/*
 * test_hopper.c — the Hopper intrinsics of templates/hopper.cuh on the
 * simulator (docs/attention/hopper.md): tests/sim/kernels/hopper.cu runs one
 * or two warpgroups per launch and every result is compared with plain C.
 * Shared-memory operands are built here, element by element, from the PTX
 * ISA's canonical layouts (core matrices of 8 rows x 16 bytes; swizzled rows
 * of 32, 64 or 128 bytes whose 16-byte chunks are XORed with the row's index
 * in its 8-row atom), so each layout and swizzle mode is checked against an
 * independent placement.
 *
 *   sim_hopper [case]   runs one case (ss, rs, tma, tma_store, tma_gemm, pipeline, tmap_errors, faults,
 *                       setmaxnreg) or all
 */
#include "sim_test.h"

#include "half.h"

static RtDriver D;
static CUmodule M;
static char errbuf[4096];

static const char *const NAMES[] = {
    "k_hop_ss_f16_kk",    "k_hop_ss_bf16_kk",      "k_hop_ss_f16_mn",        "k_hop_ss_bf16_mn",
    "k_hop_ss_bf16_n256", "k_hop_ss_f16_n8",       "k_hop_ss_unfenced",      "k_hop_rs_f16_mn",
    "k_hop_rs_bf16_kk",   "k_hop_tma_load_2d",     "k_hop_tma_load_3d",      "k_hop_tma_short",
    "k_hop_tma_store_2d", "k_hop_tma_store_3d",    "k_hop_tma_gemm",         "k_hop_tma_gemm_mn",
    "k_hop_pipeline",     "k_hop_desc_misaligned", "k_hop_desc_bad_swizzle", "k_hop_acc_early",
    "k_hop_no_fence",     "k_hop_mbar_deadlock",   "k_hop_mbar_uninit",      "k_hop_mbar_overarrive",
    "k_hop_wg_partial",   "k_hop_desc_diverge",    "k_hop_tma_misaligned", "k_hop_chain_bf16",
};
#define NNAMES ((int)(sizeof NAMES / sizeof *NAMES))

/* Dynamic shared memory of every launch (the images fit it). */
enum { SMEM = 96 * 1024 };

static CUdeviceptr upload(const void *h, size_t n) {
    CUdeviceptr d = 0;
    CHECK_CU(D.memAlloc(&d, n));
    if (h)
        CHECK_CU(D.memcpyHtoD(d, h, n));
    else
        CHECK_CU(D.memsetD8(d, 0, n));
    return d;
}

static CUresult launch(const char *name, unsigned threads, void **params) {
    CUfunction f = sim_test_fn(&D, M, name);
    if (!f) return CUDA_ERROR_NOT_FOUND;
    CHECK_CU(D.funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, SMEM));
    return D.launchKernel(f, 1, 1, 1, threads, 1, 1, SMEM, NULL, params, NULL);
}

/* x rounded to fp16 (bf16: bf16) as bits; the value back. */
static uint16_t to_bits(bool bf16, float x) { return bf16 ? rt_f32_to_bf16(x) : rt_f32_to_f16(x); }
static float from_bits(bool bf16, uint16_t h) { return bf16 ? rt_bf16_to_f32(h) : rt_f16_to_f32(h); }

/* n rounded random values: bits into h, exact values into f. */
static void fill_rounded(bool bf16, uint16_t *h, float *f, size_t n, unsigned seed) {
    sim_test_fill(f, n, seed);
    for (size_t i = 0; i < n; i++) {
        h[i] = to_bits(bf16, f[i]);
        f[i] = from_bits(bf16, h[i]);
    }
}

/* The shared-memory swizzle of span bytes applied to byte offset o (16-byte chunk j of row r of an 8-row
 * atom moves to chunk j ^ r). */
static size_t swizzled(size_t o, int span) {
    if (!span) return o;
    size_t row_bytes = (size_t)span, chunks = row_bytes / 16;
    size_t row_in_atom = (o / 128) % 8; /* rows are counted in 128-byte units of the address */
    size_t chunk = (o / 16) % 8;
    return o - chunk * 16 + ((chunk ^ (row_in_atom % chunks)) % 8) * 16;
}

/* One operand's layout: mn rows (M or N) by k columns (K) of 16-bit elements. */
typedef struct Layout {
    int mn, k;    /* extent */
    int mn_major; /* 1: MN-major (transposed), 0: K-major */
    int swz;      /* swizzle span in bytes, 0 for none */
    int lbo, sbo; /* the descriptor's byte offsets */
    int kstep;    /* start-address step per 16 K */
    int bytes;    /* bytes it spans */
} Layout;

/* The layout the tests use for a swizzle mode: atoms stacked along MN then K (K-major) or K then MN. */
static Layout make_layout(int mn, int k, int mn_major, int swz) {
    Layout L = {mn, k, mn_major, swz, 0, 0, 0, 0};
    if (!mn_major && !swz) { /* core matrices 8 x 16 B: K-adjacent 128 B apart, MN-adjacent after all K */
        L.lbo = 128, L.sbo = 128 * (k / 8), L.kstep = 256, L.bytes = mn * k * 2;
    } else if (!mn_major) { /* rows of swz bytes hold K; 8-row atoms along MN */
        L.sbo = 8 * swz, L.lbo = 16, L.kstep = 32, L.bytes = (mn / 8) * 8 * swz;
    } else if (!swz) { /* core matrices 8 MN x 8 K (rows: one k, 8 MN elements); K-adjacent 128 B apart */
        L.lbo = 128, L.sbo = 128 * (k / 8), L.kstep = 256, L.bytes = mn * k * 2;
    } else { /* rows of swz bytes hold MN; 8 k-rows per atom; atoms along K, then the next MN run */
        L.sbo = 8 * swz, L.lbo = 8 * swz * (k / 8), L.kstep = 16 * swz, L.bytes = (mn / (swz / 2)) * L.lbo;
    }
    return L;
}

/* Byte offset of element (i, kk) of L relative to its start, before the swizzle. */
static size_t layout_at(const Layout *L, int i, int kk) {
    if (!L->mn_major && !L->swz)
        return (size_t)(i / 8) * L->sbo + (size_t)(kk / 8) * L->lbo + (i % 8) * 16 + (kk % 8) * 2;
    if (!L->mn_major) return (size_t)(i / 8) * L->sbo + (size_t)(i % 8) * L->swz + (size_t)kk * 2;
    if (!L->swz) return (size_t)(i / 8) * L->sbo + (i % 8) * 2 + (size_t)(kk / 8) * L->lbo + (kk % 8) * 16;
    int w = L->swz / 2;
    return (size_t)(i / w) * L->lbo + (size_t)(i % w) * 2 + (size_t)(kk % 8) * L->swz + (size_t)(kk / 8) * L->sbo;
}

/* Places the mn x k values h ([i][kk]) of L at byte base of img. */
static void place(unsigned char *img, size_t base, const Layout *L, const uint16_t *h) {
    for (int i = 0; i < L->mn; i++)
        for (int kk = 0; kk < L->k; kk++)
            memcpy(img + swizzled(base + layout_at(L, i, kk), L->swz), &h[i * L->k + kk], 2);
}

/* Largest |got - want| over n values relative to max(1, max |want|). */
static double rel_err(const float *got, const double *want, int n) {
    double scale = 1.0, err = 0.0;
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
    for (int i = 0; i < n; i++) err = fmax(err, fabs(got[i] - want[i]));
    return err / scale;
}

/* want[64 x n] = A[64 x k] * B where B is given as [n][k]. */
static void ref_gemm(const float *a, const float *b, int n, int k, double *want) {
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < n; c++) {
            double acc = 0.0;
            for (int i = 0; i < k; i++) acc += (double)a[r * k + i] * b[c * k + i];
            want[r * n + c] = acc;
        }
}

/* One SS kernel at one swizzle mode: A 64 x K and B N x K in the image, out = A * Bᵀ. */
static void check_ss(const char *kernel, bool bf16, int n, int a_mn_major, int b_mn_major, int swz) {
    /* K-major swizzled operands hold their K in one row (up to span/2 elements); the others take K = 32 */
    int ksteps = !a_mn_major && !b_mn_major && swz ? swz / 32 : 2, k = 16 * ksteps;
    Layout la = make_layout(64, k, a_mn_major, swz), lb = make_layout(n, k, b_mn_major, swz);
    int b_off = (la.bytes + 1023) / 1024 * 1024, bytes = (b_off + lb.bytes + 15) / 16 * 16;
    static uint16_t ah[64 * 64], bh[256 * 64];
    static float af[64 * 64], bf[256 * 64], out[64 * 256];
    static double want[64 * 256];
    fill_rounded(bf16, ah, af, (size_t)64 * k, 21);
    fill_rounded(bf16, bh, bf, (size_t)n * k, 22);
    unsigned char *img = calloc(1, (size_t)bytes);
    place(img, 0, &la, ah);
    place(img, (size_t)b_off, &lb, bh);
    ref_gemm(af, bf, n, k, want);
    CUdeviceptr dout = upload(NULL, sizeof(float) * 64 * n), dimg = upload(img, (size_t)bytes);
    int a_off = 0;
    void *p[] = {&dout,     &dimg,  &bytes,  &a_off,  &la.swz, &la.lbo,   &la.sbo,
                 &la.kstep, &b_off, &lb.swz, &lb.lbo, &lb.sbo, &lb.kstep, &ksteps};
    CHECK_CU(launch(kernel, 128, p));
    CHECK_CU(D.memcpyDtoH(out, dout, sizeof(float) * 64 * n));
    double e = rel_err(out, want, 64 * n);
    printf("  %s swizzle %3d K %d: max relative error %.3g\n", kernel, swz, k, e);
    CHECK(e < 1e-5);
    free(img);
    D.memFree(dout);
    D.memFree(dimg);
}

static void test_ss(void) {
    static const int swz[] = {0, 32, 64, 128};
    for (int i = 0; i < 4; i++) {
        check_ss("k_hop_ss_f16_kk", false, 64, 0, 0, swz[i]);
        check_ss("k_hop_ss_bf16_kk", true, 64, 0, 0, swz[i]);
        check_ss("k_hop_ss_f16_mn", false, 64, 1, 1, swz[i]);
        check_ss("k_hop_ss_bf16_mn", true, 64, 1, 1, swz[i]);
    }
    check_ss("k_hop_ss_bf16_n256", true, 256, 0, 0, 128);
    check_ss("k_hop_ss_f16_n8", false, 8, 0, 1, 0);
}

/* RS: A (64 x 16, row-major in global) from registers, B from the image. */
static void check_rs(const char *kernel, bool bf16, int b_mn_major, int swz) {
    Layout lb = make_layout(64, 16, b_mn_major, swz);
    int bytes = (lb.bytes + 15) / 16 * 16;
    static uint16_t ah[64 * 16], bh[64 * 16];
    static float af[64 * 16], bf[64 * 16], out[64 * 64];
    static double want[64 * 64];
    fill_rounded(bf16, ah, af, 64 * 16, 31);
    fill_rounded(bf16, bh, bf, 64 * 16, 32);
    unsigned char *img = calloc(1, (size_t)bytes);
    place(img, 0, &lb, bh);
    ref_gemm(af, bf, 64, 16, want);
    CUdeviceptr dout = upload(NULL, sizeof out), da = upload(ah, sizeof ah), dimg = upload(img, (size_t)bytes);
    void *p[] = {&dout, &da, &dimg, &bytes, &lb.swz, &lb.lbo, &lb.sbo};
    CHECK_CU(launch(kernel, 128, p));
    CHECK_CU(D.memcpyDtoH(out, dout, sizeof out));
    double e = rel_err(out, want, 64 * 64);
    printf("  %s swizzle %3d: max relative error %.3g\n", kernel, swz, e);
    CHECK(e < 1e-5);
    free(img);
    D.memFree(dout);
    D.memFree(da);
    D.memFree(dimg);
}

/* S = Q * Kᵀ, S rounded to bf16 and fed from registers into O = S * V (the accumulator layout reused as the A
 * fragment, as an attention kernel's P * V does), against plain C with the same rounding. */
static void check_chain(void) {
    static uint16_t qh[64 * 16], kh[16 * 16], vh[64 * 16];
    static float qf[64 * 16], kf[16 * 16], vt[64 * 16], sf[64 * 16], out[64 * 64];
    static double s[64 * 16], want[64 * 64];
    fill_rounded(true, qh, qf, 64 * 16, 61);
    fill_rounded(true, kh, kf, 16 * 16, 62);
    fill_rounded(true, vh, vt, 64 * 16, 63); /* V as [d][key]: the N-major operand's [n][k] */
    ref_gemm(qf, kf, 16, 16, s);
    for (int i = 0; i < 64 * 16; i++) sf[i] = from_bits(true, to_bits(true, (float)s[i]));
    ref_gemm(sf, vt, 64, 16, want);
    Layout lq = make_layout(64, 16, 0, 0), lk = make_layout(16, 16, 0, 0), lv = make_layout(64, 16, 1, 0);
    int q = 0, k = lq.bytes, v = k + lk.bytes, bytes = v + lv.bytes;
    unsigned char *img = calloc(1, (size_t)bytes);
    place(img, (size_t)q, &lq, qh);
    place(img, (size_t)k, &lk, kh);
    place(img, (size_t)v, &lv, vh);
    CUdeviceptr dout = upload(NULL, sizeof out), dimg = upload(img, (size_t)bytes);
    void *p[] = {&dout, &dimg, &bytes, &q, &k, &v};
    CHECK_CU(launch("k_hop_chain_bf16", 128, p));
    CHECK_CU(D.memcpyDtoH(out, dout, sizeof out));
    double e = rel_err(out, want, 64 * 64);
    printf("  S = Q*K^T (SS), O = bf16(S)*V (RS, N-major V): max relative error %.3g\n", e);
    CHECK(e < 1e-5);
    free(img);
    D.memFree(dout);
    D.memFree(dimg);
}

static void test_rs(void) {
    check_chain();
    check_rs("k_hop_rs_f16_mn", false, 1, 128);
    check_rs("k_hop_rs_f16_mn", false, 1, 0);
    check_rs("k_hop_rs_bf16_kk", true, 0, 32);
    check_rs("k_hop_rs_bf16_kk", true, 0, 64);
}

/* ---- TMA ---------------------------------------------------------------- */

/* A 16-bit tensor of dims[0] x dims[1] x dims[2] (innermost first) whose element e holds e + 1. */
typedef struct Tensor {
    unsigned dims[3];
    uint16_t *h;
    CUdeviceptr d;
    size_t n;
} Tensor;

static Tensor tensor_new(unsigned d0, unsigned d1, unsigned d2, bool zero) {
    Tensor t = {{d0, d1, d2}, NULL, 0, (size_t)d0 * d1 * d2};
    t.h = calloc(t.n, 2);
    for (size_t i = 0; i < t.n && !zero; i++) t.h[i] = (uint16_t)(i + 1);
    t.d = upload(t.h, t.n * 2);
    return t;
}

static CUresult encode(CUtensorMap *map, const Tensor *t, int rank, const unsigned *box, int swz) {
    cuuint64_t dims[3] = {t->dims[0], t->dims[1], t->dims[2]};
    cuuint64_t strides[2] = {(cuuint64_t)t->dims[0] * 2, (cuuint64_t)t->dims[0] * t->dims[1] * 2};
    cuuint32_t bx[3] = {box[0], box[1], box[2]}, es[3] = {1, 1, 1};
    CUtensorMapSwizzle s = swz == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                           : swz == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                           : swz == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                       : CU_TENSOR_MAP_SWIZZLE_NONE;
    return D.tensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, (cuuint32_t)rank, (void *)t->d, dims, strides,
                                  bx, es, CU_TENSOR_MAP_INTERLEAVE_NONE, s, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

/* The shared-memory image of the box at c (out-of-bounds elements 0), swizzled. */
static void box_image(const Tensor *t, int rank, const unsigned *box, const int *c, int swz, uint16_t *img) {
    unsigned nb = box[0] * box[1] * (rank == 3 ? box[2] : 1);
    for (unsigned e = 0; e < nb; e++) {
        unsigned x = e % box[0], y = e / box[0] % box[1], z = rank == 3 ? e / (box[0] * box[1]) : 0;
        long gx = c[0] + (long)x, gy = c[1] + (long)y, gz = rank == 3 ? c[2] + (long)z : 0;
        uint16_t v = 0;
        if (gx >= 0 && gx < t->dims[0] && gy >= 0 && gy < t->dims[1] && gz >= 0 && gz < t->dims[2])
            v = t->h[((size_t)gz * t->dims[1] + (size_t)gy) * t->dims[0] + (size_t)gx];
        size_t o = swizzled((size_t)e * 2, swz);
        img[o / 2] = v;
    }
}

static void check_tma_load(int rank, const unsigned *box, const int *c, int swz) {
    Tensor t = tensor_new(104, 40, rank == 3 ? 5 : 1, false);
    CUtensorMap map;
    CHECK_CU(encode(&map, &t, rank, box, swz));
    int box_bytes = (int)(box[0] * box[1] * (rank == 3 ? box[2] : 1) * 2);
    uint16_t *want = calloc((size_t)box_bytes / 2, 2), *got = calloc((size_t)box_bytes / 2, 2);
    box_image(&t, rank, box, c, swz, want);
    CUdeviceptr dout = upload(NULL, (size_t)box_bytes);
    int c0 = c[0], c1 = c[1], c2 = c[2];
    void *p2[] = {&dout, &map, &c0, &c1, &box_bytes};
    void *p3[] = {&dout, &map, &c0, &c1, &c2, &box_bytes};
    CHECK_CU(launch(rank == 2 ? "k_hop_tma_load_2d" : "k_hop_tma_load_3d", 128, rank == 2 ? p2 : p3));
    CHECK_CU(D.memcpyDtoH(got, dout, (size_t)box_bytes));
    int bad = 0;
    for (int i = 0; i < box_bytes / 2; i++) bad += got[i] != want[i];
    printf("  %dD box %ux%ux%u at (%d,%d,%d), swizzle %3d: %d of %d elements differ\n", rank, box[0], box[1],
           rank == 3 ? box[2] : 1, c[0], c[1], c[2], swz, bad, box_bytes / 2);
    CHECK(bad == 0);
    free(want);
    free(got);
    D.memFree(dout);
    D.memFree(t.d);
    free(t.h);
}

static void test_tma(void) {
    static const unsigned b64[3] = {64, 16, 1}, b32[3] = {32, 8, 1}, b16[3] = {16, 8, 1}, b3[3] = {64, 8, 3};
    static const int inside[3] = {8, 4, 0}, edge[3] = {72, 36, 0}, neg[3] = {-8, -3, 0}, c3[3] = {40, 30, 3};
    check_tma_load(2, b64, inside, 128);
    check_tma_load(2, b64, edge, 128); /* columns 104+ and rows 40+ fill with zeros */
    check_tma_load(2, b64, neg, 0);
    check_tma_load(2, b32, inside, 64);
    check_tma_load(2, b16, edge, 32);
    check_tma_load(3, b3, c3, 128); /* the last two planes partly out of bounds */
}

/* TMA stores: a box image written at c must land in the tensor, de-swizzled, clipped at its edges. */
static void check_tma_store(int rank, const unsigned *box, const int *c, int swz) {
    Tensor src = tensor_new(104, 40, rank == 3 ? 5 : 1, false); /* the values to store */
    Tensor dst = tensor_new(104, 40, rank == 3 ? 5 : 1, true);
    CUtensorMap map;
    CHECK_CU(encode(&map, &dst, rank, box, swz));
    int bytes = (int)(box[0] * box[1] * (rank == 3 ? box[2] : 1) * 2);
    uint16_t *img = calloc((size_t)bytes / 2, 2);
    box_image(&src, rank, box, c, swz, img);
    CUdeviceptr dimg = upload(img, (size_t)bytes);
    int c0 = c[0], c1 = c[1], c2 = c[2], fence = 1;
    void *p2[] = {&map, &dimg, &bytes, &c0, &c1, &fence};
    void *p3[] = {&map, &dimg, &bytes, &c0, &c1, &c2};
    CHECK_CU(launch(rank == 2 ? "k_hop_tma_store_2d" : "k_hop_tma_store_3d", 128, rank == 2 ? p2 : p3));
    CHECK_CU(D.memcpyDtoH(dst.h, dst.d, dst.n * 2));
    int bad = 0, stored = 0;
    for (size_t e = 0; e < dst.n; e++) {
        long x = (long)(e % dst.dims[0]), y = (long)(e / dst.dims[0] % dst.dims[1]),
             z = (long)(e / (dst.dims[0] * dst.dims[1]));
        int in = x >= c[0] && x < c[0] + (long)box[0] && y >= c[1] && y < c[1] + (long)box[1] &&
                 (rank == 2 || (z >= c[2] && z < c[2] + (long)box[2]));
        stored += in;
        bad += dst.h[e] != (in ? src.h[e] : 0);
    }
    printf("  %dD store at (%d,%d,%d), swizzle %3d: %d elements stored, %d wrong\n", rank, c[0], c[1], c[2], swz,
           stored, bad);
    CHECK(bad == 0 && stored > 0);
    free(img);
    D.memFree(dimg);
    D.memFree(src.d);
    D.memFree(dst.d);
    free(src.h);
    free(dst.h);
}

static void test_tma_store(void) {
    static const unsigned b64[3] = {64, 16, 1}, b3[3] = {32, 8, 2};
    static const int edge[3] = {72, 30, 0}, c3[3] = {8, 4, 4};
    check_tma_store(2, b64, edge, 128);
    check_tma_store(2, b64, edge, 0);
    check_tma_store(3, b3, c3, 64);
}

/* TMA (128-byte swizzle) feeding four chained k16 wgmmas: out = A * B for bf16 A, B of 64 x 64, B given
 * as [N][K] (mn 0: K-major) or [K][N] (mn 1: N-major, as V in P·V). The shared layouts come from TMA, not
 * from this file, so this also checks TMA's swizzle against wgmma's. */
static void check_tma_gemm(const char *kernel, int mn) {
    static uint16_t ah[64 * 64], bh[64 * 64];
    static float af[64 * 64], bf[64 * 64], bt[64 * 64], out[64 * 64];
    static double want[64 * 64];
    fill_rounded(true, ah, af, 64 * 64, 41);
    fill_rounded(true, bh, bf, 64 * 64, 42);
    for (int i = 0; i < 64; i++) /* bt: B as [n][k] for ref_gemm */
        for (int j = 0; j < 64; j++) bt[i * 64 + j] = mn ? bf[j * 64 + i] : bf[i * 64 + j];
    ref_gemm(af, bt, 64, 64, want);
    Tensor ta = {{64, 64, 1}, ah, upload(ah, sizeof ah), 64 * 64},
           tb = {{64, 64, 1}, bh, upload(bh, sizeof bh), 64 * 64};
    static const unsigned box[3] = {64, 64, 1};
    CUtensorMap ma, mb;
    CHECK_CU(encode(&ma, &ta, 2, box, 128));
    CHECK_CU(encode(&mb, &tb, 2, box, 128));
    CUdeviceptr dout = upload(NULL, sizeof out);
    void *p[] = {&dout, &ma, &mb};
    CHECK_CU(launch(kernel, 128, p));
    CHECK_CU(D.memcpyDtoH(out, dout, sizeof out));
    double e = rel_err(out, want, 64 * 64);
    printf("  TMA + wgmma 64x64x64 bf16, B %s-major: max relative error %.3g\n", mn ? "N" : "K", e);
    CHECK(e < 1e-5);
    D.memFree(dout);
    D.memFree(ta.d);
    D.memFree(tb.d);
}
static void test_tma_gemm(void) {
    check_tma_gemm("k_hop_tma_gemm", 0);
    check_tma_gemm("k_hop_tma_gemm_mn", 1);
}

/* A producer warpgroup and a consumer warpgroup through a two-stage mbarrier ring. */
static void test_pipeline(void) {
    enum { TILES = 7 };
    static float x[TILES * 64], out[64];
    sim_test_fill(x, TILES * 64, 51);
    CUdeviceptr dx = upload(x, sizeof x), dout = upload(NULL, sizeof out);
    cuuint64_t dims[2] = {64, TILES}, strides[1] = {256};
    cuuint32_t box[2] = {64, 1}, es[2] = {1, 1};
    CUtensorMap map;
    CHECK_CU(D.tensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)dx, dims, strides, box, es,
                                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    int tiles = TILES;
    void *p[] = {&dout, &map, &tiles};
    CHECK_CU(launch("k_hop_pipeline", 256, p));
    CHECK_CU(D.memcpyDtoH(out, dout, sizeof out));
    double worst = 0.0;
    for (int c = 0; c < 64; c++) {
        double want = 0.0;
        for (int i = 0; i < TILES; i++) want += (double)x[i * 64 + c] * (i + 1);
        worst = fmax(worst, fabs(out[c] - want));
    }
    printf("  %d tiles through 2 stages: max error %.3g\n", TILES, worst);
    CHECK(worst < 1e-4);
    D.memFree(dx);
    D.memFree(dout);
}

/* cuTensorMapEncodeTiled refuses what the hardware would. */
static void test_tmap_errors(void) {
    Tensor t = tensor_new(104, 40, 1, false);
    CUtensorMap map;
    static const unsigned wide[3] = {128, 8, 1}, ok[3] = {64, 8, 1}, big[3] = {300, 1, 1}, odd[3] = {4, 8, 1};
    CHECK(encode(&map, &t, 2, wide, 128) == CUDA_ERROR_INVALID_VALUE); /* 256-byte rows > 128-byte swizzle */
    CHECK_HAS(D.last_fault(), "exceeds the 128-byte swizzle span");
    CHECK(encode(&map, &t, 2, big, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "boxDim[0] = 300");
    CHECK(encode(&map, &t, 2, odd, 0) == CUDA_ERROR_INVALID_VALUE); /* 8 bytes per box row */
    CHECK_HAS(D.last_fault(), "not a multiple of 16");
    Tensor shifted = t;
    shifted.d += 8;
    CHECK(encode(&map, &shifted, 2, ok, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "not 16-byte aligned");
    Tensor tall = t;
    tall.dims[1] = 41; /* one row more than the allocation holds */
    CHECK(encode(&map, &tall, 2, ok, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK_HAS(D.last_fault(), "does not lie inside one device allocation");
    printf("  last: %s\n", D.last_fault());
    D.memFree(t.d);
    free(t.h);
}

/* Launches kernel (threads, params) and requires a failed launch whose report holds want. */
static void expect_fault(const char *kernel, unsigned threads, void **params, const char *want) {
    CUresult r = launch(kernel, threads, params);
    CHECK(r != CUDA_SUCCESS);
    CHECK_HAS(D.last_fault(), want);
    printf("  %s -> %s\n", kernel, D.last_fault());
}

static void test_faults(void) {
    CUdeviceptr dout = upload(NULL, 256 * sizeof(float));
    void *p1[] = {&dout};
    expect_fault("k_hop_desc_misaligned", 128, p1, "not in the first row of a 1024-byte swizzle atom");
    expect_fault("k_hop_desc_bad_swizzle", 128, p1, "cross a 32-byte swizzled row");
    expect_fault("k_hop_mbar_deadlock", 128, p1, "deadlock: spins on shortc_mbar_try_wait");
    CHECK_HAS(D.last_fault(), "waits for 1 of 2 arrivals");
    expect_fault("k_hop_mbar_uninit", 32, p1, "is not initialised in this block");
    expect_fault("k_hop_mbar_overarrive", 32, p1, "more arrivals in one phase than the count 1");
    /* an 8 x 32 K-major image for the N = 8 kernels */
    Layout l = make_layout(64, 16, 0, 0);
    int bytes = l.bytes;
    unsigned char *img = calloc(1, (size_t)bytes);
    CUdeviceptr dimg = upload(img, (size_t)bytes);
    void *p3[] = {&dout, &dimg, &bytes};
    expect_fault("k_hop_acc_early", 128, p3, "before the wgmma.wait_group");
    expect_fault("k_hop_no_fence", 128, p3, "without a wgmma.fence");
    expect_fault("k_hop_wg_partial", 64, p3, "needs a whole warpgroup (threads 0 to 127) but the block has 64 threads");
    expect_fault("k_hop_desc_diverge", 128, p3, "thread (77,0,0) passes a different B descriptor than thread (0,0,0)");
    /* the misuse of the async proxy needs checked mode's shared-memory record */
    int zero = 0, ksteps = 1;
    void *ps[] = {&dout,    &dimg, &bytes, &zero,  &zero,  &l.lbo,   &l.sbo,
                  &l.kstep, &zero, &zero,  &l.lbo, &l.sbo, &l.kstep, &ksteps};
    expect_fault("k_hop_ss_unfenced", 128, ps, "no fence.proxy.async");
    /* a TMA store of shared memory written with no fence */
    Tensor t = tensor_new(64, 16, 1, true);
    static const unsigned box[3] = {64, 16, 1};
    CUtensorMap map;
    CHECK_CU(encode(&map, &t, 2, box, 0));
    int tbytes = 64 * 16 * 2, c0 = 0, c1 = 0;
    CUdeviceptr dtimg = upload(NULL, (size_t)tbytes);
    void *pt[] = {&map, &dtimg, &tbytes, &c0, &c1, &zero};
    expect_fault("k_hop_tma_store_2d", 128, pt, "shortc_tma_store");
    CHECK_HAS(D.last_fault(), "no fence.proxy.async");
    /* an mbarrier expecting 16 bytes more than its TMA load brings */
    int bb = 64 * 16 * 2;
    void *pl[] = {&dout, &map, &c0, &c1, &bb};
    expect_fault("k_hop_tma_short", 128, pl, "16 transaction bytes");
    /* a box 64 bytes into the dynamic shared memory with the 128-byte swizzle */
    CUtensorMap swz;
    CHECK_CU(encode(&swz, &t, 2, box, 128));
    void *pm[] = {&dout, &swz};
    expect_fault("k_hop_tma_misaligned", 32, pm, "shared-memory box at byte 64 is not 1024-byte aligned");
    free(img);
    D.memFree(dimg);
    D.memFree(dtimg);
    D.memFree(t.d);
    free(t.h);
    D.memFree(dout);
}

/* setmaxnreg's operand is checked at compile time, as ptxas does. */
static void test_setmaxnreg(void) {
    static const char src[] =
        "extern \"C\" __global__ void k_bad(float *o) { shortc_setmaxnreg_inc<20>(); o[0] = 1; }\n";
    char path[1024];
    size_t n = 0, m = 0;
    char *s = NULL;
    snprintf(path, sizeof path, "%s/templates/prelude.cuh", SHORTC_SOURCE_DIR);
    bool ok = sim_test_append(&s, &n, path);
    snprintf(path, sizeof path, "%s/templates/hopper.cuh", SHORTC_SOURCE_DIR);
    ok = ok && sim_test_append(&s, &n, path);
    CHECK(ok);
    if (!ok) return;
    m = strlen(src);
    s = realloc(s, n + m + 1);
    memcpy(s + n, src, m + 1);
    const char *names[] = {"k_bad"};
    RtCompileRequest req = {.source = s,
                            .len = n + m,
                            .name = "hopper_bad",
                            .arch = 90,
                            .cache_dir = sim_test_cache(),
                            .kernel_names = names,
                            .nkernels = 1};
    static char err[65536];
    RtCompiled out;
    srt_status st = D.compile_module(&req, &out, err, sizeof err);
    CHECK(st != SRT_OK);
    CHECK_HAS(err, "setmaxnreg: 24 to 256 registers");
    if (st == SRT_OK) rt_compiled_release(&out);
    free(s);
}

static const SimTestCase CASES[] = {
    {"ss", test_ss},
    {"rs", test_rs},
    {"tma", test_tma},
    {"tma_store", test_tma_store},
    {"tma_gemm", test_tma_gemm},
    {"pipeline", test_pipeline},
    {"tmap_errors", test_tmap_errors},
    {"faults", test_faults},
    {"setmaxnreg", test_setmaxnreg},
};

int main(int argc, char **argv) {
    if (rt_driver_sim(&D, 2, 1, errbuf, sizeof errbuf) != SRT_OK) {
        fprintf(stderr, "rt_driver_sim: %s\n", errbuf);
        return 1;
    }
    const char *only = argc > 1 ? argv[1] : NULL;
    if (!only || strcmp(only, "setmaxnreg") != 0) {
        M = sim_test_module_with(&D, "hopper.cuh", "hopper.cu", NAMES, NNAMES, 90, NULL);
        if (!M) return check_done("sim_hopper");
    }
    return sim_test_run_cases("sim_hopper", CASES, sizeof CASES / sizeof *CASES, only, NULL);
}
