/*
 * rt_internal.h — what the runtime's source files share: the context and
 * its allocator, the plan as C structs (plan_load.c), the safetensors reader
 * and weight binding (weights.c), random weights (random_weights.c), the plan
 * executor and device backend table (exec.c), the reference backend and its
 * table (backend_ref.c) and the NVRTC compile path (backend_cuda.c). Not installed; the public API is shortrt.h.
 */
#ifndef RT_INTERNAL_H
#define RT_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fileio.h"
#include "plan_schema.h"
#include "rt_driver.h"
#include "shortc_common.h"
#include "shortrt.h"

/* ------------------------------------------------------------------ */
/* Context, allocation, errors (shortrt.c)                             */
/* ------------------------------------------------------------------ */

#define RT_ERR_MAX 8192
#define RT_ERR_LOC_MAX 1024 /* bytes of srt_context.err_file */

struct srt_context {
    srt_alloc_fn alloc;   /* host allocator (realloc semantics) */
    void *ud;             /* its user data */
    char err[RT_ERR_MAX]; /* last error message */
    char err_file[RT_ERR_LOC_MAX]; /* the .arch file of the last error's first compile diagnostic ("": none) */
    int err_line, err_column;      /* its 1-based line and column (0 when err_file is "") */
};

/*
 * Every runtime allocation goes through the context's hook. Blocks carry a
 * 16-byte header holding their size, so rt_free needs no size (the hook is
 * still told the exact old size). rt_alloc zero-fills.
 */
void *rt_alloc(srt_context *ctx, size_t n);
void *rt_realloc(srt_context *ctx, void *p, size_t n);
void rt_free(srt_context *ctx, void *p);
char *rt_strdup(srt_context *ctx, const char *s);
char *rt_strndup(srt_context *ctx, const char *s, size_t n);
/* True when s ends with suffix. */
bool rt_ends_with(const char *s, const char *suffix);
/* name without the "transformer." prefix HF checkpoints may carry. */
/* Tests of the tokenizer's BPE (tests/rt/test_bpe.c, with GPT-2's pass-by-pass loop as the oracle): the
 * merge rank of "left right" (-1: none); the merging of one word of byte-map characters given as n symbols
 * of lengths len[] (rewritten with the merged symbols' lengths), returning their count (0: out of memory). */
