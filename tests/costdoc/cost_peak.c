/*
 * cost_peak.c — where the cost model prices attention (compiler/cost.c,
 * docs/cost-model.md "Roofline"): an fp16/bf16 layer on the tensor-core path
 * at the tensor-core peak of its key/value dtype, with the tile work the
 * path executes (a position-infused (Shortformer) layer's: three products
 * per tile, Q K^T, Q Kp^T and P V, in forwards and one-token calls alike); an
 * fp32 layer and flash-decoding's one-token calls at the fp32 CUDA-core peak; an fp32
 * layer under `math tf32` at the TF32 peak (its fp32 GEMMs too); Transformer-XL's
 * relative attention in fp16 at the fp16 peak with its useful FLOPs (the memory's
 * projection included), in fp32 under `math tf32` on CUDA cores. The priced
 * path must be the emitted one: a layer priced on tensor cores has a `_tc`
 * kernel (templates/attn_mma.cuh) in the emitted .cu, any other none.
 *
 *   cost_peak MODELS_DIR FIXTURE   (FIXTURE: tests/costdoc/cost_peak.arch)
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "shortc.h"

#include <math.h>

/* Compiles `model` of path to emission and costs it on the H100; NULL (with a failed check) on error. */
static ModelCost *cost_of(Arena *a, const char *path, const char *model, char **cu) {
    Diag d;
    diag_init(&d, a, stderr);
    CompileOptions co = {.path = path, .model = model, .stop = COMPILE_STOP_AFTER_EMIT};
    CompileResult cr;
    bool ok = shortc_compile(a, &d, &co, &cr);
    CHECK(ok && cr.graph);
    *cu = ok ? cr.emit.cu : NULL;
    cr.emit.cu = NULL;
    compile_result_free(&cr);
    if (!ok || !cr.graph) return NULL;
    char why[256];
    ModelCost *m = cost_model(cr.graph, &(CostOptions){.device = device_find("h100-sxm")}, why, sizeof why);
    if (!m) fprintf(stderr, "cost_model(%s): %s\n", model ? model : path, why);
    CHECK(m != NULL);
    return m;
}

/* The attention step of m (every model here has one attention kernel shape): `attention` or Transformer-XL's
 * `rel_attention`. */
static const CostGroup *attention_step(const ModelCost *m) {
    for (int i = 0; i < m->ngroups; i++)
        if (strncmp(m->groups[i].label, "attention", 9) == 0 || strncmp(m->groups[i].label, "rel_attention", 13) == 0)
            return &m->groups[i];
    return NULL;
}

/* Every layer of m priced at `fwd` in a forward and `one` in a one-token call; the attention step at fwd,
 * its roofline from its tile work there; the emitted .cu has a tensor-core kernel iff fwd is not fp32. */
static void check_priced(const ModelCost *m, const char *cu, CostPeak fwd, CostPeak one) {
    for (int l = 0; l < m->layers; l++) {
        CHECK(m->attn[l].peak == fwd);
        CHECK(m->attn[l].decode_peak == one);
        CHECK((m->attn[l].mma_flops > 0) == (fwd != PEAK_FP32));
    }
    const CostGroup *g = attention_step(m);
    CHECK(g != NULL);
    if (!g) return;
    CHECK(g->peak == fwd);
    const DeviceSpec *dev = device_find("h100-sxm");
    OpCost compute = g->per_use; /* its compute term alone: no bytes */
    memset(compute.bytes_read, 0, sizeof compute.bytes_read);
    memset(compute.bytes_written, 0, sizeof compute.bytes_written);
    double flops = fwd != PEAK_FP32 ? g->per_use.mma_flops : g->per_use.flops;
    double want = flops / device_peak(dev, fwd) + g->per_use.other_ops / dev->fp32;
    CHECK(fabs(roofline_seconds_at(dev, &compute, g->peak) - want) <= 1e-9 * want);
    CHECK(fwd == PEAK_FP32 ? device_peak(dev, fwd) == dev->fp32 : device_peak(dev, fwd) > dev->fp32);
    CHECK(cu != NULL);
    if (cu) CHECK((strstr(cu, "_tc(") != NULL) == (fwd != PEAK_FP32));
}

/* Checks of one model beyond where it is priced (NULL: none). */
typedef void (*ExtraCheck)(const ModelCost *m);

/* Compiles and costs `model` of path (NULL: its last model), checks where it is priced, then `extra`. */
static void check_model(const char *path, const char *model, CostPeak fwd, CostPeak one, ExtraCheck extra) {
    Arena a;
    arena_init(&a);
    char *cu = NULL;
    ModelCost *m = cost_of(&a, path, model, &cu);
    if (m) check_priced(m, cu, fwd, one);
    if (m && extra) extra(m);
    free(cu);
    arena_free(&a);
}

