/*
 * test_tcore.c — the tensor-core intrinsics of templates/prelude.cuh and the
 * fragment building blocks of templates/mma_frag.cuh on the simulator:
 * tests/sim/kernels/tcore.cu runs one warp per launch and every result is
 * compared with plain C on the same (fp16-, bf16- or TF32-rounded) inputs.
 * tf32: shortc_cvt_tf32 against rt_round_tf32 (ties away from zero,
 * denormals, infinity, NaN), one shortc_mma_m16n8k8_tf32 against plain C on
 * the rounded inputs (with converted operands and with raw fp32 bits, which
 * the simulator rounds the same way) and not equal to the unrounded product,
 * and the fragment building blocks (Q·Kᵀ, P·V, a FlashAttention-2 pass) on
 * fp32 tiles.
 *
 *   sim_tcore [case]     runs one case (ldmatrix, qk, pv, attn, tf32, faults, cp_async) or all
 */
#include "sim_test.h"

#include "half.h"

static RtDriver D;
static CUmodule M;
static char errbuf[4096];

static const char *const NAMES[] = {
    "k_tc_qk_f16",   "k_tc_qk_bf16",   "k_tc_pv_f16",   "k_tc_pv_bf16", "k_tc_attn_f16", "k_tc_attn_bf16",
    "k_tc_ldmatrix", "k_tc_ldmatrix_misaligned", "k_tc_cp_async", "k_tc_ldmatrix_mixed",
    "k_tc_qk_tf32",  "k_tc_pv_tf32",   "k_tc_attn_tf32", "k_tc_mma_tf32",
};
#define NNAMES ((int)(sizeof NAMES / sizeof *NAMES))

/* The two 16-bit element types of the kernels. */
typedef enum { TC_F16, TC_BF16 } TcType;

static const char *type_name(TcType t) { return t == TC_F16 ? "f16" : "bf16"; }

/* x rounded to t, as bits. */
static uint16_t to_bits(TcType t, float x) { return t == TC_F16 ? rt_f32_to_f16(x) : rt_f32_to_bf16(x); }
/* bits of t as float. */
static float from_bits(TcType t, uint16_t h) { return t == TC_F16 ? rt_f16_to_f32(h) : rt_bf16_to_f32(h); }

/* n random values in [-amp, amp) rounded to t: bits into h, their exact values into f. */
static void fill_rounded(TcType t, uint16_t *h, float *f, size_t n, unsigned seed, float amp) {
    sim_test_fill(f, n, seed);
    for (size_t i = 0; i < n; i++) {
        h[i] = to_bits(t, f[i] * amp);
        f[i] = from_bits(t, h[i]);
    }
}

static CUdeviceptr upload(const void *h, size_t n) {
    CUdeviceptr d = 0;
    CHECK_CU(D.memAlloc(&d, n));
    if (h) CHECK_CU(D.memcpyHtoD(d, h, n));
    return d;
}

static CUresult launch_warp(const char *name, void **params) {
    CUfunction f = sim_test_fn(&D, M, name);
    if (!f) return CUDA_ERROR_NOT_FOUND;
    return D.launchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
}

/* The kernel name `base`_f16 or `base`_bf16. */
static const char *kname(const char *base, TcType t) {
    static char buf[64];
    snprintf(buf, sizeof buf, "%s_%s", base, type_name(t));
    return buf;
}

/* Largest |got - want| over n values, relative to max(1, max |want|). */
static double rel_err(const float *got, const double *want, int n) {
    double scale = 1.0, err = 0.0;
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
    for (int i = 0; i < n; i++) err = fmax(err, fabs(got[i] - want[i]));
    return err / scale;
}

