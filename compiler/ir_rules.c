/*
 * ir_rules.c — the IR's invariants that passes establish and the verifier
 * (ir.c), the emitter and the plan check: the dtype of each value class (a
 * GEMM weight of fp32 activations under a half layout held in fp32), which
 * values the activation arena holds and their live ranges, and whether a
 * value got a place in it.
 *
 * They live here, below both the passes and the verifier, so that ir.c never
 * calls into a pass file (pass_layouts.c, pass_buffers.c use these rules to
 * do their work; ir_verify uses them to check it) and plan.c never calls into
 * emit.c.
 */
#include "shortc.h"

DType ir_weight_layout_dtype(const Graph *g) { return g->spec ? g->spec->layout[TC_WEIGHTS].dtype : DT_F32; }

/* Whether weight v is the weight operand of a live GEMM under a half weight layout and fp32 activations. */
static bool gemm_weight_of_f32(const Graph *g, const Value *v) {
    if (ir_weight_layout_dtype(g) == DT_F32 || g->spec->layout[TC_ACTIVATIONS].dtype != DT_F32) return false;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (!n->dead && op_is_gemm(n->op) && n->nin >= 2 && n->in[1] == v->id) return true;
    }
    return false;
}

/* The dtype a value must have after the layouts pass (docs/ir.md, "layouts"). */
DType ir_expected_dtype(const Graph *g, const Value *v) {
    const ModelSpec *s = g->spec;
    switch (v->cls) {
    case VC_INPUT: return DT_I32;
    case VC_OUTPUT: return DT_F32;
    case VC_WEIGHT: /* cuBLAS has no half x fp32 GEMM: such a weight is held in fp32, converted once at load */
        return gemm_weight_of_f32(g, v) ? DT_F32 : ir_weight_layout_dtype(g);
    case VC_ACTIVATION: return s ? s->layout[TC_ACTIVATIONS].dtype : DT_F32;
    case VC_KV: return s ? s->layout[TC_KV].dtype : DT_F32;
    }
    return DT_F32;
}

/* ------------------------------------------------------------------ */
/* The activation arena (docs/ir.md, "buffers")                         */
/* ------------------------------------------------------------------ */

/* A value with a state role lives in the session's state (at its capacity), not in the arena. */
static bool kv_persistent(const Graph *g, const Value *v) {
    (void)g;
    return v->role != STATE_NONE;
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
