/*
 * sim_blaslt.c — the cuBLASLt subset the runtime uses (GEMMs with a fused
 * epilogue, docs/plan.md "gemm"), on the CPU with cuBLASLt semantics:
 *
 *   cublasLtCreate / cublasLtDestroy
 *   cublasLtMatmulDescCreate / Destroy / SetAttribute   (TRANSA, TRANSB,
 *       EPILOGUE: DEFAULT, BIAS, RELU, RELU_BIAS, GELU, GELU_BIAS; BIAS_POINTER;
 *       BIAS_DATA_TYPE; other attributes are refused)
 *   cublasLtMatrixLayoutCreate / Destroy                (column-major, one matrix)
 *   cublasLtMatmulPreferenceCreate / Destroy / SetAttribute  (MAX_WORKSPACE_BYTES, MIN_ALIGNMENT_{A,B,C,D}_BYTES)
 *   cublasLtMatmulAlgoGetHeuristic                      one algorithm (the simulator's only one), no workspace
 *   cublasLtMatmul                                      D = epilogue(alpha op(A) op(B) + beta C); an algorithm, when
 *                                                       given, must be one the heuristic returned
 *
 * The product is sim_gemm_run's (same numerics as cublasGemmEx, including
 * the compute type's input rounding) into an fp32 scratch matrix; then per
 * element of D, in fp32: + beta C, + bias[row], the activation (relu, or
 * GELU as cuBLASLt computes it: the tanh approximation), one rounding to D's
 * type. C and D may be different buffers. The descriptors live in the
 * opaque structs the header declares (malloc'd), so the handles have the
 * types and sizes real code passes around. A matmul on a capturing stream is
 * recorded with a copy of its descriptors (sim_graph.c) and runs on replay.
 */
#define _GNU_SOURCE
#include "rt_driver.h"
#include "sim.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC optimize("fp-contract=off")

struct cublasLtContext {
    int magic;            /* LT_MAGIC while valid */
};
#define LT_MAGIC 0x17b1a5
#define DESC_MAGIC 0x17de5c
#define LAYOUT_MAGIC 0x171a70
#define PREF_MAGIC 0x17b4ef
#define ALGO_MAGIC 0x17a160

/* What a matmul descriptor holds (inside cublasLtMatmulDescOpaque_t). */
typedef struct LtDesc {
    int magic;                    /* DESC_MAGIC while valid */
    cublasComputeType_t compute;  /* compute type */
    cudaDataType scale;           /* alpha/beta type (CUDA_R_32F only) */
    cublasOperation_t ta, tb;     /* TRANSA, TRANSB */
    cublasLtEpilogue_t epilogue;  /* EPILOGUE */
    const void *bias;             /* BIAS_POINTER (device memory) */
    cudaDataType bias_type;       /* BIAS_DATA_TYPE; -1: D's type (cuBLASLt's default) */
} LtDesc;
_Static_assert(sizeof(LtDesc) <= sizeof(cublasLtMatmulDescOpaque_t), "LtDesc fits the opaque descriptor");

