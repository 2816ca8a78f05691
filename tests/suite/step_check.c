/*
 * step_check.c — every step of a plan, alone, against the reference
 * interpreter (issue 3: each template checked in isolation at odd shapes).
 *
 *   step_check MODEL.arch NTOKENS [--position P] [--seed S] [--perturb STEP] [--skip STEP]
 *
 * The model is compiled in memory (load, lower, passes, emit) for the IR and
 * opened on the simulator backend (srt_model_open: the same emitted .cu
 * compiled by the simulator's compile_module; its plan must equal ours).
 * Weights are the runtime's seeded random weights (srt_model_random_weights
 * uploads them; rt_weights_random gives the interpreter the same fp32
 * values, rounded to each stored dtype); token ids are seeded random too.
 * An interpreter session computes every IR value on the host: with
 * --position P it first consumes P seeded random tokens, so the checked call
 * continues a sequence (its positions are P..P+T-1 and attention reads the
 * P cached keys).
 *
 * State values (the KV caches) live in the session's state buffers, strided
 * by their capacity: a node reading one gets the interpreter's whole state
 * after the call (rows 0..P+T-1), a node writing one is compared on the rows
 * it commits (P..P+T-1), the rest of the buffer poisoned like the arena.
 * Derived tables (Shortformer's positional tables, computed by the plan's
 * load program when the weights load) are first compared whole with the
 * interpreter's (interp_derive, which the interpreter's forward is handed);
 * a node reading one then gets the interpreter's table in the model's
 * derived block.
 *
 * Then, node by node over the program a call of NTOKENS runs (NTOKENS = 1: "decode", with its split-key
 * attention) (the plan's per-step "node" field; a node is one
 * launch, one GEMM, or a GEMM with its staging conversions and epilogue,
 * consecutive steps checked as a group): the whole arena is filled with
 * 0xff bytes (NaN in f32/f16/bf16), the token ids and the interpreter's
 * values of the node's activation inputs are written at their arena places
 * (converted to the stored dtype), the node's steps run through the
 * executor's own step function (rt_exec_step: the same argument packing and
 * cuBLAS calls as a forward), and the node's output value is read back and
 * compared with the interpreter's: |d| <= 1e-4 + 1e-4*|ref| for fp32
 * storage (2e-3 + 2e-3*|ref| under `math tf32`: tol_of), 2e-2 + 2e-2*|ref| for fp16/bf16. An element the steps did not
 * write stays NaN and fails.
 *
 * A recurrent model runs whole windows at position 0 carrying h_prev: there
 * --position P runs a window of P tokens first, and the checked call is the
 * next window (at 0, h_prev present); a node reading the recurrent state gets
 * the interpreter's state from before the call.
 *
 * --perturb STEP changes one element of the output of STEP's node on the
 * device (by 8 times its tolerance) after the node ran, and --skip STEP does
 * not run STEP: both must make the check fail (the negative tests).
 * Exit status 0 when every node passed.
 */
#include "rt_internal.h"
#include "shortc.h"
#include "weights_by_value.h"

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
    float **vals;          /* interpreter values per value id (weights: the plan's arrays; state: the call's window) */
    const InterpSession *is; /* the interpreter's session after the call (its state: rows 0..P+T-1) */
    const int32_t *tokens; /* token ids */
    int T;                 /* token count */
    int P;                 /* position of the first */
    float *const *derived; /* interpreter's derived tables per value id (interp_derive; NULL: none) */
    float *const *rec_before; /* recurrence: the interpreter's h_prev state per value id before the call */
    int perturb;           /* step whose node's output is perturbed (-1: none) */
    int skip;              /* step that is not run (-1: none) */
} Check;

/* Tolerance (absolute and relative) of a value stored as t in graph g. fp32 under `math tf32`: 2e-3. TF32
 * keeps 10 mantissa bits, so each operand of a product is off by up to u = 2^-11 (4.9e-4, nearest), a
 * product by 2u (9.8e-4) and a sum of products by 2u times the sum of |products|; the matrix models' steps
 * (GEMMs of up to 160 inputs, attention over up to 129 keys, scores through the softmax, probabilities and
 * values both rounded) stay within 2e-3 + 2e-3*|ref|, about 4u, while fp32's 1e-4 (0.2u) would fail them. */
