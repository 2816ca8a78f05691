/*
 * tokenizer_json.c — reads a Hugging Face tokenizer.json, or GPT-2's
 * vocab.json + merges.txt, into the tokenizer pipeline of tokenizer.c
 * (tokenizer_internal.h; docs/tokenizer.md lists what is supported). A
 * component the pipeline cannot run is an error that names it.
 */
#include "tokenizer_internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static srt_status nomem(srt_context *ctx) { return rt_error(ctx, SRT_ERR_NOMEM, "out of memory"); }

/* Whether s[len] is UTF-8. */
static bool is_utf8(const char *s, size_t len) {
    uint32_t c;
    for (size_t i = 0, l; i < len; i += l)
        if (!(l = tok_utf8_decode((const unsigned char *)s, len, i, &c))) return false;
    return true;
}

/* ------------------------------------------------------------------ */
/* Vocabulary, merges, added tokens                                    */
/* ------------------------------------------------------------------ */

/* Adds token key -> id to the vocabulary and the id table. */
static srt_status add_token(srt_tokenizer *t, const char *where, const char *key, double id) {
    srt_context *ctx = t->ctx;
    if (!(id >= 0 && id < TOK_MAX_ID && id == (double)(int32_t)id))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: token '%s' has id %g (expected an integer 0 to %d)", where, key, id,
                        TOK_MAX_ID - 1);
    int32_t i = (int32_t)id;
    if (!*key) return rt_error(ctx, SRT_ERR_FORMAT, "%s: an empty token (id %d)", where, (int)i);
    if (!is_utf8(key, strlen(key))) return rt_error(ctx, SRT_ERR_FORMAT, "%s: token %d is not UTF-8", where, (int)i);
    if (i >= t->nids) {
        char **p = rt_realloc(ctx, t->id_text, sizeof *p * (size_t)(i + 1));
        if (!p) return nomem(ctx);
        memset(p + t->nids, 0, sizeof *p * (size_t)(i + 1 - t->nids));
        t->id_text = p;
        t->nids = i + 1;
    }
    if (!tok_map_put(ctx, &t->vocab, key, strlen(key), i)) return nomem(ctx);
    if (!t->id_text[i] && !(t->id_text[i] = rt_strdup(ctx, key))) return nomem(ctx);
    return SRT_OK;
}

/* The vocabulary object {"token": id, ...}. */
static srt_status load_vocab(srt_tokenizer *t, const char *where, const cJSON *vocab) {
    if (!cJSON_IsObject(vocab) || !vocab->child)
        return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: the vocabulary is not a non-empty object of token ids", where);
    for (const cJSON *e = vocab->child; e; e = e->next) {
        if (!cJSON_IsNumber(e))
            return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: token '%s' has no numeric id", where, e->string);
        srt_status st = add_token(t, where, e->string, e->valuedouble);
        if (st != SRT_OK) return st;
    }
    return SRT_OK;
}

/* One merge of tokens l[ll] and r[rl] with the given rank (a repeated merge keeps its first rank). */
static srt_status add_merge(srt_tokenizer *t, const char *where, const char *l, size_t ll, const char *r, size_t rl,
                            int32_t rank) {
    if (!is_utf8(l, ll) || !is_utf8(r, rl)) /* as the vocabulary's tokens; a stray 0xff would blur the key */
        return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: merge %d holds a token that is not UTF-8", where, (int)rank + 1);
    char *key = rt_alloc(t->ctx, ll + rl + 2);
    if (!key) return nomem(t->ctx);
    memcpy(key, l, ll);
    key[ll] = TOK_MERGE_SEP;
    memcpy(key + ll + 1, r, rl);
    bool ok = tok_map_get(&t->merges, key, ll + 1 + rl) >= 0 || tok_map_put(t->ctx, &t->merges, key, ll + 1 + rl, rank);
    rt_free(t->ctx, key);
    return ok ? SRT_OK : nomem(t->ctx);
}

