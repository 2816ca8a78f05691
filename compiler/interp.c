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
 *
 * Reverse mode (interp_grad, docs/training.md): each op's interp_backward_* sits beside its forward and is
 * named in the same op-table row. One forward from position 0 keeps every value; the backward visits the
 * live nodes in reverse, each adding its inputs' gradients (double arrays at the forward's shapes, a KV
 * value's being that of its T-row window) from its output's.
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

/* d act(x) / dx, in double (the forward's formulas differentiated). */
static double act_derivative(Activation a, double x) {
    switch (a) {
    case ACT_NONE: return 1.0;
    case ACT_RELU: return x > 0.0 ? 1.0 : 0.0;
    case ACT_GELU: return 0.5 * (1.0 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2.0 * 3.14159265358979323846);
    case ACT_GELU_TANH: {
        double c = sqrt(2.0 / 3.14159265358979323846), u = c * (x + 0.044715 * x * x * x), th = tanh(u);
        return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * c * (1.0 + 3.0 * 0.044715 * x * x);
    }
    case ACT_SILU: {
        double sg = 1.0 / (1.0 + exp(-x));
        return sg * (1.0 + x * (1.0 - sg));
    }
    }
    return 1.0;
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
    double **grad;        /* backward (interp_grad): per value, d loss / d value at its forward shape (NULL: none
                             yet); a state value's is that of the window of T rows the call wrote (P = 0) */
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

/* The gradient array of value id (zeroed on first use, at its shape in this call); NULL when out of memory. */
static double *grad_of(Run *r, int id) {
    const Value *v = r->g->values[id];
    if (!r->grad[id]) r->grad[id] = calloc((ir_value_derived(v) ? ir_state_numel(v) : numel(r, v)) + 1, sizeof(double));
    return r->grad[id];
}

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

/* Backward of embed: dy goes to each token's table row and to its position's row (learned positions). */
bool interp_backward_embed(Run *r, const Node *n, const double *dy, const Value *o) {
    (void)o;
    int D = ir_dim(val(r, n, 1), 1), P = n->pos_mod ? r->P % n->pos_mod : r->P;
    double *dtab = grad_of(r, n->in[1]), *dpos = n->nin > 2 ? grad_of(r, n->in[2]) : NULL;
    if (!dtab || (n->nin > 2 && !dpos)) return fail(r, n, "out of memory");
    for (int t = 0; t < r->T; t++)
        for (int c = 0; c < D; c++) {
            double gv = dy[(size_t)t * D + c];
            dtab[(size_t)r->tokens[t] * D + c] += gv;
            if (dpos) dpos[(size_t)(P + t) * D + c] += gv;
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

/* Backward of embed_band: a token inside the band sends dy to its table row. */
bool interp_backward_embed_band(Run *r, const Node *n, const double *dy, const Value *o) {
    (void)o;
    int W = ir_dim(val(r, n, 1), 1);
    double *dtab = grad_of(r, n->in[1]);
    if (!dtab) return fail(r, n, "out of memory");
    for (int t = 0; t < r->T; t++) {
        int32_t id = r->tokens[t];
        if (id < n->band_lo || id >= n->band_hi) continue;
        for (int c = 0; c < W; c++) dtab[(size_t)(id - n->band_lo) * W + c] += dy[(size_t)t * W + c];
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

/* Backward of pos_add: dx = dy * scale; a learned position's row receives dy. */
bool interp_backward_pos_add(Run *r, const Node *n, const double *dy, const Value *o) {
    (void)o;
    int D = ir_dim(val(r, n, 0), 1), P = n->pos_mod ? r->P % n->pos_mod : r->P;
    double *dx = grad_of(r, n->in[0]), *dpos = n->nin > 1 ? grad_of(r, n->in[1]) : NULL;
    if (!dx || (n->nin > 1 && !dpos)) return fail(r, n, "out of memory");
    for (int t = 0; t < r->T; t++)
        for (int c = 0; c < D; c++) {
            double gv = dy[(size_t)t * D + c];
            dx[(size_t)t * D + c] += gv * n->scale;
            if (dpos) dpos[(size_t)(P + t) * D + c] += gv;
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

/*
 * Backward of adaptive_logprob. y = z - lse over one softmax, so dz_j = dy_j - p_j * sum(dy) within it: the head
 * softmax (shortlist and cluster logits) receives every row's dy (a cluster logit's own dy is the sum over its
 * tail's words), a tail's softmax that tail's words' dy.
 */
bool interp_backward_adaptive_logprob(Run *r, const Node *n, const double *dy, const Value *o) {
    int V = ir_dim(o, 1), c0 = ir_dim(val(r, n, 0), 1), nt = n->ntails;
    for (int k = 0; k < n->nin; k++)
        if (!grad_of(r, n->in[k])) return fail(r, n, "out of memory");
    for (int t = 0; t < r->T; t++) {
        const float *head = in(r, n, 0) + (size_t)t * c0, *cl = in(r, n, 1) + (size_t)t * nt;
        const double *g = dy + (size_t)t * V;
        double *dhead = r->grad[n->in[0]] + (size_t)t * c0, *dcl = r->grad[n->in[1]] + (size_t)t * nt;
        double lse = logsumexp2(head, c0, cl, nt), total = 0;
        for (int j = 0; j < V; j++) total += g[j];
        for (int j = 0; j < c0; j++) dhead[j] += g[j] - exp(head[j] - lse) * total;
        int off = c0;
        for (int i = 1; i <= nt; i++) {
            int w = ir_dim(val(r, n, 1 + i), 1), c = n->reversed ? nt - i : i - 1;
            const float *tail = in(r, n, 1 + i) + (size_t)t * w;
            double *dtail = r->grad[n->in[1 + i]] + (size_t)t * w, tsum = 0, tlse = logsumexp2(tail, w, NULL, 0);
            for (int j = 0; j < w; j++) tsum += g[off + j];
            dcl[c] += tsum - exp(cl[c] - lse) * total;
            for (int j = 0; j < w; j++) dtail[j] += g[off + j] - exp(tail[j] - tlse) * tsum;
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

/*
 * Backward of norm. LayerNorm: dx = inv (dxh - mean(dxh) - xh mean(dxh xh)) with dxh = dy gamma; RMSNorm:
 * dx = inv dxh - x inv^3 mean(dxh x). With a fused add (+add) its operands get their gradient through the add
 * node that still defines input 0, so inputs 3 and 4 receive nothing here.
 */
bool interp_backward_norm(Run *r, const Node *n, const double *dy, const Value *o) {
    (void)o;
    const float *x = in(r, n, 0), *g = in(r, n, 1);
    bool ln = n->norm == NORM_LAYERNORM;
    int D = ir_dim(val(r, n, 0), 1);
    double *dx = grad_of(r, n->in[0]), *dg = grad_of(r, n->in[1]), *db = ln ? grad_of(r, n->in[2]) : NULL;
    double *dxh = malloc(sizeof *dxh * (size_t)D), *xh = malloc(sizeof *xh * (size_t)D);
    if (!dx || !dg || (ln && !db) || !dxh || !xh) {
        free(dxh);
        free(xh);
        return fail(r, n, "out of memory");
    }
    for (int t = 0; t < r->T; t++) {
        const float *xr = x + (size_t)t * D;
        const double *gy = dy + (size_t)t * D;
        double mean = 0, var = 0, m1 = 0, m2 = 0;
        if (ln) {
            for (int c = 0; c < D; c++) mean += xr[c];
            mean /= D;
        }
        for (int c = 0; c < D; c++) var += (xr[c] - mean) * (xr[c] - mean);
        double inv = 1.0 / sqrt(var / D + n->eps);
        for (int c = 0; c < D; c++) {
            xh[c] = (xr[c] - mean) * inv;
            dxh[c] = gy[c] * g[c];
            dg[c] += gy[c] * xh[c];
            if (db) db[c] += gy[c];
            m1 += dxh[c];
            m2 += dxh[c] * xh[c];
        }
        m1 /= D;
        m2 /= D;
        for (int c = 0; c < D; c++)
            dx[(size_t)t * D + c] += ln ? inv * (dxh[c] - m1 - xh[c] * m2) : inv * (dxh[c] - xh[c] * m2);
    }
    free(dxh);
    free(xh);
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

/*
 * Backward of matmul and logits: the pre-activation z = x W + b is recomputed, dz = dy act'(z); the residual
 * gets dy, the bias dz, x dz W^T and W x^T dz (in W's stored order).
 */
bool interp_backward_matmul(Run *r, const Node *n, const double *dy, const Value *o) {
    const float *x = in(r, n, 0), *w = in(r, n, 1);
    int K = ir_dim(val(r, n, 0), 1), N = ir_dim(o, 1), k = 2;
    bool has_bias = n->op == OP_MATMUL ? n->epi.bias : n->out_bias;
    Activation gate_act = n->op == OP_MATMUL ? n->epi.gate : ACT_NONE;
    int bias_in = has_bias ? k++ : -1, gate_in = gate_act != ACT_NONE ? k++ : -1;
    int res_in = n->op == OP_MATMUL && n->epi.residual ? k++ : -1;
    Activation act = n->op == OP_MATMUL ? n->epi.act : ACT_NONE;
    const float *bias = has_bias ? in(r, n, bias_in) : NULL, *gate = gate_in >= 0 ? in(r, n, gate_in) : NULL;
    double *dx = grad_of(r, n->in[0]), *dw = grad_of(r, n->in[1]);
    double *db = has_bias ? grad_of(r, n->in[bias_in]) : NULL, *dres = res_in >= 0 ? grad_of(r, n->in[res_in]) : NULL;
    double *dgate = gate_in >= 0 ? grad_of(r, n->in[gate_in]) : NULL;
    double *dz = malloc(sizeof *dz * (size_t)N);
    if (!dx || !dw || (has_bias && !db) || (res_in >= 0 && !dres) || (gate_in >= 0 && !dgate) || !dz) {
        free(dz);
        return fail(r, n, "out of memory");
    }
    for (int t = 0; t < r->T; t++) {
        const float *xr = x + (size_t)t * K;
        const double *gy = dy + (size_t)t * N;
        for (int j = 0; j < N; j++) {
            double gz = gy[j];
            if (act != ACT_NONE || gate) { /* the forward's fp32 pre-activation, recomputed */
                double s = 0;
                for (int i = 0; i < K; i++) s += (double)xr[i] * (n->trans_w ? w[(size_t)j * K + i] : w[(size_t)i * N + j]);
                float z = (float)s;
                if (bias) z = (float)((double)z + bias[j]);
                if (gate) { /* y = act(z) * gate_act(g): g gets dy act(z) gate_act'(g), z dy gate_act(g) act'(z) */
                    float g = gate[(size_t)t * N + j];
                    dgate[(size_t)t * N + j] += gz * act_apply(act, z) * act_derivative(gate_act, g);
                    gz *= act_apply(gate_act, g);
                }
                gz *= act_derivative(act, z);
            }
            dz[j] = gz;
            if (db) db[j] += gz;
            if (dres) dres[(size_t)t * N + j] += gy[j];
        }
        double *dxr = dx + (size_t)t * K;
        for (int i = 0; i < K; i++) {
            double s = 0;
            if (n->trans_w)
                for (int j = 0; j < N; j++) {
                    s += dz[j] * w[(size_t)j * K + i];
                    dw[(size_t)j * K + i] += dz[j] * xr[i];
                }
            else {
                const float *wr = w + (size_t)i * N;
                double *dwr = dw + (size_t)i * N, xv = xr[i];
                for (int j = 0; j < N; j++) {
                    s += dz[j] * wr[j];
                    dwr[j] += xv * dz[j];
                }
            }
            dxr[i] += s;
        }
    }
    free(dz);
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

/* Backward of kv_write: the gradient of the window's key and value rows goes back to qkv's k and v columns. */
bool interp_backward_kv_write(Run *r, const Node *n, const double *dkv, const Value *ov) {
    int H = n->heads, hd = n->head_dim, T = r->T, W = 3 * H * hd;
    double *dqkv = grad_of(r, n->in[0]);
    if (!dqkv) return fail(r, n, "out of memory");
    for (int which = 0; which < 2; which++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++)
                for (int d = 0; d < hd; d++)
                    dqkv[(size_t)t * W + (size_t)(which + 1) * H * hd + (size_t)h * hd + d] +=
                        dkv[kv_index(ov->order, which, h, t, d, H, T, hd)];
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

/* Backward of the position-infused table: row s is p_s W (columns 0..2·H·hd of c_attn), so
 * dW[d][c] += sum_s p_s[d] dy[s][c], in W's stored order. */
bool interp_backward_pia_pos(Run *r, const Node *n, const double *dy, const Value *o) {
    const Value *wv = val(r, n, 0);
    int HD = n->heads * n->head_dim, W = 2 * HD, stride = ir_dim(o, 1), slots = o->capacity;
    bool out_in = ir_dim(wv, 0) == 3 * HD && wv->order == ORD_OUT_IN;
    int D = out_in ? ir_dim(wv, 1) : ir_dim(wv, 0);
    double *p = malloc(sizeof *p * (size_t)D), *dw = grad_of(r, n->in[0]);
    if (!p || !dw) {
        free(p);
        return fail(r, n, "out of memory");
    }
    for (int s = 0; s < slots; s++) {
        const double *g = dy + (size_t)s * stride;
        bool any = false;
        for (int c = 0; c < W && !any; c++) any = g[c] != 0;
        if (!any) continue; /* slots no query of the call reached */
        for (int d = 0; d < D; d++) p[d] = pia_sinusoid(n->pia_style, s, d, D);
        for (int c = 0; c < W; c++)
            for (int d = 0; d < D; d++) dw[out_in ? (size_t)c * D + d : (size_t)d * 3 * HD + c] += p[d] * g[c];
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

/* Key element d of head h at slot s, plus the position-infused key row when pos is given. */
static double infused_key(const float *kv, const float *pos, int PW, DimOrder o, int h, int s, int d, int H, int T, int hd) {
    return (double)kv[kv_index(o, 0, h, s, d, H, T, hd)] + (pos ? pos[(size_t)s * PW + (size_t)(H + h) * hd + d] : 0.0);
}

/*
 * Backward of attention over the window of one call at P = 0 (the KV value holds T rows): the probabilities are
 * recomputed over the keys the kind's pattern shows, then dV += p dy, ds = p (dp - sum p dp) with dp = dy . v,
 * dq += scale ds K and dK += scale ds q. Position-infused attention scores (q + pq_t)·(k + pk_s): the same ds
 * goes to the table's query row t (as dq) and key row s (as dK). Recurrence keys are not differentiated yet.
 */
bool interp_backward_attention(Run *r, const Node *n, const double *dy, const Value *ov) {
    (void)ov;
    if (n->rec_key) return fail(r, n, "the backward of recurrence-key attention is not implemented yet");
    if (r->P != 0) return fail(r, n, "the backward runs one call from position 0 (P is %d)", r->P);
    const float *qkv = in(r, n, 0), *kv = in(r, n, 1);
    const float *pos = n->infused ? in(r, n, 2) : NULL; /* position-infused: W_q p_s | W_k p_s per slot */
    int PW = pos ? ir_dim(val(r, n, 2), 1) : 0;
    double *dpos = pos ? grad_of(r, n->in[2]) : NULL;
    if (pos && !dpos) return fail(r, n, "out of memory");
    DimOrder o = val(r, n, 1)->order;
    int H = n->heads, hd = n->head_dim, T = r->T, W = 3 * H * hd;
    AttnPattern pat;
    char err[256];
    if (!attn_pattern_build(&pat, &n->attn, n->layer, H, val(r, n, 1)->capacity, err, sizeof err)) return fail(r, n, "%s", err);
    double scale = 1.0 / sqrt((double)hd);
    double *p = malloc(sizeof *p * (size_t)T), *dp = malloc(sizeof *dp * (size_t)T);
    double *qi = malloc(sizeof *qi * (size_t)hd); /* the query, positions infused */
    double *dqkv = grad_of(r, n->in[0]), *dkv = grad_of(r, n->in[1]);
    bool ok = p && dp && qi && dqkv && dkv;
    for (int h = 0; ok && h < H; h++)
        for (int t = 0; t < T; t++) {
            const float *q = qkv + (size_t)t * W + (size_t)h * hd;
            const double *gy = dy + (size_t)t * H * hd + (size_t)h * hd;
            double mx = -INFINITY, sum = 0, pdp = 0;
            for (int d = 0; d < hd; d++) qi[d] = (double)q[d] + (pos ? pos[(size_t)t * PW + (size_t)h * hd + d] : 0.0);
            for (int s = 0; s <= t; s++) {
                if (!attn_pattern_visible(&pat, h, t, s)) continue;
                double dot = 0;
                for (int d = 0; d < hd; d++) dot += qi[d] * infused_key(kv, pos, PW, o, h, s, d, H, T, hd);
                p[s] = dot * scale;
                if (p[s] > mx) mx = p[s];
            }
            for (int s = 0; s <= t; s++)
                if (attn_pattern_visible(&pat, h, t, s)) sum += p[s] = exp(p[s] - mx);
            if (sum <= 0) continue; /* a query that sees no key output zeros */
            for (int s = 0; s <= t; s++) {
                if (!attn_pattern_visible(&pat, h, t, s)) continue;
                p[s] /= sum;
                double g = 0;
                for (int d = 0; d < hd; d++) {
                    g += gy[d] * kv[kv_index(o, 1, h, s, d, H, T, hd)];
                    dkv[kv_index(o, 1, h, s, d, H, T, hd)] += p[s] * gy[d];
                }
                dp[s] = g;
                pdp += p[s] * g;
            }
            double *dq = dqkv + (size_t)t * W + (size_t)h * hd;
            double *dpq = dpos ? dpos + (size_t)t * PW + (size_t)h * hd : NULL;
            for (int s = 0; s <= t; s++) {
                if (!attn_pattern_visible(&pat, h, t, s)) continue;
                double ds = p[s] * (dp[s] - pdp) * scale;
                double *dpk = dpos ? dpos + (size_t)s * PW + (size_t)(H + h) * hd : NULL;
                for (int d = 0; d < hd; d++) {
                    double k = infused_key(kv, pos, PW, o, h, s, d, H, T, hd);
                    dq[d] += ds * k;
                    dkv[kv_index(o, 0, h, s, d, H, T, hd)] += ds * qi[d];
                    if (dpq) dpq[d] += ds * k, dpk[d] += ds * qi[d];
                }
            }
        }
    free(p);
    free(dp);
    free(qi);
    attn_pattern_free(&pat);
    return ok || fail(r, n, "out of memory");
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

/* Backward of relative attention (mem_txl.c): the memory ring is the earlier segments' layer inputs, a constant
 * (stop-gradient); gradients go to qkv, the relative keys, u, v and (through the memory rows' keys) w_qkv. */
bool interp_backward_rel_attention(Run *r, const Node *n, const double *dy, const Value *o) {
    (void)o;
    bool mem = n->memory > 0;
    TxlAttnCall c = {.T = r->T, .P = r->P, .H = n->heads, .hd = n->head_dim, .D = r->g->spec->d_model,
                     .memory = n->memory, .qkv = in(r, n, 0), .rel = in(r, n, 1), .rel_rows = val(r, n, 1)->capacity,
                     .u = in(r, n, 2), .v = in(r, n, 3), .mem = mem ? in(r, n, 5) : NULL,
                     .w_qkv = mem ? in(r, n, 4) : NULL, .w_qkv_trans = mem && val(r, n, 4)->order == ORD_OUT_IN,
                     .clamp = n->attn.prm.clamp, .same_length = n->attn.prm.same_length != 0};
    TxlAttnGrads g = {.dqkv = grad_of(r, n->in[0]), .drel = grad_of(r, n->in[1]), .du = grad_of(r, n->in[2]),
                      .dv = grad_of(r, n->in[3]), .dw_qkv = mem ? grad_of(r, n->in[4]) : NULL};
    if (!g.dqkv || !g.drel || !g.du || !g.dv || (mem && !g.dw_qkv)) return fail(r, n, "out of memory");
    return txl_rel_attention_backward_ref(&c, dy, &g) || fail(r, n, "out of memory, or the relative keys hold fewer "
                                                                     "than the call's distances");
}

/* Backward of mem_write: nothing. The memory is read by later segments only, through which Transformer-XL stops
 * the gradient; within a call attention reads the ring before this write. */
bool interp_backward_mem_write(Run *r, const Node *n, const double *dy, const Value *o) {
    (void)r, (void)n, (void)dy, (void)o;
    return true;
}

/* Backward of the relative keys: dW_r += R_d^T dr[d]. */
bool interp_backward_rel_keys(Run *r, const Node *n, const double *dy, const Value *o) {
    const Value *wr = val(r, n, 0);
    double *dw = grad_of(r, n->in[0]);
    if (!dw) return fail(r, n, "out of memory");
    txl_rel_keys_backward_ref(wr->order == ORD_OUT_IN, r->g->spec->d_model, n->heads * n->head_dim, o->capacity, dy, dw);
    return true;
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

/* Backward of bias: dx = dy, db = dy summed over the rows. */
bool interp_backward_bias(Run *r, const Node *n, const double *dy, const Value *o) {
    size_t cnt = numel(r, o), N = (size_t)ir_dim(o, 1);
    double *dx = grad_of(r, n->in[0]), *db = grad_of(r, n->in[1]);
    if (!dx || !db) return fail(r, n, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        dx[i] += dy[i];
        db[i % N] += dy[i];
    }
    return true;
}

bool interp_act(Run *r, const Node *n, float *y, const Value *o) {
    const float *x = in(r, n, 0);
    size_t cnt = numel(r, o);
    for (size_t i = 0; i < cnt; i++) y[i] = round_to_dtype(act_apply(n->act, x[i]), o->dtype);
    return true;
}

/* Backward of act: dx = dy act'(x). */
bool interp_backward_act(Run *r, const Node *n, const double *dy, const Value *o) {
    const float *x = in(r, n, 0);
    size_t cnt = numel(r, o);
    double *dx = grad_of(r, n->in[0]);
    if (!dx) return fail(r, n, "out of memory");
    for (size_t i = 0; i < cnt; i++) dx[i] += dy[i] * act_derivative(n->act, x[i]);
    return true;
}

bool interp_add(Run *r, const Node *n, float *y, const Value *o) {
    const float *a = in(r, n, 0), *b = in(r, n, 1);
    size_t cnt = numel(r, o);
    for (size_t i = 0; i < cnt; i++) y[i] = round_to_dtype((float)((double)a[i] + b[i]), o->dtype);
    return true;
}

/* Backward of add: both operands get dy. */
bool interp_backward_add(Run *r, const Node *n, const double *dy, const Value *o) {
    size_t cnt = numel(r, o);
    double *da = grad_of(r, n->in[0]), *db = grad_of(r, n->in[1]);
    if (!da || !db) return fail(r, n, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        da[i] += dy[i];
        db[i] += dy[i];
    }
    return true;
}

/* A gated FFN unit: y = up * act(gate), elementwise (swiglu: SiLU, geglu: erf GELU). */
bool interp_gate(Run *r, const Node *n, float *y, const Value *o) {
    const float *u = in(r, n, 0), *g = in(r, n, 1);
    size_t cnt = numel(r, o);
    for (size_t i = 0; i < cnt; i++) y[i] = round_to_dtype((float)((double)u[i] * act_apply(n->act, g[i])), o->dtype);
    return true;
}

/* Backward of gate: up gets dy act(gate), gate dy up act'(gate). */
bool interp_backward_gate(Run *r, const Node *n, const double *dy, const Value *o) {
    const float *u = in(r, n, 0), *g = in(r, n, 1);
    size_t cnt = numel(r, o);
    double *du = grad_of(r, n->in[0]), *dg = grad_of(r, n->in[1]);
    if (!du || !dg) return fail(r, n, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        du[i] += dy[i] * act_apply(n->act, g[i]);
        dg[i] += dy[i] * u[i] * act_derivative(n->act, g[i]);
    }
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

/* ------------------------------------------------------------------ */
/* Reverse mode (docs/training.md)                                      */
/* ------------------------------------------------------------------ */

static bool reject_undifferentiable(const Graph *g, Diag *d);

bool interp_grad_supported(const Graph *g, Diag *d) { return !reject_undifferentiable(g, d); }

/* What of n's forward its backward does not follow yet ("" when nothing): rotary positions, ALiBi's score term
 * and grouped K/V heads are in the forward of kv_write and attention, not yet in their backward. */
static const char *undifferentiated_setting(const Node *n) {
    if (n->op != OP_ATTENTION && n->op != OP_KV_WRITE) return "";
    if (n->rope) return " with rotary positions";
    if (n->op == OP_ATTENTION && n->alibi) return " with ALiBi";
    if (node_kv_heads(n) != n->heads) return " with grouped K/V heads";
    return "";
}

/* The first live node whose op has no backward, reported with its .arch line; false when every one has one. */
static bool reject_undifferentiable(const Graph *g, Diag *d) {
    for (int i = 0; i < g->nnodes; i++) {
        const Node *n = g->nodes[i];
        const OpInfo *oi = op_info(n->op);
        const char *setting = n->dead ? "" : undifferentiated_setting(n);
        if (n->dead || (oi && oi->backward && !*setting)) continue;
        const Value *o = g->values[n->out];
        if (n->src.file >= 0)
            diag_error(d, n->src, "op %s%s (layer %d) cannot be differentiated yet: training supports the ops of "
                       "plain forwards (docs/training.md)", op_name(n->op), setting, n->layer);
        else
            diag_plain_error(d, "interp: op %s%s (layer %d, value %s) cannot be differentiated yet (docs/training.md)",
                             op_name(n->op), setting, n->layer, o->name);
        return true;
    }
    return false;
}

/* Reads the logits (row t at logits + t*V) into the loss and d loss / d logits: -log softmax at the target, scaled. */
static double nll_and_grad(const float *logits, const int32_t *targets, int T, int V, double scale, double *dlogits) {
    double loss = 0;
    for (int t = 0; t < T; t++) {
        if (targets[t] < 0) continue;
        const float *z = logits + (size_t)t * V;
        double lse = logsumexp2(z, V, NULL, 0);
        loss -= z[targets[t]] - lse;
        for (int j = 0; j < V; j++) dlogits[(size_t)t * V + j] = scale * (exp(z[j] - lse) - (j == targets[t]));
    }
    return loss;
}

bool interp_grad_segments(const Graph *g) {
    bool memory = false;
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (!ir_value_live(g, v) || !is_state(v)) continue;
        if (v->role != STATE_MEMORY) return false;
        memory = true;
    }
    /* a pre-norm model's rings hold normed rows: see the header */
    return memory && !ir_recurrent(g) && g->spec->norm_place != NORM_PRE;
}

/* Copies of the session's memory rings before a forward writes them (the backward reads what the forward read);
 * NULL entries for the other values. NULL when out of memory. */
static float **memory_snapshot(InterpSession *s) {
    const Graph *g = s->g;
    float **snap = calloc((size_t)g->nvalues + 1, sizeof *snap);
    for (int i = 0; snap && i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->role != STATE_MEMORY || !ir_value_live(g, v)) continue;
        size_t cnt = ir_state_numel(v);
        if (!(snap[i] = malloc(sizeof(float) * (cnt + 1)))) {
            for (int k = 0; k < i; k++) free(snap[k]);
            free(snap);
            return NULL;
        }
        memcpy(snap[i], state_of(s, v), sizeof(float) * cnt);
    }
    return snap;
}

bool interp_grad(const Graph *g, Diag *d, const float *const *weights, const int32_t *tokens, int ntokens,
                 const int32_t *targets, double scale, double *loss, double **wgrad) {
    InterpSession *s = interp_session_new(g);
    if (!s) {
        diag_plain_error(d, "interp: out of memory");
        return false;
    }
    bool ok = interp_grad_on(s, d, weights, tokens, ntokens, targets, scale, loss, wgrad);
    interp_session_free(s);
    return ok;
}

bool interp_grad_on(InterpSession *s, Diag *d, const float *const *weights, const int32_t *tokens, int ntokens,
                    const int32_t *targets, double scale, double *loss, double **wgrad) {
    const Graph *g = s->g;
    if (reject_undifferentiable(g, d)) return false;
    int V = g->spec->vocab;
    for (int t = 0; t < ntokens; t++)
        if (targets[t] >= V) {
            diag_plain_error(d, "interp: target %d at position %d is outside the vocabulary [0, %d)", (int)targets[t], t, V);
            return false;
        }
    Run r = {.g = g, .d = d, .T = ntokens, .P = ir_recurrent(g) ? 0 : interp_session_fill(s), .tokens = tokens};
    float **values = calloc((size_t)g->nvalues + 1, sizeof *values);
    float *logits = malloc(sizeof *logits * ((size_t)ntokens * V + 1));
    float **rings = memory_snapshot(s);
    r.buf = calloc((size_t)g->nvalues + 1, sizeof *r.buf);
    r.grad = calloc((size_t)g->nvalues + 1, sizeof *r.grad);
    bool ok = values && logits && rings && r.buf && r.grad;
    if (!ok) fail(&r, NULL, "out of memory");
    ok = ok && interp_forward(s, d, weights, tokens, ntokens, logits, values);
    for (int i = 0; ok && i < g->nvalues; i++) r.buf[i] = rings[i] ? rings[i] : values[i] ? values[i] : (float *)weights[i];
    double *dlogits = ok ? grad_of(&r, g->logits) : NULL;
    if (ok && !dlogits) ok = fail(&r, NULL, "out of memory");
    if (ok) *loss = nll_and_grad(logits, targets, ntokens, V, scale, dlogits);
    for (int i = g->nnodes - 1; ok && i >= 0; i--) {
        const Node *n = g->nodes[i];
        if (n->dead || !r.grad[n->out]) continue; /* no gradient reaches it */
        ok = op_info(n->op)->backward(&r, n, r.grad[n->out], g->values[n->out]);
    }
    for (int i = 0; ok && i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->cls != VC_WEIGHT || !wgrad[i] || !r.grad[i]) continue;
        size_t cnt = ir_numel(v, 0);
        for (size_t k = 0; k < cnt; k++) wgrad[i][k] += r.grad[i][k];
    }
    for (int i = 0; i < g->nvalues; i++) {
        if (values) free(values[i]);
        if (rings) free(rings[i]);
        if (r.grad) free(r.grad[i]);
    }
    free(values);
    free(rings);
    free(r.grad);
    free(r.buf);
    free(logits);
    return ok;
}
