//! attn_wgmma.cuh — the attention engine's sm_90a prefill kernel (first stage
//! of issue 23 item 2, docs/attention/hopper.md "The attention kernel"):
//! y = softmax(q k^T * scale) v for fp16/bf16 keys and values, head dims 64
//! and 128, a mask-only kind given by a visibility policy (causal, window),
//! written with the intrinsics of templates/hopper.cuh (pasted before it).
//!
//! One block of 256 threads computes 64 queries of one head:
//!   producer  warpgroup 0 (setmaxnreg.dec 40): thread 0 loads the Q tile once
//!             and then the K and V tiles of 64 keys with TMA into a 2-stage
//!             ring of shared memory; stage s is full[s] (1 arrival + the
//!             tiles' transaction bytes) and empty[s] (the 128 consumers);
//!   consumer  warpgroup 1 (setmaxnreg.inc 232): per key tile, S = Q K^T by
//!             wgmma m64n64k16 (Q and K from shared memory through
//!             descriptors, K-major, 128-byte swizzle), the mask on partial
//!             tiles only, the online softmax in registers in base 2 (the scale
//!             folded into one multiply before exp2), then O += P V by wgmma
//!             with P from registers (the accumulators of S, rounded, are the
//!             A fragments: the RS form) and V from shared memory (N-major,
//!             128-byte swizzle); then it frees the stage.
//! Tensors: TMA maps (ShortcAwMaps; 3D, innermost first, 128-byte swizzle,
//!   boxes {64, 64, 1}) over the attention engine's layouts: q, k, v {D, T, H}
//!   over qkv [T, 3*H*D] (q | k | v, head-major: row stride 3*H*D, head
//!   stride D elements), kc, vc {D, P, H} over the cache's keys and values
//!   (rows 0..P-1 of [2, H, kv_rows, D] or [2, kv_rows, H, D]: the map's
//!   strides say which; not a ring). Keys 0..P-1 come from the cache, keys
//!   P..P+T-1 (this call's) from qkv: ShortcAwKeyTiles numbers the cache's
//!   tiles first (the last one short when 64 does not divide P), then the
//!   call's. y (plain pointer) [T, H*D]. Query i sees key j when
//!   mask.visible(i, j, P) (a policy below: causal, window; the key tiles a
//!   query tile visits come from its bounds; masks apply on partial tiles only).
//! Shared memory (dynamic, 1024-byte aligned, ShortcAwLayout<D>::SMEM bytes):
//!   Q tile, K stage 0, K stage 1, V stage 0, V stage 1; a 64 x D tile is D/64
//!   panels of 64 rows x 128 bytes (TMA's 128-byte swizzle span).
//! mbarriers: 5 after the tiles in the same dynamic shared memory (bars[0] Q,
//! bars[1..2] full, bars[3..4] empty). The kernel has no static shared
//! memory: the dynamic one then starts at the shared window's start, 1024-byte
//! aligned, as the 128-byte swizzle of TMA and of the wgmma descriptors
//! (base offset 0) assumes.
//! Grid (ceil(T / 64), H); block 256.

