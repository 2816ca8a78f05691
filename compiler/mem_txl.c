/*
 * mem_txl.c — Transformer-XL relative attention (Dai et al. 2019, attn_type 0)
 * with per-layer segment memories (Rae & Razavi 2020): the reference math on
 * plain arrays (the interpreter's OP_REL_ATTENTION and OP_MEM_WRITE call it),
 * the position rules, and the op-table hooks of the two ops
 * (docs/attention/relative.md).
 *
 * Positions are absolute and 0-based: a call of T tokens at position P has
 * queries P..P+T-1; the layer's memory holds the inputs of the last
 * min(P, m) earlier tokens in a ring of m rows (position p at row p mod m),
 * so a call reads rows before it writes them and nothing is ever shifted.
 * The score of query i and key j (distance d = i - j) is
 *   ((q_i + u) . k_j + (q_i + v) . (W_r R_min(d, clamp))) / sqrt(hd)
 * with R_d the sinusoid of d (sin half, then cos half). The relative shift of
 * the original code is the index arithmetic d = i - j; nothing here builds a
 * queries x keys x width tensor.
 */
#include "shortc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int txl_memory_fill(int P, int memory) { return P < memory ? P : memory; }

/* The rule is written once, in templates/attn_kinds.cuh (the kernels' _visible hook calls the same text). */
bool txl_visible(int i, int j, int P, int memory, bool same_length) { return attn_visible_txl(i, j, P, memory, same_length); }

double txl_rel_embedding(int d, int c, int D) {
    int half = D / 2, k = c < half ? c : c - half;
    double ang = (double)d / pow(10000.0, 2.0 * k / (double)D);
    return c < half ? sin(ang) : cos(ang);
}

/* Element (row, col) of a weight of logical shape [in, out] stored [in, out] or (trans) [out, in]. */
static double wat(const float *w, bool trans, int in, int out, int row, int col) {
    return trans ? w[(size_t)col * in + row] : w[(size_t)row * out + col];
}

/* Keys and values of the call's keys (memory rows first, then the new tokens) into k, v [K, H*hd]. */
static void txl_keys(const TxlAttnCall *c, int mlen, float *k, float *v, DType dt) {
    int W = c->H * c->hd;
    for (int j = 0; j < mlen; j++) {
        const float *row = c->mem + (size_t)((c->P - mlen + j) % c->memory) * c->D;
        for (int o = 0; o < 2 * W; o++) {
            double s = 0;
            for (int e = 0; e < c->D; e++) s += (double)row[e] * wat(c->w_qkv, c->w_qkv_trans, c->D, 3 * W, e, W + o);
            (o < W ? k : v)[(size_t)j * W + o % W] = round_to_dtype((float)s, dt);
        }
    }
    for (int t = 0; t < c->T; t++)
        for (int o = 0; o < W; o++) {
            k[(size_t)(mlen + t) * W + o] = c->qkv[(size_t)t * 3 * W + W + o];
            v[(size_t)(mlen + t) * W + o] = c->qkv[(size_t)t * 3 * W + 2 * W + o];
        }
}

int txl_rel_rows(int memory, int segment, int clamp) {
    int nd = memory + (segment > 0 ? segment : 1);
    return clamp > 0 && clamp + 1 < nd ? clamp + 1 : nd;
}

bool txl_rel_keys_ref(const float *w_r, bool trans, int D, int W, int nd, float *r, DType dt) {
    double *R = malloc(sizeof *R * (size_t)D);
    if (!R) return false;
    for (int d = 0; d < nd; d++) {
        for (int e = 0; e < D; e++) R[e] = txl_rel_embedding(d, e, D);
        for (int o = 0; o < W; o++) {
            double s = 0;
            for (int e = 0; e < D; e++) s += R[e] * wat(w_r, trans, D, W, e, o);
            r[(size_t)d * W + o] = round_to_dtype((float)s, dt);
        }
    }
    free(R);
    return true;
}

