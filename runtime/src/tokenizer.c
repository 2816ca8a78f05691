/*
 * tokenizer.c — BPE tokenizers as Hugging Face tokenizers runs them (srt_tokenizer_* in shortrt.h;
 * docs/tokenizer.md). tokenizer_json.c reads the files into the pipeline below.
 *
 * Encoding: the text must be UTF-8. Added tokens are split out first, longest match at the leftmost
 * position (those not "normalized" in the raw text, the others in each normalized piece; special ones
 * stay text with SRT_ENCODE_SPECIAL_AS_TEXT). Each other piece is normalized (Prepend, Replace, NFC), then
 * pre-tokenized into words:
 *   - ByteLevel: an optional ' ' prefix; a split exactly as GPT-2's pattern
 *         's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *     splits (leftmost alternative first, greedy; a whitespace run followed by a non-space leaves its
 *     last character to the next word), with \p{L} and \p{N} from the generated unicode_classes.c and \s
 *     the Unicode White_Space set; each byte then becomes its character of bytes_to_unicode (the
 *     printable Latin-1 bytes stand for themselves, the other 68 for U+0100..U+0143);
 *   - Metaspace: ' ' becomes the replacement (U+2581), prepended by its scheme, and the word is split
 *     before each replacement.
 * BPE then starts each word from its characters (a character not in the vocabulary: its <0xNN> tokens
 * with byte_fallback, else the unk token), merges the lowest-ranked adjacent pair, every
 * non-overlapping occurrence left to right, until no adjacent pair has a rank, and looks each symbol up.
 * Decoding runs the decoder steps (ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip) over the
 * tokens' strings and concatenates them.
 */
#include "tokenizer_internal.h"

#include <stdio.h>
#include <string.h>

/* The character classes of the GPT-2 pattern. */
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

