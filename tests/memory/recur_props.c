/*
 * recur_props.c — properties of the recurrence module (docs/attention/recurrence.md)
 * on gpt2_recurrent_tiny with the goldens' weights (tests/memory/recur_tiny.*),
 * through the runtime's API on one backend (argv[1]: ref or sim):
 *
 *   1. window 0 equals plain GPT-2 (gpt2_tiny, the same weights file);
 *   2. h_prev matters: window 1 differs from gpt2_tiny on the same tokens;
 *   3. with the FFN's output layer zero (weight and bias), the rows of window 1
 *      no longer depend on the tokens before it (two inputs that differ only there
 *      give bitwise equal rows), while with the real weights they do;
 *   4. reset == a fresh session; a forward after a window is not;
 *   5. the model info says recurrent with overlap 4, and the state bytes are the
 *      KV caches plus h_prev (d_model + 1 values);
 *   6. modes that cannot carry h_prev are refused with a clear message.
 */
#include "rt_internal.h"
#include "rt_test.h"

#include "shortrt.h"

#include <math.h>

#define DIR SHORTC_SOURCE_DIR "/"
enum { N = 28, W = 16, K = 4, V = 256, D = 64 };

static srt_context *ctx;
static srt_backend backend;

/* arch with weights; allow_unused: the plain GPT-2 reads the recurrent checkpoint without its rec.* tensors. */
static srt_model *open_model(const char *arch, const char *weights, bool allow_unused) {
    srt_options o;
    srt_options_init(&o);
    o.backend = backend;
    o.allow_unused_weights = allow_unused;
    srt_model *m = NULL;
    if (srt_model_open(ctx, arch, &o, &m) != SRT_OK || srt_model_load_weights(m, weights) != SRT_OK) {
        fprintf(stderr, "%s: %s\n", arch, srt_last_error(ctx));
        check_failures++;
        srt_model_close(m);
        return NULL;
    }
    return m;
}

static double max_diff(const float *a, const float *b, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)a[i] - b[i]));
    return worst;
}

/* The goldens' weights with rec.ffn.3 (the FFN's output layer) zeroed, written to path. */
static bool zero_output_layer(const char *path) {
    RtSafetensors st;
    if (rt_st_open(ctx, DIR "tests/memory/recur_tiny.safetensors", &st) != SRT_OK) return false;
    unsigned char *bytes = malloc(st.map_len);
    bool ok = bytes != NULL;
    if (ok) memcpy(bytes, st.map, st.map_len);
    size_t data = (size_t)(st.data - (const unsigned char *)st.map);
    for (int k = 0; ok && k < 2; k++) {
        const RtStTensor *t = rt_st_find(&st, k ? "rec.ffn.3.bias" : "rec.ffn.3.weight");
        ok = t != NULL;
        if (ok) memset(bytes + data + t->begin, 0, t->end - t->begin);
    }
    if (ok) rt_test_write(path, bytes, st.map_len);
    free(bytes);
    rt_st_close(&st);
    return ok;
}

/* Rows of tokens[N] in the model's own mode (windows of 16 overlapping by 4). */
static bool eval_rows(srt_session *s, const int32_t *tokens, float *out) {
    srt_eval_options o;
    srt_eval_options_init(&o);
    o.mode = SRT_MODE_WINDOWS;
    o.overlap = K;
    srt_status st = srt_eval_logits(s, &o, tokens, N, out);
    if (st != SRT_OK) fprintf(stderr, "eval: %s\n", srt_last_error(ctx));
    return st == SRT_OK;
}

