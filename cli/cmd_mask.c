/*
 * cmd_mask.c — `shortc mask MODEL.arch --tokens N (-o MASKS.npy | --ascii)`:
 * the boolean attention mask every layer and head of the model uses on a
 * forward of N tokens from position 0, from the same pattern description the
 * interpreter and the emitted kernels use (compiler/attn_pattern.c). The file
 * is a NumPy bool array [layers, heads, N, N], mask[l, h, i, j] = query i of
 * head h in layer l sees key j. --ascii draws one layer and head ('#' seen,
 * '.' not).
 */
#include "cmd_mask.h"
#include "modelpath.h"
#include "usage.h"

#include "fileio.h"
#include "shortc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options of one `shortc mask` call. */
typedef struct MaskArgs {
    const char *path;   /* the .arch file */
    const char *model;  /* --model NAME (NULL: the file's last model) */
    const char *out;    /* -o MASKS.npy (NULL: none) */
    long long tokens;   /* --tokens N */
    bool ascii;         /* --ascii: draw one mask */
    long long layer;    /* --layer L for --ascii */
    long long head;     /* --head H for --ascii */
} MaskArgs;

static bool parse_mask_args(int argc, char **argv, MaskArgs *a) {
    memset(a, 0, sizeof *a);
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        bool more = i + 1 < argc;
        if (strcmp(s, "--tokens") == 0 && more) {
            if (!parse_flag_int(s, argv[++i], 1, 1 << 16, &a->tokens)) return false;
        } else if (strcmp(s, "--layer") == 0 && more) {
            if (!parse_flag_int(s, argv[++i], 0, INT_MAX, &a->layer)) return false;
        } else if (strcmp(s, "--head") == 0 && more) {
            if (!parse_flag_int(s, argv[++i], 0, INT_MAX, &a->head)) return false;
        } else if (strcmp(s, "-o") == 0 && more) a->out = argv[++i];
        else if (strcmp(s, "--model") == 0 && more) a->model = argv[++i];
        else if (strcmp(s, "--ascii") == 0) a->ascii = true;
        else if (strcmp(s, "--force") == 0) fio_set_force(true);
        else if (s[0] != '-' && !a->path) a->path = resolve_model_name(s);
        else {
            if (s[0] == '-' && s[1]) cli_unknown_option("mask", s);
            else fprintf(stderr, "shortc: error: mask takes one model ('%s' and '%s')\n", a->path, s);
            return false;
        }
    }
    const char *missing = !a->path ? "a model (.arch)" : !a->tokens ? "--tokens N" : !a->out && !a->ascii ? "-o MASKS.npy or --ascii" : NULL;
    if (!missing && a->ascii && a->out && strcmp(a->out, "-") == 0) {
        fprintf(stderr, "shortc: error: mask -o - writes the masks to standard output, so takes no --ascii\n");
        return false;
    }
    if (missing) {
        fprintf(stderr, "shortc: error: mask needs %s; see 'shortc help mask'\n", missing);
        return false;
    }
    return true;
}

/* The masks [layers, heads, n, n] (malloc'd), or NULL with the error printed. */
static unsigned char *build_masks(const ModelSpec *s, int n) {
    size_t total = (size_t)s->n_layers * s->n_heads * n * n;
    unsigned char *m = calloc(total ? total : 1, 1);
    if (!m) {
        fprintf(stderr, "shortc: error: mask: out of memory for %zu bytes\n", total);
        return NULL;
    }
    char err[300];
    if (!attn_masks_fill(s, n, m, err, sizeof err)) {
        fprintf(stderr, "shortc: error: mask: %s\n", err);
        free(m);
        return NULL;
    }
    return m;
}

