/*
 * ops.c — the op table: one row per IR op with its arity, attributes (text
 * form and dedup signature), structural checks, shape rule, and the
 * interpreter and emitter functions that implement it (docs/ir.md, "Ops").
 *
 * The verifier, the passes, the interpreter and the emitter dispatch through
 * op_table instead of switching on the op, so adding an op is one row here,
 * its shape rule and attribute printers below, an interp_* function in
 * interp.c (with its interp_backward_* beside it when the op can be trained),
 * an emit_* function in emit.c and a cost_* function in cost.c.
 * The shape rules compute every value's dims (stored shape, row-major,
 * outermost first, SymDims: T for the token dimension, fill+T for a state's
 * rows) from the node's inputs.
 */
#include "shortc.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Arity                                                               */
/* ------------------------------------------------------------------ */

static int ninputs_embed(const Node *n) { return n->pos == POS_LEARNED ? 3 : 2; }
static int norm_params(const Node *n) { return n->norm == NORM_LAYERNORM ? 2 : 1; }  /* gamma (and beta) */
static int ninputs_norm(const Node *n) { return 1 + norm_params(n) + (n->norm_add ? 2 : 0); }
static int ninputs_pos_add(const Node *n) { return n->pos == POS_LEARNED ? 2 : 1; }
static int ninputs_logprob(const Node *n) { return 2 + n->ntails; }
static int ninputs_attention(const Node *n) { return n->rec_key || n->infused ? 3 : 2; } /* + h_prev's k|v or the PIA table */
static int ninputs_matmul(const Node *n) {
    return 2 + (n->epi.bias ? 1 : 0) + (n->epi.gate != ACT_NONE ? 1 : 0) + (n->epi.residual ? 1 : 0);
}
static int ninputs_logits(const Node *n) { return 2 + (n->out_bias ? 1 : 0); } /* x, w [, output bias] */

/* ------------------------------------------------------------------ */
/* Attributes: text form and dedup signature                            */
/* ------------------------------------------------------------------ */

static bool has_epilogue(const Node *n) {
    return n->epi.bias || n->epi.act != ACT_NONE || n->epi.gate != ACT_NONE || n->epi.residual;
}

/* The positions of embed / pos_add: the kind, and `.fairseq` after a fairseq-style sinusoid. */
static void print_pos(FILE *out, const Node *n) {
    fprintf(out, ".%s%s", pos_kind_name(n->pos), n->pia_style == PIA_FAIRSEQ ? ".fairseq" : "");
}
static void print_embed(FILE *out, const Node *n) { print_pos(out, n); }
static void print_norm(FILE *out, const Node *n) {
    fprintf(out, ".%s eps=%g%s%s", norm_kind_name(n->norm), n->eps, n->norm_add ? " +add" : "",
            n->sum_unused ? " sum_unused" : "");
}
static void print_add(FILE *out, const Node *n) {
    if (n->by_norm) fputs(" in_norm", out);
}
static void print_act(FILE *out, const Node *n) { fprintf(out, ".%s", activation_name(n->act)); }

static void print_gemm(FILE *out, const Node *n) {
    if (n->trans_w) fputs(" trans_w", out);
    if (!has_epilogue(n)) return;
    fputs(" epilogue=", out);
    const char *sep = "";
    if (n->epi.bias) { fputs("bias", out); sep = "+"; }
    if (n->epi.act != ACT_NONE) { fprintf(out, "%s%s", sep, activation_name(n->epi.act)); sep = "+"; }
    if (n->epi.gate != ACT_NONE) { fprintf(out, "%sgate_%s", sep, activation_name(n->epi.gate)); sep = "+"; }
    if (n->epi.residual) fprintf(out, "%sresidual", sep);
    if (n->epi.in_gemm) fputs(" in_gemm", out);
}