/* What a matrix layout holds (inside cublasLtMatrixLayoutOpaque_t). */
typedef struct LtLayout {
    int magic;          /* LAYOUT_MAGIC while valid */
    cudaDataType type;  /* element type */
    uint64_t rows, cols;/* column-major shape */
    int64_t ld;         /* leading dimension (elements) */
} LtLayout;
_Static_assert(sizeof(LtLayout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "LtLayout fits the opaque layout");

cublasStatus_t sim_ltCreate(cublasLtHandle_t *handle) {
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasLtContext *h = calloc(1, sizeof *h);
    if (!h) return CUBLAS_STATUS_ALLOC_FAILED;
    h->magic = LT_MAGIC;
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t sim_ltDestroy(cublasLtHandle_t handle) {
    if (!handle || handle->magic != LT_MAGIC) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->magic = 0;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t sim_ltMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute, cudaDataType_t scale) {
    if (!desc) return CUBLAS_STATUS_INVALID_VALUE;
    if (scale != CUDA_R_32F) {
        sim_set_fault("cublasLtMatmulDescCreate: scale type %d not supported by the simulator (fp32 only)", (int)scale);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    cublasLtMatmulDescOpaque_t *o = calloc(1, sizeof *o);
    if (!o) return CUBLAS_STATUS_ALLOC_FAILED;
    sim_count_call(SIM_CALL_LT_DESC);
    LtDesc *d = (LtDesc *)o;
    *d = (LtDesc){.magic = DESC_MAGIC, .compute = compute, .scale = scale, .ta = CUBLAS_OP_N, .tb = CUBLAS_OP_N,
                  .epilogue = CUBLASLT_EPILOGUE_DEFAULT, .bias_type = (cudaDataType)-1};
    *desc = o;
    return CUBLAS_STATUS_SUCCESS;
}

static LtDesc *desc_of(cublasLtMatmulDesc_t desc) {
    LtDesc *d = (LtDesc *)desc;
    return d && d->magic == DESC_MAGIC ? d : NULL;
}

cublasStatus_t sim_ltMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
    LtDesc *d = desc_of(desc);
    if (!d) return CUBLAS_STATUS_INVALID_VALUE;
    d->magic = 0;
    free(desc);
    return CUBLAS_STATUS_SUCCESS;
}

/* Copies an attribute value of exactly `want` bytes; false (a fault) otherwise. */
static bool attr_value(void *dst, size_t want, const void *buf, size_t size, int attr) {
    if (!buf || size != want) {
        sim_set_fault("cublasLt SetAttribute: attribute %d takes %zu bytes, got %zu", attr, want, size);
        return false;
    }
    memcpy(dst, buf, want);
    return true;
}

cublasStatus_t sim_ltMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                            const void *buf, size_t size) {
    LtDesc *d = desc_of(desc);
    if (!d) return CUBLAS_STATUS_INVALID_VALUE;
    int32_t i32;
    bool ok;
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB:
        if ((ok = attr_value(&i32, sizeof i32, buf, size, attr))) {
            if (attr == CUBLASLT_MATMUL_DESC_TRANSA) d->ta = (cublasOperation_t)i32;
            else d->tb = (cublasOperation_t)i32;
        }
        break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
        if ((ok = attr_value(&i32, sizeof(uint32_t), buf, size, attr))) d->epilogue = (cublasLtEpilogue_t)i32;
        break;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: ok = attr_value(&d->bias, sizeof d->bias, buf, size, attr); break;
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
        if ((ok = attr_value(&i32, sizeof i32, buf, size, attr))) d->bias_type = (cudaDataType)i32;
        break;
    default:
        sim_set_fault("cublasLtMatmulDescSetAttribute: attribute %d not supported by the simulator", (int)attr);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t sim_ltMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type, uint64_t rows, uint64_t cols,
                                        int64_t ld) {
    if (!layout) return CUBLAS_STATUS_INVALID_VALUE;
    cublasLtMatrixLayoutOpaque_t *o = calloc(1, sizeof *o);
    if (!o) return CUBLAS_STATUS_ALLOC_FAILED;
    *(LtLayout *)o = (LtLayout){.magic = LAYOUT_MAGIC, .type = type, .rows = rows, .cols = cols, .ld = ld};
    *layout = o;
    return CUBLAS_STATUS_SUCCESS;
}

static const LtLayout *layout_of(cublasLtMatrixLayout_t layout) {
    const LtLayout *l = (const LtLayout *)layout;
    return l && l->magic == LAYOUT_MAGIC ? l : NULL;
}

cublasStatus_t sim_ltMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
    LtLayout *l = (LtLayout *)layout;
    if (!layout_of(layout)) return CUBLAS_STATUS_INVALID_VALUE;
    l->magic = 0;
    free(layout);
    return CUBLAS_STATUS_SUCCESS;
}

/* What a matmul preference holds (inside cublasLtMatmulPreferenceOpaque_t). */
typedef struct LtPref {
    int magic;            /* PREF_MAGIC while valid */
    uint64_t workspace;   /* MAX_WORKSPACE_BYTES */
    uint32_t align[4];    /* MIN_ALIGNMENT_{A,B,C,D}_BYTES (cuBLASLt's default 256) */
} LtPref;
_Static_assert(sizeof(LtPref) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "LtPref fits the opaque preference");

cublasStatus_t sim_ltMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
    if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
    cublasLtMatmulPreferenceOpaque_t *o = calloc(1, sizeof *o);
    if (!o) return CUBLAS_STATUS_ALLOC_FAILED;
    *(LtPref *)o = (LtPref){.magic = PREF_MAGIC, .align = {256, 256, 256, 256}};
    *pref = o;
    return CUBLAS_STATUS_SUCCESS;
}

static LtPref *pref_of(cublasLtMatmulPreference_t pref) {
    LtPref *p = (LtPref *)pref;
    return p && p->magic == PREF_MAGIC ? p : NULL;
}