/* One merge "left right" (len bytes at s) with the given rank. */
static srt_status add_merge_line(srt_tokenizer *t, const char *where, const char *s, size_t len, int32_t rank) {
    const char *sp = memchr(s, ' ', len);
    if (!sp || sp == s || sp + 1 == s + len || memchr(sp + 1, ' ', (size_t)(s + len - sp - 1)))
        return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: merge %d ('%.*s') is not two tokens separated by one space", where,
                        (int)rank + 1, (int)len, s);
    return add_merge(t, where, s, (size_t)(sp - s), sp + 1, (size_t)(s + len - sp - 1), rank);
}

/* tokenizer.json's model.merges: "a b" strings or ["a", "b"] pairs. */
static srt_status load_json_merges(srt_tokenizer *t, const char *where, const cJSON *merges) {
    if (!cJSON_IsArray(merges)) return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: model.merges is not an array", where);
    int32_t rank = 0;
    for (const cJSON *e = merges->child; e; e = e->next, rank++) {
        const char *s = cJSON_GetStringValue(e);
        srt_status st;
        if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 && cJSON_IsString(e->child) &&
            cJSON_IsString(e->child->next)) {
            const char *l = e->child->valuestring, *r = e->child->next->valuestring;
            if (!*l || !*r)
                return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: merge %d has an empty token", where, (int)rank + 1);
            st = add_merge(t, where, l, strlen(l), r, strlen(r), rank);
        } else if (s) st = add_merge_line(t, where, s, strlen(s), rank);
        else return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: merge %d is not a string or a pair of strings", where, (int)rank + 1);
        if (st != SRT_OK) return st;
    }
    return SRT_OK;
}

/* merges.txt: one "a b" per line, an optional "#version" first line, blank lines skipped. */
static srt_status load_merges_txt(srt_tokenizer *t, const char *path) {
    char *text = NULL;
    size_t len = 0;
    srt_status st = rt_read_file(t->ctx, path, &text, &len);
    int32_t rank = 0;
    for (size_t i = 0, line = 1; st == SRT_OK && i < len; line++) {
        size_t e = i;
        while (e < len && text[e] != '\n') e++;
        size_t l = e - i;
        if (l && text[i + l - 1] == '\r') l--;
        bool header = line == 1 && l >= 8 && memcmp(text + i, "#version", 8) == 0;
        if (l && !header) st = add_merge_line(t, path, text + i, l, rank++);
        i = e + 1;
    }
    rt_free(t->ctx, text);
    return st;
}

/* A boolean member of o (absent or null: def); false when it is there but not a boolean. */
static bool get_bool(const cJSON *o, const char *name, bool def, bool *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!v || cJSON_IsNull(v)) return *out = def, true;
    if (!cJSON_IsBool(v)) return false;
    *out = cJSON_IsTrue(v);
    return true;
}

static int added_order(const void *a, const void *b) {
    const TokAdded *x = a, *y = b;
    unsigned char fx = (unsigned char)x->content[0], fy = (unsigned char)y->content[0];
    if (fx != fy) return fx < fy ? -1 : 1;
    return x->len != y->len ? (x->len < y->len ? 1 : -1) : (x->id > y->id) - (x->id < y->id);
}

void tok_sort_added(srt_tokenizer *t) {
    if (t->nadded) qsort(t->added, (size_t)t->nadded, sizeof *t->added, added_order);
    for (int b = 0, k = 0; b <= 256; b++) {
        while (k < t->nadded && (unsigned char)t->added[k].content[0] < b) k++;
        t->added_from[b] = k;
    }
}

/* An added token's id and content, for check_added_ids. */
typedef struct AddedId {
    double id;            /* its id in the file */
    const char *content;  /* its content (in the cJSON tree) */
} AddedId;

