// ---------------------------------------------------------------------------
// attn_kinds.cuh — every attention kind's visibility, written once in the
// subset of C shared by C11 and CUDA C++ (docs/attention/README.md, "The kind
// table"). Two renderings of the same text:
//   - C: compiler/attn_kinds.c includes this file (SHORTC_KIND_FN defined as
//     `static inline`) and its kind table points at these functions: the
//     interpreter's mask, the cost model's pair counts, `shortc mask`, the key
//     lists and tiles of the emitter all test visibility through them;
//   - CUDA: the emitter pastes this file once after the prelude, and each
//     attention kernel's NAME_visible hook (templates/attn_hooks.cuh) calls
//     the kind's function with the layer's parameters as constants.
// A kind's seeded table (Gaussian keys, BigBird random blocks) is data, not
// code: the C pattern draws it (compiler/attn_pattern.c) and the emitter
// writes it as an int table; here it is `tab`, ntok positions long.
// Every kind is causal (j <= i is the callers' test, here again for safety).
// ---------------------------------------------------------------------------
#ifndef SHORTC_ATTN_KINDS_CUH
#define SHORTC_ATTN_KINDS_CUH

#ifndef SHORTC_KIND_FN
#define SHORTC_KIND_FN __device__ __forceinline__
#endif

// The typed parameters of an attention kind, named as in .arch (`attention
// KIND key=value ...`): sema fills them once from the statement (defaults
// included, ranges checked); a kind reads only its own.
typedef struct AttnParams {
    int size;             // window: keys i-size < j <= i; dilated: taps per query
    int dilation;         // dilated: distance between taps (heads >= undilated_heads)
    int global;           // dilated: leading global tokens; bigbird: leading global blocks
    int size_last;        // dilated: the last layer's size of a ramp (resolved into size by sema; 0 after)
    int undilated_heads;  // dilated: heads [0, undilated_heads) keep dilation 1
    int stride;           // strided, fixed: l
    int local_heads;      // strided, fixed: heads [0, local_heads) are local (Child et al.'s A1)
    int c;                // fixed: summary columns per block of l; gaussian: most sampled keys per query
    int block;            // bigbird: block size
    int window;           // bigbird: window blocks centred on the query's (odd; causally (window+1)/2)
    int random;           // bigbird: random blocks per query block
    int base;             // gaussian: 1 reads the survey's i as 1-based, 0 as 0-based
    int self;             // gaussian: the query also sees itself (base 0 only)
    int tie;              // gaussian: a duplicate equally far from two free indices takes the upper
    long seed;            // seeded kinds (bigbird, gaussian): the generator's seed
    int clamp;            // relative: clamp_len (distances above it use R_clamp; 0: none)
    int same_length;      // relative: query i sees only keys j > i - memory
    int untie;            // relative: per-layer r_w_bias / r_r_bias
} AttnParams;

// Every earlier key (causal, and relative within a segment).
SHORTC_KIND_FN bool attn_visible_causal(const AttnParams *p, const int *tab, int ntok, int h, int i, int j) {
    (void)p, (void)tab, (void)ntok, (void)h;
    return j <= i;
}

// The last `size` keys, the query's own included.
SHORTC_KIND_FN bool attn_visible_window(const AttnParams *p, const int *tab, int ntok, int h, int i, int j) {
    (void)tab, (void)ntok, (void)h;
    return j <= i && i - j < p->size;
}

// Dilated head h's distance between taps: 1 below undilated_heads.
SHORTC_KIND_FN int attn_dilated_step(const AttnParams *p, int h) { return h < p->undilated_heads ? 1 : p->dilation; }

// `size` taps dilation apart ending at the query, and the leading `global` keys.
SHORTC_KIND_FN bool attn_visible_dilated(const AttnParams *p, const int *tab, int ntok, int h, int i, int j) {
    (void)tab, (void)ntok;
    const int d = attn_dilated_step(p, h);
    return j <= i && (j < p->global || ((i - j) % d == 0 && (i - j) / d < p->size));
}

// Child et al.: local heads see keys i-l <= j <= i (A1), the others every l-th key back (A2).
SHORTC_KIND_FN bool attn_visible_strided(const AttnParams *p, const int *tab, int ntok, int h, int i, int j) {
    (void)tab, (void)ntok;
    return j <= i && (h < p->local_heads ? i - j <= p->stride : (i - j) % p->stride == 0);
}

// Child et al.'s fixed pattern: local heads see their block of l, the others the last c columns of each block.
SHORTC_KIND_FN bool attn_visible_fixed(const AttnParams *p, const int *tab, int ntok, int h, int i, int j) {
    (void)tab, (void)ntok;
    return j <= i && (h < p->local_heads ? j / p->stride == i / p->stride : j % p->stride >= p->stride - p->c);
}

// BigBird: the (window+1)/2 blocks up to the query's, the global blocks (seen and seeing), and the query
// block's random blocks: tab[(h * nb + qb) * random + k], nb = ceil(ntok / block), -1 after them.
SHORTC_KIND_FN bool attn_visible_bigbird(const AttnParams *p, const int *tab, int ntok, int h, int i, int j) {
    if (j > i) return false;
    const int qb = i / p->block, kb = j / p->block, nb = (ntok + p->block - 1) / p->block;
    if (qb - kb < (p->window + 1) / 2 || kb < p->global || qb < p->global) return true;
    if (p->random <= 0 || qb >= nb) return false;
    for (int k = 0; k < p->random; k++)
        if (tab[(h * nb + qb) * p->random + k] == kb) return true;
    return false;
}

// Gaussian: the query's sampled keys tab[(h * ntok + i) * c + k] (-1 after them), and itself with self=1.
SHORTC_KIND_FN bool attn_visible_gaussian(const AttnParams *p, const int *tab, int ntok, int h, int i, int j) {
    if (j > i) return false;
    if (i == j && p->self) return true;
    if (i >= ntok) return false;
    for (int k = 0; k < p->c; k++)
        if (tab[(h * ntok + i) * p->c + k] == j) return true;
    return false;
}

// Transformer-XL across segments: a call at position P sees the keys still in the layer's memory of m rows
// (positions >= P - min(P, m)) and its own, causally; same_length: only keys j > i - m.
SHORTC_KIND_FN bool attn_visible_txl(int i, int j, int P, int memory, int same_length) {
    const int first = P - (P < memory ? P : memory);  // the memory's first position
    return j <= i && j >= first && (!same_length || j > i - memory);
}

#endif  // SHORTC_ATTN_KINDS_CUH
