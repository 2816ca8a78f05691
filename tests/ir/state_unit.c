/*
 * state_unit.c — the interpreter's sessions (docs/ir.md, "State"): for
 * each model given, with seeded random weights,
 *   - one call == chunks of 1 == chunks of 7 through the state (logits
 *     within 1e-5 relative to the largest logit),
 *   - the KV state after the chunked calls equals the K/V the one call
 *     computed (its kv_write windows), row by row,
 *   - a reset session gives the same logits as a fresh one,
 *   - going past the positions the model can address is an error that
 *     leaves the session unchanged,
 *   - the session's state bytes are the KV caches at capacity;
 * and symbolic dimensions evaluate and print as docs/ir.md says; the
 * position input P has no place in the arena; the verifier refuses a state
 * value without a capacity.
 *
 *   state_unit MODEL.arch...
 */
#define _POSIX_C_SOURCE 200809L
#include "../check.h"
#include "shortc.h"

#include <math.h>

/* Seeded weights for every live weight value: N(0, 0.2), norm gains around 1 (rank-1 weights of norms). */
static float **random_weights(const Graph *g, uint64_t seed) {
    RtRng rng = {seed};
    float **w = calloc((size_t)g->nvalues, sizeof *w);
    for (int i = 0; w && i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->cls != VC_WEIGHT) continue;
        size_t n = ir_numel(v, 1);
        w[i] = malloc(sizeof **w * n);
        bool gain = strstr(v->weight_name, "ln_") && strstr(v->weight_name, ".weight");
        for (size_t k = 0; w[i] && k < n; k++)
            w[i][k] = round_to_dtype((float)((gain ? 1.0 : 0.0) + 0.2 * rt_rng_normal(&rng)), ir_weight_layout_dtype(g));
    }
    return w;
}

static void free_all(float **p, int n) {
    for (int i = 0; p && i < n; i++) free(p[i]);
    free(p);
}

/* max |a - b| / max(1, max |a|) over n elements. */
static double rel_diff(const float *a, const float *b, size_t n) {
    double d = 0, m = 1;
    for (size_t i = 0; i < n; i++) {
        if (fabs(a[i] - b[i]) > d) d = fabs(a[i] - b[i]);
        if (fabs(a[i]) > m) m = fabs(a[i]);
    }
    return d / m;
}

/* Feeds tokens[n] to s in calls of `chunk` tokens; logits [n, V]. */
static bool feed(InterpSession *s, Diag *d, float **w, const int32_t *tokens, int n, int chunk, int V, float *logits) {
    for (int at = 0; at < n; at += chunk) {
        int k = n - at < chunk ? n - at : chunk;
        if (!interp_forward(s, d, (const float *const *)w, tokens + at, k, logits + (size_t)at * V, NULL)) return false;
    }
    return true;
}

/* The state of kv value v (capacity rows) against the dense window [.., T, ..] one call handed out. */
static double state_vs_window(const Value *v, const float *st, int cap, const float *win, int T) {
    size_t outer = 1, inner = 1;
    int k = 0, axis = ir_token_axis(v) < 0 ? v->rank : ir_token_axis(v);
    while (k < axis) outer *= (size_t)ir_dim(v, k++);
    for (int i = k + 1; i < v->rank; i++) inner *= (size_t)ir_dim(v, i);
    double worst = 0;
    for (size_t o = 0; o < outer; o++) {
        double r = rel_diff(win + o * (size_t)T * inner, st + o * (size_t)cap * inner, (size_t)T * inner);
        if (r > worst) worst = r;
    }
    return worst;
}