static int added_id_order(const void *a, const void *b) {
    const AddedId *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The ids of added tokens are those HF tokenizers gives them when it reads the file (in id order: the
 * vocabulary's id of a token in it, else the one after the vocabulary and the added tokens so far);
 * a file that says otherwise would encode differently, so it is refused. */
static srt_status check_added_ids(srt_tokenizer *t, const char *where, const cJSON *added, int n) {
    srt_context *ctx = t->ctx;
    AddedId *ids = rt_alloc(ctx, sizeof *ids * (size_t)n);
    StrMap seen = {0};
    if (!ids) return nomem(ctx);
    int k = 0;
    for (const cJSON *e = added->child; e; e = e->next) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const char *content = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "content"));
        if (cJSON_IsNumber(id) && content && *content) ids[k++] = (AddedId){id->valuedouble, content};
    }
    qsort(ids, (size_t)k, sizeof *ids, added_id_order);
    double vocab_n = (double)t->vocab.n, max = -1;
    srt_status st = SRT_OK;
    for (int i = 0; st == SRT_OK && i < k; i++) {
        size_t len = strlen(ids[i].content);
        int32_t known = tok_map_get(&seen, ids[i].content, len);
        if (known < 0) known = tok_map_get(&t->vocab, ids[i].content, len);
        double want = known >= 0 ? known : max < 0 ? vocab_n : max >= vocab_n ? max + 1 : vocab_n;
        if (ids[i].id != want)
            st = rt_error(ctx, SRT_ERR_FORMAT, "%s: added token '%s' has id %g, where Hugging Face tokenizers gives it "
                          "%g (its vocabulary id, else the next after the vocabulary and the added tokens before it)",
                          where, ids[i].content, ids[i].id, want);
        else if (!tok_map_put(ctx, &seen, ids[i].content, len, (int32_t)want)) st = nomem(ctx);
        if (want > max) max = want;
    }
    tok_map_free(ctx, &seen);
    rt_free(ctx, ids);
    return st;
}

/* added_tokens [{"id", "content", "special", "normalized", "lstrip", "rstrip", "single_word"}]. */
static srt_status load_added(srt_tokenizer *t, const char *where, const cJSON *added) {
    srt_context *ctx = t->ctx;
    if (added && !cJSON_IsNull(added) && !cJSON_IsArray(added))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: added_tokens is not an array", where);
    int n = cJSON_IsArray(added) ? cJSON_GetArraySize(added) : 0;
    if (n && !(t->added = rt_alloc(ctx, sizeof *t->added * (size_t)n))) return nomem(ctx);
    srt_status checked = n ? check_added_ids(t, where, added, n) : SRT_OK;
    if (checked != SRT_OK) return checked;
    for (const cJSON *e = n ? added->child : NULL; e; e = e->next) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const char *content = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "content"));
        if (!cJSON_IsNumber(id) || !content || !*content)
            return rt_error(ctx, SRT_ERR_FORMAT, "%s: an added token without a numeric id and a content", where);
        TokAdded a = {.len = strlen(content), .id = (int32_t)id->valuedouble};
        bool single = false, normalized_def;
        if (!get_bool(e, "special", false, &a.special))
            return rt_error(ctx, SRT_ERR_FORMAT, "%s: added token '%s': \"special\" is not a boolean", where, content);
        normalized_def = !a.special; /* HF's AddedToken default */
        if (!get_bool(e, "normalized", normalized_def, &a.normalized) || !get_bool(e, "lstrip", false, &a.lstrip) ||
            !get_bool(e, "rstrip", false, &a.rstrip) || !get_bool(e, "single_word", false, &single))
            return rt_error(ctx, SRT_ERR_FORMAT, "%s: added token '%s': an option that is not a boolean", where, content);
        if (single)
            return rt_error(ctx, SRT_ERR_UNSUPPORTED, "%s: added token '%s': single_word is not supported", where, content);
        if (tok_map_get(&t->vocab, content, a.len) < 0) {
            srt_status st = add_token(t, where, content, id->valuedouble);
            if (st != SRT_OK) return st;
        } else if (!(id->valuedouble >= 0 && id->valuedouble < TOK_MAX_ID))
            return rt_error(ctx, SRT_ERR_FORMAT, "%s: added token '%s' has id %g", where, content, id->valuedouble);
        if (!(a.content = rt_strdup(ctx, content))) return nomem(ctx);
        t->added[t->nadded++] = a;
    }
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* Normalizers, pre-tokenizers, decoders                               */
/* ------------------------------------------------------------------ */

