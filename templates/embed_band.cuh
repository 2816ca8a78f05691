//! embed_band.cuh — one band of an adaptive input embedding, one block per
//! token; each thread moves VEC consecutive channels at a time (vector
//! accesses as in embed.cuh: VEC divides W, VEC = 1 is scalar).
//!
//!   y[t, c] = table[tokens[t] - LO, c]   if LO <= tokens[t] < HI, else 0
//!
//! The band's projection to d_model is an ordinary matmul node after it, so
//! tokens of other bands contribute zero rows. Token ids are validated by the
//! runtime; ids outside the band (any others included) give zeros.
//!
//! Placeholders: COMMENT KERNEL_NAME W VEC LO HI THREADS T_TAB T_OUT
{{COMMENT}}
// Adaptive input band lookup, one block per token (templates/embed_band.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const int *__restrict__ tokens,  // [T]
    const {{T_TAB}} *__restrict__ table,  // [HI - LO, W]
    {{T_OUT}} *__restrict__ y,  // [T, W]
    int T)  // tokens
{
    constexpr int W = {{W}};
    constexpr int VEC = {{VEC}};
    constexpr int LO = {{LO}};
    constexpr int HI = {{HI}};
    constexpr int THREADS = {{THREADS}};
    static_assert(W % VEC == 0, "VEC must divide the row");
    const int t = blockIdx.x;
    if (t >= T) return;
    const int tok = tokens[t];
    const bool inside = tok >= LO && tok < HI;
    const {{T_TAB}} *row = table + (size_t)(inside ? tok - LO : 0) * W;
    {{T_OUT}} *out = y + (size_t)t * W;
    for (int c0 = threadIdx.x * VEC; c0 < W; c0 += THREADS * VEC) {
        float v[VEC];
        if (inside) {
            shortc_ld_vec<VEC>(row + c0, v);
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++) v[k] = 0.0f;
        }
        shortc_st_vec<VEC>(out + c0, v);
    }
}
