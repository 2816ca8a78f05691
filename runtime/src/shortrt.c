/*
 * shortrt.c — the public API: contexts and their allocator, errors, model
 * open/close with backend selection, weights, sessions and forward passes.
 * The work is done by plan_load.c (the plan), weights.c (weights),
 * exec.c (sim and cuda backends) and backend_ref.c (the reference
 * interpreter); this file checks the API's rules and routes every call
 * through the model's backend table (RtBackend, picked once at open).
 */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Allocation                                                          */
/* ------------------------------------------------------------------ */

#define RT_HDR 16 /* keeps the hook's 16-byte alignment for the caller */

static void *default_alloc(void *ud, void *ptr, size_t old_size, size_t new_size) {
    (void)ud;
    (void)old_size;
    if (new_size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, new_size);
}

void *rt_alloc(srt_context *ctx, size_t n) {
    if (n > SIZE_MAX - RT_HDR) return NULL;
    unsigned char *b = ctx->alloc(ctx->ud, NULL, 0, n + RT_HDR);
    if (!b) return NULL;
    memcpy(b, &n, sizeof n);
    memset(b + RT_HDR, 0, n);
    return b + RT_HDR;
}

void *rt_realloc(srt_context *ctx, void *p, size_t n) {
    if (!p) return rt_alloc(ctx, n);
    if (n > SIZE_MAX - RT_HDR) return NULL;
    unsigned char *b = (unsigned char *)p - RT_HDR;
    size_t old;
    memcpy(&old, b, sizeof old);
    unsigned char *nb = ctx->alloc(ctx->ud, b, old + RT_HDR, n + RT_HDR);
    if (!nb) return NULL;
    memcpy(nb, &n, sizeof n);
    if (n > old) memset(nb + RT_HDR + old, 0, n - old);
    return nb + RT_HDR;
}

void rt_free(srt_context *ctx, void *p) {
    if (!p) return;
    unsigned char *b = (unsigned char *)p - RT_HDR;
    size_t old;
    memcpy(&old, b, sizeof old);
    ctx->alloc(ctx->ud, b, old + RT_HDR, 0);
}

char *rt_strndup(srt_context *ctx, const char *s, size_t n) {
    char *d = rt_alloc(ctx, n + 1);
    if (d) memcpy(d, s, n);
    return d;
}

char *rt_strdup(srt_context *ctx, const char *s) { return rt_strndup(ctx, s, strlen(s)); }

bool rt_ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

const char *rt_strip_hf_prefix(const char *name) {
    static const char prefix[] = "transformer.";
    return strncmp(name, prefix, sizeof prefix - 1) == 0 ? name + sizeof prefix - 1 : name;
}

void srt_free(srt_context *ctx, void *p) {
    if (ctx) rt_free(ctx, p);
}

/* ------------------------------------------------------------------ */
/* Errors and small helpers                                            */
/* ------------------------------------------------------------------ */

srt_status rt_verror(srt_context *ctx, srt_status st, const char *fmt, va_list ap) {
    char tmp[RT_ERR_MAX];
    vsnprintf(tmp, sizeof tmp, fmt, ap); /* fmt's arguments may point into ctx->err */
    size_t n = strlen(tmp);
    while (n > 0 && (tmp[n - 1] == '\n' || tmp[n - 1] == ' ')) tmp[--n] = 0;
    memcpy(ctx->err, tmp, n + 1);
    ctx->err_file[0] = 0; /* a new failure has no compile position until rt_compile_arch gives it one */
    ctx->err_line = ctx->err_column = 0;
    return st;
}

srt_status rt_error(srt_context *ctx, srt_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rt_verror(ctx, st, fmt, ap);
    va_end(ap);
    return st;
}

static srt_status nomem(srt_context *ctx) { return rt_error(ctx, SRT_ERR_NOMEM, "out of memory (the host allocator returned NULL)"); }

srt_status rt_read_file(srt_context *ctx, const char *path, char **data, size_t *len) {
    const char *why;
    size_t n = 0;
    char *raw = fio_read_file(path, RT_FILE_MAX, &n, &why);
    if (!raw) return rt_error(ctx, SRT_ERR_IO, "cannot open '%s': %s", path, why);
    char *buf = rt_alloc(ctx, n + 1);
    if (buf) memcpy(buf, raw, n + 1);
    free(raw);
    if (!buf) return nomem(ctx);
    *data = buf;
    *len = n;
    return SRT_OK;
}