/* The "type" of component o (its kind: "normalizer", ...), or NULL after an error. */
static const char *component_type(srt_context *ctx, const char *where, const char *kind, const cJSON *o) {
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "type"));
    if (!cJSON_IsObject(o) || !type) rt_error(ctx, SRT_ERR_FORMAT, "%s: a %s without a \"type\"", where, kind);
    return cJSON_IsObject(o) ? type : NULL;
}

static srt_status unsupported(srt_context *ctx, const char *where, const char *kind, const char *type, const char *what) {
    return rt_error(ctx, SRT_ERR_UNSUPPORTED, "%s: %s '%s' is not supported (supported: %s)", where, kind, type, what);
}

/* A string member of o (non-empty when nonempty), duplicated into *out; NULL after an error. */
static srt_status get_string(srt_context *ctx, const char *where, const char *kind, const cJSON *o, const char *name,
                             bool nonempty, char **out) {
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
    if (!s || (nonempty && !*s))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: %s: \"%s\" is not a%s string", where, kind, name, nonempty ? " non-empty" : "");
    return (*out = rt_strdup(ctx, s)) ? SRT_OK : nomem(ctx);
}

/* A Replace's "pattern": {"String": s} (a Regex is not supported). */
static srt_status get_pattern(srt_context *ctx, const char *where, const char *kind, const cJSON *o, char **out) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "pattern");
    if (cJSON_GetObjectItemCaseSensitive(p, "Regex"))
        return rt_error(ctx, SRT_ERR_UNSUPPORTED, "%s: %s Replace with a Regex pattern is not supported (only a String)",
                        where, kind);
    return get_string(ctx, where, kind, p, "String", true, out);
}

/* Grows *arr (of *n elements of size sz) by one zeroed element; NULL: out of memory. */
static void *append(srt_context *ctx, void **arr, int *n, size_t sz) {
    char *p = rt_realloc(ctx, *arr, sz * (size_t)(*n + 1));
    if (!p) return NULL;
    *arr = p;
    memset(p + sz * (size_t)*n, 0, sz);
    return p + sz * (size_t)(*n)++;
}

static srt_status load_normalizer(srt_tokenizer *t, const char *where, const cJSON *o) {
    srt_context *ctx = t->ctx;
    if (!o || cJSON_IsNull(o)) return SRT_OK;
    const char *type = component_type(ctx, where, "normalizer", o);
    if (!type) return SRT_ERR_FORMAT;
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "normalizers");
        if (!cJSON_IsArray(list)) return rt_error(ctx, SRT_ERR_FORMAT, "%s: normalizer Sequence without \"normalizers\"", where);
        for (const cJSON *e = list->child; e; e = e->next) {
            srt_status st = load_normalizer(t, where, e);
            if (st != SRT_OK) return st;
        }
        return SRT_OK;
    }
    bool prepend = strcmp(type, "Prepend") == 0, replace = strcmp(type, "Replace") == 0, nfc = strcmp(type, "NFC") == 0;
    if (!prepend && !replace && !nfc)
        return unsupported(ctx, where, "normalizer", type, "Prepend, Replace with a String pattern, NFC, Sequence of them");
    TokNormalizer *n = append(ctx, (void **)&t->norm, &t->nnorm, sizeof *n);
    if (!n) return nomem(ctx);
    n->kind = prepend ? TOK_NORM_PREPEND : replace ? TOK_NORM_REPLACE : TOK_NORM_NFC;
    if (nfc) return SRT_OK;
    if (prepend) return get_string(ctx, where, "normalizer Prepend", o, "prepend", false, &n->content);
    srt_status st = get_pattern(ctx, where, "normalizer", o, &n->pattern);
    return st == SRT_OK ? get_string(ctx, where, "normalizer Replace", o, "content", false, &n->content) : st;
}

