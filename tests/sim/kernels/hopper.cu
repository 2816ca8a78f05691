// Hopper intrinsics under test (tests/sim/test_hopper.c): the harness pastes
// templates/prelude.cuh and templates/hopper.cuh in front, as the emitter
// would. Shared-memory operands come from the host as images of the dynamic
// shared memory (the host places every element by the PTX layout rules), so
// each wgmma layout and swizzle mode is checked against plain C. The same file
// compiles for sm_90a with NVRTC (tests/gate/hopper_sass.sh): its SASS must
// hold HGMMA, UTMALDG and SYNCS.

// The block's dynamic shared memory (declared once, in a C++ function: CUDA wants one type and linkage).
__device__ __forceinline__ uint4 *hop_smem() {
    SHORTC_DYNAMIC_SMEM(uint4, smem_raw);
    return smem_raw;
}

// The 64 x N accumulator tile to out (row-major, N columns), by the documented fragment layout.
template <int N> __device__ __forceinline__ void hop_store_acc(float *out, shortc_wgmma_acc<N> &acc) {
    const int t = threadIdx.x & 127, w = t >> 5, l = t & 31;
    for (int i = 0; i < N / 2; i++) {
        const int row = 16 * w + (l >> 2) + 8 * ((i & 3) >> 1), col = 8 * (i >> 2) + 2 * (l & 3) + (i & 1);
        out[row * N + col] = acc[i];
    }
}

// The block's dynamic shared memory filled from img (bytes, a multiple of 16) with ordinary stores,
// then made visible to the async proxy (fence) and to every thread (barrier).
__device__ __forceinline__ unsigned char *hop_fill_smem(const uint4 *img, int bytes, int fence) {
    uint4 *smem = hop_smem();
    for (int i = threadIdx.x; i < bytes / 16; i += blockDim.x) smem[i] = img[i];
    if (fence) shortc_fence_proxy_async();
    __syncthreads();
    return reinterpret_cast<unsigned char *>(smem);
}

// Layout of one operand in the image: byte offset, swizzle, LBO, SBO, and the start-address step per k16.
struct HopOperand {
    int off, swizzle, lbo, sbo, kstep;
};

// out[64 x N] = A[64 x 16*ksteps] * B[16*ksteps x N], both from shared memory (TA/TB: MN-major).
template <int N, int TA, int TB, bool BF16>
__device__ __forceinline__ void hop_ss(float *out, const uint4 *img, int bytes, HopOperand a, HopOperand b, int ksteps,
                                       int fence) {
    unsigned char *smem = hop_fill_smem(img, bytes, fence);
    shortc_wgmma_acc<N> acc;
    shortc_wgmma_fence();
    for (int s = 0; s < ksteps; s++) {
        const unsigned long long da = shortc_wgmma_desc(smem + a.off + s * a.kstep, a.swizzle, a.lbo, a.sbo);
        const unsigned long long db = shortc_wgmma_desc(smem + b.off + s * b.kstep, b.swizzle, b.lbo, b.sbo);
        if (BF16)
            shortc_wgmma_ss_bf16<N, TA, TB>(acc, da, db, s > 0);
        else
            shortc_wgmma_ss_f16<N, TA, TB>(acc, da, db, s > 0);
    }
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    shortc_wgmma_fence_acc(acc);
    hop_store_acc<N>(out, acc);
}

#define HOP_SS_ARGS                                                                                                    \
    float *out, const uint4 *img, int bytes, int a_off, int a_swz, int a_lbo, int a_sbo, int a_kstep, int b_off,       \
        int b_swz, int b_lbo, int b_sbo, int b_kstep, int ksteps
#define HOP_SS_PASS                                                                                                    \
    out, img, bytes, HopOperand{a_off, a_swz, a_lbo, a_sbo, a_kstep}, HopOperand{b_off, b_swz, b_lbo, b_sbo, b_kstep}, \
        ksteps
