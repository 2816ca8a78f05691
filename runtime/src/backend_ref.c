/*
 * backend_ref.c — compiling an .arch through the compiler library, and the
 * reference backend, which runs the compiler's IR with interp_run.
 *
 * rt_compile_arch runs the compiler's one entry point, shortc_compile (load
 * + sema, lower, passes, emit, as `shortc FILE.arch` does), with a Diag writing into a memory stream, so the
 * compiler's diagnostics (with their carets) become the runtime's error
 * message. The compiler library allocates with malloc in its own Arena; the
 * reference backend keeps that arena (and the Graph in it) open for as long
 * as the model is.
 *
 * Reference weights are the same fp32 values the device backends upload
 * (stored order, rounded to the stored dtype), indexed by IR value id as
 * interp_run expects; a weight value is matched to its plan entry by name.
 *
 * Each session keeps an interpreter session (InterpSession: the KV caches
 * and their fill), so consecutive srt_forward calls continue one sequence
 * and srt_session_reset starts over. rt_backend_ref is the table shortrt.c
 * calls; opened on an emitted .cu, it recompiles the .arch the plan names and
 * checks that it still gives the .cu's plan.
 *
 * Being the runtime's one door to the compiler, it also holds the public calls that only compile:
 * srt_mask (the attention masks of `shortc mask`) and srt_compare_json (the cost JSON of `shortc compare`),
 * and the compiler side of srt_attention (attention.c): a kind typed from name/value pairs and its kernel
 * rendered for a token class (rt_attention_check, rt_attention_render).
 */
#define _GNU_SOURCE
#include "rt_internal.h"
#include "shortc.h" /* the one runtime file that sees the compiler (docs/architecture.md, "Layering") */
#include "emit.h"   /* attn_render: srt_attention's kernels */

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct RtRefModel {
    Arena arena;          /* the compiler's memory: spec, graph */
    Diag diag;            /* sources (for messages), error counter */
    Graph *g;             /* the IR after run_passes */
    float **plan_vals;    /* per plan weight: fp32 values (owned) */
    int nplan;            /* entries in plan_vals */
    const float **by_value; /* per IR value id: its weight values, its derived tensor, or NULL */
    float **derived;      /* per IR value id: the derived tensor interp_derive computed at the last load (owned) */
};

/* Frees the derived tensors of the last weights load. */
static void free_derived(srt_context *ctx, RtRefModel *r) {
    for (int i = 0; r->derived && i < r->g->nvalues; i++) free(r->derived[i]); /* interp_derive's (malloc) */
    rt_free(ctx, r->derived);
    r->derived = NULL;
}

static void rt_ref_free(srt_context *ctx, RtRefModel *r) {
    if (!r) return;
    if (r->g) free_derived(ctx, r);
    for (int i = 0; i < r->nplan; i++) rt_free(ctx, r->plan_vals[i]);
    rt_free(ctx, r->plan_vals);
    rt_free(ctx, r->by_value);
    arena_free(&r->arena);
    rt_free(ctx, r);
}

/* Records the position of d's first located error as the context's error location. */
static void set_error_location(srt_context *ctx, const Diag *d) {
    Loc at = d->first_error;
    if (at.file < 0 || at.file >= d->nsources) return;
    int line, col;
    diag_linecol(d, at, &line, &col);
    snprintf(ctx->err_file, sizeof ctx->err_file, "%s", d->sources[at.file]->path);
    ctx->err_line = line;
    ctx->err_column = col;
}

