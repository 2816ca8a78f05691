/*
 * ir_unit.c — unit tests of the middle end: lowering, passes, verifier,
 * buffer plan and the reference interpreter, on hand-built ModelSpecs that
 * mirror the models/ .arch files (so they do not depend on the parser).
 *
 *   ir_unit GOLDEN_DIR [--dump MODEL]
 *
 * Checks, for gpt2_tiny, baseline_ba_tiny, mixed_tiny and a half-precision
 * gpt2_tiny: every pass verifies (fused and unfused), the kernel count is
 * the same for 2 and 24 layers, fused and unfused interpretation agree, the
 * interpreter matches the PyTorch goldens (tests/golden) to 1e-4, bad
 * inputs are errors, and the verifier catches broken graphs.
 */
#define _POSIX_C_SOURCE 200809L
#include "../common/golden_files.h"
#include "shortc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

/* ------------------------------------------------------------------ */
/* Specs                                                               */
/* ------------------------------------------------------------------ */

typedef enum { M_GPT2_TINY, M_BASELINE_TINY, M_MIXED_TINY, M_GPT2_TINY_HALF } ModelId;
static const char *const model_names[] = {"gpt2_tiny", "baseline_ba_tiny", "mixed_tiny", "gpt2_tiny_half"};

static ModelSpec *make_spec(Arena *a, ModelId m, int layers) {
    ModelSpec *s = arena_alloc(a, sizeof *s);
    s->name = model_names[m];
    s->path = "models/x.arch";
    for (int i = 0; i < SET_COUNT; i++) s->where[i] = LOC_NONE;
    s->naming = NAMING_HF_GPT2;
    s->layout[TC_WEIGHTS] = (LayoutSpec){DT_F32, ORD_IN_OUT, LOC_NONE};
    s->layout[TC_ACTIVATIONS] = (LayoutSpec){DT_F32, ORD_TOKENS_CHANNELS, LOC_NONE};
    s->layout[TC_KV] = (LayoutSpec){DT_F32, ORD_HEADS_TOKENS_DIM, LOC_NONE};
    s->n_layers = layers;
    s->vocab = 256;
    s->d_model = 64;
    s->n_heads = 4;
    s->head_dim = 16;
    s->d_ff = 256;
    s->act = ACT_GELU_TANH;
    s->norm = NORM_LAYERNORM;
    s->norm_place = NORM_PRE;
    s->eps = 1e-5;
    s->pos = POS_LEARNED;
    s->max_pos = 128;
    s->tied = true;
    s->segment = 128;
    switch (m) {
    case M_GPT2_TINY: break;
    case M_GPT2_TINY_HALF:
        s->layout[TC_WEIGHTS].dtype = DT_F16;
        s->layout[TC_ACTIVATIONS].dtype = DT_F16;
        s->layout[TC_KV].dtype = DT_BF16;
        break;
    case M_BASELINE_TINY:
        s->act = ACT_RELU;
        s->pos = POS_SINUSOIDAL;
        s->pos_style = PIA_FAIRSEQ; /* models/baseline_ba.arch: style=fairseq */
        s->no_final_norm = true;    /* models/baseline_ba.arch: final_norm off */
        s->max_pos = 0;
        s->segment = 96;
        break;
    case M_MIXED_TINY:
        s->vocab = 200;
        s->d_model = 48;
        s->n_heads = 3;
        s->head_dim = 16;
        s->d_ff = 112;
        s->act = ACT_GELU;
        s->norm = NORM_RMSNORM;
        s->norm_place = NORM_POST;
        s->eps = 1e-6;
        s->pos = POS_NONE;
        s->max_pos = 0;
        s->tied = false;
        s->segment = 40;
        s->layout[TC_WEIGHTS] = (LayoutSpec){DT_F16, ORD_OUT_IN, LOC_NONE};
        s->layout[TC_KV].order = ORD_TOKENS_HEADS_DIM;
        break;
    }
    s->layers = arena_alloc(a, sizeof *s->layers * (size_t)(layers ? layers : 1));
    for (int i = 0; i < layers; i++) s->layers[i].attn = (AttnSpec){.kind = ATTN_CAUSAL, .typed = true, .loc = LOC_NONE};
    return s;
}

