/*
 * fake_cuda.c — a host-memory stand-in for libcuda.so.1 and libcublas, built
 * as a shared library for test_exec (loaded through $SHORTC_LIBCUDA and
 * $SHORTC_LIBCUBLAS). It lets the plan executor (exec.c) and the cuda
 * driver table (backend_cuda.c) run end to end without a GPU: device memory
 * is host memory, the module image must be a cubin (ELF) and its functions
 * are the host kernels below, GEMMs are computed in plain C with cuBLAS's
 * column-major semantics (f32 only). It exports the same versioned names the
 * real libraries do, so the dlsym-after-macro-expansion path is exercised.
 *
 * Fault injection: fake_fail_launch(n) makes the n-th next launch fail.
 */
#include <cublas_v2.h>
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*HostKernel)(void **params, unsigned gx, unsigned bx);

static long outstanding;      /* live memAlloc blocks */
static int fail_launch = -1;  /* launches until a failure (-1: never) */
static int launches, gemms;
static int last_grid, last_smem_limit;

long fake_outstanding(void) { return outstanding; }
void fake_fail_launch(int n) { fail_launch = n; }
int fake_launches(void) { return launches; }
int fake_gemms(void) { return gemms; }
int fake_last_grid(void) { return last_grid; }

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
CUresult cuStreamSynchronize(CUstream s) { (void)s; return CUDA_SUCCESS; }
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
    gemms++;
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
