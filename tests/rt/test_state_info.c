/* test_state_info.c — srt_model_state_count / srt_model_state_get (docs/runtime.md): for every kind of
 * state (GPT-2's KV caches, Shortformer's sliding caches, the recurrence's h_prev), on the ref and sim
 * backends, the entries name the state of each layer with its role, and their bytes sum to
 * srt_model_info.state_bytes; a bad index is an error. Shortformer's positional tables are not state:
 * srt_model_info.derived_bytes counts them. */
#include "rt_test.h"
#include "shortrt.h"

/* Opens models/NAME.arch on backend b with seeded weights; checks its state entries. */
static void check_model(srt_context *ctx, const char *name, srt_backend b, int want_entries, const char *want_role,
                        int want_keep) {
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = b;
    char path[256];
    snprintf(path, sizeof path, "models/%s.arch", name);
    srt_model *m = NULL;
    CHECK(srt_model_open(ctx, path, &opt, &m) == SRT_OK);
    if (!m) {
        fprintf(stderr, "%s: %s\n", name, srt_last_error(ctx));
        return;
    }
    srt_model_info mi;
    CHECK(srt_model_get_info(m, &mi) == SRT_OK);
    int n = srt_model_state_count(m);
    CHECK(n == want_entries);
    size_t sum = 0;
    int role_seen = 0, sliding = 0;
    for (int i = 0; i < n; i++) {
        srt_state_info si;
        CHECK(srt_model_state_get(m, i, &si) == SRT_OK);
        CHECK(si.name && si.name[0] && si.role && si.dtype && si.capacity > 0 && si.bytes > 0);
        sum += si.bytes;
        role_seen += strcmp(si.role, want_role) == 0;
        sliding += si.keep == want_keep;
    }
    CHECK(sum == mi.state_bytes);
    for (int i = 0; i < n; i++) { /* no derived table among the state entries */
        srt_state_info e;
        CHECK(srt_model_state_get(m, i, &e) == SRT_OK && strcmp(e.role, "table") != 0);
    }
    CHECK(role_seen >= 1);
    CHECK(want_keep < 0 || sliding == mi.n_layers); /* every layer's cache slides to L' */
    srt_state_info si;
    CHECK(srt_model_state_get(m, n, &si) == SRT_ERR_INVALID && strstr(srt_last_error(ctx), "state entry"));
    CHECK(srt_model_state_get(m, -1, &si) == SRT_ERR_INVALID);
    CHECK(srt_model_state_get(m, 0, NULL) == SRT_ERR_INVALID);
    srt_model_close(m);
}

int main(void) {
    CHECK(chdir(SHORTC_SOURCE_DIR) == 0);
    srt_context *ctx = NULL;
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);
    CHECK(srt_model_state_count(NULL) == 0);
    const srt_backend backends[] = {SRT_BACKEND_REF, SRT_BACKEND_SIM};
    for (int b = 0; ctx && b < 2; b++) {
        check_model(ctx, "gpt2_tiny", backends[b], 2, "kv_cache", -1);           /* K/V per layer */
        check_model(ctx, "shortformer_tiny", backends[b], 2, "kv_cache", 16);    /* a sliding cache per layer */
        check_model(ctx, "gpt2_recurrent_tiny", backends[b], 3, "recurrent", -1); /* K/V per layer + h_prev */
    }
    srt_context_destroy(ctx);
    return check_done("rt_state_info");
}
