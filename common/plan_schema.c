/*
 * plan_schema.c — the plan's schema table and the check of a parsed plan
 * against it (plan_schema.h; the meaning of each field is docs/plan.md).
 */
#include "plan_schema.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define F(o, k, t, req) {o, k, t, PT_INT, PO_NONE, req}
#define OBJ(o, k, kind, req) {o, k, PT_OBJECT, PT_INT, kind, req}
#define ARR(o, k, e, kind, req) {o, k, PT_ARRAY, e, kind, req}

const PlanField plan_schema[] = {
    F(PO_ROOT, "format", PT_STRING, true),
    F(PO_ROOT, "version", PT_INT, true),
    F(PO_ROOT, "model", PT_STRING, true),
    F(PO_ROOT, "source", PT_STRING, false),
    OBJ(PO_ROOT, "config", PO_CONFIG, true),
    F(PO_ROOT, "arena_bytes", PT_INT, true),
    F(PO_ROOT, "tokens", PT_REF, true),
    OBJ(PO_ROOT, "logits", PO_LOGITS, true),
    OBJ(PO_ROOT, "loss", PO_LOSS, false),
    OBJ(PO_ROOT, "sample", PO_SAMPLE, false),
    OBJ(PO_ROOT, "batch", PO_BATCH, false),
    ARR(PO_ROOT, "buffers", PT_OBJECT, PO_BUFFER, false),
    ARR(PO_ROOT, "weights", PT_OBJECT, PO_WEIGHT, true),
    ARR(PO_ROOT, "scalars", PT_OBJECT, PO_SCALAR, true),
    ARR(PO_ROOT, "constants", PT_OBJECT, PO_CONSTANT, true),
    ARR(PO_ROOT, "state", PT_OBJECT, PO_STATE, true),
    ARR(PO_ROOT, "derived", PT_OBJECT, PO_DERIVED, false),
    ARR(PO_ROOT, "kernels", PT_OBJECT, PO_KERNEL, true),
    ARR(PO_ROOT, "programs", PT_OBJECT, PO_PROGRAM, true),

    F(PO_CONFIG, "vocab", PT_INT, true),
    F(PO_CONFIG, "d_model", PT_INT, false),
    F(PO_CONFIG, "n_heads", PT_INT, false),
    F(PO_CONFIG, "head_dim", PT_INT, false),
    F(PO_CONFIG, "d_ff", PT_INT, false),
    F(PO_CONFIG, "n_layers", PT_INT, false),
    F(PO_CONFIG, "segment", PT_INT, true),
    F(PO_CONFIG, "norm", PT_STRING, false),
    F(PO_CONFIG, "norm_place", PT_STRING, false),
    F(PO_CONFIG, "positions", PT_STRING, false),
    F(PO_CONFIG, "activation", PT_STRING, false),
    F(PO_CONFIG, "tied", PT_BOOL, false),
    F(PO_CONFIG, "overlap", PT_INT, false),
    F(PO_CONFIG, "kv_heads", PT_INT, false),

    F(PO_LOGITS, "arena", PT_INT, true),
    F(PO_LOGITS, "dtype", PT_STRING, true),
    ARR(PO_LOGITS, "shape", PT_DIM, PO_NONE, true),

    F(PO_BUFFER, "value", PT_STRING, true),
    F(PO_BUFFER, "offset", PT_INT, true),
    F(PO_BUFFER, "bytes", PT_INT, true),
    F(PO_BUFFER, "dtype", PT_STRING, true),
    ARR(PO_BUFFER, "shape", PT_DIM, PO_NONE, true),

    F(PO_WEIGHT, "name", PT_STRING, true),
    ARR(PO_WEIGHT, "shape", PT_INT, PO_NONE, true),
    F(PO_WEIGHT, "dtype", PT_STRING, true),
    F(PO_WEIGHT, "round", PT_STRING, false),
    ARR(PO_WEIGHT, "file_shape", PT_INT, PO_NONE, true),
    F(PO_WEIGHT, "transpose", PT_BOOL, false),
    F(PO_WEIGHT, "optional", PT_BOOL, false),

    F(PO_SCALAR, "name", PT_STRING, true),
    F(PO_SCALAR, "min", PT_INT, true),
    F(PO_SCALAR, "max", PT_INT, true),

    F(PO_CONSTANT, "name", PT_STRING, true),
    F(PO_CONSTANT, "dtype", PT_STRING, true),
    ARR(PO_CONSTANT, "values", PT_NUMBER, PO_NONE, true),

    F(PO_STATE, "name", PT_STRING, true),
    F(PO_STATE, "role", PT_STRING, true),
    ARR(PO_STATE, "shape", PT_INT, PO_NONE, true),
    F(PO_STATE, "capacity", PT_INT, true),
    F(PO_STATE, "bytes", PT_INT, true),
    F(PO_STATE, "dtype", PT_STRING, true),
    F(PO_STATE, "persistent", PT_BOOL, true),
    F(PO_STATE, "keep", PT_INT, false),

    F(PO_PROGRAM, "name", PT_STRING, true),
    ARR(PO_PROGRAM, "t", PT_INT, PO_NONE, true),
    ARR(PO_PROGRAM, "steps", PT_STEP, PO_NONE, true),

    F(PO_KERNEL, "name", PT_STRING, true),
    F(PO_KERNEL, "barriers", PT_BOOL, false),
    F(PO_KERNEL, "line", PT_INT, false),
    F(PO_KERNEL, "uses", PT_INT, false),
    ARR(PO_KERNEL, "params", PT_STRING, PO_NONE, true),
    OBJ(PO_KERNEL, "residue_plain", PO_RESIDUE, false),

    F(PO_LAUNCH, "op", PT_STRING, true),
    F(PO_LAUNCH, "kernel", PT_STRING, true),
    ARR(PO_LAUNCH, "grid", PT_DIM, PO_NONE, true),
    ARR(PO_LAUNCH, "block", PT_INT, PO_NONE, true),
    F(PO_LAUNCH, "smem", PT_DIM, false),
    ARR(PO_LAUNCH, "args", PT_ARG, PO_NONE, true),
    F(PO_LAUNCH, "line", PT_INT, false),
    F(PO_LAUNCH, "layer", PT_INT, false),
    F(PO_LAUNCH, "node", PT_INT, false),

    F(PO_GEMM, "op", PT_STRING, true),
    F(PO_GEMM, "transa", PT_STRING, true),
    F(PO_GEMM, "transb", PT_STRING, true),
    F(PO_GEMM, "m", PT_DIM, true),
    F(PO_GEMM, "n", PT_DIM, true),
    F(PO_GEMM, "k", PT_DIM, true),
    F(PO_GEMM, "alpha", PT_NUMBER, true),
    F(PO_GEMM, "beta", PT_NUMBER, true),
    F(PO_GEMM, "A", PT_REF, true),
    F(PO_GEMM, "lda", PT_DIM, true),
    F(PO_GEMM, "atype", PT_STRING, true),
    F(PO_GEMM, "B", PT_REF, true),
    F(PO_GEMM, "ldb", PT_DIM, true),
    F(PO_GEMM, "btype", PT_STRING, true),
    F(PO_GEMM, "C", PT_REF, true),
    F(PO_GEMM, "ldc", PT_DIM, true),
    F(PO_GEMM, "ctype", PT_STRING, true),
    F(PO_GEMM, "compute", PT_STRING, false),
    F(PO_GEMM, "epilogue", PT_STRING, false),
    F(PO_GEMM, "bias", PT_REF, false),
    F(PO_GEMM, "batch", PT_DIM, false),
    F(PO_GEMM, "strideA", PT_DIM, false),
    F(PO_GEMM, "strideB", PT_DIM, false),
    F(PO_GEMM, "strideC", PT_DIM, false),
    F(PO_GEMM, "line", PT_INT, false),
    F(PO_GEMM, "layer", PT_INT, false),
    F(PO_GEMM, "node", PT_INT, false),

    F(PO_DIM, "t", PT_INT, false),
    F(PO_DIM, "p", PT_INT, false),
    F(PO_DIM, "fill", PT_INT, false),
    F(PO_DIM, "b", PT_INT, false),
    F(PO_DIM, "c", PT_INT, false),
    F(PO_DIM, "div", PT_INT, false),

    F(PO_REF_ARENA, "arena", PT_INT, true),
    F(PO_REF_WEIGHT, "weight", PT_INT, true),
    F(PO_REF_WEIGHT, "offset", PT_INT, false),
    F(PO_REF_STATE, "state", PT_INT, true),
    F(PO_REF_STATE, "offset", PT_INT, false),
    F(PO_REF_CONST, "const", PT_INT, true),
    F(PO_REF_CONST, "offset", PT_INT, false),

    F(PO_ARG_INT, "int", PT_DIM, true),
    F(PO_ARG_FLOAT, "float", PT_NUMBER, true),

    F(PO_LOSS, "targets", PT_REF, true),
    F(PO_LOSS, "nll", PT_REF, true),

    F(PO_SAMPLE, "params", PT_REF, true),

    F(PO_BATCH, "max", PT_INT, true),
    F(PO_BATCH, "sequences", PT_REF, true),

    F(PO_RESIDUE, "scan", PT_INT, true),
    ARR(PO_RESIDUE, "lo", PT_INT, PO_NONE, true),
    ARR(PO_RESIDUE, "hi", PT_INT, PO_NONE, true),

    F(PO_DERIVED, "name", PT_STRING, true),
    ARR(PO_DERIVED, "shape", PT_INT, PO_NONE, true),
    F(PO_DERIVED, "bytes", PT_INT, true),
    F(PO_DERIVED, "dtype", PT_STRING, true),

    F(PO_REF_DERIVED, "derived", PT_INT, true),
    F(PO_REF_DERIVED, "offset", PT_INT, false),
};
const int plan_schema_nfields = (int)(sizeof plan_schema / sizeof *plan_schema);

