/*
 * gemm_lt.c — one GEMM with a fused epilogue through cuBLASLt (docs/plan.md,
 * "gemm"): C = epilogue(op(A) op(B)), alpha 1 and beta 0 (C is not read),
 * the epilogue one of bias, relu, bias+relu, GELU (cuBLASLt's tanh
 * approximation) and bias+GELU, the bias m elements of C's type. The
 * descriptors are made and destroyed per call (host-side work only); the
 * algorithm is cuBLASLt's own heuristic choice (algo NULL) without a
 * workspace. The same entry points are the simulator's on the sim backend.
 */
#include "rt_internal.h"

/* The cuBLASLt epilogue for a plan epilogue. */
static cublasLtEpilogue_t lt_epilogue(PlanEpilogue e) {
    switch (e) {
    case PLAN_EPI_BIAS: return CUBLASLT_EPILOGUE_BIAS;
    case PLAN_EPI_RELU: return CUBLASLT_EPILOGUE_RELU;
    case PLAN_EPI_BIAS_RELU: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case PLAN_EPI_GELU_TANH: return CUBLASLT_EPILOGUE_GELU;
    case PLAN_EPI_BIAS_GELU_TANH: return CUBLASLT_EPILOGUE_GELU_BIAS;
    default: return CUBLASLT_EPILOGUE_DEFAULT;
    }
}

/* The matmul descriptor's attributes for g; the status of the first that failed. */
static cublasStatus_t set_desc(const RtDriver *d, cublasLtMatmulDesc_t desc, const RtLtGemm *g) {
    int32_t ta = g->ta, tb = g->tb;
    cublasLtEpilogue_t epi = lt_epilogue(g->epilogue);
    cublasStatus_t s = d->ltMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (s == CUBLAS_STATUS_SUCCESS) s = d->ltMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (s == CUBLAS_STATUS_SUCCESS) s = d->ltMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (s == CUBLAS_STATUS_SUCCESS && plan_epilogue_has_bias(g->epilogue)) {
        int32_t bt = g->ctype;
        s = d->ltMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g->bias, sizeof g->bias);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = d->ltMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    }
    return s;
}

cublasStatus_t rt_gemm_lt(const RtDriver *d, cublasLtHandle_t h, const RtLtGemm *g) {
    cublasLtMatmulDesc_t desc = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    bool at = g->ta != CUBLAS_OP_N, bt = g->tb != CUBLAS_OP_N;
    cublasStatus_t s = d->ltMatmulDescCreate(&desc, g->compute, CUDA_R_32F);
    if (s == CUBLAS_STATUS_SUCCESS) s = set_desc(d, desc, g);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = d->ltMatrixLayoutCreate(&la, g->atype, (uint64_t)(at ? g->k : g->m), (uint64_t)(at ? g->m : g->k), g->lda);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = d->ltMatrixLayoutCreate(&lb, g->btype, (uint64_t)(bt ? g->n : g->k), (uint64_t)(bt ? g->k : g->n), g->ldb);
    if (s == CUBLAS_STATUS_SUCCESS) s = d->ltMatrixLayoutCreate(&lc, g->ctype, (uint64_t)g->m, (uint64_t)g->n, g->ldc);
    if (s == CUBLAS_STATUS_SUCCESS) {
        const float alpha = 1.0f, beta = 0.0f;
        s = d->ltMatmul(h, desc, &alpha, g->A, la, g->B, lb, &beta, g->C, lc, g->C, lc, NULL, NULL, 0,
                        (cudaStream_t)g->stream);
    }
    if (lc) d->ltMatrixLayoutDestroy(lc);
    if (lb) d->ltMatrixLayoutDestroy(lb);
    if (la) d->ltMatrixLayoutDestroy(la);
    if (desc) d->ltMatmulDescDestroy(desc);
    return s;
}
