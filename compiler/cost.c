/*
 * cost.c — the static cost model (docs/cost-model.md): FLOPs, compulsory
 * bytes by dtype, attention matrix sizes, GEMM shapes, parameters, the
 * buffer plan's peak and per-token figures for each inference mode, from
 * the IR after run_passes.
 *
 * Each op's cost is its op_table row's `cost` hook (the cost_* functions
 * below), so a new op brings its own rule. Counting convention: a
 * multiply-add is 2 FLOPs and only matrix products (GEMMs, q.k, p.v) count
 * as FLOPs; elementwise work is counted apart as `other_ops` with the
 * per-element counts of op_count_*; every operand is read once and every
 * result written once (a lower bound: re-reads that caches absorb or miss
 * are not modelled). The roofline prices each step at the peak where it
 * runs: attention on the tensor-core path (the emitter's attn_mma_tiles) at
 * its key/value dtype's tensor-core peak, with the whole tiles that path
 * executes (MmaTiles below) in place of the useful FLOPs.
 */
#define _POSIX_C_SOURCE 200809L
#include "shortc.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Elementwise operation counts (per element; docs/cost-model.md)        */
/* ------------------------------------------------------------------ */

enum {
    OPS_LAYERNORM = 8,   /* mean, centre, square, variance sum, scale, gamma, beta, rsqrt share */
    OPS_RMSNORM = 5,     /* square, sum, scale, gamma, rsqrt share */
    OPS_GELU = 8,        /* erf/tanh polynomial and products, either form */
    OPS_RELU = 1,        /* max */
    OPS_SOFTMAX = 5,     /* per score: scale, max, exp, sum, normalize */
};

