//! attn_decode.cuh — causal attention for one new query (T = 1, decoding),
//! flash-decoding style: the P+1 keys the query sees (the P cached ones and
//! its own) are split into chunks of KPS keys, one block per chunk and head,
//! so a single query still fills the device; a second, small kernel combines
//! the chunks' partial softmaxes.
//!
//! COMBINE = 0, the partial kernel. Grid (ceil((P+1)/KPS), H), block THREADS
//! (= KPS, one key per thread). Block (s, h) computes over keys
//! k in [s*KPS, min((s+1)*KPS, P+1)):
//!   m = max_k score_k,  l = sum_k exp(score_k - m),  o = sum_k exp(score_k - m) v_k
//! with score_k = q . key_k / sqrt(HD), and writes (m, l, o[0..HD)) to
//! part[(h*MAXS + s)*(HD+2) ..].
//!
//! COMBINE = 1, the combine kernel. Grid (H), block THREADS. For head h over
//! the S = ceil((P+1)/KPS) chunks: M = max_s m_s, L = sum_s l_s exp(m_s - M),
//!   y[h*HD + j] = sum_s o_s[j] exp(m_s - M) / L.
//!
//! The key/value state holds kv_rows rows (its capacity): its strides depend
//! on kv_rows, never on T.
//!
//! A batched decode step (nseq > 0, docs/runtime.md "Batch"): T = nseq rows,
//! row r the query of sequence seq_tab[nseq + r] at position seq_tab[r], over
//! that sequence's state (seq_stride elements after the previous one's). The
//! grids gain a dimension of rows (partial: z, combine: y); the grid's chunks
//! cover the furthest sequence, and a block past its own sequence's keys
//! returns. Row r's partials lie H*MAXS*(HD+2) floats after row r-1's.
//!
//! VISIBLE = 1 (a sparse kind, compiler/emit_attn.c attn_visible_hooks): HOOKS
//! defines KERNEL_NAME_visible(h, i, j), the kind's token-level pattern
//! (templates/attn_hooks.cuh over templates/attn_kinds.cuh), and a
//! key counts only where it holds for the query (i = P); the others are
//! neither read nor weighted. A chunk with no visible key leaves m = -1e30,
//! l = 0, o = 0, and a query that sees no key at all outputs zeros.
//!
//! ALIBI = 1 (`positions alibi`): the score gains -slope_h (P - k), the slopes
//! a table KERNEL_NAME_alibi[H] the emitter computes once (SLOPES).
//!
//! Placeholders: COMMENT KERNEL_NAME H HD KPS MAXS THREADS SCALE T_QKV T_KV
//!               T_OUT KV_HTD (0/1) COMBINE (0/1) VEC_KV (0/1) VISIBLE (0/1) HOOKS
//!               ALIBI (0/1) SLOPES
//!
//! VEC_KV = 1 (fp16/bf16 keys and values, HD a multiple of 8, HD/8 <= THREADS):
//! q, K and V rows are read in pieces of 8 elements (shortc_ld_vec<8>: one
//! 128-bit load each for 2-byte types). A thread still scores its own key; for o, the threads form
//! THREADS / (HD/8) key groups, thread (group, c) sums p_k v_k[8c..8c+7] over
//! the keys k of its group, and the groups' sums are added in shared memory.
{{COMMENT}}
{{#if COMBINE}}
// Combines the partial softmaxes of the key chunks of one query (templates/attn_decode.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const float *__restrict__ part,  // [H, MAXS, HD + 2]: m, l, o per chunk
    {{T_OUT}} *__restrict__ y,  // [1, H*HD]
    int T,  // new tokens (1; a batched decode step: nseq)
    int P,  // position of the query: P + 1 keys
    const int *__restrict__ seq_tab,  // batched decode: [nseq] positions, then [nseq] sequences
    int nseq)  // sequences of a batched decode step (one row each); 0: one query
{
    constexpr int H = {{H}};
    constexpr int HD = {{HD}};
    constexpr int KPS = {{KPS}};
    constexpr int MAXS = {{MAXS}};
    constexpr int THREADS = {{THREADS}};
    const int h = blockIdx.x, r = blockIdx.y;
    if (T != (nseq > 0 ? nseq : 1) || r >= T) return;
    if (nseq > 0) {  // row r: its own sequence's query
        P = seq_tab[r];
        part += (size_t)r * H * MAXS * (HD + 2);
        y += (size_t)r * H * HD;
    }
    const int nsplit = (P + 1 + KPS - 1) / KPS;
    if (h >= H || nsplit > MAXS) return;
    const float *ph = part + (size_t)h * MAXS * (HD + 2);
    float M = -1.0e30f;
    for (int s = 0; s < nsplit; s++) M = fmaxf(M, ph[(size_t)s * (HD + 2)]);
    float L = 0.0f;
    for (int s = 0; s < nsplit; s++) L += ph[(size_t)s * (HD + 2) + 1] * expf(ph[(size_t)s * (HD + 2)] - M);
    for (int j = threadIdx.x; j < HD; j += THREADS) {
        float acc = 0.0f;
        for (int s = 0; s < nsplit; s++) acc += ph[(size_t)s * (HD + 2) + 2 + j] * expf(ph[(size_t)s * (HD + 2)] - M);
{{#if VISIBLE}}
        shortc_st(y + (size_t)h * HD + j, L > 0.0f ? acc / L : 0.0f);  // no visible key: zeros
{{#else}}
        shortc_st(y + (size_t)h * HD + j, acc / L);
{{#endif}}
    }
}
{{#else}}
{{#if VISIBLE}}
{{HOOKS}}
{{#endif}}
{{#if ALIBI}}
__device__ const float {{KERNEL_NAME}}_alibi[{{H}}] = {{SLOPES}};  // ALiBi's slope per head
{{#endif}}
// Partial softmax of one query over one chunk of keys, for one head (templates/attn_decode.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_QKV}} *__restrict__ qkv,  // [1, (H+2G)*HD]: q | k | v, head-major
    const {{T_KV}} *__restrict__ kv,  // [2, G, kv_rows, HD] or [2, kv_rows, G, HD]: keys, values
    float *__restrict__ part,  // [H, MAXS, HD + 2]: m, l, o per chunk
    int T,  // new tokens (1; a batched decode step: nseq)
    int P,  // position of the query: keys 0..P
    int kv_rows,  // rows the state holds (its capacity)
    const int *__restrict__ seq_tab,  // batched decode: [nseq] positions, then [nseq] sequences
    int nseq,  // sequences of a batched decode step (one row each); 0: one query
    int seq_stride)  // elements from one sequence's state to the next
{
    constexpr int H = {{H}};
    constexpr int HD = {{HD}};
    constexpr int KVH = {{KVH}};  // K/V heads G: query head h reads K/V head h / (H / KVH) (grouped-query attention)
    constexpr int QKVW = (H + 2 * KVH) * HD;  // qkv row: q (H heads) | k (KVH) | v (KVH)
    constexpr int KPS = {{KPS}};  // keys per chunk: one per thread
    constexpr int MAXS = {{MAXS}};  // chunks the scratch holds: ceil(capacity / KPS)
    constexpr int THREADS = {{THREADS}};
    constexpr float SCALE = {{SCALE}};  // 1 / sqrt(HD)
    constexpr float MASKED = -1.0e30f;
    __shared__ float q_s[HD];
    __shared__ float p_s[KPS];
    __shared__ float red[THREADS / 32];

    const int s = blockIdx.x, h = blockIdx.y, r = blockIdx.z;
    if (T != (nseq > 0 ? nseq : 1) || r >= T || s >= MAXS) return;
    if (nseq > 0) {  // row r: its own sequence's query, keys and partials
        P = seq_tab[r];
        if (s * KPS > P) return;  // past this sequence's keys (the grid covers the furthest)
        kv += (size_t)seq_tab[nseq + r] * seq_stride;
        qkv += (size_t)r * QKVW;
        part += (size_t)r * H * MAXS * (HD + 2);
    }
    const int k0 = s * KPS, kend = min(k0 + KPS, P + 1);
{{#if VEC_KV}}
    for (int j = 8 * threadIdx.x; j < HD; j += 8 * THREADS) shortc_ld_vec<8>(qkv + h * HD + j, q_s + j);
{{#else}}
    for (int j = threadIdx.x; j < HD; j += THREADS) q_s[j] = shortc_ld(qkv + h * HD + j);
{{#endif}}
    __syncthreads();

    // score of key k0 + thread
    const int k = k0 + (int)threadIdx.x;
    float score = MASKED;
{{#if VISIBLE}}
    const bool seen = k < kend && {{KERNEL_NAME}}_visible(h, P, k);  // the kind's pattern
    if (seen) {
{{#else}}
    if (k < kend) {
{{#endif}}
        float acc = 0.0f;
{{#if VEC_KV}}
{{#if KV_HTD}}
        const {{T_KV}} *krow = kv + ((size_t)(0 * KVH + h / (H / KVH)) * kv_rows + k) * HD;
{{#else}}
        const {{T_KV}} *krow = kv + ((size_t)(0 * kv_rows + k) * KVH + h / (H / KVH)) * HD;
{{#endif}}
        for (int j = 0; j < HD; j += 8) {
            float k8[8];
            shortc_ld_vec<8>(krow + j, k8);
#pragma unroll
            for (int e = 0; e < 8; e++) acc += q_s[j + e] * k8[e];
        }
{{#else}}
        for (int j = 0; j < HD; j++) {
{{#if KV_HTD}}
            const float kj = shortc_ld(kv + ((size_t)(0 * KVH + h / (H / KVH)) * kv_rows + k) * HD + j);
{{#else}}
            const float kj = shortc_ld(kv + ((size_t)(0 * kv_rows + k) * KVH + h / (H / KVH)) * HD + j);
{{#endif}}
            acc += q_s[j] * kj;
        }
{{#endif}}
{{#if ALIBI}}
        score = acc * SCALE - {{KERNEL_NAME}}_alibi[h] * (float)(P - k);
{{#else}}
        score = acc * SCALE;
{{#endif}}
    }

    // m = block max of the scores
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float m = shortc_warp_max(score);
    if (lane == 0) red[warp] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < THREADS / 32; w++) m = fmaxf(m, red[w]);
    __syncthreads();

    // p = exp(score - m), l = block sum
{{#if VISIBLE}}
    const float p = seen ? expf(score - m) : 0.0f;
{{#else}}
    const float p = k < kend ? expf(score - m) : 0.0f;
{{#endif}}
    p_s[threadIdx.x] = p;
    float l = shortc_warp_sum(p);
    if (lane == 0) red[warp] = l;
    __syncthreads();
    l = 0.0f;
    for (int w = 0; w < THREADS / 32; w++) l += red[w];

    // o = sum_k p_k v_k, one output dim per thread
    float *out = part + ((size_t)h * MAXS + s) * (HD + 2);
{{#if VEC_KV}}
    constexpr int CH = HD / 8, G = THREADS / CH;  // 16-byte pieces per row; key groups
    __shared__ float o_s[G][HD];  // per key group: its part of o
    const int c = threadIdx.x % CH, grp = threadIdx.x / CH;
    if (grp < G) {
        float acc8[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        for (int kk = grp; kk < kend - k0; kk += G) {
{{#if VISIBLE}}
            if (p_s[kk] == 0.0f) continue;  // not visible: its value row is not read
{{#endif}}
            float v8[8];
{{#if KV_HTD}}
            shortc_ld_vec<8>(kv + ((size_t)(1 * KVH + h / (H / KVH)) * kv_rows + k0 + kk) * HD + c * 8, v8);
{{#else}}
            shortc_ld_vec<8>(kv + ((size_t)(1 * kv_rows + k0 + kk) * KVH + h / (H / KVH)) * HD + c * 8, v8);
{{#endif}}
#pragma unroll
            for (int e = 0; e < 8; e++) acc8[e] += p_s[kk] * v8[e];
        }
#pragma unroll
        for (int e = 0; e < 8; e++) o_s[grp][c * 8 + e] = acc8[e];
    }
    __syncthreads();
    for (int j = threadIdx.x; j < HD; j += THREADS) {
        float acc = 0.0f;
        for (int g = 0; g < G; g++) acc += o_s[g][j];
        out[2 + j] = acc;
    }
{{#else}}
    for (int j = threadIdx.x; j < HD; j += THREADS) {
        float acc = 0.0f;
        for (int kk = 0; kk < kend - k0; kk++) {
{{#if VISIBLE}}
            if (p_s[kk] == 0.0f) continue;  // not visible: its value row is not read
{{#endif}}
{{#if KV_HTD}}
            const float vj = shortc_ld(kv + ((size_t)(1 * KVH + h / (H / KVH)) * kv_rows + k0 + kk) * HD + j);
{{#else}}
            const float vj = shortc_ld(kv + ((size_t)(1 * kv_rows + k0 + kk) * KVH + h / (H / KVH)) * HD + j);
{{#endif}}
            acc += p_s[kk] * vj;
        }
        out[2 + j] = acc;
    }
{{#endif}}
    if (threadIdx.x == 0) {
        out[0] = m;
        out[1] = l;
    }
}
{{#endif}}
