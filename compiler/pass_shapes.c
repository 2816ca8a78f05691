/*
 * pass_shapes.c — shape inference and shape checks (docs/ir.md, "shapes").
 *
 * Every value's dims are its stored shape, row-major, outermost first, with
 * DIM_T for the token dimension. Weights and the tokens input get their
 * shapes at lowering; this pass computes the shape of every node output from
 * its inputs (ir_infer_shape, also used by the verifier) and reports
 * inconsistent inputs at the node's .arch statement.
 */
#include "shortc.h"

#include <string.h>

static bool shape_is(const Value *v, int rank, const int *dims) {
    if (v->rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (v->dims[i] != dims[i]) return false;
    return true;
}

static void shape_str(const Value *v, char *buf, size_t n) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int i = 0; i < v->rank && k < n; i++) {
        if (v->dims[i] == DIM_T) k += (size_t)snprintf(buf + k, n - k, "%sT", i ? "," : "");
        else k += (size_t)snprintf(buf + k, n - k, "%s%d", i ? "," : "", v->dims[i]);
    }
    if (k < n) snprintf(buf + k, n - k, "]");
}

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); return false; } while (0)

/* Checks that input k has a shape; names it for messages. */
static const Value *input(const Graph *g, const Node *n, int k) {
    if (k >= n->nin || n->in[k] < 0 || n->in[k] >= g->nvalues) return NULL;
    const Value *v = g->values[n->in[k]];
    return v->rank > 0 ? v : NULL;
}

/* [T, c] activation: returns c, or 0 if v is not of that form. */
static int act_width(const Value *v) {
    return v && v->rank == 2 && v->dims[0] == DIM_T && v->dims[1] > 0 ? v->dims[1] : 0;
}

/* The KV value shape for H heads of width hd (order from the kv layout). */
static void kv_shape(const Graph *g, int H, int hd, int *rank, int dims[MAX_RANK]) {
    DimOrder o = g->spec ? g->spec->layout[TC_KV].order : ORD_HEADS_TOKENS_DIM;
    *rank = 4;
    dims[0] = 2;
    if (o == ORD_TOKENS_HEADS_DIM) { dims[1] = DIM_T; dims[2] = H; }
    else { dims[1] = H; dims[2] = DIM_T; }
    dims[3] = hd;
}

