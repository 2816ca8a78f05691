/*
 * weights.c — safetensors reading and binding weights to a plan.
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes of
 * JSON ({"name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]},
 * optional "__metadata__"}), then the data section; offsets are relative to
 * it. The file is mmap'd and validated as a whole before any tensor is used:
 * header length, JSON, every dtype, shape x dtype size = byte length, offsets
 * inside the data section and no two tensors overlapping.
 *
 * Binding looks every plan weight up by name (with or without the
 * "transformer." prefix HF checkpoints carry), checks the file shape,
 * converts F32/F16/BF16 to fp32, transposes 2-D tensors whose plan entry says
 * so, and rounds to the stored dtype. NaN and infinite values (in the file,
 * or made by rounding to f16) are refused, naming the tensor and the first
 * bad index, unless the caller allows them. A tensor of the file that no
 * weight reads (but for HF GPT-2's attention-mask buffers) is refused too,
 * listing every such tensor and what they say about the checkpoint (more
 * layers than the model, an untied lm_head), unless the caller allows them:
 * a checkpoint of another model must not run silently. A config.json beside
 * the file (a HuggingFace checkpoint) has its sizes checked against the plan. The result — fp32 values exactly
 * representable in the stored dtype — is what every backend computes with:
 * the device backends encode it (exactly) into the stored dtype, the
 * reference backend uses it as is.
 */
#include "rt_internal.h"

#include "fileio.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Encoding (the conversions are in rt_half.h)                         */
/* ------------------------------------------------------------------ */

void rt_encode(DType t, const float *src, size_t n, void *dst) {
    uint16_t *d16 = dst;
    switch (t) {
    case DT_F16:
        for (size_t i = 0; i < n; i++) d16[i] = rt_f32_to_f16(src[i]);
        break;
    case DT_BF16:
        for (size_t i = 0; i < n; i++) d16[i] = rt_f32_to_bf16(src[i]);
        break;
    default:
        memcpy(dst, src, n * 4);
        break;
    }
}

/* ------------------------------------------------------------------ */
/* Safetensors                                                         */
/* ------------------------------------------------------------------ */

static const struct {
    const char *name;
    int size;
} st_dtypes[ST_COUNT] = {
    [ST_F64] = {"F64", 8},   [ST_F32] = {"F32", 4},   [ST_F16] = {"F16", 2},         [ST_BF16] = {"BF16", 2},
    [ST_I64] = {"I64", 8},   [ST_I32] = {"I32", 4},   [ST_I16] = {"I16", 2},         [ST_I8] = {"I8", 1},
    [ST_U8] = {"U8", 1},     [ST_BOOL] = {"BOOL", 1}, [ST_U16] = {"U16", 2},         [ST_U32] = {"U32", 4},
    [ST_U64] = {"U64", 8},   [ST_F8_E4M3] = {"F8_E4M3", 1}, [ST_F8_E5M2] = {"F8_E5M2", 1},
};

const char *rt_st_dtype_name(RtStDtype t) { return (unsigned)t < ST_COUNT ? st_dtypes[t].name : "?"; }

#define ST_MAX_HEADER (100u << 20) /* the format's own limit */

/* Largest integer a JSON number (a double) holds exactly. */
#define ST_MAX_INT 9007199254740992.0 /* 2^53 */

/*
 * A shape entry or byte offset: a non-negative integer no larger than 2^53.
 * Otherwise SRT_ERR_FORMAT naming the tensor and the field (e.g. "data_offsets[0]").
 */
static srt_status st_uint(srt_context *ctx, const char *what, const char *name, const char *field, int i, const cJSON *j,
                          uint64_t *out) {
    *out = 0; /* defined on every path (keeps -O3's maybe-uninitialized quiet) */
    if (!cJSON_IsNumber(j))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': %s[%d] is not a number", what, name, field, i);
    double v = j->valuedouble;
    if (!(v >= 0 && v <= ST_MAX_INT && v == floor(v)))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': %s[%d] is %.17g, not a non-negative integer <= 2^53", what,
                        name, field, i, v);
    *out = (uint64_t)v;
    return SRT_OK;
}

