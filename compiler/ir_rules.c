/*
 * ir_rules.c — the IR's invariants that passes establish and the verifier
 * (ir.c), the emitter and the plan check: the dtype of each value class, which
 * values the activation arena holds and their live ranges, and whether a
 * value got a place in it.
 *
 * They live here, below both the passes and the verifier, so that ir.c never
 * calls into a pass file (pass_layouts.c, pass_buffers.c use these rules to
 * do their work; ir_verify uses them to check it) and plan.c never calls into
 * emit.c.
 */
#include "shortc.h"

/* The dtype a value must have after the layouts pass (docs/ir.md, "layouts"). */
DType ir_expected_dtype(const Graph *g, const Value *v) {
    const ModelSpec *s = g->spec;
    switch (v->cls) {
    case VC_INPUT: return DT_I32;
    case VC_OUTPUT: return DT_F32;
    case VC_WEIGHT: return s ? s->layout[TC_WEIGHTS].dtype : DT_F32;
    case VC_ACTIVATION: return s ? s->layout[TC_ACTIVATIONS].dtype : DT_F32;
    case VC_KV: return s ? s->layout[TC_KV].dtype : DT_F32;
    }
    return DT_F32;
}

/* ------------------------------------------------------------------ */
/* The activation arena (docs/ir.md, "buffers")                         */
/* ------------------------------------------------------------------ */

/* Causal attention and the sparse kinds keep nothing between forwards: their KV is scratch. */
static bool kv_persistent(const Graph *g, const Value *v) {
    if (v->def < 0 || v->def >= g->nnodes) return false;
    return !attn_kind_stateless(g->nodes[v->def]->attn.kind);
}

bool ir_value_in_arena(const Graph *g, const Value *v) {
    if (!ir_value_live(g, v)) return false;
    if (v->id == g->position) return false; /* a scalar the caller passes, not a tensor */
    switch (v->cls) {
    case VC_INPUT:
    case VC_OUTPUT:
    case VC_ACTIVATION: return true;
    case VC_KV: return !kv_persistent(g, v);
    case VC_WEIGHT: return false;
    }
    return false;
}

void ir_live_range(const Graph *g, const Value *v, int *start, int *end) {
    int s = v->cls == VC_INPUT ? -1 : v->def;
    int e = s;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] == v->id && i > e) e = i;
    }
    if (v->cls == VC_OUTPUT) e = g->nnodes;
    *start = s;
    *end = e;
}

bool ir_value_placed(const Value *v) {
    return v->cls != VC_WEIGHT && v->buffer >= 0;
}