static Graph *build(Arena *a, Diag *d, ModelId m, int layers, bool fuse) {
    CompileOptions co = {.spec = make_spec(a, m, layers), .no_fuse = !fuse, .stop = COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    return shortc_compile(a, d, &co, &cr) ? cr.graph : NULL;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

static void test_golden(const char *dir, ModelId m) {
    char path[1024];
    int32_t toks[512];
    snprintf(path, sizeof path, "%s/%s.tokens", dir, model_names[m]);
    int T = golden_read_tokens(path, toks, 512);
    CHECK(T > 0, "%s: cannot read tokens", path);
    if (T <= 0) return;
    int rows = 0, cols = 0;
    snprintf(path, sizeof path, "%s/%s.logits.npy", dir, model_names[m]);
    float *want = golden_read_npy(path, &rows, &cols);
    CHECK(want, "%s: cannot read", path);
    GoldenWeights w;
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, model_names[m]);
    CHECK(golden_st_open(&w, path), "%s: cannot read", path);
    if (!want || !w.hdr) {
        free(want);
        golden_st_close(&w);
        return;
    }
    float *got[2] = {NULL, NULL};
    for (int fuse = 0; fuse < 2; fuse++) {
        Arena a;
        arena_init(&a);
        Diag d;
        diag_init(&d, &a, stdout);
        Graph *g = build(&a, &d, m, m == M_MIXED_TINY ? 3 : 2, fuse);
        CHECK(g, "%s: passes failed", model_names[m]);
        if (g) {
            char err[256] = "";
            float **wt = golden_load_weights(g, &w, NULL, err, sizeof err);
            CHECK(wt, "%s: %s", model_names[m], err);
            CHECK(rows == T && cols == g->spec->vocab, "golden shape [%d,%d]", rows, cols);
            got[fuse] = calloc((size_t)T * (size_t)g->spec->vocab, sizeof(float));
            bool ok = interp_run(g, &d, (const float *const *)wt, toks, T, got[fuse]);
            CHECK(ok, "%s: interp failed", model_names[m]);
            double diff = golden_max_abs_diff(got[fuse], want, (size_t)rows * (size_t)cols);
            CHECK(ok && diff <= 1e-4, "%s (%s): max |interp - torch| = %g", model_names[m], fuse ? "fused" : "unfused", diff);
            printf("%-18s %-8s max |interp - torch| = %.3g\n", model_names[m], fuse ? "fused" : "unfused", diff);
            golden_free_weights(g, wt);
        }
        arena_free(&a);
    }
    if (got[0] && got[1]) {
        double diff = golden_max_abs_diff(got[0], got[1], (size_t)rows * (size_t)cols);
        CHECK(diff == 0, "%s: fused and unfused differ by %g (fp32 activations must agree exactly)", model_names[m], diff);
    }
    free(got[0]);
    free(got[1]);
    free(want);
    golden_st_close(&w);
}

static void test_half_fused_unfused(void) {
    float *out[2] = {NULL, NULL};
    int T = 50, V = 256;
    int32_t toks[50];
    for (int i = 0; i < T; i++) toks[i] = (i * 37 + 11) % V;
    for (int fuse = 0; fuse < 2; fuse++) {
        Arena a;
        arena_init(&a);
        Diag d;
        diag_init(&d, &a, stdout);
        Graph *g = build(&a, &d, M_GPT2_TINY_HALF, 2, fuse);
        CHECK(g, "gpt2_tiny_half: passes failed");
        if (g) {
            float **w = golden_random_weights(g, 42);
            out[fuse] = calloc((size_t)T * V, sizeof(float));
            CHECK(interp_run(g, &d, (const float *const *)w, toks, T, out[fuse]), "gpt2_tiny_half: interp failed");
            golden_free_weights(g, w);
        }
        arena_free(&a);
    }
    if (out[0] && out[1]) {
        double diff = golden_max_abs_diff(out[0], out[1], (size_t)T * V), mag = 0;
        for (int i = 0; i < T * V; i++) mag = fmax(mag, fabs(out[1][i]));
        printf("gpt2_tiny_half     fused vs unfused max diff %.3g (max |logit| %.3g)\n", diff, mag);
        CHECK(diff <= 2e-2 * fmax(1.0, mag), "gpt2_tiny_half: fused vs unfused differ by %g", diff);
    }
    free(out[0]);
    free(out[1]);
}

static int kernels_of(ModelId m, int layers, bool fuse) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stdout);
    Graph *g = build(&a, &d, m, layers, fuse);
    int k = g ? g->nkernels : -1;
    arena_free(&a);
    return k;
}

