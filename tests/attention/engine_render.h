/* engine_render.h — the tests' and benchmarks' names (tests/attention, tests/bench, tests/costdoc) for the
 * compiler's renderer of one attention kernel outside a model (compiler/attn_render.c, declared in
 * compiler/emit.h): the one the runtime's srt_attention uses. */
#ifndef SHORTC_ENGINE_RENDER_H
#define SHORTC_ENGINE_RENDER_H

#include "emit.h"

typedef AttnRenderShape EngineShape;

static inline void engine_source_start(StrBuf *b, bool mma) { attn_render_source_start(b, mma); }
static inline int engine_qt(const EngineShape *s) { return attn_render_qt(s); }
static inline int engine_grid(const EngineShape *s, const AttnPattern *p, int T) { return attn_render_grid(s, p, T); }
static inline int engine_smem(const EngineShape *s, const AttnPattern *p) { return attn_render_smem(s, p); }
static inline bool engine_render(Arena *a, Diag *d, StrBuf *b, const AttnPattern *p, const char *name,
                                 const EngineShape *s, bool count) {
    return attn_render(a, d, b, p, name, s, count);
}

#endif