static double act_ops(Activation a) {
    switch (a) {
    case ACT_RELU: return OPS_RELU;
    case ACT_GELU:
    case ACT_GELU_TANH: return OPS_GELU;
    case ACT_NONE: return 0;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

double op_cost_bytes_read(const OpCost *c) {
    double s = 0;
    for (int t = 0; t < DT_COUNT; t++) s += c->bytes_read[t];
    return s;
}

double op_cost_bytes_written(const OpCost *c) {
    double s = 0;
    for (int t = 0; t < DT_COUNT; t++) s += c->bytes_written[t];
    return s;
}

void op_cost_add(OpCost *a, const OpCost *b) {
    a->flops += b->flops;
    a->other_ops += b->other_ops;
    for (int t = 0; t < DT_COUNT; t++) {
        a->bytes_read[t] += b->bytes_read[t];
        a->bytes_written[t] += b->bytes_written[t];
    }
    a->attn_queries += b->attn_queries;
    a->attn_keys += b->attn_keys;
    a->attn_scores += b->attn_scores;
    a->mma_flops += b->mma_flops;
}

const char *cost_mode_name(CostMode m) {
    static const char *const names[MODE_COUNT] = {"nonoverlap", "sliding", "overlap", "token", "token_cached"};
    return (unsigned)m < MODE_COUNT ? names[m] : "?";
}

static const Value *in_value(const Graph *g, const Node *n, int k) { return g->values[n->in[k]]; }
static const Value *out_value(const Graph *g, const Node *n) { return g->values[n->out]; }

/* Bytes of `elems` elements of value v, added to the read or written side by v's dtype. */
static void count_read(OpCost *c, const Value *v, double elems) { c->bytes_read[v->dtype] += elems * dtype_size(v->dtype); }
static void count_written(OpCost *c, const Value *v, double elems) {
    c->bytes_written[v->dtype] += elems * dtype_size(v->dtype);
}

/* Every input read whole and the output written whole, at T tokens. */
static void count_all_operands(const Graph *g, const Node *n, int T, OpCost *c) {
    for (int k = 0; k < n->nin; k++) count_read(c, in_value(g, n, k), (double)ir_numel(in_value(g, n, k), T));
    count_written(c, out_value(g, n), (double)ir_numel(out_value(g, n), T));
}

/* ------------------------------------------------------------------ */
/* Per-op rules (op_table's cost hooks)                                  */
/* ------------------------------------------------------------------ */

/* Embedding: T token ids, T rows of the token table (and of a learned position table), T x D written. */
void cost_embed(const Graph *g, const Node *n, int T, OpCost *c) {
    const Value *y = out_value(g, n);
    double rows = (double)ir_numel(y, T);
    count_read(c, in_value(g, n, 0), T);
    for (int k = 1; k < n->nin; k++) count_read(c, in_value(g, n, k), rows);
    count_written(c, y, rows);
    if (n->pos != POS_NONE) c->other_ops += rows; /* the position add */
}

void cost_norm(const Graph *g, const Node *n, int T, OpCost *c) {
    if (n->norm_add) { /* the add fused in: its operands read, its sum written (not read; not at all if unused) */
        const Value *sum = in_value(g, n, 0);
        for (int k = 1; k < n->nin; k++) count_read(c, in_value(g, n, k), (double)ir_numel(in_value(g, n, k), T));
        if (!n->sum_unused) count_written(c, sum, (double)ir_numel(sum, T));
        count_written(c, out_value(g, n), (double)ir_numel(out_value(g, n), T));
        c->other_ops += (double)ir_numel(sum, T);
    } else {
        count_all_operands(g, n, T, c);
    }
    c->other_ops += (double)ir_numel(out_value(g, n), T) * (n->norm == NORM_LAYERNORM ? OPS_LAYERNORM : OPS_RMSNORM);
}

/* GEMM y[T,N] = x[T,K] w: 2 T N K FLOPs, plus the fused epilogue per output element. */
void cost_gemm(const Graph *g, const Node *n, int T, OpCost *c) {
    const Value *w = in_value(g, n, 1);
    int K = ir_dim(in_value(g, n, 0), 1);
    int N = ir_dim(w, n->trans_w ? 0 : 1);
    count_all_operands(g, n, T, c);
    c->gemm_m = T;
    c->gemm_n = N;
    c->gemm_k = K;
    c->flops += 2.0 * T * N * K;
    double epi = (n->epi.bias ? 1 : 0) + act_ops(n->epi.act) + (n->epi.residual ? 1 : 0);
    c->other_ops += epi * T * N;
}

/* Unfused bias, activation and residual add: one pass over the output. */
void cost_elementwise(const Graph *g, const Node *n, int T, OpCost *c) {
    if (n->by_norm) return; /* counted with the norm that computes it */
    count_all_operands(g, n, T, c);
    double per = n->op == OP_ACT ? act_ops(n->act) : 1;
    c->other_ops += per * (double)ir_numel(out_value(g, n), T);
}

/* KV write: the key and value thirds of qkv read, the KV state written. */
void cost_kv_write(const Graph *g, const Node *n, int T, OpCost *c) {
    const Value *qkv = in_value(g, n, 0);
    count_read(c, qkv, (double)ir_numel(qkv, T) * 2.0 / 3.0);
    count_written(c, out_value(g, n), (double)ir_numel(out_value(g, n), T));
}

/*
 * Queries, keys and computed scores per head of one attention call on T
 * tokens; false for a kind without a rule (cost_model refuses the model).
 */
static bool attn_geometry(const AttnSpec *a, int layer, int heads, int T, double *queries, double *keys, double *scores) {
    AttnPattern p;
    char err[256];
    if (!attn_pattern_build(&p, a, layer, heads > 0 ? heads : 1, T, err, sizeof err)) return false;
    *queries = T;
    *keys = T;
    *scores = attn_pattern_pairs(&p, T) / (heads > 0 ? heads : 1); /* causal: T(T+1)/2 */
    attn_pattern_free(&p);
    return true;
}

/* Attention: q.k and p.v over the computed scores (2 hd FLOPs each per score), softmax per score. */
void cost_attention(const Graph *g, const Node *n, int T, OpCost *c) {
    double q = 0, k = 0, per_head = 0;
    if (!attn_geometry(&n->attn, n->layer, n->heads, T, &q, &k, &per_head)) return;
    if (g->spec && g->spec->cache > 0) { /* Shortformer's cache (PIA or not): a call also sees its L' tokens */
        k += g->spec->cache;
        per_head += (double)T * g->spec->cache;
    }
    const Value *qkv = in_value(g, n, 0), *kv = in_value(g, n, 1);
    double H = n->heads, hd = n->head_dim;
    count_read(c, qkv, q * H * hd);         /* the query third */
    count_read(c, kv, 2.0 * k * H * hd);    /* keys and values */
    count_written(c, out_value(g, n), q * H * hd);
    c->attn_queries = q;
    c->attn_keys = k;
    c->attn_scores = per_head * H;
    c->flops += 2.0 * 2.0 * hd * c->attn_scores;
    c->other_ops += OPS_SOFTMAX * c->attn_scores;
}

/*
 * Transformer-XL relative attention, the memory full (m rows; docs/attention/relative.md):
 * two q.k products per score ((q+u).k and (q+v).W_r R) and p.v, each 2 hd FLOPs;
 * the memory's keys and values projected again each call (2 m D 2W). The
 * relative keys W_r R_d are a derived table (cost_rel_keys: a call reads its rows).
 */
void cost_rel_attention(const Graph *g, const Node *n, int T, OpCost *c) {
    double H = n->heads, hd = n->head_dim, W = H * hd, m = n->memory, D = g->spec->d_model;
    bool same = txl_param(n, "same_length") != 0;
    double keys = m + T;
    double per_head = same ? (double)T * m : (double)T * m + (double)T * (T + 1) / 2.0;
    count_read(c, in_value(g, n, 0), (double)T * 3.0 * W);
    if (m > 0) count_read(c, in_value(g, n, 5), m * D);
    count_written(c, out_value(g, n), (double)T * W);
    c->attn_queries = T;
    c->attn_keys = keys;
    c->attn_scores = per_head * H;
    c->flops += 3.0 * 2.0 * hd * c->attn_scores + 2.0 * m * D * 2.0 * W;
    c->other_ops += OPS_SOFTMAX * c->attn_scores;
}

/* Transformer-XL's relative keys: computed once per weights load (the load program, 2 rows D W FLOPs, not per
 * call); a call reads the rows of its distances, 0 .. m + T - 1 (or clamp). */
void cost_rel_keys(const Graph *g, const Node *n, int T, OpCost *c) {
    const Value *o = out_value(g, n);
    double rows = n->memory + T;
    if (rows > o->capacity) rows = o->capacity;
    count_read(c, o, rows * ir_dim(o, 1));
}

/* Memory write: the last min(T, m) rows of the layer input copied into the ring. */
void cost_mem_write(const Graph *g, const Node *n, int T, OpCost *c) {
    double rows = T < n->memory ? T : n->memory, D = g->spec->d_model;
    count_read(c, in_value(g, n, 0), rows * D);
    count_written(c, out_value(g, n), rows * D);
}

/* ------------------------------------------------------------------ */
/* The tensor-core attention path's tiles (templates/attn_mma.cuh)      */
/* ------------------------------------------------------------------ */

/* The key tiles the tensor-core path visits for one attention node: for every absolute query tile of
 * ATTN_MMA_QT queries, the first key of each tile its list loads (the emitter's lists, emit_attn.c); banded
 * and residue kinds in closed form, without lists. */
typedef struct MmaTiles {
    int kt;     /* keys per tile */
    int hdp;    /* head_dim rounded up to 16 (the MMA's k and n extent) */
    long band;  /* banded kinds: the reach (tiles in closed form, no lists); 0: lists */
    bool residue; /* residue kinds (attn_pattern_residue): query tiles of one residue, in closed form */
    int *dil;   /* residue kinds: [lists] each list's (head's) dilation */
    int *reach; /* residue kinds: [lists] each list's band taps in residue steps (ATTN_BAND_UNBOUNDED: all) */
    int globals; /* residue kinds: the leading keys every later query sees */
    int lists;  /* lists per query tile: heads when the pattern depends on the head, else 1 (shared) */
    int nqt;    /* query tiles listed (the key/value capacity in tiles) */
    int *off;   /* [lists * nqt + 1]: where each list starts in first[] */
    int *first; /* first key position of each visited tile, ascending within a list */
} MmaTiles;

/* Warps of a query tile starting at q0 that compute a key tile starting at kfirst (attn_mma.cuh skips a
 * warp whose 16 queries all precede the tile's first key). */
static int computing_warps(int q0, int kfirst) {
    int w = 0;
    for (int k = 0; k < ATTN_MMA_QT / 16; k++) w += kfirst <= q0 + 16 * k + 15;
    return w;
}

/* Appends the first key of each tile the list of head h, query tile q visits; false when out of memory. */
static bool list_tile_starts(const AttnPattern *p, int h, int q, int kt, int *buf, MmaTiles *t, int *n) {
    int q0 = q * ATTN_MMA_QT, q1 = q0 + ATTN_MMA_QT;
    if (attn_pattern_gathered(p)) { /* the gathered keys, kt at a time */
        int m = attn_pattern_gather_list(p, h, q0, q1, buf);
        if (m < 0) return false;
        for (int e = 0; e < m; e += kt) t->first[(*n)++] = buf[e];
    } else {
        int m = attn_pattern_tile_list(p, h, q0, q1, kt, buf);
        for (int e = 0; e < m; e++) t->first[(*n)++] = (buf[e] >> 1) * kt;
    }
    return true;
}

/* Each list's dilation and band taps of residue pattern p into t (arena a); false when out of memory. */
static bool residue_build(Arena *a, const AttnPattern *p, MmaTiles *t) {
    t->residue = true;
    t->dil = arena_alloc(a, sizeof *t->dil * (size_t)t->lists);
    t->reach = arena_alloc(a, sizeof *t->reach * (size_t)t->lists);
    for (int l = 0; t->dil && t->reach && l < t->lists; l++) attn_pattern_residue(p, l, &t->dil[l], &t->reach[l], &t->globals);
    return t->dil && t->reach;
}

/* The tiles of attention node n on the tensor-core path with kt keys per tile (arena a); NULL when out of
 * memory or when its pattern cannot be built (cost_model then refuses the model). */
static MmaTiles *mma_tiles_build(Arena *a, const Graph *g, const Node *n, int kt) {
    AttnPattern p;
    char err[256];
    int ntok = in_value(g, n, 1)->capacity;
    if (!attn_pattern_build(&p, &n->attn, n->layer, n->heads, ntok, err, sizeof err)) return NULL;
    MmaTiles *t = arena_alloc(a, sizeof *t);
    if (t) *t = (MmaTiles){.kt = kt, .hdp = (n->head_dim + 15) / 16 * 16, .band = attn_pattern_band(&p),
                           .lists = attn_pattern_head_dependent(&p) ? n->heads : 1,
                           .nqt = (ntok + ATTN_MMA_QT - 1) / ATTN_MMA_QT};
    int dil, reach, globals;
    if (t && attn_pattern_residue(&p, 0, &dil, &reach, &globals) && !residue_build(a, &p, t)) t = NULL;
    if (t && !t->band && !t->residue) {
        size_t most = 0; /* a list of query tile q has at most ceil((q + 1) QT / kt) tiles */
        for (int q = 0; q < t->nqt; q++) most += ((size_t)(q + 1) * ATTN_MMA_QT + kt - 1) / kt;
        t->off = arena_alloc(a, sizeof *t->off * ((size_t)t->lists * t->nqt + 1));
        t->first = arena_alloc(a, sizeof *t->first * (most * t->lists + 1));
        int *buf = malloc(sizeof *buf * ((size_t)t->nqt * ATTN_MMA_QT + 1));
        bool ok = t->off && t->first && buf;
        int count = 0;
        for (int l = 0; ok && l < t->lists; l++)
            for (int q = 0; ok && q < t->nqt; q++) {
                t->off[l * t->nqt + q] = count;
                ok = list_tile_starts(&p, l, q, kt, buf, t, &count);
            }
        if (ok) t->off[t->lists * t->nqt] = count;
        free(buf);
        if (!ok) t = NULL;
    }
    attn_pattern_free(&p);
    return t;
}

/* Warp-tiles (16 queries x kt keys) the query tile q of list l computes in a call whose keys end at end. */
static double query_tile_work(const MmaTiles *t, int l, int q, int end) {
    int q0 = q * ATTN_MMA_QT;
    double w = 0;
    if (t->band) {
        long e0 = (q0 - t->band + 1 > 0 ? q0 - t->band + 1 : 0) / t->kt, e1 = (q0 + ATTN_MMA_QT - 1) / t->kt + 1;
        for (long e = e0; e < e1 && e * t->kt < end; e++) w += computing_warps(q0, (int)(e * t->kt));
    } else if (q < t->nqt) {
        for (int e = t->off[l * t->nqt + q]; e < t->off[l * t->nqt + q + 1] && t->first[e] < end; e++)
            w += computing_warps(q0, t->first[e]);
    }
    return w;
}

/* Indices x in [lo, hi) with x <= last. */
static long upto(long lo, long hi, long last) {
    long top = hi < last + 1 ? hi : last + 1;
    return top > lo ? top - lo : 0;
}

/*
 * Warp-tiles a residue kind's query tile qt of list l computes in a call of T queries at positions
 * P..P+T-1 (templates/attn_mma.cuh RESIDUE): its rows q0 + dil*r of residue res = qt mod dil, none when
 * no row is in the call; the global tiles e*kt below min(globals, last row + 1), then the band tiles kb in
 * [b0, b1) of keys res + dil*(kb*kt + r); warp w computes a tile unless its first key follows the warp's
 * last row q0 + dil*(16w + 15) (for a band tile: kb*kt > k0q + 16w + 15). Every listed tile's first key
 * is at most the last row, below P+T, so the call's key end cuts none.
 */
static double residue_tile_work(const MmaTiles *t, int l, long qt, long P, long T) {
    long dil = t->dil[l], kt = t->kt, G = t->globals, QT = ATTN_MMA_QT;
    long res = qt % dil, k0q = qt / dil * QT, q0 = res + dil * k0q;
    long rlo = q0 >= P ? 0 : (P - q0 + dil - 1) / dil;
    if (rlo >= QT || q0 + dil * rlo >= P + T) return 0;
    long nq = (P + T - 1 - q0) / dil + 1 < QT ? (P + T - 1 - q0) / dil + 1 : QT, qmax = q0 + dil * (nq - 1);
    long ng = ((G < qmax + 1 ? G : qmax + 1) + kt - 1) / kt, kg = G > res ? (G - res + dil - 1) / dil : 0;
    long from = k0q - t->reach[l] + 1 > 0 ? k0q - t->reach[l] + 1 : 0;
    long b0 = (from > kg ? from : kg) / kt, b1 = (k0q + nq - 1) / kt + 1;
    double w = 0;
    for (long k = 0; k < QT / 16; k++)
        w += upto(0, ng, (q0 + dil * (16 * k + 15)) / kt) + upto(b0, b1, (k0q + 16 * k + 15) / kt);
    return w;
}

/* Warp-tiles of list l of a residue kind in a call of T queries at positions P..P+T-1: the query tiles
 * (residue index / ATTN_MMA_QT) * dil + residue that hold the call's queries. */
static double residue_call_work(const MmaTiles *t, int l, int P, int T) {
    long dil = t->dil[l], span = dil * ATTN_MMA_QT;
    double w = 0;
    for (long qt = P / span * dil, last = (P + (long)T - 1) / span * dil + dil - 1; qt <= last; qt++)
        w += residue_tile_work(t, l, qt, P, T);
    return w;
}

/*
 * FLOPs the tensor-core path executes for a call of T queries at positions P..P+T-1 of a node with
 * `heads` heads: every warp-tile of every query tile the call touches (a warp's 16 rows computed
 * whole, also rows outside the call), q.k and p.v over 16 x kt x hdp each, 2 FLOPs per multiply-add.
 */
static double mma_tile_flops(const MmaTiles *t, int heads, int P, int T) {
    double w = 0;
    for (int l = 0; l < t->lists; l++)
        if (t->residue) w += residue_call_work(t, l, P, T);
        else
            for (int q = P / ATTN_MMA_QT; q <= (P + T - 1) / ATTN_MMA_QT; q++) w += query_tile_work(t, l, q, P + T);
    return w * ((double)heads / t->lists) * 2.0 * 2.0 * 16.0 * t->kt * t->hdp;
}

/* ------------------------------------------------------------------ */
/* Whole forwards                                                        */
/* ------------------------------------------------------------------ */

static bool live(const Node *n) { return !n->dead; }

/* What the node loops below share: the graph and each node's tensor-core tiles. */
typedef struct CostCtx {
    const Graph *g;   /* the graph costed */
    MmaTiles **mma;   /* [g->nnodes]: the node's tiles when its attention runs on tensor cores, else NULL;
                         NULL itself: the path is not modelled (cost_forward and cost_cached_token) */
} CostCtx;

/* The tensor-core tiles of every attention node on that path; false when out of memory. */
static bool cost_ctx_init(CostCtx *x, Graph *g) {
    x->g = g;
    x->mma = arena_alloc(g->arena, sizeof *x->mma * (size_t)(g->nnodes > 0 ? g->nnodes : 1));
    if (!x->mma) return false;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        int kt, smem;
        if (live(n) && n->op == OP_ATTENTION && attn_mma_tiles(g, n, &kt, &smem) &&
            !(x->mma[i] = mma_tiles_build(g->arena, g, n, kt)))
            return false;
    }
    return true;
}

/* Whether node i runs on the tensor-core path in a call of T tokens: a one-token call runs the plan's
 * decode program (min = max = 1 tokens), where causal layers use flash-decoding instead. */
static bool on_mma_path(const CostCtx *x, int i, int T) {
    return x->mma && x->mma[i] && !(T == 1 && attn_decode_kernel(x->g, x->g->nodes[i]));
}

/* Where node i's matrix products run in a call of T tokens: GEMMs at their operands' peak, attention on
 * the tensor-core path at its key/value dtype's (the MMA element type), everything else on CUDA cores. */
static CostPeak node_peak(const CostCtx *x, int i, int T) {
    const Node *n = x->g->nodes[i];
    if (op_is_gemm(n->op)) return dtype_peak(in_value(x->g, n, 0)->dtype);
    return on_mma_path(x, i, T) ? dtype_peak(in_value(x->g, n, 1)->dtype) : PEAK_FP32;
}

/* Node i's cost in a call of T tokens at positions P..P+T-1 (its op's hook), with its tile work on the
 * tensor-core path. */
static void node_cost(const CostCtx *x, int i, int P, int T, OpCost *c) {
    const Node *n = x->g->nodes[i];
    memset(c, 0, sizeof *c);
    const OpInfo *oi = op_info(n->op);
    if (oi && oi->cost) oi->cost(x->g, n, T, c);
    if (on_mma_path(x, i, T)) c->mma_flops = mma_tile_flops(x->mma[i], n->heads, P, T);
}

static void ctx_forward(const CostCtx *x, int T, OpCost *total) {
    memset(total, 0, sizeof *total);
    for (int i = 0; i < x->g->nnodes; i++) {
        if (!live(x->g->nodes[i])) continue;
        OpCost c;
        node_cost(x, i, 0, T, &c);
        op_cost_add(total, &c);
    }
}

void cost_forward(const Graph *g, int T, OpCost *total) { ctx_forward(&(CostCtx){.g = g}, T, total); }

/* Node i's cost for a token at position C of a session with a KV cache (cost_cached_token). */
static void cached_node_cost(const CostCtx *x, int i, int C, OpCost *c) {
    const Graph *g = x->g;
    const Node *n = g->nodes[i];
    node_cost(x, i, C, 1, c);
    double q = 0, k = 0, before = 0, after = 0;
    if (n->op == OP_ATTENTION && (C == 0 || attn_geometry(&n->attn, n->layer, n->heads, C, &q, &k, &before)) &&
        attn_geometry(&n->attn, n->layer, n->heads, C + 1, &q, &k, &after)) {
        /* the query at position C against the keys its pattern lets it see among 0..C (the row's pairs) */
        double H = n->heads, hd = n->head_dim, scores = (after - before) * H, keys = after - before, mma = c->mma_flops;
        memset(c, 0, sizeof *c);
        count_read(c, in_value(g, n, 0), H * hd);
        count_read(c, in_value(g, n, 1), 2.0 * keys * H * hd);
        count_written(c, out_value(g, n), H * hd);
        c->attn_queries = 1;
        c->attn_keys = C + 1;
        c->attn_scores = scores;
        c->flops = 2.0 * 2.0 * hd * scores;
        c->other_ops = OPS_SOFTMAX * scores;
        c->mma_flops = mma;
    }
}

void cost_cached_token(const Graph *g, int C, OpCost *total) {
    const CostCtx x = {.g = g};
    memset(total, 0, sizeof *total);
    for (int i = 0; i < g->nnodes; i++) {
        if (!live(g->nodes[i])) continue;
        OpCost c;
        cached_node_cost(&x, i, C, &c);
        op_cost_add(total, &c);
    }
}

/* Bytes of one matmul's epilogue kernel: its result read and written back, the bias and residual read. */
static double epilogue_kernel_bytes(const Graph *g, const Node *n, int T) {
    const Value *y = out_value(g, n);
    double bytes = 2.0 * (double)ir_numel(y, T) * dtype_size(y->dtype);
    int k = 2;
    if (n->epi.bias) bytes += (double)ir_numel(in_value(g, n, k), T) * dtype_size(in_value(g, n, k)->dtype), k++;
    if (n->epi.residual) bytes += (double)ir_numel(in_value(g, n, k), T) * dtype_size(in_value(g, n, k)->dtype);
    return bytes;
}

void cost_kernel_traffic(const Graph *g, int T, double *moved, double *minimum) {
    const CostCtx x = {.g = g};
    *moved = *minimum = 0;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (!live(n) || !ir_node_needs_kernel(n)) continue;
        if (op_is_gemm(n->op)) {
            *moved += epilogue_kernel_bytes(g, n, T);
            continue;
        }
        OpCost c;
        node_cost(&x, i, 0, T, &c);
        double b = op_cost_bytes_read(&c) + op_cost_bytes_written(&c);
        *moved += b;
        *minimum += b;
    }
}

