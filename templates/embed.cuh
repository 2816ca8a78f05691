//! embed.cuh — token embedding plus positions, one block per token; each
//! thread moves VEC consecutive channels at a time (vector accesses: 128-bit
//! where VEC elements fill 16 bytes; VEC divides D, VEC = 1 is scalar).
//!
//!   x[t, c] = wte[tokens[t], c] (+ wpe[P+t, c] | + sinusoid(P+t, c))
//!
//! With FROM_X (the adaptive input's pos_add node) the rows come from an
//! activation instead of a table, scaled:
//!
//!   x[t, c] = in[t, c] * SCALE (+ wpe[P+t, c] | + sinusoid(P+t, c))
//!
//! Token t of the call is at position P + t (P: the session's position);
//! with POS_RESTART (a cache without PIA, docs/attention/pia.md) at
//! (P mod POS_MOD) + t: each segment's tokens at 0..L-1 (calls stop at
//! segment ends, and the cache holds whole segments).
//!
//! Sinusoidal positions (computed in double) are Vaswani's by default,
//! interleaved: channel 2i holds sin(t * w_i) and channel 2i+1 cos(t * w_i),
//! w_i = 10000^(-2i/D). With FAIRSEQ they are fairseq's
//! SinusoidalPositionalEmbedding (the formula of compiler/mem_pia.c
//! pia_sinusoid): position t + 2, HALF = D/2 frequencies
//! w_i = exp(-i log(10000) / (HALF-1)), sines in channels 0..HALF-1, cosines
//! in HALF..2*HALF-1, a last odd channel 0.
//! Token ids outside [0, VOCAB) are clamped (the runtime validates them).
//!
//! SEQ_ROWS = 1 (the decode program's embedding): two more arguments, the
//! sequence table and nseq; nseq > 0 is a batched decode step, whose row t is
//! a sequence of its own at position seq_tab[t] (docs/runtime.md, "Batch").
//!
//! Placeholders: COMMENT KERNEL_NAME D VEC VOCAB THREADS T_WTE T_WPE T_OUT
//!               POS_LEARNED POS_SINUSOIDAL FAIRSEQ POS_RESTART (0/1) POS_MOD
//!               FROM_X (0/1; with 1: SCALE and T_IN instead of VOCAB and T_WTE)
//!               SEQ_ROWS (0/1)
{{COMMENT}}
{{#if FROM_X}}
// Adaptive input scale plus positions, one block per token (templates/embed.cuh, FROM_X).
extern "C" __global__ void {{KERNEL_NAME}}(
    const {{T_IN}} *__restrict__ in,  // [T, D]: the summed band projections
{{#else}}
// Token embedding plus positions, one block per token (templates/embed.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const int *__restrict__ tokens,  // [T]
    const {{T_WTE}} *__restrict__ wte,  // [VOCAB, D]
{{#endif}}
{{#if POS_LEARNED}}
    const {{T_WPE}} *__restrict__ wpe,  // [positions, D]
{{#endif}}
    {{T_OUT}} *__restrict__ x,  // [T, D]
    int T,  // tokens
{{#if SEQ_ROWS}}
    int P,  // position of the first
    const int *__restrict__ seq_tab,  // batched decode: [nseq] positions, then [nseq] sequences
    int nseq)  // sequences of a batched decode step (one row each); 0: the rows are one sequence's
{{#else}}
    int P)  // position of the first
{{#endif}}
{
    constexpr int D = {{D}};
    constexpr int VEC = {{VEC}};
{{#if FROM_X}}
    constexpr float SCALE = {{SCALE}};
{{#else}}
    constexpr int VOCAB = {{VOCAB}};
{{#endif}}
    constexpr int THREADS = {{THREADS}};
    static_assert(D % VEC == 0, "VEC must divide the row");
    const int t = blockIdx.x;
    if (t >= T) return;
{{#if POS_RESTART}}
    P %= {{POS_MOD}};  // the segment's own positions
{{#endif}}
{{#if SEQ_ROWS}}
    if (nseq > 0) P = seq_tab[t] - t;  // row t: its own sequence's position (P + t below)
{{#if POS_RESTART}}
    if (nseq > 0) P = seq_tab[t] % {{POS_MOD}} - t;
{{#endif}}
{{#endif}}
{{#if FROM_X}}
    const {{T_IN}} *emb = in + (size_t)t * D;
{{#else}}
    int tok = tokens[t];
    tok = tok < 0 ? 0 : (tok >= VOCAB ? VOCAB - 1 : tok);
    const {{T_WTE}} *emb = wte + (size_t)tok * D;
{{#endif}}
{{#if POS_LEARNED}}
    const {{T_WPE}} *pos = wpe + (size_t)(P + t) * D;
{{#endif}}
    {{T_OUT}} *out = x + (size_t)t * D;
    for (int c0 = threadIdx.x * VEC; c0 < D; c0 += THREADS * VEC) {
        float v[VEC];
        shortc_ld_vec<VEC>(emb + c0, v);
{{#if FROM_X}}
#pragma unroll
        for (int k = 0; k < VEC; k++) v[k] *= SCALE;
{{#endif}}
{{#if POS_LEARNED}}
        float p[VEC];
        shortc_ld_vec<VEC>(pos + c0, p);
#pragma unroll
        for (int k = 0; k < VEC; k++) v[k] += p[k];
{{#endif}}
{{#if POS_SINUSOIDAL}}
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            const int c = c0 + k;
{{#if FAIRSEQ}}
            constexpr int HALF = D / 2;
            const int i = c < HALF ? c : c - HALF;
            const double angle = (double)(P + t + 2) * exp(-(double)i * log(10000.0) / (double)(HALF - 1));
            v[k] += c >= 2 * HALF ? 0.0f : (float)(c < HALF ? sin(angle) : cos(angle));
{{#else}}
            const double freq = exp(-(double)(c & ~1) * (9.210340371976184 / D));  // 10000^(-2i/D)
            const double angle = (double)(P + t) * freq;
            v[k] += (float)((c & 1) ? cos(angle) : sin(angle));
{{#endif}}
        }
{{#endif}}
        shortc_st_vec<VEC>(out + c0, v);
    }
}
