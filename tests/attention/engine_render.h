/* engine_render.h — renders templates/attn_engine.cuh for one pattern outside a
 * model (fp32, [heads, tokens, dim] KV, 4 warps), for the tests and the
 * benchmark of tests/attention and tests/bench; needs compiler/emit.h. */
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
} EngineShape;

/* Appends kernel `name` for pattern p to b; with count, the instrumented build (NAME_tiles_loaded). */
static inline bool engine_render(Arena *a, Diag *d, StrBuf *b, const AttnPattern *p, const char *name,
                                 const EngineShape *s, bool count) {
    int qt = 4 * s->qpw, nqt = (s->ntok + qt - 1) / qt;
    char *hooks = attn_hooks(p, name, qt, s->kt, nqt);
    if (!hooks) return false;
    if (count) sb_printf(b, "__device__ unsigned %s_tiles_loaded;\n", name);
    TmplArgs t = {0};
    tmpl_set(&t, "COMMENT", "//");
    tmpl_set(&t, "KERNEL_NAME", name);
    tmpl_setf(a, &t, "H", "%d", s->heads);
    tmpl_setf(a, &t, "HD", "%d", s->hd);
    tmpl_set(&t, "WARPS", "4");
    tmpl_setf(a, &t, "QPW", "%d", s->qpw);
    tmpl_setf(a, &t, "KT", "%d", s->kt);
    tmpl_setf(a, &t, "NQT", "%d", nqt);
    tmpl_set(&t, "HEAD_TABLES", attn_pattern_head_dependent(p) ? "1" : "0");
    tmpl_setf(a, &t, "SCALE", "%.9gf", 1.0 / sqrt((double)s->hd));
    tmpl_set(&t, "T_QKV", "float");
    tmpl_set(&t, "T_KV", "float");
    tmpl_set(&t, "T_OUT", "float");
    tmpl_set(&t, "HOOKS", arena_strdup(a, hooks));
    tmpl_set(&t, "KV_HTD", "1");
    tmpl_set(&t, "GATHER", attn_pattern_gathered(p) ? "1" : "0");
    tmpl_set(&t, "BANDED", attn_pattern_band(p) ? "1" : "0");
    tmpl_set(&t, "COUNT_TILES", count ? "1" : "0");
    tmpl_set(&t, "PIA", "0"); /* position-infused attention: tests/cmake/pia.cmake */
    free(hooks);
    return template_render(d, "attn_engine.cuh", t.kv, t.n, b);
}

#endif
