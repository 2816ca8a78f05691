/*
 * step_check.c — every step of a plan, alone, against the reference
 * interpreter (issue 3: each template checked in isolation at odd shapes).
 *
 *   step_check MODEL.arch NTOKENS [--seed S] [--perturb STEP] [--skip STEP]
 *
 * The model is compiled in memory (load, lower, passes, emit) for the IR and
 * opened on the simulator backend (srt_model_open: the same emitted .cu
 * compiled by the simulator's compile_module; its plan must equal ours).
 * Weights are the runtime's seeded random weights (srt_model_random_weights
 * uploads them; rt_weights_random gives the interpreter the same fp32
 * values, rounded to each stored dtype); token ids are seeded random too.
 * interp_run_values computes every IR value on the host.
 *
 * Then, node by node (the plan's per-step "node" field; a node is one
 * launch, one GEMM, or a GEMM with its staging conversions and epilogue,
 * consecutive steps checked as a group): the whole arena is filled with
 * 0xff bytes (NaN in f32/f16/bf16), the token ids and the interpreter's
 * values of the node's activation inputs are written at their arena places
 * (converted to the stored dtype), the node's steps run through the
 * executor's own step function (rt_exec_step: the same argument packing and
 * cuBLAS calls as a forward), and the node's output value is read back and
 * compared with the interpreter's: |d| <= 1e-4 + 1e-4*|ref| for fp32
 * storage, 2e-2 + 2e-2*|ref| for fp16/bf16. An element the steps did not
 * write stays NaN and fails.
 *
 * --perturb STEP changes one element of the output of STEP's node on the
 * device (by 8 times its tolerance) after the node ran, and --skip STEP does
 * not run STEP: both must make the check fail (the negative tests).
 * Exit status 0 when every node passed.
 */
#include "rt_internal.h"
#include "shortc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one run checks. */
typedef struct Check {
    const Graph *g;        /* the IR, after the passes */
    srt_model *m;          /* the simulator model */
    srt_session *s;        /* its session */
    const char *cu;        /* the emitted .cu (for template names) */
    float **vals;          /* interpreter values per value id (weights: the plan's arrays) */
    const int32_t *tokens; /* token ids */
    int T;                 /* token count */
    int perturb;           /* step whose node's output is perturbed (-1: none) */
    int skip;              /* step that is not run (-1: none) */
} Check;

static double tol_abs(DType t) { return t == DT_F32 ? 1e-4 : 2e-2; }

static void decode(DType t, const void *src, size_t n, float *dst) {
    const uint16_t *h = src;
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case DT_F16: dst[i] = rt_f16_to_f32(h[i]); break;
        case DT_BF16: dst[i] = rt_bf16_to_f32(h[i]); break;
        default: memcpy(&dst[i], (const char *)src + 4 * i, 4); break;
        }
    }
}

/* The template a kernel came from: "(templates/X.cuh)" on the comment line above its definition. */
static void template_of(const char *cu, const char *kernel, char *out, size_t len) {
    snprintf(out, len, "?");
    char pat[512];
    snprintf(pat, sizeof pat, "extern \"C\" __global__ void %s(", kernel);
    const char *at = strstr(cu, pat);
    if (!at || at == cu) return;
    const char *line = at - 1; /* the newline ending the previous line */
    while (line > cu && line[-1] != '\n') line--;
    const char *t = strstr(line, "(templates/");
    if (!t || t > at) return;
    t += strlen("(templates/");
    const char *e = strchr(t, ')');
    if (!e || e > at) return;
    snprintf(out, len, "%.*s", (int)(e - t), t);
}

/* "[61x36]": a value's stored shape at T. */
static void shape_text(const Value *v, int T, char *out, size_t len) {
    size_t n = (size_t)snprintf(out, len, "[");
    for (int k = 0; k < v->rank && n < len; k++)
        n += (size_t)snprintf(out + n, len - n, "%s%d", k ? "x" : "", v->dims[k] == DIM_T ? T : v->dims[k]);
    if (n < len) snprintf(out + n, len - n, "]");
}

static CUresult put(Check *c, size_t offset, const void *data, size_t bytes) {
    return c->m->drv.memcpyHtoD(c->s->arena + offset, data, bytes);
}