srt_status rt_compile_arch(srt_context *ctx, const char *path, const char *text, size_t text_len,
                           const char *model_name, char **cu, size_t *cu_len, char **plan_json, RtRefModel **ref) {
    *cu = NULL;
    *plan_json = NULL;
    if (!text && access(path, R_OK) != 0) return rt_error(ctx, SRT_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    RtRefModel *r = rt_alloc(ctx, sizeof *r);
    if (!r) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    char *msg = NULL;
    size_t msglen = 0;
    FILE *mf = open_memstream(&msg, &msglen);
    if (!mf) {
        rt_free(ctx, r);
        return rt_error(ctx, SRT_ERR_NOMEM, "out of memory (open_memstream)");
    }
    arena_init(&r->arena);
    diag_init(&r->diag, &r->arena, mf);
    Diag *d = &r->diag;
    CompileOptions co = {.path = path, .model = model_name, .source = text, .source_len = text_len};
    CompileResult cr;
    bool ok = shortc_compile(&r->arena, d, &co, &cr);
    const EmitResult er = cr.emit;
    d->out = NULL;
    fclose(mf);
    srt_status st = SRT_OK;
    if (!ok) {
        st = rt_error(ctx, SRT_ERR_FORMAT, "%s", msg && *msg ? msg : "compiling the model failed (no diagnostic)");
        set_error_location(ctx, d);
    } else {
        *cu = rt_strndup(ctx, er.cu, er.cu_len);
        *cu_len = er.cu_len;
        *plan_json = rt_strdup(ctx, er.plan_json);
        if (!*cu || !*plan_json) st = rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    }
    free(msg);
    compile_result_free(&cr);
    if (st != SRT_OK) {
        rt_free(ctx, *cu);
        rt_free(ctx, *plan_json);
        *cu = *plan_json = NULL;
    }
    if (st == SRT_OK && ref) {
        r->g = cr.graph;
        *ref = r;
    } else {
        rt_ref_free(ctx, r);
    }
    return st;
}

/* One call into the compiler library: its arena and its diagnostics, written to a memory stream (msg). */
typedef struct CompilerCall {
    char *msg;       /* the diagnostics so far (after fflush(mf) or compiler_call_end) */
    size_t msglen;   /* their length */
    FILE *mf;        /* the stream d writes to */
    Arena arena;     /* what the compiler allocates */
    Diag d;          /* its diagnostics */
} CompilerCall;

/* Opens c; false (the error set in ctx) when the stream cannot be had. */
static bool compiler_call_begin(srt_context *ctx, CompilerCall *c) {
    memset(c, 0, sizeof *c);
    if (!(c->mf = open_memstream(&c->msg, &c->msglen))) {
        rt_error(ctx, SRT_ERR_NOMEM, "out of memory (open_memstream)");
        return false;
    }
    arena_init(&c->arena);
    diag_init(&c->d, &c->arena, c->mf);
    return true;
}

/* Closes c's stream (c->msg stays readable until compiler_call_free). */
static void compiler_call_end(CompilerCall *c) {
    c->d.out = NULL;
    fclose(c->mf);
    c->mf = NULL;
}

/* Frees what compiler_call_begin made (after compiler_call_end). */
static void compiler_call_free(CompilerCall *c) {
    free(c->msg);
    arena_free(&c->arena);
}

srt_status srt_mask(srt_context *ctx, const char *path, const char *text, size_t text_len, const char *model_name,
                    int ntokens, uint8_t **masks, int *layers, int *heads) {
    if (!ctx) return SRT_ERR_INVALID;
    if (masks) *masks = NULL;
    if (!path || !masks || !layers || !heads)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_mask: path, masks, layers and heads must not be NULL");
    if (text && memchr(text, 0, text_len))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: the .arch text contains a NUL byte", path);
    CompilerCall c;
    if (!compiler_call_begin(ctx, &c)) return SRT_ERR_NOMEM;
    CompileOptions co = {.path = path, .model = model_name, .source = text, .source_len = text_len,
                         .stop = COMPILE_STOP_AFTER_SEMA};
    CompileResult cr;
    bool ok = shortc_compile(&c.arena, &c.d, &co, &cr);
    compiler_call_end(&c);
    srt_status st = SRT_OK;
    const ModelSpec *spec = cr.spec;
    if (!ok) {
        st = rt_error(ctx, SRT_ERR_FORMAT, "%s", c.msg && *c.msg ? c.msg : "compiling the model failed (no diagnostic)");
        set_error_location(ctx, &c.d);
    } else if (ntokens < 1 || ntokens > spec->segment) {
        st = rt_error(ctx, SRT_ERR_INVALID, "srt_mask: %d tokens: %s takes 1 to %d (its segment)", ntokens, spec->name,
                      spec->segment);
    } else {
        size_t total = (size_t)spec->n_layers * (size_t)spec->n_heads * (size_t)ntokens * (size_t)ntokens;
        uint8_t *out = rt_alloc(ctx, total ? total : 1); /* zero-filled */
        char err[300];
        if (!out) st = rt_error(ctx, SRT_ERR_NOMEM, "srt_mask: out of memory for %zu bytes", total);
        else if (!attn_masks_fill(spec, ntokens, out, err, sizeof err)) st = rt_error(ctx, SRT_ERR_FORMAT, "%s: %s", path, err);
        if (st == SRT_OK) {
            *masks = out;
            *layers = spec->n_layers;
            *heads = spec->n_heads;
        } else {
            rt_free(ctx, out);
        }
    }
    compile_result_free(&cr);
    compiler_call_free(&c);
    return st;
}

srt_status srt_compare_json(srt_context *ctx, const char *const *paths, const char *const *models, int n,
                            const srt_cost_options *opt, char **json) {
    if (!ctx) return SRT_ERR_INVALID;
    if (json) *json = NULL;
    if (!paths || !json || n < 1) return rt_error(ctx, SRT_ERR_INVALID, "srt_compare_json: no models, or json is NULL");
    srt_cost_options o = {0};
    if (opt) o = *opt;
    const DeviceSpec *dev = device_find(o.device ? o.device : "h100-sxm");
    if (!dev) {
        char known[512];
        int k = 0;
        for (int i = 0; i < ndevices && k < (int)sizeof known - 40; i++)
            k += snprintf(known + k, sizeof known - (size_t)k, " %s", device_table[i].name);
        return rt_error(ctx, SRT_ERR_INVALID, "unknown device '%s'; known:%s", o.device, known);
    }
    if (o.window < 0 || o.stride < 0 || o.overlap < -1)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_compare_json: window %d, stride %d, overlap %d", o.window, o.stride,
                        o.overlap);
    CostOptions copt = {.window = o.window, .stride = o.stride, .overlap = o.overlap < 0 ? 0 : o.overlap,
                        .overlap_given = o.overlap >= 0, .device = dev};
    CompilerCall c;
    if (!compiler_call_begin(ctx, &c)) return SRT_ERR_NOMEM;
    cJSON *root = cost_compare_json(dev), *list = cJSON_GetObjectItemCaseSensitive(root, "models");
    srt_status st = SRT_OK;
    for (int i = 0; i < n && st == SRT_OK; i++) {
        CompileOptions co = {.path = paths[i], .model = models ? models[i] : NULL, .stop = COMPILE_STOP_AFTER_PASSES};
        CompileResult cr;
        char why[256];
        if (!paths[i]) {
            st = rt_error(ctx, SRT_ERR_INVALID, "srt_compare_json: path %d is NULL", i);
        } else if (!shortc_compile(&c.arena, &c.d, &co, &cr) || !cr.graph) {
            fflush(c.mf);
            st = rt_error(ctx, SRT_ERR_FORMAT, "%s", c.msg && *c.msg ? c.msg : "compiling the model failed (no diagnostic)");
            set_error_location(ctx, &c.d);
        } else {
            ModelCost *mc = cost_model(cr.graph, &copt, why, sizeof why);
            if (!mc) st = rt_error(ctx, SRT_ERR_INVALID, "%s (%s): %s", cr.graph->spec->name, paths[i], why);
            else cJSON_AddItemToArray(list, cost_model_json(mc, paths[i], dev));
        }
        if (paths[i]) compile_result_free(&cr);
    }
    compiler_call_end(&c);
    compiler_call_free(&c);
    char *text = st == SRT_OK ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (st == SRT_OK && !text) st = rt_error(ctx, SRT_ERR_NOMEM, "srt_compare_json: out of memory");
    if (st == SRT_OK && !(*json = rt_strdup(ctx, text))) st = rt_error(ctx, SRT_ERR_NOMEM, "srt_compare_json: out of memory");
    free(text);
    return st;
}