const char *plan_version_message(int version) {
    if (version == 1)
        return "plan version 1 (from an older shortc, before state and programs) is not supported; emit the .cu "
               "again with this shortc (it writes and reads version " SHORTC_PLAN_VERSION_TEXT ")";
    return version > SHORTC_PLAN_VERSION ? "plan version is newer than this shortc reads (version " SHORTC_PLAN_VERSION_TEXT "); use the shortc "
                                           "that emitted it"
                                         : "plan version is not supported (this shortc reads version " SHORTC_PLAN_VERSION_TEXT ")";
}

const char *const plan_state_roles[PLAN_NSTATE_ROLES] = {"none", "kv_cache", "layer_input", "memory", "recurrent",
                                                               "table"};

const char *const plan_scalar_names[4] = {"T", "P", "fill", "B"};

const cJSON *plan_program_steps(const cJSON *root, const char *name) {
    const cJSON *progs = cJSON_GetObjectItemCaseSensitive(root, "programs"), *pg;
    cJSON_ArrayForEach(pg, progs) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(pg, "name");
        if (!name || (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)) {
            const cJSON *steps = cJSON_GetObjectItemCaseSensitive(pg, "steps");
            return cJSON_IsArray(steps) ? steps : NULL;
        }
    }
    return NULL;
}