/* Poisons the arena and writes the token ids and node n's activation inputs; false with a message. */
static bool stage_inputs(Check *c, const Node *n, char *why, size_t len) {
    const RtPlan *p = &c->m->plan;
    RtDriver *d = &c->m->drv;
    if (d->memsetD8(c->s->arena, 0xff, p->arena_bytes) != CUDA_SUCCESS) {
        snprintf(why, len, "poisoning the arena failed");
        return false;
    }
    if (put(c, (size_t)p->tokens.offset, c->tokens, sizeof(int32_t) * (size_t)c->T) != CUDA_SUCCESS) {
        snprintf(why, len, "writing the token ids failed");
        return false;
    }
    for (int k = 0; k < n->nin; k++) {
        const Value *v = c->g->values[n->in[k]];
        if (v->cls == VC_WEIGHT || v->cls == VC_INPUT) continue; /* uploaded weights; tokens written above */
        if (k == 0 && n->norm_add) continue; /* the sum of the add fused in: the step writes it (checked too) */
        if (!ir_value_in_arena(c->g, v)) {
            snprintf(why, len, "input %s is not in the activation arena (state is not supported here)", v->name);
            return false;
        }
        if (!c->vals[v->id]) {
            snprintf(why, len, "the interpreter did not compute input %s", v->name);
            return false;
        }
        size_t cnt = ir_numel(v, c->T), bytes = cnt * (size_t)dtype_size(v->dtype);
        void *buf = malloc(bytes ? bytes : 1);
        if (!buf) {
            snprintf(why, len, "out of memory");
            return false;
        }
        rt_encode(v->dtype, c->vals[v->id], cnt, buf);
        CUresult r = put(c, v->offset, buf, bytes);
        free(buf);
        if (r != CUDA_SUCCESS) {
            snprintf(why, len, "writing input %s failed", v->name);
            return false;
        }
    }
    return true;
}

/* Reads value v from the arena as fp32 (malloc'd), or NULL. */
static float *fetch(Check *c, const Value *v) {
    size_t cnt = ir_numel(v, c->T), bytes = cnt * (size_t)dtype_size(v->dtype);
    void *raw = malloc(bytes ? bytes : 1);
    float *out = malloc(sizeof *out * (cnt ? cnt : 1));
    if (!raw || !out || c->m->drv.memcpyDtoH(raw, c->s->arena + v->offset, bytes) != CUDA_SUCCESS) {
        free(raw);
        free(out);
        return NULL;
    }
    decode(v->dtype, raw, cnt, out);
    free(raw);
    return out;
}

/* The negative test: moves one element of v on the device 8 tolerances away from the interpreter's value. */
static bool perturb_output(Check *c, const Value *v) {
    size_t cnt = ir_numel(v, c->T), i = cnt / 2, sz = (size_t)dtype_size(v->dtype);
    float want = c->vals[v->id][i];
    float x = want + 8.0f * (float)(tol_abs(v->dtype) * (1.0 + fabs(want)));
    unsigned char enc[4];
    rt_encode(v->dtype, &x, 1, enc);
    return put(c, v->offset + i * sz, enc, sz) == CUDA_SUCCESS;
}

/* Compares value v in the arena with the interpreter's; prints its max difference; true when within tolerance. */
static bool compare_value(Check *c, const Value *o, char *why, size_t len) {
    float *got = fetch(c, o);
    if (!got) {
        snprintf(why, len, "reading %s failed", o->name);
        return false;
    }
    const float *want = c->vals[o->id];
    double tol = tol_abs(o->dtype), maxd = 0;
    size_t cnt = ir_numel(o, c->T), bad = 0, worst = 0;
    for (size_t i = 0; i < cnt; i++) {
        double dd = fabs((double)got[i] - want[i]);
        if (!(dd <= tol + tol * fabs(want[i]))) { /* NaN (an element nobody wrote) fails too */
            if (!bad++ || !(dd <= maxd)) worst = i;
        }
        if (!(dd <= maxd)) maxd = dd;
    }
    printf(": max abs diff %.2g", maxd);
    if (bad)
        snprintf(why, len, "%s: %zu of %zu elements outside %.0e + %.0e*|ref|; element %zu: got %.9g, want %.9g", o->name,
                 bad, cnt, tol, tol, worst, got[worst], want[worst]);
    free(got);
    return bad == 0;
}

