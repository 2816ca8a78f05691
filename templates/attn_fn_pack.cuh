//! attn_fn_pack.cuh — the layout of srt_attention (runtime/src/attention.c) into
//! and out of the attention kernels' (templates/attn_engine.cuh, attn_mma.cuh),
//! on the device: with UNPACK 0, one sequence's q, k, v [H, T, HD] into qkv
//! [T, 3*H*HD] (its query columns h*HD..; the key and value columns are not
//! read) and kv [2, H, T, HD]; with UNPACK 1, the output y [T, H*HD] back into
//! out [H, T, HD]. Elements are copied as they are (one type throughout).
//! Grid: any x (a grid-stride loop over the H*T*HD elements), any block width.
//!
//! Placeholders: COMMENT KERNEL_NAME H HD T_E UNPACK (0/1)
{{COMMENT}}
{{#if UNPACK}}
// y [T, H*HD] -> out [H, T, HD] (templates/attn_fn_pack.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(const {{T_E}} *__restrict__ y, {{T_E}} *__restrict__ out, int T)
{{#else}}
// q, k, v [H, T, HD] -> qkv [T, 3*H*HD] (queries), kv [2, H, T, HD] (templates/attn_fn_pack.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_E}} *__restrict__ q, const {{T_E}} *__restrict__ k, const {{T_E}} *__restrict__ v,
    {{T_E}} *__restrict__ qkv, {{T_E}} *__restrict__ kv, int T)
{{#endif}}
{
    constexpr int H = {{H}};
    constexpr int HD = {{HD}};
    const size_t n = (size_t)H * T * HD;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (size_t)gridDim.x * blockDim.x) {
        const size_t j = e % HD, t = e / HD % T, h = e / HD / T;  // e = (h*T + t)*HD + j
{{#if UNPACK}}
        out[e] = y[t * (H * HD) + h * HD + j];
{{#else}}
        qkv[t * (3 * H * HD) + h * HD + j] = q[e];
        kv[e] = k[e];
        kv[n + e] = v[e];
{{#endif}}
    }
}