int32_t rt_tokenizer_merge_rank(const srt_tokenizer *t, const char *left, size_t llen, const char *right, size_t rlen);
size_t rt_tokenizer_bpe(srt_tokenizer *t, const char *word, uint32_t *len, size_t n);
const char *rt_strip_hf_prefix(const char *name);
/* Sets the context's message and returns st. */
srt_status rt_error(srt_context *ctx, srt_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
srt_status rt_verror(srt_context *ctx, srt_status st, const char *fmt, va_list ap);
/* Reads a whole file into ctx memory (NUL-terminated). SRT_ERR_IO with a message on failure. */
srt_status rt_read_file(srt_context *ctx, const char *path, char **data, size_t *len);
double rt_now_ms(void);

/* Unicode general categories L* and N* as sorted inclusive code point ranges (unicode_classes.c,
 * generated at build time by tools/gen_unicode_classes.py), for the tokenizer's pre-tokenizer, and the
 * Unicode version they come from ("14.0.0"). */
extern const char rt_unicode_version[];
/* NFC's data (unicode_classes.c): canonical combining classes {first, last, class}; full canonical
 * decompositions {code point, offset in rt_unicode_decomp_data, length}, Hangul syllables excepted;
 * primary composites {first, second, composite} sorted by the pair. */
extern const uint32_t rt_unicode_ccc[][3];
extern const int rt_unicode_ccc_count;
extern const uint32_t rt_unicode_decomp[][3];
extern const int rt_unicode_decomp_count;
extern const uint32_t rt_unicode_decomp_data[];
extern const uint32_t rt_unicode_compose[][3];
extern const int rt_unicode_compose_count;
extern const uint32_t rt_unicode_letters[][2];
extern const int rt_unicode_letters_count;
extern const uint32_t rt_unicode_numbers[][2];
extern const int rt_unicode_numbers_count;

/* ------------------------------------------------------------------ */
/* The plan (plan_load.c)                                               */
/* ------------------------------------------------------------------ */

/* A plan DIM: the shared symbolic dimension (SymDim), evaluated per call with symdim_eval and the call's
 * run-time scalars (SymEnv: T, P, fill, B). */
typedef SymDim RtDim;

typedef enum RtRefKind {
    RT_REF_ARENA,     /* the session's activation arena */
    RT_REF_WEIGHT,    /* a weight of the model's weight block */
    RT_REF_STATE,     /* a state tensor of the session */
    RT_REF_CONST,     /* a table of the model's constants block */
    RT_REF_DERIVED,   /* a tensor of the model's derived block (computed by the load program) */
} RtRefKind;
typedef struct RtRef {
    RtRefKind kind;   /* which base */
    int index;        /* weight, state, constant or derived index */
    int64_t offset;   /* bytes from the base */
} RtRef;

typedef enum RtArgKind { RT_ARG_REF, RT_ARG_INT, RT_ARG_FLOAT } RtArgKind;
typedef struct RtArg {
    RtArgKind kind;   /* which member below */
    RtRef ref;        /* RT_ARG_REF */
    RtDim dim;        /* RT_ARG_INT */
    float f;          /* RT_ARG_FLOAT */
} RtArg;

typedef enum RtStepOp { RT_STEP_LAUNCH, RT_STEP_GEMM } RtStepOp;
typedef struct RtStep {
    RtStepOp op;          /* launch or gemm */
    int line;             /* .arch line (0 if unknown) */
    int layer;            /* layer or -1 */
    int node;             /* IR node it implements (plan field "node"; -1 if absent) */
    /* launch */
    int kernel;           /* index into RtPlan.kernels */
    RtDim grid[3];        /* blocks per grid */
    RtDim block[3];       /* threads per block (constants) */
    RtDim smem;           /* dynamic shared memory bytes */
    RtArg *args;          /* kernel arguments in order */
    int nargs;            /* count */
    /* gemm (cuBLAS semantics, column-major) */
    bool transa, transb;  /* true: CUBLAS_OP_T */
    RtDim m, n, k;        /* op(A) is m x k, op(B) k x n, C m x n */
    RtDim lda, ldb, ldc;  /* leading dimensions */
    RtDim strideA, strideB, strideC; /* elements between batch entries */
    RtDim batch;          /* 1: cublasGemmEx, else cublasGemmStridedBatchedEx */
    float alpha, beta;    /* C = alpha op(A) op(B) + beta C */
    RtRef A, B, C;        /* operands */
    DType atype, btype, ctype; /* operand storage types */
    PlanEpilogue epilogue; /* applied in the GEMM by cuBLASLt (PLAN_EPI_NONE: cublasGemmEx) */
    RtRef bias;           /* the epilogue's bias, m elements of ctype (epilogues with a bias) */
    bool tf32;            /* compute "f32_fast_tf32": CUBLAS_COMPUTE_32F_FAST_TF32 (inputs rounded to TF32) */
} RtStep;

typedef struct RtPlanWeight {
    char *name;           /* name in the weight file (without "transformer.") */
    int rank;             /* dimensions */
    int64_t shape[MAX_RANK];       /* stored shape (device order) */
    int64_t file_shape[MAX_RANK];  /* shape in the weight file */
    DType dtype;          /* stored dtype */
    DType round;          /* dtype its values are rounded to (plan "round"; = dtype when absent): a weight
                             held wider than its layout, converted once at load */
    bool transpose;       /* 2-D: the file holds the transpose of the stored order */
    bool optional;        /* may be missing from a file (then zero) */
    size_t count;         /* elements */
    size_t bytes;         /* stored bytes */
    size_t offset;        /* offset in the device weight block (256-aligned) */
} RtPlanWeight;

typedef struct RtPlanState {
    char *name;           /* e.g. kv.0 */
    int role;             /* index in plan_state_roles ("none", "kv_cache", ...) */
    int rank;             /* dimensions of shape */
    int64_t shape[MAX_RANK]; /* its shape at capacity */
    int capacity;         /* rows (positions) it holds */
    int keep;             /* a sliding cache: the rows it keeps when a segment ends (plan "keep"); -1: all */
    size_t bytes;         /* device bytes */
    DType dtype;          /* element type */
    bool persistent;      /* survives between forwards; zeroed by reset */
} RtPlanState;

/* A compile-time table (plan "constants"), uploaded once per model. */
typedef struct RtPlanConst {
    char *name;           /* what it is */
    DType dtype;          /* DT_I32 or DT_F32 */
    int count;            /* entries */
    void *data;           /* count entries of dtype, as uploaded */
    size_t bytes;         /* count * 4 */
    size_t offset;        /* offset in the device constants block (256-aligned) */
} RtPlanConst;

/* A derived tensor (plan "derived"): computed from the weights by the load program once per weights load,
 * held once per model and read by every session. */
typedef struct RtPlanDerived {
    char *name;           /* e.g. pia.0 */
    int rank;             /* dimensions of shape */
    int64_t shape[MAX_RANK]; /* its shape */
    DType dtype;          /* element type */
    size_t bytes;         /* device bytes */
    size_t offset;        /* offset in the device derived block (256-aligned) */
} RtPlanDerived;

/* The parameter block of the plan's "sample" program, as templates/sample.cuh's shortc_sample_params lays it
 * out (32 bytes): the runtime writes it before the launch, the kernel writes token and state back. */
typedef struct RtSampleParams {
    uint64_t state;       /* the sampler's splitmix64 state (in), advanced by the draw (out) */
    double temperature;   /* 0: greedy */
    double top_p;         /* nucleus mass */
    int32_t top_k;        /* tokens kept (0: all) */
    int32_t token;        /* out: the token drawn */
} RtSampleParams;

/* A named program: the steps run for a call whose T lies in [tmin, tmax]. */
typedef struct RtProgram {
    char *name;           /* e.g. "forward", "decode" */
    int tmin, tmax;       /* the T it runs */
    int first;            /* index of its first step in RtPlan.steps */
    bool on_request;      /* "loss", "sample" or "load": run by srt_forward_nll / srt_forward_sample / a weights
                             load, never chosen by T */
    int nsteps;           /* its steps */
} RtProgram;

enum { RT_RESIDUE_RUNS = 8 }; /* the most runs of a plan's residue_plain (compiler: ATTN_RESIDUE_RANGES) */
typedef struct RtPlanKernel {
    char *name;           /* extern "C" symbol */
    bool barriers;        /* uses __syncthreads / warp intrinsics */
    int line;             /* .arch line of its first use */
    int uses;             /* launches per forward */
    RtArgKind *params;    /* parameter kinds in order (RT_ARG_REF: a pointer) */
    int nparams;          /* entries in params */
    bool residue;         /* a residue kind's tensor-core attention kernel (plan "residue_plain") */
    int nplain;           /* residue: runs of T whose calls take the plain tile loop (the cost model's choice) */
    int plain_lo[RT_RESIDUE_RUNS], plain_hi[RT_RESIDUE_RUNS]; /* residue: each run's first and last T */
} RtPlanKernel;

typedef struct RtPlan {
    char *model;          /* model name */
    char *source;         /* .arch it was compiled from ("" if absent) */
    int vocab;            /* logits width */
    int d_model;          /* model width */
    int n_heads;          /* attention heads */
    int n_layers;         /* layers */
    int segment;          /* max tokens per forward */
    bool recurrent;       /* a persistent state of role "recurrent": each forward is one window at P = 0 that
                             reads and updates it (docs/attention/recurrence.md); windows mode carries it */
    bool memories;        /* a persistent state of role "memory" (Transformer-XL): bounded rings, positions
                             accumulate; the session carries state (srt_model_info.carries_state) */
    int overlap;          /* config "overlap": a recurrent model's windows overlap (0 when absent) */
    size_t arena_bytes;   /* activation arena size */
    RtRef tokens;         /* where token ids go (int32) */
    RtRef logits;         /* where T x vocab fp32 logits are read */
    RtPlanWeight *weights; /* weights in plan order */
    int nweights;         /* count */
    size_t weight_bytes;  /* device weight block size */
    RtPlanState *state;   /* per-session tensors */
    int nstate;           /* count */
    size_t state_bytes;   /* their total */
    int keep;             /* the least `keep` of its sliding states: rows a session keeps when a segment ends; -1: none */
    RtPlanConst *consts;  /* compile-time tables */
    int nconsts;          /* count */
    size_t const_bytes;   /* device constants block size */
    RtPlanDerived *derived; /* tensors the load program computes (NULL when none) */
    int nderived;         /* count */
    size_t derived_bytes; /* device derived block size (the sum of their bytes, each 256-aligned) */
    int load_program;     /* index of the program "load" (run once per weights load), -1: none */
    bool pre_layernorm;   /* config: LayerNorm before attention (a zero layer input is then the norm's bias) */
    int slide_program;    /* index of the program "slide" (run when a segment ends: PIA caches keep their last
                             rows), -1: none */
    int64_t scalar_min[4], scalar_max[4]; /* ranges of T, P, fill, B (plan_scalar_names order) */
    RtProgram *programs;  /* named programs; their steps are consecutive ranges of steps */
    int nprograms;        /* count */
    int loss_program;     /* index of the program "loss" (per-row losses from the logits), -1: none */
    RtRef loss_targets;   /* where that program reads segment int32 targets (plan "loss") */
    RtRef loss_nll;       /* where it writes segment fp32 losses */
    int sample_program;   /* index of the program "sample" (the next token drawn on the device), -1: none */
    RtRef sample_params;  /* its parameter block (RtSampleParams) */
    int decode_batch;     /* most sequences one batched decode step runs (plan "batch"); 0: none */
    RtRef seq_table;      /* the step's sequence table: decode_batch int32 positions, then as many sequence indices */
    int decode_program;   /* with decode_batch: the index of the program "decode" */
    RtPlanKernel *kernels; /* distinct kernels */
    int nkernels;         /* count */
    RtStep *steps;        /* every program's steps, program after program */
    int nsteps;           /* count */
    int nlaunches;        /* launch steps of the program a whole segment runs */
    int ngemms;           /* gemm steps of that program */
    int max_args;         /* most arguments of any launch */
} RtPlan;

/* Finds the plan comment in an emitted .cu. Returns SRT_ERR_FORMAT if absent. */
srt_status rt_plan_extract(srt_context *ctx, const char *what, const char *cu, size_t len, const char **json,
                           size_t *json_len);
/* Parses and validates plan JSON into p (all memory from ctx). what names the file in messages. */
srt_status rt_plan_parse(srt_context *ctx, const char *what, const char *json, size_t len, RtPlan *p);
void rt_plan_free(srt_context *ctx, RtPlan *p);
/* The program a call of T tokens runs: the narrowest range holding T (the first such); every T from 1 to the
 * segment has one (checked at load). */
const RtProgram *rt_plan_program(const RtPlan *p, int T);
/* The plan weight an IR weight value of this name and stored shape binds to: the entry of that name and shape
 * (a name may have two views, docs/plan.md), else the first of that name (callers check the size), else -1. */
int rt_plan_weight_index(const RtPlan *p, const char *name, int rank, const SymDim *dims);

/* ------------------------------------------------------------------ */
/* Random weights (random_weights.c)                                             */
/* ------------------------------------------------------------------ */

/* RtRng, rt_splitmix64, rt_rng_uniform, rt_rng_normal: common/shortc_common.h. */
/* Fills a tensor named name (file shape, row-major) the way srt_model_random_weights does. */
void rt_random_tensor(uint64_t seed, const char *name, int rank, const int64_t *shape, float *out, size_t count);

/* ------------------------------------------------------------------ */
/* Safetensors and weights (weights.c)                                  */
/* ------------------------------------------------------------------ */

typedef enum RtStDtype {
    ST_F64, ST_F32, ST_F16, ST_BF16, ST_I64, ST_I32, ST_I16, ST_I8, ST_U8, ST_BOOL,
    ST_U16, ST_U32, ST_U64, ST_F8_E4M3, ST_F8_E5M2, ST_COUNT
} RtStDtype;
const char *rt_st_dtype_name(RtStDtype t);

#define RT_ST_MAX_RANK 8
typedef struct RtStTensor {
    char *name;           /* as in the file */
    RtStDtype dtype;      /* element type */
    int rank;             /* dimensions */
    int64_t shape[RT_ST_MAX_RANK]; /* sizes */
    size_t begin, end;    /* data_offsets, relative to the data section */
} RtStTensor;

typedef struct RtSafetensors {
    srt_context *ctx;     /* owner of the allocations */
    char *path;           /* for messages */
    void *map;            /* the whole file, mmap'd read-only (NULL for memory) */
    size_t map_len;       /* its length */
    const unsigned char *data;  /* data section (after the header) */
    size_t data_len;      /* its length */
    RtStTensor *tensors;  /* header entries (without __metadata__) */
    int ntensors;         /* count */
    RtStTensor **by_name; /* the tensors sorted by name without the "transformer." prefix (rt_st_find) */
    unsigned char *owned; /* the data section when it is a copy of a caller's tensors (rt_st_from_tensors) */
} RtSafetensors;

/* Opens and validates a safetensors file. */
srt_status rt_st_open(srt_context *ctx, const char *path, RtSafetensors *st);
/* Same, from bytes in memory (not copied; tests and tools). */
srt_status rt_st_open_memory(srt_context *ctx, const char *what, const void *bytes, size_t len, RtSafetensors *st);
/* The same, from a caller's tensors (srt_model_load_tensors): names, dtypes and shapes checked as a file's
 * header is, the data copied into one owned section. */
srt_status rt_st_from_tensors(srt_context *ctx, const srt_tensor *tensors, int n, RtSafetensors *st);
void rt_st_close(RtSafetensors *st);
/* Finds name, also trying it with and without the "transformer." prefix. */
const RtStTensor *rt_st_find(const RtSafetensors *st, const char *name);

/*
 * Weight values for one plan, as fp32 arrays in the stored order, already
 * rounded to each weight's stored dtype (what every backend computes with).
 * vals[i] belongs to plan->weights[i] (allocated here; on failure none are).
 * A NaN or infinite value is an error naming the tensor and index unless allow_nonfinite;
 * a tensor of the file no weight uses (but for known buffers) is an error listing every such tensor with its
 * shape, unless allow_unused.
 */
srt_status rt_weights_from_st(srt_context *ctx, const RtPlan *plan, const RtSafetensors *st, bool allow_nonfinite,
                              bool allow_unused, float **vals);
/* When the directory of the weights file `path` holds a config.json (a HuggingFace checkpoint), the sizes it
 * states — layers, heads, width, vocabulary, tying — checked against plan; SRT_ERR_WEIGHTS listing every
 * difference. SRT_OK without a config.json or when it states none of them. */
srt_status rt_weights_check_config(srt_context *ctx, const RtPlan *plan, const char *path);
srt_status rt_weights_random(srt_context *ctx, const RtPlan *plan, uint64_t seed, float **vals);
/* Writes the weights rt_weights_random draws for seed to path as an F32 safetensors file in the file shapes
 * (an output of fileio.h: atomic, no link followed). */
srt_status rt_weights_random_save(srt_context *ctx, const RtPlan *plan, uint64_t seed, const char *path);
/* Encodes an fp32 array into dtype storage (f16/bf16 round to nearest even, rt_half.h). */
void rt_encode(DType t, const float *src, size_t n, void *dst);

/* ------------------------------------------------------------------ */
/* Models and sessions (shortrt.c, exec.c, backend_ref.c)               */
/* ------------------------------------------------------------------ */

typedef struct RtRefModel RtRefModel;   /* backend_ref.c */
typedef struct RtBackend RtBackend;     /* a backend's functions (below) */

struct srt_model {
    srt_context *ctx;         /* owner: allocator and error message */
    srt_backend backend;      /* backend in use (never AUTO once open) */
    const RtBackend *ops;     /* the backend's functions (every call goes through them) */
    char *path;               /* as opened */
    char *plan_json;          /* the plan text (NUL-terminated) */
    RtPlan plan;              /* plan_json parsed */
    bool weights_loaded;      /* a load or random-weights call succeeded (srt_forward needs one) */
    srt_session *sessions;    /* open sessions (closed with the model) */
    RtRefModel *ref;          /* reference backend: the compiler's IR and weights (NULL otherwise) */
    /* device backends (sim, cuda) */
    RtDriver drv;
    bool have_driver;         /* drv filled */
    CUdevice dev;             /* device 0 */
    CUcontext cuctx;          /* retained primary context (NULL if none) */
    CUmodule module;          /* the loaded kernels */
    CUfunction *funcs;        /* per plan kernel */
    int *smem_set;            /* per plan kernel: dynamic smem limit raised to (bytes) */
    int smem_optin;           /* the device's most shared memory per block with opt-in (bytes) */
    cublasHandle_t blas;      /* cuBLAS handle (set to the session's stream per forward) */
    cublasLtHandle_t blaslt;  /* cuBLASLt handle (GEMMs with an epilogue; the stream is passed per call) */
    CUdeviceptr dweights;     /* weight block (plan.weight_bytes) */
    CUdeviceptr dconsts;      /* constants block (plan.const_bytes; 0 when there are none) */
    CUdeviceptr dderived;     /* derived block (plan.derived_bytes; 0 when there are none), written by the load program */
    int load_runs;            /* times the derived tensors were computed (once per weights load; srt_model_info) */
    int arch;                 /* compute capability * 10 */
    double compile_ms;        /* kernel build time (0 on a cache hit) */
    int cache_hit;            /* module image came from the cache */
    char cache_note[1536];    /* why the kernel cache was not used or written ("" if it was) */
    bool sync_steps;          /* $SHORTC_SYNC_STEPS: synchronize after every step */
    bool graphs;              /* programs run as CUDA graphs (exec.c): the driver has them, $SHORTC_NO_GRAPHS
                                 is unset or 0, and steps are not synchronized one by one */
    bool *reads_position;     /* per plan program: a DIM of its steps reads P or fill (its graphs are keyed by P) */
    int *logits_gemm;         /* per plan program: the index of its last step when that is the GEMM writing the
                                 plan's logits, one column per token (exec.c logits_gemm_setup), else -1 */
    bool allow_nonfinite;     /* srt_options.allow_nonfinite_weights */
    bool allow_unused;        /* srt_options.allow_unused_weights */
};

/* A session's CUDA graph of one program (exec.c run_graph): its steps for one T, captured on the second
 * call in a row with that T, replayed by later ones (updated in place when P changes). */
typedef struct RtGraphSlot {
    CUgraphExec exec;         /* the instantiated graph (NULL: none) */
    int T;                    /* the T exec runs */
    long P;                   /* the P exec's parameters were captured at (-1: the steps do not read P or fill) */
    int logits_from;          /* the session's logits_from at the capture (its logits GEMM's rows) */
    bool seen;                /* the previous call of the program ran its steps one by one, with T seen_T */
    int seen_T;               /* that T */
} RtGraphSlot;

/* A session's per-step timing (srt_session_set_profiling): while on, programs run step by step (no graphs)
 * with an event recorded before and after each step; the elapsed times are summed per plan step. */
typedef struct RtProfile {
    CUevent *begin, *end;     /* per plan step: recorded before / after its last queued run */
    bool *queued;             /* per plan step: recorded in the program now running (read after its sync) */
    double *ms;               /* per plan step: device milliseconds summed over its runs */
    int *runs;                /* per plan step: runs timed since profiling was switched on */
} RtProfile;

struct srt_session {
    srt_model *m;             /* owner */
    srt_session *next;        /* in m->sessions */
    int batch;                /* sequences the session holds (srt_session_create) */
    srt_session **lanes;      /* batch > 1: one backend session per sequence (this one then holds no backend
                                 state itself); NULL for batch 1 */
    struct InterpSession *ref_state; /* ref backend: the interpreter's session (KV caches, fill); NULL otherwise */
    int32_t *history;         /* sim, cuda on a plan without persistent state: the tokens of the sequence so far
                                 (plan.segment entries), which a continuing forward re-runs (exec.c) */
    int nhistory;             /* sim, cuda: the position of the next forward */
    int nsegment;             /* sim, cuda, a plan with a slide program: tokens of the current segment so far */
    bool mem_zeros;           /* srt_session_set_mem_init ZEROS: a reset starts the memories full of zero rows */
    CUdeviceptr arena;        /* activations */
    CUdeviceptr *state;       /* per plan state tensor */
    CUstream stream;          /* where steps are queued */
    bool have_stream;         /* stream was created */
    void **params;            /* kernelParams (plan.max_args): params[a] points at vals[a], set once */
    union RtParamVal {
        CUdeviceptr p;        /* REF */
        int32_t i;            /* int */
        float f;              /* float */
    } *vals;                  /* argument values params point at */
    RtGraphSlot *graphs;      /* per plan program (NULL when the model runs no graphs) */
    char graph_note[512];     /* why this session stopped capturing graphs ("" while it captures) */
    size_t bytes_to_host;     /* sim, cuda: bytes its forwards copied from the device (srt_session_bytes_to_host) */
    srt_call_counts calls;    /* sim, cuda: its driver calls (srt_session_call_counts; exec.c counts them) */
    bool capturing;           /* sim, cuda: its steps are being recorded into a graph (launches not counted) */
    int logits_from;          /* sim, cuda: during a forward, the first logits row anything reads: the logits GEMM
                                 computes rows logits_from..T-1 only (0: all; T: none) */
    RtProfile *profile;       /* sim, cuda: per-step timing while srt_session_set_profiling is on; NULL when off */
    struct RtLtPlan *lt_plans;/* sim, cuda: RT_LT_WAYS per plan step, the cuBLASLt objects of an epilogue GEMM
                                 (gemm_lt.c); NULL when the plan has no such step */
    CUdeviceptr lt_workspace; /* cuda: the cuBLASLt workspace its GEMMs share (stream-ordered); 0 on sim */
    size_t lt_workspace_bytes;/* its size */
    const srt_session *lane0; /* a batch session's sequence after the first: the first, whose activation arena and
                                 cuBLASLt workspace it uses (sequences run one after another, each forward ending
                                 in a synchronisation) and, on a plan with batched decode steps, whose state
                                 blocks hold its state; NULL: it owns them */
    int lane_index;           /* its sequence in a batch session (0 otherwise) */
    int lane_count;           /* the batch session's sequences (1 for a single-sequence session) */
    bool state_shared;        /* its state[i] lie in blocks of lane_count sequences' states, end to end (a batch
                                 session on a plan with batched decode steps); only lane 0 frees them */
};

/* What a device forward hands back from its rows first_row.. (exec.c). */
typedef struct RtRowsOut {
    float *logits;            /* the rows' logits ((T - first_row) x vocab), or NULL */
    const int32_t *targets;   /* with nll: the rows' targets (< 0: not scored) */
    float *nll;               /* the rows' losses from the plan's loss program, or NULL */
    srt_sampler *sampler;     /* draw the next token from the last row with the plan's sample program, or NULL */
    int32_t *token;           /* with sampler: the token drawn */
} RtRowsOut;

/*
 * A backend: what srt_model_open, the weight loaders, sessions and
 * srt_forward call, so shortrt.c routes every call through the model's table
 * and never asks which backend it runs. rt_backend_ref (backend_ref.c) runs
 * the compiler's IR in the interpreter; rt_backend_device (exec.c) runs the
 * plan through an RtDriver (sim or cuda, picked at open).
 */
struct RtBackend {
    bool keeps_ir;        /* needs the compiler's IR: compiling an .arch keeps it in m->ref */
    /* After the plan is parsed (m->plan, m->plan_json; m->ref when keeps_ir and the model is an .arch). */
    srt_status (*open)(srt_model *m, const srt_options *opt, const char *cu, size_t cu_len);
    /* Frees what open made; also after a failed open. */
    void (*close)(srt_model *m);
    /* Weight values per plan weight (rt_weights_from_st); takes vals and every vals[i], also on failure. */
    srt_status (*install_weights)(srt_model *m, float **vals);
    /* A session's state; session_destroy also cleans up after a failed create. */
    srt_status (*session_create)(srt_session *s);
    void (*session_destroy)(srt_session *s);
    /* Back to position 0 with every state fill 0. */
    srt_status (*session_reset)(srt_session *s);
    /* Continues the sequence with tokens (already validated); logits gets rows first_row..ntokens-1. */
    srt_status (*forward)(srt_session *s, const int32_t *tokens, int ntokens, int first_row, float *logits);
    /* Continues the sequence like forward, handing back the losses of rows first_row..ntokens-1 on targets
     * (already validated; < 0: 0), computed where the logits are (every backend has one). */
    srt_status (*forward_nll)(srt_session *s, const int32_t *tokens, int ntokens, int first_row,
                              const int32_t *targets, float *nll);
    /* Continues the sequence like forward and draws the next token from the last row with smp, where the
     * logits are (every backend has one). */
    srt_status (*forward_sample)(srt_session *s, const int32_t *tokens, int ntokens, srt_sampler *smp,
                                 int32_t *token);
    /* A batched decode step, or NULL (the sequences then run one after another): rows r < n of one pass, row r
     * the next token tokens[r] of sequence seqs[r] of the batch session whose lane 0 is first (lanes[r] that
     * sequence's session; checked); logits[r] gets its logits row, or (with samplers) drawn[r] its draw. */
    srt_status (*decode_batch)(srt_session *first, srt_session *const *lanes, const int *seqs, int n,
                               const int32_t *tokens, float *const *logits, srt_sampler *const *samplers,
                               int32_t *drawn);
    /* Bytes the session keeps between forwards. */
    size_t (*session_state_bytes)(const srt_session *s);
    /* Position of the session's next token. */
    int (*session_position)(const srt_session *s);
    /* Bytes of state one session of the model keeps (srt_model_info.state_bytes). */
    size_t (*model_state_bytes)(const srt_model *m);
    /* Positions a session holds before it must be reset. */
    int (*max_positions)(const srt_model *m);
    /* A continuing forward runs only its tokens against the state (srt_model_info.kv_cache). */
    bool (*kv_cache)(const srt_model *m);
    /* Rows a session keeps when a segment ends, when its state slides (a PIA cache), -1 when positions
     * accumulate (srt_model_info.carries_state). */
    int (*state_keep)(const srt_model *m);
};

extern const RtBackend rt_backend_ref;    /* backend_ref.c */

/* The checks srt_forward_rows makes (one-sequence session, token ids, row, weights), with its messages. */
srt_status rt_check_forward(srt_session *s, const int32_t *tokens, int ntokens, int first_row);
/* -log softmax(row[vocab])[target] (natural log, accumulated in double): the host's loss (modes.c). */
float rt_row_nll(const float *row, int vocab, int32_t target);
/* A backend's forward_nll from its forward: the rows come to the host and their losses are computed there
 * (rt_row_nll; a target < 0 gives 0). The ref backend's, and the device's for a plan without a loss program. */
srt_status rt_forward_nll_on_host(srt_session *s, const int32_t *tokens, int ntokens, int first_row,
                                  const int32_t *targets, float *nll);
/* One piece of a call that runs in pieces ending at segment ends (Shortformer's cache slides there): tokens
 * [done, done + n) of the call, rows from `first` of the piece wanted, at row `skip` of the caller's output
 * (both backends split a call this way: exec.c's device_run_split, backend_ref.c's ref_forward). */
typedef struct RtPiece {
    int n;     /* tokens in the piece: min(room, what is left) */
    int first; /* first wanted row within the piece; >= n: none */
    int skip;  /* the caller's output row that piece row `first` goes to (valid when first < n) */
} RtPiece;
/* The piece starting at token done of ntokens when the segment has room tokens left (room >= 1). */
static inline RtPiece rt_piece(int done, int ntokens, int room, int first_row) {
    RtPiece p = {.n = ntokens - done < room ? ntokens - done : room, .first = first_row > done ? first_row - done : 0};
    p.skip = done + p.first - first_row;
    return p;
}
/* A backend's forward_sample from its forward: the last row comes to the host and srt_sampler_next draws
 * (sample.c). The ref backend's, and the device's for a plan without a sample program. */
srt_status rt_forward_sample_on_host(srt_session *s, const int32_t *tokens, int ntokens, srt_sampler *smp,
                                     int32_t *token);
/* The sample program's parameters for the sampler's next draw (its settings and stream state). */
void rt_sampler_params(const srt_sampler *smp, RtSampleParams *p);
/* The error of every backend when the row a token is drawn from holds a non-finite logit (the first, i). */
srt_status rt_nonfinite_logit(srt_context *ctx, int i);
/* After the device drew with rt_sampler_params' block: advances the host's stream as the kernel did. */
void rt_sampler_drew(srt_sampler *smp);
/* The vocabulary the sampler was made for. */
int rt_sampler_vocab(const srt_sampler *smp);
extern const RtBackend rt_backend_device; /* exec.c: sim and cuda */

/* Runs step i of the plan alone for T tokens at position P, exactly as a forward does, and synchronizes
 * (checking tools: tests/suite/step_check.c). The token ids and the step's inputs (arena and state) must already
 * be in place. */
srt_status rt_exec_step(srt_session *s, int i, int T, int P);
/* Per-step timing of a device session (exec.c): on allocates the events (off frees them); step_time reads
 * step i's sums. */
srt_status rt_exec_set_profiling(srt_session *s, bool on);
void rt_exec_step_time(const srt_session *s, int i, srt_step_time *out);

/*
 * Compiles an .arch through the compiler library: the file at path, or text[text_len] named path when text is
 * not NULL. On success fills the emitted CUDA and plan (ctx memory). keep: for the reference backend, the
 * compiler state (arena, diag, graph) is kept in *ref. Compiler diagnostics become the context's error
 * message, and the first one's position its error location (srt_last_error_location).
 */
srt_status rt_compile_arch(srt_context *ctx, const char *path, const char *text, size_t text_len,
                           const char *model_name, char **cu, size_t *cu_len, char **plan_json, RtRefModel **ref);
/* Reference backend, reverse mode (train.c): one sequence tokens[0..n) from position 0; adds the sum of its n-1
 * next-token negative log-likelihoods to *loss and scale times its gradient into grads[w] (plan weight w's count
 * doubles, stored order; every entry allocated). A model with an op that has no backward: SRT_ERR_UNSUPPORTED
 * naming the op and its .arch line. */
srt_status rt_ref_grad(srt_model *m, const int32_t *tokens, int n, double scale, double *loss, double **grads);
/* Whether rt_ref_grad takes sequences longer than the segment (a Transformer-XL model: segment after segment,
 * memories carried without a gradient). */
bool rt_ref_grad_segments(const srt_model *m);
/* SRT_OK when rt_ref_grad can differentiate the model; else SRT_ERR_UNSUPPORTED naming the first op without a
 * backward and its .arch line. */
srt_status rt_ref_grad_check(srt_model *m);
/* The reference backend's fp32 values of plan weight w (stored order, what forwards read); NULL before a load. */
float *rt_ref_weight_values(srt_model *m, int w);
/* After weights were changed in place (rt_ref_weight_values: a training step), recomputes the tensors derived
 * from them (the position-infused table, Transformer-XL's relative keys), as a load does. */
srt_status rt_ref_rederive(srt_model *m);
/* Writes file_vals (per plan weight, in its file layout; read for the first entry of each name only) as an F32
 * safetensors file under the weights' file names, a tensor listed twice written once; note goes into the
 * header's metadata ("source"). */
srt_status rt_weights_save(srt_context *ctx, const RtPlan *plan, const float *const *file_vals, const char *note,
                           const char *path);
/* A weight's values between its stored order and its file layout (2-D transposed when w->transpose);
 * from_file also rounds to the weight's dtype, as loading does. */
void rt_weight_to_file(const RtPlanWeight *w, const float *stored, float *file);
void rt_weight_from_file(const RtPlanWeight *w, const float *file, float *stored);

/* ------------------------------------------------------------------ */
/* NVRTC (backend_cuda.c)                                               */
/* ------------------------------------------------------------------ */

/*
 * Compiles req->source to a cubin for sm_<req->arch> with NVRTC, through the
 * artifact cache in req->cache_dir. Needs no driver or GPU. out->image is
 * malloc'd (free()). SRT_ERR_COMPILE with rt_nvrtc's message when NVRTC cannot be loaded.
 */
srt_status rt_nvrtc_compile(const RtCompileRequest *req, RtCompiled *out, char *err, size_t errlen);

/* NVRTC's entry points (common/dynlib.h), loaded on first use ($SHORTC_LIBNVRTC, else the usual search);
 * NULL with a message naming the library in err when it cannot be loaded. */
struct NvrtcApi;
const struct NvrtcApi *rt_nvrtc(char *err, size_t errlen);

/* Status name of a cuBLAS result. */
const char *rt_cublas_status_name(cublasStatus_t s);

/* One GEMM with a cuBLASLt epilogue (runtime/src/gemm_lt.c): column-major, C = epilogue(op(A) op(B)). */
typedef struct RtLtGemm {
    cublasOperation_t ta, tb;   /* op(A), op(B) */
    int64_t m, n, k;            /* op(A) is m x k, op(B) k x n, C m x n */
    const void *A, *B;          /* operands */
    void *C;                    /* result (not read: beta = 0) */
    int64_t lda, ldb, ldc;      /* leading dimensions */
    cudaDataType atype, btype, ctype; /* storage types */
    cublasComputeType_t compute;/* CUBLAS_COMPUTE_32F or its FAST_TF32 variant */
    PlanEpilogue epilogue;      /* what is applied in the GEMM */
    const void *bias;           /* m elements of ctype (epilogues with a bias) */
    void *workspace;            /* the session's cuBLASLt workspace (device memory), or NULL */
    size_t workspace_bytes;     /* its size (0 with NULL) */
    CUstream stream;            /* the session's stream */
} RtLtGemm;
/* What an RtLtPlan was made for: an RtLtGemm without its pointers, plus their alignments (compared whole). */
typedef struct RtLtKey {
    int64_t m, n, k, lda, ldb, ldc;     /* shape and leading dimensions */
    int32_t ta, tb;                     /* op(A), op(B) */
    int32_t atype, btype, ctype;        /* storage types */
    int32_t compute;                    /* compute type */
    int32_t epilogue;                   /* PlanEpilogue */
    uint32_t align[4];                  /* A, B, C, D: the largest power of two <= 256 dividing each address */
    uint32_t zero;                      /* 0: no implicit padding, so a copy compares equal with memcmp */
    uint64_t workspace;                 /* workspace bytes the algorithm may use */
} RtLtKey;
_Static_assert(sizeof(RtLtKey) == 6 * 8 + 7 * 4 + 4 * 4 + 4 + 8, "RtLtKey has no padding");
/* Plans a session keeps per GEMM step: a prompt's shape and the one-token shape. */
enum { RT_LT_WAYS = 2 };
/* A GEMM step's cuBLASLt objects for one shape, kept by its session between calls (srt_session.lt_plans). */
typedef struct RtLtPlan {
    bool ready;                         /* built for key */
    unsigned long last_use;             /* larger: used more recently (within its step's set) */
    RtLtKey key;                        /* what it was built for */
    cublasLtMatmulDesc_t desc;          /* transposes, epilogue, bias type (the bias pointer is set per call) */
    cublasLtMatrixLayout_t la, lb, lc;  /* A, B, and C (also D) */
    cublasLtMatmulAlgo_t algo;          /* the heuristic's choice for the key's workspace and alignments */
} RtLtPlan;
/* Runs g through d's cuBLASLt entry points with the plan of set built for g's key (else the least recently used
 * one, rebuilt); the status of the first call that failed (a plan that could not be built is left empty). */
cublasStatus_t rt_gemm_lt(const RtDriver *d, cublasLtHandle_t h, RtLtPlan set[RT_LT_WAYS], const RtLtGemm *g);
/* Destroys what p holds and empties it (an empty plan is left as it is). */
void rt_lt_plan_release(const RtDriver *d, RtLtPlan *p);

/* srt_attention's compiler side (backend_ref.c, the runtime's one door to the compiler; attention.c drives it). */
typedef struct RtAttnKernel {
    char *source;     /* the kernel's whole CUDA source (rt_alloc'd: rt_free) */
    char name[96];    /* its attention kernel's name */
    char pack[104];   /* its layout kernels (templates/attn_fn_pack.cuh): q, k, v [H, T, D] of one sequence into */
    char unpack[104]; /* the attention kernel's arguments, and its output back into [H, T, D] */
    int smem;         /* dynamic shared memory per block */
    int qt;           /* queries per block */
    int grid_pad;     /* blocks along x for a call of T queries: (T + grid_pad + qt - 1) / qt */
} RtAttnKernel;
/* Types d's kind and parameters against d->heads as the .arch front end does (its messages), refusing kinds
 * that keep state or add position terms (SRT_ERR_INVALID). d's shape and dtype are checked already (attention.c). */
srt_status rt_attention_check(srt_context *ctx, const srt_attention_desc *d);
/* The kernel of d (checked) for token class ntok: its pattern over ntok positions, rendered. */
srt_status rt_attention_render(srt_context *ctx, const srt_attention_desc *d, int ntok, RtAttnKernel *out);

#endif /* RT_INTERNAL_H */