// Visibility policies (mask-only kinds of templates/attn_kinds.cuh). Queries are 0-based in the call, P
// keys precede them (query q is at position P + q). Each policy says:
//   visible(q, k, P)     query q sees key k (the kind's attn_visible_* rule; tested on partial tiles only)
//   key_begin(q_lo, P)   no query from q_lo on sees a key below this
//   key_end(q_hi, P)     no query up to q_hi sees a key at or above this
//   all_begin(q_hi, P)   keys in [all_begin(q_hi), all_end(q_lo)) are seen by every query of q_lo .. q_hi:
//   all_end(q_lo, P)     a key tile inside that range needs no mask
// Causal: every earlier key and the query's own.
struct ShortcAwCausal {
    __device__ __forceinline__ bool visible(int q, int k, int P) const { return k <= P + q; }
    __device__ __forceinline__ int key_begin(int, int) const { return 0; }
    __device__ __forceinline__ int key_end(int q_hi, int P) const { return P + q_hi + 1; }
    __device__ __forceinline__ int all_begin(int, int) const { return 0; }
    __device__ __forceinline__ int all_end(int q_lo, int P) const { return P + q_lo + 1; }
};
// Window: the last `size` keys, the query's own included.
struct ShortcAwWindow {
    int size; // keys i - size < j <= i (attention window size=...)
    __device__ __forceinline__ bool visible(int q, int k, int P) const { return k <= P + q && P + q - k < size; }
    __device__ __forceinline__ int key_begin(int q_lo, int P) const { return max(0, P + q_lo - size + 1); }
    __device__ __forceinline__ int key_end(int q_hi, int P) const { return P + q_hi + 1; }
    __device__ __forceinline__ int all_begin(int q_hi, int P) const { return max(0, P + q_hi - size + 1); }
    __device__ __forceinline__ int all_end(int q_lo, int P) const { return P + q_lo + 1; }
};

// Shared-memory map of the kernel for head dim D.
template <int D> struct ShortcAwLayout {
    static_assert(D == 64 || D == 128, "attn_wgmma: head dims 64 and 128");
    static constexpr int PANELS = D / 64;       // 128-byte swizzled column panels per tile
    static constexpr int PANEL = 64 * 128;      // bytes of one panel (64 rows)
    static constexpr int TILE = PANELS * PANEL; // bytes of one 64 x D tile
    static constexpr int Q = 0;                 // the Q tile
    static constexpr int K = TILE;              // K stages 0 and 1
    static constexpr int V = 3 * TILE;          // V stages 0 and 1
    static constexpr int BARS = 5 * TILE;       // the 5 mbarriers (8 bytes each)
    static constexpr int SMEM = 5 * TILE + 64;  // dynamic shared memory of a block
};

// -inf (NVRTC has no INFINITY).
__device__ __forceinline__ float shortc_aw_neg_inf() { return __int_as_float(0xff800000); }

// Two floats as a packed fp16 (bf16) pair, lo in the low half: one register of an MMA A fragment.
__device__ __forceinline__ unsigned shortc_aw_pack(__half, float lo, float hi) {
    __half l = __float2half_rn(lo), h = __float2half_rn(hi);
    return (unsigned)*reinterpret_cast<unsigned short *>(&l) | (unsigned)*reinterpret_cast<unsigned short *>(&h) << 16;
}
__device__ __forceinline__ unsigned shortc_aw_pack(__nv_bfloat16, float lo, float hi) {
    __nv_bfloat16 l = __float2bfloat16_rn(lo), h = __float2bfloat16_rn(hi);
    return (unsigned)*reinterpret_cast<unsigned short *>(&l) | (unsigned)*reinterpret_cast<unsigned short *>(&h) << 16;
}

// The two element-typed wgmma forms the kernel uses.
template <int N, int TB>
__device__ __forceinline__ void shortc_aw_ss(__half, shortc_wgmma_acc<N> &d, unsigned long long a, unsigned long long b,
                                             int scale_d) {
    shortc_wgmma_ss_f16<N, 0, TB>(d, a, b, scale_d);
}
template <int N, int TB>
__device__ __forceinline__ void shortc_aw_ss(__nv_bfloat16, shortc_wgmma_acc<N> &d, unsigned long long a,
                                             unsigned long long b, int scale_d) {
    shortc_wgmma_ss_bf16<N, 0, TB>(d, a, b, scale_d);
}
template <int N, int TB>
__device__ __forceinline__ void shortc_aw_rs(__half, shortc_wgmma_acc<N> &d, const unsigned a[4], unsigned long long b,
                                             int scale_d) {
    shortc_wgmma_rs_f16<N, TB>(d, a, b, scale_d);
}
template <int N, int TB>
__device__ __forceinline__ void shortc_aw_rs(__nv_bfloat16, shortc_wgmma_acc<N> &d, const unsigned a[4],
                                             unsigned long long b, int scale_d) {
    shortc_wgmma_rs_bf16<N, TB>(d, a, b, scale_d);
}

