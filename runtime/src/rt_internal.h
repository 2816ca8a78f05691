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

struct srt_context {
    srt_alloc_fn alloc;   /* host allocator (realloc semantics) */
    void *ud;             /* its user data */
    char err[RT_ERR_MAX]; /* last error message */
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
const char *rt_strip_hf_prefix(const char *name);
/* Sets the context's message and returns st. */
srt_status rt_error(srt_context *ctx, srt_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
srt_status rt_verror(srt_context *ctx, srt_status st, const char *fmt, va_list ap);
/* Reads a whole file into ctx memory (NUL-terminated). SRT_ERR_IO with a message on failure. */
srt_status rt_read_file(srt_context *ctx, const char *path, char **data, size_t *len);
double rt_now_ms(void);

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
} RtRefKind;
typedef struct RtRef {
    RtRefKind kind;   /* which base */
    int index;        /* weight, state or constant index */
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

/* A named program: the steps run for a call whose T lies in [tmin, tmax]. */
typedef struct RtProgram {
    char *name;           /* e.g. "forward", "decode" */
    int tmin, tmax;       /* the T it runs */
    int first;            /* index of its first step in RtPlan.steps */
    int nsteps;           /* its steps */
} RtProgram;

typedef struct RtPlanKernel {
    char *name;           /* extern "C" symbol */
    bool barriers;        /* uses __syncthreads / warp intrinsics */
    int line;             /* .arch line of its first use */
    int uses;             /* launches per forward */
    RtArgKind *params;    /* parameter kinds in order (RT_ARG_REF: a pointer) */
    int nparams;          /* entries in params */
} RtPlanKernel;

typedef struct RtPlan {
    char *model;          /* model name */
    char *source;         /* .arch it was compiled from ("" if absent) */
    int vocab;            /* logits width */
    int d_model;          /* model width */
    int n_heads;          /* attention heads */
    int n_layers;         /* layers */
    int segment;          /* max tokens per forward */
    size_t arena_bytes;   /* activation arena size */
    RtRef tokens;         /* where token ids go (int32) */
    RtRef logits;         /* where T x vocab fp32 logits are read */
    RtPlanWeight *weights; /* weights in plan order */
    int nweights;         /* count */
    size_t weight_bytes;  /* device weight block size */
    RtPlanState *state;   /* per-session tensors */
    int nstate;           /* count */
    size_t state_bytes;   /* their total */
    RtPlanConst *consts;  /* compile-time tables */
    int nconsts;          /* count */
    size_t const_bytes;   /* device constants block size */
    int64_t scalar_min[4], scalar_max[4]; /* ranges of T, P, fill, B (plan_scalar_names order) */
    RtProgram *programs;  /* named programs; their steps are consecutive ranges of steps */
    int nprograms;        /* count */
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
} RtSafetensors;

/* Opens and validates a safetensors file. */
srt_status rt_st_open(srt_context *ctx, const char *path, RtSafetensors *st);
/* Same, from bytes in memory (not copied; tests and tools). */
srt_status rt_st_open_memory(srt_context *ctx, const char *what, const void *bytes, size_t len, RtSafetensors *st);
void rt_st_close(RtSafetensors *st);
/* Finds name, also trying it with and without the "transformer." prefix. */
const RtStTensor *rt_st_find(const RtSafetensors *st, const char *name);

/*
 * Weight values for one plan, as fp32 arrays in the stored order, already
 * rounded to each weight's stored dtype (what every backend computes with).
 * vals[i] belongs to plan->weights[i] (allocated here; on failure none are).
 * A NaN or infinite value is an error naming the tensor and index unless allow_nonfinite.
 */
srt_status rt_weights_from_st(srt_context *ctx, const RtPlan *plan, const RtSafetensors *st, bool allow_nonfinite,
                              float **vals);
srt_status rt_weights_random(srt_context *ctx, const RtPlan *plan, uint64_t seed, float **vals);
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
    cublasHandle_t blas;      /* cuBLAS handle (set to the session's stream per forward) */
    cublasLtHandle_t blaslt;  /* cuBLASLt handle (GEMMs with an epilogue; the stream is passed per call) */
    CUdeviceptr dweights;     /* weight block (plan.weight_bytes) */
    CUdeviceptr dconsts;      /* constants block (plan.const_bytes; 0 when there are none) */
    int arch;                 /* compute capability * 10 */
    double compile_ms;        /* kernel build time (0 on a cache hit) */
    int cache_hit;            /* module image came from the cache */
    char cache_note[1536];    /* why the kernel cache was not used or written ("" if it was) */
    bool sync_steps;          /* $SHORTC_SYNC_STEPS: synchronize after every step */
    bool allow_nonfinite;     /* srt_options.allow_nonfinite_weights */
};

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
};

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
};

extern const RtBackend rt_backend_ref;    /* backend_ref.c */
extern const RtBackend rt_backend_device; /* exec.c: sim and cuda */

/* Runs step i of the plan alone for T tokens at position P, exactly as a forward does, and synchronizes
 * (checking tools: tests/suite/step_check.c). The token ids and the step's inputs (arena and state) must already
 * be in place. */
srt_status rt_exec_step(srt_session *s, int i, int T, int P);

/*
 * Compiles an .arch through the compiler library. On success fills the
 * emitted CUDA and plan (ctx memory). keep: for the reference backend, the
 * compiler state (arena, diag, graph) is kept in *ref. Compiler diagnostics
 * become the context's error message.
 */
srt_status rt_compile_arch(srt_context *ctx, const char *path, const char *model_name, char **cu, size_t *cu_len,
                           char **plan_json, RtRefModel **ref);

/* ------------------------------------------------------------------ */
/* NVRTC (backend_cuda.c)                                               */
/* ------------------------------------------------------------------ */

/*
 * Compiles req->source to a cubin for sm_<req->arch> with NVRTC, through the
 * artifact cache in req->cache_dir. Needs no driver or GPU. out->image is
 * malloc'd (free()).
 */
srt_status rt_nvrtc_compile(const RtCompileRequest *req, RtCompiled *out, char *err, size_t errlen);

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
    CUstream stream;            /* the session's stream */
} RtLtGemm;
/* Runs g through d's cuBLASLt entry points; the status of the first call that failed. */
cublasStatus_t rt_gemm_lt(const RtDriver *d, cublasLtHandle_t h, const RtLtGemm *g);

#endif /* RT_INTERNAL_H */