/* Metaspace's "replacement" (one character) into out[5]. */
static srt_status get_replacement(srt_context *ctx, const char *where, const char *kind, const cJSON *o, char out[5]) {
    const char *r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "replacement"));
    uint32_t c;
    size_t l = r ? tok_utf8_decode((const unsigned char *)r, strlen(r), 0, &c) : 0;
    if (!l || l != strlen(r))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: %s Metaspace: \"replacement\" is not one character", where, kind);
    memcpy(out, r, l + 1);
    return SRT_OK;
}

/* Metaspace's prefix: "prepend_scheme" ("always", "first", "never"; absent: always) and the older
 * "add_prefix_space" (false: never), into *out. */
static srt_status get_prepend(srt_context *ctx, const char *where, const char *kind, const cJSON *o, TokPrepend *out) {
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "prepend_scheme"));
    bool add = true;
    if (!get_bool(o, "add_prefix_space", true, &add))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: %s Metaspace: \"add_prefix_space\" is not a boolean", where, kind);
    if (!s || strcmp(s, "always") == 0) *out = TOK_PREPEND_ALWAYS;
    else if (strcmp(s, "first") == 0) *out = TOK_PREPEND_FIRST;
    else if (strcmp(s, "never") == 0) *out = TOK_PREPEND_NEVER;
    else return rt_error(ctx, SRT_ERR_FORMAT, "%s: %s Metaspace: prepend_scheme '%s' (expected always, first or never)",
                         where, kind, s);
    if (!add) *out = TOK_PREPEND_NEVER;
    return SRT_OK;
}

static srt_status load_pre_tokenizer(srt_tokenizer *t, const char *where, const cJSON *o) {
    srt_context *ctx = t->ctx;
    if (!o || cJSON_IsNull(o)) return SRT_OK;
    const char *type = component_type(ctx, where, "pre-tokenizer", o);
    if (!type) return SRT_ERR_FORMAT;
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "pretokenizers");
        if (!cJSON_IsArray(list))
            return rt_error(ctx, SRT_ERR_FORMAT, "%s: pre-tokenizer Sequence without \"pretokenizers\"", where);
        for (const cJSON *e = list->child; e; e = e->next) {
            srt_status st = load_pre_tokenizer(t, where, e);
            if (st != SRT_OK) return st;
        }
        return SRT_OK;
    }
    bool bytelevel = strcmp(type, "ByteLevel") == 0, metaspace = strcmp(type, "Metaspace") == 0;
    if (!bytelevel && !metaspace) return unsupported(ctx, where, "pre-tokenizer", type, "ByteLevel, Metaspace, Sequence of them");
    TokPreTokenizer *p = append(ctx, (void **)&t->pre, &t->npre, sizeof *p);
    if (!p) return nomem(ctx);
    if (bytelevel) {
        p->kind = TOK_PRE_BYTELEVEL;
        if (!get_bool(o, "add_prefix_space", true, &p->add_prefix_space) || !get_bool(o, "use_regex", true, &p->use_regex))
            return rt_error(ctx, SRT_ERR_FORMAT, "%s: pre-tokenizer ByteLevel: an option that is not a boolean", where);
        return SRT_OK;
    }
    p->kind = TOK_PRE_METASPACE;
    srt_status st = get_replacement(ctx, where, "pre-tokenizer", o, p->replacement);
    if (st == SRT_OK) st = get_prepend(ctx, where, "pre-tokenizer", o, &p->prepend);
    if (st == SRT_OK && !get_bool(o, "split", true, &p->split))
        st = rt_error(ctx, SRT_ERR_FORMAT, "%s: pre-tokenizer Metaspace: \"split\" is not a boolean", where);
    return st;
}

/* An integer member of o in [0, 1000] (absent: def) into *out. */
static bool get_count(const cJSON *o, const char *name, int def, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!v) return *out = def, true;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1000 || v->valuedouble != (int)v->valuedouble)
        return false;
    *out = (int)v->valuedouble;
    return true;
}