/* 1 when $HOME names an existing directory other than "/", absolute: the cache is made below it,
 * never the home directory itself. */
static int usable_home(const char *home) {
    struct stat st;
    return home && home[0] == '/' && home[strspn(home, "/")] != 0 && stat(home, &st) == 0 && S_ISDIR(st.st_mode);
}

void rt_default_cache_dir(char *buf, size_t len) {
    const char *env = getenv("SHORTC_CACHE");
    const char *home = getenv("HOME");
    if (env && *env) snprintf(buf, len, "%s", env);
    else if (usable_home(home)) snprintf(buf, len, "%s/.cache/shortc", home);
    else rt_fallback_cache_dir(buf, len);
}

double rt_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *srt_version(void) { return SHORTRT_VERSION_STRING; }

const char *srt_status_name(srt_status s) {
    switch (s) {
    case SRT_OK: return "SRT_OK";
    case SRT_ERR_INVALID: return "SRT_ERR_INVALID";
    case SRT_ERR_IO: return "SRT_ERR_IO";
    case SRT_ERR_FORMAT: return "SRT_ERR_FORMAT";
    case SRT_ERR_WEIGHTS: return "SRT_ERR_WEIGHTS";
    case SRT_ERR_NO_DEVICE: return "SRT_ERR_NO_DEVICE";
    case SRT_ERR_COMPILE: return "SRT_ERR_COMPILE";
    case SRT_ERR_DRIVER: return "SRT_ERR_DRIVER";
    case SRT_ERR_SIM: return "SRT_ERR_SIM";
    case SRT_ERR_NOMEM: return "SRT_ERR_NOMEM";
    case SRT_ERR_UNSUPPORTED: return "SRT_ERR_UNSUPPORTED";
    }
    return "SRT_ERR_UNKNOWN";
}

const char *srt_backend_name(srt_backend b) {
    switch (b) {
    case SRT_BACKEND_AUTO: return "auto";
    case SRT_BACKEND_REF: return "ref";
    case SRT_BACKEND_SIM: return "sim";
    case SRT_BACKEND_CUDA: return "cuda";
    }
    return "unknown";
}

/* ------------------------------------------------------------------ */
/* Context                                                             */
/* ------------------------------------------------------------------ */

void srt_options_init(srt_options *opt) {
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->backend = SRT_BACKEND_AUTO;
    opt->sim_checked = 1;
}

srt_status srt_context_create(srt_context **out, srt_alloc_fn alloc, void *ud) {
    if (!out) return SRT_ERR_INVALID;
    *out = NULL;
    if (!alloc) alloc = default_alloc;
    srt_context *ctx = alloc(ud, NULL, 0, sizeof *ctx);
    if (!ctx) return SRT_ERR_NOMEM;
    memset(ctx, 0, sizeof *ctx);
    ctx->alloc = alloc;
    ctx->ud = ud;
    *out = ctx;
    return SRT_OK;
}

void srt_context_destroy(srt_context *ctx) {
    if (ctx) ctx->alloc(ctx->ud, ctx, sizeof *ctx, 0);
}

const char *srt_last_error(const srt_context *ctx) {
    if (!ctx) return "no context (srt_context_create failed or was not called)";
    return ctx->err;
}

/* ------------------------------------------------------------------ */
/* Models                                                              */
/* ------------------------------------------------------------------ */

/* Each backend's functions; AUTO picks cuda or sim when the device backend opens. */
static const RtBackend *const backend_table[] = {
    [SRT_BACKEND_AUTO] = &rt_backend_device,
    [SRT_BACKEND_REF] = &rt_backend_ref,
    [SRT_BACKEND_SIM] = &rt_backend_device,
    [SRT_BACKEND_CUDA] = &rt_backend_device,
};

int srt_last_error_location(const srt_context *ctx, const char **file, int *line, int *column) {
    bool has = ctx && ctx->err_file[0];
    if (file) *file = has ? ctx->err_file : NULL;
    if (line) *line = has ? ctx->err_line : 0;
    if (column) *column = has ? ctx->err_column : 0;
    return has;
}

