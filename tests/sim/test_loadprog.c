/*
 * test_loadprog.c — the plan's load program (issue 8; docs/plan.md, "The load program"): Shortformer's
 * positional tables are computed once per weights load, not per session, per call or per reset.
 *
 * On models/shortformer_tiny and tests/memory/pia_vaswani_tiny (both sinusoid styles), and on Transformer-XL's
 * relative-key tables W_r R_d of models/txl_tiny and models/txl_lrm_tiny (per-layer memories, so per-layer
 * tables of m + segment distances), on sim (blocks launched counted by the simulator per kernel) and ref:
 *   - before any weights, srt_model_info.load_runs is 0; derived_bytes is the plan's derived tensors
 *     (layers x slots x 2·H·hd; per layer (m + segment) x H·hd) and state_bytes no longer counts them (only
 *     the caches or memories);
 *   - a weights load runs the load program once: load_runs 1, the table kernel launched one block per row of
 *     every table; two sessions, forwards of several calls and a reset launch no further block of it;
 *   - sim: the device's derived tensors equal interp_derive's on the same weights (the golden tolerance);
 *   - loading other weights runs it again (load_runs 2, the blocks doubled), and the session then gives
 *     exactly the logits of a model opened with those weights from the start (the table was recomputed);
 *   - ref and sim agree on the logits after the reload.
 * Malformed load programs are rejected by the plan reader with a clear message (a load step on the arena,
 * derived tensors without a load program, a load program without derived tensors, a load program for
 * other T, a derived index out of range).
 */
#include "rt_internal.h"
#include "shortc.h"
#include "../suite/weights_by_value.h"
#include "half.h"
#include "kernel_blocks.h"
#include "sim.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...)                                                              \
    do {                                                                           \
        if (!(c)) {                                                                \
            failures++;                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                            \
            printf(__VA_ARGS__);                                                   \
            printf("\n");                                                          \
        }                                                                          \
    } while (0)

enum { NTOK = 40 }; /* more than the segment and the cache or memory: the cache slides, the memories wrap */

/* Opens path on backend b with random weights of seed; NULL (reported) on failure. */
static srt_model *open_model(srt_context *ctx, const char *path, srt_backend b, uint64_t seed) {
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = b;
    srt_model *m = NULL;
    if (srt_model_open(ctx, path, &opt, &m) != SRT_OK || srt_model_random_weights(m, seed) != SRT_OK) {
        CHECK(false, "%s: %s", path, srt_last_error(ctx));
        srt_model_close(m);
        return NULL;
    }
    return m;
}

/* NTOK tokens through a fresh session of m in calls of 5 (every model's segment holds 5); logits [NTOK, vocab]. */
static bool run_tokens(srt_model *m, srt_session *s, float *logits) {
    int32_t tok[NTOK];
    for (int t = 0; t < NTOK; t++) tok[t] = (t * 7 + 3) % m->plan.vocab;
    if (srt_session_reset(s) != SRT_OK) return false;
    for (int at = 0; at < NTOK; at += 5) {
        int k = NTOK - at < 5 ? NTOK - at : 5;
        if (srt_forward(s, tok + at, k, logits + (size_t)at * (size_t)m->plan.vocab) != SRT_OK) return false;
    }
    return true;
}

