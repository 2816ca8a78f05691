// Tensor-core building blocks under test (tests/sim/test_tcore.c): the
// harness pastes templates/prelude.cuh and templates/mma_frag.cuh in front,
// as the emitter would. One warp per block; every kernel has an fp16 and a
// bf16 instance, the fragment kernels a TF32 one (fp32 tiles, m16n8k8) too. The same file compiles with NVRTC for sm_80 and sm_90
// (tests/tools/nvrtc_gate, tests/cmake/tcore.cmake) and its SASS must hold
// HMMA and LDSM (tests/gate/tcore_sass.sh).

// Row stride of the shared tiles: 64 columns + 8 padding (144 bytes, 16-byte aligned rows).
// The shared tiles are declared in the kernels themselves (the simulator sizes
// a kernel's static shared memory from the declarations in its own body).
#define TC_LD 72

// rows x 64 elements from global (row-major, 64 per row) into shared with
// 16-byte cp.async copies, then a full wait.
template <typename T>
__device__ __forceinline__ void tc_stage(T *dst, const T *src, int rows) {
    constexpr int EPC = shortc_frag_epc<T>(), CPR = 64 / EPC;  // elements per copy, copies per row
    const int l = threadIdx.x & 31;
    for (int c = l; c < rows * CPR; c += 32) {
        int r = c / CPR, col = (c % CPR) * EPC;
        shortc_cp_async_16(dst + r * TC_LD + col, src + r * 64 + col);
    }
    shortc_cp_async_commit();
    shortc_cp_async_wait<0>();
    __syncwarp();
}

// fp32 A-operand tiles (rows x 64) rounded to TF32 in place, as attn_mma.cuh stages Q (shortc_frag_load_a reads
// them as they are); 2-byte tiles are left alone.
template <typename T>
__device__ __forceinline__ void tc_round_a(T *tile, int rows) {
    if constexpr (sizeof(T) == 4) {
        for (int i = threadIdx.x & 31; i < rows * 64; i += 32) shortc_frag_st_op(tile + i / 64 * TC_LD + i % 64, tile[i / 64 * TC_LD + i % 64]);
        __syncwarp();
    }
}

// Accumulators (NB n8 blocks in the mma C layout) to out, row-major with row
// stride ld; rows g times f0, rows g+8 times f1.
template <int NB>
__device__ __forceinline__ void tc_store_acc(float *out, int ld, const float acc[NB][4], float f0, float f1) {
    const int l = threadIdx.x & 31, g = l >> 2, t = l & 3;
    for (int j = 0; j < NB; j++) {
        out[g * ld + 8 * j + 2 * t] = acc[j][0] * f0;
        out[g * ld + 8 * j + 2 * t + 1] = acc[j][1] * f0;
        out[(g + 8) * ld + 8 * j + 2 * t] = acc[j][2] * f1;
        out[(g + 8) * ld + 8 * j + 2 * t + 1] = acc[j][3] * f1;
    }
}

// S[16 x 16] = Q[16 x 64] · K[16 x 64]ᵀ, written row-major.
template <typename T>
__device__ __forceinline__ void tc_qk(float *S, const T *Q, const T *K, T *q, T *k) {
    tc_stage(q, Q, 16);
    tc_stage(k, K, 16);
    tc_round_a(q, 16);
    float s[2][4];
    shortc_frag_qk<T, 64, 16>(s, q, TC_LD, k, TC_LD);
    tc_store_acc<2>(S, 16, s, 1.0f, 1.0f);
}
extern "C" __global__ void k_tc_qk_f16(float *S, const __half *Q, const __half *K) {
    __shared__ __half q[16 * TC_LD], k[16 * TC_LD];
    tc_qk(S, Q, K, q, k);
}
extern "C" __global__ void k_tc_qk_bf16(float *S, const __nv_bfloat16 *Q, const __nv_bfloat16 *K) {
    __shared__ __nv_bfloat16 q[16 * TC_LD], k[16 * TC_LD];
    tc_qk(S, Q, K, q, k);
}
extern "C" __global__ void k_tc_qk_tf32(float *S, const float *Q, const float *K) {
    __shared__ __align__(16) float q[16 * TC_LD], k[16 * TC_LD];
    tc_qk(S, Q, K, q, k);
}

