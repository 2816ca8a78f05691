/*
 * cache.c — the on-disk artifact cache (interface in rt_driver.h), with the
 * whole-file reader and the file-name sanitizer its users share.
 *
 * An entry is <dir>/<key>.<ext>; its sidecar <dir>/<key>.<ext>.meta holds
 *
 *     shortc-cache 1
 *     len <bytes>
 *     hash <16 hex digits>      (rt_hash64 of the entry's bytes)
 *
 * Both files are written to a temporary name in the same directory and
 * renamed into place, entry first, so a reader never sees a half-written
 * file under the final name. Concurrent processes may look up and store one
 * key at the same time:
 *
 *   - A lookup never removes anything. A missing or disagreeing meta, or an
 *     entry that does not hash to it, counts as corrupt (a crash between the
 *     two renames, a damaged file, or another process's store in progress);
 *     the caller rebuilds and stores, which replaces both files by rename.
 *   - A store removes nothing either (no old meta first, no entry after a
 *     failed meta write), so it never takes a file away from a process that
 *     has just validated or stored it.
 *   - A lookup validates the pair by hashing the entry's bytes against the
 *     meta, so a pair whose halves come from two different stores only
 *     validates if the bytes are identical, i.e. never a torn pair.
 *     Artifacts are deterministic for a key, so overwrites are harmless.
 */
#include "rt_driver.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

uint64_t rt_hash64(uint64_t h, const void *data, size_t len) {
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void rt_cache_safe_name(const char *name, char *out, size_t len) {
    size_t j = 0;
    for (const char *c = name; *c && j + 1 < len; c++)
        out[j++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-')
                       ? *c
                       : '_';
    if (len) out[j] = 0;
}

/* mkdir -p; 0 on success. */
static int mkdirs(const char *dir) {
    char buf[1024];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
            buf[i] = c;
        }
    }
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

int rt_cache_init(RtCache *c, const char *dir) {
    memset(c, 0, sizeof *c);
    if (!dir || !*dir || strlen(dir) >= sizeof c->dir) return -1;
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    /* strip trailing slashes (keep "/") */
    size_t n = strlen(c->dir);
    while (n > 1 && c->dir[n - 1] == '/') c->dir[--n] = 0;
    return mkdirs(c->dir);
}

static int entry_path(const RtCache *c, const char *key, const char *ext, char *path, size_t pathlen) {
    int n = snprintf(path, pathlen, "%s/%s.%s", c->dir, key, ext);
    return n < 0 || (size_t)n >= pathlen ? -1 : 0;
}

/* Whole-file reader shared by the cache, the NVRTC path and the simulator's compile (rt_driver.h). */
char *rt_read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            size_t nc = cap ? cap * 2 : 65536 + 1;
            char *nb = realloc(buf, nc);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
            cap = nc;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(buf); return NULL; }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* 1 when the entry at path matches its meta sidecar. */
static int entry_valid(const char *path, const char *meta) {
    size_t mlen = 0, len = 0;
    char *m = rt_read_all(meta, &mlen);
    if (!m) return 0;
    unsigned long long want_len = 0, want_hash = 0;
    int ok = sscanf(m, "shortc-cache 1\nlen %llu\nhash %llx", &want_len, &want_hash) == 2;
    free(m);
    if (!ok) return 0;
    char *data = rt_read_all(path, &len);
    if (!data) return 0;
    ok = len == want_len && rt_hash64(RT_HASH_SEED, data, len) == (uint64_t)want_hash;
    free(data);
    return ok;
}

int rt_cache_lookup(RtCache *c, const char *key, const char *ext, char *path, size_t pathlen) {
    char meta[1100];
    if (entry_path(c, key, ext, path, pathlen) != 0) return 0;
    snprintf(meta, sizeof meta, "%s.meta", path);
    int have_entry = access(path, F_OK) == 0;
    int have_meta = access(meta, F_OK) == 0;
    if (!have_entry && !have_meta) {
        c->misses++;
        return 0;
    }
    if (have_entry && have_meta && entry_valid(path, meta)) {
        c->hits++;
        return 1;
    }
    /* left in place: the caller's store replaces both (see the top of the file) */
    c->corrupt++;
    return 0;
}

/* Writes data to a fresh temporary file next to final and renames it over final. */
static int write_atomic(const char *final, const void *data, size_t len) {
    static unsigned counter;
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u.%ld", final, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED),
             (long)time(NULL));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return -1;
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            close(fd);
            unlink(tmp);
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (close(fd) != 0 || rename(tmp, final) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int rt_cache_store(RtCache *c, const char *key, const char *ext, const void *data, size_t len,
                   char *path, size_t pathlen) {
    char meta[1100], text[128];
    if (entry_path(c, key, ext, path, pathlen) != 0) return -1;
    snprintf(meta, sizeof meta, "%s.meta", path);
    int n = snprintf(text, sizeof text, "shortc-cache 1\nlen %llu\nhash %016" PRIx64 "\n", (unsigned long long)len,
                     rt_hash64(RT_HASH_SEED, data, len));
    /* entry, then meta; an entry left without its meta by a failure or crash reads as corrupt */
    if (write_atomic(path, data, len) != 0) return -1;
    return write_atomic(meta, text, (size_t)n) != 0 ? -1 : 0;
}