int32_t tok_map_get(const StrMap *m, const char *key, size_t len) {
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

bool tok_map_put(srt_context *ctx, StrMap *m, const char *key, size_t len, int32_t val) {
    if ((m->n + 1) * 2 > m->cap && !map_grow(ctx, m)) return false;
    size_t i = map_slot(m, key, len);
    if (!m->keys[i]) {
        if (!(m->keys[i] = rt_strndup(ctx, key, len))) return false;
        m->n++;
    }
    m->vals[i] = val;
    return true;
}

void tok_map_free(srt_context *ctx, StrMap *m) {
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
size_t tok_utf8_decode(const unsigned char *s, size_t n, size_t i, uint32_t *cp) {
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
size_t tok_utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xc0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
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
    char *word;        /* the word's initial symbols, one after another (UTF-8) */
    Sym *syms;         /* its symbols */
    char *key;         /* "left" TOK_MERGE_SEP "right" lookup key */
    int32_t *prev;     /* prev[i]: the live symbol left of symbol i (-1: none) */
    int32_t *next;     /* next[i]: the live symbol right of symbol i (-1: none) */
    MergeCand *heap;   /* min-heap of candidates by (rank, pos) */
    MergeCand *later;  /* GPT-2's passes: candidates of a rank at or below the one being merged, after its pass */
    size_t bytes_cap;  /* bytes word and key hold room for (a key: two symbols and a separator) */
    size_t syms_cap;   /* symbols syms, prev, next (and 3 x candidates heap, later) hold room for */
} Scratch;

/* Resizes *p to cap elements of size sz (kept on failure). */
static bool grow(srt_context *ctx, void **p, size_t cap, size_t sz) {
    void *q = rt_realloc(ctx, *p, sz * cap);
    if (q) *p = q;
    return q != NULL;
}

/* Room in sc for a word of `bytes` bytes and `nsyms` initial symbols. */
static bool scratch_fit(srt_context *ctx, Scratch *sc, size_t bytes, size_t nsyms) {
    if (bytes > sc->bytes_cap) {
        size_t cap = bytes + bytes / 2 + 16;
        if (!grow(ctx, (void **)&sc->word, cap + 1, 1) || !grow(ctx, (void **)&sc->key, cap + 2, 1)) return false;
        sc->bytes_cap = cap;
    }
    if (nsyms > sc->syms_cap) {
        size_t cap = nsyms + nsyms / 2 + 16; /* a merge adds at most two candidates: 3 per symbol in all */
        if (!grow(ctx, (void **)&sc->syms, cap, sizeof *sc->syms) || !grow(ctx, (void **)&sc->prev, cap, sizeof *sc->prev) ||
            !grow(ctx, (void **)&sc->next, cap, sizeof *sc->next) || !grow(ctx, (void **)&sc->heap, 3 * cap, sizeof *sc->heap) ||
            !grow(ctx, (void **)&sc->later, 3 * cap, sizeof *sc->later))
            return false;
        sc->syms_cap = cap;
    }
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
    sc->key[a.len] = TOK_MERGE_SEP;
    memcpy(sc->key + a.len + 1, sc->word + b.start, b.len);
    return tok_map_get(&t->merges, sc->key, (size_t)a.len + 1 + b.len);
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

/* Whether candidate c is still to be merged. GPT-2's passes: its two symbols are adjacent and live with the
 * lengths it saw. HF's merge_all: the symbol at its position is live and, with its right neighbour, forms a
 * pair that has a rank and makes the same token (the same bytes), though perhaps split otherwise. */
static bool cand_live(const srt_tokenizer *t, Scratch *sc, const MergeCand *c) {
    int32_t r = sc->next[c->pos];
    if (t->gpt2_passes) return sc->syms[c->pos].len == c->llen && r >= 0 && sc->syms[r].len == c->rlen;
    return sc->syms[c->pos].len && r >= 0 && sc->syms[c->pos].len + sc->syms[r].len == c->llen + c->rlen &&
           pair_rank(t, sc, sc->syms[c->pos], sc->syms[r]) >= 0;
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
 * Merges syms[0..*n) in O(n log n), as Hugging Face tokenizers: a min-heap of candidates keyed by (rank,
 * position) over a doubly linked list of symbols, stale candidates skipped when popped. With
 * t->gpt2_passes it is GPT-2's bpe() (the lowest-ranked pair, all its occurrences left to right without
 * overlaps, again until no pair has a rank): a merge's new pairs of a rank at or below the current one wait
 * for the end of its pass, as bpe() looks them up only after the pass. Otherwise it is HF's merge_all, where
 * they are merged at once. The two differ only for merges out of learning order.
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
        while (nh && !cand_live(t, sc, &sc->heap[0])) heap_pop(sc->heap, &nh);
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
        int32_t wait = t->gpt2_passes ? cur : -1; /* new pairs of rank <= wait wait for the pass's end */
        add_cand(t, sc, sc->prev[a], a, wait, &nh, &nl);
        add_cand(t, sc, a, sc->next[a], wait, &nh, &nl);
    }
    size_t out = 0;
    for (int32_t i = *n ? 0 : -1; i >= 0; i = sc->next[i]) sc->syms[out++] = sc->syms[i];
    *n = out;
}

int32_t rt_tokenizer_merge_rank(const srt_tokenizer *t, const char *left, size_t llen, const char *right, size_t rlen) {
    char *key = rt_alloc(t->ctx, llen + rlen + 2);
    if (!key) return -1;
    memcpy(key, left, llen);
    key[llen] = TOK_MERGE_SEP;
    memcpy(key + llen + 1, right, rlen);
    int32_t r = tok_map_get(&t->merges, key, llen + 1 + rlen);
    rt_free(t->ctx, key);
    return r;
}

size_t rt_tokenizer_bpe(srt_tokenizer *t, const char *word, uint32_t *len, size_t n) {
    Scratch sc = {0};
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += len[i];
    if (!scratch_fit(t->ctx, &sc, bytes, n)) {
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


/* ------------------------------------------------------------------ */
/* Growing buffers                                                     */
/* ------------------------------------------------------------------ */

/* A growing byte string. */
typedef struct Buf {
    char *p;     /* the bytes, NUL-terminated once anything was put */
    size_t n;    /* bytes used */
    size_t cap;  /* bytes allocated */
} Buf;

static bool buf_put(srt_context *ctx, Buf *b, const char *s, size_t len) {
    if (b->n + len + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 64;
        while (c < b->n + len + 1) c *= 2;
        char *p = rt_realloc(ctx, b->p, c);
        if (!p) return false;
        b->p = p;
        b->cap = c;
    }
    if (len) memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = 0;
    return true;
}

/* The bytes of one word in a Words' text. */
typedef struct Span {
    size_t off;  /* first byte */
    size_t len;  /* bytes */
} Span;

/* A list of words sharing one buffer. */
typedef struct Words {
    Buf text;    /* the words' bytes, one after another */
    Span *w;     /* each word */
    size_t n;    /* words */
    size_t cap;  /* room in w */
    bool *first; /* first[i]: word i starts the text (Metaspace's "first" scheme) */
} Words;

/* Starts a new, empty word (at_start: it starts the text). */
static bool words_open(srt_context *ctx, Words *ws, bool at_start) {
    if (ws->n == ws->cap) {
        size_t c = ws->cap ? ws->cap * 2 : 16;
        if (!grow(ctx, (void **)&ws->w, c, sizeof *ws->w) || !grow(ctx, (void **)&ws->first, c, sizeof *ws->first))
            return false;
        ws->cap = c;
    }
    ws->w[ws->n] = (Span){ws->text.n, 0};
    ws->first[ws->n++] = at_start;
    return true;
}

/* Appends s[len] to the last word. */
static bool words_put(srt_context *ctx, Words *ws, const char *s, size_t len) {
    if (!buf_put(ctx, &ws->text, s, len)) return false;
    ws->w[ws->n - 1].len += len;
    return true;
}

/* Ends the last word, dropping it when empty. */
static void words_close(Words *ws) {
    if (ws->n && !ws->w[ws->n - 1].len) ws->n--;
}

static void words_clear(Words *ws) {
    ws->text.n = 0;
    ws->n = 0;
}

static void words_free(srt_context *ctx, Words *ws) {
    rt_free(ctx, ws->text.p);
    rt_free(ctx, ws->w);
    rt_free(ctx, ws->first);
}

/* The state of one encode call. */
typedef struct Enc {
    srt_tokenizer *t;   /* the tokenizer */
    unsigned flags;     /* SRT_ENCODE_* */
    Scratch sc;         /* BPE's buffers */
    int32_t *ids;       /* ids so far */
    size_t n, cap;      /* ids used and room */
    Words a, b;         /* the pre-tokenizer's words: a step reads one and writes the other */
    Buf norm;           /* a piece normalized */
    Buf tmp;            /* a word's initial symbols (BPE), a word with its prefix (pre-tokenizers) */
    uint32_t *symlen;   /* bytes of each initial symbol in tmp */
    uint32_t *cp;       /* a word's code points (ByteLevel's split) */
    unsigned char *cls; /* their classes */
    size_t *off;        /* their byte offsets (off[n]: the word's length) */
    size_t cpcap;       /* room in symlen, cp, cls, off */
} Enc;

static srt_status nomem(srt_context *ctx) { return rt_error(ctx, SRT_ERR_NOMEM, "out of memory"); }

/* Room for n code points (or symbols) in e's per-word arrays. */
static bool enc_fit(Enc *e, size_t n) {
    srt_context *ctx = e->t->ctx;
    if (n + 1 <= e->cpcap) return true;
    size_t c = (n + 1) * 2;
    if (!grow(ctx, (void **)&e->symlen, c, sizeof *e->symlen) || !grow(ctx, (void **)&e->cp, c, sizeof *e->cp) ||
        !grow(ctx, (void **)&e->cls, c, 1) || !grow(ctx, (void **)&e->off, c, sizeof *e->off))
        return false;
    e->cpcap = c;
    return true;
}

static void enc_free(Enc *e) {
    srt_context *ctx = e->t->ctx;
    scratch_free(ctx, &e->sc);
    rt_free(ctx, e->ids);
    words_free(ctx, &e->a);
    words_free(ctx, &e->b);
    rt_free(ctx, e->norm.p);
    rt_free(ctx, e->tmp.p);
    rt_free(ctx, e->symlen);
    rt_free(ctx, e->cp);
    rt_free(ctx, e->cls);
    rt_free(ctx, e->off);
}

/* ------------------------------------------------------------------ */
/* BPE of one word                                                     */
/* ------------------------------------------------------------------ */

/* Appends the <0xNN> tokens of bytes s[len] to e->tmp as symbols; false (nothing appended) when the
 * vocabulary lacks one of them. */
static bool put_byte_tokens(Enc *e, const unsigned char *s, size_t len, size_t *nsym, srt_status *st) {
    char name[8];
    for (size_t i = 0; i < len; i++) {
        snprintf(name, sizeof name, "<0x%02X>", s[i]);
        if (tok_map_get(&e->t->vocab, name, 6) < 0) return false;
    }
    for (size_t i = 0; i < len; i++) {
        snprintf(name, sizeof name, "<0x%02X>", s[i]);
        if (!buf_put(e->t->ctx, &e->tmp, name, 6)) {
            *st = nomem(e->t->ctx);
            return true;
        }
        e->symlen[(*nsym)++] = 6;
    }
    return true;
}

/* The initial symbols of word w[len] into e->tmp and e->symlen (*nsym): its characters, as HF's BPE
 * starts a word (an unknown character: its byte tokens with byte_fallback, else unk, fused with fuse_unk). */
static srt_status initial_symbols(Enc *e, const char *w, size_t len, size_t *nsym) {
    srt_tokenizer *t = e->t;
    bool last_unk = false;
    e->tmp.n = 0;
    *nsym = 0;
    if (!enc_fit(e, len)) return nomem(t->ctx); /* a symbol per byte at most */
    for (size_t i = 0; i < len;) {
        uint32_t c = 0;
        size_t l = tok_utf8_decode((const unsigned char *)w, len, i, &c);
        if (!l) return rt_error(t->ctx, SRT_ERR_FORMAT, "a word is not UTF-8 ('%.*s')", (int)len, w);
        srt_status st = SRT_OK;
        if (tok_map_get(&t->vocab, w + i, l) >= 0) {
            if (!buf_put(t->ctx, &e->tmp, w + i, l)) return nomem(t->ctx);
            e->symlen[(*nsym)++] = (uint32_t)l;
            last_unk = false;
        } else if (t->byte_fallback && put_byte_tokens(e, (const unsigned char *)w + i, l, nsym, &st)) {
            if (st != SRT_OK) return st;
            last_unk = false;
        } else if (t->unk_id >= 0) {
            if (!(last_unk && t->fuse_unk)) {
                const char *u = t->id_text[t->unk_id];
                if (!buf_put(t->ctx, &e->tmp, u, strlen(u))) return nomem(t->ctx);
                e->symlen[(*nsym)++] = (uint32_t)strlen(u);
            }
            last_unk = true;
        } else
            return rt_error(t->ctx, SRT_ERR_FORMAT, "the vocabulary has no token for '%.*s' (in the word '%.*s'), "
                            "and the tokenizer has no unk_token%s", (int)l, w + i, (int)len, w,
                            t->byte_fallback ? " nor its <0xNN> byte tokens" : "");
        i += l;
    }
    return SRT_OK;
}

/* BPE of one word w[len] (after the pre-tokenizers), appending its ids. */
static srt_status bpe_word(Enc *e, const char *w, size_t len) {
    srt_tokenizer *t = e->t;
    srt_context *ctx = t->ctx;
    if (!len) return SRT_OK;
    int32_t whole = t->ignore_merges ? tok_map_get(&t->vocab, w, len) : -1;
    if (whole >= 0) return push_id(ctx, &e->ids, &e->n, &e->cap, whole) ? SRT_OK : nomem(ctx);
    size_t ns = 0;
    srt_status st = initial_symbols(e, w, len, &ns);
    if (st != SRT_OK) return st;
    if (!scratch_fit(ctx, &e->sc, e->tmp.n, ns)) return nomem(ctx);
    memcpy(e->sc.word, e->tmp.p, e->tmp.n);
    for (size_t i = 0, at = 0; i < ns; at += e->symlen[i++]) e->sc.syms[i] = (Sym){(uint32_t)at, e->symlen[i]};
    bpe_merge(t, &e->sc, &ns);
    for (size_t i = 0; i < ns; i++) {
        const char *s = e->sc.word + e->sc.syms[i].start;
        int32_t id = tok_map_get(&t->vocab, s, e->sc.syms[i].len);
        if (id < 0)
            return rt_error(ctx, SRT_ERR_FORMAT, "the vocabulary has no token for '%.*s' (in the word '%.*s')",
                            (int)e->sc.syms[i].len, s, (int)len, w);
        if (!push_id(ctx, &e->ids, &e->n, &e->cap, id)) return nomem(ctx);
    }
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* Pre-tokenizers                                                      */
/* ------------------------------------------------------------------ */

/* The code points, classes and offsets of w[len] into e (*n code points); false: out of memory. */
static bool split_chars(Enc *e, const char *w, size_t len, size_t *n) {
    if (!enc_fit(e, len)) return false;
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        size_t l = tok_utf8_decode((const unsigned char *)w, len, i, &e->cp[k]);
        if (!l) l = 1, e->cp[k] = 0xfffd; /* not reached: words are UTF-8 */
        e->cls[k] = (unsigned char)char_class(e->cp[k]);
        e->off[k++] = i;
        i += l;
    }
    e->off[k] = len;
    *n = k;
    return true;
}

/* Appends bytes s[len] as bytes_to_unicode characters to out's last word. */
static bool put_byte_chars(Enc *e, Words *out, const unsigned char *s, size_t len) {
    char c[4];
    for (size_t i = 0; i < len; i++)
        if (!words_put(e->t->ctx, out, c, tok_utf8_encode(e->t->byte_char[s[i]], c))) return false;
    return true;
}

/* ByteLevel on word w[len] into out. */
static srt_status pre_bytelevel(Enc *e, const TokPreTokenizer *p, const char *w, size_t len, bool first, Words *out) {
    srt_context *ctx = e->t->ctx;
    e->tmp.n = 0;
    if (p->add_prefix_space && (!len || w[0] != ' ') && !buf_put(ctx, &e->tmp, " ", 1)) return nomem(ctx);
    if (!buf_put(ctx, &e->tmp, w, len)) return nomem(ctx);
    const unsigned char *s = (const unsigned char *)e->tmp.p;
    size_t n = 0;
    if (!p->use_regex) {
        if (!words_open(ctx, out, first) || !put_byte_chars(e, out, s, e->tmp.n)) return nomem(ctx);
        words_close(out);
        return SRT_OK;
    }
    if (!split_chars(e, e->tmp.p, e->tmp.n, &n)) return nomem(ctx);
    for (size_t i = 0; i < n;) {
        size_t end = pretoken_end(e->cp, e->cls, n, i);
        if (!words_open(ctx, out, first && i == 0) || !put_byte_chars(e, out, s + e->off[i], e->off[end] - e->off[i]))
            return nomem(ctx);
        words_close(out);
        i = end;
    }
    return SRT_OK;
}

/* Metaspace on word w[len] into out: ' ' to the replacement, the replacement prepended by the scheme
 * unless the word starts with it, then a split before every replacement (when p->split). */
static srt_status pre_metaspace(Enc *e, const TokPreTokenizer *p, const char *w, size_t len, bool first, Words *out) {
    srt_context *ctx = e->t->ctx;
    const char *r = p->replacement;
    size_t rl = strlen(r);
    e->tmp.n = 0;
    for (size_t i = 0; i < len; i++)
        if (!buf_put(ctx, &e->tmp, w[i] == ' ' ? r : w + i, w[i] == ' ' ? rl : 1)) return nomem(ctx);
    bool starts = e->tmp.n >= rl && memcmp(e->tmp.p, r, rl) == 0;
    bool prepend = p->prepend == TOK_PREPEND_ALWAYS || (p->prepend == TOK_PREPEND_FIRST && first);
    if (!words_open(ctx, out, first) || (prepend && !starts && !words_put(ctx, out, r, rl))) return nomem(ctx);
    for (size_t i = 0; i < e->tmp.n;) {
        bool at_r = p->split && i + rl <= e->tmp.n && memcmp(e->tmp.p + i, r, rl) == 0;
        if (at_r && i > 0) {
            words_close(out);
            if (!words_open(ctx, out, false)) return nomem(ctx);
        }
        size_t l = at_r ? rl : 1;
        if (!words_put(ctx, out, e->tmp.p + i, l)) return nomem(ctx);
        i += l;
    }
    words_close(out);
    return SRT_OK;
}

/* Runs the pre-tokenizers over piece s[len] (first: it starts the text) and BPE over each word. */
static srt_status encode_piece(Enc *e, const char *s, size_t len, bool first) {
    srt_tokenizer *t = e->t;
    srt_context *ctx = t->ctx;
    Words *in = &e->a, *out = &e->b;
    words_clear(in);
    if (!words_open(ctx, in, first) || !words_put(ctx, in, s, len)) return nomem(ctx);
    words_close(in);
    for (int k = 0; k < t->npre; k++) {
        words_clear(out);
        for (size_t i = 0; i < in->n; i++) {
            const char *w = in->text.p + in->w[i].off;
            srt_status st = t->pre[k].kind == TOK_PRE_BYTELEVEL
                                ? pre_bytelevel(e, &t->pre[k], w, in->w[i].len, in->first[i], out)
                                : pre_metaspace(e, &t->pre[k], w, in->w[i].len, in->first[i], out);
            if (st != SRT_OK) return st;
        }
        Words *x = in;
        in = out;
        out = x;
    }
    for (size_t i = 0; i < in->n; i++) {
        srt_status st = bpe_word(e, in->text.p + in->w[i].off, in->w[i].len);
        if (st != SRT_OK) return st;
    }
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* Normalizers and added tokens                                        */
/* ------------------------------------------------------------------ */

/* NFC: Hangul syllables by algorithm, the rest from the generated tables. */
enum { HANGUL_S = 0xac00, HANGUL_L = 0x1100, HANGUL_V = 0x1161, HANGUL_T = 0x11a7, HANGUL_VCOUNT = 21,
       HANGUL_TCOUNT = 28, HANGUL_NCOUNT = 588, HANGUL_SCOUNT = 11172, HANGUL_LCOUNT = 19 };

/* The canonical combining class of cp. */
static int combining_class(uint32_t cp) {
    int lo = 0, hi = rt_unicode_ccc_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < rt_unicode_ccc[mid][0]) hi = mid - 1;
        else if (cp > rt_unicode_ccc[mid][1]) lo = mid + 1;
        else return (int)rt_unicode_ccc[mid][2];
    }
    return 0;
}

/* Appends cp's full canonical decomposition (cp itself when it has none) to out[*n] (room for 18 more). */
static void decompose(uint32_t cp, uint32_t *out, size_t *n) {
    if (cp >= HANGUL_S && cp < HANGUL_S + HANGUL_SCOUNT) {
        uint32_t s = cp - HANGUL_S;
        out[(*n)++] = HANGUL_L + s / HANGUL_NCOUNT;
        out[(*n)++] = HANGUL_V + s % HANGUL_NCOUNT / HANGUL_TCOUNT;
        if (s % HANGUL_TCOUNT) out[(*n)++] = HANGUL_T + s % HANGUL_TCOUNT;
        return;
    }
    int lo = 0, hi = rt_unicode_decomp_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < rt_unicode_decomp[mid][0]) hi = mid - 1;
        else if (cp > rt_unicode_decomp[mid][0]) lo = mid + 1;
        else {
            for (uint32_t k = 0; k < rt_unicode_decomp[mid][2]; k++)
                out[(*n)++] = rt_unicode_decomp_data[rt_unicode_decomp[mid][1] + k];
            return;
        }
    }
    out[(*n)++] = cp;
}

