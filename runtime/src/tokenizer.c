/*
 * tokenizer.c — GPT-2's byte-level BPE (srt_tokenizer_* in shortrt.h).
 *
 * Loading: a Hugging Face tokenizer.json (model.vocab, model.merges as "a b"
 * strings or ["a", "b"] pairs, added_tokens), or vocab.json + merges.txt
 * (an optional "#version" first line). A merge's rank is its index.
 *
 * Encoding: the text must be UTF-8. It is split into pre-tokens exactly as
 * GPT-2's pattern
 *     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * splits it (leftmost alternative first, greedy; a whitespace run followed
 * by a non-space leaves its last character to the next pre-token), with \p{L}
 * and \p{N} from unicode_classes.c and \s the Unicode White_Space set. Each
 * pre-token's bytes become characters through bytes_to_unicode (the printable
 * Latin-1 bytes stand for themselves, the other 68 for U+0100..U+0143); then
 * the lowest-ranked adjacent pair is merged, every non-overlapping occurrence
 * left to right, until no adjacent pair has a rank, and each symbol is looked
 * up in the vocabulary. Added tokens are not split out of the text (they only
 * decode). Decoding concatenates the tokens' strings and maps each character
 * back to its byte.
 */
#include "rt_internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

/* Largest token id accepted in a vocabulary (the id -> string table is dense). */
#define TOK_MAX_ID (1 << 24)
/* Code points bytes_to_unicode uses are below this. */
#define TOK_BYTE_CHARS 324

/* An open-addressing map from byte strings to int32 values (keys owned). */
typedef struct StrMap {
    char **keys;       /* NUL-terminated keys, NULL in empty slots */
    int32_t *vals;     /* the value of each slot */
    size_t cap;        /* slots (a power of two) */
    size_t n;          /* keys stored */
} StrMap;

struct srt_tokenizer {
    srt_context *ctx;                     /* allocator and errors */
    StrMap vocab;                         /* token string (UTF-8 of byte characters) -> id */
    StrMap merges;                        /* "left right" -> rank */
    char **id_text;                       /* id -> the vocabulary's string (NULL: unused id) */
    int32_t nids;                         /* max id + 1 */
    uint32_t byte_char[256];              /* byte -> its character in bytes_to_unicode */
    int16_t char_byte[TOK_BYTE_CHARS];    /* character -> byte, -1 for none */
};

/* The character classes of the pre-tokenizer. */
typedef enum TokClass {
    TOK_SPACE,   /* Unicode White_Space (\s) */
    TOK_LETTER,  /* general category L* (\p{L}) */
    TOK_NUMBER,  /* general category N* (\p{N}) */
    TOK_OTHER,   /* everything else */
} TokClass;

/* ------------------------------------------------------------------ */
/* StrMap                                                              */
/* ------------------------------------------------------------------ */

static size_t map_slot(const StrMap *m, const char *key, size_t len) {
    size_t i = (size_t)rt_hash64(RT_HASH_SEED, key, len) & (m->cap - 1);
    while (m->keys[i] && (strlen(m->keys[i]) != len || memcmp(m->keys[i], key, len) != 0)) i = (i + 1) & (m->cap - 1);
    return i;
}

/* The value of key[len], or -1. */
static int32_t map_get(const StrMap *m, const char *key, size_t len) {
    if (!m->cap) return -1;
    size_t i = map_slot(m, key, len);
    return m->keys[i] ? m->vals[i] : -1;
}

static bool map_grow(srt_context *ctx, StrMap *m) {
    StrMap big = {rt_alloc(ctx, sizeof(char *) * (m->cap ? m->cap * 2 : 1024)),
                  rt_alloc(ctx, sizeof(int32_t) * (m->cap ? m->cap * 2 : 1024)), m->cap ? m->cap * 2 : 1024, 0};
    if (!big.keys || !big.vals) {
        rt_free(ctx, big.keys);
        rt_free(ctx, big.vals);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = map_slot(&big, m->keys[i], strlen(m->keys[i]));
        big.keys[j] = m->keys[i];
        big.vals[j] = m->vals[i];
        big.n++;
    }
    rt_free(ctx, m->keys);
    rt_free(ctx, m->vals);
    *m = big;
    return true;
}

