/*
 * bench_attn.c — work follows the pattern, on both paths of the attention
 * engine: for every attention kind (the parameters of its full-size model in
 * models/), the key tiles the kernel loads, counted by an instrumented build
 * (COUNT_TILES) run on the CPU simulator, against the tiles the pattern needs
 * (query tiles x key tiles with at least one visible pair, from the
 * token-level mask), and the pattern's density. The CUDA-core path
 * (attn_engine.cuh, fp32) has query tiles of 16 and key tiles of 32; the
 * tensor-core path (attn_mma.cuh, bf16) ATTN_MMA_QT (128) and attn_mma_kt (64 at
 * head_dim 16). For a gathered kind
 * (Gaussian) a "tile" is a chunk of KT gathered keys and the needed chunks
 * are ceil(|keys the query tile sees| / KT); its loaded keys grow as c*n.
 * A residue kind (dilated, strided: attn_pattern_residue) groups its queries
 * by residue i mod dilation, so its needed tiles are counted in residue
 * coordinates: per query tile of one residue, the key tiles of that residue
 * (and the global tiles) holding a visible pair.
 *
 *   bench_attn [T...]      (default 128 1024)
 *   bench_attn --cu FILE   writes both paths' kernels of every kind (bf16,
 *                          gpt2_small's 12 heads of 64; the tensor-core path's
 *                          also at head_dim 128) as one .cu for the SASS mix
 *                          (tests/bench/sass_mix.sh --attn, attn_sass.sh), and
 *                          FILE.smem: each tensor-core kernel's dynamic shared
 *                          memory, and exits
 *
 * Exits 1 when a kind misses the goal on a path: visited/needed <= 1.05,
 * causal <= 1.02.
 *
 * Then, per kind and T, an analytic H100 estimate (labelled as one) for
 * gpt2_small's attention geometry (12 heads of 64, bf16 K/V), through the
 * cost model's roofline_seconds (max(FLOPs / peak, bytes / bandwidth)):
 * the pattern's visible pairs, 4*hd FLOPs each (q.k and p.v), with the
 * compulsory bytes (Q, K, V read and the output written once) at the fp32
 * CUDA-core and the bf16 tensor-core peaks; and the tensor-core path's own
 * work: every pair of every key tile it visited (masked ones included) at
 * the tensor-core peak, with K and V read once per visited tile.
 */
#include "../attention/engine_module.h"
#include "../attention/engine_render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H = 4, HD = 16, NPATHS = 2, MAX_T = 8 };

/* One path of the engine as the benchmark renders it. */
typedef struct BenchPath {
    const char *title;  /* what the table header says */
    EngineShape shape;  /* its kernel (ntok set per run) */
    int qt, kt;         /* query and key tile sizes */
} BenchPath;

/* Spec s typed for a model of `heads` heads (as sema types a model's; its attn_pattern_build then reports a
 * bad parameter as never typed). The copy lives until the next call. */
static const AttnSpec *typed(const AttnSpec *s, int heads) {
    static AttnSpec t;
    char err[256];
    t = *s;
    if (!attn_spec_type(&t, heads, err, sizeof err)) fprintf(stderr, "bench_attn: %s\n", err);
    return &t;
}

static BenchPath paths[NPATHS] = { /* the tensor-core path's tiles are set in main (ATTN_MMA_QT, attn_mma_kt) */
    {"CUDA-core path (attn_engine.cuh, fp32)", {.heads = H, .hd = HD, .qpw = 4, .kt = 32}, 16, 32},
    {"tensor-core path (attn_mma.cuh, bf16)",
     {.heads = H, .hd = HD, .mma = true, .t_qkv = "__nv_bfloat16", .t_kv = "__nv_bfloat16", .t_out = "__nv_bfloat16"},
     0, 0},
};

/* One kind and its parameters (as in the full-size models of models/). */
typedef struct BenchKind {
    const char *name;   /* kernel name */
    AttnSpec spec;      /* attention */
} BenchKind;

