/*
 * Per-step device timing (srt_session_set_profiling, srt_session_step_time;
 * exec.c RtProfile) on the simulator: off, no step has runs; on, one forward
 * of gpt2_tiny times every step of its forward program exactly once (graphs
 * stay off while profiling, so the steps are timed one by one) and gives the
 * same logits as the unprofiled forward; a second forward doubles the runs;
 * switching on again clears the sums; the attention kernel is among the
 * steps with its .arch line and layer; the ref backend and a batch session
 * refuse; a bad index is refused.
 */
#define _GNU_SOURCE
#include "rt_test.h"
#include "shortrt.h"

#include <stdbool.h>

static const int32_t toks[10] = {3, 141, 59, 26, 5, 35, 89, 79, 32, 38};

/* Sum of runs over every step, and whether some step launched an attention kernel with a line and layer. */
static int total_runs(srt_session *s, bool *saw_attention) {
    int n = srt_session_step_count(s), runs = 0;
    for (int i = 0; i < n; i++) {
        srt_step_time t;
        CHECK(srt_session_step_time(s, i, &t) == SRT_OK);
        CHECK(t.ms >= 0 && t.runs >= 0 && t.kernel && *t.kernel);
        runs += t.runs;
        if (t.runs && strncmp(t.kernel, "shortc_attn_", 12) == 0 && t.line > 0 && t.layer >= 0) *saw_attention = true;
    }
    return runs;
}

int main(void) {
    srt_context *ctx = NULL;
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);
    const char *arch = SHORTC_SOURCE_DIR "/models/gpt2_tiny.arch";
    srt_options o;
    srt_options_init(&o);
    o.backend = SRT_BACKEND_SIM;
    srt_model *m = NULL;
    srt_session *s = NULL;
    CHECK(srt_model_open(ctx, arch, &o, &m) == SRT_OK);
    CHECK(m && srt_model_random_weights(m, 5) == SRT_OK);
    CHECK(srt_session_create(m, 1, &s) == SRT_OK);
    int nsteps = srt_session_step_count(s);
    CHECK(nsteps > 0);
    bool attn = false;
    static float plain[10 * 256], timed[10 * 256];
    CHECK(srt_forward(s, toks, 10, plain) == SRT_OK);
    CHECK(total_runs(s, &attn) == 0); /* profiling off: nothing counted */

    CHECK(srt_session_set_profiling(s, 1) == SRT_OK);
    CHECK(srt_session_reset(s) == SRT_OK);
    CHECK(srt_forward(s, toks, 10, timed) == SRT_OK);
    CHECK(memcmp(plain, timed, sizeof plain) == 0);
    int once = total_runs(s, &attn);
    CHECK(once > 0 && once <= nsteps);
    CHECK(attn);
    CHECK(srt_session_reset(s) == SRT_OK);
    CHECK(srt_forward(s, toks, 10, timed) == SRT_OK);
    CHECK(total_runs(s, &attn) == 2 * once);
    CHECK(srt_session_set_profiling(s, 1) == SRT_OK); /* on again: the sums start over */
    CHECK(total_runs(s, &attn) == 0);
    CHECK(srt_session_set_profiling(s, 0) == SRT_OK);

    srt_step_time t;
    CHECK(srt_session_step_time(s, nsteps, &t) == SRT_ERR_INVALID);
    CHECK(srt_session_step_time(s, -1, &t) == SRT_ERR_INVALID);
    CHECK(srt_session_step_time(s, 0, NULL) == SRT_ERR_INVALID);
    srt_session *sb = NULL;
    CHECK(srt_session_create(m, 2, &sb) == SRT_OK);
    CHECK(srt_session_set_profiling(sb, 1) == SRT_ERR_UNSUPPORTED);
    srt_session_destroy(sb);
    srt_session_destroy(s);
    srt_model_close(m);

    o.backend = SRT_BACKEND_REF;
    CHECK(srt_model_open(ctx, arch, &o, &m) == SRT_OK);
    CHECK(srt_model_random_weights(m, 5) == SRT_OK);
    CHECK(srt_session_create(m, 1, &s) == SRT_OK);
    CHECK(srt_session_step_count(s) == 0);
    CHECK(srt_session_set_profiling(s, 1) == SRT_ERR_UNSUPPORTED);
    CHECK(strstr(srt_last_error(ctx), "ref") != NULL);
    srt_session_destroy(s);
    srt_model_close(m);
    srt_context_destroy(ctx);
    return check_done("rt_profile");
}