// O[16 x 64] = P[16 x 16] · V[16 x 64]; P row-major fp32 read into the
// accumulator layout, packed to A fragments in registers, V via ldmatrix.trans.
template <typename T>
__device__ __forceinline__ void tc_pv(float *O, const float *P, const T *V, T *v) {
    tc_stage(v, V, 16);
    const int l = threadIdx.x & 31, g = l >> 2, t = l & 3;
    float p[2][4], o[8][4];
    for (int j = 0; j < 2; j++) {
        p[j][0] = P[g * 16 + 8 * j + 2 * t];
        p[j][1] = P[g * 16 + 8 * j + 2 * t + 1];
        p[j][2] = P[(g + 8) * 16 + 8 * j + 2 * t];
        p[j][3] = P[(g + 8) * 16 + 8 * j + 2 * t + 1];
    }
    for (int j = 0; j < 8; j++) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
    shortc_frag_pv<T, 16, 64>(o, p, v, TC_LD);
    tc_store_acc<8>(O, 64, o, 1.0f, 1.0f);
}
extern "C" __global__ void k_tc_pv_f16(float *O, const float *P, const __half *V) {
    __shared__ __half v[16 * TC_LD];
    tc_pv(O, P, V, v);
}
extern "C" __global__ void k_tc_pv_bf16(float *O, const float *P, const __nv_bfloat16 *V) {
    __shared__ __nv_bfloat16 v[16 * TC_LD];
    tc_pv(O, P, V, v);
}
extern "C" __global__ void k_tc_pv_tf32(float *O, const float *P, const float *V) {  // V by LDS (no 32-bit ldmatrix.trans)
    __shared__ __align__(16) float v[16 * TC_LD];
    tc_pv(O, P, V, v);
}

// One FlashAttention-2 pass of 16 queries over 64 keys in two key tiles of
// 32, the later tile first (online softmax: running max, rescale, running
// sum), head dim 64: O = softmax(scale · Q·Kᵀ) · V, written row-major [16 x 64].
// Query i sees key j when j <= i + off (off >= 0; a large off: no mask), so
// with a small off the first tile is wholly masked for the first rows.
template <typename T>
__device__ __forceinline__ void tc_attn(float *O, const T *Q, const T *K, const T *V, float scale, int off, T *q, T *k,
                                        T *v) {
    tc_stage(q, Q, 16);
    tc_stage(k, K, 64);
    tc_stage(v, V, 64);
    tc_round_a(q, 16);
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    float o[8][4], m[2] = {shortc_frag_neg_inf(), shortc_frag_neg_inf()}, l[2] = {0.0f, 0.0f};
    for (int j = 0; j < 8; j++) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
    for (int kt = 32; kt >= 0; kt -= 32) {
        float s[4][4];
        shortc_frag_qk<T, 64, 32>(s, q, TC_LD, k + kt * TC_LD, TC_LD);
        for (int j = 0; j < 4; j++)
            for (int e = 0; e < 4; e++)
                if (kt + 8 * j + 2 * t + (e & 1) > g + 8 * (e >> 1) + off) s[j][e] = shortc_frag_neg_inf();
        shortc_frag_softmax_tile<4, 8>(s, o, m, l, scale);
        shortc_frag_pv<T, 32, 64>(o, s, v + kt * TC_LD, TC_LD);
    }
    tc_store_acc<8>(O, 64, o, 1.0f / l[0], 1.0f / l[1]);
}
extern "C" __global__ void k_tc_attn_f16(float *O, const __half *Q, const __half *K, const __half *V, float scale,
                                         int off) {
    __shared__ __half q[16 * TC_LD], k[64 * TC_LD], v[64 * TC_LD];
    tc_attn(O, Q, K, V, scale, off, q, k, v);
}
extern "C" __global__ void k_tc_attn_bf16(float *O, const __nv_bfloat16 *Q, const __nv_bfloat16 *K,
                                          const __nv_bfloat16 *V, float scale, int off) {
    __shared__ __nv_bfloat16 q[16 * TC_LD], k[64 * TC_LD], v[64 * TC_LD];
    tc_attn(O, Q, K, V, scale, off, q, k, v);
}
extern "C" __global__ void k_tc_attn_tf32(float *O, const float *Q, const float *K, const float *V, float scale, int off) {
    __shared__ __align__(16) float q[16 * TC_LD], k[64 * TC_LD], v[64 * TC_LD];
    tc_attn(O, Q, K, V, scale, off, q, k, v);
}

