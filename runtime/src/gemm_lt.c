/*
 * gemm_lt.c — one GEMM with a fused epilogue through cuBLASLt (docs/plan.md,
 * "gemm"): C = epilogue(op(A) op(B)), alpha 1 and beta 0 (C is not read),
 * the epilogue one of bias, relu, bias+relu, GELU (cuBLASLt's tanh
 * approximation) and bias+GELU, the bias m elements of C's type.
 *
 * A session keeps RT_LT_WAYS RtLtPlans per GEMM step, each a matmul
 * descriptor, three layouts and the algorithm cuBLASLt's heuristic chose for
 * the session's workspace and the operands' alignments: two, so a prompt's
 * shape and the one-token decode shape both stay. A call whose shape, types
 * and alignments equal a plan's reuses it and only sets the bias pointer
 * (host-side work); otherwise the least recently used plan is rebuilt. The same entry
 * points are the simulator's on the sim backend, which counts descriptors
 * made and heuristic queries (RtCallCounts).
 */
#include "rt_internal.h"

#include <string.h>

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

/* The largest power of two, at most 256, that divides address p (cuBLASLt's alignment preferences). */
static uint32_t align_of(const void *p) {
    uintptr_t a = (uintptr_t)p;
    uint32_t al = 256;
    while (al > 1 && a % al) al /= 2;
    return al;
}

/* What decides a plan: everything of g but the pointers, and the pointers' alignments. */
static RtLtKey key_of(const RtLtGemm *g, size_t workspace_bytes) {
    RtLtKey k;
    memset(&k, 0, sizeof k); /* compared with memcmp: padding zeroed */
    k.ta = g->ta, k.tb = g->tb;
    k.m = g->m, k.n = g->n, k.k = g->k;
    k.lda = g->lda, k.ldb = g->ldb, k.ldc = g->ldc;
    k.atype = g->atype, k.btype = g->btype, k.ctype = g->ctype;
    k.compute = g->compute;
    k.epilogue = g->epilogue;
    k.align[0] = align_of(g->A), k.align[1] = align_of(g->B), k.align[2] = k.align[3] = align_of(g->C);
    k.workspace = workspace_bytes;
    return k;
}

void rt_lt_plan_release(const RtDriver *d, RtLtPlan *p) {
    if (p->lc) d->ltMatrixLayoutDestroy(p->lc);
    if (p->lb) d->ltMatrixLayoutDestroy(p->lb);
    if (p->la) d->ltMatrixLayoutDestroy(p->la);
    if (p->desc) d->ltMatmulDescDestroy(p->desc);
    memset(p, 0, sizeof *p);
}

/* The matmul descriptor's fixed attributes for g; the status of the first that failed. */
static cublasStatus_t set_desc(const RtDriver *d, cublasLtMatmulDesc_t desc, const RtLtGemm *g) {
    int32_t ta = g->ta, tb = g->tb;
    cublasLtEpilogue_t epi = lt_epilogue(g->epilogue);
    cublasStatus_t s = d->ltMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (s == CUBLAS_STATUS_SUCCESS) s = d->ltMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (s == CUBLAS_STATUS_SUCCESS) s = d->ltMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (s == CUBLAS_STATUS_SUCCESS && plan_epilogue_has_bias(g->epilogue)) {
        int32_t bt = g->ctype;
        s = d->ltMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    }
    return s;
}