const PlanField *plan_schema_field(PlanObject obj, const char *key) {
    for (int i = 0; i < plan_schema_nfields; i++)
        if (plan_schema[i].obj == obj && strcmp(plan_schema[i].key, key) == 0) return &plan_schema[i];
    return NULL;
}

void plan_schema_keys(PlanObject obj, const char **out, int max) {
    int n = 0;
    for (int i = 0; i < plan_schema_nfields && n + 1 < max; i++)
        if (plan_schema[i].obj == obj) out[n++] = plan_schema[i].key;
    if (max > 0) out[n] = NULL;
}

/* ------------------------------------------------------------------ */
/* Checking a document                                                  */
/* ------------------------------------------------------------------ */

#define CHECK_MAX_DEPTH 32 /* path steps kept for messages (plans nest about 8 deep) */
/* One step of the walk's path: ".key", or "[index]" when key is NULL. */
typedef struct CheckAt {
    const char *key;  /* the member's key, or NULL for an array element */
    int index;        /* the element's index */
} CheckAt;

typedef struct Check {
    CheckAt at[CHECK_MAX_DEPTH]; /* where the walk is, written out only for a message ("steps[3].grid[0]") */
    int depth;        /* steps of the path (entries past CHECK_MAX_DEPTH are not kept) */
    char *why;        /* the caller's message buffer */
    size_t whylen;    /* its size */
} Check;

