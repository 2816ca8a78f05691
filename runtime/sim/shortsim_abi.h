/*
 * shortsim_abi.h — the interface between the simulator core (libshortrt,
 * runtime/sim/sim_core.c) and a kernel shared object compiled from an
 * emitted .cu by sim_compile.c. Included by both: as C by the core, as C++
 * (through shortsim_prelude.h) by the kernel .so. Part of the cache key, so
 * changing it rebuilds every cached kernel object.
 *
 * A kernel .so exports, per kernel NAME,
 *   void shortsim_tramp_NAME(void **params, ShortsimW *w)  one CUDA thread (fiber mode)
 *   void shortsim_plain_NAME(void **params, ShortsimW *w)  every thread of a block in turn
 *   const char *const shortsim_params_NAME                   one letter per parameter: p pointer,
 *                                                            f float, i int32, u uint32, ? other
 * the ints shortsim_abi (SHORTSIM_ABI_VERSION) and shortsim_arch, and
 *   const ShortsimSmemDecl *shortsim_smem_decls(unsigned long *n)
 * the static __shared__ declarations the source pass (sim_rewrite.c) placed,
 * and, built checked, the pointer
 *   ShortsimCheckFn shortsim_checker
 * that the core sets when it loads the object: every load and store of kernel
 * code outside its own stack is passed to it (the prelude's __asan_* hooks).
 */
#ifndef SHORTSIM_ABI_H
#define SHORTSIM_ABI_H

#define SHORTSIM_ABI_VERSION 9

/*
 * Kernel code always runs on a stack inside its worker's stack region,
 * which is aligned to SHORTSIM_REGION_ALIGN and begins with a pointer to the
 * worker's ShortsimW: kernel code finds its worker (threadIdx and the rest)
 * from its own stack address, without thread-local storage.
 */
#define SHORTSIM_REGION_ALIGN (1ull << 30)

/*
 * Static shared memory: declaration K (sim_rewrite.c numbers them) lives in
 * slot K of the running block's static region (ShortsimW::static_smem). The
 * object ends at SHORTSIM_SMEM_SLOT_END inside its slot, and the rest of the
 * slot up to SHORTSIM_SMEM_SLOT is a PROT_NONE guard: the byte after the
 * object faults (exactly in checked builds, after rounding to 16 bytes
 * otherwise). The guard is 64 KB so it covers a page of any size. Checked
 * builds also check every access against the object's bounds (below the
 * object included) through shortsim_checker.
 */
#define SHORTSIM_SMEM_SLOTS 256
#define SHORTSIM_SMEM_SLOT_END (64u * 1024u)
#define SHORTSIM_SMEM_SLOT (128u * 1024u)
#define SHORTSIM_SMEM_STATIC_MAX 49152 /* CUDA's limit for static shared memory */

/* One static __shared__ declaration, recorded in the kernel object's
 * section shortsim_smem (one record per function instance). 32 bytes: the
 * compiler aligns objects of 32 bytes or more to 32, and the records must
 * lie in the section as an array. */
typedef struct ShortsimSmemDecl {
    int slot;                   /* its slot */
    int line;                   /* source line of the declaration */
    unsigned bytes;             /* sizeof the object (at most SHORTSIM_SMEM_STATIC_MAX) */
    unsigned offset;            /* where the object begins inside its slot (it ends at offset + bytes) */
    const char *name;           /* the declared name */
    const char *func;           /* the function declaring it ("" at namespace scope) */
} ShortsimSmemDecl;

/* Checks an access of n bytes at p by kernel code (store: 1 for a write) made
 * by the instruction before return address pc; reports a fault and abandons
 * the launch when it touches device memory outside its object (checked mode). */
typedef void (*ShortsimCheckFn)(const void *p, unsigned long n, int store, const void *pc);

/* Warp collective operations (ShortsimApi.warp). */
enum {
    SHORTSIM_OP_SHFL_IDX = 1,   /* in: ShortsimShflIn  out: unsigned long long */
    SHORTSIM_OP_SHFL_UP,
    SHORTSIM_OP_SHFL_DOWN,
    SHORTSIM_OP_SHFL_XOR,
    SHORTSIM_OP_BALLOT,         /* in: int predicate   out: unsigned */
    SHORTSIM_OP_ANY,            /* in: int predicate   out: int */
    SHORTSIM_OP_ALL,            /* in: int predicate   out: int */
    SHORTSIM_OP_SYNCWARP,       /* in: -               out: - */
    SHORTSIM_OP_MMA_F16F32,     /* in: ShortsimMmaIn   out: float[4] */
    SHORTSIM_OP_MMA_BF16F32,    /* in: ShortsimMmaIn   out: float[4] (bf16 inputs) */
    SHORTSIM_OP_LDMATRIX,       /* in: ShortsimLdmIn   out: unsigned[num] */
    SHORTSIM_OP_MMA_TF32,       /* in: ShortsimMmaIn   out: float[4] (m16n8k8, TF32 inputs as fp32 bits) */
    SHORTSIM_OP_COUNT
};

