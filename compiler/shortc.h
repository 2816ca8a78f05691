/*
 * shortc.h — the one internal header of the shortc compiler.
 *
 * Pipeline (each stage lives in its own file, see docs/architecture.md):
 *
 *   .arch text --(grammar/arch.l, arch.y)--> AST          (ast.c)
 *   AST        --(sema.c)-------------------> ModelSpec    (validated, derived models resolved)
 *   ModelSpec  --(lower.c)------------------> Graph (IR)   (ops: one row each in op_table, ops.c)
 *   Graph      --(pass_*.c, run by passes.c)-> Graph        (shapes, layouts, fusion, dedup, buffers)
 *   Graph      --(emit.c + templates/)------> .cu text with an embedded JSON plan (plan.c)
 *   Graph      --(interp.c)-----------------> reference logits (the golden oracle)
 *
 * Memory: everything the compiler builds is allocated from one Arena and
 * freed at once. Errors: reported through a Diag (an error counter plus caret
 * diagnostics computed from byte offsets); no compiler function exits.
 */
#ifndef SHORTC_H
#define SHORTC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "shortc_common.h"

/* ------------------------------------------------------------------ */
/* Arena (arena.c)                                                     */
/* ------------------------------------------------------------------ */

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
    ArenaBlock *head;   /* most recent block; older blocks chain behind it */
    size_t total;       /* bytes handed out, for reports */
} Arena;

void arena_init(Arena *a);
void *arena_alloc(Arena *a, size_t n);           /* zeroed, 16-byte aligned; aborts never: returns NULL only on OOM */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_free(Arena *a);

/* Growable array of pointers allocated in an arena (old storage is simply abandoned). */
typedef struct PtrVec {
    void **items;  /* element storage */
    int len;       /* elements in use */
    int cap;       /* elements allocated */
} PtrVec;
void ptrvec_push(Arena *a, PtrVec *v, void *p);

/* ------------------------------------------------------------------ */
/* Sources and diagnostics (diag.c)                                    */
/* ------------------------------------------------------------------ */

/* One loaded source file. Locations are byte offsets into `text`. */
typedef struct Source {
    const char *path;   /* path as given (used in messages) */
    const char *text;   /* whole file, NUL-terminated */
    size_t len;         /* bytes in text */
    int id;             /* index in the Diag's source table */
} Source;

/* A source range [begin, end) in one file. */
typedef struct Loc {
    int file;       /* Source id, -1 for "no location" */
    int begin;      /* byte offset of the first character */
    int end;        /* byte offset one past the last character */
} Loc;

#define LOC_NONE ((Loc){-1, 0, 0})

typedef struct Diag {
    Source **sources;  /* every file loaded (main file, imports) */
    int nsources;      /* entries in sources */
    int errors;        /* error counter; a stage fails when it is > 0 */
    int warnings;      /* warning counter */
    int max_errors;    /* stop reporting (not parsing) after this many; default 20 */
    FILE *out;         /* where messages go (stderr by default; tests use a memstream) */
    Arena *arena;      /* owner of Source records */
    Loc first_error;   /* where the first error with a source position was (LOC_NONE until one is) */
} Diag;

