/*
 * exec.c — executes a plan through an RtDriver (the sim and cuda backends).
 *
 * Open: pick the driver, retain the device's primary context, have the
 * driver build a module image from the emitted .cu (NVRTC cubin or the
 * simulator's shared object, both cached), load it, look up every kernel of
 * the plan and create a cuBLAS handle. Weights live in one device block
 * (each weight at its plan offset); a session owns the activation arena,
 * the state tensors and a stream.
 *
 * Forward: copy token ids to the plan's token buffer, then for every step
 * evaluate its DIM expressions with T, and either pack kernelParams (one
 * pointer per argument, pointing at a CUdeviceptr, int32 or float) and
 * launch, or call cublasGemmEx / cublasGemmStridedBatchedEx with the plan's
 * exact parameters (CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT, float
 * alpha/beta). Every result is checked; a failure names the step, its
 * kernel and its .arch line. Then synchronize and copy the logits out, or
 * run the plan's "loss" program (per-row losses: T floats come back) or its
 * "sample" program (the next token: 4 bytes come back) instead; every copy
 * to the host is counted in the session's bytes_to_host.
 * rt_exec_step runs one step the same way, for checking tools.
 *
 * rt_backend_device is the table shortrt.c calls for sim and cuda. On a plan
 * without persistent state a session keeps its token history and a
 * continuing forward re-runs the sequence so far.
 */
#include "rt_internal.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


