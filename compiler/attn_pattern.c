/*
 * attn_pattern.c — the one declarative description of an attention kind's
 * pattern (docs/attention/) and everything derived from it:
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

/* A parameter of the spec (sema filled in defaults, so it is present). */
static double param(const AttnSpec *a, const char *key) {
    for (int i = 0; i < a->nparams; i++)
        if (strcmp(a->params[i].key, key) == 0) return a->params[i].value;
    return 0;
}

/* A whole-number parameter in [lo, hi]; false with a message otherwise. */
static bool int_param(const AttnSpec *a, const char *key, long lo, long hi, long *out, char *err, size_t errlen) {
    double v = param(a, key);
    if (v != floor(v) || v < (double)lo || v > (double)hi) {
        snprintf(err, errlen, "attention '%s': %s=%g must be a whole number in [%ld, %ld]", attn_kind_name(a->kind), key,
                 v, lo, hi);
        return false;
    }
    *out = (long)v;
    return true;
}

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

static bool build_tables(AttnPattern *p) {
    if (p->kind == ATTN_GAUSSIAN) {
        p->gauss = malloc(sizeof *p->gauss * (size_t)p->heads * (size_t)p->ntok * (size_t)p->c);
        bool *used = calloc((size_t)p->ntok + 1, sizeof *used);
        if (!p->gauss || !used) {
            free(used);
            return false;
        }
        for (int h = 0; h < p->heads; h++)
            for (int i = 0; i < p->ntok; i++) {
                int *row = p->gauss + ((size_t)h * p->ntok + i) * p->c;
                int n = gaussian_row(p->seed, p->layer, h, i, p->base, p->c, p->tie_up, used, row);
                for (int k = n; k < p->c; k++) row[k] = -1;
            }
        free(used);
    }
    if (p->kind == ATTN_BIGBIRD && p->random > 0) {
        int nb = (p->ntok + p->block - 1) / p->block;
        p->rand = malloc(sizeof *p->rand * (size_t)p->heads * (size_t)nb * (size_t)p->random);
        if (!p->rand) return false;
        for (int h = 0; h < p->heads; h++)
            for (int qb = 0; qb < nb; qb++)
                bigbird_row(p->seed, p->layer, h, qb, p->window, p->globals, p->random,
                            p->rand + ((size_t)h * nb + qb) * p->random);
    }
    return true;
}

/* Entries the seeded tables would hold; the pattern refuses more than PATTERN_MAX_TABLE. */
enum { PATTERN_MAX_TABLE = 1 << 26 };
static double table_entries(const AttnPattern *p) {
    if (p->kind == ATTN_GAUSSIAN) return (double)p->heads * p->ntok * p->c;
    if (p->kind == ATTN_BIGBIRD) return (double)p->heads * ((p->ntok + p->block - 1) / p->block) * p->random;
    return 0;
}

bool attn_pattern_build(AttnPattern *p, const AttnSpec *a, int layer, int heads, int ntok, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    p->kind = a->kind;
    p->layer = layer;
    p->heads = heads;
    p->ntok = ntok;
    p->dilation = 1;
    long v = 0, v2 = 0;
    enum { BIG = 1 << 20 };
    switch (a->kind) {
    case ATTN_CAUSAL: break;
    case ATTN_WINDOW:
        if (!int_param(a, "size", 1, BIG, &v, err, errlen)) return false;
        p->window = (int)v;
        break;
    case ATTN_DILATED: /* size_last: a ramp sema resolved into each layer's size */
        if (!int_param(a, "size", 1, BIG, &v, err, errlen) || !int_param(a, "dilation", 1, BIG, &v2, err, errlen))
            return false;
        p->window = (int)v;
        p->dilation = (int)v2;
        if (!int_param(a, "global", 0, BIG, &v, err, errlen)) return false;
        p->globals = (int)v;
        if (!int_param(a, "undilated_heads", 0, heads, &v, err, errlen)) return false;
        p->plain_heads = (int)v;
        break;
    case ATTN_STRIDED:
    case ATTN_FIXED:
        if (!int_param(a, "stride", 1, BIG, &v, err, errlen) || !int_param(a, "local_heads", 0, heads, &v2, err, errlen))
            return false;
        p->stride = (int)v;
        p->local_heads = (int)v2;
        if (a->kind == ATTN_FIXED) { /* Child et al.'s c summary columns: at most l */
            if (!int_param(a, "c", 1, p->stride, &v, err, errlen)) return false;
            p->c = (int)v;
        }
        break;
    case ATTN_BIGBIRD:
        if (!int_param(a, "block", 1, BIG, &v, err, errlen)) return false;
        p->block = (int)v;
        if (!int_param(a, "window", 1, BIG, &v, err, errlen)) return false;
        if (v % 2 == 0) {
            snprintf(err, errlen, "attention 'bigbird': window=%ld must be odd (the query's block and as many on each "
                     "side, of which a causal model sees the %ld before it)", v, v / 2);
            return false;
        }
        p->window = (int)(v + 1) / 2;
        if (!int_param(a, "global", 0, BIG, &v, err, errlen)) return false;
        p->globals = (int)v;
        if (!int_param(a, "random", 0, 64, &v, err, errlen)) return false;
        p->random = (int)v;
        if (!int_param(a, "seed", 0, 1L << 31, &v, err, errlen)) return false;
        p->seed = (uint64_t)v;
        break;
    case ATTN_GAUSSIAN:
        if (!int_param(a, "c", 1, 1024, &v, err, errlen)) return false;
        p->c = (int)v;
        if (!int_param(a, "seed", 0, 1L << 31, &v, err, errlen)) return false;
        p->seed = (uint64_t)v;
        if (!int_param(a, "base", 0, 1, &v, err, errlen)) return false;
        p->base = (int)v;
        if (!int_param(a, "self", 0, 1, &v, err, errlen)) return false;
        p->self = v != 0;
        if (p->self && p->base) {
            snprintf(err, errlen, "attention 'gaussian': self=1 needs base=0 (with base=1 the query is one of the "
                     "min(c, i+1) sampled keys already)");
            return false;
        }
        if (!int_param(a, "tie", 0, 1, &v, err, errlen)) return false;
        p->tie_up = v != 0;
        break;
    case ATTN_RELATIVE: /* within a segment: causal; the memory and same_length rules are the op's (mem_txl.c) */
        if (!int_param(a, "clamp", 0, BIG, &v, err, errlen) || !int_param(a, "same_length", 0, 1, &v, err, errlen) ||
            !int_param(a, "untie", 0, 1, &v, err, errlen))
            return false;
        break;
    default:
        snprintf(err, errlen, "attention '%s' has no pattern", attn_kind_name(a->kind));
        return false;
    }
    if (table_entries(p) > PATTERN_MAX_TABLE) {
        snprintf(err, errlen, "attention '%s': its seeded table for %d heads x %d positions would hold %.0f entries (at most %d)",
                 attn_kind_name(a->kind), heads, ntok, table_entries(p), PATTERN_MAX_TABLE);
        return false;
    }
    if (!build_tables(p)) {
        attn_pattern_free(p);
        snprintf(err, errlen, "out of memory building the attention pattern");
        return false;
    }
    return true;
}