/* Decodes element i of a dtype-t buffer. */
static float elem(DType t, const unsigned char *raw, size_t i) {
    if (t == DT_F32) {
        float f;
        memcpy(&f, raw + 4 * i, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, raw + 2 * i, 2);
    return t == DT_BF16 ? rt_bf16_to_f32(h) : rt_f16_to_f32(h);
}

/* The sim model's derived tensors against interp_derive on the weights of seed. */
static void check_derived(const char *path, const Graph *g, srt_model *m, uint64_t seed) {
    const RtPlan *p = &m->plan;
    float **pvals = calloc((size_t)p->nweights + 1, sizeof *pvals);
    const float **wts = calloc((size_t)g->nvalues + 1, sizeof *wts);
    float **derived = calloc((size_t)g->nvalues + 1, sizeof *derived);
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, &a, stderr);
    bool ok = pvals && wts && derived && rt_weights_random(m->ctx, p, seed, pvals) == SRT_OK;
    if (ok) weights_by_value(g, p, pvals, wts);
    ok = ok && interp_derive(g, &d, wts, derived);
    CHECK(ok, "%s: interp_derive failed", path);
    int compared = 0;
    for (int v = 0; ok && v < g->nvalues; v++) {
        if (!derived[v]) continue;
        const Value *val = g->values[v];
        int idx = -1;
        for (int i = 0; i < p->nderived; i++)
            if (strcmp(p->derived[i].name, val->name + (val->name[0] == '%')) == 0) idx = i;
        CHECK(idx >= 0, "%s: derived %s has no plan entry", path, val->name);
        if (idx < 0) continue;
        const RtPlanDerived *pd = &p->derived[idx];
        unsigned char *raw = malloc(pd->bytes);
        CHECK(raw && m->drv.memcpyDtoH(raw, m->dderived + pd->offset, pd->bytes) == CUDA_SUCCESS, "%s: reading %s",
              path, pd->name);
        size_t n = ir_state_numel(val);
        CHECK(n * (size_t)dtype_size(pd->dtype) == pd->bytes, "%s: %s: %zu elements for %zu bytes", path, pd->name, n,
              pd->bytes);
        double tol = pd->dtype == DT_F32 ? 1e-4 : 2e-2, worst = 0;
        for (size_t i = 0; raw && i < n; i++) {
            double dd = fabs((double)elem(pd->dtype, raw, i) - derived[v][i]) / (1.0 + fabs(derived[v][i]));
            if (!(dd <= worst)) worst = dd;
        }
        CHECK(worst <= tol, "%s: derived %s differs from interp_derive's by %.3g x (1 + |ref|)", path, pd->name, worst);
        compared++;
        free(raw);
    }
    CHECK(!ok || compared == p->nderived, "%s: compared %d of %d derived tensors", path, compared, p->nderived);
    for (int v = 0; derived && v < g->nvalues; v++) free(derived[v]);
    for (int i = 0; pvals && i < p->nweights; i++) rt_free(m->ctx, pvals[i]);
    free(derived);
    free(pvals);
    free(wts);
    arena_free(&a);
}

/* What a model's derived tables hold: Shortformer's, layers x slots x 2·H·hd; Transformer-XL's, per layer
 * (memory + segment) x H·hd; in the KV dtype. */
static size_t want_derived_bytes(const ModelSpec *s) {
    size_t W = (size_t)s->n_heads * (size_t)(s->d_model / s->n_heads), rows = 0;
    for (int l = 0; l < s->n_layers; l++) rows += s->infused != PIA_NONE ? 2u * (size_t)ir_position_limit(s)
                                                                       : (size_t)(s->layers[l].memory + s->segment);
    return rows * W * (size_t)dtype_size(s->layout[TC_KV].dtype);
}

/* The sizes srt_model_info reports: derived_bytes the tables, state_bytes without them (every state entry of
 * role `role`). */
static void check_sizes(const char *path, const Graph *g, srt_model *m, const char *role) {
    srt_model_info mi;
    CHECK(srt_model_get_info(m, &mi) == SRT_OK, "%s: info", path);
    size_t want = want_derived_bytes(g->spec);
    CHECK(mi.derived_bytes == want && mi.derived_bytes == ir_derived_bytes(g), "%s: derived_bytes %zu, want %zu", path,
          mi.derived_bytes, want);
    CHECK(mi.state_bytes == ir_state_bytes(g), "%s: state_bytes %zu, the graph's %zu", path, mi.state_bytes,
          ir_state_bytes(g));
    size_t sum = 0;
    for (int i = 0; i < srt_model_state_count(m); i++) {
        srt_state_info si;
        CHECK(srt_model_state_get(m, i, &si) == SRT_OK && strcmp(si.role, role) == 0, "%s: state %d", path, i);
        sum += si.bytes;
    }
    CHECK(sum == mi.state_bytes, "%s: state entries sum to %zu, state_bytes %zu", path, sum, mi.state_bytes);
}