/* Runs and checks the steps [first, last] of node n; prints one line; true when it passed. */
static bool check_node(Check *c, int first, int last, const Node *n) {
    const RtPlan *p = &c->m->plan;
    const Value *o = c->g->values[n->out];
    char what[1024], tmpl[128], shape[64], why[1024] = "";
    size_t wl = 0;
    if (first == last) wl = (size_t)snprintf(what, sizeof what, "step %d ", first);
    else wl = (size_t)snprintf(what, sizeof what, "steps %d-%d (group: ", first, last);
    for (int i = first; i <= last && wl < sizeof what; i++) {
        const RtStep *st = &p->steps[i];
        if (st->op == RT_STEP_GEMM) {
            wl += (size_t)snprintf(what + wl, sizeof what - wl, "%sgemm", i > first ? ", " : "");
        } else {
            const char *kn = p->kernels[st->kernel].name;
            template_of(c->cu, kn, tmpl, sizeof tmpl);
            wl += (size_t)snprintf(what + wl, sizeof what - wl, "%slaunch %s (%s)", i > first ? ", " : "", kn, tmpl);
        }
    }
    if (first != last && wl < sizeof what) snprintf(what + wl, sizeof what - wl, ")");
    shape_text(o, c->T, shape, sizeof shape);
    printf("%s node %d %s value %s %s", what, n->id, op_name(n->op), o->name, shape);

    bool ok = true;
    if (!ir_value_in_arena(c->g, o)) {
        ok = false;
        snprintf(why, sizeof why, "output %s is not in the activation arena (state is not supported here)", o->name);
    } else if (!c->vals[o->id]) {
        ok = false;
        snprintf(why, sizeof why, "the interpreter did not compute %s", o->name);
    } else {
        ok = stage_inputs(c, n, why, sizeof why);
    }
    for (int i = first; ok && i <= last; i++) {
        if (i == c->skip) continue;
        if (rt_exec_step(c->s, i, c->T) != SRT_OK) {
            ok = false;
            snprintf(why, sizeof why, "%s", srt_last_error(c->m->ctx));
        }
    }
    if (ok && c->perturb >= first && c->perturb <= last && !perturb_output(c, o)) {
        ok = false;
        snprintf(why, sizeof why, "perturbing the output failed");
    }
    if (ok) ok = compare_value(c, o, why, sizeof why);
    /* a norm with an add fused in also wrote the add's sum (unless nothing else reads it) */
    if (ok && n->norm_add && !n->sum_unused) {
        printf(", sum %s", c->g->values[n->in[0]]->name);
        ok = compare_value(c, c->g->values[n->in[0]], why, sizeof why);
    }
    if (ok) printf(" ok\n");
    else printf(" FAIL\n    %s\n", why);
    return ok;
}