/* "[2, 3]": a shape for messages. */
static void fmt_shape(char *buf, size_t len, int rank, const int64_t *shape) {
    int n = snprintf(buf, len, "[");
    for (int i = 0; i < rank && n < (int)len - 24; i++) n += snprintf(buf + n, len - (size_t)n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    snprintf(buf + n, len - (size_t)n, "]");
}

/* F32, F16 and BF16 are the dtypes weights can be converted from (bind_one). */
static bool st_dtype_loadable(RtStDtype t) { return t == ST_F32 || t == ST_F16 || t == ST_BF16; }

static srt_status st_parse_tensor(srt_context *ctx, const char *what, const cJSON *item, size_t data_len,
                                  RtStTensor *t) {
    const char *name = item->string;
    if (!cJSON_IsObject(item))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': expected an object with dtype, shape and data_offsets", what,
                        name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dt)) return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': missing or non-string \"dtype\"", what, name);
    t->dtype = ST_COUNT;
    for (int i = 0; i < ST_COUNT; i++) {
        if (strcmp(dt->valuestring, st_dtypes[i].name) == 0) t->dtype = (RtStDtype)i;
    }
    if (t->dtype == ST_COUNT)
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': unknown dtype '%s'", what, name, dt->valuestring);
    if (!cJSON_IsArray(shape)) return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': missing or non-array \"shape\"", what, name);
    int rank = cJSON_GetArraySize(shape);
    if (rank > RT_ST_MAX_RANK)
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': rank %d is more than %d", what, name, rank, RT_ST_MAX_RANK);
    t->rank = rank;
    unsigned __int128 count = 1;
    int d = 0;
    for (const cJSON *e = shape->child; e; e = e->next, d++) {
        uint64_t v;
        srt_status s = st_uint(ctx, what, name, "shape", d, e, &v);
        if (s != SRT_OK) return s;
        t->shape[d] = (int64_t)v;
        count *= v;
        if (count > ((unsigned __int128)1 << 62))
            return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': shape has too many elements", what, name);
    }
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 || !cJSON_IsNumber(offs->child) ||
        !cJSON_IsNumber(offs->child->next))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': \"data_offsets\" must be [begin, end]", what, name);
    uint64_t b, e;
    srt_status s = st_uint(ctx, what, name, "data_offsets", 0, offs->child, &b);
    if (s == SRT_OK) s = st_uint(ctx, what, name, "data_offsets", 1, offs->child->next, &e);
    if (s != SRT_OK) return s;
    if (e < b)
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] are not an ordered pair of byte offsets",
                        what, name, (unsigned long long)b, (unsigned long long)e);
    if (e > (uint64_t)data_len)
        return rt_error(ctx, SRT_ERR_FORMAT,
                        "%s: tensor '%s': data_offsets [%llu, %llu] extend past the end of the %zu-byte data section "
                        "(truncated file?)",
                        what, name, (unsigned long long)b, (unsigned long long)e, data_len);
    t->begin = (size_t)b;
    t->end = (size_t)e;
    unsigned __int128 want = count * (unsigned)st_dtypes[t->dtype].size;
    if (want != (unsigned __int128)(t->end - t->begin)) {
        char sh[160];
        fmt_shape(sh, sizeof sh, rank, t->shape);
        /* an unsupported dtype is the first thing to fix: say so before the size */
        if (!st_dtype_loadable(t->dtype))
            return rt_error(ctx, SRT_ERR_FORMAT,
                            "%s: tensor '%s': dtype %s is not supported (supported: F32, F16, BF16); also, shape %s of %s "
                            "needs %llu bytes but data_offsets span %zu",
                            what, name, st_dtypes[t->dtype].name, sh, st_dtypes[t->dtype].name, (unsigned long long)want,
                            t->end - t->begin);
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensor '%s': shape %s of %s needs %llu bytes but data_offsets span %zu",
                        what, name, sh, st_dtypes[t->dtype].name, (unsigned long long)want, t->end - t->begin);
    }
    t->name = rt_strdup(ctx, name);
    return t->name ? SRT_OK : rt_error(ctx, SRT_ERR_NOMEM, "out of memory reading %s", what);
}

static int cmp_begin(const void *a, const void *b) {
    const RtStTensor *const *x = a, *const *y = b;
    if ((*x)->begin != (*y)->begin) return (*x)->begin < (*y)->begin ? -1 : 1;
    return (*x)->end < (*y)->end ? -1 : (*x)->end > (*y)->end;
}

/* Whether two entries name the same weight (equal without the "transformer." prefix). */
static bool same_weight(const RtStTensor *a, const RtStTensor *b) {
    return strcmp(rt_strip_hf_prefix(a->name), rt_strip_hf_prefix(b->name)) == 0;
}

/* Orders tensors by name without the "transformer." prefix, then by position in the header. */
static int cmp_name(const void *a, const void *b) {
    const RtStTensor *const *x = a, *const *y = b;
    int c = strcmp(rt_strip_hf_prefix((*x)->name), rt_strip_hf_prefix((*y)->name));
    return c ? c : (*x < *y ? -1 : *x > *y);
}

/* Builds st->by_name and rejects names that are equal, also without the "transformer." prefix (cJSON keeps
 * duplicates), in O(n log n). Reports the pair the header's order meets first: the smallest second entry. */
static srt_status st_index_names(srt_context *ctx, const char *what, RtSafetensors *st) {
    size_t n = (size_t)st->ntensors;
    if (!(st->by_name = rt_alloc(ctx, sizeof *st->by_name * (n ? n : 1))))
        return rt_error(ctx, SRT_ERR_NOMEM, "out of memory reading %s", what);
    for (size_t i = 0; i < n; i++) st->by_name[i] = &st->tensors[i];
    qsort(st->by_name, n, sizeof *st->by_name, cmp_name);
    const RtStTensor *first = NULL, *second = NULL; /* the reported pair */
    for (size_t i = 1; i < n; i++) {
        const RtStTensor *a = st->by_name[i - 1], *b = st->by_name[i];
        if (i >= 2 && same_weight(st->by_name[i - 2], a)) continue; /* b is a third entry: not its group's second */
        if (same_weight(a, b) && (!second || b < second)) {
            first = a;
            second = b;
        }
    }
    if (!second) return SRT_OK;
    if (strcmp(first->name, second->name) == 0)
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: duplicate tensor name '%s'", what, first->name);
    return rt_error(ctx, SRT_ERR_FORMAT, "%s: tensors '%s' and '%s' are the same weight (names are matched "
                    "with and without the \"transformer.\" prefix): keep one", what, first->name, second->name);
}