/* One query row of one head: softmax over its visible keys, written to yr [hd]; p: K scores then hd sums. */
static void txl_row(const TxlAttnCall *c, int h, int t, int mlen, const float *k, const float *v, const float *r,
                    double *p, float *yr, DType dt) {
    int W = c->H * c->hd, hd = c->hd, K = mlen + c->T, i = c->P + t;
    const float *q = c->qkv + (size_t)t * 3 * W + (size_t)h * hd;
    const float *u = c->u + (size_t)h * hd, *vb = c->v + (size_t)h * hd;
    double scale = 1.0 / sqrt((double)hd), mx = -INFINITY;
    for (int j = 0; j < K; j++) {
        int pj = c->P - mlen + j, d = i - pj;
        if (!txl_visible(i, pj, c->P, c->memory, c->same_length)) continue;
        if (c->clamp > 0 && d > c->clamp) d = c->clamp;
        const float *kj = k + (size_t)j * W + (size_t)h * hd, *rd = r + (size_t)d * W + (size_t)h * hd;
        double ac = 0, bd = 0;
        for (int e = 0; e < hd; e++) {
            ac += ((double)q[e] + u[e]) * kj[e];
            bd += ((double)q[e] + vb[e]) * rd[e];
        }
        p[j] = (ac + bd) * scale;
        if (p[j] > mx) mx = p[j];
    }
    double sum = 0, *acc = p + K;
    for (int e = 0; e < hd; e++) acc[e] = 0;
    for (int j = 0; j < K; j++) {
        if (!txl_visible(i, c->P - mlen + j, c->P, c->memory, c->same_length)) continue;
        double w = exp(p[j] - mx);
        sum += w;
        for (int e = 0; e < hd; e++) acc[e] += w * v[(size_t)j * W + (size_t)h * hd + e];
    }
    for (int e = 0; e < hd; e++) yr[e] = round_to_dtype(sum > 0 ? (float)(acc[e] / sum) : 0.0f, dt);
}

bool txl_rel_attention_ref(const TxlAttnCall *c, float *y, DType dt) {
    int W = c->H * c->hd, mlen = c->memory > 0 && c->mem ? txl_memory_fill(c->P, c->memory) : 0, K = mlen + c->T;
    int nd = c->clamp > 0 && c->clamp < K ? c->clamp + 1 : K; /* distances 0..K-1, clamped */
    if (nd > c->rel_rows) return false;
    float *k = malloc(sizeof *k * (size_t)K * W), *v = malloc(sizeof *v * (size_t)K * W);
    double *p = malloc(sizeof *p * ((size_t)K + (size_t)c->hd));
    bool ok = k && v && p;
    if (ok) {
        txl_keys(c, mlen, k, v, dt);
        for (int h = 0; h < c->H; h++)
            for (int t = 0; t < c->T; t++) txl_row(c, h, t, mlen, k, v, c->rel, p, y + (size_t)t * W + (size_t)h * c->hd, dt);
    }
    free(k);
    free(v);
    free(p);
    return ok;
}

/* Adds g into element (row, col) of a gradient laid out as wat reads its weight. */
static void wadd(double *dw, bool trans, int in, int out, int row, int col, double g) {
    dw[trans ? (size_t)col * in + row : (size_t)row * out + col] += g;
}

/* The backward of one query row of one head (txl_row's forward recomputed in double): p holds K scores, dp K. */
static void txl_row_backward(const TxlAttnCall *c, int h, int t, int mlen, const float *k, const float *v, const double *dy,
                             double *p, double *dp, double *dk, double *dv, const TxlAttnGrads *g) {
    int W = c->H * c->hd, hd = c->hd, K = mlen + c->T, i = c->P + t;
    const float *q = c->qkv + (size_t)t * 3 * W + (size_t)h * hd;
    const float *u = c->u + (size_t)h * hd, *vb = c->v + (size_t)h * hd;
    const double *gy = dy + (size_t)t * W + (size_t)h * hd;
    double scale = 1.0 / sqrt((double)hd), mx = -INFINITY, sum = 0, pdp = 0;
    for (int j = 0; j < K; j++) {
        int pj = c->P - mlen + j, d = i - pj;
        p[j] = -INFINITY;
        if (!txl_visible(i, pj, c->P, c->memory, c->same_length)) continue;
        if (c->clamp > 0 && d > c->clamp) d = c->clamp;
        const float *kj = k + (size_t)j * W + (size_t)h * hd, *rd = c->rel + (size_t)d * W + (size_t)h * hd;
        double s = 0;
        for (int e = 0; e < hd; e++) s += ((double)q[e] + u[e]) * kj[e] + ((double)q[e] + vb[e]) * rd[e];
        p[j] = s * scale;
        if (p[j] > mx) mx = p[j];
    }
    for (int j = 0; j < K; j++) sum += p[j] = p[j] == -INFINITY ? 0.0 : exp(p[j] - mx);
    if (sum <= 0) return;
    for (int j = 0; j < K; j++) {
        p[j] /= sum;
        double acc = 0;
        for (int e = 0; e < hd; e++) {
            acc += gy[e] * v[(size_t)j * W + (size_t)h * hd + e];
            dv[(size_t)j * W + (size_t)h * hd + e] += p[j] * gy[e];
        }
        dp[j] = acc;
        pdp += p[j] * acc;
    }
    double *dq = g->dqkv + (size_t)t * 3 * W + (size_t)h * hd;
    for (int j = 0; j < K; j++) {
        if (p[j] == 0) continue;
        int d = i - (c->P - mlen + j);
        if (c->clamp > 0 && d > c->clamp) d = c->clamp;
        const float *kj = k + (size_t)j * W + (size_t)h * hd, *rd = c->rel + (size_t)d * W + (size_t)h * hd;
        double ds = p[j] * (dp[j] - pdp) * scale, *drd = g->drel + (size_t)d * W + (size_t)h * hd;
        for (int e = 0; e < hd; e++) {
            dq[e] += ds * ((double)kj[e] + rd[e]);
            g->du[h * hd + e] += ds * kj[e];
            g->dv[h * hd + e] += ds * rd[e];
            dk[(size_t)j * W + (size_t)h * hd + e] += ds * ((double)q[e] + u[e]);
            drd[e] += ds * ((double)q[e] + vb[e]);
        }
    }
}