/* Sets key[len] to val (a later value replaces an earlier one). false: out of memory. */
static bool map_put(srt_context *ctx, StrMap *m, const char *key, size_t len, int32_t val) {
    if ((m->n + 1) * 2 > m->cap && !map_grow(ctx, m)) return false;
    size_t i = map_slot(m, key, len);
    if (!m->keys[i]) {
        if (!(m->keys[i] = rt_strndup(ctx, key, len))) return false;
        m->n++;
    }
    m->vals[i] = val;
    return true;
}

static void map_free(srt_context *ctx, StrMap *m) {
    for (size_t i = 0; i < m->cap; i++) rt_free(ctx, m->keys[i]);
    rt_free(ctx, m->keys);
    rt_free(ctx, m->vals);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------ */
/* UTF-8 and character classes                                         */
/* ------------------------------------------------------------------ */

/* Decodes the code point at s[i..n); returns its length in bytes, 0 when the bytes are not UTF-8
 * (overlong forms, surrogates and values past U+10FFFF included). */
static size_t utf8_decode(const unsigned char *s, size_t n, size_t i, uint32_t *cp) {
    unsigned c = s[i];
    size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (!len || i + len > n) return 0;
    uint32_t v = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
    for (size_t k = 1; k < len; k++) {
        if ((s[i + k] & 0xc0) != 0x80) return 0;
        v = v << 6 | (s[i + k] & 0x3f);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < least[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return len;
}

/* Writes cp as UTF-8 to out; returns its length. */
static size_t utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xc0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
    out[0] = (char)(0xe0 | cp >> 12);
    out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
}

static bool in_ranges(const uint32_t (*r)[2], int n, uint32_t cp) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < r[mid][0]) hi = mid - 1;
        else if (cp > r[mid][1]) lo = mid + 1;
        else return true;
    }
    return false;
}

static bool is_white_space(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f ||
           cp == 0x3000;
}

static TokClass char_class(uint32_t cp) {
    if (is_white_space(cp)) return TOK_SPACE;
    if (in_ranges(rt_unicode_letters, rt_unicode_letters_count, cp)) return TOK_LETTER;
    if (in_ranges(rt_unicode_numbers, rt_unicode_numbers_count, cp)) return TOK_NUMBER;
    return TOK_OTHER;
}

/* ------------------------------------------------------------------ */
/* Pre-tokenizer                                                       */
/* ------------------------------------------------------------------ */

