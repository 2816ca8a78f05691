/*
 * interp.c — the reference interpreter, the golden oracle of every backend
 * (docs/ir.md, "Reference semantics").
 *
 * Runs the live nodes in program order, each through its op's interp_*
 * hook named in op_table (ops.c), over fused or unfused graphs (after
 * at least the layouts pass). Every value is a dense row-major fp32 host
 * array of its stored shape at T = ntokens; each element written is rounded
 * through round_to_dtype(value dtype). Reductions (dot products, norm
 * statistics, softmax) accumulate in double. Inside a fused matmul epilogue
 * the intermediates (before bias, before the activation, before the
 * residual) are fp32 and are not rounded to the activation dtype; with fp32
 * activations fused and unfused graphs therefore give identical results.
 *
 * State: a session (InterpSession) holds every state value (the KV caches)
 * at its capacity and their fill. A forward runs at P = fill: kv_write
 * commits the T new key/value rows at positions P..P+T-1 of the state,
 * attention's queries (positions P+t) see keys 0..P+t, and the embedding
 * adds position P+t. A value handed out to the caller is the window the
 * call committed, so a stateless caller sees the dense [.., T, ..] tensors.
 */
#include "shortc.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static float act_apply(Activation a, float x) {
    double v = x;
    switch (a) {
    case ACT_NONE: return x;
    case ACT_RELU: return x > 0.0f ? x : 0.0f;
    case ACT_GELU: return (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
    case ACT_GELU_TANH: {
        double c = sqrt(2.0 / 3.14159265358979323846);
        return (float)(0.5 * v * (1.0 + tanh(c * (v + 0.044715 * v * v * v))));
    }
    case ACT_SILU: return (float)(v / (1.0 + exp(-v)));
    }
    return x;
}

/* One interpretation (opaque `struct InterpRun` for the op table's hooks). */
typedef struct InterpRun {
    const Graph *g;       /* the graph being run */
    Diag *d;              /* where errors go */
    int T;                /* token count of this forward */
    int P;                /* position of its first token (the session's fill) */
    float **buf;          /* per value: host array (weights point at the caller's) */
    const int32_t *tokens;/* the token ids */
    struct InterpSession *sess; /* the session (recurrence: h_prev is read from its state) */
} Run;

static bool fail(Run *r, const Node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(Run *r, const Node *n, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n) diag_plain_error(r->d, "interp: node %d (%s): %s", n->id, op_name(n->op), msg);
    else diag_plain_error(r->d, "interp: %s", msg);
    return false;
}

static const Value *val(const Run *r, const Node *n, int k) { return r->g->values[n->in[k]]; }
/* The symbols of this call: T new tokens from position P, every state filled to P, one sequence. */
static SymEnv call_env(const Run *r) { return (SymEnv){.T = r->T, .P = r->P, .fill = r->P, .B = 1}; }
/* Elements of a value in this call (a state's rows at fill + T). */
static size_t numel(const Run *r, const Value *v) {
    SymEnv env = call_env(r);
    return ir_numel_env(v, &env);
}
static const float *in(const Run *r, const Node *n, int k) { return r->buf[n->in[k]]; }

bool interp_embed(Run *r, const Node *n, float *y, const Value *o) {
    DType dt = o->dtype;
    const Value *wte = val(r, n, 1);
    const float *tab = in(r, n, 1), *pos = n->nin > 2 ? in(r, n, 2) : NULL;
    int V = ir_dim(wte, 0), D = ir_dim(wte, 1), T = r->T, P = n->pos_mod ? r->P % n->pos_mod : r->P;
    if (pos && P + T > ir_dim(val(r, n, 2), 0))
        return fail(r, n, "positions %d..%d go past the %d learned positions", P, P + T - 1, ir_dim(val(r, n, 2), 0));
    for (int t = 0; t < T; t++) {
        int32_t id = r->tokens[t];
        if (id < 0 || id >= V) return fail(r, n, "token %d at position %d is outside the vocabulary [0, %d)", (int)id, t, V);
        for (int c = 0; c < D; c++) {
            double v = tab[(size_t)id * D + c];
            if (pos) v += pos[(size_t)(P + t) * D + c];
            else if (n->pos == POS_SINUSOIDAL) v += pia_sinusoid(n->pia_style, P + t, c, D);
            y[(size_t)t * D + c] = round_to_dtype((float)v, dt);
        }
    }
    return true;
}

/* Adaptive input, one band: row tok - lo of the table for tokens in [lo, hi), zeros for the others. */
bool interp_embed_band(Run *r, const Node *n, float *y, const Value *o) {
    const float *tab = in(r, n, 1);
    int W = ir_dim(val(r, n, 1), 1), V = r->g->spec ? r->g->spec->vocab : n->band_hi;
    for (int t = 0; t < r->T; t++) {
        int32_t id = r->tokens[t];
        if (id < 0 || id >= V) return fail(r, n, "token %d at position %d is outside the vocabulary [0, %d)", (int)id, t, V);
        bool inside = id >= n->band_lo && id < n->band_hi;
        for (int c = 0; c < W; c++)
            y[(size_t)t * W + c] = inside ? round_to_dtype(tab[(size_t)(id - n->band_lo) * W + c], o->dtype) : 0.0f;
    }
    return true;
}

