/*
 * test_engine.c — the attention patterns and the engine's hooks, alone:
 *   patterns  Gaussian rows hold exactly min(c, i+1) distinct keys in [0, i]
 *             (base=1, the default) or min(c, i) in [0, i) plus the query
 *             (base=0 self=1); BigBird's window (w=3: own block and one
 *             before), global and random block counts; Child et al.'s local
 *             head sees l+1 keys, their fixed pattern its block or c columns
 *             per block; a seed gives the same pattern every time, another
 *             seed another one;
 *   lists     every visible pair lies in a listed key tile, a tile marked
 *             full has every pair visible, no listed tile is empty (visited
 *             == needed), a gathered list is exactly the union of its
 *             queries' keys;
 *   residue   dilated and strided are residue kinds: their description by
 *             residue (dilation, band, globals) equals the pattern, and their
 *             hooks are that key source, not key lists;
 *   hooks     the emitted _visible hook, run on the simulator for every
 *             (head, query, key), equals the pattern; _extra is 0;
 *   renderings  every kind of the kind table (compiler/attn_kinds.c): the C
 *             rendering of its visibility (templates/attn_kinds.cuh through
 *             the table) equals the CUDA rendering (its decode hooks run on
 *             the simulator) on a grid of (head, query, key); Transformer-XL's
 *             rule (txl_visible) equals its engine hook at several positions;
 *             a kind with no case in `kinds` and no defaults fails;
 *   engine    the kernel launched by hand with P > 0 (keys 0..P+T-1 exist)
 *             and kv_rows > P+T equals a double-precision reference;
 *   mma       the same for the tensor-core path (templates/attn_mma.cuh) of
 *             every kind: fp16 at head width 24 and fp16 queries with bf16
 *             [tokens, heads, dim] keys/values and fp32 output at 40 (both
 *             padded to a multiple of 16 in shared memory), fp32 on TF32
 *             MMAs at head width 20 (mma_tf32), one block
 *             striding over the query tiles or one block per tile;
 *   mma memory  causal on the tensor-core path with position-infused
 *             attention's table (P > 0: slots of the cache) and with the
 *             recurrence's extra key (present in fp32 or the keys' type, and
 *             absent), each variant, against the same reference;
 *   tables    the Gaussian keys table emitted for gaussian_tiny equals the
 *             interpreter's pattern (one generator for every backend).
 */
#include "engine_module.h"
#include "engine_render.h"
#include "half.h"
#include "rt_driver.h"
#include "../check.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static RtDriver D;

/* One kind under test. */
typedef struct Kind {
    const char *name;      /* kernel name */
    AttnSpec spec;         /* its attention */
} Kind;

static Kind kinds[] = {
    {"k_causal", {.kind = ATTN_CAUSAL}},
    {"k_window", {.kind = ATTN_WINDOW, .params = {{"size", 9}}, .nparams = 1}},
    {"k_dilated", {.kind = ATTN_DILATED, .params = {{"dilation", 3}, {"global", 2}, {"size", 4}}, .nparams = 3}},
    {"k_strided", {.kind = ATTN_STRIDED, .params = {{"local_heads", 1}, {"stride", 6}}, .nparams = 2}},
    {"k_bigbird",
     {.kind = ATTN_BIGBIRD,
      .params = {{"block", 5}, {"global", 1}, {"random", 2}, {"seed", 4}, {"window", 3}},
      .nparams = 5}},
    {"k_gaussian",
     {.kind = ATTN_GAUSSIAN, .params = {{"base", 1}, {"c", 5}, {"seed", 3}, {"self", 0}, {"tie", 0}}, .nparams = 5}},
    {"k_fixed", {.kind = ATTN_FIXED, .params = {{"c", 2}, {"local_heads", 1}, {"stride", 7}}, .nparams = 3}},
    {"k_dilheads",
     {.kind = ATTN_DILATED,
      .params = {{"dilation", 4}, {"global", 1}, {"size", 3}, {"size_last", 0}, {"undilated_heads", 1}},
      .nparams = 5}},
    {"k_gauss0",
     {.kind = ATTN_GAUSSIAN, .params = {{"base", 0}, {"c", 4}, {"seed", 5}, {"self", 1}, {"tie", 1}}, .nparams = 5}},
    /* wide bands: full key tiles on the tensor-core path (its query tiles are ATTN_MMA_QT long) */
    {"k_wide", {.kind = ATTN_WINDOW, .params = {{"size", 230}}, .nparams = 1}},
    {"k_dilwide", {.kind = ATTN_DILATED, .params = {{"dilation", 2}, {"global", 40}, {"size", 150}}, .nparams = 3}},
};
enum { NKINDS = sizeof kinds / sizeof kinds[0], H = 3, HD = 20, NTOK = 80, QT = 8, KT = 32, NQT = NTOK / QT };

/* The tensor-core tests' positions: several query tiles of ATTN_MMA_QT, so runs of full key tiles occur. */
enum { MMA_NTOK = 400 };

/* The pattern of spec s (typed here, as sema types a model's) at layer over ntok positions. */
static bool build_n(AttnPattern *p, const AttnSpec *s, int layer, int ntok) {
    char err[256];
    AttnSpec typed = *s;
    bool ok = attn_spec_type(&typed, H, err, sizeof err) && attn_pattern_build(p, &typed, layer, H, ntok, err, sizeof err);
    if (!ok) printf("pattern: %s\n", err);
    CHECK(ok);
    return ok;
}

static bool build(AttnPattern *p, const AttnSpec *s, int layer) { return build_n(p, s, layer, NTOK); }

/* ---- patterns ------------------------------------------------------------ */

/* Rows of one Gaussian kind: base=1 min(c, i+1) keys in [0, i], none added; base=0 self=1 min(c, i) keys in
 * [0, i) plus the query. */
