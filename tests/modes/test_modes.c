/*
 * test_modes.c — the inference modes of the runtime (srt_eval_logits, srt_eval_logits_stream,
 * srt_eval_nll, srt_forward_nll; runtime/src/modes.c) through the public API.
 *
 *   test_modes MODEL.arch BACKEND
 *
 * For each mode and parameter, every row srt_eval_logits returns equals the
 * row computed by hand: the window that scores token i found from the
 * issue's formulas (sliding: the first n with e_n = min(L + nS, N) > i, the
 * window [max(0, e_n - L), e_n); windows: the first n with
 * min(n(L - K) + L, N) > i, the window [n(L - K), that end); tokenwise and
 * nonoverlapping: [iL/L, ...)), run alone from a reset session; the progress
 * callback reaches N once, increasing; the losses equal -log softmax of those
 * rows; sliding with stride L equals nonoverlapping on a multiple of L and
 * windows with overlap 0 always; the errors (cached, a stride for windows, an
 * overlap out of range, a window past the segment) name what is wrong. On
 * sim, srt_session_bytes_to_host shows that srt_eval_nll copies one float per
 * token (the device computes the losses), srt_eval_logits a row per token.
 * srt_eval_logits_stream hands out the same rows, in order, a window at a
 * time, and stops with its callback's error.
 */
#include "check.h"
#include "shortrt.h"

#include <math.h>
#include <stdint.h>

/* The test's model, session and sizes. */
typedef struct T {
    srt_context *ctx;   /* runtime context */
    srt_model *m;       /* the model, random weights */
    srt_session *s;     /* its session */
    int V;              /* vocab */
    int L;              /* segment */
    int device;         /* 1: sim (results are copied from the device), 0: ref */
} T;

/* The window [*start, *end) that scores token i (of n) under o, from the formulas. */
static void window_of(const srt_eval_options *o, int L, int64_t n, int64_t i, int64_t *start, int64_t *end) {
    if (o->mode == SRT_MODE_SLIDING) {
        int64_t S = o->stride ? o->stride : L;
        for (int64_t k = 0;; k++) {
            int64_t e = L + k * S < n ? L + k * S : n;
            if (e > i) {
                *end = e;
                *start = e - L > 0 ? e - L : 0;
                return;
            }
        }
    }
    int64_t step = L - (o->mode == SRT_MODE_WINDOWS ? o->overlap : 0);
    for (int64_t k = 0;; k++) {
        int64_t e = k * step + L < n ? k * step + L : n;
        if (e > i) {
            *start = k * step;
            *end = e;
            return;
        }
    }
}

/* Progress seen: calls, the last value, whether values increased. */
typedef struct Seen {
    int calls;        /* callbacks */
    int64_t last;     /* last done */
    int increasing;   /* every done > the previous */
} Seen;

static void on_progress(void *ud, int64_t done, int64_t total) {
    Seen *s = ud;
    s->increasing &= done > s->last && done <= total;
    s->last = done;
    s->calls++;
}

