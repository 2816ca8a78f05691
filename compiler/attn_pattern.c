/*
 * attn_pattern.c — an attention kind's pattern at one layer, from its row of
 * the kind table (attn_kinds.c) and its typed parameters, and everything
 * derived from it, for every kind alike:
 *   - token-level visibility (the interpreter's mask, `shortc mask`);
 *   - per query tile, the list of key tiles (full / partial) or, for a
 *     gathered kind, the union of its queries' keys (the emitter's tables);
 *   - the count of visible pairs (the cost model's density).
 * Seeded kinds (Gaussian, BigBird's random blocks) draw from one generator
 * (common/rng.c, one stream per layer, head and query row or block), so the
 * interpreter and the emitted tables hold the same pattern.
 */
#include "shortc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The generator stream of (seed, layer, head, row): splitmix64 state from the four. */
static RtRng pattern_stream(uint64_t seed, int layer, int head, int row) {
    RtRng r = {.s = seed};
    r.s = rt_splitmix64(&r) ^ (uint64_t)(layer + 1) * 0xd1b54a32d192ed03ull;
    r.s = rt_splitmix64(&r) ^ (uint64_t)(head + 1) * 0x8cb92ba72f3d8dd7ull;
    r.s = rt_splitmix64(&r) ^ (uint64_t)(row + 1) * 0xabc98388fb8fac03ull;
    return r;
}

/* Sorts a few ints ascending (insertion sort). */
static void sort_small(int *v, int n) {
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
            int t = v[b];
            v[b] = v[b - 1];
            v[b - 1] = t;
        }
}

/*
 * Gaussian keys of the query at position i: with m = i + base (the survey's
 * i, 1-based when base is 1), min(c, m) distinct indices in [0, m) from
 * N(m, m/2) truncated to [0, m) (rejection), floored; a duplicate moves to
 * the nearest unused index (equal distance: lower first, upper if tie_up).
 * Written sorted into out; returns the count. used: scratch of >= m falses,
 * left all false.
 */
static int gaussian_row(uint64_t seed, int layer, int head, int i, int base, int c, bool tie_up, bool *used, int *out) {
    int m = i + base, n = c < m ? c : m;
    RtRng r = pattern_stream(seed, layer, head, i);
    for (int k = 0; k < n; k++) {
        double x;
        do x = (double)m + 0.5 * (double)m * rt_rng_normal(&r);
        while (!(x >= 0.0 && x < (double)m));
        int j = (int)floor(x);
        for (int dist = 0; used[j]; dist++) { /* n <= m, so an unused index exists */
            int a = tie_up ? j + dist : j - dist, b = tie_up ? j - dist : j + dist;
            if (a >= 0 && a < m && !used[a]) { j = a; break; }
            if (b >= 0 && b < m && !used[b]) { j = b; break; }
        }
        used[j] = true;
        out[k] = j;
    }
    for (int k = 0; k < n; k++) used[out[k]] = false;
    sort_small(out, n);
    return n;
}

/*
 * BigBird random key blocks of query block qb: min(r, available) distinct
 * blocks drawn uniformly among those neither global (< g) nor in the window
 * (> qb - w), i.e. [g, qb - w]: the k-th draw takes the floor(u * (avail - k))-th
 * unused candidate in increasing order. Sorted into out, -1 after them.
 */
static void bigbird_row(uint64_t seed, int layer, int head, int qb, int w, int g, int r, int *out) {
    for (int k = 0; k < r; k++) out[k] = -1;
    int lo = g, hi = qb - w; /* candidate blocks [lo, hi] */
    int avail = hi >= lo ? hi - lo + 1 : 0;
    int n = r < avail ? r : avail, taken[64];
    RtRng rng = pattern_stream(seed, layer, head, qb);
    for (int k = 0; k < n; k++) {
        int b = lo + (int)(rt_rng_uniform(&rng) * (double)(avail - k));
        for (int q = 0; q < k; q++) /* taken is sorted: skip the ones at or below b */
            if (taken[q] <= b) b++;
        out[k] = b;
        taken[k] = b;
        sort_small(taken, k + 1);
    }
    sort_small(out, n);
}