/* ldmatrix x4 / x4.trans / x2 / x2.trans on a 32 x 8 matrix whose element (r, c) is r * 8 + c. */
static void test_ldmatrix(void) {
    uint16_t m[256];
    unsigned out[32 * 12];
    for (int i = 0; i < 256; i++) m[i] = (uint16_t)i;
    CUdeviceptr dm = upload(m, sizeof m), dout = upload(NULL, sizeof out);
    void *p[] = {&dout, &dm};
    CHECK_CU(launch_warp("k_tc_ldmatrix", p));
    CHECK_CU(D.memcpyDtoH(out, dout, sizeof out));
    for (unsigned l = 0; l < 32; l++) {
        const unsigned *r = out + l * 12;
        unsigned row = l / 4, col = 2 * (l % 4);
        for (unsigned i = 0; i < 4; i++) {
            /* matrix i is rows 8i..8i+7 of m */
            unsigned plain = m[(8 * i + row) * 8 + col] | (unsigned)m[(8 * i + row) * 8 + col + 1] << 16;
            unsigned trans = m[(8 * i + col) * 8 + row] | (unsigned)m[(8 * i + col + 1) * 8 + row] << 16;
            CHECK(r[i] == plain);
            CHECK(r[4 + i] == trans);
            if (i < 2) CHECK(r[8 + i] == plain);
            if (i < 2) CHECK(r[10 + i] == trans);
        }
    }
    D.memFree(dm);
    D.memFree(dout);
}

/* want[M x N] = A[M x K] · B in double; B is K x N row-major, or N x K (bt: B transposed, as K). */
static void ref_gemm(const float *a, const float *b, bool bt, int m, int n, int k, double *want) {
    for (int r = 0; r < m; r++)
        for (int c = 0; c < n; c++) {
            double acc = 0.0;
            for (int i = 0; i < k; i++) acc += (double)a[r * k + i] * (bt ? b[c * k + i] : b[i * n + c]);
            want[r * n + c] = acc;
        }
}

/*
 * One product kernel (`base`_f16/_bf16: out[16 x n], A given as a (t bits, or
 * fp32 when a_f32) 16 x k, B as t bits) against ref_gemm on the same rounded
 * inputs; products are exact in fp32, so only the fp32 sum rounds.
 */
static void check_product(const char *base, TcType t, bool a_f32, bool bt, int n, int k) {
    enum { MAXE = 16 * 64 };
    uint16_t ah[MAXE], bh[MAXE];
    float af[MAXE], bf[MAXE], out[MAXE];
    double want[MAXE];
    fill_rounded(t, ah, af, (size_t)16 * k, 11, 1.0f);
    fill_rounded(t, bh, bf, (size_t)n * k, 12, 1.0f);
    ref_gemm(af, bf, bt, 16, n, k, want);
    CUdeviceptr dout = upload(NULL, sizeof(float) * 16 * n);
    CUdeviceptr da = a_f32 ? upload(af, sizeof(float) * 16 * k) : upload(ah, sizeof(uint16_t) * 16 * k);
    CUdeviceptr db = upload(bh, sizeof(uint16_t) * n * k);
    void *p[] = {&dout, &da, &db};
    CHECK_CU(launch_warp(kname(base, t), p));
    CHECK_CU(D.memcpyDtoH(out, dout, sizeof(float) * 16 * n));
    double e = rel_err(out, want, 16 * n);
    printf("  %s %s: max relative error %.3g\n", base, type_name(t), e);
    CHECK(e < 1e-5);
    D.memFree(dout);
    D.memFree(da);
    D.memFree(db);
}

/* S = Q·Kᵀ for Q 16 x 64, K 16 x 64. */
static void test_qk(void) {
    check_product("k_tc_qk", TC_F16, false, true, 16, 64);
    check_product("k_tc_qk", TC_BF16, false, true, 16, 64);
}

/* O = P·V for P 16 x 16 (fp32 values exact in t), V 16 x 64. */
static void test_pv(void) {
    check_product("k_tc_pv", TC_F16, true, false, 64, 16);
    check_product("k_tc_pv", TC_BF16, true, false, 64, 16);
}

/* softmax(scale·Q·Kᵀ)·V in double for 16 queries, 64 keys, head dim 64; query i sees keys j <= i + off. */
static void attn_ref(const float *q, const float *k, const float *v, double scale, int off, double *out) {
    for (int r = 0; r < 16; r++) {
        double s[64], mx = -INFINITY, sum = 0.0;
        int n = r + off + 1 < 64 ? r + off + 1 : 64;
        for (int j = 0; j < n; j++) {
            double acc = 0.0;
            for (int d = 0; d < 64; d++) acc += (double)q[r * 64 + d] * k[j * 64 + d];
            s[j] = acc * scale;
            mx = fmax(mx, s[j]);
        }
        for (int j = 0; j < n; j++) sum += s[j] = exp(s[j] - mx);
        for (int d = 0; d < 64; d++) {
            double acc = 0.0;
            for (int j = 0; j < n; j++) acc += s[j] * v[j * 64 + d];
            out[r * 64 + d] = acc / sum;
        }
    }
}