extern "C" __global__ void k_hop_ss_f16_kk(HOP_SS_ARGS) { hop_ss<64, 0, 0, false>(HOP_SS_PASS, 1); }
extern "C" __global__ void k_hop_ss_bf16_kk(HOP_SS_ARGS) { hop_ss<64, 0, 0, true>(HOP_SS_PASS, 1); }
extern "C" __global__ void k_hop_ss_f16_mn(HOP_SS_ARGS) { hop_ss<64, 1, 1, false>(HOP_SS_PASS, 1); }
extern "C" __global__ void k_hop_ss_bf16_mn(HOP_SS_ARGS) { hop_ss<64, 1, 1, true>(HOP_SS_PASS, 1); }
extern "C" __global__ void k_hop_ss_bf16_n256(HOP_SS_ARGS) { hop_ss<256, 0, 0, true>(HOP_SS_PASS, 1); }
extern "C" __global__ void k_hop_ss_f16_n8(HOP_SS_ARGS) { hop_ss<8, 0, 1, false>(HOP_SS_PASS, 1); }
// Misuse: the image written with ordinary stores and read by wgmma with no fence.proxy.async.
extern "C" __global__ void k_hop_ss_unfenced(HOP_SS_ARGS) { hop_ss<64, 0, 0, false>(HOP_SS_PASS, 0); }

// A from registers (the mma.m16n8k16 A fragment of the warp's 16 rows of A[64 x 16], row-major in global),
// B from the image: out[64 x N] = A * B.
template <int N, int TB, bool BF16, typename T>
__device__ __forceinline__ void hop_rs(float *out, const T *A, const uint4 *img, int bytes, HopOperand b) {
    unsigned char *smem = hop_fill_smem(img, bytes, 1);
    const int t = threadIdx.x & 127, r = 16 * (t >> 5) + ((t & 31) >> 2), k = 2 * (t & 3);
    const unsigned short *a16 = reinterpret_cast<const unsigned short *>(A);
    unsigned a[4];
    a[0] = a16[r * 16 + k] | (unsigned)a16[r * 16 + k + 1] << 16;
    a[1] = a16[(r + 8) * 16 + k] | (unsigned)a16[(r + 8) * 16 + k + 1] << 16;
    a[2] = a16[r * 16 + k + 8] | (unsigned)a16[r * 16 + k + 9] << 16;
    a[3] = a16[(r + 8) * 16 + k + 8] | (unsigned)a16[(r + 8) * 16 + k + 9] << 16;
    shortc_wgmma_acc<N> acc;
    shortc_wgmma_fence();
    const unsigned long long db = shortc_wgmma_desc(smem + b.off, b.swizzle, b.lbo, b.sbo);
    if (BF16)
        shortc_wgmma_rs_bf16<N, TB>(acc, a, db, 0);
    else
        shortc_wgmma_rs_f16<N, TB>(acc, a, db, 0);
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    hop_store_acc<N>(out, acc);
}
extern "C" __global__ void k_hop_rs_f16_mn(float *out, const __half *A, const uint4 *img, int bytes, int b_swz,
                                           int b_lbo, int b_sbo) {
    hop_rs<64, 1, false>(out, A, img, bytes, HopOperand{0, b_swz, b_lbo, b_sbo, 0});
}
extern "C" __global__ void k_hop_rs_bf16_kk(float *out, const __nv_bfloat16 *A, const uint4 *img, int bytes, int b_swz,
                                            int b_lbo, int b_sbo) {
    hop_rs<64, 0, true>(out, A, img, bytes, HopOperand{0, b_swz, b_lbo, b_sbo, 0});
}

// ---- TMA ----------------------------------------------------------------------

// One TMA load of the box at (c0, c1[, c2]) into the dynamic shared memory; every thread waits on the
// mbarrier, then the raw shared bytes (swizzle included) go to out.
// (The mbarrier is declared in each kernel: the simulator records static shared objects of kernels.)
__device__ __forceinline__ void hop_tma_load(uint4 *out, const shortc_tensor_map *map, unsigned long long *bar,
                                             int rank, int c0, int c1, int c2, int box_bytes, int extra_tx) {
    uint4 *smem = hop_smem();
    if (threadIdx.x == 0) shortc_mbar_init(bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        shortc_mbar_arrive_expect_tx(bar, (unsigned)(box_bytes + extra_tx));
        if (rank == 2)
            shortc_tma_load_2d(smem, map, bar, c0, c1);
        else
            shortc_tma_load_3d(smem, map, bar, c0, c1, c2);
    }
    shortc_mbar_wait(bar, 0);
    for (int i = threadIdx.x; i < box_bytes / 16; i += blockDim.x) out[i] = smem[i];
}
extern "C" __global__ void k_hop_tma_load_2d(uint4 *out, const __grid_constant__ shortc_tensor_map map, int c0, int c1,
                                             int box_bytes) {
    __shared__ __align__(8) unsigned long long bar;
    hop_tma_load(out, &map, &bar, 2, c0, c1, 0, box_bytes, 0);
}
extern "C" __global__ void k_hop_tma_load_3d(uint4 *out, const __grid_constant__ shortc_tensor_map map, int c0, int c1,
                                             int c2, int box_bytes) {
    __shared__ __align__(8) unsigned long long bar;
    hop_tma_load(out, &map, &bar, 3, c0, c1, c2, box_bytes, 0);
}
// Misuse: the mbarrier expects 16 transaction bytes more than the load brings.
extern "C" __global__ void k_hop_tma_short(uint4 *out, const __grid_constant__ shortc_tensor_map map, int c0, int c1,
                                           int box_bytes) {
    __shared__ __align__(8) unsigned long long bar;
    hop_tma_load(out, &map, &bar, 2, c0, c1, 0, box_bytes, 16);
}

