/*
 * test_emit.c — unit tests of CUDA emission (compiler/emit.c, plan.c,
 * template.c; docs/emission.md):
 *
 *   templates   every embedded template renders with every flag combination
 *               the emitter uses, leaving no placeholder; the substitution
 *               errors (no value, unused value, bad flag, unbalanced or
 *               unknown directive, unknown template) are reported as
 *               internal errors and produce no text;
 *   models      every bundled model (models/NAME.arch), fused and unfused,
 *               emits a .cu whose plan parses and is consistent with the
 *               kernels (each defined once, uses = launches, args =
 *               parameters), whose GEMMs have
 *               types cuBLAS accepts, whose arena references stay inside the
 *               arena, and which is byte-identical when emitted twice;
 *   broken      graphs that violate the emitter's preconditions (stage,
 *               kernel ids, arena placement, aliasing) fail with an
 *               internal error and no output.
 *
 * Usage: test_emit REPO_ROOT
 */
#define _POSIX_C_SOURCE 200809L
#include "emit.h"
#include "plan_schema.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

/* ------------------------------------------------------------------ */
/* Templates                                                           */
/* ------------------------------------------------------------------ */

/* Renders text with values; returns the output (malloc'd) or NULL, the diagnostics in *msgs (malloc'd). */
static char *render(const char *text, const TmplKV *kv, int nkv, char **msgs) {
    char *buf = NULL;
    size_t blen = 0;
    FILE *mf = open_memstream(&buf, &blen);
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, mf);
    StrBuf out = {0};
    bool ok = template_render_text(&d, "test.cuh", text, strlen(text), kv, nkv, &out);
    fclose(mf);
    *msgs = buf;
    arena_free(&a);
    CHECK(ok == (d.errors == 0));
    if (!ok) {
        free(out.p);
        return NULL;
    }
    size_t len;
    char *s = sb_take(&out, &len);
    return s ? s : calloc(1, 1);
}

static void expect_render(const char *text, const TmplKV *kv, int nkv, const char *want) {
    char *msgs;
    char *got = render(text, kv, nkv, &msgs);
    CHECK(got != NULL);
    if (got && strcmp(got, want) != 0) {
        fprintf(stderr, "render mismatch:\n--- want\n%s--- got\n%s---\n", want, got);
        check_failures++;
    }
    free(got);
    free(msgs);
}

static void expect_error(const char *text, const TmplKV *kv, int nkv, const char *msg_part) {
    char *msgs;
    char *got = render(text, kv, nkv, &msgs);
    CHECK(got == NULL);
    if (!strstr(msgs ? msgs : "", msg_part)) {
        fprintf(stderr, "expected an error containing '%s', got: %s\n", msg_part, msgs ? msgs : "(nothing)");
        check_failures++;
    }
    free(got);
    free(msgs);
}

static void test_syntax(void) {
    TmplKV kv[] = {{"A", "alpha"}, {"ON", "1"}, {"OFF", "0"}};
    expect_render("x {{A}} y\n", kv, 1, "x alpha y\n");
    expect_render("//! doc {{NOPE}}\nkeep {{A}}\n", kv, 1, "keep alpha\n");
    expect_render("a\n{{#if ON}}\nb {{A}}\n{{#else}}\nc\n{{#endif}}\nd\n", kv, 2, "a\nb alpha\nd\n");
    expect_render("{{#if OFF}}\nb {{A}} {{MISSING}}\n{{#else}}\nc {{A}}\n{{#endif}}\n", (TmplKV[]){kv[2], kv[0]}, 2,
                  "c alpha\n");
    expect_render("  {{#if ON}}\n{{#if OFF}}\nno\n{{#endif}}\nyes\n  {{#endif}}\n", kv + 1, 2, "yes\n");
    expect_render("no newline {{A}}", kv, 1, "no newline alpha");
    expect_render("braces { {x} } stay\n", NULL, 0, "braces { {x} } stay\n");

    expect_error("x {{B}}\n", kv, 1, "placeholder {{B}} has no value");
    expect_error("x\n", kv, 1, "value for {{A}} is not used");
    expect_error("//! {{A}} only in docs\n", kv, 1, "value for {{A}} is not used");
    expect_error("{{#if A}}\nx\n{{#endif}}\n", kv, 1, "must be 0 or 1");
    expect_error("{{#if Q}}\nx\n{{#endif}}\n", NULL, 0, "has no value");
    expect_error("{{#if ON}}\nx\n", kv + 1, 1, "without {{#endif}}");
    expect_error("x\n{{#endif}}\n", NULL, 0, "{{#endif}} without {{#if}}");
    expect_error("{{#else}}\n", NULL, 0, "{{#else}} without {{#if}}");
    expect_error("{{#if ON}}\n{{#else}}\n{{#else}}\n{{#endif}}\n", kv + 1, 1, "{{#else}} without {{#if}}");
    expect_error("{{#for X}}\n", NULL, 0, "unknown directive");
    expect_error("x {{a}}\n", NULL, 0, "malformed placeholder");

    /* errors carry the template name and line */
    expect_error("ok\nok\n{{B}}\n", NULL, 0, "template test.cuh:3:");

    /* an unknown template */
    char *buf = NULL;
    size_t blen = 0;
    FILE *mf = open_memstream(&buf, &blen);
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, mf);
    StrBuf out = {0};
    CHECK(!template_render(&d, "no_such.cuh", NULL, 0, &out));
    fclose(mf);
    CHECK(d.errors == 1 && strstr(buf, "no template named 'no_such.cuh'"));
    free(buf);
    free(out.p);
    arena_free(&a);
}