static void print_attn(FILE *out, const Node *n) {
    fprintf(out, ".%s heads=%d head_dim=%d", attn_kind_name(n->attn.kind), n->heads, n->head_dim);
    for (int i = 0; i < n->attn.nparams; i++) fprintf(out, " %s=%g", n->attn.params[i].key, n->attn.params[i].value);
    if (n->op == OP_ATTENTION) {
        char k[64];
        fprintf(out, " keys=%s", symdim_format(n->keys, k, sizeof k));
        if (n->rec_key) fprintf(out, " rec_key");
        if (n->infused) fputs(" infused", out);
        if (n->alibi) fputs(" alibi", out);
    }
    if (node_kv_heads(n) != n->heads) fprintf(out, " kv_heads=%d", node_kv_heads(n));
    if (n->rope)
        fprintf(out, " rope=%g/%d%s/%s/%g", n->rope->theta, n->rope->dims, n->rope->interleaved ? "i" : "",
                rope_scaling_name(n->rope->scaling), n->rope->factor);
}

static void print_pia_pos(FILE *out, const Node *n) {
    fprintf(out, ".%s heads=%d head_dim=%d", pia_style_name(n->pia_style), n->heads, n->head_dim);
}
static size_t key_pia_pos(char *buf, size_t n, size_t k, const Node *nd) {
    return k + (size_t)snprintf(buf + k, n - k, " style=%d heads=%d hd=%d", (int)nd->pia_style, nd->heads, nd->head_dim);
}
static void print_band(FILE *out, const Node *n) { fprintf(out, " lo=%d hi=%d", n->band_lo, n->band_hi); }
static void print_pos_add(FILE *out, const Node *n) {
    print_pos(out, n);
    fprintf(out, " scale=%g", n->scale);
}
static void print_logprob(FILE *out, const Node *n) {
    fprintf(out, " tails=%d%s", n->ntails, n->reversed ? " reversed" : "");
}

static size_t key_band(char *buf, size_t n, size_t k, const Node *nd) {
    return k + (size_t)snprintf(buf + k, n - k, " lo=%d hi=%d", nd->band_lo, nd->band_hi);
}
static size_t key_pos_add(char *buf, size_t n, size_t k, const Node *nd) {
    return k + (size_t)snprintf(buf + k, n - k, " pos=%d.%d scale=%.17g", (int)nd->pos, (int)nd->pia_style, nd->scale);
}
static size_t key_logprob(char *buf, size_t n, size_t k, const Node *nd) {
    return k + (size_t)snprintf(buf + k, n - k, " tails=%d rev=%d", nd->ntails, (int)nd->reversed);
}

static size_t key_embed(char *buf, size_t n, size_t k, const Node *nd) {
    return k + (size_t)snprintf(buf + k, n - k, " pos=%d.%d", (int)nd->pos, (int)nd->pia_style);
}
static size_t key_norm(char *buf, size_t n, size_t k, const Node *nd) {
    return k + (size_t)snprintf(buf + k, n - k, " norm=%d eps=%.17g add=%d store=%d", (int)nd->norm, nd->eps,
                                (int)nd->norm_add, (int)!nd->sum_unused);
}
static size_t key_act(char *buf, size_t n, size_t k, const Node *nd) {
    return k + (size_t)snprintf(buf + k, n - k, " act=%d", (int)nd->act);
}
static size_t key_gemm(char *buf, size_t n, size_t k, const Node *nd) {
    return k + (size_t)snprintf(buf + k, n - k, " trans_w=%d bias=%d act=%d gate=%d res=%d", (int)nd->trans_w,
                                (int)nd->epi.bias, (int)nd->epi.act, (int)nd->epi.gate, (int)nd->epi.residual);
}
static size_t key_attn(char *buf, size_t n, size_t k, const Node *nd) {
    k += (size_t)snprintf(buf + k, n - k, " kind=%d heads=%d hd=%d", (int)nd->attn.kind, nd->heads, nd->head_dim);
    for (int i = 0; i < nd->attn.nparams && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, " %s=%.17g", nd->attn.params[i].key, nd->attn.params[i].value);
    if (nd->rec_key && k < n) k += (size_t)snprintf(buf + k, n - k, " rec_key");
    if (nd->alibi && k < n) k += (size_t)snprintf(buf + k, n - k, " alibi");
    if (node_kv_heads(nd) != nd->heads && k < n) k += (size_t)snprintf(buf + k, n - k, " kvh=%d", node_kv_heads(nd));
    if (nd->rope && k < n) {
        const RopeSpec *r = nd->rope;
        k += (size_t)snprintf(buf + k, n - k, " rope=%.17g/%d/%d/%d/%.17g/%d/%.17g/%.17g/%.17g/%.17g/%.17g", r->theta,
                              r->dims, (int)r->interleaved, (int)r->scaling, r->factor, r->original_max, r->low_freq,
                              r->high_freq, r->beta_fast, r->beta_slow, r->mscale);
    }
    return k;
}

