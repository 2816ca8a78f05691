/*
 * plan_load.c — reads the plan (docs/plan.md) out of an emitted .cu and
 * parses it with cJSON into the structs of rt_internal.h, checking every
 * field: a malformed plan is SRT_ERR_FORMAT with the JSON path of the
 * offending field ("FILE: plan: steps[3].args[1]: ..."). After this, the
 * executor can trust indices (kernels, weights, state) and the fixed parts
 * of every address; what depends on the token count is checked per forward.
 */
#define _GNU_SOURCE
#include "rt_internal.h"
#include "plan_schema.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a plan weight is stored in the given shape. */
static bool stored_as(const RtPlanWeight *w, int rank, const SymDim *dims) {
    if (w->rank != rank) return false;
    for (int k = 0; k < rank; k++)
        if (!symdim_is_const(dims[k]) || w->shape[k] != symdim_eval(dims[k], NULL)) return false;
    return true;
}

int rt_plan_weight_index(const RtPlan *p, const char *name, int rank, const SymDim *dims) {
    int named = -1;
    for (int i = 0; i < p->nweights && name; i++) {
        if (strcmp(p->weights[i].name, name) != 0) continue;
        if (stored_as(&p->weights[i], rank, dims)) return i;
        if (named < 0) named = i;
    }
    return named;
}

const RtProgram *rt_plan_program(const RtPlan *p, int T) {
    const RtProgram *best = NULL;
    for (int i = 0; i < p->nprograms; i++) {
        const RtProgram *g = &p->programs[i];
        if (g->on_request) continue; /* loss, sample: run by srt_forward_nll, srt_forward_sample */
        if (T >= g->tmin && T <= g->tmax && (!best || g->tmax - g->tmin < best->tmax - best->tmin)) best = g;
    }
    return best;
}

srt_status rt_plan_extract(srt_context *ctx, const char *what, const char *cu, size_t len, const char **json,
                           size_t *json_len) {
    const char *begin = memmem(cu, len, SHORTC_PLAN_BEGIN, strlen(SHORTC_PLAN_BEGIN));
    if (!begin)
        return rt_error(ctx, SRT_ERR_FORMAT,
                        "%s: no plan found (expected a '" SHORTC_PLAN_BEGIN "' comment; is this file emitted by shortc?)",
                        what);
    const char *start = begin + strlen(SHORTC_PLAN_BEGIN);
    const char *end = memmem(start, len - (size_t)(start - cu), SHORTC_PLAN_END, strlen(SHORTC_PLAN_END));
    if (!end) return rt_error(ctx, SRT_ERR_FORMAT, "%s: the plan comment is not closed by '" SHORTC_PLAN_END "'", what);
    *json = start;
    *json_len = (size_t)(end - start);
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* Field readers: each reports "what: plan: path: problem"               */
/* ------------------------------------------------------------------ */

typedef struct P {
    srt_context *ctx;     /* allocations and the error message */
    const char *what;     /* the file, for messages */
    RtPlan *plan;         /* being filled */
    char path[256];   /* JSON path of the object being read */
    int step;         /* index of the step being read (messages) */
} P;

__attribute__((format(printf, 3, 4))) static srt_status perr(P *p, const char *field, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *sep = p->path[0] && field && field[0] && field[0] != '[' ? "." : "";
    return rt_error(p->ctx, SRT_ERR_FORMAT, "%s: plan: %s%s%s: %s", p->what, p->path, sep, field ? field : "", msg);
}

#define TRY(x)                            \
    do {                                  \
        srt_status st_ = (x);             \
        if (st_ != SRT_OK) return st_;    \
    } while (0)


static srt_status get_int(P *p, const cJSON *obj, const char *key, int64_t lo, int64_t hi, bool required, int64_t dflt,
                          int64_t *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) {
        if (required) return perr(p, key, "missing");
        *out = dflt;
        return SRT_OK;
    }
    if (!cJSON_IsNumber(j) || j->valuedouble != floor(j->valuedouble) || fabs(j->valuedouble) > 9007199254740992.0)
        return perr(p, key, "expected an integer, got %s", plan_json_kind(j));
    int64_t v = (int64_t)j->valuedouble;
    if (v < lo || v > hi) return perr(p, key, "%lld is out of range [%lld, %lld]", (long long)v, (long long)lo, (long long)hi);
    *out = v;
    return SRT_OK;
}

static srt_status get_i32(P *p, const cJSON *obj, const char *key, int lo, int hi, bool required, int dflt, int *out) {
    int64_t v;
    TRY(get_int(p, obj, key, lo, hi, required, dflt, &v));
    *out = (int)v;
    return SRT_OK;
}

static srt_status get_bool(P *p, const cJSON *obj, const char *key, bool dflt, bool *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) {
        *out = dflt;
        return SRT_OK;
    }
    if (!cJSON_IsBool(j)) return perr(p, key, "expected true or false, got %s", plan_json_kind(j));
    *out = cJSON_IsTrue(j);
    return SRT_OK;
}

static srt_status get_float(P *p, const cJSON *obj, const char *key, float *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) return perr(p, key, "missing");
    if (!cJSON_IsNumber(j)) return perr(p, key, "expected a number, got %s", plan_json_kind(j));
    *out = (float)j->valuedouble;
    return SRT_OK;
}

static srt_status get_str(P *p, const cJSON *obj, const char *key, bool required, char **out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j && !required) {
        *out = rt_strdup(p->ctx, "");
    } else {
        if (!j) return perr(p, key, "missing");
        if (!cJSON_IsString(j)) return perr(p, key, "expected a string, got %s", plan_json_kind(j));
        *out = rt_strdup(p->ctx, j->valuestring);
    }
    return *out ? SRT_OK : rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
}

static srt_status get_dtype(P *p, const cJSON *obj, const char *key, bool allow_i32, DType *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) return perr(p, key, "missing");
    if (cJSON_IsString(j)) {
        for (int t = 0; t < DT_COUNT; t++) {
            if ((allow_i32 || t != DT_I32) && strcmp(j->valuestring, dtype_plan_name((DType)t)) == 0) {
                *out = (DType)t;
                return SRT_OK;
            }
        }
        return perr(p, key, "unknown dtype '%s' (expected f32, f16 or bf16)", j->valuestring);
    }
    return perr(p, key, "expected a dtype string, got %s", plan_json_kind(j));
}

static srt_status get_array(P *p, const cJSON *obj, const char *key, bool required, const cJSON **out, int *n) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL; /* defined on every path (also keeps -O3's maybe-uninitialized quiet) */
    *n = 0;
    if (!j && !required) return SRT_OK;
    if (!j) return perr(p, key, "missing");
    if (!cJSON_IsArray(j)) return perr(p, key, "expected an array, got %s", plan_json_kind(j));
    *out = j;
    *n = cJSON_GetArraySize(j);
    return SRT_OK;
}

static srt_status get_object(P *p, const cJSON *obj, const char *key, const cJSON **out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!j) return perr(p, key, "missing");
    if (!cJSON_IsObject(j)) return perr(p, key, "expected an object, got %s", plan_json_kind(j));
    *out = j;
    return SRT_OK;
}

/* Only the listed keys may appear in obj (DIM, REF and ARG objects are closed forms). */
static srt_status only_keys(P *p, const char *field, const cJSON *obj, const char *const *keys, const char *form) {
    for (const cJSON *c = obj->child; c; c = c->next) {
        bool ok = false;
        for (int i = 0; keys[i]; i++) ok |= strcmp(c->string, keys[i]) == 0;
        if (!ok) return perr(p, field, "unexpected key '%s' (expected %s)", c->string, form);
    }
    return SRT_OK;
}