static double tol_of(const Graph *g, DType t) {
    if (t != DT_F32) return 2e-2;
    return g->spec && g->spec->tf32 ? 2e-3 : 1e-4;
}
#define tol_abs(t) tol_of(c->g, (t))

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

/* "[61x36]": a value's stored shape at T (a state's window: its T new rows). */
static void shape_text(const Value *v, int T, char *out, size_t len) {
    size_t n = (size_t)snprintf(out, len, "[");
    SymEnv env = {.T = T};
    for (int k = 0; k < v->rank && n < len; k++)
        n += (size_t)snprintf(out + n, len - n, "%s%ld", k ? "x" : "", symdim_eval(v->dims[k], &env));
    if (n < len) snprintf(out + n, len - n, "]");
}

static CUresult put(Check *c, size_t offset, const void *data, size_t bytes) {
    return c->m->drv.memcpyHtoD(c->s->arena + offset, data, bytes);
}

/* The plan's state entry of state value v (matched by name), or -1. */
static int state_of(const Check *c, const Value *v) {
    const RtPlan *p = &c->m->plan;
    const char *name = v->name[0] == '%' ? v->name + 1 : v->name;
    for (int i = 0; i < p->nstate; i++)
        if (strcmp(p->state[i].name, name) == 0) return i;
    return -1;
}

/* Element i of a state value's window ([.., T, ..] dense) in its state at capacity: row P + t (the recurrence's
 * state: one vector, all of it). */
static size_t state_elem(const Check *c, const Value *v, size_t i) {
    if (v->role == STATE_RECURRENT) return i;
    size_t inner = 1;
    int axis = ir_token_axis(v) < 0 ? 0 : ir_token_axis(v);
    for (int k = axis + 1; k < v->rank; k++) inner *= (size_t)ir_dim(v, k);
    size_t row = (i / inner) % (size_t)c->T, outer = i / inner / (size_t)c->T;
    return (outer * (size_t)v->capacity + (size_t)c->P + row) * inner + i % inner;
}

/* Writes the interpreter's whole state of v (capacity rows; the recurrence's h_prev: as before the call) to its
 * state buffer; false on failure. */
static bool put_state(Check *c, const Value *v, int idx) {
    int cap = 0;
    const float *st = interp_session_state(c->is, v->id, &cap);
    if (v->role == STATE_RECURRENT) st = c->rec_before ? c->rec_before[v->id] : NULL;
    size_t cnt = ir_state_numel(v), bytes = cnt * (size_t)dtype_size(v->dtype);
    void *buf = st && cap == v->capacity ? malloc(bytes) : NULL;
    if (!buf) return false;
    rt_encode(v->dtype, st, cnt, buf);
    CUresult r = c->m->drv.memcpyHtoD(c->s->state[idx], buf, bytes);
    free(buf);
    return r == CUDA_SUCCESS;
}

/* The plan's derived entry of derived value v (matched by name), or -1. */
static int derived_of(const Check *c, const Value *v) {
    const RtPlan *p = &c->m->plan;
    const char *name = v->name[0] == '%' ? v->name + 1 : v->name;
    for (int i = 0; i < p->nderived; i++)
        if (strcmp(p->derived[i].name, name) == 0) return i;
    return -1;
}

/* Writes the interpreter's derived table v into the model's derived block; false on failure. */
static bool put_derived(Check *c, const Value *v) {
    int idx = derived_of(c, v);
    size_t cnt = ir_state_numel(v), bytes = cnt * (size_t)dtype_size(v->dtype);
    const float *want = c->derived ? c->derived[v->id] : NULL;
    void *buf = idx >= 0 && want && c->m->plan.derived[idx].bytes == bytes ? malloc(bytes) : NULL;
    if (!buf) return false;
    rt_encode(v->dtype, want, cnt, buf);
    CUresult r = c->m->drv.memcpyHtoD(c->m->dderived + c->m->plan.derived[idx].offset, buf, bytes);
    free(buf);
    return r == CUDA_SUCCESS;
}

/* The device's derived table v (the load program's, from the uploaded weights) against the interpreter's, whole;
 * prints one line for node n, which computed it; true when within tolerance. */
