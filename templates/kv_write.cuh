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
//! Placeholders: COMMENT KERNEL_NAME H KVH HD THREADS T_QKV T_KV KV_HTD (0/1) SEQ_ROWS (0/1)
{{COMMENT}}
// Keys and values from qkv into the key/value layout (templates/kv_write.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_QKV}} *__restrict__ qkv,  // [T, (H+2*KVH)*HD]
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
    for (int c = threadIdx.x; c < KVH * HD; c += THREADS) {
        const int h = c / HD;
        const int j = c % HD;
{{#if KV_HTD}}
        const size_t dst = (((size_t)p * KVH + h) * kv_rows + P + t) * HD + j;
{{#else}}
        const size_t dst = (((size_t)p * kv_rows + P + t) * KVH + h) * HD + j;
{{#endif}}
        shortc_st(kv + dst, shortc_ld(src + c));
    }
}