/* Takes ownership of vals[i] (freed on failure). */
static srt_status bind_weights(srt_model *m, float **vals) {
    srt_context *ctx = m->ctx;
    RtRefModel *r = m->ref;
    const RtPlan *p = &m->plan;
    const Graph *g = r->g;
    srt_status st = SRT_OK;
    const float **by_value = rt_alloc(ctx, sizeof *by_value * (size_t)(g->nvalues ? g->nvalues : 1));
    if (!by_value) st = rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    for (int v = 0; v < g->nvalues && st == SRT_OK; v++) {
        const Value *val = g->values[v];
        if (!val || val->cls != VC_WEIGHT) continue;
        const char *name = val->weight_name ? val->weight_name : val->name;
        if (name && name[0] == '@') name++;
        int w = rt_plan_weight_index(p, name, val->rank, val->dims);
        size_t count = ir_numel(val, 0); /* a weight's dims are constants */
        if (w < 0)
            st = rt_error(ctx, SRT_ERR_UNSUPPORTED, "ref backend: IR weight '%s' has no entry in the plan", name ? name : "?");
        else if (count != p->weights[w].count)
            st = rt_error(ctx, SRT_ERR_UNSUPPORTED, "ref backend: IR weight '%s' has %zu elements, the plan's %zu", name,
                          count, p->weights[w].count);
        else
            by_value[v] = vals[w];
    }
    if (st != SRT_OK) {
        for (int i = 0; i < p->nweights; i++) rt_free(ctx, vals[i]);
        rt_free(ctx, by_value);
        return st;
    }
    if (!r->plan_vals) {
        r->plan_vals = rt_alloc(ctx, sizeof *r->plan_vals * (size_t)(p->nweights ? p->nweights : 1));
        if (!r->plan_vals) {
            for (int i = 0; i < p->nweights; i++) rt_free(ctx, vals[i]);
            rt_free(ctx, by_value);
            return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
        }
        r->nplan = p->nweights;
    }
    for (int i = 0; i < p->nweights; i++) {
        rt_free(ctx, r->plan_vals[i]);
        r->plan_vals[i] = vals[i];
    }
    rt_free(ctx, r->by_value);
    r->by_value = by_value;
    return SRT_OK;
}

