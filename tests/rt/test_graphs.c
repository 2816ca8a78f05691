/*
 * CUDA graphs on the simulator (exec.c run_graph, runtime/sim/sim_graph.c):
 * gpt2_tiny and mixed_tiny run the same calls with graphs and with
 * SHORTC_NO_GRAPHS=1, chunked (prefill chunks, then T=1 decode steps) and in
 * one call, three times over with a reset between: the logits must be
 * bit-identical. The simulator's call counts show that a call whose graph is
 * replayed makes one cuGraphLaunch and no kernel launch or GEMM call, and
 * that graphs keep replaying after a reset. The simulator's capture calls
 * alone: a GEMM issued on a capturing stream runs only when its graph is
 * launched, with the values it was issued with; misuse and a failing node
 * are reported. A session's cuBLASLt descriptors are made once per GEMM step
 * and shape, not per call.
 */
#define _GNU_SOURCE
#include "rt_internal.h"
#include "rt_test.h"

#include <stdlib.h>
#include <unistd.h>

static srt_context *ctx;
static const int32_t toks[12] = {3, 141, 59, 26, 5, 35, 89, 79, 32, 38, 46, 26};

/* A call of a round: tokens [from, from + n). */
typedef struct Call {
    int from, n;   /* first token, count */
} Call;

/* Opens an .arch on sim (graphs on or off), seed-5 weights, one session. */
static srt_model *open_sim(const char *path, bool graphs, srt_session **s) {
    if (graphs) unsetenv("SHORTC_NO_GRAPHS");
    else setenv("SHORTC_NO_GRAPHS", "1", 1);
    srt_options o;
    srt_options_init(&o);
    o.backend = SRT_BACKEND_SIM;
    srt_model *m = NULL;
    *s = NULL;
    srt_status st = srt_model_open(ctx, path, &o, &m);
    if (st == SRT_OK) st = srt_model_random_weights(m, 5);
    if (st == SRT_OK) st = srt_session_create(m, 1, s);
    unsetenv("SHORTC_NO_GRAPHS");
    if (st != SRT_OK) {
        fprintf(stderr, "%s: %s\n", path, srt_last_error(ctx));
        check_failures++;
        srt_model_close(m);
        return NULL;
    }
    CHECK(m->graphs == graphs);
    return m;
}

static RtCallCounts counts_of(const srt_model *m) {
    RtCallCounts c = {0};
    m->drv.call_counts(&c);
    return c;
}

/* Runs the calls from position 0, the logits of each into out (vocab floats per token). */
static bool run_round(srt_session *s, const Call *calls, int ncalls, int vocab, float *out) {
    if (srt_session_reset(s) != SRT_OK) return false;
    for (int c = 0; c < ncalls; c++)
        if (srt_forward(s, toks + calls[c].from, calls[c].n, out + (size_t)calls[c].from * (size_t)vocab) != SRT_OK) {
            fprintf(stderr, "forward: %s\n", srt_last_error(ctx));
            return false;
        }
    return true;
}

/* Three rounds of calls with graphs equal the same rounds without; in the third every call is one
 * graph launch (pure replays when same_p: each call at the position its graph was captured at). */
static void same_logits(const char *path, const Call *calls, int ncalls, bool same_p) {
    srt_session *sg = NULL, *sn = NULL;
    srt_model *mg = open_sim(path, true, &sg), *mn = open_sim(path, false, &sn);
    srt_model_info info;
    if (!mg || !mn || srt_model_get_info(mg, &info) != SRT_OK) {
        check_failures++;
        srt_model_close(mg);
        srt_model_close(mn);
        return;
    }
    int ntok = calls[ncalls - 1].from + calls[ncalls - 1].n;
    size_t n = (size_t)ntok * (size_t)info.vocab;
    float *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
    CHECK(want && got && run_round(sn, calls, ncalls, info.vocab, want));
    for (int round = 0; round < 3 && want && got; round++) {
        RtCallCounts before = counts_of(mg);
        srt_call_counts sb, sa;
        CHECK(srt_session_call_counts(sg, &sb) == SRT_OK);
        memset(got, 0, sizeof *got * n);
        CHECK(run_round(sg, calls, ncalls, info.vocab, got));
        RtCallCounts after = counts_of(mg);
        CHECK(srt_session_call_counts(sg, &sa) == SRT_OK);
        /* the session counts what the simulator's driver saw */
        CHECK(sa.launches - sb.launches == after.launches - before.launches);
        CHECK(sa.gemms - sb.gemms == after.gemms - before.gemms);
        CHECK(sa.graph_launches - sb.graph_launches == after.graph_launches - before.graph_launches);
        if (memcmp(want, got, sizeof *got * n) != 0) {
            fprintf(stderr, "%s: round %d: logits with graphs differ from those without\n", path, round);
            check_failures++;
        }
        CHECK(sg->graph_note[0] == 0);
        if (round == 2) {
            /* every call replays its graph: one graph launch each, nothing launched directly */
            CHECK(after.graph_launches - before.graph_launches == ncalls);
            CHECK(after.launches == before.launches && after.gemms == before.gemms);
            CHECK(!same_p || after.captures == before.captures);
            CHECK(after.graph_nodes_run - before.graph_nodes_run >= ncalls);
        }
    }
    free(want);
    free(got);
    srt_model_close(mg);
    srt_model_close(mn);
}