bool txl_rel_attention_backward_ref(const TxlAttnCall *c, const double *dy, const TxlAttnGrads *g) {
    int W = c->H * c->hd, mlen = c->memory > 0 && c->mem ? txl_memory_fill(c->P, c->memory) : 0, K = mlen + c->T;
    int nd = c->clamp > 0 && c->clamp < K ? c->clamp + 1 : K;
    if (nd > c->rel_rows) return false;
    float *k = malloc(sizeof *k * (size_t)K * W), *v = malloc(sizeof *v * (size_t)K * W);
    double *p = malloc(sizeof *p * (size_t)K), *dp = malloc(sizeof *dp * (size_t)K);
    double *dk = calloc((size_t)K * W + 1, sizeof *dk), *dv = calloc((size_t)K * W + 1, sizeof *dv);
    bool ok = k && v && p && dp && dk && dv && (mlen == 0 || g->dw_qkv);
    if (ok) {
        txl_keys(c, mlen, k, v, DT_F32);
        for (int h = 0; h < c->H; h++)
            for (int t = 0; t < c->T; t++) txl_row_backward(c, h, t, mlen, k, v, dy, p, dp, dk, dv, g);
        for (int j = 0; j < mlen; j++) { /* memory rows: constants (stop-gradient), their projection is trained */
            const float *row = c->mem + (size_t)((c->P - mlen + j) % c->memory) * c->D;
            for (int o = 0; o < 2 * W; o++) {
                double go = (o < W ? dk : dv)[(size_t)j * W + o % W];
                for (int e = 0; e < c->D; e++) wadd(g->dw_qkv, c->w_qkv_trans, c->D, 3 * W, e, W + o, go * row[e]);
            }
        }
        for (int t = 0; t < c->T; t++) /* the new tokens' keys and values are qkv's k and v columns */
            for (int o = 0; o < W; o++) {
                g->dqkv[(size_t)t * 3 * W + W + o] += dk[(size_t)(mlen + t) * W + o];
                g->dqkv[(size_t)t * 3 * W + 2 * W + o] += dv[(size_t)(mlen + t) * W + o];
            }
    }
    free(k);
    free(v);
    free(p);
    free(dp);
    free(dk);
    free(dv);
    return ok;
}

void txl_rel_keys_backward_ref(bool trans, int D, int W, int nd, const double *dr, double *dw_r) {
    for (int d = 0; d < nd; d++)
        for (int e = 0; e < D; e++) {
            double R = txl_rel_embedding(d, e, D);
            for (int o = 0; o < W; o++) wadd(dw_r, trans, D, W, e, o, R * dr[(size_t)d * W + o]);
        }
}

void txl_mem_write_ref(float *ring, int memory, int D, const float *x, int T, int P, DType dt) {
    for (int t = T > memory ? T - memory : 0; t < T; t++)
        for (int e = 0; e < D; e++)
            ring[(size_t)((P + t) % memory) * D + e] = round_to_dtype(x[(size_t)t * D + e], dt);
}

bool txl_model(const ModelSpec *s) {
    if (!s || s->n_layers < 1 || !s->layers) return false;
    for (int i = 0; i < s->n_layers; i++)
        if (attn_kind_row(s->layers[i].attn.kind)->state != ATTN_STATE_MEMORY) return false;
    return true;
}

/* ------------------------------------------------------------------ */
/* Op-table hooks                                                      */
/* ------------------------------------------------------------------ */

/* qkv, the relative keys, u, v, and with a memory w_qkv and the memory itself. */
int txl_rel_ninputs(const Node *n) { return n->memory > 0 ? 6 : 4; }