/* Writes the masks as a NumPy bool array; false with the error printed (nothing written). */
static bool write_masks(const char *path, const unsigned char *m, int layers, int heads, int n) {
    char hdr[128];
    int len = snprintf(hdr, sizeof hdr, "{'descr': '|b1', 'fortran_order': False, 'shape': (%d, %d, %d, %d), }", layers,
                       heads, n, n);
    int total = 10 + len + 1, pad = (64 - total % 64) % 64; /* header padded to 64 bytes, ending in '\n' */
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)((len + pad + 1) & 0xff),
                             (unsigned char)((len + pad + 1) >> 8)};
    if (strcmp(path, "-") == 0) { /* standard output */
        bool ok = fwrite(pre, 1, sizeof pre, stdout) == sizeof pre && fwrite(hdr, 1, (size_t)len, stdout) == (size_t)len;
        for (int i = 0; ok && i < pad; i++) ok = fputc(' ', stdout) != EOF;
        size_t bytes = (size_t)layers * heads * n * n;
        ok = ok && fputc('\n', stdout) != EOF && fwrite(m, 1, bytes, stdout) == bytes && fflush(stdout) == 0;
        if (!ok) fprintf(stderr, "shortc: error: cannot write the masks to standard output\n");
        return ok;
    }
    FioOut o;
    const char *why = NULL;
    if (!fio_out_open(&o, path, &why)) {
        fprintf(stderr, "shortc: error: cannot write '%s': %s\n", path, why);
        return false;
    }
    fio_out_write(&o, pre, sizeof pre);
    fio_out_write(&o, hdr, (size_t)len);
    for (int i = 0; i < pad; i++) fio_out_write(&o, " ", 1);
    fio_out_write(&o, "\n", 1);
    fio_out_write(&o, m, (size_t)layers * heads * n * n);
    if (!fio_out_commit(&o, &why)) {
        fprintf(stderr, "shortc: error: cannot write '%s': %s\n", path, why);
        return false;
    }
    return true;
}

/* Draws the mask of one layer and head. */
static void draw_mask(const ModelSpec *s, const unsigned char *m, int l, int h, int n) {
    printf("%s layer %d head %d: attention %s, %d tokens ('#' seen, '.' not; row = query, column = key)\n", s->name,
           l, h, attn_kind_name(s->layers[l].attn.kind), n);
    const unsigned char *mh = m + ((size_t)l * s->n_heads + h) * n * n;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) putchar(mh[(size_t)i * n + j] ? '#' : '.');
        putchar('\n');
    }
}

int mask_main(int argc, char **argv) {
    MaskArgs a;
    if (!parse_mask_args(argc, argv, &a)) return SHORTC_EXIT_USAGE;
    if (a.out && fio_same_file(a.out, a.path)) {
        fprintf(stderr, "shortc: error: output '%s' is the same file as input '%s'; nothing written\n", a.out, a.path);
        return SHORTC_EXIT_USAGE;
    }
    Arena ar;
    arena_init(&ar);
    Diag d;
    diag_init(&d, &ar, stderr);
    CompileOptions co = {.path = a.path, .model = a.model, .stop = COMPILE_STOP_AFTER_SEMA};
    CompileResult cr;
    int rc = 1;
    unsigned char *m = NULL;
    if (!shortc_compile(&ar, &d, &co, &cr)) {
        cli_bad_input();
        goto out;
    }
    const ModelSpec *s = cr.spec;
    if (a.tokens > s->segment) {
        fprintf(stderr, "shortc: error: mask: --tokens %lld exceeds the segment of %s (%d tokens per forward)\n",
                a.tokens, s->name, s->segment);
        rc = SHORTC_EXIT_USAGE;
        goto out;
    }
    if (a.ascii && (a.layer >= s->n_layers || a.head >= s->n_heads)) {
        fprintf(stderr, "shortc: error: mask: %s has %d layers and %d heads (--layer %lld --head %lld)\n", s->name,
                s->n_layers, s->n_heads, a.layer, a.head);
        rc = SHORTC_EXIT_USAGE;
        goto out;
    }
    int n = (int)a.tokens;
    if (!(m = build_masks(s, n))) goto out;
    if (a.out && !write_masks(a.out, m, s->n_layers, s->n_heads, n)) goto out;
    if (a.ascii) draw_mask(s, m, (int)a.layer, (int)a.head, n);
    rc = 0;
out:
    free(m);
    compile_result_free(&cr);
    arena_free(&ar);
    return rc;
}
