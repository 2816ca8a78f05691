/*
 * stream_ref.c — the logits file `shortc run` wrote before it streamed
 * (tests/cli/stream.sh): every row computed into one n x vocab array in
 * memory, then written whole with srt_npy_write_f32. Runs MODEL on BACKEND
 * with --random-weights 1 over the ids of TOKENS:
 *
 *   stream_ref MODEL BACKEND TOKENS OUT.npy segments CHUNK   run's own loop: consecutive segments, the
 *                                                            session reset before each unless the model
 *                                                            carries state; CHUNK tokens per call (0: all)
 *   stream_ref MODEL BACKEND TOKENS OUT.npy MODE STRIDE OVERLAP   srt_eval_logits under a named mode
 */
#include "shortrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ids of a token file (malloc'd); their count in *n, or NULL. */
static int32_t *read_ids(const char *path, int64_t *n) {
    FILE *f = fopen(path, "r");
    int32_t *ids = NULL;
    int64_t cap = 0;
    long v;
    *n = 0;
    while (f && fscanf(f, "%ld", &v) == 1) {
        if (*n == cap && !(ids = realloc(ids, sizeof *ids * (size_t)(cap = cap ? 2 * cap : 1024)))) break;
        ids[(*n)++] = (int32_t)v;
    }
    if (f) fclose(f);
    return ids;
}

/* run's loop of consecutive segments into logits. */
static srt_status segments(srt_session *s, const srt_model_info *mi, const int32_t *t, int64_t n, int chunk,
                           float *logits) {
    srt_status st = SRT_OK;
    for (int64_t seg = 0; seg < n && st == SRT_OK; seg += mi->segment) {
        int len = n - seg < mi->segment ? (int)(n - seg) : mi->segment;
        if (seg == 0 || !mi->carries_state) st = srt_session_reset(s);
        for (int at = 0; at < len && st == SRT_OK; at += chunk > 0 && chunk < len - at ? chunk : len - at)
            st = srt_forward(s, t + seg + at, chunk > 0 && chunk < len - at ? chunk : len - at,
                             logits + (size_t)(seg + at) * (size_t)mi->vocab);
    }
    return st;
}

int main(int argc, char **argv) {
    if (argc != 7 && argc != 8) {
        fprintf(stderr, "usage: stream_ref MODEL ref|sim TOKENS OUT.npy (segments CHUNK | MODE STRIDE OVERLAP)\n");
        return 2;
    }
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = strcmp(argv[2], "sim") == 0 ? SRT_BACKEND_SIM : SRT_BACKEND_REF;
    srt_context *ctx = NULL;
    srt_model *m = NULL;
    srt_session *s = NULL;
    srt_model_info mi;
    int64_t n = 0;
    int32_t *ids = read_ids(argv[3], &n);
    float *logits = NULL;
    srt_status st = ids ? srt_context_create(&ctx, NULL, NULL) : SRT_ERR_IO;
    if (st == SRT_OK && (st = srt_model_open(ctx, argv[1], &opt, &m)) == SRT_OK &&
        (st = srt_model_random_weights(m, 1)) == SRT_OK && (st = srt_model_get_info(m, &mi)) == SRT_OK &&
        (st = srt_session_create(m, 1, &s)) == SRT_OK)
        st = (logits = malloc(sizeof *logits * (size_t)n * (size_t)mi.vocab)) ? SRT_OK : SRT_ERR_NOMEM;
    if (st == SRT_OK && strcmp(argv[5], "segments") == 0) st = segments(s, &mi, ids, n, atoi(argv[6]), logits);
    else if (st == SRT_OK) {
        srt_eval_options o;
        srt_eval_options_init(&o);
        if ((st = argc == 8 ? srt_mode_from_name(argv[5], &o.mode) : SRT_ERR_INVALID) == SRT_OK) {
            o.stride = atoi(argv[6]);
            o.overlap = atoi(argv[7]);
            st = srt_eval_logits(s, &o, ids, n, logits);
        }
    }
    int64_t shape[2] = {n, st == SRT_OK ? mi.vocab : 0};
    if (st == SRT_OK) st = srt_npy_write_f32(ctx, argv[4], logits, shape, 2);
    if (st != SRT_OK) fprintf(stderr, "stream_ref: %s %s\n", srt_status_name(st), ctx ? srt_last_error(ctx) : "");
    free(logits);
    free(ids);
    srt_session_destroy(s);
    srt_model_close(m);
    srt_context_destroy(ctx);
    return st == SRT_OK ? 0 : 1;
}