static void gaussian_rows(const AttnSpec *s) {
    AttnPattern p;
    if (!build(&p, s, 0)) return;
    for (int h = 0; h < H; h++)
        for (int i = 0; i < NTOK; i++) {
            const int *row = attn_pattern_gaussian_row(&p, h, i);
            int n = 0, seen = 0, m = i + p.prm.base; /* the survey's i */
            for (int k = 0; k < p.prm.c; k++)
                if (row[k] >= 0) {
                    CHECK(row[k] < m && (k == 0 || row[k] > row[k - 1]));
                    n++;
                }
            for (int j = 0; j < NTOK; j++) seen += attn_pattern_visible(&p, h, i, j);
            CHECK(n == (m < p.prm.c ? m : p.prm.c));
            CHECK(seen == n + p.prm.self && seen <= p.prm.c + p.prm.self && seen >= 1);
        }
    attn_pattern_free(&p);
}

static void test_gaussian_rows(void) {
    gaussian_rows(&kinds[5].spec);
    gaussian_rows(&kinds[8].spec);
    AttnPattern p;
    if (!build(&p, &kinds[5].spec, 0)) return;
    AttnPattern again, other;
    AttnSpec s2 = kinds[5].spec;
    s2.params[2].value = 4; /* seed */
    if (build(&again, &kinds[5].spec, 0) && build(&other, &s2, 0)) {
        CHECK(memcmp(again.table, p.table, sizeof *p.table * H * NTOK * p.prm.c) == 0);
        CHECK(memcmp(other.table, p.table, sizeof *p.table * H * NTOK * p.prm.c) != 0);
        attn_pattern_free(&again);
        attn_pattern_free(&other);
    }
    attn_pattern_free(&p);
}

/* Child et al.: the strided kind's local head sees A1 = [i - l, i] (l+1 keys); the fixed kind's local head its
 * block of l so far, its summary head the last c columns of every block so far. */
static void test_child_counts(void) {
    AttnPattern st, fx;
    if (!build(&st, &kinds[3].spec, 0) || !build(&fx, &kinds[6].spec, 0)) return;
    int l = fx.prm.stride, c = fx.prm.c;
    for (int i = 0; i < NTOK; i++) {
        int local = 0, summary = 0, fixed_local = 0;
        for (int j = 0; j < NTOK; j++) {
            local += attn_pattern_visible(&st, 0, i, j);
            fixed_local += attn_pattern_visible(&fx, 0, i, j);
            summary += attn_pattern_visible(&fx, 1, i, j);
        }
        CHECK(local == (i < st.prm.stride ? i + 1 : st.prm.stride + 1));
        CHECK(fixed_local == i % l + 1);
        CHECK(summary == i / l * c + (i % l >= l - c ? i % l - (l - c) + 1 : 0));
    }
    attn_pattern_free(&st);
    attn_pattern_free(&fx);
}

static void test_bigbird_counts(void) {
    AttnPattern p;
    if (!build(&p, &kinds[4].spec, 1)) return;
    int w = (p.prm.window + 1) / 2, g = p.prm.global;
    CHECK(w == 2); /* window=3 blocks centred on the query's: causally its own and the one before */
    int b = p.prm.block;
    for (int h = 0; h < H; h++)
        for (int qb = 0; qb < NTOK / b; qb++) {
            int i = qb * b + b - 1; /* the block's last query sees every key of a visible block */
            int window = 0, global = 0, random = 0;
            for (int kb = 0; kb <= qb; kb++) {
                bool v = attn_pattern_visible(&p, h, i, kb * b);
                for (int j = kb * b; j < kb * b + b; j++) CHECK(attn_pattern_visible(&p, h, i, j) == v);
                if (qb - kb < w) window += v;
                else if (kb < g || qb < g) global += v;
                else random += v;
            }
            int cands = qb - w - g + 1;
            CHECK(window == (qb + 1 < w ? qb + 1 : w));
            CHECK(qb < g || global == (g < qb - w + 1 ? g : qb - w + 1 > 0 ? qb - w + 1 : 0));
            CHECK(random == (cands <= 0 ? 0 : cands < p.prm.random ? cands : p.prm.random));
        }
    attn_pattern_free(&p);
}

/* ---- key lists ----------------------------------------------------------- */

/* The interval-arithmetic row counts equal a brute-force count over the mask. */
static void test_row_counts(void) {
    for (int k = 0; k < NKINDS; k++) {
        AttnPattern p;
        if (!build(&p, &kinds[k].spec, 2)) continue;
        int bad = 0;
        for (int h = 0; h < H; h++)
            for (int i = 0; i < NTOK; i++)
                for (int a = -3; a < NTOK; a += 7)
                    for (int b = a; b <= NTOK + 2; b += 5) {
                        long brute = 0;
                        for (int j = a; j < b; j++) brute += attn_pattern_visible(&p, h, i, j);
                        bad += attn_pattern_row_count(&p, h, i, a, b) != brute;
                    }
        if (bad) printf("%s: %d row counts differ from the mask\n", kinds[k].name, bad);
        CHECK(bad == 0);
        attn_pattern_free(&p);
    }
}

static void test_lists(void) {
    int *ent = malloc(sizeof *ent * NTOK);
    for (int k = 0; k < NKINDS; k++) {
        AttnPattern p;
        if (!build(&p, &kinds[k].spec, 0)) continue;
        for (int h = 0; h < H; h++)
            for (int t = 0; t < NQT; t++) {
                int q0 = t * QT, q1 = q0 + QT;
                if (attn_pattern_gathered(&p)) {
                    int n = attn_pattern_gather_list(&p, h, q0, q1, ent), m = 0;
                    for (int j = 0; j < q1; j++) {
                        bool any = false;
                        for (int i = q0; i < q1; i++) any |= attn_pattern_visible(&p, h, i, j);
                        if (any) CHECK(m < n && ent[m++] == j);
                    }
                    CHECK(m == n);
                    continue;
                }
                int n = attn_pattern_tile_list(&p, h, q0, q1, KT, ent);
                for (int e = 0; e < n; e++) {
                    int k0 = (ent[e] >> 1) * KT, any = 0, all = 1;
                    for (int i = q0; i < q1; i++)
                        for (int j = k0; j < k0 + KT; j++) {
                            any |= attn_pattern_visible(&p, h, i, j);
                            all &= attn_pattern_visible(&p, h, i, j);
                        }
                    CHECK(any);                      /* visited == needed */
                    CHECK(!(ent[e] & 1) || all);     /* full means full */
                }
                for (int i = q0; i < q1; i++)
                    for (int j = 0; j <= i; j++) {
                        if (!attn_pattern_visible(&p, h, i, j)) continue;
                        bool listed = false;
                        for (int e = 0; e < n; e++) listed |= (ent[e] >> 1) == j / KT;
                        CHECK(listed);
                    }
            }
        attn_pattern_free(&p);
    }
    free(ent);
}

