/*
 * attention.c — attention kinds as functions (srt_attention_*; shortrt.h):
 * one kind's kernel run on q, k, v laid out [batch, heads, tokens, dim].
 *
 * The plan checks the kind and its parameters with the compiler's messages
 * (rt_attention_check in backend_ref.c, the runtime's one door to the
 * compiler) and opens a driver (the simulator, or CUDA's primary context of
 * the device). A run picks the token class (a power of two >= 64 holding the
 * call's tokens: the key lists and seeded tables the kernel embeds cover that
 * many positions, and seeded rows do not depend on it), renders that class's
 * kernel once (rt_attention_render), compiles and loads it through the kernel
 * cache, and launches it once per sequence of the batch. The kernels take the
 * model layout: queries inside a [T, 3*H*D] qkv row, keys and values
 * [2, H, T, D], output [T, H*D]; the call's layout is packed into it and out
 * of it on the device by two more kernels of the same module
 * (templates/attn_fn_pack.cuh). On cuda they read and write the caller's
 * device tensors; on sim the caller's host tensors are copied in and out.
 */
#include "rt_driver.h"
#include "rt_internal.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_CLASSES = 16,       /* token classes one plan compiles (64 << 15 tokens at most) */
    MIN_CLASS = 64,         /* the smallest token class */
    MAX_HEAD_DIM = 128,     /* the engines' widest head (attn_mma.cuh's MMA_MAX_HD; the CUDA-core tiles) */
    MAX_HEADS = 1024,       /* the grid's y extent kept well inside every limit */
    ENGINE_WARPS = 4,       /* warps per block of both paths (attn_render's WARPS) */
    MAX_PARAMS = 8,         /* parameters of a kind (the kind table's MAX_ATTN_PARAMS) */
    NAME_MAX_LEN = 64,      /* bytes of a kind, parameter or dtype name kept by the plan */
    PACK_THREADS = 256,     /* block width of the layout kernels (templates/attn_fn_pack.cuh) */
    PACK_MAX_BLOCKS = 1024, /* their most blocks (grid-stride loops beyond) */
};

/* One compiled token class. */
typedef struct AttnClass {
    int ntok;               /* positions its kernel covers */
    CUmodule mod;           /* the loaded module */
    CUfunction fn;          /* its attention kernel */
    CUfunction pack, unpack; /* its layout kernels (templates/attn_fn_pack.cuh) */
    int smem;               /* dynamic shared memory per block */
    int qt, grid_pad;       /* blocks along x for T queries: (T + grid_pad + qt - 1) / qt */
} AttnClass;

struct srt_attention_plan {
    srt_context *ctx;       /* owner: allocator and errors */
    srt_attention_desc desc; /* the caller's, checked; its strings point into the names below */
    char kind[NAME_MAX_LEN], dtype[NAME_MAX_LEN];   /* copies of the kind and dtype names */
    srt_attention_param params[MAX_PARAMS];         /* copies of the parameters */
    char param_names[MAX_PARAMS][NAME_MAX_LEN];     /* and of their names */
    int heads, hd;          /* H, D */
    size_t es;              /* bytes per element */
    RtDriver drv;           /* the driver: simulator or CUDA */
    CUcontext cuctx;        /* cuda: the device's primary context (retained) */
    CUdevice dev;           /* its device */
    int arch;               /* compute capability * 10 (80 on sim) */
    char cache_dir[1024];   /* the kernel cache */
    AttnClass classes[MAX_CLASSES]; /* compiled token classes */
    int nclasses;           /* entries used */
    double compile_ms;      /* compile time of them all (0 for cache hits) */
};

void srt_attention_desc_init(srt_attention_desc *d) {
    memset(d, 0, sizeof *d);
    d->kind = "causal";
    d->dtype = "fp32";
    d->backend = SRT_BACKEND_SIM;
    d->sim_checked = 1;
}

/* Bytes per element of dtype (NULL: fp32); 0 for another name. */
static size_t dtype_bytes(const char *name) {
    if (!name || strcmp(name, "fp32") == 0) return 4;
    return strcmp(name, "fp16") == 0 || strcmp(name, "bf16") == 0 ? 2 : 0;
}