/* Roofline seconds of one forward on T tokens, node by node, each at the peak where it runs. */
static double forward_seconds(const CostCtx *x, int T, const DeviceSpec *dev) {
    double s = 0;
    for (int i = 0; i < x->g->nnodes; i++) {
        if (!live(x->g->nodes[i])) continue;
        OpCost c;
        node_cost(x, i, 0, T, &c);
        s += roofline_seconds_at(dev, &c, node_peak(x, i, T));
    }
    return s;
}

/* "matmul 1024x2304x768 epilogue=bias" or "norm.layernorm eps=1e-05 [1024,768]". */
static void group_label(const Graph *g, const Node *n, int T, const OpCost *c, char *buf, size_t len) {
    FILE *f = fmemopen(buf, len, "w");
    if (!f) {
        snprintf(buf, len, "%s", op_name(n->op));
        return;
    }
    fputs(op_name(n->op), f);
    const OpInfo *oi = op_info(n->op);
    if (c->gemm_m) fprintf(f, " %dx%dx%d", c->gemm_m, c->gemm_n, c->gemm_k);
    if (oi && oi->print_attrs) oi->print_attrs(f, n);
    if (!c->gemm_m) {
        const Value *y = out_value(g, n);
        fputs(" [", f);
        SymEnv env = {.T = T};
        for (int d = 0; d < y->rank; d++) fprintf(f, "%s%ld", d ? "," : "", symdim_eval(y->dims[d], &env));
        fputc(']', f);
    }
    fclose(f);
    buf[len - 1] = '\0';
}