/* Checks o's rows over tokens[n] against the hand-computed windows, and its losses. */
static void check_mode(T *t, srt_eval_options o, const int32_t *tokens, int64_t n, const char *what) {
    size_t V = (size_t)t->V;
    float *rows = calloc((size_t)n * V, sizeof *rows), *one = calloc((size_t)t->L * V, sizeof *one);
    float *nll = calloc((size_t)n, sizeof *nll);
    Seen seen = {0, 0, 1};
    o.progress = on_progress;
    o.progress_ud = &seen;
    size_t before = srt_session_bytes_to_host(t->s);
    srt_status st = srt_eval_logits(t->s, &o, tokens, n, rows);
    /* the logits of every token come to the host once (on sim; the ref backend copies nothing) */
    CHECK(srt_session_bytes_to_host(t->s) - before == (t->device ? (size_t)n * V * sizeof(float) : 0));
    if (st != SRT_OK) fprintf(stderr, "%s: %s\n", what, srt_last_error(t->ctx));
    CHECK(st == SRT_OK);
    CHECK(seen.increasing && seen.last == n && seen.calls >= 1);
    int bad = 0;
    for (int64_t i = 0; i < n && st == SRT_OK; i++) {
        int64_t a, e;
        window_of(&o, t->L, n, i, &a, &e);
        CHECK(srt_session_reset(t->s) == SRT_OK);
        CHECK(srt_forward(t->s, tokens + a, (int)(e - a), one) == SRT_OK);
        for (size_t v = 0; v < V; v++)
            if (fabsf(one[(size_t)(i - a) * V + v] - rows[(size_t)i * V + v]) > 1e-4f * (1 + fabsf(one[(size_t)(i - a) * V + v])))
                bad++;
    }
    if (bad) fprintf(stderr, "%s: %d logits differ from the hand-computed windows\n", what, bad);
    CHECK(bad == 0);
    if (n < 2) { /* no prediction to score */
        free(rows), free(one), free(nll);
        return;
    }
    before = srt_session_bytes_to_host(t->s);
    st = srt_eval_nll(t->s, &o, tokens, n, nll);
    if (st != SRT_OK) fprintf(stderr, "%s: %s\n", what, srt_last_error(t->ctx));
    CHECK(st == SRT_OK);
    /* evaluation copies one float per token fed (its loss, 0 for the last), never a logits row: the loss is
     * computed on the device */
    size_t copied = srt_session_bytes_to_host(t->s) - before;
    if (copied != (t->device ? (size_t)n * sizeof(float) : 0))
        fprintf(stderr, "%s: evaluation copied %zu bytes to the host for %lld tokens\n", what, copied, (long long)n);
    CHECK(copied == (t->device ? (size_t)n * sizeof(float) : 0));
    int badl = 0;
    for (int64_t i = 0; i + 1 < n && st == SRT_OK; i++) {
        const float *r = rows + (size_t)i * V;
        double mx = r[0], sum = 0;
        for (size_t v = 1; v < V; v++) mx = r[v] > mx ? r[v] : mx;
        for (size_t v = 0; v < V; v++) sum += exp(r[v] - mx);
        double want = log(sum) + mx - r[tokens[i + 1]];
        badl += fabs(want - nll[i]) > 1e-4 * (1 + fabs(want));
    }
    if (badl) fprintf(stderr, "%s: %d losses differ from -log softmax of the rows\n", what, badl);
    CHECK(badl == 0);
    free(rows);
    free(one);
    free(nll);
}

/* The rows of o over tokens[n] (malloc'd), or NULL. */
static float *rows_of(T *t, srt_eval_options o, const int32_t *tokens, int64_t n) {
    float *rows = calloc((size_t)n * (size_t)t->V, sizeof *rows);
    if (rows && srt_eval_logits(t->s, &o, tokens, n, rows) == SRT_OK) return rows;
    free(rows);
    return NULL;
}

/* Two modes give the same rows (first nrows of n). */
static void check_same(T *t, srt_eval_options a, srt_eval_options b, const int32_t *tokens, int64_t n, const char *what) {
    float *x = rows_of(t, a, tokens, n), *y = rows_of(t, b, tokens, n);
    CHECK(x && y);
    int bad = 0;
    for (size_t i = 0; x && y && i < (size_t)n * (size_t)t->V; i++) bad += x[i] != y[i];
    if (bad) fprintf(stderr, "%s: %d logits differ\n", what, bad);
    CHECK(bad == 0);
    free(x);
    free(y);
}

static srt_eval_options opts(srt_mode m, int stride, int overlap) {
    srt_eval_options o;
    srt_eval_options_init(&o);
    o.mode = m, o.stride = stride, o.overlap = overlap;
    return o;
}

