//! embed.cuh — token embedding plus positions, one block per token.
//!
//!   x[t, c] = wte[tokens[t], c] (+ wpe[P+t, c] | + sinusoid(P+t, c))
//!
//! Token t of the call is at position P + t (P: the session's position).
//!
//! Sinusoidal positions are interleaved: channel 2i holds sin(t * w_i) and
//! channel 2i+1 holds cos(t * w_i), w_i = 10000^(-2i/D) (computed in double).
//! Token ids outside [0, VOCAB) are clamped (the runtime validates them).
//!
//! Placeholders: COMMENT KERNEL_NAME D VOCAB THREADS T_WTE T_WPE T_OUT
//!               POS_LEARNED POS_SINUSOIDAL (0/1)
{{COMMENT}}
// Token embedding plus positions, one block per token (templates/embed.cuh).
extern "C" __global__ void {{KERNEL_NAME}}(
    const int *__restrict__ tokens,  // [T]
    const {{T_WTE}} *__restrict__ wte,  // [VOCAB, D]
{{#if POS_LEARNED}}
    const {{T_WPE}} *__restrict__ wpe,  // [positions, D]
{{#endif}}
    {{T_OUT}} *__restrict__ x,  // [T, D]
    int T,  // tokens
    int P)  // position of the first
{
    constexpr int D = {{D}};
    constexpr int VOCAB = {{VOCAB}};
    constexpr int THREADS = {{THREADS}};
    const int t = blockIdx.x;
    if (t >= T) return;
    int tok = tokens[t];
    tok = tok < 0 ? 0 : (tok >= VOCAB ? VOCAB - 1 : tok);
    const {{T_WTE}} *emb = wte + (size_t)tok * D;
{{#if POS_LEARNED}}
    const {{T_WPE}} *pos = wpe + (size_t)(P + t) * D;
{{#endif}}
    {{T_OUT}} *out = x + (size_t)t * D;
    for (int c = threadIdx.x; c < D; c += THREADS) {
        float v = shortc_ld(emb + c);
{{#if POS_LEARNED}}
        v += shortc_ld(pos + c);
{{#endif}}
{{#if POS_SINUSOIDAL}}
        const double freq = exp(-(double)(c & ~1) * (9.210340371976184 / D));  // 10000^(-2i/D)
        const double angle = (double)(P + t) * freq;
        v += (float)((c & 1) ? cos(angle) : sin(angle));
{{#endif}}
        shortc_st(out + c, v);
    }
}