/* y = x * scale + the position code of position P + t (learned table or sinusoid). */
bool interp_pos_add(Run *r, const Node *n, float *y, const Value *o) {
    const float *x = in(r, n, 0), *pos = n->nin > 1 ? in(r, n, 1) : NULL;
    int D = ir_dim(val(r, n, 0), 1), T = r->T, P = n->pos_mod ? r->P % n->pos_mod : r->P;
    if (pos && P + T > ir_dim(val(r, n, 1), 0))
        return fail(r, n, "positions %d..%d go past the %d learned positions", P, P + T - 1, ir_dim(val(r, n, 1), 0));
    for (int t = 0; t < T; t++)
        for (int c = 0; c < D; c++) {
            double v = (double)x[(size_t)t * D + c] * n->scale;
            if (pos) v += pos[(size_t)(P + t) * D + c];
            else if (n->pos == POS_SINUSOIDAL) v += pia_sinusoid(n->pia_style, P + t, c, D);
            y[(size_t)t * D + c] = round_to_dtype((float)v, o->dtype);
        }
    return true;
}

/* log-sum-exp of a[0..n) and b[0..m) together, in double. */
static double logsumexp2(const float *a, int n, const float *b, int m) {
    double mx = -INFINITY;
    for (int i = 0; i < n; i++) mx = fmax(mx, a[i]);
    for (int i = 0; i < m; i++) mx = fmax(mx, b[i]);
    double s = 0;
    for (int i = 0; i < n; i++) s += exp(a[i] - mx);
    for (int i = 0; i < m; i++) s += exp(b[i] - mx);
    return mx + log(s);
}

/*
 * Adaptive softmax: log-probabilities over the whole vocab. The head softmax
 * runs over the shortlist words and the cluster logits together; a tail word's
 * log-probability is its cluster's head log-probability plus its log-softmax
 * within the tail.
 */
bool interp_adaptive_logprob(Run *r, const Node *n, float *y, const Value *o) {
    int V = ir_dim(o, 1), c0 = ir_dim(val(r, n, 0), 1), nt = n->ntails;
    for (int t = 0; t < r->T; t++) {
        const float *head = in(r, n, 0) + (size_t)t * c0, *cl = in(r, n, 1) + (size_t)t * nt;
        float *yr = y + (size_t)t * V;
        double lse = logsumexp2(head, c0, cl, nt);
        for (int j = 0; j < c0; j++) yr[j] = round_to_dtype((float)(head[j] - lse), o->dtype);
        int off = c0;
        for (int i = 1; i <= nt; i++) {
            int w = ir_dim(val(r, n, 1 + i), 1);
            const float *tail = in(r, n, 1 + i) + (size_t)t * w;
            double cluster = cl[n->reversed ? nt - i : i - 1] - lse;
            double tlse = logsumexp2(tail, w, NULL, 0);
            for (int j = 0; j < w; j++) yr[off + j] = round_to_dtype((float)(cluster + tail[j] - tlse), o->dtype);
            off += w;
        }
    }
    return true;
}

bool interp_norm(Run *r, const Node *n, float *y, const Value *o) {
    DType dt = o->dtype;
    const float *x = in(r, n, 0), *g = in(r, n, 1), *b = n->norm == NORM_LAYERNORM ? in(r, n, 2) : NULL;
    int D = ir_dim(val(r, n, 0), 1);
    for (int t = 0; t < r->T; t++) {
        const float *xr = x + (size_t)t * D;
        float *yr = y + (size_t)t * D;
        if (n->norm == NORM_LAYERNORM) {
            double mean = 0, var = 0;
            for (int c = 0; c < D; c++) mean += xr[c];
            mean /= D;
            for (int c = 0; c < D; c++) var += (xr[c] - mean) * (xr[c] - mean);
            var /= D;
            double inv = 1.0 / sqrt(var + n->eps);
            for (int c = 0; c < D; c++) yr[c] = round_to_dtype((float)((xr[c] - mean) * inv * g[c] + (b ? b[c] : 0.0)), dt);
        } else {
            double ms = 0;
            for (int c = 0; c < D; c++) ms += (double)xr[c] * xr[c];
            ms /= D;
            double inv = 1.0 / sqrt(ms + n->eps);
            for (int c = 0; c < D; c++) yr[c] = round_to_dtype((float)(xr[c] * inv * g[c]), dt);
        }
    }
    return true;
}

/* y[T,N] = x[T,K] · W, W stored [K,N] or (trans_w) [N,K]; then the epilogue. */
bool interp_matmul(Run *r, const Node *n, float *y, const Value *o) {
    DType dt = o->dtype;
    const Value *wv = val(r, n, 1);
    const float *x = in(r, n, 0), *w = in(r, n, 1);
    int K = ir_dim(val(r, n, 0), 1);
    int N = n->trans_w ? ir_dim(wv, 0) : ir_dim(wv, 1);
    int k = 2;
    bool has_bias = n->op == OP_MATMUL ? n->epi.bias : n->out_bias; /* matmul epilogue or the logits' output bias */
    const float *bias = has_bias ? in(r, n, k++) : NULL;
    Activation gate_act = n->op == OP_MATMUL ? n->epi.gate : ACT_NONE;
    const float *gate = gate_act != ACT_NONE ? in(r, n, k++) : NULL;
    const float *res = n->op == OP_MATMUL && n->epi.residual ? in(r, n, k++) : NULL;
    Activation act = n->op == OP_MATMUL ? n->epi.act : ACT_NONE;
    double *acc = malloc(sizeof *acc * (size_t)N);
    if (!acc) return fail(r, n, "out of memory");
    for (int t = 0; t < r->T; t++) {
        const float *xr = x + (size_t)t * K;
        if (n->trans_w) {
            for (int j = 0; j < N; j++) {
                const float *wr = w + (size_t)j * K;
                double s = 0;
                for (int i = 0; i < K; i++) s += (double)xr[i] * wr[i];
                acc[j] = s;
            }
        } else {
            for (int j = 0; j < N; j++) acc[j] = 0;
            for (int i = 0; i < K; i++) {
                double xv = xr[i];
                const float *wr = w + (size_t)i * N;
                for (int j = 0; j < N; j++) acc[j] += xv * wr[j];
            }
        }
        float *yr = y + (size_t)t * N;
        for (int j = 0; j < N; j++) {
            float v = (float)acc[j];
            if (bias) v = (float)((double)v + bias[j]);
            if (act != ACT_NONE) v = act_apply(act, v);
            if (gate) v = (float)((double)v * act_apply(gate_act, gate[(size_t)t * N + j]));
            if (res) v = (float)((double)v + res[(size_t)t * N + j]);
            yr[j] = round_to_dtype(v, dt);
        }
    }
    free(acc);
    return true;
}