/* Length of the contraction ('s 't 're 've 'm 'll 'd) at cp[i..n), or 0. */
static size_t contraction(const uint32_t *cp, size_t n, size_t i) {
    if (cp[i] != '\'' || i + 1 >= n) return 0;
    uint32_t a = cp[i + 1], b = i + 2 < n ? cp[i + 2] : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

/* The end (exclusive, in code points) of the pre-token that starts at cls/cp[i], i < n. */
static size_t pretoken_end(const uint32_t *cp, const unsigned char *cls, size_t n, size_t i) {
    size_t c = contraction(cp, n, i);
    if (c) return i + c;
    size_t j = cp[i] == ' ' && i + 1 < n && cls[i + 1] != TOK_SPACE ? i + 1 : i; /* the optional space */
    if (cls[j] != TOK_SPACE) {
        size_t k = j + 1;
        while (k < n && cls[k] == cls[j]) k++;
        return k;
    }
    size_t k = i;
    while (k < n && cls[k] == TOK_SPACE) k++;
    if (k == n || k - i == 1) return k; /* \s+(?!\S) at the end, or the single-character \s+ */
    return k - 1;                        /* \s+(?!\S) backs off one character before the non-space */
}

/* ------------------------------------------------------------------ */
/* BPE                                                                 */
/* ------------------------------------------------------------------ */

/* A symbol of a word during merging: bytes [start, start + len) of the mapped word. */
typedef struct Sym {
    uint32_t start;  /* offset in the mapped word */
    uint32_t len;    /* bytes (0: merged into the symbol on its left) */
} Sym;

/* A candidate merge: the pair of symbol `pos` and its right neighbour, as they were when it was found. */
typedef struct MergeCand {
    int32_t rank;    /* the pair's merge rank */
    uint32_t pos;    /* index of the left symbol (the heap's second key: left to right) */
    uint32_t llen;   /* the left symbol's length then (a later merge grows it: the candidate is stale) */
    uint32_t rlen;   /* the right symbol's length then */
} MergeCand;

/* Scratch buffers of one encode call. */
typedef struct Scratch {
    char *word;        /* the pre-token's bytes mapped to characters (UTF-8) */
    Sym *syms;         /* its symbols, by first character */
    char *key;         /* "left right" lookup key */
    int32_t *prev;     /* prev[i]: the live symbol left of symbol i (-1: none) */
    int32_t *next;     /* next[i]: the live symbol right of symbol i (-1: none) */
    MergeCand *heap;   /* min-heap of candidates by (rank, pos) */
    MergeCand *later;  /* candidates of a rank at or below the one being merged: after its pass */
    size_t cap;        /* bytes of the pre-token these hold room for */
} Scratch;

/* Resizes *p to cap elements of size sz (kept on failure). */
static bool grow(srt_context *ctx, void **p, size_t cap, size_t sz) {
    void *q = rt_realloc(ctx, *p, sz * cap);
    if (q) *p = q;
    return q != NULL;
}

static bool scratch_fit(srt_context *ctx, Scratch *sc, size_t bytes) {
    if (bytes <= sc->cap) return true;
    size_t cap = bytes * 2; /* a merge adds at most two candidates: 3 per symbol in all */
    if (!grow(ctx, (void **)&sc->word, cap * 2 + 1, 1) || !grow(ctx, (void **)&sc->syms, cap, sizeof *sc->syms) ||
        !grow(ctx, (void **)&sc->key, cap * 2 + 2, 1) || !grow(ctx, (void **)&sc->prev, cap, sizeof *sc->prev) ||
        !grow(ctx, (void **)&sc->next, cap, sizeof *sc->next) || !grow(ctx, (void **)&sc->heap, 3 * cap, sizeof *sc->heap) ||
        !grow(ctx, (void **)&sc->later, 3 * cap, sizeof *sc->later))
        return false;
    sc->cap = cap;
    return true;
}

static void scratch_free(srt_context *ctx, Scratch *sc) {
    rt_free(ctx, sc->word);
    rt_free(ctx, sc->syms);
    rt_free(ctx, sc->key);
    rt_free(ctx, sc->prev);
    rt_free(ctx, sc->next);
    rt_free(ctx, sc->heap);
    rt_free(ctx, sc->later);
}

/* The merge rank of syms a, b of word, or -1. */
static int32_t pair_rank(const srt_tokenizer *t, Scratch *sc, Sym a, Sym b) {
    memcpy(sc->key, sc->word + a.start, a.len);
    sc->key[a.len] = ' ';
    memcpy(sc->key + a.len + 1, sc->word + b.start, b.len);
    return map_get(&t->merges, sc->key, (size_t)a.len + 1 + b.len);
}

static bool cand_less(const MergeCand *a, const MergeCand *b) {
    return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

static void heap_push(MergeCand *h, size_t *n, MergeCand c) {
    size_t i = (*n)++;
    for (; i > 0 && cand_less(&c, &h[(i - 1) / 2]); i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
    h[i] = c;
}

static MergeCand heap_pop(MergeCand *h, size_t *n) {
    MergeCand top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && cand_less(&h[c + 1], &h[c])) c++;
        if (!cand_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

/* Whether candidate c still names two adjacent live symbols of the lengths it saw. */
static bool cand_live(const Scratch *sc, const MergeCand *c) {
    int32_t r = sc->next[c->pos];
    return sc->syms[c->pos].len == c->llen && r >= 0 && sc->syms[r].len == c->rlen;
}

/* The candidate of symbol a and its right neighbour b, if that pair has a rank: into the heap, or, when its
 * rank is at or below cur (the pass being merged), into later. */
static void add_cand(const srt_tokenizer *t, Scratch *sc, int32_t a, int32_t b, int32_t cur, size_t *nh, size_t *nl) {
    if (a < 0 || b < 0) return;
    int32_t r = pair_rank(t, sc, sc->syms[a], sc->syms[b]);
    MergeCand c = {r, (uint32_t)a, sc->syms[a].len, sc->syms[b].len};
    if (r < 0) return;
    if (cur >= 0 && r <= cur) sc->later[(*nl)++] = c;
    else heap_push(sc->heap, nh, c);
}

/*
 * Merges syms[0..*n) as GPT-2's bpe() does (the lowest-ranked pair, all its occurrences left to right
 * without overlaps, again until no pair has a rank) in O(n log n), as Hugging Face tokenizers: a min-heap
 * of candidates keyed by (rank, position) over a doubly linked list of symbols, stale candidates skipped
 * when popped. A merge's new pairs of a rank at or below the current one wait for the end of its pass, as
 * bpe() looks them up only after the pass (merges out of learning order can rank them lower).
 */
static void bpe_merge(const srt_tokenizer *t, Scratch *sc, size_t *n) {
    size_t nh = 0, nl = 0;
    for (size_t i = 0; i < *n; i++) {
        sc->prev[i] = (int32_t)i - 1;
        sc->next[i] = i + 1 < *n ? (int32_t)i + 1 : -1;
    }
    for (size_t i = 0; i + 1 < *n; i++) add_cand(t, sc, (int32_t)i, (int32_t)i + 1, -1, &nh, &nl);
    int32_t cur = -1;
    for (;;) {
        while (nh && !cand_live(sc, &sc->heap[0])) heap_pop(sc->heap, &nh);
        if (!nh || sc->heap[0].rank != cur) { /* the pass of rank cur is over */
            if (nl) {
                for (size_t k = 0; k < nl; k++) heap_push(sc->heap, &nh, sc->later[k]);
                nl = 0;
                continue;
            }
            if (!nh) break;
            cur = sc->heap[0].rank;
        }
        MergeCand c = heap_pop(sc->heap, &nh);
        int32_t a = (int32_t)c.pos, b = sc->next[a];
        sc->syms[a].len += sc->syms[b].len;
        sc->syms[b].len = 0;
        sc->next[a] = sc->next[b];
        if (sc->next[b] >= 0) sc->prev[sc->next[b]] = a;
        add_cand(t, sc, sc->prev[a], a, cur, &nh, &nl);
        add_cand(t, sc, a, sc->next[a], cur, &nh, &nl);
    }
    size_t out = 0;
    for (int32_t i = *n ? 0 : -1; i >= 0; i = sc->next[i]) sc->syms[out++] = sc->syms[i];
    *n = out;
}

int32_t rt_tokenizer_merge_rank(const srt_tokenizer *t, const char *left, size_t llen, const char *right, size_t rlen) {
    char *key = rt_alloc(t->ctx, llen + rlen + 2);
    if (!key) return -1;
    memcpy(key, left, llen);
    key[llen] = ' ';
    memcpy(key + llen + 1, right, rlen);
    int32_t r = map_get(&t->merges, key, llen + 1 + rlen);
    rt_free(t->ctx, key);
    return r;
}

size_t rt_tokenizer_bpe(srt_tokenizer *t, const char *word, uint32_t *len, size_t n) {
    Scratch sc = {0};
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += len[i];
    if (!scratch_fit(t->ctx, &sc, bytes > n ? bytes : n)) {
        scratch_free(t->ctx, &sc);
        return 0;
    }
    memcpy(sc.word, word, bytes);
    for (size_t i = 0, at = 0; i < n; at += len[i++]) sc.syms[i] = (Sym){(uint32_t)at, len[i]};
    bpe_merge(t, &sc, &n);
    for (size_t i = 0; i < n; i++) len[i] = sc.syms[i].len;
    scratch_free(t->ctx, &sc);
    return n;
}

/* Appends id to the growing array *ids (*n used, *cap slots). */
static bool push_id(srt_context *ctx, int32_t **ids, size_t *n, size_t *cap, int32_t id) {
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        int32_t *p = rt_realloc(ctx, *ids, sizeof *p * c);
        if (!p) return false;
        *ids = p;
        *cap = c;
    }
    (*ids)[(*n)++] = id;
    return true;
}

/* Encodes the bytes text[a, b) of one pre-token, appending its ids. */
static srt_status encode_word(srt_tokenizer *t, Scratch *sc, const unsigned char *text, size_t a, size_t b,
                              int32_t **ids, size_t *n, size_t *cap) {
    srt_context *ctx = t->ctx;
    if (!scratch_fit(ctx, sc, b - a)) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    size_t wl = 0, ns = 0;
    for (size_t i = a; i < b; i++) {
        size_t l = utf8_encode(t->byte_char[text[i]], sc->word + wl);
        sc->syms[ns++] = (Sym){(uint32_t)wl, (uint32_t)l};
        wl += l;
    }
    bpe_merge(t, sc, &ns);
    for (size_t i = 0; i < ns; i++) {
        int32_t id = map_get(&t->vocab, sc->word + sc->syms[i].start, sc->syms[i].len);
        if (id < 0)
            return rt_error(ctx, SRT_ERR_FORMAT, "the vocabulary has no token for '%.*s' (bytes %zu..%zu of the text)",
                            (int)sc->syms[i].len, sc->word + sc->syms[i].start, a, b);
        if (!push_id(ctx, ids, n, cap, id)) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    }
    return SRT_OK;
}

/* Decodes text into code points, their classes and byte offsets (off[n] = len). */
static srt_status decode_text(srt_context *ctx, const unsigned char *text, size_t len, uint32_t *cp,
                              unsigned char *cls, size_t *off, size_t *n) {
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        size_t l = utf8_decode(text, len, i, &cp[k]);
        if (!l) return rt_error(ctx, SRT_ERR_FORMAT, "the text is not UTF-8 at byte %zu (0x%02x)", i, text[i]);
        cls[k] = (unsigned char)char_class(cp[k]);
        off[k++] = i;
        i += l;
    }
    off[k] = len;
    *n = k;
    return SRT_OK;
}

srt_status srt_tokenizer_encode(srt_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *nids) {
    if (!t || (!text && len) || !ids || !nids) return t ? rt_error(t->ctx, SRT_ERR_INVALID, "srt_tokenizer_encode: NULL argument") : SRT_ERR_INVALID;
    srt_context *ctx = t->ctx;
    *ids = NULL;
    *nids = 0;
    uint32_t *cp = rt_alloc(ctx, sizeof *cp * (len + 1));
    unsigned char *cls = rt_alloc(ctx, len + 1);
    size_t *off = rt_alloc(ctx, sizeof *off * (len + 1));
    Scratch sc = {0};
    int32_t *out = NULL;
    size_t n = 0, cap = 0, ncp = 0;
    srt_status st = cp && cls && off ? SRT_OK : rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    if (st == SRT_OK) st = decode_text(ctx, (const unsigned char *)text, len, cp, cls, off, &ncp);
    for (size_t i = 0; st == SRT_OK && i < ncp;) {
        size_t e = pretoken_end(cp, cls, ncp, i);
        st = encode_word(t, &sc, (const unsigned char *)text, off[i], off[e], &out, &n, &cap);
        i = e;
    }
    rt_free(ctx, cp);
    rt_free(ctx, cls);
    rt_free(ctx, off);
    scratch_free(ctx, &sc);
    if (st != SRT_OK) {
        rt_free(ctx, out);
        return st;
    }
    *ids = out;
    *nids = n;
    return SRT_OK;
}

srt_status srt_tokenizer_decode(srt_tokenizer *t, const int32_t *ids, size_t n, char **text, size_t *len) {
    if (!t || (!ids && n) || !text || !len) return t ? rt_error(t->ctx, SRT_ERR_INVALID, "srt_tokenizer_decode: NULL argument") : SRT_ERR_INVALID;
    srt_context *ctx = t->ctx;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->nids || !t->id_text[ids[i]])
            return rt_error(ctx, SRT_ERR_INVALID, "token %zu: id %d is not in the vocabulary", i, (int)ids[i]);
        total += strlen(t->id_text[ids[i]]);
    }
    char *out = rt_alloc(ctx, total + 1);
    if (!out) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *s = (const unsigned char *)t->id_text[ids[i]];
        size_t sl = strlen((const char *)s);
        for (size_t j = 0; j < sl;) {
            uint32_t c = 0;
            size_t l = utf8_decode(s, sl, j, &c);
            if (!l || c >= TOK_BYTE_CHARS || t->char_byte[c] < 0) {
                rt_free(ctx, out);
                return rt_error(ctx, SRT_ERR_FORMAT, "token %d ('%s') holds a character outside the byte alphabet",
                                (int)ids[i], (const char *)s);
            }
            out[k++] = (char)t->char_byte[c];
            j += l;
        }
    }
    out[k] = 0;
    *text = out;
    *len = k;
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the rest for 256, 257, ... */
static void init_byte_map(srt_tokenizer *t) {
    uint32_t next = 256;
    memset(t->char_byte, 0xff, sizeof t->char_byte);
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
        t->byte_char[b] = printable ? (uint32_t)b : next++;
        t->char_byte[t->byte_char[b]] = (int16_t)b;
    }
}

