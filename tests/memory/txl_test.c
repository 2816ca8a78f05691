/*
 * txl_test.c — Transformer-XL relative attention with per-layer memories in
 * the reference interpreter (docs/attention/relative.md).
 *
 *   txl_test MODELS_DIR MEMORY_DIR
 *
 * Checks:
 *   - txl_tiny, txl_lrm_tiny (weights with HF's "transformer." prefix) and
 *     txl_tiny_pre (pre-norm, clamp, same_length, untie_r) run segment after
 *     segment through one session equal the PyTorch goldens of
 *     tests/memory/gen_txl.py (pad-and-reshape relative shift) to 1e-4, fused
 *     and unfused graphs identically (fp32); txl_lrm_tiny with fp16 (bf16 memories)
 *     and bf16 layouts within 2e-2 and 6e-2 of the largest logit;
 *   - a memory holding every earlier token: chunked calls (token by token,
 *     3 + 4, 2 + 5) equal one call (txl_tiny and the pre-norm variant);
 *   - memory 0: a segment's logits do not depend on the earlier segments,
 *     and the first segment of a model with memory equals the model without;
 *   - srt-style reset: a reset session gives what a fresh one gives;
 *   - a session runs far past the segment (memories are rings, positions
 *     unbounded);
 *   - state bytes = sum over layers of m_l x d_model x bytes (txl_lrm_tiny,
 *     the bf16 paper models, the seed's 24 x 3800 x 1024 fp32 = 356 MiB,
 *     fp16 memories);
 *   - the cost rule: two q.k products per score (docs/cost-model.md);
 *   - lowering refuses in-memory specs that mix relative and other layers, or
 *     use relative attention without Transformer-XL names.
 */
#define _POSIX_C_SOURCE 200809L
#include "../common/golden_files.h"
#include "../check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *models_dir, *memory_dir;

/* A model compiled up to the passes, with its arena. */
typedef struct Compiled {
    Arena arena;   /* owner of spec and graph */
    Diag diag;     /* errors go to stderr */
    Graph *g;      /* NULL when compiling failed */
} Compiled;