/* srt_model_open of the file at path, or of the .arch text[text_len] named path when text is not NULL. */
static srt_status model_open(srt_context *ctx, const char *path, const char *text, size_t text_len,
                             const srt_options *opt_in, srt_model **out) {
    srt_options opt;
    if (opt_in) opt = *opt_in;
    else srt_options_init(&opt);
    if (opt.backend < SRT_BACKEND_AUTO || opt.backend > SRT_BACKEND_CUDA)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_model_open: unknown backend %d", (int)opt.backend);
    bool is_cu = !text && rt_ends_with(path, ".cu"), is_arch = text || rt_ends_with(path, ".arch");
    if (!is_cu && !is_arch)
        return rt_error(ctx, SRT_ERR_INVALID, "'%s': expected an emitted .cu or an .arch file", path);

    srt_model *m = rt_alloc(ctx, sizeof *m);
    if (!m) return nomem(ctx);
    m->ctx = ctx;
    m->backend = opt.backend;
    m->ops = backend_table[opt.backend];
    m->allow_nonfinite = opt.allow_nonfinite_weights != 0;
    m->allow_unused = opt.allow_unused_weights != 0;
    char *cu = NULL;
    size_t cu_len = 0;
    srt_status st = SRT_OK;
    if (!(m->path = rt_strdup(ctx, path))) { st = nomem(ctx); goto fail; }

    if (is_cu) {
        if ((st = rt_read_file(ctx, path, &cu, &cu_len)) != SRT_OK) goto fail;
        const char *json;
        size_t json_len;
        if ((st = rt_plan_extract(ctx, path, cu, cu_len, &json, &json_len)) != SRT_OK) goto fail;
        if (!(m->plan_json = rt_strndup(ctx, json, json_len))) { st = nomem(ctx); goto fail; }
        if ((st = rt_plan_parse(ctx, path, m->plan_json, json_len, &m->plan)) != SRT_OK) goto fail;
    } else {
        st = rt_compile_arch(ctx, path, text, text_len, opt.model_name, &cu, &cu_len, &m->plan_json,
                             m->ops->keeps_ir ? &m->ref : NULL);
        if (st != SRT_OK) goto fail;
        if ((st = rt_plan_parse(ctx, path, m->plan_json, strlen(m->plan_json), &m->plan)) != SRT_OK) goto fail;
    }

    if ((st = m->ops->open(m, &opt, cu, cu_len)) != SRT_OK) goto fail;
    rt_free(ctx, cu);
    *out = m;
    return SRT_OK;
fail:
    rt_free(ctx, cu);
    srt_model_close(m); /* sets no message: the failure's stays */
    return st;
}

srt_status srt_model_open(srt_context *ctx, const char *path, const srt_options *opt, srt_model **out) {
    if (out) *out = NULL;
    if (!ctx) return SRT_ERR_INVALID;
    if (!out || !path) return rt_error(ctx, SRT_ERR_INVALID, "srt_model_open: path and out must not be NULL");
    return model_open(ctx, path, NULL, 0, opt, out);
}

srt_status srt_model_open_source(srt_context *ctx, const char *name, const char *text, size_t len,
                                 const srt_options *opt, srt_model **out) {
    if (out) *out = NULL;
    if (!ctx) return SRT_ERR_INVALID;
    if (!out || !text) return rt_error(ctx, SRT_ERR_INVALID, "srt_model_open_source: text and out must not be NULL");
    if (memchr(text, 0, len))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: the .arch text contains a NUL byte", name ? name : "<source>");
    return model_open(ctx, name ? name : "<source>", text, len, opt, out);
}

void srt_model_close(srt_model *m) {
    if (!m) return;
    srt_context *ctx = m->ctx;
    while (m->sessions) srt_session_destroy(m->sessions);
    m->ops->close(m);
    rt_plan_free(ctx, &m->plan);
    rt_free(ctx, m->plan_json);
    rt_free(ctx, m->path);
    rt_free(ctx, m);
}

/* Hands weight values to the backend (which keeps them for ref, uploads them otherwise). */
static srt_status install_weights(srt_model *m, float **vals) {
    srt_status st = m->ops->install_weights(m, vals);
    if (st == SRT_OK) m->weights_loaded = true;
    return st;
}

static srt_status new_vals(srt_model *m, float ***vals) {
    *vals = rt_alloc(m->ctx, sizeof **vals * (size_t)(m->plan.nweights > 0 ? m->plan.nweights : 1));
    return *vals ? SRT_OK : nomem(m->ctx);
}

