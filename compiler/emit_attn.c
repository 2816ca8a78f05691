/*
 * emit_attn.c — the kind-specific part of an attention-engine kernel
 * (templates/attn_engine.cuh): its name suffix and its HOOKS text, written
 * from the kind's pattern (attn_pattern.c): the visibility and score-extra
 * device functions, the seeded tables they read, and the per-query-tile key
 * lists (key tiles split into full / partial, or gathered key positions; a
 * banded kind gets its reach instead and the kernel computes its tiles; a
 * residue kind — dilated, strided — its per-head dilation and band, the kernel
 * grouping queries by residue and tiling the band in residue coordinates).
 */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

/* Appends `__device__ const int NAME_SFX[n] = {...};` (one element 0 when n is 0). */
static void int_table(StrBuf *b, const char *name, const char *sfx, const int *v, size_t n) {
    sb_printf(b, "__device__ const int %s_%s[%zu] = {", name, sfx, n ? n : 1);
    for (size_t i = 0; i < n; i++) sb_printf(b, "%s%d", i == 0 ? "\n    " : i % 32 ? ", " : ",\n    ", v[i]);
    sb_puts(b, n ? "\n};\n" : "0};\n");
}

/* The body of NAME_visible(h, i, j) for the pattern (j <= i is tested first). */
static void visible_body(StrBuf *b, const AttnPattern *p, const char *name) {
    switch (p->kind) {
    case ATTN_WINDOW: sb_printf(b, "    return i - j < %d;\n", p->window); break;
    case ATTN_DILATED:
        sb_printf(b, "    const int d = h < %d ? 1 : %d;  // heads below undilated_heads: no gaps\n", p->plain_heads,
                  p->dilation);
        sb_printf(b, "    return j < %d || ((i - j) %% d == 0 && (i - j) / d < %d);\n", p->globals, p->window);
        break;
    case ATTN_STRIDED:
        sb_printf(b, "    return h < %d ? i - j <= %d : (i - j) %% %d == 0;\n", p->local_heads, p->stride, p->stride);
        break;
    case ATTN_FIXED:
        sb_printf(b, "    return h < %d ? j / %d == i / %d : j %% %d >= %d;\n", p->local_heads, p->stride, p->stride,
                  p->stride, p->stride - p->c);
        break;
    case ATTN_BIGBIRD: {
        int nb = (p->ntok + p->block - 1) / p->block;
        sb_printf(b, "    const int qb = i / %d, kb = j / %d;\n", p->block, p->block);
        sb_printf(b, "    if (qb - kb < %d || kb < %d || qb < %d) return true;\n", p->window, p->globals, p->globals);
        if (p->random > 0) {
            sb_printf(b, "    if (qb >= %d) return false;\n", nb);
            sb_printf(b, "    for (int k = 0; k < %d; k++)\n", p->random);
            sb_printf(b, "        if (%s_rand[(h * %d + qb) * %d + k] == kb) return true;\n", name, nb, p->random);
        }
        sb_puts(b, "    return false;\n");
        break;
    }
    case ATTN_GAUSSIAN:
        if (p->self) sb_puts(b, "    if (i == j) return true;\n");
        sb_printf(b, "    if (i >= %d) return false;\n", p->ntok);
        sb_printf(b, "    for (int k = 0; k < %d; k++)\n", p->c);
        sb_printf(b, "        if (%s_keys[(h * %d + i) * %d + k] == j) return true;\n", name, p->ntok, p->c);
        sb_puts(b, "    return false;\n");
        break;
    default: sb_puts(b, "    return true;\n"); break;
    }
}

/* The seeded tables the visibility hook reads. */
static void seeded_tables(StrBuf *b, const AttnPattern *p, const char *name) {
    if (p->kind == ATTN_GAUSSIAN) int_table(b, name, "keys", p->gauss, (size_t)p->heads * p->ntok * p->c);
    if (p->kind == ATTN_BIGBIRD && p->random > 0)
        int_table(b, name, "rand", p->rand, (size_t)p->heads * ((p->ntok + p->block - 1) / p->block) * p->random);
}

/* Per (table head, absolute query tile) lists: _off and _ent. False when out of memory. */
static bool tile_lists(StrBuf *b, const AttnPattern *p, const char *name, int qt, int kt, int nqt, int *entries) {
    int heads = attn_pattern_head_dependent(p) ? p->heads : 1;
    bool gather = attn_pattern_gathered(p);
    int per = gather ? nqt * qt : (nqt * qt + kt - 1) / kt; /* most entries of one list */
    int *off = malloc(sizeof *off * ((size_t)heads * nqt + 1));
    int *ent = malloc(sizeof *ent * (size_t)heads * nqt * per);
    if (!off || !ent) {
        free(off);
        free(ent);
        return false;
    }
    int n = 0;
    for (int h = 0; h < heads; h++)
        for (int t = 0; t < nqt; t++) {
            off[h * nqt + t] = n;
            int m = gather ? attn_pattern_gather_list(p, h, t * qt, (t + 1) * qt, ent + n)
                           : attn_pattern_tile_list(p, h, t * qt, (t + 1) * qt, kt, ent + n);
            if (m < 0) {
                free(off);
                free(ent);
                return false;
            }
            n += m;
        }
    off[heads * nqt] = n;
    int_table(b, name, "off", off, (size_t)heads * nqt + 1);
    int_table(b, name, "ent", ent, (size_t)n);
    *entries = n;
    free(off);
    free(ent);
    return true;
}