// The kernel's tensor maps (see the header); kc and vc are read only when P > 0.
struct ShortcAwMaps {
    const shortc_tensor_map *q, *k, *v; // this call's queries, keys and values (rows: T)
    const shortc_tensor_map *kc, *vc;   // the cached keys and values (rows: P)
};

// The key tiles of a call: tiles 0..nc-1 hold the P cached keys (64 each, the last one short when 64 does
// not divide P), tiles nc.. the call's T keys. Tile u holds keys [key0(u), key0(u) + count(u)).
struct ShortcAwKeyTiles {
    int P, T; // cached keys, this call's keys
    int nc;   // tiles of cached keys
    __device__ __forceinline__ bool cached(int u) const { return u < nc; }
    // the tile's first row in its tensor (the cache's or qkv's)
    __device__ __forceinline__ int row(int u) const { return u < nc ? 64 * u : 64 * (u - nc); }
    __device__ __forceinline__ int key0(int u) const { return u < nc ? 64 * u : P + 64 * (u - nc); }
    __device__ __forceinline__ int count(int u) const {
        return u < nc ? min(64, P - 64 * u) : min(64, T - 64 * (u - nc));
    }
    // the tile holding key k; one past the tile holding key k - 1
    __device__ __forceinline__ int tile_of(int k) const { return k < P ? k / 64 : nc + (k - P) / 64; }
    __device__ __forceinline__ int tile_end(int k) const { return k <= P ? (k + 63) / 64 : nc + (k - P + 63) / 64; }
};
__device__ __forceinline__ ShortcAwKeyTiles shortc_aw_key_tiles(int P, int T) {
    return ShortcAwKeyTiles{P, T, (P + 63) / 64};
}

// The key tiles query tile m touches: [first, end).
template <class Mask>
__device__ __forceinline__ void shortc_aw_tile_range(const Mask &mask, const ShortcAwKeyTiles &kt, int m, int *first,
                                                     int *end) {
    const int S = kt.P + kt.T, q_hi = min(64 * m + 63, kt.T - 1);
    *first = kt.tile_of(mask.key_begin(64 * m, kt.P));
    *end = kt.tile_end(min(S, mask.key_end(q_hi, kt.P)));
}

// Producer (warpgroup 0): Q once, then K and V of every key tile through the ring.
template <int D>
__device__ __forceinline__ void shortc_aw_produce(unsigned char *smem, const ShortcAwMaps &maps,
                                                  const ShortcAwKeyTiles &kt, unsigned long long *bars, int m, int h,
                                                  int first, int end) {
    typedef ShortcAwLayout<D> L;
    shortc_setmaxnreg_dec<40>();
    if (threadIdx.x != 0) return;
    shortc_mbar_arrive_expect_tx(&bars[0], L::TILE);
    for (int p = 0; p < L::PANELS; p++)
        shortc_tma_load_3d(smem + L::Q + p * L::PANEL, maps.q, &bars[0], 64 * p, 64 * m, h);
    for (int n = first; n < end; n++) {
        const int i = n - first, s = i & 1;                             // i: the tile's turn in the ring
        if (i >= 2) shortc_mbar_wait(&bars[3 + s], ((i >> 1) - 1) & 1); // the consumers freed the stage
        shortc_mbar_arrive_expect_tx(&bars[1 + s], 2 * L::TILE);        // a short tile's missing rows arrive as zeros
        const shortc_tensor_map *mk = kt.cached(n) ? maps.kc : maps.k, *mv = kt.cached(n) ? maps.vc : maps.v;
        for (int p = 0; p < L::PANELS; p++) {
            shortc_tma_load_3d(smem + L::K + s * L::TILE + p * L::PANEL, mk, &bars[1 + s], 64 * p, kt.row(n), h);
            shortc_tma_load_3d(smem + L::V + s * L::TILE + p * L::PANEL, mv, &bars[1 + s], 64 * p, kt.row(n), h);
        }
    }
}

