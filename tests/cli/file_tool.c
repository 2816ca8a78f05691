/*
 * file_tool.c — makes the hostile files tests/cli/files.sh and
 * tests/rt/cli_sim_cache.sh need, through the runtime's own code:
 *
 *   file_tool plant DIR KEY EXT FILE
 *       stores FILE as cache entry KEY.EXT in DIR with a meta that matches
 *       it (what an attacker or a damaged disk can produce)
 *   file_tool weights MODEL OUT.safetensors TENSOR INDEX VALUE
 *       writes F32 weights for every weight of MODEL's plan (seeded random
 *       values), with VALUE (strtof: "nan", "inf", "3e38") at INDEX of TENSOR
 */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int plant(const char *dir, const char *key, const char *ext, const char *file) {
    size_t len = 0;
    char *data = rt_read_all(file, &len);
    RtCache c;
    char path[1200];
    if (!data || rt_cache_init(&c, dir) != 0 || rt_cache_store(&c, key, ext, data, len, path, sizeof path) != 0) {
        fprintf(stderr, "file_tool: cannot plant %s in %s (%s)\n", file, dir, c.why);
        free(data);
        return 1;
    }
    free(data);
    return 0;
}

/* Header JSON for the plan's weights in F32, file shapes, consecutive offsets. */
static char *st_header(const RtPlan *p, size_t *data_len) {
    size_t cap = 256 + (size_t)p->nweights * 256, n = 0, off = 0;
    char *h = malloc(cap);
    if (!h) return NULL;
    n += (size_t)snprintf(h + n, cap - n, "{");
    for (int i = 0; i < p->nweights; i++) {
        const RtPlanWeight *w = &p->weights[i];
        n += (size_t)snprintf(h + n, cap - n, "%s\"%s\": {\"dtype\": \"F32\", \"shape\": [", i ? ", " : "", w->name);
        for (int d = 0; d < w->rank; d++)
            n += (size_t)snprintf(h + n, cap - n, "%s%lld", d ? ", " : "", (long long)w->file_shape[d]);
        n += (size_t)snprintf(h + n, cap - n, "], \"data_offsets\": [%zu, %zu]}", off, off + w->count * 4);
        off += w->count * 4;
    }
    snprintf(h + n, cap - n, "}");
    *data_len = off;
    return h;
}

static int write_weights(const char *model, const char *out, const char *tensor, long index, float value) {
    srt_context *ctx;
    srt_model *m;
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = SRT_BACKEND_REF;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK || srt_model_open(ctx, model, &opt, &m) != SRT_OK) {
        fprintf(stderr, "file_tool: cannot open %s\n", model);
        return 1;
    }
    const RtPlan *p = &m->plan;
    size_t dlen = 0;
    char *h = st_header(p, &dlen);
    FILE *f = fopen(out, "wb");
    int found = 0, ok = h && f;
    if (ok) {
        uint64_t hl = strlen(h);
        unsigned char le[8];
        for (int i = 0; i < 8; i++) le[i] = (unsigned char)(hl >> (8 * i));
        ok = fwrite(le, 1, 8, f) == 8 && fwrite(h, 1, hl, f) == hl;
    }
    for (int i = 0; ok && i < p->nweights; i++) {
        const RtPlanWeight *w = &p->weights[i];
        float *v = malloc(w->count * sizeof *v + 4);
        ok = v != NULL;
        if (!ok) break;
        rt_random_tensor(1, w->name, w->rank, w->file_shape, v, w->count);
        if (strcmp(w->name, tensor) == 0 && index >= 0 && (size_t)index < w->count) {
            v[index] = value;
            found = 1;
        }
        ok = fwrite(v, sizeof *v, w->count, f) == w->count;
        free(v);
    }
    if (f && fclose(f) != 0) ok = 0;
    free(h);
    srt_model_close(m);
    srt_context_destroy(ctx);
    if (!ok || !found) fprintf(stderr, "file_tool: cannot write %s (or no element %ld of %s)\n", out, index, tensor);
    return ok && found ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "plant") == 0) return plant(argv[2], argv[3], argv[4], argv[5]);
    if (argc == 7 && strcmp(argv[1], "weights") == 0)
        return write_weights(argv[2], argv[3], argv[4], atol(argv[5]), strtof(argv[6], NULL));
    fprintf(stderr, "usage: file_tool plant DIR KEY EXT FILE | weights MODEL OUT TENSOR INDEX VALUE\n");
    return 2;
}
