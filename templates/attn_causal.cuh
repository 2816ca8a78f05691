//! attn_causal.cuh — causal softmax attention, y = softmax(q k^T / sqrt(HD)) v
//! with query i (at position P+i) seeing keys 0..P+i: the P cached ones and
//! the new ones up to itself. Online softmax over key tiles, so any T and P
//! work with a fixed amount of shared memory.
//!
//! Grid: (ceil(T / QT), H), block WARPS*32 threads. A block owns QT = WARPS*QPW
//! consecutive queries of one head (tiles with more keys are scheduled first);
//! each warp owns QPW of them. Per key tile of KT keys (KT <= 32):
//!   scores:  lane l computes the dot products of key k0+l with the warp's queries
//!            (q rows broadcast from shared memory, K rows padded to HD+1 floats);
//!   softmax: running max m and sum l per query, rescaling the accumulator;
//!   output:  each lane owns output dims lane, lane+32, ...; p is broadcast by shuffle.
//!
//! The key/value state holds kv_rows rows (its capacity; rows 0..P+T-1 are
//! written): its strides depend on kv_rows, never on the call's T.
//!
//! Placeholders: COMMENT KERNEL_NAME H HD WARPS QPW KT SCALE
//!               T_QKV T_KV T_OUT KV_HTD (0/1)
{{COMMENT}}
// Causal softmax attention with an online softmax over key tiles (templates/attn_causal.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_QKV}} *__restrict__ qkv,  // [T, 3*H*HD]: q | k | v, head-major
    const {{T_KV}} *__restrict__ kv,  // [2, H, kv_rows, HD] or [2, kv_rows, H, HD]: keys, values
    {{T_OUT}} *__restrict__ y,  // [T, H*HD]
    int T,  // new tokens (queries)
    int P,  // position of the first query: keys 0..P-1 are cached
    int kv_rows)  // rows the state holds (its capacity)
{
    constexpr int H = {{H}};
    constexpr int HD = {{HD}};
    constexpr int WARPS = {{WARPS}};
    constexpr int QPW = {{QPW}};  // queries per warp
    constexpr int QT = WARPS * QPW;  // queries per block
    constexpr int KT = {{KT}};  // keys per tile, one per lane
    constexpr int DPL = (HD + 31) / 32;  // output dims per lane
    constexpr float SCALE = {{SCALE}};  // 1 / sqrt(HD)
    constexpr float MASKED = -1.0e30f;  // score of a key the query may not see
    __shared__ float q_s[QT][HD];
    __shared__ float k_s[KT][HD + 1];
    __shared__ float v_s[KT][HD];

    const int h = blockIdx.y;
    const int q0 = (gridDim.x - 1 - blockIdx.x) * QT;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int qw = q0 + warp * QPW;  // this warp's first query

    for (int i = threadIdx.x; i < QT * HD; i += WARPS * 32) {
        const int r = i / HD, j = i % HD, t = q0 + r;
        q_s[r][j] = t < T ? shortc_ld(qkv + (size_t)t * (3 * H * HD) + h * HD + j) : 0.0f;
    }

    float m[QPW], l[QPW], o[QPW][DPL];
#pragma unroll
    for (int i = 0; i < QPW; i++) {
        m[i] = MASKED;
        l[i] = 0.0f;
#pragma unroll
        for (int d = 0; d < DPL; d++) o[i][d] = 0.0f;
    }

    const int kend = P + min(q0 + QT, T);  // the block needs keys [0, kend)
    for (int k0 = 0; k0 < kend; k0 += KT) {
        __syncthreads();  // q_s written / previous tile consumed
        for (int i = threadIdx.x; i < KT * HD; i += WARPS * 32) {
            const int r = i / HD, j = i % HD, t = k0 + r;
            float kval = 0.0f, vval = 0.0f;
            if (t < kend) {
{{#if KV_HTD}}
                kval = shortc_ld(kv + ((size_t)(0 * H + h) * kv_rows + t) * HD + j);
                vval = shortc_ld(kv + ((size_t)(1 * H + h) * kv_rows + t) * HD + j);
{{#else}}
                kval = shortc_ld(kv + ((size_t)(0 * kv_rows + t) * H + h) * HD + j);
                vval = shortc_ld(kv + ((size_t)(1 * kv_rows + t) * H + h) * HD + j);
{{#endif}}
            }
            k_s[r][j] = kval;
            v_s[r][j] = vval;
        }
        __syncthreads();
        if (k0 > P + qw + QPW - 1) continue;  // every key of the tile is in this warp's future

        // Scores of key k0 + lane against the warp's queries.
        float s[QPW];
#pragma unroll
        for (int i = 0; i < QPW; i++) s[i] = 0.0f;
        if (lane < KT) {
#pragma unroll 8
            for (int j = 0; j < HD; j++) {
                const float kj = k_s[lane][j];
#pragma unroll
                for (int i = 0; i < QPW; i++) s[i] += q_s[warp * QPW + i][j] * kj;
            }
        }

        // Online softmax update; s[i] becomes the probability weight of the key.
        const int key = k0 + lane;
#pragma unroll
        for (int i = 0; i < QPW; i++) {
            const float si = (lane < KT && key <= P + qw + i && key < P + T) ? s[i] * SCALE : MASKED;
            const float m_new = fmaxf(m[i], shortc_warp_max(si));
            const float corr = expf(m[i] - m_new);
            s[i] = si == MASKED ? 0.0f : expf(si - m_new);
            l[i] = l[i] * corr + shortc_warp_sum(s[i]);
            m[i] = m_new;
#pragma unroll
            for (int d = 0; d < DPL; d++) o[i][d] *= corr;
        }

        // o += p v over the tile.
#pragma unroll 4
        for (int kk = 0; kk < KT; kk++) {
            float p[QPW];
#pragma unroll
            for (int i = 0; i < QPW; i++) p[i] = __shfl_sync(0xffffffffu, s[i], kk);
#pragma unroll
            for (int d = 0; d < DPL; d++) {
                const int j = lane + 32 * d;
                if (HD % 32 == 0 || j < HD) {
                    const float vj = v_s[kk][j];
#pragma unroll
                    for (int i = 0; i < QPW; i++) o[i][d] += p[i] * vj;
                }
            }
        }
    }

#pragma unroll
    for (int i = 0; i < QPW; i++) {
        const int q = qw + i;
        if (q >= T) break;
        const float inv = 1.0f / l[i];
        {{T_OUT}} *out = y + (size_t)q * (H * HD) + h * HD;
#pragma unroll
        for (int d = 0; d < DPL; d++) {
            const int j = lane + 32 * d;
            if (HD % 32 == 0 || j < HD) shortc_st(out + j, o[i][d] * inv);
        }
    }
}