/* Residue kinds: the description by residue (dilation, band, globals) is the pattern, and the emitted hooks are
 * that key source (no key lists). */
static void test_residue(void) {
    for (int k = 0; k < NKINDS; k++) {
        AttnPattern p;
        if (!build(&p, &kinds[k].spec, 0)) continue;
        int d, reach, g;
        bool residue = attn_pattern_residue(&p, 0, &d, &reach, &g);
        CHECK(residue == (p.kind == ATTN_DILATED || p.kind == ATTN_STRIDED));
        for (int h = 0; residue && h < H; h++) {
            CHECK(attn_pattern_residue(&p, h, &d, &reach, &g) && d >= 1 && reach >= 1);
            for (int i = 0; i < NTOK; i++)
                for (int j = 0; j <= i; j++)
                    CHECK(attn_pattern_visible(&p, h, i, j) == (j < g || ((i - j) % d == 0 && (i - j) / d < reach)));
        }
        char *hooks = attn_pattern_band(&p) ? NULL : attn_hooks(&p, "k", QT, KT, NQT); /* banded: neither */
        CHECK(attn_pattern_band(&p) ||
              (hooks && (strstr(hooks, "k_dil(int h)") != NULL) == residue && (strstr(hooks, "k_ent") != NULL) == !residue));
        free(hooks);
        attn_pattern_free(&p);
    }
}

/* ---- hooks and the engine on the simulator -------------------------------- */

/* Engine kernel + probe kernel of every kind, after the prelude. */
static char *engine_source(Arena *a, Diag *d) {
    StrBuf b = {0};
    engine_source_start(&b, false);
    for (int k = 0; k < NKINDS; k++) {
        AttnPattern p;
        if (!build(&p, &kinds[k].spec, 0)) continue;
        const EngineShape shape = {.heads = H, .hd = HD, .qpw = QT / 4, .kt = KT, .ntok = NTOK};
        CHECK(engine_render(a, d, &b, &p, kinds[k].name, &shape, false));
        sb_printf(&b,
                  "extern \"C\" __global__ void %s_probe(unsigned char *vis, float *extra, int n) {\n"
                  "    for (int x = threadIdx.x; x < n * n; x += blockDim.x) {\n"
                  "        const int h = blockIdx.x, i = x / n, j = x %% n;\n"
                  "        vis[(h * n + i) * n + j] = %s_visible(h, i, j);\n"
                  "        extra[(h * n + i) * n + j] = %s_extra(h, i, j);\n"
                  "    }\n}\n",
                  kinds[k].name, kinds[k].name, kinds[k].name);
        attn_pattern_free(&p);
    }
    return sb_take(&b, NULL);
}

static CUmodule load_names(const char *src, const char **names, int n) {
    const char *cache = getenv("SHORTC_CACHE");
    RtCompileRequest req = {.source = src, .len = strlen(src), .name = "attn_engine_test", .arch = 80,
                            .cache_dir = cache && *cache ? cache : "/tmp/shortc-sim-test-cache",
                            .kernel_names = names, .nkernels = n};
    static char err[65536];
    RtCompiled out;
    CUmodule m = NULL;
    if (D.compile_module(&req, &out, err, sizeof err) != SRT_OK) {
        printf("compile failed: %s\n", err);
        check_failures++;
        return NULL;
    }
    if (D.moduleLoadData(&m, out.image) != CUDA_SUCCESS) {
        printf("load failed: %s\n", D.last_fault());
        check_failures++;
        m = NULL;
    }
    rt_compiled_release(&out);
    return m;
}

static CUmodule load(const char *src) {
    const char *names[2 * NKINDS];
    char buf[2 * NKINDS][64];
    for (int k = 0; k < NKINDS; k++) {
        snprintf(buf[2 * k], 64, "%s", kinds[k].name);
        snprintf(buf[2 * k + 1], 64, "%s_probe", kinds[k].name);
        names[2 * k] = buf[2 * k];
        names[2 * k + 1] = buf[2 * k + 1];
    }
    return load_names(src, names, 2 * NKINDS);
}

static CUdeviceptr upload(const void *p, size_t bytes) {
    CUdeviceptr d = 0;
    CHECK(D.memAlloc(&d, bytes) == CUDA_SUCCESS);
    if (p) CHECK(D.memcpyHtoD(d, p, bytes) == CUDA_SUCCESS);
    return d;
}

static CUfunction fn(CUmodule m, const char *name) {
    CUfunction f = NULL;
    CHECK(D.moduleGetFunction(&f, m, name) == CUDA_SUCCESS);
    return f;
}

