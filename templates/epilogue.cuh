//! epilogue.cuh — a GEMM's fused epilogue in one pass over its output after
//! cuBLAS wrote it: y = act(x + bias) + residual. For a fused matmul x and y
//! are the same buffer (in place); unfused bias / activation / add nodes
//! (--no-fuse) use the same kernel with x != y.
//! Grid: (ceil(N / THREADS), T); one thread per element.
//!
//! Placeholders: COMMENT KERNEL_NAME N THREADS T_X T_Y T_BIAS T_RES
//!               HAS_BIAS HAS_RESIDUAL ACT_RELU ACT_GELU ACT_GELU_TANH (0/1)
{{COMMENT}}
// Elementwise y = act(x + bias) + residual, one thread per element (templates/epilogue.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_X}} *x,  // [T, N]: the GEMM result (may be y)
    {{T_Y}} *y,  // [T, N]: the final value
{{#if HAS_BIAS}}
    const {{T_BIAS}} *__restrict__ bias,  // [N]
{{#endif}}
{{#if HAS_RESIDUAL}}
    const {{T_RES}} *__restrict__ residual,  // [T, N]
{{#endif}}
    int T)
{
    constexpr int N = {{N}};
    constexpr int THREADS = {{THREADS}};
    const int c = blockIdx.x * THREADS + threadIdx.x;
    const int t = blockIdx.y;
    if (c >= N || t >= T) return;
    const size_t i = (size_t)t * N + c;
    float v = shortc_ld(x + i);
{{#if HAS_BIAS}}
    v += shortc_ld(bias + c);
{{#endif}}
{{#if ACT_RELU}}
    v = fmaxf(v, 0.0f);
{{#endif}}
{{#if ACT_GELU}}
    v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));  // erf GELU
{{#endif}}
{{#if ACT_GELU_TANH}}
    v = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));  // tanh GELU
{{#endif}}
{{#if HAS_RESIDUAL}}
    v += shortc_ld(residual + i);
{{#endif}}
    shortc_st(y + i, v);
}