static bool bad(Check *c, const char *fmt, const char *arg) {
    char msg[192], path[256] = "";
    snprintf(msg, sizeof msg, fmt, arg);
    size_t n = 0;
    for (int i = 0; i < c->depth && i < CHECK_MAX_DEPTH && n < sizeof path; i++) {
        const CheckAt *a = &c->at[i];
        n += a->key ? (size_t)snprintf(path + n, sizeof path - n, "%s%s", n ? "." : "", a->key)
                    : (size_t)snprintf(path + n, sizeof path - n, "[%d]", a->index);
    }
    if (path[0]) snprintf(c->why, c->whylen, "%s: %s", path, msg);
    else snprintf(c->why, c->whylen, "%s", msg);
    return false;
}

const char *plan_json_kind(const cJSON *j) {
    if (!j) return "nothing";
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsBool(j)) return "a boolean";
    if (cJSON_IsNull(j)) return "null";
    if (cJSON_IsArray(j)) return "an array";
    if (cJSON_IsObject(j)) return "an object";
    return "something else";
}

/* Appends ".key" or "[i]" to the path; returns the old depth to restore. */
static int push(Check *c, const char *key, int index) {
    if (c->depth < CHECK_MAX_DEPTH) c->at[c->depth] = (CheckAt){.key = key, .index = index};
    return c->depth++;
}
static void pop(Check *c, int depth) { c->depth = depth; }

static bool check_object(Check *c, const cJSON *j, PlanObject kind);

static bool is_int(const cJSON *j) {
    return cJSON_IsNumber(j) && j->valuedouble == floor(j->valuedouble) && fabs(j->valuedouble) < 9e15;
}

/* The REF kind an object is, by its first key; PO_NONE if none. */
static PlanObject ref_kind(const cJSON *j) {
    if (!cJSON_IsObject(j) || !j->child || !j->child->string) return PO_NONE;
    const char *k = j->child->string;
    return strcmp(k, "arena") == 0 ? PO_REF_ARENA : strcmp(k, "weight") == 0 ? PO_REF_WEIGHT
                                                : strcmp(k, "state") == 0  ? PO_REF_STATE
                                                : strcmp(k, "const") == 0  ? PO_REF_CONST
                                                : strcmp(k, "derived") == 0 ? PO_REF_DERIVED : PO_NONE;
}

