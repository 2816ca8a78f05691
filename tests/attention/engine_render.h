/* engine_render.h — renders an attention-engine kernel for one pattern outside a
 * model, for the tests and the benchmark of tests/attention and tests/bench
 * (needs compiler/emit.h): the CUDA-core path (templates/attn_engine.cuh, fp32
 * unless told, 4 warps) or the tensor-core path (templates/attn_mma.cuh, 4
 * warps of 32 queries, dynamic shared memory engine_smem; its source needs
 * templates/mma_frag.cuh after the prelude), [heads, tokens, dim] KV unless told. */
#ifndef SHORTC_ENGINE_RENDER_H
#define SHORTC_ENGINE_RENDER_H

#include "emit.h"

#include <math.h>
#include <stdlib.h>

/* Shape of a rendered engine kernel. */
typedef struct EngineShape {
    int heads;    /* H */
    int hd;       /* HD */
    int qpw;      /* queries per warp (QT = 4 * qpw) */
    int kt;       /* keys per tile */
    int ntok;     /* positions the lists cover */
    bool mma;     /* the tensor-core path (qpw ignored: QT = ATTN_MMA_QT) */
    const char *t_qkv, *t_kv, *t_out; /* element types (NULL: float) */
    bool thd;     /* KV as [2, tokens, heads, dim] */
} EngineShape;

/* Starts a source of rendered kernels: the prelude, the kinds' visibility (templates/attn_kinds.cuh, which the
 * hooks call), and with mma templates/mma_frag.cuh after them. */
static inline void engine_source_start(StrBuf *b, bool mma) {
    sb_puts(b, template_find("prelude.cuh")->text);
    sb_puts(b, template_find("attn_kinds.cuh")->text);
    if (mma) sb_puts(b, template_find("mma_frag.cuh")->text);
}

/* Queries per block of a rendered kernel. */
static inline int engine_qt(const EngineShape *s) { return s->mma ? ATTN_MMA_QT : 4 * s->qpw; }

/* Blocks along x a plan launches for a rendered kernel of pattern p and a call of T queries: ceil(T/QT), on the
 * tensor-core path one per query tile the call touches at any P (attn_mma_grid_pad). */
static inline int engine_grid(const EngineShape *s, const AttnPattern *p, int T) {
    int qt = engine_qt(s), dmax = 0, dil, reach, globals;
    if (!s->mma) return (T + qt - 1) / qt;
    for (int h = 0; h < p->heads && attn_pattern_residue(p, h, &dil, &reach, &globals); h++)
        if (dil > dmax) dmax = dil;
    return (T + attn_mma_grid_pad(dmax) + qt - 1) / qt;
}

/* Dynamic shared memory of a rendered kernel for pattern p (the tensor-core path's; 0: static only). */
static inline int engine_smem(const EngineShape *s, const AttnPattern *p) {
    return s->mma ? attn_mma_smem(s->hd, s->kt, attn_pattern_gathered(p)) : 0;
}

/* Appends kernel `name` for pattern p to b; with count, the instrumented build (NAME_tiles_loaded, and on
 * the tensor-core path NAME_warp_tiles). */
static inline bool engine_render(Arena *a, Diag *d, StrBuf *b, const AttnPattern *p, const char *name,
                                 const EngineShape *s, bool count) {
    int qt = engine_qt(s), nqt = (s->ntok + qt - 1) / qt;
    char *hooks = attn_hooks(p, name, qt, s->kt, nqt);
    if (!hooks) return false;
    if (count) sb_printf(b, "__device__ unsigned %s_tiles_loaded;\n", name);
    if (count && s->mma) sb_printf(b, "__device__ unsigned %s_warp_tiles;\n", name);
    TmplArgs t = {0};
    tmpl_set(&t, "COMMENT", "//");
    tmpl_set(&t, "KERNEL_NAME", name);
    tmpl_setf(a, &t, "H", "%d", s->heads);
    tmpl_setf(a, &t, "HD", "%d", s->hd);
    tmpl_set(&t, "WARPS", "4");
    if (s->mma) tmpl_setf(a, &t, "HDP", "%d", (s->hd + 15) / 16 * 16);
    else tmpl_setf(a, &t, "QPW", "%d", s->qpw);
    tmpl_setf(a, &t, "KT", "%d", s->kt);
    tmpl_setf(a, &t, "NQT", "%d", nqt);
    tmpl_set(&t, "HEAD_TABLES", attn_pattern_head_dependent(p) ? "1" : "0");
    tmpl_setf(a, &t, "SCALE", "%.9gf", 1.0 / sqrt((double)s->hd));
    tmpl_set(&t, "T_QKV", s->t_qkv ? s->t_qkv : "float");
    tmpl_set(&t, "T_KV", s->t_kv ? s->t_kv : "float");
    tmpl_set(&t, "T_OUT", s->t_out ? s->t_out : "float");
    tmpl_set(&t, "HOOKS", arena_strdup(a, hooks));
    tmpl_set(&t, "KV_HTD", s->thd ? "0" : "1");
    tmpl_set(&t, "GATHER", attn_pattern_gathered(p) ? "1" : "0");
    tmpl_set(&t, "BANDED", attn_pattern_band(p) ? "1" : "0");
    int dil, reach, globals;
    tmpl_set(&t, "RESIDUE", attn_pattern_residue(p, 0, &dil, &reach, &globals) ? "1" : "0");
    tmpl_set(&t, "COUNT_TILES", count ? "1" : "0");
    if (!s->mma) tmpl_set(&t, "REC_KEY", "0"); /* no recurrence key source (docs/attention/recurrence.md) */
    if (!s->mma) tmpl_set(&t, "PIA", "0"); /* position-infused attention: tests/cmake/pia.cmake */
    tmpl_set(&t, "REL", "0"); /* Transformer-XL relative attention: tests/cmake/txl.cmake */
    free(hooks);
    return template_render(d, s->mma ? "attn_mma.cuh" : "attn_engine.cuh", t.kv, t.n, b);
}

#endif
