// ---------------------------------------------------------------------------
// mma_frag.cuh: warp-level tensor-core building blocks for a
// FlashAttention-2-style kernel, on the named intrinsics of prelude.cuh
// (pasted after the prelude; standard CUDA C++ otherwise, so the simulator
// runs it as it is).
//
// One warp owns 16 query rows. Tiles live in shared memory, row-major, with
// a row stride `ld` in elements (a multiple of 8, so every 8-element row
// segment is 16-byte aligned for ldmatrix). Element type T is __half or
// __nv_bfloat16 (mma.m16n8k16), or float (TF32: mma.m16n8k8, the operands
// rounded by shortc_cvt_tf32; ldmatrix moves 32-bit elements as pairs of b16,
// so its fragments are the TF32 A and B layouts; rows then a multiple of 4
// elements); accumulators are fp32 in the mma C/D layout: for an n8
// column block j, acc[j][0..1] = row g, columns 2t and 2t+1, acc[j][2..3] =
// row g+8, where g = lane/4 and t = lane%4 (the quad of lanes 4g..4g+3
// holds rows g and g+8).
//
//   shortc_frag_k<T> / shortc_frag_epc<T>   the MMA's k extent (16; TF32 8), elements per 16 bytes (8; 4)
//   shortc_frag_load_a(a, tile, ld)         16 x k A fragment (Q, or P staged in shared; TF32: already rounded)
//   shortc_frag_load_kt(b, k, ld)           B fragments of Kᵀ for 16 keys x k dims
//   shortc_frag_load_v(b, v, ld)            B fragments of V for k keys x 16 dims (ldmatrix.trans; TF32: LDS)
//   shortc_frag_mma(T, d, a, b)             d += a·b (fp16, bf16 or TF32 form, chosen by T)
//   shortc_frag_st_op(p, v)                 stores v as an MMA operand of type T (TF32: rounded)
//   shortc_frag_pack_p_tf32(a, s)           one n8 block of P (fp32) -> one TF32 A fragment, in registers
//   shortc_frag_add_cols<T>(a, add2)         A fragment plus a row vector (packed b16 pairs) on every row
//   shortc_frag_qk<T, DK, NK>(s, q, ldq, k, ldk)   S[16 x NK] = Q[16 x DK] · K[NK x DK]ᵀ
//   shortc_frag_row_max / _row_sum<NB>(acc, m)     per-row max / sum over the quad
//   shortc_frag_pack_p<T>(a, s0, s1)         two n8 blocks of P (fp32) -> one A fragment, in registers
//   shortc_frag_pv<T, NK, DV>(o, p, v, ldv)  O[16 x DV] += P[16 x NK] · V[NK x DV]
//   shortc_frag_rescale<NB>(acc, f)          acc rows g / g+8 times f[0] / f[1]
//   shortc_frag_softmax_tile<NB, NO>(s, o, m, l, scale)   one key tile of the online softmax
//   shortc_frag_online_exp2<NB, NO, LANE_SUMS>(s, o, m, l, c)  the same in base 2, scale folded in (attn_mma.cuh)
//   shortc_frag_row_sums<T>(l, p)            row sums of a P fragment by an MMA with ones (attn_mma.cuh)
//   shortc_frag_quad_sum(v)                  v summed over the quad of lanes that holds a row
//   shortc_frag_store_rows<...>(y, w_s, o, inv, t0, ts, T, h)   a warp's output rows, 128-bit stores
//   shortc_frag_neg_inf()                    the score of a masked key
//   shortc_frag_ld2(p, v)                    two adjacent elements as floats, one 32/64-bit load
// ---------------------------------------------------------------------------

// Two floats as one register of two b16 values (lo in the low half), rounded to nearest even.
__device__ __forceinline__ unsigned shortc_pack2(__half, float lo, float hi) {
    return (unsigned)__half_as_ushort(__float2half_rn(lo)) | (unsigned)__half_as_ushort(__float2half_rn(hi)) << 16;
}
__device__ __forceinline__ unsigned shortc_pack2(__nv_bfloat16, float lo, float hi) {
    return (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(lo)) |
           (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(hi)) << 16;
}