static void test_kernel_counts(void) {
    for (int m = 0; m < 4; m++)
        for (int fuse = 0; fuse < 2; fuse++) {
            int k2 = kernels_of((ModelId)m, 2, fuse), k24 = kernels_of((ModelId)m, 24, fuse);
            CHECK(k2 > 0 && k2 == k24, "%s (%s): %d kernels for 2 layers, %d for 24", model_names[m],
                  fuse ? "fused" : "unfused", k2, k24);
        }
    int k = kernels_of(M_GPT2_TINY, 2, true);
    CHECK(k == 6, "gpt2_tiny fused: %d kernels, expected 6 (embed, norm, norm+add, the final norm+add without storing the sum, kv_write, attention; the epilogues run in cuBLASLt)", k);
}

static void test_bad_inputs(void) {
    Arena a;
    arena_init(&a);
    char *msg = NULL;
    size_t mlen = 0;
    FILE *mem = open_memstream(&msg, &mlen);
    Diag d;
    diag_init(&d, &a, mem);
    Graph *g = build(&a, &d, M_GPT2_TINY, 2, true);
    CHECK(g, "gpt2_tiny: passes failed");
    if (g) {
        float **w = golden_random_weights(g, 1);
        float *logits = calloc(256 * 128, sizeof(float));
        int32_t toks[130] = {0};
        toks[3] = 256;
        CHECK(!interp_run(g, &d, (const float *const *)w, toks, 5, logits), "token 256 accepted");
        toks[3] = -1;
        CHECK(!interp_run(g, &d, (const float *const *)w, toks, 5, logits), "token -1 accepted");
        toks[3] = 0;
        CHECK(!interp_run(g, &d, (const float *const *)w, toks, 0, logits), "0 tokens accepted");
        CHECK(!interp_run(g, &d, (const float *const *)w, toks, 129, logits), "129 tokens accepted (segment 128)");
        CHECK(interp_run(g, &d, (const float *const *)w, toks, 1, logits), "1 token rejected");
        CHECK(interp_run(g, &d, (const float *const *)w, toks, 128, logits), "128 tokens rejected");
        golden_free_weights(g, w);
        free(logits);
    }
    fflush(mem);
    CHECK(msg && strstr(msg, "outside the vocabulary"), "no vocabulary message: %s", msg ? msg : "");
    fclose(mem);
    free(msg);
    arena_free(&a);
}

/* Runs the verifier on a broken graph; the message must name the stage and contain `want`. */
static void expect_verify_error(Graph *g, const char *stage, const char *want, const char *what) {
    char *msg = NULL;
    size_t mlen = 0;
    FILE *mem = open_memstream(&msg, &mlen);
    Diag d;
    diag_init(&d, g->arena, mem);
    bool ok = ir_verify(g, &d);
    fclose(mem);
    char stg[64];
    snprintf(stg, sizeof stg, "after %s", stage);
    CHECK(!ok && msg && strstr(msg, stg) && strstr(msg, want), "%s: verifier said %s", what, msg && *msg ? msg : "nothing");
    free(msg);
}

static Node *find_node(Graph *g, OpKind op, int layer, int nth) {
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead && g->nodes[i]->op == op && g->nodes[i]->layer == layer && nth-- == 0) return g->nodes[i];
    return NULL;
}

/* The op table: every row complete, names distinct, and every op reached by an unfused lowering
 * (so the goldens exercise every row's hooks; the adaptive ones: tests/adaptive). */