/* Loads the spec of model (NULL: the file's last) from path; edit (may be NULL) changes it before lowering. */
static bool compile_model(Compiled *c, const char *path, const char *model, bool fuse, void (*edit)(ModelSpec *)) {
    arena_init(&c->arena);
    diag_init(&c->diag, &c->arena, stderr);
    c->g = NULL;
    ModelSpec *s = shortc_load_model(&c->arena, &c->diag, path, model);
    if (!s) return false;
    if (edit) edit(s);
    CompileOptions co = {.spec = s, .no_fuse = !fuse, .stop = COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    if (shortc_compile(&c->arena, &c->diag, &co, &cr)) c->g = cr.graph;
    return c->g != NULL;
}

static void compiled_free(Compiled *c) { arena_free(&c->arena); }

/* Runs tokens [0, n) through session s in segments of the model's length; logits [n, vocab]. */
static bool run_segments(InterpSession *s, const Graph *g, Diag *d, float **w, const int32_t *toks, int n, float *logits) {
    int L = g->spec->segment, V = g->spec->vocab;
    for (int p = 0; p < n; p += L) {
        int T = n - p < L ? n - p : L;
        if (!interp_forward(s, d, (const float *const *)w, toks + p, T, logits + (size_t)p * V, NULL)) return false;
    }
    return true;
}

/* One golden: the model from arch (its last model) against MEMORY_DIR/name.*, fused and unfused. */
static void test_golden_edit(const char *arch, const char *name, const char *prefix, void (*edit)(ModelSpec *), double tol);

static void test_golden(const char *arch, const char *name, const char *prefix) {
    test_golden_edit(arch, name, prefix, NULL, 1e-4);
}

/* One golden with the spec changed by edit (half layouts): max |interp - torch| <= tol x max |logit|, or tol when edit is NULL. */
static void test_golden_edit(const char *arch, const char *name, const char *prefix, void (*edit)(ModelSpec *), double tol) {
    char path[1024];
    int32_t toks[256];
    snprintf(path, sizeof path, "%s/%s.tokens", memory_dir, name);
    int n = golden_read_tokens(path, toks, 256);
    int rows = 0, cols = 0;
    snprintf(path, sizeof path, "%s/%s.logits.npy", memory_dir, name);
    float *want = golden_read_npy(path, &rows, &cols);
    GoldenWeights gw;
    snprintf(path, sizeof path, "%s/%s.safetensors", memory_dir, name);
    bool opened = golden_st_open(&gw, path);
    CHECK(n > 0 && want && opened && rows == n);
    float *got[2] = {NULL, NULL};
    for (int fuse = 0; fuse < 2 && n > 0 && want && opened && rows == n; fuse++) {
        Compiled c;
        CHECK(compile_model(&c, arch, NULL, fuse, edit));
        char err[256] = "";
        float **w = c.g ? golden_load_weights(c.g, &gw, prefix, err, sizeof err) : NULL;
        if (!w && c.g) fprintf(stderr, "%s: %s\n", name, err);
        InterpSession *s = w ? interp_session_new(c.g) : NULL;
        got[fuse] = calloc((size_t)n * (size_t)cols, sizeof(float));
        CHECK(s && c.g->spec->vocab == cols && run_segments(s, c.g, &c.diag, w, toks, n, got[fuse]));
        double diff = golden_max_abs_diff(got[fuse], want, (size_t)n * (size_t)cols), mag = 0;
        for (size_t i = 0; i < (size_t)n * (size_t)cols; i++) mag = fmax(mag, fabs(want[i]));
        printf("%-14s %-8s %s %d tokens in segments of %d: max |interp - torch| = %.3g (max |logit| %.3g)\n", name,
               fuse ? "fused" : "unfused", c.g ? dtype_name(c.g->spec->layout[TC_ACTIVATIONS].dtype) : "?", n,
               c.g ? c.g->spec->segment : 0, diff, mag);
        CHECK(diff <= (edit ? tol * mag : tol) && mag > 0.5);
        interp_session_free(s);
        if (c.g) golden_free_weights(c.g, w);
        compiled_free(&c);
    }
    if (got[0] && got[1] && !edit) /* fp32 activations: fused and unfused agree exactly (interp.c) */
        CHECK(golden_max_abs_diff(got[0], got[1], (size_t)n * (size_t)cols) == 0);
    free(got[0]);
    free(got[1]);
    free(want);
    golden_st_close(&gw);
}

static void half_f16(ModelSpec *s) { /* fp16 weights and activations, bf16 memories */
    s->layout[TC_WEIGHTS].dtype = DT_F16;
    s->layout[TC_ACTIVATIONS].dtype = DT_F16;
    s->layout[TC_KV].dtype = DT_BF16;
}

static void half_bf16(ModelSpec *s) { /* bf16 everywhere */
    s->layout[TC_WEIGHTS].dtype = DT_BF16;
    s->layout[TC_ACTIVATIONS].dtype = DT_BF16;
    s->layout[TC_KV].dtype = DT_BF16;
}

static void no_memory(ModelSpec *s) {
    for (int i = 0; i < s->n_layers; i++) s->layers[i].memory = 0;
}

/* Logits of tokens [0, n) through a fresh session of c (segments of its length); malloc'd. */
static float *fresh_run(Compiled *c, float **w, const int32_t *toks, int n) {
    float *out = calloc((size_t)n * (size_t)c->g->spec->vocab + 1, sizeof *out);
    InterpSession *s = interp_session_new(c->g);
    bool ok = out && s && run_segments(s, c->g, &c->diag, w, toks, n, out);
    interp_session_free(s);
    if (!ok) { free(out); return NULL; }
    return out;
}

/* Memory 0 is single-segment relative attention; with a memory, the first segment is unchanged. */
static void test_memory_zero(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/txl_tiny.arch", models_dir);
    Compiled m0, m5;
    CHECK(compile_model(&m0, path, NULL, true, no_memory) && compile_model(&m5, path, NULL, true, NULL));
    if (m0.g && m5.g) {
        int32_t toks[14];
        for (int i = 0; i < 14; i++) toks[i] = (i * 17 + 3) % 50;
        float **w0 = golden_random_weights(m0.g, 7), **w5 = golden_random_weights(m5.g, 7); /* the same names in the same order */
        int V = m0.g->spec->vocab;
        float *both = fresh_run(&m0, w0, toks, 14), *second = fresh_run(&m0, w0, toks + 7, 7);
        float *mem = fresh_run(&m5, w5, toks, 14);
        CHECK(both && second && mem);
        if (both && second && mem) {
            CHECK(golden_max_abs_diff(both + 7 * V, second, 7 * (size_t)V) == 0);  /* no dependence on segment 0 */
            CHECK(golden_max_abs_diff(both, mem, 7 * (size_t)V) == 0);             /* segment 0: no memory rows yet */
            CHECK(golden_max_abs_diff(both + 7 * V, mem + 7 * V, 7 * (size_t)V) > 1e-3); /* the memory matters */
            CHECK(ir_state_bytes(m0.g) == 0);
        }
        free(both);
        free(second);
        free(mem);
        golden_free_weights(m0.g, w0);
        golden_free_weights(m5.g, w5);
    }
    compiled_free(&m0);
    compiled_free(&m5);
}

/* A reset session equals a fresh one; a session runs 40 segments (past any capacity a KV cache would need). */
static void test_reset_and_long_run(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/txl_lrm_tiny.arch", models_dir);
    Compiled c;
    CHECK(compile_model(&c, path, NULL, true, NULL));
    if (!c.g) { compiled_free(&c); return; }
    enum { N = 240 };
    int32_t toks[N];
    for (int i = 0; i < N; i++) toks[i] = (i * 29 + 5) % 50;
    float **w = golden_random_weights(c.g, 11);
    int V = c.g->spec->vocab;
    float *a = calloc((size_t)N * V, sizeof *a), *b = fresh_run(&c, w, toks + 12, 12);
    InterpSession *s = interp_session_new(c.g);
    CHECK(a && b && s && run_segments(s, c.g, &c.diag, w, toks, N, a));
    CHECK(interp_session_fill(s) == N && interp_session_capacity(s) >= TXL_POSITION_LIMIT);
    interp_session_reset(s);
    CHECK(interp_session_fill(s) == 0);
    CHECK(run_segments(s, c.g, &c.diag, w, toks + 12, 12, a));
    if (a && b) CHECK(golden_max_abs_diff(a, b, 12 * (size_t)V) == 0);
    interp_session_free(s);
    free(a);
    free(b);
    golden_free_weights(c.g, w);
    compiled_free(&c);
}

static void seed_memories(ModelSpec *s) { /* Rae & Razavi's figure: 24 layers x 3800 rows of 1024 fp32 */
    for (int i = 0; i < s->n_layers; i++) s->layers[i].memory = 3800;
    s->layout[TC_KV].dtype = DT_F32; /* "at single precision"; the bundled model stores bf16 */
}

static void half_memories(ModelSpec *s) { s->layout[TC_KV].dtype = DT_F16; }

/* State bytes = sum_l m_l x d_model x bytes of the kv layout's dtype. */
static void test_state_bytes(void) {
    struct {
        const char *file;            /* model file in MODELS_DIR */
        void (*edit)(ModelSpec *);   /* change before lowering */
        size_t want;                 /* sum_l m_l x d x bytes */
    } cases[] = {
        {"txl_tiny.arch", NULL, (size_t)(5 + 5) * 32 * 4},
        {"txl_lrm_tiny.arch", NULL, (size_t)(3 + 12 + 3 + 12) * 32 * 4},
        {"txl_lrm_tiny.arch", half_memories, (size_t)(3 + 12 + 3 + 12) * 32 * 2},
        {"txl_wt103.arch", NULL, (size_t)18 * 384 * 1024 * 2},                 /* bf16 memories */
        {"txl_wt103_eval.arch", NULL, (size_t)18 * 1600 * 1024 * 2},
        {"txl_wt103_lrm3.arch", NULL, ((size_t)3 * 6000 + 15 * 128) * 1024 * 2},
        {"txl_enwik8.arch", NULL, (size_t)24 * 6000 * 1024 * 2},
        {"txl_lrm4.arch", NULL, ((size_t)4 * 6000 + 20 * 128) * 1024 * 2},
        {"txl_lrm4.arch", seed_memories, (size_t)24 * 3800 * 1024 * 4},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", models_dir, cases[k].file);
        Compiled c;
        CHECK(compile_model(&c, path, NULL, true, cases[k].edit));
        size_t got = c.g ? ir_state_bytes(c.g) : 0;
        printf("%-18s state %zu bytes (%.2f MiB), expected %zu\n", cases[k].file, got, got / 1048576.0, cases[k].want);
        CHECK(got == cases[k].want);
        if (c.g) {
            InterpSession *s = interp_session_new(c.g);
            CHECK(s && interp_session_state_bytes(s) == got);
            interp_session_free(s);
        }
        compiled_free(&c);
    }
    CHECK((size_t)24 * 3800 * 1024 * 4 / 1048576 == 356); /* the seed's 356 MB */
}

static void memory_of_segment(ModelSpec *s) { /* m >= every earlier token of one segment */
    for (int i = 0; i < s->n_layers; i++) s->layers[i].memory = s->segment;
}

/*
 * With a memory that holds every earlier token, feeding a segment in chunks (token by token,
 * 3 + 4, 2 + 5) equals one call: the memory path at P > 0 against the in-call path at P = 0.
 */
static void test_chunks(const char *arch) {
    Compiled c;
    CHECK(compile_model(&c, arch, NULL, true, memory_of_segment));
    if (!c.g) { compiled_free(&c); return; }
    int L = c.g->spec->segment, V = c.g->spec->vocab;
    int32_t toks[64];
    for (int i = 0; i < L; i++) toks[i] = (i * 13 + 7) % V;
    float **w = golden_random_weights(c.g, 5);
    float *one = fresh_run(&c, w, toks, L), *parts = calloc((size_t)L * V, sizeof *parts);
    int chunks[3][8] = {{1, 1, 1, 1, 1, 1, 1, 1}, {3, 4, 8}, {2, 5, 8}};
    for (int k = 0; k < 3 && one && parts; k++) {
        InterpSession *s = interp_session_new(c.g);
        bool ok = s != NULL;
        for (int p = 0, j = 0; ok && p < L; p += chunks[k][j++]) {
            int T = chunks[k][j] < L - p ? chunks[k][j] : L - p;
            ok = interp_forward(s, &c.diag, (const float *const *)w, toks + p, T, parts + (size_t)p * V, NULL);
        }
        double diff = ok ? golden_max_abs_diff(one, parts, (size_t)L * V) : 1e30;
        printf("%-14s memory %d, chunks starting %d,%d: max |chunked - one call| = %.3g\n", c.g->spec->name, L,
               chunks[k][0], chunks[k][1], diff);
        CHECK(ok && diff <= 1e-5);
        interp_session_free(s);
    }
    free(one);
    free(parts);
    golden_free_weights(c.g, w);
    compiled_free(&c);
}

static void mixed_layers(ModelSpec *s) { s->layers[1].attn = (AttnSpec){.kind = ATTN_CAUSAL, .typed = true, .loc = LOC_NONE}; }
static void gpt2_names(ModelSpec *s) { s->naming = NAMING_HF_GPT2; }

/* Specs built in memory get sema's rule from lowering too: relative everywhere iff weights transformer_xl. */
static void test_lowering_guard(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/txl_tiny.arch", models_dir);
    void (*edits[])(ModelSpec *) = {mixed_layers, gpt2_names};
    for (int k = 0; k < 2; k++) {
        Compiled c;
        fprintf(stderr, "(an expected error follows)\n");
        CHECK(!compile_model(&c, path, NULL, true, edits[k]) && c.diag.errors == 1);
        compiled_free(&c);
    }
}

/* The cost rule: two q.k products per score plus p.v and the memory re-projected; the relative keys are a
 * derived table (the load program's), of which a call reads m + T rows. */
static void test_cost(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/txl_tiny.arch", models_dir);
    Compiled c;
    CHECK(compile_model(&c, path, NULL, true, NULL));
    for (int i = 0; c.g && i < c.g->nnodes; i++) {
        const Node *n = c.g->nodes[i];
        if (n->dead || n->op != OP_REL_ATTENTION) continue;
        OpCost oc;
        memset(&oc, 0, sizeof oc);
        op_info(n->op)->cost(c.g, n, 7, &oc);
        double H = 4, hd = 8, m = 5, T = 7, D = 32, W = 32, scores = H * (T * m + T * (T + 1) / 2);
        double flops = 3 * 2 * hd * scores + 2 * m * D * 2 * W;
        CHECK(oc.attn_scores == scores && oc.attn_keys == m + T && oc.flops == flops);
        const Value *rel = c.g->values[n->in[1]];
        const Node *rk = c.g->nodes[rel->def];
        CHECK(rk->op == OP_REL_KEYS && ir_value_derived(rel) && rel->capacity == m + 7 && ir_dim(rel, 1) == W);
        memset(&oc, 0, sizeof oc);
        op_info(rk->op)->cost(c.g, rk, 7, &oc);
        CHECK(oc.flops == 0 && op_cost_bytes_read(&oc) == (m + T) * W * dtype_size(rel->dtype));
    }
    compiled_free(&c);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: txl_test MODELS_DIR MEMORY_DIR\n");
        return 2;
    }
    models_dir = argv[1];
    memory_dir = argv[2];
    char path[1024];
    snprintf(path, sizeof path, "%s/txl_tiny.arch", models_dir);
    test_golden(path, "txl_tiny", NULL);
    snprintf(path, sizeof path, "%s/txl_lrm_tiny.arch", models_dir);
    test_golden(path, "txl_lrm_tiny", "transformer.");
    test_golden_edit(path, "txl_lrm_tiny", "transformer.", half_f16, 2e-2);
    test_golden_edit(path, "txl_lrm_tiny", "transformer.", half_bf16, 6e-2);
    snprintf(path, sizeof path, "%s/txl_variants.arch", memory_dir);
    test_golden(path, "txl_tiny_pre", NULL);
    test_memory_zero();
    snprintf(path, sizeof path, "%s/txl_tiny.arch", models_dir);
    test_chunks(path);
    snprintf(path, sizeof path, "%s/txl_variants.arch", memory_dir);
    test_chunks(path);
    test_reset_and_long_run();
    test_state_bytes();
    test_cost();
    test_lowering_guard();
    return check_done("txl_test");
}
