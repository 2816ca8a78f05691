/*
 * compile.c — the one compile entry point of the compiler library:
 * load + sema -> lower -> passes (each checked by ir_verify) -> emit.
 *
 * Every user of the compiler (the CLI, the runtime's .arch loader and
 * reference backend, tests, benchmarks) calls shortc_compile instead of
 * chaining the stages itself, so the pipeline is written once. The caller
 * owns the Arena and the Diag; the result's graph and spec live in the arena,
 * its emitted text is malloc'd (compile_result_free).
 */
#define _POSIX_C_SOURCE 200809L
#include "shortc.h"

#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The resolved spec: the caller's, or loaded from o->path. NULL on error. */
static const ModelSpec *compile_spec(Arena *a, Diag *d, const CompileOptions *o) {
    if (o->spec) return o->spec;
    if (!o->path) {
        diag_plain_error(d, "nothing to compile (no .arch file and no model spec)");
        return NULL;
    }
    if (o->source) return shortc_load_model_text(a, d, o->path, o->source, o->source_len, o->model);
    return shortc_load_model(a, d, o->path, o->model);
}

bool shortc_compile(Arena *a, Diag *d, const CompileOptions *o, CompileResult *r) {
    memset(r, 0, sizeof *r);
    int errors0 = d->errors;
    double t0 = now_ms();
    r->spec = compile_spec(a, d, o);
    double t1 = now_ms();
    r->ms_load = t1 - t0;
    if (!r->spec || d->errors > errors0) return false;
    if (o->dump_spec_to) spec_print(o->dump_spec_to, r->spec);
    if (o->stop == COMPILE_STOP_AFTER_SEMA) return true;

    r->graph = lower_model(a, d, r->spec);
    double t2 = now_ms();
    r->ms_lower = t2 - t1;
    if (!r->graph || d->errors > errors0) return false;
    PassOptions po = {.no_fuse = o->no_fuse, .dump_after = o->dump_ir, .dump_to = o->dump_to};
    bool ok = run_passes(r->graph, d, &po) && d->errors == errors0;
    double t3 = now_ms();
    r->ms_passes = t3 - t2;
    if (!ok) return false;
    if (o->stop == COMPILE_STOP_AFTER_PASSES) return true;

    ok = emit_cuda(r->graph, d, &r->emit) && d->errors == errors0 && r->emit.cu && r->emit.plan_json;
    r->ms_emit = now_ms() - t3;
    if (!ok) emit_result_free(&r->emit);
    return ok;
}

void compile_result_free(CompileResult *r) {
    emit_result_free(&r->emit);
}