/* One FlashAttention-2 tile pass (two key tiles, online softmax; query i sees keys j <= i + off)
 * against the double reference. */
static void check_attn(TcType t, int off) {
    enum { NQ = 16 * 64, NK = 64 * 64 };
    static uint16_t qh[NQ], kh[NK], vh[NK];
    static float qf[NQ], kf[NK], vf[NK], o[NQ];
    static double want[NQ];
    /* scores spread over several units so that the max and the rescale matter */
    fill_rounded(t, qh, qf, NQ, 31, 2.0f);
    fill_rounded(t, kh, kf, NK, 32, 2.0f);
    fill_rounded(t, vh, vf, NK, 33, 1.0f);
    float scale = 0.125f; /* 1/sqrt(64) */
    attn_ref(qf, kf, vf, scale, off, want);
    CUdeviceptr dO = upload(NULL, sizeof o), dq = upload(qh, sizeof qh), dk = upload(kh, sizeof kh),
                dv = upload(vh, sizeof vh);
    void *p[] = {&dO, &dq, &dk, &dv, &scale, &off};
    CHECK_CU(launch_warp(kname("k_tc_attn", t), p));
    CHECK_CU(D.memcpyDtoH(o, dO, sizeof o));
    double e = rel_err(o, want, NQ);
    printf("  attn %s (keys j <= i + %d): max relative error %.3g\n", type_name(t), off, e);
    for (int i = 0; i < NQ; i++) CHECK(isfinite(o[i]));
    /* P is rounded to t before P·V: about 2^-11 (f16) or 2^-8 (bf16) per probability */
    CHECK(e < (t == TC_F16 ? 5e-4 : 4e-3));
    D.memFree(dO);
    D.memFree(dq);
    D.memFree(dk);
    D.memFree(dv);
}
static void test_attn(void) {
    check_attn(TC_F16, 1 << 20); /* no mask */
    check_attn(TC_BF16, 1 << 20);
    check_attn(TC_F16, 20);      /* keys 32-63, processed first, are masked for queries 0-11 */
    check_attn(TC_BF16, 20);
}

/* ---- TF32 ---------------------------------------------------------------- */

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* n random values in [-amp, amp): fp32 into raw, rounded to TF32 (rt_round_tf32) into r. */
static void fill_tf32(float *raw, float *r, size_t n, unsigned seed, float amp) {
    sim_test_fill(raw, n, seed);
    for (size_t i = 0; i < n; i++) r[i] = rt_round_tf32(raw[i] *= amp);
}