static void test_probe(CUmodule m, int k) {
    enum { N = 70 };
    AttnPattern p;
    if (!build(&p, &kinds[k].spec, 0)) return;
    CUdeviceptr vis = upload(NULL, H * N * N), extra = upload(NULL, sizeof(float) * H * N * N);
    int n = N;
    void *args[] = {&vis, &extra, &n};
    char name[80];
    snprintf(name, sizeof name, "%s_probe", kinds[k].name);
    CHECK(D.launchKernel(fn(m, name), H, 1, 1, 128, 1, 1, 0, NULL, args, NULL) == CUDA_SUCCESS);
    static unsigned char v[H * N * N];
    static float x[H * N * N];
    CHECK(D.memcpyDtoH(v, vis, sizeof v) == CUDA_SUCCESS && D.memcpyDtoH(x, extra, sizeof x) == CUDA_SUCCESS);
    int bad = 0;
    for (int h = 0; h < H; h++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                bad += v[(h * N + i) * N + j] != attn_pattern_visible(&p, h, i, j) || x[(h * N + i) * N + j] != 0.0f;
    if (bad) printf("%s: the _visible/_extra hooks differ from the pattern at %d pairs\n", kinds[k].name, bad);
    CHECK(bad == 0);
    D.memFree(vis);
    D.memFree(extra);
    attn_pattern_free(&p);
}

/* ---- one visibility, two renderings --------------------------------------- */

/* The spec kind k is tested with: its case in `kinds`, else its defaults (a kind whose parameters all have
 * one); false when it has neither (a new kind needs a case). */
static bool kind_case(AttnKind k, AttnSpec *out) {
    for (int i = 0; i < NKINDS; i++)
        if (kinds[i].spec.kind == k) {
            *out = kinds[i].spec;
            return true;
        }
    *out = (AttnSpec){.kind = k};
    char err[256];
    return attn_spec_type(out, H, err, sizeof err);
}

/* Transformer-XL's cases: memory rows, same_length. */
static const int txl_cases[][2] = {{0, 0}, {3, 0}, {3, 1}, {8, 1}};
enum { NTXL = sizeof txl_cases / sizeof *txl_cases, VIS_N = 70 };

/* Every kind of the table with a visibility: its decode hooks (templates/attn_hooks.cuh over attn_kinds.cuh)
 * and a probe kernel vis_K; Transformer-XL's hooks (templates/attn_txl_hooks.cuh) and probe txl_C per case. */
static char *visibility_source(Arena *a, Diag *d) {
    StrBuf b = {0};
    engine_source_start(&b, false);
    for (int k = 0; k < ATTN_COUNT; k++) {
        AttnSpec s;
        AttnPattern p;
        if (!kind_case((AttnKind)k, &s)) {
            printf("attention kind '%s' has no case in test_engine.c's kinds\n", attn_kind_name((AttnKind)k));
            CHECK(false);
            continue;
        }
        if (!build(&p, &s, 0)) continue;
        char name[32];
        snprintf(name, sizeof name, "vis_%d", k);
        char *hooks = attn_visible_hooks(&p, name);
        CHECK(hooks != NULL);
        if (hooks) sb_puts(&b, hooks);
        free(hooks);
        sb_printf(&b,
                  "\nextern \"C\" __global__ void %s_probe(unsigned char *vis, int n) {\n"
                  "    for (int x = threadIdx.x; x < n * n; x += blockDim.x)\n"
                  "        vis[(blockIdx.x * n + x / n) * n + x %% n] = %s_visible(blockIdx.x, x / n, x %% n);\n}\n",
                  name, name);
        attn_pattern_free(&p);
    }
    for (int c = 0; c < NTXL; c++) {
        TmplArgs t = {0};
        tmpl_setf(a, &t, "KERNEL_NAME", "txl_%d", c);
        tmpl_setf(a, &t, "MEMORY", "%d", txl_cases[c][0]);
        tmpl_set(&t, "CLAMP", "0");
        tmpl_setf(a, &t, "SAME_LENGTH", "%d", txl_cases[c][1]);
        tmpl_set(&t, "REACH", "0");
        tmpl_set(&t, "T_REL", "float");
        tmpl_set(&t, "T_B", "float");
        tmpl_set(&t, "LAST_ROW", "0");
        tmpl_set(&t, "HD", "1");
        tmpl_set(&t, "W", "1");
        tmpl_set(&t, "MMA", "0");
        CHECK(template_render(d, "attn_txl_hooks.cuh", t.kv, t.n, &b));
        sb_printf(&b,
                  "\nextern \"C\" __global__ void txl_%d_probe(unsigned char *vis, int n, int P) {\n"
                  "    for (int x = threadIdx.x; x < n * n; x += blockDim.x)\n"
                  "        vis[x] = txl_%d_visible(0, x / n, x %% n);  // reads P, as in the engine\n}\n",
                  c, c);
    }
    (void)a;
    return sb_take(&b, NULL);
}

/* Runs probe `name` (grid heads) over n x n (query, key) pairs with the extra argument P (when txl). */
static bool run_probe(CUmodule m, const char *name, int heads, int n, bool txl, int P, unsigned char *v) {
    CUdeviceptr vis = upload(NULL, (size_t)heads * n * n);
    void *args[] = {&vis, &n, &P};
    char probe[64];
    snprintf(probe, sizeof probe, "%s_probe", name);
    bool ok = D.launchKernel(fn(m, probe), heads, 1, 1, 128, 1, 1, 0, NULL, args, NULL) == CUDA_SUCCESS &&
              D.memcpyDtoH(v, vis, (size_t)heads * n * n) == CUDA_SUCCESS;
    (void)txl;
    D.memFree(vis);
    CHECK(ok);
    return ok;
}

/* The C rendering of every kind's visibility (attn_pattern_visible through the kind table; txl_visible) equals
 * the CUDA rendering (the kernels' hooks, run on the simulator) at every (head, query, key) of a grid, and
 * for Transformer-XL at several positions P. */
static void test_visibility_renderings(Arena *a, Diag *d) {
    char *src = visibility_source(a, d);
    static char names[ATTN_COUNT + NTXL][32];
    const char *list[2 * (ATTN_COUNT + NTXL)];
    static char probes[ATTN_COUNT + NTXL][40];
    int n = 0;
    for (int k = 0; k < ATTN_COUNT; k++) snprintf(names[k], 32, "vis_%d", k);
    for (int c = 0; c < NTXL; c++) snprintf(names[ATTN_COUNT + c], 32, "txl_%d", c);
    for (int i = 0; i < ATTN_COUNT + NTXL; i++) {
        snprintf(probes[i], 40, "%s_probe", names[i]);
        list[n++] = probes[i];
    }
    CUmodule m = src ? load_names(src, list, n) : NULL;
    free(src);
    static unsigned char v[H * VIS_N * VIS_N];
    for (int k = 0; m && k < ATTN_COUNT; k++) {
        AttnSpec s;
        AttnPattern p;
        if (!kind_case((AttnKind)k, &s) || !build(&p, &s, 0)) continue;
        int bad = 0;
        if (run_probe(m, names[k], H, VIS_N, false, 0, v))
            for (int h = 0; h < H; h++)
                for (int i = 0; i < VIS_N; i++)
                    for (int j = 0; j < VIS_N; j++)
                        bad += v[(h * VIS_N + i) * VIS_N + j] != attn_pattern_visible(&p, h, i, j);
        if (bad) printf("%s: C and CUDA visibility differ at %d pairs\n", attn_kind_name((AttnKind)k), bad);
        CHECK(bad == 0);
        attn_pattern_free(&p);
    }
    for (int c = 0; m && c < NTXL; c++)
        for (int P = 0; P <= 12; P += 3) {
            int bad = 0;
            if (run_probe(m, names[ATTN_COUNT + c], 1, VIS_N, true, P, v))
                for (int i = 0; i < VIS_N; i++)
                    for (int j = 0; j < VIS_N; j++)
                        bad += v[i * VIS_N + j] != txl_visible(i, j, P, txl_cases[c][0], txl_cases[c][1]);
            if (bad) printf("txl memory %d same_length %d P %d: C and CUDA differ at %d pairs\n", txl_cases[c][0],
                            txl_cases[c][1], P, bad);
            CHECK(bad == 0);
        }
    if (m) D.moduleUnload(m);
}

/* Fills x with deterministic values in [-1, 1). */
static void fill(float *x, size_t n, unsigned seed) {
    RtRng r = {.s = seed};
    for (size_t i = 0; i < n; i++) x[i] = (float)(2.0 * rt_rng_uniform(&r) - 1.0);
}

/* Max |y - reference| of an attention call: queries P..P+T-1 of head width hd, qkv [T, 3*H*hd] and kv
 * [2, H, kv_rows, hd] (fp32 values, already rounded to the kernel's types), y [T, H*hd]. pos (or NULL):
 * position-infused attention's table [slots, 2*H*hd], slot s's query adding pos[s][h*hd..] and its key
 * pos[s][(H+h)*hd..]; xkv (or NULL): the recurrence's extra key | value | present [2*H*hd + 1], seen by every
 * query when present. */
static double reference_worst(const AttnPattern *p, const float *qkv, const float *kv, const float *y, int P, int T,
                              int kv_rows, int hd, const float *pos, const float *xkv) {
    int W = 3 * H * hd, PW = 2 * H * hd;
    double worst = 0;
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++) {
            int i = P + t;
            double mx = -INFINITY, sum = 0, acc[128] = {0}, s[MMA_NTOK], q[128], xs = 0;
            for (int d = 0; d < hd; d++) q[d] = (double)qkv[(size_t)t * W + h * hd + d] + (pos ? pos[(size_t)i * PW + h * hd + d] : 0.0);
            bool extra = xkv && xkv[2 * H * hd] != 0.0f;
            for (int d = 0; extra && d < hd; d++) xs += q[d] * xkv[h * hd + d] / sqrt((double)hd);
            if (extra) mx = xs;
            for (int j = 0; j <= i; j++) {
                if (!attn_pattern_visible(p, h, i, j)) continue;
                double dot = 0;
                for (int d = 0; d < hd; d++)
                    dot += q[d] * ((double)kv[((size_t)h * kv_rows + j) * hd + d] + (pos ? pos[(size_t)j * PW + (H + h) * hd + d] : 0.0));
                s[j] = dot / sqrt((double)hd);
                mx = fmax(mx, s[j]);
            }
            if (extra) {
                sum = exp(xs - mx);
                for (int d = 0; d < hd; d++) acc[d] = sum * xkv[(H + h) * hd + d];
            }
            for (int j = 0; j <= i; j++) {
                if (!attn_pattern_visible(p, h, i, j)) continue;
                double w = exp(s[j] - mx);
                sum += w;
                for (int d = 0; d < hd; d++) acc[d] += w * kv[((size_t)(H + h) * kv_rows + j) * hd + d];
            }
            for (int d = 0; d < hd; d++)
                worst = fmax(worst, fabs(y[(size_t)t * H * hd + h * hd + d] - (sum > 0 ? acc[d] / sum : 0)));
        }
    return worst;
}