static const BenchKind kinds[] = {
    {"causal", {.kind = ATTN_CAUSAL}},
    {"window", {.kind = ATTN_WINDOW, .params = {{"size", 256}}, .nparams = 1}},
    {"dilated", {.kind = ATTN_DILATED, .params = {{"dilation", 2}, {"global", 1}, {"size", 256}}, .nparams = 3}},
    {"strided", {.kind = ATTN_STRIDED, .params = {{"local_heads", 2}, {"stride", 32}}, .nparams = 2}},
    {"bigbird", {.kind = ATTN_BIGBIRD, .params = {{"block", 64}, {"global", 1}, {"random", 3}, {"seed", 1}, {"window", 3}}, .nparams = 5}},
    {"gaussian",
     {.kind = ATTN_GAUSSIAN, .params = {{"base", 1}, {"c", 5}, {"seed", 1}, {"self", 0}, {"tie", 0}}, .nparams = 5}},
    {"fixed", {.kind = ATTN_FIXED, .params = {{"c", 32}, {"local_heads", 2}, {"stride", 128}}, .nparams = 3}},
};
enum { NKINDS = sizeof kinds / sizeof kinds[0] };

static RtDriver D;

/* Whether query q0 + qs*a of head h sees key k0 + ks*b with key >= kmin, for some a < nq, b < nk. */
static bool any_visible(const AttnPattern *p, int h, int q0, int qs, int nq, int k0, int ks, int nk, int kmin) {
    for (int a = 0; a < nq; a++)
        for (int b = 0; b < nk; b++) {
            int j = k0 + ks * b;
            if (j >= kmin && attn_pattern_visible(p, h, q0 + qs * a, j)) return true;
        }
    return false;
}

/* A residue kind's tiles for queries and keys [0, T): per head and residue r of its dilation d, query tiles of
 * QT positions r + d*a; per query tile the global tiles (KT keys of [0, globals)) and the band tiles (KT keys
 * r + d*b, not global) holding a visible pair. */
static long residue_needed(const AttnPattern *p, int T, int QT, int KT) {
    long tiles = 0;
    for (int h = 0; h < H; h++) {
        int d, reach, g;
        attn_pattern_residue(p, h, &d, &reach, &g);
        for (int r = 0; r < d && r < T; r++) {
            int n = (T - r + d - 1) / d; /* positions r + d*a below T */
            for (int a = 0; a < n; a += QT) {
                int nq = a + QT < n ? QT : n - a, q0 = r + d * a;
                for (int k0 = 0; k0 < g && k0 < T; k0 += KT)
                    tiles += any_visible(p, h, q0, d, nq, k0, 1, k0 + KT < g ? KT : g - k0, 0);
                for (int b = 0; b < a + nq; b += KT)
                    tiles += any_visible(p, h, q0, d, nq, r + d * b, d, b + KT < a + nq ? KT : a + nq - b, g);
            }
        }
    }
    return tiles;
}

/* Tiles of QT queries x KT keys the pattern needs for queries and keys [0, T), and the visible pairs. */
static void needed(const AttnPattern *p, int T, int QT, int KT, long *tiles, double *pairs) {
    *tiles = 0;
    *pairs = attn_pattern_pairs(p, T);
    int d, reach, g;
    if (attn_pattern_residue(p, 0, &d, &reach, &g)) {
        *tiles = residue_needed(p, T, QT, KT);
        return;
    }
    for (int h = 0; h < H; h++)
        for (int q0 = 0; q0 < T; q0 += QT) {
            int q1 = q0 + QT < T ? q0 + QT : T, keys = 0;
            for (int k0 = 0; k0 < q1; k0 += KT) {
                int any = 0, n = 0;
                for (int j = k0; j < k0 + KT && j < q1; j++) {
                    int seen = 0;
                    for (int i = q0 > j ? q0 : j; i < q1 && !seen; i++) seen = attn_pattern_visible(p, h, i, j);
                    n += seen;
                    any |= seen;
                }
                keys += n;
                *tiles += !attn_pattern_gathered(p) && any;
            }
            if (attn_pattern_gathered(p)) *tiles += (keys + KT - 1) / KT;
        }
}

/* Compiles the instrumented kernel of kind k on path pa for T positions; NULL on failure. */
static CUmodule build_kind(const BenchKind *k, const BenchPath *pa, const AttnPattern *p, int T) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    StrBuf b = {0};
    engine_source_start(&b, pa->shape.mma);
    EngineShape shape = pa->shape;
    shape.ntok = T;
    bool ok = engine_render(&a, &d, &b, p, k->name, &shape, true);
    sb_printf(&b, "extern \"C\" __global__ void %s_count(unsigned *out) { *out = %s_tiles_loaded; %s_tiles_loaded = 0; }\n",
              k->name, k->name, k->name);
    char *src = sb_take(&b, NULL);
    arena_free(&a);
    if (!ok || !src) {
        free(src);
        return NULL;
    }
    return engine_module(&D, src, k->name, "bench_attn");
}

