/*
 * test_loss_kernel.c — the emitted loss kernel (templates/loss.cuh, the
 * plan's "loss" program) on the simulator, on logits a naive softmax cannot
 * take: rows of magnitude 1e4 (exp overflows fp32), a row spanning -3e4 to
 * 3e4, a constant row (loss log V), a row with -inf entries and an unscored
 * row (target -1: 0). Each loss must match -log softmax computed in double
 * on the host to 1e-5 relative. For an adaptive-softmax model the emitted
 * kernel is the LOGPROB form (its logits are log-probabilities): the rows
 * are turned into log-probabilities first and the loss must be the same.
 *
 *   test_loss_kernel MODEL.arch...
 *
 * Each model is compiled with the compiler library; the loss step's kernel,
 * grid and block come from its plan, and the kernel is run with srt_sim_run
 * on the emitted .cu (a vocabulary divisible by 4 exercises the 128-bit
 * loads, an odd one the scalar path).
 */
#include "check.h"
#include "shortc.h"
#include "shortrt.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 6 };

/* -log softmax(row)[target] in double. */
static double host_nll(const float *row, int V, int target) {
    double mx = -INFINITY, sum = 0;
    for (int v = 0; v < V; v++) mx = row[v] > mx ? row[v] : mx;
    for (int v = 0; v < V; v++) sum += exp((double)row[v] - mx);
    return log(sum) + mx - row[target];
}

/* Fills the test rows and their targets. */
static void fill_rows(float *lg, int32_t *tg, int V) {
    unsigned x = 12345;
    for (int v = 0; v < V; v++) {
        x = x * 1103515245u + 12345u;
        float u = (float)((x >> 8) & 0xffff) / 65536.0f; /* [0, 1) */
        lg[0 * V + v] = 1e4f + 0.01f * (float)v;         /* large: exp(x) overflows fp32 */
        lg[1 * V + v] = -3e4f + 6e4f * u;                /* wide */
        lg[2 * V + v] = 7.5f;                            /* constant: loss log V */
        lg[3 * V + v] = v % 3 ? -INFINITY : 2.0f * u;    /* -inf entries */
        lg[4 * V + v] = u;                               /* unscored */
        lg[5 * V + v] = -1e4f - 3.0f * u;                /* large negative */
    }
    int32_t t[ROWS] = {V - 1, V / 2, 3, 0, -1, 1};
    memcpy(tg, t, sizeof t);
}

/* Each row replaced by its log-softmax (in double): what an adaptive softmax's logits are. */
static void to_logprobs(float *lg, int V) {
    for (int i = 0; i < ROWS; i++) {
        float *row = lg + (size_t)i * (size_t)V;
        double mx = -INFINITY, sum = 0;
        for (int v = 0; v < V; v++) mx = row[v] > mx ? row[v] : mx;
        for (int v = 0; v < V; v++) sum += exp((double)row[v] - mx);
        for (int v = 0; v < V; v++) row[v] = (float)((double)row[v] - mx - log(sum));
    }
}

/* The loss step of a plan: kernel name and block size. */
static int loss_step(const char *plan, char *kernel, size_t len, int *block) {
    cJSON *root = cJSON_Parse(plan);
    const cJSON *pg, *progs = cJSON_GetObjectItemCaseSensitive(root, "programs");
    int found = 0;
    cJSON_ArrayForEach(pg, progs) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(pg, "name");
        if (!cJSON_IsString(name) || strcmp(name->valuestring, "loss") != 0) continue;
        const cJSON *step = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pg, "steps"), 0);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(step, "kernel");
        const cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(step, "block"), 0);
        if (cJSON_IsString(k) && cJSON_IsNumber(b)) {
            snprintf(kernel, len, "%s", k->valuestring);
            *block = b->valueint;
            found = 1;
        }
    }
    cJSON_Delete(root);
    return found;
}

static void check_model(srt_context *ctx, const char *path) {
    Arena arena;
    arena_init(&arena);
    Diag d;
    diag_init(&d, &arena, stderr);
    CompileOptions co = {.path = path};
    CompileResult cr;
    memset(&cr, 0, sizeof cr);
    char kernel[256];
    int block = 0;
    CHECK(shortc_compile(&arena, &d, &co, &cr));
    CHECK(cr.emit.plan_json && loss_step(cr.emit.plan_json, kernel, sizeof kernel, &block));
    if (!cr.emit.plan_json || !block) {
        compile_result_free(&cr);
        arena_free(&arena);
        return;
    }
    int V = cr.spec->vocab;
    float *lg = malloc(sizeof *lg * (size_t)ROWS * (size_t)V), nll[ROWS];
    int32_t tg[ROWS];
    fill_rows(lg, tg, V);
    int adaptive = cr.spec->adaptive.style != ADAPTIVE_NONE;
    CHECK(adaptive == (strstr(kernel, "_logprob") != NULL)); /* the LOGPROB form exactly for adaptive softmax */
    if (adaptive) to_logprobs(lg, V);
    for (int i = 0; i < ROWS; i++) nll[i] = -1.0f;
    srt_sim_arg args[4] = {
        {.kind = SRT_SIM_ARG_BUF, .data = lg, .bytes = sizeof *lg * (size_t)ROWS * (size_t)V},
        {.kind = SRT_SIM_ARG_BUF, .data = tg, .bytes = sizeof tg},
        {.kind = SRT_SIM_ARG_BUF, .data = nll, .bytes = sizeof nll},
        {.kind = SRT_SIM_ARG_I32, .i32 = ROWS},
    };
    srt_sim_launch l = {.source = cr.emit.cu, .len = cr.emit.cu_len, .name = path, .kernel = kernel,
                        .grid = {ROWS, 1, 1}, .block = {(unsigned)block, 1, 1}, .checked = 1, .args = args,
                        .nargs = 4};
    srt_status st = srt_sim_run(ctx, &l);
    if (st != SRT_OK) fprintf(stderr, "%s: %s\n", path, srt_last_error(ctx));
    CHECK(st == SRT_OK);
    for (int i = 0; st == SRT_OK && i < ROWS; i++) {
        double want = tg[i] < 0 ? 0.0 : host_nll(lg + (size_t)i * (size_t)V, V, tg[i]);
        int ok = isfinite(nll[i]) && fabs(nll[i] - want) <= 1e-5 * (1 + fabs(want));
        if (!ok) fprintf(stderr, "%s (%s): row %d: loss %.9g, expected %.9g\n", path, kernel, i, nll[i], want);
        CHECK(ok);
    }
    CHECK(fabs(nll[2] - log((double)V)) < 1e-5 * log((double)V)); /* the constant row, from its definition */
    free(lg);
    compile_result_free(&cr);
    arena_free(&arena);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_loss_kernel MODEL.arch...\n");
        return 2;
    }
    srt_context *ctx = NULL;
    if (srt_context_create(&ctx, NULL, NULL) != SRT_OK) return 1;
    for (int i = 1; i < argc; i++) check_model(ctx, argv[i]);
    srt_context_destroy(ctx);
    return check_done("test_loss_kernel");
}