static srt_status st_parse(srt_context *ctx, const char *what, const unsigned char *bytes, size_t len, RtSafetensors *st) {
    if (len < 8)
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: %zu bytes is too short for a safetensors file (8-byte header length missing)",
                        what, len);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | bytes[i];
    if (hlen > len - 8)
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: header length %llu is beyond the end of the file (%zu bytes): truncated or not safetensors",
                        what, (unsigned long long)hlen, len);
    if (hlen > ST_MAX_HEADER)
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: header length %llu exceeds the 100 MB limit", what, (unsigned long long)hlen);
    if (hlen < 2 || bytes[8] != '{')
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: the header is not a JSON object (does not start with '{')", what);
    char *text = rt_strndup(ctx, (const char *)bytes + 8, (size_t)hlen);
    if (!text) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory reading %s", what);
    if (strlen(text) != hlen) {
        rt_free(ctx, text);
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: the header contains a NUL byte", what);
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1); /* trailing padding must be whitespace */
    if (!root || !cJSON_IsObject(root)) {
        size_t at = end ? (size_t)(end - text) : 0;
        cJSON_Delete(root);
        rt_free(ctx, text);
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: the header is not valid JSON (error at header byte %zu)", what, at);
    }
    st->data = bytes + 8 + hlen;
    st->data_len = len - 8 - (size_t)hlen;
    int n = 0;
    for (const cJSON *c = root->child; c; c = c->next) n += strcmp(c->string, "__metadata__") != 0;
    st->tensors = rt_alloc(ctx, sizeof *st->tensors * (size_t)(n ? n : 1));
    RtStTensor **order = rt_alloc(ctx, sizeof *order * (size_t)(n ? n : 1));
    srt_status s = SRT_OK;
    if (!st->tensors || !order) s = rt_error(ctx, SRT_ERR_NOMEM, "out of memory reading %s", what);
    for (const cJSON *c = root->child; c && s == SRT_OK; c = c->next) {
        if (strcmp(c->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(c)) s = rt_error(ctx, SRT_ERR_FORMAT, "%s: \"__metadata__\" must be an object", what);
            continue;
        }
        s = st_parse_tensor(ctx, what, c, st->data_len, &st->tensors[st->ntensors]);
        if (s == SRT_OK) {
            order[st->ntensors] = &st->tensors[st->ntensors];
            st->ntensors++;
        }
    }
    if (s == SRT_OK) s = st_index_names(ctx, what, st);
    if (s == SRT_OK) {
        /* byte ranges disjoint (after the names: a name listed twice is reported as such, not as an overlap) */
        qsort(order, (size_t)st->ntensors, sizeof *order, cmp_begin);
        for (int i = 1; i < st->ntensors && s == SRT_OK; i++) {
            if (order[i]->begin < order[i - 1]->end)
                s = rt_error(ctx, SRT_ERR_FORMAT, "%s: tensors '%s' [%zu, %zu) and '%s' [%zu, %zu) overlap", what,
                             order[i - 1]->name, order[i - 1]->begin, order[i - 1]->end, order[i]->name, order[i]->begin,
                             order[i]->end);
        }
    }
    rt_free(ctx, order);
    cJSON_Delete(root);
    rt_free(ctx, text);
    return s;
}

srt_status rt_st_open_memory(srt_context *ctx, const char *what, const void *bytes, size_t len, RtSafetensors *st) {
    memset(st, 0, sizeof *st);
    st->ctx = ctx;
    if (!(st->path = rt_strdup(ctx, what))) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    srt_status s = st_parse(ctx, what, bytes, len, st);
    if (s != SRT_OK) rt_st_close(st);
    return s;
}