/* The primary composite of a and b, or 0. */
static uint32_t compose_pair(uint32_t a, uint32_t b) {
    if (a >= HANGUL_L && a < HANGUL_L + HANGUL_LCOUNT && b >= HANGUL_V && b < HANGUL_V + HANGUL_VCOUNT)
        return HANGUL_S + ((a - HANGUL_L) * HANGUL_VCOUNT + (b - HANGUL_V)) * HANGUL_TCOUNT;
    if (a >= HANGUL_S && a < HANGUL_S + HANGUL_SCOUNT && (a - HANGUL_S) % HANGUL_TCOUNT == 0 && b > HANGUL_T &&
        b < HANGUL_T + HANGUL_TCOUNT)
        return a + (b - HANGUL_T);
    int lo = 0, hi = rt_unicode_compose_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const uint32_t *c = rt_unicode_compose[mid];
        if (a < c[0] || (a == c[0] && b < c[1])) hi = mid - 1;
        else if (a > c[0] || b > c[1]) lo = mid + 1;
        else return c[2];
    }
    return 0;
}

/* Composes d[*n] in place as NFC does (UAX #15: a character joins the last starter unless a character
 * of its combining class or a starter stands between). */
static void compose(uint32_t *d, size_t *n) {
    if (!*n) return;
    size_t starter = 0, w = 1;
    int last = combining_class(d[0]) ? 256 : 0;
    for (size_t i = 1; i < *n; i++) {
        uint32_t c = d[i];
        int cc = combining_class(c);
        uint32_t comp = compose_pair(d[starter], c);
        if (comp && (last < cc || last == 0)) {
            d[starter] = comp;
            continue;
        }
        if (cc == 0) starter = w;
        last = cc;
        d[w++] = c;
    }
    *n = w;
}

