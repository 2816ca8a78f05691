/*
 * attn_render.c — one attention kernel for a pattern, outside a model: the
 * CUDA-core path (templates/attn_engine.cuh, 4 warps of qpw queries) or the
 * tensor-core path (templates/attn_mma.cuh, 4 warps of 32 queries, dynamic
 * shared memory attn_render_smem; its source needs templates/mma_frag.cuh
 * after the prelude: attn_render_source_start). The runtime's srt_attention
 * (runtime/src/attention.c) renders its kernels here, and so do the tests
 * and benchmarks of tests/attention and tests/bench (engine_render.h).
 *
 * attn_spec_from_pairs builds the typed spec of a kind from name/value pairs
 * with sema's checks and messages (sema.c check_attention, then
 * attn_spec_type), for callers that have no .arch text.
 */
#include "emit.h"

#include <limits.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void attn_render_source_start(StrBuf *b, bool mma) {
    sb_puts(b, template_find("prelude.cuh")->text);
    sb_puts(b, template_find("attn_kinds.cuh")->text);
    if (mma) sb_puts(b, template_find("mma_frag.cuh")->text);
}

int attn_render_qt(const AttnRenderShape *s) { return s->mma ? ATTN_MMA_QT : 4 * s->qpw; }

int attn_render_grid_pad(const AttnRenderShape *s, const AttnPattern *p) {
    int dmax = 0, dil, reach, globals;
    if (!s->mma) return 0;
    for (int h = 0; h < p->heads && attn_pattern_residue(p, h, &dil, &reach, &globals); h++)
        if (dil > dmax) dmax = dil;
    return attn_mma_grid_pad(dmax);
}

int attn_render_grid(const AttnRenderShape *s, const AttnPattern *p, int T) {
    int qt = attn_render_qt(s);
    return (T + attn_render_grid_pad(s, p) + qt - 1) / qt;
}

/* Bytes per key/value element of shape s: 4 for float (TF32 MMAs on the tensor-core path), else 2. */
static int render_esize(const AttnRenderShape *s) { return !s->t_kv || strcmp(s->t_kv, "float") == 0 ? 4 : 2; }

int attn_render_smem(const AttnRenderShape *s, const AttnPattern *p) {
    int es = render_esize(s);
    return s->mma ? attn_mma_smem(s->hd, s->kt, attn_pattern_gathered(p), es) + (s->pia ? attn_mma_pia_smem(s->hd, s->kt, es) : 0)
                  : 0;
}

bool attn_render(Arena *a, Diag *d, StrBuf *b, const AttnPattern *p, const char *name, const AttnRenderShape *s,
                 bool count) {
    int qt = attn_render_qt(s), nqt = (s->ntok + qt - 1) / qt;
    AttnResidueChoice choice = {0};
    if (s->mma && s->residue_loop == 2) choice = (AttnResidueChoice){.n = 1, .lo = {1}, .hi = {INT_MAX}};
    else if (s->mma && s->residue_loop == 0 && !attn_residue_choice(p, s->kt, nqt * qt, &choice)) return false;
    char *hooks = attn_hooks(p, name, qt, s->kt, nqt, &choice);
    if (!hooks) {
        diag_plain_error(d, "attention kernel %s: out of memory for its hooks", name);
        return false;
    }
    if (count) sb_printf(b, "__device__ unsigned %s_tiles_loaded;\n", name);
    if (count && s->mma) sb_printf(b, "__device__ unsigned %s_warp_tiles;\n", name);
    TmplArgs t = {0};
    tmpl_set(&t, "COMMENT", "//");
    tmpl_set(&t, "KERNEL_NAME", name);
    tmpl_setf(a, &t, "H", "%d", s->heads);
    tmpl_setf(a, &t, "KVH", "%d", s->heads); /* a head per K/V head */
    tmpl_setf(a, &t, "HD", "%d", s->hd);
    tmpl_set(&t, "WARPS", "4");
    if (s->mma) tmpl_setf(a, &t, "HDP", "%d", (s->hd + 15) / 16 * 16);
    else tmpl_setf(a, &t, "QPW", "%d", s->qpw);
    tmpl_setf(a, &t, "KT", "%d", s->kt);
    tmpl_setf(a, &t, "NQT", "%d", nqt);
    tmpl_set(&t, "HEAD_TABLES", attn_pattern_head_dependent(p) ? "1" : "0");
    tmpl_setf(a, &t, "SCALE", "%.9gf", s->scale > 0 ? s->scale : 1.0 / sqrt((double)s->hd));
    tmpl_set(&t, "T_QKV", s->t_qkv ? s->t_qkv : "float");
    tmpl_set(&t, "T_KV", s->t_kv ? s->t_kv : "float");
    tmpl_set(&t, "T_OUT", s->t_out ? s->t_out : "float");
    tmpl_set(&t, "HOOKS", arena_strdup(a, hooks));
    tmpl_set(&t, "KV_HTD", s->thd ? "0" : "1");
    tmpl_set(&t, "GATHER", attn_pattern_gathered(p) ? "1" : "0");
    tmpl_set(&t, "BANDED", attn_pattern_band(p) ? "1" : "0");
    int dil, reach, globals;
    tmpl_set(&t, "RESIDUE", attn_pattern_residue(p, 0, &dil, &reach, &globals) ? "1" : "0");
    tmpl_set(&t, "COUNT_TILES", count ? "1" : "0");
    /* the recurrence's key source (docs/attention/recurrence.md), position-infused attention (pia.md) */
    tmpl_set(&t, "REC_KEY", s->mma && s->t_xkv ? "1" : "0");
    if (s->mma && s->t_xkv) tmpl_set(&t, "T_XKV", s->t_xkv);
    tmpl_set(&t, "PIA", s->mma && s->pia ? "1" : "0");
    if (s->mma && s->pia) tmpl_set(&t, "T_POS", s->t_kv ? s->t_kv : "float");
    tmpl_set(&t, "REL", "0"); /* Transformer-XL relative attention: tests/cmake/txl.cmake */
    free(hooks);
    return template_render(d, s->mma ? "attn_mma.cuh" : "attn_engine.cuh", t.kv, t.n, b);
}