/* Every kernel template with every flag combination; no {{ may survive. */
typedef struct TmplCase {
    const char *name;          /* template file */
    const char *values;        /* "KEY=VALUE ..." always set */
    const char *flags[10];     /* 0/1 flags, all combinations */
} TmplCase;

/* Templates that are a kernel's HOOKS fragment, not a kernel: the hook each must define. */
static const struct {
    const char *name;  /* template file */
    const char *hook;  /* text its rendering holds */
} hook_templates[] = {
    {"attn_hooks.cuh", "bool k_visible(int h, int i, int j)"},
    {"attn_txl_hooks.cuh", "attn_visible_txl(i, j, P, 4, 1)"},
};

/* The hook template `name` must define, or NULL for a kernel template. */
static const char *template_hook(const char *name) {
    for (size_t i = 0; i < sizeof hook_templates / sizeof *hook_templates; i++)
        if (strcmp(hook_templates[i].name, name) == 0) return hook_templates[i].hook;
    return NULL;
}

static const TmplCase tmpl_cases[] = {
    {"embed.cuh",
     "COMMENT=// KERNEL_NAME=k D=64 VEC=8 VOCAB=256 THREADS=64 T_WTE=float T_WPE=__half T_OUT=float SCALE=8.0f T_IN=__half "
     "POS_MOD=16",
     {"POS_LEARNED", "POS_SINUSOIDAL", "FROM_X", "FAIRSEQ", "POS_RESTART", "SEQ_ROWS"}},
    {"norm.cuh", "COMMENT=// KERNEL_NAME=k D=48 VEC=4 THREADS=64 EPS=1e-05f T_IN=float T_GAMMA=__half T_BETA=__half T_OUT=float T_A=__half T_B=float",
     {"LAYERNORM", "ADD", "STORE_SUM"}},
    {"epilogue.cuh", "COMMENT=// KERNEL_NAME=k N=100 VEC=4 THREADS=128 T_X=float T_Y=__nv_bfloat16 T_BIAS=__half T_RES=float T_GATE=__half",
     {"HAS_BIAS", "HAS_RESIDUAL", "ACT_RELU", "ACT_GELU", "ACT_GELU_TANH", "ACT_SILU", "HAS_GATE", "GATE_SILU", "GATE_GELU"}},
    {"kv_write.cuh",
     "COMMENT=// KERNEL_NAME=k H=4 KVH=2 HD=20 THREADS=64 T_QKV=float T_KV=__half HALF=6 INV_FREQ={1.0f,0.5f,0.25f,0.125f,"
     "0.0625f,0.03125f} MSCALE=1.0f FACTOR=2.0f ORIG_MAX=16",
     {"KV_HTD", "SEQ_ROWS", "ROPE", "INTERLEAVED", "DYNAMIC"}},
    {"attn_engine.cuh",
     "COMMENT=// KERNEL_NAME=k H=3 KVH=3 HD=20 WARPS=4 QPW=4 KT=32 NQT=2 HEAD_TABLES=0 SCALE=0.2236068f T_QKV=float T_KV=__half T_OUT=float HOOKS= "
     "T_XKV=float T_POS=float T_B=__half T_REL=float",
     {"KV_HTD", "GATHER", "COUNT_TILES", "BANDED", "REC_KEY", "PIA", "REL", "RESIDUE"}},
    {"attn_mma.cuh",
     "COMMENT=// KERNEL_NAME=k H=4 KVH=1 HD=24 HDP=32 WARPS=4 KT=32 NQT=2 HEAD_TABLES=0 SCALE=0.2041241f T_QKV=__half T_KV=__nv_bfloat16 T_OUT=float HOOKS= "
     "T_XKV=float T_POS=__nv_bfloat16 T_B=float T_REL=__nv_bfloat16",
     {"KV_HTD", "GATHER", "COUNT_TILES", "BANDED", "RESIDUE", "REC_KEY", "PIA", "REL"}},
    {"recurrence_kv.cuh",
     "COMMENT=// KERNEL_NAME=k D=20 A=12 THREADS=32 EPS=1e-05f T_GAMMA=float T_BETA=float T_W=__half T_B=float "
     "T_STATE=float T_OUT=float",
     {"NORM", "LAYERNORM", "W_OUT_IN"}},
    {"recurrence_update.cuh",
     "COMMENT=// KERNEL_NAME=k D=20 NP=3 WMAX=24 THREADS=32 T_STATE=__half PARAMS=//x0,alpha POOL=//pool LAYERS=//ffn",
     {"MEAN"}},
    {"attn_hooks.cuh", "KERNEL_NAME=k KIND=window VISIBLE=attn_visible_window SETS= TABLE=nullptr NTOK=64 "
     "SLOPES={0.5f,0.25f,0.125f}",
     {"EXTRA", "ALIBI"}},
    {"attn_txl_hooks.cuh", "KERNEL_NAME=k MEMORY=4 CLAMP=0 SAME_LENGTH=1 REACH=20 T_REL=float T_B=__half LAST_ROW=19 HD=20 W=60",
     {"MMA"}},
    {"attn_decode.cuh",
     "COMMENT=// KERNEL_NAME=k H=3 KVH=1 HD=20 KPS=64 MAXS=2 THREADS=64 SCALE=0.2236068f T_QKV=float T_KV=__half T_OUT=float "
     "HOOKS= SLOPES={0.5f,0.25f,0.125f}",
     {"KV_HTD", "COMBINE", "VEC_KV", "VISIBLE", "ALIBI"}},
    {"embed_band.cuh", "COMMENT=// KERNEL_NAME=k W=24 VEC=8 LO=64 HI=160 THREADS=32 T_TAB=__half T_OUT=float", {NULL}},
    {"adaptive_logprob.cuh",
     "COMMENT=// KERNEL_NAME=k C0=50 NT=3 W=70 OFF=50 V=300 CLUSTER=2 THREADS=64 T_HEAD=__half T_CL=__half T_SEG=__half "
     "T_OUT=float",
     {"HEAD"}},
    {"loss.cuh", "COMMENT=// KERNEL_NAME=k V=300 VEC=4 THREADS=96", {"LOGPROB"}},
    {"sample.cuh", "COMMENT=// KERNEL_NAME=k V=300 ID_PASSES=3 THREADS=64", {NULL}},
    {"attn_pia_pos.cuh", "COMMENT=// KERNEL_NAME=k D=20 HHD=12 THREADS=32 T_W=__half T_POS=float", {"FAIRSEQ", "W_OUT_IN"}},
    {"attn_pia_slide.cuh", "COMMENT=// KERNEL_NAME=k H=3 HD=4 KEEP=5 THREADS=32 T_KV=__half", {"KV_HTD"}},
    {"txl_mem_write.cuh", "COMMENT=// KERNEL_NAME=k M=5 D=20 THREADS=32 T_X=float T_MEM=__half", {NULL}},
    {"txl_rel_keys.cuh", "COMMENT=// KERNEL_NAME=k D=20 W=12 THREADS=32 T_W=__half T_REL=float", {"R_OUT_IN", NULL}},
    {"attn_fn_pack.cuh", "COMMENT=// KERNEL_NAME=k H=3 HD=20 T_E=__half", {"UNPACK"}},
};

