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
    OPS_SILU = 4,        /* negate, exp, add, divide */
    OPS_SOFTMAX = 5,     /* per score: scale, max, exp, sum, normalize */
    OPS_ROPE = 3,        /* per rotated channel: two products and a sum (cos/sin per pair: 2 more, shared by a pair) */
    OPS_ALIBI = 2,       /* per score: slope times distance, subtract */
};

/* Rotary ops for rows x heads rotated head rows of node n (0 without rope). */
static double rope_ops(const Node *n, double rows, double heads) {
    return n->rope ? rows * heads * (OPS_ROPE * n->rope->dims + 2.0 * (n->rope->dims / 2)) : 0;
}

static double act_ops(Activation a) {
    switch (a) {
    case ACT_RELU: return OPS_RELU;
    case ACT_GELU:
    case ACT_GELU_TANH: return OPS_GELU;
    case ACT_SILU: return OPS_SILU;
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
    double epi = (n->epi.bias ? 1 : 0) + act_ops(n->epi.act) + (n->epi.residual ? 1 : 0) +
                 (n->epi.gate != ACT_NONE ? 1 + act_ops(n->epi.gate) : 0); /* the gate's activation and product */
    c->other_ops += epi * T * N;
}

/* Unfused bias, activation and residual add: one pass over the output. */
void cost_elementwise(const Graph *g, const Node *n, int T, OpCost *c) {
    if (n->by_norm) return; /* counted with the norm that computes it */
    count_all_operands(g, n, T, c);
    double per = n->op == OP_ACT ? act_ops(n->act) : n->op == OP_GATE ? 1 + act_ops(n->act) : 1;
    c->other_ops += per * (double)ir_numel(out_value(g, n), T);
}

/* KV write: the key and value parts of qkv read (2G of its H + 2G heads), the KV state written; rope rotates
 * the keys on the way and the queries in place in qkv (templates/kv_write.cuh: their H heads read and written). */
void cost_kv_write(const Graph *g, const Node *n, int T, OpCost *c) {
    const Value *qkv = in_value(g, n, 0);
    double H = n->heads, G = node_kv_heads(n), q = n->rope ? H : 0;
    count_read(c, qkv, (double)ir_numel(qkv, T) * (2.0 * G + q) / (H + 2.0 * G));
    count_written(c, out_value(g, n), (double)ir_numel(out_value(g, n), T));
    if (n->rope) count_written(c, qkv, (double)ir_numel(qkv, T) * q / (H + 2.0 * G));
    c->other_ops += rope_ops(n, T, G + q);
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

/* Attention on T queries and keys with per_head computed scores per head: q.k and p.v over them (2 hd FLOPs
 * each per score), softmax per score. */
static void attention_cost(const Graph *g, const Node *n, int T, double per_head, OpCost *c) {
    double q = T, k = T;
    if (g->spec && g->spec->cache > 0) { /* Shortformer's cache (PIA or not): a call also sees its L' tokens */
        k += g->spec->cache;
        per_head += (double)T * g->spec->cache;
    }
    const Value *qkv = in_value(g, n, 0), *kv = in_value(g, n, 1);
    double H = n->heads, G = node_kv_heads(n), hd = n->head_dim;
    count_read(c, qkv, q * H * hd);         /* the query part */
    count_read(c, kv, 2.0 * k * G * hd);    /* keys and values: G heads, each shared by its group's H/G queries */
    count_written(c, out_value(g, n), q * H * hd);
    c->attn_queries = q;
    c->attn_keys = k;
    c->attn_scores = per_head * H;
    c->flops += 2.0 * 2.0 * hd * c->attn_scores;
    c->other_ops += (OPS_SOFTMAX + (n->alibi ? OPS_ALIBI : 0)) * c->attn_scores; /* queries rotated by kv_write */
}

void cost_attention(const Graph *g, const Node *n, int T, OpCost *c) {
    double q = 0, k = 0, per_head = 0;
    if (attn_geometry(&n->attn, n->layer, n->heads, T, &q, &k, &per_head)) attention_cost(g, n, T, per_head, c);
}

/*
 * Transformer-XL relative attention, the memory full (m rows; docs/attention/relative.md):
 * two q.k products per score ((q+u).k and (q+v).W_r R) and p.v, each 2 hd FLOPs;
 * the memory's keys and values projected again each call (2 m D 2W). The
 * relative keys W_r R_d are a derived table (cost_rel_keys: a call reads its rows).
 */
void cost_rel_attention(const Graph *g, const Node *n, int T, OpCost *c) {
    double H = n->heads, hd = n->head_dim, W = H * hd, m = n->memory, D = g->spec->d_model;
    bool same = n->attn.prm.same_length != 0;
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
    int products; /* matrix products per warp-tile: Q K^T and P V; position-infused attention adds Q Kp^T */
    long band;  /* banded kinds: the reach (tiles in closed form, no lists); 0: lists */
    bool residue; /* residue kinds (attn_pattern_residue): query tiles of one residue, in closed form */
    int *dil;   /* residue kinds: [lists] each list's (head's) dilation */
    int *reach; /* residue kinds: [lists] each list's band taps in residue steps (ATTN_BAND_UNBOUNDED: all) */
    int globals; /* residue kinds: the leading keys every later query sees */
    AttnResidueChoice choice; /* residue kinds: the T ranges whose calls run the plain tile loop (the kernel's choice) */
    int lists;  /* lists per query tile: heads when the pattern depends on the head, else 1 (shared) */
    int nqt;    /* query tiles listed (the key/value capacity in tiles) */
    int *off;   /* [lists * nqt + 1]: where each list starts in first[] */
    int *first; /* first key position of each visited tile, ascending within a list */
    double *before; /* non-residue kinds: [lists * (nqt + 1)]: tiles the query tiles below q of list l visit, at
                       l * (nqt + 1) + q; NULL when a list holds a key past its query tile's last query */
} MmaTiles;

/* Warps of a query tile that compute each key tile it visits: all of them (attn_mma.cuh skips none: a
 * warp-uniform skip of the tiles in a warp's future costs registers the main loop needs). */
enum { MMA_TILE_WARPS = ATTN_MMA_QT / ATTN_MMA_WARP_ROWS };

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
    return t->dil && t->reach && attn_residue_choice(p, t->kt, t->nqt * ATTN_MMA_QT, &t->choice);
}

/* Key tiles query tile q of list l visits, all of them (no call end cuts them). */
static long query_tile_count(const MmaTiles *t, int l, int q) {
    if (t->band) {
        long q0 = (long)q * ATTN_MMA_QT, e0 = (q0 - t->band + 1 > 0 ? q0 - t->band + 1 : 0) / t->kt;
        return (q0 + ATTN_MMA_QT - 1) / t->kt + 1 - e0;
    }
    return t->off[l * t->nqt + q + 1] - t->off[l * t->nqt + q];
}

/* t->before: each list's prefix of query_tile_count (arena a), so a forward's full query tiles cost O(1); left
 * NULL when a listed tile starts past its query tile's last query (a call's end could cut it). False when
 * out of memory. */
static bool before_build(Arena *a, MmaTiles *t) {
    for (int l = 0; !t->band && l < t->lists; l++)
        for (int q = 0; q < t->nqt; q++) {
            int last = t->off[l * t->nqt + q + 1] - 1;
            if (last >= t->off[l * t->nqt + q] && t->first[last] >= (q + 1) * ATTN_MMA_QT) return true;
        }
    t->before = arena_alloc(a, sizeof *t->before * (size_t)t->lists * (t->nqt + 1));
    for (int l = 0; t->before && l < t->lists; l++) {
        double *b = t->before + (size_t)l * (t->nqt + 1);
        b[0] = 0;
        for (int q = 0; q < t->nqt; q++) b[q + 1] = b[q] + (double)query_tile_count(t, l, q);
    }
    return t->before != NULL;
}

/* The tiles of attention node n on the tensor-core path with kt keys per tile (arena a); NULL when out of
 * memory or when its pattern cannot be built (cost_model then refuses the model). */
static MmaTiles *mma_tiles_build(Arena *a, const Graph *g, const Node *n, int kt) {
    AttnPattern p;
    char err[256];
    int ntok = in_value(g, n, 1)->capacity;
    if (!attn_pattern_build(&p, &n->attn, n->layer, n->heads, ntok, err, sizeof err)) return NULL;
    MmaTiles *t = arena_alloc(a, sizeof *t);
    if (t) *t = (MmaTiles){.kt = kt, .hdp = (n->head_dim + 15) / 16 * 16, .products = n->infused ? 3 : 2,
                           .band = attn_pattern_band(&p),
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
    if (t && !t->residue && !before_build(a, t)) t = NULL;
    attn_pattern_free(&p);
    return t;
}

/* Warp-tiles (ATTN_MMA_WARP_ROWS queries x kt keys) the query tile q of list l computes in a call whose keys end at end. */
static double query_tile_work(const MmaTiles *t, int l, int q, int end) {
    int q0 = q * ATTN_MMA_QT;
    double w = 0;
    if (t->band) {
        long e0 = (q0 - t->band + 1 > 0 ? q0 - t->band + 1 : 0) / t->kt, e1 = (q0 + ATTN_MMA_QT - 1) / t->kt + 1;
        long ends = ((long)end + t->kt - 1) / t->kt; /* tiles e with e kt < end */
        w = (double)MMA_TILE_WARPS * ((e1 < ends ? e1 : ends) > e0 ? (e1 < ends ? e1 : ends) - e0 : 0);
    } else if (q < t->nqt) {
        for (int e = t->off[l * t->nqt + q]; e < t->off[l * t->nqt + q + 1] && t->first[e] < end; e++)
            w += MMA_TILE_WARPS;
    }
    return w;
}

/*
 * Warp-tiles a residue kind's query tile qt computes in a call of T queries at positions P..P+T-1
 * (templates/attn_mma.cuh RESIDUE), tiled with dilation dil and band taps reach (in steps of dil), G leading
 * global keys, kt keys per tile: its rows q0 + dil*r of residue res = qt mod dil, none when no row is in the
 * call; the global tiles e*kt below min(G, last row + 1), then the band tiles kb in [b0, b1) of keys
 * res + dil*(kb*kt + r), each computed by every warp. Every listed tile's first key is at most the last row,
 * below P+T, so the call's key end cuts none. The plain tile loop is the same with dil 1 and the band's
 * reach in positions (residue_plain_reach).
 */
static double residue_tile_work(long dil, long reach, long G, long kt, long qt, long P, long T) {
    long QT = ATTN_MMA_QT;
    long res = qt % dil, k0q = qt / dil * QT, q0 = res + dil * k0q;
    long rlo = q0 >= P ? 0 : (P - q0 + dil - 1) / dil;
    if (rlo >= QT || q0 + dil * rlo >= P + T) return 0;
    long nq = (P + T - 1 - q0) / dil + 1 < QT ? (P + T - 1 - q0) / dil + 1 : QT, qmax = q0 + dil * (nq - 1);
    long ng = ((G < qmax + 1 ? G : qmax + 1) + kt - 1) / kt, kg = G > res ? (G - res + dil - 1) / dil : 0;
    long from = k0q - reach + 1 > 0 ? k0q - reach + 1 : 0;
    long b0 = (from > kg ? from : kg) / kt, b1 = (k0q + nq - 1) / kt + 1;
    return (double)MMA_TILE_WARPS * (ng + (b1 > b0 ? b1 - b0 : 0));
}

/* The band of reach taps spaced dil apart in positions: the plain tile loop's reach (unbounded stays so). */
static long residue_plain_reach(long dil, long reach) {
    return reach >= ATTN_BAND_UNBOUNDED ? reach : (reach - 1) * dil + 1;
}

/* Warp-tiles of one head (dilation dil, reach taps, G globals, kt keys per tile) of a residue kind in a call of
 * T queries at positions P..P+T-1: with residue grouping the query tiles (residue index / ATTN_MMA_QT) * dil +
 * residue that hold the call's queries; plain: the absolute query tiles P/QT..(P+T-1)/QT. */
static double residue_head_work(long dil, long reach, long G, long kt, bool plain, long P, long T) {
    if (plain) {
        reach = residue_plain_reach(dil, reach);
        dil = 1;
    }
    long span = dil * ATTN_MMA_QT;
    double w = 0;
    for (long qt = P / span * dil, last = (P + T - 1) / span * dil + dil - 1; qt <= last; qt++)
        w += residue_tile_work(dil, reach, G, kt, qt, P, T);
    return w;
}

/* Warp-tiles of list l of a residue kind in a call of T queries at positions P..P+T-1, in the variant the
 * kernel runs for that call (t->choice). */
static double residue_call_work(const MmaTiles *t, int l, int P, int T) {
    return residue_head_work(t->dil[l], t->reach[l], t->globals, t->kt, attn_residue_plain(&t->choice, T), P, T);
}

/* Warp-tiles of every head of residue pattern p in a call of T queries at P, kt keys per tile. */
static double residue_pattern_work(const AttnPattern *p, int kt, bool plain, long P, long T) {
    double w = 0;
    for (int h = 0; h < p->heads; h++) {
        int dil, reach, globals;
        attn_pattern_residue(p, h, &dil, &reach, &globals);
        w += residue_head_work(dil, reach, globals, kt, plain, P, T);
    }
    return w;
}

double attn_residue_call_tiles(const AttnPattern *p, int kt, bool plain, int P, int T) {
    int dil, reach, globals;
    if (kt <= 0 || T <= 0 || P < 0 || !attn_pattern_residue(p, 0, &dil, &reach, &globals)) return 0;
    return residue_pattern_work(p, kt, plain, P, T) / MMA_TILE_WARPS;
}

bool attn_residue_plain(const AttnResidueChoice *c, int T) {
    for (int i = 0; i < c->n; i++)
        if (T >= c->lo[i] && T <= c->hi[i]) return true;
    return false;
}

bool attn_residue_choice(const AttnPattern *p, int kt, int ntok, AttnResidueChoice *c) {
    memset(c, 0, sizeof *c);
    int dil, reach, globals;
    if (!attn_pattern_residue(p, 0, &dil, &reach, &globals)) return true;
    if (kt <= 0) return false;
    c->scan = ntok < ATTN_RESIDUE_SCAN ? ntok : ATTN_RESIDUE_SCAN;
    for (int T = 1; T <= c->scan; T++) {
        bool plain = residue_pattern_work(p, kt, true, 0, T) < residue_pattern_work(p, kt, false, 0, T);
        if (!plain) continue;
        if (c->n && c->hi[c->n - 1] == T - 1) c->hi[c->n - 1] = T;
        else if (c->n == ATTN_RESIDUE_RANGES) break; /* the hook's runs are full: longer calls group residues */
        else {
            c->lo[c->n] = c->hi[c->n] = T;
            c->n++;
        }
    }
    return true;
}

/*
 * FLOPs the tensor-core path executes for a call of T queries at positions P..P+T-1 of a node with
 * `heads` heads: every warp-tile of every query tile the call touches (a warp's ATTN_MMA_WARP_ROWS rows
 * computed whole, also rows outside the call), q.k and p.v over rows x kt x hdp each, 2 FLOPs per
 * multiply-add.
 */
static double mma_tile_flops(const MmaTiles *t, int heads, int P, int T) {
    double w = 0;
    int last = (P + T - 1) / ATTN_MMA_QT;
    for (int l = 0; l < t->lists; l++)
        if (t->residue) w += residue_call_work(t, l, P, T);
        else if (P == 0 && t->before) /* a forward: the full query tiles' prefix, then the last one cut at T */
            w += MMA_TILE_WARPS * t->before[(size_t)l * (t->nqt + 1) + last] + query_tile_work(t, l, last, T);
        else
            for (int q = P / ATTN_MMA_QT; q <= last; q++) w += query_tile_work(t, l, q, P + T);
    return w * ((double)heads / t->lists) * t->products * 2.0 * ATTN_MMA_WARP_ROWS * t->kt * t->hdp;
}

/* The last T' >= T whose forward (P = 0) runs the same tiles as one of T: the count steps where the last
 * query tile changes or where T passes a key tile's first key; a residue kind's, or one without the
 * prefix, is T itself. */
static long mma_same_until(const MmaTiles *t, long T) {
    if (t->residue || !t->before) return T;
    long q = (T - 1) / ATTN_MMA_QT, until = (q + 1) * ATTN_MMA_QT;
    if (t->band) {
        long step = (T + t->kt - 1) / t->kt * t->kt; /* the key tiles below T end here */
        return step < until ? step : until;
    }
    for (int l = 0; l < t->lists && q < t->nqt; l++) /* the first tile not yet counted */
        for (int e = t->off[l * t->nqt + q]; e < t->off[l * t->nqt + q + 1]; e++)
            if (t->first[e] >= T) {
                if (t->first[e] < until) until = t->first[e];
                break;
            }
    return until;
}

/* ------------------------------------------------------------------ */
/* Whole forwards                                                        */
/* ------------------------------------------------------------------ */

static bool live(const Node *n) { return !n->dead; }

/* What the node loops below share: the graph, each node's tensor-core tiles and its pair counts. */
typedef struct CostCtx {
    const Graph *g;   /* the graph costed */
    MmaTiles **mma;   /* [g->nnodes]: the node's tiles when its attention runs on tensor cores, else NULL;
                         NULL itself: the path is not modelled (cost_forward and cost_cached_token) */
    double **pairs;   /* [g->nnodes]: an attention node's visible pairs (all heads) among its first t queries,
                         t = 0..W, when its kind has no closed form; NULL (either level): the op's hook */
    const DeviceSpec *dev; /* roofline device of the modes' seconds; NULL: none */
} CostCtx;

/* pairs[t] of attention node n's pattern for t = 0..W (arena a), row by row: O(heads W) once instead of per
 * call; NULL when out of memory or the pattern cannot be built. */
static double *pair_prefix(Arena *a, const Node *n, int W) {
    AttnPattern p;
    char err[256];
    if (!attn_pattern_build(&p, &n->attn, n->layer, n->heads > 0 ? n->heads : 1, W, err, sizeof err)) return NULL;
    double *v = arena_alloc(a, sizeof *v * ((size_t)W + 1));
    for (int t = 0; v && t < W; t++) {
        double row = 0;
        for (int h = 0; h < p.heads; h++) row += (double)attn_pattern_row_count(&p, h, t, 0, t + 1);
        v[t + 1] = (t ? v[t] : 0) + row;
    }
    if (v) v[0] = 0;
    attn_pattern_free(&p);
    return v;
}

/* The tensor-core tiles of every attention node on that path and, when W > 0, the pair counts of the kinds
 * without a closed form (attn_pattern_band 0); false when out of memory. */
static bool cost_ctx_init(CostCtx *x, Graph *g, int W, const DeviceSpec *dev) {
    size_t nn = (size_t)(g->nnodes > 0 ? g->nnodes : 1);
    *x = (CostCtx){.g = g, .dev = dev, .mma = arena_alloc(g->arena, sizeof *x->mma * nn)};
    if (W > 0) x->pairs = arena_alloc(g->arena, sizeof *x->pairs * nn);
    if (!x->mma || (W > 0 && !x->pairs)) return false;
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        int kt, smem;
        if (!live(n) || n->op != OP_ATTENTION) continue;
        if (attn_mma_tiles(g, n, &kt, &smem) && !(x->mma[i] = mma_tiles_build(g->arena, g, n, kt))) return false;
        AttnPattern p;
        char err[256];
        if (W > 0 && attn_pattern_build(&p, &n->attn, n->layer, n->heads > 0 ? n->heads : 1, 1, err, sizeof err)) {
            bool banded = attn_pattern_band(&p) != 0;
            attn_pattern_free(&p);
            if (!banded && !(x->pairs[i] = pair_prefix(g->arena, n, W))) return false;
        }
    }
    return true;
}

/* Whether node i runs on the tensor-core path in a call of T tokens: a one-token call runs the plan's
 * decode program (min = max = 1 tokens), where causal layers use flash-decoding instead. */
static bool on_mma_path(const CostCtx *x, int i, int T) {
    return x->mma && x->mma[i] && !(T == 1 && attn_decode_kernel(x->g, x->g->nodes[i]));
}

/* Where node i's matrix products run in a call of T tokens: GEMMs at their operands' peak (fp32 ones under
 * `math tf32` at the TF32 peak, as the emitter's f32_fast_tf32), attention on the tensor-core path at its
 * key/value dtype's (the MMA element type; fp32: TF32), everything else on CUDA cores. */
/* Whether node i is Transformer-XL's relative attention on the tensor-core path (attn_mma.cuh REL, fp16/bf16:
 * the emitter's attn_mma_tiles): priced at that peak with its useful FLOPs (no tile model of REL yet), the
 * memory's key/value projection (a cuBLAS GEMM of the same dtype) with them. */
static bool rel_on_tensor_cores(const CostCtx *x, int i) {
    const Node *n = x->g->nodes[i];
    int kt, smem;
    return n->op == OP_REL_ATTENTION && attn_mma_tiles(x->g, n, &kt, &smem);
}

static CostPeak node_peak(const CostCtx *x, int i, int T) {
    const Node *n = x->g->nodes[i];
    bool tf32 = x->g->spec && x->g->spec->tf32;
    if (rel_on_tensor_cores(x, i)) return dtype_peak(in_value(x->g, n, 0)->dtype);
    if (op_is_gemm(n->op)) {
        DType a = in_value(x->g, n, 0)->dtype;
        bool fp32 = a == DT_F32 && (n->nin < 2 || in_value(x->g, n, 1)->dtype == DT_F32);
        return tf32 && fp32 ? PEAK_TF32 : dtype_peak(a);
    }
    if (!on_mma_path(x, i, T)) return PEAK_FP32;
    DType kv = in_value(x->g, n, 1)->dtype;
    return kv == DT_F32 ? PEAK_TF32 : dtype_peak(kv); /* fp32 on the tensor-core path: `math tf32` */
}

/* Node i's cost in a call of T tokens at positions P..P+T-1 (its op's hook), with its tile work on the
 * tensor-core path. */
static void node_cost(const CostCtx *x, int i, int P, int T, OpCost *c) {
    const Node *n = x->g->nodes[i];
    memset(c, 0, sizeof *c);
    const OpInfo *oi = op_info(n->op);
    if (x->pairs && x->pairs[i]) attention_cost(x->g, n, T, x->pairs[i][T] / (n->heads > 0 ? n->heads : 1), c);
    else if (oi && oi->cost) oi->cost(x->g, n, T, c);
    if (on_mma_path(x, i, T)) c->mma_flops = mma_tile_flops(x->mma[i], n->heads, P, T);
    else if (rel_on_tensor_cores(x, i)) c->mma_flops = c->flops; /* at node_peak's tensor-core peak */
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

/* Attention node i's computed scores per head over its first T queries (attn_geometry, or the context's
 * pair counts); false for a kind without a rule. */
static bool ctx_per_head(const CostCtx *x, int i, int T, double *per_head) {
    const Node *n = x->g->nodes[i];
    double q, k;
    if (!x->pairs || !x->pairs[i]) return attn_geometry(&n->attn, n->layer, n->heads, T, &q, &k, per_head);
    *per_head = x->pairs[i][T] / (n->heads > 0 ? n->heads : 1);
    return true;
}

/* Node i's cost for a token at position C of a session with a KV cache (cost_cached_token). */
static void cached_node_cost(const CostCtx *x, int i, int C, OpCost *c) {
    const Graph *g = x->g;
    const Node *n = g->nodes[i];
    node_cost(x, i, C, 1, c);
    double before = 0, after = 0;
    if (n->op == OP_ATTENTION && (C == 0 || ctx_per_head(x, i, C, &before)) && ctx_per_head(x, i, C + 1, &after)) {
        /* the query at position C against the keys its pattern lets it see among 0..C (the row's pairs) */
        double H = n->heads, G = node_kv_heads(n), hd = n->head_dim, scores = (after - before) * H;
        double keys = after - before, mma = c->mma_flops;
        memset(c, 0, sizeof *c);
        count_read(c, in_value(g, n, 0), H * hd);
        count_read(c, in_value(g, n, 1), 2.0 * keys * G * hd);
        count_written(c, out_value(g, n), H * hd);
        c->attn_queries = 1;
        c->attn_keys = C + 1;
        c->attn_scores = scores;
        c->flops = 2.0 * 2.0 * hd * scores;
        c->other_ops = (OPS_SOFTMAX + (n->alibi ? OPS_ALIBI : 0)) * scores; /* the query rotated by kv_write */
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
    if (n->epi.gate != ACT_NONE) bytes += (double)ir_numel(in_value(g, n, k), T) * dtype_size(in_value(g, n, k)->dtype), k++;
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

/* Whether a live weight value before `upto` reads the same file tensor as `v` (a tied adaptive softmax's
 * tail projection is a second view of its input projection: docs/plan.md, "weights"). */
static bool weight_seen_before(const Graph *g, const Value *v, int upto) {
    if (!v->weight_name) return false;
    for (int i = 0; i < upto; i++) {
        const Value *u = g->values[i];
        if (u->cls == VC_WEIGHT && ir_value_live(g, u) && u->weight_name && strcmp(u->weight_name, v->weight_name) == 0)
            return true;
    }
    return false;
}

/* Parameters: every file tensor once; weight bytes: every stored view (each is its own device copy). */
static void count_weights(const Graph *g, ModelCost *m) {
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->cls != VC_WEIGHT || !ir_value_live(g, v)) continue;
        double e = (double)ir_numel(v, 1);
        if (!weight_seen_before(g, v, i)) m->params += e;
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

/* ------------------------------------------------------------------ */
/* The token modes: sums over a segment's calls                          */
/* ------------------------------------------------------------------ */

/* What a token mode adds up per call of one node: the ModeCost figures, the roofline's two sides apart. */
enum { FIG_FLOPS, FIG_OTHER, FIG_BYTES, FIG_SCORES, FIG_COMPUTE, FIG_MEMORY, FIG_COUNT };

/* One node's figures in one call, or their sum over calls (seconds: the sum of each call's roofline max). */
typedef struct CallFigs {
    double v[FIG_COUNT]; /* indexed by FIG_*; FIG_COMPUTE without the tensor-core tiles' seconds (mma) */
    double mma;          /* the tensor-core tiles' compute seconds (a step function of the call) */
    double seconds;      /* the roofline seconds, max(compute + mma, memory); sums: call by call */
} CallFigs;

/* Which calls a token mode makes of a node: token by token without a cache (t = 1..W: a forward of t tokens)
 * or through the session's state (t = 0..W-1: one token at context C(t)). */
typedef struct CallSeries {
    const CostCtx *x; /* the graph and its tables */
    int node;         /* the node */
    bool cached;      /* through the state */
} CallSeries;

/* The context of token t of a cached generation: a KV cache holds all t earlier tokens; Shortformer's
 * cache (with PIA or not) grows through each segment of L after the min(L', earlier) rows it kept. */
static int cached_context(const Graph *g, long t) {
    long L = g->spec->segment, Lc = g->spec->cache;
    if (g->spec->infused == PIA_NONE && Lc <= 0) return (int)t;
    long kept = t / L * L < Lc ? t / L * L : Lc;
    return (int)(kept + t % L);
}

/* The node's figures in call t of the series. */
static CallFigs call_figs(const CallSeries *cs, long t) {
    const CostCtx *x = cs->x;
    OpCost c;
    int T = cs->cached ? 1 : (int)t;
    if (cs->cached) cached_node_cost(x, cs->node, cached_context(x->g, t), &c);
    else node_cost(x, cs->node, 0, T, &c);
    CallFigs f = {.v = {c.flops, c.other_ops, op_cost_bytes_read(&c) + op_cost_bytes_written(&c), c.attn_scores}};
    if (x->dev) {
        CostPeak peak = node_peak(x, cs->node, T);
        OpCost smooth = c; /* roofline_sides' compute apart: the tiles' seconds, then the rest */
        if (c.mma_flops > 0) {
            f.mma = c.mma_flops / device_peak(x->dev, peak);
            smooth.mma_flops = smooth.flops = 0;
        }
        roofline_sides(x->dev, &smooth, peak, &f.v[FIG_COMPUTE], &f.v[FIG_MEMORY]);
    }
    double compute = f.mma + f.v[FIG_COMPUTE];
    f.seconds = compute > f.v[FIG_MEMORY] ? compute : f.v[FIG_MEMORY];
    return f;
}

static void figs_add(CallFigs *sum, const CallFigs *f) {
    for (int k = 0; k < FIG_COUNT; k++) sum->v[k] += f->v[k];
    sum->mma += f->mma;
    sum->seconds += f->seconds;
}

/* a + b u + c u^2 over u = t - lo. */
typedef struct Quad {
    double a, b, c; /* coefficients */
} Quad;

static double quad_at(Quad q, double u) { return q.a + u * (q.b + q.c * u); }

/* Sum of q(u) over integers u in [u0, u1]. */
static double quad_sum(Quad q, double u0, double u1) {
    double n = u1 - u0 + 1, s1 = (u1 * (u1 + 1) - (u0 - 1) * u0) / 2;
    double s2 = (u1 * (u1 + 1) * (2 * u1 + 1) - (u0 - 1) * u0 * (2 * u0 - 1)) / 6;
    return q.a * n + q.b * s1 + q.c * s2;
}

/* The quadratic through (0, f0), (m, fm), (e, fe), 0 < m < e. */
static Quad quad_fit(double f0, double fm, double fe, double m, double e) {
    double d1 = (fm - f0) / m, d2 = ((fe - fm) / (e - m) - d1) / e;
    return (Quad){f0, d1 - d2 * m, d2};
}

/* The real roots of q, ascending, into r; a c negligible over [0, e] counts as 0. Returns their count. */
static int quad_roots(Quad q, double e, double r[2]) {
    if (fabs(q.c) * e * e <= 1e-12 * (fabs(q.a) + fabs(q.b) * e)) {
        if (q.b == 0) return 0;
        r[0] = -q.a / q.b;
        return 1;
    }
    double disc = q.b * q.b - 4 * q.a * q.c;
    if (disc < 0) return 0;
    double h = -(q.b + (q.b < 0 ? -sqrt(disc) : sqrt(disc))) / 2; /* without cancellation */
    r[0] = h / q.c;
    r[1] = h != 0 ? q.a / h : r[0];
    if (r[0] > r[1]) {
        double t = r[0];
        r[0] = r[1];
        r[1] = t;
    }
    return 2;
}

/* Sum over [0, e] of max(qc, qm): split where qc - qm changes sign. */
static double quad_max_sum(Quad qc, Quad qm, double e) {
    Quad d = {qc.a - qm.a, qc.b - qm.b, qc.c - qm.c};
    double cut[4] = {-1, e, e, e}; /* ranges (cut[k], cut[k+1]] */
    int n = 1;
    double r[2];
    int nr = quad_roots(d, e, r);
    for (int k = 0; k < nr; k++)
        if (r[k] > 0 && r[k] < e && floor(r[k]) > cut[n - 1]) cut[n++] = floor(r[k]);
    cut[n] = e;
    double s = 0;
    for (int k = 0; k < n; k++) {
        double u0 = cut[k] + 1, u1 = cut[k + 1];
        if (u1 < u0) continue;
        s += quad_sum(quad_at(d, (u0 + u1) / 2) >= 0 ? qc : qm, u0, u1);
    }
    return s;
}

/* q(u + d): the quadratic moved to start at u = d. */
static Quad quad_shift(Quad q, double d) { return (Quad){quad_at(q, d), q.b + 2 * q.c * d, q.c}; }

/*
 * Calls [lo, hi] of a series whose figures but the tiles' seconds follow the quadratics q over u = t - lo,
 * f0 the figures of call lo, added to *sum: the tiles' seconds are constant over the runs of calls that
 * run the same tiles (mma_same_until, forwards only), so each run adds its seconds and the sum of
 * max(compute + them, memory) in closed form; O(runs).
 */
static void sum_runs(const CallSeries *cs, long lo, long hi, const Quad *q, const CallFigs *f0, CallFigs *sum) {
    const CostCtx *x = cs->x;
    const MmaTiles *t = cs->cached ? NULL : x->mma[cs->node];
    for (long r = lo; r <= hi;) {
        double mma = r == lo ? f0->mma : call_figs(cs, r).mma;
        long until = t && mma > 0 ? mma_same_until(t, r) : r; /* a call off the path (T = 1) alone */
        if (until > hi) until = hi;
        Quad qc = quad_shift(q[FIG_COMPUTE], (double)(r - lo)), qm = quad_shift(q[FIG_MEMORY], (double)(r - lo));
        qc.a += mma;
        sum->mma += mma * (double)(until - r + 1);
        sum->seconds += quad_max_sum(qc, qm, (double)(until - r));
        r = until + 1;
    }
}

/* Whether f agrees with its fit q at u (relative 1e-9 of the figures' size there). */
static bool fits(const CallFigs *f, const Quad *q, double u, const double *size) {
    for (int k = 0; k < FIG_COUNT; k++) {
        double want = quad_at(q[k], u);
        if (fabs(want - f->v[k]) > 1e-9 * (size[k] + fabs(f->v[k]))) return false;
    }
    return true;
}

/* Calls [lo, hi] of the series added to *sum: one quadratic per figure when the calls' figures follow one
 * (checked at seven more calls), else halves, down to call-by-call sums of at most 32 calls. Every rule is
 * piecewise polynomial of degree <= 2 in t with few pieces (a min() of the memory or cache, the roofline's
 * max, the banded kinds' pairs), so a segment costs O(pieces log W) calls; a pattern without a closed form
 * (row counts, tile lists) ends call by call: O(W). */
static void sum_calls(const CallSeries *cs, long lo, long hi, CallFigs *sum) {
    if (hi - lo < 32) {
        for (long t = lo; t <= hi; t++) {
            CallFigs f = call_figs(cs, t);
            figs_add(sum, &f);
        }
        return;
    }
    double e = (double)(hi - lo), m = floor(e / 2), size[FIG_COUNT];
    CallFigs f0 = call_figs(cs, lo), fm = call_figs(cs, lo + (long)m), fe = call_figs(cs, hi);
    Quad q[FIG_COUNT];
    for (int k = 0; k < FIG_COUNT; k++) {
        q[k] = quad_fit(f0.v[k], fm.v[k], fe.v[k], m, e);
        size[k] = fabs(f0.v[k]) + fabs(fm.v[k]) + fabs(fe.v[k]);
    }
    const double probe[] = {1, 2, floor(e / 4), m + 1, floor(3 * e / 4), e - 2, e - 1};
    bool ok = true;
    for (size_t k = 0; ok && k < sizeof probe / sizeof *probe; k++) {
        CallFigs f = call_figs(cs, lo + (long)probe[k]);
        ok = fits(&f, q, probe[k], size);
    }
    if (!ok) {
        long mid = lo + (hi - lo) / 2;
        sum_calls(cs, lo, mid, sum);
        sum_calls(cs, mid + 1, hi, sum);
        return;
    }
    for (int k = 0; k < FIG_COUNT; k++) sum->v[k] += quad_sum(q[k], 0, e);
    if (f0.mma == 0 && fm.mma == 0 && fe.mma == 0) sum->seconds += quad_max_sum(q[FIG_COMPUTE], q[FIG_MEMORY], e);
    else sum_runs(cs, lo, hi, q, &f0, sum);
}

/* A token mode's per-token figures: the live nodes' sums over calls [lo, hi], over W tokens. */
static ModeCost series_mode(const CostCtx *x, CostMode mode, bool cached, long lo, long hi, int W) {
    CallFigs sum = {.seconds = 0};
    for (int i = 0; i < x->g->nnodes; i++) {
        if (!live(x->g->nodes[i])) continue;
        CallSeries cs = {.x = x, .node = i, .cached = cached};
        sum_calls(&cs, lo, hi, &sum);
    }
    return (ModeCost){.mode = mode, .flops = sum.v[FIG_FLOPS] / W, .other_ops = sum.v[FIG_OTHER] / W,
                      .bytes = sum.v[FIG_BYTES] / W, .attn_scores = sum.v[FIG_SCORES] / W,
                      .seconds = x->dev ? sum.seconds / W : 0};
}

/* Token by token without a cache: token t (1..W) re-runs a forward on t tokens; the mean over the segment. */
static ModeCost token_mode(const CostCtx *x, int W) { return series_mode(x, MODE_TOKEN, false, 1, W, W); }

/* Token by token through the session's state: token t (0..W-1) of a W-token generation is one call of one
 * token at context cached_context(t): a KV cache holds all t earlier tokens, Shortformer's cache grows
 * through each segment after the rows it kept, a Transformer-XL layer its memory (in the node's T = 1
 * cost). The mean over the segment. A
 * recurrent model has no such mode (its windows restart at position 0): every figure is NAN. */
static ModeCost cached_token_mode(const CostCtx *x, int W) {
    if (ir_recurrent(x->g))
        return (ModeCost){.mode = MODE_CACHED_TOKEN, .flops = NAN, .other_ops = NAN, .bytes = NAN,
                          .attn_scores = NAN, .seconds = NAN};
    return series_mode(x, MODE_CACHED_TOKEN, true, 0, W - 1, W);
}

bool cost_call(Graph *g, const DeviceSpec *dev, bool cached, int t, ModeCost *out) {
    CostCtx x;
    if (!cost_ctx_init(&x, g, 0, dev)) return false;
    CallFigs sum = {.seconds = 0};
    for (int i = 0; i < g->nnodes; i++) {
        if (!live(g->nodes[i])) continue;
        CallFigs f = call_figs(&(CallSeries){.x = &x, .node = i, .cached = cached}, t);
        figs_add(&sum, &f);
    }
    *out = (ModeCost){.mode = cached ? MODE_CACHED_TOKEN : MODE_TOKEN, .flops = sum.v[FIG_FLOPS],
                      .other_ops = sum.v[FIG_OTHER], .bytes = sum.v[FIG_BYTES], .attn_scores = sum.v[FIG_SCORES],
                      .seconds = dev ? sum.seconds : 0};
    return true;
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
    if (!m || !cost_ctx_init(&x, g, W, o->device)) {
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
    m->modes[MODE_TOKEN] = token_mode(&x, W);
    m->modes[MODE_CACHED_TOKEN] = cached_token_mode(&x, W);
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