// a + b per b16 pair (one packed add, rounded to nearest even): fp16 or bf16, chosen by the first argument.
__device__ __forceinline__ unsigned shortc_add2(__half, unsigned a, unsigned b) {
    __half2 x = *reinterpret_cast<const __half2 *>(&a), y = *reinterpret_cast<const __half2 *>(&b), z = __hadd2(x, y);
    return *reinterpret_cast<const unsigned *>(&z);
}
__device__ __forceinline__ unsigned shortc_add2(__nv_bfloat16, unsigned a, unsigned b) {
    __nv_bfloat162 x = *reinterpret_cast<const __nv_bfloat162 *>(&a), y = *reinterpret_cast<const __nv_bfloat162 *>(&b),
                   z = __hadd2(x, y);
    return *reinterpret_cast<const unsigned *>(&z);
}

// A fragment (16 columns) plus a row vector on every row: add2 holds the vector's 8 pairs of b16 (columns 2p,
// 2p+1 in add2[p]); a[0], a[1] hold columns 2t, 2t+1 (rows g, g+8), a[2], a[3] columns 2t+8, 2t+9
// (shortc_frag_load_a).
template <typename T>
__device__ __forceinline__ void shortc_frag_add_cols(unsigned a[4], const unsigned *add2) {
    const int t = threadIdx.x & 3;
    const unsigned lo = add2[t], hi = add2[t + 4];
    a[0] = shortc_add2(T(), a[0], lo);
    a[1] = shortc_add2(T(), a[1], lo);
    a[2] = shortc_add2(T(), a[2], hi);
    a[3] = shortc_add2(T(), a[3], hi);
}

// The MMA's k extent for element type T (m16n8k16 for 2-byte types, m16n8k8 for TF32) and T's elements per
// 16 bytes (one ldmatrix row, one cp.async chunk).
template <typename T> __host__ __device__ constexpr int shortc_frag_k() { return 32 / (int)sizeof(T); }
template <typename T> __host__ __device__ constexpr int shortc_frag_epc() { return 16 / (int)sizeof(T); }

// Stores v as an MMA operand of type T: 2-byte types rounded to nearest even, float rounded to TF32 (so that
// fragments of it need no conversion: shortc_frag_load_a).
__device__ __forceinline__ void shortc_frag_st_op(__half *p, float v) { shortc_st(p, v); }
__device__ __forceinline__ void shortc_frag_st_op(__nv_bfloat16 *p, float v) { shortc_st(p, v); }
__device__ __forceinline__ void shortc_frag_st_op(float *p, float v) { *p = __uint_as_float(shortc_cvt_tf32(v)); }

// d += a·b for one m16n8k16 tile (m16n8k8 for TF32); the element type picks the fp16, bf16 or TF32 instruction.
__device__ __forceinline__ void shortc_frag_mma(__half, float d[4], const unsigned a[4], const unsigned b[2]) {
    shortc_mma_m16n8k16_f16f32(d, a, b, d);
}
__device__ __forceinline__ void shortc_frag_mma(__nv_bfloat16, float d[4], const unsigned a[4], const unsigned b[2]) {
    shortc_mma_m16n8k16_bf16f32(d, a, b, d);
}
__device__ __forceinline__ void shortc_frag_mma(float, float d[4], const unsigned a[4], const unsigned b[2]) {
    shortc_mma_m16n8k8_tf32(d, a, b, d);
}

// A fragment of the 16 x k block at tile: lanes 0-15 address rows 0-15 at
// column 0, lanes 16-31 the same rows at column k/2 (matrices 0-3 = a[0..3]).
// TF32: a[0..3] = rows g, g+8 at column t, rows g, g+8 at column t+4, the
// elements as stored (tile holds TF32 values: shortc_frag_st_op).
template <typename T>
__device__ __forceinline__ void shortc_frag_load_a(unsigned a[4], const T *tile, int ld) {
    const int l = threadIdx.x & 31;
    shortc_ldmatrix_x4(a, tile + (l & 15) * ld + (l >> 4) * shortc_frag_epc<T>());
}

