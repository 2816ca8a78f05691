//! adaptive_logprob.cuh — adaptive softmax log-probabilities, one segment of
//! the vocabulary per launch (the head's shortlist, or one tail cluster), one
//! block per row with block reductions (max, then sum of exponentials).
//!
//!   lse      = logsumexp(head[t, 0..C0) ++ clusters[t, 0..NT))
//!   HEAD:    y[t, j]       = head[t, j] - lse                              j < C0
//!   tail:    y[t, OFF + j] = clusters[t, CLUSTER] - lse + seg[t, j] - logsumexp(seg[t, 0..W))
//!
//! CLUSTER is the tail's column among the cluster logits (Transformer-XL's
//! reversed order is resolved by the emitter). Each launch recomputes the
//! head's log-sum-exp, which costs C0 + NT reads per row.
//!
//! Placeholders: COMMENT KERNEL_NAME C0 NT W OFF V CLUSTER THREADS T_HEAD T_CL T_SEG T_OUT
//!               HEAD (0/1: the shortlist segment, seg is the head itself)
{{COMMENT}}
// Adaptive softmax log-probabilities of one segment, one block per row (templates/adaptive_logprob.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_HEAD}} *__restrict__ head,  // [T, C0]: shortlist logits
    const {{T_CL}} *__restrict__ clusters,  // [T, NT]: cluster logits
{{#if HEAD}}
    {{T_OUT}} *__restrict__ y,  // [T, V]
{{#else}}
    const {{T_SEG}} *__restrict__ seg,  // [T, W]: this tail's logits
    {{T_OUT}} *__restrict__ y,  // [T, V]
{{#endif}}
    int T)  // rows
{
    constexpr int C0 = {{C0}};
    constexpr int NT = {{NT}};
    constexpr int V = {{V}};
    constexpr int THREADS = {{THREADS}};
    constexpr float LOWEST = -3.402823466e38f;  // the identity of the maximum: no finite logit is below it
    __shared__ float scratch[32];
    const int t = blockIdx.x;
    if (t >= T) return;  // uniform over the block
    const {{T_HEAD}} *h = head + (size_t)t * C0;
    const {{T_CL}} *cl = clusters + (size_t)t * NT;
    {{T_OUT}} *out = y + (size_t)t * V;

    // Maximum over the block; every thread gets it. Leaves scratch to the next reduction.
    auto block_max = [&](float v) {
        v = shortc_warp_max(v);
        __syncthreads();  // scratch may still be read by a previous reduction
        if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
        __syncthreads();
        v = (int)(threadIdx.x & 31) < THREADS / 32 ? scratch[threadIdx.x & 31] : LOWEST;
        return shortc_warp_max(v);
    };
    float m = LOWEST;
    for (int j = threadIdx.x; j < C0 + NT; j += THREADS) m = fmaxf(m, shortc_ld(j < C0 ? h + j : cl + (j - C0)));
    m = block_max(m);
    float s = 0.0f;
    for (int j = threadIdx.x; j < C0 + NT; j += THREADS) s += expf(shortc_ld(j < C0 ? h + j : cl + (j - C0)) - m);
    const float lse = m + logf(shortc_block_sum(s, scratch));
{{#if HEAD}}
    for (int j = threadIdx.x; j < C0; j += THREADS) shortc_st(out + j, shortc_ld(h + j) - lse);
{{#else}}
    constexpr int W = {{W}};
    constexpr int OFF = {{OFF}};
    constexpr int CLUSTER = {{CLUSTER}};
    const {{T_SEG}} *tail = seg + (size_t)t * W;
    float tm = LOWEST;
    for (int j = threadIdx.x; j < W; j += THREADS) tm = fmaxf(tm, shortc_ld(tail + j));
    tm = block_max(tm);
    float ts = 0.0f;
    for (int j = threadIdx.x; j < W; j += THREADS) ts += expf(shortc_ld(tail + j) - tm);
    const float base = shortc_ld(cl + CLUSTER) - lse - (tm + logf(shortc_block_sum(ts, scratch)));
    for (int j = threadIdx.x; j < W; j += THREADS) shortc_st(out + OFF + j, base + shortc_ld(tail + j));
{{#endif}}
}