/* Whether p is a residue kind (attn_pattern_residue: dilated, strided). */
static bool residue_kind(const AttnPattern *p) {
    int dil, reach, globals;
    return attn_pattern_residue(p, 0, &dil, &reach, &globals);
}

/* Head h's dilation (dil) or band taps in residue steps (!dil). */
static int residue_value(const AttnPattern *p, int h, bool dil) {
    int d, r, g;
    attn_pattern_residue(p, h, &d, &r, &g);
    return dil ? d : r;
}

/* `NAME_FN(h)`: head h's residue_value, one `if` per run of heads with equal values. */
static void residue_head_fn(StrBuf *b, const AttnPattern *p, const char *name, const char *fn, bool dil) {
    sb_printf(b, "__device__ __forceinline__ int %s_%s(int h) {\n    (void)h;\n", name, fn);
    for (int h = 0; h < p->heads; h++) {
        int v = residue_value(p, h, dil);
        if (h + 1 == p->heads) sb_printf(b, "    return %d;\n", v);
        else if (residue_value(p, h + 1, dil) != v) sb_printf(b, "    if (h < %d) return %d;\n", h + 1, v);
    }
    sb_puts(b, "}\n");
}

/* The residue kinds' key source (templates/attn_engine.cuh RESIDUE): per head, the dilation and the band's
 * taps in residue steps, and the leading global keys. */
static void residue_hooks(StrBuf *b, const AttnPattern *p, const char *name) {
    int d, r, g;
    attn_pattern_residue(p, 0, &d, &r, &g);
    sb_printf(b, "constexpr int %s_globals = %d;  // keys j < globals: every later query sees them\n", name, g);
    residue_head_fn(b, p, name, "dil", true);
    residue_head_fn(b, p, name, "reach", false);
}

char *attn_kernel_suffix(Arena *a, const AttnSpec *s, int layer) {
    if (s->kind == ATTN_CAUSAL) return "";
    char buf[256];
    size_t n = 0;
    for (int i = 0; i < s->nparams && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "_%s%g", s->params[i].key, s->params[i].value);
    if ((s->kind == ATTN_GAUSSIAN || s->kind == ATTN_BIGBIRD) && n < sizeof buf)
        snprintf(buf + n, sizeof buf - n, "_l%d", layer); /* seeded: the tables differ per layer */
    return arena_strdup(a, n ? buf : "");
}

double attn_list_bound(const AttnPattern *p, int qt, int kt, int nqt) {
    if (attn_pattern_band(p) || residue_kind(p)) return 0;
    double heads = attn_pattern_head_dependent(p) ? p->heads : 1;
    return heads * nqt * ((double)nqt * qt / (attn_pattern_gathered(p) ? 1 : kt) + 1);
}

/* NAME_visible(h, i, j): the pattern's token-level visibility (keys after the query never). */
static void visible_fn(StrBuf *b, const AttnPattern *p, const char *name) {
    sb_printf(b, "__device__ __forceinline__ bool %s_visible(int h, int i, int j) {\n", name);
    sb_puts(b, "    (void)h;\n    if (j > i) return false;\n");
    visible_body(b, p, name);
    sb_puts(b, "}\n");
}

char *attn_hooks(const AttnPattern *p, const char *name, int qt, int kt, int nqt) {
    StrBuf b = {0};
    seeded_tables(&b, p, name);
    int entries = 0;
    if (attn_pattern_band(p)) sb_printf(&b, "constexpr int %s_reach = %d;  // keys i-reach < j <= i\n", name, attn_pattern_band(p));
    else if (residue_kind(p)) residue_hooks(&b, p, name);
    else if (!tile_lists(&b, p, name, qt, kt, nqt, &entries)) {
        free(sb_take(&b, NULL));
        return NULL;
    }
    visible_fn(&b, p, name);
    sb_printf(&b, "__device__ __forceinline__ float %s_extra(int h, int i, int j) {\n", name);
    sb_puts(&b, "    (void)h, (void)i, (void)j;\n    return 0.0f;  // sparse kinds add nothing\n}");
    return sb_take(&b, NULL);
}

bool attn_mma_kind(const AttnSpec *s) {
    switch (s->kind) {
    case ATTN_CAUSAL:
    case ATTN_WINDOW:
    case ATTN_DILATED:
    case ATTN_STRIDED:
    case ATTN_FIXED:
    case ATTN_BIGBIRD:
    case ATTN_GAUSSIAN: return true;
    default: return false; /* a kind added later runs on the CUDA-core engine until the template knows its hooks */
    }
}

char *attn_visible_hooks(const AttnPattern *p, const char *name) {
    StrBuf b = {0};
    seeded_tables(&b, p, name);
    visible_fn(&b, p, name);
    return sb_take(&b, NULL);
}

bool attn_decode_kind(const AttnSpec *s) { return s->kind != ATTN_CAUSAL && attn_mma_kind(s); }