/* A session's cuBLASLt plans (gemm_lt.c): without graphs, a round of prefill chunks and decode steps makes its
 * descriptors in the first round only; later rounds (after a reset) and decode steps make none. */
static void lt_plans_kept(const char *path, const Call *calls, int ncalls) {
    srt_session *s = NULL;
    srt_model *m = open_sim(path, false, &s);
    srt_model_info info;
    if (!m || srt_model_get_info(m, &info) != SRT_OK) {
        check_failures++;
        srt_model_close(m);
        return;
    }
    bool lt = false; /* the plan has a GEMM with an epilogue (gpt2_tiny; mixed_tiny has none) */
    for (int i = 0; i < m->plan.nsteps; i++) lt |= m->plan.steps[i].op == RT_STEP_GEMM && m->plan.steps[i].epilogue != PLAN_EPI_NONE;
    float *out = calloc((size_t)12 * (size_t)info.vocab, sizeof *out);
    /* one forward of T tokens, steps one by one: the program's launches and GEMMs, one wait, the ids in and the
     * logits out */
    int T = calls[0].n, launches = 0, gemms = 0;
    const RtProgram *pg = rt_plan_program(&m->plan, T);
    for (int i = pg->first; i < pg->first + pg->nsteps; i++) {
        launches += m->plan.steps[i].op == RT_STEP_LAUNCH;
        gemms += m->plan.steps[i].op == RT_STEP_GEMM;
    }
    srt_call_counts k0, k1;
    CHECK(out && srt_session_call_counts(s, &k0) == SRT_OK && srt_forward(s, toks, T, out) == SRT_OK &&
          srt_session_call_counts(s, &k1) == SRT_OK);
    CHECK(k1.launches - k0.launches == launches && k1.gemms - k0.gemms == gemms && k1.graph_launches == k0.graph_launches);
    CHECK(k1.syncs - k0.syncs == 1 && k1.copies - k0.copies == 2);
    CHECK(k1.bytes - k0.bytes == (long long)T * 4 + (long long)T * info.vocab * 4);
    CHECK(srt_session_call_counts(NULL, &k1) == SRT_ERR_INVALID);
    RtCallCounts c0, c1, c2;
    c0 = counts_of(m);
    CHECK(out && run_round(s, calls, ncalls, info.vocab, out));
    c1 = counts_of(m);
    CHECK(out && run_round(s, calls, ncalls, info.vocab, out));
    c2 = counts_of(m);
    CHECK(lt ? c1.lt_descs > c0.lt_descs : c1.lt_descs == c0.lt_descs);
    CHECK(c1.lt_heuristics - c0.lt_heuristics == c1.lt_descs - c0.lt_descs);
    CHECK(c2.lt_descs == c1.lt_descs && c2.lt_heuristics == c1.lt_heuristics && c2.gemms > c1.gemms);
    free(out);
    srt_model_close(m);
}

