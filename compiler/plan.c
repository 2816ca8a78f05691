/*
 * plan.c — the JSON plan embedded at the top of every emitted .cu
 * (docs/plan.md): model configuration, arena size, where the tokens and
 * logits live, the buffers, the weights the loader must provide, the run-time
 * scalars, compile-time constants, per-session state (role, shape, capacity),
 * the derived tensors the "load" program computes from the weights,
 * the kernels and the named programs (steps of one forward for a range of T). Built as a cJSON tree and
 * written compactly by json_write (no indentation; a line per top-level field, per element of a top-level
 * array and per step); key order is fixed, so output is deterministic.
 */
#include "emit.h"
#include "plan_schema.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DIM: a plain integer, or {"t": a, "p": b, "fill": f, "b": k, "c": c, "div": d} with zero terms and
 * defaults left out. */
static cJSON *dim_json(SymDim d) {
    if (symdim_is_const(d)) return cJSON_CreateNumber((double)symdim_eval(d, NULL));
    cJSON *o = cJSON_CreateObject();
    const long coef[4] = {d.t, d.p, d.fill, d.b};
    static const char *const keys[4] = {"t", "p", "fill", "b"}; /* plan_scalar_names, as DIM keys */
    for (int i = 0; i < 4; i++)
        if (coef[i] != 0) cJSON_AddNumberToObject(o, keys[i], (double)coef[i]);
    if (d.c != 0) cJSON_AddNumberToObject(o, "c", (double)d.c);
    if (d.div != 1) cJSON_AddNumberToObject(o, "div", (double)d.div);
    return o;
}

/* A shape: each dimension a DIM; a symbolic one is written as segment_for_t instead when that is > 0. */
static cJSON *shape_json(const SymDim *dims, int rank, int segment_for_t) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < rank; i++) {
        if (!symdim_is_const(dims[i]) && segment_for_t > 0) cJSON_AddItemToArray(a, cJSON_CreateNumber(segment_for_t));
        else cJSON_AddItemToArray(a, dim_json(dims[i]));
    }
    return a;
}

/* REF for a value: arena offset, weight index or state index. */
static cJSON *ref_json(const EmitState *st, int id) {
    const Value *v = st->g->values[id];
    cJSON *o = cJSON_CreateObject();
    if (st->weight_index[id] >= 0) {
        cJSON_AddNumberToObject(o, "weight", st->weight_index[id]);
    } else if (st->derived_index[id] >= 0) {
        cJSON_AddNumberToObject(o, "derived", st->derived_index[id]);
        cJSON_AddNumberToObject(o, "offset", 0);
    } else if (st->state_index[id] >= 0) {
        cJSON_AddNumberToObject(o, "state", st->state_index[id]);
        cJSON_AddNumberToObject(o, "offset", 0);
    } else {
        cJSON_AddNumberToObject(o, "arena", (double)v->offset);
    }
    return o;
}

/* REF for a kernel argument or GEMM operand (ARG_VALUE, ARG_ARENA or ARG_CONST); an ARG_VALUE's offset
 * moves it into its value (a weight's "offset" is written only then). */
static cJSON *arg_ref_json(const EmitState *st, const StepArg *a) {
    if (a->kind == ARG_VALUE) {
        cJSON *o = ref_json(st, a->value);
        const char *key = cJSON_GetObjectItemCaseSensitive(o, "arena") ? "arena" : "offset";
        cJSON *at = cJSON_GetObjectItemCaseSensitive(o, key);
        if (a->offset && at) cJSON_SetNumberValue(at, at->valuedouble + (double)a->offset);
        else if (a->offset) cJSON_AddNumberToObject(o, "offset", (double)a->offset);
        return o;
    }
    cJSON *o = cJSON_CreateObject();
    if (a->kind == ARG_CONST) {
        cJSON_AddNumberToObject(o, "const", a->value);
        cJSON_AddNumberToObject(o, "offset", (double)a->offset);
        return o;
    }
    cJSON_AddNumberToObject(o, "arena", (double)a->offset);
    return o;
}

static int node_line(const EmitState *st, const Node *n) {
    int line = 0, col = 0;
    if (n->src.file >= 0) diag_linecol(st->d, n->src, &line, &col);
    return line;
}

