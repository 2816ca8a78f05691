/*
 * residue_cost.c — the cost model's tensor-core tile work for residue kinds
 * (dilated, strided; compiler/cost.c, docs/cost-model.md "Roofline") is what
 * the kernel computes: for each fixture model, the layer's `mma_flops` of a
 * full-segment forward must equal the warp-tiles (16 queries x KT keys) the
 * instrumented tensor-core kernel (templates/attn_mma.cuh, COUNT_TILES,
 * rendered by tests/attention/engine_render.h with the layer's KT) computes
 * on the CPU simulator over the same segment, times 2 x 2 x 16 x KT x HDP.
 *
 *   residue_cost FIXTURE   (FIXTURE: tests/costdoc/residue_cost.arch)
 */
#define _POSIX_C_SOURCE 200809L
#include "../attention/engine_module.h"
#include "../attention/engine_render.h"
#include "check.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static RtDriver D;

/* The instrumented kernel `name` of pattern p in shape s, with a reader of its counters; NULL on failure. */
static CUmodule build_counted(const AttnPattern *p, const char *name, const EngineShape *s) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    StrBuf b = {0};
    engine_source_start(&b, true);
    bool ok = engine_render(&a, &d, &b, p, name, s, true);
    sb_printf(&b, "extern \"C\" __global__ void %s_count(unsigned *out) { out[0] = %s_warp_tiles; out[1] = %s_tiles_loaded; }\n",
              name, name, name);
    char *src = sb_take(&b, NULL);
    arena_free(&a);
    if (!ok || !src) {
        free(src);
        return NULL;
    }
    return engine_module(&D, src, name, "residue_cost");
}

/* Runs kernel `name` of module m over positions [0, T) (zero inputs, 2-byte elements); counts[0]: warp-tiles
 * computed, counts[1]: key tiles loaded. False on a driver error. */
static bool run_counted(CUmodule m, const char *name, const EngineShape *s, const AttnPattern *p, int T,
                        unsigned counts[2]) {
    CUfunction f = NULL, c = NULL;
    char count[96];
    snprintf(count, sizeof count, "%s_count", name);
    if (D.moduleGetFunction(&f, m, name) != CUDA_SUCCESS || D.moduleGetFunction(&c, m, count) != CUDA_SUCCESS)
        return false;
    size_t nq = (size_t)T * 3 * s->heads * s->hd, nkv = (size_t)2 * s->heads * T * s->hd, ny = (size_t)T * s->heads * s->hd;
    CUdeviceptr q = 0, kv = 0, y = 0, n = 0;
    bool ok = D.memAlloc(&q, nq * 2) == CUDA_SUCCESS && D.memAlloc(&kv, nkv * 2) == CUDA_SUCCESS &&
              D.memAlloc(&y, ny * 2) == CUDA_SUCCESS && D.memAlloc(&n, 8) == CUDA_SUCCESS &&
              D.memsetD8(q, 0, nq * 2) == CUDA_SUCCESS && D.memsetD8(kv, 0, nkv * 2) == CUDA_SUCCESS;
    int P = 0, rows = T;
    void *args[] = {&q, &kv, &y, &T, &P, &rows};
    void *cargs[] = {&n};
    ok = ok && engine_launch(&D, f, engine_grid(s, p, T), s->heads, 128, engine_smem(s, p), args) == CUDA_SUCCESS &&
         D.launchKernel(c, 1, 1, 1, 1, 1, 1, 0, NULL, cargs, NULL) == CUDA_SUCCESS &&
         D.memcpyDtoH(counts, n, 8) == CUDA_SUCCESS;
    D.memFree(q);
    D.memFree(kv);
    D.memFree(y);
    D.memFree(n);
    return ok;
}

/* The cost model's tile count of a forward of T (P = 0) in the plain loop (plain) or grouped by residue,
 * as warp-tiles (every warp of a query tile computes each key tile). */
static double model_warp_tiles(const AttnPattern *p, int kt, bool plain, int T) {
    return attn_residue_call_tiles(p, kt, plain, 0, T) * (ATTN_MMA_QT / ATTN_MMA_WARP_ROWS);
}

/* Warp-tiles the instrumented kernel of pattern p computes in a forward of T: residue_loop 0 (the cost model's
 * choice), 1 (residue grouping) or 2 (plain); -1 on failure. */
static double kernel_warp_tiles(const AttnPattern *p, const EngineShape *base, int residue_loop, int T) {
    EngineShape s = *base;
    s.residue_loop = residue_loop;
    char name[64];
    snprintf(name, sizeof name, "residue_choice_%d", residue_loop);
    CUmodule m = build_counted(p, name, &s);
    unsigned counts[2] = {0, 0};
    bool ok = m && run_counted(m, name, &s, p, T, counts);
    if (m) D.moduleUnload(m);
    return ok ? (double)counts[0] : -1.0;
}

/* The plan's residue_plain of the model's first residue kernel equals the cost model's choice c. */
static void check_plan_runs(const CompileResult *cr, const AttnResidueChoice *c) {
    cJSON *plan = cr->emit.plan_json ? cJSON_Parse(cr->emit.plan_json) : NULL;
    const cJSON *kernels = cJSON_GetObjectItemCaseSensitive(plan, "kernels"), *k, *rp = NULL;
    cJSON_ArrayForEach(k, kernels) if (!rp) rp = cJSON_GetObjectItemCaseSensitive(k, "residue_plain");
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(rp, "lo"), *hi = cJSON_GetObjectItemCaseSensitive(rp, "hi");
    CHECK(cJSON_GetArraySize(lo) == c->n && cJSON_GetArraySize(hi) == c->n);
    for (int i = 0; i < c->n && i < cJSON_GetArraySize(lo) && i < cJSON_GetArraySize(hi); i++)
        CHECK(cJSON_GetArrayItem(lo, i)->valueint == c->lo[i] && cJSON_GetArrayItem(hi, i)->valueint == c->hi[i]);
    cJSON_Delete(plan);
}