/* 2x2 f32 GEMM C = A B on the simulator's driver, captured: nothing runs until the graph does. */
static void driver_capture(void) {
    RtDriver d;
    char err[256];
    CHECK(rt_driver_sim(&d, 1, 0, err, sizeof err) == SRT_OK);
    CUstream st = NULL;
    cublasHandle_t h = NULL;
    CUdeviceptr buf = 0;
    CHECK(d.streamCreate(&st, 0) == CUDA_SUCCESS && d.blasCreate(&h) == CUBLAS_STATUS_SUCCESS &&
          d.blasSetStream(h, st) == CUBLAS_STATUS_SUCCESS && d.memAlloc(&buf, 12 * sizeof(float)) == CUDA_SUCCESS);
    if (!st || !h || !buf) return;
    float host[12] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0}, out[4];
    CHECK(d.memcpyHtoD(buf, host, sizeof host) == CUDA_SUCCESS);
    float *A = (float *)(uintptr_t)buf, *B = A + 4, *C = A + 8;
    float alpha = 1.0f, beta = 0.0f;
    RtCallCounts c0, c1;
    d.call_counts(&c0);
    CHECK(d.streamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
    CHECK(d.streamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_ERROR_ILLEGAL_STATE);
    CHECK(d.gemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha, A, CUDA_R_32F, 2, B, CUDA_R_32F, 2, &beta, C,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    alpha = 2.0f; /* the node keeps the value it was issued with */
    CUgraph g = NULL;
    CUgraphExec x = NULL;
    CHECK(d.streamEndCapture(st, &g) == CUDA_SUCCESS && g);
    CHECK(d.memcpyDtoH(out, buf + 8 * sizeof(float), sizeof out) == CUDA_SUCCESS && out[0] == 0 && out[3] == 0);
    CHECK(g && d.graphInstantiate(&x, g, 0) == CUDA_SUCCESS && d.graphDestroy(g) == CUDA_SUCCESS);
    CHECK(x && d.graphLaunch(x, st) == CUDA_SUCCESS);
    CHECK(d.memcpyDtoH(out, buf + 8 * sizeof(float), sizeof out) == CUDA_SUCCESS);
    /* column-major: C = [1 3; 2 4] [5 7; 6 8] */
    CHECK(out[0] == 23 && out[1] == 34 && out[2] == 31 && out[3] == 46);
    d.call_counts(&c1);
    CHECK(c1.gemms == c0.gemms && c1.captures == c0.captures + 1 && c1.graph_launches == c0.graph_launches + 1);
    /* an update from a graph of another shape is refused and leaves the graph as it was */
    CHECK(d.streamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
    CHECK(d.streamEndCapture(st, &g) == CUDA_SUCCESS);
    CUgraphExecUpdateResultInfo info;
    CHECK(d.graphExecUpdate(x, g, &info) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    d.graphDestroy(g);
    /* an update from a graph of the same shape takes the new parameters: a bad lda fails on replay, named */
    CHECK(d.streamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
    CHECK(d.gemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha, A, CUDA_R_32F, 1, B, CUDA_R_32F, 2, &beta, C,
                   CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    CHECK(d.streamEndCapture(st, &g) == CUDA_SUCCESS);
    CHECK(d.graphExecUpdate(x, g, &info) == CUDA_SUCCESS);
    d.graphDestroy(g);
    CHECK(d.graphLaunch(x, st) == CUDA_ERROR_LAUNCH_FAILED);
    CHECK_HAS(d.last_fault(), "cublasGemmEx: leading dimension too small");
    CHECK(d.graphExecDestroy(x) == CUDA_SUCCESS);
    /* synchronizing a capturing stream invalidates the capture: no graph */
    CHECK(d.streamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
    CHECK(d.streamSynchronize(st) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(d.streamEndCapture(st, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED && g == NULL);
    CHECK(d.streamEndCapture(st, &g) == CUDA_ERROR_ILLEGAL_STATE);
    CHECK(d.streamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    d.memFree(buf);
    d.blasDestroy(h);
    d.streamDestroy(st);
}

int main(void) {
    driver_capture();
    Counter cnt = COUNTER_INIT;
    CHECK(chdir(SHORTC_SOURCE_DIR) == 0);
    CHECK(srt_context_create(&ctx, count_alloc, &cnt) == SRT_OK);
    static const Call chunked[] = {{0, 4}, {4, 4}, {8, 1}, {9, 1}, {10, 1}, {11, 1}};
    static const Call one[] = {{0, 12}};
    static const char *const models[] = {"models/gpt2_tiny.arch", "models/mixed_tiny.arch"};
    for (int i = 0; i < 2; i++) {
        same_logits(models[i], chunked, 6, false);
        same_logits(models[i], one, 1, true);
        lt_plans_kept(models[i], chunked, 6);
    }
    srt_context_destroy(ctx);
    CHECK(cnt.live == 0);
    return check_done("test_graphs");
}
