/* Safetensors reader: a valid file (metadata, padding, prefixes) and malformed ones, each with a precise error. */
#include "rt_test.h"
#include "rt_internal.h"

#include <sys/stat.h>
#include <unistd.h>

static srt_context *ctx;

/* 8-byte little-endian header length, header, data. Returns malloc'd bytes. */
static unsigned char *build(const char *header, const void *data, size_t dlen, size_t *len) {
    size_t h = strlen(header);
    unsigned char *b = malloc(8 + h + dlen + 1);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(b + 8, header, h);
    if (dlen) memcpy(b + 8 + h, data, dlen);
    *len = 8 + h + dlen;
    return b;
}

static void bad_bytes(const unsigned char *b, size_t len, const char *want) {
    RtSafetensors st;
    CHECK(rt_st_open_memory(ctx, "w.safetensors", b, len, &st) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), want);
    CHECK_HAS(srt_last_error(ctx), "w.safetensors");
}

static void bad(const char *header, size_t dlen, const char *want) {
    static unsigned char zeros[256];
    size_t len;
    unsigned char *b = build(header, zeros, dlen, &len);
    bad_bytes(b, len, want);
    free(b);
}

int main(void) {
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);
    float data[6] = {1, 2, 3, 4, 5, 6};
    const char *good = "{\"__metadata__\": {\"format\": \"pt\"},"
                       " \"transformer.wte.weight\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 16]},"
                       " \"lm_head.weight\": {\"dtype\": \"F16\", \"shape\": [4], \"data_offsets\": [16, 24]},"
                       " \"empty\": {\"dtype\": \"F32\", \"shape\": [0, 3], \"data_offsets\": [24, 24]}}    ";
    size_t len;
    unsigned char *b = build(good, data, 24, &len);
    RtSafetensors st;
    srt_status s = rt_st_open_memory(ctx, "w.safetensors", b, len, &st);
    CHECK(s == SRT_OK);
    if (s == SRT_OK) {
        CHECK(st.ntensors == 3 && st.data_len == 24);
        const RtStTensor *t = rt_st_find(&st, "wte.weight");
        CHECK(t && t->dtype == ST_F32 && t->rank == 2 && t->shape[1] == 2 && t->begin == 0 && t->end == 16);
        CHECK(rt_st_find(&st, "transformer.wte.weight") == t);
        CHECK(rt_st_find(&st, "transformer.lm_head.weight") && rt_st_find(&st, "lm_head.weight"));
        CHECK(rt_st_find(&st, "wte") == NULL);
        float v;
        memcpy(&v, st.data + t->begin + 4, 4);
        CHECK(v == 2.0f);
        rt_st_close(&st);
    }

    /* the same from a file, then truncated on disk */
    char dir[256], path[300];
    if (!rt_test_mkdtemp(dir, sizeof dir, "st")) return check_done("test_safetensors");
    snprintf(path, sizeof path, "%s/w.safetensors", dir);
    rt_test_write(path, b, len);
    CHECK(rt_st_open(ctx, path, &st) == SRT_OK);
    rt_st_close(&st);
    CHECK(truncate(path, (off_t)len - 5) == 0);
    CHECK(rt_st_open(ctx, path, &st) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "tensor 'lm_head.weight': data_offsets [16, 24] extend past the end of the 19-byte data section (truncated file?)");
    CHECK(truncate(path, 40) == 0);
    CHECK(rt_st_open(ctx, path, &st) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "is beyond the end of the file (40 bytes)");
    CHECK(truncate(path, 3) == 0);
    CHECK(rt_st_open(ctx, path, &st) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "3 bytes is too short for a safetensors file");
    unlink(path);
    CHECK(rt_st_open(ctx, path, &st) == SRT_ERR_IO);
    CHECK_HAS(srt_last_error(ctx), "cannot open weights");
    /* a FIFO is refused at once (opening it must not wait for a writer), a directory says so */
    CHECK(mkfifo(path, 0600) == 0);
    CHECK(rt_st_open(ctx, path, &st) == SRT_ERR_IO);
    CHECK_HAS(srt_last_error(ctx), "not a regular file");
    unlink(path);
    CHECK(mkdir(path, 0700) == 0);
    CHECK(rt_st_open(ctx, path, &st) == SRT_ERR_IO);
    CHECK_HAS(srt_last_error(ctx), "Is a directory");
    rmdir(path);
    rt_test_rmdir(dir);
    free(b);

    /* header length field beyond the file */
    unsigned char hl[12] = {0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' '};
    bad_bytes(hl, sizeof hl, "header length 65535 is beyond the end of the file (12 bytes)");
    unsigned char huge[16] = {0, 0, 0, 0, 0, 0, 0, 0x80, '{', '}'};
    bad_bytes(huge, sizeof huge, "is beyond the end of the file");

    bad("[1, 2]", 0, "the header is not a JSON object");
    bad("{\"a\": {\"dtype\": \"F32\", ", 0, "the header is not valid JSON");
    /* one weight under two names that the prefix rule makes the same */
    bad("{\"wte.weight\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},"
        " \"transformer.wte.weight\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}",
        8, "tensors 'wte.weight' and 'transformer.wte.weight' are the same weight");
    bad("{\"a\": 1} x", 0, "the header is not valid JSON");
    bad("{\"a\": {\"dtype\": \"F33\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4, "tensor 'a': unknown dtype 'F33'");
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 20]}}", 24,
        "tensor 'a': shape [2, 3] of F32 needs 24 bytes but data_offsets span 20");
    bad("{\"a\": {\"dtype\": \"BF16\", \"shape\": [3], \"data_offsets\": [0, 8]}}", 8,
        "tensor 'a': shape [3] of BF16 needs 6 bytes but data_offsets span 8");
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}", 12,
        "tensor 'a': data_offsets [0, 16] extend past the end of the 12-byte data section");
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 4]}}", 12,
        "tensor 'a': data_offsets [8, 4] are not an ordered pair");
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
        " \"b\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [4, 12]}}",
        12, "tensors 'a' [0, 8) and 'b' [4, 12) overlap");
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
        " \"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [8, 16]}}",
        16, "tensor 'a' is listed twice");
    /* the same name over the same bytes: a duplicate, not an "overlap" */
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},"
        " \"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}",
        8, "tensor 'a' is listed twice");
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", 4,
        "tensor 'a': shape[0] is -1, not a non-negative integer <= 2^53");
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [1, 2.5], \"data_offsets\": [0, 4]}}", 4,
        "tensor 'a': shape[1] is 2.5, not a non-negative integer <= 2^53");
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [9007199254740994], \"data_offsets\": [0, 4]}}", 4,
        "tensor 'a': shape[0] is 9007199254740994, not a non-negative integer <= 2^53");
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [\"2\"], \"data_offsets\": [0, 4]}}", 4, "tensor 'a': shape[0] is not a number");
    /* data_offsets: integers only (1.5 used to print as 2), non-negative, at most 2^53 */
    bad("{\"a\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [1.5, 2]}}", 4,
        "tensor 'a': data_offsets[0] is 1.5, not a non-negative integer <= 2^53");
    bad("{\"a\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0, 0.999]}}", 4,
        "tensor 'a': data_offsets[1] is 0.999, not a non-negative integer <= 2^53");
    bad("{\"a\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [-1, 0]}}", 4,
        "tensor 'a': data_offsets[0] is -1, not a non-negative integer <= 2^53");
    bad("{\"a\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0, 1e300]}}", 4,
        "tensor 'a': data_offsets[1] is 1.0000000000000001e+300, not a non-negative integer <= 2^53");
    /* an unsupported dtype with a wrong size: the dtype is reported first */
    bad("{\"a\": {\"dtype\": \"I64\", \"shape\": [3], \"data_offsets\": [0, 8]}}", 8,
        "tensor 'a': dtype I64 is not supported (supported: F32, F16, BF16); also, shape [3] of I64 needs 24 bytes but "
        "data_offsets span 8");
    bad("{\"a\": {\"dtype\": \"F32\", \"shape\": [1]}}", 4, "tensor 'a': \"data_offsets\" must be [begin, end]");
    bad("{\"a\": {\"shape\": [1], \"data_offsets\": [0, 4]}}", 4, "tensor 'a': missing or non-string \"dtype\"");
    bad("{\"a\": [1]}", 4, "tensor 'a': expected an object");
    bad("{\"__metadata__\": 3}", 0, "\"__metadata__\" must be an object");

    srt_context_destroy(ctx);
    return check_done("test_safetensors");
}