// S = Q K^T of one stage: D/16 chained k16 steps, each 32 bytes further along the swizzled rows of a panel.
template <int D, typename TE>
__device__ __forceinline__ void shortc_aw_scores(shortc_wgmma_acc<64> &sc, unsigned char *smem, int s) {
    typedef ShortcAwLayout<D> L;
    shortc_wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < D / 16; ks++) {
        const int at = (ks >> 2) * L::PANEL + 32 * (ks & 3);
        shortc_aw_ss<64, 0>(TE(), sc, shortc_wgmma_desc(smem + L::Q + at, 128, 16, 1024),
                            shortc_wgmma_desc(smem + L::K + s * L::TILE + at, 128, 16, 1024), ks > 0);
    }
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    shortc_wgmma_fence_acc(sc);
}

// Online softmax of one tile's scores (in place: sc becomes P), the running max m[2] and sum l[2] of the
// thread's two rows, and the factor alpha[2] by which O's rows are rescaled. Masked on partial tiles only.
template <class Mask>
__device__ __forceinline__ void shortc_aw_softmax(const Mask &mask, shortc_wgmma_acc<64> &sc, float m[2], float l[2],
                                                  float alpha[2], float scale_log2, bool partial, int row0, int key0,
                                                  int kend, int P) {
    const int lane = threadIdx.x & 31;
    float mx[2] = {shortc_aw_neg_inf(), shortc_aw_neg_inf()};
#pragma unroll
    for (int i = 0; i < 32; i++) {
        const int r = (i & 3) >> 1, k = key0 + 8 * (i >> 2) + 2 * (lane & 3) + (i & 1);
        float x = sc[i] * scale_log2;
        if (partial && (k >= kend || !mask.visible(row0 + 8 * r, k, P))) x = shortc_aw_neg_inf();
        sc[i] = x;
        mx[r] = fmaxf(mx[r], x);
    }
    float base[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; r++) {
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
        const float mnew = fmaxf(m[r], mx[r]);
        base[r] = mnew == shortc_aw_neg_inf() ? 0.0f : mnew; // a row that has seen no key yet keeps O and l at 0
        alpha[r] = shortc_exp2(m[r] - base[r]);
        m[r] = mnew;
    }
#pragma unroll
    for (int i = 0; i < 32; i++) {
        const int r = (i & 3) >> 1;
        sc[i] = shortc_exp2(sc[i] - base[r]);
        sum[r] += sc[i];
    }
    for (int r = 0; r < 2; r++)
        l[r] = l[r] * alpha[r] + sum[r]; // the thread's columns; summed over the quad at the end
}

// O = O * alpha + P V of one stage: four k16 steps over the tile's keys, P's accumulators packed pair by pair
// into the A fragments (rows g and g+8, keys 2t.. and 2t+8..), V N-major (16 rows of 128 bytes per k16,
// the second column panel 8192 bytes on: LBO).
template <int D, typename TE>
__device__ __forceinline__ void shortc_aw_pv(shortc_wgmma_acc<D> &o, shortc_wgmma_acc<64> &p, const float alpha[2],
                                             unsigned char *smem, int s) {
    typedef ShortcAwLayout<D> L;
#pragma unroll
    for (int i = 0; i < D / 2; i++) o[i] *= alpha[(i & 3) >> 1];
    unsigned a[4][4];
#pragma unroll
    for (int ks = 0; ks < 4; ks++)
#pragma unroll
        for (int j = 0; j < 4; j++) a[ks][j] = shortc_aw_pack(TE(), p[8 * ks + 2 * j], p[8 * ks + 2 * j + 1]);
    shortc_wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 4; ks++)
        shortc_aw_rs<D, 1>(TE(), o, a[ks],
                           shortc_wgmma_desc(smem + L::V + s * L::TILE + 2048 * ks, 128, L::PANEL, 1024), 1);
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    shortc_wgmma_fence_acc(o);
}

