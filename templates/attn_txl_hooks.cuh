//! attn_txl_hooks.cuh — Transformer-XL relative attention's hooks for one
//! engine kernel (REL, templates/attn_engine.cuh or templates/attn_mma.cuh;
//! written into its HOOKS by compiler/emit.c txl_hooks): KERNEL_NAME_visible
//! is the memory and same_length rule of templates/attn_kinds.cuh
//! (attn_visible_txl, pasted once after the prelude) at the kernel's P. The
//! CUDA-core engine's KERNEL_NAME_rel is the positional score term
//! (q + v).(W_r R_min(i-j, clamp)) for the stored query q + u; the
//! tensor-core path (MMA) computes that term by MMA itself and takes the
//! table's last row (_last_row: clamp), a zero _extra and the full-tile test
//! (_full_tile: every pair of a query tile and a key tile visible at the
//! kernel's P, so no per-score test).
//!
//! Placeholders: KERNEL_NAME MEMORY CLAMP SAME_LENGTH REACH (memory + QT)
//!               T_REL T_B LAST_ROW (the table's last distance) HD W (H*HD) MMA (0/1)
// Transformer-XL relative attention: memory {{MEMORY}}, clamp {{CLAMP}}, same_length {{SAME_LENGTH}}.
#define {{KERNEL_NAME}}_reach {{REACH}}  // the earliest key of a query tile: the memory before its first query
#define {{KERNEL_NAME}}_visible(h, i, j) attn_visible_txl(i, j, P, {{MEMORY}}, {{SAME_LENGTH}})  // P: the kernel's argument
{{#if MMA}}
#define {{KERNEL_NAME}}_last_row {{LAST_ROW}}  // clamp_len (the table's last row): distances above it read this row
#define {{KERNEL_NAME}}_extra(h, i, j) 0.0f  // the position term is the kernel's second MMA, not an extra
// Whether queries [q0, q0+nq) all see keys [kf, kf+nk): causal, in the memory at the kernel's P, same_length.
#define {{KERNEL_NAME}}_full_tile(q0, nq, kf, nk) \
    ((kf) + (nk) - 1 <= (q0) && (kf) >= P - min(P, {{MEMORY}}) && (!{{SAME_LENGTH}} || (kf) > (q0) + (nq) - 1 - {{MEMORY}}))
{{#else}}
__device__ __forceinline__ float {{KERNEL_NAME}}_rel(const {{T_REL}} *rel, const {{T_B}} *r_w, const {{T_B}} *r_r, int h, int i, int j, const float *q) {
    const int d = min(i - j, {{LAST_ROW}});  // clamp_len (the table's last row), also for padding queries
    float s = 0.0f;
    for (int c = 0; c < {{HD}}; c++)
        s += (q[c] - shortc_ld(r_w + h * {{HD}} + c) + shortc_ld(r_r + h * {{HD}} + c)) * shortc_ld(rel + (size_t)d * {{W}} + h * {{HD}} + c);
    return s;
}
{{#endif}}