void attn_pattern_free(AttnPattern *p) {
    free(p->gauss);
    free(p->rand);
    p->gauss = p->rand = NULL;
}

bool attn_pattern_head_dependent(const AttnPattern *p) {
    return p->kind == ATTN_STRIDED || p->kind == ATTN_FIXED || p->kind == ATTN_GAUSSIAN ||
           (p->kind == ATTN_BIGBIRD && p->random > 0) || (p->kind == ATTN_DILATED && p->plain_heads > 0);
}

/* Dilated: head h's distance between taps. */
static int head_dilation(const AttnPattern *p, int h) { return h < p->plain_heads ? 1 : p->dilation; }

bool attn_pattern_gathered(const AttnPattern *p) { return p->kind == ATTN_GAUSSIAN; }

int attn_pattern_band(const AttnPattern *p) {
    if (p->kind == ATTN_CAUSAL || p->kind == ATTN_RELATIVE) return ATTN_BAND_UNBOUNDED;
    if (p->kind == ATTN_WINDOW) return p->window;
    return 0;
}

bool attn_pattern_residue(const AttnPattern *p, int h, int *dil, int *reach, int *globals) {
    *dil = 1;
    *reach = ATTN_BAND_UNBOUNDED;
    *globals = 0;
    if (p->kind == ATTN_DILATED) {
        *dil = head_dilation(p, h);
        *reach = p->window;
        *globals = p->globals;
        return true;
    }
    if (p->kind == ATTN_STRIDED) {
        bool local = h < p->local_heads;
        *dil = local ? 1 : p->stride;
        *reach = local ? p->stride + 1 : ATTN_BAND_UNBOUNDED; /* Child et al.'s A1: i - l <= j <= i */
        return true;
    }
    return false;
}

const int *attn_pattern_gaussian_row(const AttnPattern *p, int h, int i) {
    if (p->kind != ATTN_GAUSSIAN || i < 0 || i >= p->ntok) return NULL;
    return p->gauss + ((size_t)h * p->ntok + i) * p->c;
}

bool attn_pattern_visible(const AttnPattern *p, int h, int i, int j) {
    if (j < 0 || j > i) return false; /* every kind is causal */
    int d = i - j;
    switch (p->kind) {
    case ATTN_CAUSAL:
    case ATTN_RELATIVE: return true;
    case ATTN_WINDOW: return d < p->window;
    case ATTN_DILATED: return j < p->globals || (d % head_dilation(p, h) == 0 && d / head_dilation(p, h) < p->window);
    case ATTN_STRIDED: return h < p->local_heads ? d <= p->stride : d % p->stride == 0;
    case ATTN_FIXED: return h < p->local_heads ? j / p->stride == i / p->stride : j % p->stride >= p->stride - p->c;
    case ATTN_BIGBIRD: {
        int qb = i / p->block, kb = j / p->block;
        if (qb - kb < p->window || kb < p->globals || qb < p->globals) return true;
        if (p->random <= 0 || i >= p->ntok) return false;
        const int *row = p->rand + ((size_t)h * ((p->ntok + p->block - 1) / p->block) + qb) * p->random;
        for (int k = 0; k < p->random; k++)
            if (row[k] == kb) return true;
        return false;
    }
    case ATTN_GAUSSIAN: {
        if (d == 0 && p->self) return true;
        const int *row = attn_pattern_gaussian_row(p, h, i);
        for (int k = 0; row && k < p->c; k++)
            if (row[k] == j) return true;
        return false;
    }
    default: return false;
    }
}

