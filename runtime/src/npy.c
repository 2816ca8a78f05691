/*
 * npy.c — .npy files of float32, int32 or uint32 (logits for `shortc run
 * --logits` and `shortc cmp`; buffers for `shortc sim`).
 *
 * Written: format 1.0, '<f4', '<i4' or '<u4', C order, the header padded
 * with spaces to a multiple of 64 bytes and ended by '\n' (what numpy
 * writes), through fileio.h: a regular file is written to a temporary file
 * renamed into place, /dev/null or a FIFO is written through, a symlink is
 * refused (or replaced itself under fio_set_force), never followed. Read: formats 1.0, 2.0 and 3.0; the
 * header dict is parsed (keys in any order) and must say one of those dtypes
 * ('|' or '<' byte order) and fortran_order False;
 * the data must be exactly shape's product of floats.
 */
#include "rt_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAX_RANK 32

/* The .npy descr of each srt_dtype (all 4-byte little-endian). */
static const char *const npy_descr[] = {[SRT_DTYPE_F32] = "<f4", [SRT_DTYPE_I32] = "<i4", [SRT_DTYPE_U32] = "<u4"};

srt_status srt_npy_write_f32(srt_context *ctx, const char *path, const float *data, const int64_t *shape, int rank) {
    return srt_npy_write(ctx, path, SRT_DTYPE_F32, data, shape, rank);
}

/* The header of a .npy of shape (magic, version 1.0, the dict padded with spaces to a multiple of 64
 * bytes, '\n') into out (NULL: only measured); returns its length, and the element count in *count. */
static size_t npy_header(srt_dtype dtype, const int64_t *shape, int rank, unsigned char *out, size_t *count) {
    char dict[1024];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr[dtype]);
    *count = 1;
    for (int i = 0; i < rank; i++) {
        *count *= (size_t)shape[i];
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld%s", (long long)shape[i], rank == 1 ? "," : i + 1 < rank ? ", " : "");
    }
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)n + pad + 1;
    if (out) {
        memcpy(out, NPY_MAGIC, 6);
        out[6] = 1;
        out[7] = 0;
        out[8] = (unsigned char)(hlen & 0xff);
        out[9] = (unsigned char)(hlen >> 8);
        memcpy(out + 10, dict, (size_t)n);
        memset(out + 10 + n, ' ', pad);
        out[10 + (size_t)n + pad] = '\n';
    }
    return total + pad;
}

/* The element count of a shape into *count; false when it does not fit in 62 bits (4-byte
 * elements) — a shape whose product wraps must never pass as "0 elements". A zero dimension
 * makes the count 0 whatever the others are. */
static bool npy_count(const int64_t *dims, int rank, uint64_t *count) {
    uint64_t c = 1;
    bool overflow = false;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) {
            *count = 0;
            return true;
        }
        overflow |= __builtin_mul_overflow(c, (uint64_t)dims[i], &c) || c > UINT64_MAX / 4;
    }
    *count = c;
    return !overflow;
}

/* The checks of srt_npy_encode and srt_npy_encode_header (data: whether the caller has it). */
static srt_status npy_args(srt_context *ctx, const char *fn, srt_dtype dtype, bool data, const int64_t *shape,
                           int rank, void **bytes, size_t *len) {
    if (!bytes || !len || !data || rank < 0 || rank > NPY_MAX_RANK || (rank > 0 && !shape) ||
        (unsigned)dtype > SRT_DTYPE_U32)
        return rt_error(ctx, SRT_ERR_INVALID, "%s: bad arguments", fn);
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0) return rt_error(ctx, SRT_ERR_INVALID, "%s: negative dimension %lld", fn, (long long)shape[i]);
    uint64_t count;
    if (!npy_count(shape, rank, &count)) return rt_error(ctx, SRT_ERR_INVALID, "%s: the shape's element count overflows", fn);
    return SRT_OK;
}

srt_status srt_npy_encode_header(srt_context *ctx, srt_dtype dtype, const int64_t *shape, int rank, void **bytes,
                                 size_t *len) {
    if (!ctx) return SRT_ERR_INVALID;
    srt_status st = npy_args(ctx, "srt_npy_encode_header", dtype, true, shape, rank, bytes, len);
    if (st != SRT_OK) return st;
    size_t count, hlen = npy_header(dtype, shape, rank, NULL, &count);
    unsigned char *out = rt_alloc(ctx, hlen);
    if (!out) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    npy_header(dtype, shape, rank, out, &count);
    *bytes = out;
    *len = hlen;
    return SRT_OK;
}

