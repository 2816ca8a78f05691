//! epilogue.cuh — a GEMM's fused epilogue in one pass over its output after
//! cuBLAS wrote it: y = act(x + bias) * gate_act(gate) + residual. The gate is a
//! gated FFN's (swiglu, geglu): the up projection's epilogue reads the gate
//! projection's GEMM result, so the gated unit costs no pass of its own. For a fused matmul x and y
//! are the same buffer (in place); unfused bias / activation / add nodes
//! (--no-fuse) use the same kernel with x != y.
//! Grid: (ceil(N / (VEC * THREADS)), T); each thread moves VEC consecutive
//! elements with vector accesses (shortc_ld_vec / shortc_st_vec: 128-bit
//! where VEC elements fill 16 bytes; VEC divides N, VEC = 1 is scalar).
//!
//! Placeholders: COMMENT KERNEL_NAME N VEC THREADS T_X T_Y T_BIAS T_RES T_GATE
//!               HAS_BIAS HAS_RESIDUAL ACT_RELU ACT_GELU ACT_GELU_TANH ACT_SILU
//!               HAS_GATE GATE_SILU GATE_GELU (0/1)
{{COMMENT}}
// Elementwise y = act(x + bias) + residual, VEC elements per thread (templates/epilogue.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_X}} *x,  // [T, N]: the GEMM result (may be y)
    {{T_Y}} *y,  // [T, N]: the final value
{{#if HAS_BIAS}}
    const {{T_BIAS}} *__restrict__ bias,  // [N]
{{#endif}}
{{#if HAS_GATE}}
    const {{T_GATE}} *__restrict__ gate,  // [T, N]: the gate projection's GEMM result
{{#endif}}
{{#if HAS_RESIDUAL}}
    const {{T_RES}} *__restrict__ residual,  // [T, N]
{{#endif}}
    int T)
{
    constexpr int N = {{N}};
    constexpr int VEC = {{VEC}};
    constexpr int THREADS = {{THREADS}};
    static_assert(N % VEC == 0, "VEC must divide the row");
    const int c = (blockIdx.x * THREADS + threadIdx.x) * VEC;
    const int t = blockIdx.y;
    if (c >= N || t >= T) return;
    const size_t i = (size_t)t * N + c;
    float v[VEC];
    shortc_ld_vec<VEC>(x + i, v);
{{#if HAS_BIAS}}
    float b[VEC];
    shortc_ld_vec<VEC>(bias + c, b);
{{#endif}}
{{#if HAS_GATE}}
    float g[VEC];
    shortc_ld_vec<VEC>(gate + i, g);
{{#endif}}
{{#if HAS_RESIDUAL}}
    float r[VEC];
    shortc_ld_vec<VEC>(residual + i, r);
{{#endif}}
#pragma unroll
    for (int k = 0; k < VEC; k++) {
{{#if HAS_BIAS}}
        v[k] += b[k];
{{#endif}}
{{#if ACT_RELU}}
        v[k] = fmaxf(v[k], 0.0f);
{{#endif}}
{{#if ACT_GELU}}
        v[k] = 0.5f * v[k] * (1.0f + erff(v[k] * 0.70710678118654752f));  // erf GELU
{{#endif}}
{{#if ACT_GELU_TANH}}
        v[k] = 0.5f * v[k] * (1.0f + tanhf(0.79788456080286536f * (v[k] + 0.044715f * v[k] * v[k] * v[k])));  // tanh GELU
{{#endif}}
{{#if ACT_SILU}}
        v[k] = v[k] / (1.0f + expf(-v[k]));  // SiLU
{{#endif}}
{{#if GATE_SILU}}
        v[k] *= g[k] / (1.0f + expf(-g[k]));  // swiglu: up * SiLU(gate)
{{#endif}}
{{#if GATE_GELU}}
        v[k] *= 0.5f * g[k] * (1.0f + erff(g[k] * 0.70710678118654752f));  // geglu: up * GELU(gate)
{{#endif}}
{{#if HAS_RESIDUAL}}
        v[k] += r[k];
{{#endif}}
    }
    shortc_st_vec<VEC>(y + i, v);
}