static cJSON *config_json(const ModelSpec *s) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "vocab", s->vocab);
    cJSON_AddNumberToObject(c, "d_model", s->d_model);
    cJSON_AddNumberToObject(c, "n_heads", s->n_heads);
    cJSON_AddNumberToObject(c, "head_dim", s->head_dim > 0 ? s->head_dim : s->d_model / (s->n_heads > 0 ? s->n_heads : 1));
    cJSON_AddNumberToObject(c, "d_ff", s->d_ff);
    cJSON_AddNumberToObject(c, "n_layers", s->n_layers);
    cJSON_AddNumberToObject(c, "segment", s->segment);
    cJSON_AddStringToObject(c, "norm", norm_kind_name(s->norm));
    cJSON_AddStringToObject(c, "norm_place", norm_place_name(s->norm_place));
    cJSON_AddStringToObject(c, "positions", pos_kind_name(s->pos));
    cJSON_AddStringToObject(c, "activation", activation_name(s->act));
    cJSON_AddBoolToObject(c, "tied", s->tied);
    if (s->rec.on) cJSON_AddNumberToObject(c, "overlap", s->rec.overlap); /* a recurrent model's windows overlap */
    if (s->kv_heads != s->n_heads) cJSON_AddNumberToObject(c, "kv_heads", s->kv_heads);
    return c;
}

static cJSON *weights_json(const EmitState *st) {
    const Graph *g = st->g;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (st->weight_index[i] < 0) continue;
        const SymDim *dims = v->dims; /* values' dims are their stored shape (docs/ir.md) */
        int rank = v->rank;
        SymDim file[MAX_RANK];
        for (int k = 0; k < rank; k++) file[k] = v->transposed_src && rank == 2 ? dims[rank - 1 - k] : dims[k];
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "name", v->weight_name ? v->weight_name : v->name);
        cJSON_AddItemToObject(w, "shape", shape_json(dims, rank, 0));
        cJSON_AddStringToObject(w, "dtype", dtype_plan_name(v->dtype));
        if (v->dtype != ir_weight_layout_dtype(g)) /* held wider: values rounded to the layout's dtype */
            cJSON_AddStringToObject(w, "round", dtype_plan_name(ir_weight_layout_dtype(g)));
        cJSON_AddItemToObject(w, "file_shape", shape_json(file, rank, 0));
        cJSON_AddBoolToObject(w, "transpose", v->transposed_src && rank == 2);
        cJSON_AddBoolToObject(w, "optional", false);
        cJSON_AddItemToArray(a, w);
    }
    return a;
}

static cJSON *buffers_json(const EmitState *st) {
    const Graph *g = st->g;
    int seg = g->spec ? g->spec->segment : 0;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (!ir_value_placed(v)) continue;
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "value", v->name);
        cJSON_AddNumberToObject(b, "offset", (double)v->offset);
        cJSON_AddNumberToObject(b, "bytes", (double)v->bytes);
        cJSON_AddStringToObject(b, "dtype", dtype_plan_name(v->dtype));
        /* key/value state is laid out for the whole segment, whatever T is */
        cJSON_AddItemToObject(b, "shape", shape_json(v->dims, v->rank, v->cls == VC_KV ? seg : 0));
        cJSON_AddItemToArray(a, b);
    }
    /* the GEMM staging area (emit.c, size_staging): fp32 copies, A, B and C parts */
    static const char *const parts[3] = {"%gemm_staging.a", "%gemm_staging.b", "%gemm_staging.c"};
    size_t off = st->staging_offset;
    for (int p = 0; p < 3; p++) {
        if (!st->staging_bytes[p]) continue;
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "value", parts[p]);
        cJSON_AddNumberToObject(b, "offset", (double)off);
        cJSON_AddNumberToObject(b, "bytes", (double)st->staging_bytes[p]);
        cJSON_AddStringToObject(b, "dtype", "f32");
        SymDim n = SYMDIM_CONST((int)(st->staging_bytes[p] / 4));
        cJSON_AddItemToObject(b, "shape", shape_json(&n, 1, 0));
        cJSON_AddItemToArray(a, b);
        off += st->staging_bytes[p];
    }
    if (st->decode_bytes) { /* decode attention's partial softmaxes (emit.c, spec_attention_decode) */
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "value", "%attn_decode.partials");
        cJSON_AddNumberToObject(b, "offset", (double)st->decode_offset);
        cJSON_AddNumberToObject(b, "bytes", (double)st->decode_bytes);
        cJSON_AddStringToObject(b, "dtype", "f32");
        SymDim n = SYMDIM_CONST((int)(st->decode_bytes / 4));
        cJSON_AddItemToObject(b, "shape", shape_json(&n, 1, 0));
        cJSON_AddItemToArray(a, b);
    }
    return a;
}

