/*
 * fake_cuda.c — a host-memory stand-in for libcuda.so.1 and libcublas, built
 * as a shared library for test_exec (loaded through $SHORTC_LIBCUDA and
 * $SHORTC_LIBCUBLAS). It lets the plan executor (exec.c) and the cuda
 * driver table (backend_cuda.c) run end to end without a GPU: device memory
 * is host memory, the module image must be a cubin (ELF) and its functions
 * are the host kernels below, GEMMs are computed in plain C with cuBLAS's
 * column-major semantics (f32 only), and the cuBLASLt subset the runtime uses
 * (bias / relu / GELU epilogues, f32). It exports the same versioned names the
 * real libraries do, so the dlsym-after-macro-expansion path is exercised.
 *
 * Fault injection: fake_fail_launch(n) makes the n-th next launch fail.
 * Graphs are never made: fake_capture_mode(0) (the default) refuses
 * cuStreamBeginCapture; fake_capture_mode(1) starts the capture, refuses the
 * operations issued into it and ends it invalidated. Either way the executor
 * must fall back to running the steps one by one (fake_captures counts tries).
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*HostKernel)(void **params, unsigned gx, unsigned bx);

static long outstanding;      /* live memAlloc blocks */
static int fail_launch = -1;  /* launches until a failure (-1: never) */
static int launches, gemms;
static int last_grid, last_smem_limit;

static int capture_mode;      /* 0: cuStreamBeginCapture fails; 1: it starts, and the capture is invalidated */
static int capturing;         /* a capture is under way (mode 1) */
static int captures;          /* cuStreamBeginCapture calls */

long fake_outstanding(void) { return outstanding; }
void fake_capture_mode(int mode) { capture_mode = mode; }
int fake_captures(void) { return captures; }
void fake_fail_launch(int n) { fail_launch = n; }
int fake_launches(void) { return launches; }
int fake_gemms(void) { return gemms; }
int fake_last_grid(void) { return last_grid; }
static int last_gemm_n = -1;   /* n of the last plain GEMM (cublasGemmEx) */
int fake_last_gemm_n(void) { return last_gemm_n; }

/* toy_embed(tok, wte, x, T, scale, counter): x[t, :] = wte[tok[t], :] * scale + *counter; then ++*counter */
static void toy_embed(void **params, unsigned gx, unsigned bx) {
    const int *tok = *(int **)params[0];
    const float *wte = *(float **)params[1];
    float *x = *(float **)params[2];
    int T = *(int *)params[3];
    float scale = *(float *)params[4];
    float *counter = *(float **)params[5];
    for (unsigned b = 0; b < gx; b++)
        for (unsigned t = 0; t < bx; t++) {
            if ((int)b >= T) continue;
            x[b * 4 + t] = wte[tok[b] * 4 + t] * scale + *counter;
        }
    *counter += 1.0f;
}

CUresult cuInit(unsigned flags) { (void)flags; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
    (void)d;
    if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) *v = 8;
    else if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) *v = 0;
    else return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}
static int ctx_token;
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = (CUcontext)&ctx_token; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c) { return c == (CUcontext)&ctx_token ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
static int module_token;
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
    if (memcmp(image, "\x7f" "ELF", 4) != 0) return CUDA_ERROR_INVALID_IMAGE;
    *m = (CUmodule)&module_token;
    outstanding++;
    return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) { (void)m; outstanding--; return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    (void)m;
    if (strcmp(name, "toy_embed") != 0) return CUDA_ERROR_NOT_FOUND;
    *f = (CUfunction)(void *)toy_embed;
    return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
    (void)f;
    if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) last_smem_limit = v;
    return CUDA_SUCCESS;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    void *b = calloc(1, n ? n : 1);
    if (!b) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)b;
    outstanding++;
    return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
    free((void *)(uintptr_t)p);
    outstanding--;
    return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return CUDA_SUCCESS; }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { memset((void *)(uintptr_t)d, v, n); return CUDA_SUCCESS; }
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, CUstream s, void **params, void **extra) {
    (void)gy; (void)gz; (void)by; (void)bz; (void)smem; (void)s; (void)extra;
    if (capturing) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (fail_launch == 0) {
        fail_launch = -1;
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
    if (fail_launch > 0) fail_launch--;
    launches++;
    last_grid = (int)gx;
    ((HostKernel)(void *)f)(params, gx, bx);
    return CUDA_SUCCESS;
}
static int stream_token;
CUresult cuStreamCreate(CUstream *s, unsigned flags) { (void)flags; *s = (CUstream)&stream_token; outstanding++; return CUDA_SUCCESS; }
CUresult cuStreamDestroy_v2(CUstream s) { (void)s; outstanding--; return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream s) { (void)s; return capturing ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS; }
CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode) {
    (void)s; (void)mode;
    captures++;
    if (capture_mode == 0 || capturing) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    capturing = 1;
    return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream s, CUgraph *g) {
    (void)s;
    *g = NULL;
    if (!capturing) return CUDA_ERROR_ILLEGAL_STATE;
    capturing = 0;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec *x, CUgraph g, unsigned long long flags) { (void)x; (void)g; (void)flags; return CUDA_ERROR_INVALID_VALUE; }