/* Checks one caller tensor (as st_parse_tensor checks a header entry) and fills *t, placed at offset at. */
static srt_status tensor_entry(srt_context *ctx, const srt_tensor *in, int i, size_t at, RtStTensor *t) {
    const char *what = "srt_model_load_tensors";
    if (!in->name || !*in->name) return rt_error(ctx, SRT_ERR_INVALID, "%s: tensor %d has no name", what, i);
    const char *name = in->name;
    t->dtype = ST_COUNT;
    for (int k = 0; in->dtype && k < ST_COUNT; k++)
        if (strcmp(in->dtype, st_dtypes[k].name) == 0) t->dtype = (RtStDtype)k;
    if (t->dtype == ST_COUNT || !st_dtype_loadable(t->dtype))
        return rt_error(ctx, SRT_ERR_WEIGHTS, "%s: tensor '%s': dtype '%s' is not supported (supported: F32, F16, BF16)",
                        what, name, in->dtype ? in->dtype : "(none)");
    if (in->rank < 0 || in->rank > RT_ST_MAX_RANK || (in->rank > 0 && !in->shape))
        return rt_error(ctx, SRT_ERR_INVALID, "%s: tensor '%s': rank %d is not 0 to %d with a shape", what, name,
                        in->rank, RT_ST_MAX_RANK);
    unsigned __int128 count = 1;
    for (int d = 0; d < in->rank; d++) {
        if (in->shape[d] < 0) return rt_error(ctx, SRT_ERR_INVALID, "%s: tensor '%s': negative dimension", what, name);
        t->shape[d] = in->shape[d];
        count *= (uint64_t)in->shape[d];
        if (count > ((unsigned __int128)1 << 62))
            return rt_error(ctx, SRT_ERR_INVALID, "%s: tensor '%s': shape has too many elements", what, name);
    }
    t->rank = in->rank;
    unsigned __int128 want = count * (unsigned)st_dtypes[t->dtype].size;
    if (want != in->nbytes || (in->nbytes && !in->data)) {
        char sh[160];
        fmt_shape(sh, sizeof sh, in->rank, t->shape);
        return rt_error(ctx, SRT_ERR_INVALID, "%s: tensor '%s': shape %s of %s needs %llu bytes, given %zu", what, name,
                        sh, st_dtypes[t->dtype].name, (unsigned long long)want, in->nbytes);
    }
    t->begin = at;
    t->end = at + in->nbytes;
    t->name = rt_strdup(ctx, name);
    return t->name ? SRT_OK : rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
}

srt_status rt_st_from_tensors(srt_context *ctx, const srt_tensor *tensors, int n, RtSafetensors *st) {
    memset(st, 0, sizeof *st);
    st->ctx = ctx;
    if (n < 0 || (n > 0 && !tensors))
        return rt_error(ctx, SRT_ERR_INVALID, "srt_model_load_tensors: %d tensors at %p", n, (const void *)tensors);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (tensors[i].nbytes > SIZE_MAX - total)
            return rt_error(ctx, SRT_ERR_INVALID, "srt_model_load_tensors: the tensors' sizes overflow");
        total += tensors[i].nbytes;
    }
    st->path = rt_strdup(ctx, "tensors");
    st->tensors = rt_alloc(ctx, sizeof *st->tensors * (size_t)(n ? n : 1));
    st->owned = rt_alloc(ctx, total ? total : 1);
    srt_status s = st->path && st->tensors && st->owned ? SRT_OK : rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    size_t at = 0;
    for (int i = 0; i < n && s == SRT_OK; i++) {
        if ((s = tensor_entry(ctx, &tensors[i], i, at, &st->tensors[i])) != SRT_OK) break;
        if (tensors[i].nbytes) memcpy(st->owned + at, tensors[i].data, tensors[i].nbytes);
        at += tensors[i].nbytes;
        st->ntensors++;
    }
    st->data = st->owned;
    st->data_len = total;
    if (s == SRT_OK) s = st_index_names(ctx, "srt_model_load_tensors", st);
    if (s != SRT_OK) rt_st_close(st);
    return s;
}

srt_status rt_st_open(srt_context *ctx, const char *path, RtSafetensors *st) {
    memset(st, 0, sizeof *st);
    st->ctx = ctx;
    struct stat sb;
    const char *why;
    int fd = fio_open_regular(path, &sb, &why);
    if (fd < 0) return rt_error(ctx, SRT_ERR_IO, "cannot open weights '%s': %s", path, why);
    size_t len = (size_t)sb.st_size;
    void *map = NULL;
    if (len > 0) {
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int e = errno;
            close(fd);
            return rt_error(ctx, SRT_ERR_IO, "cannot map weights '%s': %s", path, strerror(e));
        }
    }
    close(fd);
    st->map = map;
    st->map_len = len;
    if (!(st->path = rt_strdup(ctx, path))) {
        rt_st_close(st);
        return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    }
    srt_status s = st_parse(ctx, path, map ? map : (const void *)"", len, st);
    if (s != SRT_OK) rt_st_close(st);
    return s;
}

void rt_st_close(RtSafetensors *st) {
    if (!st->ctx) return;
    for (int i = 0; i < st->ntensors; i++) rt_free(st->ctx, st->tensors[i].name);
    rt_free(st->ctx, st->tensors);
    rt_free(st->ctx, st->by_name);
    rt_free(st->ctx, st->path);
    rt_free(st->ctx, st->owned);
    if (st->map) munmap(st->map, st->map_len);
    memset(st, 0, sizeof *st);
}