/* The engine with queries P..P+T-1 against a reference; kv has kv_rows rows per head, [2, H, kv_rows, HD]. */
static void test_engine_call(CUmodule m, int k, int P, int T) {
    AttnPattern p;
    if (!build(&p, &kinds[k].spec, 0)) return;
    int kv_rows = P + T + 5, W = 3 * H * HD;
    float *qkv = malloc(sizeof *qkv * (size_t)T * W), *kv = malloc(sizeof *kv * 2 * H * kv_rows * HD);
    float *y = malloc(sizeof *y * (size_t)T * H * HD);
    fill(qkv, (size_t)T * W, 1 + P);
    fill(kv, (size_t)2 * H * kv_rows * HD, 2 + T);
    CUdeviceptr dq = upload(qkv, sizeof *qkv * (size_t)T * W), dkv = upload(kv, sizeof *kv * 2 * H * kv_rows * HD);
    CUdeviceptr dy = upload(NULL, sizeof *y * (size_t)T * H * HD);
    void *args[] = {&dq, &dkv, &dy, &T, &P, &kv_rows};
    CHECK(D.launchKernel(fn(m, kinds[k].name), (T + QT - 1) / QT, H, 1, 128, 1, 1, 0, NULL, args, NULL) == CUDA_SUCCESS);
    CHECK(D.memcpyDtoH(y, dy, sizeof *y * (size_t)T * H * HD) == CUDA_SUCCESS);
    double worst = reference_worst(&p, qkv, kv, y, P, T, kv_rows, HD, NULL, NULL);
    if (!(worst <= 1e-5)) printf("%s P=%d T=%d: max |y - ref| = %g\n", kinds[k].name, P, T, worst);
    CHECK(worst <= 1e-5);
    D.memFree(dq);
    D.memFree(dkv);
    D.memFree(dy);
    free(qkv);
    free(kv);
    free(y);
    attn_pattern_free(&p);
}

