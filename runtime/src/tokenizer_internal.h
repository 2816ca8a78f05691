/*
 * tokenizer_internal.h — the tokenizer's pipeline as Hugging Face tokenizers
 * runs it (docs/tokenizer.md), shared by tokenizer.c (encoding, BPE,
 * decoding) and tokenizer_json.c (reading tokenizer.json, vocab.json +
 * merges.txt into it).
 */
#ifndef SHORTC_TOKENIZER_INTERNAL_H
#define SHORTC_TOKENIZER_INTERNAL_H

#include "rt_internal.h"

#include <stdbool.h>

/* Largest token id accepted in a vocabulary (the id -> string table is dense). */
#define TOK_MAX_ID (1 << 24)
/* Code points bytes_to_unicode uses are below this. */
#define TOK_BYTE_CHARS 324
/* The byte between the two tokens of a merge's key: never in UTF-8, so no token holds it. */
#define TOK_MERGE_SEP '\xff'

/* An open-addressing map from byte strings to int32 values (keys owned). */
typedef struct StrMap {
    char **keys;       /* NUL-terminated keys, NULL in empty slots */
    int32_t *vals;     /* the value of each slot */
    size_t cap;        /* slots (a power of two) */
    size_t n;          /* keys stored */
} StrMap;

/* The value of key[len], or -1. */
int32_t tok_map_get(const StrMap *m, const char *key, size_t len);
/* Sets key[len] to val (a later value replaces an earlier one). false: out of memory. */
bool tok_map_put(srt_context *ctx, StrMap *m, const char *key, size_t len, int32_t val);
/* Frees m's keys and slots. */
void tok_map_free(srt_context *ctx, StrMap *m);

/* A normalizer step (tokenizer.json "normalizer", a Sequence flattened). */
typedef enum TokNormKind {
    TOK_NORM_PREPEND,  /* Prepend: content before a non-empty text */
    TOK_NORM_REPLACE,  /* Replace: every occurrence of the string pattern by content */
    TOK_NORM_NFC,      /* NFC: canonical decomposition, reordering and composition */
} TokNormKind;

typedef struct TokNormalizer {
    TokNormKind kind;  /* which step */
    char *pattern;     /* REPLACE: the string replaced (non-empty) */
    char *content;     /* PREPEND: what goes first; REPLACE: the replacement */
} TokNormalizer;

/* A pre-tokenizer step (tokenizer.json "pre_tokenizer", a Sequence flattened). */
typedef enum TokPreKind {
    TOK_PRE_BYTELEVEL,  /* ByteLevel: optional prefix space, GPT-2's split, bytes to characters */
    TOK_PRE_METASPACE,  /* Metaspace: ' ' to the replacement, optional prefix, split before each replacement */
} TokPreKind;

/* When Metaspace puts its replacement before a piece that does not start with one. */
typedef enum TokPrepend {
    TOK_PREPEND_NEVER,   /* never */
    TOK_PREPEND_FIRST,   /* only before the piece at the start of the text */
    TOK_PREPEND_ALWAYS,  /* before every piece (between added tokens too) */
} TokPrepend;

typedef struct TokPreTokenizer {
    TokPreKind kind;        /* which step */
    bool add_prefix_space;  /* BYTELEVEL: a ' ' before a piece that does not start with one */
    bool use_regex;         /* BYTELEVEL: split with GPT-2's pattern */
    char replacement[5];    /* METASPACE: the replacement character (UTF-8, NUL-terminated; "▁") */
    TokPrepend prepend;     /* METASPACE: when the replacement is prepended */
    bool split;             /* METASPACE: split before each replacement (MergedWithNext) */
} TokPreTokenizer;