/* An error call: status st and a message holding needle. */
static void check_error(T *t, srt_eval_options o, const int32_t *tokens, int64_t n, srt_status want, const char *needle) {
    float *rows = calloc((size_t)n * (size_t)t->V, sizeof *rows);
    CHECK(srt_eval_logits(t->s, &o, tokens, n, rows) == want);
    CHECK_HAS(srt_last_error(t->ctx), needle);
    free(rows);
}

/* What srt_eval_logits_stream's callback saw. */
typedef struct Streamed {
    const float *want;  /* srt_eval_logits' rows */
    int V;              /* row width */
    int maxrows;        /* the most rows one call may carry (the window) */
    int64_t next;       /* the first row the next call must carry */
    int calls;          /* calls so far */
    int bad;            /* calls out of order or rows differing */
    int stop_at;        /* the call (1-based) that returns SRT_ERR_IO; 0: none */
} Streamed;

static srt_status on_rows(void *ud, int64_t first_row, int nrows, const float *logits) {
    Streamed *k = ud;
    k->calls++;
    if (first_row != k->next || nrows < 1 || nrows > k->maxrows) k->bad++;
    else if (memcmp(logits, k->want + (size_t)first_row * (size_t)k->V, sizeof *logits * (size_t)nrows * (size_t)k->V))
        k->bad++;
    k->next = first_row + nrows;
    return k->calls == k->stop_at ? SRT_ERR_IO : SRT_OK;
}

/* srt_eval_logits_stream hands out srt_eval_logits' rows in order, each once, a window at a time; a callback's
 * error stops it with that status. */