/* cp.async operations (ShortsimApi.cp_async). */
enum {
    SHORTSIM_CP_COPY16 = 0,     /* issue a 16-byte copy global -> shared */
    SHORTSIM_CP_COMMIT,         /* close the group of the copies issued since the last commit */
    SHORTSIM_CP_WAIT            /* complete all but the n most recent committed groups */
};

/* Block-wide barriers (ShortsimApi.barrier). */
enum {
    SHORTSIM_BAR_SYNC = 0,      /* __syncthreads */
    SHORTSIM_BAR_COUNT,         /* __syncthreads_count: number of nonzero predicates */
    SHORTSIM_BAR_AND,           /* __syncthreads_and */
    SHORTSIM_BAR_OR             /* __syncthreads_or */
};

typedef struct ShortsimShflIn {
    unsigned long long val;     /* the lane's value, bit pattern */
    int arg;                    /* source lane, delta or lane mask */
    int width;                  /* segment width (power of two <= 32) */
} ShortsimShflIn;

typedef struct ShortsimMmaIn {
    unsigned a[4];              /* A fragment: 8 halves (m16n8k16) or 4 fp32 (m16n8k8 TF32) */
    unsigned b[2];              /* B fragment: 4 halves or 2 fp32 */
    float c[4];                 /* accumulators */
} ShortsimMmaIn;

typedef struct ShortsimLdmIn {
    const void *row;            /* this lane's row address (shared memory, 16-byte aligned) */
    int num;                    /* matrices: 1, 2 or 4 (.x1/.x2/.x4) */
    int trans;                  /* nonzero: .trans (each matrix delivered transposed) */
} ShortsimLdmIn;

/* Hopper operations (ShortsimApi.hopper, docs/attention/hopper.md). */
enum {
    SHORTSIM_HOP_WGMMA = 0,        /* mma: one warpgroup MMA; every thread of the warpgroup (128) takes part */
    SHORTSIM_HOP_WGMMA_FENCE,      /* wgmma.fence */
    SHORTSIM_HOP_WGMMA_COMMIT,     /* wgmma.commit_group */
    SHORTSIM_HOP_WGMMA_WAIT,       /* wgmma.wait_group n */
    SHORTSIM_HOP_MBAR_INIT,        /* bar, n: the expected arrival count */
    SHORTSIM_HOP_MBAR_ARRIVE,      /* bar, n: transaction bytes expected before the arrival (0: plain arrive) */
    SHORTSIM_HOP_MBAR_EXPECT_TX,   /* bar, n: transaction bytes expected */
    SHORTSIM_HOP_MBAR_TRY_WAIT,    /* bar, n: phase parity; returns 1 when that phase has completed */
    SHORTSIM_HOP_TMA_LOAD,         /* smem <- map box at coord (rank coordinates), completes on bar */
    SHORTSIM_HOP_TMA_STORE,        /* map box at coord <- smem */
    SHORTSIM_HOP_BULK_COMMIT,      /* cp.async.bulk.commit_group */
    SHORTSIM_HOP_BULK_WAIT,        /* cp.async.bulk.wait_group n */
    SHORTSIM_HOP_FENCE_PROXY_ASYNC /* fence.proxy.async: orders earlier generic shared-memory writes before
                                      later async-proxy reads (wgmma operands, TMA stores) */
};

/* One warpgroup MMA operand set of one thread: wgmma.mma_async.m64nNk16.f32.{f16,bf16}. */
typedef struct ShortsimWgmmaIn {
    unsigned long long desc_a;  /* A's shared-memory matrix descriptor (when !a_in_regs) */
    unsigned long long desc_b;  /* B's shared-memory matrix descriptor */
    unsigned a[4];              /* A fragment (when a_in_regs): the mma.m16n8k16 A layout of the warp's 16 rows */
    float *acc;                 /* the thread's n/2 accumulators: C when scale_d, then D */
    int *pending;               /* the accumulator's flag: set at issue, cleared by the wait_group covering it */
    int n;                      /* N: a multiple of 8 from 8 to 256 */
    int bf16;                   /* 1: bf16 inputs; 0: fp16 */
    int a_in_regs;              /* 1: A from registers; 0: A from shared memory (desc_a) */
    int trans_a;                /* 1: A is M-major in shared memory (imm-trans-a) */
    int trans_b;                /* 1: B is N-major in shared memory (imm-trans-b) */
    int scale_d;                /* 0: D = A*B; 1: D = A*B + C */
} ShortsimWgmmaIn;