/* Sorts the non-starters d[a..b) by combining class, stably (canonical ordering): insertion for short runs,
 * counting through tmp for long ones (O(run + 256), never quadratic). */
static void order_run(uint32_t *d, uint32_t *tmp, size_t a, size_t b) {
    if (b - a <= 32) {
        for (size_t i = a + 1; i < b; i++)
            for (size_t j = i; j > a && combining_class(d[j - 1]) > combining_class(d[j]); j--) {
                uint32_t x = d[j];
                d[j] = d[j - 1];
                d[j - 1] = x;
            }
        return;
    }
    size_t start[258] = {0};
    for (size_t i = a; i < b; i++) start[combining_class(d[i]) + 1]++;
    for (int c = 1; c < 258; c++) start[c] += start[c - 1];
    for (size_t i = a; i < b; i++) tmp[start[combining_class(d[i])]++] = d[i];
    memcpy(d + a, tmp, sizeof *d * (b - a));
}

/* s[len] (UTF-8) in NFC onto out. */
static bool nfc(srt_context *ctx, const char *s, size_t len, Buf *out) {
    uint32_t one[18];
    size_t n = 0;
    for (size_t i = 0, l, k; i < len; i += l, n += k) { /* the decomposed length first */
        uint32_t cp = 0xfffd;
        if (!(l = tok_utf8_decode((const unsigned char *)s, len, i, &cp))) l = 1;
        k = 0;
        decompose(cp, one, &k);
    }
    uint32_t *d = rt_alloc(ctx, sizeof *d * (n + 1)), *tmp = rt_alloc(ctx, sizeof *tmp * (n + 1));
    if (!d || !tmp) {
        rt_free(ctx, d);
        rt_free(ctx, tmp);
        return false;
    }
    n = 0;
    for (size_t i = 0, l; i < len; i += l) {
        uint32_t cp = 0xfffd;
        if (!(l = tok_utf8_decode((const unsigned char *)s, len, i, &cp))) l = 1;
        decompose(cp, d, &n);
    }
    for (size_t a = 0, b; a < n; a = b + 1) {
        while (a < n && !combining_class(d[a])) a++;
        for (b = a; b < n && combining_class(d[b]); b++) {}
        if (b > a + 1) order_run(d, tmp, a, b);
    }
    compose(d, &n);
    rt_free(ctx, tmp);
    bool ok = buf_put(ctx, out, "", 0);
    char u[4];
    for (size_t i = 0; ok && i < n; i++) ok = buf_put(ctx, out, u, tok_utf8_encode(d[i], u));
    rt_free(ctx, d);
    return ok;
}