/* The descriptor's shape, dtype and backend; SRT_ERR_INVALID naming the first bad one. */
static srt_status check_desc(srt_context *ctx, const srt_attention_desc *d) {
    if (d->heads < 1 || d->heads > MAX_HEADS)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_attention: heads=%d must be in [1, %d]", d->heads, MAX_HEADS);
    if (d->head_dim < 1 || d->head_dim > MAX_HEAD_DIM)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_attention: head_dim=%d must be in [1, %d]", d->head_dim, MAX_HEAD_DIM);
    if (!dtype_bytes(d->dtype))
        return rt_error(ctx, SRT_ERR_INVALID, "srt_attention: dtype '%s' is not fp32, fp16 or bf16", d->dtype);
    if (!(d->scale >= 0) || !isfinite(d->scale))
        return rt_error(ctx, SRT_ERR_INVALID, "srt_attention: scale=%g must be finite and >= 0 (0: 1/sqrt(head_dim))",
                        d->scale);
    if (d->backend != SRT_BACKEND_SIM && d->backend != SRT_BACKEND_CUDA)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_attention: backend %s: say sim (host pointers) or cuda (device "
                        "pointers)", srt_backend_name(d->backend));
    if (d->nparams < 0 || d->nparams > MAX_PARAMS || (d->nparams > 0 && !d->params))
        return rt_error(ctx, SRT_ERR_INVALID, "srt_attention: 0 to %d parameters", MAX_PARAMS);
    for (int i = 0; i < d->nparams; i++)
        if (!d->params[i].name || strlen(d->params[i].name) >= NAME_MAX_LEN)
            return rt_error(ctx, SRT_ERR_INVALID, "srt_attention: parameter %d has no name or one of %d bytes or more",
                            i, NAME_MAX_LEN);
    if (d->kind && strlen(d->kind) >= NAME_MAX_LEN)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_attention: a kind name of %d bytes or more", NAME_MAX_LEN);
    return SRT_OK;
}

/* The plan's own copy of d (its strings copied; cache_dir resolved separately). */
static void keep_desc(srt_attention_plan *p, const srt_attention_desc *d) {
    p->desc = *d;
    snprintf(p->kind, sizeof p->kind, "%s", d->kind ? d->kind : "causal");
    snprintf(p->dtype, sizeof p->dtype, "%s", d->dtype ? d->dtype : "fp32");
    for (int i = 0; i < d->nparams; i++) {
        snprintf(p->param_names[i], NAME_MAX_LEN, "%s", d->params[i].name);
        p->params[i] = (srt_attention_param){p->param_names[i], d->params[i].value};
    }
    p->desc.kind = p->kind;
    p->desc.dtype = p->dtype;
    p->desc.params = p->params;
    p->desc.cache_dir = NULL;
}

/* Opens the plan's driver (and on cuda the device's primary context). */
static srt_status open_driver(srt_attention_plan *p, const srt_attention_desc *d) {
    char err[1024];
    srt_status st = d->backend == SRT_BACKEND_SIM ? rt_driver_sim(&p->drv, d->sim_threads, d->sim_checked, err, sizeof err)
                                                  : rt_driver_cuda(&p->drv, err, sizeof err);
    if (st != SRT_OK) return rt_error(p->ctx, st, "%s", err);
    p->arch = 80;
    if (d->backend == SRT_BACKEND_SIM) return SRT_OK;
    CUresult r;
    CUcontext cc = NULL;
    if ((r = p->drv.init(0)) != CUDA_SUCCESS || (r = p->drv.deviceGet(&p->dev, d->device)) != CUDA_SUCCESS ||
        (r = p->drv.primaryCtxRetain(&cc, p->dev)) != CUDA_SUCCESS)
        return rt_error(p->ctx, SRT_ERR_DRIVER, "srt_attention: cuda device %d: CUresult %d", d->device, (int)r);
    p->cuctx = cc; /* released by srt_attention_plan_destroy from here on */
    if ((r = p->drv.ctxSetCurrent(cc)) != CUDA_SUCCESS)
        return rt_error(p->ctx, SRT_ERR_DRIVER, "srt_attention: cuda device %d: cuCtxSetCurrent: CUresult %d", d->device,
                        (int)r);
    int major = 0, minor = 0;
    if (p->drv.deviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, p->dev) == CUDA_SUCCESS &&
        p->drv.deviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, p->dev) == CUDA_SUCCESS && major > 0)
        p->arch = major * 10 + minor;
    return SRT_OK;
}