/* The values index marks, each at its capacity: the state entries (docs/plan.md, "State"), or (state false) the
 * derived tensors the load program computes from the weights (docs/plan.md, "derived"). */
static cJSON *capacity_json(const EmitState *st, const int *index, bool state) {
    const Graph *g = st->g;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < g->nvalues; i++) {
        if (index[i] < 0) continue;
        const Value *v = g->values[i];
        SymDim shape[MAX_RANK]; /* the rows at the capacity */
        for (int k = 0; k < v->rank; k++) shape[k] = k == ir_token_axis(v) ? SYMDIM_CONST(v->capacity) : v->dims[k];
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "name", v->name[0] == '%' ? v->name + 1 : v->name);
        if (state) cJSON_AddStringToObject(s, "role", state_role_name(v->role));
        cJSON_AddItemToObject(s, "shape", shape_json(shape, v->rank, 0));
        if (state) cJSON_AddNumberToObject(s, "capacity", v->capacity);
        cJSON_AddNumberToObject(s, "bytes", (double)(ir_state_numel(v) * (size_t)dtype_size(v->dtype)));
        cJSON_AddStringToObject(s, "dtype", dtype_plan_name(v->dtype));
        if (state) cJSON_AddBoolToObject(s, "persistent", v->role != STATE_NONE);
        if (state && v->slides) cJSON_AddNumberToObject(s, "keep", v->keep); /* a PIA cache: its last rows stay */
        cJSON_AddItemToArray(a, s);
    }
    return a;
}

/* The run-time scalars and their ranges: T new tokens, P the first one's position, fill the state's rows
 * before the call (= P for a KV cache), B sequences of a batched decode step (0 in any other call). */
static cJSON *scalars_json(const ModelSpec *s, int batch) {
    int limit = ir_position_limit(s);
    const long lo[4] = {1, 0, 0, 0}, hi[4] = {s->segment, limit - 1, limit - 1, batch};
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < 4; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", plan_scalar_names[i]);
        cJSON_AddNumberToObject(o, "min", (double)lo[i]);
        cJSON_AddNumberToObject(o, "max", (double)hi[i]);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *constants_json(const EmitState *st) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < st->nconsts; i++) {
        const EmitConstant *k = &st->consts[i];
        cJSON *o = cJSON_CreateObject(), *vals = cJSON_CreateArray();
        cJSON_AddStringToObject(o, "name", k->name);
        cJSON_AddStringToObject(o, "dtype", dtype_plan_name(k->dtype));
        for (int j = 0; j < k->count; j++) cJSON_AddItemToArray(vals, cJSON_CreateNumber(k->values[j]));
        cJSON_AddItemToObject(o, "values", vals);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* The kind of a kernel parameter as the plan names it: "ptr", "int" or "float". */
static const char *param_kind(ArgKind k) {
    return k == ARG_INT ? "int" : k == ARG_FLOAT ? "float" : "ptr";
}

/*
 * The kernel's parameter kinds in order. Every launch of a kernel passes the
 * same kinds (emit.c's intern_kernel checks), so its first launch tells them.
 */
static cJSON *params_json(const EmitState *st, int k) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < st->nsteps; i++) {
        const Step *s = &st->steps[i];
        if (s->kind != STEP_LAUNCH || s->kernel != k) continue;
        for (int j = 0; j < s->nargs; j++) cJSON_AddItemToArray(a, cJSON_CreateString(param_kind(s->args[j].kind)));
        break;
    }
    return a;
}

/* A residue kind's tensor-core kernel: the cost model's choice, {"scan": T scanned, "lo": [...], "hi": [...]}
 * the runs [lo[i], hi[i]] of T whose calls take the plain tile loop (every other call groups queries by residue). */
static cJSON *residue_plain_json(const AttnResidueChoice *c) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "scan", c->scan);
    cJSON_AddItemToObject(o, "lo", cJSON_CreateIntArray(c->lo, c->n));
    cJSON_AddItemToObject(o, "hi", cJSON_CreateIntArray(c->hi, c->n));
    return o;
}

