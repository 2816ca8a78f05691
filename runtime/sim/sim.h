/*
 * sim.h — internals of the CPU SIMT simulator shared by the runtime/sim sources
 * and its tests (tests/sim/). The public face is rt_driver_sim() in
 * runtime/src/rt_driver.h; docs/runtime.md ("Simulator") describes the model.
 */
#ifndef SHORTSIM_SIM_H
#define SHORTSIM_SIM_H

#include <cuda.h>
#include <cublas_v2.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rt_driver.h"
#include "half.h"
#include "shortc_common.h" /* SHORTC_SMEM_DEFAULT_LIMIT */
#include "shortsim_abi.h"

/* ---- fibers --------------------------------------------------------- */
/* AddressSanitizer must be told about every stack switch
 * (__sanitizer_start/finish_switch_fiber): sim_fiber_switch, sim_fiber_exit
 * and a fiber's first entry do it, sim_fiber_asan_* serve the fault path. */
#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#endif
#if defined(SIM_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__x86_64__) || defined(__aarch64__)
#define SIM_FIBER_ASM 1
#else
#include <ucontext.h>
#endif
typedef struct SimFiberCtx {
#if defined(SIM_FIBER_ASM)
    void *sp;                 /* saved stack pointer (registers are on that stack) */
#else
    ucontext_t uc;            /* the saved context */
#endif
    const void *stack_lo;     /* low end of its stack (a thread's own stack: learnt each time it is left) */
    size_t stack_size;        /* the stack's size */
    void *asan_fake;          /* ASan's fake stack of the context while it does not run */
    void (*fn)(void *);       /* a fresh fiber: what it runs */
    void *arg;                /* fn's argument */
} SimFiberCtx;
#if defined(SIM_FIBER_ASM)
void shortsim_ctx_switch(void **save_sp, void *to_sp);
#endif

#if defined(SIM_ASAN)
/* The context that is being left, so the one entered records its stack bounds. */
extern __thread SimFiberCtx *sim_fiber_leaving;
/* Called first thing in a context just entered (resumed or new): completes ASan's switch. */
static inline void sim_fiber_arrived(void *fake) {
    const void *lo = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(fake, &lo, &size);
    if (sim_fiber_leaving) { /* what ASan knew of the stack we left */
        sim_fiber_leaving->stack_lo = lo;
        sim_fiber_leaving->stack_size = size;
        sim_fiber_leaving = NULL;
    }
}
#endif

static inline void sim_fiber_raw_switch(SimFiberCtx *from, SimFiberCtx *to) {
#if defined(SIM_FIBER_ASM)
    shortsim_ctx_switch(&from->sp, to->sp);
#else
    swapcontext(&from->uc, &to->uc);
#endif
}
/* Saves the running context in from and resumes to. */
static inline void sim_fiber_switch(SimFiberCtx *from, SimFiberCtx *to) {
#if defined(SIM_ASAN)
    sim_fiber_leaving = from;
    __sanitizer_start_switch_fiber(&from->asan_fake, to->stack_lo, to->stack_size);
    sim_fiber_raw_switch(from, to);
    sim_fiber_arrived(from->asan_fake);
#else
    sim_fiber_raw_switch(from, to);
#endif
}
/* Leaves the running context for good (a fiber that has finished or is
 * abandoned): from only receives registers that are never restored. */
__attribute__((noreturn)) static inline void sim_fiber_exit(SimFiberCtx *from, SimFiberCtx *to) {
#if defined(SIM_ASAN)
    sim_fiber_leaving = NULL;
    __sanitizer_start_switch_fiber(NULL, to->stack_lo, to->stack_size);
#endif
    sim_fiber_raw_switch(from, to);
    __builtin_unreachable();
}
/* Prepares c so that switching to it runs fn(arg) on [lo, lo+size). fn must never return. */
void sim_fiber_make(SimFiberCtx *c, char *lo, size_t size, void (*fn)(void *), void *arg);