/* Groups nodes with the same label (same op, attributes and shape: the same cost). */
static void build_groups(const CostCtx *x, ModelCost *m, int T) {
    const Graph *g = x->g;
    m->groups = arena_alloc(g->arena, sizeof *m->groups * (size_t)(g->nnodes > 0 ? g->nnodes : 1));
    for (int i = 0; m->groups && i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (!live(n)) continue;
        CostGroup cg = {.first_node = i, .uses = 1, .gemm = op_is_gemm(n->op), .dtype = in_value(g, n, 0)->dtype,
                        .peak = node_peak(x, i, T)};
        node_cost(x, i, 0, T, &cg.per_use);
        group_label(g, n, T, &cg.per_use, cg.label, sizeof cg.label);
        int j = 0;
        while (j < m->ngroups && strcmp(m->groups[j].label, cg.label) != 0) j++;
        if (j < m->ngroups) m->groups[j].uses++;
        else m->groups[m->ngroups++] = cg;
    }
}

static void count_weights(const Graph *g, ModelCost *m) {
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->cls != VC_WEIGHT || !ir_value_live(g, v)) continue;
        double e = (double)ir_numel(v, 1);
        m->params += e;
        m->weight_bytes += e * dtype_size(v->dtype);
    }
}

static void split_flops(const CostCtx *x, ModelCost *m, int T) {
    const Graph *g = x->g;
    m->attn = arena_alloc(g->arena, sizeof *m->attn * (size_t)(m->layers > 0 ? m->layers : 1));
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (!live(n)) continue;
        OpCost c;
        node_cost(x, i, 0, T, &c);
        if (n->op == OP_LOGITS) m->flops_logits += c.flops;
        else if (op_is_gemm(n->op)) m->flops_gemm += c.flops;
        else if (n->op == OP_ATTENTION || n->op == OP_REL_ATTENTION) { /* relative: with its memory and R projections */
            m->flops_attention += c.flops;
            if (m->attn && n->layer >= 0 && n->layer < m->layers)
                m->attn[n->layer] = (LayerAttn){.kind = attn_kind_name(n->attn.kind), .heads = n->heads,
                                                .queries = c.attn_queries, .keys = c.attn_keys,
                                                .density = c.attn_scores / (n->heads * c.attn_queries * c.attn_keys),
                                                .scores = c.attn_scores, .peak = node_peak(x, i, T),
                                                .mma_flops = c.mma_flops, .decode_peak = node_peak(x, i, 1)};
        }
    }
}