/* Entries of p's seeded table. */
static double table_entries(const AttnPattern *p) {
    const AttnParams *k = &p->prm;
    switch (p->row->seeds) {
    case ATTN_SEEDS_KEYS: return (double)p->heads * p->ntok * k->c;
    case ATTN_SEEDS_BLOCKS: return (double)p->heads * ((p->ntok + k->block - 1) / k->block) * k->random;
    case ATTN_SEEDS_NONE: break;
    }
    return 0;
}

/* Draws p's seeded table (table_entries entries); false when out of memory. */
static bool build_table(AttnPattern *p) {
    const AttnParams *k = &p->prm;
    p->table_len = (size_t)table_entries(p);
    if (!p->table_len) return true;
    p->table = malloc(sizeof *p->table * p->table_len);
    if (!p->table) return false;
    if (p->row->seeds == ATTN_SEEDS_KEYS) {
        bool *used = calloc((size_t)p->ntok + 1, sizeof *used);
        if (!used) return false;
        for (int h = 0; h < p->heads; h++)
            for (int i = 0; i < p->ntok; i++) {
                int *row = p->table + ((size_t)h * p->ntok + i) * k->c;
                int n = gaussian_row((uint64_t)k->seed, p->layer, h, i, k->base, k->c, k->tie != 0, used, row);
                for (int e = n; e < k->c; e++) row[e] = -1;
            }
        free(used);
    } else {
        int nb = (p->ntok + k->block - 1) / k->block;
        for (int h = 0; h < p->heads; h++)
            for (int qb = 0; qb < nb; qb++)
                bigbird_row((uint64_t)k->seed, p->layer, h, qb, (k->window + 1) / 2, k->global, k->random,
                            p->table + ((size_t)h * nb + qb) * k->random);
    }
    return true;
}

/* Entries the seeded tables may hold; the pattern refuses more. */
enum { PATTERN_MAX_TABLE = 1 << 26 };

bool attn_pattern_build(AttnPattern *p, const AttnSpec *a, int layer, int heads, int ntok, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    p->kind = a->kind;
    p->row = attn_kind_row(a->kind);
    p->prm = a->prm;
    p->layer = layer;
    p->heads = heads;
    p->ntok = ntok;
    if (!p->row->visible) {
        snprintf(err, errlen, "attention '%s' has no pattern", attn_kind_name(a->kind));
        return false;
    }
    if (!a->typed) { /* sema types every spec; a spec built in memory calls attn_spec_type */
        snprintf(err, errlen, "internal error: attention '%s': its parameters were never typed (attn_spec_type)",
                 attn_kind_name(a->kind));
        return false;
    }
    if (table_entries(p) > PATTERN_MAX_TABLE) {
        snprintf(err, errlen, "attention '%s': its seeded table for %d heads x %d positions would hold %.0f entries (at most %d)",
                 attn_kind_name(a->kind), heads, ntok, table_entries(p), PATTERN_MAX_TABLE);
        return false;
    }
    if (!build_table(p)) {
        attn_pattern_free(p);
        snprintf(err, errlen, "out of memory building the attention pattern");
        return false;
    }
    return true;
}

void attn_pattern_free(AttnPattern *p) {
    free(p->table);
    p->table = NULL;
    p->table_len = 0;
}

bool attn_pattern_head_dependent(const AttnPattern *p) {
    if (p->table) return true; /* seeded tables are drawn per head */
    if (p->row->head_split == ATTN_FIELD_NONE) return false;
    int split = *(const int *)(const void *)((const char *)&p->prm + p->row->head_split);
    return split > 0 && split < p->heads;
}

bool attn_pattern_gathered(const AttnPattern *p) { return p->row->keys == ATTN_KEYS_GATHERED; }

int attn_pattern_band(const AttnPattern *p) {
    if (p->row->dense) return ATTN_BAND_UNBOUNDED;
    if (p->row->keys != ATTN_KEYS_BANDED) return 0;
    return p->row->band == ATTN_FIELD_NONE ? ATTN_BAND_UNBOUNDED
                                           : *(const int *)(const void *)((const char *)&p->prm + p->row->band);
}

bool attn_pattern_residue(const AttnPattern *p, int h, int *dil, int *reach, int *globals) {
    *dil = 1;
    *reach = ATTN_BAND_UNBOUNDED;
    *globals = 0;
    if (p->row->keys != ATTN_KEYS_RESIDUE) return false;
    p->row->residue(&p->prm, h, dil, reach, globals);
    return true;
}