srt_status srt_npy_encode(srt_context *ctx, srt_dtype dtype, const void *data, const int64_t *shape, int rank,
                          void **bytes, size_t *len) {
    if (!ctx) return SRT_ERR_INVALID;
    srt_status st = npy_args(ctx, "srt_npy_encode", dtype, data || rank == 0, shape, rank, bytes, len);
    if (st != SRT_OK) return st;
    size_t count, hlen = npy_header(dtype, shape, rank, NULL, &count);
    unsigned char *out = rt_alloc(ctx, hlen + count * 4);
    if (!out) return rt_error(ctx, SRT_ERR_NOMEM, "out of memory");
    npy_header(dtype, shape, rank, out, &count);
    if (count) memcpy(out + hlen, data, count * 4); /* x86-64 / aarch64: little-endian */
    *bytes = out;
    *len = hlen + count * 4;
    return SRT_OK;
}

srt_status srt_npy_write(srt_context *ctx, const char *path, srt_dtype dtype, const void *data, const int64_t *shape,
                         int rank) {
    if (!ctx) return SRT_ERR_INVALID;
    if (!path) return rt_error(ctx, SRT_ERR_INVALID, "srt_npy_write: bad arguments");
    void *bytes;
    size_t len;
    srt_status st = srt_npy_encode(ctx, dtype, data, shape, rank, &bytes, &len);
    if (st != SRT_OK) return st;
    const char *why;
    bool ok = fio_write_file(path, bytes, len, &why);
    srt_free(ctx, bytes);
    if (!ok) return rt_error(ctx, SRT_ERR_IO, "cannot write '%s': %s", path, why);
    return SRT_OK;
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

typedef struct H {
    const char *s, *end;
} H;

static void skip_ws(H *h) {
    while (h->s < h->end && (*h->s == ' ' || *h->s == '\t' || *h->s == '\n' || *h->s == '\r')) h->s++;
}
static bool eat(H *h, char c) {
    skip_ws(h);
    if (h->s < h->end && *h->s == c) {
        h->s++;
        return true;
    }
    return false;
}
/* 'text' or "text" into buf */
static bool str(H *h, char *buf, size_t len) {
    skip_ws(h);
    if (h->s >= h->end || (*h->s != '\'' && *h->s != '"')) return false;
    char q = *h->s++;
    size_t n = 0;
    while (h->s < h->end && *h->s != q) {
        if (n + 1 >= len) return false;
        buf[n++] = *h->s++;
    }
    if (h->s >= h->end) return false;
    h->s++;
    buf[n] = 0;
    return true;
}
static bool word(H *h, const char *w) {
    skip_ws(h);
    size_t n = strlen(w);
    if ((size_t)(h->end - h->s) >= n && memcmp(h->s, w, n) == 0) {
        h->s += n;
        return true;
    }
    return false;
}

srt_status srt_npy_read_f32(srt_context *ctx, const char *path, float **data, int64_t *shape, int *rank) {
    srt_dtype dt = SRT_DTYPE_F32; /* in: the only dtype accepted */
    return srt_npy_read(ctx, path, &dt, (void **)data, shape, rank);
}

/* dtype in: the dtype required, or -1 for any of srt_dtype; out: the file's. */

srt_status srt_npy_read(srt_context *ctx, const char *path, srt_dtype *dtype, void **data, int64_t *shape, int *rank) {
    if (!ctx) return SRT_ERR_INVALID;
    if (!path || !data || !rank || !dtype || *rank < 0 || (*rank > 0 && !shape))
        return rt_error(ctx, SRT_ERR_INVALID, "srt_npy_read: bad arguments");
    *data = NULL;
    char *buf;
    size_t len;
    srt_status st = rt_read_file(ctx, path, &buf, &len);
    if (st != SRT_OK) return st;
#define FAIL(...)                                                   \
    do {                                                            \
        srt_status fail_ = rt_error(ctx, SRT_ERR_FORMAT, __VA_ARGS__); \
        rt_free(ctx, buf);                                          \
        return fail_;                                               \
    } while (0)
    if (len < 10 || memcmp(buf, NPY_MAGIC, 6) != 0) FAIL("%s: not a .npy file (bad magic)", path);
    unsigned char major = (unsigned char)buf[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) FAIL("%s: truncated .npy header", path);
        hlen = (unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8 | (size_t)(unsigned char)buf[10] << 16 |
               (size_t)(unsigned char)buf[11] << 24;
        hstart = 12;
    } else {
        FAIL("%s: .npy format version %d.%d is not supported", path, major, (unsigned char)buf[7]);
    }
    if (hlen > len - hstart) FAIL("%s: .npy header length %zu runs past the end of the file", path, hlen);
    H h = {buf + hstart, buf + hstart + hlen};
    char key[64], descr[64] = "";
    int fortran = -1, r = -1;
    int64_t dims[NPY_MAX_RANK];
    if (!eat(&h, '{')) FAIL("%s: .npy header is not a dict", path);
    while (!eat(&h, '}')) {
        if (!str(&h, key, sizeof key) || !eat(&h, ':')) FAIL("%s: malformed .npy header", path);
        if (strcmp(key, "descr") == 0) {
            if (!str(&h, descr, sizeof descr)) FAIL("%s: .npy 'descr' is not a string", path);
        } else if (strcmp(key, "fortran_order") == 0) {
            if (word(&h, "False")) fortran = 0;
            else if (word(&h, "True")) fortran = 1;
            else FAIL("%s: .npy 'fortran_order' is not True or False", path);
        } else if (strcmp(key, "shape") == 0) {
            if (!eat(&h, '(')) FAIL("%s: .npy 'shape' is not a tuple", path);
            r = 0;
            while (!eat(&h, ')')) {
                skip_ws(&h);
                char *e;
                errno = 0;
                long long v = h.s < h.end ? strtoll(h.s, &e, 10) : -1;
                if (h.s >= h.end || e == h.s || e > h.end || v < 0 || errno) FAIL("%s: .npy 'shape' has a bad dimension", path);
                if (r == NPY_MAX_RANK) FAIL("%s: .npy rank is more than %d", path, NPY_MAX_RANK);
                dims[r++] = v;
                h.s = e;
                if (!eat(&h, ',')) {
                    if (!eat(&h, ')')) FAIL("%s: .npy 'shape' is malformed", path);
                    break;
                }
            }
        } else {
            FAIL("%s: unexpected key '%s' in the .npy header", path, key);
        }
        if (!eat(&h, ',')) {
            if (!eat(&h, '}')) FAIL("%s: malformed .npy header", path);
            break;
        }
    }
    if (!descr[0] || fortran < 0 || r < 0) FAIL("%s: .npy header lacks descr, fortran_order or shape", path);
    int dt = -1;
    for (int i = 0; i <= SRT_DTYPE_U32; i++)
        if (strcmp(descr, npy_descr[i]) == 0 || (descr[0] == '|' && strcmp(descr + 1, npy_descr[i] + 1) == 0)) dt = i;
    if ((int)*dtype >= 0 && dt != (int)*dtype)
        FAIL("%s: dtype '%s' is not %s ('%s')", path, descr, *dtype == SRT_DTYPE_F32 ? "float32" : *dtype == SRT_DTYPE_I32 ? "int32" : "uint32", npy_descr[*dtype]);
    if (dt < 0) FAIL("%s: dtype '%s' is not float32, int32 or uint32 ('<f4', '<i4', '<u4')", path, descr);
    if (fortran) FAIL("%s: Fortran-ordered arrays are not supported (expected C order)", path);
    uint64_t count;
    if (!npy_count(dims, r, &count)) FAIL("%s: .npy shape has more elements than a file can hold (its product overflows)", path);
    size_t have = len - hstart - hlen;
    if (count * 4 != have)
        FAIL("%s: shape needs %llu bytes of data but the file has %zu", path, (unsigned long long)(count * 4), have);
    if (r > *rank) {
        int cap = *rank;
        rt_free(ctx, buf);
        return rt_error(ctx, SRT_ERR_INVALID, "%s: rank %d is more than the %d dimensions the caller allows", path, r, cap);
    }
#undef FAIL
    char *out = rt_alloc(ctx, (size_t)count * 4 + 1);
    if (!out) {
        rt_free(ctx, buf);
        return rt_error(ctx, SRT_ERR_NOMEM, "out of memory reading '%s'", path);
    }
    memcpy(out, buf + hstart + hlen, (size_t)count * 4);
    rt_free(ctx, buf);
    for (int i = 0; i < r; i++) shape[i] = dims[i];
    *rank = r;
    *dtype = (srt_dtype)dt;
    *data = out;
    return SRT_OK;
}
