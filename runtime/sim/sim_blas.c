/*
 * sim_blas.c — cublasGemmEx / cublasGemmStridedBatchedEx on the CPU with
 * cuBLAS semantics: column-major storage, C = alpha*op(A)*op(B) + beta*C,
 * op = N, T or C (conjugate transpose = transpose for real types), lda/ldb/
 * ldc validated as cuBLAS does, beta == 0 means C is not read, alpha and
 * beta are host floats (CUBLAS_COMPUTE_32F and its _FAST_ variants, all
 * computed in fp32; _FAST_TF32 with fp32 inputs first rounds A and B to TF32,
 * rt_round_tf32, so the simulator shows TF32's numeric effect). Storage types CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF with
 * cuBLAS's combinations: A and B of one type, C of that type or fp32.
 *
 * Numerics: every element of C is one fp32 dot product accumulated in
 * increasing k order with separate multiply and add (no FMA contraction),
 * then alpha*acc + beta*C in fp32 and one rounding to C's type (nearest
 * even). Results are therefore bitwise identical for any worker count, any
 * blocking and any vector width.
 *
 * Work: tasks of MC rows x NC columns of one batch's C run on the
 * simulator's worker pool; each task packs its A rows and B columns to fp32
 * panels and runs an 8x6 register-blocked kernel (GCC vector extensions,
 * with an AVX2 clone on x86-64).
 */
#define _GNU_SOURCE
#include "rt_driver.h"
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#pragma GCC optimize("fp-contract=off")

#define MR 8
#define NR 6
#define MC 128
#define NC 240

typedef float v8f __attribute__((vector_size(32)));

struct cublasContext {
    int magic;               /* BLAS_MAGIC while valid */
    cudaStream_t stream;     /* cublasSetStream's: GEMMs on a capturing stream are recorded (sim_graph.c) */
};
#define BLAS_MAGIC 0x51b1a5

