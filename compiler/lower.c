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

#include <string.h>

typedef struct Lower {
    Graph *g;
    Diag *d;
    const ModelSpec *s;
    int nact;        /* activations named so far (%1, %2, ...) */
    DimOrder worder; /* storage order of matrix weights */
    int hd;          /* head_dim */
} Lower;

/* Weight roles: how the stored shape and the file shape follow from the role. */
typedef enum WRole {
    W_VECTOR,  /* [n]: biases, norm gains */
    W_TABLE,   /* wte [V, D]: always stored as in the file, [out,in] w.r.t. the logits */
    W_POS,     /* wpe [P, D]: rows are positions */
    W_CONV1D,  /* HF Conv1D: file [in, out]; stored in the weights order */
    W_LINEAR,  /* nn.Linear (lm_head): file [out, in]; stored in the weights order */
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
        v->dims[0] = in;
        v->order = L->worder;
        break;
    case W_TABLE: /* in = rows (vocab), out = D */
        v->rank = 2;
        v->dims[0] = in;
        v->dims[1] = out;
        v->order = ORD_OUT_IN;
        break;
    case W_POS:
        v->rank = 2;
        v->dims[0] = in;
        v->dims[1] = out;
        v->order = ORD_TOKENS_CHANNELS;
        break;
    case W_CONV1D:
    case W_LINEAR:
        v->rank = 2;
        v->order = L->worder;
        if (L->worder == ORD_IN_OUT) { v->dims[0] = in; v->dims[1] = out; }
        else { v->dims[0] = out; v->dims[1] = in; }
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

/* attention block up to and including the output projection (+ bias); returns the branch value. */
static int attention(Lower *L, int layer, int x) {
    const ModelSpec *s = L->s;
    const AttnSpec *at = &s->layers[layer].attn;
    Loc src = at->loc.file >= 0 ? at->loc : pick_loc(s, SET_ATTENTION, SET_LAYERS);
    int H = s->n_heads, hd = L->hd, D = s->d_model;
    int wqkv = weight(L, W_CONV1D, D, 3 * H * hd, "h.%d.attn.c_attn.weight", layer);
    int bqkv = weight(L, W_VECTOR, 3 * H * hd, 0, "h.%d.attn.c_attn.bias", layer);
    int qkv = matmul(L, src, layer, x, wqkv, bqkv);
    char kvname[32];
    snprintf(kvname, sizeof kvname, "%%kv.%d", layer);
    Value *kvv = ir_new_value(L->g, VC_KV, kvname);
    if (!kvv) return -1;
    kvv->role = STATE_KV_CACHE;
    kvv->capacity = ir_position_limit(s);
    Node *kw = node(L, OP_KV_WRITE, src, layer, kvv->id, 1, (int[]){qkv});
    int y = act_value(L, VC_ACTIVATION);
    Node *an = node(L, OP_ATTENTION, src, layer, y, 2, (int[]){qkv, kvv->id});
    if (!kw || !an) return -1;
    kw->attn = an->attn = *at;
    kw->heads = an->heads = H;
    kw->head_dim = an->head_dim = hd;
    an->keys = SYMDIM_KEYS;
    int wo = weight(L, W_CONV1D, H * hd, D, "h.%d.attn.c_proj.weight", layer);
    int bo = weight(L, W_VECTOR, D, 0, "h.%d.attn.c_proj.bias", layer);
    return matmul(L, src, layer, y, wo, bo);
}

/* MLP block: c_fc (+bias) -> act -> c_proj (+bias); returns the branch value. */
static int mlp(Lower *L, int layer, int x) {
    const ModelSpec *s = L->s;
    Loc src = pick_loc(s, SET_FFN, SET_LAYERS);
    int D = s->d_model, F = s->d_ff;
    int w1 = weight(L, W_CONV1D, D, F, "h.%d.mlp.c_fc.weight", layer);
    int b1 = weight(L, W_VECTOR, F, 0, "h.%d.mlp.c_fc.bias", layer);
    int h = matmul(L, src, layer, x, w1, b1);
    if (s->act != ACT_NONE) {
        int a = act_value(L, VC_ACTIVATION);
        Node *n = node(L, OP_ACT, src, layer, a, 1, (int[]){h});
        if (n) n->act = s->act;
        h = a;
    }
    int w2 = weight(L, W_CONV1D, F, D, "h.%d.mlp.c_proj.weight", layer);
    int b2 = weight(L, W_VECTOR, D, 0, "h.%d.mlp.c_proj.bias", layer);
    return matmul(L, src, layer, h, w2, b2);
}

Graph *lower_model(Arena *a, Diag *d, const ModelSpec *s) {
    if (!s) return NULL;
    if (s->naming != NAMING_HF_GPT2) {
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
    Lower L = {.g = g, .d = d, .s = s, .worder = wo, .hd = s->head_dim > 0 ? s->head_dim : s->d_model / s->n_heads};
    int D = s->d_model;

    /* embedding */
    Value *tok = ir_new_value(g, VC_INPUT, "%tokens");
    if (!tok) return NULL;
    tok->rank = 1;
    tok->dims[0] = DIM_T;
    g->tokens = tok->id;
    Value *pos = ir_new_value(g, VC_INPUT, "%P");
    if (!pos) return NULL;
    pos->rank = 1;
    pos->dims[0] = 1;
    g->position = pos->id;
    int wte = weight(&L, W_TABLE, s->vocab, D, "wte.weight");
    int wpe = s->pos == POS_LEARNED ? weight(&L, W_POS, s->max_pos > 0 ? s->max_pos : s->segment, D, "wpe.weight") : -1;
    int x = act_value(&L, VC_ACTIVATION);
    Node *e = node(&L, OP_EMBED, pick_loc(s, s->pos != POS_NONE ? SET_POSITIONS : SET_EMBEDDING, SET_EMBEDDING), -1, x,
                   wpe >= 0 ? 3 : 2, (int[]){tok->id, wte, wpe});
    if (!e) return NULL;
    e->pos = s->pos;

    /* layers */
    Loc nloc = pick_loc(s, SET_NORM, SET_LAYERS);
    char prefix[64];
    for (int i = 0; i < s->n_layers; i++) {
        if (s->norm_place == NORM_PRE) {
            snprintf(prefix, sizeof prefix, "h.%d.ln_1", i);
            int n1 = norm(&L, nloc, i, x, prefix);
            int at = attention(&L, i, n1);
            int h = add(&L, g->nodes[g->nnodes - 1]->src, i, at, x);
            snprintf(prefix, sizeof prefix, "h.%d.ln_2", i);
            int n2 = norm(&L, nloc, i, h, prefix);
            int m = mlp(&L, i, n2);
            x = add(&L, pick_loc(s, SET_FFN, SET_LAYERS), i, m, h);
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
    if (s->norm_place == NORM_PRE) x = norm(&L, nloc, -1, x, "ln_f");

    /* output projection */
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