// The TF32 intrinsics alone. cvt[l] = shortc_cvt_tf32(X[l]); D[16 x 8] = A[16 x 8] B[8 x 8] + C[16 x 8] (all
// row-major fp32) by one shortc_mma_m16n8k8_tf32 with the fragments of the PTX ISA (g = lane/4, t = lane%4: a =
// A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]; b = B[t][g], B[t+4][g]; c/d rows g, g+8, columns 2t, 2t+1); convert:
// the operands by shortc_cvt_tf32 first (the contract), else their raw fp32 bits (the simulator then rounds
// them as cvt.rna does; tests/sim/test_tcore.c).
extern "C" __global__ void k_tc_mma_tf32(float *D, unsigned *cvt, const float *X, const float *A, const float *B,
                                         const float *C, int convert) {
    const int l = threadIdx.x & 31, g = l >> 2, t = l & 3;
    cvt[l] = shortc_cvt_tf32(X[l]);
    const float av[4] = {A[g * 8 + t], A[(g + 8) * 8 + t], A[g * 8 + t + 4], A[(g + 8) * 8 + t + 4]};
    const float bv[2] = {B[t * 8 + g], B[(t + 4) * 8 + g]};
    unsigned a[4], b[2];
    for (int i = 0; i < 4; i++) a[i] = convert ? shortc_cvt_tf32(av[i]) : __float_as_uint(av[i]);
    for (int i = 0; i < 2; i++) b[i] = convert ? shortc_cvt_tf32(bv[i]) : __float_as_uint(bv[i]);
    const float c[4] = {C[g * 8 + 2 * t], C[g * 8 + 2 * t + 1], C[(g + 8) * 8 + 2 * t], C[(g + 8) * 8 + 2 * t + 1]};
    float d[4];
    shortc_mma_m16n8k8_tf32(d, a, b, c);
    D[g * 8 + 2 * t] = d[0];
    D[g * 8 + 2 * t + 1] = d[1];
    D[(g + 8) * 8 + 2 * t] = d[2];
    D[(g + 8) * 8 + 2 * t + 1] = d[3];
}

// The raw ldmatrix forms on a 32 x 8 matrix of 16-bit values M (row-major,
// staged with 128-bit loads and stores): lane l passes row l, so matrix i is
// rows 8i..8i+7. out[l*12 + 0..3] = x4, 4..7 = x4.trans, 8..9 = x2,
// 10..11 = x2.trans.
extern "C" __global__ void k_tc_ldmatrix(unsigned *out, const unsigned short *M) {
    __shared__ unsigned short m[32 * 8];
    const int l = threadIdx.x & 31;
    shortc_st128(&m[l * 8], shortc_ld128(&M[l * 8]));
    __syncwarp();
    unsigned *r = out + l * 12;
    shortc_ldmatrix_x4(r, &m[l * 8]);
    shortc_ldmatrix_x4_trans(r + 4, &m[l * 8]);
    shortc_ldmatrix_x2(r + 8, &m[l * 8]);
    shortc_ldmatrix_x2_trans(r + 10, &m[l * 8]);
}

// A misaligned ldmatrix row address faults (the GPU's misaligned-address error).
extern "C" __global__ void k_tc_ldmatrix_misaligned(unsigned *out) {
    __shared__ unsigned short m[32 * 8 + 8];
    const int l = threadIdx.x & 31;
    for (int i = 0; i < 8; i++) m[l * 8 + i + 1] = (unsigned short)(l * 8 + i);
    __syncwarp();
    unsigned r[4];
    shortc_ldmatrix_x4(r, &m[l * 8 + 1]);
    for (int i = 0; i < 4; i++) out[l * 4 + i] = r[i];
}

// Half the warp asks for ldmatrix.x4, the other half for .x4.trans: a fault.
extern "C" __global__ void k_tc_ldmatrix_mixed(unsigned *out) {
    __shared__ unsigned short m[32 * 8];
    const int l = threadIdx.x & 31;
    for (int i = 0; i < 8; i++) m[l * 8 + i] = (unsigned short)(l * 8 + i);
    __syncwarp();
    unsigned r[4];
    if (l < 16) shortc_ldmatrix_x4(r, &m[l * 8]);
    else shortc_ldmatrix_x4_trans(r, &m[l * 8]);
    out[l] = r[0];
}

// cp.async groups: two committed groups of one 16-byte copy per lane, the
// destination read before any wait, after wait_group 1 and after wait_group 0.
// out[l*4 + 0..3] = first copy before waiting, first copy after wait<1>,
// second copy after wait<1>, second copy after wait<0> (the .x word each).
// Reading before the wait is a race on the GPU; the simulator completes a copy
// at the wait that covers it (tests/sim/test_tcore.c checks that order).
extern "C" __global__ void k_tc_cp_async(unsigned *out, const uint4 *src) {
    __shared__ uint4 buf[64];
    const int l = threadIdx.x & 31;
    buf[l] = make_uint4(0, 0, 0, 0);
    buf[32 + l] = make_uint4(0, 0, 0, 0);
    __syncwarp();
    shortc_cp_async_16(&buf[l], &src[l]);
    shortc_cp_async_commit();
    shortc_cp_async_16(&buf[32 + l], &src[32 + l]);
    shortc_cp_async_commit();
    out[l * 4 + 0] = buf[l].x;
    shortc_cp_async_wait<1>();
    out[l * 4 + 1] = buf[l].x;
    out[l * 4 + 2] = buf[32 + l].x;
    shortc_cp_async_wait<0>();
    out[l * 4 + 3] = buf[32 + l].x;
}