/* Offset of element (which, h, s, d) of a KV state of T rows (its capacity); which 0 = K, 1 = V. */
static size_t kv_index(DimOrder o, int which, int h, int s, int d, int H, int T, int hd) {
    if (o == ORD_TOKENS_HEADS_DIM) return (((size_t)which * T + s) * H + h) * hd + d;
    return (((size_t)which * H + h) * T + s) * hd + d;
}

/* Rotary frequencies of node n for the current call (positions up to P+T-1); false when out of memory. */
static bool call_rope(const Run *r, const Node *n, double **inv_freq, double *mscale) {
    *inv_freq = NULL;
    *mscale = 1.0;
    if (!n->rope) return true;
    *inv_freq = malloc(sizeof **inv_freq * (size_t)(n->rope->dims / 2 + 1));
    if (!*inv_freq) return false;
    rope_inv_freq(n->rope, r->P + r->T, *inv_freq, mscale);
    return true;
}

/* Head row x (hd channels) in double, rotated to position pos when inv_freq is set. */
static void head_row(const Node *n, const double *inv_freq, double mscale, long pos, const float *x, double *out) {
    for (int d = 0; d < n->head_dim; d++) out[d] = x[d];
    if (inv_freq) rope_rotate(n->rope, inv_freq, mscale, pos, out);
}

/* Commits the call's G key/value heads at rows P..P+T-1; keys rotated to their position under rope. */
bool interp_kv_write(Run *r, const Node *n, float *kv, const Value *ov) {
    DType dt = ov->dtype;
    DimOrder o = ov->order;
    const float *qkv = in(r, n, 0);
    int H = n->heads, G = node_kv_heads(n), hd = n->head_dim, T = r->T, W = (H + 2 * G) * hd, cap = ov->capacity;
    int P = r->P;
    double *inv_freq, mscale, *row = malloc(sizeof *row * (size_t)hd);
    if (!row || !call_rope(r, n, &inv_freq, &mscale)) {
        free(row);
        return fail(r, n, "out of memory");
    }
    for (int which = 0; which < 2; which++)
        for (int t = 0; t < T; t++)
            for (int g = 0; g < G; g++) {
                const float *x = qkv + (size_t)t * W + (size_t)H * hd + (size_t)(which * G + g) * hd;
                head_row(n, which == 0 ? inv_freq : NULL, mscale, P + t, x, row);
                for (int d = 0; d < hd; d++) kv[kv_index(o, which, g, P + t, d, G, cap, hd)] = round_to_dtype((float)row[d], dt);
            }
    free(row);
    free(inv_freq);
    return true;
}

/*
 * Position-infused attention's table: row s holds W_q p_s | W_k p_s (no biases)
 * for the position code p_s of slot s, from the c_attn weight [D, 3·H·hd]
 * ([3·H·hd, D] when stored [out, in]). A derived tensor at its capacity:
 * computed by interp_derive when the weights load (or by a forward that was
 * not handed it).
 */
bool interp_pia_pos(Run *r, const Node *n, float *y, const Value *o) {
    const Value *wv = val(r, n, 0);
    const float *w = in(r, n, 0);
    int HD = n->heads * n->head_dim, W = 2 * HD, stride = ir_dim(o, 1), slots = o->capacity;
    bool out_in = ir_dim(wv, 0) == 3 * HD && wv->order == ORD_OUT_IN;
    int D = out_in ? ir_dim(wv, 1) : ir_dim(wv, 0);
    double *p = malloc(sizeof *p * (size_t)D);
    if (!p) return fail(r, n, "out of memory");
    for (int s = 0; s < slots; s++) {
        for (int d = 0; d < D; d++) p[d] = pia_sinusoid(n->pia_style, s, d, D);
        for (int c = 0; c < W; c++) {
            double acc = 0;
            for (int d = 0; d < D; d++) acc += p[d] * (out_in ? w[(size_t)c * D + d] : w[(size_t)d * 3 * HD + c]);
            y[(size_t)s * stride + c] = round_to_dtype((float)acc, o->dtype);
        }
    }
    free(p);
    return true;
}

/* Scratch of interp_attention: the scores of one query, its output accumulator and its (rotated) query. */
typedef struct AttnScratch {
    double *p;      /* [keys] scores */
    double *acc;    /* [hd] weighted values */
    double *q;      /* [hd] the query, rotated under rope */
    double *inv;    /* [dims/2] rotary inverse frequencies (NULL: no rope) */
    double mscale;  /* rotary cos/sin factor (yarn) */
} AttnScratch;

static void attn_scratch_free(AttnScratch *w) {
    free(w->p);
    free(w->acc);
    free(w->q);
    free(w->inv);
}

static bool attn_scratch(const Run *r, const Node *n, long keys, AttnScratch *w) {
    *w = (AttnScratch){0};
    w->p = malloc(sizeof *w->p * (size_t)(keys > 0 ? keys : 1));
    w->acc = malloc(sizeof *w->acc * (size_t)n->head_dim);
    w->q = malloc(sizeof *w->q * (size_t)n->head_dim);
    bool ok = w->p && w->acc && w->q && call_rope(r, n, &w->inv, &w->mscale);
    if (!ok) attn_scratch_free(w);
    return ok;
}

