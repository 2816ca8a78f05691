//! recurrence_update.cuh — the recurrence module's update at the end of a
//! window (docs/attention/recurrence.md, eq. 1): the NP pooled hidden states
//! x_l [T, D], mixed with w = softmax(alpha) and summed over the window's T
//! tokens (divided by T when MEAN), then the FFN's layers (LAYERS: generated
//! code, ACT after every layer but the last) into h_prev, written to the
//! session's state with the present flag 1. One block of THREADS threads.
//!
//! Placeholders: COMMENT KERNEL_NAME D NP WMAX THREADS T_ALPHA T_STATE MEAN (0/1)
//!               PARAMS (the x_l, alpha, w_k, b_k parameters) POOL LAYERS (generated code)
{{COMMENT}}
// The recurrence's pooling and FFN into h_prev (templates/recurrence_update.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
{{PARAMS}}
    {{T_STATE}} *__restrict__ h,  // [D + 1]: h_prev | present
    int T)  // tokens of the window
{
    constexpr int D = {{D}};
    constexpr int NP = {{NP}};
    constexpr int THREADS = {{THREADS}};
    __shared__ float a_s[{{WMAX}}], b_s[{{WMAX}}], w_s[NP];
    if (threadIdx.x == 0) {  // softmax(alpha)
        float mx = shortc_ld(alpha);
        for (int l = 1; l < NP; l++) mx = fmaxf(mx, shortc_ld(alpha + l));
        float sum = 0.0f;
        for (int l = 0; l < NP; l++) sum += w_s[l] = expf(shortc_ld(alpha + l) - mx);
        for (int l = 0; l < NP; l++) w_s[l] /= sum;
    }
    __syncthreads();
    for (int c = threadIdx.x; c < D; c += THREADS) {
        float z = 0.0f, part;
{{POOL}}
{{#if MEAN}}
        a_s[c] = z / T;
{{#else}}
        a_s[c] = z;
{{#endif}}
    }
    __syncthreads();
{{LAYERS}}
    if (threadIdx.x == 0) shortc_st(h + D, 1.0f);
}