static cJSON *kernels_json(const EmitState *st) {
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; k < st->nkernels; k++) {
        const Kernel *kn = &st->kernels[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", kn->name);
        cJSON_AddBoolToObject(o, "barriers", kn->barriers);
        cJSON_AddNumberToObject(o, "line", node_line(st, st->g->nodes[kn->first_node]));
        cJSON_AddNumberToObject(o, "uses", kn->uses);
        cJSON_AddItemToObject(o, "params", params_json(st, k));
        if (kn->residue_choice) cJSON_AddItemToObject(o, "residue_plain", residue_plain_json(&kn->choice));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *launch_json(const EmitState *st, const Step *s) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", "launch");
    cJSON_AddStringToObject(o, "kernel", st->kernels[s->kernel].name);
    cJSON *grid = cJSON_CreateArray(), *block = cJSON_CreateArray();
    for (int i = 0; i < 3; i++) {
        cJSON_AddItemToArray(grid, dim_json(s->grid[i]));
        cJSON_AddItemToArray(block, cJSON_CreateNumber(s->block[i]));
    }
    cJSON_AddItemToObject(o, "grid", grid);
    cJSON_AddItemToObject(o, "block", block);
    cJSON_AddNumberToObject(o, "smem", s->smem);
    cJSON *args = cJSON_CreateArray();
    for (int i = 0; i < s->nargs; i++) {
        const StepArg *a = &s->args[i];
        cJSON *x;
        if (a->kind == ARG_VALUE || a->kind == ARG_ARENA || a->kind == ARG_CONST) {
            x = arg_ref_json(st, a);
        } else if (a->kind == ARG_INT) {
            x = cJSON_CreateObject();
            cJSON_AddItemToObject(x, "int", dim_json(a->dim));
        } else {
            x = cJSON_CreateObject();
            cJSON_AddNumberToObject(x, "float", a->f);
        }
        cJSON_AddItemToArray(args, x);
    }
    cJSON_AddItemToObject(o, "args", args);
    cJSON_AddNumberToObject(o, "line", s->line);
    cJSON_AddNumberToObject(o, "layer", s->layer);
    cJSON_AddNumberToObject(o, "node", s->node);
    return o;
}

static cJSON *gemm_json(const EmitState *st, const Step *s) {
    char t[2] = {0, 0};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", "gemm");
    t[0] = s->transa;
    cJSON_AddStringToObject(o, "transa", t);
    t[0] = s->transb;
    cJSON_AddStringToObject(o, "transb", t);
    cJSON_AddItemToObject(o, "m", dim_json(s->m));
    cJSON_AddItemToObject(o, "n", dim_json(s->n));
    cJSON_AddItemToObject(o, "k", dim_json(s->k));
    cJSON_AddNumberToObject(o, "alpha", 1.0);
    cJSON_AddNumberToObject(o, "beta", 0.0);
    cJSON_AddItemToObject(o, "A", arg_ref_json(st, &s->a));
    cJSON_AddItemToObject(o, "lda", dim_json(s->lda));
    cJSON_AddStringToObject(o, "atype", dtype_plan_name(s->atype));
    cJSON_AddItemToObject(o, "B", arg_ref_json(st, &s->b));
    cJSON_AddItemToObject(o, "ldb", dim_json(s->ldb));
    cJSON_AddStringToObject(o, "btype", dtype_plan_name(s->btype));
    cJSON_AddItemToObject(o, "C", arg_ref_json(st, &s->c));
    cJSON_AddItemToObject(o, "ldc", dim_json(s->ldc));
    cJSON_AddStringToObject(o, "ctype", dtype_plan_name(s->ctype));
    cJSON_AddStringToObject(o, "compute", s->tf32 ? "f32_fast_tf32" : "f32");
    if (s->epi != PLAN_EPI_NONE) {
        cJSON_AddStringToObject(o, "epilogue", plan_epilogue_name(s->epi));
        if (plan_epilogue_has_bias(s->epi)) cJSON_AddItemToObject(o, "bias", arg_ref_json(st, &s->bias));
    }
    cJSON_AddItemToObject(o, "batch", dim_json(s->batch));
    cJSON_AddItemToObject(o, "strideA", dim_json(s->stride_a));
    cJSON_AddItemToObject(o, "strideB", dim_json(s->stride_b));
    cJSON_AddItemToObject(o, "strideC", dim_json(s->stride_c));
    cJSON_AddNumberToObject(o, "line", s->line);
    cJSON_AddNumberToObject(o, "layer", s->layer);
    cJSON_AddNumberToObject(o, "node", s->node);
    return o;
}


/* One program: its name, the T it runs, and the steps [first, last). */
static cJSON *program_json(const EmitState *st, const char *name, int tmin, int tmax, int first, int last) {
    cJSON *o = cJSON_CreateObject(), *t = cJSON_CreateArray(), *steps = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddItemToArray(t, cJSON_CreateNumber(tmin));
    cJSON_AddItemToArray(t, cJSON_CreateNumber(tmax));
    cJSON_AddItemToObject(o, "t", t);
    for (int i = first; i < last; i++) {
        const Step *sp = &st->steps[i];
        cJSON_AddItemToArray(steps, sp->kind == STEP_GEMM ? gemm_json(st, sp) : launch_json(st, sp));
    }
    cJSON_AddItemToObject(o, "steps", steps);
    return o;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

/* A JSON string: quotes, backslashes and control characters escaped, and a '/' after '*' written as
 * the JSON escape \/ (the plan sits in a C comment: nothing in it may close the comment); other bytes
 * (UTF-8) as they are. */
static void json_string(StrBuf *b, const char *s) {
    sb_put(b, "\"", 1);
    const char *run = s, *start = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool closes_comment = c == '/' && s > start && s[-1] == '*';
        if (c >= 0x20 && c != '"' && c != '\\' && !closes_comment) continue;
        sb_put(b, run, (size_t)(s - run));
        char esc[8];
        if (c == '"' || c == '\\' || closes_comment) snprintf(esc, sizeof esc, "\\%c", c);
        else snprintf(esc, sizeof esc, "\\u%04x", c);
        sb_puts(b, esc);
        run = s + 1;
    }
    sb_put(b, run, (size_t)(s - run));
    sb_put(b, "\"", 1);
}

/* A number: an integer in decimal digits (the common case, no printf), else the shortest of %.15g and %.17g
 * that reads back exactly; null when not finite (as cJSON writes it; the reader refuses it). */
static void json_number(StrBuf *b, double d) {
    char t[40];
    if (!isfinite(d)) {
        sb_puts(b, "null");
        return;
    }
    if (d == floor(d) && fabs(d) < 9e15) {
        long long v = (long long)d;
        unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
        char *p = t + sizeof t;
        do *--p = (char)('0' + u % 10); while (u /= 10);
        if (v < 0) *--p = '-';
        sb_put(b, p, (size_t)(t + sizeof t - p));
        return;
    }
    snprintf(t, sizeof t, "%.15g", d);
    if (strtod(t, NULL) != d) snprintf(t, sizeof t, "%.17g", d);
    sb_puts(b, t);
}

/* Whether the members or elements of j each start a line: the root's fields, the elements of its arrays, the
 * steps of a program. */
static bool json_breaks(const cJSON *j, int depth) {
    return depth == 0 || (cJSON_IsArray(j) && (depth == 1 || (j->string && strcmp(j->string, "steps") == 0)));
}

/* j as compact JSON (depth: 0 for the root). */
static void json_write(StrBuf *b, const cJSON *j, int depth) {
    if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
        bool obj = cJSON_IsObject(j), lines = json_breaks(j, depth);
        sb_put(b, obj ? "{" : "[", 1);
        for (const cJSON *e = j->child; e; e = e->next) {
            if (lines) sb_put(b, "\n", 1);
            if (obj) {
                json_string(b, e->string ? e->string : "");
                sb_put(b, ":", 1);
            }
            json_write(b, e, depth + 1);
            if (e->next) sb_put(b, ",", 1);
        }
        sb_put(b, obj ? "}" : "]", 1);
    } else if (cJSON_IsString(j)) json_string(b, j->valuestring ? j->valuestring : "");
    else if (cJSON_IsNumber(j)) json_number(b, j->valuedouble);
    else if (cJSON_IsBool(j)) sb_puts(b, cJSON_IsTrue(j) ? "true" : "false");
    else sb_puts(b, "null");
}