srt_status srt_attention_plan_create(srt_context *ctx, const srt_attention_desc *d, srt_attention_plan **out) {
    if (!ctx) return SRT_ERR_INVALID;
    if (!d || !out) return rt_error(ctx, SRT_ERR_INVALID, "srt_attention_plan_create: d and out must not be NULL");
    *out = NULL;
    srt_status st = check_desc(ctx, d);
    if (st == SRT_OK) st = rt_attention_check(ctx, d);
    if (st != SRT_OK) return st;
    srt_attention_plan *p = rt_alloc(ctx, sizeof *p);
    if (!p) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    p->ctx = ctx;
    keep_desc(p, d);
    p->heads = d->heads;
    p->hd = d->head_dim;
    p->es = dtype_bytes(d->dtype);
    if (d->cache_dir && *d->cache_dir) snprintf(p->cache_dir, sizeof p->cache_dir, "%s", d->cache_dir);
    else rt_default_cache_dir(p->cache_dir, sizeof p->cache_dir);
    st = open_driver(p, d);
    if (st != SRT_OK) {
        srt_attention_plan_destroy(p);
        return st;
    }
    *out = p;
    return SRT_OK;
}

void srt_attention_plan_destroy(srt_attention_plan *p) {
    if (!p) return;
    if (p->cuctx) p->drv.ctxSetCurrent(p->cuctx);
    for (int i = 0; i < p->nclasses; i++)
        if (p->classes[i].mod) p->drv.moduleUnload(p->classes[i].mod);
    if (p->cuctx) p->drv.primaryCtxRelease(p->dev);
    if (p->drv.lib_cublaslt) dlclose(p->drv.lib_cublaslt); /* the libraries rt_driver_cuda opened (as exec.c) */
    if (p->drv.lib_cublas) dlclose(p->drv.lib_cublas);
    if (p->drv.lib_cuda) dlclose(p->drv.lib_cuda);
    rt_free(p->ctx, p);
}

int srt_attention_plan_modules(const srt_attention_plan *p, double *compile_ms) {
    if (compile_ms) *compile_ms = p ? p->compile_ms : 0;
    return p ? p->nclasses : 0;
}

/* Renders, compiles and loads class c (c->ntok set). */
static srt_status compile_class(srt_attention_plan *p, AttnClass *c) {
    RtAttnKernel k;
    srt_status st = rt_attention_render(p->ctx, &p->desc, c->ntok, &k);
    if (st != SRT_OK) return st;
    c->smem = k.smem;
    c->qt = k.qt;
    c->grid_pad = k.grid_pad;
    char *err = malloc(65536);
    const char *names[] = {k.name, k.pack, k.unpack};
    RtCompileRequest req = {.source = k.source, .len = strlen(k.source), .name = k.name, .arch = p->arch,
                            .cache_dir = p->cache_dir, .kernel_names = names, .nkernels = 3};
    RtCompiled out = {0};
    CUresult r = CUDA_SUCCESS;
    if (!err) st = rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory");
    else {
        st = rt_compile_and_load(&p->drv, &req, &out, &c->mod, &r, err, 65536);
        p->compile_ms += out.compile_ms;
        rt_compiled_release(&out);
        if (st != SRT_OK) st = rt_error(p->ctx, st, "%s", err);
        else if (r != CUDA_SUCCESS) {
            c->mod = NULL;
            st = rt_error(p->ctx, SRT_ERR_DRIVER, "srt_attention: loading the compiled %s kernel: CUresult %d", k.name,
                          (int)r);
        } else if ((r = p->drv.moduleGetFunction(&c->fn, c->mod, k.name)) != CUDA_SUCCESS ||
                   (r = p->drv.moduleGetFunction(&c->pack, c->mod, k.pack)) != CUDA_SUCCESS ||
                   (r = p->drv.moduleGetFunction(&c->unpack, c->mod, k.unpack)) != CUDA_SUCCESS)
            st = rt_error(p->ctx, SRT_ERR_DRIVER, "srt_attention: kernel %s not in its module: CUresult %d", k.name,
                          (int)r);
    }
    if (st == SRT_OK && c->smem > SHORTC_SMEM_DEFAULT_LIMIT &&
        (r = p->drv.funcSetAttribute(c->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, c->smem)) != CUDA_SUCCESS)
        st = rt_error(p->ctx, SRT_ERR_DRIVER, "srt_attention: %d bytes of shared memory for %s: CUresult %d", c->smem,
                      k.name, (int)r);
    free(err);
    rt_free(p->ctx, k.source);
    return st;
}

