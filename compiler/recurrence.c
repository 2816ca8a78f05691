/*
 * recurrence.c — the op-table rows of Yoshida, Ettinger & Gimpel's
 * recurrence module (docs/attention/recurrence.md) apart from the
 * interpreter's (interp.c) and the emitter's (emit.c, "The recurrence module") hooks:
 * arity, text form, dedup signature, shape rules and cost.
 *
 *   rec_kv      [gamma, beta,] w_qkv, b_qkv -> [1, 2*H*hd + 1]
 *               layer l_ins's extra key and value from the session's h_prev
 *               (through the layer's input norm when rec_norm), then a
 *               present flag (0 in a session's first window: no extra key);
 *   rec_update  x_1..x_n [T, D], alpha [n], (w_k [in, out], b_k [out])*
 *               -> the state [D + 1]: h_prev = FFN(sum_t sum_l w_l x_l[t])
 *               (divided by T for mean pooling), w = softmax(alpha), and
 *               the present flag 1.
 */
#include "shortc.h"

#include <string.h>

bool ir_recurrent(const Graph *g) { return g && g->spec && g->spec->rec.on; }

int ninputs_rec_kv(const Node *n) {
    int norm = n->rec_norm ? (n->norm == NORM_LAYERNORM ? 2 : 1) : 0;
    return norm + 2;
}

int ninputs_rec_update(const Node *n) { return n->rec_pooled + 1 + 2 * n->rec_layers; }

void print_rec(FILE *out, const Node *n) {
    if (n->op == OP_REC_KV)
        fprintf(out, " heads=%d head_dim=%d norm=%s", n->heads, n->head_dim, n->rec_norm ? norm_kind_name(n->norm) : "none");
    else
        fprintf(out, " pooled=%d layers=%d pool=%s act=%s", n->rec_pooled, n->rec_layers, n->rec_mean ? "mean" : "sum",
                activation_name(n->act));
}

size_t key_rec(char *buf, size_t n, size_t k, const Node *nd) {
    if (k >= n) return k;
    return k + (size_t)snprintf(buf + k, n - k, " rec h=%d hd=%d norm=%d/%d eps=%.17g pooled=%d layers=%d mean=%d act=%d",
                                nd->heads, nd->head_dim, nd->rec_norm, (int)nd->norm, nd->eps, nd->rec_pooled,
                                nd->rec_layers, nd->rec_mean, (int)nd->act);
}

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); return false; } while (0)

/* Input k of n (a value with a shape) or NULL. */
static const Value *input(const Graph *g, const Node *n, int k) {
    if (k >= n->nin || n->in[k] < 0 || n->in[k] >= g->nvalues) return NULL;
    return g->values[n->in[k]];
}

/* Width of a 2-D weight stored in either order: rows x cols in [in, out] terms. */
static bool weight_in_out(const Value *w, int *in, int *out) {
    if (!w || w->cls != VC_WEIGHT || w->rank != 2) return false;
    bool t = w->order == ORD_OUT_IN;
    *in = ir_dim(w, t ? 1 : 0);
    *out = ir_dim(w, t ? 0 : 1);
    return true;
}

static bool vector_of(const Value *v, int len) { return v && v->rank == 1 && ir_dim(v, 0) == len; }

bool shape_rec_kv(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    int A = n->heads * n->head_dim, D = g->spec ? g->spec->d_model : 0, in, out;
    int k = n->nin - 2;
    if (A <= 0 || D <= 0) FAIL("heads=%d head_dim=%d d_model=%d", n->heads, n->head_dim, D);
    for (int i = 0; i < k; i++)
        if (!vector_of(input(g, n, i), D)) FAIL("norm weight %d is not [%d]", i, D);
    if (!weight_in_out(input(g, n, k), &in, &out) || in != D || out != 3 * A)
        FAIL("c_attn weight is not [%d, %d]", D, 3 * A);
    if (!vector_of(input(g, n, k + 1), 3 * A)) FAIL("c_attn bias is not [%d]", 3 * A);
    if (n->rec_state < 0 || n->rec_state >= g->nvalues || g->values[n->rec_state]->role != STATE_RECURRENT)
        FAIL("rec_state %d is not a recurrent state value", n->rec_state);
    *rank = 2;
    dims[0] = SYMDIM_CONST(1);
    dims[1] = SYMDIM_CONST(2 * A + 1);
    return true;
}

bool shape_rec_update(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    int D = g->spec ? g->spec->d_model : 0, np = n->rec_pooled;
    for (int i = 0; i < np; i++) {
        const Value *x = input(g, n, i);
        if (!x || x->rank != 2 || !symdim_eq(x->dims[0], SYMDIM_T) || ir_dim(x, 1) != D) FAIL("pooled state %d is not [T, %d]", i, D);
    }
    if (!vector_of(input(g, n, np), np)) FAIL("alpha is not [%d]", np);
    int width = D;
    for (int j = 0; j < n->rec_layers; j++) {
        int in, out;
        if (!weight_in_out(input(g, n, np + 1 + 2 * j), &in, &out) || in != width) FAIL("FFN layer %d weight does not take %d inputs", j, width);
        if (!vector_of(input(g, n, np + 2 + 2 * j), out)) FAIL("FFN layer %d bias is not [%d]", j, out);
        width = out;
    }
    if (width != D) FAIL("the FFN ends with %d units, not d_model %d", width, D);
    *rank = 1;
    dims[0] = SYMDIM_CONST(D + 1);
    return true;
}

/* Every input read once (the pooled states at T rows), the state or the key row written once. */
static void rec_traffic(const Graph *g, const Node *n, int T, OpCost *c) {
    for (int k = 0; k < n->nin; k++) {
        const Value *v = input(g, n, k);
        if (v) c->bytes_read[v->dtype] += (double)ir_numel(v, T) * dtype_size(v->dtype);
    }
    const Value *o = g->values[n->out];
    c->bytes_written[o->dtype] += (double)ir_numel(o, T) * dtype_size(o->dtype);
    if (n->op == OP_REC_KV) { /* and the state it reads */
        const Value *h = g->values[n->rec_state];
        c->bytes_read[h->dtype] += (double)ir_state_numel(h) * dtype_size(h->dtype);
    }
}

/* The FFN's multiply-adds (2 FLOPs each) and the pooling's adds; the extra key's projection. */
void cost_rec(const Graph *g, const Node *n, int T, OpCost *c) {
    memset(c, 0, sizeof *c);
    int D = g->spec ? g->spec->d_model : 0;
    rec_traffic(g, n, T, c);
    if (n->op == OP_REC_KV) {
        c->flops = 2.0 * D * 2 * n->heads * n->head_dim;
        c->other_ops = 8.0 * D;
        return;
    }
    c->other_ops = (double)n->rec_pooled * T * D;
    int width = D;
    for (int j = 0; j < n->rec_layers; j++) {
        const Value *w = input(g, n, n->rec_pooled + 1 + 2 * j);
        int in = width, out = D;
        if (w) weight_in_out(w, &in, &out);
        c->flops += 2.0 * in * out;
        width = out;
    }
}