/* s[len] through the normalizers into e->norm. */
static srt_status normalize(Enc *e, const char *s, size_t len) {
    srt_tokenizer *t = e->t;
    srt_context *ctx = t->ctx;
    Buf cur = {0};
    if (!buf_put(ctx, &cur, s, len)) return nomem(ctx);
    for (int k = 0; k < t->nnorm; k++) {
        const TokNormalizer *nm = &t->norm[k];
        Buf next = {0};
        bool ok = true;
        if (nm->kind == TOK_NORM_PREPEND) {
            if (cur.n) ok = buf_put(ctx, &next, nm->content, strlen(nm->content));
            ok = ok && buf_put(ctx, &next, cur.p, cur.n);
        } else if (nm->kind == TOK_NORM_NFC) {
            ok = nfc(ctx, cur.p, cur.n, &next);
        } else {
            size_t pl = strlen(nm->pattern), cl = strlen(nm->content);
            for (size_t i = 0; ok && i < cur.n;) {
                bool hit = i + pl <= cur.n && memcmp(cur.p + i, nm->pattern, pl) == 0;
                ok = hit ? buf_put(ctx, &next, nm->content, cl) : buf_put(ctx, &next, cur.p + i, 1);
                i += hit ? pl : 1;
            }
            ok = ok && buf_put(ctx, &next, "", 0);
        }
        rt_free(ctx, cur.p);
        cur = next;
        if (!ok) {
            rt_free(ctx, cur.p);
            return nomem(ctx);
        }
    }
    rt_free(ctx, e->norm.p);
    e->norm = cur;
    return SRT_OK;
}