/* Fixed, summary head: keys j in [a, b) with j mod l >= l - c (b <= i + 1 already). */
static long fixed_columns(const AttnPattern *p, long a, long b) {
    long l = p->stride, lo = l - p->c; /* per block of l: columns [lo, l) */
    long upto_b = b / l * p->c + (b % l > lo ? b % l - lo : 0), upto_a = a / l * p->c + (a % l > lo ? a % l - lo : 0);
    return upto_b - upto_a;
}

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

/* BigBird: all keys query i sees, in O(random): the global blocks, the window blocks up to i and the random
 * blocks (drawn from between the two, whole blocks below i). */
static long bigbird_row_all(const AttnPattern *p, int h, int i) {
    long qb = i / p->block, win = qb - p->window + 1 > 0 ? (qb - p->window + 1) * p->block : 0;
    if (qb < p->globals) return (long)i + 1;
    long glob = (long)p->globals * p->block < win ? (long)p->globals * p->block : win, n = glob + (i + 1 - win);
    if (p->random > 0 && i < p->ntok) {
        const int *row = p->rand + ((size_t)h * ((p->ntok + p->block - 1) / p->block) + qb) * p->random;
        for (int k = 0; k < p->random; k++) n += row[k] >= 0 ? p->block : 0;
    }
    return n;
}

/* BigBird: visible keys of query i in [a, b), block by block. */
static long bigbird_count(const AttnPattern *p, int h, int i, long a, long b) {
    long n = 0;
    if (b > i + 1) b = i + 1;
    if (a == 0 && b == i + 1) return bigbird_row_all(p, h, i);
    for (long kb = a / p->block; kb * p->block < b; kb++) {
        long k = kb * p->block;
        if (attn_pattern_visible(p, h, i, (int)(k > a ? k : a))) n += overlap(k, k + p->block, a, b);
    }
    return n;
}

long attn_pattern_row_count(const AttnPattern *p, int h, int i, long a, long b) {
    if (b > i + 1) b = i + 1; /* causal */
    if (a < 0) a = 0;
    if (b <= a) return 0;
    switch (p->kind) {
    case ATTN_CAUSAL:
    case ATTN_RELATIVE: return b - a;
    case ATTN_WINDOW: return overlap(a, b, (long)i - p->window + 1, (long)i + 1);
    case ATTN_DILATED: { /* globals, plus the taps that are not global */
        long g = overlap(a, b, 0, p->globals), dil = head_dilation(p, h);
        long t = taps_in(i, dil, p->window, a, b) - taps_in(i, dil, p->window, a, b < p->globals ? b : p->globals);
        return g + t;
    }
    case ATTN_STRIDED:
        return h < p->local_heads ? overlap(a, b, (long)i - p->stride, (long)i + 1) : taps_in(i, p->stride, -1, a, b);
    case ATTN_FIXED: return h < p->local_heads ? overlap(a, b, (long)i / p->stride * p->stride, (long)i + 1)
                                               : fixed_columns(p, a, b);
    case ATTN_BIGBIRD: return bigbird_count(p, h, i, a, b);
    case ATTN_GAUSSIAN: {
        long n = p->self && i >= a && i < b; /* self: base 0 only, where i is never sampled */
        const int *row = attn_pattern_gaussian_row(p, h, i);
        for (int k = 0; row && k < p->c; k++) n += row[k] >= a && row[k] < b;
        return n;
    }
    default: {
        long n = 0;
        for (long j = a; j < b; j++) n += attn_pattern_visible(p, h, i, (int)j);
        return n;
    }
    }
}

/* Sum of min(w, i + 1) over queries i in [0, T): a band of w keys. */
static double band_pairs(double w, double T) { return T <= w ? T * (T + 1) / 2 : w * (w + 1) / 2 + (T - w) * w; }

double attn_pattern_pairs(const AttnPattern *p, int T) {
    if (p->kind == ATTN_CAUSAL || p->kind == ATTN_RELATIVE) return p->heads * band_pairs(T, T);
    if (p->kind == ATTN_WINDOW) return p->heads * band_pairs(p->window, T);
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
            for (int k = 0; k < p->c; k++)
                if (row[k] >= 0) seen[row[k]] = true;
            seen[i] |= p->self;
        } else
            for (int j = 0; j <= i; j++) seen[j] |= attn_pattern_visible(p, h, i, j);
    }
    int n = 0;
    for (int j = 0; j < q1; j++)
        if (seen[j]) out[n++] = j;
    free(seen);
    return n;
}