/* The plan's weights from an opened safetensors sf (a file's or tensors in memory), installed; closes sf. */
static srt_status install_from_st(srt_model *m, RtSafetensors *sf) {
    float **vals;
    srt_status st = new_vals(m, &vals);
    if (st == SRT_OK) {
        st = rt_weights_from_st(m->ctx, &m->plan, sf, m->allow_nonfinite, m->allow_unused, vals);
        if (st == SRT_OK) st = install_weights(m, vals);
        else rt_free(m->ctx, vals);
    }
    rt_st_close(sf);
    return st;
}

srt_status srt_model_load_weights(srt_model *m, const char *path) {
    if (!m) return SRT_ERR_INVALID;
    if (!path) return rt_error(m->ctx, SRT_ERR_INVALID, "srt_model_load_weights: path is NULL");
    RtSafetensors sf;
    srt_status st = rt_weights_check_config(m->ctx, &m->plan, path);
    if (st == SRT_OK) st = rt_st_open(m->ctx, path, &sf);
    return st == SRT_OK ? install_from_st(m, &sf) : st;
}

srt_status srt_model_load_tensors(srt_model *m, const srt_tensor *tensors, int n) {
    if (!m) return SRT_ERR_INVALID;
    RtSafetensors sf;
    srt_status st = rt_st_from_tensors(m->ctx, tensors, n, &sf);
    return st == SRT_OK ? install_from_st(m, &sf) : st;
}

srt_status srt_model_random_weights(srt_model *m, uint64_t seed) {
    if (!m) return SRT_ERR_INVALID;
    float **vals;
    srt_status st = new_vals(m, &vals);
    if (st != SRT_OK) return st;
    st = rt_weights_random(m->ctx, &m->plan, seed, vals);
    if (st != SRT_OK) {
        rt_free(m->ctx, vals);
        return st;
    }
    return install_weights(m, vals);
}

srt_status srt_model_save_random_weights(srt_model *m, uint64_t seed, const char *path) {
    if (!m) return SRT_ERR_INVALID;
    if (!path) return rt_error(m->ctx, SRT_ERR_INVALID, "srt_model_save_random_weights: path is NULL");
    return rt_weights_random_save(m->ctx, &m->plan, seed, path);
}

srt_status srt_model_get_info(const srt_model *m, srt_model_info *info) {
    if (!m || !info) return SRT_ERR_INVALID;
    const RtPlan *p = &m->plan;
    memset(info, 0, sizeof *info);
    info->name = p->model;
    info->backend = m->backend;
    info->vocab = p->vocab;
    info->d_model = p->d_model;
    info->n_layers = p->n_layers;
    info->segment = p->segment;
    info->nkernels = p->nkernels;
    info->nlaunches = p->nlaunches;
    info->ngemms = p->ngemms;
    info->weight_bytes = p->weight_bytes;
    info->activation_bytes = p->arena_bytes;
    info->state_bytes = m->ops->model_state_bytes(m);
    info->compile_ms = m->compile_ms;
    info->cache_hit = m->cache_hit;
    info->cache_note = m->cache_note;
    info->stateful = 1;
    info->kv_cache = m->ops->kv_cache(m);
    info->max_positions = m->ops->max_positions(m);
    info->recurrent = m->plan.recurrent;
    info->overlap = m->plan.overlap;
    info->carries_state = m->ops->state_keep(m) >= 0 || m->plan.memories; /* a PIA cache or bounded memories */
    info->memories = m->plan.memories;
    for (int i = 0; i < p->nderived; i++) info->derived_bytes += p->derived[i].bytes;
    info->load_runs = m->load_runs;
    return SRT_OK;
}

/* The plan's state entry of the i-th persistent tensor, or NULL. */
static const RtPlanState *persistent_state(const RtPlan *p, int i) {
    for (int k = 0; k < p->nstate; k++)
        if (p->state[k].persistent && i-- == 0) return &p->state[k];
    return NULL;
}

int srt_model_state_count(const srt_model *m) {
    int n = 0;
    for (int k = 0; m && k < m->plan.nstate; k++) n += m->plan.state[k].persistent;
    return n;
}