char *plan_build(const EmitState *st) {
    const Graph *g = st->g;
    const ModelSpec *s = g->spec;
    const Value *tok = g->values[g->tokens], *lg = g->values[g->logits];
    if (!s) {
        diag_plain_error(st->d, "internal error: plan: graph without a model specification");
        return NULL;
    }
    if (!ir_value_placed(tok) || !ir_value_placed(lg) || lg->dtype != DT_F32) {
        diag_plain_error(st->d, "internal error: plan: tokens and fp32 logits must live in the activation arena");
        return NULL;
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", SHORTC_PLAN_FORMAT);
    cJSON_AddNumberToObject(root, "version", SHORTC_PLAN_VERSION);
    cJSON_AddStringToObject(root, "model", s->name ? s->name : "");
    const char *src = s->path ? s->path : st->d->nsources ? st->d->sources[0]->path : "";
    cJSON_AddStringToObject(root, "source", src);
    cJSON_AddItemToObject(root, "config", config_json(s));
    cJSON_AddNumberToObject(root, "arena_bytes", (double)st->arena_bytes);
    cJSON *tokens = cJSON_CreateObject();
    cJSON_AddNumberToObject(tokens, "arena", (double)tok->offset);
    cJSON_AddItemToObject(root, "tokens", tokens);
    cJSON *logits = cJSON_CreateObject();
    cJSON_AddNumberToObject(logits, "arena", (double)lg->offset);
    cJSON_AddStringToObject(logits, "dtype", "f32");
    SymDim ldims[2] = {SYMDIM_T, SYMDIM_CONST(s->vocab)};
    cJSON_AddItemToObject(logits, "shape", shape_json(ldims, 2, 0));
    cJSON_AddItemToObject(root, "logits", logits);
    cJSON *loss = cJSON_CreateObject(), *targets = cJSON_CreateObject(), *nll = cJSON_CreateObject();
    cJSON_AddNumberToObject(targets, "arena", (double)st->loss_targets);
    cJSON_AddNumberToObject(nll, "arena", (double)st->loss_nll);
    cJSON_AddItemToObject(loss, "targets", targets);
    cJSON_AddItemToObject(loss, "nll", nll);
    cJSON_AddItemToObject(root, "loss", loss);
    cJSON *sample = cJSON_CreateObject(), *params = cJSON_CreateObject();
    cJSON_AddNumberToObject(params, "arena", (double)st->sample_params);
    cJSON_AddItemToObject(sample, "params", params);
    cJSON_AddItemToObject(root, "sample", sample);
    if (st->decode_batch > 0) { /* batched decode steps: B sequences in one pass of the decode program */
        cJSON *batch = cJSON_CreateObject(), *seqs = cJSON_CreateObject();
        cJSON_AddNumberToObject(batch, "max", st->decode_batch);
        cJSON_AddNumberToObject(seqs, "arena", (double)st->seq_table);
        cJSON_AddItemToObject(batch, "sequences", seqs);
        cJSON_AddItemToObject(root, "batch", batch);
    }
    cJSON_AddItemToObject(root, "buffers", buffers_json(st));
    cJSON_AddItemToObject(root, "weights", weights_json(st));
    cJSON_AddItemToObject(root, "scalars", scalars_json(s, st->decode_batch));
    cJSON_AddItemToObject(root, "constants", constants_json(st));
    cJSON_AddItemToObject(root, "state", capacity_json(st, st->state_index, true));
    if (st->nderived > 0) cJSON_AddItemToObject(root, "derived", capacity_json(st, st->derived_index, false));
    cJSON_AddItemToObject(root, "kernels", kernels_json(st));
    cJSON *programs = cJSON_CreateArray();
    cJSON_AddItemToArray(programs, program_json(st, "forward", 1, s->segment, 0, st->nforward));
    if (st->nloss_first > st->nforward)
        cJSON_AddItemToArray(programs, program_json(st, "decode", 1, 1, st->nforward, st->nloss_first));
    cJSON_AddItemToArray(programs, program_json(st, "loss", 1, s->segment, st->nloss_first, st->nsample_first));
    cJSON_AddItemToArray(programs, program_json(st, "sample", 1, s->segment, st->nsample_first, st->nslide_first));
    if (st->nslide_first < st->nload_first) /* at a segment's end: a PIA cache keeps its last rows */
        cJSON_AddItemToArray(programs, program_json(st, PLAN_SLIDE_PROGRAM, 1, s->segment, st->nslide_first, st->nload_first));
    if (st->nload_first < st->nsteps) /* once per weights load: the derived tensors */
        cJSON_AddItemToArray(programs, program_json(st, PLAN_LOAD_PROGRAM, 1, 1, st->nload_first, st->nsteps));
    cJSON_AddItemToObject(root, "programs", programs);
#ifndef NDEBUG /* debug builds check what was written; test emit_plan_schema checks every bundled model's plan */
    char why[320];
    if (!plan_schema_check(root, why, sizeof why)) { /* what was written must be what the reader expects */
        diag_plain_error(st->d, "internal error: plan: does not conform to the plan schema: %s", why);
        cJSON_Delete(root);
        return NULL;
    }
#endif
    StrBuf b = {0};
    json_write(&b, root, 0);
    cJSON_Delete(root);
    char *text = sb_take(&b, NULL);
    if (!text) {
        diag_plain_error(st->d, "plan: out of memory");
        return NULL;
    }
    return text;
}
