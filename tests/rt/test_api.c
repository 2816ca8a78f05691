/*
 * Public API rules without a compiler, simulator or GPU: names, defaults,
 * argument checks, open errors (missing file, no plan, malformed plan, not a
 * model), the cuda backend failing with one clear line when there is no
 * driver, the ref backend refusing a .cu whose .arch is gone, and every
 * allocation going through the host allocator and coming back.
 */
#define _GNU_SOURCE
#include "rt_test.h"
#include "shortrt.h"
#include "toy_plan.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[256];

static srt_status open_with(srt_context *ctx, const char *path, srt_backend b) {
    srt_options opt;
    srt_options_init(&opt);
    opt.backend = b;
    srt_model *m = (srt_model *)1;
    srt_status st = srt_model_open(ctx, path, &opt, &m);
    if (st == SRT_OK) srt_model_close(m);
    else CHECK(m == NULL);
    return st;
}

int main(void) {
    if (!rt_test_mkdtemp(dir, sizeof dir, "api")) return check_done("test_api");
    CHECK(strcmp(srt_status_name(SRT_ERR_WEIGHTS), "SRT_ERR_WEIGHTS") == 0);
    CHECK(strcmp(srt_status_name((srt_status)99), "SRT_ERR_UNKNOWN") == 0);
    CHECK(strcmp(srt_backend_name(SRT_BACKEND_SIM), "sim") == 0 && strcmp(srt_backend_name(SRT_BACKEND_AUTO), "auto") == 0);
    srt_options opt;
    memset(&opt, 0x5a, sizeof opt);
    srt_options_init(&opt);
    CHECK(opt.backend == SRT_BACKEND_AUTO && opt.cache_dir == NULL && opt.sim_threads == 0 && opt.sim_checked == 1 &&
          opt.model_name == NULL);
    CHECK(srt_context_create(NULL, NULL, NULL) == SRT_ERR_INVALID);
    CHECK(srt_last_error(NULL) != NULL);
    srt_model_close(NULL);
    srt_session_destroy(NULL);
    srt_free(NULL, NULL);
    CHECK(srt_forward(NULL, NULL, 1, NULL) == SRT_ERR_INVALID);
    CHECK(srt_model_random_weights(NULL, 1) == SRT_ERR_INVALID);

    Counter cnt = COUNTER_INIT;
    srt_context *ctx;
    CHECK(srt_context_create(&ctx, count_alloc, &cnt) == SRT_OK);
    CHECK(cnt.live == 1);
    CHECK(srt_last_error(ctx) != NULL && srt_last_error(ctx)[0] == 0);

    char path[300], arch[300];
    CHECK(open_with(ctx, NULL, SRT_BACKEND_SIM) == SRT_ERR_INVALID);
    CHECK(open_with(ctx, "model.txt", SRT_BACKEND_SIM) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "'model.txt': expected an emitted .cu or an .arch file");
    snprintf(path, sizeof path, "%s/missing.cu", dir);
    CHECK(open_with(ctx, path, SRT_BACKEND_SIM) == SRT_ERR_IO);
    CHECK_HAS(srt_last_error(ctx), "cannot open");
    snprintf(arch, sizeof arch, "%s/missing.arch", dir);
    CHECK(open_with(ctx, arch, SRT_BACKEND_REF) == SRT_ERR_IO);
    CHECK_HAS(srt_last_error(ctx), "missing.arch");

    snprintf(path, sizeof path, "%s/noplan.cu", dir);
    rt_test_write(path, "extern \"C\" __global__ void k() {}\n", 34);
    CHECK(open_with(ctx, path, SRT_BACKEND_CUDA) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "noplan.cu: no plan found");

    snprintf(path, sizeof path, "%s/bad.cu", dir);
    const char *badcu = "/* SHORTC-PLAN-BEGIN\n{\"format\": \"shortc-plan\", \"version\": 2}\nSHORTC-PLAN-END */\n";
    rt_test_write(path, badcu, strlen(badcu));
    CHECK(open_with(ctx, path, SRT_BACKEND_CUDA) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "bad.cu: plan: model: missing");

    /* a well-formed toy .cu */
    snprintf(path, sizeof path, "%s/toy.cu", dir);
    char *cu = malloc(strlen(TOY_PLAN_JSON) + 200);
    sprintf(cu, "/* SHORTC-PLAN-BEGIN\n%sSHORTC-PLAN-END */\nextern \"C\" __global__ void toy_embed() {}\n", TOY_PLAN_JSON);
    rt_test_write(path, cu, strlen(cu));
    free(cu);

    /* ref needs the .arch the plan names ("toy.arch", which does not exist) */
    CHECK(open_with(ctx, path, SRT_BACKEND_REF) == SRT_ERR_UNSUPPORTED);
    CHECK_HAS(srt_last_error(ctx), "the ref backend runs the compiler's IR and needs the model's .arch");
    CHECK_HAS(srt_last_error(ctx), "compiled from 'toy.arch', which cannot be found");

    /* cuda without a driver: one clear line */
    setenv("SHORTC_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    CHECK(open_with(ctx, path, SRT_BACKEND_CUDA) == SRT_ERR_NO_DEVICE);
    CHECK_HAS(srt_last_error(ctx), "no CUDA driver found (/nonexistent/libcuda.so.1: cannot open shared object file");
    CHECK_HAS(srt_last_error(ctx), "); use --backend sim to run on the CPU simulator");
    CHECK(strchr(srt_last_error(ctx), '\n') == NULL);
    unsetenv("SHORTC_LIBCUDA");
    void *real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!real) {
        /* this machine has no driver: the default library name is in the message */
        CHECK(open_with(ctx, path, SRT_BACKEND_CUDA) == SRT_ERR_NO_DEVICE);
        CHECK_HAS(srt_last_error(ctx), "no CUDA driver found (libcuda.so.1: cannot open shared object file");
    } else {
        dlclose(real);
    }

    /* npy through the counting allocator */
    float data[6] = {1, 2, 3, 4, 5, 6}, *back = NULL;
    int64_t shape[2] = {2, 3};
    int rank = 2;
    snprintf(path, sizeof path, "%s/x.npy", dir);
    CHECK(srt_npy_write_f32(ctx, path, data, shape, 2) == SRT_OK);
    CHECK(srt_npy_read_f32(ctx, path, &back, shape, &rank) == SRT_OK);
    CHECK(cnt.live == 2);
    srt_free(ctx, back);

    /* everything came from the hook and went back */
    CHECK(cnt.live == 1 && cnt.total > 10);
    srt_context_destroy(ctx);
    CHECK(cnt.live == 0);
    rt_test_rmdir(dir);
    return check_done("test_api");
}