void diag_init(Diag *d, Arena *a, FILE *out);
/* Loads a file into the table; on failure reports "path: error: cannot read: strerror" and returns NULL. */
Source *diag_load_file(Diag *d, const char *path);
Source *diag_add_source(Diag *d, const char *path, const char *text, size_t len);
/* Line (1-based) and column (1-based, in bytes) of a location's start. */
void diag_linecol(const Diag *d, Loc loc, int *line, int *col);
/* `file:line:col: error: msg`, then the source line and a caret (with ~ under the rest of the range). */
void diag_error(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_note(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An error that has no source position: `shortc: error: msg`. */
void diag_plain_error(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Suggestion for "did you mean": the candidate within edit distance 2 (or NULL). */
const char *diag_suggest(const char *word, const char *const *candidates, int n);

/* ------------------------------------------------------------------ */
/* AST (ast.c builds nodes; grammar/arch.y calls these)                 */
/* ------------------------------------------------------------------ */

/* A value on the right of a setting: `768`, `1e-5`, `gelu_tanh`, `"file"`, `eps=1e-5`, `[in, out]`. */
typedef enum AstValueKind {
    AV_INT,     /* integer literal: ival (and num) */
    AV_NUM,     /* real literal: num */
    AV_IDENT,   /* bare word: str */
    AV_STRING,  /* "quoted": str without quotes, escapes resolved */
    AV_KEYVAL,  /* key=value: str is the key, kv is the value */
    AV_LIST,    /* [a, b, ...]: items */
} AstValueKind;

typedef struct AstValue AstValue;
struct AstValue {
    AstValueKind kind;   /* which member below is meaningful */
    Loc loc;             /* whole value (for key=value: from key to end of value) */
    long ival;           /* AV_INT */
    double num;          /* AV_INT and AV_NUM */
    const char *str;     /* AV_IDENT, AV_STRING, AV_KEYVAL (the key) */
    AstValue *kv;        /* AV_KEYVAL: the value */
    AstValue **items;    /* AV_LIST: elements */
    int nitems;          /* AV_LIST: element count */
};

/* Layer selectors of `layer <selector> { ... }` blocks. */
typedef enum AstSelKind {
    SEL_ALL,          /* layer all { }               every layer */
    SEL_INDEX,        /* layer 0, 3, 5 { }           listed indices (0-based) */
    SEL_EVERY,        /* layer every k [from o] { }  o, o+k, o+2k, ... (o defaults to k-1) */
    SEL_FIRST,        /* layer first n { }           0 .. n-1 */
    SEL_LAST,         /* layer last n { }            N-n .. N-1 */
    SEL_INTERLEAVED,  /* layer interleaved n { }     n layers spread evenly: floor((i+1)*N/n) - 1 */
} AstSelKind;

typedef struct AstSelector {
    AstSelKind kind;   /* which pattern */
    Loc loc;           /* the selector text */
    long n;            /* k for every, n for first/last/interleaved */
    long from;         /* SEL_EVERY offset; -1 when not given */
    long *indices;     /* SEL_INDEX: the listed indices */
    Loc *index_locs;   /* SEL_INDEX: location of each index (for range errors) */
    int nindices;      /* SEL_INDEX: count */
} AstSelector;

typedef enum AstStmtKind {
    ST_SETTING,   /* name value* ;             e.g. `ffn 3072 gelu_tanh;` */
    ST_LAYER,     /* layer <selector> { stmt* } per-layer overrides */
} AstStmtKind;

typedef struct AstStmt AstStmt;
struct AstStmt {
    AstStmtKind kind;    /* tag */
    Loc loc;             /* whole statement */
    Loc name_loc;        /* ST_SETTING: the setting name */
    const char *name;    /* ST_SETTING: setting name */
    AstValue **args;     /* ST_SETTING: arguments in order */
    int nargs;           /* ST_SETTING: argument count */
    AstSelector sel;     /* ST_LAYER: which layers */
    AstStmt **body;      /* ST_LAYER: settings inside the block */
    int nbody;           /* ST_LAYER: count */
};

typedef struct AstModel {
    const char *name;     /* model name */
    Loc loc;              /* `model name` */
    const char *parent;   /* `: parent` or NULL */
    Loc parent_loc;       /* location of the parent name */
    AstStmt **stmts;      /* body statements in order */
    int nstmts;           /* count */
} AstModel;

typedef struct AstImport {
    const char *path;     /* as written, resolved relative to the importing file */
    Loc loc;              /* the string literal */
} AstImport;

typedef struct AstFile {
    Source *src;          /* the file */
    AstImport *imports;   /* `import "x.arch";` lines */
    int nimports;         /* count */
    AstModel **models;    /* models in order */
    int nmodels;          /* count */
} AstFile;

/* Parses one file (grammar/arch.y). Returns an AstFile even with errors (d->errors > 0). */
AstFile *parse_source(Arena *a, Diag *d, Source *src);

/* ------------------------------------------------------------------ */
/* Model specification (sema.c): the validated meaning of one model     */
/* ------------------------------------------------------------------ */

/* DType, its spellings and sizes, and round_to_dtype: common/shortc_common.h. */

typedef enum Activation { ACT_NONE, ACT_RELU, ACT_GELU, ACT_GELU_TANH, ACT_SILU } Activation;
const char *activation_name(Activation a);   /* "relu", "gelu", "gelu_tanh", "silu", "none" */
typedef enum NormKind { NORM_LAYERNORM, NORM_RMSNORM } NormKind;
const char *norm_kind_name(NormKind k);      /* "layernorm", "rmsnorm" */
typedef enum NormPlace { NORM_PRE, NORM_POST } NormPlace;
const char *norm_place_name(NormPlace p);    /* "pre", "post" */
typedef enum PosKind {
    POS_NONE, POS_SINUSOIDAL, POS_LEARNED,
    POS_ROPE,  /* rotary positions on q and k (Su et al.; `positions rope`), none on the embedding */
    POS_ALIBI, /* ALiBi: a per-head linear distance penalty on the scores (Press et al.; `positions alibi`) */
} PosKind;
const char *pos_kind_name(PosKind p);        /* "none", "sinusoidal", "learned", "rope", "alibi" */


/* Rotary frequency scaling, as HF's `rope_scaling` names its types. */
typedef enum RopeScaling {
    ROPE_SCALE_NONE,    /* plain rotary: inv_freq_i = theta^(-2i/dims) */
    ROPE_SCALE_LINEAR,  /* position interpolation: every frequency / factor */
    ROPE_SCALE_DYNAMIC, /* dynamic NTK: theta grows once a call's positions pass original_max */
    ROPE_SCALE_YARN,    /* YaRN: ramp between interpolated and original frequencies, cos/sin times mscale */
    ROPE_SCALE_LLAMA3,  /* Llama 3.1: low frequencies / factor, high kept, a smooth ramp between */
} RopeScaling;
const char *rope_scaling_name(RopeScaling k); /* "none", "linear", "dynamic", "yarn", "llama3" */

/* `positions rope theta=... [dims=...] [pairs=...] [scaling=... factor=... ...]` (docs/language.md). */
typedef struct RopeSpec {
    double theta;        /* base of the frequencies (HF rope_theta) */
    int dims;            /* rotated channels of each head, even (0 until sema resolves it: head_dim) */
    bool interleaved;    /* pairs (2i, 2i+1) as GPT-J; false: halves (i, i+dims/2), rotate_half as HF Llama/NeoX */
    RopeScaling scaling; /* frequency scaling */
    double factor;       /* scaling factor (> 1 scales; 1 with ROPE_SCALE_NONE) */
    int original_max;    /* dynamic/yarn/llama3: the pretraining context (HF original_max_position_embeddings) */
    double low_freq;     /* llama3: low_freq_factor */
    double high_freq;    /* llama3: high_freq_factor */
    double beta_fast;    /* yarn: beta_fast (rotations at the extrapolated end) */
    double beta_slow;    /* yarn: beta_slow */
    double mscale;       /* yarn: attention_factor multiplying cos and sin (0: 0.1 ln(factor) + 1) */
} RopeSpec;

/* The dims/2 inverse frequencies of r for a call whose last position is seq_len-1 (dynamic scaling depends on
 * it), and the factor *mscale applied to cos and sin (yarn; 1 otherwise). compiler/rope.c. */
void rope_inv_freq(const RopeSpec *r, int seq_len, double *inv_freq, double *mscale);
/* Rotates the first r->dims channels of x (one head) to position pos with inv_freq and mscale, in place. */
void rope_rotate(const RopeSpec *r, const double *inv_freq, double mscale, long pos, double *x);
/* ALiBi's slope of head h of H (Press et al.: 2^(-8(h+1)/n) for the closest power of two n <= H, then the
 * odd powers of the next power of two's base for the remaining heads, as HF's build_alibi_tensor). */
double alibi_slope(int h, int H);
typedef enum WeightNaming {
    NAMING_HF_GPT2,   /* HF GPT-2: wte, h.{i}.attn.c_attn, ... */
    NAMING_TXL,       /* Transformer-XL (original PyTorch / HF TransfoXL): word_emb, layers.{i}.dec_attn, ... */
} WeightNaming;
/* Which sinusoid: infused by Shortformer's position-infused attention (docs/attention/pia.md), or added by
   the embedding (`positions sinusoidal style=...`). */
typedef enum PiaStyle {
    PIA_NONE,     /* no position-infused attention */
    PIA_FAIRSEQ,  /* fairseq: sin half then cos half, position s + 2 (padding_idx + 1), step log(1e4)/(D/2-1) */
    PIA_VASWANI,  /* Vaswani et al.: sin/cos interleaved, position s, 10000^(2i/D) */
} PiaStyle;
const char *pia_style_name(PiaStyle p);      /* "none", "fairseq", "vaswani" */
/* Channel c of the position code of slot s for width D in the given style (double precision). */
double pia_sinusoid(PiaStyle style, int s, int c, int D);

/*
 * Attention kinds: the enum and the .arch names; everything else about a kind
 * is its row of the kind table (compiler/attn_kinds.c, attn_kind_row):
 * parameters, visibility, key source, score term, state and engines.
 * docs/attention/README.md ("The kind table"), docs/attention/KIND.md.
 */
#define SHORTC_ATTN_KINDS(X) \
    X(ATTN_CAUSAL, "causal") \
    X(ATTN_WINDOW, "window") \
    X(ATTN_DILATED, "dilated") \
    X(ATTN_STRIDED, "strided") \
    X(ATTN_FIXED, "fixed") \
    X(ATTN_BIGBIRD, "bigbird") \
    X(ATTN_GAUSSIAN, "gaussian") \
    X(ATTN_RELATIVE, "relative") \
    SHORTC_TEST_ATTN_KINDS(X)

/* Empty in shortc; the front-end test build (tests/parse/kinds) adds made-up
 * kinds here (and their rows in SHORTC_TEST_ATTN_ROWS) to exercise sema's
 * table-driven parameter checks. */
#ifndef SHORTC_TEST_ATTN_KINDS
#define SHORTC_TEST_ATTN_KINDS(X)
#endif

typedef enum AttnKind {
#define X(e, name) e,
    SHORTC_ATTN_KINDS(X)
#undef X
    ATTN_COUNT
} AttnKind;
const char *attn_kind_name(AttnKind k);

/* AttnParams (the typed parameters) and each kind's visibility, in C: the text the kernels get too. */
#define SHORTC_KIND_FN static inline
#include "../templates/attn_kinds.cuh"

#define MAX_ATTN_PARAMS 8
typedef struct AttnParam {
    const char *key;   /* parameter name */
    double value;      /* its value */
} AttnParam;

typedef struct AttnSpec {
    AttnKind kind;                        /* which attention */
    AttnParam params[MAX_ATTN_PARAMS];    /* key=value parameters as written, sorted by key, defaults included
                                             (names the kernels; --dump-spec) */
    int nparams;                          /* count */
    AttnParams prm;                       /* the same, typed and checked (attn_spec_type); what the compiler reads */
    bool typed;                           /* prm is filled (sema, or attn_spec_type for a spec built in memory) */
    Loc loc;                              /* the `attention ...;` statement that set it */
} AttnSpec;

/* ------------------------------------------------------------------ */
/* The attention-kind table (attn_kinds.c)                             */
/* ------------------------------------------------------------------ */

/* Where a kind's kernel gets the keys of a query tile (templates/attn_engine.cuh, attn_mma.cuh). */
typedef enum AttnKeySource {
    ATTN_KEYS_BANDED,    /* keys i-band < j <= i: key tiles in closed form (BANDED; causal, window) */
    ATTN_KEYS_RESIDUE,   /* per head a band in residue coordinates plus leading globals (RESIDUE; dilated, strided) */
    ATTN_KEYS_TILES,     /* per query tile a list of key tiles, full or partial (fixed, bigbird) */
    ATTN_KEYS_GATHERED,  /* per query tile the keys its queries see, gathered by index (GATHER; gaussian) */
    ATTN_KEYS_MEMORY,    /* the layer's memory ring, then the call's keys (REL; relative) */
} AttnKeySource;

/* What a kind adds to q.k before the softmax (the kernels' _extra / _rel hooks). */
typedef enum AttnScoreTerm {
    ATTN_SCORE_NONE,      /* nothing (_extra is 0) */
    ATTN_SCORE_RELATIVE,  /* Transformer-XL's (q + v).(W_r R_{i-j}) and the u bias (templates/attn_txl_hooks.cuh) */
} AttnScoreTerm;

/* The state a kind keeps between calls. */
typedef enum AttnState {
    ATTN_STATE_KV,      /* the model's KV cache (or none) */
    ATTN_STATE_MEMORY,  /* Transformer-XL's per-layer memory ring (`memory M`, mem_txl.c) */
} AttnState;

/* The engines a kind runs on (bits). */
enum {
    ATTN_ENGINE_CUDA_CORE = 1,    /* templates/attn_engine.cuh */
    ATTN_ENGINE_TENSOR_CORE = 2,  /* templates/attn_mma.cuh (fp16/bf16) */
    ATTN_ENGINE_DECODE = 4,       /* templates/attn_decode.cuh (flash-decoding, T = 1) */
};

/* The seeded table a kind draws (attn_pattern.c; emitted as an int table, data not code). */
typedef enum AttnSeeds {
    ATTN_SEEDS_NONE,    /* none */
    ATTN_SEEDS_KEYS,    /* per head and query, c sampled keys (gaussian) */
    ATTN_SEEDS_BLOCKS,  /* per head and query block, `random` key blocks (bigbird) */
} AttnSeeds;

/* A kind's visibility (templates/attn_kinds.cuh): query i of head h sees key j; tab: its seeded table. */
typedef bool (*AttnVisibleFn)(const AttnParams *p, const int *tab, int ntok, int h, int i, int j);

/* Upper bounds of a parameter that depend on the model or on another parameter. */
#define ATTN_HI_HEADS (-1L)   /* the model's heads */
#define ATTN_HI_STRIDE (-2L)  /* the kind's stride */
/* A parameter with no AttnParams field (the front-end test build's made-up kinds: spelled, not typed). */
#define ATTN_FIELD_NONE ((size_t)-1)

/* One parameter of a kind: `key=value` in .arch, a whole number in [lo, hi], into AttnParams at field. */
typedef struct AttnParamDef {
    const char *name;   /* the key */
    size_t field;       /* offsetof(AttnParams, ...), or ATTN_FIELD_NONE */
    const char *def;    /* the default as written; NULL: required */
    long lo, hi;        /* the accepted range (hi may be ATTN_HI_HEADS or ATTN_HI_STRIDE) */
    const char *doc;    /* what it means (docs/attention/KIND.md) */
} AttnParamDef;

typedef struct AttnPattern AttnPattern;

/* One attention kind: everything the compiler knows about it. */
typedef struct AttnKindRow {
    AttnParamDef params[MAX_ATTN_PARAMS];  /* its parameters (name NULL after the last) */
    AttnVisibleFn visible;                 /* its visibility, C rendering of templates/attn_kinds.cuh */
    const char *cuda_visible;              /* the same function's name there, for the kernels' _visible hook */
    AttnKeySource keys;                    /* where its kernels get a query tile's keys */
    AttnScoreTerm score;                   /* what it adds to the scores */
    AttnState state;                       /* the state it keeps between calls */
    unsigned engines;                      /* ATTN_ENGINE_* it runs on */
    AttnSeeds seeds;                       /* its seeded table */
    bool dense;                            /* sees every earlier key of its state (no visibility test to decode) */
    size_t band;                           /* BANDED kinds: offsetof the field n, keys i-n < j <= i (ATTN_FIELD_NONE:
                                              every earlier key) */
    size_t head_split;                     /* offsetof the field n: heads [0, n) see otherwise than the rest
                                              (ATTN_FIELD_NONE: heads alike, but for a seeded table) */
    /* RESIDUE kinds: head h's dilation, band taps in residue steps and leading global keys (attn_pattern_residue). */
    void (*residue)(const AttnParams *p, int h, int *dil, int *reach, int *globals);
    /* Keys in [a, b) (0 <= a < b <= i + 1) query i of head h sees, in closed form; NULL: key by key. */
    long (*row_count)(const AttnPattern *p, int h, int i, long a, long b);
    bool (*check)(const AttnParams *p, char *err, size_t errlen); /* rules across parameters; NULL: none */
} AttnKindRow;

/* Kind k's row (a zeroed row for an out-of-range kind). */
const AttnKindRow *attn_kind_row(AttnKind k);
/* Number of parameters of a row. */
int attn_kind_nparams(const AttnKindRow *r);
/* Fills a->prm from a->params (each parameter once; defaults for those not given), checking each is a whole
 * number in its range (heads: the model's) and the kind's rules; false with err (nothing else set) otherwise. */
bool attn_spec_type(AttnSpec *a, int heads, char *err, size_t errlen);

/*
 * The pattern of one layer's attention, from its typed AttnSpec (attn_pattern.c):
 * which key j (absolute position) query i of head h sees. Every kind is
 * causal (j <= i). Seeded tables are drawn at build time for positions
 * [0, ntok).
 */
struct AttnPattern {
    AttnKind kind;           /* the kind */
    const AttnKindRow *row;  /* its row of the kind table */
    AttnParams prm;          /* its typed parameters */
    int layer;               /* the layer (seeded kinds draw one stream per layer) */
    int heads;               /* heads */
    int ntok;                /* positions the seeded tables cover */
    int *table;              /* the seeded table (row->seeds): gaussian [heads][ntok][c] sampled keys, bigbird
                                [heads][ceil(ntok/block)][random] random key blocks; sorted, -1 after; NULL: none */
    size_t table_len;        /* its entries */
    bool alibi;              /* ALiBi's score term -slope_h (i - j) in the kernels' _extra (`positions alibi`; set by the
                                emitter from the node, not by attn_pattern_build) */
};

/* Builds the pattern of spec a for layer, heads, positions [0, ntok); false with err on a bad parameter. */
bool attn_pattern_build(AttnPattern *p, const AttnSpec *a, int layer, int heads, int ntok, char *err, size_t errlen);
void attn_pattern_free(AttnPattern *p);
/* Whether query i of head h sees key j. */
bool attn_pattern_visible(const AttnPattern *p, int h, int i, int j);
/* Keys in [a, b) that query i of head h sees, by interval arithmetic per kind (O(1), O(c) or O(blocks)). */
long attn_pattern_row_count(const AttnPattern *p, int h, int i, long a, long b);
/* Visible (query, key) pairs over all heads for queries and keys [0, T): closed form for the banded kinds
 * (causal, relative, window), else the sum of the rows' counts (O(heads T)). */
double attn_pattern_pairs(const AttnPattern *p, int T);
/* Whether heads differ (tables per head). */
bool attn_pattern_head_dependent(const AttnPattern *p);
/* Banded kinds (causal, window): query i sees exactly keys i-band < j <= i; 0 for other kinds. */
#define ATTN_BAND_UNBOUNDED (1 << 30)
int attn_pattern_band(const AttnPattern *p);
/* Whether the kernel gathers keys by index list instead of loading key tiles. */
bool attn_pattern_gathered(const AttnPattern *p);
/*
 * Residue kinds (dilated, strided): head h groups its queries by residue i mod *dil; within one residue the
 * keys j = i - m*dil (m < *reach taps; ATTN_BAND_UNBOUNDED: every earlier one) form a causal band in residue
 * coordinates, and the keys j < *globals are seen by every later query besides. False for other kinds.
 */
bool attn_pattern_residue(const AttnPattern *p, int h, int *dil, int *reach, int *globals);
/*
 * The per-call choice between residue grouping and the plain tile loop on the tensor-core path for a residue
 * kind (attn_pattern_residue; templates/attn_mma.cuh RESIDUE): the forwards' T (P = 0) whose plain loop visits
 * fewer key tiles, in runs [lo[i], hi[i]] ascending, from the cost model's tile counts (attn_residue_call_tiles)
 * for T = 1 .. min(key capacity, ATTN_RESIDUE_SCAN); every other call groups residues. The kernel's _plain(P, T)
 * hook, the plan's "residue_plain" and the cost model use the same runs.
 */
enum { ATTN_RESIDUE_RANGES = 8, ATTN_RESIDUE_SCAN = 8192 };
typedef struct AttnResidueChoice {
    int scan;                     /* the T counted: 1 .. scan (min(key capacity, ATTN_RESIDUE_SCAN)) */
    int n;                        /* runs */
    int lo[ATTN_RESIDUE_RANGES];  /* first T of each run */
    int hi[ATTN_RESIDUE_RANGES];  /* last T of each run */
} AttnResidueChoice;
/* c for residue pattern p with kt keys per tile and ntok key positions (no runs for other kinds); false when
 * kt is not positive. */
bool attn_residue_choice(const AttnPattern *p, int kt, int ntok, AttnResidueChoice *c);
/* Whether a call of T queries runs the plain tile loop under c. */
bool attn_residue_plain(const AttnResidueChoice *c, int T);
/* Key tiles (per warp; every warp of a query tile computes each) all heads of residue pattern p visit in a call
 * of T queries at P with kt keys per tile: plain, the plain tile loop, else residue grouping; 0 for other kinds. */
double attn_residue_call_tiles(const AttnPattern *p, int kt, bool plain, int P, int T);
/* Gaussian: query i's sampled keys (c entries, -1 padded); NULL for other kinds or i out of range. */
const int *attn_pattern_gaussian_row(const AttnPattern *p, int h, int i);
/* Key tiles of kt keys that queries [q0, q1) of head h need, as 2*tile + (1 if every pair is visible); count. out: >= ceil(q1/kt). */
int attn_pattern_tile_list(const AttnPattern *p, int h, int q0, int q1, int kt, int *out);
/* Keys any of queries [q0, q1) of head h sees, ascending; count (-1: out of memory). out: >= q1 entries. */
int attn_pattern_gather_list(const AttnPattern *p, int h, int q0, int q1, int *out);

/* Everything that may differ between layers (set by `layer` override blocks). */
typedef struct LayerSpec {
    AttnSpec attn;   /* attention of this layer */
    int memory;      /* `memory M`: rows of earlier layer inputs this layer keeps (Transformer-XL; 0: none) */
    Loc memory_loc;  /* the `memory` statement that set it (LOC_NONE: defaulted) */
} LayerSpec;

/* Tensor classes that have a layout. */
typedef enum TensorClass { TC_WEIGHTS, TC_ACTIVATIONS, TC_KV, TC_COUNT } TensorClass;

/* Dimension orders. Names are the words used in `.arch` lists. */
typedef enum DimOrder {
    ORD_IN_OUT,          /* weights: [in, out] (HF Conv1D) — row-major K x N */
    ORD_OUT_IN,          /* weights: [out, in] (nn.Linear) — row-major N x K */
    ORD_TOKENS_CHANNELS, /* activations: [tokens, channels] */
    ORD_TOKENS_HEADS_DIM,/* kv: [tokens, heads, dim] */
    ORD_HEADS_TOKENS_DIM,/* kv: [heads, tokens, dim] */
} DimOrder;
const char *dim_order_name(DimOrder o);  /* "[in,out]" etc. */

typedef struct LayoutSpec {
    DType dtype;      /* storage dtype */
    DimOrder order;   /* dimension order */
    Loc loc;          /* the `layout` statement (LOC_NONE for defaults) */
} LayoutSpec;

/* Settings that carry a source location for "which .arch line" comments. */
typedef enum SettingId {
    SET_VOCAB, SET_D_MODEL, SET_HEADS, SET_HEAD_DIM, SET_FFN, SET_NORM,
    SET_POSITIONS, SET_EMBEDDING, SET_SEGMENT, SET_LAYERS, SET_ATTENTION,
    SET_WEIGHTS, SET_MATH, SET_CACHE, SET_MEMORY, SET_COUNT
} SettingId;

/* Adaptive input / adaptive softmax (docs/language.md, "Adaptive input and softmax"). */
enum { MAX_ADAPTIVE_CUTOFFS = 6 };   /* most cutoffs: at most 7 bands */
typedef enum AdaptiveStyle {
    ADAPTIVE_NONE,      /* a plain [vocab, d_model] embedding */
    ADAPTIVE_FAIRSEQ,   /* fairseq AdaptiveInput + AdaptiveSoftmax (Baevski & Auli) */
    ADAPTIVE_TXL,       /* Transformer-XL AdaptiveEmbedding + ProjectedAdaptiveLogSoftmax (div_val) */
} AdaptiveStyle;
const char *adaptive_style_name(AdaptiveStyle s);   /* "none", "fairseq", "transformer_xl" */

typedef struct AdaptiveSpec {
    AdaptiveStyle style;                 /* ADAPTIVE_NONE: not adaptive */
    int ncutoffs;                        /* cutoffs in use; bands = ncutoffs + 1 */
    int cutoffs[MAX_ADAPTIVE_CUTOFFS];   /* band boundaries, strictly increasing, each < vocab */
    int factor;                          /* band i has width d_model / factor^i (div_val) */
    double scale;                        /* the summed band embeddings are multiplied by this */
} AdaptiveSpec;

/* Yoshida et al.'s recurrence module (docs/attention/recurrence.md): pooling of a window's hidden
 * states through a small FFN into h_prev, one extra key/value of layer `insert` in the next window. */
enum { MAX_REC_FFN = 8 };              /* most hidden layers of the module's FFN */
typedef enum RecPool { REC_POOL_MEAN, REC_POOL_SUM } RecPool;
typedef enum RecStates {
    REC_STATES_BLOCKS,   /* the L block outputs (before the final norm): alpha has L entries */
    REC_STATES_EMBED,    /* the embedding output and the L block outputs: alpha has L + 1 entries */
} RecStates;
typedef struct RecurrenceSpec {
    bool on;                     /* the model has the module */
    int insert;                  /* l_ins, 1-based: the layer whose attention gets h_prev as a key/value */
    int nhidden;                 /* hidden layers of the FFN (its output layer has d_model units) */
    int hidden[MAX_REC_FFN];     /* their widths */
    Activation act;              /* activation after each hidden layer (none after the output layer) */
    RecPool pool;                /* mean (divide by the window's tokens) or sum over the tokens */
    RecStates states;            /* which hidden states are pooled */
    bool norm;                   /* h_prev passes through layer l_ins's input norm (ln_1) before c_attn */
    int overlap;                 /* K: tokens each window shares with the one before (windows mode default) */
    Loc loc;                     /* the `recurrence` statement */
} RecurrenceSpec;

typedef struct ModelSpec {
    const char *name;         /* model name */
    const char *parent;       /* parent model or NULL */
    const char *path;         /* .arch file that defined it */
    int vocab;                /* vocabulary size */
    int d_model;              /* model width */
    int n_heads;              /* attention heads */
    int kv_heads;             /* key/value heads G (`heads H kv_heads G`; H: multi-head, 1: multi-query); query
                                 head h reads K/V head h / (H / G) */
    RopeSpec rope;            /* pos == POS_ROPE: the rotary positions */
    int head_dim;             /* per-head width (d_model / n_heads unless set) */
    int d_ff;                 /* FFN hidden width */
    Activation act;           /* FFN activation */
    NormKind norm;            /* layernorm | rmsnorm */
    NormPlace norm_place;     /* pre | post */
    double eps;               /* norm epsilon */
    PosKind pos;              /* position kind */
    int max_pos;              /* learned: table rows; sinusoidal: limit (0 = segment) */
    bool tied;                /* output projection shares the token embedding */
    AdaptiveSpec adaptive;    /* adaptive input and softmax (style NONE: plain embedding) */
    int segment;              /* segment length L (max tokens per forward) */
    int n_layers;             /* layer count */
    LayerSpec *layers;        /* n_layers entries, overrides applied */
    LayoutSpec layout[TC_COUNT]; /* storage per tensor class */
    WeightNaming naming;      /* weight-name scheme */
    bool tf32;                /* `math tf32`: GEMMs on fp32 operands use TF32 tensor cores (off by default) */
    PiaStyle infused;         /* `positions sinusoidal infused`: positions added to every layer's q and k inputs
                                 (PIA_NONE: not infused; the embedding then adds none) */
    int cache;                /* `cache N`: tokens of earlier calls each infused layer keeps (L'; 0: none) */
    Loc where[SET_COUNT];     /* where each setting was written (LOC_NONE if defaulted) */
    RecurrenceSpec rec;       /* the recurrence module (rec.on false: none) */
    PiaStyle pos_style;       /* `positions sinusoidal [style=...]`: the embedding's sinusoid (PIA_VASWANI
                                 by default; PIA_FAIRSEQ: fairseq's SinusoidalPositionalEmbedding) */
    bool no_final_norm;       /* `final_norm off`: a pre-norm model's logits read the last block's output
                                 directly, without ln_f (fairseq's no_decoder_final_norm) */
    bool gated;               /* `ffn N swiglu|geglu`: the FFN is down(act(gate(x)) * up(x)); act is the gate's
                                 activation (ACT_SILU for swiglu, ACT_GELU for geglu) */
    bool no_bias;             /* `bias off`: the attention and FFN projections have no bias vectors (Llama) */
    bool parallel;            /* `block parallel`: x + attn(ln_1(x)) + ffn(ln_2(x)) (GPT-NeoX's parallel residual) */
} ModelSpec;

/*
 * Resolves `model_name` (NULL: the last model of the main file) from the
 * parsed files, applying parents and overrides, checking every rule. Returns
 * NULL with errors reported in d. Imports are parsed by sema too.
 */
ModelSpec *sema_model(Arena *a, Diag *d, AstFile *main_file, const char *model_name);
/* Stable text form of a resolved spec (--dump-spec; spec_print.c). */
void spec_print(FILE *out, const ModelSpec *s);
/* Convenience: load, parse and analyse in one call. */
ModelSpec *shortc_load_model(Arena *a, Diag *d, const char *path, const char *model_name);
/* The boolean masks of every layer and head of s on n tokens from position 0 into out [layers, heads, n, n]
 * (zeroed by the caller): out[l, h, i, j] = 1 when query i of head h in layer l sees key j (`shortc mask`,
 * srt_mask). False with err ("layer L: why") on a bad pattern parameter. */
bool attn_masks_fill(const ModelSpec *s, int n, unsigned char *out, char *err, size_t errlen);
/* shortc_load_model of the text[len] of an .arch, named path (diagnostics; imports resolve from its directory). */
ModelSpec *shortc_load_model_text(Arena *a, Diag *d, const char *path, const char *text, size_t len,
                                  const char *model_name);
/* The names of the models defined in path itself (not its imports), in order, into *names
 * (arena); returns their count, or -1 with the error reported in d. */
int shortc_list_models(Arena *a, Diag *d, const char *path, const char ***names);

/* ------------------------------------------------------------------ */
/* IR (ir.c): typed tensor-op graph                                    */
/* ------------------------------------------------------------------ */

/*
 * IR ops. Everything about one op — arity, attributes, shape rule,
 * interpreter and emitter — is one row of op_table (ops.c, OpInfo below);
 * the inputs of each op are listed in docs/ir.md.
 */
typedef enum OpKind {
    OP_EMBED,      /* tokens, wte [, wpe]  -> x[T,D]  (sinusoidal computed inline) */
    OP_NORM,       /* x, gamma [, beta]     -> y[T,D]  layernorm|rmsnorm */
    OP_MATMUL,     /* x[T,K], w [, bias] [, residual] -> y[T,N]; epilogue after fusion */
    OP_BIAS,       /* x[T,N], b[N]          -> y       (fused away) */
    OP_ACT,        /* x                     -> y       (fused away) */
    OP_ADD,        /* a, b                  -> y       residual (fused away) */
    OP_KV_WRITE,   /* qkv[T,3D]             -> kv state [2,...] in the kv layout */
    OP_ATTENTION,  /* qkv[T,3D], kv         -> y[T,D]  kind from attrs */
    OP_LOGITS,     /* x[T,D], w             -> logits[T,V] (a matmul against the vocab) */
    OP_EMBED_BAND, /* tokens, table[n,d]    -> y[T,d]  row tok-lo for tokens in [lo,hi), else 0 */
    OP_POS_ADD,    /* x[T,D] [, wpe]        -> y[T,D]  x*scale + position (adaptive input) */
    OP_ADAPTIVE_LOGPROB, /* head[T,c0], clusters[T,n], tail_1..tail_n -> log-probs[T,V] */
    OP_REC_KV,     /* [gamma, beta,] w_qkv, b_qkv; reads state rec_state -> [1, 2*H*hd+1]: k | v | present */
    OP_REC_UPDATE, /* x_1..x_n [T,D], alpha[n], (w_k, b_k)* -> state h_prev [D+1] (h | present) */
    OP_PIA_POS,    /* c_attn weight         -> derived table [slots, 2D]  W_q p_s | W_k p_s, per slot s */
    OP_REL_ATTENTION, /* qkv[T,3D], rel, u, v [, w_qkv, memory] -> y[T,D]  Transformer-XL relative attention
                         (rel: OP_REL_KEYS's table) */
    OP_MEM_WRITE,  /* x[T,D]                -> memory state [m, D]: keeps the last m rows of cat(memory, x) */
    OP_REL_KEYS,   /* r_net weight          -> derived table [distances, H*hd]: W_r R_d per distance d (Transformer-XL) */
    OP_GATE,       /* up[T,F], gate[T,F]    -> y = up * act(gate)  gated FFN unit (fused into up's matmul epilogue) */
    OP_COUNT       /* number of ops (not an op) */
} OpKind;
const char *op_name(OpKind k);

/* What a value is. */
typedef enum ValueClass {
    VC_INPUT,       /* a graph input: the token ids (i32 [T]) or the position P (i32 scalar) */
    VC_WEIGHT,      /* model parameter, named by the naming scheme */
    VC_ACTIVATION,  /* intermediate tensor, lives in the activation arena */
    VC_KV,          /* key/value state (per layer): the window a call commits into its session's state */
    VC_OUTPUT,      /* logits */
} ValueClass;

/* Dimension sizes are SymDims (shortc_common.h): a constant, T (the call's new
 * tokens, at most the segment) or, for a state value's rows, fill + T (the rows
 * cached before the call and its new ones, at most the capacity). */
#define DIM_STATE_ROWS SYMDIM_KEYS

/* What a state value holds between calls (docs/ir.md, "State"). */
typedef enum StateRole {
    STATE_NONE,         /* not state: lives for one call */
    STATE_KV_CACHE,     /* keys and values of the tokens seen so far (causal attention) */
    STATE_LAYER_INPUT,  /* a layer's input rows of earlier tokens (Shortformer-style cache) */
    STATE_MEMORY,       /* per-layer memory of the previous segment (Transformer-XL) */
    STATE_RECURRENT,    /* one vector carried from segment to segment */
    STATE_TABLE,        /* derived, not session state: computed from the weights once per weights load by the
                           plan's "load" program and shared by every session (Shortformer's positional table) */
} StateRole;
const char *state_role_name(StateRole r);   /* "none", "kv_cache", "layer_input", "memory", "recurrent", "table" */
/* MAX_RANK (most dimensions of a value): common/shortc_common.h, shared with the plan reader. */

typedef struct Value {
    int id;              /* index in Graph.values */
    const char *name;    /* text-form name: %x3, @h.0.attn.c_attn.weight */
    ValueClass cls;      /* what it is */
    int rank;            /* dimensions in use */
    SymDim dims[MAX_RANK]; /* logical shape; SYMDIM_T for the token dimension, DIM_STATE_ROWS for a state's rows */
    DType dtype;         /* storage dtype (layout pass) */
    DimOrder order;      /* storage order (layout pass) */
    bool transposed_src; /* weights: the file stores it transposed w.r.t. `order` (naming scheme) */
    const char *weight_name; /* VC_WEIGHT: name in the weight file (naming scheme applied) */
    int def;             /* producing node id, -1 for inputs/weights */
    int last_use;        /* last consuming node id (buffer pass) */
    int buffer;          /* activation arena slot (buffer pass), -1 if none */
    size_t offset;       /* byte offset in the activation arena (buffer pass) */
    size_t bytes;        /* bytes at T = segment (buffer pass) */
    StateRole role;      /* VC_KV: what its session state holds; STATE_NONE otherwise */
    int capacity;        /* state values: rows (positions) the session's state holds, fixed at compile
                            time; the state's rows (fill + T) are at most this, its fill grows per call */
    bool slides;         /* state values: when a segment ends only the last `keep` rows stay (moved to rows
                            0..keep-1) and the fill becomes min(fill + T, keep) (Shortformer's cache; the
                            plan's "slide" program) */
    int keep;            /* slides: the rows kept (L'); 0 otherwise */
} Value;

/* Epilogue fused into a matmul (fusion pass). */
typedef struct Epilogue {
    bool bias;           /* add a bias vector (input slot 2) */
    Activation act;      /* then an activation */
    Activation gate;     /* then multiply by gate(G), G the input after the bias (a gated FFN: up's GEMM reads the
                            gate's GEMM result); ACT_NONE: no gate */
    bool residual;       /* then add a residual tensor (last input) */
    bool in_gemm;        /* applied by cuBLASLt inside the GEMM (fuse pass): no epilogue kernel */
} Epilogue;

enum { MAX_NODE_INPUTS = 48 };   /* most inputs of a node (a recurrence update takes every layer's output) */
typedef struct Node {
    int id;              /* index in Graph.nodes (program order) */
    OpKind op;           /* what it does */
    int in[MAX_NODE_INPUTS]; /* input value ids */
    int nin;             /* input count */
    int out;             /* output value id */
    int layer;           /* layer index, -1 for embedding/head */
    Loc src;             /* .arch statement it came from */
    bool dead;           /* removed by a pass (skipped everywhere) */
    /* op attributes */
    NormKind norm;       /* OP_NORM */
    double eps;          /* OP_NORM */
    Activation act;      /* OP_ACT; OP_GATE: the gate's activation */
    PosKind pos;         /* OP_EMBED */
    int pos_mod;         /* OP_EMBED / OP_POS_ADD: positions restart every pos_mod tokens (a cache without PIA:
                            each segment's tokens at 0..L-1, P mod L; 0: position P + t) */
    bool trans_w;        /* OP_MATMUL/OP_LOGITS: weight is stored [out,in] (use op T) */
    Epilogue epi;        /* OP_MATMUL after fusion */
    bool norm_add;       /* OP_NORM after fusion: its last two inputs are the operands of the add that defines
                            its first input; its kernel computes that add, writes it and normalizes it */
    bool by_norm;        /* OP_ADD after fusion: computed by the norm that reads its output (no launch of its own) */
    bool sum_unused;     /* OP_NORM with norm_add: no other node reads the sum, so its kernel does not store it */
    AttnSpec attn;       /* OP_ATTENTION / OP_KV_WRITE */
    int heads;           /* OP_ATTENTION / OP_KV_WRITE: attention heads H */
    int kv_heads;        /* OP_ATTENTION / OP_KV_WRITE: key/value heads G (H / G query heads share one); the
                            qkv input is [T, (H + 2G)·hd] and the cache holds G heads */
    const RopeSpec *rope;/* OP_ATTENTION / OP_KV_WRITE: rotary positions on the query and the key at their
                            absolute position (the cache stores rotated keys); NULL: none */
    bool alibi;          /* OP_ATTENTION: ALiBi's score term -slope_h (i - j) */
    int head_dim;        /* OP_ATTENTION / OP_KV_WRITE: per-head width hd */
    SymDim keys;         /* OP_ATTENTION: keys its queries may see (fill + T: the cached rows and the new ones) */
    int band_lo, band_hi;/* OP_EMBED_BAND: the token ids [lo, hi) of the band */
    double scale;        /* OP_POS_ADD: factor applied before the position is added */
    int ntails;          /* OP_ADAPTIVE_LOGPROB: tail clusters (inputs after the first two) */
    bool reversed;       /* OP_ADAPTIVE_LOGPROB: cluster i's column is c0+n-i (Transformer-XL), not c0+i-1 */
    bool infused;        /* OP_ATTENTION: a third input, OP_PIA_POS's table, adds W_q p_s to the query and
                            W_k p_s to the key of slot s (slot = row of the state) */
    PiaStyle pia_style;  /* OP_PIA_POS: the sinusoid of its table; OP_EMBED / OP_POS_ADD with POS_SINUSOIDAL:
                            the sinusoid added (PIA_VASWANI or PIA_FAIRSEQ) */
    int memory;          /* OP_REL_ATTENTION / OP_MEM_WRITE: the layer's memory rows m (0: no memory input) */
    bool out_bias;       /* OP_LOGITS: a third input, an output bias [vocab], is added (Transformer-XL's crit) */
    int kernel;          /* kernel id after dedup (-1: none, e.g. pure GEMM) */
    int rec_state;       /* OP_REC_KV: the recurrent state value it reads (written by OP_REC_UPDATE) */
    int rec_pooled;      /* OP_REC_UPDATE: pooled hidden states (inputs before alpha) */
    int rec_layers;      /* OP_REC_UPDATE: FFN layers (weight, bias pairs after alpha) */
    bool rec_mean;       /* OP_REC_UPDATE: mean pooling (else sum); its FFN activation is `act` */
    bool rec_norm;       /* OP_REC_KV: h_prev goes through the layer's input norm (`norm`, `eps`; gamma[, beta] first) */
    bool rec_key;        /* OP_ATTENTION: input 2 is the recurrence's extra key/value row (OP_REC_KV) */
} Node;

/* Node n's K/V heads G (its heads H when not grouped). */
static inline int node_kv_heads(const Node *n) { return n->kv_heads > 0 ? n->kv_heads : n->heads; }

typedef struct Graph {
    Arena *arena;        /* owner of everything below */
    const ModelSpec *spec; /* the model it was lowered from */
    Value **values;      /* all values */
    int nvalues;         /* count */
    int cap_values;      /* allocated */
    Node **nodes;        /* nodes in program order */
    int nnodes;          /* count */
    int cap_nodes;       /* allocated */
    int tokens;          /* input value id */
    int position;        /* input value id of P, the position of the first token (a scalar; -1: none) */
    int logits;          /* output value id */
    size_t arena_bytes;  /* activation arena size (buffer pass) */
    size_t naive_bytes;  /* sum of all activation sizes without reuse (buffer pass) */
    int nkernels;        /* distinct kernels (dedup pass) */
    const char *stage;   /* last pass run (for dumps and verifier messages) */
} Graph;

Value *ir_new_value(Graph *g, ValueClass cls, const char *name);
Node *ir_new_node(Graph *g, OpKind op, Loc src, int layer);
void ir_add_input(Node *n, int value_id);
/* Text form (docs/ir.md). */
void ir_print(FILE *out, const Graph *g, const Diag *d);
/* Structural checks; reports through d with the stage name; returns false on failure. */
bool ir_verify(const Graph *g, Diag *d);
/* A value is live when it is the tokens input, a weight, or the output of a live node. */
bool ir_value_live(const Graph *g, const Value *v);
/* Index of a stage name in lower, shapes, layouts, fuse, dedup, buffers; -1 if unknown. */
int ir_stage_index(const char *stage);
/* Elements of a value with its dims evaluated under env. */
size_t ir_numel_env(const Value *v, const SymEnv *env);
/* Elements of a value with the token dimension at T (a state's rows at T: fill 0). */
size_t ir_numel(const Value *v, int T);
/* The size of dimension k of v when it is a constant; 0 when it is symbolic or k is out of range. */
int ir_dim(const Value *v, int k);
/* The dimension of v that grows with the tokens (T or fill + T); -1 when none. */
int ir_token_axis(const Value *v);
/* Text form of a shape, `[T,768]`, `[2,4,fill+T,16]`; writes at most n bytes, returns the length wanted. */
size_t ir_format_dims(char *buf, size_t n, int rank, const SymDim *dims);
/* v's shape as ir_format_dims writes it, in buf; returns buf ("" for NULL). For messages: call it only when one is
 * reported. */
const char *ir_shape_text(const Value *v, char *buf, size_t n);
/* A state value's storage: its dims with the token dimension at its capacity (elements). */
size_t ir_state_numel(const Value *v);
/* Bytes of state one session of g keeps: every live state value at its capacity, in its dtype (derived
 * tables are not session state: ir_derived_bytes). */
size_t ir_state_bytes(const Graph *g);
/* Whether v is a derived tensor (role STATE_TABLE): computed from the weights by the load program, model-level. */
bool ir_value_derived(const Value *v);
/* Bytes of the live derived tensors of g (each at its capacity): what the load program computes once per model. */
size_t ir_derived_bytes(const Graph *g);
/* The positions a model can address: its `positions ... max=N` (learned: the table's rows) when set,
 * never fewer than the segment; a recurrent model's window (the segment). The capacity of its KV state. */
int ir_position_limit(const ModelSpec *s);
/* The rows a session keeps when a segment ends, when its states slide (Shortformer's cache: the model's
 * `cache`), so that it runs any number of calls; -1 when positions accumulate up to ir_position_limit. */
int ir_state_keep(const Graph *g);

/* ------------------------------------------------------------------ */
/* The op table (ops.c)                                                */
/* ------------------------------------------------------------------ */

/* Private contexts of the interpreter (interp.c) and the emitter (emit.c), opaque here. */
struct InterpRun;
struct Emit;
struct KSpec;
struct OpCost;

/* One row of the op table: everything the compiler knows about one op. */
typedef struct OpInfo {
    const char *name;        /* text-form name (docs/ir.md) */
    int nin;                 /* fixed input count; -1: variable, given by ninputs */
    ValueClass out_class;    /* class the output value must have */
    bool gemm;               /* a GEMM against a weight (input 1 must be a weight) */
    bool fusable_epilogue;   /* may carry a fused bias/activation/residual epilogue (fuse pass) */
    int kernel_first_input;  /* dedup: the first input the node's kernel reads (earlier ones: the GEMM's) */
    /* Input count for a variable-arity op from its attributes (NULL when nin >= 0). */
    int (*ninputs)(const Node *n);
    /* Text form: attributes after the op name (`.layernorm eps=1e-05`); NULL: none. */
    void (*print_attrs)(FILE *out, const Node *n);
    /* Dedup signature: attributes appended at buf+k (at most n bytes in all); returns the new length. */
    size_t (*key_attrs)(char *buf, size_t n, size_t k, const Node *nd);
    /* Whether a live node needs a generated kernel; NULL: always. */
    bool (*needs_kernel)(const Node *n);
    /* Structural checks beyond arity and output class; a message in why, or false when none applies. */
    bool (*verify)(const Graph *g, const Node *n, char *why, size_t whylen);
    /* Shape rule: the output shape from the inputs; false with a reason in why. */
    bool (*shape)(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen);
    /* Reference semantics (interp.c): computes output y (value o) of n; false reported. */
    bool (*interp)(struct InterpRun *r, const Node *n, float *y, const Value *o);
    /* Reverse mode (interp.c, beside interp): given dy = d loss / d output (o's shape in the call), adds each
     * input's gradient into the run's gradient arrays; NULL: the op cannot be differentiated yet. */
    bool (*backward)(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
    /* Emission (emit.c): adds the node's steps, or fills ks for its kernel launch and sets *launch. */
    bool (*emit)(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
    /* Cost model (cost.c): work and compulsory traffic of n for one call on T tokens. */
    void (*cost)(const Graph *g, const Node *n, int T, struct OpCost *c);
} OpInfo;

/* Indexed by OpKind; a new op is one row here plus its functions. */
extern const OpInfo op_table[OP_COUNT];
/* The row of an op (NULL for an out-of-range kind). */
const OpInfo *op_info(OpKind k);
/* Whether an op is a GEMM against a weight (false for an out-of-range kind). */
bool op_is_gemm(OpKind k);
/* Input count a node must have (variable-arity ops: from its attributes). */
int op_expected_inputs(const Node *n);

/* The hooks of op_table that live with their module's private context. */
bool interp_embed(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_norm(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_matmul(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_bias(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_act(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_add(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_gate(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_kv_write(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_attention(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_embed_band(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_pos_add(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_adaptive_logprob(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_pia_pos(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_rel_attention(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_mem_write(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_backward_embed(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_embed_band(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_pos_add(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_adaptive_logprob(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_norm(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_matmul(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_bias(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_act(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_add(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_gate(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_kv_write(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_attention(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_pia_pos(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_rel_attention(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_rel_keys(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool interp_backward_mem_write(struct InterpRun *r, const Node *n, const double *dy, const Value *o);
bool emit_embed_band(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_pos_add(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_adaptive_logprob(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_embed(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_norm(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_gemm(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_bias(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_act(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_add(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_gate(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_kv_write(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_attention(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_pia_pos(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
void cost_embed(const Graph *g, const Node *n, int T, struct OpCost *c);
void cost_norm(const Graph *g, const Node *n, int T, struct OpCost *c);
void cost_gemm(const Graph *g, const Node *n, int T, struct OpCost *c);
void cost_elementwise(const Graph *g, const Node *n, int T, struct OpCost *c);
void cost_kv_write(const Graph *g, const Node *n, int T, struct OpCost *c);
void cost_attention(const Graph *g, const Node *n, int T, struct OpCost *c);
/* The recurrence module's ops (recurrence.c). */
bool interp_rec_kv(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool interp_rec_update(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool emit_rec_kv(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
bool emit_rec_update(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
void cost_rec(const Graph *g, const Node *n, int T, struct OpCost *c);
int ninputs_rec_kv(const Node *n);
int ninputs_rec_update(const Node *n);
void print_rec(FILE *out, const Node *n);
size_t key_rec(char *buf, size_t n, size_t k, const Node *nd);
bool shape_rec_kv(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen);
bool shape_rec_update(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen);
/* Whether g carries a recurrent state (a model with `recurrence`): each forward is one window at P = 0. */
bool ir_recurrent(const Graph *g);
void cost_pia_pos(const Graph *g, const Node *n, int T, struct OpCost *c);

/* Helpers shared by the passes and the verifier. */
/* ops.c: the output shape of n from its inputs (its op's shape rule); false with a reason in why. */
bool ir_infer_shape(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen);
/* ir_rules.c: the dtype a value must have after the layouts pass. */
DType ir_expected_dtype(const Graph *g, const Value *v);
/* The `layout weights` dtype (fp32 without a spec): what every weight's values are rounded to. A weight
 * a GEMM multiplies with fp32 activations is held in fp32 (ir_expected_dtype), converted once at load. */
DType ir_weight_layout_dtype(const Graph *g);
/* ops.c: whether a live node needs a generated kernel (pure GEMMs do not). */
bool ir_node_needs_kernel(const Node *n);
/* ir_rules.c: whether a value belongs in the activation arena; its live range [start, end] in node ids. */
bool ir_value_in_arena(const Graph *g, const Value *v);
void ir_live_range(const Graph *g, const Value *v, int *start, int *end);
/* ir_rules.c: whether the buffers pass gave the value a place in the arena (weights and
 * per-session state have none). */
bool ir_value_placed(const Value *v);

/* lower.c: ModelSpec -> Graph */
Graph *lower_model(Arena *a, Diag *d, const ModelSpec *spec);

/* Passes (one file each), called in order by passes.c with ir_verify between. */
bool pass_shapes(Graph *g, Diag *d);    /* shape inference and shape checks */
bool pass_layouts(Graph *g, Diag *d);   /* dtype and order per value from the layout spec */
bool pass_fuse(Graph *g, Diag *d);      /* bias/act/residual into matmul epilogues */
bool pass_dedup(Graph *g, Diag *d);     /* kernel ids shared across identical layers */
bool pass_buffers(Graph *g, Diag *d);   /* liveness-based arena offsets, peak bytes */

typedef struct PassOptions {
    bool no_fuse;          /* skip fusion (for testing the oracle on unfused IR) */
    const char *dump_after;/* print IR after this pass: lower|shapes|layouts|fuse|dedup|buffers,
                              "all" = once after the last pass, "every" = after each stage */
    FILE *dump_to;         /* where dumps go */
} PassOptions;
bool run_passes(Graph *g, Diag *d, const PassOptions *opt);

/* ------------------------------------------------------------------ */
/* CUDA emission (emit.c) and the plan (plan.c)                         */
/* ------------------------------------------------------------------ */

/* One generated kernel (after dedup). */
typedef struct Kernel {
    const char *name;       /* extern "C" symbol, e.g. shortc_norm_layernorm_d768_f32 */
    const char *source;     /* instantiated text */
    int first_node;         /* the node of its first launch (the plan's `line` for it) */
    int uses;               /* number of launches */
    bool barriers;          /* uses __syncthreads / warp intrinsics (simulator needs fibers) */
    bool residue_choice;    /* a residue kind's tensor-core kernel: choice names the calls of its plain tile loop */
    AttnResidueChoice choice; /* with residue_choice: the plan's residue_plain runs (attn_residue_choice) */
} Kernel;

typedef struct EmitResult {
    char *cu;               /* the whole .cu text (malloc'd; caller frees) */
    size_t cu_len;          /* bytes */
    char *plan_json;        /* the plan alone (malloc'd; also embedded in cu) */
    int nkernels;           /* distinct kernels */
    int nlaunches;          /* kernel launches per forward */
    int ngemms;             /* cuBLAS calls per forward */
} EmitResult;

/* Emits CUDA + plan for a graph that went through run_passes. */
bool emit_cuda(Graph *g, Diag *d, EmitResult *out);
void emit_result_free(EmitResult *r);

/* Query rows per warp and per block of the tensor-core attention path (templates/attn_mma.cuh: 4 warps of
 * 32 rows, two m16 blocks each). */
enum { ATTN_MMA_WARP_ROWS = 32, ATTN_MMA_QT = 128 };
/*
 * Whether attention node n of g runs on the tensor-core path (templates/attn_mma.cuh; emit.c
 * chooses the template by it, cost.c prices it) and, if so, its keys per tile *kt and dynamic
 * shared memory *smem (attn_mma_smem). Otherwise it runs on the CUDA-core engine (attn_engine.cuh).
 */
bool attn_mma_tiles(const Graph *g, const Node *n, int *kt, int *smem);
/* Keys per tile of the tensor-core path at head_dim hd: 64 up to 64 dims, else 32 (registers: a warp holds
 * the scores of 32 rows x KT keys and the outputs of 32 rows x hd; larger tiles spill at sm_80/sm_90). */
int attn_mma_kt(int hd);
/* Keys per tile for elements of es bytes (2: fp16/bf16; 4: fp32 on TF32 MMAs), with a gathered kind's key
 * positions (gather) and position-infused attention's positional tile (pia): es 2 attn_mma_kt; es 4 the
 * largest of 64 (head_dim up to 32; registers: 32 up to 64, 16 above) and its halves down to 16 whose
 * shared memory fits SHORTC_SMEM_OPTIN_LIMIT. 0 when none fits. */
int attn_mma_kt_fit(int hd, int es, bool gather, bool pia);
/* Dynamic shared memory of a tensor-core attention kernel (templates/attn_mma.cuh): Q (ATTN_MMA_QT rows), one
 * K and one V tile of kt rows, rows of hd rounded up to 16 plus 16 bytes, elements of es bytes (2: fp16/bf16,
 * 4: fp32 for TF32 MMAs); gather: the gathered tiles' key positions, two tiles of kt ints. */
int attn_mma_smem(int hd, int kt, bool gather, int es);
/* Whether position-infused node n can run on the tensor-core path, and the bytes of its positional key tile. */
bool attn_mma_pia_ok(const Graph *g, const Node *n);
int attn_mma_pia_smem(int hd, int kt, int es);
/* The same with Transformer-XL's relative term (REL): attn_mma_smem, the band of ATTN_MMA_QT + kt relative-key
 * rows, u and v - u (fp32, hd rounded up to 16) and each warp's band product of 16 rows x (kt + 24) floats. */
int attn_mma_rel_smem(int hd, int kt);
/* The tensor-core path's grid is ceil((T + c) / ATTN_MMA_QT) blocks for c = attn_mma_grid_pad(max_dil): one
 * block per query tile a call of T queries touches at any P (attn_mma.cuh takes one tile per block); max_dil: a
 * residue kind's largest dilation (its tiles hold one residue each), else 0 or 1. */
int attn_mma_grid_pad(int max_dil);
/* Whether the decode program (T = 1) runs attention node n of g as flash-decoding (attn_decode.cuh,
 * CUDA cores) instead of the engine. */
bool attn_decode_kernel(const Graph *g, const Node *n);

/* SHORTC_PLAN_BEGIN / SHORTC_PLAN_END, the markers around the plan: common/shortc_common.h. */

/* libclang check of emitted CUDA (check.c): maps diagnostics to .arch lines. */
int check_cuda_source(Diag *d, const char *cu_text, size_t len, const char *cu_path);

/* ------------------------------------------------------------------ */
/* The compile entry point (compile.c)                                 */
/* ------------------------------------------------------------------ */

/* Where shortc_compile stops (the zero value runs every stage). */
typedef enum CompileStop {
    COMPILE_STOP_AFTER_EMIT,    /* the whole pipeline: spec, graph and emitted CUDA + plan */
    COMPILE_STOP_AFTER_PASSES,  /* spec and the graph after run_passes; nothing emitted */
    COMPILE_STOP_AFTER_SEMA,    /* the resolved spec only */
} CompileStop;

typedef struct CompileOptions {
    const char *path;        /* .arch file to load; ignored when spec is set */
    const char *model;       /* model to resolve in path (NULL: the file's last model) */
    const char *source;      /* the .arch text itself (source_len bytes), named path in diagnostics and
                                resolving imports from path's directory; NULL: read path */
    size_t source_len;       /* bytes at source */
    const ModelSpec *spec;   /* a spec built in memory (tests): load and sema are skipped */
    CompileStop stop;        /* last stage to run */
    bool no_fuse;            /* skip the fusion pass (the graph stays unfused) */
    FILE *dump_spec_to;      /* print the resolved spec here after sema (--dump-spec); NULL: no */
    const char *dump_ir;     /* PassOptions.dump_after (--dump-ir[=PASS]); NULL: no dump */
    FILE *dump_to;           /* where IR dumps go (NULL: stdout) */
} CompileOptions;

typedef struct CompileResult {
    const ModelSpec *spec;   /* the resolved spec (in the caller's arena) */
    Graph *graph;            /* the IR after run_passes (in the arena); NULL when stopped after sema */
    EmitResult emit;         /* emitted CUDA + plan (malloc'd); empty unless the emit stage ran */
    double ms_load;          /* milliseconds in load + parse + sema */
    double ms_lower;         /* milliseconds in lowering */
    double ms_passes;        /* milliseconds in the passes (with verification) */
    double ms_emit;          /* milliseconds in emission */
} CompileResult;

/*
 * Runs load + sema -> lower -> passes (verified) -> emit up to o->stop, with
 * the caller's arena and diagnostics. Returns false when any stage reported
 * an error (the messages are in d; r->emit is then empty). Whatever ran is
 * left in r either way; free it with compile_result_free (the arena is the
 * caller's).
 */
bool shortc_compile(Arena *a, Diag *d, const CompileOptions *o, CompileResult *r);
void compile_result_free(CompileResult *r);
/* The model path that an `import` not found beside its importing file is looked up along: colon-separated
 * directories, process-wide (the string is kept, not copied). NULL (the default): $SHORTC_PATH. */
void shortc_set_import_path(const char *dirs);

/* ------------------------------------------------------------------ */
/* Cost model (cost.c) and roofline devices (devices.c)                */
/* docs/cost-model.md states the counting convention.                  */
/* ------------------------------------------------------------------ */

/* Where a step's matrix products run: the roofline's compute peak (docs/cost-model.md, "Roofline"). */
typedef enum CostPeak {
    PEAK_FP32,   /* CUDA cores, fp32 FMA: generated kernels, fp32 GEMMs (CUBLAS_COMPUTE_32F) */
    PEAK_FP16,   /* tensor cores, fp16 inputs, fp32 accumulation */
    PEAK_BF16,   /* tensor cores, bf16 inputs, fp32 accumulation */
    PEAK_TF32,   /* tensor cores, fp32 inputs rounded to TF32 (`math tf32`), fp32 accumulation */
} CostPeak;
const char *cost_peak_name(CostPeak p); /* "fp32", "fp16", "bf16", "tf32" */

/* Work and compulsory memory traffic of one node (or a sum of nodes) for one call on T tokens. */
typedef struct OpCost {
    double flops;                   /* matrix-product FLOPs: 2 per multiply-add (GEMMs, q.k, p.v) */
    double other_ops;               /* elementwise operations (norms, activations, softmax, bias, residual, positions) */
    double bytes_read[DT_COUNT];    /* each operand read once, by its storage dtype */
    double bytes_written[DT_COUNT]; /* each result written once, by its storage dtype */
    int gemm_m, gemm_n, gemm_k;     /* GEMM shape: M rows (tokens) x N outputs, inner K; 0 when not a GEMM */
    double attn_queries;            /* attention: query rows per head */
    double attn_keys;               /* attention: key columns per head */
    double attn_scores;             /* attention: scores computed, all heads (queries x keys x density x heads) */
    double mma_flops;               /* attention on the tensor-core path: FLOPs its MMAs execute (whole tiles of
                                       16 queries x KT keys, head_dim padded to 16), priced by the roofline in
                                       place of `flops`; 0 on every other path */
} OpCost;

/* Totals of an OpCost's per-dtype byte arrays. */
double op_cost_bytes_read(const OpCost *c);
double op_cost_bytes_written(const OpCost *c);
/* a += b (shapes are not summed). */
void op_cost_add(OpCost *a, const OpCost *b);

/* One distinct step of a forward: a deduplicated kernel or one GEMM shape, with its launch count. */
typedef struct CostGroup {
    char label[128];     /* op, GEMM shape or attention matrix, epilogue (e.g. "matmul 1024x2304x768 epilogue=bias") */
    int first_node;      /* first node of the group */
    int uses;            /* nodes (launches or GEMM calls) per forward */
    bool gemm;           /* a GEMM (cuBLAS); else a generated kernel */
    DType dtype;         /* dtype of its output (picks the roofline peak) */
    OpCost per_use;      /* cost of one use at the window length */
    CostPeak peak;       /* where its matrix products run (the roofline's peak) */
} CostGroup;

/* Attention of one layer for one call (windows of W tokens). */
typedef struct LayerAttn {
    const char *kind;    /* attention kind name */
    int heads;           /* heads H */
    double queries;      /* query rows per head */
    double keys;         /* key columns per head */
    double density;      /* computed fraction of queries x keys (causal: (W+1)/(2W)) */
    double scores;       /* scores computed, all heads */
    CostPeak peak;       /* where its q.k and p.v run in a forward (fp16/bf16: the tensor-core path) */
    double mma_flops;    /* tensor-core path: FLOPs its tiles execute in a forward (0 on CUDA cores) */
    CostPeak decode_peak;/* where they run in a one-token call of the cached mode (flash-decoding: fp32) */
} LayerAttn;

/* Inference modes (docs/cost-model.md, "Modes"). */
typedef enum CostMode {
    MODE_NONOVERLAP,   /* windows of W tokens, each token scored once */
    MODE_SLIDING,      /* windows of W tokens moved by stride S, S new tokens scored per window */
    MODE_OVERLAP,      /* windows of W tokens overlapping by K, W - K new tokens scored per window */
    MODE_TOKEN,        /* token by token without a cache: token i re-runs its prefix (i tokens, at most W) */
    MODE_CACHED_TOKEN, /* token by token through the session's state (KV cache, PIA cache, memories): one
                          call of one token each; NAN for a recurrent model */
    MODE_COUNT         /* number of modes (not a mode) */
} CostMode;
const char *cost_mode_name(CostMode m);  /* "nonoverlap", "sliding", "overlap", "token", "token_cached" */

/* Per-token figures of one mode. */
typedef struct ModeCost {
    CostMode mode;           /* which mode */
    int param;               /* sliding: stride S; overlap: K; else 0 */
    double flops;            /* matrix-product FLOPs per scored token */
    double other_ops;        /* elementwise operations per scored token */
    double bytes;            /* bytes read + written per scored token (weights re-read each forward) */
    double attn_scores;      /* attention scores per scored token (all layers and heads) */
    double seconds;          /* roofline estimate per scored token on the chosen device (0 without one) */
} ModeCost;

/* Peak rates of one device for the roofline estimate (devices.c). */
typedef struct DeviceSpec {
    const char *name;        /* table key: "h100-sxm" */
    const char *title;       /* human name */
    double fp32;             /* peak FLOP/s, fp32 on CUDA cores */
    double tf32;             /* peak FLOP/s, tf32 tensor cores (dense) */
    double bf16;             /* peak FLOP/s, bf16 tensor cores (dense) */
    double fp16;             /* peak FLOP/s, fp16 tensor cores (dense) */
    double bandwidth;        /* DRAM bytes/s */
    int sm_regs;             /* 32-bit registers per SM */
    int sm_smem;             /* shared memory per SM, bytes */
    int sm_warps;            /* resident warps per SM */
    int sm_blocks;           /* resident blocks per SM */
} DeviceSpec;
/* The device named name, or NULL. */
const DeviceSpec *device_find(const char *name);
/* The table (ndevices entries) for listings and "did you mean". */
extern const DeviceSpec device_table[];
extern const int ndevices;
/* Roofline seconds of a cost on dev: max(compute, memory); GEMM FLOPs at the dtype's peak
 * (fp32: CUDA cores, as the runtime's CUBLAS_COMPUTE_32F), everything else at fp32. */
double roofline_seconds(const DeviceSpec *dev, const OpCost *c, bool gemm, DType dtype);
/* Roofline seconds of a cost whose matrix products run at `peak` (mma_flops in place of flops when set). */
double roofline_seconds_at(const DeviceSpec *dev, const OpCost *c, CostPeak peak);
/* Its two sides: compute (matrix products at `peak`, other ops at fp32) and memory seconds. */
void roofline_sides(const DeviceSpec *dev, const OpCost *c, CostPeak peak, double *compute, double *memory);
/* The peak FLOP/s of dev at `peak`. */
double device_peak(const DeviceSpec *dev, CostPeak peak);
/* The tensor-core peak of matrix products on operands of dtype t (fp32: CUDA cores). */
CostPeak dtype_peak(DType t);

/* What to evaluate (zero values: the defaults of docs/cost-model.md). */
typedef struct CostOptions {
    int window;              /* W: tokens per forward (0: the model's segment) */
    int stride;              /* sliding stride S (0: W/2) */
    int overlap;             /* overlap K when overlap_given */
    bool overlap_given;      /* false: K = W/4 */
    const DeviceSpec *device;/* roofline device; NULL: no time estimate */
} CostOptions;

/* The cost of one compiled model. */
typedef struct ModelCost {
    const char *name;        /* model name */
    int segment;             /* the model's segment length L */
    int window;              /* W used below */
    int layers;              /* layer count */
    OpCost forward;          /* one forward of W tokens, all live nodes */
    double flops_gemm;       /* part of forward.flops in weight GEMMs other than the logits */
    double flops_logits;     /* part of forward.flops in the vocabulary projection */
    double flops_attention;  /* part of forward.flops in q.k and p.v */
    double params;           /* parameters (weight elements) */
    double weight_bytes;     /* bytes of all weights in their storage dtypes */
    double peak_activation_bytes;  /* activation arena of the buffer plan (at T = segment) */
    double naive_activation_bytes; /* every activation in its own buffer (at T = segment) */
    double state_bytes;      /* persistent state (caches, memories, recurrence): 0, none exists yet */
    double forward_seconds;  /* roofline estimate of one forward (0 without a device) */
    const char *device;      /* device name of the estimate, NULL without one */
    LayerAttn *attn;         /* layers entries */
    CostGroup *groups;       /* distinct steps in program order */
    int ngroups;             /* count */
    ModeCost modes[MODE_COUNT]; /* per-token figures, indexed by CostMode */
    double derived_bytes;    /* tables the load program computes once per weights load, per model (not state) */
} ModelCost;

/* Cost of the live nodes of g for one call on T tokens (T >= 1). */
void cost_forward(const Graph *g, int T, OpCost *total);
/* Cost of one token at position C (0-based) of a session with a KV cache: every node at T = 1, attention
 * of that query over the keys 0..C its pattern lets it see (K/V read from the cache). */
void cost_cached_token(const Graph *g, int C, OpCost *total);
/* Bytes the generated kernels of one forward on T tokens read and write (*moved: every launch a node
 * needs, a matmul's epilogue kernel reading its GEMM result, bias and residual and writing the result
 * back), and the minimum (*minimum: the same without epilogue kernels, which a fused design does in
 * the GEMM). GEMM operand traffic is in neither; a plan's staging conversions are not counted. */
void cost_kernel_traffic(const Graph *g, int T, double *moved, double *minimum);
/*
 * One call's figures as the token modes add them up, node by node through the per-node rules, without
 * cost_model's closed forms (its brute-force oracle: tests/ir/cost_modes.c averages them): cached false,
 * a forward of t tokens (t >= 1); true, token t (0-based) of a session through its state. Seconds 0
 * without a device. False when out of memory or a pattern cannot be built.
 */
bool cost_call(Graph *g, const DeviceSpec *dev, bool cached, int t, ModeCost *out);
/*
 * The whole cost model of a graph after run_passes (allocated in g's arena).
 * Returns NULL with a message in why (window, stride or overlap out of range).
 */
ModelCost *cost_model(Graph *g, const CostOptions *o, char *why, size_t whylen);
/* Bytes an operation reads and writes, and its arithmetic intensity ((flops + other ops) / bytes; 0 without bytes). */
double op_cost_bytes(const OpCost *c);
double op_cost_intensity(const OpCost *c);
/* The JSON of `shortc compare --json` (cost_json.c; schema shortc.compare/1): one model's object (name, path,
 * sizes, forward, attention, modes, steps at dev), and the document around the models (an empty "models"
 * array to append them to). cJSON objects; the caller owns them. */
struct cJSON;
struct cJSON *cost_model_json(const ModelCost *m, const char *path, const DeviceSpec *dev);
struct cJSON *cost_compare_json(const DeviceSpec *dev);

/* ------------------------------------------------------------------ */
/* Static kernel facts (kernel_facts.c): text read from NVRTC's output  */
/* ------------------------------------------------------------------ */

/* Static count of instruction kinds in one kernel's PTX (not SASS: ptxas may still change it). */
typedef struct PtxMix {
    int mma;             /* tensor-core mma.sync / wmma.mma / wgmma */
    int ffma;            /* fma.rn.f32 */
    int hfma;            /* fma.rn.f16 / bf16 (scalar or x2) */
    int ld_global_32;    /* ld.global of at most 32 bits */
    int ld_global_64;    /* ld.global of 64 bits (.v2.f32, .f64 ...) */
    int ld_global_128;   /* ld.global of 128 bits (.v4.f32 ...) */
    int st_global_128;   /* st.global of 128 bits (.v4.u32 ...): vectorized stores */
    int ld_shared;       /* ld.shared */
    int bar;             /* bar.sync / barrier.sync */
} PtxMix;

/* Static count of instruction kinds in one kernel's SASS (cuobjdump -sass of the NVRTC cubin). */
typedef struct SassMix {
    int total;           /* instructions (NOP and the trailing branch-to-self excluded) */
    int mma;             /* tensor-core HMMA / HGMMA / IMMA */
    int ffma;            /* FFMA (fp32 fused multiply-add) */
    int hfma;            /* HFMA2 (fp16/bf16 pairs), not HFMA2 -RZ, RZ (a constant move) */
    int ld_global_16;    /* LDG of 8 or 16 bits (one half or bf16 element) */
    int ld_global_32;    /* LDG of 32 bits */
    int ld_global_64;    /* LDG.64 */
    int ld_global_128;   /* LDG.128 */
    int cp_async;        /* LDGSTS (cp.async global -> shared) */
    int ld_shared;       /* LDS */
    int ldsm;            /* LDSM (ldmatrix) */
    int st_shared;       /* STS */
    int shfl;            /* SHFL */
    int bar;             /* BAR (block barriers) */
    int ld_local;        /* LDL: spill reloads or stack arrays */
    int st_local;        /* STL: spill stores or stack arrays */
    int loop_mma;        /* the innermost loop holding an MMA (a backward branch's span, fewest instructions):
                            its MMAs; 0: no such loop */
    int loop_other;      /* its other instructions (NOP excluded) */
    int loop_local;      /* of which LDL/STL (local memory: spills inside the loop) */
} SassMix;

/* What ptxas reported for one function at one arch, and its PTX mix. */
typedef struct KernelFacts {
    char name[256];      /* symbol (extern "C" kernels: their plain name) */
    bool entry;          /* a __global__ kernel (else a non-inlined device function) */
    int arch;            /* caller's arch index or number */
    int regs;            /* registers per thread */
    int smem;            /* static shared memory, bytes */
    int barriers;        /* named barriers used */
    int spill_st;        /* spill stores, bytes */
    int spill_ld;        /* spill loads, bytes */
    int stack;           /* stack frame, bytes */
    PtxMix mix;          /* entries only: ptx_count_mix */
    bool has_sass;       /* sass was counted (a SASS disassembler was found) */
    SassMix sass;        /* entries only: sass_count_mix */
} KernelFacts;

/* Adds the functions of a `--ptxas-options=-v` log for `arch` to t (n in use, max room);
 * returns the number of entry functions seen, -1 on a line it cannot read or a full table. */
int ptxas_parse_log(const char *log, int arch, KernelFacts *t, int *n, int max);
/* Counts the instruction mix of each entry of t (n entries) in the PTX text. */
void ptx_count_mix(const char *ptx, KernelFacts *t, int n);
/* Counts the SASS mix of the entries of t at arch from `cuobjdump -sass` text (sets has_sass on
 * each kernel found); returns the number of kernels found, -1 when the text lists none. */
int sass_count_mix(const char *sass, int arch, KernelFacts *t, int n);
/* Resident blocks per SM of a kernel (regs per thread, smem bytes per block incl. dynamic,
 * block_threads) under dev's per-SM limits; 0 for an empty block. */
int occupancy_blocks(const DeviceSpec *dev, int regs, int smem, int block_threads);

/* ------------------------------------------------------------------ */
/* Transformer-XL relative attention and memories (mem_txl.c)          */
/* docs/attention/relative.md                                          */
/* ------------------------------------------------------------------ */

/* The parameters of one relative-attention call (plain arrays, fp32; no graph). */
typedef struct TxlAttnCall {
    int T;               /* new tokens (queries) */
    int P;               /* position of the first new token (tokens the session has seen) */
    int H, hd, D;        /* heads, head width, model width */
    int memory;          /* the layer's memory rows m */
    int clamp;           /* clamp_len: relative distances above it use R_clamp (0: no clamp) */
    bool same_length;    /* query i sees only keys j > i - memory (its last m positions, itself included) */
    const float *qkv;    /* [T, 3*H*hd]: q | k | v of the new tokens */
    const float *rel;    /* the relative keys W_r R_d [rel_rows, H*hd] (OP_REL_KEYS's derived table) */
    int rel_rows;        /* its rows: the distances it holds */
    const float *u, *v;  /* r_w_bias, r_r_bias: [H, hd] */
    const float *mem;    /* the memory ring [m, D]: position p at row p mod m (NULL when m == 0) */
    const float *w_qkv;  /* qkv_net for the memory rows: [D, 3*H*hd] (w_qkv_trans: [3*H*hd, D]) */
    bool w_qkv_trans;    /* w_qkv is stored [out, in] */
} TxlAttnCall;

/* Rows of memory a call at position P sees: min(P, m). */
int txl_memory_fill(int P, int memory);
/* Whether query position i sees key position j (j <= i, and memory/same_length rules). */
bool txl_visible(int i, int j, int P, int memory, bool same_length);
/* Channel c of the sinusoidal relative embedding R_d of width D: sin of the first D/2 channels, cos of the rest. */
double txl_rel_embedding(int d, int c, int D);
/* Rows of the relative-key table of a layer with `memory` rows: distances 0 .. memory + segment - 1, or
 * 0 .. clamp when clamp_len is smaller. */
int txl_rel_rows(int memory, int segment, int clamp);
/* The relative keys W_r R_d for d in [0, nd) from r_net w_r ([D, W], or [W, D] when trans): r [nd, W],
 * rounded to dt (accumulated in double); false when out of memory. */
bool txl_rel_keys_ref(const float *w_r, bool trans, int D, int W, int nd, float *r, DType dt);
/* The explicit relative attention (the reference): y [T, H*hd] in fp32, rounded to dt; false when out of memory
 * or when the table holds fewer distances than the call reads. */
bool txl_rel_attention_ref(const TxlAttnCall *c, float *y, DType dt);
/* Where txl_rel_attention_backward_ref adds the gradients (each zeroed by the caller or holding earlier sums). */
typedef struct TxlAttnGrads {
    double *dqkv;        /* [T, 3*H*hd] */
    double *drel;        /* [rel_rows, H*hd]: the relative keys' */
    double *du, *dv;     /* [H, hd]: r_w_bias's and r_r_bias's */
    double *dw_qkv;      /* w_qkv's, in its stored order (the memory rows' keys and values); NULL without memory */
} TxlAttnGrads;
/* The backward of txl_rel_attention_ref given dy [T, H*hd]. The memory rows are constants (Transformer-XL's
 * stop-gradient into the previous segment); their keys and values still train w_qkv. False: out of memory. */
bool txl_rel_attention_backward_ref(const TxlAttnCall *c, const double *dy, const TxlAttnGrads *g);
/* The backward of txl_rel_keys_ref: dw_r [D, W] (trans: [W, D]) += R_d^T dr[d] over the nd distances. */
void txl_rel_keys_backward_ref(bool trans, int D, int W, int nd, const double *dr, double *dw_r);
/* The memory write: rows max(0, T-m)..T-1 of x (positions P+t) into ring row (P+t) mod m, rounded to dt. */
void txl_mem_write_ref(float *ring, int memory, int D, const float *x, int T, int P, DType dt);
/* The positions a session of a Transformer-XL model may advance (memories are rings; nothing grows with P). */
#define TXL_POSITION_LIMIT (1 << 30)
/* Whether every layer of s uses relative attention (a Transformer-XL model). */
bool txl_model(const ModelSpec *s);
/* Op-table hooks of OP_REL_ATTENTION and OP_MEM_WRITE. */
int txl_rel_ninputs(const Node *n);
void txl_print_attrs(FILE *out, const Node *n);
size_t txl_key_attrs(char *buf, size_t n, size_t k, const Node *nd);
bool txl_shape_rel_attention(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen);
bool txl_shape_mem_write(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen);
bool emit_txl(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
void cost_rel_attention(const Graph *g, const Node *n, int T, struct OpCost *c);
void cost_mem_write(const Graph *g, const Node *n, int T, struct OpCost *c);
/* Op-table hooks of OP_REL_KEYS: the relative-key table, a derived tensor the load program computes. */
bool txl_shape_rel_keys(const Graph *g, const Node *n, int *rank, SymDim dims[MAX_RANK], char *why, size_t whylen);
bool interp_rel_keys(struct InterpRun *r, const Node *n, float *y, const Value *o);
bool emit_rel_keys(struct Emit *e, const Node *n, struct KSpec *ks, bool *launch);
void cost_rel_keys(const Graph *g, const Node *n, int T, struct OpCost *c);

/* ------------------------------------------------------------------ */
/* Reference interpreter (interp.c)                                    */
/* ------------------------------------------------------------------ */

/*
 * Runs the graph in plain C: fp32 storage rounded to each value's dtype on
 * store, double accumulation in reductions. weights[v] is the fp32 host copy
 * of weight value v (indexed by value id; NULL for non-weights), in the
 * value's logical shape and its storage `order`; for a derived value v,
 * its interp_derive array or NULL (then the forward computes it). logits: tokens x vocab.
 * Returns false (reported in d) on failure.
 */
bool interp_run(const Graph *g, Diag *d, const float *const *weights,
                const int32_t *tokens, int ntokens, float *logits);
/*
 * The derived tensors of g (Shortformer's positional tables), computed from weights (indexed as
 * for interp_run) as the plan's load program computes them once per weights load: derived (nvalues
 * entries, NULL on entry) receives for each live derived value a malloc'd fp32 array of
 * ir_state_numel(v) elements (caller frees). A forward handed them (weights[v] = derived[v], the
 * ref backend does) skips their nodes; one not handed them computes them itself. False (reported
 * in d, every entry NULL) on failure.
 */
bool interp_derive(const Graph *g, Diag *d, const float *const *weights, float **derived);
/*
 * interp_run, also handing out every computed value: values (nvalues
 * entries, all NULL on entry) receives for each value produced by a live
 * node a malloc'd fp32 array (caller frees) of ir_numel(v, ntokens)
 * elements (a derived table the run computed: ir_state_numel(v)) in its
 * stored shape and order, rounded to its dtype. Token ids
 * and weights are not copied (their entries stay NULL). On failure every
 * entry is NULL. values NULL: exactly interp_run.
 */
/*
 * Reverse mode: one forward of tokens[0..ntokens) from position 0 on a fresh session, then the loss
 * sum over t with targets[t] >= 0 of -log softmax(logits[t])[targets[t]] into *loss, and scale times its
 * gradient with respect to every weight value i added into wgrad[i] (ir_numel(v, 0) doubles, allocated by the
 * caller; NULL entries are skipped). Every live op must have a backward (op_table), else the error names the
 * op and its .arch line. Gradients accumulate in double. Returns false with the error reported in d.
 */
bool interp_grad(const Graph *g, Diag *d, const float *const *weights, const int32_t *tokens, int ntokens,
                 const int32_t *targets, double scale, double *loss, double **wgrad);
/* Whether a sequence longer than the segment can be differentiated segment after segment: the model carries
 * Transformer-XL memories and no other state (a KV cache's attention backward runs at position 0 only), and its
 * rings hold layer inputs. A pre-norm model's rings hold the normed rows, whereas the original code norms
 * cat(memory, h) inside the attention, so its LayerNorm is trained through the memory rows too: not
 * reproduced yet, such a model trains on sequences of one segment. */
bool interp_grad_segments(const Graph *g);
/* Whether interp_grad can differentiate g: every live op has a backward; else false with the first op that has
 * none reported in d (with its .arch line). */
bool interp_grad_supported(const Graph *g, Diag *d);
bool interp_run_values(const Graph *g, Diag *d, const float *const *weights, const int32_t *tokens, int ntokens,
                       float *logits, float **values);

/*
 * A session: the interpreter's state of one sequence (docs/ir.md, "State").
 * It holds every state value of the graph (KV caches: capacity rows each,
 * strided by the capacity, never by a call's T) and their fill, the number
 * of positions already committed. interp_forward continues the sequence at
 * P = fill: its queries are at positions P..P+T-1 and see the cached keys
 * plus the new ones; on success the new window is committed and fill grows
 * by T. interp_run is interp_forward on a fresh session.
 */
typedef struct InterpSession InterpSession;
/* interp_grad for one segment of a longer sequence: the forward runs on session s (at its position, after the
 * earlier segments; s moves on past these tokens) and the memory rings its ops read are constants
 * (Transformer-XL's stop-gradient), so a sequence is differentiated segment after segment on one session. */
bool interp_grad_on(InterpSession *s, Diag *d, const float *const *weights, const int32_t *tokens, int ntokens,
                    const int32_t *targets, double scale, double *loss, double **wgrad);
/* A fresh session (fill 0) for g; NULL when out of memory. The graph must outlive it. */
InterpSession *interp_session_new(const Graph *g);
void interp_session_free(InterpSession *s);
/* Starts over: fill 0 (the states' old rows are never read again). */
void interp_session_reset(InterpSession *s);
/* Positions committed so far (the P of the next forward). */
int interp_session_fill(const InterpSession *s);
/* Starts the session as HF TransfoXL does (init_mems): every memory ring holds its capacity of zero rows, and
 * the fill is the largest memory, so the next forward sees them as earlier tokens. false when out of memory. */
bool interp_session_zero_memories(InterpSession *s);
/* Tokens the next forward may take before the segment ends (a PIA cache slides only at segment ends, so a
 * call must not cross one; INT_MAX for other models). */
int interp_session_room(const InterpSession *s);
/* The most positions the session can hold (the smallest state capacity; the position limit without state). */
int interp_session_capacity(const InterpSession *s);
/* Bytes of state the session holds (each state value at its capacity, in its dtype). */
size_t interp_session_state_bytes(const InterpSession *s);
/* The state of value id (capacity rows in its stored order, fp32); NULL when it is not a state or not
 * written yet. *capacity receives its rows. */
const float *interp_session_state(const InterpSession *s, int value_id, int *capacity);
/*
 * One forward of ntokens (1..segment) continuing the session: logits
 * [ntokens, vocab]; values as in interp_run_values (a state value is handed
 * out as the window this call committed, [.., T, ..] dense). Going past the
 * session's capacity or the learned positions is an error (reported in d)
 * that leaves the session as it was.
 */
bool interp_forward(InterpSession *s, Diag *d, const float *const *weights, const int32_t *tokens, int ntokens,
                    float *logits, float **values);

#endif /* SHORTC_H */