int main(int argc, char **argv) {
    backend = argc > 1 && strcmp(argv[1], "sim") == 0 ? SRT_BACKEND_SIM : SRT_BACKEND_REF;
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);
    int32_t tok[N], other[N];
    for (int i = 0; i < N; i++) {
        tok[i] = (int32_t)((i * 37 + 11) % V);
        other[i] = i < W - K ? (int32_t)((i * 91 + 5) % V) : tok[i]; /* differs only before window 1 */
    }
    const char *weights = DIR "tests/memory/recur_tiny.safetensors";
    srt_model *rm = open_model(DIR "models/gpt2_recurrent_tiny.arch", weights, false);
    srt_model *pm = open_model(DIR "models/gpt2_tiny.arch", weights, true);
    srt_session *rs = NULL, *ps = NULL;
    if (!rm || !pm || srt_session_create(rm, 1, &rs) != SRT_OK || srt_session_create(pm, 1, &ps) != SRT_OK) {
        check_failures++;
        return check_done("recur_props");
    }
    float *a = calloc((size_t)N * V, sizeof *a), *b = calloc((size_t)N * V, sizeof *b);
    float *c = calloc((size_t)N * V, sizeof *c);

    /* 1, 2: window 0 is plain GPT-2; window 1 (tokens 12..27) is not */
    CHECK(srt_forward(rs, tok, W, a) == SRT_OK && srt_forward(ps, tok, W, b) == SRT_OK);
    double d0 = max_diff(a, b, (size_t)W * V);
    CHECK(d0 <= 1e-5);
    CHECK(srt_forward(rs, tok + W - K, W, a) == SRT_OK);
    CHECK(srt_session_reset(ps) == SRT_OK && srt_forward(ps, tok + W - K, W, b) == SRT_OK);
    double d1 = max_diff(a, b, (size_t)W * V);
    CHECK(d1 > 1e-3);
    CHECK(srt_session_position(rs) == 0); /* positions restart in every window */

    /* 4: reset == fresh (window 1's tokens now run without h_prev: plain GPT-2 again) */
    CHECK(srt_session_reset(rs) == SRT_OK && srt_forward(rs, tok + W - K, W, c) == SRT_OK);
    CHECK(max_diff(c, b, (size_t)W * V) <= 1e-5);

    /* 3: with the real weights, rows of window 1 depend on tokens 0..11; with a zero output layer not */
    CHECK(eval_rows(rs, tok, a) && eval_rows(rs, other, b));
    double dep = max_diff(a + (size_t)W * V, b + (size_t)W * V, (size_t)(N - W) * V);
    CHECK(dep > 1e-3);
    char dir[256], path[300];
    if (rt_test_mkdtemp(dir, sizeof dir, "recur")) {
        snprintf(path, sizeof path, "%s/zero_out.safetensors", dir);
        CHECK(zero_output_layer(path));
        srt_model *zm = open_model(DIR "models/gpt2_recurrent_tiny.arch", path, false);
        srt_session *zs = NULL;
        if (zm && srt_session_create(zm, 1, &zs) == SRT_OK) {
            CHECK(eval_rows(zs, tok, a) && eval_rows(zs, other, b));
            CHECK(max_diff(a + (size_t)W * V, b + (size_t)W * V, (size_t)(N - W) * V) == 0);
            CHECK(max_diff(a, b, (size_t)W * V) > 1e-3); /* window 0 sees the differing tokens itself */
            srt_session_destroy(zs);
        }
        srt_model_close(zm);
        rt_test_rmdir(dir);
    }

    /* 5: info and state bytes: 2 KV caches of 2 x 4 heads x 16 rows (the window) x 16, and h_prev (D + 1 floats) */
    srt_model_info mi;
    CHECK(srt_model_get_info(rm, &mi) == SRT_OK && mi.recurrent == 1 && mi.overlap == K);
    size_t want = 2 * (size_t)2 * 4 * W * 16 * 4 + (D + 1) * 4;
    CHECK(mi.state_bytes == want && srt_session_state_bytes(rs) == want);
    CHECK(srt_model_get_info(pm, &mi) == SRT_OK && mi.recurrent == 0);

    /* 6: sliding and tokenwise would lose h_prev */
    srt_eval_options o;
    srt_eval_options_init(&o);
    o.mode = SRT_MODE_SLIDING;
    CHECK(srt_eval_logits(rs, &o, tok, N, a) == SRT_ERR_UNSUPPORTED);
    CHECK_HAS(srt_last_error(ctx), "is recurrent (each window passes h_prev to the next), so mode 'sliding'");
    o.mode = SRT_MODE_TOKENWISE;
    CHECK(srt_eval_logits(rs, &o, tok, N, a) == SRT_ERR_UNSUPPORTED);

    printf("recur_props (%s): window 0 vs gpt2_tiny %.2g, window 1 vs gpt2_tiny %.3g, dependence on window 0 %.3g\n",
           argv[1] ? argv[1] : "ref", d0, d1, dep);
    free(a);
    free(b);
    free(c);
    srt_session_destroy(rs);
    srt_session_destroy(ps);
    srt_model_close(rm);
    srt_model_close(pm);
    srt_context_destroy(ctx);
    return check_done("recur_props");
}