/* *out: the compiled class holding `tokens` positions, compiled on first use. */
static srt_status class_for(srt_attention_plan *p, int tokens, AttnClass **out) {
    const int most = MIN_CLASS << (MAX_CLASSES - 1); /* the largest class: no doubling past it (no overflow) */
    if (tokens > most)
        return rt_error(p->ctx, SRT_ERR_INVALID, "srt_attention: %d tokens; a plan runs at most %d", tokens, most);
    int ntok = MIN_CLASS;
    while (ntok < tokens) ntok *= 2;
    for (int i = 0; i < p->nclasses; i++)
        if (p->classes[i].ntok == ntok) {
            *out = &p->classes[i];
            return SRT_OK;
        }
    if (p->nclasses == MAX_CLASSES)
        return rt_error(p->ctx, SRT_ERR_INVALID, "srt_attention: %d token classes compiled already", MAX_CLASSES);
    AttnClass *c = &p->classes[p->nclasses];
    memset(c, 0, sizeof *c);
    c->ntok = ntok;
    srt_status st = compile_class(p, c);
    if (st != SRT_OK) {
        if (c->mod) p->drv.moduleUnload(c->mod);
        memset(c, 0, sizeof *c);
        return st;
    }
    p->nclasses++;
    *out = c;
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* A run                                                               */
/* ------------------------------------------------------------------ */

/* Device buffers of one run, released by run_free. */
typedef struct AttnRun {
    CUdeviceptr qkv, kv, y;   /* one sequence's kernel arguments: [T, 3*H*D], [2, H, T, D], [T, H*D] */
    CUdeviceptr in, out;      /* sim: device copies of the caller's q, k, v ([3, B, H, T, D]) and out; 0 on cuda */
} AttnRun;

static void run_free(srt_attention_plan *p, AttnRun *r) {
    CUdeviceptr *bufs[] = {&r->qkv, &r->kv, &r->y, &r->in, &r->out};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (*bufs[i]) p->drv.memFree(*bufs[i]);
}

static srt_status cu_error(srt_attention_plan *p, CUresult r, const char *what) {
    const char *fault = p->drv.last_fault ? p->drv.last_fault() : NULL;
    return rt_error(p->ctx, p->drv.last_fault ? SRT_ERR_SIM : SRT_ERR_DRIVER, "srt_attention: %s: %s", what,
                    fault && *fault ? fault : r == CUDA_ERROR_OUT_OF_MEMORY ? "out of device memory" : "driver error");
}

/* The buffers of a run of batch sequences of T tokens (n bytes per sequence and tensor). */
static srt_status run_alloc(srt_attention_plan *p, AttnRun *r, size_t batch, size_t n) {
    CUresult e;
    if ((e = p->drv.memAlloc(&r->qkv, 3 * n)) != CUDA_SUCCESS || (e = p->drv.memAlloc(&r->kv, 2 * n)) != CUDA_SUCCESS ||
        (e = p->drv.memAlloc(&r->y, n)) != CUDA_SUCCESS)
        return cu_error(p, e, "allocating device buffers");
    if (p->drv.backend == SRT_BACKEND_SIM &&
        ((e = p->drv.memAlloc(&r->in, 3 * batch * n)) != CUDA_SUCCESS || (e = p->drv.memAlloc(&r->out, batch * n)) != CUDA_SUCCESS))
        return cu_error(p, e, "allocating device buffers");
    return SRT_OK;
}

/* Launches f over the n elements of one sequence (a grid-stride kernel of templates/attn_fn_pack.cuh). */
static CUresult launch_elementwise(srt_attention_plan *p, CUfunction f, size_t n, void **args) {
    size_t blocks = (n + PACK_THREADS - 1) / PACK_THREADS;
    return p->drv.launchKernel(f, (unsigned)(blocks < PACK_MAX_BLOCKS ? blocks : PACK_MAX_BLOCKS), 1, 1, PACK_THREADS, 1,
                               1, 0, NULL, args, NULL);
}

/* One sequence on the device: q, k, v [H, T, D] at the given addresses packed into the kernel's arguments, the
 * attention kernel, its output unpacked into out [H, T, D]. */
static srt_status run_sequence(srt_attention_plan *p, AttnClass *c, AttnRun *r, int T, CUdeviceptr q, CUdeviceptr k,
                               CUdeviceptr v, CUdeviceptr out) {
    int P = 0;
    size_t n = (size_t)p->heads * T * p->hd;
    void *pack_args[] = {&q, &k, &v, &r->qkv, &r->kv, &T}, *args[] = {&r->qkv, &r->kv, &r->y, &T, &P, &T},
         *unpack_args[] = {&r->y, &out, &T};
    unsigned grid = (unsigned)((T + c->grid_pad + c->qt - 1) / c->qt);
    CUresult e;
    if ((e = launch_elementwise(p, c->pack, n, pack_args)) != CUDA_SUCCESS) return cu_error(p, e, "packing q, k, v");
    if ((e = p->drv.launchKernel(c->fn, grid, (unsigned)p->heads, 1, ENGINE_WARPS * 32, 1, 1, (unsigned)c->smem, NULL,
                                 args, NULL)) != CUDA_SUCCESS)
        return cu_error(p, e, "launching the attention kernel");
    if ((e = launch_elementwise(p, c->unpack, n, unpack_args)) != CUDA_SUCCESS) return cu_error(p, e, "unpacking the output");
    return SRT_OK;
}

srt_status srt_attention_run(srt_attention_plan *p, int batch, int tokens, const void *q, const void *k, const void *v,
                             void *out) {
    if (!p) return SRT_ERR_INVALID;
    if (!q || !k || !v || !out) return rt_error(p->ctx, SRT_ERR_INVALID, "srt_attention_run: q, k, v and out must not be NULL");
    if (batch < 1 || tokens < 1 || (double)batch * p->heads * tokens * p->hd * 9 * p->es > (double)SIZE_MAX / 2)
        return rt_error(p->ctx, SRT_ERR_INVALID, "srt_attention_run: batch=%d and tokens=%d must be >= 1 (and the "
                        "tensors addressable)", batch, tokens);
    if (p->cuctx && p->drv.ctxSetCurrent(p->cuctx) != CUDA_SUCCESS)
        return rt_error(p->ctx, SRT_ERR_DRIVER, "srt_attention_run: cuCtxSetCurrent failed");
    AttnClass *c = NULL;
    srt_status st = class_for(p, tokens, &c);
    if (st != SRT_OK) return st;
    size_t n = (size_t)p->heads * tokens * p->hd * p->es, all = (size_t)batch * n;
    AttnRun r = {0};
    st = run_alloc(p, &r, (size_t)batch, n);
    /* the tensors' device addresses: the caller's on cuda, copies on sim */
    CUdeviceptr dq = (CUdeviceptr)(uintptr_t)q, dk = (CUdeviceptr)(uintptr_t)k, dv = (CUdeviceptr)(uintptr_t)v,
                dout = (CUdeviceptr)(uintptr_t)out;
    CUresult e;
    if (st == SRT_OK && r.in) {
        dq = r.in, dk = r.in + all, dv = r.in + 2 * all, dout = r.out;
        if ((e = p->drv.memcpyHtoD(dq, q, all)) != CUDA_SUCCESS || (e = p->drv.memcpyHtoD(dk, k, all)) != CUDA_SUCCESS ||
            (e = p->drv.memcpyHtoD(dv, v, all)) != CUDA_SUCCESS)
            st = cu_error(p, e, "copying q, k, v to the simulator");
    }
    for (int b = 0; b < batch && st == SRT_OK; b++)
        st = run_sequence(p, c, &r, tokens, dq + b * n, dk + b * n, dv + b * n, dout + b * n);
    if (st == SRT_OK && (e = p->drv.streamSynchronize(NULL)) != CUDA_SUCCESS) st = cu_error(p, e, "waiting for the kernels");
    if (st == SRT_OK && r.out && (e = p->drv.memcpyDtoH(out, r.out, all)) != CUDA_SUCCESS)
        st = cu_error(p, e, "reading the output");
    run_free(p, &r);
    return st;
}

srt_status srt_attention(srt_context *ctx, const srt_attention_desc *d, int batch, int tokens, const void *q,
                         const void *k, const void *v, void *out) {
    srt_attention_plan *p;
    srt_status st = srt_attention_plan_create(ctx, d, &p);
    if (st != SRT_OK) return st;
    st = srt_attention_run(p, batch, tokens, q, k, v, out);
    srt_attention_plan_destroy(p);
    return st;
}