static int load_runs(const srt_model *m) {
    srt_model_info mi;
    return srt_model_get_info(m, &mi) == SRT_OK ? mi.load_runs : -1;
}

/* One model on backend b: the load program runs once per weights load; kernel names its table kernel, role the
 * role of its state entries. */
static void check_backend(srt_context *ctx, const char *path, const Graph *g, srt_backend b, float *ref_logits,
                          const char *kernel, const char *role) {
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = b;
    srt_model *m = NULL, *fresh = NULL;
    srt_session *s1 = NULL, *s2 = NULL;
    bool sim = b == SRT_BACKEND_SIM;
    size_t n = (size_t)NTOK * (size_t)g->spec->vocab;
    float *l1 = malloc(sizeof *l1 * n), *l2 = malloc(sizeof *l2 * n), *lf = malloc(sizeof *lf * n);
    if (!l1 || !l2 || !lf || srt_model_open(ctx, path, &opt, &m) != SRT_OK) {
        CHECK(false, "%s: %s", path, srt_last_error(ctx));
        goto done;
    }
    CHECK(load_runs(m) == 0, "%s: the load program ran before any weights", path);
    check_sizes(path, g, m, role);
    long per_load = 0; /* a block per row (slot or distance) of every table */
    for (int i = 0; i < m->plan.nderived; i++) per_load += (long)m->plan.derived[i].shape[0];
    CHECK(srt_model_random_weights(m, 3) == SRT_OK, "%s: %s", path, srt_last_error(ctx));
    CHECK(load_runs(m) == 1, "%s: load_runs %d after one load", path, load_runs(m));
    CHECK(!sim || blocks_of(m, kernel) == per_load, "%s: %ld table blocks after one load, want %ld", path,
          blocks_of(m, kernel), per_load);
    if (sim) check_derived(path, g, m, 3);
    CHECK(srt_session_create(m, 1, &s1) == SRT_OK && srt_session_create(m, 1, &s2) == SRT_OK, "%s: sessions: %s", path,
          srt_last_error(ctx));
    if (!s1 || !s2) goto done;
    CHECK(run_tokens(m, s1, l1) && run_tokens(m, s2, l2) && run_tokens(m, s1, l2), "%s: forwards: %s", path,
          srt_last_error(ctx));
    CHECK(memcmp(l1, l2, sizeof *l1 * n) == 0, "%s: a second session or a reset changed the logits", path);
    CHECK(load_runs(m) == 1, "%s: sessions, forwards or a reset ran the load program (load_runs %d)", path, load_runs(m));
    CHECK(!sim || blocks_of(m, kernel) == per_load, "%s: %ld table blocks after sessions, forwards and a reset, "
          "want %ld", path, blocks_of(m, kernel), per_load);
    /* other weights: the tables are recomputed, and the open session sees them */
    CHECK(srt_model_random_weights(m, 4) == SRT_OK, "%s: %s", path, srt_last_error(ctx));
    CHECK(load_runs(m) == 2, "%s: load_runs %d after two loads", path, load_runs(m));
    CHECK(!sim || blocks_of(m, kernel) == 2 * per_load, "%s: %ld table blocks after two loads", path,
          blocks_of(m, kernel));
    if (sim) check_derived(path, g, m, 4);
    fresh = open_model(ctx, path, b, 4);
    srt_session *sf = NULL;
    if (fresh && srt_session_create(fresh, 1, &sf) == SRT_OK) {
        CHECK(run_tokens(m, s1, l1) && run_tokens(fresh, sf, lf), "%s: %s", path, srt_last_error(ctx));
        CHECK(memcmp(l1, lf, sizeof *l1 * n) == 0, "%s: after reloading weights the logits are not those of a model "
              "opened with them (a stale table)", path);
        CHECK(memcmp(l1, l2, sizeof *l1 * n) != 0, "%s: other weights gave the same logits", path);
        srt_session_destroy(sf);
    }
    if (sim) { /* ref and sim agree after the reload */
        double worst = 0;
        for (size_t i = 0; i < n; i++)
            if (fabs((double)l1[i] - ref_logits[i]) > worst) worst = fabs((double)l1[i] - ref_logits[i]);
        CHECK(worst <= 1e-3, "%s: sim and ref logits after the reload differ by %g", path, worst);
    } else {
        memcpy(ref_logits, l1, sizeof *l1 * n);
    }
done:
    srt_session_destroy(s1);
    srt_session_destroy(s2);
    srt_model_close(fresh);
    srt_model_close(m);
    free(l1);
    free(l2);
    free(lf);
}

