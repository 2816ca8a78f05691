//! recurrence_kv.cuh — the recurrence module's extra key and value of layer
//! l_ins (docs/attention/recurrence.md): h_prev from the session's state
//! (through the layer's input norm when NORM) times the key and value columns
//! of the layer's c_attn, plus bias, then the present flag. In a session's
//! first window the state's flag is 0: y is all zeros (no extra key).
//! One block of THREADS threads.
//!
//!   y[j]     = b[A + j] + sum_c x[c] w[c][A + j]     (j < 2A; w stored [in, out], or [out, in] when W_OUT_IN)
//!   y[2A]    = h[D]                                  (1: present)
//!
//! Placeholders: COMMENT KERNEL_NAME D A THREADS EPS T_GAMMA T_BETA T_W T_B T_STATE T_OUT
//!               NORM (0/1) LAYERNORM (0/1) W_OUT_IN (0/1)
{{COMMENT}}
// The recurrence's extra key/value from h_prev (templates/recurrence_kv.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
{{#if NORM}}
    const {{T_GAMMA}} *__restrict__ gamma,  // [D]: the layer's ln_1
{{#if LAYERNORM}}
    const {{T_BETA}} *__restrict__ beta,  // [D]
{{#endif}}
{{#endif}}
    const {{T_W}} *__restrict__ w,  // c_attn weight [D, 3A] (or [3A, D])
    const {{T_B}} *__restrict__ b,  // c_attn bias [3A]
    const {{T_STATE}} *__restrict__ h,  // [D + 1]: h_prev | present
    {{T_OUT}} *__restrict__ y)  // [2A + 1]: key | value | present
{
    constexpr int D = {{D}};
    constexpr int A = {{A}};
    constexpr int THREADS = {{THREADS}};
    __shared__ float x_s[D];
    if (shortc_ld(h + D) == 0.0f) {  // no earlier window
        for (int j = threadIdx.x; j < 2 * A + 1; j += THREADS) shortc_st(y + j, 0.0f);
        return;
    }
    for (int c = threadIdx.x; c < D; c += THREADS) x_s[c] = shortc_ld(h + c);
    __syncthreads();
{{#if NORM}}
    __shared__ float stat_s[2];
    if (threadIdx.x == 0) {
        float mean = 0.0f, var = 0.0f;
{{#if LAYERNORM}}
        for (int c = 0; c < D; c++) mean += x_s[c];
        mean /= D;
{{#endif}}
        for (int c = 0; c < D; c++) var += (x_s[c] - mean) * (x_s[c] - mean);
        stat_s[0] = mean;
        stat_s[1] = rsqrtf(var / D + {{EPS}});
    }
    __syncthreads();
    float xn[(D + THREADS - 1) / THREADS];
    for (int c = threadIdx.x, k = 0; c < D; c += THREADS, k++) {
{{#if LAYERNORM}}
        xn[k] = (x_s[c] - stat_s[0]) * stat_s[1] * shortc_ld(gamma + c) + shortc_ld(beta + c);
{{#else}}
        xn[k] = x_s[c] * stat_s[1] * shortc_ld(gamma + c);
{{#endif}}
    }
    __syncthreads();
    for (int c = threadIdx.x, k = 0; c < D; c += THREADS, k++) x_s[c] = shortc_round<{{T_OUT}}>(xn[k]);
    __syncthreads();
{{#endif}}
    for (int j = threadIdx.x; j < 2 * A; j += THREADS) {
        float s = shortc_ld(b + A + j);
        for (int c = 0; c < D; c++) {
{{#if W_OUT_IN}}
            s += x_s[c] * shortc_ld(w + (size_t)(A + j) * D + c);
{{#else}}
            s += x_s[c] * shortc_ld(w + (size_t)c * (3 * A) + A + j);
{{#endif}}
        }
        shortc_st(y + j, s);
    }
    if (threadIdx.x == 0) shortc_st(y + 2 * A, 1.0f);
}