/* ---- modules and functions (sim_driver.c creates, sim_core.c runs) ---- */
typedef struct SimModule {
    void *handle;             /* dlopen handle */
    int arch;                 /* shortsim_arch of the .so: whose limits launches are checked against */
    char *path;               /* the .so */
    const ShortsimSmemDecl *smem_decls; /* its static __shared__ declarations (shortsim_smem_decls) */
    size_t nsmem_decls;       /* their count */
    int nsmem_slots;          /* static shared-memory slots its code uses (highest slot + 1) */
} SimModule;

typedef struct SimFunc {
    SimModule *mod;           /* its module */
    void (*tramp)(void **, ShortsimW *); /* shortsim_tramp_NAME: one thread */
    void (*plain)(void **, ShortsimW *); /* shortsim_plain_NAME: a block as a loop */
    size_t static_smem;       /* bytes of __shared__ arrays declared in the kernel body */
    int max_dyn_smem;         /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    long blocks_plain;        /* statistics: blocks that ran as a plain loop */
    long blocks_fiber;        /* blocks that switched to fibers (barrier or warp collective) */
    const char *param_kinds;  /* shortsim_params_NAME: one letter per parameter (shortsim_abi.h); NULL if absent */
    char name[];              /* the kernel's name */
} SimFunc;

/* Shared-memory limit with opt-in for an arch (bytes per block). */
int sim_smem_optin_limit(int arch);
#define SIM_SMEM_DEFAULT_LIMIT SHORTC_SMEM_DEFAULT_LIMIT /* static + default dynamic shared memory, bytes */
_Static_assert(SHORTSIM_SMEM_STATIC_MAX == SHORTC_SMEM_DEFAULT_LIMIT, "one static shared-memory limit");

/* ---- configuration and execution (sim_core.c) ------------------------- */
/* threads: workers (0 = cores); checked: guard pages around allocations. */
void sim_configure(int threads, int checked);
int sim_checked(void);
int sim_nworkers(void);
CUresult sim_launch(SimFunc *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                    unsigned smem, void **params);
/* Runs fn(arg, task, worker) for task in [0, ntasks) on the worker pool.
 * 0 on success; -1 when a task faulted (message set as the last fault,
 * prefixed with `what`). */
typedef void (*SimTaskFn)(void *arg, uint64_t task, int worker);
int sim_parallel_for(uint64_t ntasks, SimTaskFn fn, void *arg, const char *what);