srt_status srt_model_state_get(const srt_model *m, int i, srt_state_info *out) {
    if (!m || !out) return SRT_ERR_INVALID;
    const RtPlanState *st = persistent_state(&m->plan, i);
    if (!st)
        return rt_error(m->ctx, SRT_ERR_INVALID, "state entry %d: model '%s' keeps %d", i, m->plan.model,
                        srt_model_state_count(m));
    *out = (srt_state_info){.name = st->name, .role = plan_state_roles[st->role], .dtype = dtype_name(st->dtype),
                            .capacity = st->capacity, .keep = st->keep, .bytes = st->bytes};
    return SRT_OK;
}

const char *srt_model_plan_json(const srt_model *m) { return m && m->plan_json ? m->plan_json : ""; }

/* ------------------------------------------------------------------ */
/* Sessions                                                            */
/* ------------------------------------------------------------------ */

/* Most sequences one session holds. */
#define RT_MAX_BATCH 256

/* A backend session of m (one sequence): s filled by the backend, or an error with nothing left allocated.
 * Sequence b of a batch session of count (b = 0, count = 1: a single-sequence session); lane0: the batch
 * session's first sequence (NULL for it), whose workspace and state blocks this one shares. */
static srt_status lane_create(srt_model *m, const srt_session *lane0, int b, int count, srt_session **out) {
    srt_session *s = rt_alloc(m->ctx, sizeof *s);
    if (!s) return nomem(m->ctx);
    s->m = m;
    s->batch = 1;
    s->lane0 = lane0;
    s->lane_index = b;
    s->lane_count = count;
    srt_status st = m->ops->session_create(s);
    if (st != SRT_OK) {
        m->ops->session_destroy(s);
        rt_free(m->ctx, s);
        return st;
    }
    *out = s;
    return SRT_OK;
}

static void lane_destroy(srt_session *s) {
    s->m->ops->session_destroy(s);
    rt_free(s->m->ctx, s);
}

/* Sequence b of s (s itself when it holds one). */
static srt_session *lane(const srt_session *s, int b) { return s->lanes ? s->lanes[b] : (srt_session *)s; }

srt_status srt_session_create(srt_model *m, int batch, srt_session **out) {
    if (out) *out = NULL;
    if (!m) return SRT_ERR_INVALID;
    if (!out) return rt_error(m->ctx, SRT_ERR_INVALID, "srt_session_create: out is NULL");
    if (batch < 1 || batch > RT_MAX_BATCH)
        return rt_error(m->ctx, SRT_ERR_INVALID, "srt_session_create: batch %d (expected 1 to %d sequences)", batch,
                        RT_MAX_BATCH);
    srt_session *s = NULL;
    srt_status st;
    if (batch == 1) {
        if ((st = lane_create(m, NULL, 0, 1, &s)) != SRT_OK) return st;
    } else {
        if (!(s = rt_alloc(m->ctx, sizeof *s)) || !(s->lanes = rt_alloc(m->ctx, sizeof *s->lanes * (size_t)batch))) {
            rt_free(m->ctx, s);
            return nomem(m->ctx);
        }
        s->m = m;
        s->batch = batch;
        for (int b = 0; b < batch; b++) {
            if ((st = lane_create(m, b ? s->lanes[0] : NULL, b, batch, &s->lanes[b])) != SRT_OK) {
                while (b-- > 0) lane_destroy(s->lanes[b]);
                rt_free(m->ctx, s->lanes);
                rt_free(m->ctx, s);
                return st;
            }
        }
    }
    s->next = m->sessions;
    m->sessions = s;
    *out = s;
    return SRT_OK;
}