static void check_stream(T *t, srt_eval_options o, const int32_t *tokens, int64_t n, const char *what) {
    float *want = rows_of(t, o, tokens, n);
    CHECK(want != NULL);
    if (!want) return;
    Streamed k = {.want = want, .V = t->V, .maxrows = t->L};
    CHECK(srt_eval_logits_stream(t->s, &o, tokens, n, on_rows, &k) == SRT_OK);
    if (k.bad || k.next != n) fprintf(stderr, "%s: %d bad calls of %d, rows to %lld of %lld\n", what, k.bad, k.calls,
                                      (long long)k.next, (long long)n);
    CHECK(k.bad == 0 && k.next == n && k.calls >= (int)((n + t->L - 1) / t->L));
    Streamed stop = {.want = want, .V = t->V, .maxrows = t->L, .stop_at = 2};
    CHECK(srt_eval_logits_stream(t->s, &o, tokens, n, on_rows, &stop) == SRT_ERR_IO);
    CHECK(stop.calls == 2 && stop.bad == 0);
    CHECK_HAS(srt_last_error(t->ctx), "the rows callback stopped the evaluation at row");
    CHECK(srt_eval_logits_stream(t->s, &o, tokens, n, NULL, &k) == SRT_ERR_INVALID);
    free(want);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_modes MODEL.arch ref|sim\n");
        return 2;
    }
    T t = {0};
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = strcmp(argv[2], "sim") == 0 ? SRT_BACKEND_SIM : SRT_BACKEND_REF;
    srt_model_info mi;
    if (srt_context_create(&t.ctx, NULL, NULL) != SRT_OK || srt_model_open(t.ctx, argv[1], &opt, &t.m) != SRT_OK ||
        srt_model_random_weights(t.m, 5) != SRT_OK || srt_model_get_info(t.m, &mi) != SRT_OK ||
        srt_session_create(t.m, 1, &t.s) != SRT_OK) {
        fprintf(stderr, "test_modes: %s\n", t.ctx ? srt_last_error(t.ctx) : "no context");
        return 1;
    }
    t.V = mi.vocab, t.L = mi.segment, t.device = opt.backend == SRT_BACKEND_SIM;
    int L = t.L;
    int64_t n = 2 * L + 7, nm = 3 * L;
    int32_t *tok = malloc(sizeof *tok * (size_t)nm);
    for (int64_t i = 0; i < nm; i++) tok[i] = (int32_t)((i * 37 + 11) % t.V);

    int sim = opt.backend == SRT_BACKEND_SIM;
    check_mode(&t, opts(SRT_MODE_NONOVERLAPPING, 0, 0), tok, n, "nonoverlapping");
    check_mode(&t, opts(SRT_MODE_SLIDING, 5, 0), tok, n, "sliding 5");
    check_mode(&t, opts(SRT_MODE_WINDOWS, 0, L / 3), tok, n, "windows L/3");
    if (!sim) { /* the simulator re-runs the sequence per call: these are slow there */
        check_mode(&t, opts(SRT_MODE_SLIDING, 1, 0), tok, L + 6, "sliding 1");
        check_mode(&t, opts(SRT_MODE_SLIDING, L, 0), tok, n, "sliding L");
        check_mode(&t, opts(SRT_MODE_WINDOWS, 0, L - 1), tok, n, "windows L-1");
        check_mode(&t, opts(SRT_MODE_TOKENWISE, 0, 0), tok, n, "tokenwise");
        check_mode(&t, opts(SRT_MODE_NONOVERLAPPING, 0, 0), tok, 1, "one token");
    }
    check_stream(&t, opts(SRT_MODE_NONOVERLAPPING, 0, 0), tok, n, "stream nonoverlapping");
    check_stream(&t, opts(SRT_MODE_SLIDING, 5, 0), tok, n, "stream sliding 5");
    if (!sim) check_stream(&t, opts(SRT_MODE_TOKENWISE, 0, 0), tok, n, "stream tokenwise");
    check_same(&t, opts(SRT_MODE_SLIDING, L, 0), opts(SRT_MODE_NONOVERLAPPING, 0, 0), tok, nm, "sliding L vs nonoverlapping");
    check_same(&t, opts(SRT_MODE_WINDOWS, 0, 0), opts(SRT_MODE_NONOVERLAPPING, 0, 0), tok, n, "windows 0 vs nonoverlapping");

    check_error(&t, opts(SRT_MODE_CACHED, 0, 0), tok, n, SRT_ERR_UNSUPPORTED, "mode 'cached' cannot run it");
    check_error(&t, opts(SRT_MODE_WINDOWS, 3, 0), tok, n, SRT_ERR_INVALID, "a stride applies to mode 'sliding' only");
    check_error(&t, opts(SRT_MODE_WINDOWS, 0, L), tok, n, SRT_ERR_INVALID, "expected 0 to");
    check_error(&t, opts(SRT_MODE_SLIDING, L + 1, 0), tok, n, SRT_ERR_INVALID, "expected 1 to its window");
    srt_eval_options big = opts(SRT_MODE_NONOVERLAPPING, 0, 0);
    big.window = L + 1;
    check_error(&t, big, tok, n, SRT_ERR_INVALID, "takes 1 to");
    check_error(&t, opts(SRT_MODE_NONOVERLAPPING, 0, 0), tok, 0, SRT_ERR_INVALID, "no tokens");
    float one;
    CHECK(srt_eval_nll(t.s, &big, tok, 1, &one) == SRT_ERR_INVALID);
    srt_mode md;
    CHECK(srt_mode_from_name("sliding", &md) == SRT_OK && md == SRT_MODE_SLIDING);
    CHECK(srt_mode_from_name("slide", &md) == SRT_ERR_INVALID);
    CHECK(strcmp(srt_mode_name(SRT_MODE_WINDOWS), "windows") == 0);
    /* srt_forward_nll: a target outside the vocabulary is refused */
    int32_t bad_target = t.V;
    CHECK(srt_forward_nll(t.s, tok, 1, 0, &bad_target, &one) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(t.ctx), "outside the vocabulary");

    free(tok);
    srt_session_destroy(t.s);
    srt_model_close(t.m);
    srt_context_destroy(t.ctx);
    return check_done("test_modes");
}