CUresult cuGraphExecUpdate_v2(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *info) { (void)x; (void)g; (void)info; return CUDA_ERROR_INVALID_VALUE; }
CUresult cuGraphLaunch(CUgraphExec x, CUstream s) { (void)x; (void)s; return CUDA_ERROR_INVALID_VALUE; }
CUresult cuGraphExecDestroy(CUgraphExec x) { (void)x; return CUDA_ERROR_INVALID_VALUE; }
CUresult cuGraphDestroy(CUgraph g) { (void)g; return CUDA_ERROR_INVALID_VALUE; }
CUresult cuEventCreate(CUevent *e, unsigned flags) { (void)e; (void)flags; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)e; (void)s; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuEventSynchronize(CUevent e) { (void)e; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { (void)ms; (void)a; (void)b; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuEventDestroy_v2(CUevent e) { (void)e; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuGetErrorString(CUresult r, const char **s) {
    *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered" : "fake error";
    return CUDA_SUCCESS;
}

/* ---- cuBLAS ---- */
static int blas_token;
cublasStatus_t cublasCreate_v2(cublasHandle_t *h) { *h = (cublasHandle_t)&blas_token; outstanding++; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) { (void)h; outstanding--; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) { (void)h; (void)s; return CUBLAS_STATUS_SUCCESS; }

static cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float *alpha,
                           const float *A, cudaDataType at, int lda, const float *B, cudaDataType bt, int ldb,
                           const float *beta, float *C, cudaDataType ct, int ldc, cublasComputeType_t comp,
                           cublasGemmAlgo_t algo) {
    if (at != CUDA_R_32F || bt != CUDA_R_32F || ct != CUDA_R_32F || comp != CUBLAS_COMPUTE_32F || algo != CUBLAS_GEMM_DEFAULT)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (lda < (ta == CUBLAS_OP_N ? m : k) || ldb < (tb == CUBLAS_OP_N ? k : n) || ldc < m) return CUBLAS_STATUS_INVALID_VALUE;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double acc = 0;
            for (int p = 0; p < k; p++) {
                float a = ta == CUBLAS_OP_N ? A[i + p * lda] : A[p + i * lda];
                float b = tb == CUBLAS_OP_N ? B[p + j * ldb] : B[j + p * ldb];
                acc += (double)a * b;
            }
            C[i + j * ldc] = (float)(*alpha * acc + (*beta != 0 ? *beta * C[i + j * ldc] : 0));
        }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType at, int lda, const void *B, cudaDataType bt,
                            int ldb, const void *beta, void *C, cudaDataType ct, int ldc, cublasComputeType_t comp,
                            cublasGemmAlgo_t algo) {
    (void)h;
    if (capturing) return CUBLAS_STATUS_NOT_SUPPORTED;
    gemms++;
    last_gemm_n = n;
    return gemm(ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, comp, algo);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void *alpha, const void *A, cudaDataType at, int lda,
                                          long long sa, const void *B, cudaDataType bt, int ldb, long long sb,
                                          const void *beta, void *C, cudaDataType ct, int ldc, long long sc, int batch,
                                          cublasComputeType_t comp, cublasGemmAlgo_t algo) {
    (void)h;
    gemms++;
    for (int i = 0; i < batch; i++) {
        cublasStatus_t s = gemm(ta, tb, m, n, k, alpha, (const float *)A + sa * i, at, lda, (const float *)B + sb * i, bt,
                                ldb, beta, (float *)C + sc * i, ct, ldc, comp, algo);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- cuBLASLt (f32 only; the descriptors live in the opaque structs) ---- */
typedef struct FakeDesc {
    cublasComputeType_t compute;  /* compute type */
    int32_t ta, tb;               /* TRANSA, TRANSB */
    uint32_t epilogue;            /* EPILOGUE */
    const float *bias;            /* BIAS_POINTER */
} FakeDesc;
typedef struct FakeLayout {
    cudaDataType type;            /* element type */
    uint64_t rows, cols;          /* shape */
    int64_t ld;                   /* leading dimension */
} FakeLayout;
static int lt_token, lt_matmuls;
int fake_lt_matmuls(void) { return lt_matmuls; }

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) { *h = (cublasLtHandle_t)&lt_token; outstanding++; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) { (void)h; outstanding--; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t c, cudaDataType_t scale) {
    if (scale != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    *d = calloc(1, sizeof **d);
    if (!*d) return CUBLAS_STATUS_ALLOC_FAILED;
    ((FakeDesc *)*d)->compute = c;
    outstanding++;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) { free(d); outstanding--; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void *buf,
                                              size_t size) {
    FakeDesc *f = (FakeDesc *)d;
    void *dst = a == CUBLASLT_MATMUL_DESC_TRANSA ? (void *)&f->ta : a == CUBLASLT_MATMUL_DESC_TRANSB ? (void *)&f->tb
              : a == CUBLASLT_MATMUL_DESC_EPILOGUE ? (void *)&f->epilogue : a == CUBLASLT_MATMUL_DESC_BIAS_POINTER ? (void *)&f->bias
              : NULL;
    size_t want = a == CUBLASLT_MATMUL_DESC_BIAS_POINTER ? sizeof f->bias : 4;
    if (a == CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE) return size == 4 && *(const int32_t *)buf == CUDA_R_32F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    if (!dst || size != want) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(dst, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType t, uint64_t rows, uint64_t cols, int64_t ld) {
    *l = calloc(1, sizeof **l);
    if (!*l) return CUBLAS_STATUS_ALLOC_FAILED;
    *(FakeLayout *)*l = (FakeLayout){t, rows, cols, ld};
    outstanding++;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) { free(l); outstanding--; return CUBLAS_STATUS_SUCCESS; }
/* Preferences and the heuristic: one algorithm, marked so cublasLtMatmul can tell it was returned. */
#define FAKE_ALGO 0x5a1
static int lt_heuristics;
int fake_lt_heuristics(void) { return lt_heuristics; }
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) {
    *p = calloc(1, sizeof **p);
    if (!*p) return CUBLAS_STATUS_ALLOC_FAILED;
    outstanding++;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) { free(p); outstanding--; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a,
                                                    const void *buf, size_t size) {
    (void)p, (void)buf;
    size_t want = a == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES ? 8 : 4;
    return size == want ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
                                              cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd,
                                              cublasLtMatmulPreference_t p, int want, cublasLtMatmulHeuristicResult_t r[],
                                              int *got) {
    (void)h, (void)a, (void)b, (void)c, (void)dd;
    if (!d || !p || want < 1) return CUBLAS_STATUS_INVALID_VALUE;
    lt_heuristics++;
    memset(&r[0], 0, sizeof r[0]);
    r[0].algo.data[0] = FAKE_ALGO;
    r[0].state = CUBLAS_STATUS_SUCCESS;
    *got = 1;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                              cublasLtMatrixLayout_t Ad, const void *B, cublasLtMatrixLayout_t Bd, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cd, void *D, cublasLtMatrixLayout_t Dd,
                              const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsb, cudaStream_t st) {
    (void)h, (void)st;
    if (capturing) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (!algo || algo->data[0] != FAKE_ALGO || (wsb && !ws)) return CUBLAS_STATUS_INVALID_VALUE;
    const FakeDesc *f = (const FakeDesc *)desc;
    const FakeLayout *a = (const FakeLayout *)Ad, *b = (const FakeLayout *)Bd, *c = (const FakeLayout *)Cd, *d = (const FakeLayout *)Dd;
    if (C != D || c->ld != d->ld || *(const float *)beta != 0) return CUBLAS_STATUS_NOT_SUPPORTED;
    int m = (int)d->rows, n = (int)d->cols, k = (int)(f->ta == CUBLAS_OP_N ? a->cols : a->rows);
    cublasStatus_t s = gemm((cublasOperation_t)f->ta, (cublasOperation_t)f->tb, m, n, k, alpha, A, a->type, (int)a->ld, B,
                            b->type, (int)b->ld, beta, D, d->type, (int)d->ld, f->compute, CUBLAS_GEMM_DEFAULT);
    bool bias = f->epilogue == CUBLASLT_EPILOGUE_BIAS || f->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS || f->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
    bool relu = f->epilogue == CUBLASLT_EPILOGUE_RELU || f->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
    bool gelu = f->epilogue == CUBLASLT_EPILOGUE_GELU || f->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
    for (int j = 0; s == CUBLAS_STATUS_SUCCESS && j < n; j++)
        for (int i = 0; i < m; i++) {
            float *v = (float *)D + i + (size_t)j * (size_t)d->ld;
            if (bias) *v += f->bias[i];
            if (relu && *v < 0) *v = 0;
            if (gelu) *v = 0.5f * *v * (1.0f + tanhf(0.79788456080286536f * (*v + 0.044715f * *v * *v * *v)));
        }
    if (s == CUBLAS_STATUS_SUCCESS) lt_matmuls++;
    return s;
}
