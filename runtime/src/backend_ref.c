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
 * and srt_session_reset starts over.
 */
#define _GNU_SOURCE
#include "rt_internal.h"
#include "shortc.h" /* the one runtime file that sees the compiler (docs/architecture.md, "Layering") */

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
    const float **by_value; /* per IR value id: its weight values or NULL */
};

void rt_ref_free(srt_context *ctx, RtRefModel *r) {
    if (!r) return;
    for (int i = 0; i < r->nplan; i++) rt_free(ctx, r->plan_vals[i]);
    rt_free(ctx, r->plan_vals);
    rt_free(ctx, r->by_value);
    arena_free(&r->arena);
    rt_free(ctx, r);
}

srt_status rt_compile_arch(srt_context *ctx, const char *path, const char *model_name, char **cu, size_t *cu_len,
                           char **plan_json, RtRefModel **ref) {
    *cu = NULL;
    *plan_json = NULL;
    if (access(path, R_OK) != 0) return rt_error(ctx, SRT_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
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
    CompileOptions co = {.path = path, .model = model_name};
    CompileResult cr;
    bool ok = shortc_compile(&r->arena, d, &co, &cr);
    const EmitResult er = cr.emit;
    d->out = NULL;
    fclose(mf);
    srt_status st = SRT_OK;
    if (!ok) {
        st = rt_error(ctx, SRT_ERR_FORMAT, "%s", msg && *msg ? msg : "compiling the model failed (no diagnostic)");
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

srt_status rt_ref_bind_weights(srt_model *m, float **vals) {
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
        int w = -1;
        for (int i = 0; i < p->nweights && w < 0; i++) {
            if (name && strcmp(p->weights[i].name, name) == 0) w = i;
        }
        size_t count = 1;
        for (int k = 0; k < val->rank; k++) count *= (size_t)(val->dims[k] > 0 ? val->dims[k] : 0);
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

srt_status rt_ref_forward(srt_session *s, const int32_t *tokens, int ntokens, int first_row, float *logits) {
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
        if (ok) memcpy(logits, all + (size_t)first_row * row, sizeof *all * (size_t)(ntokens - first_row) * row);
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

srt_status rt_ref_session_create(srt_session *s) {
    s->ref_state = interp_session_new(s->m->ref->g);
    return s->ref_state ? SRT_OK : rt_error(s->m->ctx, SRT_ERR_NOMEM, "out of memory");
}

void rt_ref_session_destroy(srt_session *s) {
    interp_session_free(s->ref_state);
    s->ref_state = NULL;
}

void rt_ref_session_reset(srt_session *s) { interp_session_reset(s->ref_state); }

size_t rt_ref_session_state_bytes(const srt_session *s) { return interp_session_state_bytes(s->ref_state); }

int rt_ref_session_position(const srt_session *s) { return interp_session_fill(s->ref_state); }

int rt_ref_max_positions(const srt_model *m) { return ir_position_limit(m->ref->g->spec); }

size_t rt_ref_state_bytes(const srt_model *m) { return ir_state_bytes(m->ref->g); }