/* ---- the tensor-core path (templates/attn_mma.cuh) ------------------------ */

/* One tensor-core variant: element types, head width (not a multiple of 16: padded), KV layout. */
typedef struct MmaVariant {
    const char *part;       /* the attn_unit argument that runs this variant alone */
    const char *sfx;        /* kernel-name suffix */
    DType qkv, kv, out;     /* element types */
    int hd;                 /* head width */
    int kt;                 /* keys per tile */
    bool thd;               /* KV [2, tokens, heads, dim] */
    double tol;             /* max |y - ref| (P is rounded to the KV type for the MMA) */
} MmaVariant;

static const MmaVariant mma_variants[] = {
    {"mma_f16", "_tc_f16", DT_F16, DT_F16, DT_F16, 24, 32, false, 6e-3},
    {"mma_mix", "_tc_mix", DT_F16, DT_BF16, DT_F32, 40, 16, true, 2e-2},
    /* fp32 on TF32 MMAs, head width 20 (five 16-byte chunks of 4 floats, padded to 32): Q, K, P and V rounded
     * to 10 mantissa bits (u = 2^-11 relative each, fp16's mantissa, no rounded output): a score's error is at
     * most 2u times the sum of |q_d k_d| (< 20 here, scaled by 1/sqrt(20)), P and V add u each; measured
     * 3.6e-4 over every kind and call, so 2e-3 (about 4u) */
    {"mma_tf32", "_tc_tf32", DT_F32, DT_F32, DT_F32, 20, 32, false, 2e-3},
};
enum { NMMA = sizeof mma_variants / sizeof mma_variants[0] };

static const char *cuda_type(DType t) { return t == DT_F16 ? "__half" : t == DT_BF16 ? "__nv_bfloat16" : "float"; }

/* Every kind's kernel of variant `only` (every variant: -1), after the prelude and mma_frag.cuh. */
static char *mma_source(Arena *a, Diag *d, char names[][64], int only) {
    StrBuf b = {0};
    engine_source_start(&b, true);
    for (int v = 0; v < NMMA; v++)
        for (int k = 0; k < NKINDS && (only < 0 || v == only); k++) {
            AttnPattern p;
            if (!build_n(&p, &kinds[k].spec, 0, MMA_NTOK)) continue;
            const MmaVariant *mv = &mma_variants[v];
            const EngineShape shape = {.heads = H, .hd = mv->hd, .kt = mv->kt, .ntok = MMA_NTOK, .mma = true,
                                       .t_qkv = cuda_type(mv->qkv), .t_kv = cuda_type(mv->kv),
                                       .t_out = cuda_type(mv->out), .thd = mv->thd};
            snprintf(names[v * NKINDS + k], 64, "%s%s", kinds[k].name, mv->sfx);
            CHECK(engine_render(a, d, &b, &p, names[v * NKINDS + k], &shape, false));
            attn_pattern_free(&p);
        }
    return sb_take(&b, NULL);
}

/* x rounded to t in place; the device bytes of x (2 or 4 per element, layout unchanged) into raw. */
static void to_device_type(float *x, size_t n, DType t, unsigned char *raw) {
    for (size_t i = 0; i < n; i++) {
        if (t == DT_F32) {
            memcpy(raw + 4 * i, &x[i], 4);
            continue;
        }
        uint16_t h = t == DT_F16 ? rt_f32_to_f16(x[i]) : rt_f32_to_bf16(x[i]);
        x[i] = t == DT_F16 ? rt_f16_to_f32(h) : rt_bf16_to_f32(h);
        memcpy(raw + 2 * i, &h, 2);
    }
}

/* The memory family's extra input of a tensor-core call: position-infused attention's table or the recurrence's
 * extra key (host values rounded to their device types, and the device copy). */
typedef struct MmaMem {
    const float *pos;       /* [MMA_NTOK, 2*H*hd] (PIA) or NULL */
    const float *xkv;       /* [2*H*hd + 1]: key | value | present (REC_KEY) or NULL */
    CUdeviceptr dev;        /* the one that is not NULL, on the device: the kernel's last argument */
    bool pia;               /* the kernel's shape: PIA (else REC_KEY) */
    const char *t_xkv;      /* REC_KEY: xkv's element type */
} MmaMem;

/* The largest |y - ref| of each variant's calls so far (printed by test_mma: the margin of its tolerance). */
static double mma_worst[sizeof mma_variants / sizeof mma_variants[0]];

/* The tensor-core kernel of kind k, variant v, with queries P..P+T-1 and kv_rows > P+T, against a reference;
 * the plan's grid (engine_grid: one block per query tile the call touches). mem: the kernel's extra input
 * (NULL: none). */
