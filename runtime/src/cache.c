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
 *   - An entry that hashes right but fails its caller's structural check
 *     (rt_elf_check: a truncated shared object or a 100-byte "cubin") is
 *     corrupt too, and one that passes everything but still fails to load
 *     is evicted by its caller (rt_cache_evict) and rebuilt.
 *
 * The directory itself must be private (rt_cache_init): created 0700, a
 * real directory (lstat: not a symbolic link), owned by the user and not
 * writable by group or others. Anything else could let another user plant
 * a shared object that the simulator would load, so it is refused and the
 * caller builds in a private temporary directory instead. Every file is
 * read through fileio.h (no FIFO or device, bounded by the meta's length).
 */
#include "rt_driver.h"
#include "fileio.h"

#include <elf.h>
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

void rt_fallback_cache_dir(char *buf, size_t len) { snprintf(buf, len, "/tmp/shortc-cache-%ld", (long)geteuid()); }

/* mkdir -p, new directories 0700; 0 on success. */
static int mkdirs(const char *dir) {
    char buf[1024];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
            buf[i] = c;
        }
    }
    return 0;
}

/* 0 when dir is a private directory of this user (see the top of the file); else -1 and why. */
static int check_private_dir(const char *dir, char *why, size_t whylen) {
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(why, whylen, "cannot create it: %s", strerror(errno));
        return -1;
    }
    const char *bad = S_ISLNK(st.st_mode)              ? "it is a symbolic link"
                      : !S_ISDIR(st.st_mode)           ? "it is not a directory"
                      : st.st_uid != geteuid()         ? "it is owned by another user"
                      : (st.st_mode & (S_IWGRP | S_IWOTH)) ? "it is writable by group or others"
                      : access(dir, W_OK | X_OK) != 0  ? "it is not writable"
                                                       : NULL;
    if (bad) {
        snprintf(why, whylen, "%s", bad);
        return -1;
    }
    return 0;
}

