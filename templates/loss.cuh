//! loss.cuh — the per-token loss of evaluation, on the device (the plan's
//! "loss" program, docs/plan.md): one block per logits row,
//!
//!   nll[t] = logsumexp(logits[t, 0..V)) - logits[t, targets[t]]   (natural log)
//!
//! and 0 where targets[t] < 0 (a row that is not scored). The row is read
//! once, with vector accesses (VEC floats per access, 128-bit where VEC = 4;
//! VEC divides V), each thread keeping a running maximum and a sum of
//! exponentials relative to it in fp32 (the online softmax), combined over
//! the block at the end: numerically stable for any logits. LOGPROB (an
//! adaptive softmax, whose rows already are log-probabilities) skips the
//! log-sum-exp: nll[t] = -logits[t, targets[t]].
//!
//! Placeholders: COMMENT KERNEL_NAME V VEC THREADS LOGPROB (0/1)
{{COMMENT}}
// Per-token loss -log softmax(row)[target], one block per row (templates/loss.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const float *__restrict__ logits,  // [T, V]
    const int *__restrict__ targets,  // [T]: the token each row is scored on; < 0: not scored
    float *__restrict__ nll,  // [T]
    int T)  // rows
{
    constexpr int V = {{V}};
    const int t = blockIdx.x;
    if (t >= T) return;  // uniform over the block
    const int target = targets[t];
    const float *row = logits + (size_t)t * V;
{{#if LOGPROB}}
    if (threadIdx.x == 0) nll[t] = target < 0 ? 0.0f : -row[target];
{{#else}}
    constexpr int VEC = {{VEC}};
    constexpr int THREADS = {{THREADS}};
    static_assert(V % VEC == 0, "VEC must divide the row");
    constexpr int CHUNKS = V / VEC;  // vectors per row
    constexpr float LOWEST = -3.402823466e38f;  // below every finite logit: the running maximum's start
    __shared__ float scratch_m[32], scratch_s[32];
    if (target < 0) {
        if (threadIdx.x == 0) nll[t] = 0.0f;
        return;  // uniform over the block
    }
    // (m, s): the maximum seen and the sum of exp(x - m) over what was seen.
    float m = LOWEST, s = 0.0f;
    for (int q = threadIdx.x; q < CHUNKS; q += THREADS) {
        float v[VEC];
        shortc_ld_vec<VEC>(row + q * VEC, v);
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            const float mn = fmaxf(m, v[k]);
            s = s * expf(m - mn) + expf(v[k] - mn);
            m = mn;
        }
    }
    // Combines two (m, s) pairs: the sums rescaled to the larger maximum.
    auto combine = [](float &m1, float &s1, float m2, float s2) {
        const float mn = fmaxf(m1, m2);
        s1 = s1 * expf(m1 - mn) + s2 * expf(m2 - mn);
        m1 = mn;
    };
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, offset), s2 = __shfl_xor_sync(0xffffffffu, s, offset);
        combine(m, s, m2, s2);
    }
    if ((threadIdx.x & 31) == 0) {
        scratch_m[threadIdx.x >> 5] = m;
        scratch_s[threadIdx.x >> 5] = s;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        m = (int)threadIdx.x < THREADS / 32 ? scratch_m[threadIdx.x] : LOWEST;
        s = (int)threadIdx.x < THREADS / 32 ? scratch_s[threadIdx.x] : 0.0f;
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            const float m2 = __shfl_xor_sync(0xffffffffu, m, offset), s2 = __shfl_xor_sync(0xffffffffu, s, offset);
            combine(m, s, m2, s2);
        }
        if (threadIdx.x == 0) nll[t] = (m - row[target]) + logf(s);  // the close values first: exact for large logits
    }
{{#endif}}
}