/* Sets p->path to name[i] for the duration of an element read. */
static void enter(P *p, char *saved, const char *name, int i) {
    memcpy(saved, p->path, sizeof p->path);
    size_t n = strlen(p->path);
    if (i >= 0) snprintf(p->path + n, sizeof p->path - n, "%s%s[%d]", n ? "." : "", name, i);
    else snprintf(p->path + n, sizeof p->path - n, "%s%s", n ? "." : "", name);
}
static void leave(P *p, const char *saved) { memcpy(p->path, saved, sizeof p->path); }
/* Sets p->path to path.field (path[i] for a field "[i]") while a DIM or REF object is read. */
static void enter_field(P *p, char *saved, const char *field) {
    memcpy(saved, p->path, sizeof p->path);
    size_t n = strlen(p->path);
    snprintf(p->path + n, sizeof p->path - n, "%s%s", n && field[0] != '[' ? "." : "", field);
}

#define DIM_FORM "an integer or {\"t\": a, \"p\": b, \"fill\": f, \"b\": k, \"c\": c, \"div\": d}"

static srt_status parse_dim_json(P *p, const char *field, const cJSON *j, RtDim *d) {
    if (!j) return perr(p, field, "missing (expected " DIM_FORM ")");
    if (cJSON_IsNumber(j)) {
        if (j->valuedouble != floor(j->valuedouble) || fabs(j->valuedouble) > 4e18)
            return perr(p, field, "expected " DIM_FORM ", got %g", j->valuedouble);
        *d = (RtDim){.c = (long)j->valuedouble, .div = 1};
        return SRT_OK;
    }
    if (!cJSON_IsObject(j)) return perr(p, field, "expected " DIM_FORM ", got %s", plan_json_kind(j));
    const char *keys[8];
    plan_schema_keys(PO_DIM, keys, 8);
    TRY(only_keys(p, field, j, keys, DIM_FORM));
    /* read the members with the field as a path prefix */
    char saved[256];
    enter_field(p, saved, field);
    int64_t v[6];
    static const char *const terms[4] = {"t", "p", "fill", "b"}; /* SymDim's coefficients in order */
    srt_status st = SRT_OK;
    for (int i = 0; i < 4 && st == SRT_OK; i++) st = get_int(p, j, terms[i], -(1 << 30), 1 << 30, false, 0, &v[i]);
    if (st == SRT_OK) st = get_int(p, j, "c", -((int64_t)1 << 40), (int64_t)1 << 40, false, 0, &v[4]);
    if (st == SRT_OK) st = get_int(p, j, "div", 1, 1 << 30, false, 1, &v[5]);
    *d = (RtDim){.t = (long)v[0], .p = (long)v[1], .fill = (long)v[2], .b = (long)v[3], .c = (long)v[4], .div = (long)v[5]};
    leave(p, saved);
    return st;
}

static srt_status get_dim(P *p, const cJSON *obj, const char *key, RtDim *d) {
    return parse_dim_json(p, key, cJSON_GetObjectItemCaseSensitive(obj, key), d);
}

#define REF_FORM "{\"arena\": OFFSET}, {\"weight\": I}, {\"state\": I, \"offset\": B}, {\"const\": I, \"offset\": B} or {\"derived\": I, \"offset\": B}"

static srt_status parse_ref_json(P *p, const char *field, const cJSON *j, RtRef *r) {
    if (!j) return perr(p, field, "missing (expected " REF_FORM ")");
    if (!cJSON_IsObject(j)) return perr(p, field, "expected " REF_FORM ", got %s", plan_json_kind(j));
    char saved[256];
    enter_field(p, saved, field);
    srt_status st;
    int64_t v = 0;
    const RtPlan *pl = p->plan;
    if (cJSON_GetObjectItemCaseSensitive(j, "arena")) {
        const char *keys[4];
        plan_schema_keys(PO_REF_ARENA, keys, 4);
        st = only_keys(p, "", j, keys, REF_FORM);
        if (st == SRT_OK) st = get_int(p, j, "arena", 0, (int64_t)pl->arena_bytes - 1, true, 0, &v);
        *r = (RtRef){RT_REF_ARENA, 0, v};
    } else if (cJSON_GetObjectItemCaseSensitive(j, "weight")) {
        const char *keys[4];
        plan_schema_keys(PO_REF_WEIGHT, keys, 4);
        st = only_keys(p, "", j, keys, REF_FORM);
        int64_t off = 0;
        if (st == SRT_OK) st = get_int(p, j, "weight", 0, pl->nweights - 1, true, 0, &v);
        if (st == SRT_OK) st = get_int(p, j, "offset", 0, (int64_t)pl->weights[v].bytes - 1, false, 0, &off);
        *r = (RtRef){RT_REF_WEIGHT, (int)v, off};
    } else if (cJSON_GetObjectItemCaseSensitive(j, "state")) {
        const char *keys[4];
        plan_schema_keys(PO_REF_STATE, keys, 4);
        int64_t off = 0;
        st = only_keys(p, "", j, keys, REF_FORM);
        if (st == SRT_OK) st = get_int(p, j, "state", 0, pl->nstate - 1, true, 0, &v);
        if (st == SRT_OK) st = get_int(p, j, "offset", 0, (int64_t)pl->state[v].bytes - 1, false, 0, &off);
        *r = (RtRef){RT_REF_STATE, (int)v, off};
    } else if (cJSON_GetObjectItemCaseSensitive(j, "const")) {
        const char *keys[4];
        plan_schema_keys(PO_REF_CONST, keys, 4);
        int64_t off = 0;
        st = only_keys(p, "", j, keys, REF_FORM);
        if (st == SRT_OK) st = get_int(p, j, "const", 0, pl->nconsts - 1, true, 0, &v);
        if (st == SRT_OK) st = get_int(p, j, "offset", 0, (int64_t)pl->consts[v].bytes - 1, false, 0, &off);
        *r = (RtRef){RT_REF_CONST, (int)v, off};
    } else if (cJSON_GetObjectItemCaseSensitive(j, "derived")) {
        const char *keys[4];
        plan_schema_keys(PO_REF_DERIVED, keys, 4);
        int64_t off = 0;
        st = only_keys(p, "", j, keys, REF_FORM);
        if (st == SRT_OK) st = get_int(p, j, "derived", 0, pl->nderived - 1, true, 0, &v);
        if (st == SRT_OK) st = get_int(p, j, "offset", 0, (int64_t)pl->derived[v].bytes - 1, false, 0, &off);
        *r = (RtRef){RT_REF_DERIVED, (int)v, off};
    } else {
        st = perr(p, "", "expected " REF_FORM);
    }
    leave(p, saved);
    return st;
}

static srt_status get_ref(P *p, const cJSON *obj, const char *key, RtRef *r) {
    return parse_ref_json(p, key, cJSON_GetObjectItemCaseSensitive(obj, key), r);
}


/* ------------------------------------------------------------------ */
/* Sections                                                            */
/* ------------------------------------------------------------------ */

