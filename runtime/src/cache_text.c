/*
 * cache_text.c — small text entries of callers in the kernel cache
 * (srt_cache_text_get / srt_cache_text_put, shortrt.h): shortc keeps the
 * static kernel facts of `compare/report --kernels` there. An entry is
 * <dir>/<16 hex digits of rt_hash64(key)>.<ext>, stored and validated by
 * cache.c like the cubins (private directory, length and hash sidecar,
 * atomic rename); a corrupt entry reads as a miss and the next put replaces it.
 */
#include "rt_driver.h"
#include "rt_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An extension of 1..15 letters or digits (it becomes part of a file name). */
static int ext_ok(const char *ext) {
    size_t n = ext ? strlen(ext) : 0;
    if (n == 0 || n > 15) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((ext[i] >= 'a' && ext[i] <= 'z') || (ext[i] >= '0' && ext[i] <= '9'))) return 0;
    return 1;
}

/* Opens the cache (dir, or the default one) and names key's entry; SRT_OK or an error on ctx. */
static srt_status open_entry(srt_context *ctx, const char *dir, const char *key, size_t keylen, const char *ext,
                             RtCache *c, char *name, size_t namelen) {
    if (!key || !ext_ok(ext)) return rt_error(ctx, SRT_ERR_INVALID, "kernel cache: need a key and an extension of 1 to 15 lowercase letters or digits");
    char def[1024], note[1536];
    if (!dir) rt_default_cache_dir(def, sizeof def);
    if (rt_cache_open(c, dir ? dir : def, note, sizeof note) != 0) return rt_error(ctx, SRT_ERR_IO, "%s", note);
    snprintf(name, namelen, "%016" PRIx64, rt_hash64(RT_HASH_SEED, key, keylen));
    return SRT_OK;
}

srt_status srt_cache_text_get(srt_context *ctx, const char *cache_dir, const char *key, size_t keylen, const char *ext,
                              char **text, size_t *len) {
    if (!ctx) return SRT_ERR_INVALID;
    if (!text || !len) return rt_error(ctx, SRT_ERR_INVALID, "srt_cache_text_get: need text and len");
    *text = NULL;
    *len = 0;
    RtCache c;
    char name[32], path[1100];
    srt_status st = open_entry(ctx, cache_dir, key, keylen, ext, &c, name, sizeof name);
    if (st != SRT_OK) return st;
    void *data = NULL;
    size_t n = 0;
    int hit = rt_cache_load(&c, name, ext, NULL, path, sizeof path, &data, &n);
    rt_cache_close(&c);
    if (!hit || !data) return SRT_OK; /* miss or corrupt */
    char *out = rt_alloc(ctx, n + 1);
    if (out) {
        memcpy(out, data, n);
        out[n] = '\0';
    }
    free(data);
    if (!out) return rt_error(ctx, SRT_ERR_NOMEM, "kernel cache: out of memory");
    *text = out;
    *len = n;
    return SRT_OK;
}

srt_status srt_cache_text_put(srt_context *ctx, const char *cache_dir, const char *key, size_t keylen, const char *ext,
                              const char *text, size_t len) {
    if (!ctx) return SRT_ERR_INVALID;
    if (!text) return rt_error(ctx, SRT_ERR_INVALID, "srt_cache_text_put: need a text");
    RtCache c;
    char name[32], path[1100];
    srt_status st = open_entry(ctx, cache_dir, key, keylen, ext, &c, name, sizeof name);
    if (st != SRT_OK) return st;
    int bad = rt_cache_store(&c, name, ext, text, len, path, sizeof path) != 0;
    int e = errno;
    rt_cache_close(&c);
    if (bad) return rt_error(ctx, SRT_ERR_IO, "kernel cache %s: cannot store %s: %s", c.dir, path, strerror(e));
    return SRT_OK;
}