/* What the plan's load program computes, in the interpreter: the derived tensors from the weights just
 * bound, handed to every forward with the weights (by_value). */
static srt_status derive(srt_model *m) {
    RtRefModel *r = m->ref;
    const Graph *g = r->g;
    for (int i = 0; r->derived && i < g->nvalues; i++) /* a re-derive: the old tables are freed below */
        if (r->derived[i] && r->by_value[i] == r->derived[i]) r->by_value[i] = NULL;
    free_derived(m->ctx, r);
    r->derived = rt_alloc(m->ctx, sizeof *r->derived * ((size_t)g->nvalues + 1));
    if (!r->derived) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory");
    char *msg = NULL;
    size_t msglen = 0;
    FILE *mf = open_memstream(&msg, &msglen);
    if (!mf) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory (open_memstream)");
    r->diag.out = mf;
    bool ok = interp_derive(g, &r->diag, (const float *const *)r->by_value, r->derived);
    r->diag.out = NULL;
    fclose(mf);
    srt_status st = ok ? SRT_OK : rt_error(m->ctx, SRT_ERR_UNSUPPORTED, "reference interpreter: %s", msg && *msg ? msg : "failed");
    free(msg);
    for (int i = 0; ok && i < g->nvalues; i++)
        if (r->derived[i]) r->by_value[i] = r->derived[i];
    if (ok && ir_derived_bytes(g) > 0) m->load_runs++;
    return st;
}

/* The plan weight an IR weight value is bound to (bind_weights' matching); -1 when none. */
static int plan_index_of(const RtPlan *p, const Value *v) {
    const char *name = v->weight_name ? v->weight_name : v->name;
    if (name && name[0] == '@') name++;
    return rt_plan_weight_index(p, name, v->rank, v->dims);
}

/* One sequence's gradient: one forward when it fits in a segment, else segment after segment on one session
 * (Transformer-XL's training loop: each segment's memories come from the earlier ones without a gradient); the
 * last position of a segment predicts the next segment's first token. */
static bool grad_by_segments(const Graph *g, Diag *d, const float *const *w, const int32_t *tokens, int n,
                             const int32_t *targets, double scale, double *loss, double **wgrad) {
    int seg = g->spec->segment;
    if (n <= seg) return interp_grad(g, d, w, tokens, n, targets, scale, loss, wgrad);
    InterpSession *s = interp_session_new(g);
    if (!s) return diag_plain_error(d, "interp: out of memory"), false;
    bool ok = true;
    *loss = 0;
    for (int at = 0; ok && at < n; at += seg) {
        int len = n - at < seg ? n - at : seg;
        double seg_loss = 0; /* interp_grad_on sets, not adds */
        ok = interp_grad_on(s, d, w, tokens + at, len, targets + at, scale, &seg_loss, wgrad);
        *loss += seg_loss;
    }
    interp_session_free(s);
    return ok;
}