const RtStTensor *rt_st_find(const RtSafetensors *st, const char *name) {
    const char *bare = rt_strip_hf_prefix(name);
    size_t lo = 0, hi = (size_t)st->ntensors; /* binary search of by_name: names are unique without the prefix */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(rt_strip_hf_prefix(st->by_name[mid]->name), bare);
        if (c == 0) return st->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Binding                                                             */
/* ------------------------------------------------------------------ */

/* file-order fp32 -> stored order, rounded to the stored dtype */
static void store(const RtPlanWeight *w, const float *file, float *out) {
    if (w->transpose) {
        size_t a = (size_t)w->file_shape[0], b = (size_t)w->file_shape[1];
        for (size_t i = 0; i < a; i++)
            for (size_t j = 0; j < b; j++) out[j * a + i] = round_to_dtype(file[i * b + j], w->round);
    } else {
        for (size_t i = 0; i < w->count; i++) out[i] = round_to_dtype(file[i], w->round);
    }
}

static srt_status alloc_vals(srt_context *ctx, const RtPlan *plan, float **vals, float **tmp) {
    size_t maxc = 1;
    *tmp = NULL;
    for (int i = 0; i < plan->nweights; i++) vals[i] = NULL;
    for (int i = 0; i < plan->nweights; i++) {
        if (plan->weights[i].count > maxc) maxc = plan->weights[i].count;
        if (!(vals[i] = rt_alloc(ctx, plan->weights[i].count * sizeof(float))))
            return rt_error(ctx, SRT_ERR_NOMEM, "out of memory for weight '%s' (%zu floats)", plan->weights[i].name,
                            plan->weights[i].count);
    }
    *tmp = rt_alloc(ctx, maxc * sizeof(float));
    return *tmp ? SRT_OK : rt_error(ctx, SRT_ERR_NOMEM, "out of memory converting weights");
}

/* SRT_ERR_WEIGHTS naming the tensor and the first element (flat index in the file's row-major order) that is
 * NaN or infinite, or that overflows when rounded to the stored dtype. */
static srt_status check_finite(srt_context *ctx, const RtPlanWeight *w, const char *path, const float *v) {
    for (size_t i = 0; i < w->count; i++) {
        char what[96];
        if (!isfinite(v[i])) snprintf(what, sizeof what, "%s", isnan(v[i]) ? "NaN" : v[i] > 0 ? "+Inf" : "-Inf");
        else if (!isfinite(round_to_dtype(v[i], w->round)))
            snprintf(what, sizeof what, "%g, which overflows its stored dtype %s,", v[i], dtype_name(w->round));
        else continue;
        return rt_error(ctx, SRT_ERR_WEIGHTS,
                        "weight '%s' in %s holds %s at index %zu (refused; --allow-nonfinite-weights, or "
                        "srt_options.allow_nonfinite_weights, accepts it)",
                        w->name, path, what, i);
    }
    return SRT_OK;
}

/* Binds plan weight w from st into out (stored order and dtype); marks the file tensor it read in used. */
static srt_status bind_one(srt_context *ctx, const RtPlanWeight *w, const RtSafetensors *st, bool allow_nonfinite,
                           float *tmp, float *out, bool *used) {
    const RtStTensor *t = rt_st_find(st, w->name);
    if (!t) {
        if (w->optional) return SRT_OK; /* stays zero */
        bool untied = strcmp(w->name, "lm_head.weight") == 0 && rt_st_find(st, "wte.weight");
        return rt_error(ctx, SRT_ERR_WEIGHTS, "weight '%s' is missing from %s%s", w->name, st->path,
                        untied ? " (the model's output projection is untied, `embedding untied`; the checkpoint's "
                                 "looks tied to wte.weight)" : "");
    }
    used[t - st->tensors] = true;
    bool same = t->rank == w->rank;
    for (int d = 0; same && d < w->rank; d++) same = t->shape[d] == w->file_shape[d];
    if (!same) {
        char want[160], got[160];
        fmt_shape(want, sizeof want, w->rank, w->file_shape);
        fmt_shape(got, sizeof got, t->rank, t->shape);
        return rt_error(ctx, SRT_ERR_WEIGHTS, "weight '%s': expected shape %s, got %s in %s", w->name, want, got, st->path);
    }
    const unsigned char *src = st->data + t->begin;
    switch (t->dtype) {
    case ST_F32:
        memcpy(tmp, src, w->count * 4);
        break;
    case ST_F16:
    case ST_BF16:
        for (size_t i = 0; i < w->count; i++) {
            uint16_t h = (uint16_t)(src[2 * i] | src[2 * i + 1] << 8);
            tmp[i] = t->dtype == ST_F16 ? rt_f16_to_f32(h) : rt_bf16_to_f32(h);
        }
        break;
    default:
        return rt_error(ctx, SRT_ERR_WEIGHTS, "weight '%s' in %s has dtype %s; supported: F32, F16, BF16", w->name, st->path,
                        rt_st_dtype_name(t->dtype));
    }
    if (!allow_nonfinite) {
        srt_status s = check_finite(ctx, w, st->path, tmp);
        if (s != SRT_OK) return s;
    }
    store(w, tmp, out);
    return SRT_OK;
}

/* On failure nothing stays allocated. */
static srt_status finish(srt_context *ctx, const RtPlan *plan, float **vals, float *tmp, srt_status s) {
    rt_free(ctx, tmp);
    if (s != SRT_OK) {
        for (int i = 0; i < plan->nweights; i++) {
            rt_free(ctx, vals[i]);
            vals[i] = NULL;
        }
    }
    return s;
}

/* ------------------------------------------------------------------ */
/* Checking the checkpoint against the model                           */
/* ------------------------------------------------------------------ */

/* Tensors a checkpoint may hold that are not parameters: HF GPT-2's causal-mask buffers (`h.N.attn.bias`,
 * `h.N.attn.masked_bias`) in checkpoints saved before transformers 4.31. Never reported as unused. */
static bool st_buffer_name(const char *name) {
    static const char *const suffixes[] = {".attn.bias", ".attn.masked_bias"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        size_t k = strlen(suffixes[i]);
        if (n > k && strcmp(name + n - k, suffixes[i]) == 0) return true;
    }
    return false;
}

/* The layer index of a per-layer tensor name (`h.N.`, `layers.N.`, after an optional `transformer.`); -1 otherwise. */
static long st_layer_of(const char *name) {
    name = rt_strip_hf_prefix(name);
    static const char *const prefixes[] = {"h.", "layers."};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t k = strlen(prefixes[i]);
        if (strncmp(name, prefixes[i], k) != 0 || name[k] < '0' || name[k] > '9') continue;
        char *end;
        long v = strtol(name + k, &end, 10);
        if (*end == '.') return v;
    }
    return -1;
}

