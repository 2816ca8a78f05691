/*
 * Weight binding against a hand-written plan: conversion (F32/F16/BF16 to the
 * stored dtype), transposition, the "transformer." prefix, optional weights;
 * errors for missing tensors, wrong shapes, unsupported dtypes, truncated
 * files, NaN/Inf values (refused unless allowed); the seeded random weights; fp16/bf16 encoders agreeing with the
 * compiler's round_to_dtype.
 */
#include "rt_test.h"
#include "rt_internal.h"
#include "toy_plan.h"

#include <math.h>
#include <unistd.h>

static srt_context *ctx;
static RtPlan plan;
static char dir[256], path[300];

/* A safetensors file from a header and data, written to path. */
static void write_st(const char *header, const void *data, size_t dlen) {
    size_t h = strlen(header);
    unsigned char *b = malloc(8 + h + dlen);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(b + 8, header, h);
    memcpy(b + 8 + h, data, dlen);
    rt_test_write(path, b, 8 + h + dlen);
    free(b);
}

/* Binds the file at path to the toy plan; allow_unused: tensors the plan does not read are accepted. */
static srt_status bind_opt(float **vals, bool allow_unused) {
    RtSafetensors st;
    srt_status s = rt_st_open(ctx, path, &st);
    if (s != SRT_OK) return s;
    for (int i = 0; i < plan.nweights; i++) vals[i] = NULL;
    s = rt_weights_from_st(ctx, &plan, &st, false, allow_unused, vals);
    rt_st_close(&st);
    return s;
}

/* bind_opt with unused tensors refused (the loader's default). */
static srt_status bind(float **vals) { return bind_opt(vals, false); }

static void free_vals(float **vals) {
    for (int i = 0; i < plan.nweights; i++) rt_free(ctx, vals[i]);
}

#define WTE "\"transformer.wte.weight\": {\"dtype\": \"F32\", \"shape\": [8, 4], \"data_offsets\": [0, 128]}"
#define FC "\"h.0.mlp.c_fc.weight\": {\"dtype\": \"F16\", \"shape\": [6, 4], \"data_offsets\": [128, 176]}"
#define LNF "\"ln_f.weight\": {\"dtype\": \"BF16\", \"shape\": [4], \"data_offsets\": [176, 184]}"

static void bad(const char *header, srt_status want_st, const char *want) {
    static unsigned char zeros[256];
    write_st(header, zeros, 256);
    float *vals[4];
    srt_status s = bind(vals);
    CHECK(s == want_st);
    CHECK_HAS(srt_last_error(ctx), want);
    if (s == SRT_OK) free_vals(vals);
}

/* NaN or Inf in a weight is refused with the tensor and the first bad index, unless allowed. */
static void test_nonfinite(const unsigned char *good) {
    unsigned char data[184];
    memcpy(data, good, sizeof data);
    float nan = NAN;
    memcpy(data + 4 * 5, &nan, 4);
    memcpy(data + 4 * 9, &nan, 4);
    write_st("{" WTE ", " FC ", " LNF "}", data, 184);
    float *vals[4];
    CHECK(bind(vals) == SRT_ERR_WEIGHTS);
    CHECK_HAS(srt_last_error(ctx), "weight 'wte.weight' in ");
    CHECK_HAS(srt_last_error(ctx), "holds NaN at index 5 (refused");
    RtSafetensors st;
    CHECK(rt_st_open(ctx, path, &st) == SRT_OK);
    CHECK(rt_weights_from_st(ctx, &plan, &st, true, false, vals) == SRT_OK);
    CHECK(isnan(vals[0][5]));
    free_vals(vals);
    rt_st_close(&st);
    /* -Inf in an f16 tensor (0xfc00) */
    memcpy(data, good, sizeof data);
    data[128 + 2 * 7] = 0x00;
    data[128 + 2 * 7 + 1] = 0xfc;
    write_st("{" WTE ", " FC ", " LNF "}", data, 184);
    CHECK(bind(vals) == SRT_ERR_WEIGHTS);
    CHECK_HAS(srt_last_error(ctx), "weight 'h.0.mlp.c_fc.weight' in ");
    CHECK_HAS(srt_last_error(ctx), "holds -Inf at index 7");
    /* a finite F32 value that overflows the stored f16 (file order index, before the transpose) */
    float fc32[24];
    for (int i = 0; i < 24; i++) fc32[i] = 0.25f * (float)i;
    fc32[13] = 1e6f;
    unsigned char d2[96 + 128 + 8];
    memcpy(d2, good, 128);
    memcpy(d2 + 128, fc32, 96);
    memcpy(d2 + 224, good + 176, 8);
    write_st("{" WTE ", \"h.0.mlp.c_fc.weight\": {\"dtype\": \"F32\", \"shape\": [6, 4], \"data_offsets\": [128, 224]}, "
             "\"ln_f.weight\": {\"dtype\": \"BF16\", \"shape\": [4], \"data_offsets\": [224, 232]}}", d2, sizeof d2);
    CHECK(bind(vals) == SRT_ERR_WEIGHTS);
    CHECK_HAS(srt_last_error(ctx), "weight 'h.0.mlp.c_fc.weight' in ");
    CHECK_HAS(srt_last_error(ctx), "holds 1e+06, which overflows its stored dtype fp16, at index 13 (refused");
}