/* The length of the White_Space character ending at s[..i) (0: none). */
static size_t space_before(const char *s, size_t i) {
    size_t k = i;
    while (k > 0 && ((unsigned char)s[k - 1] & 0xc0) == 0x80 && i - k < 3) k--;
    if (k == 0) return 0;
    uint32_t c = 0;
    size_t l = tok_utf8_decode((const unsigned char *)s, i, k - 1, &c);
    return l == i - (k - 1) && is_white_space(c) ? l : 0;
}

/* The length of the White_Space character at s[i..len) (0: none). */
static size_t space_at(const char *s, size_t len, size_t i) {
    uint32_t c = 0;
    size_t l = i < len ? tok_utf8_decode((const unsigned char *)s, len, i, &c) : 0;
    return l && is_white_space(c) ? l : 0;
}

/* A match of an added token in a text. */
typedef struct AddedMatch {
    size_t start, end;  /* the bytes it takes (its white space with lstrip/rstrip) */
    int32_t id;         /* its id */
} AddedMatch;

/* The leftmost match at or after `from` in s[len] of the added tokens of the set `normalized` (longest
 * first at a position, as HF's LeftmostLongest); false: none. */
static bool find_added(const Enc *e, const char *s, size_t len, size_t from, bool normalized, AddedMatch *m) {
    const srt_tokenizer *t = e->t;
    for (size_t i = from; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        for (int k = t->added_from[c]; k < t->added_from[c + 1]; k++) {
            const TokAdded *a = &t->added[k];
            if (a->normalized != normalized || (a->special && (e->flags & SRT_ENCODE_SPECIAL_AS_TEXT))) continue;
            if (a->len > len - i || memcmp(s + i, a->content, a->len) != 0) continue;
            m->start = i;
            m->end = i + a->len;
            m->id = a->id;
            for (size_t l; a->lstrip && m->start > from && (l = space_before(s, m->start)) && m->start - l >= from;)
                m->start -= l;
            for (size_t l; a->rstrip && (l = space_at(s, len, m->end));) m->end += l;
            return true;
        }
    }
    return false;
}

/* Splits s[len] at the added tokens of the set `normalized`: ids for the matches, encode_piece (when
 * normalized) or normalization and this split of the other set (when not) for the text between. */
static srt_status split_added(Enc *e, const char *s, size_t len, bool normalized, bool first) {
    size_t at = 0;
    while (at < len) {
        AddedMatch m = {len, len, -1};
        bool hit = e->t->nadded && find_added(e, s, len, at, normalized, &m);
        if (m.start > at) {
            srt_status st;
            if (normalized) st = encode_piece(e, s + at, m.start - at, first && at == 0);
            else {
                st = normalize(e, s + at, m.start - at);
                Buf piece = e->norm; /* split_added(normalized) reuses e->norm: keep this one */
                e->norm = (Buf){0};
                if (st == SRT_OK) st = split_added(e, piece.p, piece.n, true, first && at == 0);
                rt_free(e->t->ctx, piece.p);
            }
            if (st != SRT_OK) return st;
        }
        if (!hit) break;
        if (!push_id(e->t->ctx, &e->ids, &e->n, &e->cap, m.id)) return nomem(e->t->ctx);
        at = m.end;
    }
    return SRT_OK;
}