// The image (box bytes, swizzled as the map's box) stored by TMA at (c0, c1[, c2]); fence: fence.proxy.async
// between the ordinary stores and the TMA store.
__device__ __forceinline__ void hop_tma_store(const shortc_tensor_map *map, const uint4 *img, int bytes, int rank,
                                              int c0, int c1, int c2, int fence) {
    unsigned char *smem = hop_fill_smem(img, bytes, fence);
    if (threadIdx.x == 0) {
        if (rank == 2)
            shortc_tma_store_2d(map, smem, c0, c1);
        else
            shortc_tma_store_3d(map, smem, c0, c1, c2);
        shortc_tma_store_commit();
        shortc_tma_store_wait<0>();
    }
}
extern "C" __global__ void k_hop_tma_store_2d(const __grid_constant__ shortc_tensor_map map, const uint4 *img,
                                              int bytes, int c0, int c1, int fence) {
    hop_tma_store(&map, img, bytes, 2, c0, c1, 0, fence);
}
extern "C" __global__ void k_hop_tma_store_3d(const __grid_constant__ shortc_tensor_map map, const uint4 *img,
                                              int bytes, int c0, int c1, int c2) {
    hop_tma_store(&map, img, bytes, 3, c0, c1, c2, 1);
}

// out[64 x 64] = A[64 x 64] * B (bf16, row-major in global) through TMA with the 128-byte swizzle and four
// k16 wgmmas that step the descriptors' start, as FlashAttention-3 does: TB 0 takes B as [N][K] (K-major, QKᵀ:
// +32 bytes per k16), TB 1 as [K][N] (N-major, P·V: +16 rows of 128 bytes per k16).
template <int TB>
__device__ __forceinline__ void hop_tma_gemm(float *out, const shortc_tensor_map *ma, const shortc_tensor_map *mb,
                                             unsigned long long *bar) {
    unsigned char *smem = reinterpret_cast<unsigned char *>(hop_smem());
    if (threadIdx.x == 0) shortc_mbar_init(bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        shortc_mbar_arrive_expect_tx(bar, 2 * 64 * 64 * 2);
        shortc_tma_load_2d(smem, ma, bar, 0, 0);
        shortc_tma_load_2d(smem + 8192, mb, bar, 0, 0);
    }
    shortc_mbar_wait(bar, 0);
    shortc_wgmma_acc<64> acc;
    shortc_wgmma_fence();
    for (int s = 0; s < 4; s++) {
        const unsigned long long da = shortc_wgmma_desc(smem + 32 * s, 128, 16, 1024);
        const unsigned long long db = TB ? shortc_wgmma_desc(smem + 8192 + 2048 * s, 128, 8192, 1024)
                                         : shortc_wgmma_desc(smem + 8192 + 32 * s, 128, 16, 1024);
        shortc_wgmma_ss_bf16<64, 0, TB>(acc, da, db, s > 0);
    }
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    hop_store_acc<64>(out, acc);
}
extern "C" __global__ void k_hop_tma_gemm(float *out, const __grid_constant__ shortc_tensor_map ma,
                                          const __grid_constant__ shortc_tensor_map mb) {
    __shared__ __align__(8) unsigned long long bar;
    hop_tma_gemm<0>(out, &ma, &mb, &bar);
}
extern "C" __global__ void k_hop_tma_gemm_mn(float *out, const __grid_constant__ shortc_tensor_map ma,
                                             const __grid_constant__ shortc_tensor_map mb) {
    __shared__ __align__(8) unsigned long long bar;
    hop_tma_gemm<1>(out, &ma, &mb, &bar);
}

