/*
 * golden_files.c — readers of the golden files for the C tests
 * (golden_files.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "golden_files.h"

#include "fileio.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *golden_read_all(const char *path, size_t *len) {
    const char *why = NULL;
    return fio_read_file(path, (size_t)1 << 30, len, &why); /* the project's reader: regular files only */
}

bool golden_st_open(GoldenWeights *w, const char *path) {
    size_t len = 0;
    memset(w, 0, sizeof *w);
    w->file = golden_read_all(path, &len);
    if (!w->file || len < 8) return false;
    uint64_t hl = 0;
    memcpy(&hl, w->file, 8);
    if (hl > len - 8) return false;
    w->hdr = cJSON_ParseWithLength(w->file + 8, (size_t)hl);
    w->data = (const unsigned char *)w->file + 8 + hl;
    return w->hdr != NULL;
}

void golden_st_close(GoldenWeights *w) {
    cJSON_Delete(w->hdr);
    free(w->file);
    memset(w, 0, sizeof *w);
}

/* The tensor of a weight: its name, else prefix + name. */
static cJSON *find_tensor(const GoldenWeights *w, const char *name, const char *prefix) {
    cJSON *t = cJSON_GetObjectItem(w->hdr, name);
    if (t || !prefix) return t;
    char full[512];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    return cJSON_GetObjectItem(w->hdr, full);
}

/* Whether the file shape of t is what weight v reads (its dims, swapped when transposed_src). */
static bool file_shape_ok(const cJSON *t, const Value *v) {
    cJSON *shape = cJSON_GetObjectItem(t, "shape");
    int fd[2] = {ir_dim(v, 0), v->rank == 2 ? ir_dim(v, 1) : 1};
    if (v->transposed_src) { fd[0] = ir_dim(v, 1); fd[1] = ir_dim(v, 0); }
    return cJSON_GetArraySize(shape) == v->rank && cJSON_GetArrayItem(shape, 0)->valueint == fd[0] &&
           (v->rank == 1 || cJSON_GetArrayItem(shape, 1)->valueint == fd[1]);
}

float **golden_load_weights(const Graph *g, const GoldenWeights *w, const char *prefix, char *err, size_t errlen) {
    float **out = calloc((size_t)g->nvalues + 1, sizeof *out);
    for (int i = 0; out && i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->cls != VC_WEIGHT) continue;
        cJSON *t = find_tensor(w, v->weight_name, prefix);
        if (!t || !file_shape_ok(t, v)) {
            snprintf(err, errlen, "weight %s: %s", v->weight_name, t ? "file shape does not match" : "missing");
            golden_free_weights(g, out);
            return NULL;
        }
        cJSON *offs = cJSON_GetObjectItem(t, "data_offsets");
        const float *src = (const float *)(w->data + (size_t)cJSON_GetArrayItem(offs, 0)->valuedouble);
        size_t n = ir_numel(v, 1);
        float *dst = malloc(n * sizeof *dst + 1);
        for (size_t k = 0; dst && k < n; k++) {
            size_t sk = k;
            if (v->transposed_src) { /* dst [r, c] of dims [R, C] = file [c, r] */
                size_t r = k / (size_t)ir_dim(v, 1), c = k % (size_t)ir_dim(v, 1);
                sk = c * (size_t)ir_dim(v, 0) + r;
            }
            float x;
            memcpy(&x, src + sk, 4);
            dst[k] = round_to_dtype(x, ir_weight_layout_dtype(g)); /* weights: rounded to the layout's dtype */
        }
        out[i] = dst;
    }
    return out;
}

void golden_free_weights(const Graph *g, float **w) {
    for (int i = 0; w && i < g->nvalues; i++) free(w[i]);
    free(w);
}

float **golden_random_weights(const Graph *g, unsigned seed) {
    float **out = calloc((size_t)g->nvalues + 1, sizeof *out);
    for (int i = 0; out && i < g->nvalues; i++) {
        const Value *v = g->values[i];
        if (v->cls != VC_WEIGHT) continue;
        size_t n = ir_numel(v, 1);
        out[i] = malloc(n * sizeof(float) + 1);
        const char *name = v->weight_name;
        size_t len = strlen(name);
        bool gain = (strstr(name, "ln_") || strstr(name, "layer_norm")) && len > 7 && strcmp(name + len - 7, ".weight") == 0;
        for (size_t k = 0; out[i] && k < n; k++) {
            seed = seed * 1103515245u + 12345u;
            float u = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
            out[i][k] = round_to_dtype(gain ? 1.0f + 0.2f * u : 0.2f * u, ir_weight_layout_dtype(g));
        }
    }
    return out;
}

float *golden_read_npy(const char *path, int *rows, int *cols) {
    size_t len = 0;
    char *p = golden_read_all(path, &len);
    if (!p || len < 10 || memcmp(p, "\x93NUMPY", 6) != 0) { free(p); return NULL; }
    int hl = p[6] == 1 ? (unsigned char)p[8] | (unsigned char)p[9] << 8 : 0;
    int start = 10;
    if (p[6] != 1) { hl = (int)((unsigned char)p[8] | (unsigned char)p[9] << 8 | (unsigned char)p[10] << 16); start = 12; }
    char *hdr = strndup(p + start, (size_t)hl);
    char *sh = hdr ? strstr(hdr, "'shape': (") : NULL;
    if (!sh || !strstr(hdr, "'<f4'") || sscanf(sh, "'shape': (%d, %d)", rows, cols) != 2) { free(hdr); free(p); return NULL; }
    free(hdr);
    size_t n = (size_t)*rows * (size_t)*cols;
    float *out = (size_t)start + (size_t)hl + n * 4 <= len ? malloc(n * sizeof *out + 1) : NULL;
    if (out) memcpy(out, p + start + hl, n * 4);
    free(p);
    return out;
}

int golden_read_tokens(const char *path, int32_t *toks, int cap) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0, x;
    while (n < cap && fscanf(f, "%d", &x) == 1) toks[n++] = x;
    fclose(f);
    return n;
}

double golden_max_abs_diff(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double x = fabs((double)a[i] - b[i]);
        if (!(x <= m)) m = x; /* NaN propagates */
    }
    return m;
}
