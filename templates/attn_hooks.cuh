//! attn_hooks.cuh — an attention kind's hooks for one kernel (written into
//! its HOOKS by compiler/emit_attn.c): KERNEL_NAME_visible(h, i, j) calls the
//! kind's visibility in templates/attn_kinds.cuh (pasted once after the
//! prelude) with the layer's typed parameters as constants and its seeded
//! table (an int table the emitter writes before this text); with EXTRA,
//! KERNEL_NAME_extra(h, i, j), the score term of a kind that adds none, or
//! with ALIBI ALiBi's -slope_h (i - j) (Press et al.), its slopes a table
//! KERNEL_NAME_alibi[heads] the emitter computes once (compiler/rope.c
//! alibi_slope), so no power is taken per score.
//!
//! Placeholders: KERNEL_NAME KIND VISIBLE SETS (`\n    p.FIELD = VALUE;` per
//!               parameter) TABLE (the seeded table's name, or nullptr) NTOK
//!               (positions the table covers) EXTRA (0/1) ALIBI (0/1)
//!               SLOPES (with ALIBI: `{s_0, s_1, ...}`, one per head)
// attention {{KIND}}: its visibility (attn_kinds.cuh) at this layer's parameters
__device__ __forceinline__ bool {{KERNEL_NAME}}_visible(int h, int i, int j) {
    AttnParams p = {};{{SETS}}
    return {{VISIBLE}}(&p, {{TABLE}}, {{NTOK}}, h, i, j);
}
{{#if EXTRA}}
{{#if ALIBI}}
// ALiBi: head h's slope, times the distance from query i back to key j
__device__ const float {{KERNEL_NAME}}_alibi[] = {{SLOPES}};
__device__ __forceinline__ float {{KERNEL_NAME}}_extra(int h, int i, int j) {
    return -{{KERNEL_NAME}}_alibi[h] * (float)(i - j);
}
{{#else}}
__device__ __forceinline__ float {{KERNEL_NAME}}_extra(int h, int i, int j) {
    (void)h, (void)i, (void)j;
    return 0.0f;  // sparse kinds add nothing
}
{{#endif}}
{{#endif}}