static void test_templates(void) {
    int kernels = 0;
    for (int i = 0; i < shortc_ntemplates; i++) {
        const ShortcTemplate *t = &shortc_templates[i];
        CHECK(strlen(t->text) == t->len);
        if (strcmp(t->name, "prelude.cuh") == 0) {
            CHECK(!strstr(t->text, "{{"));
            CHECK(strstr(t->text, "SHORTC_DYNAMIC_SMEM") && strstr(t->text, "shortsim_prelude.h"));
            continue;
        }
        if (strcmp(t->name, "mma_frag.cuh") == 0 || strcmp(t->name, "attn_kinds.cuh") == 0 ||
            strcmp(t->name, "hopper.cuh") == 0 || strcmp(t->name, "attn_wgmma.cuh") == 0) {
            /* verbatim device functions, no kernel (tests/sim/test_tcore.c; tests/attention/test_engine.c;
             * tests/sim/test_hopper.c; the sm_90a attention body, not rendered by the emitter yet:
             * tests/sim/test_attn_wgmma.c) */
            CHECK(!strstr(t->text, "{{") && !strstr(t->text, "__global__"));
            continue;
        }
        kernels++;
        const TmplCase *c = NULL;
        for (size_t k = 0; k < sizeof tmpl_cases / sizeof *tmpl_cases; k++)
            if (strcmp(tmpl_cases[k].name, t->name) == 0) c = &tmpl_cases[k];
        if (!c) {
            fprintf(stderr, "template %s has no case in test_emit.c\n", t->name);
            check_failures++;
            continue;
        }
        TmplKV kv[TMPL_MAX_KV];
        int nkv = 0;
        char vals[512];
        snprintf(vals, sizeof vals, "%s", c->values);
        for (char *tok = strtok(vals, " "); tok; tok = strtok(NULL, " ")) {
            char *eq = strchr(tok, '=');
            *eq = '\0';
            kv[nkv++] = (TmplKV){tok, eq + 1};
        }
        int nflags = 0;
        while (nflags < 10 && c->flags[nflags]) nflags++;
        for (int mask = 0; mask < (1 << nflags); mask++) {
            for (int f = 0; f < nflags; f++) kv[nkv + f] = (TmplKV){c->flags[f], (mask >> f) & 1 ? "1" : "0"};
            char *msgs;
            char *got = render(t->text, kv, nkv + nflags, &msgs);
            if (!got) {
                fprintf(stderr, "%s (flags %#x): %s", t->name, mask, msgs);
                check_failures++;
            } else {
                CHECK(!strstr(got, "{{") && !strstr(got, "}}") && !strstr(got, "//!"));
                if (template_hook(t->name)) CHECK(strstr(got, template_hook(t->name)) && !strstr(got, "__global__"));
                else CHECK(strstr(got, "extern \"C\" __global__ void k("));
            }
            free(got);
            free(msgs);
        }
    }
    CHECK(kernels == (int)(sizeof tmpl_cases / sizeof *tmpl_cases));
    CHECK(template_find("prelude.cuh") != NULL);
}