void srt_session_destroy(srt_session *s) {
    if (!s) return;
    srt_model *m = s->m;
    for (srt_session **pp = &m->sessions; *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    if (!s->lanes) {
        lane_destroy(s);
        return;
    }
    for (int b = s->batch - 1; b >= 0; b--) lane_destroy(s->lanes[b]); /* the lender last */
    rt_free(m->ctx, s->lanes);
    rt_free(m->ctx, s);
}

srt_status srt_session_reset(srt_session *s) {
    if (!s) return SRT_ERR_INVALID;
    for (int b = 0; b < s->batch; b++) {
        srt_status st = s->m->ops->session_reset(lane(s, b));
        if (st != SRT_OK) return st;
    }
    return SRT_OK;
}

srt_status srt_session_set_mem_init(srt_session *s, srt_mem_init init) {
    if (!s) return SRT_ERR_INVALID;
    if (init != SRT_MEM_INIT_EMPTY && init != SRT_MEM_INIT_ZEROS)
        return rt_error(s->m->ctx, SRT_ERR_INVALID, "srt_session_set_mem_init: unknown value %d", (int)init);
    if (!s->m->plan.memories)
        return rt_error(s->m->ctx, SRT_ERR_UNSUPPORTED, "model '%s' has no Transformer-XL memories to start with "
                        "zero rows", s->m->plan.model);
    if (init == SRT_MEM_INIT_ZEROS && s->m->plan.pre_layernorm) /* the rings hold normed rows: LN(0) = beta */
        return rt_error(s->m->ctx, SRT_ERR_UNSUPPORTED, "model '%s' applies LayerNorm before attention, so HF's zero "
                        "memory rows would be the norm's bias in shortc's memory (which holds normed rows); zero "
                        "memories are supported for post-norm models (HF's pre_lnorm=False) and RMSNorm",
                        s->m->plan.model);
    s->mem_zeros = init == SRT_MEM_INIT_ZEROS;
    for (int b = 0; b < s->batch; b++) lane(s, b)->mem_zeros = s->mem_zeros;
    return srt_session_reset(s);
}

size_t srt_session_state_bytes(const srt_session *s) {
    if (!s) return 0;
    size_t bytes = 0;
    for (int b = 0; b < s->batch; b++) bytes += s->m->ops->session_state_bytes(lane(s, b));
    return bytes;
}

int srt_session_position(const srt_session *s) { return srt_session_position_of(s, 0); }

int srt_session_position_of(const srt_session *s, int b) {
    if (!s || b < 0 || b >= s->batch) return 0;
    return s->m->ops->session_position(lane(s, b));
}

int srt_session_batch(const srt_session *s) { return s ? s->batch : 0; }

size_t srt_session_bytes_to_host(const srt_session *s) {
    if (!s) return 0;
    size_t n = s->bytes_to_host;
    for (int b = 0; s->lanes && b < s->batch; b++) n += s->lanes[b]->bytes_to_host;
    return n;
}

srt_status srt_session_call_counts(const srt_session *s, srt_call_counts *out) {
    if (!s || !out) return SRT_ERR_INVALID;
    *out = s->calls;
    for (int b = 0; s->lanes && b < s->batch; b++) {
        const srt_call_counts *c = &s->lanes[b]->calls;
        out->launches += c->launches, out->gemms += c->gemms, out->graph_launches += c->graph_launches;
        out->syncs += c->syncs, out->copies += c->copies, out->bytes += c->bytes;
    }
    return SRT_OK;
}

/* A single-sequence session of a device backend (profiling's precondition); else the error. */
static srt_status profiling_session(const srt_session *s, const char *what) {
    if (!s) return SRT_ERR_INVALID;
    if (s->m->ops != &rt_backend_device)
        return rt_error(s->m->ctx, SRT_ERR_UNSUPPORTED, "%s: the %s backend runs no plan steps to time", what,
                        srt_backend_name(s->m->backend));
    if (s->lanes) return rt_error(s->m->ctx, SRT_ERR_UNSUPPORTED, "%s: a batch session (profile one sequence)", what);
    return SRT_OK;
}

srt_status srt_session_set_profiling(srt_session *s, int on) {
    srt_status st = profiling_session(s, "srt_session_set_profiling");
    return st != SRT_OK ? st : rt_exec_set_profiling(s, on != 0);
}

int srt_session_step_count(const srt_session *s) {
    return s && s->m->ops == &rt_backend_device ? s->m->plan.nsteps : 0;
}

srt_status srt_session_step_time(const srt_session *s, int i, srt_step_time *out) {
    srt_status st = profiling_session(s, "srt_session_step_time");
    if (st != SRT_OK) return st;
    if (!out || i < 0 || i >= s->m->plan.nsteps)
        return rt_error(s->m->ctx, SRT_ERR_INVALID, "srt_session_step_time: step %d of %d", i, s->m->plan.nsteps);
    rt_exec_step_time(s, i, out);
    return SRT_OK;
}

srt_status srt_forward(srt_session *s, const int32_t *tokens, int ntokens, float *logits) {
    return srt_forward_rows(s, tokens, ntokens, 0, logits);
}

/* The checks every forward makes of one sequence's tokens (what: the caller, for messages). */
static srt_status check_tokens(const srt_model *m, const char *what, const int32_t *tokens, int ntokens) {
    srt_context *ctx = m->ctx;
    if (ntokens < 1 || ntokens > m->plan.segment)
        return rt_error(ctx, SRT_ERR_INVALID, "%s: %d tokens; model '%s' takes 1 to %d per forward", what, ntokens,
                        m->plan.model, m->plan.segment);
    for (int i = 0; i < ntokens; i++) {
        if (tokens[i] < 0 || tokens[i] >= m->plan.vocab)
            return rt_error(ctx, SRT_ERR_INVALID, "%s: token %d (index %d of this call) is outside the vocabulary [0, %d)", what,
                            (int)tokens[i], i, m->plan.vocab);
    }
    return SRT_OK;
}

static srt_status check_weights(const srt_model *m, const char *what) {
    if (m->weights_loaded) return SRT_OK;
    return rt_error(m->ctx, SRT_ERR_INVALID,
                    "%s: model '%s' has no weights (call srt_model_load_weights or srt_model_random_weights)", what,
                    m->plan.model);
}

srt_status srt_forward_rows(srt_session *s, const int32_t *tokens, int ntokens, int first_row, float *logits) {
    if (!s) return SRT_ERR_INVALID;
    if (!tokens || !logits) return rt_error(s->m->ctx, SRT_ERR_INVALID, "srt_forward: tokens and logits must not be NULL");
    srt_status st = rt_check_forward(s, tokens, ntokens, first_row);
    return st != SRT_OK ? st : s->m->ops->forward(s, tokens, ntokens, first_row, logits);
}

srt_status rt_check_forward(srt_session *s, const int32_t *tokens, int ntokens, int first_row) {
    srt_model *m = s->m;
    srt_context *ctx = m->ctx;
    if (s->batch != 1)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_forward: the session holds %d sequences; use srt_forward_batch",
                        s->batch);
    srt_status st = check_tokens(m, "srt_forward", tokens, ntokens);
    if (st != SRT_OK) return st;
    if (first_row < 0 || first_row >= ntokens)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_forward_rows: first row %d of %d tokens (expected 0 to %d)", first_row,
                        ntokens, ntokens - 1);
    return check_weights(m, "srt_forward");
}