static srt_status parse_shape(P *p, const cJSON *obj, const char *key, int *rank, int64_t *shape) {
    const cJSON *arr;
    int n;
    TRY(get_array(p, obj, key, true, &arr, &n));
    if (n < 1 || n > MAX_RANK) return perr(p, key, "rank %d is not supported (1 to %d)", n, MAX_RANK);
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 1 || e->valuedouble > 1e12)
            return perr(p, key, "element %d: expected a positive integer, got %s", i, plan_json_kind(e));
        shape[i] = (int64_t)e->valuedouble;
    }
    *rank = n;
    return SRT_OK;
}


/*
 * Whether two entries of one name are the two views of one file tensor that a
 * tied adaptive softmax uses (docs/plan.md): the same file shape, one loaded
 * as it is and one transposed.
 */
static bool other_view(const RtPlanWeight *a, const RtPlanWeight *b) {
    if (a->rank != 2 || b->rank != 2 || a->transpose == b->transpose) return false;
    return a->file_shape[0] == b->file_shape[0] && a->file_shape[1] == b->file_shape[1];
}
static srt_status parse_weights(P *p, const cJSON *root) {
    RtPlan *pl = p->plan;
    const cJSON *arr;
    int n;
    TRY(get_array(p, root, "weights", true, &arr, &n));
    pl->weights = rt_alloc(p->ctx, sizeof *pl->weights * (size_t)(n ? n : 1));
    if (!pl->weights) return rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
    pl->nweights = n;
    size_t off = 0;
    int i = 0;
    for (const cJSON *w = arr->child; w; w = w->next, i++) {
        char saved[256];
        enter(p, saved, "weights", i);
        RtPlanWeight *pw = &pl->weights[i];
        if (!cJSON_IsObject(w)) return perr(p, "", "expected an object, got %s", plan_json_kind(w));
        TRY(get_str(p, w, "name", true, &pw->name));
        if (!pw->name[0]) return perr(p, "name", "empty weight name");
        TRY(parse_shape(p, w, "shape", &pw->rank, pw->shape));
        int frank;
        TRY(parse_shape(p, w, "file_shape", &frank, pw->file_shape));
        TRY(get_dtype(p, w, "dtype", false, &pw->dtype));
        pw->round = pw->dtype;
        if (cJSON_GetObjectItemCaseSensitive(w, "round")) {
            TRY(get_dtype(p, w, "round", false, &pw->round));
            if (pw->round != pw->dtype && !(pw->dtype == DT_F32 && (pw->round == DT_F16 || pw->round == DT_BF16)))
                return perr(p, "round", "values rounded to %s must be held in f32 (or in %s itself), not %s",
                            dtype_plan_name(pw->round), dtype_plan_name(pw->round), dtype_plan_name(pw->dtype));
        }
        TRY(get_bool(p, w, "transpose", false, &pw->transpose));
        TRY(get_bool(p, w, "optional", false, &pw->optional));
        if (frank != pw->rank) return perr(p, "file_shape", "rank %d differs from shape's rank %d", frank, pw->rank);
        if (pw->transpose && pw->rank != 2) return perr(p, "transpose", "only 2-D weights can be transposed");
        for (int d = 0; d < pw->rank; d++) {
            int64_t want = pw->transpose ? pw->file_shape[1 - d] : pw->file_shape[d];
            if (pw->shape[d] != want)
                return perr(p, "file_shape", "does not match shape%s (dimension %d: %lld vs %lld)",
                            pw->transpose ? " transposed" : "", d, (long long)want, (long long)pw->shape[d]);
        }
        pw->count = 1;
        for (int d = 0; d < pw->rank; d++) pw->count *= (size_t)pw->shape[d];
        pw->bytes = pw->count * (size_t)dtype_size(pw->dtype);
        pw->offset = off;
        off = (off + pw->bytes + 255) & ~(size_t)255;
        for (int j = 0; j < i; j++) {
            if (strcmp(pl->weights[j].name, pw->name) == 0 && !other_view(&pl->weights[j], pw))
                return perr(p, "name", "'%s' is listed twice (only as the other transpose of the same file shape)",
                            pw->name);
        }
        leave(p, saved);
    }
    pl->weight_bytes = off;
    return SRT_OK;
}

/* A state entry's "role": one of plan_state_roles. */
static srt_status get_role(P *p, const cJSON *obj, int *role) {
    char *name;
    TRY(get_str(p, obj, "role", true, &name));
    *role = -1;
    for (int r = 0; r < PLAN_NSTATE_ROLES; r++)
        if (strcmp(name, plan_state_roles[r]) == 0) *role = r;
    srt_status st = *role >= 0 ? SRT_OK
                               : perr(p, "role", "unknown role '%s' (expected none, kv_cache, layer_input, memory or "
                                                 "recurrent)", name);
    rt_free(p->ctx, name);
    return st;
}

/* An entry's "bytes" must be what its shape and dtype take. */
static srt_status check_bytes(P *p, int64_t bytes, DType dtype, int rank, const int64_t *shape) {
    int64_t want = dtype_size(dtype);
    for (int d = 0; d < rank; d++) want *= shape[d];
    if (bytes != want)
        return perr(p, "bytes", "%lld bytes, but its shape and dtype take %lld", (long long)bytes, (long long)want);
    return SRT_OK;
}

static srt_status parse_state(P *p, const cJSON *root) {
    RtPlan *pl = p->plan;
    const cJSON *arr;
    int n;
    TRY(get_array(p, root, "state", true, &arr, &n));
    pl->state = rt_alloc(p->ctx, sizeof *pl->state * (size_t)(n ? n : 1));
    if (!pl->state) return rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
    pl->nstate = n;
    pl->keep = -1;
    int i = 0;
    for (const cJSON *s = arr->child; s; s = s->next, i++) {
        char saved[256];
        enter(p, saved, "state", i);
        RtPlanState *ps = &pl->state[i];
        if (!cJSON_IsObject(s)) return perr(p, "", "expected an object, got %s", plan_json_kind(s));
        int64_t bytes;
        TRY(get_str(p, s, "name", true, &ps->name));
        TRY(get_role(p, s, &ps->role));
        if (strcmp(plan_state_roles[ps->role], "table") == 0) /* the load program's tables are not session state */
            return perr(p, "role", "a table computed from the weights is a derived tensor (plan \"derived\", written by "
                                   "the \"" PLAN_LOAD_PROGRAM "\" program), not session state");
        TRY(parse_shape(p, s, "shape", &ps->rank, ps->shape));
        TRY(get_i32(p, s, "capacity", 1, 1 << 30, true, 0, &ps->capacity));
        TRY(get_int(p, s, "bytes", 1, (int64_t)1 << 40, true, 0, &bytes));
        TRY(get_dtype(p, s, "dtype", false, &ps->dtype));
        TRY(get_bool(p, s, "persistent", false, &ps->persistent));
        TRY(get_i32(p, s, "keep", -1, ps->capacity - 1, false, -1, &ps->keep));
        if (ps->keep >= 0 && (!ps->persistent || ps->role != PLAN_ROLE_KV_CACHE))
            return perr(p, "keep", "only a persistent kv_cache slides");
        if (ps->keep >= 0 && (pl->keep < 0 || ps->keep < pl->keep)) pl->keep = ps->keep;
        TRY(check_bytes(p, bytes, ps->dtype, ps->rank, ps->shape));
        /* a KV cache takes a row per position: the plan's P range must fit (kernels index rows P..P+T-1) */
        if (ps->persistent && ps->role == PLAN_ROLE_KV_CACHE && ps->capacity < pl->scalar_max[1] + 1)
            return perr(p, "capacity", "%d rows cannot hold the positions the plan allows (P up to %lld)", ps->capacity,
                        (long long)pl->scalar_max[1]);
        ps->bytes = (size_t)bytes;
        pl->state_bytes += ps->bytes;
        if (ps->persistent && ps->role == PLAN_ROLE_RECURRENT) pl->recurrent = true;
        if (ps->persistent && ps->role == PLAN_ROLE_MEMORY) pl->memories = true;
        leave(p, saved);
    }
    return SRT_OK;
}