/* The last fault message ("" when none). */
const char *sim_last_fault(void);
void sim_set_fault(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sim_clear_fault(void);

/* "FILE:LINE in FUNCTION" for the instruction at pc of a kernel object
 * (sim_lines.c); "" when it cannot be told. */
void sim_source_line(const void *pc, char *buf, size_t len);

/* ---- source pass (sim_rewrite.c) -------------------------------------- */
/* src with CUDA's __shared__ declarations replaced by the prelude's simulator
 * forms, line numbers kept (malloc'd, NUL-terminated; NULL when out of
 * memory). *nstatic: the static declarations placed in slots. */
char *sim_rewrite_shared(const char *src, size_t len, size_t *out_len, int *nstatic);
/* The names of src's __global__ functions (*names: malloc'd array of
 * malloc'd strings, in source order), qualified ("ops::k") inside a named
 * namespace; *bodies (malloc'd, may be NULL): the definitions seen of each
 * (more than one: overloaded), with SIM_KERNEL_TEMPLATE or'd in for a
 * template kernel. The count, or -1 when out of memory. */
int sim_scan_kernels(const char *src, size_t len, char ***names, int **bodies);
/* Bit of sim_scan_kernels' *bodies: the kernel is a template (no plain name to run). */
#define SIM_KERNEL_TEMPLATE 0x10000

/* Describes where addr lies relative to the device allocations (sim_driver.c). */
void sim_describe_address(const void *addr, char *buf, size_t len);

/* A device allocation as checked mode sees it: the bytes asked for and the
 * whole mapping reserved for them (guard pages and slack included). */
typedef struct SimRange {
    uintptr_t map_lo, map_hi; /* the mapping [map_lo, map_hi) */
    uintptr_t lo, hi;         /* the allocation's bytes [lo, hi) */
} SimRange;
/* Copies the live allocations into *tab (grown as needed; *cap its capacity),
 * sorted by address (sim_driver.c); their count, or -1 when out of memory. */
long sim_device_ranges(SimRange **tab, size_t *cap);
/* Checked mode: the check of one kernel access (ShortsimCheckFn, shortsim_abi.h;
 * sim_core.c). Faults the running block when it leaves its object. */
void sim_check_access(const void *p, unsigned long n, int store, const void *pc);

/* Most threads per block. */
#define SIM_MAX_THREADS 1024

/* ---- checked mode's shared-memory record (sim_shadow.c) -------------------- */
/* One byte of shared memory: its last write and last read (see sim_shadow.c). */
typedef struct SimShadowByte {
    uint32_t w_bar;           /* barrier epoch of the last write (older than the block's start: none yet) */
    uint32_t w_warp;          /* the writer's warp epoch then */
    uint32_t r_bar;           /* barrier epoch of the last read */
    uint32_t r_warp;          /* the reader's warp epoch then (0 when readers of several warps) */
    uint16_t w_tid;           /* the writing thread (SIM_SHADOW_ATOMIC: atomic operations) */
    uint16_t r_tid;           /* the reading thread (SIM_SHADOW_MANY: several since the barrier) */
    uint32_t w_fence;         /* SimShadow.fence at the last write (unchanged since: not fenced for the async proxy) */
    const void *w_pc;         /* the write's instruction */
    const void *r_pc;         /* the (first) read's instruction */
} SimShadowByte;
#define SIM_SHADOW_MANY 0xffffu   /* r_tid: more than one thread */
#define SIM_SHADOW_ATOMIC 0xfffeu /* w_tid: atomic operations */
#define SIM_SHADOW_ASYNC 0xfffdu  /* w_tid: the async proxy (a TMA load; ordered by its mbarrier, not checked) */
/* A worker's record: the dynamic shared memory's bytes, then each static object's. */
typedef struct SimShadow {
    SimShadowByte *b;         /* the bytes' records */
    size_t cap;               /* records allocated */
    uint32_t clock;           /* epochs handed out on this worker (only grows) */
    uint32_t block_start;     /* the running block's first epoch */
    uint32_t bar;             /* epoch of the block's last __syncthreads() (or its start) */
    uint32_t warp[SIM_MAX_THREADS / 32]; /* epoch of each warp's last collective */
    uint32_t fence;           /* fence.proxy.async operations on this worker (only grows) */
} SimShadow;
/* The other access of a race: its thread and instruction, and the byte's record index. */
typedef struct SimShadowHit {
    unsigned tid;             /* linear thread index (SIM_SHADOW_MANY / _ATOMIC as in the record) */
    const void *pc;           /* its instruction */
    size_t offset;            /* the byte (index into the record) */
} SimShadowHit;
enum { SIM_ACC_READ, SIM_ACC_WRITE, SIM_ACC_ATOMIC }; /* kinds of access */
enum { SIM_SHADOW_OK, SIM_SHADOW_UNINIT, SIM_SHADOW_RAW, SIM_SHADOW_WAR, SIM_SHADOW_WAW, SIM_SHADOW_UNFENCED }; /* verdicts */
/* Grows the record to len bytes (new ones never accessed); -1 when out of memory. */
int sim_shadow_reserve(SimShadow *s, size_t len);
void sim_shadow_free(SimShadow *s);
/* The async proxy (a TMA load) wrote n bytes at record index idx. */
void sim_shadow_async_write(SimShadow *s, size_t idx, size_t n);
/* The async proxy (wgmma operand, TMA store) reads n bytes at idx: SIM_SHADOW_UNINIT for a byte the block
 * never wrote, SIM_SHADOW_UNFENCED for one a thread wrote with no fence.proxy.async on the worker since (hit:
 * the writer), else SIM_SHADOW_OK. The record is not changed. */
int sim_shadow_async_read(const SimShadow *s, size_t idx, size_t n, SimShadowHit *hit);
/* A block starts (nwarps warps), a __syncthreads() completes, warp's collective completes. */
void sim_shadow_block(SimShadow *s, unsigned nwarps);
void sim_shadow_barrier(SimShadow *s);
void sim_shadow_warp(SimShadow *s, unsigned warp);
/* Records thread tid's access of n bytes at record index idx; SIM_SHADOW_OK, else the verdict with hit
 * (the record is left as it was at the first bad byte). */
int sim_shadow_access(SimShadow *s, size_t idx, size_t n, unsigned tid, int kind, const void *pc, SimShadowHit *hit);

/* ---- Hopper intrinsics' data side (sim_hopper.c) ---------------------- */
/* off with the shared-memory swizzle of span bytes (0, 32, 64, 128) applied: 16-byte chunks permuted
 * within each span-byte row by the row's index in its 8-row atom (address bits 7-9 into bits 4-6). */
size_t sim_swizzle(size_t off, int span);
/* The dynamic-shared-memory byte offsets of the mn x 16 elements (off[i * 16 + k]) that the wgmma matrix
 * descriptor desc names for an operand of mn rows (A: 64, B: N); trans: MN-major (else K-major).
 * 0, or -1 with err set when the descriptor does not describe a valid layout. */
int sim_wgmma_offsets(uint64_t desc, int mn, int trans, uint32_t *off, char *err, size_t errlen);
/* cuTensorMapEncodeTiled's checks and encoding (the simulator's subset); 0, or -1 with err set. */
int sim_tmap_encode(ShortsimTensorMap *m, CUtensorMapDataType type, unsigned rank, const void *addr,
                    const uint64_t *dims, const uint64_t *strides, const unsigned *box, const unsigned *estrides,
                    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapFloatOOBfill oob,
                    char *err, size_t errlen);
/* Bytes from a map's base to the end of its last element; bytes of one box. */
size_t sim_tmap_extent(const ShortsimTensorMap *m);
size_t sim_tmap_box_bytes(const ShortsimTensorMap *m);
/* The box at coord between global memory and a dense buffer (innermost dimension first):
 * gather fills out-of-bounds elements (zero, or NaN per the map); scatter skips them. */
void sim_tma_gather(const ShortsimTensorMap *m, const int *coord, unsigned char *buf);
void sim_tma_scatter(const ShortsimTensorMap *m, const int *coord, const unsigned char *buf);

/* Statistics for tests and benchmarks. */
void sim_func_stats(CUfunction f, long *blocks_plain, long *blocks_fiber);
/* Nanoseconds per fiber switch, measured with n switches on this thread. */
double sim_measure_switch_ns(long n);

/* ---- streams and graphs (sim_graph.c) ---------------------------------- */
/* Most parameters of a kernel launch a graph records. */
#define SIM_MAX_GRAPH_PARAMS 64
/* Replays one recorded operation from its payload; CUDA_SUCCESS or the failure (fault set). */
typedef CUresult (*SimNodeRun)(const void *payload);
/* Which call sim_count_call counts. */
enum { SIM_CALL_LAUNCH,       /* a kernel launch that ran */
       SIM_CALL_GEMM,         /* a cuBLAS / cuBLASLt GEMM that ran */
       SIM_CALL_LT_DESC,      /* a cuBLASLt matmul descriptor made */
       SIM_CALL_LT_HEURISTIC  /* a cuBLASLt algorithm query */ };
void sim_count_call(int what);
void sim_call_counts(RtCallCounts *out);
/* 1 when stream is capturing a graph: its operations are recorded with sim_capture_add, not run. */
int sim_capturing(CUstream stream);
/* Appends an operation to stream's capture; payload (malloc'd, size bytes, NULL: out of memory) then
 * belongs to the capture. A failure invalidates the capture. */
CUresult sim_capture_add(CUstream stream, SimNodeRun run, void *payload, size_t size);
/* Marks stream's capture (if any) invalid: ending it returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED. */
void sim_capture_invalidate(CUstream stream);
/* A replayed GEMM's cuBLAS status as a graph launch's result (a fault set for a failure). */
CUresult sim_blas_result(cublasStatus_t s, const char *fn);
/* sim_capture_add's result as the cuBLAS status of the call it recorded. */
cublasStatus_t sim_capture_status(CUresult r);
CUresult sim_streamCreate(CUstream *ph, unsigned flags);
CUresult sim_streamDestroy(CUstream stream);
CUresult sim_streamSynchronize(CUstream stream);
CUresult sim_streamBeginCapture(CUstream stream, CUstreamCaptureMode mode);
CUresult sim_streamEndCapture(CUstream stream, CUgraph *graph);
CUresult sim_graphInstantiate(CUgraphExec *exec, CUgraph graph, unsigned long long flags);
CUresult sim_graphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info);
CUresult sim_graphLaunch(CUgraphExec exec, CUstream stream);
CUresult sim_graphExecDestroy(CUgraphExec exec);
CUresult sim_graphDestroy(CUgraph graph);