srt_status rt_compile_and_load(const RtDriver *d, RtCompileRequest *req, RtCompiled *out, CUmodule *mod,
                               CUresult *load, char *err, size_t errlen) {
    *load = CUDA_SUCCESS;
    srt_status st = d->compile_module(req, out, err, errlen);
    if (st == SRT_OK) *load = d->moduleLoadData(mod, out->image);
    if (st == SRT_OK && *load != CUDA_SUCCESS && out->cache_hit) {
        /* a cached image that validated but does not load: evict it and build again */
        rt_compiled_release(out);
        req->rebuild = 1;
        st = d->compile_module(req, out, err, errlen);
        *load = st == SRT_OK ? d->moduleLoadData(mod, out->image) : CUDA_SUCCESS;
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

static const char *cu_result_name(CUresult r) {
    switch ((int)r) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 4: return "CUDA_ERROR_DEINITIALIZED";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 200: return "CUDA_ERROR_INVALID_IMAGE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 218: return "CUDA_ERROR_INVALID_PTX";
    case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 300: return "CUDA_ERROR_INVALID_SOURCE";
    case 301: return "CUDA_ERROR_FILE_NOT_FOUND";
    case 400: return "CUDA_ERROR_INVALID_HANDLE";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 600: return "CUDA_ERROR_NOT_READY";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case 702: return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case 715: return "CUDA_ERROR_ILLEGAL_INSTRUCTION";
    case 716: return "CUDA_ERROR_MISALIGNED_ADDRESS";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED";
    case 801: return "CUDA_ERROR_NOT_SUPPORTED";
    case 900: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case 901: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    case 401: return "CUDA_ERROR_ILLEGAL_STATE";
    case 910: return "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE";
    case 999: return "CUDA_ERROR_UNKNOWN";
    }
    return "CUDA_ERROR";
}

const char *rt_cublas_status_name(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

/* The simulator's fault message, if any. */
static const char *sim_fault(const srt_model *m) {
    const char *f = m->drv.last_fault ? m->drv.last_fault() : NULL;
    return f && *f ? f : NULL;
}

/* "what: CUDA_ERROR_X (description)[; simulator: fault]" -> SRT_ERR_DRIVER, or SRT_ERR_SIM for a simulator fault. */
__attribute__((format(printf, 3, 4))) static srt_status cu_fail(srt_model *m, CUresult r, const char *fmt, ...) {
    char what[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *desc = NULL;
    if (m->drv.getErrorString && m->drv.getErrorString(r, &desc) != CUDA_SUCCESS) desc = NULL;
    const char *fault = sim_fault(m);
    return rt_error(m->ctx, fault ? SRT_ERR_SIM : SRT_ERR_DRIVER, "%s: %s (%s)%s%s", what, cu_result_name(r),
                    desc ? desc : "no description", fault ? "; simulator: " : "", fault ? fault : "");
}

__attribute__((format(printf, 3, 4))) static srt_status blas_fail(srt_model *m, cublasStatus_t s, const char *fmt, ...) {
    char what[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *fault = sim_fault(m);
    return rt_error(m->ctx, fault ? SRT_ERR_SIM : SRT_ERR_DRIVER, "%s: %s%s%s", what, rt_cublas_status_name(s),
                    fault ? "; simulator: " : "", fault ? fault : "");
}

/* "step 7 of 25 (launch K, models/x.arch line 12, layer 0)" */
static void step_label(const srt_model *m, int i, char *buf, size_t len) {
    const RtPlan *p = &m->plan;
    const RtStep *st = &p->steps[i];
    int n = snprintf(buf, len, "step %d of %d (%s%s", i, p->nsteps, st->op == RT_STEP_LAUNCH ? "launch " : "gemm",
                     st->op == RT_STEP_LAUNCH ? p->kernels[st->kernel].name : "");
    if (st->line > 0 && n < (int)len)
        n += snprintf(buf + n, len - (size_t)n, ", %s line %d", *p->source ? p->source : m->path, st->line);
    if (st->layer >= 0 && n < (int)len) n += snprintf(buf + n, len - (size_t)n, ", layer %d", st->layer);
    if (n < (int)len) snprintf(buf + n, len - (size_t)n, ")");
}

/* ------------------------------------------------------------------ */
/* Open / close                                                        */
/* ------------------------------------------------------------------ */

static srt_status pick_driver(srt_model *m, const srt_options *opt) {
    char ecuda[1024] = "", esim[1024] = "";
    srt_status st;
    switch (m->backend) {
    case SRT_BACKEND_CUDA:
        st = rt_driver_cuda(&m->drv, ecuda, sizeof ecuda);
        if (st != SRT_OK) return rt_error(m->ctx, st, "%s", ecuda);
        break;
    case SRT_BACKEND_SIM:
        st = rt_driver_sim(&m->drv, opt->sim_threads, opt->sim_checked, esim, sizeof esim);
        if (st != SRT_OK) return rt_error(m->ctx, st, "%s", esim);
        break;
    default:
        st = rt_driver_cuda(&m->drv, ecuda, sizeof ecuda);
        if (st != SRT_OK) {
            memset(&m->drv, 0, sizeof m->drv);
            st = rt_driver_sim(&m->drv, opt->sim_threads, opt->sim_checked, esim, sizeof esim);
            if (st != SRT_OK)
                return rt_error(m->ctx, st, "no backend available: cuda: %s; sim: %s", ecuda, esim);
        }
        break;
    }
    m->have_driver = true;
    m->backend = m->drv.backend;
    return SRT_OK;
}

/*
 * cublasGemmEx with CUBLAS_COMPUTE_32F takes A and B of one type and C of
 * that type or f32; anything else would fail at the first forward on the
 * GPU, so it fails at open, on every device backend alike.
 */
static srt_status check_gemm_types(srt_model *m) {
    const RtPlan *p = &m->plan;
    for (int i = 0; i < p->nsteps; i++) {
        const RtStep *st = &p->steps[i];
        if (st->op != RT_STEP_GEMM) continue;
        if (st->atype == st->btype && (st->ctype == st->atype || st->ctype == DT_F32)) continue;
        char label[512];
        step_label(m, i, label, sizeof label);
        return rt_error(m->ctx, SRT_ERR_UNSUPPORTED,
                        "%s: cuBLAS has no GEMM with A %s, B %s, C %s (A and B must have one type, C that type or f32)",
                        label, dtype_plan_name(st->atype), dtype_plan_name(st->btype), dtype_plan_name(st->ctype));
    }
    return SRT_OK;
}

/* The plan's constant tables into one device block, each at its offset (once per model). */
static srt_status upload_constants(srt_model *m) {
    const RtPlan *p = &m->plan;
    RtDriver *d = &m->drv;
    if (p->const_bytes == 0) return SRT_OK;
    CUresult r = d->memAlloc(&m->dconsts, p->const_bytes);
    if (r != CUDA_SUCCESS) {
        m->dconsts = 0;
        return cu_fail(m, r, "allocating %zu bytes of device memory for the plan's constants", p->const_bytes);
    }
    for (int i = 0; i < p->nconsts && r == CUDA_SUCCESS; i++)
        r = d->memcpyHtoD(m->dconsts + p->consts[i].offset, p->consts[i].data, p->consts[i].bytes);
    return r == CUDA_SUCCESS ? SRT_OK : cu_fail(m, r, "copying the plan's constants to the device");
}

/* ------------------------------------------------------------------ */
/* CUDA graphs: which programs read the position                       */
/* ------------------------------------------------------------------ */

static bool dim_reads_position(RtDim d) { return d.p != 0 || d.fill != 0; }

/* Whether a DIM of the step (launch shape, integer argument, GEMM parameter) reads P or fill. */
static bool step_reads_position(const RtStep *st) {
    bool r = false;
    if (st->op == RT_STEP_LAUNCH) {
        for (int k = 0; k < 3; k++) r = r || dim_reads_position(st->grid[k]) || dim_reads_position(st->block[k]);
        r = r || dim_reads_position(st->smem);
        for (int a = 0; a < st->nargs; a++) r = r || (st->args[a].kind == RT_ARG_INT && dim_reads_position(st->args[a].dim));
        return r;
    }
    const RtDim dims[] = {st->m, st->n, st->k, st->lda, st->ldb, st->ldc, st->strideA, st->strideB, st->strideC, st->batch};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) r = r || dim_reads_position(dims[i]);
    return r;
}

/* Decides whether programs run as graphs ($SHORTC_NO_GRAPHS, $SHORTC_SYNC_STEPS, the driver) and which
 * programs' graphs depend on P. */
static srt_status graphs_setup(srt_model *m) {
    const RtPlan *p = &m->plan;
    const RtDriver *d = &m->drv;
    const char *no = getenv("SHORTC_NO_GRAPHS");
    m->graphs = !(no && *no && strcmp(no, "0") != 0) && !m->sync_steps && d->streamBeginCapture &&
                d->streamEndCapture && d->graphInstantiate && d->graphExecUpdate && d->graphLaunch && d->graphExecDestroy && d->graphDestroy;
    if (!m->graphs) return SRT_OK;
    m->reads_position = rt_alloc(m->ctx, sizeof *m->reads_position * (size_t)(p->nprograms ? p->nprograms : 1));
    if (!m->reads_position) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory");
    for (int g = 0; g < p->nprograms; g++) {
        const RtProgram *pg = &p->programs[g];
        m->reads_position[g] = false;
        for (int i = pg->first; i < pg->first + pg->nsteps; i++)
            m->reads_position[g] = m->reads_position[g] || step_reads_position(&p->steps[i]);
    }
    return SRT_OK;
}

/* Whether step st is a GEMM writing the plan's logits with one column per token: C at the logits, N = T,
 * op(B) a K x T column-major operand (each token's column apart), one product of fp32 results. */
static bool is_logits_gemm(const RtPlan *p, const RtStep *st) {
    if (st->op != RT_STEP_GEMM || st->transb || st->ctype != DT_F32) return false;
    if (st->C.kind != p->logits.kind || st->C.index != p->logits.index || st->C.offset != p->logits.offset) return false;
    for (int T = 1; T <= 3; T += 2) {
        SymEnv env = {.T = T};
        if (symdim_eval(st->n, &env) != T || symdim_eval(st->batch, &env) != 1) return false;
    }
    return true;
}

/*
 * Only needed work (issue 21): per program, its logits GEMM when that is its last step (nothing after it reads
 * or rewrites the logits), so that a forward handing back rows first_row.. (a drawn token, the last row of a
 * prompt) computes only those columns (run_gemm). Other plans (an adaptive softmax, a conversion after the
 * GEMM) compute every row, as before.
 */
static srt_status logits_gemm_setup(srt_model *m) {
    const RtPlan *p = &m->plan;
    m->logits_gemm = rt_alloc(m->ctx, sizeof *m->logits_gemm * (size_t)(p->nprograms ? p->nprograms : 1));
    if (!m->logits_gemm) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory");
    for (int g = 0; g < p->nprograms; g++) {
        const RtProgram *pg = &p->programs[g];
        int last = pg->first + pg->nsteps - 1;
        m->logits_gemm[g] = !pg->on_request && pg->nsteps > 0 && is_logits_gemm(p, &p->steps[last]) ? last : -1;
    }
    return SRT_OK;
}

static srt_status rt_exec_open(srt_model *m, const srt_options *opt, const char *cu, size_t cu_len) {
    srt_context *ctx = m->ctx;
    RtPlan *p = &m->plan;
    srt_status st = check_gemm_types(m);
    if (st != SRT_OK) return st;
    st = pick_driver(m, opt);
    if (st != SRT_OK) return st;
    RtDriver *d = &m->drv;
    CUresult r;
    if ((r = d->init(0)) != CUDA_SUCCESS) return cu_fail(m, r, "%s backend: cuInit", d->name);
    if ((r = d->deviceGet(&m->dev, 0)) != CUDA_SUCCESS) return cu_fail(m, r, "%s backend: cuDeviceGet(0)", d->name);
    CUcontext cc = NULL;
    if ((r = d->primaryCtxRetain(&cc, m->dev)) != CUDA_SUCCESS)
        return cu_fail(m, r, "%s backend: cuDevicePrimaryCtxRetain", d->name);
    m->cuctx = cc;
    if ((r = d->ctxSetCurrent(cc)) != CUDA_SUCCESS) return cu_fail(m, r, "%s backend: cuCtxSetCurrent", d->name);
    int major = 0, minor = 0;
    if (d->deviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, m->dev) != CUDA_SUCCESS ||
        d->deviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, m->dev) != CUDA_SUCCESS || major < 1) {
        major = 8;
        minor = 0;
    }
    m->arch = major * 10 + minor;
    /* the most dynamic shared memory a kernel may ask for (cuFuncSetAttribute raises it from the default) */
    if (d->deviceGetAttribute(&m->smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, m->dev) !=
            CUDA_SUCCESS ||
        m->smem_optin < SHORTC_SMEM_DEFAULT_LIMIT)
        m->smem_optin = SHORTC_SMEM_DEFAULT_LIMIT;

    /* module */
    const char **names = rt_alloc(ctx, sizeof *names * (size_t)(p->nkernels ? p->nkernels : 1));
    if (!names) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    for (int i = 0; i < p->nkernels; i++) names[i] = p->kernels[i].name;
    char cache_dir[1024];
    if (opt->cache_dir && *opt->cache_dir) snprintf(cache_dir, sizeof cache_dir, "%s", opt->cache_dir);
    else rt_default_cache_dir(cache_dir, sizeof cache_dir);
    RtCompileRequest req = {.source = cu, .len = cu_len, .name = p->model, .arch = m->arch, .cache_dir = cache_dir,
                            .kernel_names = names, .nkernels = p->nkernels};
    RtCompiled out = {0};
    char err[RT_ERR_MAX];
    err[0] = 0;
    st = rt_compile_and_load(d, &req, &out, &m->module, &r, err, sizeof err);
    rt_free(ctx, names);
    snprintf(m->cache_note, sizeof m->cache_note, "%s", out.note);
    m->compile_ms = out.compile_ms;
    m->cache_hit = out.cache_hit;
    rt_compiled_release(&out);
    if (st != SRT_OK) return rt_error(ctx, st, "%s", err[0] ? err : "compiling the kernels failed");
    if (r != CUDA_SUCCESS) {
        m->module = NULL;
        return cu_fail(m, r, "%s backend: loading the compiled module of '%s' (sm_%d)", d->name, p->model, m->arch);
    }
    m->funcs = rt_alloc(ctx, sizeof *m->funcs * (size_t)(p->nkernels ? p->nkernels : 1));
    m->smem_set = rt_alloc(ctx, sizeof *m->smem_set * (size_t)(p->nkernels ? p->nkernels : 1));
    if (!m->funcs || !m->smem_set) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    for (int i = 0; i < p->nkernels; i++) {
        if ((r = d->moduleGetFunction(&m->funcs[i], m->module, p->kernels[i].name)) != CUDA_SUCCESS)
            return cu_fail(m, r, "kernel '%s' of the plan is not in the compiled module", p->kernels[i].name);
        m->smem_set[i] = SHORTC_SMEM_DEFAULT_LIMIT; /* the default limit for dynamic shared memory */
    }
    cublasStatus_t bs = d->blasCreate(&m->blas);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        m->blas = NULL;
        return blas_fail(m, bs, "%s backend: cublasCreate", d->name);
    }
    if ((bs = d->ltCreate(&m->blaslt)) != CUBLAS_STATUS_SUCCESS) {
        m->blaslt = NULL;
        return blas_fail(m, bs, "%s backend: cublasLtCreate", d->name);
    }
    if ((st = upload_constants(m)) != SRT_OK) return st;
    const char *sync = getenv("SHORTC_SYNC_STEPS");
    m->sync_steps = sync && *sync && strcmp(sync, "0") != 0;
    if ((st = logits_gemm_setup(m)) != SRT_OK) return st;
    return graphs_setup(m);
}