cublasStatus_t sim_blasCreate(cublasHandle_t *handle) {
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasContext *h = calloc(1, sizeof *h);
    if (!h) return CUBLAS_STATUS_ALLOC_FAILED;
    h->magic = BLAS_MAGIC;
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t sim_blasDestroy(cublasHandle_t handle) {
    if (!handle || handle->magic != BLAS_MAGIC) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->magic = 0;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t sim_blasSetStream(cublasHandle_t handle, cudaStream_t stream) {
    if (!handle || handle->magic != BLAS_MAGIC) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

typedef struct Gemm {
    int ta, tb;              /* op(A), op(B): 0 N, 1 T */
    int m, n, k;             /* C is m x n, k the inner dimension */
    int batch;               /* batch count */
    float alpha, beta;       /* scalars */
    const unsigned char *A, *B; /* operands */
    unsigned char *C;        /* result */
    int at, bt, ct;          /* storage types: 0 f32, 1 f16, 2 bf16 */
    int tf32;                /* CUBLAS_COMPUTE_32F_FAST_TF32 on fp32 inputs: A and B rounded to TF32 */
    long long lda, ldb, ldc; /* leading dimensions in elements */
    long long sA, sB, sC;    /* batch strides in elements */
    int mtasks, ntasks;      /* tasks along m and n */
    float **scratch;         /* per worker: A block then B block */
    size_t scratch_floats;   /* floats per scratch buffer */
    int oom;                 /* a worker could not allocate its scratch */
} Gemm;

static inline float load_el(const unsigned char *p, int t, long long i) {
    switch (t) {
    case 0: return ((const float *)p)[i];
    case 1: return rt_f16_to_f32(((const uint16_t *)p)[i]);
    default: return rt_bf16_to_f32(((const uint16_t *)p)[i]);
    }
}
static inline void store_el(unsigned char *p, int t, long long i, float v) {
    switch (t) {
    case 0: ((float *)p)[i] = v; break;
    case 1: ((uint16_t *)p)[i] = rt_f32_to_f16(v); break;
    default: ((uint16_t *)p)[i] = rt_f32_to_bf16(v); break;
    }
}
static inline size_t el_size(int t) { return t == 0 ? 4 : 2; }

/* acc[c][r] = sum_p a[p][r] * b[p][c] over p in [0, k), in p order. */
static inline __attribute__((always_inline)) void micro(int k, const float *a, const float *b, v8f acc[NR]) {
    v8f c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0}, c5 = {0};
    for (int p = 0; p < k; p++) {
        v8f av;
        memcpy(&av, a + (size_t)p * MR, sizeof av);
        const float *bp = b + (size_t)p * NR;
        c0 += av * bp[0];
        c1 += av * bp[1];
        c2 += av * bp[2];
        c3 += av * bp[3];
        c4 += av * bp[4];
        c5 += av * bp[5];
    }
    acc[0] = c0, acc[1] = c1, acc[2] = c2, acc[3] = c3, acc[4] = c4, acc[5] = c5;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SIM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SIM_CLONES
#endif

/* One task: rows [i0, i1) x columns [j0, j1) of C for batch bi. */
SIM_CLONES static void gemm_block(const Gemm *g, int bi, int i0, int i1, int j0, int j1, float *Ap, float *Bp) {
    const int k = g->k;
    const unsigned char *A = g->A + (size_t)(g->sA * bi) * el_size(g->at);
    const unsigned char *B = g->B + (size_t)(g->sB * bi) * el_size(g->bt);
    unsigned char *C = g->C + (size_t)(g->sC * bi) * el_size(g->ct);
    const int mp = (i1 - i0 + MR - 1) / MR, np = (j1 - j0 + NR - 1) / NR;
    /* pack op(A) rows: Ap[panel][p][r] */
    for (int q = 0; q < mp; q++) {
        float *dst = Ap + (size_t)q * k * MR;
        for (int r = 0; r < MR; r++) {
            int i = i0 + q * MR + r;
            if (i >= i1) {
                for (int p = 0; p < k; p++) dst[(size_t)p * MR + r] = 0.0f;
            } else if (g->ta == 0) { /* op(A)(i,p) = A[i + p*lda] */
                for (int p = 0; p < k; p++) dst[(size_t)p * MR + r] = load_el(A, g->at, i + p * g->lda);
            } else {                 /* A[p + i*lda] */
                for (int p = 0; p < k; p++) dst[(size_t)p * MR + r] = load_el(A, g->at, p + i * g->lda);
            }
        }
    }
    /* pack op(B) columns: Bp[panel][p][c] */
    for (int q = 0; q < np; q++) {
        float *dst = Bp + (size_t)q * k * NR;
        for (int c = 0; c < NR; c++) {
            int j = j0 + q * NR + c;
            if (j >= j1) {
                for (int p = 0; p < k; p++) dst[(size_t)p * NR + c] = 0.0f;
            } else if (g->tb == 0) { /* op(B)(p,j) = B[p + j*ldb] */
                for (int p = 0; p < k; p++) dst[(size_t)p * NR + c] = load_el(B, g->bt, p + j * g->ldb);
            } else {                 /* B[j + p*ldb] */
                for (int p = 0; p < k; p++) dst[(size_t)p * NR + c] = load_el(B, g->bt, j + p * g->ldb);
            }
        }
    }
    if (g->tf32) { /* the tensor cores' view of fp32 inputs */
        for (size_t i = 0; i < (size_t)mp * k * MR; i++) Ap[i] = rt_round_tf32(Ap[i]);
        for (size_t i = 0; i < (size_t)np * k * NR; i++) Bp[i] = rt_round_tf32(Bp[i]);
    }
    for (int qa = 0; qa < mp; qa++)
        for (int qb = 0; qb < np; qb++) {
            v8f acc[NR];
            micro(k, Ap + (size_t)qa * k * MR, Bp + (size_t)qb * k * NR, acc);
            for (int c = 0; c < NR; c++) {
                int j = j0 + qb * NR + c;
                if (j >= j1) break;
                for (int r = 0; r < MR; r++) {
                    int i = i0 + qa * MR + r;
                    if (i >= i1) break;
                    long long ci = i + j * g->ldc;
                    float v = g->alpha * acc[c][r];
                    if (g->beta != 0.0f) v += g->beta * load_el(C, g->ct, ci);
                    store_el(C, g->ct, ci, v);
                }
            }
        }
}

static void gemm_task(void *arg, uint64_t t, int worker) {
    Gemm *g = arg;
    float *s = g->scratch[worker];
    if (!s) {
        s = malloc(g->scratch_floats * sizeof(float));
        if (!s) {
            __atomic_store_n(&g->oom, 1, __ATOMIC_RELAXED);
            return;
        }
        g->scratch[worker] = s;
    }
    uint64_t per = (uint64_t)g->mtasks * g->ntasks;
    int bi = (int)(t / per), r = (int)(t % per);
    int it = r % g->mtasks, jt = r / g->mtasks;
    int i0 = it * MC, i1 = i0 + MC < g->m ? i0 + MC : g->m;
    int j0 = jt * NC, j1 = j0 + NC < g->n ? j0 + NC : g->n;
    float *Ap = s, *Bp = s + (size_t)((MC + MR - 1) / MR) * MR * g->k;
    gemm_block(g, bi, i0, i1, j0, j1, Ap, Bp);
}

/* C = beta*C (alpha == 0 or k == 0): A and B are not read. */
static void scale_task(void *arg, uint64_t t, int worker) {
    (void)worker;
    Gemm *g = arg;
    int bi = (int)(t / (uint64_t)g->n), j = (int)(t % (uint64_t)g->n);
    unsigned char *C = g->C + (size_t)(g->sC * bi) * el_size(g->ct);
    for (int i = 0; i < g->m; i++) {
        long long ci = i + j * g->ldc;
        store_el(C, g->ct, ci, g->beta == 0.0f ? 0.0f : g->beta * load_el(C, g->ct, ci));
    }
}

static int type_code(cudaDataType t) {
    switch (t) {
    case CUDA_R_32F: return 0;
    case CUDA_R_16F: return 1;
    case CUDA_R_16BF: return 2;
    default: return -1;
    }
}
static int op_code(cublasOperation_t op) {
    switch (op) {
    case CUBLAS_OP_N: return 0;
    case CUBLAS_OP_T:
    case CUBLAS_OP_C: return 1; /* real types: conjugate transpose = transpose */
    default: return -1;
    }
}

cublasStatus_t sim_gemm_run(const char *fn, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                             const void *alpha, const void *A, cudaDataType Atype, int lda, long long strideA,
                             const void *B, cudaDataType Btype, int ldb, long long strideB, const void *beta, void *C,
                             cudaDataType Ctype, int ldc, long long strideC, int batch, cublasComputeType_t compute) {
    Gemm g;
    memset(&g, 0, sizeof g);
    g.ta = op_code(transa);
    g.tb = op_code(transb);
    if (g.ta < 0 || g.tb < 0 || m < 0 || n < 0 || k < 0 || batch < 0 || !alpha || !beta) {
        sim_set_fault("%s: invalid transa/transb, negative size or NULL alpha/beta", fn);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    int arows = g.ta == 0 ? m : k, brows = g.tb == 0 ? k : n;
    if (lda < (arows > 1 ? arows : 1) || ldb < (brows > 1 ? brows : 1) || ldc < (m > 1 ? m : 1)) {
        sim_set_fault("%s: leading dimension too small (lda %d for %d rows, ldb %d for %d rows, ldc %d for %d rows)", fn,
                      lda, arows, ldb, brows, ldc, m);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    switch (compute) {
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32: break;
    default:
        sim_set_fault("%s: compute type %d not supported by the simulator (fp32 compute only)", fn, (int)compute);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    g.at = type_code(Atype);
    g.bt = type_code(Btype);
    g.ct = type_code(Ctype);
    if (g.at < 0 || g.bt != g.at || g.ct < 0 || (g.ct != 0 && g.ct != g.at)) {
        sim_set_fault("%s: type combination A %d, B %d, C %d not supported (A and B fp32/fp16/bf16 alike; C that type "
                      "or fp32)",
                      fn, (int)Atype, (int)Btype, (int)Ctype);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
    g.tf32 = compute == CUBLAS_COMPUTE_32F_FAST_TF32 && g.at == 0;
    memcpy(&g.alpha, alpha, sizeof(float));
    memcpy(&g.beta, beta, sizeof(float));
    g.m = m, g.n = n, g.k = k, g.batch = batch;
    g.A = A, g.B = B, g.C = C;
    g.lda = lda, g.ldb = ldb, g.ldc = ldc;
    g.sA = strideA, g.sB = strideB, g.sC = strideC;
    int r;
    if (g.alpha == 0.0f || k == 0) {
        r = sim_parallel_for((uint64_t)batch * n, scale_task, &g, fn);
    } else {
        g.mtasks = (m + MC - 1) / MC;
        g.ntasks = (n + NC - 1) / NC;
        g.scratch_floats = ((size_t)((MC + MR - 1) / MR) * MR + (size_t)((NC + NR - 1) / NR) * NR) * (size_t)k;
        int nw = sim_nworkers();
        g.scratch = calloc((size_t)(nw > 0 ? nw : 1), sizeof *g.scratch);
        if (!g.scratch) return CUBLAS_STATUS_ALLOC_FAILED;
        r = sim_parallel_for((uint64_t)batch * g.mtasks * g.ntasks, gemm_task, &g, fn);
        for (int i = 0; i < nw; i++) free(g.scratch[i]);
        free(g.scratch);
        if (r == 0 && g.oom) return CUBLAS_STATUS_ALLOC_FAILED;
    }
    return r == 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

/* A cuBLAS GEMM recorded in a graph: every parameter by value (alpha and beta as floats: the
 * simulator's compute types are the 32F ones). Checked when it is replayed. */
typedef struct SimGemmNode {
    const char *fn;                         /* the call, for faults (a string literal) */
    cublasOperation_t transa, transb;       /* operations */
    int m, n, k, lda, ldb, ldc, batch;      /* shape and leading dimensions */
    long long strideA, strideB, strideC;    /* batch strides */
    float alpha, beta;                      /* scalars */
    const void *A, *B;                      /* inputs */
    void *C;                                /* output */
    cudaDataType Atype, Btype, Ctype;       /* storage types */
    cublasComputeType_t compute;            /* compute type */
} SimGemmNode;

CUresult sim_blas_result(cublasStatus_t s, const char *fn) {
    if (s == CUBLAS_STATUS_SUCCESS) return CUDA_SUCCESS;
    if (!*sim_last_fault()) sim_set_fault("%s replayed from a graph: cuBLAS status %d", fn, (int)s);
    return CUDA_ERROR_LAUNCH_FAILED;
}

cublasStatus_t sim_capture_status(CUresult r) {
    if (r == CUDA_SUCCESS) return CUBLAS_STATUS_SUCCESS;
    return r == CUDA_ERROR_OUT_OF_MEMORY ? CUBLAS_STATUS_ALLOC_FAILED : CUBLAS_STATUS_NOT_SUPPORTED;
}

static CUresult replay_gemm(const void *payload) {
    const SimGemmNode *g = payload;
    cublasStatus_t s = sim_gemm_run(g->fn, g->transa, g->transb, g->m, g->n, g->k, &g->alpha, g->A, g->Atype, g->lda,
                                    g->strideA, g->B, g->Btype, g->ldb, g->strideB, &g->beta, g->C, g->Ctype, g->ldc,
                                    g->strideC, g->batch, g->compute);
    return sim_blas_result(s, g->fn);
}

/* Runs g now, or records it when the handle's stream is capturing. */
static cublasStatus_t gemm_or_capture(cublasHandle_t h, const SimGemmNode *g, const void *alpha, const void *beta) {
    if (!sim_capturing((CUstream)h->stream)) {
        sim_count_call(SIM_CALL_GEMM);
        return sim_gemm_run(g->fn, g->transa, g->transb, g->m, g->n, g->k, alpha, g->A, g->Atype, g->lda, g->strideA,
                            g->B, g->Btype, g->ldb, g->strideB, beta, g->C, g->Ctype, g->ldc, g->strideC, g->batch,
                            g->compute);
    }
    if (!alpha || !beta) {
        sim_set_fault("%s: NULL alpha/beta", g->fn);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    SimGemmNode *n = malloc(sizeof *n);
    if (n) {
        *n = *g;
        memcpy(&n->alpha, alpha, sizeof n->alpha);
        memcpy(&n->beta, beta, sizeof n->beta);
    }
    return sim_capture_status(sim_capture_add((CUstream)h->stream, replay_gemm, n, sizeof *n));
}

cublasStatus_t sim_gemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                          int k, const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                          cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                          cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    (void)algo;
    if (!handle || handle->magic != BLAS_MAGIC) return CUBLAS_STATUS_NOT_INITIALIZED;
    const SimGemmNode g = {.fn = "cublasGemmEx", .transa = transa, .transb = transb, .m = m, .n = n, .k = k,
                           .lda = lda, .ldb = ldb, .ldc = ldc, .batch = 1, .A = A, .B = B, .C = C, .Atype = Atype,
                           .Btype = Btype, .Ctype = Ctype, .compute = computeType};
    return gemm_or_capture(handle, &g, alpha, beta);
}

cublasStatus_t sim_gemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                        int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                        int lda, long long strideA, const void *B, cudaDataType Btype, int ldb,
                                        long long strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
                                        long long strideC, int batchCount, cublasComputeType_t computeType,
                                        cublasGemmAlgo_t algo) {
    (void)algo;
    if (!handle || handle->magic != BLAS_MAGIC) return CUBLAS_STATUS_NOT_INITIALIZED;
    const SimGemmNode g = {.fn = "cublasGemmStridedBatchedEx", .transa = transa, .transb = transb, .m = m, .n = n,
                           .k = k, .lda = lda, .ldb = ldb, .ldc = ldc, .batch = batchCount, .strideA = strideA,
                           .strideB = strideB, .strideC = strideC, .A = A, .B = B, .C = C, .Atype = Atype,
                           .Btype = Btype, .Ctype = Ctype, .compute = computeType};
    return gemm_or_capture(handle, &g, alpha, beta);
}