static void test_op_table(void) {
    for (int k = 0; k < OP_COUNT; k++) {
        const OpInfo *oi = op_info((OpKind)k);
        CHECK(oi && oi->name && oi->shape && oi->interp && oi->emit, "op %d: incomplete row", k);
        if (!oi) continue;
        CHECK((oi->nin >= 0) != (oi->ninputs != NULL), "op %s: needs exactly one of nin and ninputs", oi->name);
        for (int j = 0; j < k; j++) CHECK(strcmp(op_name((OpKind)j), oi->name) != 0, "op name %s twice", oi->name);
    }
    CHECK(op_info(OP_COUNT) == NULL && strcmp(op_name(OP_COUNT), "?") == 0, "out-of-range op has a row");
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stdout);
    Graph *g = build(&a, &d, M_MIXED_TINY, 2, false);
    bool seen[OP_COUNT] = {false};
    for (int i = 0; g && i < g->nnodes; i++) seen[g->nodes[i]->op] = true;
    /* the adaptive ops: mixed_tiny with a Transformer-XL-style adaptive embedding */
    ModelSpec *s = make_spec(&a, M_MIXED_TINY, 2);
    s->adaptive = (AdaptiveSpec){.style = ADAPTIVE_TXL, .ncutoffs = 2, .cutoffs = {50, 120}, .factor = 2, .scale = 1.0};
    CompileOptions co = {.spec = s, .no_fuse = true, .stop = COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    Graph *ga = shortc_compile(&a, &d, &co, &cr) ? cr.graph : NULL;
    CHECK(ga, "adaptive mixed_tiny: passes failed");
    for (int i = 0; ga && i < ga->nnodes; i++) seen[ga->nodes[i]->op] = true;
    /* the recurrence's ops: gpt2_tiny with the module (docs/attention/recurrence.md) */
    ModelSpec *sr = make_spec(&a, M_GPT2_TINY, 2);
    sr->rec = (RecurrenceSpec){.on = true, .insert = 2, .nhidden = 1, .hidden = {8}, .act = ACT_RELU, .norm = true};
    co.spec = sr;
    Graph *gr = shortc_compile(&a, &d, &co, &cr) ? cr.graph : NULL;
    CHECK(gr, "recurrent gpt2_tiny: passes failed");
    for (int i = 0; gr && i < gr->nnodes; i++) seen[gr->nodes[i]->op] = true;
    /* position-infused attention's table: baseline_ba_tiny with Shortformer's positions */
    ModelSpec *sp = make_spec(&a, M_BASELINE_TINY, 2);
    sp->pos = POS_NONE;
    sp->infused = PIA_FAIRSEQ;
    sp->cache = 8;
    co = (CompileOptions){.spec = sp, .no_fuse = true, .stop = COMPILE_STOP_AFTER_PASSES};
    Graph *gp = shortc_compile(&a, &d, &co, &cr) ? cr.graph : NULL;
    CHECK(gp, "position-infused baseline_ba_tiny: passes failed");
    for (int i = 0; gp && i < gp->nnodes; i++) seen[gp->nodes[i]->op] = true;
    /* the Transformer-XL ops: mixed_tiny with relative attention and memories (tests/memory) */
    ModelSpec *t = make_spec(&a, M_MIXED_TINY, 2);
    t->naming = NAMING_TXL;
    for (int i = 0; i < 2; i++) t->layers[i] = (LayerSpec){.attn = {.kind = ATTN_RELATIVE, .typed = true, .loc = LOC_NONE}, .memory = 3};
    co = (CompileOptions){.spec = t, .no_fuse = true, .stop = COMPILE_STOP_AFTER_PASSES};
    Graph *gt = shortc_compile(&a, &d, &co, &cr) ? cr.graph : NULL;
    CHECK(gt, "relative mixed_tiny: passes failed");
    for (int i = 0; gt && i < gt->nnodes; i++) seen[gt->nodes[i]->op] = true;
    /* the gated FFN's gate: gpt2_tiny with SwiGLU */
    ModelSpec *sg = make_spec(&a, M_GPT2_TINY, 2);
    sg->gated = true;
    sg->act = ACT_SILU;
    co = (CompileOptions){.spec = sg, .no_fuse = true, .stop = COMPILE_STOP_AFTER_PASSES};
    Graph *gg = shortc_compile(&a, &d, &co, &cr) ? cr.graph : NULL;
    CHECK(gg, "gated gpt2_tiny: passes failed");
    for (int i = 0; gg && i < gg->nnodes; i++) seen[gg->nodes[i]->op] = true;
    for (int k = 0; k < OP_COUNT; k++)
        CHECK(seen[k], "op %s does not occur in unfused mixed_tiny (plain, adaptive or relative), recurrent or gated gpt2_tiny "
              "or infused baseline_ba_tiny", op_name((OpKind)k));
    arena_free(&a);
}