static int bits_equal(float a, float b) { return memcmp(&a, &b, 4) == 0; }

int main(void) {
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);
    CHECK(rt_plan_parse(ctx, "toy.cu", TOY_PLAN_JSON, strlen(TOY_PLAN_JSON), &plan) == SRT_OK);
    if (!rt_test_mkdtemp(dir, sizeof dir, "weights")) return check_done("test_weights");
    snprintf(path, sizeof path, "%s/w.safetensors", dir);

    /* data: wte f32 [8,4], c_fc f16 [6,4] (file order), ln_f bf16 [4] */
    unsigned char data[184];
    float wte[32], fc[24], lnf[4] = {1.0f, 0.5f, 1.00390625f, -2.0f};
    for (int i = 0; i < 32; i++) wte[i] = 0.1f * (float)i - 1.0f;
    for (int i = 0; i < 24; i++) fc[i] = rt_f16_to_f32(rt_f32_to_f16(0.01f * (float)(i * i) - 0.3f));
    memcpy(data, wte, 128);
    for (int i = 0; i < 24; i++) {
        uint16_t h = rt_f32_to_f16(fc[i]);
        memcpy(data + 128 + 2 * i, &h, 2);
    }
    for (int i = 0; i < 4; i++) {
        uint16_t h = rt_f32_to_bf16(lnf[i]);
        memcpy(data + 176 + 2 * i, &h, 2);
    }
    write_st("{" WTE ", " FC ", " LNF ", \"unused\": {\"dtype\": \"I64\", \"shape\": [0], \"data_offsets\": [184, 184]}}", data, 184);
    float *vals[4];
    /* a tensor no weight reads is refused, listed with its shape, unless allowed */
    CHECK(bind_opt(vals, false) == SRT_ERR_WEIGHTS);
    CHECK_HAS(srt_last_error(ctx), "holds 1 tensor that model 'toy' does not use: 'unused' [0] (");
    CHECK_HAS(srt_last_error(ctx), "--allow-unused, or srt_options.allow_unused_weights, loads it anyway");
    srt_status s = bind_opt(vals, true);
    CHECK(s == SRT_OK);
    if (s != SRT_OK) fprintf(stderr, "%s\n", srt_last_error(ctx));
    if (s == SRT_OK) {
        for (int i = 0; i < 32; i++) CHECK(vals[0][i] == wte[i]);                  /* f32 -> f32, via the prefix */
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 4; j++) CHECK(vals[1][j * 6 + i] == fc[i * 4 + j]); /* [6,4] file -> [4,6] stored */
        for (int i = 0; i < 4; i++) CHECK(vals[2][i] == round_to_dtype(lnf[i], DT_BF16));
        for (int i = 0; i < 4; i++) CHECK(vals[3][i] == 0.0f);                     /* optional, absent: zeros */
        free_vals(vals);
    }

    /* an F32 file for a stored f16 weight is rounded to f16; BF16 for f32 is exact */
    float fc32[24];
    for (int i = 0; i < 24; i++) fc32[i] = 0.1f + 0.013f * (float)i;
    unsigned char data2[248];
    memcpy(data2, wte, 128);
    memcpy(data2 + 128, fc32, 96);
    memcpy(data2 + 224, data + 176, 8);
    memcpy(data2 + 232, wte, 16);
    write_st("{" WTE ", \"h.0.mlp.c_fc.weight\": {\"dtype\": \"F32\", \"shape\": [6, 4], \"data_offsets\": [128, 224]},"
             " \"ln_f.weight\": {\"dtype\": \"BF16\", \"shape\": [4], \"data_offsets\": [224, 232]},"
             " \"ln_f.bias\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [232, 248]}}",
             data2, 248);
    if (bind(vals) == SRT_OK) {
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 4; j++) CHECK(bits_equal(vals[1][j * 6 + i], round_to_dtype(fc32[i * 4 + j], DT_F16)));
        CHECK(vals[1][0] != fc32[0]); /* 0.1 is not an fp16 value */
        for (int i = 0; i < 4; i++) CHECK(vals[3][i] == wte[i]); /* present optional weight is read */
        free_vals(vals);
    } else {
        CHECK(!"F32 -> f16 binding failed");
        fprintf(stderr, "%s\n", srt_last_error(ctx));
    }

    /* binding errors */
    char want[512];
    snprintf(want, sizeof want, "weight 'wte.weight' is missing from %s", path);
    bad("{" FC ", " LNF "}", SRT_ERR_WEIGHTS, want);
    snprintf(want, sizeof want, "weight 'h.0.mlp.c_fc.weight' is missing from %s", path);
    bad("{" WTE ", " LNF "}", SRT_ERR_WEIGHTS, want);
    bad("{\"wte.weight\": {\"dtype\": \"F32\", \"shape\": [8, 3], \"data_offsets\": [0, 96]}, " FC ", " LNF "}", SRT_ERR_WEIGHTS,
        "weight 'wte.weight': expected shape [8, 4], got [8, 3]");
    bad("{" WTE ", \"h.0.mlp.c_fc.weight\": {\"dtype\": \"F16\", \"shape\": [4, 6], \"data_offsets\": [128, 176]}, " LNF "}",
        SRT_ERR_WEIGHTS, "weight 'h.0.mlp.c_fc.weight': expected shape [6, 4], got [4, 6]");
    bad("{" WTE ", " FC ", \"ln_f.weight\": {\"dtype\": \"F32\", \"shape\": [1, 4], \"data_offsets\": [176, 192]}}", SRT_ERR_WEIGHTS,
        "weight 'ln_f.weight': expected shape [4], got [1, 4]");
    snprintf(want, sizeof want, "weight 'wte.weight' in %s has dtype I32; supported: F32, F16, BF16", path);
    bad("{\"wte.weight\": {\"dtype\": \"I32\", \"shape\": [8, 4], \"data_offsets\": [0, 128]}, " FC ", " LNF "}", SRT_ERR_WEIGHTS,
        want);
    bad("{\"wte.weight\": {\"dtype\": \"F64\", \"shape\": [8, 4], \"data_offsets\": [0, 300]}, " FC ", " LNF "}", SRT_ERR_FORMAT,
        "tensor 'wte.weight': data_offsets [0, 300] extend past the end of the 256-byte data section");
    /* truncated file */
    const char *hdr = "{" WTE ", " FC ", " LNF "}";
    write_st(hdr, data, 184);
    struct { long len; const char *want; } cuts[] = {
        {8 + (long)strlen(hdr) + 100, "extend past the end"}, {60, "header length"}, {5, "too short"}};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        CHECK(truncate(path, cuts[i].len) == 0);
        float *v[4];
        CHECK(bind(v) == SRT_ERR_FORMAT);
        CHECK_HAS(srt_last_error(ctx), cuts[i].want);
    }

    /* random weights: deterministic, by name, shaped like real ones */
    float *r1[4], *r2[4], *r3[4];
    CHECK(rt_weights_random(ctx, &plan, 42, r1) == SRT_OK);
    CHECK(rt_weights_random(ctx, &plan, 42, r2) == SRT_OK);
    CHECK(rt_weights_random(ctx, &plan, 43, r3) == SRT_OK);
    for (int w = 0; w < 4; w++) {
        CHECK(memcmp(r1[w], r2[w], plan.weights[w].count * 4) == 0);
        CHECK(memcmp(r1[w], r3[w], plan.weights[w].count * 4) != 0);
    }
    float fc_file[24];
    rt_random_tensor(42, "h.0.mlp.c_fc.weight", 2, plan.weights[1].file_shape, fc_file, 24);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++) CHECK(bits_equal(r1[1][j * 6 + i], round_to_dtype(fc_file[i * 4 + j], DT_F16)));
    float again[24];
    rt_random_tensor(42, "transformer.h.0.mlp.c_fc.weight", 2, plan.weights[1].file_shape, again, 24);
    CHECK(memcmp(again, fc_file, sizeof again) == 0);
    for (int i = 0; i < 4; i++) CHECK(fabsf(r1[2][i] - 1.0f) < 0.3f); /* gain ~ 1 */
    for (int i = 0; i < 4; i++) CHECK(fabsf(r1[3][i]) < 0.15f);       /* bias small */
    for (int w = 0; w < 4; w++) {
        rt_free(ctx, r1[w]);
        rt_free(ctx, r2[w]);
        rt_free(ctx, r3[w]);
    }
    enum { N = 200000 };
    float *big = malloc(N * sizeof *big);
    int64_t shp[2] = {400, 500};
    rt_random_tensor(7, "h.3.attn.c_proj.weight", 2, shp, big, N);
    double sum = 0, sq = 0;
    for (int i = 0; i < N; i++) {
        sum += big[i];
        sq += (double)big[i] * big[i];
    }
    double mean = sum / N, sd = sqrt(sq / N - mean * mean);
    CHECK(fabs(mean) < 0.0005 && fabs(sd - 0.02) < 0.0005);
    rt_random_tensor(7, "ln_f.weight", 1, shp, big, N);
    sum = 0;
    for (int i = 0; i < N; i++) sum += big[i];
    CHECK(fabs(sum / N - 1.0) < 0.001);
    free(big);

    /* encoders agree with the compiler's rounding (the ref backend's view) */
    RtRng rng = {12345};
    const float edge[] = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 5.96e-8f, 2.98e-8f, 2.9802322e-08f,
                          6.1e-5f, 6.1035156e-05f, 6.09e-5f, 1e30f, -1e30f, INFINITY, -INFINITY, 3.14159265f, 1.00048828125f};
    for (int i = 0; i < 200000 + (int)(sizeof edge / sizeof *edge); i++) {
        float x;
        if (i < (int)(sizeof edge / sizeof *edge)) x = edge[i];
        else {
            uint32_t u = (uint32_t)rt_splitmix64(&rng);
            if (i % 2) u = (u & 0x807fffffu) | ((uint32_t)(100 + (u >> 24) % 50) << 23); /* mostly within fp16 range */
            memcpy(&x, &u, 4);
        }
        if (isnan(x)) continue;
        float h = rt_f16_to_f32(rt_f32_to_f16(x)), b = rt_bf16_to_f32(rt_f32_to_bf16(x));
        if (!bits_equal(h, round_to_dtype(x, DT_F16)) || !bits_equal(b, round_to_dtype(x, DT_BF16))) {
            fprintf(stderr, "rounding of %a: f16 %a vs %a, bf16 %a vs %a\n", x, h, round_to_dtype(x, DT_F16), b,
                    round_to_dtype(x, DT_BF16));
            check_failures++;
            break;
        }
    }
    CHECK(isnan(rt_f16_to_f32(rt_f32_to_f16(NAN))) && isnan(rt_bf16_to_f32(rt_f32_to_bf16(NAN))));
    CHECK(rt_f32_to_f16(1.0f) == 0x3c00 && rt_f32_to_f16(-2.0f) == 0xc000 && rt_f32_to_f16(65504.0f) == 0x7bff);
    CHECK(rt_f32_to_f16(5.9604644775390625e-08f) == 0x0001 && rt_f32_to_bf16(1.0f) == 0x3f80);

    test_nonfinite(data);
    rt_test_rmdir(dir);
    rt_plan_free(ctx, &plan);
    srt_context_destroy(ctx);
    return check_done("test_weights");
}