/* A matmul needs a kernel only for an epilogue cuBLASLt does not apply; the logits projection never does. */
static bool needs_kernel_matmul(const Node *n) { return has_epilogue(n) && !n->epi.in_gemm; }
static bool needs_kernel_logits(const Node *n) { return n->out_bias; } /* the output bias: an epilogue launch */
/* An add computed by the norm after it has no kernel of its own. */
static bool needs_kernel_add(const Node *n) { return !n->by_norm; }

/* ------------------------------------------------------------------ */
/* Structural checks                                                    */
/* ------------------------------------------------------------------ */

static bool valid_value(const Graph *g, int id) { return id >= 0 && id < g->nvalues && g->values[id]; }

#define WHY(...) do { snprintf(why, whylen, __VA_ARGS__); return true; } while (0)

static bool verify_heads(const Node *n, char *why, size_t whylen) {
    if (n->heads <= 0 || n->head_dim <= 0) WHY("heads=%d head_dim=%d", n->heads, n->head_dim);
    return false;
}

static bool verify_kv_write(const Graph *g, const Node *n, char *why, size_t whylen) {
    (void)g;
    return verify_heads(n, why, whylen);
}

static bool verify_attention(const Graph *g, const Node *n, char *why, size_t whylen) {
    if (n->nin == 2 && valid_value(g, n->in[1]) && g->values[n->in[1]]->cls != VC_KV)
        WHY("second input %s is not a KV value", g->values[n->in[1]]->name);
    OpKind third = n->infused ? OP_PIA_POS : OP_REC_KV; /* the PIA table or h_prev's key and value */
    if (n->nin == 3 && valid_value(g, n->in[2]) && (g->values[n->in[2]]->def < 0 ||
                                                     g->nodes[g->values[n->in[2]]->def]->op != third))
        WHY("third input %s is not %s", g->values[n->in[2]]->name,
            n->infused ? "a position-infused table (pia_pos)" : "the recurrence's key and value (rec_kv)");
    return verify_heads(n, why, whylen);
}

static bool verify_pia_pos(const Graph *g, const Node *n, char *why, size_t whylen) {
    if (n->nin == 1 && valid_value(g, n->in[0]) && g->values[n->in[0]]->cls != VC_WEIGHT)
        WHY("input %s is not a weight", g->values[n->in[0]]->name);
    if (n->pia_style == PIA_NONE) WHY("no position style");
    return verify_heads(n, why, whylen);
}

static bool verify_gemm(const Graph *g, const Node *n, char *why, size_t whylen) {
    if (n->nin >= 2 && valid_value(g, n->in[1]) && g->values[n->in[1]]->cls != VC_WEIGHT)
        WHY("weight input %s is not a weight", g->values[n->in[1]]->name);
    return false;
}

/* ------------------------------------------------------------------ */
/* Shape rules                                                          */
/* ------------------------------------------------------------------ */