/* A decoder step (tokenizer.json "decoder", a Sequence flattened): each maps the list of token strings. */
typedef enum TokDecKind {
    TOK_DEC_BYTELEVEL,     /* characters of bytes_to_unicode back to bytes, all tokens fused */
    TOK_DEC_METASPACE,     /* replacement to ' '; in the first token dropped instead (strip_prefix; as HF) */
    TOK_DEC_REPLACE,       /* the string pattern to content in every token */
    TOK_DEC_BYTEFALLBACK,  /* runs of <0xNN> tokens to their bytes (U+FFFD per byte when not UTF-8) */
    TOK_DEC_FUSE,          /* all tokens into one */
    TOK_DEC_STRIP,         /* up to start leading and stop trailing `content` characters off each token */
} TokDecKind;

typedef struct TokDecoder {
    TokDecKind kind;       /* which step */
    char *pattern;         /* REPLACE: the string replaced */
    char *content;         /* REPLACE: its replacement; METASPACE: the replacement; STRIP: the character */
    bool strip_prefix;     /* METASPACE: drop the replacements of the first token (HF's prefix space) */
    int start, stop;       /* STRIP: characters to strip at the start and the end of each token */
} TokDecoder;

/* An entry of added_tokens: split out of the text before the pipeline, as HF's AddedVocabulary does. */
typedef struct TokAdded {
    char *content;    /* the text matched: the token's, through the normalizers when `normalized` (as HF) */
    size_t len;       /* its bytes */
    int32_t id;       /* its id */
    bool special;     /* a special token (text with SRT_ENCODE_SPECIAL_AS_TEXT) */
    bool normalized;  /* matched in the normalized text (else in the raw text) */
    bool lstrip;      /* the match takes the white space on its left */
    bool rstrip;      /* the match takes the white space on its right */
} TokAdded;

struct srt_tokenizer {
    srt_context *ctx;                     /* allocator and errors */
    StrMap vocab;                         /* token string -> id (model vocabulary and added tokens) */
    StrMap merges;                        /* "left" TOK_MERGE_SEP "right" -> rank */
    char **id_text;                       /* id -> the vocabulary's string (NULL: unused id) */
    int32_t nids;                         /* max id + 1 */
    uint32_t byte_char[256];              /* byte -> its character in bytes_to_unicode */
    int16_t char_byte[TOK_BYTE_CHARS];    /* character -> byte, -1 for none */
    TokNormalizer *norm;                  /* normalizer steps, in order */
    int nnorm;                            /* their count */
    TokPreTokenizer *pre;                 /* pre-tokenizer steps, in order (none: the text is one word) */
    int npre;                             /* their count */
    TokDecoder *dec;                      /* decoder steps, in order */
    int ndec;                             /* their count */
    bool no_decoder;                      /* tokenizer.json's decoder is null: tokens joined by ' ' (as HF) */
    TokAdded *added;                      /* added tokens by first byte, then longest first */
    int nadded;                           /* their count */
    int added_from[257];                  /* added[added_from[b]..added_from[b + 1]) start with byte b */
    int32_t unk_id;                       /* model.unk_token's id, -1: none */
    bool fuse_unk;                        /* consecutive unknown characters make one unk token */
    bool byte_fallback;                   /* an unknown character becomes its <0xNN> byte tokens */
    bool ignore_merges;                   /* a word that is a token is not merged */
    bool gpt2_passes;                     /* merge as GPT-2's bpe() (GPT-2's pipeline), else as HF's merge_all */
};

/* Decodes the code point at s[i..n); returns its length in bytes, 0 when the bytes are not UTF-8. */
size_t tok_utf8_decode(const unsigned char *s, size_t n, size_t i, uint32_t *cp);
/* Writes cp as UTF-8 to out (4 bytes of room); returns its length. */
size_t tok_utf8_encode(uint32_t cp, char *out);

/* Orders t->added by first byte, then matched length, longest first (ties by id), and indexes it. */
void tok_sort_added(srt_tokenizer *t);
/* Reads tokenizer.json (merges_path NULL) or vocab.json + merges.txt into t (tokenizer_json.c). */
srt_status tok_load_files(srt_tokenizer *t, const char *path, const char *merges_path);

#endif
