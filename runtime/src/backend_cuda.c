/*
 * backend_cuda.c — the cuda driver table and the NVRTC compile path.
 *
 * Nothing here is linked against libcuda or libcublas: rt_driver_cuda
 * dlopens libcuda.so.1, libcublas and libcublasLt and dlsyms every entry of the RtDriver
 * table, so libshortrt loads (and the sim and ref backends run) on machines
 * without a driver. cuda.h and cublas_v2.h map many names to versioned
 * symbols (cuMemAlloc -> cuMemAlloc_v2, cublasCreate -> cublasCreate_v2);
 * SYM_NAME stringifies after macro expansion so the versioned name is looked
 * up, the one the header's prototype describes.
 *
 * $SHORTC_LIBCUDA, $SHORTC_LIBCUBLAS, $SHORTC_LIBCUBLASLT and $SHORTC_LIBNVRTC name other libraries to
 * load (a specific driver install; the tests' fake driver).
 *
 * compile_module is rt_nvrtc_compile: NVRTC (dlopened on first use by common/dynlib.c, so the library
 * loads without it; it needs no driver) compiles the emitted .cu to a cubin for the device's sm_XY, through the
 * artifact cache. The cache key hashes the source, the options, the arch,
 * the NVRTC version and RT_NVRTC_PRELUDE_VERSION (bump it when the way the
 * runtime builds kernels changes without the source changing).
 */
#define _GNU_SOURCE
#include "dynlib.h"
#include "rt_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RT_NVRTC_PRELUDE_VERSION "shortc-nvrtc-1"

/* ------------------------------------------------------------------ */
/* NVRTC                                                               */
/* ------------------------------------------------------------------ */

#ifndef SHORTC_CUDA_INCLUDE
#define SHORTC_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

const char *rt_cuda_include_dirs(void) {
    const char *env = getenv("SHORTC_CUDA_INCLUDE");
    return env && *env ? env : SHORTC_CUDA_INCLUDE;
}

/* -I options for rt_cuda_include_dirs() */
static char cuda_incs[8][1100];
static int ncuda_incs;
static pthread_once_t incs_once = PTHREAD_ONCE_INIT;
static void split_includes(void) {
    const char *s = rt_cuda_include_dirs();
    while (*s && ncuda_incs < 8) {
        const char *e = strpbrk(s, ";:");
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n > 0 && n < 1000) snprintf(cuda_incs[ncuda_incs++], sizeof cuda_incs[0], "-I%.*s", (int)n, s);
        s += n + (e ? 1 : 0);
    }
}

/* The NVRTC options for arch (archbuf holds the first); returns their count. */
static int nvrtc_options(int arch, const char **opts, int max, char *archbuf, size_t archlen) {
    pthread_once(&incs_once, split_includes);
    snprintf(archbuf, archlen, "--gpu-architecture=sm_%d", arch);
    int n = 0;
    if (n < max) opts[n++] = archbuf;
    if (n < max) opts[n++] = "--std=c++17";
    if (n < max) opts[n++] = "-DNDEBUG";
    for (int i = 0; i < ncuda_incs && n < max; i++) opts[n++] = cuda_incs[i];
    return n;
}

/* A cached cubin must be a whole CUDA ELF image (a 100-byte file with a matching meta is not). */
static int check_cubin(const void *data, size_t len) { return rt_elf_check(data, len, EM_CUDA); }

const NvrtcApi *rt_nvrtc(char *err, size_t errlen) { return dynlib_nvrtc(getenv("SHORTC_LIBNVRTC"), err, errlen); }