srt_status rt_ref_grad(srt_model *m, const int32_t *tokens, int n, double scale, double *loss, double **grads) {
    RtRefModel *r = m->ref;
    const Graph *g = r->g;
    double **wgrad = rt_alloc(m->ctx, sizeof *wgrad * ((size_t)g->nvalues + 1));
    int32_t *targets = rt_alloc(m->ctx, sizeof *targets * ((size_t)n + 1));
    if (!wgrad || !targets) {
        rt_free(m->ctx, wgrad);
        rt_free(m->ctx, targets);
        return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < g->nvalues; i++) {
        int w = g->values[i]->cls == VC_WEIGHT ? plan_index_of(&m->plan, g->values[i]) : -1;
        wgrad[i] = w >= 0 ? grads[w] : NULL; /* a tied weight's IR values share their plan entry's array */
    }
    for (int t = 0; t < n; t++) targets[t] = t + 1 < n ? tokens[t + 1] : -1; /* next-token predictions */
    char *msg = NULL;
    size_t msglen = 0;
    FILE *mf = open_memstream(&msg, &msglen);
    srt_status st = SRT_OK;
    if (!mf) st = rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory (open_memstream)");
    else {
        r->diag.out = mf;
        int errors = r->diag.errors;
        double seq_loss = 0;
        bool ok = grad_by_segments(g, &r->diag, (const float *const *)r->by_value, tokens, n, targets, scale, &seq_loss, wgrad);
        if (ok) *loss += seq_loss;
        r->diag.out = NULL;
        r->diag.errors = errors; /* the model stays usable after a refused backward */
        fclose(mf);
        if (!ok) st = rt_error(m->ctx, SRT_ERR_UNSUPPORTED, "reference backward: %s", msg && *msg ? msg : "failed");
    }
    free(msg);
    rt_free(m->ctx, wgrad);
    rt_free(m->ctx, targets);
    return st;
}

bool rt_ref_grad_segments(const srt_model *m) { return m->ref && interp_grad_segments(m->ref->g); }

srt_status rt_ref_grad_check(srt_model *m) {
    RtRefModel *r = m->ref;
    char *msg = NULL;
    size_t msglen = 0;
    FILE *mf = open_memstream(&msg, &msglen);
    if (!mf) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory (open_memstream)");
    r->diag.out = mf;
    int errors = r->diag.errors;
    bool ok = interp_grad_supported(r->g, &r->diag);
    r->diag.out = NULL;
    r->diag.errors = errors;
    fclose(mf);
    srt_status st = ok ? SRT_OK : rt_error(m->ctx, SRT_ERR_UNSUPPORTED, "reference backward: %s", msg && *msg ? msg : "failed");
    free(msg);
    return st;
}

float *rt_ref_weight_values(srt_model *m, int w) {
    return m->ref && m->ref->plan_vals && w >= 0 && w < m->ref->nplan ? m->ref->plan_vals[w] : NULL;
}

srt_status rt_ref_rederive(srt_model *m) {
    if (!m->ref || !m->ref->g || ir_derived_bytes(m->ref->g) == 0) return SRT_OK;
    return derive(m);
}

static srt_status ref_forward_piece(srt_session *s, const int32_t *tokens, int ntokens, int first_row, float *logits);

/* A PIA session's call runs in pieces that stop at segment ends (interp_session_room); rows before first_row
 * are computed but not handed back. */
static srt_status ref_forward(srt_session *s, const int32_t *tokens, int ntokens, int first_row, float *logits) {
    size_t row = (size_t)s->m->ref->g->spec->vocab;
    srt_status st = SRT_OK;
    for (int done = 0; st == SRT_OK && done < ntokens;) {
        RtPiece pc = rt_piece(done, ntokens, interp_session_room(s->ref_state), first_row);
        if (pc.first < pc.n) st = ref_forward_piece(s, tokens + done, pc.n, pc.first, logits + (size_t)pc.skip * row);
        else st = ref_forward_piece(s, tokens + done, pc.n, pc.n, NULL);
        done += pc.n;
    }
    return st;
}

/* One call that stays within a segment; first_row == ntokens: no rows wanted (logits may be NULL). */
static srt_status ref_forward_piece(srt_session *s, const int32_t *tokens, int ntokens, int first_row, float *logits) {
    srt_model *m = s->m;
    RtRefModel *r = m->ref;
    size_t row = (size_t)r->g->spec->vocab;
    float *all = first_row > 0 ? rt_alloc(m->ctx, sizeof *all * (size_t)ntokens * row) : logits;
    if (!all) return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory");
    char *msg = NULL;
    size_t msglen = 0;
    FILE *mf = open_memstream(&msg, &msglen);
    if (!mf) {
        if (all != logits) rt_free(m->ctx, all);
        return rt_error(m->ctx, SRT_ERR_NOMEM, "out of memory (open_memstream)");
    }
    r->diag.out = mf;
    r->diag.errors = 0;
    bool ok = interp_forward(s->ref_state, &r->diag, (const float *const *)r->by_value, tokens, ntokens, all, NULL) &&
              !r->diag.errors;
    if (all != logits) {
        if (ok && first_row < ntokens)
            memcpy(logits, all + (size_t)first_row * row, sizeof *all * (size_t)(ntokens - first_row) * row);
        rt_free(m->ctx, all);
    }
    r->diag.out = NULL;
    fclose(mf);
    srt_status st = ok ? SRT_OK
                       : rt_error(m->ctx, SRT_ERR_UNSUPPORTED, "reference interpreter: %s",
                                  msg && *msg ? msg : "failed without a diagnostic");
    free(msg);
    return st;
}