// K stored [key][dim]: Kᵀ as the column-major B operand. b[0..1] = keys 0-7,
// b[2..3] = keys 8-15, each over dims 0-15 (k pairs 2t and 2t+8); TF32: over
// dims 0-7 (dims t and t+4), rounded here (K comes by cp.async as stored).
template <typename T>
__device__ __forceinline__ void shortc_frag_load_kt(unsigned b[4], const T *k, int ld) {
    const int l = threadIdx.x & 31;
    shortc_ldmatrix_x4(b, k + ((l & 7) + (l >> 4) * 8) * ld + ((l >> 3) & 1) * shortc_frag_epc<T>());
    if constexpr (sizeof(T) == 4)
#pragma unroll
        for (int i = 0; i < 4; i++) b[i] = shortc_cvt_tf32(__uint_as_float(b[i]));
}

// V stored [key][dim] is the row-major B operand; ldmatrix.trans turns it.
// b[0..1] = dims 0-7, b[2..3] = dims 8-15, each over keys 0-15. TF32 (no
// 32-bit ldmatrix.trans): keys 0-7 by shared loads, rounded, in the order of
// shortc_frag_pack_p_tf32: b[0], b[1] = keys 2t, 2t+1 of dim g, b[2], b[3] the
// same of dim g+8 (row stride ld = 4 mod 32: the 32 lanes hit 32 banks).
template <typename T>
__device__ __forceinline__ void shortc_frag_load_v(unsigned b[4], const T *v, int ld) {
    const int l = threadIdx.x & 31;
    if constexpr (sizeof(T) == 4) {
        const T *p = v + 2 * (l & 3) * ld + (l >> 2);
        b[0] = shortc_cvt_tf32(p[0]);
        b[1] = shortc_cvt_tf32(p[ld]);
        b[2] = shortc_cvt_tf32(p[8]);
        b[3] = shortc_cvt_tf32(p[ld + 8]);
    } else {
        shortc_ldmatrix_x4_trans(b, v + ((l & 7) + ((l >> 3) & 1) * 8) * ld + (l >> 4) * 8);
    }
}

// S = Q·Kᵀ for the warp's 16 rows: q is 16 x DK, k is NK x DK (both [row][dim]).
// s[j] is the n8 block of keys 8j..8j+7. DK and NK multiples of 16 (TF32: q's
// elements already TF32, shortc_frag_st_op).
template <typename T, int DK, int NK>
__device__ __forceinline__ void shortc_frag_qk(float s[NK / 8][4], const T *q, int ldq, const T *k, int ldk) {
#pragma unroll
    for (int j = 0; j < NK / 8; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < DK; kk += shortc_frag_k<T>()) {
        unsigned a[4];
        shortc_frag_load_a(a, q + kk, ldq);
#pragma unroll
        for (int n = 0; n < NK; n += 16) {
            unsigned b[4];
            shortc_frag_load_kt(b, k + n * ldk + kk, ldk);
            shortc_frag_mma(T(), s[n / 8], a, b);
            shortc_frag_mma(T(), s[n / 8 + 1], a, b + 2);
        }
    }
}

// Per-row maximum of NB n8 blocks, combined with m (m[0]: row g, m[1]: row
// g+8); every lane of the quad gets the result.
template <int NB>
__device__ __forceinline__ void shortc_frag_row_max(const float acc[NB][4], float m[2]) {
#pragma unroll
    for (int j = 0; j < NB; j++) {
        m[0] = fmaxf(m[0], fmaxf(acc[j][0], acc[j][1]));
        m[1] = fmaxf(m[1], fmaxf(acc[j][2], acc[j][3]));
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        m[h] = fmaxf(m[h], __shfl_xor_sync(0xffffffffu, m[h], 1));
        m[h] = fmaxf(m[h], __shfl_xor_sync(0xffffffffu, m[h], 2));
    }
}

