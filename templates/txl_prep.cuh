//! txl_prep.cuh — before a Transformer-XL relative attention call with a memory
//! (docs/attention/relative.md): the keys and values of memory ring row r,
//! projected by qkv_net's key and value columns: kv [2, M, H*HD] (keys, then
//! values; ring rows not yet written, r >= P, are skipped). The relative keys
//! W_r R_d are not computed here: they depend only on the weights, so the
//! plan's load program computes them once per weights load
//! (templates/txl_rel_keys.cuh). The attention (attn_engine.cuh with REL)
//! reads both: no queries x keys x width tensor and no pad-and-reshape. A plain
//! dot product per output; the ring row is staged in shared memory.
//!
//! Grid: (M, 1, 1), block THREADS.
//!
//! Placeholders: COMMENT KERNEL_NAME M D W THREADS T_MEM T_W T_S QKV_OUT_IN (0/1)
{{COMMENT}}
// Projects a Transformer-XL memory (templates/txl_prep.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_MEM}} *__restrict__ mem,  // [M, D]: the ring
    const {{T_W}} *__restrict__ w_qkv,  // qkv_net [D, 3W] or (QKV_OUT_IN) [3W, D]
    {{T_S}} *__restrict__ kv,  // [2, M, W]: memory keys | values
    int P)
{
    constexpr int M = {{M}};
    constexpr int D = {{D}};
    constexpr int W = {{W}};
    __shared__ float in_s[D];
    const int r = blockIdx.x;
    if (r >= M || r >= P) return;  // a ring row no call has written yet
    for (int e = threadIdx.x; e < D; e += {{THREADS}}) in_s[e] = shortc_ld(mem + (size_t)r * D + e);
    __syncthreads();
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
}