/*
 * Causal softmax attention over the cache (the T new rows already written by
 * kv_write) with the layer's pattern. Query head h reads K/V head h / (H/G);
 * rope rotates the query to its position (the cached keys are rotated);
 * ALiBi adds -slope_h (i - j) to the score of query i and key j.
 */
bool interp_attention(Run *r, const Node *n, float *y, const Value *ov) {
    DType dt = ov->dtype;
    const float *qkv = in(r, n, 0), *kv = in(r, n, 1);
    /* position-infused: slot s adds pos[s][0..H·hd) to its query and pos[s][H·hd..) to its key */
    const float *pos = n->infused ? in(r, n, 2) : NULL;
    int PW = pos ? ir_dim(val(r, n, 2), 1) : 0; /* row stride: 2·H·hd */
    DimOrder o = val(r, n, 1)->order;
    int H = n->heads, G = node_kv_heads(n), hd = n->head_dim, T = r->T, W = (H + 2 * G) * hd;
    int cap = val(r, n, 1)->capacity, P = r->P;
    SymEnv env = call_env(r);
    long keys = symdim_eval(n->keys, &env);
    if (keys != P + T || keys > cap) return fail(r, n, "%ld keys for %d cached and %d new rows (capacity %d)", keys, P, T, cap);
    AttnPattern pat;
    char err[256];
    if (!attn_pattern_build(&pat, &n->attn, n->layer, H, cap, err, sizeof err)) return fail(r, n, "%s", err);
    double scale = 1.0 / sqrt((double)hd);
    AttnScratch w;
    if (!attn_scratch(r, n, keys, &w)) {
        attn_pattern_free(&pat);
        return fail(r, n, "out of memory");
    }
    double *p = w.p, *acc = w.acc, *qr = w.q;
    const float *xkv = n->rec_key ? in(r, n, 2) : NULL; /* recurrence: k | v | present of h_prev */
    bool extra = xkv && xkv[2 * H * hd] != 0.0f;
    for (int h = 0; h < H; h++) {
        int g = h / (H / G); /* the K/V head of h's group */
        double slope = n->alibi ? alibi_slope(h, H) : 0.0;
        for (int t = 0; t < T; t++) {
            int last = P + t; /* the query at position P+t sees the keys of the pattern among 0..P+t */
            head_row(n, w.inv, w.mscale, last, qkv + (size_t)t * W + (size_t)h * hd, qr);
            const float *qp = pos ? pos + (size_t)last * PW + (size_t)h * hd : NULL;
            double mx = -INFINITY, xs = 0;
            if (extra) { /* h_prev: one more key every query of the window sees */
                for (int d = 0; d < hd; d++) xs += qr[d] * xkv[h * hd + d];
                mx = xs *= scale;
            }
            for (int s = 0; s <= last; s++) {
                if (!attn_pattern_visible(&pat, h, last, s)) continue;
                const float *kp = pos ? pos + (size_t)s * PW + (size_t)(H + h) * hd : NULL;
                double dot = 0;
                for (int d = 0; d < hd; d++)
                    dot += (qr[d] + (qp ? qp[d] : 0.0)) * ((double)kv[kv_index(o, 0, g, s, d, G, cap, hd)] + (kp ? kp[d] : 0.0));
                p[s] = dot * scale - slope * (last - s);
                if (p[s] > mx) mx = p[s];
            }
            double sum = 0, xw = extra ? exp(xs - mx) : 0;
            for (int d = 0; d < hd; d++) acc[d] = extra ? xw * xkv[H * hd + h * hd + d] : 0;
            sum += xw;
            for (int s = 0; s <= last; s++) {
                if (!attn_pattern_visible(&pat, h, last, s)) continue;
                double e = exp(p[s] - mx);
                sum += e;
                for (int d = 0; d < hd; d++) acc[d] += e * kv[kv_index(o, 1, g, s, d, G, cap, hd)];
            }
            float *yr = y + (size_t)t * H * hd + (size_t)h * hd;
            /* a query that sees no key (gaussian self=0 at position 0) outputs zeros */
            for (int d = 0; d < hd; d++) yr[d] = round_to_dtype(sum > 0 ? (float)(acc[d] / sum) : 0.0f, dt);
        }
    }
    attn_scratch_free(&w);
    attn_pattern_free(&pat);
    return true;
}

/* Transformer-XL relative attention (mem_txl.c): the memory input is the previous calls' ring. */
bool interp_rel_attention(Run *r, const Node *n, float *y, const Value *o) {
    bool mem = n->memory > 0;
    TxlAttnCall c = {.T = r->T, .P = r->P, .H = n->heads, .hd = n->head_dim, .D = r->g->spec->d_model,
                     .memory = n->memory, .qkv = in(r, n, 0), .rel = in(r, n, 1), .rel_rows = val(r, n, 1)->capacity,
                     .u = in(r, n, 2), .v = in(r, n, 3), .mem = mem ? in(r, n, 5) : NULL,
                     .w_qkv = mem ? in(r, n, 4) : NULL, .w_qkv_trans = mem && val(r, n, 4)->order == ORD_OUT_IN,
                     .clamp = n->attn.prm.clamp, .same_length = n->attn.prm.same_length != 0};
    return txl_rel_attention_ref(&c, y, o->dtype) || fail(r, n, "out of memory, or the relative keys hold fewer "
                                                                 "than the call's distances");
}