/* Runs kind k on T queries from position 0 on `grid` blocks per head (engine_grid); the key tiles its blocks
 * loaded, or -1. */
static long visited(CUmodule m, const BenchKind *k, int T, int grid, int smem) {
    CUfunction f = NULL, c = NULL;
    char count[64];
    snprintf(count, sizeof count, "%s_count", k->name);
    if (D.moduleGetFunction(&f, m, k->name) != CUDA_SUCCESS || D.moduleGetFunction(&c, m, count) != CUDA_SUCCESS)
        return -1;
    size_t nq = (size_t)T * 3 * H * HD, nkv = (size_t)2 * H * T * HD, ny = (size_t)T * H * HD;
    CUdeviceptr q = 0, kv = 0, y = 0, n = 0;
    long result = -1;
    if (D.memAlloc(&q, nq * 4) == CUDA_SUCCESS && D.memAlloc(&kv, nkv * 4) == CUDA_SUCCESS &&
        D.memAlloc(&y, ny * 4) == CUDA_SUCCESS && D.memAlloc(&n, 4) == CUDA_SUCCESS &&
        D.memsetD8(q, 0, nq * 4) == CUDA_SUCCESS && D.memsetD8(kv, 0, nkv * 4) == CUDA_SUCCESS) {
        int P = 0, rows = T;
        void *args[] = {&q, &kv, &y, &T, &P, &rows};
        void *cargs[] = {&n};
        unsigned tiles = 0;
        if (engine_launch(&D, f, grid, H, 128, smem, args) == CUDA_SUCCESS &&
            D.launchKernel(c, 1, 1, 1, 1, 1, 1, 0, NULL, cargs, NULL) == CUDA_SUCCESS &&
            D.memcpyDtoH(&tiles, n, 4) == CUDA_SUCCESS)
            result = tiles;
    }
    D.memFree(q);
    D.memFree(kv);
    D.memFree(y);
    D.memFree(n);
    return result;
}

/* Key tiles each path visited, per T and kind (from the simulator counts). */
static long tiles_visited[MAX_T][NKINDS][NPATHS];

/* The analytic H100 estimate per kind and T (see the header); an estimate, not a measurement. */
static void print_estimates(const int *Ts, int nT) {
    const DeviceSpec *dev = device_find("h100-sxm");
    if (!dev) return;
    enum { EH = 12, EHD = 64 };
    const BenchPath *tc = &paths[1];
    printf("\nESTIMATE (analytic, not measured): %s, gpt2_small attention geometry (%d heads of %d, bf16 K/V)\n",
           dev->title, EH, EHD);
    printf("pattern: visible pairs only, compulsory bytes; tc path: every pair of the %dx%d tiles it visits, K/V per tile\n",
           tc->qt, tc->kt);
    printf("%-9s %6s %10s %10s %14s %14s %12s %14s\n", "kind", "T", "GFLOP", "MB", "us fp32 cores", "us bf16 tensor",
           "tc GFLOP", "us tc path");
    for (int t = 0; t < nT; t++) {
        int T = Ts[t];
        for (int k = 0; k < NKINDS; k++) {
            AttnPattern p;
            char err[256];
            if (!attn_pattern_build(&p, typed(&kinds[k].spec, H), 0, H, T, err, sizeof err)) continue;
            double pairs = attn_pattern_pairs(&p, T) / H * EH; /* visible pairs per head of the pattern, 12 heads */
            attn_pattern_free(&p);
            /* q.k and p.v per visible pair; Q, K, V read and the output written once, bf16 */
            OpCost c = {.flops = 4.0 * EHD * pairs};
            c.bytes_read[DT_BF16] = 3.0 * T * EH * EHD * 2.0;
            c.bytes_written[DT_BF16] = 1.0 * T * EH * EHD * 2.0;
            double t32 = roofline_seconds(dev, &c, false, DT_F32), t16 = roofline_seconds(dev, &c, true, DT_BF16);
            /* the tensor-core path: its visited tiles (counted for H heads, scaled to EH) in full */
            double tiles = (double)tiles_visited[t][k][1] / H * EH;
            OpCost w = {.flops = 4.0 * EHD * tiles * tc->qt * tc->kt};
            w.bytes_read[DT_BF16] = 1.0 * T * EH * EHD * 2.0 + tiles * 2.0 * tc->kt * EHD * 2.0;
            w.bytes_written[DT_BF16] = c.bytes_written[DT_BF16];
            double ttc = roofline_seconds(dev, &w, true, DT_BF16);
            printf("%-9s %6d %10.4f %10.3f %14.2f %14.2f %12.4f %14.2f\n", kinds[k].name, T, c.flops / 1e9,
                   (op_cost_bytes_read(&c) + op_cost_bytes_written(&c)) / 1e6, t32 * 1e6, t16 * 1e6, w.flops / 1e9,
                   ttc * 1e6);
        }
    }
}