/* Adds token key -> id to the vocabulary and the id table. */
static srt_status add_token(srt_tokenizer *t, const char *where, const char *key, double id) {
    srt_context *ctx = t->ctx;
    if (!(id >= 0 && id < TOK_MAX_ID && id == (double)(int32_t)id))
        return rt_error(ctx, SRT_ERR_FORMAT, "%s: token '%s' has id %g (expected an integer 0 to %d)", where, key, id,
                        TOK_MAX_ID - 1);
    int32_t i = (int32_t)id;
    if (!*key) return rt_error(ctx, SRT_ERR_FORMAT, "%s: an empty token (id %d)", where, (int)i);
    if (i >= t->nids) {
        char **p = rt_realloc(ctx, t->id_text, sizeof *p * (size_t)(i + 1));
        if (!p) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
        memset(p + t->nids, 0, sizeof *p * (size_t)(i + 1 - t->nids));
        t->id_text = p;
        t->nids = i + 1;
    }
    if (!map_put(ctx, &t->vocab, key, strlen(key), i)) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    if (!t->id_text[i] && !(t->id_text[i] = rt_strdup(ctx, key))) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
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

/* One merge "left right" (len bytes at s) with the given rank. */
static srt_status add_merge(srt_tokenizer *t, const char *where, const char *s, size_t len, int32_t rank) {
    const char *sp = memchr(s, ' ', len);
    if (!sp || sp == s || sp + 1 == s + len || memchr(sp + 1, ' ', (size_t)(s + len - sp - 1)))
        return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: merge %d ('%.*s') is not two tokens separated by one space", where,
                        (int)rank + 1, (int)len, s);
    if (map_get(&t->merges, s, len) >= 0) return SRT_OK; /* a repeated merge keeps its first rank */
    return map_put(t->ctx, &t->merges, s, len, rank) ? SRT_OK : rt_error(t->ctx, SRT_ERR_NOMEM, "out of memory");
}