/* Transformer-XL's relative keys (mem_txl.c): W_r R_d for every distance of the table, a derived tensor. */
bool interp_rel_keys(Run *r, const Node *n, float *y, const Value *o) {
    const Value *wr = val(r, n, 0);
    return txl_rel_keys_ref(in(r, n, 0), wr->order == ORD_OUT_IN, r->g->spec->d_model, n->heads * n->head_dim,
                            o->capacity, y, o->dtype) || fail(r, n, "out of memory");
}

/* The memory keeps the last m rows of cat(memory, x): written after the layer's attention has read it. */
bool interp_mem_write(Run *r, const Node *n, float *y, const Value *o) {
    txl_mem_write_ref(y, n->memory, ir_dim(o, 1), in(r, n, 0), r->T, r->P, o->dtype);
    return true;
}

bool interp_bias(Run *r, const Node *n, float *y, const Value *o) {
    const float *x = in(r, n, 0), *b = in(r, n, 1);
    size_t cnt = numel(r, o), N = (size_t)ir_dim(o, 1);
    for (size_t i = 0; i < cnt; i++) y[i] = round_to_dtype((float)((double)x[i] + b[i % N]), o->dtype);
    return true;
}

bool interp_act(Run *r, const Node *n, float *y, const Value *o) {
    const float *x = in(r, n, 0);
    size_t cnt = numel(r, o);
    for (size_t i = 0; i < cnt; i++) y[i] = round_to_dtype(act_apply(n->act, x[i]), o->dtype);
    return true;
}

bool interp_add(Run *r, const Node *n, float *y, const Value *o) {
    const float *a = in(r, n, 0), *b = in(r, n, 1);
    size_t cnt = numel(r, o);
    for (size_t i = 0; i < cnt; i++) y[i] = round_to_dtype((float)((double)a[i] + b[i]), o->dtype);
    return true;
}

/* A gated FFN unit: y = up * act(gate), elementwise (swiglu: SiLU, geglu: erf GELU). */
bool interp_gate(Run *r, const Node *n, float *y, const Value *o) {
    const float *u = in(r, n, 0), *g = in(r, n, 1);
    size_t cnt = numel(r, o);
    for (size_t i = 0; i < cnt; i++) y[i] = round_to_dtype((float)((double)u[i] * act_apply(n->act, g[i])), o->dtype);
    return true;
}

/* ------------------------------------------------------------------ */
/* The recurrence module (docs/attention/recurrence.md)                 */
/* ------------------------------------------------------------------ */

static float *state_of(struct InterpSession *s, const Value *v);

/* x[0..K) · W[:, c0 .. c0+N) (W [K, M] stored [in,out], or [M, K] when trans) + b[c0..) into y (double). */
static void row_times(const float *x, const float *w, const float *b, bool trans, int K, int M, int c0, int N, double *y) {
    for (int j = 0; j < N; j++) {
        double s = b ? b[c0 + j] : 0.0;
        for (int i = 0; i < K; i++) s += (double)x[i] * (trans ? w[(size_t)(c0 + j) * K + i] : w[(size_t)i * M + c0 + j]);
        y[j] = s;
    }
}

/* Layer l_ins's extra key and value: c_attn's k and v columns of norm(h_prev), and the present flag. */
bool interp_rec_kv(Run *r, const Node *n, float *y, const Value *o) {
    const Graph *g = r->g;
    int D = g->spec->d_model, A = n->heads * n->head_dim, nn = n->nin - 2;
    const float *st = r->sess ? state_of(r->sess, g->values[n->rec_state]) : NULL;
    if (!st) return fail(r, n, "no session state for h_prev");
    memset(y, 0, sizeof *y * (size_t)(2 * A + 1));
    if (st[D] == 0.0f) return true; /* no earlier window: no extra key */
    float *x = malloc(sizeof *x * (size_t)D);
    double *kv = malloc(sizeof *kv * (size_t)(2 * A));
    if (!x || !kv) {
        free(x);
        free(kv);
        return fail(r, n, "out of memory");
    }
    for (int c = 0; c < D; c++) x[c] = st[c];
    if (nn > 0) { /* the layer's input norm, rounded like its output */
        const float *gm = in(r, n, 0), *bt = nn > 1 ? in(r, n, 1) : NULL;
        double mean = 0, var = 0;
        if (n->norm == NORM_LAYERNORM) {
            for (int c = 0; c < D; c++) mean += st[c];
            mean /= D;
        }
        for (int c = 0; c < D; c++) var += (st[c] - mean) * (st[c] - mean);
        double inv = 1.0 / sqrt(var / D + n->eps);
        for (int c = 0; c < D; c++) x[c] = round_to_dtype((float)((st[c] - mean) * inv * gm[c] + (bt ? bt[c] : 0.0)), o->dtype);
    }
    row_times(x, in(r, n, nn), in(r, n, nn + 1), n->trans_w, D, 3 * A, A, 2 * A, kv);
    for (int j = 0; j < 2 * A; j++) y[j] = round_to_dtype((float)kv[j], o->dtype);
    y[2 * A] = 1.0f;
    free(x);
    free(kv);
    return true;
}