/* The first byte of text[len] that is not UTF-8, or len. */
static size_t utf8_check(const unsigned char *text, size_t len) {
    uint32_t c;
    for (size_t i = 0, l; i < len; i += l)
        if (!(l = tok_utf8_decode(text, len, i, &c))) return i;
    return len;
}

srt_status srt_tokenizer_encode_with(srt_tokenizer *t, const char *text, size_t len, unsigned flags, int32_t **ids,
                                     size_t *nids) {
    if (!t || (!text && len) || !ids || !nids)
        return t ? rt_error(t->ctx, SRT_ERR_INVALID, "srt_tokenizer_encode: NULL argument") : SRT_ERR_INVALID;
    srt_context *ctx = t->ctx;
    *ids = NULL;
    *nids = 0;
    if (flags & ~(unsigned)SRT_ENCODE_SPECIAL_AS_TEXT)
        return rt_error(ctx, SRT_ERR_INVALID, "srt_tokenizer_encode: unknown flags 0x%x", flags);
    size_t bad = utf8_check((const unsigned char *)text, len);
    if (bad < len)
        return rt_error(ctx, SRT_ERR_FORMAT, "the text is not UTF-8 at byte %zu (0x%02x)", bad,
                        (unsigned char)text[bad]);
    Enc e = {.t = t, .flags = flags};
    srt_status st = split_added(&e, text ? text : "", len, false, true);
    if (st == SRT_OK) {
        *ids = e.ids;
        *nids = e.n;
        e.ids = NULL;
    }
    enc_free(&e);
    return st;
}

srt_status srt_tokenizer_encode(srt_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *nids) {
    return srt_tokenizer_encode_with(t, text, len, 0, ids, nids);
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

/* The tokens' strings during decoding: each step maps the list to a new one. */
typedef struct Toks {
    Buf *s;    /* the strings */
    size_t n;  /* how many */
} Toks;

static void toks_free(srt_context *ctx, Toks *k) {
    for (size_t i = 0; k->s && i < k->n; i++) rt_free(ctx, k->s[i].p);
    rt_free(ctx, k->s);
    k->s = NULL;
    k->n = 0;
}

/* Whether s[len] is a byte token <0xNN>; its byte in *b. */
static bool byte_token(const char *s, size_t len, unsigned char *b) {
    unsigned v = 0;
    if (len != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return false;
    for (int i = 3; i < 5; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return false;
        v = v * 16 + (unsigned)d;
    }
    *b = (unsigned char)v;
    return true;
}

/* Token s[len] through ByteLevel's decoder onto out: its characters' bytes, or the token unchanged when
 * one is not of bytes_to_unicode (as HF). */
static bool bytelevel_token(const srt_tokenizer *t, const char *s, size_t len, Buf *out) {
    size_t mark = out->n;
    for (size_t j = 0; j < len;) {
        uint32_t c = 0;
        size_t l = tok_utf8_decode((const unsigned char *)s, len, j, &c);
        if (!l || c >= TOK_BYTE_CHARS || t->char_byte[c] < 0) {
            out->n = mark;
            return buf_put(t->ctx, out, s, len);
        }
        char b = (char)t->char_byte[c];
        if (!buf_put(t->ctx, out, &b, 1)) return false;
        j += l;
    }
    return true;
}

/* Strips up to `start` leading and `stop` trailing copies of character c (UTF-8 c[cl]) off s. */
static void strip_token(Buf *s, const char *c, size_t cl, int start, int stop) {
    size_t a = 0, b = s->n;
    for (int k = 0; k < start && a + cl <= b && memcmp(s->p + a, c, cl) == 0; k++) a += cl;
    for (int k = 0; k < stop && b >= a + cl && memcmp(s->p + b - cl, c, cl) == 0; k++) b -= cl;
    memmove(s->p, s->p + a, b - a);
    s->n = b - a;
    s->p[s->n] = 0;
}

/* One decoder step over in into out (out empty, with room for in->n strings). */
static bool decode_step(const srt_tokenizer *t, const TokDecoder *d, const Toks *in, Toks *out) {
    srt_context *ctx = t->ctx;
    bool fuse = d->kind == TOK_DEC_BYTELEVEL || d->kind == TOK_DEC_FUSE;
    for (size_t i = 0; i < in->n; i++) {
        const Buf *s = &in->s[i];
        if (!fuse || out->n == 0) out->s[out->n++] = (Buf){0};
        Buf *o = &out->s[out->n - 1];
        bool ok = buf_put(ctx, o, "", 0);
        unsigned char byte;
        switch (d->kind) {
        case TOK_DEC_BYTELEVEL: ok = ok && bytelevel_token(t, s->p, s->n, o); break;
        case TOK_DEC_FUSE: ok = ok && buf_put(ctx, o, s->p, s->n); break;
        case TOK_DEC_STRIP:
            ok = ok && buf_put(ctx, o, s->p, s->n);
            if (ok) strip_token(o, d->content, strlen(d->content), d->start, d->stop);
            break;
        case TOK_DEC_REPLACE:
        case TOK_DEC_METASPACE: {
            const char *pat = d->kind == TOK_DEC_REPLACE ? d->pattern : d->content;
            const char *rep = d->kind == TOK_DEC_REPLACE ? d->content : " ";
            size_t pl = strlen(pat), rl = strlen(rep);
            for (size_t j = 0; ok && j < s->n;) {
                bool hit = pl && j + pl <= s->n && memcmp(s->p + j, pat, pl) == 0;
                bool drop = hit && d->kind == TOK_DEC_METASPACE && d->strip_prefix && i == 0; /* all, as HF */
                ok = hit ? (drop || buf_put(ctx, o, rep, rl)) : buf_put(ctx, o, s->p + j, 1);
                j += hit ? pl : 1;
            }
            break;
        }
        case TOK_DEC_BYTEFALLBACK:
            if (!byte_token(s->p, s->n, &byte)) {
                ok = ok && buf_put(ctx, o, s->p, s->n);
                break;
            }
            /* a run of byte tokens: their bytes when UTF-8, else U+FFFD for each */
            size_t j = i;
            while (j < in->n && byte_token(in->s[j].p, in->s[j].n, &byte)) ok = ok && buf_put(ctx, o, (char *)&byte, 1), j++;
            if (ok && utf8_check((const unsigned char *)o->p, o->n) < o->n) {
                o->n = 0;
                for (size_t k = i; ok && k < j; k++) ok = buf_put(ctx, o, "\xef\xbf\xbd", 3);
            }
            i = j - 1;
            break;
        }
        if (!ok) return false;
    }
    return true;
}

/* Concatenates k's strings into *text[*len] (sep between them). */
static srt_status join_toks(srt_context *ctx, const Toks *k, const char *sep, char **text, size_t *len) {
    Buf out = {0};
    bool ok = buf_put(ctx, &out, "", 0);
    for (size_t i = 0; ok && i < k->n; i++) ok = (!i || buf_put(ctx, &out, sep, strlen(sep))) && buf_put(ctx, &out, k->s[i].p, k->s[i].n);
    if (!ok) {
        rt_free(ctx, out.p);
        return nomem(ctx);
    }
    *text = out.p;
    *len = out.n;
    return SRT_OK;
}

srt_status srt_tokenizer_decode(srt_tokenizer *t, const int32_t *ids, size_t n, char **text, size_t *len) {
    if (!t || (!ids && n) || !text || !len) return t ? rt_error(t->ctx, SRT_ERR_INVALID, "srt_tokenizer_decode: NULL argument") : SRT_ERR_INVALID;
    srt_context *ctx = t->ctx;
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= t->nids || !t->id_text[ids[i]])
            return rt_error(ctx, SRT_ERR_INVALID, "token %zu: id %d is not in the vocabulary", i, (int)ids[i]);
    Toks cur = {rt_alloc(ctx, sizeof *cur.s * (n ? n : 1)), 0};
    bool ok = cur.s != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        cur.s[cur.n] = (Buf){0};
        ok = buf_put(ctx, &cur.s[cur.n++], t->id_text[ids[i]], strlen(t->id_text[ids[i]]));
    }
    for (int k = 0; ok && k < t->ndec; k++) {
        Toks next = {rt_alloc(ctx, sizeof *next.s * (cur.n ? cur.n : 1)), 0};
        ok = next.s && decode_step(t, &t->dec[k], &cur, &next);
        toks_free(ctx, &cur);
        cur = next;
    }
    srt_status st = ok ? join_toks(ctx, &cur, t->no_decoder ? " " : "", text, len) : nomem(ctx);
    toks_free(ctx, &cur);
    return st;
}

