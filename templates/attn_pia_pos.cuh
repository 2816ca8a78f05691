//! attn_pia_pos.cuh — position-infused attention's table (docs/attention/pia.md):
//! row s = W_q p_s | W_k p_s, the projections of the position code p_s of slot s
//! by the query and key thirds of the layer's c_attn weight (no biases). The
//! attention kernel adds row s to the query and the key of slot s, so the cache
//! holds content keys and is never re-projected. The table is a derived tensor:
//! the plan's "load" program computes every row once per weights load, and every
//! session reads it.
//!
//! Grid: (rows, 1, 1), one block per slot 0..rows-1 (rows = the table's slots:
//! the cache and one segment); block THREADS threads. A block writes p_s
//! (computed in double: fairseq's halves from position s + 2, or Vaswani's
//! interleaved sinusoids from s) to shared memory, then each thread takes
//! columns c, c + THREADS, ... of the 2*HHD.
//!
//! Placeholders: COMMENT KERNEL_NAME D HHD THREADS T_W T_POS FAIRSEQ (0/1) W_OUT_IN (0/1)
{{COMMENT}}
// Positional query and key table of position-infused attention (templates/attn_pia_pos.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_W}} *__restrict__ w,  // c_attn weight: [D, 3*HHD] ([3*HHD, D] when W_OUT_IN)
    {{T_POS}} *__restrict__ pos,  // [slots, 2*HHD]: W_q p_s | W_k p_s
    int rows)  // slots of the table
{
    constexpr int D = {{D}};
    constexpr int HHD = {{HHD}};  // heads x head_dim
    constexpr int THREADS = {{THREADS}};
    constexpr int W = 2 * HHD;  // row stride
    __shared__ float p_s[D];
    const int s = blockIdx.x;
    if (s >= rows) return;
    for (int d = threadIdx.x; d < D; d += THREADS) {
{{#if FAIRSEQ}}
        constexpr int HALF = D / 2;
        const int i = d < HALF ? d : d - HALF;
        const double ang = (double)(s + 2) * exp(-(double)i * log(10000.0) / (double)(HALF - 1));
        p_s[d] = d >= 2 * HALF ? 0.0f : (float)(d < HALF ? sin(ang) : cos(ang));
{{#else}}
        const double ang = (double)s / pow(10000.0, (double)(d & ~1) / (double)D);
        p_s[d] = (float)((d & 1) ? cos(ang) : sin(ang));
{{#endif}}
    }
    __syncthreads();
    for (int c = threadIdx.x; c < 2 * HHD; c += THREADS) {
        float acc = 0.0f;
        for (int d = 0; d < D; d++) {
{{#if W_OUT_IN}}
            acc += p_s[d] * shortc_ld(w + (size_t)c * D + d);
{{#else}}
            acc += p_s[d] * shortc_ld(w + (size_t)d * (3 * HHD) + c);
{{#endif}}
        }
        shortc_st(pos + (size_t)s * W + c, acc);
    }
}