/* Writes PATH.smem beside the .cu at path: per tensor-core kernel of write_cu (heads, head_dims hds[0..1],
 * ntok positions), its name and dynamic shared memory in bytes (tests/bench/attn_sass.sh); false on failure. */
static bool write_smem(const char *path, int heads, const int *hds, int ntok) {
    char name[1024];
    snprintf(name, sizeof name, "%s.smem", path);
    FILE *f = fopen(name, "w");
    bool ok = f != NULL;
    for (int k = 0; ok && k < 2 * NKINDS; k++) {
        AttnPattern p;
        char err[256];
        int hd = hds[k / NKINDS];
        if (!attn_pattern_build(&p, typed(&kinds[k % NKINDS].spec, heads), 0, heads, ntok, err, sizeof err)) {
            ok = false;
            break;
        }
        ok = fprintf(f, "shortc_attn_%s_h%d_hd%d_bf16_tc %d\n", kinds[k % NKINDS].name, heads, hd,
                     attn_mma_smem(hd, attn_mma_kt(hd), attn_pattern_gathered(&p), 2)) > 0;
        attn_pattern_free(&p);
    }
    for (int k = 0; ok && k < 4; k++) { /* causal with the memory family's key sources (write_cu) */
        int hd = hds[k / 2];
        ok = fprintf(f, "shortc_attn_causal_%s_h%d_hd%d_bf16_tc %d\n", k % 2 ? "rec" : "pia", heads, hd,
                     attn_mma_smem(hd, attn_mma_kt(hd), false, 2) + (k % 2 ? 0 : attn_mma_pia_smem(hd, attn_mma_kt(hd), 2))) > 0;
    }
    if (f && fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "bench_attn: could not write %s\n", name);
    return ok;
}

/* Writes both paths' kernels of every kind (bf16, EH heads of EHD, 1024 positions) to path, and the
 * tensor-core path's also at head_dim 128 (its key tiles: attn_mma_kt), and there causal with position-infused
 * attention (`causal_pia`) and with the recurrence's extra key (`causal_rec`) at both head widths; 0 or 1. */
static int write_cu(const char *path) {
    enum { EH = 12, EHD = 64, NTOK = 1024 };
    static const int hds[] = {EHD, 2 * EHD};
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    StrBuf b = {0};
    engine_source_start(&b, true);
    bool ok = true;
    for (int pa = 0; pa < NPATHS && ok; pa++)
        for (int k = 0; k < NKINDS * (pa ? 2 : 1) && ok; k++) {
            const BenchKind *kind = &kinds[k % NKINDS];
            int hd = hds[k / NKINDS];
            AttnPattern p;
            char err[256], name[96];
            if (!attn_pattern_build(&p, typed(&kind->spec, EH), 0, EH, NTOK, err, sizeof err)) {
                fprintf(stderr, "bench_attn: %s\n", err);
                ok = false;
                break;
            }
            EngineShape s = paths[pa].shape;
            s.heads = EH;
            s.hd = hd;
            s.ntok = NTOK;
            if (s.mma) s.kt = attn_mma_kt(hd);
            s.t_qkv = s.t_kv = s.t_out = "__nv_bfloat16";
            snprintf(name, sizeof name, "shortc_attn_%s_h%d_hd%d_bf16%s", kind->name, EH, hd, pa ? "_tc" : "_cuda_core");
            ok = engine_render(&a, &d, &b, &p, name, &s, false);
            attn_pattern_free(&p);
        }
    for (int k = 0; k < 4 && ok; k++) { /* the memory family's key sources on causal, tensor-core path */
        AttnPattern p;
        char err[256], name[96];
        ok = attn_pattern_build(&p, typed(&kinds[0].spec, EH), 0, EH, NTOK, err, sizeof err);
        if (!ok) break;
        EngineShape s = paths[1].shape;
        s.heads = EH;
        s.hd = hds[k / 2];
        s.ntok = NTOK;
        s.kt = attn_mma_kt(s.hd);
        s.t_qkv = s.t_kv = s.t_out = "__nv_bfloat16";
        s.pia = k % 2 == 0;
        s.t_xkv = k % 2 ? "__nv_bfloat16" : NULL;
        snprintf(name, sizeof name, "shortc_attn_causal_%s_h%d_hd%d_bf16_tc", k % 2 ? "rec" : "pia", EH, s.hd);
        ok = engine_render(&a, &d, &b, &p, name, &s, false);
        attn_pattern_free(&p);
    }
    size_t len = 0;
    char *src = sb_take(&b, &len);
    ok = ok && write_smem(path, EH, hds, NTOK);
    FILE *f = ok && src ? fopen(path, "w") : NULL;
    ok = f && fwrite(src, 1, len, f) == len;
    if (f && fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "bench_attn: could not write %s\n", path);
    free(src);
    arena_free(&a);
    return ok ? 0 : 1;
}