static bool shape_is(const Value *v, int rank, const SymDim *dims) {
    if (v->rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (!symdim_eq(v->dims[i], dims[i])) return false;
    return true;
}

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); return false; } while (0)

/* Input k if it has a shape, else NULL. */
static const Value *input(const Graph *g, const Node *n, int k) {
    if (k >= n->nin || n->in[k] < 0 || n->in[k] >= g->nvalues) return NULL;
    const Value *v = g->values[n->in[k]];
    return v->rank > 0 ? v : NULL;
}

/* The first two inputs of a node (NULL when absent or shapeless) and room for their shapes as text. */
typedef struct ShapeIn {
    const Value *a, *b;   /* inputs 0 and 1 */
    char s1[64], s2[64];  /* their shapes, written only for a message: S1, S2 ("" when absent) */
} ShapeIn;
/* The shapes of a ShapeIn `in`'s inputs as text, for FAIL's arguments (formatted only when it fails). */
#define S1 ir_shape_text(in.a, in.s1, sizeof in.s1)
#define S2 ir_shape_text(in.b, in.s2, sizeof in.s2)

static ShapeIn shape_in(const Graph *g, const Node *n) {
    return (ShapeIn){.a = input(g, n, 0), .b = input(g, n, 1)};
}

/* [T, c] activation: returns c, or 0 if v is not of that form. */
static int act_width(const Value *v) {
    return v && v->rank == 2 && symdim_eq(v->dims[0], SYMDIM_T) ? ir_dim(v, 1) : 0;
}

/* The output is [T, width]. */
static bool tokens_by(int width, int *rank, SymDim dims[MAX_RANK]) {
    *rank = 2;
    dims[0] = SYMDIM_T;
    dims[1] = SYMDIM_CONST(width);
    return true;
}

/* The KV value shape for H heads of width hd (order from the kv layout); its rows are the state's. */
static void kv_shape(const Graph *g, int H, int hd, int *rank, SymDim dims[MAX_RANK]) {
    DimOrder o = g->spec ? g->spec->layout[TC_KV].order : ORD_HEADS_TOKENS_DIM;
    *rank = 4;
    dims[0] = SYMDIM_CONST(2);
    if (o == ORD_TOKENS_HEADS_DIM) { dims[1] = DIM_STATE_ROWS; dims[2] = SYMDIM_CONST(H); }
    else { dims[1] = SYMDIM_CONST(H); dims[2] = DIM_STATE_ROWS; }
    dims[3] = SYMDIM_CONST(hd);
}

static bool shape_embed(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    const Value *a = in.a, *b = in.b;
    if (!a || !b) FAIL("embed needs tokens and a table");
    if (!shape_is(a, 1, (SymDim[]){SYMDIM_T})) FAIL("tokens %s is %s, expected [T]", a->name, S1);
    if (b->rank != 2) FAIL("table %s is %s, expected [vocab, d_model]", b->name, S2);
    if (n->nin == 3) {
        const Value *p = input(g, n, 2);
        if (p->rank != 2 || ir_dim(p, 1) != ir_dim(b, 1))
            FAIL("position table %s does not have %d columns", p->name, ir_dim(b, 1));
    }
    return tokens_by(ir_dim(b, 1), rank, dims);
}

static bool shape_norm(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    const Value *a = in.a;
    int D = act_width(a);
    if (!D) FAIL("input %s is %s, expected [T, channels]", a ? a->name : "?", S1);
    int params = norm_params(n);
    for (int k = 1; k < n->nin; k++) {
        const Value *w = input(g, n, k);
        if (k <= params && !shape_is(w, 1, (SymDim[]){SYMDIM_CONST(D)})) FAIL("%s has a shape other than [%d]", w->name, D);
        if (k > params && !shape_is(w, 2, (SymDim[]){SYMDIM_T, SYMDIM_CONST(D)}))
            FAIL("add operand %s has a shape other than [T,%d]", w->name, D);
    }
    return tokens_by(D, rank, dims);
}