/* tokenizer.json's model.merges: "a b" strings or ["a", "b"] pairs. */
static srt_status load_json_merges(srt_tokenizer *t, const char *where, const cJSON *merges) {
    if (!cJSON_IsArray(merges)) return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: model.merges is not an array", where);
    int32_t rank = 0;
    char buf[1024];
    for (const cJSON *e = merges->child; e; e = e->next, rank++) {
        const char *s = cJSON_GetStringValue(e);
        size_t len = s ? strlen(s) : 0;
        if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 && cJSON_IsString(e->child) &&
            cJSON_IsString(e->child->next)) {
            int w = snprintf(buf, sizeof buf, "%s %s", e->child->valuestring, e->child->next->valuestring);
            if (w < 0 || (size_t)w >= sizeof buf)
                return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: merge %d is longer than %zu bytes", where, (int)rank + 1,
                                sizeof buf - 1);
            s = buf;
            len = (size_t)w;
        } else if (!s) return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: merge %d is not a string or a pair of strings", where, (int)rank + 1);
        srt_status st = add_merge(t, where, s, len, rank);
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
        if (l && !header) st = add_merge(t, path, text + i, l, rank++);
        i = e + 1;
    }
    rt_free(t->ctx, text);
    return st;
}

/* added_tokens [{"id": N, "content": "..."}]: decodable; not split out of text when encoding. */
static srt_status load_added(srt_tokenizer *t, const char *where, const cJSON *added) {
    for (const cJSON *e = cJSON_IsArray(added) ? added->child : NULL; e; e = e->next) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const char *content = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "content"));
        if (!cJSON_IsNumber(id) || !content)
            return rt_error(t->ctx, SRT_ERR_FORMAT, "%s: an added token without a numeric id and a content", where);
        if (map_get(&t->vocab, content, strlen(content)) >= 0) continue;
        srt_status st = add_token(t, where, content, id->valuedouble);
        if (st != SRT_OK) return st;
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