/* ------------------------------------------------------------------ */
/* Malformed load programs                                             */
/* ------------------------------------------------------------------ */

/* The program named name in a parsed plan, or NULL. */
static cJSON *program(cJSON *root, const char *name) {
    cJSON *pg;
    cJSON_ArrayForEach(pg, cJSON_GetObjectItemCaseSensitive(root, "programs")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(pg, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) return pg;
    }
    return NULL;
}

/* Edits of a plan, each a malformed load program (the edit's number selects it). */
enum { BAD_ARENA, BAD_STATE, BAD_NO_LOAD, BAD_T, BAD_INDEX, BAD_NO_DERIVED, BAD_TABLE_STATE, BAD_COUNT };

/* Applies edit k to root; false when the plan lacks what it edits. */
static bool edit_plan(cJSON *root, int k) {
    cJSON *load = program(root, "load");
    cJSON *step = load ? cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(load, "steps"), 0) : NULL;
    cJSON *args = step ? cJSON_GetObjectItemCaseSensitive(step, "args") : NULL;
    if (!args) return false;
    cJSON *ref = cJSON_CreateObject();
    switch (k) {
    case BAD_ARENA: /* the table's argument: the arena, which the load program has none of */
        cJSON_AddNumberToObject(ref, "arena", 0);
        return cJSON_ReplaceItemInArray(args, 1, ref);
    case BAD_STATE:
        cJSON_AddNumberToObject(ref, "state", 0);
        return cJSON_ReplaceItemInArray(args, 1, ref);
    case BAD_INDEX:
        cJSON_AddNumberToObject(ref, "derived", 9);
        return cJSON_ReplaceItemInArray(args, 1, ref);
    default:
        cJSON_Delete(ref);
        break;
    }
    if (k == BAD_NO_LOAD) return cJSON_ReplaceItemInObject(load, "name", cJSON_CreateString("preload"));
    if (k == BAD_T) return cJSON_ReplaceItemInObject(load, "t", cJSON_CreateIntArray((const int[]){1, 2}, 2));
    if (k == BAD_TABLE_STATE) /* a table listed as session state again */
        return cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "state"), 0), "role",
                                         cJSON_CreateString("table"));
    cJSON_DeleteItemFromObject(root, "derived"); /* BAD_NO_DERIVED */
    return true;
}

/* Edit k of the plan json must be rejected by the reader (a message holding reader_says) and by the schema check
 * `shortc --check` runs (checker_says; NULL: a rule of the reader alone). */
