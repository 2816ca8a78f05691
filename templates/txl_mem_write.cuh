//! txl_mem_write.cuh — the end of a Transformer-XL layer's call
//! (docs/attention/relative.md): the layer's memory, a ring of M rows of
//! width D (position p at row p mod M), takes the last min(T, M) rows of this
//! call's attention input x (positions P .. P+T-1). Nothing is shifted.
//!
//! Grid: (T, 1, 1), block THREADS: one row of x per block; rows before the last M return.
//!
//! Placeholders: COMMENT KERNEL_NAME M D THREADS T_X T_MEM
{{COMMENT}}
// Writes a Transformer-XL memory ring (templates/txl_mem_write.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_X}} *__restrict__ x,  // [T, D]: the layer's attention input this call
    {{T_MEM}} *__restrict__ mem,  // [M, D]: the ring
    int T, int P)
{
    constexpr int M = {{M}};
    constexpr int D = {{D}};
    const int t = blockIdx.x;
    if (t >= T || t < T - M) return;  // only the last M rows of the call stay
    const size_t row = (size_t)((P + t) % M);
    for (int e = threadIdx.x; e < D; e += {{THREADS}}) shortc_st(mem + row * D + e, shortc_ld(x + (size_t)t * D + e));
}
