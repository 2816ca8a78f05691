/*
 * adaptive_dump.c — runs an adaptive-input / adaptive-softmax model in the
 * reference interpreter with seeded weights and writes what the independent
 * NumPy reference (adaptive_ref.py) needs: every weight under its checkpoint
 * name in its file layout, the tokens, the scaled embedding with positions
 * (the pos_add output), the hidden the output head reads (the final norm, or
 * the last block's output with `final_norm off`) and
 * the log-probabilities.
 *
 * usage: adaptive_dump MODEL.arch OUTDIR SEED
 * Files: OUTDIR/manifest.txt (one "key value..." per line), OUTDIR/<name>.f32
 * (raw little-endian float32, C order) and OUTDIR/tokens.i32.
 */
#include "shortc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NTOKENS = 24 };

static bool write_raw(const char *dir, const char *name, const void *data, size_t bytes) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, bytes, f) == bytes;
    return fclose(f) == 0 && ok;
}

/* FNV-1a of a weight name, so a name shared by two values gets the same data. */
static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The file tensor of weight v (file layout) from the seed and its name; *rows, *cols its file shape. */
static float *file_tensor(const Value *v, uint64_t seed, int *rows, int *cols) {
    *rows = ir_dim(v, 0);
    *cols = v->rank == 2 ? ir_dim(v, 1) : 1;
    if (v->rank == 2 && v->transposed_src) { int t = *rows; *rows = *cols; *cols = t; }
    size_t n = (size_t)*rows * (size_t)*cols;
    float *w = malloc(sizeof *w * n);
    if (!w) return NULL;
    RtRng r = {seed ^ name_hash(v->weight_name)};
    for (size_t i = 0; i < n; i++) w[i] = (float)(0.3 * rt_rng_normal(&r));
    return w;
}

/* The value's own layout of a file tensor (transposed when the file stores it the other way). */
static float *value_layout(const Value *v, const float *file, int rows, int cols) {
    size_t n = (size_t)rows * (size_t)cols;
    float *w = malloc(sizeof *w * n);
    if (!w) return NULL;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            w[v->rank == 2 && v->transposed_src ? (size_t)j * rows + i : (size_t)i * cols + j] = file[(size_t)i * cols + j];
    return w;
}

static int node_out(const Graph *g, OpKind op, int layer) {
    for (int i = g->nnodes - 1; i >= 0; i--)
        if (!g->nodes[i]->dead && g->nodes[i]->op == op && g->nodes[i]->layer == layer) return g->nodes[i]->out;
    return -1;
}

/* The output of the last live node of layer `layer` (without a final norm: the hidden the head reads). */
static int last_out(const Graph *g, int layer) {
    for (int i = g->nnodes - 1; i >= 0; i--)
        if (!g->nodes[i]->dead && g->nodes[i]->layer == layer) return g->nodes[i]->out;
    return -1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: adaptive_dump MODEL.arch OUTDIR SEED\n");
        return 2;
    }
    Arena arena, *a = &arena;
    arena_init(a);
    Diag d;
    diag_init(&d, a, stderr);
    CompileOptions co = {.path = argv[1], .stop = COMPILE_STOP_AFTER_PASSES};
    CompileResult cr;
    memset(&cr, 0, sizeof cr);
    int rc = 1;
    float **weights = NULL, **values = NULL, *logits = NULL;
    FILE *man = NULL;
    if (!shortc_compile(a, &d, &co, &cr)) goto done;
    const Graph *g = cr.graph;
    const ModelSpec *s = cr.spec;
    uint64_t seed = strtoull(argv[3], NULL, 10);
    char path[1024];
    snprintf(path, sizeof path, "%s/manifest.txt", argv[2]);
    man = fopen(path, "w");
    weights = calloc((size_t)g->nvalues, sizeof *weights);
    values = calloc((size_t)g->nvalues, sizeof *values);
    logits = malloc(sizeof *logits * (size_t)NTOKENS * (size_t)s->vocab);
    if (!man || !weights || !values || !logits) goto done;
    const AdaptiveSpec *ad = &s->adaptive;
    fprintf(man, "style %s\nvocab %d\nd_model %d\nfactor %d\nscale %.17g\ntied %d\nntokens %d\ncutoffs",
            adaptive_style_name(ad->style), s->vocab, s->d_model, ad->factor, ad->scale, (int)s->tied, NTOKENS);
    for (int i = 0; i < ad->ncutoffs; i++) fprintf(man, " %d", ad->cutoffs[i]);
    fprintf(man, "\n");
    fprintf(man, "pos_style %s\n", pia_style_name(s->pos_style)); /* the embedding's sinusoid */
    for (int v = 0; v < g->nvalues; v++) {
        const Value *w = g->values[v];
        if (w->cls != VC_WEIGHT || !ir_value_live(g, w)) continue;
        int rows, cols;
        float *file = file_tensor(w, seed, &rows, &cols);
        if (!file) goto done;
        char name[300];
        snprintf(name, sizeof name, "%s.f32", w->weight_name);
        bool ok = write_raw(argv[2], name, file, sizeof *file * (size_t)rows * (size_t)cols);
        weights[v] = ok ? value_layout(w, file, rows, cols) : NULL;
        free(file);
        if (!weights[v]) goto done;
        fprintf(man, "weight %s %d %d\n", w->weight_name, rows, cols);
    }
    int32_t tokens[NTOKENS];
    for (int t = 0; t < NTOKENS; t++) tokens[t] = (int32_t)((t * 37 + 5) % s->vocab);
    tokens[NTOKENS - 1] = s->vocab - 1;
    if (!interp_run_values(g, &d, (const float *const *)weights, tokens, NTOKENS, logits, values)) goto done;
    int emb = node_out(g, OP_POS_ADD, -1), hid = s->no_final_norm ? last_out(g, s->n_layers - 1) : node_out(g, OP_NORM, -1);
    if (emb < 0 || hid < 0 || !values[emb] || !values[hid]) {
        fprintf(stderr, "adaptive_dump: %s has no adaptive embedding or head input\n", argv[1]);
        goto done;
    }
    size_t td = sizeof(float) * NTOKENS * (size_t)s->d_model;
    if (!write_raw(argv[2], "tokens.i32", tokens, sizeof tokens) || !write_raw(argv[2], "embed.f32", values[emb], td) ||
        !write_raw(argv[2], "hidden.f32", values[hid], td) ||
        !write_raw(argv[2], "logprobs.f32", logits, sizeof *logits * NTOKENS * (size_t)s->vocab))
        goto done;
    rc = 0;
done:
    if (rc) fprintf(stderr, "adaptive_dump: failed on %s\n", argv[1]);
    if (man) fclose(man);
    for (int v = 0; weights && v < (cr.graph ? cr.graph->nvalues : 0); v++) {
        free(weights[v]);
        if (values) free(values[v]);
    }
    free(weights);
    free(values);
    free(logits);
    compile_result_free(&cr);
    arena_free(a);
    return rc;
}