/* h_prev = FFN(pool_t(sum_l softmax(alpha)_l x_l[t])), then the present flag. */
bool interp_rec_update(Run *r, const Node *n, float *y, const Value *o) {
    const Graph *g = r->g;
    int D = g->spec->d_model, np = n->rec_pooled, widest = D;
    const float *alpha = in(r, n, np);
    for (int j = 0; j < n->rec_layers; j++) {
        const Value *w = val(r, n, np + 1 + 2 * j);
        int out = w->order == ORD_OUT_IN ? ir_dim(w, 0) : ir_dim(w, 1);
        if (out > widest) widest = out;
    }
    double *wl = malloc(sizeof *wl * (size_t)np), *acc = malloc(sizeof *acc * (size_t)widest);
    float *a = malloc(sizeof *a * (size_t)widest), *b = malloc(sizeof *b * (size_t)widest);
    if (!wl || !acc || !a || !b) {
        free(wl);
        free(acc);
        free(a);
        free(b);
        return fail(r, n, "out of memory");
    }
    double mx = -INFINITY, sum = 0;
    for (int l = 0; l < np; l++) mx = fmax(mx, alpha[l]);
    for (int l = 0; l < np; l++) sum += wl[l] = exp(alpha[l] - mx);
    for (int c = 0; c < D; c++) acc[c] = 0;
    for (int l = 0; l < np; l++) {
        const float *x = in(r, n, l);
        for (int t = 0; t < r->T; t++)
            for (int c = 0; c < D; c++) acc[c] += wl[l] / sum * x[(size_t)t * D + c];
    }
    for (int c = 0; c < D; c++) a[c] = (float)(n->rec_mean ? acc[c] / r->T : acc[c]);
    int width = D;
    for (int j = 0; j < n->rec_layers; j++) {
        const Value *w = val(r, n, np + 1 + 2 * j);
        bool trans = w->order == ORD_OUT_IN;
        int out = trans ? ir_dim(w, 0) : ir_dim(w, 1);
        row_times(a, in(r, n, np + 1 + 2 * j), in(r, n, np + 2 + 2 * j), trans, width, out, 0, out, acc);
        bool last = j == n->rec_layers - 1;
        for (int c = 0; c < out; c++) b[c] = last ? (float)acc[c] : act_apply(n->act, (float)acc[c]);
        float *t = a;
        a = b, b = t;
        width = out;
    }
    for (int c = 0; c < D; c++) y[c] = round_to_dtype(a[c], o->dtype);
    y[D] = 1.0f;
    free(wl);
    free(acc);
    free(a);
    free(b);
    return true;
}

static bool run_node(Run *r, const Node *n, float *y, const Value *o) {
    const OpInfo *oi = op_info(n->op);
    if (!oi) return fail(r, n, "unknown op");
    return oi->interp(r, n, y, o);
}

/* ------------------------------------------------------------------ */
/* Sessions                                                            */
/* ------------------------------------------------------------------ */

struct InterpSession {
    const Graph *g;       /* the graph whose states these are */
    float **state;        /* per value id: its state at capacity rows (NULL: not a state, or not written yet) */
    int fill;             /* positions committed (P of the next forward) */
    int seg;              /* sliding states: tokens of the current segment so far (0 .. segment-1) */
};

static bool is_state(const Value *v) { return v->role != STATE_NONE && !ir_value_derived(v) && v->capacity > 0; }

InterpSession *interp_session_new(const Graph *g) {
    InterpSession *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->g = g;
    s->state = calloc((size_t)g->nvalues + 1, sizeof *s->state);
    if (!s->state) {
        free(s);
        return NULL;
    }
    return s;
}

void interp_session_free(InterpSession *s) {
    if (!s) return;
    for (int i = 0; i < s->g->nvalues; i++) free(s->state[i]);
    free(s->state);
    free(s);
}

void interp_session_reset(InterpSession *s) {
    if (!s) return;
    s->fill = s->seg = 0; /* memories hold min(P, m) rows, so at P = 0 none of the old rows is read again either */
    for (int i = 0; i < s->g->nvalues; i++) /* h_prev is read before it is written: clear it */
        if (s->state[i] && s->g->values[i]->role == STATE_RECURRENT)
            memset(s->state[i], 0, sizeof(float) * ir_state_numel(s->g->values[i]));
}

int interp_session_fill(const InterpSession *s) { return s ? s->fill : 0; }

bool interp_session_zero_memories(InterpSession *s) {
    int rows = 0;
    for (int i = 0; i < s->g->nvalues; i++) {
        const Value *v = s->g->values[i];
        if (v->role != STATE_MEMORY || !is_state(v) || !ir_value_live(s->g, v)) continue;
        float *ring = state_of(s, v);
        if (!ring) return false;
        memset(ring, 0, sizeof *ring * ir_state_numel(v));
        if (v->capacity > rows) rows = v->capacity;
    }
    s->fill = rows; /* every ring's rows are now earlier positions' (zero) layer inputs */
    return true;
}

int interp_session_capacity(const InterpSession *s) {
    int cap = ir_position_limit(s->g->spec);
    for (int i = 0; i < s->g->nvalues; i++) {
        const Value *v = s->g->values[i];
        if (is_state(v) && v->role != STATE_RECURRENT && v->role != STATE_MEMORY && ir_value_live(s->g, v) && v->capacity < cap) cap = v->capacity;
    }
    return cap;
}

size_t interp_session_state_bytes(const InterpSession *s) { return ir_state_bytes(s->g); }

const float *interp_session_state(const InterpSession *s, int value_id, int *capacity) {
    if (!s || value_id < 0 || value_id >= s->g->nvalues || !is_state(s->g->values[value_id])) return NULL;
    if (capacity) *capacity = s->g->values[value_id]->capacity;
    return s->state[value_id];
}

/* The state array of v (allocated zeroed on first use); NULL when out of memory. */
static float *state_of(InterpSession *s, const Value *v) {
    if (!s->state[v->id]) s->state[v->id] = calloc(ir_state_numel(v) + 1, sizeof(float));
    return s->state[v->id];
}

/* The rows of a state value before its token dimension (outer) and after it (inner), in elements. */
static void state_strides(const Value *v, size_t *outer, size_t *inner) {
    int k = 0;
    *outer = *inner = 1;
    int axis = ir_token_axis(v) < 0 ? v->rank : ir_token_axis(v);
    while (k < axis) *outer *= (size_t)ir_dim(v, k++);
    for (int i = k + 1; i < v->rank; i++) *inner *= (size_t)ir_dim(v, i);
}