/* "derived" (optional): the tensors the load program computes, laid out in one block (256-aligned). */
static srt_status parse_derived(P *p, const cJSON *root) {
    RtPlan *pl = p->plan;
    const cJSON *arr;
    int n;
    if (!cJSON_GetObjectItemCaseSensitive(root, "derived")) return SRT_OK;
    TRY(get_array(p, root, "derived", true, &arr, &n));
    pl->derived = rt_alloc(p->ctx, sizeof *pl->derived * (size_t)(n ? n : 1));
    if (!pl->derived) return rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
    pl->nderived = n;
    size_t off = 0;
    int i = 0;
    for (const cJSON *d = arr->child; d; d = d->next, i++) {
        char saved[256];
        enter(p, saved, "derived", i);
        RtPlanDerived *pd = &pl->derived[i];
        if (!cJSON_IsObject(d)) return perr(p, "", "expected an object, got %s", plan_json_kind(d));
        int64_t bytes;
        TRY(get_str(p, d, "name", true, &pd->name));
        TRY(parse_shape(p, d, "shape", &pd->rank, pd->shape));
        TRY(get_int(p, d, "bytes", 1, (int64_t)1 << 40, true, 0, &bytes));
        TRY(get_dtype(p, d, "dtype", false, &pd->dtype));
        TRY(check_bytes(p, bytes, pd->dtype, pd->rank, pd->shape));
        pd->bytes = (size_t)bytes;
        pd->offset = off;
        off = (off + pd->bytes + 255) & ~(size_t)255;
        leave(p, saved);
    }
    pl->derived_bytes = off;
    return SRT_OK;
}

/* "scalars": T, P, fill and B, each once, with the range a call may give it. */
static srt_status parse_scalars(P *p, const cJSON *root) {
    RtPlan *pl = p->plan;
    const cJSON *arr;
    int n;
    TRY(get_array(p, root, "scalars", true, &arr, &n));
    bool seen[4] = {false, false, false, false};
    int i = 0;
    for (const cJSON *s = arr->child; s; s = s->next, i++) {
        char saved[256];
        enter(p, saved, "scalars", i);
        if (!cJSON_IsObject(s)) return perr(p, "", "expected an object, got %s", plan_json_kind(s));
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(s, "name");
        int k = -1;
        for (int j = 0; j < 4 && cJSON_IsString(name); j++)
            if (strcmp(name->valuestring, plan_scalar_names[j]) == 0) k = j;
        if (k < 0) return perr(p, "name", "expected \"T\", \"P\", \"fill\" or \"B\"");
        if (seen[k]) return perr(p, "name", "'%s' is listed twice", plan_scalar_names[k]);
        seen[k] = true;
        TRY(get_int(p, s, "min", 0, (int64_t)1 << 30, true, 0, &pl->scalar_min[k]));
        TRY(get_int(p, s, "max", pl->scalar_min[k], (int64_t)1 << 30, true, 0, &pl->scalar_max[k]));
        leave(p, saved);
    }
    for (int k = 0; k < 4; k++)
        if (!seen[k]) return perr(p, "scalars", "no entry for '%s'", plan_scalar_names[k]);
    if (pl->scalar_min[0] != 1 || pl->scalar_max[0] != pl->segment)
        return perr(p, "scalars", "T must range over 1 to the segment (%d)", pl->segment);
    return SRT_OK;
}

/* "constants": compile-time tables of i32 or f32 entries, packed 256-aligned into one block. */
static srt_status parse_constants(P *p, const cJSON *root) {
    RtPlan *pl = p->plan;
    const cJSON *arr;
    int n;
    TRY(get_array(p, root, "constants", true, &arr, &n));
    pl->consts = rt_alloc(p->ctx, sizeof *pl->consts * (size_t)(n ? n : 1));
    if (!pl->consts) return rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
    pl->nconsts = n;
    size_t off = 0;
    int i = 0;
    for (const cJSON *c = arr->child; c; c = c->next, i++) {
        char saved[256];
        enter(p, saved, "constants", i);
        RtPlanConst *pc = &pl->consts[i];
        if (!cJSON_IsObject(c)) return perr(p, "", "expected an object, got %s", plan_json_kind(c));
        TRY(get_str(p, c, "name", true, &pc->name));
        TRY(get_dtype(p, c, "dtype", true, &pc->dtype));
        if (pc->dtype != DT_I32 && pc->dtype != DT_F32) return perr(p, "dtype", "constants are i32 or f32");
        const cJSON *vals;
        TRY(get_array(p, c, "values", true, &vals, &pc->count));
        if (pc->count < 1) return perr(p, "values", "an empty table");
        pc->bytes = 4u * (size_t)pc->count;
        if (!(pc->data = rt_alloc(p->ctx, pc->bytes))) return rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
        int k = 0;
        for (const cJSON *v = vals->child; v; v = v->next, k++) {
            bool ok = cJSON_IsNumber(v) && (pc->dtype == DT_F32 || (v->valuedouble == floor(v->valuedouble) &&
                                                                     fabs(v->valuedouble) <= 2147483647.0));
            if (!ok)
                return perr(p, "values", "entry %d: expected %s, got %s", k, pc->dtype == DT_F32 ? "a number" : "a 32-bit integer",
                            plan_json_kind(v));
            if (pc->dtype == DT_F32) ((float *)pc->data)[k] = (float)v->valuedouble;
            else ((int32_t *)pc->data)[k] = (int32_t)v->valuedouble;
        }
        pc->offset = off;
        off = (off + pc->bytes + 255) & ~(size_t)255;
        leave(p, saved);
    }
    pl->const_bytes = off;
    return SRT_OK;
}

static const char *const param_names[] = {[RT_ARG_REF] = "ptr", [RT_ARG_INT] = "int", [RT_ARG_FLOAT] = "float"};

/* kernels[i].params: ["ptr" | "int" | "float", ...], the kernel's parameter kinds in order. */
static srt_status parse_params(P *p, const cJSON *k, RtPlanKernel *pk) {
    const cJSON *arr;
    int n;
    TRY(get_array(p, k, "params", true, &arr, &n));
    pk->params = rt_alloc(p->ctx, sizeof *pk->params * (size_t)(n ? n : 1));
    if (!pk->params) return rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
    pk->nparams = n;
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        int kind = -1;
        for (int c = 0; c < 3 && cJSON_IsString(e); c++)
            if (strcmp(e->valuestring, param_names[c]) == 0) kind = c;
        if (kind < 0) {
            char f[32];
            snprintf(f, sizeof f, "params[%d]", i);
            return perr(p, f, "expected \"ptr\", \"int\" or \"float\", got %s%s%s%s", plan_json_kind(e),
                        cJSON_IsString(e) ? " '" : "", cJSON_IsString(e) ? e->valuestring : "", cJSON_IsString(e) ? "'" : "");
        }
        pk->params[i] = (RtArgKind)kind;
    }
    return SRT_OK;
}