/* Per-token figures of a mode whose forwards all have W tokens and score `scored` of them. */
static ModeCost windowed_mode(const ModelCost *m, CostMode mode, int param, double scored) {
    ModeCost mc = {.mode = mode, .param = param};
    mc.flops = m->forward.flops / scored;
    mc.other_ops = m->forward.other_ops / scored;
    mc.bytes = (op_cost_bytes_read(&m->forward) + op_cost_bytes_written(&m->forward)) / scored;
    mc.attn_scores = m->forward.attn_scores / scored;
    mc.seconds = m->forward_seconds / scored;
    return mc;
}

/* Token by token without a cache: token i (1..W) re-runs a forward on i tokens; the mean over the segment. */
static ModeCost token_mode(const CostCtx *x, int W, const DeviceSpec *dev) {
    ModeCost mc = {.mode = MODE_TOKEN};
    for (int i = 1; i <= W; i++) {
        OpCost c;
        ctx_forward(x, i, &c);
        mc.flops += c.flops / W;
        mc.other_ops += c.other_ops / W;
        mc.bytes += (op_cost_bytes_read(&c) + op_cost_bytes_written(&c)) / W;
        mc.attn_scores += c.attn_scores / W;
        if (dev) mc.seconds += forward_seconds(x, i, dev) / W;
    }
    return mc;
}