/* The rows P..P+T-1 of a state value, copied into a dense [.., T, ..] array (malloc'd). */
static float *state_window(const Value *v, const float *st, int P, int T) {
    if (v->role == STATE_RECURRENT) { /* one vector, no token dimension: all of it */
        float *w = malloc(sizeof *w * (ir_state_numel(v) + 1));
        if (w) memcpy(w, st, sizeof *w * ir_state_numel(v));
        return w;
    }
    size_t outer, inner;
    state_strides(v, &outer, &inner);
    float *w = malloc(sizeof *w * (outer * (size_t)T * inner + 1));
    if (!w) return NULL;
    for (size_t o = 0; o < outer; o++)
        memcpy(w + o * (size_t)T * inner, st + (o * (size_t)v->capacity + (size_t)P) * inner, sizeof *w * (size_t)T * inner);
    return w;
}

/* A sliding state after a call that left `held` rows: its last min(held, keep) rows move to the front. */
static void state_slide(const Value *v, float *st, int held) {
    int kept = held < v->keep ? held : v->keep;
    if (!st || kept == held) return;
    size_t outer, inner;
    state_strides(v, &outer, &inner);
    for (size_t o = 0; o < outer; o++) {
        float *base = st + o * (size_t)v->capacity * inner;
        memmove(base, base + (size_t)(held - kept) * inner, sizeof *st * (size_t)kept * inner);
    }
}

/* After a call of T tokens. Sliding states (a PIA cache) grow until the segment is full, as the authors' code
 * runs it: then their last min(held, keep) rows stay and the next segment starts (docs/attention/pia.md). */
static void session_commit(InterpSession *s, int T) {
    int held = s->fill + T, fill = held;
    bool slides = ir_state_keep(s->g) >= 0;
    s->seg += T;
    if (slides && s->seg < s->g->spec->segment) {
        s->fill = held;
        return;
    }
    s->seg = 0;
    for (int i = 0; i < s->g->nvalues; i++) {
        const Value *v = s->g->values[i];
        if (!is_state(v) || !v->slides || !ir_value_live(s->g, v)) continue;
        state_slide(v, s->state[i], held);
        if (v->keep < fill) fill = v->keep;
    }
    s->fill = fill;
}

int interp_session_room(const InterpSession *s) {
    return s && ir_state_keep(s->g) >= 0 ? s->g->spec->segment - s->seg : INT_MAX;
}

/* Copies of the session's memory rings (per value id; NULL entries for other values); NULL when out of memory. */
static float **save_memories(const InterpSession *s) {
    const Graph *g = s->g;
    float **saved = calloc((size_t)g->nvalues + 1, sizeof *saved);
    for (int i = 0; saved && i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->role != STATE_MEMORY || !s->state[i]) continue;
        size_t bytes = sizeof(float) * ir_state_numel(v);
        saved[i] = malloc(bytes + 1);
        if (!saved[i]) {
            for (int k = 0; k < i; k++) free(saved[k]);
            free(saved);
            return NULL;
        }
        memcpy(saved[i], s->state[i], bytes);
    }
    return saved;
}

/* Puts the saved rings back when restore (the forward failed) and frees the copies. */
static void restore_memories(InterpSession *s, float **saved, bool restore) {
    for (int i = 0; i < s->g->nvalues; i++) {
        if (saved[i] && restore) memcpy(s->state[i], saved[i], sizeof(float) * ir_state_numel(s->g->values[i]));
        free(saved[i]);
    }
    free(saved);
}

bool interp_derive(const Graph *g, Diag *d, const float *const *weights, float **derived) {
    Run r = {.g = g, .d = d, .T = 1};
    r.buf = calloc((size_t)g->nvalues + 1, sizeof *r.buf);
    bool ok = r.buf != NULL;
    if (!ok) fail(&r, NULL, "out of memory");
    for (int i = 0; ok && i < g->nvalues; i++) r.buf[i] = g->values[i]->cls == VC_WEIGHT ? (float *)weights[i] : NULL;
    for (int i = 0; ok && i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        const Value *o = g->values[n->out];
        if (n->dead || !ir_value_derived(o)) continue;
        for (int k = 0; ok && k < n->nin; k++)
            if (!r.buf[n->in[k]]) ok = fail(&r, n, "input %s of a derived tensor is not a supplied weight", g->values[n->in[k]]->name);
        float *y = ok ? calloc(ir_state_numel(o) + 1, sizeof *y) : NULL;
        if (ok && !y) ok = fail(&r, n, "out of memory");
        if (ok) {
            derived[o->id] = r.buf[o->id] = y;
            ok = run_node(&r, n, y, o);
        }
    }
    for (int i = 0; !ok && i < g->nvalues; i++) /* on failure the caller gets nothing */
        if (ir_value_derived(g->values[i])) {
            free(derived[i]);
            derived[i] = NULL;
        }
    free(r.buf);
    return ok;
}

bool interp_run(const Graph *g, Diag *d, const float *const *weights, const int32_t *tokens, int ntokens, float *logits) {
    return interp_run_values(g, d, weights, tokens, ntokens, logits, NULL);
}

bool interp_run_values(const Graph *g, Diag *d, const float *const *weights, const int32_t *tokens, int ntokens,
                       float *logits, float **values) {
    InterpSession *s = interp_session_new(g);
    if (!s) {
        diag_plain_error(d, "interp: out of memory");
        return false;
    }
    bool ok = interp_forward(s, d, weights, tokens, ntokens, logits, values);
    interp_session_free(s);
    return ok;
}