bool ir_infer_shape(const Graph *g, const Node *n, int *rank, int dims[MAX_RANK], char *why, size_t whylen) {
    const Value *a = input(g, n, 0), *b = input(g, n, 1);
    char s1[64] = "", s2[64] = "";
    for (int k = 0; k < n->nin; k++)
        if (!input(g, n, k)) FAIL("input %d has no shape", k);
    if (a) shape_str(a, s1, sizeof s1);
    if (b) shape_str(b, s2, sizeof s2);
    switch (n->op) {
    case OP_EMBED: {
        if (!a || !b) FAIL("embed needs tokens and a table");
        if (!shape_is(a, 1, (int[]){DIM_T})) FAIL("tokens %s is %s, expected [T]", a->name, s1);
        if (b->rank != 2) FAIL("table %s is %s, expected [vocab, d_model]", b->name, s2);
        if (n->nin == 3) {
            const Value *p = input(g, n, 2);
            if (p->rank != 2 || p->dims[1] != b->dims[1])
                FAIL("position table %s does not have %d columns", p->name, b->dims[1]);
        }
        *rank = 2;
        dims[0] = DIM_T;
        dims[1] = b->dims[1];
        return true;
    }
    case OP_NORM: {
        int D = act_width(a);
        if (!D) FAIL("input %s is %s, expected [T, channels]", a ? a->name : "?", s1);
        for (int k = 1; k < n->nin; k++) {
            const Value *w = input(g, n, k);
            if (!shape_is(w, 1, (int[]){D})) FAIL("%s has a shape other than [%d]", w->name, D);
        }
        *rank = 2;
        dims[0] = DIM_T;
        dims[1] = D;
        return true;
    }
    case OP_MATMUL:
    case OP_LOGITS: {
        int K = act_width(a);
        if (!K) FAIL("input %s is %s, expected [T, channels]", a ? a->name : "?", s1);
        if (!b || b->rank != 2) FAIL("weight %s is %s, expected a matrix", b ? b->name : "?", s2);
        int wk = n->trans_w ? b->dims[1] : b->dims[0];
        int N = n->trans_w ? b->dims[0] : b->dims[1];
        if (wk != K)
            FAIL("input %s is %s but weight %s is %s%s (inner dimensions %d and %d differ)", a->name, s1, b->name, s2,
                 n->trans_w ? ", used transposed" : "", K, wk);
        int k = 2;
        if (n->op == OP_MATMUL && n->epi.bias) {
            const Value *bias = input(g, n, k++);
            if (!bias || !shape_is(bias, 1, (int[]){N})) FAIL("bias %s is not [%d]", bias ? bias->name : "?", N);
        }
        if (n->op == OP_MATMUL && n->epi.residual) {
            const Value *r = input(g, n, k++);
            if (!r || !shape_is(r, 2, (int[]){DIM_T, N})) FAIL("residual %s is not [T,%d]", r ? r->name : "?", N);
        }
        *rank = 2;
        dims[0] = DIM_T;
        dims[1] = N;
        return true;
    }
    case OP_BIAS: {
        int N = act_width(a);
        if (!N) FAIL("input %s is %s, expected [T, channels]", a ? a->name : "?", s1);
        if (!shape_is(b, 1, (int[]){N})) FAIL("bias %s is %s, expected [%d]", b->name, s2, N);
        *rank = 2;
        dims[0] = DIM_T;
        dims[1] = N;
        return true;
    }
    case OP_ACT:
        if (!act_width(a)) FAIL("input %s is %s, expected [T, channels]", a ? a->name : "?", s1);
        *rank = a->rank;
        memcpy(dims, a->dims, sizeof a->dims);
        return true;
    case OP_ADD:
        if (!act_width(a)) FAIL("input %s is %s, expected [T, channels]", a ? a->name : "?", s1);
        if (!shape_is(b, a->rank, a->dims)) FAIL("operands %s %s and %s %s differ in shape", a->name, s1, b->name, s2);
        *rank = a->rank;
        memcpy(dims, a->dims, sizeof a->dims);
        return true;
    case OP_KV_WRITE:
    case OP_ATTENTION: {
        int W = act_width(a), H = n->heads, hd = n->head_dim;
        if (H <= 0 || hd <= 0) FAIL("heads=%d head_dim=%d", H, hd);
        if (W != 3 * H * hd) FAIL("qkv %s is %s, expected [T,%d] (3 x %d heads x %d)", a ? a->name : "?", s1, 3 * H * hd, H, hd);
        int kr, kd[MAX_RANK];
        kv_shape(g, H, hd, &kr, kd);
        if (n->op == OP_KV_WRITE) {
            *rank = kr;
            memcpy(dims, kd, sizeof kd);
            return true;
        }
        if (!shape_is(b, kr, kd)) FAIL("KV %s is %s, which does not match %d heads x %d", b->name, s2, H, hd);
        *rank = 2;
        dims[0] = DIM_T;
        dims[1] = H * hd;
        return true;
    }
    case OP_COUNT:
        break;
    }
    FAIL("unknown op");
}

bool pass_shapes(Graph *g, Diag *d) {
    int errors = 0;
    for (int i = 0; i < g->nnodes; i++) {
        Node *n = g->nodes[i];
        if (n->dead || n->out < 0) continue;
        Value *o = g->values[n->out];
        int rank = 0, dims[MAX_RANK] = {0};
        char why[256];
        if (!ir_infer_shape(g, n, &rank, dims, why, sizeof why)) {
            char where[32] = "";
            if (n->layer >= 0) snprintf(where, sizeof where, ", layer %d", n->layer);
            diag_error(d, n->src, "shapes: %s %s (node %d%s): %s", op_name(n->op), o->name, n->id, where, why);
            errors++;
            continue;
        }
        o->rank = rank;
        memcpy(o->dims, dims, sizeof o->dims);
    }
    g->stage = "shapes";
    return errors == 0;
}