const int *attn_pattern_gaussian_row(const AttnPattern *p, int h, int i) {
    if (p->row->seeds != ATTN_SEEDS_KEYS || i < 0 || i >= p->ntok) return NULL;
    return p->table + ((size_t)h * p->ntok + i) * p->prm.c;
}

bool attn_pattern_visible(const AttnPattern *p, int h, int i, int j) {
    if (j < 0 || j > i) return false; /* every kind is causal */
    return p->row->visible(&p->prm, p->table, p->ntok, h, i, j);
}

bool attn_masks_fill(const ModelSpec *s, int n, unsigned char *out, char *err, size_t errlen) {
    size_t per = (size_t)n * n;
    for (int l = 0; l < s->n_layers; l++) {
        AttnPattern p;
        char why[256];
        if (!attn_pattern_build(&p, &s->layers[l].attn, l, s->n_heads, n, why, sizeof why)) {
            snprintf(err, errlen, "layer %d: %s", l, why);
            return false;
        }
        for (int h = 0; h < s->n_heads; h++)
            for (int i = 0; i < n; i++)
                for (int j = 0; j <= i; j++)
                    out[((size_t)l * s->n_heads + h) * per + (size_t)i * n + j] = attn_pattern_visible(&p, h, i, j);
        attn_pattern_free(&p);
    }
    return true;
}

long attn_pattern_row_count(const AttnPattern *p, int h, int i, long a, long b) {
    if (b > i + 1) b = i + 1; /* causal */
    if (a < 0) a = 0;
    if (b <= a) return 0;
    if (p->row->row_count) return p->row->row_count(p, h, i, a, b);
    long n = 0;
    for (long j = a; j < b; j++) n += attn_pattern_visible(p, h, i, (int)j);
    return n;
}

/* Sum of min(w, i + 1) over queries i in [0, T): a band of w keys. */
static double band_pairs(double w, double T) { return T <= w ? T * (T + 1) / 2 : w * (w + 1) / 2 + (T - w) * w; }

double attn_pattern_pairs(const AttnPattern *p, int T) {
    int band = attn_pattern_band(p);
    if (band) return p->heads * band_pairs(band < T ? band : T, T);
    double n = 0;
    for (int h = 0; h < p->heads; h++)
        for (int i = 0; i < T; i++) n += (double)attn_pattern_row_count(p, h, i, 0, i + 1);
    return n;
}

/* Whether any / every pair of queries [q0, q1) x keys [k0, k1) is visible for head h. */
static void tile_cover(const AttnPattern *p, int h, int q0, int q1, int k0, int k1, bool *any, bool *all) {
    *any = false;
    *all = true;
    for (int i = q0; i < q1; i++) {
        long n = attn_pattern_row_count(p, h, i, k0, k1);
        *any |= n > 0;
        *all &= n == k1 - k0;
    }
}

int attn_pattern_tile_list(const AttnPattern *p, int h, int q0, int q1, int kt, int *out) {
    int n = 0;
    for (int k0 = 0; k0 < q1; k0 += kt) {
        bool any, all;
        tile_cover(p, h, q0, q1, k0, k0 + kt, &any, &all);
        if (any) out[n++] = (k0 / kt) * 2 + (all ? 1 : 0);
    }
    return n;
}

int attn_pattern_gather_list(const AttnPattern *p, int h, int q0, int q1, int *out) {
    bool *seen = calloc((size_t)q1 + 1, sizeof *seen);
    if (!seen) return -1;
    for (int i = q0; i < q1; i++) {
        const int *row = attn_pattern_gaussian_row(p, h, i);
        if (row) { /* gathered kinds list their keys */
            for (int k = 0; k < p->prm.c; k++)
                if (row[k] >= 0) seen[row[k]] = true;
            seen[i] |= p->prm.self != 0;
        } else
            for (int j = 0; j <= i; j++) seen[j] |= attn_pattern_visible(p, h, i, j);
    }
    int n = 0;
    for (int j = 0; j < q1; j++)
        if (seen[j]) out[n++] = j;
    free(seen);
    return n;
}