/* Compiles req with NVRTC nv (version vmaj.vmin; options opts, the cubin named after name) into out->image. */
static srt_status nvrtc_build(const NvrtcApi *nv, int vmaj, int vmin, const RtCompileRequest *req,
                              const char *const *opts, int nopts, const char *name, RtCompiled *out, char *err,
                              size_t errlen) {
    double t0 = rt_now_ms();
    nvrtcProgram prog;
    char *src = malloc(req->len + 1); /* NVRTC wants a NUL-terminated string */
    if (!src) {
        snprintf(err, errlen, "out of memory");
        return SRT_ERR_NOMEM;
    }
    memcpy(src, req->source, req->len);
    src[req->len] = 0;
    char cuname[80];
    snprintf(cuname, sizeof cuname, "%s.cu", name);
    nvrtcResult r = nv->createProgram(&prog, src, cuname, 0, NULL, NULL);
    free(src);
    if (r != NVRTC_SUCCESS) {
        snprintf(err, errlen, "NVRTC: cannot create a program for '%s': %s", req->name ? req->name : "?", nv->getErrorString(r));
        return SRT_ERR_COMPILE;
    }
    r = nv->compileProgram(prog, nopts, opts);
    if (r != NVRTC_SUCCESS) {
        size_t loglen = 0;
        char *log = NULL;
        if (nv->getProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && loglen > 0 && (log = malloc(loglen + 1)) &&
            nv->getProgramLog(prog, log) == NVRTC_SUCCESS)
            log[loglen] = 0;
        else if (log) log[0] = 0;
        int supported = 0;
        int archs[64];
        int narchs = 0;
        if (nv->getNumSupportedArchs(&narchs) == NVRTC_SUCCESS && narchs <= 64 && nv->getSupportedArchs(archs) == NVRTC_SUCCESS)
            for (int i = 0; i < narchs; i++) supported |= archs[i] == req->arch;
        else supported = 1;
        snprintf(err, errlen, "NVRTC %d.%d failed to compile the kernels of '%s' for sm_%d: %s%s\n%s", vmaj, vmin,
                 req->name ? req->name : "?", req->arch, nv->getErrorString(r),
                 supported ? "" : " (this NVRTC does not support that architecture)", log ? log : "");
        free(log);
        nv->destroyProgram(&prog);
        return SRT_ERR_COMPILE;
    }
    size_t size = 0;
    r = nv->getCUBINSize(prog, &size);
    void *cubin = r == NVRTC_SUCCESS && size > 0 ? malloc(size) : NULL;
    if (!cubin || nv->getCUBIN(prog, cubin) != NVRTC_SUCCESS) {
        free(cubin);
        nv->destroyProgram(&prog);
        snprintf(err, errlen, "NVRTC produced no cubin for '%s' (sm_%d)", req->name ? req->name : "?", req->arch);
        return SRT_ERR_COMPILE;
    }
    nv->destroyProgram(&prog);
    out->compile_ms = rt_now_ms() - t0;
    out->image = cubin;
    out->image_len = size;
    return SRT_OK;
}

srt_status rt_nvrtc_compile(const RtCompileRequest *req, RtCompiled *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    const NvrtcApi *nv = rt_nvrtc(err, errlen);
    if (!nv) return SRT_ERR_COMPILE;
    int vmaj = 0, vmin = 0;
    nv->version(&vmaj, &vmin);
    const char *opts[16];
    char archopt[64];
    int nopts = nvrtc_options(req->arch, opts, 16, archopt, sizeof archopt);

    /* key */
    uint64_t h = rt_hash64(RT_HASH_SEED, req->source, req->len);
    for (int i = 0; i < nopts; i++) h = rt_hash64(h, opts[i], strlen(opts[i]) + 1);
    char extra[128];
    int n = snprintf(extra, sizeof extra, "arch=%d nvrtc=%d.%d %s", req->arch, vmaj, vmin, RT_NVRTC_PRELUDE_VERSION);
    h = rt_hash64(h, extra, (size_t)n);
    char name[49], key[128], path[1200]; /* name: at most 48 characters of the model's */
    rt_cache_safe_name(req->name ? req->name : "kernels", name, sizeof name);
    snprintf(key, sizeof key, "%s-sm%d-%016llx", name, req->arch, (unsigned long long)h);

    RtCache cache;
    bool have_cache = req->cache_dir && rt_cache_open(&cache, req->cache_dir, out->note, sizeof out->note) == 0;
    if (have_cache && req->rebuild) rt_cache_evict(&cache, key, "cubin");
    else if (have_cache && rt_cache_load(&cache, key, "cubin", check_cubin, path, sizeof path, &out->image, &out->image_len)) {
        out->cache_hit = 1;
        rt_cache_close(&cache);
        return SRT_OK;
    }
    if (have_cache) out->cache_corrupt = cache.corrupt > 0;
    srt_status st = nvrtc_build(nv, vmaj, vmin, req, opts, nopts, name, out, err, errlen);

    /* a cache that cannot be written only costs the next run a compile */
    if (st == SRT_OK && have_cache && rt_cache_store(&cache, key, "cubin", out->image, out->image_len, path, sizeof path) != 0)
        snprintf(out->note, sizeof out->note, "kernel cache %s: cannot store the cubin: %s", cache.dir, strerror(errno));
    if (have_cache) rt_cache_close(&cache);
    return st;
}