/* ------------------------------------------------------------------ */
/* Models                                                              */
/* ------------------------------------------------------------------ */

static bool emit_model(const char *path, bool no_fuse, EmitResult *er, char **msgs) {
    char *buf = NULL;
    size_t blen = 0;
    FILE *mf = open_memstream(&buf, &blen);
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, mf);
    CompileOptions co = {.path = path, .no_fuse = no_fuse};
    CompileResult cr;
    bool ok = shortc_compile(&a, &d, &co, &cr);
    *er = cr.emit; /* the caller frees it */
    fclose(mf);
    arena_free(&a);
    *msgs = buf;
    return ok;
}

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* A plan DIM at T tokens, position P (a KV cache's fill is P), batch 1. */
static double dim_at(const cJSON *d, int T, int P) {
    if (cJSON_IsNumber(d)) return d->valuedouble;
    static const char *const keys[6] = {"t", "p", "fill", "b", "c", "div"};
    long k[6] = {0, 0, 0, 0, 0, 1};
    for (int i = 0; i < 6; i++) {
        const cJSON *x = cJSON_GetObjectItem(d, keys[i]);
        if (x) k[i] = (long)x->valuedouble;
    }
    return (double)symdim_eval((SymDim){.t = k[0], .p = k[1], .fill = k[2], .b = k[3], .c = k[4], .div = k[5]},
                               &(SymEnv){.T = T, .P = P, .fill = P, .B = 1});
}

/* A REF's arena offset must lie inside the arena. */
static void check_ref(const cJSON *r, double arena_bytes, int nweights) {
    const cJSON *x;
    if ((x = cJSON_GetObjectItem(r, "arena"))) CHECK(x->valuedouble >= 0 && x->valuedouble < arena_bytes);
    else if ((x = cJSON_GetObjectItem(r, "weight"))) CHECK(x->valuedouble >= 0 && x->valuedouble < nweights);
    else CHECK(cJSON_GetObjectItem(r, "state") != NULL || cJSON_GetObjectItem(r, "const") != NULL);
}

static bool cublas_ok(const char *a, const char *b, const char *c) {
    return strcmp(a, b) == 0 && (strcmp(c, a) == 0 || strcmp(c, "f32") == 0);
}

static void check_model(const char *path, bool no_fuse) {
    EmitResult er, again;
    char *msgs, *msgs2;
    bool ok = emit_model(path, no_fuse, &er, &msgs);
    if (!ok) {
        fprintf(stderr, "%s%s: emission failed:\n%s", path, no_fuse ? " (--no-fuse)" : "", msgs ? msgs : "");
        check_failures++;
        free(msgs);
        emit_result_free(&er);
        return;
    }
    /* deterministic */
    CHECK(emit_model(path, no_fuse, &again, &msgs2));
    CHECK(again.cu_len == er.cu_len && again.cu && memcmp(again.cu, er.cu, er.cu_len) == 0);
    emit_result_free(&again);
    free(msgs2);
    CHECK(strlen(er.cu) == er.cu_len);

    /* the plan comment opens the file and holds exactly plan_json */
    const char *begin = SHORTC_PLAN_BEGIN "\n";
    CHECK(strncmp(er.cu, begin, strlen(begin)) == 0);
    const char *end = strstr(er.cu, "\n" SHORTC_PLAN_END "\n");
    CHECK(end != NULL);
    if (end) CHECK((size_t)(end - er.cu) == strlen(begin) + strlen(er.plan_json) &&
                   memcmp(er.cu + strlen(begin), er.plan_json, strlen(er.plan_json)) == 0);
    CHECK(count(er.cu, "*/") == 1); /* the plan is the only block comment */
    CHECK(!strstr(er.cu, "{{"));
    const char *first_kernel = strstr(er.cu, "extern \"C\" __global__");
    CHECK(first_kernel && !strstr(first_kernel, "asm")); /* inline PTX only in the prelude */

    cJSON *plan = cJSON_Parse(er.plan_json);
    CHECK(plan != NULL);
    if (!plan) goto out;
    CHECK(strcmp(cJSON_GetObjectItem(plan, "format")->valuestring, "shortc-plan") == 0);
    double arena_bytes = cJSON_GetObjectItem(plan, "arena_bytes")->valuedouble;
    int nweights = cJSON_GetArraySize(cJSON_GetObjectItem(plan, "weights"));
    const cJSON *kernels = cJSON_GetObjectItem(plan, "kernels"), *steps = plan_program_steps(plan, NULL);
    CHECK(cJSON_GetArraySize(kernels) == er.nkernels);
    const cJSON *k, *st, *a;
    cJSON_ArrayForEach(k, kernels) {
        const char *name = cJSON_GetObjectItem(k, "name")->valuestring;
        char def[256];
        snprintf(def, sizeof def, "extern \"C\" __global__ void %s(", name);
        CHECK(count(er.cu, def) == 1);
        int launches = 0; /* over every program ("uses" counts them all) */
        const cJSON *prog;
        cJSON_ArrayForEach(prog, cJSON_GetObjectItem(plan, "programs")) cJSON_ArrayForEach(st, cJSON_GetObjectItem(prog, "steps")) {
            const cJSON *kn = cJSON_GetObjectItem(st, "kernel");
            if (kn && strcmp(kn->valuestring, name) == 0) {
                launches++;
                /* one parameter per argument: count the commas of the signature */
                const char *sig = strstr(er.cu, def) + strlen(def);
                int params = 1;
                for (const char *p = sig; *p && *p != ')'; p++) {
                    if (p[0] == '/' && p[1] == '/') p = strchr(p, '\n'); /* skip comments */
                    if (!p) break;
                    params += *p == ',';
                }
                CHECK(params == cJSON_GetArraySize(cJSON_GetObjectItem(st, "args")));
            }
        }
        CHECK(launches == (int)cJSON_GetObjectItem(k, "uses")->valuedouble);
        CHECK(cJSON_GetObjectItem(k, "line")->valuedouble > 0);
    }
    int nlaunch = 0, ngemm = 0;
    cJSON_ArrayForEach(st, steps) {
        const char *op = cJSON_GetObjectItem(st, "op")->valuestring;
        CHECK(cJSON_GetObjectItem(st, "line")->valuedouble > 0);
        if (strcmp(op, "launch") == 0) {
            nlaunch++;
            cJSON_ArrayForEach(a, cJSON_GetObjectItem(st, "args")) {
                if (cJSON_GetObjectItem(a, "int")) CHECK(dim_at(cJSON_GetObjectItem(a, "int"), 7, 3) > 0);
                else check_ref(a, arena_bytes, nweights);
            }
            const cJSON *grid = cJSON_GetObjectItem(st, "grid");
            for (int i = 0; i < 3; i++) CHECK(dim_at(cJSON_GetArrayItem(grid, i), 1, 0) >= 1);
            CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "block"), 0)->valuedouble <= 1024);
        } else {
            ngemm++;
            CHECK(strcmp(op, "gemm") == 0);
            CHECK(cublas_ok(cJSON_GetObjectItem(st, "atype")->valuestring, cJSON_GetObjectItem(st, "btype")->valuestring,
                            cJSON_GetObjectItem(st, "ctype")->valuestring));
            check_ref(cJSON_GetObjectItem(st, "A"), arena_bytes, nweights);
            check_ref(cJSON_GetObjectItem(st, "B"), arena_bytes, nweights);
            check_ref(cJSON_GetObjectItem(st, "C"), arena_bytes, nweights);
        }
    }
    CHECK(nlaunch == er.nlaunches && ngemm == er.ngemms);
    cJSON_ArrayForEach(a, cJSON_GetObjectItem(plan, "buffers")) {
        double off = cJSON_GetObjectItem(a, "offset")->valuedouble, bytes = cJSON_GetObjectItem(a, "bytes")->valuedouble;
        CHECK(off >= 0 && off + bytes <= arena_bytes);
    }
    cJSON_Delete(plan);
