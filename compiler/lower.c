/*
 * lower.c — ModelSpec -> Graph for a GPT-2-style decoder (docs/ir.md,
 * "Lowering"). The graph is produced unfused: every matmul is followed by
 * separate bias, activation and residual-add nodes, which the fuse pass
 * folds into matmul epilogues.
 *
 * Lowering fixes the inputs of the graph: the tokens value and every weight
 * with its stored shape, storage order and file naming (HF GPT-2). Shapes of
 * the values the nodes produce are left to the shapes pass, dtypes and the
 * remaining orders to the layouts pass.
 */
#include "shortc.h"

#include <math.h>
#include <string.h>

typedef struct Lower {
    Graph *g;
    Diag *d;
    const ModelSpec *s;
    int nact;        /* activations named so far (%1, %2, ...) */
    DimOrder worder; /* storage order of matrix weights */
    int hd;          /* head_dim */
    int rec;         /* the recurrent state value (h_prev), -1 without a recurrence module */
} Lower;

/* Weight roles: how the stored shape and the file shape follow from the role. */
typedef enum WRole {
    W_VECTOR,  /* [n]: biases, norm gains */
    W_TABLE,   /* wte [V, D]: always stored as in the file, [out,in] w.r.t. the logits */
    W_POS,     /* wpe [P, D]: rows are positions */
    W_CONV1D,  /* HF Conv1D: file [in, out]; stored in the weights order */
    W_LINEAR,  /* nn.Linear (lm_head): file [out, in]; stored in the weights order */
    W_HEADS,   /* [heads, head_dim] (Transformer-XL's r_w_bias, r_r_bias): stored as in the file */
} WRole;

static Loc pick_loc(const ModelSpec *s, SettingId a, SettingId b) {
    if (s->where[a].file >= 0) return s->where[a];
    if (s->where[b].file >= 0) return s->where[b];
    return s->where[SET_LAYERS];
}

static int act_value(Lower *L, ValueClass cls) {
    char name[32];
    snprintf(name, sizeof name, "%%%d", ++L->nact);
    Value *v = ir_new_value(L->g, cls, name);
    return v ? v->id : -1;
}

