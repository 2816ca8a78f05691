//! txl_prep.cuh — before a Transformer-XL relative attention call
//! (docs/attention/relative.md), in one launch:
//!   rows r < M:  the keys and values of memory ring row r, projected by
//!                qkv_net's key and value columns: kv [2, M, H*HD] (keys, then
//!                values; ring rows not yet written, r >= P, are skipped);
//!   rows r >= M: the projected relative key of distance d = r - M,
//!                W_r R_d with R_d the sinusoid (sin half, then cos half):
//!                rel [ND, H*HD].
//! The attention (attn_engine.cuh with REL) reads both: no queries x keys x
//! width tensor and no pad-and-reshape. A plain dot product per output; the
//! input row (ring row or sinusoid) is staged in shared memory.
//!
//! Grid: (M + ND, 1, 1), block THREADS (ND: the distances the attention reads).
//!
//! Placeholders: COMMENT KERNEL_NAME M D W THREADS T_MEM T_W T_S QKV_OUT_IN (0/1) R_OUT_IN (0/1)
{{COMMENT}}
// Projects a Transformer-XL memory and the relative keys (templates/txl_prep.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_MEM}} *__restrict__ mem,  // [M, D]: the ring (unused when M = 0)
    const {{T_W}} *__restrict__ w_qkv,  // qkv_net [D, 3W] or (QKV_OUT_IN) [3W, D] (unused when M = 0)
    const {{T_W}} *__restrict__ w_r,  // r_net [D, W] or (R_OUT_IN) [W, D]
    {{T_S}} *__restrict__ kv,  // [2, M, W]: memory keys | values
    {{T_S}} *__restrict__ rel,  // [ND, W]: W_r R_d
    int P)
{
    constexpr int M = {{M}};
    constexpr int D = {{D}};
    constexpr int W = {{W}};
    __shared__ float in_s[D];
    const int r = blockIdx.x;
    if (r < M && r >= P) return;  // a ring row no call has written yet
    for (int e = threadIdx.x; e < D; e += {{THREADS}}) {
        if (r < M) {
            in_s[e] = shortc_ld(mem + (size_t)r * D + e);
        } else {
            const int k = e < D / 2 ? e : e - D / 2;
            const float ang = (float)(r - M) / powf(10000.0f, 2.0f * (float)k / (float)D);
            in_s[e] = e < D / 2 ? sinf(ang) : cosf(ang);
        }
    }
    __syncthreads();
    if (r < M) {
        for (int o = threadIdx.x; o < 2 * W; o += {{THREADS}}) {
            float s = 0.0f;
            for (int e = 0; e < D; e++)
{{#if QKV_OUT_IN}}
                s += in_s[e] * shortc_ld(w_qkv + (size_t)(W + o) * D + e);
{{#else}}
                s += in_s[e] * shortc_ld(w_qkv + (size_t)e * (3 * W) + W + o);
{{#endif}}
            shortc_st(kv + ((size_t)(o / W) * M + r) * W + o % W, s);
        }
    } else {
        for (int o = threadIdx.x; o < W; o += {{THREADS}}) {
            float s = 0.0f;
            for (int e = 0; e < D; e++)
{{#if R_OUT_IN}}
                s += in_s[e] * shortc_ld(w_r + (size_t)o * D + e);
{{#else}}
                s += in_s[e] * shortc_ld(w_r + (size_t)e * W + o);
{{#endif}}
            shortc_st(rel + (size_t)(r - M) * W + o, s);
        }
    }
}