/* Whether the plan reads a weight of this name. */
static bool plan_has_weight(const RtPlan *plan, const char *name) {
    for (int i = 0; i < plan->nweights; i++)
        if (strcmp(plan->weights[i].name, name) == 0) return true;
    return false;
}

/* Appends to buf[len] (at *n) what the unused tensors say: more layers than the model, an untied output. */
static void unused_hints(const RtPlan *plan, const RtSafetensors *st, const bool *used, char *buf, size_t len, size_t *n) {
    long top = -1;
    bool lm_head = false;
    for (int i = 0; i < st->ntensors; i++) {
        if (used[i] || st_buffer_name(st->tensors[i].name)) continue;
        long l = st_layer_of(st->tensors[i].name);
        if (l > top) top = l;
        lm_head |= strcmp(rt_strip_hf_prefix(st->tensors[i].name), "lm_head.weight") == 0;
    }
    if (top >= plan->n_layers && *n < len)
        *n += (size_t)snprintf(buf + *n, len - *n, "; the checkpoint has %ld layers, the model %d", top + 1, plan->n_layers);
    if (lm_head && *n < len)
        *n += (size_t)snprintf(buf + *n, len - *n, "; lm_head.weight is an untied output projection, the model ties its "
                               "output to the embedding (`embedding untied` reads lm_head.weight)");
}

/* SRT_ERR_WEIGHTS listing every tensor of st no weight used (as many as the message holds), unless allowed. */
static srt_status check_unused(srt_context *ctx, const RtPlan *plan, const RtSafetensors *st, const bool *used,
                               bool allow_unused) {
    int count = 0;
    for (int i = 0; i < st->ntensors; i++) count += !used[i] && !st_buffer_name(st->tensors[i].name);
    if (count == 0 || allow_unused) return SRT_OK;
    enum { TAIL = 400 }; /* room kept for the hints and the way out */
    char buf[RT_ERR_MAX];
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s holds %d tensor%s that model '%s' does not use:", st->path, count,
                                count == 1 ? "" : "s", plan->model);
    int listed = 0;
    for (int i = 0; i < st->ntensors && n + TAIL < sizeof buf; i++) {
        const RtStTensor *t = &st->tensors[i];
        if (used[i] || st_buffer_name(t->name)) continue;
        char shape[160];
        fmt_shape(shape, sizeof shape, t->rank, t->shape);
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s '%.200s' %s", listed ? "," : "", t->name, shape);
        listed++;
    }
    if (listed < count) n += (size_t)snprintf(buf + n, sizeof buf - n, " and %d more", count - listed);
    unused_hints(plan, st, used, buf, sizeof buf - 200, &n);
    if (n < sizeof buf)
        snprintf(buf + n, sizeof buf - n, " (a checkpoint of another model? --allow-unused, or "
                 "srt_options.allow_unused_weights, loads it anyway)");
    return rt_error(ctx, SRT_ERR_WEIGHTS, "%s", buf);
}

srt_status rt_weights_from_st(srt_context *ctx, const RtPlan *plan, const RtSafetensors *st, bool allow_nonfinite,
                              bool allow_unused, float **vals) {
    float *tmp = NULL;
    srt_status s = alloc_vals(ctx, plan, vals, &tmp);
    bool *used = s == SRT_OK ? rt_alloc(ctx, sizeof *used * (size_t)(st->ntensors + 1)) : NULL;
    if (s == SRT_OK && !used) s = rt_error(ctx, SRT_ERR_NOMEM, "out of memory checking weights");
    if (used) memset(used, 0, sizeof *used * (size_t)(st->ntensors + 1));
    for (int i = 0; i < plan->nweights && s == SRT_OK; i++)
        s = bind_one(ctx, &plan->weights[i], st, allow_nonfinite, tmp, vals[i], used);
    if (s == SRT_OK) s = check_unused(ctx, plan, st, used, allow_unused);
    rt_free(ctx, used);
    return finish(ctx, plan, vals, tmp, s);
}

