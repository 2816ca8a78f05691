/*
 * pass_fuse.c — folds bias -> activation -> residual-add chains into the
 * epilogue of the matmul they follow (docs/ir.md, "fuse").
 *
 * Starting at a matmul without an epilogue, the chain grows while the
 * current result has exactly one live use and that use is, in this order:
 *   1. a bias node taking it as its first input        -> epi.bias
 *   2. an activation node                              -> epi.act
 *   3. a gate node (gated FFN) taking it as its up input, whose gate
 *      input is defined before the matmul              -> epi.gate
 *   4. an add node whose other operand is defined before the matmul
 *                                                      -> epi.residual
 * Each step is optional; the order is fixed. The absorbed nodes are marked
 * dead; the matmul takes over the last one's output value, so the value
 * names later nodes use are unchanged. Intermediate values disappear.
 *
 * Before that, a residual add goes into the norm that reads its result
 * (fuse_add_norm): the norm's kernel computes the add, writes its sum (the
 * residual stream later nodes read) and normalizes it in the same pass. The
 * add node stays (the interpreter computes it; it launches nothing) and the
 * norm takes its two operands as extra inputs, so they stay live until the
 * norm runs. Its operands are then used twice, so the matmul chain below stops
 * at the bias and activation: the residual add is done by the norm instead of
 * an epilogue.
 *
 * Last, an epilogue cuBLASLt can apply inside the GEMM (bias, relu or tanh
 * GELU, with or without the bias; no residual; the GEMM's types ones cuBLAS
 * takes as they are and the bias of the output's type) is marked in_gemm:
 * the plan's gemm step carries it and no epilogue kernel is launched.
 */
#include "shortc.h"

#include <stdlib.h>

/* True when no live node strictly between nodes `from` and `to` reads value v. */
static bool unread_between(const Graph *g, int v, int from, int to) {
    for (int i = from + 1; i < to; i++) {
        const Node *n = g->nodes[i];
        for (int k = 0; !n->dead && k < n->nin; k++)
            if (n->in[k] == v) return false;
    }
    return true;
}

/*
 * Fuses each add into the norm that is the first node to read its sum: the
 * norm gets the add's operands as inputs (uses counts them) and the add is
 * marked by_norm.
 */
static void fuse_add_norm(Graph *g, int *uses) {
    for (int i = 0; i < g->nnodes; i++) {
        Node *nm = g->nodes[i];
        if (nm->dead || nm->op != OP_NORM || nm->norm_add || nm->nin != op_expected_inputs(nm)) continue;
        const Value *x = g->values[nm->in[0]];
        Node *add = x->def >= 0 && x->def < i ? g->nodes[x->def] : NULL;
        if (!add || add->dead || add->op != OP_ADD || add->by_norm || add->nin != 2 || add->out != x->id) continue;
        if (!unread_between(g, x->id, add->id, i)) continue;
        ir_add_input(nm, add->in[0]);
        ir_add_input(nm, add->in[1]);
        uses[add->in[0]]++;
        uses[add->in[1]]++;
        nm->norm_add = true;
        nm->sum_unused = uses[x->id] == 1; /* post-norm: only this norm reads the sum */
        add->by_norm = true;
    }
}

/* Whether value v exists before matmul m runs (a weight, an input, or a value an earlier node defines). */
static bool ready_before(const Graph *g, int v, const Node *m) {
    const Value *r = g->values[v];
    return r->cls == VC_WEIGHT || r->cls == VC_INPUT || (r->def >= 0 && r->def < m->id);
}

/* Whether cuBLASLt can apply matmul m's epilogue inside its GEMM (see the file comment). */
static bool epilogue_fits_gemm(const Graph *g, const Node *m) {
    const Epilogue *e = &m->epi;
    if (e->residual || e->gate != ACT_NONE || (!e->bias && e->act == ACT_NONE) || (e->act != ACT_NONE && e->act != ACT_RELU && e->act != ACT_GELU_TANH))
        return false;
    DType x = g->values[m->in[0]]->dtype, w = g->values[m->in[1]]->dtype, y = g->values[m->out]->dtype;
    if (x != w || (y != x && y != DT_F32)) return false; /* a staged (converted) GEMM */
    return !e->bias || g->values[m->in[2]]->dtype == y;
}

bool pass_fuse(Graph *g, Diag *d) {
    int nv = g->nvalues;
    int *uses = calloc((size_t)nv + 1, sizeof *uses);
    int *user = malloc(((size_t)nv + 1) * sizeof *user);
    if (!uses || !user) {
        free(uses);
        free(user);
        diag_plain_error(d, "fuse: out of memory");
        return false;
    }
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++) {
            uses[n->in[k]]++;
            user[n->in[k]] = i;
        }
    }
    /* the logits are used by the program's caller */
    if (g->logits >= 0) uses[g->logits]++;
    fuse_add_norm(g, uses);
    for (int i = 0; i < g->nnodes; i++) {
        Node *m = g->nodes[i];
        if (m->dead || m->op != OP_MATMUL || m->nin != 2 || m->epi.bias || m->epi.act != ACT_NONE ||
            m->epi.gate != ACT_NONE || m->epi.residual)
            continue;
        int cur = m->out;
        Node *u = uses[cur] == 1 ? g->nodes[user[cur]] : NULL;
        if (u && !u->dead && u->op == OP_BIAS && u->in[0] == cur && u->in[1] != cur) {
            ir_add_input(m, u->in[1]);
            m->epi.bias = true;
            u->dead = true;
            cur = u->out;
            u = uses[cur] == 1 ? g->nodes[user[cur]] : NULL;
        }
        if (u && !u->dead && u->op == OP_ACT) {
            m->epi.act = u->act;
            u->dead = true;
            cur = u->out;
            u = uses[cur] == 1 ? g->nodes[user[cur]] : NULL;
        }
        if (u && !u->dead && u->op == OP_GATE && u->in[0] == cur && u->in[1] != cur && ready_before(g, u->in[1], m)) {
            ir_add_input(m, u->in[1]);
            m->epi.gate = u->act;
            u->dead = true;
            cur = u->out;
            u = uses[cur] == 1 ? g->nodes[user[cur]] : NULL;
        }
        if (u && !u->dead && u->op == OP_ADD && !u->by_norm && (u->in[0] == cur) != (u->in[1] == cur)) {
            int other = u->in[0] == cur ? u->in[1] : u->in[0];
            if (ready_before(g, other, m)) {
                ir_add_input(m, other);
                m->epi.residual = true;
                u->dead = true;
                cur = u->out;
            }
        }
        if (cur != m->out) {
            m->out = cur;
            g->values[cur]->def = m->id;
        }
        m->epi.in_gemm = epilogue_fits_gemm(g, m);
    }
    free(uses);
    free(user);
    g->stage = "fuse";
    return true;
}