static srt_status ref_session_create(srt_session *s) {
    s->ref_state = interp_session_new(s->m->ref->g);
    return s->ref_state ? SRT_OK : rt_error(s->m->ctx, SRT_ERR_NOMEM, "out of memory");
}

static void ref_session_destroy(srt_session *s) {
    interp_session_free(s->ref_state);
    s->ref_state = NULL;
}

static srt_status ref_session_reset(srt_session *s) {
    interp_session_reset(s->ref_state);
    if (s->mem_zeros && !interp_session_zero_memories(s->ref_state))
        return rt_error(s->m->ctx, SRT_ERR_NOMEM, "out of memory");
    return SRT_OK;
}

static size_t ref_session_state_bytes(const srt_session *s) { return interp_session_state_bytes(s->ref_state); }

static int ref_session_position(const srt_session *s) { return interp_session_fill(s->ref_state); }

static int ref_max_positions(const srt_model *m) { return ir_position_limit(m->ref->g->spec); }

static size_t ref_state_bytes(const srt_model *m) { return ir_state_bytes(m->ref->g); }

static int ref_state_keep(const srt_model *m) { return ir_state_keep(m->ref->g); }

static bool ref_kv_cache(const srt_model *m) {
    (void)m;
    return true;
}

/* The .arch a .cu's plan names: as written, else relative to the .cu's directory. NULL if neither exists. */
static char *find_source_arch(srt_context *ctx, const char *cu_path, const char *source) {
    if (!source || !*source) return NULL;
    if (access(source, R_OK) == 0) return rt_strdup(ctx, source);
    if (source[0] == '/') return NULL;
    const char *slash = strrchr(cu_path, '/');
    if (!slash) return NULL;
    size_t dn = (size_t)(slash - cu_path) + 1, n = dn + strlen(source) + 1;
    char *p = rt_alloc(ctx, n);
    if (!p) return NULL;
    memcpy(p, cu_path, dn);
    strcpy(p + dn, source);
    if (access(p, R_OK) == 0) return p;
    rt_free(ctx, p);
    return NULL;
}

/* Two plan texts describe the same program ("source" aside: it records how the .arch was named). */
static bool same_plan(const char *a, const char *b) {
    cJSON *ja = cJSON_Parse(a), *jb = cJSON_Parse(b);
    bool same = false;
    if (ja && jb) {
        cJSON_DeleteItemFromObjectCaseSensitive(ja, "source");
        cJSON_DeleteItemFromObjectCaseSensitive(jb, "source");
        same = cJSON_Compare(ja, jb, 1);
    }
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    return same;
}

/*
 * The ref backend on a .cu: the interpreter runs the compiler's IR, so the
 * .arch the plan names is compiled again; it must still give the .cu's plan.
 */
static srt_status ref_from_cu(srt_model *m, const char *model_name) {
    srt_context *ctx = m->ctx;
    const char *source = m->plan.source;
    char *arch = find_source_arch(ctx, m->path, source);
    if (!arch)
        return rt_error(ctx, SRT_ERR_UNSUPPORTED,
                        "the ref backend runs the compiler's IR and needs the model's .arch, but '%s' was compiled from "
                        "'%s', which cannot be found; open the .arch instead",
                        m->path, *source ? source : "(no source recorded)");
    char *cu = NULL, *json = NULL;
    size_t cu_len = 0;
    srt_status st = rt_compile_arch(ctx, arch, NULL, 0, model_name ? model_name : m->plan.model, &cu, &cu_len, &json, &m->ref);
    if (st == SRT_OK && !same_plan(m->plan_json, json))
        st = rt_error(ctx, SRT_ERR_UNSUPPORTED,
                      "the ref backend recompiled '%s' for '%s', but it no longer gives the plan embedded in the .cu "
                      "(the .arch or the compiler changed since); emit the .cu again or open the .arch",
                      arch, m->path);
    rt_free(ctx, cu);
    rt_free(ctx, json);
    rt_free(ctx, arch);
    return st;
}