static void test_verifier(void) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stdout);
    /* use before definition (after lowering) */
    Graph *g = lower_model(&a, &d, make_spec(&a, M_GPT2_TINY, 2));
    CHECK(g && ir_verify(g, &d), "lowered graph does not verify");
    Node *n = find_node(g, OP_NORM, 0, 0);
    int saved = n->in[0];
    n->in[0] = g->logits;
    expect_verify_error(g, "lower", "used before it is defined", "use before def");
    n->in[0] = saved;
    n->nin = 1;
    expect_verify_error(g, "lower", "inputs", "input count");
    n->nin = 3;
    /* a dead node's output in use */
    Node *b = find_node(g, OP_BIAS, 0, 0);
    b->dead = true;
    expect_verify_error(g, "lower", "dead node", "dead producer");
    b->dead = false;
    CHECK(ir_verify(g, &d), "restored graph does not verify");

    /* shapes */
    Graph *g2 = build(&a, &d, M_GPT2_TINY, 2, true);
    CHECK(g2, "gpt2_tiny build failed");
    Value *o = g2->values[find_node(g2, OP_ATTENTION, 1, 0)->out];
    SymDim dim = o->dims[1];
    o->dims[1] = SYMDIM_CONST(65);
    expect_verify_error(g2, "buffers", "shape", "wrong output shape");
    o->dims[1] = dim;
    /* dtypes */
    o->dtype = DT_F16;
    expect_verify_error(g2, "buffers", "requires f32", "wrong dtype");
    o->dtype = DT_F32;
    /* kernels */
    Node *k = find_node(g2, OP_NORM, 1, 0);
    k->kernel = g2->nkernels;
    expect_verify_error(g2, "buffers", "out of range", "kernel id");
    k->kernel = -1;
    expect_verify_error(g2, "buffers", "needs a kernel", "missing kernel");
    k->kernel = find_node(g2, OP_NORM, 0, 0)->kernel;
    /* buffers: put the attention output on top of its qkv input */
    Node *at = find_node(g2, OP_ATTENTION, 0, 0);
    Value *q = g2->values[at->in[0]], *y = g2->values[at->out];
    size_t off = y->offset;
    y->offset = q->offset;
    expect_verify_error(g2, "buffers", "overlap", "overlapping buffers");
    y->offset = off;
    CHECK(ir_verify(g2, &d), "restored graph does not verify");
    arena_free(&a);
}

static void test_buffers(void) {
    for (int m = 0; m < 4; m++) {
        Arena a;
        arena_init(&a);
        Diag d;
        diag_init(&d, &a, stdout);
        Graph *g = build(&a, &d, (ModelId)m, 12, true);
        CHECK(g, "%s: build failed", model_names[m]);
        if (g) {
            CHECK(g->arena_bytes < g->naive_bytes / 4, "%s: arena %zu bytes vs %zu without reuse", model_names[m],
                  g->arena_bytes, g->naive_bytes);
            const Value *t = g->values[g->tokens], *l = g->values[g->logits];
            CHECK(t->buffer >= 0 && l->buffer >= 0, "%s: tokens/logits not in the arena", model_names[m]);
            CHECK(t->bytes == (size_t)g->spec->segment * 4, "%s: tokens %zu bytes", model_names[m], t->bytes);
        }
        arena_free(&a);
    }
}

static void test_print(void) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stdout);
    Graph *g = build(&a, &d, M_MIXED_TINY, 3, true);
    char *txt = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&txt, &len);
    if (g) ir_print(mem, g, &d);
    fclose(mem);
    CHECK(txt && strstr(txt, "; kernels "), "no kernel summary");
    /* GEMM weights of fp32 activations are held in fp32, their values rounded to the fp16 layout */
    CHECK(txt && strstr(txt, "weight @h.0.attn.c_attn.weight:f32[144,48] round=f16 [out,in] file[48,144]"), "c_attn line:\n%s", txt);
    CHECK(txt && strstr(txt, "weight @lm_head.weight:f32[200,48] round=f16 [out,in]\n"), "lm_head line");
    CHECK(txt && strstr(txt, "weight @h.0.attn.c_attn.bias:f16[144]\n"), "c_attn bias line (stays fp16)");
    CHECK(txt && strstr(txt, "%kv.0:f32[2,fill+T,3,16] [tokens,heads,dim] state=kv_cache capacity=40 = kv_write.causal heads=3 head_dim=16"), "kv line");
    CHECK(txt && strstr(txt, "epilogue=bias+gelu"), "no fused gelu");
    free(txt);
    /* unknown pass name */
    mem = open_memstream(&txt, &len);
    Diag d2;
    diag_init(&d2, &a, mem);
    CompileOptions co = {.spec = make_spec(&a, M_GPT2_TINY, 1), .dump_ir = "shapez", .dump_to = mem,
                         .stop = COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    CHECK(!shortc_compile(&a, &d2, &co, &cr), "unknown pass accepted");
    fclose(mem);
    CHECK(txt && strstr(txt, "unknown pass 'shapez'"), "unknown pass message: %s", txt ? txt : "");
    free(txt);
    arena_free(&a);
}

/* Every combination of the structural choices on a very small model: passes verify, and fused and
 * unfused interpretation agree (exactly with fp32 activations). */