// A two-stage ring: warpgroup 0's thread 0 produces `tiles` boxes of 64 floats (rows of the map) with TMA,
// warpgroup 1 consumes each (threads 128-191 add one element each) and frees the stage (all 128 arrive). Phases flip
// per round.
extern "C" __global__ void k_hop_pipeline(float *out, const __grid_constant__ shortc_tensor_map map, int tiles) {
    float *ring = reinterpret_cast<float *>(hop_smem());
    __shared__ __align__(8) unsigned long long full[2], empty[2];
    if (threadIdx.x == 0)
        for (int s = 0; s < 2; s++) shortc_mbar_init(&full[s], 1), shortc_mbar_init(&empty[s], 128);
    __syncthreads();
    if (threadIdx.x < 128) {
        shortc_setmaxnreg_dec<40>();
        if (threadIdx.x == 0)
            for (int i = 0; i < tiles; i++) {
                const int s = i & 1;
                if (i >= 2) shortc_mbar_wait(&empty[s], ((i >> 1) - 1) & 1);
                shortc_mbar_arrive_expect_tx(&full[s], 64 * 4);
                shortc_tma_load_2d(ring + 64 * s, &map, &full[s], 0, i);
            }
    } else {
        shortc_setmaxnreg_inc<232>();
        const int c = threadIdx.x - 128;
        float sum = 0.0f;
        for (int i = 0; i < tiles; i++) {
            const int s = i & 1;
            shortc_mbar_wait(&full[s], (i >> 1) & 1);
            if (c < 64) sum += ring[64 * s + c] * (float)(i + 1);
            shortc_mbar_arrive(&empty[s]);
        }
        if (c < 64) out[c] = sum;
    }
}

// ---- misuse ---------------------------------------------------------------------

// A descriptor whose start lies in row 2 of a 128-byte swizzle atom.
extern "C" __global__ void k_hop_desc_misaligned(float *out) {
    unsigned char *smem = reinterpret_cast<unsigned char *>(hop_smem());
    shortc_wgmma_acc<8> acc;
    shortc_wgmma_fence();
    shortc_wgmma_ss_f16<8, 0, 0>(acc, shortc_wgmma_desc(smem + 256, 128, 16, 1024),
                                 shortc_wgmma_desc(smem, 128, 16, 1024), 0);
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    out[threadIdx.x] = acc[0];
}
// A 32-byte swizzle whose k16 slice starts 16 bytes into the row (crosses it).
extern "C" __global__ void k_hop_desc_bad_swizzle(float *out) {
    unsigned char *smem = reinterpret_cast<unsigned char *>(hop_smem());
    shortc_wgmma_acc<8> acc;
    shortc_wgmma_fence();
    shortc_wgmma_ss_f16<8, 0, 0>(acc, shortc_wgmma_desc(smem + 16, 32, 16, 256), shortc_wgmma_desc(smem, 32, 16, 256),
                                 0);
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    out[threadIdx.x] = acc[0];
}
// The accumulator read between the wgmma and its wait_group.
extern "C" __global__ void k_hop_acc_early(float *out, const uint4 *img, int bytes) {
    unsigned char *smem = hop_fill_smem(img, bytes, 1);
    shortc_wgmma_acc<8> acc;
    shortc_wgmma_fence();
    shortc_wgmma_ss_f16<8, 0, 0>(acc, shortc_wgmma_desc(smem, 0, 128, 256), shortc_wgmma_desc(smem, 0, 128, 256), 0);
    shortc_wgmma_commit();
    out[threadIdx.x] = acc[0];
    shortc_wgmma_wait<0>();
}
// A wgmma with no wgmma.fence before it.
extern "C" __global__ void k_hop_no_fence(float *out, const uint4 *img, int bytes) {
    unsigned char *smem = hop_fill_smem(img, bytes, 1);
    shortc_wgmma_acc<8> acc;
    shortc_wgmma_ss_f16<8, 0, 0>(acc, shortc_wgmma_desc(smem, 0, 128, 256), shortc_wgmma_desc(smem, 0, 128, 256), 0);
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    out[threadIdx.x] = acc[0];
}
// An mbarrier expecting two arrivals that gets one: every thread spins forever.
extern "C" __global__ void k_hop_mbar_deadlock(float *out) {
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x == 0) shortc_mbar_init(&bar, 2);
    __syncthreads();
    if (threadIdx.x == 0) shortc_mbar_arrive(&bar);
    shortc_mbar_wait(&bar, 0);
    out[threadIdx.x] = 1.0f;
}
// try_wait on an mbarrier nobody initialised.
extern "C" __global__ void k_hop_mbar_uninit(float *out) {
    __shared__ __align__(8) unsigned long long bar;
    out[threadIdx.x] = shortc_mbar_try_wait(&bar, 0) ? 1.0f : 0.0f;
}
// A second arrival on a one-arrival mbarrier whose phase still waits for its transaction bytes.
extern "C" __global__ void k_hop_mbar_overarrive(float *out) {
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x == 0) shortc_mbar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) shortc_mbar_arrive_expect_tx(&bar, 64);
    __syncthreads();
    if (threadIdx.x == 1) shortc_mbar_arrive(&bar);
    out[threadIdx.x] = 1.0f;
}
// A wgmma in a block of 64 threads: no whole warpgroup.
extern "C" __global__ void k_hop_wg_partial(float *out, const uint4 *img, int bytes) {
    unsigned char *smem = hop_fill_smem(img, bytes, 1);
    shortc_wgmma_acc<8> acc;
    shortc_wgmma_fence();
    shortc_wgmma_ss_f16<8, 0, 0>(acc, shortc_wgmma_desc(smem, 0, 128, 256), shortc_wgmma_desc(smem, 0, 128, 256), 0);
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    out[threadIdx.x] = acc[0];
}
// Threads of one warpgroup passing different B descriptors.
extern "C" __global__ void k_hop_desc_diverge(float *out, const uint4 *img, int bytes) {
    unsigned char *smem = hop_fill_smem(img, bytes, 1);
    shortc_wgmma_acc<8> acc;
    shortc_wgmma_fence();
    const int b_off = threadIdx.x == 77 ? 16 : 0;
    shortc_wgmma_ss_f16<8, 0, 0>(acc, shortc_wgmma_desc(smem, 0, 128, 256),
                                 shortc_wgmma_desc(smem + b_off, 0, 128, 256), 0);
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    out[threadIdx.x] = acc[0];
}
// A TMA load into shared memory 64 bytes past a swizzle atom's start.
extern "C" __global__ void k_hop_tma_misaligned(uint4 *out, const __grid_constant__ shortc_tensor_map map) {
    unsigned char *smem = reinterpret_cast<unsigned char *>(hop_smem());
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x == 0) {
        shortc_mbar_init(&bar, 1);
        shortc_mbar_arrive_expect_tx(&bar, 64 * 16 * 2);
        shortc_tma_load_2d(smem + 64, &map, &bar, 0, 0);
    }
    out[threadIdx.x] = uint4{0, 0, 0, 0};
}

