/* .npy: round trips (rank 0..3), numpy's exact header layout, and malformed files. */
#include "rt_test.h"
#include "shortrt.h"

#include <unistd.h>

static srt_context *ctx;
static char dir[256], path[300];

static void bad_file(const char *bytes, size_t len, srt_status want_st, const char *want) {
    rt_test_write(path, bytes, len);
    float *d = NULL;
    int64_t shape[4];
    int rank = 4;
    CHECK(srt_npy_read_f32(ctx, path, &d, shape, &rank) == want_st);
    if (want_st == SRT_OK) {
        CHECK(d != NULL && rank >= 1 && d[0] == 0.0f);
        srt_free(ctx, d);
        return;
    }
    CHECK(d == NULL);
    CHECK_HAS(srt_last_error(ctx), want);
}

/* A v1.0 file whose header dict is dict (padded), followed by dlen bytes of data. */
static void bad_header(const char *dict, size_t dlen, srt_status want_st, const char *want) {
    char buf[512];
    size_t n = strlen(dict);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(n & 0xff);
    buf[9] = (char)(n >> 8);
    memcpy(buf + 10, dict, n);
    memset(buf + 10 + n, 0, dlen);
    bad_file(buf, 10 + n + dlen, want_st, want);
}

int main(void) {
    CHECK(srt_context_create(&ctx, NULL, NULL) == SRT_OK);
    if (!rt_test_mkdtemp(dir, sizeof dir, "npy")) return check_done("test_npy");
    snprintf(path, sizeof path, "%s/x.npy", dir);

    float data[24];
    for (int i = 0; i < 24; i++) data[i] = (float)i * 0.5f - 3.0f;
    int64_t shapes[][3] = {{0}, {24}, {4, 6}, {2, 3, 4}};
    for (int r = 0; r <= 3; r++) {
        CHECK(srt_npy_write_f32(ctx, path, r == 0 ? data : data, shapes[r], r) == SRT_OK);
        size_t len;
        char *raw = check_read_file(path, &len);
        size_t count = r == 0 ? 1 : r == 1 ? 24 : 24;
        CHECK(raw && (len - count * 4) % 64 == 0 && raw[len - count * 4 - 1] == '\n');
        if (r == 2) CHECK(raw && strstr(raw + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 6), }") == raw + 10);
        if (r == 1) CHECK(raw && strstr(raw + 10, "'shape': (24,), }") != NULL);
        if (r == 0) CHECK(raw && strstr(raw + 10, "'shape': (), }") != NULL);
        free(raw);
        float *back = NULL;
        int64_t shape[4] = {0};
        int rank = 4;
        CHECK(srt_npy_read_f32(ctx, path, &back, shape, &rank) == SRT_OK);
        CHECK(rank == r);
        for (int i = 0; i < r; i++) CHECK(shape[i] == shapes[r][i]);
        CHECK(back && memcmp(back, data, count * 4) == 0);
        srt_free(ctx, back);
    }

    /* rank capacity */
    int64_t s3[3] = {2, 3, 4};
    CHECK(srt_npy_write_f32(ctx, path, data, s3, 3) == SRT_OK);
    float *d = NULL;
    int64_t shape[2];
    int rank = 2;
    CHECK(srt_npy_read_f32(ctx, path, &d, shape, &rank) == SRT_ERR_INVALID);
    CHECK_HAS(srt_last_error(ctx), "rank 3 is more than the 2 dimensions");

    /* headers other writers produce: keys reordered, double quotes, v2.0 */
    bad_header("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f4\"}\n", 8, SRT_OK, "");
    char v2[80] = "\x93NUMPY\x02\x00";
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)}";
    size_t n = strlen(dict);
    v2[8] = (char)n;
    v2[9] = v2[10] = v2[11] = 0;
    memcpy(v2 + 12, dict, n);
    memset(v2 + 12 + n, 0, 4);
    bad_file(v2, 12 + n + 4, SRT_OK, "");

    /* malformed */
    bad_file("hello world", 11, SRT_ERR_FORMAT, "not a .npy file (bad magic)");
    bad_file("\x93NUMPY\x01\x00\xff\x00{", 11, SRT_ERR_FORMAT, "header length 255 runs past the end");
    bad_file("\x93NUMPY\x07\x00\x00\x00", 10, SRT_ERR_FORMAT, "format version 7.0 is not supported");
    bad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16, SRT_ERR_FORMAT, "dtype '<f8' is not float32");
    bad_header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, SRT_ERR_FORMAT, "dtype '>f4' is not float32");
    bad_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, SRT_ERR_FORMAT, "Fortran-ordered");
    bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20, SRT_ERR_FORMAT,
               "shape needs 24 bytes of data but the file has 20");
    bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12, SRT_ERR_FORMAT,
               "shape needs 8 bytes of data but the file has 12");
    bad_header("{'descr': '<f4', 'shape': (2,), }", 8, SRT_ERR_FORMAT, "lacks descr, fortran_order or shape");
    bad_header("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", 8, SRT_ERR_FORMAT, "not True or False");
    bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 8, SRT_ERR_FORMAT, "bad dimension");
    bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8, SRT_ERR_FORMAT, "bad dimension");
    /* element counts that wrap: 2^128 (every bit lost: once "0 elements"), 2^64, 2^62 floats = 2^64 bytes */
    bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296, 4294967296), }",
               0, SRT_ERR_FORMAT, "more elements than a file can hold");
    bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0, SRT_ERR_FORMAT,
               "more elements than a file can hold");
    bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }", 0, SRT_ERR_FORMAT,
               "more elements than a file can hold");
    bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", 8, SRT_ERR_FORMAT, "unexpected key 'extra'");
    bad_header("['descr']", 8, SRT_ERR_FORMAT, "header is not a dict");
    unlink(path);
    bad_file("", 0, SRT_ERR_FORMAT, "bad magic");
    unlink(path);
    rank = 2;
    CHECK(srt_npy_read_f32(ctx, path, &d, shape, &rank) == SRT_ERR_IO);
    CHECK_HAS(srt_last_error(ctx), "cannot open");
    /* int32 and uint32: round trip, dtype reported, a required dtype enforced */
    int32_t iv[3] = {-7, 0, 2147483647};
    int64_t n3 = 3;
    CHECK(srt_npy_write(ctx, path, SRT_DTYPE_I32, iv, &n3, 1) == SRT_OK);
    void *vb = NULL;
    srt_dtype dt = (srt_dtype)-1;
    rank = 2;
    CHECK(srt_npy_read(ctx, path, &dt, &vb, shape, &rank) == SRT_OK);
    CHECK(dt == SRT_DTYPE_I32 && rank == 1 && shape[0] == 3 && vb && memcmp(vb, iv, sizeof iv) == 0);
    srt_free(ctx, vb);
    dt = SRT_DTYPE_U32;
    rank = 2;
    CHECK(srt_npy_read(ctx, path, &dt, &vb, shape, &rank) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "dtype '<i4' is not uint32 ('<u4')");
    rank = 2;
    CHECK(srt_npy_read_f32(ctx, path, &d, shape, &rank) == SRT_ERR_FORMAT);
    CHECK_HAS(srt_last_error(ctx), "dtype '<i4' is not float32 ('<f4')");
    bad_header("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", 16, SRT_ERR_FORMAT, "dtype '<i8' is not float32");
    unlink(path);
    CHECK(srt_npy_write_f32(ctx, "/nonexistent-dir/x.npy", data, s3, 3) == SRT_ERR_IO);
    CHECK_HAS(srt_last_error(ctx), "cannot write '/nonexistent-dir/x.npy'");
    srt_context_destroy(ctx);
    rt_test_rmdir(dir);
    return check_done("test_npy");
}