// Per-row sum of NB n8 blocks (sum[0]: row g, sum[1]: row g+8), over the quad.
template <int NB>
__device__ __forceinline__ void shortc_frag_row_sum(const float acc[NB][4], float sum[2]) {
    sum[0] = sum[1] = 0.0f;
#pragma unroll
    for (int j = 0; j < NB; j++) {
        sum[0] += acc[j][0] + acc[j][1];
        sum[1] += acc[j][2] + acc[j][3];
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        sum[h] += __shfl_xor_sync(0xffffffffu, sum[h], 1);
        sum[h] += __shfl_xor_sync(0xffffffffu, sum[h], 2);
    }
}

// The accumulator layout of two adjacent n8 blocks is the A layout of one
// k16 block: P stays in registers between Q·Kᵀ and P·V.
template <typename T>
__device__ __forceinline__ void shortc_frag_pack_p(unsigned a[4], const float s0[4], const float s1[4]) {
    a[0] = shortc_pack2(T(), s0[0], s0[1]);
    a[1] = shortc_pack2(T(), s0[2], s0[3]);
    a[2] = shortc_pack2(T(), s1[0], s1[1]);
    a[3] = shortc_pack2(T(), s1[2], s1[3]);
}

// One n8 block of P (fp32, the accumulator layout: row g keys 2t, 2t+1 in s[0], s[1], row g+8 in s[2],
// s[3]) as a TF32 A fragment in registers, no shuffle: the k index is permuted (k = t holds key 2t, k = t + 4
// key 2t + 1), and shortc_frag_load_v<float> reads V's keys in the same order.
__device__ __forceinline__ void shortc_frag_pack_p_tf32(unsigned a[4], const float s[4]) {
    a[0] = shortc_cvt_tf32(s[0]);
    a[1] = shortc_cvt_tf32(s[2]);
    a[2] = shortc_cvt_tf32(s[1]);
    a[3] = shortc_cvt_tf32(s[3]);
}

// O += P·V for the warp's 16 rows: p holds NK/8 n8 blocks of probabilities
// (fp32, as shortc_frag_qk left them), v is NK x DV ([key][dim]).
template <typename T, int NK, int DV>
__device__ __forceinline__ void shortc_frag_pv(float o[DV / 8][4], const float p[NK / 8][4], const T *v, int ldv) {
#pragma unroll
    for (int kk = 0; kk < NK; kk += shortc_frag_k<T>()) {
        unsigned a[4];
        if constexpr (sizeof(T) == 4) shortc_frag_pack_p_tf32(a, p[kk / 8]);
        else shortc_frag_pack_p<T>(a, p[kk / 8], p[kk / 8 + 1]);
#pragma unroll
        for (int n = 0; n < DV; n += 16) {
            unsigned b[4];
            shortc_frag_load_v(b, v + kk * ldv + n, ldv);
            shortc_frag_mma(T(), o[n / 8], a, b);
            shortc_frag_mma(T(), o[n / 8 + 1], a, b + 2);
        }
    }
}

// Online-softmax rescale: rows g times f[0], rows g+8 times f[1].
template <int NB>
__device__ __forceinline__ void shortc_frag_rescale(float acc[NB][4], const float f[2]) {
#pragma unroll
    for (int j = 0; j < NB; j++) {
        acc[j][0] *= f[0];
        acc[j][1] *= f[0];
        acc[j][2] *= f[1];
        acc[j][3] *= f[1];
    }
}