static bool check_value(Check *c, const cJSON *j, PlanType t, PlanType elem, PlanObject kind) {
    switch (t) {
    case PT_INT: return is_int(j) || bad(c, "expected an integer, got %s", plan_json_kind(j));
    case PT_NUMBER: return cJSON_IsNumber(j) || bad(c, "expected a number, got %s", plan_json_kind(j));
    case PT_STRING: return cJSON_IsString(j) || bad(c, "expected a string, got %s", plan_json_kind(j));
    case PT_BOOL: return cJSON_IsBool(j) || bad(c, "expected true or false, got %s", plan_json_kind(j));
    case PT_DIM:
        if (is_int(j)) return true;
        if (!cJSON_IsObject(j)) return bad(c, "expected an integer or a DIM object, got %s", plan_json_kind(j));
        return check_object(c, j, PO_DIM);
    case PT_REF: {
        PlanObject k = ref_kind(j);
        return k != PO_NONE ? check_object(c, j, k) : bad(c, "expected a REF ({\"arena\"|\"weight\"|\"state\"|\"const\"|\"derived\": ...}), got %s", plan_json_kind(j));
    }
    case PT_ARG:
        if (cJSON_IsObject(j) && j->child && j->child->string && strcmp(j->child->string, "int") == 0)
            return check_object(c, j, PO_ARG_INT);
        if (cJSON_IsObject(j) && j->child && j->child->string && strcmp(j->child->string, "float") == 0)
            return check_object(c, j, PO_ARG_FLOAT);
        return check_value(c, j, PT_REF, PT_INT, PO_NONE);
    case PT_STEP: {
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(j, "op");
        if (!cJSON_IsObject(j) || !cJSON_IsString(op)) return bad(c, "expected a step object with an \"op\"%s", "");
        if (strcmp(op->valuestring, "launch") == 0) return check_object(c, j, PO_LAUNCH);
        if (strcmp(op->valuestring, "gemm") == 0) return check_object(c, j, PO_GEMM);
        return bad(c, "unknown step op '%s' (launch or gemm)", op->valuestring);
    }
    case PT_OBJECT:
        return cJSON_IsObject(j) ? check_object(c, j, kind) : bad(c, "expected an object, got %s", plan_json_kind(j));
    case PT_ARRAY: {
        if (!cJSON_IsArray(j)) return bad(c, "expected an array, got %s", plan_json_kind(j));
        int i = 0;
        for (const cJSON *e = j->child; e; e = e->next, i++) {
            int n = push(c, NULL, i);
            bool ok = check_value(c, e, elem, PT_INT, kind);
            if (!ok) return false;
            pop(c, n);
        }
        return true;
    }
    }
    return bad(c, "internal error: unknown schema type%s", "");
}

static bool check_object(Check *c, const cJSON *j, PlanObject kind) {
    for (const cJSON *m = j->child; m; m = m->next) {
        const PlanField *f = m->string ? plan_schema_field(kind, m->string) : NULL;
        if (!f) return bad(c, "unknown field '%s'", m->string ? m->string : "?");
        int n = push(c, m->string, 0);
        if (!check_value(c, m, f->type, f->elem, f->kind)) return false;
        pop(c, n);
    }
    for (int i = 0; i < plan_schema_nfields; i++) {
        const PlanField *f = &plan_schema[i];
        if (f->obj == kind && f->required && !cJSON_GetObjectItemCaseSensitive(j, f->key))
            return bad(c, "missing field '%s'", f->key);
    }
    return true;
}

bool plan_schema_check(const cJSON *root, char *why, size_t whylen) {
    Check c = {.why = why, .whylen = whylen};
    if (whylen) why[0] = '\0';
    if (!cJSON_IsObject(root)) return bad(&c, "expected an object, got %s", plan_json_kind(root));
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (is_int(v) && v->valuedouble != SHORTC_PLAN_VERSION) {
        snprintf(why, whylen, "version: %s", plan_version_message((int)v->valuedouble));
        return false;
    }
    return check_object(&c, root, PO_ROOT) && plan_load_program_check(root, why, whylen);
}

/* ------------------------------------------------------------------ */
/* The load program                                                    */
/* ------------------------------------------------------------------ */

/* The REFs of a step (kernel arguments that are objects with a REF key; a gemm's A, B, C and bias), up to max. */
static int step_refs(const cJSON *step, const cJSON **out, int max) {
    int n = 0;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(step, "args"), *a;
    cJSON_ArrayForEach(a, args)
        if (n < max && ref_kind(a) != PO_NONE) out[n++] = a;
    static const char *const operands[] = {"A", "B", "C", "bias"};
    for (int k = 0; k < 4; k++) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(step, operands[k]);
        if (n < max && ref_kind(r) != PO_NONE) out[n++] = r;
    }
    return n;
}