/* tokenizer.json (merges_path NULL) or vocab.json + merges.txt into t. */
static srt_status load_files(srt_tokenizer *t, const char *path, const char *merges_path) {
    cJSON *root = NULL;
    srt_status st = read_json(t->ctx, path, &root);
    if (st != SRT_OK) return st;
    if (merges_path) {
        st = load_vocab(t, path, root);
        if (st == SRT_OK) st = load_merges_txt(t, merges_path);
    } else {
        const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(model, "type"));
        if (!cJSON_IsObject(model))
            st = rt_error(t->ctx, SRT_ERR_FORMAT, "%s: no \"model\" object (a tokenizer.json; give vocab.json with "
                          "its merges.txt otherwise)", path);
        else if (type && strcmp(type, "BPE") != 0)
            st = rt_error(t->ctx, SRT_ERR_UNSUPPORTED, "%s: model type '%s' (only byte-level BPE is supported)", path, type);
        else st = load_vocab(t, path, cJSON_GetObjectItemCaseSensitive(model, "vocab"));
        if (st == SRT_OK) st = load_json_merges(t, path, cJSON_GetObjectItemCaseSensitive(model, "merges"));
        if (st == SRT_OK) st = load_added(t, path, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"));
    }
    cJSON_Delete(root);
    return st;
}

srt_status srt_tokenizer_open(srt_context *ctx, const char *path, const char *merges_path, srt_tokenizer **out) {
    if (!ctx) return SRT_ERR_INVALID;
    if (!path || !out) return rt_error(ctx, SRT_ERR_INVALID, "srt_tokenizer_open: NULL argument");
    *out = NULL;
    srt_tokenizer *t = rt_alloc(ctx, sizeof *t);
    if (!t) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    t->ctx = ctx;
    init_byte_map(t);
    srt_status st = load_files(t, path, merges_path);
    if (st != SRT_OK) {
        srt_tokenizer_close(t);
        return st;
    }
    *out = t;
    return SRT_OK;
}

int srt_tokenizer_vocab_size(const srt_tokenizer *t) { return t ? t->nids : 0; }

void srt_tokenizer_close(srt_tokenizer *t) {
    if (!t) return;
    srt_context *ctx = t->ctx;
    map_free(ctx, &t->vocab);
    map_free(ctx, &t->merges);
    for (int32_t i = 0; i < t->nids; i++) rt_free(ctx, t->id_text[i]);
    rt_free(ctx, t->id_text);
    rt_free(ctx, t);
}