/* A residue kind's kernel: "residue_plain": {"scan": N, "lo": [...], "hi": [...]}, the ascending, disjoint runs
 * [lo[i], hi[i]] of T (1 <= lo <= hi) whose calls the kernel runs as the plain tile loop (optional). */
static srt_status parse_residue_plain(P *p, const cJSON *k, RtPlanKernel *pk) {
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(k, "residue_plain"), *lo, *hi;
    if (!rp) return SRT_OK;
    if (!cJSON_IsObject(rp)) return perr(p, "residue_plain", "expected an object, got %s", plan_json_kind(rp));
    int n, nh;
    TRY(get_array(p, rp, "lo", true, &lo, &n));
    TRY(get_array(p, rp, "hi", true, &hi, &nh));
    if (n != nh) return perr(p, "residue_plain", "%d first and %d last T", n, nh);
    if (n > RT_RESIDUE_RUNS) return perr(p, "residue_plain", "%d runs (at most %d)", n, RT_RESIDUE_RUNS);
    pk->residue = true;
    pk->nplain = n;
    for (int i = 0; i < n; i++) {
        const cJSON *l = cJSON_GetArrayItem(lo, i), *h = cJSON_GetArrayItem(hi, i);
        if (!cJSON_IsNumber(l) || !cJSON_IsNumber(h) || l->valuedouble != (int)l->valuedouble ||
            h->valuedouble != (int)h->valuedouble)
            return perr(p, "residue_plain", "run %d is not two whole numbers", i);
        pk->plain_lo[i] = (int)l->valuedouble;
        pk->plain_hi[i] = (int)h->valuedouble;
        if (pk->plain_lo[i] < 1 || pk->plain_hi[i] < pk->plain_lo[i] || (i > 0 && pk->plain_lo[i] <= pk->plain_hi[i - 1]))
            return perr(p, "residue_plain", "run %d [%d, %d] is empty, below 1 or not after the one before", i,
                        pk->plain_lo[i], pk->plain_hi[i]);
    }
    return SRT_OK;
}

static srt_status parse_kernels(P *p, const cJSON *root) {
    RtPlan *pl = p->plan;
    const cJSON *arr;
    int n;
    TRY(get_array(p, root, "kernels", true, &arr, &n));
    pl->kernels = rt_alloc(p->ctx, sizeof *pl->kernels * (size_t)(n ? n : 1));
    if (!pl->kernels) return rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
    pl->nkernels = n;
    int i = 0;
    for (const cJSON *k = arr->child; k; k = k->next, i++) {
        char saved[256];
        enter(p, saved, "kernels", i);
        RtPlanKernel *pk = &pl->kernels[i];
        if (!cJSON_IsObject(k)) return perr(p, "", "expected an object, got %s", plan_json_kind(k));
        TRY(get_str(p, k, "name", true, &pk->name));
        if (!pk->name[0]) return perr(p, "name", "empty kernel name");
        for (const char *c = pk->name; *c; c++) {
            if (!(*c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
                return perr(p, "name", "'%s' is not a C identifier", pk->name);
        }
        TRY(get_bool(p, k, "barriers", false, &pk->barriers));
        TRY(get_i32(p, k, "line", 0, 1 << 30, false, 0, &pk->line));
        TRY(get_i32(p, k, "uses", 0, 1 << 30, false, 0, &pk->uses));
        TRY(parse_params(p, k, pk));
        TRY(parse_residue_plain(p, k, pk));
        for (int j = 0; j < i; j++) {
            if (strcmp(pl->kernels[j].name, pk->name) == 0) return perr(p, "name", "'%s' is listed twice", pk->name);
        }
        leave(p, saved);
    }
    return SRT_OK;
}

static srt_status parse_dim3(P *p, const cJSON *obj, const char *key, RtDim *out) {
    const cJSON *arr;
    int n;
    TRY(get_array(p, obj, key, true, &arr, &n));
    if (n != 3) return perr(p, key, "expected 3 dimensions, got %d", n);
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        char f[32];
        snprintf(f, sizeof f, "%s[%d]", key, i);
        TRY(parse_dim_json(p, f, e, &out[i]));
    }
    return SRT_OK;
}

/* An argument kind in words, for messages. */
static const char *const arg_words[] = {[RT_ARG_REF] = "a pointer (REF)", [RT_ARG_INT] = "an int", [RT_ARG_FLOAT] = "a float"};

#define ARG_FORM "a REF, {\"int\": DIM} or {\"float\": x}"

static srt_status parse_launch(P *p, const cJSON *s, RtStep *st) {
    RtPlan *pl = p->plan;
    char *kname;
    TRY(get_str(p, s, "kernel", true, &kname));
    st->kernel = -1;
    for (int k = 0; k < pl->nkernels; k++) {
        if (strcmp(pl->kernels[k].name, kname) == 0) st->kernel = k;
    }
    if (st->kernel < 0) {
        srt_status e = perr(p, "kernel", "'%s' is not in the plan's kernels", kname);
        rt_free(p->ctx, kname);
        return e;
    }
    rt_free(p->ctx, kname);
    TRY(parse_dim3(p, s, "grid", st->grid));
    TRY(parse_dim3(p, s, "block", st->block));
    int64_t threads = 1;
    for (int d = 0; d < 3; d++) {
        if (!symdim_is_const(st->block[d]) || st->block[d].c < 1 || st->block[d].div != 1)
            return perr(p, "block", "block dimensions must be positive constants");
        threads *= st->block[d].c;
    }
    if (threads > 1024) return perr(p, "block", "%lld threads per block (at most 1024)", (long long)threads);
    if (cJSON_GetObjectItemCaseSensitive(s, "smem")) TRY(get_dim(p, s, "smem", &st->smem));
    else st->smem = (RtDim){.div = 1};
    const cJSON *args;
    int n;
    TRY(get_array(p, s, "args", true, &args, &n));
    st->args = rt_alloc(p->ctx, sizeof *st->args * (size_t)(n ? n : 1));
    if (!st->args) return rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
    st->nargs = n;
    if (n > pl->max_args) pl->max_args = n;
    int i = 0;
    for (const cJSON *a = args->child; a; a = a->next, i++) {
        char f[32];
        snprintf(f, sizeof f, "args[%d]", i);
        RtArg *arg = &st->args[i];
        if (!cJSON_IsObject(a)) return perr(p, f, "expected " ARG_FORM ", got %s", plan_json_kind(a));
        const cJSON *iv = cJSON_GetObjectItemCaseSensitive(a, "int");
        const cJSON *fv = cJSON_GetObjectItemCaseSensitive(a, "float");
        if (iv || fv) {
            if (cJSON_GetArraySize(a) != 1) return perr(p, f, "expected " ARG_FORM);
            if (iv) {
                arg->kind = RT_ARG_INT;
                char f2[48];
                snprintf(f2, sizeof f2, "%s.int", f);
                TRY(parse_dim_json(p, f2, iv, &arg->dim));
            } else {
                arg->kind = RT_ARG_FLOAT;
                if (!cJSON_IsNumber(fv)) return perr(p, f, "float: expected a number, got %s", plan_json_kind(fv));
                arg->f = (float)fv->valuedouble;
            }
        } else {
            arg->kind = RT_ARG_REF;
            TRY(parse_ref_json(p, f, a, &arg->ref));
        }
    }
    /* the arguments must be what the kernel takes: on a device anything else is undefined behaviour */
    const RtPlanKernel *pk = &pl->kernels[st->kernel];
    if (n != pk->nparams)
        return perr(p, "args", "step %d passes %d arguments to kernel '%s', which takes %d", p->step, n, pk->name,
                    pk->nparams);
    for (i = 0; i < n; i++) {
        if (st->args[i].kind != pk->params[i]) {
            char f[32];
            snprintf(f, sizeof f, "args[%d]", i);
            return perr(p, f, "step %d passes %s as argument %d of kernel '%s', whose parameter %d is %s", p->step,
                        arg_words[st->args[i].kind], i, pk->name, i, arg_words[pk->params[i]]);
        }
    }
    return SRT_OK;
}

static srt_status parse_op(P *p, const cJSON *s, const char *key, bool *trans) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(s, key);
    if (!j) return perr(p, key, "missing");
    if (cJSON_IsString(j) && (strcmp(j->valuestring, "N") == 0 || strcmp(j->valuestring, "T") == 0)) {
        *trans = j->valuestring[0] == 'T';
        return SRT_OK;
    }
    return perr(p, key, "expected \"N\" or \"T\"");
}

