//! kv_write.cuh — commits the key and value blocks of qkv into the session's
//! key/value state, in its layout and dtype, at rows P..P+T-1. Grid: (T, 2) —
//! one block per token and part (0 = keys, 1 = values).
//!
//!   qkv[t, (H + p*KVH)*HD + h*HD + j]  ->  kv[p][h][P+t][j]   ([heads, rows, dim], KV_HTD = 1)
//!                                      ->  kv[p][P+t][h][j]   ([rows, heads, dim], KV_HTD = 0)
//! for the KVH K/V heads h (grouped-query attention: KVH < H; qkv rows are
//! (H + 2*KVH)*HD wide: q | k | v).
//! The state holds kv_rows rows (its capacity): its strides depend on kv_rows,
//! never on the call's T (docs/ir.md, "State").
//!
//! SEQ_ROWS = 1 (the decode program's): with nseq > 0 (a batched decode step)
//! row t is the token of sequence seq_tab[nseq + t] at position seq_tab[t],
//! written into that sequence's state (seq_stride elements after the previous).
//!
//! ROPE = 1 (`positions rope`): the keys are stored rotated to their position
//! (the cache holds rotated keys), and block (t, 0) also rotates row t's H
//! query heads in place in qkv, in the same pass, so the attention kernels
//! read rotated queries and keys as they read plain ones. The frequencies
//! are the table KERNEL_NAME_inv_freq[HALF] the emitter computes once
//! (compiler/rope.c rope_inv_freq: linear, YaRN and Llama 3.1 scalings folded
//! in), cos and sin times MSCALE (YaRN); DYNAMIC (dynamic NTK) scales them per
//! call by b^(-2i/(DIMS-2)), b = FACTOR*L/ORIG_MAX - (FACTOR-1) once the
//! call's length L = P+T passes ORIG_MAX (a batched decode row: its position
//! + 1), into shared memory once per block. Pairs (i, i+HALF) (HF's
//! rotate_half), or (2i, 2i+1) with INTERLEAVED; channels past DIMS = 2*HALF
//! are not rotated.
//!
//! Placeholders: COMMENT KERNEL_NAME H KVH HD THREADS T_QKV T_KV KV_HTD (0/1) SEQ_ROWS (0/1)
//!               ROPE (0/1) HALF INTERLEAVED (0/1) INV_FREQ MSCALE DYNAMIC (0/1) FACTOR ORIG_MAX
{{COMMENT}}
{{#if ROPE}}
__device__ const float {{KERNEL_NAME}}_inv_freq[{{HALF}}] = {{INV_FREQ}};  // rotary frequencies, scaled
{{#endif}}
// Keys and values from qkv into the key/value layout (templates/kv_write.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
{{#if ROPE}}
    {{T_QKV}} *__restrict__ qkv,  // [T, (H+2*KVH)*HD]: its queries rotated in place
{{#else}}
    const {{T_QKV}} *__restrict__ qkv,  // [T, (H+2*KVH)*HD]
{{#endif}}
    {{T_KV}} *__restrict__ kv,  // [2, KVH, kv_rows, HD] or [2, kv_rows, KVH, HD]
    int T,  // new tokens
    int P,  // position of the first: the row it is written to
{{#if SEQ_ROWS}}
    int kv_rows,  // rows the state holds (its capacity)
    const int *__restrict__ seq_tab,  // batched decode: [nseq] positions, then [nseq] sequences
    int nseq,  // sequences of a batched decode step (one row each); 0: the rows are one sequence's
    int seq_stride)  // elements from one sequence's state to the next
{{#else}}
    int kv_rows)  // rows the state holds (its capacity)
{{#endif}}
{
    constexpr int H = {{H}};
    constexpr int KVH = {{KVH}};  // K/V heads written (grouped-query attention: fewer than H)
    constexpr int HD = {{HD}};
    constexpr int THREADS = {{THREADS}};
    const int t = blockIdx.x;
    const int p = blockIdx.y;
    if (t >= T) return;
{{#if SEQ_ROWS}}
    if (nseq > 0) {  // row t: its own sequence's state, at its position (P + t below)
        kv += (size_t)seq_tab[nseq + t] * seq_stride;
        P = seq_tab[t] - t;
    }
{{#endif}}
    const {{T_QKV}} *src = qkv + (size_t)t * ((H + 2 * KVH) * HD) + (size_t)(H + p * KVH) * HD;
{{#if ROPE}}
    constexpr int HALF = {{HALF}}, DIMS = 2 * HALF;  // rotated pairs, channels
    constexpr bool INTERLEAVED = {{INTERLEAVED}};
    constexpr float MSCALE = {{MSCALE}};
    __shared__ float inv_s[HALF];  // this row's frequencies
{{#if SEQ_ROWS}}
    const int L = nseq > 0 ? seq_tab[t] + 1 : P + T;  // the call's length (dynamic scaling)
{{#else}}
    const int L = P + T;  // the call's length (dynamic scaling)
{{#endif}}
    for (int i = threadIdx.x; i < HALF; i += THREADS) {
        float f = {{KERNEL_NAME}}_inv_freq[i];
{{#if DYNAMIC}}
        constexpr float FACTOR = {{FACTOR}};
        constexpr int ORIG_MAX = {{ORIG_MAX}};
        if (L > ORIG_MAX) f *= powf(FACTOR * L / ORIG_MAX - (FACTOR - 1.0f), -2.0f * i / (DIMS - 2));
{{#else}}
        (void)L;
{{#endif}}
        inv_s[i] = f;
    }
    __syncthreads();
    const float pos = (float)(P + t);
    if (p == 0) {  // row t's queries, pair by pair in place (one thread owns both channels of a pair)
        {{T_QKV}} *q = qkv + (size_t)t * ((H + 2 * KVH) * HD);
        for (int c = threadIdx.x; c < H * HALF; c += THREADS) {
            const int h = c / HALF, i = c % HALF;
            const int i0 = h * HD + (INTERLEAVED ? 2 * i : i), i1 = h * HD + (INTERLEAVED ? 2 * i + 1 : i + HALF);
            const float a = pos * inv_s[i], cs = cosf(a) * MSCALE, sn = sinf(a) * MSCALE;
            const float x0 = shortc_ld(q + i0), x1 = shortc_ld(q + i1);
            shortc_st(q + i0, x0 * cs - x1 * sn);
            shortc_st(q + i1, x1 * cs + x0 * sn);
        }
    }
{{#endif}}
    for (int c = threadIdx.x; c < KVH * HD; c += THREADS) {
        const int h = c / HD;
        const int j = c % HD;
{{#if KV_HTD}}
        const size_t dst = (((size_t)p * KVH + h) * kv_rows + P + t) * HD + j;
{{#else}}
        const size_t dst = (((size_t)p * kv_rows + P + t) * KVH + h) * HD + j;
{{#endif}}
{{#if ROPE}}
        if (p == 0 && j < DIMS) {  // a rotated key channel: x0 c - x1 s (first of its pair) or x1 c + x0 s
            const int i = INTERLEAVED ? j / 2 : j % HALF;
            const bool first = INTERLEAVED ? j % 2 == 0 : j < HALF;
            const int mate = INTERLEAVED ? (first ? j + 1 : j - 1) : (first ? j + HALF : j - HALF);
            const float a = pos * inv_s[i], cs = cosf(a) * MSCALE, sn = sinf(a) * MSCALE;
            const float x = shortc_ld(src + c), y = shortc_ld(src + h * HD + mate);
            shortc_st(kv + dst, first ? x * cs - y * sn : x * cs + y * sn);
            continue;
        }
{{#endif}}
        shortc_st(kv + dst, shortc_ld(src + c));
    }
}