static void test_mma_call(CUmodule m, const char *name, int k, const MmaVariant *mv, int P, int T, const MmaMem *mem) {
    AttnPattern p;
    if (!build_n(&p, &kinds[k].spec, 0, MMA_NTOK)) return;
    int hd = mv->hd, kv_rows = P + T + 5, W = 3 * H * hd;
    size_t nq = (size_t)T * W, nkv = (size_t)2 * H * kv_rows * hd, ny = (size_t)T * H * hd;
    float *qkv = malloc(sizeof *qkv * nq), *kv = malloc(sizeof *kv * nkv), *y = malloc(sizeof *y * ny);
    float *kv_dev = malloc(sizeof *kv_dev * nkv);
    unsigned char *raw = malloc(4 * (nq > nkv ? nq : nkv) + 4 * ny);
    fill(qkv, nq, 11 + P);
    fill(kv, nkv, 12 + T);
    to_device_type(qkv, nq, mv->qkv, raw);
    CUdeviceptr dq = upload(raw, nq * dtype_size(mv->qkv));
    to_device_type(kv, nkv, mv->kv, raw);
    for (int part = 0; part < 2; part++) /* the device layout ([2, tokens, heads, dim] with thd) */
        for (int h = 0; h < H; h++)
            for (int t = 0; t < kv_rows; t++)
                for (int d = 0; d < hd; d++) {
                    size_t src = (((size_t)part * H + h) * kv_rows + t) * hd + d;
                    size_t dst = mv->thd ? (((size_t)part * kv_rows + t) * H + h) * hd + d : src;
                    kv_dev[dst] = kv[src];
                }
    to_device_type(kv_dev, nkv, mv->kv, raw);
    CUdeviceptr dkv = upload(raw, nkv * dtype_size(mv->kv)), dy = upload(NULL, ny * dtype_size(mv->out));
    CUdeviceptr dmem = mem ? mem->dev : 0;
    void *args[] = {&dq, &dkv, &dy, &T, &P, &kv_rows, &dmem};
    const EngineShape shape = {.hd = hd, .kt = mv->kt, .mma = true, .pia = mem && mem->pia, .t_kv = cuda_type(mv->kv)};
    int grid = engine_grid(&shape, &p, T);
    CHECK(engine_launch(&D, fn(m, name), grid, H, 128, engine_smem(&shape, &p), args) == CUDA_SUCCESS);
    CHECK(D.memcpyDtoH(raw, dy, ny * dtype_size(mv->out)) == CUDA_SUCCESS);
    for (size_t i = 0; i < ny; i++) {
        uint16_t h;
        if (mv->out == DT_F32) memcpy(&y[i], raw + 4 * i, 4);
        else {
            memcpy(&h, raw + 2 * i, 2);
            y[i] = mv->out == DT_F16 ? rt_f16_to_f32(h) : rt_bf16_to_f32(h);
        }
    }
    double worst = reference_worst(&p, qkv, kv, y, P, T, kv_rows, hd, mem ? mem->pos : NULL, mem ? mem->xkv : NULL);
    if (!(worst <= mv->tol)) printf("%s P=%d T=%d grid %d: max |y - ref| = %g\n", name, P, T, grid, worst);
    if (worst > mma_worst[mv - mma_variants]) mma_worst[mv - mma_variants] = worst;
    CHECK(worst <= mv->tol);
    D.memFree(dq);
    D.memFree(dkv);
    D.memFree(dy);
    free(qkv);
    free(kv);
    free(kv_dev);
    free(raw);
    free(y);
    attn_pattern_free(&p);
}

/* Every kind on the tensor-core path, variant `only` (every variant: -1): P > 0, T not a multiple of the
 * tiles, on the plan's grid. */
static void test_mma(Arena *a, Diag *d, int only) {
    static char names[NMMA * NKINDS][64];
    char *src = mma_source(a, d, names, only);
    const char *list[NMMA * NKINDS];
    int n = 0;
    for (int v = 0; v < NMMA; v++)
        for (int k = 0; k < NKINDS && (only < 0 || v == only); k++) list[n++] = names[v * NKINDS + k];
    CUmodule m = src ? load_names(src, list, n) : NULL;
    free(src);
    static const int calls[][2] = {{0, 1}, {0, 17}, {5, 1}, {13, 60}, {64, 16}, {3, 75}, {150, 243}, {0, 385}};
    for (int v = 0; m && v < NMMA; v++)
        for (int k = 0; k < NKINDS && (only < 0 || v == only); k++)
            for (size_t c = 0; c < sizeof calls / sizeof *calls; c++) {
                int P = calls[c][0], T = calls[c][1];
                test_mma_call(m, names[v * NKINDS + k], k, &mma_variants[v], P, T, NULL);
            }
    for (int v = 0; m && v < NMMA; v++)
        if (only < 0 || v == only) printf("  %s: max |y - ref| %.3g (tolerance %.3g)\n", mma_variants[v].part, mma_worst[v], mma_variants[v].tol);
    if (m) D.moduleUnload(m);
}

/* The memory family's key sources on the tensor-core path, causal: position-infused attention (the table's
 * rows added to the query and, by a second MMA, to the key of each slot) and the recurrence's extra key (present
 * and absent), for each variant at P > 0 and odd T, against the reference. */