srt_status srt_nvrtc_compile(srt_context *ctx, const char *source, size_t len, int arch, srt_compile_info *info) {
    if (!ctx) return SRT_ERR_INVALID;
    if (!source || arch < 10) return rt_error(ctx, SRT_ERR_INVALID, "srt_nvrtc_compile: need a source and an arch such as 80");
    char dir[1024];
    rt_default_cache_dir(dir, sizeof dir);
    const char *json;
    size_t jlen;
    char name[128] = "kernels";
    RtPlan plan;
    /* name the cache entry after the model when the source carries a plan */
    if (rt_plan_extract(ctx, "source", source, len, &json, &jlen) == SRT_OK &&
        rt_plan_parse(ctx, "source", json, jlen, &plan) == SRT_OK) {
        snprintf(name, sizeof name, "%s", plan.model);
        rt_plan_free(ctx, &plan);
    }
    RtCompileRequest req = {.source = source, .len = len, .name = name, .arch = arch, .cache_dir = dir};
    RtCompiled out;
    char err[RT_ERR_MAX];
    srt_status st = rt_nvrtc_compile(&req, &out, err, sizeof err);
    if (st != SRT_OK) return rt_error(ctx, st, "%s", err);
    if (info) {
        info->compile_ms = out.compile_ms;
        info->cache_hit = out.cache_hit;
        info->image_bytes = out.image_len;
    }
    rt_compiled_release(&out);
    ctx->err[0] = 0;
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* The driver table                                                    */
/* ------------------------------------------------------------------ */

/* dlopens $env when set, else the first of names (n entries) that loads; NULL and the first error in why. */
static void *open_library(const char *env, const char *const *names, size_t n, char *why, size_t whylen) {
    const char *given = getenv(env);
    if (given && *given) {
        names = &given;
        n = 1;
    }
    return dynlib_open_first(names, n, why, whylen);
}

#define SYM_STR(x) #x
#define SYM_NAME(x) SYM_STR(x) /* expands cuMemAlloc -> "cuMemAlloc_v2" first */

srt_status rt_driver_cuda(RtDriver *d, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    const char *libname = getenv("SHORTC_LIBCUDA");
    if (!libname || !*libname) libname = "libcuda.so.1";
    void *cu = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
    if (!cu) {
        snprintf(err, errlen, "no CUDA driver found (%s); use --backend sim to run on the CPU simulator", dlerror());
        return SRT_ERR_NO_DEVICE;
    }
    const char *missing = NULL;
#define LOAD(lib, field, sym)                                        \
    do {                                                             \
        *(void **)&d->field = dlsym(lib, SYM_NAME(sym));             \
        if (!d->field && !missing) missing = SYM_NAME(sym);          \
    } while (0)
    LOAD(cu, init, cuInit);
    LOAD(cu, deviceGet, cuDeviceGet);
    LOAD(cu, deviceGetAttribute, cuDeviceGetAttribute);
    LOAD(cu, primaryCtxRetain, cuDevicePrimaryCtxRetain);
    LOAD(cu, primaryCtxRelease, cuDevicePrimaryCtxRelease);
    LOAD(cu, ctxSetCurrent, cuCtxSetCurrent);
    LOAD(cu, moduleLoadData, cuModuleLoadData);
    LOAD(cu, moduleUnload, cuModuleUnload);
    LOAD(cu, moduleGetFunction, cuModuleGetFunction);
    LOAD(cu, funcSetAttribute, cuFuncSetAttribute);
    LOAD(cu, memAlloc, cuMemAlloc);
    LOAD(cu, memFree, cuMemFree);
    LOAD(cu, memcpyHtoD, cuMemcpyHtoD);
    LOAD(cu, memcpyDtoH, cuMemcpyDtoH);
    LOAD(cu, memsetD8, cuMemsetD8);
    /* optional: drivers before CUDA 12 have no TMA (the field stays NULL; Hopper kernels need it) */
    *(void **)&d->tensorMapEncodeTiled = dlsym(cu, "cuTensorMapEncodeTiled");
    LOAD(cu, launchKernel, cuLaunchKernel);
    LOAD(cu, streamCreate, cuStreamCreate);
    LOAD(cu, streamDestroy, cuStreamDestroy);
    LOAD(cu, streamSynchronize, cuStreamSynchronize);
    LOAD(cu, eventCreate, cuEventCreate);
    LOAD(cu, eventRecord, cuEventRecord);
    LOAD(cu, eventSynchronize, cuEventSynchronize);
    LOAD(cu, eventElapsedTime, cuEventElapsedTime);
    LOAD(cu, eventDestroy, cuEventDestroy);
    LOAD(cu, getErrorString, cuGetErrorString);
    LOAD(cu, streamBeginCapture, cuStreamBeginCapture);
    LOAD(cu, streamEndCapture, cuStreamEndCapture);
    LOAD(cu, graphInstantiate, cuGraphInstantiate);
    LOAD(cu, graphExecUpdate, cuGraphExecUpdate);
    LOAD(cu, graphLaunch, cuGraphLaunch);
    LOAD(cu, graphExecDestroy, cuGraphExecDestroy);
    LOAD(cu, graphDestroy, cuGraphDestroy);
    if (missing) {
        snprintf(err, errlen, "the CUDA driver %s lacks %s (driver too old?); use --backend sim to run on the CPU simulator",
                 libname, missing);
        dlclose(cu);
        return SRT_ERR_NO_DEVICE;
    }
    CUresult r = d->init(0);
    int count = 0;
    if (r == CUDA_SUCCESS) {
        __typeof__(&cuDeviceGetCount) get_count = (__typeof__(&cuDeviceGetCount))dlsym(cu, SYM_NAME(cuDeviceGetCount));
        if (get_count) r = get_count(&count);
    }
    if (r != CUDA_SUCCESS || count < 1) {
        const char *desc = NULL;
        if (r != CUDA_SUCCESS && d->getErrorString(r, &desc) != CUDA_SUCCESS) desc = NULL;
        snprintf(err, errlen, "no CUDA device available (%s); use --backend sim to run on the CPU simulator",
                 r != CUDA_SUCCESS ? (desc ? desc : "cuInit failed") : "the driver reports no devices");
        dlclose(cu);
        return SRT_ERR_NO_DEVICE;
    }
    static const char *const blas_names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    static const char *const lt_names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
    char blas_err[512];
    void *blas = open_library("SHORTC_LIBCUBLAS", blas_names, 3, blas_err, sizeof blas_err);
    void *lt = blas ? open_library("SHORTC_LIBCUBLASLT", lt_names, 3, blas_err, sizeof blas_err) : NULL;
    if (!blas || !lt) {
        snprintf(err, errlen, "%s not found (%s); use --backend sim to run on the CPU simulator", blas ? "cuBLASLt" : "cuBLAS",
                 blas_err);
        if (blas) dlclose(blas);
        dlclose(cu);
        return SRT_ERR_NO_DEVICE;
    }
    LOAD(blas, blasCreate, cublasCreate);
    LOAD(blas, blasDestroy, cublasDestroy);
    LOAD(blas, blasSetStream, cublasSetStream);
    LOAD(blas, gemmEx, cublasGemmEx);
    LOAD(blas, gemmStridedBatchedEx, cublasGemmStridedBatchedEx);
    LOAD(lt, ltCreate, cublasLtCreate);
    LOAD(lt, ltDestroy, cublasLtDestroy);
    LOAD(lt, ltMatmulDescCreate, cublasLtMatmulDescCreate);
    LOAD(lt, ltMatmulDescDestroy, cublasLtMatmulDescDestroy);
    LOAD(lt, ltMatmulDescSetAttribute, cublasLtMatmulDescSetAttribute);
    LOAD(lt, ltMatrixLayoutCreate, cublasLtMatrixLayoutCreate);
    LOAD(lt, ltMatrixLayoutDestroy, cublasLtMatrixLayoutDestroy);
    LOAD(lt, ltMatmul, cublasLtMatmul);
    LOAD(lt, ltMatmulPreferenceCreate, cublasLtMatmulPreferenceCreate);
    LOAD(lt, ltMatmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy);
    LOAD(lt, ltMatmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute);
    LOAD(lt, ltMatmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic);
#undef LOAD
    char nvrtc_err[768];
    if (missing || !rt_nvrtc(nvrtc_err, sizeof nvrtc_err)) { /* the backend compiles its kernels with NVRTC */
        if (missing) snprintf(err, errlen, "cuBLAS/cuBLASLt lacks %s; use --backend sim to run on the CPU simulator", missing);
        else snprintf(err, errlen, "%s; use --backend sim to run on the CPU simulator", nvrtc_err);
        dlclose(lt);
        dlclose(blas);
        dlclose(cu);
        return SRT_ERR_NO_DEVICE;
    }
    d->name = "cuda";
    d->backend = SRT_BACKEND_CUDA;
    d->compile_module = rt_nvrtc_compile;
    d->last_fault = NULL;
    d->lib_cuda = cu;
    d->lib_cublas = blas;
    d->lib_cublaslt = lt;
    return SRT_OK;
}