// v[0], v[1] = p[0], p[1] (T = __half, __nv_bfloat16 or float; p aligned to two elements) by one 32-bit
// (64-bit for float) load, global or shared: no 16-bit global load (tests/gate/tensor_core_gate.sh).
template <typename T>
__device__ __forceinline__ void shortc_frag_ld2(const T *p, float v[2]) {
    if constexpr (sizeof(T) == 2) {
        const unsigned w = *reinterpret_cast<const unsigned *>(p);
        const T *e = reinterpret_cast<const T *>(&w);
        v[0] = shortc_ld(e);
        v[1] = shortc_ld(e + 1);
    } else {
        const uint2 w = *reinterpret_cast<const uint2 *>(p);
        v[0] = __uint_as_float(w.x);
        v[1] = __uint_as_float(w.y);
    }
}

// The score of a masked (invisible) key.
__device__ __forceinline__ float shortc_frag_neg_inf() { return __int_as_float(0xff800000); }

// One key tile of the online softmax for the warp's 16 rows. s holds NB n8
// blocks of raw scores (masked keys: shortc_frag_neg_inf()); on return it holds
// P = exp(scale·s − m) for the new row maximum m (0 for masked keys), ready for
// shortc_frag_pv. m (row maximum of scale·s so far; start at
// shortc_frag_neg_inf()), l (row sum of P so far; start at 0) and the NO
// output blocks o are brought to the new maximum. A row with no visible key
// yet keeps m = -inf, l = 0, o = 0 (no NaN). scale > 0.
template <int NB, int NO>
__device__ __forceinline__ void shortc_frag_softmax_tile(float s[NB][4], float o[NO][4], float m[2], float l[2],
                                                         float scale) {
    float m_new[2] = {m[0], m[1]}, base[2], f[2], rs[2];
#pragma unroll
    for (int j = 0; j < NB; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) s[j][e] *= scale;
    shortc_frag_row_max<NB>(s, m_new);
#pragma unroll
    for (int h = 0; h < 2; h++) base[h] = m_new[h] == shortc_frag_neg_inf() ? 0.0f : m_new[h];
#pragma unroll
    for (int j = 0; j < NB; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) s[j][e] = __expf(s[j][e] - base[e >> 1]);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        f[h] = __expf(m[h] - base[h]);
        m[h] = m_new[h];
    }
    shortc_frag_rescale<NO>(o, f);
    shortc_frag_row_sum<NB>(s, rs);
#pragma unroll
    for (int h = 0; h < 2; h++) l[h] = l[h] * f[h] + rs[h];
}

// One key tile of the online softmax in base 2 for one m16 block of rows
// (FlashAttention-2): s holds NB n8 blocks of raw scores (masked keys:
// shortc_frag_neg_inf()); m is the row maximum of the raw scores so far
// (start at shortc_frag_neg_inf()); c = scale * log2(e) > 0. On return s
// holds P = 2^(c·s − c·m) for the new maximum m, one FFMA and one MUFU.EX2
// per score, and o and the row sums l (l[0] row g, l[2] row g+8; l[1], l[3]
// unused) are brought to the new maximum. LANE_SUMS: this lane's P is added to
// l here (partial sums: the quad's total is shortc_frag_quad_sum's); else the
// caller adds whole rows by shortc_frag_row_sums (an MMA per P fragment).
// A row with no visible key yet keeps m = -inf, l = 0, o = 0 (no NaN).
template <int NB, int NO, bool LANE_SUMS>
__device__ __forceinline__ void shortc_frag_online_exp2(float s[NB][4], float o[NO][4], float m[2], float l[4],
                                                        float c) {
    float m_new[2] = {m[0], m[1]}, mc[2], f[2];
    shortc_frag_row_max<NB>(s, m_new);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        mc[h] = m_new[h] == shortc_frag_neg_inf() ? 0.0f : m_new[h] * c;
        f[h] = shortc_exp2(m[h] * c - mc[h]);
        m[h] = m_new[h];
        l[2 * h] *= f[h];
    }
#pragma unroll
    for (int j = 0; j < NB; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            s[j][e] = shortc_exp2(s[j][e] * c - mc[e >> 1]);
            if (LANE_SUMS) l[e & 2] += s[j][e];
        }
    shortc_frag_rescale<NO>(o, f);
}