/* The checks before a forward: stage, token count, room in the states. */
static bool forward_checks(Run *r, const InterpSession *s, const float *const *weights, const float *logits) {
    const Graph *g = r->g;
    if (ir_stage_index(g->stage) < ir_stage_index("layouts")) return fail(r, NULL, "the graph must go through the layouts pass first");
    if (r->T < 1 || r->T > g->spec->segment)
        return fail(r, NULL, "%d tokens: a forward takes 1 to %d (the segment length)", r->T, g->spec->segment);
    if (!r->tokens || !logits || !weights) return fail(r, NULL, "missing tokens, logits or weights");
    int cap = interp_session_capacity(s);
    if (r->P + r->T > cap)
        return fail(r, NULL, "%d tokens at position %d go past the %d positions the model can address "
                    "(its state capacity); reset the session to start a new sequence", r->T, r->P, cap);
    if (r->T > interp_session_room(s))
        return fail(r, NULL, "%d tokens cross the end of the segment (%d more fit): a PIA session's calls stop at "
                    "segment boundaries", r->T, interp_session_room(s));
    return true;
}

bool interp_forward(InterpSession *s, Diag *d, const float *const *weights, const int32_t *tokens, int ntokens,
                    float *logits, float **values) {
    const Graph *g = s->g;
    /* a recurrent model's forward is one window: positions restart, only h_prev carries over */
    Run r = {.g = g, .d = d, .T = ntokens, .P = ir_recurrent(g) ? 0 : s->fill, .tokens = tokens, .sess = s};
    if (!forward_checks(&r, s, weights, logits)) return false;
    r.buf = calloc((size_t)g->nvalues, sizeof *r.buf);
    bool *owned = calloc((size_t)g->nvalues, sizeof *owned);
    bool ok = r.buf && owned;
    if (!ok) fail(&r, NULL, "out of memory");
    for (int i = 0; ok && i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (ir_value_derived(v) && ir_value_live(g, v)) r.buf[i] = (float *)weights[i]; /* NULL: computed below */
        if (v->cls != VC_WEIGHT || !ir_value_live(g, v)) continue;
        if (!weights[i]) ok = fail(&r, NULL, "weight %s was not supplied", v->weight_name);
        r.buf[i] = (float *)weights[i];
    }
    /* last live use of each value, so arrays are freed as soon as possible */
    int *last = malloc(sizeof *last * ((size_t)g->nvalues + 1));
    if (ok && !last) ok = fail(&r, NULL, "out of memory");
    for (int i = 0; ok && i < g->nvalues; i++) last[i] = -1;
    for (int i = 0; ok && i < g->nnodes; i++)
        if (!g->nodes[i]->dead)
            for (int k = 0; k < g->nodes[i]->nin; k++) last[g->nodes[i]->in[k]] = i;
    for (int i = 0; ok && i < g->nvalues; i++) /* a memory is read (the earlier calls') before its write */
        if (g->values[i]->role == STATE_MEMORY && ir_value_live(g, g->values[i]) &&
            !(r.buf[i] = state_of(s, g->values[i])))
            ok = fail(&r, NULL, "out of memory");
    float **saved = ok ? save_memories(s) : NULL; /* a failed forward leaves the memories as they were */
    if (ok && !saved) ok = fail(&r, NULL, "out of memory");
    for (int i = 0; ok && i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        if (n->dead) continue;
        const Value *o = g->values[n->out];
        if (ir_value_derived(o) && r.buf[o->id]) continue; /* computed when the weights loaded */
        for (int k = 0; k < n->nin; k++) {
            const Value *v = g->values[n->in[k]];
            if (v->cls != VC_INPUT && !r.buf[v->id]) { ok = fail(&r, n, "input %s has not been computed", v->name); break; }
        }
        if (!ok) break;
        bool state = is_state(o);
        size_t count = ir_value_derived(o) ? ir_state_numel(o) : numel(&r, o);
        float *y = state ? state_of(s, o) : calloc(count + 1, sizeof *y);
        if (!y) { ok = fail(&r, n, "out of memory"); break; }
        r.buf[o->id] = y;
        owned[o->id] = !state;
        ok = run_node(&r, n, y, o);
        if (ok && state && values && o->role != STATE_MEMORY && !(values[o->id] = state_window(o, y, r.P, ntokens)))
            ok = fail(&r, n, "out of memory"); /* a memory ring is not handed out (its rows are not a window) */
        for (int k = 0; k < n->nin; k++) {
            int v = n->in[k];
            if (last[v] == i && owned[v] && v != g->logits) {
                if (values) values[v] = r.buf[v]; /* handed over instead of freed */
                else free(r.buf[v]);
                r.buf[v] = NULL;
                owned[v] = false;
            }
        }
    }
    if (ok) {
        const Value *lo = g->values[g->logits];
        if (!r.buf[lo->id]) ok = fail(&r, NULL, "the logits were not computed");
        else memcpy(logits, r.buf[lo->id], sizeof(float) * numel(&r, lo));
    }
    for (int i = 0; r.buf && owned && i < g->nvalues; i++) {
        if (!owned[i]) continue;
        if (values && ok) values[i] = r.buf[i];
        else free(r.buf[i]);
    }
    for (int i = 0; values && !ok && i < g->nvalues; i++) { /* on failure the caller gets nothing */
        free(values[i]);
        values[i] = NULL;
    }
    free(r.buf);
    free(owned);
    free(last);
    if (saved) restore_memories(s, saved, !ok);
    if (ok && !ir_recurrent(g)) session_commit(s, ntokens); /* a recurrent model's forward is one window at 0 */
    return ok;
}