static bool shape_gemm(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    const Value *a = in.a, *b = in.b;
    int K = act_width(a);
    if (!K) FAIL("input %s is %s, expected [T, channels]", a ? a->name : "?", S1);
    if (!b || b->rank != 2) FAIL("weight %s is %s, expected a matrix", b ? b->name : "?", S2);
    int wk = ir_dim(b, n->trans_w ? 1 : 0);
    int N = ir_dim(b, n->trans_w ? 0 : 1);
    if (wk != K)
        FAIL("input %s is %s but weight %s is %s%s (inner dimensions %d and %d differ)", a->name, S1, b->name, S2,
             n->trans_w ? ", used transposed" : "", K, wk);
    int k = 2;
    if (n->op == OP_MATMUL && n->epi.bias) {
        const Value *bias = input(g, n, k++);
        if (!bias || !shape_is(bias, 1, (SymDim[]){SYMDIM_CONST(N)})) FAIL("bias %s is not [%d]", bias ? bias->name : "?", N);
    }
    if (n->op == OP_MATMUL && n->epi.residual) {
        const Value *r = input(g, n, k++);
        if (!r || !shape_is(r, 2, (SymDim[]){SYMDIM_T, SYMDIM_CONST(N)})) FAIL("residual %s is not [T,%d]", r ? r->name : "?", N);
    }
    return tokens_by(N, rank, dims);
}

static bool shape_bias(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    const Value *a = in.a, *b = in.b;
    int N = act_width(a);
    if (!N) FAIL("input %s is %s, expected [T, channels]", a ? a->name : "?", S1);
    if (!shape_is(b, 1, (SymDim[]){SYMDIM_CONST(N)})) FAIL("bias %s is %s, expected [%d]", b->name, S2, N);
    return tokens_by(N, rank, dims);
}

static bool shape_act(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    const Value *a = in.a;
    if (!act_width(a)) FAIL("input %s is %s, expected [T, channels]", a ? a->name : "?", S1);
    *rank = a->rank;
    memcpy(dims, a->dims, sizeof a->dims);
    return true;
}

static bool shape_add(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    const Value *a = in.a, *b = in.b;
    if (!act_width(a)) FAIL("input %s is %s, expected [T, channels]", a ? a->name : "?", S1);
    if (!shape_is(b, a->rank, a->dims)) FAIL("operands %s %s and %s %s differ in shape", a->name, S1, b->name, S2);
    *rank = a->rank;
    memcpy(dims, a->dims, sizeof a->dims);
    return true;
}