// Two chained MMAs as an attention tile does them: S[64 x 16] = Q[64 x 16] * K[16 x 16]ᵀ (both from shared
// memory), S rounded to bf16 and reused in registers as the A fragment of O[64 x 64] = S * V[16 x 64] (V
// N-major in shared memory). All three unswizzled with LBO 128 and SBO 256, at byte offsets q, k, v.
__device__ __forceinline__ unsigned hop_pack_bf16(float lo, float hi) {
    __nv_bfloat16 l = __float2bfloat16_rn(lo), h = __float2bfloat16_rn(hi);
    return (unsigned)*reinterpret_cast<unsigned short *>(&l) | (unsigned)*reinterpret_cast<unsigned short *>(&h) << 16;
}
extern "C" __global__ void k_hop_chain_bf16(float *out, const uint4 *img, int bytes, int q, int k, int v) {
    unsigned char *smem = hop_fill_smem(img, bytes, 1);
    shortc_wgmma_acc<16> s;
    shortc_wgmma_fence();
    shortc_wgmma_ss_bf16<16, 0, 0>(s, shortc_wgmma_desc(smem + q, 0, 128, 256), shortc_wgmma_desc(smem + k, 0, 128, 256),
                                   0);
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    // the accumulators of columns 0-15 are, pair by pair, the k16 A fragment (rows g and g+8, k 2t.. and 2t+8..)
    const unsigned a[4] = {hop_pack_bf16(s[0], s[1]), hop_pack_bf16(s[2], s[3]), hop_pack_bf16(s[4], s[5]),
                           hop_pack_bf16(s[6], s[7])};
    shortc_wgmma_acc<64> o;
    shortc_wgmma_fence();
    shortc_wgmma_rs_bf16<64, 1>(o, a, shortc_wgmma_desc(smem + v, 0, 128, 256), 0);
    shortc_wgmma_commit();
    shortc_wgmma_wait<0>();
    hop_store_acc<64>(out, o);
}