/* What a batch call hands back per sequence: its logits, or the next token drawn by its sampler. */
typedef struct BatchOut {
    float *const *logits;          /* srt_forward_batch: per sequence, ntokens[b] x vocab (or NULL) */
    srt_sampler *const *samplers;  /* srt_forward_batch_sample: per sequence (or NULL) */
    int32_t *drawn;                /* with samplers: per sequence, the token drawn */
} BatchOut;

/* The sequences of a batch call that continue with one token, as batched decode steps of at most the plan's
 * batch each (rows in sequence order). */
static srt_status decode_rows(srt_session *s, const int32_t *const *tokens, const int *ntokens, const BatchOut *o) {
    srt_model *m = s->m;
    int cap = m->plan.decode_batch, n = 0;
    int seqs[RT_MAX_BATCH];
    srt_session *lanes[RT_MAX_BATCH];
    int32_t toks[RT_MAX_BATCH], drawn[RT_MAX_BATCH];
    float *logits[RT_MAX_BATCH];
    srt_sampler *smp[RT_MAX_BATCH];
    srt_status st = SRT_OK;
    for (int b = 0; b <= s->batch && st == SRT_OK; b++) {
        if (n > 0 && (b == s->batch || n == cap)) { /* a step of the rows gathered so far */
            st = m->ops->decode_batch(s->lanes[0], lanes, seqs, n, toks, o->samplers ? NULL : logits,
                                      o->samplers ? smp : NULL, drawn);
            for (int r = 0; st == SRT_OK && o->samplers && r < n; r++) o->drawn[seqs[r]] = drawn[r];
            n = 0;
        }
        if (b == s->batch || ntokens[b] != 1) continue;
        seqs[n] = b, lanes[n] = s->lanes[b], toks[n] = tokens[b][0];
        logits[n] = o->logits ? o->logits[b] : NULL;
        smp[n] = o->samplers ? o->samplers[b] : NULL;
        n++;
    }
    return st;
}

