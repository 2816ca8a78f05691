/*
 * emit.h — private interface between emit.c (kernels and steps),
 * plan.c (the JSON plan) and template.c (templates/NAME.cuh). Nothing outside
 * these three files includes it; the public entry point is emit_cuda() in
 * shortc.h. See docs/emission.md.
 */
#ifndef SHORTC_EMIT_H
#define SHORTC_EMIT_H

#include "plan_schema.h"
#include "shortc.h"

/* ------------------------------------------------------------------ */
/* Growable text buffer (malloc'd)                                     */
/* ------------------------------------------------------------------ */

typedef struct StrBuf {
    char *p;      /* text, NUL-terminated when len > 0 */
    size_t len;   /* bytes in use */
    size_t cap;   /* bytes allocated */
    bool oom;     /* an allocation failed; further appends are ignored */
} StrBuf;

void sb_put(StrBuf *b, const char *s, size_t n);
void sb_puts(StrBuf *b, const char *s);
void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the text over (malloc'd, NUL-terminated, never NULL unless out of memory). */
char *sb_take(StrBuf *b, size_t *len);

/* ------------------------------------------------------------------ */
/* Templates (template.c)                                              */
/* ------------------------------------------------------------------ */

/* The table generated from templates/NAME.cuh by templates/embed.cmake. */
typedef struct ShortcTemplate {
    const char *name;   /* file name, e.g. "norm.cuh" */
    const char *text;   /* contents, NUL-terminated */
    size_t len;         /* bytes */
} ShortcTemplate;
extern const ShortcTemplate shortc_templates[];
extern const int shortc_ntemplates;

/* One placeholder value. */
typedef struct TmplKV {
    const char *key;    /* placeholder name without braces, e.g. "D" */
    const char *val;    /* replacement text; "0"/"1" for {{#if KEY}} flags */
} TmplKV;

#define TMPL_MAX_KV 32
/* A set of placeholder values (small: linear lookup). */
typedef struct TmplArgs {
    TmplKV kv[TMPL_MAX_KV]; /* the values, in the order first set */
    int n;                  /* entries in use (TMPL_MAX_KV + 1 after an overflow) */
} TmplArgs;

/* Sets (or replaces) a value; the strings must outlive the args (arena or literals). */
void tmpl_set(TmplArgs *t, const char *key, const char *val);
void tmpl_setf(Arena *a, TmplArgs *t, const char *key, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
const char *tmpl_get(const TmplArgs *t, const char *key);

/* The embedded template `name`, or NULL. */
const ShortcTemplate *template_find(const char *name);

/*
 * Instantiates template `name` with the given values, appending to out.
 * Syntax (docs/emission.md): `{{KEY}}` anywhere; lines holding only
 * `{{#if KEY}}`, `{{#else}}` or `{{#endif}}` select lines (KEY must be 0 or
 * 1; nesting allowed); lines starting with `//!` are template documentation
 * and are dropped. A `{{KEY}}` in emitted text without a value, a value no
 * line of the template refers to, a malformed or unbalanced directive, or
 * an unknown template is an internal error reported through d (returns false).
 */
bool template_render(Diag *d, const char *name, const TmplKV *kv, int nkv, StrBuf *out);
/* The same for template text given directly (`name` is only used in messages; tests use it). */
bool template_render_text(Diag *d, const char *name, const char *text, size_t len, const TmplKV *kv, int nkv,
                          StrBuf *out);

/* ------------------------------------------------------------------ */
/* Attention-engine hooks (emit_attn.c)                                */
/* ------------------------------------------------------------------ */

/* Kernel-name suffix of a kind's parameters ("" for causal; "_l<layer>" added for seeded kinds). */
char *attn_kernel_suffix(Arena *a, const AttnSpec *s, int layer);
/* Whether the tensor-core path (templates/attn_mma.cuh) knows every hook kind s needs: the kinds whose
 * pattern is visibility + key tiles (or gathered keys) and a zero score extra. A kind or a hook it does
 * not know (a new key source, a score term with its own tables or arguments) keeps the CUDA-core engine. */
bool attn_mma_kind(const AttnSpec *s);
/* Upper bound of the key-list entries attn_hooks would emit (0 for banded and residue kinds, which have none). */
double attn_list_bound(const AttnPattern *p, int qt, int kt, int nqt);
/* The HOOKS text of templates/attn_engine.cuh for pattern p and kernel `name`, tiles of qt queries and kt
 * keys over nqt absolute query tiles; a residue kind's calls that run the plain tile loop on the tensor-core
 * path: choice (NULL: none) (malloc'd; NULL when out of memory). */
char *attn_hooks(const AttnPattern *p, const char *name, int qt, int kt, int nqt, const AttnResidueChoice *choice);
/* The decode kernel's hooks (attn_decode.cuh VISIBLE): the seeded tables and NAME_visible only (one query
 * tests its keys; no key lists). Heap text (free), NULL when out of memory. */
char *attn_visible_hooks(const AttnPattern *p, const char *name);
/* ALiBi's slopes of heads heads as a CUDA initializer `{s_0f, s_1f, ...}` (compiler/rope.c alibi_slope), in a. */
char *attn_alibi_slopes(Arena *a, int heads);
/* Whether a sparse kind's one-query steps run on flash-decoding with its visibility hook (attn_decode.cuh
 * VISIBLE): every kind of the pattern table (attn_mma_kind) but causal, which needs no hook. */
bool attn_decode_kind(const AttnSpec *s);

/* ------------------------------------------------------------------ */
/* Emission results shared with plan.c                                 */
/* ------------------------------------------------------------------ */

/* Sizes that may depend on the run-time symbols (launch grids, GEMM sizes, int
 * arguments) are SymDims (common/shortc_common.h), the one symbolic dimension of
 * shortc, shared with the IR's value dims and the plan. */

typedef enum ArgKind {
    ARG_VALUE,   /* a pointer to a value (arena, weight or state) */
    ARG_ARENA,   /* a pointer into the arena's GEMM staging area (no value of its own) */
    ARG_INT,     /* a 32-bit int DIM (the token count, or a row count) */
    ARG_FLOAT,   /* a 32-bit float */
    ARG_CONST,   /* a pointer into a compile-time table of the plan's constants (value: its index) */
} ArgKind;

/* One kernel argument or GEMM operand. */
typedef struct StepArg {
    ArgKind kind;   /* which member below is meaningful */
    int value;      /* ARG_VALUE: value id; ARG_CONST: index in EmitState.consts */
    size_t offset;  /* ARG_ARENA: byte offset in the arena; ARG_CONST: in the table; ARG_VALUE: in the value */
    SymDim dim;     /* ARG_INT */
    double f;       /* ARG_FLOAT */
} StepArg;

typedef enum StepKind { STEP_LAUNCH, STEP_GEMM } StepKind;

#define STEP_MAX_ARGS MAX_NODE_INPUTS /* a recurrence update passes every pooled layer */
/* One step of the plan (docs/plan.md). */
typedef struct Step {
    StepKind kind;          /* launch or gemm */
    int node;               /* the node it implements */
    int line;               /* .arch line of the node (0 if unknown) */
    int layer;              /* node layer, -1 outside layers */
    /* STEP_LAUNCH */
    int kernel;             /* index in EmitState.kernels */
    SymDim grid[3];         /* grid size per axis */
    int block[3];           /* block size per axis */
    int smem;               /* dynamic shared memory bytes */
    StepArg *args;          /* kernel arguments in parameter order (nargs, in the arena) */
    int nargs;              /* entries in args */
    /* STEP_GEMM (cuBLAS, column-major: C = op(A) op(B)) */
    char transa, transb;    /* 'N' or 'T' */
    SymDim m, n, k;         /* op(A) is m x k, op(B) k x n, C m x n */
    StepArg a, b, c;        /* operands: ARG_VALUE or ARG_ARENA */
    SymDim lda, ldb, ldc;   /* leading dimensions */
    DType atype, btype, ctype; /* operand types (compute is always f32) */
    PlanEpilogue epi;       /* applied by cuBLASLt in the GEMM (PLAN_EPI_NONE: none) */
    bool tf32;              /* compute f32_fast_tf32 (`math tf32` and fp32 A and B) */
    StepArg bias;           /* the epilogue's bias (epilogues with a bias) */
    SymDim batch;           /* GEMMs run (1: cublasGemmEx; more: strided batched, no epilogue) */
    SymDim stride_a, stride_b, stride_c; /* elements between one batch entry's A, B, C and the next's */
} Step;

/* A compile-time table the plan carries in its "constants" (e.g. an attention engine's key-tile lists). */
typedef struct EmitConstant {
    const char *name;       /* what it is, for tools and messages */
    DType dtype;            /* DT_I32 or DT_F32 */
    const double *values;   /* its entries (integral for DT_I32) */
    int count;              /* entries in values */
} EmitConstant;

/* Everything plan.c needs from emit.c. */
typedef struct EmitState {
    Graph *g;               /* the graph being emitted */
    Diag *d;                /* where errors go */
    Arena *arena;           /* allocations (the graph's arena) */
    Kernel *kernels;        /* distinct kernels in order of first use */
    int nkernels;           /* entries in kernels */
    Step *steps;            /* in program order */
    int nsteps;             /* entries in steps */
    int *weight_index;      /* value id -> index in the plan's weights, -1 */
    int nweights;           /* entries in the plan's weights */
    int *state_index;       /* value id -> index in the plan's state, -1 */
    int nstate;             /* entries in the plan's state */
    const EmitConstant *consts; /* compile-time tables, uploaded once per model (plan "constants") */
    int nconsts;            /* entries in consts */
    int nlaunches;          /* launch steps */
    int ngemms;             /* gemm steps */
    size_t staging_offset;  /* GEMM staging area (fp32 copies for mixed-type GEMMs): arena offset */
    size_t staging_bytes[3];/* bytes of its A, B and C parts (0: unused); they follow each other */
    size_t arena_bytes;     /* the plan's arena size: the graph's plus the staging and decode areas */
    int nforward;           /* steps[0..nforward): program "forward" (T 1..segment); then "decode" (T = 1) */
    size_t decode_offset;   /* decode attention's partial softmaxes (attn_decode.cuh): arena offset */
    size_t decode_bytes;    /* their bytes per row of a batched decode step (0: no decode program) */
    int decode_batch;       /* most sequences one batched decode step runs (the decode program's "batch"; each
                               row its own sequence, docs/runtime.md "Batch"); 0: its steps cannot (a state or
                               position read by a kernel that takes one sequence: the memory family) */
    size_t seq_table;       /* the batched decode step's sequence table, decode_batch positions then
                               decode_batch sequence indices (int32): arena offset */
    int nloss_first;        /* steps[nloss_first..nsample_first): program "loss" (templates/loss.cuh); the
                               decode program is steps[nforward..nloss_first) */
    int nsample_first;      /* steps[nsample_first..nslide_first): program "sample" (templates/sample.cuh) */
    size_t sample_params;   /* the sample program's parameter block (RtSampleParams): arena offset */
    size_t loss_targets;    /* the loss program's targets (segment int32): arena offset */
    size_t loss_nll;        /* its per-row losses (segment fp32): arena offset */
    int *derived_index;     /* value id -> index in the plan's "derived" (tensors the load program computes), -1 */
    int nderived;           /* entries in the plan's derived */
    int nslide_first;       /* steps[nslide_first..nload_first): program "slide" (templates/attn_pia_slide.cuh:
                               a PIA cache keeps its last rows at a segment's end; none when empty) */
    int nload_first;        /* steps[nload_first..nsteps): program "load" (run once per weights load; none when
                               nload_first == nsteps) */
} EmitState;

/* ------------------------------------------------------------------ */
/* One attention kernel outside a model (attn_render.c)                */
/* ------------------------------------------------------------------ */

/* Shape of a kernel attn_render renders. */
typedef struct AttnRenderShape {
    int heads;    /* H */
    int hd;       /* HD */
    int qpw;      /* CUDA-core path: queries per warp (QT = 4 * qpw) */
    int kt;       /* keys per tile */
    int ntok;     /* positions the key lists and seeded tables cover */
    bool mma;     /* the tensor-core path (qpw ignored: QT = ATTN_MMA_QT) */
    const char *t_qkv, *t_kv, *t_out; /* element types (NULL: float) */
    bool thd;     /* KV as [2, tokens, heads, dim] (else [2, heads, tokens, dim]) */
    double scale; /* the scores' scale (0: 1/sqrt(hd)) */
    bool pia;     /* tensor-core path: position-infused (one more argument, the table [slots, 2*H*HD] of T_KV) */
    const char *t_xkv; /* tensor-core path: the recurrence's extra key (one more argument of this type); NULL: none */
    int residue_loop; /* residue kinds on the tensor-core path: 0 the cost model's per-call choice
                         (attn_residue_choice), 1 always residue grouping, 2 always the plain tile loop */
} AttnRenderShape;

/* Tile sizes of the engine's CUDA-core path for head width hd and `warps` warps (emit.c): keys per tile, queries
 * per warp and static shared memory, the largest that fit the static limit; false if none. */
bool attn_tiles(int hd, int warps, int *kt, int *qpw, int *smem);
/* Starts a source of rendered kernels: the prelude, the kinds' visibility (templates/attn_kinds.cuh, which the
 * hooks call), and with mma templates/mma_frag.cuh after them. */
void attn_render_source_start(StrBuf *b, bool mma);
/* Queries per block of a rendered kernel. */
int attn_render_qt(const AttnRenderShape *s);
/* Blocks along x for a call of T queries from position 0..: ceil(T/QT), on the tensor-core path one per query
 * tile the call touches at any P (attn_mma_grid_pad). */
int attn_render_grid(const AttnRenderShape *s, const AttnPattern *p, int T);
/* The c of that grid, ceil((T + c) / QT) blocks: 0 on the CUDA-core path. */
int attn_render_grid_pad(const AttnRenderShape *s, const AttnPattern *p);
/* Dynamic shared memory of a rendered kernel for pattern p (the tensor-core path's; 0: static only). */
int attn_render_smem(const AttnRenderShape *s, const AttnPattern *p);
/* Appends kernel `name` (templates/attn_engine.cuh or attn_mma.cuh; arguments qkv [T, 3*H*HD] (the queries
 * at columns h*HD), kv, y [T, H*HD], T, P, kv_rows) for pattern p to b; with count, the instrumented build
 * (NAME_tiles_loaded, and on the tensor-core path NAME_warp_tiles). False with d's error. */
bool attn_render(Arena *a, Diag *d, StrBuf *b, const AttnPattern *p, const char *name, const AttnRenderShape *s,
                 bool count);
/* The typed spec of kind `kind` with parameters names[i] = values[i] (i < n; the others their defaults) for
 * a model of `heads` heads, checked as sema checks `attention KIND key=value...` with its messages (unknown
 * kind or parameter, given twice, required, out of range, the kind's rules); false with err. */
bool attn_spec_from_pairs(AttnSpec *a, const char *kind, const char *const *names, const double *values, int n,
                          int heads, char *err, size_t errlen);

/* plan.c: the plan document (compact JSON, malloc'd) or NULL with an error in d. */
char *plan_build(const EmitState *st);

#endif /* SHORTC_EMIT_H */