static void test_model(const char *path) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = path, .stop = COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    if (!shortc_compile(&a, &d, &co, &cr)) {
        fprintf(stderr, "%s: does not compile\n", path);
        check_failures++;
        compile_result_free(&cr);
        arena_free(&a);
        return;
    }
    const Graph *g = cr.graph;
    int V = g->spec->vocab, L = g->spec->segment, T = L < 40 ? L : 40;
    float **w = random_weights(g, 7);
    int32_t *tok = malloc(sizeof *tok * (size_t)L);
    for (int i = 0; i < L; i++) tok[i] = (int32_t)((i * 37 + 11) % V);
    size_t n = (size_t)T * V;
    float *one = calloc(n, sizeof *one), *c1 = calloc(n, sizeof *c1), *c7 = calloc(n, sizeof *c7);
    float **vals = calloc((size_t)g->nvalues, sizeof *vals);
    InterpSession *s = interp_session_new(g);
    CHECK(s && interp_forward(s, &d, (const float *const *)w, tok, T, one, vals));
    CHECK(interp_session_fill(s) == T);

    InterpSession *s1 = interp_session_new(g), *s7 = interp_session_new(g);
    CHECK(feed(s1, &d, w, tok, T, 1, V, c1));
    CHECK(feed(s7, &d, w, tok, T, 7, V, c7));
    double r1 = rel_diff(one, c1, n), r7 = rel_diff(one, c7, n);
    CHECK(r1 <= 1e-5);
    CHECK(r7 <= 1e-5);

    /* the chunked session's KV state is the one call's K/V */
    size_t bytes = 0;
    int nstates = 0;
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->role != STATE_KV_CACHE || !ir_value_live(g, v)) continue;
        int cap = 0;
        const float *st = interp_session_state(s1, i, &cap);
        CHECK(st && vals[i] && cap == ir_position_limit(g->spec));
        if (st && vals[i]) CHECK(state_vs_window(v, st, cap, vals[i], T) <= 1e-6);
        bytes += ir_state_numel(v) * (size_t)dtype_size(v->dtype);
        nstates++;
    }
    CHECK(nstates == g->spec->n_layers);
    for (int i = 0; i < g->nvalues; i++) { /* other state; a position-infused model's tables are derived, not state */
        const Value *v = g->values[i];
        if (v->role != STATE_NONE && v->role != STATE_KV_CACHE && !ir_value_derived(v) && ir_value_live(g, v))
            bytes += ir_state_numel(v) * (size_t)dtype_size(v->dtype);
    }
    CHECK(interp_session_state_bytes(s) == bytes && bytes > 0);

    /* reset == fresh */
    interp_session_reset(s7);
    CHECK(interp_session_fill(s7) == 0);
    CHECK(feed(s7, &d, w, tok, T, T, V, c7));
    CHECK(rel_diff(one, c7, n) == 0);

    float *big = calloc((size_t)L * V, sizeof *big);
    int cap = interp_session_capacity(s1);
    FILE *saved = d.out;
    char *msg = NULL;
    size_t msglen = 0;
    if (ir_state_keep(g) >= 0) { /* a sliding cache (PIA) never runs out: after any call it holds `keep` rows */
        interp_session_reset(s1);
        for (int k = 0; k < 3; k++) CHECK(interp_forward(s1, &d, (const float *const *)w, tok, L, big, NULL));
        CHECK(interp_session_fill(s1) == ir_state_keep(g));
    } else {
        /* past the positions: fill the session to its capacity, then one more token */
        interp_session_reset(s1);
        int filled = 0;
        while (filled < cap) {
            int k = cap - filled < L ? cap - filled : L;
            if (!interp_forward(s1, &d, (const float *const *)w, tok, k, big, NULL)) break;
            filled += k;
    }
    CHECK(filled == cap && interp_session_fill(s1) == cap);
    d.out = open_memstream(&msg, &msglen);
    CHECK(!interp_forward(s1, &d, (const float *const *)w, tok, 1, big, NULL));
    fclose(d.out);
    d.out = saved;
    CHECK_HAS(msg, "go past the");
    CHECK(interp_session_fill(s1) == cap);
    free(msg);
    }

    /* P is a scalar input outside the arena; a state without capacity is refused */
    CHECK(g->position >= 0 && g->values[g->position]->cls == VC_INPUT && !ir_value_placed(g->values[g->position]));
    for (int i = 0; i < g->nvalues; i++) {
        Value *v = cr.graph->values[i];
        if (v->role != STATE_KV_CACHE) continue;
        int keep = v->capacity;
        v->capacity = 0;
        saved = d.out;
        msg = NULL;
        d.out = open_memstream(&msg, &msglen);
        CHECK(!ir_verify(cr.graph, &d));
        fclose(d.out);
        d.out = saved;
        CHECK_HAS(msg, "has state role kv_cache with capacity 0");
        free(msg);
        v->capacity = keep;
        break;
    }
    printf("%-18s T=%d chunk1 %.2g chunk7 %.2g, %d KV states of %d rows, %zu bytes\n", g->spec->name, T, r1, r7,
           nstates, cap, bytes);
    free(big);
    interp_session_free(s);
    interp_session_free(s1);
    interp_session_free(s7);
    free_all(vals, g->nvalues);
    free_all(w, g->nvalues);
    free(one);
    free(c1);
    free(c7);
    free(tok);
    compile_result_free(&cr);
    arena_free(&a);
}

static void test_symdim(void) {
    char buf[64];
    SymEnv env = {.T = 5, .P = 7, .fill = 7, .B = 1};
    CHECK(strcmp(symdim_format(SYMDIM_KEYS, buf, sizeof buf), "fill+T") == 0 && symdim_eval(SYMDIM_KEYS, &env) == 12);
    CHECK(strcmp(symdim_format(SYMDIM_T, buf, sizeof buf), "T") == 0 && symdim_eval(SYMDIM_T, &env) == 5);
    SymDim grid = {.t = 1, .c = 15, .div = 16};
    CHECK(strcmp(symdim_format(grid, buf, sizeof buf), "(T+15)/16") == 0 && symdim_eval(grid, &env) == 2);
    SymDim pos = {.p = 1, .t = 2, .c = -1, .div = 1};
    CHECK(strcmp(symdim_format(pos, buf, sizeof buf), "P+2*T-1") == 0 && symdim_eval(pos, &env) == 16);
    CHECK(strcmp(symdim_format(SYMDIM_CONST(768), buf, sizeof buf), "768") == 0 && symdim_is_const(SYMDIM_CONST(768)));
    CHECK(strcmp(symdim_format((SymDim){.c = 17, .div = 16}, buf, sizeof buf), "2") == 0);
    CHECK(symdim_eq(SYMDIM_KEYS, (SymDim){.fill = 1, .t = 1}) && !symdim_eq(SYMDIM_KEYS, SYMDIM_T));
    char tiny[4];
    symdim_format(SYMDIM_KEYS, tiny, sizeof tiny); /* truncated, still terminated */
    CHECK(strlen(tiny) == 3);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: state_unit MODEL.arch...\n");
        return 2;
    }
    test_symdim();
    for (int i = 1; i < argc; i++) test_model(argv[i]);
    return check_done("state_unit");
}