/* "epilogue" and "bias" of a gemm step (cuBLASLt; docs/plan.md). */
static srt_status parse_gemm_epilogue(P *p, const cJSON *s, RtStep *st) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(s, "epilogue");
    int k = e ? (cJSON_IsString(e) ? plan_epilogue_from_name(e->valuestring) : -1) : PLAN_EPI_NONE;
    if (k < 0) return perr(p, "epilogue", "one of none, bias, relu, bias_relu, gelu_tanh, bias_gelu_tanh");
    st->epilogue = (PlanEpilogue)k;
    bool want_bias = plan_epilogue_has_bias(st->epilogue);
    bool has_bias = cJSON_GetObjectItemCaseSensitive(s, "bias") != NULL;
    if (want_bias != has_bias)
        return perr(p, "bias", want_bias ? "epilogue '%s' needs a bias" : "a bias without an epilogue that adds it (%s)",
                    plan_epilogue_name(st->epilogue));
    if (has_bias) TRY(get_ref(p, s, "bias", &st->bias));
    return SRT_OK;
}

static srt_status parse_gemm(P *p, const cJSON *s, RtStep *st) {
    TRY(parse_op(p, s, "transa", &st->transa));
    TRY(parse_op(p, s, "transb", &st->transb));
    TRY(get_dim(p, s, "m", &st->m));
    TRY(get_dim(p, s, "n", &st->n));
    TRY(get_dim(p, s, "k", &st->k));
    TRY(get_float(p, s, "alpha", &st->alpha));
    TRY(get_float(p, s, "beta", &st->beta));
    TRY(get_ref(p, s, "A", &st->A));
    TRY(get_ref(p, s, "B", &st->B));
    TRY(get_ref(p, s, "C", &st->C));
    TRY(get_dim(p, s, "lda", &st->lda));
    TRY(get_dim(p, s, "ldb", &st->ldb));
    TRY(get_dim(p, s, "ldc", &st->ldc));
    TRY(get_dtype(p, s, "atype", false, &st->atype));
    TRY(get_dtype(p, s, "btype", false, &st->btype));
    TRY(get_dtype(p, s, "ctype", false, &st->ctype));
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(s, "compute");
    st->tf32 = c && cJSON_IsString(c) && strcmp(c->valuestring, "f32_fast_tf32") == 0;
    if (c && !st->tf32 && !(cJSON_IsString(c) && strcmp(c->valuestring, "f32") == 0))
        return perr(p, "compute", "\"f32\" (CUBLAS_COMPUTE_32F) or \"f32_fast_tf32\" (CUBLAS_COMPUTE_32F_FAST_TF32)");
    if (st->tf32 && !(st->atype == DT_F32 && st->btype == DT_F32))
        return perr(p, "compute", "\"f32_fast_tf32\" needs fp32 A and B");
    TRY(parse_gemm_epilogue(p, s, st));
    st->batch = (RtDim){.c = 1, .div = 1};
    st->strideA = st->strideB = st->strideC = (RtDim){.div = 1};
    if (cJSON_GetObjectItemCaseSensitive(s, "batch")) TRY(get_dim(p, s, "batch", &st->batch));
    if (cJSON_GetObjectItemCaseSensitive(s, "strideA")) TRY(get_dim(p, s, "strideA", &st->strideA));
    if (cJSON_GetObjectItemCaseSensitive(s, "strideB")) TRY(get_dim(p, s, "strideB", &st->strideB));
    if (cJSON_GetObjectItemCaseSensitive(s, "strideC")) TRY(get_dim(p, s, "strideC", &st->strideC));
    return SRT_OK;
}

/* One program's steps, appended to pl->steps at index base (room was made by the caller). */
static srt_status parse_steps(P *p, const cJSON *arr, int base) {
    RtPlan *pl = p->plan;
    int i = 0;
    for (const cJSON *s = arr->child; s; s = s->next, i++) {
        char saved[256];
        enter(p, saved, "steps", i);
        RtStep *st = &pl->steps[base + i];
        p->step = i;
        if (!cJSON_IsObject(s)) return perr(p, "", "expected an object, got %s", plan_json_kind(s));
        char *op;
        TRY(get_str(p, s, "op", true, &op));
        bool launch = strcmp(op, "launch") == 0, gemm = strcmp(op, "gemm") == 0;
        if (!launch && !gemm) {
            srt_status e = perr(p, "op", "unknown op '%s' (expected \"launch\" or \"gemm\")", op);
            rt_free(p->ctx, op);
            return e;
        }
        rt_free(p->ctx, op);
        TRY(get_i32(p, s, "line", 0, 1 << 30, false, 0, &st->line));
        TRY(get_i32(p, s, "layer", -1, 1 << 20, false, -1, &st->layer));
        TRY(get_i32(p, s, "node", -1, 1 << 30, false, -1, &st->node));
        if (launch) {
            st->op = RT_STEP_LAUNCH;
            TRY(parse_launch(p, s, st));
        } else {
            st->op = RT_STEP_GEMM;
            TRY(parse_gemm(p, s, st));
        }
        leave(p, saved);
    }
    return SRT_OK;
}

static srt_status parse_on_request_programs(P *p, const cJSON *root);