/* kv_write and attention: a qkv input of (H + 2G) x head_dim channels (q, k, v); the KV shape (G heads) in kd. */
static bool attn_qkv(const Graph *g, const Node *n, int *kr, SymDim kd[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    const Value *a = in.a;
    int W = act_width(a), H = n->heads, G = node_kv_heads(n), hd = n->head_dim;
    if (H <= 0 || hd <= 0 || G <= 0 || H % G) FAIL("heads=%d kv_heads=%d head_dim=%d", H, G, hd);
    if (W != (H + 2 * G) * hd)
        FAIL("qkv %s is %s, expected [T,%d] ((%d + 2 x %d) heads x %d)", a ? a->name : "?", S1, (H + 2 * G) * hd, H, G, hd);
    kv_shape(g, G, hd, kr, kd);
    return true;
}

static bool shape_kv_write(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    return attn_qkv(g, n, rank, dims, why, whylen);
}

static bool shape_attention(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    int kr;
    SymDim kd[MAX_RANK];
    if (!attn_qkv(g, n, &kr, kd, why, whylen)) return false;
    ShapeIn in = shape_in(g, n);
    const Value *b = in.b;
    if (!shape_is(b, kr, kd)) FAIL("KV %s is %s, which does not match %d heads x %d", b->name, S2, node_kv_heads(n), n->head_dim);
    char keys[48];
    if (!symdim_eq(n->keys, b->dims[ir_token_axis(b)]))
        FAIL("attention over %s keys but KV %s is %s", symdim_format(n->keys, keys, sizeof keys), b->name, S2);
    return tokens_by(n->heads * n->head_dim, rank, dims);
}

/* The position-infused table: the c_attn weight [D, 3·H·hd] (either order) -> [slots, 2·H·hd] (derived). */
static bool shape_pia_pos(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    int HD3 = 3 * n->heads * n->head_dim;
    if (!in.a || in.a->rank != 2 || (ir_dim(in.a, 0) != HD3 && ir_dim(in.a, 1) != HD3))
        FAIL("weight %s is %s, expected [D, %d] or [%d, D]", in.a ? in.a->name : "?", S1, HD3, HD3);
    if (!g->spec || g->spec->infused == PIA_NONE) FAIL("the model has no position-infused attention");
    *rank = 2;
    dims[0] = DIM_STATE_ROWS; /* slots: the table's rows, at its capacity */
    dims[1] = SYMDIM_CONST(2 * n->heads * n->head_dim);
    return true;
}

/* A band lookup: tokens [T] and a table of exactly hi-lo rows -> [T, width]. */
static bool shape_embed_band(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    if (!in.a || !in.b) FAIL("embed_band needs tokens and a table");
    if (!shape_is(in.a, 1, (SymDim[]){SYMDIM_T})) FAIL("tokens %s is %s, expected [T]", in.a->name, S1);
    if (n->band_lo < 0 || n->band_hi <= n->band_lo) FAIL("empty band [%d, %d)", n->band_lo, n->band_hi);
    if (in.b->rank != 2 || ir_dim(in.b, 0) != n->band_hi - n->band_lo)
        FAIL("table %s is %s, expected [%d, width] for band [%d, %d)", in.b->name, S2, n->band_hi - n->band_lo,
             n->band_lo, n->band_hi);
    return tokens_by(ir_dim(in.b, 1), rank, dims);
}

/* Scale and positions: x [T, D] (and a learned table of D columns) -> [T, D]. */
static bool shape_pos_add(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    int D = act_width(in.a);
    if (!D) FAIL("input %s is %s, expected [T, channels]", in.a ? in.a->name : "?", S1);
    if (n->nin == 2 && (in.b->rank != 2 || ir_dim(in.b, 1) != D))
        FAIL("position table %s does not have %d columns", in.b->name, D);
    return tokens_by(D, rank, dims);
}

/* head [T, c0], clusters [T, ntails], tail i [T, size_i] -> [T, c0 + sum size_i]. */
static bool shape_logprob(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    ShapeIn in = shape_in(g, n);
    int V = act_width(in.a);
    if (!V) FAIL("head logits %s is %s, expected [T, shortlist]", in.a ? in.a->name : "?", S1);
    if (act_width(in.b) != n->ntails) FAIL("cluster logits %s is %s, expected [T,%d]", in.b ? in.b->name : "?", S2, n->ntails);
    for (int k = 2; k < n->nin; k++) {
        int w = act_width(input(g, n, k));
        if (!w) FAIL("tail logits %d is not [T, size]", k - 1);
        V += w;
    }
    return tokens_by(V, rank, dims);
}

/* ------------------------------------------------------------------ */
/* The table                                                            */
/* ------------------------------------------------------------------ */

const OpInfo op_table[OP_COUNT] = {
    [OP_EMBED] = {.name = "embed", .nin = -1, .out_class = VC_ACTIVATION, .ninputs = ninputs_embed,
                  .print_attrs = print_embed, .key_attrs = key_embed, .shape = shape_embed,
                  .interp = interp_embed, .backward = interp_backward_embed, .emit = emit_embed, .cost = cost_embed},
    [OP_NORM] = {.name = "norm", .nin = -1, .out_class = VC_ACTIVATION, .ninputs = ninputs_norm,
                 .print_attrs = print_norm, .key_attrs = key_norm, .shape = shape_norm,
                 .interp = interp_norm, .backward = interp_backward_norm, .emit = emit_norm, .cost = cost_norm},
    [OP_MATMUL] = {.name = "matmul", .nin = -1, .out_class = VC_ACTIVATION, .gemm = true, .fusable_epilogue = true,
                   .kernel_first_input = 2, .ninputs = ninputs_matmul, .print_attrs = print_gemm,
                   .key_attrs = key_gemm, .needs_kernel = needs_kernel_matmul, .verify = verify_gemm,
                   .shape = shape_gemm, .interp = interp_matmul, .backward = interp_backward_matmul, .emit = emit_gemm, .cost = cost_gemm},
    [OP_BIAS] = {.name = "bias", .nin = 2, .out_class = VC_ACTIVATION, .shape = shape_bias,
                 .interp = interp_bias, .backward = interp_backward_bias, .emit = emit_bias, .cost = cost_elementwise},
    [OP_ACT] = {.name = "act", .nin = 1, .out_class = VC_ACTIVATION, .print_attrs = print_act, .key_attrs = key_act,
                .shape = shape_act, .interp = interp_act, .backward = interp_backward_act, .emit = emit_act, .cost = cost_elementwise},
    [OP_ADD] = {.name = "add", .nin = 2, .out_class = VC_ACTIVATION, .print_attrs = print_add,
                .needs_kernel = needs_kernel_add, .shape = shape_add,
                .interp = interp_add, .backward = interp_backward_add, .emit = emit_add, .cost = cost_elementwise},
    [OP_GATE] = {.name = "gate", .nin = 2, .out_class = VC_ACTIVATION, .print_attrs = print_act, .key_attrs = key_act,
                 .shape = shape_add, .interp = interp_gate, .backward = interp_backward_gate, .emit = emit_gate,
                 .cost = cost_elementwise},
    [OP_KV_WRITE] = {.name = "kv_write", .nin = 1, .out_class = VC_KV, .print_attrs = print_attn,
                     .key_attrs = key_attn, .verify = verify_kv_write, .shape = shape_kv_write,
                     .interp = interp_kv_write, .backward = interp_backward_kv_write, .emit = emit_kv_write, .cost = cost_kv_write},
    [OP_ATTENTION] = {.name = "attention", .nin = -1, .out_class = VC_ACTIVATION, .ninputs = ninputs_attention,
                      .print_attrs = print_attn,
                      .key_attrs = key_attn, .verify = verify_attention, .shape = shape_attention,
                      .interp = interp_attention, .backward = interp_backward_attention, .emit = emit_attention, .cost = cost_attention},
    [OP_LOGITS] = {.name = "logits", .nin = -1, .ninputs = ninputs_logits, .out_class = VC_OUTPUT, .gemm = true, .print_attrs = print_gemm,
                   .key_attrs = key_gemm, .needs_kernel = needs_kernel_logits, .verify = verify_gemm,
                   .shape = shape_gemm, .interp = interp_matmul, .backward = interp_backward_matmul, .emit = emit_gemm, .cost = cost_gemm},
    [OP_EMBED_BAND] = {.name = "embed_band", .nin = 2, .out_class = VC_ACTIVATION, .print_attrs = print_band,
                       .key_attrs = key_band, .shape = shape_embed_band, .interp = interp_embed_band, .backward = interp_backward_embed_band,
                       .emit = emit_embed_band, .cost = cost_elementwise},
    [OP_POS_ADD] = {.name = "pos_add", .nin = -1, .out_class = VC_ACTIVATION, .ninputs = ninputs_pos_add,
                    .print_attrs = print_pos_add, .key_attrs = key_pos_add, .shape = shape_pos_add,
                    .interp = interp_pos_add, .backward = interp_backward_pos_add, .emit = emit_pos_add, .cost = cost_elementwise},
    [OP_ADAPTIVE_LOGPROB] = {.name = "adaptive_logprob", .nin = -1, .out_class = VC_OUTPUT, .ninputs = ninputs_logprob,
                             .print_attrs = print_logprob, .key_attrs = key_logprob, .shape = shape_logprob,
                             .interp = interp_adaptive_logprob, .backward = interp_backward_adaptive_logprob, .emit = emit_adaptive_logprob, .cost = cost_elementwise},
    [OP_REC_KV] = {.name = "rec_kv", .nin = -1, .out_class = VC_ACTIVATION, .ninputs = ninputs_rec_kv,
                   .print_attrs = print_rec, .key_attrs = key_rec, .shape = shape_rec_kv,
                   .interp = interp_rec_kv, .emit = emit_rec_kv, .cost = cost_rec},
    [OP_REC_UPDATE] = {.name = "rec_update", .nin = -1, .out_class = VC_KV, .ninputs = ninputs_rec_update,
                       .print_attrs = print_rec, .key_attrs = key_rec, .shape = shape_rec_update,
                       .interp = interp_rec_update, .emit = emit_rec_update, .cost = cost_rec},
    [OP_PIA_POS] = {.name = "pia_pos", .nin = 1, .out_class = VC_KV, .print_attrs = print_pia_pos,
                    .key_attrs = key_pia_pos, .verify = verify_pia_pos, .shape = shape_pia_pos,
                    .interp = interp_pia_pos, .backward = interp_backward_pia_pos, .emit = emit_pia_pos, .cost = cost_pia_pos},
    [OP_REL_ATTENTION] = {.name = "rel_attention", .nin = -1, .out_class = VC_ACTIVATION, .ninputs = txl_rel_ninputs,
                          .print_attrs = txl_print_attrs, .key_attrs = txl_key_attrs, .shape = txl_shape_rel_attention,
                          .interp = interp_rel_attention, .backward = interp_backward_rel_attention, .emit = emit_txl, .cost = cost_rel_attention},
    [OP_MEM_WRITE] = {.name = "mem_write", .nin = 1, .out_class = VC_KV, .print_attrs = txl_print_attrs,
                      .key_attrs = txl_key_attrs, .shape = txl_shape_mem_write, .interp = interp_mem_write, .backward = interp_backward_mem_write,
                      .emit = emit_txl, .cost = cost_mem_write},
    [OP_REL_KEYS] = {.name = "rel_keys", .nin = 1, .out_class = VC_KV, .print_attrs = txl_print_attrs,
                     .key_attrs = txl_key_attrs, .shape = txl_shape_rel_keys, .interp = interp_rel_keys, .backward = interp_backward_rel_keys,
                     .emit = emit_rel_keys, .cost = cost_rel_keys},
};

const OpInfo *op_info(OpKind k) { return (unsigned)k < OP_COUNT ? &op_table[k] : NULL; }

const char *op_name(OpKind k) { return (unsigned)k < OP_COUNT ? op_table[k].name : "?"; }

bool op_is_gemm(OpKind k) { return (unsigned)k < OP_COUNT && op_table[k].gemm; }

int op_expected_inputs(const Node *n) {
    const OpInfo *oi = op_info(n->op);
    if (!oi) return 0;
    return oi->ninputs ? oi->ninputs(n) : oi->nin;
}

bool ir_node_needs_kernel(const Node *n) {
    const OpInfo *oi = op_info(n->op);
    return oi && (!oi->needs_kernel || oi->needs_kernel(n));
}

bool ir_infer_shape(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen) {
    for (int k = 0; k < n->nin; k++)
        if (!input(g, n, k)) FAIL("input %d has no shape", k);
    const OpInfo *oi = op_info(n->op);
    if (!oi) FAIL("unknown op");
    return oi->shape(g, n, rank, dims, why, whylen);
}