/* One size a HuggingFace config.json states: its keys across the families, and the plan's value. */
typedef struct ConfigSize {
    const char *what;          /* the .arch setting it corresponds to */
    const char *keys[3];       /* config.json keys naming it (GPT-2's, Llama/NeoX's), NULL-padded */
    int model;                 /* the plan's value */
} ConfigSize;

/* Appends "KEY N, the model SETTING M" to buf for each size of cfg that differs from the plan's; returns how many. */
static int config_differences(const cJSON *cfg, const ConfigSize *sizes, int nsizes, char *buf, size_t len, size_t *n) {
    int diffs = 0;
    for (int i = 0; i < nsizes; i++)
        for (int k = 0; k < 3 && sizes[i].keys[k]; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, sizes[i].keys[k]);
            if (!cJSON_IsNumber(v)) continue;
            if (v->valuedouble != sizes[i].model && *n < len)
                *n += (size_t)snprintf(buf + *n, len - *n, "%s %s %.0f, the model %s %d", diffs++ ? ";" : "",
                                       sizes[i].keys[k], v->valuedouble, sizes[i].what, sizes[i].model);
            break;
        }
    return diffs;
}

/* The tying config.json states (tie_word_embeddings; absent: not checked) against the plan's output projection. */
static int config_tying(const cJSON *cfg, const RtPlan *plan, int diffs, char *buf, size_t len, size_t *n) {
    const cJSON *tie = cJSON_GetObjectItemCaseSensitive(cfg, "tie_word_embeddings");
    if (!cJSON_IsBool(tie) || !plan_has_weight(plan, "wte.weight")) return diffs; /* GPT-2 names only */
    bool untied = plan_has_weight(plan, "lm_head.weight");
    if (cJSON_IsTrue(tie) == !untied || *n >= len) return diffs;
    *n += (size_t)snprintf(buf + *n, len - *n, "%s tie_word_embeddings %s, the model's output projection is %s "
                           "(embedding %s)", diffs ? ";" : "", cJSON_IsTrue(tie) ? "true" : "false",
                           untied ? "untied" : "tied", untied ? "untied" : "tied");
    return diffs + 1;
}

srt_status rt_weights_check_config(srt_context *ctx, const RtPlan *plan, const char *path) {
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    char cpath[4096];
    if (dirlen + sizeof "config.json" > sizeof cpath) return SRT_OK;
    snprintf(cpath, sizeof cpath, "%.*sconfig.json", (int)dirlen, path);
    struct stat sb;
    if (stat(cpath, &sb) != 0 || !S_ISREG(sb.st_mode)) return SRT_OK; /* not a HuggingFace directory */
    char *text = NULL;
    size_t len = 0;
    srt_status s = rt_read_file(ctx, cpath, &text, &len);
    if (s != SRT_OK) return s;
    cJSON *cfg = cJSON_ParseWithLength(text, len);
    rt_free(ctx, text);
    if (!cJSON_IsObject(cfg)) {
        cJSON_Delete(cfg);
        return rt_error(ctx, SRT_ERR_FORMAT, "%s (beside the weights %s) is not a JSON object", cpath, path);
    }
    const ConfigSize sizes[] = {
        {"layers", {"n_layer", "num_hidden_layers"}, plan->n_layers},
        {"heads", {"n_head", "num_attention_heads"}, plan->n_heads},
        {"d_model", {"n_embd", "hidden_size", "d_model"}, plan->d_model},
        {"vocab", {"vocab_size"}, plan->vocab},
    };
    char buf[2048];
    size_t n = 0;
    int diffs = config_differences(cfg, sizes, (int)(sizeof sizes / sizeof *sizes), buf, sizeof buf, &n);
    diffs = config_tying(cfg, plan, diffs, buf, sizeof buf, &n);
    cJSON_Delete(cfg);
    if (diffs == 0) return SRT_OK;
    return rt_error(ctx, SRT_ERR_WEIGHTS, "%s does not describe model '%s':%s (the checkpoint in %s is another model's)",
                    cpath, plan->model, buf, path);
}

srt_status rt_weights_random(srt_context *ctx, const RtPlan *plan, uint64_t seed, float **vals) {
    float *tmp = NULL;
    srt_status s = alloc_vals(ctx, plan, vals, &tmp);
    for (int i = 0; i < plan->nweights && s == SRT_OK; i++) {
        const RtPlanWeight *w = &plan->weights[i];
        rt_random_tensor(seed, w->name, w->rank, w->file_shape, tmp, w->count);
        store(w, tmp, vals[i]);
    }
    return finish(ctx, plan, vals, tmp, s);
}