cublasStatus_t sim_ltMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
    LtPref *p = pref_of(pref);
    if (!p) return CUBLAS_STATUS_INVALID_VALUE;
    p->magic = 0;
    free(pref);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t sim_ltMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                  cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                                  size_t size) {
    LtPref *p = pref_of(pref);
    if (!p) return CUBLAS_STATUS_INVALID_VALUE;
    bool ok;
    switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: ok = attr_value(&p->workspace, sizeof p->workspace, buf, size, attr); break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
        ok = attr_value(&p->align[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES], sizeof(uint32_t), buf, size, attr);
        break;
    default:
        sim_set_fault("cublasLtMatmulPreferenceSetAttribute: attribute %d not supported by the simulator", (int)attr);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

/* The simulator's one algorithm: it needs no workspace and any alignment of the element type. */
cublasStatus_t sim_ltMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                            cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                            cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                            cublasLtMatmulPreference_t pref, int requested,
                                            cublasLtMatmulHeuristicResult_t results[], int *returned) {
    if (!handle || handle->magic != LT_MAGIC) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!desc_of(desc) || !layout_of(Adesc) || !layout_of(Bdesc) || !layout_of(Cdesc) || !layout_of(Ddesc) ||
        !pref_of(pref) || requested < 1 || !results || !returned) {
        sim_set_fault("cublasLtMatmulAlgoGetHeuristic: invalid descriptor, layout, preference or result array");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    sim_count_call(SIM_CALL_LT_HEURISTIC);
    memset(&results[0], 0, sizeof results[0]);
    results[0].algo.data[0] = ALGO_MAGIC;
    results[0].workspaceSize = 0;
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}

/* Element i of a matrix of type t as float; v rounded into element i. */
static float get_el(const void *p, cudaDataType t, size_t i) {
    switch (t) {
    case CUDA_R_16F: return rt_f16_to_f32(((const uint16_t *)p)[i]);
    case CUDA_R_16BF: return rt_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}
static void put_el(void *p, cudaDataType t, size_t i, float v) {
    switch (t) {
    case CUDA_R_16F: ((uint16_t *)p)[i] = rt_f32_to_f16(v); break;
    case CUDA_R_16BF: ((uint16_t *)p)[i] = rt_f32_to_bf16(v); break;
    default: ((float *)p)[i] = v; break;
    }
}

/* The epilogue's parts: bias added, activation (0 none, 1 relu, 2 GELU); false for one the simulator lacks. */
static bool epilogue_parts(cublasLtEpilogue_t e, bool *bias, int *act) {
    switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT: *bias = false, *act = 0; return true;
    case CUBLASLT_EPILOGUE_BIAS: *bias = true, *act = 0; return true;
    case CUBLASLT_EPILOGUE_RELU: *bias = false, *act = 1; return true;
    case CUBLASLT_EPILOGUE_RELU_BIAS: *bias = true, *act = 1; return true;
    case CUBLASLT_EPILOGUE_GELU: *bias = false, *act = 2; return true;
    case CUBLASLT_EPILOGUE_GELU_BIAS: *bias = true, *act = 2; return true;
    default: return false;
    }
}

static bool valid_type(cudaDataType t) { return t == CUDA_R_32F || t == CUDA_R_16F || t == CUDA_R_16BF; }

