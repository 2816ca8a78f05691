//! norm.cuh — LayerNorm or RMSNorm over the channels of each token; one
//! block per token, each thread keeps PER_THREAD vectors of VEC consecutive
//! channels in registers (vector accesses: 128-bit where VEC elements fill
//! 16 bytes; VEC divides D, VEC = 1 is scalar).
//!
//!   layernorm: y = (x - mean) / sqrt(var + eps) * gamma + beta   (two passes: mean, then var)
//!   rmsnorm:   y = x / sqrt(mean(x^2) + eps) * gamma
//!
//! With ADD (a residual add fused in) the kernel first computes x = a + b,
//! rounded to x's dtype, writes it (the residual stream; with STORE_SUM 0,
//! when nothing else reads it, it does not) and normalizes it: one pass
//! instead of an add kernel and a norm kernel.
//!
//! Placeholders: COMMENT KERNEL_NAME D VEC THREADS EPS T_IN T_GAMMA T_BETA T_OUT T_A T_B
//!               LAYERNORM (0/1: 0 = rmsnorm, no beta) ADD STORE_SUM (0/1)
{{COMMENT}}
// Per-token normalization, one block per token, two block reductions (templates/norm.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
{{#if ADD}}
    {{T_IN}} *__restrict__ x,  // [T, D]: written here, a + b
{{#else}}
    const {{T_IN}} *__restrict__ x,  // [T, D]
{{#endif}}
    const {{T_GAMMA}} *__restrict__ gamma,  // [D]
{{#if LAYERNORM}}
    const {{T_BETA}} *__restrict__ beta,  // [D]
{{#endif}}
{{#if ADD}}
    const {{T_A}} *__restrict__ a,  // [T, D]
    const {{T_B}} *__restrict__ b,  // [T, D]
{{#endif}}
    {{T_OUT}} *__restrict__ y,  // [T, D]
    int T)
{
    constexpr int D = {{D}};
    constexpr int VEC = {{VEC}};
    constexpr int THREADS = {{THREADS}};
    static_assert(D % VEC == 0, "VEC must divide the row");
    constexpr int CHUNKS = D / VEC;  // vectors per row
    constexpr int PER_THREAD = (CHUNKS + THREADS - 1) / THREADS;
    constexpr float EPS = {{EPS}};
    __shared__ float scratch[32];
    const int t = blockIdx.x;
    if (t >= T) return;  // uniform over the block
    const size_t row = (size_t)t * D;

    float v[PER_THREAD][VEC];
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        const int q = threadIdx.x + i * THREADS;
        if (q < CHUNKS) {
{{#if ADD}}
            float bv[VEC];
            shortc_ld_vec<VEC>(a + row + q * VEC, v[i]);
            shortc_ld_vec<VEC>(b + row + q * VEC, bv);
#pragma unroll
            for (int k = 0; k < VEC; k++) v[i][k] = shortc_round<{{T_IN}}>(v[i][k] + bv[k]);
{{#if STORE_SUM}}
            shortc_st_vec<VEC>(x + row + q * VEC, v[i]);
{{#endif}}
{{#else}}
            shortc_ld_vec<VEC>(x + row + q * VEC, v[i]);
{{#endif}}
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++) v[i][k] = 0.0f;
        }
    }
{{#if LAYERNORM}}
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++)
#pragma unroll
        for (int k = 0; k < VEC; k++) sum += v[i][k];
    const float mean = shortc_block_sum(sum, scratch) * (1.0f / D);
    float sq = 0.0f;
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        const bool in_row = threadIdx.x + i * THREADS < CHUNKS;
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            const float dv = in_row ? v[i][k] - mean : 0.0f;
            sq += dv * dv;
        }
    }
{{#else}}
    const float mean = 0.0f;
    float sq = 0.0f;
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++)
#pragma unroll
        for (int k = 0; k < VEC; k++) sq += v[i][k] * v[i][k];
{{#endif}}
    const float rstd = 1.0f / sqrtf(shortc_block_sum(sq, scratch) * (1.0f / D) + EPS);

    {{T_OUT}} *out = y + row;
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        const int q = threadIdx.x + i * THREADS;
        if (q < CHUNKS) {
            float g[VEC], o[VEC];
            shortc_ld_vec<VEC>(gamma + q * VEC, g);
{{#if LAYERNORM}}
            float b[VEC];
            shortc_ld_vec<VEC>(beta + q * VEC, b);
#pragma unroll
            for (int k = 0; k < VEC; k++) o[k] = (v[i][k] - mean) * rstd * g[k] + b[k];
{{#else}}
#pragma unroll
            for (int k = 0; k < VEC; k++) o[k] = (v[i][k] - mean) * rstd * g[k];
{{#endif}}
            shortc_st_vec<VEC>(out + q * VEC, o);
        }
    }
}