/* An .arch compile kept the IR already; a .cu is compiled again from the .arch its plan names. */
static srt_status ref_open(srt_model *m, const srt_options *opt, const char *cu, size_t cu_len) {
    (void)cu;
    (void)cu_len;
    m->backend = SRT_BACKEND_REF;
    return m->ref ? SRT_OK : ref_from_cu(m, opt->model_name);
}

static void ref_close(srt_model *m) {
    rt_ref_free(m->ctx, m->ref);
    m->ref = NULL;
}

static srt_status ref_install_weights(srt_model *m, float **vals) {
    srt_status st = bind_weights(m, vals); /* owns vals[i] from here */
    rt_free(m->ctx, vals);
    return st == SRT_OK ? derive(m) : st;
}

const RtBackend rt_backend_ref = {
    .keeps_ir = true,
    .open = ref_open,
    .close = ref_close,
    .install_weights = ref_install_weights,
    .session_create = ref_session_create,
    .session_destroy = ref_session_destroy,
    .session_reset = ref_session_reset,
    .forward = ref_forward,
    .forward_nll = rt_forward_nll_on_host, /* the logits are on the host already */
    .forward_sample = rt_forward_sample_on_host,
    .session_state_bytes = ref_session_state_bytes,
    .session_position = ref_session_position,
    .model_state_bytes = ref_state_bytes,
    .max_positions = ref_max_positions,
    .kv_cache = ref_kv_cache,
    .state_keep = ref_state_keep,
};

/* ------------------------------------------------------------------ */
/* srt_attention's compiler side                                       */
/* ------------------------------------------------------------------ */

enum { ATTN_FN_WARPS = 4 }; /* warps per block of both attention paths (attn_render's WARPS) */

/* d's kind typed into *spec with the front end's checks; stateful kinds refused. */
static srt_status attention_spec(srt_context *ctx, const srt_attention_desc *d, AttnSpec *spec) {
    const char *names[MAX_ATTN_PARAMS];
    double values[MAX_ATTN_PARAMS];
    for (int i = 0; i < d->nparams && i < MAX_ATTN_PARAMS; i++) {
        names[i] = d->params[i].name;
        values[i] = d->params[i].value;
    }
    char err[1024];
    if (d->nparams > MAX_ATTN_PARAMS)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_attention: %d parameters (at most %d)", d->nparams, MAX_ATTN_PARAMS);
    if (!attn_spec_from_pairs(spec, d->kind, names, values, d->nparams, d->heads, err, sizeof err))
        return rt_error(ctx, SRT_ERR_INVALID, "%s", err);
    const AttnKindRow *row = attn_kind_row(spec->kind);
    if (row->score != ATTN_SCORE_NONE || row->state != ATTN_STATE_KV || row->keys == ATTN_KEYS_MEMORY)
        return rt_error(ctx, SRT_ERR_INVALID, "attention '%s' keeps state between calls and adds position terms to "
                        "the scores: it is not a function of q, k and v (use it in an .arch model)",
                        attn_kind_name(spec->kind));
    if (!(row->engines & ATTN_ENGINE_CUDA_CORE))
        return rt_error(ctx, SRT_ERR_INVALID, "attention '%s' has no prefill engine", attn_kind_name(spec->kind));
    return SRT_OK;
}

/* d's element type (fp32 unless "fp16" or "bf16"; attention.c checked the name). */
static DType attention_dtype(const srt_attention_desc *d) {
    return d->dtype && strcmp(d->dtype, "fp16") == 0 ? DT_F16 : d->dtype && strcmp(d->dtype, "bf16") == 0 ? DT_BF16 : DT_F32;
}

/* The tensor-core path: fp16/bf16, rows of whole 16-byte pieces, a kind it knows, tiles within the dynamic shared
 * memory the emitter plans for (as emit.c's attn_mma_tiles); head_dim is at most 128 (attention.c). */
static bool attention_mma(const srt_attention_desc *d, const AttnSpec *spec) {
    bool gather = attn_kind_row(spec->kind)->keys == ATTN_KEYS_GATHERED;
    return attention_dtype(d) != DT_F32 && d->head_dim % 8 == 0 && attn_mma_kind(spec) &&
           attn_mma_smem(d->head_dim, attn_mma_kt(d->head_dim), gather, 2) <= SHORTC_SMEM_OPTIN_LIMIT;
}