/* The product D = epilogue(alpha op(A) op(B) + beta C) for valid descriptors and pointers. */
static cublasStatus_t lt_matmul_run(const LtDesc *d, const LtLayout *la, const LtLayout *lb, const LtLayout *lc,
                                    const LtLayout *ld, const void *alpha, const void *A, const void *B,
                                    const void *beta, const void *C, void *D) {
    bool has_bias;
    int act;
    if (!epilogue_parts(d->epilogue, &has_bias, &act)) {
        sim_set_fault("cublasLtMatmul: epilogue %d not supported by the simulator", (int)d->epilogue);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    uint64_t m = ld->rows, n = ld->cols;
    uint64_t k = d->ta == CUBLAS_OP_N ? la->cols : la->rows;
    cudaDataType bias_type = (int)d->bias_type == -1 ? ld->type : d->bias_type;
    if (lc->rows != m || lc->cols != n || lc->type != ld->type || (d->ta == CUBLAS_OP_N ? la->rows : la->cols) != m ||
        (d->tb == CUBLAS_OP_N ? lb->rows : lb->cols) != k || (d->tb == CUBLAS_OP_N ? lb->cols : lb->rows) != n ||
        m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff || !valid_type(ld->type) || !valid_type(bias_type) ||
        (has_bias && !d->bias) || ld->ld < (int64_t)m || lc->ld < (int64_t)m) {
        sim_set_fault("cublasLtMatmul: layouts do not describe one product (A %llux%llu, B %llux%llu, C %llux%llu, D "
                      "%llux%llu) or D's type, the bias or a leading dimension is invalid",
                      (unsigned long long)la->rows, (unsigned long long)la->cols, (unsigned long long)lb->rows,
                      (unsigned long long)lb->cols, (unsigned long long)lc->rows, (unsigned long long)lc->cols,
                      (unsigned long long)m, (unsigned long long)n);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
    float *acc = malloc(sizeof *acc * m * n);
    if (!acc) return CUBLAS_STATUS_ALLOC_FAILED;
    const float zero = 0.0f;
    cublasStatus_t s = sim_gemm_run("cublasLtMatmul", d->ta, d->tb, (int)m, (int)n, (int)k, alpha, A, la->type,
                                    (int)la->ld, 0, B, lb->type, (int)lb->ld, 0, &zero, acc, CUDA_R_32F, (int)m, 0, 1,
                                    d->compute);
    if (s == CUBLAS_STATUS_SUCCESS) {
        float b;
        memcpy(&b, beta, sizeof b);
        for (uint64_t j = 0; j < n; j++)
            for (uint64_t i = 0; i < m; i++) {
                float v = acc[j * m + i];
                if (b != 0.0f) v += b * get_el(C, lc->type, j * (uint64_t)lc->ld + i);
                if (has_bias) v += get_el(d->bias, bias_type, i);
                if (act == 1) v = fmaxf(v, 0.0f);
                if (act == 2) v = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
                put_el(D, ld->type, j * (uint64_t)ld->ld + i, v);
            }
    }
    free(acc);
    return s;
}

/* A cublasLtMatmul recorded in a graph: the descriptors' contents when it was issued (they may be
 * destroyed right after), the scalars and the pointers. */
typedef struct LtNode {
    LtDesc desc;                  /* the matmul descriptor */
    LtLayout la, lb, lc, ld;      /* A, B, C, D layouts */
    float alpha, beta;            /* scalars (CUDA_R_32F) */
    const void *A, *B, *C;        /* inputs */
    void *D;                      /* output */
} LtNode;

static CUresult replay_lt(const void *payload) {
    const LtNode *n = payload;
    return sim_blas_result(lt_matmul_run(&n->desc, &n->la, &n->lb, &n->lc, &n->ld, &n->alpha, n->A, n->B, &n->beta,
                                         n->C, n->D),
                           "cublasLtMatmul");
}

cublasStatus_t sim_ltMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                            cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                            const void *C, cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                            const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspace_bytes,
                            cudaStream_t stream) {
    if (!handle || handle->magic != LT_MAGIC) return CUBLAS_STATUS_NOT_INITIALIZED;
    if ((algo && algo->data[0] != ALGO_MAGIC) || (workspace_bytes > 0 && !workspace)) {
        sim_set_fault("cublasLtMatmul: %s", algo && algo->data[0] != ALGO_MAGIC
                                                 ? "an algorithm that cublasLtMatmulAlgoGetHeuristic did not return"
                                                 : "a workspace size without a workspace");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const LtDesc *d = desc_of(desc);
    const LtLayout *la = layout_of(Adesc), *lb = layout_of(Bdesc), *lc = layout_of(Cdesc), *ld = layout_of(Ddesc);
    if (!d || !la || !lb || !lc || !ld || !alpha || !beta || !D) {
        sim_set_fault("cublasLtMatmul: invalid descriptor, layout or pointer");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (!sim_capturing((CUstream)stream)) {
        sim_count_call(SIM_CALL_GEMM);
        return lt_matmul_run(d, la, lb, lc, ld, alpha, A, B, beta, C, D);
    }
    LtNode *n = malloc(sizeof *n);
    if (n) {
        *n = (LtNode){.desc = *d, .la = *la, .lb = *lb, .lc = *lc, .ld = *ld, .A = A, .B = B, .C = C, .D = D};
        memcpy(&n->alpha, alpha, sizeof n->alpha);
        memcpy(&n->beta, beta, sizeof n->beta);
    }
    return sim_capture_status(sim_capture_add((CUstream)stream, replay_lt, n, sizeof *n));
}
