/*
 * emit_attn.c — the kind-specific part of an attention-engine kernel
 * (templates/attn_engine.cuh): its name suffix and its HOOKS text, written
 * from the kind's row of the kind table (attn_kinds.c) and its pattern
 * (attn_pattern.c): the visibility and score-extra hooks (templates/
 * attn_hooks.cuh, calling the kind's function in templates/attn_kinds.cuh),
 * the seeded tables they read (data), and the per-query-tile key
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

/* The name suffix of p's seeded table (NAME_keys: Gaussian keys, NAME_rand: BigBird's random blocks). */
static const char *table_suffix(const AttnPattern *p) { return p->row->seeds == ATTN_SEEDS_KEYS ? "keys" : "rand"; }

/* The seeded table the visibility hook reads (none without one). */
static void seeded_tables(StrBuf *b, const AttnPattern *p, const char *name) {
    if (p->table) int_table(b, name, table_suffix(p), p->table, p->table_len);
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

/* What residue_value reads of head h: its dilation, its band taps in residue steps, or its band's reach in
 * positions (the plain tile loop's band). */
typedef enum { RESIDUE_DIL, RESIDUE_REACH, RESIDUE_SPAN } ResidueValue;

/* Head h's residue value v. */
static int residue_value(const AttnPattern *p, int h, ResidueValue v) {
    int d, r, g;
    attn_pattern_residue(p, h, &d, &r, &g);
    if (v == RESIDUE_DIL) return d;
    if (v == RESIDUE_REACH || r >= ATTN_BAND_UNBOUNDED) return r;
    return (r - 1) * d + 1;
}

/* `NAME_FN(h)`: head h's residue_value, one `if` per run of heads with equal values. */
static void residue_head_fn(StrBuf *b, const AttnPattern *p, const char *name, const char *fn, ResidueValue what) {
    sb_printf(b, "__device__ __forceinline__ int %s_%s(int h) {\n    (void)h;\n", name, fn);
    for (int h = 0; h < p->heads; h++) {
        int v = residue_value(p, h, what);
        if (h + 1 == p->heads) sb_printf(b, "    return %d;\n", v);
        else if (residue_value(p, h + 1, what) != v) sb_printf(b, "    if (h < %d) return %d;\n", h + 1, v);
    }
    sb_puts(b, "}\n");
}

/* `NAME_plain(P, T)`: whether a call runs the plain tile loop (the cost model's runs, attn_residue_choice). */
static void residue_plain_fn(StrBuf *b, const AttnResidueChoice *c, const char *name) {
    sb_printf(b, "// the cost model's choice (compiler/cost.c attn_residue_choice): the plain tile loop for these T\n"
                 "__device__ __forceinline__ bool %s_plain(int P, int T) {\n    (void)P, (void)T;\n    return ", name);
    for (int i = 0; i < c->n; i++) sb_printf(b, "%s(T >= %d && T <= %d)", i ? " || " : "", c->lo[i], c->hi[i]);
    sb_puts(b, c->n ? ";\n}\n" : "false;\n}\n");
}

/* The residue kinds' key source (templates/attn_engine.cuh, attn_mma.cuh RESIDUE): per head, the dilation, the
 * band's taps in residue steps and its reach in positions, the leading global keys and, on the tensor-core
 * path, the calls that run the plain tile loop (c; NULL: none). */
static void residue_hooks(StrBuf *b, const AttnPattern *p, const char *name, const AttnResidueChoice *c) {
    int d, r, g;
    attn_pattern_residue(p, 0, &d, &r, &g);
    sb_printf(b, "constexpr int %s_globals = %d;  // keys j < globals: every later query sees them\n", name, g);
    residue_head_fn(b, p, name, "dil", RESIDUE_DIL);
    residue_head_fn(b, p, name, "reach", RESIDUE_REACH);
    residue_head_fn(b, p, name, "span", RESIDUE_SPAN);
    AttnResidueChoice none = {0};
    residue_plain_fn(b, c ? c : &none, name);
}

char *attn_kernel_suffix(Arena *a, const AttnSpec *s, int layer) {
    if (attn_kind_row(s->kind)->dense && !s->nparams) return "";
    char buf[256];
    size_t n = 0;
    for (int i = 0; i < s->nparams && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "_%s%g", s->params[i].key, s->params[i].value);
    if (attn_kind_row(s->kind)->seeds != ATTN_SEEDS_NONE && n < sizeof buf)
        snprintf(buf + n, sizeof buf - n, "_l%d", layer); /* seeded: the tables differ per layer */
    return arena_strdup(a, n ? buf : "");
}

double attn_list_bound(const AttnPattern *p, int qt, int kt, int nqt) {
    if (attn_pattern_band(p) || residue_kind(p)) return 0;
    double heads = attn_pattern_head_dependent(p) ? p->heads : 1;
    return heads * nqt * ((double)nqt * qt / (attn_pattern_gathered(p) ? 1 : kt) + 1);
}

/* `\n    p.FIELD = VALUE;` for each typed parameter of p's kind (the hook's constants). */
static char *param_sets(Arena *a, const AttnPattern *p) {
    StrBuf b = {0};
    const AttnKindRow *r = p->row;
    for (int k = 0; k < attn_kind_nparams(r); k++) {
        const AttnParamDef *d = &r->params[k];
        if (d->field == ATTN_FIELD_NONE) continue;
        const char *f = (const char *)&p->prm + d->field;
        if (d->field == offsetof(AttnParams, seed)) sb_printf(&b, "\n    p.%s = %ld;", d->name, *(const long *)(const void *)f);
        else sb_printf(&b, "\n    p.%s = %d;", d->name, *(const int *)(const void *)f);
    }
    char *text = sb_take(&b, NULL);
    char *out = text ? arena_strdup(a, text) : NULL;
    free(text);
    return out ? out : (char *)"";
}

char *attn_alibi_slopes(Arena *a, int heads) {
    StrBuf b = {0};
    for (int h = 0; h < heads; h++) sb_printf(&b, "%s%.9ef", h ? ", " : "{", alibi_slope(h, heads));
    sb_puts(&b, "}");
    char *text = sb_take(&b, NULL);
    char *out = text ? arena_strdup(a, text) : NULL;
    free(text);
    return out ? out : (char *)"{0.0f}";
}

/* Appends templates/attn_hooks.cuh for p to b: NAME_visible, and with extra NAME_extra; false on an internal
 * error (reported on stderr). */
static bool kind_hooks(StrBuf *b, const AttnPattern *p, const char *name, bool extra) {
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    TmplArgs t = {0};
    tmpl_set(&t, "KERNEL_NAME", name);
    tmpl_set(&t, "KIND", attn_kind_name(p->kind));
    tmpl_set(&t, "VISIBLE", p->row->cuda_visible);
    tmpl_set(&t, "SETS", param_sets(&a, p));
    tmpl_set(&t, "TABLE", p->table ? arena_printf(&a, "%s_%s", name, table_suffix(p)) : "nullptr");
    tmpl_setf(&a, &t, "NTOK", "%d", p->ntok);
    tmpl_set(&t, "EXTRA", extra ? "1" : "0");
    tmpl_set(&t, "ALIBI", p->alibi ? "1" : "0");
    tmpl_set(&t, "SLOPES", p->alibi ? attn_alibi_slopes(&a, p->heads) : "");
    bool ok = template_render(&d, "attn_hooks.cuh", t.kv, t.n, b);
    arena_free(&a);
    return ok;
}

char *attn_hooks(const AttnPattern *p, const char *name, int qt, int kt, int nqt, const AttnResidueChoice *choice) {
    StrBuf b = {0};
    seeded_tables(&b, p, name);
    int entries = 0;
    if (attn_pattern_band(p)) sb_printf(&b, "constexpr int %s_reach = %d;  // keys i-reach < j <= i\n", name, attn_pattern_band(p));
    else if (residue_kind(p)) residue_hooks(&b, p, name, choice);
    else if (!tile_lists(&b, p, name, qt, kt, nqt, &entries)) {
        free(sb_take(&b, NULL));
        return NULL;
    }
    if (!kind_hooks(&b, p, name, true)) {
        free(sb_take(&b, NULL));
        return NULL;
    }
    return sb_take(&b, NULL);
}

bool attn_mma_kind(const AttnSpec *s) { return (attn_kind_row(s->kind)->engines & ATTN_ENGINE_TENSOR_CORE) != 0; }

char *attn_visible_hooks(const AttnPattern *p, const char *name) {
    StrBuf b = {0};
    seeded_tables(&b, p, name);
    if (!kind_hooks(&b, p, name, false)) {
        free(sb_take(&b, NULL));
        return NULL;
    }
    return sb_take(&b, NULL);
}

bool attn_decode_kind(const AttnSpec *s) {
    const AttnKindRow *r = attn_kind_row(s->kind);
    return (r->engines & ATTN_ENGINE_DECODE) && !r->dense;
}