static void test_combinations(void) {
    int combos = 0;
    for (int bits = 0; bits < 2 * 2 * 3 * 2 * 5 * 2 * 2 * 2 * 4; bits++) {
        int b = bits;
        NormKind nk = (NormKind)(b % 2); b /= 2;
        NormPlace np = (NormPlace)(b % 2); b /= 2;
        PosKind pk = (PosKind)(b % 3); b /= 3;
        bool tied = b % 2; b /= 2;
        Activation act = (Activation)(b % 5); b /= 5; /* none, relu, gelu, gelu_tanh, silu */
        DimOrder wo = b % 2 ? ORD_OUT_IN : ORD_IN_OUT; b /= 2;
        DimOrder ko = b % 2 ? ORD_TOKENS_HEADS_DIM : ORD_HEADS_TOKENS_DIM; b /= 2;
        DType adt = b % 2 ? DT_BF16 : DT_F32; b /= 2;
        int family = b % 4; /* 0: GPT-2's block; 1: gated FFN; 2: gated, no biases; 3: parallel (pre-norm), no biases */
        float *out[2] = {NULL, NULL};
        int T = 7, V = 20;
        int32_t toks[7] = {3, 19, 0, 7, 7, 12, 1};
        for (int fuse = 0; fuse < 2; fuse++) {
            Arena a;
            arena_init(&a);
            Diag d;
            diag_init(&d, &a, stdout);
            ModelSpec *s = make_spec(&a, M_GPT2_TINY, 2);
            s->vocab = V; s->d_model = 8; s->n_heads = 2; s->head_dim = 3; s->d_ff = 12; s->segment = 8; s->max_pos = 8;
            s->norm = nk; s->norm_place = np; s->pos = pk; s->tied = tied; s->act = act;
            s->layout[TC_WEIGHTS].order = wo;
            s->layout[TC_KV].order = ko;
            s->layout[TC_ACTIVATIONS].dtype = adt;
            s->layout[TC_KV].dtype = adt;
            s->gated = (family == 1 || family == 2) && act != ACT_NONE; /* the gate's activation is act */
            s->no_bias = family >= 2;
            s->parallel = family == 3 && np == NORM_PRE;
            CompileOptions co = {.spec = s, .no_fuse = !fuse, .stop = COMPILE_STOP_AFTER_PASSES};
            CompileResult cr;
            bool ok = shortc_compile(&a, &d, &co, &cr);
            Graph *g = cr.graph;
            CHECK(ok, "combination %d (fuse %d): passes failed", bits, fuse);
            if (ok) {
                float **w = golden_random_weights(g, (unsigned)bits + 5);
                out[fuse] = calloc((size_t)T * V, sizeof(float));
                CHECK(interp_run(g, &d, (const float *const *)w, toks, T, out[fuse]), "combination %d: interp failed", bits);
                golden_free_weights(g, w);
            }
            arena_free(&a);
        }
        if (out[0] && out[1]) {
            double diff = golden_max_abs_diff(out[0], out[1], (size_t)T * V);
            CHECK(adt == DT_F32 ? diff == 0 : diff < 0.1, "combination %d: fused and unfused differ by %g", bits, diff);
            combos++;
        }
        free(out[0]);
        free(out[1]);
    }
    printf("combinations       %d structural variants, fused == unfused\n", combos);
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[2], "--dump") == 0) {
        Arena a;
        arena_init(&a);
        Diag d;
        diag_init(&d, &a, stderr);
        int m = 0;
        while (m < 4 && strcmp(model_names[m], argv[3]) != 0) m++;
        if (m == 4) return 2;
        CompileOptions co = {.spec = make_spec(&a, (ModelId)m, argc > 4 ? atoi(argv[4]) : 2),
                             .dump_ir = argc > 5 ? argv[5] : "all", .dump_to = stdout,
                             .stop = COMPILE_STOP_AFTER_PASSES};
        CompileResult cr;
        int rc = shortc_compile(&a, &d, &co, &cr) ? 0 : 1;
        arena_free(&a);
        return rc;
    }
    const char *dir = argc > 1 ? argv[1] : "tests/golden";
    test_golden(dir, M_GPT2_TINY);
    test_golden(dir, M_BASELINE_TINY);
    test_golden(dir, M_MIXED_TINY);
    test_half_fused_unfused();
    test_kernel_counts();
    test_bad_inputs();
    test_op_table();
    test_verifier();
    test_buffers();
    test_print();
    test_combinations();
    if (failures) printf("%d failure(s)\n", failures);
    else printf("ir_unit: all passed\n");
    return failures ? 1 : 0;
}
