//! txl_rel_keys.cuh — Transformer-XL's relative keys (docs/attention/relative.md):
//! row d = W_r R_d, the sinusoid R_d of distance d (sin half, then cos half)
//! projected by the layer's r_net. They depend only on the weights: the table
//! is a derived tensor, computed by the plan's load program once per weights
//! load and read by every call's attention (attn_engine.cuh with REL, argument
//! rel).
//!
//! Grid: (rows, 1, 1), one block per distance 0..rows-1 (the layer's memory and
//! one segment, or clamp_len + 1); block THREADS. A block writes R_d to shared
//! memory, then each thread takes columns o, o + THREADS, ... of the W.
//!
//! Placeholders: COMMENT KERNEL_NAME D W THREADS T_W T_REL R_OUT_IN (0/1)
{{COMMENT}}
// Projected relative keys of Transformer-XL (templates/txl_rel_keys.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_W}} *__restrict__ w_r,  // r_net [D, W] or (R_OUT_IN) [W, D]
    {{T_REL}} *__restrict__ rel,  // [rows, W]: W_r R_d
    int rows)  // distances of the table
{
    constexpr int D = {{D}};
    constexpr int W = {{W}};
    __shared__ float in_s[D];
    const int d = blockIdx.x;
    if (d >= rows) return;
    for (int e = threadIdx.x; e < D; e += {{THREADS}}) {
        const int k = e < D / 2 ? e : e - D / 2;
        const float ang = (float)d / powf(10000.0f, 2.0f * (float)k / (float)D);
        in_s[e] = e < D / 2 ? sinf(ang) : cosf(ang);
    }
    __syncthreads();
    for (int o = threadIdx.x; o < W; o += {{THREADS}}) {
        float s = 0.0f;
        for (int e = 0; e < D; e++)
{{#if R_OUT_IN}}
            s += in_s[e] * shortc_ld(w_r + (size_t)o * D + e);
{{#else}}
            s += in_s[e] * shortc_ld(w_r + (size_t)e * W + o);
{{#endif}}
        shortc_st(rel + (size_t)d * W + o, s);
    }
}