/* Whether weight i's name was already written (a plan may list a shared tensor twice). */
static bool name_seen(const RtPlan *plan, int i) {
    for (int j = 0; j < i; j++)
        if (strcmp(plan->weights[j].name, plan->weights[i].name) == 0) return true;
    return false;
}

/* The safetensors header of random or trained weights: each tensor F32 in its file shape, in plan order, padded with
 * spaces to a multiple of 8 bytes. cJSON escapes the names. */
static char *f32_header(srt_context *ctx, const RtPlan *plan, const char *note, size_t *len) {
    cJSON *root = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(root, "__metadata__");
    cJSON_AddStringToObject(meta, "source", note);
    size_t at = 0;
    for (int i = 0; i < plan->nweights; i++) {
        const RtPlanWeight *w = &plan->weights[i];
        if (name_seen(plan, i)) continue;
        cJSON *t = cJSON_AddObjectToObject(root, w->name), *shape = cJSON_AddArrayToObject(t, "shape");
        cJSON_AddStringToObject(t, "dtype", "F32");
        for (int d = 0; d < w->rank; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)w->file_shape[d]));
        cJSON *off = cJSON_AddArrayToObject(t, "data_offsets");
        cJSON_AddItemToArray(off, cJSON_CreateNumber((double)at));
        at += w->count * sizeof(float);
        cJSON_AddItemToArray(off, cJSON_CreateNumber((double)at));
    }
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!json) return NULL;
    size_t n = strlen(json), padded = (n + 7) / 8 * 8;
    char *out = rt_alloc(ctx, padded + 1);
    if (out) {
        memcpy(out, json, n);
        memset(out + n, ' ', padded - n);
        out[padded] = 0;
        *len = padded;
    }
    cJSON_free(json);
    return out;
}

srt_status rt_weights_random_save(srt_context *ctx, const RtPlan *plan, uint64_t seed, const char *path) {
    size_t hlen = 0, most = 1;
    char note[96];
    snprintf(note, sizeof note, "shortc random weights, seed %llu", (unsigned long long)seed);
    char *header = f32_header(ctx, plan, note, &hlen);
    for (int i = 0; i < plan->nweights; i++)
        if (plan->weights[i].count > most) most = plan->weights[i].count;
    float *tmp = rt_alloc(ctx, sizeof *tmp * most);
    if (!header || !tmp) {
        rt_free(ctx, header);
        rt_free(ctx, tmp);
        return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    }
    FioOut o;
    const char *why = NULL;
    srt_status st = SRT_OK;
    if (!fio_out_open(&o, path, &why)) st = rt_error(ctx, SRT_ERR_IO, "cannot write '%s': %s", path, why);
    else {
        uint8_t le[8];
        for (int b = 0; b < 8; b++) le[b] = (uint8_t)((uint64_t)hlen >> (8 * b));
        fio_out_write(&o, le, 8);
        fio_out_write(&o, header, hlen);
        for (int i = 0; i < plan->nweights; i++) {
            const RtPlanWeight *w = &plan->weights[i];
            if (name_seen(plan, i)) continue;
            rt_random_tensor(seed, w->name, w->rank, w->file_shape, tmp, w->count); /* little-endian hosts */
            fio_out_write(&o, tmp, sizeof *tmp * w->count);
        }
        if (!fio_out_commit(&o, &why)) st = rt_error(ctx, SRT_ERR_IO, "cannot write '%s': %s", path, why);
    }
    rt_free(ctx, header);
    rt_free(ctx, tmp);
    return st;
}

void rt_weight_to_file(const RtPlanWeight *w, const float *stored, float *file) {
    if (!w->transpose) {
        memcpy(file, stored, sizeof *file * w->count);
        return;
    }
    size_t a = (size_t)w->file_shape[0], b = (size_t)w->file_shape[1];
    for (size_t i = 0; i < a; i++)
        for (size_t j = 0; j < b; j++) file[i * b + j] = stored[j * a + i];
}

void rt_weight_from_file(const RtPlanWeight *w, const float *file, float *stored) { store(w, file, stored); }

srt_status rt_weights_save(srt_context *ctx, const RtPlan *plan, const float *const *file_vals, const char *note,
                           const char *path) {
    size_t hlen = 0;
    char *header = f32_header(ctx, plan, note, &hlen);
    if (!header) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    FioOut o;
    const char *why = NULL;
    srt_status st = SRT_OK;
    if (!fio_out_open(&o, path, &why)) st = rt_error(ctx, SRT_ERR_IO, "cannot write '%s': %s", path, why);
    else {
        uint8_t le[8];
        for (int b = 0; b < 8; b++) le[b] = (uint8_t)((uint64_t)hlen >> (8 * b));
        fio_out_write(&o, le, 8);
        fio_out_write(&o, header, hlen);
        for (int i = 0; i < plan->nweights; i++)
            if (!name_seen(plan, i)) fio_out_write(&o, file_vals[i], sizeof(float) * plan->weights[i].count); /* little-endian hosts */
        if (!fio_out_commit(&o, &why)) st = rt_error(ctx, SRT_ERR_IO, "cannot write '%s': %s", path, why);
    }
    rt_free(ctx, header);
    return st;
}