/* shortc_cvt_tf32 on 32 values against rt_round_tf32, and one m16n8k8 TF32 MMA against plain C. */
static void test_tf32_mma(void) {
    static const uint32_t special[] = {
        0x3f801000u, /* 1 + half an ulp of TF32: a tie, away from zero -> 0x3f802000 */
        0xbf801000u, /* its negative */
        0x3f800fffu, /* just below the tie: down */
        0x3f803000u, /* 1 + 1.5 ulp: a tie above an odd mantissa, away -> 0x3f804000 */
        0x00001000u, /* a denormal tie */
        0x7f800000u, /* +inf */
        0xff800000u, /* -inf */
        0x7fc00001u, /* a NaN with payload */
    };
    enum { NS = sizeof special / sizeof special[0] };
    float x[32], A[128], Ar[128], B[64], Br[64], C[128], Cr[128], out[128];
    unsigned cvt[32];
    sim_test_fill(x, 32, 41);
    for (int i = 0; i < NS; i++) x[i] = bits_f32(special[i]);
    fill_tf32(A, Ar, 128, 42, 2.0f);
    fill_tf32(B, Br, 64, 43, 2.0f);
    fill_tf32(C, Cr, 128, 44, 1.0f);
    double want[128], unrounded[128];
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++) {
            double acc = C[r * 8 + c], raw = C[r * 8 + c];
            for (int k = 0; k < 8; k++) {
                acc += (double)Ar[r * 8 + k] * Br[k * 8 + c];
                raw += (double)A[r * 8 + k] * B[k * 8 + c];
            }
            want[r * 8 + c] = acc;
            unrounded[r * 8 + c] = raw;
        }
    CUdeviceptr dD = upload(NULL, sizeof out), dc = upload(NULL, sizeof cvt), dx = upload(x, sizeof x),
                dA = upload(A, sizeof A), dB = upload(B, sizeof B), dC = upload(C, sizeof C);
    for (int convert = 1; convert >= 0; convert--) {
        void *p[] = {&dD, &dc, &dx, &dA, &dB, &dC, &convert};
        CHECK_CU(launch_warp("k_tc_mma_tf32", p));
        CHECK_CU(D.memcpyDtoH(out, dD, sizeof out));
        CHECK_CU(D.memcpyDtoH(cvt, dc, sizeof cvt));
        for (int i = 0; i < 32; i++) {
            uint32_t want_bits = f32_bits(rt_round_tf32(x[i]));
            if (i == 7) CHECK(cvt[i] == f32_bits(x[i])); /* NaN kept bit for bit */
            else CHECK(cvt[i] == want_bits);
        }
        CHECK(cvt[0] == 0x3f802000u && cvt[1] == 0xbf802000u && cvt[2] == 0x3f800000u && cvt[3] == 0x3f804000u &&
              cvt[4] == 0x00002000u && cvt[5] == 0x7f800000u);
        double e = rel_err(out, want, 128), u = rel_err(out, unrounded, 128);
        printf("  mma.m16n8k8 tf32 (%s operands): max relative error %.3g against the rounded inputs, %.3g against "
               "the fp32 ones\n", convert ? "converted" : "raw", e, u);
        CHECK(e < 1e-6); /* products exact in fp32, 8 terms and C summed in fp32 */
        CHECK(u > 1e-5); /* the rounding to TF32 shows */
    }
    D.memFree(dD);
    D.memFree(dc);
    D.memFree(dx);
    D.memFree(dA);
    D.memFree(dB);
    D.memFree(dC);
}

/* The fragment building blocks on fp32 tiles (TF32 MMAs): Q·Kᵀ (16 x 64 by 16 x 64) and P·V (16 x 16 by
 * 16 x 64) on TF32 inputs (exact products: fp32 sums only), and the FlashAttention-2 pass (P rounded to TF32
 * before P·V: about 2^-11 per probability, as fp16). */
static void test_tf32_frags(void) {
    enum { NQ = 16 * 64, NK = 64 * 64 };
    static float q[NQ], qr[NQ], k[NK], kr[NK], v[NK], vr[NK], o[NK];
    static double want[NK];
    fill_tf32(q, qr, NQ, 51, 2.0f);
    fill_tf32(k, kr, NK, 52, 2.0f);
    fill_tf32(v, vr, NK, 53, 1.0f);
    /* Q·Kᵀ: raw fp32 inputs (the kernel rounds Q as it stages it, K as it loads its fragments) */
    ref_gemm(qr, kr, true, 16, 16, 64, want);
    CUdeviceptr dO = upload(NULL, sizeof o), dq = upload(q, sizeof q), dk = upload(k, sizeof k), dv = upload(v, sizeof v);
    void *pq[] = {&dO, &dq, &dk};
    CHECK_CU(launch_warp("k_tc_qk_tf32", pq));
    CHECK_CU(D.memcpyDtoH(o, dO, sizeof(float) * 16 * 16));
    double e = rel_err(o, want, 16 * 16);
    printf("  k_tc_qk tf32: max relative error %.3g\n", e);
    CHECK(e < 1e-5);
    /* P·V: P exact in TF32 (from the rounded queries), V raw */
    CUdeviceptr dp = upload(qr, sizeof(float) * 16 * 16);
    ref_gemm(qr, vr, false, 16, 64, 16, want);
    void *pv[] = {&dO, &dp, &dv};
    CHECK_CU(launch_warp("k_tc_pv_tf32", pv));
    CHECK_CU(D.memcpyDtoH(o, dO, sizeof(float) * 16 * 64));
    e = rel_err(o, want, 16 * 64);
    printf("  k_tc_pv tf32: max relative error %.3g\n", e);
    CHECK(e < 1e-5);
    float scale = 0.125f;
    for (int off = 1 << 20; off >= 20; off = off == 20 ? 0 : 20) {
        attn_ref(qr, kr, vr, scale, off, want);
        void *pa[] = {&dO, &dq, &dk, &dv, &scale, &off};
        CHECK_CU(launch_warp("k_tc_attn_tf32", pa));
        CHECK_CU(D.memcpyDtoH(o, dO, sizeof(float) * NQ));
        e = rel_err(o, want, NQ);
        printf("  attn tf32 (keys j <= i + %d): max relative error %.3g\n", off, e);
        for (int i = 0; i < NQ; i++) CHECK(isfinite(o[i]));
        CHECK(e < 5e-4);
    }
    D.memFree(dO);
    D.memFree(dq);
    D.memFree(dk);
    D.memFree(dv);
    D.memFree(dp);
}