/* Token by token through the session's state: token i (0..W-1) of a W-token generation is one call of one
 * token; a KV cache holds all i earlier tokens, Shortformer's cache at most its L' (so the context is
 * min(i, L')), a Transformer-XL layer its memory (in the node's T = 1 cost). The mean over the segment. A
 * recurrent model has no such mode (its windows restart at position 0): every figure is NAN. */
static ModeCost cached_token_mode(const CostCtx *x, int W, const DeviceSpec *dev) {
    const Graph *g = x->g;
    ModeCost mc = {.mode = MODE_CACHED_TOKEN};
    if (ir_recurrent(g)) {
        mc.flops = mc.other_ops = mc.bytes = mc.attn_scores = mc.seconds = NAN;
        return mc;
    }
    int L = g->spec->segment, Lc = g->spec->cache;
    bool cached = g->spec->infused != PIA_NONE || Lc > 0;
    for (int i = 0; i < W; i++) { /* a cache: the window grows through each segment after min(L', earlier) */
        int C = cached ? (i / L * L < Lc ? i / L * L : Lc) + i % L : i;
        for (int j = 0; j < g->nnodes; j++) {
            const Node *n = g->nodes[j];
            if (!live(n)) continue;
            OpCost c;
            cached_node_cost(x, j, C, &c);
            mc.flops += c.flops / W;
            mc.other_ops += c.other_ops / W;
            mc.bytes += (op_cost_bytes_read(&c) + op_cost_bytes_written(&c)) / W;
            mc.attn_scores += c.attn_scores / W;
            if (dev) mc.seconds += roofline_seconds_at(dev, &c, node_peak(x, j, 1)) / W;
        }
    }
    return mc;
}