/* ------------------------------------------------------------------ */
/* Opening and closing                                                 */
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

/* The normalized added tokens' texts through the normalizers (HF matches them so in the normalized text). */
static srt_status normalize_added(srt_tokenizer *t) {
    Enc e = {.t = t};
    srt_status st = SRT_OK;
    for (int i = 0; st == SRT_OK && i < t->nadded; i++) {
        TokAdded *a = &t->added[i];
        if (!a->normalized || !t->nnorm || (st = normalize(&e, a->content, a->len)) != SRT_OK) continue;
        if (!e.norm.n) {
            st = rt_error(t->ctx, SRT_ERR_FORMAT, "added token '%s' normalizes to nothing", a->content);
            continue;
        }
        rt_free(t->ctx, a->content);
        a->content = e.norm.p;
        a->len = e.norm.n;
        e.norm = (Buf){0};
    }
    enc_free(&e);
    tok_sort_added(t);
    return st;
}

srt_status srt_tokenizer_open(srt_context *ctx, const char *path, const char *merges_path, srt_tokenizer **out) {
    if (!ctx) return SRT_ERR_INVALID;
    if (!path || !out) return rt_error(ctx, SRT_ERR_INVALID, "srt_tokenizer_open: NULL argument");
    *out = NULL;
    srt_tokenizer *t = rt_alloc(ctx, sizeof *t);
    if (!t) return nomem(ctx);
    t->ctx = ctx;
    t->unk_id = -1;
    init_byte_map(t);
    srt_status st = tok_load_files(t, path, merges_path);
    if (st == SRT_OK) st = normalize_added(t);
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
    tok_map_free(ctx, &t->vocab);
    tok_map_free(ctx, &t->merges);
    for (int32_t i = 0; i < t->nids; i++) rt_free(ctx, t->id_text[i]);
    rt_free(ctx, t->id_text);
    for (int i = 0; i < t->nnorm; i++) rt_free(ctx, t->norm[i].pattern), rt_free(ctx, t->norm[i].content);
    rt_free(ctx, t->norm);
    rt_free(ctx, t->pre);
    for (int i = 0; i < t->ndec; i++) rt_free(ctx, t->dec[i].pattern), rt_free(ctx, t->dec[i].content);
    rt_free(ctx, t->dec);
    for (int i = 0; i < t->nadded; i++) rt_free(ctx, t->added[i].content);
    rt_free(ctx, t->added);
    rt_free(ctx, t);
}
