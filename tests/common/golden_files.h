/*
 * golden_files.h — the files of the PyTorch goldens, read by the C tests that
 * run the reference interpreter on them (tests/ir/ir_unit.c,
 * tests/memory/txl_test.c): a safetensors file's tensors as the fp32 host
 * weights interp_run takes, an .npy of float32 [rows, cols], a token file.
 */
#ifndef SHORTC_TESTS_GOLDEN_FILES_H
#define SHORTC_TESTS_GOLDEN_FILES_H

#include "shortc.h"

#include <cjson/cJSON.h>

/* An open safetensors file: the whole file, its parsed header and its data section. */
typedef struct GoldenWeights {
    char *file;                 /* the file's bytes (malloc'd) */
    cJSON *hdr;                 /* its JSON header */
    const unsigned char *data;  /* the byte after the header */
} GoldenWeights;

/* The whole file (NUL-terminated, malloc'd) and its length; NULL when unreadable. */
char *golden_read_all(const char *path, size_t *len);
/* Opens a safetensors file; false when it cannot be read or parsed. */
bool golden_st_open(GoldenWeights *w, const char *path);
void golden_st_close(GoldenWeights *w);
/*
 * The fp32 host copies of every weight of g (indexed by value id), in stored
 * order, rounded to the weight layout's dtype. A weight's file name is tried
 * as is and with `prefix` in front (NULL: none). NULL with a message in err
 * when a tensor is missing or has another shape.
 */
float **golden_load_weights(const Graph *g, const GoldenWeights *w, const char *prefix, char *err, size_t errlen);
void golden_free_weights(const Graph *g, float **w);
/* Seeded weights for models without a golden file, in stored order: [-0.1, 0.1), norm gains
 * (names with "ln_" or "layer_norm" ending in ".weight") near 1; rounded to the weight layout's dtype. */
float **golden_random_weights(const Graph *g, unsigned seed);
/* A float32 [rows, cols] .npy (malloc'd); NULL when unreadable or of another type. */
float *golden_read_npy(const char *path, int *rows, int *cols);
/* Up to cap whitespace-separated token ids; the count, -1 when unreadable. */
int golden_read_tokens(const char *path, int32_t *toks, int cap);
/* The largest |a[i] - b[i]| (NaN propagates). */
double golden_max_abs_diff(const float *a, const float *b, size_t n);

#endif
