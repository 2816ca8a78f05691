/*
 * pass_layouts.c — storage dtype and dimension order per value
 * (docs/ir.md, "layouts").
 *
 *   tokens input         i32, [tokens]
 *   logits output        f32, [tokens,channels]   (always fp32)
 *   activations          layout activations dtype, [tokens,channels]
 *   KV values            layout kv dtype and order
 *   weights              layout weights dtype; the order was fixed at
 *                        lowering (it decides stored shapes and trans_w)
 */
#include "shortc.h"

static bool storage_dtype(Diag *d, const LayoutSpec *l, const char *what) {
    if (l->dtype == DT_F32 || l->dtype == DT_F16 || l->dtype == DT_BF16) return true;
    diag_error(d, l->loc, "layouts: %s cannot be stored as %s", what, dtype_name(l->dtype));
    return false;
}

bool pass_layouts(Graph *g, Diag *d) {
    const ModelSpec *s = g->spec;
    bool ok = storage_dtype(d, &s->layout[TC_WEIGHTS], "weights") &
              storage_dtype(d, &s->layout[TC_ACTIVATIONS], "activations") & storage_dtype(d, &s->layout[TC_KV], "kv");
    if (s->layout[TC_ACTIVATIONS].order != ORD_TOKENS_CHANNELS) {
        diag_error(d, s->layout[TC_ACTIVATIONS].loc, "layouts: activations must be stored [tokens, channels], not %s",
                   dim_order_name(s->layout[TC_ACTIVATIONS].order));
        ok = false;
    }
    DimOrder ko = s->layout[TC_KV].order;
    if (ko != ORD_HEADS_TOKENS_DIM && ko != ORD_TOKENS_HEADS_DIM) {
        diag_error(d, s->layout[TC_KV].loc, "layouts: kv must be stored [heads, tokens, dim] or [tokens, heads, dim], not %s",
                   dim_order_name(ko));
        ok = false;
    }
    if (!ok) return false;
    for (int i = 0; i < g->nvalues; i++) {
        Value *v = g->values[i];
        v->dtype = ir_expected_dtype(g, v);
        switch (v->cls) {
        case VC_INPUT:
        case VC_OUTPUT:
        case VC_ACTIVATION: v->order = ORD_TOKENS_CHANNELS; break;
        case VC_KV: v->order = v->role == STATE_MEMORY ? ORD_TOKENS_CHANNELS : ko; break; /* a memory: [rows, D] */
        case VC_WEIGHT: break;
        }
    }
    g->stage = "layouts";
    return true;
}