/* The visited/needed table of path pa over the Ts; the number of kinds that miss the goal (-1: no run). */
static int tile_table(const BenchPath *pa, int ipath, const int *Ts, int nT) {
    char err[256];
    int fails = 0;
    printf("attention engine, %s: key tiles of %d loaded per query tile of %d (simulator count, %d heads)\n",
           pa->title, pa->kt, pa->qt, H);
    printf("%-9s %6s %10s %10s %8s %9s %11s\n", "kind", "T", "visited", "needed", "ratio", "density", "vs causal");
    for (int t = 0; t < nT; t++) {
        int T = Ts[t];
        for (int k = 0; k < NKINDS; k++) {
            AttnPattern p;
            if (!attn_pattern_build(&p, typed(&kinds[k].spec, H), 0, H, T, err, sizeof err)) {
                fprintf(stderr, "bench_attn: %s\n", err);
                return -1;
            }
            long need = 0, got = -1;
            double pairs = 0;
            needed(&p, T, pa->qt, pa->kt, &need, &pairs);
            CUmodule m = build_kind(&kinds[k], pa, &p, T);
            if (m) {
                got = visited(m, &kinds[k], T, engine_grid(&pa->shape, &p, T), engine_smem(&pa->shape, &p));
                D.moduleUnload(m);
            }
            tiles_visited[t][k][ipath] = got;
            double ratio = need ? (double)got / (double)need : 1.0;
            double goal = k == 0 ? 1.02 : 1.05;
            bool ok = got >= 0 && ratio <= goal;
            fails += !ok;
            printf("%-9s %6d %10ld %10ld %8.3f %9.4f %11.4f%s\n", kinds[k].name, T, got, need, ratio,
                   pairs / ((double)H * T * T), pairs / ((double)H * T * (T + 1) / 2.0), ok ? "" : "  MISSES THE GOAL");
            attn_pattern_free(&p);
        }
    }
    return fails;
}

int main(int argc, char **argv) {
    paths[1].qt = ATTN_MMA_QT;
    paths[1].kt = paths[1].shape.kt = attn_mma_kt(HD);
    if (argc == 3 && !strcmp(argv[1], "--cu")) return write_cu(argv[2]);
    char err[256];
    if (rt_driver_sim(&D, 0, 0, err, sizeof err) != SRT_OK) {
        fprintf(stderr, "bench_attn: no simulator: %s\n", err);
        return 1;
    }
    int Ts[MAX_T] = {128, 1024}, nT = argc > 1 ? argc - 1 : 2, fails = 0;
    if (nT > MAX_T) {
        fprintf(stderr, "bench_attn: at most %d token counts\n", MAX_T);
        return 1;
    }
    for (int t = 0; argc > 1 && t < nT; t++) {
        char *end;
        long T = strtol(argv[t + 1], &end, 10);
        if (*end || T < 1 || T > 1 << 14) {
            fprintf(stderr, "bench_attn: T must be in [1, 16384]\n");
            return 1;
        }
        Ts[t] = (int)T;
    }
    for (int pa = 0; pa < NPATHS; pa++) {
        int f = tile_table(&paths[pa], pa, Ts, nT);
        if (f < 0) return 1;
        fails += f;
        if (pa + 1 < NPATHS) printf("\n");
    }
    printf("density: visible pairs / (heads * T * T); vs causal: / (heads * T(T+1)/2)\n");
    print_estimates(Ts, nT);
    return fails ? 1 : 0;
}