out:
    emit_result_free(&er);
    free(msgs);
}

/* Broken graphs are internal errors with a message, never a crash or partial output. */
static void test_broken_graphs(const char *root) {
    char path[4096];
    snprintf(path, sizeof path, "%s/models/gpt2_tiny.arch", root);
    for (int variant = 0; variant < 4; variant++) {
        char *buf = NULL;
        size_t blen = 0;
        FILE *mf = open_memstream(&buf, &blen);
        Arena a;
        arena_init(&a);
        Diag d;
        diag_init(&d, &a, mf);
        CompileOptions co = {.path = path, .stop = COMPILE_STOP_AFTER_PASSES};
        CompileResult cr;
        Graph *g = shortc_compile(&a, &d, &co, &cr) ? cr.graph : NULL;
        CHECK(g);
        if (!g) {
            fclose(mf);
            free(buf);
            arena_free(&a);
            continue;
        }
        const char *want = "";
        Node *norm = NULL, *mm = NULL;
        for (int i = 0; i < g->nnodes; i++) {
            if (!norm && g->nodes[i]->op == OP_NORM) norm = g->nodes[i];
            if (!mm && g->nodes[i]->op == OP_MATMUL && !g->nodes[i]->dead) mm = g->nodes[i];
        }
        switch (variant) {
        case 0: g->stage = "dedup"; want = "must go through every pass"; break;
        case 1: norm->kernel = -1; want = "kernel id -1 but the node needs a kernel"; break;
        case 2: g->values[norm->out]->buffer = -1; want = "has no place in the arena"; break;
        case 3: g->values[mm->out]->offset = g->values[mm->in[0]]->offset; want = "overlaps input"; break;
        }
        EmitResult er;
        CHECK(!emit_cuda(g, &d, &er));
        CHECK(er.cu == NULL && er.plan_json == NULL);
        fclose(mf);
        if (!strstr(buf, want) || !strstr(buf, "internal error")) {
            fprintf(stderr, "broken graph %d: expected '%s', got: %s\n", variant, want, buf);
            check_failures++;
        }
        free(buf);
        arena_free(&a);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_emit REPO_ROOT\n");
        return 2;
    }
    test_syntax();
    test_templates();
    test_broken_graphs(argv[1]);
    static const char *const models[] = {"gpt2_small", "gpt2_tiny", "gpt2_tiny_half", "mixed_tiny",
                                         "baseline_ba", "baseline_ba_tiny", "gpt2_24l"};
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/models/%s.arch", argv[1], models[i]);
        check_model(path, false);
        check_model(path, true);
    }
    if (check_failures) fprintf(stderr, "test_emit: %d check(s) failed\n", check_failures);
    else printf("test_emit: all checks passed\n");
    return check_failures ? 1 : 0;
}
