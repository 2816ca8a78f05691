/*
 * attn_kinds.c — the attention-kind table: one row per kind, like the op
 * table (ops.c). A row holds the kind's typed parameters (name, default,
 * range, doc: sema's checks and messages, filled once into AttnParams by
 * attn_spec_type), its visibility (templates/attn_kinds.cuh: one text, the C
 * rendering here, the CUDA rendering in the kernels' _visible hook), where
 * its kernels get their keys, what it adds to the scores, the state it keeps,
 * the engines it runs on and the seeded table it draws. Nothing downstream
 * switches on the kind or looks a parameter up by name.
 *
 * Adding a mask-only kind (visibility alone; no new score term or state):
 *   1. templates/attn_kinds.cuh: its attn_visible_KIND function, and any new
 *      parameter as an AttnParams field;
 *   2. compiler/shortc.h: X(ATTN_KIND, "kind") in SHORTC_ATTN_KINDS;
 *   3. this file: its row (parameters, visibility, key source ATTN_KEYS_TILES
 *      unless its keys have a closed form, engines, check);
 *   4. docs/attention/KIND.md, and a line in docs/attention/README.md;
 *   5. tests: a tiny model in models/, its mask in tests/attention/masks/ from
 *      an independent NumPy rule in tests/attention/gen_masks.py, and the kind
 *      in tests/attention/test_engine.c's `kinds` (the hooks test compares the
 *      C and CUDA renderings of its visibility on the simulator).
 * The pattern (attn_pattern.c), the key lists and hooks (emit_attn.c), the
 * cost model, the interpreter and `shortc mask` need no change: counting a
 * row's visible keys falls back to testing each key.
 */
#include "shortc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { BIG = 1 << 20 };

/* The row's visibility: templates/attn_kinds.cuh's attn_visible_NAME, by pointer (C) and by name (CUDA). */
#define VISIBLE(name) .visible = attn_visible_##name, .cuda_visible = "attn_visible_" #name

/* A parameter of AttnParams field f: required (def NULL) or defaulted. */
#define P(f, def, lo, hi, doc) {#f, offsetof(AttnParams, f), def, lo, hi, doc}

/* ------------------------------------------------------------------ */
/* Per-kind closed forms: residue descriptions and row counts          */
/* ------------------------------------------------------------------ */

/* Integers in [a, b) ∩ [c, d). */
static long overlap(long a, long b, long c, long d) {
    long lo = a > c ? a : c, hi = b < d ? b : d;
    return hi > lo ? hi - lo : 0;
}