static void check_bad(srt_context *ctx, const char *json, int k, const char *reader_says, const char *checker_says) {
    cJSON *root = cJSON_Parse(json);
    CHECK(root && edit_plan(root, k), "edit %d: cannot apply", k);
    char *bad = root ? cJSON_Print(root) : NULL;
    if (bad) {
        RtPlan p;
        srt_status st = rt_plan_parse(ctx, "bad.cu", bad, strlen(bad), &p);
        CHECK(st == SRT_ERR_FORMAT && strstr(srt_last_error(ctx), reader_says),
              "edit %d: status %d, message '%s' (want '%s')", k, (int)st, srt_last_error(ctx), reader_says);
        if (st == SRT_OK) rt_plan_free(ctx, &p);
        char why[512];
        bool refused = !plan_schema_check(root, why, sizeof why);
        CHECK(!checker_says || (refused && strstr(why, checker_says)), "edit %d: the schema check says '%s' (want '%s')",
              k, refused ? why : "nothing", checker_says ? checker_says : "");
    }
    cJSON_free(bad);
    cJSON_Delete(root);
}

static void check_malformed(srt_context *ctx, const char *path) {
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_REF;
    srt_model *m = NULL;
    if (srt_model_open(ctx, path, &opt, &m) != SRT_OK) {
        CHECK(false, "%s: %s", path, srt_last_error(ctx));
        return;
    }
    const char *json = srt_model_plan_json(m);
    static const char *const says[BAD_COUNT][2] = {
        [BAD_ARENA] = {"the \"load\" program refers to the arena", "the \"load\" program refers to the arena"},
        [BAD_STATE] = {"the \"load\" program refers to the state", "the \"load\" program refers to the state"},
        [BAD_NO_LOAD] = {"no \"load\" program computes them", "no \"load\" program computes them"},
        [BAD_T] = {"runs once, at T = 1: expected [1, 1]", "runs once, at T = 1: expected [1, 1]"},
        [BAD_INDEX] = {"derived: 9 is out of range [0, 1]", "derived tensor 9 does not exist (the plan lists 2)"},
        [BAD_NO_DERIVED] = {"derived: 0 is out of range [0, -1]", "derived tensor 0 does not exist (the plan lists 0)"},
        [BAD_TABLE_STATE] = {"state[0].role: a table computed from the weights is a derived tensor", NULL},
    };
    for (int k = 0; k < BAD_COUNT; k++) check_bad(ctx, json, k, says[k][0], says[k][1]);
    srt_model_close(m);
}

int main(void) {
    static const char *const models[] = {"models/shortformer_tiny", "tests/memory/pia_vaswani_tiny", "models/txl_tiny",
                                         "models/txl_lrm_tiny"};
    srt_context *ctx = NULL;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) return 1;
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.arch", SHORTC_SOURCE_DIR, models[i]);
        Arena a;
        arena_init(&a);
        Diag d;
        diag_init(&d, &a, stderr);
        CompileOptions co = {.path = path};
        CompileResult cr;
        if (!shortc_compile(&a, &d, &co, &cr)) {
            CHECK(false, "%s: compiling failed", models[i]);
        } else {
            float *ref_logits = calloc((size_t)NTOK * (size_t)cr.graph->spec->vocab, sizeof *ref_logits);
            bool pia = cr.graph->spec->infused != PIA_NONE;
            const char *kernel = pia ? "pia_pos" : "txl_rel_keys", *role = pia ? "kv_cache" : "memory";
            check_backend(ctx, path, cr.graph, SRT_BACKEND_REF, ref_logits, kernel, role);
            check_backend(ctx, path, cr.graph, SRT_BACKEND_SIM, ref_logits, kernel, role);
            free(ref_logits);
        }
        compile_result_free(&cr);
        arena_free(&a);
    }
    check_malformed(ctx, SHORTC_SOURCE_DIR "/models/shortformer_tiny.arch");
    srt_context_destroy(ctx);
    if (failures) printf("test_loadprog: %d check(s) failed\n", failures);
    else printf("test_loadprog: all checks passed\n");
    return failures ? 1 : 0;
}