static void test_tf32(void) {
    test_tf32_mma();
    test_tf32_frags();
}

static void test_faults(void) {
    CUdeviceptr dout = upload(NULL, 32 * 4 * sizeof(unsigned));
    void *p[] = {&dout};
    CUresult r = launch_warp("k_tc_ldmatrix_misaligned", p);
    CHECK(r == CUDA_ERROR_LAUNCH_FAILED);
    CHECK_HAS(D.last_fault(), "not 16-byte aligned");
    CHECK_HAS(D.last_fault(), "shortc_ldmatrix");
    printf("  misaligned -> %s\n", D.last_fault());
    /* every lane must ask for the same shape */
    r = launch_warp("k_tc_ldmatrix_mixed", p);
    CHECK(r == CUDA_ERROR_LAUNCH_FAILED);
    CHECK_HAS(D.last_fault(), "shortc_ldmatrix with x4 in lane 0 but x4.trans in lane 16");
    printf("  mixed shapes -> %s\n", D.last_fault());
    D.memFree(dout);
}

/* cp.async completes at the wait_group that covers its group, not before. */
static void test_cp_async(void) {
    unsigned src[64 * 4], out[32 * 4];
    for (int i = 0; i < 64 * 4; i++) src[i] = 1000u + (unsigned)i;
    CUdeviceptr ds = upload(src, sizeof src), dout = upload(NULL, sizeof out);
    void *p[] = {&dout, &ds};
    CHECK_CU(launch_warp("k_tc_cp_async", p));
    CHECK_CU(D.memcpyDtoH(out, dout, sizeof out));
    for (int l = 0; l < 32; l++) {
        CHECK(out[l * 4 + 0] == 0);                 /* not before a wait */
        CHECK(out[l * 4 + 1] == src[l * 4]);        /* wait<1>: the older group is complete */
        CHECK(out[l * 4 + 2] == 0);                 /* ... the newer one may still be pending */
        CHECK(out[l * 4 + 3] == src[(32 + l) * 4]); /* wait<0>: all complete */
    }
    D.memFree(ds);
    D.memFree(dout);
}

static const SimTestCase CASES[] = {
    {"ldmatrix", test_ldmatrix}, {"qk", test_qk}, {"pv", test_pv}, {"attn", test_attn}, {"tf32", test_tf32},
    {"faults", test_faults},
    {"cp_async", test_cp_async},
};

int main(int argc, char **argv) {
    if (rt_driver_sim(&D, 2, 1, errbuf, sizeof errbuf) != SRT_OK) {
        fprintf(stderr, "rt_driver_sim: %s\n", errbuf);
        return 1;
    }
    M = sim_test_module_with(&D, "mma_frag.cuh", "tcore.cu", NAMES, NNAMES, 80, NULL);
    if (!M) return check_done("sim_tcore");
    return sim_test_run_cases("sim_tcore", CASES, sizeof CASES / sizeof *CASES, argc > 1 ? argv[1] : NULL, NULL);
}
