/*
 * cmd_tokenize.c — `shortc tokenize`: text to BPE token ids and back through
 * the runtime's tokenizer (srt_tokenizer_*; docs/tokenizer.md), and the
 * helpers --text and --prompt of run, eval and generate use.
 *
 *   shortc tokenize --tokenizer T (--text FILE | --prompt TEXT) [--special-as-text]
 *                                                  ids on stdout, space-separated (an empty line: no ids)
 *   shortc tokenize --tokenizer T --decode --tokens FILE         the text on stdout
 *
 * T is a tokenizer.json, a vocab.json (its merges.txt beside it) or a
 * directory holding either.
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_tokenize.h"
#include "usage.h"

#include "fileio.h"
#include "run_common.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* dir/name into buf; false when it does not fit. */
static bool join_path(char *buf, size_t len, const char *dir, size_t dirlen, const char *name) {
    int n = snprintf(buf, len, "%.*s%s%s", (int)dirlen, dir, dirlen ? "/" : "", name);
    return n >= 0 && (size_t)n < len;
}

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

srt_tokenizer *cli_tokenizer_open(srt_context *ctx, const char *path) {
    char json[4096], vocab[4096], merges[4096];
    struct stat st;
    const char *main_file = path, *merges_file = NULL;
    size_t plen = strlen(path);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (!join_path(json, sizeof json, path, plen, "tokenizer.json") ||
            !join_path(vocab, sizeof vocab, path, plen, "vocab.json") ||
            !join_path(merges, sizeof merges, path, plen, "merges.txt")) {
            fprintf(stderr, "shortc: error: tokenizer path '%s' is too long\n", path);
            return NULL;
        }
        if (is_file(json)) main_file = json;
        else if (is_file(vocab)) main_file = vocab, merges_file = merges;
        else {
            fprintf(stderr, "shortc: error: directory '%s' holds neither tokenizer.json nor vocab.json\n", path);
            return NULL;
        }
    } else if (plen >= 10 && strcmp(path + plen - 10, "vocab.json") == 0) {
        const char *slash = strrchr(path, '/');
        if (!join_path(merges, sizeof merges, path, slash ? (size_t)(slash - path) : 0, "merges.txt")) {
            fprintf(stderr, "shortc: error: tokenizer path '%s' is too long\n", path);
            return NULL;
        }
        merges_file = merges;
    }
    srt_tokenizer *t = NULL;
    srt_status st2 = srt_tokenizer_open(ctx, main_file, merges_file, &t);
    if (st2 != SRT_OK) print_lib_error(st2, srt_last_error(ctx));
    return t;
}

int cli_encode(const char *tokenizer, unsigned flags, const char *what, const char *text, size_t len, int32_t **out) {
    srt_context *ctx = NULL;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) {
        fprintf(stderr, "shortc: error: cannot create runtime context\n");
        return -1;
    }
    srt_tokenizer *t = cli_tokenizer_open(ctx, tokenizer);
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = -1;
    *out = NULL;
    srt_status st = t ? srt_tokenizer_encode_with(t, text, len, flags, &ids, &n) : SRT_ERR_INVALID;
    if (t && st != SRT_OK) fprintf(stderr, "shortc: error: %s: %s\n", what, srt_last_error(ctx));
    else if (t && n == 0) rc = 0;
    else if (t && n > INT32_MAX) fprintf(stderr, "shortc: error: %s: more than %d tokens\n", what, INT32_MAX);
    else if (t && !(*out = malloc(sizeof **out * n))) fprintf(stderr, "shortc: error: out of memory\n");
    else if (t) {
        memcpy(*out, ids, sizeof *ids * n);
        rc = (int)n;
    }
    srt_free(ctx, ids);
    srt_tokenizer_close(t);
    srt_context_destroy(ctx);
    return rc;
}

/* Writes the text of ids[n] to stdout. */
static int decode_to_stdout(const char *tokenizer, const int32_t *ids, int n) {
    srt_context *ctx = NULL;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) return 1;
    srt_tokenizer *t = cli_tokenizer_open(ctx, tokenizer);
    char *text = NULL;
    size_t len = 0;
    int rc = 1;
    srt_status st = t ? srt_tokenizer_decode(t, ids, (size_t)n, &text, &len) : SRT_ERR_INVALID;
    if (t && st != SRT_OK) print_lib_error(st, srt_last_error(ctx));
    else if (t) rc = fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : 1;
    srt_free(ctx, text);
    srt_tokenizer_close(t);
    srt_context_destroy(ctx);
    return rc;
}

/* Prints ids[n] space-separated with a final newline (the --tokens format). */
static int print_ids(const int32_t *ids, int n) {
    for (int i = 0; i < n; i++) printf("%s%d", i ? " " : "", (int)ids[i]);
    printf("\n");
    return fflush(stdout) == 0 ? 0 : 1;
}

int tokenize_main(int argc, char **argv) {
    RunArgs ra = RUN_ARGS_INIT;
    bool decode = false;
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        bool has_next = i + 1 < argc;
        if (strcmp(s, "--tokenizer") == 0 && has_next) ra.tokenizer = argv[++i];
        else if (strcmp(s, "--text") == 0 && has_next) ra.text = argv[++i];
        else if (strcmp(s, "--prompt") == 0 && has_next) ra.prompt = argv[++i];
        else if (strcmp(s, "--tokens") == 0 && has_next) ra.tokens = argv[++i];
        else if (strcmp(s, "--decode") == 0) decode = true;
        else if (strcmp(s, "--special-as-text") == 0) ra.special_as_text = true;
        else {
            if (s[0] == '-' && s[1]) cli_unknown_option("tokenize", s);
            else fprintf(stderr, "shortc: error: tokenize takes no file '%s' (--text FILE or --tokens FILE)\n", s);
            return SHORTC_EXIT_USAGE;
        }
    }
    if (!ra.tokenizer) {
        fprintf(stderr, "shortc: error: tokenize needs --tokenizer FILE; see 'shortc help tokenize'\n");
        return SHORTC_EXIT_USAGE;
    }
    if (decode != (ra.tokens != NULL) || (!decode && !!ra.text + !!ra.prompt != 1)) {
        fprintf(stderr, "shortc: error: tokenize takes --text FILE or --prompt TEXT, or --decode --tokens FILE\n");
        return SHORTC_EXIT_USAGE;
    }
    int32_t *ids = NULL;
    ra.allow_empty = true;
    int n = load_run_tokens(&ra, &ids);
    if (n < 0) return 1;
    int rc = decode ? decode_to_stdout(ra.tokenizer, ids, n) : print_ids(ids, n);
    free(ids);
    return rc;
}
