//! pos_add.cuh — the scale and positions of an adaptive input embedding, one
//! block per token; each thread moves VEC consecutive channels at a time
//! (vector accesses as in embed.cuh: VEC divides D, VEC = 1 is scalar).
//!
//!   y[t, c] = x[t, c] * SCALE (+ wpe[P+t, c] | + sinusoid(P+t, c))
//!
//! Token t of the call is at position P + t (P: the session's position).
//! Sinusoids are interleaved as in embed.cuh: channel 2i holds sin(p * w_i),
//! channel 2i+1 cos(p * w_i), w_i = 10000^(-2i/D) (computed in double).
//!
//! Placeholders: COMMENT KERNEL_NAME D VEC THREADS SCALE T_X T_WPE T_OUT
//!               POS_LEARNED POS_SINUSOIDAL (0/1)
{{COMMENT}}
// Adaptive input scale plus positions, one block per token (templates/pos_add.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_X}} *__restrict__ x,  // [T, D]: the summed band projections
{{#if POS_LEARNED}}
    const {{T_WPE}} *__restrict__ wpe,  // [positions, D]
{{#endif}}
    {{T_OUT}} *__restrict__ y,  // [T, D]
    int T,  // tokens
    int P)  // position of the first
{
    constexpr int D = {{D}};
    constexpr int VEC = {{VEC}};
    constexpr int THREADS = {{THREADS}};
    constexpr float SCALE = {{SCALE}};
    static_assert(D % VEC == 0, "VEC must divide the row");
    const int t = blockIdx.x;
    if (t >= T) return;
    const {{T_X}} *in = x + (size_t)t * D;
{{#if POS_LEARNED}}
    const {{T_WPE}} *pos = wpe + (size_t)(P + t) * D;
{{#endif}}
    {{T_OUT}} *out = y + (size_t)t * D;
    for (int c0 = threadIdx.x * VEC; c0 < D; c0 += THREADS * VEC) {
        float v[VEC];
        shortc_ld_vec<VEC>(in + c0, v);
#pragma unroll
        for (int k = 0; k < VEC; k++) v[k] *= SCALE;
{{#if POS_LEARNED}}
        float p[VEC];
        shortc_ld_vec<VEC>(pos + c0, p);
#pragma unroll
        for (int k = 0; k < VEC; k++) v[k] += p[k];
{{#endif}}
{{#if POS_SINUSOIDAL}}
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            const int c = c0 + k;
            const double freq = exp(-(double)(c & ~1) * (9.210340371976184 / D));  // 10000^(-2i/D)
            const double angle = (double)(P + t) * freq;
            v[k] += (float)((c & 1) ? cos(angle) : sin(angle));
        }
{{#endif}}
        shortc_st_vec<VEC>(out + c0, v);
    }
}