/* ---- compile (sim_compile.c) and cuBLAS (sim_blas.c) -------------------- */
srt_status sim_compile_module(const RtCompileRequest *req, RtCompiled *out, char *err, size_t errlen);
/* The host compiler command line used for every kernel object (argv, NULL-terminated; static storage). */
const char *const *sim_compile_flags(void);
/* The embedded shortsim_*.h headers (sim_headers.c): chained into a cache-key
 * hash; written into dir (0, or -1 on an I/O error); removed from dir. */
uint64_t sim_headers_hash(uint64_t h);
int sim_headers_write(int dirfd);
void sim_headers_remove(int dirfd);
/* The GEMM behind cublasGemmEx / cublasGemmStridedBatchedEx (and cublasLtMatmul), without a handle; fn names the caller in faults. */
cublasStatus_t sim_gemm_run(const char *fn, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType Atype, int lda, long long strideA,
                            const void *B, cudaDataType Btype, int ldb, long long strideB, const void *beta, void *C,
                            cudaDataType Ctype, int ldc, long long strideC, int batch, cublasComputeType_t compute);
cublasStatus_t sim_blasCreate(cublasHandle_t *handle);
/* cuBLASLt subset (sim_blaslt.c) */
cublasStatus_t sim_ltCreate(cublasLtHandle_t *handle);
cublasStatus_t sim_ltDestroy(cublasLtHandle_t handle);
cublasStatus_t sim_ltMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute, cudaDataType_t scale);
cublasStatus_t sim_ltMatmulDescDestroy(cublasLtMatmulDesc_t desc);
cublasStatus_t sim_ltMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                            const void *buf, size_t size);
cublasStatus_t sim_ltMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type, uint64_t rows, uint64_t cols,
                                        int64_t ld);
cublasStatus_t sim_ltMatrixLayoutDestroy(cublasLtMatrixLayout_t layout);
cublasStatus_t sim_ltMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref);
cublasStatus_t sim_ltMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref);
cublasStatus_t sim_ltMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                  cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                                  size_t size);
cublasStatus_t sim_ltMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                            cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                            cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                            cublasLtMatmulPreference_t pref, int requested,
                                            cublasLtMatmulHeuristicResult_t results[], int *returned);
cublasStatus_t sim_ltMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                            cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                            const void *C, cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                            const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspace_bytes,
                            cudaStream_t stream);
cublasStatus_t sim_blasDestroy(cublasHandle_t handle);
cublasStatus_t sim_blasSetStream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t sim_gemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                          int k, const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                          cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                          cublasComputeType_t computeType, cublasGemmAlgo_t algo);
cublasStatus_t sim_gemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                        int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                        int lda, long long strideA, const void *B, cudaDataType Btype, int ldb,
                                        long long strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
                                        long long strideC, int batchCount, cublasComputeType_t computeType,
                                        cublasGemmAlgo_t algo);

#endif /* SHORTSIM_SIM_H */