/* One program's steps against the load rules: derived indices in range; in the load program only weights,
 * constants and derived tensors. */
static bool check_program_refs(const cJSON *pg, int ipg, bool load, int nderived, char *why, size_t whylen) {
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(pg, "steps"), *st;
    int k = 0;
    cJSON_ArrayForEach(st, steps) {
        const cJSON *refs[64];
        int n = step_refs(st, refs, 64);
        for (int i = 0; i < n; i++) {
            PlanObject kind = ref_kind(refs[i]);
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(refs[i], "derived");
            if (kind == PO_REF_DERIVED && (!is_int(d) || d->valuedouble < 0 || d->valuedouble >= nderived)) {
                snprintf(why, whylen, "programs[%d].steps[%d]: derived tensor %g does not exist (the plan lists %d)", ipg,
                         k, is_int(d) ? d->valuedouble : -1.0, nderived);
                return false;
            }
            if (load && (kind == PO_REF_ARENA || kind == PO_REF_STATE)) {
                snprintf(why, whylen, "programs[%d].steps[%d]: the \"" PLAN_LOAD_PROGRAM "\" program refers to the %s; it "
                         "runs once per weights load with no session, so it reads weights, constants and derived "
                         "tensors and writes derived tensors only", ipg, k, kind == PO_REF_ARENA ? "arena" : "state");
                return false;
            }
        }
        k++;
    }
    return true;
}

bool plan_load_program_check(const cJSON *root, char *why, size_t whylen) {
    const cJSON *derived = cJSON_GetObjectItemCaseSensitive(root, "derived");
    const cJSON *progs = cJSON_GetObjectItemCaseSensitive(root, "programs"), *pg;
    int nderived = cJSON_IsArray(derived) ? cJSON_GetArraySize(derived) : 0, ipg = 0;
    bool have_load = false;
    cJSON_ArrayForEach(pg, progs) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(pg, "name"), *t = cJSON_GetObjectItemCaseSensitive(pg, "t");
        bool load = cJSON_IsString(name) && strcmp(name->valuestring, PLAN_LOAD_PROGRAM) == 0;
        if (load && (cJSON_GetArraySize(t) != 2 || !is_int(t->child) || !is_int(t->child->next) ||
                     t->child->valuedouble != 1 || t->child->next->valuedouble != 1)) {
            snprintf(why, whylen, "programs[%d].t: the \"" PLAN_LOAD_PROGRAM "\" program runs once, at T = 1: expected [1, 1]", ipg);
            return false;
        }
        if (!check_program_refs(pg, ipg, load, nderived, why, whylen)) return false;
        have_load = have_load || load;
        ipg++;
    }
    if (have_load != (nderived > 0)) {
        if (have_load) snprintf(why, whylen, "programs: a \"" PLAN_LOAD_PROGRAM "\" program but no \"derived\" tensors for it to compute");
        else snprintf(why, whylen, "derived: %d derived tensors but no \"" PLAN_LOAD_PROGRAM "\" program computes them", nderived);
        return false;
    }
    return true;
}

static const char *const epilogue_names[PLAN_EPI_COUNT] = {"none", "bias", "relu", "bias_relu", "gelu_tanh",
                                                            "bias_gelu_tanh"};

const char *plan_epilogue_name(PlanEpilogue e) { return (unsigned)e < PLAN_EPI_COUNT ? epilogue_names[e] : "?"; }

int plan_epilogue_from_name(const char *s) {
    for (int i = 0; s && i < PLAN_EPI_COUNT; i++)
        if (strcmp(s, epilogue_names[i]) == 0) return i;
    return -1;
}

bool plan_epilogue_has_bias(PlanEpilogue e) {
    return e == PLAN_EPI_BIAS || e == PLAN_EPI_BIAS_RELU || e == PLAN_EPI_BIAS_GELU_TANH;
}