static int usage(void) {
    fprintf(stderr, "usage: step_check MODEL.arch NTOKENS [--seed S] [--perturb STEP] [--skip STEP]\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 3) return usage();
    const char *path = argv[1];
    int T = atoi(argv[2]), perturb = -1, skip = -1;
    uint64_t seed = 7;
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) return usage();
        if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--perturb") == 0) perturb = atoi(argv[++i]);
        else if (strcmp(argv[i], "--skip") == 0) skip = atoi(argv[++i]);
        else return usage();
    }

    Arena arena;
    arena_init(&arena);
    Diag diag;
    diag_init(&diag, &arena, stderr);
    CompileOptions co = {.path = path};
    CompileResult cr;
    srt_context *ctx = NULL;
    srt_model *m = NULL;
    srt_session *s = NULL;
    float **vals = NULL, **pvals = NULL, *logits = NULL;
    int32_t *tokens = NULL;
    int status = 1, passed = 0, failed = 0;
    const Graph *g = shortc_compile(&arena, &diag, &co, &cr) ? cr.graph : NULL;
    const EmitResult er = cr.emit;
    if (!g) goto done;
    if (T < 1 || T > g->spec->segment) {
        fprintf(stderr, "step_check: %d tokens: 1 to %d (the segment)\n", T, g->spec->segment);
        goto done;
    }
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) goto done;
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_SIM;
    if (srt_model_open(ctx, path, &opt, &m) != SRT_OK || srt_model_random_weights(m, seed) != SRT_OK ||
        srt_session_create(m, 1, &s) != SRT_OK) {
        fprintf(stderr, "step_check: %s\n", srt_last_error(ctx));
        goto done;
    }
    const RtPlan *p = &m->plan;
    if (strcmp(m->plan_json, er.plan_json) != 0) {
        fprintf(stderr, "step_check: the simulator model's plan differs from the one compiled here\n");
        goto done;
    }
    if (p->tokens.kind != RT_REF_ARENA) {
        fprintf(stderr, "step_check: the token ids are not in the arena\n");
        goto done;
    }

    /* the weights every backend sees, by IR value id */
    pvals = calloc((size_t)(p->nweights ? p->nweights : 1), sizeof *pvals);
    vals = calloc((size_t)g->nvalues, sizeof *vals);
    tokens = malloc(sizeof *tokens * (size_t)T);
    logits = malloc(sizeof *logits * (size_t)T * (size_t)g->spec->vocab);
    if (!pvals || !vals || !tokens || !logits || rt_weights_random(ctx, p, seed, pvals) != SRT_OK) {
        fprintf(stderr, "step_check: preparing the weights failed: %s\n", srt_last_error(ctx));
        goto done;
    }
    const float **wts = calloc((size_t)g->nvalues, sizeof *wts);
    if (!wts) goto done;
    for (int v = 0; v < g->nvalues; v++) {
        const Value *val = g->values[v];
        if (val->cls != VC_WEIGHT) continue;
        const char *name = val->weight_name ? val->weight_name : val->name;
        if (name[0] == '@') name++;
        for (int i = 0; i < p->nweights; i++)
            if (strcmp(p->weights[i].name, name) == 0) wts[v] = pvals[i];
    }
    RtRng rng = {seed ^ 0x5eedull};
    for (int t = 0; t < T; t++) tokens[t] = (int32_t)(rt_splitmix64(&rng) % (uint64_t)g->spec->vocab);
    bool ran = interp_run_values(g, &diag, wts, tokens, T, logits, vals);
    free(wts);
    if (!ran) goto done;

    printf("%s: %d steps (%d launches, %d GEMMs) of %s at T=%d, seed %llu\n", path, p->nsteps, p->nlaunches, p->ngemms,
           p->model, T, (unsigned long long)seed);
    Check c = {.g = g, .m = m, .s = s, .cu = er.cu, .vals = vals, .tokens = tokens, .T = T, .perturb = perturb, .skip = skip};
    bool *seen = calloc((size_t)g->nnodes + 1, sizeof *seen);
    if (!seen) goto done;
    for (int i = 0; i < p->nsteps;) {
        int node = p->steps[i].node, j = i;
        while (j + 1 < p->nsteps && p->steps[j + 1].node == node) j++;
        if (node < 0 || node >= g->nnodes || g->nodes[node]->dead || seen[node]) {
            printf("step %d: node %d %s: cannot be checked FAIL\n", i, node,
                   node < 0 || node >= g->nnodes ? "is not a node of the graph"
                   : g->nodes[node]->dead        ? "is dead"
                                                 : "already had steps (its steps are not consecutive)");
            failed++;
        } else {
            seen[node] = true;
            if (check_node(&c, i, j, g->nodes[node])) passed++;
            else failed++;
        }
        i = j + 1;
    }
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i]->dead && !seen[i] && !g->nodes[i]->by_norm) { /* an add in a norm: checked there */
            printf("node %d %s has no step in the plan FAIL\n", i, op_name(g->nodes[i]->op));
            failed++;
        }
    free(seen);
    printf("%d passed, %d failed\n", passed, failed);
    status = failed ? 1 : 0;
done:
    if (vals)
        for (int v = 0; v < g->nvalues; v++) free(vals[v]);
    free(vals);
    if (pvals && m)
        for (int i = 0; i < m->plan.nweights; i++) rt_free(ctx, pvals[i]);
    free(pvals);
    free(tokens);
    free(logits);
    srt_model_close(m);
    srt_context_destroy(ctx);
    compile_result_free(&cr);
    arena_free(&arena);
    return status;
}