/* Operands of the other Hopper operations. */
typedef struct ShortsimHopIn {
    void *bar;                  /* the mbarrier (8 bytes of shared memory) */
    void *smem;                 /* TMA: the shared-memory box */
    const void *map;            /* TMA: the tensor map (ShortsimTensorMap in a CUtensorMap) */
    const ShortsimWgmmaIn *mma; /* SHORTSIM_HOP_WGMMA */
    int coord[5];               /* TMA: the box's coordinates, innermost first */
    int rank;                   /* TMA: coordinates given */
    int n;                      /* count, bytes, parity or groups (see the operation) */
} ShortsimHopIn;

/* What the simulator's cuTensorMapEncodeTiled writes into a CUtensorMap's 128 bytes. */
#define SHORTSIM_TMAP_MAGIC 0x50414d54u /* "TMAP" */
typedef struct ShortsimTensorMap {
    unsigned magic;             /* SHORTSIM_TMAP_MAGIC */
    unsigned char rank;         /* dimensions, 1 to 5 */
    unsigned char elem;         /* bytes per element */
    unsigned char swizzle;      /* 0, 32, 64 or 128: the shared-memory swizzle span in bytes */
    unsigned char oob_nan;      /* 1: out-of-bounds elements read as NaN (else zero) */
    unsigned long long base;    /* global address of element 0 */
    unsigned dim[5];            /* elements per dimension, innermost first */
    unsigned short box[5];      /* box elements per dimension */
    unsigned short pad;         /* zero */
    unsigned long long stride[4]; /* byte stride of dimensions 1..rank-1 */
} ShortsimTensorMap;

typedef struct ShortsimApi {
    int version;                /* SHORTSIM_ABI_VERSION */
    /* block barrier; returns the count/and/or result (0 for SYNC) */
    int (*barrier)(int kind, int pred, int line);
    /* warp collective over the lanes of mask; in/out as documented above */
    void (*warp)(int op, unsigned mask, int line, const void *in, void *out);
    /* reports a fault (__trap, assert, bad argument) and abandons the launch; never returns */
    void (*fault)(const char *what);
    /* lanes of the caller's warp that have not exited */
    unsigned (*activemask)(void);
    /* the calling thread's cp.async: SHORTSIM_CP_COPY16 (dst, src), _COMMIT, _WAIT (n: groups left pending) */
    void (*cp_async)(int op, void *dst, const void *src, int n);
    /* SHORTSIM_HOP_* (operands in in); the result of a try_wait, else 0. May switch fibers. */
    int (*hopper)(int op, int line, const ShortsimHopIn *in);
} ShortsimApi;

/*
 * Per worker state that kernel code reads (threadIdx and friends). The
 * coordinate types are CUDA's uint3/dim3 in C++ (so kernel code accesses
 * them with their own types) and a layout-identical struct in C.
 */
#ifdef __cplusplus
typedef uint3 ShortsimU3;
typedef dim3 ShortsimD3;
#else
typedef struct ShortsimU3 {
    unsigned x, y, z;           /* coordinates, as CUDA's uint3 */
} ShortsimU3;
typedef struct ShortsimU3 ShortsimD3;
#endif

typedef struct ShortsimW {
    ShortsimU3 tid;             /* threadIdx of the thread running now */
    ShortsimU3 bid;             /* blockIdx */
    ShortsimD3 bdim;            /* blockDim */
    ShortsimD3 gdim;            /* gridDim */
    void *dyn_smem;             /* dynamic shared memory of the block */
    unsigned long long dyn_smem_bytes; /* its size (the launch's sharedMemBytes) */
    char *static_smem;          /* the block's static shared memory slots (SHORTSIM_SMEM_SLOT each) */
    const ShortsimApi *api;     /* core services */
    volatile int converted;     /* set when the plain loop's block switched to fibers (the core's record; the
                                   prelude's loop ends on its own flag, shortsim_synced) */
    int in_atomic;              /* checked mode: nonzero while the prelude's atomic operation runs (its
                                   accesses do not race with other atomics) */
} ShortsimW;

/* The C and C++ views must agree (the core is C, the kernel object C++). */
#ifdef __cplusplus
static_assert(sizeof(ShortsimSmemDecl) == 32, "ShortsimSmemDecl is an array element of 32 bytes");
static_assert(sizeof(ShortsimW) == 88 && __builtin_offsetof(ShortsimW, converted) == 80, "ShortsimW layout");
#else
_Static_assert(sizeof(ShortsimSmemDecl) == 32, "ShortsimSmemDecl is an array element of 32 bytes");
_Static_assert(sizeof(ShortsimW) == 88 && __builtin_offsetof(ShortsimW, converted) == 80, "ShortsimW layout");
#endif
#ifdef __cplusplus
static_assert(sizeof(ShortsimTensorMap) <= 128, "a tensor map fits a CUtensorMap");
#else
_Static_assert(sizeof(ShortsimTensorMap) <= 128, "a tensor map fits a CUtensorMap");
#endif

#endif /* SHORTSIM_ABI_H */