/* Checks the options against the model; fills defaults. */
static bool resolve_options(const Graph *g, const CostOptions *o, int *W, int *S, int *K, char *why, size_t whylen) {
    int L = g->spec->segment;
    *W = o->window ? o->window : L;
    if (*W < 1 || *W > L) {
        snprintf(why, whylen, "window %d is outside 1..%d (the segment of model %s)", *W, L, g->spec->name);
        return false;
    }
    *S = o->stride ? o->stride : (*W / 2 > 0 ? *W / 2 : 1);
    if (*S < 1 || *S > *W) {
        snprintf(why, whylen, "stride %d is outside 1..%d (the window)", *S, *W);
        return false;
    }
    *K = o->overlap_given ? o->overlap : *W / 4;
    if (*K < 0 || *K >= *W) {
        snprintf(why, whylen, "overlap %d is outside 0..%d (below the window)", *K, *W - 1);
        return false;
    }
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        double q, k, s;
        if (live(n) && n->op == OP_ATTENTION && !attn_geometry(&n->attn, n->layer, n->heads, 1, &q, &k, &s)) {
            snprintf(why, whylen, "attention kind '%s' has no cost rule", attn_kind_name(n->attn.kind));
            return false;
        }
    }
    return true;
}

ModelCost *cost_model(Graph *g, const CostOptions *o, char *why, size_t whylen) {
    int W, S, K;
    if (!resolve_options(g, o, &W, &S, &K, why, whylen)) return NULL;
    ModelCost *m = arena_alloc(g->arena, sizeof *m);
    CostCtx x;
    if (!m || !cost_ctx_init(&x, g)) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    m->name = g->spec->name;
    m->segment = g->spec->segment;
    m->window = W;
    m->layers = g->spec->n_layers;
    ctx_forward(&x, W, &m->forward);
    split_flops(&x, m, W);
    build_groups(&x, m, W);
    count_weights(g, m);
    m->peak_activation_bytes = (double)g->arena_bytes;
    m->naive_activation_bytes = (double)g->naive_bytes;
    m->state_bytes = (double)ir_state_bytes(g); /* every state value at its capacity */
    m->derived_bytes = (double)ir_derived_bytes(g); /* once per model: Shortformer's and Transformer-XL's tables */
    if (o->device) {
        m->device = o->device->name;
        m->forward_seconds = forward_seconds(&x, W, o->device);
    }
    m->modes[MODE_NONOVERLAP] = windowed_mode(m, MODE_NONOVERLAP, 0, W);
    m->modes[MODE_SLIDING] = windowed_mode(m, MODE_SLIDING, S, S);
    m->modes[MODE_OVERLAP] = windowed_mode(m, MODE_OVERLAP, K, W - K);
    m->modes[MODE_TOKEN] = token_mode(&x, W, o->device);
    m->modes[MODE_CACHED_TOKEN] = cached_token_mode(&x, W, o->device);
    if (!m->attn || !m->groups) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    return m;
}

/*
 * Position-infused table (docs/attention/pia.md): a derived tensor the load
 * program computes once per weights load (D x 2·H·hd multiply-adds per slot,
 * not per call); a call reads the rows of its cache + T slots (the attention
 * adds them to its queries and keys), counted here.
 */
void cost_pia_pos(const Graph *g, const Node *n, int T, OpCost *c) {
    const Value *o = out_value(g, n);
    double rows = g->spec ? (double)g->spec->cache + T : T;
    if (rows > o->capacity) rows = o->capacity;
    count_read(c, o, rows * ir_dim(o, 1));
}