/* "programs": named step lists, each for a range of T; together they cover 1 to the segment. */
static srt_status parse_programs(P *p, const cJSON *root) {
    RtPlan *pl = p->plan;
    pl->loss_program = pl->sample_program = -1; /* every program is a forward one until parse_on_request_programs */
    const cJSON *arr;
    int n;
    TRY(get_array(p, root, "programs", true, &arr, &n));
    if (n == 0) return perr(p, "programs", "no programs");
    int total = 0;
    for (const cJSON *g = arr->child; g; g = g->next) {
        const cJSON *steps = cJSON_IsObject(g) ? cJSON_GetObjectItemCaseSensitive(g, "steps") : NULL;
        total += cJSON_IsArray(steps) ? cJSON_GetArraySize(steps) : 0;
    }
    pl->programs = rt_alloc(p->ctx, sizeof *pl->programs * (size_t)n);
    pl->steps = rt_alloc(p->ctx, sizeof *pl->steps * (size_t)(total ? total : 1));
    if (!pl->programs || !pl->steps) return rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
    pl->nprograms = n;
    pl->nsteps = total;
    int i = 0, base = 0;
    for (const cJSON *g = arr->child; g; g = g->next, i++) {
        char saved[256];
        enter(p, saved, "programs", i);
        RtProgram *pg = &pl->programs[i];
        if (!cJSON_IsObject(g)) return perr(p, "", "expected an object, got %s", plan_json_kind(g));
        TRY(get_str(p, g, "name", true, &pg->name));
        if (!pg->name[0]) return perr(p, "name", "empty program name");
        for (int j = 0; j < i; j++)
            if (strcmp(pl->programs[j].name, pg->name) == 0) return perr(p, "name", "'%s' is listed twice", pg->name);
        const cJSON *t, *steps;
        int nt, ns;
        TRY(get_array(p, g, "t", true, &t, &nt));
        if (nt != 2 || !cJSON_IsNumber(t->child) || !cJSON_IsNumber(t->child->next))
            return perr(p, "t", "expected [first, last], the token counts the program runs");
        pg->tmin = (int)t->child->valuedouble;
        pg->tmax = (int)t->child->next->valuedouble;
        if (t->child->valuedouble != pg->tmin || t->child->next->valuedouble != pg->tmax || pg->tmin < 1 ||
            pg->tmax < pg->tmin || pg->tmax > pl->segment)
            return perr(p, "t", "expected [first, last] with 1 <= first <= last <= %d (the segment)", pl->segment);
        TRY(get_array(p, g, "steps", true, &steps, &ns));
        if (ns == 0) return perr(p, "steps", "no steps");
        pg->first = base;
        pg->nsteps = ns;
        TRY(parse_steps(p, steps, base));
        base += ns;
        leave(p, saved);
    }
    TRY(parse_on_request_programs(p, root));
    pl->load_program = -1; /* the load program (plan_load_program_check has its rules): run once per weights load */
    pl->slide_program = -1; /* run when a segment ends: a PIA cache keeps its last rows */
    for (int k = 0; k < n; k++) {
        bool load = strcmp(pl->programs[k].name, PLAN_LOAD_PROGRAM) == 0;
        bool slide = strcmp(pl->programs[k].name, PLAN_SLIDE_PROGRAM) == 0;
        if (load) pl->load_program = k;
        if (slide) pl->slide_program = k;
        pl->programs[k].on_request |= load || slide;
    }
    if ((pl->slide_program >= 0) != (pl->keep >= 0))
        return perr(p, "programs", "a state entry with \"keep\" and a \"" PLAN_SLIDE_PROGRAM "\" program come together "
                    "(a plan from an older shortc slid in its forward: emit the .cu again)");
    for (int T = 1; T <= pl->segment; T++)
        if (!rt_plan_program(pl, T)) return perr(p, "programs", "no program runs %d tokens (T 1 to %d must be covered)", T, pl->segment);
    /* what srt_model_info reports per forward: the program of a whole segment */
    const RtProgram *full = rt_plan_program(pl, pl->segment);
    for (int k = full->first; k < full->first + full->nsteps; k++) {
        pl->nlaunches += pl->steps[k].op == RT_STEP_LAUNCH;
        pl->ngemms += pl->steps[k].op == RT_STEP_GEMM;
    }
    return SRT_OK;
}

/*
 * An optional program run on request, never by rt_plan_program, and the object of the same name saying where its
 * inputs and outputs lie in the arena (keys[i] -> *refs[i], bytes[i] each): "loss" (targets and per-row losses)
 * and "sample" (the parameter block). Object and program come together; the program runs T 1 to the segment.
 * *index: the program's, -1 when there is none.
 */
static srt_status parse_on_request(P *p, const cJSON *root, const char *name, int n, const char *const *keys,
                                   RtRef *const *refs, const size_t *bytes, int *index) {
    RtPlan *pl = p->plan;
    *index = -1;
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, name);
    for (int i = 0; i < pl->nprograms; i++)
        if (strcmp(pl->programs[i].name, name) == 0) *index = i;
    if (!obj && *index < 0) return SRT_OK;
    if (!obj || *index < 0)
        return perr(p, name, "a \"%s\" object and a program named \"%s\" come together; the plan has only %s", name,
                    name, obj ? "the object" : "the program");
    RtProgram *pg = &pl->programs[*index];
    if (pg->tmin != 1 || pg->tmax != pl->segment)
        return perr(p, name, "program \"%s\" must run T 1 to %d (the segment)", name, pl->segment);
    pg->on_request = true;
    TRY(get_object(p, root, name, &obj));
    char saved[256];
    enter(p, saved, name, -1);
    for (int k = 0; k < n; k++) {
        TRY(get_ref(p, obj, keys[k], refs[k]));
        if (refs[k]->kind != RT_REF_ARENA || (size_t)refs[k]->offset + bytes[k] > pl->arena_bytes)
            return perr(p, keys[k], "%zu bytes must lie in the %zu-byte arena", bytes[k], pl->arena_bytes);
    }
    leave(p, saved);
    return SRT_OK;
}

/* The programs run on request: "loss" and "sample". */
static srt_status parse_on_request_programs(P *p, const cJSON *root) {
    RtPlan *pl = p->plan;
    size_t rows = 4u * (size_t)pl->segment, params = sizeof(RtSampleParams);
    static const char *const loss_keys[] = {"targets", "nll"}, *const sample_keys[] = {"params"};
    RtRef *loss_refs[] = {&pl->loss_targets, &pl->loss_nll}, *sample_refs[] = {&pl->sample_params};
    size_t loss_bytes[] = {rows, rows};
    TRY(parse_on_request(p, root, "loss", 2, loss_keys, loss_refs, loss_bytes, &pl->loss_program));
    return parse_on_request(p, root, "sample", 1, sample_keys, sample_refs, &params, &pl->sample_program);
}

/* "batch" (optional): batched decode steps of up to "max" sequences (the B scalar's maximum, at most a segment),
 * their table at "sequences" in the arena; only with a "decode" program. */
static srt_status parse_batch(P *p, const cJSON *root) {
    RtPlan *pl = p->plan;
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "batch");
    if (!obj) return SRT_OK; /* every decode step runs one sequence */
    pl->decode_program = -1;
    for (int i = 0; i < pl->nprograms; i++)
        if (strcmp(pl->programs[i].name, "decode") == 0) pl->decode_program = i;
    if (pl->decode_program < 0) return perr(p, "batch", "batched decode steps need a program named \"decode\"");
    TRY(get_object(p, root, "batch", &obj));
    char saved[256];
    enter(p, saved, "batch", -1);
    TRY(get_i32(p, obj, "max", 1, pl->segment, true, 0, &pl->decode_batch));
    if (pl->scalar_min[3] != 0 || pl->scalar_max[3] != pl->decode_batch)
        return perr(p, "max", "%d sequences, but the scalar B ranges over %lld to %lld (expected 0 to %d)", pl->decode_batch,
                    (long long)pl->scalar_min[3], (long long)pl->scalar_max[3], pl->decode_batch);
    TRY(get_ref(p, obj, "sequences", &pl->seq_table));
    if (pl->seq_table.kind != RT_REF_ARENA ||
        (size_t)pl->seq_table.offset + 8u * (size_t)pl->decode_batch > pl->arena_bytes)
        return perr(p, "sequences", "%d positions and sequence indices must lie in the %zu-byte arena", pl->decode_batch,
                    pl->arena_bytes);
    leave(p, saved);
    return SRT_OK;
}