static void test_mma_memory(Arena *a, Diag *d) {
    enum { NMEM = 2 }; /* 0: PIA, 1: REC_KEY */
    static char names[NMMA * NMEM][64];
    const char *list[NMMA * NMEM];
    StrBuf b = {0};
    engine_source_start(&b, true);
    AttnPattern p;
    if (!build_n(&p, &kinds[0].spec, 0, MMA_NTOK)) return;
    for (int v = 0; v < NMMA; v++)
        for (int x = 0; x < NMEM; x++) {
            const MmaVariant *mv = &mma_variants[v];
            /* the extra key in fp32, or in the keys' type */
            const EngineShape shape = {.heads = H, .hd = mv->hd, .kt = mv->kt, .ntok = MMA_NTOK, .mma = true,
                                       .t_qkv = cuda_type(mv->qkv), .t_kv = cuda_type(mv->kv),
                                       .t_out = cuda_type(mv->out), .thd = mv->thd, .pia = x == 0,
                                       .t_xkv = x == 1 ? cuda_type(v ? mv->kv : DT_F32) : NULL};
            snprintf(names[v * NMEM + x], 64, "%s%s%s", kinds[0].name, mv->sfx, x ? "_rec" : "_pia");
            list[v * NMEM + x] = names[v * NMEM + x];
            CHECK(engine_render(a, d, &b, &p, names[v * NMEM + x], &shape, false));
        }
    char *src = sb_take(&b, NULL);
    CUmodule m = src ? load_names(src, list, NMMA * NMEM) : NULL;
    free(src);
    static const int calls[][2] = {{0, 1}, {0, 17}, {5, 1}, {13, 60}, {64, 15}, {3, 75}, {70, 129}, {150, 243}};
    for (int v = 0; m && v < NMMA; v++) {
        const MmaVariant *mv = &mma_variants[v];
        size_t npos = (size_t)MMA_NTOK * 2 * H * mv->hd, nx = (size_t)2 * H * mv->hd + 1;
        float *pos = malloc(sizeof *pos * npos), *xkv = malloc(sizeof *xkv * nx);
        unsigned char *raw = malloc(4 * npos);
        fill(pos, npos, 21 + v);
        to_device_type(pos, npos, mv->kv, raw); /* the table is stored as the keys are */
        CUdeviceptr dpos = upload(raw, npos * dtype_size(mv->kv));
        for (int present = 1; present >= 0; present--) {
            DType tx = v ? mv->kv : DT_F32;
            fill(xkv, nx - 1, 31 + v);
            xkv[nx - 1] = (float)present;
            to_device_type(xkv, nx, tx, raw);
            memset(raw + nx * dtype_size(tx), 0, 2); /* a 2-byte flag is read as 32 bits (as in a model's arena) */
            CUdeviceptr dx = upload(raw, nx * dtype_size(tx) + 2);
            const MmaMem pia = {.pos = pos, .dev = dpos, .pia = true}, rec = {.xkv = xkv, .dev = dx};
            for (size_t c = 0; c < sizeof calls / sizeof *calls; c++) {
                if (present) test_mma_call(m, names[v * NMEM], 0, mv, calls[c][0], calls[c][1], &pia);
                test_mma_call(m, names[v * NMEM + 1], 0, mv, calls[c][0], calls[c][1], &rec);
            }
            D.memFree(dx);
        }
        D.memFree(dpos);
        free(pos);
        free(xkv);
        free(raw);
    }
    if (m) D.moduleUnload(m);
    attn_pattern_free(&p);
}

/* ---- emitted tables ------------------------------------------------------- */

static void test_emitted_gaussian_table(void) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    CompileOptions co = {.path = SHORTC_SOURCE_DIR "/models/gaussian_tiny.arch"};
    CompileResult cr;
    bool ok = shortc_compile(&a, &d, &co, &cr);
    CHECK(ok);
    for (int layer = 0; ok && layer < cr.spec->n_layers; layer++) {
        char key[128];
        snprintf(key, sizeof key, "_l%d_h4_hd16_f32_keys[", layer);
        const char *s = strstr(cr.emit.cu, key);
        CHECK(s != NULL);
        if (!s) break;
        s = strchr(s, '{') + 1;
        AttnPattern p;
        char err[256];
        int cap = cr.spec->segment;
        CHECK(attn_pattern_build(&p, &cr.spec->layers[layer].attn, layer, cr.spec->n_heads, cap, err, sizeof err));
        size_t n = (size_t)cr.spec->n_heads * cap * p.prm.c, same = 0;
        for (size_t i = 0; i < n; i++) {
            char *end;
            long v = strtol(s, &end, 10);
            same += end != s && v == p.table[i];
            s = end + strspn(end, ", \n");
        }
        CHECK(same == n);
        attn_pattern_free(&p);
    }
    compile_result_free(&cr);
    arena_free(&a);
}

/* The parts one run does (argv[1]; every part without it): ctest runs each as its own entry (attn_unit_PART);
 * "mma" is both tensor-core variants, mma_variants[].part one of them; "mma_memory" the memory family's key
 * sources (PIA, the recurrence's extra key) on the tensor-core path. */
static const char *const parts[] = {"patterns", "renderings", "engine", "mma", "mma_memory"};
enum { NPARTS = sizeof parts / sizeof parts[0] };

/* The tensor-core variant named (its index), -1 when none is. */
static int mma_variant_named(const char *named) {
    for (int v = 0; named && v < NMMA; v++)
        if (!strcmp(named, mma_variants[v].part)) return v;
    return -1;
}

/* Whether part p runs: no part named, or p is the one named. */
static bool part_on(const char *named, int p) { return !named || !strcmp(named, parts[p]); }

int main(int argc, char **argv) {
    const char *named = argc > 1 ? argv[1] : NULL;
    int variant = mma_variant_named(named);
    bool known = !named || variant >= 0;
    for (int p = 0; p < NPARTS; p++) known = known || !strcmp(named, parts[p]);
    if (argc > 2 || !known) {
        fprintf(stderr, "usage: attn_unit [patterns|renderings|engine|mma|mma_f16|mma_mix|mma_tf32|mma_memory]   (no argument: all)\n");
        return 2;
    }
    if (part_on(named, 0)) { /* patterns, lists, residue and tables: no simulator */
        test_gaussian_rows();
        test_child_counts();
        test_bigbird_counts();
        test_row_counts();
        test_lists();
        test_residue();
        test_emitted_gaussian_table();
    }
    if (!part_on(named, 1) && !part_on(named, 2) && !part_on(named, 3) && !part_on(named, 4) && variant < 0)
        return check_done("attn_unit");
    char err[256];
    CHECK(rt_driver_sim(&D, 0, 1, err, sizeof err) == SRT_OK);
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    if (part_on(named, 1)) test_visibility_renderings(&a, &d);
    if (part_on(named, 2)) { /* hooks and the CUDA-core engine */
        char *src = engine_source(&a, &d);
        CUmodule m = src ? load(src) : NULL;
        free(src);
        for (int k = 0; m && k < NKINDS; k++) {
            test_probe(m, k);
            static const int calls[][2] = {{0, 37}, {5, 1}, {13, 20}, {16, 16}, {40, 29}, {7, 73}};
            for (size_t c = 0; c < sizeof calls / sizeof *calls; c++) test_engine_call(m, k, calls[c][0], calls[c][1]);
        }
        if (m) D.moduleUnload(m);
    }
    if (part_on(named, 3) || variant >= 0) test_mma(&a, &d, variant);
    if (part_on(named, 4)) test_mma_memory(&a, &d);
    arena_free(&a);
    return check_done("attn_unit");
}