/* The decoder steps of one non-Sequence decoder o of the given type. */
static srt_status load_decoder_step(srt_tokenizer *t, const char *where, const char *type, const cJSON *o) {
    srt_context *ctx = t->ctx;
    static const char *const names[] = {"ByteLevel", "Metaspace", "Replace", "ByteFallback", "Fuse", "Strip"};
    int kind = -1;
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (strcmp(type, names[i]) == 0) kind = i;
    if (kind < 0)
        return unsupported(ctx, where, "decoder", type, "ByteLevel, Metaspace, Replace with a String pattern, "
                           "ByteFallback, Fuse, Strip, Sequence of them");
    TokDecoder *d = append(ctx, (void **)&t->dec, &t->ndec, sizeof *d);
    if (!d) return nomem(ctx);
    d->kind = (TokDecKind)kind;
    srt_status st = SRT_OK;
    if (d->kind == TOK_DEC_METASPACE) {
        char r[5];
        TokPrepend p = TOK_PREPEND_ALWAYS;
        st = get_replacement(ctx, where, "decoder", o, r);
        if (st == SRT_OK) st = get_prepend(ctx, where, "decoder", o, &p);
        if (st == SRT_OK && !(d->content = rt_strdup(ctx, r))) st = nomem(ctx);
        d->strip_prefix = p != TOK_PREPEND_NEVER;
    } else if (d->kind == TOK_DEC_REPLACE) {
        st = get_pattern(ctx, where, "decoder", o, &d->pattern);
        if (st == SRT_OK) st = get_string(ctx, where, "decoder Replace", o, "content", false, &d->content);
    } else if (d->kind == TOK_DEC_STRIP) {
        st = get_string(ctx, where, "decoder Strip", o, "content", true, &d->content);
        uint32_t c;
        if (st == SRT_OK && tok_utf8_decode((const unsigned char *)d->content, strlen(d->content), 0, &c) != strlen(d->content))
            st = rt_error(ctx, SRT_ERR_FORMAT, "%s: decoder Strip: \"content\" is not one character", where);
        if (st == SRT_OK && (!get_count(o, "start", 0, &d->start) || !get_count(o, "stop", 0, &d->stop)))
            st = rt_error(ctx, SRT_ERR_FORMAT, "%s: decoder Strip: \"start\" or \"stop\" is not a count", where);
    }
    return st;
}

static srt_status load_decoder(srt_tokenizer *t, const char *where, const cJSON *o) {
    srt_context *ctx = t->ctx;
    const char *type = component_type(ctx, where, "decoder", o);
    if (!type) return SRT_ERR_FORMAT;
    if (strcmp(type, "Sequence") != 0) return load_decoder_step(t, where, type, o);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "decoders");
    if (!cJSON_IsArray(list)) return rt_error(ctx, SRT_ERR_FORMAT, "%s: decoder Sequence without \"decoders\"", where);
    for (const cJSON *e = list->child; e; e = e->next) {
        srt_status st = load_decoder(t, where, e);
        if (st != SRT_OK) return st;
    }
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* The model                                                           */
/* ------------------------------------------------------------------ */

/* model's options besides vocab and merges: unk_token, fuse_unk, byte_fallback, ignore_merges; dropout,
 * continuing_subword_prefix and end_of_word_suffix only when they change nothing. */
static srt_status load_model_options(srt_tokenizer *t, const char *where, const cJSON *model) {
    srt_context *ctx = t->ctx;
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_token");
    const cJSON *dropout = cJSON_GetObjectItemCaseSensitive(model, "dropout");
    if (dropout && !cJSON_IsNull(dropout) && !(cJSON_IsNumber(dropout) && dropout->valuedouble == 0))
        return rt_error(ctx, SRT_ERR_UNSUPPORTED, "%s: model BPE with dropout is not supported (it samples)", where);
    static const char *const affixes[] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int i = 0; i < 2; i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(model, affixes[i]);
        if (a && !cJSON_IsNull(a) && !(cJSON_IsString(a) && !*a->valuestring))
            return rt_error(ctx, SRT_ERR_UNSUPPORTED, "%s: model BPE with a %s is not supported", where, affixes[i]);
    }
    if (!get_bool(model, "fuse_unk", false, &t->fuse_unk) || !get_bool(model, "byte_fallback", false, &t->byte_fallback) ||
        !get_bool(model, "ignore_merges", false, &t->ignore_merges))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: model: an option that is not a boolean", where);
    if (unk && !cJSON_IsNull(unk)) {
        const char *u = cJSON_GetStringValue(unk);
        if (!u || (t->unk_id = tok_map_get(&t->vocab, u, strlen(u))) < 0)
            return rt_error(ctx, SRT_ERR_FORMAT, "%s: model.unk_token is not a token of the vocabulary", where);
    }
    return SRT_OK;
}