srt_status rt_attention_check(srt_context *ctx, const srt_attention_desc *d) {
    AttnSpec spec;
    return attention_spec(ctx, d, &spec);
}

/* The shape d's kernels are rendered with for token class ntok; false when no CUDA-core tiling fits. */
static bool attention_shape(const srt_attention_desc *d, const AttnSpec *spec, int ntok, AttnRenderShape *s) {
    DType t = attention_dtype(d);
    const char *ct = t == DT_F16 ? "__half" : t == DT_BF16 ? "__nv_bfloat16" : "float";
    *s = (AttnRenderShape){.heads = d->heads, .hd = d->head_dim, .ntok = ntok, .mma = attention_mma(d, spec),
                           .t_qkv = ct, .t_kv = ct, .t_out = ct, .scale = d->scale};
    int smem;
    if (s->mma) s->kt = attn_mma_kt(d->head_dim);
    return s->mma || attn_tiles(d->head_dim, ATTN_FN_WARPS, &s->kt, &s->qpw, &smem);
}

/* Appends the layout kernels of templates/attn_fn_pack.cuh (element type t) to b: out->pack and out->unpack. */
static bool attention_pack(Arena *a, Diag *diag, StrBuf *b, const srt_attention_desc *d, const RtAttnKernel *out,
                           const char *t) {
    for (int unpack = 0; unpack < 2; unpack++) {
        TmplArgs args = {0};
        tmpl_set(&args, "COMMENT", "//");
        tmpl_set(&args, "KERNEL_NAME", unpack ? out->unpack : out->pack);
        tmpl_setf(a, &args, "H", "%d", d->heads);
        tmpl_setf(a, &args, "HD", "%d", d->head_dim);
        tmpl_set(&args, "T_E", t);
        tmpl_set(&args, "UNPACK", unpack ? "1" : "0");
        if (!template_render(diag, "attn_fn_pack.cuh", args.kv, args.n, b)) return false;
    }
    return true;
}

srt_status rt_attention_render(srt_context *ctx, const srt_attention_desc *d, int ntok, RtAttnKernel *out) {
    memset(out, 0, sizeof *out);
    AttnSpec spec;
    srt_status st = attention_spec(ctx, d, &spec);
    if (st != SRT_OK) return st;
    AttnRenderShape s;
    if (!attention_shape(d, &spec, ntok, &s))
        return rt_error(ctx, SRT_ERR_INVALID, "srt_attention: no attention tiling fits head_dim=%d", d->head_dim);
    AttnPattern p;
    char err[1024];
    if (!attn_pattern_build(&p, &spec, 0, d->heads, ntok, err, sizeof err)) return rt_error(ctx, SRT_ERR_INVALID, "%s", err);
    snprintf(out->name, sizeof out->name, "shortc_attn_%s_n%d", attn_kind_name(spec.kind), ntok);
    snprintf(out->pack, sizeof out->pack, "%s_pack", out->name);
    snprintf(out->unpack, sizeof out->unpack, "%s_unpack", out->name);
    Arena a;
    arena_init(&a);
    char *msg = NULL;
    size_t msglen = 0;
    FILE *mf = open_memstream(&msg, &msglen);
    if (!mf) {
        arena_free(&a);
        attn_pattern_free(&p);
        return rt_error(ctx, SRT_ERR_NOMEM, "out of memory (open_memstream)");
    }
    Diag diag;
    diag_init(&diag, &a, mf);
    StrBuf b = {0};
    attn_render_source_start(&b, s.mma);
    bool ok = attn_render(&a, &diag, &b, &p, out->name, &s, false) && attention_pack(&a, &diag, &b, d, out, s.t_qkv);
    out->smem = attn_render_smem(&s, &p);
    out->qt = attn_render_qt(&s);
    out->grid_pad = attn_render_grid_pad(&s, &p);
    size_t len = 0;
    char *src = sb_take(&b, &len);
    fclose(mf);
    if (!ok || !src || b.oom) st = rt_error(ctx, SRT_ERR_COMPILE, "rendering the %s kernel failed: %s",
                                            attn_kind_name(spec.kind), msg ? msg : "out of memory");
    else if (!(out->source = rt_strndup(ctx, src, len))) st = rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    free(src);
    free(msg);
    arena_free(&a);
    attn_pattern_free(&p);
    return st;
}