static bool check_derived(Check *c, const Node *n, const Value *v) {
    int idx = derived_of(c, v);
    size_t cnt = ir_state_numel(v), bytes = cnt * (size_t)dtype_size(v->dtype), bad = 0;
    const float *want = c->derived ? c->derived[v->id] : NULL;
    void *raw = idx >= 0 && want && c->m->plan.derived[idx].bytes == bytes ? malloc(bytes) : NULL;
    float *got = raw ? malloc(sizeof *got * cnt) : NULL;
    printf("load program: node %d %s value %s [%zu elements]", n->id, op_name(n->op), v->name, cnt);
    bool read = got && c->m->drv.memcpyDtoH(raw, c->m->dderived + c->m->plan.derived[idx].offset, bytes) == CUDA_SUCCESS;
    double tol = tol_abs(v->dtype), maxd = 0;
    if (read) {
        decode(v->dtype, raw, cnt, got);
        for (size_t i = 0; i < cnt; i++) {
            double dd = fabs((double)got[i] - want[i]);
            bad += !(dd <= tol + tol * fabs(want[i]));
            if (!(dd <= maxd)) maxd = dd;
        }
        printf(": max abs diff %.2g", maxd);
    }
    bool ok = read && bad == 0;
    if (!read) printf(" FAIL\n    reading the derived table (plan entry %d) failed\n", idx);
    else if (bad) printf(" FAIL\n    %s: %zu of %zu elements outside %.0e + %.0e*|ref|\n", v->name, bad, cnt, tol, tol);
    else printf(" ok\n");
    free(raw);
    free(got);
    return ok;
}