/* Warp-tiles of causal attention over 128 tokens in tiles of 128 queries x 64 keys (head_dim 16:
 * attn_mma_kt): query tile 0 visits key tiles 0 and 1, all 4 warps of 32 rows each: 8 per head; 4 heads,
 * 32 x 64 x 16 per warp-tile, q.k and p.v, 2 FLOPs per multiply-add. */
static const double causal_tile_flops = 8.0 * 4 * 2 * 2 * ATTN_MMA_WARP_ROWS * 64 * 16;

/* gpt2_tiny_half (fp16 queries, bf16 keys and values, 4 heads of 16, T = 128): the tile work in closed
 * form, more than the useful work (whole tiles). */
static void half_tiles(const ModelCost *m) {
    CHECK(m->attn[0].mma_flops == causal_tile_flops);
    CHECK(m->attn[0].mma_flops > m->flops_attention / m->layers);
}

/* A sparse kind's tile lists visit no more tiles than causal's, and never less than its useful work. */
static void sparse_tiles(const ModelCost *m) {
    double useful = m->flops_attention / m->layers;
    CHECK(m->attn[0].mma_flops >= useful && m->attn[0].mma_flops <= causal_tile_flops);
}

/* shortformer_tiny in fp16 (4 heads of 16, segment 16 over a cache of 16: one query tile, key tile 0 of 64):
 * 4 warps x 4 heads warp-tiles of 32 x 64 x 16, three products (Q K^T, Q Kp^T, P V), 2 FLOPs per multiply-add. */
static void pia_tiles(const ModelCost *m) {
    CHECK(m->attn[0].mma_flops == 4.0 * 4 * 3 * 2 * ATTN_MMA_WARP_ROWS * 64 * 16);
}

/* gpt2_tiny under `math tf32`: the tile work of gpt2_tiny_half's shape (head_dim 16: TF32 tiles of 64 keys),
 * and its fp32 GEMMs at the TF32 peak (the plan's f32_fast_tf32). */
static void tf32_tiles(const ModelCost *m) {
    CHECK(m->attn[0].mma_flops == causal_tile_flops);
    int gemms = 0;
    for (int i = 0; i < m->ngroups; i++)
        if (strncmp(m->groups[i].label, "attention", 9) != 0 && m->groups[i].peak == PEAK_TF32) gemms++;
    CHECK(gemms > 0);
}

/* Relative attention on tensor cores: priced with its useful FLOPs (no tile model of REL), the memory's
 * projection among them. */
static void rel_useful(const ModelCost *m) {
    for (int l = 0; l < m->layers; l++) CHECK(m->attn[l].mma_flops > 0);
    const CostGroup *g = attention_step(m);
    CHECK(g && g->per_use.mma_flops == g->per_use.flops);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: cost_peak MODELS_DIR FIXTURE\n");
        return 2;
    }
    const char *models = argv[1], *fixture = argv[2];
    char path[4096];
    /* gpt2_tiny: fp32, every layer on CUDA cores */
    snprintf(path, sizeof path, "%s/gpt2_tiny.arch", models);
    check_model(path, NULL, PEAK_FP32, PEAK_FP32, NULL);
    /* gpt2_tiny_half: the MMA's element type is the key/value type (bf16); one-token calls run
     * flash-decoding on CUDA cores */
    snprintf(path, sizeof path, "%s/gpt2_tiny_half.arch", models);
    check_model(path, NULL, PEAK_BF16, PEAK_FP32, half_tiles);
    /* a sparse kind in fp16: tensor cores in forwards; one-token calls run flash-decoding through its
     * visibility hook on CUDA cores */
    check_model(fixture, "bigbird_half", PEAK_FP16, PEAK_FP32, sparse_tiles);
    /* Shortformer's position-infused attention in fp16: tensor cores, one-token calls too (the engine at T = 1) */
    check_model(fixture, "pia_half", PEAK_FP16, PEAK_FP16, pia_tiles);
    /* fp32 under `math tf32`: TF32 tensor cores in forwards, flash-decoding on CUDA cores */
    check_model(fixture, "causal_tf32", PEAK_TF32, PEAK_FP32, tf32_tiles);
    /* Transformer-XL's relative attention: fp16 on tensor cores (one-token calls: the engine at T = 1, the
     * same path); fp32 under `math tf32` keeps CUDA cores (the REL block packs 2-byte pairs) */
    check_model(fixture, "txl_half", PEAK_FP16, PEAK_FP16, rel_useful);
    check_model(fixture, "txl_tf32", PEAK_FP32, PEAK_FP32, NULL);
    return check_done("cost_peak");
}