/* Parses a JSON file into *root. */
static srt_status read_json(srt_context *ctx, const char *path, cJSON **root) {
    char *text = NULL;
    size_t len = 0;
    srt_status st = rt_read_file(ctx, path, &text, &len);
    if (st != SRT_OK) return st;
    *root = cJSON_ParseWithLength(text, len);
    rt_free(ctx, text);
    return *root ? SRT_OK : rt_error(ctx, SRT_ERR_FORMAT, "%s: not valid JSON", path);
}

/* GPT-2's pipeline: ByteLevel (no prefix space, GPT-2's split) and its decoder. */
static srt_status gpt2_pipeline(srt_tokenizer *t) {
    TokPreTokenizer *p = append(t->ctx, (void **)&t->pre, &t->npre, sizeof *p);
    TokDecoder *d = p ? append(t->ctx, (void **)&t->dec, &t->ndec, sizeof *d) : NULL;
    if (!d) return nomem(t->ctx);
    *p = (TokPreTokenizer){.kind = TOK_PRE_BYTELEVEL, .use_regex = true};
    t->gpt2_passes = true;
    d->kind = TOK_DEC_BYTELEVEL;
    return SRT_OK;
}

/* tokenizer.json's components into t. Without "pre_tokenizer" and "decoder" members (not null: absent)
 * it is GPT-2's pipeline, as vocab.json + merges.txt. */
static srt_status load_tokenizer_json(srt_tokenizer *t, const char *path, const cJSON *root) {
    srt_context *ctx = t->ctx;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(model, "type"));
    if (!cJSON_IsObject(model))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: no \"model\" object (a tokenizer.json; give vocab.json with its "
                        "merges.txt otherwise)", path);
    if (type && strcmp(type, "BPE") != 0)
        return rt_error(ctx, SRT_ERR_UNSUPPORTED, "%s: model type '%s' is not supported (only BPE)", path, type);
    srt_status st = load_vocab(t, path, cJSON_GetObjectItemCaseSensitive(model, "vocab"));
    if (st == SRT_OK) st = load_json_merges(t, path, cJSON_GetObjectItemCaseSensitive(model, "merges"));
    if (st == SRT_OK) st = load_added(t, path, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"));
    if (st == SRT_OK) st = load_model_options(t, path, model);
    if (st == SRT_OK) st = load_normalizer(t, path, cJSON_GetObjectItemCaseSensitive(root, "normalizer"));
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "decoder");
    if (st != SRT_OK) return st;
    if (!pre && !dec) return gpt2_pipeline(t);
    st = load_pre_tokenizer(t, path, pre);
    if (st == SRT_OK && (!dec || cJSON_IsNull(dec))) t->no_decoder = true;
    else if (st == SRT_OK) st = load_decoder(t, path, dec);
    return st;
}

srt_status tok_load_files(srt_tokenizer *t, const char *path, const char *merges_path) {
    cJSON *root = NULL;
    srt_status st = read_json(t->ctx, path, &root);
    if (st != SRT_OK) return st;
    if (merges_path) {
        st = load_vocab(t, path, root);
        if (st == SRT_OK) st = load_merges_txt(t, merges_path);
        if (st == SRT_OK) st = gpt2_pipeline(t);
    } else st = load_tokenizer_json(t, path, root);
    cJSON_Delete(root);
    return st;
}