// Consumer (warpgroup 1): every key tile of the ring, then y = O / l for the rows below T.
template <int D, typename TE, class Mask>
__device__ __forceinline__ void shortc_aw_consume(const Mask &mask, const ShortcAwKeyTiles &kt, unsigned char *smem,
                                                  unsigned long long *bars, TE *y, int m, int h, int first, int end,
                                                  float scale_log2) {
    shortc_setmaxnreg_inc<232>();
    const int t = threadIdx.x - 128, lane = t & 31;
    const int row0 = 64 * m + 16 * (t >> 5) + (lane >> 2); // the thread's rows: row0 and row0 + 8
    const int T = kt.T, P = kt.P, S = P + T, q_hi = min(64 * m + 63, T - 1);
    const int all_begin = mask.all_begin(q_hi, P), all_end = min(S, mask.all_end(64 * m, P));
    shortc_wgmma_acc<D> o;
#pragma unroll
    for (int i = 0; i < D / 2; i++) o[i] = 0.0f;
    float mrow[2] = {shortc_aw_neg_inf(), shortc_aw_neg_inf()}, lrow[2] = {0.0f, 0.0f}, alpha[2];
    shortc_mbar_wait(&bars[0], 0);
    for (int n = first; n < end; n++) {
        const int i = n - first, s = i & 1;
        shortc_mbar_wait(&bars[1 + s], (i >> 1) & 1);
        shortc_wgmma_acc<64> sc;
        shortc_aw_scores<D, TE>(sc, smem, s);
        const int key0 = kt.key0(n), kend = key0 + kt.count(n);
        const bool partial = kend - key0 < 64 || key0 < all_begin || kend > all_end; // block-uniform
        shortc_aw_softmax<Mask>(mask, sc, mrow, lrow, alpha, scale_log2, partial, row0, key0, kend, P);
        shortc_aw_pv<D, TE>(o, sc, alpha, smem, s);
        shortc_mbar_arrive(&bars[3 + s]);
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
        lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
        lrow[r] = lrow[r] > 0.0f ? 1.0f / lrow[r] : 0.0f; // a query that sees no key writes zeros
    }
#pragma unroll
    for (int i = 0; i < D / 2; i++) {
        const int r = (i & 3) >> 1, row = row0 + 8 * r, col = 8 * (i >> 2) + 2 * (lane & 3) + (i & 1);
        if (row < T) shortc_st(y + ((size_t)row * gridDim.y + h) * D + col, o[i] * lrow[r]);
    }
}

// The kernel body (the kernel declares no static shared memory; see the header); grid (ceil(T / 64), H).
template <int D, typename TE, class Mask>
__device__ __forceinline__ void shortc_attn_wgmma(const Mask &mask, const ShortcAwMaps &maps, TE *y, int T, int P,
                                                  float scale_log2) {
    SHORTC_DYNAMIC_SMEM(uint4, shortc_aw_smem);
    unsigned char *smem = reinterpret_cast<unsigned char *>(shortc_aw_smem);
    unsigned long long *bars = reinterpret_cast<unsigned long long *>(smem + ShortcAwLayout<D>::BARS);
    const int m = blockIdx.x, h = blockIdx.y;
    const ShortcAwKeyTiles kt = shortc_aw_key_tiles(P, T);
    int first, end;
    shortc_aw_tile_range<Mask>(mask, kt, m, &first, &end);
    if (threadIdx.x == 0) {
        shortc_mbar_init(&bars[0], 1);
        for (int s = 0; s < 2; s++) shortc_mbar_init(&bars[1 + s], 1), shortc_mbar_init(&bars[3 + s], 128);
    }
    __syncthreads();
    if (threadIdx.x < 128)
        shortc_aw_produce<D>(smem, maps, kt, bars, m, h, first, end);
    else
        shortc_aw_consume<D, TE, Mask>(mask, kt, smem, bars, y, m, h, first, end, scale_log2);
}