void txl_print_attrs(FILE *out, const Node *n) {
    fprintf(out, " memory=%d", n->memory);
    if (n->op == OP_MEM_WRITE) return;
    fprintf(out, " heads=%d head_dim=%d", n->heads, n->head_dim);
    for (int i = 0; i < n->attn.nparams; i++) fprintf(out, " %s=%g", n->attn.params[i].key, n->attn.params[i].value);
}

size_t txl_key_attrs(char *buf, size_t n, size_t k, const Node *nd) {
    int w = snprintf(buf + k, n > k ? n - k : 0, "m%d h%d d%d", nd->memory, nd->heads, nd->head_dim);
    k += w > 0 ? (size_t)w : 0;
    for (int i = 0; i < nd->attn.nparams && k < n; i++) {
        w = snprintf(buf + k, n - k, " %s=%g", nd->attn.params[i].key, nd->attn.params[i].value);
        k += w > 0 ? (size_t)w : 0;
    }
    return k < n ? k : n;
}

#define FAIL(...) return (snprintf(why, whylen, __VA_ARGS__), false)

static const Value *in_val(const Graph *g, const Node *n, int k) { return g->values[n->in[k]]; }

/* A [rows, cols] weight (either storage order). */
static bool is_matrix(const Value *w, int in, int out) {
    return w->rank == 2 && ((ir_dim(w, 0) == in && ir_dim(w, 1) == out) || (ir_dim(w, 0) == out && ir_dim(w, 1) == in));
}

bool txl_shape_rel_attention(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    int W = n->heads * n->head_dim;
    const Value *qkv = in_val(g, n, 0);
    if (qkv->rank != 2 || !symdim_eq(qkv->dims[0], SYMDIM_T) || ir_dim(qkv, 1) != 3 * W) FAIL("qkv %s is not [T, %d]", qkv->name, 3 * W);
    int D = g->spec ? g->spec->d_model : 0;
    const Value *rel = in_val(g, n, 1);
    int rows = txl_rel_rows(n->memory, g->spec ? g->spec->segment : 1, n->attn.prm.clamp);
    if (!ir_value_derived(rel) || rel->capacity != rows || rel->rank != 2 || ir_dim(rel, 1) != W)
        FAIL("relative keys %s are not a derived [%d, %d] table (rel_keys)", rel->name, rows, W);
    for (int k = 2; k < 4; k++) {
        const Value *b = in_val(g, n, k);
        if (b->rank != 2 || ir_dim(b, 0) != n->heads || ir_dim(b, 1) != n->head_dim)
            FAIL("bias %s is not [%d, %d]", b->name, n->heads, n->head_dim);
    }
    if (n->memory > 0) {
        if (!is_matrix(in_val(g, n, 4), D, 3 * W)) FAIL("qkv_net %s is not [%d, %d]", in_val(g, n, 4)->name, D, 3 * W);
        const Value *m = in_val(g, n, 5);
        if (m->role != STATE_MEMORY || m->capacity != n->memory || m->rank != 2 || ir_dim(m, 1) != D)
            FAIL("memory %s is not a [%d, %d] memory state", m->name, n->memory, D);
    }
    *rank = 2;
    dims[0] = SYMDIM_T;
    dims[1] = SYMDIM_CONST(W);
    return true;
}

bool txl_shape_mem_write(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    const Value *x = in_val(g, n, 0), *o = g->values[n->out];
    if (x->rank != 2 || !symdim_eq(x->dims[0], SYMDIM_T)) FAIL("input %s is not [T, channels]", x->name);
    if (o->role != STATE_MEMORY || o->capacity != n->memory || n->memory < 1)
        FAIL("output %s is not a memory state of %d rows", o->name, n->memory);
    *rank = 2;
    dims[0] = DIM_STATE_ROWS; /* the state's rows: at most its capacity m */
    dims[1] = x->dims[1];
    return true;
}

bool txl_shape_rel_keys(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    int W = n->heads * n->head_dim, D = g->spec ? g->spec->d_model : 0;
    const Value *w = in_val(g, n, 0), *o = g->values[n->out];
    if (w->cls != VC_WEIGHT || !is_matrix(w, D, W)) FAIL("r_net %s is not a [%d, %d] weight", w->name, D, W);
    if (!ir_value_derived(o) || o->capacity != txl_rel_rows(n->memory, g->spec ? g->spec->segment : 1, n->attn.prm.clamp))
        FAIL("output %s is not a derived table of the layer's distances", o->name);
    *rank = 2;
    dims[0] = DIM_STATE_ROWS; /* the distances: the table's rows, at its capacity */
    dims[1] = SYMDIM_CONST(W);
    return true;
}