/* Asks the heuristic for one algorithm within the key's workspace and alignments. */
static cublasStatus_t choose_algo(const RtDriver *d, cublasLtHandle_t h, RtLtPlan *p) {
    cublasLtMatmulPreference_t pref = NULL;
    cublasStatus_t s = d->ltMatmulPreferenceCreate(&pref);
    uint64_t ws = p->key.workspace;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = d->ltMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    static const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && s == CUBLAS_STATUS_SUCCESS; i++)
        s = d->ltMatmulPreferenceSetAttribute(pref, align_attr[i], &p->key.align[i], sizeof p->key.align[i]);
    cublasLtMatmulHeuristicResult_t r;
    int found = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = d->ltMatmulAlgoGetHeuristic(h, p->desc, p->la, p->lb, p->lc, p->lc, pref, 1, &r, &found);
    if (s == CUBLAS_STATUS_SUCCESS && (found < 1 || r.state != CUBLAS_STATUS_SUCCESS)) s = CUBLAS_STATUS_NOT_SUPPORTED;
    if (s == CUBLAS_STATUS_SUCCESS) p->algo = r.algo;
    if (pref) d->ltMatmulPreferenceDestroy(pref);
    return s;
}

/* Makes plan p for g (p empty); on failure p is left empty. */
static cublasStatus_t build_plan(const RtDriver *d, cublasLtHandle_t h, RtLtPlan *p, const RtLtGemm *g,
                                 const RtLtKey *key) {
    bool at = g->ta != CUBLAS_OP_N, bt = g->tb != CUBLAS_OP_N;
    p->key = *key;
    cublasStatus_t s = d->ltMatmulDescCreate(&p->desc, g->compute, CUDA_R_32F);
    if (s == CUBLAS_STATUS_SUCCESS) s = set_desc(d, p->desc, g);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = d->ltMatrixLayoutCreate(&p->la, g->atype, (uint64_t)(at ? g->k : g->m), (uint64_t)(at ? g->m : g->k), g->lda);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = d->ltMatrixLayoutCreate(&p->lb, g->btype, (uint64_t)(bt ? g->n : g->k), (uint64_t)(bt ? g->k : g->n), g->ldb);
    if (s == CUBLAS_STATUS_SUCCESS) s = d->ltMatrixLayoutCreate(&p->lc, g->ctype, (uint64_t)g->m, (uint64_t)g->n, g->ldc);
    if (s == CUBLAS_STATUS_SUCCESS) s = choose_algo(d, h, p);
    if (s == CUBLAS_STATUS_SUCCESS) p->ready = true;
    else rt_lt_plan_release(d, p);
    return s;
}

/* The plan of set for key: the one built for it, else the least recently used one, emptied. */
static RtLtPlan *pick_plan(const RtDriver *d, RtLtPlan set[RT_LT_WAYS], const RtLtKey *key) {
    RtLtPlan *p = NULL, *lru = &set[0];
    unsigned long stamp = 0;
    for (int w = 0; w < RT_LT_WAYS; w++) {
        if (set[w].ready && memcmp(&set[w].key, key, sizeof *key) == 0) p = &set[w];
        if (set[w].last_use < lru->last_use) lru = &set[w];
        if (set[w].last_use > stamp) stamp = set[w].last_use;
    }
    if (!p) {
        p = lru;
        rt_lt_plan_release(d, p);
    }
    p->last_use = stamp + 1;
    return p;
}

cublasStatus_t rt_gemm_lt(const RtDriver *d, cublasLtHandle_t h, RtLtPlan set[RT_LT_WAYS], const RtLtGemm *g) {
    RtLtKey key = key_of(g, g->workspace_bytes);
    RtLtPlan *p = pick_plan(d, set, &key);
    cublasStatus_t s = p->ready ? CUBLAS_STATUS_SUCCESS : build_plan(d, h, p, g, &key);
    if (s == CUBLAS_STATUS_SUCCESS && plan_epilogue_has_bias(g->epilogue))
        s = d->ltMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g->bias, sizeof g->bias);
    if (s == CUBLAS_STATUS_SUCCESS) {
        const float alpha = 1.0f, beta = 0.0f;
        s = d->ltMatmul(h, p->desc, &alpha, g->A, p->la, g->B, p->lb, &beta, g->C, p->lc, g->C, p->lc, &p->algo,
                        g->workspace, g->workspace_bytes, (cudaStream_t)g->stream);
    }
    return s;
}