/* Poisons the arena and writes the token ids and node n's activation inputs; false with a message. */
static bool stage_inputs(Check *c, const Node *n, char *why, size_t len) {
    const RtPlan *p = &c->m->plan;
    RtDriver *d = &c->m->drv;
    if (d->memsetD8(c->s->arena, 0xff, p->arena_bytes) != CUDA_SUCCESS) {
        snprintf(why, len, "poisoning the arena failed");
        return false;
    }
    for (int i = 0; i < p->nstate; i++)
        if (d->memsetD8(c->s->state[i], 0xff, p->state[i].bytes) != CUDA_SUCCESS) {
            snprintf(why, len, "poisoning state '%s' failed", p->state[i].name);
            return false;
        }
    if (put(c, (size_t)p->tokens.offset, c->tokens, sizeof(int32_t) * (size_t)c->T) != CUDA_SUCCESS) {
        snprintf(why, len, "writing the token ids failed");
        return false;
    }
    if (n->op == OP_REC_KV) { /* the recurrent state it reads (not an input): h_prev as before the call */
        const Value *v = c->g->values[n->rec_state];
        int idx = state_of(c, v);
        if (idx < 0 || !put_state(c, v, idx)) {
            snprintf(why, len, "writing the recurrent state %s failed", v->name);
            return false;
        }
    }
    for (int k = 0; k < n->nin; k++) {
        const Value *v = c->g->values[n->in[k]];
        if (v->cls == VC_WEIGHT || v->cls == VC_INPUT) continue; /* uploaded weights; tokens written above */
        if (k == 0 && n->norm_add) continue; /* the sum of the add fused in: the step writes it (checked too) */
        if (v->role == STATE_TABLE) { /* a derived table: the interpreter's, in the model's derived block */
            if (!put_derived(c, v)) {
                snprintf(why, len, "writing derived input %s failed (no plan entry of that name, or no interpreter table)",
                         v->name);
                return false;
            }
            continue;
        }
        if (v->role != STATE_NONE) {
            int idx = state_of(c, v);
            if (idx < 0 || !put_state(c, v, idx)) {
                snprintf(why, len, "writing state input %s failed (no plan state of that name, or no interpreter state)",
                         v->name);
                return false;
            }
            continue;
        }
        if (!ir_value_in_arena(c->g, v)) {
            snprintf(why, len, "input %s is neither in the activation arena nor a state", v->name);
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

/* Reads value v as fp32 (malloc'd), or NULL: from the arena, or a state value's window (rows P..P+T-1). */
static float *fetch(Check *c, const Value *v) {
    bool state = v->role != STATE_NONE;
    int idx = state ? state_of(c, v) : -1;
    if (state && idx < 0) return NULL;
    size_t cnt = ir_numel(v, c->T), all = state ? ir_state_numel(v) : cnt, bytes = all * (size_t)dtype_size(v->dtype);
    void *raw = malloc(bytes ? bytes : 1);
    float *full = malloc(sizeof *full * (all ? all : 1)), *out = malloc(sizeof *out * (cnt ? cnt : 1));
    CUdeviceptr src = state ? c->s->state[idx] : c->s->arena + v->offset;
    if (!raw || !full || !out || c->m->drv.memcpyDtoH(raw, src, bytes) != CUDA_SUCCESS) {
        free(raw);
        free(full);
        free(out);
        return NULL;
    }
    decode(v->dtype, raw, all, full);
    for (size_t i = 0; i < cnt; i++) out[i] = full[state ? state_elem(c, v, i) : i];
    free(raw);
    free(full);
    return out;
}

/* The negative test: moves one element of v on the device 8 tolerances away from the interpreter's value. */
static bool perturb_output(Check *c, const Value *v) {
    size_t cnt = ir_numel(v, c->T), i = cnt / 2, sz = (size_t)dtype_size(v->dtype);
    float want = c->vals[v->id][i];
    float x = want + 8.0f * (float)(tol_abs(v->dtype) * (1.0 + fabs(want)));
    unsigned char enc[4];
    rt_encode(v->dtype, &x, 1, enc);
    if (v->role == STATE_NONE) return put(c, v->offset + i * sz, enc, sz) == CUDA_SUCCESS;
    int idx = state_of(c, v);
    return idx >= 0 && c->m->drv.memcpyHtoD(c->s->state[idx] + state_elem(c, v, i) * sz, enc, sz) == CUDA_SUCCESS;
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
    if (!ir_value_in_arena(c->g, o) && o->role == STATE_NONE) {
        ok = false;
        snprintf(why, sizeof why, "output %s is neither in the activation arena nor a state", o->name);
    } else if (!c->vals[o->id]) {
        ok = false;
        snprintf(why, sizeof why, "the interpreter did not compute %s", o->name);
    } else {
        ok = stage_inputs(c, n, why, sizeof why);
    }
    for (int i = first; ok && i <= last; i++) {
        if (i == c->skip) continue;
        if (rt_exec_step(c->s, i, c->T, c->P) != SRT_OK) {
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
    fprintf(stderr, "usage: step_check MODEL.arch NTOKENS [--position P] [--seed S] [--perturb STEP] [--skip STEP]\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 3) return usage();
    const char *path = argv[1];
    int T = atoi(argv[2]), P = 0, perturb = -1, skip = -1;
    uint64_t seed = 7;
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) return usage();
        if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--perturb") == 0) perturb = atoi(argv[++i]);
        else if (strcmp(argv[i], "--skip") == 0) skip = atoi(argv[++i]);
        else if (strcmp(argv[i], "--position") == 0) P = atoi(argv[++i]);
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
    float **vals = NULL, **pvals = NULL, **derived = NULL, **rec_before = NULL, *logits = NULL;
    int32_t *tokens = NULL, *prefix = NULL;
    InterpSession *is = NULL;
    int status = 1, passed = 0, failed = 0;
    const Graph *g = shortc_compile(&arena, &diag, &co, &cr) ? cr.graph : NULL;
    const EmitResult er = cr.emit;
    if (!g) goto done;
    /* a recurrent model's call is a window of its own (P: the window before it) */
    if (T < 1 || T > g->spec->segment || P < 0 || P > g->spec->segment ||
        (!ir_recurrent(g) && P + T > ir_position_limit(g->spec))) {
        fprintf(stderr, "step_check: %d tokens at position %d: 1 to %d (the segment) tokens, P + T at most %d\n", T, P,
                g->spec->segment, ir_position_limit(g->spec));
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
    prefix = malloc(sizeof *prefix * (size_t)(P ? P : 1));
    logits = malloc(sizeof *logits * (size_t)(T > P ? T : P) * (size_t)g->spec->vocab);
    is = interp_session_new(g);
    if (!pvals || !vals || !tokens || !prefix || !logits || !is || rt_weights_random(ctx, p, seed, pvals) != SRT_OK) {
        fprintf(stderr, "step_check: preparing the weights failed: %s\n", srt_last_error(ctx));
        goto done;
    }
    const float **wts = calloc((size_t)g->nvalues, sizeof *wts);
    if (!wts) goto done;
    weights_by_value(g, p, pvals, wts);
    /* the derived tables, computed once as the load program does, handed to the interpreter's forwards */
    derived = p->nderived ? calloc((size_t)g->nvalues, sizeof *derived) : NULL;
    if (p->nderived && (!derived || !interp_derive(g, &diag, wts, derived))) {
        fprintf(stderr, "step_check: the interpreter's derived tables failed\n");
        free(wts);
        goto done;
    }
    for (int v = 0; derived && v < g->nvalues; v++)
        if (derived[v]) wts[v] = derived[v];
    RtRng rng = {seed ^ 0x5eedull};
    for (int t = 0; t < P; t++) prefix[t] = (int32_t)(rt_splitmix64(&rng) % (uint64_t)g->spec->vocab);
    for (int t = 0; t < T; t++) tokens[t] = (int32_t)(rt_splitmix64(&rng) % (uint64_t)g->spec->vocab);
    bool ran = P == 0 || interp_forward(is, &diag, wts, prefix, P, logits, NULL);
    /* the recurrence's state before the call (h_prev of the prefix's window): what its readers get */
    rec_before = ran ? calloc((size_t)g->nvalues, sizeof *rec_before) : NULL;
    for (int v = 0; rec_before && v < g->nvalues; v++) {
        int cap = 0;
        const float *st = g->values[v]->role == STATE_RECURRENT ? interp_session_state(is, v, &cap) : NULL;
        size_t cnt = ir_state_numel(g->values[v]);
        if (g->values[v]->role != STATE_RECURRENT) continue;
        if (!(rec_before[v] = calloc(cnt, sizeof **rec_before))) ran = false; /* a fresh session's: zeros (absent) */
        else if (st) memcpy(rec_before[v], st, sizeof **rec_before * cnt);
    }
    ran = ran && rec_before && interp_forward(is, &diag, wts, tokens, T, logits, vals);
    free(wts);
    if (!ran) goto done;

    const int cP = ir_recurrent(g) ? 0 : P; /* the checked call's position: a recurrent model's window starts at 0 */
    printf("%s: %d steps (%d launches, %d GEMMs) of %s at T=%d P=%d%s, seed %llu\n", path, p->nsteps, p->nlaunches,
           p->ngemms, p->model, T, cP, ir_recurrent(g) && P ? " (after a window of P tokens)" : "", (unsigned long long)seed);
    Check c = {.g = g, .m = m, .s = s, .cu = er.cu, .vals = vals, .is = is, .tokens = tokens, .T = T, .P = cP,
               .derived = derived, .rec_before = rec_before, .perturb = perturb, .skip = skip};
    bool *seen = calloc((size_t)g->nnodes + 1, sizeof *seen);
    if (!seen) goto done;
    for (int i = 0; i < g->nnodes; i++) { /* the load program's nodes: their tables, as the weights load made them */
        const Node *n = g->nodes[i];
        if (n->dead || g->values[n->out]->role != STATE_TABLE) continue;
        seen[i] = true;
        if (check_derived(&c, n, g->values[n->out])) passed++;
        else failed++;
    }
    const RtProgram *pg = rt_plan_program(p, T); /* the program a call of T tokens runs (T = 1: "decode") */
    printf("program '%s': steps %d to %d\n", pg->name, pg->first, pg->first + pg->nsteps - 1);
    int end = pg->first + pg->nsteps;
    for (int i = pg->first; i < end;) {
        int node = p->steps[i].node, j = i;
        while (j + 1 < end && p->steps[j + 1].node == node) j++;
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
    if (derived)
        for (int v = 0; v < g->nvalues; v++) free(derived[v]);
    free(derived);
    if (rec_before)
        for (int v = 0; v < g->nvalues; v++) free(rec_before[v]);
    free(rec_before);
    if (pvals && m)
        for (int i = 0; i < m->plan.nweights; i++) rt_free(ctx, pvals[i]);
    free(pvals);
    free(tokens);
    free(prefix);
    free(logits);
    interp_session_free(is);
    srt_model_close(m);
    srt_context_destroy(ctx);
    compile_result_free(&cr);
    arena_free(&arena);
    return status;
}