/* ------------------------------------------------------------------ */
/* A spec from name/value pairs                                        */
/* ------------------------------------------------------------------ */

/* "a, b or c" of words[n] into out. */
static void word_list(char *out, size_t len, const char *const *words, int n) {
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ", words[i]);
}

/* "; did you mean 'x'?" for word among cands[n], or "". */
static void hint(char *out, size_t len, const char *word, const char *const *cands, int n) {
    const char *s = diag_suggest(word, cands, n);
    if (s) snprintf(out, len, "; did you mean '%s'?", s);
    else out[0] = 0;
}

/* Kind named `kind` into *k; false with sema's message otherwise. */
static bool kind_named(const char *kind, AttnKind *k, char *err, size_t errlen) {
    const char *names[ATTN_COUNT];
    for (int i = 0; i < ATTN_COUNT; i++) {
        names[i] = attn_kind_name((AttnKind)i);
        if (strcmp(kind, names[i]) == 0) {
            *k = (AttnKind)i;
            return true;
        }
    }
    char list[512], h[128];
    word_list(list, sizeof list, names, ATTN_COUNT);
    hint(h, sizeof h, kind, names, ATTN_COUNT);
    snprintf(err, errlen, "unknown attention kind '%s'%s (expected %s)", kind, h, list);
    return false;
}

bool attn_spec_from_pairs(AttnSpec *a, const char *kind, const char *const *names, const double *values, int n,
                          int heads, char *err, size_t errlen) {
    AttnKind k;
    if (!kind) kind = "causal";
    if (!kind_named(kind, &k, err, errlen)) return false;
    const AttnKindRow *row = attn_kind_row(k);
    const char *keys[MAX_ATTN_PARAMS];
    int nkeys = attn_kind_nparams(row), given[MAX_ATTN_PARAMS];
    for (int i = 0; i < nkeys; i++) {
        keys[i] = row->params[i].name;
        given[i] = -1;
    }
    for (int g = 0; g < n; g++) {
        int i = 0;
        while (i < nkeys && strcmp(names[g], keys[i]) != 0) i++;
        if (i == nkeys && nkeys == 0) {
            snprintf(err, errlen, "attention '%s' takes no parameters", kind);
            return false;
        }
        if (i == nkeys) {
            char list[512], h[128];
            word_list(list, sizeof list, keys, nkeys);
            hint(h, sizeof h, names[g], keys, nkeys);
            snprintf(err, errlen, "attention '%s' has no parameter '%s'%s (parameters: %s)", kind, names[g], h, list);
            return false;
        }
        if (given[i] >= 0) {
            snprintf(err, errlen, "parameter '%s' is given twice", names[g]);
            return false;
        }
        given[i] = g;
    }
    memset(a, 0, sizeof *a);
    a->kind = k;
    for (int i = 0; i < nkeys; i++) {
        if (given[i] < 0 && !row->params[i].def) {
            snprintf(err, errlen, "attention '%s' needs '%s=NUM'", kind, keys[i]);
            return false;
        }
        double value = given[i] >= 0 ? values[given[i]] : strtod(row->params[i].def, NULL);
        int j = a->nparams++; /* sorted by key, as sema stores them */
        while (j > 0 && strcmp(a->params[j - 1].key, keys[i]) > 0) {
            a->params[j] = a->params[j - 1];
            j--;
        }
        a->params[j].key = keys[i];
        a->params[j].value = value;
    }
    return attn_spec_type(a, heads, err, errlen);
}