/*
 * The per-call choice between the plain tile loop and residue grouping (compiler/cost.c attn_residue_choice):
 * the plan records the cost model's runs; inside a run the plain loop visits fewer tiles, at its ends (T lo - 1,
 * hi + 1) it does not, so the choice flips there; and at those T the kernel in each forced variant computes the
 * cost model's count of that variant, the kernel left to the choice the cheaper one.
 */
static void check_choice(const CompileResult *cr, const AttnPattern *p, const EngineShape *s, int kt, const char *model) {
    AttnResidueChoice c;
    CHECK(attn_residue_choice(p, kt, (s->ntok + ATTN_MMA_QT - 1) / ATTN_MMA_QT * ATTN_MMA_QT, &c));
    CHECK(c.n > 0); /* every fixture has short calls the plain loop takes */
    check_plan_runs(cr, &c);
    for (int i = 0; i < c.n; i++) {
        int ends[] = {c.lo[i] - 1, c.lo[i], c.hi[i], c.hi[i] + 1};
        for (int e = 0; e < 4; e++) {
            int T = ends[e];
            if (T < 1 || T > s->ntok) continue;
            bool inside = e == 1 || e == 2;
            double plain = model_warp_tiles(p, kt, true, T), grouped = model_warp_tiles(p, kt, false, T);
            CHECK(attn_residue_plain(&c, T) == inside);
            CHECK(inside ? plain < grouped : plain >= grouped);
            if (e != 1 && e != 3) continue; /* the kernels at one T inside and one outside each run */
            double kp = kernel_warp_tiles(p, s, 2, T), kg = kernel_warp_tiles(p, s, 1, T), kc = kernel_warp_tiles(p, s, 0, T);
            printf("%s: T %d (%s): plain %.0f warp-tiles (model %.0f), residue %.0f (model %.0f), chosen %.0f\n", model, T,
                   inside ? "plain" : "residue", kp, plain, kg, grouped, kc);
            CHECK(kp == plain && kg == grouped && kc == (inside ? plain : grouped));
        }
    }
}

/* The first live attention node of g (layer 0). */
static const Node *first_attention(const Graph *g) {
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead && g->nodes[i]->op == OP_ATTENTION) return g->nodes[i];
    return NULL;
}

/* Compiles `model` of path, costs it on the H100 and checks layer 0's tile work against the kernel's. */
static void check_model(const char *path, const char *model) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = path, .model = model, .stop = COMPILE_STOP_AFTER_EMIT};
    CompileResult cr;
    bool ok = shortc_compile(&a, &d, &co, &cr);
    CHECK(ok && cr.graph);
    Graph *g = ok ? cr.graph : NULL;
    const Node *n = g ? first_attention(g) : NULL;
    char why[256];
    ModelCost *mc = g ? cost_model(g, &(CostOptions){.device = device_find("h100-sxm")}, why, sizeof why) : NULL;
    int kt = 0, smem = 0, T = g ? g->spec->segment : 0;
    CHECK(n && mc && attn_mma_tiles(g, n, &kt, &smem));
    AttnPattern p;
    char err[256];
    if (n && mc && kt > 0 && attn_pattern_build(&p, &n->attn, n->layer, n->heads, T, err, sizeof err)) {
        int dil, reach, globals;
        CHECK(attn_pattern_residue(&p, 0, &dil, &reach, &globals));
        EngineShape s = {.heads = n->heads, .hd = n->head_dim, .kt = kt, .ntok = T, .mma = true,
                         .t_qkv = "__half", .t_kv = "__half", .t_out = "__half"};
        CUmodule m = build_counted(&p, "residue_cost_kernel", &s);
        unsigned counts[2] = {0, 0};
        CHECK(m && run_counted(m, "residue_cost_kernel", &s, &p, T, counts));
        double per_tile = 2.0 * 2.0 * ATTN_MMA_WARP_ROWS * kt * ((n->head_dim + 15) / 16 * 16);
        printf("%s: T %d, KT %d: kernel %u warp-tiles (%u key tiles loaded) = %.0f FLOPs; cost model mma_flops %.0f\n",
               model, T, kt, counts[0], counts[1], counts[0] * per_tile, mc->attn[0].mma_flops);
        CHECK(counts[0] > 0 && mc->attn[0].mma_flops == counts[0] * per_tile);
        if (m) D.moduleUnload(m);
        check_choice(&cr, &p, &s, kt, model);
        attn_pattern_free(&p);
    }
    compile_result_free(&cr);
    arena_free(&a);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: residue_cost FIXTURE\n");
        return 2;
    }
    char err[256];
    if (rt_driver_sim(&D, 0, 0, err, sizeof err) != SRT_OK) {
        fprintf(stderr, "residue_cost: no simulator: %s\n", err);
        return 1;
    }
    check_model(argv[1], "dilated_half");      /* dilation 3, 6 taps, 2 global keys */
    check_model(argv[1], "dilated_wide_half"); /* dilation 2, 100 taps (bands across key tiles), 5 global keys */
    check_model(argv[1], "strided_half");      /* local heads (dilation 1, 11 taps) and strided heads (11, all) */
    return check_done("residue_cost");
}