static void rt_exec_close(srt_model *m) {
    if (!m->have_driver) return;
    RtDriver *d = &m->drv;
    if (m->cuctx) d->ctxSetCurrent(m->cuctx);
    if (m->blas) d->blasDestroy(m->blas);
    if (m->blaslt) d->ltDestroy(m->blaslt);
    if (m->dweights) d->memFree(m->dweights);
    if (m->dconsts) d->memFree(m->dconsts);
    if (m->dderived) d->memFree(m->dderived);
    if (m->module) d->moduleUnload(m->module);
    if (m->cuctx) d->primaryCtxRelease(m->dev);
    rt_free(m->ctx, m->funcs);
    rt_free(m->ctx, m->smem_set);
    rt_free(m->ctx, m->reads_position);
    rt_free(m->ctx, m->logits_gemm);
    if (d->lib_cublaslt) dlclose(d->lib_cublaslt);
    if (d->lib_cublas) dlclose(d->lib_cublas);
    if (d->lib_cuda) dlclose(d->lib_cuda);
    m->have_driver = false;
}

static srt_status upload_weights(srt_model *m, float *const *vals) {
    RtPlan *p = &m->plan;
    RtDriver *d = &m->drv;
    if (p->weight_bytes == 0) return SRT_OK;
    unsigned char *staging = rt_alloc(m->ctx, p->weight_bytes);
    if (!staging) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory staging %zu bytes of weights", p->weight_bytes);
    for (int i = 0; i < p->nweights; i++) rt_encode(p->weights[i].dtype, vals[i], p->weights[i].count, staging + p->weights[i].offset);
    CUresult r = d->ctxSetCurrent(m->cuctx);
    if (r == CUDA_SUCCESS && !m->dweights) {
        r = d->memAlloc(&m->dweights, p->weight_bytes);
        if (r != CUDA_SUCCESS) {
            m->dweights = 0;
            rt_free(m->ctx, staging);
            return cu_fail(m, r, "allocating %zu bytes of device memory for the weights", p->weight_bytes);
        }
    }
    if (r == CUDA_SUCCESS) r = d->memcpyHtoD(m->dweights, staging, p->weight_bytes);
    rt_free(m->ctx, staging);
    if (r != CUDA_SUCCESS) return cu_fail(m, r, "copying the weights to the device");
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* Sessions                                                            */
/* ------------------------------------------------------------------ */

/* cuBLASLt workspace of a session on the GPU: 32 MiB on Hopper and later, 4 MiB before (cuBLAS's own sizes); none
 * on the simulator, whose one algorithm needs none. */
static size_t lt_workspace_size(const srt_model *m) {
    if (m->drv.backend != SRT_BACKEND_CUDA) return 0;
    return (size_t)(m->arch >= 90 ? 32 : 4) << 20;
}

/* The session's cuBLASLt plans (RT_LT_WAYS per step; built at a step's first calls) and workspace (its lender's, if
 * any: one per batch session), when the plan has a GEMM with an epilogue. Made here, not at the first call: no allocation may happen while a graph is captured. */
static srt_status lt_session_create(srt_session *s) {
    srt_model *m = s->m;
    const RtPlan *p = &m->plan;
    bool any = false;
    for (int i = 0; i < p->nsteps && !any; i++) any = p->steps[i].op == RT_STEP_GEMM && p->steps[i].epilogue != PLAN_EPI_NONE;
    if (!any) return SRT_OK;
    size_t nplans = (size_t)p->nsteps * RT_LT_WAYS;
    s->lt_plans = rt_alloc(m->ctx, sizeof *s->lt_plans * nplans);
    if (!s->lt_plans) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory");
    memset(s->lt_plans, 0, sizeof *s->lt_plans * nplans);
    if (s->lane0) { /* a batch session's later sequence: the first sequence's workspace */
        s->lt_workspace = s->lane0->lt_workspace;
        s->lt_workspace_bytes = s->lane0->lt_workspace_bytes;
        return SRT_OK;
    }
    size_t ws = lt_workspace_size(m);
    if (ws == 0) return SRT_OK;
    CUresult r = m->drv.memAlloc(&s->lt_workspace, ws);
    if (r != CUDA_SUCCESS) {
        s->lt_workspace = 0;
        return cu_fail(m, r, "allocating the %zu-byte cuBLASLt workspace", ws);
    }
    s->lt_workspace_bytes = ws;
    return SRT_OK;
}

/* Frees what lt_session_create made. */
static void lt_session_destroy(srt_session *s) {
    srt_model *m = s->m;
    for (int i = 0; s->lt_plans && i < m->plan.nsteps * RT_LT_WAYS; i++) rt_lt_plan_release(&m->drv, &s->lt_plans[i]);
    rt_free(m->ctx, s->lt_plans);
    s->lt_plans = NULL;
    if (s->lt_workspace && !s->lane0) m->drv.memFree(s->lt_workspace);
    s->lt_workspace = 0;
}

static srt_status rt_exec_session_create(srt_session *s) {
    srt_model *m = s->m;
    RtPlan *p = &m->plan;
    RtDriver *d = &m->drv;
    CUresult r = d->ctxSetCurrent(m->cuctx);
    if (r != CUDA_SUCCESS) return cu_fail(m, r, "cuCtxSetCurrent");
    s->state = rt_alloc(m->ctx, sizeof *s->state * (size_t)(p->nstate ? p->nstate : 1));
    s->params = rt_alloc(m->ctx, sizeof *s->params * (size_t)(p->max_args ? p->max_args : 1));
    s->vals = rt_alloc(m->ctx, sizeof *s->vals * (size_t)(p->max_args ? p->max_args : 1));
    s->history = rt_alloc(m->ctx, sizeof *s->history * (size_t)p->segment);
    if (!s->state || !s->params || !s->vals || !s->history) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory");
    for (int a = 0; a < p->max_args; a++) s->params[a] = &s->vals[a]; /* fixed; launches fill vals */
    /* A whole number of 256-byte blocks: vector accesses need aligned value starts, and the
     * checked simulator places an allocation flush against its guard page (its size sets the alignment). */
    size_t arena_alloc = (p->arena_bytes + 255) & ~(size_t)255;
    if (s->lane0) /* a batch session's later sequence: the activations are scratch, and its sequences run one
                     after another, each forward ending in a synchronisation: the first sequence's arena */
        s->arena = s->lane0->arena;
    else if ((r = d->memAlloc(&s->arena, arena_alloc)) != CUDA_SUCCESS) {
        s->arena = 0;
        return cu_fail(m, r, "allocating the %zu-byte activation arena", p->arena_bytes);
    }
    if (!s->lane0 && (r = d->memsetD8(s->arena, 0, arena_alloc)) != CUDA_SUCCESS)
        return cu_fail(m, r, "clearing the activation arena");
    /* a batch session on a plan with batched decode steps: each state of every sequence in one block, sequence
     * after sequence (a batched step's kernels find sequence b's at b x its bytes) */
    s->state_shared = p->decode_batch > 0 && s->lane_count > 1;
    size_t copies = s->state_shared ? (size_t)s->lane_count : 1;
    for (int i = 0; i < p->nstate; i++) {
        if (s->state_shared && s->lane0) {
            s->state[i] = s->lane0->state[i] + (CUdeviceptr)((size_t)s->lane_index * p->state[i].bytes);
            continue;
        }
        if ((r = d->memAlloc(&s->state[i], copies * p->state[i].bytes)) != CUDA_SUCCESS) {
            s->state[i] = 0;
            return cu_fail(m, r, "allocating state '%s' (%zu bytes)", p->state[i].name, copies * p->state[i].bytes);
        }
        if ((r = d->memsetD8(s->state[i], 0, copies * p->state[i].bytes)) != CUDA_SUCCESS)
            return cu_fail(m, r, "clearing state '%s'", p->state[i].name);
    }
    if ((r = d->streamCreate(&s->stream, CU_STREAM_DEFAULT)) != CUDA_SUCCESS) return cu_fail(m, r, "cuStreamCreate");
    s->have_stream = true;
    if (m->graphs && !(s->graphs = rt_alloc(m->ctx, sizeof *s->graphs * (size_t)(p->nprograms ? p->nprograms : 1))))
        return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory");
    if (s->graphs) memset(s->graphs, 0, sizeof *s->graphs * (size_t)p->nprograms);
    return lt_session_create(s);
}

static srt_status rt_exec_session_reset(srt_session *s) {
    srt_model *m = s->m;
    RtPlan *p = &m->plan;
    s->nhistory = s->nsegment = 0;
    CUresult r = m->drv.ctxSetCurrent(m->cuctx);
    if (r == CUDA_SUCCESS && s->have_stream) r = m->drv.streamSynchronize(s->stream);
    for (int i = 0; i < p->nstate && r == CUDA_SUCCESS; i++) {
        if (p->state[i].persistent) r = m->drv.memsetD8(s->state[i], 0, p->state[i].bytes);
        /* HF's zero memories: the rings' rows (now zero) count as earlier positions */
        if (s->mem_zeros && p->state[i].role == PLAN_ROLE_MEMORY && p->state[i].capacity > s->nhistory)
            s->nhistory = p->state[i].capacity;
    }
    return r == CUDA_SUCCESS ? SRT_OK : cu_fail(m, r, "resetting the session state");
}

static void profile_free(srt_session *s);

static void rt_exec_session_destroy(srt_session *s) {
    srt_model *m = s->m;
    RtDriver *d = &m->drv;
    if (m->cuctx) d->ctxSetCurrent(m->cuctx);
    if (s->have_stream) {
        d->streamSynchronize(s->stream);
        d->streamDestroy(s->stream);
    }
    profile_free(s);
    lt_session_destroy(s);
    for (int g = 0; s->graphs && g < m->plan.nprograms; g++)
        if (s->graphs[g].exec) d->graphExecDestroy(s->graphs[g].exec);
    rt_free(m->ctx, s->graphs);
    if (s->state && !(s->state_shared && s->lane0)) { /* a later sequence's states lie in the first's blocks */
        for (int i = 0; i < m->plan.nstate; i++) {
            if (s->state[i]) d->memFree(s->state[i]);
        }
    }
    if (s->arena && !s->lane0) d->memFree(s->arena); /* a later sequence's is the first's */
    rt_free(m->ctx, s->state);
    rt_free(m->ctx, s->params);
    rt_free(m->ctx, s->vals);
    rt_free(m->ctx, s->history);
}

/* ------------------------------------------------------------------ */
/* Forward                                                             */
/* ------------------------------------------------------------------ */

/* Whether the plan carries its own state between forwards (a `persistent` state entry): then each
 * forward runs only its tokens and the plan's steps continue from that state. */
static bool plan_keeps_state(const RtPlan *p) {
    for (int i = 0; i < p->nstate; i++)
        if (p->state[i].persistent) return true;
    return false;
}

/* The run-time scalars of a call of T tokens at position P (a KV cache's fill is its position); B, the sequences
 * of a batched decode step, is 0: the rows are one sequence's. */
static SymEnv call_env(int T, int P) { return (SymEnv){.T = T, .P = P, .fill = P, .B = 0}; }


static CUdeviceptr ref_addr(const srt_session *s, RtRef r) {
    const srt_model *m = s->m;
    switch (r.kind) {
    case RT_REF_ARENA: return s->arena + (CUdeviceptr)r.offset;
    case RT_REF_WEIGHT: return m->dweights + (CUdeviceptr)m->plan.weights[r.index].offset + (CUdeviceptr)r.offset;
    case RT_REF_STATE: return s->state[r.index] + (CUdeviceptr)r.offset;
    case RT_REF_CONST: return m->dconsts + (CUdeviceptr)m->plan.consts[r.index].offset + (CUdeviceptr)r.offset;
    case RT_REF_DERIVED: return m->dderived + (CUdeviceptr)m->plan.derived[r.index].offset + (CUdeviceptr)r.offset;
    }
    return 0;
}

/* Bytes available from a REF to the end of its buffer. */
static size_t ref_room(const srt_model *m, RtRef r) {
    const RtPlan *p = &m->plan;
    switch (r.kind) {
    case RT_REF_ARENA: return p->arena_bytes - (size_t)r.offset;
    case RT_REF_WEIGHT: return p->weights[r.index].bytes - (size_t)r.offset;
    case RT_REF_STATE: return p->state[r.index].bytes - (size_t)r.offset;
    case RT_REF_CONST: return p->consts[r.index].bytes - (size_t)r.offset;
    case RT_REF_DERIVED: return p->derived[r.index].bytes - (size_t)r.offset;
    }
    return 0;
}

static cudaDataType cuda_type(DType t) {
    switch (t) {
    case DT_F16: return CUDA_R_16F;
    case DT_BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
    }
}

/* Column-major matrix of rows x cols with leading dimension ld, batch copies stride apart, must fit. */
static bool gemm_fits(const srt_model *m, RtRef r, DType t, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                      int64_t batch, int64_t *need) {
    if (rows == 0 || cols == 0) {
        *need = 0;
        return true;
    }
    int64_t span = ld * (cols - 1) + rows + stride * (batch - 1);
    *need = span * dtype_size(t);
    return (size_t)*need <= ref_room(m, r);
}

/* Whether plan step i is some program's logits GEMM (logits_gemm_setup). */
static bool is_logits_step(const srt_model *m, int i) {
    for (int g = 0; m->logits_gemm && g < m->plan.nprograms; g++)
        if (m->logits_gemm[g] == i) return true;
    return false;
}

static srt_status run_gemm(srt_session *s, int i, const SymEnv *env) {
    srt_model *m = s->m;
    const RtStep *st = &m->plan.steps[i];
    char label[512];
    int64_t M = symdim_eval(st->m, env), N = symdim_eval(st->n, env), K = symdim_eval(st->k, env);
    int64_t lda = symdim_eval(st->lda, env), ldb = symdim_eval(st->ldb, env), ldc = symdim_eval(st->ldc, env);
    int64_t sa = symdim_eval(st->strideA, env), sb = symdim_eval(st->strideB, env), sc = symdim_eval(st->strideC, env);
    int64_t batch = symdim_eval(st->batch, env);
    const int64_t big = 0x7fffffff;
    if (M < 0 || N < 0 || K < 0 || M > big || N > big || K > big || lda < 1 || ldb < 1 || ldc < 1 || lda > big || ldb > big ||
        ldc > big || batch < 1 || batch > big || sa < 0 || sb < 0 || sc < 0) {
        step_label(m, i, label, sizeof label);
        return rt_error(m->ctx, SRT_ERR_INVALID,
                        "%s: parameters out of range at T=%ld P=%ld: m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld batch=%lld",
                        label, env->T, env->P, (long long)M, (long long)N, (long long)K, (long long)lda, (long long)ldb, (long long)ldc,
                        (long long)batch);
    }
    /* the logits GEMM of a forward that reads rows logits_from.. only: those columns of B and C */
    int64_t skip = s->logits_from > 0 && is_logits_step(m, i) ? (s->logits_from < N ? s->logits_from : N) : 0;
    N -= skip;
    /* op(A) is M x K: stored M x K (N) or K x M (T); op(B) is K x N; C is M x N */
    int64_t need;
    const char *which = NULL;
    if (!gemm_fits(m, st->A, st->atype, st->transa ? K : M, st->transa ? M : K, lda, sa, batch, &need)) which = "A";
    else if (!gemm_fits(m, st->B, st->btype, st->transb ? N : K, st->transb ? K : N, ldb, sb, batch, &need)) which = "B";
    else if (!gemm_fits(m, st->C, st->ctype, M, N, ldc, sc, batch, &need)) which = "C";
    else if (plan_epilogue_has_bias(st->epilogue) && !gemm_fits(m, st->bias, st->ctype, M, 1, M, 0, 1, &need)) which = "bias";
    if (!which && st->epilogue != PLAN_EPI_NONE && batch != 1) {
        step_label(m, i, label, sizeof label);
        return rt_error(m->ctx, SRT_ERR_INVALID, "%s: an epilogue needs batch 1 (batch is %lld at T=%ld P=%ld)", label,
                        (long long)batch, env->T, env->P);
    }
    if (which) {
        RtRef r = *which == 'A' ? st->A : *which == 'B' ? st->B : *which == 'C' ? st->C : st->bias;
        step_label(m, i, label, sizeof label);
        return rt_error(m->ctx, SRT_ERR_INVALID, "%s: matrix %s needs %lld bytes at T=%ld P=%ld but its buffer has %zu from that offset",
                        label, which, (long long)need, env->T, env->P, ref_room(m, r));
    }
    if (M == 0 || N == 0) return SRT_OK;
    RtDriver *d = &m->drv;
    cublasOperation_t ta = st->transa ? CUBLAS_OP_T : CUBLAS_OP_N, tb = st->transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    float alpha = st->alpha, beta = st->beta;
    void *A = (void *)(uintptr_t)ref_addr(s, st->A),
         *B = (void *)(uintptr_t)(ref_addr(s, st->B) + (CUdeviceptr)(skip * ldb * dtype_size(st->btype))),
         *C = (void *)(uintptr_t)(ref_addr(s, st->C) + (CUdeviceptr)(skip * ldc * dtype_size(st->ctype)));
    cublasComputeType_t compute = st->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    cublasStatus_t bs;
    if (st->epilogue != PLAN_EPI_NONE) {
        RtLtGemm g = {.ta = ta, .tb = tb, .m = M, .n = N, .k = K, .A = A, .B = B, .C = C, .lda = lda, .ldb = ldb,
                      .ldc = ldc, .atype = cuda_type(st->atype), .btype = cuda_type(st->btype),
                      .ctype = cuda_type(st->ctype), .compute = compute, .epilogue = st->epilogue,
                      .bias = plan_epilogue_has_bias(st->epilogue) ? (void *)(uintptr_t)ref_addr(s, st->bias) : NULL,
                      .workspace = (void *)(uintptr_t)s->lt_workspace, .workspace_bytes = s->lt_workspace_bytes,
                      .stream = s->stream};
        RtLtPlan once[RT_LT_WAYS] = {0}; /* the load program's session keeps none: made and destroyed here */
        RtLtPlan *set = s->lt_plans ? &s->lt_plans[(size_t)i * RT_LT_WAYS] : once;
        bs = rt_gemm_lt(d, m->blaslt, set, &g);
        for (int w = 0; !s->lt_plans && w < RT_LT_WAYS; w++) rt_lt_plan_release(d, &once[w]);
    } else if (batch == 1)
        bs = d->gemmEx(m->blas, ta, tb, (int)M, (int)N, (int)K, &alpha, A, cuda_type(st->atype), (int)lda, B,
                       cuda_type(st->btype), (int)ldb, &beta, C, cuda_type(st->ctype), (int)ldc, compute,
                       CUBLAS_GEMM_DEFAULT);
    else
        bs = d->gemmStridedBatchedEx(m->blas, ta, tb, (int)M, (int)N, (int)K, &alpha, A, cuda_type(st->atype), (int)lda,
                                     (long long)sa, B, cuda_type(st->btype), (int)ldb, (long long)sb, &beta, C,
                                     cuda_type(st->ctype), (int)ldc, (long long)sc, (int)batch, compute,
                                     CUBLAS_GEMM_DEFAULT);
    if (!s->capturing) s->calls.gemms++;
    if (bs != CUBLAS_STATUS_SUCCESS) {
        step_label(m, i, label, sizeof label);
        return blas_fail(m, bs, "%s: %s(m=%lld, n=%lld, k=%lld, batch=%lld)", label,
                         st->epilogue != PLAN_EPI_NONE ? "cublasLtMatmul"
                         : batch == 1                  ? "cublasGemmEx"
                                                       : "cublasGemmStridedBatchedEx", (long long)M, (long long)N, (long long)K,
                         (long long)batch);
    }
    return SRT_OK;
}

static srt_status run_launch(srt_session *s, int i, const SymEnv *env) {
    srt_model *m = s->m;
    const RtStep *st = &m->plan.steps[i];
    RtDriver *d = &m->drv;
    char label[512];
    int64_t g[3], b[3], smem = symdim_eval(st->smem, env);
    for (int k = 0; k < 3; k++) {
        g[k] = symdim_eval(st->grid[k], env);
        b[k] = symdim_eval(st->block[k], env);
    }
    if (g[0] < 1 || g[1] < 1 || g[2] < 1 || g[0] > 0x7fffffff || g[1] > 65535 || g[2] > 65535 || smem < 0 || smem > (1 << 30)) {
        step_label(m, i, label, sizeof label);
        return rt_error(m->ctx, SRT_ERR_INVALID, "%s: grid [%lld, %lld, %lld] or shared memory %lld bytes out of range at T=%ld P=%ld",
                        label, (long long)g[0], (long long)g[1], (long long)g[2], (long long)smem, env->T, env->P);
    }
    CUfunction f = m->funcs[st->kernel];
    if (smem > m->smem_optin) {
        step_label(m, i, label, sizeof label);
        return rt_error(m->ctx, SRT_ERR_INVALID,
                        "%s: needs %lld bytes of shared memory per block; this device (sm_%d) allows at most %d (the "
                        "emitter plans for at most %d)",
                        label, (long long)smem, m->arch, m->smem_optin, SHORTC_SMEM_OPTIN_LIMIT);
    }
    if (smem > m->smem_set[st->kernel]) {
        CUresult r = d->funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
        if (r != CUDA_SUCCESS) {
            step_label(m, i, label, sizeof label);
            return cu_fail(m, r, "%s: raising the dynamic shared memory limit to %lld bytes", label, (long long)smem);
        }
        m->smem_set[st->kernel] = (int)smem;
    }
    for (int a = 0; a < st->nargs; a++) {
        const RtArg *arg = &st->args[a];
        switch (arg->kind) {
        case RT_ARG_REF:
            s->vals[a].p = ref_addr(s, arg->ref);
            break;
        case RT_ARG_INT: {
            int64_t v = symdim_eval(arg->dim, env);
            if (v < INT32_MIN || v > INT32_MAX) {
                step_label(m, i, label, sizeof label);
                return rt_error(m->ctx, SRT_ERR_INVALID, "%s: argument %d = %lld does not fit an int", label, a, (long long)v);
            }
            s->vals[a].i = (int32_t)v;
            break;
        }
        case RT_ARG_FLOAT:
            s->vals[a].f = arg->f;
            break;
        }
    }
    CUresult r = d->launchKernel(f, (unsigned)g[0], (unsigned)g[1], (unsigned)g[2], (unsigned)b[0], (unsigned)b[1],
                                 (unsigned)b[2], (unsigned)smem, s->stream, st->nargs ? s->params : NULL, NULL);
    if (!s->capturing) s->calls.launches++;
    if (r != CUDA_SUCCESS) {
        step_label(m, i, label, sizeof label);
        return cu_fail(m, r, "%s: cuLaunchKernel(grid [%lld, %lld, %lld], block [%lld, %lld, %lld], smem %lld)", label,
                       (long long)g[0], (long long)g[1], (long long)g[2], (long long)b[0], (long long)b[1], (long long)b[2],
                       (long long)smem);
    }
    return SRT_OK;
}

srt_status rt_exec_step(srt_session *s, int i, int T, int P) {
    srt_model *m = s->m;
    RtPlan *p = &m->plan;
    RtDriver *d = &m->drv;
    char label[512];
    if (i < 0 || i >= p->nsteps || T < 1 || T > p->segment || P < 0 || P > p->scalar_max[1])
        return rt_error(m->ctx, SRT_ERR_INVALID, "rt_exec_step: step %d of %d at T=%d (1 to %d), P=%d (0 to %lld)", i,
                        p->nsteps, T, p->segment, P, (long long)p->scalar_max[1]);
    CUresult r = d->ctxSetCurrent(m->cuctx);
    if (r != CUDA_SUCCESS) return cu_fail(m, r, "cuCtxSetCurrent");
    cublasStatus_t bs = d->blasSetStream(m->blas, s->stream);
    if (bs != CUBLAS_STATUS_SUCCESS) return blas_fail(m, bs, "cublasSetStream");
    SymEnv env = call_env(T, P);
    srt_status st = p->steps[i].op == RT_STEP_LAUNCH ? run_launch(s, i, &env) : run_gemm(s, i, &env);
    if (st != SRT_OK) return st;
    if ((r = d->streamSynchronize(s->stream)) != CUDA_SUCCESS) {
        step_label(m, i, label, sizeof label);
        return cu_fail(m, r, "%s: failed while running", label);
    }
    return SRT_OK;
}

/* Records profiling event ev of step i on the session's stream (a no-op without profiling). */
static srt_status profile_mark(srt_session *s, int i, bool after) {
    RtProfile *pf = s->profile;
    if (!pf) return SRT_OK;
    CUresult r = s->m->drv.eventRecord(after ? pf->end[i] : pf->begin[i], s->stream);
    if (r != CUDA_SUCCESS) return cu_fail(s->m, r, "cuEventRecord (profiling step %d)", i);
    pf->queued[i] = after;
    return SRT_OK;
}

/* After pg ran and its stream was synchronized: adds each queued step's elapsed time to its sums. */
static srt_status profile_collect(srt_session *s, const RtProgram *pg) {
    RtProfile *pf = s->profile;
    for (int i = pg->first; pf && i < pg->first + pg->nsteps; i++) {
        if (!pf->queued[i]) continue;
        float ms = 0;
        CUresult r = s->m->drv.eventElapsedTime(&ms, pf->begin[i], pf->end[i]);
        if (r != CUDA_SUCCESS) return cu_fail(s->m, r, "cuEventElapsedTime (profiling step %d)", i);
        pf->ms[i] += ms;
        pf->runs[i]++;
        pf->queued[i] = false;
    }
    return SRT_OK;
}

/* Waits for the session's stream, counted in its call counts. */
static CUresult sync_stream(srt_session *s) {
    s->calls.syncs++;
    return s->m->drv.streamSynchronize(s->stream);
}

/* Queues the steps of pg one by one on the session's stream (or into its capture). */
static srt_status run_steps(srt_session *s, const RtProgram *pg, const SymEnv *env) {
    srt_model *m = s->m;
    const RtPlan *p = &m->plan;
    char label[512];
    for (int i = pg->first; i < pg->first + pg->nsteps; i++) {
        srt_status st = profile_mark(s, i, false);
        if (st == SRT_OK) st = p->steps[i].op == RT_STEP_LAUNCH ? run_launch(s, i, env) : run_gemm(s, i, env);
        if (st == SRT_OK) st = profile_mark(s, i, true);
        if (st != SRT_OK) return st;
        CUresult r;
        if (m->sync_steps && (r = sync_stream(s)) != CUDA_SUCCESS) {
            step_label(m, i, label, sizeof label);
            return cu_fail(m, r, "%s: failed while running", label);
        }
    }
    return SRT_OK;
}

/* Records pg's steps for env into a new graph *g; false (and the session's graph_note) when the
 * driver cannot, with nothing run and the capture ended. */
static bool capture_steps(srt_session *s, const RtProgram *pg, const SymEnv *env, CUgraph *g) {
    srt_model *m = s->m;
    const RtDriver *d = &m->drv;
    *g = NULL;
    CUresult r = d->streamBeginCapture(s->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r == CUDA_SUCCESS) {
        s->capturing = true;
        srt_status st = run_steps(s, pg, env);
        s->capturing = false;
        r = d->streamEndCapture(s->stream, g);
        if (st != SRT_OK) {
            snprintf(s->graph_note, sizeof s->graph_note, "capturing program '%s': %s", pg->name, srt_last_error(m->ctx));
            if (*g) d->graphDestroy(*g);
            *g = NULL;
            return false;
        }
    }
    if (r == CUDA_SUCCESS) return true;
    const char *fault = sim_fault(m);
    snprintf(s->graph_note, sizeof s->graph_note, "capturing program '%s': %s%s%s", pg->name, cu_result_name(r),
             fault ? "; simulator: " : "", fault ? fault : "");
    return false;
}

/* Captures pg's steps for env and makes slot->exec run them: the existing graph updated in place when
 * the driver accepts the new one (same shape, other parameters), else a new instantiation. */
static bool capture_program(srt_session *s, const RtProgram *pg, const SymEnv *env, RtGraphSlot *slot) {
    srt_model *m = s->m;
    const RtDriver *d = &m->drv;
    CUgraph g;
    if (!capture_steps(s, pg, env, &g)) return false;
    CUresult r = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    if (slot->exec) {
        CUgraphExecUpdateResultInfo info;
        if ((r = d->graphExecUpdate(slot->exec, g, &info)) != CUDA_SUCCESS) {
            d->graphExecDestroy(slot->exec);
            slot->exec = NULL;
        }
    }
    if (!slot->exec) r = d->graphInstantiate(&slot->exec, g, 0);
    d->graphDestroy(g);
    if (r == CUDA_SUCCESS) return true;
    slot->exec = NULL;
    snprintf(s->graph_note, sizeof s->graph_note, "program '%s': cuGraphInstantiate: %s", pg->name, cu_result_name(r));
    return false;
}

/*
 * Runs pg as a CUDA graph when it can. A session keeps one graph per program, for one T: the second
 * call in a row with a T captures it, later calls with that T replay it with one cuGraphLaunch. When
 * the program's steps read the position (P or a state's fill), a call at another P than the graph's
 * captures the steps again and updates the graph in place (cuGraphExecUpdate: kernel arguments, grid
 * sizes and GEMM parameters change, the shape does not), still one launch. A capture that fails turns
 * graphs off for the session (graph_note says why) and the steps run one by one, so a forward never
 * fails for want of a graph.
 */
static srt_status run_graph(srt_session *s, const RtProgram *pg, const SymEnv *env) {
    srt_model *m = s->m;
    const RtDriver *d = &m->drv;
    int prog = (int)(pg - m->plan.programs);
    RtGraphSlot *slot = &s->graphs[prog];
    int T = (int)env->T;
    long P = m->reads_position[prog] ? env->P : -1;
    int from = m->logits_gemm && m->logits_gemm[prog] >= 0 ? s->logits_from : 0; /* its logits GEMM's first row */
    if (slot->exec && slot->T != T) {
        d->graphExecDestroy(slot->exec);
        slot->exec = NULL;
    }
    if (!slot->exec) {
        bool again = slot->seen && slot->seen_T == T;
        slot->seen = !again;
        slot->seen_T = T;
        if (!again || !capture_program(s, pg, env, slot)) return run_steps(s, pg, env);
        slot->T = T;
        slot->P = P;
        slot->logits_from = from;
    } else if (slot->P != P || slot->logits_from != from) { /* other GEMM parameters: an update */
        if (!capture_program(s, pg, env, slot)) return run_steps(s, pg, env);
        slot->P = P;
        slot->logits_from = from;
    }
    CUresult r = d->graphLaunch(slot->exec, s->stream);
    s->calls.graph_launches++;
    if (r != CUDA_SUCCESS)
        return cu_fail(m, r, "launching the CUDA graph of program '%s' of '%s' (T=%d; SHORTC_NO_GRAPHS=1 runs the steps "
                       "one by one)", pg->name, m->plan.model, T);
    return SRT_OK;
}

/* Runs program pg for env on the session's stream (as a graph when the session captures them) and waits. */
static srt_status run_program(srt_session *s, const RtProgram *pg, const SymEnv *env) {
    srt_model *m = s->m;
    bool graph = s->graphs && !s->graph_note[0] && !s->profile; /* profiling times the steps one by one */
    srt_status st = graph ? run_graph(s, pg, env) : run_steps(s, pg, env);
    if (st != SRT_OK) return st;
    CUresult r = sync_stream(s);
    if (r != CUDA_SUCCESS)
        return cu_fail(m, r,
                       "running the %d steps of program '%s' of '%s' (kernels run asynchronously: set "
                       "SHORTC_SYNC_STEPS=1 to find the failing step)",
                       pg->nsteps, pg->name, m->plan.model);
    return profile_collect(s, pg);
}

/* Frees the session's profiling events and sums. */
static void profile_free(srt_session *s) {
    RtProfile *pf = s->profile;
    if (!pf) return;
    srt_model *m = s->m;
    for (int i = 0; i < m->plan.nsteps; i++) {
        if (pf->begin && pf->begin[i]) m->drv.eventDestroy(pf->begin[i]);
        if (pf->end && pf->end[i]) m->drv.eventDestroy(pf->end[i]);
    }
    rt_free(m->ctx, pf->begin);
    rt_free(m->ctx, pf->end);
    rt_free(m->ctx, pf->queued);
    rt_free(m->ctx, pf->ms);
    rt_free(m->ctx, pf->runs);
    rt_free(m->ctx, pf);
    s->profile = NULL;
}

srt_status rt_exec_set_profiling(srt_session *s, bool on) {
    srt_model *m = s->m;
    profile_free(s);
    if (!on) return SRT_OK;
    int n = m->plan.nsteps;
    RtProfile *pf = rt_alloc(m->ctx, sizeof *pf);
    if (!pf) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory (profiling)");
    s->profile = pf;
    pf->begin = rt_alloc(m->ctx, ((size_t)n + 1) * sizeof *pf->begin);
    pf->end = rt_alloc(m->ctx, ((size_t)n + 1) * sizeof *pf->end);
    pf->queued = rt_alloc(m->ctx, ((size_t)n + 1) * sizeof *pf->queued);
    pf->ms = rt_alloc(m->ctx, ((size_t)n + 1) * sizeof *pf->ms);
    pf->runs = rt_alloc(m->ctx, ((size_t)n + 1) * sizeof *pf->runs);
    if (!pf->begin || !pf->end || !pf->queued || !pf->ms || !pf->runs) {
        profile_free(s);
        return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory (profiling)");
    }
    CUresult r = m->drv.ctxSetCurrent(m->cuctx);
    for (int i = 0; i < n && r == CUDA_SUCCESS; i++) {
        r = m->drv.eventCreate(&pf->begin[i], CU_EVENT_DEFAULT);
        if (r == CUDA_SUCCESS) r = m->drv.eventCreate(&pf->end[i], CU_EVENT_DEFAULT);
    }
    if (r != CUDA_SUCCESS) {
        profile_free(s);
        return cu_fail(m, r, "cuEventCreate (profiling)");
    }
    return SRT_OK;
}

void rt_exec_step_time(const srt_session *s, int i, srt_step_time *out) {
    const RtPlan *p = &s->m->plan;
    const RtStep *st = &p->steps[i];
    out->kernel = st->op == RT_STEP_LAUNCH ? p->kernels[st->kernel].name : "gemm";
    out->line = st->line;
    out->layer = st->layer;
    out->ms = s->profile ? s->profile->ms[i] : 0;
    out->runs = s->profile ? s->profile->runs[i] : 0;
}

/* Copies n bytes from the device to the host, counted in the session's bytes_to_host and call counts. */
static srt_status copy_to_host(srt_session *s, void *dst, CUdeviceptr src, size_t n, const char *what) {
    CUresult r = s->m->drv.memcpyDtoH(dst, src, n);
    if (r != CUDA_SUCCESS) return cu_fail(s->m, r, "copying %s from the device", what);
    s->bytes_to_host += n;
    s->calls.copies++;
    s->calls.bytes += (long long)n;
    return SRT_OK;
}

/* Copies n bytes from the host to the device, counted in the session's call counts. */
static CUresult copy_to_device(srt_session *s, CUdeviceptr dst, const void *src, size_t n) {
    s->calls.copies++;
    s->calls.bytes += (long long)n;
    return s->m->drv.memcpyHtoD(dst, src, n);
}

/*
 * The plan's "loss" program over the T rows the forward left in the logits buffer: rows first_row.. are scored
 * on targets (T - first_row of them), the rows before are not; only their T - first_row losses come back.
 */
static srt_status run_loss(srt_session *s, int T, int first_row, const int32_t *targets, float *nll) {
    srt_model *m = s->m;
    const RtPlan *p = &m->plan;
    int32_t *all = rt_alloc(m->ctx, sizeof *all * (size_t)T);
    if (!all) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory");
    for (int i = 0; i < T; i++) all[i] = i < first_row ? -1 : targets[i - first_row];
    CUresult r = copy_to_device(s, ref_addr(s, p->loss_targets), all, sizeof *all * (size_t)T);
    rt_free(m->ctx, all);
    if (r != CUDA_SUCCESS) return cu_fail(m, r, "copying %d targets to the device", T);
    SymEnv env = call_env(T, 0);
    srt_status st = run_program(s, &p->programs[p->loss_program], &env);
    if (st != SRT_OK) return st;
    return copy_to_host(s, nll, ref_addr(s, p->loss_nll) + sizeof(float) * (size_t)first_row,
                        sizeof(float) * (size_t)(T - first_row), "the losses");
}

/* The plan's "sample" program over row T - 1: the sampler's parameters go in, the token drawn (4 bytes) comes
 * back, and the host's copy of the stream advances as the kernel's did. */
static srt_status run_sample(srt_session *s, int T, srt_sampler *smp, int32_t *token) {
    srt_model *m = s->m;
    const RtPlan *p = &m->plan;
    RtSampleParams prm;
    rt_sampler_params(smp, &prm);
    CUresult r = copy_to_device(s, ref_addr(s, p->sample_params), &prm, sizeof prm);
    if (r != CUDA_SUCCESS) return cu_fail(m, r, "copying the sampling parameters to the device");
    SymEnv env = call_env(T, 0);
    srt_status st = run_program(s, &p->programs[p->sample_program], &env);
    if (st == SRT_OK)
        st = copy_to_host(s, token, ref_addr(s, p->sample_params) + offsetof(RtSampleParams, token), sizeof *token,
                          "the sampled token");
    if (st == SRT_OK && *token < 0) return rt_nonfinite_logit(m->ctx, -1 - *token); /* the kernel found one */
    if (st == SRT_OK) rt_sampler_drew(smp);
    return st;
}

/* Runs the program for T tokens at position P (the plan's P: 0 when the plan keeps no state), then hands back
 * what out asks for from rows first_row..T-1. */
static srt_status rt_exec_forward(srt_session *s, const int32_t *tokens, int T, int P, int first_row,
                                  const RtRowsOut *out) {
    srt_model *m = s->m;
    RtPlan *p = &m->plan;
    RtDriver *d = &m->drv;
    CUresult r = d->ctxSetCurrent(m->cuctx);
    if (r != CUDA_SUCCESS) return cu_fail(m, r, "cuCtxSetCurrent");
    if ((r = copy_to_device(s, ref_addr(s, p->tokens), tokens, (size_t)T * sizeof(int32_t))) != CUDA_SUCCESS)
        return cu_fail(m, r, "copying %d token ids to the device", T);
    cublasStatus_t bs = d->blasSetStream(m->blas, s->stream);
    if (bs != CUBLAS_STATUS_SUCCESS) return blas_fail(m, bs, "cublasSetStream");
    SymEnv env = call_env(T, P);
    /* only needed work: the logits rows before first_row are computed only for the fused loss (eval) */
    s->logits_from = out->nll ? 0 : out->logits || out->sampler ? first_row : T;
    srt_status st = run_program(s, rt_plan_program(p, T), &env);
    s->logits_from = 0;
    if (st == SRT_OK && out->nll) st = run_loss(s, T, first_row, out->targets, out->nll);
    if (st == SRT_OK && out->sampler) st = run_sample(s, T, out->sampler, out->token);
    size_t row = (size_t)p->vocab * sizeof(float);
    if (st == SRT_OK && out->logits)
        st = copy_to_host(s, out->logits, ref_addr(s, p->logits) + (size_t)first_row * row,
                          (size_t)(T - first_row) * row, "the logits");
    return st;
}

/* ------------------------------------------------------------------ */
/* The backend table                                                   */
/* ------------------------------------------------------------------ */

/* With state: the plan's range of P (its positions); without, the segment the sequence is re-run in. */
static int device_max_positions(const srt_model *m) {
    return plan_keeps_state(&m->plan) ? (int)m->plan.scalar_max[1] + 1 : m->plan.segment;
}

/* After a call of T tokens at P on a plan whose caches slide: at the segment's end the slide program keeps each
 * cache's last min(P + T, keep) rows, and the next segment's tokens follow them (docs/attention/pia.md). */
static srt_status end_segment(srt_session *s, int T, int P) {
    srt_model *m = s->m;
    if (m->plan.slide_program < 0) return SRT_OK;
    s->nsegment += T;
    if (s->nsegment < m->plan.segment) return SRT_OK;
    SymEnv env = call_env(T, P);
    srt_status st = run_program(s, &m->plan.programs[m->plan.slide_program], &env);
    if (st != SRT_OK) return st;
    s->nsegment = 0;
    s->nhistory = P + T < m->plan.keep ? P + T : m->plan.keep;
    return SRT_OK;
}

/*
 * A forward on a plan without persistent state runs the whole sequence so
 * far (history + the new tokens, at most a segment) and hands back the new
 * rows; the history grows only when the forward succeeds. With state, only
 * the new tokens run.
 */
static srt_status device_run(srt_session *s, const int32_t *tokens, int ntokens, int first_row, const RtRowsOut *out) {
    srt_model *m = s->m;
    int P = m->plan.recurrent ? 0 : s->nhistory; /* recurrent: each call is a window, positions restart */
    if (plan_keeps_state(&m->plan)) {
        int limit = device_max_positions(m);
        if (P + ntokens > limit)
            return rt_error(m->ctx, SRT_ERR_UNSUPPORTED,
                            "%d tokens at position %d go past the %d positions the model can address (its state's "
                            "capacity); reset the session to start a new sequence",
                            ntokens, P, limit);
        srt_status st = rt_exec_forward(s, tokens, ntokens, P, first_row, out);
        if (st == SRT_OK) s->nhistory = P + ntokens;
        return st == SRT_OK ? end_segment(s, ntokens, P) : st;
    }
    if (P + ntokens > m->plan.segment)
        return rt_error(m->ctx, SRT_ERR_UNSUPPORTED,
                        "%d tokens at position %d go past the %d positions the model can address on backend '%s' "
                        "(its segment: this backend re-runs the sequence so far); reset the session to start a new "
                        "sequence",
                        ntokens, P, m->plan.segment, srt_backend_name(m->backend));
    memcpy(s->history + P, tokens, sizeof *tokens * (size_t)ntokens);
    srt_status st = rt_exec_forward(s, s->history, P + ntokens, 0, P + first_row, out);
    if (st == SRT_OK) s->nhistory = P + ntokens;
    return st;
}

/*
 * A plan whose caches slide (PIA) runs a call in pieces that stop at segment ends; rows before first_row are
 * computed, not handed back. So a session is cached evaluation of its tokens however they are split into calls.
 */
static srt_status device_run_split(srt_session *s, const int32_t *tokens, int ntokens, int first_row,
                                   const RtRowsOut *out) {
    const RtPlan *p = &s->m->plan;
    if (p->slide_program < 0) return device_run(s, tokens, ntokens, first_row, out);
    srt_status st = SRT_OK;
    for (int done = 0; st == SRT_OK && done < ntokens;) {
        int room = p->segment - s->nsegment;
        if (room < 1) /* a slide program that failed left the segment full */
            return rt_error(s->m->ctx, SRT_ERR_UNSUPPORTED, "the session's cache did not slide at its segment's end "
                            "(an earlier error); reset the session");
        RtPiece pc = rt_piece(done, ntokens, room, first_row);
        RtRowsOut o = {0};
        if (pc.first < pc.n) { /* this piece's rows first.. are wanted: at row skip of the caller's */
            o = (RtRowsOut){.logits = out->logits ? out->logits + (size_t)pc.skip * (size_t)p->vocab : NULL,
                            .targets = out->targets ? out->targets + pc.skip : NULL,
                            .nll = out->nll ? out->nll + pc.skip : NULL,
                            .sampler = done + pc.n == ntokens ? out->sampler : NULL,
                            .token = out->token};
        }
        st = device_run(s, tokens + done, pc.n, pc.first < pc.n ? pc.first : pc.n - 1, &o);
        done += pc.n;
    }
    return st;
}

static srt_status device_forward(srt_session *s, const int32_t *tokens, int ntokens, int first_row, float *logits) {
    RtRowsOut out = {.logits = logits};
    return device_run_split(s, tokens, ntokens, first_row, &out);
}

/* The losses of rows first_row.. from the plan's loss program: T floats come back, not T x vocab (a plan
 * without the program, from an older shortc or written by hand, has them computed on the host). */
static srt_status device_forward_nll(srt_session *s, const int32_t *tokens, int ntokens, int first_row,
                                     const int32_t *targets, float *nll) {
    if (s->m->plan.loss_program < 0) return rt_forward_nll_on_host(s, tokens, ntokens, first_row, targets, nll);
    RtRowsOut out = {.targets = targets, .nll = nll};
    return device_run_split(s, tokens, ntokens, first_row, &out);
}

/* The next token drawn on the device by the plan's sample program: one token id comes back, not a row of
 * logits (a plan without the program has the row drawn from on the host). */
static srt_status device_forward_sample(srt_session *s, const int32_t *tokens, int ntokens, srt_sampler *smp,
                                        int32_t *token) {
    if (s->m->plan.sample_program < 0) return rt_forward_sample_on_host(s, tokens, ntokens, smp, token);
    RtRowsOut out = {.sampler = smp, .token = token};
    return device_run_split(s, tokens, ntokens, ntokens - 1, &out);
}

/* The program-running state of a session that has none of a session's buffers (no arena, no state): a stream
 * and the launch argument arrays; what the load program needs. */
static srt_status loader_open(srt_model *m, srt_session *ls) {
    const RtPlan *p = &m->plan;
    *ls = (srt_session){.m = m};
    ls->params = rt_alloc(m->ctx, sizeof *ls->params * (size_t)(p->max_args ? p->max_args : 1));
    ls->vals = rt_alloc(m->ctx, sizeof *ls->vals * (size_t)(p->max_args ? p->max_args : 1));
    if (!ls->params || !ls->vals) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory");
    for (int a = 0; a < p->max_args; a++) ls->params[a] = &ls->vals[a];
    CUresult r = m->drv.streamCreate(&ls->stream, CU_STREAM_DEFAULT);
    if (r != CUDA_SUCCESS) return cu_fail(m, r, "cuStreamCreate");
    ls->have_stream = true;
    return SRT_OK;
}

static void loader_close(srt_model *m, srt_session *ls) {
    if (ls->have_stream) m->drv.streamDestroy(ls->stream);
    rt_free(m->ctx, ls->params);
    rt_free(m->ctx, ls->vals);
}

/*
 * The plan's load program, once per weights load: the derived tensors (Shortformer's positional tables)
 * computed from the weights just uploaded into the model's derived block, which every session reads. Its
 * steps refer to weights, constants and derived tensors only (plan_load_program_check), so it runs with no
 * session.
 */
static srt_status run_load_program(srt_model *m) {
    const RtPlan *p = &m->plan;
    if (p->load_program < 0) return SRT_OK;
    RtDriver *d = &m->drv;
    CUresult r;
    if (!m->dderived && (r = d->memAlloc(&m->dderived, p->derived_bytes)) != CUDA_SUCCESS) {
        m->dderived = 0;
        return cu_fail(m, r, "allocating %zu bytes of device memory for the derived tensors", p->derived_bytes);
    }
    srt_session ls;
    srt_status st = loader_open(m, &ls);
    cublasStatus_t bs = st == SRT_OK ? d->blasSetStream(m->blas, ls.stream) : CUBLAS_STATUS_SUCCESS;
    if (bs != CUBLAS_STATUS_SUCCESS) st = blas_fail(m, bs, "cublasSetStream");
    SymEnv env = call_env(1, 0);
    const RtProgram *pg = &p->programs[p->load_program];
    if (st == SRT_OK) st = run_steps(&ls, pg, &env);
    if (st == SRT_OK && (r = d->streamSynchronize(ls.stream)) != CUDA_SUCCESS)
        st = cu_fail(m, r, "running the %d steps of program '%s' of '%s' (the derived tensors)", pg->nsteps, pg->name,
                     p->model);
    loader_close(m, &ls);
    if (st == SRT_OK) m->load_runs++;
    return st;
}

static srt_status device_install_weights(srt_model *m, float **vals) {
    srt_status st = upload_weights(m, vals);
    if (st == SRT_OK) st = run_load_program(m);
    for (int i = 0; i < m->plan.nweights; i++) rt_free(m->ctx, vals[i]);
    rt_free(m->ctx, vals);
    return st;
}

/*
 * A batched decode step (docs/runtime.md, "Batch"): the decode program runs once with T = n rows, row r the next
 * token of sequence seqs[r], on the first sequence's session (its arena, stream and graphs; every sequence's
 * state lies in its blocks). The tokens and the sequence table (positions, then sequence indices) go in, in two
 * copies; P is the furthest position (the decode attention's grid covers it); the n logits rows come back in one
 * copy, or with samplers the plan's sample program draws each sequence's token from its row (a launch, the
 * parameters in and the token out per row; a plan without the program draws on the host).
 */
static srt_status device_decode_batch(srt_session *first, srt_session *const *lanes, const int *seqs, int n,
                                      const int32_t *tokens, float *const *logits, srt_sampler *const *samplers,
                                      int32_t *drawn) {
    srt_model *m = first->m;
    const RtPlan *p = &m->plan;
    RtDriver *d = &m->drv;
    if (n < 1 || n > p->decode_batch || !first->state_shared)
        return rt_error(m->ctx, SRT_ERR_INVALID, "a batched decode step of %d sequences (the plan runs 1 to %d, in a "
                        "batch session)", n, p->decode_batch);
    size_t row = (size_t)p->vocab;
    int32_t *tab = rt_alloc(m->ctx, sizeof *tab * 2 * (size_t)n);
    float *rows = rt_alloc(m->ctx, sizeof *rows * row * (size_t)n);
    if (!tab || !rows) {
        rt_free(m->ctx, tab);
        rt_free(m->ctx, rows);
        return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory (a batched decode step)");
    }
    int P = 0;
    for (int r = 0; r < n; r++) {
        tab[r] = lanes[r]->nhistory;
        tab[n + r] = seqs[r];
        if (tab[r] > P) P = tab[r];
    }
    srt_status st = SRT_OK;
    CUresult cr = d->ctxSetCurrent(m->cuctx);
    if (cr == CUDA_SUCCESS) cr = copy_to_device(first, ref_addr(first, p->tokens), tokens, sizeof *tokens * (size_t)n);
    if (cr == CUDA_SUCCESS) cr = copy_to_device(first, ref_addr(first, p->seq_table), tab, sizeof *tab * 2 * (size_t)n);
    if (cr != CUDA_SUCCESS) st = cu_fail(m, cr, "copying a batched decode step's %d tokens and sequence table", n);
    cublasStatus_t bs = st == SRT_OK ? d->blasSetStream(m->blas, first->stream) : CUBLAS_STATUS_SUCCESS;
    if (bs != CUBLAS_STATUS_SUCCESS) st = blas_fail(m, bs, "cublasSetStream");
    SymEnv env = {.T = n, .P = P, .fill = P, .B = n};
    if (st == SRT_OK) st = run_program(first, &p->programs[p->decode_program], &env);
    bool device_draws = samplers && p->sample_program >= 0;
    for (int r = 0; st == SRT_OK && device_draws && r < n; r++) /* the sample program over row r: T = r + 1 */
        st = run_sample(first, r + 1, samplers[r], &drawn[r]);
    if (st == SRT_OK && !device_draws)
        st = copy_to_host(first, rows, ref_addr(first, p->logits), sizeof *rows * row * (size_t)n, "the logits");
    for (int r = 0; st == SRT_OK && !device_draws && r < n; r++) {
        if (samplers) st = srt_sampler_next(samplers[r], rows + row * (size_t)r, &drawn[r]); /* a plan without one */
        else memcpy(logits[r], rows + row * (size_t)r, sizeof *rows * row);
    }
    for (int r = 0; st == SRT_OK && r < n; r++) lanes[r]->nhistory++;
    rt_free(m->ctx, tab);
    rt_free(m->ctx, rows);
    return st;
}

static size_t device_session_state_bytes(const srt_session *s) { return s->m->plan.state_bytes; }

static int device_session_position(const srt_session *s) { return s->m->plan.recurrent ? 0 : s->nhistory; }

static size_t device_state_bytes(const srt_model *m) { return m->plan.state_bytes; }

static bool device_kv_cache(const srt_model *m) { return plan_keeps_state(&m->plan); }

static int device_state_keep(const srt_model *m) { return m->plan.keep; }


const RtBackend rt_backend_device = {
    .keeps_ir = false,
    .open = rt_exec_open,
    .close = rt_exec_close,
    .install_weights = device_install_weights,
    .session_create = rt_exec_session_create,
    .session_destroy = rt_exec_session_destroy,
    .session_reset = rt_exec_session_reset,
    .forward = device_forward,
    .forward_nll = device_forward_nll,
    .forward_sample = device_forward_sample,
    .decode_batch = device_decode_batch,
    .session_state_bytes = device_session_state_bytes,
    .session_position = device_session_position,
    .model_state_bytes = device_state_bytes,
    .max_positions = device_max_positions,
    .kv_cache = device_kv_cache,
    .state_keep = device_state_keep,
};