static srt_status parse_root(P *p, const cJSON *root) {
    RtPlan *pl = p->plan;
    if (!cJSON_IsObject(root)) return perr(p, "", "expected a JSON object, got %s", plan_json_kind(root));
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, SHORTC_PLAN_FORMAT) != 0)
        return perr(p, "format", "expected \"" SHORTC_PLAN_FORMAT "\"");
    int version;
    TRY(get_i32(p, root, "version", 0, 1 << 20, true, 0, &version));
    if (version != SHORTC_PLAN_VERSION) return perr(p, "version", "%s", plan_version_message(version));
    TRY(get_str(p, root, "model", true, &pl->model));
    TRY(get_str(p, root, "source", false, &pl->source));
    const cJSON *cfg;
    TRY(get_object(p, root, "config", &cfg));
    {
        char saved[256];
        enter(p, saved, "config", -1);
        TRY(get_i32(p, cfg, "vocab", 1, 1 << 28, true, 0, &pl->vocab));
        TRY(get_i32(p, cfg, "segment", 1, 1 << 24, true, 0, &pl->segment));
        TRY(get_i32(p, cfg, "d_model", 1, 1 << 24, false, 0, &pl->d_model));
        TRY(get_i32(p, cfg, "n_heads", 1, 1 << 20, false, 1, &pl->n_heads));
        TRY(get_i32(p, cfg, "n_layers", 0, 1 << 20, false, 0, &pl->n_layers));
        TRY(get_i32(p, cfg, "overlap", 0, 1 << 24, false, 0, &pl->overlap));
        char *norm = NULL, *place = NULL;
        srt_status st = get_str(p, cfg, "norm", false, &norm);
        if (st == SRT_OK) st = get_str(p, cfg, "norm_place", false, &place);
        pl->pre_layernorm = st == SRT_OK && strcmp(norm, "layernorm") == 0 && strcmp(place, "pre") == 0;
        rt_free(p->ctx, norm);
        rt_free(p->ctx, place);
        TRY(st);
        leave(p, saved);
    }
    int64_t ab;
    TRY(get_int(p, root, "arena_bytes", 1, (int64_t)1 << 42, true, 0, &ab));
    pl->arena_bytes = (size_t)ab;
    /* scalars, constants, state and weights first: REFs and DIMs are checked against them */
    TRY(parse_scalars(p, root));
    TRY(parse_constants(p, root));
    TRY(parse_state(p, root));
    TRY(parse_derived(p, root));
    TRY(parse_weights(p, root));
    TRY(parse_kernels(p, root));
    TRY(get_ref(p, root, "tokens", &pl->tokens));
    const cJSON *lg;
    TRY(get_object(p, root, "logits", &lg));
    {
        char saved[256];
        enter(p, saved, "logits", -1);
        static const char *const keys[] = {"arena", "weight", "state", "offset", "dtype", "shape", NULL};
        TRY(only_keys(p, "", lg, keys, "a REF with \"dtype\" and \"shape\""));
        DType dt;
        TRY(get_dtype(p, lg, "dtype", false, &dt));
        if (dt != DT_F32) return perr(p, "dtype", "logits must be f32");
        const cJSON *shape;
        int n;
        TRY(get_array(p, lg, "shape", true, &shape, &n));
        RtDim rows, cols;
        if (n != 2) return perr(p, "shape", "expected [{\"t\": 1}, vocab]");
        TRY(parse_dim_json(p, "shape[0]", shape->child, &rows));
        TRY(parse_dim_json(p, "shape[1]", shape->child->next, &cols));
        if (rows.t != 1 || rows.p || rows.fill || rows.b || rows.c != 0 || rows.div != 1 || !symdim_is_const(cols) ||
            cols.c != pl->vocab || cols.div != 1)
            return perr(p, "shape", "expected [{\"t\": 1}, %d] (T rows of vocab floats)", pl->vocab);
        leave(p, saved);
    }
    /* parse the REF part with the logits object itself (extra keys were checked above) */
    cJSON *ref = cJSON_Duplicate(lg, 1);
    if (!ref) return rt_error(p->ctx, SRT_ERR_NOMEM, "out of memory reading the plan");
    cJSON_DeleteItemFromObjectCaseSensitive(ref, "dtype");
    cJSON_DeleteItemFromObjectCaseSensitive(ref, "shape");
    srt_status st = parse_ref_json(p, "logits", ref, &pl->logits);
    cJSON_Delete(ref);
    TRY(st);
    /* the token and logits buffers must hold a whole segment */
    if (pl->tokens.kind != RT_REF_ARENA || pl->logits.kind != RT_REF_ARENA)
        return perr(p, "tokens", "tokens and logits must live in the activation arena");
    if ((size_t)pl->tokens.offset + 4u * (size_t)pl->segment > pl->arena_bytes)
        return perr(p, "tokens", "%d token ids at offset %lld overrun the %zu-byte arena", pl->segment,
                    (long long)pl->tokens.offset, pl->arena_bytes);
    if ((size_t)pl->logits.offset + 4u * (size_t)pl->segment * (size_t)pl->vocab > pl->arena_bytes)
        return perr(p, "logits", "%d x %d logits at offset %lld overrun the %zu-byte arena", pl->segment, pl->vocab,
                    (long long)pl->logits.offset, pl->arena_bytes);
    TRY(parse_programs(p, root));
    return parse_batch(p, root);
}

srt_status rt_plan_parse(srt_context *ctx, const char *what, const char *json, size_t len, RtPlan *plan) {
    memset(plan, 0, sizeof *plan);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root) {
        size_t at = end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
        int line = 1;
        for (size_t i = 0; i < at; i++) line += json[i] == '\n';
        char near[40] = {0};
        size_t k = 0;
        for (size_t i = at; i < len && k < 24 && json[i] != '\n'; i++) near[k++] = json[i];
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: plan: invalid JSON at line %d of the plan (byte %zu) near '%s'", what, line,
                        at, near);
    }
    P p = {.ctx = ctx, .what = what, .plan = plan};
    srt_status st = parse_root(&p, root);
    char why[320];
    if (st == SRT_OK && !plan_schema_check(root, why, sizeof why)) /* what the checks above let through */
        st = rt_error(ctx, SRT_ERR_FORMAT, "%s: plan: %s", what, why);
    cJSON_Delete(root);
    if (st != SRT_OK) rt_plan_free(ctx, plan);
    return st;
}

void rt_plan_free(srt_context *ctx, RtPlan *p) {
    rt_free(ctx, p->model);
    rt_free(ctx, p->source);
    for (int i = 0; i < p->nweights; i++) rt_free(ctx, p->weights[i].name);
    rt_free(ctx, p->weights);
    for (int i = 0; i < p->nstate; i++) rt_free(ctx, p->state[i].name);
    rt_free(ctx, p->state);
    for (int i = 0; i < p->nconsts; i++) {
        rt_free(ctx, p->consts[i].name);
        rt_free(ctx, p->consts[i].data);
    }
    rt_free(ctx, p->consts);
    for (int i = 0; i < p->nderived; i++) rt_free(ctx, p->derived[i].name);
    rt_free(ctx, p->derived);
    for (int i = 0; i < p->nprograms; i++) rt_free(ctx, p->programs[i].name);
    rt_free(ctx, p->programs);
    for (int i = 0; i < p->nkernels; i++) {
        rt_free(ctx, p->kernels[i].name);
        rt_free(ctx, p->kernels[i].params);
    }
    rt_free(ctx, p->kernels);
    for (int i = 0; i < p->nsteps; i++) rt_free(ctx, p->steps[i].args);
    rt_free(ctx, p->steps);
    memset(p, 0, sizeof *p);
}