/* A weight named `fmt` (printf-style, the file name) of logical size rows x cols (in x out for matrices). */
static int weight(Lower *L, WRole role, int in, int out, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int weight(Lower *L, WRole role, int in, int out, const char *fmt, ...) {
    char fname[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fname, sizeof fname, fmt, ap);
    va_end(ap);
    char vname[260];
    snprintf(vname, sizeof vname, "@%s", fname);
    Value *v = ir_new_value(L->g, VC_WEIGHT, vname);
    if (!v) return -1;
    v->weight_name = arena_strdup(L->g->arena, fname);
    switch (role) {
    case W_VECTOR:
        v->rank = 1;
        v->dims[0] = SYMDIM_CONST(in);
        v->order = L->worder;
        break;
    case W_TABLE: /* in = rows (vocab), out = D */
        v->rank = 2;
        v->dims[0] = SYMDIM_CONST(in);
        v->dims[1] = SYMDIM_CONST(out);
        v->order = ORD_OUT_IN;
        break;
    case W_POS:
    case W_HEADS:
        v->rank = 2;
        v->dims[0] = SYMDIM_CONST(in);
        v->dims[1] = SYMDIM_CONST(out);
        v->order = ORD_TOKENS_CHANNELS;
        break;
    case W_CONV1D:
    case W_LINEAR:
        v->rank = 2;
        v->order = L->worder;
        if (L->worder == ORD_IN_OUT) { v->dims[0] = SYMDIM_CONST(in); v->dims[1] = SYMDIM_CONST(out); }
        else { v->dims[0] = SYMDIM_CONST(out); v->dims[1] = SYMDIM_CONST(in); }
        v->transposed_src = role == W_CONV1D ? L->worder == ORD_OUT_IN : L->worder == ORD_IN_OUT;
        break;
    }
    return v->id;
}

static Node *node(Lower *L, OpKind op, Loc src, int layer, int out, int nin, const int *in) {
    Node *n = ir_new_node(L->g, op, src, layer);
    if (!n) return NULL;
    for (int i = 0; i < nin; i++) ir_add_input(n, in[i]);
    n->out = out;
    if (out >= 0) L->g->values[out]->def = n->id;
    return n;
}

/* matmul x · w (+ bias node). Returns the result value. */
static int matmul(Lower *L, Loc src, int layer, int x, int w, int bias) {
    int y = act_value(L, VC_ACTIVATION);
    Node *n = node(L, OP_MATMUL, src, layer, y, 2, (int[]){x, w});
    if (!n) return -1;
    n->trans_w = L->g->values[w]->order == ORD_OUT_IN;
    if (bias < 0) return y;
    int z = act_value(L, VC_ACTIVATION);
    node(L, OP_BIAS, src, layer, z, 2, (int[]){y, bias});
    return z;
}

/* y = x · w with an explicit transposition (a weight shared in both directions); no bias node when bias < 0. */
static int matmul_t(Lower *L, Loc src, int x, int w, bool trans, int bias) {
    int y = act_value(L, VC_ACTIVATION);
    Node *n = node(L, OP_MATMUL, src, -1, y, 2, (int[]){x, w});
    if (!n) return -1;
    n->trans_w = trans;
    if (bias < 0) return y;
    int z = act_value(L, VC_ACTIVATION);
    node(L, OP_BIAS, src, -1, z, 2, (int[]){y, bias});
    return z;
}

static int add(Lower *L, Loc src, int layer, int branch, int residual) {
    int y = act_value(L, VC_ACTIVATION);
    node(L, OP_ADD, src, layer, y, 2, (int[]){branch, residual});
    return y;
}

static int norm(Lower *L, Loc src, int layer, int x, const char *prefix) {
    const ModelSpec *s = L->s;
    int gamma = weight(L, W_VECTOR, s->d_model, 0, "%s.weight", prefix);
    int beta = s->norm == NORM_LAYERNORM ? weight(L, W_VECTOR, s->d_model, 0, "%s.bias", prefix) : -1;
    int y = act_value(L, VC_ACTIVATION);
    Node *n = node(L, OP_NORM, src, layer, y, beta >= 0 ? 3 : 2, (int[]){x, gamma, beta});
    if (n) {
        n->norm = s->norm;
        n->eps = s->eps;
    }
    return y;
}

/* ------------------------------------------------------------------ */
/* The recurrence module (docs/attention/recurrence.md)                 */
/* ------------------------------------------------------------------ */

/* The session's h_prev: a state value [D + 1] (h_prev and a present flag), written by the update. */
static int rec_state(Lower *L) {
    Value *v = ir_new_value(L->g, VC_KV, "%rec");
    if (!v) return -1;
    v->rank = 1;
    v->dims[0] = SYMDIM_CONST(L->s->d_model + 1);
    v->role = STATE_RECURRENT;
    v->capacity = 1;
    return v->id;
}

/* Layer l_ins's extra key/value from h_prev: its ln_1 (the weights of the norm that made x) and c_attn. */
static int rec_key(Lower *L, int layer, int x, int wqkv, int bqkv) {
    const Node *nx = L->g->nodes[L->g->values[x]->def];
    int in[4], k = 0;
    if (L->s->rec.norm)
        for (int i = 1; i < nx->nin; i++) in[k++] = nx->in[i];
    in[k++] = wqkv;
    in[k++] = bqkv;
    int y = act_value(L, VC_ACTIVATION);
    Node *n = node(L, OP_REC_KV, L->s->rec.loc, layer, y, k, in);
    if (!n) return -1;
    n->rec_state = L->rec;
    n->rec_norm = L->s->rec.norm;
    n->norm = L->s->norm;
    n->eps = L->s->eps;
    n->heads = L->s->n_heads;
    n->head_dim = L->hd;
    n->trans_w = L->g->values[wqkv]->order == ORD_OUT_IN;
    return y;
}

/* The update at the end of a window: pool the states, run the FFN, write h_prev. */
static bool rec_update(Lower *L, const int *states, int nstates) {
    const RecurrenceSpec *r = &L->s->rec;
    int in[MAX_NODE_INPUTS], k = 0;
    for (int i = 0; i < nstates; i++) in[k++] = states[i];
    in[k++] = weight(L, W_VECTOR, nstates, 0, "rec.alpha");
    int width = L->s->d_model;
    for (int j = 0; j <= r->nhidden; j++) {
        int out = j < r->nhidden ? r->hidden[j] : L->s->d_model;
        in[k++] = weight(L, W_CONV1D, width, out, "rec.ffn.%d.weight", j);
        in[k++] = weight(L, W_VECTOR, out, 0, "rec.ffn.%d.bias", j);
        width = out;
    }
    Node *n = node(L, OP_REC_UPDATE, r->loc, -1, L->rec, k, in);
    if (!n) return false;
    n->rec_pooled = nstates;
    n->rec_layers = r->nhidden + 1;
    n->rec_mean = r->pool == REC_POOL_MEAN;
    n->act = r->act;
    return true;
}

/* The positions the embedding adds: rotary and ALiBi positions act in attention, not on the embedding. */
static PosKind embedding_positions(const ModelSpec *s) {
    return s->pos == POS_ROPE || s->pos == POS_ALIBI ? POS_NONE : s->pos;
}

/* A cache without PIA (Shortformer's ablation): each segment's tokens get positions 0..L-1 again (the
 * cached ones keep those of their own segment, inside their keys and values); 0 otherwise. */
static int segment_positions(const ModelSpec *s) { return s->cache > 0 && s->infused == PIA_NONE ? s->segment : 0; }

/* The sinusoid the embedding adds (fairseq's layout or Vaswani's, the default); PIA_NONE without one. */
static PiaStyle embedding_sinusoid(const ModelSpec *s) {
    if (s->pos != POS_SINUSOIDAL) return PIA_NONE;
    return s->pos_style == PIA_FAIRSEQ ? PIA_FAIRSEQ : PIA_VASWANI;
}

/* Position-infused attention: the table [slots, 2·H·hd] of W_q p_s | W_k p_s, from the layer's c_attn weight,
 * a derived tensor (computed once per weights load by the load program, shared by every session). */
static int pia_table(Lower *L, Loc src, int layer, int wqkv) {
    char name[32];
    snprintf(name, sizeof name, "%%pia.%d", layer);
    Value *v = ir_new_value(L->g, VC_KV, name);
    if (!v) return -1;
    v->role = STATE_TABLE; /* derived: computed when the weights load, not session state */
    v->capacity = ir_position_limit(L->s);
    int t = v->id;
    Node *n = node(L, OP_PIA_POS, src, layer, t, 1, (int[]){wqkv});
    if (!n) return -1;
    n->pia_style = L->s->infused;
    n->heads = L->s->n_heads;
    n->head_dim = L->hd;
    return t;
}

/* attention block up to and including the output projection (+ bias); returns the branch value. */
static int attention(Lower *L, int layer, int x) {
    const ModelSpec *s = L->s;
    const AttnSpec *at = &s->layers[layer].attn;
    Loc src = at->loc.file >= 0 ? at->loc : pick_loc(s, SET_ATTENTION, SET_LAYERS);
    int H = s->n_heads, G = s->kv_heads > 0 ? s->kv_heads : H, hd = L->hd, D = s->d_model;
    int wqkv = weight(L, W_CONV1D, D, (H + 2 * G) * hd, "h.%d.attn.c_attn.weight", layer); /* q | k | v */
    int bqkv = s->no_bias ? -1 : weight(L, W_VECTOR, (H + 2 * G) * hd, 0, "h.%d.attn.c_attn.bias", layer);
    int pos = s->infused != PIA_NONE ? pia_table(L, src, layer, wqkv) : -1;
    int qkv = matmul(L, src, layer, x, wqkv, bqkv);
    char kvname[32];
    snprintf(kvname, sizeof kvname, "%%kv.%d", layer);
    Value *kvv = ir_new_value(L->g, VC_KV, kvname);
    if (!kvv) return -1;
    kvv->role = STATE_KV_CACHE;
    kvv->capacity = ir_position_limit(s);
    kvv->slides = s->infused != PIA_NONE || s->cache > 0; /* Shortformer's cache: the last `cache` rows stay */
    kvv->keep = kvv->slides ? s->cache : 0;
    Node *kw = node(L, OP_KV_WRITE, src, layer, kvv->id, 1, (int[]){qkv});
    int xkv = L->rec >= 0 && layer == s->rec.insert - 1 ? rec_key(L, layer, x, wqkv, bqkv) : -1;
    int y = act_value(L, VC_ACTIVATION);
    int extra = xkv >= 0 ? xkv : pos; /* the recurrence's extra key or the PIA table (never both: sema) */
    Node *an = node(L, OP_ATTENTION, src, layer, y, extra >= 0 ? 3 : 2, (int[]){qkv, kvv->id, extra});
    if (!kw || !an) return -1;
    an->rec_key = xkv >= 0;
    an->infused = pos >= 0;
    kw->attn = an->attn = *at;
    kw->heads = an->heads = H;
    kw->kv_heads = an->kv_heads = G;
    kw->rope = an->rope = s->pos == POS_ROPE ? &s->rope : NULL;
    an->alibi = s->pos == POS_ALIBI;
    kw->head_dim = an->head_dim = hd;
    an->keys = SYMDIM_KEYS;
    int wo = weight(L, W_CONV1D, H * hd, D, "h.%d.attn.c_proj.weight", layer);
    int bo = s->no_bias ? -1 : weight(L, W_VECTOR, D, 0, "h.%d.attn.c_proj.bias", layer);
    return matmul(L, src, layer, y, wo, bo);
}

/* The bias vector NAME.bias of width n, or -1 under `bias off`. */
static int linear_bias(Lower *L, int n, const char *name) {
    return L->s->no_bias ? -1 : weight(L, W_VECTOR, n, 0, "%s.bias", name);
}

/* A gated unit's hidden: up(x) * act(gate(x)), the gate's GEMM first (its result is ready for up's epilogue). */
static int gated_hidden(Lower *L, Loc src, int layer, int x, WRole role, const char *up, const char *gate) {
    const ModelSpec *s = L->s;
    int D = s->d_model, F = s->d_ff;
    int wg = weight(L, role, D, F, "%s.weight", gate);
    int g = matmul(L, src, layer, x, wg, linear_bias(L, F, gate));
    int wu = weight(L, role, D, F, "%s.weight", up);
    int u = matmul(L, src, layer, x, wu, linear_bias(L, F, up));
    int y = act_value(L, VC_ACTIVATION);
    Node *n = node(L, OP_GATE, src, layer, y, 2, (int[]){u, g});
    if (!n) return -1;
    n->act = s->act;
    return y;
}

/* Feed-forward block: fc1 (+bias) -> act -> fc2 (+bias), weights of `role` named NAME.weight / NAME.bias; a gated
 * FFN's fc1 is its up projection and `gate` its gate projection. */
static int ffn_block(Lower *L, int layer, int x, WRole role, const char *fc1, const char *gate, const char *fc2) {
    const ModelSpec *s = L->s;
    Loc src = pick_loc(s, SET_FFN, SET_LAYERS);
    int D = s->d_model, F = s->d_ff;
    int h;
    if (s->gated) {
        h = gated_hidden(L, src, layer, x, role, fc1, gate);
        if (h < 0) return -1;
    } else {
        int w1 = weight(L, role, D, F, "%s.weight", fc1);
        h = matmul(L, src, layer, x, w1, linear_bias(L, F, fc1));
    }
    if (!s->gated && s->act != ACT_NONE) {
        int a = act_value(L, VC_ACTIVATION);
        Node *n = node(L, OP_ACT, src, layer, a, 1, (int[]){h});
        if (n) n->act = s->act;
        h = a;
    }
    int w2 = weight(L, role, F, D, "%s.weight", fc2);
    return matmul(L, src, layer, h, w2, linear_bias(L, D, fc2));
}

/* MLP block: c_fc (+bias) -> act -> c_proj (+bias), HF GPT-2 Conv1D weights (gated: c_fc the up projection,
 * c_gate the gate); returns the branch value. */
static int mlp(Lower *L, int layer, int x) {
    char fc1[64], gate[64], fc2[64];
    snprintf(fc1, sizeof fc1, "h.%d.mlp.c_fc", layer);
    snprintf(gate, sizeof gate, "h.%d.mlp.c_gate", layer);
    snprintf(fc2, sizeof fc2, "h.%d.mlp.c_proj", layer);
    return ffn_block(L, layer, x, W_CONV1D, fc1, gate, fc2);
}

/* ------------------------------------------------------------------ */
/* Adaptive input and adaptive softmax (docs/ir.md, "Adaptive")         */
/* ------------------------------------------------------------------ */

/* The bands of an adaptive model: token ids [lo[i], lo[i+1]) of width dim[i]. */
typedef struct Bands {
    int n;                                /* band count */
    int lo[MAX_ADAPTIVE_CUTOFFS + 2];     /* band i starts at lo[i]; lo[n] = vocab */
    int dim[MAX_ADAPTIVE_CUTOFFS + 1];    /* band widths d_model / factor^i */
    int table[MAX_ADAPTIVE_CUTOFFS + 1];  /* adaptive.emb.{i}.weight */
    int proj[MAX_ADAPTIVE_CUTOFFS + 1];   /* adaptive.emb_proj.{i}.weight (nn.Linear dim -> D) */
} Bands;

static Bands adaptive_bands(Lower *L) {
    const ModelSpec *s = L->s;
    const AdaptiveSpec *a = &s->adaptive;
    Bands b = {.n = a->ncutoffs + 1};
    b.lo[0] = 0;
    for (int i = 0; i < a->ncutoffs; i++) b.lo[i + 1] = a->cutoffs[i];
    b.lo[b.n] = s->vocab;
    int w = s->d_model;
    for (int i = 0; i < b.n; i++, w /= a->factor) {
        b.dim[i] = w;
        b.table[i] = weight(L, W_TABLE, b.lo[i + 1] - b.lo[i], w, "adaptive.emb.%d.weight", i);
        b.proj[i] = weight(L, W_LINEAR, w, s->d_model, "adaptive.emb_proj.%d.weight", i);
    }
    return b;
}

/* The input: sum over bands of proj_i(table_i[tok - lo_i]) (0 outside the band), scaled, plus positions. */
static int adaptive_input(Lower *L, const Bands *b, int tokens, int wpe, Loc src) {
    int x = -1;
    for (int i = 0; i < b->n; i++) {
        int e = act_value(L, VC_ACTIVATION);
        Node *n = node(L, OP_EMBED_BAND, src, -1, e, 2, (int[]){tokens, b->table[i]});
        if (!n) return -1;
        n->band_lo = b->lo[i];
        n->band_hi = b->lo[i + 1];
        int p = matmul_t(L, src, e, b->proj[i], L->g->values[b->proj[i]]->order == ORD_OUT_IN, -1);
        x = x < 0 ? p : add(L, src, -1, p, x);
    }
    int y = act_value(L, VC_ACTIVATION);
    Node *n = node(L, OP_POS_ADD, src, -1, y, wpe >= 0 ? 2 : 1, (int[]){x, wpe});
    if (!n) return -1;
    n->pos = embedding_positions(L->s);
    n->pia_style = embedding_sinusoid(L->s);
    n->pos_mod = segment_positions(L->s);
    n->scale = L->s->adaptive.scale;
    return y;
}

/* h · table^T (+ bias): the logits of one band's words from its projected hidden h. */
static int band_logits(Lower *L, Loc src, int h, int table, int bias) {
    return matmul_t(L, src, h, table, L->g->values[table]->order == ORD_OUT_IN, bias);
}

/*
 * The hidden of band i projected to its width: x · proj. Tied projections are
 * the input's file tensor (nn.Linear dim -> D, read transposed: a second weight
 * value of the same file name); untied ones are adaptive.out_proj.{i}.weight
 * (nn.Linear D -> dim).
 */
static int band_hidden(Lower *L, Loc src, const Bands *b, int i, int x, bool tied_proj) {
    /* the tied file tensor [D, dim] read as x · W is a Conv1D-style [in, out] weight */
    int w = tied_proj ? weight(L, W_CONV1D, L->s->d_model, b->dim[i], "adaptive.emb_proj.%d.weight", i)
                      : weight(L, W_LINEAR, L->s->d_model, b->dim[i], "adaptive.out_proj.%d.weight", i);
    return matmul_t(L, src, x, w, L->g->values[w]->order == ORD_OUT_IN, -1);
}

/*
 * The output: log-probabilities over the vocab. fairseq: the head is x against
 * band 0's words and the cluster rows (no projection, no biases; clusters in
 * order); Transformer-XL: the head is proj_0(x) against band 0's words and the
 * cluster rows, with biases, cluster i at column c0 + n - i. Tail i: its
 * projected hidden against its words.
 */
static int adaptive_output(Lower *L, const Bands *b, int x, Loc src) {
    const ModelSpec *s = L->s;
    bool txl = s->adaptive.style == ADAPTIVE_TXL;
    int ntails = b->n - 1;
    int in[2 + MAX_ADAPTIVE_CUTOFFS];
    int h0 = txl ? band_hidden(L, src, b, 0, x, false) : x;
    int w0 = s->tied ? b->table[0] : weight(L, W_TABLE, b->lo[1], b->dim[0], "adaptive.out.0.weight");
    int b0 = txl ? weight(L, W_VECTOR, b->lo[1], 0, "adaptive.out.0.bias") : -1;
    in[0] = band_logits(L, src, h0, w0, b0);
    int cw = weight(L, W_TABLE, ntails, txl ? b->dim[0] : s->d_model, "adaptive.cluster.weight");
    int cb = txl ? weight(L, W_VECTOR, ntails, 0, "adaptive.cluster.bias") : -1;
    in[1] = band_logits(L, src, h0, cw, cb);
    for (int i = 1; i < b->n; i++) {
        int h = band_hidden(L, src, b, i, x, s->tied);
        int w = s->tied ? b->table[i] : weight(L, W_TABLE, b->lo[i + 1] - b->lo[i], b->dim[i], "adaptive.out.%d.weight", i);
        int bias = txl ? weight(L, W_VECTOR, b->lo[i + 1] - b->lo[i], 0, "adaptive.out.%d.bias", i) : -1;
        in[1 + i] = band_logits(L, src, h, w, bias);
    }
    Value *lg = ir_new_value(L->g, VC_OUTPUT, "%logits");
    if (!lg) return -1;
    L->g->logits = lg->id;
    Node *n = node(L, OP_ADAPTIVE_LOGPROB, src, -1, lg->id, 2 + ntails, in);
    if (!n) return -1;
    n->ntails = ntails;
    n->reversed = txl;
    return lg->id;
}

/* ------------------------------------------------------------------ */
/* Transformer-XL (weights transformer_xl; docs/attention/relative.md)  */
/* ------------------------------------------------------------------ */

/* A layer's memory state: the ring of its last m attention inputs, [m, D] (role memory). */
static int txl_memory_value(Lower *L, int layer, int m) {
    char name[32];
    snprintf(name, sizeof name, "%%mem.%d", layer);
    Value *v = ir_new_value(L->g, VC_KV, name);
    if (!v) return -1;
    v->role = STATE_MEMORY;
    v->capacity = m;
    v->rank = 2; /* set here: the attention reads it before mem_write (its producer) runs */
    v->dims[0] = DIM_STATE_ROWS;
    v->dims[1] = SYMDIM_CONST(L->s->d_model);
    return v->id;
}

/* A layer's relative keys W_r R_d from its r_net weight wr: the derived table [distances, H*hd] the load
 * program computes once per weights load (role table). */
static int txl_rel_table(Lower *L, Loc src, int layer, int wr, const AttnSpec *at, int m) {
    char name[32];
    snprintf(name, sizeof name, "%%rel.%d", layer);
    Value *v = ir_new_value(L->g, VC_KV, name);
    if (!v) return -1;
    v->role = STATE_TABLE; /* derived: computed when the weights load, not session state */
    v->capacity = txl_rel_rows(m, L->s->segment, at->prm.clamp);
    Node *n = node(L, OP_REL_KEYS, src, layer, v->id, 1, (int[]){wr});
    if (!n) return -1;
    n->attn = *at;
    n->heads = L->s->n_heads;
    n->head_dim = L->hd;
    n->memory = m;
    return v->id;
}

/* Relative attention of layer i on its attention input a, up to o_net; returns the branch value. */
static int txl_attention(Lower *L, int layer, int a, int shared_u, int shared_v) {
    const ModelSpec *s = L->s;
    const LayerSpec *ls = &s->layers[layer];
    Loc src = ls->attn.loc.file >= 0 ? ls->attn.loc : pick_loc(s, SET_ATTENTION, SET_LAYERS);
    int H = s->n_heads, hd = L->hd, D = s->d_model, W = H * hd, m = ls->memory;
    int wqkv = weight(L, W_LINEAR, D, 3 * W, "layers.%d.dec_attn.qkv_net.weight", layer);
    int wr = weight(L, W_LINEAR, D, W, "layers.%d.dec_attn.r_net.weight", layer);
    int u = shared_u, v = shared_v;
    if (u < 0) {
        u = weight(L, W_HEADS, H, hd, "layers.%d.dec_attn.r_w_bias", layer);
        v = weight(L, W_HEADS, H, hd, "layers.%d.dec_attn.r_r_bias", layer);
    }
    int qkv = matmul(L, src, layer, a, wqkv, -1);
    int mem = m > 0 ? txl_memory_value(L, layer, m) : -1;
    int rel = txl_rel_table(L, src, layer, wr, &ls->attn, m);
    if (rel < 0) return -1;
    int y = act_value(L, VC_ACTIVATION);
    Node *an = node(L, OP_REL_ATTENTION, src, layer, y, m > 0 ? 6 : 4, (int[]){qkv, rel, u, v, wqkv, mem});
    if (!an) return -1;
    an->attn = ls->attn;
    an->heads = H;
    an->head_dim = hd;
    an->memory = m;
    if (m > 0) {
        Node *mw = node(L, OP_MEM_WRITE, ls->memory_loc.file >= 0 ? ls->memory_loc : src, layer, mem, 1, (int[]){a});
        if (!mw) return -1;
        mw->memory = m;
    }
    int wo = weight(L, W_LINEAR, W, D, "layers.%d.dec_attn.o_net.weight", layer);
    return matmul(L, src, layer, y, wo, -1);
}

/* PositionwiseFF: CoreNet.0 (+bias), activation, CoreNet.3 (+bias), nn.Linear weights; returns the branch value. */
static int txl_ffn(Lower *L, int layer, int x) {
    char fc1[64], fc2[64];
    snprintf(fc1, sizeof fc1, "layers.%d.pos_ff.CoreNet.0", layer);
    snprintf(fc2, sizeof fc2, "layers.%d.pos_ff.CoreNet.3", layer);
    return ffn_block(L, layer, x, W_LINEAR, fc1, NULL, fc2);
}

/* One decoder layer (RelPartialLearnableDecoderLayer), post- or pre-norm; returns its output. */
static int txl_layer(Lower *L, int i, int x, int u, int v) {
    const ModelSpec *s = L->s;
    Loc nloc = pick_loc(s, SET_NORM, SET_LAYERS);
    char an[64], fn[64];
    snprintf(an, sizeof an, "layers.%d.dec_attn.layer_norm", i);
    snprintf(fn, sizeof fn, "layers.%d.pos_ff.layer_norm", i);
    bool pre = s->norm_place == NORM_PRE;
    int a = pre ? norm(L, nloc, i, x, an) : x;
    int at = txl_attention(L, i, a, u, v);
    int h = add(L, L->g->nodes[L->g->nnodes - 1]->src, i, at, x);
    if (!pre) h = norm(L, nloc, i, h, an);
    int f = txl_ffn(L, i, pre ? norm(L, nloc, i, h, fn) : h);
    int r = add(L, pick_loc(s, SET_FFN, SET_LAYERS), i, f, h);
    return pre ? r : norm(L, nloc, i, r, fn);
}

/*
 * The whole Transformer-XL body after the inputs: the word embedding times
 * sqrt(d_model), the layers (u, v shared unless a layer says untie=1), and
 * the logits against the (tied) output layer plus its bias. No final norm.
 */
static bool lower_txl(Lower *L, int tokens) {
    const ModelSpec *s = L->s;
    Graph *g = L->g;
    int D = s->d_model;
    Loc eloc = pick_loc(s, SET_EMBEDDING, SET_VOCAB);
    bool adaptive = s->adaptive.style != ADAPTIVE_NONE;
    Bands bands = {0};
    int wte = -1, x;
    if (adaptive) { /* AdaptiveEmbedding (div_val) and ProjectedAdaptiveLogSoftmax: the adaptive.* names */
        bands = adaptive_bands(L);
        x = adaptive_input(L, &bands, tokens, -1, eloc);
    } else {
        wte = weight(L, W_TABLE, s->vocab, D, "word_emb.emb_layers.0.weight");
        int e = act_value(L, VC_ACTIVATION);
        Node *en = node(L, OP_EMBED, eloc, -1, e, 2, (int[]){tokens, wte});
        if (!en) return false;
        en->pos = POS_NONE;
        x = act_value(L, VC_ACTIVATION);
        Node *sn = node(L, OP_POS_ADD, eloc, -1, x, 1, (int[]){e});
        if (!sn) return false;
        sn->pos = POS_NONE;
        sn->scale = sqrt((double)D);
    }
    if (x < 0) return false;
    bool shared = false;
    for (int i = 0; i < s->n_layers; i++) shared |= !s->layers[i].attn.prm.untie;
    int u = shared ? weight(L, W_HEADS, s->n_heads, L->hd, "r_w_bias") : -1;
    int v = shared ? weight(L, W_HEADS, s->n_heads, L->hd, "r_r_bias") : -1;
    for (int i = 0; i < s->n_layers; i++) {
        bool untie = s->layers[i].attn.prm.untie != 0;
        x = txl_layer(L, i, x, untie ? -1 : u, untie ? -1 : v);
    }
    if (adaptive) return adaptive_output(L, &bands, x, eloc) >= 0;
    int w = s->tied ? wte : weight(L, W_TABLE, s->vocab, D, "crit.out_layers.0.weight");
    int b = weight(L, W_VECTOR, s->vocab, 0, "crit.out_layers.0.bias");
    Value *lg = ir_new_value(g, VC_OUTPUT, "%logits");
    if (!lg) return false;
    g->logits = lg->id;
    Node *ln = node(L, OP_LOGITS, eloc, -1, lg->id, 3, (int[]){x, w, b});
    if (!ln) return false;
    ln->trans_w = g->values[w]->order == ORD_OUT_IN;
    ln->out_bias = true;
    return true;
}

Graph *lower_model(Arena *a, Diag *d, const ModelSpec *s) {
    if (!s) return NULL;
    if (s->naming != NAMING_HF_GPT2 && s->naming != NAMING_TXL) {
        diag_plain_error(d, "lower: model '%s': unsupported weight naming scheme", s->name);
        return NULL;
    }
    if (s->vocab <= 0 || s->d_model <= 0 || s->n_heads <= 0 || s->d_ff <= 0 || s->segment <= 0 || s->n_layers < 0 ||
        (s->n_layers > 0 && !s->layers)) {
        diag_plain_error(d, "lower: model '%s' has an incomplete specification", s->name);
        return NULL;
    }
    DimOrder wo = s->layout[TC_WEIGHTS].order;
    if (wo != ORD_IN_OUT && wo != ORD_OUT_IN) {
        diag_error(d, s->layout[TC_WEIGHTS].loc, "weights must be stored [in, out] or [out, in], not %s", dim_order_name(wo));
        return NULL;
    }
    if (s->naming == NAMING_TXL && (s->gated || s->no_bias || s->parallel)) { /* sema's rule, for specs built in memory */
        diag_plain_error(d, "lower: model '%s': a gated FFN, 'bias off' and 'block parallel' need weights hf_gpt2", s->name);
        return NULL;
    }
    if (s->parallel && s->norm_place != NORM_PRE) {
        diag_plain_error(d, "lower: model '%s': 'block parallel' needs a pre-norm model", s->name);
        return NULL;
    }
    if ((s->naming == NAMING_TXL) != txl_model(s)) { /* sema's rule, again for specs built in memory */
        diag_plain_error(d, "lower: model '%s': relative attention on every layer goes with weights transformer_xl, "
                         "and only with it", s->name);
        return NULL;
    }
    for (int i = 0; i < s->n_layers; i++) { /* the parameters make a pattern (ntok 1: no tables needed to check) */
        AttnPattern pat;
        char err[256];
        if (!attn_pattern_build(&pat, &s->layers[i].attn, i, s->n_heads, 1, err, sizeof err)) {
            diag_error(d, s->layers[i].attn.loc, "%s (layer %d)", err, i);
            return NULL;
        }
        attn_pattern_free(&pat);
    }
    Graph *g = arena_alloc(a, sizeof *g);
    if (!g) return NULL;
    g->arena = a;
    g->spec = s;
    g->stage = "lower";
    g->tokens = g->logits = g->position = -1;
    Lower L = {.g = g, .d = d, .s = s, .worder = wo, .hd = s->head_dim > 0 ? s->head_dim : s->d_model / s->n_heads,
               .rec = -1};
    if (s->rec.on && (L.rec = rec_state(&L)) < 0) return NULL;
    int pooled[MAX_NODE_INPUTS], npooled = 0;
    int D = s->d_model;

    /* embedding */
    Value *tok = ir_new_value(g, VC_INPUT, "%tokens");
    if (!tok) return NULL;
    tok->rank = 1;
    tok->dims[0] = SYMDIM_T;
    g->tokens = tok->id;
    Value *pos = ir_new_value(g, VC_INPUT, "%P");
    if (!pos) return NULL;
    pos->rank = 1;
    pos->dims[0] = SYMDIM_CONST(1);
    g->position = pos->id;
    if (s->naming == NAMING_TXL) return lower_txl(&L, tok->id) && !d->errors ? g : NULL;
    bool adaptive = s->adaptive.style != ADAPTIVE_NONE;
    Bands bands = {0};
    if (adaptive) bands = adaptive_bands(&L);
    int wte = adaptive ? -1 : weight(&L, W_TABLE, s->vocab, D, "wte.weight");
    int wpe = s->pos == POS_LEARNED ? weight(&L, W_POS, s->max_pos > 0 ? s->max_pos : s->segment, D, "wpe.weight") : -1;
    Loc eloc = pick_loc(s, embedding_positions(s) != POS_NONE ? SET_POSITIONS : SET_EMBEDDING, SET_EMBEDDING);
    int x;
    if (adaptive) {
        x = adaptive_input(&L, &bands, tok->id, wpe, pick_loc(s, SET_EMBEDDING, SET_VOCAB));
        if (x < 0) return NULL;
    } else {
        x = act_value(&L, VC_ACTIVATION);
        Node *e = node(&L, OP_EMBED, eloc, -1, x, wpe >= 0 ? 3 : 2, (int[]){tok->id, wte, wpe});
        if (!e) return NULL;
        e->pos = embedding_positions(s);
        e->pia_style = embedding_sinusoid(s);
        e->pos_mod = segment_positions(s);
    }

    /* layers */
    if (s->rec.on && s->rec.states == REC_STATES_EMBED) pooled[npooled++] = x;
    Loc nloc = pick_loc(s, SET_NORM, SET_LAYERS);
    char prefix[64];
    for (int i = 0; i < s->n_layers; i++) {
        if (s->norm_place == NORM_PRE) {
            snprintf(prefix, sizeof prefix, "h.%d.ln_1", i);
            int n1 = norm(&L, nloc, i, x, prefix);
            int at = attention(&L, i, n1);
            int h = add(&L, g->nodes[g->nnodes - 1]->src, i, at, x);
            snprintf(prefix, sizeof prefix, "h.%d.ln_2", i);
            int n2 = norm(&L, nloc, i, s->parallel ? x : h, prefix); /* parallel: both branches read x */
            int m = mlp(&L, i, n2);
            x = add(&L, pick_loc(s, SET_FFN, SET_LAYERS), i, m, h);
            if (s->rec.on && npooled < MAX_NODE_INPUTS) pooled[npooled++] = x;
        } else {
            int at = attention(&L, i, x);
            int r1 = add(&L, g->nodes[g->nnodes - 1]->src, i, at, x);
            snprintf(prefix, sizeof prefix, "h.%d.ln_1", i);
            int h = norm(&L, nloc, i, r1, prefix);
            int m = mlp(&L, i, h);
            int r2 = add(&L, pick_loc(s, SET_FFN, SET_LAYERS), i, m, h);
            snprintf(prefix, sizeof prefix, "h.%d.ln_2", i);
            x = norm(&L, nloc, i, r2, prefix);
        }
    }
    if (s->rec.on && !rec_update(&L, pooled, npooled)) return NULL;
    if (s->norm_place == NORM_PRE && !s->no_final_norm) x = norm(&L, nloc, -1, x, "ln_f");

    /* output projection */
    if (adaptive) {
        if (adaptive_output(&L, &bands, x, pick_loc(s, SET_EMBEDDING, SET_VOCAB)) < 0) return NULL;
        return d->errors ? NULL : g;
    }
    int w = s->tied ? wte : weight(&L, W_LINEAR, D, s->vocab, "lm_head.weight");
    Value *lg = ir_new_value(g, VC_OUTPUT, "%logits");
    if (!lg) return NULL;
    g->logits = lg->id;
    Node *ln = node(&L, OP_LOGITS, pick_loc(s, SET_EMBEDDING, SET_VOCAB), -1, lg->id, 2, (int[]){x, w});
    if (!ln) return NULL;
    ln->trans_w = g->values[w]->order == ORD_OUT_IN;
    if (d->errors) return NULL;
    return g;
}