// v summed over the quad of lanes 4g..4g+3 (one row's partial sums); every lane of the quad gets it.
__device__ __forceinline__ float shortc_frag_quad_sum(float v) {
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// The B fragment of a k x 8 block of ones in T (every element 1.0).
__device__ __forceinline__ void shortc_frag_ones(__half, unsigned b[2]) { b[0] = b[1] = 0x3c003c00u; }
__device__ __forceinline__ void shortc_frag_ones(__nv_bfloat16, unsigned b[2]) { b[0] = b[1] = 0x3f803f80u; }
__device__ __forceinline__ void shortc_frag_ones(float, unsigned b[2]) { b[0] = b[1] = 0x3f800000u; }  // 8x8, TF32

// l += row sums of the A fragment p (16 rows x k keys of probabilities, as P·V uses them) by one MMA with
// a block of ones: l[0] gets row g's sum, l[2] row g+8's (l[1], l[3] the same; whole rows, no shuffle).
template <typename T>
__device__ __forceinline__ void shortc_frag_row_sums(float l[4], const unsigned p[4]) {
    unsigned ones[2];
    shortc_frag_ones(T(), ones);
    shortc_frag_mma(T(), l, p, ones);
}

// Stores a warp's MB m16 blocks of output rows o * inv (row r of the warp is row t0 + ts*r of y, [T, H*HD],
// head h; rows outside [0, T) are not stored). 2-byte outputs are staged in the warp's own shared rows w_s
// (row stride LD elements, at least 16*MB rows; the caller's last reads of them precede) and written with
// 128-bit stores; fp32 outputs go from registers as pairs.
template <int H, int HD, int HDP, int LD, int MB, typename TO, typename TE>
__device__ __forceinline__ void shortc_frag_store_rows(TO *y, TE *w_s, const float o[MB][HDP / 8][4], const float inv[MB][2],
                                                       int t0, int ts, int T, int h) {
    constexpr int CH = HD / 8, WR = 16 * MB;  // 16-byte chunks per row, rows
    const int lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    if constexpr (sizeof(TO) == 2) {
        static_assert(sizeof(TE) == 2, "staging rows of 2-byte elements");
        __syncwarp();  // the warp's reads of w_s are done
#pragma unroll
        for (int mb = 0; mb < MB; mb++)
#pragma unroll
            for (int x = 0; x < 2; x++)
#pragma unroll
                for (int j = 0; j < HDP / 8; j++) {
                    const int d = 8 * j + 2 * t4;
                    if (HD % 16 == 0 || d < HD)
                        *reinterpret_cast<unsigned *>(w_s + (16 * mb + g + 8 * x) * LD + d) =
                            shortc_pack2(TO(), o[mb][j][2 * x] * inv[mb][x], o[mb][j][2 * x + 1] * inv[mb][x]);
                }
        __syncwarp();
#pragma unroll
        for (int k = 0; k < (WR * CH + 31) / 32; k++) {
            const int i = lane + 32 * k, r = i / CH, c = i % CH, t = t0 + ts * r;
            if ((WR * CH % 32 == 0 || i < WR * CH) && t >= 0 && t < T)
                shortc_st128(y + (size_t)t * (H * HD) + h * HD + c * 8, shortc_ld128(w_s + r * LD + c * 8));
        }
    } else {
        (void)w_s;
#pragma unroll
        for (int mb = 0; mb < MB; mb++)
#pragma unroll
            for (int x = 0; x < 2; x++) {
                const int t = t0 + ts * (16 * mb + g + 8 * x);
                if (t < 0 || t >= T) continue;
                TO *out = y + (size_t)t * (H * HD) + h * HD;
#pragma unroll
                for (int j = 0; j < HDP / 8; j++) {
                    const int d = 8 * j + 2 * t4;
                    if (HD % 16 == 0 || d < HD) {
                        shortc_st(out + d, o[mb][j][2 * x] * inv[mb][x]);
                        shortc_st(out + d + 1, o[mb][j][2 * x + 1] * inv[mb][x]);
                    }
                }
            }
    }
}
