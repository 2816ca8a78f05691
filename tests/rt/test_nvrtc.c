/*
 * The cuda backend's compile path without a GPU: NVRTC -> cubin through the
 * artifact cache. Miss (ELF cubin produced), hit (same bytes), corrupted
 * entries (flipped byte, truncation) detected and rebuilt, a different arch
 * is a different entry, compile errors carry NVRTC's log.
 */
#define _GNU_SOURCE
#include "rt_test.h"
#include "rt_internal.h"

#include <glob.h>
#include <stdlib.h>
#include <unistd.h>

static const char *src =
    "#include <cuda_fp16.h>\n"
    "extern \"C\" __global__ void scale(float *x, int n, float a) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = __half2float(__float2half(x[i] * a));\n"
    "}\n";

static char dir[256];

static srt_status compile(const char *source, int arch, RtCompiled *out, char *err, size_t errlen) {
    const char *names[] = {"scale"};
    RtCompileRequest req = {.source = source, .len = strlen(source), .name = "toy model", .arch = arch, .cache_dir = dir,
                            .kernel_names = names, .nkernels = 1};
    return rt_nvrtc_compile(&req, out, err, errlen);
}

/* The single cached cubin for arch (its path in buf); 0 if not exactly one. */
static int cubin_path(int arch, char *buf, size_t len) {
    char pat[320];
    snprintf(pat, sizeof pat, "%s/toy_model-sm%d-*.cubin", dir, arch);
    glob_t g;
    int ok = glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1;
    if (ok) snprintf(buf, len, "%s", g.gl_pathv[0]);
    globfree(&g);
    return ok;
}

int main(void) {
    if (!rt_test_mkdtemp(dir, sizeof dir, "nvrtc")) return check_done("test_nvrtc");
    char err[8192];
    RtCompiled a, b, c;
    srt_status st = compile(src, 80, &a, err, sizeof err);
    CHECK(st == SRT_OK);
    if (st != SRT_OK) {
        fprintf(stderr, "%s\n", err);
        return check_done("test_nvrtc");
    }
    CHECK(!a.cache_hit && !a.cache_corrupt && a.compile_ms > 0);
    CHECK(a.image_len > 64 && memcmp(a.image, "\x7f" "ELF", 4) == 0);

    CHECK(compile(src, 80, &b, err, sizeof err) == SRT_OK);
    CHECK(b.cache_hit && b.compile_ms == 0 && b.image_len == a.image_len && memcmp(a.image, b.image, a.image_len) == 0);
    free(b.image);

    char path[512];
    CHECK(cubin_path(80, path, sizeof path));
    /* flipped bytes: detected, rebuilt, identical */
    rt_test_flip(path, (long)a.image_len / 2);
    rt_test_flip(path, 1);
    CHECK(compile(src, 80, &c, err, sizeof err) == SRT_OK);
    CHECK(!c.cache_hit && c.cache_corrupt && c.image_len == a.image_len && memcmp(a.image, c.image, a.image_len) == 0);
    free(c.image);
    CHECK(compile(src, 80, &c, err, sizeof err) == SRT_OK);
    CHECK(c.cache_hit && !c.cache_corrupt);
    free(c.image);
    /* truncated */
    CHECK(truncate(path, 100) == 0);
    CHECK(compile(src, 80, &c, err, sizeof err) == SRT_OK);
    CHECK(!c.cache_hit && c.cache_corrupt && c.image_len == a.image_len);
    free(c.image);
    /* a 100-byte "cubin" with a meta that matches it (valid hash): not an ELF image, so not a hit */
    {
        char key[400];
        const char *base = strrchr(path, '/') + 1;
        snprintf(key, sizeof key, "%.*s", (int)(strlen(base) - strlen(".cubin")), base);
        RtCache cache;
        char p2[600], junk[100];
        memset(junk, 'x', sizeof junk);
        memcpy(junk, "\x7f" "ELF", 4);
        CHECK(rt_cache_init(&cache, dir) == 0);
        CHECK(rt_cache_store(&cache, key, "cubin", junk, sizeof junk, p2, sizeof p2) == 0);
        CHECK(strcmp(p2, path) == 0);
        CHECK(compile(src, 80, &c, err, sizeof err) == SRT_OK);
        CHECK(!c.cache_hit && c.cache_corrupt && c.image_len == a.image_len && memcmp(a.image, c.image, a.image_len) == 0);
        free(c.image);
        /* rebuild (the cached image failed to load): the entry is evicted, built and stored again */
        const char *names[] = {"scale"};
        RtCompileRequest req = {.source = src, .len = strlen(src), .name = "toy model", .arch = 80, .cache_dir = dir,
                                .kernel_names = names, .nkernels = 1, .rebuild = 1};
        CHECK(rt_nvrtc_compile(&req, &c, err, sizeof err) == SRT_OK);
        CHECK(!c.cache_hit && c.compile_ms > 0 && c.image_len == a.image_len);
        free(c.image);
        CHECK(compile(src, 80, &c, err, sizeof err) == SRT_OK);
        CHECK(c.cache_hit);
        free(c.image);
    }
    /* meta sidecar removed */
    char meta[600];
    snprintf(meta, sizeof meta, "%s.meta", path);
    CHECK(unlink(meta) == 0);
    CHECK(compile(src, 80, &c, err, sizeof err) == SRT_OK);
    CHECK(!c.cache_hit && c.cache_corrupt);
    free(c.image);

    /* another arch, another entry; another source, another key */
    CHECK(compile(src, 90, &c, err, sizeof err) == SRT_OK);
    CHECK(!c.cache_hit && memcmp(c.image, "\x7f" "ELF", 4) == 0);
    free(c.image);
    CHECK(cubin_path(90, path, sizeof path) && cubin_path(80, path, sizeof path));
    char *src2 = rt_test_replace(src, "x[i] * a", "x[i] * a + 1.0f");
    CHECK(compile(src2, 80, &c, err, sizeof err) == SRT_OK);
    CHECK(!c.cache_hit);
    free(c.image);
    free(src2);

    /* errors */
    char *broken = rt_test_replace(src, "int i =", "int i = undefined_thing +");
    CHECK(compile(broken, 80, &c, err, sizeof err) == SRT_ERR_COMPILE);
    CHECK_HAS(err, "NVRTC");
    CHECK_HAS(err, "failed to compile the kernels of 'toy model' for sm_80");
    CHECK_HAS(err, "undefined_thing");
    free(broken);
    CHECK(compile(src, 35, &c, err, sizeof err) == SRT_ERR_COMPILE);
    CHECK_HAS(err, "does not support that architecture");

    /* the public entry point uses $SHORTC_CACHE */
    setenv("SHORTC_CACHE", dir, 1);
    srt_context *ctx;
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);
    srt_compile_info info;
    CHECK(srt_nvrtc_compile(ctx, src, strlen(src), 86, &info) == SRT_OK);
    CHECK(!info.cache_hit && info.image_bytes > 0);
    CHECK(srt_nvrtc_compile(ctx, src, strlen(src), 86, &info) == SRT_OK);
    CHECK(info.cache_hit && info.compile_ms == 0);
    CHECK(srt_nvrtc_compile(ctx, "int x = ;", 9, 86, &info) == SRT_ERR_COMPILE);
    CHECK_HAS(srt_last_error(ctx), "NVRTC");
    srt_context_destroy(ctx);

    free(a.image);
    rt_test_rmdir(dir);
    return check_done("test_nvrtc");
}