int rt_abs_path(const char *path, char *out, size_t len) {
    if (!path || !*path || !len) return -1;
    if (path[0] == '/') return snprintf(out, len, "%s", path) < (int)len ? 0 : -1;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return -1;
    int n = snprintf(out, len, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", path);
    return n >= 0 && (size_t)n < len ? 0 : -1;
}

int rt_cache_init(RtCache *c, const char *dir) {
    memset(c, 0, sizeof *c);
    /* absolute, so that the compiler's working directory (a build directory) does not change what it names */
    if (rt_abs_path(dir, c->dir, sizeof c->dir) != 0) {
        snprintf(c->why, sizeof c->why, "no usable directory name");
        return -1;
    }
    /* strip trailing slashes (keep "/") */
    size_t n = strlen(c->dir);
    while (n > 1 && c->dir[n - 1] == '/') c->dir[--n] = 0;
    mkdirs(c->dir); /* what fails shows in the check */
    return check_private_dir(c->dir, c->why, sizeof c->why);
}

int rt_cache_open(RtCache *c, const char *dir, char *note, size_t notelen) {
    if (notelen) note[0] = 0;
    if (rt_cache_init(c, dir) == 0) return 0;
    char first[1300];
    snprintf(first, sizeof first, "kernel cache %s not used: %s", dir ? dir : "(none)", c->why);
    char fallback[64];
    rt_fallback_cache_dir(fallback, sizeof fallback);
    if (strcmp(c->dir, fallback) == 0) { /* dir was the fallback already: no second try */
        snprintf(note, notelen, "%s", first);
        return -1;
    }
    if (rt_cache_init(c, fallback) == 0) {
        snprintf(note, notelen, "%s; using %s", first, fallback);
        return 0;
    }
    snprintf(note, notelen, "%s; %s not used either: %s", first, fallback, c->why);
    return -1;
}

static int entry_path(const RtCache *c, const char *key, const char *ext, char *path, size_t pathlen) {
    int n = snprintf(path, pathlen, "%s/%s.%s", c->dir, key, ext);
    return n < 0 || (size_t)n >= pathlen ? -1 : 0;
}

/* Whole-file reader shared by the cache, the NVRTC path and the simulator's compile (rt_driver.h). */
char *rt_read_all(const char *path, size_t *len) {
    const char *why;
    return fio_read_file(path, RT_FILE_MAX, len, &why);
}

/* The entry's bytes when they match the meta sidecar and pass check; NULL otherwise. */
static char *entry_valid(const char *path, const char *meta, int (*check)(const void *, size_t), size_t *len) {
    const char *why;
    char *m = fio_read_file(meta, 256, NULL, &why);
    if (!m) return NULL;
    unsigned long long want_len = 0, want_hash = 0;
    int ok = sscanf(m, "shortc-cache 1\nlen %llu\nhash %llx", &want_len, &want_hash) == 2;
    free(m);
    if (!ok || want_len > RT_FILE_MAX) return NULL;
    char *data = fio_read_file(path, (size_t)want_len, len, &why);
    if (!data) return NULL;
    if (*len != want_len || rt_hash64(RT_HASH_SEED, data, *len) != (uint64_t)want_hash || (check && !check(data, *len))) {
        free(data);
        return NULL;
    }
    return data;
}

int rt_cache_load(RtCache *c, const char *key, const char *ext, int (*check)(const void *, size_t), char *path,
                  size_t pathlen, void **data, size_t *len) {
    char meta[1100];
    if (data) *data = NULL;
    if (entry_path(c, key, ext, path, pathlen) != 0) return 0;
    snprintf(meta, sizeof meta, "%s.meta", path);
    struct stat st;
    int have_entry = lstat(path, &st) == 0;
    int have_meta = lstat(meta, &st) == 0;
    if (!have_entry && !have_meta) {
        c->misses++;
        return 0;
    }
    size_t n = 0;
    char *bytes = have_entry && have_meta ? entry_valid(path, meta, check, &n) : NULL;
    if (bytes) {
        c->hits++;
        if (data) {
            *data = bytes;
            *len = n;
        } else free(bytes);
        return 1;
    }
    /* left in place: the caller's store replaces both (see the top of the file) */
    c->corrupt++;
    return 0;
}

int rt_cache_lookup(RtCache *c, const char *key, const char *ext, char *path, size_t pathlen) {
    return rt_cache_load(c, key, ext, NULL, path, pathlen, NULL, NULL);
}

void rt_cache_evict(RtCache *c, const char *key, const char *ext) {
    char path[1100], meta[1200];
    if (entry_path(c, key, ext, path, sizeof path) != 0) return;
    snprintf(meta, sizeof meta, "%s.meta", path);
    unlink(meta);
    unlink(path);
}

/* 1 when [off, off + size) lies within len bytes. */
static int in_file(uint64_t off, uint64_t size, size_t len) { return off <= len && size <= len - off; }

int rt_elf_check(const void *data, size_t len, int machine) {
    const unsigned char *f = data;
    if (len < sizeof(Elf64_Ehdr)) return 0;
    Elf64_Ehdr eh;
    memcpy(&eh, f, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != machine)
        return 0;
    if (eh.e_phnum && (eh.e_phentsize != sizeof(Elf64_Phdr) ||
                       !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), len)))
        return 0;
    for (int i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, f + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (!in_file(ph.p_offset, ph.p_filesz, len)) return 0;
    }
    if (eh.e_shnum == 0) return eh.e_phnum > 0;
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || !in_file(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), len))
        return 0;
    for (int i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, f + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_NOBITS && !in_file(sh.sh_offset, sh.sh_size, len)) return 0;
    }
    return 1;
}

/* Writes data to a fresh temporary file next to final and renames it over final. */
static int write_atomic(const char *final, const void *data, size_t len) {
    static unsigned counter;
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u.%ld", final, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED),
             (long)time(NULL));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
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

void rt_compiled_release(RtCompiled *c) {
    if (c->private_dir && c->image) unlink((const char *)c->image);
    if (c->private_dir) rmdir(c->private_dir);
    free(c->private_dir);
    free(c->image);
    c->private_dir = NULL;
    c->image = NULL;
}
