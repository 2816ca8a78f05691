//! norm.cuh — LayerNorm or RMSNorm over the channels of each token; one
//! block per token, each thread keeps PER_THREAD channels in registers.
//!
//!   layernorm: y = (x - mean) / sqrt(var + eps) * gamma + beta   (two passes: mean, then var)
//!   rmsnorm:   y = x / sqrt(mean(x^2) + eps) * gamma
//!
//! Placeholders: COMMENT KERNEL_NAME D THREADS EPS T_IN T_GAMMA T_BETA T_OUT
//!               LAYERNORM (0/1: 0 = rmsnorm, no beta)
{{COMMENT}}
// Per-token normalization, one block per token, two block reductions (templates/norm.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_IN}} *__restrict__ x,  // [T, D]
    const {{T_GAMMA}} *__restrict__ gamma,  // [D]
{{#if LAYERNORM}}
    const {{T_BETA}} *__restrict__ beta,  // [D]
{{#endif}}
    {{T_OUT}} *__restrict__ y,  // [T, D]
    int T)
{
    constexpr int D = {{D}};
    constexpr int THREADS = {{THREADS}};
    constexpr int PER_THREAD = (D + THREADS - 1) / THREADS;
    constexpr float EPS = {{EPS}};
    __shared__ float scratch[32];
    const int t = blockIdx.x;
    if (t >= T) return;  // uniform over the block
    const {{T_IN}} *row = x + (size_t)t * D;

    float v[PER_THREAD];
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        const int c = threadIdx.x + i * THREADS;
        v[i] = c < D ? shortc_ld(row + c) : 0.0f;
    }
{{#if LAYERNORM}}
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) sum += v[i];
    const float mean = shortc_block_sum(sum, scratch) * (1.0f / D);
    float sq = 0.0f;
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        const int c = threadIdx.x + i * THREADS;
        const float dv = c < D ? v[i] - mean : 0.0f;
        sq += dv * dv;
    }
{{#else}}
    const float mean = 0.0f;
    float sq = 0.0f;
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) sq += v[i] * v[i];
{{#endif}}
    const float rstd = 1.0f / sqrtf(shortc_block_sum(sq, scratch) * (1.0f / D) + EPS);

    {{T_OUT}} *out = y + (size_t)t * D;
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        const int c = threadIdx.x + i * THREADS;
        if (c < D) {
{{#if LAYERNORM}}
            shortc_st(out + c, (v[i] - mean) * rstd * shortc_ld(gamma + c) + shortc_ld(beta + c));
{{#else}}
            shortc_st(out + c, (v[i] - mean) * rstd * shortc_ld(gamma + c));
{{#endif}}
        }
    }
}