/* srt_forward_batch and srt_forward_batch_sample (fn): every sequence is checked before any runs. */
static srt_status forward_batch(srt_session *s, const int32_t *const *tokens, const int *ntokens, const BatchOut *o,
                                const char *fn) {
    srt_model *m = s->m;
    srt_context *ctx = m->ctx;
    srt_status st = check_weights(m, fn);
    int limit = m->ops->max_positions(m), any = 0;
    for (int b = 0; b < s->batch && st == SRT_OK; b++) {
        if (ntokens[b] == 0) continue; /* this sequence sits the call out */
        char what[96];
        snprintf(what, sizeof what, "%s: sequence %d", fn, b);
        if (!tokens[b] || (o->samplers ? !o->samplers[b] : !o->logits[b]))
            return rt_error(ctx, SRT_ERR_INVALID, "%s: tokens and %s must not be NULL", what,
                            o->samplers ? "samplers" : "logits");
        if (o->samplers && rt_sampler_vocab(o->samplers[b]) != m->plan.vocab)
            return rt_error(ctx, SRT_ERR_INVALID, "%s: a sampler for %d tokens; model '%s' has %d", what,
                            rt_sampler_vocab(o->samplers[b]), m->plan.model, m->plan.vocab);
        if ((st = check_tokens(m, what, tokens[b], ntokens[b])) != SRT_OK) return st;
        int P = m->ops->session_position(lane(s, b));
        if (m->ops->state_keep(m) < 0 && P + ntokens[b] > limit) /* a PIA session never runs out */
            return rt_error(ctx, SRT_ERR_UNSUPPORTED,
                            "%s: %d tokens at position %d go past the %d positions the model can address; reset the "
                            "session to start new sequences",
                            what, ntokens[b], P, limit);
        any = 1;
    }
    if (st == SRT_OK && !any) st = rt_error(ctx, SRT_ERR_INVALID, "%s: every sequence has 0 tokens", fn);
    bool batched = st == SRT_OK && m->ops->decode_batch && s->lanes && m->plan.decode_batch > 0 &&
                   m->plan.slide_program < 0; /* a sliding cache's segment ends are per sequence */
    for (int b = 0; b < s->batch && st == SRT_OK; b++) {
        if (ntokens[b] == 0 || (batched && ntokens[b] == 1)) continue; /* decode rows: below, in batched steps */
        st = o->samplers ? m->ops->forward_sample(lane(s, b), tokens[b], ntokens[b], o->samplers[b], &o->drawn[b])
                         : m->ops->forward(lane(s, b), tokens[b], ntokens[b], 0, o->logits[b]);
    }
    return batched && st == SRT_OK ? decode_rows(s, tokens, ntokens, o) : st;
}

srt_status srt_forward_batch(srt_session *s, const int32_t *const *tokens, const int *ntokens, float *const *logits) {
    if (!s) return SRT_ERR_INVALID;
    if (!tokens || !ntokens || !logits)
        return rt_error(s->m->ctx, SRT_ERR_INVALID, "srt_forward_batch: tokens, ntokens and logits must not be NULL");
    BatchOut o = {.logits = logits};
    return forward_batch(s, tokens, ntokens, &o, "srt_forward_batch");
}

srt_status srt_forward_batch_sample(srt_session *s, const int32_t *const *tokens, const int *ntokens,
                                    srt_sampler *const *samplers, int32_t *drawn) {
    if (!s) return SRT_ERR_INVALID;
    if (!tokens || !ntokens || !samplers || !drawn)
        return rt_error(s->m->ctx, SRT_ERR_INVALID,
                        "srt_forward_batch_sample: tokens, ntokens, samplers and drawn must not be NULL");
    BatchOut o = {.samplers = samplers, .drawn = drawn};
    return forward_batch(s, tokens, ntokens, &o, "srt_forward_batch_sample");
}

srt_status srt_forward_sample(srt_session *s, const int32_t *tokens, int ntokens, srt_sampler *smp, int32_t *token) {
    if (!s) return SRT_ERR_INVALID;
    if (!tokens || !smp || !token)
        return rt_error(s->m->ctx, SRT_ERR_INVALID, "srt_forward_sample: tokens, sampler and token must not be NULL");
    if (rt_sampler_vocab(smp) != s->m->plan.vocab)
        return rt_error(s->m->ctx, SRT_ERR_INVALID, "srt_forward_sample: a sampler for %d tokens; model '%s' has %d",
                        rt_sampler_vocab(smp), s->m->plan.model, s->m->plan.vocab);
    srt_status st = rt_check_forward(s, tokens, ntokens, ntokens - 1);
    return st != SRT_OK ? st : s->m->ops->forward_sample(s, tokens, ntokens, smp, token);
}