/* Floor division (b > 0). */
static long floordiv(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Taps i - m*step (0 <= m < taps; taps < 0: unbounded) in [a, b). */
static long taps_in(long i, long step, long taps, long a, long b) {
    if (b > i + 1) b = i + 1;
    if (a < 0) a = 0;
    if (b <= a) return 0;
    long mlo = floordiv(i - b, step) + 1, mhi = floordiv(i - a, step); /* a <= i - m*step < b */
    if (mlo < 0) mlo = 0;
    if (taps >= 0 && mhi > taps - 1) mhi = taps - 1;
    return mhi >= mlo ? mhi - mlo + 1 : 0;
}

static long count_dense(const AttnPattern *p, int h, int i, long a, long b) {
    (void)p, (void)h, (void)i;
    return b - a;
}

static long count_window(const AttnPattern *p, int h, int i, long a, long b) {
    (void)h;
    return overlap(a, b, (long)i - p->prm.size + 1, (long)i + 1);
}

/* Dilated: the globals, plus the taps that are not global. */
static long count_dilated(const AttnPattern *p, int h, int i, long a, long b) {
    const AttnParams *k = &p->prm;
    long g = overlap(a, b, 0, k->global), dil = attn_dilated_step(k, h);
    return g + taps_in(i, dil, k->size, a, b) - taps_in(i, dil, k->size, a, b < k->global ? b : k->global);
}

static void residue_dilated(const AttnParams *p, int h, int *dil, int *reach, int *globals) {
    *dil = attn_dilated_step(p, h);
    *reach = p->size;
    *globals = p->global;
}

static long count_strided(const AttnPattern *p, int h, int i, long a, long b) {
    const AttnParams *k = &p->prm;
    return h < k->local_heads ? overlap(a, b, (long)i - k->stride, (long)i + 1) : taps_in(i, k->stride, -1, a, b);
}

/* Strided: a local head is the band i - l <= j <= i (Child et al.'s A1), the others every l-th key. */
static void residue_strided(const AttnParams *p, int h, int *dil, int *reach, int *globals) {
    bool local = h < p->local_heads;
    *dil = local ? 1 : p->stride;
    *reach = local ? p->stride + 1 : ATTN_BAND_UNBOUNDED;
    *globals = 0;
}

/* Fixed: a local head's block so far; a summary head's columns j mod l >= l - c in [a, b). */
static long count_fixed(const AttnPattern *p, int h, int i, long a, long b) {
    const AttnParams *k = &p->prm;
    if (h < k->local_heads) return overlap(a, b, (long)i / k->stride * k->stride, (long)i + 1);
    long l = k->stride, lo = l - k->c; /* per block of l: columns [lo, l) */
    long upto_b = b / l * k->c + (b % l > lo ? b % l - lo : 0), upto_a = a / l * k->c + (a % l > lo ? a % l - lo : 0);
    return upto_b - upto_a;
}

/* BigBird: all keys query i sees, in O(random): the global blocks, the window blocks up to i and the random
 * blocks (drawn from between the two, whole blocks below i). */
static long bigbird_row_all(const AttnPattern *p, int h, int i) {
    const AttnParams *k = &p->prm;
    long w = (k->window + 1) / 2, qb = i / k->block, win = qb - w + 1 > 0 ? (qb - w + 1) * k->block : 0;
    if (qb < k->global) return (long)i + 1;
    long glob = (long)k->global * k->block < win ? (long)k->global * k->block : win, n = glob + (i + 1 - win);
    if (k->random > 0 && i < p->ntok) {
        const int *row = p->table + ((size_t)h * ((p->ntok + k->block - 1) / k->block) + qb) * k->random;
        for (int r = 0; r < k->random; r++) n += row[r] >= 0 ? k->block : 0;
    }
    return n;
}

/* BigBird: visible keys of query i in [a, b), block by block. */
static long count_bigbird(const AttnPattern *p, int h, int i, long a, long b) {
    long n = 0, bs = p->prm.block;
    if (a == 0 && b == i + 1) return bigbird_row_all(p, h, i);
    for (long kb = a / bs; kb * bs < b; kb++) {
        long k = kb * bs;
        if (attn_pattern_visible(p, h, i, (int)(k > a ? k : a))) n += overlap(k, k + bs, a, b);
    }
    return n;
}

/* Gaussian: the sampled keys in [a, b), and the query itself with self (base 0 only, where it is never sampled). */
static long count_gaussian(const AttnPattern *p, int h, int i, long a, long b) {
    long n = p->prm.self && i >= a && i < b;
    const int *row = attn_pattern_gaussian_row(p, h, i);
    for (int k = 0; row && k < p->prm.c; k++) n += row[k] >= a && row[k] < b;
    return n;
}

/* ------------------------------------------------------------------ */
/* Rules across parameters                                             */
/* ------------------------------------------------------------------ */

/* BigBird: a window centred on the query's block. */
static bool check_bigbird(const AttnParams *p, char *err, size_t errlen) {
    if (p->window % 2 == 1) return true;
    snprintf(err, errlen, "attention 'bigbird': window=%d must be odd (the query's block and as many on each "
             "side, of which a causal model sees the %d before it)", p->window, p->window / 2);
    return false;
}

/* Gaussian: with base=1 the query is among its sampled keys already. */
static bool check_gaussian(const AttnParams *p, char *err, size_t errlen) {
    if (!(p->self && p->base)) return true;
    snprintf(err, errlen, "attention 'gaussian': self=1 needs base=0 (with base=1 the query is one of the "
             "min(c, i+1) sampled keys already)");
    return false;
}

/* ------------------------------------------------------------------ */
/* The table                                                           */
/* ------------------------------------------------------------------ */

/* Every engine, for kinds whose hooks both paths and the decode kernel know. */
#define ALL_ENGINES (ATTN_ENGINE_CUDA_CORE | ATTN_ENGINE_TENSOR_CORE | ATTN_ENGINE_DECODE)

static const AttnKindRow rows[ATTN_COUNT] = {
    [ATTN_CAUSAL] = {VISIBLE(causal),
                     .keys = ATTN_KEYS_BANDED, .engines = ALL_ENGINES, .dense = true, .band = ATTN_FIELD_NONE,
                     .head_split = ATTN_FIELD_NONE, .row_count = count_dense},
    [ATTN_WINDOW] = {.params = {P(size, NULL, 1, BIG, "keys i-size < j <= i (the query's own included)")},
                     VISIBLE(window),
                     .keys = ATTN_KEYS_BANDED, .engines = ALL_ENGINES, .band = offsetof(AttnParams, size),
                     .head_split = ATTN_FIELD_NONE, .row_count = count_window},
    [ATTN_DILATED] = {.params = {P(size, NULL, 1, BIG, "taps per query, dilation apart, ending at the query"),
                                 P(dilation, "1", 1, BIG, "distance between taps"),
                                 P(global, "0", 0, BIG, "leading global tokens every later query sees"),
                                 P(size_last, "0", 0, BIG, "the last layer's size of a ramp (sema resolves it)"),
                                 P(undilated_heads, "0", 0, ATTN_HI_HEADS, "heads [0, n) keep dilation 1")},
                      VISIBLE(dilated),
                      .keys = ATTN_KEYS_RESIDUE, .engines = ALL_ENGINES, .band = ATTN_FIELD_NONE,
                      .head_split = offsetof(AttnParams, undilated_heads), .residue = residue_dilated,
                      .row_count = count_dilated},
    [ATTN_STRIDED] = {.params = {P(stride, NULL, 1, BIG, "l: the local band and the stride"),
                                 P(local_heads, NULL, 0, ATTN_HI_HEADS, "heads [0, n) local (A1), the rest strided (A2)")},
                      VISIBLE(strided),
                      .keys = ATTN_KEYS_RESIDUE, .engines = ALL_ENGINES, .band = ATTN_FIELD_NONE,
                      .head_split = offsetof(AttnParams, local_heads), .residue = residue_strided,
                      .row_count = count_strided},
    [ATTN_FIXED] = {.params = {P(stride, NULL, 1, BIG, "l: the block length"),
                               P(c, NULL, 1, ATTN_HI_STRIDE, "summary columns at the end of each block"),
                               P(local_heads, NULL, 0, ATTN_HI_HEADS, "heads [0, n) see their block, the rest the summaries")},
                    VISIBLE(fixed),
                    .keys = ATTN_KEYS_TILES, .engines = ALL_ENGINES, .band = ATTN_FIELD_NONE,
                    .head_split = offsetof(AttnParams, local_heads), .row_count = count_fixed},
    [ATTN_BIGBIRD] = {.params = {P(block, NULL, 1, BIG, "block size"),
                                 P(window, "3", 1, BIG, "window blocks centred on the query's (odd)"),
                                 P(global, "1", 0, BIG, "leading global blocks (seen by and seeing every block)"),
                                 P(random, "1", 0, 64, "random key blocks per query block"),
                                 P(seed, "0", 0, 1L << 31, "the random blocks' seed")},
                      VISIBLE(bigbird),
                      .keys = ATTN_KEYS_TILES, .engines = ALL_ENGINES, .seeds = ATTN_SEEDS_BLOCKS, .band = ATTN_FIELD_NONE,
                      .head_split = ATTN_FIELD_NONE, .row_count = count_bigbird, .check = check_bigbird},
    [ATTN_GAUSSIAN] = {.params = {P(c, NULL, 1, 1024, "most sampled keys per query"),
                                  P(base, "1", 0, 1, "1: the survey's i is 1-based (query i samples [0, i])"),
                                  P(seed, "0", 0, 1L << 31, "the samples' seed"),
                                  P(self, "0", 0, 1, "the query also sees itself (base=0 only)"),
                                  P(tie, "0", 0, 1, "a duplicate equally far from two free keys takes the upper")},
                       VISIBLE(gaussian),
                       .keys = ATTN_KEYS_GATHERED, .engines = ALL_ENGINES, .seeds = ATTN_SEEDS_KEYS, .band = ATTN_FIELD_NONE,
                       .head_split = ATTN_FIELD_NONE, .row_count = count_gaussian, .check = check_gaussian},
    [ATTN_RELATIVE] = {.params = {P(clamp, "0", 0, BIG, "clamp_len: distances above it use R_clamp (0: none)"),
                                  P(same_length, "0", 0, 1, "query i sees only keys j > i - memory"),
                                  P(untie, "0", 0, 1, "per-layer r_w_bias and r_r_bias")},
                       VISIBLE(causal),
                       .keys = ATTN_KEYS_MEMORY, .score = ATTN_SCORE_RELATIVE, .state = ATTN_STATE_MEMORY,
                       .engines = ATTN_ENGINE_CUDA_CORE | ATTN_ENGINE_TENSOR_CORE, .dense = true, .band = ATTN_FIELD_NONE,
                       .head_split = ATTN_FIELD_NONE, .row_count = count_dense},
#ifdef SHORTC_TEST_ATTN_ROWS
    SHORTC_TEST_ATTN_ROWS
#endif
};

const AttnKindRow *attn_kind_row(AttnKind k) {
    static const AttnKindRow none = {0};
    return (unsigned)k < ATTN_COUNT ? &rows[k] : &none;
}

int attn_kind_nparams(const AttnKindRow *r) {
    int n = 0;
    while (n < MAX_ATTN_PARAMS && r->params[n].name) n++;
    return n;
}

/* The value of parameter d in a: as written, else its default (a required one is always written). */
static double spelled(const AttnSpec *a, const AttnParamDef *d) {
    for (int i = 0; i < a->nparams; i++)
        if (strcmp(a->params[i].key, d->name) == 0) return a->params[i].value;
    return d->def ? strtod(d->def, NULL) : 0;
}

bool attn_spec_type(AttnSpec *a, int heads, char *err, size_t errlen) {
    const AttnKindRow *r = attn_kind_row(a->kind);
    AttnParams prm;
    memset(&prm, 0, sizeof prm);
    for (int k = 0; k < attn_kind_nparams(r); k++) {
        const AttnParamDef *d = &r->params[k];
        if (d->field == ATTN_FIELD_NONE) continue;
        double v = spelled(a, d);
        long hi = d->hi == ATTN_HI_HEADS ? heads : d->hi == ATTN_HI_STRIDE ? prm.stride : d->hi;
        if (v != floor(v) || v < (double)d->lo || v > (double)hi) {
            snprintf(err, errlen, "attention '%s': %s=%g must be a whole number in [%ld, %ld]", attn_kind_name(a->kind),
                     d->name, v, d->lo, hi);
            return false;
        }
        char *f = (char *)&prm + d->field;
        if (d->field == offsetof(AttnParams, seed)) *(long *)(void *)f = (long)v;
        else *(int *)(void *)f = (int)v;
    }
    if (r->check && !r->check(&prm, err, errlen)) return false;
    a->prm = prm;
    a->typed = true;
    return true;
}
